"""``kafka-format verify``: the command line of :mod:`..analysis.verify`."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import TextIO

from ..analysis.verify import VerifyReport, log_bytes, verify_paths
from ..analysis.verify_remote import verify_remote
from ..progress import Progress, wanted
from .args import add_threads, add_topic_filter, threaded, topic_paths

# --- command line ---------------------------------------------------------------------------

EPILOG_VERIFY = """\
examples:
  kafka-format verify /var/lib/kafka/orders-0          # one partition
  kafka-format verify /var/lib/kafka                   # every partition of a log dir
  kafka-format verify 00000000000000000000.log 00000000000000000000.index
  kafka-format verify --json /var/lib/kafka/orders-0 | jq '.files[] | select(.ok | not)'
  kafka-format verify --partitioner /var/lib/kafka     # keyed records in the right partition?
  kafka-format verify --partitions orders=12 /backup/orders-3   # the topic has 12 partitions
  kafka-format verify /var/lib/kafka > verify.txt 2>&1   # no progress line off a terminal
  ssh broker cat /var/lib/kafka/orders-0/00000000000000000000.log | kafka-format verify -
  kafka-format verify --remote-log-metadata /var/lib/kafka/__remote_log_metadata-7 \
      /mnt/tiered/orders-0-mTjyhvN8QCuAvYqJZP6ZpA     # tiered objects against their metadata

Errors: CRC mismatches, undecodable batches, framing damage (a length below 14, an invalid
magic, a length running past the end of the file although whole batches follow), index
entries that do not match the log (kafka-dump-log's "Mismatches in" and time index errors),
indexes failing the start-up sanity checks, .txnindex entries without ABORT markers and
markers without entries, snapshots with bad CRCs, offsets that go backwards. Warnings:
truncated tails, missing or untrimmed indexes, and with --partitioner keyed records sitting
in another partition than their key hashes to (errors with --partitioner-strict). Notes, what
a healthy log may hold (listed and counted; --quiet leaves them out): non-consecutive offsets,
which "compaction leaves" unless damage reported in the same file lies between the two
offsets (the note then says so), and a first batch above its segment's base offset.

Records are counted as data records (what a consumer reads; `stats` and `recover` count
these) and control records (transaction markers), in the summary line and in --json
("data_records", "control_records"; "records" is both). A PATH of - (standard input), a
FIFO or /dev/stdin is read once into a temporary file in $TMPDIR (verify reads a log in
several passes) and checked as a file of batches whose name tells no base offset, as a
file not named like a segment is. Exit status: 0 when there is no error (warnings and
notes allowed), 1 otherwise, 2 for bad arguments; the same when stdout is closed early
(| head). Progress goes to stderr when it is a terminal and there are a few MB of log to
read (not with --quiet).
"""


def register(sub) -> None:
    """Add ``verify`` to the command line."""
    v = sub.add_parser(
        "verify",
        help="check CRCs, indexes, transaction indexes and snapshots against the log",
        description="Verify partition directories, log directories or single files: every "
        "batch's CRC, index sanity and entries, time index entries, transaction index "
        "entries against ABORT markers, producer snapshots.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=EPILOG_VERIFY,
    )
    v.add_argument("paths", nargs="+", metavar="PATH", help="partition dir, log dir or file")
    add_topic_filter(v)  # --topic / --partition (ranges helper)
    v.add_argument("--json", action="store_true", help="print a machine-readable report")
    v.add_argument(
        "-q",
        "--quiet",
        action="store_true",
        help="print errors only: no warnings, notes or progress on stderr",
    )
    v.add_argument(
        "--partitioner",
        action="store_true",
        help="check that each keyed record sits in the partition the Java producer's default "
        "partitioner (murmur2 of the key) gives it; misplaced records are warnings",
    )
    v.add_argument(
        "--partitions",
        action="append",
        type=_partition_count,
        metavar="[TOPIC=]N",
        help="the partition count to hash keys with (implies --partitioner): N for every topic "
        "or TOPIC=N, repeatable; by default the highest topic-N directory found + 1",
    )
    v.add_argument(
        "--partitioner-strict",
        action="store_true",
        help="misplaced keyed records are errors (exit status 1), not warnings",
    )
    v.add_argument(
        "--remote-log-metadata",
        metavar="PATH",
        help="tiered storage: compare each PATH (a folder of <offset>-<id>.log objects) with "
        "the remote segments this __remote_log_metadata-N partition (or a log dir holding "
        "them) says exist: missing, extra and overlapping segments, offsets that disagree",
    )
    add_threads(v)
    v.set_defaults(run=threaded(_run_verify))


def _partition_count(text: str) -> tuple[str | None, int]:
    topic, equals, number = text.rpartition("=")
    try:
        count = int(number)
    except ValueError:
        count = 0
    if count < 1 or (equals and not topic):
        raise argparse.ArgumentTypeError(f"expected N or TOPIC=N with N >= 1, not {text!r}")
    return (topic if equals else None), count


def partition_counts(
    values: Sequence[tuple[str | None, int]] | None,
) -> dict[str | None, int] | None:
    """``--partitions`` as :func:`verify_paths` takes it (the last of repeated ones wins)."""
    return dict(values) if values else None


def print_report(report: VerifyReport, out: TextIO, *, quiet: bool = False) -> None:
    for problem in report.problems:
        if quiet and problem.severity != "error":
            continue
        out.write(problem.line() + "\n")
    for topic in (report.placement or {}).values():
        out.write(topic.line() + "\n")
    out.write(report.summary() + "\n")


def _run_verify(args: argparse.Namespace) -> int:
    args.paths = topic_paths(args)
    progress = None
    if wanted(quiet=args.quiet):
        total, files = log_bytes(args.paths)
        progress = Progress.start("verify", total, files=files, quiet=args.quiet)
    try:
        report = verify_paths(
            args.paths,
            progress=progress,
            partitioner=args.partitioner or args.partitioner_strict,
            partitions=partition_counts(args.partitions),
            partitioner_severity="error" if args.partitioner_strict else "warning",
        )
        metadata = getattr(args, "remote_log_metadata", None)
        if metadata is not None:
            verify_remote(metadata, args.paths, report)
    finally:
        if progress is not None:
            progress.close()
    if args.json:
        sys.stdout.write(json.dumps(report.as_json(), indent=2) + "\n")
    else:
        print_report(report, sys.stdout, quiet=args.quiet)
    return 0 if report.ok else 1
