"""Decompression: round trips, peers as writers and readers, format quirks, bounds, garbage.

Oracles: kafka-python's and aiokafka's codec functions (independent encoders and decoders:
kafka-python uses python-lz4 and zstandard, aiokafka uses cramjam for everything);
kafka-python's record batch builders; the real record sets of the shared corpus with the
records they hold.
"""

from __future__ import annotations

import base64
import functools
import json
import os
import random
import struct
import time
import tracemalloc
import zlib
from pathlib import Path

import aiokafka.codec as aiokafka_codec
import cramjam
import kafka.codec as kafka_codec
import lz4.frame
import pyarrow as pa
import pytest
import zstandard
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kafka.record.default_records import DefaultRecordBatchBuilder
from kafka.record.legacy_records import LegacyRecordBatchBuilder

from kafka_format.runtime.errors import (
    DecompressionError,
    DecompressionLimitError,
    UnsupportedCodecError,
)
from kafka_format.runtime.format.codecs import (
    DEFAULT_MAX_BYTES,
    Codec,
    compress,
    decompress,
    decompress_buffer,
)
from kafka_format.runtime.format.crc import xxh32

CORPUS = Path(__file__).resolve().parents[3] / "shared" / "corpus"
MiB = 1 << 20
XERIAL_MAGIC = b"\x82SNAPPY\x00"
LZ4_MAGIC = b"\x04\x22\x4d\x18"
COMPRESSED = [Codec.GZIP, Codec.SNAPPY, Codec.LZ4, Codec.ZSTD]
# (codec, magic) pairs Kafka allows
ALLOWED = [(c, m) for c in COMPRESSED for m in (0, 1, 2) if not (c is Codec.ZSTD and m < 2)]


@functools.lru_cache(maxsize=64)
def _sample(size: int, seed: int = 1) -> bytes:
    """Record-like data: compressible, but not trivially."""
    rng = random.Random(seed)
    words = [b"alpha", b"beta", b"kafka", b"record", b"offset", b"%d" % rng.getrandbits(20)]
    out = bytearray()
    while len(out) < size:
        out += rng.choice(words) + rng.randbytes(rng.randint(0, 3))
    return bytes(out[:size])


SIZES = [0, 1, 100, 32 * 1024, 100_000, 3 * MiB + 7]


# ---------------------------------------------------------------------------- round trips


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize(("codec", "magic"), ALLOWED)
def test_round_trip(codec, magic, size):
    data = _sample(size)
    compressed = compress(codec, data, magic=magic)
    assert decompress(codec, compressed, magic=magic) == data
    if size >= 100:
        assert len(compressed) < len(data)


@pytest.mark.parametrize("size", SIZES)
def test_round_trip_raw_snappy(size):
    data = _sample(size)
    compressed = compress(Codec.SNAPPY, data, xerial=False)
    assert not compressed.startswith(XERIAL_MAGIC)
    assert decompress(Codec.SNAPPY, compressed, magic=2) == data


@settings(max_examples=60, deadline=None)
@given(data=st.binary(max_size=5000), codec=st.sampled_from(COMPRESSED))
def test_round_trip_property(data, codec):
    assert decompress(codec, compress(codec, data), magic=2) == data


def test_codec_none_returns_the_data():
    data = _sample(1000)
    assert decompress(Codec.NONE, data, magic=2) is data
    assert decompress(0, memoryview(data)[10:20], magic=0) == data[10:20]
    assert compress(Codec.NONE, bytearray(data)) == data


def test_reads_a_slice_of_a_larger_buffer_in_place():
    data = _sample(50_000)
    for codec in COMPRESSED:
        compressed = compress(codec, data)
        padded = bytearray(b"\xff" * 61 + compressed + b"\xee" * 17)
        view = memoryview(padded)[61 : 61 + len(compressed)]
        assert decompress(codec, view, magic=2) == data


def test_default_bound_is_generous_and_used():
    assert 64 * MiB <= DEFAULT_MAX_BYTES <= 1024 * MiB
    data = _sample(4 * MiB)
    assert decompress(Codec.ZSTD, compress(Codec.ZSTD, data), magic=2) == data


# ---------------------------------------------------------------------------- peers


def _kafka_python_encoders():
    encoders = {Codec.GZIP: kafka_codec.gzip_encode}
    if kafka_codec.has_snappy():  # needs python-snappy, usually absent
        encoders[Codec.SNAPPY] = kafka_codec.snappy_encode
    if kafka_codec.has_lz4():
        encoders[Codec.LZ4] = kafka_codec.lz4_encode
    if kafka_codec.has_zstd():
        encoders[Codec.ZSTD] = kafka_codec.zstd_encode
    return encoders


def _kafka_python_decoders():
    decoders = {Codec.GZIP: kafka_codec.gzip_decode}
    if kafka_codec.has_snappy():
        decoders[Codec.SNAPPY] = kafka_codec.snappy_decode
    if kafka_codec.has_lz4():
        decoders[Codec.LZ4] = kafka_codec.lz4_decode
    if kafka_codec.has_zstd():
        decoders[Codec.ZSTD] = kafka_codec.zstd_decode
    return decoders


AIOKAFKA_ENCODERS = {
    "gzip": (Codec.GZIP, aiokafka_codec.gzip_encode),
    "snappy-xerial": (Codec.SNAPPY, aiokafka_codec.snappy_encode),
    "snappy-raw": (Codec.SNAPPY, lambda d: aiokafka_codec.snappy_encode(d, False)),
    "lz4": (Codec.LZ4, aiokafka_codec.lz4_encode),
    "zstd": (Codec.ZSTD, aiokafka_codec.zstd_encode),
}
AIOKAFKA_DECODERS = {
    Codec.GZIP: aiokafka_codec.gzip_decode,
    Codec.SNAPPY: aiokafka_codec.snappy_decode,
    Codec.LZ4: aiokafka_codec.lz4_decode,
    Codec.ZSTD: aiokafka_codec.zstd_decode,
}


def test_peers_cover_every_codec():
    # A guard on the tests below: if a peer loses a codec, we want to know.
    assert set(_kafka_python_encoders()) >= {Codec.GZIP, Codec.LZ4, Codec.ZSTD}
    assert {codec for codec, _ in AIOKAFKA_ENCODERS.values()} == set(COMPRESSED)


@pytest.mark.parametrize("size", [0, 10, 100_000, MiB + 7])
@pytest.mark.parametrize("codec", list(_kafka_python_encoders()))
def test_kafka_python_encodes_we_decode(codec, size):
    data = _sample(size, seed=size)
    assert decompress(codec, _kafka_python_encoders()[codec](data), magic=2) == data


@pytest.mark.parametrize("size", [0, 10, 100_000, MiB + 7])
@pytest.mark.parametrize("codec", list(_kafka_python_decoders()))
def test_we_encode_kafka_python_decodes(codec, size):
    if codec == Codec.SNAPPY and size == 0:
        # Empty input gives a bare 16-byte xerial header, as snappy-java writes it;
        # kafka-python only recognises xerial framing when more than 16 bytes follow.
        pytest.skip("kafka-python cannot read a xerial stream of no blocks")
    data = _sample(size, seed=size)
    assert _kafka_python_decoders()[codec](compress(codec, data)) == data


@pytest.mark.parametrize("size", [0, 10, 100_000, MiB + 7])
@pytest.mark.parametrize("name", list(AIOKAFKA_ENCODERS))
def test_aiokafka_encodes_we_decode(name, size):
    codec, encode = AIOKAFKA_ENCODERS[name]
    data = _sample(size, seed=size)
    assert decompress(codec, bytes(encode(data)), magic=2) == data


@pytest.mark.parametrize("size", [10, 100_000, MiB + 7])
@pytest.mark.parametrize(
    ("codec", "xerial"), [(c, True) for c in COMPRESSED] + [(Codec.SNAPPY, False)]
)
def test_we_encode_aiokafka_decodes(codec, xerial, size):
    data = _sample(size, seed=size)
    assert AIOKAFKA_DECODERS[codec](compress(codec, data, xerial=xerial)) == data


def _v2_records(payload, count: int) -> list[tuple[bytes | None, bytes | None]]:
    """Keys and values of ``count`` v2 records; asserts they fill the payload exactly."""
    view = memoryview(payload)
    pos = 0

    def varint() -> int:
        nonlocal pos
        raw = shift = 0
        while True:
            byte = view[pos]
            pos += 1
            raw |= (byte & 0x7F) << shift
            shift += 7
            if not byte & 0x80:
                return (raw >> 1) ^ -(raw & 1)

    def field() -> bytes | None:
        nonlocal pos
        length = varint()
        if length < 0:
            return None
        pos += length
        return bytes(view[pos - length : pos])

    records = []
    for _ in range(count):
        length = varint()
        end = pos + length
        pos += 1  # attributes
        varint()  # timestamp delta
        varint()  # offset delta
        key, value = field(), field()
        for _ in range(varint()):  # headers
            field()
            field()
        assert pos == end, "record length disagrees with its fields"
        records.append((key, value))
    assert pos == len(view), "bytes left after the last record"
    return records


def _legacy_messages(buffer) -> list[tuple[bytes | None, bytes | None, int, int]]:
    """(key, value, magic, codec) of each message in a v0/v1 message set."""
    view = memoryview(buffer)
    out = []
    pos = 0
    while len(view) - pos >= 12:
        (size,) = struct.unpack_from(">i", view, pos + 8)
        if pos + 12 + size > len(view):
            break  # partial message at the end of a fetch response
        magic, attributes = view[pos + 16], view[pos + 17]
        at = pos + 18 + (8 if magic == 1 else 0)
        fields = []
        for _ in range(2):
            (length,) = struct.unpack_from(">i", view, at)
            at += 4
            fields.append(None if length < 0 else bytes(view[at : at + length]))
            at += max(length, 0)
        out.append((fields[0], fields[1], magic, attributes & 0x07))
        pos += 12 + size
    return out


@pytest.mark.parametrize("codec", [Codec.NONE, *_kafka_python_encoders()])
def test_kafka_python_v2_batch_payload(codec):
    records = [(b"key%d" % i, _sample(i * 300, seed=i)) for i in range(20)] + [(None, None)]
    builder = DefaultRecordBatchBuilder(
        magic=2,
        compression_type=codec,
        is_transactional=False,
        producer_id=-1,
        producer_epoch=-1,
        base_sequence=-1,
        batch_size=16 * MiB,
    )
    for i, (key, value) in enumerate(records):
        builder.append(i, timestamp=None, key=key, value=value, headers=[])
    batch = bytes(builder.build())
    assert struct.unpack_from(">h", batch, 21)[0] & 0x07 == codec
    (count,) = struct.unpack_from(">i", batch, 57)
    payload = decompress(codec, memoryview(batch)[61:], magic=2)
    assert _v2_records(payload, count) == records


@pytest.mark.parametrize(
    ("magic", "codec"),
    [(m, c) for m in (0, 1) for c in (Codec.GZIP, Codec.LZ4) if c in _kafka_python_encoders()],
)
def test_kafka_python_legacy_wrapper(magic, codec):
    if codec is Codec.LZ4 and magic == 0 and kafka_codec.xxhash is None:
        pytest.skip("kafka-python needs xxhash to write magic-0 lz4")
    builder = LegacyRecordBatchBuilder(magic=magic, compression_type=codec, batch_size=16 * MiB)
    values = [_sample(i * 500, seed=i) for i in range(10)]
    for i, value in enumerate(values):
        builder.append(i, timestamp=None, key=b"k", value=value)
    [(key, wrapped, wrapper_magic, wrapper_codec)] = _legacy_messages(builder.build())
    assert (key, wrapper_magic, wrapper_codec) == (None, magic, codec)
    inner = _legacy_messages(decompress(codec, wrapped, magic=magic))
    assert [(k, v, m, c) for k, v, m, c in inner] == [(b"k", v, magic, 0) for v in values]


# ---------------------------------------------------------------------------- format quirks


def test_compress_writes_kafkas_formats():
    data = _sample(100_000)
    xerial = compress(Codec.SNAPPY, data)
    assert xerial[:16] == XERIAL_MAGIC + struct.pack(">ii", 1, 1)
    info = lz4.frame.get_frame_info(compress(Codec.LZ4, data))
    assert (info["block_linked"], info["content_size"], info["block_size"]) == (False, 0, 65536)
    params = zstandard.get_frame_parameters(compress(Codec.ZSTD, data))
    assert params.content_size == zstandard.CONTENTSIZE_UNKNOWN
    assert zlib.decompress(compress(Codec.GZIP, data), 31) == data


@pytest.mark.parametrize("size", [10, 100_000])
def test_xerial_with_little_endian_version_fields(size):
    # Redpanda writes the xerial version and compat fields little-endian.
    data = _sample(size)
    framed = bytearray(aiokafka_codec.snappy_encode(data))
    assert framed[8:16] == struct.pack(">ii", 1, 1)
    framed[8:16] = struct.pack("<ii", 1, 1)
    assert decompress(Codec.SNAPPY, framed, magic=2) == data


def test_xerial_many_blocks_and_empty():
    data = _sample(10 * 32 * 1024 + 5)
    framed = compress(Codec.SNAPPY, data)
    blocks = 0
    pos = 16
    while pos < len(framed):
        pos += 4 + struct.unpack_from(">i", framed, pos)[0]
        blocks += 1
    assert blocks == 11
    assert decompress(Codec.SNAPPY, framed, magic=2) == data
    assert decompress(Codec.SNAPPY, compress(Codec.SNAPPY, b""), magic=2) == b""


def _kafka08_frame(data: bytes) -> bytes:
    """An LZ4 frame as Kafka 0.8/0.9 wrote it: header checksum over magic + descriptor."""
    frame = bytearray(lz4.frame.compress(data, block_linked=False, store_size=False))
    assert frame[:4] == LZ4_MAGIC and not frame[4] & 0x09  # no content size, no dict id
    correct = (xxh32(frame[4:6]) >> 8) & 0xFF
    broken = (xxh32(frame[0:6]) >> 8) & 0xFF
    assert frame[6] == correct and broken != correct
    frame[6] = broken
    return bytes(frame)


def test_lz4_magic0_broken_header_checksum():
    data = _sample(200_000)
    frame = _kafka08_frame(data)
    with pytest.raises(RuntimeError, match="headerChecksum"):
        lz4.frame.decompress(frame)
    assert decompress(Codec.LZ4, frame, magic=0) == data
    for magic in (1, 2):
        with pytest.raises(DecompressionError, match="headerChecksum"):
            decompress(Codec.LZ4, frame, magic=magic)


def test_lz4_compress_kafka08_checksum_flag():
    data = _sample(50_000)
    assert compress(Codec.LZ4, data, magic=0, kafka08_checksum=True) == _kafka08_frame(data)
    assert compress(Codec.LZ4, data, magic=0) == lz4.frame.compress(
        data, block_linked=False, store_size=False
    )


@pytest.mark.parametrize("header_checksum", ["correct", "arbitrary"])
def test_lz4_magic0_ignores_the_header_checksum_like_kafka(header_checksum):
    # Kafka's reader skips the header checksum for magic 0, so any value must be accepted.
    data = _sample(1000)
    frame = bytearray(compress(Codec.LZ4, data))
    if header_checksum == "arbitrary":
        frame[6] ^= 0x5A
    assert decompress(Codec.LZ4, frame, magic=0) == data


@pytest.mark.parametrize("magic", [0, 2])
def test_lz4_frame_options_and_several_frames(magic):
    parts = [_sample(70_000, seed=s) for s in range(3)]
    frames = [
        lz4.frame.compress(parts[0], store_size=True, content_checksum=True),
        lz4.frame.compress(parts[1], block_linked=True, block_checksum=True),
        lz4.frame.compress(parts[2], block_size=lz4.frame.BLOCKSIZE_MAX4MB),
    ]
    assert decompress(Codec.LZ4, b"".join(frames), magic=magic) == b"".join(parts)


_KAFKA_LZ4_BLOCK_SIZES = [
    lz4.frame.BLOCKSIZE_MAX64KB,
    lz4.frame.BLOCKSIZE_MAX256KB,
    lz4.frame.BLOCKSIZE_MAX1MB,
    lz4.frame.BLOCKSIZE_MAX4MB,
]


@pytest.mark.parametrize("block_size", _KAFKA_LZ4_BLOCK_SIZES)
@pytest.mark.parametrize("magic", [0, 1, 2])
def test_lz4_kafka_frames_decode_block_by_block_into_arrows_pool(block_size, magic):
    # Independent blocks, no checksums, no content size: how the Java client and librdkafka
    # write LZ4. Incompressible bytes make blocks the frame stores uncompressed.
    data = _sample(300_000) + random.Random(3).randbytes(300_000)
    frame = lz4.frame.compress(data, block_size=block_size, block_linked=False, store_size=False)
    out = decompress_buffer(Codec.LZ4, frame, magic=magic)
    assert isinstance(out, pa.Buffer)
    assert out.to_pybytes() == data
    two = decompress_buffer(Codec.LZ4, frame + compress(Codec.LZ4, data[:999]), magic=magic)
    assert isinstance(two, pa.Buffer) and two.to_pybytes() == data + data[:999]


def test_lz4_stored_blocks_are_copied():
    data = random.Random(4).randbytes(200_000)
    frame = lz4.frame.compress(data, block_linked=False, store_size=False)
    assert struct.unpack_from("<I", frame, 7)[0] & 0x80000000  # the first block is stored
    out = decompress_buffer(Codec.LZ4, frame, magic=2)
    assert isinstance(out, pa.Buffer) and out.to_pybytes() == data


@pytest.mark.parametrize(
    "options",
    [
        {"block_linked": True},
        {"block_checksum": True},
        {"content_checksum": True},
        {"store_size": True},
    ],
)
def test_lz4_frames_with_other_options_are_left_to_python_lz4(options):
    data = _sample(150_000)
    frame = lz4.frame.compress(data, **{"block_linked": False, "store_size": False, **options})
    out = decompress_buffer(Codec.LZ4, frame, magic=2)
    assert isinstance(out, bytes) and out == data


@settings(max_examples=300, deadline=None)
@given(
    data=st.binary(min_size=1, max_size=3000),
    flips=st.lists(st.tuples(st.integers(min_value=0), st.integers(0, 7)), max_size=3),
)
def test_lz4_block_decoder_agrees_with_python_lz4_on_damaged_frames(data, flips):
    """python-lz4 as the oracle, whole frames at once: same bytes, or an error where it fails
    or stops before the end (magic 2, where the header checksum is checked as it checks it)."""
    frame = bytearray(compress(Codec.LZ4, data * 40))
    for position, bit in flips:
        frame[position % len(frame)] ^= 1 << bit
    try:
        expected, read = lz4.frame.decompress(bytes(frame), return_bytes_read=True)
        if read != len(frame):
            expected = None  # bytes after the frame: an error here
    except RuntimeError:
        expected = None
    try:
        out = decompress(Codec.LZ4, frame, magic=2)
    except DecompressionError:
        assert expected is None
    else:
        assert out == expected


def test_zstd_several_frames_without_content_size():
    parts = [_sample(n, seed=n) for n in (0, 10, 300_000, 5000)]
    writer = zstandard.ZstdCompressor(write_content_size=False, write_checksum=True)
    frames = [writer.compress(part) for part in parts]
    assert all(
        zstandard.get_frame_parameters(f).content_size == zstandard.CONTENTSIZE_UNKNOWN
        for f in frames
    )
    with pytest.raises(zstandard.ZstdError):
        zstandard.ZstdDecompressor().decompress(b"".join(frames))
    assert decompress(Codec.ZSTD, b"".join(frames), magic=2) == b"".join(parts)


def test_zstd_streamed_frame_and_skippable_frame():
    data = _sample(3 * MiB)
    chunks = zstandard.ZstdCompressor(level=1).compressobj()
    streamed = b"".join(
        [chunks.compress(data[i : i + 100_000]) for i in range(0, len(data), 100_000)]
    )
    streamed += chunks.flush()
    skippable = struct.pack("<II", 0x184D2A5E, 5) + b"hello"
    assert decompress(Codec.ZSTD, skippable + streamed, magic=2) == data


def test_zstd_incompressible_data_in_raw_blocks():
    data = random.Random(3).randbytes(MiB)
    compressed = zstandard.ZstdCompressor(level=1).compress(data)
    assert decompress(Codec.ZSTD, compressed, magic=2) == data


def test_gzip_several_members():
    parts = [_sample(n, seed=n) for n in (0, 1000, 200_000, 7)]
    members = b"".join(kafka_codec.gzip_encode(part) for part in parts)
    assert decompress(Codec.GZIP, members, magic=1) == b"".join(parts)


def test_gzip_many_tiny_members_stay_fast():
    member = kafka_codec.gzip_encode(b"x")
    started = time.perf_counter()
    assert decompress(Codec.GZIP, member * 20_000, magic=2) == b"x" * 20_000
    assert time.perf_counter() - started < 5


# ---------------------------------------------------------------------------- codec ids


@pytest.mark.parametrize("codec", [5, 6, 7, 8, -1])
def test_undefined_codec_ids_are_errors(codec):
    with pytest.raises(UnsupportedCodecError):
        decompress(codec, b"\x00" * 10, magic=2)
    with pytest.raises(UnsupportedCodecError):
        compress(codec, b"data")


@pytest.mark.parametrize("magic", [0, 1])
def test_zstd_needs_magic_2(magic):
    frame = compress(Codec.ZSTD, b"data")
    with pytest.raises(UnsupportedCodecError, match="magic"):
        decompress(Codec.ZSTD, frame, magic=magic)
    with pytest.raises(UnsupportedCodecError):
        compress(Codec.ZSTD, b"data", magic=magic)


def test_codec_ids_match_kafka():
    assert [c.value for c in Codec] == [0, 1, 2, 3, 4]
    assert [c.name for c in Codec] == ["NONE", "GZIP", "SNAPPY", "LZ4", "ZSTD"]


# ---------------------------------------------------------------------------- bounds


@pytest.mark.parametrize("variant", ["gzip", "snappy", "xerial", "lz4", "zstd", "zstd-stream"])
def test_output_exactly_at_the_bound(variant):
    data = _sample(100_000)
    codec, compressed = _encode_variant(variant, data)
    assert decompress(codec, compressed, magic=2, max_bytes=len(data)) == data
    with pytest.raises(DecompressionLimitError):
        decompress(codec, compressed, magic=2, max_bytes=len(data) - 1)


@pytest.mark.parametrize("variant", ["gzip", "snappy", "xerial", "lz4", "zstd", "zstd-stream"])
def test_empty_output_fits_a_zero_bound(variant):
    codec, compressed = _encode_variant(variant, b"")
    assert decompress(codec, compressed, magic=2, max_bytes=0) == b""
    codec, compressed = _encode_variant(variant, b"x")
    with pytest.raises(DecompressionLimitError):
        decompress(codec, compressed, magic=2, max_bytes=0)


def test_negative_bound_is_a_caller_error():
    with pytest.raises(ValueError):
        decompress(Codec.GZIP, compress(Codec.GZIP, b"x"), magic=2, max_bytes=-1)


def _encode_variant(variant: str, data: bytes) -> tuple[Codec, bytes]:
    if variant == "zstd-stream":  # no content size, so no early refusal
        return Codec.ZSTD, zstandard.ZstdCompressor(write_content_size=False).compress(data)
    if variant == "zstd":
        return Codec.ZSTD, zstandard.ZstdCompressor(write_content_size=True).compress(data)
    if variant == "snappy":
        return Codec.SNAPPY, compress(Codec.SNAPPY, data, xerial=False)
    if variant == "xerial":
        return Codec.SNAPPY, compress(Codec.SNAPPY, data)
    return Codec[variant.upper()], compress(Codec[variant.upper()], data)


BOMB_SIZE = 64 * MiB


def _bomb(variant: str) -> tuple[Codec, bytes]:
    """64 MiB of zeros, compressed without ever holding the 64 MiB."""
    zeros = bytes(MiB)
    count = BOMB_SIZE // MiB
    if variant == "gzip":
        writer = zlib.compressobj(9, zlib.DEFLATED, 31)
        return Codec.GZIP, b"".join(
            [writer.compress(zeros) for _ in range(count)] + [writer.flush()]
        )
    if variant in ("zstd", "zstd-sized"):
        sized = variant == "zstd-sized"
        writer = zstandard.ZstdCompressor(write_content_size=sized).compressobj(
            size=BOMB_SIZE if sized else -1
        )
        return Codec.ZSTD, b"".join(
            [writer.compress(zeros) for _ in range(count)] + [writer.flush()]
        )
    if variant == "lz4":
        writer = lz4.frame.LZ4FrameCompressor(block_linked=False)
        parts = [writer.begin()] + [writer.compress(zeros) for _ in range(count)] + [writer.flush()]
        return Codec.LZ4, b"".join(parts)
    if variant == "xerial":
        block = bytes(cramjam.snappy.compress_raw(bytes(32 * 1024)))
        header = XERIAL_MAGIC + struct.pack(">ii", 1, 1)
        return Codec.SNAPPY, header + (struct.pack(">i", len(block)) + block) * (BOMB_SIZE // 32768)
    assert variant == "snappy"
    # A raw snappy block: length preamble, one literal zero, then copies of 64 bytes at
    # offset 1 (tag 0b10, 2-byte offset) until 64 MiB are described.
    copies = (BOMB_SIZE - 1) // 64
    body = b"\x00\x00" + bytes([(63 << 2) | 2, 1, 0]) * copies
    tail = BOMB_SIZE - 1 - copies * 64
    body += bytes([((tail - 1) << 2) | 2, 1, 0])
    preamble = bytearray()
    n = BOMB_SIZE
    while n >= 0x80:
        preamble.append((n & 0x7F) | 0x80)
        n >>= 7
    preamble.append(n)
    return Codec.SNAPPY, bytes(preamble) + body


BOMBS = ["gzip", "zstd", "zstd-sized", "lz4", "xerial", "snappy"]


@pytest.mark.parametrize("variant", BOMBS)
def test_bomb_is_stopped_early_and_small(variant):
    codec, bomb = _bomb(variant)
    assert len(bomb) < BOMB_SIZE // 16
    tracemalloc.start()
    started = time.perf_counter()
    try:
        with pytest.raises(DecompressionLimitError, match="max_bytes=1048576"):
            decompress(codec, bomb, magic=2, max_bytes=MiB)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert time.perf_counter() - started < 2
    # Output buffers are Python objects, which tracemalloc sees; the 64 MiB never exists.
    assert peak < 6 * MiB


@pytest.mark.parametrize("variant", BOMBS)
def test_bomb_decodes_in_full_with_room(variant):
    # The same payloads are valid: the bound, not the decoder, stopped them above.
    codec, bomb = _bomb(variant)
    assert decompress(codec, bomb, magic=2, max_bytes=BOMB_SIZE) == bytes(BOMB_SIZE)


def test_snappy_lying_preamble_is_refused_before_decoding():
    lying = b"\xff\xff\xff\xff\x0f" + b"\x00" * 8  # claims 4 GiB
    tracemalloc.start()
    try:
        with pytest.raises(DecompressionLimitError):
            decompress(Codec.SNAPPY, lying, magic=2)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < MiB


# ---------------------------------------------------------------------------- garbage


def _valid_payloads() -> list[tuple[Codec, int, bytes]]:
    data = _sample(20_000)
    payloads = [(c, 2, compress(c, data)) for c in COMPRESSED]
    payloads += [
        (Codec.SNAPPY, 2, compress(Codec.SNAPPY, data, xerial=False)),
        (Codec.LZ4, 0, compress(Codec.LZ4, data, magic=0, kafka08_checksum=True)),
        (Codec.ZSTD, 2, zstandard.ZstdCompressor(write_checksum=True).compress(data) * 2),
        (Codec.GZIP, 2, compress(Codec.GZIP, data) * 2),
    ]
    return payloads


VALID = _valid_payloads()


def _decode_or_our_error(codec, data, magic) -> None:
    try:
        out = decompress(codec, data, magic=magic, max_bytes=MiB)
    except DecompressionError:
        return
    assert isinstance(out, bytes) and len(out) <= MiB


@settings(max_examples=400, deadline=1000)
@given(st.sampled_from(ALLOWED), st.binary(max_size=300))
def test_random_bytes_raise_only_our_errors(codec_magic, data):
    codec, magic = codec_magic
    _decode_or_our_error(codec, data, magic)


@settings(max_examples=200, deadline=1000)
@given(st.sampled_from(ALLOWED), st.binary(max_size=200))
def test_random_bytes_behind_a_valid_magic_raise_only_our_errors(codec_magic, data):
    codec, magic = codec_magic
    prefix = {Codec.GZIP: b"\x1f\x8b\x08", Codec.SNAPPY: XERIAL_MAGIC, Codec.LZ4: LZ4_MAGIC}
    _decode_or_our_error(codec, prefix.get(codec, b"\x28\xb5\x2f\xfd") + data, magic)


@settings(max_examples=400, deadline=1000, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.sampled_from(VALID),
    st.lists(st.tuples(st.integers(min_value=0), st.integers(0, 7)), min_size=1, max_size=8),
)
def test_bit_flipped_payloads_raise_only_our_errors(payload, flips):
    codec, magic, data = payload
    mutated = bytearray(data)
    for position, bit in flips:
        mutated[position % len(mutated)] ^= 1 << bit
    _decode_or_our_error(codec, mutated, magic)


@settings(max_examples=300, deadline=1000)
@given(st.sampled_from(VALID), st.integers(min_value=0), st.binary(max_size=12))
def test_truncated_or_spliced_payloads_raise_only_our_errors(payload, cut, splice):
    codec, magic, data = payload
    cut %= len(data)
    _decode_or_our_error(codec, data[:cut], magic)
    _decode_or_our_error(codec, data[:cut] + splice + data[cut + len(splice) :], magic)


@pytest.mark.parametrize("variant", ["gzip", "snappy", "lz4", "zstd", "zstd-stream"])
def test_truncation_is_always_an_error(variant):
    # Single-member / single-frame / raw payloads: no strict prefix is valid.
    codec, compressed = _encode_variant(variant, _sample(100_000))
    for cut in sorted({0, 1, 5, 20, len(compressed) // 2, len(compressed) - 1}):
        with pytest.raises(DecompressionError):
            decompress(codec, compressed[:cut], magic=2)


def test_xerial_lying_block_length_is_an_error():
    framed = bytearray(compress(Codec.SNAPPY, _sample(100_000)))
    struct.pack_into(">i", framed, 16, 0x7FFFFFF0)
    with pytest.raises(DecompressionError, match="declares"):
        decompress(Codec.SNAPPY, framed, magic=2)
    struct.pack_into(">i", framed, 16, -5)
    with pytest.raises(DecompressionError):
        decompress(Codec.SNAPPY, framed, magic=2)


@pytest.mark.parametrize("codec", [Codec.GZIP, Codec.LZ4, Codec.ZSTD])
def test_trailing_garbage_is_an_error(codec):
    compressed = compress(codec, _sample(1000))
    for tail in (b"\x00", b"\x00" * 16, b"garbage!garbage!"):
        with pytest.raises(DecompressionError):
            decompress(codec, compressed + tail, magic=2)


@pytest.mark.parametrize("codec", COMPRESSED)
def test_empty_payload_is_an_error(codec):
    with pytest.raises(DecompressionError, match="empty"):
        decompress(codec, b"", magic=2)


# ---------------------------------------------------------------------------- corpus


def _corpus_missing() -> None:
    message = f"corpus not found at {CORPUS}"
    if os.environ.get("CI") == "true":
        pytest.fail(message)
    pytest.skip(message)


def _manifest() -> list[dict | None]:
    path = CORPUS / "MANIFEST.json"
    return json.loads(path.read_text()) if path.is_file() else [None]


def _frames(buffer):
    view = memoryview(buffer)
    pos = 0
    while len(view) - pos >= 12:
        (length,) = struct.unpack_from(">i", view, pos + 8)
        if pos + 12 + length > len(view):
            return
        yield view[pos : pos + 12 + length]
        pos += 12 + length


def _compressed_payloads(buffer) -> list[tuple[Codec, int, bytes, int | None]]:
    """(codec, magic, compressed bytes, v2 record count or None) of every compressed unit."""
    found = []
    for frame in _frames(buffer):
        magic = frame[16]
        if magic == 2:
            codec = struct.unpack_from(">h", frame, 21)[0] & 0x07
            if codec:
                count = struct.unpack_from(">i", frame, 57)[0]
                found.append((Codec(codec), 2, bytes(frame[61:]), count))
        else:
            [(_, value, _, codec)] = _legacy_messages(frame)
            if codec:
                found.append((Codec(codec), magic, value, None))
    return found


def _data_records(buffer) -> list[tuple[bytes | None, bytes | None]]:
    records = []
    for frame in _frames(buffer):
        magic = frame[16]
        if magic == 2:
            attributes = struct.unpack_from(">h", frame, 21)[0]
            payload = decompress(attributes & 0x07, frame[61:], magic=2)
            batch = _v2_records(payload, struct.unpack_from(">i", frame, 57)[0])
            if not attributes & 0x20:  # control batches hold no data records
                records += batch
        else:
            [(key, value, _, codec)] = _legacy_messages(frame)
            if codec:
                inner = _legacy_messages(decompress(codec, value, magic=magic))
                records += [(k, v) for k, v, _, _ in inner]
            else:
                records.append((key, value))
    return records


def _expected(entry) -> list[tuple[bytes | None, bytes | None]]:
    def unb64(text):
        return None if text is None else base64.b64decode(text)

    lines = (CORPUS / entry["expected"]).read_text().splitlines()
    return [(unb64(r["key"]), unb64(r["value"])) for r in map(json.loads, lines) if r]


@pytest.mark.parametrize(
    "entry", _manifest(), ids=lambda entry: entry["file"] if entry else "corpus-missing"
)
def test_corpus_records_decompress_to_the_expected_keys_and_values(entry):
    if entry is None:
        _corpus_missing()
    buffer = (CORPUS / entry["file"]).read_bytes()
    assert _data_records(buffer) == _expected(entry)
    codecs = {codec for codec, *_ in _compressed_payloads(buffer)}
    assert {codec.name.lower() for codec in codecs} <= set(entry["codecs"])


def _all_corpus_payloads() -> list:
    entries = [e for e in _manifest() if e is not None]
    payloads = []
    for entry in entries:
        for codec, magic, data, count in _compressed_payloads(
            (CORPUS / entry["file"]).read_bytes()
        ):
            payloads.append(
                pytest.param(codec, magic, data, count, id=f"{entry['file']}-{codec.name}")
            )
    return payloads or [pytest.param(None, None, None, None, id="corpus-missing")]


CORPUS_PAYLOADS = _all_corpus_payloads()


def test_corpus_covers_every_codec_and_both_snappy_framings():
    if CORPUS_PAYLOADS[0].values[0] is None:
        _corpus_missing()
    seen = {(p.values[0], p.values[1]) for p in CORPUS_PAYLOADS}
    assert {codec for codec, _ in seen} == set(COMPRESSED)
    assert {(Codec.GZIP, 0), (Codec.SNAPPY, 0), (Codec.GZIP, 1), (Codec.SNAPPY, 2)} <= seen
    snappy = [p.values[2] for p in CORPUS_PAYLOADS if p.values[0] is Codec.SNAPPY]
    assert any(s.startswith(XERIAL_MAGIC) for s in snappy)
    assert any(not s.startswith(XERIAL_MAGIC) for s in snappy)


@pytest.mark.parametrize(("codec", "magic", "data", "count"), CORPUS_PAYLOADS)
def test_corpus_payloads_match_peer_decoders(codec, magic, data, count):
    if codec is None:
        _corpus_missing()
    ours = decompress(codec, data, magic=magic)
    assert ours == AIOKAFKA_DECODERS[codec](data)
    if codec in _kafka_python_decoders():
        assert ours == _kafka_python_decoders()[codec](data)
    if count is not None:  # v2: the payload is exactly `count` well-formed records
        assert len(_v2_records(ours, count)) == count
    else:  # v0/v1 wrapper: the payload is a whole message set, nothing left over
        assert sum(len(frame) for frame in _frames(ours)) == len(ours)


@settings(max_examples=60, deadline=None)
@given(
    data=st.binary(max_size=5000),
    codec=st.sampled_from(COMPRESSED),
    xerial=st.booleans(),
)
def test_decompress_buffer_gives_what_decompress_gives(data, codec, xerial):
    """The bulk reader's variant may hand back an Arrow buffer (snappy decodes into one), but
    never other bytes than the input compressed."""
    payload = compress(codec, data, magic=2, xerial=xerial)
    result = decompress_buffer(codec, payload, magic=2)
    assert isinstance(result, bytes | pa.Buffer)
    assert bytes(memoryview(result)) == decompress(codec, payload, magic=2) == data
    assert isinstance(decompress(codec, payload, magic=2), bytes)


# kafka-python's CompressionType names (kafka/record/default_records.py) by attribute id.
_KAFKA_PYTHON_NAMES = {0: "none", 1: "gzip", 2: "snappy", 3: "lz4", 4: "zstd"}


@pytest.mark.parametrize("codec_id", sorted(_KAFKA_PYTHON_NAMES))
def test_batch_codec_is_named(tmp_path, codec_id):
    """``Batch.codec`` is a :class:`Codec` (still equal to the attributes' id) whose label is
    the name the CLI prints; an id Kafka does not define stays the bare id."""
    import kafka_format as kf

    builder = DefaultRecordBatchBuilder(
        magic=2,
        compression_type=codec_id,
        is_transactional=False,
        producer_id=-1,
        producer_epoch=-1,
        base_sequence=-1,
        batch_size=MiB,
    )
    builder.append(0, timestamp=None, key=b"k", value=b"v" * 100, headers=[])
    data = bytes(builder.build())
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(data)
    (batch,) = kf.iter_batches(path)
    assert batch.codec == codec_id
    assert isinstance(batch.codec, kf.Codec)
    assert batch.codec.label == _KAFKA_PYTHON_NAMES[codec_id]
    # bits 0-2 set to 5: no Codec, the id itself; reading it says which codec it is not
    attributes = struct.unpack_from(">h", data, 21)[0]
    damaged = bytearray(data)
    struct.pack_into(">h", damaged, 21, (attributes & ~0x07) | 5)
    path.write_bytes(bytes(damaged))
    (batch,) = kf.iter_batches(path, verify_crc=False, errors="skip")
    assert batch.codec == 5 and not isinstance(batch.codec, kf.Codec)
    assert isinstance(batch.error, kf.UnsupportedCodecError)
    assert "compression codec id 5 is not defined by Kafka" in str(batch.error)
