"""``errors="salvage"``: every whole batch of a damaged file, before and after its damage.

``errors="skip"`` steps over a batch whose frame is intact (its CRC fails, its records do not
decode) but ends the file at framing damage: a length below 14, an invalid magic, a length
running past the end before whole batches. Salvage reports that damage in the same words
(``framing.judge``'s verdict, ``Damage.error``) and goes on at the next position where a whole
batch whose CRC holds starts (``framing.resync``, searched to the end of the file, linear in
the bytes), as often as the file is damaged. Kafka's own recovery (``LogSegment.recover``)
truncates at the first invalid batch instead; this keeps what follows.

A CRC that fails puts the batch's length in doubt too, and the CRC never covers the length
field. So, for a batch whose CRC does not hold over the bytes its length gives, and for a
length that runs past the end (``judge``'s broken length), in this order
(:func:`after_bad_crc`, :func:`_resume`):

1. its own bytes prove another end (``format/extent.py``: its records' framing, or for a
   compressed batch the next batch's start, where its stored CRC holds): only its length
   lied. The batch is delivered (its length repaired, the damage reported) and the walk goes
   on after it. A record is only ever delivered from bytes that are a batch of the log: a
   batch embedded in one of its record values (a value may hold any bytes) is never resumed
   at.
2. what follows it is clean (the end, a tail, a whole batch whose CRC holds): its length was
   true, a bit flipped in its records; the walk goes on after it, as skip's does.
3. its records' own framing ends where something clean follows: it ended there, its length
   and records both damaged; the walk goes on there, not inside it.
4. else (bytes cut out of the middle of the file) the walk resumes at the first whole batch
   that starts *inside* it, if there is one.

The walk is decided here once, for every reader and for ``recover --salvage``:
:func:`salvage_walk` yields its steps (a frame, damage, a tail, and where the walk goes on);
:func:`iter_salvaged_frames` gives ``iter_batches`` and Spark's SALVAGE tasks its frames,
:func:`salvage_scan` the columnar fast path its frame tables (the numba frame scan, cut where
the rules above send the walk elsewhere). All see the same frames and the same damage, in the
same order. Nothing is sized from a length or a count the bytes cannot back: every position
comes from ``judge``, ``resync`` or ``extent``, which check a length against the bytes that
exist first.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from ..errors import FramingError, KafkaFormatError
from ..format import layout
from ..format.batches import check_crc, read_header
from ..format.crc import crc32, crc32c
from ..format.extent import framed_end, proven_end, repaired_frame
from ..format.framing import Damage, Frame, judge, resync
from ..kernels import fastscan as fs
from ..model import TruncatedTail
from . import plan

__all__ = [
    "Step",
    "after_bad_crc",
    "crc_holds",
    "iter_salvaged_frames",
    "salvage_scan",
    "salvage_walk",
]


def crc_holds(view: memoryview, pos: int, size: int) -> bool:
    """Whether the stored CRC of the whole frame ``view[pos:pos + size]`` holds."""
    frame = view[pos : pos + size]
    if frame[layout.FRAME_MAGIC] == 2:
        stored = frame[layout.V2_CRC : layout.V2_CRC + layout.V2_CRC_SIZE]
        return crc32c(frame[layout.V2_CRC_START :]) == int.from_bytes(stored)
    stored = frame[layout.LEGACY_CRC : layout.LEGACY_CRC + layout.LEGACY_CRC_SIZE]
    return crc32(frame[layout.LEGACY_CRC_START :]) == int.from_bytes(stored)


def _follows_cleanly(view: memoryview, pos: int, limit: int) -> bool:
    """Whether ``pos`` is the end of the file, a truncated tail, or a whole batch whose CRC
    holds: then the batch before it ended where its length said."""
    return _clean(view, pos, judge(view, pos, limit))


def _clean(view: memoryview, pos: int, verdict) -> bool:
    """:func:`_follows_cleanly` of a verdict already made at ``pos``."""
    if isinstance(verdict, Frame):
        return crc_holds(view, pos, verdict.size)
    return not isinstance(verdict, Damage)


def _inside(view: memoryview, pos: int, end: int, limit: int) -> int | None:
    """The first whole batch starting inside the frame ``view[pos:end]``, if any. Only starts
    inside it are looked at: a file whose every CRC fails costs a search of each frame once,
    not of the rest of the file per frame."""
    return resync(view, pos + 1, limit, window=end - pos - 1)


def after_bad_crc(view: memoryview, pos: int, size: int, limit: int) -> tuple[int, int | None]:
    """For a frame whose CRC does not hold: where the walk goes on, and the batch's proven end
    when only its length field lied (``extent.proven_end``; None otherwise).

    In that order: a batch whose own bytes prove an end other than its length's is that batch
    (it is delivered, the walk resumes after it, never inside it); a batch followed cleanly
    ended where its length said (a bit flipped in its records); else the length is in doubt
    (bytes cut out of the file) and the walk resumes at the first whole batch inside it."""
    end = pos + size
    following = judge(view, end, limit)  # once: at damage it searches onward
    clean = _clean(view, end, following)
    # A tail after it proves nothing of its length: it may be the rest of the batch itself.
    proved = clean and not isinstance(following, TruncatedTail)
    own = proven_end(view, pos, limit, before=end if proved else None)
    if own is not None and own != end:
        return own, own
    if clean:
        return end, None
    framed = _framed_resume(view, pos, limit)
    if framed is not None:
        return framed, None
    inside = _inside(view, pos, end, limit)
    return (end if inside is None else inside), None


def _framed_resume(view: memoryview, pos: int, limit: int) -> int | None:
    """Where a batch whose length and CRC both fail ends by its records' own framing, when
    that end is confirmed by what follows it (the end of the data, a tail or a whole batch):
    the walk goes on there, not at a batch embedded in one of its values. None when the
    framing breaks or what follows it is no batch (bytes cut out of the file: the walk then
    looks inside)."""
    framed = framed_end(view, pos, limit)
    if framed is not None and framed > pos and _follows_cleanly(view, framed, limit):
        return framed
    return None


def _resume(view: memoryview, damage: Damage, limit: int) -> int | None:
    """Where the walk goes on after framing damage: after the batch itself when only its
    length lied, else the first whole batch after it. For a broken length ``judge`` looked for
    the first batch from which whole batches lead to the end of the file; that is kept only
    for a compressed v0/v1 wrapper, whose inner messages lie verbatim in its payload, CRCs and
    all (elsewhere it would pass over intact batches that further damage separates from the
    end). Other damage's resume was searched in a window: past it, the search goes on to the
    end."""
    pos = damage.position
    if damage.repaired is not None:
        return damage.repaired
    if damage.broken is not None:
        wrapper = view[pos + layout.FRAME_MAGIC] < 2 and (
            view[pos + layout.LEGACY_ATTRIBUTES] & layout.LEGACY_ATTR_COMPRESSION_MASK != 0
        )
        if wrapper:
            return damage.resume
    framed = _framed_resume(view, pos, limit)
    if framed is not None:
        return framed
    if damage.broken is None and damage.resume is not None:
        return damage.resume
    return resync(view, pos + 1, limit)


@dataclass(slots=True)
class Step:
    """One step of the salvaging walk over ``[position, end)``: a frame to decode, framing
    damage, or a truncated tail; ``end`` is where the walk goes on (None: it stops).

    A frame whose length field alone lied comes with ``error`` (the broken length) and its
    ``data`` repaired: its bytes up to the proven end, the length field set to match (the CRC
    never covered it), so that a copy of it frames as Kafka's reader expects."""

    position: int
    end: int | None
    frame: Frame | None = None
    error: FramingError | None = None
    tail: TruncatedTail | None = None


def salvage_walk(
    view: memoryview, file: str | None, start: int = 0, end: int | None = None
) -> Iterator[Step]:
    """The one salvaging walk of ``view[start:end]``, in file order: every reader under
    ``errors="salvage"`` and ``recover --salvage`` take their frames and damage from it."""
    limit = len(view) if end is None else min(end, len(view))
    pos = start
    while True:
        verdict = judge(view, pos, limit, file)
        if verdict is None:
            return
        if isinstance(verdict, Frame):
            if crc_holds(view, pos, verdict.size):
                yield Step(pos, pos + verdict.size, verdict)
                pos += verdict.size
                continue
            resume, own = after_bad_crc(view, pos, verdict.size, limit)
            if own is None:
                yield Step(pos, resume, verdict)
            else:
                error = bad_crc(verdict, file)
                yield Step(pos, own, _repaired(view, verdict, own), error)
            pos = resume
            continue
        if isinstance(verdict, Damage):
            error = verdict.error(file)
            if verdict.repaired is not None:
                frame = Frame(pos, verdict.base_offset or 0, view[pos + layout.FRAME_MAGIC], view)
                yield Step(pos, verdict.repaired, _repaired(view, frame, verdict.repaired), error)
                pos = verdict.repaired
                continue
            resumed = _resume(view, verdict, limit)
            yield Step(pos, resumed, error=error)
            if resumed is None:
                return
            pos = resumed
            continue
        yield Step(pos, None, tail=verdict)
        return


def bad_crc(frame: Frame, file: str | None) -> KafkaFormatError:
    """The error a strict reader raises for a frame whose CRC fails over the bytes its length
    gives (``batches.check_crc``'s, or the header's): the verdict on it is the same whether
    or not a salvaging walk then finds its real end."""
    try:
        check_crc(read_header(frame, file=file), frame, True)
    except KafkaFormatError as exc:
        return exc.located(file=file, position=frame.position, base_offset=frame.base_offset)
    raise AssertionError(f"the CRC of the frame at {frame.position} holds")


def _repaired(view: memoryview, frame: Frame, end: int) -> Frame:
    pos = frame.position
    data = memoryview(repaired_frame(view, pos, end))
    return Frame(pos, frame.base_offset, frame.magic, data)


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
    for step in salvage_walk(view, file, start, end):
        if step.error is not None:
            errors.append(step.error)
        if step.tail is not None and tails is not None:
            tails.append(step.tail)
        if step.frame is not None:
            yield step.frame


def salvage_scan(
    buf: np.ndarray,
    view: memoryview,
    file: str | None,
    max_rows: int,
    max_bytes: int,
    compressed_weight: int,
    start: int = 0,
    end: int | None = None,
) -> Iterator[np.ndarray | KafkaFormatError | TruncatedTail]:
    """The walk of :func:`salvage_walk` on the numba frame scan: frame tables of at most
    ``max_rows`` records and ``max_bytes`` weighted bytes (``fastscan.scan_frames``'s budgets;
    positions absolute in ``buf``), each framing damage where the walk meets it, and a
    truncated tail last. A batch whose length alone lied comes as a table of its one frame,
    sized as its bytes prove (the decoders read no length field), after its error. The CRC of
    every frame is checked here (the rules on lying lengths need it before the walk goes on),
    once more than the decoder checks it, by the kernel for v2. ``start`` and ``end`` bound
    the walk (a range's byte window)."""
    limit = len(buf) if end is None else min(end, len(buf))
    pos = start
    table = np.empty((1 << 16, fs.FRAME_COLUMNS), np.int64)
    while True:
        n, nxt, status = fs.scan_frames(
            buf, pos, limit, table, max_rows, max_bytes, compressed_weight
        )
        frames = table[:n]
        cut = _cut(buf, view, frames, limit)
        if cut is not None:
            i, resume, own = cut
            if own is None:
                yield frames[: i + 1].copy()
            else:
                if i:
                    yield frames[:i].copy()
                pos, size = int(frames[i, fs.F_POS]), int(frames[i, fs.F_SIZE])
                frame = Frame(
                    pos,
                    int(frames[i, fs.F_BASE]),
                    view[pos + layout.FRAME_MAGIC],
                    view[pos : pos + size],
                )
                yield bad_crc(frame, file)
                yield _row(view, pos, own)
            pos = resume
            continue
        if n:
            yield frames.copy()
        if status == fs.SCAN_BUDGET:
            pos = nxt
            continue
        verdict = judge(view, nxt, limit, file)
        if isinstance(verdict, Damage):
            yield verdict.error(file)
            if verdict.repaired is not None:
                yield _row(view, nxt, verdict.repaired)
                pos = verdict.repaired
                continue
            resumed = _resume(view, verdict, limit)
            if resumed is None:
                return
            pos = resumed
            continue
        if isinstance(verdict, TruncatedTail):
            yield verdict
        return


def _row(view: memoryview, pos: int, end: int) -> np.ndarray:
    """The frame table row of the batch ``view[pos:end]`` whose length field lied: scanned
    from a repaired copy, its position set back to the source's."""
    data = np.frombuffer(repaired_frame(view, pos, end), np.uint8)
    table = np.empty((1, fs.FRAME_COLUMNS), np.int64)
    n, _, _ = fs.scan_frames(data, 0, len(data), table, 1 << 62, 1 << 62, 1)
    assert n == 1, "a repaired frame always frames"
    table[0, fs.F_POS] = pos
    return table


def _cut(
    buf: np.ndarray, view: memoryview, frames: np.ndarray, limit: int
) -> tuple[int, int, int | None] | None:
    """The first frame of a scan whose CRC fails and after which the walk does not simply go
    on by its length: (its row, where the walk resumes, its proven end when only its length
    lied); None when every such frame is stepped over by its length (the decoder reports
    its CRC)."""
    if not len(frames):
        return None
    v2 = (frames[:, fs.F_MAGIC] == 2) & (frames[:, fs.F_HEADER_OK] == 1)
    holds = plan.crc_holds(buf, frames, v2, True)
    for i in np.flatnonzero(~v2).tolist():
        holds[i] = crc_holds(view, int(frames[i, fs.F_POS]), int(frames[i, fs.F_SIZE]))
    for i in np.flatnonzero(~holds).tolist():
        pos, size = int(frames[i, fs.F_POS]), int(frames[i, fs.F_SIZE])
        resume, own = after_bad_crc(view, pos, size, limit)
        if own is not None or resume != pos + size:
            return i, resume, own
    return None
