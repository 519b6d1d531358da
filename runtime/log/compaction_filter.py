"""The cleaner's per-batch and per-record decisions (``Cleaner.cleanInto``'s
``RecordFilter``, ``CleanedTransactionMetadata``, ``MemoryRecords.filterTo``): which batches
are aborted data or removable markers, the offset map, why a record goes, and what becomes of
each batch."""

from __future__ import annotations

import os
import time
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Literal

from ..model import Batch, ControlType, Record, Report
from ..read.reader import iter_batches
from .compaction_model import BatchOutcome, CleanerConfig, DirtyRatio, NullKeys
from .compaction_plan import PartitionScan, plan_cleaning, scan_partition
from .compaction_policy import CleanupPolicy, normalise, resolve
from .partition import Partition


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
class BatchVerdict:
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


def _active_producers(scan: PartitionScan, now: int, config: CleanerConfig) -> dict[int, tuple]:
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


def batch_verdicts(
    scan: PartitionScan, plan: DirtyRatio, now: int, config: CleanerConfig
) -> list[BatchVerdict]:
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
            out.append(BatchVerdict(slot, batch, can_discard, discard, retain_empty, expired))
    return out


def build_offset_map(
    scan: PartitionScan, plan: DirtyRatio, verdicts: list[BatchVerdict]
) -> dict[bytes, int]:
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


def _decoded_slots(scan: PartitionScan, slots: set[int]) -> Iterator[tuple[int, Batch]]:
    for slot in sorted(slots):
        for batch in iter_batches(scan.segments[slot].log):
            yield slot, batch


def removal(
    record: Record,
    batch: Batch,
    verdict: BatchVerdict,
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


def settle(
    batch: Batch,
    slot: int,
    verdict: BatchVerdict,
    kept: int,
    total: int,
    tombstone_kept: bool,
    now: int,
    config: CleanerConfig,
    warnings: list[str],
) -> BatchOutcome:
    """``filterTo``'s verdict on a batch, given how many of its ``total`` records it keeps."""
    removed = total - kept
    before = batch.delete_horizon_ms
    if kept:
        marker_for_empty_txn = verdict.can_discard and batch.is_control
        if batch.magic >= 2 and before is None and (tombstone_kept or marker_for_empty_txn):
            return outcome(batch, slot, "rewritten", kept, removed, before,
                            now + config.delete_retention_ms)  # fmt: skip
        return outcome(batch, slot, "rewritten" if removed else "kept", kept, removed, before)
    if verdict.retain_empty:
        if batch.magic < 2:
            warnings.append(
                f"offsets {batch.base_offset}..{batch.last_offset}: Kafka's cleaner fails here "
                "(IllegalStateException: empty batches are only supported for magic v2)"
            )
            return outcome(batch, slot, "deleted", 0, removed, before)
        # writeEmptyHeader keeps no delete horizon
        return outcome(batch, slot, "emptied", 0, removed, before, None)
    return outcome(batch, slot, "deleted", 0, removed, before)


def outcome(
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


@dataclass(slots=True)
class _PassStart:
    """What both passes (:func:`.compaction.compact`, :func:`.compaction_stream.compact_stream`)
    know before they read a record: the plan, the policy, and each cleaned batch's verdict."""

    policy: CleanupPolicy
    scan: PartitionScan
    plan: DirtyRatio
    now: int
    #: Whether this pass cleans (the policy compacts, the plan has work, and it is due or
    #: ``only_if_due`` is off); the verdicts are empty otherwise.
    cleaning: bool
    verdicts: list[BatchVerdict]
    #: The truncated tails the scan met, as the result's warnings say them.
    warnings: list[str]


def start_pass(
    path: str | os.PathLike[str],
    *,
    now_ms: int | None,
    config: CleanerConfig,
    null_keys: NullKeys,
    first_dirty_offset: int | None,
    only_if_due: bool,
    cleanup_policy: str | None,
    topic_policies: Mapping[str, str] | None,
) -> _PassStart:
    if null_keys not in ("drop", "keep"):
        raise ValueError(f"null_keys must be 'drop' or 'keep', not {null_keys!r}")
    now = resolve_now(now_ms)
    partition = Partition.open(path)
    policy = resolve(
        partition.topic,
        normalise(cleanup_policy) if cleanup_policy is not None else None,
        topic_policies,
    )
    report = Report()
    scan = scan_partition(partition, report)
    plan = plan_cleaning(partition, scan, now, config, first_dirty_offset)
    cleaning = policy.cleaned and plan.cleans and (plan.would_clean or not only_if_due)
    verdicts = batch_verdicts(scan, plan, now, config) if cleaning else []
    warnings = [str(t) for t in report.truncated]
    return _PassStart(policy, scan, plan, now, cleaning, verdicts, warnings)


def resolve_now(now_ms: int | None) -> int:
    return int(time.time() * 1000) if now_ms is None else int(now_ms)
