"""``kafka-format inspect``: the field tree built from the Kaitai debug build, and the command.

Oracles: the corpus (records as the source repositories' own readers give them, in .jsonl),
Kafka's fixed batch layouts (DefaultRecordBatch / LegacyRecord offsets) read here with
``struct``, frame boundaries walked here independently, and kafka-python's batch builder for
synthetic batches. The tree is checked through its byte ranges: every byte of a batch belongs
to exactly one leaf, and the bytes at a leaf's range are what the field must hold.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import json
import os
import re
import struct
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rich.console import Console

from kafka_format.runtime.analysis.inspect import (
    BatchView,
    Field,
    Pane,
    inspect_frame,
    iter_fields,
    iter_leaves,
    page_data,
    render_html,
    render_terminal,
)
from kafka_format.runtime.cli.inspect import inspect_file

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT.parent / "shared" / "corpus"

# A sample of every kind of set: v2 plain / compressed with each codec / control, v0 and v1
# plain and compressed, mixed magic, headers, null keys, an invalid CRC.
SAMPLE = [
    "kafka-python/record_batch_data_v0.bin",
    "kafka-python/record_batch_data_v1.bin",
    "kafka-python/record_batch_data_v2.bin",
    "kafka-python/control_batch_data_v2.bin",
    "kafka-go/v1-v1c-v2-v2c-v2b-v2b-v2b-v2bc-v1b-v1bc.p0.bin",
    "kafka-go/v1c-v1-v1c.p0.bin",
    "kafka-go/v2c-v2-v2c.p0.bin",
    "kafkajs/fetch_v4_response.p0.bin",
    "kafkajs/fetch_v4_response_snappy.p0.bin",
    "kafkajs/fetch_v4_from_scala_producer_response.p0.bin",
    "kafkajs/fetch_v1_response_gzip.p0.bin",
    "kafkajs/fetch_v2_response_gzip.p0.bin",
    "kafka-rust/fetch1.mytopic.1p.gzip.kafka.0821.bin",
    "kafka-rust/fetch1.mytopic.1p.snappy.kafka.0822.bin",
    "kafka-rust/fetch2.mytopic.nocompression.invalid_crc.kafka.0900.bin",
    "kafkalite/hamlet-snappy-0.00000000000000000000.log.bin",
    "recordupdater/hello-0.00000000000000000000.log.bin",
    "rskafka/test_decode_fixture_gzip.bin",
    "rskafka/test_decode_fixture_lz4.bin",
    "rskafka/test_decode_fixture_nocompression.bin",
    "rskafka/test_decode_fixture_null_key.bin",
    "rskafka/test_decode_fixture_snappy.bin",
    "rskafka/test_decode_fixture_snappy_java.bin",
    "rskafka/test_decode_fixture_zstd.bin",
]


def _corpus() -> Path:
    if CORPUS.is_dir():
        return CORPUS
    if os.environ.get("CI") == "true":
        pytest.fail(f"corpus not found at {CORPUS} (required when CI=true)")
    pytest.skip(f"corpus not found at {CORPUS}")


def _crc_valid(name: str) -> bool:
    entries = json.loads((_corpus() / "MANIFEST.json").read_text())
    return {e["file"]: e for e in entries}[name]["crc_valid"]


def _frames(data: bytes) -> list[tuple[int, int]]:
    """(position, size) of each whole frame: int64 offset, int32 length, then length bytes."""
    out = []
    pos = 0
    while len(data) - pos > 17:
        (length,) = struct.unpack_from(">i", data, pos + 8)
        if pos + 12 + length > len(data):
            break
        out.append((pos, 12 + length))
        pos += 12 + length
    return out


def _is_control(frame: bytes) -> bool:
    return frame[16] == 2 and bool(struct.unpack_from(">h", frame, 21)[0] & 0x20)


def _node(fields: list[Field], path: str) -> Field:
    for _, node in iter_fields(fields):
        if node.path == path:
            return node
    raise KeyError(path)


def _maybe(fields: list[Field], path: str) -> Field | None:
    try:
        return _node(fields, path)
    except KeyError:
        return None


def _bytes_at(pane: Pane, node: Field | None) -> bytes | None:
    if node is None:
        return None
    return pane.data[node.start - pane.base : node.end - pane.base]


def assert_tiles(pane: Pane) -> None:
    """Leaves in tree order cover the pane's bytes exactly once, in order, without gaps."""
    pos = pane.base
    for leaf in iter_leaves(pane.fields):
        assert leaf.start == pos, f"{leaf.path} starts at {leaf.start}, expected {pos}"
        assert leaf.end >= leaf.start
        pos = leaf.end
    assert pos == pane.base + len(pane.data)
    # Groups span exactly their children.
    for _, node in iter_fields(pane.fields):
        if node.group and node.children:
            assert node.start == node.children[0].start, node.path
            assert node.end == node.children[-1].end, node.path


# --- the field tree ---------------------------------------------------------------------------


@pytest.mark.parametrize("name", SAMPLE)
def test_leaves_tile_every_batch_and_decompressed_payload(name: str) -> None:
    path = _corpus() / name
    data = path.read_bytes()
    valid = _crc_valid(name)
    for position, size in _frames(data)[:40]:
        frame = data[position : position + size]
        view = inspect_frame(frame, position=position, file=str(path))
        assert view.panes[0].base == position
        assert view.panes[0].data == frame
        for pane in view.panes:
            assert_tiles(pane)
            assert not any(leaf.unparsed for leaf in iter_leaves(pane.fields)), pane.title
        if valid:
            assert view.problems == [], [str(p) for p in view.problems]
        compressed = frame[22] & 7 if frame[16] == 2 else frame[17] & 7
        assert len(view.panes) == (2 if compressed else 1)


def _v2_views(name: str) -> list[tuple[bytes, BatchView]]:
    path = _corpus() / name
    data = path.read_bytes()
    out = []
    for position, size in _frames(data):
        frame = data[position : position + size]
        if frame[16] == 2:
            out.append((frame, inspect_frame(frame, position=position, file=str(path))))
    return out


@pytest.mark.parametrize(
    "name",
    [
        "kafka-python/record_batch_data_v2.bin",
        "kafka-go/v2c-v2-v2c.p0.bin",
        "kafkajs/fetch_v4_response.p0.bin",
        "rskafka/test_decode_fixture_zstd.bin",
    ],
)
def test_v2_header_fields_hold_the_bytes_kafka_puts_there(name: str) -> None:
    views = _v2_views(name)
    assert views
    for frame, view in views:
        fields = view.panes[0].fields
        base = view.position
        # DefaultRecordBatch: BASE_OFFSET 0, LENGTH 8, CRC 17, ATTRIBUTES 21, RECORDS_COUNT 57.
        layout = {
            "base_offset": (0, ">q"),
            "batch_length": (8, ">i"),
            "crc": (17, ">I"),
            "attributes": (21, ">H"),
            "last_offset_delta": (23, ">i"),
            "records_count": (57, ">i"),
        }
        for path, (offset, fmt) in layout.items():
            node = _node(fields, path)
            assert (node.start - base, node.size) == (offset, struct.calcsize(fmt)), path
            (expected,) = struct.unpack_from(fmt, frame, offset)
            assert node.raw == expected, path
        crc = _node(fields, "crc")
        assert f"stored 0x{struct.unpack_from('>I', frame, 17)[0]:08x}" in crc.note


def test_legacy_header_fields_hold_the_bytes_kafka_puts_there() -> None:
    for name, magic in (
        ("kafka-python/record_batch_data_v0.bin", 0),
        ("kafka-python/record_batch_data_v1.bin", 1),
    ):
        path = _corpus() / name
        data = path.read_bytes()
        for position, size in _frames(data):
            frame = data[position : position + size]
            view = inspect_frame(frame, position=position, file=str(path))
            fields = view.panes[0].fields
            # LegacyRecord: offset(8) size(4) crc(4) magic(1) attributes(1) [timestamp(8)] key
            key_len_at = 18 + (8 if magic else 0)
            expect = {
                "offset": (0, ">q"),
                "message_size": (8, ">i"),
                "crc": (12, ">I"),
                "magic": (16, ">b"),
                "len_key": (key_len_at, ">i"),
            }
            if magic:
                expect["timestamp"] = (18, ">q")
            for path_, (offset, fmt) in expect.items():
                node = _node(fields, path_)
                assert node.start - position == offset, path_
                assert node.raw == struct.unpack_from(fmt, frame, offset)[0], path_
            assert view.magic == magic


def _tree_records(view: BatchView) -> list[dict]:
    """Key, value and headers of each data record, read from the file at the tree's ranges."""
    out = []
    pane = view.panes[-1]  # the decompressed pane when there is one
    index = {node.path: node for _, node in iter_fields(pane.fields)}

    def at(path: str) -> bytes | None:
        return _bytes_at(pane, index.get(path))

    if view.magic == 2:
        records = index.get("records")
        for rec in records.children if records else []:
            body = rec.path + ".body"
            headers = [
                {"key": at(h.path + ".key").decode(), "value": at(h.path + ".value")}
                for h in index[body + ".headers"].children
            ]
            out.append({"key": at(body + ".key"), "value": at(body + ".value"), "headers": headers})
        return out
    messages = [n.path + "." for n in pane.fields if n.name.startswith("messages[")] or [""]
    for prefix in messages:
        out.append({"key": at(prefix + "key"), "value": at(prefix + "value"), "headers": []})
    return out


def _expected(name: str) -> list[dict]:
    lines = (_corpus() / name.replace(".bin", ".jsonl")).read_text().splitlines()
    out = []
    for line in lines:
        rec = json.loads(line)
        b64 = lambda v: None if v is None else base64.b64decode(v)  # noqa: E731
        out.append(
            {
                "key": b64(rec["key"]),
                "value": b64(rec["value"]),
                "headers": [{"key": h["key"], "value": b64(h["value"])} for h in rec["headers"]],
            }
        )
    return out


@pytest.mark.parametrize("name", [n for n in SAMPLE if "control" not in n])
def test_record_fields_hold_the_corpus_records(name: str) -> None:
    path = _corpus() / name
    data = path.read_bytes()
    got = []
    for position, size in _frames(data):
        frame = data[position : position + size]
        if _is_control(frame):
            continue
        got.extend(_tree_records(inspect_frame(frame, position=position, file=str(path))))
    assert got == _expected(name)


def test_control_record_key_is_typed_and_an_opaque_value_is_left_whole() -> None:
    name = "kafka-python/control_batch_data_v2.bin"
    path = _corpus() / name
    frame = path.read_bytes()
    view = inspect_frame(frame, position=0, file=str(path))
    fields = view.panes[0].fields
    key = _node(fields, "records[0].body.key")
    version, kind = struct.unpack_from(">hh", frame, key.start)
    assert [c.name for c in key.children] == ["version", "type"]
    assert (_node(fields, "records[0].body.key.version").raw, int(key.children[1].raw)) == (
        version,
        kind,
    )
    value = _node(fields, "records[0].body.value")
    assert not value.children and value.raw == frame[value.start : value.end]
    # Its CRC is invalid on purpose (MANIFEST): shown, not hidden.
    assert not _crc_valid(name)
    assert _node(fields, "crc").problem
    assert any("stored crc32c" in str(p) for p in view.problems)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.tuples(
            st.one_of(st.none(), st.binary(max_size=40)),
            st.one_of(st.none(), st.binary(max_size=300)),
            st.lists(
                st.tuples(st.text(max_size=12), st.one_of(st.none(), st.binary(max_size=20))),
                max_size=3,
            ),
        ),
        min_size=1,
        max_size=8,
    ),
    st.sampled_from([0, 1]),
)
def test_built_batches_tile_and_locate_every_key_value_and_header(records, codec) -> None:
    from kafka.record.default_records import DefaultRecordBatchBuilder

    builder = DefaultRecordBatchBuilder(
        magic=2, compression_type=codec, is_transactional=0, producer_id=-1,
        producer_epoch=-1, base_sequence=-1, batch_size=1 << 20,
    )  # fmt: skip
    for i, (key, value, headers) in enumerate(records):
        builder.append(i, timestamp=1700000000000 + i, key=key, value=value, headers=headers)
    frame = bytes(builder.build())
    view = inspect_frame(frame, position=1000, file="<built>")
    assert view.problems == []
    for pane in view.panes:
        assert_tiles(pane)
    got = _tree_records(view)
    want = [
        {"key": k, "value": v, "headers": [{"key": hk, "value": hv} for hk, hv in hs]}
        for k, v, hs in records
    ]
    assert got == want
    if frame[22] & 7:  # kafka-python stores uncompressed when gzip would not shrink it
        (length,) = struct.unpack_from(">i", frame, 8)
        assert view.panes[1].data == gzip.decompress(frame[61 : 12 + length])


def test_a_damaged_batch_still_shows_what_parses() -> None:
    data = bytearray((_corpus() / "kafka-go/v2-v2.p0.bin").read_bytes())
    (count,) = struct.unpack_from(">i", data, 57)
    struct.pack_into(">i", data, 57, count + 2)  # more records than the batch holds
    (length,) = struct.unpack_from(">i", data, 8)
    view = inspect_frame(bytes(data[: 12 + length]), position=0, file="damaged.log")
    pane = view.panes[0]
    assert_tiles(pane)
    # Both real records are still there, with their keys at the right bytes.
    keys = [_bytes_at(pane, _node(pane.fields, f"records[{i}].body.key")) for i in range(count)]
    assert keys == [r["key"] for r in _expected("kafka-go/v2-v2.p0.bin")[:count]]
    messages = [str(p) for p in view.problems]
    # The readers' verdicts: the CRC's, then what the record decoders say past it.
    assert "stored crc32c" in messages[0]
    assert "Incorrect declared batch size, premature EOF reached" in messages[1]
    assert messages[0].startswith("damaged.log @0 (base offset 0): ")
    # ... named at the batch: the count (a header field) lies.
    assert messages[1].startswith("damaged.log @0 (base offset 0): ")


def test_a_record_body_longer_than_its_fields_is_marked_unparsed() -> None:
    from kafka.record.default_records import DefaultRecordBatchBuilder

    builder = DefaultRecordBatchBuilder(
        magic=2, compression_type=0, is_transactional=0, producer_id=-1,
        producer_epoch=-1, base_sequence=-1, batch_size=1 << 20,
    )  # fmt: skip
    builder.append(0, timestamp=1, key=b"k", value=b"v", headers=[])
    frame = bytearray(builder.build())
    # Record: len_body varint at 61; grow the body by 2 bytes that no field describes.
    body_len = frame[61] >> 1
    frame[61] = (body_len + 2) << 1
    frame += b"\xaa\xbb"
    struct.pack_into(">i", frame, 8, len(frame) - 12)
    view = inspect_frame(bytes(frame), position=0, file="x.log")
    assert_tiles(view.panes[0])
    unparsed = [leaf for leaf in iter_leaves(view.panes[0].fields) if leaf.unparsed]
    assert [(u.path, u.start, u.end) for u in unparsed] == [
        ("records[0].body.(unparsed)", len(frame) - 2, len(frame))
    ]
    # The verdict is the readers' (DefaultRecord.readFrom's words), at the record.
    assert any(
        str(p).startswith("x.log @61 (base offset 0): Invalid record size: expected to read")
        for p in view.problems
    )


# --- choosing the batch ------------------------------------------------------------------------


def _offset_ranges(data: bytes) -> list[tuple[int, int, int]]:
    """(position, first, last offset) of each v2 batch, from DefaultRecordBatch's header."""
    out = []
    for position, _ in _frames(data):
        base = struct.unpack_from(">q", data, position)[0]
        delta = struct.unpack_from(">i", data, position + 23)[0]
        out.append((position, base, base + delta))
    return out


def test_offset_and_position_select_the_batch() -> None:
    name = "kafka-go/v2c-v2-v2c.p0.bin"
    path = _corpus() / name
    data = path.read_bytes()
    ranges = _offset_ranges(data)
    assert len(ranges) == 3
    for position, first, last in ranges:
        for offset in range(first, last + 1):
            assert inspect_file(str(path), offset=offset).position == position
        view = inspect_file(str(path), position=position)
        assert (view.position, view.base_offset) == (position, first)
    assert inspect_file(str(path)).position == 0
    # Every record offset of the corpus lies in the batch picked for it.
    for line in (_corpus() / name.replace(".bin", ".jsonl")).read_text().splitlines():
        offset = json.loads(line)["offset"]
        view = inspect_file(str(path), offset=offset)
        (_, first, last) = next(r for r in ranges if r[0] == view.position)
        assert first <= offset <= last


def test_offset_in_a_compressed_legacy_wrapper() -> None:
    # Legacy wrappers carry their last inner offset; the records of the set say which
    # offsets each wrapper holds.
    name = "kafka-go/v1c-v1-v1c.p0.bin"
    path = _corpus() / name
    for line in (_corpus() / name.replace(".bin", ".jsonl")).read_text().splitlines():
        offset = json.loads(line)["offset"]
        view = inspect_file(str(path), offset=offset)
        inner = [r for r in view.panes[-1].fields if r.name.startswith("messages[")]
        if inner:  # compressed: v1 inner offsets are relative to the wrapper's last one
            rel = [_node(view.panes[-1].fields, m.path + ".offset").raw for m in inner]
            absolute = [view.base_offset - rel[-1] + r for r in rel]
            assert offset in absolute
        else:
            assert view.base_offset == offset


# --- the terminal view -------------------------------------------------------------------------


def test_terminal_view_shows_hex_and_every_field_name() -> None:
    path = _corpus() / "rskafka/test_decode_fixture_gzip.bin"
    view = inspect_file(str(path))
    console = Console(record=True, width=140, color_system="truecolor", force_terminal=True)
    render_terminal(view, console)
    text = console.export_text(clear=False)
    data = path.read_bytes()
    first_row = " ".join(f"{b:02x}" for b in data[:8])
    assert first_row in text
    for pane in view.panes:
        for _, node in iter_fields(pane.fields):
            assert node.name in text
    assert "decompressed records" in text
    assert f"stored 0x{struct.unpack_from('>I', data, 17)[0]:08x}" in text
    # Bytes are coloured: the record's key and the batch's crc have styles of their own.
    styled = console.export_html(inline_styles=True)
    assert styled.count("color: #") > 10


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "kafka_format.runtime.cli", "inspect", *args],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "COLUMNS": "120"},
    )


def test_cli_prints_the_batch() -> None:
    path = _corpus() / "kafka-go/v2c-v2-v2c.p0.bin"
    result = _cli(str(path), "--position", "133")
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    assert f"{path} @133: record batch (magic 2), base offset 2" in result.stdout
    for name in ("base_offset", "records_count", "records[1]", "len_body", "headers"):
        assert name in result.stdout


def test_cli_help_has_examples() -> None:
    result = _cli("--help")
    assert result.returncode == 0
    assert "examples:" in result.stdout
    for option in ("--offset", "--position", "--html", "--max-bytes"):
        assert option in result.stdout


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--position", "99999"], r"no batch at position 99999: the file has 422 bytes"),
        (["--position", "420"], r"@420: no complete batch at this position"),
        (["--position", "5"], r"@5\b.*(less than the minimum|magic)"),
        (["--offset", "77"], r"offset 77 not found: the batches hold offsets 0\.\.5"),
    ],
)
def test_cli_errors_are_one_line(args: list[str], expected: str) -> None:
    path = _corpus() / "kafka-go/v2c-v2-v2c.p0.bin"
    result = _cli(str(path), *args)
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    # a finding at a byte of the data: the form every command reports damage in; else the
    # command's own failure, in argparse's form
    found = lines[0].startswith(f"error: {path} @")
    assert found or lines[0].startswith(f"kafka-format inspect: error: {path}"), lines[0]
    assert re.search(expected, lines[0]), lines[0]


def test_cli_errors_for_missing_empty_and_truncated_files(tmp_path: Path) -> None:
    empty = tmp_path / "empty.log"
    empty.write_bytes(b"")
    truncated = tmp_path / "cut.log"
    truncated.write_bytes((_corpus() / "kafka-go/v2-v2.p0.bin").read_bytes()[:100])
    for target, expected, status in (
        (tmp_path / "missing.log", "no such file", 1),
        (tmp_path, "not a directory", 2),  # a directory is a bad argument for inspect
        (empty, "@0: no complete batch in the file", 1),
        (truncated, "@0: no complete batch in the file (100 bytes of a partial batch)", 1),
    ):
        result = _cli(str(target))
        assert result.returncode == status
        assert "Traceback" not in result.stderr
        lines = result.stderr.splitlines()
        assert len(lines) == 1 and str(target) in lines[0] and expected in lines[0], lines


def test_cli_damaged_batch_is_shown_and_fails(tmp_path: Path) -> None:
    data = bytearray((_corpus() / "kafka-go/v2-v2.p0.bin").read_bytes())
    data[61] = 0x7E  # the first record's length now runs into the second record
    bad = tmp_path / "bad.log"
    bad.write_bytes(data)
    result = _cli(str(bad))
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    assert "base_offset" in result.stdout and "(unparsed)" in result.stdout
    crc, record = result.stderr.splitlines()
    assert crc.startswith(f"error: {bad} @0 (base offset 0): stored crc32c ")
    # Past the CRC, the record decoders' verdict, at the record whose length is wrong.
    assert record.startswith(f"error: {bad} @61 (base offset 0): Invalid record")


# --- the page ----------------------------------------------------------------------------------


def _page_json(page: str) -> dict:
    (raw,) = re.findall(r'<script type="application/json" id="data">(.*?)</script>', page, re.S)
    return json.loads(raw)


def test_page_is_self_contained_and_allows_only_its_own_script() -> None:
    path = _corpus() / "kafka-go/v1c-v1-v1c.p0.bin"
    view = inspect_file(str(path))
    page = render_html(view)
    for needle in ("http://", "https://", "<link", " src=", "@import", "url("):
        assert needle not in page
    (script,) = re.findall(r"<script>(.*?)</script>", page, re.S)
    digest = base64.b64encode(hashlib.sha256(script.encode()).digest()).decode()
    assert f"script-src 'sha256-{digest}'" in page
    data = _page_json(page)
    assert data == json.loads(json.dumps(page_data(view)))
    assert bytes.fromhex(data["panes"][0]["hex"]) == path.read_bytes()[: view.size]
    assert len(data["panes"]) == 2  # the gzip wrapper's inner messages


def test_page_escapes_record_contents(tmp_path: Path) -> None:
    from kafka.record.default_records import DefaultRecordBatchBuilder

    evil = "</script><script>alert(1)</script>&lt;<!--"
    builder = DefaultRecordBatchBuilder(
        magic=2, compression_type=0, is_transactional=0, producer_id=-1,
        producer_epoch=-1, base_sequence=-1, batch_size=1 << 20,
    )  # fmt: skip
    builder.append(0, timestamp=1, key=evil.encode(), value=b"v", headers=[(evil, b"x")])
    log = tmp_path / f"{evil.replace('/', '_')}.log"
    log.write_bytes(bytes(builder.build()))
    page = render_html(inspect_file(str(log)))
    assert page.count("</script>") == 2  # the data block's and the script's own
    assert "<!--" not in page and "alert(1)</script>" not in page
    data = _page_json(page)
    key = _node_json(data["panes"][0]["fields"], "records[0].body.headers[0].key")
    assert key["v"] == json.dumps(evil)
    assert "&lt;script&gt;alert(1)" in page.split("<title>")[1].split("</title>")[0]


def _node_json(fields: list[dict], path: str) -> dict:
    for node in fields:
        if node["p"] == path:
            return node
        try:
            return _node_json(node.get("ch", []), path)
        except KeyError:
            continue
    raise KeyError(path)


def test_cli_writes_the_page(tmp_path: Path) -> None:
    out = tmp_path / "batch.html"
    path = _corpus() / "rskafka/test_decode_fixture_zstd.bin"
    result = _cli(str(path), "--html", str(out))
    assert result.returncode == 0, result.stderr
    data = _page_json(out.read_text())
    assert data["crc"]["valid"] is True
    assert data["panes"][1]["title"].startswith("decompressed records (zstd")
