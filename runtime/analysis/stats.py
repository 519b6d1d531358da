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

How it reads, per file, in two passes that run side by side: a header pass
(``stats_headers.py``) finds the frames with the columnar path's numba scanner
(``fastscan.scan_frames``), checks every CRC and decompresses each compressed data batch for
its uncompressed size (and, for a v0/v1 wrapper, its count of inner messages); the records
come from the columnar fast path (``columnar.iter_arrow_batches``; a partition's small
segments a run at a time, ``read/files_ahead.py``, each handed its own read), whose rows are
laid back onto their batches by the record counts of the header pass. Frames that look
damaged go through the reference decoder (``batches.read_batch``) for its exact error. Should
the two passes disagree on which batches are whole, the file's records are read again by the
reference decoder. Damaged batches are counted and listed with their file and byte position,
as ``iter_batches(errors="skip")`` reports them; ``strict=True`` raises the first instead.

``what_if=True`` also estimates the same data re-encoded as v2 batches, uncompressed and with
each codec, from a sample of whole batches re-encoded (``whatif.py`` does that part).
"""

from __future__ import annotations

import contextlib
import os
import time
from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..cpus import map_in_order
from ..errors import FramingError, KafkaFormatError
from ..format import layout
from ..format.batches import ReadOptions, read_batch
from ..format.codecs import DEFAULT_MAX_BYTES
from ..format.framing import iter_frames
from ..format.sizes import LEGACY_MESSAGE_HEADER
from ..model import Record, Report
from ..read.ahead import threads_pay
from ..read.columnar import iter_arrow_batches
from ..read.files_ahead import FilesAhead
from ..read.sources import LogInput, Source, is_stream_path, resolve, spooled
from .stats_headers import (
    KIND_CONTROL,
    KIND_LEGACY,
    KIND_V2,
    KIND_WRAPPER,
    Options,
    Scan,
    header_pass,
)
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


# --- entry points -----------------------------------------------------------------------------


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
    opts = Options(strict, verify_crc, max_decompressed_bytes)
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
    opts: Options,
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
    opts = Options(strict, verify_crc, max_decompressed_bytes)
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


def _files_ahead(inputs: list[LogInput], opts: Options) -> FilesAhead:
    """A partition's small segments read a run at a time, each handed its own read
    (``read.files_ahead``); only files read under their own names (not a pipe's spool)."""
    return FilesAhead(
        [log.path for log in inputs if log.path is not None and str(log.path) == log.name],
        include_headers=True,
        verify_crc=opts.verify_crc,
        max_decompressed_bytes=opts.max_bytes,
    )


def _scan_input(
    log: LogInput,
    opts: Options,
    progress: Callable[[str, int, int], None] | None,
    sampler: Sampler | None,
    index: int,
    ahead: FilesAhead | None = None,
) -> PartitionStats:
    """One file's stats: its header pass and its records. ``ahead``: the partition's small
    segments' reads (``read.files_ahead``), which serve the records where they hold them."""
    with log.open() as view:
        held = ahead.take(log.path) if ahead is not None and log.path is not None else None
        if held is not None:
            # Read already: the header pass alone is left (a thread a file would cost more).
            scan = header_pass(log.name, view, opts, progress)
            found = _held_rows(*held)
        else:
            # The two passes overlap: the header pass's work (the numba scan, CRCs,
            # decompression) mostly runs without the GIL, as does the columnar decoding.
            with ThreadPoolExecutor(1, thread_name_prefix="kafka-format-stats") as pool:
                header = pool.submit(header_pass, log.name, view, opts, progress)
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


def _sample(sampler: Sampler, index: int, scan: Scan) -> None:
    """Hand the file's valid batches to the what-if sampler, with their uncompressed sizes."""
    valid = ~scan.damaged
    kind, size = scan.kind, scan.frame_size
    plain = np.where(
        kind == KIND_V2,
        layout.V2_HEADER_SIZE + scan.uncompressed,
        np.where(kind == KIND_LEGACY, size, size - scan.compressed + scan.uncompressed),
    )
    sampler.add_file(
        index,
        scan.position[valid],
        size[valid],
        scan.records[valid],
        plain[valid],
        (kind == KIND_CONTROL)[valid],
        (kind == KIND_LEGACY)[valid],
    )


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


def _read_rows(log: LogInput, opts: Options) -> tuple[_Rows, np.ndarray, list[Exception]]:
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
        if log.path is None:
            exc.file = log.name  # bytes: the read knows them as "<bytes>"
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
    scan: Scan, rows: _Rows, row_payload: np.ndarray, errors: list[Exception]
) -> _Rows | None:
    """The rows laid onto the scan's entries by their record counts (rows come in frame order,
    each whole data batch giving exactly its records); None when they do not fit (then the
    reference decoder reads the file's records again)."""
    if not _reconcile(scan, errors, scan.name):
        return None
    counts = np.where(scan.damaged | (scan.kind == KIND_CONTROL), 0, scan.records)
    if int(counts.sum()) != len(row_payload):
        return None
    ends = np.cumsum(counts)
    cumulative = np.concatenate(([0], np.cumsum(row_payload)))
    rows.payload = cumulative[ends] - cumulative[ends - counts]
    return rows


def _reconcile(scan: Scan, errors: list[Exception], name: str) -> bool:
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


def _reference_rows(view: memoryview, scan: Scan, opts: Options) -> _Rows:
    """The records of the scan's data batches through the reference decoder (the fallback)."""
    rows = _Rows(np.zeros(len(scan.position), np.int64))
    decode = ReadOptions(verify_crc=False, records=True, max_decompressed_bytes=opts.max_bytes)
    stamps: dict[int, list[int]] = {}
    counted: dict[int, int] = {}
    sizes = scan.frame_size.tolist()
    for i, position in enumerate(scan.position.tolist()):
        if scan.damaged[i] or scan.kind[i] == KIND_CONTROL:
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


def _accumulate(scan: Scan, rows: _Rows) -> PartitionStats:
    stats = PartitionStats(files=1, bytes=scan.size)
    kind, damaged, size, magic = scan.kind, scan.damaged, scan.frame_size, scan.magic
    codec, records, stored, plain = scan.codec, scan.records, scan.compressed, scan.uncompressed
    pid, txn = scan.producer_id, scan.transactional
    payload = rows.payload

    valid = ~damaged
    control = valid & (kind == KIND_CONTROL)
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

    v2 = data & (kind == KIND_V2)
    legacy, wrapper = data & (kind == KIND_LEGACY), data & (kind == KIND_WRAPPER)
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
