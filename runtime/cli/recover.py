"""``kafka-format recover``: the command line of :mod:`..log.recover`, then ``verify`` on what
it wrote (``analysis`` sits above ``log``, so the check is made here)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import TextIO

from ..analysis.verify import log_bytes, verify_paths
from ..log.recover import recover
from ..log.recover_model import PartitionRecovery, RecoveryReport
from ..progress import Progress, human_bytes, wanted

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

SRC is never written to; DEST must be a new or empty directory outside SRC. Exit status: 0
when DEST was written, 1 when nothing could be (one line says why) or no batch could be kept,
2 for bad arguments.
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
    progress = None
    if wanted(quiet=args.quiet):
        total, files = log_bytes([args.src])
        progress = Progress.start("recover", total, files=files, quiet=args.quiet)
    try:
        report = recover(args.src, args.dest, salvage=args.salvage, progress=progress)
    finally:
        if progress is not None:
            progress.close()
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
    if not report.batches:
        print(
            f"kafka-format: error: {args.src}: no batch could be kept"
            + ("" if args.salvage else " (--salvage keeps the intact batches after damage)"),
            file=sys.stderr,
        )
        return 1
    return 0


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
        f"Kept {report.batches:,} batches, {report.records:,} records in "
        f"{len(report.partitions)} partition{'s' if len(report.partitions) != 1 else ''} "
        f"({damaged} damaged)\n"
    )
    if report.verified is None:
        return
    if report.verified:
        out.write(f"verify {report.dest}: no errors\n")
        return
    out.write(f"verify {report.dest}: {len(report.verify_errors)} errors\n")
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
        f"{name}: kept {part.batches:,} batches, {part.records:,} records ({offsets}), "
        f"{len(part.segments_kept)} segment{'s' if len(part.segments_kept) != 1 else ''}"
        + ("" if part.damaged else ", nothing dropped")
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
    if part.lost:
        lines.append("  offsets lost: " + ", ".join(str(lost) for lost in part.lost))
    if part.intact_dropped_batches and not salvage:
        lines.append(
            f"  {part.intact_dropped_batches:,} intact batches "
            f"({part.intact_dropped_records:,} records) lay after the truncation point; "
            "--salvage keeps them"
        )
    return lines


__all__ = ["partition_lines", "print_report", "register"]
