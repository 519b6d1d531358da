"""A producer's state as the broker keeps it (:class:`ProducerState`, :class:`BatchMetadata`)
and what the checks find wrong with a batch (:class:`Anomaly`, :class:`AnomalyKind`). The rules
are described in :mod:`.producers`."""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from enum import StrEnum

from ..files.snapshot import ProducerSnapshotEntry
from ..model import Batch, decrement_sequence

#: ``ProducerStateEntry.NUM_BATCHES_TO_RETAIN``: batches remembered per producer for duplicates.
NUM_BATCHES_TO_RETAIN = 5
#: ``producer.id.expiration.ms`` default (one day).
DEFAULT_PRODUCER_ID_EXPIRATION_MS = 86_400_000
NO_PRODUCER_EPOCH = -1
NO_SEQUENCE = -1
NO_TIMESTAMP = -1
_INT32_MAX = 0x7FFFFFFF

#: The fields of a snapshot entry that a comparison looks at, in the file's order.
SNAPSHOT_FIELDS = (
    "epoch",
    "last_sequence",
    "last_offset",
    "offset_delta",
    "timestamp",
    "coordinator_epoch",
    "current_txn_first_offset",
)


def in_sequence(last: int, next_: int) -> bool:
    """``ProducerAppendInfo.inSequence``."""
    return next_ == last + 1 or (next_ == 0 and last == _INT32_MAX)


# --- the state --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class BatchMetadata:
    """One retained batch of a producer (``BatchMetadata``)."""

    last_sequence: int
    last_offset: int
    offset_delta: int
    timestamp: int

    @property
    def first_sequence(self) -> int:
        return decrement_sequence(self.last_sequence, self.offset_delta)

    @property
    def first_offset(self) -> int:
        return self.last_offset - self.offset_delta


def _retained() -> deque[BatchMetadata]:
    return deque(maxlen=NUM_BATCHES_TO_RETAIN)


@dataclass(slots=True)
class ProducerState:
    """One producer's state (``ProducerStateEntry``)."""

    producer_id: int
    epoch: int = NO_PRODUCER_EPOCH
    coordinator_epoch: int = -1
    last_timestamp: int = NO_TIMESTAMP
    #: First offset of the open transaction; None when none is open.
    current_txn_first_offset: int | None = None
    #: The last batches of the current epoch, oldest first (at most NUM_BATCHES_TO_RETAIN).
    batches: deque[BatchMetadata] = field(default_factory=_retained)

    @property
    def last_batch(self) -> BatchMetadata | None:
        return self.batches[-1] if self.batches else None

    @property
    def first_sequence(self) -> int:
        """First sequence of the oldest retained batch (``firstSeq``), -1 when none."""
        return self.batches[0].first_sequence if self.batches else NO_SEQUENCE

    @property
    def last_sequence(self) -> int:
        return self.batches[-1].last_sequence if self.batches else NO_SEQUENCE

    @property
    def last_offset(self) -> int:
        """``lastDataOffset``: last offset of the last data batch, -1 when none is retained."""
        return self.batches[-1].last_offset if self.batches else -1

    @property
    def offset_delta(self) -> int:
        return self.batches[-1].offset_delta if self.batches else 0

    def update_epoch(self, epoch: int) -> None:
        """``maybeUpdateProducerEpoch``: a new epoch forgets the batches of the old one."""
        if epoch != self.epoch:
            self.batches.clear()
            self.epoch = epoch

    def find_duplicate(
        self, epoch: int, first_sequence: int, last_sequence: int
    ) -> BatchMetadata | None:
        """``findDuplicateBatch``: the retained batch with exactly this sequence range."""
        if epoch != self.epoch:
            return None
        for meta in self.batches:
            if meta.first_sequence == first_sequence and meta.last_sequence == last_sequence:
                return meta
        return None

    def snapshot_entry(self) -> ProducerSnapshotEntry:
        """What ``ProducerStateManager.writeSnapshot`` stores for this producer."""
        return ProducerSnapshotEntry(
            producer_id=self.producer_id,
            epoch=self.epoch,
            last_sequence=self.last_sequence,
            last_offset=self.last_offset,
            offset_delta=self.offset_delta,
            timestamp=self.last_timestamp,
            coordinator_epoch=self.coordinator_epoch,
            current_txn_first_offset=(
                -1 if self.current_txn_first_offset is None else self.current_txn_first_offset
            ),
        )

    @classmethod
    def from_snapshot_entry(cls, entry: ProducerSnapshotEntry) -> ProducerState:
        """``ProducerStateManager.readSnapshot``: one batch of metadata when last_offset >= 0."""
        state = cls(
            producer_id=entry.producer_id,
            epoch=entry.epoch,
            coordinator_epoch=entry.coordinator_epoch,
            last_timestamp=entry.timestamp,
            current_txn_first_offset=entry.ongoing_txn_first_offset,
        )
        if entry.last_offset >= 0:
            state.batches.append(
                BatchMetadata(
                    entry.last_sequence, entry.last_offset, entry.offset_delta, entry.timestamp
                )
            )
        return state

    def copy(self) -> ProducerState:
        return ProducerState(
            self.producer_id,
            self.epoch,
            self.coordinator_epoch,
            self.last_timestamp,
            self.current_txn_first_offset,
            deque(self.batches, maxlen=NUM_BATCHES_TO_RETAIN),
        )


# --- anomalies --------------------------------------------------------------------------------


class AnomalyKind(StrEnum):
    """What the partition leader would have refused, or what does not add up."""

    DUPLICATE_BATCH = "duplicate_batch"
    SEQUENCE_GAP = "sequence_gap"
    EPOCH_REGRESSION = "epoch_regression"
    COORDINATOR_EPOCH_REGRESSION = "coordinator_epoch_regression"
    MARKER_WITHOUT_TRANSACTION = "marker_without_transaction"
    NON_TRANSACTIONAL_IN_TRANSACTION = "non_transactional_in_transaction"
    DAMAGED_BATCH = "damaged_batch"


@dataclass(frozen=True, slots=True)
class Anomaly:
    """One finding, located at the batch it concerns."""

    kind: AnomalyKind
    producer_id: int
    producer_epoch: int
    file: str | None
    position: int | None
    base_offset: int | None
    last_offset: int | None
    message: str
    #: Why this is expected after all (the log cleaner); None for a real anomaly.
    explained_by: str | None = None

    def where(self) -> str:
        parts = [f"{self.file or '<bytes>'}@{self.position}"]
        if self.base_offset is not None:
            if self.last_offset is not None and self.last_offset != self.base_offset:
                parts.append(f"(offsets {self.base_offset}..{self.last_offset})")
            else:
                parts.append(f"(offset {self.base_offset})")
        return " ".join(parts)

    def __str__(self) -> str:
        who = (
            f"producer {self.producer_id} epoch {self.producer_epoch}: "
            if self.producer_id >= 0
            else ""
        )
        text = f"{self.where()}: {self.kind.value}: {who}{self.message}"
        if self.explained_by:
            text += f" ({self.explained_by})"
        return text

    def as_json(self) -> dict:
        return {
            "kind": self.kind.value,
            "producerId": self.producer_id,
            "producerEpoch": self.producer_epoch,
            "file": self.file,
            "position": self.position,
            "baseOffset": self.base_offset,
            "lastOffset": self.last_offset,
            "message": self.message,
            "explainedBy": self.explained_by,
        }


def make_anomaly(kind: AnomalyKind, batch: Batch, message: str) -> Anomaly:
    return Anomaly(
        kind,
        batch.producer_id,
        batch.producer_epoch,
        batch.file,
        batch.position,
        batch.base_offset,
        batch.last_offset,
        message,
    )
