"""Compaction as Kafka's log cleaner does it (runtime/compaction.py, the ``compact`` command).

Three kinds of oracle:

* scenarios of Kafka's own ``LogCleanerTest`` / ``LogCleanerManagerTest``, rebuilt with
  :class:`PartitionWriter`, asserting the offsets, keys and batches Kafka's tests assert;
  multi-pass ones re-write the log a pass leaves (``_rewrite``) and clean it again;
* a dict model written here from the rules, on random logs (hypothesis): keys with repeats,
  tombstones with and without delete horizons, null keys, committed / aborted / open
  transactions, idempotent and v1 appends, rolls, a cleaner checkpoint;
* the dirty ratio recomputed from file sizes and the checkpoint file's text.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from bisect import bisect_right
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kafka_format.runtime.errors import KafkaFormatError
from kafka_format.runtime.files.names import FileKind, segment_file_name
from kafka_format.runtime.format.codecs import Codec
from kafka_format.runtime.log.compaction import (
    LONG_MAX,
    CleanerConfig,
    CompactionResult,
    cleaner_facts,
    compact,
    dirty_ratio,
)
from kafka_format.runtime.log.compaction_stream import compact_stream
from kafka_format.runtime.write.generate import generate_log_dir
from kafka_format.runtime.write.writer import Message, PartitionWriter, Producer
from kafka_format.schemas.control_record_key import ControlRecordType, build_control_record_key
from kafka_format.schemas.end_txn_marker import build_end_txn_marker
from kafka_format.schemas.record import RecordSpec
from kafka_format.schemas.record_batch import build_record_batch

RETENTION = 86_400_000
#: LogCleanerTest's largeTimestamp.
LARGE = LONG_MAX - RETENTION - 1
#: Kafka's tests never expire producers (nothing calls removeExpiredProducers).
KAFKA_TEST = CleanerConfig(producer_id_expiration_ms=None)
#: Kafka's tests clean a cleaned log again from its new checkpoint (the active segment) with
#: a stub offset map (FakeOffsetMap) whose clear() keeps the last offset, so the pass still
#: rewrites the log, with an empty map. A real cleaner skips an empty dirty range; the same
#: rewrite here is a pass from offset 0, whose map changes nothing in a deduplicated log.
RECLEAN = 0


# --- Kafka's LogCleanerTest scenarios --------------------------------------------------------


class KafkaLog:
    """LogCleanerTest's helpers over a PartitionWriter: keys are ints written as text."""

    def __init__(self, root: Path, clock: list[int] | None = None) -> None:
        self.clock = clock if clock is not None else [1_700_000_000_000]
        self.w = PartitionWriter(root, "test", 0, clock=lambda: self.clock[0])
        self.sequences: dict[int, int] = {}

    def txn(self, pid: int, keys: list[int], *, epoch: int = 0, sequence: int | None = None):
        """appendTransactionalAsLeader(log, pid, epoch)(keys)."""
        self.w.append(
            [Message(str(k).encode(), str(k).encode()) for k in keys],
            producer=Producer(pid, epoch),
            transactional=True,
            base_sequence=sequence,
        )

    def record(self, key: int, value: int, *, pid: int | None = None, sequence: int = 0):
        """record(key, value[, producerId, producerEpoch = 0, sequence])."""
        self.w.append(
            [Message(str(key).encode(), str(value).encode())],
            producer=None if pid is None else Producer(pid, 0),
            base_sequence=None if pid is None else sequence,
        )

    def commit(self, pid: int, epoch: int = 0) -> None:
        self.w.commit(Producer(pid, epoch))

    def abort(self, pid: int, epoch: int = 0) -> None:
        self.w.abort(Producer(pid, epoch))

    def roll(self) -> None:
        self.w.roll()

    def close(self) -> Path:
        self.w.close()
        return self.w.path


def keys_in_log(r: CompactionResult) -> list[int]:
    """LogTestUtils.keysInLog: keys of data records with a key and a value."""
    return [int(x.key) for x in r.records if x.key is not None and x.value is not None]


def offsets_in_log(r: CompactionResult) -> list[int]:
    """offsetsInLog: offsets of every record (markers too) with a key and a value."""
    data = [x.offset for x in r.records if x.key is not None and x.value is not None]
    markers = [b.base_offset for b in r.batches if b.is_control and b.records_kept]
    return sorted(data + markers)


def last_offsets_per_batch(r: CompactionResult) -> list[int]:
    return [b.last_offset for b in r.batches if b.action != "deleted"]


def clean(path: Path, now: int, first_dirty: int = 0) -> CompactionResult:
    """cleaner.doClean(LogToClean(tp, log, first_dirty, activeSegment.baseOffset), now)."""
    result = compact(path, now_ms=now, config=KAFKA_TEST, first_dirty_offset=first_dirty)
    assert_streamed_same(
        result, path, now_ms=now, config=KAFKA_TEST, first_dirty_offset=first_dirty
    )
    return result


def assert_streamed_same(result: CompactionResult, path: Path, **options) -> None:
    """The streamed pass (Arrow columns, counts, sinks) decides every record and batch as
    ``compact`` (Record objects) does."""
    kept: list[int] = []
    removed: list[tuple[int, str]] = []
    streamed = compact_stream(
        path,
        on_kept=lambda rows: kept.extend(rows.column("offset").to_pylist()),
        on_removed=lambda rows, why: removed.extend(
            zip(rows.column("offset").to_pylist(), why, strict=True)
        ),
        **options,
    )
    assert streamed.batches == result.batches
    assert kept == [r.offset for r in result.records] and streamed.records_kept == len(kept)
    assert removed == [(x.record.offset, x.reason) for x in result.removed]
    assert streamed.removed_by_reason() == result.removed_by_reason()
    assert (streamed.markers_kept, streamed.markers_removed) == (
        result.markers_kept,
        result.markers_removed,
    )
    assert [(r.offset, r.timestamp, r.value) for r in streamed.null_key_records] == [
        (r.offset, r.timestamp, r.value) for r in result.null_key_records
    ]
    assert streamed.warnings == result.warnings and streamed.plan == result.plan


def _rewrite(result: CompactionResult, dest_root: Path) -> Path:
    """The partition a pass leaves (v2 only): each cleaning group one segment, the other
    segments as they were, batches as ``filterTo`` writes them."""
    plan = result.plan
    dest = dest_root / plan.path.name
    dest.mkdir(parents=True)
    data = sorted(result.records, key=lambda r: r.offset)
    offsets = [r.offset for r in data]
    out: dict[int, list[bytes]] = {}
    bases = [s.base_offset for s in plan.segments]
    for s in plan.segments:
        out.setdefault(plan.groups[s.group][0] if s.group is not None else s.base_offset, [])
    for b in result.batches:
        assert b.magic == 2
        segment = plan.segments[b.segment]
        target = plan.groups[segment.group][0] if segment.group is not None else bases[b.segment]
        if b.action == "deleted":
            continue
        if b.is_control:
            kind = (
                ControlRecordType.commit if b.control_type == "COMMIT" else ControlRecordType.abort
            )
            records = [(b.base_offset, build_control_record_key(kind), build_end_txn_marker(0))]
            records = records if b.records_kept else []
            first_ts = b.max_timestamp
        else:
            lo, hi = bisect_right(offsets, b.base_offset - 1), bisect_right(offsets, b.last_offset)
            records = [(r.offset, r.key, r.value) for r in data[lo:hi]]
            first_ts = data[lo].timestamp if records else b.max_timestamp
        horizon = b.delete_horizon_after
        base_ts = horizon if horizon is not None else (first_ts if records else -1)
        specs = [
            RecordSpec(key=k, value=v, offset_delta=o - b.base_offset, timestamp_delta=0)
            for o, k, v in records
        ]
        out[target].append(
            build_record_batch(
                specs,
                base_offset=b.base_offset,
                base_timestamp=base_ts,
                max_timestamp=b.max_timestamp,
                last_offset_delta=b.last_offset - b.base_offset,
                producer_id=b.producer_id,
                producer_epoch=b.producer_epoch,
                base_sequence=b.base_sequence,
                is_transactional=b.is_transactional,
                is_control=b.is_control,
                has_delete_horizon=horizon is not None,
            )
        )
    for base, batches in out.items():
        (dest / segment_file_name(base, FileKind.LOG)).write_bytes(b"".join(batches))
    return dest


def two_pass(path: Path, tmp: Path, now: int, first_dirty: int = 0) -> CompactionResult:
    """runTwoPassClean: clean at now, then the result again at now + retention + 1."""
    first = clean(path, now, first_dirty)
    again = _rewrite(first, tmp / f"pass-{now}-{first_dirty}-{len(list(tmp.iterdir()))}")
    return clean(again, now + RETENTION + 1, first_dirty)


def test_basic_transaction_aware_cleaning(tmp_path):
    log = KafkaLog(tmp_path)
    log.txn(1, [1, 2])
    log.txn(2, [2, 3])
    log.txn(1, [3, 4])
    log.abort(1)
    log.commit(2)
    log.txn(1, [2])
    log.commit(1)
    log.roll()
    r = clean(log.close(), LARGE)
    assert keys_in_log(r) == [3, 2]
    assert offsets_in_log(r) == [3, 6, 7, 8, 9]
    assert r.removed_by_reason() == {"aborted": 4, "superseded": 1}


def test_commit_marker_removal(tmp_path):
    log = KafkaLog(tmp_path)
    log.txn(1, [1])
    log.txn(1, [2, 3])
    log.commit(1)
    log.txn(1, [2])
    log.commit(1)
    log.roll()
    r = clean(log.close(), LARGE)
    # cannot remove the marker in this pass because there are still valid records
    assert keys_in_log(r) == [1, 3, 2]
    assert offsets_in_log(r) == [0, 2, 3, 4, 5]


def test_deleted_batches_with_no_messages_read(tmp_path):
    log = KafkaLog(tmp_path)
    log.txn(1, [1])
    log.abort(1)
    log.txn(1, [2])
    log.txn(1, [2])
    log.commit(1)
    log.roll()
    path = log.close()
    r = clean(path, LARGE)
    assert keys_in_log(r) == [2]
    assert offsets_in_log(r) == [1, 3, 4]
    # the abort marker stays while its transaction's data is read in the pass
    marker = next(b for b in r.batches if b.base_offset == 1)
    assert (marker.action, marker.delete_horizon_after) == ("kept", None)
    # cleaned again, its data is gone: the marker gets a delete horizon, then goes
    r2 = two_pass(_rewrite(r, tmp_path / "first"), tmp_path, LARGE)
    assert keys_in_log(r2) == [2]
    assert offsets_in_log(r2) == [3, 4]


def test_commit_marker_retention_with_empty_batch(tmp_path):
    log = KafkaLog(tmp_path)
    log.txn(1, [2, 3])  # offsets 0, 1
    log.roll()
    log.txn(2, [2, 3])  # offsets 2, 3
    log.commit(2)  # 4
    log.roll()
    log.record(2, 2)  # 5
    log.record(3, 3)  # 6
    log.commit(1)  # 7
    log.roll()
    path = log.close()
    r = clean(path, LARGE)
    assert keys_in_log(r) == [2, 3]
    assert offsets_in_log(r) == [4, 5, 6, 7]
    assert last_offsets_per_batch(r) == [1, 3, 4, 5, 6, 7]
    emptied = [b.last_offset for b in r.batches if b.action == "emptied"]
    assert emptied == [1, 3]
    # the empty batches remain if cleaned again: they hold their producers' last sequence
    again = clean(_rewrite(r, tmp_path / "second"), LARGE, RECLEAN)
    assert offsets_in_log(again) == [4, 5, 6, 7]
    assert last_offsets_per_batch(again) == [1, 3, 4, 5, 6, 7]


def test_clean_empty_control_batch(tmp_path):
    log = KafkaLog(tmp_path)
    log.commit(1)  # a marker with no transaction data: offset 0
    log.record(2, 2)
    log.record(3, 3)
    log.roll()
    r = two_pass(log.close(), tmp_path, LARGE)
    # the marker's record goes, its batch stays (empty) for the producer's epoch
    assert keys_in_log(r) == [2, 3]
    assert offsets_in_log(r) == [1, 2]
    assert last_offsets_per_batch(r) == [0, 1, 2]


def test_committed_transaction_spanning_segments(tmp_path):
    log = KafkaLog(tmp_path)
    log.txn(1, [1])
    log.roll()
    log.commit(1)
    log.roll()
    r = two_pass(log.close(), tmp_path, LARGE)
    assert offsets_in_log(r) == [0, 1]
    assert last_offsets_per_batch(r) == [0, 1]


def test_aborted_transaction_spanning_segments(tmp_path):
    log = KafkaLog(tmp_path)
    log.txn(1, [1])
    log.roll()
    log.abort(1)
    log.roll()
    path = log.close()
    r = clean(path, LARGE)
    # the batch stays (empty) as the producer's last; the marker while its data is seen
    assert offsets_in_log(r) == [1]
    assert last_offsets_per_batch(r) == [0, 1]
    again = clean(_rewrite(r, tmp_path / "again"), LONG_MAX)
    assert offsets_in_log(again) == [1]
    assert last_offsets_per_batch(again) == [0, 1]


def test_abort_marker_removal(tmp_path):
    log = KafkaLog(tmp_path)
    log.txn(1, [1])
    log.txn(1, [2, 3])
    log.abort(1)
    log.txn(1, [3])
    log.commit(1)
    log.roll()
    path = log.close()
    r = clean(path, LARGE)
    assert keys_in_log(r) == [3]
    assert offsets_in_log(r) == [3, 4, 5]
    r2 = two_pass(_rewrite(r, tmp_path / "first"), tmp_path, LARGE, RECLEAN)
    assert keys_in_log(r2) == [3]
    assert offsets_in_log(r2) == [4, 5]


def test_empty_batch_removal_with_sequence_reuse(tmp_path):
    log = KafkaLog(tmp_path)
    log.txn(1, [1], sequence=0)
    log.commit(1)
    log.txn(1, [2], sequence=0)  # the group coordinator starts every batch at sequence 0
    log.commit(1)
    log.record(1, 1)
    log.record(2, 1)
    log.roll()
    path = log.close()
    r = clean(path, LARGE)
    assert offsets_in_log(r) == [1, 3, 4, 5]
    assert last_offsets_per_batch(r) == [1, 2, 3, 4, 5]
    r2 = two_pass(_rewrite(r, tmp_path / "first"), tmp_path, LARGE)
    assert offsets_in_log(r2) == [3, 4, 5]
    assert last_offsets_per_batch(r2) == [2, 3, 4, 5]


def test_abort_marker_retention_with_empty_batch(tmp_path):
    clock = [1_700_000_000_000]
    log = KafkaLog(tmp_path, clock)
    log.txn(1, [2, 3])  # batch last offset 1
    log.abort(1)
    log.roll()
    path = log.close()
    r = clean(path, LARGE)
    assert keys_in_log(r) == []
    assert offsets_in_log(r) == [2]  # the abort marker is kept
    assert last_offsets_per_batch(r) == [1, 2]  # the empty batch is kept
    r2 = two_pass(_rewrite(r, tmp_path / "first"), tmp_path, LARGE, RECLEAN)
    assert offsets_in_log(r2) == [2]
    assert last_offsets_per_batch(r2) == [1, 2]


def test_cleaner_retains_producer_last_sequence(tmp_path):
    log = KafkaLog(tmp_path)
    log.record(0, 0)  # 0
    log.record(0, 1, pid=1, sequence=0)  # 1
    log.record(0, 2, pid=2, sequence=0)  # 2
    log.record(0, 3, pid=3, sequence=0)  # 3
    log.record(1, 1, pid=2, sequence=1)  # 4
    log.roll()
    r = clean(log.close(), LARGE)
    assert last_offsets_per_batch(r) == [1, 3, 4]
    last_sequences = {
        b.producer_id: b.base_sequence + b.last_offset - b.base_offset
        for b in r.batches
        if b.action != "deleted" and not b.is_control and b.producer_id >= 0
    }
    assert last_sequences == {1: 0, 2: 1, 3: 0}
    assert keys_in_log(r) == [0, 1]
    assert offsets_in_log(r) == [3, 4]


def test_cleaner_retains_last_sequence_even_if_transaction_aborted(tmp_path):
    log = KafkaLog(tmp_path)
    log.txn(1, [1])
    log.txn(1, [2, 3])
    log.abort(1)
    log.roll()
    r = clean(log.close(), LARGE)
    assert last_offsets_per_batch(r) == [2, 3]
    assert keys_in_log(r) == []
    assert offsets_in_log(r) == [3]


def test_keys_conflicting_with_marker_keys(tmp_path):
    log = KafkaLog(tmp_path)
    log.txn(1, [1])
    log.commit(1)
    commit_key = build_control_record_key(ControlRecordType.commit)
    log.w.append([Message(commit_key, b"foo")], producer=Producer(2), transactional=True)
    log.commit(2)
    log.roll()
    r = clean(log.close(), LARGE)
    assert last_offsets_per_batch(r) == [0, 1, 2, 3]
    assert offsets_in_log(r) == [0, 1, 2, 3]


def test_undecided_transactional_data_not_cleanable(tmp_path):
    """LogCleanerManagerTest.testUndecidedTransactionalDataNotCleanable."""
    lag = 60 * 60 * 1000
    config = CleanerConfig(min_compaction_lag_ms=lag)
    clock = [1_700_000_000_000]
    w = PartitionWriter(tmp_path, "test", 0, clock=lambda: clock[0])
    p = Producer(15)
    w.append([Message(b"1", b"a"), Message(b"2", b"b")], producer=p, transactional=True)
    w.append([Message(b"3", b"c")], producer=p, transactional=True)
    w.roll()
    clock[0] += lag + 1
    plan = dirty_ratio(w.path, now_ms=clock[0], config=config, first_dirty_offset=0)
    assert (plan.first_dirty_offset, plan.first_uncleanable_offset) == (0, 0)
    assert plan.uncleanable_reasons == ["last stable offset"]
    w.abort(p)
    w.roll()
    plan = dirty_ratio(w.path, now_ms=clock[0], config=config, first_dirty_offset=0)
    assert (plan.first_dirty_offset, plan.first_uncleanable_offset) == (0, 3)
    assert plan.uncleanable_reasons == ["min.compaction.lag.ms"]
    clock[0] += lag + 1
    plan = dirty_ratio(w.path, now_ms=clock[0], config=config, first_dirty_offset=0)
    assert (plan.first_dirty_offset, plan.first_uncleanable_offset) == (0, 4)
    w.close()


def test_log_to_clean_with_uncleanable_section(tmp_path):
    """LogCleanerTest.testLogToCleanWithUncleanableSection: segments [0,1] clean, [2,3]
    cleanable, [4,5] uncleanable (here through min.compaction.lag.ms)."""
    clock = [1_700_000_000_000]
    w = PartitionWriter(tmp_path, "test", 0, clock=lambda: clock[0])
    for i in range(6):
        clock[0] += 3_600_000 if i == 4 else 1
        w.append([Message(b"1", bytes(25))])
        w.roll()
    w.close()
    segs = w.segments
    config = CleanerConfig(min_compaction_lag_ms=1_800_000)
    plan = dirty_ratio(w.path, now_ms=clock[0] + 1, config=config, first_dirty_offset=segs[2])
    sizes = [(w.path / segment_file_name(b, FileKind.LOG)).stat().st_size for b in segs]
    assert plan.first_uncleanable_offset == segs[4]
    assert plan.clean_bytes == sum(sizes[:2])
    assert plan.cleanable_bytes == sum(sizes[2:4])
    assert plan.total_bytes == sum(sizes[:4])
    assert plan.ratio == pytest.approx(sum(sizes[2:4]) / sum(sizes[:4]))
    roles = [s.role for s in plan.segments]
    assert roles == ["clean", "clean", "dirty", "dirty", "uncleanable", "uncleanable", "active"]


def test_log_to_clean_excludes_the_active_segment(tmp_path):
    """LogCleanerTest.testLogToClean: total bytes are those of every segment but the active."""
    w = PartitionWriter(tmp_path, "test", 0, segment_bytes=100)
    for _ in range(6):
        w.append([Message(b"1", bytes(25))])
    w.close()
    active = w.segments[-1]
    plan = dirty_ratio(w.path, now_ms=0, first_dirty_offset=active)
    every = sum(p.stat().st_size for p in w.path.glob("*.log"))
    active_size = (w.path / segment_file_name(active, FileKind.LOG)).stat().st_size
    assert len(w.segments) == 6
    assert plan.total_bytes == every - active_size


# --- the legacy tombstone rule and producer expiry -------------------------------------------


def test_legacy_tombstones_follow_segment_mtimes(tmp_path):
    w = PartitionWriter(tmp_path, "legacy", 0, keep_records=True)
    w.append([Message(b"a", b"1"), Message(b"b", None)], magic=1)  # segment 0: tombstone b
    w.roll()
    w.append([Message(b"c", b"2")], magic=1)  # segment 2
    w.roll()
    w.append([Message(b"d", None)], magic=1)  # segment 3: tombstone d
    w.roll()
    w.close()
    seg0, seg2, seg3 = (w.path / segment_file_name(b, FileKind.LOG) for b in w.segments[:3])
    day = RETENTION / 1000
    # the last clean segment (below the first dirty offset 3) is two days newer than
    # segment 0, one day older than segment 3: horizon = mtime(seg2) - delete.retention.ms
    base = 1_700_000_000
    os.utime(seg0, (base, base))
    os.utime(seg2, (base + 2 * day + 10, base + 2 * day + 10))
    os.utime(seg3, (base + 3 * day, base + 3 * day))
    r = compact(w.path, now_ms=0, first_dirty_offset=3)
    gone = {x.record.offset: x.reason for x in r.removed}
    assert gone == {1: "tombstone"}  # segment 0 is older than the horizon, segment 3 is not
    assert [x.offset for x in r.records] == [0, 2, 3]


def test_expired_producer_batch_is_not_kept_empty(tmp_path):
    clock = [1_700_000_000_000]
    w = PartitionWriter(tmp_path, "idle", 0, clock=lambda: clock[0])
    w.append([Message(b"k", b"old")], producer=Producer(7))
    w.append([Message(b"k", b"new")])
    w.roll()
    w.close()
    recent = compact(w.path, now_ms=clock[0] + 1000)
    stale = compact(w.path, now_ms=clock[0] + RETENTION + 1)
    assert [b.action for b in recent.batches][:2] == ["emptied", "kept"]
    assert [b.action for b in stale.batches][:2] == ["deleted", "kept"]
    assert [x.value for x in recent.records] == [x.value for x in stale.records] == [b"new"]


def test_null_keys_dropped_or_kept(tmp_path):
    w = PartitionWriter(tmp_path, "mixed", 0)
    w.append([Message(None, b"x"), Message(b"k", b"1"), Message(None, b"y"), Message(b"k", b"2")])
    w.roll()
    w.close()
    dropped = compact(w.path, now_ms=0)
    kept = compact(w.path, now_ms=0, null_keys="keep")
    assert [r.offset for r in dropped.null_key_records] == [0, 2]
    assert [r.offset for r in dropped.records] == [3]
    assert {x.record.offset: x.reason for x in dropped.removed} == {
        0: "null key",
        1: "superseded",
        2: "null key",
    }
    assert [r.offset for r in kept.records] == [0, 2, 3]
    with pytest.raises(ValueError):
        compact(w.path, null_keys="maybe")


def test_only_if_due_and_ratio_threshold(tmp_path):
    w = PartitionWriter(tmp_path, "t", 0)
    w.append([Message(b"k", b"1"), Message(b"k", b"2")])
    w.roll()
    w.append([Message(b"k", b"3")])
    w.close()
    (tmp_path / "cleaner-offset-checkpoint").write_text("0\n1\nt 0 0\n")
    plan = dirty_ratio(w.path, now_ms=0, config=CleanerConfig(min_cleanable_dirty_ratio=1.0))
    assert plan.ratio == 1.0 and not plan.would_clean  # ratio must exceed the minimum
    r = compact(
        w.path, now_ms=0, config=CleanerConfig(min_cleanable_dirty_ratio=1.0), only_if_due=True
    )
    assert [x.offset for x in r.records] == [0, 1, 2] and not r.removed
    forced = compact(w.path, now_ms=0, config=CleanerConfig(min_cleanable_dirty_ratio=1.0))
    assert [x.offset for x in forced.records] == [1, 2]


def test_max_compaction_lag_forces_cleaning(tmp_path):
    clock = [1_700_000_000_000]
    w = PartitionWriter(tmp_path, "t", 0, clock=lambda: clock[0])
    w.append([Message(b"a", b"1")])
    w.roll()
    clock[0] += 10_000
    w.append([Message(b"a", b"2")] * 50)
    w.roll()
    w.close()
    # the first segment is clean: the ratio is small, but its dirty successor is overdue
    first_dirty = w.segments[1]
    config = CleanerConfig(max_compaction_lag_ms=5_000, min_cleanable_dirty_ratio=0.99)
    plan = dirty_ratio(w.path, now_ms=clock[0] + 6_000, config=config, first_dirty_offset=0)
    assert plan.compaction_delay_ms == 11_000 and plan.would_clean
    plan = dirty_ratio(
        w.path, now_ms=clock[0] + 6_000, config=config, first_dirty_offset=first_dirty
    )
    assert plan.compaction_delay_ms == 1_000 and plan.would_clean
    plan = dirty_ratio(
        w.path, now_ms=clock[0] + 4_000, config=config, first_dirty_offset=first_dirty
    )
    assert plan.compaction_delay_ms == 0 and not plan.would_clean


# --- an independent dict model on random logs ------------------------------------------------

NOW = 1_800_000_000_000
KEYS = [b"k0", b"k1", b"k2", b"k3", None]

record_st = st.tuples(
    st.sampled_from(KEYS), st.one_of(st.none(), st.binary(min_size=1, max_size=3))
)
records_st = st.lists(record_st, min_size=1, max_size=4)
horizon_st = st.sampled_from([None, NOW - 1, NOW, NOW + 1])
op_st = st.one_of(
    st.tuples(st.just("plain"), records_st, horizon_st, st.sampled_from([Codec.NONE, Codec.LZ4])),
    st.tuples(st.just("v1"), records_st),
    st.tuples(st.just("idempotent"), records_st, horizon_st),
    st.tuples(st.just("txn"), st.sampled_from([100, 101]), records_st),
    st.tuples(st.just("end"), st.sampled_from([100, 101]), st.booleans()),
    st.tuples(st.just("roll")),
)


def _write(root: Path, ops) -> tuple[PartitionWriter, dict[int, int | None]]:
    """Plays ``ops``; returns the writer and each record offset's batch delete horizon."""
    w = PartitionWriter(root, "model", 0, keep_records=True, segment_bytes=400)
    horizons: dict[int, int | None] = {}
    open_txns: set[int] = set()
    for op in ops:
        kind = op[0]
        if kind == "roll":
            w.roll()
            continue
        if kind == "end":
            if op[1] in open_txns:
                w.end_transaction(Producer(op[1]), commit=op[2], coordinator_epoch=0)
                open_txns.discard(op[1])
            continue
        records = op[2] if kind == "txn" else op[1]
        messages = [Message(k, v) for k, v in records]
        horizon = op[2] if kind in ("plain", "idempotent") else None
        if kind == "plain":
            got = w.append(messages, delete_horizon_ms=horizon, codec=op[3])
        elif kind == "v1":
            got = w.append(messages, magic=1)
        elif kind == "idempotent":
            got = w.append(messages, producer=Producer(200), delete_horizon_ms=horizon)
        else:
            got = w.append(messages, producer=Producer(op[1]), transactional=True)
            open_txns.add(op[1])
        for offset in range(got.base_offset, got.last_offset + 1):
            horizons[offset] = horizon
    w.roll()
    w.close()
    return w, horizons


def _model(w: PartitionWriter, horizons, checkpoint: int, now: int):
    """What survives, by the rules, over the writer's own record of what it wrote."""
    records = sorted(w.records, key=lambda r: r.offset)
    bases = w.segments
    open_firsts = [r.txn.first_offset for r in records if r.transaction_outcome == "open"]
    bound = min([*open_firsts, w.next_offset, bases[-1]])
    bound = max(bound, checkpoint)
    holding = [b for b in bases if b <= bound]
    first_uncleanable = bases[-1] if bound >= bases[-1] else holding[-1]
    if checkpoint >= first_uncleanable:
        return [r.offset for r in records], {}
    last: dict[bytes, int] = {}
    for r in records:
        dirty = checkpoint <= r.offset < first_uncleanable
        if dirty and r.key is not None and r.transaction_outcome != "abort":
            last[r.key] = r.offset
    kept, removed = [], {}
    for r in records:
        reason = None
        if r.offset < first_uncleanable:
            horizon = horizons[r.offset]
            if r.transaction_outcome == "abort":
                reason = "aborted"
            elif r.key is None:
                reason = "null key"
            elif r.offset < last.get(r.key, -1):
                reason = "superseded"
            elif r.value is None and horizon is not None and horizon <= now:
                reason = "tombstone"
        if reason is None:
            kept.append(r.offset)
        else:
            removed[r.offset] = reason
    return kept, removed


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    ops=st.lists(op_st, min_size=1, max_size=25), where=st.floats(0, 1), shift=st.integers(-1, 1)
)
def test_matches_dict_model(ops, where, shift):
    with tempfile.TemporaryDirectory() as tmp:
        w, horizons = _write(Path(tmp), ops)
        checkpoint = int(where * w.next_offset)
        now = NOW + shift
        result = compact(w.path, now_ms=now, first_dirty_offset=checkpoint)
        assert_streamed_same(result, w.path, now_ms=now, first_dirty_offset=checkpoint)
        kept, removed = _model(w, horizons, checkpoint, now)
        assert [r.offset for r in result.records] == kept
        assert {x.record.offset: x.reason for x in result.removed} == removed
        assert [r.offset for r in result.null_key_records] == [
            r.offset for r in sorted(w.records, key=lambda r: r.offset) if r.key is None
        ]
        # delete horizons: as written, and set on a cleaned v2 batch that keeps a tombstone
        kept_offsets = {r.offset: r for r in result.records}
        for b in result.batches:
            if b.is_control or b.magic < 2:
                continue
            assert b.delete_horizon_before == horizons[b.base_offset]
            keeps_tombstone = any(
                kept_offsets[o].value is None
                for o in range(b.base_offset, b.last_offset + 1)
                if o in kept_offsets
            )
            if b.action == "emptied":  # writeEmptyHeader writes no horizon
                assert b.delete_horizon_after is None
            elif b.action == "not cleaned" or b.delete_horizon_before is not None:
                assert b.delete_horizon_after == b.delete_horizon_before
            elif keeps_tombstone:
                assert (b.action, b.delete_horizon_after) == ("rewritten", now + RETENTION)
            else:
                assert b.delete_horizon_after is None
        # the batch flags the Spark transformation uses say the same about aborted data
        facts = cleaner_facts(w.path, now_ms=now, first_dirty_offset=checkpoint)
        aborted = {o for o, why in removed.items() if why == "aborted"}
        flagged = {r.offset for r in w.records if facts.flags_at(r.offset) & 1}
        assert flagged & {r.offset for r in w.records if r.offset < (facts.clean_end or 0)} == (
            aborted
        )


def test_model_sees_every_rule(tmp_path):
    """A fixed log where each removal reason occurs, as a check on the property's reach."""
    ops = [
        ("plain", [(b"k0", b"a"), (b"k1", None)], NOW - 1, Codec.NONE),
        ("txn", 100, [(b"k2", b"x")]),
        ("end", 100, False),
        ("plain", [(None, b"n")], None, Codec.NONE),
        ("roll",),
        ("plain", [(b"k0", b"b")], None, Codec.NONE),
    ]
    w, horizons = _write(tmp_path, ops)
    result = compact(w.path, now_ms=NOW, first_dirty_offset=0)
    kept, removed = _model(w, horizons, 0, NOW)
    assert sorted(set(removed.values())) == ["aborted", "null key", "superseded", "tombstone"]
    assert [r.offset for r in result.records] == kept
    assert_streamed_same(result, w.path, now_ms=NOW, first_dirty_offset=0)
    assert_streamed_same(
        compact(w.path, now_ms=NOW, first_dirty_offset=0, null_keys="keep"),
        w.path,
        now_ms=NOW,
        first_dirty_offset=0,
        null_keys="keep",
    )


# --- dirty ratio on a generated log dir with a cleaner-offset-checkpoint --------------------


@pytest.fixture(scope="module")
def generated(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("gen") / "logs"
    generate_log_dir(root, seed=11, topics=["users", "orders"], records=900, segment_bytes=8192)
    return root


def _checkpoint_entries(path: Path) -> dict[tuple[str, int], int]:
    lines = path.read_text().splitlines()
    out = {}
    for line in lines[2:]:
        topic, partition, offset = line.split()
        out[(topic, int(partition))] = int(offset)
    return out


def _segment_sizes(directory: Path) -> list[tuple[int, int]]:
    return sorted((int(p.name.split(".")[0]), p.stat().st_size) for p in directory.glob("*.log"))


def test_dirty_ratio_from_checkpoint(generated):
    entries = _checkpoint_entries(generated / "cleaner-offset-checkpoint")
    checkpoint = entries[("users", 0)]
    segments = _segment_sizes(generated / "users-0")
    active = segments[-1][0]
    assert checkpoint < active, "the generated log should have dirty closed segments"
    holding = max(b for b, _ in segments if b <= checkpoint)
    clean = sum(size for b, size in segments if b < checkpoint)
    dirty = sum(size for b, size in segments if holding <= b < active)
    plan = dirty_ratio(generated / "users-0", now_ms=NOW)
    assert plan.checkpoint == checkpoint == plan.first_dirty_offset
    assert plan.first_uncleanable_offset == active
    assert (plan.clean_bytes, plan.cleanable_bytes) == (clean, dirty)
    assert plan.ratio == pytest.approx(dirty / (clean + dirty))
    assert plan.would_clean == (dirty / (clean + dirty) > 0.5)
    assert [s.role for s in plan.segments].count("active") == 1
    # every segment below the first uncleanable offset is rewritten, in order
    assert [b for g in plan.groups for b in g] == [b for b, _ in segments if b < active]


def test_dirty_ratio_without_entry_starts_at_log_start(generated):
    plan = dirty_ratio(generated / "orders-0", now_ms=NOW)
    segments = _segment_sizes(generated / "orders-0")
    assert plan.checkpoint is None and plan.first_dirty_offset == 0
    assert plan.clean_bytes == 0
    assert plan.cleanable_bytes == sum(s for b, s in segments if b < plan.first_uncleanable_offset)
    assert plan.ratio == 1.0 and plan.would_clean
    # orders-0 ends with an open transaction: the last stable offset bounds the range
    assert plan.last_stable_offset < plan.log_end_offset


def test_checkpoint_beyond_log_end_is_reset(generated):
    plan = dirty_ratio(generated / "users-0", now_ms=NOW, first_dirty_offset=10**9)
    assert plan.checkpoint_reset and plan.first_dirty_offset == plan.log_start_offset


def test_small_groups(generated):
    sizes = _segment_sizes(generated / "orders-1")
    config = CleanerConfig(segment_bytes=3 * max(s for _, s in sizes))
    plan = dirty_ratio(generated / "orders-1", now_ms=NOW, config=config)
    assert len(plan.groups) > 1
    by_base = dict(sizes)
    for group in plan.groups:
        assert sum(by_base[b] for b in group) <= config.segment_bytes
    # groups are as large as they can be: the next segment would not have fitted
    for group, following in zip(plan.groups, plan.groups[1:], strict=False):
        assert sum(by_base[b] for b in group) + by_base[following[0]] > config.segment_bytes


def test_generated_partitions_match_model_of_written_records(generated):
    """The generated orders topic: transactions, open tail, null keys, codecs."""
    result = compact(generated / "orders-0", now_ms=NOW)
    assert_streamed_same(result, generated / "orders-0", now_ms=NOW)
    plan = result.plan
    dumped = subprocess.run(
        [sys.executable, "-m", "kafka_format", "dump", "--jsonl", str(generated / "orders-0")],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    every = [json.loads(line) for line in dumped]
    kept = {r.offset for r in result.records}
    removed = {x.record.offset for x in result.removed}
    assert kept | removed == {r["offset"] for r in every}
    assert not kept & removed
    assert all(r["offset"] in kept for r in every if r["offset"] >= plan.first_uncleanable_offset)
    # within the cleaned range, no key appears twice among the kept records
    keys = [r.key for r in result.records if r.offset < plan.first_uncleanable_offset]
    assert len(keys) == len(set(keys))


def test_damaged_log_raises(tmp_path):
    w = PartitionWriter(tmp_path, "bad", 0)
    w.append([Message(b"k", b"v" * 20)])
    w.roll()
    w.close()
    log = w.path / segment_file_name(0, FileKind.LOG)
    data = bytearray(log.read_bytes())
    data[-3] ^= 0xFF
    log.write_bytes(bytes(data))
    with pytest.raises(KafkaFormatError):
        compact(w.path, now_ms=0)
    with pytest.raises(KafkaFormatError):
        compact_stream(w.path, now_ms=0)


# --- the command line -----------------------------------------------------------------------


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "kafka_format", "compact", *args],
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_cli_report_and_jsonl(generated):
    users = generated / "users-0"
    report = _cli(str(users), "--now", str(NOW))
    assert report.returncode == 0, report.stderr
    plan = dirty_ratio(users, now_ms=NOW)
    assert f"dirty ratio {plan.ratio:.4f}" in report.stdout
    assert f"first dirty offset {plan.first_dirty_offset}" in report.stdout
    assert "Traceback" not in report.stderr

    kept = _cli(str(users), "--now", str(NOW), "--jsonl")
    removed = _cli(str(users), "--now", str(NOW), "--jsonl", "--removed")
    result = compact(users, now_ms=NOW)
    assert [json.loads(x)["offset"] for x in kept.stdout.splitlines()] == [
        r.offset for r in result.records
    ]
    reasons = [json.loads(x)["reason"] for x in removed.stdout.splitlines()]
    assert len(reasons) == len(result.removed) and set(reasons) <= {
        "superseded",
        "tombstone",
        "aborted",
        "null key",
    }

    as_json = _cli(str(generated), "--now", str(NOW), "--json", "--delete-retention-ms", "5")
    rows = [json.loads(x) for x in as_json.stdout.splitlines()]
    assert [(r["topic"], r["partition"]) for r in rows] == [
        ("orders", 0),
        ("orders", 1),
        ("orders", 2),
        ("users", 0),
    ]
    assert all(h["deleteHorizonMs"] == NOW + 5 for r in rows for h in r["deleteHorizonsSet"])


def test_cli_errors_are_one_line(tmp_path):
    missing = _cli(str(tmp_path / "nope"))
    assert missing.returncode == 1
    assert missing.stderr.startswith("kafka-format compact: error:")
    assert "Traceback" not in missing.stderr
    bad = _cli(str(tmp_path), "--min-cleanable-dirty-ratio", "2")
    assert bad.returncode == 2 and "Traceback" not in bad.stderr
