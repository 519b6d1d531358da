"""``generate_log_dir`` and ``kafka-format generate``: the directory it writes, checked against
independent oracles.

* Our reader must read back exactly the records the generator says it wrote (both isolations),
  and ``kafka-format dump --jsonl`` must hash to EXPECTED.json's digests.
* kafka-python reads every batch (aiokafka for snappy, which kafka-python cannot decode here)
  and must agree record by record, CRCs included.
* The broker's rules are re-implemented here from Kafka's sources with nothing but ``struct``
  over the ``.log`` bytes (``LogSegment.recover``'s index loop, ``ProducerStateManager``'s
  aborted-transaction bookkeeping, ``ProducerAppendInfo``'s producer state,
  ``LeaderEpochFileCache.assign``) and the files the generator wrote must say the same.
* ``kafka-format dump`` reads every file; ``kafka-format verify`` passes; the same seed gives
  the same bytes, the fast serialiser the same bytes as the Construct builders.
* The producer side, re-derived from the log: every keyed record sits in the partition its key
  hashes to (kafka-python's murmur2 and ours), records without a key follow the uniform sticky
  partitioner (runs of about batch.size bytes) or, for old clients, round-robin; every batch
  obeys ``RecordAccumulator``'s size rule (sizes measured in the log); busy producers fill
  their batches, slow ones send single records; sequences continue batch after batch.
"""

from __future__ import annotations

import argparse
import collections
import hashlib
import importlib.util
import io
import itertools
import json
import statistics
import struct
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from aiokafka.record.memory_records import MemoryRecords as AioMemoryRecords
from crc32c import crc32c
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kafka.partitioner.default import murmur2 as kp_murmur2
from kafka.record import MemoryRecords as KpMemoryRecords
from kafka.record.default_records import DefaultRecordBatchBuilder
from kafka.record.legacy_records import LegacyRecordBatchBuilder

import kafka_format as kf
from kafka_format.runtime.cli import main
from kafka_format.runtime.cli.dump import DumpOptions, dump
from kafka_format.runtime.cli.generate import parse_size
from kafka_format.runtime.format.codecs import decompress
from kafka_format.runtime.format.jsonform import record_json
from kafka_format.runtime.write.generate import (
    BENCH_RECORDS_PER_BATCH,
    BENCH_VALUE_BYTES,
    DEFAULT_BATCH_SIZE,
    EXPECTED_FILE,
    TOPIC_KINDS,
    GeneratedLog,
    ProducedBatch,
    generate_log_dir,
    records_digest,
)
from kafka_format.runtime.write.partitioner import default_partition

SEGMENT_BYTES = 12 * 1024
INTERVAL = 4096
HAS_VERIFY = importlib.util.find_spec("kafka_format.runtime.analysis.verify") is not None


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    root = tmp_path_factory.mktemp("gen") / "logs"
    result = generate_log_dir(root, seed=11, records=200, segment_bytes=SEGMENT_BYTES)
    return root, result


BUSY_RATE = 2_000_000


@pytest.fixture(scope="module")
def busy(tmp_path_factory):
    """Producers under load: batch.size, not linger.ms, closes most batches."""
    root = tmp_path_factory.mktemp("busy") / "logs"
    result = generate_log_dir(
        root,
        seed=5,
        topics=["orders", "legacy-events", "clicks"],
        records=3000,
        rate=BUSY_RATE,
        segment_bytes=256 * 1024,
        fast=True,
    )
    return root, result


STICKY_BATCH_SIZE = 2048


@pytest.fixture(scope="module")
def sticky(tmp_path_factory):
    """Four partitions, a small batch.size: many partition switches for records without a
    key (round-robin in the magic 0/1 phases, uniform sticky in the v2 phase)."""
    root = tmp_path_factory.mktemp("sticky") / "logs"
    result = generate_log_dir(
        root,
        seed=3,
        topics=["legacy-events"],
        partitions=4,
        records=3000,
        batch_size=STICKY_BATCH_SIZE,
        segment_bytes=256 * 1024,
        fast=True,
    )
    return root, result


# --- an independent walk over the .log bytes -----------------------------------------------


@dataclass
class Frame:
    position: int
    size: int
    magic: int
    base_offset: int  # v2: base offset; v0/v1: the entry's offset (a wrapper's last)
    last_offset: int
    max_timestamp: int
    attributes: int
    leader_epoch: int = -1
    producer_id: int = -1
    producer_epoch: int = -1
    base_sequence: int = -1
    last_offset_delta: int = 0
    base_timestamp: int = -1
    raw: bytes = b""

    @property
    def codec(self) -> int:
        return self.attributes & 7

    @property
    def transactional(self) -> bool:
        return self.magic == 2 and bool(self.attributes & 0x10)

    @property
    def control(self) -> bool:
        return self.magic == 2 and bool(self.attributes & 0x20)


def frames(path: Path) -> list[Frame]:
    data = path.read_bytes()
    out = []
    pos = 0
    while pos < len(data):
        offset, length = struct.unpack_from(">qi", data, pos)
        magic = data[pos + 16]
        size = 12 + length
        raw = data[pos : pos + size]
        assert len(raw) == size, f"truncated frame in {path}"
        if magic == 2:
            (epoch,) = struct.unpack_from(">i", raw, 12)
            attrs, lod, base_ts, max_ts, pid, pepoch, seq = struct.unpack_from(">hiqqqhi", raw, 21)
            frame = Frame(pos, size, 2, offset, offset + lod, max_ts, attrs, epoch, pid, pepoch)
            frame.base_sequence, frame.last_offset_delta, frame.base_timestamp = seq, lod, base_ts
            frame.raw = raw
            out.append(frame)
        else:
            attrs = raw[17]
            ts = struct.unpack_from(">q", raw, 18)[0] if magic == 1 else -1
            out.append(Frame(pos, size, magic, offset, offset, ts, attrs, raw=raw))
        pos += size
    return out


def segments(partition_dir: Path) -> list[tuple[int, Path]]:
    return sorted((int(p.name.split(".")[0]), p) for p in partition_dir.glob("*.log"))


def entries(path: Path, fmt: str) -> list[tuple[int, ...]]:
    if not path.exists():
        return []
    data = path.read_bytes()
    size = struct.calcsize(fmt)
    assert len(data) % size == 0
    return [struct.unpack_from(fmt, data, i) for i in range(0, len(data), size)]


def read_varint(data: bytes, pos: int) -> tuple[int, int]:
    raw = shift = 0
    while True:
        byte = data[pos]
        pos += 1
        raw |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return (raw >> 1) ^ -(raw & 1), pos


def control_record(frame: Frame) -> tuple[int, int, int]:
    """(type, coordinator epoch, timestamp) of a control batch's single record."""
    pos = 61
    _, pos = read_varint(frame.raw, pos)  # length
    pos += 1  # attributes
    ts_delta, pos = read_varint(frame.raw, pos)
    _, pos = read_varint(frame.raw, pos)  # offset delta
    key_len, pos = read_varint(frame.raw, pos)
    _, control_type = struct.unpack_from(">hh", frame.raw, pos)
    pos += key_len
    _, pos = read_varint(frame.raw, pos)
    _, coordinator_epoch = struct.unpack_from(">hi", frame.raw, pos)
    return control_type, coordinator_epoch, frame.base_timestamp + ts_delta


def partition_dirs(root: Path) -> Iterator[Path]:
    yield from sorted(p for p in root.iterdir() if p.is_dir())


# --- the records --------------------------------------------------------------------------


@pytest.mark.parametrize("log_dir", ["generated", "busy"])
@pytest.mark.parametrize("isolation", ["read_uncommitted", "read_committed"])
def test_reader_reads_exactly_what_was_written(request, log_dir, isolation):
    root, result = request.getfixturevalue(log_dir)
    assert set(result.partitions) == {p.name for p in partition_dirs(root)}
    for name in result.partitions:
        got = [record_json(r) for r in kf.iter_records(root / name, isolation=isolation)]
        assert got == result.expected(name, isolation), name


def test_scenarios_cover_what_they_promise(generated):
    _, result = generated
    s = result.partitions
    orders = [s[f"orders-{i}"] for i in range(TOPIC_KINDS["orders"])]
    assert sum(p.transactions_aborted for p in orders) > 0
    assert sum(p.transactions_committed for p in orders) > 0
    assert s["orders-0"].open > 0  # a transaction left open
    assert all(p.codecs == {"none", "gzip", "snappy", "lz4", "zstd"} for p in orders)
    assert all(len(p.leader_epochs) == 3 for p in orders)
    assert s["legacy-events-0"].magics == {0, 1, 2}
    assert s["clicks-0"].magics == {1, 2}
    assert all(p.tombstones and p.with_headers for p in orders)
    assert all(len(p.segments) > 1 for p in s.values())
    users = s["users-0"]
    offsets = [r.offset for r in result.records["users-0"]]
    assert users.log_end_offset > users.records  # gaps from compaction
    assert offsets != list(range(offsets[0], offsets[0] + len(offsets)))


def test_expected_json_matches_dump_jsonl(generated):
    root, result = generated
    manifest = json.loads((root / EXPECTED_FILE).read_text())
    assert manifest == json.loads(json.dumps(result.to_json()))
    for name, entry in manifest["partitions"].items():
        for isolation, key in (
            ("read_uncommitted", "sha256_read_uncommitted"),
            ("read_committed", "sha256_read_committed"),
        ):
            out = io.StringIO()
            options = DumpOptions(jsonl=True, isolation=isolation, canonical=True)
            assert dump([str(root / name)], options, out=out, err=out) == 0
            out = out.getvalue()
            assert hashlib.sha256(out.encode()).hexdigest() == entry[key], name
        reader = list(kf.iter_records(root / name))
        assert entry["records"] == len(reader)
        assert entry["read_committed_records"] == len(
            list(kf.iter_records(root / name, isolation="read_committed"))
        )
        assert entry["log_end_offset"] > reader[-1].offset
        assert entry["segments"] == [base for base, _ in segments(root / name)]


def _peer_batch(frame: Frame):
    # kafka-python needs python-snappy for snappy, absent here: aiokafka decodes those. One
    # frame at a time, as aiokafka's Cython reader trips over mixed magics in one buffer.
    peer = AioMemoryRecords if frame.codec == 2 else KpMemoryRecords
    batch = peer(frame.raw).next_batch()
    assert batch is not None
    return batch


@pytest.mark.parametrize("log_dir", ["generated", "busy"])
def test_kafka_python_agrees_record_by_record(request, log_dir):
    root, result = request.getfixturevalue(log_dir)
    for part in partition_dirs(root):
        got = []
        for _, log in segments(part):
            for frame in frames(log):
                batch = _peer_batch(frame)
                assert batch.validate_crc(), (log, frame.position)
                if frame.control:
                    assert [r.key[2:4] for r in batch] in ([b"\x00\x00"], [b"\x00\x01"])
                    continue
                for r in batch:
                    got.append(
                        {
                            "offset": r.offset,
                            "timestamp": r.timestamp,
                            "timestampType": -1 if r.timestamp_type is None else r.timestamp_type,
                            "key": r.key,
                            "value": r.value,
                            "headers": [tuple(h) for h in r.headers],
                        }
                    )
        expected = [
            {
                "offset": r.offset,
                "timestamp": r.timestamp,
                "timestampType": r.timestamp_type,
                "key": r.key,
                "value": r.value,
                "headers": list(r.headers),
            }
            for r in result.records[part.name]
        ]
        assert got == expected, part.name


# --- the broker's rules, re-derived from the .log bytes -------------------------------------


def test_indexes_are_where_the_broker_puts_them(generated):
    """``LogSegment.recover``'s loop (Kafka 4.0's append does the same per batch): an entry
    for a batch when more than index.interval.bytes came before it since the last entry; the
    time index follows with the largest timestamp so far; a closed segment ends with it."""
    root, _ = generated
    checked = 0
    for part in partition_dirs(root):
        for base, log in segments(part):
            index, time_index = [], []
            since, max_ts, max_offset = 0, -1, base
            for f in frames(log):
                if f.max_timestamp > max_ts:
                    max_ts, max_offset = f.max_timestamp, f.last_offset
                if since > INTERVAL:
                    index.append((f.last_offset - base, f.position))
                    if max_ts > (time_index[-1][0] if time_index else -1):
                        time_index.append((max_ts, max_offset - base))
                    since = 0
                since += f.size
            if max_ts > (time_index[-1][0] if time_index else -1):
                time_index.append((max_ts, max_offset - base))
            assert entries(log.with_suffix(".index"), ">ii") == index, log
            assert entries(log.with_suffix(".timeindex"), ">qi") == time_index, log
            checked += len(index)
    assert checked > 20


def test_segments_roll_where_the_next_append_would_not_fit(generated):
    root, _ = generated
    cleaner = (root / "cleaner-offset-checkpoint").read_text().split()[2:]
    cleaned = {(f"{t}-{p}", int(o)) for t, p, o in zip(*[iter(cleaner)] * 3, strict=True)}
    for part in partition_dirs(root):
        segs = segments(part)
        for (base, log), (next_base, next_log) in itertools.pairwise(segs):
            size = log.stat().st_size
            assert size <= SEGMENT_BYTES
            first = frames(next_log)[0]
            # v2 batches and v0/v1 wrappers are whole appends; a run of uncompressed legacy
            # messages is one append too, so the first message alone proves nothing there.
            # The segment at the cleaner checkpoint was active when the cleaner ran: the
            # copied part ends there, whatever its size.
            if (part.name, next_base) in cleaned:
                assert next_base == first.base_offset
            elif first.magic == 2 or first.codec:
                assert size + first.size > SEGMENT_BYTES, next_log
            # the new segment starts at the append's first offset
            if first.magic == 2:
                assert next_base == first.base_offset
            else:
                assert base < next_base <= first.last_offset


def test_txnindex_holds_every_aborted_transaction_with_its_lso(generated):
    """``ProducerStateManager``: a transaction starts at its producer's first transactional
    batch; an ABORT marker gives (pid, first, marker offset, LSO) in the marker's segment,
    LSO = first offset of the earliest other open transaction, else the marker + 1."""
    root, _ = generated
    found = 0
    held_back = 0
    for part in partition_dirs(root):
        ongoing: dict[int, int] = {}
        for _, log in segments(part):
            expected = []
            for f in frames(log):
                if f.magic != 2 or f.producer_id < 0:
                    continue
                if f.control:
                    control_type, _, _ = control_record(f)
                    first = ongoing.pop(f.producer_id, None)
                    if first is not None and control_type == 0:
                        lso = min(ongoing.values(), default=f.base_offset + 1)
                        held_back += lso != f.base_offset + 1
                        expected.append((0, f.producer_id, first, f.base_offset, lso))
                elif f.transactional and f.producer_id not in ongoing:
                    ongoing[f.producer_id] = f.base_offset
            txn = log.with_suffix(".txnindex")
            assert entries(txn, ">hqqqq") == expected, log
            assert txn.exists() == bool(expected)  # created on first use, as Kafka does
            found += len(expected)
    assert found > 0
    assert held_back > 0


def test_producer_snapshots_hold_the_producer_state(generated):
    """Each ``N.snapshot`` holds, per producer id, what ``ProducerAppendInfo`` keeps after
    every batch below offset N: epoch, last sequence/offset/offset delta/timestamp of its last
    batch (forgotten on an epoch change), coordinator epoch, open transaction."""
    root, _ = generated
    for part in partition_dirs(root):
        all_frames = [f for _, log in segments(part) for f in frames(log)]
        snapshots = sorted(part.glob("*.snapshot"))
        assert [int(p.stem) for p in snapshots] == [
            *(b for b, _ in segments(part)[1:]),
            all_frames[-1].last_offset + 1,
        ]
        for snap in snapshots:
            data = snap.read_bytes()
            version, crc, count = struct.unpack_from(">hIi", data)
            assert version == 1 and crc == crc32c(data[6:])
            got = {
                e[0]: e
                for e in (struct.unpack_from(">qhiqiqiq", data, 10 + 46 * i) for i in range(count))
            }
            state: dict[int, list[int]] = {}
            for f in all_frames:
                if f.magic != 2 or f.producer_id < 0 or f.last_offset >= int(snap.stem):
                    continue
                pid = f.producer_id
                s = state.setdefault(pid, [pid, -1, -1, -1, 0, -1, -1, -1])
                if s[1] != f.producer_epoch:
                    s[1:5] = [f.producer_epoch, -1, -1, 0]
                if f.control:
                    _, s[6], s[5] = control_record(f)
                    s[7] = -1
                else:
                    s[2] = (f.base_sequence + f.last_offset_delta) % (1 << 31)
                    s[3], s[4], s[5] = f.last_offset, f.last_offset_delta, f.max_timestamp
                    if f.transactional and s[7] < 0:
                        s[7] = f.base_offset
            assert got == {pid: tuple(s) for pid, s in state.items()}, snap


def test_leader_epoch_checkpoints(generated):
    """``LeaderEpochFileCache.assign`` per v2 batch; a v0/v1 batch after v2 ones clears it."""
    root, result = generated
    for part in partition_dirs(root):
        epochs: list[tuple[int, int]] = []
        for _, log in segments(part):
            for f in frames(log):
                if f.magic < 2:
                    epochs.clear()
                elif f.leader_epoch >= 0 and (not epochs or f.leader_epoch > epochs[-1][0]):
                    epochs.append((f.leader_epoch, f.base_offset))
        lines = (part / "leader-epoch-checkpoint").read_text().splitlines()
        assert lines == ["0", str(len(epochs)), *(f"{e} {o}" for e, o in epochs)], part
        assert result.partitions[part.name].leader_epochs == epochs


def test_log_dir_checkpoints(generated):
    root, result = generated
    lines = (root / "recovery-point-offset-checkpoint").read_text().splitlines()
    ends = {(s.topic, s.partition): s.log_end_offset for s in result.partitions.values()}
    assert lines[:2] == ["0", str(len(ends))]
    assert {(t, int(p)): int(o) for t, p, o in (line.split() for line in lines[2:])} == ends
    cleaner = (root / "cleaner-offset-checkpoint").read_text().splitlines()
    assert cleaner[:2] == ["0", "1"] and cleaner[2].startswith("users 0 ")
    for part in partition_dirs(root):
        assert (part / "partition.metadata").read_text().startswith("version: 0\ntopic_id: ")


@pytest.mark.parametrize("records", [200, 900])
def test_cleaner_checkpoint_is_a_segment_base_below_the_active_one(tmp_path, records):
    """The cleaner checkpoints the first uncleanable offset, a segment's base offset and at
    most the active segment's (LogCleanerManager.cleanableOffsets, LogToClean's
    firstUncleanableOffset): never an offset inside the active segment."""
    root = tmp_path / "logs"
    generate_log_dir(root, seed=11, topics=["users"], records=records, segment_bytes=8192)
    lines = (root / "cleaner-offset-checkpoint").read_text().splitlines()
    assert int(lines[1]) == len(lines) - 2 > 0
    for line in lines[2:]:
        topic, partition, offset = line.split()
        bases = [b for b, _ in segments(root / f"{topic}-{partition}")]
        assert int(offset) in bases, line
        assert int(offset) <= bases[-1], line
        # and the cleaned part below it holds data: the checkpoint is not the log start
        assert int(offset) > bases[0], line


# --- the CLI on it --------------------------------------------------------------------------


def test_dump_reads_every_file(generated):
    root, _ = generated
    files = [
        str(p)
        for part in partition_dirs(root)
        for p in sorted(part.iterdir())
        if p.name != "partition.metadata"
    ]
    assert {Path(p).suffix for p in files} >= {
        ".log", ".index", ".timeindex", ".txnindex", ".snapshot"
    }  # fmt: skip
    run = subprocess.run(
        [sys.executable, "-m", "kafka_format", "dump", "--deep-iteration", *files],
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    assert "error" not in run.stderr.lower()  # it lists compaction's offset gaps, as Kafka's does
    assert run.stdout.count("Dumping ") == len(files)
    assert "endTxnMarker: ABORT" in run.stdout and "endTxnMarker: COMMIT" in run.stdout


@pytest.mark.skipif(not HAS_VERIFY, reason="kafka-format verify not written yet")
def test_verify_passes(generated, capsys):
    root, _ = generated
    assert main(["verify", str(root)]) == 0, capsys.readouterr()


# --- determinism, and the fast serialiser ---------------------------------------------------


def _tree(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()
    }


def test_same_seed_same_bytes_and_fast_equals_construct(tmp_path):
    a = _tree_of(tmp_path / "a", seed=4)
    b = _tree_of(tmp_path / "b", seed=4, fast=True)
    c = _tree_of(tmp_path / "c", seed=5)
    assert a == b
    assert a != c
    assert sum(len(v) for k, v in a.items() if k.endswith(".log")) > 20_000


def _tree_of(path: Path, **kwargs) -> dict[str, bytes]:
    generate_log_dir(path, records=60, segment_bytes=8192, **kwargs)
    return _tree(path)


def test_live_broker_layout(tmp_path):
    root = tmp_path / "live"
    result = generate_log_dir(
        root, seed=2, topics=["orders"], partitions=1, records=80, clean_shutdown=False
    )
    part = root / "orders-0"
    segs = segments(part)
    active_base, active = segs[-1]
    assert active.with_suffix(".index").stat().st_size == 10 * 1024 * 1024
    assert active.with_suffix(".timeindex").stat().st_size == (10 * 1024 * 1024 // 12) * 12
    assert not (root / ".kafka_cleanshutdown").exists()
    snapshots = sorted(int(p.stem) for p in part.glob("*.snapshot"))
    assert snapshots == [b for b, _ in segs[1:]]  # none at the log end offset
    recovery = (root / "recovery-point-offset-checkpoint").read_text().split()
    assert recovery[-1] == str(active_base)
    got = [record_json(r) for r in kf.iter_records(part)]
    assert got == result.expected("orders-0")
    if HAS_VERIFY:
        assert main(["verify", str(root)]) == 0


# --- the benchmark shape --------------------------------------------------------------------


@pytest.mark.parametrize("codec", ["none", "zstd"])
def test_bench_shape(tmp_path, codec):
    root = tmp_path / "bench"
    size = 700 * 1024
    args = ["generate", str(root), "--size", "700KiB", "--segment-bytes", "150KiB"]
    assert main([*args, "--codec", codec, "--partitions", "2"]) == 0
    logs = sorted(root.glob("bench-*/*.log"))
    total = sum(p.stat().st_size for p in logs)
    assert size * 0.5 < total <= size
    assert len({p.parent for p in logs}) == 2
    assert len(logs) >= 4  # rolled
    records = 0
    for part in partition_dirs(root):
        for batch in kf.iter_batches(part):
            assert batch.magic == 2 and batch.records_count == BENCH_RECORDS_PER_BATCH
            assert batch.codec == (0 if codec == "none" else 4)
            assert batch.producer_id >= 0
            for r in batch.records:
                assert len(r.value) == BENCH_VALUE_BYTES and len(r.headers) == 1
                json.loads(r.value)
                # keys sit where the default partitioner puts them
                assert (kp_murmur2(r.key) & 0x7FFFFFFF) % 2 == partition_number(part)
            records += len(batch.records)
    manifest = json.loads((root / EXPECTED_FILE).read_text())
    assert sum(p["records"] for p in manifest["partitions"].values()) == records
    assert all(p["sha256_read_uncommitted"] is None for p in manifest["partitions"].values())


def test_cli_help_errors_and_run(tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["generate", "--help"])
    assert exit_info.value.code == 0
    assert "examples:" in capsys.readouterr().out
    busy = tmp_path / "busy"
    busy.mkdir()
    (busy / "x").write_text("x")
    assert main(["generate", str(busy)]) == 2  # a bad argument
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "not an empty directory" in err
    out_dir = tmp_path / "out"
    assert main(["generate", str(out_dir), "--topics", "users,clicks", "--records", "30"]) == 0
    assert "wrote 3 partitions" in capsys.readouterr().out
    assert {p.name for p in out_dir.iterdir() if p.is_dir()} == {"users-0", "clicks-0", "clicks-1"}
    assert main(["generate", str(tmp_path / "bad"), "--topics", "nope"]) == 2
    assert "unknown topic" in capsys.readouterr().err


def test_parse_size():
    assert parse_size("2GiB") == 2 * 1024**3
    assert parse_size("512MiB") == 512 * 1024**2
    assert parse_size("64k") == 65536
    assert parse_size("1.5G") == 3 * 1024**3 // 2
    assert parse_size("1000") == 1000
    for bad in ("", "GiB", "-1", "0", "2PB"):
        with pytest.raises(argparse.ArgumentTypeError, match="size"):
            parse_size(bad)


def test_records_digest_is_the_dump_jsonl_form():
    rows = [{"offset": 0, "timestamp": None, "timestampType": -1, "key": None, "value": "eA=="}]
    text = "".join(json.dumps(r, separators=(",", ":")) + "\n" for r in rows)
    assert records_digest(rows) == hashlib.sha256(text.encode()).hexdigest()


# --- the producer side, re-derived from the log ---------------------------------------------

CODEC_IDS = {"none": 0, "gzip": 1, "snappy": 2, "lz4": 3, "zstd": 4}
LEGACY_OVERHEAD = {0: 14, 1: 22}  # crc, magic, attributes, [timestamp,] key and value lengths


def partition_number(part: Path) -> int:
    return int(part.name.rpartition("-")[2])


def topic_partitions(root: Path) -> dict[str, list[Path]]:
    """Partition directories by topic: the partition count is how many there are."""
    out: dict[str, list[Path]] = collections.defaultdict(list)
    for part in partition_dirs(root):
        out[part.name.rpartition("-")[0]].append(part)
    return out


def effective_batch_size(result: GeneratedLog) -> int:
    # docs/generate.md: batch.size is held to half the segment size (default 32 KiB)
    segment = result.options["segment_bytes"] or 32 * 1024
    return min(result.options["batch_size"], segment // 2)


def uncompressed_sizes(frame: Frame) -> list[int]:
    """Each record's (v2) or inner log entry's (v0/v1) size before compression, walked in the
    (decompressed) bytes; an uncompressed v0/v1 entry is one message."""
    if frame.magic == 2:
        data = frame.raw[61:]
        if frame.codec:
            data = decompress(frame.codec, data, magic=2)
        sizes, pos = [], 0
        while pos < len(data):
            length, body = read_varint(data, pos)
            sizes.append(body - pos + length)
            pos = body + length
        return sizes
    if not frame.codec:
        return [frame.size]
    wrapped = frame.raw[batch_header(frame) :]  # the wrapper's value
    data = decompress(frame.codec, wrapped, magic=frame.magic)
    sizes, pos = [], 0
    while pos < len(data):
        (length,) = struct.unpack_from(">i", data, pos + 8)
        sizes.append(12 + length)
        pos += 12 + length
    return sizes


def batch_header(frame: Frame) -> int:
    """What a producer batch spends besides its records: a v2 header, a v0/v1 wrapper."""
    if frame.magic == 2:
        return 61
    return 12 + LEGACY_OVERHEAD[frame.magic] if frame.codec else 0


def data_frames(part: Path) -> list[Frame]:
    return [f for _, log in segments(part) for f in frames(log) if not f.control]


def produced_frames(
    root: Path, result: GeneratedLog, name: str
) -> tuple[list[tuple[ProducedBatch, list[Frame]]], list[Frame]]:
    """Each batch the producers say they sent, with its frames in the log (a run of
    uncompressed v0/v1 messages is a frame per message); and the frames no producer sent."""
    by_last = {f.last_offset: f for f in data_frames(root / name)}
    pairs = []
    for pb in result.produced[name]:
        if pb.magic < 2 and pb.codec == "none":
            offsets = range(pb.base_offset, pb.base_offset + pb.records)
        else:
            offsets = range(pb.base_offset + pb.records - 1, pb.base_offset + pb.records)
        pairs.append((pb, [by_last.pop(o) for o in offsets]))
    return pairs, list(by_last.values())


@pytest.mark.parametrize("log_dir", ["generated", "busy", "sticky"])
def test_keyed_records_sit_where_their_key_hashes(request, log_dir):
    """What ``verify --partitioner`` checks: kafka-python's murmur2 (and ours) of each key,
    sign bit cleared, modulo the topic's partition directories, is the record's partition."""
    root, _ = request.getfixturevalue(log_dir)
    keyed = unkeyed = 0
    for parts in topic_partitions(root).values():
        for part in parts:
            for r in kf.iter_records(part):
                if r.key is None:
                    unkeyed += 1
                    continue
                expected = (kp_murmur2(r.key) & 0x7FFFFFFF) % len(parts)
                assert expected == partition_number(part), (part.name, r.offset, r.key)
                assert default_partition(r.key, len(parts)) == expected
                keyed += 1
    assert keyed > 1000 and unkeyed > 50


HAS_PARTITIONER_CHECK = HAS_VERIFY and hasattr(
    importlib.import_module("kafka_format.runtime.analysis.verify"), "Placements"
)


@pytest.mark.skipif(not HAS_PARTITIONER_CHECK, reason="verify --partitioner not written yet")
@pytest.mark.parametrize("log_dir", ["generated", "sticky"])
def test_verify_partitioner_passes(request, log_dir, capsys):
    root, _ = request.getfixturevalue(log_dir)
    assert main(["verify", "--partitioner-strict", "--quiet", str(root)]) == 0, capsys.readouterr()


@pytest.mark.parametrize("log_dir", ["generated", "busy", "sticky"])
def test_produced_batches_are_the_log_batches(request, log_dir):
    """The producers' account of their batches matches the log, frame for frame: the tests
    below use it only to tell which frames one producer batch made."""
    root, result = request.getfixturevalue(log_dir)
    cleaner = (root / "cleaner-offset-checkpoint").read_text().split()[2:]
    cleaned = {f"{t}-{p}": int(o) for t, p, o in zip(*[iter(cleaner)] * 3, strict=True)}
    for name in result.partitions:
        pairs, rest = produced_frames(root, result, name)
        # only the cleaned part of a compacted topic was copied, not produced
        assert all(f.last_offset < cleaned.get(name, 0) for f in rest), name
        assert pairs, name
        for pb, fs in pairs:
            sizes = [s for f in fs for s in uncompressed_sizes(f)]
            assert {(f.magic, f.codec) for f in fs} == {(pb.magic, CODEC_IDS[pb.codec])}
            assert sum(f.size for f in fs) == pb.log_bytes
            assert len(sizes) == pb.records
            assert sum(sizes) == pb.records_bytes
            if pb.compression_ratio is None:  # the estimate is the uncompressed size
                assert pb.estimated_bytes == batch_header(fs[0]) + pb.records_bytes


def _first_record_bound(frame: Frame) -> int:
    """kafka-python's ``estimate_size_in_bytes`` of the frame's first record: the buffer
    ``RecordAccumulator`` allocates for it when it is larger than batch.size."""
    first = next(iter(_peer_batch(frame)))
    if frame.magic == 2:
        headers = [tuple(h) for h in first.headers]
        return DefaultRecordBatchBuilder.estimate_size_in_bytes(first.key, first.value, headers)
    return LegacyRecordBatchBuilder.estimate_size_in_bytes(
        frame.magic, frame.codec, first.key, first.value
    )


def check_size_rule(root: Path, result: GeneratedLog) -> tuple[int, int]:
    """``MemoryRecordsBuilder.hasRoomFor``: a record joins a batch only if the estimate so far
    plus the record's uncompressed size stays within the write limit, batch.size unless the
    first record needed more. Sizes are measured in the log; the estimate of a compressed
    batch scales its uncompressed bytes by the ratio the producer estimated and 1.05, in
    Java's float arithmetic. Returns how many batches had records join the first one, and
    how many had a first record larger than batch.size."""
    batch_size = effective_batch_size(result)
    joined = big_first = 0
    for name in result.partitions:
        for pb, fs in produced_frames(root, result, name)[0]:
            sizes = [s for f in fs for s in uncompressed_sizes(f)]
            if pb.write_limit != batch_size:
                assert pb.write_limit == _first_record_bound(fs[0]) > batch_size, (name, pb)
                big_first += 1
            if pb.codec == "none":
                assert sum(f.size for f in fs) <= pb.write_limit, (name, pb)
            if len(sizes) < 2:
                continue
            header = batch_header(fs[0])
            before = sum(sizes[:-1])
            if pb.compression_ratio is not None:
                scaled = np.float32(before) * np.float32(pb.compression_ratio)
                before = int(np.float32(scaled) * np.float32(1.05))
            assert header + before + sizes[-1] <= pb.write_limit, (name, pb)
            joined += 1
    return joined, big_first


@pytest.mark.parametrize("log_dir", ["generated", "busy", "sticky"])
def test_batches_follow_the_accumulators_size_rule(request, log_dir):
    root, result = request.getfixturevalue(log_dir)
    joined, big_first = check_size_rule(root, result)
    assert joined > 50
    if log_dir == "sticky":  # batch.size 2048 is smaller than the big values
        assert big_first > 0


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 2**16),
    partitions=st.integers(1, 4),
    batch_size=st.sampled_from([0, 300, 1024, 4096, 16384]),
    linger_ms=st.integers(0, 200),
    rate=st.floats(10, 1e7),
)
def test_any_settings_place_and_batch_as_a_producer_does(
    seed, partitions, batch_size, linger_ms, rate
):
    """Whatever the settings: keys in the partition they hash to, the size rule kept, every
    record read back as written."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "logs"
        result = generate_log_dir(
            root,
            seed=seed,
            topics=["clicks", "orders"],
            partitions=partitions,
            records=40,
            batch_size=batch_size,
            linger_ms=linger_ms,
            rate=rate,
            fast=True,
        )
        check_size_rule(root, result)
        for name in result.partitions:
            got = [record_json(r) for r in kf.iter_records(root / name)]
            assert got == result.expected(name)
            for r in kf.iter_records(root / name):
                if r.key is not None:
                    assert default_partition(r.key, partitions) == partition_number(root / name)


def test_busy_producers_fill_their_batches(busy):
    """At 2 million records/s linger.ms never runs out: an uncompressed batch closes when
    the next record does not fit batch.size, so most are close to it. (The others: each
    producer's last batch, and the batches a restarting producer flushes.)"""
    root, _ = busy
    fill = [
        f.size / DEFAULT_BATCH_SIZE
        for part in partition_dirs(root)
        for f in data_frames(part)
        if f.magic == 2 and f.codec == 0 and not f.transactional
    ]
    assert len(fill) > 40
    assert max(fill) <= 1.0
    assert statistics.median(fill) > 0.9
    assert sum(x > 0.75 for x in fill) / len(fill) > 0.65


def _v2_records_per_batch(root: Path, topics: tuple[str, ...] = ()) -> list[int]:
    return [
        f.last_offset_delta + 1
        for part in partition_dirs(root)
        if not topics or part.name.rpartition("-")[0] in topics
        for f in data_frames(part)
        if f.magic == 2
    ]


def test_slow_producers_send_records_one_by_one(tmp_path):
    """At 50 records/s a record rarely finds its producer's batch for that partition still
    lingering: single-record batches. A long linger.ms gathers them again."""
    kwargs = dict(seed=2, topics=["orders", "clicks"], records=120, rate=50, fast=True)
    generate_log_dir(tmp_path / "short", linger_ms=0, **kwargs)
    counts = _v2_records_per_batch(tmp_path / "short")
    assert len(counts) > 300
    assert sum(c == 1 for c in counts) / len(counts) > 0.95
    generate_log_dir(tmp_path / "long", linger_ms=5000, **kwargs)
    lingered = _v2_records_per_batch(tmp_path / "long")
    assert len(lingered) < len(counts) / 3
    assert statistics.mean(lingered) > 3 * statistics.mean(counts)


def test_default_load_gives_a_spread_of_batch_sizes(generated):
    """Quiet and busy spells: single records and bigger batches, no one size."""
    root, _ = generated
    counts = _v2_records_per_batch(root, ("orders", "clicks", "legacy-events"))
    assert len(set(counts)) >= 8
    assert max(counts) >= 10
    assert 0.2 < sum(c == 1 for c in counts) / len(counts) < 0.9


def sticky_runs(records: list[tuple[int, int, int, int]]) -> list[list[tuple[int, int, int, int]]]:
    """(timestamp, partition, size, batch) in time order, cut where the partition changes;
    records of one millisecond on two partitions are put in the order that changes least."""
    by_time: dict[int, list] = collections.defaultdict(list)
    for record in records:
        by_time[record[0]].append(record)
    runs: list[list] = []
    current = None
    for t in sorted(by_time):
        group = by_time[t]
        for partition in sorted({r[1] for r in group}, key=lambda p: (p != current, p)):
            chunk = [r for r in group if r[1] == partition]
            if partition == current:
                runs[-1].extend(chunk)
            else:
                runs.append(chunk)
                current = partition
    return runs


def test_records_without_a_key_stick_to_a_partition_for_about_batch_size(sticky):
    """KIP-794's uniform sticky partitioner, as the v2 producers of ``legacy-events`` use it:
    a producer's records without a key go to one partition until at least batch.size bytes
    went there (counting each record's size and, for a batch it opened, the batch header),
    and never more than twice that. Producer 2000 sends uncompressed, so its estimate is
    exact; its records' timestamps are their send times."""
    root, _ = sticky
    records = []
    for part in partition_dirs(root):
        for f in data_frames(part):
            if f.magic != 2 or f.producer_id != 2000:
                continue
            assert f.codec == 0
            for r, size in zip(_peer_batch(f), uncompressed_sizes(f), strict=True):
                if r.key is None:
                    records.append((r.timestamp, partition_number(part), size, f.base_offset))
    runs = sticky_runs(records)
    assert 5 <= len(runs) < len(records) / 3
    assert len({run[0][1] for run in runs}) == 4
    produced = []
    for run in runs[:-1]:
        batches = {batch for *_, batch in run}
        produced.append(sum(size for _, _, size, _ in run) + 61 * len(batches))
        assert produced[-1] >= STICKY_BATCH_SIZE, run
    # A stay ends before 2 * batch.size; the next partition may be the same one again (1 in
    # 4 here), which merges stays into one run: on average 4/3 of a stay.
    assert statistics.mean(produced) < 2 * STICKY_BATCH_SIZE * 4 / 3 + 1000


def test_old_clients_send_records_without_a_key_round_robin(sticky):
    """Before Kafka 2.4 a producer sent records without a key to partition after partition:
    per client the counts differ by at most one, so per magic phase by at most the number
    of clients (3 for magic 0, 4 for magic 1). Random placement would spread far wider."""
    root, _ = sticky
    counts: dict[int, collections.Counter] = {0: collections.Counter(), 1: collections.Counter()}
    for part in partition_dirs(root):
        for f in data_frames(part):
            if f.magic < 2:
                unkeyed = sum(r.key is None for r in _peer_batch(f))
                counts[f.magic][partition_number(part)] += unkeyed
    for magic, clients in ((0, 3), (1, 4)):
        per_partition = [counts[magic][p] for p in range(4)]
        assert sum(per_partition) > 200
        assert max(per_partition) - min(per_partition) <= clients, (magic, per_partition)


def test_sequences_continue_batch_after_batch(busy):
    """Idempotent and transactional producers: per partition, producer id and epoch, each
    batch's base sequence follows on from the last one's, from 0."""
    root, _ = busy
    epochs = 0
    for part in partition_dirs(root):
        following: dict[tuple[int, int], int] = {}
        for f in data_frames(part):
            if f.producer_id < 0:
                continue
            key = (f.producer_id, f.producer_epoch)
            assert f.base_sequence == following.get(key, 0), (part.name, f.base_offset)
            following[key] = f.base_sequence + f.last_offset_delta + 1
        epochs += len(following)
    assert epochs > 10


def test_same_options_same_bytes(tmp_path):
    kwargs = dict(
        topics=["orders", "clicks"], records=80, rate=20_000, batch_size=4096, linger_ms=20
    )
    generate_log_dir(tmp_path / "a", seed=9, **kwargs)
    generate_log_dir(tmp_path / "b", seed=9, **kwargs)
    generate_log_dir(tmp_path / "c", seed=9, **{**kwargs, "linger_ms": 0})
    assert _tree(tmp_path / "a") == _tree(tmp_path / "b")
    assert _tree(tmp_path / "a") != _tree(tmp_path / "c")


def test_cli_batch_options(tmp_path, capsys):
    root = tmp_path / "small-batches"
    args = ["--topics", "clicks", "--records", "300", "--segment-bytes", "64KiB"]
    tuning = ["--batch-size", "4KiB", "--linger-ms", "50", "--rate", "100000"]
    assert main(["generate", str(root), *args, *tuning]) == 0
    options = json.loads((root / EXPECTED_FILE).read_text())["options"]
    assert (options["batch_size"], options["linger_ms"], options["rate"]) == (4096, 50, 100000)
    sizes = [f.size for part in partition_dirs(root) for f in data_frames(part) if f.magic == 2]
    plain = [
        (f.size, f.last_offset_delta)
        for part in partition_dirs(root)
        for f in data_frames(part)
        if f.magic == 2 and f.codec == 0
    ]
    assert len(sizes) > 10 and plain
    assert all(size <= 4096 or lod == 0 for size, lod in plain)
    assert statistics.median(s for s, _ in plain) > 3000
    capsys.readouterr()
    for bad in (["--linger-ms", "-1"], ["--rate", "0"], ["--batch-size", "lots"]):
        with pytest.raises(SystemExit) as exit_info:
            main(["generate", str(tmp_path / "bad"), *bad])
        assert exit_info.value.code == 2
        assert bad[0] in capsys.readouterr().err


def test_the_command_says_when_it_clamps_the_batch_size(tmp_path, capsys):
    """The producers batch at most half a segment: a larger --batch-size is taken as that,
    and the command says so (one note line on stderr), not silently."""
    args = ["--topics", "orders", "--records", "20", "--segment-bytes", "16KiB"]
    assert main(["generate", str(tmp_path / "big"), *args, "--batch-size", "16KiB"]) == 0
    err = capsys.readouterr().err
    assert "note: --batch-size 16384 is more than half of --segment-bytes 16384" in err
    assert "at most 8192 bytes" in err
    assert main(["generate", str(tmp_path / "fits"), *args, "--batch-size", "8KiB"]) == 0
    assert "note:" not in capsys.readouterr().err
