"""What a caller may hand us, resolved into log files to read in order.

A source is bytes (or a memoryview), a path to a ``.log`` file or any file of concatenated
batches, a partition directory (``topic-N``), a Kafka log directory holding partition
directories, or a binary file object. Files are memory-mapped, so a multi-GB segment costs
address space, not memory; file objects that cannot be mapped are read frame by frame.

The broker's directory rules hold on every path (:func:`discover`, over any
:class:`~kafka_format.runtime.files.storage.Storage`): directories ending ``-delete``,
``-future`` or ``-stray`` and files ending ``.deleted``, ``.cleaned`` or ``.swap`` are never
read as data, whether named explicitly, matched by a glob or found inside a directory. What was
passed over is said: :attr:`Resolved.skipped` (path and reason), which the CLI prints.
"""

from __future__ import annotations

import contextlib
import functools
import io
import itertools
import mmap
import os
import shutil
import stat
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from ..errors import KafkaFormatError
from ..files.names import (
    DirState,
    FileKind,
    ambiguous_segment,
    parse_partition_dir_name,
    parse_remote_partition_dir_name,
    parse_segment_file_name,
    skip_reason,
)
from ..files.storage import LOCAL, Entry, Storage

Source = bytes | bytearray | memoryview | str | os.PathLike | BinaryIO


@dataclass(slots=True)
class LogInput:
    """One file (or buffer) of concatenated batches, with what its location tells."""

    name: str
    topic: str | None = None
    partition: int | None = None
    #: Base offset from a segment file name; None for anything else.
    base_offset: int | None = None
    path: Path | None = None
    data: Any = None  # bytes-like or a binary file object when there is no path
    #: The whole file's size when ``data`` holds only part of it (a piece of a Spark task's
    #: split of a remote file): a batch running past the end of ``data`` is then no tail.
    size: int | None = None
    #: Where ``data`` starts in that file: positions are reported in the file's terms. Read
    #: by the columnar reader's strict and skip walks (Spark's remote pieces).
    origin: int = 0
    #: The segment's offset checks (``segment_offsets.SegmentOffsets``) to go on with: the
    #: pieces of one split read in turn share one, so that each batch is judged against the
    #: batch before it, as in one read of the split (None: a fresh one for this input).
    offsets: Any = None
    #: The base offset of the next segment of the same partition directory (None: the last
    #: segment, or a file read on its own): a batch of this segment lies below it.
    next_base: int | None = None

    def known_size(self) -> int | None:
        """The bytes there are to read: the file's or the buffer's; None where unknown (a
        file object, a file that cannot be looked at: its read says why)."""
        if self.path is not None:
            try:
                return self.path.stat().st_size
            except OSError:
                return None
        return len(self.data) if isinstance(self.data, bytes | bytearray | memoryview) else None

    @contextmanager
    def open(self) -> Iterator[memoryview | BinaryIO]:
        """A memoryview over the whole input, or a stream when it cannot be mapped."""
        if self.path is not None:
            with open(self.path, "rb") as fh:
                info = os.fstat(fh.fileno())
                if not stat.S_ISREG(info.st_mode):
                    # A pipe, a FIFO, /dev/stdin, a socket: its size says 0 and it cannot
                    # be mapped, but it has bytes. Read as a stream, frame by frame.
                    yield fh
                    return
                size = info.st_size
                if size == 0:
                    yield memoryview(b"")
                    return
                mapped = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
                view = memoryview(mapped)
                try:
                    yield view
                finally:
                    view.release()
                    _close_mmap(mapped)
            return
        if isinstance(self.data, bytes | bytearray | memoryview | mmap.mmap):
            yield memoryview(self.data).cast("B")
            return
        stream = self.data
        fileno = mappable_fileno(stream)
        if fileno is not None:
            mapped = mmap.mmap(fileno, 0, access=mmap.ACCESS_READ)
            view = memoryview(mapped)
            try:
                yield view[stream.tell() :] if stream.seekable() else view
            finally:
                view.release()
                _close_mmap(mapped)
            return
        yield stream


def is_stream_path(path: str | os.PathLike[str]) -> bool:
    """Whether a local path names something that is not a regular file or a directory (a
    FIFO, ``/dev/stdin`` on a pipe, a socket): it can be read once, as a stream."""
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):
        return False
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


def reads_once(source: Source) -> bool:
    """Whether ``source`` can be read only once: a file object that cannot be mapped, or a
    path to a pipe. A caller that needs two passes (read_committed) holds it in memory."""
    if isinstance(source, bytes | bytearray | memoryview):
        return False
    if hasattr(source, "read"):
        return mappable_fileno(source) is None  # type: ignore[arg-type]
    try:
        return is_stream_path(os.fspath(source))
    except TypeError:
        return False


def read_once(source: Source) -> tuple[bytes, str]:
    """The whole of a source :func:`reads_once` says is read once, and its name."""
    if hasattr(source, "read"):
        return source.read(), getattr(source, "name", None) or "<stream>"  # type: ignore[union-attr]
    path = os.fspath(source)  # type: ignore[arg-type]
    with open(path, "rb") as fh:
        return fh.read(), path


#: Bytes a spool copies at a time: the pipe is read once, in chunks, never whole in memory.
_SPOOL_CHUNK = 1 << 20


@contextmanager
def spooled(path: str | os.PathLike[str], *, file_name: str = "input") -> Iterator[Path]:
    """What a pipe, a FIFO or ``/dev/stdin`` holds, read once to its end into a regular
    file (``file_name`` in a temporary directory of its own, under ``$TMPDIR``), removed on
    leaving: for readers that map a file or read it more than once, which a stream cannot
    give them. Memory stays bounded; the disk holds the copy."""
    with tempfile.TemporaryDirectory(prefix="kafka-format-") as directory:
        target = Path(directory) / file_name
        with open(path, "rb") as src, open(target, "wb") as dst:
            shutil.copyfileobj(src, dst, _SPOOL_CHUNK)
        yield target


def mappable_fileno(stream: BinaryIO) -> int | None:
    """The stream's file descriptor if it can be memory-mapped (a real, seekable, non-empty
    file), else None: the stream is then read as a stream."""
    try:
        fileno = stream.fileno()
        if os.fstat(fileno).st_size == 0 or not stream.seekable():
            return None
        return fileno
    except (OSError, AttributeError, ValueError, io.UnsupportedOperation):
        return None


def _close_mmap(mapped: mmap.mmap) -> None:
    # A caller may still hold a slice; the map then closes when that slice is collected.
    with contextlib.suppress(BufferError):
        mapped.close()


@dataclass(frozen=True, slots=True)
class Skipped:
    """A path the broker's rules keep from being read as data, and why."""

    path: str
    reason: str


class Resolved(list):
    """The :class:`LogInput` list :func:`resolve` returns, with what it passed over."""

    __slots__ = ("skipped",)

    def __init__(self, inputs=(), skipped=()) -> None:
        super().__init__(inputs)
        self.skipped: list[Skipped] = list(skipped)


@dataclass(frozen=True, slots=True)
class Target:
    """Something to read: a partition directory (with its listing) or a lone file."""

    path: str
    is_dir: bool
    topic: str | None = None
    partition: int | None = None
    #: A file's size; 0 for a directory.
    size: int = 0
    #: A partition directory's entries, so that opening it does not list it again.
    entries: tuple[Entry, ...] = ()


@dataclass(slots=True)
class Discovery:
    """What a path names, in the order a consumer reads it, and what was passed over."""

    targets: list[Target]
    skipped: list[Skipped]


def discover(storage: Storage, path: str, *, explicit: bool = True) -> Discovery:
    """Partitions and files under ``path`` on ``storage``, by the broker's directory rules.

    ``path`` is a file (one segment, or any file of batches), a partition directory (one
    holding live ``.log`` segments), or a log directory (its live ``topic-N`` directories, by
    topic then partition). ``explicit=False`` is for glob matches, which may name anything in
    a log dir: a file that is not a live ``.log`` and a directory holding no partition are
    passed over silently. Raises :class:`KafkaFormatError` for an explicit path that does not
    exist or holds nothing to read.
    """
    found = Discovery([], [])
    info = storage.info(path)
    if info is None:
        raise KafkaFormatError("no such file or directory", file=storage.display(path))
    reason = _own_skip_reason(storage, info)
    if reason is not None:
        found.skipped.append(Skipped(storage.display(info.path), reason))
        return found
    if not info.is_dir:
        parsed = parse_segment_file_name(info.name)
        is_log = parsed is not None and parsed.kind is FileKind.LOG
        if explicit or is_log:
            topic, partition = (
                _topic_partition(storage.parent(info.path)) if is_log else (None,) * 2
            )
            found.targets.append(Target(info.path, False, topic, partition, info.size))
        return found
    # Sizes of the segments only: Spark's planner takes them from here (Partition.from_listing);
    # the indexes, three files in four, are named, not sized.
    entries = storage.list_dir(info.path, sized=_is_log_name)
    if any(_live_log(e) is not None for e in entries):
        _add_partition(storage, info.path, entries, found)
        return found
    subdirs = []
    for entry in sorted(entries, key=lambda e: e.name):
        if not entry.is_dir:
            continue
        try:
            parsed_dir = parse_partition_dir_name(entry.name)
        except KafkaFormatError:
            remote = parse_remote_partition_dir_name(entry.name)
            if remote is not None:  # tiered storage's topic-N-<topic id>
                subdirs.append((remote.topic, remote.partition, entry.path))
            continue
        if parsed_dir.state is not DirState.LIVE:
            reason = skip_reason(entry.name, is_dir=True)
            found.skipped.append(Skipped(storage.display(entry.path), reason or "not live"))
            continue
        subdirs.append((parsed_dir.topic, parsed_dir.partition, entry.path))
    for _, _, sub in sorted(subdirs):
        _add_partition(storage, sub, storage.list_dir(sub, sized=_is_log_name), found)
    if not found.targets and explicit and not found.skipped:
        raise KafkaFormatError(
            "no .log segments here, nor partition directories (topic-N) holding them",
            file=storage.display(info.path),
        )
    return found


def _own_skip_reason(storage: Storage, info: Entry) -> str | None:
    """Why the path itself is not read: its own name, or a file's non-live directory."""
    reason = skip_reason(info.name, is_dir=info.is_dir)
    if reason is None and not info.is_dir:
        reason = skip_reason(_base_name(storage.parent(info.path)), is_dir=True)
    return reason


def skipped_itself(path: str | os.PathLike[str]) -> bool:
    """Whether a local path is itself one the broker's rules keep from being read."""
    info = LOCAL.info(path)
    return info is not None and _own_skip_reason(LOCAL, info) is not None


def _add_partition(
    storage: Storage, directory: str, entries: list[Entry], found: Discovery
) -> None:
    for entry in sorted(entries, key=lambda e: e.name):
        reason = None if entry.is_dir else skip_reason(entry.name, is_dir=False)
        if reason is not None and parse_segment_file_name(entry.name) is not None:
            found.skipped.append(Skipped(storage.display(entry.path), reason))
    if any(_live_log(e) is not None for e in entries):
        topic, partition = _topic_partition(directory)
        found.targets.append(Target(directory, True, topic, partition, 0, tuple(entries)))


#: A segment's suffix, looked up once: a listing tests every name of every partition.
_LOG_SUFFIX = FileKind.LOG.suffix


def _is_log_name(name: str) -> bool:
    """Whether a name may be a segment's, live or not (``.log``, then perhaps a suffix)."""
    return _LOG_SUFFIX in name


def _live_log(entry: Entry) -> int | None:
    # A live segment's name ends in ".log" (a temporary suffix follows it): the test spares
    # parsing the indexes' names, three in four of a partition's files.
    if entry.is_dir or not entry.name.endswith(_LOG_SUFFIX):
        return None
    parsed = parse_segment_file_name(entry.name)
    if parsed is None or parsed.kind is not FileKind.LOG or not parsed.is_live:
        return None
    return parsed.base_offset


def _base_name(path: str) -> str:
    return str(path).rstrip("/").rstrip(os.sep).replace(os.sep, "/").rsplit("/", 1)[-1]


def resolve(source: Source, *, name: str | None = None) -> Resolved:
    """The log inputs of a source, in the order a consumer would read them; a list, whose
    ``skipped`` attribute names what the broker's rules kept from being read."""
    if isinstance(source, bytes | bytearray | memoryview):
        return Resolved([LogInput(name or "<bytes>", data=source)])
    if hasattr(source, "read"):
        return Resolved(
            [LogInput(name or getattr(source, "name", None) or "<stream>", data=source)]
        )
    found = discover(LOCAL, os.fspath(source))
    inputs: list[LogInput] = []
    for target in found.targets:
        if target.is_dir:
            inputs.extend(_partition_inputs(Path(target.path), target.entries))
            continue
        inputs.append(file_input(target))
    return Resolved(inputs, found.skipped)


def file_input(target: Target) -> LogInput:
    """A lone file's input: its partition from the directory it lies in, its base offset
    from its name when that is a segment's."""
    path = Path(target.path)
    parsed = parse_segment_file_name(path.name)
    return LogInput(
        str(path),
        topic=target.topic,
        partition=target.partition,
        base_offset=parsed.base_offset if parsed else None,
        path=path,
    )


def skipped_paths(paths: list[str | os.PathLike[str]]) -> list[Skipped]:
    """What the broker's rules keep from being read under these (local) paths, each once;
    paths that do not exist or hold nothing are left to the command that reads them."""
    seen: dict[str, Skipped] = {}
    for path in paths:
        try:
            found = discover(LOCAL, os.fspath(path))
        except (KafkaFormatError, OSError):
            continue
        for skipped in found.skipped:
            seen.setdefault(skipped.path, skipped)
    return list(seen.values())


def partition_dirs(log_dir: Path) -> list[Path]:
    """Live partition directories of a log dir, by topic then partition."""
    found = []
    for sub in log_dir.iterdir():
        if not sub.is_dir():
            continue
        try:
            parsed = parse_partition_dir_name(sub.name)
        except KafkaFormatError:
            remote = parse_remote_partition_dir_name(sub.name)
            if remote is not None:  # tiered storage's topic-N-<topic id>
                found.append((remote.topic, remote.partition, sub))
            continue
        if parsed.state is DirState.LIVE:
            found.append((parsed.topic, parsed.partition, sub))
    return [p for _, _, p in sorted(found)]


def partition_inputs(directory: Path) -> list[LogInput]:
    """The live segments of a partition directory in base-offset order."""
    return _partition_inputs(directory, ())


def _partition_inputs(directory: Path, entries: tuple[Entry, ...]) -> list[LogInput]:
    topic, partition = _topic_partition(directory)
    if entries:
        logs = sorted((base, Path(e.path)) for e in entries if (base := _live_log(e)) is not None)
    else:
        logs = _segment_logs(directory)
    _refuse_ambiguous(directory, logs)
    following = [base for base, _ in logs[1:]] + [None]
    return [
        LogInput(str(p), topic=topic, partition=partition, base_offset=base, path=p, next_base=nxt)
        for (base, p), nxt in zip(logs, following, strict=True)
    ]


def _segment_logs(directory: Path) -> list[tuple[int, Path]]:
    logs = []
    for p in directory.iterdir():
        parsed = parse_segment_file_name(p.name)
        if parsed and parsed.kind is FileKind.LOG and parsed.is_live and p.is_file():
            logs.append((parsed.base_offset, p))
    return sorted(logs)


def _refuse_ambiguous(directory: Path, logs: list[tuple[int, Path]]) -> None:
    """Two segments of one base offset (two uploads of a remote segment under different
    ids): which one a consumer reads is not ours to guess."""
    for (base, first), (next_base, second) in itertools.pairwise(logs):
        if base == next_base:
            raise ambiguous_segment(base, first.name, second.name, directory=str(directory))


def _topic_partition(directory: str | os.PathLike[str]) -> tuple[str | None, int | None]:
    return _named_partition(_base_name(os.fspath(directory)))


@functools.lru_cache(maxsize=4096)
def _named_partition(name: str) -> tuple[str | None, int | None]:
    """A directory name's topic and partition (None, None for no partition's): a listing
    asks for each partition's more than once."""
    try:
        parsed = parse_partition_dir_name(name)
    except KafkaFormatError:
        remote = parse_remote_partition_dir_name(name)  # tiered storage's topic-N-<topic id>
        return (remote.topic, remote.partition) if remote is not None else (None, None)
    return parsed.topic, parsed.partition
