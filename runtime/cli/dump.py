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
import dataclasses
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TextIO

from ..errors import CrcMismatchError, KafkaFormatError
from ..files import kinds
from ..files.names import FileKind, parse_kraft_snapshot_name, parse_segment_file_name
from ..model import Batch, Report
from ..progress import Progress, wanted
from ..read.ranges import Range
from ..read.reader import iter_batches
from ..read.sources import Source, resolve
from .args import (
    UsageError,
    add_owner_filter,
    add_threads,
    add_topic_filter,
    decoder_class,
    kcat_offset,
    non_negative_int,
    owner_target,
    positive_int,
    range_bound,
    select_partitions,
    threaded,
)
from .dump_committed import Shows, committed_view, counted, owned
from .dump_files import (
    base_offset_of,
    dump_index,
    dump_leader_epochs,
    dump_offset_checkpoint,
    dump_partition_metadata,
    dump_snapshot,
    dump_time_index,
    dump_txn_index,
    dump_unknown,
    log_beside,
)
from .dump_jsonl import dump_counted_jsonl, range_bounds, tracked
from .dump_payloads import PAYLOAD_KINDS, add_schema_registry_argument, decoders_for
from .dump_result import DumpResult, absolute, print_reports
from .kcat import add_kcat_arguments, kcat_output
from .stdio import pipe_closed
from .text import (
    BOOTSTRAP_SNAPSHOT,
    DECODERS,
    DEFAULT_MAX_MESSAGE_SIZE,
    DumpOptions,
    batch_line,
    record_line,
)

__all__ = [
    "DumpOptions",
    "DumpResult",
    "base_offset_of",
    "batch_line",
    "dump",
    "dump_index",
    "dump_leader_epochs",
    "dump_log",
    "dump_snapshot",
    "dump_time_index",
    "dump_txn_index",
    "dumper_for",
    "log_beside",
    "print_reports",
    "record_line",
]


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
    kafka-dump-log prints it. A directory's segments are dumped one by one, each after its
    own ``Dumping FILE`` and ``Log starting offset: N`` lines, as kafka-dump-log prints them
    when given the files: a batch's ``position:`` can then be found again."""
    return _dump_counted(path, options, out, err, progress)[0]


def _dump_counted(
    path: str,
    options: DumpOptions,
    out: TextIO,
    err: TextIO,
    progress: Progress | None = None,
) -> tuple[DumpResult, int]:
    """:func:`dump_log`, and the records it printed, when a range counts them (else 0)."""
    if options.jsonl:
        return dump_counted_jsonl(path, options, out, err, progress)
    # --isolation read_committed: the batches a read_committed consumer receives records of
    source, name, shows = committed_view(path, options)
    if options.range is not None:
        return _dump_ranged(path, options, out, err, progress, source, name, shows)
    result = DumpResult()
    if not os.path.isdir(path):
        _dump_one_log(path, options, out, err, progress, result, source, name, shows)
        return result, 0
    for log in resolve(path):
        out.write(f"Dumping {log.name}\n")
        _dump_one_log(log.name, options, out, err, progress, result, shows=shows)
        if _unread_damage(out, result):
            break
    return result, 0


def _unread_damage(out: TextIO, result: DumpResult) -> bool:
    """Whether the dump may stop: no one reads stdout any more (| head) and the verdict is
    already damage, which nothing later can undo. A verdict still healthy is read to its
    end (the exit status must say whether the log is)."""
    return pipe_closed(out) and not result.ok


def _dump_ranged(
    path: str,
    options: DumpOptions,
    out: TextIO,
    err: TextIO,
    progress: Progress | None,
    source: Source | None = None,
    name: str | None = None,
    shows: Shows = None,
) -> tuple[DumpResult, int]:
    """The batches of a range, each segment after its ``Dumping FILE`` and ``Log starting
    offset`` lines (a lone file's ``Dumping`` line is the caller's); the batches overlapping
    the range, and with ``--deep-iteration`` only the records in it."""
    result = DumpResult()
    report = Report()
    deep = options.deep_iteration or options.print_data_log
    counting = options.range is not None and options.range.max_records is not None
    bounds = range_bounds(options)
    limit = bounds.pop("max_records") if shows is not None else None
    batches = iter_batches(
        path if source is None else source,
        records=deep or counting,
        verify_crc="report",
        errors=options.errors,
        report=report,
        name=name,
        **_max_bytes(options),
        **bounds,
    )
    if shows is not None and limit is not None:
        batches = counted(batches, shows, limit)
    current: str | None = None
    last_offset: int | None = None
    printed = reported = 0
    for batch in owned(tracked(batches, progress), options):
        if batch.file != current:
            current = batch.file or path
            if os.path.isdir(path):
                out.write(f"Dumping {current}\n")
            header = _log_header(current)
            if header is not None:
                out.write(header + "\n")
        if options.max_bytes is not None and batch.position + batch.size > options.max_bytes:
            err.write(
                f"note: {current}: --max-bytes {options.max_bytes} stops before the batch at "
                f"position {batch.position} ({batch.size} bytes)\n"
            )
            break
        reported += _print_batch(batch, current, options, out, err, result, shows)
        if shows is not None and not shows(batch):
            continue
        if batch.records and not batch.is_control:
            printed += len(batch.records)
        if deep and batch.records:
            last_offset = _print_records(batch, current, last_offset, options, out, result)
        if _unread_damage(out, result):
            break
    _report_tail_and_errors(report, options, out, err, result, already=reported)
    return result, printed


def _print_batch(
    batch: Batch,
    path: str,
    options: DumpOptions,
    out: TextIO,
    err: TextIO,
    result: DumpResult,
    shows: Shows = None,
) -> int:
    """The batch's line (unless read_committed hides it), and its damage on stderr, shown or
    not (the verdict is the log's); 1 when the damage was the reader's."""
    if (shows is None or shows(batch)) and not pipe_closed(out):  # no one reads: not built
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
    return int(batch.error is not None)


def _print_records(
    batch: Batch,
    path: str,
    last_offset: int | None,
    options: DumpOptions,
    out: TextIO,
    result: DumpResult,
) -> int | None:
    """The batch's record lines, noting where offsets are not consecutive; the last offset."""
    unread = pipe_closed(out)  # the gaps are still said, on stderr; the lines not built
    for record in batch.records or ():
        if last_offset is not None and record.offset != last_offset + 1:
            gaps = result.non_consecutive.setdefault(absolute(batch.file or path), [])
            gaps.append((last_offset, record.offset))
        last_offset = record.offset
        if not unread:
            out.write(record_line(batch, record, options) + "\n")
    return last_offset


def _dump_one_log(
    path: str,
    options: DumpOptions,
    out: TextIO,
    err: TextIO,
    progress: Progress | None,
    result: DumpResult,
    source: Source | None = None,
    name: str | None = None,
    shows: Shows = None,
) -> None:
    report = Report()
    header = _log_header(path)
    if header is not None:
        out.write(header + "\n")
    deep = options.deep_iteration or options.print_data_log
    last_offset: int | None = None
    reported = 0  # errors of iter_batches' report printed with their batch
    batches = iter_batches(
        path if source is None else source,
        records=deep,
        verify_crc="report",
        errors=options.errors,
        report=report,
        name=name,
        **_max_bytes(options),
    )
    for batch in owned(tracked(batches, progress), options):
        if options.max_bytes is not None and batch.position + batch.size > options.max_bytes:
            # kafka-dump-log stops there silently (DumpLogSegments.printTrailingBytes prints
            # nothing under --max-bytes); say on stderr where and why the dump stopped.
            err.write(
                f"note: {path}: --max-bytes {options.max_bytes} stops before the batch at "
                f"position {batch.position} ({batch.size} bytes)\n"
            )
            break
        reported += _print_batch(batch, path, options, out, err, result, shows)
        if deep and batch.records and (shows is None or shows(batch)):
            last_offset = _print_records(batch, path, last_offset, options, out, result)
        if _unread_damage(out, result):
            break
    _report_tail_and_errors(report, options, out, err, result, already=reported)


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


Dumper = Callable[..., DumpResult]


# Every kind of file has its dumper here (tests/files/test_kinds.py holds the registry to it).
kinds.register(kinds.LOG, dumper=dump_log)
kinds.register(kinds.INDEX, dumper=dump_index)
kinds.register(kinds.TIME_INDEX, dumper=dump_time_index)
kinds.register(kinds.TXN_INDEX, dumper=dump_txn_index)
kinds.register(kinds.PRODUCER_SNAPSHOT, dumper=dump_snapshot)
kinds.register(kinds.LEADER_EPOCH_CHECKPOINT, dumper=dump_leader_epochs)
# tiered storage's per-segment copy: the same format under another name
kinds.register(kinds.REMOTE_LEADER_EPOCH_CHECKPOINT, dumper=dump_leader_epochs)
kinds.register(kinds.PARTITION_METADATA, dumper=dump_partition_metadata)
kinds.register(kinds.OFFSET_CHECKPOINT, dumper=dump_offset_checkpoint)
kinds.register(kinds.UNKNOWN, dumper=dump_unknown)


def dumper_for(path: str) -> Dumper:
    """Pick the dumper by the file's kind (``files.kinds.classify``: its name, else its
    suffix), as kafka-dump-log does; anything else is read as batches (KRaft ``.checkpoint``
    snapshots, and any file of batches)."""
    kind = kinds.classify(Path(path).name)
    return kinds.role(kind if kind is not None else kinds.LOG, "dumper")


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


def _fewer(options: DumpOptions, printed: int) -> DumpOptions:
    """The options for the next path: ``-c`` counts the records of every path together."""
    rng = options.range
    if rng is None or rng.max_records is None:
        return options
    left = dataclasses.replace(rng, max_records=max(rng.max_records - printed, 0))
    return dataclasses.replace(options, range=left)


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
            if pipe_closed(out) and (status or not everything.ok):
                break  # no one reads on, and the verdict is damage whatever follows
            if not options.jsonl and not (dumper_for(path) is dump_log and os.path.isdir(path)):
                # A directory's segments each get their own line (dump_log).
                out.write(f"Dumping {path}\n")
            try:
                dumper = dumper_for(path)
                if options.range is not None and dumper is dump_log:
                    result, printed = _dump_counted(path, options, out, messages, progress)
                    options = _fewer(options, printed)
                else:
                    result = dumper(path, options, out, messages, progress)
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
  kafka-format dump /var/lib/kafka/orders-0        # each segment after its "Dumping FILE" line
  kafka-format dump --deep-iteration --print-data-log --value-decoder json orders-0/*.log
  kafka-format dump --value-decoder-class kafka.serializer.StringDecoder --files a.log,b.log
  kafka-format dump --jsonl --isolation read_committed /var/lib/kafka/orders-0 > orders.jsonl
  kafka-format dump --jsonl --value-decoder string orders-0   # values as text, not base64
  kafka-format dump --jsonl --batches 00000000000000000000.log     # batch headers as JSON
  cat 00000000000000000000.log | kafka-format dump --jsonl -   # standard input, FIFOs too
  kafka-format dump --jsonl --salvage damaged-0 > rescued.jsonl   # every intact batch
  kafka-format dump recovery-point-offset-checkpoint orders-0/partition.metadata
  kafka-format dump 00000000000000000000.index 00000000000000000000.timeindex
  kafka-format dump --verify-index-only orders-0/*.index orders-0/*.timeindex
  kafka-format dump --index-sanity-check orders-0/*.index
  kafka-format dump --offsets-decoder __consumer_offsets-12/00000000000000000000.log
  kafka-format dump --cluster-metadata-decoder __cluster_metadata-0/*.log
  kafka-format dump --remote-log-metadata-decoder __remote_log_metadata-3
  kafka-format dump --jsonl --share-group-state-decoder __share_group_state-7
  kafka-format dump --group orders-app /var/lib/kafka   # its __consumer_offsets partition
  kafka-format dump --jsonl --transactional-id payments-tx /var/lib/kafka

ranges (kcat's -o and -c; per partition; text, --batches or --jsonl):
  kafka-format dump --jsonl -o 123456 -c 100 orders-0          # 100 records from offset 123456
  kafka-format dump --jsonl -o -10 --topic 'orders*' /var/lib/kafka   # the last 10 of each
  kafka-format dump --deep-iteration -o s@1714564800000 -o e@1714568400000 orders-0
  kafka-format dump --jsonl --from 2024-05-01T12:00:00Z --to @1714568400000 orders-0
  kafka-format dump --jsonl --from 5000 --to 6000 orders-0     # offsets [5000, 6000)
  kafka-format dump --jsonl --topic orders --partition 0 /var/lib/kafka

kcat's output (-f, -J, -s, -Z; same ranges and filters; see kcat's options below):
  kafka-format dump -f '%t [%p] @%o %T: %k=%s (%h)\\n' -o -5 /var/lib/kafka/orders-0
  kafka-format dump -J --binary base64 --isolation read_committed orders-0 | jq .payload
  kafka-format dump -f '%k %s\\n' -s key=i -s value='>q' counters-0   # big-endian ints
  kafka-format dump -f '%R%s' orders-0 > values.bin     # each value after its int32 length

-o takes an offset, -N (N offsets before each partition's end), s@<ms> (from the first record
with timestamp >= ms), e@<ms> (before the first record with timestamp >= ms), beginning or end;
`stored` is refused: it is a consumer group's offset, which no log holds. -c counts records of
all partitions together, as kcat does. A time bound becomes an offset, as offsetsForTimes
answers it: the range is a run of offsets, whatever order timestamps have in it. The .index and
.timeindex lead to the start; batch lines show the batches overlapping the range, record lines
and JSON lines only the records in it.
--jsonl lines hold the corpus's canonical fields, then "topic", "partition", "file" and
"position" (the byte position of the record's batch): where to find it again (--canonical
leaves these out).
An .index or .timeindex is checked against the .log beside it, as kafka-dump-log does: entries
that do not match are listed on stderr after everything was dumped ("Mismatches in :FILE",
"Found timestamp mismatch in :FILE", ...). Progress goes to stderr when it is a terminal
(and stdout is not) and there are a few MB to read. Exit status: 0 when everything read is
intact, 1 when something is damaged (still dumped as far as it reads), 2 for bad arguments;
the same when stdout is closed early (| head): the dump stops there if it has met damage,
else it reads on, printing nothing more, to its verdict.
FILE may be - (standard input), a FIFO or /dev/stdin: read as a stream, frame by frame
(held in memory with --isolation read_committed, --salvage or a range, which read it more
than once or look ahead).
--isolation read_committed shows in every output of a log only what a read_committed
consumer receives: the batches (text, --batches) and records of committed and
non-transactional data, none of aborted transactions, no markers, nothing at or past the
last stable offset; -c counts those records. Damage in what it hides is still reported.
A log is read up to framing damage (a broken length or magic: nothing after it can be framed
by its lengths); --salvage reports that damage and goes on at the next whole batch whose CRC
holds, to the end of the file, so that every intact batch of a damaged log is dumped.
"""


def register(sub) -> None:
    """Add ``dump`` to the command line."""
    d = sub.add_parser(
        "dump",
        help="print batches and records, as kafka-dump-log does, or JSON lines",
        description="Print the contents of log segments (.log, or any file of batches, or a "
        "partition directory), KRaft .checkpoint snapshots, .index, .timeindex, .txnindex, "
        ".snapshot and leader-epoch-checkpoint files. The text follows kafka-dump-log as of "
        "Kafka 4.1 (tools/DumpLogSegments.java: leader changes as 'LeaderChange: {json}').",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=EPILOG_DUMP,
    )
    d.add_argument("files", nargs="*", metavar="FILE", help="files or partition directories")
    d.add_argument("--files", dest="files_opt", metavar="F1,F2", help="kafka-dump-log's form")
    d.add_argument("--deep-iteration", action="store_true", help="print every record")
    d.add_argument(
        "--print-data-log", action="store_true", help="print keys and values (implies deep)"
    )
    d.add_argument(
        "--key-decoder",
        choices=sorted([*DECODERS, *PAYLOAD_KINDS]),
        help="how keys are printed (default string); with --jsonl: text instead of base64",
    )
    d.add_argument(
        "--value-decoder",
        choices=sorted([*DECODERS, *PAYLOAD_KINDS]),
        help="how values are printed (default string); with --jsonl: text instead of base64",
    )
    add_schema_registry_argument(d)
    for part in ("key", "value"):
        d.add_argument(
            f"--{part}-decoder-class",
            nargs="?",
            const="kafka.serializer.StringDecoder",
            metavar="CLASS",
            help=f"kafka-dump-log's form: kafka.serializer.StringDecoder (the default), "
            f"DefaultDecoder (as hex), IntegerDecoder, LongDecoder; sets the {part} decoder",
        )
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
    internal.add_argument(
        "--remote-log-metadata-decoder",
        action="store_const",
        dest="record_decoder",
        const="remote-log-metadata-decoder",
        help="decode tiered storage's __remote_log_metadata records (as kafka-dump-log: the "
        "metadata's toString; JSON with --jsonl)",
    )
    internal.add_argument(
        "--share-group-state-decoder",
        action="store_const",
        dest="record_decoder",
        const="share-group-state-decoder",
        help="decode __share_group_state records (KIP-932 share groups) as JSON",
    )
    d.add_argument(
        "--skip-record-metadata",
        action="store_true",
        help="print no metadata for each record and control record (lines start '| key:' or "
        "'| payload:')",
    )
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
        "--canonical",
        action="store_true",
        help="with --jsonl: the corpus's canonical fields only, without topic, partition, "
        "file and position (byte for byte the form of the corpus's .jsonl files)",
    )
    d.add_argument(
        "--isolation",
        choices=["read_uncommitted", "read_committed"],
        default="read_uncommitted",
        help="read_committed: only what a read_committed consumer receives, in every output "
        "of a log (the records, or the batches holding them: none of aborted transactions, "
        "no markers, nothing at or past the last stable offset)",
    )
    d.add_argument("--no-verify-crc", action="store_true", help="with --jsonl: do not check CRCs")
    d.add_argument(
        "--max-decompressed-bytes",
        type=positive_int,
        help="bound on one batch's decompressed size (default 256 MiB)",
    )
    d.add_argument(
        "--salvage",
        action="store_true",
        help="for logs: read on past framing damage, at the next whole batch whose CRC holds",
    )
    d.add_argument("-q", "--quiet", action="store_true", help="no progress line on stderr")
    add_owner_filter(d)
    ranges = d.add_argument_group(
        "ranges, per partition, as kcat's -o and -c (logs only; see the examples)"
    )
    ranges.add_argument(
        "-o",
        "--offset",
        dest="kcat_offsets",
        type=kcat_offset,
        action="append",
        metavar="SPEC",
        help="where to start: <offset>, -N (N before the end of each partition), s@<ms> "
        "(the first record with timestamp >= ms), beginning, end; e@<ms> ends the range "
        "before the first record with timestamp >= ms (repeatable: -o s@A -o e@B)",
    )
    ranges.add_argument(
        "-c",
        "--count",
        type=non_negative_int,
        metavar="N",
        help="stop after N records in all (kcat's -c: not per partition)",
    )
    ranges.add_argument(
        "--from",
        dest="range_from",
        type=range_bound,
        metavar="X",
        help="start at offset X, or at the first record with timestamp >= X (@<ms> or "
        "ISO-8601, e.g. 2024-01-01T00:00:00Z)",
    )
    ranges.add_argument(
        "--to",
        dest="range_to",
        type=range_bound,
        metavar="X",
        help="end before offset X, or before the first record with timestamp >= X",
    )
    add_kcat_arguments(d)
    add_topic_filter(d)
    add_threads(d, "with --jsonl")
    d.set_defaults(run=threaded(_run_dump), dump_parser=d)


def range_of(args: argparse.Namespace) -> Range | None:
    """The range ``-o`` / ``-c`` / ``--from`` / ``--to`` ask for; a ValueError of one line
    when a bound is given twice."""
    bounds: dict[str, int] = {}

    def put(name: str, value: int, flag: str) -> None:
        if name in bounds:
            words = name.replace("_", " ")
            raise ValueError(f"{flag}: the {words} is already given (by -o, --from or --to)")
        bounds[name] = value

    for name, value in getattr(args, "kcat_offsets", None) or ():
        if value is not None:
            put(name, value, "-o")
    if getattr(args, "range_from", None) is not None:
        kind, value = args.range_from
        put("start_offset" if kind == "offset" else "start_timestamp", value, "--from")
    if getattr(args, "range_to", None) is not None:
        kind, value = args.range_to
        put("end_offset" if kind == "offset" else "end_timestamp", value, "--to")
    if getattr(args, "count", None) is not None:
        bounds["max_records"] = args.count
    return Range.of(**bounds)


def _run_dump(args: argparse.Namespace) -> int:
    files = list(args.files)
    if args.files_opt:
        files.extend(f for f in args.files_opt.split(",") if f)
    if not files:
        args.dump_parser.error("no FILE given (as arguments or --files F1,F2)")
    try:
        rng = range_of(args)
        files = select_partitions(files, args.topic, args.partition)
        kcat = kcat_output(args, files)  # -f, -J: before --group's own defaults below
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if args.group is not None or args.transactional_id is not None:
        if rng is not None and rng.max_records is not None:
            raise UsageError("-c counts a partition's records, not a group's: leave it out")
        if args.batches:
            raise UsageError("--batches prints whole batches, not a group's records")
    files, key_owner = owner_target(args, files)
    if key_owner is not None:
        if args.record_decoder is None:
            # kafka-dump-log's decoder for the topic: its keys and values are not text
            args.record_decoder = (
                "offsets-decoder" if args.group is not None else "transaction-log-decoder"
            )
        args.deep_iteration = kcat is None
    # As kafka-dump-log: naming a decoder class, even the default one, prints the data.
    classes_given = args.key_decoder_class is not None or args.value_decoder_class is not None
    try:
        if args.key_decoder_class is not None:
            args.key_decoder = decoder_class(args.key_decoder_class)
        if args.value_decoder_class is not None:
            args.value_decoder = decoder_class(args.value_decoder_class)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    decode_keys = args.key_decoder is not None
    decode_values = args.value_decoder is not None
    decoders_given = (
        classes_given or decode_keys or decode_values or args.record_decoder is not None
    )
    record_decoder = None
    if args.record_decoder is not None:
        from ..messages.internal_topics import DECODERS as INTERNAL_DECODERS

        record_decoder = INTERNAL_DECODERS[args.record_decoder]
    key_decoder, value_decoder = decoders_for(
        args.key_decoder, args.value_decoder, args.schema_registry, files, args.quiet
    )
    if kcat is not None:
        kcat.decoding(
            key=key_decoder if decode_keys else None,
            value=value_decoder if decode_values else None,
            record=record_decoder,
        )
    options = DumpOptions(
        deep_iteration=args.deep_iteration,
        print_data_log=args.print_data_log or decoders_given,
        key_decoder=key_decoder,
        value_decoder=value_decoder,
        decode_keys=decode_keys,
        decode_values=decode_values,
        skip_record_metadata=args.skip_record_metadata,
        max_bytes=args.max_bytes,
        jsonl=args.jsonl or kcat is not None,  # kcat's output is of the records --jsonl reads
        batches=args.batches,
        canonical=args.canonical,
        isolation=args.isolation,
        verify_crc=not args.no_verify_crc,
        max_decompressed_bytes=args.max_decompressed_bytes,
        index_sanity_only=args.index_sanity_check,
        verify_index_only=args.verify_index_only,
        max_message_size=args.max_message_size,
        quiet=args.quiet,
        record_decoder=record_decoder,
        range=rng,
        salvage=args.salvage,
        kcat=kcat,
        key_owner=key_owner,
    )
    return dump(files, options)
