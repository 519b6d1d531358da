"""kafka-python as an independent writer: its batches parse to its inputs, and ours match it.

kafka-python's ``DefaultRecordBatchBuilder`` (magic 2) and ``LegacyRecordBatchBuilder``
(magic 0 and 1) are a separate implementation of Kafka's writer. For generated inputs, their
output must parse (interpreted and compiled Construct) to those inputs, and our builders given
the same inputs must produce the very same bytes. For gzip, their compressed payload is handed
to our builder as it is (compression is not the schemas' job): header and CRC must still match.
"""

from __future__ import annotations

import gzip

from construct import Container
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from kafka.record.default_records import DefaultRecordBatchBuilder
from kafka.record.legacy_records import LegacyRecordBatchBuilder

from kafka_format.schemas import compiled
from kafka_format.schemas.legacy_message import build_legacy_message
from kafka_format.schemas.record_batch import build_record_batch
from kafka_format.schemas.record_set import build_record_set

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
BIG = 1 << 30  # batch_size: never let the builder refuse a record
GZIP = 1

blobs = st.none() | st.binary(max_size=50)
timestamps = st.integers(0, 2**41)  # epoch ms, within kafka-python's checks (non-negative)


def _both(name: str, data: bytes) -> Container:
    parsed = compiled.schema(name).parse(data)
    assert compiled.parse(name, data) == parsed
    return parsed


v2_records = st.lists(
    st.fixed_dictionaries(
        {
            "offset_gap": st.integers(0, 1000),
            "timestamp": timestamps,
            "key": blobs,
            "value": blobs,
            "headers": st.lists(st.tuples(st.text(max_size=10), blobs), max_size=3),
        }
    ),
    min_size=1,
    max_size=8,
)

producer_state = st.one_of(
    st.just((-1, -1, -1, False)),
    st.tuples(
        st.integers(0, 2**63 - 1),
        st.integers(0, 2**15 - 1),
        st.integers(0, 2**31 - 1),
        st.booleans(),
    ),
)


def _compressible() -> list[dict]:
    # repetitive values, so that kafka-python's gzip pays off and it keeps the batch compressed
    return [
        {"offset_gap": 0, "timestamp": 1_700_000_000_000 + i, "key": None, "value": b"x" * 50}
        for i in range(8)
    ] + [{"offset_gap": 3, "timestamp": 5, "key": b"", "value": None, "headers": [("é", None)]}]


@SETTINGS
@given(v2_records, producer_state, st.sampled_from([0, GZIP]))
@example([{**r, "headers": r.get("headers", [])} for r in _compressible()], (7, 1, 0, True), GZIP)
def test_default_record_batch(inputs, state, compression) -> None:
    producer_id, producer_epoch, base_sequence, transactional = state
    builder = DefaultRecordBatchBuilder(
        magic=2,
        compression_type=compression,
        is_transactional=transactional,
        producer_id=producer_id,
        producer_epoch=producer_epoch,
        base_sequence=base_sequence,
        batch_size=BIG,
    )
    offset = -1
    for rec in inputs:
        offset += 1 + rec["offset_gap"]
        rec["offset"] = offset
        meta = builder.append(offset, rec["timestamp"], rec["key"], rec["value"], rec["headers"])
        assert meta is not None
    theirs = bytes(builder.build())

    batch = _both("record_batch", theirs)
    first_ts = inputs[0]["timestamp"]
    assert batch.base_offset == 0
    assert batch.base_timestamp == first_ts
    assert batch.max_timestamp == max(r["timestamp"] for r in inputs)
    assert batch.last_offset_delta == inputs[-1]["offset"]
    assert batch.records_count == len(inputs)
    assert (batch.producer_id, batch.producer_epoch, batch.base_sequence) == (
        producer_id,
        producer_epoch,
        base_sequence,
    )
    assert batch.is_transactional == transactional
    assert not batch.is_control and batch.timestamp_type == "create_time"

    if compression and len(inputs) == 9 and inputs[0]["value"] == b"x" * 50:
        assert batch.compression == "gzip"  # the explicit example must take the gzip path
    if batch.compression == "gzip":
        records = _both_list(gzip.decompress(batch.compressed_records), len(inputs))
    else:
        # kafka-python keeps the batch uncompressed when gzip does not make it smaller
        assert batch.compression == "none"
        records = batch.records
    got = [
        {
            "offset": batch.base_offset + r.offset_delta,
            "timestamp": batch.base_timestamp + r.timestamp_delta,
            "key": r.key,
            "value": r.value,
            "headers": [(h.key, h.value) for h in r.headers],
        }
        for r in records
    ]
    want = [{k: r[k] for k in ("offset", "timestamp", "key", "value", "headers")} for r in inputs]
    assert got == want

    common = {
        "partition_leader_epoch": 0,  # kafka-python leaves it to the broker: 0
        "base_timestamp": first_ts,
        "max_timestamp": max(r["timestamp"] for r in inputs),
        "last_offset_delta": inputs[-1]["offset"],
        "producer_id": producer_id,
        "producer_epoch": producer_epoch,
        "base_sequence": base_sequence,
        "is_transactional": transactional,
    }
    if batch.compression == "gzip":
        ours = build_record_batch(
            codec=GZIP,
            compressed_payload=batch.compressed_records,
            records_count=len(inputs),
            **common,
        )
    else:
        specs = [
            {
                "key": r["key"],
                "value": r["value"],
                "headers": r["headers"],
                "offset_delta": r["offset"],
                "timestamp_delta": r["timestamp"] - first_ts,
            }
            for r in inputs
        ]
        ours = build_record_batch(specs, **common)
    assert ours == theirs


def _both_list(data: bytes, count: int) -> list[Container]:
    parsed = compiled.schema("record_list").parse(data, num_records=count)
    assert compiled.parse("record_list", data, num_records=count) == parsed
    return parsed.records


legacy_records = st.lists(
    st.fixed_dictionaries(
        {"offset_gap": st.integers(0, 1000), "timestamp": timestamps, "key": blobs, "value": blobs}
    ),
    min_size=1,
    max_size=8,
)


@SETTINGS
@given(legacy_records, st.sampled_from([0, 1]), st.sampled_from([0, GZIP]))
def test_legacy_record_batch(inputs, magic, compression) -> None:
    builder = LegacyRecordBatchBuilder(magic=magic, compression_type=compression, batch_size=BIG)
    offset = -1
    for rec in inputs:
        offset += 1 + rec["offset_gap"]
        rec["offset"] = offset
        assert builder.append(offset, rec["timestamp"], rec["key"], rec["value"]) is not None
    theirs = bytes(builder.build())

    entries = [
        build_legacy_message(
            offset=r["offset"],
            key=r["key"],
            value=r["value"],
            magic=magic,
            timestamp=r["timestamp"] if magic else None,
        )
        for r in inputs
    ]
    inner = build_record_set(entries)

    parsed = _both("record_set", theirs)
    assert parsed.trailing == b""
    if compression:
        # one wrapper: offset 0, timestamp 0, null key, the gzip'd inner set as its value
        (frame,) = parsed.frames
        wrapper = frame.body
        assert (wrapper.magic, wrapper.compression, wrapper.offset, wrapper.key) == (
            magic,
            "gzip",
            0,
            None,
        )
        assert gzip.decompress(wrapper.value) == inner
        messages = [f.body for f in _both("record_set", inner).frames]
        ours = build_legacy_message(
            offset=0, value=wrapper.value, magic=magic, timestamp=0 if magic else None, codec=GZIP
        )
    else:
        messages = [f.body for f in parsed.frames]
        ours = inner
    got = [
        {
            "offset": m.offset,
            "timestamp": m.timestamp if magic else None,
            "key": m.key,
            "value": m.value,
        }
        for m in messages
    ]
    want = [
        {
            "offset": r["offset"],
            "timestamp": r["timestamp"] if magic else None,
            "key": r["key"],
            "value": r["value"],
        }
        for r in inputs
    ]
    assert got == want
    assert all(m.magic == magic and m.compression == "none" for m in messages)
    assert ours == theirs
