"""What ``recover`` rebuilds beside the kept batches, as a broker rebuilds it on recovery.

:class:`SegmentOut` is one output segment: the ``.log`` written batch by batch and its
``.index`` / ``.timeindex`` / ``.txnindex`` built from the kept batches by the rules of
``LogSegment.recover`` (storage/src/main/java/org/apache/kafka/storage/internals/log/
LogSegment.java): an offset index entry ``(batch.lastOffset, position)`` whenever more than
``index.interval.bytes`` were kept since the last entry (counted before the batch), with a
time index entry ``(largest timestamp so far, the last offset of the batch that had it)`` if
that timestamp grew; at the end the largest timestamp once more (``timeIndex().maybeAppend(...,
true)``), then both trimmed. Positions are those of the copy, so after dropped bytes they
point at the kept batches only.

:class:`PartitionBook` is what the partition's loader keeps across segments:
the producer state (``log.producer_loader``, ``LogSegment.updateProducerState``), the aborted
transactions it completes (``.txnindex`` entries with the last stable offset of
``ProducerStateManager.lastStableOffset``), the leader epoch cache (``cache.assign`` for each v2
batch whose epoch is above the latest) and the producer snapshots
(``ProducerStateManager.takeSnapshot``: at each kept segment's base offset, as a roll takes
them, and at the log end, as a clean shutdown does; ``LogLoader.recoverSegment`` takes them at
the end of each recovered segment's data, which is the next segment's base unless offsets were
compacted away there).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import BinaryIO

from kafka_format.schemas.offset_index import build_offset_index
from kafka_format.schemas.producer_snapshot import build_producer_snapshot
from kafka_format.schemas.time_index import build_time_index
from kafka_format.schemas.txn_index import build_txn_index

from ..files import kinds
from ..files.checkpoints import (
    LEADER_EPOCH_CHECKPOINT,
    EpochEntry,
    format_leader_epoch_checkpoint,
)
from ..files.names import FileKind, segment_file_name
from ..files.snapshot import ProducerSnapshotEntry, java_hashmap_order
from ..model import Batch, ControlType
from .producer_loader import ProducerStateLoader
from .producer_state import ProducerState

#: ``log.index.interval.bytes``' default (``LogConfig``).
DEFAULT_INDEX_INTERVAL_BYTES = 4096
#: ``RecordBatch.NO_TIMESTAMP``.
NO_TIMESTAMP = -1

_SNAPSHOT_FIELDS = ProducerSnapshotEntry.__dataclass_fields__


class SegmentOut:
    """One segment of the copy being written, and its indexes."""

    __slots__ = (
        "base_offset",
        "directory",
        "index",
        "index_interval_bytes",
        "last_index_entry",
        "log",
        "max_timestamp",
        "offset_of_max_timestamp",
        "size",
        "time_index",
        "txn_index",
    )

    def __init__(
        self,
        directory: Path,
        base_offset: int,
        index_interval_bytes: int = DEFAULT_INDEX_INTERVAL_BYTES,
    ) -> None:
        self.directory = directory
        self.base_offset = base_offset
        self.index_interval_bytes = index_interval_bytes
        self.log: BinaryIO = open(self.file(FileKind.LOG), "xb")  # noqa: SIM115 - close()
        self.size = 0
        self.last_index_entry = 0
        self.index: list[tuple[int, int]] = []
        self.time_index: list[tuple[int, int]] = []
        self.txn_index: list[dict[str, int]] = []
        # maxTimestampAndOffsetSoFar starts UNKNOWN, which maxTimestampSoFar() turns into the
        # empty time index's lastEntry: (NO_TIMESTAMP, base offset).
        self.max_timestamp = NO_TIMESTAMP
        self.offset_of_max_timestamp = base_offset

    def file(self, kind: FileKind) -> Path:
        return self.directory / segment_file_name(self.base_offset, kind)

    def append(self, batch: Batch, data: memoryview) -> None:
        """One kept batch: ``LogSegment.recover``'s loop body for the indexes, then the bytes."""
        if batch.max_timestamp is not None and batch.max_timestamp > self.max_timestamp:
            self.max_timestamp = batch.max_timestamp
            self.offset_of_max_timestamp = batch.last_offset
        if self.size - self.last_index_entry > self.index_interval_bytes:
            self.index.append((batch.last_offset - self.base_offset, self.size))
            self._maybe_append_time_entry()
            self.last_index_entry = self.size
        self.log.write(data)
        self.size += len(data)

    def _maybe_append_time_entry(self) -> None:
        """``TimeIndex.maybeAppend``: only a timestamp above the last entry's."""
        last = self.time_index[-1][0] if self.time_index else NO_TIMESTAMP
        if self.max_timestamp > last:
            self.time_index.append(
                (self.max_timestamp, self.offset_of_max_timestamp - self.base_offset)
            )

    def close(self) -> None:
        """Flush the ``.log`` and write the segment's other files (``files.kinds.COMPANIONS``)
        by their rebuilders: the indexes trimmed to their entries (a closed segment's shape),
        the ``.txnindex`` only when it has entries (Kafka creates it on the first append)."""
        self._maybe_append_time_entry()
        self.log.flush()
        self.log.close()
        for kind in kinds.COMPANIONS:
            assert kind.segment_kind is not None
            data = kinds.role(kind, "rebuilder")(self)
            if data is not None:
                self.file(kind.segment_kind).write_bytes(data)

    def discard(self) -> None:
        """Remove the segment (nothing was kept in it)."""
        self.log.close()
        self.file(FileKind.LOG).unlink()


def rebuild_offset_index(segment: SegmentOut) -> bytes:
    """The ``.index`` of the kept batches."""
    return build_offset_index(segment.index)


def rebuild_time_index(segment: SegmentOut) -> bytes:
    """The ``.timeindex`` of the kept batches."""
    return build_time_index(segment.time_index)


def rebuild_txn_index(segment: SegmentOut) -> bytes | None:
    """The ``.txnindex`` of the kept ABORT markers; None (no file) when there is none, as
    Kafka creates it on its first append."""
    return build_txn_index(segment.txn_index) if segment.txn_index else None


class PartitionBook:
    """Producer state, leader epochs and snapshots across a partition's kept batches."""

    __slots__ = ("epochs", "last_snapshot", "loader", "lost_from", "map_end_offset", "snapshots")

    def __init__(
        self,
        epochs: list[EpochEntry] | None = None,
        seed: Iterable[ProducerSnapshotEntry] = (),
    ) -> None:
        # A log that no longer starts at offset 0 lost the producers of its deleted segments:
        # the state starts from the snapshot at its first segment, as the broker's does.
        self.loader = ProducerStateLoader(ProducerState.from_snapshot_entry(e) for e in seed)
        self.epochs: list[EpochEntry] = list(epochs or [])
        self.map_end_offset = 0
        self.last_snapshot = -1
        self.snapshots: list[int] = []
        #: Salvage: the first offset of the latest range of offsets lost (None: none yet).
        self.lost_from: int | None = None

    def apply(self, batch: Batch, segment: SegmentOut) -> None:
        """A kept batch, as ``LogSegment.recover`` applies it after the indexes."""
        if batch.magic >= 2:
            epoch = batch.partition_leader_epoch
            latest = self.epochs[-1].epoch if self.epochs else None
            if epoch >= 0 and (latest is None or epoch > latest):
                self.epochs.append(EpochEntry(epoch, batch.base_offset))
            if batch.producer_id >= 0:
                self._completed_txn(batch, segment)
                self.loader.append(batch)
        self.map_end_offset = batch.last_offset + 1

    def _completed_txn(self, batch: Batch, segment: SegmentOut) -> None:
        """An ABORT marker that ends a transaction with data: its ``AbortedTxn`` entry, with
        the last stable offset before the transaction completes (the first offset of the
        earliest other open transaction, else the marker's offset + 1)."""
        if not batch.is_control or not batch.records:
            return
        marker = batch.records[0].control
        if marker is None or marker.type != ControlType.ABORT:
            return
        state = self.loader.producers.get(batch.producer_id)
        first = None if state is None else state.current_txn_first_offset
        if first is None:
            # No open transaction: Kafka writes no entry. But when offsets were lost since
            # the producer's last kept batch, the aborted data most likely lay there (the
            # source's .txnindex had the entry): keep it, from the first offset lost, so
            # that the marker keeps its entry and no kept record falls inside it.
            last = -1 if state is None else state.last_offset
            if self.lost_from is None or self.lost_from <= last:
                return
            first = self.lost_from
        others = [
            s.current_txn_first_offset
            for pid, s in self.loader.producers.items()
            if pid != batch.producer_id and s.current_txn_first_offset is not None
        ]
        segment.txn_index.append(
            {
                "producer_id": batch.producer_id,
                "first_offset": first,
                "last_offset": batch.last_offset,
                "last_stable_offset": min(others) if others else batch.last_offset + 1,
            }
        )

    def truncate_epochs(self, log_end_offset: int) -> None:
        """``LeaderEpochFileCache.truncateFromEnd``: entries starting at or after the end."""
        self.epochs = [e for e in self.epochs if e.start_offset < log_end_offset]

    def write_leader_epochs(self, directory: Path) -> None:
        """The ``leader-epoch-checkpoint`` of the epochs met (``LeaderEpochFileCache``)."""
        (directory / LEADER_EPOCH_CHECKPOINT).write_text(
            format_leader_epoch_checkpoint(self.epochs)
        )

    def take_snapshot(self, directory: Path, at: int | None = None) -> None:
        """``ProducerStateManager.takeSnapshot``: at the offset the state reached (``at``: a
        roll's, the new segment's base offset, as ``UnifiedLog.roll`` moves the map end
        there first), only when it moved past the last snapshot; entries in Java ``HashMap``
        order."""
        if at is not None:
            self.map_end_offset = max(self.map_end_offset, at)
        offset = self.map_end_offset
        if offset <= self.last_snapshot:
            return
        entries = self.loader.snapshot_entries()
        order = java_hashmap_order(list(entries))
        data = build_producer_snapshot(
            {name: getattr(entries[pid], name) for name in _SNAPSHOT_FIELDS} for pid in order
        )
        (directory / segment_file_name(offset, FileKind.PRODUCER_SNAPSHOT)).write_bytes(data)
        self.last_snapshot = offset
        self.snapshots.append(offset)


# What recover writes each segment-level kind of file with (the rest: runtime.log.recover).
kinds.register(kinds.INDEX, rebuilder=rebuild_offset_index)
kinds.register(kinds.TIME_INDEX, rebuilder=rebuild_time_index)
kinds.register(kinds.TXN_INDEX, rebuilder=rebuild_txn_index)
kinds.register(kinds.PRODUCER_SNAPSHOT, rebuilder=PartitionBook.take_snapshot)
