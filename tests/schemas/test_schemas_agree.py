"""The two schema families, Kaitai and Construct, read every corpus set to the same fields.

Whole records for uncompressed batches and messages; header fields and the raw payload for
compressed ones (decompression is the runtime's job, tested elsewhere).
"""

from __future__ import annotations

from io import BytesIO

from kaitaistruct import KaitaiStream

from kafka_format.generated.kaitai.legacy_message import LegacyMessage
from kafka_format.generated.kaitai.record_batch import RecordBatch
from kafka_format.generated.kaitai.record_set import RecordSet
from kafka_format.schemas import compiled

V2_HEADER = (
    "base_offset",
    "batch_length",
    "partition_leader_epoch",
    "magic",
    "crc",
    "last_offset_delta",
    "base_timestamp",
    "max_timestamp",
    "producer_id",
    "producer_epoch",
    "base_sequence",
    "records_count",
)
ATTRIBUTE_BITS = ("is_transactional", "is_control", "has_delete_horizon")


def _opt(obj, name):
    return getattr(obj, name, None)


def _kaitai_record(r) -> dict:
    b = r.body
    return {
        "attributes": b.attributes,
        "timestamp_delta": b.timestamp_delta.value,
        "offset_delta": b.offset_delta.value,
        "key": _opt(b, "key"),
        "value": _opt(b, "value"),
        "headers": [(h.key, _opt(h, "value")) for h in b.headers],
    }


def _construct_record(r) -> dict:
    return {
        "attributes": r.attributes,
        "timestamp_delta": r.timestamp_delta,
        "offset_delta": r.offset_delta,
        "key": r.key,
        "value": r.value,
        "headers": [(h.key, h.value) for h in r.headers],
    }


def _compare_v2(k: RecordBatch, c) -> None:
    for name in V2_HEADER:
        assert getattr(k, name) == c[name], name
    assert int(k.attributes.compression) == int(c.compression)
    assert int(k.attributes.timestamp_type) == int(c.timestamp_type)
    for name in ATTRIBUTE_BITS:
        assert getattr(k.attributes, name) == c[name], name
    if int(c.compression) == 0:
        assert [_kaitai_record(r) for r in k.records.records] == [
            _construct_record(r) for r in c.records
        ]
    else:
        assert k.compressed_records == c.compressed_records
        assert len(c.compressed_records) == c.batch_length - 49


def _compare_legacy(k: LegacyMessage, c) -> None:
    for name in ("offset", "message_size", "crc", "magic", "len_key", "len_value"):
        assert getattr(k, name) == c[name], name
    assert int(k.attributes.compression) == int(c.compression)
    # the message's timestamp type (none for magic 0), and the bit it comes from otherwise
    assert int(k.timestamp_type.value) == int(c.timestamp_type)
    if k.magic == 1:
        assert int(k.attributes.timestamp_type) == int(c.timestamp_type)
    assert _opt(k, "timestamp") == c.timestamp
    assert _opt(k, "key") == c.key
    assert _opt(k, "value") == c.value


def test_kaitai_and_construct_agree(corpus_set) -> None:
    data = corpus_set.data()
    kaitai = RecordSet(KaitaiStream(BytesIO(data)))
    construct = compiled.parse("record_set", data)
    k_frames = _opt(kaitai, "frames") or []
    assert len(k_frames) == len(construct.frames) > 0
    assert kaitai.trailing == construct.trailing
    for k, c in zip(k_frames, construct.frames, strict=True):
        assert (k.base_offset, k.length, k.magic) == (c.base_offset, c.length, c.magic)
        if c.magic == 2:
            _compare_v2(k.body, c.body)
        else:
            _compare_legacy(k.body, c.body)
