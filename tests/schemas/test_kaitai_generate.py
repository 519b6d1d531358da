"""scripts/ksc.js and scripts/gen_kaitai.py: warnings fail the build, generated/ is current,
deterministic, headed and package-relative."""

from __future__ import annotations

import importlib
import importlib.util
import json
import os
import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

pytestmark = pytest.mark.node

ROOT = Path(__file__).resolve().parents[2]
GENERATED = ROOT / "generated"
KSC_JS = ROOT / "scripts" / "ksc.js"
SCHEMA_IDS = sorted(p.stem for p in (ROOT / "schemas").glob("*.ksy"))


def _node() -> str:
    node = shutil.which("node")
    tools = ROOT / ".tools" / "npm" / "node_modules" / "kaitai-struct-compiler"
    if node is None or not tools.is_dir():
        if os.environ.get("CI") == "true":
            pytest.fail("node or the npm tools are missing (required when CI=true)")
        pytest.skip("node or the npm tools are missing: run `make setup`")
    return node


def _gen_kaitai() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gen_kaitai", ROOT / "scripts" / "gen_kaitai.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _ksc(tmp_path: Path, text: str, target: str = "python") -> subprocess.CompletedProcess:
    ksy = tmp_path / "probe.ksy"
    ksy.write_text(text)
    out = tmp_path / "out"
    return subprocess.run(
        [_node(), str(KSC_JS), "--target", target, "--out", str(out), str(ksy)],
        capture_output=True,
        text=True,
        check=False,
    )


PROBE = """\
meta:
  id: probe
  endian: be
seq:
  - id: {name}
    type: s4
  - id: body
    size: {size}
"""


@pytest.mark.parametrize("target", ["python", "javascript"])
def test_ksc_fails_on_a_warning(tmp_path: Path, target: str) -> None:
    # The compiler's style check wants `len_body` for a field only used as a size.
    proc = _ksc(tmp_path, PROBE.format(name="body_length", size="body_length"), target)
    assert proc.returncode != 0
    assert "warning" in proc.stderr and "len_body" in proc.stderr
    assert not (tmp_path / "out").exists()


def test_ksc_fails_on_an_error(tmp_path: Path) -> None:
    proc = _ksc(tmp_path, PROBE.format(name="len_body", size="no_such_field"))
    assert proc.returncode != 0
    assert "no_such_field" in proc.stderr


def test_ksc_passes_a_clean_spec(tmp_path: Path) -> None:
    proc = _ksc(tmp_path, PROBE.format(name="len_body", size="len_body"))
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "out" / "probe.py").is_file()


@pytest.mark.parametrize(("package", "debug"), [("kaitai", False), ("kaitai_debug", True)])
def test_generated_matches_a_fresh_build(package: str, debug: bool) -> None:
    """What `make generate` would write now is byte-identical to what is checked in."""
    _node()
    fresh = _gen_kaitai().render_build(debug)
    on_disk = {p.name: p.read_bytes() for p in (GENERATED / package).glob("*.py")}
    assert sorted(fresh) == sorted(on_disk)
    for name, data in fresh.items():
        assert data == on_disk[name], f"generated/{package}/{name} is stale: run make generate"


@pytest.mark.parametrize("package", ["kaitai", "kaitai_debug"])
def test_generated_files_are_headed_and_relative(package: str) -> None:
    names = sorted(p.stem for p in (GENERATED / package).glob("*.py") if p.stem != "__init__")
    assert names == SCHEMA_IDS
    for name in names:
        text = (GENERATED / package / f"{name}.py").read_text()
        assert text.startswith("# GENERATED FILE - DO NOT EDIT BY HAND.\n")
        assert f"# Source schema: schemas/{name}.ksy\n" in text.split("\n\n")[0]
        assert "kaitai-struct-compiler 0.11.0" in text.split("\n\n")[0]
        for other in SCHEMA_IDS:
            assert not re.search(rf"^import {other}$", text, re.MULTILINE), (name, other)
        module = importlib.import_module(f"kafka_format.generated.{package}.{name}")
        assert module.__name__.endswith(name)


def _load_schemas() -> dict[str, dict]:
    node = _node()
    env = dict(os.environ, NODE_PATH=str(ROOT / ".tools" / "npm" / "node_modules"))
    files = sorted(str(p) for p in (ROOT / "schemas").glob("*.ksy"))
    proc = subprocess.run(
        [node, str(ROOT / "tests" / "js" / "ksy_to_json.js"), *files],
        capture_output=True,
        text=True,
        check=False,
        env=env,
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def _undocumented(spec: dict, where: str) -> Iterator[str]:
    if where != "" and not spec.get("doc"):
        yield where or "/"
    for section in ("seq", "params"):
        for i, attr in enumerate(spec.get(section, [])):
            if not attr.get("doc"):
                yield f"{where}/{section}/{i} ({attr.get('id')})"
    for name, inst in spec.get("instances", {}).items():
        if not inst.get("doc"):
            yield f"{where}/instances/{name}"
    for name, sub in spec.get("types", {}).items():
        yield from _undocumented(sub, f"{where}/types/{name}")
    for enum, values in spec.get("enums", {}).items():
        for code, val in values.items():
            if not (isinstance(val, dict) and val.get("doc")):
                yield f"{where}/enums/{enum}/{code}"


def test_schemas_have_meta_and_docs_everywhere() -> None:
    schemas = _load_schemas()
    assert sorted(Path(f).stem for f in schemas) == SCHEMA_IDS
    for file, spec in schemas.items():
        meta = spec["meta"]
        assert meta["id"] == Path(file).stem
        assert meta["title"] and spec["doc"]
        assert meta["license"] == "Apache-2.0"
        assert meta["endian"] == "be"
        refs = spec["doc-ref"] if isinstance(spec["doc-ref"], list) else [spec["doc-ref"]]
        assert any("kafka.apache.org" in r for r in refs)
        assert any("github.com/apache/kafka" in r for r in refs)
        assert list(_undocumented(spec, "")) == [], file
        # Nothing the Web IDE could not load: no custom processing, no opaque types.
        assert "process" not in json.dumps(spec)
        assert not meta.get("ks-opaque-types")
