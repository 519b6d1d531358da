"""Which transactional records a ``read_committed`` consumer would never see.

Kafka's consumer gets a list of aborted transactions (producer id, first offset) with each
fetch, built by the broker from the ``.txnindex`` files, and walks the batches: once a batch
reaches an aborted transaction's first offset, that producer's transactional batches are
dropped until its ABORT marker (``CompletedFetch.nextFetchedRecord``). With no broker we
build the same list from the ABORT markers in the log and from the ``.txnindex`` files,
then apply the consumer's walk unchanged.

A read_committed fetch also never goes past the last stable offset: the first offset of the
earliest transaction still open, or the end of the log when none is (``UnifiedLog``'s
``firstUnstableOffset``, which ``FetchIsolation.TXN_COMMITTED`` reads up to). Records at or
after it, transactional or not, are not returned. A segment read alone may hold transactions
whose markers lie in a later segment of its partition: those segments are read ahead (their
batch headers, and the markers) so that a committed transaction is not taken for an open one.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from os import PathLike
from pathlib import Path

import numpy as np

from ..errors import KafkaFormatError
from ..files.names import FileKind, segment_file_name
from ..files.txnindex import TransactionIndex
from ..format import layout
from ..format.batches import ReadOptions, read_batch, read_header
from ..format.framing import Frame, iter_frames
from ..kernels import fastscan as fs
from ..model import Batch, ControlType, Record
from .plan import NOT_A_MARKER, Options, crc_holds, marker_types
from .request import ReadRequest
from .sources import LogInput, Source, partition_inputs

Partition = tuple[str | None, int | None]


#: The offset a transaction still open at the end of the log "ends" at: nothing after its
#: first offset is seen by a read_committed consumer (see the last stable offset).
OPEN_END = (1 << 63) - 1


@dataclass(slots=True)
class AbortedRanges:
    """What a read_committed consumer drops, as offset ranges: per producer, the offsets
    ``[first, last]`` its aborted transactions span (``last``: the ABORT marker's offset, or
    :data:`OPEN_END` for a transaction without one).

    This is the one rule every reader applies (``iter_records``, the columnar path, ``dump
    --isolation read_committed`` and Spark's tasks, which cannot see the markers of other
    splits and get the ranges from the driver). It is the consumer's own walk
    (``CompletedFetch.nextFetchedRecord``: once a batch reaches an aborted transaction's first
    offset, the producer's transactional batches are skipped until its ABORT marker) written
    as ranges: a producer's transactions never overlap, so a batch is inside one exactly when
    it overlaps the range. Ranges that overlap (the same transaction from a ``.txnindex`` and
    from the markers) are merged.
    """

    firsts: dict[int, list[int]] = field(default_factory=dict)
    lasts: dict[int, list[int]] = field(default_factory=dict)

    @classmethod
    def of(cls, ranges: Iterable[tuple[int, int, int]]) -> AbortedRanges:
        """From (producer id, first offset, last offset) triples, in any order."""
        result = cls()
        for pid, first, last in sorted(ranges):
            firsts = result.firsts.setdefault(pid, [])
            lasts = result.lasts.setdefault(pid, [])
            if firsts and first <= lasts[-1]:
                lasts[-1] = max(lasts[-1], last)
            else:
                firsts.append(first)
                lasts.append(last)
        return result

    def __bool__(self) -> bool:
        return bool(self.firsts)

    def drops(
        self,
        producer_id: int,
        base_offset: int,
        last_offset: int,
        is_transactional: bool,
        is_control: bool,
    ) -> bool:
        """Whether a transactional data batch lies in one of its producer's aborted
        transactions (control batches are never records a consumer sees: the caller drops
        them apart)."""
        if producer_id < 0 or not is_transactional or is_control:
            return False
        firsts = self.firsts.get(producer_id)
        if not firsts:
            return False
        i = bisect_right(firsts, last_offset) - 1
        return i >= 0 and base_offset <= self.lasts[producer_id][i]


@dataclass(slots=True)
class AbortedTransactions:
    """Aborted transactions per partition, and the transactions still open at the end."""

    #: (first offset, producer id) of every aborted transaction, per partition.
    aborted: dict[Partition, set[tuple[int, int]]] = field(default_factory=dict)
    #: producer id -> first offset of a transaction that has no marker yet, per partition.
    open: dict[Partition, dict[int, int]] = field(default_factory=dict)
    #: (partition, producer id, first offset) -> the offset of the transaction's ABORT marker.
    ends: dict[tuple[Partition, int, int], int] = field(default_factory=dict)

    def add(
        self, partition: Partition, producer_id: int, first_offset: int, last_offset: int
    ) -> None:
        """An aborted transaction: its first offset and its ABORT marker's."""
        self.aborted.setdefault(partition, set()).add((first_offset, producer_id))
        key = (partition, producer_id, first_offset)
        self.ends[key] = max(self.ends.get(key, last_offset), last_offset)

    @classmethod
    def known(
        cls, partition: Partition, ranges: Iterable[tuple[int, int, int]]
    ) -> AbortedTransactions:
        """Aborted transactions known before a read: (producer id, first offset, last offset)
        triples, the last :data:`OPEN_END` for one without a marker (a Spark task's, from the
        driver, which ends the task's window at the last stable offset already)."""
        result = cls()
        for producer_id, first, last in ranges:
            result.add(partition, producer_id, first, last)
        return result

    def ranges(self, partition: Partition) -> AbortedRanges:
        """The partition's aborted transactions as :class:`AbortedRanges`."""
        return AbortedRanges.of(
            (pid, first, self.ends[(partition, pid, first)])
            for first, pid in self.aborted.get(partition, ())
        )

    def stable_offset(self, partition: Partition) -> int | None:
        """The last stable offset of a partition: the first offset of its earliest open
        transaction; None when every transaction has its marker (the end of the log)."""
        ongoing = self.open.get(partition)
        return min(ongoing.values()) if ongoing else None

    def unstable(self) -> list[tuple[Partition, int, int]]:
        """(partition, last stable offset, producer id of the transaction that holds it) of
        every partition a read_committed read stops early in."""
        found = []
        for tp, ongoing in self.open.items():
            if ongoing:
                producer_id, first = min(ongoing.items(), key=lambda item: (item[1], item[0]))
                found.append((tp, first, producer_id))
        return found

    def filter(self, batches: Iterable[Batch]) -> Iterator[Record]:
        """The data records of ``batches`` that a read_committed consumer receives."""
        admission = Admission(self)
        for batch in batches:
            if batch.records and admission.admits_batch(batch):
                yield from batch.records


class Admission:
    """read_committed's per-batch decision, from the batch header alone: nothing at or past
    the partition's last stable offset, no control batch, no data batch of an aborted
    transaction (:class:`AbortedRanges`). The one rule ``iter_records``, the columnar path
    and ``dump --isolation read_committed`` apply; Spark's tasks apply its ranges."""

    __slots__ = ("aborted", "ranges", "stable")

    def __init__(self, aborted: AbortedTransactions) -> None:
        self.aborted = aborted
        self.ranges: dict[Partition, AbortedRanges] = {}
        self.stable: dict[Partition, int | None] = {}

    def stable_offset(self, tp: Partition) -> int | None:
        if tp not in self.stable:
            self.stable[tp] = self.aborted.stable_offset(tp)
        return self.stable[tp]

    def admits_batch(self, batch: Batch) -> bool:
        """:meth:`admits` for a batch read by the reference reader."""
        return self.admits(
            (batch.topic, batch.partition),
            batch.producer_id,
            batch.base_offset,
            batch.last_offset,
            batch.is_control,
            batch.is_transactional,
        )

    def admits(
        self,
        tp: Partition,
        producer_id: int,
        base_offset: int,
        last_offset: int,
        is_control: bool,
        is_transactional: bool,
    ) -> bool:
        """Whether a consumer would see the batch's records (if it has any)."""
        if is_control:
            return False
        stable = self.stable_offset(tp)
        if stable is not None and base_offset >= stable:
            return False  # at or past the last stable offset: the fetch ends before it
        ranges = self.ranges.get(tp)
        if ranges is None:
            ranges = self.ranges[tp] = self.aborted.ranges(tp)
        return not ranges.drops(producer_id, base_offset, last_offset, is_transactional, is_control)


def has_abort_marker(batch: Batch) -> bool:
    """Whether a decoded control batch holds an ABORT marker."""
    return bool(batch.records) and any(
        r.control is not None and r.control.type == ControlType.ABORT for r in batch.records
    )


@dataclass(slots=True, frozen=True)
class TxnEvent:
    """What the aborted-transactions walk needs of a transactional batch: whose it is, where
    it starts, whether it is a marker (and an ABORT one), whether it is intact (a damaged data
    batch opens no transaction; a damaged marker ends one, aborting nothing)."""

    partition: Partition
    producer_id: int
    base_offset: int
    is_control: bool
    intact: bool
    abort: bool

    @classmethod
    def of(cls, batch: Batch) -> TxnEvent:
        return cls(
            (batch.topic, batch.partition),
            batch.producer_id,
            batch.base_offset,
            batch.is_control,
            batch.error is None,
            has_abort_marker(batch),
        )


def collect_aborted(
    batches: Iterable[Batch], source: ReadRequest | Source | None = None
) -> AbortedTransactions:
    """Aborted and open transactions from the markers in ``batches`` (control batches must be
    decoded) and from the ``.txnindex`` files beside the segments of ``source`` (the read's
    request, whose inputs are not resolved again)."""
    return collect_aborted_events(
        (TxnEvent.of(b) for b in batches if b.producer_id >= 0 and b.is_transactional), source
    )


class AbortedWalk:
    """The walk that finds aborted transactions, one transactional batch at a time, in log
    order (``TxnEvent``): a producer's intact data batch opens its transaction, its marker
    closes it, and an ABORT marker makes it an aborted one (first offset, marker offset). The
    one walk behind :func:`collect_aborted_events` and Spark's split planning."""

    __slots__ = ("current", "result")

    def __init__(self) -> None:
        self.result = AbortedTransactions()
        #: producer id -> first offset of its transaction still open, per partition.
        self.current: dict[Partition, dict[int, int]] = {}

    def feed(self, event: TxnEvent) -> None:
        ongoing = self.current.setdefault(event.partition, {})
        if event.is_control:
            first = ongoing.pop(event.producer_id, None)
            if first is not None and event.abort:
                self.result.add(event.partition, event.producer_id, first, event.base_offset)
        elif event.intact:
            ongoing.setdefault(event.producer_id, event.base_offset)

    def opened(self, partition: Partition, producer_id: int) -> bool:
        """Whether the producer has a transaction open (its marker is worth decoding)."""
        return producer_id in self.current.get(partition, ())

    def is_open(self, partition: Partition) -> bool:
        """Whether some transaction of the partition has no marker yet."""
        return bool(self.current.get(partition))

    def stable_offset(self, partition: Partition) -> int | None:
        """The partition's last stable offset so far: the first offset of its earliest
        transaction with no marker yet; None when none is open."""
        ongoing = self.current.get(partition)
        return min(ongoing.values()) if ongoing else None

    def done(self) -> AbortedTransactions:
        """The aborted transactions, and those still open at the end."""
        self.result.open = {tp: dict(txns) for tp, txns in self.current.items() if txns}
        return self.result


def collect_aborted_events(
    events: Iterable[TxnEvent], source: ReadRequest | Source | None = None
) -> AbortedTransactions:
    """``collect_aborted`` over the transactional batches' events, in log order: the columnar
    reader makes them from its kernels' checks, without decoding a healthy batch."""
    walk = AbortedWalk()
    for event in events:
        walk.feed(event)
    result = walk.done()
    if isinstance(source, str | PathLike):
        source = ReadRequest.of(source)
    if isinstance(source, ReadRequest):
        # side files exist only beside segments found by path: inputs without one are skipped
        _add_txn_indexes(result, source.inputs)
        if result.open:
            _read_ahead(result, source.inputs)
    return result


def table_events(
    table: np.ndarray,
    buf: np.ndarray,
    view: memoryview,
    shift: int,
    name: str | None,
    topic: str | None,
    partition: int | None,
    opts: Options,
    misplaced: set[int] | frozenset[int] = frozenset(),
) -> Iterator[TxnEvent]:
    """The transactional batches of a frame table (``fastscan.scan_frames``' over ``buf``;
    ``shift``: where ``buf`` starts in the file) as the walk needs them: intact data batches
    (their CRC checked by a kernel) and markers in Kafka's form (``plan.marker_types``)
    without decoding; any other, damaged or unusual, through the reference decoder. Rows in
    ``misplaced`` (offsets no batch of the segment has: ``segment_offsets``) are damaged."""
    attributes = table[:, fs.F_ATTR]
    wanted = (
        (table[:, fs.F_MAGIC] == 2)
        & (table[:, fs.F_HEADER_OK] == 1)
        & (table[:, fs.F_PID] >= 0)
        & ((attributes & layout.V2_ATTR_IS_TRANSACTIONAL_MASK) != 0)
    )
    control = (attributes & layout.V2_ATTR_IS_CONTROL_MASK) != 0
    marker = marker_types(buf, table, wanted & control, opts.verify_crc)
    intact = crc_holds(buf, table, wanted & ~control, opts.verify_crc)
    tp = (topic, partition)
    for i in np.flatnonzero(wanted).tolist():
        pid, base = int(table[i, fs.F_PID]), int(table[i, fs.F_BASE])
        if i in misplaced:
            yield TxnEvent(tp, pid, base, bool(control[i]), False, False)
            continue
        if marker[i] != NOT_A_MARKER:
            yield TxnEvent(tp, pid, base, True, True, marker[i] == layout.CONTROL_RECORD_TYPE_ABORT)
            continue
        if intact[i]:
            yield TxnEvent(tp, pid, base, False, True, False)
            continue
        pos, size = int(table[i, fs.F_POS]), int(table[i, fs.F_SIZE])
        frame = Frame(pos + shift, base, 2, view[pos : pos + size])
        try:
            options = ReadOptions(opts.verify_crc, bool(control[i]), opts.max_bytes)
            batch = read_batch(frame, options, file=name)
        except KafkaFormatError:
            # Damaged: opens no transaction; a damaged marker ends one, aborting nothing.
            yield TxnEvent(tp, pid, base, bool(control[i]), False, False)
            continue
        batch.topic, batch.partition = tp
        yield TxnEvent.of(batch)


def _read_ahead(result: AbortedTransactions, inputs: tuple[LogInput, ...]) -> None:
    """Settle transactions left open at the end of a segment read alone from the markers of
    the later segments of its partition directory, as the broker would have them."""
    if len(inputs) != 1 or inputs[0].path is None or inputs[0].base_offset is None:
        return  # a partition or log directory is read whole; other files have no successors
    (log,) = inputs
    tp = (log.topic, log.partition)
    ongoing = result.open.get(tp)
    if not ongoing:
        return
    later = [s for s in partition_inputs(log.path.parent) if (s.base_offset or 0) > log.base_offset]
    for segment in later:
        _settle_from(segment, tp, ongoing, result)
        if not ongoing:
            break
    if not ongoing:
        del result.open[tp]


def _settle_from(
    segment: LogInput, tp: Partition, ongoing: dict[int, int], result: AbortedTransactions
) -> None:
    """Close the transactions of ``ongoing`` whose markers ``segment`` holds (headers are
    read for every batch; only the control batches of those producers are decoded)."""
    options = ReadOptions(verify_crc="report")
    name = str(segment.path)
    with segment.open() as view:
        try:
            for frame in iter_frames(view, file=name, tails=[]):
                if frame.magic != 2:
                    continue
                header = read_header(frame, file=name)
                if not header.is_control or header.producer_id not in ongoing:
                    continue
                marker = read_batch(frame, options, file=name)
                first = ongoing.pop(header.producer_id)
                if has_abort_marker(marker):
                    result.add(tp, header.producer_id, first, header.base_offset)
                if not ongoing:
                    return
        except KafkaFormatError:
            return  # damage ends what can be known; the transaction stays open


def _add_txn_indexes(result: AbortedTransactions, inputs: tuple[LogInput, ...]) -> None:
    for log in inputs:
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
            tp = (log.topic, log.partition)
            result.add(tp, txn.producer_id, txn.first_offset, txn.last_offset)
