"""The one index-entry rule (runtime/files/index_lookup.py), case by case.

The segment is built here from v2 batches whose offsets and positions the test knows: batches
as the leader writes them, and one as the log cleaner rewrites it (its base offset and last
offset delta kept, its last records gone), so that each verdict can be checked against what a
read from the entry's position would really find.
"""

from __future__ import annotations

import struct

import pytest

from kafka_format.runtime.files.index_lookup import (
    AFTER_OFFSET,
    APPEND,
    BELOW_SEGMENT,
    CRC,
    EXACT,
    INSIDE,
    NO_BATCH,
    PAST_END,
    check_entry,
    start_for_offset,
    start_for_timestamp,
)
from kafka_format.runtime.files.indexes import OffsetIndex, OffsetPosition, TimeIndex
from kafka_format.schemas.record import RecordSpec
from kafka_format.schemas.record_batch import build_record_batch

BASE = 100
T0 = 1_700_000_000_000


def _batch(base: int, offsets: list[int], last: int) -> bytes:
    """A v2 batch holding ``offsets`` whose header says it spans ``base..last`` (the cleaner
    keeps both when it drops records)."""
    return build_record_batch(
        [
            RecordSpec(key=b"k%d" % o, value=b"v" * 40, offset_delta=o - base, timestamp_delta=o)
            for o in offsets
        ],
        base_offset=base,
        base_timestamp=T0,
        last_offset_delta=last - base,
    )


#: (base, offsets present, last offset): the third is the cleaner's, records 112..114 gone.
BATCHES = [(100, [100, 101, 102], 102), (103, [103, 104, 105, 106], 106), (107, [107, 111], 114)]
BATCHES += [(115, [115, 116], 116)]


@pytest.fixture(scope="module")
def segment() -> tuple[bytes, list[int]]:
    parts = [_batch(*b) for b in BATCHES]
    positions = [sum(len(p) for p in parts[:i]) for i in range(len(parts))]
    return b"".join(parts), positions


class Ranged:
    """A log read by position, as a remote storage is: what was read is counted."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.reads: list[tuple[int, int]] = []

    def size(self) -> int:
        return len(self.data)

    def read(self, position: int, n: int) -> memoryview:
        self.reads.append((position, n))
        return memoryview(self.data[position : position + n])


def _both(data: bytes, entry: OffsetPosition, base: int = BASE):
    """The verdict from a whole view and from ranged reads, which must be the same."""
    whole = check_entry(memoryview(data), entry, base)
    ranged = check_entry(Ranged(data), entry, base)
    assert (whole.fault, whole.problem, whole.kind) == (ranged.fault, ranged.problem, ranged.kind)
    return whole


@pytest.mark.parametrize(
    ("slot", "offset", "kind"),
    [
        (0, 102, EXACT),  # the leader's entry: the batch's last offset
        (0, 105, APPEND),  # a two-batch append indexed at its first batch
        (2, 111, INSIDE),  # the cleaner's: the largest retained offset, inside the batch
        (2, 107, INSIDE),  # the batch's own base offset
        (3, 10_000, APPEND),  # far past: a read from here still misses nothing
    ],
)
def test_entries_that_hold(segment, slot, offset, kind):
    data, positions = segment
    check = _both(data, OffsetPosition(offset, positions[slot]))
    assert check.holds and check.fault is None and check.problem is None
    assert check.kind == kind
    assert (check.batch.base_offset, check.batch.position) == (BATCHES[slot][0], positions[slot])


def test_entries_that_do_not_hold(segment):
    data, positions = segment
    cases = {
        # the batch at the position starts after the entry's offset: offsets 103..104 would be
        # passed over by a read for offset 104 that starts here
        (104, positions[2]): (AFTER_OFFSET, "starts after the entry's offset 104"),
        (103, positions[1] + 7): (NO_BATCH, "no whole batch starts"),
        (103, len(data)): (PAST_END, f"past the end of the log ({len(data)} bytes)"),
        (103, len(data) + 100): (PAST_END, "past the end of the log"),
        (103, len(data) - 5): (NO_BATCH, "only 5 bytes left"),
        (103, -8): (NO_BATCH, "negative position -8"),
    }
    for (offset, position), (fault, words) in cases.items():
        check = _both(data, OffsetPosition(offset, position))
        assert not check.holds and check.kind is None
        assert check.fault == fault, (offset, position)
        assert words in check.problem, check.problem


def test_a_batch_below_the_segment_base_offset(segment):
    data, positions = segment
    check = _both(data, OffsetPosition(110, positions[1]), base=104)
    assert check.fault == BELOW_SEGMENT
    assert "offsets 103..106, below the segment's base offset 104" in check.problem


def test_a_batch_whose_crc_fails(segment):
    data, positions = segment
    damaged = bytearray(data)
    damaged[positions[1] + 70] ^= 0x01  # a record byte: the frame is whole, the CRC is not
    check = _both(bytes(damaged), OffsetPosition(106, positions[1]))
    assert check.fault == CRC and "CRC does not hold" in check.problem
    assert check.batch is not None and check.batch.base_offset == 103


def test_a_lying_length_is_not_read(segment):
    data, positions = segment
    damaged = bytearray(data)
    struct.pack_into(">i", damaged, positions[1] + 8, 0x7FFFFFF0)
    ranged = Ranged(bytes(damaged))
    check = check_entry(ranged, OffsetPosition(106, positions[1]), BASE)
    assert check.fault == NO_BATCH and "runs past the end of the log" in check.problem
    assert ranged.reads == [(positions[1], 12)]  # the length was read, not what it claims


def test_ranged_reads_take_one_batch(segment):
    data, positions = segment
    ranged = Ranged(data)
    assert check_entry(ranged, OffsetPosition(111, positions[2]), BASE).holds
    size = positions[3] - positions[2]
    assert ranged.reads == [(positions[2], 12), (positions[2], size)]


def _index(entries: list[tuple[int, int]]) -> OffsetIndex:
    raw = b"".join(struct.pack(">ii", o - BASE, p) for o, p in entries)
    return OffsetIndex.from_bytes(raw, BASE)


def test_start_for_offset(segment):
    data, positions = segment
    view = memoryview(data)
    index = _index([(105, positions[0]), (111, positions[2]), (116, positions[3])])
    # Below the first entry: the segment's start, as OffsetIndex.lookup answers.
    start = start_for_offset(index, view, 104)
    assert (start.position, start.used_index, start.check, start.note) == (0, True, None, None)
    assert index.floor_entry(104) is None
    for target, slot in ((105, 0), (110, 0), (111, 2), (115, 2), (116, 3), (1 << 40, 3)):
        start = start_for_offset(index, view, target)
        assert (start.position, start.used_index) == (positions[slot], True), target
        assert start.check.holds and start.note is None
    lying = _index([(105, positions[0]), (106, positions[2])])
    start = start_for_offset(lying, view, 108)
    assert (start.position, start.used_index) == (0, False)
    assert start.check.fault == AFTER_OFFSET
    assert start.note.startswith(f"offset index entry (106, {positions[2]}) points at a batch")


def test_an_unsound_index_is_not_used(segment):
    data, positions = segment
    raw = struct.pack(">ii", 9, positions[2]) + struct.pack(">ii", 5, positions[3])
    index = OffsetIndex.from_bytes(raw, BASE, strict=False)
    assert index.problem is not None
    start = start_for_offset(index, memoryview(data), 120)
    assert (start.position, start.used_index, start.check) == (0, False, None)
    assert start.note == str(index.problem)


def test_start_for_timestamp(segment):
    data, positions = segment
    view = memoryview(data)
    offsets = _index([(102, positions[0]), (106, positions[1]), (111, positions[2])])
    times = TimeIndex.from_bytes(
        struct.pack(">qi", T0 + 102, 2) + struct.pack(">qi", T0 + 111, 11), BASE
    )
    start = start_for_timestamp(times, offsets, view, T0 + 112, 0)
    assert (start.position, start.used_index) == (positions[2], True)  # offset 111's entry
    start = start_for_timestamp(times, offsets, view, T0 + 105, 107)
    assert (start.position, start.used_index) == (positions[1], True)  # max(102, 107): 106's
    broken = TimeIndex.from_bytes(
        struct.pack(">qi", T0, 5) + struct.pack(">qi", T0 - 1, 6), BASE, strict=False
    )
    start = start_for_timestamp(broken, offsets, view, T0 + 112, 0)
    assert (start.position, start.used_index) == (0, False) and "time index" in start.note


def test_negative_relative_offsets_are_plain_numbers():
    # Entry 0 of a segment with base offset 0 storing relative offset -1811048158: the offset
    # is said as the number it is, not as "0-1811048158".
    raw = struct.pack(">ii", -1811048158, 4096)
    index = OffsetIndex.from_bytes(raw, 0, strict=False)
    assert index.problem.reason == (
        "corrupt offset index: entry 0 has offset -1811048158, below the base offset 0 "
        "(a negative relative offset, -1811048158: no broker writes one)"
    )
    times = TimeIndex.from_bytes(struct.pack(">qi", T0, -3), 50, strict=False)
    assert "entry 0 has offset 47, below the base offset 50 (a negative relative offset, -3" in (
        times.problem.reason
    )
