"""What a kafka_log path names: partitions, and the segment files of each.

A path (or each match of a glob) is one of

* a file: read as one segment (a ``.log``, or any file of concatenated batches); when it is
  named like a segment its ``.index`` / ``.timeindex`` / ``.txnindex`` siblings come along;
* a partition directory (``topic-N``), recognised by holding live ``.log`` segments;
* a Kafka log directory: its live partition directories (not ``-delete`` / ``-future`` /
  ``-stray`` ones), by topic then partition.

Glob matches are forgiving where an explicit path is not: a matched file that is not a
``.log`` segment (checkpoints, ``meta.properties``) or a matched directory with no segments
is passed over, since ``/var/lib/kafka/*`` names such files too.
"""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow.fs as pafs

from ..runtime.errors import KafkaFormatError
from ..runtime.files.names import (
    DirState,
    FileKind,
    parse_partition_dir_name,
    parse_segment_file_name,
    segment_file_name,
)
from ._fs import expand_glob, has_glob, list_dir


@dataclass(frozen=True, slots=True)
class SegmentFiles:
    """One segment: its log and whichever index files exist beside it."""

    log: str
    size: int
    #: From the file name; None for a file not named like a segment.
    base_offset: int | None
    index: str | None = None
    timeindex: str | None = None
    txnindex: str | None = None


@dataclass(frozen=True, slots=True)
class PartitionFiles:
    """A partition's segments in base-offset order."""

    topic: str | None
    partition: int | None
    segments: tuple[SegmentFiles, ...]


def discover(fs: pafs.FileSystem, path: str) -> list[PartitionFiles]:
    """The partitions under ``path`` (a file, partition dir, log dir, or glob)."""
    if not has_glob(path):
        found = _target(fs, fs.get_file_info(path), explicit=True)
        return found
    matches = expand_glob(fs, path)
    found = []
    for info in fs.get_file_info(matches):
        found.extend(_target(fs, info, explicit=False))
    if not found:
        raise KafkaFormatError(
            "the glob matches no .log segment, partition directory or log directory", file=path
        )
    return found


def _target(fs: pafs.FileSystem, info: pafs.FileInfo, *, explicit: bool) -> list[PartitionFiles]:
    if info.type == pafs.FileType.NotFound:
        raise KafkaFormatError("no such file or directory", file=info.path)
    if info.type == pafs.FileType.File:
        parsed = parse_segment_file_name(info.base_name)
        is_log = parsed is not None and parsed.kind is FileKind.LOG and parsed.is_live
        if not explicit and not is_log:
            return []
        return [_single_file(fs, info)]
    entries = list_dir(fs, info.path)
    if any(_live_log(e) is not None for e in entries):
        return [_partition(info.path, entries)]
    subdirs = []
    for entry in entries:
        if entry.type != pafs.FileType.Directory:
            continue
        try:
            parsed_dir = parse_partition_dir_name(entry.base_name)
        except KafkaFormatError:
            continue
        if parsed_dir.state is DirState.LIVE:
            subdirs.append((parsed_dir.topic, parsed_dir.partition, entry.path))
    found = [_partition(p, list_dir(fs, p)) for _, _, p in sorted(subdirs)]
    found = [p for p in found if p.segments]
    if not found and explicit:
        raise KafkaFormatError(
            "no .log segments here, nor partition directories (topic-N) holding them",
            file=info.path,
        )
    return found


def _live_log(info: pafs.FileInfo) -> int | None:
    if info.type != pafs.FileType.File:
        return None
    parsed = parse_segment_file_name(info.base_name)
    if parsed is None or parsed.kind is not FileKind.LOG or not parsed.is_live:
        return None
    return parsed.base_offset


def _topic_partition(directory: str) -> tuple[str | None, int | None]:
    name = directory.rstrip("/").rsplit("/", 1)[-1]
    try:
        parsed = parse_partition_dir_name(name)
    except KafkaFormatError:
        return None, None
    return parsed.topic, parsed.partition


def _partition(directory: str, entries: list[pafs.FileInfo]) -> PartitionFiles:
    logs: dict[int, pafs.FileInfo] = {}
    companions: dict[FileKind, dict[int, str]] = {
        FileKind.INDEX: {},
        FileKind.TIME_INDEX: {},
        FileKind.TXN_INDEX: {},
    }
    for entry in entries:
        if entry.type != pafs.FileType.File:
            continue
        parsed = parse_segment_file_name(entry.base_name)
        if parsed is None or not parsed.is_live:
            continue
        if parsed.kind is FileKind.LOG:
            logs[parsed.base_offset] = entry
        elif parsed.kind in companions:
            companions[parsed.kind][parsed.base_offset] = entry.path
    topic, partition = _topic_partition(directory)
    segments = tuple(
        SegmentFiles(
            log=info.path,
            size=info.size,
            base_offset=base,
            index=companions[FileKind.INDEX].get(base),
            timeindex=companions[FileKind.TIME_INDEX].get(base),
            txnindex=companions[FileKind.TXN_INDEX].get(base),
        )
        for base, info in sorted(logs.items())
    )
    return PartitionFiles(topic, partition, segments)


def _single_file(fs: pafs.FileSystem, info: pafs.FileInfo) -> PartitionFiles:
    parsed = parse_segment_file_name(info.base_name)
    directory = info.path.rsplit("/", 1)[0] if "/" in info.path else ""
    if parsed is None or parsed.kind is not FileKind.LOG:
        return PartitionFiles(None, None, (SegmentFiles(info.path, info.size, None),))
    base = parsed.base_offset
    kinds = (FileKind.INDEX, FileKind.TIME_INDEX, FileKind.TXN_INDEX)
    siblings = [_join(directory, segment_file_name(base, kind)) for kind in kinds]
    present = [s.path if s.type == pafs.FileType.File else None for s in fs.get_file_info(siblings)]
    topic, partition = _topic_partition(directory)
    segment = SegmentFiles(info.path, info.size, base, *present)
    return PartitionFiles(topic, partition, (segment,))


def _join(directory: str, name: str) -> str:
    return f"{directory}/{name}" if directory else name
