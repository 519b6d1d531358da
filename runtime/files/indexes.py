"""Readers for a segment's offset index (``.index``) and time index (``.timeindex``).

Layouts (Kafka's ``OffsetIndex`` and ``TimeIndex``; all big-endian, offsets relative to the
segment's base offset, which comes from the file name)::

    .index      8 bytes an entry   relative offset int32, physical position int32
    .timeindex  12 bytes an entry  timestamp int64, relative offset int32

How many entries a file holds
-----------------------------
Kafka preallocates an index to ``segment.index.bytes`` of zeros, appends entries through an
mmap, and trims the file to its entries when the segment is rolled or closed
(``AbstractIndex.trimToValidSize``); ``LogLoader`` then grows the active segment's indexes
back to full size while the broker runs. A file read after a clean shutdown is therefore
trimmed, and one read from a live broker or after a crash ends in zeros.

Kafka does not tell the two apart when it opens an index: ``AbstractIndex`` sets ``entries``
to ``floor(file length / entry size)``, zero tail included ("assume it is valid"), and
``OffsetIndex`` / ``TimeIndex`` take slot ``entries - 1`` as the last entry. Nor does its
sanity check catch the zero tail: ``OffsetIndex.sanityCheck`` only asks that the last offset
be ``>= baseOffset`` (a zero slot reads as ``baseOffset`` itself), and since KAFKA-7283
``LogSegment.sanityCheck`` skips the offset and time index checks altogether. Kafka survives
because after an unclean shutdown ``LogLoader.recoverLog`` rebuilds the indexes of the
segments from the recovery point on (``LogSegment.recover``), which include the active
segment, the only one whose index is left untrimmed.

We cannot rebuild from here, so we count only what was written: the
trailing run of all-zero slots is the preallocated tail (:attr:`zero_tail_slots`), not
entries. No real offset index entry is all zeros: position 0 is never indexed
(``LogSegment.append`` and ``recover`` add an entry only once more than
``index.interval.bytes`` were written since the last one, counting from 0), and each later
entry has a larger relative offset than the one before. A time index entry is all zeros only
when it is (timestamp 0, base offset), which can only be the first; we count it when the file
is exactly one slot long (a trimmed index) and take it for the empty tail otherwise -- the
timestamp search starts from the base offset either way. :attr:`kafka_entries` keeps Kafka's
own count.

Look-ups are the broker's: ``OffsetIndex.lookup`` and ``TimeIndex.lookup`` (largest entry
whose key is <= the target) over the real entries, by binary search on big-endian numpy views
of the mmap, so opening even a 10 MB index copies nothing.
"""

from __future__ import annotations

import contextlib
import mmap
import os
from bisect import bisect_left, bisect_right
from dataclasses import dataclass
from typing import ClassVar, Self

import numpy as np

from ..errors import IndexFileError
from ..format import layout
from .names import parse_segment_file_name

#: ``RecordBatch.NO_TIMESTAMP``: what the time index answers when no entry is <= the target.
NO_TIMESTAMP = -1

_INT32_MAX = (1 << 31) - 1
_INT64_MAX = (1 << 63) - 1
# Scanning for the last non-zero byte goes backwards in blocks this big, so a mostly empty
# 10 MB preallocated index costs a few vectorised passes, not a Python loop per byte.
_SCAN_BLOCK = 1 << 20


@dataclass(frozen=True, slots=True)
class OffsetPosition:
    """An offset index entry: an absolute offset and the byte position of its batch."""

    offset: int
    position: int


@dataclass(frozen=True, slots=True)
class TimestampOffset:
    """A time index entry: the largest timestamp seen in the segment before ``offset``."""

    timestamp: int
    offset: int


def _last_nonzero_byte(data: np.ndarray) -> int:
    """Index of the last non-zero byte of a uint8 array, or -1 when all are zero."""
    end = len(data)
    while end > 0:
        start = max(0, end - _SCAN_BLOCK)
        block = data[start:end]
        if block.any():
            return start + int(np.flatnonzero(block)[-1])
        end = start
    return -1


def _first_true(mask: np.ndarray) -> int | None:
    return int(np.argmax(mask)) if mask.any() else None


def _below_base(n: int, base_offset: int, relative: int) -> str:
    """An entry whose stored relative offset is negative. Kafka never writes one
    (``AbstractIndex.relativeOffset``, through ``toRelative``, throws
    ``IndexOffsetOverflowException`` for an offset below the base offset or more than 2^31-1
    above it), so the bytes are damage, or not this segment's index: the offset is said as
    the plain number the entry gives."""
    return (
        f"entry {n} has offset {base_offset + relative}, below the base offset {base_offset} "
        f"(a negative relative offset, {relative}: no broker writes one)"
    )


class _Index:
    """What the two fixed-entry indexes share: the buffer, the entry count, the checks."""

    ENTRY_SIZE: ClassVar[int]
    _DTYPE: ClassVar[np.dtype]
    _KIND: ClassVar[str]

    def __init__(
        self,
        data: bytes | bytearray | memoryview | mmap.mmap,
        base_offset: int,
        *,
        file: str | None = None,
        strict: bool = True,
    ) -> None:
        self.file = file
        self.base_offset = base_offset
        self._mmap: mmap.mmap | None = None
        buf = memoryview(data).cast("B")
        #: Bytes in the file.
        self.length = len(buf)
        #: Kafka's ``AbstractIndex.entries`` on opening: every whole slot, zero tail included.
        self.kafka_entries = self.length // self.ENTRY_SIZE
        self._raw = np.frombuffer(buf, dtype=self._DTYPE, count=self.kafka_entries)
        self.problem: IndexFileError | None = None

        used = self._used_slots(np.frombuffer(buf, dtype=np.uint8, count=self.length))
        #: Trailing all-zero slots: the preallocated, never written part of the file.
        self.zero_tail_slots = self.kafka_entries - used
        #: Entries the file really holds (see the module docstring).
        self.entries = used

        partial = self.length % self.ENTRY_SIZE
        if partial:
            self._fail(
                strict,
                self.kafka_entries * self.ENTRY_SIZE,
                f"{self.length} bytes is not a multiple of the {self.ENTRY_SIZE}-byte entry "
                f"({partial} bytes left over)",
            )
        bad = self._first_disorder(used)
        if bad is not None:
            self._fail(strict, bad[0] * self.ENTRY_SIZE, bad[1])
            # Lenient: keep the ordered prefix, which a binary search can still use.
            self.entries = bad[0]
        self._bind_views()

    def _used_slots(self, raw_bytes: np.ndarray) -> int:
        last = _last_nonzero_byte(raw_bytes[: self.kafka_entries * self.ENTRY_SIZE])
        return last // self.ENTRY_SIZE + 1 if last >= 0 else 0

    def _first_disorder(self, used: int) -> tuple[int, str] | None:
        raise NotImplementedError

    def _bind_views(self) -> None:
        raise NotImplementedError

    def _fail(self, strict: bool, position: int, reason: str) -> None:
        error = IndexFileError(
            f"corrupt {self._KIND}: {reason}",
            file=self.file,
            position=position,
            base_offset=self.base_offset,
        )
        if strict:
            raise error
        if self.problem is None:
            self.problem = error

    def sanity_check(self) -> None:
        """Raise the first problem found on opening (a lenient open keeps it in ``problem``).

        Covers what Kafka's ``sanityCheck`` covers (file length a multiple of the entry size,
        last offset >= base offset, for the time index last timestamp >= first) and more:
        every entry in order, as Kafka's appends guarantee.
        """
        if self.problem is not None:
            raise self.problem

    # Sequence protocol over the real entries.
    def written_entries(self) -> list[tuple[int, ...]]:
        """Every written entry, disordered ones included (a lenient open keeps only the ordered
        prefix): all whole slots up to the preallocated zero tail, as tuples of the entry's
        fields. Only while the index is open."""
        return self._raw[: self.kafka_entries - self.zero_tail_slots].tolist()

    def __len__(self) -> int:
        return self.entries

    def __iter__(self):
        for n in range(self.entries):
            yield self.entry(n)

    def __getitem__(self, n: int):
        if n < 0:
            n += self.entries
        return self.entry(n)

    def _check_slot(self, n: int) -> None:
        if not 0 <= n < self.entries:
            raise IndexError(f"entry {n} of a {self._KIND} with {self.entries} entries")

    @classmethod
    def open(
        cls, path: str | os.PathLike[str], base_offset: int | None = None, *, strict: bool = True
    ) -> Self:
        """Map an index file read-only; the base offset defaults to the one in its name."""
        name = os.fspath(path)
        if base_offset is None:
            parsed = parse_segment_file_name(os.path.basename(name))
            if parsed is None:
                raise IndexFileError("no base offset in the file name; pass base_offset", file=name)
            base_offset = parsed.base_offset
        with open(name, "rb") as fh:
            size = os.fstat(fh.fileno()).st_size
            mapped = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) if size else None
        try:
            index = cls(
                mapped if mapped is not None else b"", base_offset, file=name, strict=strict
            )
        except BaseException:
            _close_quietly(mapped)
            raise
        index._mmap = mapped
        return index

    @classmethod
    def from_bytes(
        cls,
        data: bytes | bytearray | memoryview,
        base_offset: int,
        *,
        file: str | None = None,
        strict: bool = True,
    ) -> Self:
        """An index over bytes already in memory (no copy is made)."""
        return cls(data, base_offset, file=file, strict=strict)

    def close(self) -> None:
        """Release the mmap; views handed out earlier keep it alive until they go."""
        self._raw = np.empty(0, dtype=self._DTYPE)  # a slice would still hold the map
        self.entries = 0
        self._bind_views()
        mapped, self._mmap = self._mmap, None
        _close_quietly(mapped)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _close_quietly(mapped: mmap.mmap | None) -> None:
    if mapped is None:
        return
    # BufferError: a numpy view still points into the map (the caller kept one, or a
    # traceback does); the map is then closed when the last of them is collected.
    with contextlib.suppress(BufferError):
        mapped.close()


class OffsetIndex(_Index):
    """A ``.index`` file: which byte position a batch with a given offset starts at.

    Each entry is written by ``LogSegment.append`` as (last offset of a batch, position of
    that batch), once more than ``index.interval.bytes`` have gone by since the last entry.
    """

    ENTRY_SIZE = layout.OFFSET_INDEX_ENTRY_SIZE
    _DTYPE = layout.OFFSET_INDEX_ENTRY_DTYPE
    _KIND = "offset index"

    def _first_disorder(self, used: int) -> tuple[int, str] | None:
        rel = self._raw["relative_offset"][:used]
        pos = self._raw["position"][:used]
        n = _first_true(rel < 0)
        negative = None if n is None else (n, _below_base(n, self.base_offset, int(rel[n])))
        n = _first_true(pos < 0)
        negative_pos = None if n is None else (n, f"entry {n} has position {int(pos[n])} < 0")
        n = _first_true(rel[1:] <= rel[:-1])
        offsets = (
            None
            if n is None
            else (
                n + 1,
                f"entry {n + 1} offset {self.base_offset + int(rel[n + 1])} is not above entry "
                f"{n} offset {self.base_offset + int(rel[n])}",
            )
        )
        n = _first_true(pos[1:] <= pos[:-1])
        positions = (
            None
            if n is None
            else (
                n + 1,
                f"entry {n + 1} position {int(pos[n + 1])} is not above entry {n} position "
                f"{int(pos[n])}",
            )
        )
        found = [p for p in (negative, negative_pos, offsets, positions) if p is not None]
        return min(found, key=lambda p: p[0]) if found else None

    def _bind_views(self) -> None:
        #: Big-endian int32 views of the real entries (into the mmap, not copies).
        self.relative_offsets: np.ndarray = self._raw["relative_offset"][: self.entries]
        self.positions: np.ndarray = self._raw["position"][: self.entries]

    def entry(self, n: int) -> OffsetPosition:
        """Entry ``n`` with its absolute offset (``OffsetIndex.entry``)."""
        self._check_slot(n)
        return OffsetPosition(
            self.base_offset + int(self.relative_offsets[n]), int(self.positions[n])
        )

    def last_entry(self) -> OffsetPosition:
        """The last entry, or (base offset, 0) for an empty index, as ``OffsetIndex`` says."""
        if self.entries == 0:
            return OffsetPosition(self.base_offset, 0)
        return self.entry(self.entries - 1)

    def floor_entry(self, target_offset: int) -> OffsetPosition | None:
        """The entry :meth:`lookup` answers, or None where it answers (base offset, 0) for
        want of one: a look-up that checks the entry against the log (``index_lookup``) must
        tell a real entry from the segment's start."""
        relative = target_offset - self.base_offset
        if self.entries == 0 or relative < int(self.relative_offsets[0]):
            return None
        relative = min(relative, _INT32_MAX)
        slot = bisect_right(self.relative_offsets, relative, 0, self.entries) - 1
        return self.entry(slot)

    def lookup(self, target_offset: int) -> OffsetPosition:
        """``OffsetIndex.lookup``: the entry with the largest offset <= ``target_offset``, or
        (base offset, 0) when there is none (empty index, or target below the first entry).

        The broker then scans the log from that position for the first batch whose last
        offset is >= the target (``FileRecords.searchForOffsetWithSize``): the entry's offset
        is the *last* offset of the batch at that position, so the target may well lie in a
        later batch.
        """
        found = self.floor_entry(target_offset)
        return OffsetPosition(self.base_offset, 0) if found is None else found

    def fetch_upper_bound_offset(self, position: int, fetch_size: int) -> OffsetPosition | None:
        """``OffsetIndex.fetchUpperBoundOffset``: the first entry at or past
        ``position + fetch_size``, an offset certainly outside a fetch of that size."""
        target = position + fetch_size
        slot = bisect_left(self.positions, min(target, _INT32_MAX + 1), 0, self.entries)
        return self.entry(slot) if slot < self.entries else None


class TimeIndex(_Index):
    """A ``.timeindex`` file. An entry (T, O) says T is the largest timestamp of the records
    up to offset O, so any record with a timestamp above T comes after O (``TimeIndex``'s class
    comment). Timestamps strictly increase and offsets never decrease (``maybeAppend``)."""

    ENTRY_SIZE = layout.TIME_INDEX_ENTRY_SIZE
    _DTYPE = layout.TIME_INDEX_ENTRY_DTYPE
    _KIND = "time index"

    def _used_slots(self, raw_bytes: np.ndarray) -> int:
        used = super()._used_slots(raw_bytes)
        # A trimmed index of a single (0, base offset) entry is all zeros; see the module doc.
        if used == 0 and self.kafka_entries == 1:
            return 1
        return used

    def _first_disorder(self, used: int) -> tuple[int, str] | None:
        ts = self._raw["timestamp"][:used]
        rel = self._raw["relative_offset"][:used]
        found = []
        n = _first_true(rel < 0)
        if n is not None:
            found.append((n, _below_base(n, self.base_offset, int(rel[n]))))
        n = _first_true(ts < 0)
        if n is not None:
            # maybeAppend only appends a timestamp above the last, which starts at -1.
            found.append((n, f"entry {n} has timestamp {int(ts[n])} < 0"))
        n = _first_true(ts[1:] <= ts[:-1])
        if n is not None:
            found.append(
                (
                    n + 1,
                    f"entry {n + 1} timestamp {int(ts[n + 1])} is not above "
                    f"entry {n} timestamp {int(ts[n])}",
                )
            )
        n = _first_true(rel[1:] < rel[:-1])
        if n is not None:
            found.append(
                (
                    n + 1,
                    f"entry {n + 1} offset {self.base_offset + int(rel[n + 1])} "
                    f"is below entry {n} offset {self.base_offset + int(rel[n])}",
                )
            )
        return min(found, key=lambda p: p[0]) if found else None

    def _bind_views(self) -> None:
        #: Big-endian views of the real entries (into the mmap, not copies).
        self.timestamps: np.ndarray = self._raw["timestamp"][: self.entries]
        self.relative_offsets: np.ndarray = self._raw["relative_offset"][: self.entries]

    def entry(self, n: int) -> TimestampOffset:
        """Entry ``n`` with its absolute offset (``TimeIndex.entry``)."""
        self._check_slot(n)
        return TimestampOffset(
            int(self.timestamps[n]), self.base_offset + int(self.relative_offsets[n])
        )

    def last_entry(self) -> TimestampOffset:
        """The last entry, or (NO_TIMESTAMP, base offset) when empty (``TimeIndex.lastEntry``):
        the segment's largest timestamp and the offset it was seen at."""
        if self.entries == 0:
            return TimestampOffset(NO_TIMESTAMP, self.base_offset)
        return self.entry(self.entries - 1)

    def lookup(self, target_timestamp: int) -> TimestampOffset:
        """``TimeIndex.lookup``: the entry with the largest timestamp <= the target, or
        (NO_TIMESTAMP, base offset) when there is none.

        This is only where a timestamp search *starts*: no record before the returned offset
        has a timestamp above the target, so the first record with timestamp >= target (what
        ListOffsets / ``offsetsForTimes`` answers) is at or after it. See
        :func:`timestamp_scan_start` for the rest of the broker's recipe.
        """
        if self.entries == 0 or target_timestamp < int(self.timestamps[0]):
            return TimestampOffset(NO_TIMESTAMP, self.base_offset)
        target = min(target_timestamp, _INT64_MAX)
        slot = bisect_right(self.timestamps, target, 0, self.entries) - 1
        return self.entry(slot)


def timestamp_scan_start(
    time_index: TimeIndex,
    offset_index: OffsetIndex,
    target_timestamp: int,
    starting_offset: int,
) -> OffsetPosition:
    """Where the broker starts scanning a segment for a timestamp (``LogSegment
    .findOffsetByTimestamp``): the offset index entry for ``max(time index look-up offset,
    starting_offset)``.

    From its ``position`` the broker reads batches (``FileRecords.searchForTimestamp``), skips
    those whose max timestamp is below the target, and answers the first record with
    timestamp >= target and offset >= ``starting_offset``; none means "not in this segment".
    The readers of this package go through ``index_lookup.start_for_timestamp`` instead: the
    same entry, judged against the log before it is trusted.
    """
    if time_index.base_offset != offset_index.base_offset:
        raise ValueError(
            f"time index base offset {time_index.base_offset} is not the offset index's "
            f"{offset_index.base_offset}"
        )
    found = time_index.lookup(target_timestamp)
    return offset_index.lookup(max(found.offset, starting_offset))


__all__ = [
    "NO_TIMESTAMP",
    "OffsetIndex",
    "OffsetPosition",
    "TimeIndex",
    "TimestampOffset",
    "timestamp_scan_start",
]
