"""`make generate`: rebuild generated/ from schemas/ (Kaitai, Construct, then the layout).

Deterministic: the same schemas and pinned compilers give byte-identical output.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
STEPS = ["gen_kaitai.py", "gen_construct.py", "gen_layout.py"]


def main() -> int:
    for step in STEPS:
        script = ROOT / "scripts" / step
        if script.exists():
            subprocess.run([sys.executable, str(script)], check=True, cwd=ROOT)
    return 0


if __name__ == "__main__":
    sys.exit(main())
