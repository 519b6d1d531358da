"""Kafka's v2 RecordBatch (magic 2, Kafka 0.11+), as a Construct schema and a builder.

Layout (Kafka's DefaultRecordBatch.java; all integers big-endian)::

    RecordBatch =>
      base_offset             int64   @0   offset of the first record
      batch_length            int32   @8   bytes from partition_leader_epoch to the end
      partition_leader_epoch  int32   @12
      magic                   int8    @16  2
      crc                     uint32  @17  CRC-32C of attributes .. the end of the batch
      attributes              int16   @21  bits 0-2 codec (0 none, 1 gzip, 2 snappy, 3 lz4,
                                           4 zstd), bit 3 timestamp type (1 = LogAppendTime),
                                           bit 4 transactional, bit 5 control,
                                           bit 6 has delete horizon (base_timestamp is it)
      last_offset_delta       int32   @23  offset of the last record - base_offset
      base_timestamp          int64   @27
      max_timestamp           int64   @35
      producer_id             int64   @43  -1 when none
      producer_epoch          int16   @51  -1 when none
      base_sequence           int32   @53  -1 when none
      records_count           int32   @57
      records                 @61          codec none: Record[records_count] (record.py)
      compressed_records      @61          otherwise: the same records, compressed as one blob

    total size = batch_length + 12; records take batch_length - 49 bytes.

Field names follow record_batch.ksy. The parsed Container also carries the decoded attributes
(record_batch.ksy's ``attributes`` type, flattened here beside the raw int16): ``compression``
and ``timestamp_type`` (enums), ``is_transactional``, ``is_control``, ``has_delete_horizon``.
``build_record_batch`` computes batch_length, attributes, counts and the CRC; it takes
compressed records as bytes already compressed (compression is the runtime's job).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from construct import (
    Check,
    Computed,
    Const,
    If,
    Int8sb,
    Int16sb,
    Int32sb,
    Int32ub,
    Int64sb,
    Struct,
    this,
)
from crc32c import crc32c

from kafka_format.schemas.construct_ext import DerivedEnum, ExactBytes, ExactSized
from kafka_format.schemas.kafka_enums import (
    CODEC_MASK,
    CONTROL_BIT,
    DELETE_HORIZON_BIT,
    TIMESTAMP_TYPE_BIT,
    TRANSACTIONAL_BIT,
    CompressionCodec,
    TimestampType,
)
from kafka_format.schemas.record import Record, RecordSpec, as_record_spec, build_record

MAGIC = 2
LOG_OVERHEAD = 12  # base_offset + batch_length
CRC_OFFSET = 17
ATTRIBUTES_OFFSET = 21
RECORDS_OFFSET = 61
# batch_length of a batch without records: the header after the length field
HEADER_AFTER_LENGTH = RECORDS_OFFSET - LOG_OVERHEAD

_HEAD_FIELDS = (
    "base_offset" / Int64sb,
    "batch_length" / Int32sb,
    Check(this.batch_length >= HEADER_AFTER_LENGTH),
    "partition_leader_epoch" / Int32sb,
    "magic" / Const(MAGIC, Int8sb),
    "crc" / Int32ub,
)

# attributes .. records_count: the fixed part that the CRC covers
_CRC_SCOPE_FIELDS = (
    "attributes" / Int16sb,
    "compression" / DerivedEnum(Computed(this.attributes & CODEC_MASK), CompressionCodec),
    "timestamp_type"
    / DerivedEnum(Computed((this.attributes & TIMESTAMP_TYPE_BIT) >> 3), TimestampType),
    "is_transactional" / Computed((this.attributes & TRANSACTIONAL_BIT) != 0),
    "is_control" / Computed((this.attributes & CONTROL_BIT) != 0),
    "has_delete_horizon" / Computed((this.attributes & DELETE_HORIZON_BIT) != 0),
    "last_offset_delta" / Int32sb,
    "base_timestamp" / Int64sb,
    "max_timestamp" / Int64sb,
    "producer_id" / Int64sb,
    "producer_epoch" / Int16sb,
    "base_sequence" / Int32sb,
    "records_count" / Int32sb,
    Check(this.records_count >= 0),
)

_PAYLOAD_FIELDS = (
    "records"
    / If(
        (this.attributes & CODEC_MASK) == 0,
        ExactSized(this.batch_length - HEADER_AFTER_LENGTH, Record[this.records_count]),
    ),
    "compressed_records"
    / If(
        (this.attributes & CODEC_MASK) != 0,
        ExactBytes(this.batch_length - HEADER_AFTER_LENGTH),
    ),
)

RecordBatch = Struct(*_HEAD_FIELDS, *_CRC_SCOPE_FIELDS, *_PAYLOAD_FIELDS)

_Head = Struct(*_HEAD_FIELDS)
_CrcScope = Struct(*_CRC_SCOPE_FIELDS)


def batch_attributes(
    *,
    codec: int = CompressionCodec.none,
    timestamp_type: int = TimestampType.create_time,
    is_transactional: bool = False,
    is_control: bool = False,
    has_delete_horizon: bool = False,
) -> int:
    """The attributes int16 of a v2 batch from its parts."""
    if not 0 <= int(codec) <= CODEC_MASK:
        raise ValueError(f"codec {codec} does not fit attributes bits 0-2")
    if int(timestamp_type) not in (0, 1):
        raise ValueError(f"timestamp type {timestamp_type} is not 0 or 1")
    return (
        int(codec)
        | (TIMESTAMP_TYPE_BIT if int(timestamp_type) else 0)
        | (TRANSACTIONAL_BIT if is_transactional else 0)
        | (CONTROL_BIT if is_control else 0)
        | (DELETE_HORIZON_BIT if has_delete_horizon else 0)
    )


def build_record_batch(
    records: Iterable[RecordSpec | Mapping[str, Any]] = (),
    *,
    base_offset: int = 0,
    partition_leader_epoch: int = -1,
    base_timestamp: int = 0,
    max_timestamp: int | None = None,
    last_offset_delta: int | None = None,
    producer_id: int = -1,
    producer_epoch: int = -1,
    base_sequence: int = -1,
    codec: int = CompressionCodec.none,
    timestamp_type: int = TimestampType.create_time,
    is_transactional: bool = False,
    is_control: bool = False,
    has_delete_horizon: bool = False,
    attributes: int | None = None,
    compressed_payload: bytes | None = None,
    records_count: int | None = None,
) -> bytes:
    """One complete v2 batch (frame included), with batch_length and CRC-32C computed.

    Uncompressed (``codec`` none): ``records`` are built here. Compressed: pass the records
    already serialized and compressed as ``compressed_payload`` and their ``records_count``.
    ``attributes`` overrides the bits computed from codec / timestamp_type / flags (its codec
    bits still decide how the payload is laid out). Defaults follow Kafka's writer:
    last_offset_delta is the last record's offset delta (records_count - 1 when compressed),
    max_timestamp is base_timestamp + the largest timestamp delta (-1 for an empty batch).
    """
    if attributes is None:
        attributes = batch_attributes(
            codec=codec,
            timestamp_type=timestamp_type,
            is_transactional=is_transactional,
            is_control=is_control,
            has_delete_horizon=has_delete_horizon,
        )
    compressed = (attributes & CODEC_MASK) != 0
    specs = [as_record_spec(r) for r in records]
    if compressed:
        if compressed_payload is None or specs:
            raise ValueError("a compressed batch takes compressed_payload, not records")
        if records_count is None:
            raise ValueError("a compressed batch needs records_count")
        payload = bytes(compressed_payload)
        if last_offset_delta is None:
            last_offset_delta = max(records_count - 1, 0)
        if max_timestamp is None:
            max_timestamp = base_timestamp
    else:
        if compressed_payload is not None:
            raise ValueError("compressed_payload given but the codec bits say none")
        if records_count is None:
            records_count = len(specs)
        payload = b"".join(build_record(s) for s in specs)
        if last_offset_delta is None:
            last_offset_delta = specs[-1].offset_delta if specs else 0
        if max_timestamp is None:
            deltas = [s.timestamp_delta for s in specs]
            max_timestamp = base_timestamp + max(deltas) if deltas else -1

    scope = _CrcScope.build(
        {
            "attributes": attributes,
            "last_offset_delta": last_offset_delta,
            "base_timestamp": base_timestamp,
            "max_timestamp": max_timestamp,
            "producer_id": producer_id,
            "producer_epoch": producer_epoch,
            "base_sequence": base_sequence,
            "records_count": records_count,
        }
    )
    head = _Head.build(
        {
            "base_offset": base_offset,
            "batch_length": HEADER_AFTER_LENGTH + len(payload),
            "partition_leader_epoch": partition_leader_epoch,
            "magic": MAGIC,
            "crc": crc32c(payload, crc32c(scope)),
        }
    )
    return head + scope + payload


def batch_crc(batch: bytes) -> int:
    """The CRC-32C a v2 batch should store: over attributes .. the end."""
    return crc32c(memoryview(batch)[ATTRIBUTES_OFFSET:])
