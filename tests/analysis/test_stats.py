"""``kafka-format stats`` (runtime/stats.py, runtime/whatif.py, runtime/stats_cmd.py) against
independent counts.

Oracles: the records the tests write themselves with ``PartitionWriter`` (:class:`Script`
counts batches, records, bytes of keys, values and headers, timestamps and producers as it
appends, from what it hands the writer and from a clock it owns), kafka-python reading the
same files, ``generate``'s own account of the records it wrote and the batches its simulated
producers sent, the corpus's manifest and expected records, and, for ``--what-if``, batches
encoded here with the Construct builders (``schemas.record_batch``) and ``codecs.compress``.
Damage is written by hand at byte positions found by walking the frames with ``struct``.
"""

from __future__ import annotations

import base64
import json
import random
import struct
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from kafka.record import MemoryRecords

import kafka_format.runtime.analysis.stats as stats_module
from kafka_format.runtime.analysis.stats import log_stats
from kafka_format.runtime.cli import main
from kafka_format.runtime.errors import KafkaFormatError
from kafka_format.runtime.format.codecs import Codec, compress
from kafka_format.runtime.write.generate import generate_log_dir
from kafka_format.runtime.write.writer import Message, PartitionWriter, Producer
from kafka_format.schemas.record import RecordSpec, build_records
from kafka_format.schemas.record_batch import batch_crc, build_record_batch

T0 = 1_700_000_000_000
TS_NAMES = {-1: "NoTimestampType", 0: "CreateTime", 1: "LogAppendTime"}


# --- the oracle: what a script wrote --------------------------------------------------------------


@dataclass
class Expected:
    batches: int = 0
    records: int = 0
    control_batches: int = 0
    control_records: int = 0
    key_bytes: int = 0
    value_bytes: int = 0
    header_key_bytes: int = 0
    header_value_bytes: int = 0
    headers: int = 0
    null_keys: int = 0
    null_values: int = 0
    idempotent_batches: int = 0
    transactional_batches: int = 0
    magic: dict[int, list[int]] = field(default_factory=dict)
    codecs: dict[str, list[int]] = field(default_factory=dict)
    records_per_batch: Counter = field(default_factory=Counter)
    timestamps: dict[str, list] = field(default_factory=dict)
    producer_ids: set[int] = field(default_factory=set)


class Script:
    """Appends to one partition and counts what it wrote."""

    def __init__(self, log_dir: Path, topic: str, partition: int, *, lat: bool = False, **kw):
        self.lat = lat
        self.now = T0
        self.writer = PartitionWriter(
            log_dir, topic, partition, timestamp_type=int(lat), clock=self._tick, **kw
        )
        self.expected = Expected()

    def _tick(self) -> int:
        self.now += 7
        return self.now

    def append(self, messages, *, magic=2, codec=Codec.NONE, producer=None, transactional=False):
        e = self.expected
        self.writer.append(
            messages, magic=magic, codec=codec, producer=producer, transactional=transactional
        )
        n = len(messages)
        entries = 1 if magic == 2 or codec != Codec.NONE else n
        e.batches += entries
        e.records += n
        for table, key in ((e.magic, magic), (e.codecs, Codec(codec).name.lower())):
            table.setdefault(key, [0, 0])
            table[key][0] += entries
            table[key][1] += n
        if entries == 1:
            e.records_per_batch[n] += 1
        else:
            e.records_per_batch[1] += n
        for m in messages:
            e.key_bytes += len(m.key or b"")
            e.value_bytes += len(m.value or b"")
            e.null_keys += m.key is None
            e.null_values += m.value is None
            for hk, hv in m.headers:
                e.headers += 1
                e.header_key_bytes += len(hk.encode())
                e.header_value_bytes += len(hv or b"")
            if magic == 0:
                kind, ts = -1, None
            elif self.lat:
                kind, ts = 1, self.now  # the append's time, from our clock
            else:
                kind, ts = 0, m.timestamp
            slot = e.timestamps.setdefault(TS_NAMES[kind], [0, None, None])
            slot[0] += 1
            if ts is not None:
                slot[1] = ts if slot[1] is None else min(slot[1], ts)
                slot[2] = ts if slot[2] is None else max(slot[2], ts)
        if producer is not None:
            e.producer_ids.add(producer.producer_id)
            e.idempotent_batches += 1
            e.transactional_batches += transactional

    def end(self, producer: Producer, commit: bool) -> None:
        self.writer.end_transaction(producer, commit=commit, coordinator_epoch=0)
        self.expected.batches += 1
        self.expected.control_batches += 1
        self.expected.control_records += 1
        self.expected.producer_ids.add(producer.producer_id)

    def close(self) -> Expected:
        self.writer.close()
        return self.expected


def messages(n: int, *, seed: int, headers: bool = False, nulls: bool = False) -> list[Message]:
    out = []
    for i in range(n):
        key = None if nulls and i % 3 == 0 else f"key-{seed}-{i % 5}".encode()
        value = None if nulls and i % 4 == 1 else (f"value {seed} {i} " * (1 + i % 7)).encode()
        hs = [("trace", f"t{i}".encode()), ("empty", None)] if headers and i % 2 else []
        out.append(Message(key, value, hs, timestamp=T0 + 1000 * seed + 13 * i - (i % 3) * 50))
    return out


def build_log_dir(root: Path) -> dict[tuple[str, int], Expected]:
    """Three partitions: v2 of every codec with producers and transactions over several
    segments; v0/v1 messages and wrappers; a LogAppendTime topic."""
    out = {}
    s = Script(root, "orders", 0, segment_bytes=700)
    idem, txn = Producer(1000, 0), Producer(2000, 3)
    for i, codec in enumerate([Codec.NONE, Codec.GZIP, Codec.SNAPPY, Codec.LZ4, Codec.ZSTD]):
        s.append(messages(5 + i, seed=i, headers=True, nulls=True), codec=codec)
        s.append(messages(3, seed=10 + i), codec=codec, producer=idem)
    s.append(messages(4, seed=20, headers=True), producer=txn, transactional=True)
    s.end(txn, commit=True)
    s.append(messages(2, seed=21), codec=Codec.GZIP, producer=txn, transactional=True)
    s.end(txn, commit=False)
    out[("orders", 0)] = s.close()

    s = Script(root, "legacy", 0)
    s.append(messages(6, seed=30, nulls=True), magic=0)
    s.append(messages(4, seed=31), magic=0, codec=Codec.GZIP)
    s.append(messages(5, seed=32), magic=1)
    s.append(messages(7, seed=33, nulls=True), magic=1, codec=Codec.SNAPPY)
    s.append(messages(3, seed=34), magic=1, codec=Codec.LZ4)
    s.append(messages(4, seed=35, headers=True), magic=2, codec=Codec.LZ4)
    out[("legacy", 0)] = s.close()

    s = Script(root, "clicks", 1, lat=True)
    s.append(messages(8, seed=40, headers=True), codec=Codec.ZSTD)
    s.append(messages(3, seed=41), magic=1)
    s.append(messages(5, seed=42))
    out[("clicks", 1)] = s.close()
    return out


@pytest.fixture(scope="module")
def log_dir(tmp_path_factory) -> tuple[Path, dict[tuple[str, int], Expected]]:
    root = tmp_path_factory.mktemp("logs")
    return root, build_log_dir(root)


def segment_files(directory: Path) -> list[Path]:
    return sorted(directory.glob("*.log"))


def frames(data: bytes) -> list[tuple[int, int]]:
    """(position, size) of each frame, found with struct alone."""
    out, pos = [], 0
    while pos + 12 <= len(data):
        length = struct.unpack_from(">i", data, pos + 8)[0]
        if pos + 12 + length > len(data):
            break
        out.append((pos, 12 + length))
        pos += 12 + length
    return out


# --- counts ---------------------------------------------------------------------------------------


def test_stats_match_what_was_written(log_dir):
    root, expected = log_dir
    result = log_stats(root)
    assert [(p.topic, p.partition) for p in result.partitions] == sorted(expected)
    for p in result.partitions:
        e = expected[(p.topic, p.partition)]
        directory = root / f"{p.topic}-{p.partition}"
        files = segment_files(directory)
        assert p.source == str(directory)
        assert p.files == len(files)
        assert p.bytes == p.batch_bytes == sum(f.stat().st_size for f in files)
        for name in (
            "batches", "records", "control_batches", "control_records", "key_bytes",
            "value_bytes", "header_key_bytes", "header_value_bytes", "headers", "null_keys",
            "null_values", "idempotent_batches", "transactional_batches",
        ):  # fmt: skip
            assert getattr(p, name) == getattr(e, name), name
        assert {m: [s.batches, s.records] for m, s in p.magic.items()} == e.magic
        assert {c: [s.batches, s.records] for c, s in p.codecs.items()} == e.codecs
        assert p.records_per_batch == e.records_per_batch
        assert {t: [r.records, r.min, r.max] for t, r in p.timestamps.items()} == e.timestamps
        assert p.producer_ids == e.producer_ids
        assert p.damage == [] and p.tails == []
    total = result.total
    assert total.records == sum(e.records for e in expected.values())
    assert total.producer_ids == {1000, 2000}
    assert total.files == sum(p.files for p in result.partitions)
    orders = next(p for p in result.partitions if p.topic == "orders")
    assert orders.files > 1  # it rolled: several segments, one partition


def test_stats_agree_with_kafka_python(log_dir):
    """Batches and records per magic, and control batches, as kafka-python reads the files."""
    root, _ = log_dir
    for p in log_stats(root).partitions:
        by_magic: dict[int, list[int]] = {}
        control = 0
        for f in segment_files(root / f"{p.topic}-{p.partition}"):
            reader = MemoryRecords(f.read_bytes())
            while reader.has_next():
                batch = reader.next_batch()
                if batch.magic == 2 and batch.is_control_batch:
                    control += 1
                    continue
                entry = by_magic.setdefault(batch.magic, [0, 0])
                entry[0] += 1
                entry[1] += sum(1 for _ in batch)
        assert {m: [s.batches, s.records] for m, s in p.magic.items()} == by_magic
        assert p.control_batches == control


def test_every_byte_is_accounted_for(log_dir):
    root, _ = log_dir
    for p in [*log_stats(root).partitions]:
        assert p.bytes == p.batch_bytes + p.damaged_bytes + p.truncated_bytes + p.unreadable_bytes
        data_bytes = p.batch_bytes - p.control_bytes
        assert data_bytes == sum(s.bytes for s in p.magic.values())
        assert data_bytes == sum(c.bytes for c in p.codecs.values())
        saved = sum(c.uncompressed_bytes - c.compressed_bytes for c in p.codecs.values())
        assert p.uncompressed_bytes - saved == data_bytes
        for name in ("batch_header_bytes", "message_header_bytes", "record_framing_bytes"):
            assert getattr(p, name) == sum(getattr(s, name) for s in p.magic.values())
        assert p.payload_bytes == sum(s.payload_bytes for s in p.magic.values())
        v2 = p.magic.get(2)
        if v2 is not None:
            assert v2.batch_header_bytes == 61 * v2.batches
            # at least 7 bytes of varints a record: length, attributes, two deltas, key and
            # value lengths, header count
            assert v2.record_framing_bytes >= 7 * v2.records
        for m, header in ((0, 26), (1, 34)):
            s = p.magic.get(m)
            if s is not None:
                assert s.message_header_bytes == header * s.records


def test_total_is_the_sum_of_the_partitions(log_dir):
    root, _ = log_dir
    result = log_stats(root)
    total = result.total
    for name in ("bytes", "batches", "records", "payload_bytes", "record_framing_bytes"):
        assert getattr(total, name) == sum(getattr(p, name) for p in result.partitions)
    every = Counter()
    for p in result.partitions:
        every.update(p.records_per_batch)
    assert total.records_per_batch == every
    summary = total.records_per_batch_summary()
    expanded = sorted(every.elements())
    assert summary["min"] == expanded[0] and summary["max"] == expanded[-1]
    assert summary["mean"] == pytest.approx(sum(expanded) / len(expanded))
    mid = len(expanded) // 2
    median = expanded[mid] if len(expanded) % 2 else (expanded[mid - 1] + expanded[mid]) / 2
    assert summary["median"] == median


# --- a generated log dir --------------------------------------------------------------------------


def test_stats_of_a_generated_log_dir(tmp_path):
    """Per partition of ``generate``'s scenarios: data records, their payload and timestamps
    against the records it wrote (``GeneratedLog.expected``); data batches, their records and
    bytes per magic and codec against the batches its producers sent (``GeneratedLog.produced``,
    where an uncompressed v0/v1 batch lies on disk as one entry a message); control batches (the
    transaction markers, which stats counts apart) against the writer's summary. ``users`` is
    left out: its cleaned part was copied, not produced."""
    root = tmp_path / "logs"
    generated = generate_log_dir(
        root, seed=3, topics=["orders", "legacy-events"], records=150, segment_bytes=16 * 1024
    )
    result = log_stats(root)
    assert sorted(p.label for p in result.partitions) == sorted(generated.partitions)
    markers = 0
    for p in result.partitions:
        name = p.label
        records = generated.expected(name)
        produced = generated.produced[name]
        entries: list[tuple[int, str, int]] = []  # (magic, codec, records) of each on disk
        for b in produced:
            if b.magic < 2 and b.codec == "none":
                entries += [(b.magic, b.codec, 1)] * b.records
            else:
                entries.append((b.magic, b.codec, b.records))
        by_magic: dict[int, list[int]] = {}
        by_codec: dict[str, list[int]] = {}
        for magic, codec, n in entries:
            for table, key in ((by_magic, magic), (by_codec, codec)):
                entry = table.setdefault(key, [0, 0])
                entry[0] += 1
                entry[1] += n
        log_bytes: Counter[int] = Counter()
        for b in produced:
            log_bytes[b.magic] += b.log_bytes

        assert p.records == len(records) == sum(b.records for b in produced)
        sums = _expected_sums(records)
        for field_name in ("key_bytes", "value_bytes", "header_key_bytes", "header_value_bytes",
                           "null_keys", "null_values"):  # fmt: skip
            assert getattr(p, field_name) == sums[field_name], (name, field_name)
        found = {t: [r.records, r.min, r.max] for t, r in p.timestamps.items()}
        assert found == sums["timestamps"], name

        assert p.data_batches == len(entries), name
        assert p.records_per_batch == Counter(n for _, _, n in entries), name
        assert {m: [s.batches, s.records] for m, s in p.magic.items()} == by_magic, name
        assert {m: s.bytes for m, s in p.magic.items()} == log_bytes, name
        assert {c: [s.batches, s.records] for c, s in p.codecs.items()} == by_codec, name
        assert p.batch_bytes - p.control_bytes == sum(b.log_bytes for b in produced)

        summary = generated.partitions[name]
        assert p.control_batches == p.control_records == summary.control_batches, name
        assert p.batches == summary.batches, name
        assert p.bytes == sum(f.stat().st_size for f in segment_files(root / name))
        assert p.damage == [] and p.tails == []
        markers += p.control_batches
    assert markers > 0  # the orders scenario's transactions ended with markers
    assert {m for p in result.partitions for m in p.magic} == {0, 1, 2}


# --- the corpus -----------------------------------------------------------------------------------


def _expected_sums(records: list[dict]) -> dict:
    def size(b64: str | None) -> int:
        return 0 if b64 is None else len(base64.b64decode(b64))

    stamps: dict[str, list] = {}
    for r in records:
        slot = stamps.setdefault(TS_NAMES[r["timestampType"]], [0, None, None])
        slot[0] += 1
        if r["timestamp"] is not None:
            t = r["timestamp"]
            slot[1] = t if slot[1] is None else min(slot[1], t)
            slot[2] = t if slot[2] is None else max(slot[2], t)
    return {
        "records": len(records),
        "key_bytes": sum(size(r["key"]) for r in records),
        "value_bytes": sum(size(r["value"]) for r in records),
        "header_key_bytes": sum(len(h["key"].encode()) for r in records for h in r["headers"]),
        "header_value_bytes": sum(size(h["value"]) for r in records for h in r["headers"]),
        "null_keys": sum(r["key"] is None for r in records),
        "null_values": sum(r["value"] is None for r in records),
        "timestamps": stamps,
    }


def test_corpus_valid_sets(valid_corpus_set):
    """Records, key/value/header bytes and timestamp ranges of every set, from its manifest
    and expected records; the file is all batches (or a partial tail the manifest names)."""
    result = log_stats(valid_corpus_set.path).total
    expected = _expected_sums(valid_corpus_set.expected())
    assert result.records == valid_corpus_set.entry["records"] == expected["records"]
    for name in ("key_bytes", "value_bytes", "header_key_bytes", "header_value_bytes"):
        assert getattr(result, name) == expected[name], name
    assert (result.null_keys, result.null_values) == (
        expected["null_keys"],
        expected["null_values"],
    )
    found = {t: [r.records, r.min, r.max] for t, r in result.timestamps.items()}
    assert found == expected["timestamps"]
    assert result.damage == []
    assert result.truncated_bytes == valid_corpus_set.entry["trailing_partial_bytes"]
    assert sorted(result.magic) == sorted(valid_corpus_set.entry["magics"])
    assert set(result.codecs) <= set(valid_corpus_set.entry["codecs"])


def test_corpus_damaged_sets(damaged_corpus_set):
    """Bad CRCs are counted and named (file, position); without CRC checks the records are
    the manifest's."""
    path = damaged_corpus_set.path
    checked = log_stats(path).total
    starts = {position for position, _ in frames(damaged_corpus_set.data())}
    assert checked.damaged_batches == len(checked.damage) >= 1
    assert all(d.file == str(path) and d.position in starts for d in checked.damage)
    assert all("crc" in d.reason for d in checked.damage)
    unchecked = log_stats(path, verify_crc=False).total
    assert unchecked.damage == []
    assert unchecked.records == damaged_corpus_set.entry["records"]
    assert unchecked.batches == checked.batches + checked.damaged_batches
    assert checked.records <= unchecked.records
    with pytest.raises(KafkaFormatError) as raised:
        log_stats(path, strict=True)
    assert raised.value.file == str(path) and raised.value.position == checked.damage[0].position


def test_reference_decoder_gives_the_same_stats(manifest, monkeypatch):
    """Where the fast path's rows would not fit the batches, the reference decoder reads the
    records instead: forced to, it must come to the same figures on every corpus set."""
    paths = [s.path for s in manifest]
    fast = log_stats(paths).as_json()
    monkeypatch.setattr(stats_module, "_lay_rows", lambda *args: None)
    slow = log_stats(paths).as_json()
    assert slow["partitions"] == fast["partitions"]
    assert slow["total"] == fast["total"]


# --- damage ---------------------------------------------------------------------------------------


def _write_small(root: Path, topic: str) -> Path:
    with PartitionWriter(root, topic, 0) as w:
        for i in range(5):
            w.append(messages(4, seed=i), codec=Codec.GZIP if i % 2 else Codec.NONE)
    return root / f"{topic}-0" / "00000000000000000000.log"


def test_corrupt_batch_is_counted_and_reported(tmp_path):
    log = _write_small(tmp_path, "bad")
    data = bytearray(log.read_bytes())
    position, size = frames(bytes(data))[2]
    data[position + size - 3] ^= 0xFF  # inside the records: the CRC no longer holds
    log.write_bytes(bytes(data))
    result = log_stats(log)
    total = result.total
    assert not result.ok
    assert total.damaged_batches == 1 and total.damaged_bytes == size
    assert total.records == 16 and total.batches == 4
    (damage,) = total.damage
    assert (damage.file, damage.position, damage.base_offset) == (str(log), position, 8)
    assert "crc32c" in damage.reason
    with pytest.raises(KafkaFormatError) as raised:
        log_stats(log, strict=True)
    assert (raised.value.file, raised.value.position) == (str(log), position)


def test_malformed_records_under_a_valid_crc(tmp_path):
    """Damage only the records pass sees (a record length past the batch's end, the CRC
    recomputed) is reported at the batch's position too."""
    good = build_record_batch(
        [RecordSpec(key=b"k", value=b"v" * 10, offset_delta=i) for i in range(3)],
        base_offset=0,
        base_timestamp=T0,
    )
    bad = bytearray(
        build_record_batch(
            [RecordSpec(key=b"k", value=b"w" * 10, offset_delta=i) for i in range(2)],
            base_offset=3,
            base_timestamp=T0,
        )
    )
    bad[61] = 0x7E  # the first record's length varint: 63 bytes, more than there are
    bad[17:21] = batch_crc(bytes(bad)).to_bytes(4, "big")
    tail = build_record_batch([RecordSpec(value=b"x")], base_offset=5, base_timestamp=T0)
    path = tmp_path / "mixed.log"
    path.write_bytes(good + bytes(bad) + tail)
    total = log_stats(path).total
    assert total.records == 4
    # Named at the record that is damaged (its length varint, after the 61-byte header).
    assert [(d.file, d.position) for d in total.damage] == [(str(path), len(good) + 61)]
    assert total.damaged_bytes == len(bad)
    assert total.value_bytes == 31


def test_truncated_tail_and_bad_frame(tmp_path, capsys):
    log = _write_small(tmp_path, "tails")
    whole = log.read_bytes()
    log.write_bytes(whole + whole[:40])  # a batch cut short: Kafka stops there, not damage
    result = log_stats(log)
    assert result.ok
    assert result.total.truncated_bytes == 40
    assert [(t.file, t.position) for t in result.total.tails] == [(str(log), len(whole))]
    assert main(["stats", "-q", str(log)]) == 0
    assert capsys.readouterr().err == f"Found 40 invalid bytes at the end of {log}\n"
    junk = struct.pack(">qi", 99, 5) + b"\0" * 30  # a length below 14 cannot be stepped over
    log.write_bytes(whole + junk + whole)
    total = log_stats(log).total
    assert total.records == 20
    assert total.unreadable_bytes == len(junk) + len(whole)
    (damage,) = total.damage
    # bytes that are no batch carry no base offset (one read from them would read as a fact)
    assert (damage.kind, damage.position, damage.base_offset) == ("framing", len(whole), None)


def test_cli_reports_damage_with_file_and_position(tmp_path, capsys):
    log = _write_small(tmp_path, "cli")
    data = bytearray(log.read_bytes())
    position, _ = frames(bytes(data))[1]
    data[position + 17] ^= 0x01  # the stored CRC itself
    log.write_bytes(bytes(data))
    assert main(["stats", str(log)]) == 1
    out, err = capsys.readouterr()
    assert err.startswith(f"error: {log} @{position} (base offset 4): stored crc32c")
    assert "1 damaged batch(es)" in out
    assert main(["stats", "--json", str(log)]) == 1
    document = json.loads(capsys.readouterr().out)
    (problem,) = document["total"]["damage"]["problems"]
    assert (problem["file"], problem["position"], problem["baseOffset"]) == (str(log), position, 4)
    assert main(["stats", "--strict", str(log)]) == 1
    assert f"@{position}" in capsys.readouterr().err


# --- the command line and its JSON ----------------------------------------------------------------

PARTITION_KEYS = {
    "topic": (str, type(None)),
    "partition": (int, type(None)),
    "source": (str, type(None)),
    "files": int,
    "bytes": int,
    "batches": int,
    "batchBytes": int,
    "records": int,
    "recordsPerBatch": (dict, type(None)),
    "magic": dict,
    "codecs": dict,
    "sizes": dict,
    "recordFields": dict,
    "perRecord": dict,
    "timestamps": dict,
    "producers": dict,
    "damage": dict,
}
NESTED_KEYS = {
    "recordsPerBatch": {"min", "median", "mean", "max"},
    "sizes": {
        "batchHeaderBytes", "messageHeaderBytes", "recordFramingBytes", "keyBytes", "valueBytes",
        "headerKeyBytes", "headerValueBytes", "payloadBytes", "uncompressedBytes", "controlBytes",
    },
    "recordFields": {"headers", "nullKeys", "nullValues"},
    "perRecord": {"headerBytes", "framingBytes", "payloadBytes", "bytes"},
    "producers": {
        "distinct", "minId", "maxId", "idempotentBatches", "transactionalBatches",
        "controlBatches", "controlRecords",
    },
    "damage": {"batches", "bytes", "truncatedBytes", "unreadableBytes", "problems", "truncated"},
}  # fmt: skip
MAGIC_KEYS = {
    "batches", "records", "bytes", "batchHeaderBytes", "messageHeaderBytes",
    "recordFramingBytes", "payloadBytes",
}  # fmt: skip
CODEC_KEYS = {"batches", "records", "bytes", "compressedBytes", "uncompressedBytes", "ratio"}
WHAT_IF_KEYS = {"batching", "sampleRecords", "sampleBatches", "sampleFraction", "nowBytes",
                "estimates"}  # fmt: skip
ESTIMATE_KEYS = {"codec", "bytes", "ratio", "savingBytes", "savingFraction", "sampleBytes"}


def _check_partition(p: dict, what_if: bool) -> None:
    assert set(p) == set(PARTITION_KEYS) | ({"whatIf"} if what_if else set())
    for key, kind in PARTITION_KEYS.items():
        assert isinstance(p[key], kind), key
    for key, names in NESTED_KEYS.items():
        if p[key] is not None:
            assert set(p[key]) == names, key
    for m, s in p["magic"].items():
        assert m in ("0", "1", "2") and set(s) == MAGIC_KEYS
    for c, s in p["codecs"].items():
        assert c in ("none", "gzip", "snappy", "lz4", "zstd") and set(s) == CODEC_KEYS
    for t, r in p["timestamps"].items():
        assert t in TS_NAMES.values() and set(r) == {"records", "min", "max"}
    if what_if:
        assert set(p["whatIf"]) == WHAT_IF_KEYS
        codecs = [e["codec"] for e in p["whatIf"]["estimates"]]
        assert codecs == ["none", "gzip", "snappy", "lz4", "zstd"]
        assert all(set(e) == ESTIMATE_KEYS for e in p["whatIf"]["estimates"])


def test_json_schema(log_dir, capsys):
    root, expected = log_dir
    assert main(["stats", "--json", "--what-if", "-q", str(root)]) == 0
    document = json.loads(capsys.readouterr().out)
    assert set(document) == {"partitions", "total", "seconds", "bytesPerSecond"}
    for p in document["partitions"]:
        _check_partition(p, what_if=True)
        e = expected[(p["topic"], p["partition"])]
        assert p["records"] == e.records
        assert p["sizes"]["keyBytes"] == e.key_bytes
        assert p["producers"]["distinct"] == len(e.producer_ids)
    _check_partition(document["total"], what_if=True)
    assert document["total"]["topic"] is None
    assert document["total"]["records"] == sum(e.records for e in expected.values())


def test_json_fields_are_documented():
    """Every field the JSON has is named in docs/stats.md."""
    doc = (Path(__file__).resolve().parents[2] / "docs" / "stats.md").read_text()
    names = set(PARTITION_KEYS) | MAGIC_KEYS | CODEC_KEYS | WHAT_IF_KEYS | ESTIMATE_KEYS
    for keys in NESTED_KEYS.values():
        names |= keys
    names |= {"partitions", "total", "seconds", "bytesPerSecond", "whatIf"}
    missing = sorted(n for n in names if f"`{n}`" not in doc)
    assert missing == []


def test_cli_table(log_dir, capsys):
    root, expected = log_dir
    assert main(["stats", "-q", str(root)]) == 0
    out = capsys.readouterr().out
    for (topic, partition), e in expected.items():
        line = next(line for line in out.splitlines() if line.strip().startswith(f"{topic}-"))
        assert f"{topic}-{partition}" in line
        assert f"{e.records:,}" in line.split()
    total = next(line for line in out.splitlines() if line.strip().startswith("TOTAL"))
    assert f"{sum(e.records for e in expected.values()):,}" in total.split()
    assert "read " in out


# --- what if --------------------------------------------------------------------------------------


def _reencoded(files: list[Path]) -> tuple[dict[str, int], int]:
    """Each data batch re-encoded here as one v2 batch with each codec, from kafka-python's
    reading of the files (the Construct builder, codecs.compress); and the control bytes."""
    sizes = dict.fromkeys(["none", "gzip", "snappy", "lz4", "zstd"], 0)
    control = 0
    for f in files:
        data = f.read_bytes()
        reader = MemoryRecords(data)
        for _, size in frames(data):
            batch = reader.next_batch()
            if batch.magic == 2 and batch.is_control_batch:
                control += size
                continue
            records = list(batch)
            first = records[0]
            base_ts = -1 if first.timestamp is None else first.timestamp
            specs = [
                RecordSpec(
                    key=r.key,
                    value=r.value,
                    headers=tuple(getattr(r, "headers", ()) or ()),
                    offset_delta=r.offset - first.offset,
                    timestamp_delta=(-1 if r.timestamp is None else r.timestamp) - base_ts,
                )
                for r in records
            ]
            stamps = [s.timestamp_delta for s in specs]
            fields = dict(
                base_offset=first.offset,
                base_timestamp=base_ts,
                max_timestamp=base_ts + max(stamps),
                last_offset_delta=specs[-1].offset_delta,
            )
            sizes["none"] += len(build_record_batch(specs, **fields))
            payload = build_records(specs)
            for codec in (Codec.GZIP, Codec.SNAPPY, Codec.LZ4, Codec.ZSTD):
                packed = compress(codec, payload, magic=2)
                batch_bytes = build_record_batch(
                    compressed_payload=packed, records_count=len(specs), codec=codec, **fields
                )
                sizes[codec.name.lower()] += len(batch_bytes)
    return sizes, control


def test_what_if_equals_encoding_everything(tmp_path):
    """With the sample covering all records, the estimates are the sizes of the whole data
    re-encoded, batch for batch (v2 batches and v0/v1 wrappers; control batches kept)."""
    s = Script(tmp_path, "mixed", 0)
    txn = Producer(7, 0)
    s.append(messages(9, seed=1, headers=True, nulls=True), codec=Codec.GZIP)
    s.append(messages(6, seed=2), magic=1, codec=Codec.SNAPPY)
    s.append(messages(5, seed=3), magic=0, codec=Codec.GZIP)
    s.append(messages(4, seed=4, headers=True), producer=txn, transactional=True)
    s.end(txn, commit=True)
    s.append(messages(12, seed=5), codec=Codec.LZ4)
    s.append(messages(7, seed=6), codec=Codec.ZSTD)
    s.close()
    directory = tmp_path / "mixed-0"
    result = log_stats(directory, what_if=True, sample=10_000)
    what = result.what_if
    assert what.sample_records == result.total.records == 43
    assert what.fraction == 1
    expected, control = _reencoded(segment_files(directory))
    assert control == result.total.control_bytes > 0
    found = {e.codec: e.bytes for e in what.estimates}
    assert found == {c: size + control for c, size in expected.items()}
    now = result.total.batch_bytes
    for e in what.estimates:
        assert e.now_bytes == now
        assert e.saving == now - e.bytes
        assert e.ratio == pytest.approx(e.bytes / now)


def test_what_if_of_uncompressed_v2_is_the_log_itself(tmp_path):
    s = Script(tmp_path, "plain", 0)
    for i in range(6):
        s.append(messages(10 + i, seed=i, headers=True, nulls=True))
    s.close()
    result = log_stats(tmp_path / "plain-0", what_if=True)
    none = result.what_if.estimates[0]
    assert none.codec == "none"
    assert none.bytes == result.total.bytes and none.saving == 0


def test_what_if_regrouping_by_batch_size(tmp_path):
    """--batch-size: 1 byte gives every record a batch of its own (a batch's first record always
    fits); a huge one puts each file's records in one batch."""
    s = Script(tmp_path, "runs", 0)
    s.append(messages(20, seed=1), magic=1)
    s.append(messages(6, seed=2), magic=2, codec=Codec.GZIP)
    s.append(messages(9, seed=3), magic=0)
    s.close()
    directory = tmp_path / "runs-0"
    records = []
    for f in segment_files(directory):
        reader = MemoryRecords(f.read_bytes())
        while reader.has_next():
            records.extend(reader.next_batch())

    def batch(rs) -> int:
        first = rs[0]
        base_ts = -1 if first.timestamp is None else first.timestamp
        specs = [
            RecordSpec(
                key=r.key,
                value=r.value,
                offset_delta=r.offset - first.offset,
                timestamp_delta=(-1 if r.timestamp is None else r.timestamp) - base_ts,
            )
            for r in rs
        ]
        return len(build_record_batch(specs, base_offset=first.offset, base_timestamp=base_ts))

    singles = log_stats(directory, what_if=True, batch_size=1).what_if
    assert singles.estimates[0].bytes == sum(batch([r]) for r in records)
    assert singles.sample_batches == len(records) == 35
    whole = log_stats(directory, what_if=True, batch_size=1 << 30).what_if
    assert whole.estimates[0].bytes == batch(records)
    assert whole.sample_batches == 1


def test_what_if_sample_spreads_and_scales(tmp_path):
    """A sample of a few batches estimates the whole within a few percent, though the log's
    first half compresses well and its second half not at all: the sample must come from all
    over the log, not its head. And it is the same every time."""
    rng = random.Random(5)
    s = Script(tmp_path, "big", 0, segment_bytes=20_000)
    for i in range(60):
        if i < 30:
            batch = messages(20, seed=i % 4)
        else:
            batch = [Message(b"k%d" % j, rng.randbytes(60), timestamp=T0 + j) for j in range(20)]
        s.append(batch, codec=Codec.GZIP if i % 2 else Codec.NONE)
    s.close()
    directory = tmp_path / "big-0"
    full = log_stats(directory, what_if=True, sample=10_000).what_if
    part = log_stats(directory, what_if=True, sample=100).what_if
    assert full.sample_records == 1200
    assert 100 <= part.sample_records <= 140  # whole batches of 20
    for a, b in zip(full.estimates, part.estimates, strict=True):
        assert b.bytes == pytest.approx(a.bytes, rel=0.1), a.codec
    assert log_stats(directory, what_if=True, sample=100).what_if.as_json() == part.as_json()


def test_cli_edge_inputs(tmp_path, capsys):
    """Never a traceback: one line on stderr and the status as the other commands give it."""
    empty = tmp_path / "empty.log"
    empty.write_bytes(b"")
    assert main(["stats", "--json", str(empty)]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["total"]["records"] == document["total"]["bytes"] == 0
    zeros = tmp_path / "zeros.log"
    zeros.write_bytes(bytes(1000))
    assert main(["stats", "-q", str(zeros)]) == 1
    err = capsys.readouterr().err
    assert err == (
        f"error: {zeros} @0: batch length 0 is less than the minimum record overhead (14)\n"
    )
    assert main(["stats", str(tmp_path / "missing.log")]) == 1
    assert (
        capsys.readouterr().err
        == f"kafka-format stats: error: {tmp_path / 'missing.log'}: no such file or directory\n"
    )
    with pytest.raises(SystemExit) as usage:
        main(["stats", "--sample", "0", str(empty)])
    assert usage.value.code == 2


def test_installed_command(log_dir):
    """As a user runs it: the entry point, JSON on stdout, nothing on stderr."""
    root, expected = log_dir
    done = subprocess.run(
        [sys.executable, "-m", "kafka_format", "stats", "--json", str(root)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert (done.returncode, done.stderr) == (0, "")
    document = json.loads(done.stdout)
    assert document["total"]["records"] == sum(e.records for e in expected.values())
