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
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from ..errors import KafkaFormatError
from ..files.checkpoints import CLEANER_OFFSET_CHECKPOINT, TopicPartition, read_offset_checkpoint
from ..model import Batch, Report, decrement_sequence
from ..read.reader import iter_batches
from .partition import Partition, SnapshotFile
from .producer_loader import ProducerStateLoader
from .producer_snapshots import (
    FieldDifference,
    Seed,
    SnapshotCheck,
    check_snapshot,
    choose_seed,
    diff_snapshot,
)
from .producer_state import (
    DEFAULT_PRODUCER_ID_EXPIRATION_MS,
    NUM_BATCHES_TO_RETAIN,
    SNAPSHOT_FIELDS,
    Anomaly,
    AnomalyKind,
    BatchMetadata,
    ProducerState,
)
from .producer_state import NO_PRODUCER_EPOCH as NO_PRODUCER_EPOCH  # importable from here too
from .producer_state import NO_SEQUENCE as NO_SEQUENCE
from .producer_state import NO_TIMESTAMP as NO_TIMESTAMP

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
    "producer_batches",
    "rebuild_producer_state",
]

#: ``ProducerStateEntry.NUM_BATCHES_TO_RETAIN``: batches remembered per producer for duplicates.

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
    seed_file, seed_state = choose_seed(partition, seed, log_start, at, checks)
    start = log_start if seed_file is None else max(log_start, seed_file.offset)
    loader = ProducerStateLoader(seed_state, cleaned_to=cleaned_to)

    pending = _snapshots_to_check(partition, seed_file, start, at, checks, check_snapshots)
    report = Report()
    log_end = _load(
        partition, report, loader, pending, checks, start, at, cleaned_to, expiration_ms
    )
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


def _snapshots_to_check(
    partition: Partition,
    seed_file: SnapshotFile | None,
    start: int,
    at: int | None,
    checks: list[SnapshotCheck],
    check_snapshots: bool,
) -> deque[SnapshotFile]:
    """The snapshots to compare while loading; those not compared go to ``checks`` with
    why (the seed, below where loading starts, above ``at``)."""
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
    return pending


def _load(
    partition: Partition,
    report: Report,
    loader: ProducerStateLoader,
    pending: deque[SnapshotFile],
    checks: list[SnapshotCheck],
    start: int,
    at: int | None,
    cleaned_to: int | None,
    expiration_ms: int | None,
) -> int | None:
    """Apply the batches from ``start`` up to ``at``, comparing each pending snapshot with
    the state once the log has reached its offset (its check goes to ``checks``); returns
    the log end offset seen."""

    def compare_up_to(offset: int | None) -> None:
        while pending and (offset is None or offset >= pending[0].offset):
            snap = pending.popleft()
            checks.append(check_snapshot(snap, loader, cleaned_to, expiration_ms))

    log_end: int | None = None
    for batch in producer_batches(partition, report, loader):
        log_end = batch.next_offset if log_end is None else max(log_end, batch.next_offset)
        compare_up_to(batch.last_offset)
        if at is not None and batch.last_offset >= at:
            break
        if batch.last_offset < start:
            continue
        loader.append(batch)
    if log_end is None and partition.segments:
        log_end = partition.segments[-1].base_offset
    compare_up_to(None)
    return log_end


def producer_batches(
    partition: Partition, report: Report, loader: ProducerStateLoader
) -> Iterator[Batch]:
    """Every batch of every segment in order, markers decoded, CRCs computed; damage that
    leaves no batch to yield (broken framing) goes straight to the loader's anomalies. The
    one read of a partition for producer state (``producers``, ``producers --transactions``)."""
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
