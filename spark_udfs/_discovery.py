"""What a kafka_log path names, by the runtime's rules: partitions, and the segments of each.

A path (or each match of a glob) goes through
:func:`kafka_format.runtime.read.sources.discover`, the very code the CLI and ``read_table``
use, over a :class:`~kafka_format.runtime.files.storage.Storage` (the local disk, or the
``pyarrow.fs`` filesystem of a URI). So the broker's directory rules hold here too, globs
included: ``topic-N.<uuid>-delete``, ``-future`` and ``-stray`` directories and ``.deleted``,
``.cleaned`` and ``.swap`` files are never read as data; each one passed over is logged once on
the driver (``kafka_format.spark_udfs`` logger, WARNING: ``kafka_log: skipped <path>:
<reason>``; the Python Data Source API has no custom metrics to count them in).

Each partition directory becomes a :class:`~kafka_format.runtime.log.partition.Partition` on
that storage (its look-ups plan the read); a lone file named like a segment brings its
``.index`` / ``.timeindex`` / ``.txnindex`` siblings; any other lone file is read as one
segment of concatenated batches. Glob matches are forgiving where an explicit path is not: a
matched file that is not a ``.log`` segment (checkpoints, ``meta.properties``) or a matched
directory with no segments is passed over, since ``/var/lib/kafka/*`` names such files too.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

import pyarrow.fs as pafs

from ..runtime.errors import KafkaFormatError
from ..runtime.files.names import FileKind, parse_segment_file_name, segment_file_name
from ..runtime.files.storage import LOCAL, ArrowStorage, LocalStorage, Storage
from ..runtime.log.partition import Partition, Segment
from ..runtime.read.sources import Skipped, Target
from ..runtime.read.sources import discover as discover_targets
from ._fs import FsRef, expand_glob, has_glob

LOG = logging.getLogger("kafka_format.spark_udfs")


@dataclass(frozen=True, slots=True)
class SegmentFiles:
    """One segment: its log and whichever index files exist beside it (paths as strings)."""

    log: str
    size: int
    #: From the file name; None for a file not named like a segment.
    base_offset: int | None
    index: str | None = None
    timeindex: str | None = None
    txnindex: str | None = None


@dataclass(frozen=True, slots=True)
class PartitionFiles:
    """A partition's segments in base-offset order, and the runtime's view of it."""

    topic: str | None
    partition: int | None
    segments: tuple[SegmentFiles, ...]
    #: The partition layer's object (for a lone file not named like a segment, one whose
    #: only segment has base offset 0, so that its look-ups still work).
    log: Partition | None = None


@dataclass(slots=True)
class Discovered:
    partitions: list[PartitionFiles]
    skipped: list[Skipped]


def storage_of(ref: FsRef, fs: pafs.FileSystem) -> Storage:
    """Memory-mapped local files for a bare path; pyarrow ranged reads for a URI."""
    return LOCAL if ref.uri is None else ArrowStorage(fs, ref.display)


def find(storage: Storage, path: str, *, quiet: bool = False) -> Discovered:
    """The partitions under ``path`` (a file, partition dir, log dir, or glob), and what the
    broker's rules passed over (each logged once; ``quiet``: not logged, for a look that is
    not the read's planning, e.g. the topics whose schemas type a payload column)."""
    found = Discovered([], [])
    if not has_glob(path):
        _add(storage, discover_targets(storage, path, explicit=True), found)
    else:
        fs = storage.fs if isinstance(storage, ArrowStorage) else pafs.LocalFileSystem()
        for match in expand_glob(fs, path):
            _add(storage, discover_targets(storage, match, explicit=False), found)
        if not found.partitions and not found.skipped:
            raise KafkaFormatError(
                "the glob matches no .log segment, partition directory or log directory",
                file=storage.display(path),
            )
    seen = set()
    unique = []
    for item in found.skipped:
        if item.path not in seen:
            seen.add(item.path)
            unique.append(item)
            if not quiet:
                LOG.warning("kafka_log: skipped %s: %s", item.path, item.reason)
    found.skipped = unique
    return found


def discover(fs: pafs.FileSystem, path: str) -> list[PartitionFiles]:
    """The partitions under ``path`` on a ``pyarrow.fs`` filesystem (see :func:`find`)."""
    return find(ArrowStorage(fs), path).partitions


def _add(storage: Storage, targets, found: Discovered) -> None:
    found.skipped.extend(targets.skipped)
    for target in targets.targets:
        if target.is_dir:
            log = Partition.from_listing(target.path, target.entries, storage)
        else:
            log = _lone_file(storage, target)
        found.partitions.append(_files(log, lone_base=target.is_dir or _named_like_segment(target)))


def _named_like_segment(target: Target) -> bool:
    parsed = parse_segment_file_name(target.path.rstrip("/").rsplit("/", 1)[-1])
    return parsed is not None and parsed.kind is FileKind.LOG and parsed.is_live


def _lone_file(storage: Storage, target: Target) -> Partition:
    """A partition of the one file (with its index siblings when it is named like a
    segment)."""
    parent = storage.parent(target.path)
    name = target.path.rstrip("/").rsplit("/", 1)[-1]
    parsed = parse_segment_file_name(name)
    if parsed is not None and parsed.kind is FileKind.LOG and parsed.is_live:
        kinds = (FileKind.LOG, FileKind.INDEX, FileKind.TIME_INDEX, FileKind.TXN_INDEX)
        # a tiered-storage object's siblings share its offset and id (parsed.sibling)
        paths = [
            storage.join(
                parent,
                parsed.sibling(k)
                if parsed.remote_id is not None
                else segment_file_name(parsed.base_offset, k),
            )
            for k in kinds
        ]
        entries = [e for e in (storage.info(p) for p in paths) if e is not None]
        return Partition.from_listing(parent, entries, storage)
    as_path = Path if isinstance(storage, LocalStorage) else PurePosixPath
    segment = Segment(0, as_path(target.path), None, None, None, target.size)
    return Partition(as_path(parent), None, None, [segment], [], None, storage=storage)


def _files(log: Partition, *, lone_base: bool) -> PartitionFiles:
    segments = tuple(
        SegmentFiles(
            log=str(s.log),
            size=s.size,
            base_offset=s.base_offset if lone_base else None,
            index=None if s.index is None else str(s.index),
            timeindex=None if s.timeindex is None else str(s.timeindex),
            txnindex=None if s.txnindex is None else str(s.txnindex),
        )
        for s in log.segments
    )
    return PartitionFiles(log.topic, log.partition, segments, log)


__all__ = ["Discovered", "PartitionFiles", "SegmentFiles", "discover", "find", "storage_of"]
