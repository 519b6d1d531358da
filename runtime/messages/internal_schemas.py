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

# --- __cluster_metadata ---------------------------------------------------------------------

_ENDPOINT = (
    field("Name", "string", "0+"),
    field("Host", "string", "0+"),
    field("Port", "uint16", "0+"),
    field("SecurityProtocol", "int16", "0+"),
)
_FEATURE = (
    field("Name", "string", "0+"),
    field("MinSupportedVersion", "int16", "0+"),
    field("MaxSupportedVersion", "int16", "0+"),
)

METADATA_RECORDS: tuple[Message, ...] = (
    message(
        "RegisterBrokerRecord",
        "0-3",
        "0+",
        [
            field("BrokerId", "int32", "0+"),
            field("IsMigratingZkBroker", "bool", "2+", default="false"),
            field("IncarnationId", "uuid", "0+"),
            field("BrokerEpoch", "int64", "0+"),
            field("EndPoints", "[]BrokerEndpoint", "0+", fields=_ENDPOINT),
            field("Features", "[]BrokerFeature", "0+", fields=_FEATURE),
            field("Rack", "string", "0+", nullable="0+"),
            field("Fenced", "bool", "0+", default="true"),
            field("InControlledShutdown", "bool", "1+", default="false"),
            field("LogDirs", "[]uuid", "3+", tagged="3+", tag=0),
        ],
        api_key=0,
    ),
    message(
        "UnregisterBrokerRecord",
        "0",
        "0+",
        [field("BrokerId", "int32", "0+"), field("BrokerEpoch", "int64", "0+")],
        api_key=1,
    ),
    message(
        "TopicRecord",
        "0",
        "0+",
        [field("Name", "string", "0+"), field("TopicId", "uuid", "0+")],
        api_key=2,
    ),
    message(
        "PartitionRecord",
        "0-2",
        "0+",
        [
            field("PartitionId", "int32", "0+", default="-1"),
            field("TopicId", "uuid", "0+"),
            field("Replicas", "[]int32", "0+"),
            field("Isr", "[]int32", "0+"),
            field("RemovingReplicas", "[]int32", "0+"),
            field("AddingReplicas", "[]int32", "0+"),
            field("Leader", "int32", "0+", default="-1"),
            field("LeaderRecoveryState", "int8", "0+", tagged="0+", tag=0, default="0"),
            field("LeaderEpoch", "int32", "0+", default="-1"),
            field("PartitionEpoch", "int32", "0+", default="-1"),
            field("Directories", "[]uuid", "1+"),
            field(
                "EligibleLeaderReplicas",
                "[]int32",
                "2+",
                nullable="2+",
                tagged="2+",
                tag=1,
                default="null",
            ),
            field(
                "LastKnownElr", "[]int32", "2+", nullable="2+", tagged="2+", tag=2, default="null"
            ),
        ],
        api_key=3,
    ),
    message(
        "ConfigRecord",
        "0",
        "0+",
        [
            field("ResourceType", "int8", "0+"),
            field("ResourceName", "string", "0+"),
            field("Name", "string", "0+"),
            field("Value", "string", "0+", nullable="0+"),
        ],
        api_key=4,
    ),
    message(
        "PartitionChangeRecord",
        "0-2",
        "0+",
        [
            field("PartitionId", "int32", "0+", default="-1"),
            field("TopicId", "uuid", "0+"),
            field("Isr", "[]int32", "0+", nullable="0+", tagged="0+", tag=0, default="null"),
            field("Leader", "int32", "0+", tagged="0+", tag=1, default="-2"),
            field("Replicas", "[]int32", "0+", nullable="0+", tagged="0+", tag=2, default="null"),
            field(
                "RemovingReplicas",
                "[]int32",
                "0+",
                nullable="0+",
                tagged="0+",
                tag=3,
                default="null",
            ),
            field(
                "AddingReplicas", "[]int32", "0+", nullable="0+", tagged="0+", tag=4, default="null"
            ),
            field("LeaderRecoveryState", "int8", "0+", tagged="0+", tag=5, default="-1"),
            field("Directories", "[]uuid", "1+", nullable="1+", tagged="1+", tag=8, default="null"),
            field(
                "EligibleLeaderReplicas",
                "[]int32",
                "2+",
                nullable="2+",
                tagged="2+",
                tag=6,
                default="null",
            ),
            field(
                "LastKnownElr", "[]int32", "2+", nullable="2+", tagged="2+", tag=7, default="null"
            ),
        ],
        api_key=5,
    ),
    message(
        "FenceBrokerRecord",
        "0",
        "0+",
        [field("Id", "int32", "0+"), field("Epoch", "int64", "0+")],
        api_key=7,
    ),
    message(
        "UnfenceBrokerRecord",
        "0",
        "0+",
        [field("Id", "int32", "0+"), field("Epoch", "int64", "0+")],
        api_key=8,
    ),
    message("RemoveTopicRecord", "0", "0+", [field("TopicId", "uuid", "0+")], api_key=9),
    message(
        "DelegationTokenRecord",
        "0",
        "0+",
        [
            field("Owner", "string", "0+"),
            field("Requester", "string", "0+"),
            field("Renewers", "[]string", "0+"),
            field("IssueTimestamp", "int64", "0+"),
            field("MaxTimestamp", "int64", "0+"),
            field("ExpirationTimestamp", "int64", "0+"),
            field("TokenId", "string", "0+"),
        ],
        api_key=10,
    ),
    message(
        "UserScramCredentialRecord",
        "0",
        "0+",
        [
            field("Name", "string", "0+"),
            field("Mechanism", "int8", "0+"),
            field("Salt", "bytes", "0+"),
            field("StoredKey", "bytes", "0+"),
            field("ServerKey", "bytes", "0+"),
            field("Iterations", "int32", "0+"),
        ],
        api_key=11,
    ),
    message(
        "FeatureLevelRecord",
        "0",
        "0+",
        [field("Name", "string", "0+"), field("FeatureLevel", "int16", "0+")],
        api_key=12,
    ),
    message(
        "ClientQuotaRecord",
        "0",
        "0+",
        [
            field(
                "Entity",
                "[]EntityData",
                "0+",
                fields=[
                    field("EntityType", "string", "0+"),
                    field("EntityName", "string", "0+", nullable="0+"),
                ],
            ),
            field("Key", "string", "0+"),
            field("Value", "float64", "0+"),
            field("Remove", "bool", "0+"),
        ],
        api_key=14,
    ),
    message(
        "ProducerIdsRecord",
        "0",
        "0+",
        [
            field("BrokerId", "int32", "0+"),
            field("BrokerEpoch", "int64", "0+", default="-1"),
            field("NextProducerId", "int64", "0+"),
        ],
        api_key=15,
    ),
    message(
        "BrokerRegistrationChangeRecord",
        "0-2",
        "0+",
        [
            field("BrokerId", "int32", "0+"),
            field("BrokerEpoch", "int64", "0+"),
            field("Fenced", "int8", "0+", tagged="0+", tag=0),
            field("InControlledShutdown", "int8", "1+", tagged="1+", tag=1),
            field("LogDirs", "[]uuid", "2+", tagged="2+", tag=2),
        ],
        api_key=17,
    ),
    message(
        "AccessControlEntryRecord",
        "0",
        "0+",
        [
            field("Id", "uuid", "0+"),
            field("ResourceType", "int8", "0+"),
            field("ResourceName", "string", "0+"),
            field("PatternType", "int8", "0+"),
            field("Principal", "string", "0+"),
            field("Host", "string", "0+"),
            field("Operation", "int8", "0+"),
            field("PermissionType", "int8", "0+"),
        ],
        api_key=18,
    ),
    message("RemoveAccessControlEntryRecord", "0", "0+", [field("Id", "uuid", "0+")], api_key=19),
    message("NoOpRecord", "0", "0+", [], api_key=20),
    message(
        "ZkMigrationStateRecord",
        "0",
        "0+",
        [field("ZkMigrationState", "int8", "0+")],
        api_key=21,
    ),
    message(
        "RemoveUserScramCredentialRecord",
        "0",
        "0+",
        [field("Name", "string", "0+"), field("Mechanism", "int8", "0+")],
        api_key=22,
    ),
    message(
        "BeginTransactionRecord",
        "0",
        "0+",
        [field("Name", "string", "0+", nullable="0+", tagged="0+", tag=0, default="null")],
        api_key=23,
    ),
    message("EndTransactionRecord", "0", "0+", [], api_key=24),
    message(
        "AbortTransactionRecord",
        "0",
        "0+",
        [field("Reason", "string", "0+", nullable="0+", tagged="0+", tag=0, default="null")],
        api_key=25,
    ),
    message(
        "RemoveDelegationTokenRecord", "0", "0+", [field("TokenId", "string", "0+")], api_key=26
    ),
    message(
        "RegisterControllerRecord",
        "0",
        "0+",
        [
            field("ControllerId", "int32", "0+"),
            field("IncarnationId", "uuid", "0+"),
            field("ZkMigrationReady", "bool", "0+"),
            field("EndPoints", "[]ControllerEndpoint", "0+", fields=_ENDPOINT),
            field("Features", "[]ControllerFeature", "0+", fields=_FEATURE),
        ],
        api_key=27,
    ),
)


def metadata_type_name(name: str) -> str:
    """``MetadataRecordType``'s constant: ``TopicRecord`` -> ``TOPIC_RECORD``
    (``MessageGenerator.toSnakeCase`` upper-cased)."""
    out: list[str] = []
    previous_upper = True
    for c in name:
        if c.isupper():
            if not previous_upper:
                out.append("_")
            out.append(c)
            previous_upper = True
        else:
            out.append(c.upper())
            previous_upper = False
    return "".join(out)


#: apiKey -> schema of every metadata record type.
METADATA_RECORDS_BY_KEY: dict[int, Message] = {
    m.api_key: m for m in METADATA_RECORDS if m.api_key is not None
}

# --- KRaft control records (control batches of __cluster_metadata and snapshots) ------------

_VOTER = (field("VoterId", "int32", "0+"), field("VoterDirectoryId", "uuid", "1+"))

KRAFT_CONTROL_RECORDS: dict[int, tuple[str, Message]] = {
    # ControlRecordType id -> (kafka-dump-log's label, schema)
    2: (
        "LeaderChange",
        message(
            "LeaderChangeMessage",
            "0-1",
            "0+",
            [
                field("Version", "int16", "0+"),
                field("LeaderId", "int32", "0+"),
                field("Voters", "[]Voter", "0+", fields=_VOTER),
                field("GrantingVoters", "[]Voter", "0+", fields=_VOTER),
            ],
        ),
    ),
    3: (
        "SnapshotHeader",
        message(
            "SnapshotHeaderRecord",
            "0",
            "0+",
            [field("Version", "int16", "0+"), field("LastContainedLogTimestamp", "int64", "0+")],
        ),
    ),
    4: (
        "SnapshotFooter",
        message("SnapshotFooterRecord", "0", "0+", [field("Version", "int16", "0+")]),
    ),
    5: (
        "KRaftVersion",
        message(
            "KRaftVersionRecord",
            "0",
            "0+",
            [field("Version", "int16", "0+"), field("KRaftVersion", "int16", "0+")],
        ),
    ),
    6: (
        "KRaftVoters",
        message(
            "VotersRecord",
            "0",
            "0+",
            [
                field("Version", "int16", "0+"),
                field(
                    "Voters",
                    "[]Voter",
                    "0+",
                    fields=[
                        field("VoterId", "int32", "0+"),
                        field("VoterDirectoryId", "uuid", "0+"),
                        field(
                            "Endpoints",
                            "[]Endpoint",
                            "0+",
                            fields=[
                                field("Name", "string", "0+"),
                                field("Host", "string", "0+"),
                                field("Port", "uint16", "0+"),
                            ],
                        ),
                        field(
                            "KRaftVersionFeature",
                            "KRaftVersionFeature",
                            "0+",
                            fields=[
                                field("MinSupportedVersion", "int16", "0+"),
                                field("MaxSupportedVersion", "int16", "0+"),
                            ],
                        ),
                    ],
                ),
            ],
        ),
    ),
}
