"""What a caller may hand us, resolved into log files to read in order.

A source is bytes (or a memoryview), a path to a ``.log`` file or any file of concatenated
batches, a partition directory (``topic-N``), a Kafka log directory holding partition
directories, or a binary file object. Files are memory-mapped, so a multi-GB segment costs
address space, not memory; file objects that cannot be mapped are read frame by frame.
"""

from __future__ import annotations

import contextlib
import io
import mmap
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from ..errors import KafkaFormatError
from ..files.names import DirState, FileKind, parse_partition_dir_name, parse_segment_file_name

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

    @contextmanager
    def open(self) -> Iterator[memoryview | BinaryIO]:
        """A memoryview over the whole input, or a stream when it cannot be mapped."""
        if self.path is not None:
            with open(self.path, "rb") as fh:
                size = os.fstat(fh.fileno()).st_size
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
        if isinstance(self.data, bytes | bytearray | memoryview):
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


def resolve(source: Source, *, name: str | None = None) -> list[LogInput]:
    """The log inputs of a source, in the order a consumer would read them."""
    if isinstance(source, bytes | bytearray | memoryview):
        return [LogInput(name or "<bytes>", data=source)]
    if hasattr(source, "read"):
        return [LogInput(name or getattr(source, "name", None) or "<stream>", data=source)]
    path = Path(source)
    if path.is_dir():
        if any(_segment_logs(path)):
            return partition_inputs(path)
        inputs: list[LogInput] = []
        for sub in partition_dirs(path):
            inputs.extend(partition_inputs(sub))
        if not inputs:
            raise KafkaFormatError(
                "no .log segments here, nor partition directories (topic-N) holding them",
                file=str(path),
            )
        return inputs
    if not path.exists():
        raise KafkaFormatError("no such file or directory", file=str(path))
    parsed = parse_segment_file_name(path.name)
    topic = partition = None
    if parsed is not None and parsed.kind is FileKind.LOG:
        topic, partition = _topic_partition(path.parent)
    return [
        LogInput(
            str(path),
            topic=topic,
            partition=partition,
            base_offset=parsed.base_offset if parsed else None,
            path=path,
        )
    ]


def partition_dirs(log_dir: Path) -> list[Path]:
    """Live partition directories of a log dir, by topic then partition."""
    found = []
    for sub in log_dir.iterdir():
        if not sub.is_dir():
            continue
        try:
            parsed = parse_partition_dir_name(sub.name)
        except KafkaFormatError:
            continue
        if parsed.state is DirState.LIVE:
            found.append((parsed.topic, parsed.partition, sub))
    return [p for _, _, p in sorted(found)]


def partition_inputs(directory: Path) -> list[LogInput]:
    """The live segments of a partition directory in base-offset order."""
    topic, partition = _topic_partition(directory)
    return [
        LogInput(str(p), topic=topic, partition=partition, base_offset=base, path=p)
        for base, p in _segment_logs(directory)
    ]


def _segment_logs(directory: Path) -> list[tuple[int, Path]]:
    logs = []
    for p in directory.iterdir():
        parsed = parse_segment_file_name(p.name)
        if parsed and parsed.kind is FileKind.LOG and parsed.is_live and p.is_file():
            logs.append((parsed.base_offset, p))
    return sorted(logs)


def _topic_partition(directory: Path) -> tuple[str | None, int | None]:
    try:
        parsed = parse_partition_dir_name(directory.name)
    except KafkaFormatError:
        return None, None
    return parsed.topic, parsed.partition
