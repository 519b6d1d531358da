"""Producer state (idempotence, transactions) rebuilt from a partition's log, as the broker does.

A broker keeps, per producer id, what ``ProducerStateManager`` needs to refuse duplicates and
out-of-order batches and to track open transactions (``ProducerStateEntry``): the producer
epoch, the metadata of its last :data:`NUM_BATCHES_TO_RETAIN` batches (``BatchMetadata``: last
sequence, last offset, offset delta, timestamp), the coordinator epoch of its last transaction
marker, its last timestamp and the first offset of its open transaction. At start-up it loads
the latest ``<N>.snapshot`` (the state after every batch below offset N) and replays the log
from there (``UnifiedLog.rebuildProducerState`` -> ``loadProducersFromRecords``).

:func:`rebuild_producer_state` does the same from the log alone (or from a snapshot when the
log no longer starts at offset 0), checked against Kafka's sources (``ProducerStateManager``,
``ProducerAppendInfo``, ``ProducerStateEntry``, ``BatchMetadata``, ``UnifiedLog``):

* only v2 batches with a producer id count (``batch.hasProducerId``); a data batch replaces the
  epoch (forgetting the batches of an older one: ``maybeUpdateProducerEpoch``) and adds its
  metadata -- ``lastSeq`` is ``baseSequence + lastOffsetDelta`` wrapping at int32 max, the
  offset delta is ``lastOffset - baseOffset``, the timestamp the batch's max timestamp -- and a
  transactional one opens a transaction at its base offset if none is open;
* a COMMIT/ABORT marker sets the epoch, the coordinator epoch and the last timestamp (the
  control record's), and closes the transaction; an empty control batch (cleaned) changes
  nothing, beyond creating an empty entry for a producer id not seen before;
* the state "at offset N" is the state after every batch whose last offset is below N, as the
  loader reads up to ``translateOffset(N)``.

While loading, each batch is also checked as the partition leader checks a producer's append
(``UnifiedLog.analyzeAndValidateProducerState`` with origin CLIENT): what it would have refused
and so should never be in a log is an :class:`Anomaly`, with the file and byte position of the
batch -- a duplicate of one of the retained batches (same epoch and sequence range,
``findDuplicateBatch``), an out-of-order sequence (``checkSequence``: the next base sequence
must be the last sequence + 1, 0 after int32 max; a new epoch must start at 0; a producer
the broker has no state for may start anywhere), a lower epoch than the current one (a fenced
producer, ``checkProducerEpoch``), a marker with an older coordinator epoch
(``checkCoordinatorEpoch``), a non-transactional batch inside an open transaction
(``InvalidTxnStateException``), and a marker of a producer with no open transaction (Kafka
accepts it; it means the transaction's data is not in this log). Batches without a sequence
(``-1``: the group coordinator's transactional offset commits) get the epoch check only.
Damaged batches (CRC mismatch, undecodable markers, broken framing) are reported too; the
loader, which does not check CRCs, still applies a batch whose header reads. The checks run
against the leader's view, which leaves out the batches it would have refused, so one stray
batch is reported once (see :class:`ProducerStateLoader`).

Below the ``cleaner-offset-checkpoint`` the log cleaner removes whole batches; sequence gaps
and markers without a transaction whose missing part lies there are listed apart, in
:attr:`ProducerStateReport.explained`, and are not anomalies.

:func:`diff_snapshot` compares a rebuilt state with a ``.snapshot`` field by field. A producer
the snapshot lacks is not a mismatch when the broker must have expired it
(``producer.id.expiration.ms``, default one day, measured with the log's own clock: the
largest batch timestamp loaded) and it has no open transaction.

One known difference from a loading broker: the loader merges all of a producer's batches of
one segment into the state at once, so when a producer's epoch goes down and back up within
one segment (an anomaly in itself) the broker may retain a few more old batches than we do;
every field a snapshot stores is the same either way.
"""

from __future__ import annotations

import contextlib
import os
from collections import deque
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Literal

from ..errors import KafkaFormatError
from ..files.checkpoints import CLEANER_OFFSET_CHECKPOINT, TopicPartition, read_offset_checkpoint
from ..files.snapshot import ProducerSnapshot, ProducerSnapshotEntry, read_producer_snapshot
from ..model import Batch, ControlType, Report, decrement_sequence, increment_sequence
from ..read.reader import iter_batches
from .partition import Partition, SnapshotFile

__all__ = [
    "DEFAULT_PRODUCER_ID_EXPIRATION_MS",
    "NUM_BATCHES_TO_RETAIN",
    "SNAPSHOT_FIELDS",
    "Anomaly",
    "AnomalyKind",
    "BatchMetadata",
    "FieldDifference",
    "ProducerState",
    "ProducerStateLoader",
    "ProducerStateReport",
    "SnapshotCheck",
    "decrement_sequence",
    "diff_snapshot",
    "rebuild_producer_state",
]

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


def _in_sequence(last: int, next_: int) -> bool:
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


def _anomaly(kind: AnomalyKind, batch: Batch, message: str) -> Anomaly:
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


# --- the loader -------------------------------------------------------------------------------


class ProducerStateLoader:
    """Applies batches one after another, as a broker loading the log does, and checks each
    as the partition leader checked the append.

    Two states are kept: :attr:`producers`, the broker's after loading (replication accepts
    every batch, even one the leader would have refused), and the leader's view the checks
    run against, which leaves out the batches it would have refused -- so that one
    injected duplicate or zombie batch is reported once, not again at every batch after it.
    Without anomalies the two are the same.

    ``producers`` seeds the state (e.g. from a snapshot). ``cleaned_to`` is the cleaner
    checkpoint: gaps whose missing batches lie below it are explained, not anomalies.
    """

    def __init__(
        self, producers: Iterable[ProducerState] = (), *, cleaned_to: int | None = None
    ) -> None:
        self.producers: dict[int, ProducerState] = {p.producer_id: p for p in producers}
        self._view: dict[int, ProducerState] = {pid: p.copy() for pid, p in self.producers.items()}
        self.cleaned_to = cleaned_to
        self.anomalies: list[Anomaly] = []
        self.explained: list[Anomaly] = []
        #: Producer batches applied so far.
        self.batches = 0
        #: The largest batch timestamp seen: the log's clock, for producer expiration.
        self.clock = NO_TIMESTAMP
        # Offset of each producer's last batch seen (data or marker): what lies after it
        # may have been removed by the cleaner.
        self._last_seen: dict[int, int] = {}

    def append(self, batch: Batch) -> list[Anomaly]:
        """Apply one batch (any batch: those without a producer id are skipped); returns the
        anomalies it shows. Control batches need their records decoded."""
        found: list[Anomaly] = []
        if batch.max_timestamp is not None and batch.max_timestamp > self.clock:
            self.clock = batch.max_timestamp
        if batch.error is not None:
            found.append(_anomaly(AnomalyKind.DAMAGED_BATCH, batch, f"not applied: {batch.error}"))
            return self._keep(found)
        if batch.crc_valid is False:
            # The loader does not check CRCs (FileRecords.batches()): it applies the header.
            found.append(
                _anomaly(
                    AnomalyKind.DAMAGED_BATCH,
                    batch,
                    f"stored crc 0x{batch.crc:08x}, computed 0x{batch.computed_crc:08x}; "
                    "applied as the broker's loader would",
                )
            )
        if batch.magic < 2 or batch.producer_id < 0:
            return self._keep(found)
        if batch.is_control:
            found.extend(self._append_marker(batch))
        else:
            found.extend(self._append_data(batch))
        return self._keep(found)

    def _keep(self, found: list[Anomaly]) -> list[Anomaly]:
        for anomaly in found:
            (self.explained if anomaly.explained_by else self.anomalies).append(anomaly)
        return found

    def _cleaned_after(self, producer_id: int) -> str | None:
        """Why a missing part after this producer's last batch is expected, if it is."""
        seen = self._last_seen.get(producer_id, -1)
        if self.cleaned_to is not None and seen + 1 < self.cleaned_to:
            return f"below the cleaner checkpoint {self.cleaned_to}, where batches are removed"
        return None

    def _append_data(self, batch: Batch) -> list[Anomaly]:
        found = self._check_data(batch, self._view.get(batch.producer_id))
        refused = any(a.explained_by is None for a in found)
        targets = [self.producers] if refused else [self.producers, self._view]
        for states in targets:
            _add_data(_state(states, batch.producer_id), batch)
        self._last_seen[batch.producer_id] = batch.last_offset
        self.batches += 1
        return found

    def _check_data(self, batch: Batch, view: ProducerState | None) -> list[Anomaly]:
        """What ``analyzeAndValidateProducerState`` and ``ProducerAppendInfo`` would refuse."""
        epoch, first_seq, last_seq = batch.producer_epoch, batch.base_sequence, batch.last_sequence
        if view is None:
            view = ProducerState(batch.producer_id)
        # Batches without a sequence come from the group coordinator: epoch check only.
        has_sequence = first_seq >= 0
        duplicate = view.find_duplicate(epoch, first_seq, last_seq) if has_sequence else None
        if duplicate is not None:
            return [
                _anomaly(
                    AnomalyKind.DUPLICATE_BATCH,
                    batch,
                    f"sequences {first_seq}..{last_seq} were already written at offsets "
                    f"{duplicate.first_offset}..{duplicate.last_offset}",
                )
            ]
        if epoch < view.epoch:
            return [
                _anomaly(
                    AnomalyKind.EPOCH_REGRESSION,
                    batch,
                    f"epoch {epoch} is below the current epoch {view.epoch} (a fenced producer)",
                )
            ]
        found = []
        problem = _check_sequence(view, epoch, first_seq) if has_sequence else None
        if problem is not None:
            anomaly = _anomaly(AnomalyKind.SEQUENCE_GAP, batch, problem)
            explained = self._cleaned_after(batch.producer_id)
            if not explained:
                return [anomaly]  # refused here, before the transaction check
            found.append(_explain(anomaly, explained))
        if view.current_txn_first_offset is not None and not batch.is_transactional:
            found.append(
                _anomaly(
                    AnomalyKind.NON_TRANSACTIONAL_IN_TRANSACTION,
                    batch,
                    "a non-transactional batch while the transaction from offset "
                    f"{view.current_txn_first_offset} is open",
                )
            )
        return found

    def _append_marker(self, batch: Batch) -> list[Anomaly]:
        if not batch.records:
            # An empty control batch (the cleaner removed the marker) changes nothing, but
            # loading it still creates an empty entry for an unknown producer id
            # (updateProducers -> prepareUpdate -> update).
            for states in (self.producers, self._view):
                _state(states, batch.producer_id)
            self.batches += 1
            return []
        marker = batch.records[0].control
        if marker is None or marker.type not in (ControlType.ABORT, ControlType.COMMIT):
            name = "no control key" if marker is None else f"control type {marker.type_name}"
            return [
                _anomaly(
                    AnomalyKind.DAMAGED_BATCH,
                    batch,
                    f"{name} in a producer's control batch; not applied",
                )
            ]
        name = ControlType(marker.type).name
        epoch = batch.producer_epoch
        coordinator_epoch = -1 if marker.coordinator_epoch is None else marker.coordinator_epoch
        view = self._view.get(batch.producer_id) or ProducerState(batch.producer_id)
        found = []
        if epoch < view.epoch:
            found.append(
                _anomaly(
                    AnomalyKind.EPOCH_REGRESSION,
                    batch,
                    f"{name} marker with epoch {epoch}, below the current epoch {view.epoch}",
                )
            )
        elif view.coordinator_epoch > coordinator_epoch:
            found.append(
                _anomaly(
                    AnomalyKind.COORDINATOR_EPOCH_REGRESSION,
                    batch,
                    f"{name} marker with coordinator epoch {coordinator_epoch}, below "
                    f"{view.coordinator_epoch} (a zombie coordinator)",
                )
            )
        refused = bool(found)
        if not refused and view.current_txn_first_offset is None:
            # Kafka accepts it (an empty transaction on this partition), so the view does too.
            anomaly = _anomaly(
                AnomalyKind.MARKER_WITHOUT_TRANSACTION,
                batch,
                f"{name} marker, but the producer has no open transaction",
            )
            explained = self._cleaned_after(batch.producer_id)
            found.append(_explain(anomaly, explained) if explained else anomaly)
        timestamp = batch.records[0].timestamp
        timestamp = NO_TIMESTAMP if timestamp is None else timestamp
        targets = [self.producers] if refused else [self.producers, self._view]
        for states in targets:
            # ProducerStateEntry.update(epoch, coordinatorEpoch, timestamp)
            state = _state(states, batch.producer_id)
            state.update_epoch(epoch)
            state.coordinator_epoch = coordinator_epoch
            state.last_timestamp = timestamp
            state.current_txn_first_offset = None
        self._last_seen[batch.producer_id] = batch.last_offset
        self.batches += 1
        return found

    def snapshot_entries(self) -> dict[int, ProducerSnapshotEntry]:
        """The state as a snapshot would store it, by producer id."""
        return {pid: state.snapshot_entry() for pid, state in self.producers.items()}


def _state(states: dict[int, ProducerState], producer_id: int) -> ProducerState:
    state = states.get(producer_id)
    if state is None:
        state = states[producer_id] = ProducerState(producer_id)
    return state


def _add_data(state: ProducerState, batch: Batch) -> None:
    """``ProducerAppendInfo.appendDataBatch`` once the checks are done."""
    state.update_epoch(batch.producer_epoch)
    timestamp = NO_TIMESTAMP if batch.max_timestamp is None else batch.max_timestamp
    state.batches.append(
        BatchMetadata(
            batch.last_sequence, batch.last_offset, batch.last_offset - batch.base_offset, timestamp
        )
    )
    state.last_timestamp = timestamp
    if state.current_txn_first_offset is None and batch.is_transactional:
        state.current_txn_first_offset = batch.base_offset


def _check_sequence(state: ProducerState, epoch: int, first_seq: int) -> str | None:
    """``ProducerAppendInfo.checkSequence`` for one batch appended on its own; None if fine."""
    if epoch != state.epoch:
        if first_seq != 0 and state.epoch != NO_PRODUCER_EPOCH:
            return (
                f"the new epoch {epoch} (was {state.epoch}) starts at sequence {first_seq}, not 0"
            )
        return None
    if state.epoch == NO_PRODUCER_EPOCH:
        return None
    last = state.last_sequence
    if _in_sequence(last, first_seq):
        return None
    expected = increment_sequence(last, 1) if last >= 0 else 0
    if last >= 0 and first_seq > expected:
        how = f"{first_seq - expected} sequence(s) missing"
    else:
        how = "out of order"
    return f"sequence {first_seq} follows {last}, expected {expected} ({how})"


def _explain(anomaly: Anomaly, why: str) -> Anomaly:
    return Anomaly(
        anomaly.kind,
        anomaly.producer_id,
        anomaly.producer_epoch,
        anomaly.file,
        anomaly.position,
        anomaly.base_offset,
        anomaly.last_offset,
        anomaly.message,
        why,
    )


# --- snapshot comparison ----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class FieldDifference:
    """One field of one producer that differs; ``field`` "presence" when one side lacks the
    producer (its value there is None)."""

    producer_id: int
    field: str
    rebuilt: int | None
    stored: int | None
    explained_by: str | None = None

    def __str__(self) -> str:
        if self.field == "presence":
            side = "the snapshot" if self.stored is None else "the log"
            text = f"producer {self.producer_id}: not in {side}"
        else:
            text = (
                f"producer {self.producer_id}: {self.field} rebuilt {self.rebuilt}, "
                f"stored {self.stored}"
            )
        return f"{text} ({self.explained_by})" if self.explained_by else text

    def as_json(self) -> dict:
        return {
            "producerId": self.producer_id,
            "field": self.field,
            "rebuilt": self.rebuilt,
            "stored": self.stored,
            "explainedBy": self.explained_by,
        }


def diff_snapshot(
    rebuilt: Mapping[int, ProducerState],
    snapshot: ProducerSnapshot | Iterable[ProducerSnapshotEntry],
    *,
    clock: int | None = None,
    expiration_ms: int | None = DEFAULT_PRODUCER_ID_EXPIRATION_MS,
    cleaned_to: int | None = None,
) -> list[FieldDifference]:
    """Field-by-field differences between a rebuilt state and a snapshot's entries.

    Differences the broker explains carry ``explained_by``: a producer missing from the
    snapshot with no open transaction whose last timestamp is ``expiration_ms`` or more before
    ``clock`` (the broker expires such producers); a producer whose stored last batch lies
    below ``cleaned_to`` and is no longer in the log (the cleaner removed it).
    """
    entries = snapshot.entries if isinstance(snapshot, ProducerSnapshot) else tuple(snapshot)
    stored = {e.producer_id: e for e in entries}
    out: list[FieldDifference] = []
    for pid in sorted(set(stored) | set(rebuilt)):
        state, entry = rebuilt.get(pid), stored.get(pid)
        if entry is None:
            assert state is not None
            why = None
            if (
                expiration_ms is not None
                and clock is not None
                and state.current_txn_first_offset is None
                and clock - state.last_timestamp >= expiration_ms
            ):
                why = f"expired: idle for {expiration_ms} ms or more by the log's clock"
            out.append(FieldDifference(pid, "presence", pid, None, why))
            continue
        if state is None:
            why = _cleaned(entry.last_offset, -1, cleaned_to)
            out.append(FieldDifference(pid, "presence", None, pid, why))
            continue
        mine = state.snapshot_entry()
        why = _cleaned(entry.last_offset, mine.last_offset, cleaned_to)
        for name in SNAPSHOT_FIELDS:
            a, b = getattr(mine, name), getattr(entry, name)
            if a != b:
                out.append(FieldDifference(pid, name, a, b, why))
    return out


def _cleaned(stored_last: int, rebuilt_last: int, cleaned_to: int | None) -> str | None:
    if cleaned_to is not None and rebuilt_last < stored_last < cleaned_to:
        return (
            f"the batch at offset {stored_last} is gone, below the cleaner checkpoint {cleaned_to}"
        )
    return None


@dataclass(slots=True)
class SnapshotCheck:
    """A ``.snapshot`` file against the state rebuilt up to its offset.

    ``status``: ``ok``; ``mismatch`` (unexplained differences); ``unreadable`` (bad CRC or
    structure); ``seed`` (the state was loaded from it); ``not_checked`` (below where loading
    started, or above the ``at`` offset).
    """

    path: Path
    offset: int
    status: str
    differences: list[FieldDifference] = field(default_factory=list)
    reason: str | None = None
    entries: int | None = None

    @property
    def ok(self) -> bool:
        return self.status not in ("mismatch", "unreadable")

    def as_json(self) -> dict:
        return {
            "file": str(self.path),
            "offset": self.offset,
            "status": self.status,
            "entries": self.entries,
            "reason": self.reason,
            "differences": [d.as_json() for d in self.differences],
        }


# --- a partition ------------------------------------------------------------------------------


@dataclass(slots=True)
class ProducerStateReport:
    """The rebuilt state of one partition and what was found on the way."""

    path: Path
    topic: str | None
    partition: int | None
    #: Loading started at this offset (the log start, or the seed snapshot's offset).
    start_offset: int
    #: The state is the state after every batch below this offset.
    end_offset: int
    log_end_offset: int | None
    #: The snapshot the state was seeded from, None when rebuilt from the log alone.
    seed: Path | None
    cleaned_to: int | None
    producers: dict[int, ProducerState]
    anomalies: list[Anomaly]
    explained: list[Anomaly]
    snapshots: list[SnapshotCheck]
    #: Producer batches (data and markers) applied.
    batches: int
    #: Bytes after the last whole batch of a segment (Kafka stops reading there too).
    truncated_bytes: int = 0

    @property
    def ok(self) -> bool:
        return not self.anomalies and all(s.ok for s in self.snapshots)

    def ongoing_transactions(self) -> list[tuple[int, int]]:
        """(first offset, producer id) of every open transaction, earliest first."""
        return sorted(
            (s.current_txn_first_offset, pid)
            for pid, s in self.producers.items()
            if s.current_txn_first_offset is not None
        )

    @property
    def first_unstable_offset(self) -> int | None:
        """``firstUndecidedOffset``: the first offset of the earliest open transaction."""
        ongoing = self.ongoing_transactions()
        return ongoing[0][0] if ongoing else None


Seed = Literal["auto"] | str | os.PathLike[str] | None


def rebuild_producer_state(
    path: str | os.PathLike[str],
    *,
    at: int | None = None,
    check_snapshots: bool = False,
    seed: Seed = "auto",
    cleaned_to: int | Literal["auto"] | None = "auto",
    expiration_ms: int | None = DEFAULT_PRODUCER_ID_EXPIRATION_MS,
) -> ProducerStateReport:
    """Rebuild the producer state of the partition directory ``path`` at offset ``at``
    (exclusive; default the log end offset).

    ``seed="auto"`` rebuilds from the log alone when it starts at offset 0, else from the
    earliest readable snapshot at or after the log start offset (and at or below ``at``), as
    the producers of deleted segments are only known from snapshots; ``None`` never seeds; a
    path seeds from that snapshot file. ``cleaned_to="auto"`` reads the partition's entry in
    the parent's ``cleaner-offset-checkpoint``. ``check_snapshots`` compares every snapshot
    from the starting offset up to the end offset with the state rebuilt up to its offset.
    """
    if at is not None and at < 0:
        raise ValueError(f"at must be an offset (>= 0), not {at}")
    partition = Partition.open(path)
    log_start = partition.log_start_offset or 0
    if cleaned_to == "auto":
        cleaned_to = _cleaner_checkpoint(partition)
    checks: list[SnapshotCheck] = []
    seed_file, seed_state = _choose_seed(partition, seed, log_start, at, checks)
    start = log_start if seed_file is None else max(log_start, seed_file.offset)
    loader = ProducerStateLoader(seed_state, cleaned_to=cleaned_to)

    pending: deque[SnapshotFile] = deque()
    for snap in partition.snapshots if check_snapshots else ():
        if seed_file is not None and snap.path == seed_file.path:
            checks.append(SnapshotCheck(snap.path, snap.offset, "seed", reason="loaded from it"))
        elif any(c.path == snap.path for c in checks):
            continue  # unreadable, passed over while choosing the seed: listed already
        elif snap.offset < start or (seed_file is None and 0 < start == snap.offset):
            # The broker deletes snapshots at or below the log start offset on loading.
            reason = f"not above the offset loading started at ({start})"
            checks.append(SnapshotCheck(snap.path, snap.offset, "not_checked", reason=reason))
        elif at is not None and snap.offset > at:
            reason = f"above the offset asked for ({at})"
            checks.append(SnapshotCheck(snap.path, snap.offset, "not_checked", reason=reason))
        else:
            pending.append(snap)
    if not check_snapshots:
        checks.clear()

    def compare(snap: SnapshotFile) -> None:
        checks.append(_check_snapshot(snap, loader, cleaned_to, expiration_ms))

    log_end: int | None = None
    report = Report()
    for batch in _producer_batches(partition, report, loader):
        log_end = batch.next_offset if log_end is None else max(log_end, batch.next_offset)
        while pending and batch.last_offset >= pending[0].offset:
            compare(pending.popleft())
        if at is not None and batch.last_offset >= at:
            break
        if batch.last_offset < start:
            continue
        loader.append(batch)
    if log_end is None and partition.segments:
        log_end = partition.segments[-1].base_offset
    while pending:
        compare(pending.popleft())
    checks.sort(key=lambda c: (c.offset, str(c.path)))
    end = at if at is not None else max(log_end or 0, start)
    return ProducerStateReport(
        path=partition.path,
        topic=partition.topic,
        partition=partition.partition,
        start_offset=start,
        end_offset=end,
        log_end_offset=log_end if at is None else None,
        seed=None if seed_file is None else seed_file.path,
        cleaned_to=cleaned_to,
        producers=loader.producers,
        anomalies=loader.anomalies,
        explained=loader.explained,
        snapshots=checks,
        batches=loader.batches,
        truncated_bytes=sum(t.size for t in report.truncated),
    )


def _producer_batches(
    partition: Partition, report: Report, loader: ProducerStateLoader
) -> Iterator[Batch]:
    """Every batch of every segment in order, markers decoded, CRCs computed; damage that
    leaves no batch to yield (broken framing) goes straight to the loader's anomalies."""
    for segment in partition.segments:
        seen_errors = len(report.errors)
        attached: set[int] = set()
        for batch in iter_batches(
            str(segment.log),
            records=_is_marker,
            verify_crc="report",
            errors="skip",
            report=report,
        ):
            if batch.error is not None:
                attached.add(id(batch.error))
            yield batch
        for exc in report.errors[seen_errors:]:
            if id(exc) in attached:
                continue
            loader.anomalies.append(
                Anomaly(
                    AnomalyKind.DAMAGED_BATCH,
                    -1,
                    -1,
                    getattr(exc, "file", None) or str(segment.log),
                    getattr(exc, "position", None),
                    getattr(exc, "base_offset", None),
                    None,
                    f"the rest of the segment cannot be read: {getattr(exc, 'reason', exc)}",
                )
            )


def _is_marker(batch: Batch) -> bool:
    return batch.is_control and batch.producer_id >= 0


def _cleaner_checkpoint(partition: Partition) -> int | None:
    checkpoint = partition.path.parent / CLEANER_OFFSET_CHECKPOINT
    if partition.topic is None or partition.partition is None or not checkpoint.is_file():
        return None
    with contextlib.suppress(KafkaFormatError, OSError):
        return read_offset_checkpoint(checkpoint).get(
            TopicPartition(partition.topic, partition.partition)
        )
    return None


def _choose_seed(
    partition: Partition,
    seed: Seed,
    log_start: int,
    at: int | None,
    checks: list[SnapshotCheck],
) -> tuple[SnapshotFile | None, list[ProducerState]]:
    if seed is None:
        return None, []
    if seed != "auto":
        chosen = Path(seed)
        snapshot = read_producer_snapshot(chosen)
        if snapshot.offset is None:
            raise KafkaFormatError(
                "not named <offset>.snapshot: its offset is unknown", file=str(chosen)
            )
        if at is not None and snapshot.offset > at:
            raise KafkaFormatError(
                f"the snapshot is at offset {snapshot.offset}, above --at {at}", file=str(chosen)
            )
        return SnapshotFile(snapshot.offset, chosen), _states(snapshot)
    if log_start == 0:
        return None, []
    for snap in partition.snapshots:
        if snap.offset < log_start or (at is not None and snap.offset > at):
            continue
        try:
            snapshot = read_producer_snapshot(snap.path)
        except KafkaFormatError as exc:
            # As loadFromSnapshot: a corrupt snapshot is passed over for the next one.
            checks.append(SnapshotCheck(snap.path, snap.offset, "unreadable", reason=str(exc)))
            continue
        return snap, _states(snapshot)
    return None, []


def _states(snapshot: ProducerSnapshot) -> list[ProducerState]:
    return [ProducerState.from_snapshot_entry(e) for e in snapshot.entries]


def _check_snapshot(
    snap: SnapshotFile,
    loader: ProducerStateLoader,
    cleaned_to: int | None,
    expiration_ms: int | None,
) -> SnapshotCheck:
    try:
        stored = read_producer_snapshot(snap.path)
    except KafkaFormatError as exc:
        return SnapshotCheck(snap.path, snap.offset, "unreadable", reason=str(exc))
    differences = diff_snapshot(
        loader.producers,
        stored,
        clock=loader.clock if loader.clock >= 0 else None,
        expiration_ms=expiration_ms,
        cleaned_to=cleaned_to,
    )
    unexplained = any(d.explained_by is None for d in differences)
    return SnapshotCheck(
        snap.path,
        snap.offset,
        "mismatch" if unexplained else "ok",
        differences,
        entries=len(stored.entries),
    )
