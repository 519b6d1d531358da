"""Decoders for the internal topics Kafka 3.6+/4.x adds: ``__remote_log_metadata`` (tiered
storage's ``TopicBasedRemoteLogMetadataManager``) and ``__share_group_state`` (KIP-932 share
groups). The siblings of :mod:`.internal_topics`, with the same two faces:

* kafka-dump-log's ``--remote-log-metadata-decoder`` and ``--share-group-state-decoder``
  (:data:`DECODERS`): a :class:`~.model.Record` in, the ``(key, payload)`` texts
  kafka-dump-log prints after ``key:`` and ``payload:`` out; they never raise, damage becomes
  ``Error at offset N, skipping. …`` as in kafka-dump-log.
* ``decode_*``: the same records as Python dicts, for programs; they raise
  :class:`~.kafka_message.MessageDecodeError` on bytes that do not read.

What kafka-dump-log prints (``core/src/main/scala/kafka/tools/DumpLogSegments.scala``, Kafka
4.0):

* ``RemoteMetadataLogMessageParser.parse``: no key, and as payload
  ``RemoteLogMetadataSerde.deserialize(value).toString`` — Java's ``toString`` of
  ``RemoteLogSegmentMetadata``, ``RemoteLogSegmentMetadataUpdate``,
  ``RemotePartitionDeleteMetadata`` or ``RemoteLogSegmentMetadataSnapshot`` (storage/api), e.g.
  ``RemotePartitionDeleteMetadata{topicPartition=<topicId>:foo-0, state=DELETE_PARTITION_MARKED,
  eventTimestampMs=0, brokerId=0}``. With ``--jsonl`` the record is given as Kafka's generated
  JSON instead (:func:`remote_log_metadata_json`: ``{"type":"REMOTE_PARTITION_DELETE_METADATA_
  RECORD","version":0,"data":{…}}``), since the ``toString`` is not JSON.
* ``ShareGroupStateMessageParser.parse``: key ``{"type":"0","data":{…}}``, payload
  ``{"type":"0","data":{…}}`` (the value's version, under ``"type"`` too, as the parser's
  ``jsonString`` writes both), ``<DELETE>`` for a tombstone, ``Unknown record type N at offset
  M, skipping.`` for a key type it does not know.
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from typing import Any

from ..errors import KafkaFormatError
from ..format.varint import read_unsigned_varint
from .coordinator import I16, HasKeyValue, decoder_texts, prefix, reason
from .kafka4_schemas import (
    REMOTE_LOG_METADATA_RECORDS_BY_KEY,
    REMOTE_LOG_SEGMENT_STATES,
    REMOTE_PARTITION_DELETE_STATES,
    SHARE_GROUP_STATE_RECORD_TYPES,
)
from .kafka_message import (
    Message,
    MessageDecodeError,
    encode_uvarint,
    json_text,
    json_tree,
    read_message_from,
    write_message,
)
from .metadata_schemas import metadata_type_name

__all__ = [
    "DECODERS",
    "JSON_DECODERS",
    "decode_remote_log_metadata_record",
    "decode_share_group_state_record",
    "encode_remote_log_metadata_record",
    "encode_share_group_state_key",
    "encode_share_group_state_value",
    "remote_log_metadata_decoder",
    "remote_log_metadata_json",
    "remote_log_metadata_json_decoder",
    "remote_log_metadata_text",
    "share_group_state_decoder",
    "share_group_state_json",
]

_FRAME_VERSION = 1
_SHORT_MAX = 0x7FFF
_SEGMENT_METADATA, _SEGMENT_UPDATE, _PARTITION_DELETE, _SEGMENT_SNAPSHOT = 0, 1, 2, 3


def _newer(schema: Message, version: int) -> str:
    if version > schema.valid.hi:
        return f" (version {version} is newer than this schema's {schema.valid.hi})"
    return ""


# --- __remote_log_metadata ------------------------------------------------------------------


def _frame_short(data: bytes, pos: int, entity: str) -> tuple[int, int]:
    """``AbstractApiMessageSerde.unsignedIntToShort``: an unsigned varint that fits a short."""
    try:
        value, after = read_unsigned_varint(data, pos, what=entity)
    except KafkaFormatError:
        raise MessageDecodeError(f"Error while reading {entity}", position=pos) from None
    if not 0 <= value <= _SHORT_MAX:
        raise MessageDecodeError(f"Value for {entity} was too large.", position=pos)
    return value, after


def decode_remote_log_metadata_record(value: bytes | None) -> dict[str, Any]:
    """One ``__remote_log_metadata`` record value as a dict::

        {"frameVersion": 1, "apiKey": 2, "type": "REMOTE_PARTITION_DELETE_METADATA_RECORD",
         "version": 0, "state": "DELETE_PARTITION_MARKED",
         "data": {"topicIdPartition": {"name": "foo", "id": "…", "partition": 0},
                  "brokerId": 0, "eventTimestampMs": 0, "remotePartitionDeleteState": 0}}

    ``state`` names the record's ``remoteLogSegmentState`` / ``remotePartitionDeleteState``
    (None for an id Kafka does not know). An apiKey this schema does not know gives ``type``
    ``UNKNOWN(<apiKey>)``, ``data`` None and ``raw`` (the bytes after the frame header).
    Raises :class:`MessageDecodeError` as ``AbstractApiMessageSerde.read`` fails: a frame
    version other than 1, a record that does not read, bytes left after it.
    """
    if value is None:
        raise MessageDecodeError("remote log metadata record without a value", position=0)
    frame_version, pos = _frame_short(value, 0, "frame version")
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
    api_key, pos = _frame_short(value, pos, "type")
    version, pos = _frame_short(value, pos, "version")
    out: dict[str, Any] = {"frameVersion": frame_version, "apiKey": api_key}
    schema = REMOTE_LOG_METADATA_RECORDS_BY_KEY.get(api_key)
    if schema is None:
        out.update(type=f"UNKNOWN({api_key})", version=version, state=None, data=None)
        out["raw"] = bytes(value[pos:])
        return out
    out.update(type=metadata_type_name(schema.name), version=version)
    try:
        data, used = read_message_from(schema, value, version, offset=pos)
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
    if api_key == _PARTITION_DELETE:
        out["state"] = REMOTE_PARTITION_DELETE_STATES.get(data["remotePartitionDeleteState"])
    else:
        out["state"] = REMOTE_LOG_SEGMENT_STATES.get(data["remoteLogSegmentState"])
    out["data"] = data
    return out


def _topic_id_partition(tp: dict[str, Any]) -> str:
    # TopicIdPartition.toString: topicId + ":" + topic + "-" + partition
    return f"{tp['id']}:{tp['name']}-{tp['partition']}"


def _segment_id(entry: dict[str, Any]) -> str:
    tip = _topic_id_partition(entry["topicIdPartition"])
    return f"RemoteLogSegmentId{{topicIdPartition={tip}, id={entry['id']}}}"


def _custom_metadata(raw: bytes | None) -> str:
    # Optional<CustomMetadata>: "Optional.empty" or "Optional[CustomMetadata{N bytes}]"
    return "Optional.empty" if raw is None else f"Optional[CustomMetadata{{{len(raw)} bytes}}]"


def _leader_epochs(entries: list[dict[str, Any]]) -> str:
    """The transforms put the entries in a HashMap (a repeated epoch: the last wins), the
    metadata keeps a TreeMap: ``{0=0, 3=120}``."""
    epochs = {e["leaderEpoch"]: e["offset"] for e in entries}
    if not epochs:
        raise MessageDecodeError("segmentLeaderEpochs can not be null or empty", position=0)
    return "{" + ", ".join(f"{k}={epochs[k]}" for k in sorted(epochs)) + "}"


def _segment_state(data: dict[str, Any]) -> str:
    state = REMOTE_LOG_SEGMENT_STATES.get(data["remoteLogSegmentState"])
    if state is None:
        raise MessageDecodeError(
            f"state can not be null (unknown RemoteLogSegmentState id "
            f"{data['remoteLogSegmentState']})",
            position=0,
        )
    return state


def remote_log_metadata_text(value: bytes | None) -> str:
    """What kafka-dump-log prints as payload: the ``toString`` of the object
    ``RemoteLogMetadataSerde.deserialize`` builds (with the checks its constructors make, in
    their order). Raises :class:`MessageDecodeError`."""
    record = decode_remote_log_metadata_record(value)
    if record["data"] is None:
        # MetadataRecordType.fromId: UnsupportedVersionException("Unknown metadata id " + id)
        raise MessageDecodeError(f"Unknown metadata id {record['apiKey']}", position=0)
    d = record["data"]
    api_key = record["apiKey"]
    if api_key == _SEGMENT_METADATA:
        # RemoteLogSegmentMetadataTransform: the metadata, then createWithUpdates(update).
        start, end = d["startOffset"], d["endOffset"]
        if start < 0:
            raise MessageDecodeError(
                f"Unexpected start offset = {start}. StartOffset for a remote segment cannot "
                "be negative",
                position=0,
            )
        if end < start:
            raise MessageDecodeError(
                f"Unexpected end offset = {end}. EndOffset for a remote segment cannot be less "
                f"than startOffset = {start}",
                position=0,
            )
        epochs = _leader_epochs(d["segmentLeaderEpochs"])
        state = _segment_state(d)
        return (
            f"RemoteLogSegmentMetadata{{remoteLogSegmentId={_segment_id(d['remoteLogSegmentId'])}"
            f", startOffset={start}, endOffset={end}, brokerId={d['brokerId']}"
            f", maxTimestampMs={d['maxTimestampMs']}, eventTimestampMs={d['eventTimestampMs']}"
            f", segmentLeaderEpochs={epochs}, segmentSizeInBytes={d['segmentSizeInBytes']}"
            f", customMetadata={_custom_metadata(d['customMetadata'])}, state={state}}}"
        )
    if api_key == _SEGMENT_UPDATE:
        state = _segment_state(d)
        return (
            f"RemoteLogSegmentMetadataUpdate{{remoteLogSegmentId="
            f"{_segment_id(d['remoteLogSegmentId'])}"
            f", customMetadata={_custom_metadata(d['customMetadata'])}, state={state}"
            f", eventTimestampMs={d['eventTimestampMs']}, brokerId={d['brokerId']}}}"
        )
    if api_key == _PARTITION_DELETE:
        if record["state"] is None:
            # Kafka: Objects.requireNonNull(state), a NullPointerException without a message
            raise MessageDecodeError(
                f"unknown RemotePartitionDeleteState id {d['remotePartitionDeleteState']}",
                position=0,
            )
        return (
            f"RemotePartitionDeleteMetadata{{topicPartition="
            f"{_topic_id_partition(d['topicIdPartition'])}, state={record['state']}"
            f", eventTimestampMs={d['eventTimestampMs']}, brokerId={d['brokerId']}}}"
        )
    state = _segment_state(d)  # _SEGMENT_SNAPSHOT: the state is checked before the epochs
    epochs = _leader_epochs(d["segmentLeaderEpochs"])
    return (
        f"RemoteLogSegmentMetadataSnapshot{{segmentId={d['segmentId']}"
        f", startOffset={d['startOffset']}, endOffset={d['endOffset']}"
        f", maxTimestampMs={d['maxTimestampMs']}, segmentLeaderEpochs={epochs}"
        f", segmentSizeInBytes={d['segmentSizeInBytes']}"
        f", customMetadata={_custom_metadata(d['customMetadata'])}, state={state}}}"
    )


def remote_log_metadata_json(value: bytes | None) -> str:
    """The record as Kafka's generated JSON converter writes it, framed as
    ``--cluster-metadata-decoder`` frames its records: ``{"type":"REMOTE_LOG_SEGMENT_METADATA_
    RECORD","version":0,"data":{…}}`` (an unknown apiKey: ``{"type":"UNKNOWN(n)","version":v,
    "raw":"<base64>"}``). Raises :class:`MessageDecodeError`."""
    record = decode_remote_log_metadata_record(value)
    if record["data"] is None:
        raw = base64.b64encode(record["raw"]).decode("ascii")
        return json_text({"type": record["type"], "version": record["version"], "raw": raw})
    schema = REMOTE_LOG_METADATA_RECORDS_BY_KEY[record["apiKey"]]
    tree = json_tree(schema, record["data"], record["version"])
    return json_text({"type": record["type"], "version": record["version"], "data": tree})


def remote_log_metadata_decoder(record: HasKeyValue) -> tuple[str | None, str | None]:
    """``--remote-log-metadata-decoder``: kafka-dump-log's ``RemoteMetadataLogMessageParser``
    (no key; the payload is the metadata's ``toString``)."""
    try:
        return None, remote_log_metadata_text(record.value)
    except Exception as exc:  # the decoders never raise: damage is reported as text
        return None, f"Error at offset {record.offset}, skipping. {reason(exc)}"


def remote_log_metadata_json_decoder(record: HasKeyValue) -> tuple[str | None, str | None]:
    """``--remote-log-metadata-decoder`` under ``--jsonl``: the payload as JSON."""
    try:
        return None, remote_log_metadata_json(record.value)
    except Exception as exc:  # the decoders never raise: damage is reported as text
        return None, f"Error at offset {record.offset}, skipping. {reason(exc)}"


# --- __share_group_state --------------------------------------------------------------------


def _read_prefixed(msg: Message, data: bytes, version: int, what: str) -> dict[str, Any]:
    # CoordinatorRecordSerde.readMessage's wording
    try:
        values, used = read_message_from(msg, data, version, offset=2)
        if version > msg.valid.hi and used != len(data):
            # Kafka reads a newer version with the fields it knows and ignores the rest; with
            # bytes left over that reading is garbage: say so rather than print made-up numbers.
            raise MessageDecodeError(f"{len(data) - used} byte(s) left over", position=used)
    except MessageDecodeError as exc:
        raise MessageDecodeError(
            f"Could not read record with version {version} from {what}'s buffer due to: "
            f"{exc.reason}.{_newer(msg, version)}",
            position=exc.position,
        ) from exc
    return values


def decode_share_group_state_record(key: bytes, value: bytes | None) -> dict[str, Any]:
    """One ``__share_group_state`` record as a dict::

        {"recordType": 0, "recordTypeName": "ShareSnapshot",
         "key": {"groupId": "gs1", "topicId": "Uj5wn_FqTXirEASvVZRY1w", "partition": 0},
         "valueVersion": 0, "tombstone": False,
         "value": {"snapshotEpoch": 0, "stateEpoch": 0, "leaderEpoch": 0, "startOffset": 0,
                   "stateBatches": [{"firstOffset": 0, "lastOffset": 4, "deliveryState": 2,
                                     "deliveryCount": 1}]}}

    ``value`` (and ``valueVersion``) is None for a tombstone. For a record type this schema
    does not know, ``recordTypeName``, ``key`` and ``value`` are None and ``rawKey`` /
    ``rawValue`` hold the bytes after the type / version. Raises :class:`MessageDecodeError`.
    """
    record_type = prefix(key, "key")
    out: dict[str, Any] = {"recordType": record_type, "recordTypeName": None, "key": None}
    out["valueVersion"] = None if value is None else prefix(value, "value")
    out["tombstone"] = value is None
    out["value"] = None
    entry = SHARE_GROUP_STATE_RECORD_TYPES.get(record_type)
    if entry is None:
        out["rawKey"] = bytes(key[2:])
        out["rawValue"] = None if value is None else bytes(value[2:])
        return out
    name, key_schema, value_schema = entry
    out["recordTypeName"] = name
    out["key"] = _read_prefixed(key_schema, key, record_type, "key")
    if value is not None:
        out["value"] = _read_prefixed(value_schema, value, out["valueVersion"], "value")
    return out


def share_group_state_json(key: bytes, value: bytes | None) -> tuple[str, str] | None:
    """kafka-dump-log's key and payload texts of a ``__share_group_state`` record (payload
    ``<DELETE>`` for a tombstone); None for a record type this schema does not know. Raises
    :class:`MessageDecodeError`."""
    record_type = prefix(key, "key")
    entry = SHARE_GROUP_STATE_RECORD_TYPES.get(record_type)
    if entry is None:
        return None
    _, key_schema, value_schema = entry
    key_values = _read_prefixed(key_schema, key, record_type, "key")
    payload = "<DELETE>"
    if value is not None:
        version = prefix(value, "value")
        values = _read_prefixed(value_schema, value, version, "value")
        tree = json_tree(value_schema, values, version)
        payload = json_text({"type": str(version), "data": tree})
    key_tree = json_tree(key_schema, key_values, record_type)
    return json_text({"type": str(record_type), "data": key_tree}), payload


def share_group_state_decoder(record: HasKeyValue) -> tuple[str | None, str | None]:
    """``--share-group-state-decoder``: kafka-dump-log's ``ShareGroupStateMessageParser``
    (which throws on a missing key and stops; we say it in place and go on)."""
    return decoder_texts(record, "share group state topic decoder", share_group_state_json)


# --- the decoders, by kafka-dump-log option name --------------------------------------------

#: kafka-dump-log's option name (without ``--``) -> decoder of a record's (key, payload).
DECODERS: dict[str, Callable[[Any], tuple[str | None, str | None]]] = {
    "remote-log-metadata-decoder": remote_log_metadata_decoder,
    "share-group-state-decoder": share_group_state_decoder,
}

#: a decoder whose text is not JSON -> the one ``dump --jsonl`` uses instead.
JSON_DECODERS: dict[Callable[..., Any], Callable[[Any], tuple[str | None, str | None]]] = {
    remote_log_metadata_decoder: remote_log_metadata_json_decoder,
}


# --- encoders: records as the brokers write them (for tests and examples) -------------------


def encode_remote_log_metadata_record(api_key: int, version: int, fields: dict[str, Any]) -> bytes:
    """A ``__remote_log_metadata`` record value: frame version 1, ``api_key``, ``version``."""
    schema = REMOTE_LOG_METADATA_RECORDS_BY_KEY[api_key]
    header = encode_uvarint(_FRAME_VERSION) + encode_uvarint(api_key) + encode_uvarint(version)
    return header + write_message(schema, fields, version)


def encode_share_group_state_key(record_type: int, fields: dict[str, Any]) -> bytes:
    """A ``__share_group_state`` key: ``encode_share_group_state_key(0, {"groupId": "gs1",
    "topicId": "Uj5wn_FqTXirEASvVZRY1w", "partition": 0})``."""
    _, key_schema, _ = SHARE_GROUP_STATE_RECORD_TYPES[record_type]
    return I16.pack(record_type) + write_message(key_schema, fields, record_type)


def encode_share_group_state_value(record_type: int, version: int, fields: dict[str, Any]) -> bytes:
    """A ``__share_group_state`` value of ``record_type`` at ``version``."""
    _, _, value_schema = SHARE_GROUP_STATE_RECORD_TYPES[record_type]
    return I16.pack(version) + write_message(value_schema, fields, version)
