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

import os
from collections.abc import Mapping
from pathlib import Path

from ..errors import KafkaFormatError
from ..model import Batch, Record, Report
from ..read.sources import partition_dirs
from .compaction_filter import (
    BatchVerdict,
    batch_verdicts,
    build_offset_map,
    outcome,
    removal,
    resolve_now,
    settle,
    start_pass,
)
from .compaction_model import (
    DEFAULT_DELETE_RETENTION_MS,
    DEFAULT_MIN_CLEANABLE_DIRTY_RATIO,
    FLAG_ABORTED,
    FLAG_TOMBSTONES_EXPIRED,
    LONG_MAX,
    BatchOutcome,
    CleanerConfig,
    CleanerFacts,
    CompactionResult,
    DirtyRatio,
    NullKeys,
    RemovedRecord,
    SegmentInfo,
)
from .compaction_plan import decoded_again, plan_cleaning, scan_partition
from .compaction_policy import CleanupPolicy
from .partition import Partition

__all__ = [
    "DEFAULT_DELETE_RETENTION_MS",
    "DEFAULT_MIN_CLEANABLE_DIRTY_RATIO",
    "FLAG_ABORTED",
    "FLAG_TOMBSTONES_EXPIRED",
    "LONG_MAX",
    "BatchOutcome",
    "CleanerConfig",
    "CleanerFacts",
    "CleanupPolicy",
    "CompactionResult",
    "DirtyRatio",
    "RemovedRecord",
    "SegmentInfo",
    "cleaner_facts",
    "compact",
    "dirty_ratio",
    "partitions_of",
]


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
    now = resolve_now(now_ms)
    partition = Partition.open(path)
    scan = scan_partition(partition, Report())
    return plan_cleaning(partition, scan, now, config, first_dirty_offset)


def cleaner_facts(
    path: str | os.PathLike[str],
    *,
    now_ms: int | None = None,
    config: CleanerConfig | None = None,
    first_dirty_offset: int | None = None,
) -> CleanerFacts:
    """The plan and per-batch decisions of a pass, from batch headers (and markers) only."""
    config = config or CleanerConfig()
    now = resolve_now(now_ms)
    partition = Partition.open(path)
    scan = scan_partition(partition, Report())
    plan = plan_cleaning(partition, scan, now, config, first_dirty_offset)
    facts = CleanerFacts(partition.topic, partition.partition, plan)
    for verdict in batch_verdicts(scan, plan, now, config):
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
    cleanup_policy: str | None = None,
    topic_policies: Mapping[str, str] | None = None,
) -> CompactionResult:
    """One cleaning pass over a partition directory, as Kafka's cleaner would run it at
    ``now_ms`` (default: now): the records it keeps, those it removes and why, what becomes
    of each batch, and the plan (:class:`DirtyRatio`).

    The pass is computed whether or not the cleaner would pick the partition now (see
    ``plan.would_clean``); ``only_if_due=True`` removes nothing when it would not.
    ``null_keys="keep"`` keeps null-key records that Kafka's cleaner drops (they are listed
    in ``null_key_records`` either way). Damaged batches raise :class:`KafkaFormatError`, as
    they stop Kafka's cleaner.

    ``cleanup_policy`` is the topic's ``cleanup.policy`` (``topic_policies``: per topic name);
    unknown (None) counts as compacted, Kafka's compacted internal topics are known, and a
    log the cleaner never cleans (``delete``, ``__cluster_metadata``) is left as it is
    (``result.policy`` says why; see :mod:`.compaction_policy`).
    """
    config = config or CleanerConfig()
    start = start_pass(
        path,
        now_ms=now_ms,
        config=config,
        null_keys=null_keys,
        first_dirty_offset=first_dirty_offset,
        only_if_due=only_if_due,
        cleanup_policy=cleanup_policy,
        topic_policies=topic_policies,
    )
    scan, plan, now, cleaning, verdicts = (
        start.scan,
        start.plan,
        start.now,
        start.cleaning,
        start.verdicts,
    )
    result = CompactionResult(plan, policy=start.policy)
    result.warnings.extend(start.warnings)
    offset_map = build_offset_map(scan, plan, verdicts) if cleaning else {}
    by_position = {(v.segment, v.batch.position): v for v in verdicts}

    for slot, batch in decoded_again(scan):
        verdict = by_position.get((slot, batch.position))
        if verdict is None:
            _pass_through(result, slot, batch)
        else:
            _clean_batch(result, slot, batch, verdict, offset_map, null_keys, now, config)
    return result


def _pass_through(result: CompactionResult, slot: int, batch: Batch) -> None:
    """A batch past the cleaned range: copied as it is."""
    records = batch.records or []
    if batch.is_control:
        result.markers_kept += len(records)
    else:
        result.null_key_records.extend(r for r in records if r.key is None)
        result.records.extend(records)
    horizon = batch.delete_horizon_ms
    result.batches.append(outcome(batch, slot, "not cleaned", len(records), 0, horizon))


def _clean_batch(
    result: CompactionResult,
    slot: int,
    batch: Batch,
    verdict: BatchVerdict,
    offset_map: dict[bytes, int],
    null_keys: NullKeys,
    now: int,
    config: CleanerConfig,
) -> None:
    """A batch of the cleaned range: its records filtered, its fate settled."""
    records = batch.records or []
    latest = result.plan.first_uncleanable_offset - 1
    if not batch.is_control:
        result.null_key_records.extend(r for r in records if r.key is None)
    kept: list[Record] = []
    tombstone_kept = False
    for record in records:
        reason = removal(record, batch, verdict, offset_map, latest, null_keys)
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
    settled = settle(
        batch, slot, verdict, len(kept), len(records), tombstone_kept, now, config, result.warnings
    )
    result.batches.append(settled)


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
