"""Bytes built with the Construct schemas parse back to what was built, three ways.

Property tests (hypothesis): every format is built from generated values with the Construct
builders, then parsed by the interpreted Construct schema, by the compiled parser loaded from
generated/construct_compiled, and by the Kaitai-generated parser (generated/kaitai), an
independent implementation of the same format from the .ksy files. All three must give back
the values that were built. Independent checks of the bytes themselves: lengths and CRCs are
recomputed here with zlib / crc32c over the byte ranges Kafka documents.
"""

from __future__ import annotations

import zlib
from io import BytesIO

from construct import Container
from crc32c import crc32c
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from kaitaistruct import KaitaiStream

from kafka_format.generated.kaitai.control_record_key import ControlRecordKey as KControlKey
from kafka_format.generated.kaitai.end_txn_marker import EndTxnMarker as KEndTxnMarker
from kafka_format.generated.kaitai.legacy_message import LegacyMessage as KLegacyMessage
from kafka_format.generated.kaitai.offset_index import OffsetIndex as KOffsetIndex
from kafka_format.generated.kaitai.producer_snapshot import ProducerSnapshot as KSnapshot
from kafka_format.generated.kaitai.record_batch import RecordBatch as KRecordBatch
from kafka_format.generated.kaitai.record_list import RecordList as KRecordList
from kafka_format.generated.kaitai.record_set import RecordSet as KRecordSet
from kafka_format.generated.kaitai.time_index import TimeIndex as KTimeIndex
from kafka_format.generated.kaitai.txn_index import TxnIndex as KTxnIndex
from kafka_format.generated.kaitai.varint import Varint as KVarint
from kafka_format.schemas import compiled
from kafka_format.schemas.control_record_key import build_control_record_key
from kafka_format.schemas.end_txn_marker import build_end_txn_marker
from kafka_format.schemas.legacy_message import build_legacy_message
from kafka_format.schemas.offset_index import build_offset_index
from kafka_format.schemas.producer_snapshot import build_producer_snapshot
from kafka_format.schemas.record import build_records
from kafka_format.schemas.record_batch import build_record_batch
from kafka_format.schemas.record_set import build_record_set
from kafka_format.schemas.time_index import build_time_index
from kafka_format.schemas.txn_index import build_txn_index
from kafka_format.schemas.varint import encode_zigzag

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _ints(bits: int) -> st.SearchStrategy[int]:
    return st.integers(-(1 << (bits - 1)), (1 << (bits - 1)) - 1)


int8, int16, int32, int64 = _ints(8), _ints(16), _ints(32), _ints(64)
blobs = st.none() | st.binary(max_size=40)
# hypothesis text spans the whole of Unicode (surrogates aside): non-ASCII keys are common
header_keys = st.text(max_size=12)
# the extremes need 10-byte varlongs; small values 1-byte ones
timestamp_deltas = st.one_of(int64, st.sampled_from([-(2**63), 2**63 - 1, -1, 0, 1, -(2**62)]))

record_specs = st.fixed_dictionaries(
    {
        "key": blobs,
        "value": blobs,
        "headers": st.lists(st.tuples(header_keys, blobs), max_size=4),
        "offset_delta": int32,
        "timestamp_delta": timestamp_deltas,
        "attributes": int8,
    }
)


def _parse3(name: str, kaitai_type, data: bytes, *kaitai_args, **context):
    """Interpreted and compiled Construct parses (which must agree) and the Kaitai parse."""
    interpreted = compiled.schema(name).parse(data, **context)
    assert compiled.parse(name, data, **context) == interpreted
    return interpreted, kaitai_type(*kaitai_args, KaitaiStream(BytesIO(data)))


def _opt(obj: object, field: str, length: int):
    return getattr(obj, field) if length >= 0 else None


def _records_view(records) -> list[tuple]:
    return [
        (
            r.attributes,
            r.timestamp_delta,
            r.offset_delta,
            r.key,
            r.value,
            [(h.key, h.value) for h in r.headers],
        )
        for r in records
    ]


def _kaitai_records_view(records) -> list[tuple]:
    out = []
    for r in records:
        b = r.body
        out.append(
            (
                b.attributes,
                b.timestamp_delta.value,
                b.offset_delta.value,
                _opt(b, "key", b.len_key.value),
                _opt(b, "value", b.len_value.value),
                [(h.key, _opt(h, "value", h.len_value.value)) for h in b.headers],
            )
        )
    return out


def _spec_view(specs: list[dict]) -> list[tuple]:
    return [
        (
            s["attributes"],
            s["timestamp_delta"],
            s["offset_delta"],
            s["key"],
            s["value"],
            [tuple(h) for h in s["headers"]],
        )
        for s in specs
    ]


HEADER_FIELDS = (
    "base_offset",
    "batch_length",
    "partition_leader_epoch",
    "magic",
    "crc",
    "last_offset_delta",
    "base_timestamp",
    "max_timestamp",
    "producer_id",
    "producer_epoch",
    "base_sequence",
    "records_count",
)


def _batch_view(c: Container) -> dict:
    view = {f: c[f] for f in HEADER_FIELDS}
    view["attributes"] = c.attributes & 0xFFFF
    view["flags"] = (
        int(c.compression),
        int(c.timestamp_type),
        c.is_transactional,
        c.is_control,
        c.has_delete_horizon,
    )
    view["records"] = None if c.records is None else _records_view(c.records)
    view["compressed_records"] = c.compressed_records
    return view


def _kaitai_batch_view(k: KRecordBatch) -> dict:
    view = {f: getattr(k, f) for f in HEADER_FIELDS}
    a = k.attributes
    compression, ts_type = int(a.compression), int(a.timestamp_type)
    view["attributes"] = (
        a.reserved << 7
        | a.has_delete_horizon << 6
        | a.is_control << 5
        | a.is_transactional << 4
        | ts_type << 3
        | compression
    )
    view["flags"] = (compression, ts_type, a.is_transactional, a.is_control, a.has_delete_horizon)
    view["records"] = _kaitai_records_view(k.records.records) if compression == 0 else None
    view["compressed_records"] = k.compressed_records if compression else None
    return view


batch_args = st.fixed_dictionaries(
    {
        "base_offset": int64,
        "partition_leader_epoch": int32,
        "base_timestamp": int64,
        "max_timestamp": int64,
        "producer_id": int64,
        "producer_epoch": int16,
        "base_sequence": int32,
        "timestamp_type": st.integers(0, 1),
        "is_transactional": st.booleans(),
        "is_control": st.booleans(),
        "has_delete_horizon": st.booleans(),
    },
    optional={"last_offset_delta": int32},
)


@st.composite
def batches(draw) -> tuple[dict, list[dict], dict]:
    """(builder keywords, record specs, what the header must then hold)."""
    args = draw(batch_args)
    # codec bits 0-7, where 5-7 are not Kafka codecs: the layout still follows "not none"
    codec = draw(st.integers(0, 7) | st.just(0))
    if draw(st.booleans()):
        # raw attributes, reserved bits 7-15 included (bits 0-2 still pick the layout)
        args["attributes"] = draw(int16.map(lambda a: (a & ~7) | codec))
    else:
        args["codec"] = codec
    specs = [] if codec else draw(st.lists(record_specs, max_size=6))
    if codec:
        args["compressed_payload"] = draw(st.binary(max_size=60))
        args["records_count"] = draw(st.integers(0, 2**31 - 1))
    return args, specs, codec


@SETTINGS
@given(batches())
@example(
    (
        {
            "base_offset": 2**63 - 1,
            "partition_leader_epoch": -1,
            "base_timestamp": -1,
            "max_timestamp": 0,
            "producer_id": -(2**63),
            "producer_epoch": -1,
            "base_sequence": -1,
            "timestamp_type": 1,
            "is_transactional": True,
            "is_control": True,
            "has_delete_horizon": True,
            "codec": 0,
        },
        [
            {
                "key": b"",
                "value": None,
                "headers": [("ключ-é-🙂", None), ("", b"")],
                "offset_delta": -(2**31),
                "timestamp_delta": -(2**63),
                "attributes": -128,
            }
        ],
        0,
    )
)
def test_record_batch_round_trip(case) -> None:
    args, specs, codec = case
    data = build_record_batch(specs, **args)
    ours, kaitai = _parse3("record_batch", KRecordBatch, data)

    # the bytes, checked without our parser
    assert len(data) == 12 + int.from_bytes(data[8:12], "big", signed=True)
    assert int.from_bytes(data[17:21], "big") == crc32c(data[21:])
    assert data[16] == 2

    view = _batch_view(ours)
    assert view == _kaitai_batch_view(kaitai)
    for field in ("base_offset", "partition_leader_epoch", "base_timestamp", "max_timestamp"):
        assert view[field] == args[field]
    assert (view["producer_id"], view["producer_epoch"], view["base_sequence"]) == (
        args["producer_id"],
        args["producer_epoch"],
        args["base_sequence"],
    )
    if "attributes" in args:
        assert ours.attributes == args["attributes"]
    else:
        assert view["flags"] == (
            codec,
            args["timestamp_type"],
            args["is_transactional"],
            args["is_control"],
            args["has_delete_horizon"],
        )
    assert view["crc"] == crc32c(data[21:])
    if codec:
        assert view["compressed_records"] == args["compressed_payload"]
        assert view["records_count"] == args["records_count"]
        assert view["records"] is None
    else:
        assert view["records"] == _spec_view(specs)
        assert view["records_count"] == len(specs)
        assert view["compressed_records"] is None
        # the payload alone, as the runtime parses it after decompression
        payload = build_records(specs)
        assert data[61:] == payload
        listed, klisted = _parse3(
            "record_list", KRecordList, payload, len(specs), num_records=len(specs)
        )
        assert _records_view(listed.records) == _kaitai_records_view(klisted.records)
    expected_last = args.get("last_offset_delta")
    if expected_last is None:
        expected_last = (
            specs[-1]["offset_delta"] if specs else max(args.get("records_count", 1) - 1, 0)
        )
    assert view["last_offset_delta"] == expected_last


def test_ten_byte_varints_are_written_and_read() -> None:
    spec = {"key": None, "value": None, "headers": [], "offset_delta": 0}
    data = build_record_batch([{**spec, "timestamp_delta": -(2**63)}], max_timestamp=0)
    varlong = encode_zigzag(-(2**63))
    assert len(varlong) == 10
    assert varlong in data[61:]
    ours, kaitai = _parse3("record_batch", KRecordBatch, data)
    assert ours.records[0].timestamp_delta == -(2**63)
    assert kaitai.records.records[0].body.timestamp_delta.value == -(2**63)


@SETTINGS
@given(int64)
def test_varlong_round_trip(value: int) -> None:
    data = encode_zigzag(value)
    ours, kaitai = _parse3("varint", KVarint, data)
    assert ours == kaitai.value == value
    assert len(data) == max(1, -(-((value << 1) ^ (value >> 63)).bit_length() // 7))


legacy_args = st.fixed_dictionaries(
    {
        "offset": int64,
        "key": blobs,
        "value": blobs,
        "magic": st.integers(0, 1),
        "timestamp": int64,
        "codec": st.integers(0, 7),
        "timestamp_type": st.integers(0, 1),
    },
    optional={"attributes": int8},
)


def _legacy_view(c: Container) -> tuple:
    return (
        c.offset,
        c.message_size,
        c.crc,
        c.magic,
        c.attributes & 0xFF,
        c.timestamp,
        c.key,
        c.value,
    )


def _kaitai_legacy_view(k: KLegacyMessage) -> tuple:
    a = k.attributes
    attributes = a.reserved << 4 | int(a.timestamp_type) << 3 | int(a.compression)
    timestamp = k.timestamp if k.magic == 1 else None
    key, value = _opt(k, "key", k.len_key), _opt(k, "value", k.len_value)
    return (k.offset, k.message_size, k.crc, k.magic, attributes, timestamp, key, value)


@SETTINGS
@given(legacy_args)
def test_legacy_message_round_trip(args: dict) -> None:
    if args["magic"] == 0:
        args["timestamp"] = None
    data = build_legacy_message(**args)
    ours, kaitai = _parse3("legacy_message", KLegacyMessage, data)
    assert len(data) == 12 + int.from_bytes(data[8:12], "big", signed=True)
    assert int.from_bytes(data[12:16], "big") == zlib.crc32(data[16:])
    view = _legacy_view(ours)
    assert view == _kaitai_legacy_view(kaitai)
    attributes = args.get("attributes")
    if attributes is None:
        attributes = args["codec"] | args["timestamp_type"] << 3
        # LegacyRecord.timestampType: none (-1) for magic 0, whatever bit 3 holds
        expected_type = -1 if args["magic"] == 0 else args["timestamp_type"]
        assert (int(ours.compression), int(ours.timestamp_type)) == (args["codec"], expected_type)
        assert int(kaitai.timestamp_type.value) == expected_type
    assert view[3:] == (
        args["magic"],
        attributes & 0xFF,
        args["timestamp"],
        args["key"],
        args["value"],
    )
    assert ours.offset == args["offset"]


@st.composite
def record_sets(draw) -> tuple[list[bytes], bytes]:
    frames = []
    for kind in draw(st.lists(st.sampled_from(["batch", "legacy"]), max_size=5)):
        if kind == "batch":
            args, specs, _ = draw(batches())
            frames.append(build_record_batch(specs, **args))
        else:
            args = draw(legacy_args)
            if args["magic"] == 0:
                args["timestamp"] = None
            frames.append(build_legacy_message(**args))
    # a partial frame at the end: fewer than 12 bytes, or a length running past the end
    spare = draw(st.sampled_from(frames)) if frames else build_legacy_message()
    tail = spare[: draw(st.integers(0, len(spare) - 1))]
    return frames, tail


@SETTINGS
@given(record_sets())
def test_record_set_round_trip(case) -> None:
    frames, tail = case
    data = build_record_set(frames, tail)
    ours, kaitai = _parse3("record_set", KRecordSet, data)
    assert ours.trailing == kaitai.trailing == tail
    kframes = kaitai.frames if kaitai.is_first_complete else []
    assert len(ours.frames) == len(kframes) == len(frames)
    for frame, kframe, raw in zip(ours.frames, kframes, frames, strict=True):
        assert (frame.base_offset, frame.length, frame.magic) == (
            kframe.base_offset,
            kframe.length,
            kframe.magic,
        )
        assert frame.length == len(raw) - 12
        assert frame.magic == raw[16]
        if frame.magic == 2:
            assert frame.body == compiled.parse("record_batch", raw)
            assert _batch_view(frame.body) == _kaitai_batch_view(kframe.body)
        else:
            assert frame.body == compiled.parse("legacy_message", raw)
            assert _legacy_view(frame.body) == _kaitai_legacy_view(kframe.body)


@SETTINGS
@given(st.integers(0, 6) | int16, int16, int32, int16)
def test_control_record_round_trip(kind: int, version: int, epoch: int, mversion: int) -> None:
    key = build_control_record_key(kind, version=version)
    ours, kaitai = _parse3("control_record_key", KControlKey, key)
    assert (ours.version, int(ours.type)) == (kaitai.version, int(kaitai.type)) == (version, kind)
    if 0 <= kind <= 6:
        assert str(ours.type) == kaitai.type.name
    value = build_end_txn_marker(epoch, version=mversion)
    ours, kaitai = _parse3("end_txn_marker", KEndTxnMarker, value)
    assert (ours.version, ours.coordinator_epoch) == (kaitai.version, kaitai.coordinator_epoch)
    assert (ours.version, ours.coordinator_epoch) == (mversion, epoch)


@SETTINGS
@given(
    st.lists(st.tuples(int32, int32), max_size=20),
    st.lists(st.tuples(int64, int32), max_size=20),
    st.lists(st.tuples(int16, int64, int64, int64, int64), max_size=10),
)
def test_index_files_round_trip(offsets, times, aborted) -> None:
    data = build_offset_index(offsets)
    assert len(data) == 8 * len(offsets)
    ours, kaitai = _parse3("offset_index", KOffsetIndex, data)
    got = [(e.relative_offset, e.position) for e in ours.entries]
    assert got == [(e.relative_offset, e.position) for e in kaitai.entries] == offsets

    data = build_time_index(times)
    assert len(data) == 12 * len(times)
    ours, kaitai = _parse3("time_index", KTimeIndex, data)
    got = [(e.timestamp, e.relative_offset) for e in ours.entries]
    assert got == [(e.timestamp, e.relative_offset) for e in kaitai.entries] == times

    keys = ("version", "producer_id", "first_offset", "last_offset", "last_stable_offset")
    data = build_txn_index([dict(zip(keys, a, strict=True)) for a in aborted])
    assert len(data) == 34 * len(aborted)
    ours, kaitai = _parse3("txn_index", KTxnIndex, data)
    assert [tuple(e[k] for k in keys) for e in ours.entries] == aborted
    assert [tuple(getattr(e, k) for k in keys) for e in kaitai.entries] == aborted


SNAPSHOT_KEYS = (
    "producer_id",
    "epoch",
    "last_sequence",
    "last_offset",
    "offset_delta",
    "timestamp",
    "coordinator_epoch",
    "current_txn_first_offset",
)


@SETTINGS
@given(st.lists(st.tuples(int64, int16, int32, int64, int32, int64, int32, int64), max_size=8))
def test_producer_snapshot_round_trip(rows) -> None:
    data = build_producer_snapshot([dict(zip(SNAPSHOT_KEYS, r, strict=True)) for r in rows])
    assert len(data) == 10 + 46 * len(rows)
    assert int.from_bytes(data[2:6], "big") == crc32c(data[6:])
    ours, kaitai = _parse3("producer_snapshot", KSnapshot, data)
    assert (ours.version, ours.crc, ours.num_entries) == (
        kaitai.version,
        kaitai.crc,
        kaitai.num_entries,
    )
    assert (ours.version, ours.num_entries) == (1, len(rows))
    assert [tuple(e[k] for k in SNAPSHOT_KEYS) for e in ours.entries] == rows
    assert [tuple(getattr(e, k) for k in SNAPSHOT_KEYS) for e in kaitai.entries] == rows
