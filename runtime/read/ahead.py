"""Work decoded ahead in worker threads, while the calling thread emits what is done, in
order: a file's chunks (:class:`Pipeline`, used by ``columnar``) and, across a directory of
many segments or partitions, small files read whole (:func:`files_ahead`).

``columnar`` decodes a file's chunks in worker threads, a few ahead of the one it emits, and
drains them at the file's end: a big file keeps the workers busy, but a file of one chunk (a
small segment, a quiet partition, most of a ``kafka-format generate`` directory) ran in the
calling thread, one after the other, the workers idle. Here each such file (of 256 KiB to
4 MiB: below, its Python steps outweigh its kernels' GIL-free work) is read whole by a
worker (opened, scanned, planned, decoded), as many files ahead as there are workers, while
the calling thread emits the files before it, in their order. What a reader sees stays the
sequential read's: the same batches in the same order, the report's entries appended where
the file read alone would have appended them (before the batch that followed them), an error
raised after the batches before it. Memory stays bounded: at most ``depth`` small files'
batches are held at once.

Only where the files' reads are independent: not under ``read_committed``, whose walk over a
partition's batches carries state from one file to the next (``transactions.Admission``).
"""

from __future__ import annotations

import dataclasses
import os
import stat
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pyarrow as pa

from ..model import Report
from .grouped import Group
from .ranges import Window
from .sources import is_stream_path

__all__ = [
    "AHEAD_BYTES",
    "AHEAD_MIN_BYTES",
    "Done",
    "Pipeline",
    "files_ahead",
    "log_sizes",
    "small_file",
    "threads_pay",
]

#: A file read whole: its batches, each with the report's sizes when it was yielded, the
#: report it filled, and what it raised (None: it ended).
Whole = tuple[list[tuple[pa.RecordBatch, tuple[int, ...]]], Report, BaseException | None]

_FIELDS = tuple(f.name for f in dataclasses.fields(Report))

#: Files of at most this many bytes are read whole by a worker, ahead of the one emitted
#: (a quarter of a chunk: they take one, and depth of them stay small)...
AHEAD_BYTES = 4 * 1024 * 1024
#: ... and of at least this many. A file's Python steps (open, scan, plan, a dozen numpy and
#: Arrow calls: ~0.7 ms) hold the GIL; only its kernels release it, at ~1 us a batch of
#: ~100 bytes. Below this size a worker mostly waits for the GIL, and two threads read a
#: directory of 32 KiB segments 1.6 times slower than one (bench/results.md, small batches).
AHEAD_MIN_BYTES = 256 * 1024


class Done(Future):
    """A future that is already done (work run in the calling thread)."""

    def __init__(self, fn, *args) -> None:
        super().__init__()
        try:
            self.set_result(fn(*args))
        except BaseException as exc:
            self.set_exception(exc)


class Pipeline:
    """Runs chunk decoding, and small files, ahead in worker threads; starts them only for
    inputs of several chunks or files."""

    def __init__(self, workers: int) -> None:
        self.workers = workers
        self.pool: ThreadPoolExecutor | None = None

    def __enter__(self) -> Pipeline:
        return self

    def __exit__(self, *exc_info) -> None:
        if self.pool is not None:
            self.pool.shutdown(wait=True, cancel_futures=True)

    @property
    def depth(self) -> int:
        # Chunks decoded ahead of the one being emitted: one a worker keeps both busy; one
        # more held ~20 MiB of Arrow buffers more and was no faster (bench/results.md, memory).
        return self.workers

    def submit(self, fn, *args) -> Future:
        if self.workers <= 1:
            return Done(fn, *args)
        if self.pool is None:
            self.pool = ThreadPoolExecutor(self.workers, thread_name_prefix="kafka-format")
        return self.pool.submit(fn, *args)


def log_sizes(paths: Iterable[os.PathLike[str] | str]) -> Iterator[int]:
    """The sizes of the segments of these partition directories or files (``*.log`` in a
    directory), those that can be looked at: what :func:`threads_pay` weighs. One that
    cannot is read in its turn, which says what is wrong with it."""
    for path in paths:
        files = sorted(Path(path).glob("*.log")) if os.path.isdir(path) else [Path(path)]
        for file in files:
            try:
                yield file.stat().st_size
            except OSError:
                continue


def threads_pay(sizes: Iterable[int]) -> bool:
    """Whether files of these sizes are worth reading on several threads at once (a command's
    partitions, ``cpus.map_in_order``): their mean is at least AHEAD_MIN_BYTES. Below it each
    file's GIL-bound Python steps outweigh its kernels, and threads only queue for the GIL:
    ``verify`` of a ``generate`` directory (32 KiB segments) took 5.2-6.7 s on two threads
    against 3.9 s on one."""
    listed = list(sizes)
    return bool(listed) and sum(listed) >= AHEAD_MIN_BYTES * len(listed)


def small_file(window: Window) -> int | None:
    """The size of a window's file when it is one to read ahead, whole: a regular file of
    AHEAD_MIN_BYTES to AHEAD_BYTES."""
    path = window.log.path
    if path is None or is_stream_path(path):
        return None
    try:
        info = os.stat(path)
    except OSError:
        return None  # read in its turn, which says what is wrong with it
    if not stat.S_ISREG(info.st_mode) or not AHEAD_MIN_BYTES <= info.st_size <= AHEAD_BYTES:
        return None
    return info.st_size


Read = Callable[[Any, Window], Iterable[pa.RecordBatch]]


def read_whole(read: Read, opts: Any, window: Window) -> Whole:
    """``read(opts, window)`` run to its end in a worker, with a report of its own."""
    mine = dataclasses.replace(opts, report=Report(), progress=None)
    out: list[tuple[pa.RecordBatch, tuple[int, ...]]] = []
    try:
        for batch in read(mine, window):
            out.append((batch, _sizes(mine.report)))
    except BaseException as exc:  # raised again in the calling thread, in its place
        return out, mine.report, exc
    return out, mine.report, None


def files_ahead(
    windows: Iterable[Window | Group],
    read: Read,
    read_alone: Read,
    small: Callable[[Window], int | None],
    submit: Callable[..., Future],
    depth: int,
    opts: Any,
    read_group: Callable[[Any, Group], list[pa.RecordBatch] | None] | None = None,
) -> Iterator[tuple[Window, Iterator[pa.RecordBatch]]]:
    """Each window with its batches, in order: a ``small`` one (``small`` gives its file's
    size) read whole ahead by ``read_alone`` in a worker (``submit``), up to ``depth`` files
    ahead; any other by ``read`` as it is emitted. A group of small files (``grouped.py``) is
    decoded ahead by ``read_group`` and yielded as its first window with all their batches;
    where it gives None (a file that is not clean), each of its windows is read in its turn."""
    pending: deque[tuple[Window | Group, Future | None, int]] = deque()
    source = iter(windows)
    try:
        while True:
            while len(pending) <= depth:
                unit = next(source, None)
                if unit is None:
                    break
                if isinstance(unit, Group):
                    pending.append((unit, submit(read_group, opts, unit), 0))
                    continue
                size = small(unit)
                ahead = None if size is None else submit(read_whole, read_alone, opts, unit)
                pending.append((unit, ahead, size or 0))
            if not pending:
                return
            unit, ahead, size = pending.popleft()
            if isinstance(unit, Group):
                batches = ahead.result()
                if batches is None:
                    for window in unit.windows:
                        yield window, iter(read(opts, window))
                else:
                    yield unit.windows[0], _replay_group(batches, opts, unit)
            elif ahead is None:
                yield unit, iter(read(opts, unit))
            else:
                yield unit, _replay(ahead.result(), opts, size)
    finally:
        for _, ahead, _ in pending:
            if ahead is not None:
                ahead.cancel()


def _replay_group(
    batches: list[pa.RecordBatch], opts: Any, group: Group
) -> Iterator[pa.RecordBatch]:
    """A clean group's batches (it reports nothing), then its files counted as read."""
    yield from batches
    if opts.progress is not None:
        for size in group.sizes:
            opts.progress.begin_file(size)
            opts.progress.at(size)


def _replay(whole: Whole, opts: Any, size: int) -> Iterator[pa.RecordBatch]:
    batches, report, error = whole
    if opts.progress is not None:
        opts.progress.begin_file(size)
    done = tuple(0 for _ in _FIELDS)
    for batch, sizes in batches:
        _merge(opts.report, report, done, sizes)
        done = sizes
        yield batch
    _merge(opts.report, report, done, _sizes(report))
    if opts.progress is not None:
        opts.progress.at(size)
    if error is not None:
        raise error


def _sizes(report: Report) -> tuple[int, ...]:
    return tuple(len(getattr(report, name)) for name in _FIELDS)


def _merge(into: Report, found: Report, start: tuple[int, ...], stop: tuple[int, ...]) -> None:
    for name, lo, hi in zip(_FIELDS, start, stop, strict=True):
        if hi > lo:
            getattr(into, name).extend(getattr(found, name)[lo:hi])
