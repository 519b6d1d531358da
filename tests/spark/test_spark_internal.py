"""The SQL functions for Kafka's internal topics (spark_udfs/internal.py) in a real local
SparkSession: ``kafka_offsets_key``, ``kafka_offsets_value``, ``kafka_txn_log``,
``kafka_cluster_metadata``.

Oracles: records built byte by byte here with ``struct`` from Kafka's JSON message layouts,
kafka-python's consumer protocol classes for the group members' subscription and assignment,
and the history each scenario implies, worked out here from the scenario itself.
"""

from __future__ import annotations

import base64
import io
import json
import re
import struct
import uuid
from contextlib import redirect_stdout
from pathlib import Path

import pytest

pyspark = pytest.importorskip("pyspark")

from kafka.protocol.consumer.metadata import (  # noqa: E402
    ConsumerProtocolAssignment as KpAssignment,
)
from kafka.protocol.consumer.metadata import (  # noqa: E402
    ConsumerProtocolSubscription as KpSubscription,
)
from pyspark.sql import functions as F  # noqa: E402

from kafka_format.runtime.write.writer import Message, PartitionWriter, Producer  # noqa: E402
from kafka_format.spark_udfs import register  # noqa: E402
from kafka_format.spark_udfs.internal import (  # noqa: E402
    kafka_offsets_key,
    kafka_offsets_value,
    make_functions,
)

T0 = 1_700_000_000_000


def uv(n: int) -> bytes:
    out = bytearray()
    while True:
        low, n = n & 0x7F, n >> 7
        out.append(low | (0x80 if n else 0))
        if not n:
            return bytes(out)


def i8(v):
    return struct.pack(">b", v)


def i16(v):
    return struct.pack(">h", v)


def i32(v):
    return struct.pack(">i", v)


def i64(v):
    return struct.pack(">q", v)


def s16(text):
    raw = text.encode()
    return i16(len(raw)) + raw


def cs(text):
    if text is None:
        return uv(0)
    raw = text.encode()
    return uv(len(raw) + 1) + raw


def commit_key(group, topic, partition):
    return i16(1) + s16(group) + s16(topic) + i32(partition)


def commit_v1(offset, ts, expire):
    return i16(1) + i64(offset) + s16("") + i64(ts) + i64(expire)


def commit_v3(offset, ts, epoch=0):
    return i16(3) + i64(offset) + i32(epoch) + s16("") + i64(ts)


def commit_v4(offset, ts, epoch=0):
    return i16(4) + i64(offset) + i32(epoch) + cs("") + i64(ts) + b"\x00"


def group_metadata():
    """GroupMetadataValue v3: a consumer-protocol group with one member."""
    subscription = KpSubscription(version=1, topics=["orders"], user_data=None).encode()
    assignment = KpAssignment(
        version=1,
        assigned_partitions=[KpAssignment.TopicPartition(topic="orders", partitions=[0, 1])],
        user_data=None,
    ).encode()
    member = (
        s16("consumer-1")
        + i16(-1)  # groupInstanceId null
        + s16("app")
        + s16("/10.0.0.1")
        + i32(300_000)
        + i32(45_000)
        + i32(len(subscription))
        + subscription
        + i32(len(assignment))
        + assignment
    )
    return (
        i16(3)
        + s16("consumer")
        + i32(3)
        + s16("range")
        + s16("consumer-1")
        + i64(T0)
        + i32(1)
        + member
    )


@pytest.fixture(scope="module")
def kafka(spark):
    registration = register(spark)
    for name, udf in make_functions().items():
        spark.udf.register(name, udf)
    return registration


@pytest.fixture(scope="module")
def offsets_backup(tmp_path_factory):
    """``__consumer_offsets-0`` as a broker writes it; returns (directory, expected history)."""
    log_dir = tmp_path_factory.mktemp("kafka-logs")
    expected = []  # (group, topic, partition, logOffset, committed offset or None)
    with PartitionWriter(log_dir, "__consumer_offsets", 0) as w:
        w.append([Message(i16(2) + s16("orders-app"), group_metadata(), timestamp=T0)])  # 0
        w.append(
            [
                Message(commit_key("orders-app", "orders", 0), commit_v3(10, T0 + 1000)),  # 1
                Message(commit_key("orders-app", "orders", 1), commit_v3(5, T0 + 1000)),  # 2
            ]
        )
        expected += [("orders-app", "orders", 0, 1, 10), ("orders-app", "orders", 1, 2, 5)]
        w.append([Message(commit_key("orders-app", "orders", 0), commit_v1(20, T0 + 2000, -1))])
        expected.append(("orders-app", "orders", 0, 3, 20))
        producer = Producer(producer_id=7000)
        w.append(
            [Message(commit_key("orders-app", "orders", 1), commit_v3(99, T0 + 3000))],
            producer=producer,
            transactional=True,
        )  # 4, aborted at 5: never applied
        w.abort(producer)
        w.append([Message(commit_key("orders-app", "orders", 1), commit_v4(7, T0 + 4000, 2))])
        expected.append(("orders-app", "orders", 1, 6, 7))
        w.append([Message(commit_key("orders-app", "orders", 0), None)])  # 7: deleted
        expected.append(("orders-app", "orders", 0, 7, None))
        # a KIP-848 group (type 3), a type newer than the schema, a damaged value
        w.append([Message(i16(3) + s16("new-group"), i16(0) + i32(4) + b"\x00")])  # 8
        w.append([Message(i16(16) + s16("new-group"), i16(0) + b"\x00")])  # 9
        w.append([Message(commit_key("orders-app", "orders", 2), b"\x00\x03\x00")])  # 10
    return log_dir / "__consumer_offsets-0", expected


def test_committed_offset_history_in_sql(spark, kafka, offsets_backup):
    path, expected = offsets_backup
    (
        spark.read.format("kafka_log")
        .option("isolationLevel", "read_committed")
        .load(str(path))
        .createOrReplaceTempView("offsets_log")
    )
    rows = spark.sql(
        """
        SELECT k.group, k.topic, k.partition, offset AS logOffset,
               v.offset AS committed, v.tombstone AS deleted, v.leaderEpoch,
               v.commitTimestamp, v.version, v.error
        FROM (SELECT kafka_offsets_key(key) AS k, kafka_offsets_value(key, value) AS v, offset
              FROM offsets_log)
        WHERE k.recordType IN (0, 1)
        ORDER BY k.topic, k.partition, logOffset
        """
    ).collect()
    good = [r for r in rows if r.error is None]
    assert [(r.group, r.topic, r.partition, r.logOffset, r.committed) for r in good] == sorted(
        expected, key=lambda e: (e[1], e[2], e[3])
    )
    by_offset = {r.logOffset: r for r in rows}
    assert by_offset[7].deleted is True and by_offset[7].version is None
    assert (by_offset[3].version, by_offset[3].leaderEpoch) == (1, -1)
    assert (by_offset[6].version, by_offset[6].leaderEpoch) == (4, 2)
    assert by_offset[6].commitTimestamp == T0 + 4000
    assert 4 not in by_offset  # the aborted TxnOffsetCommit
    damaged = by_offset[10]
    assert damaged.committed is None
    assert damaged.error.startswith("Could not read record with version 3 from value's buffer")


def test_every_record_type_and_group_members(spark, kafka, offsets_backup):
    path, _ = offsets_backup
    df = spark.read.format("kafka_log").load(str(path))
    rows = {
        r.offset: r
        for r in df.select(
            "offset",
            kafka_offsets_key("key").alias("k"),
            kafka_offsets_value("key", "value").alias("v"),
        ).collect()
    }
    assert len(rows) == 10  # 11 offsets minus the ABORT marker
    group = rows[0]
    assert (group.k.recordType, group.k.recordTypeName, group.k.group) == (
        2,
        "GroupMetadata",
        "orders-app",
    )
    assert group.k.json == '{"type":"2","data":{"group":"orders-app"}}'
    assert (group.v.protocolType, group.v.generation, group.v.protocol) == ("consumer", 3, "range")
    assert group.v.currentStateTimestamp == T0
    [member] = group.v.members
    assert (member.memberId, member.groupInstanceId, member.sessionTimeout) == (
        "consumer-1",
        None,
        45_000,
    )
    assert member.subscribedTopics == ["orders"]
    assert [(p.topic, p.partitions) for p in member.assignedPartitions] == [("orders", [0, 1])]
    payload = json.loads(group.v.json)
    assert payload["version"] == "3"
    assert payload["data"]["members"][0]["subscription"]["topics"] == ["orders"]

    kip848 = rows[8]
    assert (kip848.k.recordTypeName, kip848.k.group) == ("ConsumerGroupMetadata", "new-group")
    assert kip848.v.json == '{"version":"0","data":{"epoch":4}}'
    unknown = rows[9]
    assert (unknown.k.recordType, unknown.k.recordTypeName, unknown.k.json) == (16, None, None)
    assert unknown.v.error == "Unknown record type 16"
    aborted = rows[4]  # read_uncommitted (the default) shows the aborted commit
    assert (aborted.k.partition, aborted.v.offset) == (1, 99)


def test_transaction_log(spark, kafka):
    key = i16(0) + s16("payments-tx")
    v0 = (
        i16(0)
        + i64(9001)
        + i16(3)
        + i32(60_000)
        + i8(1)
        + i32(1)
        + s16("payments")
        + i32(2)
        + i32(0)
        + i32(3)
        + i64(T0 + 500)
        + i64(T0)
    )
    v1 = (
        i16(1)
        + i64(9001)
        + i16(4)
        + i32(60_000)
        + i8(4)
        + uv(0)  # partitions: null
        + i64(T0 + 900)
        + i64(-1)
        + uv(2)
        + uv(0)
        + uv(8)
        + i64(9000)
        + uv(2)
        + uv(2)
        + i16(2)
    )
    df = spark.createDataFrame(
        [(key, v0), (key, v1), (key, None), (i16(1) + s16("x"), v0), (key, v0[:9]), (None, v0)],
        "key binary, value binary",
    )
    rows = df.select(F.expr("kafka_txn_log(key, value)").alias("t")).collect()
    first, second, tombstone, unknown, damaged, null = (r.t for r in rows)
    assert (first.transactionalId, first.version, first.producerId, first.producerEpoch) == (
        "payments-tx",
        0,
        9001,
        3,
    )
    assert (first.transactionStatus, first.transactionState) == (1, "Ongoing")
    assert [(p.topic, p.partitionIds) for p in first.transactionPartitions] == [
        ("payments", [0, 3])
    ]
    assert (first.previousProducerId, first.clientTransactionVersion) == (-1, 0)
    assert first.keyJson == '{"type":"0","data":{"transactionalId":"payments-tx"}}'
    assert json.loads(first.valueJson)["data"]["transactionStatus"] == "Ongoing"
    assert (second.version, second.transactionState, second.transactionPartitions) == (
        1,
        "CompleteCommit",
        None,
    )
    assert (second.previousProducerId, second.nextProducerId) == (9000, -1)
    assert second.clientTransactionVersion == 2
    assert second.transactionLastUpdateTimestampMs == T0 + 900
    assert (tombstone.tombstone, tombstone.producerId, tombstone.valueJson) == (
        True,
        None,
        "<DELETE>",
    )
    assert unknown.error == "Unknown record type 1" and unknown.transactionalId is None
    assert damaged.error.startswith("Could not read record with version 0 from value's buffer")
    assert null is None


def test_cluster_metadata(spark, kafka):
    topic_id = uuid.UUID("4f1e5c2a-9b3d-4c8e-a7f6-0123456789ab")
    topic_text = base64.urlsafe_b64encode(topic_id.bytes).decode().rstrip("=")
    values = [
        uv(1) + uv(2) + uv(0) + cs("orders") + topic_id.bytes + b"\x00",  # TopicRecord
        # PartitionChangeRecord v0 with tagged isr and leader
        uv(1)
        + uv(5)
        + uv(0)
        + i32(0)
        + topic_id.bytes
        + uv(2)
        + uv(0)
        + uv(9)
        + uv(3)
        + i32(1)
        + i32(2)
        + uv(1)
        + uv(4)
        + i32(2),
        uv(1) + uv(12) + uv(0) + cs("metadata.version") + i16(21) + b"\x00",  # FeatureLevel
        uv(1) + uv(99) + uv(0) + b"\x01\x02",  # an apiKey newer than the schema
        uv(0) + uv(2) + uv(0),  # frame version 0
        None,
    ]
    df = spark.createDataFrame([(v,) for v in values], "value binary")
    rows = df.select(F.expr("kafka_cluster_metadata(value)").alias("m")).collect()
    topic, change, feature, unknown, old_frame, null = (r.m for r in rows)
    assert (topic.frameVersion, topic.apiKey, topic.type, topic.version) == (
        1,
        2,
        "TOPIC_RECORD",
        0,
    )
    assert json.loads(topic.data) == {"name": "orders", "topicId": topic_text}
    assert change.type == "PARTITION_CHANGE_RECORD"
    assert json.loads(change.data) == {
        "partitionId": 0,
        "topicId": topic_text,
        "isr": [1, 2],
        "leader": 2,
    }
    assert json.loads(feature.data) == {"name": "metadata.version", "featureLevel": 21}
    assert (unknown.type, unknown.data, unknown.error) == (
        "UNKNOWN(99)",
        None,
        "unknown metadata record type 99",
    )
    assert old_frame.error.startswith("Could not deserialize metadata record with frame version 0")
    assert null is None
    # SQL over the JSON data
    names = (
        df.select(F.expr("kafka_cluster_metadata(value)").alias("m"))
        .where("m.type = 'TOPIC_RECORD'")
        .select(F.get_json_object("m.data", "$.name").alias("name"))
        .collect()
    )
    assert [r.name for r in names] == ["orders"]


# --- the Spark part of docs/internal-topics.md's worked example, run as written ---------------

DOC = Path(__file__).resolve().parents[2] / "docs" / "internal-topics.md"


def doc_blocks(heading: str) -> list[tuple[str, str]]:
    """The fenced code blocks (language, text) of one section of the docs, in order."""
    text = DOC.read_text()
    start = text.index(heading)
    ends = [i for i in (text.find("\n### ", start + 1), text.find("\n## ", start + 1)) if i > 0]
    section = text[start : min(ends) if ends else None]
    return re.findall(r"```(\w*)\n(.*?)```", section, re.S)


def test_docs_spark_example(spark, kafka, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    [(_, code)] = doc_blocks("### A sample backup")
    exec(compile(code, "docs: a sample backup", "exec"), {})
    (_, history), (_, table), (_, latest) = doc_blocks("### With Spark")[:3]
    # Spark's JVM keeps the directory it started in: make the docs' relative path absolute
    backup = f'"{tmp_path / "backup"}/'
    out = io.StringIO()
    with redirect_stdout(out):
        exec(compile(history.replace('"backup/', backup), "docs: Spark", "exec"), {"spark": spark})
    assert out.getvalue().strip().splitlines() == table.strip().splitlines()
    out = io.StringIO()
    with redirect_stdout(out):
        exec(compile(latest, "docs: Spark, latest", "exec"), {"spark": spark})
    printed = [line[2:] for line in latest.splitlines() if line.startswith("# ")]
    assert out.getvalue().strip().splitlines() == printed
