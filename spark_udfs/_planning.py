"""Input partitions of a kafka_log read: which byte range of which segment each task reads.

Per partition, on the driver:

1. Where to start and stop. ``startingOffsets`` / ``endingOffsets`` are offsets already;
   ``startingTimestamp`` / ``endingTimestamp`` become the offset of the first record whose
   timestamp is >= the target, found as the broker's ListOffsets finds it: segments whose
   largest timestamp (last ``.timeindex`` entry) is below the target are skipped unread, the
   ``.timeindex`` then ``.index`` give where to start reading headers in the one segment that
   holds it, and one batch is decoded.
2. Which bytes. Segments wholly before the start or after the end are not read at all (their
   offsets are known from the file names). In the first segment, ``.index`` gives the position
   of the batch holding the start offset (``OffsetIndex.lookup``); in the last, the position
   of the first batch that lies wholly at or after the end offset.
3. How to split. One input partition per segment, and a range longer than
   ``maxBytesPerPartition`` is cut at batch boundaries taken from ``.index`` entries (each
   points at the start of a batch), so one large segment is read by several tasks.
4. ``read_committed``: a task reading the middle of a partition cannot see the ABORT marker
   of a transaction whose records it reads, so the driver collects every aborted transaction
   that overlaps the read, as (producer id, first offset, last offset) from the ``.txnindex``
   files and from a header walk from the read's start to the markers, plus transactions with
   no marker yet; each split carries the ones overlapping it.

Index entries are never trusted blindly: the batch header at the position an entry gives must
start a whole batch whose last offset is <= the entry's offset (as ``LogSegment.append``
writes them). If an index is missing, damaged or disagrees with its log, that segment is
planned from a header walk instead (reading 61 bytes a batch), and is still correct.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from itertools import pairwise

import numpy as np
from pyspark.sql.datasource import InputPartition

from ..runtime.errors import KafkaFormatError
from ..runtime.files.indexes import OffsetIndex, TimeIndex, timestamp_scan_start
from ..runtime.files.txnindex import TransactionIndex
from ..runtime.model import ControlType
from ._discovery import PartitionFiles, SegmentFiles, discover
from ._fs import FsRef, RangeReader, locate
from ._options import EARLIEST, LATEST, KafkaLogOptions
from ._scan import decode, header_at, iter_headers

INT64_MAX = (1 << 63) - 1

#: (producer id, first offset, last offset) of an aborted transaction, or of one still open
#: (last offset INT64_MAX): its data batches are dropped under read_committed.
AbortedRange = tuple[int, int, int]


@dataclass(frozen=True, slots=True)
class KafkaLogSplit(InputPartition):
    """What one task reads: bytes ``[start, end)`` of one segment file, whole batches."""

    fs_uri: str | None
    path: str
    topic: str | None
    partition: int | None
    start: int
    end: int
    #: Records below / at or above these offsets are dropped (None: no bound).
    start_offset: int | None = None
    end_offset: int | None = None
    #: read_committed only: the aborted transactions overlapping this split.
    aborted: tuple[AbortedRange, ...] = ()
    #: Size of the whole file: a batch running past it is a truncated tail, not damage.
    file_size: int = 0

    @property
    def name(self) -> str:
        """The file as errors name it (its URI for remote filesystems)."""
        return FsRef(self.fs_uri).display(self.path)


@dataclass(slots=True)
class _Indexes:
    """A segment's offset and time indexes when they exist and pass their checks."""

    offsets: OffsetIndex | None
    times: TimeIndex | None


class Planner:
    """Plans one read; :attr:`bytes_read` counts what planning itself read of logs and
    indexes (the tasks' reads are counted by the data source's accumulator)."""

    def __init__(self, options: KafkaLogOptions) -> None:
        self.options = options
        self.bytes_read = 0
        self._ref, self._fs, self._path = locate(options.path)
        self._stack = ExitStack()
        self._readers: dict[str, RangeReader] = {}
        self._indexes: dict[str, _Indexes] = {}

    def plan(self) -> list[KafkaLogSplit]:
        splits: list[KafkaLogSplit] = []
        for partition in discover(self._fs, self._path):
            # Files and indexes stay open for one partition only: a log dir may hold
            # thousands of segments.
            with ExitStack() as self._stack:
                self._readers, self._indexes = {}, {}
                splits.extend(self._plan_partition(partition))
                self.bytes_read += sum(r.bytes_read for r in self._readers.values())
        return splits

    # --- per partition --------------------------------------------------------------------

    def _plan_partition(self, pf: PartitionFiles) -> list[KafkaLogSplit]:
        start = self._start_offset(pf)
        if start == INT64_MAX:
            return []  # no record at or after the starting timestamp
        end = self._end_offset(pf)
        if start is not None and end is not None and start >= end:
            return []
        ranges: list[tuple[SegmentFiles, int, int]] = []
        segments = pf.segments
        for i, seg in enumerate(segments):
            following = segments[i + 1].base_offset if i + 1 < len(segments) else None
            if start is not None and following is not None and following <= start:
                continue
            if end is not None and seg.base_offset is not None and seg.base_offset >= end:
                break
            if seg.size == 0:
                continue
            lo = self._start_position(seg, start) if start is not None else 0
            hi = self._end_position(seg, end) if end is not None else seg.size
            if lo < hi:
                ranges.append((seg, lo, hi))
        if not ranges:
            return []
        aborted: tuple[AbortedRange, ...] = ()
        if self.options.isolation == "read_committed":
            aborted = self._aborted(pf, ranges[0][0], ranges[0][1], end)
        splits = []
        for seg, lo, hi in ranges:
            for a, b in self._cut(seg, lo, hi):
                splits.append(
                    KafkaLogSplit(
                        fs_uri=self._ref.uri,
                        path=seg.log,
                        topic=pf.topic,
                        partition=pf.partition,
                        start=a,
                        end=b,
                        start_offset=start,
                        end_offset=end,
                        aborted=_overlapping(aborted, seg, segments),
                        file_size=seg.size,
                    )
                )
        return splits

    def _start_offset(self, pf: PartitionFiles) -> int | None:
        """The first offset to read; None for the log start; INT64_MAX for nothing."""
        ts = self.options.starting_timestamps.get(pf.topic, pf.partition)
        if ts is not None:
            found = self._offset_for_timestamp(pf, ts)
            return INT64_MAX if found is None else found
        value = self.options.starting_offsets.get(pf.topic, pf.partition)
        return None if value is None or value == EARLIEST else value

    def _end_offset(self, pf: PartitionFiles) -> int | None:
        """The offset to stop before; None for the log end."""
        ts = self.options.ending_timestamps.get(pf.topic, pf.partition)
        if ts is not None:
            return self._offset_for_timestamp(pf, ts)
        value = self.options.ending_offsets.get(pf.topic, pf.partition)
        return None if value is None or value == LATEST else value

    # --- files ----------------------------------------------------------------------------

    def _reader(self, seg: SegmentFiles) -> RangeReader:
        reader = self._readers.get(seg.log)
        if reader is None:
            reader = self._stack.enter_context(RangeReader(self._fs, seg.log, seg.size))
            self._readers[seg.log] = reader
        return reader

    def _read_whole(self, path: str) -> memoryview | None:
        """A whole (index) file; on the local filesystem a view of its mapping, not a copy."""
        try:
            with RangeReader(self._fs, path) as reader:
                data = reader.read(0, reader.size)
        except OSError:
            return None
        self.bytes_read += len(data)
        return data

    def _index(self, seg: SegmentFiles) -> _Indexes:
        found = self._indexes.get(seg.log)
        if found is None:
            found = _Indexes(
                self._load_index(seg, seg.index, OffsetIndex),
                self._load_index(seg, seg.timeindex, TimeIndex),
            )
            self._indexes[seg.log] = found
        return found

    def _load_index(self, seg: SegmentFiles, path: str | None, kind: Callable):
        if path is None or seg.base_offset is None:
            return None
        data = self._read_whole(path)
        if data is None:
            return None
        try:
            index = kind.from_bytes(data, seg.base_offset, file=path, strict=False)
        except KafkaFormatError:
            return None
        return index if index.problem is None else None

    # --- positions through the offset index -----------------------------------------------

    def _start_position(self, seg: SegmentFiles, start: int) -> int:
        """Where the batch holding ``start`` begins (or one before it); 0 when unknown."""
        index = self._index(seg).offsets
        if index is None or seg.base_offset is None or start <= seg.base_offset:
            return 0
        entry = index.lookup(start)
        if entry.position == 0 or not self._boundary(seg, entry.position, entry.offset):
            return 0
        return entry.position

    def _end_position(self, seg: SegmentFiles, end: int) -> int:
        """A batch boundary at or after which every batch lies at or past ``end``."""
        index = self._index(seg).offsets
        if index is None or seg.base_offset is None or not len(index):
            return seg.size
        # Entry j says the batch at its position ends at offset <= O_j and every later batch
        # starts after O_j; so from the entry after the first with O_j >= end - 1 on, all
        # batches start at or after ``end``.
        rel = end - 1 - seg.base_offset
        j = bisect_left(index.relative_offsets, rel, 0, len(index))
        if j + 1 >= len(index):
            return seg.size
        previous = index.entry(j)
        entry = index.entry(j + 1)
        batch = header_at(self._reader(seg), entry.position)
        if (
            batch is None
            or batch.last_offset > entry.offset
            or batch.base_offset <= previous.offset
        ):
            return seg.size
        return entry.position

    def _boundary(self, seg: SegmentFiles, position: int, entry_offset: int) -> bool:
        """Whether an index entry's position starts a whole batch consistent with it."""
        batch = header_at(self._reader(seg), position)
        if batch is None or batch.last_offset > entry_offset:
            return False
        return seg.base_offset is None or batch.base_offset >= seg.base_offset

    # --- splitting ------------------------------------------------------------------------

    def _cut(self, seg: SegmentFiles, lo: int, hi: int) -> list[tuple[int, int]]:
        limit = self.options.max_bytes_per_partition
        if hi - lo <= limit:
            return [(lo, hi)]
        points = self._index_cuts(seg, lo, hi, limit)
        if points is None:
            walk = (b.position for b in iter_headers(self._reader(seg), lo, hi))
            points = _greedy_cuts(walk, lo, hi, limit)
        return list(pairwise([lo, *points, hi]))

    def _index_cuts(self, seg: SegmentFiles, lo: int, hi: int, limit: int) -> list[int] | None:
        """Cut points among the index entries' positions, each checked against the log; None
        when the index is missing or mostly disagrees with the log (then the headers are
        walked). A lone bad entry (say, at a damaged batch) is only passed over."""
        index = self._index(seg).offsets
        if index is None or seg.base_offset is None or not len(index):
            return None
        positions = np.asarray(index.positions, dtype=np.int64)
        slots = np.flatnonzero((positions > lo) & (positions < hi))
        entry_offset = {int(positions[s]): index.entry(int(s)).offset for s in slots}
        failed = 0

        def valid(position: int) -> bool:
            nonlocal failed
            ok = self._boundary(seg, position, entry_offset[position])
            failed += not ok
            return ok

        cuts = _greedy_cuts((int(positions[s]) for s in slots), lo, hi, limit, valid)
        if failed > len(cuts):
            return None
        return cuts

    # --- timestamps -----------------------------------------------------------------------

    def _offset_for_timestamp(self, pf: PartitionFiles, timestamp: int) -> int | None:
        """Offset of the first record with timestamp >= ``timestamp`` (ListOffsets), or None."""
        for seg in pf.segments:
            if seg.size == 0:
                continue
            indexes = self._index(seg)
            times, offsets = indexes.times, indexes.offsets
            if (
                times is not None
                and len(times)
                and not times.zero_tail_slots
                and times.last_entry().timestamp < timestamp
            ):
                continue  # the whole segment is older: not read at all
            start = 0
            if times is not None and offsets is not None and seg.base_offset is not None:
                entry = timestamp_scan_start(times, offsets, timestamp, seg.base_offset)
                if entry.position and self._boundary(seg, entry.position, entry.offset):
                    start = entry.position
            found = self._timestamp_in(seg, start, timestamp)
            if found is not None:
                return found
        return None

    def _timestamp_in(self, seg: SegmentFiles, start: int, timestamp: int) -> int | None:
        reader = self._reader(seg)
        for header in iter_headers(reader, start):
            if header.max_timestamp is None or header.max_timestamp < timestamp:
                continue
            try:
                batch = decode(
                    reader,
                    header,
                    verify_crc=self.options.verify_crc,
                    max_bytes=self.options.max_decompressed_bytes,
                )
            except KafkaFormatError:
                if self.options.mode == "FAILFAST":
                    raise
                return header.base_offset  # start at the damaged batch; its task reports it
            for record in batch.records or ():
                if record.timestamp is not None and record.timestamp >= timestamp:
                    return record.offset
        return None

    # --- read_committed -------------------------------------------------------------------

    def _aborted(
        self, pf: PartitionFiles, first: SegmentFiles, position: int, end: int | None
    ) -> tuple[AbortedRange, ...]:
        """Aborted and open transactions that may hold records read from ``first`` at
        ``position`` on (and before ``end``)."""
        found: set[AbortedRange] = set()
        index = pf.segments.index(first)
        later = pf.segments[index:]
        for seg in later:
            if seg.txnindex is None or seg.base_offset is None:
                continue
            data = self._read_whole(seg.txnindex)
            if data is None:
                continue
            try:
                txns = TransactionIndex.from_bytes(data, seg.base_offset, strict=False)
            except KafkaFormatError:
                continue  # a damaged index must not hide what the markers tell
            found.update((t.producer_id, t.first_offset, t.last_offset) for t in txns)
        open_txns: dict[int, int] = {}
        for seg in later:
            reader = self._reader(seg)
            for header in iter_headers(reader, position if seg is first else 0):
                past_end = end is not None and header.base_offset >= end
                if past_end and not open_txns:
                    return tuple(sorted(found))
                if header.producer_id < 0 or not header.is_transactional:
                    continue
                if header.is_control:
                    began = open_txns.pop(header.producer_id, None)
                    if began is not None and self._is_abort(reader, header):
                        found.add((header.producer_id, began, header.base_offset))
                elif not past_end:
                    open_txns.setdefault(header.producer_id, header.base_offset)
        # No marker by the end of the log: a read_committed consumer stops before these.
        found.update((pid, began, INT64_MAX) for pid, began in open_txns.items())
        return tuple(sorted(found))

    def _is_abort(self, reader: RangeReader, header) -> bool:
        try:
            batch = decode(
                reader, header, verify_crc=False, max_bytes=self.options.max_decompressed_bytes
            )
        except KafkaFormatError:
            return False  # as the runtime reads a damaged marker: not an abort
        return any(
            r.control is not None and r.control.type == ControlType.ABORT
            for r in batch.records or ()
        )


def _greedy_cuts(
    boundaries: Iterator[int],
    lo: int,
    hi: int,
    limit: int,
    valid: Callable[[int], bool] | None = None,
) -> list[int]:
    """Cut points among batch ``boundaries`` (ascending, inside (lo, hi)) so that pieces are
    at most ``limit`` bytes wherever the boundaries allow: each piece ends at the last
    boundary that keeps it within the limit, or at the next one when a single batch is
    larger. ``valid`` checks a boundary before it is used; failing ones are passed over."""
    cuts: list[int] = []
    current = lo
    pending: list[int] = []  # boundaries after ``current`` within the limit, ascending
    for point in [*boundaries, hi]:
        if point <= current:
            continue
        if point - current > limit:
            while pending:
                candidate = pending.pop()
                if valid is None or valid(candidate):
                    cuts.append(candidate)
                    current = candidate
                    break
            pending.clear()
            if point - current > limit and point < hi and (valid is None or valid(point)):
                cuts.append(point)
                current = point
                continue
        if point < hi:
            pending.append(point)
    return cuts


def _overlapping(
    aborted: tuple[AbortedRange, ...], seg: SegmentFiles, segments: tuple[SegmentFiles, ...]
) -> tuple[AbortedRange, ...]:
    """The transactions that can hold records of ``seg`` (its offsets lie between its base
    offset and the next segment's)."""
    if not aborted or seg.base_offset is None:
        return aborted
    i = segments.index(seg)
    following = segments[i + 1].base_offset if i + 1 < len(segments) else None
    return tuple(
        a for a in aborted if a[2] >= seg.base_offset and (following is None or a[1] < following)
    )


def plan(options: KafkaLogOptions) -> list[KafkaLogSplit]:
    """The input partitions of a read (see the module docstring)."""
    return Planner(options).plan()


__all__ = ["KafkaLogSplit", "Planner", "plan"]
