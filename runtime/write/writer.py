"""Write partition directories the way a Kafka broker writes them.

:class:`PartitionWriter` plays the partition leader of one ``topic-N`` directory: it takes what
producers send (records, a codec, a magic, a producer id/epoch, a transaction) and lays it down
as ``UnifiedLog.append`` does on the leader, checked against Kafka's sources (``UnifiedLog``,
``LogSegment``, ``LogValidator``, ``ProducerStateManager``, ``ProducerAppendInfo``,
``TransactionIndex``, ``LeaderEpochFileCache``):

* offsets are assigned from the log end offset; the batch is stamped with the partition
  leader epoch, and with the append time when the topic uses LogAppendTime;
* the segment rolls *before* an append when ``size > segment_bytes - append_size``
  (``LogSegment.shouldRoll``), when an index is full, or when an offset would not fit the
  index's int32; the new segment's base offset is the append's first offset;
* ``LogSegment.append``, batch by batch: when more than ``index_interval_bytes`` were written
  since the last index entry (counted *before* this batch), the ``.index`` gets ``(the batch's
  last offset, the batch's byte position)`` and the ``.timeindex`` gets ``(largest timestamp so
  far in the segment, last offset of the first batch that had it)`` if that timestamp grew.
  That is Kafka 4.0+ (KAFKA-806, apache/kafka#18012); earlier brokers applied the rule once per
  append, with the append's last offset and start position (``per_batch_index=False``), which
  differs only for runs of uncompressed v0/v1 messages, each of which is a batch of its own;
* when a segment stops being active (roll) or the log closes, the time index gets the
  segment's largest timestamp if it grew, and both indexes are trimmed to their entries
  (``onBecomeInactiveSegment``, ``LogSegment.close``);
* an ABORT marker of a transaction with data appends an ``AbortedTxn`` to the active segment's
  ``.txnindex`` (created on first use) with the last stable offset
  (``ProducerStateManager.lastStableOffset``: the first offset of the earliest other open
  transaction, else the marker's offset + 1);
* producer state (last sequence, last batch, coordinator epoch, open transaction) is kept per
  producer id and snapshotted into ``<offset>.snapshot`` (version 1, CRC-32C) at every roll, at
  the new segment's base offset, and at close, at the log end offset; entries are listed in
  Java ``HashMap`` iteration order, as ``ProducerStateManager.writeSnapshot`` lists them;
* ``leader-epoch-checkpoint`` gets ``epoch start_offset`` when a v2 batch carries a new leader
  epoch, and is cleared when a v0/v1 message arrives after v2 ones (``UnifiedLog.append``).

``clean_shutdown=False`` leaves the directory as a live broker has it instead: the active
segment's ``.index`` and ``.timeindex`` keep their preallocated size (``segment.index.bytes``,
zero-filled after the entries), its last time index entry is not written, and there is no
snapshot at the log end offset.

Batches are built with the Construct builders of :mod:`kafka_format.schemas`. ``fast=True``
serialises v2 records and batch headers with :func:`encode_records` / :func:`encode_record_batch`
instead, plain ``struct`` code that is tested to give byte-identical output and runs an order
of magnitude faster (for benchmark-sized directories).
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

from kafka_format.schemas.control_record_key import ControlRecordType, build_control_record_key
from kafka_format.schemas.end_txn_marker import build_end_txn_marker
from kafka_format.schemas.offset_index import build_offset_index
from kafka_format.schemas.producer_snapshot import build_producer_snapshot
from kafka_format.schemas.record import RecordSpec
from kafka_format.schemas.record_batch import batch_attributes, build_record_batch
from kafka_format.schemas.time_index import build_time_index
from kafka_format.schemas.txn_index import build_txn_index

from ..files.checkpoints import LEADER_EPOCH_CHECKPOINT, PARTITION_METADATA
from ..files.names import FileKind, partition_dir_name, segment_file_name
from ..format import layout
from ..format.codecs import Codec
from ..model import TimestampType, increment_sequence
from .appends import check_append, legacy_bytes, v2_bytes, v2_shape
from .bookkeeping import ProducerBook, SegmentBook, check_not_fenced, java_hashmap_order
from .encoding import encode_record_batch, encode_records
from .writer_model import (
    Appended,
    Message,
    PartitionSummary,
    Producer,
    StableOffset,
    Txn,
    WrittenRecord,
)

__all__ = [
    "DEFAULT_INDEX_INTERVAL_BYTES",
    "DEFAULT_MAX_INDEX_BYTES",
    "DEFAULT_SEGMENT_BYTES",
    "DEFAULT_START_TIME_MS",
    "Appended",
    "Message",
    "PartitionSummary",
    "PartitionWriter",
    "Producer",
    "WrittenRecord",
    "encode_record_batch",
    "encode_records",
    "java_hashmap_order",
]

#: ``log.segment.bytes``, ``log.index.interval.bytes``, ``log.index.size.max.bytes`` defaults.
DEFAULT_SEGMENT_BYTES = 1024 * 1024 * 1024
DEFAULT_INDEX_INTERVAL_BYTES = 4096
DEFAULT_MAX_INDEX_BYTES = 10 * 1024 * 1024
#: Where the default clock starts: 2023-11-14T22:13:20Z, a fixed time for reproducible output.
DEFAULT_START_TIME_MS = 1_700_000_000_000

_INT32_MAX = 0x7FFFFFFF


class PartitionWriter:
    """Appends to one partition directory ``log_dir/topic-partition``, as its leader would.

    Example::

        with PartitionWriter("/tmp/kafka-logs", "orders", 0, segment_bytes=1 << 20) as w:
            w.append([Message(b"k", b"v")], codec=Codec.GZIP)       # Appended(0, 0)
            p = Producer(producer_id=1000, epoch=0)
            w.append([Message(b"k2", b"v2")], producer=p, transactional=True)
            w.commit(p, coordinator_epoch=3)                         # the marker's offset, 2

    The directory must not hold segments yet. ``timestamp_type`` is the topic's
    ``message.timestamp.type``. ``clock`` returns "now" in epoch ms (called once per append
    and per marker; default: a counter from :data:`DEFAULT_START_TIME_MS`, one ms per call).
    ``keep_records`` keeps every data record written (:attr:`records`), for tests.
    """

    def __init__(
        self,
        log_dir: str | os.PathLike[str],
        topic: str,
        partition: int,
        *,
        segment_bytes: int = DEFAULT_SEGMENT_BYTES,
        index_interval_bytes: int = DEFAULT_INDEX_INTERVAL_BYTES,
        max_index_bytes: int = DEFAULT_MAX_INDEX_BYTES,
        timestamp_type: TimestampType | int = TimestampType.CREATE_TIME,
        leader_epoch: int = 0,
        start_offset: int = 0,
        clean_shutdown: bool = True,
        clock: Callable[[], int] | None = None,
        fast: bool = False,
        keep_records: bool = False,
        topic_id: str | None = None,
        per_batch_index: bool = True,
    ) -> None:
        if segment_bytes < 1 or segment_bytes > _INT32_MAX:
            raise ValueError(f"segment_bytes must be within 1..{_INT32_MAX}, not {segment_bytes}")
        if max_index_bytes < layout.TIME_INDEX_ENTRY_SIZE:
            raise ValueError(f"max_index_bytes must be at least {layout.TIME_INDEX_ENTRY_SIZE}")
        if int(timestamp_type) not in (0, 1):
            raise ValueError("timestamp_type must be CREATE_TIME or LOG_APPEND_TIME")
        self.topic = topic
        self.partition = partition
        self.path = Path(log_dir) / partition_dir_name(topic, partition)
        self.segment_bytes = segment_bytes
        self.index_interval_bytes = index_interval_bytes
        self.max_index_bytes = max_index_bytes
        self.timestamp_type = TimestampType(int(timestamp_type))
        self.leader_epoch = leader_epoch
        self.clean_shutdown = clean_shutdown
        self.clock = clock if clock is not None else itertools.count(DEFAULT_START_TIME_MS).__next__
        self.fast = fast
        self.keep_records = keep_records
        self.per_batch_index = per_batch_index
        self.records: list[WrittenRecord] = []
        self.summary = PartitionSummary(
            topic, partition, log_start_offset=start_offset, log_end_offset=start_offset
        )
        self._producers: dict[int, ProducerBook] = {}
        # ProducerStateManager.ongoingTxns: first offset -> producer id, for the LSO
        self._ongoing: dict[int, int] = {}
        self._stable = StableOffset()
        self._epochs: list[tuple[int, int]] = []
        self._last_snapshot_offset = 0
        self._log_bytes = 0
        self._closed = False

        self.path.mkdir(parents=True, exist_ok=True)
        if any(p.suffix == FileKind.LOG.suffix for p in self.path.iterdir()):
            raise FileExistsError(f"{self.path} already holds segments")
        # CheckpointFile creates the file, empty, when the log is created
        (self.path / LEADER_EPOCH_CHECKPOINT).write_bytes(b"")
        if topic_id is not None:
            (self.path / PARTITION_METADATA).write_text(f"version: 0\ntopic_id: {topic_id}\n")
        self._segments: list[int] = []
        self._active = self._new_segment(start_offset)

    # --- public API -------------------------------------------------------------------------

    @property
    def next_offset(self) -> int:
        """The log end offset: the offset the next record gets."""
        return self.summary.log_end_offset

    @property
    def segments(self) -> list[int]:
        """Base offsets of the segments written so far, the active one last."""
        return list(self._segments)

    @property
    def log_bytes(self) -> int:
        """Bytes written to the ``.log`` files so far."""
        return self._log_bytes

    @property
    def recovery_point(self) -> int:
        """What ``recovery-point-offset-checkpoint`` holds for this partition: the log end
        offset after a clean shutdown, else the active segment's base (flushed at roll)."""
        return self.next_offset if self.clean_shutdown else self._active.base_offset

    def append(
        self,
        records: Iterable[Message],
        *,
        codec: int = Codec.NONE,
        magic: int = 2,
        producer: Producer | None = None,
        transactional: bool = False,
        base_sequence: int | None = None,
        base_offset: int | None = None,
        last_offset_delta: int | None = None,
        delete_horizon_ms: int | None = None,
        xerial: bool = True,
        compression_level: int | None = None,
    ) -> Appended:
        """Append what one produce request carries for this partition: one v2 batch, or for
        magic 0/1 one compressed wrapper or a run of uncompressed messages.

        ``producer`` makes it idempotent (sequences continue per producer id, from 0 in a new
        epoch, unless ``base_sequence`` says otherwise); ``transactional`` opens or continues
        its transaction. ``base_offset`` appends as a follower copying the leader's batch: the
        offsets are given (at or after the log end offset), and with ``Message.offset_delta``,
        ``last_offset_delta`` and ``delete_horizon_ms`` (v2) it can copy a batch the log
        cleaner has rewritten, gaps, empty batch and all. ``xerial=False`` writes raw snappy,
        as librdkafka does.
        """
        self._check_open()
        messages = list(records)
        codec = check_append(
            messages, codec, magic, producer is not None, transactional,
            base_offset is not None or last_offset_delta is not None or bool(delete_horizon_ms),
            last_offset_delta is not None,
        )  # fmt: skip
        first_offset = self.next_offset if base_offset is None else base_offset
        if first_offset < self.next_offset:
            raise ValueError(
                f"offset {first_offset} is below the log end offset {self.next_offset}"
            )
        now = self.clock()
        if magic == 2:
            return self._append_v2(
                messages,
                first_offset,
                now,
                codec=codec,
                producer=producer,
                transactional=transactional,
                base_sequence=base_sequence,
                last_offset_delta=last_offset_delta,
                delete_horizon_ms=delete_horizon_ms,
                xerial=xerial,
                level=compression_level,
            )
        return self._append_legacy(
            messages, first_offset, now, codec=codec, magic=magic, xerial=xerial,
            level=compression_level,
        )  # fmt: skip

    def commit(self, producer: Producer, *, coordinator_epoch: int = 0) -> int:
        """Write a COMMIT marker for ``producer``'s transaction; returns its offset."""
        return self.end_transaction(producer, commit=True, coordinator_epoch=coordinator_epoch)

    def abort(self, producer: Producer, *, coordinator_epoch: int = 0) -> int:
        """Write an ABORT marker for ``producer``'s transaction; returns its offset."""
        return self.end_transaction(producer, commit=False, coordinator_epoch=coordinator_epoch)

    def end_transaction(self, producer: Producer, *, commit: bool, coordinator_epoch: int) -> int:
        """The control batch the transaction coordinator has the leader append
        (``MemoryRecords.withEndTransactionMarker``): one control record, key
        (version 0, COMMIT/ABORT), value (version 0, coordinator epoch), no sequence."""
        self._check_open()
        state = self._producers.get(producer.producer_id)
        check_not_fenced(state, producer)
        if state is not None and coordinator_epoch < state.coordinator_epoch:
            raise ValueError(
                f"coordinator epoch {coordinator_epoch} is older than {state.coordinator_epoch}"
            )
        now = self.clock()
        offset = self.next_offset
        control = RecordSpec(
            key=build_control_record_key(
                ControlRecordType.commit if commit else ControlRecordType.abort
            ),
            value=build_end_txn_marker(coordinator_epoch),
        )
        lat = self.timestamp_type is TimestampType.LOG_APPEND_TIME
        attributes = batch_attributes(
            timestamp_type=int(lat), is_transactional=True, is_control=True
        )
        fields = dict(
            base_offset=offset,
            partition_leader_epoch=self.leader_epoch,
            base_timestamp=now,
            max_timestamp=now,
            last_offset_delta=0,
            producer_id=producer.producer_id,
            producer_epoch=producer.epoch,
            base_sequence=-1,
            attributes=attributes,
        )
        if self.fast:
            data = encode_record_batch(encode_records([control]), records_count=1, **fields)
        else:
            data = build_record_batch([control], **fields)
        segment = self._before_append(len(data), offset, offset)
        self._assign_leader_epoch(self.leader_epoch, offset)
        self._segment_append(segment, data, [(len(data), offset, now)])

        # ProducerAppendInfo.appendEndTxnMarker
        state = self._producer(producer.producer_id)
        state.bump_epoch(producer.epoch)
        txn = state.txn
        state.coordinator_epoch = coordinator_epoch
        state.last_timestamp = now
        state.txn = None
        if txn is not None:
            del self._ongoing[txn.first_offset]
            self._stable.offset = min(self._ongoing) if self._ongoing else None
            txn.outcome = "commit" if commit else "abort"
            if commit:
                self.summary.transactions_committed += 1
            else:
                self.summary.transactions_aborted += 1
                others = [first for first, pid in self._ongoing.items() if pid != txn.producer_id]
                last_stable_offset = min(others) if others else offset + 1
                segment.txn_index.append(
                    {
                        "producer_id": txn.producer_id,
                        "first_offset": txn.first_offset,
                        "last_offset": offset,
                        "last_stable_offset": last_stable_offset,
                    }
                )
                self._write_txn_index(segment)
            self._settle(txn, commit)
        self.summary.batches += 1
        self.summary.control_batches += 1
        self.summary.magics.add(2)
        self.summary.codecs.add("none")
        self.summary.log_end_offset = offset + 1
        return offset

    def roll(self) -> None:
        """Start a new segment at the log end offset now (as ``segment.ms`` or an admin would)."""
        self._check_open()
        if self._active.size > 0:
            self._roll(self.next_offset)

    def close(self) -> None:
        """Shut down: snapshot producer state at the log end offset and close the segments
        (clean), or leave the active segment as a running broker has it."""
        if self._closed:
            return
        self._closed = True
        segment = self._active
        if self.clean_shutdown:
            self._take_snapshot(self.next_offset)
            segment.maybe_append_time_entry()
            self._finish(segment, preallocated=False)
        else:
            self._finish(segment, preallocated=True)

    def __enter__(self) -> PartitionWriter:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # --- appends ----------------------------------------------------------------------------

    def _append_v2(
        self,
        messages: list[Message],
        first_offset: int,
        now: int,
        *,
        codec: Codec,
        producer: Producer | None,
        transactional: bool,
        base_sequence: int | None,
        last_offset_delta: int | None,
        delete_horizon_ms: int | None,
        xerial: bool,
        level: int | None,
    ) -> Appended:
        lat = self.timestamp_type is TimestampType.LOG_APPEND_TIME
        shape = v2_shape(messages, now, last_offset_delta, delete_horizon_ms, lat)
        last_offset = first_offset + shape.last_offset_delta
        sequence, producer_id, producer_epoch = self._sequence(
            producer, transactional, base_sequence
        )
        fields = dict(
            base_offset=first_offset,
            partition_leader_epoch=self.leader_epoch,
            base_timestamp=shape.base_timestamp,
            max_timestamp=shape.max_timestamp,
            last_offset_delta=shape.last_offset_delta,
            producer_id=producer_id,
            producer_epoch=producer_epoch,
            base_sequence=sequence,
            attributes=batch_attributes(
                codec=int(codec),
                timestamp_type=int(lat),
                is_transactional=transactional,
                has_delete_horizon=delete_horizon_ms is not None,
            ),
        )
        data = v2_bytes(
            messages, shape, fields, codec=codec, fast=self.fast, xerial=xerial, level=level
        )
        segment = self._before_append(len(data), first_offset, last_offset)
        self._assign_leader_epoch(self.leader_epoch, first_offset)
        self._segment_append(segment, data, [(len(data), last_offset, shape.max_timestamp)])

        txn = None
        if producer is not None:
            txn = self._append_data_batch(
                producer, transactional, sequence, first_offset, last_offset, shape.max_timestamp
            )
        self._count(
            messages, shape.deltas, shape.timestamps, first_offset,
            shape.max_timestamp if lat else None, 2, txn, producer_id=producer_id,
        )  # fmt: skip
        self._count_batch(2, codec, last_offset)
        return Appended(first_offset, last_offset)

    def _sequence(
        self, producer: Producer | None, transactional: bool, base_sequence: int | None
    ) -> tuple[int, int, int]:
        """The batch's (base sequence, producer id, producer epoch): -1s without a producer."""
        if producer is None:
            return -1, -1, -1
        # The producer's state changes only once the batch is in the log: a roll before
        # this append snapshots the state without it.
        known = self._producers.get(producer.producer_id)
        check_not_fenced(known, producer)
        if known is not None and known.txn is not None and not transactional:
            raise ValueError(f"producer {producer.producer_id} has an open transaction")
        if base_sequence is not None:
            sequence = base_sequence
        elif known is not None and known.epoch == producer.epoch:
            sequence = known.next_sequence
        else:
            sequence = 0
        return sequence, producer.producer_id, producer.epoch

    def _append_data_batch(
        self,
        producer: Producer,
        transactional: bool,
        sequence: int,
        first_offset: int,
        last_offset: int,
        max_timestamp: int,
    ) -> Txn | None:
        """``ProducerAppendInfo.appendDataBatch``, once the batch is in the log; returns the
        transaction it belongs to."""
        state = self._producer(producer.producer_id)
        state.bump_epoch(producer.epoch)
        # DefaultRecordBatch.lastSequence: base + lastOffsetDelta, gaps and all
        state.last_sequence = increment_sequence(sequence, last_offset - first_offset)
        state.next_sequence = increment_sequence(state.last_sequence, 1)
        state.last_offset = last_offset
        state.offset_delta = last_offset - first_offset
        state.last_timestamp = max_timestamp
        if not transactional:
            return None
        if state.txn is None:
            state.txn = Txn(producer.producer_id, first_offset)
            self._ongoing[first_offset] = producer.producer_id
            self._stable.offset = min(self._ongoing)
        return state.txn

    def _append_legacy(
        self,
        messages: list[Message],
        first_offset: int,
        now: int,
        *,
        codec: Codec,
        magic: int,
        xerial: bool,
        level: int | None,
    ) -> Appended:
        lat = magic == 1 and self.timestamp_type is TimestampType.LOG_APPEND_TIME
        last_offset = first_offset + len(messages) - 1
        data, batches, seen = legacy_bytes(
            messages, first_offset, now, codec=codec, magic=magic, log_append_time=lat,
            xerial=xerial, level=level,
        )  # fmt: skip
        segment = self._before_append(len(data), first_offset, last_offset)
        if self._epochs:
            # a v0/v1 append after v2 ones: UnifiedLog clears the leader epoch cache
            self._epochs.clear()
            self._write_leader_epochs()
        self._segment_append(segment, data, batches)
        self._count(
            messages, range(len(messages)), seen, first_offset, None, magic, None,
            timestamp_type=(-1 if magic == 0 else int(lat)),
        )  # fmt: skip
        self._count_batch(magic, codec, last_offset, entries=1 if codec else len(messages))
        return Appended(first_offset, last_offset)

    # --- LogSegment / UnifiedLog ------------------------------------------------------------

    def _before_append(self, size: int, first_offset: int, last_offset: int) -> SegmentBook:
        """``UnifiedLog.maybeRoll``: the segment this append goes to."""
        if size > self.segment_bytes:
            raise ValueError(
                f"an append of {size} bytes exceeds segment_bytes={self.segment_bytes}"
            )
        segment = self._active
        # An empty active segment is never rolled: LocalLog.roll would replace it by an
        # identical one, or keep it when the offsets would not fit (we refuse that below).
        if segment.size > 0 and (
            segment.size > self.segment_bytes - size
            or len(segment.index) >= self._max_entries(layout.OFFSET_INDEX_ENTRY_SIZE)
            or len(segment.time_index) >= self._max_entries(layout.TIME_INDEX_ENTRY_SIZE)
            or last_offset - segment.base_offset > _INT32_MAX
        ):
            self._roll(first_offset)
            segment = self._active
        if last_offset - segment.base_offset > _INT32_MAX:
            raise ValueError(
                f"offset {last_offset} does not fit a segment at {segment.base_offset}"
            )
        return segment

    def _segment_append(
        self, segment: SegmentBook, data: bytes, batches: Sequence[tuple[int, int, int]]
    ) -> None:
        """``LogSegment.append`` of one append's bytes, given each batch's (size, last offset,
        max timestamp): several only for uncompressed v0/v1 messages, each its own entry."""
        position = segment.size
        segment.log.write(data)
        segment.size += len(data)
        self._log_bytes += len(data)
        if self.per_batch_index:
            # Kafka 4.0+ (KAFKA-806): the index rule runs per batch, each at its own position
            for size, last_offset, max_timestamp in batches:
                if max_timestamp > segment.max_timestamp:
                    segment.max_timestamp = max_timestamp
                    segment.offset_of_max_timestamp = last_offset
                self._maybe_index(segment, last_offset, position)
                position += size
                segment.bytes_since_index_entry += size
            return
        # Before: once per append, with the append's last offset and start position; the
        # largest timestamp goes with the last offset of the earliest batch that has it
        # (LogValidator's shallowOffsetOfMaxTimestamp).
        for _, last_offset, max_timestamp in batches:
            if max_timestamp > segment.max_timestamp:
                segment.max_timestamp = max_timestamp
                segment.offset_of_max_timestamp = last_offset
        self._maybe_index(segment, batches[-1][1], position)
        segment.bytes_since_index_entry += len(data)

    def _maybe_index(self, segment: SegmentBook, last_offset: int, position: int) -> None:
        if segment.bytes_since_index_entry > self.index_interval_bytes:
            segment.index.append((last_offset - segment.base_offset, position))
            segment.maybe_append_time_entry()
            segment.bytes_since_index_entry = 0

    def _roll(self, expected_next_offset: int) -> None:
        """``UnifiedLog.roll``: close the active segment, open the next, snapshot producers."""
        old = self._active
        old.maybe_append_time_entry()
        self._finish(old, preallocated=False)
        self._active = self._new_segment(max(expected_next_offset, self.next_offset))
        self._take_snapshot(self._active.base_offset)

    def _new_segment(self, base_offset: int) -> SegmentBook:
        segment = SegmentBook(self.path, base_offset)
        # the index files exist (preallocated) from the segment's creation
        for kind in (FileKind.INDEX, FileKind.TIME_INDEX):
            segment.file(kind).write_bytes(b"")
        self._segments.append(base_offset)
        self.summary.segments.append(base_offset)
        return segment

    def _finish(self, segment: SegmentBook, *, preallocated: bool) -> None:
        """Write the segment's indexes, trimmed (``trimToValidSize``) or at full size."""
        segment.log.close()
        for kind, data, entry in (
            (FileKind.INDEX, build_offset_index(segment.index), layout.OFFSET_INDEX_ENTRY_SIZE),
            (
                FileKind.TIME_INDEX,
                build_time_index(segment.time_index),
                layout.TIME_INDEX_ENTRY_SIZE,
            ),
        ):
            with open(segment.file(kind), "wb") as fh:
                fh.write(data)
                if preallocated:
                    fh.truncate(self._max_entries(entry) * entry)

    def _write_txn_index(self, segment: SegmentBook) -> None:
        segment.file(FileKind.TXN_INDEX).write_bytes(build_txn_index(segment.txn_index))

    def _max_entries(self, entry_size: int) -> int:
        return self.max_index_bytes // entry_size

    def _take_snapshot(self, offset: int) -> None:
        """``ProducerStateManager.takeSnapshot``: only when the map moved past the last one."""
        if offset <= self._last_snapshot_offset:
            return
        order = java_hashmap_order(list(self._producers))
        data = build_producer_snapshot(self._producers[pid].snapshot_entry() for pid in order)
        (self.path / segment_file_name(offset, FileKind.PRODUCER_SNAPSHOT)).write_bytes(data)
        self._last_snapshot_offset = offset

    def _assign_leader_epoch(self, epoch: int, start_offset: int) -> None:
        """``LeaderEpochFileCache.assign`` as ``UnifiedLog.append`` calls it per v2 batch."""
        if epoch < 0:
            return
        if self._epochs:
            last_epoch, last_start = self._epochs[-1]
            if epoch == last_epoch and start_offset >= last_start:
                return
        # maybeTruncateNonMonotonicEntries
        self._epochs = [(e, s) for e, s in self._epochs if e < epoch and s < start_offset]
        self._epochs.append((epoch, start_offset))
        self._write_leader_epochs()

    def _write_leader_epochs(self) -> None:
        self.summary.leader_epochs = list(self._epochs)
        lines = ["0", str(len(self._epochs)), *(f"{e} {s}" for e, s in self._epochs)]
        (self.path / LEADER_EPOCH_CHECKPOINT).write_text("".join(f"{line}\n" for line in lines))

    def _producer(self, producer_id: int) -> ProducerBook:
        state = self._producers.get(producer_id)
        if state is None:
            state = self._producers[producer_id] = ProducerBook(producer_id)
        return state

    # --- bookkeeping ------------------------------------------------------------------------

    def _count(
        self,
        messages: list[Message],
        deltas: Iterable[int],
        timestamps: Sequence[int | None],
        first_offset: int,
        append_time: int | None,
        magic: int,
        txn: Txn | None,
        *,
        producer_id: int = -1,
        timestamp_type: int | None = None,
    ) -> None:
        summary = self.summary
        n = len(messages)
        summary.records += n
        summary.tombstones += sum(1 for m in messages if m.value is None)
        summary.with_headers += sum(1 for m in messages if m.headers)
        if txn is not None:
            summary.open += n
            txn.records += n
        if not self.keep_records:
            return
        if timestamp_type is None:
            timestamp_type = int(append_time is not None)
        for m, d, t in zip(messages, deltas, timestamps, strict=True):
            self.records.append(
                WrittenRecord(
                    offset=first_offset + d,
                    timestamp=append_time if append_time is not None else t,
                    timestamp_type=timestamp_type,
                    key=m.key,
                    value=m.value,
                    headers=tuple(m.headers),
                    magic=magic,
                    producer_id=producer_id,
                    txn=txn,
                    stable=self._stable,
                )
            )

    def _settle(self, txn: Txn, commit: bool) -> None:
        """Move a finished transaction's records from "open" to committed or aborted."""
        self.summary.open -= txn.records
        if commit:
            self.summary.committed += txn.records
        else:
            self.summary.aborted += txn.records

    def _count_batch(self, magic: int, codec: Codec, last_offset: int, entries: int = 1) -> None:
        self.summary.batches += entries
        self.summary.magics.add(magic)
        self.summary.codecs.add(codec.name.lower())
        self.summary.log_end_offset = last_offset + 1

    def _check_open(self) -> None:
        if self._closed:
            raise ValueError("the writer is closed")
