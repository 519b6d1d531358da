"""Compile every schemas/*.ksy to Python with the pinned kaitai-struct-compiler.

Two builds, each a package:

- ``generated/kaitai``: the parsers the runtime uses (auto-read);
- ``generated/kaitai_debug``: the same with ``debug=true``: every object records where each
  field starts and ends in ``_debug`` and parsing waits for an explicit ``_read()`` (for the
  annotated hex dump).

The npm compiler has no ``--python-package`` option and emits ``import other_spec``; those
imports are rewritten to package-relative ones. Every file gets a header naming its schema and
the compiler. Output is deterministic, files are rewritten only when their bytes change, and
outputs no schema produces any more are removed. Fails on any compiler warning or error
(scripts/ksc.js does the compiling and the failing).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCHEMAS = ROOT / "schemas"
KSC_JS = ROOT / "scripts" / "ksc.js"
COMPILER_VERSION = "0.11.0"

BUILDS = {
    "kaitai": False,
    "kaitai_debug": True,
}

_IMPORT_RE = re.compile(r"^import (\w+)$", re.MULTILINE)


def header(schema: str, debug: bool) -> str:
    build = "debug build (_debug positions, no auto-read)" if debug else "parser build"
    return (
        "# GENERATED FILE - DO NOT EDIT BY HAND.\n"
        f"# Source schema: schemas/{schema}\n"
        f"# Generator: kaitai-struct-compiler {COMPILER_VERSION} (npm), {build},\n"
        "# via scripts/gen_kaitai.py; regenerate with `make generate`.\n"
    )


def compile_python(ksy_files: list[Path], out_dir: Path, debug: bool) -> list[dict]:
    """Run scripts/ksc.js; return its list of {"file", "schema"} outputs."""
    node = shutil.which("node")
    if node is None:
        raise SystemExit("gen_kaitai: node is not on PATH (needed for kaitai-struct-compiler)")
    cmd = [node, str(KSC_JS), "--target", "python", "--out", str(out_dir)]
    cmd += ["--import-root", str(SCHEMAS)]
    if debug:
        cmd.append("--debug")
    cmd += [str(p) for p in ksy_files]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        sys.stderr.write(proc.stderr)
        raise SystemExit(f"gen_kaitai: kaitai-struct-compiler failed (exit {proc.returncode})")
    summary = json.loads(proc.stdout)
    if summary["compiler"] != COMPILER_VERSION:
        raise SystemExit(
            f"gen_kaitai: expected kaitai-struct-compiler {COMPILER_VERSION}, "
            f"found {summary['compiler']}; run `make setup`"
        )
    return summary["files"]


def relativize_imports(source: str, modules: set[str]) -> str:
    """``import record_batch`` -> ``from . import record_batch`` for our own modules only."""

    def repl(m: re.Match[str]) -> str:
        name = m.group(1)
        return f"from . import {name}" if name in modules else m.group(0)

    return _IMPORT_RE.sub(repl, source)


def render_build(debug: bool) -> dict[str, bytes]:
    """All files of one build package: name -> bytes."""
    ksy_files = sorted(SCHEMAS.glob("*.ksy"))
    if not ksy_files:
        raise SystemExit("gen_kaitai: no schemas/*.ksy found")
    with tempfile.TemporaryDirectory(prefix="gen_kaitai_") as tmp:
        out_dir = Path(tmp)
        outputs = compile_python(ksy_files, out_dir, debug)
        modules = {Path(o["file"]).stem for o in outputs}
        files: dict[str, bytes] = {}
        for o in outputs:
            if o["schema"] is None:
                raise SystemExit(f"gen_kaitai: cannot tell which schema produced {o['file']}")
            source = (out_dir / o["file"]).read_text(encoding="utf-8")
            text = header(o["schema"], debug) + relativize_imports(source, modules)
            files[o["file"]] = text.encode("utf-8")
    listing = "".join(f"#   {name}\n" for name in sorted(files))
    flavour = " (debug build)" if debug else ""
    init = (
        "# GENERATED FILE - DO NOT EDIT BY HAND.\n"
        f"# Package of the kaitai-struct-compiler {COMPILER_VERSION} Python output for\n"
        "# schemas/*.ksy, written by scripts/gen_kaitai.py (`make generate`). Modules:\n"
        + listing
        + f'"""Kaitai Struct parsers generated from schemas/*.ksy{flavour}."""\n'
    )
    files["__init__.py"] = init.encode("utf-8")
    return files


def write_build(target: Path, files: dict[str, bytes]) -> None:
    target.mkdir(parents=True, exist_ok=True)
    for stale in sorted(target.glob("*.py")):
        if stale.name not in files:
            stale.unlink()
    for name, data in sorted(files.items()):
        path = target / name
        if not path.exists() or path.read_bytes() != data:
            path.write_bytes(data)


def main() -> int:
    for package, debug in BUILDS.items():
        write_build(ROOT / "generated" / package, render_build(debug))
    return 0


if __name__ == "__main__":
    sys.exit(main())
