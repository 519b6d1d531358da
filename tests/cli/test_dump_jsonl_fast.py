"""``dump --jsonl`` on the fast path (columnar + the JSON-lines kernel) against the reference:
``iter_records`` with ``record_json`` and ``json.dumps``, the form of the corpus's .jsonl.

Generated logs of every magic and codec, with awkward header keys (quotes, backslashes,
control characters, DEL, non-ASCII and astral code points: json.dumps's ``ensure_ascii``
escapes, and runs of plain characters, which the kernel copies eight at a time) and keys and
values of every length modulo 6 (the kernel's base64 runs six bytes at a time, from loads of
eight); then the same logs mutated: the same lines byte for byte, the same errors, the same
tails, in every isolation and CRC mode.
"""

from __future__ import annotations

import base64
import io
import json
import struct

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kafka_format.runtime.cli.dump import DumpOptions, dump
from kafka_format.runtime.format.codecs import compress
from kafka_format.runtime.format.jsonform import record_json
from kafka_format.runtime.model import Report
from kafka_format.runtime.read.reader import iter_batches, iter_records
from kafka_format.runtime.write.generate import generate_log_dir
from kafka_format.schemas.legacy_message import build_legacy_message
from kafka_format.schemas.record import build_records
from kafka_format.schemas.record_batch import build_record_batch

TS0 = 1_700_000_000_000

payloads = st.one_of(st.none(), st.binary(max_size=40))
# Up to 24 characters: the kernel takes eight plain ones at a time, the rest one by one.
header_keys = st.one_of(
    st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=24),
    st.text(alphabet='"\\\n\r\t\b\f\x00\x1f\x7f\x80é€😀 ~/', max_size=24),
    st.text(alphabet="abcdefgh-_.~ !", max_size=24),
)
headers = st.lists(st.tuples(header_keys, payloads), max_size=3)


@st.composite
def v2_batch(draw, base_offset: int) -> tuple[bytes, int]:
    n = draw(st.integers(0, 5))
    codec = draw(st.sampled_from((0, 1, 2, 3, 4)))
    if codec and n == 0:
        n = 1
    records = [
        {
            "key": draw(payloads),
            "value": draw(payloads),
            "headers": draw(headers),
            "offset_delta": i,
            "timestamp_delta": draw(st.integers(-5000, 5000)),
        }
        for i in range(n)
    ]
    transactional = draw(st.booleans())
    common = {
        "base_offset": base_offset,
        "base_timestamp": TS0 + draw(st.integers(-(10**6), 10**6)),
        "timestamp_type": draw(st.sampled_from((0, 1))),
        "codec": codec,
        "producer_id": draw(st.integers(0, 2)) if transactional else -1,
        "producer_epoch": 0 if transactional else -1,
        "is_transactional": transactional,
    }
    if codec:
        data = build_record_batch(
            compressed_payload=compress(codec, build_records(records), magic=2),
            records_count=n,
            last_offset_delta=n - 1,
            **common,
        )
    else:
        data = build_record_batch(records, **common)
    return data, max(n, 1)


@st.composite
def legacy_entry(draw, base_offset: int) -> tuple[bytes, int]:
    magic = draw(st.sampled_from((0, 1)))
    codec = draw(st.sampled_from((0, 1, 2, 3)))
    ts_type = draw(st.sampled_from((0, 1))) if magic else 0

    def ts():
        return TS0 + draw(st.integers(-(10**6), 10**6)) if magic else None

    if not codec:
        entry = build_legacy_message(
            offset=base_offset,
            key=draw(payloads),
            value=draw(payloads),
            magic=magic,
            timestamp=ts(),
            timestamp_type=ts_type,
        )
        return entry, 1
    n = draw(st.integers(1, 4))
    # Now and then an inner message of the other magic (KAFKA-4298's logs, sarama).
    inner_magics = [draw(st.sampled_from((magic, magic, 1 - magic))) for _ in range(n)]
    inner = b"".join(
        build_legacy_message(
            offset=i if magic else base_offset + i,
            key=draw(payloads),
            value=draw(payloads),
            magic=inner_magic,
            timestamp=TS0 + draw(st.integers(-(10**6), 10**6)) if inner_magic else None,
        )
        for i, inner_magic in enumerate(inner_magics)
    )
    value = compress(codec, inner, magic=magic, kafka08_checksum=magic == 0 and codec == 3)
    wrapper = build_legacy_message(
        offset=base_offset + n - 1,
        value=value,
        magic=magic,
        timestamp=ts(),
        codec=codec,
        timestamp_type=ts_type,
    )
    return wrapper, n


def _marker(offset: int, pid: int, commit: bool) -> bytes:
    key = struct.pack(">hh", 0, 1 if commit else 0)
    value = struct.pack(">hi", 0, 5)
    return build_record_batch(
        [{"key": key, "value": value}],
        base_offset=offset,
        producer_id=pid,
        producer_epoch=0,
        is_transactional=True,
        is_control=True,
    )


@st.composite
def logs(draw) -> bytes:
    parts = []
    offset = draw(st.integers(0, 10**6))
    for _ in range(draw(st.integers(1, 6))):
        kind = draw(st.sampled_from(("v2", "v2", "legacy", "marker")))
        if kind == "marker":
            parts.append(_marker(offset, draw(st.integers(0, 2)), draw(st.booleans())))
            used = 1
        else:
            data, used = draw(v2_batch(offset) if kind == "v2" else legacy_entry(offset))
            parts.append(data)
        offset += used
    return b"".join(parts)


@st.composite
def damaged_logs(draw) -> bytes:
    data = bytearray(draw(logs()))
    for _ in range(draw(st.integers(1, 4))):
        how = draw(st.sampled_from(("flip", "byte", "cut", "length")))
        at = draw(st.integers(0, len(data) - 1))
        if how == "flip":
            data[at] ^= 1 << draw(st.integers(0, 7))
        elif how == "byte":
            data[at] = draw(st.sampled_from((0x00, 0x01, 0x7F, 0x80, 0xFE, 0xFF)))
        elif how == "cut":
            del data[at:]
        elif at + 4 <= len(data):
            data[at : at + 4] = struct.pack(">i", draw(st.integers(-(2**31), 2**31 - 1)))
        if not data:
            data = bytearray(b"\0")
    return bytes(data)


MS_MAX = (2**63 - 1) // 1000  # the largest millisecond timestamp Arrow's microseconds hold


def _arrow_json(record) -> dict:
    """``record_json``, with a timestamp Arrow cannot hold null, as every Arrow reader has it."""
    line = record_json(record)
    if line["timestamp"] is not None and not -MS_MAX <= line["timestamp"] <= MS_MAX:
        line["timestamp"] = None
    return line


def reference_jsonl(path: str, isolation: str, verify_crc: bool) -> tuple[str, Report, int]:
    """What ``dump --jsonl`` prints, the damage it reports, and how many timestamps it must
    print null (as every Arrow reader; ``Report.timestamps_out_of_range``)."""
    report = Report()
    records = iter_records(
        path, isolation=isolation, verify_crc=verify_crc, errors="skip", report=report
    )
    records = list(records)
    lines = "".join(json.dumps(_arrow_json(r), separators=(",", ":")) + "\n" for r in records)
    far = [r for r in records if r.timestamp is not None and _arrow_json(r)["timestamp"] is None]
    return lines, report, len(far)


def fast_jsonl(path: str, isolation: str, verify_crc: bool) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    options = DumpOptions(jsonl=True, isolation=isolation, verify_crc=verify_crc, quiet=True)
    status = dump([path], options, out=out, err=err)
    return status, out.getvalue(), err.getvalue()


def canonical(out: str) -> tuple[str, list[dict]]:
    """The lines without the keys saying where each record was (``topic``, ``partition``,
    ``file``, ``position``, written after the canonical ones), and those keys."""
    lines, wheres = [], []
    for line in out.splitlines():
        cut = line.rindex(',"topic":')
        lines.append(line[:cut] + "}\n")
        wheres.append(json.loads("{" + line[cut + 1 :]))
    return "".join(lines), wheres


def reference_where(path: str, verify_crc: bool) -> dict[int, list[dict]]:
    """Where each record of the log is, by offset, from the reference reader's batches."""
    found: dict[int, list[dict]] = {}
    for batch in iter_batches(path, verify_crc=verify_crc, errors="skip"):
        if batch.is_control:
            continue
        where = {"topic": None, "partition": None, "file": path, "position": batch.position}
        for record in batch.records or ():
            found.setdefault(record.offset, []).append(where)
    return found


def check_same(tmp_path, data: bytes, isolation: str, verify_crc: bool) -> None:
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(data)
    want_out, report, nulls = reference_jsonl(str(path), isolation, verify_crc)
    status, out, err = fast_jsonl(str(path), isolation, verify_crc)
    printed, wheres = canonical(out)
    assert printed == want_out
    # Each line names the batch its record came from.
    expected = reference_where(str(path), verify_crc)
    offsets = [json.loads(line)["offset"] for line in printed.splitlines()]
    for offset, where in zip(offsets, wheres, strict=True):
        assert where in expected[offset]
    errors = [line for line in err.splitlines() if line.startswith("error: ")]
    # The same batches named, in order: file, position and base offset (the reason's wording
    # may differ between the decoders).
    assert [_where(line) for line in errors] == [_where(f"error: {e}") for e in report.errors]
    tails = [line for line in err.splitlines() if line.startswith("Found ")]
    assert tails == [
        f"Found {t.size} invalid bytes at the end of {t.file}" for t in report.truncated
    ]
    assert status == (1 if report.errors else 0)
    warnings = [line for line in err.splitlines() if line.startswith("warning: ")]
    assert len(warnings) == (1 if nulls else 0)
    if nulls:
        assert f"{nulls} record(s)" in warnings[0]


def _where(line: str) -> str:
    return line.split(": ", 2)[1]


SETTINGS = settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)


@SETTINGS
@given(
    data=logs(),
    isolation=st.sampled_from(("read_uncommitted", "read_committed")),
)
def test_generated_logs_same_lines_as_the_reference(tmp_path, data, isolation):
    check_same(tmp_path, data, isolation, True)


@settings(
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    data=damaged_logs(),
    isolation=st.sampled_from(("read_uncommitted", "read_committed")),
    verify_crc=st.booleans(),
)
def test_damaged_logs_same_lines_and_errors_as_the_reference(tmp_path, data, isolation, verify_crc):
    check_same(tmp_path, data, isolation, verify_crc)


def test_timestamps_arrow_cannot_hold_are_null_and_offsets_past_int64_are_damage(tmp_path):
    """A timestamp beyond Arrow's microseconds: printed null, one warning line, status 0; an
    offset past int64: damage, as the reference reads it (in a segment, the batch's offsets
    lie beyond what its indexes can hold first: ``read/segment_offsets.py``)."""
    far = 2**62  # milliseconds: 2**62 * 1000 overflows int64 microseconds
    parts = [
        build_record_batch([{"value": b"before"}], base_offset=0, base_timestamp=TS0),
        build_record_batch([{"value": b"far"}], base_offset=1, base_timestamp=far),
        build_record_batch(
            [{"value": b"a"}, {"value": b"b", "offset_delta": 10}],
            base_offset=2**63 - 5,
            base_timestamp=TS0,
        ),
        build_record_batch([{"value": b"after"}], base_offset=3, base_timestamp=TS0),
    ]
    data = b"".join(parts)
    check_same(tmp_path, data, "read_uncommitted", True)
    log = str(tmp_path / "00000000000000000000.log")
    status, out, err = fast_jsonl(log, "read_uncommitted", True)
    rows = [json.loads(line) for line in out.splitlines()]
    assert [r["offset"] for r in rows] == [0, 1, 3]
    assert rows[1]["timestamp"] is None
    error, warning = err.splitlines()
    # At the batch, whose header's offsets its segment cannot hold.
    assert error.startswith(f"error: {log} @{len(parts[0]) + len(parts[1])} ")
    assert "the indexes cannot hold it" in error
    assert warning.startswith("warning: 1 record(s) in 1 batch(es)")
    assert f"{log} @{len(parts[0])}, offset 1" in warning
    assert status == 1  # the damage; the null timestamp alone leaves it 0


def test_header_keys_escaped_as_json_dumps_escapes_them(tmp_path):
    keys = ['"', "\\", "\n\r\t\b\f", "\x00\x1f\x7f", "é€", "😀", "plain"]
    data = build_record_batch(
        [{"value": b"v", "headers": [(k, b"x" * i) for i, k in enumerate(keys)]}]
    )
    check_same(tmp_path, data, "read_uncommitted", True)
    _, out, _ = fast_jsonl(str(tmp_path / "00000000000000000000.log"), "read_uncommitted", True)
    assert [h["key"] for h in json.loads(out)["headers"]] == keys
    assert "\\ud83d\\ude00" in out and "\\u007f" in out


def test_a_magic_0_message_in_a_magic_1_create_time_wrapper_has_no_timestamp(tmp_path):
    """Kafka reads it (DeepRecordsIterator): no timestamp, NO_TIMESTAMP_TYPE."""
    inner = build_legacy_message(offset=0, value=b"old", magic=0) + build_legacy_message(
        offset=1, value=b"new", magic=1, timestamp=TS0
    )
    wrapper = build_legacy_message(
        offset=10, value=compress(1, inner, magic=1), magic=1, codec=1, timestamp=TS0
    )
    before = build_legacy_message(offset=8, value=b"x", magic=1, timestamp=TS0)
    after = build_legacy_message(offset=11, value=b"y", magic=1, timestamp=TS0)
    check_same(tmp_path, before + wrapper + after, "read_uncommitted", True)
    status, out, err = fast_jsonl(
        str(tmp_path / "00000000000000000000.log"), "read_uncommitted", True
    )
    rows = [json.loads(line) for line in out.splitlines()]
    assert [(r["offset"], r["timestamp"], r["timestampType"]) for r in rows] == [
        (8, TS0, 0),
        (9, None, -1),
        (10, TS0, 0),
        (11, TS0, 0),
    ]
    assert (status, err) == (0, "")


def test_an_aborted_batch_arrow_cannot_hold_is_dropped_under_read_committed(tmp_path):
    far = 2**62
    txn = {"producer_id": 1, "producer_epoch": 0, "is_transactional": True}
    data = (
        build_record_batch([{"value": b"aborted"}], base_offset=0, base_timestamp=far, **txn)
        + build_record_batch([{"value": b"plain"}], base_offset=1, base_timestamp=TS0)
        + _marker(2, 1, commit=False)
    )
    for isolation, values in (("read_committed", ["plain"]), ("read_uncommitted", None)):
        check_same(tmp_path, data, isolation, True)
        status, out, err = fast_jsonl(str(tmp_path / "00000000000000000000.log"), isolation, True)
        rows = [json.loads(line) for line in out.splitlines()]
        if values is not None:
            assert [base64.b64decode(r["value"]).decode() for r in rows] == values
            assert (status, err) == (0, "")  # the dropped batch's timestamp is no one's concern
        else:
            assert rows[0]["timestamp"] is None and len(rows) == 2
            assert status == 0 and err.startswith("warning: 1 record(s)")


def test_a_directory_of_small_segments_same_lines_as_the_reference(tmp_path):
    """Small segments are decoded together (``read/grouped.py``) and each file's record
    batches are slices of one chunk: every line, and where it says its record was, is the
    reference's."""
    root = tmp_path / "logs"
    generate_log_dir(root, seed=13, records=300, segment_bytes=8192)
    assert len(list(root.glob("*/*.log"))) > 20
    want_out, report, _ = reference_jsonl(str(root), "read_uncommitted", True)
    status, out, _ = fast_jsonl(str(root), "read_uncommitted", True)
    printed, wheres = canonical(out)
    assert status == 0 and not report.errors
    assert printed == want_out
    expected: dict[int, list[dict]] = {}
    for batch in iter_batches(str(root), errors="skip"):
        where = {
            "topic": batch.topic,
            "partition": batch.partition,
            "file": batch.file,
            "position": batch.position,
        }
        for record in batch.records or ():
            expected.setdefault(record.offset, []).append(where)
    offsets = [json.loads(line)["offset"] for line in printed.splitlines()]
    for offset, where in zip(offsets, wheres, strict=True):
        assert where in expected[offset]
