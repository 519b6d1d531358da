"""``kafka-format find``: the broker's look-up of an offset or a timestamp in a partition dir.

Prints where the answer lies -- segment file, byte position, whether the indexes led there --
then the batch and the record as kafka-dump-log prints them (or one JSON object)::

    Segment: orders-0/00000000000000000120.log (base offset 120)
    Position: 8231 (offset index; 1342 bytes read)
    baseOffset: 130 lastOffset: 139 count: 10 ... position: 8231 CreateTime: ... isvalid: true
    | offset: 135 CreateTime: 1700000000135 keySize: 4 valueSize: 120 sequence: -1 headerKeys: []
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from ..errors import CrcMismatchError, KafkaFormatError
from ..files.names import FileKind, parse_segment_file_name
from ..format.jsonform import batch_json, record_json
from ..log.partition import (
    EARLIEST_TIMESTAMP,
    LATEST_TIMESTAMP,
    MAX_TIMESTAMP,
    LookupResult,
    Partition,
    Segment,
)
from ..read.reader import iter_records
from ..read.sources import is_stream_path, partition_dirs, skipped_itself, spooled
from .args import (
    OFFSET_SPECS,
    UsageError,
    add_owner_filter,
    add_topic_filter,
    owner_target,
    parse_timestamp_spec,
    select_partitions,
)
from .text import DECODERS, DumpOptions, amount, batch_line, record_line

if TYPE_CHECKING:  # pragma: no cover
    from ..messages.coordinator_lookup import KeyOwner


def _iso(ms: int | None) -> str:
    if ms is None or ms < 0:
        return "no timestamp"
    try:
        return datetime.fromtimestamp(ms / 1000, tz=UTC).isoformat(timespec="milliseconds")
    except (OverflowError, OSError, ValueError):
        return "out of range"


def open_partition(path: str) -> Partition:
    """A partition directory, or one segment file (the partition reduced to it, with the
    .index and .timeindex beside it if there are any); a log dir of many gets a clear error
    naming a few."""
    if os.path.isfile(path):
        return _one_segment(path)
    partition = Partition.open(path)
    if not partition.segments:
        subs = partition_dirs(Path(path))
        if subs:
            # find looks in one partition: naming many is the command line's fault (exit 2)
            names = ", ".join(p.name for p in subs[:5]) + (", ..." if len(subs) > 5 else "")
            raise UsageError(
                f"a log directory, not a partition directory: give one of {names}, or "
                "--topic and --partition naming one",
                file=path,
            )
        raise KafkaFormatError("no .log segments in this directory", file=path)
    return partition


def _one_segment(path: str) -> Partition:
    """A segment file alone: its partition directory's listing kept to it, so that its own
    indexes lead the look-ups; any other file of batches is one segment without indexes,
    scanned (its base offset from its name, else 0)."""
    file = Path(path)
    if skipped_itself(path):
        raise KafkaFormatError(
            "not a live segment (the broker's rules keep .deleted, .cleaned, .swap files and "
            "-delete, -future, -stray directories from being read)",
            file=path,
        )
    parsed = parse_segment_file_name(file.name)
    if parsed is not None and parsed.kind is FileKind.LOG:
        partition = Partition.open(file.parent)
        partition.segments = [s for s in partition.segments if Path(s.log).name == file.name]
        if partition.segments:
            return partition
    segment = Segment(
        base_offset=parsed.base_offset if parsed is not None else 0,
        log=file,
        index=None,
        timeindex=None,
        txnindex=None,
        size=file.stat().st_size,
    )
    return Partition(
        path=file.parent,
        topic=None,
        partition=None,
        segments=[segment],
        snapshots=[],
        leader_epoch_checkpoint=None,
    )


def _print_latest(partition: Partition, jsonl: bool, out: TextIO) -> int:
    """``--timestamp latest``: ListOffsets' answer is the log end offset, where no record is
    yet; there is nothing more to show."""
    end = partition.list_offset(LATEST_TIMESTAMP)
    if jsonl:
        out.write(json.dumps({"spec": "latest", "offset": end}, separators=(",", ":")) + "\n")
    else:
        out.write(f"Latest: offset {end} (the log end offset: the next record's offset)\n")
    return 0


def _not_found(partition: Partition, offset: int | None, timestamp: int | None) -> str:
    start, end = partition.log_start_offset, partition.log_end_offset()
    if timestamp == MAX_TIMESTAMP:
        return "no record with a timestamp (magic 0 records have none)"
    if offset is not None:
        if start is not None and offset < start:
            return f"offset {offset} is below the log start offset {start}"
        return (
            f"no record at or after offset {offset}: the log ends before offset {end} "
            f"(log start offset {start})"
        )
    largest = max((partition.largest_timestamp(s) for s in partition.segments), default=-1)
    return (
        f"no record with a timestamp >= {timestamp} ({_iso(timestamp)}): the largest "
        f"timestamp in the log is {largest} ({_iso(largest)})"
    )


def describe(
    result: LookupResult,
    options: DumpOptions,
    *,
    offset: int | None = None,
    file: str | None = None,
) -> list[str]:
    """The text lines for a result; ``offset`` is the one asked for (None for a timestamp),
    ``file`` the segment's name where it is not its path (a pipe read into a copy)."""
    requested = "the timestamp" if offset is None else f"offset {offset}"
    how = (
        "offset index" + (" and time index" if offset is None else "")
        if result.used_index
        else "scanned from the start of the segment"
        + (f": {result.index_note}" if result.index_note else "")
    )
    lines = [
        f"Segment: {file or result.segment.log} (base offset {result.segment.base_offset})",
        f"Position: {result.position} ({how}; {result.stats.bytes_read} bytes read, "
        f"{amount(result.stats.batches_scanned, 'batch', 'batches')} looked at)",
        batch_line(result.batch, result.position),
    ]
    record = result.record
    if record is None:
        lines.append(f"No record at or after {requested} in this batch, and no batch after it.")
        return lines
    if offset is not None and record.offset != offset:
        lines.append(
            f"Note: {requested} is not in the log (removed by compaction?); the next record "
            f"is at offset {record.offset}."
        )
    lines.append(record_line(result.batch, record, options))
    return lines


def as_json(result: LookupResult, *, file: str | None = None) -> dict:
    record = result.record
    segment = file or str(result.segment.log)
    out: dict = {
        "topic": result.batch.topic,
        "partition": result.batch.partition,
        "file": segment,
        "segment": segment,
        "segmentBaseOffset": result.segment.base_offset,
        "position": result.position,
        "usedIndex": result.used_index,
        "indexNote": result.index_note,
        "bytesRead": result.stats.bytes_read,
        "bytesScanned": result.stats.bytes_scanned,
        "batchesScanned": result.stats.batches_scanned,
        "batch": batch_json(result.batch),
        "record": record_json(record) if record is not None else None,
    }
    if record is not None and record.control is not None:
        out["control"] = {
            "type": record.control.type_name,
            "version": record.control.version,
            "coordinatorEpoch": record.control.coordinator_epoch,
        }
    return out


def find(
    path: str,
    *,
    offset: int | None = None,
    timestamp: int | None = None,
    options: DumpOptions | None = None,
    jsonl: bool = False,
    out: TextIO | None = None,
    err: TextIO | None = None,
    owner: KeyOwner | None = None,
) -> int:
    """Look up and print; the exit status: 0 found, 1 not found or the batch is damaged. A
    pipe, a FIFO or ``/dev/stdin`` is read once into a temporary file first, and looked in
    as a file of batches without indexes (its name tells no base offset: 0). With ``owner``
    (``--group``, ``--transactional-id``) the answer is that owner's first record at or
    after the look-up's."""
    if (offset is None) == (timestamp is None):
        raise ValueError("give exactly one of offset and timestamp")
    if is_stream_path(path):
        with spooled(path) as copy:
            try:
                return _find(str(copy), path, offset, timestamp, options, jsonl, out, err, owner)
            except KafkaFormatError as exc:  # named in the copy's name: give it the pipe's
                if exc.file == str(copy):
                    exc.file = path
                raise
    return _find(path, path, offset, timestamp, options, jsonl, out, err, owner)


def _find(
    path: str,
    name: str,
    offset: int | None,
    timestamp: int | None,
    options: DumpOptions | None,
    jsonl: bool,
    out: TextIO | None,
    err: TextIO | None,
    owner: KeyOwner | None = None,
) -> int:
    """:func:`find` in ``path``, which the output calls ``name``."""
    out = out or sys.stdout
    err = err or sys.stderr
    options = options or DumpOptions()
    partition = open_partition(path)
    if timestamp == LATEST_TIMESTAMP:
        return _print_latest(partition, jsonl, out)
    if timestamp == EARLIEST_TIMESTAMP:
        offset, timestamp = partition.list_offset(EARLIEST_TIMESTAMP), None
    if offset is not None:
        result = partition.find_offset(offset)
    elif timestamp == MAX_TIMESTAMP:
        result = partition.find_max_timestamp()
    else:
        result = partition.find_timestamp(timestamp)
    if result is None:
        why = _not_found(partition, offset, timestamp)
        if os.path.isfile(path):
            why = why.replace("the log start offset", "the segment's base offset")
            why = why.replace("the log ends", "the segment ends")
            why = why.replace("(log start offset", "(base offset")
        err.write(f"kafka-format find: error: {name}: {why}\n")
        return 1
    looked_up = result.record.offset if result.record is not None else None
    if owner is not None and looked_up is not None and not owner.owns(result.record.key):
        owned = _owners_next(path, looked_up, owner)
        if owned is None:
            err.write(
                f"kafka-format find: error: {name}: no record of {owner.owner!r} at or after "
                f"offset {looked_up}, where the look-up led\n"
            )
            return 1
        result = partition.find_offset(owned)
        if result is None or result.record is None:  # the scan read it: the look-up must
            err.write(f"kafka-format find: error: {name}: offset {owned} not found again\n")
            return 1
        if not jsonl:
            out.write(
                f"Note: the look-up led to offset {looked_up}; the first record of "
                f"{owner.owner!r} from there is at offset {owned}.\n"
            )
    shown = None if name == path else name
    if jsonl:
        out.write(json.dumps(as_json(result, file=shown), separators=(",", ":")) + "\n")
    else:
        out.write("\n".join(describe(result, options, offset=offset, file=shown)) + "\n")
    batch = result.batch
    if batch.crc_valid is False:
        # the line every command gives this damage (dump, stats, verify, inspect)
        damage = CrcMismatchError(
            batch.crc,
            batch.computed_crc,
            algorithm="crc32c" if batch.magic >= 2 else "crc32",
            file=shown or batch.file,
            position=result.position,
            base_offset=batch.base_offset,
        )
        err.write(f"error: {damage}\n")
        return 1
    return 0


def _owners_next(path: str, offset: int, owner: KeyOwner) -> int | None:
    """The offset of ``owner``'s first record at or after ``offset`` (the reader's range
    read: the indexes lead to the start), None when there is none."""
    for record in iter_records(path, start_offset=offset, errors="skip"):
        if record.control is None and owner.owns(record.key):
            return record.offset
    return None


EPILOG_FIND = """\
examples:
  kafka-format find /var/lib/kafka/orders-0 --offset 123456
  kafka-format find orders-0 --timestamp 1714564800000
  kafka-format find orders-0 --timestamp 2024-05-01T12:00:00Z --print-data-log
  kafka-format find orders-0 --offset 42 --jsonl | jq .record
  kafka-format find orders-0 --timestamp max-timestamp    # also latest, earliest; -3, -1, -2
  kafka-format find orders-0/00000000000000000120.log --offset 135   # one segment file
  kafka-format find /var/lib/kafka --topic orders --partition 0 --offset 42
  kafka-format find /var/lib/kafka --group orders-app --timestamp 2024-05-01T12:00:00Z

The offset look-up picks the segment by base offset, the largest .index entry <= the offset,
and reads batch headers from there (the broker's fetch path). The timestamp look-up picks the
first segment whose largest timestamp reaches the target, then .timeindex, .index and a scan
(the broker's ListOffsets path): the answer is the first record with timestamp >= the target,
and the search ends with that segment, as the broker's does (a segment without timestamps,
magic 0, counts its file's modification time as its largest timestamp).
A missing or damaged index is reported and the segment scanned from its start instead.
PATH may be - (standard input), a FIFO or /dev/stdin: it is read once into a temporary file
in $TMPDIR and looked in as a file of batches without indexes (base offset 0).
Exit status: 0 found, 1 nothing found (or a damaged batch), 2 bad arguments (a log dir
without --topic and --partition naming one partition among them).
"""


def register(sub) -> None:
    """Add ``find`` to the command line."""
    f = sub.add_parser(
        "find",
        help="find the batch and record at an offset or timestamp, through the indexes",
        description="Look up an offset or a timestamp in a partition directory (topic-N) "
        "the way the broker does, and print the segment, byte position, batch and record.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=EPILOG_FIND,
    )
    f.add_argument(
        "directory",
        metavar="PATH",
        help="a partition directory (topic-N), one segment file, or a log dir with --topic "
        "and --partition naming one partition",
    )
    what = f.add_mutually_exclusive_group(required=True)
    what.add_argument("--offset", type=int, metavar="N", help="the record at offset N (or next)")
    what.add_argument(
        "--timestamp",
        type=parse_timestamp_spec,
        metavar="T",
        help="the first record with timestamp >= T (epoch ms or ISO-8601; no zone = UTC); "
        f"or, as kafka-get-offsets: {', '.join(f'{w} ({n})' for w, n in OFFSET_SPECS.items())}",
    )
    f.add_argument("--jsonl", action="store_true", help="print one JSON object")
    f.add_argument("--print-data-log", action="store_true", help="print the record's key and value")
    f.add_argument("--key-decoder", choices=sorted(DECODERS), default="string")
    f.add_argument("--value-decoder", choices=sorted(DECODERS), default="string")
    add_topic_filter(f)
    add_owner_filter(f)
    f.set_defaults(run=_run_find)


def _run_find(args: argparse.Namespace) -> int:
    options = DumpOptions(
        deep_iteration=True,
        print_data_log=args.print_data_log,
        key_decoder=DECODERS[args.key_decoder],
        value_decoder=DECODERS[args.value_decoder],
    )
    try:
        chosen = select_partitions([args.directory], args.topic, args.partition)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if len(chosen) != 1:
        names = ", ".join(Path(p).name for p in chosen[:5]) + (", ..." if len(chosen) > 5 else "")
        raise UsageError(
            f"--topic/--partition select {len(chosen)} partitions ({names}); find looks in one",
            file=args.directory,
        )
    chosen, owner = owner_target(args, chosen)
    if owner is not None:
        from ..messages.internal_topics import offsets_decoder, transaction_log_decoder

        options.record_decoder = (
            offsets_decoder if args.group is not None else transaction_log_decoder
        )
        options.print_data_log = True
    return find(
        chosen[0],
        offset=args.offset,
        timestamp=args.timestamp,
        options=options,
        jsonl=args.jsonl,
        owner=owner,
    )
