"""Damaged input: the Construct schemas refuse it, compiled exactly as interpreted.

Construct's own compiled code reads with a bare io.read(n) and would return short data at the
end of input; these tests pin down that our compiled parsers fail wherever the interpreted
ones do (and as Kafka's reader does), instead of returning something quietly wrong.
"""

from __future__ import annotations

import pytest
from construct import CheckError, ConstError, ConstructError, StreamError

from kafka_format.schemas import compiled
from kafka_format.schemas.legacy_message import build_legacy_message
from kafka_format.schemas.offset_index import build_offset_index
from kafka_format.schemas.producer_snapshot import build_producer_snapshot
from kafka_format.schemas.record_batch import build_record_batch
from kafka_format.schemas.record_set import build_record_set
from kafka_format.schemas.varint import VarInt, encode_zigzag

RECORDS = [
    {"key": b"k1", "value": b"v1", "headers": [("h", b"x")], "offset_delta": 0},
    {"key": None, "value": b"", "headers": [], "offset_delta": 1, "timestamp_delta": -5},
]


def _both_fail(name: str, data: bytes, error: type[Exception] = ConstructError, **context):
    with pytest.raises(error):
        compiled.schema(name).parse(data, **context)
    with pytest.raises(error):
        compiled.parse(name, data, **context)


def test_every_truncation_of_a_batch_fails() -> None:
    data = build_record_batch(RECORDS, base_timestamp=10)
    for cut in range(len(data)):
        _both_fail("record_batch", data[:cut])
    for cut in range(len(build_legacy_message(key=b"k", value=b"v"))):
        _both_fail("legacy_message", build_legacy_message(key=b"k", value=b"v")[:cut])


def test_record_length_must_match_its_fields() -> None:
    data = bytearray(build_record_batch(RECORDS[:1]))
    assert data[61] == encode_zigzag(len(data) - 62)[0]
    for wrong in (len(data) - 63, len(data) - 61):
        broken = data[:61] + encode_zigzag(wrong) + data[62:]
        _both_fail("record_batch", bytes(broken), (CheckError, StreamError))


def test_varints_longer_than_kafka_allows_fail() -> None:
    # offset_delta is a varint (5 bytes at most): a 6-byte form of 0 is refused
    record = bytes([0x00]) + encode_zigzag(0) + b"\x80\x80\x80\x80\x80\x00" + b"\x01\x01\x00"
    data = encode_zigzag(len(record)) + record
    _both_fail("record", data, StreamError)
    _both_fail("varint", b"\x80" * 10 + b"\x00", StreamError)  # varlong: 10 bytes at most
    # Java drops bits beyond the width: 0xff ff ff ff 7f is int32 -2^31, not -2^34
    assert VarInt.parse(b"\xff\xff\xff\xff\x7f") == -(2**31)
    assert VarInt.compile().parse(b"\xff\xff\xff\xff\x7f") == -(2**31)
    assert compiled.parse("varint", b"\xff" * 9 + b"\x7f") == -(2**63)


def test_negative_counts_and_lengths_fail() -> None:
    # a header key with length -1
    record = b"\x00\x00\x00\x01\x01\x02" + encode_zigzag(-1)
    _both_fail("record", encode_zigzag(len(record)) + record, CheckError)
    # headers_count -1
    record = b"\x00\x00\x00\x01\x01" + encode_zigzag(-1)
    _both_fail("record", encode_zigzag(len(record)) + record, CheckError)
    # batch_length below the header size; records_count negative
    data = bytearray(build_record_batch([]))
    _both_fail("record_batch", bytes(data[:8] + (48).to_bytes(4, "big") + data[12:]), CheckError)
    _both_fail("record_batch", bytes(data[:57] + b"\xff\xff\xff\xff" + data[61:]), CheckError)
    snapshot = build_producer_snapshot([])
    _both_fail("producer_snapshot", snapshot[:6] + b"\xff\xff\xff\xff", CheckError)


def test_magic_is_checked() -> None:
    batch = bytearray(build_record_batch(RECORDS))
    batch[16] = 1
    _both_fail("record_batch", bytes(batch), ConstError)
    message = bytearray(build_legacy_message(key=b"k", value=b"v"))
    message[16] = 2
    _both_fail("legacy_message", bytes(message), CheckError)


def test_record_set_frames() -> None:
    batch = build_record_batch(RECORDS)
    message = build_legacy_message(value=b"v", magic=0)
    # a length below 14 is corruption, not a partial tail
    short = message[:8] + (13).to_bytes(4, "big") + message[12:]
    _both_fail("record_set", build_record_set([batch, short]), CheckError)
    # an unknown magic leaves the frame as raw bytes, as record_set.ksy does
    odd = bytearray(message)
    odd[16] = 9
    data = build_record_set([batch, bytes(odd)], trailing=batch[:30])
    parsed = compiled.parse("record_set", data)
    assert parsed == compiled.schema("record_set").parse(data)
    assert [f.magic for f in parsed.frames] == [2, 9]
    assert parsed.frames[1].body == bytes(odd)
    assert parsed.trailing == batch[:30]


def test_partial_index_entry_fails() -> None:
    data = build_offset_index([(1, 2), (3, 4)])
    _both_fail("offset_index", data + b"\x00", CheckError)
    assert compiled.parse("offset_index", b"").entries == []
