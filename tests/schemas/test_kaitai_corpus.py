"""The Kaitai-generated parsers against real record sets (../shared/corpus).

Oracle: the corpus's .jsonl files (records as the source repositories' own readers or golden
files give them) and MANIFEST.json; nothing here is derived from our parser's output.
Decompression is the runtime's job: compressed batches are checked by their headers and the
compressed formats' own magic numbers only.
"""

from __future__ import annotations

import base64
import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from kaitaistruct import BytesIO, KaitaiStream, ValidationExprError

from kafka_format.generated.kaitai.kafka_enums import KafkaEnums
from kafka_format.generated.kaitai.legacy_message import LegacyMessage
from kafka_format.generated.kaitai.record_batch import RecordBatch
from kafka_format.generated.kaitai.record_set import RecordSet
from kafka_format.generated.kaitai_debug.record_set import RecordSet as DebugRecordSet

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT.parent / "shared" / "corpus"
CODEC = KafkaEnums.CompressionCodec
LOG_APPEND_TIME = KafkaEnums.TimestampType.log_append_time

# First bytes of each codec's stream, from the codecs' own specifications.
CODEC_MAGIC = {
    CODEC.gzip: [b"\x1f\x8b"],
    CODEC.lz4: [b"\x04\x22\x4d\x18"],
    CODEC.zstd: [b"\x28\xb5\x2f\xfd"],
}


def _corpus() -> Path:
    if CORPUS.is_dir():
        return CORPUS
    if os.environ.get("CI") == "true":
        pytest.fail(f"corpus not found at {CORPUS} (required when CI=true)")
    pytest.skip(f"corpus not found at {CORPUS}")


def _bin_files() -> list[str]:
    if not CORPUS.is_dir():
        return ["<corpus absent>"]
    return sorted(str(p.relative_to(CORPUS)) for p in CORPUS.glob("*/*.bin"))


def _manifest() -> dict[str, dict]:
    entries = json.loads((_corpus() / "MANIFEST.json").read_text())
    return {e["file"]: e for e in entries}


def _parse(data: bytes) -> RecordSet:
    return RecordSet(KaitaiStream(BytesIO(data)))


def _frames(rs: RecordSet) -> list[RecordSet.Frame]:
    return rs.frames if rs.is_first_complete else []


def _b64(raw: bytes | None) -> str | None:
    return None if raw is None else base64.b64encode(raw).decode("ascii")


def _opt(obj: object, field: str, length: int) -> bytes | None:
    return getattr(obj, field) if length >= 0 else None


def _batch_records(batch: RecordBatch) -> Iterator[dict]:
    log_append = batch.attributes.timestamp_type == LOG_APPEND_TIME
    for rec in batch.records.records:
        body = rec.body
        yield {
            "offset": batch.base_offset + body.offset_delta.value,
            "timestamp": batch.max_timestamp
            if log_append
            else batch.base_timestamp + body.timestamp_delta.value,
            "timestampType": int(batch.attributes.timestamp_type),
            "key": _b64(_opt(body, "key", body.len_key.value)),
            "value": _b64(_opt(body, "value", body.len_value.value)),
            "headers": [
                {"key": h.key, "value": _b64(_opt(h, "value", h.len_value.value))}
                for h in body.headers
            ],
        }


def _legacy_record(msg: LegacyMessage) -> dict:
    return {
        "offset": msg.offset,
        "timestamp": msg.timestamp if msg.magic == 1 else None,
        "timestampType": int(msg.attributes.timestamp_type) if msg.magic == 1 else -1,
        "key": _b64(_opt(msg, "key", msg.len_key)),
        "value": _b64(_opt(msg, "value", msg.len_value)),
        "headers": [],
    }


@pytest.fixture(params=_bin_files())
def kaitai_set(request: pytest.FixtureRequest) -> tuple[str, bytes, list[dict], dict]:
    corpus = _corpus()
    rel = request.param
    data = (corpus / rel).read_bytes()
    expected_path = corpus / (rel[: -len(".bin")] + ".jsonl")
    expected = [json.loads(line) for line in expected_path.read_text().splitlines() if line]
    return rel, data, expected, _manifest()[rel]


def test_frames_cover_the_file(kaitai_set: tuple[str, bytes, list[dict], dict]) -> None:
    rel, data, _, manifest = kaitai_set
    rs = _parse(data)
    frames = _frames(rs)
    assert frames, rel
    pos = 0
    for frame in frames:
        assert frame.ofs_frame == pos
        assert frame.length == int.from_bytes(data[pos + 8 : pos + 12], "big", signed=True)
        assert frame.magic == data[pos + 16]
        body = frame.body
        if frame.magic == 2:
            assert isinstance(body, RecordBatch)
            assert (body.base_offset, body.batch_length) == (frame.base_offset, frame.length)
        else:
            assert isinstance(body, LegacyMessage)
            assert (body.offset, body.message_size) == (frame.base_offset, frame.length)
        pos += 12 + frame.length
    assert data[pos:] == rs.trailing
    assert len(rs.trailing) == manifest["trailing_partial_bytes"]
    assert sorted({f.magic for f in frames}) == sorted(manifest["magics"])
    codecs = {f.body.attributes.compression.name for f in frames}
    assert codecs == set(manifest["codecs"])


def test_records_match_jsonl(kaitai_set: tuple[str, bytes, list[dict], dict]) -> None:
    """Walk frames and expected records in step; uncompressed records must be equal."""
    rel, data, expected, manifest = kaitai_set
    assert len(expected) == manifest["records"]
    todo = list(expected)
    compared = 0
    for frame in _frames(_parse(data)):
        body = frame.body
        if isinstance(body, RecordBatch):
            if body.attributes.is_control:
                continue  # control records are not data records: the .jsonl omits them
            if body.attributes.compression == CODEC.none:
                got = list(_batch_records(body))
                assert len(got) == body.records_count
                assert got == todo[: len(got)], rel
                compared += len(got)
            else:
                got_offsets = [r["offset"] for r in todo[: body.records_count]]
                first, last = body.base_offset, body.base_offset + body.last_offset_delta
                assert len(got_offsets) == body.records_count
                assert all(first <= o <= last for o in got_offsets), rel
            del todo[: body.records_count]
        else:
            if body.attributes.compression == CODEC.none:
                assert todo[0] == _legacy_record(body), rel
                compared += 1
                del todo[:1]
            else:
                # A wrapper takes the offset of its last inner message.
                n = next(i for i, r in enumerate(todo) if r["offset"] == body.offset) + 1
                assert all(r["offset"] <= body.offset for r in todo[:n])
                del todo[:n]
    assert todo == [], rel
    codecs = set(manifest["codecs"])
    if "none" in codecs and manifest["records"] > 0:
        assert compared > 0
    if codecs == {"none"}:
        assert compared == len(expected)


def test_compressed_payloads(kaitai_set: tuple[str, bytes, list[dict], dict]) -> None:
    rel, data, _, _ = kaitai_set
    for frame in _frames(_parse(data)):
        body = frame.body
        codec = body.attributes.compression
        if codec == CODEC.none:
            continue
        if isinstance(body, RecordBatch):
            payload = body.compressed_records
            assert len(payload) == body.batch_length - 49
            assert body.records_count >= 1
            assert body.last_offset_delta >= body.records_count - 1
            assert body.max_timestamp >= body.base_timestamp or body.base_timestamp == -1
            assert not hasattr(body, "records")
        else:
            assert body.len_key == -1 or body.len_key >= 0
            assert body.len_value == len(body.value) > 0
            payload = body.value
        assert len(payload) > 0
        if codec in CODEC_MAGIC:
            assert any(payload.startswith(m) for m in CODEC_MAGIC[codec]), (rel, codec)


def test_debug_build_records_positions(kaitai_set: tuple[str, bytes, list[dict], dict]) -> None:
    _, data, _, _ = kaitai_set
    rs = DebugRecordSet(KaitaiStream(BytesIO(data)))
    rs._read()
    frames = rs.frames if rs.is_first_complete else []
    spans = rs._debug["frames"]["arr"]
    assert len(spans) == len(frames)
    for frame, span in zip(frames, spans, strict=True):
        assert span["start"] == frame.ofs_frame
        assert span["end"] == frame.ofs_frame + 12 + frame.length
        # Inside the frame's own substream, the body spans it whole.
        assert frame._debug["body"]["start"] == frame.ofs_frame
        first_field = "base_offset" if frame.magic == 2 else "offset"
        assert frame.body._debug[first_field] == {"start": 0, "end": 8}


def _cut_points(data: bytes) -> Iterator[int]:
    yield from range(len(data) + 1)


@pytest.mark.parametrize(
    "rel",
    ["kafka-python/record_batch_data_v2.bin", "kafka-go/v1c-v1-v1c.p0.bin"],
)
def test_partial_tail_is_trailing(rel: str) -> None:
    data = (_corpus() / rel).read_bytes()
    ends = [0]
    for frame in _frames(_parse(data)):
        ends.append(frame.ofs_frame + 12 + frame.length)
    assert ends[-1] == len(data)
    for cut in _cut_points(data):
        rs = _parse(data[:cut])
        whole = [e for e in ends if e <= cut]
        got = [f.ofs_frame + 12 + f.length for f in _frames(rs)]
        assert [0, *got] == whole, cut
        assert rs.trailing == data[whole[-1] : cut]


def test_corrupt_length_raises_instead_of_truncating() -> None:
    data = bytearray((_corpus() / "kafka-python/record_batch_data_v1.bin").read_bytes())
    second = 12 + int.from_bytes(data[8:12], "big")
    for bad in (0, 5, 13, -1):
        broken = bytearray(data)
        broken[second + 8 : second + 12] = bad.to_bytes(4, "big", signed=True)
        with pytest.raises((ValidationExprError, EOFError, ValueError)):
            _parse(bytes(broken))


def test_unknown_magic_is_raw_bytes() -> None:
    data = bytearray((_corpus() / "kafka-python/record_batch_data_v2.bin").read_bytes())
    data[16] = 7
    first = _frames(_parse(bytes(data)))[0]
    assert first.magic == 7
    assert first.body == bytes(data[: 12 + first.length])


def test_empty_and_tiny_inputs() -> None:
    for n in range(12):
        rs = _parse(bytes(n))
        assert not rs.is_first_complete
        assert rs.trailing == bytes(n)
