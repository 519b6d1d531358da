"""A partition's producer-state snapshot, ``.snapshot`` (mirrors producer_snapshot.ksy).

Layout (Kafka's ProducerStateManager.java, PID_SNAPSHOT_MAP_SCHEMA; big-endian)::

    ProducerSnapshot =>
      version       int16    1 (the only one Kafka writes and reads)
      crc           uint32   CRC-32C of num_entries .. the end of the file
      num_entries   int32    must not be negative
      entries       Entry[num_entries]
    Entry (46 bytes) =>
      producer_id                int64
      epoch                      int16
      last_sequence              int32
      last_offset                int64
      offset_delta               int32   last offset - first offset of its last batch
      timestamp                  int64   max timestamp of its last batch
      coordinator_epoch          int32
      current_txn_first_offset   int64   -1 when no transaction is open

``build_producer_snapshot`` computes num_entries and the CRC.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from construct import Check, Int16sb, Int32sb, Int32ub, Int64sb, Struct, this
from crc32c import crc32c

VERSION = 1
CRC_SCOPE_OFFSET = 6  # after version and crc

ProducerSnapshotEntry = Struct(
    "producer_id" / Int64sb,
    "epoch" / Int16sb,
    "last_sequence" / Int32sb,
    "last_offset" / Int64sb,
    "offset_delta" / Int32sb,
    "timestamp" / Int64sb,
    "coordinator_epoch" / Int32sb,
    "current_txn_first_offset" / Int64sb,
)

_HEAD_FIELDS = (
    "version" / Int16sb,
    "crc" / Int32ub,
)

_CRC_SCOPE_FIELDS = (
    "num_entries" / Int32sb,
    Check(this.num_entries >= 0),
    "entries" / ProducerSnapshotEntry[this.num_entries],
)

ProducerSnapshot = Struct(*_HEAD_FIELDS, *_CRC_SCOPE_FIELDS)

_Head = Struct(*_HEAD_FIELDS)
_CrcScope = Struct(*_CRC_SCOPE_FIELDS)


def build_producer_snapshot(
    entries: Iterable[Mapping[str, int]], *, version: int = VERSION
) -> bytes:
    """A .snapshot file from mappings with ProducerSnapshotEntry's keys."""
    listed = [dict(e) for e in entries]
    scope = _CrcScope.build({"num_entries": len(listed), "entries": listed})
    return _Head.build({"version": version, "crc": crc32c(scope)}) + scope


def snapshot_crc(data: bytes) -> int:
    """The CRC-32C a snapshot should store: over num_entries .. the end."""
    return crc32c(memoryview(data)[CRC_SCOPE_OFFSET:])
