"""The record schemas of ``__cluster_metadata``: every metadata record type
(``metadata/src/main/resources/common/metadata/*.json``, by ``apiKey``) and the KRaft control
records of its control batches and snapshots, transcribed as :mod:`.internal_schemas` tells."""

from __future__ import annotations

from .kafka_message import Message, field, message

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
