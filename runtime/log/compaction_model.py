"""The cleaner's settings and what a pass reports: :class:`CleanerConfig`, the plan
(:class:`DirtyRatio`, :class:`SegmentInfo`), the outcome (:class:`CompactionResult`,
:class:`BatchOutcome`, :class:`RemovedRecord`) and the per-batch facts Spark uses
(:class:`CleanerFacts`). The rules are described in :mod:`.compaction`."""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from ..model import Record
from .compaction_policy import CleanupPolicy

LONG_MAX = (1 << 63) - 1
#: ``delete.retention.ms`` and ``min.cleanable.dirty.ratio`` defaults.
DEFAULT_DELETE_RETENTION_MS = 86_400_000
DEFAULT_MIN_CLEANABLE_DIRTY_RATIO = 0.5

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
    #: The topic's cleanup.policy as known; a log it keeps from the cleaner is left as it is.
    policy: CleanupPolicy = field(default_factory=lambda: CleanupPolicy(None, "unknown", True))

    @property
    def would_clean(self) -> bool:
        """Whether the cleaner would pick this partition now: its policy lets the cleaner
        at it, and ``plan.would_clean``."""
        return self.policy.cleaned and self.plan.would_clean

    #: Set by a streamed pass (:func:`.compaction_stream.compact_stream`), which counts the
    #: records instead of keeping them in ``records`` and ``removed``.
    kept_count: int | None = None
    removed_counts: dict[str, int] | None = None

    @property
    def records_kept(self) -> int:
        return self.kept_count if self.kept_count is not None else len(self.records)

    @property
    def records_removed(self) -> int:
        return sum(self.removed_by_reason().values())

    def removed_by_reason(self) -> dict[str, int]:
        if self.removed_counts is not None:
            return dict(self.removed_counts)
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
