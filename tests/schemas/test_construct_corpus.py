"""The Construct schemas (interpreted and compiled) against real record sets (../shared/corpus).

Oracle: the corpus's .jsonl files and MANIFEST.json, written from the source repositories'
own readers and golden files; nothing expected here comes from our parser. The sets come from
tests/conftest.py (skipped when ../shared/corpus is absent, failed when CI=true). gzip
payloads are opened with the standard library (so wrapped and batched records are compared
too); other codecs are the runtime's job, so those batches are checked through their headers
against the expected records they must cover.
"""

from __future__ import annotations

import base64
import gzip
import zlib
from pathlib import Path

from construct import Container
from crc32c import crc32c

from kafka_format.schemas import compiled
from kafka_format.schemas.control_record_key import ControlRecordKey, ControlRecordType
from kafka_format.schemas.end_txn_marker import EndTxnMarker
from kafka_format.schemas.legacy_message import LegacyMessage
from kafka_format.schemas.record_batch import RecordBatch
from kafka_format.schemas.record_set import RecordSet
from kafka_format.schemas.time_index import TimeIndex


def _b64(raw: bytes | None) -> str | None:
    return None if raw is None else base64.b64encode(raw).decode("ascii")


def _parse_both(name: str, data: bytes, **context) -> Container:
    """Parse interpreted and compiled; they must agree."""
    interpreted = compiled.schema(name).parse(data, **context)
    assert compiled.parse(name, data, **context) == interpreted, name
    return interpreted


class Walk:
    """What a reader of a record set sees, in order: decoded records, and spans it cannot open.

    ``events`` holds ("records", [canonical dicts]), ("batch", first, last, count) for a v2
    batch with a codec other than gzip, and ("wrapper", last) for such a legacy wrapper.
    """

    def __init__(self) -> None:
        self.events: list[tuple] = []
        self.crcs: list[tuple[int, int]] = []  # (stored, computed)
        self.control_keys: list[Container] = []

    def record_set(self, data: bytes, wrapper: Container | None = None) -> None:
        inner_last = None
        parsed = _parse_both("record_set", data)
        if wrapper is not None:
            assert parsed.frames and parsed.trailing == b""
            inner_last = parsed.frames[-1].body.offset
        pos = 0
        for frame in parsed.frames:
            raw = data[pos : pos + 12 + frame.length]
            pos += len(raw)
            if frame.magic == 2:
                self.batch(frame.body, raw)
            else:
                self.message(frame.body, raw, wrapper, inner_last)

    def batch(self, batch: Container, raw: bytes) -> None:
        self.crcs.append((batch.crc, crc32c(raw[21:])))
        if batch.compression == "none":
            records = batch.records
        elif batch.compression == "gzip":
            records = _parse_both(
                "record_list",
                gzip.decompress(batch.compressed_records),
                num_records=batch.records_count,
            ).records
        else:
            last = batch.base_offset + batch.last_offset_delta
            self.events.append(("batch", batch.base_offset, last, batch.records_count))
            return
        assert len(records) == batch.records_count
        if batch.is_control:
            for record in records:
                key = _parse_both("control_record_key", record.key)
                self.control_keys.append(key)
                if key.type in ("abort", "commit"):
                    _parse_both("end_txn_marker", record.value)
            return
        log_append = batch.timestamp_type == "log_append_time"
        decoded = [
            {
                "offset": batch.base_offset + record.offset_delta,
                "timestamp": batch.max_timestamp
                if log_append
                else batch.base_timestamp + record.timestamp_delta,
                "timestampType": int(batch.timestamp_type),
                "key": _b64(record.key),
                "value": _b64(record.value),
                "headers": [{"key": h.key, "value": _b64(h.value)} for h in record.headers],
            }
            for record in records
        ]
        self.events.append(("records", decoded))

    def message(
        self, msg: Container, raw: bytes, wrapper: Container | None, inner_last: int | None
    ) -> None:
        self.crcs.append((msg.crc, zlib.crc32(raw[16:])))
        if msg.compression == "gzip":
            self.record_set(gzip.decompress(msg.value), wrapper=msg)
            return
        if msg.compression != "none":
            self.events.append(("wrapper", msg.offset))
            return
        offset, timestamp, ts_type = msg.offset, msg.timestamp, msg.timestamp_type
        if wrapper is not None and wrapper.magic == 1:
            # v1 inner offsets are relative; the wrapper holds the last one's absolute offset
            offset = wrapper.offset - inner_last + msg.offset
            ts_type = wrapper.timestamp_type
            if ts_type == "log_append_time":
                timestamp = wrapper.timestamp
        decoded = {
            "offset": offset,
            "timestamp": timestamp if msg.magic == 1 else None,
            "timestampType": int(ts_type) if msg.magic == 1 else -1,
            "key": _b64(msg.key),
            "value": _b64(msg.value),
            "headers": [],
        }
        self.events.append(("records", [decoded]))


def _walk(data: bytes) -> Walk:
    walk = Walk()
    walk.record_set(data)
    return walk


def _unpack(corpus_set) -> tuple[str, bytes, list[dict], dict]:
    """The conftest's CorpusSet (one MANIFEST.json entry) as (id, bytes, records, entry)."""
    return corpus_set.id, corpus_set.data(), corpus_set.expected(), corpus_set.entry


def test_frames_cover_the_file(corpus_set) -> None:
    rel, data, _, manifest = _unpack(corpus_set)
    parsed = _parse_both("record_set", data)
    assert parsed.frames, rel
    pos = 0
    for frame in parsed.frames:
        assert frame.base_offset == int.from_bytes(data[pos : pos + 8], "big", signed=True)
        assert frame.length == int.from_bytes(data[pos + 8 : pos + 12], "big", signed=True)
        assert frame.magic == data[pos + 16]
        body = frame.body
        if frame.magic == 2:
            assert (body.base_offset, body.batch_length) == (frame.base_offset, frame.length)
        else:
            assert (body.offset, body.message_size) == (frame.base_offset, frame.length)
        pos += 12 + frame.length
    assert parsed.trailing == data[pos:]
    assert len(parsed.trailing) == manifest["trailing_partial_bytes"]
    assert sorted({f.magic for f in parsed.frames}) == sorted(manifest["magics"])
    assert {str(f.body.compression) for f in parsed.frames} == set(manifest["codecs"])


def test_records_match_jsonl(corpus_set) -> None:
    """Walk the events and the expected records in step."""
    rel, data, expected, manifest = _unpack(corpus_set)
    assert len(expected) == manifest["records"]
    todo = list(expected)
    decoded = 0
    for event in _walk(data).events:
        if event[0] == "records":
            got = event[1]
            assert got == todo[: len(got)], rel
            decoded += len(got)
            del todo[: len(got)]
        elif event[0] == "batch":
            _, first, last, count = event
            assert len(todo) >= count
            assert all(first <= r["offset"] <= last for r in todo[:count]), rel
            del todo[:count]
        else:  # a legacy wrapper ends at the record with its offset
            n = next(i for i, r in enumerate(todo) if r["offset"] == event[1]) + 1
            del todo[:n]
    assert todo == [], rel
    if set(manifest["codecs"]) <= {"none", "gzip"}:
        assert decoded == len(expected), rel


def test_crcs_match_manifest(corpus_set) -> None:
    rel, data, _, manifest = _unpack(corpus_set)
    mismatches = [(s, c) for s, c in _walk(data).crcs if s != c]
    assert bool(mismatches) == (not manifest["crc_valid"]), rel


def test_control_batch_keys(corpus_dir: Path) -> None:
    data = (corpus_dir / "kafka-python/control_batch_data_v2.bin").read_bytes()
    assert all(f.body.is_control for f in RecordSet.parse(data).frames)
    walk = _walk(data)
    assert walk.control_keys
    for key in walk.control_keys:
        assert int(key.type) in {int(t) for t in ControlRecordType}
        assert ControlRecordKey.build(key) == ControlRecordKey.build(
            {"version": key.version, "type": int(key.type)}
        )
    assert EndTxnMarker.sizeof() == 6


def test_time_index_points_into_its_segment(corpus_dir: Path) -> None:
    corpus = corpus_dir
    index = (corpus / "recordupdater/hello-0.00000000000000000000.timeindex").read_bytes()
    log = (corpus / "recordupdater/hello-0.00000000000000000000.log.bin").read_bytes()
    entries = _parse_both("time_index", index).entries
    assert len(entries) == len(index) // 12 > 0
    assert TimeIndex.build({"entries": entries}) == index
    by_offset = {
        f.body.offset: f.body.timestamp for f in RecordSet.parse(log).frames if f.magic == 1
    }
    base = 0  # the segment's base offset, from its file name
    for entry in entries:
        assert by_offset[base + entry.relative_offset] == entry.timestamp
        assert entry.timestamp == max(
            t for o, t in by_offset.items() if o <= base + entry.relative_offset
        )


def test_record_list_parses_a_batch_payload(corpus_dir: Path) -> None:
    data = (corpus_dir / "kafka-python/record_batch_data_v2.bin").read_bytes()
    frame = RecordSet.parse(data).frames[0]
    batch = frame.body
    payload = data[61 : 12 + frame.length]
    listed = _parse_both("record_list", payload, num_records=batch.records_count)
    assert listed.records == batch.records


def test_parsed_frames_build_back_to_the_same_bytes(corpus_set) -> None:
    """The schemas build as well as parse: each real frame, parsed, rebuilds byte for byte."""
    rel, data, _, _ = _unpack(corpus_set)
    pos = 0
    for frame in RecordSet.parse(data).frames:
        raw = data[pos : pos + 12 + frame.length]
        pos += len(raw)
        schema = RecordBatch if frame.magic == 2 else LegacyMessage
        assert schema.build(frame.body) == raw, (rel, frame.base_offset)
