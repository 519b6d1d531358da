"""Reader for producer-state snapshots (``<offset>.snapshot``).

Layout (``storage/src/main/resources/message/ProducerSnapshot.json``, validVersions "1", not
flexible; before KAFKA-17056 the same bytes came from a ``Struct`` schema in
``ProducerStateManager`` with fields version / crc / producer_entries), big-endian::

    offset  size  field
    0       2     version                    int16, 1 (the only version there has ever been)
    2       4     crc                        uint32, CRC-32C of every byte from offset 6 to
                                             the end of the file
    6       4     entry count                int32 (-1 would be a null array: refused)
    10      46*n  entries:
                    producer_id              int64
                    epoch                    int16
                    last_sequence            int32
                    last_offset              int64  (-1: no batch metadata)
                    offset_delta             int32
                    timestamp                int64
                    coordinator_epoch        int32
                    current_txn_first_offset int64  (-1: no transaction in progress)

The offset in the file name is the log offset the snapshot was taken at (exclusive: the state
after every record below it). Checks follow ``ProducerStateManager.readSnapshot``: version,
then the structure, then the CRC; bytes after the last entry are accepted, as Kafka's reader
leaves them unread (the CRC still covers them) -- :attr:`ProducerSnapshot.trailing_bytes`
counts them.
"""

from __future__ import annotations

import os
import struct
from collections.abc import Sequence
from dataclasses import dataclass

from ..errors import CrcMismatchError, IndexFileError
from ..format import layout
from ..format.crc import crc32c
from .names import FileKind, parse_segment_file_name

PRODUCER_SNAPSHOT_VERSION = 1

_HEADER = struct.Struct(layout.SNAPSHOT_HEADER_FORMAT)
_ENTRY = struct.Struct(layout.SNAPSHOT_ENTRY_FORMAT)
_VERSION = layout.field_struct(layout.SNAPSHOT_HEADER_FIELDS, "version")


@dataclass(frozen=True, slots=True)
class ProducerSnapshotEntry:
    """One producer's state, field for field as stored."""

    producer_id: int
    epoch: int
    last_sequence: int
    last_offset: int
    offset_delta: int
    timestamp: int
    coordinator_epoch: int
    current_txn_first_offset: int

    @property
    def has_batch_metadata(self) -> bool:
        """Kafka keeps the last batch's metadata only when ``last_offset >= 0``."""
        return self.last_offset >= 0

    @property
    def ongoing_txn_first_offset(self) -> int | None:
        """The first offset of the open transaction, None when there is none (stored < 0)."""
        return self.current_txn_first_offset if self.current_txn_first_offset >= 0 else None


@dataclass(frozen=True, slots=True)
class ProducerSnapshot:
    """A whole snapshot file."""

    version: int
    crc: int
    entries: tuple[ProducerSnapshotEntry, ...]
    #: The offset from the file name, when it was read from a named file.
    offset: int | None = None
    #: Bytes after the last entry (Kafka ignores them; a writer of ours would not leave any).
    trailing_bytes: int = 0


def parse_producer_snapshot(
    data: bytes | bytearray | memoryview,
    *,
    file: str | None = None,
    offset: int | None = None,
    check_crc: bool = True,
) -> ProducerSnapshot:
    """Decode snapshot bytes; IndexFileError for a bad version or structure,
    CrcMismatchError (algorithm ``crc32c``) when the stored CRC is wrong."""
    buf = memoryview(data).cast("B")

    def fail(position: int, reason: str) -> IndexFileError:
        return IndexFileError(f"producer snapshot: {reason}", file=file, position=position)

    if len(buf) < _VERSION.size:
        raise fail(0, f"{len(buf)} bytes, too short for the version")
    (version,) = _VERSION.unpack_from(buf, layout.SNAPSHOT_VERSION)
    if version != PRODUCER_SNAPSHOT_VERSION:
        raise fail(layout.SNAPSHOT_VERSION, f"unknown file version {version}")
    if len(buf) < _HEADER.size:
        raise fail(len(buf), f"{len(buf)} bytes, too short for the header ({_HEADER.size})")
    _, stored_crc, count = _HEADER.unpack_from(buf, 0)
    if count < 0:
        raise fail(layout.SNAPSHOT_NUM_ENTRIES, f"entry count {count}: a null array")
    end = _HEADER.size + count * layout.SNAPSHOT_ENTRY_SIZE
    if end > len(buf):
        whole = (len(buf) - _HEADER.size) // layout.SNAPSHOT_ENTRY_SIZE
        raise fail(
            _HEADER.size + whole * layout.SNAPSHOT_ENTRY_SIZE,
            f"{count} entries need {end} bytes, the file has {len(buf)}: truncated in entry "
            f"{whole}",
        )
    if check_crc:
        computed = crc32c(buf[layout.SNAPSHOT_CRC_START :])
        if computed != stored_crc:
            raise CrcMismatchError(
                stored_crc, computed, algorithm="crc32c", file=file, position=layout.SNAPSHOT_CRC
            )
    entries = tuple(
        ProducerSnapshotEntry(*fields) for fields in _ENTRY.iter_unpack(buf[_HEADER.size : end])
    )
    return ProducerSnapshot(
        version=version,
        crc=stored_crc,
        entries=entries,
        offset=offset,
        trailing_bytes=len(buf) - end,
    )


def read_producer_snapshot(
    path: str | os.PathLike[str], *, check_crc: bool = True
) -> ProducerSnapshot:
    """Read a ``.snapshot`` file; its offset comes from the name when the name has one."""
    name = os.fspath(path)
    parsed = parse_segment_file_name(os.path.basename(name))
    # A remote object's name gives its segment's start, not the snapshot's offset (the
    # segment's end: RemoteLogManager.copyLogSegment), so it gives none.
    offset = (
        parsed.base_offset
        if parsed is not None
        and parsed.kind is FileKind.PRODUCER_SNAPSHOT
        and parsed.remote_id is None
        else None
    )
    with open(name, "rb") as fh:
        data = fh.read()
    return parse_producer_snapshot(data, file=name, offset=offset, check_crc=check_crc)


def java_hashmap_order(keys: Sequence[int]) -> list[int]:
    """Producer ids in the order ``ProducerStateManager.writeSnapshot`` lists them: a
    ``java.util.HashMap<Long, ...>`` filled in this order iterates by bucket (``Long.hashCode``
    spread as ``HashMap.hash`` does, in a table grown from 16 at load factor 0.75), then by
    insertion within a bucket. Treeified buckets (8+ collisions) are not modelled. (The
    writer's ``write.bookkeeping.java_hashmap_order`` is the same rule, on its side of the
    log/write separation.)"""
    capacity = 16
    while len(keys) > capacity * 3 // 4:
        capacity *= 2

    def bucket(key: int) -> int:
        unsigned = key & 0xFFFFFFFFFFFFFFFF
        h = (unsigned ^ (unsigned >> 32)) & 0xFFFFFFFF
        return (h ^ (h >> 16)) & (capacity - 1)

    order = {k: i for i, k in enumerate(keys)}
    return sorted(keys, key=lambda k: (bucket(k), order[k]))


__all__ = [
    "PRODUCER_SNAPSHOT_VERSION",
    "ProducerSnapshot",
    "ProducerSnapshotEntry",
    "java_hashmap_order",
    "parse_producer_snapshot",
    "read_producer_snapshot",
]
