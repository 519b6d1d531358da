"""Codes shared by Kafka's record formats (mirrors kafka_enums.ksy).

Member names are lower-case so that they read the same as the Kaitai schemas' enums (and as
the names Construct's ``Enum`` gives back when parsing).
"""

from __future__ import annotations

import enum


class CompressionCodec(enum.IntEnum):
    """Attributes bits 0-2 (CompressionType.java); magic 0/1 stop at lz4."""

    none = 0
    gzip = 1
    snappy = 2
    lz4 = 3
    zstd = 4


class TimestampType(enum.IntEnum):
    """Attributes bit 3 (TimestampType.java); magic 0 has no timestamp (Kafka's id -1)."""

    no_timestamp_type = -1
    create_time = 0
    log_append_time = 1


class RecordVersion(enum.IntEnum):
    """The magic byte as Kafka names it (RecordVersion.java)."""

    v0 = 0
    v1 = 1
    v2 = 2


# Attribute bits of a v2 batch (DefaultRecordBatch.java) and a v0/v1 message (LegacyRecord.java).
CODEC_MASK = 0x07
TIMESTAMP_TYPE_BIT = 0x08
TRANSACTIONAL_BIT = 0x10
CONTROL_BIT = 0x20
DELETE_HORIZON_BIT = 0x40
