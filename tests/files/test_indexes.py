"""Offset and time index readers (runtime/indexes.py).

Index files are built here with struct.pack in Kafka's layouts (OffsetIndex: relative offset
int32 + position int32; TimeIndex: timestamp int64 + relative offset int32), including the
zero-filled preallocated tails Kafka leaves on an active segment; look-ups are compared with a
linear search over the entries the test itself put in the file.
"""

from __future__ import annotations

import itertools
import json
import os
import struct
import time
from pathlib import Path

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from kafka_format.runtime.errors import IndexFileError, KafkaFormatError
from kafka_format.runtime.files.indexes import (
    NO_TIMESTAMP,
    OffsetIndex,
    OffsetPosition,
    TimeIndex,
    TimestampOffset,
    timestamp_scan_start,
)

CORPUS = Path(__file__).resolve().parents[2].parent / "shared" / "corpus"
INT32_MAX = (1 << 31) - 1
DEFAULT_MAX_INDEX_SIZE = 10 * 1024 * 1024  # segment.index.bytes


def corpus_dir(source: str) -> Path:
    folder = CORPUS / source
    if not folder.is_dir():
        if os.environ.get("CI") == "true":
            pytest.fail(f"corpus folder {folder} is missing")
        pytest.skip(f"corpus folder {folder} is absent")
    return folder


def offset_index_bytes(base, entries, zero_slots=0):
    body = b"".join(struct.pack(">ii", offset - base, pos) for offset, pos in entries)
    return body + bytes(8 * zero_slots)


def time_index_bytes(base, entries, zero_slots=0):
    body = b"".join(struct.pack(">qi", ts, offset - base) for ts, offset in entries)
    return body + bytes(12 * zero_slots)


def brute_offset_lookup(base, entries, target):
    best = OffsetPosition(base, 0)
    for offset, pos in entries:
        if offset <= target:
            best = OffsetPosition(offset, pos)
    return best


def brute_time_lookup(base, entries, target):
    best = TimestampOffset(NO_TIMESTAMP, base)
    for ts, offset in entries:
        if ts <= target:
            best = TimestampOffset(ts, offset)
    return best


BASE = 1000
OFFSETS = [(1003, 4150), (1010, 8400), (1025, 12900), (1040, 17000)]
TIMES = [(1_700_000_000_000, 1003), (1_700_000_000_500, 1010), (1_700_000_001_000, 1010)]


# --- offset index -----------------------------------------------------------------------------


def test_trimmed_offset_index():
    index = OffsetIndex.from_bytes(offset_index_bytes(BASE, OFFSETS), BASE)
    assert (index.entries, index.kafka_entries, index.zero_tail_slots) == (4, 4, 0)
    assert list(index) == [OffsetPosition(o, p) for o, p in OFFSETS]
    assert index[-1] == index.last_entry() == OffsetPosition(1040, 17000)
    assert index.lookup(999) == OffsetPosition(BASE, 0)  # below the base offset
    assert index.lookup(1002) == OffsetPosition(BASE, 0)  # below the first entry
    assert index.lookup(1003) == OffsetPosition(1003, 4150)
    assert index.lookup(1024) == OffsetPosition(1010, 8400)
    assert index.lookup(1 << 62) == OffsetPosition(1040, 17000)
    index.sanity_check()


def test_preallocated_zero_tail_is_not_entries():
    # An active segment's index as a live broker (or a crash) leaves it: Kafka's
    # AbstractIndex would count every slot; the real entries stop before the zeros.
    data = offset_index_bytes(BASE, OFFSETS, zero_slots=1000)
    index = OffsetIndex.from_bytes(data, BASE)
    assert index.kafka_entries == 1004
    assert (index.entries, index.zero_tail_slots) == (4, 1000)
    assert index.lookup(5000) == OffsetPosition(1040, 17000)
    assert index.problem is None


def test_empty_and_fresh_offset_indexes():
    for data in (b"", bytes(8), bytes(DEFAULT_MAX_INDEX_SIZE)):
        index = OffsetIndex.from_bytes(data, BASE)
        assert index.entries == 0
        assert index.kafka_entries == len(data) // 8
        assert index.last_entry() == OffsetPosition(BASE, 0)
        assert index.lookup(BASE + 10) == OffsetPosition(BASE, 0)
        assert index.fetch_upper_bound_offset(0, 100) is None


def test_full_size_index_is_not_copied_and_opens_fast():
    data = bytearray(DEFAULT_MAX_INDEX_SIZE)
    data[:32] = offset_index_bytes(BASE, OFFSETS)
    started = time.perf_counter()
    index = OffsetIndex.from_bytes(data, BASE)
    assert time.perf_counter() - started < 1.0
    assert index.entries == 4
    assert np.shares_memory(index.positions, np.frombuffer(data, dtype=np.uint8))


def test_partial_trailing_bytes():
    data = offset_index_bytes(BASE, OFFSETS) + b"\x00\x00\x00"
    with pytest.raises(IndexFileError) as caught:
        OffsetIndex.from_bytes(data, BASE, file="x.index")
    assert caught.value.position == 32
    assert caught.value.file == "x.index"
    assert caught.value.base_offset == BASE
    # Kafka's constructor rounds the length down to whole entries and reads on.
    lenient = OffsetIndex.from_bytes(data, BASE, strict=False)
    assert lenient.entries == 4 and lenient.lookup(1030) == OffsetPosition(1025, 12900)
    with pytest.raises(IndexFileError):
        lenient.sanity_check()


@pytest.mark.parametrize(
    ("entries", "bad_slot"),
    [
        ([(1003, 10), (1003, 20)], 1),  # offset repeats
        ([(1003, 10), (1010, 20), (1005, 30)], 2),  # offset goes back
        ([(1003, 10), (1010, 10)], 1),  # position repeats
        ([(1003, 10), (1010, 5)], 1),  # position goes back
        ([(999, 10)], 0),  # below the base offset: Kafka's sanityCheck
        ([(1003, -4)], 0),  # negative position
    ],
)
def test_disordered_offset_index(entries, bad_slot):
    data = offset_index_bytes(BASE, entries)
    with pytest.raises(IndexFileError) as caught:
        OffsetIndex.from_bytes(data, BASE)
    assert caught.value.position == bad_slot * 8
    lenient = OffsetIndex.from_bytes(data, BASE, strict=False)
    assert lenient.entries == bad_slot
    assert lenient.problem is not None and lenient.problem.position == bad_slot * 8


def test_hole_of_zeros_before_real_entries_is_an_error():
    # A page that never reached the disk, followed by entries that did.
    data = offset_index_bytes(BASE, OFFSETS[:2]) + bytes(8) + offset_index_bytes(BASE, OFFSETS[2:])
    with pytest.raises(IndexFileError) as caught:
        OffsetIndex.from_bytes(data, BASE)
    assert caught.value.position == 16


def test_fetch_upper_bound_offset():
    index = OffsetIndex.from_bytes(offset_index_bytes(BASE, OFFSETS), BASE)
    # smallest entry whose position is >= position + size
    assert index.fetch_upper_bound_offset(4150, 0) == OffsetPosition(1003, 4150)
    assert index.fetch_upper_bound_offset(4150, 1) == OffsetPosition(1010, 8400)
    assert index.fetch_upper_bound_offset(0, 17000) == OffsetPosition(1040, 17000)
    assert index.fetch_upper_bound_offset(0, 17001) is None


def test_open_takes_the_base_offset_from_the_name(tmp_path):
    path = tmp_path / "00000000000000001000.index"
    path.write_bytes(offset_index_bytes(BASE, OFFSETS, zero_slots=10))
    with OffsetIndex.open(path) as index:
        assert index.base_offset == BASE
        assert index.file == str(path)
        assert index.lookup(1011) == OffsetPosition(1010, 8400)
    assert index.entries == 0  # closed

    other = tmp_path / "offsets.bin"
    other.write_bytes(offset_index_bytes(BASE, OFFSETS))
    with pytest.raises(IndexFileError) as caught:
        OffsetIndex.open(other)
    assert caught.value.file == str(other)
    with OffsetIndex.open(other, BASE) as index:
        assert len(index) == 4

    empty = tmp_path / "00000000000000000000.index"
    empty.write_bytes(b"")
    with OffsetIndex.open(empty) as index:
        assert index.entries == 0 and index.lookup(5) == OffsetPosition(0, 0)


def test_open_closes_the_map_after_an_error(tmp_path):
    path = tmp_path / "00000000000000001000.index"
    path.write_bytes(offset_index_bytes(BASE, [(1010, 1), (1003, 2)]))
    with pytest.raises(IndexFileError):
        OffsetIndex.open(path)
    path.unlink()  # would fail on some platforms if the map were left open


# --- time index --------------------------------------------------------------------------------


def test_trimmed_time_index():
    index = TimeIndex.from_bytes(time_index_bytes(BASE, TIMES), BASE)
    assert (index.entries, index.kafka_entries) == (3, 3)
    assert list(index) == [TimestampOffset(t, o) for t, o in TIMES]
    assert index.last_entry() == TimestampOffset(1_700_000_001_000, 1010)
    assert index.lookup(0) == TimestampOffset(NO_TIMESTAMP, BASE)
    assert index.lookup(1_700_000_000_499) == TimestampOffset(1_700_000_000_000, 1003)
    assert index.lookup(1_700_000_000_500) == TimestampOffset(1_700_000_000_500, 1010)
    assert index.lookup(1 << 70) == TimestampOffset(1_700_000_001_000, 1010)


def test_time_index_zero_tail():
    # TimeIndex.sanityCheck (before KAFKA-7283) refused this shape: last timestamp 0 < first.
    data = time_index_bytes(BASE, TIMES, zero_slots=500)
    index = TimeIndex.from_bytes(data, BASE)
    assert (index.entries, index.kafka_entries, index.zero_tail_slots) == (3, 503, 500)
    assert index.lookup(1 << 62) == TimestampOffset(1_700_000_001_000, 1010)


def test_time_index_of_one_zero_entry():
    # A rolled segment whose largest timestamp was 0, at its base offset: trimmed to 12 zeros.
    assert list(TimeIndex.from_bytes(bytes(12), BASE)) == [TimestampOffset(0, BASE)]
    assert TimeIndex.from_bytes(bytes(12), BASE).lookup(5) == TimestampOffset(0, BASE)
    # The same zeros in a preallocated file are an empty index.
    assert TimeIndex.from_bytes(bytes(24), BASE).entries == 0
    assert TimeIndex.from_bytes(bytes(DEFAULT_MAX_INDEX_SIZE // 12 * 12), BASE).entries == 0
    # and a first (0, base) entry followed by later ones is kept
    index = TimeIndex.from_bytes(time_index_bytes(BASE, [(0, BASE), (7, BASE + 4)]), BASE)
    assert list(index) == [TimestampOffset(0, BASE), TimestampOffset(7, BASE + 4)]


@pytest.mark.parametrize(
    ("entries", "bad_slot"),
    [
        ([(10, 1003), (10, 1004)], 1),  # timestamp repeats
        ([(10, 1003), (9, 1004)], 1),  # timestamp goes back
        ([(10, 1003), (11, 1002)], 1),  # offset goes back
        ([(10, 999)], 0),  # offset below the base offset
        ([(-5, 1003)], 0),  # negative timestamp
    ],
)
def test_disordered_time_index(entries, bad_slot):
    data = time_index_bytes(BASE, entries)
    with pytest.raises(IndexFileError) as caught:
        TimeIndex.from_bytes(data, BASE)
    assert caught.value.position == bad_slot * 12
    assert TimeIndex.from_bytes(data, BASE, strict=False).entries == bad_slot


def test_time_index_allows_equal_offsets():
    # maybeAppend only refuses an offset *below* the last one.
    index = TimeIndex.from_bytes(time_index_bytes(BASE, [(5, 1003), (6, 1003)]), BASE)
    assert index.lookup(6) == TimestampOffset(6, 1003)


def test_time_index_partial_tail():
    data = time_index_bytes(BASE, TIMES) + b"\x01"
    with pytest.raises(IndexFileError) as caught:
        TimeIndex.from_bytes(data, BASE)
    assert caught.value.position == 36


def test_timestamp_scan_start():
    offsets = OffsetIndex.from_bytes(offset_index_bytes(BASE, OFFSETS), BASE)
    times = TimeIndex.from_bytes(time_index_bytes(BASE, TIMES), BASE)
    # time index says 1010 for this target; offset index maps 1010 to its own entry
    assert timestamp_scan_start(times, offsets, 1_700_000_000_600, 0) == OffsetPosition(1010, 8400)
    # a later starting offset wins
    assert timestamp_scan_start(times, offsets, 1_700_000_000_600, 1030) == OffsetPosition(
        1025, 12900
    )
    # target below every timestamp: from the base offset
    assert timestamp_scan_start(times, offsets, 5, 0) == OffsetPosition(BASE, 0)
    with pytest.raises(ValueError):
        timestamp_scan_start(times, OffsetIndex.from_bytes(b"", 0), 5, 0)


# --- property tests ----------------------------------------------------------------------------


@st.composite
def offset_entries(draw):
    base = draw(st.integers(0, 1 << 40))
    rels = draw(st.lists(st.integers(1, INT32_MAX), max_size=60, unique=True))
    positions = draw(
        st.lists(st.integers(1, INT32_MAX), min_size=len(rels), max_size=len(rels), unique=True)
    )
    entries = [(base + r, p) for r, p in zip(sorted(rels), sorted(positions), strict=True)]
    return base, entries


@given(offset_entries(), st.integers(0, 50), st.lists(st.integers(-10, 1 << 42), max_size=20))
def test_offset_lookup_equals_linear_search(case, zero_slots, targets):
    base, entries = case
    index = OffsetIndex.from_bytes(offset_index_bytes(base, entries, zero_slots), base)
    assert index.entries == len(entries)
    assert index.zero_tail_slots == zero_slots
    probes = targets + [o for o, _ in entries] + [o - 1 for o, _ in entries]
    for target in probes:
        assert index.lookup(target) == brute_offset_lookup(base, entries, target)


@st.composite
def time_entries(draw):
    base = draw(st.integers(0, 1 << 40))
    timestamps = sorted(draw(st.lists(st.integers(1, 1 << 50), max_size=60, unique=True)))
    rels = sorted(
        draw(
            st.lists(st.integers(0, INT32_MAX), min_size=len(timestamps), max_size=len(timestamps))
        )
    )
    return base, [(ts, base + r) for ts, r in zip(timestamps, rels, strict=True)]


@given(time_entries(), st.integers(0, 50), st.lists(st.integers(-10, 1 << 52), max_size=20))
def test_time_lookup_equals_linear_search(case, zero_slots, targets):
    base, entries = case
    # One all-zero slot alone is the entry (timestamp 0, base offset), not a tail: see
    # test_time_index_of_one_zero_entry.
    assume(entries or zero_slots != 1)
    index = TimeIndex.from_bytes(time_index_bytes(base, entries, zero_slots), base)
    assert index.entries == len(entries)
    probes = targets + [t for t, _ in entries] + [t - 1 for t, _ in entries]
    for target in probes:
        assert index.lookup(target) == brute_time_lookup(base, entries, target)


@settings(max_examples=300)
@given(st.binary(max_size=400), st.sampled_from([OffsetIndex, TimeIndex]), st.booleans())
def test_random_bytes_raise_only_our_error(data, cls, strict):
    try:
        index = cls.from_bytes(data, BASE, strict=strict)
    except KafkaFormatError as error:
        assert isinstance(error, IndexFileError) and strict
        return
    # Whatever was accepted is an ordered prefix, so look-ups agree with a linear search.
    raw = list(index)
    if cls is OffsetIndex:
        pairs = [(e.offset, e.position) for e in raw]
        assert all(a[0] < b[0] and a[1] < b[1] for a, b in itertools.pairwise(pairs))
        for target in (BASE - 1, BASE, *(o for o, _ in pairs), 1 << 40):
            assert index.lookup(target) == brute_offset_lookup(BASE, pairs, target)
    else:
        pairs = [(e.timestamp, e.offset) for e in raw]
        assert all(a[0] < b[0] and a[1] <= b[1] for a, b in itertools.pairwise(pairs))
        for target in (-1, 0, *(t for t, _ in pairs), 1 << 62):
            assert index.lookup(target) == brute_time_lookup(BASE, pairs, target)


# --- a log and its indexes, as LogSegment builds them ------------------------------------------


def magic1_message(offset, timestamp, value):
    body = struct.pack(">bbq", 1, 0, timestamp) + struct.pack(">i", -1)
    body += struct.pack(">i", len(value)) + value
    crc = 0  # not read here
    return struct.pack(">qiI", offset, 4 + len(body), crc) + body


def magic1_messages(log):
    """(position, offset, timestamp) of each magic-1 uncompressed message, read with struct."""
    out = []
    pos = 0
    while pos + 12 <= len(log):
        offset, size = struct.unpack_from(">qi", log, pos)
        magic, attributes, timestamp = struct.unpack_from(">bbq", log, pos + 16)
        assert magic == 1 and attributes & 0x07 == 0
        out.append((pos, offset, timestamp))
        pos += 12 + size
    assert pos == len(log)
    return out


def build_segment(base, count, interval):
    """A magic-1 log and the offset/time indexes LogSegment.append would write for it: an entry
    for a message once more than ``interval`` bytes were appended since the last entry."""
    log = b""
    offset_entries, time_entries = [], []
    since_last = 0
    max_ts, offset_of_max = NO_TIMESTAMP, base
    for n in range(count):
        offset = base + n
        ts = 1_600_000_000_000 + (n * 7919) % 1000 * 13  # not monotonic, as producers send
        message = magic1_message(offset, ts, b"v" * (n % 50))
        if ts > max_ts:
            max_ts, offset_of_max = ts, offset
        if since_last > interval:
            offset_entries.append((offset, len(log)))
            if not time_entries or max_ts > time_entries[-1][0]:
                time_entries.append((max_ts, offset_of_max))
            since_last = 0
        since_last += len(message)
        log += message
    return log, offset_entries, time_entries


def test_broker_offset_search_on_a_built_segment():
    base = 500
    log, offset_entries, _ = build_segment(base, 400, interval=512)
    messages = magic1_messages(log)
    index = OffsetIndex.from_bytes(offset_index_bytes(base, offset_entries, zero_slots=64), base)
    assert index.entries == len(offset_entries) > 10
    for _, target, _ in messages:
        # LogSegment.translateOffset: look up, then scan forward for offset >= target
        start = index.lookup(target).position
        found = next(m for m in messages if m[0] >= start and m[1] >= target)
        assert found[1] == target


def test_broker_timestamp_search_on_a_built_segment():
    base = 500
    log, offset_entries, time_entries = build_segment(base, 400, interval=512)
    messages = magic1_messages(log)
    offsets = OffsetIndex.from_bytes(offset_index_bytes(base, offset_entries), base)
    times = TimeIndex.from_bytes(time_index_bytes(base, time_entries, zero_slots=9), base)
    assert times.entries == len(time_entries) > 3
    timestamps = sorted({ts for _, _, ts in messages})
    for target in [timestamps[0] - 1, *timestamps[::7], timestamps[-1], timestamps[-1] + 1]:
        for starting in (base, base + 123):
            start = timestamp_scan_start(times, offsets, target, starting).position
            # FileRecords.searchForTimestamp from that position (one message = one batch)
            got = next(
                (o for p, o, ts in messages if p >= start and ts >= target and o >= starting),
                None,
            )
            want = next((o for _, o, ts in messages if ts >= target and o >= starting), None)
            assert got == want


# --- the real .timeindex in the corpus ---------------------------------------------------------


def test_corpus_timeindex_against_its_log():
    folder = corpus_dir("recordupdater")
    log = (folder / "hello-0.00000000000000000000.log.bin").read_bytes()
    path = folder / "hello-0.00000000000000000000.timeindex"
    index = TimeIndex.open(path, 0)
    entries = list(index)
    assert index.kafka_entries == index.entries == 1
    messages = magic1_messages(log)
    expected = [
        json.loads(line)
        for line in (folder / "hello-0.00000000000000000000.log.jsonl").read_text().splitlines()
    ]
    assert [(o, ts) for _, o, ts in messages] == [(r["offset"], r["timestamp"]) for r in expected]
    by_offset = {o: ts for _, o, ts in messages}
    for entry in entries:
        # the entry's offset is a message of the log, and its timestamp is the largest one
        # seen up to that offset (TimeIndex's definition)
        assert entry.offset in by_offset
        assert entry.timestamp == max(ts for o, ts in by_offset.items() if o <= entry.offset)
    # the last entry is the segment's max timestamp (LogSegment.readMaxTimestampAndOffsetSoFar)
    assert index.last_entry() == TimestampOffset(max(by_offset.values()), entries[-1].offset)
    # timestamp searches through it agree with a scan of the log
    empty_offsets = OffsetIndex.from_bytes(b"", 0)
    for target in [*sorted(by_offset.values()), 0, 1 << 45]:
        start = timestamp_scan_start(index, empty_offsets, target, 0).position
        got = next((o for p, o, ts in messages if p >= start and ts >= target), None)
        assert got == next((o for _, o, ts in messages if ts >= target), None)
    index.close()
