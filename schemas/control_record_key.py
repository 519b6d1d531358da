"""The key of a control record (mirrors control_record_key.ksy).

Layout (Kafka's ControlRecordType.java; big-endian)::

    ControlRecordKey =>
      version   int16   0 so far; Kafka reads a newer version as version 0
      type      int16   0 abort, 1 commit (value: end_txn_marker.py), 2 leader_change,
                        3 snapshot_header, 4 snapshot_footer, 5 kraft_version, 6 kraft_voters

Control records sit in batches with the control attribute bit set.
"""

from __future__ import annotations

import enum

from construct import Enum, Int16sb, Struct


class ControlRecordType(enum.IntEnum):
    """What a control record marks (ControlRecordType.java), KRaft types included."""

    abort = 0
    commit = 1
    leader_change = 2
    snapshot_header = 3
    snapshot_footer = 4
    kraft_version = 5
    kraft_voters = 6


ControlRecordKey = Struct(
    "version" / Int16sb,
    "type" / Enum(Int16sb, ControlRecordType),
)


def build_control_record_key(type: int, *, version: int = 0) -> bytes:
    """The 4-byte key of a control record."""
    return ControlRecordKey.build({"version": version, "type": int(type)})
