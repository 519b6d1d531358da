"""record.ksy, record_list.ksy and record_batch.ksy (generated Python) against v2 bytes built
here by an independent encoder that follows Kafka's DefaultRecord / DefaultRecordBatch."""

from __future__ import annotations

import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kaitaistruct import BytesIO, KaitaiStream, ValidationExprError, ValidationNotEqualError

from kafka_format.generated.kaitai.kafka_enums import KafkaEnums
from kafka_format.generated.kaitai.record import Record
from kafka_format.generated.kaitai.record_batch import RecordBatch
from kafka_format.generated.kaitai.record_list import RecordList


def varint(v: int) -> bytes:
    u = ((v << 1) ^ (v >> 63)) & 0xFFFF_FFFF_FFFF_FFFF
    out = bytearray()
    while u > 0x7F:
        out.append((u & 0x7F) | 0x80)
        u >>= 7
    out.append(u)
    return bytes(out)


def nullable(b: bytes | None) -> bytes:
    return varint(-1) if b is None else varint(len(b)) + b


def encode_record(
    ts_delta: int,
    off_delta: int,
    key: bytes | None,
    value: bytes | None,
    headers: list[tuple[str, bytes | None]],
) -> bytes:
    body = b"\x00" + varint(ts_delta) + varint(off_delta) + nullable(key) + nullable(value)
    body += varint(len(headers))
    for hk, hv in headers:
        raw = hk.encode("utf-8")
        body += varint(len(raw)) + raw + nullable(hv)
    return varint(len(body)) + body


def encode_batch(attributes: int, records_count: int, payload: bytes) -> bytes:
    after_length = struct.pack(
        ">ibIhiqqqhii",
        7,  # partition leader epoch
        2,  # magic
        0xDEADBEEF,  # crc: not checked by the schema
        attributes,
        max(records_count - 1, 0),
        1_700_000_000_000,
        1_700_000_000_999,
        12345,
        3,
        42,
        records_count,
    )
    after_length += payload
    return struct.pack(">qi", 100, len(after_length)) + after_length


def stream(data: bytes) -> KaitaiStream:
    return KaitaiStream(BytesIO(data))


BYTES = st.none() | st.binary(max_size=40)
HEADERS = st.lists(st.tuples(st.text(max_size=10), BYTES), max_size=4)
RECORD = st.tuples(
    st.integers(-(2**63), 2**63 - 1),
    st.integers(-(2**31), 2**31 - 1),
    BYTES,
    BYTES,
    HEADERS,
)


def decoded(rec: Record) -> tuple:
    b = rec.body
    return (
        b.timestamp_delta.value,
        b.offset_delta.value,
        b.key if b.len_key.value >= 0 else None,
        b.value if b.len_value.value >= 0 else None,
        [(h.key, h.value if h.len_value.value >= 0 else None) for h in b.headers],
    )


@given(RECORD)
def test_record_round_trip(fields: tuple) -> None:
    data = encode_record(*fields)
    rec = Record(stream(data))
    assert decoded(rec) == fields
    assert rec.len_body.value == len(data) - len(varint(rec.len_body.value))
    assert rec.body._io.is_eof()


@given(st.lists(RECORD, max_size=6))
@settings(max_examples=50)
def test_record_list_over_plain_bytes(records: list[tuple]) -> None:
    data = b"".join(encode_record(*r) for r in records)
    parsed = RecordList(len(records), stream(data))
    assert [decoded(r) for r in parsed.records] == records


@given(
    codec=st.integers(0, 7),
    log_append=st.booleans(),
    transactional=st.booleans(),
    control=st.booleans(),
    delete_horizon=st.booleans(),
    reserved=st.integers(0, 0x1FF),
    records=st.lists(RECORD, min_size=1, max_size=3),
)
@settings(max_examples=60)
def test_batch_attribute_bits(
    codec: int,
    log_append: bool,
    transactional: bool,
    control: bool,
    delete_horizon: bool,
    reserved: int,
    records: list[tuple],
) -> None:
    attributes = (
        codec
        | log_append << 3
        | transactional << 4
        | control << 5
        | delete_horizon << 6
        | reserved << 7
    )
    attributes -= 0x10000 if attributes & 0x8000 else 0  # int16 on the wire
    payload = b"".join(encode_record(*r) for r in records)
    if codec:
        payload = b"compressed?" + payload  # opaque to the schema
    batch = RecordBatch(stream(encode_batch(attributes, len(records), payload)))
    a = batch.attributes
    assert int(a.compression) == codec
    assert int(a.timestamp_type) == log_append
    assert (a.is_transactional, a.is_control, a.has_delete_horizon) == (
        transactional,
        control,
        delete_horizon,
    )
    assert a.reserved == reserved
    assert (batch.base_offset, batch.partition_leader_epoch, batch.magic) == (100, 7, 2)
    assert (batch.crc, batch.producer_id, batch.producer_epoch) == (0xDEADBEEF, 12345, 3)
    assert (batch.base_sequence, batch.records_count) == (42, len(records))
    assert batch.base_timestamp == 1_700_000_000_000
    assert batch.max_timestamp == 1_700_000_000_999
    assert batch.batch_length - 49 == len(payload)
    if codec == 0:
        assert a.compression == KafkaEnums.CompressionCodec.none
        assert [decoded(r) for r in batch.records.records] == records
        assert not hasattr(batch, "compressed_records")
    else:
        assert batch.compressed_records == payload
        assert not hasattr(batch, "records")


def test_batch_rejects_other_magic() -> None:
    data = bytearray(encode_batch(0, 0, b""))
    data[16] = 1
    with pytest.raises(ValidationNotEqualError):
        RecordBatch(stream(bytes(data)))


def test_negative_header_count_is_rejected() -> None:
    body = b"\x00" + varint(0) + varint(0) + varint(-1) + varint(-1) + varint(-2)
    with pytest.raises(ValidationExprError):
        Record(stream(varint(len(body)) + body))
