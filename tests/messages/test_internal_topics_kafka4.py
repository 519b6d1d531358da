"""Decoders of Kafka 4.x's internal topics: ``__remote_log_metadata`` (tiered storage) and
``__share_group_state`` (KIP-932), runtime/messages/kafka4_topics.py and kafka4_schemas.py, and
``dump --remote-log-metadata-decoder`` / ``--share-group-state-decoder``.

Oracles:

* records built byte by byte here with ``struct``, from the field orders of Kafka's JSON files
  (``storage/src/main/resources/message/RemoteLogSegmentMetadataRecord.json`` and siblings,
  ``share-coordinator/src/main/resources/common/message/Share{Snapshot,Update}{Key,Value}
  .json``), independently of the module's schema tables and codec;
* kafka-dump-log's own expected output: the strings of Kafka's ``DumpLogSegmentsTest``
  (``core/src/test/scala/unit/kafka/tools/DumpLogSegmentsTest.scala``:
  ``testShareGroupStateMessageParser``, ``testDumpRemoteLogMetadata*``), and the Java
  ``toString`` methods of ``RemoteLogSegmentMetadata``, ``RemoteLogSegmentMetadataUpdate``,
  ``RemotePartitionDeleteMetadata``, ``RemoteLogSegmentMetadataSnapshot`` (quoted below);
* Kafka's JSON files themselves when a Kafka checkout is given in ``KAFKA_SOURCE_DIR``.

The shared corpus holds no internal-topic segments (its README lists its sources), so the logs
here are written with the project's writer, which other tests check against real brokers' bytes.
"""

from __future__ import annotations

import base64
import io
import json
import os
import re
import struct
import subprocess
import uuid
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kafka_format.runtime.cli import main
from kafka_format.runtime.messages import kafka4_schemas as schemas
from kafka_format.runtime.messages.internal_topics import DECODERS
from kafka_format.runtime.messages.kafka4_topics import (
    decode_remote_log_metadata_record,
    decode_share_group_state_record,
    encode_remote_log_metadata_record,
    encode_share_group_state_key,
    encode_share_group_state_value,
    remote_log_metadata_decoder,
    remote_log_metadata_json,
    share_group_state_decoder,
)
from kafka_format.runtime.messages.kafka_message import (
    Field,
    MessageDecodeError,
    Versions,
)
from kafka_format.runtime.model import Record
from kafka_format.runtime.write.writer import Message as LogMessage
from kafka_format.runtime.write.writer import PartitionWriter

PROPS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# --- independent encoders: Kafka's primitive types, written with struct -----------------------


def uv(n: int) -> bytes:
    """Unsigned varint."""
    out = bytearray()
    while True:
        low, n = n & 0x7F, n >> 7
        if n:
            out.append(low | 0x80)
        else:
            out.append(low)
            return bytes(out)


def i8(v: int) -> bytes:
    return struct.pack(">b", v)


def i16(v: int) -> bytes:
    return struct.pack(">h", v)


def u16(v: int) -> bytes:
    return struct.pack(">H", v)


def i32(v: int) -> bytes:
    return struct.pack(">i", v)


def i64(v: int) -> bytes:
    return struct.pack(">q", v)


def s16(text: str) -> bytes:
    """STRING (non-flexible): int16 length."""
    raw = text.encode()
    return i16(len(raw)) + raw


def cs(text: str) -> bytes:
    """COMPACT_STRING: unsigned varint length + 1."""
    raw = text.encode()
    return uv(len(raw) + 1) + raw


def cb(data: bytes | None) -> bytes:
    """COMPACT_NULLABLE_BYTES."""
    return uv(0) if data is None else uv(len(data) + 1) + data


def tags(*pairs: tuple[int, bytes]) -> bytes:
    """A tagged-fields section."""
    return uv(len(pairs)) + b"".join(uv(t) + uv(len(body)) + body for t, body in pairs)


NO_TAGS = b"\x00"


def kuuid(u: uuid.UUID) -> str:
    """Kafka's Uuid.toString: URL-safe base64 without padding."""
    return base64.urlsafe_b64encode(u.bytes).decode().rstrip("=")


def rec(key: bytes | None, value: bytes | None, offset: int = 0) -> Record:
    return Record(offset=offset, timestamp=0, timestamp_type=0, key=key, value=value)


# Uuid.fromString("Uj5wn_FqTXirEASvVZRY1w"), the topic id of Kafka's DumpLogSegmentsTest
TOPIC_ID = "Uj5wn_FqTXirEASvVZRY1w"
TOPIC_ID_BYTES = base64.urlsafe_b64decode(TOPIC_ID + "==")
SEGMENT_UUID = uuid.UUID("6b1f5c52-3c1e-4c1b-9d7a-0f3e2a1b4c5d")
SEGMENT_ID = kuuid(SEGMENT_UUID)

# --- __share_group_state ----------------------------------------------------------------------


def share_key(record_type: int, group: str, partition: int) -> bytes:
    """ShareSnapshotKey (type 0) / ShareUpdateKey (type 1): GroupId, TopicId, Partition; not
    flexible (``flexibleVersions: none``): an int16-length string."""
    return i16(record_type) + s16(group) + TOPIC_ID_BYTES + i32(partition)


def state_batch(first: int, last: int, state: int, count: int, batch_tags=NO_TAGS) -> bytes:
    return i64(first) + i64(last) + i8(state) + i16(count) + batch_tags


def share_snapshot_value(
    snapshot_epoch: int,
    state_epoch: int,
    leader_epoch: int,
    start: int,
    batches: list[bytes],
    value_tags: bytes = NO_TAGS,
    version: int = 0,
) -> bytes:
    """ShareSnapshotValue v0 (flexible: compact arrays, a tagged-fields section per struct)."""
    return (
        i16(version)
        + u16(snapshot_epoch)
        + i32(state_epoch)
        + i32(leader_epoch)
        + i64(start)
        + uv(len(batches) + 1)
        + b"".join(batches)
        + value_tags
    )


def share_update_value(snapshot_epoch: int, leader_epoch: int, start: int, batches) -> bytes:
    """ShareUpdateValue v0: SnapshotEpoch, LeaderEpoch, StartOffset, StateBatches."""
    return (
        i16(0)
        + u16(snapshot_epoch)
        + i32(leader_epoch)
        + i64(start)
        + uv(len(batches) + 1)
        + b"".join(batches)
        + NO_TAGS
    )


def test_share_group_state_as_kafkas_dump_log_segments_test():
    """Every case of DumpLogSegmentsTest.testShareGroupStateMessageParser, expected strings as
    the Scala test writes them."""
    decode = DECODERS["share-group-state-decoder"]
    assert decode is share_group_state_decoder

    # The key is mandatory (kafka-dump-log throws; we report it in place).
    assert decode(rec(None, None)) == (
        "Failed to decode message at offset 0 using share group state topic decoder "
        "(message had a missing key)",
        None,
    )
    # A valid key and value should work (ShareSnapshot).
    snapshot = share_snapshot_value(0, 0, 0, 0, [state_batch(0, 4, 2, 1)])
    assert decode(rec(share_key(0, "gs1", 0), snapshot)) == (
        '{"type":"0","data":{"groupId":"gs1","topicId":"Uj5wn_FqTXirEASvVZRY1w","partition":0}}',
        '{"type":"0","data":{"snapshotEpoch":0,"stateEpoch":0,"leaderEpoch":0,"startOffset":0,'
        '"stateBatches":[{"firstOffset":0,"lastOffset":4,"deliveryState":2,"deliveryCount":1}]}}',
    )
    # A valid key and value should work (ShareUpdate).
    update = share_update_value(0, 0, 0, [state_batch(0, 4, 2, 1)])
    assert decode(rec(share_key(1, "gs1", 0), update)) == (
        '{"type":"1","data":{"groupId":"gs1","topicId":"Uj5wn_FqTXirEASvVZRY1w","partition":0}}',
        '{"type":"0","data":{"snapshotEpoch":0,"leaderEpoch":0,"startOffset":0,'
        '"stateBatches":[{"firstOffset":0,"lastOffset":4,"deliveryState":2,"deliveryCount":1}]}}',
    )
    # A valid key with a tombstone should work.
    assert decode(rec(share_key(0, "gs1", 0), None)) == (
        '{"type":"0","data":{"groupId":"gs1","topicId":"Uj5wn_FqTXirEASvVZRY1w","partition":0}}',
        "<DELETE>",
    )
    # An unknown record type should be handled and reported as such.
    default_snapshot = share_snapshot_value(0, 0, 0, 0, [])
    assert decode(rec(share_key(0x7FFF, "group", 0), default_snapshot)) == (
        "Unknown record type 32767 at offset 0, skipping.",
        None,
    )
    # Any parsing error is swallowed and reported (a ShareSnapshotValue under a ShareUpdateKey).
    assert decode(rec(share_key(1, "group", 0), default_snapshot)) == (
        "Error at offset 0, skipping. Could not read record with version 0 from value's buffer "
        "due to: non-nullable field stateBatches was serialized as null.",
        None,
    )


def test_share_group_state_records_as_dicts():
    key = share_key(0, "orders-share", 7)
    value = share_snapshot_value(
        3, 2, 5, 1000, [state_batch(1000, 1009, 0, 0), state_batch(1010, 1012, 4, 5)]
    )
    assert decode_share_group_state_record(key, value) == {
        "recordType": 0,
        "recordTypeName": "ShareSnapshot",
        "key": {"groupId": "orders-share", "topicId": TOPIC_ID, "partition": 7},
        "valueVersion": 0,
        "tombstone": False,
        "value": {
            "snapshotEpoch": 3,
            "stateEpoch": 2,
            "leaderEpoch": 5,
            "startOffset": 1000,
            "stateBatches": [
                {"firstOffset": 1000, "lastOffset": 1009, "deliveryState": 0, "deliveryCount": 0},
                {"firstOffset": 1010, "lastOffset": 1012, "deliveryState": 4, "deliveryCount": 5},
            ],
        },
    }
    # snapshotEpoch is a uint16: 65535 stays positive
    big = decode_share_group_state_record(key, share_snapshot_value(0xFFFF, 0, 0, 0, []))
    assert big["value"]["snapshotEpoch"] == 65535
    tomb = decode_share_group_state_record(share_key(1, "g", 0), None)
    assert tomb["recordTypeName"] == "ShareUpdate" and tomb["tombstone"] is True
    assert tomb["value"] is None and tomb["valueVersion"] is None
    unknown = decode_share_group_state_record(i16(9) + b"xyz", i16(0) + b"abc")
    assert unknown["recordTypeName"] is None and unknown["key"] is None
    assert unknown["rawKey"] == b"xyz" and unknown["rawValue"] == b"abc"
    assert schemas.DELIVERY_STATES == {0: "Available", 2: "Acked", 4: "Archived"}


def test_flexible_value_with_tagged_fields_written_by_a_newer_broker():
    """The values are flexible: a newer writer may add tagged fields, at the top level and in
    each StateBatch. Kafka's generated reader skips tags it does not know, and its JSON
    converter does not print them; so do we."""
    plain = share_snapshot_value(1, 2, 3, 40, [state_batch(40, 44, 2, 1)])
    tagged = share_snapshot_value(
        1,
        2,
        3,
        40,
        [state_batch(40, 44, 2, 1, batch_tags=tags((0, i64(1_700_000_000_000))))],
        value_tags=tags((0, i64(123)), (7, cs("future"))),
    )
    key = share_key(0, "gs1", 0)
    assert share_group_state_decoder(rec(key, tagged)) == share_group_state_decoder(rec(key, plain))
    decoded = decode_share_group_state_record(key, tagged)["value"]
    assert decoded["_unknownTaggedFields"] == {0: i64(123), 7: cs("future")}
    assert decoded["stateBatches"][0]["_unknownTaggedFields"] == {0: i64(1_700_000_000_000)}
    assert decoded["stateBatches"][0]["lastOffset"] == 44


def test_share_group_state_damage_is_one_line():
    key = share_key(0, "gs1", 0)
    value = share_snapshot_value(1, 2, 3, 40, [state_batch(40, 44, 2, 1)])
    for cut in range(len(value)):
        k, payload = share_group_state_decoder(rec(key, value[:cut], offset=12))
        assert payload is None
        assert k.startswith("Error at offset 12, skipping. Could not read ")
        assert "\n" not in k
        with pytest.raises(MessageDecodeError):
            decode_share_group_state_record(key, value[:cut])
    for cut in range(len(key)):
        k, payload = share_group_state_decoder(rec(key[:cut], value, offset=3))
        assert payload is None and "\n" not in k
        assert k.startswith(("Error at offset 3, skipping.", "Unknown record type"))
    # a value version newer than the schema: read as Kafka reads it (fields of "0" left out),
    # and the error says the version is newer
    newer = share_snapshot_value(1, 2, 3, 40, [state_batch(40, 44, 2, 1)], version=5)
    k, payload = share_group_state_decoder(rec(key, newer, offset=4))
    assert payload is None
    assert k.startswith("Error at offset 4, skipping. Could not read record with version 5 ")
    assert k.endswith("(version 5 is newer than this schema's 0)")


# --- __remote_log_metadata --------------------------------------------------------------------


def rlm_frame(api_key: int, body: bytes, version: int = 0) -> bytes:
    """AbstractApiMessageSerde: unsigned varints frame version 1, apiKey, version."""
    return uv(1) + uv(api_key) + uv(version) + body


def topic_id_partition(name: str, partition: int) -> bytes:
    """TopicIdPartitionEntry: Name, Id, Partition (flexible, so compact + tags)."""
    return cs(name) + TOPIC_ID_BYTES + i32(partition) + NO_TAGS


def segment_id_entry(name: str, partition: int) -> bytes:
    """RemoteLogSegmentIdEntry: TopicIdPartition, Id."""
    return topic_id_partition(name, partition) + SEGMENT_UUID.bytes + NO_TAGS


def epochs(pairs: list[tuple[int, int]]) -> bytes:
    """[]SegmentLeaderEpochEntry: LeaderEpoch, Offset."""
    return uv(len(pairs) + 1) + b"".join(i32(e) + i64(o) + NO_TAGS for e, o in pairs)


def segment_metadata(start, end, state, custom, leader_epochs, top_tags=NO_TAGS) -> bytes:
    """RemoteLogSegmentMetadataRecord (apiKey 0)."""
    body = (
        segment_id_entry("foo", 0)
        + i64(start)
        + i64(end)
        + i32(1)  # BrokerId
        + i64(1_700_000_000_500)  # MaxTimestampMs
        + i64(1_700_000_000_900)  # EventTimestampMs
        + epochs(leader_epochs)
        + i32(1_048_576)  # SegmentSizeInBytes
        + cb(custom)
        + i8(state)
        + top_tags
    )
    return rlm_frame(0, body)


def segment_update(state: int, custom: bytes | None, top_tags: bytes = NO_TAGS) -> bytes:
    """RemoteLogSegmentMetadataUpdateRecord (apiKey 1)."""
    body = segment_id_entry("foo", 0) + i32(0) + i64(0) + cb(custom) + i8(state) + top_tags
    return rlm_frame(1, body)


def partition_delete(state: int) -> bytes:
    """RemotePartitionDeleteMetadataRecord (apiKey 2)."""
    return rlm_frame(2, topic_id_partition("foo", 0) + i32(0) + i64(0) + i8(state) + NO_TAGS)


def segment_snapshot(state: int, leader_epochs) -> bytes:
    """RemoteLogSegmentMetadataSnapshotRecord (apiKey 3)."""
    body = (
        SEGMENT_UUID.bytes
        + i64(100)
        + i64(199)
        + i32(2)
        + i64(1_700_000_000_500)
        + i64(1_700_000_000_900)
        + epochs(leader_epochs)
        + i32(4096)
        + cb(None)
        + i8(state)
        + NO_TAGS
    )
    return rlm_frame(3, body)


def test_remote_log_metadata_as_kafkas_dump_log_segments_test():
    """The payloads DumpLogSegmentsTest.testDumpRemoteLogMetadata* expects:

        String.format("RemotePartitionDeleteMetadata{topicPartition=%s:%s-0, " +
          "state=DELETE_PARTITION_MARKED, eventTimestampMs=0, brokerId=0}", topicId, topicName)
        String.format("RemoteLogSegmentMetadataUpdate{remoteLogSegmentId=" +
          "RemoteLogSegmentId{topicIdPartition=%s:%s-0, id=%s}, customMetadata=Optional[" +
          "CustomMetadata{4 bytes}], state=COPY_SEGMENT_FINISHED, eventTimestampMs=0, " +
          "brokerId=0}", topicId, topicName, remoteSegmentId)

    and for a value "corrupted": output.contains("Could not deserialize metadata record")."""
    decode = DECODERS["remote-log-metadata-decoder"]
    assert decode is remote_log_metadata_decoder
    assert decode(rec(None, partition_delete(0))) == (
        None,
        f"RemotePartitionDeleteMetadata{{topicPartition={TOPIC_ID}:foo-0, "
        "state=DELETE_PARTITION_MARKED, eventTimestampMs=0, brokerId=0}",
    )
    assert decode(rec(None, segment_update(1, bytes([0, 1, 2, 3])))) == (
        None,
        f"RemoteLogSegmentMetadataUpdate{{remoteLogSegmentId=RemoteLogSegmentId{{"
        f"topicIdPartition={TOPIC_ID}:foo-0, id={SEGMENT_ID}}}, customMetadata=Optional["
        "CustomMetadata{4 bytes}], state=COPY_SEGMENT_FINISHED, eventTimestampMs=0, brokerId=0}",
    )
    key, payload = decode(rec(None, b"corrupted", offset=8))
    assert key is None
    assert payload.startswith("Error at offset 8, skipping. ")
    assert "Could not deserialize metadata record" in payload


def test_remote_log_metadata_to_string():
    """The other two records, as their Java toString builds them:

    RemoteLogSegmentMetadata: "RemoteLogSegmentMetadata{" + "remoteLogSegmentId=" + … +
      ", startOffset=" + … + ", endOffset=" + … + ", brokerId=" + … + ", maxTimestampMs=" + … +
      ", eventTimestampMs=" + … + ", segmentLeaderEpochs=" + <TreeMap> + ", segmentSizeInBytes="
      + … + ", customMetadata=" + <Optional> + ", state=" + … + '}'
    RemoteLogSegmentMetadataSnapshot: "RemoteLogSegmentMetadataSnapshot{" + "segmentId=" + … +
      ", startOffset=" + … + ", endOffset=" + … + ", maxTimestampMs=" + … +
      ", segmentLeaderEpochs=" + … + ", segmentSizeInBytes=" + … + ", customMetadata=" + … +
      ", state=" + … + '}'
    """
    # epochs in the record out of order, one repeated: a HashMap (last wins) then a TreeMap
    value = segment_metadata(100, 199, 2, None, [(5, 150), (3, 100), (5, 160)])
    assert remote_log_metadata_decoder(rec(None, value))[1] == (
        f"RemoteLogSegmentMetadata{{remoteLogSegmentId=RemoteLogSegmentId{{topicIdPartition="
        f"{TOPIC_ID}:foo-0, id={SEGMENT_ID}}}, startOffset=100, endOffset=199, brokerId=1, "
        "maxTimestampMs=1700000000500, eventTimestampMs=1700000000900, "
        "segmentLeaderEpochs={3=100, 5=160}, segmentSizeInBytes=1048576, "
        "customMetadata=Optional.empty, state=DELETE_SEGMENT_STARTED}"
    )
    assert remote_log_metadata_decoder(rec(None, segment_snapshot(3, [(0, 100)])))[1] == (
        f"RemoteLogSegmentMetadataSnapshot{{segmentId={SEGMENT_ID}, startOffset=100, "
        "endOffset=199, maxTimestampMs=1700000000500, segmentLeaderEpochs={0=100}, "
        "segmentSizeInBytes=4096, customMetadata=Optional.empty, state=DELETE_SEGMENT_FINISHED}"
    )


def test_remote_log_metadata_as_dicts_and_json():
    value = segment_metadata(0, 99, 0, b"rsm", [(0, 0)])
    decoded = decode_remote_log_metadata_record(value)
    assert decoded == {
        "frameVersion": 1,
        "apiKey": 0,
        "type": "REMOTE_LOG_SEGMENT_METADATA_RECORD",
        "version": 0,
        "state": "COPY_SEGMENT_STARTED",
        "data": {
            "remoteLogSegmentId": {
                "topicIdPartition": {"name": "foo", "id": TOPIC_ID, "partition": 0},
                "id": SEGMENT_ID,
            },
            "startOffset": 0,
            "endOffset": 99,
            "brokerId": 1,
            "maxTimestampMs": 1_700_000_000_500,
            "eventTimestampMs": 1_700_000_000_900,
            "segmentLeaderEpochs": [{"leaderEpoch": 0, "offset": 0}],
            "segmentSizeInBytes": 1_048_576,
            "customMetadata": b"rsm",
            "remoteLogSegmentState": 0,
        },
    }
    # the generated JSON converter's form: bytes as base64, fields in schema order
    assert json.loads(remote_log_metadata_json(value)) == {
        "type": "REMOTE_LOG_SEGMENT_METADATA_RECORD",
        "version": 0,
        "data": {**decoded["data"], "customMetadata": base64.b64encode(b"rsm").decode()},
    }
    assert decode_remote_log_metadata_record(partition_delete(2))["state"] == (
        "DELETE_PARTITION_FINISHED"
    )
    unknown = decode_remote_log_metadata_record(rlm_frame(9, b"\x01\x02"))
    assert unknown["type"] == "UNKNOWN(9)" and unknown["data"] is None
    assert unknown["raw"] == b"\x01\x02"


def test_remote_log_metadata_tagged_fields_of_a_newer_writer_are_skipped():
    plain = segment_update(1, None)
    tagged = segment_update(1, None, top_tags=tags((3, i64(42))))
    assert remote_log_metadata_decoder(rec(None, tagged)) == remote_log_metadata_decoder(
        rec(None, plain)
    )
    data = decode_remote_log_metadata_record(tagged)["data"]
    assert data["_unknownTaggedFields"] == {3: i64(42)}


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        (uv(0) + uv(0) + uv(0), "Could not deserialize metadata record with frame version 0."),
        (uv(2) + uv(0) + uv(0), "unknown frame version 2(only frame version 1 is supported)"),
        (rlm_frame(7, b""), "Unknown metadata id 7"),
        (partition_delete(0) + b"\x00\x00", "Found 2 byte(s) of garbage after 2"),
        (partition_delete(0)[:-3], "Failed to deserialize record with type 2: "),
        (rlm_frame(2, topic_id_partition("foo", 0), version=4), "(version 4 is newer than"),
        (segment_metadata(-1, 5, 0, None, [(0, 0)]), "Unexpected start offset = -1. StartOffset"),
        (segment_metadata(10, 5, 0, None, [(0, 0)]), "less than startOffset = 10"),
        (segment_metadata(0, 5, 0, None, []), "segmentLeaderEpochs can not be null or empty"),
        (segment_metadata(0, 5, 9, None, [(0, 0)]), "unknown RemoteLogSegmentState id 9"),
        (segment_update(-3, None), "state can not be null (unknown RemoteLogSegmentState id -3)"),
        (partition_delete(5), "unknown RemotePartitionDeleteState id 5"),
        (segment_snapshot(7, []), "state can not be null"),  # checked before the epochs
        (b"", "Error while reading frame version"),
        (uv(1) + b"\xff\xff\xff", "Error while reading type"),
        (uv(1) + uv(0x8000), "Value for type was too large."),
        (None, "without a value"),
    ],
)
def test_remote_log_metadata_damage_is_one_line(value, reason):
    key, payload = remote_log_metadata_decoder(rec(None, value, offset=41))
    assert key is None
    assert payload.startswith("Error at offset 41, skipping. ")
    assert reason in payload
    assert "\n" not in payload


def test_every_truncation_of_remote_log_metadata_is_reported():
    value = segment_metadata(0, 99, 1, b"rsm", [(0, 0), (1, 50)])
    for cut in range(len(value)):
        payload = remote_log_metadata_decoder(rec(None, value[:cut], offset=2))[1]
        assert payload.startswith("Error at offset 2, skipping. "), cut
        with pytest.raises(MessageDecodeError):
            decode_remote_log_metadata_record(value[:cut])


@PROPS
@given(key=st.one_of(st.none(), st.binary(max_size=60)), value=st.binary(max_size=120))
def test_decoders_never_raise_on_garbage(key, value):
    for decode in (remote_log_metadata_decoder, share_group_state_decoder):
        k, payload = decode(rec(key, value))
        for text in (k, payload):
            assert text is None or (isinstance(text, str) and "\n" not in text)


@PROPS
@given(data=st.data())
def test_mutated_records_raise_only_decode_errors(data):
    valid = [
        (None, segment_metadata(0, 99, 1, b"rsm", [(0, 0), (1, 50)])),
        (None, segment_update(1, b"x")),
        (None, partition_delete(1)),
        (None, segment_snapshot(1, [(2, 100)])),
        (share_key(0, "gs1", 0), share_snapshot_value(1, 2, 3, 4, [state_batch(4, 9, 2, 1)])),
        (share_key(1, "gs1", 0), share_update_value(1, 3, 4, [state_batch(4, 9, 0, 1)])),
    ]
    key, value = data.draw(st.sampled_from(valid))
    raw = bytearray(value)
    for _ in range(data.draw(st.integers(1, 4))):
        pos = data.draw(st.integers(0, len(raw) - 1))
        raw[pos] = data.draw(st.integers(0, 255))
    try:
        if key is None:
            decode_remote_log_metadata_record(bytes(raw))
        else:
            decode_share_group_state_record(key, bytes(raw))
    except MessageDecodeError:
        pass


# --- the module's encoders, against this test's ------------------------------------------------


def test_module_encoders_match_hand_layouts():
    assert encode_share_group_state_key(
        0, {"groupId": "gs1", "topicId": TOPIC_ID, "partition": 0}
    ) == share_key(0, "gs1", 0)
    assert encode_share_group_state_key(
        1, {"groupId": "gs1", "topicId": TOPIC_ID, "partition": 4}
    ) == share_key(1, "gs1", 4)
    batch = {"firstOffset": 0, "lastOffset": 4, "deliveryState": 2, "deliveryCount": 1}
    assert encode_share_group_state_value(
        0,
        0,
        {"snapshotEpoch": 1, "stateEpoch": 2, "leaderEpoch": 3, "stateBatches": [batch]},
    ) == share_snapshot_value(1, 2, 3, 0, [state_batch(0, 4, 2, 1)])
    assert encode_share_group_state_value(
        1, 0, {"snapshotEpoch": 1, "leaderEpoch": 3, "startOffset": 0, "stateBatches": [batch]}
    ) == share_update_value(1, 3, 0, [state_batch(0, 4, 2, 1)])
    tip = {"name": "foo", "id": TOPIC_ID, "partition": 0}
    assert encode_remote_log_metadata_record(
        2,
        0,
        {
            "topicIdPartition": tip,
            "brokerId": 0,
            "eventTimestampMs": 0,
            "remotePartitionDeleteState": 0,
        },
    ) == partition_delete(0)
    assert encode_remote_log_metadata_record(
        1,
        0,
        {
            "remoteLogSegmentId": {"topicIdPartition": tip, "id": SEGMENT_ID},
            "customMetadata": b"x",
            "remoteLogSegmentState": 1,
        },
    ) == segment_update(1, b"x")


# --- the command line ---------------------------------------------------------------------------


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        status = main(list(argv))
    return status, out.getvalue(), err.getvalue()


def write_share_state(log_dir: Path) -> Path:
    snapshot = share_snapshot_value(0, 1, 0, 0, [state_batch(0, 4, 2, 1)])
    update = share_update_value(0, 0, 5, [state_batch(5, 6, 0, 1)])
    with PartitionWriter(log_dir, "__share_group_state", 3) as w:
        w.append([LogMessage(share_key(0, "gs1", 0), snapshot, timestamp=1_700_000_000_000)])
        w.append(
            [
                LogMessage(share_key(1, "gs1", 0), update, timestamp=1_700_000_000_001),
                LogMessage(share_key(0, "gs1", 0), None, timestamp=1_700_000_000_002),
                LogMessage(share_key(0, "gs1", 0), snapshot[:9], timestamp=1_700_000_000_003),
            ]
        )
    return log_dir / "__share_group_state-3"


def test_cli_share_group_state_decoder(tmp_path):
    partition = write_share_state(tmp_path)
    status, out, err = run("dump", "--share-group-state-decoder", str(partition))
    assert status == 0, err
    lines = [line for line in out.splitlines() if line.startswith("| offset:")]
    # DumpLogSegments.dumpLog: "| offset: N <ts type>: T keySize: K valueSize: V sequence: S
    # headerKeys: [..]" then print(s" key: $key") and print(s" payload: $payload")
    record = re.compile(
        r"^\| offset: (\d+) CreateTime: \d+ keySize: \d+ valueSize: -?\d+ sequence: -1 "
        r"headerKeys: \[\] key: (.*?)(?: payload: (.*))?$"
    )
    parsed = [record.match(line).groups() for line in lines]
    assert [int(p[0]) for p in parsed] == [0, 1, 2, 3]
    assert json.loads(parsed[0][1]) == {
        "type": "0",
        "data": {"groupId": "gs1", "topicId": TOPIC_ID, "partition": 0},
    }
    assert json.loads(parsed[0][2])["data"]["stateBatches"][0]["deliveryState"] == 2
    assert json.loads(parsed[1][1])["type"] == "1"
    assert json.loads(parsed[1][2])["data"]["startOffset"] == 5
    assert parsed[2][2] == "<DELETE>"
    assert parsed[3][1].startswith("Error at offset 3, skipping. Could not read record with ")
    assert parsed[3][2] is None
    assert "Traceback" not in err


def test_cli_jsonl_share_group_state_decoder(tmp_path):
    partition = write_share_state(tmp_path)
    status, out, err = run("dump", "--jsonl", "--share-group-state-decoder", str(partition))
    assert status == 0, err
    lines = [json.loads(line) for line in out.splitlines()]
    assert [line["offset"] for line in lines] == [0, 1, 2, 3]
    assert lines[0]["decoded"]["key"]["data"]["groupId"] == "gs1"
    assert lines[0]["decoded"]["value"]["data"]["stateEpoch"] == 1
    assert lines[2]["decoded"]["value"] == "<DELETE>"
    assert lines[3]["decoded"]["key"].startswith("Error at offset 3, skipping.")
    assert {line["topic"] for line in lines} == {"__share_group_state"}
    assert {line["partition"] for line in lines} == {3}


def test_cli_remote_log_metadata_decoder(tmp_path):
    values = [
        segment_metadata(0, 99, 0, None, [(0, 0)]),
        segment_update(1, bytes([0, 1, 2, 3])),
        partition_delete(0),
        rlm_frame(2, topic_id_partition("foo", 0), version=4),
    ]
    with PartitionWriter(tmp_path, "__remote_log_metadata", 0) as w:
        w.append(
            [LogMessage(None, v, timestamp=1_700_000_000_000 + i) for i, v in enumerate(values)]
        )
    partition = tmp_path / "__remote_log_metadata-0"
    status, out, err = run("dump", "--remote-log-metadata-decoder", str(partition))
    assert status == 0, err
    lines = [line for line in out.splitlines() if line.startswith("| offset:")]
    assert len(lines) == 4
    # no key for metadata records: "headerKeys: [] payload: ..."
    payloads = [line.split("headerKeys: [] payload: ", 1)[1] for line in lines]
    assert payloads[0].startswith("RemoteLogSegmentMetadata{remoteLogSegmentId=")
    assert payloads[1].endswith(
        "customMetadata=Optional[CustomMetadata{4 bytes}], state=COPY_SEGMENT_FINISHED, "
        "eventTimestampMs=0, brokerId=0}"
    )
    assert payloads[2] == (
        f"RemotePartitionDeleteMetadata{{topicPartition={TOPIC_ID}:foo-0, "
        "state=DELETE_PARTITION_MARKED, eventTimestampMs=0, brokerId=0}"
    )
    assert payloads[3].startswith("Error at offset 3, skipping. Failed to deserialize record ")
    assert "(version 4 is newer than this schema's 0)" in payloads[3]

    status, out, err = run("dump", "--jsonl", "--remote-log-metadata-decoder", str(partition))
    assert status == 0, err
    decoded = [json.loads(line)["decoded"] for line in out.splitlines()]
    assert [d["key"] for d in decoded] == [None] * 4
    assert decoded[1]["value"] == {
        "type": "REMOTE_LOG_SEGMENT_METADATA_UPDATE_RECORD",
        "version": 0,
        "data": {
            "remoteLogSegmentId": {
                "topicIdPartition": {"name": "foo", "id": TOPIC_ID, "partition": 0},
                "id": SEGMENT_ID,
            },
            "brokerId": 0,
            "eventTimestampMs": 0,
            "customMetadata": base64.b64encode(bytes([0, 1, 2, 3])).decode(),
            "remoteLogSegmentState": 1,
        },
    }
    assert decoded[3]["value"].startswith("Error at offset 3, skipping.")


def test_cli_internal_decoders_exclude_each_other(tmp_path):
    err = io.StringIO()
    with redirect_stderr(err), pytest.raises(SystemExit) as exited:
        main(["dump", "--share-group-state-decoder", "--remote-log-metadata-decoder", "x.log"])
    assert exited.value.code == 2
    assert "not allowed with argument --share-group-state-decoder" in err.getvalue()


# --- Kafka's JSON files, when a checkout is at hand ---------------------------------------------

KAFKA_SOURCE = os.environ.get("KAFKA_SOURCE_DIR")
_FILES = {
    "storage/src/main/resources/message/": (
        schemas.REMOTE_LOG_SEGMENT_METADATA_RECORD,
        schemas.REMOTE_LOG_SEGMENT_METADATA_UPDATE_RECORD,
        schemas.REMOTE_PARTITION_DELETE_METADATA_RECORD,
        schemas.REMOTE_LOG_SEGMENT_METADATA_SNAPSHOT_RECORD,
    ),
    "share-coordinator/src/main/resources/common/message/": (
        schemas.SHARE_SNAPSHOT_KEY,
        schemas.SHARE_SNAPSHOT_VALUE,
        schemas.SHARE_UPDATE_KEY,
        schemas.SHARE_UPDATE_VALUE,
    ),
}


def _kafka_json(path: str) -> dict:
    """A JSON file of the Kafka checkout (a work tree or a bare repository: ``git show``)."""
    text = subprocess.run(
        ["git", "-C", KAFKA_SOURCE, "show", f"HEAD:{path}"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return json.loads(re.sub(r"(?m)^\s*//.*$", "", text))


def _compare_fields(ours: tuple[Field, ...], theirs: list[dict], where: str) -> None:
    assert [f.name for f in ours] == [t["name"] for t in theirs], where
    for o, t in zip(ours, theirs, strict=True):
        w = f"{where}.{t['name']}"
        assert o.type == t["type"], w
        assert o.versions == Versions.parse(t["versions"]), w
        assert o.nullable == Versions.parse(t.get("nullableVersions", "none")), w
        assert o.tagged == Versions.parse(t.get("taggedVersions", "none")), w
        default = t.get("default")
        assert (None if o.default is None else str(o.default)) == default, w
        _compare_fields(o.fields, t.get("fields", []), w)


@pytest.mark.skipif(KAFKA_SOURCE is None, reason="KAFKA_SOURCE_DIR (a Kafka checkout) not set")
def test_schemas_match_kafkas_json_files():
    for folder, messages in _FILES.items():
        for m in messages:
            theirs = _kafka_json(folder + m.name + ".json")
            assert m.valid == Versions.parse(theirs["validVersions"]), m.name
            assert m.flexible == Versions.parse(theirs["flexibleVersions"]), m.name
            assert m.api_key == theirs.get("apiKey"), m.name
            _compare_fields(m.fields, theirs["fields"], m.name)


# --- the examples of docs/internal-topics.md, run as written ------------------------------------

DOC = Path(__file__).resolve().parents[2] / "docs" / "internal-topics.md"
DOC_TOPIC_ID, DOC_SEGMENT_ID = "MKXx1fIkQy2J9jXHhK8m1w", "Ah7pQ2xZSbO5m4cYcTqKVg"


def write_doc_logs(data_dir: Path) -> None:
    """The records the docs' examples show, written as the brokers write them."""
    tip = {"name": "orders", "id": DOC_TOPIC_ID, "partition": 0}
    segment = {"topicIdPartition": tip, "id": DOC_SEGMENT_ID}
    metadata = [
        (
            0,
            {
                "remoteLogSegmentId": segment,
                "startOffset": 0,
                "endOffset": 41234,
                "brokerId": 1,
                "maxTimestampMs": 1_700_000_100_000,
                "eventTimestampMs": 1_700_000_200_000,
                "segmentLeaderEpochs": [
                    {"leaderEpoch": 0, "offset": 0},
                    {"leaderEpoch": 1, "offset": 20000},
                ],
                "segmentSizeInBytes": 1_073_741_000,
                "remoteLogSegmentState": 0,
            },
        ),
        (
            1,
            {
                "remoteLogSegmentId": segment,
                "brokerId": 1,
                "eventTimestampMs": 1_700_000_230_000,
                "remoteLogSegmentState": 1,
            },
        ),
        (
            2,
            {
                "topicIdPartition": tip,
                "brokerId": 3000,
                "eventTimestampMs": 1_700_009_000_000,
                "remotePartitionDeleteState": 0,
            },
        ),
    ]
    with PartitionWriter(data_dir, "__remote_log_metadata", 12) as w:
        for api_key, fields in metadata:
            value = encode_remote_log_metadata_record(api_key, 0, fields)
            w.append([LogMessage(None, value, timestamp=fields["eventTimestampMs"])])
    key = {"groupId": "orders-share", "topicId": DOC_TOPIC_ID, "partition": 0}
    batches = [(100, 109, 2, 1), (110, 112, 4, 5)]
    snapshot = {
        "snapshotEpoch": 2,
        "stateEpoch": 1,
        "startOffset": 100,
        "stateBatches": [
            {"firstOffset": f, "lastOffset": la, "deliveryState": s, "deliveryCount": c}
            for f, la, s, c in batches
        ],
    }
    update = {
        "snapshotEpoch": 2,
        "startOffset": -1,
        "stateBatches": [
            {"firstOffset": 113, "lastOffset": 113, "deliveryState": 0, "deliveryCount": 2}
        ],
    }
    with PartitionWriter(data_dir, "__share_group_state", 7) as w:
        for record_type, value, ts in (
            (0, snapshot, 1_700_000_001_000),
            (1, update, 1_700_000_002_000),
        ):
            w.append(
                [
                    LogMessage(
                        encode_share_group_state_key(record_type, key),
                        encode_share_group_state_value(record_type, 0, value),
                        timestamp=ts,
                    )
                ]
            )


def doc_section_blocks() -> list[tuple[str, str]]:
    text = DOC.read_text()
    start = text.index("## Kafka 4.x: tiered storage and share groups")
    section = text[start : text.index("\n## ", start + 1)]
    return re.findall(r"```(\w*)\n(.*?)```", section, re.S)


def test_docs_examples(tmp_path, monkeypatch):
    data_dir = tmp_path / "var" / "lib" / "kafka"
    write_doc_logs(data_dir)
    monkeypatch.chdir(tmp_path)
    (sh, commands), (_, remote_lines), (_, share_lines), (py, code) = doc_section_blocks()
    assert sh == "sh" and py == "python"
    expected = {
        "--remote-log-metadata-decoder": remote_lines,
        "--share-group-state-decoder": share_lines,
    }
    for command in commands.splitlines()[:2]:
        argv = command.split()[1:]
        assert argv[1] in expected
        argv[-1] = str(tmp_path / argv[-1].lstrip("/"))
        status, out, err = run(*argv)
        assert status == 0, err
        got = [line for line in out.splitlines() if line.startswith("| offset:")]
        assert got == expected[argv[1]].strip().splitlines()
    out = io.StringIO()
    with redirect_stdout(out):
        exec(compile(code.replace('"/var/', '"var/'), "docs: kafka 4.x", "exec"), {})
    printed = [line[2:] for line in code.splitlines() if line.startswith("# ")]
    assert out.getvalue().splitlines() == printed
