"""Decoders of Kafka's internal topics: ``__consumer_offsets``, ``__transaction_state`` and
``__cluster_metadata`` (runtime/internal_topics.py, kafka_message.py, internal_schemas.py).

Oracles:

* records built byte by byte here with ``struct`` from the layouts of Kafka's JSON message
  definitions, independently of the module's schema tables and codec;
* kafka-python: its ``ConsumerProtocolSubscription`` / ``Assignment`` (its own copy of Kafka's
  JSON) build and decode the consumer protocol embedded in group metadata, and its generic
  JSON-schema codec (``ApiData``) encodes and decodes every message for comparison;
* kafka-dump-log's own expected output: the strings of Kafka's ``DumpLogSegmentsTest.
  testOffsetsMessageParser`` and of the KAFKA-20712 pull request (a transaction-log dump);
* Kafka's JSON files themselves when a Kafka checkout is given in ``KAFKA_SOURCE_DIR``.
"""

from __future__ import annotations

import base64
import functools
import io
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import uuid
from contextlib import redirect_stderr, redirect_stdout, suppress
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kafka.protocol.api_data import ApiData
from kafka.protocol.consumer.metadata import (
    ConsumerProtocolAssignment as KpAssignment,
)
from kafka.protocol.consumer.metadata import (
    ConsumerProtocolSubscription as KpSubscription,
)

from kafka_format.runtime.messages import internal_schemas as schemas
from kafka_format.runtime.messages.internal_topics import (
    DECODERS,
    cluster_metadata_decoder,
    coordinator_partition,
    decode_cluster_metadata_record,
    decode_kraft_control_record,
    decode_offsets_record,
    decode_transaction_log_record,
    encode_cluster_metadata_record,
    encode_offsets_key,
    encode_offsets_value,
    encode_transaction_log_key,
    encode_transaction_log_value,
    kraft_control_text,
    latest_committed_offsets,
    offset_commit_history,
    offsets_decoder,
    transaction_log_decoder,
)
from kafka_format.runtime.messages.kafka_message import (
    Field,
    Message,
    MessageDecodeError,
    Versions,
    default_value,
    json_text,
    read_message,
    write_message,
)
from kafka_format.runtime.model import Record
from kafka_format.runtime.write.writer import Message as LogMessage
from kafka_format.runtime.write.writer import PartitionWriter, Producer

PROPS = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])

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


def s16(text: str | None) -> bytes:
    """STRING / NULLABLE_STRING: int16 length."""
    if text is None:
        return i16(-1)
    raw = text.encode()
    return i16(len(raw)) + raw


def cs(text: str | None) -> bytes:
    """COMPACT_(NULLABLE_)STRING: unsigned varint length + 1."""
    if text is None:
        return uv(0)
    raw = text.encode()
    return uv(len(raw) + 1) + raw


def b32(data: bytes | None) -> bytes:
    return i32(-1) if data is None else i32(len(data)) + data


def cb(data: bytes | None) -> bytes:
    return uv(0) if data is None else uv(len(data) + 1) + data


def a32(items, enc=i32) -> bytes:
    return i32(-1) if items is None else i32(len(items)) + b"".join(enc(x) for x in items)


def ca(items, enc=i32) -> bytes:
    return uv(0) if items is None else uv(len(items) + 1) + b"".join(enc(x) for x in items)


def tags(*pairs: tuple[int, bytes]) -> bytes:
    """A tagged-fields section."""
    return uv(len(pairs)) + b"".join(uv(t) + uv(len(body)) + body for t, body in pairs)


NO_TAGS = b"\x00"


def kuuid(u: uuid.UUID) -> str:
    """Kafka's Uuid.toString: URL-safe base64 without padding."""
    return base64.urlsafe_b64encode(u.bytes).decode().rstrip("=")


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def dumps(node: Any) -> str:
    """Compact JSON as Jackson writes these simple values."""
    return json.dumps(node, separators=(",", ":"), ensure_ascii=False)


def rec(key: bytes | None, value: bytes | None, offset: int = 0) -> Record:
    return Record(offset=offset, timestamp=0, timestamp_type=0, key=key, value=value)


def frame(api_key: int, version: int, body: bytes) -> bytes:
    """A __cluster_metadata record value: frame version 1, apiKey, version."""
    return uv(1) + uv(api_key) + uv(version) + body


# --- __consumer_offsets: offset commits ------------------------------------------------------

COMMIT = {
    "offset": 4242,
    "leaderEpoch": 7,
    "metadata": "m€ta",
    "commitTimestamp": 1_700_000_000_123,
    "expireTimestamp": 1_700_086_400_123,
}
#: OffsetCommitValue fields per version, in order (OffsetCommitValue.json).
COMMIT_FIELDS = {
    0: ("offset", "metadata", "commitTimestamp"),
    1: ("offset", "metadata", "commitTimestamp", "expireTimestamp"),
    2: ("offset", "metadata", "commitTimestamp"),
    3: ("offset", "leaderEpoch", "metadata", "commitTimestamp"),
    4: ("offset", "leaderEpoch", "metadata", "commitTimestamp"),
}


def commit_key(group: str, topic: str, partition: int, key_version: int = 1) -> bytes:
    return i16(key_version) + s16(group) + s16(topic) + i32(partition)


def commit_value(version: int, c: dict, extra_tags: bytes = NO_TAGS) -> bytes:
    body = i64(c["offset"])
    if version >= 3:
        body += i32(c["leaderEpoch"])
    body += cs(c["metadata"]) if version >= 4 else s16(c["metadata"])
    body += i64(c["commitTimestamp"])
    if version == 1:
        body += i64(c["expireTimestamp"])
    if version >= 4:
        body += extra_tags
    return i16(version) + body


@pytest.mark.parametrize("key_version", [0, 1])
@pytest.mark.parametrize("version", range(5))
def test_offset_commit_every_version(key_version, version):
    key = commit_key("orders-app", "orders", 3, key_version)
    value = commit_value(version, COMMIT)
    key_text, payload = offsets_decoder(rec(key, value, offset=17))
    assert key_text == dumps(
        {
            "type": str(key_version),
            "data": {"group": "orders-app", "topic": "orders", "partition": 3},
        }
    )
    data = {name: COMMIT[name] for name in COMMIT_FIELDS[version]}
    assert payload == dumps({"version": str(version), "data": data})

    decoded = decode_offsets_record(key, value)
    assert decoded["recordType"] == key_version
    assert decoded["recordTypeName"] == "OffsetCommit"
    assert decoded["key"] == {"group": "orders-app", "topic": "orders", "partition": 3}
    assert decoded["valueVersion"] == version
    assert decoded["tombstone"] is False
    # fields a version lacks hold Kafka's default (-1)
    assert decoded["value"] == {"leaderEpoch": -1, "expireTimestamp": -1, **data}


def test_offset_commit_tombstone():
    key = commit_key("g", "t", 0)
    assert offsets_decoder(rec(key, None)) == (
        '{"type":"1","data":{"group":"g","topic":"t","partition":0}}',
        "<DELETE>",
    )
    decoded = decode_offsets_record(key, None)
    assert decoded["tombstone"] is True
    assert decoded["value"] is None and decoded["valueVersion"] is None


def test_flexible_value_skips_unknown_tagged_fields_and_reads_newer_versions():
    # A newer broker may add tagged fields (a topic id, say) and bump the version: the
    # generated reader skips unknown tags and reads a higher version with the open ranges.
    topic_id = uuid.UUID("5a1d2c3b-4e5f-4a6b-8c7d-9e0f1a2b3c4d")
    extra = tags((0, topic_id.bytes), (9, b"xy"))
    for version in (4, 5):
        value = commit_value(version, COMMIT, extra_tags=extra)
        decoded = decode_offsets_record(commit_key("g", "t", 0), value)
        assert decoded["valueVersion"] == version
        assert decoded["value"]["offset"] == COMMIT["offset"]
        assert decoded["value"]["metadata"] == COMMIT["metadata"]
        assert decoded["value"]["_unknownTaggedFields"] == {0: topic_id.bytes, 9: b"xy"}
        _, payload = offsets_decoder(rec(commit_key("g", "t", 0), value))
        data = {name: COMMIT[name] for name in COMMIT_FIELDS[4]}
        assert payload == dumps({"version": str(version), "data": data})


# --- kafka-dump-log's own expectations (Kafka's DumpLogSegmentsTest) -------------------------


def group_metadata_v4(subscription: bytes, assignment: bytes) -> bytes:
    member = (
        cs("member")
        + cs("instance")
        + cs("client")
        + cs("host")
        + i32(1000)  # rebalanceTimeout
        + i32(100)  # sessionTimeout
        + cb(subscription)
        + cb(assignment)
        + NO_TAGS
    )
    return (
        i16(4)
        + cs("consumer")
        + i32(10)
        + cs("range")
        + cs("member")
        + i64(-1)
        + uv(2)  # one member
        + member
        + NO_TAGS
    )


def test_kafka_dump_log_expectations():
    """The exact outputs Kafka's DumpLogSegmentsTest.testOffsetsMessageParser expects."""
    # ConsumerGroupMetadataKey (type 3) / ConsumerGroupMetadataValue v0, epoch 10
    key = i16(3) + s16("group")
    value = i16(0) + i32(10) + NO_TAGS
    assert offsets_decoder(rec(key, value)) == (
        '{"type":"3","data":{"groupId":"group"}}',
        '{"version":"0","data":{"epoch":10}}',
    )
    assert offsets_decoder(rec(key, None)) == (
        '{"type":"3","data":{"groupId":"group"}}',
        "<DELETE>",
    )

    # Classic group metadata with the consumer protocol: subscription (v3, as the Java
    # client's ConsumerProtocol.serializeSubscription writes it) and assignment decoded.
    tp = KpSubscription.TopicPartition
    subscription = KpSubscription(
        version=3,
        topics=["foo"],
        user_data=None,
        owned_partitions=[tp(topic="foo", partitions=[0])],
        generation_id=0,
        rack_id="rack",
    ).encode()
    assignment = KpAssignment(
        version=3,
        assigned_partitions=[KpAssignment.TopicPartition(topic="foo", partitions=[0])],
        user_data=None,
    ).encode()
    key = i16(2) + s16("group")
    assert offsets_decoder(rec(key, group_metadata_v4(subscription, assignment))) == (
        '{"type":"2","data":{"group":"group"}}',
        '{"version":"4","data":{"protocolType":"consumer","generation":10,"protocol":"range",'
        '"leader":"member","currentStateTimestamp":-1,"members":[{"memberId":"member",'
        '"groupInstanceId":"instance","clientId":"client","clientHost":"host",'
        '"rebalanceTimeout":1000,"sessionTimeout":100,"subscription":{"topics":["foo"],'
        '"userData":null,"ownedPartitions":[{"topic":"foo","partitions":[0]}],'
        '"generationId":0,"rackId":"rack"},"assignment":{"assignedPartitions":'
        '[{"topic":"foo","partitions":[0]}],"userData":null}}]}}',
    )
    # ... and kept as base64 when malformed
    assert offsets_decoder(rec(key, group_metadata_v4(b"Subscription", b"Assignment"))) == (
        '{"type":"2","data":{"group":"group"}}',
        '{"version":"4","data":{"protocolType":"consumer","generation":10,"protocol":"range",'
        '"leader":"member","currentStateTimestamp":-1,"members":[{"memberId":"member",'
        '"groupInstanceId":"instance","clientId":"client","clientHost":"host",'
        '"rebalanceTimeout":1000,"sessionTimeout":100,"subscription":"U3Vic2NyaXB0aW9u",'
        '"assignment":"QXNzaWdubWVudA=="}]}}',
    )

    # an unknown record type, and a value that is not the type's
    assert offsets_decoder(rec(i16(32767) + s16("group"), value)) == (
        "Unknown record type 32767 at offset 0, skipping.",
        None,
    )
    member_value = (
        i16(0) + cs(None) + cs(None) + cs("") + cs("") + ca([]) + cs(None) + i32(-1) + cs(None)
    ) + NO_TAGS
    key_text, payload = offsets_decoder(rec(i16(3) + s16("group"), member_value))
    assert key_text.startswith(
        "Error at offset 0, skipping. Could not read record with version 0 from value's "
        "buffer due to: "
    )
    assert payload is None
    # the key is mandatory
    assert offsets_decoder(rec(None, None)) == (
        "Failed to decode message at offset 0 using offset topic decoder (message had a "
        "missing key)",
        None,
    )


# --- classic group metadata, every version, with kafka-python's consumer protocol ------------


def kp_subscription(version: int) -> bytes:
    tp = KpSubscription.TopicPartition
    return KpSubscription(
        version=version,
        topics=["orders", "payments"],
        user_data=b"\x01\x02",
        owned_partitions=[tp(topic="orders", partitions=[0, 2])],
        generation_id=7,
        rack_id="rack-a",
    ).encode()


def kp_assignment(version: int) -> bytes:
    tp = KpAssignment.TopicPartition
    return KpAssignment(
        version=version,
        assigned_partitions=[
            tp(topic="orders", partitions=[0, 2]),
            tp(topic="payments", partitions=[1]),
        ],
        user_data=None,
    ).encode()


def group_metadata_value(version: int, protocol_type: str, members: list[dict]) -> bytes:
    """GroupMetadataValue v0-v3 (int16-length strings, int32-length bytes and arrays)."""

    def member(m: dict) -> bytes:
        out = s16(m["memberId"])
        if version >= 3:
            out += s16(m["groupInstanceId"])
        out += s16(m["clientId"]) + s16(m["clientHost"])
        if version >= 1:
            out += i32(m["rebalanceTimeout"])
        out += i32(m["sessionTimeout"]) + b32(m["subscription"]) + b32(m["assignment"])
        return out

    body = s16(protocol_type) + i32(5) + s16("cooperative-sticky") + s16(members[0]["memberId"])
    if version >= 2:
        body += i64(1_700_000_000_999)
    body += i32(len(members)) + b"".join(member(m) for m in members)
    return i16(version) + body


MEMBER_FIELDS = {
    0: ("memberId", "clientId", "clientHost", "sessionTimeout", "subscription", "assignment"),
    1: ("memberId", "clientId", "clientHost", "rebalanceTimeout", "sessionTimeout"),
    3: ("memberId", "groupInstanceId", "clientId", "clientHost", "rebalanceTimeout"),
}


def subscription_json(version: int) -> dict:
    """ConsumerProtocolSubscription's JSON at ``version`` for kp_subscription's values."""
    out: dict[str, Any] = {"topics": ["orders", "payments"], "userData": b64(b"\x01\x02")}
    if version >= 1:
        out["ownedPartitions"] = [{"topic": "orders", "partitions": [0, 2]}]
    if version >= 2:
        out["generationId"] = 7
    if version >= 3:
        out["rackId"] = "rack-a"
    return out


ASSIGNMENT_JSON = {
    "assignedPartitions": [
        {"topic": "orders", "partitions": [0, 2]},
        {"topic": "payments", "partitions": [1]},
    ],
    "userData": None,
}


@pytest.mark.parametrize("version", range(4))
@pytest.mark.parametrize("protocol_version", range(4))
def test_group_metadata_every_version(version, protocol_version):
    members = [
        {
            "memberId": f"consumer-{i}",
            "groupInstanceId": None if i else "static-0",
            "clientId": "app",
            "clientHost": f"/10.0.0.{i}",
            "rebalanceTimeout": 300_000,
            "sessionTimeout": 45_000,
            "subscription": kp_subscription(protocol_version),
            "assignment": kp_assignment(protocol_version),
        }
        for i in range(2)
    ]
    key = i16(2) + s16("orders-app")
    value = group_metadata_value(version, "consumer", members)
    decoded = decode_offsets_record(key, value)
    assert decoded["recordTypeName"] == "GroupMetadata"
    assert decoded["key"] == {"group": "orders-app"}
    group = decoded["value"]
    assert group["protocolType"] == "consumer"
    assert group["generation"] == 5
    assert group["protocol"] == "cooperative-sticky"
    assert group["leader"] == "consumer-0"
    assert group["currentStateTimestamp"] == (1_700_000_000_999 if version >= 2 else -1)
    for got, want in zip(group["members"], members, strict=True):
        assert got["memberId"] == want["memberId"]
        assert got["groupInstanceId"] == (want["groupInstanceId"] if version >= 3 else None)
        assert got["rebalanceTimeout"] == (300_000 if version >= 1 else -1)
        assert got["subscription"] == want["subscription"]
        # kafka-python decodes the same bytes: the oracle for the embedded protocol
        oracle = KpSubscription.decode(want["subscription"])
        sub = got["consumerSubscription"]
        assert sub["version"] == protocol_version
        assert sub["topics"] == oracle.topics
        assert sub["userData"] == oracle.user_data
        if protocol_version >= 1:
            owned = [(p.topic, list(p.partitions)) for p in oracle.owned_partitions]
            assert [(p["topic"], p["partitions"]) for p in sub["ownedPartitions"]] == owned
        assert sub["generationId"] == (oracle.generation_id if protocol_version >= 2 else -1)
        assert sub["rackId"] == (oracle.rack_id if protocol_version >= 3 else None)
        asg_oracle = KpAssignment.decode(want["assignment"])
        asg = got["consumerAssignment"]
        assert [(p["topic"], p["partitions"]) for p in asg["assignedPartitions"]] == [
            (p.topic, list(p.partitions)) for p in asg_oracle.assigned_partitions
        ]

    # kafka-dump-log's JSON: the members' protocol bytes become the decoded message's JSON
    _, payload = offsets_decoder(rec(key, value))
    data: dict[str, Any] = {
        "protocolType": "consumer",
        "generation": 5,
        "protocol": "cooperative-sticky",
        "leader": "consumer-0",
    }
    if version >= 2:
        data["currentStateTimestamp"] = 1_700_000_000_999
    data["members"] = []
    for m in members:
        entry: dict[str, Any] = {"memberId": m["memberId"]}
        if version >= 3:
            entry["groupInstanceId"] = m["groupInstanceId"]
        entry.update(clientId=m["clientId"], clientHost=m["clientHost"])
        if version >= 1:
            entry["rebalanceTimeout"] = m["rebalanceTimeout"]
        entry["sessionTimeout"] = m["sessionTimeout"]
        entry["subscription"] = subscription_json(protocol_version)
        entry["assignment"] = ASSIGNMENT_JSON
        data["members"].append(entry)
    assert payload == dumps({"version": str(version), "data": data})


def test_group_metadata_of_other_protocols_keeps_bytes():
    members = [
        {
            "memberId": "worker-1",
            "groupInstanceId": None,
            "clientId": "connect",
            "clientHost": "/10.0.0.9",
            "rebalanceTimeout": 60_000,
            "sessionTimeout": 10_000,
            "subscription": b"\x00\x01connect-metadata",
            "assignment": b"",
        }
    ]
    value = group_metadata_value(3, "connect", members)
    decoded = decode_offsets_record(i16(2) + s16("connect-cluster"), value)
    member = decoded["value"]["members"][0]
    assert member["subscription"] == b"\x00\x01connect-metadata"
    assert member["consumerSubscription"] is None and member["consumerAssignment"] is None
    _, payload = offsets_decoder(rec(i16(2) + s16("connect-cluster"), value))
    body = json.loads(payload)["data"]["members"][0]
    assert body["subscription"] == b64(b"\x00\x01connect-metadata")
    assert body["assignment"] == ""
    # an empty group: protocol and leader are null
    empty = i16(3) + s16("") + i32(0) + s16(None) + s16(None) + i64(-1) + i32(0)
    _, payload = offsets_decoder(rec(i16(2) + s16("idle"), empty))
    assert payload == dumps(
        {
            "version": "3",
            "data": {
                "protocolType": "",
                "generation": 0,
                "protocol": None,
                "leader": None,
                "currentStateTimestamp": -1,
                "members": [],
            },
        }
    )


# --- KIP-848 consumer group records -----------------------------------------------------------


def test_consumer_group_member_metadata_with_tagged_struct():
    key = i16(5) + s16("orders-app") + s16("member-1")
    classic = (
        uv(1)  # not null
        + i32(45_000)
        + ca([("range", b"\x00\x03abc")], lambda p: cs(p[0]) + cb(p[1]) + NO_TAGS)
        + NO_TAGS
    )
    body = (
        cs(None)  # instanceId
        + cs("rack-1")
        + cs("client-1")
        + cs("/10.1.2.3")
        + ca(["orders", "payments"], cs)
        + cs(None)  # subscribedTopicRegex
        + i32(300_000)
        + cs("uniform")
    )
    key_text, payload = offsets_decoder(rec(key, i16(0) + body + tags((0, classic))))
    assert key_text == '{"type":"5","data":{"groupId":"orders-app","memberId":"member-1"}}'
    data = {
        "instanceId": None,
        "rackId": "rack-1",
        "clientId": "client-1",
        "clientHost": "/10.1.2.3",
        "subscribedTopicNames": ["orders", "payments"],
        "subscribedTopicRegex": None,
        "rebalanceTimeoutMs": 300_000,
        "serverAssignor": "uniform",
    }
    classic_json = {
        "sessionTimeoutMs": 45_000,
        "supportedProtocols": [{"name": "range", "metadata": b64(b"\x00\x03abc")}],
    }
    assert payload == dumps(
        {"version": "0", "data": {**data, "classicMemberMetadata": classic_json}}
    )
    # without the tag the field is at its default (an empty struct) and not printed
    _, payload = offsets_decoder(rec(key, i16(0) + body + NO_TAGS))
    assert payload == dumps({"version": "0", "data": data})
    value = decode_offsets_record(key, i16(0) + body + NO_TAGS)["value"]
    assert value["classicMemberMetadata"] == {"sessionTimeoutMs": 0, "supportedProtocols": []}
    # a tagged null (the member uses the consumer protocol) is printed as null
    _, payload = offsets_decoder(rec(key, i16(0) + body + tags((0, uv(0)))))
    assert payload == dumps({"version": "0", "data": {**data, "classicMemberMetadata": None}})


def test_consumer_group_assignment_records_with_uuids():
    t1, t2 = uuid.UUID(int=0x1234_5678_9ABC_DEF0_1122_3344_5566_7788), uuid.uuid4()

    def topic_partitions(p):
        return p[0].bytes + ca(p[1]) + NO_TAGS

    key = i16(8) + s16("orders-app") + s16("member-1")
    value = (
        i16(0)
        + i32(12)
        + i32(11)
        + i8(0)
        + ca([(t1, [0, 1]), (t2, [4])], topic_partitions)
        + ca([(t2, [5])], topic_partitions)
        + NO_TAGS
    )
    decoded = decode_offsets_record(key, value)
    assert decoded["recordTypeName"] == "ConsumerGroupCurrentMemberAssignment"
    assert decoded["value"]["assignedPartitions"] == [
        {"topicId": kuuid(t1), "partitions": [0, 1]},
        {"topicId": kuuid(t2), "partitions": [4]},
    ]
    _, payload = offsets_decoder(rec(key, value))
    assert payload == dumps(
        {
            "version": "0",
            "data": {
                "memberEpoch": 12,
                "previousMemberEpoch": 11,
                "state": 0,
                "assignedPartitions": [
                    {"topicId": kuuid(t1), "partitions": [0, 1]},
                    {"topicId": kuuid(t2), "partitions": [4]},
                ],
                "partitionsPendingRevocation": [{"topicId": kuuid(t2), "partitions": [5]}],
            },
        }
    )


def test_unknown_offsets_record_type_keeps_raw_bytes():
    key = i16(16) + s16("orders-app")  # a record type newer than this schema
    value = i16(0) + cs("^orders-.*") + NO_TAGS
    decoded = decode_offsets_record(key, value)
    assert decoded["recordType"] == 16
    assert decoded["recordTypeName"] is None
    assert decoded["key"] is None and decoded["value"] is None
    assert decoded["rawKey"] == s16("orders-app")
    assert decoded["valueVersion"] == 0
    assert decoded["rawValue"] == value[2:]
    assert offsets_decoder(rec(key, value, offset=5)) == (
        "Unknown record type 16 at offset 5, skipping.",
        None,
    )


# --- __transaction_state ----------------------------------------------------------------------


def txn_value_v0(pid, epoch, timeout, status, partitions, updated, started) -> bytes:
    def entry(p):
        return s16(p[0]) + a32(p[1])

    return (
        i16(0)
        + i64(pid)
        + i16(epoch)
        + i32(timeout)
        + i8(status)
        + a32(partitions, entry)
        + i64(updated)
        + i64(started)
    )


def txn_value_v1(pid, epoch, timeout, status, partitions, updated, started, tagged) -> bytes:
    def entry(p):
        return cs(p[0]) + ca(p[1]) + NO_TAGS

    body = i64(pid) + i16(epoch) + i32(timeout) + i8(status) + ca(partitions, entry)
    return i16(1) + body + i64(updated) + i64(started) + tags(*tagged)


def test_transaction_log_kafka_20712_example():
    """The dump printed in apache/kafka#22615 (KAFKA-20712): key 15 bytes, value 45."""
    key = i16(0) + s16("kafka-txn-0")
    value = txn_value_v1(0, 0, 60000, 0, None, 1781778768194, -1, [(0, i64(0))])
    assert (len(key), len(value)) == (15, 45)
    assert transaction_log_decoder(rec(key, value)) == (
        '{"type":"0","data":{"transactionalId":"kafka-txn-0"}}',
        '{"version":"1","data":{"producerId":0,"previousProducerId":0,"producerEpoch":0,'
        '"transactionTimeoutMs":60000,"transactionStatus":"Empty","transactionPartitions":null,'
        '"transactionLastUpdateTimestampMs":1781778768194,"transactionStartTimestampMs":-1}}',
    )


def test_transaction_log_versions():
    key = i16(0) + s16("payments-tx")
    partitions = [("payments", [0, 3]), ("__consumer_offsets", [12])]
    v0 = txn_value_v0(9001, 3, 60000, 1, partitions, 1_700_000_000_500, 1_700_000_000_000)
    decoded = decode_transaction_log_record(key, v0)
    assert decoded["key"] == {"transactionalId": "payments-tx"}
    value = decoded["value"]
    assert (value["producerId"], value["producerEpoch"]) == (9001, 3)
    assert value["transactionState"] == "Ongoing"
    assert value["transactionPartitions"] == [
        {"topic": "payments", "partitionIds": [0, 3]},
        {"topic": "__consumer_offsets", "partitionIds": [12]},
    ]
    # tagged fields of v1 only: defaults
    assert (value["previousProducerId"], value["nextProducerId"]) == (-1, -1)
    assert value["clientTransactionVersion"] == 0
    _, payload = transaction_log_decoder(rec(key, v0))
    assert payload == dumps(
        {
            "version": "0",
            "data": {
                "producerId": 9001,
                "producerEpoch": 3,
                "transactionTimeoutMs": 60000,
                "transactionStatus": "Ongoing",
                "transactionPartitions": [
                    {"topic": "payments", "partitionIds": [0, 3]},
                    {"topic": "__consumer_offsets", "partitionIds": [12]},
                ],
                "transactionLastUpdateTimestampMs": 1_700_000_000_500,
                "transactionStartTimestampMs": 1_700_000_000_000,
            },
        }
    )

    tagged = [(0, i64(9000)), (1, i64(9002)), (2, i16(2))]
    v1 = txn_value_v1(9001, 4, 60000, 4, partitions, 1_700_000_001_000, -1, tagged)
    value = decode_transaction_log_record(key, v1)["value"]
    assert (value["previousProducerId"], value["nextProducerId"]) == (9000, 9002)
    assert value["clientTransactionVersion"] == 2
    assert value["transactionState"] == "CompleteCommit"
    _, payload = transaction_log_decoder(rec(key, v1))
    data = json.loads(payload)["data"]
    assert list(data) == [
        "producerId",
        "previousProducerId",
        "nextProducerId",
        "producerEpoch",
        "transactionTimeoutMs",
        "transactionStatus",
        "transactionPartitions",
        "transactionLastUpdateTimestampMs",
        "transactionStartTimestampMs",
        "clientTransactionVersion",
    ]
    assert data["transactionStatus"] == "CompleteCommit"

    assert transaction_log_decoder(rec(key, None)) == (
        '{"type":"0","data":{"transactionalId":"payments-tx"}}',
        "<DELETE>",
    )
    assert transaction_log_decoder(rec(i16(1) + s16("x"), v0, offset=3)) == (
        "Unknown record type 1 at offset 3, skipping.",
        None,
    )
    key_text, payload = transaction_log_decoder(rec(key, v0[:20], offset=4))
    assert key_text.startswith("Error at offset 4, skipping. Could not read record with version 0")
    assert payload is None


def test_transaction_states_are_kafkas():
    names = ["Empty", "Ongoing", "PrepareCommit", "PrepareAbort", "CompleteCommit"]
    names += ["CompleteAbort", "Dead", "PrepareEpochFence"]
    key = i16(0) + s16("t")
    for status, name in enumerate(names):
        value = txn_value_v0(1, 0, 1000, status, [], 0, 0)
        assert decode_transaction_log_record(key, value)["value"]["transactionState"] == name
    value = txn_value_v0(1, 0, 1000, 42, [], 0, 0)
    assert decode_transaction_log_record(key, value)["value"]["transactionState"] is None
    assert '"transactionStatus":42' in transaction_log_decoder(rec(key, value))[1]


# --- __cluster_metadata -----------------------------------------------------------------------

TOPIC_ID = uuid.UUID("4f1e5c2a-9b3d-4c8e-a7f6-0123456789ab")
DIR_A, DIR_B = uuid.UUID(int=7), uuid.UUID(int=8)


def endpoint(e):
    return cs(e[0]) + cs(e[1]) + u16(e[2]) + i16(e[3]) + NO_TAGS


def feature(f):
    return cs(f[0]) + i16(f[1]) + i16(f[2]) + NO_TAGS


def register_broker(version: int) -> bytes:
    body = i32(1)
    if version >= 2:
        body += b"\x00"  # isMigratingZkBroker
    body += TOPIC_ID.bytes + i64(42)
    body += ca([("PLAINTEXT", "broker-1", 9092, 0)], endpoint)
    body += ca([("metadata.version", 1, 21)], feature)
    body += cs("rack-a") + b"\x01"  # fenced
    if version >= 1:
        body += b"\x00"  # inControlledShutdown
    logdirs = tags((0, ca([DIR_A], lambda u: u.bytes))) if version >= 3 else NO_TAGS
    return body + logdirs


def register_broker_json(version: int) -> dict:
    data: dict[str, Any] = {"brokerId": 1}
    if version >= 2:
        data["isMigratingZkBroker"] = False
    data.update(
        incarnationId=kuuid(TOPIC_ID),
        brokerEpoch=42,
        endPoints=[{"name": "PLAINTEXT", "host": "broker-1", "port": 9092, "securityProtocol": 0}],
        features=[
            {"name": "metadata.version", "minSupportedVersion": 1, "maxSupportedVersion": 21}
        ],
        rack="rack-a",
        fenced=True,
    )
    if version >= 1:
        data["inControlledShutdown"] = False
    if version >= 3:
        data["logDirs"] = [kuuid(DIR_A)]
    return data


METADATA_CASES = [
    # (apiKey, version, body, MetadataRecordType name, expected data)
    (
        2,
        0,
        cs("orders") + TOPIC_ID.bytes + NO_TAGS,
        "TOPIC_RECORD",
        {"name": "orders", "topicId": kuuid(TOPIC_ID)},
    ),
    *[
        (0, v, register_broker(v), "REGISTER_BROKER_RECORD", register_broker_json(v))
        for v in range(4)
    ],
    *[
        (
            3,
            v,
            i32(0)
            + TOPIC_ID.bytes
            + ca([1, 2, 3])
            + ca([1, 2])
            + ca([])
            + ca([3])
            + i32(1)
            + i32(5)
            + i32(9)
            + (ca([DIR_A, DIR_B, DIR_A], lambda u: u.bytes) if v >= 1 else b"")
            + (tags((0, i8(1)), (1, ca([2]))) if v >= 2 else tags((0, i8(1)))),
            "PARTITION_RECORD",
            {
                "partitionId": 0,
                "topicId": kuuid(TOPIC_ID),
                "replicas": [1, 2, 3],
                "isr": [1, 2],
                "removingReplicas": [],
                "addingReplicas": [3],
                "leader": 1,
                "leaderRecoveryState": 1,
                "leaderEpoch": 5,
                "partitionEpoch": 9,
                **({"directories": [kuuid(DIR_A), kuuid(DIR_B), kuuid(DIR_A)]} if v >= 1 else {}),
                **({"eligibleLeaderReplicas": [2]} if v >= 2 else {}),
            },
        )
        for v in range(3)
    ],
    (
        5,
        0,
        i32(0) + TOPIC_ID.bytes + tags((0, ca([0, 1, 2])), (1, i32(1))),
        "PARTITION_CHANGE_RECORD",
        {"partitionId": 0, "topicId": kuuid(TOPIC_ID), "isr": [0, 1, 2], "leader": 1},
    ),
    (
        5,
        2,
        i32(4)
        + TOPIC_ID.bytes
        + tags((0, ca([2])), (6, ca([])), (7, ca(None)), (8, ca([DIR_B], lambda u: u.bytes))),
        "PARTITION_CHANGE_RECORD",
        # tag 7 (lastKnownElr) holds null, its default: not printed
        {
            "partitionId": 4,
            "topicId": kuuid(TOPIC_ID),
            "isr": [2],
            "directories": [kuuid(DIR_B)],
            "eligibleLeaderReplicas": [],
        },
    ),
    (
        4,
        0,
        i8(2) + cs("orders") + cs("retention.ms") + cs(None) + NO_TAGS,
        "CONFIG_RECORD",
        {"resourceType": 2, "resourceName": "orders", "name": "retention.ms", "value": None},
    ),
    (
        17,
        2,
        i32(1) + i64(42) + tags((0, i8(1)), (1, i8(0)), (2, ca([DIR_A], lambda u: u.bytes))),
        "BROKER_REGISTRATION_CHANGE_RECORD",
        # inControlledShutdown 0 is its default: Kafka would not write it, nor print it
        {"brokerId": 1, "brokerEpoch": 42, "fenced": 1, "logDirs": [kuuid(DIR_A)]},
    ),
    (
        12,
        0,
        cs("metadata.version") + i16(21) + NO_TAGS,
        "FEATURE_LEVEL_RECORD",
        {"name": "metadata.version", "featureLevel": 21},
    ),
    (
        15,
        0,
        i32(1) + i64(42) + i64(5000) + NO_TAGS,
        "PRODUCER_IDS_RECORD",
        {"brokerId": 1, "brokerEpoch": 42, "nextProducerId": 5000},
    ),
    (9, 0, TOPIC_ID.bytes + NO_TAGS, "REMOVE_TOPIC_RECORD", {"topicId": kuuid(TOPIC_ID)}),
    (7, 0, i32(2) + i64(43) + NO_TAGS, "FENCE_BROKER_RECORD", {"id": 2, "epoch": 43}),
    (8, 0, i32(2) + i64(44) + NO_TAGS, "UNFENCE_BROKER_RECORD", {"id": 2, "epoch": 44}),
    (20, 0, NO_TAGS, "NO_OP_RECORD", {}),
    (
        21,
        0,
        i8(3) + NO_TAGS,
        "ZK_MIGRATION_STATE_RECORD",
        {"zkMigrationState": 3},
    ),
    (23, 0, tags((0, cs("migration"))), "BEGIN_TRANSACTION_RECORD", {"name": "migration"}),
    (
        14,
        0,
        ca([("user", None)], lambda e: cs(e[0]) + cs(e[1]) + NO_TAGS)
        + cs("producer_byte_rate")
        + struct.pack(">d", 1e7)
        + b"\x00"
        + NO_TAGS,
        "CLIENT_QUOTA_RECORD",
        None,  # the float: checked as text below
    ),
]


@pytest.mark.parametrize(
    ("api_key", "version", "body", "name", "data"),
    METADATA_CASES,
    ids=[f"{c[3]}-v{c[1]}" for c in METADATA_CASES],
)
def test_cluster_metadata_records(api_key, version, body, name, data):
    value = frame(api_key, version, body)
    decoded = decode_cluster_metadata_record(value)
    assert (decoded["frameVersion"], decoded["apiKey"], decoded["version"]) == (1, api_key, version)
    assert decoded["type"] == name
    key_text, payload = cluster_metadata_decoder(rec(None, value, offset=8))
    assert key_text is None
    if data is not None:
        assert payload == dumps({"type": name, "version": version, "data": data})
    else:
        # Jackson writes doubles as Java's Double.toString does
        assert payload == (
            '{"type":"CLIENT_QUOTA_RECORD","version":0,"data":{"entity":[{"entityType":"user",'
            '"entityName":null}],"key":"producer_byte_rate","value":1.0E7,"remove":false}}'
        )


def test_cluster_metadata_damage():
    topic = frame(2, 0, cs("orders") + TOPIC_ID.bytes + NO_TAGS)

    def decoded_text(value, offset=3):
        key, payload = cluster_metadata_decoder(rec(None, value, offset=offset))
        assert key is None
        return payload

    assert decoded_text(b"\x00" + topic[1:]).startswith(
        "Error at 3, skipping. Could not deserialize metadata record with frame version 0."
    )
    assert decoded_text(b"\x02" + topic[1:]) == (
        "Error at 3, skipping. Could not deserialize metadata record due to unknown frame "
        "version 2(only frame version 1 is supported)"
    )
    assert decoded_text(topic + b"\x00\x00") == (
        "Error at 3, skipping. Found 2 byte(s) of garbage after 2"
    )
    assert decoded_text(topic[:-5]).startswith(
        "Error at 3, skipping. Failed to deserialize record with type 2"
    )
    # Kafka's DumpLogSegmentsTest appends this bogus record: frame version 10000
    assert "skipping" in decoded_text(uv(10000) + uv(10000))
    assert decoded_text(uv(1) + uv(1 << 20)).endswith("Value for type was too large.")
    assert decoded_text(None).startswith("Error at 3, skipping.")
    # an apiKey newer than the schema: type and raw bytes
    assert decoded_text(frame(99, 1, b"\x05\x06" + NO_TAGS)) == dumps(
        {"type": "UNKNOWN(99)", "version": 1, "raw": b64(b"\x05\x06\x00")}
    )
    decoded = decode_cluster_metadata_record(frame(99, 1, b"\x05"))
    assert (decoded["type"], decoded["data"], decoded["raw"]) == ("UNKNOWN(99)", None, b"\x05")


def test_metadata_type_names_are_kafkas():
    names = {m.api_key: schemas.metadata_type_name(m.name) for m in schemas.METADATA_RECORDS}
    assert names[0] == "REGISTER_BROKER_RECORD"
    assert names[17] == "BROKER_REGISTRATION_CHANGE_RECORD"
    assert names[21] == "ZK_MIGRATION_STATE_RECORD"
    assert names[27] == "REGISTER_CONTROLLER_RECORD"
    assert len(set(names.values())) == len(names) == 25


# --- KRaft control records --------------------------------------------------------------------


def test_kraft_control_records():
    header = i16(0) + i64(1_700_000_000_000) + NO_TAGS
    assert kraft_control_text(3, header) == (
        'SnapshotHeader {"version":0,"lastContainedLogTimestamp":1700000000000}'
    )
    assert kraft_control_text(4, i16(0) + NO_TAGS) == 'SnapshotFooter {"version":0}'
    assert kraft_control_text(5, i16(0) + i16(1) + NO_TAGS) == (
        'KRaftVersion {"version":0,"kRaftVersion":1}'
    )
    voter = (
        i32(1)
        + DIR_A.bytes
        + ca([("CONTROLLER", "c1", 9093)], lambda e: cs(e[0]) + cs(e[1]) + u16(e[2]) + NO_TAGS)
        + i16(0)
        + i16(1)
        + NO_TAGS  # KRaftVersionFeature
        + NO_TAGS
    )
    assert kraft_control_text(6, i16(0) + ca([voter], bytes) + NO_TAGS) == (
        'KRaftVoters {"version":0,"voters":[{"voterId":1,"voterDirectoryId":"'
        + kuuid(DIR_A)
        + '","endpoints":[{"name":"CONTROLLER","host":"c1","port":9093}],'
        '"kRaftVersionFeature":{"minSupportedVersion":0,"maxSupportedVersion":1}}]}'
    )
    leader = (
        i16(0)
        + i32(2)
        + ca([1, 2, 3], lambda v: i32(v) + NO_TAGS)
        + ca([2], lambda v: i32(v) + NO_TAGS)
    )
    decoded = decode_kraft_control_record(2, leader + NO_TAGS)
    assert decoded["label"] == "LeaderChange"
    assert decoded["data"]["leaderId"] == 2
    assert [v["voterId"] for v in decoded["data"]["voters"]] == [1, 2, 3]
    # as trunk's DumpLogSegments.printControlRecord (KAFKA-19069): "LeaderChange: " + JSON
    assert kraft_control_text(2, leader + NO_TAGS) == (
        'LeaderChange: {"version":0,"leaderId":2,"voters":[{"voterId":1},{"voterId":2},'
        '{"voterId":3}],"grantingVoters":[{"voterId":2}]}'
    )
    assert kraft_control_text(2, b"").startswith("LeaderChange: <error:")
    for control_type in (0, 1, 7):
        assert kraft_control_text(control_type, b"") is None
    assert kraft_control_text(3, b"\x00").startswith("SnapshotHeader <error:")


# --- kafka-python's generic codec as an oracle -----------------------------------------------


def snake(name: str) -> str:
    """kafka-python's attribute names (its BaseField.snake_case)."""
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def kafka_json(msg: Message) -> dict:
    """Our schema as a Kafka JSON message definition, for kafka-python's codec."""

    def versions(v: Versions) -> str:
        return str(v)

    def fld(f: Field) -> dict:
        out: dict[str, Any] = {"name": f.name, "type": f.type, "versions": versions(f.versions)}
        if not f.nullable.empty:
            out["nullableVersions"] = versions(f.nullable)
        if not f.tagged.empty:
            out["taggedVersions"] = versions(f.tagged)
            out["tag"] = f.tag
        if f.default is not None:
            out["default"] = f.default
        if f.fields:
            out["fields"] = [fld(g) for g in f.fields]
        return out

    return {
        "type": "data",
        "name": msg.name,
        "validVersions": versions(msg.valid),
        "flexibleVersions": versions(msg.flexible),
        "fields": [fld(f) for f in msg.fields],
    }


@functools.cache
def kafka_python_class(msg: Message):
    # kafka-python builds a class from the JSON resource named like the class; json_patch
    # then swaps in our definition (the class takes an existing resource's name).
    spec = kafka_json(msg)
    return type(
        "ConsumerProtocolSubscription",
        (ApiData,),
        {"json_patch": classmethod(lambda mcs, _json: spec)},
    )


def to_kafka_python(cls, fields: tuple[Field, ...], values: dict, version: int):
    kwargs = {}
    for f in fields:
        if version not in f.versions:
            continue
        kwargs[snake(f.name)] = _kp_value(cls, f, values[f.json_name], version)
    return cls(**kwargs)


def _kp_value(cls, f: Field, value, version):
    if value is None:
        return None
    if f.is_struct:
        sub = getattr(cls, f.element)
        if f.is_array:
            return [to_kafka_python(sub, f.fields, v, version) for v in value]
        return to_kafka_python(sub, f.fields, value, version)
    if f.element == "uuid":

        def to_uuid(text: str) -> uuid.UUID:
            return uuid.UUID(bytes=base64.urlsafe_b64decode(text + "=="))

        return [to_uuid(v) for v in value] if f.is_array else to_uuid(value)
    return value


def from_kafka_python(obj, fields: tuple[Field, ...], version: int) -> dict:
    out = {}
    for f in fields:
        if version not in f.versions:
            out[f.json_name] = default_value(f)
            continue
        value = getattr(obj, snake(f.name))
        if f.element == "uuid" and not f.is_array and value is None:
            value = uuid.UUID(int=0)  # kafka-python reads Kafka's zero uuid as None
        if value is None:
            out[f.json_name] = None
        elif f.is_struct and f.is_array:
            out[f.json_name] = [from_kafka_python(v, f.fields, version) for v in value]
        elif f.is_struct:
            out[f.json_name] = from_kafka_python(value, f.fields, version)
        elif f.element == "uuid":
            items = [
                uuid.UUID(int=0) if u is None else u for u in (value if f.is_array else [value])
            ]
            texts = [base64.urlsafe_b64encode(u.bytes).decode().rstrip("=") for u in items]
            out[f.json_name] = texts if f.is_array else texts[0]
        elif f.element == "bytes":
            out[f.json_name] = bytes(value)
        else:
            out[f.json_name] = list(value) if f.is_array else value
    return out


SAFE_TEXT = st.text(st.characters(exclude_categories=("Cs",)), max_size=6)
_INT_RANGES = {
    "int8": 8,
    "int16": 16,
    "int32": 32,
    "int64": 64,
}


def scalar_strategy(kind: str) -> st.SearchStrategy:
    if kind in _INT_RANGES:
        bits = _INT_RANGES[kind]
        return st.integers(-(2 ** (bits - 1)), 2 ** (bits - 1) - 1)
    if kind == "uint16":
        return st.integers(0, 0xFFFF)
    if kind == "uint32":
        return st.integers(0, 0xFFFFFFFF)
    if kind == "bool":
        return st.booleans()
    if kind == "float64":
        return st.floats(allow_nan=False)
    if kind == "uuid":
        return st.binary(min_size=16, max_size=16).map(
            lambda b: base64.urlsafe_b64encode(b).decode().rstrip("=")
        )
    if kind == "string":
        return SAFE_TEXT
    if kind == "bytes":
        return st.binary(max_size=6)
    raise AssertionError(kind)


def _differs_from(default):
    return lambda value: value != default


def values_strategy(fields: tuple[Field, ...], version: int, *, kafka_python: bool = False):
    """Values for every field present in ``version``, defaults for the others.

    ``kafka_python``: no tagged struct that is null or at its default (an empty struct):
    kafka-python writes the empty struct and leaves the null out, Kafka does the opposite."""
    parts = {}
    for f in fields:
        if version not in f.versions:
            parts[f.json_name] = st.just(default_value(f))
            continue
        if f.is_struct:
            inner = values_strategy(f.fields, version, kafka_python=kafka_python)
            strat = st.lists(inner, max_size=2) if f.is_array else inner
        else:
            strat = scalar_strategy(f.element)
            if f.is_array:
                strat = st.lists(strat, max_size=3)
        tagged_struct = f.is_struct and not f.is_array and version in f.tagged
        if version in f.nullable and not (kafka_python and tagged_struct):
            strat = st.none() | strat
        if kafka_python and tagged_struct:
            strat = strat.filter(_differs_from(default_value(f)))
        parts[f.json_name] = strat
    return st.fixed_dictionaries(parts)


def every_message() -> list[Message]:
    seen: dict[str, Message] = {}
    for _, key, value in schemas.OFFSETS_RECORD_TYPES.values():
        seen.setdefault(key.name, key)
        seen.setdefault(value.name, value)
    for msg in (
        schemas.CONSUMER_PROTOCOL_SUBSCRIPTION,
        schemas.CONSUMER_PROTOCOL_ASSIGNMENT,
        schemas.TRANSACTION_LOG_KEY,
        schemas.TRANSACTION_LOG_VALUE,
        *schemas.METADATA_RECORDS,
        *(m for _, m in schemas.KRAFT_CONTROL_RECORDS.values()),
    ):
        seen.setdefault(msg.name, msg)
    return list(seen.values())


MESSAGE_VERSIONS = [(m, v) for m in every_message() for v in range(m.valid.lo, m.valid.hi + 1)]


def kafka_python_can_encode(msg: Message) -> bool:
    """kafka-python's codec takes a field named Version for the message version, and does not
    build a message without fields."""
    return bool(msg.fields) and all(f.name != "Version" for f in msg.fields)


def tags_in_field_order(fields: tuple[Field, ...]) -> bool:
    """kafka-python writes tagged fields in declaration order, Kafka in tag order."""
    tags = [f.tag for f in fields if not f.tagged.empty]
    return tags == sorted(tags) and all(tags_in_field_order(f.fields) for f in fields)


ORACLE_VERSIONS = [(m, v) for m, v in MESSAGE_VERSIONS if kafka_python_can_encode(m)]


@pytest.mark.parametrize(
    ("msg", "version"), ORACLE_VERSIONS, ids=[f"{m.name}-v{v}" for m, v in ORACLE_VERSIONS]
)
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_codec_agrees_with_kafka_python(msg, version, data):
    """Every schema at every version: our bytes equal kafka-python's for the same values,
    and each side reads the other's bytes back to the same values."""
    values = data.draw(values_strategy(msg.fields, version, kafka_python=True))
    cls = kafka_python_class(msg)
    theirs = to_kafka_python(cls, msg.fields, values, version).encode(version=version, header=False)
    ours = write_message(msg, values, version)
    if tags_in_field_order(msg.fields):
        assert ours == theirs
    assert read_message(msg, theirs, version, exact=True) == values
    assert (
        from_kafka_python(cls.decode(ours, version=version, header=False), msg.fields, version)
        == values
    )


@PROPS
@given(data=st.data())
def test_roundtrip_every_schema(data):
    msg, version = data.draw(st.sampled_from(MESSAGE_VERSIONS))
    values = data.draw(values_strategy(msg.fields, version))
    encoded = write_message(msg, values, version)
    assert read_message(msg, encoded, version, exact=True) == values
    # and the module's encoders agree with the decoders
    assert write_message(msg, read_message(msg, encoded, version), version) == encoded


# --- damage never escapes the decoders --------------------------------------------------------

MAYBE_BYTES = st.none() | st.binary(max_size=64)


@PROPS
@given(key=MAYBE_BYTES, value=MAYBE_BYTES, offset=st.integers(0, 2**40))
def test_decoders_never_raise_on_garbage(key, value, offset):
    for name, decoder in DECODERS.items():
        out = decoder(rec(key, value, offset))
        assert isinstance(out, tuple) and len(out) == 2, name
        assert all(part is None or isinstance(part, str) for part in out), name


def valid_records() -> list[tuple[bytes, bytes]]:
    sub = kp_subscription(3)
    return [
        (commit_key("g", "t", 1), commit_value(4, COMMIT, tags((3, b"zz")))),
        (commit_key("g", "t", 1, 0), commit_value(1, COMMIT)),
        (i16(2) + s16("g"), group_metadata_v4(sub, kp_assignment(3))),
        (i16(0) + s16("tx"), txn_value_v1(1, 2, 3, 1, [("a", [1])], 4, 5, [(1, i64(7))])),
        (b"", frame(3, 2, METADATA_CASES[7][2])),
        (b"", frame(0, 3, register_broker(3))),
    ]


@PROPS
@given(
    which=st.integers(0, 5),
    cut=st.integers(0, 200),
    flips=st.lists(st.tuples(st.integers(0, 300), st.integers(1, 255)), max_size=4),
)
def test_mutated_records_raise_only_decode_errors(which, cut, flips):
    key, value = valid_records()[which]
    damaged = bytearray(value[: max(cut, 2)] if cut < len(value) else value)
    for pos, xor in flips:
        if damaged:
            damaged[pos % len(damaged)] ^= xor
    damaged = bytes(damaged)
    for decoder in DECODERS.values():
        out = decoder(rec(key or None, damaged))
        assert all(part is None or isinstance(part, str) for part in out)
    # the structured decoders raise MessageDecodeError and nothing else
    for decode in (
        lambda: decode_offsets_record(key, damaged),
        lambda: decode_transaction_log_record(key, damaged),
        lambda: decode_cluster_metadata_record(damaged),
    ):
        with suppress(MessageDecodeError):
            decode()


# --- Jackson's rendering ----------------------------------------------------------------------


def test_json_text_renders_as_jackson():
    assert json_text([1e7, 0.001, 1e-4, 123456789.5, 0.5, -2.0, 1e21]) == (
        "[1.0E7,0.001,1.0E-4,1.234567895E8,0.5,-2.0,1.0E21]"
    )
    assert json_text({"k": 'a"b\\c\n\t\x01\x1f€'}) == '{"k":"a\\"b\\\\c\\n\\t\\u0001\\u001F€"}'
    assert (
        json_text({"b": True, "n": None, "l": [], "d": {}}) == '{"b":true,"n":null,"l":[],"d":{}}'
    )


# --- the worked example: committed-offset history from a backup of __consumer_offsets --------

T0 = 1_700_000_000_000

#: What happened to the group coordinator's partition 0, step by step: (action, args).
SCENARIO = [
    ("group", "orders-app", T0),
    ("commit", [("orders-app", "orders", 0, 10), ("orders-app", "orders", 1, 5)], T0 + 1000, None),
    ("commit", [("audit", "orders", 0, 3)], T0 + 2000, None),
    ("commit", [("orders-app", "orders", 0, 25), ("orders-app", "orders", 1, 12)], T0 + 3000, None),
    # a TxnOffsetCommit of a transactional producer whose transaction aborts: never applied
    ("commit", [("orders-app", "orders", 0, 30)], T0 + 4000, "abort"),
    ("commit", [("orders-app", "orders", 0, 40)], T0 + 5000, None),
    ("delete", ("audit", "orders", 0), T0 + 6000),
    ("commit", [("orders-app", "orders", 1, 20)], T0 + 7000, "commit"),
]


def write_offsets_backup(log_dir: Path) -> list[dict]:
    """Write SCENARIO into ``log_dir/__consumer_offsets-0`` as a broker would, with keys and
    values built by this test's encoders; returns the history a reader must find."""
    expected: list[dict] = []
    next_offset = 0
    with PartitionWriter(log_dir, "__consumer_offsets", 0) as w:
        for step in SCENARIO:
            if step[0] == "group":
                _, group, ts = step
                members = [
                    {
                        "memberId": "consumer-1",
                        "groupInstanceId": None,
                        "clientId": "app",
                        "clientHost": "/10.0.0.1",
                        "rebalanceTimeout": 300_000,
                        "sessionTimeout": 45_000,
                        "subscription": kp_subscription(1),
                        "assignment": kp_assignment(1),
                    }
                ]
                value = group_metadata_value(3, "consumer", members)
                w.append([LogMessage(i16(2) + s16(group), value, timestamp=ts)])
                next_offset += 1
            elif step[0] == "commit":
                _, commits, ts, txn = step
                messages = [
                    LogMessage(
                        commit_key(g, t, p),
                        commit_value(
                            3,
                            {
                                "offset": o,
                                "leaderEpoch": 0,
                                "metadata": "",
                                "commitTimestamp": ts,
                            },
                        ),
                        timestamp=ts,
                    )
                    for g, t, p, o in commits
                ]
                if txn is None:
                    w.append(messages)
                else:
                    producer = Producer(producer_id=4000 + next_offset, epoch=0)
                    w.append(messages, producer=producer, transactional=True)
                    w.end_transaction(producer, commit=txn == "commit", coordinator_epoch=1)
                for i, (g, t, p, o) in enumerate(commits):
                    if txn != "abort":
                        expected.append(
                            {
                                "logOffset": next_offset + i,
                                "group": g,
                                "topic": t,
                                "partition": p,
                                "offset": o,
                                "commitTimestamp": ts,
                                "deleted": False,
                            }
                        )
                next_offset += len(commits) + (txn is not None)  # + the marker
            else:
                _, (g, t, p), ts = step
                w.append([LogMessage(commit_key(g, t, p), None, timestamp=ts)])
                expected.append(
                    {
                        "logOffset": next_offset,
                        "group": g,
                        "topic": t,
                        "partition": p,
                        "offset": None,
                        "commitTimestamp": None,
                        "deleted": True,
                    }
                )
                next_offset += 1
    return expected


def test_offset_commit_history_from_a_backup(tmp_path):
    expected = write_offsets_backup(tmp_path)
    partition = tmp_path / "__consumer_offsets-0"
    history = [
        {
            "logOffset": e.log_offset,
            "group": e.group,
            "topic": e.topic,
            "partition": e.partition,
            "offset": e.offset,
            "commitTimestamp": e.commit_timestamp,
            "deleted": e.deleted,
        }
        for e in offset_commit_history(partition)
    ]
    assert history == expected
    orders_app = [e.offset for e in offset_commit_history(partition, group="orders-app")]
    assert orders_app == [10, 5, 25, 12, 40, 20]
    # read_uncommitted would also show the aborted TxnOffsetCommit (30)
    uncommitted = offset_commit_history(partition, group="orders-app", isolation="read_uncommitted")
    assert 30 in [e.offset for e in uncommitted]

    latest = latest_committed_offsets(partition)
    assert {k: v.offset for k, v in latest.items()} == {
        ("orders-app", "orders", 0): 40,
        ("orders-app", "orders", 1): 20,
    }


def test_offset_commit_history_on_damaged_records(tmp_path):
    with PartitionWriter(tmp_path, "__consumer_offsets", 0) as w:
        w.append([LogMessage(commit_key("g", "t", 0), commit_value(3, COMMIT))])
        w.append([LogMessage(commit_key("g", "t", 1), b"\x00\x03\x00\x01")])  # cut short
        w.append([LogMessage(i16(2) + s16("g"), None)])  # group metadata: not a commit
    partition = tmp_path / "__consumer_offsets-0"
    with pytest.raises(MessageDecodeError, match="record at offset 1: Could not read record"):
        list(offset_commit_history(partition))
    events = list(offset_commit_history(partition, errors="skip"))
    assert [(e.log_offset, e.partition, e.offset) for e in events] == [(0, 0, COMMIT["offset"])]


def dump_lines_to_history(lines: list[str]) -> list[dict]:
    """What docs/internal-topics.md does with sed and jq, in Python: the offset-commit lines
    of ``dump --offsets-decoder`` output, as (log offset, key, payload)."""
    pattern = re.compile(r"^\| offset: (\d+) .* key: (\{\"type\":\"[01]\".*) payload: (.*)$")
    out = []
    for line in lines:
        m = pattern.match(line)
        if m:
            payload = None if m.group(3) == "<DELETE>" else json.loads(m.group(3))
            out.append(
                {"logOffset": int(m.group(1)), "key": json.loads(m.group(2)), "payload": payload}
            )
    return out


def test_history_through_the_decoder_texts(tmp_path):
    """The same history from the texts the dump prints (DECODERS over iter_records)."""
    from kafka_format.runtime.read.reader import iter_records

    expected = write_offsets_backup(tmp_path)
    lines = []
    for record in iter_records(tmp_path / "__consumer_offsets-0", isolation="read_committed"):
        key, payload = DECODERS["offsets-decoder"](record)
        meta = f"| offset: {record.offset} CreateTime: {record.timestamp}"
        lines.append(f"{meta} key: {key} payload: {payload}")
    got = dump_lines_to_history(lines)
    assert [
        {
            "logOffset": g["logOffset"],
            "group": g["key"]["data"]["group"],
            "topic": g["key"]["data"]["topic"],
            "partition": g["key"]["data"]["partition"],
            "offset": None if g["payload"] is None else g["payload"]["data"]["offset"],
            "commitTimestamp": None
            if g["payload"] is None
            else g["payload"]["data"]["commitTimestamp"],
            "deleted": g["payload"] is None,
        }
        for g in got
    ] == expected


def cli_has_offsets_decoder() -> bool:
    from kafka_format.runtime.cli import build_parser

    parser = build_parser()
    with redirect_stdout(io.StringIO()) as out, pytest.raises(SystemExit):
        parser.parse_args(["dump", "--help"])
    return "--offsets-decoder" in out.getvalue()


def test_history_with_the_cli(tmp_path):
    """``kafka-format dump --offsets-decoder`` (once dump has the option)."""
    if not cli_has_offsets_decoder():
        pytest.skip("kafka-format dump has no --offsets-decoder yet")
    from kafka_format.runtime.cli import main

    expected = write_offsets_backup(tmp_path)
    segment = tmp_path / "__consumer_offsets-0" / "00000000000000000000.log"
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        status = main(["dump", "--offsets-decoder", str(segment)])
    assert status == 0, err.getvalue()
    got = dump_lines_to_history(out.getvalue().splitlines())
    # kafka-dump-log reads uncommitted: the aborted TxnOffsetCommit shows up too
    aborted = [g for g in got if g["payload"] and g["payload"]["data"]["offset"] == 30]
    assert len(aborted) == 1
    assert [g["logOffset"] for g in got if g not in aborted] == [e["logOffset"] for e in expected]


def test_coordinator_partition_is_javas_string_hash():
    # Java: "hello".hashCode() == 99162322; "Aa" and "BB" collide (2112);
    # "polygenelubricants".hashCode() == Integer.MIN_VALUE, which Kafka's Utils.abs maps to 0
    assert coordinator_partition("hello", 1_000_000_007) == 99162322
    assert coordinator_partition("Aa") == coordinator_partition("BB") == 2112 % 50
    assert coordinator_partition("polygenelubricants") == 0
    assert coordinator_partition("") == 0
    # negative hashes: abs; "hello world".hashCode() == 1794106052, "zzzzzzzz" overflows
    assert coordinator_partition("hello world", 1 << 31) == 1794106052
    h = 0
    for c in "zzzzzzzz":
        h = (31 * h + ord(c)) % (1 << 32)
    h = h - (1 << 32) if h >= 1 << 31 else h
    assert h < 0
    assert coordinator_partition("zzzzzzzz") == abs(h) % 50
    # characters outside the BMP count as two UTF-16 units, as in Java
    assert coordinator_partition("\U0001f600", 1 << 31) == (31 * 0xD83D + 0xDE00)


# --- the worked example of docs/internal-topics.md, run as written -----------------------------

DOC = Path(__file__).resolve().parents[2] / "docs" / "internal-topics.md"


def doc_blocks(heading: str) -> list[tuple[str, str]]:
    """The fenced code blocks (language, text) of one section of the docs, in order."""
    text = DOC.read_text()
    start = text.index(heading)
    ends = [i for i in (text.find("\n### ", start + 1), text.find("\n## ", start + 1)) if i > 0]
    section = text[start : min(ends) if ends else None]
    return re.findall(r"```(\w*)\n(.*?)```", section, re.S)


def simulated_dump(path: Path, decoder: str) -> str:
    """What ``dump --<decoder>`` prints, in kafka-dump-log's format, from dump.py's own line
    formatting (used until dump has the decoder options)."""
    from kafka_format.runtime.cli.dump import DumpOptions, batch_line, record_line
    from kafka_format.runtime.read.reader import iter_batches

    lines = [f"Dumping {path}"]
    for batch in iter_batches(path):
        lines.append(batch_line(batch, batch.position))
        for record in batch.records or ():
            key, payload = DECODERS[decoder](record)
            options = DumpOptions(
                print_data_log=True,
                key_decoder=lambda _, text=key: text,
                value_decoder=lambda _, text=payload: text,
            )
            line = record_line(batch, record, options)
            if record.value is None and payload is not None and not batch.is_control:
                line += f" payload: {payload}"  # kafka-dump-log prints <DELETE>
            lines.append(line)
    return "\n".join(lines) + "\n"


def test_docs_worked_example(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    [(lang, code)] = doc_blocks("### A sample backup")
    assert lang == "python"
    exec(compile(code, "docs: a sample backup", "exec"), {})
    assert (tmp_path / "backup" / "__consumer_offsets-5").is_dir()

    # Python: what the block prints is what its comments say
    [(_, code)] = doc_blocks("### With Python")
    out = io.StringIO()
    with redirect_stdout(out):
        exec(compile(code, "docs: with Python", "exec"), {})
    printed = [line[2:] for line in code.splitlines() if line.startswith("# orders")]
    assert out.getvalue().splitlines() == printed

    # the command line: the pipeline's output is the block after it
    (sh, pipeline), (_, expected) = doc_blocks("### With the command line")
    assert sh == "sh"
    dump_command = "kafka-format dump --offsets-decoder backup/__consumer_offsets-5"
    assert pipeline.startswith(dump_command)
    if shutil.which("jq") is None:
        pytest.skip("jq is not installed")
    if cli_has_offsets_decoder():
        command = (
            f"{sys.executable} -m kafka_format dump --offsets-decoder backup/__consumer_offsets-5"
        )
    else:
        partition = tmp_path / "backup" / "__consumer_offsets-5"
        segment = partition / "00000000000000000000.log"
        (tmp_path / "dump.txt").write_text(simulated_dump(segment, "offsets-decoder"))
        command = "cat dump.txt"
    result = subprocess.run(
        ["sh", "-c", command + pipeline[len(dump_command) :]],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    )
    assert result.stdout.splitlines() == expected.strip().splitlines()


# --- the encoders of the module, against this test's --------------------------------------------


def test_module_encoders_match_hand_layouts():
    assert encode_offsets_key(1, {"group": "g", "topic": "t", "partition": 2}) == commit_key(
        "g", "t", 2
    )
    assert encode_offsets_value(1, 3, COMMIT) == commit_value(3, COMMIT)
    assert encode_offsets_value(1, 4, COMMIT) == commit_value(4, COMMIT)
    assert encode_transaction_log_key("tx") == i16(0) + s16("tx")
    fields = {
        "producerId": 1,
        "previousProducerId": 7,
        "producerEpoch": 2,
        "transactionTimeoutMs": 3,
        "transactionStatus": 1,
        "transactionPartitions": [{"topic": "a", "partitionIds": [1]}],
        "transactionLastUpdateTimestampMs": 4,
        "transactionStartTimestampMs": 5,
    }
    assert encode_transaction_log_value(1, fields) == txn_value_v1(
        1, 2, 3, 1, [("a", [1])], 4, 5, [(0, i64(7))]
    )
    topic = {"name": "orders", "topicId": kuuid(TOPIC_ID)}
    assert encode_cluster_metadata_record(2, 0, topic) == frame(
        2, 0, cs("orders") + TOPIC_ID.bytes + NO_TAGS
    )


# --- the transcription, against Kafka's JSON files -------------------------------------------

KAFKA_SOURCE = os.environ.get("KAFKA_SOURCE_DIR")
_DIRS = {
    "group": "group-coordinator/src/main/resources/common/message/",
    "clients": "clients/src/main/resources/common/message/",
    "txn": "transaction-coordinator/src/main/resources/common/message/",
    "metadata": "metadata/src/main/resources/common/metadata/",
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


def _compare_fields(ours: tuple[Field, ...], theirs: list[dict], structs: dict, where: str):
    assert [f.name for f in ours] == [t["name"] for t in theirs], where
    for o, t in zip(ours, theirs, strict=True):
        w = f"{where}.{t['name']}"
        assert o.type == t["type"], w
        assert o.versions == Versions.parse(t.get("versions", t.get("taggedVersions"))), w
        assert o.nullable == Versions.parse(t.get("nullableVersions", "none")), w
        assert o.tagged == Versions.parse(t.get("taggedVersions", "none")), w
        assert o.tag == (int(t["tag"]) if "tag" in t else None), w
        default = t.get("default")
        assert (None if o.default is None else str(o.default).lower()) == (
            None if default is None else str(default).lower()
        ), w
        sub = t.get("fields") or structs.get(t["type"].removeprefix("[]"))
        if sub is not None or o.fields:
            _compare_fields(o.fields, sub or [], structs, w)


@pytest.mark.skipif(KAFKA_SOURCE is None, reason="KAFKA_SOURCE_DIR (a Kafka checkout) not set")
def test_schemas_match_kafkas_json_files():
    files = {}
    for m in every_message():
        if m.api_key is not None:
            continue
        for d in ("group", "clients", "txn"):
            files.setdefault(m.name, [])
            files[m.name].append(_DIRS[d] + m.name + ".json")
    listing = subprocess.run(
        ["git", "-C", KAFKA_SOURCE, "ls-tree", "--name-only", "HEAD", _DIRS["metadata"]],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    by_name = {}
    for path in listing:
        spec = _kafka_json(path)
        by_name[spec["name"]] = spec
    assert set(by_name) <= {m.name for m in schemas.METADATA_RECORDS}, "new metadata records"
    for m in every_message():
        if m.api_key is not None:
            spec = by_name[m.name]
        else:
            spec = None
            for path in files[m.name]:
                try:
                    spec = _kafka_json(path)
                    break
                except subprocess.CalledProcessError:
                    continue
            assert spec is not None, m.name
        structs = {s["name"]: s["fields"] for s in spec.get("commonStructs", [])}
        assert m.name == spec["name"]
        assert m.valid == Versions.parse(spec["validVersions"]), m.name
        assert m.flexible == Versions.parse(spec["flexibleVersions"]), m.name
        assert m.api_key == spec.get("apiKey"), m.name
        _compare_fields(m.fields, spec["fields"], structs, m.name)
