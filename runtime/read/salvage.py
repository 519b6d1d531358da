"""``errors="salvage"``: every whole batch of a damaged file, before and after its damage.

``errors="skip"`` steps over a batch whose frame is intact (its CRC fails, its records do not
decode) but ends the file at framing damage: a length below 14, an invalid magic, a length
running past the end before whole batches. Salvage reports that damage in the same words
(``framing.judge``'s verdict, ``Damage.error``) and goes on at the next position where a whole
batch whose CRC holds starts (``framing.resync``, searched to the end of the file, linear in
the bytes), as often as the file is damaged. Kafka's own recovery (``LogSegment.recover``)
truncates at the first invalid batch instead; this keeps what follows.

One more rule, because a CRC that fails also puts the batch's length in doubt: when a
batch's CRC does not hold and what follows it is not a whole batch whose CRC holds (nor the
end of the file), its length is taken to lie (a broken length field, or bytes cut out of the
middle of the file), and the walk resumes at the first whole batch that starts *inside* it,
if there is one. A bit flipped in a batch's records leaves its length true: the next batch
then follows cleanly and the walk goes on after it, as skip's does.

The walk is decided here once, for every reader: :func:`iter_salvaged_frames` for
``iter_batches`` (frame by frame) and :func:`salvage_scan` for the columnar fast path (the
numba frame scan, cut where the rule above or damage sends the walk elsewhere). Both see the
same frames and the same damage, in the same order. Nothing is sized from a length or a count
the bytes cannot back: every position comes from ``judge`` or ``resync``, which check a
length against the bytes that exist first.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from ..errors import FramingError
from ..format import layout
from ..format.crc import BATCH_CRC_START, LEGACY_CRC_START, crc32, crc32c
from ..format.framing import MAGIC_OFFSET, Damage, Frame, judge, resync
from ..kernels import fastscan as fs
from ..model import TruncatedTail

__all__ = ["crc_holds", "iter_salvaged_frames", "salvage_scan"]

_V2_CRC = 17  # the stored CRC-32C of a v2 batch (bytes 17-21)
_LEGACY_CRC = 12  # the stored CRC-32 of a v0/v1 message (bytes 12-16)
_CODEC = layout.V2_ATTR_COMPRESSION_MASK  # the same bits in v0/v1 attributes (byte 17)


def crc_holds(view: memoryview, pos: int, size: int) -> bool:
    """Whether the stored CRC of the whole frame ``view[pos:pos + size]`` holds."""
    frame = view[pos : pos + size]
    if frame[MAGIC_OFFSET] == 2:
        return crc32c(frame[BATCH_CRC_START:]) == int.from_bytes(frame[_V2_CRC : _V2_CRC + 4])
    return crc32(frame[LEGACY_CRC_START:]) == int.from_bytes(frame[_LEGACY_CRC : _LEGACY_CRC + 4])


def _follows_cleanly(view: memoryview, pos: int, limit: int) -> bool:
    """Whether ``pos`` is the end of the file, a truncated tail, or a whole batch whose CRC
    holds: then the batch before it ended where its length said."""
    verdict = judge(view, pos, limit)
    if isinstance(verdict, Frame):
        return crc_holds(view, pos, verdict.size)
    return not isinstance(verdict, Damage)


def _inside(view: memoryview, pos: int, end: int, limit: int) -> int | None:
    """The first whole batch starting inside the frame ``view[pos:end]``, if any. Only starts
    inside it are looked at: a file whose every CRC fails costs a search of each frame once,
    not of the rest of the file per frame."""
    return resync(view, pos + 1, limit, window=end - pos - 1)


def _resume(view: memoryview, damage: Damage, limit: int) -> int | None:
    """Where the walk goes on after framing damage: the first whole batch after it. For a
    broken length ``judge`` looked for the first batch from which whole batches lead to the
    end of the file; that is kept only for a compressed v0/v1 wrapper, whose inner messages
    lie verbatim in its payload, CRCs and all (elsewhere it would pass over intact batches
    that further damage separates from the end). Other damage's resume was searched in a
    window: past it, the search goes on to the end."""
    pos = damage.position
    if damage.broken is not None:
        wrapper = view[pos + MAGIC_OFFSET] < 2 and view[pos + MAGIC_OFFSET + 1] & _CODEC != 0
        if wrapper:
            return damage.resume
    elif damage.resume is not None:
        return damage.resume
    return resync(view, pos + 1, limit)


def iter_salvaged_frames(
    view: memoryview,
    file: str | None,
    errors: list[Exception],
    tails: list[TruncatedTail] | None = None,
    start: int = 0,
    end: int | None = None,
) -> Iterator[Frame]:
    """The frames a salvaging reader decodes, in file order, of ``view[start:end]``; each
    framing damage is appended to ``errors`` (as ``errors="strict"`` would raise it) when the
    walk reaches it, a truncated tail to ``tails``."""
    limit = len(view) if end is None else min(end, len(view))
    pos = start
    while True:
        verdict = judge(view, pos, limit, file)
        if isinstance(verdict, Frame):
            yield verdict
            end = pos + verdict.size
            if not crc_holds(view, pos, verdict.size) and not _follows_cleanly(view, end, limit):
                inside = _inside(view, pos, end, limit)
                end = end if inside is None else inside
            pos = end
            continue
        if isinstance(verdict, Damage):
            errors.append(verdict.error(file))
            resumed = _resume(view, verdict, limit)
            if resumed is None:
                return
            pos = resumed
            continue
        if isinstance(verdict, TruncatedTail) and tails is not None:
            tails.append(verdict)
        return


def salvage_scan(
    buf: np.ndarray,
    view: memoryview,
    file: str | None,
    max_rows: int,
    max_bytes: int,
    compressed_weight: int,
    start: int = 0,
    end: int | None = None,
) -> Iterator[np.ndarray | FramingError | TruncatedTail]:
    """The walk of :func:`iter_salvaged_frames` on the numba frame scan: frame tables of at
    most ``max_rows`` records and ``max_bytes`` weighted bytes (``fastscan.scan_frames``'s
    budgets; positions absolute in ``buf``), each framing damage where the walk meets it, and
    a truncated tail last. The CRC of every frame is checked here (the rule on lying lengths
    needs it before the walk goes on), once more than the decoder checks it. ``start`` and
    ``end`` bound the walk (a range's byte window)."""
    limit = len(buf) if end is None else min(end, len(buf))
    pos = start
    table = np.empty((1 << 16, fs.FRAME_COLUMNS), np.int64)
    while True:
        n, nxt, status = fs.scan_frames(
            buf, pos, limit, table, max_rows, max_bytes, compressed_weight
        )
        frames = table[:n]
        cut = _cut(view, frames, nxt, limit)
        if cut is not None:
            i, pos = cut
            yield frames[: i + 1].copy()
            continue
        if n:
            yield frames.copy()
        if status == fs.SCAN_BUDGET:
            pos = nxt
            continue
        verdict = judge(view, nxt, limit, file)
        if isinstance(verdict, Damage):
            yield verdict.error(file)
            resumed = _resume(view, verdict, limit)
            if resumed is None:
                return
            pos = resumed
            continue
        if isinstance(verdict, TruncatedTail):
            yield verdict
        return


def _cut(view: memoryview, frames: np.ndarray, nxt: int, limit: int) -> tuple[int, int] | None:
    """The first frame of a scan whose length the walk does not trust, and where the walk
    resumes inside it (see the module's docstring); None when every length holds."""
    positions = frames[:, fs.F_POS].tolist()
    sizes = frames[:, fs.F_SIZE].tolist()
    holds = [crc_holds(view, p, s) for p, s in zip(positions, sizes, strict=True)]
    for i, ok in enumerate(holds):
        if ok:
            continue
        end = positions[i] + sizes[i]
        clean = holds[i + 1] if i + 1 < len(holds) else _follows_cleanly(view, nxt, limit)
        if clean:
            continue
        inside = _inside(view, positions[i], end, limit)
        if inside is not None:
            return i, inside
    return None
