"""SQL functions for Kafka's internal topics: ``__consumer_offsets``, ``__transaction_state``
and ``__cluster_metadata`` (Arrow UDFs over the ``key`` and ``value`` columns).

Rebuild a consumer group's committed-offset history from a backup of ``__consumer_offsets``::

    register(spark)
    (spark.read.format("kafka_log")
        .option("isolationLevel", "read_committed")   # aborted TxnOffsetCommits never applied
        .load("/backup/kafka-logs/__consumer_offsets-*")
        .createOrReplaceTempView("offsets_log"))
    spark.sql(\"\"\"
        SELECT k.group, k.topic, k.partition, offset AS logOffset,
               v.offset AS committed, v.tombstone AS deleted,
               timestamp_millis(v.commitTimestamp) AS committedAt
        FROM (SELECT kafka_offsets_key(key) AS k, kafka_offsets_value(key, value) AS v, offset
              FROM offsets_log)
        WHERE k.recordType IN (0, 1) AND k.group = 'orders-app'
        ORDER BY k.topic, k.partition, logOffset
    \"\"\")

==========================================  =============================================
function                                    result
==========================================  =============================================
``kafka_offsets_key(key)``                  ``struct<recordType, recordTypeName, group,
                                            topic, partition, memberId, json, error>``:
                                            the key of a ``__consumer_offsets`` record
                                            (``group`` also for KIP-848 / share group
                                            records; ``json`` as kafka-dump-log prints it)
``kafka_offsets_value(key, value)``         ``struct<recordType, version, tombstone,
                                            offset, leaderEpoch, metadata,
                                            commitTimestamp, expireTimestamp,
                                            protocolType, generation, protocol, leader,
                                            currentStateTimestamp, members, json,
                                            error>``: offset commits and classic group
                                            metadata as columns (members with their
                                            subscribed topics and assigned partitions
                                            for consumer-protocol groups), every record
                                            type in ``json``; a null value is a tombstone
``kafka_txn_log(key, value)``               ``struct<transactionalId, version, tombstone,
                                            producerId, previousProducerId,
                                            nextProducerId, producerEpoch,
                                            transactionTimeoutMs, transactionStatus,
                                            transactionState, transactionPartitions,
                                            transactionLastUpdateTimestampMs,
                                            transactionStartTimestampMs,
                                            clientTransactionVersion, keyJson,
                                            valueJson, error>``: a ``__transaction_state``
                                            record
``kafka_cluster_metadata(value)``           ``struct<frameVersion, apiKey, type, version,
                                            data, error>``: a ``__cluster_metadata``
                                            record; ``type`` is MetadataRecordType's name
                                            (``TOPIC_RECORD``), ``data`` its fields as
                                            kafka-dump-log's JSON (``get_json_object`` /
                                            ``from_json`` take it further)
==========================================  =============================================

Timestamps are epoch milliseconds as Kafka stores them (``timestamp_millis(...)`` turns them
into timestamps); -1 means "none", as in Kafka. The functions never fail a query: a record
that does not decode gives a row with ``error`` set. A null key (or, for
``kafka_cluster_metadata``, a null value) gives null.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pyarrow as pa
from pyspark.sql.functions import arrow_udf
from pyspark.sql.pandas.types import to_arrow_type
from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    BooleanType,
    DataType,
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
)

from ..runtime.messages.internal_topics import (
    cluster_metadata_data_json,
    decode_cluster_metadata_record,
    decode_offsets_key,
    decode_offsets_record,
    decode_transaction_log_record,
    offsets_json,
    transaction_log_json,
)
from ..runtime.messages.kafka_message import MessageDecodeError
from ._lazy import lazy_functions

_INT, _LONG, _STRING, _BOOL = IntegerType(), LongType(), StringType(), BooleanType()


def _struct(*fields: tuple[str, DataType]) -> StructType:
    return StructType([StructField(name, kind) for name, kind in fields])


_TOPIC_PARTITIONS = ArrayType(_struct(("topic", _STRING), ("partitions", ArrayType(_INT))))

OFFSETS_KEY_TYPE = _struct(
    ("recordType", _INT),
    ("recordTypeName", _STRING),
    ("group", _STRING),
    ("topic", _STRING),
    ("partition", _INT),
    ("memberId", _STRING),
    ("json", _STRING),
    ("error", _STRING),
)

MEMBER_TYPE = _struct(
    ("memberId", _STRING),
    ("groupInstanceId", _STRING),
    ("clientId", _STRING),
    ("clientHost", _STRING),
    ("rebalanceTimeout", _INT),
    ("sessionTimeout", _INT),
    ("subscription", BinaryType()),
    ("assignment", BinaryType()),
    ("subscribedTopics", ArrayType(_STRING)),
    ("assignedPartitions", _TOPIC_PARTITIONS),
)

OFFSETS_VALUE_TYPE = _struct(
    ("recordType", _INT),
    ("version", _INT),
    ("tombstone", _BOOL),
    ("offset", _LONG),
    ("leaderEpoch", _INT),
    ("metadata", _STRING),
    ("commitTimestamp", _LONG),
    ("expireTimestamp", _LONG),
    ("protocolType", _STRING),
    ("generation", _INT),
    ("protocol", _STRING),
    ("leader", _STRING),
    ("currentStateTimestamp", _LONG),
    ("members", ArrayType(MEMBER_TYPE)),
    ("json", _STRING),
    ("error", _STRING),
)

TXN_LOG_TYPE = _struct(
    ("transactionalId", _STRING),
    ("version", _INT),
    ("tombstone", _BOOL),
    ("producerId", _LONG),
    ("previousProducerId", _LONG),
    ("nextProducerId", _LONG),
    ("producerEpoch", _INT),
    ("transactionTimeoutMs", _INT),
    ("transactionStatus", _INT),
    ("transactionState", _STRING),
    (
        "transactionPartitions",
        ArrayType(_struct(("topic", _STRING), ("partitionIds", ArrayType(_INT)))),
    ),
    ("transactionLastUpdateTimestampMs", _LONG),
    ("transactionStartTimestampMs", _LONG),
    ("clientTransactionVersion", _INT),
    ("keyJson", _STRING),
    ("valueJson", _STRING),
    ("error", _STRING),
)

CLUSTER_METADATA_TYPE = _struct(
    ("frameVersion", _INT),
    ("apiKey", _INT),
    ("type", _STRING),
    ("version", _INT),
    ("data", _STRING),
    ("error", _STRING),
)

_OFFSET_COMMIT_FIELDS = (
    "offset",
    "leaderEpoch",
    "metadata",
    "commitTimestamp",
    "expireTimestamp",
)
_GROUP_FIELDS = ("protocolType", "generation", "protocol", "leader", "currentStateTimestamp")
_TXN_FIELDS = (
    "producerId",
    "previousProducerId",
    "nextProducerId",
    "producerEpoch",
    "transactionTimeoutMs",
    "transactionStatus",
    "transactionState",
    "transactionPartitions",
    "transactionLastUpdateTimestampMs",
    "transactionStartTimestampMs",
    "clientTransactionVersion",
)


def _bytes(scalar: pa.Scalar) -> bytes | None:
    return scalar.as_py() if scalar.is_valid else None


def _error(exc: Exception) -> str:
    return exc.reason if isinstance(exc, MessageDecodeError) else f"{type(exc).__name__}: {exc}"


# --- row functions (plain Python: also usable without Spark) --------------------------------


def offsets_key_row(key: bytes | None) -> dict[str, Any] | None:
    """One ``kafka_offsets_key`` result."""
    if key is None:
        return None
    row: dict[str, Any] = {}
    try:
        decoded = decode_offsets_key(key)
        row["recordType"] = decoded["recordType"]
        row["recordTypeName"] = decoded["recordTypeName"]
        fields = decoded["key"] or {}
        row["group"] = fields.get("group", fields.get("groupId"))
        row["topic"] = fields.get("topic")
        row["partition"] = fields.get("partition")
        row["memberId"] = fields.get("memberId")
        if decoded["key"] is not None:
            texts = offsets_json(key, None)
            row["json"] = texts[0] if texts else None
    except Exception as exc:  # a function over data never fails the query: see `error`
        row["error"] = _error(exc)
    return row


def offsets_value_row(key: bytes | None, value: bytes | None) -> dict[str, Any] | None:
    """One ``kafka_offsets_value`` result."""
    if key is None:
        return None
    row: dict[str, Any] = {"tombstone": value is None}
    try:
        decoded = decode_offsets_record(key, value)
        row["recordType"] = decoded["recordType"]
        row["version"] = decoded["valueVersion"]
        fields = decoded["value"]
        if decoded["recordTypeName"] == "OffsetCommit" and fields is not None:
            row.update({name: fields[name] for name in _OFFSET_COMMIT_FIELDS})
        elif decoded["recordTypeName"] == "GroupMetadata" and fields is not None:
            row.update({name: fields[name] for name in _GROUP_FIELDS})
            row["members"] = [_member_row(m) for m in fields["members"]]
        texts = offsets_json(key, value)
        if texts is not None:
            row["json"] = texts[1]
        else:
            row["error"] = f"Unknown record type {decoded['recordType']}"
    except Exception as exc:  # a function over data never fails the query: see `error`
        row["error"] = _error(exc)
    return row


def _member_row(member: dict[str, Any]) -> dict[str, Any]:
    row = {name: member[name] for name in MEMBER_TYPE.fieldNames() if name in member}
    subscription = member.get("consumerSubscription")
    assignment = member.get("consumerAssignment")
    if subscription is not None:
        row["subscribedTopics"] = subscription["topics"]
    if assignment is not None:
        row["assignedPartitions"] = assignment["assignedPartitions"]
    return row


def txn_log_row(key: bytes | None, value: bytes | None) -> dict[str, Any] | None:
    """One ``kafka_txn_log`` result."""
    if key is None:
        return None
    row: dict[str, Any] = {"tombstone": value is None}
    try:
        decoded = decode_transaction_log_record(key, value)
        row["version"] = decoded["valueVersion"]
        if decoded["key"] is not None:
            row["transactionalId"] = decoded["key"]["transactionalId"]
        if decoded["value"] is not None:
            row.update({name: decoded["value"][name] for name in _TXN_FIELDS})
        texts = transaction_log_json(key, value)
        if texts is not None:
            row["keyJson"], row["valueJson"] = texts
        else:
            row["error"] = f"Unknown record type {decoded['keyVersion']}"
    except Exception as exc:  # a function over data never fails the query: see `error`
        row["error"] = _error(exc)
    return row


def cluster_metadata_row(value: bytes | None) -> dict[str, Any] | None:
    """One ``kafka_cluster_metadata`` result."""
    if value is None:
        return None
    row: dict[str, Any] = {}
    try:
        decoded = decode_cluster_metadata_record(value)
        for name in ("frameVersion", "apiKey", "type", "version"):
            row[name] = decoded[name]
        row["data"] = cluster_metadata_data_json(decoded)
        if row["data"] is None:
            row["error"] = f"unknown metadata record type {decoded['apiKey']}"
    except Exception as exc:  # a function over data never fails the query: see `error`
        row["error"] = _error(exc)
    return row


# --- Arrow UDFs ------------------------------------------------------------------------------


def _column(rows: list[dict[str, Any] | None], spark_type: StructType) -> pa.Array:
    return pa.array(rows, type=to_arrow_type(spark_type))


def make_functions() -> dict[str, Callable]:
    """Every internal-topic SQL function as an Arrow UDF, by its SQL name."""

    def kafka_offsets_key(keys: pa.Array) -> pa.Array:
        return _column([offsets_key_row(_bytes(k)) for k in keys], OFFSETS_KEY_TYPE)

    def kafka_offsets_value(keys: pa.Array, values: pa.Array) -> pa.Array:
        rows = [offsets_value_row(_bytes(k), _bytes(v)) for k, v in zip(keys, values, strict=True)]
        return _column(rows, OFFSETS_VALUE_TYPE)

    def kafka_txn_log(keys: pa.Array, values: pa.Array) -> pa.Array:
        rows = [txn_log_row(_bytes(k), _bytes(v)) for k, v in zip(keys, values, strict=True)]
        return _column(rows, TXN_LOG_TYPE)

    def kafka_cluster_metadata(values: pa.Array) -> pa.Array:
        return _column([cluster_metadata_row(_bytes(v)) for v in values], CLUSTER_METADATA_TYPE)

    return {
        "kafka_offsets_key": arrow_udf(kafka_offsets_key, OFFSETS_KEY_TYPE),
        "kafka_offsets_value": arrow_udf(kafka_offsets_value, OFFSETS_VALUE_TYPE),
        "kafka_txn_log": arrow_udf(kafka_txn_log, TXN_LOG_TYPE),
        "kafka_cluster_metadata": arrow_udf(kafka_cluster_metadata, CLUSTER_METADATA_TYPE),
    }


#: The functions for the DataFrame API: ``df.select(kafka_offsets_key("key"))``; built on first
#: use for the kind of session in use (classic or Connect), so importing needs no session.
_DEFAULTS = lazy_functions(
    make_functions,
    ("kafka_offsets_key", "kafka_offsets_value", "kafka_txn_log", "kafka_cluster_metadata"),
)
kafka_offsets_key = _DEFAULTS["kafka_offsets_key"]
kafka_offsets_value = _DEFAULTS["kafka_offsets_value"]
kafka_txn_log = _DEFAULTS["kafka_txn_log"]
kafka_cluster_metadata = _DEFAULTS["kafka_cluster_metadata"]

__all__ = [
    "CLUSTER_METADATA_TYPE",
    "OFFSETS_KEY_TYPE",
    "OFFSETS_VALUE_TYPE",
    "TXN_LOG_TYPE",
    "cluster_metadata_row",
    "kafka_cluster_metadata",
    "kafka_offsets_key",
    "kafka_offsets_value",
    "kafka_txn_log",
    "make_functions",
    "offsets_key_row",
    "offsets_value_row",
    "txn_log_row",
]
