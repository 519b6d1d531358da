"""A segment's time index, ``.timeindex`` (mirrors time_index.ksy).

Layout (Kafka's TimeIndex.java; big-endian)::

    TimeIndex =>
      entries   Entry[] to the end of the file (a partial entry is an error)
    Entry (12 bytes) =>
      timestamp         int64   largest timestamp so far in the segment, epoch ms
      relative_offset   int32   offset of that record - the segment's base offset

The active segment's index is preallocated: it may end in zero-filled entries.
"""

from __future__ import annotations

from collections.abc import Iterable

from construct import Int32sb, Int64sb, Struct

from kafka_format.schemas.construct_ext import EntriesToEnd

ENTRY_SIZE = 12

TimeIndexEntry = Struct(
    "timestamp" / Int64sb,
    "relative_offset" / Int32sb,
)

TimeIndex = Struct(
    "entries" / EntriesToEnd(TimeIndexEntry, ENTRY_SIZE),
)


def build_time_index(entries: Iterable[tuple[int, int]]) -> bytes:
    """A .timeindex file from (timestamp, relative_offset) pairs."""
    return TimeIndex.build(
        {"entries": [{"timestamp": t, "relative_offset": o} for t, o in entries]}
    )
