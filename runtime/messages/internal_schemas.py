"""The record schemas of Kafka's internal topics, transcribed by hand from Kafka's JSON files.

Transcribed from apache/kafka (the state of trunk in late 2024, Kafka 3.9 / 4.0), field by
field in the JSON's order, with its names, types, ``versions``, ``nullableVersions``,
``taggedVersions``, ``tag`` and ``default``; ``about`` texts are left out. The files:

* ``__consumer_offsets``: ``group-coordinator/src/main/resources/common/message/`` —
  ``OffsetCommitKey``/``Value``, ``GroupMetadataKey``/``Value``, the KIP-848 consumer group
  records ``ConsumerGroup*Key``/``Value`` and the KIP-932 share group records
  ``ShareGroup*Key``/``Value``. A key's version is the record type (``validVersions`` of
  each key file); ``CoordinatorRecordSerde`` picks the value schema by it.
* the consumer protocol embedded in ``GroupMetadataValue`` members:
  ``clients/src/main/resources/common/message/ConsumerProtocolSubscription``/``Assignment``.
* ``__transaction_state``: ``transaction-coordinator/src/main/resources/common/message/
  TransactionLogKey``/``Value``.
* ``__cluster_metadata``: ``metadata/src/main/resources/common/metadata/*.json`` (each with
  its ``apiKey``), and the KRaft control records of ``clients/.../common/message/``:
  ``LeaderChangeMessage``, ``SnapshotHeaderRecord``, ``SnapshotFooterRecord``,
  ``KRaftVersionRecord``, ``VotersRecord``.

Kafka's build generates Java from these files; we cannot fetch them at build time, so this
table is the copy, and ``tests/messages/test_internal_topics.py`` compares it with the JSON files
when a Kafka checkout is at hand (``KAFKA_SOURCE_DIR``).
"""

from __future__ import annotations

from .kafka_message import field, message
from .metadata_schemas import (
    KRAFT_CONTROL_RECORDS,
    METADATA_RECORDS,
    METADATA_RECORDS_BY_KEY,
    metadata_type_name,
)
from .offsets_schemas import (
    CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT_KEY,
    CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT_VALUE,
    CONSUMER_GROUP_MEMBER_METADATA_KEY,
    CONSUMER_GROUP_MEMBER_METADATA_VALUE,
    CONSUMER_GROUP_METADATA_KEY,
    CONSUMER_GROUP_METADATA_VALUE,
    CONSUMER_GROUP_PARTITION_METADATA_KEY,
    CONSUMER_GROUP_PARTITION_METADATA_VALUE,
    CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER_KEY,
    CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER_VALUE,
    CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA_KEY,
    CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA_VALUE,
    CONSUMER_PROTOCOL_ASSIGNMENT,
    CONSUMER_PROTOCOL_SUBSCRIPTION,
    GROUP_METADATA_KEY,
    GROUP_METADATA_VALUE,
    OFFSET_COMMIT_KEY,
    OFFSET_COMMIT_VALUE,
    OFFSETS_RECORD_TYPES,
    SHARE_GROUP_CURRENT_MEMBER_ASSIGNMENT_KEY,
    SHARE_GROUP_CURRENT_MEMBER_ASSIGNMENT_VALUE,
    SHARE_GROUP_MEMBER_METADATA_KEY,
    SHARE_GROUP_MEMBER_METADATA_VALUE,
    SHARE_GROUP_METADATA_KEY,
    SHARE_GROUP_METADATA_VALUE,
    SHARE_GROUP_PARTITION_METADATA_KEY,
    SHARE_GROUP_PARTITION_METADATA_VALUE,
    SHARE_GROUP_STATE_PARTITION_METADATA_KEY,
    SHARE_GROUP_STATE_PARTITION_METADATA_VALUE,
    SHARE_GROUP_TARGET_ASSIGNMENT_MEMBER_KEY,
    SHARE_GROUP_TARGET_ASSIGNMENT_MEMBER_VALUE,
    SHARE_GROUP_TARGET_ASSIGNMENT_METADATA_KEY,
    SHARE_GROUP_TARGET_ASSIGNMENT_METADATA_VALUE,
)

__all__ = [
    "CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT_KEY",
    "CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT_VALUE",
    "CONSUMER_GROUP_MEMBER_METADATA_KEY",
    "CONSUMER_GROUP_MEMBER_METADATA_VALUE",
    "CONSUMER_GROUP_METADATA_KEY",
    "CONSUMER_GROUP_METADATA_VALUE",
    "CONSUMER_GROUP_PARTITION_METADATA_KEY",
    "CONSUMER_GROUP_PARTITION_METADATA_VALUE",
    "CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER_KEY",
    "CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER_VALUE",
    "CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA_KEY",
    "CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA_VALUE",
    "CONSUMER_PROTOCOL_ASSIGNMENT",
    "CONSUMER_PROTOCOL_SUBSCRIPTION",
    "GROUP_METADATA_KEY",
    "GROUP_METADATA_VALUE",
    "KRAFT_CONTROL_RECORDS",
    "METADATA_RECORDS",
    "METADATA_RECORDS_BY_KEY",
    "OFFSETS_RECORD_TYPES",
    "OFFSET_COMMIT_KEY",
    "OFFSET_COMMIT_VALUE",
    "SHARE_GROUP_CURRENT_MEMBER_ASSIGNMENT_KEY",
    "SHARE_GROUP_CURRENT_MEMBER_ASSIGNMENT_VALUE",
    "SHARE_GROUP_MEMBER_METADATA_KEY",
    "SHARE_GROUP_MEMBER_METADATA_VALUE",
    "SHARE_GROUP_METADATA_KEY",
    "SHARE_GROUP_METADATA_VALUE",
    "SHARE_GROUP_PARTITION_METADATA_KEY",
    "SHARE_GROUP_PARTITION_METADATA_VALUE",
    "SHARE_GROUP_STATE_PARTITION_METADATA_KEY",
    "SHARE_GROUP_STATE_PARTITION_METADATA_VALUE",
    "SHARE_GROUP_TARGET_ASSIGNMENT_MEMBER_KEY",
    "SHARE_GROUP_TARGET_ASSIGNMENT_MEMBER_VALUE",
    "SHARE_GROUP_TARGET_ASSIGNMENT_METADATA_KEY",
    "SHARE_GROUP_TARGET_ASSIGNMENT_METADATA_VALUE",
    "TRANSACTION_LOG_KEY",
    "TRANSACTION_LOG_VALUE",
    "TRANSACTION_STATES",
    "metadata_type_name",
]

# --- __transaction_state --------------------------------------------------------------------

TRANSACTION_LOG_KEY = message(
    "TransactionLogKey", "0", "none", [field("TransactionalId", "string", "0")]
)

TRANSACTION_LOG_VALUE = message(
    "TransactionLogValue",
    "0-1",
    "1+",
    [
        field("ProducerId", "int64", "0+"),
        field("PreviousProducerId", "int64", tagged="1+", tag=0, default=-1),
        field("NextProducerId", "int64", tagged="1+", tag=1, default=-1),
        field("ProducerEpoch", "int16", "0+"),
        field("TransactionTimeoutMs", "int32", "0+"),
        field("TransactionStatus", "int8", "0+"),
        field(
            "TransactionPartitions",
            "[]PartitionsSchema",
            "0+",
            nullable="0+",
            fields=[field("Topic", "string", "0+"), field("PartitionIds", "[]int32", "0+")],
        ),
        field("TransactionLastUpdateTimestampMs", "int64", "0+"),
        field("TransactionStartTimestampMs", "int64", "0+"),
        field("ClientTransactionVersion", "int16", tagged="1+", tag=2, default=0),
    ],
)

#: ``TransactionState`` ids and names (``TransactionMetadata.scala``).
TRANSACTION_STATES: dict[int, str] = {
    0: "Empty",
    1: "Ongoing",
    2: "PrepareCommit",
    3: "PrepareAbort",
    4: "CompleteCommit",
    5: "CompleteAbort",
    6: "Dead",
    7: "PrepareEpochFence",
}
