"""Small segments read as one chunk: one buffer, one frame table, one decode.

A file costs about 0.6 ms of Python besides its kernels (opened and mapped, scanned, its
segment's offsets judged, planned, decoded, a dozen numpy and Arrow calls), and a directory of
small segments (``kafka-format generate``'s 32 KiB, a quiet partition's, a compacted topic's)
spends most of its read there: 0.36 M records/s where its batches alone allow several M
(``bench/results.md``, small batches), and so does a log dir of many quiet partitions, a
small segment in each. Here consecutive whole files, each below :data:`GROUP_FILE_BYTES`, of
one partition or several, are read into one buffer (:func:`runs` chooses them, by their
sizes), each scanned in place by the kernel into one frame table (:func:`gather`), their
offsets checked against their own segments at once (``segment_offsets.files_hold``), and
``columnar`` decodes the table as it decodes one file's chunk: one plan, one call for CRCs,
decompression and records, one set of Arrow buffers for them all.

The result is the files' own reads, or nothing. Only a clean group is decoded together: every
frame whole and its header readable, every file ending where its last frame does, offsets
those of their segments, and (``columnar``) every CRC holding, every payload decompressing, no
control batch but Kafka's transaction markers, no timestamp Arrow cannot hold. Where anything
else shows, the group's files are read again one by one, which gives the verdict in Kafka's
words with the file and position, and the rows around it exactly as before: damage costs a
second read of one group at most, and a clean log never pays it. The rows are the same rows
in the same order, each with its own file's topic and partition; record batches may span
files of one partition, and with ``include_position`` never span files (the ``file`` column
then has each batch's one name, as a file read alone gives it). Files are read
one by one under ``read_committed`` (its walk carries state between files) and
``errors="salvage"`` (its own walk).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import TypeVar

import numpy as np

from ..kernels import fastscan as fs
from .ranges import Window
from .segment_offsets import SegmentOffsets, files_hold

__all__ = [
    "GROUP_FILE_BYTES",
    "Files",
    "Gathered",
    "Group",
    "gather",
    "packs",
    "runs",
    "small_size",
]

#: Files below this size are read together. From here on a file's kernels outweigh its Python
#: steps, and ``ahead.py`` reads it whole in a worker instead (``ahead.AHEAD_MIN_BYTES``).
GROUP_FILE_BYTES = 256 * 1024
#: Frames a chunk's table holds (``columnar``'s scan takes as many).
MAX_FRAMES = 65536

T = TypeVar("T")


@dataclass(slots=True, frozen=True)
class Group:
    """Whole small files, in order, to be decoded together."""

    windows: tuple[Window, ...]
    sizes: tuple[int, ...]


@dataclass(slots=True, frozen=True)
class Files:
    """The files of one of a group's tables: file ``k``'s frames start at row ``frames[k]``
    of the table, its bytes at ``starts[k]`` of the buffer; ``places[k]``: its topic and
    partition."""

    frames: np.ndarray
    starts: np.ndarray
    names: tuple[str, ...]
    places: tuple[tuple[str | None, int | None], ...]

    @property
    def mixed(self) -> bool:
        """Whether the files are of more than one partition."""
        return len(set(self.places)) > 1


@dataclass(slots=True)
class Gathered:
    """A group's bytes, one after the other, and their frames as chunks' tables (positions
    into ``buf``): one table unless the group holds more records than a chunk."""

    buf: np.ndarray
    view: memoryview
    tables: list[np.ndarray]
    files: list[Files]


def _size(window: Window) -> int | None:
    """A window's file size when it is a whole regular file below GROUP_FILE_BYTES, read on
    its own terms (a Spark split's piece shares its offset checks: read alone)."""
    log = window.log
    if window.start or window.first is not None or window.last is not None:
        return None
    if log.path is None or log.origin or log.offsets is not None:
        return None
    size = small_size(log.path)
    # to the file's end (a Spark task's window ends where the file did when planned)
    return size if size is not None and window.end in (None, size) else None


def small_size(path: str | os.PathLike[str]) -> int | None:
    """A file's size when it is a regular file below GROUP_FILE_BYTES: one to read with
    others (here and ``files_ahead``); None for any other, read in its turn, which says what
    is wrong with it (a pipe, a socket or a device is read as a stream)."""
    try:
        info = os.stat(path)
    except OSError:
        return None
    if not stat.S_ISREG(info.st_mode) or info.st_size >= GROUP_FILE_BYTES:
        return None
    return info.st_size


def packs(
    items: Iterable[T],
    cost: Callable[[T], int | None],
    cap: int,
    key: Callable[[T], object] | None = None,
) -> Iterator[tuple[list[T], list[int]]]:
    """The items in order, in packs of consecutive ones whose costs add up to at most ``cap``
    (an item is never split off alone for its own cost) and, with ``key``, share its value;
    an item whose cost is None is a pack of its own with no costs. Each pack with its costs.
    The one rule for small files read together: here (:func:`runs`), a command's runs
    (``files_ahead``) and Spark's tasks (``spark_udfs._planning.tasks``)."""
    held: list[T] = []
    costs: list[int] = []
    total = 0
    for item in items:
        weight = cost(item)
        if held and (
            weight is None
            or total + weight > cap
            or (key is not None and key(held[0]) != key(item))
        ):
            yield held, costs
            held, costs, total = [], [], 0
        if weight is None:
            yield [item], []
            continue
        held.append(item)
        costs.append(weight)
        total += weight
    if held:
        yield held, costs


def runs(windows: Iterable[Window], cap: int) -> Iterator[Window | Group]:
    """The windows in order, consecutive small whole files joined into groups of at most
    ``cap`` bytes, of one partition or several (a log dir of many quiet partitions holds a
    small segment in each); a lone one stays a window."""
    for held, sizes in packs(windows, _size, cap):
        if len(held) > 1:
            yield Group(tuple(held), tuple(sizes))
        else:
            yield held[0]


def gather(group: Group, max_rows: int) -> Gathered | None:
    """The group's files read into one buffer and scanned; None unless each file is whole
    frames with readable headers whose offsets are their segment's (the caller then reads
    the files alone). A table holds at most ``max_rows`` records, as a chunk does, save that
    a file's first frame is always taken (as the scan takes a chunk's)."""
    buf = np.empty(sum(group.sizes), np.uint8)
    view = memoryview(buf)
    table = np.empty((MAX_FRAMES, fs.FRAME_COLUMNS), np.int64)
    tables: list[np.ndarray] = []
    files: list[Files] = []
    n = rows = 0
    starts: list[int] = []
    segments: list[SegmentOffsets] = []
    placed: list[tuple[int, str, tuple]] = []  # each file's bytes in buf, name, partition

    def close() -> bool:
        nonlocal n, rows
        if n:
            frames = np.array(starts, np.int64)
            if not files_hold(table[:n], frames, segments):
                return False
            tables.append(table[:n].copy())
            at = np.array([a for a, _, _ in placed], np.int64)
            names = tuple(name for _, name, _ in placed)
            files.append(Files(frames, at, names, tuple(place for _, _, place in placed)))
        n = rows = 0
        starts.clear()
        segments.clear()
        placed.clear()
        return True

    at = 0
    for window, size in zip(group.windows, group.sizes, strict=True):
        log = window.log
        try:
            with open(log.path, "rb", buffering=0) as fh:
                got = fh.readinto(view[at : at + size])
        except OSError:
            return None
        if got != size:
            return None  # it changed under us: its own read says what it holds
        if n and (rows >= max_rows or n >= MAX_FRAMES) and not close():
            return None
        while True:
            k, end, status = fs.scan_frames(
                buf, at, at + size, table[n:], max_rows - rows, 1 << 62, 1
            )
            if status != fs.SCAN_BUDGET:
                break
            if not n:
                return None  # more than a chunk alone: read as a file is, chunk by chunk
            if not close():
                return None
        if status != fs.SCAN_END or end != at + size:
            return None  # a tail or damage: its own read reports it
        starts.append(n)
        segments.append(SegmentOffsets(log.base_offset, next_base=log.next_base))
        placed.append((at, log.name, (log.topic, log.partition)))
        rows += int(np.maximum(table[n : n + k, fs.F_COUNT], 1).sum())
        n += k
        at += size
    if not close():
        return None
    return Gathered(buf, view, tables, files)
