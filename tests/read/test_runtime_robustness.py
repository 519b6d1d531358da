"""Damaged input: only our exceptions, quickly, in bounded memory; skip mode keeps going.

Inputs are real batches (corpus frames, and batches kafka-python and aiokafka write) mutated
by hypothesis: bit flips, truncations, length and count fields overwritten with lies, varints
stretched to 11 bytes, bytes inserted. Mutations are tried with the CRC left as it is (the
CRC check must catch them) and with the CRC recomputed (so the lie reaches the decoders).

KF_FUZZ_EXAMPLES=5000 runs the fuzzers longer than the suite's default (300 each).
"""

from __future__ import annotations

import contextlib
import gzip
import io
import os
import struct
import subprocess
import sys
import time
import tracemalloc
import zlib
from functools import cache
from pathlib import Path

import pytest
from crc32c import crc32c
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kafka.record.default_records import DefaultRecordBatchBuilder
from kafka.record.legacy_records import LegacyRecordBatchBuilder

import kafka_format as kf

MEMORY_LIMIT = 64 << 20
# The fuzzed reads bound decompression well below MEMORY_LIMIT: a few KB of zstd RLE blocks
# legitimately inflate to hundreds of MB, which only the bound stops. The default bound is
# exercised by the specific tests below.
FUZZ_BOUND = 8 << 20
FUZZ = settings(
    max_examples=int(os.environ.get("KF_FUZZ_EXAMPLES", "300")),
    deadline=2000,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
LIES = [0x7FFFFFF0, 0x7FFFFFFF, -1, -0x80000000, 0, 1, 13, 14, 48, 49, 61, 1 << 20]
ELEVEN_BYTE_VARINT = b"\xff" * 10 + b"\x01"


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        out.append((n & 0x7F) | (0x80 if n > 0x7F else 0))
        n >>= 7
        if not n:
            return bytes(out)


# --- seeds ----------------------------------------------------------------------------------


def _v2(codec: int, n: int = 4, **producer) -> bytes:
    builder = DefaultRecordBatchBuilder(
        2,
        codec,
        producer.get("transactional", False),
        producer.get("pid", -1),
        producer.get("epoch", -1),
        producer.get("seq", -1),
        1 << 30,
    )
    for i in range(n):
        key = None if i % 3 == 2 else f"key-{i}".encode()
        value = b"" if i % 4 == 3 else f"value {i} ".encode() * (i + 3)
        headers = [(f"h{j}", None if j == 1 else b"x" * j) for j in range(i % 3)]
        builder.append(i, 1_700_000_000_000 + i * 7, key, value, headers)
    return bytes(builder.build())


def _legacy(magic: int, codec: int, n: int = 3) -> bytes:
    builder = LegacyRecordBatchBuilder(magic, codec, 1 << 30)
    for i in range(n):
        timestamp = 1_700_000_000_000 + i if magic else None
        builder.append(i, timestamp, f"k{i}".encode(), b"v" * (i * 9 + 1))
    return bytes(builder.build())


def _set_offset(frame: bytes, offset: int) -> bytes:
    return struct.pack(">q", offset) + frame[8:]


@cache
def built_seeds() -> tuple[bytes, ...]:
    """Record sets written by kafka-python (and aiokafka for snappy), one or a few frames."""
    from aiokafka.record.default_records import DefaultRecordBatchBuilder as AioBuilder

    aio = AioBuilder(2, 2, False, -1, -1, -1, 1 << 30)
    for i in range(3):
        aio.append(i, 1_700_000_000_000, b"k", b"snappy value " * 10, [])
    seeds = [
        _v2(0),
        _v2(1),
        _v2(3),
        _v2(4),
        _v2(0, n=1, pid=7, epoch=1, seq=0, transactional=True),
        bytes(aio.build()),
        _legacy(0, 0),
        _legacy(1, 0),
        _legacy(0, 1),
        _legacy(1, 1),
        _legacy(1, 3),
        _v2(1) + _set_offset(_legacy(1, 0, n=1), 4) + _set_offset(_v2(0), 5),
    ]
    return tuple(seeds)


def frames_of(data: bytes) -> list[bytes]:
    out = []
    pos = 0
    while len(data) - pos > 17:
        (length,) = struct.unpack_from(">i", data, pos + 8)
        end = pos + 12 + length
        if length < 14 or end > len(data):
            break
        out.append(data[pos:end])
        pos = end
    return out


@cache
def corpus_seeds(corpus: Path) -> tuple[bytes, ...]:
    """Up to three small frames from the start of every corpus set."""
    seeds = []
    for path in sorted(corpus.glob("*/*.bin")):
        frames = [f for f in frames_of(path.read_bytes())[:3] if len(f) <= 4096]
        if frames:
            seeds.append(b"".join(frames))
    return tuple(seeds)


# --- mutations ------------------------------------------------------------------------------


def fix_crcs(data: bytearray) -> None:
    """Recompute the CRC of every frame whose length still fits, so content lies reach the
    decoders instead of being caught by the CRC check."""
    pos = 0
    while len(data) - pos > 17:
        (length,) = struct.unpack_from(">i", data, pos + 8)
        end = pos + 12 + length
        if length < 14 or end > len(data):
            return
        if data[pos + 16] == 2 and length >= 9:
            struct.pack_into(">I", data, pos + 17, crc32c(bytes(data[pos + 21 : end])))
        elif data[pos + 16] in (0, 1):
            struct.pack_into(">I", data, pos + 12, zlib.crc32(bytes(data[pos + 16 : end])))
        pos = end


def _int32_fields(data: bytes) -> list[int]:
    """Positions of the length and count fields of the first frame (where lies hurt most)."""
    positions = [8]
    if len(data) > 16 and data[16] == 2:
        positions += [23, 57]  # last offset delta, record count
    elif len(data) > 16:
        key_at = 18 if data[16] == 0 else 26
        positions += [key_at]
        if len(data) >= key_at + 4:
            (key_len,) = struct.unpack_from(">i", data, key_at)
            positions.append(key_at + 4 + max(key_len, 0))  # value length
    return [p for p in positions if p + 4 <= len(data)]


def _mutate(draw, data: bytearray, *, records_at: int) -> None:
    """One to three mutations of ``data`` in place; ``records_at``: where v2 records start."""
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(
            st.sampled_from(["flip", "truncate", "int32", "varint11", "insert", "varint_lie"])
        )
        if not data:
            return
        pos = draw(st.integers(0, len(data) - 1))
        if kind == "flip":
            data[pos] ^= 1 << draw(st.integers(0, 7))
        elif kind == "truncate":
            del data[pos:]
        elif kind == "int32":
            fields = _int32_fields(bytes(data))
            at = draw(st.sampled_from(fields)) if fields and draw(st.booleans()) else pos
            lie = draw(st.sampled_from(LIES) | st.integers(-(2**31), 2**31 - 1))
            data[at : at + 4] = struct.pack(">i", lie)[: max(0, len(data) - at)]
        elif kind == "varint11":
            # A record length, or any varint-looking position.
            at = records_at if len(data) > records_at and draw(st.booleans()) else pos
            data[at : at + draw(st.integers(0, 2))] = ELEVEN_BYTE_VARINT
        elif kind == "insert":
            data[pos:pos] = draw(st.binary(min_size=1, max_size=8))
        else:
            # A zigzag varint claiming a huge or negative length, over whatever was there.
            lie = draw(st.sampled_from([0x7FFFFFF0, -2, -(2**31), 2**40]))
            data[pos : pos + 10] = _varint((lie << 1) ^ (lie >> 63))


@st.composite
def mutated(draw, seeds: tuple[bytes, ...]) -> bytes:
    data = bytearray(draw(st.sampled_from(seeds)))
    _mutate(draw, data, records_at=61)
    if draw(st.booleans()):
        fix_crcs(data)
    return bytes(data)


@st.composite
def mutated_inside(draw) -> bytes:
    """A gzip batch whose decompressed content is mutated, recompressed, and given a valid
    length and CRC: the lies reach the record and inner-message decoders."""
    magic = draw(st.sampled_from([0, 1, 2]))
    if magic == 2:
        frame = _v2(1)
        head, inner = frame[:61], bytearray(gzip.decompress(frame[61:]))
        _mutate(draw, inner, records_at=0)
        frame = bytearray(head + gzip.compress(bytes(inner)))
    else:
        frame = _legacy(magic, 1)
        value_at = 18 if magic == 0 else 26  # key length; the key is null (-1)
        assert struct.unpack_from(">i", frame, value_at) == (-1,)
        inner = bytearray(gzip.decompress(frame[value_at + 8 :]))
        _mutate(draw, inner, records_at=0)
        if draw(st.booleans()):
            fix_crcs(inner)
        value = gzip.compress(bytes(inner))
        frame = bytearray(frame[: value_at + 4] + struct.pack(">i", len(value)) + value)
    struct.pack_into(">i", frame, 8, len(frame) - 12)
    fix_crcs(frame)
    return bytes(frame)


def read_everything(data: bytes, *, stream: bool) -> None:
    """Every reading mode: strict raises only our errors; skip mode never raises."""

    def source():
        return io.BytesIO(data) if stream else data

    bound = {"max_decompressed_bytes": FUZZ_BOUND}
    for verify in (True, False):
        try:
            for batch in kf.iter_batches(source(), verify_crc=verify, **bound):
                for r in batch.records or ():
                    assert isinstance(r.offset, int)
        except kf.KafkaFormatError as exc:
            assert exc.position is not None or exc.file is not None or str(exc)
    with contextlib.suppress(kf.KafkaFormatError):
        list(kf.iter_records(source(), isolation="read_committed", **bound))
    for isolation in ("read_uncommitted", "read_committed"):
        report = kf.Report()
        list(kf.iter_records(source(), errors="skip", report=report, isolation=isolation, **bound))
        assert all(isinstance(e, kf.KafkaFormatError) for e in report.errors)
        assert all(t.size > 0 for t in report.truncated)


def _bounded(data: bytes, stream: bool) -> None:
    tracemalloc.start()
    started = time.perf_counter()
    try:
        read_everything(data, stream=stream)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < MEMORY_LIMIT, f"peak {peak} bytes for {len(data)} bytes of input"
    assert time.perf_counter() - started < 2.0


@FUZZ
@given(data=st.data(), stream=st.booleans())
def test_mutated_client_batches(data, stream):
    _bounded(data.draw(mutated(built_seeds())), stream)


@FUZZ
@given(data=st.data(), stream=st.booleans())
def test_mutated_corpus_batches(corpus_dir, data, stream):
    _bounded(data.draw(mutated(corpus_seeds(corpus_dir))), stream)


@FUZZ
@given(data=st.data(), stream=st.booleans())
def test_mutated_inside_compressed_batches(data, stream):
    _bounded(data.draw(mutated_inside()), stream)


@settings(max_examples=60, deadline=2000)
@given(
    seed=st.sampled_from(built_seeds()),
    payload=st.binary(max_size=64),
    codec=st.integers(0, 7),
    magic=st.sampled_from([0, 1, 2]),
)
def test_garbage_payload_behind_valid_headers(seed, payload, codec, magic):
    """A well-formed frame whose (compressed) payload is garbage, with a valid CRC, under
    every codec id (5-7 do not exist; zstd does not exist for v0/v1)."""
    if magic == 2:
        frame = bytearray(seed[:61] + payload)
        struct.pack_into(">h", frame, 21, codec)
    else:
        body = struct.pack(">bb", magic, codec) + (struct.pack(">q", 0) if magic else b"")
        body += struct.pack(">i", -1) + struct.pack(">i", len(payload)) + payload
        frame = bytearray(struct.pack(">qiI", 0, 4 + len(body), 0) + body)
    struct.pack_into(">i", frame, 8, len(frame) - 12)
    fix_crcs(frame)
    _bounded(bytes(frame), stream=False)


# --- specific damage, specific outcomes -----------------------------------------------------


def _three_batches() -> tuple[bytes, list[bytes]]:
    frames = [_set_offset(_v2(c, n=4), base) for c, base in ((0, 0), (1, 4), (3, 8))]
    return b"".join(frames), frames


def _corrupt_crc(data: bytes, frame_at: int) -> bytes:
    buf = bytearray(data)
    buf[frame_at + 17] ^= 0xFF
    return bytes(buf)


def test_skip_mode_keeps_the_batches_around_a_corrupt_one():
    log, frames = _three_batches()
    middle = len(frames[0])
    damaged = _corrupt_crc(log, middle)
    with pytest.raises(kf.CrcMismatchError) as info:
        list(kf.iter_records(damaged))
    assert (info.value.position, info.value.base_offset) == (middle, 4)

    report = kf.Report()
    offsets = [r.offset for r in kf.iter_records(damaged, errors="skip", report=report)]
    assert offsets == [0, 1, 2, 3, 8, 9, 10, 11]
    (error,) = report.errors
    assert isinstance(error, kf.CrcMismatchError)
    assert (error.position, error.base_offset, error.file) == (middle, 4, "<bytes>")
    assert error.computed == crc32c(frames[1][21:])
    assert report.truncated == []

    batches = list(kf.iter_batches(damaged, errors="skip"))
    assert [b.error is not None for b in batches] == [False, True, False]
    assert batches[1].records is None and batches[1].position == middle


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("damage", ["payload", "count", "codec"])
def test_skip_mode_past_content_damage_with_valid_crc(damage, stream):
    """Damage the CRC cannot see (it was recomputed): the batch is reported, the others
    still come out; the same through a stream."""
    log, frames = _three_batches()
    middle = len(frames[0])
    buf = bytearray(log)
    if damage == "payload":
        buf[middle + 61 : middle + 65] = b"\xff\xff\xff\xff"
    elif damage == "count":
        struct.pack_into(">i", buf, middle + 57, 0x7FFFFFF0)
    else:
        struct.pack_into(">h", buf, middle + 21, 6)  # codec 6 does not exist
    fix_crcs(buf)
    source = io.BytesIO(bytes(buf)) if stream else bytes(buf)
    report = kf.Report()
    offsets = [r.offset for r in kf.iter_records(source, errors="skip", report=report)]
    assert offsets == [0, 1, 2, 3, 8, 9, 10, 11]
    (error,) = report.errors
    assert isinstance(error, kf.CorruptBatchError)
    assert error.position == middle
    if damage == "codec":
        assert isinstance(error, kf.UnsupportedCodecError)


def _source(data: bytes, kind: str, tmp_path: Path):
    if kind == "stream":
        return io.BytesIO(data)
    if kind == "path":
        path = tmp_path / "00000000000000000000.log"
        path.write_bytes(data)
        return path
    return data


SOURCE_KINDS = ["bytes", "stream", "path"]


@pytest.mark.parametrize("kind", SOURCE_KINDS)
@pytest.mark.parametrize("cut", [1, 12, 17, 18, 40, -1])
def test_partial_batch_at_the_end_is_a_truncated_tail(cut, kind, tmp_path):
    log, frames = _three_batches()
    last = frames[2]
    keep = len(last) + cut if cut < 0 else cut
    data = log[: len(log) - len(last) + keep]
    report = kf.Report()
    source = _source(data, kind, tmp_path)
    offsets = [r.offset for r in kf.iter_records(source, report=report)]
    assert offsets == list(range(8))
    assert report.errors == []
    assert [(t.position, t.size) for t in report.truncated] == [(len(log) - len(last), keep)]


@pytest.mark.parametrize("kind", SOURCE_KINDS)
@pytest.mark.parametrize("lie", [0x7FFFFFF0, 0x7FFFFFFF, 1 << 20])
def test_lying_length_of_the_last_batch_is_damage_not_a_tail(lie, kind, tmp_path):
    """A length running past the end over a batch whose records and CRC are whole: Kafka's
    FileLogInputStream stops there (a tail to it), but the CRC, which does not cover the length
    field, proves the batch whole, so the length is broken: damage, and salvage keeps the
    batch. Nothing of the lying size is allocated."""
    log, frames = _three_batches()
    start = len(log) - len(frames[2])
    buf = bytearray(log)
    struct.pack_into(">i", buf, start + 8, lie)
    report = kf.Report()
    tracemalloc.start()
    try:
        source = _source(bytes(buf), kind, tmp_path)
        offsets = [r.offset for r in kf.iter_records(source, errors="skip", report=report)]
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert offsets == list(range(8))
    assert report.truncated == []
    assert [(e.position, e.base_offset) for e in report.errors] == [(start, 8)]
    assert f"batch length {lie} is broken" in report.errors[0].reason
    assert peak < 4 << 20
    if kind != "stream":
        salvaged = kf.iter_records(_source(bytes(buf), kind, tmp_path), errors="salvage")
        assert [r.offset for r in salvaged] == list(range(12))


@pytest.mark.parametrize("kind", SOURCE_KINDS)
@pytest.mark.parametrize("lie", [-1, 0, 13, -0x80000000])
def test_length_below_the_minimum_is_a_framing_error(lie, kind, tmp_path):
    log, frames = _three_batches()
    start = len(frames[0])
    buf = bytearray(log)
    struct.pack_into(">i", buf, start + 8, lie)

    def source():
        return _source(bytes(buf), kind, tmp_path)

    with pytest.raises(kf.FramingError) as info:
        list(kf.iter_records(source()))
    assert (info.value.position, info.value.base_offset) == (start, 4)
    assert str(lie) in str(info.value)
    report = kf.Report()
    offsets = [r.offset for r in kf.iter_records(source(), errors="skip", report=report)]
    assert offsets == [0, 1, 2, 3]  # nothing after an unusable length can be found
    assert [type(e) for e in report.errors] == [kf.FramingError]


@pytest.mark.parametrize(
    ("codec", "magic"), [(1, 2), (2, 2), (3, 2), (4, 2), (1, 1), (2, 1), (3, 1), (1, 0)]
)
def test_decompression_bound(codec, magic):
    """A batch inflating past max_decompressed_bytes is a DecompressionLimitError, without
    holding its whole output; skip mode goes on to the next batch."""
    from aiokafka.record.default_records import DefaultRecordBatchBuilder as AioBuilder
    from aiokafka.record.legacy_records import LegacyRecordBatchBuilder as AioLegacy

    big = b"\0" * (8 << 20)
    if magic == 2:
        builder = AioBuilder(2, codec, False, -1, -1, -1, 1 << 30)
        builder.append(0, 0, None, big, [])
    else:
        builder = AioLegacy(magic, codec, 1 << 30)
        builder.append(0, 0 if magic else None, None, big)
    bomb = bytes(builder.build())
    assert len(bomb) < 1 << 20
    log = bomb + _set_offset(_v2(0, n=2), 1)
    tracemalloc.start()
    try:
        with pytest.raises(kf.DecompressionLimitError):
            list(kf.iter_records(log, max_decompressed_bytes=1 << 20))
        report = kf.Report()
        got = list(
            kf.iter_records(log, max_decompressed_bytes=1 << 20, errors="skip", report=report)
        )
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert [r.offset for r in got] == [1, 2]
    assert [type(e) for e in report.errors] == [kf.DecompressionLimitError]
    assert report.errors[0].position == 0
    assert peak < 6 << 20
    # With room enough, the same batch decodes.
    (record, _, _) = kf.iter_records(log, max_decompressed_bytes=16 << 20)
    assert record.value == big


T_EMPTY = 1_700_000_000_000


def _empty_batch(base_offset: int, last_offset_delta: int, codec: int) -> bytes:
    """A v2 batch of no records (what the log cleaner leaves to keep producer state), by hand."""
    after_crc = struct.pack(">hiqqqhii", codec, last_offset_delta, T_EMPTY, T_EMPTY, 9, 0, 4, 0)
    return struct.pack(">qiibI", base_offset, 49, 0, 2, crc32c(after_crc)) + after_crc


@pytest.mark.parametrize("codec", [0, 1, 2, 3, 4])
def test_empty_batches_between_records(codec):
    """Count 0: no records, whatever the codec bits say, as Kafka's DefaultRecordBatch
    iterator (it does not decompress an empty batch); offsets jump over the batch."""
    log = _v2(0, n=2) + _empty_batch(2, 5, codec) + _set_offset(_v2(0, n=2), 8)
    batches = list(kf.iter_batches(log))
    assert [(b.base_offset, b.last_offset, b.records_count) for b in batches] == [
        (0, 1, 2),
        (2, 7, 0),
        (8, 9, 2),
    ]
    assert batches[1].records == [] and batches[1].codec == codec
    assert batches[1].crc_valid is True
    assert [r.offset for r in kf.iter_records(log)] == [0, 1, 8, 9]


# --- a large sparse file --------------------------------------------------------------------

_SPARSE_CHILD = r"""
import resource, sys, time
import kafka_format as kf
path = sys.argv[1]
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
started = time.perf_counter()
try:
    list(kf.iter_records(path))
    outcome = "no error"
except kf.FramingError as exc:
    outcome = f"FramingError {exc.position} {exc.reason}"
report = kf.Report()
skipped = [r.offset for r in kf.iter_records(path, errors="skip", report=report)]
elapsed = time.perf_counter() - started
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(outcome)
print(skipped, [type(e).__name__ for e in report.errors])
print(elapsed, (after - before) * 1024)
"""


def test_large_sparse_file(tmp_path):
    """3 GB: one real batch, then zeros (a preallocated segment). Reading stops at the first
    zero length, fast, without paging the file in."""
    batch = _v2(1, n=3)
    path = tmp_path / "00000000000000000000.log"
    with open(path, "wb") as fh:
        fh.write(batch)
        fh.truncate(3 << 30)
    if os.stat(path).st_blocks * 512 > 64 << 20:
        pytest.skip("this file system does not keep files sparse")
    out = subprocess.run(
        [sys.executable, "-c", _SPARSE_CHILD, str(path)],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout.splitlines()
    assert out[0].startswith(f"FramingError {len(batch)} ")
    assert "length 0" in out[0]
    assert out[1] == "[0, 1, 2] ['FramingError']"
    elapsed, rss_growth = (float(x) for x in out[2].split())
    assert elapsed < 5
    assert rss_growth < 32 << 20


@pytest.mark.parametrize("xerial", [False, True])
def test_lying_snappy_length_is_refused_before_allocating(xerial):
    """A 100-byte snappy payload declaring 200 MiB: refused without reserving 200 MiB."""
    block = _varint(200 << 20) + b"\x0cabcd" + b"\x00" * 80  # a literal, then junk
    payload = (
        (b"\x82SNAPPY\x00" + struct.pack(">iii", 1, 1, len(block)) + block) if xerial else block
    )
    frame = bytearray(_v2(0, n=1)[:61] + payload)
    struct.pack_into(">h", frame, 21, 2)
    struct.pack_into(">i", frame, 8, len(frame) - 12)
    fix_crcs(frame)
    tracemalloc.start()
    try:
        with pytest.raises(kf.DecompressionError):
            list(kf.iter_records(bytes(frame)))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 8 << 20, f"{peak} bytes traced for a {len(frame)}-byte batch"
