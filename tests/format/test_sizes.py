"""The worked sizes of Kafka's formats, ``runtime/sizes.py``'s size arithmetic, and ``stats``'
byte accounting on bytes others built.

The bytes come from kafka-python's record builders (``LegacyRecordBatchBuilder``,
``DefaultRecordBatchBuilder``), an implementation independent of ours, and its own constants
and size functions are the oracle: ``LOG_OVERHEAD``, ``RECORD_OVERHEAD_V0/V1``,
``DefaultRecordBatchBuilder.size_in_bytes`` (a v2 record's size, varints included), the
builders' ``estimate_size_in_bytes`` (the producer's upper bound for a first record) and
``size_of_varint`` / ``encode_varint``. Where our Construct builders write the same thing they
must write the same bytes.
"""

from __future__ import annotations

import gzip
from dataclasses import dataclass

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kafka.record import MemoryRecords
from kafka.record.default_records import DefaultRecordBatchBuilder
from kafka.record.legacy_records import LegacyRecordBase, LegacyRecordBatchBuilder
from kafka.record.util import encode_varint, size_of_varint

from kafka_format.runtime.analysis.stats import log_stats
from kafka_format.runtime.format import layout
from kafka_format.runtime.format.framing import LOG_OVERHEAD, MIN_FRAME_LENGTH
from kafka_format.runtime.format.sizes import (
    LEGACY_MESSAGE_HEADER,
    LEGACY_RECORD_OVERHEAD,
    MAX_RECORD_OVERHEAD,
    batch_header_size,
    legacy_record_size,
    size_upper_bound,
    v2_record_size,
    varint_size,
)
from kafka_format.schemas.legacy_message import build_legacy_message
from kafka_format.schemas.record import RecordSpec
from kafka_format.schemas.record_batch import build_record_batch

T0 = 1_700_000_000_000
CODEC_NAMES = {0: "none", 1: "gzip", 2: "snappy", 3: "lz4", 4: "zstd"}


def legacy(magic: int, messages, codec: int = 0, first_offset: int = 0) -> bytes:
    """kafka-python's v0/v1 message set: (key, value, timestamp) each."""
    builder = LegacyRecordBatchBuilder(magic=magic, compression_type=codec, batch_size=1 << 30)
    for i, (key, value, timestamp) in enumerate(messages):
        builder.append(first_offset + i, timestamp=timestamp, key=key, value=value)
    return bytes(builder.build())


def v2(records, codec: int = 0, base_offset: int = 0) -> bytes:
    """kafka-python's v2 batch: (key, value, headers, timestamp) each."""
    builder = DefaultRecordBatchBuilder(
        magic=2,
        compression_type=codec,
        is_transactional=False,
        producer_id=-1,
        producer_epoch=-1,
        base_sequence=-1,
        batch_size=1 << 30,
    )
    for i, (key, value, headers, timestamp) in enumerate(records):
        builder.append(i, timestamp=timestamp, key=key, value=value, headers=headers)
    data = bytearray(builder.build())
    data[0:8] = base_offset.to_bytes(8, "big")  # the broker assigns offsets; the CRC skips them
    return bytes(data)


# --- the worked sizes -------------------------------------------------------------------------


def test_log_overhead_is_twelve_bytes():
    assert LOG_OVERHEAD == LegacyRecordBase.LOG_OVERHEAD == 12


@pytest.mark.parametrize(("magic", "minimum"), [(0, 14), (1, 22)])
def test_smallest_legacy_message(magic, minimum):
    """A message of null key and value: 14 bytes in v0, 22 in v1, without its log overhead."""
    theirs = legacy(magic, [(None, None, None if magic == 0 else T0)])
    assert len(theirs) - LOG_OVERHEAD == minimum
    assert (
        minimum == (LegacyRecordBase.RECORD_OVERHEAD_V0, LegacyRecordBase.RECORD_OVERHEAD_V1)[magic]
    )
    ours = build_legacy_message(magic=magic, timestamp=None if magic == 0 else T0)
    assert ours == theirs
    assert LEGACY_MESSAGE_HEADER[magic] == LOG_OVERHEAD + minimum
    assert MIN_FRAME_LENGTH == 14  # the smallest length field a reader can step over


@pytest.mark.parametrize(("magic", "size"), [(0, 34), (1, 42)])
def test_key_value_message(magic, size):
    """The seed's worked example: key "key" and value "value" take 34 bytes in v0, 42 in v1,
    log overhead included; stats puts all but the 8 bytes of key and value in the header."""
    timestamp = None if magic == 0 else T0
    theirs = legacy(magic, [(b"key", b"value", timestamp)])
    assert len(theirs) == size
    assert build_legacy_message(magic=magic, key=b"key", value=b"value", timestamp=timestamp) == (
        theirs
    )
    stats = log_stats(theirs).total
    assert (stats.bytes, stats.batch_bytes, stats.records, stats.batches) == (size, size, 1, 1)
    assert stats.message_header_bytes == size - 8
    assert (stats.key_bytes, stats.value_bytes, stats.payload_bytes) == (3, 5, 8)
    assert stats.batch_header_bytes == stats.record_framing_bytes == 0
    assert stats.uncompressed_bytes == size


def test_v2_batch_header():
    """An empty v2 batch is all header: 61 bytes, LOG_OVERHEAD included."""
    builder = DefaultRecordBatchBuilder(2, 0, False, -1, -1, -1, 1 << 20)
    theirs = bytes(builder.build())
    assert len(theirs) == layout.V2_HEADER_SIZE == 61
    assert len(build_record_batch([], base_timestamp=0, max_timestamp=-1)) == 61


def test_v2_record_framing():
    """One v2 record "key"/"value": its varints (length, attributes, deltas, key and value
    lengths, header count) are framing; the batch header is 61 bytes."""
    data = v2([(b"key", b"value", [], T0)])
    record = DefaultRecordBatchBuilder.size_in_bytes(0, 0, b"key", b"value", [])
    assert len(data) == 61 + record
    ours = build_record_batch(
        [RecordSpec(key=b"key", value=b"value")], base_timestamp=T0, max_timestamp=T0
    )
    assert len(ours) == len(data)
    stats = log_stats(data).total
    assert stats.batch_header_bytes == 61
    assert stats.record_framing_bytes == record - 8 == 7
    assert stats.message_header_bytes == 0
    assert stats.payload_bytes == 8
    assert stats.uncompressed_bytes == stats.bytes == len(data)


# --- sizes.py -----------------------------------------------------------------------------------

blobs = st.one_of(st.none(), st.binary(max_size=300))  # lengths past 63: 2-byte varints
header_lists = st.lists(
    st.tuples(st.text(max_size=70), st.one_of(st.none(), st.binary(max_size=200))), max_size=4
)


def test_size_constants_are_kafka_pythons():
    assert LEGACY_RECORD_OVERHEAD == {
        0: LegacyRecordBase.RECORD_OVERHEAD_V0,
        1: LegacyRecordBase.RECORD_OVERHEAD_V1,
    }
    assert MAX_RECORD_OVERHEAD == DefaultRecordBatchBuilder.MAX_RECORD_OVERHEAD == 21
    assert layout.V2_HEADER_SIZE == DefaultRecordBatchBuilder.HEADER_STRUCT.size == 61
    assert LEGACY_MESSAGE_HEADER == {0: 26, 1: 34}


@given(st.integers(-(2**63), 2**63 - 1))
def test_varint_size(value):
    encoded = bytearray()
    encode_varint(value, encoded.append)
    assert varint_size(value) == len(encoded) == size_of_varint(value)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.tuples(blobs, blobs, header_lists, st.integers(-(10**6), 10**9)), min_size=1, max_size=5
    )
)
def test_v2_record_size(records):
    """Each record's size is kafka-python's, and a batch of them is 61 bytes plus their sizes."""
    records = [(k, v, h, T0 + dt) for k, v, h, dt in records]
    first = records[0][3]
    sizes = [v2_record_size(i, t - first, k, v, h) for i, (k, v, h, t) in enumerate(records)]
    assert sizes == [
        DefaultRecordBatchBuilder.size_in_bytes(i, t - first, k, v, h)
        for i, (k, v, h, t) in enumerate(records)
    ]
    assert len(v2(records)) == layout.V2_HEADER_SIZE + sum(sizes)


@given(st.sampled_from([0, 1]), blobs, blobs)
def test_legacy_record_size(magic, key, value):
    """A v0/v1 message as a log entry, LOG_OVERHEAD included: the bytes kafka-python writes."""
    data = legacy(magic, [(key, value, None if magic == 0 else T0)])
    assert legacy_record_size(magic, key, value) == len(data)


@given(st.sampled_from([0, 1, 2]), st.integers(0, 4), blobs, blobs, header_lists)
def test_first_record_upper_bound(magic, codec, key, value, headers):
    """The buffer a producer sizes for a batch's first record, as kafka-python's builders
    estimate it (``estimate_size_in_bytes``, Java's ``estimateSizeInBytesUpperBound``)."""
    if magic == 2:
        theirs = DefaultRecordBatchBuilder.estimate_size_in_bytes(key, value, headers)
    else:
        headers = []
        theirs = LegacyRecordBatchBuilder.estimate_size_in_bytes(magic, codec, key, value)
    assert size_upper_bound(magic, codec, key, value, headers) == theirs


@pytest.mark.parametrize("magic", [0, 1, 2])
def test_batch_header_size(magic):
    """What a batch takes before its records: a v2 batch's header (an empty batch is all
    header); for v0/v1 a gzip wrapper's message up to its compressed value (found by the gzip
    magic in the bytes kafka-python wrote), and nothing for uncompressed messages."""
    if magic == 2:
        empty = bytes(DefaultRecordBatchBuilder(2, 0, False, -1, -1, -1, 1 << 20).build())
        assert [batch_header_size(2, c) for c in range(5)] == [len(empty)] * 5
        return
    wrapper = legacy(magic, [(b"key", b"value", None if magic == 0 else T0)] * 3, codec=1)
    value = wrapper.index(b"\x1f\x8b")
    assert len(gzip.decompress(wrapper[value:])) == 3 * legacy_record_size(magic, b"key", b"value")
    assert batch_header_size(magic, 1) == value
    assert batch_header_size(magic, 0) == 0


# --- any mix of batches -------------------------------------------------------------------------


@dataclass
class Built:
    data: bytes
    batches: int
    records: int
    payload: int
    #: The size of the same data written uncompressed with the same builders.
    uncompressed: int
    batch_headers: int
    message_headers: int
    framing: int
    codecs: dict[str, int]  # codec -> data batches


def _records(draw, magic: int) -> list:
    n = draw(st.integers(1, 8))
    blobs = st.one_of(st.none(), st.binary(max_size=40))
    out = []
    for _ in range(n):
        key, value = draw(blobs), draw(blobs)
        timestamp = None if magic == 0 else T0 + draw(st.integers(-1000, 100_000))
        headers = []
        if magic == 2:
            headers = draw(
                st.lists(
                    st.tuples(st.text(max_size=6), st.one_of(st.none(), st.binary(max_size=8))),
                    max_size=3,
                )
            )
        out.append((key, value, headers, timestamp))
    return out


@st.composite
def logs(draw) -> Built:
    """A record set of batches of any magic and codec, as kafka-python writes them, and what
    the builders' own figures say it holds."""
    parts: list[bytes] = []
    built = Built(b"", 0, 0, 0, 0, 0, 0, 0, {})
    offset = 0
    for _ in range(draw(st.integers(1, 5))):
        magic = draw(st.sampled_from([0, 1, 2]))
        codec = draw(st.sampled_from([0, 1, 2, 3, 4] if magic == 2 else [0, 1, 2, 3]))
        records = _records(draw, magic)
        n = len(records)
        payload = sum(
            len(k or b"") + len(v or b"") + sum(len(hk.encode()) + len(hv or b"") for hk, hv in h)
            for k, v, h, _ in records
        )
        if magic == 2:
            parts.append(v2(records, codec, base_offset=offset))
            # kafka-python writes a batch uncompressed when compressing does not pay: its
            # reader says which codec the bytes have.
            codec = MemoryRecords(parts[-1]).next_batch().compression_type
            plain = v2(records, 0)
            first = records[0][3]
            sizes = sum(
                DefaultRecordBatchBuilder.size_in_bytes(i, t - first, k, v, h)
                for i, (k, v, h, t) in enumerate(records)
            )
            assert len(plain) == 61 + sizes
            built.batches += 1
            built.batch_headers += 61
            built.framing += sizes - payload
            built.uncompressed += len(plain)
        else:
            messages = [(k, v, t) for k, v, _, t in records]
            parts.append(legacy(magic, messages, codec, first_offset=offset))
            plain = legacy(magic, messages, 0, first_offset=offset)
            header = LOG_OVERHEAD + (14, 22)[magic]
            assert len(plain) == n * header + payload
            built.message_headers += n * header
            built.uncompressed += len(plain)
            if codec:
                built.batches += 1
                built.batch_headers += header  # the wrapper: a message with a null key
                built.uncompressed += header
            else:
                built.batches += n
        name = CODEC_NAMES[codec]
        built.codecs[name] = built.codecs.get(name, 0) + (1 if codec or magic == 2 else n)
        built.records += n
        built.payload += payload
        offset += n
    built.data = b"".join(parts)
    return built


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(logs())
def test_stats_accounts_for_every_byte(built: Built):
    stats = log_stats(built.data).total
    assert stats.damage == []
    assert (stats.bytes, stats.batch_bytes) == (len(built.data), len(built.data))
    assert (stats.batches, stats.records) == (built.batches, built.records)
    assert stats.payload_bytes == built.payload
    assert stats.batch_header_bytes == built.batch_headers
    assert stats.message_header_bytes == built.message_headers
    assert stats.record_framing_bytes == built.framing
    assert stats.uncompressed_bytes == built.uncompressed
    assert {c: s.batches for c, s in stats.codecs.items()} == built.codecs
    # What compression saved is exactly the difference between uncompressed and on disk.
    saved = sum(c.uncompressed_bytes - c.compressed_bytes for c in stats.codecs.values())
    assert stats.uncompressed_bytes - saved == stats.batch_bytes


def test_stats_agree_with_kafka_python_reading_the_same_bytes():
    """Batches and records per magic and per codec, as kafka-python's reader finds them."""
    data = b"".join(
        [
            legacy(0, [(b"a", b"1", None)] * 3),
            legacy(1, [(b"b", b"22", T0)] * 4, codec=1, first_offset=3),
            v2([(b"c", b"333", [("h", b"x")], T0)] * 5, codec=3, base_offset=7),
            v2([(None, b"4", [], T0 + 1)] * 2, base_offset=12),
        ]
    )
    by_magic: dict[int, list[int]] = {}
    by_codec: dict[str, list[int]] = {}
    reader = MemoryRecords(data)
    while reader.has_next():
        batch = reader.next_batch()
        count = sum(1 for _ in batch)
        for table, key in (
            (by_magic, batch.magic),
            (by_codec, CODEC_NAMES[batch.compression_type]),
        ):
            entry = table.setdefault(key, [0, 0])
            entry[0] += 1
            entry[1] += count
    stats = log_stats(data).total
    assert {m: [s.batches, s.records] for m, s in stats.magic.items()} == by_magic
    assert {c: [s.batches, s.records] for c, s in stats.codecs.items()} == by_codec
    assert stats.records == 14
