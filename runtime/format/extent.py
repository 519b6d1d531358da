"""Where a batch really ends when its length field cannot be trusted: from its own bytes.

A batch's CRC does not cover its length field (v2: CRC-32C from the attributes on, byte 21;
v0/v1: CRC-32 from the magic on, byte 16; ``DefaultRecordBatch.java`` and
``LegacyRecord.java``), so a length field broken alone leaves a batch whose other bytes still
prove where it ends:

* an uncompressed v2 batch frames its records itself: ``recordsCount`` records, each a varint
  length and that many bytes (``DefaultRecord.readFrom``), from byte 61 on;
* an uncompressed v0/v1 message holds a key and a value, each an int32 length and its bytes
  (``LegacyRecord``: ``keySize``, ``valueSize``);
* a compressed batch's payload frames nothing the walker can read without decompressing it:
  its end is one of the positions where a whole batch starts after it, or the end of the
  data, and only its CRC can tell which.

:func:`proven_end` gives the end where the stored CRC holds over the bytes up to it: the batch
is then whole and only its length field lied. A record is only ever delivered from bytes that
are a batch of the log, so a salvaging walk that finds such an end resumes *after* it, never at
a batch embedded in one of its values (a value may hold any bytes, a whole batch included).
Nothing is allocated on the word of a count or a length: every step is checked against the
bytes that exist, and a walk costs at most a pass over the bytes it looks at.
"""

from __future__ import annotations

import struct
import zlib

from . import layout
from .crc import crc32c
from .resync import resync
from .varint import MAX_VARINT_BYTES

__all__ = ["framed_end", "proven_end", "repaired_frame"]

_COUNT = layout.field_struct(layout.V2_HEADER_FIELDS, "records_count")
_ATTRIBUTES = layout.field_struct(layout.V2_HEADER_FIELDS, "attributes")
_CRC = layout.field_struct(layout.V2_HEADER_FIELDS, "crc")
_LENGTH = layout.field_struct(layout.FRAME_HEADER_FIELDS, "length")
_INT32 = struct.Struct(">i")
#: The least a v2 record's body takes after its length: attributes, timestamp delta, offset
#: delta, key and value lengths and header count, a byte each (``DefaultRecord.readFrom``).
_MIN_RECORD_BODY = 6
#: Positions after a compressed batch tried as its end before giving up: each is the start of
#: a whole batch, so this bounds the CRC work to that many batches beyond the true end.
_MAX_CANDIDATES = 64


def proven_end(view: memoryview, pos: int, limit: int, *, before: int | None = None) -> int | None:
    """The end of the batch at ``pos`` (its magic valid, its header within ``limit``) proved by
    its stored CRC, which does not cover the length field: where its own framing of its
    records ends (uncompressed), or the first position after it where a whole batch starts or
    the data ends (compressed). None when no end holds. ``before``: only ends below it are
    looked at (a caller that knows the length field's end already failed)."""
    magic = view[pos + layout.FRAME_MAGIC]
    if magic == 2:
        if limit - pos < layout.V2_HEADER_SIZE:
            return None
        attributes = _ATTRIBUTES.unpack_from(view, pos + layout.V2_ATTRIBUTES)[0]
        codec = attributes & layout.V2_ATTR_COMPRESSION_MASK
        start, stored = pos + layout.V2_CRC_START, _CRC.unpack_from(view, pos + layout.V2_CRC)[0]
        if codec == 0:
            end = _v2_records_end(view, pos, limit)
            return end if _fits(end, before) and _holds_c(view, start, end, stored) else None
        return _searched_end(view, pos, limit, before, start, stored, v2=True)
    if magic not in (0, 1):
        return None
    if limit - pos < (layout.LEGACY_V0_FIXED_SIZE if magic == 0 else layout.LEGACY_V1_FIXED_SIZE):
        return None
    start = pos + layout.LEGACY_CRC_START
    stored = _CRC.unpack_from(view, pos + layout.LEGACY_CRC)[0]
    if view[pos + layout.LEGACY_ATTRIBUTES] & layout.LEGACY_ATTR_COMPRESSION_MASK == 0:
        end = _legacy_end(view, pos, limit, magic)
        ok = _fits(end, before) and zlib.crc32(view[start:end]) == stored
        return end if ok else None
    return _searched_end(view, pos, limit, before, start, stored, v2=False)


def framed_end(view: memoryview, pos: int, limit: int) -> int | None:
    """Where the records of the uncompressed batch at ``pos`` end by their own framing alone
    (its CRC unchecked), or None: compressed, or the framing breaks or runs past ``limit``.
    Evidence of the batch's extent when its CRC fails too, to be confirmed by what follows."""
    magic = view[pos + layout.FRAME_MAGIC]
    if magic == 2:
        if limit - pos < layout.V2_HEADER_SIZE:
            return None
        attributes = _ATTRIBUTES.unpack_from(view, pos + layout.V2_ATTRIBUTES)[0]
        codec = attributes & layout.V2_ATTR_COMPRESSION_MASK
        return _v2_records_end(view, pos, limit) if codec == 0 else None
    if magic not in (0, 1):
        return None
    if limit - pos < (layout.LEGACY_V0_FIXED_SIZE if magic == 0 else layout.LEGACY_V1_FIXED_SIZE):
        return None
    if view[pos + layout.LEGACY_ATTRIBUTES] & layout.LEGACY_ATTR_COMPRESSION_MASK:
        return None
    return _legacy_end(view, pos, limit, magic)


def repaired_frame(view: memoryview, pos: int, end: int) -> bytes:
    """The batch ``view[pos:end]`` with its length field set to what its bytes prove: what a
    recovered copy writes, so that a broker frames it (the CRC is unchanged: it never covered
    the length)."""
    data = bytearray(view[pos:end])
    _LENGTH.pack_into(data, layout.FRAME_LENGTH, end - pos - layout.LOG_OVERHEAD)
    return bytes(data)


def _fits(end: int | None, before: int | None) -> bool:
    return end is not None and (before is None or end < before)


def _holds_c(view: memoryview, start: int, end: int, stored: int) -> bool:
    return crc32c(view[start:end]) == stored


def _v2_records_end(view: memoryview, pos: int, limit: int) -> int | None:
    """Where ``recordsCount`` records framed by their varint lengths end, or None when the
    framing breaks or runs past ``limit``. Each record takes at least 7 bytes, so the loop
    ends within (limit - pos) / 7 steps whatever the count says."""
    count = _COUNT.unpack_from(view, pos + layout.V2_RECORDS_COUNT)[0]
    if count < 0:
        return None
    p = pos + layout.V2_HEADER_SIZE
    for _ in range(count):
        raw, shift, k = 0, 0, 0
        while True:
            if p + k >= limit or k == MAX_VARINT_BYTES:
                return None
            byte = view[p + k]
            raw |= (byte & 0x7F) << shift
            k += 1
            if byte < 0x80:
                break
            shift += 7
        length = (raw >> 1) ^ -(raw & 1)
        if length < _MIN_RECORD_BODY:
            return None
        p += k + length
        if p > limit:
            return None
    return p


def _legacy_end(view: memoryview, pos: int, limit: int, magic: int) -> int | None:
    """Where an uncompressed v0/v1 message's key and value end, or None."""
    at = pos + (layout.LEGACY_V0_LEN_KEY if magic == 0 else layout.LEGACY_V1_LEN_KEY)
    for _ in range(2):  # the key, then the value
        if at + _INT32.size > limit:
            return None
        size = _INT32.unpack_from(view, at)[0]
        if size < -1:
            return None
        at += _INT32.size + max(size, 0)
    return at if at <= limit else None


def _searched_end(
    view: memoryview,
    pos: int,
    limit: int,
    before: int | None,
    start: int,
    stored: int,
    *,
    v2: bool,
) -> int | None:
    """A compressed batch's end: the first candidate (a whole batch's start after it, or the
    end of the data) where its CRC holds, the CRC carried from one candidate to the next so
    the bytes are summed once."""
    stop = limit if before is None else min(limit, before)
    least = pos + (layout.V2_HEADER_SIZE if v2 else layout.LEGACY_V0_FIXED_SIZE)
    crc, done, candidate = 0, start, least
    for _ in range(_MAX_CANDIDATES):
        # candidates start before ``stop``; the batch there may run on to ``limit``
        found = resync(view, candidate, limit, window=max(stop - candidate, 0))
        candidate = stop if found is None else found
        if candidate < least:
            return None
        part = view[done:candidate]
        crc = crc32c(part, crc) if v2 else zlib.crc32(part, crc)
        done = candidate
        if crc == stored and (before is None or candidate < before):
            return candidate
        if found is None:
            return None
        candidate += 1
    return None
