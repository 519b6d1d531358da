"""format/varint.py against kafka-python's varints, the Construct mirror's and Java's rules.

Oracles: kafka-python's ``encode_varint`` / ``decode_varint`` / ``size_of_varint`` (its own
implementation of ``ByteUtils``), the Construct mirror's ``encode_zigzag`` /
``read_zigzag`` (``schemas/varint.py``), and ``ByteUtils.readVarint`` / ``readVarlong`` /
``readUnsignedVarint`` as rules: at most 5 / 10 bytes, bits past the width dropped.
"""

from __future__ import annotations

from io import BytesIO

import pytest
from hypothesis import given
from hypothesis import strategies as st
from kafka.record.util import decode_varint, encode_varint, size_of_varint

from kafka_format.runtime.errors import CorruptBatchError
from kafka_format.runtime.format.varint import (
    encode_unsigned_varint,
    read_unsigned_varint,
    read_varint,
    unsigned_varint_size,
    varint_size,
    zigzag_decode,
    zigzag_encode,
)
from kafka_format.runtime.format.varint import encode_varint as our_encode_varint
from kafka_format.schemas.varint import encode_zigzag, read_zigzag

INT64 = st.integers(-(1 << 63), (1 << 63) - 1)
INT32 = st.integers(-(1 << 31), (1 << 31) - 1)


@given(INT64)
def test_zigzag_varlong_matches_kafka_python_and_the_mirror(value):
    data = our_encode_varint(value)
    assert data == bytes(encode_varint_bytes(value)) == encode_zigzag(value, 64)
    assert varint_size(value) == len(data) == size_of_varint(value)
    assert read_varint(data) == (value, len(data))
    assert decode_varint(bytearray(data), 0) == (value, len(data))
    assert zigzag_decode(zigzag_encode(value)) == value


@given(INT32)
def test_zigzag_varint_is_the_varlong_for_int32_values(value):
    data = our_encode_varint(value, 32)
    assert data == our_encode_varint(value) == encode_zigzag(value, 32)
    assert read_varint(data, bits=32) == (value, len(data))
    assert read_zigzag(BytesIO(data), 5, 32) == value


def encode_varint_bytes(value: int) -> bytearray:
    out = bytearray()
    encode_varint(value, out.append)
    return out


@given(st.binary(min_size=1, max_size=12))
def test_reading_agrees_with_the_mirror_on_any_bytes(data):
    for bits, max_bytes in ((32, 5), (64, 10)):
        try:
            expected = read_zigzag(BytesIO(data), max_bytes, bits)
        except Exception:
            with pytest.raises(CorruptBatchError):
                read_varint(data, bits=bits)
            continue
        value, _ = read_varint(data, bits=bits)
        assert value == expected


def test_too_long_and_cut_varints_are_refused_in_kafkas_words():
    with pytest.raises(CorruptBatchError, match="too long"):
        read_varint(b"\xff" * 5 + b"\x01", bits=32)
    assert read_varint(b"\xff" * 9 + b"\x7f") == (zigzag_decode((1 << 64) - 1), 10)
    with pytest.raises(CorruptBatchError, match="too long"):
        read_varint(b"\xff" * 10 + b"\x01")
    with pytest.raises(CorruptBatchError, match="past the end"):
        read_varint(b"\x80\x80", 0, 2)
    with pytest.raises(ValueError):
        our_encode_varint(1 << 31, 32)


@given(st.integers(0, (1 << 32) - 1))
def test_unsigned_varint_round_trips_as_a_java_int(raw):
    data = encode_unsigned_varint(raw)
    assert unsigned_varint_size(raw) == len(data) <= 5
    java = raw - (1 << 32) if raw >= 1 << 31 else raw
    assert read_unsigned_varint(data) == (java, len(data))
