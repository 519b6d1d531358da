"""Checksums Kafka stores in its record formats, and the xxh32 that LZ4 frame headers use.

Every function takes any contiguous buffer (bytes, bytearray, memoryview, mmap) and never
copies it: ``zlib.crc32`` and ``crc32c.crc32c`` read the buffer in place and release the GIL
on large inputs.

Frame helpers take a *frame*: the bytes of one log entry starting at its offset field, exactly as
it lies in a ``.log`` segment (int64 offset, int32 length, then ``length`` bytes). In both
layouts the magic byte sits at position 16:

======  ==========================================  ==========  =================
magic   layout up to the checksummed part            stored CRC  CRC covers
======  ==========================================  ==========  =================
0, 1    offset(8) size(4) crc(4) magic(1) ...        bytes 12-16 byte 16 (magic)..end, CRC-32
2       base_offset(8) length(4) leader_epoch(4)     bytes 17-21 byte 21 (attributes)..end,
        magic(1) crc(4) attributes(2) ...                        CRC-32C
======  ==========================================  ==========  =================
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass

import crc32c as _crc32c

from ..errors import CorruptBatchError, CrcMismatchError
from . import layout
from .layout import LEGACY_CRC_START

__all__ = [
    "LEGACY_CRC_START",
    "FrameCrc",
    "crc32",
    "crc32c",
    "frame_crc",
    "legacy_message_crc",
    "record_batch_crc",
    "stored_crc",
    "verify_frame_crc",
    "xxh32",
]

_BASE_OFFSET = layout.field_struct(layout.FRAME_HEADER_FIELDS, "base_offset")

_U32 = struct.Struct(">I")
_MASK32 = 0xFFFFFFFF


def crc32(data) -> int:
    """CRC-32 (ISO-HDLC, as zlib and Java's ``java.util.zip.CRC32``) of a buffer."""
    return zlib.crc32(data) & _MASK32


def crc32c(data, value: int = 0) -> int:
    """CRC-32C (Castagnoli), hardware accelerated where the CPU has an instruction for it;
    ``value`` is the CRC of the bytes before ``data``, to carry one over several parts."""
    return _crc32c.crc32c(data, value)


def legacy_message_crc(frame) -> int:
    """Computed CRC-32 of a magic 0/1 message: over the magic byte to the end of the frame."""
    view = _frame_view(frame, LEGACY_CRC_START + 1)
    return crc32(view[LEGACY_CRC_START:])


def record_batch_crc(frame) -> int:
    """Computed CRC-32C of a magic 2 record batch: over the attributes to the end of the frame."""
    view = _frame_view(frame, layout.V2_CRC_START)
    return crc32c(view[layout.V2_CRC_START :])


def stored_crc(frame) -> int:
    """The CRC the writer stored in the frame, at the place its magic byte says."""
    view = _frame_view(frame, layout.FRAME_MAGIC + 1)
    magic = view[layout.FRAME_MAGIC]
    if magic in (0, 1):
        return _U32.unpack_from(view, layout.LEGACY_CRC)[0]
    if magic == 2:
        _frame_view(view, layout.V2_CRC_START)
        return _U32.unpack_from(view, layout.V2_CRC)[0]
    raise CorruptBatchError(f"unknown magic {magic}: no CRC layout for it")


@dataclass(frozen=True, slots=True)
class FrameCrc:
    """Stored against computed checksum of one frame."""

    stored: int
    computed: int
    algorithm: str  # "crc32" (magic 0/1) or "crc32c" (magic 2)

    @property
    def valid(self) -> bool:
        return self.stored == self.computed


def frame_crc(frame) -> FrameCrc:
    """Stored and computed CRC of a frame of any magic (0, 1 or 2)."""
    view = _frame_view(frame, layout.FRAME_MAGIC + 1)
    magic = view[layout.FRAME_MAGIC]
    if magic == 2:
        return FrameCrc(stored_crc(view), record_batch_crc(view), layout.V2_CRC_ALGORITHM)
    if magic in (0, 1):
        return FrameCrc(stored_crc(view), legacy_message_crc(view), layout.LEGACY_CRC_ALGORITHM)
    raise CorruptBatchError(f"unknown magic {magic}: no CRC layout for it")


def verify_frame_crc(frame, *, file: str | None = None, position: int | None = None) -> FrameCrc:
    """Return the frame's checksums, or raise CrcMismatchError naming both values."""
    result = frame_crc(frame)
    if not result.valid:
        view = memoryview(frame)
        base_offset = _BASE_OFFSET.unpack_from(view, layout.FRAME_BASE_OFFSET)[0]
        raise CrcMismatchError(
            result.stored,
            result.computed,
            algorithm=result.algorithm,
            file=file,
            position=position,
            base_offset=base_offset,
        )
    return result


def _frame_view(frame, minimum: int) -> memoryview:
    view = memoryview(frame).cast("B")
    if len(view) < minimum:
        raise CorruptBatchError(
            f"frame of {len(view)} bytes is too short to hold its CRC (needs {minimum})"
        )
    return view


# xxh32 (https://github.com/Cyan4973/xxHash/blob/dev/doc/xxhash_spec.md). LZ4 frame headers carry
# one byte of it; Kafka 0.8/0.9 computed that byte over the wrong range (KAFKA-3160), so we must
# compute it ourselves. Pure Python: meant for short inputs such as frame descriptors.
_P1 = 0x9E3779B1
_P2 = 0x85EBCA77
_P3 = 0xC2B2AE3D
_P4 = 0x27D4EB2F
_P5 = 0x165667B1


def _rotl(x: int, r: int) -> int:
    return ((x << r) | (x >> (32 - r))) & _MASK32


def _round(acc: int, lane: int) -> int:
    return (_rotl((acc + lane * _P2) & _MASK32, 13) * _P1) & _MASK32


def xxh32(data, seed: int = 0) -> int:
    """xxHash32 of a buffer; slow (pure Python), for headers and other short inputs."""
    view = memoryview(data).cast("B")
    n = len(view)
    pos = 0
    if n >= 16:
        v1 = (seed + _P1 + _P2) & _MASK32
        v2 = (seed + _P2) & _MASK32
        v3 = seed & _MASK32
        v4 = (seed - _P1) & _MASK32
        stripes_end = n - n % 16
        for a, b, c, d in struct.iter_unpack("<4I", view[:stripes_end]):
            v1 = _round(v1, a)
            v2 = _round(v2, b)
            v3 = _round(v3, c)
            v4 = _round(v4, d)
        pos = stripes_end
        h = (_rotl(v1, 1) + _rotl(v2, 7) + _rotl(v3, 12) + _rotl(v4, 18)) & _MASK32
    else:
        h = (seed + _P5) & _MASK32
    h = (h + n) & _MASK32
    while pos + 4 <= n:
        (lane,) = struct.unpack_from("<I", view, pos)
        h = (_rotl((h + lane * _P3) & _MASK32, 17) * _P4) & _MASK32
        pos += 4
    while pos < n:
        h = (_rotl((h + view[pos] * _P5) & _MASK32, 11) * _P1) & _MASK32
        pos += 1
    h ^= h >> 15
    h = (h * _P2) & _MASK32
    h ^= h >> 13
    h = (h * _P3) & _MASK32
    h ^= h >> 16
    return h
