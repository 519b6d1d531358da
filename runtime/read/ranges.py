"""Ranges of a log by offset and by time, with a count: what kcat's ``-o``/``-c`` and
``iter_records(start_offset=..., end_timestamp=..., max_records=...)`` read.

The meaning, per partition (a lone file or a buffer counts as a partition of its own):

- offsets are half-open, ``[start_offset, end_offset)``; a negative ``start_offset`` is kcat's
  ``-o -N``: N offsets before the partition's log end offset;
- ``start_timestamp`` starts the range at the first data record whose timestamp is >= it (the
  record ``offsetsForTimes`` / ListOffsets answers, kcat's ``s@``), at or after
  ``start_offset``; ``end_timestamp`` ends it before the first data record at or after that
  start whose timestamp is >= it (kcat's ``e@``). Time bounds become offset bounds: a range is
  a run of consecutive offsets, as a consumer seeking there reads it, and records in it whose
  timestamps run backwards are kept. Timestamps are the records' own (CreateTime, or the
  batch's LogAppendTime as stored);
- ``max_records``: at most this many records in all (kcat's ``-c`` counts messages in all,
  not per partition).

How little is read: a range becomes a :class:`Window` per segment, a byte span. Segments
wholly before the start or after the end are not opened by the readers; the start position
comes from the segment's ``.index`` (and ``.timeindex``) as the broker's fetch and ListOffsets
find it, each entry checked against the batch it points at by the rule every reader uses
(``files.index_lookup``: an entry that does not hold is set aside and the segment read from its
start);
the span ends at the first batch past the range, found from batch headers alone
(``fastscan.scan_frames``). Only the one batch where a time bound falls is decoded to
resolve it. A stream that can be read only once is read into memory first.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..errors import KafkaFormatError
from ..files.index_lookup import start_for_offset, start_for_timestamp
from ..files.indexes import OffsetIndex, TimeIndex
from ..format import layout
from ..format.batches import ReadOptions, read_batch
from ..format.framing import Frame
from ..kernels import fastscan as fs
from ..model import Batch, Record
from .sources import LogInput
from .views import filter_rows

__all__ = ["Range", "Window", "clip_records", "clip_rows", "limit_rows", "overlapping", "windows"]

_NEVER = -(1 << 62)  # a lower bound below every offset
_ALWAYS = 1 << 62  # an upper bound above every offset and timestamp


@dataclass(frozen=True, slots=True)
class Range:
    """What to read of each partition (see the module docstring); None: no bound."""

    start_offset: int | None = None
    end_offset: int | None = None
    start_timestamp: int | None = None
    end_timestamp: int | None = None
    max_records: int | None = None

    @classmethod
    def of(
        cls,
        start_offset: int | None = None,
        end_offset: int | None = None,
        start_timestamp: int | None = None,
        end_timestamp: int | None = None,
        max_records: int | None = None,
    ) -> Range | None:
        """The range, checked; None when nothing bounds it (read everything)."""
        for name, value in (
            ("start_offset", start_offset),
            ("end_offset", end_offset),
            ("start_timestamp", start_timestamp),
            ("end_timestamp", end_timestamp),
            ("max_records", max_records),
        ):
            if value is not None and (not isinstance(value, int) or isinstance(value, bool)):
                raise TypeError(f"{name} must be an int, not {type(value).__name__}")
        if end_offset is not None and end_offset < 0:
            raise ValueError(f"end_offset must be 0 or more, not {end_offset}")
        if max_records is not None and max_records < 0:
            raise ValueError(f"max_records must be 0 or more, not {max_records}")
        made = cls(start_offset, end_offset, start_timestamp, end_timestamp, max_records)
        return None if made == cls() else made


@dataclass(frozen=True, slots=True)
class Window:
    """The part of one input to read: bytes ``[start, end)`` (``end`` None: to the end, where
    tails and damage are reported as usual), records with offsets in ``[first, last)``."""

    log: LogInput
    start: int = 0
    end: int | None = None
    first: int | None = None
    last: int | None = None

    def holds(self, offset: int) -> bool:
        return (self.first is None or offset >= self.first) and (
            self.last is None or offset < self.last
        )

    def overlaps(self, batch: Batch) -> bool:
        """Whether a batch's header says it may hold records of the range (a v0/v1 wrapper's
        header has only its last offset: its first is known once it is decoded)."""
        wrapper = batch.magic < 2 and batch.codec != 0
        return (self.first is None or batch.last_offset >= self.first) and (
            self.last is None or wrapper or batch.base_offset < self.last
        )


def windows(
    inputs: Iterable[LogInput], rng: Range | None, *, from_start: bool = False
) -> Iterator[Window]:
    """The windows to read, in the inputs' order; with no range, every input whole.

    ``from_start``: every window of a partition starts at its segment's start, for
    read_committed, whose walk must meet every ABORT marker before the range (a consumer
    fetching at the start gets the aborted transactions still open there from the broker,
    which knows where each ended; the markers are where we learn it). Batches before the
    range are still not decoded: their headers say they are outside it."""
    if rng is None:
        for log in inputs:
            yield Window(log)
        return
    for group in _partitions(inputs):
        yield from _group_windows(group, rng, from_start)


def _partitions(inputs: Iterable[LogInput]) -> Iterator[list[LogInput]]:
    """Runs of inputs of one partition (a directory's segments); anything else alone."""
    group: list[LogInput] = []
    for log in inputs:
        if group and (log.topic is None or (log.topic, log.partition) != _key(group[0])):
            yield group
            group = []
        group.append(log)
    if group:
        yield group


def _key(log: LogInput) -> tuple:
    return (log.topic, log.partition) if log.topic is not None else ("", log.name)


def _group_windows(group: list[LogInput], rng: Range, from_start: bool) -> Iterator[Window]:
    lo, hi = rng.start_offset, rng.end_offset
    if lo is not None and lo < 0:
        lo = max(_log_end_offset(group) + lo, 0)
    if rng.start_timestamp is not None:
        lo = _first_at(group, rng.start_timestamp, lo)
        if lo is None:
            return  # no record that late: nothing of this partition
    if rng.end_timestamp is not None:
        end = _first_at(group, rng.end_timestamp, lo)
        if end is not None:
            hi = end if hi is None else min(hi, end)
    if lo is not None and hi is not None and lo >= hi:
        return
    for i, log in enumerate(group):
        nxt = _next_base(group, i)
        if lo is not None and nxt is not None and nxt <= lo and not from_start:
            continue  # every offset of this segment is below the start
        if hi is not None and log.base_offset is not None and log.base_offset >= hi:
            return
        with _opened(log) as buf:
            start = _start_position(log, buf, offset=lo) if lo is not None and not from_start else 0
            end = _end_position(buf, start, hi) if hi is not None else None
        yield Window(log, start, end, lo, hi)
        if end is not None:
            return


def _next_base(group: list[LogInput], i: int) -> int | None:
    return group[i + 1].base_offset if i + 1 < len(group) else None


@contextlib.contextmanager
def _opened(log: LogInput) -> Iterator[np.ndarray]:
    with log.open() as view:
        if not isinstance(view, memoryview):
            raise ValueError(f"{log.name}: a range needs bytes that can be read twice")
        yield np.frombuffer(view, np.uint8) if len(view) else np.empty(0, np.uint8)


@dataclass(slots=True)
class _Headers:
    """Batch headers of a run of frames, as the range needs them."""

    pos: np.ndarray
    size: np.ndarray
    base: np.ndarray
    magic: np.ndarray
    control: np.ndarray
    first: np.ndarray  # a lower bound of the first offset (exact for v2 and plain v0/v1)
    last: np.ndarray
    max_ts: np.ndarray
    ok: np.ndarray


def _walk(buf: np.ndarray, pos: int) -> Iterator[_Headers]:
    """Headers of the frames from ``pos`` on, a few thousand at a time, by the numba frame
    scan (``framing.judge``'s rules); the walk ends where no whole frame lies."""
    table = np.empty((4096, fs.FRAME_COLUMNS), np.int64)
    before = _NEVER  # last offset of the frame before: a v0/v1 wrapper's inner ones follow it
    while True:
        n, nxt, status = fs.scan_frames(buf, pos, len(buf), table, _ALWAYS, _ALWAYS, 1)
        if n:
            t = table[:n].copy()
            magic, ok = t[:, fs.F_MAGIC], t[:, fs.F_HEADER_OK] == 1
            v2 = magic == 2
            base = t[:, fs.F_BASE]
            last = np.where(v2, base + t[:, fs.F_LAST_DELTA], base)
            last = np.where(ok, last, _ALWAYS)
            previous = np.concatenate(([before], last[:-1]))
            wrapper = ~v2 & ((t[:, fs.F_ATTR] & layout.LEGACY_ATTR_COMPRESSION_MASK) != 0)
            first = np.where(wrapper, np.minimum(previous + 1, base), base)
            first = np.where(ok, first, _NEVER)
            before = int(last[-1]) if ok[-1] else _NEVER
            control = v2 & ((t[:, fs.F_ATTR] & layout.V2_ATTR_IS_CONTROL_MASK) != 0)
            max_ts = np.where(ok, t[:, fs.F_MAX_TS], _ALWAYS)
            yield _Headers(
                t[:, fs.F_POS], t[:, fs.F_SIZE], base, magic, control, first, last, max_ts, ok
            )
        if status != fs.SCAN_BUDGET:
            return
        pos = nxt


def _end_position(buf: np.ndarray, start: int, hi: int) -> int | None:
    """Position of the first frame whose offsets all lie at or past ``hi``; None if none."""
    for h in _walk(buf, start):
        past = np.flatnonzero(h.ok & (h.first >= hi))
        if len(past):
            return int(h.pos[past[0]])
    return None


def _log_end_offset(group: list[LogInput]) -> int:
    """The partition's log end offset: one past the last batch of its last segment (read from
    the last offset index entry on), the segment's base offset when it is empty."""
    log = group[-1]
    with _opened(log) as buf:
        ends = [
            int(h.last[h.ok].max()) + 1 for h in _walk(buf, _start_position(log, buf)) if h.ok.any()
        ]
    if ends:
        return max(ends)
    if len(group) > 1:
        return max(_log_end_offset(group[:-1]), log.base_offset or 0)
    return log.base_offset or 0


def _first_at(group: list[LogInput], timestamp: int, after: int | None) -> int | None:
    """Offset of the first data record with timestamp >= ``timestamp`` at or after offset
    ``after``: ListOffsets' answer (``UnifiedLog.fetchOffsetByTimestamp``); None if none."""
    for i, log in enumerate(group):
        nxt = _next_base(group, i)
        if after is not None and nxt is not None and nxt <= after:
            continue
        if nxt is not None and _largest_timestamp(log) < timestamp:
            continue  # a rolled segment's time index ends with its largest timestamp
        with log.open() as view:
            buf = np.frombuffer(view, np.uint8) if len(view) else np.empty(0, np.uint8)
            start = _start_position(log, buf, offset=after, timestamp=timestamp)
            for h in _walk(buf, start):
                late = h.ok & ~h.control & (h.max_ts >= timestamp)
                if after is not None:
                    late &= h.last >= after
                for j in np.flatnonzero(late).tolist():
                    found = _first_record_at(view, h, j, log.name, timestamp, after)
                    if found is not None:
                        return found
    return None


def _first_record_at(
    view: memoryview, h: _Headers, j: int, name: str, timestamp: int, after: int | None
) -> int | None:
    pos, size = int(h.pos[j]), int(h.size[j])
    frame = Frame(pos, int(h.base[j]), int(h.magic[j]), view[pos : pos + size])
    try:
        batch = read_batch(frame, ReadOptions(False, True), file=name)
    except KafkaFormatError:
        # A batch that cannot be decoded starts the range: the reader then reports it.
        return int(max(h.first[j], after if after is not None else _NEVER, 0))
    for record in batch.records or ():
        if (after is None or record.offset >= after) and _ts(record) >= timestamp:
            return record.offset
    return None


def _ts(record: Record) -> int:
    return record.timestamp if record.timestamp is not None else -1


def _largest_timestamp(log: LogInput) -> int:
    """A rolled segment's largest timestamp from its time index's last entry (the broker
    appends it on roll); "unknown" (the largest value) without a sound time index."""
    if log.path is None or log.base_offset is None:
        return _ALWAYS
    try:
        with TimeIndex.open(
            log.path.with_suffix(".timeindex"), log.base_offset, strict=False
        ) as ti:
            if ti.problem is not None or not len(ti):
                return _ALWAYS
            return ti.last_entry().timestamp
    except (KafkaFormatError, OSError, ValueError):
        return _ALWAYS


def _start_position(
    log: LogInput,
    buf: np.ndarray,
    *,
    offset: int | None = _ALWAYS,
    timestamp: int | None = None,
) -> int:
    """Where to start reading ``log`` for ``offset`` (the offset index's entry at or below
    it, as the broker's fetch does), or for the first record at or after it with a timestamp
    >= ``timestamp`` (``start_for_timestamp``); 0 without a sound index entry. The entry is
    judged by ``files.index_lookup``'s rule, as every other reader judges it."""
    if log.path is None or log.base_offset is None:
        return 0
    target = log.base_offset if offset is None else max(offset, log.base_offset)
    view = memoryview(buf)
    try:
        with OffsetIndex.open(log.path.with_suffix(".index"), log.base_offset, strict=False) as oi:
            if timestamp is None:
                return start_for_offset(oi, view, target, file=log.name).position
            with TimeIndex.open(
                log.path.with_suffix(".timeindex"), log.base_offset, strict=False
            ) as ti:
                return start_for_timestamp(ti, oi, view, timestamp, target, file=log.name).position
    except (KafkaFormatError, OSError, ValueError):
        return 0


# --- applying a window ----------------------------------------------------------------------


def clip_records(batch: Batch, window: Window) -> None:
    """Keep in ``batch.records`` only the records of the window's offsets (a control batch
    keeps its marker: read_committed's walk reads it)."""
    if batch.records and not batch.is_control and (window.first, window.last) != (None, None):
        batch.records = [r for r in batch.records if window.holds(r.offset)]


def overlapping(table: np.ndarray, window: Window) -> np.ndarray:
    """The rows of a fastscan frame table worth decoding for the window: data frames whose
    header says they may hold offsets of the range, and every other frame (control batches
    steer read_committed; a bad header is reported as the reference reports it)."""
    if window.first is None and window.last is None:
        return table
    magic = table[:, fs.F_MAGIC]
    ok = table[:, fs.F_HEADER_OK] == 1
    v2 = magic == 2
    base = table[:, fs.F_BASE]
    last = np.where(v2, base + table[:, fs.F_LAST_DELTA], base)
    attributes = table[:, fs.F_ATTR]
    data = ok & ~(v2 & ((attributes & layout.V2_ATTR_IS_CONTROL_MASK) != 0))
    inside = np.ones(len(table), bool)
    if window.first is not None:
        inside &= last >= window.first
    if window.last is not None:
        # A v0/v1 wrapper's first offset is not in its header: only its last is.
        wrapper = ~v2 & ((attributes & layout.LEGACY_ATTR_COMPRESSION_MASK) != 0)
        inside &= wrapper | (base < window.last)
    return table[~data | inside]


def clip_rows(batches: Iterable[pa.RecordBatch], window: Window) -> Iterator[pa.RecordBatch]:
    """The rows of Arrow batches whose offsets are the window's."""
    if window.first is None and window.last is None:
        yield from batches
        return
    for batch in batches:
        offsets = batch.column("offset")
        mask = None
        if window.first is not None:
            mask = pc.greater_equal(offsets, window.first)
        if window.last is not None:
            below = pc.less(offsets, window.last)
            mask = below if mask is None else pc.and_(mask, below)
        kept = filter_rows(batch, mask)  # binary_view columns too (views.py)
        if kept.num_rows:
            yield kept


def limit_rows(batches: Iterable[pa.RecordBatch], limit: int | None) -> Iterator[pa.RecordBatch]:
    """At most ``limit`` rows in all; the source is left as soon as they are there."""
    if limit is None:
        yield from batches
        return
    left = limit
    if left <= 0:
        return
    for batch in batches:
        if batch.num_rows >= left:
            yield batch.slice(0, left)
            return
        left -= batch.num_rows
        yield batch


def limit_records(records: Iterable[Record], limit: int | None) -> Iterator[Record]:
    """At most ``limit`` records; the source is left as soon as they are there."""
    if limit is None:
        yield from records
        return
    if limit <= 0:
        return
    for n, record in enumerate(records, 1):
        yield record
        if n >= limit:
            return
