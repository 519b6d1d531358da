"""``verify``'s reading of one ``.log``: every batch judged, every record checked, on the fast
path.

The frames come from the numba frame scan (``fastscan.scan_frames``, the walker's rules) into a
header table, and the end of the walk from ``framing.end_of_walk`` (a truncated tail, or
damage). ``verify`` reads on past framing damage as ``errors="salvage"`` does
(``read/salvage.py``): every damaged region is reported, and the batches after it are
checked like the others. The records come through the columnar fast path
(``columnar.iter_arrow_batches``, ``errors="salvage"``, the same walk): CRCs, decompression
and record decoding in the kernels, with the reference reader's verdicts. Rows carry no batch
position, so they are laid back onto the frames by count (a v2 data batch without damage
yields ``records_count`` rows, a v0/v1 message one, a v0/v1 wrapper as many as it holds); when
the counts do not add up, or an error cannot be laid on a frame, the records are taken from
the reference decoder instead. The checks themselves (offsets inside their batch and
increasing, gaps, timestamps, partitioner placement) are made on numpy arrays over all
records at once, and reported batch by batch in file order.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from ..errors import CrcMismatchError, KafkaFormatError
from ..files.names import parse_segment_file_name
from ..format import layout, messages
from ..format.batches import ReadOptions, read_batch
from ..format.framing import Frame, end_of_walk, iter_frames
from ..kernels import fastscan as fs
from ..model import Report, TruncatedTail
from ..progress import Progress
from ..read.plan import NOT_A_MARKER, marker_types
from ..read.salvage import salvage_scan
from ..read.segment_offsets import SegmentOffsets, judge_frame
from ..read.sources import LogInput, is_stream_path, spooled
from .placement import PartitionPlacement
from .report import MAX_LISTED_GAPS, FileReport

_TABLE_ROWS = 65536
_NO_BUDGET = 1 << 62


@dataclass(slots=True)
class BatchInfo:
    """What the index checks need to know of a batch, kept instead of its records."""

    position: int
    size: int
    #: The first record's offset (for a compressed v0/v1 wrapper, not its stored offset).
    base_offset: int
    last_offset: int
    #: Largest record timestamp (kafka-dump-log's "log timestamp"); the header's when the
    #: records could not be decoded.
    max_timestamp: int | None
    producer_id: int
    is_control: bool
    control_type: int | None
    #: A compressed v0/v1 wrapper: its header holds its last offset only, so that a scan of
    #: headers cannot know its first (``span`` names it by what every scan knows).
    wrapper: bool = False
    #: The base offset its header holds (v2: the batch's, whoever's records the cleaner kept).
    header_base: int = 0

    @property
    def span(self) -> str:
        """The batch's offsets as findings name them: from its header, as kafka-dump-log
        prints them, so that a scan of headers names it as a full one does."""
        if self.wrapper:
            return f"a compressed v0/v1 wrapper ending at offset {self.last_offset}"
        return f"offsets {self.header_base}..{self.last_offset}"


@dataclass(slots=True)
class ScannedLog:
    """A log read from end to end: its batches and where reading stopped."""

    path: Path
    size: int
    batches: list[BatchInfo] = field(default_factory=list)
    #: Where the last readable batch ends (the size, unless a tail or damage stopped us).
    end: int = 0
    has_gaps: bool = False
    _positions: list[int] = field(default_factory=list, repr=False)
    _last_offsets: list[int] = field(default_factory=list, repr=False)

    def index(self) -> None:
        self._positions = [b.position for b in self.batches]
        self._last_offsets = [b.last_offset for b in self.batches]

    def at_position(self, position: int) -> BatchInfo | None:
        n = bisect_left(self._positions, position)
        if n < len(self._positions) and self._positions[n] == position:
            return self.batches[n]
        return None

    def containing_position(self, position: int) -> BatchInfo | None:
        n = bisect_right(self._positions, position) - 1
        if n >= 0 and position < self.batches[n].position + self.batches[n].size:
            return self.batches[n]
        return None

    def first_ending_at_or_after(self, offset: int) -> BatchInfo | None:
        """The batch a reader finds for ``offset`` (``searchForOffsetWithSize``)."""
        n = bisect_left(self._last_offsets, offset)
        return self.batches[n] if n < len(self.batches) else None


# --- the walk: frames from their headers ------------------------------------------------------


@dataclass(slots=True)
class _Walk:
    """Every frame's header fields (a ``fastscan`` frame table) and how the walk ended."""

    table: np.ndarray
    end: int
    tail: TruncatedTail | None
    #: Framing damage: where the walk stopped or, salvaging, every damaged region it passed.
    damages: list[KafkaFormatError]
    #: Whether the walk went on past framing damage (``errors="salvage"``'s walk).
    salvaged: bool = False

    @property
    def readable(self) -> np.ndarray:
        """Frames whose header fields could be read (the others are damage of their own)."""
        return self.table[:, fs.F_HEADER_OK] == 1


def _walk(view: memoryview, name: str, salvage: bool = False) -> _Walk:
    if salvage:
        return _salvage_walk(view, name)
    buf = np.frombuffer(view, np.uint8)
    limit = len(buf)
    table = np.empty((_TABLE_ROWS, fs.FRAME_COLUMNS), np.int64)
    parts = []
    pos = 0
    while True:
        n, pos, status = fs.scan_frames(buf, pos, limit, table, _NO_BUDGET, _NO_BUDGET, 1)
        parts.append(table[:n].copy())
        if status != fs.SCAN_BUDGET:
            break
    del buf  # the map closes only when no array holds it
    tail, damage = end_of_walk(view, pos, limit, name)
    return _Walk(np.concatenate(parts), pos, tail, [] if damage is None else [damage])


def _salvage_walk(view: memoryview, name: str) -> _Walk:
    """The walk of ``errors="salvage"``: on past framing damage, to the end of the file."""
    buf = np.frombuffer(view, np.uint8)
    parts = [np.empty((0, fs.FRAME_COLUMNS), np.int64)]
    damages: list[KafkaFormatError] = []
    tail = None
    for item in salvage_scan(buf, view, name, _NO_BUDGET, _NO_BUDGET, 1):
        if isinstance(item, KafkaFormatError):
            damages.append(item)
        elif isinstance(item, TruncatedTail):
            tail = item
        else:
            parts.append(item)
    del buf  # the map closes only when no array holds it
    # The end is where Kafka's reader stops (the first damage, or the tail); index entries
    # are judged by files.index_lookup's rule on the bytes, wherever they point.
    end = damages[0].position if damages else tail.position if tail is not None else len(view)
    return _Walk(np.concatenate(parts), end, tail, damages, salvaged=True)


def _infos(walk: _Walk) -> list[BatchInfo]:
    """The batches of the readable frames, from their headers alone."""
    t = walk.table[walk.readable]
    magic = t[:, fs.F_MAGIC]
    v2 = magic == 2
    control = v2 & ((t[:, fs.F_ATTR] & layout.V2_ATTR_IS_CONTROL_MASK) != 0)
    last = t[:, fs.F_BASE] + np.where(v2, t[:, fs.F_LAST_DELTA], 0)
    stamp = np.where(v2, t[:, fs.F_MAX_TS], t[:, fs.F_BASE_TS])
    wrapper = ~v2 & ((t[:, fs.F_ATTR] & layout.LEGACY_ATTR_COMPRESSION_MASK) != 0)
    return [
        BatchInfo(p, s, b, la, None if m == 0 else ts, pid, c, None, w, b)
        for p, s, b, la, m, ts, pid, c, w in zip(
            t[:, fs.F_POS].tolist(),
            t[:, fs.F_SIZE].tolist(),
            t[:, fs.F_BASE].tolist(),
            last.tolist(),
            magic.tolist(),
            stamp.tolist(),
            t[:, fs.F_PID].tolist(),
            control.tolist(),
            wrapper.tolist(),
            strict=True,
        )
    ]


def scan_headers(path: Path, *, progress: Progress | None = None) -> ScannedLog:
    """The batches of a log file from their headers alone, no records decoded: what the offset
    index checks need (positions, sizes, last offsets), read as ``kafka-dump-log`` reads a log
    for an index. A v0/v1 wrapper's ``base_offset`` is its stored (last inner) offset and every
    ``max_timestamp`` the header's; :func:`decode_max_timestamps` gives the records' for the
    batches that need them. Damage is not reported: reading stops where framing fails."""
    scanned = ScannedLog(path, path.stat().st_size)
    if progress is not None:
        progress.begin_file(scanned.size)
    name = str(path)
    with LogInput(name, path=path).open() as view:
        walk = _walk(view, name)
    scanned.batches = _infos(walk)
    scanned.end = walk.end
    if progress is not None:
        progress.at(scanned.end)
    scanned.index()
    return scanned


def decode_max_timestamps(scanned: ScannedLog, batches: Iterable[BatchInfo]) -> None:
    """Decode ``batches`` of a :func:`scan_headers` log and set their ``max_timestamp`` and
    ``base_offset`` from their records, as :func:`scan_log` sets them (Kafka's dump tool, too,
    decodes only the batch an index entry points at)."""
    wanted = {id(b): b for b in batches}
    if not wanted:
        return
    import pyarrow.compute as pc

    from ..read.columnar import read_table

    name = str(scanned.path)
    options = ReadOptions(verify_crc="report")
    with LogInput(name, path=scanned.path).open() as view:
        for info in wanted.values():
            if not info.is_control:  # the fast path; control records are no data rows
                try:
                    table = read_table(
                        view[info.position : info.position + info.size],
                        verify_crc=False,
                        threads=1,
                    )
                except KafkaFormatError:
                    continue
                if table.num_rows:
                    largest = pc.max(table.column("timestamp").cast(pa.int64())).as_py()
                    if largest is not None:
                        info.max_timestamp = largest // 1000
                    info.base_offset = table.column("offset")[0].as_py()
                continue
            frame = next(iter_frames(view, file=name, start=info.position, tails=[]), None)
            if frame is None:
                continue
            try:
                batch = read_batch(frame, options, file=name)
            except KafkaFormatError:
                continue
            stamps = [r.timestamp for r in batch.records if r.timestamp is not None]
            if stamps:
                info.max_timestamp = max(stamps)
            info.base_offset = batch.first_offset


# --- the records --------------------------------------------------------------------------------


@dataclass(slots=True)
class _Rows:
    """The data records of the readable frames, in file order, and what was wrong."""

    #: Per readable frame: how many of the rows below are its records.
    counts: np.ndarray
    offsets: np.ndarray
    #: Milliseconds; ``stamped`` is False where a record has none (magic 0).
    timestamps: np.ndarray
    stamped: np.ndarray
    keys: pa.Array | None
    #: Damage by frame position, in the reference reader's words.
    errors: dict[int, KafkaFormatError]
    #: Control batches: their marker type and record count, by frame position.
    controls: dict[int, tuple[int | None, int]]


def _frame(view: memoryview, row: np.ndarray) -> Frame:
    pos, size = int(row[fs.F_POS]), int(row[fs.F_SIZE])
    return Frame(pos, int(row[fs.F_BASE]), int(row[fs.F_MAGIC]), view[pos : pos + size])


def _controls(view: memoryview, table: np.ndarray, name: str) -> dict:
    """Marker type and record count of each control batch whose CRC and records hold: a
    transaction marker in Kafka's own form by the kernel (``plan.marker_types``), any other
    through the reference decoder."""
    found = {}
    control = (table[:, fs.F_MAGIC] == 2) & (
        (table[:, fs.F_ATTR] & layout.V2_ATTR_IS_CONTROL_MASK) != 0
    )
    if not control.any():
        return found
    buf = np.frombuffer(view, np.uint8)
    marker = marker_types(buf, table, control, True)
    del buf  # the map closes only when no array holds it
    for row, kind in zip(table[control], marker[control].tolist(), strict=True):
        if kind != NOT_A_MARKER:
            found[int(row[fs.F_POS])] = (kind, 1)
            continue
        try:
            batch = read_batch(_frame(view, row), ReadOptions(), file=name)
        except KafkaFormatError:
            continue  # the fast path reports it
        marker = batch.records[0].control if batch.records else None
        found[batch.position] = (None if marker is None else marker.type, len(batch.records))
    return found


def _counts(table: np.ndarray, positions: list[np.ndarray]) -> np.ndarray | None:
    """Rows the fast path yielded for each readable frame, from each row's batch position;
    None when a row's position is no frame's (the rows cannot be laid on the frames)."""
    starts = table[:, fs.F_POS]
    # A batch's rows are consecutive: each run of one position is laid on its frame, so
    # the frames are searched once a batch, not once a row (a run cut between two record
    # batches is two runs of one frame, added up).
    at, lengths = [np.zeros(0, np.int64)], [np.zeros(0, np.int64)]
    for p in positions:
        if len(p):
            runs = np.flatnonzero(np.diff(p, prepend=p[0] - 1))
            at.append(p[runs])
            lengths.append(np.diff(runs, append=len(p)))
    first = np.concatenate(at)
    frame = np.searchsorted(starts, first)
    if len(first) and (frame.max() >= len(starts) or not (starts[frame] == first).all()):
        return None
    counts = np.zeros(len(starts), np.int64)
    np.add.at(counts, frame, np.concatenate(lengths))
    return counts


def _fast_rows(
    path: Path, walk: _Walk, keys: bool, name: str | None = None, ahead: Any = None
) -> _Rows | None:
    """The records through ``iter_arrow_batches``; None when they cannot be laid on frames.
    Only offsets, timestamps and (for the partitioner check) keys are kept: 16 bytes a record
    and the keys, whatever the values weigh. ``name``: the file's, where ``path`` is a copy.
    ``ahead``: a ``read.files_ahead.FilesAhead`` holding the partition's small segments'
    reads (the same batches and report as this file's own read)."""
    from ..read.columnar import iter_arrow_batches  # numba: only where records are wanted

    name = name or str(path)

    found = Report()
    offsets, stamps, key_parts = [], [], []
    mode = "salvage" if walk.salvaged else "skip"
    positions = []
    read = ahead.take(path) if ahead is not None and mode == "skip" else None
    if read is not None:
        chunks, found = read
    else:
        chunks = iter_arrow_batches(path, errors=mode, report=found, include_position=True)
    for chunk in chunks:
        positions.append(chunk.column("position").to_numpy())
        offsets.append(chunk.column("offset").to_numpy())
        stamps.append(chunk.column("timestamp").cast(pa.int64()))
        if keys:
            key_parts.append(chunk.column("key"))
    table = walk.table[walk.readable]
    starts = walk.table[:, fs.F_POS]
    ends = starts + walk.table[:, fs.F_SIZE]
    errors = {}
    framing = {exc.position for exc in walk.damages}
    for exc in found.errors:
        if exc.position in framing:
            continue  # the walk's damage (framing, or a CRC over a length that lied)
        # Keyed by the frame that holds the damage (record damage is named at its record).
        if exc.position is None:
            return None
        n = int(np.searchsorted(starts, exc.position, side="right")) - 1
        if n < 0 or not exc.position < ends[n]:
            return None
        frame = int(starts[n])
        if frame in errors:
            return None
        errors[frame] = exc
    counts = _counts(table, positions)
    if counts is None:
        return None
    with LogInput(name, path=path).open() as view:  # for the few frames decoded here
        controls = _controls(view, table, name)
    stamp = pa.chunked_array(stamps, pa.int64()).combine_chunks()
    unstamped = stamp.null_count > 0  # only magic 0 records have none
    return _Rows(
        counts,
        np.concatenate([np.zeros(0, np.int64), *offsets]),
        (stamp.fill_null(0) if unstamped else stamp).to_numpy() // 1000,
        ~np.asarray(stamp.is_null(), bool) if unstamped else np.ones(len(stamp), bool),
        pa.chunked_array(key_parts, pa.binary()).combine_chunks() if keys else None,
        errors,
        controls,
    )


def _base_of(path: Path) -> int | None:
    """The base offset the readers take from a file's name (``read.sources.resolve``)."""
    parsed = parse_segment_file_name(path.name)
    return parsed.base_offset if parsed is not None else None


def _reference_rows(
    view: memoryview,
    walk: _Walk,
    name: str,
    keys: bool,
    base_offset: int | None = None,
    next_base: int | None = None,
) -> _Rows:
    """The records through the reference decoder, frame by frame (the fast path's fallback),
    each batch's offsets judged against the segment as every reader judges them."""
    segment = SegmentOffsets(base_offset, next_base=next_base)
    table = walk.table[walk.readable]
    errors: dict[int, KafkaFormatError] = {}
    for row in walk.table[~walk.readable]:
        try:
            read_batch(_frame(view, row), ReadOptions(), file=name)
        except KafkaFormatError as exc:
            errors[int(row[fs.F_POS])] = exc
    counts = np.zeros(len(table), np.int64)
    records = []
    controls = {}
    for i, row in enumerate(table):
        frame = _frame(view, row)
        misplaced = judge_frame(segment, frame, True, name)
        if misplaced is not None:
            errors[int(row[fs.F_POS])] = misplaced
            continue
        try:
            batch = read_batch(frame, ReadOptions(), file=name)
        except KafkaFormatError as exc:
            errors[int(row[fs.F_POS])] = exc
            continue
        if batch.is_control:
            marker = batch.records[0].control if batch.records else None
            controls[batch.position] = (None if marker is None else marker.type, len(batch.records))
            continue
        counts[i] = len(batch.records or ())
        records.extend(batch.records or ())
    stamps = [r.timestamp for r in records]
    return _Rows(
        counts,
        np.array([r.offset for r in records], np.int64),
        np.array([0 if s is None else s for s in stamps], np.int64),
        np.array([s is not None for s in stamps], bool),
        pa.array([r.key for r in records], pa.binary()) if keys else None,
        errors,
        controls,
    )


# --- the checks ---------------------------------------------------------------------------------


def scan_log(
    path: Path,
    report: FileReport,
    *,
    base_offset: int | None,
    next_base_offset: int | None = None,
    progress: Progress | None = None,
    placement: PartitionPlacement | None = None,
    ahead: Any = None,
) -> ScannedLog:
    """Read every batch of a log file, decode its records, and report what is wrong;
    ``placement`` is shown the data records of every batch whose CRC holds. A pipe, a FIFO
    or ``/dev/stdin`` is read once into a temporary file first (the walk, the records and
    the control batches each read the file again); findings keep its own name. ``ahead``:
    the partition's small segments read at once (``read.files_ahead``)."""
    if is_stream_path(path):
        with spooled(path) as copy:
            scanned = _scan_log(
                copy, str(path), report, base_offset, next_base_offset, progress, placement
            )
        scanned.path = path
        return scanned
    return _scan_log(
        path, str(path), report, base_offset, next_base_offset, progress, placement, ahead
    )


def _scan_log(
    path: Path,
    name: str,
    report: FileReport,
    base_offset: int | None,
    next_base_offset: int | None,
    progress: Progress | None,
    placement: PartitionPlacement | None,
    ahead: Any = None,
) -> ScannedLog:
    scanned = ScannedLog(path, path.stat().st_size)
    if progress is not None:
        progress.begin_file(scanned.size)
    keys = placement is not None
    # One map at a time: the walk's map is closed (its pages with it) before the fast path
    # maps the file again and gives back what it has decoded.
    with LogInput(name, path=path).open() as view:
        walk = _walk(view, name)
        if walk.damages:
            # Past framing damage as errors="salvage" reads (its walk checks every CRC as it
            # goes, so an intact log keeps the plain walk).
            walk = _walk(view, name, salvage=True)
    rows = _fast_rows(path, walk, keys, name, ahead)
    if rows is None:
        with LogInput(name, path=path).open() as view:
            rows = _reference_rows(view, walk, name, keys, _base_of(path), next_base_offset)
    scanned.end = walk.end
    scanned.batches = _infos(walk)
    already = len(report.problems)
    _report_damage(walk, rows, report)
    _record_checks(scanned, walk, rows, report, base_offset, next_base_offset)
    if placement is not None and rows.keys is not None:
        placement.check_rows(rows.keys, rows.offsets, _row_positions(scanned, rows), name)
    _first_batch_check(scanned, report, base_offset)
    # In file order, as a reader meets them (a stable sort: a batch's damage first), and one
    # error a place: a batch whose offsets are wrong breaks several rules at once.
    report.problems[already:] = _one_error_a_place(sorted(report.problems[already:], key=_position))
    # Both kinds named: ``stats`` and ``recover`` count data records only, and a count
    # compared across commands must say which it is.
    data = int(rows.counts.sum())
    control = sum(n for _, n in rows.controls.values())
    report.counts.update(
        batches=len(scanned.batches),
        records=data + control,
        data_records=data,
        control_records=control,
        bytes=scanned.size,
    )
    if progress is not None:
        progress.at(scanned.end)
    scanned.index()
    return scanned


def _one_error_a_place(problems: list) -> list:
    """The first error at each byte position, and every warning."""
    seen: set[int] = set()
    out = []
    for problem in problems:
        if problem.severity == "error" and problem.position is not None:
            if problem.position in seen:
                continue
            seen.add(problem.position)
        out.append(problem)
    return out


def _position(problem) -> int:
    return -1 if problem.position is None else problem.position


def _row_positions(scanned: ScannedLog, rows: _Rows) -> np.ndarray:
    positions = np.fromiter((b.position for b in scanned.batches), np.int64, len(scanned.batches))
    return np.repeat(positions, rows.counts)


def _report_damage(walk: _Walk, rows: _Rows, report: FileReport) -> None:
    for exc in rows.errors.values():
        check = "crc" if isinstance(exc, CrcMismatchError) else "batch"
        report.from_exception(check, exc)
    for damage in walk.damages:
        report.from_exception("crc" if isinstance(damage, CrcMismatchError) else "framing", damage)
    if walk.tail is not None:
        tail = walk.tail
        report.warning("truncated-tail", messages.truncated_tail(tail.size), tail.position)


def _record_checks(
    scanned: ScannedLog,
    walk: _Walk,
    rows: _Rows,
    report: FileReport,
    base_offset: int | None,
    next_base_offset: int | None,
) -> None:
    """Offsets inside their batch and increasing, gaps, and the batches' largest timestamps;
    then each batch's offsets against its neighbours and the segment."""
    batches = scanned.batches
    counts = rows.counts
    t = walk.table[walk.readable]
    header_base, v2 = t[:, fs.F_BASE], t[:, fs.F_MAGIC] == 2
    last = np.where(v2, t[:, fs.F_BASE] + t[:, fs.F_LAST_DELTA], t[:, fs.F_BASE])
    starts = np.cumsum(counts) - counts
    filled = np.flatnonzero(counts > 0)
    if len(filled):
        # The first record's offset is the batch's first (a v0/v1 wrapper stores its last);
        # the largest stamped timestamp of its records, for all batches at once (the batches
        # with records hold consecutive runs of rows).
        at = starts[filled]
        if rows.stamped.all():  # the common case: no magic 0 record, nothing to mask
            largest = np.maximum.reduceat(rows.timestamps, at).tolist()
            any_stamped = [True] * len(at)
        else:
            stamps = np.where(rows.stamped, rows.timestamps, np.iinfo(np.int64).min)
            largest = np.maximum.reduceat(stamps, at).tolist()
            any_stamped = np.logical_or.reduceat(rows.stamped, at).tolist()
        firsts = rows.offsets[at].tolist()
        for i, first, stamped, stamp in zip(
            filled.tolist(), firsts, any_stamped, largest, strict=True
        ):
            info = batches[i]
            info.base_offset = first
            if stamped:
                info.max_timestamp = stamp
    for info in batches:
        control = rows.controls.get(info.position)
        if control is not None:
            info.control_type = control[0]
    _in_batch(batches, rows.offsets, counts, header_base, last, v2, report)
    damage = np.unique(
        np.fromiter(
            [*rows.errors, *(d.position for d in walk.damages if d.position is not None)],
            np.int64,
        )
    )
    _gaps(scanned, rows.offsets, counts, last, damage, report)
    if _offsets_hold(batches, rows.errors, base_offset, next_base_offset):
        return  # nothing for the loop below to report, found without a step a batch
    previous = None
    for info in batches:
        if info.position in rows.errors:
            continue  # damaged: its one verdict is reported, its header's offsets untrusted
        _check_batch_offsets(report, info, previous, base_offset, next_base_offset)
        previous = info.last_offset


def _in_batch(batches, offsets, counts, header_base, last, v2, report: FileReport) -> None:
    """The inner offsets of v0/v1 wrappers that no broker writes, as warnings.

    A v2 record's offset is judged by the record decoders (``batches.offset_delta_damage``,
    the kernel's E_OFFSET_OUTSIDE / E_OFFSET_ORDER): a batch at fault is damage every reader
    raises, and reaches this report as the decoders' error (``rows.errors``); its rows never
    get here. A wrapper's inner offsets out of order, or above the wrapper's offset, Kafka
    reads as they are (``DeepRecordsIterator``: relative to the last one for v1, absolute for
    v0; so do both decoders), so they are no damage: a warning, since index lookups by offset
    go wrong on them. A wrapper at offset 0 is left out: librdkafka's (v1) keeps its inner
    offsets as they are, whatever they are."""
    if not (~v2 & (counts > 0)).any():
        return  # no wrapper's inner offsets to judge (v2's are the decoders')
    owner = np.repeat(np.arange(len(batches)), counts)
    legacy = ~v2[owner]
    wrapper = last[owner]
    outside = legacy & (offsets > wrapper) & (header_base[owner] != 0)
    backwards = np.zeros(len(offsets), bool)
    backwards[1:] = legacy[1:] & (owner[1:] == owner[:-1]) & (offsets[1:] <= offsets[:-1])
    backwards &= ~outside
    for k in np.flatnonzero(outside | backwards).tolist():
        b = int(owner[k])
        if outside[k]:
            text = f"inner offset {offsets[k]} is above its wrapper's offset {last[b]}"
        else:
            text = f"inner offset {offsets[k]} does not follow offset {offsets[k - 1]}"
        report.warning(
            "offsets",
            f"{text} (Kafka reads it, but no broker writes it: offsets must increase)",
            batches[b].position,
        )


def _gaps(scanned: ScannedLog, offsets, counts, last, damage, report: FileReport) -> None:
    """Non-consecutive offsets: a record more than one above the offset before it (the last
    record's, or the last offset of a batch whose records were not decoded). ``damage``:
    the sorted byte positions of the damage reported in the file (damaged batches, framing
    damage and the bytes a salvaging walk stepped over), which explains a gap it lies in."""
    n = len(scanned.batches)
    if not n:
        return
    has = counts > 0
    if has.all():  # the common case: the records are the sequence
        steps, seq = counts, offsets
        gap = seq[1:] > seq[:-1] + 1
    else:
        steps = np.where(has, counts, 1)
        is_record = np.repeat(has, steps)
        seq = np.empty(int(steps.sum()), np.int64)
        seq[is_record] = offsets
        seq[~is_record] = last[~has]
        gap = is_record[1:] & (seq[1:] > seq[:-1] + 1)
    found = np.flatnonzero(gap) + 1
    if not len(found):
        return
    ends = np.cumsum(steps)

    def owner(k: np.ndarray) -> np.ndarray:
        return np.searchsorted(ends, k, side="right")

    scanned.has_gaps = True
    # A gap is damage's doing when damage lies from the batch of the offset before it to the
    # batch of the offset after it (a damaged batch's own header offsets, its lost records,
    # or bytes that framed no batch): only the other gaps are compaction's to explain.
    positions = np.fromiter((b.position for b in scanned.batches), np.int64, n)
    before, after = positions[owner(found - 1)], positions[owner(found)]
    damaged = np.searchsorted(damage, after, "right") > np.searchsorted(damage, before, "left")
    listed = [
        (int(seq[k - 1]), int(seq[k]), int(p), bool(d))
        for k, p, d in zip(
            found[:MAX_LISTED_GAPS].tolist(),
            after[:MAX_LISTED_GAPS].tolist(),
            damaged[:MAX_LISTED_GAPS].tolist(),
            strict=True,
        )
    ]
    count = len(found)
    across = int(damaged.sum())
    first = ", ".join(f"{a} is followed by {b}" for a, b, _, _ in listed[:3])
    if not across:
        why = "compaction leaves these"
    elif across == count:
        each = " of each" if count > 1 else ""
        why = f"damage reported in this file lies between the two offsets{each}"
    else:
        why = (
            f"damage reported in this file lies between the two offsets of {across}; "
            "compaction leaves the others"
        )
    # A note, not a warning: the cleaner leaves gaps in every healthy compacted topic (and
    # Kafka's readers take them: offsets only increase), so they are worth saying, not fixing;
    # a gap damage made is the damage's, which is reported as an error of its own.
    report.add(
        "note",
        "non-consecutive",
        f"non-consecutive offsets: {count} gap{'s' * (count > 1)} ({first}"
        f"{', ...' if count > 3 else ''}); {why}",
        listed[0][2],
        [{"offset": a, "next": b, "position": p, "damage": d} for a, b, p, d in listed],
    )


def _offsets_hold(
    batches: list, errors: dict, base_offset: int | None, next_base_offset: int | None
) -> bool:
    """Whether :func:`_check_batch_offsets` passes every undamaged batch, each after the one
    before it (the segment's rule, ``SegmentOffsets.all_hold``, or increasing offsets in a
    file that is no segment): the common case, judged in a few passes."""
    kept = [b for b in batches if b.position not in errors]
    firsts = np.fromiter((b.base_offset for b in kept), np.int64, len(kept))
    lasts = np.fromiter((b.last_offset for b in kept), np.int64, len(kept))
    if not bool((lasts >= firsts).all()):
        return False
    if base_offset is None:
        return bool((firsts[1:] > lasts[:-1]).all())
    if not bool((firsts >= base_offset).all()):
        return False  # and so at or above 0: no difference below wraps
    segment = SegmentOffsets(base_offset, next_base=next_base_offset)
    return segment.all_hold(firsts, lasts - firsts, None)


def _check_batch_offsets(
    report: FileReport,
    batch: BatchInfo,
    previous: int | None,
    base_offset: int | None,
    next_base_offset: int | None,
) -> None:
    first = batch.base_offset
    if batch.last_offset < first:
        report.error(
            "offsets",
            f"last offset {batch.last_offset} is below the first offset {first}",
            batch.position,
        )
    if base_offset is not None:
        # In a segment: where its offsets may lie, by the readers' own rule (segment_offsets)
        found = SegmentOffsets(base_offset, previous, next_base_offset).check(
            first, batch.last_offset
        )
        if found is not None:
            report.error(*found, batch.position)
    elif previous is not None and first <= previous:
        # A file of batches collected elsewhere (a fetch response, a test fixture) may
        # legitimately start again at 0: worth a warning, not damage.
        report.warning(
            "offsets",
            f"batch offsets {first}..{batch.last_offset} do not follow the "
            f"previous offset {previous} (offsets must increase)",
            batch.position,
        )


def _first_batch_check(scanned: ScannedLog, report: FileReport, base_offset: int | None) -> None:
    if base_offset is not None and scanned.batches:
        first_batch = scanned.batches[0]
        if first_batch.base_offset > base_offset:
            # A note: the cleaner removes a segment's first records and keeps its name.
            report.add(
                "note",
                "base-offset",
                f"the first batch starts at offset {first_batch.base_offset}, after the "
                f"segment's base offset {base_offset} (compaction or a moved log start)",
                first_batch.position,
            )
