"""``bench/run.py --quick``: the benchmark runs end to end on tiny inputs and writes its table.

Numbers are not checked (tiny inputs measure overheads, not speed); what is checked: every
case and reader is in the table, every reader read every record (the run fails otherwise),
and the memory test streamed its segment in a subprocess.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def test_quick_bench_writes_its_table(tmp_path):
    out = tmp_path / "results.md"
    done = subprocess.run(
        [sys.executable, str(REPO / "bench" / "run.py"), "--quick", "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    text = out.read_text()
    assert text.strip() in done.stdout
    assert "Machine:" in text and "cores" in text
    for case in ("v2 none", "v2 gzip", "v2 snappy", "v2 lz4", "v2 zstd", "v1 gzip", "v0 none"):
        for reader in ("ours", "kafka-python", "aiokafka"):
            assert f"| {case} | {reader} |" in text
    assert "| v2 zstd |" in text.split("bare decompression s")[1]
    assert "peak RSS" in text
    assert "read 0 records" not in done.stderr
    assert "expected" not in done.stderr  # every reader read every record it was given
