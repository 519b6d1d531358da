"""Input partitions of a kafka_log read: which byte range of which segment each task reads.

Per partition, on the driver, through the runtime's partition layer
(:class:`~kafka_format.runtime.log.partition.Partition`, over the local disk or the URI's
``pyarrow.fs`` filesystem):

1. Where to start and stop. ``startingOffsets`` / ``endingOffsets`` are offsets already;
   ``startingTimestamp`` / ``endingTimestamp`` become the offset of the first record whose
   timestamp is >= the target, found as the broker's ListOffsets finds it
   (:meth:`Partition.find_timestamp`: segments whose largest timestamp is below the target are
   skipped unread, ``.timeindex`` then ``.index`` give where to start reading headers).
2. Which bytes. The batch holding the start offset and the one holding the end offset are
   found as a fetch finds them (:meth:`Partition.find_offset`: the floor segment by base
   offset, ``.index``, then batch headers); segments wholly before or after are not read.
3. How to split. One split per segment, and a range longer than
   ``maxBytesPerPartition`` is cut at batch boundaries taken from ``.index`` entries (each
   points at the start of a batch), so one large segment is read by several tasks. Then
   (:func:`tasks`) consecutive small splits of one partition are packed into one task, as
   Spark's file sources pack small files: a task costs Spark tens of milliseconds, a small
   segment's read well under one.
4. ``read_committed``: a task reading the middle of a partition cannot see the ABORT marker
   of a transaction whose records it reads, so the driver collects every aborted transaction
   that overlaps the read, as (producer id, first offset, last offset) from the ``.txnindex``
   files and from a header walk from the read's start to the markers, plus transactions with
   no marker yet; each split carries the ones overlapping it. The read ends at the last stable
   offset, the first offset of the earliest transaction with no marker.

Index entries are never trusted blindly: each is judged by the rule every reader of this
package applies (:mod:`~kafka_format.runtime.files.index_lookup`: a whole batch whose CRC
holds starts at the entry's position, at or below the entry's offset and at or above the
segment's base offset; the log cleaner's entries, whose offset may lie inside or past that
batch, hold). If an index is missing, damaged or disagrees with its log, that segment is
planned from a header walk instead, and is still correct. Damage met while planning never
fails the plan (except a starting timestamp under FAILFAST): the range read just grows, and
the task that reads the damaged batch reports it as its mode says.

Cost on a ``pyarrow.fs`` filesystem: the look-ups of step 1 and 2 read the segment where an
offset or timestamp lands whole, once (the partition layer walks a view of it); splitting
reads batch headers, and the one batch at each cut point taken from an index entry (its CRC
is what tells a batch boundary from bytes that look like one).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from itertools import pairwise

import numpy as np
from pyspark.sql.datasource import InputPartition

from ..runtime.errors import KafkaFormatError
from ..runtime.files.index_lookup import check_entry
from ..runtime.files.indexes import OffsetPosition
from ..runtime.files.storage import Storage
from ..runtime.files.txnindex import TransactionIndex
from ..runtime.log.partition import Partition, Segment
from ..runtime.model import ControlType
from ..runtime.read.grouped import packs
from ..runtime.read.sources import Skipped
from ..runtime.read.transactions import AbortedWalk, TxnEvent
from ._dataloss import check_data_loss
from ._discovery import PartitionFiles, SegmentFiles, find, storage_of
from ._fs import FsRef, locate
from ._options import EARLIEST, LATEST, KafkaLogOptions
from ._pushdown import Pushdown
from ._scan import Counted, decode, iter_headers

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
    #: The base offset of the partition's next segment (None: the last): a batch reaching
    #: it is damage (``segment_offsets``), whichever split of the segment holds it.
    next_base: int | None = None

    @property
    def name(self) -> str:
        """The file as errors name it (its URI for remote filesystems)."""
        return FsRef(self.fs_uri).display(self.path)


class Planner:
    """Plans one read; :attr:`bytes_read` counts what planning itself read of logs and
    indexes (the tasks' reads are counted by the data source's accumulator); :attr:`skipped`
    lists what the broker's directory rules passed over."""

    def __init__(self, options: KafkaLogOptions, pushdown: Pushdown | None = None) -> None:
        self.options = options
        #: A WHERE clause's bounds (``KafkaLogPushdownReader.pushFilters``), None without.
        self.pushdown = pushdown
        self.bytes_read = 0
        self.skipped: list[Skipped] = []
        self._ref, self._fs, self._path = locate(options.path)
        self.storage: Storage = storage_of(self._ref, self._fs)
        self._sources: dict[str, Counted] = {}

    def plan(self) -> list[KafkaLogSplit]:
        found = find(self.storage, self._path)
        self.skipped = found.skipped
        wanted = self.options.topics
        partitions = [pf for pf in found.partitions if wanted.accepts(pf.topic, pf.partition)]
        if wanted.kind == "assign":
            present = {(pf.topic, pf.partition) for pf in partitions}
            missing = sorted(wanted.partitions - present)
            if missing:
                # Spark's assign names partitions that must exist; here: under the path.
                raise KafkaFormatError(
                    "option assign names partitions the path does not hold: "
                    + ", ".join(f"{t}-{p}" for t, p in missing),
                    file=self.storage.display(self._path),
                )
        if self.pushdown is not None:
            # After assign's check: a WHERE clause narrows what is read, it names nothing.
            accepts = self.pushdown.accepts
            partitions = [pf for pf in partitions if accepts(pf.topic, pf.partition)]
        splits: list[KafkaLogSplit] = []
        for pf in partitions:
            # Files stay open for one partition only: a log dir may hold thousands of them.
            try:
                splits.extend(self._plan_partition(pf))
            finally:
                for source in self._sources.values():
                    self.bytes_read += source.bytes_read
                    source.close()
                self._sources = {}
                if pf.log is not None:
                    self.bytes_read += pf.log.stats.bytes_read
        return splits

    # --- per partition --------------------------------------------------------------------

    def _plan_partition(self, pf: PartitionFiles) -> list[KafkaLogSplit]:
        log = pf.log
        assert log is not None
        start = self._start_offset(pf)
        if start == INT64_MAX:
            return []  # no record at or after the starting timestamp
        start = check_data_loss(self.options, log, pf, start)
        if start == INT64_MAX:
            return []  # past the log end, failOnDataLoss=false
        end = self._end_offset(pf)
        unpruned = start
        if self.pushdown is not None:
            start, end = self._narrow(pf, start, end)
            if start == INT64_MAX:
                return []  # no record reaches the WHERE clause's least timestamp
        if start is not None and end is not None and start >= end:
            return []
        first = self._start_position(log, start)
        if first is None:
            return []  # nothing at or after the starting offset
        last = self._end_position(log, end)
        ranges: list[tuple[int, int, int]] = []  # (segment slot, lo, hi)
        for slot in range(first[0], len(log.segments) if last is None else last[0] + 1):
            seg = log.segments[slot]
            lo = first[1] if slot == first[0] else 0
            hi = last[1] if last is not None and slot == last[0] else seg.size
            if seg.size and lo < hi:
                ranges.append((slot, lo, hi))
        if not ranges:
            return []
        aborted: tuple[AbortedRange, ...] = ()
        if self.options.isolation == "read_committed":
            origin = ranges[0][:2]
            if unpruned != start:
                # The last stable offset is the whole read's: a transaction with no marker
                # that began before a WHERE clause's start ends the read there too, though
                # none of its batches lie after that start. So the walk starts where the
                # read would without the clause.
                origin = self._start_position(log, unpruned) or origin
            aborted = self._aborted(log, origin[0], origin[1], end)
            # A read_committed fetch ends at the last stable offset: the first offset of the
            # earliest transaction still open (UnifiedLog), as the runtime's reader does.
            stable = min((a[1] for a in aborted if a[2] == INT64_MAX), default=None)
            if stable is not None:
                end = stable if end is None else min(end, stable)
                if start is not None and start >= end:
                    return []
        limit = self._split_bytes(log, ranges, start, end)
        splits = []
        for slot, lo, hi in ranges:
            seg, files = log.segments[slot], pf.segments[slot]
            for a, b in self._cut(log, seg, lo, hi, limit):
                splits.append(
                    KafkaLogSplit(
                        fs_uri=self._ref.uri,
                        path=files.log,
                        topic=pf.topic,
                        partition=pf.partition,
                        start=a,
                        end=b,
                        start_offset=start,
                        end_offset=end,
                        aborted=_overlapping(aborted, files, pf.segments),
                        file_size=seg.size,
                        next_base=_next_base(log, slot),
                    )
                )
        return splits

    def _start_offset(self, pf: PartitionFiles) -> int | None:
        """The first offset to read; None for the log start; INT64_MAX for nothing."""
        ts = self.options.starting_timestamps.get(pf.topic, pf.partition)
        if ts is not None:
            found = self._offset_for_timestamp(pf, ts)
            if found is None and self.options.timestamp_strategy == "error":
                raise KafkaFormatError(
                    f"no record at or after the starting timestamp {ts} in "
                    f"{pf.topic}-{pf.partition} (startingOffsetsByTimestampStrategy=error; "
                    "'latest' reads nothing from such a partition instead)",
                    file=self.storage.display(str(pf.log.path)) if pf.log else None,
                )
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

    def _narrow(
        self, pf: PartitionFiles, start: int | None, end: int | None
    ) -> tuple[int | None, int | None]:
        """``start``/``end`` intersected with a WHERE clause's bounds (never wider). Unlike the
        options, the clause fails nothing and reports no data loss: an offset outside the
        log or a timestamp no record reaches only reads less (INT64_MAX: nothing)."""
        push = self.pushdown
        assert push is not None and pf.log is not None
        if push.start_offset is not None:
            start = push.start_offset if start is None else max(start, push.start_offset)
        if push.end_offset is not None:
            end = push.end_offset if end is None else min(end, push.end_offset)
        lateness = self.options.timestamp_lateness_ms
        if push.end_timestamp is not None and lateness is not None:
            # On the user's word (maxTimestampLatenessMs, _pushdown): every record after the
            # first whose timestamp is >= beyond + lateness is at least beyond.
            try:
                found = self._first_at_or_after(
                    pf.log, min(push.end_timestamp + lateness, INT64_MAX), start
                )
            except (KafkaFormatError, OSError):
                found = None  # damage on the way: not pruned; the task that meets it reports
            if found is not None:
                end = found if end is None else min(end, found)
        if push.start_timestamp is None or (start is not None and end is not None and start >= end):
            return start, end
        try:
            found = self._first_at_or_after(pf.log, push.start_timestamp, start)
        except (KafkaFormatError, OSError):
            return start, end  # damage on the way: not pruned; the task that meets it reports
        if found is None:
            return INT64_MAX, end
        return (found if start is None else max(start, found)), end

    def _first_at_or_after(self, log: Partition, timestamp: int, start: int | None) -> int | None:
        """Offset of the first record at or after ``start`` whose timestamp is >=
        ``timestamp``, by ListOffsets' look-up (:meth:`Partition.find_timestamp`) one segment
        at a time; None when no record has one. Each segment is judged by its largest record
        timestamp (:meth:`Partition.max_timestamp_so_far`), not by the file's mtime as the
        broker judges one without timestamps (magic 0), and a segment that turns out to hold
        no such record does not end the search (the broker's does): pruning must never drop
        a row the clause keeps."""
        first = 0 if start is None else log.segment_for_offset(start) or 0
        for seg in log.segments[first:]:
            if log.max_timestamp_so_far(seg) < timestamp:
                continue
            at = seg.base_offset if start is None else max(start, seg.base_offset)
            hit = log.find_timestamp(timestamp, starting_offset=at)
            if hit is not None and hit.record is not None:
                return hit.record.offset
        return None

    # --- positions through the partition layer --------------------------------------------

    def _start_position(self, log: Partition, start: int | None) -> tuple[int, int] | None:
        """(segment slot, byte position) of the batch holding ``start`` (or the next offset
        present), as a fetch finds it; None when nothing lies at or after it."""
        if start is None or not log.segments:
            return (0, 0)
        floor = log.segment_for_offset(start)
        if floor is None or start <= log.segments[0].base_offset:
            return (0, 0)
        try:
            hit = log.find_offset(start)
        except (KafkaFormatError, OSError):
            return (floor, 0)  # damage on the way: read the floor segment, the task reports it
        if hit is None:
            log_start = log.log_start_offset
            return (0, 0) if log_start is not None and start < log_start else None
        return (log.segments.index(hit.segment), hit.position)

    def _end_position(self, log: Partition, end: int | None) -> tuple[int, int] | None:
        """(segment slot, byte position) before which every batch holding an offset below
        ``end`` lies; None to read to the log end."""
        if end is None or not log.segments:
            return None
        try:
            hit = log.find_offset(end)
        except (KafkaFormatError, OSError):
            return None
        if hit is None:
            return None
        slot = log.segments.index(hit.segment)
        records = hit.batch.records or ()
        if records and records[0].offset >= end:
            return (slot, hit.position)  # the batch holding ``end`` starts at or after it
        return (slot, hit.position + hit.batch.size)

    def _source(self, log: Partition, seg: Segment) -> Counted:
        key = str(seg.log)
        source = self._sources.get(key)
        if source is None:
            source = self._sources[key] = Counted(log.source(seg))
        return source

    def _boundary(self, log: Partition, seg: Segment, position: int, entry_offset: int) -> bool:
        """Whether an index entry holds (``index_lookup.check_entry``, the rule every reader
        applies), so that its position is a batch boundary to cut at."""
        source = self._source(log, seg)
        check = check_entry(
            source, OffsetPosition(entry_offset, position), seg.base_offset, file=source.name
        )
        if check.batch is not None:
            source.looked_at(check.batch.size)  # the CRC read it whole (counted if mapped)
        return check.holds

    # --- splitting ------------------------------------------------------------------------

    def _split_bytes(
        self,
        log: Partition,
        ranges: list[tuple[int, int, int]],
        start: int | None,
        end: int | None,
    ) -> int:
        """The most bytes one input partition of this partition reads: ``maxBytesPerPartition``,
        or less for ``maxRecordsPerPartition``, turned into bytes by the range's own bytes per
        offset (batches are never split, so the count is about, as cuts fall between them)."""
        limit = self.options.max_bytes_per_partition
        records = self.options.max_records_per_partition
        if records is None:
            return limit
        first = log.segments[ranges[0][0]].base_offset if start is None else start
        last = log.log_end_offset() if end is None else end
        if last is None:
            return limit
        offsets = max(1, last - first)
        total = sum(hi - lo for _, lo, hi in ranges)
        return max(1, min(limit, records * total // offsets))

    def _cut(
        self, log: Partition, seg: Segment, lo: int, hi: int, limit: int
    ) -> list[tuple[int, int]]:
        if hi - lo <= limit:
            return [(lo, hi)]
        points = self._index_cuts(log, seg, lo, hi, limit)
        if points is None:
            walk = (b.position for b in iter_headers(self._source(log, seg), lo, hi))
            points = _greedy_cuts(walk, lo, hi, limit)
        return list(pairwise([lo, *points, hi]))

    def _index_cuts(
        self, log: Partition, seg: Segment, lo: int, hi: int, limit: int
    ) -> list[int] | None:
        """Cut points among the index entries' positions, each checked against the log; None
        when the index is missing or mostly disagrees with the log (then the headers are
        walked). A lone bad entry (say, at a damaged batch) is only passed over."""
        index = log.offset_index(seg)
        if index is None:
            return None
        with index:
            if not len(index):
                return None
            self.bytes_read += len(index) * 8
            positions = np.asarray(index.positions, dtype=np.int64)
            slots = np.flatnonzero((positions > lo) & (positions < hi))
            entry_offset = {int(positions[s]): index.entry(int(s)).offset for s in slots}
        failed = 0

        def valid(position: int) -> bool:
            nonlocal failed
            ok = self._boundary(log, seg, position, entry_offset[position])
            failed += not ok
            return ok

        cuts = _greedy_cuts((int(positions[s]) for s in slots), lo, hi, limit, valid)
        if failed > len(cuts):
            return None
        return cuts

    # --- timestamps -----------------------------------------------------------------------

    def _offset_for_timestamp(self, pf: PartitionFiles, timestamp: int) -> int | None:
        """Offset of the first record with timestamp >= ``timestamp`` (ListOffsets), or None."""
        log = pf.log
        assert log is not None
        try:
            hit = log.find_timestamp(timestamp)
        except KafkaFormatError as exc:
            if self.options.mode == "FAILFAST":
                raise
            return exc.base_offset  # start at the damaged batch; its task reports it
        if hit is None or hit.record is None:
            return None
        return hit.record.offset

    # --- read_committed -------------------------------------------------------------------

    def _aborted(
        self, log: Partition, first: int, position: int, end: int | None
    ) -> tuple[AbortedRange, ...]:
        """Aborted and open transactions that may hold records read from segment ``first``
        at ``position`` on (and before ``end``)."""
        found: set[AbortedRange] = set()
        later = log.segments[first:]
        for seg in later:
            if seg.txnindex is None:
                continue
            try:
                data = log.storage.read_bytes(str(seg.txnindex))
                txns = TransactionIndex.from_bytes(data, seg.base_offset, strict=False)
            except (KafkaFormatError, OSError):
                continue  # a damaged index must not hide what the markers tell
            self.bytes_read += len(data)
            found.update((t.producer_id, t.first_offset, t.last_offset) for t in txns)
        # The runtime's own walk over the markers (transactions.AbortedWalk), fed from the
        # headers read here (a task cannot see the markers of other splits).
        walk, tp = AbortedWalk(), (log.topic, log.partition)
        for seg in later:
            source = self._source(log, seg)
            for header in iter_headers(source, position if seg is later[0] else 0):
                past_end = end is not None and header.base_offset >= end
                if past_end and not walk.is_open(tp):
                    break
                pid = header.producer_id
                if pid < 0 or not header.is_transactional:
                    continue
                if header.is_control:
                    abort = walk.opened(tp, pid) and self._is_abort(source, header)
                    walk.feed(TxnEvent(tp, pid, header.base_offset, True, True, abort))
                elif not past_end:
                    walk.feed(TxnEvent(tp, pid, header.base_offset, False, True, False))
            else:
                continue
            break
        result = walk.done()
        for first, pid in result.aborted.get(tp, ()):
            found.add((pid, first, result.ends[(tp, pid, first)]))
        # No marker by the end of the log: a read_committed consumer stops before these.
        found.update((pid, began, INT64_MAX) for pid, began in result.open.get(tp, {}).items())
        return tuple(sorted(found))

    def _is_abort(self, source: Counted, header) -> bool:
        try:
            batch = decode(
                source, header, verify_crc=False, max_bytes=self.options.max_decompressed_bytes
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


def _next_base(log: Partition, slot: int) -> int | None:
    return log.segments[slot + 1].base_offset if slot + 1 < len(log.segments) else None


#: What a split costs a task besides its bytes when splits are packed (:func:`tasks`), in
#: bytes, as Spark's ``spark.sql.files.openCostInBytes`` for its file sources: opening,
#: mapping, scanning and planning a segment takes the reader about 0.6 ms (bench/results.md,
#: small batches), the time it takes to read about this many bytes of batches.
PACK_SPLIT_COST = 256 * 1024


@dataclass(frozen=True, slots=True)
class PackedSplits(InputPartition):
    """Splits of one Kafka partition read by one task, one after the other, each exactly as
    a task of its own would read it: its rows, its damage and its counters."""

    splits: tuple[KafkaLogSplit, ...]


def tasks(
    splits: list[KafkaLogSplit], options: KafkaLogOptions
) -> list[KafkaLogSplit | PackedSplits]:
    """The input partitions Spark runs for a plan's splits: consecutive splits of one Kafka
    partition packed into one task while their bytes, each with PACK_SPLIT_COST more, stay
    within ``maxBytesPerPartition`` (with ``minPartitions``, within the read's bytes over that
    number too, so that as many tasks remain where the splits allow); a split alone stays
    itself. A ``kafka-format generate`` directory's 1,225 segments of 32 KiB made 1,225
    tasks, and Spark's ``count()`` of it took 32 s where its 14 partitions' rows take the
    Python data source floor 0.5 s."""
    limit = options.max_bytes_per_partition
    if options.min_partitions:
        total = sum(_pack_cost(s) for s in splits)
        limit = min(limit, -(-total // options.min_partitions))
    return [
        PackedSplits(tuple(held)) if len(held) > 1 else held[0]
        for held, _ in packs(splits, _pack_cost, limit, key=_kafka_partition)
    ]


def _pack_cost(split: KafkaLogSplit) -> int:
    return split.end - split.start + PACK_SPLIT_COST


def _kafka_partition(split: KafkaLogSplit) -> tuple:
    return split.fs_uri, split.topic, split.partition


def plan(options: KafkaLogOptions, pushdown: Pushdown | None = None) -> list[KafkaLogSplit]:
    """The input partitions of a read (see the module docstring), narrowed by a WHERE
    clause's ``pushdown`` when given.

    ``minPartitions``, as Spark's Kafka source takes it (a hint: "Spark will divvy up large
    Kafka partitions to smaller pieces"): when the plan has fewer input partitions, it is made
    again with ``maxBytesPerPartition`` lowered to the read's bytes over that number, so the
    larger ranges are cut (at batch boundaries, so there may still be fewer)."""
    splits = Planner(options, pushdown).plan()
    wanted = options.min_partitions
    if wanted is None or len(splits) >= wanted:
        return splits
    total = sum(s.end - s.start for s in splits)
    limit = max(1, -(-total // wanted))
    if limit >= options.max_bytes_per_partition:
        return splits
    return Planner(replace(options, max_bytes_per_partition=limit), pushdown).plan()


__all__ = ["PACK_SPLIT_COST", "KafkaLogSplit", "PackedSplits", "Planner", "plan", "tasks"]
