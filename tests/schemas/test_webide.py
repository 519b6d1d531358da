"""The schemas as the Kaitai Web IDE shows them: summaries, timestamp types, docs, metadata.

tests/js/webide_tree.js compiles record_set.ksy with the pinned npm compiler in debug mode, as
the IDE does, parses with the `kaitai-struct` JavaScript runtime under Node, and renders every
node's label the way the IDE's object tree does (`name [Class]: summary`, the summary from the
type's `-webide-representation`). The static checks read the .ksy YAML with js-yaml (through
tests/js/ksy_to_json.js), the parser the compiler and the IDE use.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import struct
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from kafka.record.default_records import DefaultRecordBatchBuilder
from kafka.record.legacy_records import LegacyRecordBatchBuilder
from kaitaistruct import BytesIO, KaitaiStream

from kafka_format.generated.kaitai.record_set import RecordSet

pytestmark = pytest.mark.node

ROOT = Path(__file__).resolve().parents[2]
SCHEMAS = ROOT / "schemas"
NODE_MODULES = ROOT / ".tools" / "npm" / "node_modules"
JS_DIR = ROOT / "tests" / "js"
SCHEMA_IDS = sorted(p.stem for p in SCHEMAS.glob("*.ksy"))

#: Types that are only ever the root of the IDE's tree (the root has no label of its own) or
#: read nothing; every other type is a tree node and needs a summary.
ROOT_ONLY = {"record_set", "offset_index", "time_index", "txn_index", "producer_snapshot"}
NO_DATA = {"kafka_enums"}
#: The nine files the IDE needs for a .log segment (docs/web-ide.md).
RECORD_SET_FILES = {
    "record_set",
    "record_batch",
    "legacy_message",
    "record_list",
    "record",
    "varint",
    "kafka_enums",
    "control_record_key",
    "end_txn_marker",
}
REF = re.compile(r"{(.*?)}")


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


def run_node(node: str, script: str, *args: str) -> object:
    env = dict(os.environ, NODE_PATH=str(NODE_MODULES))
    proc = subprocess.run(
        [node, str(JS_DIR / script), *args], capture_output=True, text=True, check=False, env=env
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def webide_trees(node: str, *files: Path, eager: bool = False) -> list[dict]:
    """The IDE's view of each file parsed with record_set.ksy (see tests/js/webide_tree.js);
    ``eager`` evaluates every instance, as the IDE's eager mode does."""
    flags = ["--eager"] if eager else []
    record_set = str(SCHEMAS / "record_set.ksy")
    out = run_node(node, "webide_tree.js", *flags, record_set, *map(str, files))
    assert isinstance(out, list) and len(out) == len(files)
    return out


def by_path(tree: dict) -> dict[str, dict]:
    return {n["path"]: n for n in tree["nodes"]}


@pytest.fixture(scope="module")
def specs(node: str) -> dict[str, dict]:
    """Every .ksy, by spec id, as js-yaml reads it."""
    files = [str(SCHEMAS / f"{i}.ksy") for i in SCHEMA_IDS]
    loaded = run_node(node, "ksy_to_json.js", *files)
    assert isinstance(loaded, dict)
    return {Path(name).stem: spec for name, spec in loaded.items()}


# --- (a) timestamp types: none for magic 0, by the bit for magic 1 and 2 ------------------


def entry(magic: int, *, log_append: bool) -> bytes:
    """One record set entry written by kafka-python, with attributes bit 3 set on demand.

    kafka-python's builders only write CreateTime; bit 3 is set afterwards (at byte 17 of a
    legacy message, in the low byte of a v2 batch's int16 attributes at 21). The CRC then no
    longer holds, which the schemas do not check.
    """
    if magic == 2:
        builder = DefaultRecordBatchBuilder(2, 0, 0, -1, -1, -1, 1 << 20)
        builder.append(0, 1_700_000_000_000, b"k", b"v", [])
        bit_at = 22
    else:
        builder = LegacyRecordBatchBuilder(magic, 0, 1 << 20)
        builder.append(0, 1_700_000_000_000 if magic == 1 else None, b"k", b"v")
        bit_at = 17
    data = bytearray(builder.build())
    assert data[16] == magic
    if log_append:
        data[bit_at] |= 0x08
    return bytes(data)


TIMESTAMP_CASES = [
    # Kafka: LegacyRecord.timestampType gives NO_TIMESTAMP_TYPE for magic 0 whatever the bit;
    # TimestampType.forAttributes reads bit 3 otherwise.
    (0, False, "NO_TIMESTAMP_TYPE"),
    (0, True, "NO_TIMESTAMP_TYPE"),
    (1, False, "CREATE_TIME"),
    (1, True, "LOG_APPEND_TIME"),
    (2, False, "CREATE_TIME"),
    (2, True, "LOG_APPEND_TIME"),
]
TIMESTAMP_NAMES = ("NO_TIMESTAMP_TYPE", "CREATE_TIME", "LOG_APPEND_TIME")


def test_timestamp_type_by_magic_in_javascript(node: str, tmp_path: Path) -> None:
    files = []
    for magic, log_append, _ in TIMESTAMP_CASES:
        path = tmp_path / f"m{magic}-lat{int(log_append)}.bin"
        path.write_bytes(entry(magic, log_append=log_append))
        files.append(path)
    trees = webide_trees(node, *files)
    for (magic, log_append, name), path, tree in zip(TIMESTAMP_CASES, files, trees, strict=True):
        where = path.name
        assert tree["error"] is None, where
        nodes = by_path(tree)
        assert nodes["frames.0.body.timestampType"]["text"] == f"timestampType = {name}", where
        summary = nodes["frames.0.body"]["text"]
        assert f", {name}" in summary, (where, summary)
        attributes = [
            n["text"] for p, n in nodes.items() if p.startswith("frames.0.body.attributes.")
        ]
        if magic < 2:
            # The legacy attributes keep the bare bit: no enum name that v0 would contradict.
            assert f"timestampType = {str(log_append).lower()}" in attributes, where
            assert not [t for t in attributes if any(n in t for n in TIMESTAMP_NAMES)], where
        else:
            assert f"timestampType = {name}" in attributes, where
        # The Python build of the same schemas says the same.
        py = RecordSet(KaitaiStream(BytesIO(path.read_bytes()))).frames[0].body
        assert py.timestamp_type.name.upper() == name, where
        assert int(py.timestamp_type) == {"NO": -1, "CR": 0, "LO": 1}[name[:2]], where


# --- control batches: the control type by name ---------------------------------------------


def control_batch(control_type: int, coordinator_epoch: int) -> bytes:
    """A transaction marker as kafka-python lays out a v2 batch: one record, key (version 0,
    type), value (version 0, coordinator epoch); the control and transactional bits set
    afterwards (kafka-python's builder writes data batches only)."""
    builder = DefaultRecordBatchBuilder(2, 0, 1, 4242, 0, -1, 1 << 20)
    key = struct.pack(">hh", 0, control_type)
    builder.append(7, 1_700_000_000_000, key, struct.pack(">hi", 0, coordinator_epoch), [])
    data = bytearray(builder.build())
    data[22] |= 0x20
    return bytes(data)


def test_control_batches_name_their_control_type(node: str, tmp_path: Path) -> None:
    from kafka.record.memory_records import MemoryRecords

    cases = [(0, 3, "ABORT"), (1, 9, "COMMIT")]
    files = []
    for control_type, epoch, _ in cases:
        path = tmp_path / f"control-{control_type}.bin"
        path.write_bytes(control_batch(control_type, epoch) + entry(2, log_append=False))
        files.append(path)
    for (control_type, epoch, name), path, tree in zip(
        cases, files, webide_trees(node, *files, eager=True), strict=True
    ):
        # kafka-python, an independent reader, sees the same marker.
        (record,) = list(MemoryRecords(path.read_bytes()).next_batch())
        assert type(record).__name__ == "ControlRecord"
        assert (record.abort, record.commit) == (control_type == 0, control_type == 1)
        assert tree["error"] is None
        nodes = by_path(tree)
        assert nodes["frames.0.body"]["text"].endswith(", TRANSACTIONAL_CONTROL")
        key = nodes["frames.0.body.controlKey"]["text"]
        assert key == f"controlKey [ControlRecordKey]: {name} (version 0)"
        value = nodes["frames.0.body.controlValue"]["text"]
        assert value == f"controlValue [EndTxnMarker]: coordinator_epoch {epoch} (version 0)"
        # The data batch after it has neither, and evaluating them is no error.
        assert nodes["frames.1.body"]["text"].endswith(", DATA")
        assert nodes["frames.1.body.controlKey"]["text"] == "controlKey = <no value>"
        assert nodes["frames.1.body.controlValue"]["instance_error"] is None
        # The Python build of the same schemas.
        py = RecordSet(KaitaiStream(BytesIO(path.read_bytes()))).frames
        assert py[0].body.control_key.type.name.upper() == name
        assert py[0].body.control_value.coordinator_epoch == epoch
        assert py[1].body.control_key is None


# --- (b) summaries: present, and every {reference} resolves ---------------------------------


def _bare_type(attr: dict) -> str | None:
    t = attr.get("type")
    return t.split("(")[0] if isinstance(t, str) else None


def _members(spec_id: str, t: dict) -> dict[str, dict]:
    """What a `{name}` can name in a type: seq fields, params and instances."""
    members = {a["id"]: a for a in t.get("seq", [])}
    members |= {p["id"]: p for p in t.get("params", [])}
    members |= dict(t.get("instances", {}))
    return members


def _all_types(specs: dict[str, dict]) -> Iterator[tuple[str, str, dict]]:
    """(spec id, type name, type) for every root and nested type."""

    def walk(spec_id: str, name: str, t: dict) -> Iterator[tuple[str, str, dict]]:
        yield spec_id, name, t
        for sub_name, sub in t.get("types", {}).items():
            yield from walk(spec_id, sub_name, sub)

    for spec_id, spec in specs.items():
        yield from walk(spec_id, spec_id, spec)


def _resolve(specs: dict[str, dict], spec_id: str, t: dict, ref: str) -> str | None:
    """None when `ref` (a.b.c, before any :format) names something in `t`; else the problem."""
    parts = ref.split(".")
    for i, part in enumerate(parts):
        members = _members(spec_id, t)
        if part not in members:
            return f"{part!r} is not a field, param or instance"
        if i == len(parts) - 1:
            return None
        sub = _bare_type(members[part])
        local = _find_type(specs[spec_id], sub) if sub else None
        if local is not None:
            t = local
        elif sub in specs:
            spec_id, t = sub, specs[sub]
        else:
            return f"cannot follow {part!r} (type {members[part].get('type')!r})"
    return None


def _find_type(t: dict, name: str) -> dict | None:
    for sub_name, sub in t.get("types", {}).items():
        if sub_name == name:
            return sub
        found = _find_type(sub, name)
        if found is not None:
            return found
    return None


def test_every_tree_node_type_has_a_summary(specs: dict[str, dict]) -> None:
    missing = [
        f"{spec_id}::{name}"
        for spec_id, name, t in _all_types(specs)
        if not (name == spec_id and spec_id in ROOT_ONLY | NO_DATA)
        and not t.get("-webide-representation")
    ]
    assert missing == []


def test_summary_references_resolve(specs: dict[str, dict]) -> None:
    problems = []
    for spec_id, name, t in _all_types(specs):
        for ref in REF.findall(t.get("-webide-representation", "")):
            problem = _resolve(specs, spec_id, t, ref.split(":")[0])
            if problem:
                problems.append(f"{spec_id}::{name} {{{ref}}}: {problem}")
    assert problems == []


def _closure(specs: dict[str, dict], spec_id: str) -> list[str]:
    seen: list[str] = []

    def visit(i: str) -> None:
        if i not in seen:
            seen.append(i)
            for imported in specs[i].get("meta", {}).get("imports", []):
                visit(imported)

    visit(spec_id)
    return seen


def test_types_sharing_a_class_name_share_their_summary(specs: dict[str, dict]) -> None:
    """The IDE keeps one YAML type per JavaScript class name (SchemaUtils.collectKsyTypes in
    kaitai_struct_webide), so record_batch::attributes and legacy_message::attributes, both
    class `Attributes`, show whichever was loaded last: its summary must fit both."""
    closure = _closure(specs, "record_set")
    assert set(closure) == RECORD_SET_FILES
    by_class: dict[str, list[tuple[str, str, dict]]] = {}
    for spec_id, name, t in _all_types({i: specs[i] for i in closure}):
        cls = "".join(w.capitalize() for w in name.split("_"))
        by_class.setdefault(cls, []).append((spec_id, name, t))
    shared = {cls: types for cls, types in by_class.items() if len(types) > 1}
    assert "Attributes" in shared
    for cls, types in shared.items():
        reprs = {t.get("-webide-representation") for _, _, t in types}
        assert len(reprs) == 1, (cls, reprs)
        for spec_id, name, t in types:
            for ref in REF.findall(t.get("-webide-representation", "")):
                assert _resolve(specs, spec_id, t, ref.split(":")[0]) is None, (name, ref)


@pytest.fixture(scope="module")
def corpus_trees(node: str, corpus_dir: Path) -> list[tuple[Path, dict]]:
    files = sorted(corpus_dir.glob("*/*.bin"))
    assert files
    return list(zip(files, webide_trees(node, *files), strict=True))


SUMMARISED = {
    "Frame",
    "RecordBatch",
    "LegacyMessage",
    "Attributes",
    "RecordList",
    "Record",
    "Body",
    "Header",
    "Varint",
}


def test_corpus_tree_labels_are_filled_in(corpus_trees: list[tuple[Path, dict]]) -> None:
    """On every corpus set, each batch, message, record, header and varint node has a
    summary, every reference in it found its value, and the frames are those Python sees."""
    seen: set[str] = set()
    for path, tree in corpus_trees:
        assert tree["error"] is None, path.name
        py = RecordSet(KaitaiStream(BytesIO(path.read_bytes())))
        nodes = by_path(tree)
        frames = [p for p in nodes if re.fullmatch(r"frames\.\d+", p)]
        assert len(frames) == len(py.frames if py.is_first_complete else []), path.name
        for n in tree["nodes"]:
            assert n["unresolved"] == [], (path.name, n["path"], n["unresolved"])
            if n["class"] in SUMMARISED:
                seen.add(n["class"])
                label, _, summary = n["text"].partition("]: ")
                assert summary.strip(), (path.name, n["path"], n["text"])
        for i, frame in enumerate(py.frames if py.is_first_complete else []):
            label = nodes[f"frames.{i}"]["text"]
            body = frame.body
            if frame.magic == 2:
                want = (
                    f"V2 offsets {body.base_offset}-{body.base_offset + body.last_offset_delta},"
                    f" {body.records_count} records, {body.attributes.compression.name.upper()},"
                )
            else:
                want = (
                    f"V{frame.magic} offset {body.offset}, "
                    f"{body.attributes.compression.name.upper()}, "
                    f"{body.timestamp_type.name.upper()}, len_key {body.len_key}, "
                    f"len_value {body.len_value}"
                )
            assert label.startswith(f"{i} [Frame]: at byte {frame.ofs_frame}: {want}"), label
            if frame.magic == 0:
                assert "NO_TIMESTAMP_TYPE" in label
    assert seen == SUMMARISED


def test_corpus_magic_0_reads_no_timestamp_type(corpus_trees: list[tuple[Path, dict]]) -> None:
    """Sets written by 0.8/0.9 brokers: the corpus lists their records with timestampType -1,
    and the IDE's tree says no_timestamp_type for every message."""
    checked = 0
    for path, tree in corpus_trees:
        nodes = by_path(tree)
        magics = {n["text"] for p, n in nodes.items() if re.fullmatch(r"frames\.\d+\.magic", p)}
        if magics != {"magic = 0x0"}:
            continue
        lines = path.with_suffix(".jsonl").read_text().splitlines()
        expected = [json.loads(line) for line in lines if line.strip()]
        assert expected and {r["timestampType"] for r in expected} == {-1}, path.name
        types = {
            n["text"]
            for p, n in nodes.items()
            if re.fullmatch(r"frames\.\d+\.body\.timestampType", p)
        }
        assert types == {"timestampType = NO_TIMESTAMP_TYPE"}, path.name
        checked += 1
    assert checked > 0


# --- (c) docs and metadata ------------------------------------------------------------------


def test_every_seq_field_param_and_instance_has_a_doc(specs: dict[str, dict]) -> None:
    undocumented = []
    for spec_id, name, t in _all_types(specs):
        for section in ("seq", "params"):
            for attr in t.get(section, []):
                if not str(attr.get("doc", "")).strip():
                    undocumented.append(f"{spec_id}::{name}/{section}/{attr.get('id')}")
        for inst_name, inst in t.get("instances", {}).items():
            if not str(inst.get("doc", "")).strip():
                undocumented.append(f"{spec_id}::{name}/instances/{inst_name}")
    assert undocumented == []


def _referenced_specs(spec_id: str, spec: dict, ids: set[str]) -> set[str]:
    """Other specs a spec names: as a type (`record_list(...)`) or in `other::enum` paths."""
    text = json.dumps({k: v for k, v in spec.items() if k not in ("meta", "doc", "doc-ref")})
    found = {m for m in re.findall(r"\b([a-z_]+)::", text) if m in ids}
    for _, _, t in _all_types({spec_id: spec}):
        for attr in [*t.get("seq", []), *t.get("instances", {}).values()]:
            kind = attr.get("type")
            names = kind.get("cases", {}).values() if isinstance(kind, dict) else [kind]
            for bare in (n.split("(")[0] for n in names if isinstance(n, str)):
                if bare in ids and _find_type(spec, bare) is None:
                    found.add(bare)
    found.discard(spec_id)
    return found


#: The specs that describe a whole file, by the extension Kafka gives it (LogFileUtils).
FILE_EXTENSIONS = {
    "record_set": "log",
    "offset_index": "index",
    "time_index": "timeindex",
    "txn_index": "txnindex",
    "producer_snapshot": "snapshot",
}


def test_every_spec_has_meta_doc_ref_and_exact_imports(specs: dict[str, dict]) -> None:
    ids = set(specs)
    for spec_id, spec in specs.items():
        meta = spec["meta"]
        assert meta["id"] == spec_id
        assert meta["title"].strip() and meta["license"] == "Apache-2.0" and meta["endian"] == "be"
        assert meta["application"] == "Apache Kafka"
        assert meta.get("file-extension") == FILE_EXTENSIONS.get(spec_id), spec_id
        refs = spec["doc-ref"] if isinstance(spec["doc-ref"], list) else [spec["doc-ref"]]
        assert any(r.startswith("https://kafka.apache.org/documentation/") for r in refs)
        assert any(r.startswith("https://github.com/apache/kafka/blob/trunk/") for r in refs)
        assert set(meta.get("imports", [])) == _referenced_specs(spec_id, spec, ids), spec_id


# --- (d) what docs/web-ide.md says about damaged input --------------------------------------

EOF_AT_ZERO_FILL = "requested 4 bytes, but only 0 bytes available"


def test_length_below_14_is_an_eof_not_a_validation_error(node: str, tmp_path: Path) -> None:
    """A zero-filled tail after a batch (length 0, and byte 16, the magic, 0): the entry is
    typed as a legacy message in a 12-byte substream, which runs out at its crc, before the
    frame's `valid: length >= 14` check is reached. docs/web-ide.md quotes the message."""
    first = entry(2, log_append=False)
    zero_tail = tmp_path / "zero-tail.bin"
    zero_tail.write_bytes(first + bytes(64))
    # Byte 16 an unknown magic: the body stays raw bytes and the validation does fire.
    odd_magic = tmp_path / "odd-magic.bin"
    odd_magic.write_bytes(first + struct.pack(">qi", 7, 10) + bytes([0, 0, 0, 0, 99]) + bytes(5))
    tree, odd = webide_trees(node, zero_tail, odd_magic)
    assert tree["error"] == f"EOFError: {EOF_AT_ZERO_FILL}"
    assert [n for n in tree["nodes"] if n["validation_error"]] == []
    assert by_path(tree)["frames.1.body"]["incomplete"]
    assert odd["error"].startswith("ValidationExprError: not matching the expression")
    assert [n["path"] for n in odd["nodes"] if n["validation_error"]] == ["frames.1.body"]
    doc = (ROOT / "docs" / "web-ide.md").read_text()
    assert EOF_AT_ZERO_FILL in doc
