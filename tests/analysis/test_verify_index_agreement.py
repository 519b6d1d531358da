"""Every reader trusts the same offset index entries of the same files.

``find`` (the partition layer), the ranges of ``dump -o`` / ``iter_records(start_offset=...)``
(``read/ranges.py``), Spark's split planning (``spark_udfs/_planning.py``) and ``verify`` each
judge an entry before using it (``files/index_lookup.py``). Here they judge the entries of a
partition compacted as Kafka's log cleaner leaves it, then of the same partition with entries
made to lie by hand, and each reader's verdicts are read off its own behaviour: whether
``find`` says it used the index, where a range starts reading, whether planning cuts there,
whether ``verify`` reports the entry.

The compacted partition comes from this package's own tooling: ``generate`` writes a
``users`` topic, ``compact`` says what one cleaning pass keeps of each batch, and
:func:`write_cleaned` lays that down as ``Cleaner.cleanInto`` does: each batch rebuilt with
its base offset and last offset delta (``MemoryRecords.filterTo``), appended a chunk at a
time, with an index entry (largest retained offset of the chunk, position where the chunk
starts) once more than ``index.interval.bytes`` went by (``LogSegment.append``).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from pathlib import Path

import pytest

import kafka_format as kf
from kafka_format.runtime.analysis.verify import verify_paths
from kafka_format.runtime.files.index_lookup import APPEND, EXACT, INSIDE, check_entry
from kafka_format.runtime.files.indexes import OffsetPosition
from kafka_format.runtime.log.compaction import compact
from kafka_format.runtime.log.compaction_model import CompactionResult
from kafka_format.runtime.log.partition import Partition
from kafka_format.runtime.read import ranges
from kafka_format.runtime.read.sources import LogInput
from kafka_format.runtime.write.generate import generate_log_dir
from kafka_format.schemas.record import RecordSpec
from kafka_format.schemas.record_batch import build_record_batch

LOG = "00000000000000000000.log"
INDEX = "00000000000000000000.index"
#: Batches per cleaner append, in turn: single rewritten batches give entries inside their
#: batch, longer chunks entries past the first batch.
CHUNKS = (1, 2, 3)
INTERVAL = 512


@dataclass(slots=True)
class Cleaned:
    directory: Path
    #: (offset, position) of each index entry, in order.
    entries: list[tuple[int, int]]
    #: (position, size, base offset) of each batch.
    batches: list[tuple[int, int, int]]
    #: Offsets of the records kept.
    offsets: list[int] = field(default_factory=list)


def _rebuilt(outcome, records) -> bytes:
    """A batch as ``MemoryRecords.filterTo`` rebuilds it: base offset, last offset delta,
    producer fields and delete horizon kept; only the records retained."""
    horizon = outcome.delete_horizon_after
    base_ts = horizon if horizon is not None else (records[0].timestamp if records else 0)
    specs = [
        RecordSpec(
            key=r.key,
            value=r.value,
            headers=[(h.key, h.value) for h in r.headers],
            offset_delta=r.offset - outcome.base_offset,
            timestamp_delta=r.timestamp - base_ts,
        )
        for r in records
    ]
    return build_record_batch(
        specs,
        base_offset=outcome.base_offset,
        base_timestamp=base_ts,
        max_timestamp=max((r.timestamp for r in records), default=-1),
        last_offset_delta=outcome.last_offset - outcome.base_offset,
        producer_id=outcome.producer_id,
        producer_epoch=outcome.producer_epoch,
        base_sequence=outcome.base_sequence,
        has_delete_horizon=horizon is not None,
    )


def write_cleaned(result: CompactionResult, directory: Path) -> Cleaned:
    """One segment as the cleaner writes what ``result`` keeps (see the module docstring)."""
    directory.mkdir(parents=True)
    records = sorted(result.records, key=lambda r: r.offset)
    kept = [b for b in result.batches if b.action != "deleted"]
    assert all(b.magic == 2 and not b.is_control for b in kept)
    built = []
    for outcome in kept:
        mine = [r for r in records if outcome.base_offset <= r.offset <= outcome.last_offset]
        built.append((outcome, mine, _rebuilt(outcome, mine)))
    log, index, times = bytearray(), [], []
    batches = []
    since_entry = 0
    largest = (-1, -1)  # maxTimestampSoFar and the offset it was seen at
    n = turn = 0
    while n < len(built):
        chunk = built[n : n + CHUNKS[turn % len(CHUNKS)]]
        n, turn = n + len(chunk), turn + 1
        position = len(log)
        for outcome, _, data in chunk:
            batches.append((len(log), len(data), outcome.base_offset))
            log += data
        # FilterResult.maxOffset: the largest offset retained in the chunk.
        max_offset = max(r.offset for _, mine, _ in chunk for r in mine)
        for outcome, mine, _ in chunk:
            stamp = max((r.timestamp for r in mine), default=-1)
            if stamp > largest[0]:
                largest = (stamp, outcome.last_offset)
        if since_entry > INTERVAL:
            index.append((max_offset, position))
            if not times or largest[0] > times[-1][0]:
                times.append(largest)
            since_entry = 0
        since_entry += len(log) - position
    if largest[0] > times[-1][0]:
        times.append(largest)  # on close: the segment's largest timestamp
    (directory / LOG).write_bytes(bytes(log))
    _write_index(directory / INDEX, index)
    (directory / "00000000000000000000.timeindex").write_bytes(
        b"".join(struct.pack(">qi", t, o) for t, o in times)
    )
    return Cleaned(directory, index, batches, [r.offset for r in records])


def _write_index(path: Path, entries: list[tuple[int, int]]) -> None:
    path.write_bytes(b"".join(struct.pack(">ii", o, p) for o, p in entries))


@pytest.fixture(scope="module")
def cleaned(tmp_path_factory) -> Cleaned:
    root = tmp_path_factory.mktemp("compacted")
    generate_log_dir(root / "src", seed=5, topics=["users"], records=600, segment_bytes=8192)
    result = compact(root / "src" / "users-0", cleanup_policy="compact")
    assert result.records_removed > result.records_kept  # a real compaction
    return write_cleaned(result, root / "clean" / "users-0")


# --- what each reader makes of an entry ------------------------------------------------------


def _find_trusts(directory: Path, offset: int) -> bool:
    found = Partition.open(directory).find_offset(offset)
    assert (found.index_note is None) == found.used_index
    return found.used_index


def _range_trusts(directory: Path, offset: int, position: int) -> bool:
    log = LogInput(str(directory / LOG), "users", 0, base_offset=0, path=directory / LOG)
    with ranges._opened(log) as buf:
        start = ranges._start_position(log, buf, offset=offset)
    assert start in (0, position)
    return start == position


def _planning_trusts(directory: Path, offset: int, position: int) -> bool:
    planning = pytest.importorskip("kafka_format.spark_udfs._planning")
    options = pytest.importorskip("kafka_format.spark_udfs._options")
    planner = planning.Planner(options.parse_options({"path": str(directory)}))
    partition = Partition.open(directory)
    try:
        return planner._boundary(partition, partition.segments[0], position, offset)
    finally:
        for source in planner._sources.values():
            source.close()


def _verify_rejects(directory: Path) -> dict[int, str]:
    """Index entry number -> what verify says of it."""
    report = verify_paths([directory])
    return {
        p.position // 8: p.message
        for p in report.problems
        if p.check == "index-entry" and p.file.endswith(".index")
    }


def _rejected_by_each(c: Cleaned) -> dict[str, set[int]]:
    found: dict[str, set[int]] = {"find": set(), "ranges": set(), "planning": set()}
    for n, (offset, position) in enumerate(c.entries):
        if not _find_trusts(c.directory, offset):
            found["find"].add(n)
        if not _range_trusts(c.directory, offset, position):
            found["ranges"].add(n)
        if not _planning_trusts(c.directory, offset, position):
            found["planning"].add(n)
    found["verify"] = set(_verify_rejects(c.directory))
    return found


# --- the cleaner's own entries ---------------------------------------------------------------


def test_the_cleaners_entries_are_trusted_by_every_reader(cleaned):
    data = memoryview((cleaned.directory / LOG).read_bytes())
    kinds = [check_entry(data, OffsetPosition(o, p), 0).kind for o, p in cleaned.entries]
    # The cases that matter are there: an offset inside its batch (a rebuilt batch that lost
    # its last records) and one past it (a chunk of several batches).
    assert INSIDE in kinds and APPEND in kinds and None not in kinds
    assert _rejected_by_each(cleaned) == {
        "find": set(),
        "ranges": set(),
        "planning": set(),
        "verify": set(),
    }
    report = verify_paths([cleaned.directory])
    assert report.ok, [p.line() for p in report.errors]
    (index,) = [f for f in report.files if f.kind == "index"]
    assert index.counts["entries_of_whole_appends"] == sum(k != EXACT for k in kinds)


def test_look_ups_through_the_cleaners_entries_find_what_was_kept(cleaned):
    kept = cleaned.offsets
    partition = Partition.open(cleaned.directory)
    for target in range(0, kept[-1] + 1, 3):
        want = next(o for o in kept if o >= target)
        found = partition.find_offset(target)
        assert found.used_index and found.record.offset == want, target
        got = [r.offset for r in kf.iter_records(cleaned.directory, start_offset=target)]
        assert got == [o for o in kept if o >= target], target


# --- entries made to lie ---------------------------------------------------------------------


def _lying(cleaned: Cleaned, tmp_path: Path) -> tuple[Cleaned, dict[int, str]]:
    """A copy of the partition with entries that lie, and a CRC broken under one entry;
    returns it and what is wrong at each entry number (those not listed hold)."""
    directory = tmp_path / "users-0"
    directory.mkdir()
    for f in cleaned.directory.iterdir():
        (directory / f.name).write_bytes(f.read_bytes())
    entries = list(cleaned.entries)
    starts = {p: base for p, _, base in cleaned.batches}
    ends = {p: p + size for p, size, _ in cleaned.batches}
    wrong: dict[int, str] = {}
    # Inside a batch: five bytes past the entry's own position.
    n = 1
    entries[n] = (entries[n][0], entries[n][1] + 5)
    wrong[n] = "no-batch"
    # An offset below the base offset of the batch at the position (yet above the entry
    # before it, so that the index stays in order): a read from there would skip records.
    n = next(i for i in range(3, len(entries) - 2) if starts[entries[i][1]] - 1 > entries[i - 1][0])
    entries[n] = (starts[entries[n][1]] - 1, entries[n][1])
    wrong[n] = "after-offset"
    # A batch whose CRC fails, under an entry: the frame is whole, the bytes are not.
    k = n + 1
    log = bytearray((directory / LOG).read_bytes())
    start = entries[k][1]
    at = bytes(log[start : ends[start]]).index(b"user-") + 6
    log[start + at] ^= 0x01  # a digit of the first key: the records still decode
    (directory / LOG).write_bytes(bytes(log))
    wrong[k] = "crc"
    # An entry that holds although Kafka would not have written it: its offset moved up to
    # just below the next entry's (a read from its position still misses nothing).
    m = k + 1
    entries[m] = (entries[m + 1][0] - 1, entries[m][1])
    # Past the end of the log.
    entries[-1] = (entries[-1][0], len(log) + 100)
    wrong[len(entries) - 1] = "past-end"
    assert [o for o, _ in entries] == sorted({o for o, _ in entries})  # still in order
    assert [p for _, p in entries] == sorted({p for _, p in entries})
    _write_index(directory / INDEX, entries)
    return Cleaned(directory, entries, cleaned.batches, cleaned.offsets), wrong


def test_lying_entries_are_set_aside_by_every_reader(cleaned, tmp_path):
    lying, wrong = _lying(cleaned, tmp_path)
    data = memoryview((lying.directory / LOG).read_bytes())
    faults = {
        n: check_entry(data, OffsetPosition(o, p), 0).fault
        for n, (o, p) in enumerate(lying.entries)
    }
    assert {n: f for n, f in faults.items() if f is not None} == wrong
    expected = set(wrong)
    assert _rejected_by_each(lying) == {
        "find": expected,
        "ranges": expected,
        "planning": expected,
        "verify": expected,
    }
    said = _verify_rejects(lying.directory)
    after = next(n for n, f in wrong.items() if f == "after-offset")
    assert said[after].startswith("Mismatch: index offset")
    crc = next(n for n, f in wrong.items() if f == "crc")
    assert "CRC does not hold" in said[crc]
    report = verify_paths([lying.directory])
    # The damaged batch is the log's error; its entry is only a warning (readers set it aside).
    (warned,) = [p for p in report.warnings if p.check == "index-entry"]
    assert warned.position == crc * 8
    assert {p.check for p in report.errors if p.file.endswith(".log")} == {"crc"}
    # The readers still read right, from the segment's start where an entry was set aside
    # (the damaged batch's records skipped, and reported).
    slot = next(i for i, (p, _, _) in enumerate(lying.batches) if p == lying.entries[crc][1])
    lost = range(lying.batches[slot][2], lying.batches[slot + 1][2])
    for n in sorted(expected - {crc}):
        offset = lying.entries[n][0]
        report = kf.Report()
        got = kf.iter_records(lying.directory, start_offset=offset, errors="skip", report=report)
        want = [o for o in lying.offsets if o >= offset and o not in lost]
        assert [r.offset for r in got] == want, n
