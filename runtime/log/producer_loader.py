"""The loader (:class:`ProducerStateLoader`): batches applied one after another as a loading
broker applies them, each checked as the partition leader checked the append."""

from __future__ import annotations

from collections.abc import Iterable

from ..files.snapshot import ProducerSnapshotEntry
from ..model import Batch, ControlType, increment_sequence
from .producer_state import (
    NO_PRODUCER_EPOCH,
    NO_TIMESTAMP,
    Anomaly,
    AnomalyKind,
    BatchMetadata,
    ProducerState,
    in_sequence,
    make_anomaly,
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
            found.append(
                make_anomaly(AnomalyKind.DAMAGED_BATCH, batch, f"not applied: {batch.error}")
            )
            return self._keep(found)
        if batch.crc_valid is False:
            # The loader does not check CRCs (FileRecords.batches()): it applies the header.
            found.append(
                make_anomaly(
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
                make_anomaly(
                    AnomalyKind.DUPLICATE_BATCH,
                    batch,
                    f"sequences {first_seq}..{last_seq} were already written at offsets "
                    f"{duplicate.first_offset}..{duplicate.last_offset}",
                )
            ]
        if epoch < view.epoch:
            return [
                make_anomaly(
                    AnomalyKind.EPOCH_REGRESSION,
                    batch,
                    f"epoch {epoch} is below the current epoch {view.epoch} (a fenced producer)",
                )
            ]
        found = []
        problem = _check_sequence(view, epoch, first_seq) if has_sequence else None
        if problem is not None:
            anomaly = make_anomaly(AnomalyKind.SEQUENCE_GAP, batch, problem)
            explained = self._cleaned_after(batch.producer_id)
            if not explained:
                return [anomaly]  # refused here, before the transaction check
            found.append(_explain(anomaly, explained))
        if view.current_txn_first_offset is not None and not batch.is_transactional:
            found.append(
                make_anomaly(
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
                make_anomaly(
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
                make_anomaly(
                    AnomalyKind.EPOCH_REGRESSION,
                    batch,
                    f"{name} marker with epoch {epoch}, below the current epoch {view.epoch}",
                )
            )
        elif view.coordinator_epoch > coordinator_epoch:
            found.append(
                make_anomaly(
                    AnomalyKind.COORDINATOR_EPOCH_REGRESSION,
                    batch,
                    f"{name} marker with coordinator epoch {coordinator_epoch}, below "
                    f"{view.coordinator_epoch} (a zombie coordinator)",
                )
            )
        refused = bool(found)
        if not refused and view.current_txn_first_offset is None:
            # Kafka accepts it (an empty transaction on this partition), so the view does too.
            anomaly = make_anomaly(
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
    if in_sequence(last, first_seq):
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
