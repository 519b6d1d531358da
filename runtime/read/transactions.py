"""Which transactional records a ``read_committed`` consumer would never see.

Kafka's consumer gets a list of aborted transactions (producer id, first offset) with each
fetch, built by the broker from the ``.txnindex`` files, and walks the batches: once a batch
reaches an aborted transaction's first offset, that producer's transactional batches are
dropped until its ABORT marker (``CompletedFetch.nextFetchedRecord``). With no broker we
build the same list from the ABORT markers in the log and from the ``.txnindex`` files,
then apply the consumer's walk unchanged.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from os import PathLike
from pathlib import Path

from ..errors import KafkaFormatError
from ..files.names import FileKind, segment_file_name
from ..files.txnindex import TransactionIndex
from ..model import Batch, ControlType, Record
from .sources import Source, resolve

Partition = tuple[str | None, int | None]


@dataclass(slots=True)
class AbortedTransactions:
    """Aborted transactions per partition, and the transactions still open at the end."""

    #: (first offset, producer id) of every aborted transaction, per partition.
    aborted: dict[Partition, set[tuple[int, int]]] = field(default_factory=dict)
    #: producer id -> first offset of a transaction that has no marker yet, per partition.
    open: dict[Partition, dict[int, int]] = field(default_factory=dict)

    def add(self, partition: Partition, producer_id: int, first_offset: int) -> None:
        self.aborted.setdefault(partition, set()).add((first_offset, producer_id))

    def filter(self, batches: Iterable[Batch]) -> Iterator[Record]:
        """The data records of ``batches`` that a read_committed consumer receives."""
        pending: dict[Partition, list[tuple[int, int]]] = {}
        dropping: dict[Partition, set[int]] = {}
        for batch in batches:
            tp = (batch.topic, batch.partition)
            if tp not in pending:
                pending[tp] = sorted(self.aborted.get(tp, ()))
                dropping[tp] = set()
            queue, producers = pending[tp], dropping[tp]
            if batch.producer_id >= 0:
                while queue and queue[0][0] <= batch.last_offset:
                    producers.add(heapq.heappop(queue)[1])
                if batch.is_control:
                    # A damaged marker (skip mode) of a producer known to be aborting can only
                    # be that transaction's ABORT: it ends the dropping all the same.
                    if _has_abort_marker(batch) or batch.error is not None:
                        producers.discard(batch.producer_id)
                    continue
                if batch.is_transactional and (
                    batch.producer_id in producers or self._still_open(tp, batch)
                ):
                    continue
            if batch.is_control or not batch.records:
                continue
            yield from batch.records

    def _still_open(self, tp: Partition, batch: Batch) -> bool:
        first = self.open.get(tp, {}).get(batch.producer_id)
        return first is not None and batch.base_offset >= first


def _has_abort_marker(batch: Batch) -> bool:
    return bool(batch.records) and any(
        r.control is not None and r.control.type == ControlType.ABORT for r in batch.records
    )


def collect_aborted(batches: Iterable[Batch], source: Source | None = None) -> AbortedTransactions:
    """Aborted and open transactions from the markers in ``batches`` (control batches must be
    decoded) and from the ``.txnindex`` files beside the segments of ``source``."""
    result = AbortedTransactions()
    current: dict[Partition, dict[int, int]] = {}
    for batch in batches:
        if batch.producer_id < 0 or not batch.is_transactional:
            continue
        tp = (batch.topic, batch.partition)
        ongoing = current.setdefault(tp, {})
        if batch.is_control:
            first = ongoing.pop(batch.producer_id, None)
            if first is not None and _has_abort_marker(batch):
                result.add(tp, batch.producer_id, first)
        elif batch.error is None:
            ongoing.setdefault(batch.producer_id, batch.base_offset)
    result.open = {tp: dict(txns) for tp, txns in current.items() if txns}
    if isinstance(source, str | PathLike):
        _add_txn_indexes(result, source)
    return result


def _add_txn_indexes(result: AbortedTransactions, source: Source) -> None:
    for log in resolve(source):
        if log.path is None or log.base_offset is None:
            continue
        path = Path(log.path).with_name(segment_file_name(log.base_offset, FileKind.TXN_INDEX))
        if not path.exists():
            continue
        try:
            index = TransactionIndex.open(path, log.base_offset, strict=False)
        except KafkaFormatError:
            continue  # a damaged index must not hide what the markers tell
        for txn in index.entries:
            result.add((log.topic, log.partition), txn.producer_id, txn.first_offset)
