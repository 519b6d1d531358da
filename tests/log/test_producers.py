"""Producer state rebuilt from a partition's log (runtime/producers.py), ``kafka-format producers``.

The oracle is kept here, independently of the code under test: the tests drive
PartitionWriter themselves (:class:`Script`), choose every base sequence, take offsets from what
``append`` returns and timestamps from a clock they own, and track in a few lines what each
producer's state must be (sequences modulo 2**31, a new epoch forgetting the last batch, a
marker closing the transaction). Damage is written by hand with ``build_record_batch`` appended
to a ``.log``: its byte position is the file's size before the write; positions of the
writer's own batches come from walking the frames with ``struct``.
"""

from __future__ import annotations

import json
import shutil
import struct
import subprocess
import sys
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kafka_format.runtime.files.snapshot import ProducerSnapshotEntry, read_producer_snapshot
from kafka_format.runtime.format.codecs import Codec
from kafka_format.runtime.log.producers import (
    AnomalyKind,
    ProducerState,
    ProducerStateLoader,
    diff_snapshot,
    rebuild_producer_state,
)
from kafka_format.runtime.read.reader import iter_batches
from kafka_format.runtime.write.generate import generate_log_dir
from kafka_format.runtime.write.writer import Message, PartitionWriter, Producer
from kafka_format.schemas.control_record_key import ControlRecordType, build_control_record_key
from kafka_format.schemas.end_txn_marker import build_end_txn_marker
from kafka_format.schemas.producer_snapshot import build_producer_snapshot
from kafka_format.schemas.record import RecordSpec
from kafka_format.schemas.record_batch import build_record_batch

SEQ_MOD = 2**31
INT32_MAX = SEQ_MOD - 1
T0 = 1_700_000_000_000
FIELDS = (
    "epoch",
    "last_sequence",
    "last_offset",
    "offset_delta",
    "timestamp",
    "coordinator_epoch",
    "current_txn_first_offset",
)


# --- the oracle -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Expected:
    """What a snapshot entry must hold for one producer."""

    epoch: int = -1
    last_sequence: int = -1
    last_offset: int = -1
    offset_delta: int = 0
    timestamp: int = -1
    coordinator_epoch: int = -1
    current_txn_first_offset: int = -1

    def values(self) -> tuple[int, ...]:
        return tuple(getattr(self, f) for f in FIELDS)


class Script:
    """One partition written through PartitionWriter, with its expected producer state."""

    def __init__(self, log_dir: Path, *, segment_bytes: int = 1 << 20, topic: str = "t"):
        self.now = T0
        self.w = PartitionWriter(log_dir, topic, 0, segment_bytes=segment_bytes, clock=self._tick)
        self.state: dict[int, Expected] = {}
        # (offset below which the state holds, the state): one per producer append
        self.history: list[tuple[int, dict[int, Expected]]] = [(0, {})]
        # per data batch: (pid, epoch, first sequence, last sequence, base offset, last offset)
        self.batches: list[tuple[int, int, int, int, int, int]] = []

    @property
    def dir(self) -> Path:
        return self.w.path

    def _tick(self) -> int:
        self.now += 7
        return self.now

    def next_sequence(self, pid: int, epoch: int) -> int:
        e = self.state.get(pid, Expected())
        if e.epoch != epoch or e.last_sequence < 0:
            return 0
        return (e.last_sequence + 1) % SEQ_MOD

    def data(
        self,
        pid: int,
        epoch: int,
        n: int = 3,
        *,
        transactional: bool = False,
        codec: Codec = Codec.NONE,
        sequence: int | None = None,
    ) -> tuple[int, int]:
        if sequence is None:
            sequence = self.next_sequence(pid, epoch)
        messages = [Message(b"k%d" % i, b"v" * (i + 1)) for i in range(n)]
        first, last = self.w.append(
            messages,
            producer=Producer(pid, epoch),
            transactional=transactional,
            codec=codec,
            base_sequence=sequence,
        )
        e = self.state.get(pid, Expected())
        txn = e.current_txn_first_offset
        if transactional and txn < 0:
            txn = first
        last_sequence = (sequence + n - 1) % SEQ_MOD
        self.batches.append((pid, epoch, sequence, last_sequence, first, last))
        self._record(
            pid,
            replace(
                e,
                epoch=epoch,
                last_sequence=last_sequence,
                last_offset=last,
                offset_delta=last - first,
                timestamp=self.now,
                current_txn_first_offset=txn,
            ),
            last,
        )
        return first, last

    def marker(self, pid: int, epoch: int, *, commit: bool = True, coordinator_epoch: int = 0):
        offset = self.w.end_transaction(
            Producer(pid, epoch), commit=commit, coordinator_epoch=coordinator_epoch
        )
        e = self.state.get(pid, Expected())
        if epoch != e.epoch:  # a new epoch forgets the old one's last batch
            e = replace(e, last_sequence=-1, last_offset=-1, offset_delta=0)
        self._record(
            pid,
            replace(
                e,
                epoch=epoch,
                coordinator_epoch=coordinator_epoch,
                timestamp=self.now,
                current_txn_first_offset=-1,
            ),
            offset,
        )
        return offset

    def plain(self, n: int = 2, magic: int = 2) -> None:
        self.w.append([Message(b"p", b"plain")] * n, magic=magic)

    def _record(self, pid: int, expected: Expected, last_offset: int) -> None:
        self.state = {**self.state, pid: expected}
        self.history.append((last_offset + 1, self.state))

    def at(self, offset: int) -> dict[int, tuple[int, ...]]:
        """The expected state after every batch below ``offset``."""
        found: dict[int, Expected] = {}
        for end, state in self.history:
            if end <= offset:
                found = state
        return {pid: e.values() for pid, e in found.items()}

    def close(self) -> Script:
        self.w.close()
        return self


def rebuilt(producers: dict[int, ProducerState]) -> dict[int, tuple[int, ...]]:
    out = {}
    for pid, state in producers.items():
        entry = state.snapshot_entry()
        out[pid] = tuple(getattr(entry, f) for f in FIELDS)
    return out


def stored(path: Path) -> dict[int, tuple[int, ...]]:
    return {
        e.producer_id: tuple(getattr(e, f) for f in FIELDS)
        for e in read_producer_snapshot(path).entries
    }


def frames(log: Path) -> dict[int, int]:
    """base offset -> byte position of every batch of a .log, from the frame headers."""
    data = log.read_bytes()
    out, position = {}, 0
    while position + 12 <= len(data):
        base_offset, length = struct.unpack_from(">qi", data, position)
        out.setdefault(base_offset, position)
        position += 12 + length
    return out


def last_log(directory: Path) -> Path:
    return sorted(directory.glob("*.log"))[-1]


def inject(log: Path, data: bytes) -> int:
    """Append raw batch bytes to a .log; returns their position."""
    position = log.stat().st_size
    with open(log, "ab") as fh:
        fh.write(data)
    return position


def raw_batch(
    base_offset: int,
    pid: int,
    epoch: int,
    sequence: int,
    n: int = 2,
    *,
    transactional: bool = False,
    timestamp: int = T0,
) -> bytes:
    return build_record_batch(
        [RecordSpec(key=b"x%d" % i, value=b"y", offset_delta=i) for i in range(n)],
        base_offset=base_offset,
        base_timestamp=timestamp,
        producer_id=pid,
        producer_epoch=epoch,
        base_sequence=sequence,
        is_transactional=transactional,
    )


def raw_marker(
    offset: int, pid: int, epoch: int, *, coordinator_epoch: int, commit: bool = True
) -> bytes:
    kind = ControlRecordType.commit if commit else ControlRecordType.abort
    return build_record_batch(
        [
            RecordSpec(
                key=build_control_record_key(kind), value=build_end_txn_marker(coordinator_epoch)
            )
        ],
        base_offset=offset,
        base_timestamp=T0,
        producer_id=pid,
        producer_epoch=epoch,
        is_transactional=True,
        is_control=True,
    )


# --- a partition with every kind of producer ----------------------------------------------------


def write_rich(log_dir: Path) -> Script:
    s = Script(log_dir, segment_bytes=600)
    s.plain(3, magic=1)  # no producer: ignored
    s.data(50, 0, 2)  # seen in the first segment only
    for i in range(7):
        s.data(100, 0, 1 + i % 3, codec=(Codec.NONE, Codec.GZIP, Codec.LZ4)[i % 3])
    s.data(200, 0, 2, transactional=True)
    s.data(200, 0, 1, transactional=True, codec=Codec.ZSTD)
    s.marker(200, 0, commit=True, coordinator_epoch=1)
    s.plain()
    s.data(100, 0, 2)
    s.data(200, 0, 3, transactional=True)
    s.marker(200, 0, commit=False, coordinator_epoch=1)
    s.data(100, 1, 2)  # restarted producer: new epoch, sequences from 0
    s.data(100, 1, 1)
    s.data(300, 4, 2, transactional=True)  # two transactions interleave
    s.data(200, 0, 2, transactional=True)
    s.data(300, 4, 1, transactional=True, codec=Codec.SNAPPY)
    s.marker(300, 4, commit=True, coordinator_epoch=2)
    s.marker(200, 1, commit=True, coordinator_epoch=3)  # the marker bumps the epoch
    s.data(200, 1, 2, transactional=True)  # and leaves an open transaction
    s.data(400, 0, 4, sequence=INT32_MAX - 1)  # wraps: INT32_MAX-1, INT32_MAX, 0, 1
    s.data(400, 0, 2)  # 2 .. 3
    s.data(500, 0, 3, sequence=INT32_MAX - 2)  # ends exactly at INT32_MAX
    s.data(500, 0, 1)  # then 0
    s.plain()
    return s.close()


@pytest.fixture(scope="module")
def rich(tmp_path_factory) -> Script:
    return write_rich(tmp_path_factory.mktemp("rich"))


def test_rich_partition_has_rolls_and_snapshots(rich):
    # the premise of the snapshot tests: several segments, a snapshot at each roll and at close
    snapshots = sorted(rich.dir.glob("*.snapshot"))
    assert len(rich.w.segments) >= 4
    assert len(snapshots) == len(rich.w.segments)


def test_state_at_the_log_end_is_the_expected_one(rich):
    report = rebuild_producer_state(rich.dir)
    assert rebuilt(report.producers) == rich.at(rich.w.next_offset)
    assert report.end_offset == report.log_end_offset == rich.w.next_offset
    assert report.start_offset == 0 and report.seed is None
    assert report.anomalies == [] and report.explained == []
    assert report.ok
    assert report.batches == sum(1 for end, _ in rich.history[1:])
    # the open transaction and the wrapped sequences, spelled out
    assert report.ongoing_transactions() == [(rich.state[200].current_txn_first_offset, 200)]
    assert report.producers[400].last_sequence == 3
    assert report.producers[500].last_sequence == 0


def test_state_at_every_offset_is_the_expected_one(rich):
    ends = sorted({end for end, _ in rich.history})
    offsets = sorted({*ends, *(e - 1 for e in ends if e), *(e + 1 for e in ends)})
    for offset in offsets:
        report = rebuild_producer_state(rich.dir, at=offset)
        assert rebuilt(report.producers) == rich.at(offset), offset
        assert report.end_offset == offset


def test_retained_batches_are_the_last_five_of_the_epoch(rich):
    ours = [b for b in rich.batches if b[0] == 100]
    epoch0 = [b for b in ours if b[1] == 0]
    after = epoch0[-1][5] + 1
    state = rebuild_producer_state(rich.dir, at=after).producers[100]
    assert len(state.batches) == 5
    assert [
        (m.first_sequence, m.last_sequence, m.first_offset, m.last_offset) for m in state.batches
    ] == [(b[2], b[3], b[4], b[5]) for b in epoch0[-5:]]
    assert state.first_sequence == epoch0[-5][2]
    # the epoch bump forgot them all
    final = rebuild_producer_state(rich.dir).producers[100]
    assert [m.last_offset for m in final.batches] == [b[5] for b in ours if b[1] == 1]


def test_every_snapshot_the_writer_wrote_equals_the_rebuilt_state(rich):
    snapshots = sorted(rich.dir.glob("*.snapshot"))
    for path in snapshots:
        offset = int(path.stem)
        assert stored(path) == rich.at(offset), path.name  # the writer agrees with the oracle
        assert rebuilt(rebuild_producer_state(rich.dir, at=offset).producers) == stored(path)
    report = rebuild_producer_state(rich.dir, check_snapshots=True)
    assert [(c.offset, c.status) for c in report.snapshots] == [
        (int(p.stem), "ok") for p in snapshots
    ]
    assert all(c.differences == [] for c in report.snapshots)


# --- injected anomalies ---------------------------------------------------------------------


def _copy(script: Script, tmp_path: Path) -> Path:
    target = tmp_path / script.dir.name
    shutil.copytree(script.dir, target)
    return target


@pytest.fixture(scope="module")
def seven(tmp_path_factory) -> Script:
    """Producer 7 wrote seven batches of two records (sequences 0..13); 8 is transactional."""
    s = Script(tmp_path_factory.mktemp("seven"), segment_bytes=700)
    for _ in range(7):
        s.data(7, 0, 2)
    s.data(8, 2, 1, transactional=True)
    s.marker(8, 2, coordinator_epoch=5)
    return s.close()


def _kinds(report) -> list[tuple[str, int, str | None, int | None]]:
    return [(a.kind.value, a.producer_id, a.file, a.position) for a in report.anomalies]


def test_a_batch_written_twice_is_damage_of_the_segment(seven, tmp_path):
    """The very same bytes twice: the second copy's offsets do not follow the first's, which
    no broker writes (its index refuses offsets that go back): the readers' verdict on it is
    damage (``read/segment_offsets.py``), named at its position, before any producer rule.
    A producer's retry at new offsets is the duplicate (the tests below)."""
    directory = _copy(seven, tmp_path)
    log = last_log(directory)
    end = seven.w.next_offset
    data = raw_batch(end, 7, 0, 14)  # the next batch, in sequence...
    first = inject(log, data)
    second = inject(log, data)  # ...and the very same bytes again
    report = rebuild_producer_state(directory)
    assert _kinds(report)[0][0] == "damaged_batch" and _kinds(report)[0][2:] == (str(log), second)
    assert first != second
    anomaly = report.anomalies[0]
    assert f"do not follow the previous offset {end + 1} (offsets must increase)" in anomaly.message


def test_duplicates_are_found_among_the_last_five_batches_only(seven, tmp_path):
    directory = _copy(seven, tmp_path)
    log = last_log(directory)
    ours = [b for b in seven.batches if b[0] == 7]
    end = seven.w.next_offset
    retained = ours[2]  # the oldest of the last five: sequences 4..5
    p1 = inject(log, raw_batch(end, 7, 0, retained[2]))
    forgotten = ours[1]  # the sixth from last: no longer remembered, so out of order
    p2 = inject(log, raw_batch(end + 2, 7, 0, forgotten[2]))
    p3 = inject(log, raw_batch(end + 4, 7, 0, 14))  # in sequence: the refused ones do not count
    report = rebuild_producer_state(directory)
    assert _kinds(report) == [
        ("duplicate_batch", 7, str(log), p1),
        ("sequence_gap", 7, str(log), p2),
    ]
    assert f"{retained[4]}..{retained[5]}" in report.anomalies[0].message
    assert p3 > p2
    # the broker's loaded state took every batch, the refused ones too
    assert report.producers[7].last_sequence == 15
    assert report.producers[7].last_offset == end + 5


def test_sequence_gaps(seven, tmp_path):
    directory = _copy(seven, tmp_path)
    log = last_log(directory)
    end = seven.w.next_offset
    p1 = inject(log, raw_batch(end, 7, 0, 17))  # expected 14: 14, 15, 16 missing
    p2 = inject(log, raw_batch(end + 2, 7, 1, 5))  # a new epoch must start at 0
    p3 = inject(log, raw_batch(end + 4, 99, 0, 1234))  # a producer never seen: anything goes
    report = rebuild_producer_state(directory)
    assert _kinds(report) == [
        ("sequence_gap", 7, str(log), p1),
        ("sequence_gap", 7, str(log), p2),
    ]
    assert "expected 14" in report.anomalies[0].message
    assert "3 sequence(s) missing" in report.anomalies[0].message
    assert "not 0" in report.anomalies[1].message
    assert p3 > p2 and report.producers[99].last_sequence == 1235


def test_sequence_zero_after_int32_max_is_in_order(tmp_path):
    s = Script(tmp_path)
    s.data(1, 0, 1, sequence=INT32_MAX)
    s.close()
    log = last_log(s.dir)
    end = s.w.next_offset
    inject(log, raw_batch(end, 1, 0, 0))
    position = inject(log, raw_batch(end + 2, 1, 0, 0))  # wrapping again is a duplicate
    report = rebuild_producer_state(s.dir)
    assert _kinds(report) == [("duplicate_batch", 1, str(log), position)]


def test_epoch_regression_is_a_fenced_producer(seven, tmp_path):
    directory = _copy(seven, tmp_path)
    log = last_log(directory)
    end = seven.w.next_offset
    p1 = inject(log, raw_batch(end, 8, 1, 0, transactional=True))  # the zombie, epoch 1 < 2
    p2 = inject(log, raw_batch(end + 2, 8, 1, 2, transactional=True))  # still fenced
    p3 = inject(log, raw_marker(end + 4, 8, 1, coordinator_epoch=5))  # its marker too
    report = rebuild_producer_state(directory)
    assert _kinds(report) == [
        ("epoch_regression", 8, str(log), p1),
        ("epoch_regression", 8, str(log), p2),
        ("epoch_regression", 8, str(log), p3),
    ]
    assert "below the current epoch 2" in report.anomalies[0].message
    # replication appends it all the same: the loaded state has the lower epoch
    assert report.producers[8].epoch == 1


def test_marker_problems(seven, tmp_path):
    directory = _copy(seven, tmp_path)
    log = last_log(directory)
    end = seven.w.next_offset
    p1 = inject(log, raw_marker(end, 7, 0, coordinator_epoch=0))  # 7 never had a transaction
    p2 = inject(log, raw_batch(end + 1, 8, 2, 1, transactional=True))
    p3 = inject(log, raw_batch(end + 3, 8, 2, 3))  # not transactional, inside a transaction
    p4 = inject(log, raw_marker(end + 5, 8, 2, coordinator_epoch=4))  # 5 was seen: a zombie
    report = rebuild_producer_state(directory)
    assert _kinds(report) == [
        ("marker_without_transaction", 7, str(log), p1),
        ("non_transactional_in_transaction", 8, str(log), p3),
        ("coordinator_epoch_regression", 8, str(log), p4),
    ]
    assert p2 < p3
    state = report.producers[8]
    assert state.current_txn_first_offset is None and state.coordinator_epoch == 4


def test_marker_without_transaction_written_by_the_writer(tmp_path):
    s = Script(tmp_path)
    s.data(3, 0, 2)
    offset = s.marker(3, 0, coordinator_epoch=1)
    s.close()
    log = last_log(s.dir)
    report = rebuild_producer_state(s.dir)
    assert _kinds(report) == [("marker_without_transaction", 3, str(log), frames(log)[offset])]
    assert rebuilt(report.producers) == s.at(s.w.next_offset)


def test_a_damaged_batch_is_reported_and_applied_as_the_loader_would(seven, tmp_path):
    directory = _copy(seven, tmp_path)
    ours = [b for b in seven.batches if b[0] == 7]
    base = ours[3][4]
    log = next(p for p in sorted(directory.glob("*.log")) if base in frames(p))
    position = frames(log)[base]
    data = bytearray(log.read_bytes())
    data[position + 70] ^= 0xFF  # inside the records: the CRC no longer holds
    log.write_bytes(bytes(data))
    report = rebuild_producer_state(directory)
    assert _kinds(report) == [("damaged_batch", 7, str(log), position)]
    assert "crc" in report.anomalies[0].message
    assert rebuilt(report.producers) == seven.at(seven.w.next_offset)


# --- snapshots ------------------------------------------------------------------------------


def test_a_tampered_snapshot_is_a_mismatch_field_by_field(rich, tmp_path):
    directory = _copy(rich, tmp_path)
    path = sorted(directory.glob("*.snapshot"))[2]
    entries = read_producer_snapshot(path).entries
    victim = entries[0]
    changed = [
        {**_entry_dict(e), "last_sequence": e.last_sequence + 1} if e is victim else _entry_dict(e)
        for e in entries
    ]
    extra = {**_entry_dict(victim), "producer_id": 123456}
    path.write_bytes(build_producer_snapshot([*changed, extra]))
    report = rebuild_producer_state(directory, check_snapshots=True)
    bad = [c for c in report.snapshots if not c.ok]
    assert [(c.path, c.status) for c in bad] == [(path, "mismatch")]
    assert [(d.producer_id, d.field, d.rebuilt, d.stored) for d in bad[0].differences] == [
        (victim.producer_id, "last_sequence", victim.last_sequence, victim.last_sequence + 1),
        (123456, "presence", None, 123456),
    ]
    assert not report.ok and report.anomalies == []


def test_an_unreadable_snapshot_is_reported(rich, tmp_path):
    directory = _copy(rich, tmp_path)
    path = sorted(directory.glob("*.snapshot"))[1]
    data = bytearray(path.read_bytes())
    data[-1] ^= 0x01
    path.write_bytes(bytes(data))
    report = rebuild_producer_state(directory, check_snapshots=True)
    assert [(c.path, c.status) for c in report.snapshots if not c.ok] == [(path, "unreadable")]


def test_a_log_that_lost_its_first_segments_is_loaded_from_a_snapshot(rich, tmp_path):
    directory = _copy(rich, tmp_path)
    bases = sorted(int(p.stem) for p in directory.glob("*.log"))
    for p in directory.iterdir():  # retention deleted two segments, not their snapshots
        if p.stem.isdigit() and int(p.stem) in bases[:2] and p.suffix != ".snapshot":
            p.unlink()
    new_start = bases[2]
    report = rebuild_producer_state(directory, check_snapshots=True)
    assert report.seed == directory / f"{new_start:020d}.snapshot"
    assert report.start_offset == new_start
    assert rebuilt(report.producers) == rich.at(rich.w.next_offset)
    statuses = {c.offset: c.status for c in report.snapshots}
    assert statuses.pop(bases[1]) == "not_checked"
    assert statuses.pop(new_start) == "seed"
    assert set(statuses.values()) == {"ok"}
    assert report.ok
    # from the log alone, the producers seen only in the deleted segments are unknown
    alone = rebuild_producer_state(directory, seed=None)
    gone = {b[0] for b in rich.batches if b[5] < new_start} - {
        b[0] for b in rich.batches if b[5] >= new_start
    }
    assert gone and not gone & set(alone.producers)
    assert alone.start_offset == new_start


def test_diff_snapshot_explains_expired_producers_and_cleaned_batches():
    def state(pid, last_offset, timestamp, txn=None):
        return ProducerState.from_snapshot_entry(
            ProducerSnapshotEntry(
                pid, 0, 9, last_offset, 0, timestamp, -1, -1 if txn is None else txn
            )
        )

    rebuilt_state = {
        1: state(1, 10, T0),  # idle a day by the log's clock: expired
        2: state(2, 20, T0, txn=20),  # same, but a transaction is open: never expires
        3: state(3, 30, T0 + 1),  # idle a little less than a day
        4: state(4, 40, T0),  # its stored last batch (offset 45) is gone: cleaned
    }
    stored_entries = [
        ProducerSnapshotEntry(4, 0, 9, 45, 0, T0, -1, -1),
        ProducerSnapshotEntry(5, 0, 9, 150, 0, T0, -1, -1),  # above the checkpoint
        ProducerSnapshotEntry(6, 0, 9, 50, 0, T0, -1, -1),  # below: the cleaner removed it
    ]
    clock = T0 + 86_400_000
    found = diff_snapshot(rebuilt_state, stored_entries, clock=clock, cleaned_to=100)
    by_pid = {}
    for d in found:
        by_pid.setdefault(d.producer_id, []).append(d)
    assert [d.field for d in by_pid[1]] == ["presence"] and by_pid[1][0].explained_by
    assert by_pid[2][0].explained_by is None
    assert by_pid[3][0].explained_by is None
    assert {d.field for d in by_pid[4]} == {"last_offset"}
    assert all(d.explained_by for d in by_pid[4])
    assert by_pid[5][0].explained_by is None and by_pid[5][0].stored == 5
    assert by_pid[6][0].field == "presence" and by_pid[6][0].explained_by
    # without a cleaner checkpoint the same difference is a mismatch
    again = diff_snapshot(rebuilt_state, stored_entries, clock=clock, cleaned_to=None)
    assert any(d.producer_id == 4 and d.explained_by is None for d in again)


def _entry_dict(e: ProducerSnapshotEntry) -> dict[str, int]:
    return {f: getattr(e, f) for f in ("producer_id", *FIELDS)}


# --- generated log dirs ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def generated(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("generated") / "logs"
    generate_log_dir(root, seed=11, records=500, segment_bytes=8192)
    return root


def test_generated_log_dir_has_no_anomalies_and_matches_its_snapshots(generated):
    dirs = sorted(p for p in generated.iterdir() if p.is_dir())
    checked = 0
    for directory in dirs:
        report = rebuild_producer_state(directory, check_snapshots=True)
        assert report.anomalies == [], directory.name
        assert all(c.status == "ok" for c in report.snapshots), directory.name
        assert len(report.snapshots) == len(list(directory.glob("*.snapshot")))
        checked += len(report.snapshots)
        final = max(directory.glob("*.snapshot"), key=lambda p: int(p.stem))
        assert rebuilt(report.producers) == stored(final)
        if directory.name.startswith("users"):
            # the cleaned part of a compacted topic: batches the cleaner removed leave gaps
            assert report.explained
            assert all(a.base_offset < report.cleaned_to for a in report.explained)
        else:
            assert report.explained == []
    assert checked > 3 * len(dirs)


# --- property: any history of producers ----------------------------------------------------

_OPS = st.lists(
    st.tuples(
        st.sampled_from(["idem", "bump", "txn", "end", "roll", "plain"]),
        st.integers(0, 2),
        st.integers(1, 4),
        st.booleans(),
    ),
    min_size=1,
    max_size=25,
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_OPS)
def test_any_history_rebuilds_to_the_expected_state_and_the_snapshots(ops):
    with tempfile.TemporaryDirectory() as tmp:
        s = Script(Path(tmp), segment_bytes=400)
        epochs = {pid: 0 for pid in (10, 11, 12, 20, 21, 22)}
        coordinator = {pid: 0 for pid in (20, 21, 22)}
        open_txn: set[int] = set()
        empty_markers = 0
        for op, which, n, flag in ops:
            idem, txn = 10 + which, 20 + which
            if op == "idem":
                s.data(idem, epochs[idem], n, codec=Codec.GZIP if flag else Codec.NONE)
            elif op == "bump":
                epochs[idem] += 1
            elif op == "txn":
                s.data(txn, epochs[txn], n, transactional=True)
                open_txn.add(txn)
            elif op == "end":
                if flag:  # an epoch-bumping marker, as with transactions V2
                    epochs[txn] += 1
                coordinator[txn] += n % 2  # the coordinator moves on now and then
                empty_markers += txn not in open_txn
                s.marker(txn, epochs[txn], commit=n > 2, coordinator_epoch=coordinator[txn])
                open_txn.discard(txn)
            elif op == "roll":
                s.w.roll()
            else:
                s.plain(n)
        s.close()
        report = rebuild_producer_state(s.dir, check_snapshots=True)
        assert rebuilt(report.producers) == s.at(s.w.next_offset)
        assert {pid for _, pid in report.ongoing_transactions()} == open_txn
        assert all(c.status == "ok" for c in report.snapshots)
        for path in s.dir.glob("*.snapshot"):
            assert stored(path) == s.at(int(path.stem))
        # markers that closed nothing are the only findings
        assert [a.kind for a in report.anomalies] == [
            AnomalyKind.MARKER_WITHOUT_TRANSACTION
        ] * empty_markers


# --- the command line -----------------------------------------------------------------------


def run_cli(*args) -> subprocess.CompletedProcess:
    proc = subprocess.run(
        [sys.executable, "-m", "kafka_format.runtime.cli", "producers", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "Traceback" not in proc.stderr + proc.stdout, proc.stderr
    return proc


def test_cli_table_and_exit_status_on_a_clean_partition(rich):
    proc = run_cli(rich.dir, "--check-snapshots")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("PRODUCER_ID"))
    table = {
        int(line.split()[0]): line.split() for line in lines[header + 1 :] if line[:1].isdigit()
    }
    assert set(table) == set(rich.state)
    for pid, e in rich.state.items():
        row = table[pid]
        assert int(row[1]) == e.epoch
        assert row[3] == (str(e.last_sequence) if e.last_offset >= 0 else "-")
        assert row[4] == (str(e.last_offset) if e.last_offset >= 0 else "-")
        assert row[-1] == (
            str(e.current_txn_first_offset) if e.current_txn_first_offset >= 0 else "-"
        )
    assert lines[-1].endswith(": OK")
    assert sum(" ok " in line for line in lines) == len(list(rich.dir.glob("*.snapshot")))


def test_cli_jsonl_and_at(rich):
    offset = rich.history[len(rich.history) // 2][0]
    proc = run_cli(rich.dir, "--jsonl", "--at", offset)
    assert proc.returncode == 0
    rows = [json.loads(line) for line in proc.stdout.splitlines()]
    producers = {r["producerId"]: r for r in rows if r["type"] == "producer"}
    expected = rich.at(offset)
    assert set(producers) == set(expected)
    for pid, values in expected.items():
        row = producers[pid]
        got = (
            row["producerEpoch"],
            row["lastSequence"],
            row["lastOffset"],
            row["offsetDelta"],
            row["lastTimestamp"],
            row["coordinatorEpoch"],
            -1 if row["currentTxnFirstOffset"] is None else row["currentTxnFirstOffset"],
        )
        assert got == values
    summary = rows[-1]
    assert summary["type"] == "summary" and summary["endOffset"] == offset and summary["ok"]


def test_cli_reports_anomalies_with_positions_and_exits_1(seven, tmp_path):
    directory = _copy(seven, tmp_path)
    log = last_log(directory)
    end = seven.w.next_offset
    data = raw_batch(end, 7, 0, 14)
    inject(log, data)
    position = inject(log, data)
    proc = run_cli(directory)
    assert proc.returncode == 1
    assert f"{log}@{position}" in proc.stdout and "damaged_batch" in proc.stdout
    rows = [json.loads(line) for line in run_cli(directory, "--jsonl").stdout.splitlines()]
    anomalies = [r for r in rows if r["type"] == "anomaly"]
    assert [(a["kind"], a["file"], a["position"]) for a in anomalies] == [
        ("damaged_batch", str(log), position)
    ]


def test_cli_snapshot_mismatch_exits_1_only_when_checked(rich, tmp_path):
    directory = _copy(rich, tmp_path)
    path = sorted(directory.glob("*.snapshot"))[1]
    entries = [_entry_dict(e) for e in read_producer_snapshot(path).entries]
    entries[0]["epoch"] += 1
    path.write_bytes(build_producer_snapshot(entries))
    assert run_cli(directory).returncode == 0
    proc = run_cli(directory, "--check-snapshots")
    assert proc.returncode == 1
    assert f"snapshot {path.name}: mismatch" in proc.stdout
    assert f"producer {entries[0]['producer_id']}: epoch rebuilt" in proc.stdout


def test_cli_log_dir_errors_and_help(generated, tmp_path):
    proc = run_cli(generated, "--jsonl")
    assert proc.returncode == 0
    summaries = [json.loads(x) for x in proc.stdout.splitlines() if '"summary"' in x]
    assert sorted(s["partition"] for s in summaries) == sorted(
        p.name for p in generated.iterdir() if p.is_dir()
    )
    missing = run_cli(tmp_path / "nope")
    assert missing.returncode == 1
    assert missing.stderr.count("\n") == 1 and "kafka-format producers: error:" in missing.stderr
    empty = tmp_path / "empty"
    empty.mkdir()
    assert run_cli(empty).returncode == 1
    assert run_cli(generated, "--at", "-3").returncode == 2
    helped = run_cli("--help")
    assert helped.returncode == 0 and "examples:" in helped.stdout


# --- Kafka's own cases (ProducerStateManagerTest), on batches built here ----------------------

PID = 1


def _load(*batches: bytes):
    """Batches given back to back at offsets 0, 1, 2, ... -> the loader after all of them."""
    loader = ProducerStateLoader()
    data = b"".join(batches)
    for batch in iter_batches(data, records=lambda b: b.is_control):
        loader.append(batch)
    return loader


def _kafka_kinds(loader) -> list[str]:
    return [a.kind.value for a in loader.anomalies]


def _data(offset: int, epoch: int, sequence: int, *, txn: bool = False) -> bytes:
    return raw_batch(offset, PID, epoch, sequence, 1, transactional=txn)


def test_kafka_append_txn_marker_with_no_producer_state():
    loader = _load(
        raw_marker(0, PID, 2, coordinator_epoch=0),
        _data(1, 0, 0),  # InvalidProducerEpochException: fencing works with only a marker
        _data(2, 2, 17),  # OutOfOrderSequenceException: the sequence must restart at 0
        _data(3, 2, 0),  # accepted
    )
    assert _kafka_kinds(loader) == [
        "marker_without_transaction",
        "epoch_regression",
        "sequence_gap",
    ]
    state = loader.producers[PID]
    assert (state.epoch, state.last_sequence, state.last_offset) == (2, 0, 3)


def test_kafka_sequence_wrap_around_and_invalid_wrap_around():
    ok = _load(_data(0, 15, INT32_MAX), _data(1, 15, 0))
    assert ok.anomalies == []
    assert (ok.producers[PID].first_sequence, ok.producers[PID].last_sequence) == (INT32_MAX, 0)
    bad = _load(_data(0, 15, INT32_MAX), _data(1, 15, 1))
    assert _kafka_kinds(bad) == ["sequence_gap"]
    # a batch whose 21 sequences wrap: INT32_MAX - 10 .. 9
    wrapped = _load(raw_batch(0, PID, 15, INT32_MAX - 10, 21))
    assert wrapped.producers[PID].first_sequence == INT32_MAX - 10
    assert wrapped.producers[PID].last_sequence == 9


def test_kafka_out_of_sequence_after_control_record_epoch_bump():
    loader = _load(
        _data(0, 0, 0, txn=True),
        _data(1, 0, 1, txn=True),
        raw_marker(2, PID, 1, coordinator_epoch=0, commit=False),  # bumps the epoch
        _data(3, 1, 2, txn=True),  # sequence not reset
        _data(4, 2, 2, txn=True),  # nor on a further epoch
        _data(5, 1, 0, txn=True),  # fine
    )
    assert _kafka_kinds(loader) == ["sequence_gap", "sequence_gap"]
    assert loader.anomalies[0].base_offset == 3 and loader.anomalies[1].base_offset == 4
    state = loader.producers[PID]
    # the loaded state took the refused batches too: its transaction began at offset 3
    assert (state.epoch, state.last_sequence, state.current_txn_first_offset) == (1, 0, 3)


def test_kafka_control_record_bumps_epoch_and_forgets_the_batches():
    loader = _load(_data(0, 0, 0), raw_marker(1, PID, 1, coordinator_epoch=0, commit=False))
    state = loader.producers[PID]
    assert (state.epoch, state.first_sequence, state.last_sequence, state.last_offset) == (
        1,
        -1,
        -1,
        -1,
    )
    assert state.current_txn_first_offset is None


def test_kafka_non_transactional_append_with_ongoing_transaction():
    loader = _load(_data(0, 0, 0, txn=True), _data(1, 0, 1))
    assert _kafka_kinds(loader) == ["non_transactional_in_transaction"]


def test_kafka_old_epoch_for_control_record_and_coordinator_fencing():
    old = _load(_data(0, 5, 0, txn=True), raw_marker(1, PID, 3, coordinator_epoch=0))
    assert _kafka_kinds(old) == ["epoch_regression"]
    fencing = _load(
        _data(0, 5, 0, txn=True),
        raw_marker(1, PID, 5, coordinator_epoch=1),
        raw_marker(2, PID, 5, coordinator_epoch=1),  # the same coordinator epoch: allowed
        raw_marker(3, PID, 5, coordinator_epoch=2),  # a newer one: allowed
        raw_marker(4, PID, 5, coordinator_epoch=1),  # TransactionCoordinatorFencedException
    )
    assert _kafka_kinds(fencing) == [
        "marker_without_transaction",
        "marker_without_transaction",
        "coordinator_epoch_regression",
    ]
    assert fencing.producers[PID].coordinator_epoch == 1  # replication applied it anyway


def test_kafka_sequence_not_validated_without_sequence_numbers():
    # the group coordinator's transactional offset commits carry no sequence
    loader = _load(_data(0, 0, -1, txn=True), _data(1, 0, -1, txn=True))
    assert loader.anomalies == []
    assert loader.producers[PID].last_sequence == -1


def test_kafka_append_empty_control_batch():
    empty = build_record_batch(
        [],
        base_offset=15,
        last_offset_delta=0,
        producer_id=PID,
        producer_epoch=0,
        is_transactional=True,
        is_control=True,
    )
    loader = _load(empty)
    assert loader.anomalies == []
    state = loader.producers[PID]  # an entry exists, with nothing in it
    assert (state.epoch, state.last_offset, state.current_txn_first_offset) == (-1, -1, None)
