"""Ranges in the read API: ``iter_records`` / ``read_table`` with offset and time bounds and a
count give what the full read gives, filtered in Python (the oracle: no index, no window).

Logs come from ``generate`` (segments of 16 KiB with their .index/.timeindex, every
scenario: v2 with transactions, v0/v1 wrappers, LogAppendTime, a compacted topic with gaps).
"""

from __future__ import annotations

import io
import itertools
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kafka_format.runtime.errors import KafkaFormatError
from kafka_format.runtime.read.columnar import read_table
from kafka_format.runtime.read.ranges import Range
from kafka_format.runtime.read.reader import iter_batches, iter_records
from kafka_format.runtime.write.generate import generate_log_dir

PARTITIONS = ["orders-0", "orders-2", "legacy-events-0", "clicks-1", "users-0"]


@pytest.fixture(scope="module")
def log_dir(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("ranges") / "logs"
    generate_log_dir(root, seed=7, records=500, segment_bytes=16 * 1024)
    return root


@pytest.fixture(scope="module")
def full(log_dir: Path) -> dict[str, list]:
    return {p: list(iter_records(log_dir / p)) for p in [*PARTITIONS, "."]}


def _log_end(path: Path) -> dict:
    ends: dict = {}
    for batch in iter_batches(path, records=False):
        key = (batch.topic, batch.partition)
        ends[key] = max(ends.get(key, 0), batch.last_offset + 1)
    return ends


def oracle(records, ends, start_offset, end_offset, start_ts, end_ts, max_records):
    """The range's meaning, applied to a full read, partition by partition."""
    groups: dict = {}
    for r in records:
        groups.setdefault((r.topic, r.partition), []).append(r)
    out = []
    for key, recs in groups.items():
        lo, hi = start_offset, end_offset
        if lo is not None and lo < 0:
            lo = max(ends[key] + lo, 0)
        if start_ts is not None:
            hit = [r for r in recs if (lo is None or r.offset >= lo) and _ts(r) >= start_ts]
            if not hit:
                continue
            lo = hit[0].offset
        if end_ts is not None:
            hit = [r for r in recs if (lo is None or r.offset >= lo) and _ts(r) >= end_ts]
            if hit:
                hi = hit[0].offset if hi is None else min(hi, hit[0].offset)
        out += [r for r in recs if (lo is None or r.offset >= lo) and (hi is None or r.offset < hi)]
    return out if max_records is None else out[:max_records]


def _ts(record) -> int:
    return record.timestamp if record.timestamp is not None else -1


def _bounds(draw, records):
    offsets = [r.offset for r in records] or [0]
    stamps = sorted({_ts(r) for r in records}) or [0]
    top = max(offsets) + 3
    start_offset = draw(st.none() | st.integers(0, top) | st.integers(-40, -1))
    end_offset = draw(st.none() | st.integers(0, top))
    near = st.sampled_from(stamps) | st.integers(stamps[0] - 5, stamps[-1] + 5)
    start_ts = draw(st.none() | near)
    end_ts = draw(st.none() | near)
    max_records = draw(st.none() | st.integers(0, 60))
    return start_offset, end_offset, start_ts, end_ts, max_records


def _kwargs(bounds) -> dict:
    names = ["start_offset", "end_offset", "start_timestamp", "end_timestamp", "max_records"]
    return dict(zip(names, bounds, strict=True))


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.data())
def test_iter_records_range_is_the_full_read_filtered(log_dir, full, data):
    part = data.draw(st.sampled_from([*PARTITIONS, "."]))
    bounds = _bounds(data.draw, full[part])
    want = oracle(full[part], _log_end(log_dir / part), *bounds)
    got = list(iter_records(log_dir / part, **_kwargs(bounds)))
    assert [(r.topic, r.partition, r.offset) for r in got] == [
        (r.topic, r.partition, r.offset) for r in want
    ]
    assert [(r.key, r.value, r.timestamp) for r in got] == [
        (r.key, r.value, r.timestamp) for r in want
    ]


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.data())
def test_read_table_range_is_iter_records_range(log_dir, full, data):
    part = data.draw(st.sampled_from([*PARTITIONS, "."]))
    bounds = _bounds(data.draw, full[part])
    want = oracle(full[part], _log_end(log_dir / part), *bounds)
    table = read_table(log_dir / part, **_kwargs(bounds))
    assert table.column("offset").to_pylist() == [r.offset for r in want]
    assert table.column("partition").to_pylist() == [r.partition for r in want]
    assert table.column("value").to_pylist() == [r.value for r in want]


def test_read_committed_range_keeps_the_committed_records_of_the_range(log_dir):
    path = log_dir / "orders-0"
    ranged = [r.offset for r in iter_records(path, start_offset=120, end_offset=420)]
    committed = [r.offset for r in iter_records(path, isolation="read_committed")]
    want = [o for o in committed if o in set(ranged)]
    got = [
        r.offset
        for r in iter_records(path, isolation="read_committed", start_offset=120, end_offset=420)
    ]
    assert got == want and len(want) < len(ranged)
    table = read_table(path, isolation="read_committed", start_offset=120, end_offset=420)
    assert table.column("offset").to_pylist() == want


def test_a_range_decodes_only_the_batches_it_overlaps(log_dir):
    """iter_batches with a range: the batches overlapping it, their records narrowed."""
    path = log_dir / "orders-0"
    batches = list(iter_batches(path, start_offset=200, end_offset=230))
    assert batches and all(b.last_offset >= 200 and b.base_offset < 230 for b in batches)
    data = [r.offset for b in batches if not b.is_control for r in b.records]
    assert data and all(200 <= o < 230 for o in data)
    every = [b for b in iter_batches(path, records=False)]
    overlapping = [b for b in every if b.last_offset >= 200 and b.base_offset < 230]
    assert [b.position for b in batches] == [b.position for b in overlapping]


def test_the_index_leads_to_the_start(log_dir, monkeypatch):
    """The window of a late offset starts at the index entry's position, not at 0."""
    from kafka_format.runtime.read import ranges
    from kafka_format.runtime.read.sources import resolve

    inputs = resolve(log_dir / "orders-0")
    target = inputs[-2].base_offset + 30
    found = list(ranges.windows(inputs, Range.of(start_offset=target, end_offset=target + 5)))
    assert len(found) == 1 and found[0].log.name == inputs[-2].name
    assert found[0].start > 0 and found[0].end is not None


def test_a_damaged_index_is_set_aside(log_dir, tmp_path):
    """An offset index entry pointing inside a batch is not followed: the result holds."""
    part = tmp_path / "orders-0"
    shutil.copytree(log_dir / "orders-0", part)
    want = [r.offset for r in iter_records(part, start_offset=150, end_offset=180)]
    for index in part.glob("*.index"):
        raw = bytearray(index.read_bytes())
        for slot in range(0, len(raw) - 7, 8):
            if raw[slot : slot + 8] != bytes(8):
                position = int.from_bytes(raw[slot + 4 : slot + 8], "big")
                raw[slot + 4 : slot + 8] = (position + 5).to_bytes(4, "big")
        index.write_bytes(bytes(raw))
    assert [r.offset for r in iter_records(part, start_offset=150, end_offset=180)] == want
    assert read_table(part, start_offset=150, end_offset=180).column("offset").to_pylist() == want


def test_streams_and_bytes_take_ranges(log_dir):
    segment = sorted((log_dir / "orders-0").glob("*.log"))[1]
    data = segment.read_bytes()
    want = [r.offset for r in iter_records(data)][5:12]
    lo, hi = want[0], want[-1] + 1
    assert [r.offset for r in iter_records(io.BytesIO(data), start_offset=lo, end_offset=hi)] == [
        o for o in [r.offset for r in iter_records(data)] if lo <= o < hi
    ]
    table = read_table(io.BufferedReader(io.BytesIO(data)), start_offset=lo, end_offset=hi)
    assert table.column("offset").to_pylist() == [
        o for o in [r.offset for r in iter_records(data)] if lo <= o < hi
    ]


@pytest.mark.parametrize(
    "kwargs, error",
    [
        (dict(end_offset=-1), ValueError),
        (dict(max_records=-2), ValueError),
        (dict(start_offset="5"), TypeError),
        (dict(start_timestamp=1.5), TypeError),
    ],
)
def test_bad_bounds_are_refused(log_dir, kwargs, error):
    with pytest.raises(error):
        list(iter_records(log_dir / "orders-0", **kwargs))
    with pytest.raises(error):
        read_table(log_dir / "orders-0", **kwargs)


def test_no_bound_is_no_range():
    assert Range.of() is None
    assert Range.of(max_records=0) == Range(max_records=0)


def test_corpus_ranges_are_the_corpus_records_in_range(valid_corpus_set):
    """Bytes real brokers and clients wrote: a range read is the corpus's own expected records
    (its .jsonl, written by the peers) in that range."""
    expected = valid_corpus_set.expected()
    if not expected:
        pytest.skip("no records in this set")
    data = valid_corpus_set.data()
    offsets = [r["offset"] for r in expected]
    if any(b <= a for a, b in itertools.pairwise(offsets)):
        pytest.skip("offsets do not increase (test batches side by side): no broker's log")
    lo, hi = offsets[len(offsets) // 3], offsets[2 * len(offsets) // 3] + 1
    want = [o for o in offsets if lo <= o < hi]
    assert [r.offset for r in iter_records(data, start_offset=lo, end_offset=hi)] == want
    table = read_table(data, start_offset=lo, end_offset=hi)
    assert table.column("offset").to_pylist() == want
    stamps = [r["timestamp"] for r in expected if r["timestamp"] is not None]
    if stamps:
        target = sorted(stamps)[len(stamps) // 2]
        first = next(
            i
            for i, r in enumerate(expected)
            if r["timestamp"] is not None and r["timestamp"] >= target
        )
        want = offsets[first : first + 5]
        got = [r.offset for r in iter_records(data, start_timestamp=target, max_records=5)]
        assert got == want
        assert (
            read_table(data, start_timestamp=target, max_records=5).column("offset").to_pylist()
            == want
        )


def test_reading_stops_where_the_range_ends(log_dir, tmp_path):
    """Damage after the range's end is never read: strict reads of the range succeed."""
    part = tmp_path / "orders-0"
    shutil.copytree(log_dir / "orders-0", part)
    last = sorted(part.glob("*.log"))[-1]
    raw = bytearray(last.read_bytes())
    raw[-30:] = bytes(30)  # the last batch's records no longer hold their CRC
    last.write_bytes(bytes(raw))
    with pytest.raises(KafkaFormatError, match=r"(?i)crc"):
        list(iter_records(part))
    end = int(last.name.split(".")[0])
    want = [r.offset for r in iter_records(log_dir / "orders-0", end_offset=end)]
    assert [r.offset for r in iter_records(part, end_offset=end)] == want
    assert read_table(part, end_offset=end).column("offset").to_pylist() == want
    # The count ends the read as well.
    assert len(list(iter_records(part, max_records=10))) == 10


def test_batches_outside_the_range_are_not_decoded(log_dir):
    """One segment's bytes, no index: a batch before the range whose CRC fails is passed over
    on its header alone, by both readers, in strict mode."""
    data = bytearray(sorted((log_dir / "orders-0").glob("*.log"))[0].read_bytes())
    batches = list(iter_batches(bytes(data), records=False))
    first = batches[0]
    data[first.position + first.size - 1] ^= 0xFF  # its last byte: the CRC no longer holds
    with pytest.raises(KafkaFormatError, match=r"(?i)crc"):
        read_table(bytes(data))
    lo = batches[1].base_offset
    want = [r.offset for r in iter_records(bytes(data), errors="skip") if r.offset >= lo]
    assert [r.offset for r in iter_records(bytes(data), start_offset=lo)] == want
    assert read_table(bytes(data), start_offset=lo).column("offset").to_pylist() == want


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.data())
def test_read_committed_ranges_are_the_committed_read_filtered(log_dir, full, data):
    """The range is resolved on the log's data records; read_committed then drops what a
    read_committed consumer drops, and the count applies to what is left."""
    part = data.draw(st.sampled_from(["orders-0", "orders-2"]))
    bounds = _bounds(data.draw, full[part])
    *unbounded, count = bounds
    inside = {r.offset for r in oracle(full[part], _log_end(log_dir / part), *unbounded, None)}
    committed = [r.offset for r in iter_records(log_dir / part, isolation="read_committed")]
    want = [o for o in committed if o in inside][:count]
    kwargs = _kwargs(bounds)
    got = [r.offset for r in iter_records(log_dir / part, isolation="read_committed", **kwargs)]
    assert got == want
    table = read_table(log_dir / part, isolation="read_committed", **kwargs)
    assert table.column("offset").to_pylist() == want
