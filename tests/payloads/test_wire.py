"""Confluent's wire format (runtime/payloads/wire.py): the header, the Protobuf message indexes
and ``frame``, their inverse.

Oracles:

* Confluent's Python client: its ``SchemaId`` writes and reads the same framing
  (``id_to_bytes``, ``from_bytes``, zigzag varints), and its serializers' output is checked
  byte for byte against :func:`frame`;
* the bytes of ``MessageIndexes.toByteArray`` (protobuf-provider, MessageIndexes.java) worked
  out by hand: ``[0]`` is the single byte 0, ``[1, 0]`` is count 2 (zigzag 4), 1 (2), 0 (0);
* hypothesis: any id, payload and indexes frame and read back to themselves.
"""

from __future__ import annotations

import io
import struct

import pytest
from confluent_kafka.schema_registry.common.serde import SchemaId
from hypothesis import given
from hypothesis import strategies as st

from kafka_format.runtime.payloads.wire import (
    HEADER_SIZE,
    WireFormatError,
    encode_message_indexes,
    frame,
    read_header,
    read_message_indexes,
    resolve_references,
    schema_label,
)

INT32 = st.integers(min_value=-(1 << 31), max_value=(1 << 31) - 1)
IDS = st.integers(min_value=0, max_value=(1 << 31) - 1)


def test_header_of_a_framed_payload():
    assert read_header(b"\x00\x00\x00\x01\x02rest") == 258
    assert read_header(frame(7, b"")) == 7


@pytest.mark.parametrize(
    ("data", "error"),
    [
        (b"", "0 bytes, fewer than the 5 of Confluent wire format's header"),
        (b"\x00", "1 byte, fewer than the 5"),
        (b"\x00\x00\x01", "3 bytes, fewer than the 5"),
        (b"\x01\x00\x00\x00\x07payload", "magic byte 1, not 0 (Confluent wire format)"),
        (b"\x05", "magic byte 5, not 0 (Confluent wire format)"),
        (b'{"json": true}', "magic byte 123, not 0"),
    ],
)
def test_unframed_bytes_are_refused(data, error):
    with pytest.raises(WireFormatError) as raised:
        read_header(data)
    assert error in str(raised.value)


@pytest.mark.parametrize(
    ("indexes", "encoded"),
    [
        ([0], b"\x00"),  # MessageIndexes.toByteArray's optimization
        ([], b"\x00"),  # the serializer writes DEFAULT_INDEX for an empty list
        ([1], b"\x02\x02"),
        ([1, 0], b"\x04\x02\x00"),
        ([0, 0], b"\x04\x00\x00"),
        ([64], b"\x02\x80\x01"),
        ([-1], b"\x02\x01"),
    ],
)
def test_message_indexes_as_confluent_writes_them(indexes, encoded):
    assert encode_message_indexes(indexes) == encoded
    buf = io.BytesIO()  # Confluent's Python client writes the same bytes
    SchemaId._encode_varints(buf, indexes or [0])
    assert buf.getvalue() == encoded


def test_message_indexes_read_back():
    assert read_message_indexes(frame(1, b"p", [0])) == ((0,), 6)
    assert read_message_indexes(frame(1, b"p", [1, 0])) == ((1, 0), 8)
    # The long form of [0] (count 1, then 0) is [0] too.
    assert read_message_indexes(b"\x00\x00\x00\x00\x01\x02\x00p") == ((0,), 7)


@pytest.mark.parametrize(
    ("after_header", "error"),
    [
        (b"", "end inside a varint"),
        (b"\x80", "end inside a varint"),
        (b"\x02\x82", "end inside a varint"),  # count 1, an index that goes on
        (b"\x04\x02", "count 2, but 1 byte follows"),
        (b"\x7e", "count 63, but 0 bytes follow"),
        (b"\x7f", "count -64"),
        (b"\xfe\xff\xff\xff\x0f" + b"\x00" * 10, "count 2147483647, but 10 bytes follow"),
        (b"\x01", "count -1"),
        (b"\x80\x80\x80\x80\x80\x01", "longer than 5 bytes"),
    ],
)
def test_damaged_message_indexes_are_refused(after_header, error):
    with pytest.raises(WireFormatError) as raised:
        read_message_indexes(b"\x00\x00\x00\x00\x01" + after_header)
    assert error in str(raised.value)


def test_huge_count_is_refused_without_allocating():
    """A count the remaining bytes cannot hold is refused before anything is sized by it."""
    data = b"\x00\x00\x00\x00\x01" + b"\xfe\xff\xff\xff\x0f"
    with pytest.raises(WireFormatError, match="2147483647"):
        read_message_indexes(data)


def test_frame_refuses_what_is_no_int32():
    with pytest.raises(ValueError):
        frame(1 << 31, b"")
    with pytest.raises(ValueError):
        encode_message_indexes([1 << 31])


def test_frame_matches_confluents_schema_id():
    sid = SchemaId("AVRO", 12345)
    assert frame(12345, b"") == sid.id_to_bytes()
    sid = SchemaId("PROTOBUF", 9, message_indexes=[2, 3, 1])
    assert frame(9, b"", [2, 3, 1]) == sid.id_to_bytes()


@given(IDS, st.binary(max_size=64))
def test_frame_round_trips_without_indexes(schema_id, payload):
    data = frame(schema_id, payload)
    assert data[:HEADER_SIZE] == b"\x00" + struct.pack(">i", schema_id)
    assert read_header(data) == schema_id
    assert data[HEADER_SIZE:] == payload


@given(IDS, st.lists(INT32, min_size=1, max_size=20), st.binary(max_size=64))
def test_frame_round_trips_with_indexes(schema_id, indexes, payload):
    data = frame(schema_id, payload, indexes)
    assert read_header(data) == schema_id
    read, start = read_message_indexes(data)
    assert list(read) == indexes
    assert data[start:] == payload
    # Confluent's own reader agrees.
    stream = io.BytesIO(data)
    sid = SchemaId("PROTOBUF")
    sid.from_bytes(stream)
    assert sid.id == schema_id and sid.message_indexes == indexes
    assert stream.read() == payload


@given(st.binary(max_size=40))
def test_any_bytes_read_or_refuse_but_never_overrun(data):
    try:
        schema_id = read_header(data)
    except WireFormatError:
        assert len(data) < HEADER_SIZE or data[0] != 0
        return
    assert len(data) >= HEADER_SIZE and data[0] == 0
    assert frame(schema_id, data[HEADER_SIZE:]) == data
    try:
        indexes, start = read_message_indexes(data)
    except WireFormatError:
        return
    assert HEADER_SIZE < start <= len(data)
    assert len(indexes) <= len(data)


class _Ref:
    def __init__(self, name, subject, version):
        self.name, self.subject, self.version = name, subject, version


class _Schema:
    def __init__(self, subject, refs=(), schema_id=1):
        self.id, self.subject, self.version, self.references = schema_id, subject, 1, refs


class _Source:
    description = "three schemas"

    def __init__(self, schemas):
        self.schemas = schemas
        self.asked = []

    def reference(self, ref, parent=None):
        self.asked.append(ref.name)
        return self.schemas.get(ref.subject)


def test_references_come_depth_first_once_each():
    """AbstractSchemaProvider.resolveReferences: a reference's own references first, each
    name once however many schemas import it."""
    leaf = _Schema("leaf")
    mid = _Schema("mid", (_Ref("Leaf", "leaf", 1),))
    other = _Schema("other", (_Ref("Leaf", "leaf", 1),))
    top = _Schema("top", (_Ref("Mid", "mid", 1), _Ref("Other", "other", 1), _Ref("x", "x", 1)))
    source = _Source({"leaf": leaf, "mid": mid, "other": other})
    with pytest.raises(Exception, match=r"refers to x \(subject x v1\), which is not in three"):
        resolve_references(source, top)
    top.references = top.references[:2]
    assert [n for n, _ in resolve_references(source, top)] == ["Leaf", "Mid", "Other"]
    source.asked.clear()
    found = resolve_references(source, top, skip=lambda name: name == "Mid")
    assert [n for n, _ in found] == ["Leaf", "Other"] and "Mid" not in source.asked


def test_schema_label():
    assert schema_label(_Schema("orders-value", schema_id=7)) == (
        "schema id 7 (subject orders-value v1)"
    )
