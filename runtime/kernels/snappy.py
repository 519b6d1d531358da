"""Snappy, as Kafka's clients write it, decoded inside the numba kernels.

Java's client writes snappy-java's xerial framing; librdkafka writes one raw snappy block.
Both are decoded here, into the scratch buffer ``fastscan.decode_sections`` reads the records
from, so that a snappy wrapper or batch never reaches Python (``kernel_payloads`` plans them).
There is no C snappy to call by address as ``kernel_lz4`` calls LZ4's: cramjam's decoder is
Rust behind Python calls, and the system has no libsnappy. The raw format is small, and this
decoder accepts exactly what cramjam's does (``codecs._unsnappy``, the Python path, which
reports the errors): a test holds the two alike on damaged blocks.

Layout (https://github.com/google/snappy/blob/main/format_description.txt)::

    xerial:  82 'SNAPPY' 00 | int32 version | int32 compatible | (int32 BE size | raw block)...
    raw block: varint uncompressed length (at most 2^32 - 1) | elements...
    element, by the low 2 bits of its tag byte:
      00 literal:  length - 1 in tag >> 2 (0..59), or in the next 1..4 bytes LE (60..63);
                   then the bytes
      01 copy:     length 4 + (tag >> 2 & 7), offset (tag >> 5) << 8 | next byte
      10 copy:     length 1 + (tag >> 2), offset: next 2 bytes LE
      11 copy:     length 1 + (tag >> 2), offset: next 4 bytes LE
    a copy repeats ``length`` bytes from ``offset`` bytes back (overlapping when offset < length);
    offset 0, an offset before the block's output, and output other than the stated length
    are errors.

Speed: the common elements are decoded by a 256-entry table and copied 16 bytes at a time,
writing up to :data:`SLACK` bytes past the element (never past the block's room plus
``SLACK``, which the caller's buffer must have); about 80% of cramjam's speed, and in the
kernel it runs on every decoding thread without the GIL.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..format import codecs

# numba's cache checks only this file: see the note in fastscan.py.
from .addresses import be32, le32, le64, memcpy, store_le64, store_u8, u8

__all__ = ["SLACK", "decode_snappy", "snappy_capacity"]

_jit = njit(cache=True)

#: Bytes the decoder may write past the end of a block's output: a caller's buffer has this
#: many beyond the capacity it states, or the decoder takes the byte-by-byte path near its end.
SLACK = 16

_XERIAL_MAGIC = np.frombuffer(codecs.XERIAL_MAGIC, np.uint8).copy()
_XERIAL_HEADER = codecs.XERIAL_HEADER_SIZE
_MAX_EXPANSION = codecs.SNAPPY_MAX_EXPANSION
_MAX_LENGTH = 0xFFFFFFFF


def _element_table() -> np.ndarray:
    """Per tag byte: bytes of trailer after it (bits 11+), the high bits of a one-byte-offset
    copy's offset (bits 8-10), and its length (bits 0-7; 0 for a literal whose length is in
    the trailer)."""
    table = np.zeros(256, np.int64)
    for tag in range(256):
        kind = tag & 3
        if kind == 0:
            length = (tag >> 2) + 1
            table[tag] = ((length - 60) << 11) if length > 60 else length
        elif kind == 1:
            table[tag] = (1 << 11) | ((tag >> 5) << 8) | (4 + ((tag >> 2) & 7))
        elif kind == 2:
            table[tag] = (2 << 11) | ((tag >> 2) + 1)
        else:
            table[tag] = (4 << 11) | ((tag >> 2) + 1)
    return table


_ELEMENTS = _element_table()
_TRAILER_MASK = np.array([0, 0xFF, 0xFFFF, 0xFFFFFF, 0xFFFFFFFF], np.int64)


@njit(cache=True, inline="always")
def _preamble(buf, p, end):
    """The stated uncompressed length of the raw block at ``buf + p:end`` and where its
    elements start, or (-1, p) where the varint is cut short or states more than 2^32 - 1.
    As cramjam reads it: up to 10 bytes, bits shifted past 64 dropped."""
    length = np.int64(0)
    shift = 0
    while p < end:
        b = u8(buf + p)
        p += 1
        if shift < 35:
            length |= (b & 127) << shift
        elif (b & 1 if shift == 63 else b & 127) != 0:
            return np.int64(-1), p
        if b < 128:
            return (length if length <= _MAX_LENGTH else np.int64(-1)), p
        shift += 7
        if shift > 63:
            return np.int64(-1), p
    return np.int64(-1), p


@njit(cache=True, inline="always")
def _is_xerial(buf, start, end):
    if end - start < 8:
        return False
    for i in range(8):  # noqa: SIM110 (numba compiles no generator for all())
        if u8(buf + start + i) != _XERIAL_MAGIC[i]:
            return False
    return True


@_jit
def snappy_capacity(buf, start, end):
    """The bytes the snappy value at ``buf + start:end`` decodes to (exactly: each block
    states its length), or -1 where the Python path would raise before decompressing: bad
    xerial framing, an empty block, a length a block cannot hold."""
    if not _is_xerial(buf, start, end):
        return _block_capacity(buf, start, end)
    if end - start < _XERIAL_HEADER:
        return -1
    total = np.int64(0)
    p = start + _XERIAL_HEADER
    while p < end:
        if end - p < 4:
            return -1
        size = be32(buf, p)
        p += 4
        if size < 0 or size > end - p:
            return -1
        length = _block_capacity(buf, p, p + size)
        if length < 0:
            return -1
        total += length
        p += size
    return total


@njit(cache=True, inline="always")
def _block_capacity(buf, start, end):
    if start >= end:
        return np.int64(-1)
    length, _ = _preamble(buf, start, end)
    if length > _MAX_EXPANSION * (end - start) + 32:
        return np.int64(-1)
    return length


@_jit
def decode_snappy(buf, start, end, dst, capacity, limit):
    """Decode the snappy value :func:`snappy_capacity` accepted into ``dst`` (at most
    ``capacity`` bytes; ``limit``: the address its buffer ends at, ``SLACK`` or more past
    ``dst + capacity`` for the fast path); the bytes written, or -1 where a block does not
    decode."""
    if _is_xerial(buf, start, end):
        p = start + _XERIAL_HEADER
        at = np.int64(0)
        while p < end:
            size = be32(buf, p)
            p += 4
            written = _unsnappy(buf + p, buf + p + size, dst + at, dst + capacity, limit)
            if written < 0:
                return -1
            at += written
            p += size
        return at
    return _unsnappy(buf + start, buf + end, dst, dst + capacity, limit)


@_jit
def _unsnappy(src, end, dst, room_end, limit):
    """One raw block ``src:end`` into ``dst`` (no further than ``room_end``): its length, or
    -1. The fast loop runs while 21 input bytes remain (a tag, a 4-byte trailer, a 16-byte
    literal) and only when the block's output plus ``SLACK`` lies before ``limit``."""
    length, p = _preamble(src, 0, end - src)
    if length < 0 or length > room_end - dst:
        return -1
    p += src
    op = dst
    out_end = dst + length
    fast_in = end - 21 if out_end + SLACK <= limit else p - 1
    while p < end:
        while p <= fast_in:
            tag = u8(p)
            entry = _ELEMENTS[tag]
            trailer_bytes = entry >> 11
            trailer = le32(p + 1) & _TRAILER_MASK[trailer_bytes]
            p += 1 + trailer_bytes
            n = entry & 0xFF
            if tag & 3 == 0:
                if n == 0:
                    n = trailer + 1
                if n > out_end - op or n > end - p:
                    return -1
                if n <= 16:
                    store_le64(op, le64(p))
                    store_le64(op + 8, le64(p + 8))
                else:
                    memcpy(op, p, n)
                op += n
                p += n
                continue
            offset = (entry & 0x700) + trailer
            if offset == 0 or offset > op - dst or n > out_end - op:
                return -1
            s = op - offset
            if offset >= 8:
                # In order, 8 bytes at a time: each load lies 8 or more bytes back, written.
                i = 0
                while i < n:
                    store_le64(op + i, le64(s + i))
                    store_le64(op + i + 8, le64(s + i + 8))
                    i += 16
                op += n
            else:
                # A short pattern repeated: copy it 8 bytes at a time, doubling its distance
                # until 8-byte copies read only what is written.
                stop = op + n
                while op - s < 8:
                    store_le64(op, le64(s))
                    op += op - s
                while op < stop:
                    store_le64(op, le64(s))
                    op += 8
                    s += 8
                op = stop
        if p >= end:
            break
        tag = u8(p)
        p += 1
        kind = tag & 3
        if kind == 0:
            n = (tag >> 2) + 1
            if n > 60:
                extra = n - 60
                if end - p < extra:
                    return -1
                n = 1
                for i in range(extra):
                    n += u8(p + i) << (8 * i)
                p += extra
            if n > end - p or n > out_end - op:
                return -1
            memcpy(op, p, n)
            op += n
            p += n
            continue
        if kind == 1:
            if p >= end:
                return -1
            n = 4 + ((tag >> 2) & 7)
            offset = ((tag >> 5) << 8) | u8(p)
            p += 1
        elif kind == 2:
            if end - p < 2:
                return -1
            n = (tag >> 2) + 1
            offset = u8(p) | (u8(p + 1) << 8)
            p += 2
        else:
            if end - p < 4:
                return -1
            n = (tag >> 2) + 1
            offset = u8(p) | (u8(p + 1) << 8) | (u8(p + 2) << 16) | (u8(p + 3) << 24)
            p += 4
        if offset == 0 or offset > op - dst or n > out_end - op:
            return -1
        for j in range(n):
            store_u8(op + j, u8(op - offset + j))
        op += n
    return length if op == out_end else -1
