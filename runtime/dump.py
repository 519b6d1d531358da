"""``kafka-format dump``: kafka-dump-log's text output, field for field, and JSON lines.

The text lines keep ``DumpLogSegments``' field names and order so that existing greps work::

    baseOffset: 0 lastOffset: 2 count: 3 baseSequence: 0 lastSequence: 2 producerId: 7
    producerEpoch: 0 partitionLeaderEpoch: 0 isTransactional: false isControl: false
    deleteHorizonMs: OptionalLong.empty position: 0 CreateTime: 1700000000002 size: 120
    magic: 2 compresscodec: none crc: 123456 isvalid: true
    | offset: 0 CreateTime: 1700000000000 keySize: 3 valueSize: 5 sequence: 0 headerKeys: []

(each on one line). Other files are dumped by suffix as kafka-dump-log does them.
"""

from __future__ import annotations

import argparse
import base64
import json
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from .checkpoints import LEADER_EPOCH_CHECKPOINT, read_leader_epoch_checkpoint
from .cli import positive_int
from .errors import CrcMismatchError, KafkaFormatError
from .indexes import OffsetIndex, TimeIndex
from .jsonform import batch_json, codec_name, record_json
from .logfiles import FileKind, parse_segment_file_name
from .model import Batch, Record, Report, TimestampType
from .reader import iter_batches, iter_records
from .snapshot import read_producer_snapshot
from .txnindex import TransactionIndex

Decoder = Callable[[bytes], str]


def _string(data: bytes) -> str:
    return data.decode("utf-8", errors="replace")


def _json(data: bytes) -> str:
    try:
        return json.dumps(json.loads(data), separators=(",", ":"), ensure_ascii=False)
    except (ValueError, UnicodeDecodeError):
        return f"<not JSON: {data[:32].hex()}{'…' if len(data) > 32 else ''}>"


DECODERS: dict[str, Decoder] = {
    "string": _string,
    "hex": bytes.hex,
    "base64": lambda data: base64.b64encode(data).decode("ascii"),
    "json": _json,
}


@dataclass(slots=True)
class DumpOptions:
    deep_iteration: bool = False
    print_data_log: bool = False
    key_decoder: Decoder = _string
    value_decoder: Decoder = _string
    skip_record_metadata: bool = False
    max_bytes: int | None = None
    jsonl: bool = False
    batches: bool = False
    isolation: str = "read_uncommitted"
    verify_crc: bool = True
    max_decompressed_bytes: int | None = None


@dataclass(slots=True)
class DumpResult:
    """What went wrong while dumping: decides the exit status."""

    errors: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.errors


def _bool(value: bool) -> str:
    return "true" if value else "false"


def _optional_long(value: int | None) -> str:
    return "OptionalLong.empty" if value is None else f"OptionalLong[{value}]"


def batch_line(batch: Batch, position: int) -> str:
    """One batch as ``DumpLogSegments.printBatchLevel`` prints it."""
    if batch.magic >= 2:
        head = (
            f"baseOffset: {batch.base_offset} lastOffset: {batch.last_offset} "
            f"count: {batch.records_count} baseSequence: {batch.base_sequence} "
            f"lastSequence: {batch.last_sequence} producerId: {batch.producer_id} "
            f"producerEpoch: {batch.producer_epoch} "
            f"partitionLeaderEpoch: {batch.partition_leader_epoch} "
            f"isTransactional: {_bool(batch.is_transactional)} "
            f"isControl: {_bool(batch.is_control)} "
            f"deleteHorizonMs: {_optional_long(batch.delete_horizon_ms)}"
        )
    else:
        head = f"offset: {batch.last_offset}"
    ts_label = TimestampType(batch.timestamp_type).label
    max_ts = -1 if batch.max_timestamp is None else batch.max_timestamp
    valid = batch.crc_valid
    return (
        f"{head} position: {position} {ts_label}: {max_ts} size: {batch.size} "
        f"magic: {batch.magic} compresscodec: {codec_name(batch.codec)} crc: {batch.crc} "
        f"isvalid: {_bool(bool(valid)) if valid is not None else 'unknown'}"
    )


def record_line(batch: Batch, record: Record, options: DumpOptions) -> str:
    """One record as ``DumpLogSegments.dumpLog`` prints it in deep iteration."""
    parts: list[str] = []
    prefix = "| "
    if not options.skip_record_metadata:
        ts = -1 if record.timestamp is None else record.timestamp
        line = (
            f"| offset: {record.offset} {TimestampType(batch.timestamp_type).label}: {ts} "
            f"keySize: {_size(record.key)} valueSize: {_size(record.value)}"
        )
        if batch.magic >= 2:
            seq = -1 if record.sequence is None else record.sequence
            keys = ",".join(h.key for h in record.headers)
            line += f" sequence: {seq} headerKeys: [{keys}]"
        else:
            line += f" isValid: {_bool(bool(record.crc_valid))} crc: {record.crc}"
        if record.control is not None:
            marker = record.control
            if marker.coordinator_epoch is not None:
                line += (
                    f" endTxnMarker: {marker.type_name} "
                    f"coordinatorEpoch: {marker.coordinator_epoch}"
                )
            else:
                line += f" controlType: {marker.type_name}({marker.type})"
        parts.append(line)
        prefix = " "
    if options.print_data_log and not batch.is_control:
        if record.key is not None:
            parts.append(f"{prefix}key: {options.key_decoder(record.key)}")
            prefix = " "
        if record.value is not None:
            parts.append(f" payload: {options.value_decoder(record.value)}")
    return "".join(parts)


def _size(data: bytes | None) -> int:
    return -1 if data is None else len(data)


def dump_log(path: str, options: DumpOptions, out: TextIO, err: TextIO) -> DumpResult:
    """A log (or any file of batches, or a partition directory) as kafka-dump-log prints it."""
    result = DumpResult()
    report = Report()
    if options.jsonl:
        return _dump_log_jsonl(path, options, out, err)
    parsed = parse_segment_file_name(Path(path).name)
    if parsed is not None and parsed.kind is FileKind.LOG:
        out.write(f"Log starting offset: {parsed.base_offset}\n")
    deep = options.deep_iteration or options.print_data_log
    last_offset: int | None = None
    gaps: list[tuple[int, int]] = []
    batches = iter_batches(
        path,
        records=deep,
        verify_crc="report",
        errors="skip",
        report=report,
        **_max_bytes(options),
    )
    for batch in batches:
        if options.max_bytes is not None and batch.position + batch.size > options.max_bytes:
            break
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
                    gaps.append((last_offset, record.offset))
                last_offset = record.offset
                out.write(record_line(batch, record, options) + "\n")
    _report_tail_and_errors(report, options, out, err, result, already=len(result.errors))
    if gaps:
        err.write(f"Non-consecutive offsets in {Path(path).resolve()}\n")
        for first, second in gaps:
            err.write(f"  {first} is followed by {second}\n")
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


def _dump_log_jsonl(path: str, options: DumpOptions, out: TextIO, err: TextIO) -> DumpResult:
    result = DumpResult()
    report = Report()
    kwargs = dict(verify_crc=options.verify_crc, errors="skip", report=report)
    kwargs.update(_max_bytes(options))
    if options.batches:
        for batch in iter_batches(path, records=False, **kwargs):
            out.write(json.dumps(batch_json(batch), separators=(",", ":")) + "\n")
    else:
        for record in iter_records(path, isolation=options.isolation, **kwargs):
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


def dump_index(path: str, options: DumpOptions, out: TextIO, err: TextIO) -> DumpResult:
    result = DumpResult()
    with OffsetIndex.open(path, base_offset_of(path), strict=False) as index:
        if index.problem is not None:
            result.errors.append(str(index.problem))
            err.write(f"error: {index.problem}\n")
        if len(index) == 0 and not options.jsonl:
            out.write(f"{path} is empty.\n")
        rows = ({"offset": e.offset, "position": e.position} for e in index)
        _emit(
            rows, lambda r: f"offset: {r['offset']} position: {r['position']}", options.jsonl, out
        )
    return result


def dump_time_index(path: str, options: DumpOptions, out: TextIO, err: TextIO) -> DumpResult:
    result = DumpResult()
    with TimeIndex.open(path, base_offset_of(path), strict=False) as index:
        if index.problem is not None:
            result.errors.append(str(index.problem))
            err.write(f"error: {index.problem}\n")
        rows = ({"timestamp": e.timestamp, "offset": e.offset} for e in index)
        _emit(
            rows, lambda r: f"timestamp: {r['timestamp']} offset: {r['offset']}", options.jsonl, out
        )
    return result


def dump_txn_index(path: str, options: DumpOptions, out: TextIO, err: TextIO) -> DumpResult:
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


def dump_snapshot(path: str, options: DumpOptions, out: TextIO, err: TextIO) -> DumpResult:
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
                firstSequence=e.last_sequence - e.offset_delta,
                lastSequence=e.last_sequence,
                lastOffset=e.last_offset,
                offsetDelta=e.offset_delta,
                timestamp=e.timestamp,
            )
        rows.append(row)

    def text(row: dict) -> str:
        shown = dict(row, currentTxnFirstOffset=_optional_long(row["currentTxnFirstOffset"]))
        return " ".join(f"{k}: {v}" for k, v in shown.items())

    _emit(rows, text, options.jsonl, out)
    return DumpResult()


def dump_leader_epochs(path: str, options: DumpOptions, out: TextIO, err: TextIO) -> DumpResult:
    rows = (
        {"epoch": e.epoch, "startOffset": e.start_offset}
        for e in read_leader_epoch_checkpoint(path)
    )
    _emit(
        rows, lambda r: f"epoch: {r['epoch']} startOffset: {r['startOffset']}", options.jsonl, out
    )
    return DumpResult()


def dumper_for(path: str) -> Callable[[str, DumpOptions, TextIO, TextIO], DumpResult]:
    """Pick the dumper by suffix, as kafka-dump-log does; anything else is read as batches."""
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


def dump(
    paths: list[str], options: DumpOptions, out: TextIO | None = None, err: TextIO | None = None
) -> int:
    """Dump every path; the exit status: 0 when all is well, 1 when something was damaged."""
    # Looked up at call time: a stream bound at import goes stale when the caller swaps it.
    out = out if out is not None else sys.stdout
    err = err if err is not None else sys.stderr
    status = 0
    for path in paths:
        if not options.jsonl:
            out.write(f"Dumping {path}\n")
        try:
            result = dumper_for(path)(path, options, out, err)
        except KafkaFormatError as exc:
            err.write(f"error: {exc}\n")
            status = 1
            continue
        except BrokenPipeError:
            raise
        except OSError as exc:
            err.write(f"error: {path}: {exc.strerror or exc}\n")
            status = 1
            continue
        if not result.ok:
            status = 1
    return status


# --- command line ---------------------------------------------------------------------------

EPILOG_DUMP = """\
examples:
  kafka-format dump 00000000000000000000.log
  kafka-format dump --deep-iteration --print-data-log --value-decoder json orders-0/*.log
  kafka-format dump --jsonl --isolation read_committed /var/lib/kafka/orders-0 > orders.jsonl
  kafka-format dump --jsonl --batches 00000000000000000000.log     # batch headers as JSON
  kafka-format dump 00000000000000000000.index 00000000000000000000.timeindex
"""


def register(sub) -> None:
    """Add ``dump`` to the command line."""
    d = sub.add_parser(
        "dump",
        help="print batches and records, as kafka-dump-log does, or JSON lines",
        description="Print the contents of log segments (.log, or any file of batches, or a "
        "partition directory), .index, .timeindex, .txnindex, .snapshot and "
        "leader-epoch-checkpoint files.",
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
    d.add_argument("--skip-record-metadata", action="store_true")
    d.add_argument(
        "--max-bytes", type=positive_int, help="only the batches within the first N bytes"
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
    d.set_defaults(run=_run_dump)


def _run_dump(args: argparse.Namespace) -> int:
    files = list(args.files)
    if args.files_opt:
        files.extend(f for f in args.files_opt.split(",") if f)
    if not files:
        raise SystemExit("kafka-format dump: error: no FILE given")
    decoders_given = args.key_decoder != "string" or args.value_decoder != "string"
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
    )
    return dump(files, options)
