"""``kafka-format verify``: check segments, indexes and snapshots against each other.

What is checked, file by file (errors fail the run, warnings do not):

* ``.log``: the CRC of every batch and every record decoded (all batches, going on past a
  damaged one whose frame is intact); offsets that go backwards or overlap (error); records
  outside their batch's offset range (error); offsets beyond the 32-bit reach of the segment's
  indexes (error); the first batch below the segment's base offset (error) or above it
  (warning: compaction); a batch reaching into the next segment (error); non-consecutive
  offsets (warning: compaction leaves gaps legitimately); a truncated tail (warning, as Kafka
  stops reading there).
* ``.index``: the start-up sanity checks (indexes.py); each entry against the log, as
  kafka-dump-log's ``--verify-index-only`` does: at a batch boundary whose batch's last
  offset is the entry's offset (``Mismatches in``), not past the end nor inside a batch. An
  entry holding the last offset of a later batch of a multi-batch append (older brokers wrote
  those for replicated appends) is a warning: look-ups still work.
* ``.timeindex``: sanity; each entry as kafka-dump-log's ``TimeIndexDumpErrors``: its offset
  is the last offset of a batch in the log, its timestamp is that batch's max record timestamp,
  timestamps increase. A closed segment whose largest timestamp is not the last entry is a
  warning (time look-ups and retention read that entry).
* ``.txnindex``: sanity; every entry has an ABORT marker of its producer at its last offset,
  and every ABORT marker in the segment has an entry.
* ``.snapshot``: structure and CRC-32C. ``leader-epoch-checkpoint``: format, epochs and start
  offsets increasing.
* Missing ``.index`` / ``.timeindex`` (the broker rebuilds them: warning), index files without
  a ``.log`` (the broker deletes them: warning), untrimmed indexes of closed segments (warning).
* With ``--partitioner``: every keyed record against the partition the Java producer's default
  partitioner gives its key (``partitioner.default_partition``), the partition count being the
  highest ``topic-N`` directory found + 1 unless ``--partitions`` says otherwise. Misplaced
  records are warnings (a custom partitioner, an explicit partition or a topic that grew are
  legitimate), errors with ``--partitioner-strict``. Internal topics (``__*``) are skipped:
  the coordinators place their keys by Java's ``String.hashCode``, not murmur2.
"""

from __future__ import annotations

import itertools
from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import CrcMismatchError, FramingError, KafkaFormatError
from ..files.checkpoints import LEADER_EPOCH_CHECKPOINT, read_leader_epoch_checkpoint
from ..files.indexes import OffsetIndex, TimeIndex
from ..files.names import (
    OFFSET_WIDTH,
    FileKind,
    parse_segment_file_name,
    segment_file_name,
)
from ..files.snapshot import read_producer_snapshot
from ..files.txnindex import ABORTED_TXN_SIZE, TransactionIndex
from ..format.batches import ReadOptions, read_batch, read_header
from ..format.framing import iter_frames
from ..log.partition import Partition, Segment
from ..model import Batch, ControlType, TruncatedTail
from ..progress import Progress
from ..read.sources import LogInput, partition_dirs, resolve
from .placement import PartitionPlacement, Placements
from .report import MAX_LISTED_GAPS, FileReport, Severity, VerifyReport

_INT32_MAX = (1 << 31) - 1


# --- the log ----------------------------------------------------------------------------------


@dataclass(slots=True)
class BatchInfo:
    """What the index checks need to know of a batch, kept instead of its records."""

    position: int
    size: int
    #: The first record's offset (for a compressed v0/v1 wrapper, not its stored offset).
    base_offset: int
    last_offset: int
    #: Largest record timestamp (kafka-dump-log's "log timestamp"); the header's when the
    #: records could not be decoded.
    max_timestamp: int | None
    producer_id: int
    is_control: bool
    control_type: int | None


@dataclass(slots=True)
class ScannedLog:
    """A log read from end to end: its batches and where reading stopped."""

    path: Path
    size: int
    batches: list[BatchInfo] = field(default_factory=list)
    #: Where the last readable batch ends (the size, unless a tail or damage stopped us).
    end: int = 0
    has_gaps: bool = False
    _positions: list[int] = field(default_factory=list, repr=False)
    _last_offsets: list[int] = field(default_factory=list, repr=False)

    def index(self) -> None:
        self._positions = [b.position for b in self.batches]
        self._last_offsets = [b.last_offset for b in self.batches]

    def at_position(self, position: int) -> BatchInfo | None:
        n = bisect_left(self._positions, position)
        if n < len(self._positions) and self._positions[n] == position:
            return self.batches[n]
        return None

    def containing_position(self, position: int) -> BatchInfo | None:
        n = bisect_right(self._positions, position) - 1
        if n >= 0 and position < self.batches[n].position + self.batches[n].size:
            return self.batches[n]
        return None

    def first_ending_at_or_after(self, offset: int) -> BatchInfo | None:
        """The batch a reader finds for ``offset`` (``searchForOffsetWithSize``)."""
        n = bisect_left(self._last_offsets, offset)
        return self.batches[n] if n < len(self.batches) else None


def scan_log(
    path: Path,
    report: FileReport,
    *,
    base_offset: int | None,
    next_base_offset: int | None = None,
    progress: Progress | None = None,
    placement: PartitionPlacement | None = None,
) -> ScannedLog:
    """Read every batch of a log file, decode its records, and report what is wrong;
    ``placement`` is shown the data records of every batch whose CRC holds."""
    log = LogInput(str(path), path=path)
    scanned = ScannedLog(path, path.stat().st_size)
    if progress is not None:
        progress.begin_file(scanned.size)
    tails: list[TruncatedTail] = []
    gaps: list[tuple[int, int, int]] = []  # (offset, next offset, position of the batch)
    gap_count = 0
    previous: int | None = None  # last record offset seen (the batch's when undecoded)
    last_batch: int | None = None  # last offset of the previous batch
    records = 0
    options = ReadOptions(verify_crc="report")
    name = str(path)
    in_segment = base_offset is not None
    with log.open() as view:
        try:
            for frame in iter_frames(view, file=name, tails=tails):
                scanned.end = frame.position + frame.size
                if progress is not None:
                    progress.at(scanned.end)
                try:
                    batch = read_batch(frame, options, file=name)
                except KafkaFormatError as exc:
                    report.from_exception("batch", exc)
                    try:
                        batch = read_header(frame, file=name)
                    except KafkaFormatError:
                        continue
                if batch.crc_valid is False:
                    report.from_exception(
                        "crc",
                        CrcMismatchError(
                            batch.crc,
                            batch.computed_crc or 0,
                            algorithm="crc32c" if batch.magic >= 2 else "crc32",
                            position=batch.position,
                            base_offset=batch.base_offset,
                        ),
                    )
                info = _batch_info(batch)
                _check_batch_offsets(
                    report, batch, last_batch, base_offset, next_base_offset, in_segment
                )
                if batch.records:
                    stamps = [r.timestamp for r in batch.records if r.timestamp is not None]
                    if stamps:
                        info.max_timestamp = max(stamps)
                    if batch.is_control and batch.records[0].control is not None:
                        info.control_type = batch.records[0].control.type
                    # v0/v1 wrappers carry their last inner offset: inner offsets lie below.
                    lowest = batch.base_offset if batch.magic >= 2 else None
                    in_batch = None
                    for record in batch.records:
                        if previous is not None and record.offset > previous + 1:
                            gap_count += 1
                            if len(gaps) < MAX_LISTED_GAPS:
                                gaps.append((previous, record.offset, batch.position))
                        if record.offset > batch.last_offset or (
                            lowest is not None and record.offset < lowest
                        ):
                            report.error(
                                "offsets",
                                f"record offset {record.offset} is outside its batch's range "
                                f"{batch.base_offset}..{batch.last_offset}",
                                batch.position,
                            )
                        elif in_batch is not None and record.offset <= in_batch:
                            report.error(
                                "offsets",
                                f"record offset {record.offset} does not follow offset "
                                f"{in_batch} (offsets must increase)",
                                batch.position,
                            )
                        previous = in_batch = record.offset
                    records += len(batch.records)
                    if (
                        placement is not None
                        and not batch.is_control
                        and batch.crc_valid is not False
                    ):
                        placement.check(batch, name)
                else:
                    previous = batch.last_offset
                last_batch = batch.last_offset
                scanned.batches.append(info)
        except FramingError as exc:
            report.from_exception("framing", exc)
    for tail in tails:
        report.warning(
            "truncated-tail",
            f"found {tail.size} invalid bytes at the end (a partial batch: Kafka stops "
            "reading there)",
            tail.position,
        )
    if gap_count:
        scanned.has_gaps = True
        first = ", ".join(f"{a} is followed by {b}" for a, b, _ in gaps[:3])
        report.add(
            "warning",
            "non-consecutive",
            f"non-consecutive offsets: {gap_count} gap{'s' * (gap_count > 1)} ({first}"
            f"{', ...' if gap_count > 3 else ''}); compaction leaves these",
            gaps[0][2],
            [{"offset": a, "next": b, "position": p} for a, b, p in gaps],
        )
    if base_offset is not None and scanned.batches:
        first_batch = scanned.batches[0]
        if first_batch.base_offset > base_offset:
            report.warning(
                "base-offset",
                f"the first batch starts at offset {first_batch.base_offset}, after the "
                f"segment's base offset {base_offset} (compaction or a moved log start)",
                first_batch.position,
            )
    report.counts.update(batches=len(scanned.batches), records=records, bytes=scanned.size)
    scanned.index()
    return scanned


def scan_headers(path: Path, *, progress: Progress | None = None) -> ScannedLog:
    """The batches of a log file from their headers alone, no records decoded: what the offset
    index checks need (positions, sizes, last offsets), read as ``kafka-dump-log`` reads a log
    for an index. A v0/v1 wrapper's ``base_offset`` is its stored (last inner) offset and every
    ``max_timestamp`` the header's; :func:`decode_max_timestamps` gives the records' for the
    batches that need them. Damage is not reported: reading stops where framing fails."""
    scanned = ScannedLog(path, path.stat().st_size)
    if progress is not None:
        progress.begin_file(scanned.size)
    name = str(path)
    with LogInput(name, path=path).open() as view:
        try:
            for frame in iter_frames(view, file=name, tails=[]):
                scanned.end = frame.position + frame.size
                if progress is not None:
                    progress.at(scanned.end)
                try:
                    batch = read_header(frame, file=name)
                except KafkaFormatError:
                    continue
                scanned.batches.append(_batch_info(batch))
        except FramingError:
            pass
    scanned.index()
    return scanned


def decode_max_timestamps(scanned: ScannedLog, batches: Iterable[BatchInfo]) -> None:
    """Decode ``batches`` of a :func:`scan_headers` log and set their ``max_timestamp`` and
    ``base_offset`` from their records, as :func:`scan_log` sets them (Kafka's dump tool, too,
    decodes only the batch an index entry points at)."""
    wanted = {id(b): b for b in batches}
    if not wanted:
        return
    import pyarrow as pa
    import pyarrow.compute as pc

    from ..read.columnar import read_table  # numba: only where records are wanted

    name = str(scanned.path)
    options = ReadOptions(verify_crc="report")
    with LogInput(name, path=scanned.path).open() as view:
        for info in wanted.values():
            if not info.is_control:  # the fast path; control records are no data rows
                try:
                    table = read_table(
                        view[info.position : info.position + info.size],
                        verify_crc=False,
                        threads=1,
                    )
                except KafkaFormatError:
                    continue
                if table.num_rows:
                    largest = pc.max(table.column("timestamp").cast(pa.int64())).as_py()
                    if largest is not None:
                        info.max_timestamp = largest // 1000
                    info.base_offset = table.column("offset")[0].as_py()
                continue
            frame = next(iter_frames(view, file=name, start=info.position, tails=[]), None)
            if frame is None:
                continue
            try:
                batch = read_batch(frame, options, file=name)
            except KafkaFormatError:
                continue
            stamps = [r.timestamp for r in batch.records if r.timestamp is not None]
            if stamps:
                info.max_timestamp = max(stamps)
            info.base_offset = batch.first_offset


def _batch_info(batch: Batch) -> BatchInfo:
    return BatchInfo(
        position=batch.position,
        size=batch.size,
        base_offset=batch.first_offset,
        last_offset=batch.last_offset,
        max_timestamp=batch.max_timestamp,
        producer_id=batch.producer_id,
        is_control=batch.is_control,
        control_type=None,
    )


def _check_batch_offsets(
    report: FileReport,
    batch: Batch,
    previous: int | None,
    base_offset: int | None,
    next_base_offset: int | None,
    in_segment: bool,
) -> None:
    first = batch.first_offset
    if batch.last_offset < first:
        report.error(
            "offsets",
            f"last offset {batch.last_offset} is below the first offset {first}",
            batch.position,
        )
    if previous is not None and first <= previous:
        # In a segment this is damage; a file of batches collected elsewhere (a fetch
        # response, a test fixture) may legitimately start again at 0.
        report.add(
            "error" if in_segment else "warning",
            "offsets",
            f"batch offsets {first}..{batch.last_offset} do not follow the "
            f"previous offset {previous} (offsets must increase)",
            batch.position,
        )
    if base_offset is not None:
        if first < base_offset:
            report.error(
                "base-offset",
                f"batch base offset {first} is below the segment's base offset {base_offset}",
                batch.position,
            )
        elif batch.last_offset - base_offset > _INT32_MAX:
            report.error(
                "offsets",
                f"last offset {batch.last_offset} is more than 2^31-1 above the segment's "
                f"base offset {base_offset}: the indexes cannot hold it",
                batch.position,
            )
    if next_base_offset is not None and batch.last_offset >= next_base_offset:
        report.error(
            "base-offset",
            f"batch offsets {batch.base_offset}..{batch.last_offset} reach the next segment, "
            f"which starts at offset {next_base_offset}",
            batch.position,
        )


# --- indexes ----------------------------------------------------------------------------------


def _open_index(cls, path: Path, base_offset: int, report: FileReport, *, is_last: bool):
    try:
        index = cls.open(path, base_offset, strict=False)
    except (KafkaFormatError, OSError) as exc:
        if isinstance(exc, KafkaFormatError):
            report.from_exception("index-sanity", exc)
        else:
            report.error("io", exc.strerror or str(exc))
        return None
    if index.problem is not None:
        report.from_exception("index-sanity", index.problem)
    if index.zero_tail_slots and not is_last:
        report.warning(
            "untrimmed",
            f"{index.zero_tail_slots} zero-filled slots after the entries: the index of a "
            "closed segment was not trimmed (unclean shutdown?)",
            index.length - index.zero_tail_slots * index.ENTRY_SIZE,
        )
    return index


def check_offset_index(
    path: Path, base_offset: int, log: ScannedLog | None, report: FileReport, *, is_last: bool
) -> None:
    index = _open_index(OffsetIndex, path, base_offset, report, is_last=is_last)
    if index is None:
        return
    with index:
        entries = index.written_entries()
    report.counts["entries"] = len(entries)
    if log is None:
        return
    for n, (relative, position) in enumerate(entries):
        offset = base_offset + relative
        at = n * OffsetIndex.ENTRY_SIZE
        label = f"entry {n} (offset {offset}, position {position})"
        if position >= log.end:
            past = "the end of the log" if log.end == log.size else "the last readable batch"
            report.error("index-entry", f"{label} points past {past} ({log.end} bytes)", at)
            continue
        batch = log.at_position(position)
        if batch is None:
            inside = log.containing_position(position)
            where = (
                f"inside the batch at {inside.position} (offsets "
                f"{inside.base_offset}..{inside.last_offset})"
                if inside is not None
                else "where no batch starts"
            )
            report.error("index-entry", f"{label} points {where}, not at a batch boundary", at)
            continue
        if batch.last_offset == offset:
            continue
        next_position = entries[n + 1][1] if n + 1 < len(entries) else log.end
        if batch.last_offset < offset and _ends_a_later_batch(log, batch, offset, next_position):
            report.warning(
                "index-entry",
                f"{label}: the batch there ends at offset {batch.last_offset}; the entry's "
                "offset ends a later batch of the same append (written by brokers before "
                "per-batch indexing; look-ups still work)",
                at,
            )
            continue
        report.error(
            "index-entry",
            f"Mismatch: index offset {offset}, log offset {batch.last_offset} ({label})",
            at,
        )


def _ends_a_later_batch(log: ScannedLog, batch: BatchInfo, offset: int, limit: int) -> bool:
    """Does ``offset`` end a batch after ``batch`` and before the next entry's position?"""
    later = log.first_ending_at_or_after(offset)
    return (
        later is not None
        and later.last_offset == offset
        and batch.position < later.position < limit
    )


def check_time_index(
    path: Path, base_offset: int, log: ScannedLog | None, report: FileReport, *, is_last: bool
) -> None:
    index = _open_index(TimeIndex, path, base_offset, report, is_last=is_last)
    if index is None:
        return
    with index:
        entries = index.written_entries()
    report.counts["entries"] = len(entries)
    previous = -1
    for n, (timestamp, relative) in enumerate(entries):
        offset = base_offset + relative
        at = n * TimeIndex.ENTRY_SIZE
        label = f"entry {n} (timestamp {timestamp}, offset {offset})"
        if previous >= timestamp:
            report.error(
                "timeindex-order",
                f"out of order timestamp: index timestamp {timestamp}, previously indexed "
                f"timestamp {previous} ({label})",
                at,
            )
        previous = max(previous, timestamp)
        if log is None:
            continue
        batch = log.first_ending_at_or_after(offset)
        if batch is None:
            report.error("timeindex-entry", f"{label}: indexed offset not found in the log", at)
            continue
        if batch.last_offset != offset:
            report.error(
                "timeindex-entry",
                f"{label}: indexed offset is not the last offset of a batch (the batch at "
                f"{batch.position} holds {batch.base_offset}..{batch.last_offset})",
                at,
            )
            continue
        if batch.max_timestamp is not None and batch.max_timestamp != timestamp:
            report.error(
                "timeindex-entry",
                f"timestamp mismatch: index timestamp {timestamp}, log timestamp "
                f"{batch.max_timestamp} (batch at {batch.position}, {label})",
                at,
            )
    if log is not None and not is_last and log.batches:
        largest = max(
            (b.max_timestamp for b in log.batches if b.max_timestamp is not None), default=-1
        )
        last = entries[-1][0] if entries else -1
        if largest >= 0 and last < largest:
            report.warning(
                "timeindex-last",
                f"the segment's largest timestamp {largest} is not its last entry ({last}): "
                "time look-ups and retention use that entry (segment not closed cleanly?)",
                len(entries) * TimeIndex.ENTRY_SIZE,
            )


def check_txn_index(
    path: Path | None,
    base_offset: int,
    log: ScannedLog | None,
    report: FileReport | None,
    log_report: FileReport | None,
) -> None:
    """Entries against the ABORT markers of the segment, both ways."""
    entries = []
    if path is not None and report is not None:
        try:
            index = TransactionIndex.open(path, base_offset, strict=False)
        except (KafkaFormatError, OSError) as exc:
            if isinstance(exc, KafkaFormatError):
                report.from_exception("index-sanity", exc)
            else:
                report.error("io", exc.strerror or str(exc))
            return
        if index.problem is not None:
            report.from_exception("index-sanity", index.problem)
        entries = list(index.entries)
        report.counts["entries"] = len(entries)
    if log is None:
        return
    by_start = {b.base_offset: b for b in log.batches}
    listed = {(t.producer_id, t.last_offset) for t in entries}
    for n, txn in enumerate(entries):
        at = n * ABORTED_TXN_SIZE
        label = (
            f"entry {n} (producer {txn.producer_id}, offsets {txn.first_offset}..{txn.last_offset})"
        )
        marker = by_start.get(txn.last_offset)
        if (
            marker is not None
            and marker.is_control
            and marker.control_type == ControlType.ABORT
            and marker.producer_id == txn.producer_id
        ):
            continue
        covering = log.first_ending_at_or_after(txn.last_offset)
        if covering is not None and covering.base_offset <= txn.last_offset:
            what = (
                f"a {_control_name(covering.control_type)} marker of producer "
                f"{covering.producer_id}"
                if covering.is_control
                else f"a data batch of producer {covering.producer_id}"
            )
            report.error(
                "txnindex",
                f"{label}: no ABORT marker of producer {txn.producer_id} at offset "
                f"{txn.last_offset}; the log has {what} there (batch at {covering.position})",
                at,
            )
        elif log.has_gaps:
            report.warning(
                "txnindex",
                f"{label}: offset {txn.last_offset} is not in the log (removed by the cleaner?)",
                at,
            )
        else:
            report.error(
                "txnindex",
                f"{label}: no ABORT marker at offset {txn.last_offset} in the log",
                at,
            )
    if log_report is None:
        return
    index_name = (
        path.name if path is not None else segment_file_name(base_offset, FileKind.TXN_INDEX)
    )
    for batch in log.batches:
        if batch.is_control and batch.control_type == ControlType.ABORT:
            if (batch.producer_id, batch.base_offset) in listed:
                continue
            missing = "has no entry in" if path is not None else "but there is no"
            log_report.error(
                "txnindex",
                f"ABORT marker of producer {batch.producer_id} at offset {batch.base_offset} "
                f"{missing} {index_name}",
                batch.position,
            )


def _control_name(control_type: int | None) -> str:
    if control_type is None:
        return "control"
    try:
        return ControlType(control_type).name
    except ValueError:
        return f"control type {control_type}"


# --- other files ----------------------------------------------------------------------------


def check_snapshot(path: Path, report: FileReport) -> None:
    try:
        snapshot = read_producer_snapshot(path)
    except KafkaFormatError as exc:
        report.from_exception("snapshot", exc)
        return
    report.counts["entries"] = len(snapshot.entries)
    if snapshot.trailing_bytes:
        report.warning(
            "snapshot",
            f"{snapshot.trailing_bytes} bytes after the last entry (Kafka ignores them)",
            path.stat().st_size - snapshot.trailing_bytes,
        )


def check_leader_epochs(path: Path, report: FileReport) -> None:
    try:
        entries = read_leader_epoch_checkpoint(path)
    except KafkaFormatError as exc:
        report.from_exception("checkpoint", exc)
        return
    report.counts["entries"] = len(entries)
    for previous, entry in itertools.pairwise(entries):
        if entry.epoch <= previous.epoch or entry.start_offset < previous.start_offset:
            report.error(
                "checkpoint",
                f"epoch {entry.epoch} at offset {entry.start_offset} does not follow epoch "
                f"{previous.epoch} at offset {previous.start_offset} (both must increase)",
            )


# --- partitions and paths -------------------------------------------------------------------


def verify_partition(
    path: str | Path,
    report: VerifyReport,
    *,
    progress: Progress | None = None,
    placements: Placements | None = None,
) -> None:
    partition = Partition.open(path)
    placement = placements.for_directory(Path(path), report) if placements else None
    for n, segment in enumerate(partition.segments):
        following = partition.segments[n + 1] if n + 1 < len(partition.segments) else None
        verify_segment(
            segment,
            report,
            next_base_offset=following.base_offset if following else None,
            is_last=following is None,
            progress=progress,
            placement=placement,
        )
    if placement is not None:
        placement.finish()
    for orphan in partition.orphans:
        report.new(orphan, _kind_of(orphan)).warning(
            "orphan", "no .log segment with this base offset (the broker deletes such files)"
        )
    for snapshot in partition.snapshots:
        check_snapshot(snapshot.path, report.new(snapshot.path, "snapshot"))
    if partition.leader_epoch_checkpoint is not None:
        check_leader_epochs(
            partition.leader_epoch_checkpoint,
            report.new(partition.leader_epoch_checkpoint, LEADER_EPOCH_CHECKPOINT),
        )


def verify_segment(
    segment: Segment,
    report: VerifyReport,
    *,
    next_base_offset: int | None = None,
    is_last: bool = True,
    progress: Progress | None = None,
    placement: PartitionPlacement | None = None,
) -> None:
    """Check a segment's log and indexes, each against the log."""
    log_report = report.new(segment.log, "log")
    log = None
    if segment.log.is_file():
        log = scan_log(
            segment.log,
            log_report,
            base_offset=segment.base_offset,
            next_base_offset=next_base_offset,
            progress=progress,
            placement=placement,
        )
    if segment.index is not None:
        check_offset_index(
            segment.index,
            segment.base_offset,
            log,
            report.new(segment.index, "index"),
            is_last=is_last,
        )
    else:
        log_report.warning(
            "missing-index",
            f"no {segment_file_name(segment.base_offset, FileKind.INDEX)} (the broker "
            "rebuilds it at start-up; look-ups scan the segment)",
        )
    if segment.timeindex is not None:
        check_time_index(
            segment.timeindex,
            segment.base_offset,
            log,
            report.new(segment.timeindex, "timeindex"),
            is_last=is_last,
        )
    else:
        log_report.warning(
            "missing-index",
            f"no {segment_file_name(segment.base_offset, FileKind.TIME_INDEX)} (the broker "
            "rebuilds it at start-up)",
        )
    txn_report = report.new(segment.txnindex, "txnindex") if segment.txnindex else None
    check_txn_index(segment.txnindex, segment.base_offset, log, txn_report, log_report)


def _kind_of(path: Path) -> str:
    if path.name == LEADER_EPOCH_CHECKPOINT:
        return LEADER_EPOCH_CHECKPOINT
    parsed = parse_segment_file_name(path.name)
    if parsed is not None:
        return "snapshot" if parsed.kind is FileKind.PRODUCER_SNAPSHOT else parsed.kind.value
    suffix = path.suffix.lstrip(".")
    if suffix in {k.value for k in FileKind}:
        return "snapshot" if suffix == "snapshot" else suffix
    return "log"


def _base_offset_of(path: Path) -> int | None:
    parsed = parse_segment_file_name(path.name)
    if parsed is not None:
        return parsed.base_offset
    # Renamed copies such as orders-0.00000000000000000120.index keep the offset last, in
    # Kafka's 20 digits (a shorter number is more likely part of some other name).
    stem = path.name.rsplit(".", 1)[0]
    last = stem.rsplit(".", 1)[-1]
    return int(last) if last.isdigit() and len(last) == OFFSET_WIDTH else None


def verify_file(
    path: Path,
    report: VerifyReport,
    *,
    progress: Progress | None = None,
    placements: Placements | None = None,
) -> None:
    """One file given on its own, checked against the .log beside it where that exists."""
    kind = _kind_of(path)
    if kind == LEADER_EPOCH_CHECKPOINT:
        check_leader_epochs(path, report.new(path, kind))
        return
    if kind == "snapshot":
        check_snapshot(path, report.new(path, kind))
        return
    base = _base_offset_of(path)
    if kind == "log":
        log_report = report.new(path, "log")
        placement = placements.for_directory(path.parent, report) if placements else None
        scan_log(path, log_report, base_offset=base, progress=progress, placement=placement)
        if placement is not None:
            placement.finish()
        return
    file_report = report.new(path, kind)
    if base is None:
        file_report.error("name", "no base offset in the file name: cannot check its entries")
        return
    log_path = path.with_name(segment_file_name(base, FileKind.LOG))
    if not log_path.is_file():
        sibling = path.with_name(path.name[: -len(path.suffix)] + ".log")
        log_path = sibling if sibling.is_file() else log_path
    log = None
    if log_path.is_file():
        log = scan_log(
            log_path, FileReport(str(log_path), "log"), base_offset=base, progress=progress
        )
    else:
        file_report.warning("no-log", f"no {log_path.name} beside it: entries not checked")
    if kind == "index":
        check_offset_index(path, base, log, file_report, is_last=True)
    elif kind == "timeindex":
        check_time_index(path, base, log, file_report, is_last=True)
    else:
        check_txn_index(path, base, log, file_report, None)


def verify_paths(
    paths: Sequence[str | Path],
    *,
    progress: Progress | None = None,
    partitioner: bool = False,
    partitions: Mapping[str | None, int] | int | None = None,
    partitioner_severity: Severity = "warning",
) -> VerifyReport:
    """Verify partition directories, log directories of them, and single files;
    ``progress`` hears of every batch read (see :func:`log_bytes`).

    ``partitioner`` also checks where keyed records sit (:class:`Placements`); ``partitions``
    gives partition counts and implies ``partitioner``.
    """
    report = VerifyReport()
    placements = None
    if partitioner or partitions is not None:
        placements = Placements(paths, partitions, severity=partitioner_severity)
        report.placement = placements.topics
    for raw in paths:
        path = Path(raw)
        try:
            if path.is_dir():
                partition = Partition.open(path)
                if partition.segments or partition.snapshots or partition.orphans:
                    verify_partition(path, report, progress=progress, placements=placements)
                    continue
                subs = partition_dirs(path)
                if not subs:
                    report.new(path, "directory").error(
                        "missing", "no .log segments here, nor partition directories (topic-N)"
                    )
                for sub in subs:
                    verify_partition(sub, report, progress=progress, placements=placements)
            elif path.exists():
                verify_file(path, report, progress=progress, placements=placements)
            else:
                report.new(path, "missing").error("missing", "no such file or directory")
        except KafkaFormatError as exc:
            report.new(exc.file or path, "error").from_exception("read", exc)
        except OSError as exc:
            report.new(getattr(exc, "filename", None) or path, "error").error(
                "io", exc.strerror or str(exc)
            )
    return report


def log_bytes(paths: Sequence[str | Path]) -> tuple[int, int]:
    """Size and number of the ``.log`` files :func:`verify_paths` reads, as far as a quick
    look can tell: the total its progress line counts towards."""
    total = files = 0
    for raw in paths:
        path = Path(raw)
        try:
            if not (path.is_dir() or _kind_of(path) == "log"):
                continue  # an index or snapshot given alone: not counted (small)
            inputs = resolve(path)
            for log in inputs:
                if log.path is not None:
                    total += log.path.stat().st_size
                    files += 1
        except (KafkaFormatError, OSError):
            continue  # verify_paths reports it
    return total, files
