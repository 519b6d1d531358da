"""generated/layout.py against the schemas, each constant tied to something that does not read it.

Oracles: the Kaitai *debug* build (``generated/kaitai_debug``), whose ``_debug`` dict records
where each field of a parse starts and ends, over real bytes (kafka-python's record builders,
the Construct mirrors' builders, the corpus brokers wrote, random bytes for fixed-size
entries); the Construct mirrors (``schemas/*.py``), whose fields' ``sizeof()`` summed give
offsets; kafka-python's own typed constants (``DefaultRecordBase``, ``LegacyRecordBase``);
CRCs the writers stored. A wrong offset, size, format, mask or scope in the layout fails here.
"""

from __future__ import annotations

import importlib.util
import random
import re
import struct
import sys
import zlib
from io import BytesIO
from pathlib import Path

import construct
import crc32c
import numpy as np
import pytest
from kafka.record.default_records import DefaultRecordBase, DefaultRecordBatchBuilder
from kafka.record.legacy_records import LegacyRecordBase, LegacyRecordBatchBuilder
from kaitaistruct import KaitaiStream

from kafka_format.generated.kaitai_debug import (
    control_record_key as k_control,
)
from kafka_format.generated.kaitai_debug import (
    end_txn_marker as k_marker,
)
from kafka_format.generated.kaitai_debug import (
    kafka_enums as k_enums,
)
from kafka_format.generated.kaitai_debug import (
    legacy_message as k_legacy,
)
from kafka_format.generated.kaitai_debug import (
    offset_index as k_offset_index,
)
from kafka_format.generated.kaitai_debug import (
    producer_snapshot as k_snapshot,
)
from kafka_format.generated.kaitai_debug import (
    record_batch as k_batch,
)
from kafka_format.generated.kaitai_debug import (
    record_set as k_record_set,
)
from kafka_format.generated.kaitai_debug import (
    time_index as k_time_index,
)
from kafka_format.generated.kaitai_debug import (
    txn_index as k_txn_index,
)
from kafka_format.runtime.format import layout as L
from kafka_format.schemas import (
    control_record_key as c_control,
)
from kafka_format.schemas import (
    end_txn_marker as c_marker,
)
from kafka_format.schemas import (
    kafka_enums as c_enums,
)
from kafka_format.schemas import (
    legacy_message as c_legacy,
)
from kafka_format.schemas import (
    offset_index as c_offset_index,
)
from kafka_format.schemas import (
    producer_snapshot as c_snapshot,
)
from kafka_format.schemas import (
    record_batch as c_batch,
)
from kafka_format.schemas import (
    record_set as c_record_set,
)
from kafka_format.schemas import (
    time_index as c_time_index,
)
from kafka_format.schemas import (
    txn_index as c_txn_index,
)

REPO_ROOT = Path(__file__).resolve().parents[2]

#: Each part: (prefix of its fields' constants, prefix of its totals). Restated here, not read
#: from the generator, so that a renamed constant fails.
PREFIXES = {
    "frame": ("FRAME", "FRAME_HEADER"),
    "v2_header": ("V2", "V2_HEADER"),
    "legacy_header": ("LEGACY", "LEGACY_HEADER"),
    "legacy_v0": (None, "LEGACY_V0_FIXED"),
    "legacy_v1": (None, "LEGACY_V1_FIXED"),
    "offset_index_entry": ("OFFSET_INDEX_ENTRY", "OFFSET_INDEX_ENTRY"),
    "time_index_entry": ("TIME_INDEX_ENTRY", "TIME_INDEX_ENTRY"),
    "txn_index_entry": ("TXN_INDEX_ENTRY", "TXN_INDEX_ENTRY"),
    "snapshot_header": ("SNAPSHOT", "SNAPSHOT_HEADER"),
    "snapshot_entry": ("SNAPSHOT_ENTRY", "SNAPSHOT_ENTRY"),
    "control_record_key": ("CONTROL_RECORD_KEY", "CONTROL_RECORD_KEY"),
    "end_txn_marker": ("END_TXN_MARKER", "END_TXN_MARKER"),
}
#: The layout's name of a field -> the schema's id, where they differ.
SCHEMA_NAME = {
    "v2_header": {"length": "batch_length"},
    "legacy_header": {"length": "message_size"},
    "legacy_v0": {"length": "message_size"},
    "legacy_v1": {"length": "message_size"},
}
_STRUCT_CODE = {"b": "i1", "B": "u1", "h": "i2", "H": "u2", "i": "i4", "I": "u4", "q": "i8"}


def _debug_parse(cls, data: bytes, *args):
    obj = cls(*args, KaitaiStream(BytesIO(bytes(data))))
    obj._read()
    return obj


def _debug_ranges(obj, base: int = 0) -> list[tuple[str, int, int]]:
    """(field, offset, size) of each parsed seq field of a debug-build object, in order."""
    out = []
    for name in type(obj).SEQ_FIELDS:
        info = obj._debug.get(name, {})
        if "start" in info and "end" in info:
            out.append((name, info["start"] - base, info["end"] - info["start"]))
    return out


def _assert_part(part: str, obj, base: int = 0) -> None:
    """The part's fields are the parse's first fields, at the same offsets and sizes."""
    rename = SCHEMA_NAME.get(part, {})
    want = [(rename.get(n, n), off, size) for n, off, size, _ in L.PARTS[part]]
    got = _debug_ranges(obj, base)[: len(want)]
    assert got == want, part


def _assert_values(part: str, data: bytes, obj, at: int = 0) -> None:
    """The part's struct format reads the values Kaitai read (formats, signs, order)."""
    fields = L.PARTS[part]
    prefixes = PREFIXES[part]
    values = struct.unpack_from(getattr(L, f"{prefixes[1]}_FORMAT"), data, at)
    assert len(values) == len(fields)
    rename = SCHEMA_NAME.get(part, {})
    for (name, _, _, _), value in zip(fields, values, strict=True):
        parsed = getattr(obj, rename.get(name, name))
        if isinstance(parsed, int):
            assert value == parsed, (part, name)


def _v2_frames() -> list[bytes]:
    frames = []
    for codec, transactional, pid in [(0, False, -1), (1, True, 123456789), (0, True, 7)]:
        builder = DefaultRecordBatchBuilder(2, codec, transactional, pid, 3, 17, 1 << 20)
        for i in range(5):
            builder.append(i, 1_700_000_000_000 + i, b"k%d" % i, b"v" * i, [("h", b"x")])
        frames.append(bytes(builder.build()))
    return frames


def _legacy_frames(magic: int) -> list[bytes]:
    """Three messages, then a gzip wrapper of three."""
    frames = []
    for codec in (0, 1):
        builder = LegacyRecordBatchBuilder(magic, codec, 1 << 20)
        for i in range(3):
            builder.append(i, 1_700_000_000_000 + i if magic else None, b"key", b"value" * i)
        frames += _split(bytes(builder.build()))
    return frames


def _split(data: bytes) -> list[bytes]:
    """The whole entries of a record set (by its length fields, as Kafka frames them)."""
    frames, at = [], 0
    while len(data) - at >= 12:
        (length,) = struct.unpack_from(">i", data, at + 8)
        if length < 0 or at + 12 + length > len(data):
            break
        frames.append(data[at : at + 12 + length])
        at += 12 + length
    return frames


def _corpus_frames(manifest) -> list[bytes]:
    """Every whole frame of the corpus sets whose CRCs hold."""
    frames = []
    for s in manifest:
        if not s.crc_valid:
            continue
        frames += _split(s.data())
    assert frames
    return frames


# --- the frame, the v2 header and the v0/v1 message ------------------------------------------


@pytest.mark.parametrize("frame", _v2_frames(), ids=["none", "gzip-txn", "control-free-txn"])
def test_v2_header_offsets_are_where_kaitai_reads_them(frame):
    batch = _debug_parse(k_batch.RecordBatch, frame)
    _assert_part("v2_header", batch)
    _assert_values("v2_header", frame, batch)
    after = "records" if batch.attributes.compression == 0 else "compressed_records"
    assert batch._debug[after]["start"] == L.V2_HEADER_SIZE
    assert batch.batch_length == len(frame) - L.LOG_OVERHEAD


@pytest.mark.parametrize("magic", [0, 1])
def test_legacy_offsets_are_where_kaitai_reads_them(magic):
    for frame in _legacy_frames(magic):
        msg = _debug_parse(k_legacy.LegacyMessage, frame)
        _assert_part("legacy_header", msg)
        _assert_part(f"legacy_v{magic}", msg)
        _assert_values("legacy_header", frame, msg)
        _assert_values(f"legacy_v{magic}", frame, msg)
        assert msg._debug["len_key"]["start"] == getattr(L, f"LEGACY_V{magic}_LEN_KEY")
        if magic == 1:
            assert msg._debug["timestamp"]["start"] == L.LEGACY_V1_TIMESTAMP
            assert L.LEGACY_V1_TIMESTAMP_SIZE == 8


def test_frame_fields_are_where_the_record_set_reads_them():
    data = b"".join([*_v2_frames(), *_legacy_frames(0), *_legacy_frames(1)])
    parsed = _debug_parse(k_record_set.RecordSet, data)
    # 3 batches, 2 x (3 messages + 1 gzip wrapper)
    assert len(parsed.frames) == 11 and not parsed.trailing
    names = [n for n, _, _, _ in L.FRAME_HEADER_FIELDS]
    assert names == ["base_offset", "length", "magic"]
    for frame in parsed.frames:
        for name, offset, size, _ in L.FRAME_HEADER_FIELDS:
            getattr(frame, name)  # an instance: read (and recorded) when first asked for
            info = frame._debug[f"_m_{name}"]
            assert (info["start"] - frame.ofs_frame, info["end"] - info["start"]) == (
                offset,
                size,
            )
        # the frame's fields are the same bytes as its body's own
        body = frame.body
        first = "base_offset" if frame.magic == 2 else "offset"
        assert body._debug[first]["start"] == L.FRAME_BASE_OFFSET
        assert body._debug["magic"]["start"] == L.FRAME_MAGIC
    assert L.FRAME_HEADER_SIZE == L.FRAME_MAGIC + L.FRAME_MAGIC_SIZE
    assert struct.calcsize(L.FRAME_HEADER_FORMAT) == L.FRAME_HEADER_SIZE
    assert L.LOG_OVERHEAD == L.FRAME_LENGTH + L.FRAME_LENGTH_SIZE


def test_corpus_frames_agree_with_the_layout(manifest):
    for frame in _corpus_frames(manifest):
        magic = frame[L.FRAME_MAGIC]
        if magic == 2:
            obj = _debug_parse(k_batch.RecordBatch, frame)
            _assert_part("v2_header", obj)
            _assert_values("v2_header", frame, obj)
            assert crc32c.crc32c(frame[L.V2_CRC_START :]) == obj.crc
        else:
            obj = _debug_parse(k_legacy.LegacyMessage, frame)
            _assert_part(f"legacy_v{magic}", obj)
            _assert_values("legacy_header", frame, obj)
            assert zlib.crc32(frame[L.LEGACY_CRC_START :]) == obj.crc


def test_minimum_sizes_are_kafkas():
    # a message with null key and value, as kafka-python writes it
    for magic in (0, 1):
        builder = LegacyRecordBatchBuilder(magic, 0, 1 << 20)
        builder.append(0, 1 if magic else None, None, None)
        frame = bytes(builder.build())
        overhead = getattr(L, f"LEGACY_V{magic}_RECORD_OVERHEAD")
        assert struct.unpack_from(">i", frame, 8)[0] == overhead
        assert len(frame) == getattr(L, f"LEGACY_V{magic}_ENTRY_MIN_SIZE") == overhead + 12
    assert L.LEGACY_V0_RECORD_OVERHEAD == LegacyRecordBase.RECORD_OVERHEAD_V0
    assert L.LEGACY_V1_RECORD_OVERHEAD == LegacyRecordBase.RECORD_OVERHEAD_V1
    assert L.LEGACY_V0_LEN_KEY == LegacyRecordBase.KEY_OFFSET_V0
    assert L.LEGACY_V1_LEN_KEY == LegacyRecordBase.KEY_OFFSET_V1
    assert L.LOG_OVERHEAD == LegacyRecordBase.LOG_OVERHEAD == c_record_set.LOG_OVERHEAD
    assert L.MIN_FRAME_LENGTH == L.LEGACY_V0_RECORD_OVERHEAD == c_record_set.MIN_FRAME_LENGTH
    assert L.V2_HEADER_SIZE == DefaultRecordBase.HEADER_STRUCT.size == c_batch.RECORDS_OFFSET
    assert L.V2_MIN_BATCH_LENGTH == L.V2_HEADER_SIZE - L.LOG_OVERHEAD
    assert L.V2_MIN_BATCH_LENGTH == c_batch.HEADER_AFTER_LENGTH


def test_the_record_set_refuses_a_length_below_the_minimum():
    # an unknown magic keeps the body raw, so only record_set's own check can refuse it
    def entry(length: int) -> bytes:
        data = bytearray(L.LOG_OVERHEAD + length)
        struct.pack_into(">i", data, L.FRAME_LENGTH, length)
        data[L.FRAME_MAGIC] = 5
        return bytes(data)

    parsed = _debug_parse(k_record_set.RecordSet, entry(L.MIN_FRAME_LENGTH))
    assert len(parsed.frames) == 1
    with pytest.raises(Exception, match=r"ValidationExprError|validation"):
        _debug_parse(k_record_set.RecordSet, entry(L.MIN_FRAME_LENGTH - 1))


def test_v2_header_agrees_with_kafka_python():
    assert DefaultRecordBase.HEADER_STRUCT.format == L.V2_HEADER_FORMAT
    assert L.V2_CRC == DefaultRecordBase.CRC_OFFSET
    assert L.V2_ATTRIBUTES == DefaultRecordBase.ATTRIBUTES_OFFSET
    assert L.V2_PARTITION_LEADER_EPOCH == DefaultRecordBase.AFTER_LEN_OFFSET
    assert L.LEGACY_CRC == LegacyRecordBase.CRC_OFFSET
    assert L.LEGACY_MAGIC == LegacyRecordBase.MAGIC_OFFSET


# --- CRC scopes -------------------------------------------------------------------------------


def test_crc_scopes_cover_what_the_writers_checksummed():
    assert (L.V2_CRC_ALGORITHM, L.LEGACY_CRC_ALGORITHM) == ("crc32c", "crc32")
    for frame in _v2_frames():
        (stored,) = struct.unpack_from(">I", frame, L.V2_CRC)
        assert crc32c.crc32c(frame[L.V2_CRC_START :]) == stored
        assert L.V2_CRC_START == L.V2_CRC + L.V2_CRC_SIZE == L.V2_ATTRIBUTES
    for magic in (0, 1):
        for frame in _legacy_frames(magic):
            (stored,) = struct.unpack_from(">I", frame, L.LEGACY_CRC)
            assert zlib.crc32(frame[L.LEGACY_CRC_START :]) == stored
    assert L.LEGACY_CRC_START == L.LEGACY_MAGIC
    data = c_snapshot.build_producer_snapshot([_snapshot_entry(1), _snapshot_entry(2)])
    (stored,) = struct.unpack_from(">I", data, L.SNAPSHOT_CRC)
    assert L.SNAPSHOT_CRC_ALGORITHM == "crc32c"
    assert crc32c.crc32c(data[L.SNAPSHOT_CRC_START :]) == stored
    assert L.SNAPSHOT_CRC_START == c_snapshot.CRC_SCOPE_OFFSET


# --- attribute bits and enums -----------------------------------------------------------------


def _bits_of(obj) -> dict[str, int]:
    return {name: int(getattr(obj, name)) for name in type(obj).SEQ_FIELDS}


@pytest.mark.parametrize(
    ("prefix", "cls", "width"),
    [
        ("V2_ATTR", k_batch.RecordBatch.Attributes, 2),
        ("LEGACY_ATTR", k_legacy.LegacyMessage.Attributes, 1),
    ],
)
def test_attribute_masks_pick_the_bits_kaitai_decodes(prefix, cls, width):
    rng = random.Random(5)
    values = [1 << bit for bit in range(8 * width)] + [
        rng.getrandbits(8 * width) for _ in range(64)
    ]
    for value in values:
        parsed = _bits_of(_debug_parse(cls, value.to_bytes(width, "big")))
        for name, bit_value in parsed.items():
            mask = getattr(L, f"{prefix}_{name.upper()}_MASK")
            shift = getattr(L, f"{prefix}_{name.upper()}_SHIFT")
            assert (value & mask) >> shift == bit_value, (prefix, name, value)
    masks = [getattr(L, f"{prefix}_{n.upper()}_MASK") for n in cls.SEQ_FIELDS]
    assert sum(masks) == (1 << 8 * width) - 1  # the bits tile the attributes exactly


def test_attribute_masks_agree_with_the_mirrors_and_kafka_python():
    assert L.V2_ATTR_COMPRESSION_MASK == c_enums.CODEC_MASK == DefaultRecordBase.CODEC_MASK
    assert L.V2_ATTR_TIMESTAMP_TYPE_MASK == c_enums.TIMESTAMP_TYPE_BIT
    assert L.V2_ATTR_TIMESTAMP_TYPE_MASK == DefaultRecordBase.TIMESTAMP_TYPE_MASK
    assert L.V2_ATTR_IS_TRANSACTIONAL_MASK == c_enums.TRANSACTIONAL_BIT
    assert L.V2_ATTR_IS_TRANSACTIONAL_MASK == DefaultRecordBase.TRANSACTIONAL_MASK
    assert L.V2_ATTR_IS_CONTROL_MASK == c_enums.CONTROL_BIT == DefaultRecordBase.CONTROL_MASK
    assert L.V2_ATTR_HAS_DELETE_HORIZON_MASK == c_enums.DELETE_HORIZON_BIT
    assert L.LEGACY_ATTR_COMPRESSION_MASK == LegacyRecordBase.CODEC_MASK
    assert L.LEGACY_ATTR_TIMESTAMP_TYPE_MASK == LegacyRecordBase.TIMESTAMP_TYPE_MASK


@pytest.mark.parametrize(
    ("name", "kaitai_enum", "mirror"),
    [
        ("COMPRESSION_CODEC", k_enums.KafkaEnums.CompressionCodec, c_enums.CompressionCodec),
        ("TIMESTAMP_TYPE", k_enums.KafkaEnums.TimestampType, c_enums.TimestampType),
        ("RECORD_VERSION", k_enums.KafkaEnums.RecordVersion, c_enums.RecordVersion),
        (
            "CONTROL_RECORD_TYPE",
            k_control.ControlRecordKey.ControlRecordType,
            c_control.ControlRecordType,
        ),
    ],
)
def test_enums_are_the_schemas(name, kaitai_enum, mirror):
    assert getattr(L, name) == {m.value: m.name for m in kaitai_enum}
    for member in kaitai_enum:
        assert getattr(L, f"{name}_{member.name.upper()}") == member.value
    assert {m.value: m.name for m in mirror} == getattr(L, name)


# --- index, snapshot and control entries -----------------------------------------------------


def _entries(cls, entry_size: int, count: int = 6, data: bytes | None = None):
    data = data if data is not None else random.Random(entry_size).randbytes(entry_size * count)
    parsed = _debug_parse(cls, data)
    return data, parsed, parsed._debug["entries"]["arr"]


@pytest.mark.parametrize(
    ("part", "cls"),
    [
        ("offset_index_entry", k_offset_index.OffsetIndex),
        ("time_index_entry", k_time_index.TimeIndex),
        ("txn_index_entry", k_txn_index.TxnIndex),
    ],
)
def test_file_entries_are_where_kaitai_reads_them(part, cls):
    size = getattr(L, f"{PREFIXES[part][1]}_SIZE")
    data, parsed, ranges = _entries(cls, size)
    dtype = getattr(L, f"{PREFIXES[part][1]}_DTYPE")
    assert dtype.itemsize == size
    array = np.frombuffer(data, dtype=dtype)
    for i, (entry, span) in enumerate(zip(parsed.entries, ranges, strict=True)):
        assert (span["start"], span["end"] - span["start"]) == (i * size, size)
        _assert_part(part, entry, base=span["start"])
        _assert_values(part, data, entry, at=span["start"])
        for name in dtype.names:
            assert array[i][name] == getattr(entry, name)
    assert [n for n, _, _, _ in L.PARTS[part]] == list(dtype.names)
    assert [(dtype.fields[n][1], dtype.fields[n][0].str) for n in dtype.names] == [
        (off, ">" + _STRUCT_CODE[fmt]) for _, off, _, fmt in L.PARTS[part]
    ]


def test_a_real_time_index_reads_as_kaitai_reads_it(corpus_dir):
    path = corpus_dir / "recordupdater" / "hello-0.00000000000000000000.timeindex"
    data = path.read_bytes()
    assert data and len(data) % L.TIME_INDEX_ENTRY_SIZE == 0
    data, parsed, ranges = _entries(k_time_index.TimeIndex, 0, data=data)
    array = np.frombuffer(data, dtype=L.TIME_INDEX_ENTRY_DTYPE)
    for i, entry in enumerate(parsed.entries):
        _assert_part("time_index_entry", entry, base=ranges[i]["start"])
        assert array[i]["timestamp"] == entry.timestamp
        assert array[i]["relative_offset"] == entry.relative_offset


def _snapshot_entry(n: int) -> dict[str, int]:
    return {
        "producer_id": 1000 + n,
        "epoch": n,
        "last_sequence": 10 * n,
        "last_offset": 100 * n,
        "offset_delta": n,
        "timestamp": 1_700_000_000_000 + n,
        "coordinator_epoch": -n,
        "current_txn_first_offset": -1,
    }


def test_snapshot_header_and_entries_are_where_kaitai_reads_them():
    data = c_snapshot.build_producer_snapshot([_snapshot_entry(n) for n in range(3)])
    parsed = _debug_parse(k_snapshot.ProducerSnapshot, data)
    _assert_part("snapshot_header", parsed)
    _assert_values("snapshot_header", data, parsed)
    assert parsed._debug["entries"]["start"] == L.SNAPSHOT_HEADER_SIZE
    array = np.frombuffer(data, dtype=L.SNAPSHOT_ENTRY_DTYPE, offset=L.SNAPSHOT_HEADER_SIZE)
    for i, (entry, span) in enumerate(
        zip(parsed.entries, parsed._debug["entries"]["arr"], strict=True)
    ):
        assert span["start"] == L.SNAPSHOT_HEADER_SIZE + i * L.SNAPSHOT_ENTRY_SIZE
        _assert_part("snapshot_entry", entry, base=span["start"])
        _assert_values("snapshot_entry", data, entry, at=span["start"])
        assert dict(zip(array.dtype.names, array[i].tolist(), strict=True)) == _snapshot_entry(i)


@pytest.mark.parametrize("type_", [0, 1, 4])
def test_control_key_and_marker_are_where_kaitai_reads_them(type_):
    key = c_control.build_control_record_key(type_)
    parsed = _debug_parse(k_control.ControlRecordKey, key)
    _assert_part("control_record_key", parsed)
    assert struct.unpack(L.CONTROL_RECORD_KEY_FORMAT, key) == (0, type_)
    value = c_marker.build_end_txn_marker(-7)
    marker = _debug_parse(k_marker.EndTxnMarker, value)
    _assert_part("end_txn_marker", marker)
    assert struct.unpack(L.END_TXN_MARKER_FORMAT, value) == (0, -7)


def test_a_real_control_record_reads_as_the_layout_says(corpus_dir):
    data = (corpus_dir / "kafka-python" / "control_batch_data_v2.bin").read_bytes()
    batch = _debug_parse(k_batch.RecordBatch, data[: 12 + struct.unpack_from(">i", data, 8)[0]])
    assert batch.attributes.is_control
    body = batch.records.records[0].body
    parsed = _debug_parse(k_control.ControlRecordKey, body.key)
    _assert_part("control_record_key", parsed)
    assert struct.unpack(L.CONTROL_RECORD_KEY_FORMAT, body.key) == (
        parsed.version,
        int(parsed.type),
    )
    marker = _debug_parse(k_marker.EndTxnMarker, body.value[: L.END_TXN_MARKER_SIZE])
    _assert_part("end_txn_marker", marker)


# --- the Construct mirrors --------------------------------------------------------------------


def _construct_fields(struct_: construct.Struct, **context) -> list[tuple[str, int, int]]:
    """(name, offset, size) of the named fields of a Construct Struct up to the first one whose
    size depends on the data; unnamed (Check) and computed (size 0) fields are left out."""
    out, offset = [], 0
    for sub in struct_.subcons:
        try:
            size = sub.sizeof(**context)
        except (construct.SizeofError, KeyError):
            break
        if sub.name and size:
            out.append((sub.name, offset, size))
        offset += size
    return out


@pytest.mark.parametrize(
    ("part", "mirror", "context"),
    [
        ("v2_header", c_batch.RecordBatch, {}),
        ("legacy_v0", c_legacy.LegacyMessage, {"magic": 0}),
        ("legacy_v1", c_legacy.LegacyMessage, {"magic": 1}),
        ("offset_index_entry", c_offset_index.OffsetIndexEntry, {}),
        ("time_index_entry", c_time_index.TimeIndexEntry, {}),
        ("txn_index_entry", c_txn_index.AbortedTxn, {}),
        ("snapshot_header", c_snapshot.ProducerSnapshot, {}),
        ("snapshot_entry", c_snapshot.ProducerSnapshotEntry, {}),
        ("control_record_key", c_control.ControlRecordKey, {}),
        ("end_txn_marker", c_marker.EndTxnMarker, {}),
    ],
)
def test_construct_mirrors_lay_fields_out_the_same(part, mirror, context):
    rename = SCHEMA_NAME.get(part, {})
    want = [(rename.get(n, n), off, size) for n, off, size, _ in L.PARTS[part]]
    assert _construct_fields(mirror, **context) == want
    assert getattr(L, f"{PREFIXES[part][1]}_SIZE") == sum(size for _, _, size in want)


def test_construct_mirrors_state_the_same_offsets():
    assert L.V2_CRC == c_batch.CRC_OFFSET and L.V2_ATTRIBUTES == c_batch.ATTRIBUTES_OFFSET
    assert L.LEGACY_CRC == c_legacy.CRC_OFFSET and L.LEGACY_MAGIC == c_legacy.MAGIC_OFFSET
    assert L.OFFSET_INDEX_ENTRY_SIZE == c_offset_index.ENTRY_SIZE
    assert L.TIME_INDEX_ENTRY_SIZE == c_time_index.ENTRY_SIZE
    assert L.TXN_INDEX_ENTRY_SIZE == c_txn_index.ENTRY_SIZE


# --- the module as a whole --------------------------------------------------------------------


def test_every_constant_is_one_the_tests_above_tie_to_a_schema():
    """No constant escapes the checks: each is a part's field, size, format, fields or dtype,
    an attribute bit, an enum value, or one of the scalars checked above."""
    explained = {
        "PARTS",
        "COMPRESSION_CODEC",
        "TIMESTAMP_TYPE",
        "RECORD_VERSION",
        "CONTROL_RECORD_TYPE",
    }
    for part, (fields_prefix, total_prefix) in PREFIXES.items():
        explained |= {f"{total_prefix}_{s}" for s in ("SIZE", "FORMAT", "FIELDS", "DTYPE")}
        for name, offset, size, _ in L.PARTS[part]:
            if fields_prefix is None:
                continue
            const = f"{fields_prefix}_{name.upper()}"
            assert (getattr(L, const), getattr(L, f"{const}_SIZE")) == (offset, size)
            explained |= {const, f"{const}_SIZE"}
        fields = L.PARTS[part]
        assert getattr(L, f"{total_prefix}_FIELDS") is fields
        end = fields[-1][1] + fields[-1][2]
        assert getattr(L, f"{total_prefix}_SIZE") == end
        assert struct.calcsize(getattr(L, f"{total_prefix}_FORMAT")) == end
        # the format is the fields' characters, with padding where a part skips bytes
        chars, at = ">", 0
        for _, offset, size, fmt in fields:
            chars += (f"{offset - at}x" if offset > at else "") + fmt
            at = offset + size
            assert struct.calcsize(">" + fmt) == size
        assert getattr(L, f"{total_prefix}_FORMAT") == chars
    for prefix, cls in (
        ("V2_ATTR", k_batch.RecordBatch.Attributes),
        ("LEGACY_ATTR", k_legacy.LegacyMessage.Attributes),
    ):
        explained |= {
            f"{prefix}_{n.upper()}_{s}" for n in cls.SEQ_FIELDS for s in ("MASK", "SHIFT")
        }
    for enum in ("COMPRESSION_CODEC", "TIMESTAMP_TYPE", "RECORD_VERSION", "CONTROL_RECORD_TYPE"):
        explained |= {f"{enum}_{v.upper()}" for v in getattr(L, enum).values()}
    explained |= {
        "LOG_OVERHEAD",
        "MIN_FRAME_LENGTH",
        "V2_CRC_START",
        "V2_CRC_ALGORITHM",
        "V2_MIN_BATCH_LENGTH",
        "LEGACY_CRC_START",
        "LEGACY_CRC_ALGORITHM",
        "SNAPSHOT_CRC_START",
        "SNAPSHOT_CRC_ALGORITHM",
        "LEGACY_V0_LEN_KEY",
        "LEGACY_V0_LEN_KEY_SIZE",
        "LEGACY_V1_LEN_KEY",
        "LEGACY_V1_LEN_KEY_SIZE",
        "LEGACY_V1_TIMESTAMP",
        "LEGACY_V1_TIMESTAMP_SIZE",
        "LEGACY_V0_RECORD_OVERHEAD",
        "LEGACY_V1_RECORD_OVERHEAD",
        "LEGACY_V0_ENTRY_MIN_SIZE",
        "LEGACY_V1_ENTRY_MIN_SIZE",
    }
    generated = {n for n in L.__all__ if n.isupper()}
    assert generated <= explained, sorted(generated - explained)
    assert set(L.__all__) - generated == {"field_struct"}
    assert set(PREFIXES) == set(L.PARTS)
    assert L.LEGACY_V0_LEN_KEY_SIZE == L.LEGACY_V1_LEN_KEY_SIZE == 4


def test_field_struct_reads_one_field():
    frame = _v2_frames()[1]
    crc = L.field_struct(L.V2_HEADER_FIELDS, "crc").unpack_from(frame, L.V2_CRC)[0]
    assert crc == _debug_parse(k_batch.RecordBatch, frame).crc
    pid = L.field_struct(L.V2_HEADER_FIELDS, "producer_id").unpack_from(frame, L.V2_PRODUCER_ID)
    assert pid == (123456789,)
    with pytest.raises(ValueError):
        L.field_struct(L.V2_HEADER_FIELDS, "nothing")
    crc, magic, attributes = L.field_struct(L.LEGACY_HEADER_FIELDS, "crc", "attributes").unpack(
        _legacy_frames(1)[0][L.LEGACY_CRC : L.LEGACY_HEADER_SIZE]
    )
    msg = _debug_parse(k_legacy.LegacyMessage, _legacy_frames(1)[0])
    assert (crc, magic, attributes & L.LEGACY_ATTR_COMPRESSION_MASK) == (msg.crc, 1, 0)
    # the frame's fields skip the 4 bytes at 12: a range across them pads
    assert L.field_struct(L.FRAME_HEADER_FIELDS, "length", "magic").format == ">i4xb"
    assert L.field_struct(L.FRAME_HEADER_FIELDS, "base_offset", "length").size == L.LOG_OVERHEAD


def _generator():
    """scripts/gen_layout.py as a module (registered: its dataclasses look themselves up)."""
    spec = importlib.util.spec_from_file_location(
        "_gen_layout", REPO_ROOT / "scripts" / "gen_layout.py"
    )
    gen = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = gen
    spec.loader.exec_module(gen)
    return gen


def test_generated_layout_is_fresh():
    """generated/layout.py is what scripts/gen_layout.py writes from the schemas today."""
    gen = _generator()
    text = (REPO_ROOT / "generated" / "layout.py").read_text(encoding="utf-8")
    assert gen.build() == text
    assert "Generated by scripts/gen_layout.py from schemas/*.ksy; do not edit." in text


def test_the_runtime_imports_the_layout_only_through_format_layout():
    offenders = []
    for path in sorted((REPO_ROOT / "runtime").rglob("*.py")) + sorted(
        (REPO_ROOT / "spark_udfs").rglob("*.py")
    ):
        if path == REPO_ROOT / "runtime" / "format" / "layout.py":
            continue
        if re.search(r"generated(\.| import )layout", path.read_text(encoding="utf-8")):
            offenders.append(str(path.relative_to(REPO_ROOT)))
    assert not offenders


def test_a_tampered_schema_fails_generation(tmp_path, monkeypatch):
    """The generator refuses a schema whose stated numbers disagree with its seq."""
    gen = _generator()
    for ksy in (REPO_ROOT / "schemas").glob("*.ksy"):
        text = ksy.read_text(encoding="utf-8")
        if ksy.name == "record_set.ksy":
            text = text.replace("pos: ofs_frame + 16", "pos: ofs_frame + 15")
        (tmp_path / ksy.name).write_text(text, encoding="utf-8")
    monkeypatch.setattr(gen, "SCHEMAS", tmp_path)
    with pytest.raises(gen.LayoutError, match="magic"):
        gen.build()
    # an extra byte before magic moves every later offset: the generator follows the seq
    text = (REPO_ROOT / "schemas" / "record_batch.ksy").read_text(encoding="utf-8")
    (tmp_path / "record_set.ksy").write_text(
        (REPO_ROOT / "schemas" / "record_set.ksy").read_text(encoding="utf-8"), encoding="utf-8"
    )
    moved = text.replace(
        "  - id: records_count\n    type: s4", "  - id: records_count\n    type: s8"
    )
    (tmp_path / "record_batch.ksy").write_text(moved, encoding="utf-8")
    with pytest.raises(gen.LayoutError, match="batch_length - 49"):
        gen.build()
