"""``kafka-format verify``: check segments, indexes and snapshots against each other.

What is checked, file by file (errors fail the run, warnings do not):

* ``.log`` (:mod:`.verify_log`, on the fast path): the CRC of every batch and every record
  decoded (all batches, going on past a damaged one whose frame is intact; a batch whose CRC
  fails has that one verdict, its records are not read), framing damage as the walker
  (``format/framing.py``) names it; offsets that go backwards or overlap (error); records
  outside their batch's offset range (error); offsets beyond the 32-bit reach of the segment's
  indexes (error); the first batch below the segment's base offset (error) or above it
  (a note: compaction); a batch reaching into the next segment (error); non-consecutive
  offsets (a note: compaction leaves gaps in every healthy compacted topic); a truncated tail
  (warning, as Kafka stops reading there). Notes are what a healthy log may hold: they are
  listed and counted, and ``--quiet`` leaves them out with the warnings.
* ``.index``: the start-up sanity checks (indexes.py); each entry against the log by the rule
  every reader applies before trusting it (``files.index_lookup``: a whole batch whose CRC
  holds at its position, its base offset at or below the entry's offset and at or above the
  segment's): an entry the readers set aside is an error (``Mismatch`` in kafka-dump-log's
  words where the batch starts after the entry's offset), and one whose batch the .log already
  reports damaged a warning. Entries are judged wherever they point, after damage in the log
  too (a read from the entry's position gets those batches). An entry of a whole append (its
  largest offset at its first batch: followers' multi-batch appends, the log cleaner's chunks,
  whose largest retained offset may lie inside a batch) holds, and is only counted
  (``entries_of_whole_appends``).
* ``.timeindex``: sanity; each entry as kafka-dump-log's ``TimeIndexDumpErrors``: its offset
  is the last offset of a batch in the log, its timestamp is that batch's max record timestamp,
  timestamps increase. An entry whose offset lies inside the batch whose largest timestamp it
  records is the log cleaner's (``entries_inside_a_batch``, counted: look-ups work). A closed
  segment whose largest timestamp is not the last entry is a
  warning (time look-ups and retention read that entry).
* ``.txnindex``: sanity; every entry has an ABORT marker of its producer at its last offset,
  and every ABORT marker in the segment has an entry.
* ``.snapshot``: structure and CRC-32C. ``leader-epoch-checkpoint``: format, epochs and start
  offsets increasing. ``partition.metadata``: parsed as the broker parses it
  (``PartitionMetadataReadBuffer``); a file it would refuse is an error naming what is wrong.
* Missing ``.index`` / ``.timeindex`` (the broker rebuilds them: warning), index files without
  a ``.log`` (the broker deletes them: warning), untrimmed indexes of closed segments (warning).
* With ``--partitioner``: every keyed record against the partition the Java producer's default
  partitioner gives its key (``partitioner.default_partition``), the partition count being the
  highest ``topic-N`` directory found + 1 unless ``--partitions`` says otherwise. Misplaced
  records are warnings (a custom partitioner, an explicit partition or a topic that grew are
  legitimate), errors with ``--partitioner-strict``. Internal topics (``__*``) are skipped:
  the coordinators place their keys by Java's ``String.hashCode``, not murmur2.

The index checks are :mod:`.verify_index`'s; this module walks partitions, directories and
files and checks snapshots and the leader epoch checkpoint.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from ..cpus import map_in_order
from ..errors import KafkaFormatError
from ..files import kinds
from ..files.checkpoints import (
    read_leader_epoch_checkpoint,
    read_offset_checkpoint,
    read_partition_metadata,
)
from ..files.names import (
    OFFSET_WIDTH,
    FileKind,
    parse_segment_file_name,
    segment_file_name,
)
from ..files.snapshot import read_producer_snapshot
from ..log.partition import Partition, Segment
from ..progress import Progress
from ..read.ahead import log_sizes, threads_pay
from ..read.sources import partition_dirs, resolve
from .placement import PartitionPlacement, Placements
from .report import FileReport, Severity, VerifyReport
from .verify_index import check_offset_index, check_time_index, check_txn_index
from .verify_log import BatchInfo, ScannedLog, decode_max_timestamps, scan_headers, scan_log

__all__ = [
    "BatchInfo",
    "FileReport",
    "ScannedLog",
    "VerifyReport",
    "check_offset_index",
    "check_time_index",
    "check_txn_index",
    "decode_max_timestamps",
    "log_bytes",
    "scan_headers",
    "scan_log",
    "verify_paths",
]


# --- other files ----------------------------------------------------------------------------


def check_snapshot(path: Path, report: FileReport) -> None:
    try:
        snapshot = read_producer_snapshot(path)
    except KafkaFormatError as exc:
        report.from_exception("snapshot", exc)
        return
    report.counts["entries"] = len(snapshot.entries)
    if snapshot.trailing_bytes:
        report.warning(
            "snapshot",
            f"{snapshot.trailing_bytes} bytes after the last entry (Kafka ignores them)",
            path.stat().st_size - snapshot.trailing_bytes,
        )


def check_leader_epochs(path: Path, report: FileReport) -> None:
    try:
        entries = read_leader_epoch_checkpoint(path)
    except KafkaFormatError as exc:
        report.from_exception("checkpoint", exc)
        return
    report.counts["entries"] = len(entries)
    for previous, entry in itertools.pairwise(entries):
        if entry.epoch <= previous.epoch or entry.start_offset < previous.start_offset:
            report.error(
                "checkpoint",
                f"epoch {entry.epoch} at offset {entry.start_offset} does not follow epoch "
                f"{previous.epoch} at offset {previous.start_offset} (both must increase)",
            )


def check_partition_metadata(path: Path, report: FileReport) -> None:
    """``partition.metadata``, parsed as the broker parses it. The broker reads it when it
    loads the log (``UnifiedLog.initializeTopicId``) and takes the log dir offline when it
    cannot: as much an error as a broken segment."""
    try:
        read_partition_metadata(path)
    except KafkaFormatError as exc:
        report.from_exception("checkpoint", exc)
        return
    report.counts["entries"] = 1


def check_offset_checkpoint(path: Path, report: FileReport) -> None:
    """An offset checkpoint of the log dir, parsed as the broker parses it."""
    try:
        report.counts["entries"] = len(read_offset_checkpoint(path))
    except KafkaFormatError as exc:
        report.from_exception("checkpoint", exc)


# --- each kind of file given on its own: the verifiers of files.kinds -----------------------


@dataclass(frozen=True, slots=True)
class Alone:
    """What a verifier may need besides its file and its own report: the whole report (the
    key placement check adds to it), the progress line, the placement check."""

    report: VerifyReport
    progress: Progress | None = None
    placements: Placements | None = None


def _verify_log(path: Path, file_report: FileReport, alone: Alone) -> None:
    placements = alone.placements
    placement = placements.for_directory(path.parent, alone.report) if placements else None
    scan_log(
        path,
        file_report,
        base_offset=_base_offset_of(path),
        progress=alone.progress,
        placement=placement,
    )
    if placement is not None:
        placement.finish()


def _log_beside(
    path: Path, file_report: FileReport, progress: Progress | None
) -> tuple[int, ScannedLog | None] | None:
    """A segment file's base offset (from its name) and the ``.log`` beside it, scanned
    (None when there is none); None when the name holds no base offset (reported)."""
    base = _base_offset_of(path)
    if base is None:
        file_report.error("name", "no base offset in the file name: cannot check its entries")
        return None
    parsed = parse_segment_file_name(path.name)
    if parsed is not None and parsed.remote_id is not None:
        # a tiered-storage object's .log is the one of the same offset *and* id
        log_path = path.with_name(parsed.sibling(FileKind.LOG))
    else:
        log_path = path.with_name(segment_file_name(base, FileKind.LOG))
    if not log_path.is_file():
        sibling = path.with_name(path.name[: -len(path.suffix)] + FileKind.LOG.suffix)
        log_path = sibling if sibling.is_file() else log_path
    if not log_path.is_file():
        file_report.warning("no-log", f"no {log_path.name} beside it: entries not checked")
        return base, None
    log_report = FileReport(str(log_path), "log")
    return base, scan_log(log_path, log_report, base_offset=base, progress=progress)


def _verify_offset_index(path: Path, file_report: FileReport, alone: Alone) -> None:
    found = _log_beside(path, file_report, alone.progress)
    if found is not None:
        check_offset_index(path, *found, file_report, is_last=True)


def _verify_time_index(path: Path, file_report: FileReport, alone: Alone) -> None:
    found = _log_beside(path, file_report, alone.progress)
    if found is not None:
        check_time_index(path, *found, file_report, is_last=True)


def _verify_txn_index(path: Path, file_report: FileReport, alone: Alone) -> None:
    found = _log_beside(path, file_report, alone.progress)
    if found is not None:
        check_txn_index(path, *found, file_report, None)


def _verify_snapshot(path: Path, file_report: FileReport, alone: Alone) -> None:
    check_snapshot(path, file_report)


def _verify_leader_epochs(path: Path, file_report: FileReport, alone: Alone) -> None:
    check_leader_epochs(path, file_report)


def _verify_partition_metadata(path: Path, file_report: FileReport, alone: Alone) -> None:
    check_partition_metadata(path, file_report)


def _verify_offset_checkpoint(path: Path, file_report: FileReport, alone: Alone) -> None:
    check_offset_checkpoint(path, file_report)


def _verify_unknown(path: Path, file_report: FileReport, alone: Alone) -> None:
    # kafka-dump-log's answer: no batches here, nothing of ours to check.
    file_report.add("note", "unknown", "Ignoring unknown file")


# Every kind of file has its verifier here (tests/files/test_kinds.py holds the registry to it).
kinds.register(kinds.LOG, verifier=_verify_log)
kinds.register(kinds.INDEX, verifier=_verify_offset_index)
kinds.register(kinds.TIME_INDEX, verifier=_verify_time_index)
kinds.register(kinds.TXN_INDEX, verifier=_verify_txn_index)
kinds.register(kinds.PRODUCER_SNAPSHOT, verifier=_verify_snapshot)
kinds.register(kinds.LEADER_EPOCH_CHECKPOINT, verifier=_verify_leader_epochs)
kinds.register(kinds.REMOTE_LEADER_EPOCH_CHECKPOINT, verifier=_verify_leader_epochs)
kinds.register(kinds.PARTITION_METADATA, verifier=_verify_partition_metadata)
kinds.register(kinds.OFFSET_CHECKPOINT, verifier=_verify_offset_checkpoint)
kinds.register(kinds.UNKNOWN, verifier=_verify_unknown)


# --- partitions and paths -------------------------------------------------------------------


def verify_partition(
    path: str | Path,
    report: VerifyReport,
    *,
    progress: Progress | None = None,
    placements: Placements | None = None,
) -> None:
    partition = Partition.open(path)
    placement = placements.for_directory(Path(path), report) if placements else None
    # small segments' records read a run at a time, each file's as its own read gives them
    from ..read.files_ahead import FilesAhead  # numba: only where records are read

    ahead = FilesAhead([segment.log for segment in partition.segments])
    for n, segment in enumerate(partition.segments):
        following = partition.segments[n + 1] if n + 1 < len(partition.segments) else None
        verify_segment(
            segment,
            report,
            next_base_offset=following.base_offset if following else None,
            is_last=following is None,
            progress=progress,
            placement=placement,
            ahead=ahead,
        )
    if placement is not None:
        placement.finish()
    for orphan in partition.orphans:
        report.new(orphan, _label(orphan)).warning(
            "orphan", "no .log segment with this base offset (the broker deletes such files)"
        )
    for snapshot in partition.snapshots:
        label = kinds.PRODUCER_SNAPSHOT.label_of(snapshot.path.name)
        check_snapshot(snapshot.path, report.new(snapshot.path, label))
    alone = Alone(report, progress, placements)
    for kind in kinds.PARTITION_FILES:  # in the registry's order, not the listing's
        side = partition.side_files.get(kind)
        if side is not None:
            path = Path(side)
            kinds.role(kind, "verifier")(path, report.new(path, kind.label_of(path.name)), alone)


def verify_segment(
    segment: Segment,
    report: VerifyReport,
    *,
    next_base_offset: int | None = None,
    is_last: bool = True,
    progress: Progress | None = None,
    placement: PartitionPlacement | None = None,
    ahead: Any = None,
) -> None:
    """Check a segment's log and indexes, each against the log (``ahead``: its partition's
    small segments read at once)."""
    log_report = report.new(segment.log, "log")
    log = None
    if segment.log.is_file():
        log = scan_log(
            segment.log,
            log_report,
            base_offset=segment.base_offset,
            next_base_offset=next_base_offset,
            progress=progress,
            placement=placement,
            ahead=ahead,
        )

    def missing(kind: FileKind) -> str:
        name = parse_segment_file_name(segment.log.name)
        if name is not None and name.remote_id is not None:
            return name.sibling(kind)
        return segment_file_name(segment.base_offset, kind)

    if segment.index is not None:
        check_offset_index(
            segment.index,
            segment.base_offset,
            log,
            report.new(segment.index, "index"),
            is_last=is_last,
        )
    else:
        log_report.warning(
            "missing-index",
            f"no {missing(FileKind.INDEX)} (the broker "
            "rebuilds it at start-up; look-ups scan the segment)",
        )
    if segment.timeindex is not None:
        check_time_index(
            segment.timeindex,
            segment.base_offset,
            log,
            report.new(segment.timeindex, "timeindex"),
            is_last=is_last,
        )
    else:
        log_report.warning(
            "missing-index",
            f"no {missing(FileKind.TIME_INDEX)} (the broker rebuilds it at start-up)",
        )
    txn_report = report.new(segment.txnindex, "txnindex") if segment.txnindex else None
    check_txn_index(segment.txnindex, segment.base_offset, log, txn_report, log_report)
    if segment.leader_epoch_checkpoint is not None:
        path = Path(segment.leader_epoch_checkpoint)
        label = kinds.REMOTE_LEADER_EPOCH_CHECKPOINT.label_of(path.name)
        check_leader_epochs(path, report.new(path, label))


def _kind(path: Path) -> kinds.Kind:
    """The file's kind; a file of no known kind is read as batches, as a ``.log``."""
    kind = kinds.classify(path.name)
    return kinds.LOG if kind is None else kind


def _label(path: Path) -> str:
    """What the report calls the file (its ``kind``)."""
    return _kind(path).label_of(path.name)


def _base_offset_of(path: Path) -> int | None:
    parsed = parse_segment_file_name(path.name)
    if parsed is not None:
        return parsed.base_offset
    # Renamed copies such as orders-0.00000000000000000120.index keep the offset last, in
    # Kafka's 20 digits (a shorter number is more likely part of some other name).
    stem = path.name.rsplit(".", 1)[0]
    last = stem.rsplit(".", 1)[-1]
    return int(last) if last.isdigit() and len(last) == OFFSET_WIDTH else None


def verify_file(
    path: Path,
    report: VerifyReport,
    *,
    progress: Progress | None = None,
    placements: Placements | None = None,
) -> None:
    """One file given on its own, by its kind's verifier (``files.kinds``): a segment's
    other files are checked against the .log beside them where that exists."""
    kind = _kind(path)
    verifier = kinds.role(kind, "verifier")
    verifier(path, report.new(path, kind.label_of(path.name)), Alone(report, progress, placements))


def verify_paths(
    paths: Sequence[str | Path],
    *,
    progress: Progress | None = None,
    partitioner: bool = False,
    partitions: Mapping[str | None, int] | int | None = None,
    partitioner_severity: Severity = "warning",
) -> VerifyReport:
    """Verify partition directories, log directories of them, and single files;
    ``progress`` hears of every batch read (see :func:`log_bytes`).

    ``partitioner`` also checks where keyed records sit (:class:`Placements`); ``partitions``
    gives partition counts and implies ``partitioner``.

    Partitions (and files) are verified :func:`~..cpus.default_threads` at once, each read on
    one thread, and their reports kept in the order given: the report is a one-thread run's.
    A failure that stops one partition stops only that one. The partitioner check keeps them
    one at a time (its counts span a topic's partitions).
    """
    report = VerifyReport()
    placements = None
    if partitioner or partitions is not None:
        placements = Placements(paths, partitions, severity=partitioner_severity)
        report.placement = placements.topics
    units = [unit for raw in paths for unit in _units(Path(raw))]
    if placements is not None:
        # The partitioner check counts keys across a topic's partitions: one at a time.
        for unit in units:
            report.files.extend(_run(unit, progress, placements).files)
        return report

    def run(unit: _Unit) -> VerifyReport:
        view = progress.share() if progress is not None else None
        try:
            return _run(unit, view, None)
        finally:
            if view is not None:
                view.finish()

    # Partitions at once, their reports in the order a sequential run writes them.
    parallel = threads_pay(log_sizes(u.path for u in units if u.kind != "problem"))
    for done in map_in_order(run, units, name="kafka-format-verify", parallel=parallel):
        report.files.extend(done.files)
    return report


@dataclass(frozen=True, slots=True)
class _Unit:
    """One piece of a verify run: a partition directory, a file, or what went wrong naming
    one (``problem``: kind, code, text)."""

    kind: Literal["partition", "file", "problem"]
    path: Path
    problem: tuple[str, str, str] | None = None
    error: KafkaFormatError | OSError | None = None


def _units(path: Path) -> list[_Unit]:
    """What verifying ``path`` takes: its partitions (a log dir), itself, or its problem."""
    try:
        if path.is_dir():
            partition = Partition.open(path)
            if partition.segments or partition.snapshots or partition.orphans:
                return [_Unit("partition", path)]
            subs = partition_dirs(path)
            if not subs:
                text = "no .log segments here, nor partition directories (topic-N)"
                return [_Unit("problem", path, ("directory", "missing", text))]
            return [_Unit("partition", sub) for sub in subs]
        if path.exists():
            return [_Unit("file", path)]
        return [_Unit("problem", path, ("missing", "missing", "no such file or directory"))]
    except (KafkaFormatError, OSError) as exc:
        return [_Unit("problem", path, error=exc)]


def _run(unit: _Unit, progress: Any, placements: Placements | None) -> VerifyReport:
    report = VerifyReport()
    error = unit.error
    try:
        if unit.kind == "partition":
            verify_partition(unit.path, report, progress=progress, placements=placements)
        elif unit.kind == "file":
            verify_file(unit.path, report, progress=progress, placements=placements)
        elif unit.problem is not None:
            kind, code, text = unit.problem
            report.new(unit.path, kind).error(code, text)
    except (KafkaFormatError, OSError) as exc:
        error = exc
    if isinstance(error, KafkaFormatError):
        report.new(error.file or unit.path, "error").from_exception("read", error)
    elif isinstance(error, OSError):
        report.new(getattr(error, "filename", None) or unit.path, "error").error(
            "io", error.strerror or str(error)
        )
    return report


def log_bytes(paths: Sequence[str | Path]) -> tuple[int, int]:
    """Size and number of the ``.log`` files :func:`verify_paths` reads, as far as a quick
    look can tell: the total its progress line counts towards."""
    total = files = 0
    for raw in paths:
        path = Path(raw)
        try:
            if not (path.is_dir() or _kind(path) is kinds.LOG):
                continue  # an index, snapshot or checkpoint given alone: not counted (small)
            inputs = resolve(path)
            for log in inputs:
                if log.path is not None:
                    total += log.path.stat().st_size
                    files += 1
        except (KafkaFormatError, OSError):
            continue  # verify_paths reports it
    return total, files
