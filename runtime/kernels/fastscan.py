"""Numba-compiled frame scanner behind the columnar fast path (``columnar.py``).

:func:`scan_frames` walks the frames of a buffer as ``framing.judge`` does and copies each
frame's header fields into a table, so that Python never touches a frame one by one in the
common case; :func:`make_sections` turns the frames to decode into the sections of
``records.decode_sections``, the record decoders. Both are compiled once and cached on disk
(``cache=True``), and release the GIL. The section, cursor and status constants and
``decode_sections`` live in ``records`` and are re-exported here.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..format import layout

# numba's on-disk cache checks only the file of the function it caches: after changing one of
# these modules, touch this file too, or its kernels keep the old code of their callees.
from .addresses import address_of, be16, be32, be32u, be64, u8
from .records import copy_bytes as copy_bytes  # tests reach the copy helper here
from .records import decode_sections  # re-exported: callers know it as fastscan's
from .section_codes import (  # re-exported: callers know these as fastscan's
    C_HEADERS,
    C_HKEY_BYTES,
    C_HVALUE_BYTES,
    C_KEY_BYTES,
    C_ROWS,
    C_VALUE_BYTES,
    CURSORS,
    E_CRC,
    E_DECOMPRESS,
    E_EOF,
    E_INNER_FRAMING,
    E_INNER_MAGIC,
    E_INNER_NESTED,
    E_INNER_NO_TIMESTAMP,
    E_INNER_NONE,
    E_INNER_TRAILING,
    E_LEFTOVER,
    E_MESSAGE_EOF,
    E_NEGATIVE_HEADER_KEY,
    E_NEGATIVE_HEADERS,
    E_NEGATIVE_LENGTH,
    E_OFFSET_RANGE,
    E_OK,
    E_PREMATURE_EOF,
    E_RECORD_PAST_END,
    E_RECORD_SIZE,
    E_ROOM,
    E_TIMESTAMP_RANGE,
    E_UTF8,
    E_VARINT_TOO_LONG,
    FORMAT_INNER,
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
    S_PAYLOAD_END,
    S_PAYLOAD_START,
    S_ROWS_END,
    S_START,
    S_STATUS,
    S_TS_TYPE,
    S_VERIFY,
    SECTION_COLUMNS,
)

__all__ = [
    "CURSORS",
    "C_HEADERS",
    "C_HKEY_BYTES",
    "C_HVALUE_BYTES",
    "C_KEY_BYTES",
    "C_ROWS",
    "C_VALUE_BYTES",
    "E_CRC",
    "E_DECOMPRESS",
    "E_EOF",
    "E_INNER_FRAMING",
    "E_INNER_MAGIC",
    "E_INNER_NESTED",
    "E_INNER_NONE",
    "E_INNER_NO_TIMESTAMP",
    "E_INNER_TRAILING",
    "E_LEFTOVER",
    "E_MESSAGE_EOF",
    "E_NEGATIVE_HEADERS",
    "E_NEGATIVE_HEADER_KEY",
    "E_NEGATIVE_LENGTH",
    "E_OFFSET_RANGE",
    "E_OK",
    "E_PREMATURE_EOF",
    "E_RECORD_PAST_END",
    "E_RECORD_SIZE",
    "E_ROOM",
    "E_TIMESTAMP_RANGE",
    "E_UTF8",
    "E_VARINT_TOO_LONG",
    "FORMAT_INNER",
    "FORMAT_LEGACY",
    "FORMAT_PACKED_V2",
    "FORMAT_PACKED_WRAPPER",
    "FORMAT_V2",
    "FRAME_COLUMNS",
    "F_ATTR",
    "F_BASE",
    "F_BASE_TS",
    "F_COUNT",
    "F_CRC",
    "F_HEADER_OK",
    "F_LAST_DELTA",
    "F_MAGIC",
    "F_MAX_TS",
    "F_PID",
    "F_POS",
    "F_SIZE",
    "K_COMPRESSED",
    "K_FAST",
    "K_LEGACY",
    "K_REFERENCE",
    "K_WRAPPER",
    "SCAN_BUDGET",
    "SCAN_END",
    "SCAN_FRAMING_ERROR",
    "SECTION_COLUMNS",
    "S_ADDR",
    "S_BASE",
    "S_BASE_TS",
    "S_CODEC",
    "S_COUNT",
    "S_END",
    "S_ERR_ARG",
    "S_ERR_ARG2",
    "S_ERR_ARG3",
    "S_ERR_POS",
    "S_FORMAT",
    "S_KEEP",
    "S_MAGIC",
    "S_MAX_TS",
    "S_PAYLOAD_END",
    "S_PAYLOAD_START",
    "S_ROWS_END",
    "S_START",
    "S_STATUS",
    "S_TS_TYPE",
    "S_VERIFY",
    "decode_sections",
    "make_sections",
    "scan_frames",
]

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

#: How a frame is decoded (columnar.py's plan): v2 in place, v2 decompressed, v0/v1 in place,
#: v0/v1 wrapper decompressed, or by the reference decoder.
K_FAST, K_COMPRESSED, K_LEGACY, K_WRAPPER, K_REFERENCE = 0, 1, 2, 3, 4

_kernel = njit(cache=True, nogil=True)


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
        if remaining <= layout.FRAME_HEADER_SIZE:
            return n, pos, SCAN_END
        length = be32(buf, pos + layout.FRAME_LENGTH)
        magic = u8(buf + pos + layout.FRAME_MAGIC)  # unsigned: a negative magic is above 2 here
        if length < layout.MIN_FRAME_LENGTH or magic > 2:
            return n, pos, SCAN_FRAMING_ERROR
        if length > remaining - layout.LOG_OVERHEAD:
            return n, pos, SCAN_END
        size = layout.LOG_OVERHEAD + length
        count = np.int64(1)
        header_ok = 0
        attributes = np.int64(0)
        if magic == 2 and size >= layout.V2_HEADER_SIZE:
            header_ok = 1
            attributes = be16(buf, pos + layout.V2_ATTRIBUTES)
            count = be32(buf, pos + layout.V2_RECORDS_COUNT)
        elif magic == 0 or magic == 1:
            attributes = u8(buf + pos + layout.LEGACY_ATTRIBUTES)
            if magic == 0:
                minimum = layout.LEGACY_V0_RECORD_OVERHEAD
            else:
                minimum = layout.LEGACY_V1_RECORD_OVERHEAD
            header_ok = 1 if length >= minimum else 0
        frame_rows = count if count > 0 else np.int64(1)
        # the codec bits lie where v2 has them in v0/v1 attributes too
        compressed = attributes & layout.V2_ATTR_COMPRESSION_MASK
        frame_weight = size * compressed_weight if compressed else size
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
            row[F_CRC] = be32u(buf, pos + layout.V2_CRC)
            row[F_LAST_DELTA] = be32(buf, pos + layout.V2_LAST_OFFSET_DELTA)
            row[F_BASE_TS] = be64(buf, pos + layout.V2_BASE_TIMESTAMP)
            row[F_MAX_TS] = be64(buf, pos + layout.V2_MAX_TIMESTAMP)
            row[F_PID] = be64(buf, pos + layout.V2_PRODUCER_ID)
        else:
            row[F_CRC] = be32u(buf, pos + layout.LEGACY_CRC)
            row[F_LAST_DELTA] = 0
            if magic == 1 and header_ok:
                row[F_BASE_TS] = be64(buf, pos + layout.LEGACY_V1_TIMESTAMP)
            else:
                row[F_BASE_TS] = -1
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
        sec[S_START] = pos + layout.V2_HEADER_SIZE if v2 else pos
        sec[S_END] = pos + row[F_SIZE]
        sec[S_COUNT] = row[F_COUNT]
        sec[S_BASE] = row[F_BASE]
        sec[S_BASE_TS] = row[F_BASE_TS]
        sec[S_MAX_TS] = row[F_MAX_TS]
        sec[S_LAST_DELTA] = row[F_LAST_DELTA]  # the record-offset rule's bound (records.py)
        sec[S_TS_TYPE] = 1 if row[F_ATTR] & 8 else 0
        sec[S_KEEP] = 1 if keep[i] else 0
        sec[S_FORMAT] = FORMAT_V2 if v2 else (FORMAT_LEGACY if fmt == K_LEGACY else FORMAT_INNER)
        sec[S_MAGIC] = row[F_MAGIC]
        sec[S_VERIFY] = verify
