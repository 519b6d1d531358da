"""Where the bytes of a Kafka log go: the computation behind ``kafka-format stats`` (no printing).

    >>> stats = log_stats(["/var/lib/kafka/orders-0"], what_if=True)
    >>> stats.total.records, stats.total.bytes, stats.what_if.estimates[0].bytes

Per topic and partition (or per file, for files outside a ``topic-N`` directory): records,
batches, bytes, the magic and codec mix, records per batch, and every byte of every valid batch
put in one of four places, counted *uncompressed* (what the batch would take without
compression)::

    batch headers     v2: 61 bytes a batch (LOG_OVERHEAD 12 included);
                      v0/v1 compressed wrappers: the wrapper's message header (and key)
    message headers   v0/v1: 26 (v0) / 34 (v1) bytes a message, LOG_OVERHEAD, CRC, magic,
                      attributes, [timestamp,] key length and value length included; for the
                      inner messages of a wrapper, uncompressed
    record framing    v2: each record's varints (length, attributes, timestamp and offset
                      deltas, key and value lengths, header count, header key and value
                      lengths)
    payload           keys, values, header keys and header values

so that ``batch headers + message headers + record framing + payload`` is the uncompressed
size, and the bytes on disk are that minus what compression saved (``codecs``: per codec the
record payloads as stored and uncompressed). Control batches (transaction markers) are counted
apart (``control_bytes``); damaged batches and truncated tails are not in the breakdown either.

How it reads, per file, in two passes that run side by side: a header pass finds the frames
with the columnar path's numba scanner (``fastscan.scan_frames``), checks every CRC and
decompresses each compressed data batch for its uncompressed size (and, for a v0/v1 wrapper,
its count of inner messages); the records come from the columnar fast path
(``columnar.iter_arrow_batches``), whose rows are laid back onto their batches by the record
counts of the header pass. Frames that look damaged go through the reference decoder
(``batches.read_batch``) for its exact error. Should the two passes disagree on which batches
are whole, the file's records are read again by the reference decoder. Damaged batches are
counted and listed with their file and byte position, as ``iter_batches(errors="skip")``
reports them; ``strict=True`` raises the first instead.

``what_if=True`` also estimates the same data re-encoded as v2 batches, uncompressed and with
each codec, from a sample of whole batches re-encoded (``whatif.py`` does that part).
"""

from __future__ import annotations

import contextlib
import os
import struct
import time
import zlib
from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..cpus import map_in_order
from ..errors import CorruptBatchError, FramingError, KafkaFormatError
from ..format import layout, messages
from ..format.batches import ReadOptions, read_batch
from ..format.codecs import DEFAULT_MAX_BYTES, decompress_buffer, resolve_codec
from ..format.framing import Frame, end_of_walk, iter_frames
from ..format.sizes import LEGACY_MESSAGE_HEADER
from ..kernels import fastscan as fs
from ..model import Record, Report, TruncatedTail
from ..read.ahead import threads_pay
from ..read.columnar import iter_arrow_batches, wrapper_value
from ..read.plan import crc_holds, inflatable, inflate_payloads
from ..read.sources import LogInput, Source, is_stream_path, resolve, spooled
from .stats_model import (
    CODEC_JSON_FIELDS,
    CODEC_NAMES,
    MAGIC_JSON_FIELDS,
    TS_NAMES,
    CodecStats,
    Damage,
    LogStats,
    MagicStats,
    PartitionStats,
    TimestampRange,
)
from .whatif import (
    DEFAULT_BATCH_SIZE,
    DEFAULT_SAMPLE,
    WHAT_IF_CODECS,
    Sampler,
    WhatIf,
    WhatIfEstimate,
    estimate,
)

__all__ = [
    "CODEC_JSON_FIELDS",
    "DEFAULT_BATCH_SIZE",
    "DEFAULT_SAMPLE",
    "LEGACY_MESSAGE_HEADER",
    "MAGIC_JSON_FIELDS",
    "WHAT_IF_CODECS",
    "CodecStats",
    "Damage",
    "LogStats",
    "MagicStats",
    "PartitionStats",
    "TimestampRange",
    "WhatIf",
    "WhatIfEstimate",
    "file_stats",
    "log_stats",
]

# What each valid batch is, for the breakdown.
_V2, _LEGACY, _WRAPPER, _CONTROL = 0, 1, 2, 3


# --- entry points -----------------------------------------------------------------------------


@dataclass(slots=True, frozen=True)
class _Options:
    strict: bool
    verify_crc: bool
    max_bytes: int


def log_stats(
    sources: Source | Sequence[Source],
    *,
    strict: bool = False,
    verify_crc: bool = True,
    what_if: bool = False,
    sample: int = DEFAULT_SAMPLE,
    batch_size: int | None = None,
    max_decompressed_bytes: int = DEFAULT_MAX_BYTES,
    progress: Callable[[str, int, int], None] | None = None,
) -> LogStats:
    """Stats of every partition (or loose file) of ``sources``: files, partition directories,
    log directories, or bytes; a list of them, or one.

    ``strict`` raises the first damaged batch (a :class:`KafkaFormatError`) instead of counting
    it; ``verify_crc=False`` takes batches whose CRC does not hold for whole. ``what_if``
    estimates v2 re-encodings from a sample of about ``sample`` records (whole batches);
    ``batch_size`` regroups records into batches of that many bytes instead of keeping the
    source batches. ``progress(file, position, size)`` hears how far the header pass is in
    each file (it may be called from another thread).
    """
    if sample < 1:
        raise ValueError(f"sample must be at least 1, not {sample}")
    if batch_size is not None and batch_size < 1:
        raise ValueError(f"batch_size must be at least 1, not {batch_size}")
    started = time.perf_counter()
    opts = _Options(strict, verify_crc, max_decompressed_bytes)
    with contextlib.ExitStack() as spools:
        inputs: list[LogInput] = []
        for source in _as_list(sources):
            inputs.extend(_readable(resolve(source), spools))
        partitions, samplers = _scan_groups(inputs, opts, what_if, batch_size, progress)
        total = PartitionStats()
        for p in partitions:
            total.merge(p)
        if what_if:  # the samplers read their batches again: before the spools go
            estimate(partitions, samplers, total, sample, batch_size)
    return LogStats(partitions, total, time.perf_counter() - started)


def _scan_groups(
    inputs: list[LogInput],
    opts: _Options,
    what_if: bool,
    batch_size: int | None,
    progress: Callable[[str, int, int], None] | None,
) -> tuple[list[PartitionStats], list[Sampler]]:
    """Every input scanned, by partition (several at once: ``cpus.map_in_order``, the same
    stats and first damage as one thread), and the what-if samplers (which have sampled)."""

    def scan(key_inputs: list[LogInput]) -> tuple[PartitionStats, Sampler | None]:
        first = key_inputs[0]
        stats = PartitionStats(first.topic, first.partition, source=_source_label(first))
        sampler = Sampler(key_inputs, batch_size, opts.max_bytes) if what_if else None
        ahead = None if opts.strict or what_if else _files_ahead(key_inputs, opts)
        for index, log in enumerate(key_inputs):
            stats.merge(_scan_input(log, opts, progress, sampler, index, ahead))
        return stats, sampler

    # what-if sampling reads one partition at a time
    known = (size for log in inputs if (size := log.known_size()) is not None)
    pays = not what_if and threads_pay(known)
    scanned = map_in_order(scan, _group(inputs), name="kafka-format-stats", parallel=pays)
    return [stats for stats, _ in scanned], [s for _, s in scanned if s is not None]


def file_stats(
    source: Source,
    *,
    name: str | None = None,
    topic: str | None = None,
    partition: int | None = None,
    strict: bool = False,
    verify_crc: bool = True,
    max_decompressed_bytes: int = DEFAULT_MAX_BYTES,
) -> PartitionStats:
    """The stats of one file of batches (a path or bytes); ``name``, ``topic`` and
    ``partition`` label it (the Spark aggregation's per-segment step)."""
    opts = _Options(strict, verify_crc, max_decompressed_bytes)
    with contextlib.ExitStack() as spools:
        if isinstance(source, str | os.PathLike):
            logs = _readable(resolve(source), spools)
            if len(logs) != 1:
                raise ValueError(f"file_stats reads one file, {source} holds {len(logs)}")
            log = logs[0]
            if name is not None:
                log.name = name
        else:
            log = _readable(resolve(source, name=name), spools)[0]
        if topic is not None or partition is not None:
            log.topic, log.partition = topic, partition
        stats = _scan_input(log, opts, None, None, 0)
    stats.topic, stats.partition = log.topic, log.partition
    stats.source = _source_label(log)
    return stats


def _as_list(sources: Source | Sequence[Source]) -> list[Source]:
    if isinstance(sources, str | bytes | bytearray | memoryview | os.PathLike):
        return [sources]
    if hasattr(sources, "read"):
        return [sources]
    return list(sources)


def _readable(inputs: list[LogInput], spools: contextlib.ExitStack) -> list[LogInput]:
    """Inputs the two passes can each read: a pipe, a FIFO or ``/dev/stdin`` is copied once
    into a temporary file (kept until ``spools`` closes; the input keeps its name), and a
    stream that cannot be mapped is read into memory."""
    for log in inputs:
        if log.path is not None and is_stream_path(log.path):
            log.path = spools.enter_context(spooled(log.path))
        elif log.path is None and not isinstance(log.data, bytes | bytearray | memoryview):
            with log.open() as opened:
                if isinstance(opened, memoryview):
                    log.data = bytes(opened)
                else:
                    log.data = opened.read()
    return inputs


def _group(inputs: list[LogInput]) -> list[list[LogInput]]:
    """Inputs by partition (in order of appearance); a file outside a partition is its own."""
    groups: dict[str, list[LogInput]] = {}
    for log in inputs:
        groups.setdefault(_source_label(log), []).append(log)
    return list(groups.values())


def _source_label(log: LogInput) -> str:
    if log.topic is not None and log.path is not None:
        return str(log.path.parent)
    return log.name


# --- one file: the header pass ----------------------------------------------------------------


@dataclass(slots=True)
class _Scan:
    """The header pass over one file: one entry per frame, in parallel arrays."""

    name: str
    size: int
    position: np.ndarray
    frame_size: np.ndarray
    base_offset: np.ndarray
    magic: np.ndarray
    codec: np.ndarray
    kind: np.ndarray
    damaged: np.ndarray
    #: Data records of the entry (the rows the records pass gives it); control records for
    #: control batches.
    records: np.ndarray
    #: The record payload as stored and uncompressed (see CodecStats).
    compressed: np.ndarray
    uncompressed: np.ndarray
    producer_id: np.ndarray
    transactional: np.ndarray
    problems: dict[int, Damage] = field(default_factory=dict)  # by byte position
    tails: list[TruncatedTail] = field(default_factory=list)
    unreadable: int = 0


def _files_ahead(inputs: list[LogInput], opts: _Options) -> Any:
    """A partition's small segments read a run at a time, each handed its own read
    (``read.files_ahead``); only files read under their own names (not a pipe's spool)."""
    from ..read.files_ahead import FilesAhead

    return FilesAhead(
        [log.path for log in inputs if log.path is not None and str(log.path) == log.name],
        include_headers=True,
        verify_crc=opts.verify_crc,
        max_decompressed_bytes=opts.max_bytes,
    )


def _scan_input(
    log: LogInput,
    opts: _Options,
    progress: Callable[[str, int, int], None] | None,
    sampler: Sampler | None,
    index: int,
    ahead: Any = None,
) -> PartitionStats:
    """One file's stats: its header pass and its records. ``ahead``: the partition's small
    segments' reads (``read.files_ahead``), which serve the records where they hold them."""
    with log.open() as view:
        held = ahead.take(log.path) if ahead is not None and log.path is not None else None
        if held is not None:
            # Read already: the header pass alone is left (a thread a file would cost more).
            scan = _header_pass(log.name, view, opts, progress)
            found = _held_rows(*held)
        else:
            # The two passes overlap: the header pass's work (the numba scan, CRCs,
            # decompression) mostly runs without the GIL, as does the columnar decoding.
            with ThreadPoolExecutor(1, thread_name_prefix="kafka-format-stats") as pool:
                header = pool.submit(_header_pass, log.name, view, opts, progress)
                try:
                    found = _read_rows(log, opts)
                except KafkaFormatError as exc:
                    # strict: the first damage in the file, whichever pass met it
                    first = header.exception()
                    if isinstance(first, KafkaFormatError) and _before(first, exc):
                        raise first from None
                    raise
                scan = header.result()
        rows = _lay_rows(scan, *found)
        if rows is None:
            rows = _reference_rows(view, scan, opts)
    stats = _accumulate(scan, rows)
    stats.topic, stats.partition = log.topic, log.partition
    stats.source = _source_label(log)
    if sampler is not None:
        _sample(sampler, index, scan)
    return stats


def _sample(sampler: Sampler, index: int, scan: _Scan) -> None:
    """Hand the file's valid batches to the what-if sampler, with their uncompressed sizes."""
    valid = ~scan.damaged
    kind, size = scan.kind, scan.frame_size
    plain = np.where(
        kind == _V2,
        layout.V2_HEADER_SIZE + scan.uncompressed,
        np.where(kind == _LEGACY, size, size - scan.compressed + scan.uncompressed),
    )
    sampler.add_file(
        index,
        scan.position[valid],
        size[valid],
        scan.records[valid],
        plain[valid],
        (kind == _CONTROL)[valid],
        (kind == _LEGACY)[valid],
    )


_HEADERS_ONLY = {v: ReadOptions(verify_crc=v, records=False) for v in (True, False)}
_TABLE_ROWS = 65536
_NO_BUDGET = 1 << 62
_FRAME_HEAD = layout.field_struct(layout.FRAME_HEADER_FIELDS, "base_offset", "length")


def _header_pass(
    name: str,
    view: memoryview,
    opts: _Options,
    progress: Callable[[str, int, int], None] | None,
) -> _Scan:
    """Every frame's header, CRC and record payload sizes. The frames are found by the numba
    scanner of the columnar path; only CRCs, decompression and damage take Python per frame."""
    buf = np.frombuffer(view, np.uint8)
    limit = len(buf)
    table = np.empty((_TABLE_ROWS, fs.FRAME_COLUMNS), np.int64)
    parts: list[dict[str, np.ndarray]] = []
    problems: dict[int, Damage] = {}
    tails: list[TruncatedTail] = []
    unreadable = 0
    pos = 0
    while True:
        n, nxt, status = fs.scan_frames(buf, pos, limit, table, _NO_BUDGET, _NO_BUDGET, 1)
        if n:
            parts.append(_measure(table[:n].copy(), view, name, opts, problems))
        if progress is not None:
            progress(name, nxt, limit)
        if status == fs.SCAN_BUDGET:
            pos = nxt
            continue
        tail, exc = end_of_walk(view, nxt, limit, name)  # what lies where the scan stopped
        if exc is not None:
            if opts.strict:
                raise exc
            problems[nxt] = Damage.of(exc, "framing")
            unreadable = limit - nxt
        elif tail is not None:
            tails.append(tail)
        break
    columns = {
        k: np.concatenate([p[k] for p in parts]) if parts else np.zeros(0, _DTYPES[k])
        for k in _DTYPES
    }
    return _Scan(name, limit, **columns, problems=problems, tails=tails, unreadable=unreadable)


_DTYPES = {
    "position": np.int64, "frame_size": np.int64, "base_offset": np.int64, "magic": np.int64,
    "codec": np.int64, "kind": np.int64, "damaged": bool, "records": np.int64,
    "compressed": np.int64, "uncompressed": np.int64, "producer_id": np.int64,
    "transactional": bool,
}  # fmt: skip


def _measure(
    t: np.ndarray, view: memoryview, name: str, opts: _Options, problems: dict[int, Damage]
) -> dict[str, np.ndarray]:
    """The entries of a table of frames: CRCs checked, compressed data batches decompressed
    for their uncompressed size (and v0/v1 wrappers' inner message count), damage found with
    the reference decoder's errors, in frame order. Only damage, wrappers, snappy and what
    the C libraries refuse take Python a frame."""
    position, size, base = t[:, fs.F_POS], t[:, fs.F_SIZE], t[:, fs.F_BASE]
    magic, attributes, count = t[:, fs.F_MAGIC], t[:, fs.F_ATTR], t[:, fs.F_COUNT]
    codec = attributes & layout.V2_ATTR_COMPRESSION_MASK
    v2 = magic == 2
    control = v2 & ((attributes & layout.V2_ATTR_IS_CONTROL_MASK) != 0)
    kind = np.where(v2, np.where(control, _CONTROL, _V2), np.where(codec != 0, _WRAPPER, _LEGACY))
    stored = np.where(v2, size - layout.V2_HEADER_SIZE, size)
    out = {
        "position": position,
        "frame_size": size,
        "base_offset": base,
        "magic": magic,
        "codec": codec,
        "kind": kind,
        "damaged": t[:, fs.F_HEADER_OK] != 1,
        "records": count,  # v2 record counts; 1 for v0/v1 (the wrappers' are set below)
        "compressed": stored,
        "uncompressed": stored.copy(),
        "producer_id": t[:, fs.F_PID],
        "transactional": v2 & ((attributes & layout.V2_ATTR_IS_TRANSACTIONAL_MASK) != 0),
    }
    bad = out["damaged"]
    buf = np.frombuffer(view, np.uint8)
    # CRCs: CRC-32C of attributes..end (v2) by the kernel in one call; CRC-32 of magic..end
    # (v0/v1) a frame at a time.
    if opts.verify_crc:
        bad |= v2 & ~bad & ~crc_holds(buf, t, v2 & ~bad, True)
    stored_crc = t[:, fs.F_CRC].tolist()
    for i in np.flatnonzero(~v2 & ~bad).tolist() if opts.verify_crc else ():
        p, s = int(position[i]), int(size[i])
        if zlib.crc32(view[p + layout.LEGACY_CRC_START : p + s]) != stored_crc[i]:
            bad[i] = True
    data = ~control
    # Compressed v2 batches' sizes from their C libraries, one kernel call for them all
    # (``plan.inflate_payloads``); what they refuse, and the rest, take the Python path below.
    measured = np.zeros(len(t), bool)
    fast = v2 & data & (codec != 0) & (count > 0) & ~bad
    fast = np.flatnonzero(fast & inflatable(codec, magic, np.zeros(len(t), bool)))
    if len(fast):
        spans = np.stack(
            [position[fast] + layout.V2_HEADER_SIZE, position[fast] + size[fast]], axis=1
        )
        arenas: list = []
        got = inflate_payloads(buf.ctypes.data, spans, codec[fast], opts.max_bytes, arenas)
        ok = got[:, 1] >= 0
        out["uncompressed"][fast[ok]] = (got[:, 2] - got[:, 1])[ok]
        measured[fast[ok]] = True
    del buf  # the map closes only when no array holds it
    odd = bad | (data & (codec != 0) & ~measured) | (v2 & data & (count <= 0))
    for i in np.flatnonzero(odd).tolist():
        p, s = int(position[i]), int(size[i])
        frame = Frame(p, int(base[i]), int(magic[i]), view[p : p + s])
        try:
            if bad[i]:
                # The reference's own error (it raises on what made the frame bad here).
                read_batch(frame, _HEADERS_ONLY[opts.verify_crc], file=name)
                bad[i] = False  # pragma: no cover - the reference found nothing wrong
            _measure_odd(out, i, frame, opts)
        except KafkaFormatError as exc:
            exc.located(file=name, position=p, base_offset=int(base[i]))
            if opts.strict:
                raise
            bad[i] = True
            problems[p] = Damage.of(exc)
    return out


def _measure_odd(out: dict[str, np.ndarray], i: int, frame: Frame, opts: _Options) -> None:
    """A compressed or empty data batch: its uncompressed size and record count."""
    codec = int(out["codec"][i])
    if frame.magic == 2:
        count = int(out["records"][i])
        if count < 0:
            raise CorruptBatchError(messages.negative_count(count))
        if count == 0:
            # As DefaultRecordBatch: an empty batch is not decompressed, whatever its codec.
            resolve_codec(codec, magic=2)
            out["uncompressed"][i] = 0 if codec else out["compressed"][i]
            return
        payload = frame.data[layout.V2_HEADER_SIZE :]
        payload = decompress_buffer(codec, payload, magic=2, max_bytes=opts.max_bytes)
        out["uncompressed"][i] = len(payload)
        return
    value = wrapper_value(frame.data, 0, len(frame.data), frame.magic)
    inner = decompress_buffer(codec, value, magic=frame.magic, max_bytes=opts.max_bytes)
    out["records"][i] = _count_inner(inner)
    out["compressed"][i] = len(value)
    out["uncompressed"][i] = len(inner)


def _count_inner(inner: bytes) -> int:
    """How many messages a wrapper's decompressed value holds, with the reference's checks
    on their framing (found by the numba scanner: a wrapper may hold thousands)."""
    buf = np.frombuffer(inner, np.uint8)
    limit = len(buf)
    # An inner entry takes at least a v0 message header.
    table = np.empty(
        (min(_TABLE_ROWS, limit // LEGACY_MESSAGE_HEADER[0] + 1), fs.FRAME_COLUMNS), np.int64
    )
    pos = count = 0
    while True:
        n, nxt, status = fs.scan_frames(buf, pos, limit, table, _NO_BUDGET, _NO_BUDGET, 1)
        t = table[:n]
        magic = t[:, fs.F_MAGIC]
        odd = np.flatnonzero(
            (magic != 0) & (magic != 1) | ((t[:, fs.F_ATTR] & layout.V2_ATTR_COMPRESSION_MASK) != 0)
        )
        if len(odd):
            k = int(odd[0])
            if magic[k] not in (0, 1):
                raise CorruptBatchError(f"inner message with magic {int(magic[k])}")
            raise CorruptBatchError(
                f"compressed inner message at inner offset {int(t[k, fs.F_BASE])} "
                "(nested compression is not allowed)"
            )
        count += n
        if status == fs.SCAN_FRAMING_ERROR:
            length = _FRAME_HEAD.unpack_from(inner, nxt)[1]
            if length >= layout.MIN_FRAME_LENGTH:  # the scan stops at a magic above 2 too
                (magic_byte,) = struct.unpack_from("b", inner, nxt + layout.FRAME_MAGIC)
                raise CorruptBatchError(messages.inner_magic(magic_byte))
            raise CorruptBatchError(
                f"inner messages: {messages.inner_framing(length)} (byte {nxt} of the "
                "decompressed value)"
            )
        if status == fs.SCAN_END:
            if nxt < limit:
                raise CorruptBatchError(f"{limit - nxt} trailing bytes after the inner messages")
            break
        pos = nxt
    if not count:
        raise CorruptBatchError("compressed wrapper message holds no inner messages")
    return count


# --- one file: the records ---------------------------------------------------------------------


@dataclass(slots=True)
class _Rows:
    """What the records of one file add: per-entry payload bytes and record-level sums."""

    payload: np.ndarray  # int64, one per scan entry
    key_bytes: int = 0
    value_bytes: int = 0
    header_key_bytes: int = 0
    header_value_bytes: int = 0
    headers: int = 0
    null_keys: int = 0
    null_values: int = 0
    timestamps: dict[int, TimestampRange] = field(default_factory=dict)


def _before(a: KafkaFormatError, b: KafkaFormatError) -> bool:
    return (a.position if a.position is not None else -1) <= (
        b.position if b.position is not None else -1
    )


def _read_rows(log: LogInput, opts: _Options) -> tuple[_Rows, np.ndarray, list[Exception]]:
    """The records of the file through the columnar fast path: the record-level sums, each
    row's payload bytes, and the damage the path reported."""
    report = Report()
    source: Any = str(log.path) if log.path is not None else log.data
    sizes: list[np.ndarray] = []
    rows = _Rows(np.zeros(0, np.int64))
    batches = iter_arrow_batches(
        source,
        include_headers=True,
        errors="strict" if opts.strict else "skip",
        verify_crc=opts.verify_crc,
        max_decompressed_bytes=opts.max_bytes,
        report=report,
    )
    try:
        for rb in batches:
            sizes.append(_add_rows(rows, rb))
    except KafkaFormatError as exc:
        raise exc.located(file=log.name) from None
    finally:
        with contextlib.suppress(Exception):
            batches.close()
    row_payload = np.concatenate(sizes) if sizes else np.zeros(0, np.int64)
    return rows, row_payload, report.errors


def _held_rows(
    batches: list[pa.RecordBatch], report: Report
) -> tuple[_Rows, np.ndarray, list[Exception]]:
    """:func:`_read_rows`' answer from a file's batches and report read ahead (as its own
    read under ``errors="skip"`` gives them)."""
    rows = _Rows(np.zeros(0, np.int64))
    sizes = [_add_rows(rows, rb) for rb in batches]
    row_payload = np.concatenate(sizes) if sizes else np.zeros(0, np.int64)
    return rows, row_payload, list(report.errors)


def _lay_rows(
    scan: _Scan, rows: _Rows, row_payload: np.ndarray, errors: list[Exception]
) -> _Rows | None:
    """The rows laid onto the scan's entries by their record counts (rows come in frame order,
    each whole data batch giving exactly its records); None when they do not fit (then the
    reference decoder reads the file's records again)."""
    if not _reconcile(scan, errors, scan.name):
        return None
    counts = np.where(scan.damaged | (scan.kind == _CONTROL), 0, scan.records)
    if int(counts.sum()) != len(row_payload):
        return None
    ends = np.cumsum(counts)
    cumulative = np.concatenate(([0], np.cumsum(row_payload)))
    rows.payload = cumulative[ends] - cumulative[ends - counts]
    return rows


def _reconcile(scan: _Scan, errors: list[Exception], name: str) -> bool:
    """Mark damaged the batches the records pass found damaged and the header pass did not.
    False when an error names no batch the header pass knows (the passes disagree)."""
    where = {p: i for i, p in enumerate(scan.position.tolist())}
    for exc in errors:
        if isinstance(exc, FramingError):
            continue  # the header pass meets every framing error itself, inner ones too
        position = getattr(exc, "position", None)
        i = where.get(position)
        if i is None:
            return False
        if not scan.damaged[i]:
            scan.damaged[i] = True
            if isinstance(exc, KafkaFormatError):
                exc.file = name  # bytes read twice: the fast pass knows them as "<bytes>"
                scan.problems[position] = Damage.of(exc)
            else:  # pragma: no cover - the reader reports only KafkaFormatErrors
                scan.problems[position] = Damage(name, position, None, str(exc))
    return True


def _add_rows(rows: _Rows, rb: pa.RecordBatch) -> np.ndarray:
    """Add one Arrow batch of records to the sums; returns each row's payload bytes."""
    n = rb.num_rows
    key, value = rb.column("key"), rb.column("value")
    klen = _lengths(key)
    vlen = _lengths(value)
    rows.key_bytes += int(klen.sum())
    rows.value_bytes += int(vlen.sum())
    rows.null_keys += key.null_count
    rows.null_values += value.null_count
    payload = klen + vlen
    headers = rb.column("headers")
    counts = pc.fill_null(pc.list_value_length(headers), 0).to_numpy().astype(np.int64)
    if counts.any():
        flat = headers.flatten()
        hk = _lengths(flat.field("key"))
        hv = _lengths(flat.field("value"))
        rows.headers += len(flat)
        rows.header_key_bytes += int(hk.sum())
        rows.header_value_bytes += int(hv.sum())
        cumulative = np.concatenate(([0], np.cumsum(hk + hv)))
        ends = np.cumsum(counts)
        payload = payload + cumulative[ends] - cumulative[ends - counts]
    ts = rb.column("timestamp")
    ts_type = rb.column("timestampType").to_numpy()
    micros = pc.cast(ts, pa.int64()).to_numpy(zero_copy_only=False)
    valid = ts.is_valid().to_numpy(zero_copy_only=False)
    for t in np.unique(ts_type).tolist():
        mask = ts_type == t
        stamped = mask & valid
        lo = hi = None
        if stamped.any():
            chosen = micros[stamped]
            lo, hi = int(chosen.min()) // 1000, int(chosen.max()) // 1000
        rows.timestamps.setdefault(int(t), TimestampRange()).add(int(mask.sum()), lo, hi)
    assert len(payload) == n
    return payload


def _lengths(array: pa.Array) -> np.ndarray:
    """Byte lengths of a binary or string array, 0 for nulls, as int64."""
    return pc.fill_null(pc.binary_length(array), 0).to_numpy().astype(np.int64)


def _reference_rows(view: memoryview, scan: _Scan, opts: _Options) -> _Rows:
    """The records of the scan's data batches through the reference decoder (the fallback)."""
    rows = _Rows(np.zeros(len(scan.position), np.int64))
    decode = ReadOptions(verify_crc=False, records=True, max_decompressed_bytes=opts.max_bytes)
    stamps: dict[int, list[int]] = {}
    counted: dict[int, int] = {}
    sizes = scan.frame_size.tolist()
    for i, position in enumerate(scan.position.tolist()):
        if scan.damaged[i] or scan.kind[i] == _CONTROL:
            continue
        frame = next(iter_frames(view, start=position, end=position + sizes[i]))
        try:
            records = read_batch(frame, decode, file=scan.name).records or []
        except KafkaFormatError as exc:
            if opts.strict:
                raise
            scan.damaged[i] = True
            scan.problems[position] = Damage.of(exc)
            continue
        scan.records[i] = len(records)
        total = 0
        for r in records:
            total += _record_payload(rows, r)
            counted[r.timestamp_type] = counted.get(r.timestamp_type, 0) + 1
            if r.timestamp is not None:
                stamps.setdefault(r.timestamp_type, []).append(r.timestamp)
        rows.payload[i] = total
    for t, n in counted.items():
        found = stamps.get(t)
        rows.timestamps.setdefault(t, TimestampRange()).add(
            n, min(found) if found else None, max(found) if found else None
        )
    return rows


def _record_payload(rows: _Rows, r: Record) -> int:
    k = 0 if r.key is None else len(r.key)
    v = 0 if r.value is None else len(r.value)
    rows.key_bytes += k
    rows.value_bytes += v
    rows.null_keys += r.key is None
    rows.null_values += r.value is None
    total = k + v
    for h in r.headers:
        hk = len(h.key.encode("utf-8"))
        hv = 0 if h.value is None else len(h.value)
        rows.headers += 1
        rows.header_key_bytes += hk
        rows.header_value_bytes += hv
        total += hk + hv
    return total


_ROW_SUMS = (
    "key_bytes", "value_bytes", "header_key_bytes", "header_value_bytes", "headers", "null_keys",
    "null_values",
)  # fmt: skip


# --- one file: the sums -----------------------------------------------------------------------


def _accumulate(scan: _Scan, rows: _Rows) -> PartitionStats:
    stats = PartitionStats(files=1, bytes=scan.size)
    kind, damaged, size, magic = scan.kind, scan.damaged, scan.frame_size, scan.magic
    codec, records, stored, plain = scan.codec, scan.records, scan.compressed, scan.uncompressed
    pid, txn = scan.producer_id, scan.transactional
    payload = rows.payload

    valid = ~damaged
    control = valid & (kind == _CONTROL)
    data = valid & ~control
    stats.batches = int(valid.sum())
    stats.batch_bytes = int(size[valid].sum())
    stats.control_batches = int(control.sum())
    stats.control_records = int(records[control].sum())
    stats.control_bytes = int(size[control].sum())
    stats.damaged_batches = int(damaged.sum())
    stats.damaged_bytes = int(size[damaged].sum())
    stats.truncated_bytes = sum(t.size for t in scan.tails)
    stats.tails = [
        Damage(t.file, t.position, None, f"{t.size} bytes at the end do not form a whole batch",
               "truncated", t.size)
        for t in scan.tails
    ]  # fmt: skip
    stats.unreadable_bytes = scan.unreadable
    stats.damage = [scan.problems[p] for p in sorted(scan.problems)]

    v2, legacy, wrapper = data & (kind == _V2), data & (kind == _LEGACY), data & (kind == _WRAPPER)
    batch_header = np.where(v2, layout.V2_HEADER_SIZE, 0) + np.where(wrapper, size - stored, 0)
    message_header = np.where(legacy, size - payload, 0) + np.where(wrapper, plain - payload, 0)
    framing = np.where(v2, plain - payload, 0)
    for m in np.unique(magic[data]).tolist():
        sel = data & (magic == m)
        stats.magic[int(m)] = MagicStats(
            batches=int(sel.sum()),
            records=int(records[sel].sum()),
            bytes=int(size[sel].sum()),
            batch_header_bytes=int(batch_header[sel].sum()),
            message_header_bytes=int(message_header[sel].sum()),
            record_framing_bytes=int(framing[sel].sum()),
            payload_bytes=int(payload[sel].sum()),
        )
    for c in np.unique(codec[data]).tolist():
        sel = data & (codec == c)
        stats.codecs[CODEC_NAMES[int(c)]] = CodecStats(
            batches=int(sel.sum()),
            records=int(records[sel].sum()),
            bytes=int(size[sel].sum()),
            compressed_bytes=int(stored[sel].sum()),
            uncompressed_bytes=int(plain[sel].sum()),
        )
    stats.records = int(records[data].sum())
    stats.batch_header_bytes = int(batch_header[data].sum())
    stats.message_header_bytes = int(message_header[data].sum())
    stats.record_framing_bytes = int(framing[data].sum())
    values, counts = np.unique(records[data], return_counts=True)
    stats.records_per_batch = Counter(dict(zip(values.tolist(), counts.tolist(), strict=True)))
    stats.producer_ids = set(np.unique(pid[valid & (pid >= 0)]).tolist())
    stats.idempotent_batches = int((data & (pid >= 0)).sum())
    stats.transactional_batches = int((data & txn).sum())

    for name in _ROW_SUMS:
        setattr(stats, name, getattr(rows, name))
    stats.timestamps = {TS_NAMES.get(t, str(t)): r for t, r in sorted(rows.timestamps.items())}
    if stats.payload_bytes != int(payload[data].sum()):  # pragma: no cover - an internal check
        raise AssertionError("record payload bytes do not add up to the batches' payloads")
    return stats
