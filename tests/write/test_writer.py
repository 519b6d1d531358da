"""``PartitionWriter``: the broker's append path, one rule at a time.

Oracles: the Construct builders of ``kafka_format.schemas`` (the fast serialiser must give the
same bytes), kafka-python's reader, and expectations worked out here by hand from Kafka's
sources for small hand-made logs (the generated-directory tests check the same rules by
re-deriving them over whole logs).
"""

from __future__ import annotations

import struct
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kafka.record import MemoryRecords as KpMemoryRecords

import kafka_format as kf
from kafka_format.runtime.format.codecs import Codec, compress
from kafka_format.runtime.model import TimestampType
from kafka_format.runtime.write.writer import (
    Appended,
    Message,
    PartitionWriter,
    Producer,
    encode_record_batch,
    encode_records,
    java_hashmap_order,
)
from kafka_format.schemas.record import RecordSpec, build_records
from kafka_format.schemas.record_batch import build_record_batch

PROPS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
INT32 = st.integers(-(2**31), 2**31 - 1)
INT64 = st.integers(-(2**63), 2**63 - 1)


def tree(path: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(path)): p.read_bytes() for p in sorted(path.rglob("*")) if p.is_file()
    }


def index_entries(path: Path) -> list[tuple[int, int]]:
    data = path.read_bytes()
    return [struct.unpack_from(">ii", data, i) for i in range(0, len(data), 8)]


def time_entries(path: Path) -> list[tuple[int, int]]:
    data = path.read_bytes()
    return [struct.unpack_from(">qi", data, i) for i in range(0, len(data), 12)]


def frame_sizes(path: Path) -> list[tuple[int, int]]:
    """(position, size) of each log entry, by walking the length fields."""
    data = path.read_bytes()
    out, pos = [], 0
    while pos < len(data):
        size = 12 + struct.unpack_from(">i", data, pos + 8)[0]
        out.append((pos, size))
        pos += size
    return out


def messages(n: int, *, size: int = 20, start: int = 0, headers: bool = True) -> list[Message]:
    return [
        Message(
            key=b"k%d" % (i % 7),
            value=b"v" * size if i % 5 else None,
            headers=(("h", b"%d" % i),) if headers else (),
            timestamp=1_700_000_000_000 + start + i,
        )
        for i in range(start, start + n)
    ]


# --- the fast serialiser against the Construct builders --------------------------------------

headers_st = st.lists(
    st.tuples(st.text(max_size=20), st.none() | st.binary(max_size=40)), max_size=3
)
spec_st = st.builds(
    RecordSpec,
    key=st.none() | st.binary(max_size=300),
    value=st.none() | st.binary(max_size=20_000),
    headers=headers_st,
    offset_delta=INT32,
    timestamp_delta=INT64,
    attributes=st.integers(-128, 127),
)


@PROPS
@given(st.lists(spec_st, max_size=5))
def test_encode_records_is_byte_identical_to_construct(specs):
    assert encode_records(specs) == build_records(specs)


@PROPS
@given(
    specs=st.lists(spec_st, max_size=4),
    compressed=st.booleans(),
    fields=st.fixed_dictionaries(
        {
            "base_offset": st.integers(0, 2**63 - 1),
            "partition_leader_epoch": INT32,
            "base_timestamp": INT64,
            "max_timestamp": INT64,
            "last_offset_delta": INT32,
            "producer_id": INT64,
            "producer_epoch": st.integers(-(2**15), 2**15 - 1),
            "base_sequence": INT32,
            "attributes": st.integers(0, 0x7F).map(lambda a: a & ~7),
        }
    ),
)
def test_encode_record_batch_is_byte_identical_to_construct(specs, compressed, fields):
    if compressed:
        payload = compress(Codec.GZIP, build_records(specs))
        fields = {**fields, "attributes": fields["attributes"] | Codec.GZIP}
        expected = build_record_batch(
            compressed_payload=payload, records_count=len(specs), **fields
        )
    else:
        payload = build_records(specs)
        expected = build_record_batch(specs, **fields)
    assert encode_record_batch(payload, records_count=len(specs), **fields) == expected


def _everything(w: PartitionWriter) -> None:
    p, t = Producer(7), Producer(8, epoch=2)
    for i, codec in enumerate(Codec):
        w.append(messages(6, start=10 * i), codec=codec, producer=p)
    w.append(messages(3, start=100), producer=t, transactional=True)
    w.abort(t, coordinator_epoch=4)
    w.append(messages(3, start=110), codec=Codec.ZSTD, producer=t, transactional=True)
    w.commit(t, coordinator_epoch=4)
    w.append(messages(4, start=120, headers=False), magic=1, codec=Codec.LZ4)
    w.append(messages(4, start=130, headers=False), magic=0)
    w.append(messages(2, start=140), base_offset=w.next_offset + 5, delete_horizon_ms=123)
    w.append([], last_offset_delta=3, producer=p, base_offset=w.next_offset + 2)


@pytest.mark.parametrize("timestamp_type", list(TimestampType)[1:])
def test_fast_and_construct_writers_write_the_same_bytes(tmp_path, timestamp_type):
    for name, fast in (("construct", False), ("fast", True)):
        with PartitionWriter(
            tmp_path / name, "t", 0, segment_bytes=600, fast=fast, timestamp_type=timestamp_type
        ) as w:
            _everything(w)
        assert len(w.segments) > 3
    assert tree(tmp_path / "construct") == tree(tmp_path / "fast")


# --- offsets, records, peers ----------------------------------------------------------------


def test_offsets_and_records_read_back(tmp_path):
    with PartitionWriter(tmp_path, "orders", 3, segment_bytes=2000, keep_records=True) as w:
        assert w.append(messages(5)) == Appended(0, 4)
        assert w.append(messages(3, headers=False), codec=Codec.SNAPPY, magic=1) == (5, 7)
        assert w.append(messages(2, headers=False), magic=0) == Appended(8, 9)
        _everything(w)
    assert w.path == tmp_path / "orders-3"
    got = list(kf.iter_records(w.path))
    assert [(r.offset, r.key, r.value, [(h.key, h.value) for h in r.headers]) for r in got] == [
        (r.offset, r.key, r.value, list(r.headers)) for r in w.records
    ]
    assert [r.timestamp for r in got] == [r.timestamp for r in w.records]
    assert {r.topic for r in got} == {"orders"} and {r.partition for r in got} == {3}
    committed = list(kf.iter_records(w.path, isolation="read_committed"))
    assert [r.offset for r in committed] == [r.offset for r in w.records if r.read_committed]
    assert len(committed) == len(got) - 3
    assert w.summary.aborted == 3 and w.summary.committed == 3 and w.summary.open == 0


def test_log_append_time(tmp_path):
    clock = iter(range(5_000, 6_000, 100)).__next__
    with PartitionWriter(
        tmp_path, "t", 0, timestamp_type=TimestampType.LOG_APPEND_TIME, clock=clock
    ) as w:
        w.append(messages(3))  # now = 5000
        w.append(messages(3), codec=Codec.GZIP)  # 5100
        w.append(messages(2, headers=False), magic=1)  # 5200
        w.append(messages(2, headers=False), magic=1, codec=Codec.GZIP)  # 5300
        w.append(messages(2, headers=False), magic=0)  # no timestamps at all
    got = [(r.timestamp, r.timestamp_type) for r in kf.iter_records(w.path)]
    expected = [(5000, 1)] * 3 + [(5100, 1)] * 3 + [(5200, 1)] * 2 + [(5300, 1)] * 2
    assert got == [*expected, (None, -1), (None, -1)]
    peer = []
    for position, size in frame_sizes(w.path / "00000000000000000000.log"):
        data = (w.path / "00000000000000000000.log").read_bytes()[position : position + size]
        peer += [(r.timestamp, r.timestamp_type) for r in KpMemoryRecords(data).next_batch()]
    assert peer == [*expected, (None, None), (None, None)]
    # the v2 batches keep the producer's base timestamp; only max timestamp and the bit change
    first = next(iter(kf.iter_batches(w.path)))
    assert first.base_timestamp == 1_700_000_000_000 and first.max_timestamp == 5000


def test_idempotent_sequences(tmp_path):
    with PartitionWriter(tmp_path, "t", 0) as w:
        p = Producer(42, epoch=0)
        w.append(messages(3), producer=p)
        w.append(messages(4), producer=p, codec=Codec.LZ4)
        w.append(messages(2), producer=Producer(42, epoch=1))  # new epoch: from 0 again
        w.append(messages(3), producer=Producer(43), base_sequence=2**31 - 2)  # wraps
        w.append(messages(1), producer=Producer(43))
        w.append(messages(1))
    got = [
        (b.producer_id, b.producer_epoch, b.base_sequence, b.last_sequence)
        for b in kf.iter_batches(w.path)
    ]
    assert got == [
        (42, 0, 0, 2),
        (42, 0, 3, 6),
        (42, 1, 0, 1),
        (43, 0, 2**31 - 2, 0),
        (43, 0, 1, 1),
        (-1, -1, -1, -1),
    ]


# --- transactions ---------------------------------------------------------------------------


def test_txnindex_lso_held_back_by_another_open_transaction(tmp_path):
    t1, t2 = Producer(100), Producer(200)
    with PartitionWriter(tmp_path, "t", 0) as w:
        w.append(messages(2), producer=t1, transactional=True)  # 0-1
        w.append(messages(2), producer=t2, transactional=True)  # 2-3
        w.append(messages(1), producer=t1, transactional=True)  # 4
        assert w.abort(t1, coordinator_epoch=7) == 5
        w.append(messages(1))  # 6
        assert w.abort(t2, coordinator_epoch=7) == 7
        w.append(messages(1), producer=t1, transactional=True)  # 8
        assert w.commit(t1, coordinator_epoch=8) == 9
        w.commit(t1, coordinator_epoch=8)  # a marker without data: no transaction completes
    data = (w.path / "00000000000000000000.txnindex").read_bytes()
    assert [struct.unpack_from(">hqqqq", data, i) for i in range(0, len(data), 34)] == [
        (0, 100, 0, 5, 2),  # t2's transaction (first offset 2) was still open
        (0, 200, 2, 7, 8),
    ]
    committed = [r.offset for r in kf.iter_records(w.path, isolation="read_committed")]
    assert committed == [6, 8]
    markers = [
        (b.base_offset, b.records[0].control.type, b.records[0].control.coordinator_epoch)
        for b in kf.iter_batches(w.path)
        if b.is_control
    ]
    assert markers == [(5, 0, 7), (7, 0, 7), (9, 1, 8), (10, 1, 8)]


def test_transaction_rules(tmp_path):
    t = Producer(5)
    with PartitionWriter(tmp_path, "t", 0) as w:
        w.append(messages(1), producer=t, transactional=True)
        with pytest.raises(ValueError, match="open transaction"):
            w.append(messages(1), producer=t)
        w.commit(t, coordinator_epoch=3)
        with pytest.raises(ValueError, match="coordinator epoch"):
            w.commit(t, coordinator_epoch=2)
        with pytest.raises(ValueError, match="needs a producer"):
            w.append(messages(1), transactional=True)
        w.append(messages(1), producer=Producer(5, epoch=1))
        with pytest.raises(ValueError, match="fenced"):
            w.append(messages(1), producer=t)
        with pytest.raises(ValueError, match="fenced"):
            w.abort(t)


def test_open_transaction_at_close(tmp_path):
    t = Producer(9, epoch=1)
    with PartitionWriter(tmp_path, "t", 0) as w:
        w.append(messages(2))
        w.append(messages(3), producer=t, transactional=True)
    assert w.summary.open == 3
    assert len(list(kf.iter_records(w.path, isolation="read_committed"))) == 2
    snapshot = (w.path / "00000000000000000005.snapshot").read_bytes()
    # pid, epoch, last sequence, last offset, offset delta, max timestamp of its last batch,
    # coordinator epoch (none yet), first offset of the open transaction
    entry = (9, 1, 2, 4, 2, 1_700_000_000_002, -1, 2)
    assert struct.unpack_from(">qhiqiqiq", snapshot, 10) == entry


# --- segments, indexes, snapshots -----------------------------------------------------------


def test_roll_rule_and_snapshots(tmp_path):
    p = Producer(77)
    with PartitionWriter(tmp_path, "t", 0, segment_bytes=1000) as w:
        sizes = []
        for i in range(7):
            before = w.log_bytes
            w.append(messages(4, start=4 * i, size=40), producer=p)
            sizes.append(w.log_bytes - before)
        w.roll()  # as segment.ms would
        w.roll()  # an empty active segment is not rolled again
        w.append(messages(1), producer=p)
    # a segment takes batches while size <= segment_bytes - next batch size
    size, bases = 0, [0]
    for i, s in enumerate(sizes):
        if size > 1000 - s:
            bases.append(4 * i)
            size = 0
        size += s
    bases.append(28)
    assert w.segments == bases
    logs = sorted(w.path.glob("*.log"))
    assert [int(p.stem) for p in logs] == bases
    assert all(p.stat().st_size <= 1000 for p in logs)
    # a snapshot at every rolled segment's base offset, one at the end; each holds the state
    # before the append that rolled
    snapshots = sorted(w.path.glob("*.snapshot"))
    assert [int(p.stem) for p in snapshots] == [*bases[1:], 29]
    for snap in snapshots:
        entry = struct.unpack_from(">qhiqiqiq", snap.read_bytes(), 10)
        assert entry[3] == int(snap.stem) - 1  # last offset of the producer's last batch
        assert entry[2] == int(snap.stem) - 1  # its sequence: offsets and sequences agree here


def test_index_entries_per_batch_and_per_append(tmp_path):
    """Uncompressed v0/v1 messages are each a batch: Kafka 4.0+ indexes them one by one,
    earlier brokers once per append (the append's last offset at its start position)."""
    appended = {}
    for per_batch in (True, False):
        with PartitionWriter(
            tmp_path / str(per_batch), "t", 0, index_interval_bytes=300, per_batch_index=per_batch
        ) as w:
            appended[per_batch] = [
                w.append(messages(5, start=5 * i, size=60, headers=False), magic=1)
                for i in range(8)
            ]
    log = tmp_path / "True" / "t-0" / "00000000000000000000.log"
    assert log.read_bytes() == (tmp_path / "False" / "t-0" / log.name).read_bytes()
    entries = frame_sizes(log)  # one message, offset i, per entry
    per_batch, since = [], 0
    for offset, (position, size) in enumerate(entries):
        if since > 300:
            per_batch.append((offset, position))
            since = 0
        since += size
    per_append, since = [], 0
    for base, last in appended[False]:
        position = entries[base][0]
        if since > 300:
            per_append.append((last, position))
            since = 0
        since += sum(size for _, size in entries[base : last + 1])
    assert index_entries(log.with_suffix(".index")) == per_batch
    assert index_entries(tmp_path / "False" / "t-0" / log.with_suffix(".index").name) == per_append
    assert per_batch != per_append


def test_time_index_tracks_the_largest_timestamp(tmp_path):
    ts = [100, 300, 200, 300, 500, 400]
    with PartitionWriter(tmp_path, "t", 0, index_interval_bytes=0) as w:
        for t in ts:
            w.append([Message(b"k", b"v", timestamp=t)])
        w.append([Message(b"k", b"v", timestamp=50), Message(b"k", b"v", timestamp=600)])
    # interval 0: every batch after the first gets an index entry; the time index only when
    # the largest timestamp so far grew, and at close with the overall largest
    assert [o for o, _ in index_entries(w.path / "00000000000000000000.index")] == [
        1, 2, 3, 4, 5, 7
    ]  # fmt: skip
    assert time_entries(w.path / "00000000000000000000.timeindex") == [
        (300, 1), (500, 4), (600, 7)
    ]  # fmt: skip


def test_full_index_rolls(tmp_path):
    with PartitionWriter(
        tmp_path, "t", 0, index_interval_bytes=0, max_index_bytes=24
    ) as w:  # 3 offset entries, 2 time entries
        for i in range(10):
            w.append([Message(b"k", b"v", timestamp=i)])
    # the time index fills first: two entries, then the segment rolls
    assert w.segments == [0, 3, 6, 9]


def test_live_layout_keeps_indexes_preallocated(tmp_path):
    with PartitionWriter(
        tmp_path, "t", 0, segment_bytes=600, index_interval_bytes=50, clean_shutdown=False,
        max_index_bytes=1000,
    ) as w:  # fmt: skip
        for i in range(12):
            w.append(messages(2, start=2 * i))
    active = w.path / f"{w.segments[-1]:020d}.index"
    assert active.stat().st_size == 1000
    assert active.with_suffix(".timeindex").stat().st_size == 996
    closed = w.path / f"{w.segments[0]:020d}.index"
    assert closed.stat().st_size % 8 == 0 and 0 < closed.stat().st_size < 1000
    live = index_entries(active)
    written = [e for e in live if e != (0, 0)]
    assert written and live[: len(written)] == written and set(live[len(written) :]) == {(0, 0)}
    assert not list(w.path.glob(f"{w.next_offset:020d}.snapshot"))
    assert w.recovery_point == w.segments[-1]
    assert len(list(kf.iter_records(w.path))) == 24


def test_leader_epochs(tmp_path):
    with PartitionWriter(tmp_path, "t", 0, leader_epoch=2) as w:
        w.append(messages(2))
        w.leader_epoch = 5
        w.append(messages(2))
        w.append(messages(1))
        check = (w.path / "leader-epoch-checkpoint").read_text()
        w.append(messages(1, headers=False), magic=1)  # clears the cache, as UnifiedLog does
        cleared = (w.path / "leader-epoch-checkpoint").read_text()
        w.leader_epoch = 6
        w.append(messages(1))
    assert check == "0\n2\n2 0\n5 2\n"
    assert cleared == "0\n0\n"
    assert (w.path / "leader-epoch-checkpoint").read_text() == "0\n1\n6 6\n"
    assert [b.partition_leader_epoch for b in kf.iter_batches(w.path)] == [2, 5, 5, -1, 6]


def test_compacted_copies_gaps_and_empty_batches(tmp_path):
    p = Producer(11)
    with PartitionWriter(tmp_path, "t", 0, keep_records=True) as w:
        kept = [Message(b"a", b"1", offset_delta=1), Message(b"b", None, offset_delta=4)]
        assert w.append(kept, base_offset=10, last_offset_delta=6, producer=p) == (10, 16)
        assert w.append([], base_offset=20, last_offset_delta=2, producer=p) == (20, 22)
        w.append(messages(1), delete_horizon_ms=99, codec=Codec.GZIP)
        with pytest.raises(ValueError, match="below the log end offset"):
            w.append(messages(1), base_offset=5)
    batches = list(kf.iter_batches(w.path))
    assert [(b.base_offset, b.last_offset, b.records_count) for b in batches] == [
        (10, 16, 2), (20, 22, 0), (23, 23, 1),
    ]  # fmt: skip
    assert batches[2].delete_horizon_ms == 99 and batches[0].delete_horizon_ms is None
    assert (
        [r.offset for r in kf.iter_records(w.path)] == [11, 14, 23] == [r.offset for r in w.records]
    )
    assert [(b.base_sequence, b.last_sequence) for b in batches] == [(0, 6), (7, 9), (-1, -1)]
    peer, offsets = KpMemoryRecords((w.path / "00000000000000000000.log").read_bytes()), []
    while (batch := peer.next_batch()) is not None:
        assert batch.validate_crc()
        offsets += [r.offset for r in batch]
    assert offsets == [11, 14, 23]


def test_java_hashmap_order():
    # Long.hashCode = (int)(v ^ v >>> 32), spread by h ^ h >>> 16, bucket = hash & (n - 1)
    assert java_hashmap_order([1000, 2000]) == [2000, 1000]  # buckets 8 and 0 of 16
    assert java_hashmap_order([17, 1, 33]) == [17, 1, 33]  # one bucket: insertion order
    assert java_hashmap_order([3, 1 << 32]) == [1 << 32, 3]  # 2^32 hashes to 1
    assert java_hashmap_order([2, 65536]) == [65536, 2]  # 65536 spreads to 65537: bucket 1
    assert java_hashmap_order([16, 0]) == [16, 0]  # both in bucket 0 of 16
    keys = [16, *range(12, 0, -1)]  # 13 keys > 0.75 * 16: 32 buckets, 16 has its own
    assert java_hashmap_order(keys) == [*range(1, 13), 16]


def test_argument_errors(tmp_path):
    with PartitionWriter(tmp_path, "t", 0, segment_bytes=500) as w:
        for kwargs, match in (
            ({"codec": Codec.ZSTD, "magic": 1}, "zstd"),
            ({"magic": 3}, "magic"),
            ({"magic": 1, "producer": Producer(1)}, "magic 2"),
        ):
            with pytest.raises(ValueError, match=match):
                w.append(messages(1, headers=False), **kwargs)
        with pytest.raises(ValueError, match="headers"):
            w.append(messages(1), magic=0)
        with pytest.raises(ValueError, match="exceeds segment_bytes"):
            w.append(messages(10, size=100))
        with pytest.raises(ValueError, match="needs records"):
            w.append([])
    with pytest.raises(ValueError, match="closed"):
        w.append(messages(1))
    with pytest.raises(FileExistsError):
        PartitionWriter(tmp_path, "t", 0)


def test_a_segment_fills_up_to_exactly_segment_bytes(tmp_path):
    with PartitionWriter(tmp_path / "probe", "t", 0) as probe:
        probe.append(messages(3))
    size = probe.log_bytes  # the same records make batches of the same size
    with PartitionWriter(tmp_path, "t", 0, segment_bytes=2 * size) as w:
        for _ in range(5):
            w.append(messages(3))
    # LogSegment.shouldRoll: size > segment_bytes - append size, so 2 batches fill a segment
    assert w.segments == [0, 6, 12]
    assert (w.path / "00000000000000000000.log").stat().st_size == 2 * size


def test_snapshot_lists_producers_in_java_hashmap_order(tmp_path):
    with PartitionWriter(tmp_path, "t", 0) as w:
        for pid in (1000, 17, 2000, 1):
            w.append(messages(1), producer=Producer(pid))
    data = (w.path / "00000000000000000004.snapshot").read_bytes()
    pids = [struct.unpack_from(">q", data, 10 + 46 * i)[0] for i in range(4)]
    assert pids == [2000, 17, 1, 1000]  # buckets 0, 1 (then insertion order), 1, 8
