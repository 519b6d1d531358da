"""Kafka's variable-length integers, the Python side's one implementation.

Two kinds, both base-128 groups least significant first, bit 7 set when another byte follows
(Kafka's ``ByteUtils``)::

    zigzag varint / varlong   v2 records: lengths, counts, deltas     value -> (v << 1) ^ (v >> 63)
                              (readVarint / readVarlong, <= 5 / 10 bytes)
    unsigned varint           flexible message versions (KIP-482): compact lengths and tagged
                              fields (readUnsignedVarint, <= 5 bytes, a Java int)

Kafka's int32 and int64 zigzag agree on every value that fits an int32, so one encoder and one
size function serve both. The numba kernels keep their own reader (``kernels.fastscan``), which
must accept exactly what :func:`read_varint` accepts.
"""

from __future__ import annotations

from ..errors import CorruptBatchError

__all__ = [
    "encode_unsigned_varint",
    "encode_varint",
    "read_unsigned_varint",
    "read_varint",
    "unsigned_varint_size",
    "varint_size",
    "zigzag_decode",
    "zigzag_encode",
]

#: Most bytes of a varint (int32) and of a varlong (int64).
MAX_VARINT_BYTES = 5
MAX_VARLONG_BYTES = 10


def zigzag_encode(value: int, bits: int = 64) -> int:
    """The unsigned "raw" value Kafka writes for a signed ``bits``-wide ``value``."""
    limit = 1 << (bits - 1)
    if not -limit <= value < limit:
        raise ValueError(f"{value} does not fit a {bits}-bit zigzag varint")
    return (value << 1) ^ (value >> (bits - 1))


def zigzag_decode(raw: int) -> int:
    """The signed value of a zigzag raw value: raw 0, 1, 2, 3, 4 -> 0, -1, 1, -2, 2."""
    return (raw >> 1) ^ -(raw & 1)


def encode_unsigned_varint(raw: int) -> bytes:
    """The base-128 bytes of a non-negative ``raw`` (shortest form, as Kafka writes)."""
    if raw < 0:
        raise ValueError(f"unsigned varint of negative {raw}")
    out = bytearray()
    while raw >= 0x80:
        out.append((raw & 0x7F) | 0x80)
        raw >>= 7
    out.append(raw)
    return bytes(out)


def encode_varint(value: int, bits: int = 64) -> bytes:
    """``ByteUtils.writeVarint`` (``bits=32``) / ``writeVarlong`` (``bits=64``)."""
    return encode_unsigned_varint(zigzag_encode(value, bits))


def unsigned_varint_size(raw: int) -> int:
    """Bytes of a non-negative ``raw`` as a base-128 varint."""
    size = 1
    while raw >= 0x80:
        raw >>= 7
        size += 1
    return size


def varint_size(value: int) -> int:
    """Bytes of ``value`` as a zigzag varint (``ByteUtils.sizeOfVarlong``), for any int64."""
    return unsigned_varint_size((value << 1) ^ (value >> 63))


def _read_raw(buf, pos: int, end: int, max_bytes: int, what: str) -> tuple[int, int]:
    raw = shift = 0
    for _ in range(max_bytes):
        if pos >= end:
            raise CorruptBatchError(f"{what} runs past the end at byte {pos}")
        byte = buf[pos]
        pos += 1
        raw |= (byte & 0x7F) << shift
        if byte < 0x80:
            return raw, pos
        shift += 7
    raise CorruptBatchError(
        f"{what} at byte {pos - max_bytes} is too long: the most significant bit of its "
        f"byte {max_bytes} is set"
    )


def read_varint(
    buf, pos: int = 0, end: int | None = None, *, bits: int = 64, what: str = "varint"
) -> tuple[int, int]:
    """(value, position after it) of the zigzag varint (``bits=32``, <= 5 bytes) or varlong
    (``bits=64``, <= 10 bytes) at ``buf[pos]``; bits beyond the width are dropped, as Java's
    int / long accumulator drops them. CorruptBatchError when it runs past ``end`` or is too
    long."""
    end = len(buf) if end is None else end
    max_bytes = MAX_VARINT_BYTES if bits == 32 else MAX_VARLONG_BYTES
    raw, pos = _read_raw(buf, pos, end, max_bytes, what)
    return zigzag_decode(raw & ((1 << bits) - 1)), pos


def read_unsigned_varint(
    buf, pos: int = 0, end: int | None = None, *, what: str = "unsigned varint"
) -> tuple[int, int]:
    """(value, position after it) of ``ByteUtils.readUnsignedVarint``: at most 5 bytes, the
    result a Java int (so above 2^31 - 1 it comes out negative, as in Java)."""
    end = len(buf) if end is None else end
    raw, pos = _read_raw(buf, pos, end, MAX_VARINT_BYTES, what)
    raw &= 0xFFFFFFFF
    return (raw - (1 << 32) if raw & 0x80000000 else raw), pos
