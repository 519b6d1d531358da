"""What Kafka's log cleaner would do to a partition: its dirty ratio, the segments it would
clean, and the records it would keep.

Checked against Kafka's sources (``LogCleaner.scala``: ``Cleaner.doClean``, ``cleanSegments``,
``cleanInto``, ``shouldRetainRecord``, ``groupSegmentsBySize``, ``buildOffsetMap``,
``CleanedTransactionMetadata``; ``LogCleanerManager.scala``: ``cleanableOffsets``,
``calculateCleanableBytes``, ``grabFilthiestCompactedLog``, ``LogToClean``;
``MemoryRecords.filterTo``) and the first passes of ``LogCleanerTest``'s scenarios:

* **Range.** The first dirty offset is the partition's ``cleaner-offset-checkpoint`` entry (in
  the log dir), else the log start offset; reset to the log start when it lies below it or
  beyond the log end. Nothing at or past the first uncleanable offset is touched: the smallest
  of the last stable offset (the first offset of the earliest open transaction, or the high
  watermark from ``replication-offset-checkpoint``), the active segment's base offset, and
  with ``min.compaction.lag.ms`` the first dirty segment whose largest timestamp is newer than
  ``now - lag``; then rounded down to the base offset of the segment holding it.
* **Dirty ratio.** Clean bytes: segments whose base offset is below the first dirty offset.
  Cleanable bytes: segments from the one holding the first dirty offset up to the first
  uncleanable one (a segment holding a mid-segment checkpoint counts in both, as in Kafka).
  The log is cleaned when ``ratio > min.cleanable.dirty.ratio`` or ``max.compaction.lag.ms``
  has passed for a dirty segment's first batch.
* **Offset map.** Key -> last offset, from the data records of the dirty range (offset >= the
  first dirty offset) that have a key and are not in an aborted transaction.
* **Cleaning** rewrites every segment from the start of the log to the first uncleanable offset
  (already clean segments too), in groups of at most ``segment.bytes`` / ``segment.index.bytes``.
  A data record survives when its offset is >= the map's offset for its key (keys not in the
  map survive), it has a key (Kafka drops null-key records: ``invalidMessage``), and, if it is
  a tombstone, its delete horizon has not passed: for v2 batches the horizon is stored in the
  batch (attribute bit 6, in ``baseTimestamp``); a tombstone in a batch **without** a horizon
  is kept and the batch gets ``now + delete.retention.ms`` (``filterTo``), so it goes in a
  later pass; a tombstone in a batch whose horizon is ``<= now`` is removed. v0/v1 tombstones
  use the older rule: kept while the segment's last-modified time is after the last clean
  segment's last-modified time minus ``delete.retention.ms``.
* **Transactions** (``CleanedTransactionMetadata``): batches of aborted transactions lose all
  their records; an ABORT marker is kept while data of its transaction was seen in this pass,
  a COMMIT marker while data of its producer's transaction was seen; otherwise the marker is
  removable, and removed once its batch's delete horizon has passed (the horizon is set the
  first time the cleaner finds it removable).
* **Empty batches** (``checkBatchRetention``): a batch whose records are all removed is
  deleted, except the batch holding an active producer's last data offset (or, when it has
  none, a marker of its current epoch), and the batch ending right at the first uncleanable
  offset: those stay as empty v2 batches, to keep the producer's sequence and the log's last
  offset.

Active producers are rebuilt from the log's batch headers as ``ProducerStateManager`` loads
them; a producer idle for ``producer.id.expiration.ms`` at ``now`` (and not in a transaction)
has expired. Not modelled: an offset map too small for the dirty range (Kafka then cleans in
several rounds; we assume ``log.cleaner.dedupe.buffer.size`` holds every key), key hash
collisions (Kafka keys its map by MD5), and the cleaner's I/O buffer sizes.
"""

from __future__ import annotations

import contextlib
import os
import time
from bisect import bisect_right
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from ..errors import KafkaFormatError
from ..files.checkpoints import (
    CLEANER_OFFSET_CHECKPOINT,
    REPLICATION_OFFSET_CHECKPOINT,
    TopicPartition,
    read_offset_checkpoint,
)
from ..model import Batch, ControlType, Record, Report
from ..read.reader import iter_batches
from ..read.sources import partition_dirs
from ..read.transactions import collect_aborted
from .partition import Partition, Segment

__all__ = [
    "DEFAULT_DELETE_RETENTION_MS",
    "DEFAULT_MIN_CLEANABLE_DIRTY_RATIO",
    "FLAG_ABORTED",
    "FLAG_TOMBSTONES_EXPIRED",
    "LONG_MAX",
    "BatchOutcome",
    "CleanerConfig",
    "CleanerFacts",
    "CompactionResult",
    "DirtyRatio",
    "RemovedRecord",
    "SegmentInfo",
    "cleaner_facts",
    "compact",
    "dirty_ratio",
    "partitions_of",
]

LONG_MAX = (1 << 63) - 1
#: ``delete.retention.ms`` and ``min.cleanable.dirty.ratio`` defaults.
DEFAULT_DELETE_RETENTION_MS = 86_400_000
DEFAULT_MIN_CLEANABLE_DIRTY_RATIO = 0.5
_INT_MAX = (1 << 31) - 1

#: Bits of :attr:`CleanerFacts.flagged`: the batch is discarded as aborted data; its
#: tombstones are past their delete horizon.
FLAG_ABORTED = 1
FLAG_TOMBSTONES_EXPIRED = 2

NullKeys = Literal["drop", "keep"]


@dataclass(slots=True, frozen=True)
class CleanerConfig:
    """The topic (and broker) settings the cleaner reads, with Kafka's defaults."""

    delete_retention_ms: int = DEFAULT_DELETE_RETENTION_MS  # delete.retention.ms
    min_cleanable_dirty_ratio: float = DEFAULT_MIN_CLEANABLE_DIRTY_RATIO
    min_compaction_lag_ms: int = 0  # min.compaction.lag.ms
    max_compaction_lag_ms: int = LONG_MAX  # max.compaction.lag.ms
    segment_bytes: int = 1 << 30  # segment.bytes: bound of a cleaning group's log bytes
    max_index_bytes: int = 10 << 20  # segment.index.bytes: bound of its index bytes
    #: producer.id.expiration.ms (broker); None: producers never expire.
    producer_id_expiration_ms: int | None = 86_400_000


# --- results --------------------------------------------------------------------------------


@dataclass(slots=True, frozen=True)
class SegmentInfo:
    """A segment as the cleaner sees it.

    ``role``: ``clean`` (below the first dirty offset), ``dirty`` (counted in the cleanable
    bytes), ``uncleanable`` (at or past the first uncleanable offset) or ``active``.
    """

    base_offset: int
    path: Path
    size: int
    index_bytes: int
    time_index_bytes: int
    largest_timestamp: int
    last_modified_ms: int
    role: str
    #: Which cleaning group rewrites it (index into :attr:`DirtyRatio.groups`); None if none.
    group: int | None = None


@dataclass(slots=True)
class DirtyRatio:
    """``LogToClean`` of one partition: the range the cleaner would clean, and whether it
    would pick the partition now."""

    path: Path
    topic: str | None
    partition: int | None
    now_ms: int
    log_start_offset: int
    log_end_offset: int
    high_watermark: int
    last_stable_offset: int
    #: The partition's ``cleaner-offset-checkpoint`` entry (or the override); None if none.
    checkpoint: int | None
    first_dirty_offset: int
    #: The checkpoint was below the log start or beyond the log end (Kafka resets it).
    checkpoint_reset: bool
    first_uncleanable_offset: int
    #: What bounds the cleanable range: "last stable offset", "active segment",
    #: "min.compaction.lag.ms", "first dirty offset".
    uncleanable_reasons: list[str]
    clean_bytes: int
    cleanable_bytes: int
    min_cleanable_ratio: float
    #: How long ``max.compaction.lag.ms`` has been exceeded (0: not).
    compaction_delay_ms: int
    segments: list[SegmentInfo]
    #: Base offsets of the segments each cleaning group rewrites into one, in order.
    groups: list[list[int]] = field(default_factory=list)

    @property
    def total_bytes(self) -> int:
        return self.clean_bytes + self.cleanable_bytes

    @property
    def ratio(self) -> float:
        """``cleanableBytes / (cleanBytes + cleanableBytes)``; 0 for an empty log."""
        return self.cleanable_bytes / self.total_bytes if self.total_bytes else 0.0

    @property
    def needs_compaction_now(self) -> bool:
        return self.compaction_delay_ms > 0

    @property
    def would_clean(self) -> bool:
        """Whether ``grabFilthiestCompactedLog`` would pick this partition."""
        if self.total_bytes <= 0:
            return False
        return (
            self.needs_compaction_now and self.cleanable_bytes > 0
        ) or self.ratio > self.min_cleanable_ratio

    @property
    def cleans(self) -> bool:
        """Whether a cleaning pass would rewrite anything (a non-empty dirty range)."""
        return bool(self.groups)

    @property
    def end_offset(self) -> int:
        """The cleaner checkpoint after the pass (unchanged when nothing is cleaned)."""
        return self.first_uncleanable_offset if self.cleans else self.first_dirty_offset

    def to_json(self) -> dict:
        return {
            "path": str(self.path),
            "topic": self.topic,
            "partition": self.partition,
            "nowMs": self.now_ms,
            "logStartOffset": self.log_start_offset,
            "logEndOffset": self.log_end_offset,
            "highWatermark": self.high_watermark,
            "lastStableOffset": self.last_stable_offset,
            "checkpoint": self.checkpoint,
            "firstDirtyOffset": self.first_dirty_offset,
            "checkpointReset": self.checkpoint_reset,
            "firstUncleanableOffset": self.first_uncleanable_offset,
            "uncleanableReasons": self.uncleanable_reasons,
            "cleanBytes": self.clean_bytes,
            "cleanableBytes": self.cleanable_bytes,
            "totalBytes": self.total_bytes,
            "dirtyRatio": self.ratio,
            "minCleanableDirtyRatio": self.min_cleanable_ratio,
            "compactionDelayMs": self.compaction_delay_ms,
            "wouldClean": self.would_clean,
            "endOffset": self.end_offset,
            "segments": [
                {
                    "baseOffset": s.base_offset,
                    "file": s.path.name,
                    "size": s.size,
                    "largestTimestamp": s.largest_timestamp,
                    "role": s.role,
                    "group": s.group,
                }
                for s in self.segments
            ],
            "groups": self.groups,
        }


@dataclass(slots=True, frozen=True)
class RemovedRecord:
    """A data record the pass removes, and why: ``superseded`` (a later record of its key is
    in the dirty range), ``tombstone`` (its delete horizon has passed), ``aborted`` (an
    aborted transaction's data), ``null key``."""

    record: Record
    reason: str


@dataclass(slots=True, frozen=True)
class BatchOutcome:
    """What the pass does to one batch.

    ``action``: ``kept`` (copied as is), ``rewritten`` (records removed or a delete horizon
    set), ``emptied`` (every record removed, the header kept as an empty batch), ``deleted``,
    ``not cleaned`` (past the cleaned range).
    """

    base_offset: int
    last_offset: int
    segment: int
    magic: int
    producer_id: int
    producer_epoch: int
    base_sequence: int
    max_timestamp: int | None
    is_transactional: bool
    is_control: bool
    #: ``COMMIT``/``ABORT``/... for a control batch with a record; None otherwise.
    control_type: str | None
    action: str
    records_kept: int
    records_removed: int
    delete_horizon_before: int | None
    delete_horizon_after: int | None


@dataclass(slots=True)
class CompactionResult:
    """One cleaning pass over a partition, as of ``plan.now_ms``."""

    plan: DirtyRatio
    #: Data records after the pass, in offset order (the uncleaned tail included).
    records: list[Record] = field(default_factory=list)
    removed: list[RemovedRecord] = field(default_factory=list)
    #: Every data record with a null key in the partition (Kafka refuses them on compacted
    #: topics; in a backup they come from before the topic was compacted).
    null_key_records: list[Record] = field(default_factory=list)
    batches: list[BatchOutcome] = field(default_factory=list)
    #: Control records (transaction markers) kept and removed by the pass.
    markers_kept: int = 0
    markers_removed: int = 0
    #: Things Kafka would do differently or fail on, and truncated tails met.
    warnings: list[str] = field(default_factory=list)

    def removed_by_reason(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for r in self.removed:
            counts[r.reason] = counts.get(r.reason, 0) + 1
        return counts


@dataclass(slots=True)
class CleanerFacts:
    """What a pass decides per batch, without reading records: enough, with the records'
    keys, to decide every data record (the Spark transformation uses this)."""

    topic: str | None
    partition: int | None
    plan: DirtyRatio
    #: (base offset, last offset, FLAG_* bits) of batches in the cleaned range with a flag.
    flagged: list[tuple[int, int, int]] = field(default_factory=list)

    @property
    def clean_end(self) -> int | None:
        """Records below this offset are cleaned; None when the pass cleans nothing."""
        return self.plan.first_uncleanable_offset if self.plan.cleans else None

    def flags_at(self, offset: int) -> int:
        bases = [b for b, _, _ in self.flagged]
        slot = bisect_right(bases, offset) - 1
        if slot >= 0 and offset <= self.flagged[slot][1]:
            return self.flagged[slot][2]
        return 0


# --- entry points ---------------------------------------------------------------------------


def dirty_ratio(
    path: str | os.PathLike[str],
    *,
    now_ms: int | None = None,
    config: CleanerConfig | None = None,
    first_dirty_offset: int | None = None,
) -> DirtyRatio:
    """The cleanable range, dirty ratio and cleaning groups of a partition directory.

    ``first_dirty_offset`` stands for the ``cleaner-offset-checkpoint`` entry (read from the
    partition's parent directory by default). ``now_ms`` defaults to the current time.
    """
    config = config or CleanerConfig()
    now = _now(now_ms)
    partition = Partition.open(path)
    scan = _scan(partition, Report())
    return _plan(partition, scan, now, config, first_dirty_offset)


def cleaner_facts(
    path: str | os.PathLike[str],
    *,
    now_ms: int | None = None,
    config: CleanerConfig | None = None,
    first_dirty_offset: int | None = None,
) -> CleanerFacts:
    """The plan and per-batch decisions of a pass, from batch headers (and markers) only."""
    config = config or CleanerConfig()
    now = _now(now_ms)
    partition = Partition.open(path)
    scan = _scan(partition, Report())
    plan = _plan(partition, scan, now, config, first_dirty_offset)
    facts = CleanerFacts(partition.topic, partition.partition, plan)
    for verdict in _verdicts(scan, plan, now, config):
        flags = (FLAG_ABORTED if verdict.aborted else 0) | (
            FLAG_TOMBSTONES_EXPIRED if verdict.tombstones_expired else 0
        )
        if flags:
            facts.flagged.append((verdict.batch.base_offset, verdict.batch.last_offset, flags))
    return facts


def compact(
    path: str | os.PathLike[str],
    *,
    now_ms: int | None = None,
    config: CleanerConfig | None = None,
    null_keys: NullKeys = "drop",
    first_dirty_offset: int | None = None,
    only_if_due: bool = False,
) -> CompactionResult:
    """One cleaning pass over a partition directory, as Kafka's cleaner would run it at
    ``now_ms`` (default: now): the records it keeps, those it removes and why, what becomes
    of each batch, and the plan (:class:`DirtyRatio`).

    The pass is computed whether or not the cleaner would pick the partition now (see
    ``plan.would_clean``); ``only_if_due=True`` removes nothing when it would not.
    ``null_keys="keep"`` keeps null-key records that Kafka's cleaner drops (they are listed
    in ``null_key_records`` either way). Damaged batches raise :class:`KafkaFormatError`, as
    they stop Kafka's cleaner.
    """
    if null_keys not in ("drop", "keep"):
        raise ValueError(f"null_keys must be 'drop' or 'keep', not {null_keys!r}")
    config = config or CleanerConfig()
    now = _now(now_ms)
    partition = Partition.open(path)
    report = Report()
    scan = _scan(partition, report)
    plan = _plan(partition, scan, now, config, first_dirty_offset)
    result = CompactionResult(plan)
    result.warnings.extend(str(t) for t in report.truncated)
    cleaning = plan.cleans and (plan.would_clean or not only_if_due)
    verdicts = _verdicts(scan, plan, now, config) if cleaning else []
    offset_map = _offset_map(scan, plan, verdicts) if cleaning else {}
    by_position = {(v.segment, v.batch.position): v for v in verdicts}
    latest = plan.first_uncleanable_offset - 1

    for slot, batch in _decoded(scan):
        records = batch.records or []
        if not batch.is_control:
            result.null_key_records.extend(r for r in records if r.key is None)
        verdict = by_position.get((slot, batch.position))
        if verdict is None:
            if batch.is_control:
                result.markers_kept += len(records)
            else:
                result.records.extend(records)
            horizon = batch.delete_horizon_ms
            result.batches.append(_outcome(batch, slot, "not cleaned", len(records), 0, horizon))
            continue
        kept: list[Record] = []
        tombstone_kept = False
        for record in records:
            reason = _removal(record, batch, verdict, offset_map, latest, null_keys)
            if reason is None:
                kept.append(record)
                tombstone_kept |= record.value is None and not batch.is_control
            elif not batch.is_control:
                result.removed.append(RemovedRecord(record, reason))
        if batch.is_control:
            result.markers_kept += len(kept)
            result.markers_removed += len(records) - len(kept)
        else:
            result.records.extend(kept)
        settled = _settle(
            batch, slot, verdict, kept, records, tombstone_kept, now, config, result.warnings
        )
        result.batches.append(settled)
    return result


def partitions_of(path: str | os.PathLike[str]) -> list[Path]:
    """The partition directories a path names: itself when it holds segments, else the live
    ``topic-N`` directories inside it (a log dir)."""
    directory = Path(path)
    if not directory.is_dir():
        raise KafkaFormatError("not a directory", file=str(directory))
    if any(p.suffix == ".log" for p in directory.iterdir() if p.is_file()):
        return [directory]
    found = partition_dirs(directory)
    if not found:
        raise KafkaFormatError(
            "no .log segments here, nor partition directories (topic-N) holding them",
            file=str(directory),
        )
    return found


# --- the header pass ------------------------------------------------------------------------


@dataclass(slots=True)
class _Scan:
    segments: list[Segment]
    #: Per segment, its batches: headers, with records decoded for control batches only.
    batches: list[list[Batch]]
    aborted: set[tuple[int, int]]
    open_txns: dict[int, int]
    log_end_offset: int


def _is_control(batch: Batch) -> bool:
    return batch.is_control


def _scan(partition: Partition, report: Report) -> _Scan:
    per_segment = [
        list(iter_batches(segment.log, records=_is_control, report=report))
        for segment in partition.segments
    ]
    tp = (partition.topic, partition.partition)
    found = collect_aborted((b for batches in per_segment for b in batches), partition.path)
    end = partition.segments[-1].base_offset if partition.segments else 0
    for batches in reversed(per_segment):
        if batches:
            end = batches[-1].next_offset
            break
    return _Scan(
        segments=partition.segments,
        batches=per_segment,
        aborted=found.aborted.get(tp, set()),
        open_txns=found.open.get(tp, {}),
        log_end_offset=end,
    )


def _decoded(scan: _Scan) -> Iterator[tuple[int, Batch]]:
    """Every batch again, records decoded, with its segment's slot."""
    for slot, segment in enumerate(scan.segments):
        headers = scan.batches[slot]
        for i, batch in enumerate(iter_batches(segment.log)):
            if i >= len(headers) or headers[i].position != batch.position:
                raise KafkaFormatError("segment changed while being read", file=str(segment.log))
            yield slot, batch


# --- the plan (LogCleanerManager) -----------------------------------------------------------


def _values(bases: list[int], start: int, end: int) -> list[int]:
    """Slots of ``LogSegments.values(from, to)``: from the segment holding ``start`` (or the
    first) to the last one below ``end``."""
    if start == end:
        return []
    if end < start:
        raise ValueError(f"invalid segment range {start}..{end}")
    floor = bisect_right(bases, start) - 1
    first = max(floor, 0)
    return [i for i in range(first, len(bases)) if bases[i] < end]


def _plan(
    partition: Partition,
    scan: _Scan,
    now: int,
    config: CleanerConfig,
    checkpoint_override: int | None,
) -> DirtyRatio:
    segments = scan.segments
    if not segments:
        raise KafkaFormatError("no .log segments", file=str(partition.path))
    bases = [s.base_offset for s in segments]
    active = len(segments) - 1
    log_start = partition.log_start_offset
    assert log_start is not None
    leo = scan.log_end_offset
    hw = min(leo, _log_dir_offset(partition, REPLICATION_OFFSET_CHECKPOINT, leo))
    first_unstable = min(scan.open_txns.values(), default=None)
    lso = first_unstable if first_unstable is not None and first_unstable < hw else hw

    checkpoint = checkpoint_override
    if checkpoint is None:
        checkpoint = _log_dir_offset(partition, CLEANER_OFFSET_CHECKPOINT, None)
    wanted = checkpoint if checkpoint is not None else log_start
    reset = wanted < log_start or wanted > leo
    first_dirty = log_start if reset else wanted

    infos = [_segment_facts(s, scan.batches[i]) for i, s in enumerate(segments)]
    non_active_from_dirty = (
        [] if first_dirty > bases[active] else _values(bases, first_dirty, bases[active])
    )
    candidates = [(lso, "last stable offset"), (bases[active], "active segment")]
    if config.min_compaction_lag_ms > 0:
        for i in non_active_from_dirty:
            if infos[i][0] > now - config.min_compaction_lag_ms:
                candidates.append((bases[i], "min.compaction.lag.ms"))
                break
    bound = min(c for c, _ in candidates)
    reasons = [why for c, why in candidates if c == bound]
    if first_dirty > bound:
        bound, reasons = first_dirty, ["first dirty offset"]
    # calculateCleanableBytes: the segment holding the bound, or the active one
    from_bound = [] if bound > bases[active] else _values(bases, bound, bases[active])
    first_uncleanable = bases[from_bound[0]] if from_bound else bases[active]
    dirty = _values(bases, min(first_dirty, first_uncleanable), first_uncleanable)
    clean = [i for i, b in enumerate(bases) if b < first_dirty]

    earliest = min((infos[i][1] for i in non_active_from_dirty if infos[i][1] > 0), default=None)
    clean_until = now - max(config.max_compaction_lag_ms, 0)
    delay = clean_until - earliest if earliest is not None and earliest < clean_until else 0

    groups: list[list[int]] = []
    if first_dirty < first_uncleanable and _values(bases, first_dirty, first_uncleanable):
        cleaned = [i for i, b in enumerate(bases) if b < first_uncleanable]
        groups = _group_by_size(segments, cleaned, config, first_uncleanable)
    group_of = {slot: g for g, members in enumerate(groups) for slot in members}

    described = []
    for i, s in enumerate(segments):
        if i == active:
            role = "active"
        elif i in dirty:
            role = "dirty"
        elif i in clean:
            role = "clean"
        else:
            role = "uncleanable"
        described.append(
            SegmentInfo(
                base_offset=s.base_offset,
                path=s.log,
                size=s.size,
                index_bytes=_file_size(s.index),
                time_index_bytes=_file_size(s.timeindex),
                largest_timestamp=infos[i][0],
                last_modified_ms=_mtime_ms(s.log),
                role=role,
                group=group_of.get(i),
            )
        )
    return DirtyRatio(
        path=partition.path,
        topic=partition.topic,
        partition=partition.partition,
        now_ms=now,
        log_start_offset=log_start,
        log_end_offset=leo,
        high_watermark=hw,
        last_stable_offset=lso,
        checkpoint=checkpoint,
        first_dirty_offset=first_dirty,
        checkpoint_reset=reset,
        first_uncleanable_offset=first_uncleanable,
        uncleanable_reasons=reasons,
        clean_bytes=sum(segments[i].size for i in clean),
        cleanable_bytes=sum(segments[i].size for i in dirty),
        min_cleanable_ratio=config.min_cleanable_dirty_ratio,
        compaction_delay_ms=delay,
        segments=described,
        groups=[[segments[i].base_offset for i in g] for g in groups],
    )


def _segment_facts(segment: Segment, batches: list[Batch]) -> tuple[int, int]:
    """(largest timestamp, first batch timestamp) as ``LogSegment`` reports them: the
    largest falls back to the file's last-modified time, the first to Long.MAX_VALUE."""
    stamps = [b.max_timestamp for b in batches if b.max_timestamp is not None]
    largest = max(stamps, default=-1)
    if largest < 0:
        largest = _mtime_ms(segment.log)
    first = batches[0].max_timestamp if batches else None
    return largest, first if first is not None and first >= 0 else LONG_MAX


def _group_by_size(
    segments: list[Segment], slots: list[int], config: CleanerConfig, first_uncleanable: int
) -> list[list[int]]:
    """``Cleaner.groupSegmentsBySize``."""
    groups: list[list[int]] = []
    rest = list(slots)
    while rest:
        head = rest.pop(0)
        group = [head]
        log_size = segments[head].size
        index_size = _file_size(segments[head].index)
        time_size = _file_size(segments[head].timeindex)
        while rest:
            nxt = segments[rest[0]]
            # lastOffsetForFirstSegment: the next segment's base - 1, else the bound - 1
            last = segments[rest[1]].base_offset - 1 if len(rest) > 1 else first_uncleanable - 1
            if not (
                log_size + nxt.size <= config.segment_bytes
                and index_size + _file_size(nxt.index) <= config.max_index_bytes
                and time_size + _file_size(nxt.timeindex) <= config.max_index_bytes
                and (nxt.size == 0 or last - segments[group[-1]].base_offset <= _INT_MAX)
            ):
                break
            group.append(rest.pop(0))
            log_size += nxt.size
            index_size += _file_size(nxt.index)
            time_size += _file_size(nxt.timeindex)
        groups.append(group)
    return groups


def _log_dir_offset(partition: Partition, name: str, default: int | None) -> int | None:
    """This partition's entry in an offset checkpoint of the parent (log) directory."""
    path = partition.path.parent / name
    if partition.topic is None or partition.partition is None or not path.is_file():
        return default
    try:
        offsets = read_offset_checkpoint(path)
    except (KafkaFormatError, OSError):
        return default
    return offsets.get(TopicPartition(partition.topic, partition.partition), default)


def _file_size(path: Path | None) -> int:
    if path is None:
        return 0
    with contextlib.suppress(OSError):
        return path.stat().st_size
    return 0


def _mtime_ms(path: Path) -> int:
    return path.stat().st_mtime_ns // 1_000_000


def _now(now_ms: int | None) -> int:
    return int(time.time() * 1000) if now_ms is None else int(now_ms)


# --- per-batch decisions (Cleaner.cleanInto's RecordFilter) ---------------------------------


@dataclass(slots=True)
class _AbortedTxn:
    last_observed: int | None = None


class _TxnWalk:
    """``CleanedTransactionMetadata``: fed every batch in log order."""

    def __init__(self, aborted: Iterable[tuple[int, int]]) -> None:
        self._pending = sorted(aborted)
        self._next = 0
        self._aborted: dict[int, _AbortedTxn] = {}
        self._committed: set[int] = set()

    def _consume(self, offset: int) -> None:
        while self._next < len(self._pending) and self._pending[self._next][0] <= offset:
            self._aborted.setdefault(self._pending[self._next][1], _AbortedTxn())
            self._next += 1

    def data_batch(self, batch: Batch) -> bool:
        """``onBatchRead``: True when the batch belongs to an aborted transaction."""
        self._consume(batch.last_offset)
        if not batch.is_transactional:
            return False
        txn = self._aborted.get(batch.producer_id)
        if txn is not None:
            txn.last_observed = batch.last_offset
            return True
        self._committed.add(batch.producer_id)
        return False

    def control_batch(self, batch: Batch) -> bool:
        """``onControlBatchRead``: True when the marker may be discarded."""
        self._consume(batch.last_offset)
        if not batch.records:
            return True  # an empty control batch was cleaned already
        marker = batch.records[0].control
        kind = marker.type if marker is not None else None
        if kind == ControlType.ABORT:
            txn = self._aborted.pop(batch.producer_id, None)
            return txn is None or txn.last_observed is None
        if kind == ControlType.COMMIT:
            if batch.producer_id in self._committed:
                self._committed.discard(batch.producer_id)
                return False
            return True
        return False


@dataclass(slots=True)
class _Verdict:
    segment: int
    batch: Batch
    #: ``canDiscardBatch``: aborted data, or a marker whose transaction's data is gone.
    can_discard: bool
    #: ``discardBatchRecords``: every record goes.
    discard_records: bool
    retain_empty: bool
    tombstones_expired: bool

    @property
    def aborted(self) -> bool:
        return self.can_discard and not self.batch.is_control


def _active_producers(scan: _Scan, now: int, config: CleanerConfig) -> dict[int, tuple]:
    """``lastRecordsOfActiveProducers``: producer id -> (last data offset or None, epoch),
    rebuilt from the batch headers as ``ProducerStateManager`` loads them."""
    state: dict[int, list] = {}  # pid -> [epoch, last data offset, last timestamp, in txn]
    for batches in scan.batches:
        for b in batches:
            if b.producer_id < 0 or b.magic < 2:
                continue
            if b.is_control and not b.records:
                continue  # an emptied marker: the broker skips it when loading
            entry = state.setdefault(b.producer_id, [b.producer_epoch, None, -1, False])
            if entry[0] != b.producer_epoch:  # maybeUpdateProducerEpoch
                entry[0], entry[1] = b.producer_epoch, None
            entry[2] = b.max_timestamp if b.max_timestamp is not None else -1
            if b.is_control:
                entry[3] = False
            else:
                entry[1] = b.last_offset
                entry[3] = entry[3] or b.is_transactional
    expiry = config.producer_id_expiration_ms
    return {
        pid: (e[1], e[0])
        for pid, e in state.items()
        if expiry is None or e[3] or now - e[2] < expiry
    }


def _verdicts(scan: _Scan, plan: DirtyRatio, now: int, config: CleanerConfig) -> list[_Verdict]:
    """The record-independent decisions for every batch of the cleaned segments."""
    if not plan.cleans:
        return []
    producers = _active_producers(scan, now, config)
    walk = _TxnWalk(scan.aborted)
    # doClean: v0/v1 tombstones go once their segment is older than the last clean
    # segment's last-modified time minus delete.retention.ms (0: no clean segment)
    clean = [s for s in plan.segments if s.base_offset < plan.first_dirty_offset]
    legacy_horizon = clean[-1].last_modified_ms - config.delete_retention_ms if clean else 0
    out = []
    for slot, info in enumerate(plan.segments):
        if info.group is None:
            continue
        retain_legacy = info.last_modified_ms > legacy_horizon
        for batch in scan.batches[slot]:
            if batch.is_control:
                can_discard = walk.control_batch(batch)
                horizon = batch.delete_horizon_ms
                discard = can_discard and horizon is not None and horizon <= now
            else:
                can_discard = walk.data_batch(batch)
                discard = can_discard
            last = producers.get(batch.producer_id) if batch.producer_id >= 0 else None
            is_last_of_producer = last is not None and (
                batch.last_offset == last[0]
                if last[0] is not None
                else batch.is_control and batch.producer_epoch == last[1]
            )
            retain_empty = is_last_of_producer or batch.next_offset == plan.first_uncleanable_offset
            if batch.magic >= 2:
                horizon = batch.delete_horizon_ms
                expired = horizon is not None and now >= horizon
            else:
                expired = not retain_legacy
            out.append(_Verdict(slot, batch, can_discard, discard, retain_empty, expired))
    return out


def _offset_map(scan: _Scan, plan: DirtyRatio, verdicts: list[_Verdict]) -> dict[bytes, int]:
    """``buildOffsetMap``: key -> last offset over the dirty range's non-aborted data."""
    aborted = {(v.segment, v.batch.position) for v in verdicts if v.aborted}
    # the segments from the one holding the first dirty offset to the first uncleanable one
    dirty = {i for i, s in enumerate(plan.segments) if s.role == "dirty"}
    found: dict[bytes, int] = {}
    for slot, batch in _decoded_slots(scan, dirty):
        if batch.is_control or (slot, batch.position) in aborted:
            continue
        for record in batch.records or ():
            if record.key is not None and record.offset >= plan.first_dirty_offset:
                found[record.key] = record.offset
    return found


def _decoded_slots(scan: _Scan, slots: set[int]) -> Iterator[tuple[int, Batch]]:
    for slot in sorted(slots):
        for batch in iter_batches(scan.segments[slot].log):
            yield slot, batch


def _removal(
    record: Record,
    batch: Batch,
    verdict: _Verdict,
    offset_map: dict[bytes, int],
    latest: int,
    null_keys: NullKeys,
) -> str | None:
    """Why ``shouldRetainRecord`` drops a record; None when it keeps it."""
    if verdict.discard_records:
        return "aborted" if not batch.is_control else "marker"
    if batch.is_control:
        return None
    if record.offset > latest:
        return None
    if record.key is None:
        return None if null_keys == "keep" else "null key"
    if record.offset < offset_map.get(record.key, -1):
        return "superseded"
    if record.value is None and verdict.tombstones_expired:
        return "tombstone"
    return None


def _settle(
    batch: Batch,
    slot: int,
    verdict: _Verdict,
    kept: list[Record],
    records: list[Record],
    tombstone_kept: bool,
    now: int,
    config: CleanerConfig,
    warnings: list[str],
) -> BatchOutcome:
    """``filterTo``'s verdict on a batch, given the records it keeps."""
    removed = len(records) - len(kept)
    before = batch.delete_horizon_ms
    if kept:
        marker_for_empty_txn = verdict.can_discard and batch.is_control
        if batch.magic >= 2 and before is None and (tombstone_kept or marker_for_empty_txn):
            return _outcome(batch, slot, "rewritten", len(kept), removed, before,
                            now + config.delete_retention_ms)  # fmt: skip
        return _outcome(batch, slot, "rewritten" if removed else "kept", len(kept), removed, before)
    if verdict.retain_empty:
        if batch.magic < 2:
            warnings.append(
                f"offsets {batch.base_offset}..{batch.last_offset}: Kafka's cleaner fails here "
                "(IllegalStateException: empty batches are only supported for magic v2)"
            )
            return _outcome(batch, slot, "deleted", 0, removed, before)
        # writeEmptyHeader keeps no delete horizon
        return _outcome(batch, slot, "emptied", 0, removed, before, None)
    return _outcome(batch, slot, "deleted", 0, removed, before)


def _outcome(
    batch: Batch,
    slot: int,
    action: str,
    kept: int,
    removed: int,
    before: int | None,
    after: int | Literal["same"] | None = "same",
) -> BatchOutcome:
    control_type = None
    if batch.is_control and batch.records and batch.records[0].control is not None:
        control_type = batch.records[0].control.type_name
    return BatchOutcome(
        base_offset=batch.base_offset,
        last_offset=batch.last_offset,
        segment=slot,
        magic=batch.magic,
        producer_id=batch.producer_id,
        producer_epoch=batch.producer_epoch,
        base_sequence=batch.base_sequence,
        max_timestamp=batch.max_timestamp,
        is_transactional=batch.is_transactional,
        is_control=batch.is_control,
        control_type=control_type,
        action=action,
        records_kept=kept,
        records_removed=removed,
        delete_horizon_before=before if batch.magic >= 2 else None,
        delete_horizon_after=(before if after == "same" else after) if batch.magic >= 2 else None,
    )
