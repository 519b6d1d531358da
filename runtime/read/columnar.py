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
3. A worker thread checks each v2 batch's CRC-32C (``crc32c``), decompresses
   (``codecs.decompress``), and ``fastscan.decode_sections`` (numba, GIL released) decodes the
   chunk's records at once into Arrow buffers from Arrow's memory pool; v0/v1 CRC-32s are
   checked in the kernel (``kernel_crc``). v0/v1 wrappers and v2 batches compressed with
   snappy or LZ4 as Kafka's clients write them never reach Python: ``kernel_payloads`` checks
   their CRCs and plans their payloads in one call, and the decoder decompresses each
   (``kernel_snappy``, ``kernel_lz4``) into a scratch buffer that stays in the cache while its
   records are read. Two workers, three chunks in flight: decompression and decoding of
   successive chunks overlap on two cores.
4. The generator takes chunk results in file order: rows become record batches of at most
   ``batch_rows`` rows; a damaged batch raises (``errors="strict"``), after the rows of the
   batches before it, or is reported (``"skip"``), in the reference's order.

Memory stays bounded whatever the file size: a chunk is ~16 MiB of frames at most (compressed
bytes count four times), at most four are alive at once, and the pages of a mapped file
already decoded are given back with ``madvise(MADV_DONTNEED)``.

Differences from the reference, by design: batches break at chunk boundaries (each has at most
``batch_rows`` rows; the reference fills each to exactly ``batch_rows``), and where the
reference fails with a non-Kafka exception (an offset or timestamp outside the int64 range of
the Arrow column, a magic 0 message inside a magic 1 CreateTime wrapper) this raises, or
reports, a CorruptBatchError. Parse errors have the reference's class, location and wording
(``format/messages``).
"""

from __future__ import annotations

import contextlib
import functools
import heapq
import math
import mmap
import os
import struct
from collections import deque
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa
from crc32c import crc32c

from ..errors import (
    CorruptBatchError,
    DecompressionError,
    FramingError,
    KafkaFormatError,
)
from ..format import messages
from ..format.batches import ReadOptions, count_cannot_fit, read_batch
from ..format.codecs import DEFAULT_MAX_BYTES, decompress_buffer, resolve_codec
from ..format.crc import BATCH_CRC_START
from ..format.framing import Frame, end_of_walk, iter_stream_frames
from ..format.sizes import LEGACY_MESSAGE_HEADER, max_record_count
from ..format.sizes import V2_BATCH_HEADER as _V2_HEADER
from ..kernels import crc32 as kernel_crc
from ..kernels import fastscan as fs
from ..kernels import lz4 as kernel_lz4
from ..kernels import payloads as kernel_payloads
from ..kernels import snappy as kernel_snappy
from ..model import Batch, ControlType, Record, Report, TruncatedTail
from .columnar_reference import DEFAULT_BATCH_ROWS, HEADER_TYPE, arrow_schema, records_to_batch
from .reader import Errors, Isolation, damaged_batch
from .sources import LogInput, Source, mappable_fileno, resolve
from .transactions import AbortedTransactions, collect_aborted

__all__ = [
    "DEFAULT_BATCH_ROWS",
    "HEADER_TYPE",
    "arrow_schema",
    "iter_arrow_batches",
    "read_table",
]

#: Bytes of frames per chunk; a compressed frame counts COMPRESSED_WEIGHT times its size.
CHUNK_BYTES = 16 * 1024 * 1024
COMPRESSED_WEIGHT = 4
_MAX_FRAMES = 65536
#: Most bytes of records one kernel call decodes: Arrow's binary offsets are int32.
_GROUP_BYTES = 1 << 30

# How a frame is decoded: v2 in place, v2 decompressed, v0/v1 in place, v0/v1 wrapper
# decompressed (all by fastscan), or by the reference decoder (control batches, bad headers).
_FAST, _COMPRESSED, _LEGACY, _WRAPPER, _REFERENCE = (
    fs.K_FAST,
    fs.K_COMPRESSED,
    fs.K_LEGACY,
    fs.K_WRAPPER,
    fs.K_REFERENCE,
)
_CODEC_MASK = 0x07
# Rows to make room for in a wrapper's decompressed value: the least an inner entry takes.
_MIN_INNER_ENTRY = LEGACY_MESSAGE_HEADER[0]
_TIMESTAMP_TYPE_BIT = 0x08
_TRANSACTIONAL_BIT = 0x10
_CONTROL_BIT = 0x20
_TIMESTAMP_TYPE = pa.timestamp("us", tz="UTC")
_HEADER_FIELDS = list(HEADER_TYPE.value_type)


def iter_arrow_batches(
    source: Source,
    *,
    isolation: Isolation = "read_uncommitted",
    include_headers: bool = False,
    verify_crc: bool = True,
    errors: Errors = "strict",
    max_decompressed_bytes: int = DEFAULT_MAX_BYTES,
    report: Report | None = None,
    batch_rows: int = DEFAULT_BATCH_ROWS,
    threads: int | None = None,
) -> Iterator[pa.RecordBatch]:
    """The data records of ``source`` as Arrow record batches of at most ``batch_rows`` rows.

    Options as :func:`~.reader.iter_records`. ``threads``: worker threads decoding ahead
    (default: 2, or 1 on a one-core machine); 1 decodes in the calling thread only.
    """
    if isolation not in ("read_uncommitted", "read_committed"):
        raise ValueError(f"isolation must be read_uncommitted or read_committed, not {isolation!r}")
    if errors not in ("strict", "skip"):
        raise ValueError(f"errors must be 'strict' or 'skip', not {errors!r}")
    if batch_rows < 1:
        raise ValueError(f"batch_rows must be at least 1, not {batch_rows}")
    opts = _Options(
        include_headers=include_headers,
        verify_crc=bool(verify_crc),
        strict=errors == "strict",
        max_bytes=max_decompressed_bytes,
        batch_rows=batch_rows,
        schema=_schema(include_headers),
        report=report if report is not None else Report(),
    )
    committed: _CommittedFilter | None = None
    name = None
    if isolation == "read_committed":
        if hasattr(source, "read") and mappable_fileno(source) is None:
            # Two passes over a stream that cannot be mapped need it in memory.
            name = getattr(source, "name", None) or "<stream>"
            source = source.read()
        committed = _CommittedFilter(_collect_aborted(source, opts, name))
    workers = threads if threads is not None else min(2, _CPUS)
    with _Pipeline(max(1, workers)) as pipeline:
        for log in resolve(source, name=name):
            yield from _log_batches(log, opts, committed, pipeline)


def read_table(source: Source, **options: Any) -> pa.Table:
    """All data records of ``source`` as one Arrow table (options as iter_arrow_batches)."""
    include_headers = options.get("include_headers", False)
    return pa.Table.from_batches(
        list(iter_arrow_batches(source, **options)), schema=_schema(include_headers)
    )


_CPUS = os.cpu_count() or 1
_schema = functools.cache(arrow_schema)


# --- plumbing ---------------------------------------------------------------------------------


@dataclass(slots=True)
class _Options:
    include_headers: bool
    verify_crc: bool
    strict: bool
    max_bytes: int
    batch_rows: int
    schema: pa.Schema
    report: Report


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
    if log.path is None:
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


class _Done(Future):
    """A future that is already done (work run in the calling thread)."""

    def __init__(self, fn, *args) -> None:
        super().__init__()
        try:
            self.set_result(fn(*args))
        except BaseException as exc:
            self.set_exception(exc)


class _Pipeline:
    """Runs chunk decoding ahead in worker threads; starts them only for multi-chunk inputs."""

    def __init__(self, workers: int) -> None:
        self.workers = workers
        self.pool: ThreadPoolExecutor | None = None

    def __enter__(self) -> _Pipeline:
        return self

    def __exit__(self, *exc_info) -> None:
        if self.pool is not None:
            self.pool.shutdown(wait=True, cancel_futures=True)

    @property
    def depth(self) -> int:
        return self.workers + 1

    def submit(self, fn, *args) -> Future:
        if self.workers <= 1:
            return _Done(fn, *args)
        if self.pool is None:
            self.pool = ThreadPoolExecutor(self.workers, thread_name_prefix="kafka-format")
        return self.pool.submit(fn, *args)


@dataclass(slots=True)
class _FileEnd:
    tail: TruncatedTail | None = None
    error: FramingError | None = None


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


def _log_batches(
    log: LogInput, opts: _Options, committed: _CommittedFilter | None, pipeline: _Pipeline
) -> Iterator[pa.RecordBatch]:
    with _open_input(log) as inp:
        pending: deque[tuple[_Chunk, Future]] = deque()
        deferred: _Chunk | None = None  # the first chunk waits: one chunk needs no threads
        try:
            items = _stream_chunks(log, inp, opts) if inp.stream else _buffer_chunks(log, inp)
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
                    break
                _plan(item, opts, committed)
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


def _buffer_chunks(log: LogInput, inp: _Input) -> Iterator[_Chunk | _FileEnd]:
    buf, view = inp.buf, inp.view
    limit = len(buf)
    pos = 0
    table = np.empty((_MAX_FRAMES, fs.FRAME_COLUMNS), np.int64)  # reused: chunks copy
    while True:
        n, nxt, status = fs.scan_frames(
            buf, pos, limit, table, _chunk_rows, CHUNK_BYTES, COMPRESSED_WEIGHT
        )
        if n:
            frames = table[:n].copy()
            yield _Chunk(log.name, log.topic, log.partition, frames, 0, buf, view, nxt)
        if status != fs.SCAN_BUDGET:  # framing.judge says what lies where the scan stopped
            yield _FileEnd(*end_of_walk(view, nxt, limit, log.name))
            return
        pos = nxt


#: Records per chunk: a chunk becomes one or a few Arrow batches.
_chunk_rows = DEFAULT_BATCH_ROWS


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
            if size >= CHUNK_BYTES or len(frames) >= _MAX_FRAMES:
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


def _plan(chunk: _Chunk, opts: _Options, committed: _CommittedFilter | None) -> None:
    """Sort the chunk's frames; decode the odd ones (control, v0/v1, bad headers) now, with
    the reference decoder, and apply ``read_committed``'s walk to every frame in order."""
    t = chunk.table
    magic = t[:, fs.F_MAGIC]
    attributes = t[:, fs.F_ATTR]
    header_ok = t[:, fs.F_HEADER_OK] == 1
    compressed = (attributes & _CODEC_MASK) != 0
    v2_data = (magic == 2) & header_ok & ((attributes & _CONTROL_BIT) == 0)
    legacy = ((magic == 0) | (magic == 1)) & header_ok
    kind = np.full(len(t), _REFERENCE, np.int8)
    kind[v2_data & ~compressed] = _FAST
    kind[v2_data & compressed] = _COMPRESSED
    kind[legacy & ~compressed] = _LEGACY
    kind[legacy & compressed] = _WRAPPER
    chunk.kind = kind
    keep = np.ones(len(t), bool)
    chunk.keep = keep
    odd = np.flatnonzero(kind == _REFERENCE).tolist()
    if committed is None and not odd:
        return
    batches: dict[int, Batch] = {}
    options = ReadOptions(opts.verify_crc, True, opts.max_bytes)
    for i in odd:
        pos, size, base = int(t[i, fs.F_POS]), int(t[i, fs.F_SIZE]), int(t[i, fs.F_BASE])
        frame = Frame(pos + chunk.shift, base, chunk.view[pos + 16], chunk.view[pos : pos + size])
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
                # A damaged marker of an aborting producer can only be its ABORT
                # (transactions.AbortedTransactions.filter does the same).
                _has_abort_marker(batch) or (batch.is_control and batch.error is not None),
            )
            if not admitted:
                chunk.ref_rows.pop(i, None)
            continue
        base = int(t[i, fs.F_BASE])
        attr = int(attributes[i])
        keep[i] = committed.admits(
            tp,
            int(t[i, fs.F_PID]),
            base,
            base + int(t[i, fs.F_LAST_DELTA]),
            False,
            bool(attr & _TRANSACTIONAL_BIT),
            False,
        )


def _has_abort_marker(batch: Batch) -> bool:
    return bool(batch.records) and any(
        r.control is not None and r.control.type == ControlType.ABORT for r in batch.records
    )


class _CommittedFilter:
    """``AbortedTransactions.filter``'s walk (Kafka consumer's), one batch header at a time.

    Kept step for step the same as ``transactions.AbortedTransactions.filter``; the tests
    compare the two on transactional record sets.
    """

    def __init__(self, aborted: AbortedTransactions) -> None:
        self.aborted = aborted
        self.pending: dict[Any, list[tuple[int, int]]] = {}
        self.dropping: dict[Any, set[int]] = {}

    def admits(
        self,
        tp: tuple[str | None, int | None],
        producer_id: int,
        base_offset: int,
        last_offset: int,
        is_control: bool,
        is_transactional: bool,
        abort_marker: bool,
    ) -> bool:
        """Whether a consumer would see the batch's records (if it has any)."""
        if tp not in self.pending:
            self.pending[tp] = sorted(self.aborted.aborted.get(tp, ()))
            self.dropping[tp] = set()
        queue, producers = self.pending[tp], self.dropping[tp]
        if producer_id >= 0:
            while queue and queue[0][0] <= last_offset:
                producers.add(heapq.heappop(queue)[1])
            if is_control:
                if abort_marker:
                    producers.discard(producer_id)
                return False
            if is_transactional:
                if producer_id in producers:
                    return False
                first = self.aborted.open.get(tp, {}).get(producer_id)
                if first is not None and base_offset >= first:
                    return False
        return not is_control


def _collect_aborted(source: Source, opts: _Options, name: str | None) -> AbortedTransactions:
    """The reference's first read_committed pass: markers and open transactions, decoded
    only for transactional batches (the others cannot matter)."""

    def transactional_batches() -> Iterator[Batch]:
        for log in resolve(source, name=name):
            with _open_input(log) as inp:
                for item in _buffer_chunks(log, inp):
                    if isinstance(item, _FileEnd):
                        break
                    yield from _transactional(item, opts)

    return collect_aborted(transactional_batches(), source)


def _transactional(chunk: _Chunk, opts: _Options) -> Iterator[Batch]:
    t = chunk.table
    attributes = t[:, fs.F_ATTR]
    wanted = (
        (t[:, fs.F_MAGIC] == 2)
        & (t[:, fs.F_HEADER_OK] == 1)
        & (t[:, fs.F_PID] >= 0)
        & ((attributes & _TRANSACTIONAL_BIT) != 0)
    )
    for i in np.flatnonzero(wanted).tolist():
        pos, size, base = int(t[i, fs.F_POS]), int(t[i, fs.F_SIZE]), int(t[i, fs.F_BASE])
        frame = Frame(pos + chunk.shift, base, 2, chunk.view[pos : pos + size])
        control = bool(attributes[i] & _CONTROL_BIT)
        try:
            batch = read_batch(
                frame, ReadOptions(opts.verify_crc, control, opts.max_bytes), file=chunk.name
            )
        except KafkaFormatError as exc:
            batch = damaged_batch(frame, chunk.name, exc)
        batch.topic, batch.partition = chunk.topic, chunk.partition
        yield batch


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
    kinds = kind[wanted]
    count = sections[:, fs.S_COUNT]
    good = np.ones(len(wanted), bool)
    holders: list[bytes | pa.Buffer] = []  # decompressed payloads, alive until the kernel has run
    # Per-frame Python work only where it is needed: v2 CRCs, decompression, checks.
    if opts.verify_crc:
        python = kinds != _LEGACY
    else:
        room = sections[:, fs.S_END] - sections[:, fs.S_START]
        python = (
            (kinds == _COMPRESSED)
            | (kinds == _WRAPPER)
            | ((kinds == _FAST) & ((count <= 0) | (count > max_record_count(room))))
        )
    python &= ~_plan_packed(sections, kinds, t[wanted, fs.F_ATTR], address, opts)
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
    frame_of = wanted[good]
    sections = sections[good]
    rows_end = np.zeros(len(t), np.int64)
    decoded = 0
    for lo, hi in _groups(sections):
        ample = False
        while lo < hi:
            # First with buffers sized for usual records; what does not fit (E_ROOM) is
            # decoded again into buffers sized for the worst case, which always fit.
            group = sections[lo:hi]
            batch, done = _run_kernel(group, chunk, opts, ample)
            group[:done, fs.S_ROWS_END] += decoded
            decoded += batch.num_rows
            if batch.num_rows:
                chunk.batches.append(batch)
            lo += done
            ample = True
    rows_end[frame_of] = sections[:, fs.S_ROWS_END]
    for k in np.flatnonzero(sections[:, fs.S_STATUS] != fs.E_OK).tolist():
        i = int(frame_of[k])
        sec = sections[k]
        error = (
            _decompress_error(sec, view, opts)
            if sec[fs.S_STATUS] == fs.E_DECOMPRESS
            else _kernel_error(sec)
        )
        chunk.errors[i] = error.located(
            file=chunk.name,
            position=int(t[i, fs.F_POS]) + chunk.shift,
            base_offset=int(sections[k, fs.S_BASE]),
        )
    chunk.rows_end = np.maximum.accumulate(rows_end) if len(rows_end) else rows_end
    del holders
    return chunk


def _prepare_v2(sec: np.ndarray, view: memoryview, opts: _Options, holders: list) -> bool:
    """CRC and count checks of a v2 batch, and its payload decompressed (the reference's
    order: CRC, negative count, decompression, count against size). False for a batch of no
    records, which Kafka (and the reference) neither decompresses nor checks further."""
    pos = int(sec[fs.S_START]) - _V2_HEADER
    end = int(sec[fs.S_END])
    count = int(sec[fs.S_COUNT])
    if opts.verify_crc:
        computed = crc32c(view[pos + BATCH_CRC_START : end])
        stored = struct.unpack_from(">I", view, pos + 17)[0]
        if computed != stored:
            raise messages.crc_mismatch(stored, computed, "crc32c")
    if count < 0:
        raise CorruptBatchError(messages.negative_count(count))
    attributes = struct.unpack_from(">h", view, pos + 21)[0]
    codec = attributes & _CODEC_MASK
    if count == 0:
        resolve_codec(codec, magic=2)
        return False
    if codec:
        payload = decompress_buffer(
            codec, view[pos + _V2_HEADER : end], magic=2, max_bytes=opts.max_bytes
        )
        holders.append(payload)
        sec[fs.S_ADDR] = _address(payload)
        sec[fs.S_START] = 0
        sec[fs.S_END] = end = len(payload)
        start = 0
    else:
        start = pos + _V2_HEADER
    if count > max_record_count(end - start):
        raise count_cannot_fit(count, end - start)
    return True


def _plan_packed(
    sections: np.ndarray, kinds: np.ndarray, attributes: np.ndarray, address: int, opts: _Options
) -> np.ndarray:
    """The snappy and LZ4 wrappers and v2 batches the kernel decompresses itself
    (``kernel_payloads``): their CRCs checked and their payloads planned in one call per kind,
    without the GIL. True where a section was turned into a FORMAT_PACKED_WRAPPER or
    FORMAT_PACKED_V2 one; the others take ``_prepare_wrapper`` or ``_prepare_v2``."""
    codecs = attributes & _CODEC_MASK
    packed = codecs == kernel_payloads.SNAPPY
    if kernel_lz4.LZ4_DECOMPRESS:
        packed |= codecs == kernel_payloads.LZ4
    taken = np.zeros(len(kinds), bool)
    room = opts.max_bytes + 1
    wrappers = np.flatnonzero(packed & (kinds == _WRAPPER))
    if len(wrappers):
        plan = np.empty((len(wrappers), 3), np.int64)
        kernel_payloads.plan_wrappers(
            address,
            np.ascontiguousarray(sections[wrappers, fs.S_START]),
            np.ascontiguousarray(sections[wrappers, fs.S_END]),
            np.ascontiguousarray(sections[wrappers, fs.S_MAGIC]),
            codecs[wrappers],
            bool(opts.verify_crc),
            room,
            plan,
        )
        ok = plan[:, 2] >= 0
        chosen = wrappers[ok]
        sections[chosen, fs.S_FORMAT] = fs.FORMAT_PACKED_WRAPPER
        _point_at_scratch(sections, chosen, codecs, plan[ok, 0], plan[ok, 1], plan[ok, 2])
        sections[chosen, fs.S_COUNT] = plan[ok, 2] // _MIN_INNER_ENTRY + 1
        taken[chosen] = True
    batches = np.flatnonzero(packed & (kinds == _COMPRESSED))
    if len(batches) and (kernel_crc.CRC32C_FUNCTION or not opts.verify_crc):
        capacity = np.empty(len(batches), np.int64)
        starts = np.ascontiguousarray(sections[batches, fs.S_START])
        ends = np.ascontiguousarray(sections[batches, fs.S_END])
        kernel_payloads.plan_batches(
            address,
            starts,
            ends,
            np.ascontiguousarray(sections[batches, fs.S_COUNT]),
            codecs[batches],
            bool(opts.verify_crc),
            room,
            kernel_crc.CRC32C_FUNCTION,
            capacity,
        )
        ok = capacity >= 0
        chosen = batches[ok]
        sections[chosen, fs.S_FORMAT] = fs.FORMAT_PACKED_V2
        _point_at_scratch(sections, chosen, codecs, starts[ok], ends[ok], capacity[ok])
        taken[chosen] = True
    return taken


def _point_at_scratch(sections, chosen, codecs, payload_start, payload_end, capacity) -> None:
    sections[chosen, fs.S_PAYLOAD_START] = payload_start
    sections[chosen, fs.S_PAYLOAD_END] = payload_end
    sections[chosen, fs.S_CODEC] = codecs[chosen]
    sections[chosen, fs.S_START] = 0
    sections[chosen, fs.S_END] = capacity


def _decompress_error(sec: np.ndarray, view: memoryview, opts: _Options) -> KafkaFormatError:
    """What the Python path raises for a section whose payload the kernel could not
    decompress (the codec library's own error, so that both paths report alike) or, for a v2
    batch, whose record count cannot fit in what it decompresses to."""
    value = view[int(sec[fs.S_PAYLOAD_START]) : int(sec[fs.S_PAYLOAD_END])]
    magic = int(sec[fs.S_MAGIC])
    codec = int(sec[fs.S_CODEC])
    try:
        payload = decompress_buffer(codec, value, magic=magic, max_bytes=opts.max_bytes)
    except KafkaFormatError as exc:
        return exc
    count = int(sec[fs.S_COUNT])
    if magic == 2 and count > max_record_count(len(payload)):
        return count_cannot_fit(count, len(payload))
    # Not reached while the kernels accept what the codec libraries accept (tested).
    return DecompressionError(f"{resolve_codec(codec, magic=magic).name.lower()}: does not decode")


_LEGACY_HEAD = struct.Struct(">IbB")  # crc, magic, attributes (from byte 12)
_I32 = struct.Struct(">i")


def _prepare_wrapper(sec: np.ndarray, view: memoryview, opts: _Options, holders: list) -> None:
    """CRC of a v0/v1 wrapper and its value decompressed (the inner messages)."""
    pos, end = int(sec[fs.S_START]), int(sec[fs.S_END])
    stored, magic, attributes = _LEGACY_HEAD.unpack_from(view, pos + 12)
    if opts.verify_crc:
        # By address: the chunk's own (not yet replaced by the payload's), and zlib's crc32
        # is three times slower than the kernels'.
        computed = kernel_crc.crc32(int(sec[fs.S_ADDR]), pos + 16, end)
        if computed != stored:
            raise messages.crc_mismatch(stored, computed, "crc32")
    value = wrapper_value(view, pos, end, magic)
    payload = decompress_buffer(
        attributes & _CODEC_MASK, value, magic=magic, max_bytes=opts.max_bytes
    )
    holders.append(payload)
    sec[fs.S_ADDR] = _address(payload)
    sec[fs.S_START] = 0
    sec[fs.S_END] = len(payload)
    sec[fs.S_COUNT] = len(payload) // _MIN_INNER_ENTRY + 1


def wrapper_value(view: memoryview, pos: int, end: int, magic: int) -> memoryview:
    """The value (the compressed inner messages) of the v0/v1 wrapper entry ``view[pos:end]``,
    read as the LegacyMessage parser reads it; its header fields are known to be there."""
    p = pos + (26 if magic == 1 else 18)
    (key_len,) = _I32.unpack_from(view, p)
    p += 4
    if key_len >= 0:
        if key_len > end - p:
            raise CorruptBatchError(messages.malformed_message(messages.MESSAGE_FIELD_PAST_END))
        p += key_len
    if end - p < 4:
        raise CorruptBatchError(messages.malformed_message(messages.MESSAGE_FIELD_PAST_END))
    (value_len,) = _I32.unpack_from(view, p)
    p += 4
    if value_len < 0:
        raise CorruptBatchError(messages.WRAPPER_NULL_VALUE)
    if value_len > end - p:
        raise CorruptBatchError(messages.malformed_message(messages.MESSAGE_FIELD_PAST_END))
    return view[p : p + value_len]


def _address(data: bytes | pa.Buffer) -> int:
    if isinstance(data, pa.Buffer):
        return data.address
    return np.frombuffer(data, np.uint8).ctypes.data if data else 0


def _groups(sections: np.ndarray) -> Iterator[tuple[int, int]]:
    """Runs of sections small enough for int32 Arrow offsets (one run, but for giant ones)."""
    sizes = sections[:, fs.S_END] - sections[:, fs.S_START]
    if int(sizes.sum()) <= _GROUP_BYTES:
        yield 0, len(sizes)
        return
    lo = 0
    total = 0
    for k, size in enumerate(sizes.tolist()):
        if k > lo and total + size > _GROUP_BYTES:
            yield lo, k
            lo, total = k, 0
        total += size
    if lo < len(sizes) or not len(sizes):
        yield lo, len(sizes)


def _alloc(shape: tuple[int, ...], dtype) -> tuple[pa.Buffer, np.ndarray]:
    """A writable array in Arrow's memory pool, which keeps freed pages for the next chunk
    (fresh pages from the OS cost a fault each, about as much as decoding them)."""
    dtype = np.dtype(dtype)
    count = math.prod(shape)
    buffer = pa.allocate_buffer(max(count * dtype.itemsize, 8))
    array = np.frombuffer(buffer, dtype, count)
    return buffer, array.reshape(shape) if len(shape) > 1 else array


def _run_kernel(
    sections: np.ndarray, chunk: _Chunk, opts: _Options, ample: bool
) -> tuple[pa.RecordBatch, int]:
    """Decode ``sections`` into one record batch; returns it and how many sections it holds
    (fewer than all when the buffers were full)."""
    rows = int(sections[:, fs.S_COUNT].sum())
    data = int((sections[:, fs.S_END] - sections[:, fs.S_START]).sum())
    headers = opts.include_headers
    # Values take most of a record; keys and headers are small. ``ample``: the worst case.
    small = data if ample else data // 4 + 4096
    header_room = (data // 2 + 1 if ample else rows * 2 + 16) if headers else 0
    rec_buf, rec = _alloc((2, rows), np.int64)
    tt_buf, ts_type = _alloc((rows,), np.int32)
    off_buf, off32 = _alloc((3, rows + 1), np.int32)
    valid = np.empty((4, rows), np.uint8)
    key_buf, key_data = _alloc((small,), np.uint8)
    value_buf, value_data = _alloc((data,), np.uint8)
    hoff_buf, hoff = _alloc((2, header_room + 1), np.int32)
    hvalid = np.empty(header_room, np.uint8)
    hkey_buf, hkey_data = _alloc((small if headers else 0,), np.uint8)
    hvalue_buf, hvalue_data = _alloc((small if headers else 0,), np.uint8)
    off32[:, 0] = 0
    hoff[:, 0] = 0
    cur = np.zeros(fs.CURSORS, np.int64)
    packed = np.isin(sections[:, fs.S_FORMAT], (fs.FORMAT_PACKED_WRAPPER, fs.FORMAT_PACKED_V2))
    largest = int(sections[packed, fs.S_END].max()) if packed.any() else 0
    scratch = np.empty(largest + kernel_snappy.SLACK, np.uint8)
    done = fs.decode_sections(
        sections,
        rec,
        ts_type,
        off32,
        valid,
        key_data,
        value_data,
        hoff,
        hvalid,
        hkey_data,
        hvalue_data,
        cur,
        headers,
        scratch,
        kernel_lz4.LZ4_DECOMPRESS,
    )
    if ample and done < len(sections):
        raise AssertionError("worst-case buffers too small for the record decoder")
    n = int(cur[fs.C_ROWS])
    if n == 0:
        return _empty(opts), done
    row32 = (rows + 1) * 4
    columns = [
        _binary(pa.binary(), n, valid[0], off_buf.slice(0, row32), key_buf),
        _binary(pa.binary(), n, valid[1], off_buf.slice(row32, row32), value_buf),
        _repeat(chunk.topic, pa.string(), n),
        _repeat(chunk.partition, pa.int32(), n),
        pa.Array.from_buffers(pa.int64(), n, [None, rec_buf.slice(0, rows * 8)]),
        _fixed(_TIMESTAMP_TYPE, n, valid[3], rec_buf.slice(rows * 8, rows * 8)),
        pa.Array.from_buffers(pa.int32(), n, [None, tt_buf]),
    ]
    if headers:
        count = int(cur[fs.C_HEADERS])
        row_h = (header_room + 1) * 4
        struct_array = pa.StructArray.from_arrays(
            [
                pa.Array.from_buffers(
                    pa.string(), count, [None, hoff_buf.slice(0, row_h), hkey_buf]
                ),
                _binary(pa.binary(), count, hvalid, hoff_buf.slice(row_h, row_h), hvalue_buf),
            ],
            fields=_HEADER_FIELDS,
        )
        present = valid[2, :n]
        nulls = n - int(np.count_nonzero(present))
        columns.append(
            pa.Array.from_buffers(
                HEADER_TYPE,
                n,
                [_bitmap(present) if nulls else None, off_buf.slice(2 * row32, row32)],
                null_count=nulls,
                children=[struct_array],
            )
        )
    return pa.RecordBatch.from_arrays(columns, schema=opts.schema), done


def _empty(opts: _Options) -> pa.RecordBatch:
    return pa.RecordBatch.from_pylist([], schema=opts.schema)


def _bitmap(valid: np.ndarray) -> pa.Buffer:
    return pa.py_buffer(np.packbits(valid, bitorder="little"))


def _binary(kind, n: int, valid: np.ndarray, offsets: pa.Buffer, data: pa.Buffer) -> pa.Array:
    nulls = n - int(np.count_nonzero(valid[:n]))
    bitmap = _bitmap(valid[:n]) if nulls else None
    return pa.Array.from_buffers(kind, n, [bitmap, offsets, data], null_count=nulls)


def _fixed(kind, n: int, valid: np.ndarray, values: pa.Buffer) -> pa.Array:
    nulls = n - int(np.count_nonzero(valid[:n]))
    bitmap = _bitmap(valid[:n]) if nulls else None
    return pa.Array.from_buffers(kind, n, [bitmap, values], null_count=nulls)


def _repeat(value, kind, n: int) -> pa.Array:
    return pa.nulls(n, kind) if value is None else pa.repeat(pa.scalar(value, kind), n)


_MALFORMED = {
    fs.E_EOF: messages.FIELD_PAST_END,
    fs.E_VARINT_TOO_LONG: messages.VARINT_TOO_LONG,
    fs.E_NEGATIVE_LENGTH: messages.NEGATIVE_LENGTH,
    fs.E_UTF8: messages.NOT_UTF8,
}


def _kernel_error(sec: np.ndarray) -> KafkaFormatError:
    """The exception the reference raises for what the kernel found (same class, same
    location; the wording of parse errors differs)."""
    status = int(sec[fs.S_STATUS])
    at = int(sec[fs.S_ERR_POS])
    arg, arg2, inner = int(sec[fs.S_ERR_ARG]), int(sec[fs.S_ERR_ARG2]), int(sec[fs.S_ERR_ARG3])
    if status in _MALFORMED:
        return CorruptBatchError(messages.malformed_records(_MALFORMED[status]))
    if status == fs.E_RECORD_SIZE:
        return CorruptBatchError(messages.record_size(arg, arg2))
    if status == fs.E_LEFTOVER:
        return CorruptBatchError(messages.leftover_bytes(arg2, int(sec[fs.S_COUNT])))
    if status == fs.E_OFFSET_RANGE:
        return CorruptBatchError(messages.offset_out_of_range())
    if status == fs.E_TIMESTAMP_RANGE:
        return CorruptBatchError(messages.timestamp_out_of_range())
    if status == fs.E_CRC:
        if sec[fs.S_FORMAT] in (fs.FORMAT_INNER, fs.FORMAT_PACKED_WRAPPER):
            return messages.crc_mismatch(arg2, arg, f"crc32 of inner message {inner}")
        return messages.crc_mismatch(arg2, arg, "crc32")
    if status == fs.E_MESSAGE_EOF:
        return CorruptBatchError(messages.malformed_message(messages.MESSAGE_FIELD_PAST_END))
    if status == fs.E_INNER_MAGIC:
        return CorruptBatchError(messages.inner_magic(arg))
    if status == fs.E_INNER_NESTED:
        return CorruptBatchError(messages.inner_nested(inner))
    if status == fs.E_INNER_TRAILING:
        return CorruptBatchError(messages.inner_trailing(arg2))
    if status == fs.E_INNER_NONE:
        return CorruptBatchError(messages.inner_none())
    if status == fs.E_INNER_FRAMING:
        # As the reference: located inside the decompressed messages, not in the file.
        return FramingError(messages.inner_framing(arg), position=at, base_offset=inner)
    if status == fs.E_INNER_NO_TIMESTAMP:
        return CorruptBatchError(messages.inner_no_timestamp(inner))
    return CorruptBatchError(f"record decoder status {status}")


# --- emitting (calling thread) ----------------------------------------------------------------


def _emit(chunk: _Chunk, future: Future, opts: _Options, inp: _Input) -> Iterator[pa.RecordBatch]:
    """The chunk's rows in frame order, its errors raised or reported in the same order."""
    future.result()
    inp.release(chunk.end)  # decoded: its rows are copies, its frames no longer needed
    batches = chunk.batches
    events = sorted({*chunk.errors, *chunk.ref_rows})
    start = 0
    for i in events:
        end = int(chunk.rows_end[i - 1]) if i else 0
        if i in chunk.errors:
            if opts.strict:
                yield from _rows(batches, start, end, opts.batch_rows)
                raise chunk.errors[i]
            opts.report.errors.append(chunk.errors[i])
            continue
        yield from _rows(batches, start, end, opts.batch_rows)
        start = end
        yield from _rows(
            [records_to_batch(chunk.ref_rows[i], opts.schema, opts.include_headers)],
            0,
            None,
            opts.batch_rows,
        )
    yield from _rows(batches, start, None, opts.batch_rows)


def _rows(
    batches: list[pa.RecordBatch], start: int, end: int | None, size: int
) -> Iterator[pa.RecordBatch]:
    """Rows ``start:end`` of the concatenation of ``batches``, at most ``size`` at a time."""
    at = 0
    for batch in batches:
        lo = max(start - at, 0)
        hi = batch.num_rows if end is None else min(end - at, batch.num_rows)
        at += batch.num_rows
        while lo < hi:
            step = min(size, hi - lo)
            yield batch.slice(lo, step) if step != batch.num_rows else batch
            lo += step
