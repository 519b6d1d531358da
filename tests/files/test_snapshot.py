"""Producer-state snapshot reader (runtime/snapshot.py).

Snapshots are packed here as ProducerSnapshot.json (version 1) lays them out, and their CRC is
computed by a bitwise CRC-32C written in this file, independent of the crc32c package the
reader uses.
"""

from __future__ import annotations

import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kafka_format.runtime.errors import CrcMismatchError, IndexFileError, KafkaFormatError
from kafka_format.runtime.files.snapshot import (
    ProducerSnapshot,
    ProducerSnapshotEntry,
    parse_producer_snapshot,
    read_producer_snapshot,
)


def reference_crc32c(data: bytes) -> int:
    """CRC-32C (Castagnoli), reflected polynomial 0x82F63B78, bit by bit."""
    crc = 0xFFFFFFFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF


def test_reference_crc():
    assert reference_crc32c(b"123456789") == 0xE3069283  # the standard check value


ENTRY = ">qhiqiqiq"  # producer id, epoch, last seq, last offset, delta, ts, coord epoch, txn


def build(entries, *, version=1, crc=None, trailing=b"", count=None):
    body = struct.pack(">i", len(entries) if count is None else count)
    body += b"".join(struct.pack(ENTRY, *e) for e in entries) + trailing
    if crc is None:
        crc = reference_crc32c(body)
    return struct.pack(">hI", version, crc) + body


ENTRIES = [
    (4001, 0, 41, 1234, 3, 1_700_000_000_123, -1, -1),
    (4002, 7, 9, 1300, 0, 1_700_000_000_456, 12, 1290),  # transaction in progress
    (4003, 2, -1, -1, 0, 1_700_000_000_789, -1, -1),  # no batch metadata
]


def test_reads_every_field():
    snapshot = parse_producer_snapshot(build(ENTRIES))
    assert isinstance(snapshot, ProducerSnapshot)
    assert snapshot.version == 1
    assert snapshot.crc == reference_crc32c(build(ENTRIES)[6:])
    assert snapshot.trailing_bytes == 0
    assert snapshot.entries[1] == ProducerSnapshotEntry(
        producer_id=4002,
        epoch=7,
        last_sequence=9,
        last_offset=1300,
        offset_delta=0,
        timestamp=1_700_000_000_456,
        coordinator_epoch=12,
        current_txn_first_offset=1290,
    )
    assert [tuple(getattr(e, f) for f in e.__slots__) for e in snapshot.entries] == ENTRIES
    assert snapshot.entries[1].ongoing_txn_first_offset == 1290
    assert snapshot.entries[0].ongoing_txn_first_offset is None
    assert snapshot.entries[0].has_batch_metadata
    assert not snapshot.entries[2].has_batch_metadata


def test_empty_snapshot():
    snapshot = parse_producer_snapshot(build([]))
    assert snapshot.entries == ()
    assert len(build([])) == 10


def test_crc_mismatch_names_both_values():
    data = bytearray(build(ENTRIES))
    data[20] ^= 0x01
    with pytest.raises(CrcMismatchError) as caught:
        parse_producer_snapshot(bytes(data), file="00000000000000000042.snapshot")
    error = caught.value
    assert error.stored == struct.unpack_from(">I", data, 2)[0]
    assert error.computed == reference_crc32c(bytes(data[6:]))
    assert error.stored != error.computed
    assert "crc32c" in str(error) and error.file == "00000000000000000042.snapshot"
    assert error.position == 2
    # ... and decoding without the check still works
    assert len(parse_producer_snapshot(bytes(data), check_crc=False).entries) == 3


def test_wrong_stored_crc():
    good = build(ENTRIES)
    bad = build(ENTRIES, crc=struct.unpack_from(">I", good, 2)[0] ^ 0x80000000)
    with pytest.raises(CrcMismatchError):
        parse_producer_snapshot(bad)


@pytest.mark.parametrize("version", [0, 2, -1, 0x0100])
def test_unknown_version(version):
    with pytest.raises(IndexFileError) as caught:
        parse_producer_snapshot(build(ENTRIES, version=version))
    assert caught.value.position == 0
    assert str(version) in str(caught.value)


@pytest.mark.parametrize("cut", [0, 1, 2, 5, 9, 10, 11, 55, 10 + 46 * 3 - 1])
def test_truncated(cut):
    # Kafka validates the structure before the CRC, so truncation is not a CRC error.
    with pytest.raises(IndexFileError) as caught:
        parse_producer_snapshot(build(ENTRIES)[:cut])
    assert not isinstance(caught.value, CrcMismatchError)


def test_count_beyond_the_file_and_null_array():
    with pytest.raises(IndexFileError) as caught:
        parse_producer_snapshot(build(ENTRIES, count=4))
    assert caught.value.position == 10 + 3 * 46
    with pytest.raises(IndexFileError):
        parse_producer_snapshot(build([], count=-1))


def test_trailing_bytes_covered_by_the_crc_are_accepted():
    # Kafka's reader leaves them unread, but its CRC runs to the end of the file.
    snapshot = parse_producer_snapshot(build(ENTRIES, trailing=b"\x01\x02\x03"))
    assert snapshot.trailing_bytes == 3 and len(snapshot.entries) == 3
    data = build(ENTRIES) + b"\x01\x02\x03"  # CRC computed without them
    with pytest.raises(CrcMismatchError):
        parse_producer_snapshot(data)


def test_read_from_a_file(tmp_path):
    path = tmp_path / "00000000000000001301.snapshot"
    path.write_bytes(build(ENTRIES))
    snapshot = read_producer_snapshot(path)
    assert snapshot.offset == 1301
    assert len(snapshot.entries) == 3
    other = tmp_path / "state.bin"
    other.write_bytes(build(ENTRIES))
    assert read_producer_snapshot(other).offset is None
    bad = tmp_path / "00000000000000000001.snapshot"
    bad.write_bytes(build(ENTRIES, version=2))
    with pytest.raises(IndexFileError) as caught:
        read_producer_snapshot(bad)
    assert caught.value.file == str(bad)


INT64 = st.integers(-(1 << 63), (1 << 63) - 1)
INT32 = st.integers(-(1 << 31), (1 << 31) - 1)
INT16 = st.integers(-(1 << 15), (1 << 15) - 1)
ENTRY_STRATEGY = st.tuples(INT64, INT16, INT32, INT64, INT32, INT64, INT32, INT64)


@given(st.lists(ENTRY_STRATEGY, max_size=20))
def test_round_trip(entries):
    snapshot = parse_producer_snapshot(build(entries))
    assert [tuple(getattr(e, f) for f in e.__slots__) for e in snapshot.entries] == entries


@settings(max_examples=300)
@given(st.binary(max_size=120))
def test_random_bytes_raise_only_our_errors(data):
    try:
        parse_producer_snapshot(data)
    except KafkaFormatError as error:
        assert isinstance(error, IndexFileError | CrcMismatchError)


@given(st.lists(ENTRY_STRATEGY, min_size=1, max_size=5), st.data())
def test_any_flipped_bit_is_caught(entries, data):
    raw = bytearray(build(entries))
    position = data.draw(st.integers(0, len(raw) - 1))
    raw[position] ^= 1 << data.draw(st.integers(0, 7))
    with pytest.raises((IndexFileError, CrcMismatchError)):
        parse_producer_snapshot(bytes(raw))
