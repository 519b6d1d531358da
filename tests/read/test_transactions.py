"""Transactions: read_committed against what the test itself committed and aborted.

Data batches come from kafka-python's DefaultRecordBatchBuilder (is_transactional, producer
id, epoch, sequence); control batches (ABORT / COMMIT markers) and .txnindex files are
written here by hand with struct and crc32c. Each generated history knows which producer's
records it committed, aborted or left open: that, not the runtime, gives the expectation.

KF_TXN_EXAMPLES=1000 runs the generated histories longer than the suite's default (60).
"""

from __future__ import annotations

import io
import itertools
import os
import struct
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from crc32c import crc32c
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kafka.record.default_records import DefaultRecordBatchBuilder

import kafka_format as kf

TXN_PRODUCERS = (4001, 4002, 4003)
IDEMPOTENT = 5001  # a producer id, but not transactional
PLAIN = -1  # no producer id at all
EPOCH = 7
COORDINATOR_EPOCH = 12
T0 = 1_700_000_000_000


def zigzag_varint(n: int) -> bytes:
    z = (n << 1) ^ (n >> 63)
    out = bytearray()
    while True:
        out.append((z & 0x7F) | (0x80 if z > 0x7F else 0))
        z >>= 7
        if not z:
            return bytes(out)


def control_batch(
    base_offset: int, producer_id: int, *, commit: bool, timestamp: int, control_type=None
) -> bytes:
    """A broker's transaction marker: one control record, key (version 0, type), value
    (version 0, coordinator epoch); attributes control | transactional."""
    ctype = (1 if commit else 0) if control_type is None else control_type
    key = struct.pack(">hh", 0, ctype)
    value = struct.pack(">hi", 0, COORDINATOR_EPOCH)
    body = (
        b"\x00"  # record attributes
        + zigzag_varint(0)  # timestamp delta
        + zigzag_varint(0)  # offset delta
        + zigzag_varint(len(key))
        + key
        + zigzag_varint(len(value))
        + value
        + zigzag_varint(0)  # headers
    )
    record = zigzag_varint(len(body)) + body
    attributes = 0x20 | 0x10
    after_crc = (
        struct.pack(">hiqqqhii", attributes, 0, timestamp, timestamp, producer_id, EPOCH, -1, 1)
        + record
    )
    head = struct.pack(">qiibI", base_offset, 9 + len(after_crc), 0, 2, crc32c(after_crc))
    return head + after_crc


def data_batch(
    base_offset: int, producer_id: int, values: list[bytes], *, sequence: int, codec: int = 0
) -> bytes:
    transactional = producer_id in TXN_PRODUCERS
    has_pid = producer_id != PLAIN
    builder = DefaultRecordBatchBuilder(
        2,
        codec,
        transactional,
        producer_id,
        EPOCH if has_pid else -1,
        sequence if has_pid else -1,
        1 << 30,
    )
    for i, value in enumerate(values):
        builder.append(i, T0 + base_offset + i, f"k{producer_id}".encode(), value, [])
    built = bytearray(builder.build())
    struct.pack_into(">q", built, 0, base_offset)  # as the broker assigns it
    return bytes(built)


@dataclass
class History:
    """A partition's log as written, and what each reader must see of it."""

    frames: list[bytes] = field(default_factory=list)
    #: (base offset, last offset) of every frame
    spans: list[tuple[int, int]] = field(default_factory=list)
    all_values: list[bytes] = field(default_factory=list)
    committed_values: list[bytes] = field(default_factory=list)
    #: (producer id, first offset, last offset) of every aborted transaction
    aborted: list[tuple[int, int, int]] = field(default_factory=list)
    markers: int = 0
    #: The first offset of the earliest transaction left open (None: all ended): a
    #: read_committed consumer reads nothing from there on (UnifiedLog's last stable offset).
    stable_offset: int | None = None

    @property
    def log(self) -> bytes:
        return b"".join(self.frames)


def write_history(steps: list[tuple], codec_of=lambda i: 0) -> History:
    """Play ``steps``: ("data", producer, n) or ("end", producer, commit).

    Values name their producer, transaction and index, so the expectation is a filter over
    what was written: a value is committed when its transaction was committed, or when it
    was not written in a transaction at all.
    """
    h = History()
    offset = 0
    txn_no = dict.fromkeys(TXN_PRODUCERS, 0)
    open_txn: dict[int, tuple[int, list[int]]] = {}  # producer -> (first offset, value idx)
    sequences: dict[int, int] = {}
    for step in steps:
        kind, producer, arg = step
        if kind == "data":
            values = [
                f"p{producer}-t{txn_no.get(producer, 0)}-o{offset + i}".encode() for i in range(arg)
            ]
            frame = data_batch(
                offset,
                producer,
                values,
                sequence=sequences.get(producer, 0),
                codec=codec_of(len(h.frames)),
            )
            sequences[producer] = sequences.get(producer, 0) + arg
            start = len(h.all_values)
            h.all_values.extend(values)
            if producer in TXN_PRODUCERS:
                first, idx = open_txn.setdefault(producer, (offset, []))
                idx.extend(range(start, start + arg))
            else:
                h.committed_values.extend(values)
            h.frames.append(frame)
            h.spans.append((offset, offset + arg - 1))
            offset += arg
        else:
            if producer not in open_txn:
                continue
            first, idx = open_txn.pop(producer)
            commit = arg
            h.frames.append(control_batch(offset, producer, commit=commit, timestamp=T0 + offset))
            h.spans.append((offset, offset))
            h.markers += 1
            if commit:
                h.committed_values.extend(h.all_values[i] for i in idx)
            else:
                h.aborted.append((producer, first, offset))
            offset += 1
            txn_no[producer] += 1
    # Committed values in log order (a commit makes earlier-written values visible), up to
    # the last stable offset.
    order = {v: i for i, v in enumerate(h.all_values)}
    h.committed_values.sort(key=order.__getitem__)
    if open_txn:
        h.stable_offset = min(first for first, _ in open_txn.values())
        h.committed_values = [
            v for v in h.committed_values if int(v.rsplit(b"-o", 1)[1]) < h.stable_offset
        ]
    return h


steps_strategy = st.lists(
    st.one_of(
        st.tuples(
            st.just("data"),
            st.sampled_from((*TXN_PRODUCERS, IDEMPOTENT, PLAIN)),
            st.integers(1, 3),
        ),
        st.tuples(st.just("end"), st.sampled_from(TXN_PRODUCERS), st.booleans()),
    ),
    min_size=1,
    max_size=25,
)

TXN = settings(
    max_examples=int(os.environ.get("KF_TXN_EXAMPLES", "60")),
    deadline=2000,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)


def values(records) -> list[bytes]:
    return [r.value for r in records]


def write_partition(directory: Path, h: History, cuts: list[int], *, txnindex: bool = True) -> None:
    """Segments cut before the frames at ``cuts``; each segment's .txnindex lists the aborted
    transactions whose ABORT marker it holds (as the broker writes it)."""
    directory.mkdir(parents=True, exist_ok=True)
    if not h.frames:
        (directory / f"{0:020d}.log").write_bytes(b"")
        return
    bounds = [0, *sorted(set(c for c in cuts if 0 < c < len(h.frames))), len(h.frames)]
    for start, end in itertools.pairwise(bounds):
        base = h.spans[start][0]
        name = f"{base:020d}"
        (directory / f"{name}.log").write_bytes(b"".join(h.frames[start:end]))
        if not txnindex:
            continue
        seg_first, seg_last = h.spans[start][0], h.spans[end - 1][1]
        entries = [
            struct.pack(">hqqqq", 0, pid, first, last, first)
            for pid, first, last in h.aborted
            if seg_first <= last <= seg_last
        ]
        if entries:
            (directory / f"{name}.txnindex").write_bytes(b"".join(entries))


@TXN
@given(steps=steps_strategy, codecs=st.lists(st.sampled_from([0, 1]), min_size=30, max_size=30))
def test_generated_histories(steps, codecs):
    h = write_history(steps, codec_of=lambda i: codecs[i % len(codecs)])
    uncommitted = list(kf.iter_records(h.log))
    assert values(uncommitted) == h.all_values
    assert all(r.control is None for r in uncommitted)
    committed = list(kf.iter_records(h.log, isolation="read_committed"))
    assert values(committed) == h.committed_values
    assert all(r.control is None for r in committed)
    # Through a stream (read twice internally) the same.
    streamed = kf.iter_records(io.BytesIO(h.log), isolation="read_committed")
    assert values(streamed) == h.committed_values
    # The markers are there, decoded, for whoever asks for batches.
    markers = [b for b in kf.iter_batches(h.log) if b.is_control]
    assert len(markers) == h.markers
    for batch in markers:
        (record,) = batch.records
        assert record.control.type in (kf.ControlType.ABORT, kf.ControlType.COMMIT)
        assert record.control.coordinator_epoch == COORDINATOR_EPOCH
        assert batch.producer_id in TXN_PRODUCERS and batch.producer_epoch == EPOCH


@TXN
@given(steps=steps_strategy, cut_points=st.lists(st.integers(1, 40), max_size=4))
def test_generated_histories_in_partition_directories(tmp_path_factory, steps, cut_points):
    h = write_history(steps)
    for with_index in (True, False):
        partition = tmp_path_factory.mktemp("log") / "orders-3"
        write_partition(partition, h, cut_points, txnindex=with_index)
        committed = list(kf.iter_records(partition, isolation="read_committed"))
        assert values(committed) == h.committed_values
        assert {(r.topic, r.partition) for r in committed} <= {("orders", 3)}
        assert values(kf.iter_records(partition)) == h.all_values


def test_aborted_transaction_spanning_batches_interleaved():
    """Producer A aborts a transaction of three batches while B commits one around it and
    non-transactional records land in between; then A commits a second transaction."""
    a, b = TXN_PRODUCERS[:2]
    h = write_history(
        [
            ("data", a, 2),
            ("data", b, 1),
            ("data", a, 3),
            ("data", PLAIN, 1),
            ("data", b, 2),
            ("data", a, 1),
            ("end", b, True),
            ("end", a, False),
            ("data", a, 2),
            ("data", IDEMPOTENT, 1),
            ("end", a, True),
        ]
    )
    committed = values(kf.iter_records(h.log, isolation="read_committed"))
    assert committed == h.committed_values
    assert not any(v.startswith(f"p{a}-t0".encode()) for v in committed)
    assert sum(v.startswith(f"p{a}-t1".encode()) for v in committed) == 2
    assert sum(v.startswith(f"p{b}-t0".encode()) for v in committed) == 3
    assert len(values(kf.iter_records(h.log))) == 2 + 1 + 3 + 1 + 2 + 1 + 2 + 1


def test_open_transaction_at_the_end():
    """A transaction with no marker yet holds the last stable offset at its first offset: a
    read_committed consumer reads nothing from there on, not even what other producers wrote
    and committed after it (UnifiedLog: the LSO is the first offset of the earliest open
    transaction; FetchIsolation.TXN_COMMITTED reads up to it)."""
    a, b = TXN_PRODUCERS[:2]
    h = write_history(
        [("data", PLAIN, 1), ("data", a, 2), ("data", b, 1), ("end", b, True), ("data", PLAIN, 2)]
    )
    assert h.stable_offset == 1
    committed = values(kf.iter_records(h.log, isolation="read_committed"))
    assert committed == [b"p-1-t0-o0"]
    table = kf.read_table(h.log, isolation="read_committed")
    assert table.column("value").to_pylist() == committed


def test_lso_example_from_the_issue():
    """plain 0, open transaction 1, plain 2, committed transaction 3, its marker 4, plain 5:
    Kafka's read_committed fetch returns offset 0 only."""
    a, b = TXN_PRODUCERS[:2]
    h = write_history(
        [
            ("data", PLAIN, 1),
            ("data", a, 1),
            ("data", PLAIN, 1),
            ("data", b, 1),
            ("end", b, True),
            ("data", PLAIN, 1),
        ]
    )
    assert h.spans == [(0, 0), (1, 1), (2, 2), (3, 3), (4, 4), (5, 5)]
    offsets = [r.offset for r in kf.iter_records(h.log, isolation="read_committed")]
    assert offsets == [0]
    table = kf.read_table(h.log, isolation="read_committed")
    assert table.column("offset").to_pylist() == [0]
    # read_uncommitted still sees every data record
    assert [r.offset for r in kf.iter_records(h.log)] == [0, 1, 2, 3, 5]


def test_segment_read_alone_looks_ahead_for_its_markers(tmp_path):
    """A transaction opened in one segment and committed in the next is committed: reading
    the first segment alone must not take it for open (nor stop at it)."""
    a = TXN_PRODUCERS[0]
    h = write_history([("data", PLAIN, 1), ("data", a, 2), ("data", PLAIN, 1), ("end", a, True)])
    partition = tmp_path / "orders-0"
    write_partition(partition, h, [3])  # the COMMIT marker opens the second segment
    first = partition / f"{0:020d}.log"
    expected = [b"p-1-t0-o0", f"p{a}-t0-o1".encode(), f"p{a}-t0-o2".encode(), b"p-1-t0-o3"]
    assert values(kf.iter_records(first, isolation="read_committed")) == expected
    table = kf.read_table(first, isolation="read_committed")
    assert table.column("value").to_pylist() == expected
    # ... and when the later segment aborts it, its records are dropped, the rest kept.
    h2 = write_history([("data", PLAIN, 1), ("data", a, 2), ("data", PLAIN, 1), ("end", a, False)])
    other = tmp_path / "orders-1"
    write_partition(other, h2, [3], txnindex=False)
    first = other / f"{0:020d}.log"
    assert values(kf.iter_records(first, isolation="read_committed")) == [
        b"p-1-t0-o0",
        b"p-1-t0-o3",
    ]
    assert kf.read_table(first, isolation="read_committed").column("offset").to_pylist() == [0, 3]


def test_txnindex_is_read_from_the_partition_directory(tmp_path):
    """The .txnindex entry names the aborted transaction; it agrees with the marker."""
    a, b = TXN_PRODUCERS[:2]
    h = write_history([("data", a, 2), ("data", b, 2), ("end", a, False), ("end", b, True)])
    partition = tmp_path / "t-0"
    write_partition(partition, h, [])
    index = (partition / f"{0:020d}.txnindex").read_bytes()
    assert len(index) == 34
    assert struct.unpack(">hqqqq", index) == (0, a, 0, 4, 0)
    committed = values(kf.iter_records(partition, isolation="read_committed"))
    assert committed == [f"p{b}-t0-o{o}".encode() for o in (2, 3)]


def test_txnindex_names_an_abort_whose_marker_is_damaged(tmp_path):
    """Skip mode, ABORT marker with a broken CRC: the .txnindex still says the transaction
    was aborted, so its records stay hidden; the producer's next transaction is committed
    and must still be seen."""
    a, b = TXN_PRODUCERS[:2]
    h = write_history(
        [
            ("data", a, 2),
            ("data", b, 1),
            ("end", a, False),
            ("end", b, True),
            ("data", a, 2),
            ("end", a, True),
        ]
    )
    abort_at = sum(len(f) for f in h.frames[:2])
    buf = bytearray(h.log)
    buf[abort_at + 17] ^= 0x55  # the stored CRC of the ABORT marker
    partition = tmp_path / "t-1"
    partition.mkdir()
    (partition / f"{0:020d}.log").write_bytes(bytes(buf))
    pid, first, last = h.aborted[0]
    (partition / f"{0:020d}.txnindex").write_bytes(struct.pack(">hqqqq", 0, pid, first, last, 0))
    report = kf.Report()
    committed = values(
        kf.iter_records(partition, isolation="read_committed", errors="skip", report=report)
    )
    assert [e.position for e in report.errors] == [abort_at]
    assert committed == h.committed_values


def test_control_records_never_appear_and_other_control_types():
    """KRaft-style control types (LEADER_CHANGE) are not data either; no data record carries
    a control marker, under either isolation."""
    a = TXN_PRODUCERS[0]
    leader_change = control_batch(3, a, commit=False, timestamp=T0, control_type=2)
    log = (
        data_batch(0, PLAIN, [b"x", b"y", b"z"], sequence=0)
        + leader_change
        + data_batch(4, PLAIN, [b"w"], sequence=0)
    )
    for isolation in ("read_uncommitted", "read_committed"):
        got = list(kf.iter_records(log, isolation=isolation))
        assert values(got) == [b"x", b"y", b"z", b"w"]
        assert all(r.control is None for r in got)
    (marker,) = [b for b in kf.iter_batches(log) if b.is_control]
    assert marker.records[0].control.type == kf.ControlType.LEADER_CHANGE


@pytest.mark.parametrize("isolation", ["read_uncommitted", "read_committed"])
def test_committed_marker_alone_drops_nothing(isolation):
    """Markers for transactions whose data lies before the log start (deleted segments)."""
    a = TXN_PRODUCERS[0]
    log = control_batch(10, a, commit=False, timestamp=T0) + data_batch(
        11, a, [b"later"], sequence=5
    )
    log += control_batch(12, a, commit=True, timestamp=T0)
    assert values(kf.iter_records(log, isolation=isolation)) == [b"later"]
