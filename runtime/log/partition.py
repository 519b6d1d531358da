"""A partition directory as the broker sees it: segments, indexes, and look-ups through them.

A ``topic-N`` directory holds segments named by their base offset (``LocalLog`` keeps them in
a map ordered by it), each a ``.log`` with an optional ``.index``, ``.timeindex`` and
``.txnindex``, plus producer ``.snapshot`` files and a ``leader-epoch-checkpoint``.
A folder of tiered-storage objects (``<offset>-<remote segment id>.log`` and its ``.index``,
``.timeindex``, ``.txnindex``, ``.snapshot``, ``.leader_epoch_checkpoint``: see
:mod:`..files.names`) reads the same way, each object's files tied to it by offset and id; one
base offset twice (two uploads of a segment) is refused, naming both files.

Look-ups follow the broker step by step, so that they read what it reads:

* offset (``LocalLog.read`` -> ``LogSegment.translateOffset``): the segment with the largest
  base offset <= the target (binary search), the offset index entry with the largest offset
  <= the target, then batch headers from that entry's position until a batch's last offset is
  >= the target (``FileRecords.searchForOffsetWithSize``); if the segment ends first, the
  next segment the same way.
* timestamp (``UnifiedLog.fetchOffsetByTimestamp`` -> ``LogSegment.findOffsetByTimestamp``):
  the first segment whose largest timestamp is >= the target (``LogSegment.largestTimestamp``:
  the file's modification time for a segment holding no timestamp, magic 0), the time index
  entry with the largest timestamp <= the target, the offset index entry for that offset, then
  batches from there until one has max timestamp >= the target, and in it the first record
  with timestamp >= the target and offset >= the log start offset
  (``FileRecords.searchForTimestamp``). The search ends with that segment, found or not.
* ListOffsets' special timestamps (``ListOffsetsRequest``): -1 latest (the log end offset),
  -2 earliest (the log start offset), -3 the record with the largest timestamp: the first
  segment with the largest max timestamp, its first batch with that max timestamp, the first
  record in it with that timestamp (``RecordBatch.offsetOfMaxTimestamp``; none for magic 0).

The directory is read through a :class:`~kafka_format.runtime.files.storage.Storage`: the
local disk by default (files memory-mapped), or a ``pyarrow.fs`` filesystem
(:class:`~kafka_format.runtime.files.storage.ArrowStorage`, ranged reads), with the same
rules and look-ups.

Where an index is missing, fails its checks, or its entry does not hold against the log (the
rule every reader applies, :mod:`~kafka_format.runtime.files.index_lookup`: a whole batch whose
CRC holds at the entry's position, starting at or below the entry's offset and at or above the
segment's base offset), the segment is scanned from byte 0 instead and the result says
``used_index=False``. Every look-up counts the log bytes it touches (:class:`ReadStats`), so a
caller can see that the index spared it the rest of the segment.
"""

from __future__ import annotations

import contextlib
import os
from bisect import bisect_right
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path, PurePath, PurePosixPath

from ..errors import KafkaFormatError
from ..files import kinds
from ..files.checkpoints import (
    LOG_START_OFFSET_CHECKPOINT,
    EpochEntry,
    TopicPartition,
    parse_leader_epoch_checkpoint,
    parse_offset_checkpoint,
)
from ..files.index_lookup import Start, start_for_offset, start_for_timestamp
from ..files.indexes import OffsetIndex, TimeIndex
from ..files.names import (
    FileKind,
    ambiguous_segment,
    parse_partition_dir_name,
    parse_remote_partition_dir_name,
    parse_segment_file_name,
)
from ..files.snapshot import ProducerSnapshot, parse_producer_snapshot
from ..files.storage import LOCAL, ByteSource, Entry, LocalStorage, Storage
from ..files.txnindex import AbortedTxn, TransactionIndex
from ..format import layout
from ..format.batches import ReadOptions, read_batch, read_header
from ..format.framing import Frame, iter_frames
from ..model import Batch, Record

#: ``ListOffsetsRequest``'s special timestamps.
LATEST_TIMESTAMP = -1
EARLIEST_TIMESTAMP = -2
MAX_TIMESTAMP = -3

#: A target above every offset: its floor entry is an index's last.
_BEYOND_EVERY_OFFSET = 1 << 62

#: Bytes a reader must look at to know a batch's offsets and max timestamp, per magic
#: (frame header + v0/v1 message header up to the timestamp, without the key and value
#: lengths; the whole v2 batch header): 18, 26, 61.
HEADER_BYTES = {
    0: layout.LEGACY_V0_LEN_KEY,
    1: layout.LEGACY_V1_LEN_KEY,
    2: layout.V2_HEADER_SIZE,
}


@dataclass(slots=True, frozen=True)
class Segment:
    """One segment: its base offset (from the file name) and the files that exist for it
    (:class:`~pathlib.Path` on the local disk, :class:`~pathlib.PurePosixPath` in the
    storage's own syntax elsewhere)."""

    base_offset: int
    log: PurePath
    index: PurePath | None
    timeindex: PurePath | None
    txnindex: PurePath | None
    #: Size of the .log file in bytes when the partition was opened.
    size: int
    #: A tiered-storage object's ``RemoteLogSegmentId`` (``<offset>-<id>.log``); None for a
    #: local segment. Its other files are those of the same offset *and* id.
    remote_id: str | None = None
    #: A remote segment's ``<offset>-<id>.leader_epoch_checkpoint`` (the leader epochs up to
    #: its end); local segments share the partition's ``leader-epoch-checkpoint`` instead.
    leader_epoch_checkpoint: PurePath | None = None


@dataclass(slots=True, frozen=True)
class SnapshotFile:
    """A producer state snapshot, taken at ``offset`` (exclusive)."""

    offset: int
    path: PurePath


@dataclass(slots=True)
class ReadStats:
    """Log bytes a look-up touched.

    ``bytes_read`` counts the bytes really looked at: the header of every batch passed over
    and the whole of every batch decoded. ``bytes_scanned`` counts the span of file a
    sequential reader would have had to go through (from each scan's start position to the
    end of the last batch it looked at). Index files are not counted: a binary search touches
    a few entries of them.
    """

    bytes_read: int = 0
    bytes_scanned: int = 0
    batches_scanned: int = 0
    #: Batches whose records were decoded.
    batches_decoded: int = 0
    # (file, position) of batches read whole, so that one read twice (CRC check, then
    # decoding) is counted once.
    _whole: set[tuple[str, int]] = field(default_factory=set, repr=False, compare=False)

    def add(self, other: ReadStats) -> None:
        self.bytes_read += other.bytes_read
        self.bytes_scanned += other.bytes_scanned
        self.batches_scanned += other.batches_scanned
        self.batches_decoded += other.batches_decoded

    def read_whole(self, file: str, frame: Frame) -> None:
        """Count the rest of a batch whose header was counted already."""
        self.read_whole_at(file, frame.position, frame.size, frame.magic)

    def read_whole_at(self, file: str, position: int, size: int, magic: int) -> None:
        if (file, position) not in self._whole:
            self._whole.add((file, position))
            self.bytes_read += size - min(size, HEADER_BYTES.get(magic, 0))


@dataclass(slots=True)
class LookupResult:
    """Where a look-up landed: the batch holding the record, and the record itself.

    ``record`` is the record with the requested offset, or the next one when that offset is
    gone (compaction); for a timestamp look-up, the first record with timestamp >= the
    target. It may be a control record (a transaction marker): it is what lies there.
    ``record`` is None only when ``batch`` covers the target but holds no record at or after
    it and no batch follows it.
    """

    segment: Segment
    position: int
    batch: Batch
    record: Record | None
    used_index: bool
    stats: ReadStats
    #: Why an index was not used (missing, damaged, inconsistent with the log); None if it was.
    index_note: str | None = None


@dataclass(slots=True)
class Partition:
    """A partition directory: its segments in base-offset order and its other files."""

    path: PurePath
    topic: str | None
    partition: int | None
    segments: list[Segment]
    snapshots: list[SnapshotFile]
    leader_epoch_checkpoint: PurePath | None
    #: Bytes touched by every look-up made through this object so far.
    stats: ReadStats = field(default_factory=ReadStats)
    #: Index files without a .log of the same base offset (``.index``, ``.timeindex``,
    #: ``.txnindex``): the broker deletes them at start-up.
    orphans: list[Path] = field(default_factory=list)
    #: ``partition.metadata`` (the topic id) when the directory has one.
    partition_metadata: PurePath | None = None
    verify_crc: bool = True
    #: Where the files are read from (the local disk unless opened on another storage).
    storage: Storage = field(default=LOCAL, repr=False)
    #: The partition's own files (``files.kinds.PARTITION_FILES``) the directory holds, by
    #: kind: ``leader_epoch_checkpoint`` and ``partition_metadata`` among them.
    side_files: dict[kinds.Kind, PurePath] = field(default_factory=dict)

    def __post_init__(self) -> None:
        # The two named fields came first; a partition built by hand with them set lists
        # them among its side files as well.
        for kind, path in (
            (kinds.LEADER_EPOCH_CHECKPOINT, self.leader_epoch_checkpoint),
            (kinds.PARTITION_METADATA, self.partition_metadata),
        ):
            if path is not None:
                self.side_files.setdefault(kind, path)

    # --- opening --------------------------------------------------------------------------

    @classmethod
    def open(cls, path: str | os.PathLike[str], storage: Storage | None = None) -> Partition:
        """Read the directory listing (nothing else is read until a look-up asks)."""
        storage = LOCAL if storage is None else storage
        info = storage.info(os.fspath(path))
        if info is None or not info.is_dir:
            raise KafkaFormatError("not a directory", file=storage.display(os.fspath(path)))
        return cls.from_listing(os.fspath(path), storage.list_dir(info.path), storage)

    @classmethod
    def from_listing(
        cls,
        path: str | os.PathLike[str],
        entries: list[Entry] | tuple[Entry, ...],
        storage: Storage,
    ) -> Partition:
        """A partition from a listing of its directory already made (discovery lists every
        directory once)."""
        as_path = Path if isinstance(storage, LocalStorage) else PurePosixPath
        directory = as_path(path)
        topic, partition = _dir_topic_partition(directory.name)
        # Segments by (base offset, remote id): a folder of tiered-storage objects
        # (<offset>-<id>.log) reads as a partition too, each object's files tied to it by
        # offset and id. One base offset twice is refused (ambiguous_segment), never chosen.
        logs: dict[tuple[int, str | None], tuple[PurePath, int]] = {}
        by_base: dict[int, PurePath] = {}
        # A segment's other files, by kind and key; any without a .log is an orphan.
        companions: dict[FileKind, dict[tuple[int, str | None], PurePath]] = {
            kind.segment_kind: {} for kind in kinds.COMPANIONS if kind.segment_kind is not None
        }
        companions[FileKind.LEADER_EPOCH_CHECKPOINT] = {}
        snapshots = []
        side_files: dict[kinds.Kind, PurePath] = {}
        for entry in entries:
            if entry.is_dir:
                continue
            parsed = parse_segment_file_name(entry.name)
            if parsed is None:
                kind = kinds.by_name(entry.name)
                if kind is not None and kind.scope is kinds.Scope.PARTITION:
                    side_files[kind] = directory / entry.name
                continue
            if not parsed.is_live:
                continue
            file = directory / entry.name
            if parsed.kind is FileKind.LOG:
                known = by_base.get(parsed.base_offset)
                if known is not None:
                    raise ambiguous_segment(
                        parsed.base_offset,
                        known.name,
                        entry.name,
                        directory=storage.display(str(directory)),
                    )
                by_base[parsed.base_offset] = file
                logs[parsed.segment_key] = (file, entry.size)
            elif parsed.kind is FileKind.PRODUCER_SNAPSHOT:
                snapshots.append(SnapshotFile(parsed.base_offset, file))
            elif parsed.kind in companions:
                companions[parsed.kind][parsed.segment_key] = file
        segments = [
            Segment(
                base_offset=key[0],
                log=log,
                index=companions[FileKind.INDEX].get(key),
                timeindex=companions[FileKind.TIME_INDEX].get(key),
                txnindex=companions[FileKind.TXN_INDEX].get(key),
                size=size,
                remote_id=key[1],
                leader_epoch_checkpoint=companions[FileKind.LEADER_EPOCH_CHECKPOINT].get(key),
            )
            for key, (log, size) in sorted(logs.items(), key=lambda item: item[0][0])
        ]
        orphans = sorted(
            p for files in companions.values() for key, p in files.items() if key not in logs
        )
        return cls(
            path=directory,
            topic=topic,
            partition=partition,
            segments=segments,
            snapshots=sorted(snapshots, key=lambda s: s.offset),
            leader_epoch_checkpoint=side_files.get(kinds.LEADER_EPOCH_CHECKPOINT),
            orphans=orphans,
            partition_metadata=side_files.get(kinds.PARTITION_METADATA),
            storage=storage,
            side_files=side_files,
        )

    # --- files through the storage ------------------------------------------------------

    def source(self, segment: Segment) -> ByteSource:
        """The segment's ``.log`` bytes (close it, or use it in a ``with``)."""
        return self.storage.open(str(segment.log))

    def _bytes(self, path: PurePath) -> bytes:
        return self.storage.read_bytes(str(path))

    def _name(self, path: PurePath) -> str:
        return self.storage.display(str(path))

    def offset_index(self, segment: Segment) -> OffsetIndex | None:
        """The segment's ``.index`` if it exists and passes its checks, else None (close it,
        or use it in a ``with``)."""
        return self._checked_index(OffsetIndex, segment.index, segment.base_offset)

    def time_index(self, segment: Segment) -> TimeIndex | None:
        """The segment's ``.timeindex`` if it exists and passes its checks, else None."""
        return self._checked_index(TimeIndex, segment.timeindex, segment.base_offset)

    def _checked_index(self, kind, path: PurePath | None, base_offset: int):
        if path is None:
            return None
        try:
            index = self._open_index(kind, path, base_offset)
        except (KafkaFormatError, OSError):
            return None
        if index.problem is not None:
            index.close()
            return None
        return index

    def _open_index(self, kind, path: PurePath, base_offset: int):
        """An index opened leniently: memory-mapped on the local disk, read whole elsewhere."""
        if isinstance(self.storage, LocalStorage):
            return kind.open(path, base_offset, strict=False)
        return kind.from_bytes(self._bytes(path), base_offset, file=self._name(path), strict=False)

    # --- partition-level files ------------------------------------------------------------

    def leader_epochs(self) -> list[EpochEntry]:
        """Entries of ``leader-epoch-checkpoint``; empty when the file is absent."""
        if self.leader_epoch_checkpoint is None:
            return []
        path = self.leader_epoch_checkpoint
        return parse_leader_epoch_checkpoint(self._bytes(path), file=self._name(path))

    def producer_snapshot(self, snapshot: SnapshotFile | None = None) -> ProducerSnapshot | None:
        """The given snapshot, by default the latest one (what the broker loads); None when
        there is none. CRC-checked."""
        if snapshot is None:
            if not self.snapshots:
                return None
            snapshot = self.snapshots[-1]
        data = self._bytes(snapshot.path)
        return parse_producer_snapshot(data, file=self._name(snapshot.path), offset=snapshot.offset)

    def aborted_transactions(self) -> list[AbortedTxn]:
        """Every entry of every ``.txnindex``, in segment order (``allAbortedTxns``)."""
        found: list[AbortedTxn] = []
        for segment in self.segments:
            if segment.txnindex is not None:
                data = self._bytes(segment.txnindex)
                name = self._name(segment.txnindex)
                found.extend(TransactionIndex.from_bytes(data, segment.base_offset, file=name))
        return found

    @property
    def log_start_offset(self) -> int | None:
        """``log-start-offset-checkpoint`` of the parent log dir when it names this
        partition, never below the first segment's base offset; None without segments."""
        if not self.segments:
            return None
        first = self.segments[0].base_offset
        checkpoint = self.path.parent / LOG_START_OFFSET_CHECKPOINT
        if self.topic is not None and self.partition is not None:
            with contextlib.suppress(KafkaFormatError, OSError):
                info = self.storage.info(str(checkpoint))
                if info is None or info.is_dir:
                    return first
                data = self._bytes(checkpoint)
                offsets = parse_offset_checkpoint(data, file=self._name(checkpoint))
                stored = offsets.get(TopicPartition(self.topic, self.partition))
                if stored is not None:
                    return max(stored, first)
        return first

    def log_end_offset(self) -> int | None:
        """The offset the next record would get (``LogSegment.readNextOffset`` of the last
        segment holding a batch); None without segments."""
        if not self.segments:
            return None
        for segment in reversed(self.segments):
            last = None
            with self._open_log(segment) as view:
                start = self._safe_last_index_position(segment, view)
                for _frame, batch in self._headers(view, segment, start, ReadStats()):
                    last = batch
            if last is not None:
                return last.next_offset
        return self.segments[0].base_offset

    # --- offset look-up -------------------------------------------------------------------

    def segment_for_offset(self, offset: int) -> int | None:
        """Index in :attr:`segments` of the floor segment (largest base offset <= offset)."""
        bases = [s.base_offset for s in self.segments]
        slot = bisect_right(bases, offset) - 1
        return slot if slot >= 0 else None

    def find_offset(self, offset: int) -> LookupResult | None:
        """The batch and record at ``offset`` (or the next offset present), as a fetch at
        ``offset`` would find it; None when nothing at or after ``offset`` exists, or the
        offset is below the log start offset."""
        start = self.log_start_offset
        if start is None or offset < start:
            return None
        slot = self.segment_for_offset(offset)
        if slot is None:
            slot = 0
        stats = ReadStats()
        fallback = None
        try:
            for segment in self.segments[slot:]:
                found = self._find_in_segment(segment, offset, stats)
                if found is not None and found.record is not None:
                    return found
                fallback = fallback or found
            return fallback
        finally:
            self.stats.add(stats)

    def _find_in_segment(
        self, segment: Segment, offset: int, stats: ReadStats
    ) -> LookupResult | None:
        with self._open_log(segment) as view:
            start = self._offset_start(segment, view, offset)
            note = start.note
            if start.used_index:
                self._count_entry_batch(segment, start, stats)
                try:
                    hit = self._scan_for_offset(view, segment, start.position, offset, stats)
                except KafkaFormatError as exc:
                    if not start.position:
                        raise  # the scan from byte 0 would meet the same damage
                    note = f"{_entry_label(start)} leads to {exc}"
                else:
                    return self._result(view, segment, hit, offset, True, None, stats)
            hit = self._scan_for_offset(view, segment, 0, offset, stats)
            return self._result(view, segment, hit, offset, False, note, stats)

    def _scan_for_offset(
        self, view: memoryview, segment: Segment, start: int, offset: int, stats: ReadStats
    ) -> tuple[Frame, Batch] | None:
        for frame, batch in self._headers(view, segment, start, stats):
            if batch.last_offset >= offset:
                return frame, batch
        return None

    # --- timestamp look-up ----------------------------------------------------------------

    def largest_timestamp(self, segment: Segment, stats: ReadStats | None = None) -> int:
        """The segment's largest timestamp as the broker knows it (``LogSegment.
        largestTimestamp``): its largest record timestamp (:meth:`max_timestamp_so_far`), or,
        when no record has one (magic 0), the log file's modification time."""
        largest = self.max_timestamp_so_far(segment, stats)
        if largest >= 0:
            return largest
        return segment.log.stat().st_mtime_ns // 1_000_000

    def max_timestamp_so_far(self, segment: Segment, stats: ReadStats | None = None) -> int:
        """The segment's largest record timestamp: the last time index entry (written when
        the segment was closed), or, when the index is missing, damaged, empty or untrimmed
        (a segment that was never closed), the largest batch max timestamp found by reading
        every batch header. -1 when no record has a timestamp."""
        own = stats is None
        stats = ReadStats() if stats is None else stats
        try:
            if segment.timeindex is not None:
                with (
                    contextlib.suppress(KafkaFormatError, OSError),
                    self._open_index(TimeIndex, segment.timeindex, segment.base_offset) as index,
                ):
                    if index.problem is None and len(index) and not index.zero_tail_slots:
                        return index.last_entry().timestamp
            largest = -1
            with self._open_log(segment) as view:
                for _frame, batch in self._headers(view, segment, 0, stats):
                    if batch.max_timestamp is not None and batch.max_timestamp > largest:
                        largest = batch.max_timestamp
            return largest
        finally:
            if own:
                self.stats.add(stats)

    def find_timestamp(
        self, timestamp: int, *, starting_offset: int | None = None
    ) -> LookupResult | None:
        """The first record with timestamp >= ``timestamp`` and offset >= ``starting_offset``
        (default: the log start offset), as ListOffsets finds it; None when there is none.
        For ListOffsets' special timestamps (-1, -2, -3) see :meth:`list_offset`."""
        if timestamp < 0:
            raise ValueError(f"not a timestamp: {timestamp} (see list_offset for -1, -2, -3)")
        log_start = self.log_start_offset
        if log_start is None:
            return None
        if starting_offset is None:
            starting_offset = log_start
        stats = ReadStats()
        try:
            # UnifiedLog.fetchOffsetByTimestamp searches the first segment whose largest
            # timestamp reaches the target, and only that one. Segments wholly below the
            # starting offset are passed over (the broker's start is the log start offset, and
            # segments below it are on their way to deletion).
            first = self.segment_for_offset(starting_offset) or 0
            for segment in self.segments[first:]:
                if self.largest_timestamp(segment, stats) >= timestamp:
                    return self._timestamp_in_segment(segment, timestamp, starting_offset, stats)
            return None
        finally:
            self.stats.add(stats)

    def list_offset(self, spec: int) -> int | None:
        """The offset ListOffsets answers for -1 (latest: the log end offset) or -2 (earliest:
        the log start offset); -3 (max timestamp) needs a record: :meth:`find_max_timestamp`."""
        if spec == LATEST_TIMESTAMP:
            return self.log_end_offset()
        if spec == EARLIEST_TIMESTAMP:
            return self.log_start_offset
        raise ValueError(f"not a ListOffsets offset spec here: {spec}")

    def find_max_timestamp(self) -> LookupResult | None:
        """The record ListOffsets' MAX_TIMESTAMP (-3) names: in the first segment holding the
        largest timestamp, the first batch whose max timestamp it is, and in that batch the
        first record carrying it (``UnifiedLog.fetchOffsetByTimestamp``,
        ``RecordBatch.offsetOfMaxTimestamp``). None when no record has a timestamp."""
        stats = ReadStats()
        try:
            best, best_segment = -1, None
            for segment in self.segments:
                largest = self.max_timestamp_so_far(segment, stats)
                if largest > best:  # the first of equal segments, as Scala's maxBy
                    best, best_segment = largest, segment
            if best_segment is None:
                return None
            with self._open_log(best_segment) as view:
                for frame, batch in self._headers(view, best_segment, 0, stats):
                    if batch.max_timestamp != best:
                        continue
                    full = self._decode(frame, best_segment, stats)
                    for record in full.records or ():
                        if record.timestamp == best:
                            return LookupResult(
                                best_segment, frame.position, full, record, False, stats
                            )
                    return None
            return None
        finally:
            self.stats.add(stats)

    def _timestamp_in_segment(
        self, segment: Segment, timestamp: int, starting_offset: int, stats: ReadStats
    ) -> LookupResult | None:
        with self._open_log(segment) as view:
            start = self._timestamp_start(segment, view, timestamp, starting_offset)
            note = start.note
            if start.used_index:
                self._count_entry_batch(segment, start, stats)
                try:
                    hit = self._scan_for_timestamp(
                        view, segment, start.position, timestamp, starting_offset, stats
                    )
                except KafkaFormatError as exc:
                    if not start.position:
                        raise  # the scan from byte 0 would meet the same damage
                    note = f"{_entry_label(start)} leads to {exc}"
                else:
                    return self._finish_timestamp(segment, hit, True, None, stats)
            hit = self._scan_for_timestamp(view, segment, 0, timestamp, starting_offset, stats)
            return self._finish_timestamp(segment, hit, False, note, stats)

    def _timestamp_start(
        self, segment: Segment, view: memoryview, timestamp: int, starting_offset: int
    ) -> Start:
        if segment.timeindex is None:
            return Start(0, False, None, "no time index")
        if segment.index is None:
            return Start(0, False, None, "no offset index")
        try:
            with (
                self._open_index(TimeIndex, segment.timeindex, segment.base_offset) as tindex,
                self._open_index(OffsetIndex, segment.index, segment.base_offset) as oindex,
            ):
                return start_for_timestamp(
                    tindex, oindex, view, timestamp, starting_offset, file=str(segment.log)
                )
        except (KafkaFormatError, OSError) as exc:
            return Start(0, False, None, str(exc))

    def _scan_for_timestamp(
        self,
        view: memoryview,
        segment: Segment,
        start: int,
        timestamp: int,
        starting_offset: int,
        stats: ReadStats,
    ) -> tuple[Frame, Batch, Record] | None:
        for frame, batch in self._headers(view, segment, start, stats):
            if batch.max_timestamp is None or batch.max_timestamp < timestamp:
                continue
            if batch.last_offset < starting_offset:
                continue
            full = self._decode(frame, segment, stats)
            for record in full.records or ():
                if (
                    record.timestamp is not None
                    and record.timestamp >= timestamp
                    and record.offset >= starting_offset
                ):
                    return frame, full, record
        return None

    def _finish_timestamp(
        self,
        segment: Segment,
        hit: tuple[Frame, Batch, Record] | None,
        used_index: bool,
        note: str | None,
        stats: ReadStats,
    ) -> LookupResult | None:
        if hit is None:
            return None
        frame, batch, record = hit
        return LookupResult(segment, frame.position, batch, record, used_index, stats, note)

    # --- shared machinery -----------------------------------------------------------------

    @contextlib.contextmanager
    def _open_log(self, segment: Segment) -> Iterator[memoryview]:
        source = self.source(segment)
        try:
            yield source.view()
        finally:
            source.close()

    def _offset_start(self, segment: Segment, view: memoryview, offset: int) -> Start:
        """Where a fetch at ``offset`` starts reading the segment, by the one rule."""
        if segment.index is None:
            return Start(0, False, None, "no offset index")
        try:
            with self._open_index(OffsetIndex, segment.index, segment.base_offset) as index:
                return start_for_offset(index, view, offset, file=str(segment.log))
        except (KafkaFormatError, OSError) as exc:
            return Start(0, False, None, str(exc))

    def _count_entry_batch(self, segment: Segment, start: Start, stats: ReadStats) -> None:
        """The entry's check read its batch whole (the CRC): count it once."""
        batch = start.check.batch if start.check is not None else None
        if batch is not None:
            stats.read_whole_at(str(segment.log), batch.position, batch.size, batch.magic)

    def _safe_last_index_position(self, segment: Segment, view: memoryview) -> int:
        """Where to start reading for the last batch: the last index entry if it holds."""
        return self._offset_start(segment, view, _BEYOND_EVERY_OFFSET).position

    def _headers(
        self, view: memoryview, segment: Segment, start: int, stats: ReadStats
    ) -> Iterator[tuple[Frame, Batch]]:
        """Batch headers from ``start`` on, counted in ``stats``; damage raises."""
        for frame in iter_frames(view, file=str(segment.log), start=start):
            batch = read_header(frame, file=str(segment.log))
            stats.bytes_read += min(frame.size, HEADER_BYTES.get(frame.magic, frame.size))
            stats.bytes_scanned += frame.size
            stats.batches_scanned += 1
            yield frame, batch

    def _decode(self, frame: Frame, segment: Segment, stats: ReadStats) -> Batch:
        options = ReadOptions(verify_crc="report" if self.verify_crc else False)
        batch = read_batch(frame, options, file=str(segment.log))
        batch.topic, batch.partition = self.topic, self.partition
        for record in batch.records or ():
            record.topic, record.partition = self.topic, self.partition
        stats.read_whole(str(segment.log), frame)
        stats.batches_decoded += 1
        return batch

    def _result(
        self,
        view: memoryview,
        segment: Segment,
        hit: tuple[Frame, Batch] | None,
        offset: int,
        used_index: bool,
        note: str | None,
        stats: ReadStats,
    ) -> LookupResult | None:
        if hit is None:
            return None
        frame, _header = hit
        batch = self._decode(frame, segment, stats)
        record = _first_at_or_after(batch, offset)
        if record is None:
            # Compaction can leave a batch whose last records are gone; the next record
            # present is the first one of a later batch.
            for next_frame, _ in self._headers(view, segment, frame.position + frame.size, stats):
                later = self._decode(next_frame, segment, stats)
                record = _first_at_or_after(later, offset)
                if record is not None:
                    return LookupResult(
                        segment, next_frame.position, later, record, used_index, stats, note
                    )
        return LookupResult(segment, frame.position, batch, record, used_index, stats, note)


def _dir_topic_partition(name: str) -> tuple[str | None, int | None]:
    """Topic and partition of a ``topic-N`` directory, or of tiered storage's
    ``topic-N-<topic id>`` (``RemoteTopicPartitionDirectory``); None for any other name."""
    try:
        parsed = parse_partition_dir_name(name)
        return parsed.topic, parsed.partition
    except KafkaFormatError:
        remote = parse_remote_partition_dir_name(name)
        return (remote.topic, remote.partition) if remote is not None else (None, None)


def _entry_label(start: Start) -> str:
    if start.check is None:
        return "offset index"
    entry = start.check.entry
    return f"offset index entry ({entry.offset}, {entry.position})"


def _first_at_or_after(batch: Batch, offset: int) -> Record | None:
    for record in batch.records or ():
        if record.offset >= offset:
            return record
    return None


__all__ = [
    "HEADER_BYTES",
    "LookupResult",
    "Partition",
    "ReadStats",
    "Segment",
    "SnapshotFile",
]
