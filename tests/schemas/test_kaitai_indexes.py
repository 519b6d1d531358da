"""Index, transaction-index, snapshot and control-record schemas against bytes built here
with struct.pack (layouts from Kafka's OffsetIndex, TimeIndex, AbortedTxn,
ProducerStateManager, ControlRecordType, EndTransactionMarker) and a real .timeindex."""

from __future__ import annotations

import json
import os
import struct
from pathlib import Path

import crc32c
import pytest
from hypothesis import given
from hypothesis import strategies as st
from kaitaistruct import BytesIO, KaitaiStream, ValidationExprError

from kafka_format.generated.kaitai.control_record_key import ControlRecordKey
from kafka_format.generated.kaitai.end_txn_marker import EndTxnMarker
from kafka_format.generated.kaitai.offset_index import OffsetIndex
from kafka_format.generated.kaitai.producer_snapshot import ProducerSnapshot
from kafka_format.generated.kaitai.time_index import TimeIndex
from kafka_format.generated.kaitai.txn_index import TxnIndex

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT.parent / "shared" / "corpus"

S2 = st.integers(-(2**15), 2**15 - 1)
S4 = st.integers(-(2**31), 2**31 - 1)
S8 = st.integers(-(2**63), 2**63 - 1)


def stream(data: bytes) -> KaitaiStream:
    return KaitaiStream(BytesIO(data))


@given(st.lists(st.tuples(S4, S4), max_size=20))
def test_offset_index(entries: list[tuple[int, int]]) -> None:
    data = b"".join(struct.pack(">ii", rel, pos) for rel, pos in entries)
    parsed = OffsetIndex(stream(data))
    assert [(e.relative_offset, e.position) for e in parsed.entries] == entries


@given(st.lists(st.tuples(S8, S4), max_size=20))
def test_time_index(entries: list[tuple[int, int]]) -> None:
    data = b"".join(struct.pack(">qi", ts, rel) for ts, rel in entries)
    parsed = TimeIndex(stream(data))
    assert [(e.timestamp, e.relative_offset) for e in parsed.entries] == entries


@given(st.lists(st.tuples(S2, S8, S8, S8, S8), max_size=10))
def test_txn_index(entries: list[tuple[int, int, int, int, int]]) -> None:
    data = b"".join(struct.pack(">hqqqq", *e) for e in entries)
    assert len(data) == 34 * len(entries)
    parsed = TxnIndex(stream(data))
    got = [
        (a.version, a.producer_id, a.first_offset, a.last_offset, a.last_stable_offset)
        for a in parsed.entries
    ]
    assert got == entries


def test_index_with_partial_entry_raises() -> None:
    with pytest.raises(EOFError):
        OffsetIndex(stream(struct.pack(">ii", 1, 2) + b"\x00\x00\x00"))


SNAPSHOT_ENTRY = st.tuples(S8, S2, S4, S8, S4, S8, S4, S8)


@given(st.lists(SNAPSHOT_ENTRY, max_size=8))
def test_producer_snapshot(entries: list[tuple[int, ...]]) -> None:
    body = struct.pack(">i", len(entries)) + b"".join(struct.pack(">qhiqiqiq", *e) for e in entries)
    assert len(body) == 4 + 46 * len(entries)
    crc = crc32c.crc32c(body)
    data = struct.pack(">hI", 1, crc) + body
    parsed = ProducerSnapshot(stream(data))
    assert (parsed.version, parsed.crc, parsed.num_entries) == (1, crc, len(entries))
    got = [
        (
            e.producer_id,
            e.epoch,
            e.last_sequence,
            e.last_offset,
            e.offset_delta,
            e.timestamp,
            e.coordinator_epoch,
            e.current_txn_first_offset,
        )
        for e in parsed.entries
    ]
    assert got == entries


def test_producer_snapshot_negative_count_is_rejected() -> None:
    with pytest.raises(ValidationExprError):
        ProducerSnapshot(stream(struct.pack(">hIi", 1, 0, -1)))


@pytest.mark.parametrize(
    ("code", "name"),
    [
        (0, "abort"),
        (1, "commit"),
        (2, "leader_change"),
        (3, "snapshot_header"),
        (4, "snapshot_footer"),
        (5, "kraft_version"),
        (6, "kraft_voters"),
    ],
)
def test_control_record_key(code: int, name: str) -> None:
    key = ControlRecordKey(stream(struct.pack(">hh", 0, code)))
    assert key.version == 0
    assert key.type.name == name
    assert key.type == code


def test_control_record_key_unknown_type_stays_a_number() -> None:
    assert ControlRecordKey(stream(struct.pack(">hh", 0, 99))).type == 99


def test_end_txn_marker() -> None:
    marker = EndTxnMarker(stream(struct.pack(">hi", 0, 17)))
    assert (marker.version, marker.coordinator_epoch) == (0, 17)


def test_real_time_index_points_into_its_segment() -> None:
    """Each entry names a message of the segment and the largest timestamp up to it."""
    if not CORPUS.is_dir():
        if os.environ.get("CI") == "true":
            pytest.fail(f"corpus not found at {CORPUS} (required when CI=true)")
        pytest.skip(f"corpus not found at {CORPUS}")
    stem = CORPUS / "recordupdater" / "hello-0.00000000000000000000"
    base_offset = int(stem.name.split("-")[1].split(".")[0])
    data = stem.with_name(stem.name + ".timeindex").read_bytes()
    parsed = TimeIndex(stream(data))
    assert len(parsed.entries) == len(data) // 12 >= 1
    jsonl = stem.with_name(stem.name + ".log.jsonl").read_text()
    records = [json.loads(line) for line in jsonl.splitlines()]
    by_offset = {r["offset"]: r for r in records}
    for e in parsed.entries:
        offset = base_offset + e.relative_offset
        assert offset in by_offset
        assert e.timestamp == max(r["timestamp"] for r in records if r["offset"] <= offset)
