"""``kafka-format dump``: kafka-dump-log's text output, field for field, and JSON lines.

The text lines keep ``DumpLogSegments``' field names and order so that existing greps work::

    baseOffset: 0 lastOffset: 2 count: 3 baseSequence: 0 lastSequence: 2 producerId: 7
    producerEpoch: 0 partitionLeaderEpoch: 0 isTransactional: false isControl: false
    deleteHorizonMs: OptionalLong.empty position: 0 CreateTime: 1700000000002 size: 120
    magic: 2 compresscodec: none crc: 123456 isvalid: true
    | offset: 0 CreateTime: 1700000000000 keySize: 3 valueSize: 5 sequence: 0 headerKeys: []

(each on one line). Other files are dumped by suffix as kafka-dump-log does them. As it does,
an ``.index`` / ``.timeindex`` is checked against the ``.log`` beside it (the checks are
``verify``'s), and what does not match is reported on stderr after every file was dumped,
in its words: ``Mismatches in :FILE``, ``Found timestamp mismatch in :FILE``, ``Found out of
order timestamp in :FILE``, ``The following indexed offsets are not found in the log.``,
then ``Non-consecutive offsets in FILE`` for the logs. The log is read from its batch headers,
and only the batches that time index entries point at are decoded (for their records' largest
timestamp), as kafka-dump-log reads it: about a second for a 100 MB segment, where decoding
every record took minutes.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from itertools import accumulate
from pathlib import Path
from typing import Any, TextIO

from ..analysis.verify import (
    FileReport,
    ScannedLog,
    check_offset_index,
    check_time_index,
    decode_max_timestamps,
    scan_headers,
)
from ..errors import CrcMismatchError, KafkaFormatError
from ..files.checkpoints import LEADER_EPOCH_CHECKPOINT, read_leader_epoch_checkpoint
from ..files.indexes import OffsetIndex, TimeIndex
from ..files.names import FileKind, parse_kraft_snapshot_name, parse_segment_file_name
from ..files.snapshot import read_producer_snapshot
from ..files.txnindex import TransactionIndex
from ..format.jsonform import batch_json, record_json
from ..model import (
    Batch,
    Record,
    Report,
    decrement_sequence,
)
from ..progress import Progress, wanted
from ..read.reader import iter_batches
from ..read.sources import resolve
from ..read.transactions import collect_aborted
from .args import positive_int
from .text import (
    BOOTSTRAP_SNAPSHOT,
    DECODERS,
    DEFAULT_MAX_MESSAGE_SIZE,
    DumpOptions,
    _optional_long,
    batch_line,
    record_line,
)

Pairs = dict[str, list[tuple[int, int]]]


@dataclass(slots=True)
class DumpResult:
    """What went wrong while dumping (decides the exit status), and kafka-dump-log's
    reports, printed after all files as it prints them: pairs of numbers by absolute path."""

    errors: list[str] = field(default_factory=list)
    #: (index offset, log offset): ``Mismatches in :FILE``.
    index_mismatches: Pairs = field(default_factory=dict)
    #: (index timestamp, log timestamp): ``Found timestamp mismatch in :FILE``.
    timestamp_mismatches: Pairs = field(default_factory=dict)
    #: (index timestamp, previously indexed timestamp): ``Found out of order timestamp``.
    out_of_order_timestamps: Pairs = field(default_factory=dict)
    #: (indexed offset, log offset found, -1 for none): ``...not found in the log.``
    offsets_not_found: Pairs = field(default_factory=dict)
    #: (offset, next offset): ``Non-consecutive offsets in FILE``.
    non_consecutive: Pairs = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.errors

    def merge(self, other: DumpResult) -> None:
        self.errors.extend(other.errors)
        for name in (
            "index_mismatches",
            "timestamp_mismatches",
            "out_of_order_timestamps",
            "offsets_not_found",
            "non_consecutive",
        ):
            mine: Pairs = getattr(self, name)
            for file, pairs in getattr(other, name).items():
                mine.setdefault(file, []).extend(pairs)


def _absolute(path: str | os.PathLike[str]) -> str:
    # kafka-dump-log keys its reports by File.getAbsolutePath: absolute, links not resolved.
    return str(Path(path).absolute())


def _file_size(path: str | None) -> int:
    try:
        return os.path.getsize(path) if path else 0
    except OSError:
        return 0


def _tracked(batches: Iterable[Batch], progress: Progress | None) -> Iterator[Batch]:
    """The batches, telling ``progress`` how far each file has been read."""
    if progress is None:
        yield from batches
        return
    current: str | None = None
    for batch in batches:
        if batch.file != current:
            current = batch.file
            progress.begin_file(_file_size(current))
        progress.at(batch.position + batch.size)
        yield batch


def _log_header(path: str) -> str | None:
    """The line kafka-dump-log prints before a log's batches, if any."""
    name = Path(path).name
    parsed = parse_segment_file_name(name)
    if parsed is not None and parsed.kind is FileKind.LOG:
        return f"Log starting offset: {parsed.base_offset}"
    if name == BOOTSTRAP_SNAPSHOT:
        return "KRaft bootstrap snapshot"
    snapshot = parse_kraft_snapshot_name(name)
    if snapshot is not None:
        return f"Snapshot end offset: {snapshot.end_offset}, epoch: {snapshot.epoch}"
    return None


def dump_log(
    path: str,
    options: DumpOptions,
    out: TextIO,
    err: TextIO,
    progress: Progress | None = None,
) -> DumpResult:
    """A log, a KRaft ``.checkpoint``, any file of batches, or a partition directory, as
    kafka-dump-log prints it."""
    if options.jsonl:
        return _dump_log_jsonl(path, options, out, err, progress)
    result = DumpResult()
    report = Report()
    header = _log_header(path)
    if header is not None:
        out.write(header + "\n")
    deep = options.deep_iteration or options.print_data_log
    current_file: str | None = None
    last_offset: int | None = None
    batches = iter_batches(
        path,
        records=deep,
        verify_crc="report",
        errors="skip",
        report=report,
        **_max_bytes(options),
    )
    for batch in _tracked(batches, progress):
        if options.max_bytes is not None and batch.position + batch.size > options.max_bytes:
            break
        if batch.file != current_file:
            # Offsets are followed file by file, as kafka-dump-log dumps one file at a time.
            current_file, last_offset = batch.file, None
        out.write(batch_line(batch, batch.position) + "\n")
        problem = batch.error
        if problem is None and batch.crc_valid is False:
            problem = CrcMismatchError(
                batch.crc,
                batch.computed_crc,
                algorithm="crc32c" if batch.magic >= 2 else "crc32",
                file=batch.file,
                position=batch.position,
                base_offset=batch.base_offset,
            )
        if problem is not None:
            result.errors.append(str(problem))
            err.write(f"error: {problem}\n")
        if deep and batch.records:
            for record in batch.records:
                if last_offset is not None and record.offset != last_offset + 1:
                    gaps = result.non_consecutive.setdefault(_absolute(current_file or path), [])
                    gaps.append((last_offset, record.offset))
                last_offset = record.offset
                out.write(record_line(batch, record, options) + "\n")
    _report_tail_and_errors(report, options, out, err, result, already=len(result.errors))
    return result


def _max_bytes(options: DumpOptions) -> dict:
    if options.max_decompressed_bytes is None:
        return {}
    return {"max_decompressed_bytes": options.max_decompressed_bytes}


def _report_tail_and_errors(
    report: Report,
    options: DumpOptions,
    out: TextIO,
    err: TextIO,
    result: DumpResult,
    already: int,
) -> None:
    # Errors already printed with their batch are not repeated; framing errors are new.
    for exc in report.errors[already:]:
        result.errors.append(str(exc))
        err.write(f"error: {exc}\n")
    if options.max_bytes is None:
        for tail in report.truncated:
            out.write(f"Found {tail.size} invalid bytes at the end of {Path(tail.file).name}\n")


def _data_records(
    path: str, batches: Iterable[Batch], isolation: str, read: dict[str, Any]
) -> Iterator[Record]:
    """What ``iter_records`` yields, taken from batches whose reading we follow."""
    if isolation == "read_committed":
        # As iter_records: a header-only first pass finds the aborted transactions (it
        # reports nothing: the second pass sees the same batches and reports them).
        first = iter_batches(path, records=lambda batch: batch.is_control, **read)
        yield from collect_aborted(first, path).filter(batches)
        return
    for batch in batches:
        if batch.records and not batch.is_control:
            yield from batch.records


def _dump_log_jsonl(
    path: str,
    options: DumpOptions,
    out: TextIO,
    err: TextIO,
    progress: Progress | None = None,
) -> DumpResult:
    result = DumpResult()
    report = Report()
    read: dict[str, Any] = dict(verify_crc=options.verify_crc, errors="skip")
    read.update(_max_bytes(options))
    batches = _tracked(
        iter_batches(path, records=not options.batches, report=report, **read), progress
    )
    if options.batches:
        for batch in batches:
            out.write(json.dumps(batch_json(batch), separators=(",", ":")) + "\n")
    else:
        for record in _data_records(path, batches, options.isolation, read):
            out.write(json.dumps(record_json(record), separators=(",", ":")) + "\n")
    for exc in report.errors:
        result.errors.append(str(exc))
        err.write(f"error: {exc}\n")
    for tail in report.truncated:
        err.write(f"Found {tail.size} invalid bytes at the end of {tail.file}\n")
    return result


# --- companion files ------------------------------------------------------------------------


def base_offset_of(path: str) -> int | None:
    """The segment base offset a companion file's name carries.

    Copies are often renamed with a prefix (``orders-0.00000000000000000120.index``), so
    the last dotted part before the suffix counts too; None when neither has one, which the
    readers then report.
    """
    name = Path(path).name
    parsed = parse_segment_file_name(name)
    if parsed is not None:
        return parsed.base_offset
    stem = name.rsplit(".", 1)[0]
    last = stem.rsplit(".", 1)[-1]
    return int(last) if last.isdigit() else None


def _emit(rows: Iterable[dict], text: Callable[[dict], str], jsonl: bool, out: TextIO) -> None:
    for row in rows:
        out.write((json.dumps(row, separators=(",", ":")) if jsonl else text(row)) + "\n")


def log_beside(path: str | os.PathLike[str]) -> Path | None:
    """The ``.log`` an index belongs to: same directory, same name up to the suffix
    (kafka-dump-log takes the name up to its first dot; a renamed copy such as
    ``orders-0.00000000000000000120.index`` keeps its prefix)."""
    index = Path(path)
    for name in (index.name.split(".", 1)[0], index.name.rsplit(".", 1)[0]):
        candidate = index.with_name(name + FileKind.LOG.suffix)
        if candidate.is_file():
            return candidate
    return None


def _index_entries(
    cls: type[OffsetIndex] | type[TimeIndex], path: str
) -> tuple[int, list[tuple[int, ...]], KafkaFormatError | None]:
    """The index opened leniently, with every written entry (disordered ones too, which
    kafka-dump-log prints as well), and the sanity problem found on opening."""
    with cls.open(path, base_offset_of(path), strict=False) as index:
        return index.base_offset, index.written_entries(), index.problem


def _sanity(path: str, problem: KafkaFormatError | None, options: DumpOptions, out: TextIO):
    """``--index-sanity-check``: the verdict (a failure is already on stderr)."""
    if options.jsonl:
        out.write(json.dumps({"file": path, "passedSanityCheck": problem is None}) + "\n")
    elif problem is None:
        out.write(f"{path} passed sanity check.\n")


def _scan_log_beside(
    path: str, options: DumpOptions, err: TextIO, result: DumpResult, progress
) -> ScannedLog | None:
    """The batches of the ``.log`` beside an index, from their headers (``scan_headers``):
    seconds where decoding every record of a 1 GiB segment took minutes."""
    log_path = log_beside(path)
    if log_path is None:
        note = f"{path}: no .log beside it: entries not checked against the log"
        if options.verify_index_only:
            result.errors.append(note)
            err.write(f"error: {note}\n")
        else:
            err.write(f"note: {note}\n")
        return None
    # Damage in the log itself is the log's dump's business: only its batches count here.
    return scan_headers(log_path, progress=progress)


def dump_index(
    path: str,
    options: DumpOptions,
    out: TextIO,
    err: TextIO,
    progress: Progress | None = None,
) -> DumpResult:
    """``DumpLogSegments.dumpIndex``: the entries, then (on stderr, at the end) those that
    do not point at a batch ending at their offset."""
    result = DumpResult()
    base, entries, problem = _index_entries(OffsetIndex, path)
    if problem is not None:
        result.errors.append(str(problem))
        err.write(f"error: {problem}\n")
    if not entries:
        if not options.jsonl:
            out.write(f"{path} is empty.\n")
        return result
    if options.index_sanity_only:
        _sanity(path, problem, options, out)
        return result
    if not options.verify_index_only:
        rows = ({"offset": base + rel, "position": pos} for rel, pos in entries)
        _emit(
            rows, lambda r: f"offset: {r['offset']} position: {r['position']}", options.jsonl, out
        )
    log = _scan_log_beside(path, options, err, result, progress)
    if log is None:
        return result
    report = FileReport(path, "index")
    check_offset_index(Path(path), base, log, report, is_last=True)
    mismatches = result.index_mismatches.setdefault(_absolute(path), [])
    for problem_found in report.problems:
        if problem_found.check == "index-sanity":
            continue  # printed above, from our own opening
        pair = None
        if problem_found.check == "index-entry" and problem_found.position is not None:
            rel, position = entries[problem_found.position // OffsetIndex.ENTRY_SIZE]
            batch = log.at_position(position)
            pair = (base + rel, batch.last_offset) if batch is not None else None
        if pair is not None:
            # Kafka's words for it. An entry ending a later batch of the same append is
            # listed (Kafka lists it) but fails nothing: verify calls it a warning.
            mismatches.append(pair)
        elif problem_found.severity == "error":
            err.write(problem_found.line() + "\n")
        if problem_found.severity == "error":
            result.errors.append(problem_found.line())
    for n, (rel, position) in enumerate(entries):
        batch = log.at_position(position)
        if batch is not None and batch.size > options.max_message_size:
            line = (
                f"error: {path} @{n * OffsetIndex.ENTRY_SIZE}: entry {n} (offset {base + rel}, "
                f"position {position}): the batch there is {batch.size} bytes, more than "
                f"--max-message-size {options.max_message_size}"
            )
            result.errors.append(line)
            err.write(line + "\n")
    if not mismatches:
        del result.index_mismatches[_absolute(path)]
    return result


def dump_time_index(
    path: str,
    options: DumpOptions,
    out: TextIO,
    err: TextIO,
    progress: Progress | None = None,
) -> DumpResult:
    """``DumpLogSegments.dumpTimeIndex``: the entries, then (on stderr, at the end) the
    timestamps that do not match the log, go backwards, or whose offsets are not found."""
    result = DumpResult()
    base, entries, problem = _index_entries(TimeIndex, path)
    if problem is not None:
        result.errors.append(str(problem))
        err.write(f"error: {problem}\n")
    if options.index_sanity_only:
        _sanity(path, problem, options, out)
        return result
    if not options.verify_index_only:
        rows = ({"timestamp": ts, "offset": base + rel} for ts, rel in entries)
        _emit(
            rows, lambda r: f"timestamp: {r['timestamp']} offset: {r['offset']}", options.jsonl, out
        )
    if not entries:
        return result
    log = _scan_log_beside(path, options, err, result, progress)
    if log is not None:
        # The records' largest timestamp, of the batches the entries point at only.
        found = (log.first_ending_at_or_after(base + rel) for _, rel in entries)
        decode_max_timestamps(log, (batch for batch in found if batch is not None))
    report = FileReport(path, "timeindex")
    check_time_index(Path(path), base, log, report, is_last=True)
    # The largest timestamp before each entry: what an out-of-order one went back from.
    before = [-1, *accumulate((ts for ts, _ in entries), max)]
    key = _absolute(path)
    for problem_found in report.problems:
        if problem_found.check == "index-sanity":
            continue
        at = problem_found.position
        if problem_found.check == "timeindex-order" and at is not None:
            n = at // TimeIndex.ENTRY_SIZE
            pair = (entries[n][0], before[n])
            result.out_of_order_timestamps.setdefault(key, []).append(pair)
        elif problem_found.check == "timeindex-entry" and at is not None and log is not None:
            timestamp, rel = entries[at // TimeIndex.ENTRY_SIZE]
            offset = base + rel
            batch = log.first_ending_at_or_after(offset)
            if batch is None:
                result.offsets_not_found.setdefault(key, []).append((offset, -1))
            elif batch.last_offset != offset:
                result.offsets_not_found.setdefault(key, []).append((offset, batch.last_offset))
            else:
                logged = -1 if batch.max_timestamp is None else batch.max_timestamp
                result.timestamp_mismatches.setdefault(key, []).append((timestamp, logged))
        elif problem_found.severity == "error":
            err.write(problem_found.line() + "\n")
        if problem_found.severity == "error":
            result.errors.append(problem_found.line())
    return result


def dump_txn_index(
    path: str,
    options: DumpOptions,
    out: TextIO,
    err: TextIO,
    progress: Progress | None = None,
) -> DumpResult:
    result = DumpResult()
    index = TransactionIndex.open(path, base_offset_of(path), strict=False)
    if index.problem is not None:
        result.errors.append(str(index.problem))
        err.write(f"error: {index.problem}\n")
    rows = (
        {
            "version": t.version,
            "producerId": t.producer_id,
            "firstOffset": t.first_offset,
            "lastOffset": t.last_offset,
            "lastStableOffset": t.last_stable_offset,
        }
        for t in index.entries
    )
    _emit(rows, lambda r: " ".join(f"{k}: {v}" for k, v in r.items()), options.jsonl, out)
    return result


def _snapshot_text(row: dict) -> str:
    # DumpLogSegments prints "lastTimestamp: N " (with its space) and then the batch
    # metadata, if any, on the same line: a line without metadata ends in that space.
    text = (
        f"producerId: {row['producerId']} producerEpoch: {row['producerEpoch']} "
        f"coordinatorEpoch: {row['coordinatorEpoch']} "
        f"currentTxnFirstOffset: {_optional_long(row['currentTxnFirstOffset'])} "
        f"lastTimestamp: {row['lastTimestamp']} "
    )
    if "firstSequence" in row:
        text += (
            f"firstSequence: {row['firstSequence']} lastSequence: {row['lastSequence']} "
            f"lastOffset: {row['lastOffset']} offsetDelta: {row['offsetDelta']} "
            f"timestamp: {row['timestamp']}"
        )
    return text


def dump_snapshot(
    path: str,
    options: DumpOptions,
    out: TextIO,
    err: TextIO,
    progress: Progress | None = None,
) -> DumpResult:
    """``DumpLogSegments.dumpProducerIdSnapshot``, field for field."""
    snapshot = read_producer_snapshot(path)
    rows = []
    for e in snapshot.entries:
        row = {
            "producerId": e.producer_id,
            "producerEpoch": e.epoch,
            "coordinatorEpoch": e.coordinator_epoch,
            "currentTxnFirstOffset": e.ongoing_txn_first_offset,
            "lastTimestamp": e.timestamp,
        }
        if e.has_batch_metadata:
            row.update(
                firstSequence=decrement_sequence(e.last_sequence, e.offset_delta),
                lastSequence=e.last_sequence,
                lastOffset=e.last_offset,
                offsetDelta=e.offset_delta,
                timestamp=e.timestamp,
            )
        rows.append(row)
    _emit(rows, _snapshot_text, options.jsonl, out)
    return DumpResult()


def dump_leader_epochs(
    path: str,
    options: DumpOptions,
    out: TextIO,
    err: TextIO,
    progress: Progress | None = None,
) -> DumpResult:
    rows = (
        {"epoch": e.epoch, "startOffset": e.start_offset}
        for e in read_leader_epoch_checkpoint(path)
    )
    _emit(
        rows, lambda r: f"epoch: {r['epoch']} startOffset: {r['startOffset']}", options.jsonl, out
    )
    return DumpResult()


Dumper = Callable[..., DumpResult]


def dumper_for(path: str) -> Dumper:
    """Pick the dumper by suffix, as kafka-dump-log does; anything else is read as batches
    (``.log``, KRaft ``.checkpoint`` snapshots, and any file of batches)."""
    name = Path(path).name
    if name == LEADER_EPOCH_CHECKPOINT:
        return dump_leader_epochs
    parsed = parse_segment_file_name(name)
    kind = parsed.kind if parsed is not None else None
    if kind is None:
        suffix = Path(name).suffix
        kind = {k.suffix: k for k in FileKind}.get(suffix)
    return {
        FileKind.INDEX: dump_index,
        FileKind.TIME_INDEX: dump_time_index,
        FileKind.TXN_INDEX: dump_txn_index,
        FileKind.PRODUCER_SNAPSHOT: dump_snapshot,
    }.get(kind, dump_log)


def _work(paths: list[str], options: DumpOptions) -> tuple[int, int]:
    """Bytes and files of log the dump will read: the total its progress line counts."""
    total = files = 0
    for path in paths:
        dumper = dumper_for(path)
        try:
            if dumper is dump_log:
                logs = [log.path for log in resolve(path) if log.path is not None]
            elif dumper in (dump_index, dump_time_index) and not options.index_sanity_only:
                logs = [p for p in (log_beside(path),) if p is not None]
            else:
                continue
            for log in logs:
                total += log.stat().st_size
                files += 1
        except (KafkaFormatError, OSError):
            continue  # the dump itself reports it
    return total, files


def print_reports(result: DumpResult, err: TextIO) -> None:
    """kafka-dump-log's closing reports, in its order and words (``DumpLogSegments.main``)."""
    for file, pairs in result.index_mismatches.items():
        err.write(f"Mismatches in :{file}\n")
        for index_offset, log_offset in pairs:
            err.write(f"  Index offset: {index_offset}, log offset: {log_offset}\n")
    for file, pairs in result.timestamp_mismatches.items():
        err.write(f"Found timestamp mismatch in :{file}\n")
        for index_ts, log_ts in pairs:
            err.write(f"  Index timestamp: {index_ts}, log timestamp: {log_ts}\n")
    for file, pairs in result.out_of_order_timestamps.items():
        err.write(f"Found out of order timestamp in :{file}\n")
        for index_ts, previous in pairs:
            err.write(f"  Index timestamp: {index_ts}, Previously indexed timestamp: {previous}\n")
    for pairs in result.offsets_not_found.values():
        err.write("The following indexed offsets are not found in the log.\n")
        for indexed, found in pairs:
            err.write(f"Indexed offset: {indexed}, found log offset: {found}\n")
    for file, pairs in result.non_consecutive.items():
        err.write(f"Non-consecutive offsets in {file}\n")
        for first, second in pairs:
            err.write(f"  {first} is followed by {second}\n")


def dump(
    paths: list[str], options: DumpOptions, out: TextIO | None = None, err: TextIO | None = None
) -> int:
    """Dump every path; the exit status: 0 when all is well, 1 when something was damaged."""
    # Looked up at call time: a stream bound at import goes stale when the caller swaps it.
    out = out if out is not None else sys.stdout
    err = err if err is not None else sys.stderr
    progress = None
    if wanted(stream=err, quiet=options.quiet, output=out):
        total, files = _work(paths, options)
        progress = Progress.start("dump", total, files=files, stream=err, output=out)
    messages = progress.wrap(err) if progress is not None else err
    status = 0
    everything = DumpResult()
    try:
        for path in paths:
            if not options.jsonl:
                out.write(f"Dumping {path}\n")
            try:
                result = dumper_for(path)(path, options, out, messages, progress)
            except KafkaFormatError as exc:
                messages.write(f"error: {exc}\n")
                status = 1
                continue
            except BrokenPipeError:
                raise
            except OSError as exc:
                messages.write(f"error: {path}: {exc.strerror or exc}\n")
                status = 1
                continue
            everything.merge(result)
    finally:
        if progress is not None:
            progress.close()
    print_reports(everything, err)
    return 1 if status or not everything.ok else 0


# --- command line ---------------------------------------------------------------------------

EPILOG_DUMP = """\
examples:
  kafka-format dump 00000000000000000000.log
  kafka-format dump --deep-iteration --print-data-log --value-decoder json orders-0/*.log
  kafka-format dump --jsonl --isolation read_committed /var/lib/kafka/orders-0 > orders.jsonl
  kafka-format dump --jsonl --batches 00000000000000000000.log     # batch headers as JSON
  kafka-format dump 00000000000000000000.index 00000000000000000000.timeindex
  kafka-format dump --verify-index-only orders-0/*.index orders-0/*.timeindex
  kafka-format dump --index-sanity-check orders-0/*.index
  kafka-format dump --offsets-decoder __consumer_offsets-12/00000000000000000000.log
  kafka-format dump --cluster-metadata-decoder __cluster_metadata-0/*.log

An .index or .timeindex is checked against the .log beside it, as kafka-dump-log does: entries
that do not match are listed on stderr after everything was dumped ("Mismatches in :FILE",
"Found timestamp mismatch in :FILE", ...). Progress goes to stderr when it is a terminal
(and stdout is not) and there are a few MB to read. Exit status: 0 when everything read is
intact, 1 when something is damaged (still dumped as far as it reads), 2 for bad arguments.
"""


def register(sub) -> None:
    """Add ``dump`` to the command line."""
    d = sub.add_parser(
        "dump",
        help="print batches and records, as kafka-dump-log does, or JSON lines",
        description="Print the contents of log segments (.log, or any file of batches, or a "
        "partition directory), KRaft .checkpoint snapshots, .index, .timeindex, .txnindex, "
        ".snapshot and leader-epoch-checkpoint files.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=EPILOG_DUMP,
    )
    d.add_argument("files", nargs="*", metavar="FILE", help="files or partition directories")
    d.add_argument("--files", dest="files_opt", metavar="F1,F2", help="kafka-dump-log's form")
    d.add_argument("--deep-iteration", action="store_true", help="print every record")
    d.add_argument(
        "--print-data-log", action="store_true", help="print keys and values (implies deep)"
    )
    d.add_argument("--key-decoder", choices=sorted(DECODERS), default="string")
    d.add_argument("--value-decoder", choices=sorted(DECODERS), default="string")
    internal = d.add_mutually_exclusive_group()
    internal.add_argument(
        "--offsets-decoder",
        action="store_const",
        dest="record_decoder",
        const="offsets-decoder",
        help="decode __consumer_offsets records (offset commits, group metadata) as JSON",
    )
    internal.add_argument(
        "--transaction-log-decoder",
        action="store_const",
        dest="record_decoder",
        const="transaction-log-decoder",
        help="decode __transaction_state records as JSON",
    )
    internal.add_argument(
        "--cluster-metadata-decoder",
        action="store_const",
        dest="record_decoder",
        const="cluster-metadata-decoder",
        help="decode KRaft __cluster_metadata records as JSON",
    )
    d.add_argument("--skip-record-metadata", action="store_true")
    d.add_argument(
        "--max-bytes", type=positive_int, help="only the batches within the first N bytes"
    )
    d.add_argument(
        "--index-sanity-check",
        action="store_true",
        help="for .index/.timeindex: only the sanity check the broker makes at start-up",
    )
    d.add_argument(
        "--verify-index-only",
        action="store_true",
        help="for .index/.timeindex: only check the entries against the log, print mismatches",
    )
    d.add_argument(
        "--max-message-size",
        type=positive_int,
        default=DEFAULT_MAX_MESSAGE_SIZE,
        metavar="N",
        help="largest batch an index entry may point at (default 5 MiB, as kafka-dump-log)",
    )
    d.add_argument(
        "--jsonl",
        action="store_true",
        help="one JSON object per line: data records of logs (canonical corpus form), "
        "entries of other files",
    )
    d.add_argument("--batches", action="store_true", help="with --jsonl: batch headers")
    d.add_argument(
        "--isolation",
        choices=["read_uncommitted", "read_committed"],
        default="read_uncommitted",
        help="with --jsonl: drop records of aborted transactions under read_committed",
    )
    d.add_argument("--no-verify-crc", action="store_true", help="with --jsonl: do not check CRCs")
    d.add_argument(
        "--max-decompressed-bytes",
        type=positive_int,
        help="bound on one batch's decompressed size (default 256 MiB)",
    )
    d.add_argument("-q", "--quiet", action="store_true", help="no progress line on stderr")
    d.set_defaults(run=_run_dump, dump_parser=d)


def _run_dump(args: argparse.Namespace) -> int:
    files = list(args.files)
    if args.files_opt:
        files.extend(f for f in args.files_opt.split(",") if f)
    if not files:
        args.dump_parser.error("no FILE given (as arguments or --files F1,F2)")
    decoders_given = (
        args.key_decoder != "string"
        or args.value_decoder != "string"
        or args.record_decoder is not None
    )
    record_decoder = None
    if args.record_decoder is not None:
        from ..messages.internal_topics import DECODERS as INTERNAL_DECODERS

        record_decoder = INTERNAL_DECODERS[args.record_decoder]
    options = DumpOptions(
        deep_iteration=args.deep_iteration,
        print_data_log=args.print_data_log or decoders_given,
        key_decoder=DECODERS[args.key_decoder],
        value_decoder=DECODERS[args.value_decoder],
        skip_record_metadata=args.skip_record_metadata,
        max_bytes=args.max_bytes,
        jsonl=args.jsonl,
        batches=args.batches,
        isolation=args.isolation,
        verify_crc=not args.no_verify_crc,
        max_decompressed_bytes=args.max_decompressed_bytes,
        index_sanity_only=args.index_sanity_check,
        verify_index_only=args.verify_index_only,
        max_message_size=args.max_message_size,
        quiet=args.quiet,
        record_decoder=record_decoder,
    )
    return dump(files, options)
