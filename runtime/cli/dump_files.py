"""``kafka-format dump`` of the files beside a log: ``.index``, ``.timeindex``, ``.txnindex``,
producer ``.snapshot`` and ``leader-epoch-checkpoint``, as kafka-dump-log prints them; the log dir's
offset checkpoints and ``partition.metadata`` with their meaning; the other text files of a
data directory (``meta.properties``, ``quorum-state``) as kafka-dump-log answers for a file it
does not know: ``Ignoring unknown file FILE``.

An ``.index`` / ``.timeindex`` is checked against the ``.log`` beside it (the checks are
``verify``'s); what does not match goes into the :class:`~.dump_result.DumpResult`, printed
after every file was dumped.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable
from itertools import accumulate
from pathlib import Path
from typing import TextIO

from ..analysis.verify import (
    FileReport,
    ScannedLog,
    check_offset_index,
    check_time_index,
    decode_max_timestamps,
    scan_headers,
)
from ..errors import KafkaFormatError
from ..files.checkpoints import (
    read_leader_epoch_checkpoint,
    read_offset_checkpoint,
    read_partition_metadata,
)
from ..files.indexes import OffsetIndex, TimeIndex
from ..files.names import FileKind, parse_segment_file_name
from ..files.snapshot import read_producer_snapshot
from ..files.txnindex import TransactionIndex
from ..model import decrement_sequence
from ..progress import Progress
from .dump_result import DumpResult, absolute
from .text import DumpOptions, optional_long


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
        out.write(
            json.dumps({"file": path, "passedSanityCheck": problem is None}, separators=(",", ":"))
            + "\n"
        )
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
    mismatches = result.index_mismatches.setdefault(absolute(path), [])
    for problem_found in report.problems:
        if problem_found.check == "index-sanity":
            continue  # printed above, from our own opening
        pair = None
        if problem_found.check == "index-entry" and problem_found.position is not None:
            rel, position = entries[problem_found.position // OffsetIndex.ENTRY_SIZE]
            batch = log.at_position(position)
            pair = (base + rel, batch.last_offset) if batch is not None else None
        if pair is None and problem_found.severity == "error":
            err.write(problem_found.line() + "\n")
        if problem_found.severity == "error":
            result.errors.append(problem_found.line())
    # Kafka's words and rule (DumpLogSegments.dumpIndex): every entry whose batch does not end
    # at its offset is listed, also those of whole appends verify finds consistent (the
    # cleaner's, a follower's multi-batch appends), which fail nothing.
    for rel, position in entries:
        batch = log.at_position(position)
        if batch is not None and batch.last_offset != base + rel:
            mismatches.append((base + rel, batch.last_offset))
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
        del result.index_mismatches[absolute(path)]
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
    key = absolute(path)
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
        f"currentTxnFirstOffset: {optional_long(row['currentTxnFirstOffset'])} "
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


def dump_unknown(
    path: str,
    options: DumpOptions,
    out: TextIO,
    err: TextIO,
    progress: Progress | None = None,
) -> DumpResult:
    """kafka-dump-log's answer for a file its suffix switch does not know (on stderr)."""
    if not os.path.exists(path):
        raise KafkaFormatError("no such file or directory", file=path)
    err.write(f"Ignoring unknown file {path}\n")
    return DumpResult()


def dump_offset_checkpoint(
    path: str,
    options: DumpOptions,
    out: TextIO,
    err: TextIO,
    progress: Progress | None = None,
) -> DumpResult:
    """``recovery-point-offset-checkpoint`` and its siblings (``OffsetCheckpointFile``): one
    line a partition, in the file's order."""
    rows = (
        {"topic": tp.topic, "partition": tp.partition, "offset": offset}
        for tp, offset in read_offset_checkpoint(path).items()
    )
    _emit(
        rows,
        lambda r: f"topic: {r['topic']} partition: {r['partition']} offset: {r['offset']}",
        options.jsonl,
        out,
    )
    return DumpResult()


def dump_partition_metadata(
    path: str,
    options: DumpOptions,
    out: TextIO,
    err: TextIO,
    progress: Progress | None = None,
) -> DumpResult:
    """``partition.metadata`` (``PartitionMetadataFile``): its version and topic id."""
    meta = read_partition_metadata(path)
    row = {"version": meta.version, "topicId": meta.topic_id}
    _emit([row], lambda r: f"version: {r['version']} topicId: {r['topicId']}", options.jsonl, out)
    return DumpResult()
