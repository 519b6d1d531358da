"""``kafka-format verify --partitioner``: keyed records sitting in a partition their key does not
hash to.

The log directories are written here with ``PartitionWriter``, each keyed record placed by the
oracle (kafka-python's ``murmur2`` with Java's ``toPositive(h) % n``), a known set of them put
elsewhere on purpose; the counts and offsets each finding should name are derived from what
the test wrote.
"""

from __future__ import annotations

import base64
import json
import random
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from kafka.partitioner import murmur2 as kafka_python_murmur2

from kafka_format.runtime.analysis.placement import MAX_PLACEMENT_EXAMPLES, PLACEMENT_KIND, show_key
from kafka_format.runtime.analysis.verify import VerifyReport, verify_paths
from kafka_format.runtime.format.codecs import Codec
from kafka_format.runtime.write.writer import Message, PartitionWriter, Producer

TOPIC = "orders"
COUNT = 5


def java_partition(key: bytes, count: int) -> int:
    return (kafka_python_murmur2(key) & 0x7FFFFFFF) % count


@dataclass
class Written:
    """What the test put in each partition: per partition, (offset, key) of the keyed records,
    how many have no key, and (offset, key, partition it hashes to) of the misplaced ones."""

    log_dir: Path
    keyed: dict[int, list[tuple[int, bytes]]] = field(default_factory=dict)
    unkeyed: dict[int, int] = field(default_factory=dict)
    misplaced: dict[int, list[tuple[int, bytes, int]]] = field(default_factory=dict)


def write_topic(
    log_dir: Path,
    *,
    topic: str = TOPIC,
    count: int = COUNT,
    misplace_every: int = 0,
    seed: int = 5,
    records: int = 400,
    hash_count: int | None = None,
) -> Written:
    """A topic of ``count`` partition directories. Each record's key is placed by the oracle
    with ``hash_count`` partitions (default ``count``); every ``misplace_every``-th keyed record
    goes to the next partition instead. Batches of 1-6 records, several segments, a mix of
    codecs and magics, records without a key, an empty key, a transaction."""
    rng = random.Random(seed)
    hash_count = hash_count or count
    writers = [
        PartitionWriter(log_dir, topic, p, segment_bytes=2048, keep_records=True)
        for p in range(count)
    ]
    written = Written(log_dir)
    pending: dict[int, list[Message]] = {p: [] for p in range(count)}
    producer = Producer(producer_id=4000)
    keyed_seen = 0
    for n in range(records):
        if n % 11 == 3:
            key = None
            partition = rng.randrange(count)
        else:
            key = b"" if n == 20 else f"customer-{rng.randrange(10**6)}".encode()
            keyed_seen += 1
            partition = java_partition(key, hash_count)
            if misplace_every and keyed_seen % misplace_every == 0:
                partition = (partition + 1) % count
        pending[partition].append(Message(key, b"v%d" % n))
        if len(pending[partition]) >= rng.randrange(1, 7):
            _flush(writers[partition], pending[partition], rng, producer)
    for p in range(count):
        if pending[p]:
            _flush(writers[p], pending[p], rng, producer)
    for p, w in enumerate(writers):
        w.close()
        data = w.records
        written.keyed[p] = [(r.offset, r.key) for r in data if r.key is not None]
        written.unkeyed[p] = sum(1 for r in data if r.key is None)
        written.misplaced[p] = [
            (r.offset, r.key, java_partition(r.key, hash_count))
            for r in data
            if r.key is not None and java_partition(r.key, hash_count) != p
        ]
    return written


def _flush(writer: PartitionWriter, messages: list[Message], rng: random.Random, producer) -> None:
    style = rng.randrange(4)
    if style == 0:
        writer.append(messages, codec=Codec.GZIP)
    elif style == 1:
        writer.append(messages, magic=1)
    elif style == 2:
        # A transaction: its commit marker is a control record, which has no place to check.
        writer.append(messages, producer=producer, transactional=True)
        writer.commit(producer)
    else:
        writer.append(messages)
    messages.clear()


def placements(report: VerifyReport) -> dict[int, object]:
    """The per-partition entries of the check, by partition number."""
    return {
        int(Path(f.file).name.rsplit("-", 1)[1]): f
        for f in report.files
        if f.kind == PLACEMENT_KIND
    }


@pytest.fixture(scope="module")
def placed(tmp_path_factory):
    """Every keyed record where the Java producer puts it."""
    return write_topic(tmp_path_factory.mktemp("placed"))


@pytest.fixture(scope="module")
def misplaced(tmp_path_factory):
    """Every 9th keyed record in the partition after its own."""
    return write_topic(tmp_path_factory.mktemp("misplaced"), misplace_every=9, seed=11)


def run_cli(*args) -> subprocess.CompletedProcess:
    proc = subprocess.run(
        [sys.executable, "-m", "kafka_format.runtime.cli", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "Traceback" not in proc.stderr + proc.stdout, proc.stderr
    return proc


# --- findings -----------------------------------------------------------------------------------


def test_correct_placement_has_no_finding(placed):
    assert not any(placed.misplaced.values())
    report = verify_paths([placed.log_dir], partitioner=True)
    assert report.ok and not [p for p in report.problems if p.check == "partitioner"]
    entries = placements(report)
    assert set(entries) == set(range(COUNT))
    for p, entry in entries.items():
        assert entry.counts == {
            "keyed": len(placed.keyed[p]),
            "unkeyed": placed.unkeyed[p],
            "misplaced": 0,
            "partitions": COUNT,
        }
    topic = report.placement[TOPIC]
    assert topic.partitions == COUNT and "orders-4" in topic.source
    assert topic.keyed == sum(len(v) for v in placed.keyed.values())
    assert topic.unkeyed == sum(placed.unkeyed.values()) > 0
    assert topic.misplaced == 0


def test_misplaced_records_are_reported(misplaced):
    report = verify_paths([misplaced.log_dir], partitioner=True)
    assert report.ok  # warnings only: a custom partitioner or an explicit partition is legal
    entries = placements(report)
    total = 0
    for p, entry in entries.items():
        wrong = misplaced.misplaced[p]
        total += len(wrong)
        assert entry.counts["keyed"] == len(misplaced.keyed[p])
        assert entry.counts["misplaced"] == len(wrong)
        if not wrong:
            assert not entry.problems
            continue
        (problem,) = entry.problems
        assert problem.severity == "warning" and problem.check == "partitioner"
        assert f"{len(wrong)} of {len(misplaced.keyed[p])} keyed records" in problem.message
        listed = [(d["offset"], base64.b64decode(d["key"]), d["expected"]) for d in problem.details]
        assert listed == wrong[:MAX_PLACEMENT_EXAMPLES]
        for offset, key, expected in listed:
            assert f"offset {offset} key {show_key(key)} -> {expected}" in problem.message
        assert all(Path(d["file"]).parent.name == f"{TOPIC}-{p}" for d in problem.details)
    assert total == report.placement[TOPIC].misplaced > 0


def test_strict_makes_them_errors(misplaced):
    report = verify_paths([misplaced.log_dir], partitioner=True, partitioner_severity="error")
    assert not report.ok
    assert {p.check for p in report.errors} == {"partitioner"}
    assert len(report.errors) == sum(1 for v in misplaced.misplaced.values() if v)


def test_without_the_option_nothing_is_checked(misplaced):
    report = verify_paths([misplaced.log_dir])
    assert report.placement is None
    assert not [f for f in report.files if f.kind == PLACEMENT_KIND]
    assert "partitioner" not in report.as_json()


# --- the partition count ------------------------------------------------------------------------


def test_single_partition_counts_its_siblings(misplaced):
    target = misplaced.log_dir / f"{TOPIC}-2"
    report = verify_paths([target], partitioner=True)
    assert set(placements(report)) == {2}
    assert report.placement[TOPIC].partitions == COUNT
    assert placements(report)[2].counts["misplaced"] == len(misplaced.misplaced[2])


def test_partial_copy_needs_the_count(tmp_path, placed):
    # A backup of partitions 0-2 only: the directories say 3, which misplaces records.
    for p in range(3):
        shutil.copytree(placed.log_dir / f"{TOPIC}-{p}", tmp_path / f"{TOPIC}-{p}")
    guessed = verify_paths([tmp_path], partitioner=True)
    assert guessed.placement[TOPIC].partitions == 3
    expected = sum(1 for p in range(3) for _, key in placed.keyed[p] if java_partition(key, 3) != p)
    assert guessed.placement[TOPIC].misplaced == expected > 0
    for given in ({TOPIC: COUNT}, COUNT, {None: COUNT}):
        report = verify_paths([tmp_path], partitions=given)
        assert report.placement[TOPIC].partitions == COUNT
        assert report.placement[TOPIC].source == "given"
        assert report.placement[TOPIC].misplaced == 0


def test_directories_across_log_dirs(tmp_path, placed):
    # JBOD: a topic's partitions spread over two log dirs given together.
    for p in range(COUNT):
        shutil.copytree(placed.log_dir / f"{TOPIC}-{p}", tmp_path / f"d{p % 2}" / f"{TOPIC}-{p}")
    report = verify_paths([tmp_path / "d0", tmp_path / "d1"], partitioner=True)
    assert report.placement[TOPIC].partitions == COUNT
    assert report.placement[TOPIC].misplaced == 0
    alone = verify_paths([tmp_path / "d0"], partitioner=True)  # orders-0, -2, -4
    assert alone.placement[TOPIC].partitions == COUNT
    assert "2 below it absent" in alone.placement[TOPIC].source


def test_beyond_the_given_count(placed):
    report = verify_paths([placed.log_dir / f"{TOPIC}-4"], partitions=4)
    (problem,) = placements(report)[4].problems
    assert placements(report)[4].counts["misplaced"] == len(placed.keyed[4])
    assert "partition 4 is beyond the 4 partitions used" in problem.message


# --- hints ----------------------------------------------------------------------------------------


def test_swapped_directories_hint(tmp_path, placed):
    for p in range(COUNT):
        name = {1: 3, 3: 1}.get(p, p)
        shutil.copytree(placed.log_dir / f"{TOPIC}-{p}", tmp_path / f"{TOPIC}-{name}")
    report = verify_paths([tmp_path], partitioner=True)
    entries = placements(report)
    assert {p for p, e in entries.items() if e.problems} == {1, 3}
    assert "all of them hash to partition 3: are these orders-3's files?" in (
        entries[1].problems[0].message
    )
    assert "are these orders-1's files?" in entries[3].problems[0].message


def test_topic_grew_hint(tmp_path):
    # Written with 3 partitions, then the topic grew to 6 (and nothing new was produced):
    # verify sees 6 directories, and partitions 0-2 hold records placed with 3.
    written = write_topic(tmp_path / "logs", count=3, records=300, seed=3)
    for p in range(3, 6):
        PartitionWriter(tmp_path / "logs", TOPIC, p).close()
    report = verify_paths([tmp_path / "logs"], partitioner=True)
    assert report.placement[TOPIC].partitions == 6
    entries = placements(report)
    for p in range(3):
        wrong = sum(1 for _, key in written.keyed[p] if java_partition(key, 6) != p)
        assert entries[p].counts["misplaced"] == wrong >= 10
        assert "all of them hash here with 3 partitions" in entries[p].problems[0].message


# --- what is and is not checked -----------------------------------------------------------------


def test_internal_topics_are_skipped(tmp_path):
    with PartitionWriter(tmp_path, "__consumer_offsets", 7) as w:
        w.append([Message(b"\x00\x01group", b"x")])
    report = verify_paths([tmp_path], partitioner=True)
    topic = report.placement["__consumer_offsets"]
    assert topic.skipped and "hashCode" in topic.skipped
    assert not placements(report) and report.ok


def test_unnamed_directory_is_a_warning(tmp_path, placed):
    shutil.copytree(placed.log_dir / f"{TOPIC}-1", tmp_path / "backup")
    report = verify_paths([tmp_path / "backup"], partitioner=True)
    problems = [p for p in report.problems if p.check == "partitioner"]
    assert len(problems) == 1 and problems[0].severity == "warning"
    assert "cannot tell the topic and partition" in problems[0].message
    assert report.ok


def test_single_log_file(misplaced):
    directory = misplaced.log_dir / f"{TOPIC}-0"
    logs = sorted(directory.glob("*.log"))
    assert len(logs) > 1
    report = verify_paths([logs[0]], partitioner=True)
    (entry,) = placements(report).values()
    assert report.placement[TOPIC].partitions == COUNT
    first_end = int(logs[1].stem)
    assert entry.counts["keyed"] == sum(1 for o, _ in misplaced.keyed[0] if o < first_end)
    assert entry.counts["misplaced"] == sum(
        1 for o, _, _ in misplaced.misplaced[0] if o < first_end
    )


def test_show_key():
    assert show_key(b"user-7") == '"user-7"'
    assert show_key(b"\x00\x01\xff") == "0x0001ff"
    assert show_key(b"") == '""'
    assert show_key(b"x" * 40) == '"' + "x" * 32 + '"... (40 bytes)'
    assert show_key(bytes(range(40))) == "0x" + bytes(range(32)).hex() + "... (40 bytes)"
    assert show_key(b"line\nbreak") == "0x" + b"line\nbreak".hex()


def test_binary_keys_are_shown_in_hex(tmp_path):
    key = b"\x00\xfe\x10binary"
    wrong = (java_partition(key, 2) + 1) % 2
    with PartitionWriter(tmp_path, TOPIC, wrong) as w:
        w.append([Message(key, b"v")])
    with PartitionWriter(tmp_path, TOPIC, 1 - wrong) as w:
        w.append([Message(None, b"v")])
    report = verify_paths([tmp_path], partitioner=True)
    (problem,) = placements(report)[wrong].problems
    assert f"key 0x{key.hex()} -> {1 - wrong}" in problem.message


# --- command line ---------------------------------------------------------------------------------


def test_cli(misplaced, placed):
    proc = run_cli("verify", "--partitioner", placed.log_dir)
    assert proc.returncode == 0, proc.stdout
    assert f"partitioner: {TOPIC}: {COUNT} partitions ({TOPIC}-{COUNT - 1} is the highest" in (
        proc.stdout
    )
    proc = run_cli("verify", "--partitioner", misplaced.log_dir)
    assert proc.returncode == 0
    wrong = [p for p, v in misplaced.misplaced.items() if v]
    lines = [line for line in proc.stdout.splitlines() if line.startswith("warning:")]
    assert len([line for line in lines if "keyed records hash to another" in line]) == len(wrong)
    total = sum(len(v) for v in misplaced.misplaced.values())
    assert f", {total} misplaced (" in proc.stdout
    proc = run_cli("verify", "--partitioner-strict", misplaced.log_dir)
    assert proc.returncode == 1
    assert proc.stdout.count("error: ") == len(wrong)


def test_cli_json(misplaced):
    proc = run_cli("verify", "--json", "--partitions", f"{TOPIC}={COUNT}", misplaced.log_dir)
    assert proc.returncode == 0
    data = json.loads(proc.stdout)
    (topic,) = data["partitioner"]
    assert topic["topic"] == TOPIC and topic["partitions"] == COUNT
    assert topic["partitionsFrom"] == "given"
    assert topic["checkedPartitions"] == list(range(COUNT))
    assert topic["misplaced"] == sum(len(v) for v in misplaced.misplaced.values())
    entries = [f for f in data["files"] if f["kind"] == PLACEMENT_KIND]
    assert len(entries) == COUNT
    for f in entries:
        p = int(f["file"].rsplit("-", 1)[1])
        assert f["counts"]["misplaced"] == len(misplaced.misplaced[p])
        for problem in f["problems"]:
            assert [d["offset"] for d in problem["details"]] == [
                o for o, _, _ in misplaced.misplaced[p][:MAX_PLACEMENT_EXAMPLES]
            ]


@pytest.mark.parametrize("bad", ["0", "orders=0", "=5", "five", "orders="])
def test_cli_bad_count(placed, bad):
    proc = run_cli("verify", "--partitions", bad, placed.log_dir)
    assert proc.returncode == 2
    assert "expected N or TOPIC=N" in proc.stderr
