"""``kafka-format generate``: a realistic Kafka log directory, written as a broker writes it.

:func:`generate_log_dir` drives :class:`~kafka_format.runtime.writer.PartitionWriter` through
scenarios that look like what production brokers hold:

``orders``
    magic 2, every codec, keyed records (keys repeat, some tombstones, headers), a plain
    producer writing raw snappy like librdkafka, idempotent producers, two transactional
    producers whose transactions interleave (COMMIT and ABORT markers, ``.txnindex`` entries
    whose last stable offset is held back by the other transaction), a producer epoch bump,
    leader epoch changes; partition 0 ends with a transaction still open.
``legacy-events``
    a topic that lived through upgrades: magic 0 messages (none, gzip, snappy), then magic 1
    (none, gzip, snappy, lz4), then magic 2 with an idempotent producer; the leader epoch
    cache starts at the first v2 batch.
``clicks``
    ``message.timestamp.type=LogAppendTime``: magic 1 wrappers, then v2 batches, lz4 / zstd /
    gzip / none.
``users``
    a compacted topic as a follower copies it from a cleaned leader: few keys, many tombstones,
    offset gaps inside and between batches, an empty batch kept for its producer state, the
    delete horizon on batches with tombstones, then a dirty tail appended normally.

With ``size_bytes`` it writes the benchmark shape of issue 6 instead: topic ``bench``, v2
batches of 1000 records, 100-byte values, one header, uncompressed unless ``codec`` says
otherwise, until the ``.log`` files hold about ``size_bytes``.

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
import hashlib
import json
import os
import random
import re
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
    "EXPECTED_FILE",
    "TOPIC_KINDS",
    "GeneratedLog",
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
BENCH_RECORDS_PER_BATCH = 1000
BENCH_VALUE_BYTES = 100
BENCH_DEFAULT_PARTITIONS = 2


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
    #: per partition directory name (``topic-N``), in topic then partition order
    partitions: dict[str, PartitionSummary] = field(default_factory=dict)
    #: data records per partition directory; empty for benchmark partitions
    records: dict[str, list[WrittenRecord]] = field(default_factory=dict)
    timestamp_types: dict[str, int] = field(default_factory=dict)

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


# --- scenarios ------------------------------------------------------------------------------

_HEADER_KEYS = ("trace-id", "source", "content-type", "retry")
_SOURCES = (b"web", b"ios", b"android", b"batch-import")


class _Clock:
    """Broker time: moves forward a few ms per call, deterministically."""

    def __init__(self, rng: random.Random, start: int) -> None:
        self.rng = rng
        self.now = start

    def __call__(self) -> int:
        self.now += self.rng.randint(1, 40)
        return self.now


class _Scenario:
    """State shared by the scenario functions for one partition."""

    def __init__(self, writer: PartitionWriter, rng: random.Random, clock: _Clock) -> None:
        self.w = writer
        self.rng = rng
        self.clock = clock
        self.cycles: dict[tuple[Codec, ...], list[Codec]] = {}

    def next_codec(self, codecs: Sequence[Codec]) -> Codec:
        # Every codec in turn, each round in a seeded order, so that even short partitions
        # get all of them.
        pending = self.cycles.setdefault(tuple(codecs), [])
        if not pending:
            pending.extend(self.rng.sample(list(codecs), len(codecs)))
        return pending.pop()

    def timestamp(self) -> int:
        # Producers stamp records a little before the broker sees them; now and then a record
        # arrives late (a retry, a slow client), so timestamps are not monotonic.
        late = self.rng.random() < 0.05
        return self.clock.now - self.rng.randint(0, 25) - (self.rng.randint(1000, 60000) * late)

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
            limit = self.w.segment_bytes
            doc["blob"] = rng.randbytes(rng.randint(limit // 80, limit // 20)).hex()
        return json.dumps(doc, separators=(",", ":")).encode()

    def messages(
        self,
        count: int,
        *,
        key_prefix: bytes,
        key_space: int,
        tombstones: float = 0.05,
        headers: bool = True,
        null_keys: float = 0.0,
    ) -> list[Message]:
        rng = self.rng
        out = []
        for _ in range(count):
            number = rng.randrange(key_space)
            key = None if rng.random() < null_keys else key_prefix + b"-%05d" % number
            value = None if key is not None and rng.random() < tombstones else self.value(number)
            out.append(
                Message(
                    key=key,
                    value=value,
                    headers=self.headers() if headers else (),
                    timestamp=self.timestamp(),
                )
            )
        return out


def _orders(s: _Scenario, target: int, partition: int) -> None:
    rng, w = s.rng, s.w
    space = max(target // 3, 1)
    java = Producer(1000 + 10 * partition)
    txns = [Producer(5000 + 10 * partition, epoch=3), Producer(6000 + 10 * partition)]
    coordinator_epoch = {p.producer_id: rng.randint(0, 5) for p in txns}
    epoch_steps = {target // 3, 2 * target // 3}

    def batch(n: int) -> list[Message]:
        return s.messages(n, key_prefix=b"order", key_space=space, null_keys=0.02)

    def end(i: int, commit: bool) -> None:
        p = txns[i]
        w.end_transaction(p, commit=commit, coordinator_epoch=coordinator_epoch[p.producer_id])
        open_[i] = False

    open_ = [False, False]
    while w.summary.records < target:
        if any(w.summary.records >= step for step in epoch_steps):
            epoch_steps = {step for step in epoch_steps if w.summary.records < step}
            w.leader_epoch += rng.choice((1, 1, 2))
        n = rng.randint(1, 12)
        roll = rng.random()
        if roll < 0.35:
            w.append(batch(n), codec=s.next_codec(list(Codec)), producer=java)
        elif roll < 0.45:
            # librdkafka's default: not idempotent, raw snappy blocks
            w.append(batch(n), codec=Codec.SNAPPY, xerial=False)
        elif roll < 0.47:
            # the Java producer restarts: InitProducerId bumps its epoch, sequences restart
            java = Producer(java.producer_id, java.epoch + 1)
        else:
            i = rng.randrange(2)
            if open_[i] and rng.random() < 0.3:
                end(i, commit=rng.random() < 0.65)
            else:
                w.append(
                    batch(n), codec=s.next_codec(list(Codec)), producer=txns[i], transactional=True
                )
                open_[i] = True
    for i in (0, 1):
        if open_[i]:
            end(i, commit=rng.random() < 0.5)
    # Make sure both outcomes exist, and on partition 0 leave one transaction open.
    if w.summary.transactions_aborted == 0:
        w.append(batch(3), producer=txns[0], transactional=True)
        end(0, commit=False)
    if w.summary.transactions_committed == 0:
        w.append(batch(3), producer=txns[1], transactional=True)
        end(1, commit=True)
    if partition == 0:
        w.append(batch(4), codec=Codec.LZ4, producer=txns[1], transactional=True)


def _legacy_events(s: _Scenario, target: int, partition: int) -> None:
    rng, w = s.rng, s.w
    space = max(target // 4, 1)
    phases = [
        (0, (Codec.NONE, Codec.GZIP, Codec.SNAPPY)),
        (1, (Codec.NONE, Codec.GZIP, Codec.SNAPPY, Codec.LZ4)),
    ]
    for magic, codecs in phases:
        stop = w.summary.records + target // 3
        while w.summary.records < stop:
            n = rng.randint(1, 10)
            messages = s.messages(n, key_prefix=b"event", key_space=space, headers=False)
            w.append(messages, magic=magic, codec=s.next_codec(codecs))
    # message.format.version moved to 2: v2 batches from an idempotent producer
    w.leader_epoch = 5 + partition
    producer = Producer(2000 + partition)
    while w.summary.records < target:
        messages = s.messages(rng.randint(1, 10), key_prefix=b"event", key_space=space)
        w.append(messages, codec=s.next_codec(list(Codec)), producer=producer)


def _clicks(s: _Scenario, target: int, partition: int) -> None:
    rng, w = s.rng, s.w
    stop = target // 5
    while w.summary.records < stop:
        messages = s.messages(rng.randint(2, 8), key_prefix=b"session", key_space=50, headers=False)
        w.append(messages, magic=1, codec=s.next_codec((Codec.NONE, Codec.GZIP, Codec.LZ4)))
    producer = Producer(3000 + partition)
    codecs = (Codec.LZ4, Codec.ZSTD, Codec.GZIP, Codec.NONE)
    while w.summary.records < target:
        messages = s.messages(rng.randint(1, 20), key_prefix=b"session", key_space=50)
        if rng.random() < 0.5:
            w.append(messages, codec=s.next_codec(codecs), producer=producer)
        else:
            w.append(messages, codec=s.next_codec(codecs))


def _users(s: _Scenario, target: int, partition: int) -> int:
    """Returns the cleaner checkpoint: where the dirty (uncleaned) tail starts."""
    rng, w = s.rng, s.w
    producer = Producer(4000 + partition)
    sequence = 0
    offset = 0
    codecs = (Codec.NONE, Codec.GZIP, Codec.ZSTD)
    cleaned_part = target * 2 // 3
    while w.summary.records < cleaned_part:
        # The leader's batch had `size` records; the cleaner kept a few of them.
        size = rng.randint(2, 15)
        kept = sorted(rng.sample(range(size), rng.randint(0, min(size, 5))))
        messages = [
            Message(m.key, m.value, m.headers, m.timestamp, delta)
            for m, delta in zip(
                s.messages(len(kept), key_prefix=b"user", key_space=30, tombstones=0.25),
                kept,
                strict=True,
            )
        ]
        has_tombstone = any(m.value is None for m in messages)
        if messages or rng.random() < 0.3:
            # An emptied batch survives only for its producer state (the last sequence).
            w.append(
                messages,
                base_offset=offset,
                last_offset_delta=size - 1,
                codec=s.next_codec(codecs),
                producer=producer,
                base_sequence=sequence,
                delete_horizon_ms=(s.clock.now + 86_400_000) if has_tombstone else None,
            )
        sequence += size
        offset += size + (rng.randint(1, 30) if rng.random() < 0.2 else 0)
    checkpoint = w.next_offset
    producer = Producer(producer.producer_id, producer.epoch + 1)  # restarted since
    while w.summary.records < target:
        messages = s.messages(rng.randint(1, 6), key_prefix=b"user", key_space=30, tombstones=0.25)
        w.append(messages, codec=s.next_codec(codecs), producer=producer)
    return checkpoint


_SCENARIOS: dict[str, Callable[[_Scenario, int, int], int | None]] = {
    "orders": _orders,
    "legacy-events": _legacy_events,
    "clicks": _clicks,
    "users": _users,
}
_TIMESTAMP_TYPES = {"clicks": TimestampType.LOG_APPEND_TIME}


# --- benchmark shape ------------------------------------------------------------------------


def _bench(
    w: PartitionWriter,
    partition: int,
    target_bytes: int,
    codec: Codec,
    progress: Callable[[int], None] | None,
) -> None:
    """Batches of 1000 records, 100-byte values, one header, until ``target_bytes``."""
    producer = Producer(9000 + partition)
    base_time = DEFAULT_START_TIME_MS + partition
    pad = b"." * BENCH_VALUE_BYTES
    number = 0
    while True:
        messages = []
        for i in range(number, number + BENCH_RECORDS_PER_BATCH):
            user = (i * 2654435761 + partition) % 100_000
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
) -> GeneratedLog:
    """Write a Kafka log directory at ``path`` (created; must be empty) and EXPECTED.json.

    ``topics`` picks scenarios from :data:`TOPIC_KINDS` (default: all of them, or none when
    ``size_bytes`` is given); ``partitions`` overrides each topic's partition count;
    ``records`` is the number of data records per partition (the last append may go a little
    over). ``size_bytes`` adds topic ``bench`` (``partitions`` or 2 partitions) of about that
    many bytes of ``.log``, in batches compressed with ``codec``. ``fast`` picks the struct
    serialiser over the Construct builders (same bytes; default: fast only for ``bench``).
    ``progress`` is called with the bytes of each benchmark batch written.
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
            for partition in range(count):
                with writer(
                    topic,
                    partition,
                    segment_bytes=segment_bytes or 1024 * 1024 * 1024,
                    fast=True if fast is None else fast,
                ) as w:
                    share = size_bytes // count + (partition < size_bytes % count)
                    _bench(w, partition, share, Codec(int(codec)), progress)
                finished(w, TimestampType.CREATE_TIME)
            continue
        timestamp_type = _TIMESTAMP_TYPES.get(topic, TimestampType.CREATE_TIME)
        for partition in range(partitions or TOPIC_KINDS[topic]):
            rng = random.Random(f"{seed}/{topic}/{partition}")
            clock = _Clock(rng, DEFAULT_START_TIME_MS + rng.randrange(3_600_000))
            with writer(
                topic,
                partition,
                segment_bytes=segment_bytes or DEFAULT_SEGMENT_BYTES,
                timestamp_type=timestamp_type,
                clock=clock,
                fast=bool(fast),
                keep_records=True,
            ) as w:
                cleaned_to = _SCENARIOS[topic](_Scenario(w, rng, clock), records, partition)
            finished(w, timestamp_type)
            result.records[w.path.name] = w.records
            if cleaned_to is not None:
                checkpoints[CLEANER_OFFSET_CHECKPOINT].append((topic, partition, cleaned_to))

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

examples:
  kafka-format generate demo-logs
  kafka-format generate demo-logs --seed 7 --topics orders,users --partitions 2 --records 2000
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
        description="Write a Kafka log directory as a broker writes it: topics and "
        "partitions, segments rolled at a size, .index/.timeindex entries every "
        "index-interval bytes, transactions with .txnindex, producer snapshots, every codec "
        "and magic; plus EXPECTED.json describing what was written. Same seed, same bytes.",
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
        help=f"data records per partition (default {DEFAULT_RECORDS})",
    )
    g.add_argument(
        "--segment-bytes",
        type=parse_size,
        help="roll segments at this size (default 32KiB; 1GiB with --size)",
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
