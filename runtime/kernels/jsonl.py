"""Numba kernel writing records as JSON lines, the canonical form of ``format/jsonform.py``.

``dump --jsonl`` prints every record of a log: building a dict and calling ``json.dumps`` for
each took 27 times as long as decoding the records into Arrow. :func:`write_lines` reads the
buffers of the Arrow columns (``read/jsonlines.py`` takes them apart) and writes the lines
into one byte buffer, without a Python object per record, and without the GIL.

The bytes are the ones ``json.dumps(record_json(record), separators=(",", ":"))`` writes
(with, when asked, ``topic``, ``partition``, ``file`` and ``position`` after those keys):
keys in that order, integers in decimal, keys and values in standard base64 with padding,
header keys escaped as ``json`` escapes with ``ensure_ascii`` (``\\"``, ``\\\\``, ``\\n``,
``\\r``, ``\\t``, ``\\b``, ``\\f``, every other byte outside space..tilde as ``\\u00xx``, other
code points as ``\\uxxxx``, lower-case, with surrogate pairs above U+FFFF).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .addresses import address_of, be32u, le64, load_be64, store_le64, u8

_B64 = np.frombuffer(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/", np.uint8)
# Two characters for each 12 bits, the first in the low byte (stored little-endian); 16 bits
# an entry, so that the table (8 KiB) stays in the L1 cache.
_TWELVE = np.arange(4096)
_B64_PAIRS = _B64[_TWELVE >> 6].astype(np.uint16) | (_B64[_TWELVE & 63].astype(np.uint16) << 8)
_HEX = np.frombuffer(b"0123456789abcdef", np.uint8)
_ONES = np.uint64(0x0101010101010101)  # a byte of 1 in each lane of a word


def _words(text: bytes) -> np.ndarray:
    """Constant text as little-endian 8-byte words, then its length (read-only; one array
    from one buffer: a located line's text is made once a record batch)."""
    padded = text.ljust(-(-len(text) // 8) * 8, b"\0") + len(text).to_bytes(8, "little")
    return np.frombuffer(padded, "<i8").astype(np.int64, copy=False)


#: Text a line ends with (``write_lines``' ``tail``), in the form it takes.
constant_text = _words

# The fixed text of a line, in the order json.dumps writes record_json's keys.
_OFFSET = _words(b'{"offset":')
_TIMESTAMP = _words(b',"timestamp":')
_TIMESTAMP_TYPE = _words(b',"timestampType":')
_KEY = _words(b',"key":')
_VALUE = _words(b',"value":')
_HEADERS = _words(b',"headers":[')
_HEADER_KEY = _words(b'{"key":"')
_HEADER_VALUE = _words(b'","value":')
_NULL = _words(b"null")
_PAIRS = np.frombuffer("".join(f"{i:02d}" for i in range(100)).encode(), np.uint8)
_POWERS = np.array([10**i for i in range(20)], np.uint64)
#: Bytes past the end of the lines that ``_put`` may write.
SLACK = 16

#: Most bytes a line takes besides its base64 and its header keys: the fixed text, two int64
#: of 20 characters at most, a timestamp type, and two nulls' worth of quotes.
LINE_FIXED = 160
#: Most bytes a header takes besides its key's escapes and its value's base64.
HEADER_FIXED = 32
#: Most bytes one byte of a header key becomes (``\u00xx``).
KEY_ESCAPE = 6

_jit_inline = njit(cache=True, inline="always")
_kernel = njit(cache=True, nogil=True)


def capacity(
    rows: int, headers: int, binary_bytes: int, header_key_bytes: int, tail: int = 0
) -> int:
    """Room :func:`write_lines` needs at most: ``binary_bytes`` counts keys, values and header
    values (their base64), ``header_key_bytes`` the header keys (their escapes), ``tail`` the
    bytes of the where-from text each line gets (0 for none)."""
    b64 = (binary_bytes + 2) // 3 * 4 + 4 * (2 * rows + headers)
    where = rows * (tail + 20) if tail else 0
    return (
        rows * LINE_FIXED
        + headers * HEADER_FIXED
        + b64
        + header_key_bytes * KEY_ESCAPE
        + where
        + SLACK
    )


@_jit_inline
def _put(out, at, text):
    """Constant text (``_words``), eight bytes a store: up to seven bytes past its end are
    written too, and overwritten by what follows (the buffer has ``SLACK`` bytes spare)."""
    dst = address_of(out) + at
    for i in range(text.shape[0] - 1):
        store_le64(dst + 8 * i, text[i])
    return at + text[text.shape[0] - 1]


@_jit_inline
def _int(out, at, value):
    """``value`` (int64) in decimal, as Python prints it."""
    if value < 0:
        out[at] = 45  # '-'
        at += 1
        # The magnitude as unsigned: -(-2**63) does not fit an int64.
        magnitude = np.uint64(-(value + 1)) + np.uint64(1)
    else:
        magnitude = np.uint64(value)
    digits = 1
    while digits < 20 and magnitude >= _POWERS[digits]:
        digits += 1
    p = at + digits
    while magnitude >= np.uint64(100):
        pair = np.int64(magnitude % np.uint64(100))
        magnitude //= np.uint64(100)
        p -= 2
        out[p] = _PAIRS[2 * pair]
        out[p + 1] = _PAIRS[2 * pair + 1]
    if magnitude >= np.uint64(10):
        pair = np.int64(magnitude)
        out[p - 2] = _PAIRS[2 * pair]
        out[p - 1] = _PAIRS[2 * pair + 1]
    else:
        out[p - 1] = np.uint64(48) + magnitude
    return at + digits


@_jit_inline
def _eight_chars(v):
    """The base64 of six bytes (``v``'s low 48 bits, the first byte highest) as one
    little-endian word: four look-ups of two characters each."""
    return (
        np.int64(_B64_PAIRS[(v >> 36) & 0xFFF])
        | (np.int64(_B64_PAIRS[(v >> 24) & 0xFFF]) << 16)
        | (np.int64(_B64_PAIRS[(v >> 12) & 0xFFF]) << 32)
        | (np.int64(_B64_PAIRS[v & 0xFFF]) << 48)
    )


@_jit_inline
def _base64(out, at, data, start, end):
    """``data[start:end]`` in standard base64 with padding, between quotes. Six bytes at a
    time become eight characters: four look-ups of two characters each, one 8-byte store."""
    out[at] = 34
    at += 1
    src = address_of(data)
    dst = address_of(out)
    i = start
    while end - i >= 8:  # an 8-byte load of which six are taken: none past the value's end
        store_le64(dst + at, _eight_chars((load_be64(src + i) >> 16) & 0xFFFFFFFFFFFF))
        at += 8
        i += 6
    if end - i >= 6:  # the last six, read as they lie
        v = (be32u(src, i) << 16) | (u8(src + i + 4) << 8) | u8(src + i + 5)
        store_le64(dst + at, _eight_chars(v))
        at += 8
        i += 6
    while end - i >= 3:
        v = (u8(src + i) << 16) | (u8(src + i + 1) << 8) | u8(src + i + 2)
        out[at] = _B64[v >> 18]
        out[at + 1] = _B64[(v >> 12) & 63]
        out[at + 2] = _B64[(v >> 6) & 63]
        out[at + 3] = _B64[v & 63]
        at += 4
        i += 3
    left = end - i
    if left:
        v = u8(src + i) << 16
        if left == 2:
            v |= u8(src + i + 1) << 8
        out[at] = _B64[v >> 18]
        out[at + 1] = _B64[(v >> 12) & 63]
        out[at + 2] = _B64[(v >> 6) & 63] if left == 2 else 61
        out[at + 3] = 61
        at += 4
    out[at] = 34
    return at + 1


@_jit_inline
def _u_escape(out, at, code):
    out[at] = 92  # backslash
    out[at + 1] = 117  # 'u'
    out[at + 2] = _HEX[(code >> 12) & 15]
    out[at + 3] = _HEX[(code >> 8) & 15]
    out[at + 4] = _HEX[(code >> 4) & 15]
    out[at + 5] = _HEX[code & 15]
    return at + 6


@_jit_inline
def _short_escape(c):
    """The letter of json's two-character escape for byte ``c``, or 0."""
    if c == 34 or c == 92:
        return c
    if c == 10:
        return 110  # n
    if c == 13:
        return 114  # r
    if c == 9:
        return 116  # t
    if c == 8:
        return 98  # b
    if c == 12:
        return 102  # f
    return 0


@_jit_inline
def _string(out, at, data, start, end):
    """UTF-8 ``data[start:end]`` as json.dumps writes a str with ``ensure_ascii`` (without the
    quotes). The decoders admit only strict UTF-8 into a string column; a byte that does not
    start a sequence is written as its own code point rather than read past."""
    i = start
    src = address_of(data)
    dst = address_of(out)
    while end - i >= 8:  # eight plain characters (space..tilde, no quote or backslash) at once
        w = np.uint64(le64(src + i))
        low = (w - _ONES * np.uint64(0x20)) & ~w  # a byte below space
        high = (w + _ONES * np.uint64(0x01)) | w  # a byte above tilde (DEL or not ASCII)
        quote, slash = w ^ (_ONES * np.uint64(0x22)), w ^ (_ONES * np.uint64(0x5C))
        escaped = ((quote - _ONES) & ~quote) | ((slash - _ONES) & ~slash)
        if (low | high | escaped) & (_ONES * np.uint64(0x80)):
            break
        store_le64(dst + at, np.int64(w))
        at += 8
        i += 8
    while i < end:
        c = np.int64(data[i])
        if 32 <= c <= 126 and c != 34 and c != 92:
            out[at] = c
            at += 1
            i += 1
            continue
        if c < 128:
            letter = _short_escape(c)
            if letter:
                out[at] = 92
                out[at + 1] = letter
                at += 2
            else:
                at = _u_escape(out, at, c)
            i += 1
            continue
        need = 1 if c >= 0xC0 and c < 0xE0 else (2 if c >= 0xE0 and c < 0xF0 else 3)
        if c < 0xC0 or c >= 0xF8 or i + need >= end:
            at = _u_escape(out, at, c)
            i += 1
            continue
        code = c & (0x1F if need == 1 else (0x0F if need == 2 else 0x07))
        for k in range(1, need + 1):
            code = (code << 6) | (np.int64(data[i + k]) & 0x3F)
        i += need + 1
        if code >= 0x10000:
            code -= 0x10000
            at = _u_escape(out, at, 0xD800 | (code >> 10))
            at = _u_escape(out, at, 0xDC00 | (code & 0x3FF))
        else:
            at = _u_escape(out, at, code)
    return at


@_kernel
def write_lines(
    lo,
    hi,
    offsets,
    timestamps,
    timestamp_valid,
    timestamp_types,
    key_offsets,
    key_data,
    key_valid,
    value_offsets,
    value_data,
    value_valid,
    header_offsets,
    header_valid,
    hkey_offsets,
    hkey_data,
    hvalue_offsets,
    hvalue_data,
    hvalue_valid,
    tail,
    positions,
    out,
):
    """Rows ``lo:hi`` as JSON lines into ``out`` (room: :func:`capacity`); returns the bytes
    written. Timestamps are Arrow's microseconds; a ``*_valid`` array of length 0 means no
    nulls; ``header_offsets`` index the header columns (``hkey_*``, ``hvalue_*``). Where
    ``positions`` is not empty each line ends with where its record was: ``tail`` (the
    constant text ``,"topic":...,"position":``, as :data:`constant_text` makes it) then the
    row's batch position."""
    at = 0
    for r in range(lo, hi):
        at = _put(out, at, _OFFSET)
        at = _int(out, at, offsets[r])
        at = _put(out, at, _TIMESTAMP)
        if timestamp_valid.shape[0] == 0 or timestamp_valid[r]:
            at = _int(out, at, timestamps[r] // 1000)
        else:
            at = _put(out, at, _NULL)
        at = _put(out, at, _TIMESTAMP_TYPE)
        at = _int(out, at, np.int64(timestamp_types[r]))
        at = _put(out, at, _KEY)
        if key_valid.shape[0] == 0 or key_valid[r]:
            at = _base64(out, at, key_data, key_offsets[r], key_offsets[r + 1])
        else:
            at = _put(out, at, _NULL)
        at = _put(out, at, _VALUE)
        if value_valid.shape[0] == 0 or value_valid[r]:
            at = _base64(out, at, value_data, value_offsets[r], value_offsets[r + 1])
        else:
            at = _put(out, at, _NULL)
        at = _put(out, at, _HEADERS)
        if header_valid.shape[0] == 0 or header_valid[r]:
            for h in range(header_offsets[r], header_offsets[r + 1]):
                if h > header_offsets[r]:
                    out[at] = 44  # ','
                    at += 1
                at = _put(out, at, _HEADER_KEY)
                at = _string(out, at, hkey_data, hkey_offsets[h], hkey_offsets[h + 1])
                at = _put(out, at, _HEADER_VALUE)
                if hvalue_valid.shape[0] == 0 or hvalue_valid[h]:
                    at = _base64(out, at, hvalue_data, hvalue_offsets[h], hvalue_offsets[h + 1])
                else:
                    at = _put(out, at, _NULL)
                out[at] = 125  # '}'
                at += 1
        out[at] = 93  # ']'
        at += 1
        if positions.shape[0] != 0:
            at = _put(out, at, tail)
            at = _int(out, at, positions[r])
        out[at] = 125  # '}'
        out[at + 1] = 10  # newline
        at += 2
    return at
