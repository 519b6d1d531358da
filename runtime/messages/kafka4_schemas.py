"""The record schemas of Kafka's tiered-storage and share-group internal topics, transcribed by
hand from Kafka's JSON files, as ``internal_schemas`` does for the older internal topics.

Transcribed from apache/kafka (trunk of October 2024, 1eb7644, the layout Kafka 4.0 ships),
field by field in the JSON's order, with its names, types, ``versions``,
``nullableVersions`` and ``default``; ``about`` texts are left out. The files:

* ``__remote_log_metadata`` (``TopicBasedRemoteLogMetadataManager``):
  ``storage/src/main/resources/message/`` — ``RemoteLogSegmentMetadataRecord`` (apiKey 0),
  ``RemoteLogSegmentMetadataUpdateRecord`` (1), ``RemotePartitionDeleteMetadataRecord`` (2),
  ``RemoteLogSegmentMetadataSnapshotRecord`` (3). ``RemoteLogMetadataSerde`` frames them as
  ``__cluster_metadata`` is framed (``AbstractApiMessageSerde``: unsigned varints frame
  version 1, apiKey, version, then the message).
* ``__share_group_state`` (KIP-932): ``share-coordinator/src/main/resources/common/message/``
  — ``ShareSnapshotKey`` / ``ShareSnapshotValue`` (record type 0) and ``ShareUpdateKey`` /
  ``ShareUpdateValue`` (record type 1), framed by ``CoordinatorRecordSerde`` as
  ``__consumer_offsets`` is (a key's int16 version is its record type; it picks the value
  schema). Kafka marks these files "KIP-932 is in development. This schema is subject to
  non-backwards-compatible changes."

The states are the Java enums': ``RemoteLogSegmentState`` and ``RemotePartitionDeleteState``
(``storage/api/.../remote/storage/``), and the delivery states the ``about`` text of
``StateBatch.DeliveryState`` names.
"""

from __future__ import annotations

from .kafka_message import Field, Message, field, message

__all__ = [
    "DELIVERY_STATES",
    "REMOTE_LOG_METADATA_RECORDS_BY_KEY",
    "REMOTE_LOG_SEGMENT_METADATA_RECORD",
    "REMOTE_LOG_SEGMENT_METADATA_SNAPSHOT_RECORD",
    "REMOTE_LOG_SEGMENT_METADATA_UPDATE_RECORD",
    "REMOTE_LOG_SEGMENT_STATES",
    "REMOTE_PARTITION_DELETE_METADATA_RECORD",
    "REMOTE_PARTITION_DELETE_STATES",
    "SHARE_GROUP_STATE_RECORD_TYPES",
    "SHARE_SNAPSHOT_KEY",
    "SHARE_SNAPSHOT_VALUE",
    "SHARE_UPDATE_KEY",
    "SHARE_UPDATE_VALUE",
]

# --- __remote_log_metadata ------------------------------------------------------------------


def _topic_id_partition() -> Field:
    return field(
        "TopicIdPartition",
        "TopicIdPartitionEntry",
        "0+",
        fields=[
            field("Name", "string", "0+"),
            field("Id", "uuid", "0+"),
            field("Partition", "int32", "0+"),
        ],
    )


def _remote_log_segment_id() -> Field:
    return field(
        "RemoteLogSegmentId",
        "RemoteLogSegmentIdEntry",
        "0+",
        fields=[_topic_id_partition(), field("Id", "uuid", "0+")],
    )


def _segment_leader_epochs() -> Field:
    return field(
        "SegmentLeaderEpochs",
        "[]SegmentLeaderEpochEntry",
        "0+",
        fields=[field("LeaderEpoch", "int32", "0+"), field("Offset", "int64", "0+")],
    )


def _custom_metadata() -> Field:
    return field("CustomMetadata", "bytes", "0+", nullable="0+", default="null")


REMOTE_LOG_SEGMENT_METADATA_RECORD = message(
    "RemoteLogSegmentMetadataRecord",
    "0",
    "0+",
    [
        _remote_log_segment_id(),
        field("StartOffset", "int64", "0+"),
        field("EndOffset", "int64", "0+"),
        field("BrokerId", "int32", "0+"),
        field("MaxTimestampMs", "int64", "0+"),
        field("EventTimestampMs", "int64", "0+"),
        _segment_leader_epochs(),
        field("SegmentSizeInBytes", "int32", "0+"),
        _custom_metadata(),
        field("RemoteLogSegmentState", "int8", "0+"),
    ],
    api_key=0,
)

REMOTE_LOG_SEGMENT_METADATA_UPDATE_RECORD = message(
    "RemoteLogSegmentMetadataUpdateRecord",
    "0",
    "0+",
    [
        _remote_log_segment_id(),
        field("BrokerId", "int32", "0+"),
        field("EventTimestampMs", "int64", "0+"),
        _custom_metadata(),
        field("RemoteLogSegmentState", "int8", "0+"),
    ],
    api_key=1,
)

REMOTE_PARTITION_DELETE_METADATA_RECORD = message(
    "RemotePartitionDeleteMetadataRecord",
    "0",
    "0+",
    [
        _topic_id_partition(),
        field("BrokerId", "int32", "0+"),
        field("EventTimestampMs", "int64", "0+"),
        field("RemotePartitionDeleteState", "int8", "0+"),
    ],
    api_key=2,
)

REMOTE_LOG_SEGMENT_METADATA_SNAPSHOT_RECORD = message(
    "RemoteLogSegmentMetadataSnapshotRecord",
    "0",
    "0+",
    [
        field("SegmentId", "uuid", "0+"),
        field("StartOffset", "int64", "0+"),
        field("EndOffset", "int64", "0+"),
        field("BrokerId", "int32", "0+"),
        field("MaxTimestampMs", "int64", "0+"),
        field("EventTimestampMs", "int64", "0+"),
        _segment_leader_epochs(),
        field("SegmentSizeInBytes", "int32", "0+"),
        _custom_metadata(),
        field("RemoteLogSegmentState", "int8", "0+"),
    ],
    api_key=3,
)

#: apiKey -> schema (the storage module's generated ``MetadataRecordType``).
REMOTE_LOG_METADATA_RECORDS_BY_KEY: dict[int, Message] = {
    m.api_key: m  # type: ignore[misc]
    for m in (
        REMOTE_LOG_SEGMENT_METADATA_RECORD,
        REMOTE_LOG_SEGMENT_METADATA_UPDATE_RECORD,
        REMOTE_PARTITION_DELETE_METADATA_RECORD,
        REMOTE_LOG_SEGMENT_METADATA_SNAPSHOT_RECORD,
    )
}

#: ``RemoteLogSegmentState`` ids and names.
REMOTE_LOG_SEGMENT_STATES: dict[int, str] = {
    0: "COPY_SEGMENT_STARTED",
    1: "COPY_SEGMENT_FINISHED",
    2: "DELETE_SEGMENT_STARTED",
    3: "DELETE_SEGMENT_FINISHED",
}

#: ``RemotePartitionDeleteState`` ids and names.
REMOTE_PARTITION_DELETE_STATES: dict[int, str] = {
    0: "DELETE_PARTITION_MARKED",
    1: "DELETE_PARTITION_STARTED",
    2: "DELETE_PARTITION_FINISHED",
}

# --- __share_group_state --------------------------------------------------------------------


def _share_key(name: str, version: str) -> Message:
    return message(
        name,
        version,
        "none",
        [
            field("GroupId", "string", version),
            field("TopicId", "uuid", version),
            field("Partition", "int32", version),
        ],
    )


def _state_batches() -> Field:
    return field(
        "StateBatches",
        "[]StateBatch",
        "0",
        fields=[
            field("FirstOffset", "int64", "0"),
            field("LastOffset", "int64", "0"),
            field("DeliveryState", "int8", "0"),
            field("DeliveryCount", "int16", "0"),
        ],
    )


SHARE_SNAPSHOT_KEY = _share_key("ShareSnapshotKey", "0")
SHARE_UPDATE_KEY = _share_key("ShareUpdateKey", "1")

SHARE_SNAPSHOT_VALUE = message(
    "ShareSnapshotValue",
    "0",
    "0+",
    [
        field("SnapshotEpoch", "uint16", "0"),
        field("StateEpoch", "int32", "0+"),
        field("LeaderEpoch", "int32", "0+"),
        field("StartOffset", "int64", "0"),
        _state_batches(),
    ],
)

SHARE_UPDATE_VALUE = message(
    "ShareUpdateValue",
    "0",
    "0+",
    [
        field("SnapshotEpoch", "uint16", "0"),
        field("LeaderEpoch", "int32", "0+"),
        field("StartOffset", "int64", "0"),
        _state_batches(),
    ],
)

#: record type (the key's version, ``ShareCoordinatorRecordSerde``) -> (name, key, value).
SHARE_GROUP_STATE_RECORD_TYPES: dict[int, tuple[str, Message, Message]] = {
    0: ("ShareSnapshot", SHARE_SNAPSHOT_KEY, SHARE_SNAPSHOT_VALUE),
    1: ("ShareUpdate", SHARE_UPDATE_KEY, SHARE_UPDATE_VALUE),
}

#: ``StateBatch.DeliveryState``: "0:Available,2:Acked,4:Archived" (the JSON's ``about``).
DELIVERY_STATES: dict[int, str] = {0: "Available", 2: "Acked", 4: "Archived"}
