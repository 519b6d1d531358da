"""``kafka-format generate``: a realistic Kafka log directory, written as producers and a broker
write it.

Each topic is written by simulated producer applications (``docs/generate.md`` has the model):

* records arrive at a simulated rate (``rate`` records/s per topic, or by default a load that
  moves between quiet and busy spells); a record's CreateTime is its arrival time (now and then
  an application sets an older event time);
* each producer places a record the way Kafka's Java client does: a keyed record goes to the
  partition its key hashes to (:func:`~kafka_format.runtime.partitioner.default_partition`,
  murmur2), a record without a key to the uniform sticky partition of Kafka 3.3+ (KIP-794),
  round-robin for the pre-2.4 clients of the magic 0/1 eras, and a librdkafka-style
  partition that sticks for ``2 * linger.ms`` for the librdkafka producer;
* each producer groups its records per partition as ``RecordAccumulator`` does: a batch closes
  when the next record would take the producer's estimate of its size over ``batch.size``
  (uncompressed bytes, or for compressed batches the uncompressed bytes times Java's
  ``CompressionRatioEstimator`` ratio times 1.05; a record larger than ``batch.size`` gets a
  batch of its own), when the estimate reaches ``batch.size``, or ``linger.ms`` after its
  first record; transaction ends, producer restarts and the end of the run flush the rest;
* the partition leader (:class:`~kafka_format.runtime.writer.PartitionWriter`) appends each
  batch when the producer sends it, and the transaction coordinator's COMMIT/ABORT markers to
  every partition a transaction wrote to.

Scenarios (topics):

``orders``
    magic 2: four idempotent Java producers (none, gzip, lz4, zstd), a librdkafka producer
    (raw snappy blocks, not idempotent, ``partitioner=murmur2_random``), two transactional
    producers whose transactions interleave (COMMIT and ABORT markers, ``.txnindex`` entries
    whose last stable offset is held back by the other transaction); keyed records (keys
    repeat, some tombstones, headers, a few without a key), producer restarts (epoch bumps),
    leader epoch changes; partition 0 ends with a transaction still open.
``legacy-events``
    a topic that lived through upgrades: magic 0 messages from 0.9-era clients (none, gzip,
    snappy), then magic 1 (none, gzip, snappy, lz4), then magic 2 from idempotent producers;
    the leader epoch cache starts at the first v2 batch.
``clicks``
    ``message.timestamp.type=LogAppendTime``: magic 1 wrappers, then v2 batches, lz4 / zstd /
    gzip / none; many records without a key.
``users``
    a compacted topic as a follower copies it from a cleaned leader: few keys, many tombstones,
    offset gaps inside and between batches, an empty batch kept for its producer state, the
    delete horizon on batches with tombstones, then a dirty tail produced normally.

With ``size_bytes`` it writes the benchmark shape of issue 6 instead: topic ``bench``, v2
batches of 1000 records, 100-byte values, one header, uncompressed unless ``codec`` says
otherwise, until the ``.log`` files hold about ``size_bytes`` (keys still hash to their
partition; batching is not simulated there: the shape is fixed for the benchmarks).

The log dir also gets the broker's checkpoint files (recovery point, replication offset,
log start offset, cleaner offset), ``meta.properties``, ``.kafka_cleanshutdown`` after a clean
shutdown, each partition's ``partition.metadata``, and ``EXPECTED.json``: per partition what
was written (offsets, segments, codecs, magics, record and transaction counts) and, except for
benchmark partitions, the SHA-256 of its data records in the canonical JSON lines form, which is
exactly the output of ``kafka-format dump --jsonl DIR/topic-N`` (and with
``--isolation read_committed`` for the second digest). Same seed, same bytes.
"""

from __future__ import annotations

import argparse
import base64
import functools
import hashlib
import heapq
import json
import os
import random
import re
import struct
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .checkpoints import (
    CLEANER_OFFSET_CHECKPOINT,
    LOG_START_OFFSET_CHECKPOINT,
    RECOVERY_POINT_CHECKPOINT,
    REPLICATION_OFFSET_CHECKPOINT,
)
from .codecs import Codec
from .model import TimestampType
from .partitioner import default_partition
from .writer import (
    DEFAULT_START_TIME_MS,
    Message,
    PartitionSummary,
    PartitionWriter,
    Producer,
    WrittenRecord,
)

__all__ = [
    "BENCH_TOPIC",
    "DEFAULT_BATCH_SIZE",
    "DEFAULT_LINGER_MS",
    "EXPECTED_FILE",
    "TOPIC_KINDS",
    "GeneratedLog",
    "ProducedBatch",
    "canonical_record",
    "generate_log_dir",
    "parse_size",
    "records_digest",
    "register",
]

EXPECTED_FILE = "EXPECTED.json"
BENCH_TOPIC = "bench"
#: Scenario names and their default partition counts.
TOPIC_KINDS = {"orders": 3, "legacy-events": 2, "clicks": 2, "users": 1}
DEFAULT_RECORDS = 400
DEFAULT_SEGMENT_BYTES = 32 * 1024
#: Scenario batches stay well under this (a batch larger than a segment cannot be appended).
MIN_SEGMENT_BYTES = 8 * 1024
#: The Java producer's ``batch.size`` and ``linger.ms`` defaults (linger.ms: 5 since Kafka 4.0,
#: KIP-1030; 0 before).
DEFAULT_BATCH_SIZE = 16384
DEFAULT_LINGER_MS = 5
BENCH_RECORDS_PER_BATCH = 1000
BENCH_VALUE_BYTES = 100
BENCH_DEFAULT_PARTITIONS = 2
_BENCH_USERS = 100_000


# --- the canonical record form and its digest -----------------------------------------------


def _b64(data: bytes | None) -> str | None:
    return None if data is None else base64.b64encode(data).decode("ascii")


def canonical_record(record: WrittenRecord) -> dict[str, Any]:
    """A written record in the corpus's canonical form (``../shared/corpus/README.md``)."""
    return {
        "offset": record.offset,
        "timestamp": record.timestamp,
        "timestampType": record.timestamp_type,
        "key": _b64(record.key),
        "value": _b64(record.value),
        "headers": [{"key": k, "value": _b64(v)} for k, v in record.headers],
    }


def records_digest(records: Iterable[dict[str, Any]]) -> str:
    """SHA-256 of canonical records as compact JSON lines, as ``dump --jsonl`` prints them."""
    digest = hashlib.sha256()
    for record in records:
        digest.update((json.dumps(record, separators=(",", ":")) + "\n").encode("utf-8"))
    return digest.hexdigest()


# --- what was generated ---------------------------------------------------------------------


@dataclass(slots=True, frozen=True)
class ProducedBatch:
    """One batch as its producer closed and sent it (scenario topics only)."""

    #: the simulated client, e.g. ``java-gzip``, ``librdkafka-snappy``, ``java-0.9-none``
    producer: str
    base_offset: int
    records: int
    magic: int
    codec: str
    #: the records' bytes before compression, as the producer counted them (v0/v1: each
    #: message with its 12-byte log overhead)
    records_bytes: int
    #: ``batch.size``, or more when the batch's first record alone is larger
    write_limit: int
    #: the compression ratio estimate the batch was created with; None when the producer
    #: counts uncompressed bytes (no compression, or librdkafka)
    compression_ratio: float | None
    #: the producer's estimate of the batch's size when it was sent
    estimated_bytes: int
    #: bytes the append added to the ``.log``
    log_bytes: int
    #: ``full`` (the next record did not fit, or the estimate reached batch.size),
    #: ``linger`` (linger.ms passed) or ``flush`` (a transaction end, a restart, a phase end)
    closed_by: str


@dataclass(slots=True)
class GeneratedLog:
    """What :func:`generate_log_dir` wrote; ``EXPECTED.json`` is :meth:`to_json`."""

    path: Path
    seed: int
    options: dict[str, Any]
    #: per partition directory name (``topic-N``), in topic then partition order
    partitions: dict[str, PartitionSummary] = field(default_factory=dict)
    #: data records per partition directory; empty for benchmark partitions
    records: dict[str, list[WrittenRecord]] = field(default_factory=dict)
    timestamp_types: dict[str, int] = field(default_factory=dict)
    #: per partition directory, the batches producers sent to it, in log order (scenario
    #: topics; the cleaned part of ``users`` was copied, not produced, and is not here)
    produced: dict[str, list[ProducedBatch]] = field(default_factory=dict)

    def expected(self, name: str, isolation: str = "read_uncommitted") -> list[dict[str, Any]]:
        """The canonical records a consumer of partition ``name`` reads."""
        records = self.records.get(name, [])
        if isolation == "read_committed":
            records = [r for r in records if r.read_committed]
        return [canonical_record(r) for r in records]

    def to_json(self) -> dict[str, Any]:
        partitions = {}
        for name, s in self.partitions.items():
            entry: dict[str, Any] = {
                "topic": s.topic,
                "partition": s.partition,
                "timestamp_type": TimestampType(self.timestamp_types[name]).label,
                "magics": sorted(s.magics),
                "codecs": sorted(s.codecs),
                "log_start_offset": s.log_start_offset,
                "log_end_offset": s.log_end_offset,
                "segments": s.segments,
                "batches": s.batches,
                "control_batches": s.control_batches,
                "records": s.records,
                "read_committed_records": s.read_committed_records,
                "tombstones": s.tombstones,
                "records_with_headers": s.with_headers,
                "committed_records": s.committed,
                "aborted_records": s.aborted,
                "open_transaction_records": s.open,
                "transactions_committed": s.transactions_committed,
                "transactions_aborted": s.transactions_aborted,
                "leader_epochs": [list(e) for e in s.leader_epochs],
                "sha256_read_uncommitted": None,
                "sha256_read_committed": None,
            }
            if name in self.records:
                entry["sha256_read_uncommitted"] = records_digest(self.expected(name))
                entry["sha256_read_committed"] = records_digest(
                    self.expected(name, "read_committed")
                )
            partitions[name] = entry
        return {
            "generator": "kafka-format generate",
            "version": 1,
            "seed": self.seed,
            "options": self.options,
            "digest": "sha256 of `kafka-format dump --jsonl DIR/topic-N` "
            "(and with --isolation read_committed)",
            "partitions": partitions,
        }


# --- the producer's size accounting ---------------------------------------------------------
# MemoryRecordsBuilder / DefaultRecord / LegacyRecord / CompressionRatioEstimator, in Java's
# float (32-bit) arithmetic where Java uses floats.

_LOG_OVERHEAD = 12
_V2_BATCH_OVERHEAD = 61
_LEGACY_RECORD_OVERHEAD = (14, 22)  # crc, magic, attributes, [timestamp,] key and value lengths
_MAX_RECORD_OVERHEAD = 21  # DefaultRecord.MAX_RECORD_OVERHEAD
_FLOAT = struct.Struct("<f")


def _f32(value: float) -> float:
    return _FLOAT.unpack(_FLOAT.pack(value))[0]


_ESTIMATION_FACTOR = _f32(1.05)  # COMPRESSION_RATE_ESTIMATION_FACTOR
_RATIO_IMPROVING_STEP = _f32(0.005)
_RATIO_DETERIORATE_STEP = _f32(0.05)


def _varint_size(value: int) -> int:
    raw = (value << 1) ^ (value >> 63)
    size = 1
    while raw >= 0x80:
        raw >>= 7
        size += 1
    return size


def _bytes_size(data: bytes | None) -> int:
    return 1 if data is None else _varint_size(len(data)) + len(data)


def _key_value_headers_size(m: Message) -> int:
    size = _bytes_size(m.key) + _bytes_size(m.value) + _varint_size(len(m.headers))
    for key, value in m.headers:
        size += _bytes_size(key.encode("utf-8")) + _bytes_size(value)
    return size


def _v2_record_size(offset_delta: int, timestamp_delta: int, m: Message) -> int:
    """``DefaultRecord.sizeInBytes``: the record exactly as it is written."""
    body = 1 + _varint_size(timestamp_delta) + _varint_size(offset_delta)
    body += _key_value_headers_size(m)
    return _varint_size(body) + body


def _legacy_record_size(magic: int, m: Message) -> int:
    """``LOG_OVERHEAD + LegacyRecord.recordSize``: a v0/v1 message as a log entry."""
    return _LOG_OVERHEAD + _LEGACY_RECORD_OVERHEAD[magic] + len(m.key or b"") + len(m.value or b"")


def _batch_header_size(magic: int, codec: Codec) -> int:
    """``AbstractRecords.recordBatchHeaderSizeInBytes``."""
    if magic == 2:
        return _V2_BATCH_OVERHEAD
    return _LOG_OVERHEAD + _LEGACY_RECORD_OVERHEAD[magic] if codec is not Codec.NONE else 0


def _size_upper_bound(magic: int, codec: Codec, m: Message) -> int:
    """``AbstractRecords.estimateSizeInBytesUpperBound``: the buffer a first record needs."""
    if magic == 2:
        return _V2_BATCH_OVERHEAD + _MAX_RECORD_OVERHEAD + _key_value_headers_size(m)
    # a wrapper's overhead, then the message without its log overhead (Java counts it once)
    wrapper = _LEGACY_RECORD_OVERHEAD[magic] if codec is not Codec.NONE else 0
    return wrapper + _legacy_record_size(magic, m)


def _update_ratio(current: float, observed: float) -> float:
    """``CompressionRatioEstimator.updateEstimation``: worse news moves the estimate at once
    (by at least 0.05), better news slowly (by at most 0.005 per batch)."""
    if observed > current:
        return max(_f32(current + _RATIO_DETERIORATE_STEP), observed)
    if observed < current:
        return max(_f32(current - _RATIO_IMPROVING_STEP), observed)
    return current


# --- producers and their accumulators -------------------------------------------------------

_STICKY = "sticky"  # Java 3.3+: BuiltInPartitioner, uniform sticky (KIP-794)
_ROUND_ROBIN = "round-robin"  # Java before 2.4: DefaultPartitioner's counter
_LIBRDKAFKA = "librdkafka"  # murmur2_random, null keys sticky for sticky.partitioning.linger.ms


@dataclass(slots=True, eq=False)
class _Client:
    """One producer application (a client instance) writing to one topic."""

    name: str
    codec: Codec = Codec.NONE
    magic: int = 2
    producer: Producer | None = None
    transactional: bool = False
    partitioner: str = _STICKY
    xerial: bool = True
    #: Java's CompressionRatioEstimator; librdkafka counts batch.size on uncompressed bytes
    estimates_ratio: bool = True
    ratio: float = 1.0
    open: dict[int, _OpenBatch] = field(default_factory=dict)
    sticky: int | None = None
    sticky_bytes: int = 0
    sticky_since: int = 0
    counter: int | None = None
    in_transaction: bool = False
    txn_partitions: set[int] = field(default_factory=set)
    #: until when it waits for its transaction's markers (it sends nothing before)
    blocked_until: int = 0

    def restarted(self) -> None:
        """A new InitProducerId after a restart: the epoch goes up, sequences start again."""
        assert self.producer is not None
        self.producer = Producer(self.producer.producer_id, self.producer.epoch + 1)


@dataclass(slots=True, eq=False)
class _OpenBatch:
    """A ``ProducerBatch`` being filled: ``MemoryRecordsBuilder``'s running estimate."""

    client: _Client
    partition: int
    deadline: int
    write_limit: int
    header: int
    ratio: float
    messages: list[Message] = field(default_factory=list)
    records_bytes: int = 0
    base_timestamp: int = 0

    def record_size(self, m: Message) -> int:
        if self.client.magic < 2:
            return _legacy_record_size(self.client.magic, m)
        assert m.timestamp is not None
        delta = m.timestamp - self.base_timestamp if self.messages else 0
        return _v2_record_size(len(self.messages), delta, m)

    def add(self, m: Message, size: int) -> None:
        if not self.messages:
            assert m.timestamp is not None
            self.base_timestamp = m.timestamp
        self.messages.append(m)
        self.records_bytes += size

    @property
    def uses_ratio(self) -> bool:
        return self.client.codec is not Codec.NONE and self.client.estimates_ratio

    def estimate(self) -> int:
        """``estimatedBytesWritten``: exact uncompressed; compressed, by the estimated ratio."""
        if not self.uses_ratio:
            return self.header + self.records_bytes
        scaled = _f32(_f32(_f32(self.records_bytes) * self.ratio) * _ESTIMATION_FACTOR)
        return self.header + int(scaled)


@dataclass(slots=True, eq=False)
class _Markers:
    """The COMMIT/ABORT markers the transaction coordinator has yet to write."""

    producer: Producer
    commit: bool
    coordinator_epoch: int
    partitions: list[int]


class _SimClock:
    """Simulated time in epoch ms; the writers read it as the broker's "now"."""

    def __init__(self, now: int) -> None:
        self.now = now

    def __call__(self) -> int:
        return self.now


class _Topic:
    """The producers of one topic, their accumulators and the partition leaders they send to.

    Everything happens in simulated time order: before a record arrives at ``t``, every batch
    whose linger ran out by ``t`` is sent and every transaction marker due by ``t`` written,
    in time order, so the leaders append in the order producers and coordinator sent.
    """

    def __init__(
        self,
        name: str,
        writers: Sequence[PartitionWriter],
        rng: random.Random,
        clock: _SimClock,
        *,
        batch_size: int,
        linger_ms: int,
    ) -> None:
        self.name = name
        self.writers = list(writers)
        self.rng = rng
        self.clock = clock
        self.batch_size = batch_size
        self.linger_ms = linger_ms
        #: BuiltInPartitioner's stickyBatchSize (at least 1, as the producer makes it)
        self.sticky_batch_size = max(batch_size, 1)
        self.sent = 0
        self.produced: list[list[ProducedBatch]] = [[] for _ in self.writers]
        #: called with the writer before every append (leader elections, in the scenarios)
        self.on_append: Callable[[PartitionWriter], None] | None = None
        self._events: list[tuple[int, int, _OpenBatch | _Markers]] = []
        self._serial = 0
        self._hashes: dict[bytes, int] = {}

    @property
    def partitions(self) -> int:
        return len(self.writers)

    @property
    def now(self) -> int:
        return self.clock.now

    def partition_for_key(self, key: bytes) -> int:
        partition = self._hashes.get(key)
        if partition is None:
            partition = self._hashes[key] = default_partition(key, self.partitions)
        return partition

    # --- time ------------------------------------------------------------------------------

    def advance(self, t: int) -> None:
        """Move time to ``t``, sending every batch whose linger ran out and writing every
        marker that fell due on the way."""
        events = self._events
        while events and events[0][0] <= t:
            self._happen(*heapq.heappop(events))
        self.clock.now = max(self.clock.now, t)

    def finish(self) -> None:
        """The end of the run: what is still open lingers out and is sent, markers due are
        written."""
        events = self._events
        while events:
            self._happen(*heapq.heappop(events))

    def _schedule(self, t: int, event: _OpenBatch | _Markers) -> None:
        self._serial += 1
        heapq.heappush(self._events, (t, self._serial, event))

    def _happen(self, t: int, _: int, event: _OpenBatch | _Markers) -> None:
        if isinstance(event, _Markers):
            self.clock.now = max(self.clock.now, t)
            self._write_markers(event)
        elif event.client.open.get(event.partition) is event:  # else sent already
            self.clock.now = max(self.clock.now, t)
            self._send_batch(event, "linger")

    # --- what a producer does --------------------------------------------------------------

    def send(self, client: _Client, message: Message) -> int:
        """``KafkaProducer.send`` at the current time; returns the partition chosen."""
        self.sent += 1
        if client.transactional:
            client.in_transaction = True
        if message.key is not None:
            partition = self.partition_for_key(message.key)
            self._accumulate(client, partition, message)
            return partition
        if client.partitioner == _ROUND_ROBIN:
            if client.counter is None:
                # DefaultPartitioner's counter starts at a random int
                client.counter = self.rng.randrange(self.partitions)
            partition = client.counter % self.partitions
            client.counter += 1
            self._accumulate(client, partition, message)
            return partition
        if client.partitioner == _LIBRDKAFKA:
            # sticky.partitioning.linger.ms (default: twice linger.ms): a random partition,
            # kept for that long; 0 means a random partition for every message
            if client.sticky is None or self.now - client.sticky_since >= 2 * self.linger_ms:
                client.sticky = self.rng.randrange(self.partitions)
                client.sticky_since = self.now
            self._accumulate(client, client.sticky, message)
            return client.sticky
        return self._send_sticky(client, message)

    def _send_sticky(self, client: _Client, message: Message) -> int:
        """``RecordAccumulator.append`` with the built-in partitioner (KIP-794, no adaptive
        load statistics: every partition equally likely)."""
        limit = self.sticky_batch_size
        if client.sticky is None:
            self._switch(client)
        # partitionChanged: a switch held back while the partition had an unfinished batch
        # happens once its batches are all full (or sent)
        if client.sticky not in client.open and client.sticky_bytes >= limit:
            self._switch(client)
        partition = client.sticky
        assert partition is not None
        client.sticky_bytes += self._accumulate(client, partition, message)
        all_full = partition not in client.open  # full batches are sent at once here
        if (client.sticky_bytes >= limit and all_full) or client.sticky_bytes >= 2 * limit:
            self._switch(client)
        return partition

    def _switch(self, client: _Client) -> None:
        # BuiltInPartitioner.nextPartition: uniformly random, the current one included
        client.sticky = self.rng.randrange(self.partitions)
        client.sticky_bytes = 0

    def flush(self, client: _Client) -> None:
        """Send the client's open batches now (``flush()``, ``close()``, a commit)."""
        for partition in sorted(client.open):
            self._send_batch(client.open[partition], "flush")

    def restart(self, client: _Client) -> None:
        """The application restarts: ``close()`` sends what is open, a new epoch begins."""
        self.flush(client)
        client.restarted()

    def end_transaction(self, client: _Client, *, commit: bool, coordinator_epoch: int) -> None:
        """``commitTransaction`` / ``abortTransaction``: the producer flushes, then the
        coordinator writes a marker to every partition the transaction wrote to, a few ms
        later; other producers go on meanwhile, this one waits (its next transaction could
        not add partitions before the markers are written)."""
        assert client.producer is not None and client.transactional
        self.flush(client)
        due = self.now + self.rng.randint(1, 5)  # EndTxn, then WriteTxnMarkers
        markers = _Markers(
            client.producer, commit, coordinator_epoch, sorted(client.txn_partitions)
        )
        self._schedule(due, markers)
        client.blocked_until = due
        client.txn_partitions = set()
        client.in_transaction = False

    def _write_markers(self, markers: _Markers) -> None:
        for partition in markers.partitions:
            writer = self.writers[partition]
            if self.on_append is not None:
                self.on_append(writer)
            writer.end_transaction(
                markers.producer, commit=markers.commit, coordinator_epoch=markers.coordinator_epoch
            )

    # --- the accumulator --------------------------------------------------------------------

    def _accumulate(self, client: _Client, partition: int, message: Message) -> int:
        """Append to the partition's open batch or a new one; returns the bytes the estimate
        grew by (a new batch's header included), as the sticky partitioner counts them."""
        batch = client.open.get(partition)
        if batch is not None:
            size = batch.record_size(message)
            before = batch.estimate()
            if before + size > batch.write_limit:  # hasRoomFor: no
                self._send_batch(batch, "full")
                batch = None
            else:
                batch.add(message, size)
                appended = batch.estimate() - before
        if batch is None:
            header = _batch_header_size(client.magic, client.codec)
            batch = _OpenBatch(
                client,
                partition,
                # whole milliseconds: a batch takes at least the records of the ms it opened in
                deadline=self.now + max(self.linger_ms, 1),
                write_limit=max(
                    self.batch_size, _size_upper_bound(client.magic, client.codec, message)
                ),
                header=header,
                ratio=client.ratio,
            )
            batch.add(message, batch.record_size(message))
            appended = batch.estimate()
            client.open[partition] = batch
            self._schedule(batch.deadline, batch)
        if batch.estimate() >= batch.write_limit:  # isFull: ready at once
            self._send_batch(batch, "full")
        return appended

    def _send_batch(self, batch: _OpenBatch, reason: str) -> None:
        client = batch.client
        del client.open[batch.partition]
        writer = self.writers[batch.partition]
        if self.on_append is not None:
            self.on_append(writer)
        before = writer.log_bytes
        appended = writer.append(
            batch.messages,
            codec=client.codec,
            magic=client.magic,
            producer=client.producer,
            transactional=client.transactional,
            xerial=client.xerial,
        )
        written = writer.log_bytes - before
        estimated = batch.estimate()
        if client.transactional:
            client.txn_partitions.add(batch.partition)
        if batch.uses_ratio:
            # ProducerBatch.close: the compressed records against the uncompressed ones
            observed = _f32((written - batch.header) / batch.records_bytes)
            client.ratio = _update_ratio(client.ratio, observed)
        self.produced[batch.partition].append(
            ProducedBatch(
                producer=client.name,
                base_offset=appended.base_offset,
                records=len(batch.messages),
                magic=client.magic,
                codec=client.codec.name.lower(),
                records_bytes=batch.records_bytes,
                write_limit=batch.write_limit,
                compression_ratio=batch.ratio if batch.uses_ratio else None,
                estimated_bytes=estimated,
                log_bytes=written,
                closed_by=reason,
            )
        )


class _Load:
    """When records arrive: a Poisson process at ``rate`` records/s, or by default one whose
    rate moves between spells of 20-200 records at 100 to 1,000,000 records/s (log-uniform)."""

    def __init__(self, rng: random.Random, rate: float | None, start: int) -> None:
        self.rng = rng
        self.fixed = rate
        self.rate = rate or 1000.0
        self.left = 0
        self.t = float(start)

    def next(self, now: int) -> int:
        if self.fixed is None and self.left <= 0:
            self.rate = 10 ** self.rng.uniform(2, 6)
            self.left = self.rng.randint(20, 200)
        self.left -= 1
        # a producer blocked in commitTransaction sends nothing meanwhile
        self.t = max(self.t, float(now)) + self.rng.expovariate(self.rate / 1000.0)
        return int(self.t)


# --- what records hold ----------------------------------------------------------------------

_HEADER_KEYS = ("trace-id", "source", "content-type", "retry")
_SOURCES = (b"web", b"ios", b"android", b"batch-import")
#: Big values scale with the segment size (so index entries come sooner), up to this.
_BLOB_LIMIT = 32 * 1024


class _Content:
    """Values and headers of the generated records."""

    def __init__(self, rng: random.Random, segment_bytes: int) -> None:
        self.rng = rng
        self.limit = min(segment_bytes, _BLOB_LIMIT)

    def headers(self) -> list[tuple[str, bytes | None]]:
        rng = self.rng
        chosen = []
        for key in _HEADER_KEYS:
            if rng.random() < 0.35:
                if key == "trace-id":
                    chosen.append((key, rng.randbytes(8).hex().encode()))
                elif key == "source":
                    chosen.append((key, rng.choice(_SOURCES)))
                elif key == "content-type":
                    chosen.append((key, b"application/json"))
                else:
                    chosen.append((key, None))  # a header with a null value
        return chosen

    def value(self, key_number: int) -> bytes:
        rng = self.rng
        doc = {
            "id": key_number,
            "qty": rng.randint(1, 9),
            "sku": f"SKU-{rng.randrange(10_000):04d}",
            "price": round(rng.uniform(1, 500), 2),
            "note": "x" * rng.choice((0, 0, 0, 10, 40, 200)),
        }
        if rng.random() < 0.03:  # now and then a big one, so index entries come sooner
            doc["blob"] = rng.randbytes(rng.randint(self.limit // 80, self.limit // 20)).hex()
        return json.dumps(doc, separators=(",", ":")).encode()

    def message(
        self,
        *,
        key: bytes | None,
        number: int,
        timestamp: int,
        tombstones: float,
        headers: bool,
    ) -> Message:
        rng = self.rng
        value = None if key is not None and rng.random() < tombstones else self.value(number)
        if key is not None and rng.random() < 0.05:
            # an application that sets the event time: now and then a record comes late (a
            # replay, a slow upstream), so timestamps are not monotonic
            timestamp -= rng.randint(1000, 60000)
        return Message(key, value, self.headers() if headers else (), timestamp)


class _Run:
    """One topic's simulation: its producers' topic, the load and the record content."""

    def __init__(self, topic: _Topic, content: _Content, load: _Load) -> None:
        self.topic = topic
        self.content = content
        self.load = load
        self.rng = topic.rng

    def arrive(self, clients: Sequence[_Client], weights: Sequence[float] | None = None) -> _Client:
        """Time moves on to the next record's arrival; returns the client that has it (one
        not waiting for its transaction's markers, which may make the record wait)."""
        topic = self.topic
        t = self.load.next(topic.now)
        ready = [i for i, c in enumerate(clients) if c.blocked_until <= t]
        if not ready:
            t = min(c.blocked_until for c in clients)
            ready = [i for i, c in enumerate(clients) if c.blocked_until <= t]
        topic.advance(t)
        if weights is None:
            return clients[self.rng.choice(ready)]
        return clients[self.rng.choices(ready, [weights[i] for i in ready])[0]]

    def send(
        self,
        client: _Client,
        *,
        prefix: bytes,
        space: int,
        null_keys: float = 0.0,
        tombstones: float = 0.05,
        headers: bool = True,
        numbers: Sequence[int] | None = None,
    ) -> int:
        """``client`` sends a record now; returns its partition."""
        topic, rng = self.topic, self.rng
        number = rng.choice(numbers) if numbers else rng.randrange(space)
        key = None if rng.random() < null_keys else prefix + b"-%05d" % number
        message = self.content.message(
            key=key,
            number=number,
            timestamp=topic.now,
            tombstones=tombstones,
            headers=headers and client.magic == 2,
        )
        return topic.send(client, message)

    def numbers_by_partition(self, prefix: bytes, space: int) -> list[list[int]]:
        """Key numbers grouped by the partition their key hashes to; a partition that none of
        ``space`` keys reaches gets the first keys beyond it that do."""
        topic = self.topic
        out: list[list[int]] = [[] for _ in range(topic.partitions)]
        for number in range(space):
            out[topic.partition_for_key(prefix + b"-%05d" % number)].append(number)
        number = space
        while not all(out):
            partition = topic.partition_for_key(prefix + b"-%05d" % number)
            if not out[partition]:
                out[partition].append(number)
            number += 1
        return out


# --- scenarios ------------------------------------------------------------------------------


def _orders(run: _Run, target: int) -> None:
    topic, rng = run.topic, run.rng
    total = target * topic.partitions
    space = max(total // 3, 1)
    java = [
        _Client(f"java-{codec.name.lower()}", codec, producer=Producer(1000 + i))
        for i, codec in enumerate((Codec.NONE, Codec.GZIP, Codec.LZ4, Codec.ZSTD))
    ]
    # librdkafka's default: not idempotent, raw snappy blocks; murmur2_random, the
    # partitioner that agrees with Java's (its own default, consistent_random, hashes CRC32)
    rdkafka = _Client(
        "librdkafka-snappy",
        Codec.SNAPPY,
        partitioner=_LIBRDKAFKA,
        xerial=False,
        estimates_ratio=False,
    )
    txns = [
        _Client("java-txn-a", Codec.NONE, producer=Producer(5000, epoch=3), transactional=True),
        _Client("java-txn-b", Codec.LZ4, producer=Producer(6000), transactional=True),
    ]
    clients = [*java, rdkafka, *txns]
    weights = [0.12] * 5 + [0.2, 0.2]
    coordinator_epoch = {id(c): rng.randint(0, 5) for c in txns}
    txn_left = {id(c): 0 for c in txns}
    steps = {p: {target // 3, 2 * target // 3} for p in range(topic.partitions)}

    def leader_elections(w: PartitionWriter) -> None:
        reached = {s for s in steps[w.partition] if w.summary.records >= s}
        if reached:
            steps[w.partition] -= reached
            w.leader_epoch += rng.choice((1, 1, 2))

    topic.on_append = leader_elections

    def send(client: _Client, **kwargs: Any) -> int:
        run.arrive([client])
        return run.send(client, prefix=b"order", space=space, **kwargs)

    def end(client: _Client, commit: bool) -> None:
        topic.end_transaction(
            client, commit=commit, coordinator_epoch=coordinator_epoch[id(client)]
        )

    while topic.sent < total:
        client = run.arrive(clients, weights)
        run.send(client, prefix=b"order", space=space, null_keys=0.02)
        if client.transactional:
            if txn_left[id(client)] <= 0:
                txn_left[id(client)] = rng.randint(1, 30)
            txn_left[id(client)] -= 1
            if txn_left[id(client)] == 0:
                end(client, commit=rng.random() < 0.65)
        elif client.producer is not None and rng.random() < 0.002:
            topic.restart(client)  # InitProducerId bumps its epoch, sequences restart
    for client in txns:
        if client.in_transaction:
            end(client, commit=rng.random() < 0.5)
    topic.advance(max(c.blocked_until for c in txns))  # the markers are written
    # Make sure both outcomes exist, and on partition 0 leave one transaction open.
    if sum(w.summary.transactions_aborted for w in topic.writers) == 0:
        for _ in range(3):
            send(txns[0])
        end(txns[0], commit=False)
        topic.advance(txns[0].blocked_until)
    if sum(w.summary.transactions_committed for w in topic.writers) == 0:
        for _ in range(3):
            send(txns[1])
        end(txns[1], commit=True)
    zero = run.numbers_by_partition(b"order", space)[0]
    for _ in range(4):  # the producer dies before it commits
        send(txns[1], numbers=zero)


def _legacy_events(run: _Run, target: int) -> None:
    topic = run.topic
    total = target * topic.partitions
    space = max(total // 4, 1)
    phases = [
        (0, "java-0.9", (Codec.NONE, Codec.GZIP, Codec.SNAPPY)),
        (1, "java-0.10", (Codec.NONE, Codec.GZIP, Codec.SNAPPY, Codec.LZ4)),
    ]
    for i, (magic, version, codecs) in enumerate(phases):
        # clients before 2.4 send records without a key round-robin
        clients = [
            _Client(f"{version}-{c.name.lower()}", c, magic=magic, partitioner=_ROUND_ROBIN)
            for c in codecs
        ]
        stop = total * (i + 1) // 3
        while topic.sent < stop:
            run.send(run.arrive(clients), prefix=b"event", space=space, null_keys=0.25)
        for client in clients:  # the applications are upgraded: close() sends what is open
            topic.flush(client)
    # message.format.version moved to 2, the clients to idempotent producers
    for w in topic.writers:
        w.leader_epoch = 5 + w.partition
    modern = [
        _Client(f"java-{codec.name.lower()}", codec, producer=Producer(2000 + i))
        for i, codec in enumerate((Codec.NONE, Codec.ZSTD, Codec.SNAPPY))
    ]
    while topic.sent < total:
        run.send(run.arrive(modern), prefix=b"event", space=space, null_keys=0.25)


def _clicks(run: _Run, target: int) -> None:
    topic = run.topic
    total = target * topic.partitions
    space = max(total // 4, 50)
    old = [
        _Client(f"java-0.10-{c.name.lower()}", c, magic=1, partitioner=_ROUND_ROBIN)
        for c in (Codec.NONE, Codec.GZIP, Codec.LZ4)
    ]
    while topic.sent < total // 5:
        run.send(run.arrive(old), prefix=b"session", space=space, null_keys=0.15)
    for client in old:
        topic.flush(client)
    modern = [
        _Client("java-lz4", Codec.LZ4, producer=Producer(3000)),
        _Client("java-zstd", Codec.ZSTD, producer=Producer(3001)),
        _Client("java-gzip", Codec.GZIP),
        _Client("java-none", Codec.NONE),
    ]
    while topic.sent < total:
        run.send(run.arrive(modern), prefix=b"session", space=space, null_keys=0.15)


def _users(run: _Run, target: int) -> dict[int, int]:
    """Returns the cleaner checkpoints: per partition, where the dirty (uncleaned) tail starts."""
    topic, rng, content = run.topic, run.rng, run.content
    producer = Producer(4000)
    codecs = (Codec.NONE, Codec.GZIP, Codec.ZSTD)
    numbers = run.numbers_by_partition(b"user", 30)
    checkpoints = {}
    for w in topic.writers:
        # The follower copies what the cleaner left of the leader's batches, whose records
        # had been placed by key like any others.
        sequence = 0
        offset = 0
        cycle: list[Codec] = []
        while w.summary.records < target * 2 // 3:
            # The leader's batch had `size` records; the cleaner kept a few of them.
            size = rng.randint(2, 15)
            kept = sorted(rng.sample(range(size), rng.randint(0, min(size, 5))))
            topic.advance(topic.now + rng.randint(1, 40))
            messages = []
            for delta in kept:
                number = rng.choice(numbers[w.partition])
                m = content.message(
                    key=b"user-%05d" % number,
                    number=number,
                    timestamp=topic.now - rng.randint(0, 25),
                    tombstones=0.25,
                    headers=True,
                )
                messages.append(Message(m.key, m.value, m.headers, m.timestamp, delta))
            has_tombstone = any(m.value is None for m in messages)
            if messages or rng.random() < 0.3:
                # An emptied batch survives only for its producer state (the last sequence).
                if not cycle:
                    cycle = rng.sample(codecs, len(codecs))
                w.append(
                    messages,
                    base_offset=offset,
                    last_offset_delta=size - 1,
                    codec=cycle.pop(),
                    producer=producer,
                    base_sequence=sequence,
                    delete_horizon_ms=(topic.now + 86_400_000) if has_tombstone else None,
                )
            sequence += size
            offset += size + (rng.randint(1, 30) if rng.random() < 0.2 else 0)
        checkpoints[w.partition] = w.next_offset
    copied = sum(w.summary.records for w in topic.writers)
    tail = [
        _Client("java-gzip", Codec.GZIP, producer=Producer(4000, 1)),  # restarted since
        _Client("java-zstd", Codec.ZSTD, producer=Producer(4001)),
        _Client("java-none", Codec.NONE),
    ]
    while copied + topic.sent < target * topic.partitions:
        run.send(run.arrive(tail), prefix=b"user", space=30, tombstones=0.25)
    return checkpoints


_SCENARIOS: dict[str, Callable[[_Run, int], dict[int, int] | None]] = {
    "orders": _orders,
    "legacy-events": _legacy_events,
    "clicks": _clicks,
    "users": _users,
}
_TIMESTAMP_TYPES = {"clicks": TimestampType.LOG_APPEND_TIME}


# --- benchmark shape ------------------------------------------------------------------------


@functools.lru_cache(maxsize=4)
def _bench_users(partitions: int) -> tuple[tuple[int, ...], ...]:
    """The bench's user ids by the partition their key (``user-NNNNNN``) hashes to."""
    out: list[list[int]] = [[] for _ in range(partitions)]
    for user in range(_BENCH_USERS):
        out[default_partition(b"user-%06d" % user, partitions)].append(user)
    if not all(out):
        raise ValueError(f"too many partitions for the bench topic's {_BENCH_USERS} keys")
    return tuple(tuple(users) for users in out)


def _bench(
    w: PartitionWriter,
    users: Sequence[int],
    target_bytes: int,
    codec: Codec,
    progress: Callable[[int], None] | None,
) -> None:
    """Batches of 1000 records, 100-byte values, one header, until ``target_bytes``."""
    partition = w.partition
    producer = Producer(9000 + partition)
    base_time = DEFAULT_START_TIME_MS + partition
    pad = b"." * BENCH_VALUE_BYTES
    number = 0
    while True:
        messages = []
        for i in range(number, number + BENCH_RECORDS_PER_BATCH):
            user = users[(i * 2654435761) % len(users)]
            head = b'{"id":%d,"user":%d,"amount":%d,"note":"' % (i, user, (i * 7919) % 100_000)
            value = head + pad[: BENCH_VALUE_BYTES - len(head) - 2] + b'"}'
            messages.append(
                Message(
                    key=b"user-%06d" % user,
                    value=value,
                    headers=(("trace-id", b"%016x" % (i * 0x9E3779B97F4A7C15 & (2**64 - 1))),),
                    timestamp=base_time + i // 8,
                )
            )
        number += BENCH_RECORDS_PER_BATCH
        before = w.log_bytes
        w.append(messages, codec=codec, producer=producer)
        grown = w.log_bytes - before
        if progress is not None:
            progress(grown)
        if w.log_bytes + grown > target_bytes:
            return


# --- the log dir ----------------------------------------------------------------------------


def _topic_id(rng: random.Random) -> str:
    raw = rng.randbytes(16)
    return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


def _checkpoint(path: Path, entries: Sequence[tuple[str, int, int]]) -> None:
    lines = ["0", str(len(entries)), *(f"{t} {p} {o}" for t, p, o in entries)]
    path.write_text("".join(f"{line}\n" for line in lines))


def generate_log_dir(
    path: str | os.PathLike[str],
    *,
    seed: int = 0,
    topics: Sequence[str] | None = None,
    partitions: int | None = None,
    records: int = DEFAULT_RECORDS,
    segment_bytes: int | None = None,
    size_bytes: int | None = None,
    codec: Codec | int = Codec.NONE,
    index_interval_bytes: int = 4096,
    clean_shutdown: bool = True,
    fast: bool | None = None,
    progress: Callable[[int], None] | None = None,
    batch_size: int = DEFAULT_BATCH_SIZE,
    linger_ms: int = DEFAULT_LINGER_MS,
    rate: float | None = None,
) -> GeneratedLog:
    """Write a Kafka log directory at ``path`` (created; must be empty) and EXPECTED.json.

    ``topics`` picks scenarios from :data:`TOPIC_KINDS` (default: all of them, or none when
    ``size_bytes`` is given); ``partitions`` overrides each topic's partition count;
    ``records`` is the number of data records per partition on average (each topic gets
    ``records * partitions``; keys hash unevenly, and the last batches may go a little over).
    ``batch_size`` and ``linger_ms`` are every simulated producer's ``batch.size`` and
    ``linger.ms`` (``batch_size`` is held to half the segment size, as a broker refuses batches
    larger than a segment); ``rate`` is the records per second each topic receives (default:
    a load that moves between 100 and 1,000,000 records/s). ``size_bytes`` adds topic ``bench``
    (``partitions`` or 2 partitions) of about that many bytes of ``.log``, in batches of 1000
    records compressed with ``codec``. ``fast`` picks the struct serialiser over the
    Construct builders (same bytes; default: fast only for ``bench``). ``progress`` is called
    with the bytes of each benchmark batch written.
    """
    root = Path(path)
    if topics is None:
        topics = () if size_bytes is not None else tuple(TOPIC_KINDS)
    unknown = [t for t in topics if t not in TOPIC_KINDS]
    if unknown:
        raise ValueError(f"unknown topic scenario(s) {unknown}; choose from {list(TOPIC_KINDS)}")
    if partitions is not None and partitions < 1:
        raise ValueError("partitions must be at least 1")
    if topics and segment_bytes is not None and segment_bytes < MIN_SEGMENT_BYTES:
        raise ValueError(f"segment_bytes must be at least {MIN_SEGMENT_BYTES} for the scenarios")
    if batch_size < 0:
        raise ValueError(f"batch_size must be 0 or more, not {batch_size}")
    if linger_ms < 0:
        raise ValueError(f"linger_ms must be 0 or more, not {linger_ms}")
    if rate is not None and not rate > 0:
        raise ValueError(f"rate must be positive, not {rate}")
    root.mkdir(parents=True, exist_ok=True)
    if any(root.iterdir()):
        raise FileExistsError(f"{root} is not empty")
    options = {
        "topics": list(topics),
        "partitions": partitions,
        "records": records,
        "segment_bytes": segment_bytes,
        "size_bytes": size_bytes,
        "codec": Codec(int(codec)).name.lower(),
        "index_interval_bytes": index_interval_bytes,
        "clean_shutdown": clean_shutdown,
        "batch_size": batch_size,
        "linger_ms": linger_ms,
        "rate": rate,
    }
    result = GeneratedLog(root, seed, options)
    meta_rng = random.Random(f"{seed}/log-dir")
    checkpoints: dict[str, list[tuple[str, int, int]]] = {
        RECOVERY_POINT_CHECKPOINT: [],
        REPLICATION_OFFSET_CHECKPOINT: [],
        LOG_START_OFFSET_CHECKPOINT: [],
        CLEANER_OFFSET_CHECKPOINT: [],
    }

    def writer(topic: str, partition: int, **kwargs: Any) -> PartitionWriter:
        return PartitionWriter(
            root,
            topic,
            partition,
            index_interval_bytes=index_interval_bytes,
            clean_shutdown=clean_shutdown,
            topic_id=topic_ids[topic],
            **kwargs,
        )

    def finished(w: PartitionWriter, timestamp_type: int) -> None:
        name = w.path.name
        result.partitions[name] = w.summary
        result.timestamp_types[name] = timestamp_type
        checkpoints[RECOVERY_POINT_CHECKPOINT].append((w.topic, w.partition, w.recovery_point))
        checkpoints[REPLICATION_OFFSET_CHECKPOINT].append((w.topic, w.partition, w.next_offset))

    all_topics = sorted([*topics, *([BENCH_TOPIC] if size_bytes is not None else [])])
    topic_ids = {t: _topic_id(meta_rng) for t in all_topics}
    for topic in all_topics:
        if topic == BENCH_TOPIC:
            assert size_bytes is not None
            count = partitions or BENCH_DEFAULT_PARTITIONS
            users = _bench_users(count)
            for partition in range(count):
                with writer(
                    topic,
                    partition,
                    segment_bytes=segment_bytes or 1024 * 1024 * 1024,
                    fast=True if fast is None else fast,
                ) as w:
                    share = size_bytes // count + (partition < size_bytes % count)
                    _bench(w, users[partition], share, Codec(int(codec)), progress)
                finished(w, TimestampType.CREATE_TIME)
            continue
        timestamp_type = _TIMESTAMP_TYPES.get(topic, TimestampType.CREATE_TIME)
        segment = segment_bytes or DEFAULT_SEGMENT_BYTES
        rng = random.Random(f"{seed}/{topic}")
        clock = _SimClock(DEFAULT_START_TIME_MS + rng.randrange(3_600_000))
        writers: list[PartitionWriter] = []
        try:
            for partition in range(partitions or TOPIC_KINDS[topic]):
                writers.append(
                    writer(
                        topic,
                        partition,
                        segment_bytes=segment,
                        timestamp_type=timestamp_type,
                        clock=clock,
                        fast=bool(fast),
                        keep_records=True,
                    )
                )
            sim = _Topic(
                topic,
                writers,
                rng,
                clock,
                batch_size=min(batch_size, segment // 2),
                linger_ms=linger_ms,
            )
            run = _Run(sim, _Content(rng, segment), _Load(rng, rate, clock.now))
            cleaned_to = _SCENARIOS[topic](run, records)
            sim.finish()
        finally:
            for w in writers:
                w.close()
        for w in writers:
            finished(w, timestamp_type)
            result.records[w.path.name] = w.records
            result.produced[w.path.name] = sim.produced[w.partition]
        for partition, offset in sorted((cleaned_to or {}).items()):
            checkpoints[CLEANER_OFFSET_CHECKPOINT].append((topic, partition, offset))

    for name, entries in checkpoints.items():
        _checkpoint(root / name, entries)
    (root / "meta.properties").write_text(
        "#\n#Tue Nov 14 22:13:20 UTC 2023\n"
        f"node.id=1\ndirectory.id={_topic_id(meta_rng)}\nversion=1\n"
        f"cluster.id={_topic_id(meta_rng)}\n"
    )
    if clean_shutdown:
        (root / ".kafka_cleanshutdown").write_text('{"version":0,"brokerEpoch":42}')
    (root / EXPECTED_FILE).write_text(json.dumps(result.to_json(), indent=2) + "\n")
    return result


# --- command line ---------------------------------------------------------------------------

_SIZE = re.compile(r"\s*([0-9]+(?:\.[0-9]+)?)\s*([kmgt]?)(i?b?)\s*", re.IGNORECASE)


def parse_size(text: str) -> int:
    """``2GiB``, ``512MiB``, ``64k``, ``1.5G``, ``1000000`` -> bytes (powers of 1024)."""
    match = _SIZE.fullmatch(text)
    if not match:
        raise argparse.ArgumentTypeError(f"not a size: {text!r} (try 2GiB, 512MiB, 65536)")
    number, unit, _ = match.groups()
    scale = 1024 ** " kmgt".index(unit.lower() or " ")
    value = int(float(number) * scale)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"size must be positive: {text!r}")
    return value


EPILOG = f"""\
scenarios (--topics): {", ".join(TOPIC_KINDS)} (default: all)

producers: keyed records go to the partition their key hashes to (murmur2, as the Java
client's default partitioner); records without a key follow the uniform sticky partitioner
(Kafka 3.3+), round-robin for the magic 0/1 era clients. Each producer batches per partition
by --batch-size (batch.size) and --linger-ms (linger.ms); see docs/generate.md.

examples:
  kafka-format generate demo-logs
  kafka-format generate demo-logs --seed 7 --topics orders,users --partitions 2 --records 2000
  kafka-format generate busy-logs --topics orders --rate 500000 --segment-bytes 1MiB
  kafka-format generate slow-logs --topics clicks --rate 50 --linger-ms 0
  kafka-format generate bench-logs --size 2GiB                    # the benchmarks' shape
  kafka-format generate bench-logs --size 512MiB --codec zstd --segment-bytes 128MiB
  kafka-format generate live-logs --live     # active segments as a running broker leaves them
  kafka-format verify demo-logs && kafka-format dump --jsonl demo-logs/orders-0 | sha256sum
"""


def register(sub) -> None:
    """Add ``generate`` to the command line."""
    g = sub.add_parser(
        "generate",
        help="write a realistic Kafka log directory (for demos, tests and benchmarks)",
        description="Write a Kafka log directory as producers and a broker write it: "
        "records placed by key as the default partitioner does and batched by batch.size "
        "and linger.ms, topics and partitions, segments rolled at a size, .index/.timeindex "
        "entries every index-interval bytes, transactions with .txnindex, producer "
        "snapshots, every codec and magic; plus EXPECTED.json describing what was written. "
        "Same seed, same bytes.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=EPILOG,
    )
    g.add_argument("dir", metavar="DIR", help="log directory to create (must be empty)")
    g.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    g.add_argument(
        "--topics",
        type=lambda text: [t for t in text.split(",") if t],
        help="comma-separated scenarios to write",
    )
    g.add_argument("--partitions", type=_positive, help="partitions per topic")
    g.add_argument(
        "--records",
        type=_positive,
        default=DEFAULT_RECORDS,
        help=f"data records per partition, on average (default {DEFAULT_RECORDS})",
    )
    g.add_argument(
        "--segment-bytes",
        type=parse_size,
        help="roll segments at this size (default 32KiB; 1GiB with --size)",
    )
    g.add_argument(
        "--batch-size",
        type=_batch_size,
        default=DEFAULT_BATCH_SIZE,
        metavar="BYTES",
        help=f"the producers' batch.size (default {DEFAULT_BATCH_SIZE}; at most half "
        "of --segment-bytes; 0: a batch per record)",
    )
    g.add_argument(
        "--linger-ms",
        type=_not_negative,
        default=DEFAULT_LINGER_MS,
        metavar="MS",
        help=f"the producers' linger.ms (default {DEFAULT_LINGER_MS}, Kafka 4.0's; 0 before)",
    )
    g.add_argument(
        "--rate",
        type=_positive_float,
        metavar="RECORDS_PER_S",
        help="records per second each topic receives (default: a load moving between "
        "100 and 1,000,000/s)",
    )
    g.add_argument(
        "--size", type=parse_size, help="add topic 'bench' with about this many bytes of log"
    )
    g.add_argument(
        "--codec",
        choices=[c.name.lower() for c in Codec],
        default="none",
        help="codec of the bench batches (default none)",
    )
    g.add_argument(
        "--index-interval-bytes",
        type=_positive,
        default=4096,
        help="log.index.interval.bytes (default 4096)",
    )
    g.add_argument(
        "--live",
        action="store_true",
        help="leave active segments' indexes preallocated, as a running broker has them",
    )
    g.add_argument(
        "--construct",
        action="store_true",
        help="build every batch with the Construct builders, bench included (slow)",
    )
    g.set_defaults(run=_run_generate)


def _positive(text: str) -> int:
    value = int(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be positive, got {value}")
    return value


def _not_negative(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, got {value}")
    return value


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a positive number, got {text!r}")
    return value


def _batch_size(text: str) -> int:
    return 0 if text.strip() == "0" else parse_size(text)


class _Progress:
    """Bytes written so far on stderr, at most every half second, when it is a terminal."""

    def __init__(self, total: int) -> None:
        self.total = total
        self.done = 0
        self.shown = 0.0

    def __call__(self, grown: int) -> None:
        self.done += grown
        now = time.monotonic()
        if now - self.shown >= 0.5:
            self.shown = now
            mib = 1024 * 1024
            sys.stderr.write(f"\rgenerate: {self.done / mib:,.0f} / {self.total / mib:,.0f} MiB")
            sys.stderr.flush()

    def finish(self) -> None:
        sys.stderr.write("\r\033[K")
        sys.stderr.flush()


def _run_generate(args: argparse.Namespace) -> int:
    from .errors import KafkaFormatError

    root = Path(args.dir)
    if root.exists() and (not root.is_dir() or any(root.iterdir())):
        raise KafkaFormatError("exists and is not an empty directory", file=str(root))
    progress = _Progress(args.size) if args.size and sys.stderr.isatty() else None
    try:
        result = generate_log_dir(
            root,
            seed=args.seed,
            topics=args.topics,
            partitions=args.partitions,
            records=args.records,
            segment_bytes=args.segment_bytes,
            size_bytes=args.size,
            codec=Codec[args.codec.upper()],
            index_interval_bytes=args.index_interval_bytes,
            clean_shutdown=not args.live,
            fast=False if args.construct else None,
            progress=progress,
            batch_size=args.batch_size,
            linger_ms=args.linger_ms,
            rate=args.rate,
        )
    except ValueError as exc:
        raise KafkaFormatError(str(exc), file=str(root)) from None
    finally:
        if progress is not None:
            progress.finish()
    total = sum(s.records for s in result.partitions.values())
    size = sum(p.stat().st_size for p in root.glob("*/*.log"))
    print(
        f"wrote {len(result.partitions)} partition{'' if len(result.partitions) == 1 else 's'}, "
        f"{total:,} records, {size:,} bytes of log "
        f"to {root} (expected contents in {root / EXPECTED_FILE})"
    )
    return 0
