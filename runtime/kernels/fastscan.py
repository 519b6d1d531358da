"""Numba-compiled scanners behind the columnar fast path (``columnar.py``).

Two kernels, both compiled once and cached on disk (``cache=True``), both releasing the GIL:

- :func:`scan_frames` walks the frames of a buffer as ``framing.judge`` does and copies
  each frame's header fields into a table, so that Python never touches a frame one by one
  in the common case.
- :func:`decode_sections` decodes the v2 records of many batches ("sections": the records of
  an uncompressed batch in place, or a decompressed payload) straight into the buffers of
  Arrow columns: offsets, timestamps, and keys, values and headers gathered into contiguous
  data buffers with int32 offsets. No Python object is made per record.

The kernels trust nothing they read: every varint and every length is checked against the end
of its record and of its section before a byte is read or copied. A malformed section gets an
error code and the byte position where decoding stopped; its partial output is rolled back and
decoding goes on with the next section, so that Python can raise (or, with ``errors="skip"``,
report) exactly the batches the reference reader would. The accepted layout is the reference's
(``schemas/record.ksy`` read by the Kaitai parser in ``batches.py``), check for check.

Sections are passed by address (``S_ADDR``): a section may lie in the memory-mapped file or in
a ``bytes`` object from the decompressor, and one call covers them all. The caller keeps every
such buffer alive for the duration of the call.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..format.sizes import LEGACY_RECORD_OVERHEAD, LOG_OVERHEAD, MIN_RECORD_SIZE, V2_BATCH_HEADER

# numba's on-disk cache checks only the file of the function it caches: after changing one of
# these modules, touch this file too, or its kernels keep the old code of their callees.
from .addresses import (
    address_of,
    be16,
    be32,
    be32u,
    be64,
    le64,
    memcpy,
    store_le64,
    store_u8,
    u8,
)
from .crc32 import crc32 as _crc32
from .payloads import decode_payload

# --- frame table (scan_frames) ----------------------------------------------------------------

F_POS = 0  # position of the frame in the buffer
F_SIZE = 1  # bytes of the whole frame (12 + length field)
F_BASE = 2  # base offset (v2) / offset (v0, v1)
F_MAGIC = 3
F_ATTR = 4  # v2: int16 attributes; v0/v1: int8 attributes
F_LAST_DELTA = 5  # v2 only
F_BASE_TS = 6  # v2; v1: the message timestamp
F_MAX_TS = 7  # v2 only
F_PID = 8  # v2 producer id; -1 otherwise
F_COUNT = 9  # v2 records_count; 1 otherwise
F_CRC = 10  # the stored CRC
F_HEADER_OK = 11  # 1 when the frame is long enough for its header fields to be read
FRAME_COLUMNS = 12

# framing.judge's rules for a whole frame; where the scan stops short of the limit,
# framing.end_of_walk says what lies there (a tail, a broken length, damage).
SCAN_END = 0  # no whole frame at the returned position: the end, a tail or a broken length
SCAN_FRAMING_ERROR = 1  # damage at the returned position: a length below 14 or a bad magic
SCAN_BUDGET = 2  # stopped at a budget; more frames may follow

_LOG_OVERHEAD = LOG_OVERHEAD
_UP_TO_MAGIC = 17
_MIN_FRAME_LENGTH = LEGACY_RECORD_OVERHEAD[0]
_V2_HEADER = V2_BATCH_HEADER
_LEGACY_MIN_SIZE_V0 = LEGACY_RECORD_OVERHEAD[0]
_LEGACY_MIN_SIZE_V1 = LEGACY_RECORD_OVERHEAD[1]

# --- sections (decode_sections) ---------------------------------------------------------------

S_ADDR = 0  # address of the buffer holding the records
S_START = 1  # first byte of the records in that buffer
S_END = 2  # one past the last byte
S_COUNT = 3  # records_count from the batch header
S_BASE = 4  # base offset
S_BASE_TS = 5
S_MAX_TS = 6
S_TS_TYPE = 7  # 0 CreateTime, 1 LogAppendTime (the batch's max timestamp applies)
S_KEEP = 8  # 0: decode and check, but emit no rows (read_committed drops the batch)
S_STATUS = 9  # out: 0 or an E_* code
S_ERR_POS = 10  # out: byte position (relative to S_START) where decoding failed
S_ERR_ARG = 11  # out: offset delta of the record whose body is too long (E_RECORD_SIZE)
S_ERR_ARG2 = 12  # out: unread bytes (E_RECORD_SIZE) or leftover bytes (E_LEFTOVER)
S_ROWS_END = 13  # out: rows emitted up to and including this section
S_FORMAT = 14  # FORMAT_*
S_MAGIC = 15  # v0/v1: the (wrapper) message's magic
S_VERIFY = 16  # v0/v1: 1 to check CRC-32s here
S_ERR_ARG3 = 17  # out: inner offset of a v0/v1 inner message in error
S_PAYLOAD_START = 18  # FORMAT_PACKED_*: the compressed payload in the buffer
S_PAYLOAD_END = 19
S_CODEC = 20  # FORMAT_PACKED_*: its codec (kernel_payloads.SNAPPY, LZ4)
SECTION_COLUMNS = 21

#: How a frame is decoded (columnar.py's plan): v2 in place, v2 decompressed, v0/v1 in place,
#: v0/v1 wrapper decompressed, or by the reference decoder.
K_FAST, K_COMPRESSED, K_LEGACY, K_WRAPPER, K_REFERENCE = 0, 1, 2, 3, 4

FORMAT_V2 = 0  # v2 records, back to back (the batch's payload, decompressed if need be)
FORMAT_LEGACY = 1  # one whole v0/v1 entry, uncompressed (the frame itself)
FORMAT_INNER = 2  # the decompressed value of a v0/v1 wrapper: entries back to back
# A v0/v1 wrapper's compressed value (S_PAYLOAD_START:END, codec S_CODEC), decompressed here
# into the scratch buffer, then read as FORMAT_INNER. S_START:S_END is 0:capacity, the most it
# decompresses to.
FORMAT_PACKED_WRAPPER = 3
# A v2 batch's compressed records (S_PAYLOAD_START:END, codec S_CODEC), decompressed into the
# scratch buffer, then read as FORMAT_V2. S_START:S_END is 0:capacity.
FORMAT_PACKED_V2 = 4

E_OK = 0
E_EOF = 1  # a field runs past the end of its record or of the payload
E_VARINT_TOO_LONG = 2
E_NEGATIVE_LENGTH = 3  # record length, header count or header key length below zero
E_UTF8 = 4  # a header key that is not UTF-8
E_RECORD_SIZE = 5  # bytes left in a record after its fields
E_LEFTOVER = 6  # bytes after the last record
E_OFFSET_RANGE = 7  # base offset + delta outside int64
E_TIMESTAMP_RANGE = 8  # the timestamp in microseconds outside int64
E_CRC = 9  # v0/v1 CRC-32: ERR_ARG computed, ERR_ARG2 stored (ERR_ARG3 inner offset)
E_MESSAGE_EOF = 10  # a v0/v1 message whose key or value runs past its end
E_INNER_MAGIC = 11  # ERR_ARG: the magic of an inner message that is not 0 or 1
E_INNER_NESTED = 12  # ERR_ARG3: offset of a compressed inner message
E_INNER_TRAILING = 13  # ERR_ARG2: bytes after the last whole inner message
E_INNER_NONE = 14  # a wrapper holding no message
E_INNER_FRAMING = 15  # ERR_ARG: the length below 14, ERR_ARG3 the inner offset
E_INNER_NO_TIMESTAMP = 16  # a magic 0 message inside a magic 1 wrapper (CreateTime)
E_ROOM = 17  # not an error: the output buffers are full; decode from here with more room
# FORMAT_PACKED_*: a payload that does not decompress, or (v2) a record count that cannot fit;
# the Python path words the error.
E_DECOMPRESS = 18

# Cursors into the output buffers, in and out.
C_ROWS = 0
C_KEY_BYTES = 1
C_VALUE_BYTES = 2
C_HEADERS = 3
C_HKEY_BYTES = 4
C_HVALUE_BYTES = 5
CURSORS = 6

_I64_MAX = np.int64(0x7FFFFFFFFFFFFFFF)
_I64_MIN = -_I64_MAX - 1
_MS_MAX = _I64_MAX // 1000  # the largest millisecond timestamp with a microsecond value
_MS_MIN = -_MS_MAX


# Helpers take addresses, never arrays: an array handed to a helper costs reference counting
# (two calls) each time, which tripled the time per record when the varint reader took one.
_jit = njit(cache=True)
_jit_inline = njit(cache=True, inline="always")
_kernel = njit(cache=True, nogil=True)


# --- helpers ----------------------------------------------------------------------------------


@_jit_inline
def _varint(buf, p, end):
    """Kafka's zigzag varint as the reference reads it: up to 10 bytes, the 10th without a
    continuation bit and counting by its lowest bit only. Returns (value, next, error)."""
    if p >= end:
        return np.int64(0), p, E_EOF
    b = u8(buf + p)
    if b < 128:
        half = b >> 1
        return (-half - 1 if b & 1 else half), p + 1, E_OK
    if p + 1 < end and u8(buf + p + 1) < 128:  # two bytes: lengths and deltas up to 8191
        raw2 = (b & 127) | ((u8(buf + p + 1)) << 7)
        half = raw2 >> 1
        return (-half - 1 if raw2 & 1 else half), p + 2, E_OK
    raw = np.uint64(b & 127)
    shift = np.uint64(7)
    i = 1
    q = p + 1
    while True:
        if q >= end:
            return np.int64(0), q, E_EOF
        b = u8(buf + q)
        q += 1
        if i == 9:
            if b >= 128:
                return np.int64(0), q, E_VARINT_TOO_LONG
            raw |= np.uint64(b & 1) << np.uint64(63)
            break
        raw |= np.uint64(b & 127) << shift
        if b < 128:
            break
        shift += np.uint64(7)
        i += 1
    half = np.int64(raw >> np.uint64(1))
    return (-half - 1 if raw & np.uint64(1) else half), q, E_OK


@_jit_inline
def _copy(dst, dst_end, src, src_end, n):
    """Copy n bytes between addresses; the bytes up to ``dst_end`` and ``src_end`` may be
    read and written past them (n rounded up to 16), which makes short copies two moves."""
    wide = (n + 15) & ~15
    if n <= 128 and dst + wide <= dst_end and src + wide <= src_end:
        i = 0
        while i < n:
            store_le64(dst + i, le64(src + i))
            store_le64(dst + i + 8, le64(src + i + 8))
            i += 16
    elif n > 32:
        memcpy(dst, src, n)
    else:  # a call costs more than a few bytes' loop
        for j in range(n):
            store_u8(dst + j, u8(src + j))


@_jit
def _utf8_ok(buf, s, n):
    """Strict UTF-8 as Python's decoder checks it: no overlongs, surrogates or > U+10FFFF."""
    i = s
    end = s + n
    while i < end:
        c = u8(buf + i)
        if c < 0x80:
            i += 1
            continue
        if 0xC2 <= c <= 0xDF:
            if i + 1 >= end or (u8(buf + i + 1) & 0xC0) != 0x80:
                return False
            i += 2
            continue
        if 0xE0 <= c <= 0xEF:
            if i + 2 >= end:
                return False
            c1 = u8(buf + i + 1)
            lo = 0xA0 if c == 0xE0 else 0x80
            hi = 0x9F if c == 0xED else 0xBF
            if c1 < lo or c1 > hi or (u8(buf + i + 2) & 0xC0) != 0x80:
                return False
            i += 3
            continue
        if 0xF0 <= c <= 0xF4:
            if i + 3 >= end:
                return False
            c1 = u8(buf + i + 1)
            lo = 0x90 if c == 0xF0 else 0x80
            hi = 0x8F if c == 0xF4 else 0xBF
            if (
                c1 < lo
                or c1 > hi
                or (u8(buf + i + 2) & 0xC0) != 0x80
                or (u8(buf + i + 3) & 0xC0) != 0x80
            ):
                return False
            i += 4
            continue
        return False
    return True


# --- framing ----------------------------------------------------------------------------------


@_kernel
def scan_frames(data, pos, limit, table, max_rows, max_bytes, compressed_weight):
    """Frames of ``data[pos:limit]`` into ``table`` until a budget is reached.

    Returns (frames, next position, SCAN_* status). The first frame is always taken; after
    it the scan stops before a frame that would pass ``max_rows`` records (v2 counts) or
    ``max_bytes`` bytes, a compressed frame weighing ``compressed_weight`` times its size.
    """
    buf = address_of(data)
    limit = min(limit, data.shape[0])
    n = 0
    rows = 0
    weight = 0
    capacity = table.shape[0]
    while True:
        remaining = limit - pos
        if remaining <= _UP_TO_MAGIC:
            return n, pos, SCAN_END
        length = be32(buf, pos + 8)
        magic = u8(buf + pos + 16)  # unsigned: a negative magic is above 2 here
        if length < _MIN_FRAME_LENGTH or magic > 2:
            return n, pos, SCAN_FRAMING_ERROR
        if length > remaining - _LOG_OVERHEAD:
            return n, pos, SCAN_END
        size = _LOG_OVERHEAD + length
        count = np.int64(1)
        header_ok = 0
        attributes = np.int64(0)
        if magic == 2 and size >= _V2_HEADER:
            header_ok = 1
            attributes = be16(buf, pos + 21)
            count = be32(buf, pos + 57)
        elif magic == 0 or magic == 1:
            attributes = u8(buf + pos + 17)
            minimum = _LEGACY_MIN_SIZE_V0 if magic == 0 else _LEGACY_MIN_SIZE_V1
            header_ok = 1 if length >= minimum else 0
        frame_rows = count if count > 0 else np.int64(1)
        frame_weight = size * compressed_weight if attributes & 7 else size
        if n > 0 and (
            n >= capacity or rows + frame_rows > max_rows or weight + frame_weight > max_bytes
        ):
            return n, pos, SCAN_BUDGET
        row = table[n]
        row[F_POS] = pos
        row[F_SIZE] = size
        row[F_BASE] = be64(buf, pos)
        row[F_MAGIC] = magic
        row[F_ATTR] = attributes
        row[F_HEADER_OK] = header_ok
        row[F_COUNT] = count
        if magic == 2 and header_ok:
            row[F_CRC] = be32u(buf, pos + 17)
            row[F_LAST_DELTA] = be32(buf, pos + 23)
            row[F_BASE_TS] = be64(buf, pos + 27)
            row[F_MAX_TS] = be64(buf, pos + 35)
            row[F_PID] = be64(buf, pos + 43)
        else:
            row[F_CRC] = be32u(buf, pos + 12)
            row[F_LAST_DELTA] = 0
            row[F_BASE_TS] = be64(buf, pos + 18) if magic == 1 and header_ok else -1
            row[F_MAX_TS] = row[F_BASE_TS]
            row[F_PID] = -1
        n += 1
        rows += frame_rows
        weight += frame_weight
        pos += size


# --- records ----------------------------------------------------------------------------------


@_kernel
def make_sections(table, kind, keep, wanted, address, verify, sections):
    """One section per frame of ``wanted`` (rows of ``table``), all in the buffer at
    ``address``; compressed ones are pointed at their decompressed payloads afterwards."""
    for k in range(wanted.shape[0]):
        i = wanted[k]
        row = table[i]
        sec = sections[k]
        fmt = kind[i]
        v2 = fmt <= K_COMPRESSED
        pos = row[F_POS]
        sec[S_ADDR] = address
        sec[S_START] = pos + _V2_HEADER if v2 else pos
        sec[S_END] = pos + row[F_SIZE]
        sec[S_COUNT] = row[F_COUNT]
        sec[S_BASE] = row[F_BASE]
        sec[S_BASE_TS] = row[F_BASE_TS]
        sec[S_MAX_TS] = row[F_MAX_TS]
        sec[S_TS_TYPE] = 1 if row[F_ATTR] & 8 else 0
        sec[S_KEEP] = 1 if keep[i] else 0
        sec[S_FORMAT] = FORMAT_V2 if v2 else (FORMAT_LEGACY if fmt == K_LEGACY else FORMAT_INNER)
        sec[S_MAGIC] = row[F_MAGIC]
        sec[S_VERIFY] = verify


@_kernel
def decode_sections(
    sections,
    rec_i64,
    ts_type,
    off32,
    valid,
    key_data,
    value_data,
    hoff,
    hvalid,
    hkey_data,
    hvalue_data,
    cur,
    want_headers,
    scratch,
    lz4_fn,
):
    """Decode the v2 records of every section into the output buffers at the cursors.

    ``rec_i64[0]`` offsets, ``rec_i64[1]`` timestamps in microseconds; ``off32[0..2]`` key,
    value and header-list offsets, ``valid[0..3]`` the validity of key, value, headers and
    timestamp (one byte a row); ``hoff[0..1]`` header key and value offsets, ``hvalid``
    header value validity. Per section: status, error position and rows end are written back
    into ``sections``. When a section does not fit in the buffers left, it and the sections
    after it get E_ROOM and the index of the first is returned (else the number of sections):
    the caller decodes them again into new buffers. ``scratch``: room for the largest
    FORMAT_PACKED_* section plus ``kernel_snappy.SLACK``, decompressed there
    (``kernel_payloads.decode_payload``; LZ4 by ``LZ4_decompress_safe`` at ``lz4_fn``).
    """
    key_address = address_of(key_data)
    value_address = address_of(value_data)
    key_end = key_address + key_data.shape[0]
    value_end = value_address + value_data.shape[0]
    scratch_address = address_of(scratch)
    scratch_room = scratch.shape[0]
    for s in range(sections.shape[0]):
        sec = sections[s]
        start = sec[S_START]
        end = sec[S_END]
        buf = sec[S_ADDR]
        mark0 = cur[0]
        mark1 = cur[1]
        mark2 = cur[2]
        mark3 = cur[3]
        mark4 = cur[4]
        mark5 = cur[5]
        fmt = sec[S_FORMAT]
        status, err_pos, arg, arg2 = E_OK, end, 0, 0
        if fmt in (FORMAT_PACKED_V2, FORMAT_PACKED_WRAPPER):
            # Decompressed into the scratch first, then read as FORMAT_V2 or FORMAT_INNER
            # from there; ``start`` is 0.
            written = decode_payload(
                sec[S_CODEC],
                lz4_fn,
                buf,
                sec[S_PAYLOAD_START],
                sec[S_PAYLOAD_END],
                scratch_address,
                min(end, scratch_room),  # never past the scratch, whatever the caller sized
                scratch_address + scratch_room,
            )
            if written < 0 or (
                fmt == FORMAT_PACKED_V2 and sec[S_COUNT] > written // MIN_RECORD_SIZE + 1
            ):
                status, err_pos = E_DECOMPRESS, start
            buf = scratch_address
            end = written
        if status != E_OK:
            pass
        elif fmt in (FORMAT_V2, FORMAT_PACKED_V2):
            status, err_pos, arg, arg2 = _decode_one(
                buf,
                start,
                end,
                sec,
                rec_i64,
                ts_type,
                off32,
                valid,
                key_data,
                value_data,
                hoff,
                hvalid,
                hkey_data,
                hvalue_data,
                cur,
                want_headers,
            )
        elif fmt == FORMAT_LEGACY:
            # One entry, one record: decoded here, where writing the row costs no calls.
            status, err_pos, arg, arg2 = E_OK, end, 0, 0
            if sec[S_VERIFY]:
                computed = _crc32(buf, start + 16, end)
                stored = be32u(buf, start + 12)
                if computed != stored:
                    status, err_pos, arg, arg2 = E_CRC, start, computed, stored
            if status == E_OK:
                err, p, magic, attributes, timestamp, kpos, klen, vpos, vlen = _message(
                    buf, start, end
                )
                has_ts = 1 if magic == 1 else 0
                row = cur[0]
                kb = cur[1]
                vb = cur[2]
                if err:
                    status, err_pos = err, p
                elif has_ts and (timestamp > _MS_MAX or timestamp < _MS_MIN):
                    status, err_pos = E_TIMESTAMP_RANGE, p
                elif (
                    row >= rec_i64.shape[1]
                    or (klen > 0 and kb + klen > key_data.shape[0])
                    or (vlen > 0 and vb + vlen > value_data.shape[0])
                ):
                    status, err_pos = E_ROOM, p
                else:
                    rec_i64[0, row] = sec[S_BASE]
                    rec_i64[1, row] = timestamp * 1000 if has_ts else 0
                    valid[3, row] = has_ts
                    ts_type[row] = -1 if magic == 0 else (1 if attributes & 8 else 0)
                    if klen >= 0:
                        _copy(key_address + kb, key_end, buf + kpos, buf + end, klen)
                        kb += klen
                    valid[0, row] = klen >= 0
                    off32[0, row + 1] = kb
                    if vlen >= 0:
                        _copy(value_address + vb, value_end, buf + vpos, buf + end, vlen)
                        vb += vlen
                    valid[1, row] = vlen >= 0
                    off32[1, row + 1] = vb
                    valid[2, row] = 0
                    off32[2, row + 1] = cur[3]
                    cur[0] = row + 1
                    cur[1] = kb
                    cur[2] = vb
        else:  # FORMAT_INNER, FORMAT_PACKED_WRAPPER
            status, err_pos, arg, arg2 = _decode_inner(
                buf, start, end, sec, rec_i64, ts_type, off32, valid, key_data, value_data, cur
            )
        if status == E_ROOM:
            cur[0] = mark0
            cur[1] = mark1
            cur[2] = mark2
            cur[3] = mark3
            cur[4] = mark4
            cur[5] = mark5
            for rest in range(s, sections.shape[0]):
                sections[rest, S_STATUS] = E_ROOM
            return s
        sec[S_STATUS] = status
        sec[S_ERR_POS] = err_pos - start
        sec[S_ERR_ARG] = arg
        sec[S_ERR_ARG2] = arg2
        if status != E_OK or sec[S_KEEP] == 0:
            cur[0] = mark0
            cur[1] = mark1
            cur[2] = mark2
            cur[3] = mark3
            cur[4] = mark4
            cur[5] = mark5
        sec[S_ROWS_END] = cur[0]
    return sections.shape[0]


@_jit_inline
def _checked_add(a, b):
    if (b > 0 and a > _I64_MAX - b) or (b < 0 and a < _I64_MIN - b):
        return np.int64(0), False
    return a + b, True


@_jit
def _decode_one(
    buf,
    start,
    end,
    sec,
    rec_i64,
    ts_type,
    off32,
    valid,
    key_data,
    value_data,
    hoff,
    hvalid,
    hkey_data,
    hvalue_data,
    cur,
    want_headers,
):
    key_address = address_of(key_data)
    value_address = address_of(value_data)
    key_end = key_address + key_data.shape[0]
    value_end = value_address + value_data.shape[0]
    hkey_address = address_of(hkey_data)
    hvalue_address = address_of(hvalue_data)
    hkey_end = hkey_address + hkey_data.shape[0]
    hvalue_end = hvalue_address + hvalue_data.shape[0]
    row_room = rec_i64.shape[1]
    key_room = key_data.shape[0]
    value_room = value_data.shape[0]
    header_room = hvalid.shape[0]
    hkey_room = hkey_data.shape[0]
    hvalue_room = hvalue_data.shape[0]
    count = sec[S_COUNT]
    base = sec[S_BASE]
    base_ts = sec[S_BASE_TS]
    log_append = sec[S_TS_TYPE] == 1
    tstype = np.int32(sec[S_TS_TYPE])
    row = cur[0]
    kb = cur[1]
    vb = cur[2]
    nh = cur[3]
    hkb = cur[4]
    hvb = cur[5]
    # The reference parses every record before checking sizes: keep the first body that is
    # not fully used and report it only when the whole payload parsed.
    bad_body_delta = np.int64(0)
    bad_body_unread = np.int64(-1)
    bad_body_pos = np.int64(0)
    p = start
    for _ in range(count):
        length, p, err = _varint(buf, p, end)
        if err:
            return err, p, 0, 0
        if length < 0:
            return E_NEGATIVE_LENGTH, p, 0, 0
        if length > end - p:
            return E_EOF, p, 0, 0
        rend = p + length
        if p >= rend:  # the attributes byte
            return E_EOF, p, 0, 0
        p += 1
        ts_delta, p, err = _varint(buf, p, rend)
        if err:
            return err, p, 0, 0
        offset_delta, p, err = _varint(buf, p, rend)
        if err:
            return err, p, 0, 0
        key_len, p, err = _varint(buf, p, rend)
        if err:
            return err, p, 0, 0
        key_pos = p
        if key_len >= 0:
            if key_len > rend - p:
                return E_EOF, p, 0, 0
            p += key_len
        value_len, p, err = _varint(buf, p, rend)
        if err:
            return err, p, 0, 0
        value_pos = p
        if value_len >= 0:
            if value_len > rend - p:
                return E_EOF, p, 0, 0
            p += value_len
        headers, p, err = _varint(buf, p, rend)
        if err:
            return err, p, 0, 0
        if headers < 0:
            return E_NEGATIVE_LENGTH, p, 0, 0
        first_header = nh
        for _h in range(headers):
            hk_len, p, err = _varint(buf, p, rend)
            if err:
                return err, p, 0, 0
            if hk_len < 0:
                return E_NEGATIVE_LENGTH, p, 0, 0
            if hk_len > rend - p:
                return E_EOF, p, 0, 0
            ascii_only = True
            for j in range(p, p + hk_len):
                if u8(buf + j) >= 128:
                    ascii_only = False
                    break
            if not ascii_only and not _utf8_ok(buf, p, hk_len):
                return E_UTF8, p, 0, 0
            hk_pos = p
            p += hk_len
            hv_len, p, err = _varint(buf, p, rend)
            if err:
                return err, p, 0, 0
            hv_pos = p
            if hv_len >= 0:
                if hv_len > rend - p:
                    return E_EOF, p, 0, 0
                p += hv_len
            if want_headers:
                if (
                    nh >= header_room
                    or hkb + hk_len > hkey_room
                    or (hv_len > 0 and hvb + hv_len > hvalue_room)
                ):
                    return E_ROOM, p, 0, 0
                _copy(hkey_address + hkb, hkey_end, buf + hk_pos, buf + end, hk_len)
                hkb += hk_len
                hoff[0, nh + 1] = hkb
                if hv_len >= 0:
                    _copy(hvalue_address + hvb, hvalue_end, buf + hv_pos, buf + end, hv_len)
                    hvb += hv_len
                    hvalid[nh] = 1
                else:
                    hvalid[nh] = 0
                hoff[1, nh + 1] = hvb
                nh += 1
        if p != rend and bad_body_unread < 0:
            bad_body_delta = offset_delta
            bad_body_unread = rend - p
            bad_body_pos = p
        p = rend
        # The record is whole: emit it.
        offset, ok = _checked_add(base, offset_delta)
        if not ok:
            return E_OFFSET_RANGE, p, offset_delta, 0
        if log_append:
            ts = sec[S_MAX_TS]
        else:
            ts, ok = _checked_add(base_ts, ts_delta)
            if not ok:
                return E_TIMESTAMP_RANGE, p, 0, 0
        if ts > _MS_MAX or ts < _MS_MIN:
            return E_TIMESTAMP_RANGE, p, 0, 0
        if (
            row >= row_room
            or (key_len > 0 and kb + key_len > key_room)
            or (value_len > 0 and vb + value_len > value_room)
        ):
            return E_ROOM, p, 0, 0
        rec_i64[0, row] = offset
        rec_i64[1, row] = ts * 1000
        valid[3, row] = 1
        ts_type[row] = tstype
        if key_len >= 0:
            _copy(key_address + kb, key_end, buf + key_pos, buf + end, key_len)
            kb += key_len
            valid[0, row] = 1
        else:
            valid[0, row] = 0
        off32[0, row + 1] = kb
        if value_len >= 0:
            _copy(value_address + vb, value_end, buf + value_pos, buf + end, value_len)
            vb += value_len
            valid[1, row] = 1
        else:
            valid[1, row] = 0
        off32[1, row + 1] = vb
        if want_headers:
            valid[2, row] = 1 if nh > first_header else 0
            off32[2, row + 1] = nh
        row += 1
    if p != end:
        return E_LEFTOVER, p, 0, end - p
    if bad_body_unread >= 0:
        return E_RECORD_SIZE, bad_body_pos, bad_body_delta, bad_body_unread
    cur[0] = row
    cur[1] = kb
    cur[2] = vb
    cur[3] = nh
    cur[4] = hkb
    cur[5] = hvb
    return E_OK, p, 0, 0


# --- v0 / v1 ----------------------------------------------------------------------------------


@_jit_inline
def _message(buf, pos, end):
    """The fields of the v0/v1 entry at ``pos`` ending at ``end``, read as LegacyMessage is:
    (error, offset, magic, attributes, timestamp, key pos, key len, value pos, value len)."""
    magic = u8(buf + pos + 16)
    attributes = u8(buf + pos + 17)
    p = pos + 18
    timestamp = np.int64(-1)
    if magic == 1:
        if end - p < 8:
            return E_MESSAGE_EOF, p, magic, attributes, timestamp, 0, -1, 0, -1
        timestamp = be64(buf, p)
        p += 8
    if end - p < 4:
        return E_MESSAGE_EOF, p, magic, attributes, timestamp, 0, -1, 0, -1
    key_len = be32(buf, p)
    p += 4
    key_pos = p
    if key_len >= 0:
        if key_len > end - p:
            return E_MESSAGE_EOF, p, magic, attributes, timestamp, 0, -1, 0, -1
        p += key_len
    if end - p < 4:
        return E_MESSAGE_EOF, p, magic, attributes, timestamp, 0, -1, 0, -1
    value_len = be32(buf, p)
    p += 4
    if value_len >= 0 and value_len > end - p:
        return E_MESSAGE_EOF, p, magic, attributes, timestamp, 0, -1, 0, -1
    return E_OK, p, magic, attributes, timestamp, key_pos, key_len, p, value_len


@_jit
def _decode_inner(buf, start, end, sec, rec_i64, ts_type, off32, valid, key_data, value_data, cur):
    """The inner entries of a v0/v1 wrapper, decompressed into ``u8(buf + start:end)``, checked
    as the reference reads them; v1 inner offsets are relative to the wrapper's."""
    key_address = address_of(key_data)
    value_address = address_of(value_data)
    key_end = key_address + key_data.shape[0]
    value_end = value_address + value_data.shape[0]
    wrapper_magic = sec[S_MAGIC]
    log_append = sec[S_TS_TYPE] == 1
    verify = sec[S_VERIFY]
    row0 = cur[0]
    pos = start
    last_offset = np.int64(0)
    count = 0
    while end - pos > _UP_TO_MAGIC:
        inner_offset = be64(buf, pos)
        length = be32(buf, pos + 8)
        sec[S_ERR_ARG3] = inner_offset
        if length < _MIN_FRAME_LENGTH:
            return E_INNER_FRAMING, pos, length, 0
        if length > end - pos - _LOG_OVERHEAD:
            break
        frame_end = pos + _LOG_OVERHEAD + length
        magic = u8(buf + pos + 16)
        if magic != 0 and magic != 1:
            return E_INNER_MAGIC, pos, magic, 0
        err, p, magic, attributes, timestamp, kpos, klen, vpos, vlen = _message(buf, pos, frame_end)
        if err:
            return err, p, 0, 0
        if attributes & 7:
            return E_INNER_NESTED, pos, 0, 0
        if verify:
            computed = _crc32(buf, pos + 16, frame_end)
            stored = be32u(buf, pos + 12)
            if computed != stored:
                return E_CRC, pos, computed, stored
        if wrapper_magic == 0:
            ts, has_ts, tstype = np.int64(0), 0, -1
        elif log_append:
            ts, has_ts, tstype = sec[S_BASE_TS], 1, 1
        else:
            if magic != 1:
                return E_INNER_NO_TIMESTAMP, pos, 0, 0
            ts, has_ts, tstype = timestamp, 1, 0
        if has_ts and (ts > _MS_MAX or ts < _MS_MIN):
            return E_TIMESTAMP_RANGE, pos, 0, 0
        row = cur[0]
        kb = cur[1]
        vb = cur[2]
        if (
            row >= rec_i64.shape[1]
            or (klen > 0 and kb + klen > key_data.shape[0])
            or (vlen > 0 and vb + vlen > value_data.shape[0])
        ):
            return E_ROOM, pos, 0, 0
        rec_i64[0, row] = inner_offset
        rec_i64[1, row] = ts * 1000
        valid[3, row] = has_ts
        ts_type[row] = tstype
        if klen >= 0:
            _copy(key_address + kb, key_end, buf + kpos, buf + end, klen)
            kb += klen
        valid[0, row] = klen >= 0
        off32[0, row + 1] = kb
        if vlen >= 0:
            _copy(value_address + vb, value_end, buf + vpos, buf + end, vlen)
            vb += vlen
        valid[1, row] = vlen >= 0
        off32[1, row + 1] = vb
        valid[2, row] = 0
        off32[2, row + 1] = cur[3]
        cur[0] = row + 1
        cur[1] = kb
        cur[2] = vb
        last_offset = inner_offset
        count += 1
        pos = frame_end
    sec[S_ERR_ARG3] = 0
    if pos < end:
        return E_INNER_TRAILING, pos, 0, end - pos
    if count == 0:
        return E_INNER_NONE, pos, 0, 0
    base = np.int64(0)
    if wrapper_magic == 1:
        # wrapper offset - last inner offset, 0 when negative (wrappers written with offset 0)
        if last_offset == _I64_MIN:
            return E_OFFSET_RANGE, end, 0, 0
        base, ok = _checked_add(sec[S_BASE], -last_offset)
        if not ok:
            return E_OFFSET_RANGE, end, 0, 0
        if base < 0:
            base = np.int64(0)
    for r in range(row0, cur[0]):
        offset, ok = _checked_add(rec_i64[0, r], base)
        if not ok:
            return E_OFFSET_RANGE, end, rec_i64[0, r], 0
        rec_i64[0, r] = offset
    return E_OK, end, 0, 0
