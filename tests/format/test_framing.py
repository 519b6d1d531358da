"""The walker (``format/framing.py``): its verdicts, and the same verdicts from the numba frame
scan (``kernels/fastscan.scan_frames`` + ``framing.end_of_walk``) and from the stream walker,
on record sets mutated by hypothesis (bit flips, overwritten and inserted bytes, rewritten
lengths, cuts). The batches are kafka-python's and aiokafka's, an independent writer's."""

from __future__ import annotations

import io
import struct
import time

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kafka.record.default_records import DefaultRecordBatchBuilder
from kafka.record.legacy_records import LegacyRecordBatchBuilder

import kafka_format as kf
from kafka_format.runtime.format import framing
from kafka_format.runtime.kernels import fastscan as fs
from kafka_format.runtime.model import TruncatedTail
from kafka_format.schemas.legacy_message import build_legacy_message


def _v2(base_offset: int, n: int, codec: int = 0) -> bytes:
    builder = DefaultRecordBatchBuilder(2, codec, False, -1, -1, -1, 1 << 30)
    for i in range(n):
        builder.append(i, 1_700_000_000_000 + i, b"k%d" % i, b"v" * (i * 7 + 3), [])
    out = bytearray(builder.build())
    struct.pack_into(">q", out, 0, base_offset)
    return bytes(out)


def _legacy(magic: int, offset: int, codec: int = 0) -> bytes:
    builder = LegacyRecordBatchBuilder(magic, codec, 1 << 30)
    for i in range(3):
        builder.append(i, 1_700_000_000_000 if magic else None, b"key", b"value %d" % i)
    out = bytearray(builder.build())
    if not codec:
        struct.pack_into(">q", out, 0, offset)
    return bytes(out)


SEED = b"".join([_v2(0, 3), _legacy(1, 3), _v2(6, 2, codec=1), _legacy(0, 8, codec=1), _v2(9, 4)])


def python_walk(data: bytes) -> tuple[list[tuple[int, int]], object]:
    frames = []
    tails: list[TruncatedTail] = []
    try:
        for frame in framing.iter_frames(data, tails=tails):
            frames.append((frame.position, frame.size))
    except kf.FramingError as exc:
        return frames, ("damage", exc.position, exc.reason, exc.resume)
    return frames, ("tail", tails[0].position, tails[0].size) if tails else None


def kernel_walk(data: bytes, capacity: int = 3) -> tuple[list[tuple[int, int]], object]:
    """The fast path's walk: the kernel's table (a small one: several budget stops), then
    what the walker says where it stopped."""
    buf = np.frombuffer(data, np.uint8)
    table = np.empty((capacity, fs.FRAME_COLUMNS), np.int64)
    frames = []
    pos = 0
    while True:
        n, pos, status = fs.scan_frames(buf, pos, len(buf), table, 1 << 62, 1 << 62, 1)
        frames += [(int(r[fs.F_POS]), int(r[fs.F_SIZE])) for r in table[:n]]
        if status != fs.SCAN_BUDGET:
            break
    tail, error = framing.end_of_walk(memoryview(data), pos, len(data))
    if error is not None:
        return frames, ("damage", error.position, error.reason, error.resume)
    return frames, ("tail", tail.position, tail.size) if tail else None


def stream_walk(data: bytes) -> tuple[list[tuple[int, int]], object]:
    frames = []
    tails: list[TruncatedTail] = []
    try:
        for frame in framing.iter_stream_frames(io.BytesIO(data), tails=tails):
            frames.append((frame.position, frame.size))
    except kf.FramingError as exc:
        return frames, ("damage", exc.position, exc.reason, exc.resume)
    return frames, ("tail", tails[0].position, tails[0].size) if tails else None


@st.composite
def mutated(draw) -> bytes:
    data = bytearray(SEED)
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["flip", "byte", "length", "insert", "cut", "magic"]))
        at = draw(st.integers(0, max(len(data) - 1, 0)))
        if not data:
            break
        if kind == "flip":
            data[at] ^= 1 << draw(st.integers(0, 7))
        elif kind == "byte":
            data[at] = draw(st.integers(0, 255))
        elif kind == "length" and at + 12 <= len(data):
            value = draw(st.integers(-(1 << 31), (1 << 31) - 1) | st.integers(-2, 400))
            struct.pack_into(">i", data, at + 8 if at + 12 <= len(data) else at, value)
        elif kind == "insert":
            data[at:at] = draw(st.binary(min_size=1, max_size=40))
        elif kind == "cut":
            del data[at:]
        elif kind == "magic" and at + 17 <= len(data):
            data[at + 16] = draw(st.integers(0, 255))
    return bytes(data)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated())
def test_kernel_and_walker_give_the_same_verdicts(data):
    expected = python_walk(data)
    assert kernel_walk(data) == expected
    assert kernel_walk(data, capacity=64) == expected


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated())
def test_stream_walker_gives_the_same_verdicts(data):
    frames, verdict = python_walk(data)
    got_frames, got = stream_walk(data)
    assert got_frames == frames
    if verdict is not None and verdict[0] == "damage" and got is not None:
        # A stream looks for the resume position in what it has read (a window), no further.
        verdict, got = verdict[:3], got[:3]
    assert got == verdict


def test_the_seed_reads_whole():
    frames, verdict = python_walk(SEED)
    assert verdict is None and len(frames) == 7 and sum(s for _, s in frames) == len(SEED)


# --- the rules, one by one ------------------------------------------------------------------------


def test_seventeen_bytes_or_fewer_are_the_end():
    batch = _v2(0, 2)
    for left in (1, 16, 17):
        _frames, verdict = python_walk(batch + b"\x07" * left)
        assert verdict == ("tail", len(batch), left)


def test_a_plausible_prefix_is_a_truncated_tail():
    batch = _v2(0, 2)
    for cut in (18, 40, len(batch) - 1):
        frames, verdict = python_walk(batch + batch[:cut])
        assert frames == [(0, len(batch))] and verdict == ("tail", len(batch), cut)


def test_a_length_past_the_end_before_whole_batches_is_broken():
    a, b = _v2(0, 2), _v2(2, 3)
    data = bytearray(a + b)
    struct.pack_into(">i", data, 8, len(data))
    frames, verdict = python_walk(bytes(data))
    assert frames == []
    assert verdict[:2] == ("damage", 0) and verdict[3] == len(a)
    # The CRC does not cover the length field: the batch's own records and CRC prove its end.
    assert f"records and CRC end at position {len(a)} (length {len(a) - 12})" in verdict[2]


def test_a_broken_length_over_a_damaged_batch_names_the_next_whole_batch():
    a, b = _v2(0, 2), _v2(2, 3)
    data = bytearray(a + b)
    struct.pack_into(">i", data, 8, len(data))
    data[len(a) - 1] ^= 0xFF  # its records no longer hold its CRC: nothing proves its end
    frames, verdict = python_walk(bytes(data))
    assert frames == []
    assert verdict[:2] == ("damage", 0) and verdict[3] == len(a)
    assert f"yet a whole batch starts at position {len(a)}" in verdict[2]


def _literal_snappy(data: bytes) -> bytes:
    """Raw snappy of one literal (valid snappy, as a compressor emits for incompressible
    bytes): the inner messages lie in it verbatim, CRCs and all."""
    assert len(data) <= 1 << 16
    n, size = len(data), bytearray()
    while n >= 0x80:
        size.append(n & 0x7F | 0x80)
        n >>= 7
    size.append(n)
    return bytes(size) + bytes([61 << 2]) + struct.pack("<H", len(data) - 1) + data


def test_inner_messages_of_a_truncated_wrapper_do_not_make_the_length_broken():
    """A v1 wrapper's inner messages keep their CRCs inside a snappy literal: a copy of it cut
    short anywhere, at an inner message's end too, holds whole CRC-valid messages leading to
    the end, yet it is a truncated tail (plain messages in a wrapper prove nothing)."""
    builder = LegacyRecordBatchBuilder(1, 0, 1 << 30)
    for i in range(4):
        builder.append(i, 1_700_000_000_000, b"key-%d" % i, b"value %d" % i)
    inner = bytes(builder.build())
    wrapper = build_legacy_message(
        offset=3, value=_literal_snappy(inner), magic=1, codec=2, timestamp=1_700_000_000_000
    )
    assert [r.offset for r in kf.iter_records(wrapper)] == [0, 1, 2, 3]
    at = wrapper.index(inner)
    ends = [at + p + s for p, s in python_walk(inner)[0]]
    for cut in range(18, len(wrapper)):
        _, verdict = python_walk(wrapper + wrapper[:cut])
        assert verdict == ("tail", len(wrapper), cut), (cut, cut in ends)
    # The same messages after a wrapper whose length lies are whole batches: a broken length.
    lying = bytearray(wrapper)
    struct.pack_into(">i", lying, 8, 1 << 20)
    _, verdict = python_walk(bytes(lying) + _v2(4, 2))
    assert verdict[:2] == ("damage", 0) and verdict[3] == len(wrapper)


def test_pure_garbage_is_damage():
    garbage = bytes((i * 31 + 7) % 256 for i in range(1000))
    frames, verdict = python_walk(garbage)
    assert frames == [] and verdict[0] == "damage" and verdict[1] == 0


def test_resync_is_bounded_on_zeros():
    """Damage before a long run of zeros (a preallocated segment) looks no further than the
    window for the resume position, and the search over all of it stays linear."""
    zeros = bytes(64 << 20)
    started = time.perf_counter()
    assert framing.resync(zeros, 0, len(zeros)) is None
    assert time.perf_counter() - started < 10
    batch = _v2(5, 2)
    data = zeros[:1000] + batch
    assert framing.resync(data, 0, len(data)) == 1000
    assert framing.resync(data, 0, len(data), window=999) is None
