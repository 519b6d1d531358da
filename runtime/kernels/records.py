"""Numba-compiled record decoders behind the columnar fast path (``columnar.py``).

:func:`decode_sections` decodes the records of many batches ("sections": the records of an
uncompressed v2 batch in place, a decompressed payload, a v0/v1 entry or a wrapper's inner
messages) straight into the buffers of Arrow columns: offsets, timestamps, and keys, values
and headers gathered into contiguous data buffers with int32 offsets. No Python object is made
per record. Compiled once and cached on disk (``cache=True``); releases the GIL. With
``binary_view``, keys and values become Arrow views into the file instead (``kernels/views``).

The kernel trusts nothing it reads: every varint and every length is checked against the end
of its record and of its section before a byte is read or copied. A malformed section gets an
error code and the byte position where decoding stopped; its partial output is rolled back and
decoding goes on with the next section, so that Python can raise (or, with ``errors="skip"``,
report) exactly the batches the reference reader would. The accepted layout is the reference's
(``schemas/record.ksy`` read by the Kaitai parser in ``batches.py``), check for check.

Sections are passed by address (``S_ADDR``): a section may lie in the memory-mapped file or in
a ``bytes`` object from the decompressor, and one call covers them all. The caller keeps every
such buffer alive for the duration of the call. ``fastscan.make_sections`` makes them from the
frame table. The section columns, formats and statuses are ``section_codes``'.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..format import layout
from ..format.sizes import MIN_RECORD_SIZE

# numba's on-disk cache checks only the file of the function it caches: after changing one of
# these modules, touch this file too, or its kernels keep the old code of their callees.
from .addresses import address_of, be32, be32u, be64, le64, memcpy, store_le64, store_u8, u8
from .crc32 import crc32 as _crc32
from .payloads import decode_payload
from .section_codes import (  # the decoder's interface, re-exported
    E_CRC,
    E_DECOMPRESS,
    E_EOF,
    E_INNER_FRAMING,
    E_INNER_MAGIC,
    E_INNER_NESTED,
    E_INNER_NONE,
    E_INNER_TRAILING,
    E_LEFTOVER,
    E_MESSAGE_EOF,
    E_NEGATIVE_HEADER_KEY,
    E_NEGATIVE_HEADERS,
    E_NEGATIVE_LENGTH,
    E_OFFSET_ORDER,
    E_OFFSET_OUTSIDE,
    E_OFFSET_RANGE,
    E_OK,
    E_PREMATURE_EOF,
    E_RECORD_PAST_END,
    E_RECORD_SIZE,
    E_ROOM,
    E_UTF8,
    E_VARINT_TOO_LONG,
    E_WRAPPER_OFFSET,
    FORMAT_LEGACY,
    FORMAT_PACKED_V2,
    FORMAT_PACKED_WRAPPER,
    FORMAT_V2,
    S_ADDR,
    S_BASE,
    S_BASE_TS,
    S_CODEC,
    S_COUNT,
    S_END,
    S_ERR_ARG,
    S_ERR_ARG2,
    S_ERR_ARG3,
    S_ERR_POS,
    S_FORMAT,
    S_KEEP,
    S_LAST_DELTA,
    S_MAGIC,
    S_MAX_TS,
    S_NULL_TS,
    S_NULL_TS_OFFSET,
    S_PAYLOAD_END,
    S_PAYLOAD_START,
    S_ROWS_END,
    S_START,
    S_STATUS,
    S_TS_TYPE,
    S_VERIFY,
    V_BASE,
    V_COPY_INDEX,
    V_PLACE,
)
from .utf8 import utf8_ok as _utf8_ok
from .views import IN_PLACE as _IN_PLACE
from .views import INLINE
from .views import view_or_gather as _view_or_gather

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
def copy_bytes(dst, dst_end, src, src_end, n):
    """Copy n bytes between addresses; the bytes up to ``dst_end`` and ``src_end`` may be
    read and written past them (n rounded up to 16): up to 32 bytes, two moves; past that,
    libc's memcpy, whose moves are wider (10% off the decoder on 100-byte values)."""
    wide = (n + 15) & ~15
    if n <= 32 and dst + wide <= dst_end and src + wide <= src_end:
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


@_jit_inline
def _key_value(vout, least, row, buf, end, kpos, klen, vpos, vlen, keys, kb, values, vb):
    """A row's key and value (at ``buf + kpos`` / ``buf + vpos``, before ``buf + end``; length
    -1: null) as 16-byte views in binary_view mode (``vout``), else gathered into ``keys`` /
    ``values`` ((address, end) of the output) at ``kb`` / ``vb``; returns ``kb``, ``vb`` after
    them (the caller writes the copying path's Arrow offsets)."""
    if vout[0] != 0:
        kb = _view_or_gather(vout, 1, row, buf + kpos, klen, buf + end, least, keys[0], kb)
        vb = _view_or_gather(vout, 2, row, buf + vpos, vlen, buf + end, least, values[0], vb)
        return kb, vb
    if klen >= 0:
        copy_bytes(keys[0] + kb, keys[1], buf + kpos, buf + end, klen)
        kb += klen
    if vlen >= 0:
        copy_bytes(values[0] + vb, values[1], buf + vpos, buf + end, vlen)
        vb += vlen
    return kb, vb


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
    view_out,
    view_args,
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

    ``binary_view`` mode, when ``view_out`` (two rows: key and value views) is not empty:
    keys and values become 16-byte views (``kernels/views.py``) in ``view_out`` instead of
    bytes gathered at ``off32[0..1]``. The records of the sections in the buffer at
    ``view_args[V_PLACE]`` (uncompressed v2 batches and v0/v1 entries of the file) are
    pointed at where they lie, from ``view_args[V_BASE]`` (data buffer 0); the others' (they
    were decompressed into a buffer that does not outlive the call) are gathered as before,
    those longer than 12 bytes only, and pointed at in ``key_data`` / ``value_data`` (data
    buffer ``view_args[V_COPY_INDEX]``).
    """
    vmode = view_out.shape[1] > 0
    views = address_of(view_out)  # (mode, key views, value views, data buffer 0, copies' index)
    copies = view_args[V_COPY_INDEX]
    vout = (np.int64(vmode), views, views + view_out.shape[1], view_args[V_BASE], copies)
    place = view_args[V_PLACE] if vmode else -1
    keys = (address_of(key_data), address_of(key_data) + key_data.shape[0])  # (address, end)
    values = (address_of(value_data), address_of(value_data) + value_data.shape[0])
    scratch_address = address_of(scratch)
    scratch_room = scratch.shape[0]
    # Made once: a tuple of arrays made a section costs each array's reference count twice a
    # section (about 40 ns a one-record batch).
    out = (rec_i64, ts_type, off32, valid, key_data, value_data)
    hout = (hoff, hvalid, hkey_data, hvalue_data)
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
        sec[S_NULL_TS] = 0
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
        # Gathered: bytes longer than this (all, when copying; none, when viewed in place).
        least = (_IN_PLACE if buf == place else INLINE) if vmode else 0
        if status != E_OK:
            pass
        elif fmt in (FORMAT_V2, FORMAT_PACKED_V2):
            status, err_pos, arg, arg2 = _decode_one(
                buf,
                start,
                end,
                sec,
                out,
                hout,
                cur,
                want_headers,
                vout,
                least,
            )
        elif fmt == FORMAT_LEGACY:
            # One entry, one record: decoded here, where writing the row costs no calls.
            status, err_pos, arg, arg2 = E_OK, end, 0, 0
            if sec[S_VERIFY]:
                computed = _crc32(buf, start + layout.LEGACY_CRC_START, end)
                stored = be32u(buf, start + layout.LEGACY_CRC)
                if computed != stored:
                    status, err_pos, arg, arg2 = E_CRC, start, computed, stored
            if status == E_OK:
                err, p, magic, attributes, timestamp, kpos, klen, vpos, vlen = _message(
                    buf, start, end
                )
                has_ts = 1 if magic == 1 else 0
                if has_ts and (timestamp > _MS_MAX or timestamp < _MS_MIN):
                    has_ts = 0  # null in Arrow, counted for the report
                    sec[S_NULL_TS] = 1
                    sec[S_NULL_TS_OFFSET] = sec[S_BASE]
                row = cur[0]
                kb = cur[1]
                vb = cur[2]
                if err:
                    status, err_pos = err, p
                elif (
                    row >= rec_i64.shape[1]
                    or (klen > least and kb + klen > key_data.shape[0])
                    or (vlen > least and vb + vlen > value_data.shape[0])
                ):
                    status, err_pos = E_ROOM, p
                else:
                    rec_i64[0, row] = sec[S_BASE]
                    rec_i64[1, row] = timestamp * 1000 if has_ts else 0
                    valid[3, row] = has_ts
                    ts_type[row] = -1 if magic == 0 else (1 if attributes & 8 else 0)
                    valid[0, row] = klen >= 0
                    valid[1, row] = vlen >= 0
                    kb, vb = _key_value(
                        vout, least, row, buf, end, kpos, klen, vpos, vlen, keys, kb, values, vb
                    )
                    if not vmode:
                        off32[0, row + 1] = kb
                        off32[1, row + 1] = vb
                    valid[2, row] = 0
                    off32[2, row + 1] = cur[3]
                    cur[0] = row + 1
                    cur[1] = kb
                    cur[2] = vb
        else:  # FORMAT_INNER, FORMAT_PACKED_WRAPPER
            status, err_pos, arg, arg2 = _decode_inner(
                buf,
                start,
                end,
                sec,
                out,
                cur,
                vout,
                INLINE if vmode else 0,
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
def checked_add(a, b):
    if (b > 0 and a > _I64_MAX - b) or (b < 0 and a < _I64_MIN - b):
        return np.int64(0), False
    return a + b, True


@_jit_inline
def record_fields(buf, p, end):
    """The fields of the v2 record at ``p``, up to its header count, each checked against the
    record's end as the reference reads them: (status, position, record end, timestamp delta,
    offset delta, key position, key length, value position, value length, header count)."""
    z = np.int64(0)
    length, p, err = _varint(buf, p, end)
    if err:
        return err, p, z, z, z, z, z, z, z, z
    # Errors carry their values in the record end and timestamp delta slots.
    if length < 0:
        return E_NEGATIVE_LENGTH, p, length, z, z, z, z, z, z, z
    if length > end - p:
        return E_RECORD_PAST_END, p, length, end - p, z, z, z, z, z, z
    rend = p + length
    if p >= rend:  # the attributes byte
        return E_EOF, p, z, z, z, z, z, z, z, z
    p += 1
    ts_delta, p, err = _varint(buf, p, rend)
    if err:
        return err, p, z, z, z, z, z, z, z, z
    offset_delta, p, err = _varint(buf, p, rend)
    if err:
        return err, p, z, z, z, z, z, z, z, z
    key_len, p, err = _varint(buf, p, rend)
    if err:
        return err, p, z, z, z, z, z, z, z, z
    key_pos = p
    if key_len >= 0:
        if key_len > rend - p:
            return E_EOF, p, z, z, z, z, z, z, z, z
        p += key_len
    value_len, p, err = _varint(buf, p, rend)
    if err:
        return err, p, z, z, z, z, z, z, z, z
    value_pos = p
    if value_len >= 0:
        if value_len > rend - p:
            return E_EOF, p, z, z, z, z, z, z, z, z
        p += value_len
    headers, p, err = _varint(buf, p, rend)
    if err:
        return err, p, z, z, z, z, z, z, z, z
    if headers < 0:
        return E_NEGATIVE_HEADERS, p, headers, z, z, z, z, z, z, z
    return E_OK, p, rend, ts_delta, offset_delta, key_pos, key_len, value_pos, value_len, headers


@_jit_inline
def _header_fields(buf, p, rend):
    """The key and value of the header at ``p``, checked as the reference reads them (the key
    UTF-8): (status, position, key position, key length, value position, value length)."""
    z = np.int64(0)
    hk_len, p, err = _varint(buf, p, rend)
    if err:
        return err, p, z, z, z, z
    if hk_len < 0:
        return E_NEGATIVE_HEADER_KEY, p, hk_len, z, z, z  # the value in the key position slot
    if hk_len > rend - p:
        return E_EOF, p, z, z, z, z
    ascii_only = True
    for j in range(p, p + hk_len):
        if u8(buf + j) >= 128:
            ascii_only = False
            break
    if not ascii_only and not _utf8_ok(buf, p, hk_len):
        return E_UTF8, p, z, z, z, z
    hk_pos = p
    p += hk_len
    hv_len, p, err = _varint(buf, p, rend)
    if err:
        return err, p, z, z, z, z
    hv_pos = p
    if hv_len >= 0:
        if hv_len > rend - p:
            return E_EOF, p, z, z, z, z
        p += hv_len
    return E_OK, p, hk_pos, hk_len, hv_pos, hv_len


@_jit_inline
def _timestamp(log_append, base_ts, max_ts, ts_delta):
    """A v2 record's timestamp in milliseconds (the batch's largest under LogAppendTime),
    and whether it has an int64 microsecond value (else its row's timestamp is null)."""
    if log_append:
        ts = max_ts
    else:
        ts, ok = checked_add(base_ts, ts_delta)
        if not ok:
            return ts, False
    return ts, _MS_MIN <= ts <= _MS_MAX


@_jit
def _decode_one(buf, start, end, sec, out, hout, cur, want_headers, vout, least):
    """The v2 records of one section (``buf[start:end]``) into ``out`` (rec_i64, ts_type,
    off32, valid, key_data, value_data) and, when wanted, ``hout`` (hoff, hvalid, hkey_data,
    hvalue_data), from the cursors ``cur``, which move only when the whole section decoded:
    (status, position, arg, arg2). ``vout``, ``least``: binary_view mode (decode_sections).
    Helpers take scalars and addresses only: an array handed to one, even inlined, costs
    reference counting per record."""
    rec_i64, ts_type, off32, valid, key_data, value_data = out
    hoff, hvalid, hkey_data, hvalue_data = hout
    key_address = address_of(key_data)
    value_address = address_of(value_data)
    key_end = key_address + key_data.shape[0]
    value_end = value_address + value_data.shape[0]
    keys = (key_address, key_end)
    values = (value_address, value_end)
    hkey_address = address_of(hkey_data)
    hvalue_address = address_of(hvalue_data)
    hkey_end = hkey_address + hkey_data.shape[0]
    hvalue_end = hvalue_address + hvalue_data.shape[0]
    row_room = rec_i64.shape[1]
    header_room = hvalid.shape[0]
    vmode = vout[0] != 0
    base = sec[S_BASE]
    base_ts = sec[S_BASE_TS]
    max_ts = sec[S_MAX_TS]
    log_append = sec[S_TS_TYPE] == 1
    tstype = np.int32(sec[S_TS_TYPE])
    row = cur[0]
    kb = cur[1]
    vb = cur[2]
    nh = cur[3]
    hkb = cur[4]
    hvb = cur[5]
    # As the reference: a record whose fields do not use exactly its length fails at once
    # (DefaultRecord.readFrom checks it before the next record is read); an offset past
    # int64 (which Kafka would not check) or against the record-offset rule is kept and
    # reported only when the whole payload parsed, so that a malformed record after it has
    # the verdict: structure first, then the first record whose offset is at fault.
    last_delta = sec[S_LAST_DELTA]
    previous_delta = np.int64(-1)  # none yet: a first delta below 0 is outside the range
    bad_status = E_OK
    bad_pos = np.int64(0)
    bad_arg = np.int64(0)
    bad_arg2 = np.int64(0)
    nulls = 0
    p = start
    for read in range(sec[S_COUNT]):
        record_pos = p
        if p >= end:
            return E_PREMATURE_EOF, p, read, 0
        err, p, rend, ts_delta, offset_delta, key_pos, key_len, value_pos, value_len, count = (
            record_fields(buf, p, end)
        )
        if err:
            return err, record_pos, rend, ts_delta
        first_header = nh
        for _h in range(count):
            err, p, hk_pos, hk_len, hv_pos, hv_len = _header_fields(buf, p, rend)
            if err:
                return err, record_pos, hk_pos, 0
            if not want_headers:
                continue
            if (
                nh >= header_room
                or hkb + hk_len > hkey_end - hkey_address
                or (hv_len > 0 and hvb + hv_len > hvalue_end - hvalue_address)
            ):
                return E_ROOM, p, 0, 0
            copy_bytes(hkey_address + hkb, hkey_end, buf + hk_pos, buf + end, hk_len)
            hkb += hk_len
            hoff[0, nh + 1] = hkb
            if hv_len >= 0:
                copy_bytes(hvalue_address + hvb, hvalue_end, buf + hv_pos, buf + end, hv_len)
                hvb += hv_len
                hvalid[nh] = 1
            else:
                hvalid[nh] = 0
            hoff[1, nh + 1] = hvb
            nh += 1
        if p != rend:
            length, body, _e = _varint(buf, record_pos, end)
            return E_RECORD_SIZE, record_pos, length, p - body
        offset, ok = checked_add(base, offset_delta)
        if bad_status == E_OK:
            # format/batches.offset_delta_damage, which cites Kafka's writers: deltas in
            # 0..lastOffsetDelta, strictly increasing (gaps allowed: the cleaner's).
            if not ok:
                bad_status, bad_pos, bad_arg = E_OFFSET_RANGE, record_pos, offset_delta
            elif offset_delta < 0 or offset_delta > last_delta:
                bad_status, bad_pos, bad_arg, bad_arg2 = (
                    E_OFFSET_OUTSIDE,
                    record_pos,
                    offset_delta,
                    last_delta,
                )
            elif offset_delta <= previous_delta:
                bad_status, bad_pos, bad_arg, bad_arg2 = (
                    E_OFFSET_ORDER,
                    record_pos,
                    offset_delta,
                    previous_delta,
                )
        previous_delta = offset_delta
        p = rend
        # The record is whole: emit it.
        ts, representable = _timestamp(log_append, base_ts, max_ts, ts_delta)
        if (
            row >= row_room
            or (key_len > least and kb + key_len > key_end - key_address)
            or (value_len > least and vb + value_len > value_end - value_address)
        ):
            return E_ROOM, p, 0, 0
        rec_i64[0, row] = offset
        if representable:
            rec_i64[1, row] = ts * 1000
            valid[3, row] = 1
        else:
            rec_i64[1, row] = 0
            valid[3, row] = 0
            if nulls == 0:
                sec[S_NULL_TS_OFFSET] = offset
            nulls += 1
        ts_type[row] = tstype
        valid[0, row] = 1 if key_len >= 0 else 0
        valid[1, row] = 1 if value_len >= 0 else 0
        kb, vb = _key_value(
            vout, least, row, buf, end, key_pos, key_len, value_pos, value_len, keys, kb, values, vb
        )
        if not vmode:
            off32[0, row + 1] = kb
            off32[1, row + 1] = vb
        if want_headers:
            valid[2, row] = 1 if nh > first_header else 0
            off32[2, row + 1] = nh
        row += 1
    if p != end:
        return E_LEFTOVER, p, 0, end - p
    if bad_status != E_OK:
        return bad_status, bad_pos, bad_arg, bad_arg2
    sec[S_NULL_TS] = nulls
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
    magic = u8(buf + pos + layout.LEGACY_MAGIC)
    attributes = u8(buf + pos + layout.LEGACY_ATTRIBUTES)
    p = pos + layout.LEGACY_HEADER_SIZE
    timestamp = np.int64(-1)
    if magic == 1:
        if end - p < layout.LEGACY_V1_TIMESTAMP_SIZE:
            return E_MESSAGE_EOF, p, magic, attributes, timestamp, 0, -1, 0, -1
        timestamp = be64(buf, p)
        p += layout.LEGACY_V1_TIMESTAMP_SIZE
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
def _decode_inner(buf, start, end, sec, out, cur, vout, least):
    """The inner entries of a v0/v1 wrapper, decompressed into ``u8(buf + start:end)``, checked
    as the reference reads them; v1 inner offsets are relative to the wrapper's. ``out`` as
    ``_decode_one``'s; ``vout``, ``least``: binary_view mode (decode_sections)."""
    rec_i64, ts_type, off32, valid, key_data, value_data = out
    vmode = vout[0] != 0
    keys = (address_of(key_data), address_of(key_data) + key_data.shape[0])  # (address, end)
    values = (address_of(value_data), address_of(value_data) + value_data.shape[0])
    wrapper_magic = sec[S_MAGIC]
    log_append = sec[S_TS_TYPE] == 1
    verify = sec[S_VERIFY]
    row0 = cur[0]
    pos = start
    last_offset = np.int64(0)
    count = 0
    nulls = 0
    first_null = row0
    while end - pos > layout.FRAME_HEADER_SIZE:
        inner_offset = be64(buf, pos)
        length = be32(buf, pos + layout.FRAME_LENGTH)
        sec[S_ERR_ARG3] = inner_offset
        if length < layout.MIN_FRAME_LENGTH:
            return E_INNER_FRAMING, pos, length, 0
        if length > end - pos - layout.LOG_OVERHEAD:
            break
        frame_end = pos + layout.LOG_OVERHEAD + length
        magic = u8(buf + pos + layout.FRAME_MAGIC)
        if magic != 0 and magic != 1:
            return E_INNER_MAGIC, pos, magic, 0
        err, p, magic, attributes, timestamp, kpos, klen, vpos, vlen = _message(buf, pos, frame_end)
        if err:
            return err, p, 0, 0
        if attributes & layout.LEGACY_ATTR_COMPRESSION_MASK:
            return E_INNER_NESTED, pos, 0, 0
        if verify:
            computed = _crc32(buf, pos + layout.LEGACY_CRC_START, frame_end)
            stored = be32u(buf, pos + layout.LEGACY_CRC)
            if computed != stored:
                return E_CRC, pos, computed, stored
        # As format/batches._inner_timestamp (Kafka's DeepRecordsIterator and LegacyRecord):
        # a magic 0 inner message has no timestamp, whatever the wrapper; a magic 1 one the
        # wrapper's under LogAppendTime, else its own, with the wrapper's type.
        if magic == 0:
            ts, has_ts, tstype = np.int64(0), 0, -1
        elif wrapper_magic == 0:
            ts, has_ts, tstype = timestamp, 1, -1
        elif log_append:
            ts, has_ts, tstype = sec[S_BASE_TS], 1, 1
        else:
            ts, has_ts, tstype = timestamp, 1, 0
        if has_ts and (ts > _MS_MAX or ts < _MS_MIN):
            has_ts = 0  # null in Arrow, counted for the report
            if nulls == 0:
                first_null = cur[0]
            nulls += 1
        row = cur[0]
        kb = cur[1]
        vb = cur[2]
        if (
            row >= rec_i64.shape[1]
            or (klen > least and kb + klen > key_data.shape[0])
            or (vlen > least and vb + vlen > value_data.shape[0])
        ):
            return E_ROOM, pos, 0, 0
        rec_i64[0, row] = inner_offset
        rec_i64[1, row] = ts * 1000
        valid[3, row] = has_ts
        ts_type[row] = tstype
        valid[0, row] = klen >= 0
        valid[1, row] = vlen >= 0
        kb, vb = _key_value(
            vout, least, row, buf, end, kpos, klen, vpos, vlen, keys, kb, values, vb
        )
        if not vmode:
            off32[0, row + 1] = kb
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
    # As format/batches._wrapper_base (Kafka's DeepRecordsIterator): v1 inner offsets are
    # relative to wrapper offset - last inner offset, unless the wrapper offset is 0; one
    # below the last inner offset is invalid. Then every offset is checked as the reference
    # computes it, exactly: W - L fits a uint64 (W >= L), W - L + I must fit an int64.
    wrapper = sec[S_BASE]
    if wrapper_magic == 1 and wrapper != 0:
        if wrapper < last_offset:
            return E_WRAPPER_OFFSET, start, wrapper, last_offset
        span = np.uint64(wrapper) - np.uint64(last_offset)
        for r in range(row0, cur[0]):
            inner = rec_i64[0, r]
            if span <= np.uint64(_I64_MAX):
                offset, ok = checked_add(np.int64(span), inner)
            elif inner < 0:
                rest = span - (np.uint64(-(inner + 1)) + np.uint64(1))
                offset, ok = np.int64(rest), rest <= np.uint64(_I64_MAX)
            else:
                offset, ok = np.int64(0), False
            if not ok:
                sec[S_ERR_ARG3] = inner
                return E_OFFSET_RANGE, start, wrapper, last_offset
            rec_i64[0, r] = offset
    if nulls:
        sec[S_NULL_TS] = nulls
        sec[S_NULL_TS_OFFSET] = rec_i64[0, first_null]
    return E_OK, end, 0, 0
