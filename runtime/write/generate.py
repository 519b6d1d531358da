"""``kafka-format generate``: a realistic Kafka log directory, written as producers and a broker
write it. This module holds the scenarios and writes the log dir; the producers are simulated in
:mod:`~kafka_format.runtime.accumulator` and the command line is
:mod:`~kafka_format.runtime.cli.generate`.

Each topic is written by simulated producer applications (``docs/generate.md`` has the model):

* records arrive at a simulated rate (``rate`` records/s per topic, or by default a load that
  moves between quiet and busy spells); a record's CreateTime is its arrival time (now and then
  an application sets an older event time);
* each producer places a record the way Kafka's Java client does (by the murmur2 hash of its
  key; without a key sticky, round-robin or librdkafka-style, by client era) and groups its
  records per partition as ``RecordAccumulator`` does, by ``batch.size`` and ``linger.ms``;
  transaction ends, producer restarts and the end of the run flush the rest;
* the partition leader (:class:`~kafka_format.runtime.write.writer.PartitionWriter`) appends each
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
``payments``, ``customers``, ``pageviews`` (and ``_schemas``)
    values framed as Confluent's serializers frame them, Avro, Protobuf and JSON Schema, their
    schemas evolving over time, a few plain records among them; and the Schema Registry's
    store holding those schemas (``payloads=False`` leaves them out; :mod:`.generate_payloads`).

With ``size_bytes`` it writes the benchmark shape of issue 6 instead: topic ``bench``, v2
batches of 1000 records, 100-byte values, one header, uncompressed unless ``codec`` says
otherwise, until the ``.log`` files hold about ``size_bytes`` (keys still hash to their
partition; batching is not simulated there: the shape is fixed for the benchmarks).

The log dir also gets the broker's checkpoint files (recovery point, replication offset,
log start offset, cleaner offset), ``meta.properties``, ``.kafka_cleanshutdown`` after a clean
shutdown, each partition's ``partition.metadata``, and ``EXPECTED.json``: per partition what
was written (offsets, segments, codecs, magics, record and transaction counts) and, except for
benchmark partitions, the SHA-256 of its data records in the canonical JSON lines form, which is
exactly the output of ``kafka-format dump --jsonl --canonical DIR/topic-N`` (and with
``--isolation read_committed`` for the second digest). Same seed, same bytes.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import json
import os
import random
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..files.checkpoints import (
    CLEANER_OFFSET_CHECKPOINT,
    LOG_START_OFFSET_CHECKPOINT,
    RECOVERY_POINT_CHECKPOINT,
    REPLICATION_OFFSET_CHECKPOINT,
)
from ..format.codecs import Codec
from ..model import TimestampType
from .accumulator import (
    DEFAULT_BATCH_SIZE,
    DEFAULT_LINGER_MS,
    LIBRDKAFKA,
    ROUND_ROBIN,
    Client,
    Load,
    ProducedBatch,
    SimClock,
    Topic,
)
from .generate_payloads import PAYLOAD_TOPICS, SCHEMAS_TOPIC, Meant, PayloadRegistry
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
    "records_digest",
]

EXPECTED_FILE = "EXPECTED.json"
BENCH_TOPIC = "bench"
#: Scenario names and their default partition counts.
TOPIC_KINDS = {"orders": 3, "legacy-events": 2, "clicks": 2, "users": 1, **PAYLOAD_TOPICS}
DEFAULT_RECORDS = 400
DEFAULT_SEGMENT_BYTES = 32 * 1024
#: Scenario batches stay well under this (a batch larger than a segment cannot be appended).
MIN_SEGMENT_BYTES = 8 * 1024
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


@dataclass(slots=True)
class GeneratedLog:
    """What :func:`generate_log_dir` wrote; ``EXPECTED.json`` is :meth:`to_json`."""

    path: Path
    seed: int
    options: dict[str, Any]
    #: per partition directory name (``topic-N``), by topic then partition (``_schemas`` last)
    partitions: dict[str, PartitionSummary] = field(default_factory=dict)
    #: data records per partition directory; empty for benchmark partitions
    records: dict[str, list[WrittenRecord]] = field(default_factory=dict)
    timestamp_types: dict[str, int] = field(default_factory=dict)
    #: per partition directory, the batches producers sent to it, in log order (scenario
    #: topics; the cleaned part of ``users`` was copied, not produced, and is not here)
    produced: dict[str, list[ProducedBatch]] = field(default_factory=dict)
    #: per payload partition directory, per offset: the schema id and value it was framed from
    payloads: dict[str, dict[int, Meant]] = field(default_factory=dict)
    #: the registered schemas ``_schemas-0`` holds (subject, version, id, type, deleted)
    schemas: list[dict[str, Any]] = field(default_factory=list)

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
            "digest": "sha256 of `kafka-format dump --jsonl --canonical DIR/topic-N` "
            "(and with --isolation read_committed)",
            "partitions": partitions,
            **({"schemas": self.schemas} if self.schemas else {}),
        }


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

    def __init__(self, topic: Topic, content: _Content, load: Load) -> None:
        self.topic = topic
        self.content = content
        self.load = load
        self.rng = topic.rng

    def arrive(self, clients: Sequence[Client], weights: Sequence[float] | None = None) -> Client:
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
        client: Client,
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
        Client(f"java-{codec.name.lower()}", codec, producer=Producer(1000 + i))
        for i, codec in enumerate((Codec.NONE, Codec.GZIP, Codec.LZ4, Codec.ZSTD))
    ]
    # librdkafka's default: not idempotent, raw snappy blocks; murmur2_random, the
    # partitioner that agrees with Java's (its own default, consistent_random, hashes CRC32)
    rdkafka = Client(
        "librdkafka-snappy",
        Codec.SNAPPY,
        partitioner=LIBRDKAFKA,
        xerial=False,
        estimates_ratio=False,
    )
    txns = [
        Client("java-txn-a", Codec.NONE, producer=Producer(5000, epoch=3), transactional=True),
        Client("java-txn-b", Codec.LZ4, producer=Producer(6000), transactional=True),
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

    def send(client: Client, **kwargs: Any) -> int:
        run.arrive([client])
        return run.send(client, prefix=b"order", space=space, **kwargs)

    def end(client: Client, commit: bool) -> None:
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
            Client(f"{version}-{c.name.lower()}", c, magic=magic, partitioner=ROUND_ROBIN)
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
        Client(f"java-{codec.name.lower()}", codec, producer=Producer(2000 + i))
        for i, codec in enumerate((Codec.NONE, Codec.ZSTD, Codec.SNAPPY))
    ]
    while topic.sent < total:
        run.send(run.arrive(modern), prefix=b"event", space=space, null_keys=0.25)


def _clicks(run: _Run, target: int) -> None:
    topic = run.topic
    total = target * topic.partitions
    space = max(total // 4, 50)
    old = [
        Client(f"java-0.10-{c.name.lower()}", c, magic=1, partitioner=ROUND_ROBIN)
        for c in (Codec.NONE, Codec.GZIP, Codec.LZ4)
    ]
    while topic.sent < total // 5:
        run.send(run.arrive(old), prefix=b"session", space=space, null_keys=0.15)
    for client in old:
        topic.flush(client)
    modern = [
        Client("java-lz4", Codec.LZ4, producer=Producer(3000)),
        Client("java-zstd", Codec.ZSTD, producer=Producer(3001)),
        Client("java-gzip", Codec.GZIP),
        Client("java-none", Codec.NONE),
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
        # The cleaner checkpoints the first uncleanable offset, a segment's base offset at most
        # the active segment's (LogCleanerManager.cleanableOffsets, calculateCleanableBytes):
        # what was produced after that pass went to the segment that was active then.
        w.roll()
        checkpoints[w.partition] = w.next_offset
    copied = sum(w.summary.records for w in topic.writers)
    tail = [
        Client("java-gzip", Codec.GZIP, producer=Producer(4000, 1)),  # restarted since
        Client("java-zstd", Codec.ZSTD, producer=Producer(4001)),
        Client("java-none", Codec.NONE),
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
    payloads: bool = True,
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
    with the bytes of each benchmark batch written. ``payloads=False`` leaves the payload
    topics out of the default scenarios; with any of them, ``_schemas-0`` is written too.
    """
    root = Path(path)
    if topics is None:
        topics = () if size_bytes is not None else tuple(TOPIC_KINDS)
        topics = tuple(t for t in topics if payloads or t not in PAYLOAD_TOPICS)
    unknown = [t for t in topics if t not in TOPIC_KINDS]
    if unknown:
        raise ValueError(f"unknown topic scenario(s) {unknown}; choose from {list(TOPIC_KINDS)}")
    if not payloads and any(t in PAYLOAD_TOPICS for t in topics):
        raise ValueError(f"payload topics {list(PAYLOAD_TOPICS)} chosen without payloads")
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
        "payloads": payloads,
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
    # The payload topics draw their ids apart: the others' stay what they were without them.
    topic_ids = {t: _topic_id(meta_rng) for t in all_topics if t not in PAYLOAD_TOPICS}
    registry = PayloadRegistry(records) if any(t in PAYLOAD_TOPICS for t in topics) else None
    scenarios = {**_SCENARIOS, **(registry.scenarios() if registry else {})}
    if registry is not None:  # the registry's store last: the topics' records place its own
        all_topics.append(SCHEMAS_TOPIC)
        payload_rng = random.Random(f"{seed}/payload-topic-ids")
        topic_ids |= {t: _topic_id(payload_rng) for t in all_topics if t not in topic_ids}
        result.schemas = registry.to_json()
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
        clock = SimClock(DEFAULT_START_TIME_MS + rng.randrange(3_600_000))
        writers: list[PartitionWriter] = []
        try:
            for partition in range(
                1 if topic == SCHEMAS_TOPIC else partitions or TOPIC_KINDS[topic]
            ):
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
            sim = Topic(
                topic,
                writers,
                rng,
                clock,
                batch_size=min(batch_size, segment // 2),
                linger_ms=linger_ms,
            )
            run = _Run(sim, _Content(rng, segment), Load(rng, rate, clock.now))
            cleaned_to = scenarios[topic](run, records)
            sim.finish()
        finally:
            for w in writers:
                w.close()
        for w in writers:
            finished(w, timestamp_type)
            result.records[w.path.name] = w.records
            result.produced[w.path.name] = sim.produced[w.partition]
            if registry is not None and topic in PAYLOAD_TOPICS:
                result.payloads[w.path.name] = registry.meanings(w.records)
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
