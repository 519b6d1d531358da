"""The JavaScript build of the schemas (what the Kaitai Web IDE runs) against the Python build.

The schemas are compiled to JavaScript with scripts/ksc.js (same pinned npm compiler) into a
temporary folder, then tests/js/*.js parse corpus files and varints under Node with the
`kaitai-struct` npm runtime. JavaScript numbers are doubles: 64-bit values are compared
exactly up to 2^53 and approximately beyond.
"""

from __future__ import annotations

import json
import math
import os
import random
import shutil
import subprocess
from pathlib import Path

import pytest
from kaitaistruct import BytesIO, KaitaiStream

from kafka_format.generated.kaitai.legacy_message import LegacyMessage
from kafka_format.generated.kaitai.record_batch import RecordBatch
from kafka_format.generated.kaitai.record_set import RecordSet
from kafka_format.generated.kaitai.varint import Varint

pytestmark = pytest.mark.node

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT.parent / "shared" / "corpus"
NODE_MODULES = ROOT / ".tools" / "npm" / "node_modules"
JS_DIR = ROOT / "tests" / "js"
EXACT = 2**53


def _missing(what: str) -> None:
    if os.environ.get("CI") == "true":
        pytest.fail(f"{what} (required when CI=true)")
    pytest.skip(what)


@pytest.fixture(scope="module")
def node() -> str:
    path = shutil.which("node")
    if path is None:
        _missing("node is not installed")
    if not (NODE_MODULES / "kaitai-struct-compiler").is_dir():
        _missing("npm tools missing: run `make setup`")
    return path


@pytest.fixture(scope="module")
def js_build(node: str, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("kaitai_js")
    schemas = sorted((ROOT / "schemas").glob("*.ksy"))
    proc = subprocess.run(
        [node, str(ROOT / "scripts" / "ksc.js"), "--target", "javascript", "--out", str(out)]
        + [str(s) for s in schemas],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)
    assert {f["schema"] for f in summary["files"]} == {s.name for s in schemas}
    return out


def run_node(node: str, script: str, *args: str) -> object:
    env = dict(os.environ, NODE_PATH=str(NODE_MODULES))
    proc = subprocess.run(
        [node, str(JS_DIR / script), *args],
        capture_output=True,
        text=True,
        check=False,
        env=env,
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def _hex(b: bytes | None) -> str | None:
    return None if b is None else b.hex()


def _record(r) -> dict:
    b = r.body
    return {
        "len_body": r.len_body.value,
        "attributes": b.attributes,
        "timestamp_delta": b.timestamp_delta.value,
        "offset_delta": b.offset_delta.value,
        "key": _hex(b.key) if b.len_key.value >= 0 else None,
        "value": _hex(b.value) if b.len_value.value >= 0 else None,
        "headers": [
            {"key": h.key, "value": _hex(h.value) if h.len_value.value >= 0 else None}
            for h in b.headers
        ],
    }


def _batch(b: RecordBatch) -> dict:
    a = b.attributes
    out = {
        "kind": "record_batch",
        "base_offset": b.base_offset,
        "batch_length": b.batch_length,
        "partition_leader_epoch": b.partition_leader_epoch,
        "magic": b.magic,
        "crc": b.crc,
        "compression": int(a.compression),
        "timestamp_type": int(a.timestamp_type),
        "is_transactional": a.is_transactional,
        "is_control": a.is_control,
        "has_delete_horizon": a.has_delete_horizon,
        "last_offset_delta": b.last_offset_delta,
        "base_timestamp": b.base_timestamp,
        "max_timestamp": b.max_timestamp,
        "producer_id": b.producer_id,
        "producer_epoch": b.producer_epoch,
        "base_sequence": b.base_sequence,
        "records_count": b.records_count,
    }
    if int(a.compression) == 0:
        out["records"] = [_record(r) for r in b.records.records]
    else:
        out["compressed_records"] = b.compressed_records.hex()
    return out


def _legacy(m: LegacyMessage) -> dict:
    return {
        "kind": "legacy_message",
        "offset": m.offset,
        "message_size": m.message_size,
        "crc": m.crc,
        "magic": m.magic,
        "compression": int(m.attributes.compression),
        "timestamp_type": int(m.timestamp_type),
        "timestamp": m.timestamp if m.magic == 1 else None,
        "key": _hex(m.key) if m.len_key >= 0 else None,
        "value": _hex(m.value) if m.len_value >= 0 else None,
    }


def python_summary(path: Path) -> dict:
    rs = RecordSet(KaitaiStream(BytesIO(path.read_bytes())))
    frames = []
    for f in rs.frames if rs.is_first_complete else []:
        common = {"ofs_frame": f.ofs_frame, "length": f.length, "frame_magic": f.magic}
        body = _batch(f.body) if f.magic == 2 else _legacy(f.body)
        frames.append(common | body)
    return {"file": str(path), "frames": frames, "trailing": rs.trailing.hex()}


def assert_js_equal(js: object, py: object, where: str = "") -> None:
    """Equal, except that ints beyond 2^53 need only be the nearest-ish double."""
    if isinstance(py, bool) or py is None or isinstance(py, str):
        assert js == py, where
    elif isinstance(py, int):
        assert isinstance(js, int | float) and not isinstance(js, bool), where
        if abs(py) <= EXACT:
            assert js == py, where
        else:
            assert math.isclose(js, py, rel_tol=1e-12), where
    elif isinstance(py, dict):
        assert isinstance(js, dict) and js.keys() == py.keys(), where
        for k in py:
            assert_js_equal(js[k], py[k], f"{where}.{k}")
    elif isinstance(py, list):
        assert isinstance(js, list) and len(js) == len(py), where
        for i, (j, p) in enumerate(zip(js, py, strict=True)):
            assert_js_equal(j, p, f"{where}[{i}]")
    else:
        raise AssertionError(f"unexpected {type(py)} at {where}")


def test_corpus_parses_the_same_in_javascript(node: str, js_build: Path) -> None:
    if not CORPUS.is_dir():
        _missing(f"corpus not found at {CORPUS}")
    files = sorted(CORPUS.glob("*/*.bin"))
    assert files
    js = run_node(node, "parse_record_set.js", str(js_build), *map(str, files))
    assert isinstance(js, list) and len(js) == len(files)
    for js_one, path in zip(js, files, strict=True):
        py_one = python_summary(path)
        assert py_one["frames"], path
        assert_js_equal(js_one, py_one, path.name)


def _encode(v: int) -> bytes:
    u = ((v << 1) ^ (v >> 63)) & 0xFFFF_FFFF_FFFF_FFFF
    out = bytearray()
    while u > 0x7F:
        out.append((u & 0x7F) | 0x80)
        u >>= 7
    out.append(u)
    return bytes(out)


def test_varints_in_javascript(node: str, js_build: Path) -> None:
    rng = random.Random(20240611)
    values = [0, -1, 1, 2**31 - 1, -(2**31), EXACT, -EXACT, EXACT + 1, 2**63 - 1, -(2**63)]
    values += [rng.randint(-(2**bits), 2**bits) for bits in range(1, 64) for _ in range(4)]
    encoded = [_encode(v) for v in values]
    js = run_node(node, "parse_varints.js", str(js_build), *(e.hex() for e in encoded))
    for v, e, got in zip(values, encoded, js, strict=True):
        py = Varint(KaitaiStream(BytesIO(e)))
        assert py.value == v
        assert got["len"] == len(e)
        assert_js_equal(got["value"], py.value, f"value {v}")
        assert_js_equal(got["raw"], py.raw, f"raw of {v}")
