"""What a partition leader keeps in memory while it appends: a producer's state entry
(:class:`ProducerBook`), the active segment (:class:`SegmentBook`), and the order a Java
``HashMap`` lists producer ids in (:func:`java_hashmap_order`, for snapshots)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ..files.names import FileKind, segment_file_name
from .writer_model import NO_TIMESTAMP, Producer, Txn


def java_hashmap_order(keys: Sequence[int]) -> list[int]:
    """Long keys in the order a ``java.util.HashMap`` that got them in this order iterates.

    Buckets by ``Long.hashCode`` spread as ``HashMap.hash`` does, in a table grown from 16 at
    load factor 0.75; within a bucket, insertion order (resizes keep it). Treeified buckets
    (8+ collisions) are not modelled.
    """
    capacity = 16
    while len(keys) > capacity * 3 // 4:
        capacity *= 2

    def bucket(key: int) -> int:
        unsigned = key & 0xFFFFFFFFFFFFFFFF
        h = (unsigned ^ (unsigned >> 32)) & 0xFFFFFFFF
        return (h ^ (h >> 16)) & (capacity - 1)

    order = {k: i for i, k in enumerate(keys)}
    return sorted(keys, key=lambda k: (bucket(k), order[k]))


@dataclass(slots=True)
class ProducerBook:
    """``ProducerStateEntry`` with only its last batch (all a snapshot stores)."""

    producer_id: int
    epoch: int = -1
    next_sequence: int = 0
    last_sequence: int = -1
    last_offset: int = -1
    offset_delta: int = 0
    coordinator_epoch: int = -1
    last_timestamp: int = NO_TIMESTAMP
    txn: Txn | None = None

    def snapshot_entry(self) -> dict[str, int]:
        return {
            "producer_id": self.producer_id,
            "epoch": self.epoch,
            "last_sequence": self.last_sequence,
            "last_offset": self.last_offset,
            "offset_delta": self.offset_delta,
            "timestamp": self.last_timestamp,
            "coordinator_epoch": self.coordinator_epoch,
            "current_txn_first_offset": -1 if self.txn is None else self.txn.first_offset,
        }

    def bump_epoch(self, epoch: int) -> None:
        # maybeUpdateProducerEpoch: a new epoch forgets the batches of the old one
        if epoch != self.epoch:
            self.epoch = epoch
            self.next_sequence = 0
            self.last_sequence = -1
            self.last_offset = -1
            self.offset_delta = 0


class SegmentBook:
    """One segment being written: the .log handle and what ``LogSegment`` keeps in memory."""

    __slots__ = (
        "base_offset",
        "bytes_since_index_entry",
        "index",
        "log",
        "max_timestamp",
        "offset_of_max_timestamp",
        "path",
        "size",
        "time_index",
        "txn_index",
    )

    def __init__(self, directory: Path, base_offset: int) -> None:
        self.base_offset = base_offset
        self.path = directory / segment_file_name(base_offset, FileKind.LOG)
        self.log = open(self.path, "xb")  # noqa: SIM115 - closed by _finish
        self.size = 0
        self.bytes_since_index_entry = 0
        self.index: list[tuple[int, int]] = []
        self.time_index: list[tuple[int, int]] = []
        self.txn_index: list[dict[str, int]] = []
        # maxTimestampSoFar before any append: the time index's last entry, or
        # (NO_TIMESTAMP, base offset) when it has none (TimeIndex.lastEntry)
        self.max_timestamp = NO_TIMESTAMP
        self.offset_of_max_timestamp = base_offset

    def file(self, kind: FileKind) -> Path:
        return self.path.with_name(segment_file_name(self.base_offset, kind))

    def maybe_append_time_entry(self) -> None:
        """``TimeIndex.maybeAppend(maxTimestampSoFar, offsetOfMaxTimestampSoFar)``."""
        last_timestamp = self.time_index[-1][0] if self.time_index else NO_TIMESTAMP
        if self.max_timestamp > last_timestamp:
            self.time_index.append(
                (self.max_timestamp, self.offset_of_max_timestamp - self.base_offset)
            )


def check_not_fenced(state: ProducerBook | None, producer: Producer) -> None:
    """``ProducerAppendInfo.checkProducerEpoch``: an older epoch is a fenced producer."""
    if state is not None and producer.epoch < state.epoch:
        raise ValueError(
            f"producer {producer.producer_id} epoch {producer.epoch} is fenced by {state.epoch}"
        )
