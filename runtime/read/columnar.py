"""Records as Arrow, fast: ``read_table`` and ``iter_arrow_batches``, with the columns of
Spark's own Kafka source (``key``, ``value``, ``topic``, ``partition``, ``offset``,
``timestamp``, ``timestampType`` and, with ``include_headers``, ``headers``).

The output is the reference's (``columnar_reference.py``: ``iter_records`` over the generated
parsers), proved equal by the tests on the corpus and on generated and damaged record sets;
the route is different:

1. ``fastscan.scan_frames`` (numba) walks the frames of the mapped file or buffer into a table
   of header fields: a chunk of at most 64 Ki records and ~16 MiB at a time.
2. The calling thread sorts the frames: v2 data batches and v0/v1 entries go to the numba
   decoder; control batches and frames whose header is unusable go through the reference
   ``batches.read_batch`` one by one (its exact errors; markers for ``read_committed``,
   whose consumer walk is applied here to every frame in order).
3. A worker thread checks the v2 batches' CRC-32Cs in the kernel (``plan.crc_fails``; only a
   batch whose CRC fails reaches Python, to be reported), decompresses
   (``codecs.decompress``; ``plan.py``), and ``records.decode_sections`` (numba, GIL released;
   ``sections.py``) decodes the chunk's records at once into Arrow buffers from Arrow's memory
   pool; v0/v1 CRC-32s are
   checked in the kernel (``kernel_crc``). v0/v1 wrappers and v2 batches compressed with
   snappy or LZ4 as Kafka's clients write them never reach Python: ``kernel_payloads`` checks
   their CRCs and plans their payloads in one call, and the decoder decompresses each
   (``kernel_snappy``, ``kernel_lz4``) into a scratch buffer that stays in the cache while its
   records are read. gzip, zstd and the other LZ4 frames (content size, checksums, linked
   blocks) never reach Python either: ``kernel_inflate`` decodes a chunk's payloads with their
   C libraries (libdeflate, libzstd, LZ4F) in one call, before the decoder reads them. A worker
   a CPU (``cpus.default_threads``), as many chunks decoded ahead: decompression and decoding
   of successive chunks overlap.
4. The generator takes chunk results in file order: rows become record batches of at most
   ``batch_rows`` rows; a damaged batch raises (``errors="strict"``), after the rows of the
   batches before it, or is reported (``"skip"``, ``"salvage"``), in the reference's order.
   Under ``"salvage"`` the frames come from ``salvage.salvage_scan`` (the reference's walk,
   past framing damage) instead of step 1's scan alone.

Small whole segments (below 256 KiB, of one partition or several) are read into one buffer
and go through steps 1-4 as one chunk (``grouped.py``): a file's own steps cost more.

Memory stays bounded whatever the file size: a chunk is ~16 MiB of frames at most (compressed
bytes count four times), at most four are alive at once, and the pages of a mapped file
already decoded are given back with ``madvise(MADV_DONTNEED)``.

Differences from the reference, by design: batches break at chunk boundaries (each has at most
``batch_rows`` rows; the reference fills each to exactly ``batch_rows``). A timestamp Arrow's
microseconds cannot hold is null in both, and reported here (``Report.timestamps_out_of_range``).
Parse errors have the reference's class, location and wording (``format/messages``).
"""

from __future__ import annotations

import contextlib
import functools
import mmap
import os
from collections import deque
from collections.abc import Iterator
from concurrent.futures import Future
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa

from .. import cpus
from ..errors import CorruptBatchError, FramingError, KafkaFormatError
from ..format import layout
from ..format.batches import ReadOptions, read_batch
from ..format.codecs import DEFAULT_MAX_BYTES
from ..format.framing import Frame, end_of_walk, iter_stream_frames
from ..format.sizes import max_record_count
from ..kernels import fastscan as fs
from ..model import Batch, Record, Report, TimestampsOutOfRange, TruncatedTail
from ..progress import Progress
from . import grouped
from .ahead import Done as _Done
from .ahead import Pipeline as _Pipeline
from .ahead import files_ahead, small_file
from .columnar_reference import DEFAULT_BATCH_ROWS, HEADER_TYPE, arrow_schema, records_to_batch
from .located import file_rows, located, located_schema, locator
from .plan import NOT_A_MARKER as _NOT_A_MARKER

# Under columnar's own names, looked up here when a chunk is decoded: tests replace them.
from .plan import Options as _Options
from .plan import crc_fails as _crc_fails
from .plan import decompress_error as _decompress_error
from .plan import groups as _groups
from .plan import marker_types as _marker_types
from .plan import plan_inflated as _plan_inflated
from .plan import plan_packed as _plan_packed
from .plan import prepare_v2 as _prepare_v2
from .plan import prepare_wrapper as _prepare_wrapper
from .plan import wrapper_value as wrapper_value
from .ranges import Range, Window, clip_rows, limit_rows, overlapping
from .reader import damaged_batch
from .request import Errors, Isolation, ReadRequest, window_cut
from .salvage import salvage_scan
from .sections import kernel_error as _kernel_error
from .sections import null_timestamps as _null_timestamps
from .sections import run_kernel as _run_kernel
from .segment_offsets import SegmentOffsets, judge_frames
from .sources import LogInput, Source, is_stream_path
from .transactions import (
    AbortedTransactions,
    Admission,
    TxnEvent,
    collect_aborted_events,
    table_events,
)
from .views import adopt, ensure_views, view_schema

__all__ = [
    "DEFAULT_BATCH_ROWS",
    "HEADER_TYPE",
    "arrow_schema",
    "iter_arrow_batches",
    "read_table",
]

#: Bytes of frames per chunk; a compressed frame counts COMPRESSED_WEIGHT times its size.
CHUNK_BYTES = 16 * 1024 * 1024
#: ``low_memory``'s chunks: their bytes and records (the Arrow batches in flight are what a
#: streaming read holds besides the process's floor).
LOW_MEMORY_CHUNK_BYTES = 2 * 1024 * 1024
LOW_MEMORY_CHUNK_ROWS = 4 * 1024
COMPRESSED_WEIGHT = 4
_MAX_FRAMES = 65536

# How a frame is decoded: v2 in place, v2 decompressed, v0/v1 in place, v0/v1 wrapper
# decompressed (all by fastscan), or by the reference decoder (control batches, bad headers).
_FAST, _COMPRESSED, _LEGACY, _WRAPPER, _REFERENCE = (
    fs.K_FAST,
    fs.K_COMPRESSED,
    fs.K_LEGACY,
    fs.K_WRAPPER,
    fs.K_REFERENCE,
)
_FRAME_HEAD = layout.field_struct(layout.FRAME_HEADER_FIELDS, "base_offset", "length")


def iter_arrow_batches(
    source: Source | ReadRequest,
    *,
    isolation: Isolation = "read_uncommitted",
    include_headers: bool = False,
    verify_crc: bool = True,
    errors: Errors = "strict",
    max_decompressed_bytes: int = DEFAULT_MAX_BYTES,
    report: Report | None = None,
    batch_rows: int = DEFAULT_BATCH_ROWS,
    threads: int | None = None,
    progress: Progress | None = None,
    include_position: bool = False,
    start_offset: int | None = None,
    end_offset: int | None = None,
    start_timestamp: int | None = None,
    end_timestamp: int | None = None,
    max_records: int | None = None,
    binary_view: bool = False,
    low_memory: bool = False,
) -> Iterator[pa.RecordBatch]:
    """The data records of ``source`` as Arrow record batches of at most ``batch_rows`` rows.

    Options as :func:`~.reader.iter_records` (``errors="salvage"`` reads on past framing
    damage, by the same walk: the same rows and damage). ``threads``: worker threads decoding ahead
    (default: the CPUs this process may use, ``cpus.default_threads()``, overridable with
    ``KAFKA_FORMAT_THREADS``); 1 decodes in the calling thread only.
    ``progress``: told each file's size and how far its records were yielded.
    ``include_position``: two more columns, ``file`` (the file's name, dictionary-encoded) and
    ``position`` (the byte position in it of the batch holding the record).
    The range bounds are :func:`~.reader.iter_records`'s; batches outside are not decoded.
    ``binary_view``: ``key`` and ``value`` as ``pa.binary_view()`` pointing into the mapped
    file (uncompressed records, not copies) or into the bytes of compressed records gathered
    past 12 bytes (``views.py``).
    ``source`` may be a :class:`~.request.ReadRequest` (a Spark task's split is one): its
    inputs, windows, isolation, aborted transactions, errors and range are read, not these
    options'.
    ``low_memory``: decode in chunks of at most 2 MiB and 4 Ki records instead of 16 MiB and
    64 Ki: streaming a big file then holds ~20 MiB of data instead of ~150 MiB, for about 2.5
    times the time (``bench/run.py --only memory``); record batches have at most 4 Ki rows.
    """
    rng = Range.of(start_offset, end_offset, start_timestamp, end_timestamp, max_records)
    # Two passes over a stream (or a pipe's path) need it in memory; so does the salvage walk,
    # which looks ahead: the request holds it from the start.
    request = ReadRequest.of(source, isolation=isolation, errors=errors, range=rng)
    if batch_rows < 1:
        raise ValueError(f"batch_rows must be at least 1, not {batch_rows}")
    opts = _Options(
        include_headers=include_headers,
        verify_crc=bool(verify_crc),
        strict=request.errors == "strict",
        max_bytes=max_decompressed_bytes,
        batch_rows=batch_rows,
        schema=_schema(include_headers),
        report=report if report is not None else Report(),
        progress=progress,
        locate=include_position,
        salvage=request.salvage,
        binary_view=binary_view,
        low_memory=low_memory,
    )
    committed: Admission | None = None
    if request.committed:
        aborted = request.aborted
        committed = Admission(aborted if aborted is not None else _collect_aborted(request, opts))
    workers = threads if threads is not None else cpus.default_threads()
    with _Pipeline(max(1, workers)) as pipeline:

        def read(o: _Options, w: Window) -> Iterator[pa.RecordBatch]:
            return _log_batches(w.log, o, committed, pipeline, w)

        # Small files read whole by the workers, ahead (ahead.py): not under read_committed,
        # whose walk carries a partition's state from file to file.
        small = small_file if committed is None and pipeline.workers > 1 else _never
        each = request.windows(from_start=committed is not None)
        # Small segments decoded together (grouped.py): files read one by one
        # under read_committed (its walk), salvage (its own walk) and binary_view (its maps).
        if committed is None and not (opts.salvage or opts.binary_view):
            each = grouped.runs(each, _budget(opts)[1] // COMPRESSED_WEIGHT)
        ranged = (
            clip_rows(batches, w)
            for w, batches in files_ahead(
                each, read, _read_alone, small, pipeline.submit, pipeline.depth, opts, _group
            )
        )
        limit = request.range.max_records if request.range else None
        rows = limit_rows((b for part in ranged for b in part), limit)
        yield from map(ensure_views, rows) if binary_view else rows


def read_table(source: Source, **options: Any) -> pa.Table:
    """All data records of ``source`` as one Arrow table (options as iter_arrow_batches;
    with ``binary_view=True`` the table keeps the mapped file alive, not the caller's file)."""
    schema = _schema(options.get("include_headers", False))
    schema = view_schema(schema) if options.get("binary_view") else schema
    if options.get("include_position", False):
        schema = located_schema(schema)
    return pa.Table.from_batches(list(iter_arrow_batches(source, **options)), schema=schema)


_schema = functools.cache(arrow_schema)


# --- plumbing ---------------------------------------------------------------------------------


def _read_alone(opts: _Options, window: Window) -> Iterator[pa.RecordBatch]:
    """A file read in the calling thread alone (a worker reading it ahead)."""
    return _log_batches(window.log, opts, None, _Pipeline(1), window)


def _never(window: Window) -> None:
    return None


def _group(opts: _Options, group: grouped.Group) -> list[pa.RecordBatch] | None:
    """Small whole files decoded as one chunk (``grouped.py``), their rows in record batches
    of at most ``batch_rows``; None where one is not clean, for the caller to read each alone,
    which says what is wrong where."""
    found = grouped.gather(group, _budget(opts)[0])
    if found is None:
        return None
    log = group.windows[0].log
    judged = SegmentOffsets(None)  # each file against its own segment, by gather
    out: list[pa.RecordBatch] = []
    size = opts.batch_rows
    for table, files in zip(found.tables, found.files, strict=True):
        chunk = _Chunk(
            log.name, log.topic, log.partition, table, 0, found.buf, found.view, len(found.buf)
        )
        _plan(chunk, opts, None, judged)
        if chunk.errors or chunk.ref_rows:
            return None
        _decode_chunk(chunk, opts)
        if chunk.errors or chunk.null_timestamps:
            return None
        at = file_rows(chunk, files, opts.locate)
        out.extend(b for lo, hi, where in at for b in _rows(chunk.batches, lo, hi, size, where))
    return out


@dataclass(slots=True)
class _Input:
    """A log input opened as bytes (``buf``/``view``) or, failing that, as a stream."""

    buf: np.ndarray | None = None
    view: memoryview | None = None
    stream: Any = None
    mapped: mmap.mmap | None = None
    released: int = 0

    def release(self, upto: int) -> None:
        """Give back the mapped pages before ``upto``: streaming a big file keeps RSS flat."""
        if self.mapped is None:
            return
        end = upto - upto % mmap.PAGESIZE
        if end > self.released:
            with contextlib.suppress(OSError, ValueError):
                self.mapped.madvise(mmap.MADV_DONTNEED, self.released, end - self.released)
            self.released = end


@contextmanager
def _open_input(log: LogInput) -> Iterator[_Input]:
    if log.path is None or is_stream_path(log.path):
        with log.open() as opened:
            if isinstance(opened, memoryview):
                yield _Input(buf=np.frombuffer(opened, np.uint8), view=opened)
            else:
                yield _Input(stream=opened)
        return
    with open(log.path, "rb") as fh:
        if os.fstat(fh.fileno()).st_size == 0:
            yield _Input(buf=np.empty(0, np.uint8), view=memoryview(b""))
            return
        mapped = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
        adopt(mapped)
        with contextlib.suppress(OSError, ValueError, AttributeError):
            mapped.madvise(mmap.MADV_SEQUENTIAL)
        view = memoryview(mapped)
        opened = _Input(buf=np.frombuffer(view, np.uint8), view=view, mapped=mapped)
        try:
            yield opened
        finally:
            opened.buf = None
            opened.view = None
            # A chunk still referenced (an abandoned generator) keeps an export: the map then
            # closes when it is collected.
            with contextlib.suppress(BufferError):
                view.release()
                mapped.close()


@dataclass(slots=True)
class _FileEnd:
    tail: TruncatedTail | None = None
    error: FramingError | None = None
    #: Framing damage that ``errors="salvage"`` reads past: the file goes on.
    more: bool = False


@dataclass(slots=True)
class _Chunk:
    """Frames found by one scan, what the planner decided and what the decoder made."""

    name: str
    topic: str | None
    partition: int | None
    table: np.ndarray  # fastscan frame table; positions relative to buf
    shift: int  # add to a position in buf for the position in the file
    buf: np.ndarray
    view: memoryview
    end: int  # end of the last frame in buf
    kind: np.ndarray | None = None
    keep: np.ndarray | None = None
    errors: dict[int, KafkaFormatError] = field(default_factory=dict)
    ref_rows: dict[int, list[Record]] = field(default_factory=dict)
    batches: list[pa.RecordBatch] = field(default_factory=list)
    rows_end: np.ndarray | None = None  # rows decoded up to and including each frame
    null_timestamps: dict[int, TimestampsOutOfRange] = field(default_factory=dict)


def _log_batches(
    log: LogInput,
    opts: _Options,
    committed: Admission | None,
    pipeline: _Pipeline,
    window: Window | None = None,
) -> Iterator[pa.RecordBatch]:
    segment = SegmentOffsets.of(log)
    with _open_input(log) as inp:
        if opts.progress is not None:
            opts.progress.begin_file(len(inp.buf) if inp.buf is not None else 0)
        pending: deque[tuple[_Chunk, Future]] = deque()
        deferred: _Chunk | None = None  # the first chunk waits: one chunk needs no threads
        try:
            if opts.salvage and not inp.stream:
                if log.origin:
                    raise ValueError("salvage reads a file from its start: no origin")
                items = _salvage_chunks(log, inp, opts, window)
            elif inp.stream:
                items = _stream_chunks(log, inp, opts)
            else:
                items = _buffer_chunks(log, inp, opts, window)
            for item in items:
                if isinstance(item, _FileEnd):
                    if deferred is not None:
                        pending.append((deferred, _Done(_decode_chunk, deferred, opts)))
                        deferred = None
                    while pending:
                        yield from _emit(*pending.popleft(), opts, inp)
                    if item.tail is not None:
                        opts.report.truncated.append(item.tail)
                    if item.error is not None:
                        if opts.strict:
                            raise item.error
                        opts.report.errors.append(item.error)
                    if item.more:
                        continue
                    break
                if window is not None:
                    item.table = overlapping(item.table, window)  # the range's, undecoded
                _plan(item, opts, committed, segment)
                if deferred is None and not pending:
                    deferred = item
                    continue
                if deferred is not None:
                    pending.append((deferred, pipeline.submit(_decode_chunk, deferred, opts)))
                    deferred = None
                pending.append((item, pipeline.submit(_decode_chunk, item, opts)))
                while len(pending) > pipeline.depth:
                    yield from _emit(*pending.popleft(), opts, inp)
        finally:
            # Workers read the mapped file: they must be done before it is unmapped.
            for _, future in pending:
                future.cancel()
                with contextlib.suppress(BaseException):
                    future.result()


def _buffer_chunks(
    log: LogInput, inp: _Input, opts: _Options, window: Window | None = None
) -> Iterator[_Chunk | _FileEnd]:
    buf, view = inp.buf, inp.view
    limit = len(buf) if window is None or window.end is None else window.end
    pos = 0 if window is None else window.start
    table = np.empty((_MAX_FRAMES, fs.FRAME_COLUMNS), np.int64)  # reused: chunks copy
    while True:
        n, nxt, status = fs.scan_frames(buf, pos, limit, table, *_budget(opts), COMPRESSED_WEIGHT)
        if n:
            frames = table[:n].copy()
            yield _Chunk(log.name, log.topic, log.partition, frames, log.origin, buf, view, nxt)
        if status != fs.SCAN_BUDGET:  # framing.judge says what lies where the scan stopped
            ended = end_of_walk(view, nxt, limit, log.name, log.origin)
            yield _walk_end(log, *ended, limit, len(view))
            return
        pos = nxt


def _walk_end(
    log: LogInput,
    tail: TruncatedTail | None,
    error: FramingError | None,
    limit: int,
    available: int,
) -> _FileEnd:
    """The end of a window's walk: a tail, damage, or a window that cuts a batch
    (``request.window_cut``)."""
    cut = window_cut(log, tail, limit, available) if tail is not None else None
    if cut is not None:
        return _FileEnd(error=cut)
    return _FileEnd(tail, error)


def _salvage_chunks(
    log: LogInput, inp: _Input, opts: _Options, window: Window | None = None
) -> Iterator[_Chunk | _FileEnd]:
    """``_buffer_chunks`` under ``errors="salvage"``: the walk goes on past framing damage."""
    start = 0 if window is None else window.start
    end = None if window is None else window.end
    limit = len(inp.buf) if end is None else min(end, len(inp.buf))
    for item in salvage_scan(
        inp.buf, inp.view, log.name, *_budget(opts), COMPRESSED_WEIGHT, start, end
    ):
        if isinstance(item, KafkaFormatError):
            yield _FileEnd(error=item, more=True)
        elif isinstance(item, TruncatedTail):
            yield _walk_end(log, item, None, limit, len(inp.buf))
        else:
            last = int(item[-1, fs.F_POS] + item[-1, fs.F_SIZE])
            yield _Chunk(log.name, log.topic, log.partition, item, 0, inp.buf, inp.view, last)
    yield _FileEnd()


#: Records per chunk: a chunk becomes one or a few Arrow batches.
_chunk_rows = DEFAULT_BATCH_ROWS


def _budget(opts: _Options) -> tuple[int, int]:
    """A chunk's most records and bytes (looked up at each call: tests change them)."""
    if opts.low_memory:
        return min(_chunk_rows, LOW_MEMORY_CHUNK_ROWS), min(CHUNK_BYTES, LOW_MEMORY_CHUNK_BYTES)
    return _chunk_rows, CHUNK_BYTES


def _stream_chunks(log: LogInput, inp: _Input, opts: _Options) -> Iterator[_Chunk | _FileEnd]:
    """Chunks of a stream that cannot be mapped: whole frames read one by one, then joined."""
    tails: list[TruncatedTail] = []
    frames: list[Frame] = []
    size = 0
    error = None
    try:
        for frame in iter_stream_frames(inp.stream, file=log.name, tails=tails):
            frames.append(frame)
            size += frame.size
            if size >= _budget(opts)[1] or len(frames) >= _MAX_FRAMES:
                yield _joined_chunk(log, frames)
                frames, size = [], 0
    except FramingError as exc:
        error = exc
    if frames:
        yield _joined_chunk(log, frames)
    yield _FileEnd(tail=tails[0] if tails else None, error=error)


def _joined_chunk(log: LogInput, frames: list[Frame]) -> _Chunk:
    data = b"".join(f.data for f in frames)
    buf = np.frombuffer(data, np.uint8)
    table = np.empty((len(frames), fs.FRAME_COLUMNS), np.int64)
    n, end, _ = fs.scan_frames(buf, 0, len(buf), table, 1 << 62, 1 << 62, 1)
    assert n == len(frames) and end == len(buf)
    return _Chunk(
        log.name,
        log.topic,
        log.partition,
        table,
        frames[0].position,
        buf,
        memoryview(data),
        end,
    )


# --- planning (calling thread) ----------------------------------------------------------------


def _plan(
    chunk: _Chunk, opts: _Options, committed: Admission | None, segment: SegmentOffsets
) -> None:
    """Sort the chunk's frames; decode the odd ones (control, v0/v1, bad headers) now, with
    the reference decoder, and apply ``read_committed``'s walk to every frame in order."""
    t = chunk.table
    magic = t[:, fs.F_MAGIC]
    attributes = t[:, fs.F_ATTR]
    header_ok = t[:, fs.F_HEADER_OK] == 1
    compressed = (attributes & layout.V2_ATTR_COMPRESSION_MASK) != 0
    v2_data = (magic == 2) & header_ok & ((attributes & layout.V2_ATTR_IS_CONTROL_MASK) == 0)
    legacy = ((magic == 0) | (magic == 1)) & header_ok
    kind = np.full(len(t), _REFERENCE, np.int8)
    kind[v2_data & ~compressed] = _FAST
    kind[v2_data & compressed] = _COMPRESSED
    kind[legacy & ~compressed] = _LEGACY
    kind[legacy & compressed] = _WRAPPER
    chunk.kind = kind
    keep = np.ones(len(t), bool)
    chunk.keep = keep
    for i, reason in judge_frames(segment, t, chunk.buf, chunk.view, opts.verify_crc).items():
        kind[i] = _REFERENCE  # no batch of the segment: not decoded, reported in its place
        keep[i] = False
        pos = int(t[i, fs.F_POS]) + chunk.shift
        error = CorruptBatchError(reason)
        chunk.errors[i] = error.located(
            file=chunk.name, position=pos, base_offset=int(t[i, fs.F_BASE])
        )
    # Transaction markers in Kafka's own form need no decoding: the kernel checks them
    # (kernels.markers); any other control batch, or a damaged one, takes the reference.
    control = (magic == 2) & header_ok & ((attributes & layout.V2_ATTR_IS_CONTROL_MASK) != 0)
    reference = kind == _REFERENCE
    if control.any():
        reference &= _marker_types(chunk.buf, t, control, opts.verify_crc) == _NOT_A_MARKER
    odd = [i for i in np.flatnonzero(reference).tolist() if i not in chunk.errors]
    if committed is None and not odd:
        return
    batches: dict[int, Batch] = {}
    options = ReadOptions(opts.verify_crc, True, opts.max_bytes)
    for i in odd:
        pos, size, base = int(t[i, fs.F_POS]), int(t[i, fs.F_SIZE]), int(t[i, fs.F_BASE])
        frame = Frame(
            pos + chunk.shift,
            base,
            chunk.view[pos + layout.FRAME_MAGIC],
            chunk.view[pos : pos + size],
        )
        try:
            batch = read_batch(frame, options, file=chunk.name)
        except KafkaFormatError as exc:
            chunk.errors[i] = exc
            batch = damaged_batch(frame, chunk.name, exc)
        batch.topic, batch.partition = chunk.topic, chunk.partition
        batches[i] = batch
        if batch.records and not batch.is_control and i not in chunk.errors:
            for r in batch.records:
                r.topic, r.partition = chunk.topic, chunk.partition
            chunk.ref_rows[i] = batch.records
    if committed is None:
        return
    tp = (chunk.topic, chunk.partition)
    stable = committed.stable_offset(tp)
    if stable is not None:  # nothing at or past the last stable offset, whoever wrote it
        past = t[:, fs.F_BASE] >= stable
        keep &= ~past
        for i in np.flatnonzero(past).tolist():
            chunk.ref_rows.pop(i, None)
    for i in np.flatnonzero((t[:, fs.F_PID] >= 0) | (kind == _REFERENCE)).tolist():
        batch = batches.get(i)
        if batch is not None:
            admitted = committed.admits(
                tp,
                batch.producer_id,
                batch.base_offset,
                batch.last_offset,
                batch.is_control,
                batch.is_transactional,
            )
            if not admitted:
                chunk.ref_rows.pop(i, None)
            continue
        base = int(t[i, fs.F_BASE])
        attr = int(attributes[i])
        keep[i] = keep[i] and committed.admits(
            tp,
            int(t[i, fs.F_PID]),
            base,
            base + int(t[i, fs.F_LAST_DELTA]),
            # a data batch, or a marker the kernel checked
            bool(attr & layout.V2_ATTR_IS_CONTROL_MASK),
            bool(attr & layout.V2_ATTR_IS_TRANSACTIONAL_MASK),
        )


def _collect_aborted(request: ReadRequest, opts: _Options) -> AbortedTransactions:
    """The reference's first read_committed pass: markers and open transactions, from the
    transactional batches only (the others cannot matter)."""

    def transactional_events() -> Iterator[TxnEvent]:
        for log in request.inputs:
            # fresh checks: this pass must not move the bar the read itself goes on with
            segment = SegmentOffsets(log.base_offset, next_base=log.next_base)
            with _open_input(log) as inp:
                chunks = (
                    _salvage_chunks(log, inp, opts)
                    if opts.salvage
                    else _buffer_chunks(log, inp, opts)
                )
                for item in chunks:
                    if isinstance(item, _FileEnd):
                        if item.more:
                            continue
                        break
                    yield from _transactional(item, opts, segment)

    return collect_aborted_events(transactional_events(), request)


def _transactional(chunk: _Chunk, opts: _Options, segment: SegmentOffsets) -> Iterator[TxnEvent]:
    # a batch whose offsets are no batch of the segment is damage here too: it opens nothing
    misplaced = judge_frames(segment, chunk.table, chunk.buf, chunk.view, opts.verify_crc)
    return table_events(
        chunk.table,
        chunk.buf,
        chunk.view,
        chunk.shift,
        chunk.name,
        chunk.topic,
        chunk.partition,
        opts,
        set(misplaced),
    )


# --- decoding (worker threads) ----------------------------------------------------------------


def _decode_chunk(chunk: _Chunk, opts: _Options) -> _Chunk:
    """CRC, decompression and the numba decoder over the chunk's data batches."""
    t = chunk.table
    view = chunk.view
    kind = chunk.kind
    wanted = np.flatnonzero(kind != _REFERENCE)
    sections = np.zeros((len(wanted), fs.SECTION_COLUMNS), np.int64)
    address = chunk.buf.ctypes.data if len(chunk.buf) else 0
    fs.make_sections(t, kind, chunk.keep, wanted, address, int(opts.verify_crc), sections)
    kinds = kind if len(wanted) == len(kind) else kind[wanted]
    count = sections[:, fs.S_COUNT]
    good = np.ones(len(wanted), bool)
    holders: list[bytes | pa.Buffer] = []  # decompressed payloads, alive until the kernel has run
    # Per-frame Python work only where it is needed: decompression, checks, CRCs that fail.
    room = sections[:, fs.S_END] - sections[:, fs.S_START]
    packed = (kinds == _COMPRESSED) | (kinds == _WRAPPER)
    python = packed | ((kinds == _FAST) & ((count <= 0) | (count > max_record_count(room))))
    if opts.verify_crc:
        python |= _crc_fails(sections, kinds, address)
    if packed.any():  # else nothing to decompress (the common uncompressed chunk: no passes)
        attributes = t[wanted, fs.F_ATTR]
        kernel = _plan_packed(sections, kinds, attributes, address, opts)
        kernel |= _plan_inflated(sections, kinds, attributes, address, opts, holders, kernel)
        python &= ~kernel
    todo = np.flatnonzero(python)
    for k in todo.tolist():
        sec = sections[k]
        try:
            if kinds[k] == _WRAPPER:
                _prepare_wrapper(sec, view, opts, holders)
            elif not _prepare_v2(sec, view, opts, holders):
                good[k] = False  # no records: nothing to decode
        except KafkaFormatError as exc:
            i = int(wanted[k])
            chunk.errors[i] = exc.located(
                file=chunk.name,
                position=int(t[i, fs.F_POS]) + chunk.shift,
                base_offset=int(t[i, fs.F_BASE]),
            )
            good[k] = False
    if not good.all():  # a copy of the whole table (64 Ki rows of sections) only if needed
        wanted, sections = wanted[good], sections[good]
    frame_of = wanted
    decoded = 0
    for lo, hi in _groups(sections):
        ample = False
        while lo < hi:
            # First with buffers sized for usual records; what does not fit (E_ROOM) is
            # decoded again into buffers sized for the worst case, which always fit.
            group = sections[lo:hi]
            batch, done = _run_kernel(group, chunk, opts, ample)
            if decoded:  # the first group's rows start at 0 (a strided pass spared)
                group[:done, fs.S_ROWS_END] += decoded
            decoded += batch.num_rows
            if batch.num_rows:
                chunk.batches.append(batch)
            lo += done
            ample = True
    if len(frame_of) == len(t):  # every frame decoded: the sections are the frames
        rows_end = sections[:, fs.S_ROWS_END]
    else:
        rows_end = np.zeros(len(t), np.int64)
        rows_end[frame_of] = sections[:, fs.S_ROWS_END]
    for k in np.flatnonzero(sections[:, fs.S_STATUS] != fs.E_OK).tolist():
        i = int(frame_of[k])
        sec = sections[k]
        error = (
            _decompress_error(sec, view, opts)
            if sec[fs.S_STATUS] == fs.E_DECOMPRESS
            else _kernel_error(
                sec,
                int(t[i, fs.F_POS]) + chunk.shift,
                bool(t[i, fs.F_ATTR] & layout.V2_ATTR_COMPRESSION_MASK),
            )
        )
        chunk.errors[i] = error.located(
            file=chunk.name,
            position=int(t[i, fs.F_POS]) + chunk.shift,
            base_offset=int(sections[k, fs.S_BASE]),
        )
    chunk.rows_end = np.maximum.accumulate(rows_end) if len(rows_end) else rows_end
    chunk.null_timestamps = _null_timestamps(sections, frame_of, t, chunk.shift, chunk.name)
    del holders
    return chunk


# --- emitting (calling thread) ----------------------------------------------------------------


def _emit(chunk: _Chunk, future: Future, opts: _Options, inp: _Input) -> Iterator[pa.RecordBatch]:
    """The chunk's rows in frame order, its errors raised or reported in the same order."""
    future.result()
    inp.release(chunk.end)  # decoded: its rows are copies, its frames no longer needed
    opts.report.timestamps_out_of_range.extend(
        chunk.null_timestamps[i] for i in sorted(chunk.null_timestamps)
    )
    batches = chunk.batches
    events = sorted({*chunk.errors, *chunk.ref_rows})
    where = locator(chunk) if opts.locate else None
    start = 0
    for i in events:
        end = int(chunk.rows_end[i - 1]) if i else 0
        # The rows before a damaged batch come first, as the reference reads them: a caller
        # seeing the report grow knows every row before the damage was yielded.
        yield from _rows(batches, start, end, opts.batch_rows, where)
        start = end
        if i in chunk.errors:
            if opts.strict:
                raise chunk.errors[i]
            opts.report.errors.append(chunk.errors[i])
            continue
        ref = records_to_batch(chunk.ref_rows[i], opts.schema, opts.include_headers)
        if where is not None:
            position = int(chunk.table[i, fs.F_POS]) + chunk.shift
            ref = located(ref, chunk.name, np.full(ref.num_rows, position, np.int64))
        yield from _rows([ref], 0, None, opts.batch_rows)
    yield from _rows(batches, start, None, opts.batch_rows, where)
    if opts.progress is not None:
        opts.progress.at(chunk.shift + chunk.end)


def _rows(
    batches: list[pa.RecordBatch], start: int, end: int | None, size: int, where=None
) -> Iterator[pa.RecordBatch]:
    """Rows ``start:end`` of the concatenation of ``batches``, at most ``size`` at a time;
    ``where`` (see :func:`.located.locator`) adds their file and batch positions."""
    at = 0
    for batch in batches:
        lo = max(start - at, 0)
        hi = batch.num_rows if end is None else min(end - at, batch.num_rows)
        first = at
        at += batch.num_rows
        while lo < hi:
            step = min(size, hi - lo)
            part = batch.slice(lo, step) if step != batch.num_rows else batch
            yield part if where is None else where(first + lo, part)
            lo += step
