"""``kafka-format recover``: the command line of :mod:`..log.recover`, then ``verify`` on what
it wrote (``analysis`` sits above ``log``, so the check is made here)."""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
from pathlib import Path
from typing import TextIO

from ..analysis.verify import log_bytes, verify_paths
from ..files.names import FileKind, segment_file_name
from ..format import layout
from ..log.recover import recover
from ..log.recover_model import PartitionRecovery, RecoveryReport
from ..progress import Progress, human_bytes, wanted
from ..read.sources import is_stream_path, spooled
from .args import UsageError
from .text import amount

_LOG = FileKind.LOG
#: A batch's first field, its base offset.
_BASE_OFFSET = layout.field_struct(layout.FRAME_HEADER_FIELDS, "base_offset")
#: The largest base offset a segment's 20-digit name holds.
_MAX_BASE_OFFSET = 10**20 - 1

EPILOG = """\
examples:
  kafka-format recover /var/lib/kafka /backup/kafka-recovered          # a whole log dir
  kafka-format recover /var/lib/kafka/orders-0 /tmp/orders-0           # one partition
  kafka-format recover --salvage /var/lib/kafka/orders-0 /tmp/orders-0 # every intact batch
  kafka-format recover --json --salvage /mnt/bad-disk/kafka /tmp/out | jq '.partitions[]'

By default the copy is what the broker's own recovery after an unclean shutdown keeps
(LogLoader.recoverLog, LogSegment.recover): each partition up to its first invalid batch (a
broken frame, a CRC that does not hold, a partial batch at a segment's end), truncated there,
and every later segment dropped. The report says how many intact batches that threw away.
--salvage keeps every batch whose CRC holds and whose records read, before and after damaged
regions, resynchronising at the next whole batch: offsets then have gaps, as after compaction.
Either way the .index, .timeindex, .txnindex, producer snapshots, leader-epoch-checkpoint and
the log dir's checkpoints are rebuilt from the kept data, and the copy is verified.

Record counts are of data records (what a consumer reads), as `stats` counts them; `verify`
counts the control records (transaction markers) apart. SRC may be - (standard input), a FIFO
or /dev/stdin: it is read once into a temporary segment file in $TMPDIR, named from its first
batch's base offset (00000000000000000000.log when that is no offset), which is recovered as
a segment given alone is; the copy in DEST keeps that name.

A partial batch at a segment's end (a truncated tail, which verify warns of) and an empty
segment are no damage: they are left out of the copy and the report says so. A batch whose
length field alone is broken (its records and CRC prove its real end) is kept by --salvage
with its length set right, and reported as repaired.

SRC is never written to; DEST must be a new or empty directory outside SRC. Exit status, as
every command's: 0 when SRC held no damage and the copy verifies (DEST written), 1 when SRC
held damage (DEST is still written with what was kept; the report says what was dropped or
repaired), the copy does not verify, or SRC could not be read (one line says why), 2 for bad
arguments (DEST not a new or empty directory, or inside SRC).
"""


def register(sub) -> None:
    """Add ``recover`` to the command line."""
    p = sub.add_parser(
        "recover",
        help="copy a damaged log's valid batches into a new directory (Kafka's recovery, "
        "or --salvage every intact batch)",
        description="Write a recovered copy of a segment, a partition directory or a log "
        "directory: by default what Kafka's recovery keeps (up to the first invalid batch of "
        "each partition), with --salvage every batch whose CRC holds; indexes, transaction "
        "indexes, producer snapshots and checkpoints rebuilt; the copy verified.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=EPILOG,
    )
    p.add_argument("src", metavar="SRC", help="a .log segment, a partition dir or a log dir")
    p.add_argument("dest", metavar="DEST", help="a new or empty directory for the copy")
    p.add_argument(
        "--salvage",
        action="store_true",
        help="keep every intact batch, also after damage (offsets get gaps)",
    )
    p.add_argument("--json", action="store_true", help="print a machine-readable report")
    p.add_argument(
        "-q",
        "--quiet",
        action="store_true",
        help="print only the damaged partitions and the summary; no progress on stderr",
    )
    p.set_defaults(run=_run_recover)


def _run_recover(args: argparse.Namespace) -> int:
    _check_dest(args.src, args.dest)
    if is_stream_path(args.src):
        with spooled(args.src) as copy:
            # named from its first batch's base offset, as the broker names a segment: the
            # copy in DEST keeps that name, and its indexes are relative to it
            segment = copy.rename(copy.with_name(segment_file_name(_base_offset(copy), _LOG)))
            report = _recover(segment, args)
        _as_given(report, str(segment), args.src)
    else:
        report = _recover(args.src, args)
    progress = None
    if wanted(quiet=args.quiet):
        total, files = log_bytes([args.dest])
        progress = Progress.start("verify", total, files=files, quiet=args.quiet)
    try:
        checked = verify_paths([args.dest], progress=progress)
    finally:
        if progress is not None:
            progress.close()
    report.verified = checked.ok
    report.verify_errors = [p.line() for p in checked.errors]
    for part in report.partitions:
        prefix = part.dest.rstrip("/") + "/"
        part.verified = not any(
            e.file == part.dest or e.file.startswith(prefix) for e in checked.errors
        )
    if args.json:
        sys.stdout.write(json.dumps(report.as_json(), indent=2) + "\n")
    else:
        print_report(report, sys.stdout, quiet=args.quiet)
    if not report.batches and report.damaged:
        print(
            f"kafka-format recover: error: {args.src}: no batch could be kept"
            + ("" if args.salvage else " (--salvage keeps the intact batches after damage)"),
            file=sys.stderr,
        )
    # As every command: 1 when the source held damage (what was dropped or repaired is in the
    # report) or the copy does not verify; a truncated tail or an empty segment is none.
    return 1 if report.damaged or not report.verified else 0


def _recover(src: str | os.PathLike[str], args: argparse.Namespace) -> RecoveryReport:
    progress = None
    if wanted(quiet=args.quiet):
        total, files = log_bytes([src])
        progress = Progress.start("recover", total, files=files, quiet=args.quiet)
    try:
        return recover(src, args.dest, salvage=args.salvage, progress=progress)
    finally:
        if progress is not None:
            progress.close()


def _check_dest(src: str, dest: str) -> None:
    """DEST as the command line gives it: a new or empty directory outside SRC, else a
    usage error (exit 2) before anything is read (the library refuses the same, later)."""
    source, target = Path(src), Path(dest)
    if not is_stream_path(src) and source.exists():
        territory = (source if source.is_dir() else source.parent).resolve()
        resolved = target.resolve()
        if resolved == territory or territory in resolved.parents:
            raise UsageError(
                f"is inside the source {src}: recover never writes into what it reads",
                file=dest,
            )
    if target.exists() and not target.is_dir():
        raise UsageError("is not a directory: DEST is a new or empty directory", file=dest)
    if target.is_dir() and any(target.iterdir()):
        raise UsageError("is not empty: recover writes into a new or empty directory", file=dest)


def _base_offset(segment: Path) -> int:
    """The base offset of the file's first batch; 0 when it has none that could be one."""
    with open(segment, "rb") as fh:
        head = fh.read(layout.FRAME_BASE_OFFSET + _BASE_OFFSET.size)
    if len(head) < layout.FRAME_BASE_OFFSET + _BASE_OFFSET.size:
        return 0
    (base,) = _BASE_OFFSET.unpack_from(head, layout.FRAME_BASE_OFFSET)
    return base if 0 <= base <= _MAX_BASE_OFFSET else 0


def _as_given(report: RecoveryReport, copy: str, given: str) -> None:
    """The report of a pipe's copy, in the name the pipe was given."""
    report.source = given

    def renamed(item):
        return dataclasses.replace(item, file=given) if item.file == copy else item

    for part in report.partitions:
        if part.source == copy:
            part.source = given
        part.dropped = [renamed(d) for d in part.dropped]
        part.left_out = [renamed(d) for d in part.left_out]
        part.repaired = [renamed(d) for d in part.repaired]
        part.segments_dropped = [renamed(d) for d in part.segments_dropped]


def print_report(report: RecoveryReport, out: TextIO, *, quiet: bool = False) -> None:
    mode = (
        "salvage: every intact batch"
        if report.salvage
        else "Kafka's recovery: each partition up to its first invalid batch"
    )
    out.write(f"Recovered {report.source} into {report.dest} ({mode})\n")
    for path, reason in report.skipped:
        out.write(f"  skipped {path}: {reason}\n")
    for part in report.partitions:
        if quiet and not part.damaged:
            continue
        for line in partition_lines(part, report.salvage):
            out.write(line + "\n")
    damaged = len(report.damaged)
    out.write(
        f"Kept {amount(report.batches, 'batch', 'batches')}, "
        f"{amount(report.records, 'data record')} in "
        f"{amount(len(report.partitions), 'partition')} ({damaged} damaged)\n"
    )
    if report.verified is None:
        return
    if report.verified:
        out.write(f"verify {report.dest}: no errors\n")
        return
    out.write(f"verify {report.dest}: {amount(len(report.verify_errors), 'error')}\n")
    for line in report.verify_errors[:10]:
        out.write(f"  {line}\n")


def partition_lines(part: PartitionRecovery, salvage: bool) -> list[str]:
    """A partition's lines: what was kept, then each dropped range, segment and offset gap."""
    name = (
        f"{part.topic}-{part.partition}"
        if part.topic is not None and part.partition is not None
        else part.source
    )
    offsets = (
        f"offsets {part.first_offset}..{part.last_offset}"
        if part.first_offset is not None
        else "no offsets"
    )
    lines = [
        f"{name}: kept {amount(part.batches, 'batch', 'batches')}, "
        f"{amount(part.records, 'data record')} ({offsets}), "
        f"{amount(len(part.segments_kept), 'segment')}"
        + ("" if part.dropped or part.segments_dropped else ", nothing dropped")
    ]
    for dropped in part.dropped:
        lines.append(
            f"  dropped {dropped.file} @{dropped.start}..{dropped.end} "
            f"({human_bytes(dropped.size)}): {dropped.cause}"
        )
    for segment in part.segments_dropped:
        lines.append(
            f"  dropped segment {segment.file} ({human_bytes(segment.size)}): {segment.reason}"
        )
    for fixed in part.repaired:
        lines.append(f"  kept {fixed.file} @{fixed.start}..{fixed.end}, its length set right: ")
        lines[-1] += fixed.cause
    for left in part.left_out:
        lines.append(
            f"  left out {left.file} @{left.start}..{left.end} ({human_bytes(left.size)}): "
            f"{left.cause} (no damage)"
        )
    if part.lost:
        lines.append("  offsets lost: " + ", ".join(str(lost) for lost in part.lost))
    if part.intact_dropped_batches and not salvage:
        lines.append(
            f"  {amount(part.intact_dropped_batches, 'intact batch', 'intact batches')} "
            f"({amount(part.intact_dropped_records, 'data record')}) lay after the truncation "
            "point; --salvage keeps them"
        )
    return lines


__all__ = ["partition_lines", "print_report", "register"]
