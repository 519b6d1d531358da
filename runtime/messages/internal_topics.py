"""Decoders for Kafka's internal topics: ``__consumer_offsets``, ``__transaction_state`` and
KRaft's ``__cluster_metadata``.

Two faces:

* :data:`DECODERS` — kafka-dump-log's ``--offsets-decoder``, ``--transaction-log-decoder`` and
  ``--cluster-metadata-decoder``: each takes a :class:`~.model.Record` and returns the
  ``(key, payload)`` texts kafka-dump-log prints after ``key:`` and ``payload:`` (None: print
  nothing). They never raise: damage becomes text, as kafka-dump-log's
  ``Error at offset N, skipping. …``.
* ``decode_*`` — the same records as Python dicts, for programs and the Spark functions; they
  raise :class:`~.kafka_message.MessageDecodeError` on damage. :func:`offset_commit_history`
  and :func:`latest_committed_offsets` rebuild a consumer group's committed offsets from a
  backup of ``__consumer_offsets``.

The layouts (``internal_schemas``):

* ``__consumer_offsets`` (``CoordinatorRecordSerde``): key = int16 record type + the key
  message read at that version; value = int16 version + the value message of that type; a
  null value is a tombstone. Types 0 and 1 are offset commits, 2 group metadata (the classic
  protocol; for protocol type ``consumer`` the members' subscription and assignment are
  ConsumerProtocol bytes, decoded too), 3–8 KIP-848 consumer groups, 9–15 KIP-932 share
  groups. Newer types are reported with their number and raw bytes.
* ``__transaction_state``: key = int16 version 0 + ``TransactionLogKey``; value = int16
  version + ``TransactionLogValue`` (version 1 is flexible, with tagged fields).
* ``__cluster_metadata`` (``MetadataRecordSerde``): no key; value = unsigned varints frame
  version (1), apiKey and version, then the record. Control batches (leader changes,
  snapshot headers and footers, KRaft versions and voters) hold the records of
  :func:`decode_kraft_control_record`.

The JSON texts are kafka-dump-log's (Kafka 4.x): ``{"type":"1","data":{…}}`` for keys,
``{"version":"3","data":{…}}`` or ``<DELETE>`` for values, ``{"type":"TOPIC_RECORD",
"version":0,"data":{…}}`` for metadata records; field names, order and rendering follow
Kafka's generated JSON converters (:mod:`.kafka_message`). The transaction log prints
``transactionStatus`` as the state's name (``Ongoing``), as Kafka does since KAFKA-20712.
"""

from __future__ import annotations

import base64
import contextlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from .coordinator import I16, HasKeyValue, decoder_texts, prefix, reason
from .internal_schemas import (
    CONSUMER_PROTOCOL_ASSIGNMENT,
    CONSUMER_PROTOCOL_SUBSCRIPTION,
    KRAFT_CONTROL_RECORDS,
    METADATA_RECORDS_BY_KEY,
    OFFSETS_RECORD_TYPES,
    TRANSACTION_LOG_KEY,
    TRANSACTION_LOG_VALUE,
    TRANSACTION_STATES,
    metadata_type_name,
)
from .kafka4_topics import DECODERS as KAFKA4_DECODERS
from .kafka_message import (
    Message,
    MessageDecodeError,
    encode_uvarint,
    json_text,
    json_tree,
    read_message,
    read_message_from,
    write_message,
)

__all__ = [
    "CONSUMER_PROTOCOL_TYPE",
    "DECODERS",
    "DEFAULT_INTERNAL_PARTITIONS",
    "OFFSETS_RECORD_TYPE_NAMES",
    "OffsetCommitEvent",
    "cluster_metadata_data_json",
    "cluster_metadata_decoder",
    "cluster_metadata_json",
    "coordinator_partition",
    "decode_cluster_metadata_record",
    "decode_consumer_assignment",
    "decode_consumer_subscription",
    "decode_kraft_control_record",
    "decode_offsets_key",
    "decode_offsets_record",
    "decode_transaction_log_record",
    "encode_cluster_metadata_record",
    "encode_offsets_key",
    "encode_offsets_value",
    "encode_transaction_log_key",
    "encode_transaction_log_value",
    "kraft_control_text",
    "latest_committed_offsets",
    "metadata_type_name",
    "offset_commit_history",
    "offsets_decoder",
    "offsets_json",
    "transaction_log_decoder",
    "transaction_log_json",
]

#: ``ConsumerProtocol.PROTOCOL_TYPE``: groups whose members' metadata is decoded.
CONSUMER_PROTOCOL_TYPE = "consumer"
#: record type -> name, for ``__consumer_offsets`` (types 0 and 1 are both offset commits).
OFFSETS_RECORD_TYPE_NAMES = {t: entry[0] for t, entry in OFFSETS_RECORD_TYPES.items()}
_OFFSET_COMMIT_TYPES = (0, 1)
_GROUP_METADATA_TYPE = 2
_FRAME_VERSION = 1
_SHORT_MAX = 0x7FFF


def _read_prefixed(msg: Message, data: bytes, version: int, what: str) -> dict[str, Any]:
    try:
        values, _ = read_message_from(msg, data, version, offset=2)
    except MessageDecodeError as exc:
        raise MessageDecodeError(
            f"Could not read record with version {version} from {what}'s buffer due to: "
            f"{exc.reason}.",
            position=exc.position,
        ) from exc
    return values


# --- the consumer protocol ------------------------------------------------------------------


def decode_consumer_subscription(data: bytes) -> dict[str, Any]:
    """A ``ConsumerProtocolSubscription`` (int16 version + message), with its ``version``.
    Like Kafka, a version newer than the schema is read as far as the schema goes."""
    version = prefix(data, "subscription")
    values, _ = read_message_from(CONSUMER_PROTOCOL_SUBSCRIPTION, data, version, offset=2)
    return {"version": version, **values}


def decode_consumer_assignment(data: bytes) -> dict[str, Any]:
    """A ``ConsumerProtocolAssignment`` (int16 version + message), with its ``version``."""
    version = prefix(data, "assignment")
    values, _ = read_message_from(CONSUMER_PROTOCOL_ASSIGNMENT, data, version, offset=2)
    return {"version": version, **values}


def _with_consumer_protocol(group: dict[str, Any]) -> None:
    """Add ``consumerSubscription`` / ``consumerAssignment`` to each member of a classic group
    using the consumer protocol (None where the bytes do not decode)."""
    consumer = group.get("protocolType") == CONSUMER_PROTOCOL_TYPE
    for member in group.get("members") or ():
        for raw, decoded, decode in (
            ("subscription", "consumerSubscription", decode_consumer_subscription),
            ("assignment", "consumerAssignment", decode_consumer_assignment),
        ):
            member[decoded] = None
            if consumer and member.get(raw) is not None:
                with contextlib.suppress(MessageDecodeError):
                    member[decoded] = decode(member[raw])


# --- __consumer_offsets ---------------------------------------------------------------------


def decode_offsets_key(key: bytes) -> dict[str, Any]:
    """A ``__consumer_offsets`` key: ``{"recordType", "recordTypeName", "key"}``; for a type
    this schema does not know, ``recordTypeName`` and ``key`` are None and ``rawKey`` holds
    the bytes after the type."""
    record_type = prefix(key, "key")
    entry = OFFSETS_RECORD_TYPES.get(record_type)
    if entry is None:
        return {
            "recordType": record_type,
            "recordTypeName": None,
            "key": None,
            "rawKey": bytes(key[2:]),
        }
    name, key_schema, _ = entry
    return {
        "recordType": record_type,
        "recordTypeName": name,
        "key": _read_prefixed(key_schema, key, record_type, "key"),
    }


def decode_offsets_record(key: bytes, value: bytes | None) -> dict[str, Any]:
    """One ``__consumer_offsets`` record as a dict::

        {"recordType": 1, "recordTypeName": "OffsetCommit",
         "key": {"group": "g", "topic": "t", "partition": 0},
         "valueVersion": 3, "tombstone": False,
         "value": {"offset": 42, "leaderEpoch": 0, "metadata": "", "commitTimestamp": …,
                   "expireTimestamp": -1}}

    ``value`` is None for a tombstone (``valueVersion`` too). Values hold every field of the
    schema, those absent from their version at Kafka's default (-1 for ``leaderEpoch`` and
    ``expireTimestamp``). Group metadata members of consumer-protocol groups also carry
    ``consumerSubscription`` and ``consumerAssignment`` (decoded, with their ``version``).
    For an unknown record type, ``rawKey`` / ``rawValue`` hold the undecoded bytes.
    """
    out = decode_offsets_key(key)
    out["tombstone"] = value is None
    out["valueVersion"] = None if value is None else prefix(value, "value")
    out["value"] = None
    entry = OFFSETS_RECORD_TYPES.get(out["recordType"])
    if entry is None:
        out["rawValue"] = None if value is None else bytes(value[2:])
        return out
    if value is not None:
        values = _read_prefixed(entry[2], value, out["valueVersion"], "value")
        if out["recordType"] == _GROUP_METADATA_TYPE:
            _with_consumer_protocol(values)
        out["value"] = values
    return out


def offsets_json(key: bytes, value: bytes | None) -> tuple[str, str] | None:
    """kafka-dump-log's key and payload texts of a ``__consumer_offsets`` record (payload
    ``<DELETE>`` for a tombstone); None for a record type this schema does not know.
    Raises :class:`MessageDecodeError`."""
    record_type = prefix(key, "key")
    entry = OFFSETS_RECORD_TYPES.get(record_type)
    if entry is None:
        return None
    _, key_schema, value_schema = entry
    key_values = _read_prefixed(key_schema, key, record_type, "key")
    payload = "<DELETE>"
    if value is not None:
        version = prefix(value, "value")
        values = _read_prefixed(value_schema, value, version, "value")
        tree = json_tree(value_schema, values, version)
        if record_type == _GROUP_METADATA_TYPE:
            _consumer_protocol_json(tree)
        payload = json_text({"version": str(version), "data": tree})
    key_tree = json_tree(key_schema, key_values, record_type)
    return json_text({"type": str(record_type), "data": key_tree}), payload


def _consumer_protocol_json(tree: dict[str, Any]) -> None:
    """As kafka-dump-log: in consumer-protocol groups, each member's ``subscription`` and
    ``assignment`` (base64) become the decoded message's JSON, when they decode."""
    if tree.get("protocolType") != CONSUMER_PROTOCOL_TYPE:
        return
    for member in tree.get("members") or ():
        for name, schema in (
            ("subscription", CONSUMER_PROTOCOL_SUBSCRIPTION),
            ("assignment", CONSUMER_PROTOCOL_ASSIGNMENT),
        ):
            if not isinstance(member.get(name), str):
                continue
            raw = base64.b64decode(member[name])
            try:
                version = prefix(raw, name)
                values, _ = read_message_from(schema, raw, version, offset=2)
            except MessageDecodeError:
                continue  # kafka-dump-log keeps the original bytes
            member[name] = json_tree(schema, values, version)


def offsets_decoder(record: HasKeyValue) -> tuple[str | None, str | None]:
    """``--offsets-decoder``: kafka-dump-log's ``OffsetsMessageParser``."""
    return decoder_texts(record, "offset topic decoder", offsets_json)


# --- __transaction_state --------------------------------------------------------------------


def decode_transaction_log_record(key: bytes, value: bytes | None) -> dict[str, Any]:
    """One ``__transaction_state`` record as a dict::

        {"keyVersion": 0, "key": {"transactionalId": "tx-1"},
         "valueVersion": 1, "tombstone": False,
         "value": {"producerId": 1000, "previousProducerId": -1, "nextProducerId": -1,
                   "producerEpoch": 0, "transactionTimeoutMs": 60000,
                   "transactionStatus": 1, "transactionState": "Ongoing",
                   "transactionPartitions": [{"topic": "t", "partitionIds": [0]}],
                   "transactionLastUpdateTimestampMs": …, "transactionStartTimestampMs": …,
                   "clientTransactionVersion": 0}}

    ``transactionState`` is the name of ``transactionStatus`` (None for an unknown id). A key
    version other than 0 gives ``key`` None and ``rawKey`` / ``rawValue``.
    """
    version = prefix(key, "key")
    out: dict[str, Any] = {"keyVersion": version, "key": None}
    out["tombstone"] = value is None
    out["valueVersion"] = None if value is None else prefix(value, "value")
    out["value"] = None
    if version not in TRANSACTION_LOG_KEY.valid:
        out["rawKey"] = bytes(key[2:])
        out["rawValue"] = None if value is None else bytes(value[2:])
        return out
    out["key"] = _read_prefixed(TRANSACTION_LOG_KEY, key, version, "key")
    if value is not None:
        values = _read_prefixed(TRANSACTION_LOG_VALUE, value, out["valueVersion"], "value")
        values["transactionState"] = TRANSACTION_STATES.get(values["transactionStatus"])
        out["value"] = values
    return out


def transaction_log_json(key: bytes, value: bytes | None) -> tuple[str, str] | None:
    """kafka-dump-log's key and payload texts of a ``__transaction_state`` record; None for a
    key version this schema does not know. Raises :class:`MessageDecodeError`."""
    version = prefix(key, "key")
    if version not in TRANSACTION_LOG_KEY.valid:
        return None
    key_values = _read_prefixed(TRANSACTION_LOG_KEY, key, version, "key")
    payload = "<DELETE>"
    if value is not None:
        value_version = prefix(value, "value")
        values = _read_prefixed(TRANSACTION_LOG_VALUE, value, value_version, "value")
        tree = json_tree(TRANSACTION_LOG_VALUE, values, value_version)
        if "transactionStatus" in tree:
            tree["transactionStatus"] = TRANSACTION_STATES.get(
                tree["transactionStatus"], tree["transactionStatus"]
            )
        payload = json_text({"version": str(value_version), "data": tree})
    key_tree = json_tree(TRANSACTION_LOG_KEY, key_values, version)
    return json_text({"type": str(version), "data": key_tree}), payload


def transaction_log_decoder(record: HasKeyValue) -> tuple[str | None, str | None]:
    """``--transaction-log-decoder``: kafka-dump-log's ``TransactionLogMessageParser``."""
    return decoder_texts(record, "transaction log decoder", transaction_log_json)


# --- __cluster_metadata ---------------------------------------------------------------------


class _Varints:
    """The frame's unsigned varints (``AbstractApiMessageSerde.unsignedIntToShort``)."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.pos = 0

    def short(self, entity: str) -> int:
        value = shift = 0
        while True:
            if self.pos >= len(self.data) or shift > 28:
                raise MessageDecodeError(f"Error while reading {entity}", position=self.pos)
            b = self.data[self.pos]
            self.pos += 1
            value |= (b & 0x7F) << shift
            shift += 7
            if not b & 0x80:
                break
        if value > _SHORT_MAX:
            raise MessageDecodeError(f"Value for {entity} was too large.", position=self.pos)
        return value


def decode_cluster_metadata_record(value: bytes) -> dict[str, Any]:
    """One ``__cluster_metadata`` record value as a dict::

        {"frameVersion": 1, "apiKey": 2, "type": "TOPIC_RECORD", "version": 0,
         "data": {"name": "orders", "topicId": "MKXx1fIkQy2J9jXHhK8m1w"}}

    An apiKey this schema does not know gives ``type`` ``UNKNOWN(<apiKey>)``, ``data`` None and
    ``raw`` (the bytes after the frame header). Raises :class:`MessageDecodeError` as
    ``MetadataRecordSerde`` fails: frame version other than 1, a record that does not read,
    bytes left over after it.
    """
    if value is None:
        raise MessageDecodeError("metadata record without a value", position=0)
    frame = _Varints(value)
    frame_version = frame.short("frame version")
    if frame_version == 0:
        raise MessageDecodeError(
            "Could not deserialize metadata record with frame version 0. Note that upgrades "
            "from the preview release of KRaft in 2.8 to newer versions are not supported.",
            position=0,
        )
    if frame_version != _FRAME_VERSION:
        raise MessageDecodeError(
            f"Could not deserialize metadata record due to unknown frame version "
            f"{frame_version}(only frame version {_FRAME_VERSION} is supported)",
            position=0,
        )
    api_key = frame.short("type")
    version = frame.short("version")
    out: dict[str, Any] = {"frameVersion": frame_version, "apiKey": api_key}
    schema = METADATA_RECORDS_BY_KEY.get(api_key)
    if schema is None:
        out.update(type=f"UNKNOWN({api_key})", version=version, data=None)
        out["raw"] = bytes(value[frame.pos :])
        return out
    out.update(type=metadata_type_name(schema.name), version=version)
    try:
        data, used = read_message_from(schema, value, version, offset=frame.pos)
    except MessageDecodeError as exc:
        raise MessageDecodeError(
            f"Failed to deserialize record with type {api_key}: {exc.reason}"
            + _newer(schema, version),
            position=exc.position,
        ) from exc
    if used != len(value):
        raise MessageDecodeError(
            f"Found {len(value) - used} byte(s) of garbage after {api_key}"
            + _newer(schema, version),
            position=used,
        )
    out["data"] = data
    return out


def _newer(schema: Message, version: int) -> str:
    if version > schema.valid.hi:
        return f" (version {version} is newer than this schema's {schema.valid.hi})"
    return ""


def cluster_metadata_json(value: bytes) -> str:
    """kafka-dump-log's payload text of a ``__cluster_metadata`` record value. Raises
    :class:`MessageDecodeError`."""
    record = decode_cluster_metadata_record(value)
    if record["data"] is None:
        raw = base64.b64encode(record["raw"]).decode("ascii")
        return json_text({"type": record["type"], "version": record["version"], "raw": raw})
    node = {"type": record["type"], "version": record["version"], "data": _metadata_tree(record)}
    return json_text(node)


def cluster_metadata_data_json(record: dict[str, Any]) -> str | None:
    """The ``data`` part of :func:`cluster_metadata_json` for a record
    :func:`decode_cluster_metadata_record` returned (None for an unknown type)."""
    return None if record["data"] is None else json_text(_metadata_tree(record))


def _metadata_tree(record: dict[str, Any]) -> dict[str, Any]:
    schema = METADATA_RECORDS_BY_KEY[record["apiKey"]]
    return json_tree(schema, record["data"], record["version"])


def cluster_metadata_decoder(record: HasKeyValue) -> tuple[str | None, str | None]:
    """``--cluster-metadata-decoder``: kafka-dump-log's ``ClusterMetadataLogMessageParser``
    (no key; an unknown apiKey gives ``{"type":"UNKNOWN(n)","version":v,"raw":"<base64>"}``)."""
    try:
        return None, cluster_metadata_json(record.value)  # type: ignore[arg-type]
    except Exception as exc:  # the decoders never raise: damage is reported as text
        return None, f"Error at {record.offset}, skipping. {reason(exc)}"


# --- KRaft control records ------------------------------------------------------------------


def decode_kraft_control_record(control_type: int, value: bytes) -> dict[str, Any] | None:
    """The value of a KRaft control record (types 2–6: leader change, snapshot header and
    footer, KRaft version, voters) as ``{"controlType", "label", "data"}``; None for other
    types. Read at version 0, as ``ControlRecordUtils`` does."""
    entry = KRAFT_CONTROL_RECORDS.get(control_type)
    if entry is None:
        return None
    label, schema = entry
    data = read_message(schema, value, 0)
    return {"controlType": control_type, "label": label, "data": data}


def kraft_control_text(control_type: int, value: bytes | None) -> str | None:
    """What kafka-dump-log prints after a KRaft control record's metadata:
    ``LeaderChange: {"version":0,"leaderId":1,…}``,
    ``SnapshotHeader {"version":0,"lastContainedLogTimestamp":…}`` and likewise
    ``SnapshotFooter``, ``KRaftVersion``, ``KRaftVoters``; None for the types it shows as
    ``controlType: NAME(id)``. Damage becomes text.

    As trunk's ``tools/.../DumpLogSegments.printControlRecord`` (KAFKA-19069, Kafka 4.1):
    only the leader change has a colon after its label; Kafka 4.0 and older printed it as
    ``controlType: LEADER_CHANGE(2)``."""
    entry = KRAFT_CONTROL_RECORDS.get(control_type)
    if entry is None:
        return None
    label, schema = entry
    if control_type == 2:
        label += ":"
    try:
        data = read_message(schema, value if value is not None else b"", 0)
    except MessageDecodeError as exc:
        return f"{label} <error: {exc.reason}>"
    # ControlRecordUtils reads at version 0; the converter writes at the record's own version.
    return f"{label} {json_text(json_tree(schema, data, data['version']))}"


# --- the decoders, by kafka-dump-log option name --------------------------------------------

#: kafka-dump-log's option name (without ``--``) -> decoder of a record's (key, payload).
DECODERS: dict[str, Callable[[Any], tuple[str | None, str | None]]] = {
    "offsets-decoder": offsets_decoder,
    "transaction-log-decoder": transaction_log_decoder,
    "cluster-metadata-decoder": cluster_metadata_decoder,
    # Kafka 4.x: --remote-log-metadata-decoder, --share-group-state-decoder (kafka4_topics)
    **KAFKA4_DECODERS,
}


# --- which partition of an internal topic holds a group or a transactional id ---------------

#: ``offsets.topic.num.partitions`` and ``transaction.state.log.num.partitions`` defaults.
DEFAULT_INTERNAL_PARTITIONS = 50


def coordinator_partition(key: str, partitions: int = DEFAULT_INTERNAL_PARTITIONS) -> int:
    """The partition of ``__consumer_offsets`` holding group ``key`` (or of
    ``__transaction_state`` holding transactional id ``key``):
    ``Utils.abs(key.hashCode()) % partitions``, with Java's ``String.hashCode`` over UTF-16."""
    h = 0
    raw = key.encode("utf-16-be", errors="surrogatepass")
    for i in range(0, len(raw), 2):
        h = (31 * h + (raw[i] << 8 | raw[i + 1])) & 0xFFFFFFFF
    if h & 0x80000000:
        h -= 1 << 32
    # Kafka's Utils.abs maps Integer.MIN_VALUE to 0
    return (0 if h == -(1 << 31) else abs(h)) % partitions


# --- committed offsets from a backup of __consumer_offsets ----------------------------------


@dataclass(slots=True, frozen=True)
class OffsetCommitEvent:
    """One offset commit (or its deletion) as ``__consumer_offsets`` records it.

    ``log_offset`` / ``timestamp`` are the record's own; the rest is the key and value.
    A deletion (tombstone: the group or the offset was deleted or expired) has
    ``deleted=True`` and the value fields None. ``leader_epoch`` and ``expire_timestamp`` are
    -1 where the value's version has no such field or the committer gave none.
    """

    log_offset: int
    timestamp: int | None
    group: str
    topic: str
    partition: int
    deleted: bool
    offset: int | None = None
    leader_epoch: int | None = None
    metadata: str | None = None
    commit_timestamp: int | None = None
    expire_timestamp: int | None = None
    value_version: int | None = None


def offset_commit_history(
    source: Any,
    *,
    group: str | None = None,
    isolation: str = "read_committed",
    errors: str = "strict",
    report: Any = None,
) -> Iterator[OffsetCommitEvent]:
    """Every offset commit and deletion in ``source`` (anything :func:`~.reader.iter_records`
    reads: a ``__consumer_offsets-N`` directory, a segment, bytes), in log order, optionally
    of one ``group``. Other record types (group metadata, KIP-848 records) are skipped.

    ``read_committed`` (the default) leaves out transactional offset commits of aborted or
    unfinished transactions, which the group coordinator never applies. Records that do not
    decode raise :class:`MessageDecodeError` with ``errors="strict"``; with ``"skip"`` they
    are skipped (and batch damage is handled as ``iter_records`` does).
    """
    from ..read.reader import iter_records

    for record in iter_records(source, isolation=isolation, errors=errors, report=report):
        if record.key is None:
            continue
        try:
            if prefix(record.key, "key") not in _OFFSET_COMMIT_TYPES:
                continue
            decoded = decode_offsets_record(record.key, record.value)
        except MessageDecodeError as exc:
            if errors == "strict":
                raise MessageDecodeError(
                    f"record at offset {record.offset}: {exc.reason}", position=exc.position
                ) from exc
            continue
        key = decoded["key"]
        if group is not None and key["group"] != group:
            continue
        value = decoded["value"]
        common = dict(
            log_offset=record.offset,
            timestamp=record.timestamp,
            group=key["group"],
            topic=key["topic"],
            partition=key["partition"],
        )
        if value is None:
            yield OffsetCommitEvent(**common, deleted=True)
        else:
            yield OffsetCommitEvent(
                **common,
                deleted=False,
                offset=value["offset"],
                leader_epoch=value["leaderEpoch"],
                metadata=value["metadata"],
                commit_timestamp=value["commitTimestamp"],
                expire_timestamp=value["expireTimestamp"],
                value_version=decoded["valueVersion"],
            )


def latest_committed_offsets(
    source: Any, *, group: str | None = None, isolation: str = "read_committed"
) -> dict[tuple[str, str, int], OffsetCommitEvent]:
    """The committed offsets the group coordinator would load from ``source``: the last
    commit of each (group, topic, partition), deleted ones left out."""
    latest: dict[tuple[str, str, int], OffsetCommitEvent] = {}
    for event in offset_commit_history(source, group=group, isolation=isolation):
        k = (event.group, event.topic, event.partition)
        if event.deleted:
            latest.pop(k, None)
        else:
            latest[k] = event
    return latest


# --- encoders: records as the coordinators and the controller write them ---------------------


def encode_offsets_key(record_type: int, fields: dict[str, Any]) -> bytes:
    """A ``__consumer_offsets`` key: ``encode_offsets_key(1, {"group": "g", "topic": "t",
    "partition": 0})``."""
    _, key_schema, _ = OFFSETS_RECORD_TYPES[record_type]
    return I16.pack(record_type) + write_message(key_schema, fields, record_type)


def encode_offsets_value(record_type: int, version: int, fields: dict[str, Any]) -> bytes:
    """A ``__consumer_offsets`` value of ``record_type`` at ``version`` (missing fields take
    their default): ``encode_offsets_value(1, 3, {"offset": 42, "commitTimestamp": t})``."""
    _, _, value_schema = OFFSETS_RECORD_TYPES[record_type]
    return I16.pack(version) + write_message(value_schema, fields, version)


def encode_transaction_log_key(transactional_id: str) -> bytes:
    """A ``__transaction_state`` key (version 0)."""
    return I16.pack(0) + write_message(
        TRANSACTION_LOG_KEY, {"transactionalId": transactional_id}, 0
    )


def encode_transaction_log_value(version: int, fields: dict[str, Any]) -> bytes:
    """A ``__transaction_state`` value at ``version`` (0, or 1 with tagged fields)."""
    return I16.pack(version) + write_message(TRANSACTION_LOG_VALUE, fields, version)


def encode_cluster_metadata_record(api_key: int, version: int, fields: dict[str, Any]) -> bytes:
    """A ``__cluster_metadata`` record value: frame version 1, ``api_key``, ``version``."""
    schema = METADATA_RECORDS_BY_KEY[api_key]
    header = encode_uvarint(_FRAME_VERSION) + encode_uvarint(api_key) + encode_uvarint(version)
    return header + write_message(schema, fields, version)
