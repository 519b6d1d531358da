"""A segment's offset index, ``.index`` (mirrors offset_index.ksy).

Layout (Kafka's OffsetIndex.java; big-endian)::

    OffsetIndex =>
      entries   Entry[] to the end of the file (a partial entry is an error)
    Entry (8 bytes) =>
      relative_offset   int32   offset - the segment's base offset (from the file name)
      position          int32   byte position in the .log of the batch holding it

The active segment's index is preallocated: it may end in zero-filled entries.
"""

from __future__ import annotations

from collections.abc import Iterable

from construct import Int32sb, Struct

from kafka_format.schemas.construct_ext import EntriesToEnd

ENTRY_SIZE = 8

OffsetIndexEntry = Struct(
    "relative_offset" / Int32sb,
    "position" / Int32sb,
)

OffsetIndex = Struct(
    "entries" / EntriesToEnd(OffsetIndexEntry, ENTRY_SIZE),
)


def build_offset_index(entries: Iterable[tuple[int, int]]) -> bytes:
    """An .index file from (relative_offset, position) pairs."""
    return OffsetIndex.build(
        {"entries": [{"relative_offset": o, "position": p} for o, p in entries]}
    )
