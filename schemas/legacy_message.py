"""Kafka's legacy message, format v0 (Kafka 0.8-0.9) and v1 (0.10), as a log entry.

Layout (Kafka's LegacyRecord.java; all integers big-endian; mirrors legacy_message.ksy)::

    LegacyMessage =>
      offset         int64   @0   the message's offset (a v1 wrapper: its last inner offset)
      message_size   int32   @8   bytes that follow, crc .. the end of the value
      crc            uint32  @12  CRC-32 (IEEE, zlib's) of magic .. the end
      magic          int8    @16  0 or 1
      attributes     int8    @17  bits 0-2 codec (0 none, 1 gzip, 2 snappy, 3 lz4),
                                  bit 3 timestamp type (v1: 1 = LogAppendTime)
      timestamp      int64   @18  v1 only
      len_key        int32        -1 (any negative) = null key
      key            bytes[len_key]
      len_value      int32        -1 (any negative) = null value
      value          bytes[len_value]

    total size = message_size + 12

A compressed message is a wrapper: its value is an inner message set (legacy entries back to
back, record_set.py), compressed. In v1 the inner offsets are relative (0, 1, ...) and the
wrapper carries the last inner offset; in v0 they are absolute. The parsed Container also
carries the decoded attributes, ``compression`` and ``timestamp_type``.
``build_legacy_message`` computes message_size, the lengths and the CRC.
"""

from __future__ import annotations

import zlib

from construct import (
    Check,
    Computed,
    If,
    Int8sb,
    Int32sb,
    Int32ub,
    Int64sb,
    Rebuild,
    Struct,
    Switch,
    this,
)

from kafka_format.schemas.construct_ext import DerivedEnum, ExactBytes
from kafka_format.schemas.kafka_enums import (
    CODEC_MASK,
    TIMESTAMP_TYPE_BIT,
    CompressionCodec,
    TimestampType,
)

LOG_OVERHEAD = 12  # offset + message_size
CRC_OFFSET = 12
MAGIC_OFFSET = 16
NO_TIMESTAMP = -1


def _nullable_length(name: str):
    def length(context) -> int:
        value = context[name]
        return -1 if value is None else len(value)

    length.__name__ = f"{name}_length"
    return length


_HEAD_FIELDS = (
    "offset" / Int64sb,
    "message_size" / Int32sb,
    "crc" / Int32ub,
)

# magic .. the end: what the CRC covers
_CRC_SCOPE_FIELDS = (
    "magic" / Int8sb,
    Check((this.magic == 0) | (this.magic == 1)),
    "attributes" / Int8sb,
    "compression" / DerivedEnum(Computed(this.attributes & CODEC_MASK), CompressionCodec),
    # LegacyRecord.timestampType: a magic 0 message has none, whatever bit 3 holds.
    "timestamp_type"
    / DerivedEnum(
        Switch(
            this.magic,
            {0: Computed(-1)},
            default=Computed((this.attributes & TIMESTAMP_TYPE_BIT) >> 3),
        ),
        TimestampType,
    ),
    "timestamp" / If(this.magic == 1, Int64sb),
    "len_key" / Rebuild(Int32sb, _nullable_length("key")),
    "key" / If(this.len_key >= 0, ExactBytes(this.len_key)),
    "len_value" / Rebuild(Int32sb, _nullable_length("value")),
    "value" / If(this.len_value >= 0, ExactBytes(this.len_value)),
)

LegacyMessage = Struct(*_HEAD_FIELDS, *_CRC_SCOPE_FIELDS)

_Head = Struct(*_HEAD_FIELDS)
_CrcScope = Struct(*_CRC_SCOPE_FIELDS)


def message_attributes(*, codec: int = CompressionCodec.none, timestamp_type: int = 0) -> int:
    """The attributes int8 of a v0/v1 message from its parts."""
    if not 0 <= int(codec) <= CODEC_MASK:
        raise ValueError(f"codec {codec} does not fit attributes bits 0-2")
    if int(timestamp_type) not in (0, 1):
        raise ValueError(f"timestamp type {timestamp_type} is not 0 or 1")
    return int(codec) | (TIMESTAMP_TYPE_BIT if int(timestamp_type) else 0)


def build_legacy_message(
    *,
    offset: int = 0,
    key: bytes | None = None,
    value: bytes | None = None,
    magic: int = 1,
    timestamp: int | None = None,
    codec: int = CompressionCodec.none,
    timestamp_type: int = TimestampType.create_time,
    attributes: int | None = None,
) -> bytes:
    """One legacy log entry (offset, message_size, message) with the CRC-32 computed.

    For a compressed wrapper pass the compressed inner message set as ``value`` and its
    ``codec``. ``timestamp`` is v1 only (default -1, Kafka's "no timestamp"); ``attributes``
    overrides the bits computed from codec and timestamp_type.
    """
    if magic not in (0, 1):
        raise ValueError(f"legacy messages have magic 0 or 1, not {magic}")
    if magic == 0 and timestamp is not None:
        raise ValueError("magic 0 messages have no timestamp")
    if attributes is None:
        attributes = message_attributes(codec=codec, timestamp_type=timestamp_type)
    scope = _CrcScope.build(
        {
            "magic": magic,
            "attributes": attributes,
            "timestamp": (NO_TIMESTAMP if timestamp is None else timestamp) if magic else None,
            "key": None if key is None else bytes(key),
            "value": None if value is None else bytes(value),
        }
    )
    head = _Head.build({"offset": offset, "message_size": 4 + len(scope), "crc": zlib.crc32(scope)})
    return head + scope


def message_crc(entry: bytes) -> int:
    """The CRC-32 a legacy log entry should store: over magic .. the end."""
    return zlib.crc32(memoryview(entry)[MAGIC_OFFSET:])
