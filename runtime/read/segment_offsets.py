"""Where a batch's offsets may lie in a segment: decided once, for every reader, ``verify`` and
``recover``.

A broker writes a segment's batches with offsets that increase, from the segment's base offset
(its file name) on, and its indexes hold each as 4 bytes relative to that base:
``LogSegment.append`` refuses a batch whose offsets do not fit
(``ensureOffsetInRange``: ``LogSegmentOffsetOverflowException``, below the base or more than
2^31-1 above it), and ``OffsetIndex.append`` one whose offsets do not increase
(``InvalidOffsetException``; storage/src/main/java/org/apache/kafka/storage/internals/log/).
No CRC covers a batch's base offset, so a bit flipped there, or bytes that happen to frame a
batch whose CRC holds with the wrong first bytes, read as a batch with offsets no broker
wrote. In a segment whose base offset is known, such a batch is damage, worded here:

* its first offset is below the segment's base offset;
* its last offset is more than 2^31-1 above it (the indexes cannot hold it);
* its last offset reaches the next segment's base offset, where the partition's next
  segment is known: a broker rolls a new segment at its log end offset
  (``UnifiedLog.roll``: the new segment's base is the next offset to be written), so every
  batch of a segment lies below the base of the one after it;
* its first offset is not above the last offset of the batch before it (offsets must
  increase). "The batch before it": the last whole batch whose CRC held and whose offsets
  passed these checks, so that damage never moves the bar.

A segment read alone (a file named on the command line, not a partition directory) has no
known next segment: the bound applies to partition directories, for every reader alike.
Bytes read without a segment's name (a file of batches collected elsewhere, a fetch response)
have no base offset: none of this applies (``verify`` then warns of offsets that go back).
A v0/v1 compressed wrapper's header holds its last inner offset only: its first offset is
taken as unknown, and only the last is checked.

Readers apply the checks to batch headers before decoding: ``errors="strict"`` raises the
damage, ``"skip"`` and ``"salvage"`` drop the batch and report it, as for a CRC that fails.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import CorruptBatchError, KafkaFormatError
from ..format import layout
from ..format.batches import check_crc, read_header
from ..format.framing import Frame
from ..kernels import fastscan as fs
from . import plan
from .salvage import crc_holds

__all__ = ["INT32_MAX", "SegmentOffsets", "files_hold", "judge_frame", "judge_frames"]

INT32_MAX = (1 << 31) - 1
INT64_MAX = (1 << 63) - 1


class SegmentOffsets:
    """The checks of one segment's walk, batch header by batch header, in file order."""

    __slots__ = ("base", "next_base", "previous")

    def __init__(
        self, base: int | None, previous: int | None = None, next_base: int | None = None
    ) -> None:
        #: The segment's base offset; None: not a segment, nothing is checked.
        self.base = base
        #: The last offset of the last batch that passed (and whose CRC held).
        self.previous = previous
        #: The base offset of the partition's next segment; None: the last, or unknown.
        self.next_base = next_base

    @classmethod
    def of(cls, log: Any) -> SegmentOffsets:
        """The checks a read of ``log`` (a ``sources.LogInput``) goes on with: the ones it
        shares with the other pieces of its split, or fresh ones for its segment."""
        if log.offsets is not None:
            return log.offsets
        return cls(log.base_offset, next_base=log.next_base)

    def __bool__(self) -> bool:
        return self.base is not None

    def judge(self, first: int | None, last: int) -> str | None:
        """Why a batch with these offsets is no batch of the segment, or None. ``first`` is
        None when the header does not hold it (a v0/v1 wrapper)."""
        found = self.check(first, last)
        return None if found is None else found[1]

    def check(self, first: int | None, last: int) -> tuple[str, str] | None:
        """:meth:`judge`'s verdict with the name of the check it fails, as ``verify``
        reports it: ``base-offset`` for a batch outside the segment's offsets, ``offsets``
        for offsets the indexes cannot hold or that do not increase."""
        base = self.base
        if base is None:
            return None
        low = last if first is None else first
        shown = f"{first}..{last}" if first is not None else str(last)
        if low < base:
            return "base-offset", (
                f"batch base offset {low} is below the segment's base offset {base}"
            )
        if last - base > INT32_MAX:
            return "offsets", (
                f"last offset {last} is more than 2^31-1 above the segment's base offset "
                f"{base}: the indexes cannot hold it"
            )
        if self.next_base is not None and last >= self.next_base:
            return "base-offset", (
                f"batch offsets {shown} reach the next segment, which starts at offset "
                f"{self.next_base}"
            )
        previous = self.previous
        if previous is not None and (low <= previous if first is not None else last <= previous):
            return "offsets", (
                f"batch offsets {shown} do not follow the previous offset {previous} "
                "(offsets must increase)"
            )
        return None

    def passed(self, last: int) -> None:
        """A batch that passed and whose CRC held: the bar for the next."""
        self.previous = last

    def all_hold(self, firsts: np.ndarray, deltas: np.ndarray, known: np.ndarray | None) -> bool:
        """Whether every batch of a run passes (its first offsets, last offset deltas, and
        ``known``: where the first offset is held, None for everywhere; a v0/v1 wrapper's
        ``firsts`` is its last) whichever CRCs hold: the common case, decided without a step
        per batch, and without an addition that could wrap (offsets near 2^63 are what this
        catches). The bar is left where it was (the caller moves it to the last batch whose
        CRC holds)."""
        base = self.base
        if base is None or not len(firsts):
            return True
        if not bool((firsts >= base).all()) or not bool((deltas >= 0).all()):
            return False
        if not bool((firsts - base <= INT32_MAX - deltas).all()):
            return False
        lasts = firsts + deltas  # no wrap: each within 2^31 of the base
        if self.next_base is not None and not bool((lasts < self.next_base).all()):
            return False
        low = firsts if known is None else np.where(known, firsts, lasts)
        if len(lasts) > 1 and not bool((low[1:] > lasts[:-1]).all()):
            return False
        return self.previous is None or bool(low[0] > self.previous)


def files_hold(table: np.ndarray, starts: np.ndarray, segments: list[SegmentOffsets]) -> bool:
    """Whether every frame of several segments scanned into one table (``segments[j]``'s
    frames are rows ``starts[j]`` up to the next start) has a readable header and passes its
    segment's checks: :meth:`SegmentOffsets.all_hold` for each, in a few passes over the whole
    table, not a step a file (``grouped.py`` decodes small segments together). Each segment
    must be read from its start, with no bar yet (``previous`` None): the caller reads any
    other alone."""
    if not len(table):
        return True
    if not bool((table[:, fs.F_HEADER_OK] == 1).all()):
        return False  # the reference's verdict, file by file
    counts = np.diff(np.append(starts, len(table)))
    known_base = np.array([s.base is not None for s in segments])
    checked = np.repeat(known_base, counts)
    firsts = table[:, fs.F_BASE]
    # A segment with no base checks nothing: its frames are compared with themselves.
    bases = np.repeat(np.array([s.base or 0 for s in segments], np.int64), counts)
    bases = np.where(checked, bases, firsts)
    deltas, known = _spans(table)
    if not bool((~checked | ((firsts >= bases) & (deltas >= 0))).all()):
        return False
    # no wrap: each first at or above its base, each delta at least 0
    if not bool((~checked | (firsts - bases <= INT32_MAX - deltas)).all()):
        return False
    lasts = firsts + deltas  # no wrap where checked: each within 2^31 of its base
    ends = np.repeat(
        np.array([INT64_MAX if s.next_base is None else s.next_base for s in segments]), counts
    )
    if not bool((~checked | (lasts < ends)).all()):
        return False
    low = firsts if known is None else np.where(known, firsts, lasts)
    follows = low[1:] > lasts[:-1]
    # a segment's first frame has no bar
    follows[starts[(starts > 0) & (starts < len(table))] - 1] = True
    return bool((~checked[1:] | follows).all())


def _spans(table: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
    """A frame table's last offset deltas, and where each first offset is held (None: in
    every frame; a v0/v1 frame's delta is 0, and a wrapper holds only its last offset)."""
    v2 = table[:, fs.F_MAGIC] == 2
    if bool(v2.all()):  # the common case: the columns as they are, no copy
        return table[:, fs.F_LAST_DELTA], None
    deltas = np.where(v2, table[:, fs.F_LAST_DELTA], 0)
    return deltas, v2 | ((table[:, fs.F_ATTR] & layout.LEGACY_ATTR_COMPRESSION_MASK) == 0)


def judge_frame(
    segment: SegmentOffsets, frame: Frame, verify_crc: bool | str, file: str | None
) -> KafkaFormatError | None:
    """The damage of one frame whose offsets are no batch of the segment, judged from its
    header before its records (as :func:`judge_frames` judges a table); None when they are,
    or when its header or CRC fails (that is its verdict, the decoder's to give)."""
    if not segment:
        return None
    try:
        header = read_header(frame, file=file)
        check_crc(header, frame, verify_crc)
    except KafkaFormatError:
        return None
    first = None if header.magic < 2 and header.codec else header.base_offset
    reason = segment.judge(first, header.last_offset)
    if reason is None:
        segment.passed(header.last_offset)
        return None
    error = CorruptBatchError(reason)
    return error.located(file=file, position=frame.position, base_offset=header.base_offset)


def judge_frames(
    segment: SegmentOffsets, table: np.ndarray, buf: np.ndarray, view: memoryview, verify_crc
) -> dict[int, str]:
    """The rows of a frame table (``fastscan.scan_frames``') whose offsets are no batch of the
    segment, and why, in file order; frames whose CRC fails are left to the decoder (that is
    their verdict) and do not move the bar."""
    if not segment:
        return {}
    ok = table[:, fs.F_HEADER_OK] == 1
    # The common case, every header readable and v2, reads the table's columns in place: a
    # chunk of one-record batches is judged in a few passes, with no copy of the table.
    rows = np.arange(len(table)) if bool(ok.all()) else np.flatnonzero(ok)
    t = table if len(rows) == len(table) else table[rows]
    base = t[:, fs.F_BASE]
    deltas, known = _spans(t)
    if segment.all_hold(base, deltas, known):
        # the bar: the last batch whose CRC holds (one CRC, as a rule)
        for k in range(len(rows) - 1, -1, -1):
            if not verify_crc or _holds(table, int(rows[k]), buf, view):
                segment.passed(int(base[k]) + int(deltas[k]))
                break
        return {}
    found: dict[int, str] = {}
    for k, i in enumerate(rows.tolist()):
        if verify_crc and not _holds(table, i, buf, view):
            continue
        last = int(base[k]) + int(deltas[k])  # Python's ints: no wrap near 2^63
        held = known is None or bool(known[k])
        reason = segment.judge(int(base[k]) if held else None, last)
        if reason is None:
            segment.passed(last)
        else:
            found[i] = reason
    return found


def _holds(table: np.ndarray, i: int, buf: np.ndarray, view: memoryview) -> bool:
    """Whether frame ``i``'s CRC holds (v2 by the kernel)."""
    if table[i, fs.F_MAGIC] == 2:
        return bool(plan.crc_holds(buf, table[i : i + 1], np.ones(1, bool), True)[0])
    return crc_holds(view, int(table[i, fs.F_POS]), int(table[i, fs.F_SIZE]))
