"""Kafka's zigzag varint and varlong, as compilable Construct classes.

Layout (Kafka's ByteUtils.readVarint / readVarlong / writeVarint / writeVarlong)::

    byte 0 .. n-1   base-128 groups of the unsigned "raw" value, least significant first;
                    bit 7 set = another byte follows
    varint          at most  5 bytes, raw truncated to 32 bits (Java int)
    varlong         at most 10 bytes, raw truncated to 64 bits (Java long)
    value           zigzag: (raw >>> 1) ^ -(raw & 1)   raw 0,1,2,3,4 -> value 0,-1,1,-2,2

Writers always emit the shortest form. Kafka's v2 records use varint for lengths, counts and
the offset delta, and varlong for the timestamp delta (the one field that can take 10 bytes).
"""

from __future__ import annotations

from construct import Construct, IntegerError, SizeofError

from kafka_format.schemas.construct_ext import Helper

READ_ZIGZAG = Helper(
    "read_zigzag",
    """
def read_zigzag(io, max_bytes, bits):
    data = io.read(1)
    if not data:
        raise StreamError("input ended inside a varint")
    byte = data[0]
    if byte < 0x80:
        return (byte >> 1) ^ -(byte & 1)
    raw = byte & 0x7F
    shift = 7
    for _ in range(max_bytes - 1):
        data = io.read(1)
        if not data:
            raise StreamError("input ended inside a varint")
        byte = data[0]
        raw |= (byte & 0x7F) << shift
        if byte < 0x80:
            # Java accumulates into an int / long: bits beyond the width are dropped
            raw &= (1 << bits) - 1
            return (raw >> 1) ^ -(raw & 1)
        shift += 7
    raise StreamError("varint longer than %d bytes" % (max_bytes,))
""",
)
read_zigzag = READ_ZIGZAG.func


def encode_zigzag(value: int, bits: int = 64) -> bytes:
    """The shortest zigzag base-128 encoding of a signed ``bits``-wide integer."""
    limit = 1 << (bits - 1)
    if not -limit <= value < limit:
        raise IntegerError(f"{value} does not fit a {bits}-bit zigzag varint")
    raw = (value << 1) ^ (value >> (bits - 1))
    out = bytearray()
    while raw >= 0x80:
        out.append((raw & 0x7F) | 0x80)
        raw >>= 7
    out.append(raw)
    return bytes(out)


class ZigZagVarInt(Construct):
    """A zigzag varint (``bits=32``, ≤ 5 bytes) or varlong (``bits=64``, ≤ 10 bytes)."""

    def __init__(self, bits: int) -> None:
        super().__init__()
        if bits not in (32, 64):
            raise ValueError("bits must be 32 or 64")
        self.bits = bits
        self.max_bytes = 5 if bits == 32 else 10

    def _parse(self, stream, context, path):
        return read_zigzag(stream, self.max_bytes, self.bits)

    def _build(self, obj, stream, context, path):
        stream.write(encode_zigzag(obj, self.bits))
        return obj

    def _sizeof(self, context, path):
        raise SizeofError("a varint has no fixed size", path=path)

    def _emitparse(self, code):
        return f"{READ_ZIGZAG.emit(code)}(io, {self.max_bytes}, {self.bits})"

    def __repr__(self) -> str:
        return "VarInt" if self.bits == 32 else "VarLong"


VarInt = ZigZagVarInt(32)
VarLong = ZigZagVarInt(64)
