"""Offset index entries against their log: the one rule every reader applies before it starts
reading a segment at an entry's position, and the look-ups built on it.

``find``, ``dump -o`` and the other ranges (``read/ranges.py``), the partition layer
(``log/partition.py``), Spark's split planning (``spark_udfs/_planning.py``) and ``verify``
(``analysis/verify_index.py``) all judge an entry here, so that they trust the same entries of
the same files.

What an entry promises
----------------------
``LogSegment.append(largestOffset, ..., records)`` (storage/.../log/LogSegment.java) adds
``(largestOffset, position where the append starts)`` once more than ``index.interval.bytes``
went by since the last entry. Since Kafka 4.0 the leader appends batch by batch, so
``largestOffset`` is the last offset of the batch at the position; before that it was the
last offset of a whole multi-batch append (a follower's fetched chunk), which may lie in a
later batch. The log cleaner appends each chunk it filtered the same way
(``Cleaner.cleanInto``: ``dest.append(result.maxOffset(), ...)``), and ``MemoryRecords
.filterTo``'s ``FilterResult.maxOffset`` is the largest offset it *retained*: for a v2 batch
rebuilt without its last records (which keeps its base offset and last offset delta) that
offset lies inside the batch, below the batch's last offset.

So an entry (O, P) promises only that a batch starts at P and that no offset at or above O
lies before P. ``OffsetIndex.lookup`` (the largest entry whose offset is <= the target) and
``FileRecords.searchForOffsetWithSize`` (batch headers from P on, until one's last offset
reaches the target) need nothing more, and Kafka checks nothing more: ``OffsetIndex
.sanityCheck`` asks only that the last offset be >= the base offset and the length a multiple
of 8, and ``LogSegment.sanityCheck`` skips even that (the segments past the recovery point are
rebuilt by ``LogSegment.recover`` instead).

The rule
--------
An entry (O, P) of a segment with base offset B holds when, at P:

1. a whole batch starts (P inside the log, a length that fits, magic 0, 1 or 2: the walker's
   ``framing.judge``; the header readable: ``batches.read_header``);
2. its CRC holds (``batches.check_crc``) -- the one thing that tells a real batch boundary
   from bytes inside a batch that happen to parse as a header;
3. its base offset (a v0/v1 message's stored offset, the only one its header has) lies in
   ``[B, O]``: at or above B, as every batch of the segment; at or below O, since offsets
   increase through the log, so every batch before P holds offsets below it, and a read from P
   misses nothing at or above O. Its last offset may lie below O (an append of several
   batches), at O (Kafka's own per-batch entry) or above it (the cleaner's rebuilt batch).

An entry that fails is set aside: the look-up reads the segment from its start instead, which
is always right, and says why (:attr:`Start.note`). An index that fails the checks made on
opening it (``indexes.py``) is not used at all.

``verify`` reports exactly the entries the readers set aside, with two refinements its walk of
the whole log allows: an entry whose batch the .log already reports damaged (``CRC``) is a
warning there, not an error of the index; and an entry that holds here yet points inside a
batch the walk found is an error -- only the inner message of a compressed v0/v1 wrapper can
be that (a whole frame whose CRC holds), which no reader judging one position can tell from a
batch.

Reading the segment: a ``memoryview`` of it, or anything with ``read(position, n)`` and
``size()`` (a :class:`~.storage.ByteSource`): only the header and then the one batch at P are
read, so judging an entry on a remote filesystem costs a batch, not a segment.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from ..errors import KafkaFormatError
from ..format import layout
from ..format.batches import check_crc, read_header
from ..format.framing import Frame, judge
from ..model import Batch
from .indexes import OffsetIndex, OffsetPosition, TimeIndex

__all__ = [
    "AFTER_OFFSET",
    "APPEND",
    "BELOW_SEGMENT",
    "CRC",
    "EXACT",
    "INSIDE",
    "NO_BATCH",
    "PAST_END",
    "EntryCheck",
    "ReadsBytes",
    "Start",
    "check_entry",
    "start_for_offset",
    "start_for_timestamp",
]

# Why an entry does not hold (EntryCheck.fault).
PAST_END = "past-end"
NO_BATCH = "no-batch"
CRC = "crc"
BELOW_SEGMENT = "below-segment"
AFTER_OFFSET = "after-offset"

# What kind of entry holds (EntryCheck.kind): where its offset lies against the batch at P.
EXACT = "exact"  # the batch's last offset: Kafka's own entry, one a batch
APPEND = "append"  # past the batch: an append of several batches, indexed at its first
INSIDE = "inside"  # inside the batch: the cleaner's largest retained offset

_FRAME_HEAD = layout.field_struct(layout.FRAME_HEADER_FIELDS, "base_offset", "length")


class ReadsBytes(Protocol):
    """A log read by position (a :class:`~.storage.ByteSource` is one)."""

    def size(self) -> int: ...

    def read(self, position: int, n: int) -> memoryview: ...


@dataclass(frozen=True, slots=True)
class EntryCheck:
    """The verdict on one offset index entry (see the module docstring)."""

    entry: OffsetPosition
    #: The header of the batch at the entry's position when a whole one starts there.
    batch: Batch | None
    #: Why the entry does not hold (``PAST_END``, ``NO_BATCH``, ``CRC``, ``BELOW_SEGMENT``,
    #: ``AFTER_OFFSET``); None when it holds.
    fault: str | None = None
    #: The same in words, to follow a label such as "entry 3 (offset 40, position 8000)".
    problem: str | None = None

    @property
    def holds(self) -> bool:
        return self.fault is None

    @property
    def kind(self) -> str | None:
        """``EXACT``, ``APPEND`` or ``INSIDE`` for an entry that holds; None otherwise."""
        if self.fault is not None or self.batch is None:
            return None
        last, offset = self.batch.last_offset, self.entry.offset
        return EXACT if last == offset else APPEND if last < offset else INSIDE


def _size(log: memoryview | ReadsBytes) -> int:
    return len(log) if isinstance(log, memoryview) else log.size()


def _read(log: memoryview | ReadsBytes, position: int, n: int) -> memoryview:
    if isinstance(log, memoryview):
        return log[position : position + n]
    return memoryview(log.read(position, n))


def _offsets(batch: Batch) -> str:
    return f"{batch.base_offset}..{batch.last_offset}"


def check_entry(
    log: memoryview | ReadsBytes,
    entry: OffsetPosition,
    base_offset: int,
    *,
    file: str | None = None,
) -> EntryCheck:
    """Judge one entry of the offset index of the segment with ``base_offset`` against its log
    (the rule in the module docstring)."""
    size = _size(log)
    position = entry.position
    if position < 0:
        return EntryCheck(entry, None, NO_BATCH, f"has a negative position {position}")
    if position >= size:
        return EntryCheck(entry, None, PAST_END, f"points past the end of the log ({size} bytes)")
    left = size - position
    if left <= layout.FRAME_HEADER_SIZE:  # Kafka's header size up to the magic, no more
        return EntryCheck(
            entry, None, NO_BATCH, f"points where no whole batch starts (only {left} bytes left)"
        )
    _, length = _FRAME_HEAD.unpack_from(
        _read(log, position, layout.LOG_OVERHEAD), layout.FRAME_BASE_OFFSET
    )
    if length < layout.MIN_FRAME_LENGTH or length > left - layout.LOG_OVERHEAD:
        # Checked before reading: a lying length must not make us read (or allocate) it.
        why = (
            f"length {length} is below the smallest batch"
            if length < layout.MIN_FRAME_LENGTH
            else f"length {length} runs past the end of the log ({left} bytes left)"
        )
        return EntryCheck(entry, None, NO_BATCH, f"points where no whole batch starts ({why})")
    data = _read(log, position, layout.LOG_OVERHEAD + length)
    verdict = judge(data, 0, len(data), file)
    if not isinstance(verdict, Frame):
        cause = getattr(verdict, "cause", "no whole batch")
        return EntryCheck(entry, None, NO_BATCH, f"points where no whole batch starts ({cause})")
    frame = Frame(position, verdict.base_offset, verdict.magic, verdict.data)
    try:
        batch = read_header(frame, file=file)
    except KafkaFormatError as exc:
        return EntryCheck(
            entry, None, NO_BATCH, f"points where no whole batch starts ({exc.reason})"
        )
    try:
        check_crc(batch, frame, True)
    except KafkaFormatError as exc:
        return EntryCheck(
            entry,
            batch,
            CRC,
            f"points at a batch of offsets {_offsets(batch)} whose CRC does not hold "
            f"({exc.reason})",
        )
    if batch.base_offset < base_offset:
        return EntryCheck(
            entry,
            batch,
            BELOW_SEGMENT,
            f"points at a batch of offsets {_offsets(batch)}, below the segment's base offset "
            f"{base_offset}",
        )
    if batch.base_offset > entry.offset:
        return EntryCheck(
            entry,
            batch,
            AFTER_OFFSET,
            f"points at a batch of offsets {_offsets(batch)}, which starts after the entry's "
            f"offset {entry.offset}: a read from there would pass over offsets before "
            f"{batch.base_offset}",
        )
    return EntryCheck(entry, batch)


@dataclass(frozen=True, slots=True)
class Start:
    """Where to start reading a segment for a look-up: the floor entry's position when the
    index is sound and that entry holds, else 0."""

    position: int
    #: Whether the index gave the position (or said, having no entry at or below the target,
    #: that the segment's start is the place): False when it was missing, unsound or lied.
    used_index: bool
    #: The floor entry's verdict; None without one.
    check: EntryCheck | None = None
    #: Why the index was not used; None when it was.
    note: str | None = None


def _label(entry: OffsetPosition) -> str:
    return f"offset index entry ({entry.offset}, {entry.position})"


def start_for_offset(
    index: OffsetIndex, log: memoryview | ReadsBytes, target: int, *, file: str | None = None
) -> Start:
    """Where a fetch at ``target`` starts reading the segment (``LogSegment.translateOffset``:
    ``OffsetIndex.lookup``, then headers from there), the entry checked by :func:`check_entry`."""
    if index.problem is not None:
        return Start(0, False, None, str(index.problem))
    entry = index.floor_entry(target)
    if entry is None:
        return Start(0, True)  # below the first entry: the start, as OffsetIndex.lookup says
    check = check_entry(log, entry, index.base_offset, file=file)
    if not check.holds:
        return Start(0, False, check, f"{_label(entry)} {check.problem}")
    return Start(entry.position, True, check)


def start_for_timestamp(
    time_index: TimeIndex,
    offset_index: OffsetIndex,
    log: memoryview | ReadsBytes,
    timestamp: int,
    starting_offset: int,
    *,
    file: str | None = None,
) -> Start:
    """Where a timestamp search starts reading the segment (``LogSegment
    .findOffsetByTimestamp``: the time index entry at or below ``timestamp``, then the offset
    index entry for ``max(its offset, starting_offset)``), the entry checked likewise."""
    for index in (time_index, offset_index):
        if index.problem is not None:
            return Start(0, False, None, str(index.problem))
    if time_index.base_offset != offset_index.base_offset:
        raise ValueError(
            f"time index base offset {time_index.base_offset} is not the offset index's "
            f"{offset_index.base_offset}"
        )
    found = time_index.lookup(timestamp)
    return start_for_offset(offset_index, log, max(found.offset, starting_offset), file=file)
