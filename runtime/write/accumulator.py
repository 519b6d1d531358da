"""The producers' side of ``kafka-format generate``: Kafka's producer and its
``RecordAccumulator`` as simulated, placement and batching, in simulated time.

* a :class:`Client` is one producer application: its codec and magic, its producer id (when
  idempotent or transactional), its partitioner for records without a key, and its open
  batches;
* :class:`Topic` holds a topic's producers, accumulators and partition leaders: it places each
  record as Kafka's Java client does (a keyed record to the partition its key hashes to,
  :func:`~kafka_format.runtime.partitioner.default_partition`, murmur2; a record without a key
  to the uniform sticky partition of Kafka 3.3+ (KIP-794), round-robin for pre-2.4 clients, or
  a librdkafka-style partition that sticks for ``2 * linger.ms``), groups records per partition
  into batches that close when the next record would take the producer's estimate of their
  size over ``batch.size`` (uncompressed bytes, or for compressed batches the uncompressed
  bytes times Java's ``CompressionRatioEstimator`` ratio times 1.05; a record larger than
  ``batch.size`` gets a batch of its own), when the estimate reaches ``batch.size``, or
  ``linger.ms`` after their first record, and hands each batch to the partition's
  :class:`~kafka_format.runtime.write.writer.PartitionWriter` when it is sent; transaction
  ends write the coordinator's COMMIT/ABORT markers a few ms later;
* :class:`SimClock` is the simulated time the writers read as the broker's "now", and
  :class:`Load` when records arrive.

Every batch sent is recorded as a :class:`ProducedBatch`. The format's sizes come from
:mod:`~kafka_format.runtime.sizes`; the estimates here are the producer's, in Java's float
arithmetic.
"""

from __future__ import annotations

import heapq
import random
import struct
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from ..format.codecs import Codec
from ..format.sizes import batch_header_size, legacy_record_size, size_upper_bound, v2_record_size
from .partitioner import default_partition
from .writer import Message, PartitionWriter, Producer

__all__ = [
    "DEFAULT_BATCH_SIZE",
    "DEFAULT_LINGER_MS",
    "LIBRDKAFKA",
    "ROUND_ROBIN",
    "STICKY",
    "Client",
    "Load",
    "ProducedBatch",
    "SimClock",
    "Topic",
]

#: The Java producer's ``batch.size`` and ``linger.ms`` defaults (linger.ms: 5 since Kafka 4.0,
#: KIP-1030; 0 before).
DEFAULT_BATCH_SIZE = 16384
DEFAULT_LINGER_MS = 5


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


# --- the producer's size accounting ---------------------------------------------------------
# MemoryRecordsBuilder's estimate and CompressionRatioEstimator, in Java's float (32-bit)
# arithmetic where Java uses floats (the records' and headers' sizes: sizes.py).

_FLOAT = struct.Struct("<f")


def _f32(value: float) -> float:
    return _FLOAT.unpack(_FLOAT.pack(value))[0]


_ESTIMATION_FACTOR = _f32(1.05)  # COMPRESSION_RATE_ESTIMATION_FACTOR
_RATIO_IMPROVING_STEP = _f32(0.005)
_RATIO_DETERIORATE_STEP = _f32(0.05)


def _update_ratio(current: float, observed: float) -> float:
    """``CompressionRatioEstimator.updateEstimation``: worse news moves the estimate at once
    (by at least 0.05), better news slowly (by at most 0.005 per batch)."""
    if observed > current:
        return max(_f32(current + _RATIO_DETERIORATE_STEP), observed)
    if observed < current:
        return max(_f32(current - _RATIO_IMPROVING_STEP), observed)
    return current


# --- producers and their accumulators -------------------------------------------------------

STICKY = "sticky"  # Java 3.3+: BuiltInPartitioner, uniform sticky (KIP-794)
ROUND_ROBIN = "round-robin"  # Java before 2.4: DefaultPartitioner's counter
LIBRDKAFKA = "librdkafka"  # murmur2_random, null keys sticky for sticky.partitioning.linger.ms


@dataclass(slots=True, eq=False)
class Client:
    """One producer application (a client instance) writing to one topic."""

    name: str
    codec: Codec = Codec.NONE
    magic: int = 2
    producer: Producer | None = None
    transactional: bool = False
    partitioner: str = STICKY
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

    client: Client
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
            return legacy_record_size(self.client.magic, m.key, m.value)
        assert m.timestamp is not None
        delta = m.timestamp - self.base_timestamp if self.messages else 0
        return v2_record_size(len(self.messages), delta, m.key, m.value, m.headers)

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


class SimClock:
    """Simulated time in epoch ms; the writers read it as the broker's "now"."""

    def __init__(self, now: int) -> None:
        self.now = now

    def __call__(self) -> int:
        return self.now


class Topic:
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
        clock: SimClock,
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

    def send(self, client: Client, message: Message) -> int:
        """``KafkaProducer.send`` at the current time; returns the partition chosen."""
        self.sent += 1
        if client.transactional:
            client.in_transaction = True
        if message.key is not None:
            partition = self.partition_for_key(message.key)
            self._accumulate(client, partition, message)
            return partition
        if client.partitioner == ROUND_ROBIN:
            if client.counter is None:
                # DefaultPartitioner's counter starts at a random int
                client.counter = self.rng.randrange(self.partitions)
            partition = client.counter % self.partitions
            client.counter += 1
            self._accumulate(client, partition, message)
            return partition
        if client.partitioner == LIBRDKAFKA:
            # sticky.partitioning.linger.ms (default: twice linger.ms): a random partition,
            # kept for that long; 0 means a random partition for every message
            if client.sticky is None or self.now - client.sticky_since >= 2 * self.linger_ms:
                client.sticky = self.rng.randrange(self.partitions)
                client.sticky_since = self.now
            self._accumulate(client, client.sticky, message)
            return client.sticky
        return self._send_sticky(client, message)

    def _send_sticky(self, client: Client, message: Message) -> int:
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

    def _switch(self, client: Client) -> None:
        # BuiltInPartitioner.nextPartition: uniformly random, the current one included
        client.sticky = self.rng.randrange(self.partitions)
        client.sticky_bytes = 0

    def flush(self, client: Client) -> None:
        """Send the client's open batches now (``flush()``, ``close()``, a commit)."""
        for partition in sorted(client.open):
            self._send_batch(client.open[partition], "flush")

    def restart(self, client: Client) -> None:
        """The application restarts: ``close()`` sends what is open, a new epoch begins."""
        self.flush(client)
        client.restarted()

    def end_transaction(self, client: Client, *, commit: bool, coordinator_epoch: int) -> None:
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

    def _accumulate(self, client: Client, partition: int, message: Message) -> int:
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
            header = batch_header_size(client.magic, client.codec)
            batch = _OpenBatch(
                client,
                partition,
                # whole milliseconds: a batch takes at least the records of the ms it opened in
                deadline=self.now + max(self.linger_ms, 1),
                write_limit=max(
                    self.batch_size,
                    size_upper_bound(
                        client.magic, client.codec, message.key, message.value, message.headers
                    ),
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


class Load:
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
