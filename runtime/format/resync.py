"""Where the next whole batch starts: the search every walk makes past damage.

A position starts a whole batch when its 17 header bytes are plausible (a length in range that
fits, magic 0, 1 or 2; for v2 a full header and a codec Kafka defines) and the stored CRC holds
over the bytes the length gives. :func:`resync` finds the first such position, linear in the
bytes it searches. It sits below ``framing`` (whose verdicts name the resume position) and
``extent`` (which tries a compressed batch's candidate ends).
"""

from __future__ import annotations

import numpy as np

from . import layout
from .crc import crc32, crc32c

__all__ = ["as_bytes", "resync"]

_SEARCH_CHUNK = 1 << 20
_HEADER = layout.field_struct(layout.FRAME_HEADER_FIELDS, "base_offset", "length")
_U32 = layout.field_struct(layout.V2_HEADER_FIELDS, "crc")


def as_bytes(buf) -> memoryview:
    """``buf`` as a flat memoryview of bytes."""
    view = buf if isinstance(buf, memoryview) else memoryview(buf)
    if view.format != "B" or view.ndim != 1:
        view = view.cast("B")
    return view


def resync(
    view,
    start: int,
    limit: int,
    *,
    window: int | None = None,
    to_the_end: bool = False,
    wrapper: bool = False,
    offsets: tuple[int, int] | None = None,
) -> int | None:
    """The first position at or after ``start`` where a whole batch starts: a plausible header
    (length in range and within ``limit``, magic 0/1/2, for v2 a full header and a known
    codec) whose CRC holds. With ``to_the_end``, the batches from there on must also follow
    each other, CRCs holding, to the end of the data: the inner messages of a v0/v1 wrapper
    lie verbatim in a snappy or LZ4 literal with their CRCs, but seldom lead to the end;
    with ``wrapper`` (the search starts inside a compressed v0/v1 wrapper) such a chain must
    hold a batch that cannot be an inner message (v2, or compressed).
    Candidates starting more than ``window`` bytes after ``start`` are not looked at.
    ``offsets`` (first, last): only candidates whose base offset lies in that range (what a
    caller knowing the offsets around the damage expects), which spares the CRCs of the many
    false candidates some payloads are full of.

    Linear in the bytes searched: headers are filtered in numpy a chunk at a time, and the
    CRCs computed stay within twice the bytes left plus 64 KiB (then it gives up: None)."""
    view = as_bytes(view)
    limit = min(limit, len(view))
    # the last start a batch fits after
    stop = limit - layout.LOG_OVERHEAD - layout.MIN_FRAME_LENGTH + 1
    if window is not None:
        stop = min(stop, start + window)
    if start >= stop:
        return None
    data = np.frombuffer(view, np.uint8, count=limit)
    budget = [2 * (limit - start) + (1 << 16)]
    lo = start
    while lo < stop:
        hi = min(stop, lo + _SEARCH_CHUNK)
        for p in _candidates(data, lo, hi, limit, offsets):
            if _whole(view, p, budget) and (
                not to_the_end or _chain_ends(view, p, limit, budget, wrapper)
            ):
                return p
            if budget[0] < 0:
                return None
        lo = hi
    return None


def _whole(view: memoryview, pos: int, budget: list[int]) -> bool:
    """Whether the frame at ``pos`` (known to fit) has a CRC that holds; charged to budget."""
    size = layout.LOG_OVERHEAD + _HEADER.unpack_from(view, pos)[1]
    budget[0] -= size
    return budget[0] >= 0 and _crc_holds(view, pos, size)


def _chain_ends(view: memoryview, pos: int, limit: int, budget: list[int], wrapper: bool) -> bool:
    """Whether whole batches follow each other from the one at ``pos`` to Kafka's end (and,
    with ``wrapper``, one of them is no plain v0/v1 message)."""
    outer = not wrapper
    while True:
        length = _HEADER.unpack_from(view, pos)[1]
        outer = (
            outer
            or view[pos + layout.FRAME_MAGIC] == 2
            or view[pos + layout.LEGACY_ATTRIBUTES] & layout.LEGACY_ATTR_COMPRESSION_MASK != 0
        )
        pos += layout.LOG_OVERHEAD + length
        if limit - pos <= layout.FRAME_HEADER_SIZE:
            return outer
        length = _HEADER.unpack_from(view, pos)[1]
        fits = layout.MIN_FRAME_LENGTH <= length <= limit - pos - layout.LOG_OVERHEAD
        if not fits or view[pos + layout.FRAME_MAGIC] > 2 or not _whole(view, pos, budget):
            return False


def _candidates(
    data: np.ndarray, lo: int, hi: int, limit: int, offsets: tuple[int, int] | None = None
) -> list[int]:
    """Positions in [lo, hi) whose 17 header bytes could start a whole batch before limit
    (and whose base offset lies in ``offsets``, when given)."""
    magic = data[lo + layout.FRAME_MAGIC : hi + layout.FRAME_MAGIC]
    hits = np.flatnonzero(magic <= 2)
    if not len(hits):
        return []
    at = hits + lo
    length_field = at + layout.FRAME_LENGTH
    length = (
        (data[length_field].astype(np.int64) << 24)
        | (data[length_field + 1].astype(np.int64) << 16)
        | (data[length_field + 2].astype(np.int64) << 8)
        | data[length_field + 3]
    )
    room = limit - at - layout.LOG_OVERHEAD
    ok = (length >= layout.MIN_FRAME_LENGTH) & (length <= room) & (data[length_field] < 0x80)
    v2 = magic[hits] == 2
    ok &= ~v2 | (length >= layout.V2_MIN_BATCH_LENGTH)
    if ok.any():
        # v2: a codec Kafka defines (attributes' low bits, in their second byte); cheap, and
        # it spares CRCs.
        v2_ok = np.ones(len(at), bool)
        fits = ok & v2
        codec_byte = data[at[fits] + layout.V2_ATTRIBUTES + 1]
        v2_ok[fits] = (codec_byte & layout.V2_ATTR_COMPRESSION_MASK) <= 4
        ok &= v2_ok
    if offsets is not None and ok.any():
        kept = at[ok]
        base = np.zeros(len(kept), np.uint64)
        for i in range(8):
            base = (base << np.uint64(8)) | data[kept + i].astype(np.uint64)
        signed = base.view(np.int64)
        ok[ok] = (signed >= offsets[0]) & (signed <= offsets[1])
    return at[ok].tolist()


def _crc_holds(view: memoryview, pos: int, size: int) -> bool:
    frame = view[pos : pos + size]
    if frame[layout.FRAME_MAGIC] == 2:
        return crc32c(frame[layout.V2_CRC_START :]) == _U32.unpack_from(frame, layout.V2_CRC)[0]
    stored = _U32.unpack_from(frame, layout.LEGACY_CRC)[0]
    return crc32(frame[layout.LEGACY_CRC_START :]) == stored
