"""The fast path and the reference path agree, on the bytes where they used to part.

Every input is built here from its own bytes (``struct``, ``gzip``, ``zlib.crc32``,
kafka-python's CRC-32C and ``LegacyRecordBatchBuilder``), then read four ways: ``iter_records``
(the generated parsers), ``read_table`` (numba into Arrow), ``dump --jsonl`` (in process) and
``verify_paths``. They must give the same rows (a timestamp Arrow's microseconds cannot hold is
null in Arrow, and reported) and name the same damage at the same byte position.

Kafka's rules, from its sources (``clients/.../record/``):

- ``AbstractLegacyRecordBatch.DeepRecordsIterator`` (constructor): a magic 1 inner message gets
  the wrapper's timestamp and type; a magic 0 one does not, and ``LegacyRecord.timestamp()`` /
  ``timestampType(magic, wrapperType, attributes)`` give it NO_TIMESTAMP / NO_TIMESTAMP_TYPE. A
  v1 wrapper offset of 0 keeps the inner offsets; one below the last inner offset is "Found
  invalid wrapper offset in compressed v1 message set, ...".
- An offset past int64 is no offset Kafka can hold: damage, on every path.
"""

from __future__ import annotations

import gzip
import io
import json
import struct
import zlib
from contextlib import redirect_stderr, redirect_stdout

import lz4.frame
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kafka.record.legacy_records import LegacyRecordBatch, LegacyRecordBatchBuilder
from kafka.record.util import calc_crc32c

from kafka_format.runtime.analysis.verify import verify_paths
from kafka_format.runtime.cli import main
from kafka_format.runtime.format.jsonform import record_json
from kafka_format.runtime.model import Report
from kafka_format.runtime.read.columnar import read_table
from kafka_format.runtime.read.reader import iter_records

TS0 = 1_700_000_000_000
I64_MAX = 2**63 - 1
MS_MAX = I64_MAX // 1000  # the largest millisecond timestamp Arrow's microseconds hold
GZIP = 1
LOG_APPEND = 0x08


# --- bytes ------------------------------------------------------------------------------------


def message(
    offset: int,
    value: bytes | None,
    *,
    magic: int = 1,
    timestamp: int = TS0,
    attributes: int = 0,
    key: bytes | None = None,
) -> bytes:
    """A v0/v1 log entry (``LegacyRecord.write``): offset, size, CRC-32 of magic..end."""
    body = struct.pack(">bb", magic, attributes)
    if magic == 1:
        body += struct.pack(">q", timestamp)
    for field in (key, value):
        body += struct.pack(">i", -1) if field is None else struct.pack(">i", len(field)) + field
    crc = zlib.crc32(body)
    return struct.pack(">qiI", offset, len(body) + 4, crc) + body


def wrapper(offset: int, inner: bytes, *, magic: int = 1, log_append: bool = False, **kw) -> bytes:
    attributes = GZIP | (LOG_APPEND if log_append else 0)
    return message(offset, gzip.compress(inner), magic=magic, attributes=attributes, **kw)


def _zigzag(n: int) -> bytes:
    raw = (n << 1) ^ (n >> 63)
    raw &= (1 << 64) - 1
    out = bytearray()
    while raw >= 0x80:
        out.append((raw & 0x7F) | 0x80)
        raw >>= 7
    out.append(raw)
    return bytes(out)


def v2_batch(
    base_offset: int,
    records: list[tuple[int, int, bytes]],
    *,
    base_timestamp: int = TS0,
    max_timestamp: int | None = None,
    log_append: bool = False,
    codec: int = 0,
) -> bytes:
    """A v2 batch (``DefaultRecordBatch``) of (offset delta, timestamp delta, value) records,
    its records compressed with gzip (codec 1) or LZ4 frames (codec 3)."""
    payload = b""
    for delta, ts_delta, value in records:
        body = (
            b"\0"
            + _zigzag(ts_delta)
            + _zigzag(delta)
            + _zigzag(-1)
            + _zigzag(len(value))
            + value
            + _zigzag(0)
        )
        payload += _zigzag(len(body)) + body
    if codec:
        payload = gzip.compress(payload) if codec == GZIP else lz4.frame.compress(payload)
    last_delta = max((d for d, _, _ in records), default=0)
    if max_timestamp is None:
        max_timestamp = base_timestamp + max((t for _, t, _ in records), default=0)
    after_crc = (
        struct.pack(
            ">hiqqqhii",
            (LOG_APPEND if log_append else 0) | codec,
            last_delta,
            base_timestamp,
            max_timestamp,
            -1,
            -1,
            -1,
            len(records),
        )
        + payload
    )
    head = struct.pack(">ibI", 0, 2, calc_crc32c(after_crc))
    return struct.pack(">qi", base_offset, len(head) + len(after_crc)) + head + after_crc


# --- the four readers -------------------------------------------------------------------------


def _arrow_millis(ms: int | None) -> int | None:
    """A timestamp as Arrow holds it: null where its microseconds do not fit an int64."""
    return None if ms is None or not -MS_MAX <= ms <= MS_MAX else ms


def read_all(tmp_path, data: bytes) -> dict:
    """What every path makes of ``data`` (skip mode): rows, damage, notes. The file is named
    as no segment: the offsets these batches hold are not judged against a segment's base
    offset (``read/segment_offsets.py``), only the batches themselves."""
    path = tmp_path / "batches.log"
    path.write_bytes(data)
    ref_report = Report()
    records = list(iter_records(str(path), errors="skip", report=ref_report))
    fast_report = Report()
    table = read_table(str(path), errors="skip", report=fast_report)
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        status = main(["dump", "--jsonl", "--canonical", str(path)])
    verified = verify_paths([str(path)])
    return {
        "path": str(path),
        "records": records,
        "reference_errors": ref_report.errors,
        # Microseconds as integers: Python's datetime stops at years 1 and 9999.
        "table": table.set_column(
            5, "timestamp", table.column("timestamp").cast(pa.int64())
        ).to_pylist(),
        "fast_errors": fast_report.errors,
        "notes": fast_report.timestamps_out_of_range,
        "jsonl": [json.loads(line) for line in out.getvalue().splitlines()],
        "stderr": err.getvalue().splitlines(),
        "status": status,
        "verify": [
            (p.position, p.base_offset, p.message) for p in verified.errors if p.check == "batch"
        ],
    }


def assert_agree(got: dict) -> None:
    """The same rows, damage and notes on every path."""
    records = got["records"]
    # Arrow: the reference's rows, a timestamp it cannot hold null.
    want_rows = [
        (r.offset, _arrow_millis(r.timestamp), r.timestamp_type, r.key, r.value) for r in records
    ]
    for row in got["table"]:
        if row["timestamp"] is not None:
            assert row["timestamp"] % 1000 == 0
            row["timestamp"] //= 1000
    rows = [
        (row["offset"], row["timestamp"], row["timestampType"], row["key"], row["value"])
        for row in got["table"]
    ]
    assert rows == want_rows
    reference = [str(e) for e in got["reference_errors"]]
    assert [str(e) for e in got["fast_errors"]] == reference
    # dump --jsonl: iter_records' lines, with the same nulls; the damage in the same words.
    want_lines = []
    for r in records:
        line = record_json(r)
        line["timestamp"] = _arrow_millis(r.timestamp)
        want_lines.append(line)
    assert got["jsonl"] == want_lines
    errors = [line for line in got["stderr"] if line.startswith("error: ")]
    assert errors == [f"error: {e}" for e in reference]
    assert got["status"] == (1 if reference else 0)
    # Notes: one per batch with such records, and the dump's one stderr line.
    far = [r for r in records if r.timestamp is not None and _arrow_millis(r.timestamp) is None]
    assert sum(n.count for n in got["notes"]) == len(far)
    warnings = [line for line in got["stderr"] if line.startswith("warning: ")]
    if far:
        assert got["notes"][0].first_offset == far[0].offset
        (warning,) = warnings
        assert f"{len(far)} record(s)" in warning
    else:
        assert warnings == []
    # verify: the same damage, at the same position, in the same words.
    damage = got["verify"]
    want = [(e.position, e.base_offset, e.reason) for e in got["reference_errors"]]
    assert damage == want


# --- legacy wrappers --------------------------------------------------------------------------


@pytest.mark.parametrize("log_append", [False, True])
def test_magic_0_messages_in_a_magic_1_wrapper_have_no_timestamp(tmp_path, log_append):
    """KAFKA-4298's down-converted logs (and sarama) put magic 0 messages in v1 wrappers: Kafka
    reads them with no timestamp and NO_TIMESTAMP_TYPE, whatever the wrapper's type."""
    inner = message(0, b"old", magic=0) + message(1, b"new", timestamp=TS0 + 5)
    data = (
        message(8, b"before")
        + wrapper(10, inner, log_append=log_append, timestamp=TS0 + 9)
        + message(11, b"after")
    )
    got = read_all(tmp_path, data)
    assert_agree(got)
    stamps = [(r.offset, r.timestamp, r.timestamp_type) for r in got["records"]]
    new = (10, TS0 + 9, 1) if log_append else (10, TS0 + 5, 0)
    assert stamps == [(8, TS0, 0), (9, None, -1), new, (11, TS0, 0)]
    assert got["reference_errors"] == [] and got["verify"] == []


def test_magic_1_messages_in_a_magic_0_wrapper_keep_their_own_timestamp(tmp_path):
    """A magic 0 wrapper has NO_TIMESTAMP_TYPE: its magic 1 inner messages keep their own
    timestamp (``LegacyRecord.timestamp``, not LogAppendTime), with the wrapper's type."""
    inner = message(5, b"a", timestamp=TS0 + 1) + message(6, b"b", magic=0)
    got = read_all(tmp_path, wrapper(6, inner, magic=0))
    assert_agree(got)
    assert [(r.offset, r.timestamp, r.timestamp_type) for r in got["records"]] == [
        (5, TS0 + 1, -1),
        (6, None, -1),
    ]


def test_a_wrapper_offset_below_its_last_inner_offset_is_rejected_as_kafka_does(tmp_path):
    inner = message(0, b"a") + message(1, b"b") + message(7, b"c")
    before = message(3, b"before")
    data = before + wrapper(5, inner) + message(9, b"after")
    got = read_all(tmp_path, data)
    assert_agree(got)
    (error,) = got["reference_errors"]
    assert error.position == len(before)
    assert error.reason == (
        "Found invalid wrapper offset in compressed v1 message set, wrapper offset '5' is less "
        "than the last inner message offset '7' and it is not zero."
    )
    assert [r.offset for r in got["records"]] == [3, 9]


def _kafka_python_wrapper(offsets: list[int], wrapper_offset: int | None) -> bytes:
    builder = LegacyRecordBatchBuilder(magic=1, compression_type=GZIP, batch_size=1 << 20)
    for i, offset in enumerate(offsets):
        builder.append(offset, timestamp=TS0 + i, key=None, value=b"v%d" % i)
    data = bytearray(builder.build())
    if wrapper_offset is not None:  # the offset is outside the CRC
        data[:8] = struct.pack(">q", wrapper_offset)
    return bytes(data)


@pytest.mark.parametrize("wrapper_offset", [None, 2, 100, 2**40])
def test_wrapper_offsets_as_kafka_python_reads_them(tmp_path, wrapper_offset):
    """kafka-python writes wrappers at offset 0 (as librdkafka): the inner offsets stand;
    at W >= last inner offset they are shifted by W - last. kafka-python reads both so."""
    data = _kafka_python_wrapper([0, 1, 2], wrapper_offset)
    got = read_all(tmp_path, data)
    assert_agree(got)
    oracle = [r.offset for r in LegacyRecordBatch(data, 1)]
    assert [r.offset for r in got["records"]] == oracle
    assert oracle == (
        [0, 1, 2] if not wrapper_offset else [wrapper_offset - 2 + i for i in range(3)]
    )


def test_a_wrapper_whose_offsets_pass_int64_is_damage(tmp_path):
    inner = message(5, b"a") + message(0, b"b")  # out of order: 2^63-1 - 0 + 5 overflows
    got = read_all(tmp_path, message(1, b"x") + wrapper(I64_MAX, inner))
    assert_agree(got)
    (error,) = got["reference_errors"]
    assert error.reason == (
        f"offset overflow: wrapper offset {I64_MAX} - last inner offset 0 + inner offset 5 "
        "exceeds 2^63-1"
    )


# --- v2 and uncompressed v1: values Arrow cannot hold -----------------------------------------


def test_a_timestamp_arrow_cannot_hold_is_null_and_reported(tmp_path):
    far = 2**62
    parts = [
        v2_batch(0, [(0, 0, b"before")]),
        v2_batch(1, [(0, 0, b"far"), (1, -far, b"near")], base_timestamp=far),
        message(3, b"legacy", timestamp=-far),
        v2_batch(4, [(0, 0, b"after")]),
    ]
    got = read_all(tmp_path, b"".join(parts))
    assert_agree(got)
    assert [r.timestamp for r in got["records"]] == [TS0, far, 0, -far, TS0]
    assert [row["timestamp"] is None for row in got["table"]] == [False, True, False, True, False]
    at = [sum(map(len, parts[:i])) for i in range(len(parts))]
    assert [(n.position, n.first_offset, n.count) for n in got["notes"]] == [
        (at[1], 1, 1),
        (at[2], 3, 1),
    ]
    assert got["status"] == 0 and got["verify"] == []


def test_an_offset_past_int64_is_damage_on_every_path(tmp_path):
    first = v2_batch(0, [(0, 0, b"before")])
    data = (
        first
        + v2_batch(I64_MAX - 5, [(0, 0, b"a"), (10, 0, b"b")])  # the first takes 8 bytes
        + v2_batch(1, [(0, 0, b"after")])
    )
    got = read_all(tmp_path, data)
    assert_agree(got)
    (error,) = got["reference_errors"]
    # Named at the record that overflows (an uncompressed batch: its byte in the file).
    assert error.position == len(first) + 61 + 8
    assert error.reason == (
        f"offset overflow: base offset {I64_MAX - 5} + offset delta 10 exceeds 2^63-1"
    )
    assert [r.offset for r in got["records"]] == [0, 1]


@pytest.mark.parametrize("codec", [GZIP, 3])
def test_compressed_batches_agree_on_offsets_and_timestamps(tmp_path, codec):
    """Decompressed in Python (gzip) or in the kernel (LZ4): the same nulls, the same damage
    at the same byte of the decompressed records."""
    far = -(2**62)
    data = (
        v2_batch(0, [(0, 0, b"a"), (1, far, b"b")], codec=codec)
        + v2_batch(I64_MAX - 1, [(0, 0, b"c"), (1, 0, b"d"), (2, 0, b"e")], codec=codec)
        + v2_batch(2, [(0, 0, b"f")], codec=codec, base_timestamp=far)
    )
    got = read_all(tmp_path, data)
    assert_agree(got)
    (error,) = got["reference_errors"]
    # A compressed batch: named at the batch, the record's byte in its decompressed records.
    assert error.position == len(data) - len(v2_batch(2, [(0, 0, b"f")], codec=codec)) - len(
        v2_batch(I64_MAX - 1, [(0, 0, b"c"), (1, 0, b"d"), (2, 0, b"e")], codec=codec)
    )
    assert error.reason.endswith(
        "+ offset delta 2 exceeds 2^63-1 (in the decompressed records at byte 16)"
    )
    assert [(n.first_offset, n.count) for n in got["notes"]] == [(1, 1), (2, 1)]


SETTINGS = settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
near = st.one_of(
    st.integers(-(2**63), I64_MAX),
    st.sampled_from([0, 1, -1, MS_MAX, MS_MAX + 1, -MS_MAX, -MS_MAX - 1, I64_MAX, -(2**63)]),
    st.integers(MS_MAX - 3, MS_MAX + 3),
    st.integers(I64_MAX - 20, I64_MAX),
)


@SETTINGS
@given(
    base_offset=near,
    base_ts=near,
    max_ts=near,
    log_append=st.booleans(),
    records=st.lists(st.tuples(st.integers(-(2**31), 2**31 - 1), near), min_size=1, max_size=4),
    legacy_ts=near,
)
def test_values_near_the_limits_agree(
    tmp_path, base_offset, base_ts, max_ts, log_append, records, legacy_ts
):
    data = (
        v2_batch(0, [(0, 0, b"first")])
        + v2_batch(
            base_offset,
            [(d, t, b"r%d" % i) for i, (d, t) in enumerate(records)],
            base_timestamp=base_ts,
            max_timestamp=max_ts,
            log_append=log_append,
        )
        + message(7, b"legacy", timestamp=legacy_ts)
        + wrapper(9, message(0, b"in", timestamp=legacy_ts) + message(1, b"v0", magic=0))
    )
    assert_agree(read_all(tmp_path, data))


@pytest.mark.parametrize(
    ("wrapper_offset", "inner_offsets"),
    [
        (0, [-3, -1]),
        (12, [2, 0, 1]),
        (-5, [-7, -6]),
        (-5, [-7, -4]),  # below the last inner offset
        (I64_MAX, [-2, -1]),  # W - L = 2^63: every offset still fits
        (I64_MAX, [-1, -2]),  # the first does not
        (I64_MAX, [-(2**63), -(2**63)]),
        (-1, [-(2**63), -(2**63)]),
        (-1, [0, -(2**63)]),
        (5, [I64_MAX, 5]),
    ],
)
def test_wrapper_offsets_at_the_limits_agree(tmp_path, wrapper_offset, inner_offsets):
    inner = b"".join(message(o, b"i%d" % i) for i, o in enumerate(inner_offsets))
    assert_agree(read_all(tmp_path, message(0, b"x") + wrapper(wrapper_offset, inner)))


@SETTINGS
@given(
    wrapper_offset=near,
    inner_offsets=st.lists(near, min_size=1, max_size=3),
    inner_magic=st.lists(st.sampled_from((0, 1)), min_size=3, max_size=3),
    timestamps=st.lists(near, min_size=4, max_size=4),
    log_append=st.booleans(),
)
def test_wrappers_near_the_limits_agree(
    tmp_path, wrapper_offset, inner_offsets, inner_magic, timestamps, log_append
):
    inner = b"".join(
        message(o, b"i%d" % i, magic=inner_magic[i], timestamp=timestamps[i])
        for i, o in enumerate(inner_offsets)
    )
    data = wrapper(wrapper_offset, inner, log_append=log_append, timestamp=timestamps[3])
    assert_agree(read_all(tmp_path, data))


def test_an_inner_message_below_the_minimum_length_is_named_at_its_wrapper(tmp_path):
    """Damage among a wrapper's inner messages: at the wrapper (the file holds no byte of
    it), the byte in the decompressed messages named in the words; the same on every path."""
    first = message(0, b"a")
    broken = bytearray(message(1, b"b"))
    struct.pack_into(">i", broken, 8, 9)  # a length below LegacyRecord's minimum (14)
    before = message(3, b"before")
    data = before + wrapper(5, first + bytes(broken)) + message(9, b"after")
    got = read_all(tmp_path, data)
    assert_agree(got)
    (error,) = got["reference_errors"]
    assert error.position == len(before)
    assert error.reason == (
        "batch length 9 is less than the minimum record overhead (14) "
        f"(in the decompressed messages at byte {len(first)})"
    )
    assert [r.offset for r in got["records"]] == [3, 9]


@pytest.mark.parametrize("codec", [0, GZIP, 3])
def test_a_record_count_above_the_records_is_named_at_the_record(tmp_path, codec):
    """DefaultRecordBatch's "premature EOF" for a count the records do not fill: the count
    lies, so at the batch; the same words and place on every path."""
    first = v2_batch(0, [(0, 0, b"before")])
    lying = bytearray(v2_batch(1, [(0, 0, b"a"), (1, 0, b"b")], codec=codec))
    struct.pack_into(">i", lying, 57, 3)
    lying[17:21] = struct.pack(">I", calc_crc32c(bytes(lying[21:])))
    data = first + bytes(lying) + v2_batch(3, [(0, 0, b"after")])
    got = read_all(tmp_path, data)
    assert_agree(got)
    (error,) = got["reference_errors"]
    cause = "Incorrect declared batch size, premature EOF reached: 3 records declared, the "
    cause += "records end after 2"
    # The count lies (a header field): at the batch, compressed or not.
    assert error.position == len(first)
    assert error.reason == cause
    assert [r.offset for r in got["records"]] == [0, 3]
