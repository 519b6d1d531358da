"""Partition directories and the broker's look-ups through their indexes (runtime/segment.py).

The directories are written here the way a broker writes them (``LogSegment.append`` in
Kafka 4: for each appended batch, when more than ``index.interval.bytes`` were appended since
the last index entry, an offset index entry (last offset of *this* batch, position of this
batch) and a time index entry (max timestamp so far, last offset of the batch that reached
it) if that timestamp is above the last entry's; on roll, the time index gets the final
max-so-far entry). Batches come from the Construct builders (schemas/) and from kafka-python's
``DefaultRecordBatchBuilder`` (gzip); index files are packed with ``struct``, the snapshot
with ``struct`` and ``crc32c``. Every look-up is compared with a brute-force search over the
records this file put in the log.

Other test files (test_find.py, test_verify.py) load this module's writer by path.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import struct
from dataclasses import dataclass, field
from pathlib import Path

import crc32c
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kafka.record.default_records import DefaultRecordBatchBuilder

from kafka_format.runtime.files.checkpoints import EpochEntry
from kafka_format.runtime.log.partition import Partition, ReadStats
from kafka_format.schemas.control_record_key import build_control_record_key
from kafka_format.schemas.end_txn_marker import build_end_txn_marker
from kafka_format.schemas.record import RecordSpec
from kafka_format.schemas.record_batch import build_record_batch

CORPUS = Path(__file__).resolve().parents[2].parent / "shared" / "corpus"
INDEX_INTERVAL = 4096  # log.index.interval.bytes
T0 = 1_700_000_000_000
ABORT, COMMIT = 0, 1


def corpus_dir(source: str) -> Path:
    folder = CORPUS / source
    if not folder.is_dir():
        if os.environ.get("CI") == "true":
            pytest.fail(f"corpus folder {folder} is missing")
        pytest.skip(f"corpus folder {folder} is absent")
    return folder


# --- a broker-like writer -----------------------------------------------------------------


@dataclass
class Rec:
    """What the writer put in the log: the oracle for every look-up."""

    offset: int
    timestamp: int
    key: bytes | None
    value: bytes | None
    control: int | None  # ABORT / COMMIT for markers
    segment: int  # base offset of the segment
    position: int  # position of the batch


@dataclass
class WrittenBatch:
    segment: int
    position: int
    size: int
    base_offset: int
    last_offset: int
    max_timestamp: int
    producer_id: int
    is_control: bool
    control: int | None


@dataclass
class _Seg:
    base: int
    data: bytearray = field(default_factory=bytearray)
    index: list[tuple[int, int]] = field(default_factory=list)
    timeindex: list[tuple[int, int]] = field(default_factory=list)
    txnindex: list[tuple[int, int, int, int]] = field(default_factory=list)
    bytes_since_entry: int = 0
    max_ts: int = -1
    max_ts_offset: int = -1


class BrokerWriter:
    """Appends batches to a partition directory as ``LogSegment.append`` does."""

    def __init__(self, directory: Path, *, segment_bytes: int = 48 * 1024) -> None:
        self.dir = directory
        self.dir.mkdir(parents=True, exist_ok=True)
        self.segment_bytes = segment_bytes
        self.next_offset = 0
        self.segments: list[_Seg] = [_Seg(0)]
        self.records: list[Rec] = []
        self.batches: list[WrittenBatch] = []
        self.ongoing: dict[int, int] = {}  # producer id -> first offset of its open txn
        self.epochs: list[tuple[int, int]] = []
        self.aborted: list[tuple[int, int, int, int]] = []

    @property
    def active(self) -> _Seg:
        return self.segments[-1]

    def roll(self) -> None:
        self._close_time_index(self.active)
        self.segments.append(_Seg(self.next_offset))

    @staticmethod
    def _close_time_index(seg: _Seg) -> None:
        # onBecomeInactiveSegment: timeIndex.maybeAppend(maxTimestampSoFar, offsetOfMax...)
        last_ts = seg.timeindex[-1][0] if seg.timeindex else -1
        if seg.max_ts > last_ts:
            seg.timeindex.append((seg.max_ts, seg.max_ts_offset))

    def append_raw(self, batch: bytes, *, last_offset: int, max_ts: int, recs, meta) -> None:
        if self.active.data and len(self.active.data) + len(batch) > self.segment_bytes:
            self.roll()
        seg = self.active
        position = len(seg.data)
        seg.data += batch
        if max_ts > seg.max_ts:
            seg.max_ts, seg.max_ts_offset = max_ts, last_offset
        if seg.bytes_since_entry > INDEX_INTERVAL:
            seg.index.append((last_offset, position))
            last_ts = seg.timeindex[-1][0] if seg.timeindex else -1
            if seg.max_ts > last_ts:
                seg.timeindex.append((seg.max_ts, seg.max_ts_offset))
            seg.bytes_since_entry = 0
        seg.bytes_since_entry += len(batch)
        for offset, ts, key, value, control in recs:
            self.records.append(Rec(offset, ts, key, value, control, seg.base, position))
        self.batches.append(
            WrittenBatch(
                seg.base,
                position,
                len(batch),
                meta["base_offset"],
                last_offset,
                max_ts,
                meta.get("producer_id", -1),
                meta.get("is_control", False),
                meta.get("control"),
            )
        )
        self.next_offset = last_offset + 1

    def data_batch(
        self,
        values: list[bytes],
        *,
        timestamps: list[int],
        gaps: list[int] | None = None,
        drop_tail: int = 0,
        producer_id: int = -1,
        transactional: bool = False,
        epoch: int = 0,
    ) -> None:
        """A v2 batch; ``gaps`` are extra offset deltas (compaction); ``drop_tail`` keeps
        last_offset_delta but removes the last records, as the cleaner does."""
        base = self.next_offset
        deltas = []
        d = 0
        for n in range(len(values)):
            d += (gaps[n] if gaps else 0) + (1 if n else 0)
            deltas.append(d)
        last_delta = deltas[-1]
        kept = len(values) - drop_tail
        specs = [
            RecordSpec(
                key=b"k%d" % (base + deltas[n]),
                value=values[n],
                offset_delta=deltas[n],
                timestamp_delta=timestamps[n] - timestamps[0],
                headers=[("h", b"v")] if n % 3 == 0 else [],
            )
            for n in range(kept)
        ]
        if transactional:
            self.ongoing.setdefault(producer_id, base)
        max_ts = max(timestamps[:kept])
        batch = build_record_batch(
            specs,
            base_offset=base,
            partition_leader_epoch=epoch,
            base_timestamp=timestamps[0],
            max_timestamp=max_ts,
            last_offset_delta=last_delta,
            producer_id=producer_id,
            producer_epoch=0 if producer_id >= 0 else -1,
            base_sequence=0 if producer_id >= 0 else -1,
            is_transactional=transactional,
        )
        recs = [
            (base + deltas[n], timestamps[n], b"k%d" % (base + deltas[n]), values[n], None)
            for n in range(kept)
        ]
        self._note_epoch(epoch, base)
        self.append_raw(
            batch,
            last_offset=base + last_delta,
            max_ts=max_ts,
            recs=recs,
            meta={"base_offset": base, "producer_id": producer_id},
        )

    def gzip_batch(self, values: list[bytes], *, timestamp: int, epoch: int = 0) -> None:
        """A gzip batch from kafka-python's builder, offsets assigned as the broker does
        (base offset written over the first 8 bytes, which the CRC does not cover)."""
        builder = DefaultRecordBatchBuilder(
            magic=2,
            compression_type=1,
            is_transactional=False,
            producer_id=-1,
            producer_epoch=-1,
            base_sequence=-1,
            batch_size=1 << 20,
        )
        for n, value in enumerate(values):
            builder.append(n, timestamp=timestamp + n, key=None, value=value, headers=[])
        raw = bytearray(builder.build())
        base = self.next_offset
        raw[0:8] = struct.pack(">q", base)
        struct.pack_into(">i", raw, 12, epoch)  # partition leader epoch is outside the CRC
        recs = [(base + n, timestamp + n, None, v, None) for n, v in enumerate(values)]
        self._note_epoch(epoch, base)
        self.append_raw(
            bytes(raw),
            last_offset=base + len(values) - 1,
            max_ts=timestamp + len(values) - 1,
            recs=recs,
            meta={"base_offset": base},
        )

    def marker(self, producer_id: int, kind: int, *, timestamp: int, epoch: int = 0) -> None:
        """A transaction marker; ABORT adds the .txnindex entry the broker writes."""
        offset = self.next_offset
        first = self.ongoing.pop(producer_id, offset)
        batch = build_record_batch(
            [
                RecordSpec(
                    key=build_control_record_key(kind),
                    value=build_end_txn_marker(coordinator_epoch=3),
                )
            ],
            base_offset=offset,
            partition_leader_epoch=epoch,
            base_timestamp=timestamp,
            producer_id=producer_id,
            producer_epoch=0,
            is_transactional=True,
            is_control=True,
        )
        self.append_raw(
            batch,
            last_offset=offset,
            max_ts=timestamp,
            recs=[
                (
                    offset,
                    timestamp,
                    build_control_record_key(kind),
                    build_end_txn_marker(coordinator_epoch=3),
                    kind,
                )
            ],
            meta={
                "base_offset": offset,
                "producer_id": producer_id,
                "is_control": True,
                "control": kind,
            },
        )
        if kind == ABORT:
            # ProducerStateManager.lastStableOffset: first offset of the earliest other open
            # transaction, else the marker's offset + 1.
            lso = min(self.ongoing.values(), default=offset + 1)
            entry = (producer_id, first, offset, lso)
            self.active.txnindex.append(entry)
            self.aborted.append(entry)

    def _note_epoch(self, epoch: int, offset: int) -> None:
        if not self.epochs or epoch > self.epochs[-1][0]:
            self.epochs.append((epoch, offset))

    def close(self, *, trim_last: bool = True) -> Path:
        """Write every file; the last segment's indexes are trimmed (clean shutdown) unless
        ``trim_last`` is False (then preallocated zeros follow, as on a live broker)."""
        for n, seg in enumerate(self.segments):
            last = n == len(self.segments) - 1
            if last and trim_last:
                self._close_time_index(seg)
            name = f"{seg.base:020d}"
            (self.dir / f"{name}.log").write_bytes(bytes(seg.data))
            index = b"".join(struct.pack(">ii", o - seg.base, p) for o, p in seg.index)
            times = b"".join(struct.pack(">qi", t, o - seg.base) for t, o in seg.timeindex)
            if last and not trim_last:
                index += bytes(8 * 64)
                times += bytes(12 * 64)
            (self.dir / f"{name}.index").write_bytes(index)
            (self.dir / f"{name}.timeindex").write_bytes(times)
            if seg.txnindex:
                (self.dir / f"{name}.txnindex").write_bytes(
                    b"".join(struct.pack(">hqqqq", 0, *t) for t in seg.txnindex)
                )
        lines = ["0", str(len(self.epochs))] + [f"{e} {o}" for e, o in self.epochs]
        (self.dir / "leader-epoch-checkpoint").write_text("\n".join(lines) + "\n")
        (self.dir / f"{self.next_offset:020d}.snapshot").write_bytes(
            snapshot_bytes([(7, 0, 4, self.next_offset - 1, 0, T0, 3, -1)])
        )
        return self.dir


def snapshot_bytes(entries) -> bytes:
    """ProducerSnapshot.json v1: version, crc32c(of the rest), count, 46-byte entries."""
    body = struct.pack(">i", len(entries)) + b"".join(struct.pack(">qhiqiqiq", *e) for e in entries)
    return struct.pack(">hI", 1, crc32c.crc32c(body)) + body


def build_partition(directory: Path, *, seed: int = 7, batches: int = 140, **kw) -> BrokerWriter:
    """A partition with several segments, index entries, compaction gaps, a gzip batch from
    kafka-python, transactions (committed and aborted) and timestamps that go back and forth."""
    rng = random.Random(seed)
    w = BrokerWriter(directory, segment_bytes=kw.pop("segment_bytes", 40 * 1024))
    ts = T0
    for n in range(batches):
        epoch = 0 if n < batches // 2 else 1
        ts += rng.randint(0, 40)
        count = rng.randint(1, 12)
        values = [rng.randbytes(rng.randint(20, 160)) for _ in range(count)]
        # Timestamps jitter backwards within a batch, as producers' CreateTime may.
        stamps = [ts + rng.randint(-30, 30) for _ in range(count)]
        kind = n % 17
        if kind == 5:
            w.gzip_batch(values, timestamp=ts, epoch=epoch)
        elif kind in (7, 8) and count > 2:
            w.data_batch(
                values,
                timestamps=stamps,
                gaps=[0] + [rng.randint(0, 3) for _ in values[1:]],
                drop_tail=1 if kind == 8 else 0,
                epoch=epoch,
            )
        elif kind in (10, 11):
            pid = 1000 + kind
            w.data_batch(
                values, timestamps=stamps, producer_id=pid, transactional=True, epoch=epoch
            )
            if kind == 11:
                w.marker(1010, COMMIT if n % 2 else ABORT, timestamp=ts, epoch=epoch)
                w.marker(1011, ABORT, timestamp=ts + 1, epoch=epoch)
        else:
            w.data_batch(values, timestamps=stamps, epoch=epoch)
    w.close(**kw)
    return w


@pytest.fixture(scope="module")
def written(tmp_path_factory) -> BrokerWriter:
    return build_partition(tmp_path_factory.mktemp("log") / "orders-3")


def brute_offset(w: BrokerWriter, target: int) -> Rec | None:
    return min((r for r in w.records if r.offset >= target), key=lambda r: r.offset, default=None)


def brute_timestamp(w: BrokerWriter, target: int, start: int = 0) -> Rec | None:
    for r in sorted(w.records, key=lambda r: r.offset):
        if r.timestamp >= target and r.offset >= start:
            return r
    return None


def w_entry_position(w: BrokerWriter, segment: int, offset: int) -> int:
    """Position of the index entry the broker's look-up starts from (a linear search)."""
    seg = next(s for s in w.segments if s.base == segment)
    return max((p for o, p in seg.index if o <= offset), default=0)


def same(result, rec: Rec) -> None:
    assert result is not None
    assert result.record.offset == rec.offset
    assert result.record.timestamp == rec.timestamp
    assert result.record.value == rec.value
    assert (result.record.control.type if result.record.control else None) == rec.control
    assert result.segment.base_offset == rec.segment
    assert result.position == rec.position
    assert result.batch.position == rec.position
    assert result.batch.base_offset <= rec.offset <= result.batch.last_offset


# --- opening --------------------------------------------------------------------------------


def test_open_lists_segments_in_order(written):
    p = Partition.open(written.dir)
    assert (p.topic, p.partition) == ("orders", 3)
    assert [s.base_offset for s in p.segments] == [s.base for s in written.segments]
    assert len(p.segments) >= 3
    for seg, mine in zip(p.segments, written.segments, strict=True):
        assert seg.log.name == f"{mine.base:020d}.log"
        assert seg.size == len(mine.data)
        assert seg.index is not None and seg.index.name.endswith(".index")
        assert seg.timeindex is not None
        assert (seg.txnindex is not None) == bool(mine.txnindex)
    assert p.leader_epochs() == [EpochEntry(e, o) for e, o in written.epochs]
    assert [s.offset for s in p.snapshots] == [written.next_offset]
    snap = p.producer_snapshot()
    assert snap.entries[0].producer_id == 7
    assert [
        (t.producer_id, t.first_offset, t.last_offset, t.last_stable_offset)
        for t in p.aborted_transactions()
    ] == written.aborted
    assert written.aborted, "the fixture must abort some transactions"
    assert p.log_start_offset == 0
    assert p.log_end_offset() == written.next_offset


def test_indexes_written_like_the_broker(written):
    # Sanity of the fixture itself: several entries per segment, each at a batch whose last
    # offset is the entry's offset.
    by_position = {(b.segment, b.position): b for b in written.batches}
    entries = 0
    for seg in written.segments:
        for offset, position in seg.index:
            assert by_position[(seg.base, position)].last_offset == offset
            entries += 1
    assert entries >= 10


def test_not_a_partition_name(tmp_path):
    d = tmp_path / "copied"
    d.mkdir()
    (d / "00000000000000000000.log").write_bytes(b"")
    p = Partition.open(d)
    assert (p.topic, p.partition) == (None, None)
    assert [s.base_offset for s in p.segments] == [0]
    assert p.find_offset(0) is None
    assert p.find_timestamp(0) is None
    assert p.log_end_offset() == 0


# --- offset look-ups ------------------------------------------------------------------------


def test_offset_lookup_matches_brute_force(written):
    p = Partition.open(written.dir)
    end = written.next_offset
    targets = sorted({*range(0, end, 7), *(b.last_offset for b in written.batches), end - 1})
    for target in targets:
        result = p.find_offset(target)
        same(result, brute_offset(written, target))
        assert result.used_index
        assert result.index_note is None
    assert p.find_offset(end) is None
    assert p.find_offset(end + 1000) is None
    assert p.find_offset(-1) is None


def test_compacted_offsets_give_the_next_record(written):
    p = Partition.open(written.dir)
    present = {r.offset for r in written.records}
    missing = [o for o in range(written.next_offset) if o not in present]
    assert missing, "the fixture must leave compaction gaps"
    for target in missing:
        result = p.find_offset(target)
        same(result, brute_offset(written, target))
        assert result.record.offset > target


def test_lookup_through_index_reads_less_than_the_segment(written):
    p = Partition.open(written.dir)
    seg = p.segments[1]
    last_in_segment = max(r.offset for r in written.records if r.segment == seg.base_offset)
    result = p.find_offset(last_in_segment)
    assert result.used_index
    # From the last index entry to the target: a few batches, not the segment.
    entry_position = w_entry_position(written, seg.base_offset, last_in_segment)
    assert result.stats.bytes_scanned == result.position + result.batch.size - entry_position
    assert result.stats.bytes_scanned < seg.size / 4
    # Headers of the batches passed over, the whole of the one holding the record.
    assert result.stats.bytes_read <= result.stats.bytes_scanned
    assert result.stats.batches_decoded == 1
    # Without the index the same look-up scans (nearly) the whole segment.
    os.rename(seg.index, seg.index.with_suffix(".moved"))
    try:
        blind = Partition.open(written.dir)
        scanned = blind.find_offset(last_in_segment)
        same(scanned, brute_offset(written, last_in_segment))
        assert not scanned.used_index
        assert "no offset index" in scanned.index_note
        assert scanned.stats.bytes_scanned > result.stats.bytes_scanned * 4
        assert scanned.stats.bytes_scanned >= seg.size - scanned.batch.size * 2
    finally:
        os.rename(seg.index.with_suffix(".moved"), seg.index)
    # Partition-level counters add up every look-up.
    assert p.stats.bytes_read >= result.stats.bytes_read


@pytest.mark.parametrize(
    "damage",
    ["garbage", "moved_forward", "past_end", "partial", "disorder", "missing"],
)
def test_damaged_offset_index_falls_back(tmp_path, damage):
    w = build_partition(tmp_path / "t-0", seed=11, batches=60)
    p = Partition.open(w.dir)
    seg = p.segments[0]
    entries = list(w.segments[0].index)
    assert len(entries) >= 3
    if damage == "garbage":
        seg.index.write_bytes(os.urandom(8 * len(entries)))
    elif damage == "moved_forward":
        # An entry's position moved to a later batch: the batch there ends after its offset.
        (o1, _), (_o2, p2) = entries[0], entries[1]
        entries[0] = (o1, p2)
        entries[1] = (entries[1][0], p2 + 1)  # keep positions increasing
        seg.index.write_bytes(b"".join(struct.pack(">ii", o, q) for o, q in entries))
    elif damage == "past_end":
        entries[-1] = (entries[-1][0], seg.size + 100)
        seg.index.write_bytes(b"".join(struct.pack(">ii", o, q) for o, q in entries))
    elif damage == "partial":
        seg.index.write_bytes(seg.index.read_bytes()[:-3])
    elif damage == "disorder":
        entries[1], entries[2] = entries[2], entries[1]
        seg.index.write_bytes(b"".join(struct.pack(">ii", o, q) for o, q in entries))
    else:
        seg.index.unlink()
    p = Partition.open(w.dir)
    seg_records = [r for r in w.records if r.segment == seg.base_offset]
    fell_back = 0
    for rec in seg_records[:: max(1, len(seg_records) // 40)]:
        result = p.find_offset(rec.offset)
        same(result, brute_offset(w, rec.offset))
        if not result.used_index:
            fell_back += 1
            assert result.index_note
    assert fell_back > 0


def test_set_aside_entries_say_why_in_the_rule_s_words(tmp_path):
    # The note comes from the one rule (files/index_lookup.py) every reader applies.
    w = build_partition(tmp_path / "t-0", seed=11, batches=60)
    seg = w.segments[0]
    batches = [b for b in w.batches if b.segment == seg.base]
    entries = list(seg.index)
    # Entry 1 now claims an offset below the first offset of the batch it points at.
    batch = next(b for b in batches if b.position == entries[1][1])
    assert batch.base_offset - 1 > entries[0][0]
    entries[1] = (batch.base_offset - 1, entries[1][1])
    path = w.dir / f"{seg.base:020d}.index"
    path.write_bytes(b"".join(struct.pack(">ii", o - seg.base, q) for o, q in entries))
    p = Partition.open(w.dir)
    result = p.find_offset(entries[1][0])
    same(result, brute_offset(w, entries[1][0]))
    assert not result.used_index
    assert result.index_note == (
        f"offset index entry ({entries[1][0]}, {entries[1][1]}) points at a batch of offsets "
        f"{batch.base_offset}..{batch.last_offset}, which starts after the entry's offset "
        f"{entries[1][0]}: a read from there would pass over offsets before {batch.base_offset}"
    )
    # The entries around it still hold and are used.
    assert p.find_offset(entries[0][0]).used_index
    assert p.find_offset(entries[2][0]).used_index


def test_an_entry_inside_its_batch_is_used(tmp_path):
    # The log cleaner's entry: the largest offset it retained, inside a rebuilt batch whose
    # header keeps its original last offset. A read from its position misses nothing.
    w = build_partition(tmp_path / "t-0", seed=11, batches=60)
    seg = w.segments[0]
    batches = [b for b in w.batches if b.segment == seg.base]
    entries = list(seg.index)
    n = next(
        i
        for i, (o, q) in enumerate(entries)
        if (b := next(b for b in batches if b.position == q)).base_offset < o
        and (i == 0 or entries[i - 1][0] < b.base_offset)
    )
    batch = next(b for b in batches if b.position == entries[n][1])
    entries[n] = (batch.base_offset, entries[n][1])  # inside: at the batch's first offset
    path = w.dir / f"{seg.base:020d}.index"
    path.write_bytes(b"".join(struct.pack(">ii", o - seg.base, q) for o, q in entries))
    p = Partition.open(w.dir)
    for target in range(batch.base_offset, batch.last_offset + 1):
        result = p.find_offset(target)
        same(result, brute_offset(w, target))
        assert result.used_index, result.index_note


def test_partition_metadata_is_listed(tmp_path, written):
    assert Partition.open(written.dir).partition_metadata is None
    d = tmp_path / "orders-0"
    shutil.copytree(written.dir, d)
    (d / "partition.metadata").write_text("version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAQ\n")
    assert Partition.open(d).partition_metadata == d / "partition.metadata"


# --- timestamp look-ups -----------------------------------------------------------------------


def test_timestamp_lookup_matches_brute_force(written):
    p = Partition.open(written.dir)
    stamps = sorted({r.timestamp for r in written.records})
    targets = [stamps[0] - 1000, *stamps[::5], stamps[-1]]
    targets += [t + 1 for t in stamps[::11]]
    for target in targets:
        result = p.find_timestamp(target)
        expected = brute_timestamp(written, target)
        if expected is None:
            assert result is None
            continue
        same(result, expected)
        assert result.used_index, result.index_note
    assert p.find_timestamp(stamps[-1] + 1) is None


def test_timestamp_lookup_with_starting_offset(written):
    p = Partition.open(written.dir)
    for start in (1, 50, written.next_offset // 2):
        target = written.records[len(written.records) // 3].timestamp
        same(
            p.find_timestamp(target, starting_offset=start),
            brute_timestamp(written, target, start),
        )


def test_timestamp_lookup_reads_less_than_the_log(written):
    p = Partition.open(written.dir)
    last_seg = p.segments[-1]
    rec = [r for r in written.records if r.segment == last_seg.base_offset][-5]
    expected = brute_timestamp(written, rec.timestamp)
    result = p.find_timestamp(rec.timestamp)
    same(result, expected)
    total = sum(s.size for s in p.segments)
    # Closed segments are skipped by their last time index entry: nothing of them is read.
    assert result.stats.bytes_scanned < last_seg.size
    assert result.stats.bytes_read < total / 10


def test_untrimmed_active_segment(tmp_path):
    # A live broker's active segment: indexes preallocated (zeros after the entries) and no
    # final time index entry. Its largest timestamp must come from the log, not the index.
    w = build_partition(tmp_path / "live-0", seed=5, batches=80, trim_last=False)
    p = Partition.open(w.dir)
    assert p.segments[-1].index.stat().st_size > 8 * len(w.segments[-1].index)
    newest = max(w.records, key=lambda r: (r.timestamp, -r.offset))
    same(p.find_timestamp(newest.timestamp), brute_timestamp(w, newest.timestamp))
    for target in sorted({r.timestamp for r in w.records})[::9]:
        same(p.find_timestamp(target), brute_timestamp(w, target))
    same(p.find_offset(w.next_offset - 1), brute_offset(w, w.next_offset - 1))
    assert p.log_end_offset() == w.next_offset


@pytest.mark.parametrize("damage", ["missing", "disorder", "garbage"])
def test_damaged_time_index_falls_back(tmp_path, damage):
    w = build_partition(tmp_path / "t-1", seed=3, batches=60)
    p = Partition.open(w.dir)
    seg = p.segments[0]
    entries = list(w.segments[0].timeindex)
    assert len(entries) >= 3
    if damage == "missing":
        seg.timeindex.unlink()
    elif damage == "disorder":
        entries[0], entries[1] = entries[1], entries[0]
        seg.timeindex.write_bytes(b"".join(struct.pack(">qi", t, o) for t, o in entries))
    else:
        seg.timeindex.write_bytes(bytes(11) + os.urandom(12 * len(entries)))
    p = Partition.open(w.dir)
    fell_back = 0
    for rec in [r for r in w.records if r.segment == seg.base_offset][::7]:
        result = p.find_timestamp(rec.timestamp)
        same(result, brute_timestamp(w, rec.timestamp))
        fell_back += not result.used_index
    assert fell_back > 0


def test_corpus_segment_with_its_time_index(tmp_path):
    # A magic-1 segment written by a 0.10 broker, with the .timeindex it wrote beside it.
    src = corpus_dir("recordupdater")
    d = tmp_path / "hello-0"
    d.mkdir()
    shutil.copy(src / "hello-0.00000000000000000000.log.bin", d / "00000000000000000000.log")
    shutil.copy(
        src / "hello-0.00000000000000000000.timeindex", d / "00000000000000000000.timeindex"
    )
    expected = [
        json.loads(line)
        for line in (src / "hello-0.00000000000000000000.log.jsonl").read_text().splitlines()
    ]
    p = Partition.open(d)
    assert (p.topic, p.partition) == ("hello", 0)
    for row in expected:
        by_offset = p.find_offset(row["offset"])
        assert by_offset.record.offset == row["offset"]
        assert by_offset.record.timestamp == row["timestamp"]
        assert not by_offset.used_index  # there is no .index
        by_time = p.find_timestamp(row["timestamp"])
        first = next(r for r in expected if r["timestamp"] >= row["timestamp"])
        assert by_time.record.offset == first["offset"]
    assert p.largest_timestamp(p.segments[0]) == max(r["timestamp"] for r in expected)


def test_read_stats_add():
    a = ReadStats(1, 2, 3, 4)
    a.add(ReadStats(10, 20, 30, 40))
    assert (a.bytes_read, a.bytes_scanned, a.batches_scanned, a.batches_decoded) == (
        11,
        22,
        33,
        44,
    )


@settings(max_examples=12, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    segment_kib=st.integers(6, 30),
    picks=st.lists(st.floats(0, 1), min_size=1, max_size=8),
)
def test_lookups_on_random_partitions(tmp_path_factory, seed, segment_kib, picks):
    # Any layout (segment size, batch sizes, gaps, transactions) answers like brute force.
    w = build_partition(
        tmp_path_factory.mktemp("prop") / "p-0",
        seed=seed,
        batches=45,
        segment_bytes=segment_kib * 1024,
    )
    p = Partition.open(w.dir)
    stamps = sorted(r.timestamp for r in w.records)
    for pick in picks:
        offset = int(pick * w.next_offset)
        if offset < w.next_offset:
            same(p.find_offset(offset), brute_offset(w, offset))
        target = stamps[min(int(pick * len(stamps)), len(stamps) - 1)] + (seed % 3) - 1
        expected = brute_timestamp(w, target)
        result = p.find_timestamp(target)
        if expected is None:
            assert result is None
        else:
            same(result, expected)
