"""A partition's transactions, one by one: what ``kafka-format producers --transactions``
prints, and the answer to a hanging transaction.

``producers`` (:mod:`.producers`) rebuilds the state a broker holds, which keeps only each
producer's transaction still open. Here every transaction of every transactional producer
is kept: committed, aborted or open, with its first offset (its first data batch), its last
offset (the marker's, or the last data batch's while open), the marker's offset and type,
its data batches, records and bytes, and how long it lasted by the batches' own timestamps
(the producer's CreateTime, or the broker's LogAppendTime where the topic has it): from the
first data batch's first timestamp to the marker's, or for an open one to the partition's
last timestamp (the largest batch timestamp: the only clock a log knows) or a given "now".

The rules are the runtime's, applied to the same batches:

* the batches are read as ``producers`` reads them (``iter_batches`` with the markers decoded,
  CRCs computed, damage skipped and reported) and each goes through a
  :class:`.producer_loader.ProducerStateLoader` too, so that damage is reported in
  ``producers``' words and the partition's clock is the loader's;
* a transaction opens at a producer's first intact transactional data batch and ends at its
  next control batch, as :class:`..read.transactions.AbortedWalk` walks them for
  read_committed; the marker's type is its decoded control record's (ABORT by
  :func:`..read.transactions.has_abort_marker`). A damaged marker (or an empty one, which
  only the cleaner leaves) ends the transaction aborting nothing: its outcome is ``unknown``;
* a marker of a producer with no open transaction is an empty transaction: Kafka writes one
  to every partition the transaction was registered with, so aborting a transaction that
  sent nothing here leaves a lone ABORT marker (``producers`` lists these as
  ``marker_without_transaction``).

An open transaction is *hanging* once it has been open longer than the threshold (default
15 minutes, ``transaction.max.timeout.ms``'s default: no coordinator lets a transaction run
longer, so one still open is one the coordinator forgot, the state ``kafka-transactions.sh
find-hanging`` looks for on a live broker).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import PurePath

from ..model import Batch, ControlType, Report
from ..read.transactions import AbortedWalk, TxnEvent, has_abort_marker
from .partition import Partition
from .producer_loader import ProducerStateLoader
from .producer_state import NO_TIMESTAMP, Anomaly, AnomalyKind
from .producers import producer_batches

#: ``transaction.max.timeout.ms``'s default: 15 minutes.
DEFAULT_HANGING_AFTER_MS = 15 * 60 * 1000
#: A v2 batch's timestampType bit for LogAppendTime.
_LOG_APPEND_TIME = 1


class TxnStatus(StrEnum):
    """How a transaction ended on this partition, if it did."""

    COMMITTED = "committed"
    ABORTED = "aborted"
    OPEN = "open"
    #: Ended by a control batch whose marker cannot be read (damaged, or emptied).
    UNKNOWN = "unknown"


@dataclass(slots=True)
class Transaction:
    """One transaction of one producer on one partition."""

    producer_id: int
    #: The epoch of its first data batch.
    producer_epoch: int
    status: TxnStatus
    first_offset: int
    #: The marker's offset, or the last data batch's last offset while open.
    last_offset: int
    #: The first data batch's first timestamp (the batches' own clock), None if unknown.
    first_timestamp: int | None
    #: The marker's timestamp; for an open transaction the time it is measured against.
    end_timestamp: int | None = None
    marker_offset: int | None = None
    #: ``COMMIT`` or ``ABORT`` (None while open, or when the marker cannot be read).
    marker_type: str | None = None
    batches: int = 0
    records: int = 0
    #: The data batches' sizes in the log, frame headers included.
    bytes: int = 0
    hanging: bool = False

    @property
    def duration_ms(self) -> int | None:
        if self.first_timestamp is None or self.end_timestamp is None:
            return None
        return self.end_timestamp - self.first_timestamp


@dataclass(slots=True)
class ProducerTransactions:
    """One transactional producer's transactions, in log order, and its empty ones."""

    producer_id: int
    transactions: list[Transaction] = field(default_factory=list)
    #: Markers with no data batch of the producer since its previous marker, by type.
    empty_committed: int = 0
    empty_aborted: int = 0


@dataclass(slots=True)
class PartitionTransactions:
    """Every transaction of one partition and what was found on the way."""

    path: PurePath
    topic: str | None
    partition: int | None
    log_start_offset: int
    #: The offset after the last batch read; None for a log with no batch.
    log_end_offset: int | None
    #: The largest batch timestamp of the partition (the log's clock); None without any.
    last_timestamp: int | None
    #: The wall clock open transactions are measured against, when given (epoch ms).
    now: int | None
    hanging_after_ms: int
    producers: dict[int, ProducerTransactions]
    #: Damaged batches, in ``producers``' words (the loader's).
    damaged: list[Anomaly]
    #: ``producers``' other anomalies (sequence gaps, fenced producers...), counted only.
    other_anomalies: int
    #: Bytes after the last whole batch of a segment.
    truncated_bytes: int = 0

    @property
    def reference_timestamp(self) -> int | None:
        """What an open transaction's age is measured against: ``now``, else the log's clock."""
        return self.now if self.now is not None else self.last_timestamp

    def transactions(self) -> list[Transaction]:
        """Every transaction, by first offset."""
        found = [t for p in self.producers.values() for t in p.transactions]
        return sorted(found, key=lambda t: (t.first_offset, t.producer_id))

    def with_status(self, status: TxnStatus) -> list[Transaction]:
        return [t for t in self.transactions() if t.status is status]

    def hanging(self) -> list[Transaction]:
        return [t for t in self.transactions() if t.hanging]

    def ongoing_transactions(self) -> list[tuple[int, int]]:
        """(first offset, producer id) of every open transaction, earliest first (as
        :meth:`.producers.ProducerStateReport.ongoing_transactions`)."""
        return sorted((t.first_offset, t.producer_id) for t in self.with_status(TxnStatus.OPEN))

    @property
    def last_stable_offset(self) -> int | None:
        """The first offset of the earliest open transaction: read_committed stops there;
        None when every transaction has its marker."""
        ongoing = self.ongoing_transactions()
        return ongoing[0][0] if ongoing else None

    @property
    def empty_transactions(self) -> int:
        return sum(p.empty_committed + p.empty_aborted for p in self.producers.values())

    @property
    def ok(self) -> bool:
        """No transaction hangs and no batch is damaged: the tool's one exit rule (1 for
        damage, as ``producers`` and every other command answer the same bytes)."""
        return not self.hanging() and not self.damaged


def partition_transactions(
    path: str | os.PathLike[str],
    *,
    hanging_after_ms: int = DEFAULT_HANGING_AFTER_MS,
    now: int | None = None,
) -> PartitionTransactions:
    """The transactions of the partition directory ``path``, from its log alone.

    An open transaction hangs when ``reference - first_timestamp > hanging_after_ms``, the
    reference being ``now`` (epoch ms) when given, else the partition's last timestamp.
    A log that no longer starts at offset 0 lost the data of the transactions its deleted
    segments held: their markers count as empty transactions here.
    """
    if hanging_after_ms < 0:
        raise ValueError(f"hanging_after_ms must be 0 or more, not {hanging_after_ms}")
    partition = Partition.open(path)
    loader = ProducerStateLoader()
    walk = _TransactionWalk()
    report = Report()
    log_end: int | None = None
    for batch in producer_batches(partition, report, loader):
        log_end = batch.next_offset if log_end is None else max(log_end, batch.next_offset)
        loader.append(batch)
        walk.feed(batch)
    clock = None if loader.clock == NO_TIMESTAMP else loader.clock
    result = PartitionTransactions(
        path=partition.path,
        topic=partition.topic,
        partition=partition.partition,
        log_start_offset=partition.log_start_offset or 0,
        log_end_offset=log_end,
        last_timestamp=clock,
        now=now,
        hanging_after_ms=hanging_after_ms,
        producers=walk.producers,
        damaged=[a for a in loader.anomalies if a.kind is AnomalyKind.DAMAGED_BATCH],
        other_anomalies=sum(a.kind is not AnomalyKind.DAMAGED_BATCH for a in loader.anomalies),
        truncated_bytes=sum(t.size for t in report.truncated),
    )
    reference = result.reference_timestamp
    for txn in walk.open.values():
        txn.end_timestamp = reference
        duration = txn.duration_ms
        txn.hanging = duration is not None and duration > hanging_after_ms
    return result


class _TransactionWalk:
    """Transactions, one batch at a time in log order. Which batch opens a transaction and
    which ends it is ``AbortedWalk``'s decision (read_committed's own walk), fed the same
    events; this only keeps each transaction's figures beside it."""

    __slots__ = ("open", "producers", "walk")

    def __init__(self) -> None:
        self.producers: dict[int, ProducerTransactions] = {}
        #: producer id -> its transaction still open.
        self.open: dict[int, Transaction] = {}
        self.walk = AbortedWalk()

    def feed(self, batch: Batch) -> None:
        if batch.magic < 2 or batch.producer_id < 0 or not batch.is_transactional:
            return
        tp = (batch.topic, batch.partition)
        was_open = self.walk.opened(tp, batch.producer_id)
        self.walk.feed(TxnEvent.of(batch))
        if batch.is_control:
            self._end(batch, was_open)
        elif batch.error is None and self.walk.opened(tp, batch.producer_id):
            self._add(batch)  # a damaged data batch opens nothing, nor counts in one

    def _producer(self, producer_id: int) -> ProducerTransactions:
        found = self.producers.get(producer_id)
        if found is None:
            found = self.producers[producer_id] = ProducerTransactions(producer_id)
        return found

    def _add(self, batch: Batch) -> None:
        txn = self.open.get(batch.producer_id)
        if txn is None:
            txn = self.open[batch.producer_id] = Transaction(
                batch.producer_id,
                batch.producer_epoch,
                TxnStatus.OPEN,
                first_offset=batch.base_offset,
                last_offset=batch.last_offset,
                first_timestamp=_first_timestamp(batch),
            )
            self._producer(batch.producer_id).transactions.append(txn)
        txn.last_offset = batch.last_offset
        txn.batches += 1
        txn.records += batch.records_count
        txn.bytes += batch.size

    def _end(self, batch: Batch, was_open: bool) -> None:
        marker = _marker_type(batch)
        txn = self.open.pop(batch.producer_id, None)
        if not was_open or txn is None:
            producer = self._producer(batch.producer_id)
            if marker is ControlType.COMMIT:
                producer.empty_committed += 1
            elif marker is ControlType.ABORT:
                producer.empty_aborted += 1
            return
        txn.last_offset = txn.marker_offset = batch.base_offset
        txn.end_timestamp = _marker_timestamp(batch)
        if marker is None:
            txn.status = TxnStatus.UNKNOWN
            return
        txn.marker_type = marker.name
        txn.status = TxnStatus.ABORTED if marker is ControlType.ABORT else TxnStatus.COMMITTED


def _marker_type(batch: Batch) -> ControlType | None:
    """COMMIT or ABORT from the decoded control record; None when it cannot be read."""
    if batch.error is not None or not batch.records:
        return None
    if has_abort_marker(batch):
        return ControlType.ABORT
    control = batch.records[0].control
    committed = control is not None and control.type == ControlType.COMMIT
    return ControlType.COMMIT if committed else None


def _first_timestamp(batch: Batch) -> int | None:
    # Under LogAppendTime the broker stamps only the max timestamp; the first one is the
    # producer's, on another clock than the marker's.
    if batch.timestamp_type == _LOG_APPEND_TIME:
        return batch.max_timestamp
    return batch.base_timestamp


def _marker_timestamp(batch: Batch) -> int | None:
    if batch.error is None and batch.records and batch.records[0].timestamp is not None:
        return batch.records[0].timestamp  # the control record's, as the loader takes it
    return batch.max_timestamp


__all__ = [
    "DEFAULT_HANGING_AFTER_MS",
    "PartitionTransactions",
    "ProducerTransactions",
    "Transaction",
    "TxnStatus",
    "partition_transactions",
]
