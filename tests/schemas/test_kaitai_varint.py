"""schemas/varint.ksy (generated Python) against an independent zigzag/base-128 encoder."""

from __future__ import annotations

import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from kaitaistruct import BytesIO, KaitaiStream, ValidationExprError

from kafka_format.generated.kaitai.varint import Varint

INT64 = st.integers(min_value=-(2**63), max_value=2**63 - 1)


def zigzag(v: int) -> int:
    """Kafka's (v << 1) ^ (v >> 63) on a 64-bit long, as an unsigned number."""
    return ((v << 1) ^ (v >> 63)) & 0xFFFF_FFFF_FFFF_FFFF


def base128(u: int) -> bytes:
    out = bytearray()
    while True:
        group = u & 0x7F
        u >>= 7
        if u:
            out.append(group | 0x80)
        else:
            out.append(group)
            return bytes(out)


def parse(data: bytes) -> tuple[Varint, int]:
    io = KaitaiStream(BytesIO(data))
    v = Varint(io)
    return v, io.pos()


@given(INT64, st.binary(max_size=3))
@example(-(2**63), b"")
@example(2**63 - 1, b"")
@example(0, b"")
@example(-1, b"\x80")
@example(2**53 + 1, b"")
def test_decodes_every_int64(v: int, tail: bytes) -> None:
    encoded = base128(zigzag(v))
    parsed, consumed = parse(encoded + tail)
    assert parsed.value == v
    assert parsed.raw == zigzag(v)
    assert consumed == len(encoded)
    assert parsed.groups == list(encoded)


@pytest.mark.parametrize("v", [-(2**63), 2**63 - 1, -(2**62) - 1, 2**62 + 5])
def test_ten_byte_values(v: int) -> None:
    encoded = base128(zigzag(v))
    assert len(encoded) == 10
    assert parse(encoded)[0].value == v


def test_eleventh_byte_is_rejected() -> None:
    # Ten bytes all announcing another: Kafka's "varlong is too long".
    with pytest.raises(ValidationExprError):
        parse(b"\xff" * 10 + b"\x01")


def test_tenth_byte_high_bits_are_dropped_like_java() -> None:
    # Java shifts the 10th byte left by 63: only its lowest bit survives.
    nine = b"\x80" * 9
    assert parse(nine + b"\x01")[0].raw == 2**63
    assert parse(nine + b"\x7f")[0].raw == 2**63
    assert parse(nine + b"\x7e")[0].raw == 0


def test_non_minimal_encodings_decode() -> None:
    # Kafka's reader accepts padded groups; so must the schema.
    assert parse(b"\x82\x80\x00")[0].value == 1
    assert parse(b"\x80\x00")[0].value == 0


def test_truncated_varint_raises() -> None:
    with pytest.raises(EOFError):
        parse(b"\x80\x80")
