"""Arrow ``binary_view`` views written at an address, for the record decoder's view mode
(``records.decode_sections`` with ``binary_view=True``).

A view is 16 bytes: the length (int32), then either the bytes themselves when there are at
most 12, zero-padded (Arrow's format: ``validate(full=True)`` checks it), or a 4-byte prefix,
the index of a data buffer and the offset in it (int32 each). A null is 16 zero bytes (the
validity bitmap says it).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .addresses import le32, le64, memcpy, store_le64, store_u8, u8

INLINE = 12  # bytes held in the view itself
VIEW_SIZE = 16

_MASK32 = np.int64(0xFFFFFFFF)


@njit(cache=True, inline="always")
def put_view(at, src, n, src_end, index, offset):  # pragma: no cover - numba
    """The view of the ``n`` bytes at address ``src`` (a null when ``n`` is below 0) into the
    16 bytes at address ``at``: inline when ``n`` <= 12, else pointing at ``offset`` in data
    buffer ``index``. Bytes up to ``src_end`` may be read past the ``n`` (two 8-byte loads
    make an inline view; the bytes past ``n`` are masked off)."""
    if n > INLINE:
        store_le64(at, np.int64(n) | (le32(src) << 32))
        store_le64(at + 8, np.int64(index) | (np.int64(offset) << 32))
        return
    if n <= 0:
        store_le64(at, np.int64(0))
        store_le64(at + 8, np.int64(0))
        return
    if src + 16 <= src_end:
        a = le64(src)
        b = le64(src + 8)
        # Bytes 4..7 of the view are the data's 0..3, bytes 8..15 its 4..11.
        w0 = np.int64(n) | (a << 32)
        w1 = ((a >> 32) & _MASK32) | (b << 32)
        if n < 4:
            w0 &= (np.int64(1) << (32 + 8 * n)) - 1
            w1 = np.int64(0)
        elif n < 12:
            w1 &= (np.int64(1) << (8 * (n - 4))) - 1
        store_le64(at, w0)
        store_le64(at + 8, w1)
        return
    store_le64(at, np.int64(n))  # near the end of its buffer: byte by byte
    store_le64(at + 8, np.int64(0))
    for j in range(n):
        store_u8(at + 4 + j, u8(src + j))


IN_PLACE = np.int64(1) << 62  # ``least`` of a section viewed in place: nothing is gathered


@njit(cache=True, inline="always")
def view_or_gather(vout, column, row, src, n, src_end, least, dst, used):
    """``records.decode_sections``'s binary_view mode: the view of key (``column`` 1) or
    value (2) of ``row``, the ``n`` bytes at ``src``: in place, or (``n`` > ``least``) into
    their copy at ``dst + used``. ``vout``: (mode, key views' address, value views' address,
    data buffer 0's address, the copies' buffer index). Returns the bytes used at ``dst``.
    Bytes up to ``src_end`` may be read past ``n``."""
    # Constant indices only: a tuple indexed by a variable is copied to the stack each time.
    at = (vout[1] if column == 1 else vout[2]) + VIEW_SIZE * row
    if n <= least:
        put_view(at, src, n, src_end, 0, src - vout[3])
        return used
    memcpy(dst + used, src, n)  # room checked by the caller
    put_view(at, src, n, src_end, vout[4], used)
    return used + n
