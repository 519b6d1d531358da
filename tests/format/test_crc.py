"""Checksums: published test vectors, independent implementations, and every real frame's CRC.

Oracles: the CRC catalogue's check values and RFC 3720's CRC-32C vectors; kafka-python's
pure-Python CRC-32C; python-lz4's own header and content checksums (xxh32); kafka-python's
record builders, which store the CRC over the range *they* think Kafka covers; the corpus,
whose CRCs real brokers and clients wrote.
"""

from __future__ import annotations

import json
import mmap
import os
import random
import struct
from pathlib import Path

import lz4.frame
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kafka.record import _crc32c as kafka_python_crc32c
from kafka.record.default_records import DefaultRecordBatchBuilder
from kafka.record.legacy_records import LegacyRecordBatchBuilder

from kafka_format.runtime.errors import CorruptBatchError, CrcMismatchError
from kafka_format.runtime.format.codecs import decompress
from kafka_format.runtime.format.crc import (
    FrameCrc,
    crc32,
    crc32c,
    frame_crc,
    legacy_message_crc,
    record_batch_crc,
    stored_crc,
    verify_frame_crc,
    xxh32,
)

CORPUS = Path(__file__).resolve().parents[3] / "shared" / "corpus"


def _corpus_missing() -> None:
    message = f"corpus not found at {CORPUS}"
    if os.environ.get("CI") == "true":
        pytest.fail(message)
    pytest.skip(message)


def _manifest() -> list[dict | None]:
    path = CORPUS / "MANIFEST.json"
    return json.loads(path.read_text()) if path.is_file() else [None]


def _frames(buffer):
    """Whole frames (offset, length, body) of a record set; stops at a partial tail."""
    view = memoryview(buffer)
    pos = 0
    while len(view) - pos >= 12:
        (length,) = struct.unpack_from(">i", view, pos + 8)
        end = pos + 12 + length
        if end > len(view):
            return
        yield view[pos:end]
        pos = end


# ---------------------------------------------------------------------------- test vectors


def test_crc32_check_value():
    # CRC catalogue "check" value of CRC-32/ISO-HDLC
    assert crc32(b"123456789") == 0xCBF43926
    assert crc32(b"") == 0


def test_crc32c_check_value_and_rfc3720_vectors():
    assert crc32c(b"123456789") == 0xE3069283
    # RFC 3720 (iSCSI), appendix B.4
    assert crc32c(bytes(32)) == 0x8A9136AA
    assert crc32c(b"\xff" * 32) == 0x62A8AB43
    assert crc32c(bytes(range(32))) == 0x46DD794E
    assert crc32c(bytes(range(31, -1, -1))) == 0x113FDB5C


@pytest.mark.parametrize("function", [crc32, crc32c, xxh32])
def test_every_buffer_type_gives_the_same_result(function, tmp_path):
    data = bytes(random.Random(7).randbytes(1000))
    expected = function(data)
    padded = b"xyz" + data + b"abc"
    path = tmp_path / "data.bin"
    path.write_bytes(data)
    with path.open("rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as m:
        assert function(m) == expected
    assert function(bytearray(data)) == expected
    assert function(memoryview(padded)[3:-3]) == expected
    assert function(memoryview(data).cast("I")) == expected  # non-byte item format


@settings(max_examples=200)
@given(st.binary(max_size=3000))
def test_crc32c_matches_kafka_python_pure_python_implementation(data):
    assert crc32c(data) == kafka_python_crc32c.crc(data)


def test_xxh32_known_values():
    # Reference values from xxHash's own sanity tests
    assert xxh32(b"") == 0x02CC5D05
    assert xxh32(b"a") == 0x550D7456
    assert xxh32(b"abc") == 0x32D153FF


@settings(max_examples=150)
@given(st.binary(max_size=600))
def test_xxh32_matches_lz4_content_checksum(data):
    # An LZ4 frame's content checksum is xxh32(content, seed 0), little-endian, after the
    # end mark: python-lz4 computes it in C, independently of us.
    frame = lz4.frame.compress(data, content_checksum=True, store_size=False)
    assert struct.unpack("<I", frame[-4:])[0] == xxh32(data)


@pytest.mark.parametrize("store_size", [False, True])
@pytest.mark.parametrize("block_size", [lz4.frame.BLOCKSIZE_MAX64KB, lz4.frame.BLOCKSIZE_MAX4MB])
def test_xxh32_reproduces_lz4_header_checksum(store_size, block_size):
    frame = lz4.frame.compress(b"x" * 1000, store_size=store_size, block_size=block_size)
    header_end = 6 + (8 if frame[4] & 0x08 else 0)
    assert frame[header_end] == (xxh32(frame[4:header_end]) >> 8) & 0xFF


def test_xxh32_seed_changes_the_hash():
    assert xxh32(b"abc", seed=1) != xxh32(b"abc")
    assert xxh32(b"abc", seed=0) == xxh32(b"abc")


# ---------------------------------------------------------------------------- frame helpers


def _legacy_frame(magic: int, compression: int = 0) -> bytearray:
    """A message set: three messages, or one wrapper message holding them compressed."""
    builder = LegacyRecordBatchBuilder(
        magic=magic, compression_type=compression, batch_size=1 << 20
    )
    for i in range(3):
        builder.append(i, timestamp=1_700_000_000_000 + i, key=b"k%d" % i, value=b"v" * i * 10)
    return bytearray(builder.build())


def _v2_frame(compression: int = 0) -> bytearray:
    builder = DefaultRecordBatchBuilder(
        magic=2,
        compression_type=compression,
        is_transactional=False,
        producer_id=-1,
        producer_epoch=-1,
        base_sequence=-1,
        batch_size=1 << 20,
    )
    for i in range(3):
        builder.append(
            i, timestamp=1_700_000_000_000 + i, key=b"k%d" % i, value=b"v" * i, headers=[]
        )
    return bytearray(builder.build())


@pytest.mark.parametrize("magic,compression", [(0, 0), (0, 1), (1, 0), (1, 1), (1, 3)])
def test_legacy_crc_matches_kafka_python_builder(magic, compression):
    frames = list(_frames(_legacy_frame(magic, compression)))
    assert len(frames) == (1 if compression else 3)
    for frame in frames:
        result = frame_crc(frame)
        assert result.stored == struct.unpack_from(">I", frame, 12)[0]
        assert result.algorithm == "crc32"
        assert result.valid
        assert legacy_message_crc(frame) == stored_crc(frame)


@pytest.mark.parametrize("compression", [0, 1, 3, 4])
def test_batch_crc_matches_kafka_python_builder(compression):
    frame = _v2_frame(compression)
    result = frame_crc(frame)
    assert result.algorithm == "crc32c"
    assert result.stored == struct.unpack_from(">I", frame, 17)[0]
    assert result.valid
    assert record_batch_crc(frame) == result.stored


def test_legacy_crc_covers_exactly_magic_to_end():
    frame = _legacy_frame(1, compression=1)
    stored = stored_crc(frame)
    # offset and size (bytes 0..12) are outside the checksum
    for position in (0, 7, 11):
        changed = bytearray(frame)
        changed[position] ^= 0x01
        assert legacy_message_crc(changed) == stored
    for position in (16, 17, len(frame) - 1):
        changed = bytearray(frame)
        changed[position] ^= 0x01
        assert legacy_message_crc(changed) != stored


def test_batch_crc_covers_exactly_attributes_to_end():
    frame = _v2_frame()
    stored = stored_crc(frame)
    # base offset, length, partition leader epoch are outside it (the broker rewrites the
    # offset and the leader epoch without recomputing the CRC); so is the magic byte
    for position in (0, 8, 12, 15):
        changed = bytearray(frame)
        changed[position] ^= 0x01
        assert record_batch_crc(changed) == stored
    for position in (21, 22, 60, len(frame) - 1):
        changed = bytearray(frame)
        changed[position] ^= 0x01
        assert record_batch_crc(changed) != stored


def test_verify_frame_crc_reports_both_values_and_location():
    frame = _v2_frame()
    struct.pack_into(">q", frame, 0, 4242)
    assert verify_frame_crc(frame).valid
    frame[-1] ^= 0xFF
    with pytest.raises(CrcMismatchError) as caught:
        verify_frame_crc(frame, file="x.log", position=128)
    error = caught.value
    assert error.stored == stored_crc(frame)
    assert error.computed == record_batch_crc(frame)
    assert (error.file, error.position, error.base_offset) == ("x.log", 128, 4242)
    assert "crc32c" in str(error) and f"0x{error.stored:08x}" in str(error)


@pytest.mark.parametrize(
    "frame",
    [b"", bytes(16), bytes(16) + b"\x02" + bytes(3), bytes(16) + b"\x07" + bytes(50)],
    ids=["empty", "no-magic", "short-v2", "unknown-magic"],
)
def test_unusable_frames_raise_our_error(frame):
    with pytest.raises(CorruptBatchError):
        frame_crc(frame)


# ---------------------------------------------------------------------------- corpus


def _all_crcs(buffer) -> list[FrameCrc]:
    """CRCs of every frame, and of the inner messages of compressed v0/v1 wrappers."""
    results = []
    for frame in _frames(buffer):
        results.append(frame_crc(frame))
        magic = frame[16]
        if magic in (0, 1) and frame[17] & 0x07:
            key_at = 18 + (8 if magic == 1 else 0)
            (key_length,) = struct.unpack_from(">i", frame, key_at)
            value_at = key_at + 4 + max(key_length, 0)
            (value_length,) = struct.unpack_from(">i", frame, value_at)
            value = frame[value_at + 4 : value_at + 4 + value_length]
            inner = decompress(frame[17] & 0x07, value, magic=magic)
            results += [frame_crc(inner_frame) for inner_frame in _frames(inner)]
    return results


@pytest.mark.parametrize(
    "entry", _manifest(), ids=lambda entry: entry["file"] if entry else "corpus-missing"
)
def test_corpus_stored_crcs_match_computed(entry):
    if entry is None:
        _corpus_missing()
    results = _all_crcs((CORPUS / entry["file"]).read_bytes())
    assert results
    assert {r.algorithm for r in results} <= {"crc32", "crc32c"}
    if entry["crc_valid"]:
        assert all(r.valid for r in results), [r for r in results if not r.valid]
    else:
        assert not all(r.valid for r in results)
