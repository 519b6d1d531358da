"""The record schemas of ``__consumer_offsets`` (offset commits, classic, KIP-848 consumer
and KIP-932 share group records) and of the consumer protocol embedded in
``GroupMetadataValue``: transcribed from ``group-coordinator/.../common/message/`` and
``clients/.../common/message/ConsumerProtocol*``, as :mod:`.internal_schemas` tells."""

from __future__ import annotations

from .kafka_message import Message, field, message

# --- __consumer_offsets ---------------------------------------------------------------------

OFFSET_COMMIT_KEY = message(
    "OffsetCommitKey",
    "0-1",
    "none",
    [
        field("group", "string", "0-1"),
        field("topic", "string", "0-1"),
        field("partition", "int32", "0-1"),
    ],
)

OFFSET_COMMIT_VALUE = message(
    "OffsetCommitValue",
    "0-4",
    "4+",
    [
        field("offset", "int64", "0+"),
        field("leaderEpoch", "int32", "3+", default=-1),
        field("metadata", "string", "0+"),
        field("commitTimestamp", "int64", "0+"),
        field("expireTimestamp", "int64", "1", default=-1),
    ],
)

GROUP_METADATA_KEY = message("GroupMetadataKey", "2", "none", [field("group", "string", "2")])

_MEMBER_METADATA = (
    field("memberId", "string", "0+"),
    field("groupInstanceId", "string", "3+", nullable="3+", default="null"),
    field("clientId", "string", "0+"),
    field("clientHost", "string", "0+"),
    field("rebalanceTimeout", "int32", "1+", default=-1),
    field("sessionTimeout", "int32", "0+"),
    field("subscription", "bytes", "0+"),
    field("assignment", "bytes", "0+"),
)

GROUP_METADATA_VALUE = message(
    "GroupMetadataValue",
    "0-4",
    "4+",
    [
        field("protocolType", "string", "0+"),
        field("generation", "int32", "0+"),
        field("protocol", "string", "0+", nullable="0+"),
        field("leader", "string", "0+", nullable="0+"),
        field("currentStateTimestamp", "int64", "2+", default=-1),
        field("members", "[]MemberMetadata", "0+", fields=_MEMBER_METADATA),
    ],
)


def _group_key(name: str, record_type: int, *, member: bool = False) -> Message:
    """The KIP-848 / KIP-932 keys: a group id (and a member id); validVersions = the type."""
    v = str(record_type)
    fields = [field("GroupId", "string", v)]
    if member:
        fields.append(field("MemberId", "string", v))
    return message(name, v, "none", fields)


_TOPIC_PARTITIONS = (
    field("TopicId", "uuid", "0+"),
    field("Partitions", "[]int32", "0+"),
)

CONSUMER_GROUP_METADATA_KEY = _group_key("ConsumerGroupMetadataKey", 3)
CONSUMER_GROUP_METADATA_VALUE = message(
    "ConsumerGroupMetadataValue", "0", "0+", [field("Epoch", "int32", "0+")]
)

CONSUMER_GROUP_PARTITION_METADATA_KEY = _group_key("ConsumerGroupPartitionMetadataKey", 4)
_TOPIC_METADATA = (
    field("TopicId", "uuid", "0+"),
    field("TopicName", "string", "0+"),
    field("NumPartitions", "int32", "0+"),
    field(
        "PartitionMetadata",
        "[]PartitionMetadata",
        "0+",
        fields=[field("Partition", "int32", "0+"), field("Racks", "[]string", "0+")],
    ),
)
CONSUMER_GROUP_PARTITION_METADATA_VALUE = message(
    "ConsumerGroupPartitionMetadataValue",
    "0",
    "0+",
    [field("Topics", "[]TopicMetadata", "0+", fields=_TOPIC_METADATA)],
)

CONSUMER_GROUP_MEMBER_METADATA_KEY = _group_key("ConsumerGroupMemberMetadataKey", 5, member=True)
CONSUMER_GROUP_MEMBER_METADATA_VALUE = message(
    "ConsumerGroupMemberMetadataValue",
    "0",
    "0+",
    [
        field("InstanceId", "string", "0+", nullable="0+"),
        field("RackId", "string", "0+", nullable="0+"),
        field("ClientId", "string", "0+"),
        field("ClientHost", "string", "0+"),
        field("SubscribedTopicNames", "[]string", "0+"),
        field("SubscribedTopicRegex", "string", "0+", nullable="0+"),
        field("RebalanceTimeoutMs", "int32", "0+", default=-1),
        field("ServerAssignor", "string", "0+", nullable="0+"),
        field(
            "ClassicMemberMetadata",
            "ClassicMemberMetadata",
            "0+",
            nullable="0+",
            # The JSON's "default": null means "none given": the default is an empty struct.
            tagged="0+",
            tag=0,
            fields=[
                field("SessionTimeoutMs", "int32", "0+"),
                field(
                    "SupportedProtocols",
                    "[]ClassicProtocol",
                    "0+",
                    fields=[
                        field("Name", "string", "0+"),
                        field("Metadata", "bytes", "0+"),
                    ],
                ),
            ],
        ),
    ],
)

CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA_KEY = _group_key(
    "ConsumerGroupTargetAssignmentMetadataKey", 6
)
CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA_VALUE = message(
    "ConsumerGroupTargetAssignmentMetadataValue",
    "0",
    "0+",
    [field("AssignmentEpoch", "int32", "0+")],
)

CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER_KEY = _group_key(
    "ConsumerGroupTargetAssignmentMemberKey", 7, member=True
)
CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER_VALUE = message(
    "ConsumerGroupTargetAssignmentMemberValue",
    "0",
    "0+",
    [field("TopicPartitions", "[]TopicPartition", "0+", fields=_TOPIC_PARTITIONS)],
)

CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT_KEY = _group_key(
    "ConsumerGroupCurrentMemberAssignmentKey", 8, member=True
)
CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT_VALUE = message(
    "ConsumerGroupCurrentMemberAssignmentValue",
    "0",
    "0+",
    [
        field("MemberEpoch", "int32", "0+"),
        field("PreviousMemberEpoch", "int32", "0+"),
        field("State", "int8", "0+"),
        field("AssignedPartitions", "[]TopicPartitions", "0+", fields=_TOPIC_PARTITIONS),
        field("PartitionsPendingRevocation", "[]TopicPartitions", "0+", fields=_TOPIC_PARTITIONS),
    ],
)

SHARE_GROUP_PARTITION_METADATA_KEY = _group_key("ShareGroupPartitionMetadataKey", 9)
SHARE_GROUP_PARTITION_METADATA_VALUE = message(
    "ShareGroupPartitionMetadataValue",
    "0",
    "0+",
    [field("Topics", "[]TopicMetadata", "0+", fields=_TOPIC_METADATA)],
)

SHARE_GROUP_MEMBER_METADATA_KEY = _group_key("ShareGroupMemberMetadataKey", 10, member=True)
SHARE_GROUP_MEMBER_METADATA_VALUE = message(
    "ShareGroupMemberMetadataValue",
    "0",
    "0+",
    [
        field("RackId", "string", "0+", nullable="0+"),
        field("ClientId", "string", "0+"),
        field("ClientHost", "string", "0+"),
        field("SubscribedTopicNames", "[]string", "0+"),
    ],
)

SHARE_GROUP_METADATA_KEY = _group_key("ShareGroupMetadataKey", 11)
SHARE_GROUP_METADATA_VALUE = message(
    "ShareGroupMetadataValue", "0", "0+", [field("Epoch", "int32", "0+")]
)

SHARE_GROUP_TARGET_ASSIGNMENT_METADATA_KEY = _group_key("ShareGroupTargetAssignmentMetadataKey", 12)
SHARE_GROUP_TARGET_ASSIGNMENT_METADATA_VALUE = message(
    "ShareGroupTargetAssignmentMetadataValue",
    "0",
    "0+",
    [field("AssignmentEpoch", "int32", "0+")],
)

SHARE_GROUP_TARGET_ASSIGNMENT_MEMBER_KEY = _group_key(
    "ShareGroupTargetAssignmentMemberKey", 13, member=True
)
SHARE_GROUP_TARGET_ASSIGNMENT_MEMBER_VALUE = message(
    "ShareGroupTargetAssignmentMemberValue",
    "0",
    "0+",
    [field("TopicPartitions", "[]TopicPartition", "0+", fields=_TOPIC_PARTITIONS)],
)

SHARE_GROUP_CURRENT_MEMBER_ASSIGNMENT_KEY = _group_key(
    "ShareGroupCurrentMemberAssignmentKey", 14, member=True
)
SHARE_GROUP_CURRENT_MEMBER_ASSIGNMENT_VALUE = message(
    "ShareGroupCurrentMemberAssignmentValue",
    "0",
    "0+",
    [
        field("MemberEpoch", "int32", "0+"),
        field("PreviousMemberEpoch", "int32", "0+"),
        field("State", "int8", "0+"),
        field("AssignedPartitions", "[]TopicPartitions", "0+", fields=_TOPIC_PARTITIONS),
    ],
)

SHARE_GROUP_STATE_PARTITION_METADATA_KEY = _group_key("ShareGroupStatePartitionMetadataKey", 15)
SHARE_GROUP_STATE_PARTITION_METADATA_VALUE = message(
    "ShareGroupStatePartitionMetadataValue",
    "0",
    "0+",
    [
        field(
            "InitializedTopics",
            "[]TopicPartitionsInfo",
            "0+",
            fields=[
                field("TopicId", "uuid", "0+"),
                field("TopicName", "string", "0+"),
                field("Partitions", "[]int32", "0+"),
            ],
        ),
        field(
            "DeletingTopics",
            "[]TopicInfo",
            "0+",
            fields=[field("TopicId", "uuid", "0+"), field("TopicName", "string", "0+")],
        ),
    ],
)

#: record type (the key's version) -> (name, key schema, value schema).
OFFSETS_RECORD_TYPES: dict[int, tuple[str, Message, Message]] = {
    0: ("OffsetCommit", OFFSET_COMMIT_KEY, OFFSET_COMMIT_VALUE),
    1: ("OffsetCommit", OFFSET_COMMIT_KEY, OFFSET_COMMIT_VALUE),
    2: ("GroupMetadata", GROUP_METADATA_KEY, GROUP_METADATA_VALUE),
    3: ("ConsumerGroupMetadata", CONSUMER_GROUP_METADATA_KEY, CONSUMER_GROUP_METADATA_VALUE),
    4: (
        "ConsumerGroupPartitionMetadata",
        CONSUMER_GROUP_PARTITION_METADATA_KEY,
        CONSUMER_GROUP_PARTITION_METADATA_VALUE,
    ),
    5: (
        "ConsumerGroupMemberMetadata",
        CONSUMER_GROUP_MEMBER_METADATA_KEY,
        CONSUMER_GROUP_MEMBER_METADATA_VALUE,
    ),
    6: (
        "ConsumerGroupTargetAssignmentMetadata",
        CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA_KEY,
        CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA_VALUE,
    ),
    7: (
        "ConsumerGroupTargetAssignmentMember",
        CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER_KEY,
        CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER_VALUE,
    ),
    8: (
        "ConsumerGroupCurrentMemberAssignment",
        CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT_KEY,
        CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT_VALUE,
    ),
    9: (
        "ShareGroupPartitionMetadata",
        SHARE_GROUP_PARTITION_METADATA_KEY,
        SHARE_GROUP_PARTITION_METADATA_VALUE,
    ),
    10: (
        "ShareGroupMemberMetadata",
        SHARE_GROUP_MEMBER_METADATA_KEY,
        SHARE_GROUP_MEMBER_METADATA_VALUE,
    ),
    11: ("ShareGroupMetadata", SHARE_GROUP_METADATA_KEY, SHARE_GROUP_METADATA_VALUE),
    12: (
        "ShareGroupTargetAssignmentMetadata",
        SHARE_GROUP_TARGET_ASSIGNMENT_METADATA_KEY,
        SHARE_GROUP_TARGET_ASSIGNMENT_METADATA_VALUE,
    ),
    13: (
        "ShareGroupTargetAssignmentMember",
        SHARE_GROUP_TARGET_ASSIGNMENT_MEMBER_KEY,
        SHARE_GROUP_TARGET_ASSIGNMENT_MEMBER_VALUE,
    ),
    14: (
        "ShareGroupCurrentMemberAssignment",
        SHARE_GROUP_CURRENT_MEMBER_ASSIGNMENT_KEY,
        SHARE_GROUP_CURRENT_MEMBER_ASSIGNMENT_VALUE,
    ),
    15: (
        "ShareGroupStatePartitionMetadata",
        SHARE_GROUP_STATE_PARTITION_METADATA_KEY,
        SHARE_GROUP_STATE_PARTITION_METADATA_VALUE,
    ),
}

# --- the consumer protocol (GroupMetadataValue member subscription / assignment) -----------

CONSUMER_PROTOCOL_SUBSCRIPTION = message(
    "ConsumerProtocolSubscription",
    "0-3",
    "none",
    [
        field("Topics", "[]string", "0+"),
        field("UserData", "bytes", "0+", nullable="0+", default="null"),
        field(
            "OwnedPartitions",
            "[]TopicPartition",
            "1+",
            fields=[field("Topic", "string", "1+"), field("Partitions", "[]int32", "1+")],
        ),
        field("GenerationId", "int32", "2+", default="-1"),
        field("RackId", "string", "3+", nullable="3+", default="null"),
    ],
)

CONSUMER_PROTOCOL_ASSIGNMENT = message(
    "ConsumerProtocolAssignment",
    "0-3",
    "none",
    [
        field(
            "AssignedPartitions",
            "[]TopicPartition",
            "0+",
            fields=[field("Topic", "string", "0+"), field("Partitions", "[]int32", "0+")],
        ),
        field("UserData", "bytes", "0+", nullable="0+", default="null"),
    ],
)
