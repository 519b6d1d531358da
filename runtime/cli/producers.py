"""``kafka-format producers``: the producer state a broker would rebuild from a partition's log.

The work is :func:`kafka_format.runtime.producers.rebuild_producer_state`; this module only
prints it, as a table or as JSON lines, and sets the exit status.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import os
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TextIO

from ..errors import KafkaFormatError
from ..files.names import (
    FileKind,
    parse_partition_dir_name,
    parse_segment_file_name,
    segment_file_name,
)
from ..log.partition import Partition
from ..log.producer_state import Anomaly
from ..log.producers import (
    DEFAULT_PRODUCER_ID_EXPIRATION_MS,
    ProducerState,
    ProducerStateReport,
    rebuild_producer_state,
)
from ..log.transactions_report import (
    DEFAULT_HANGING_AFTER_MS,
    PartitionTransactions,
    partition_transactions,
)
from ..read.sources import partition_dirs
from . import producers_txn
from .args import UsageError, non_negative_int
from .text import iso_ms

EPILOG = """\
examples:
  kafka-format producers /var/lib/kafka/orders-0                 # state at the log end
  kafka-format producers /var/lib/kafka/orders-0 --at 120000     # after offsets < 120000
  kafka-format producers --check-snapshots /var/lib/kafka        # every partition of a log dir
  kafka-format producers --jsonl orders-0 | jq 'select(.type == "anomaly")'
  kafka-format producers orders-0 | awk '$9 != "-"'    # plain columns: open transactions
  cat 00000000000000000219.log | kafka-format producers -   # one segment, from a pipe

The state is what the broker's ProducerStateManager holds after loading the log: per producer
id the epoch, the sequences and offsets of its last batch, its last timestamp, the coordinator
epoch of its last transaction marker, and its open transaction. Anomalies are batches the
partition leader would have refused (duplicate_batch, sequence_gap, epoch_regression,
coordinator_epoch_regression, non_transactional_in_transaction), markers of producers with no
open transaction (marker_without_transaction) and damaged batches, each with its file and byte
position. Sequence gaps below the cleaner-offset-checkpoint are the log cleaner's doing: they
are listed apart (-v, --jsonl) and are not anomalies.

--check-snapshots compares each <N>.snapshot with the state rebuilt up to offset N, field by
field. A log that no longer starts at offset 0 lost the producers of its deleted segments:
the state is then loaded from the earliest snapshot, as the broker loads one
(--from-snapshot none rebuilds from the log alone).

One file (a segment, any file of batches, - for standard input, a FIFO) is read as a partition
holding that segment alone: no snapshots, its base offset from its name (0 when the name is no
segment's). A pipe is read once, batch by batch, in bounded memory.

Exit status: 0 when there is no anomaly and no snapshot mismatch, 1 otherwise, 2 for bad
arguments; the same when stdout is closed early (| head).
"""


def register(sub) -> None:
    """Add ``producers`` to the command line."""
    p = sub.add_parser(
        "producers",
        help="rebuild idempotent/transactional producer state; find duplicates and gaps",
        description="Rebuild the producer state (idempotence, transactions) of partition "
        "directories from their logs, as the broker's ProducerStateManager does; report "
        "duplicate batches, sequence gaps and epoch regressions; compare with .snapshot files.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=EPILOG + "\n" + producers_txn.EPILOG,
    )
    p.add_argument(
        "dir",
        metavar="PATH",
        help="a partition directory (topic-N), a log dir, or one segment (or file of "
        "batches; - for standard input) read as a partition of its own",
    )
    p.add_argument(
        "--at",
        type=non_negative_int,
        metavar="OFFSET",
        help="the state after loading the offsets below OFFSET (default: the log end)",
    )
    p.add_argument("--jsonl", action="store_true", help="one JSON object per line")
    p.add_argument(
        "--check-snapshots",
        action="store_true",
        help="compare every .snapshot with the state rebuilt up to its offset",
    )
    p.add_argument(
        "--from-snapshot",
        default="auto",
        metavar="auto|none|FILE",
        help="where loading starts: auto (the log start; the earliest snapshot when the log "
        "does not start at 0), none (the log alone), or a .snapshot file",
    )
    p.add_argument(
        "--producer-id-expiration-ms",
        type=non_negative_int,
        default=DEFAULT_PRODUCER_ID_EXPIRATION_MS,
        metavar="MS",
        help="producers idle this long are expired by the broker, so a snapshot may lack "
        "them (default %(default)s, the broker's default)",
    )
    p.add_argument(
        "-v", "--verbose", action="store_true", help="list the gaps the log cleaner explains"
    )
    producers_txn.add_options(p)
    p.set_defaults(run=_run_producers)


def _partitions(path: Path) -> list[Path]:
    partition = Partition.open(path)
    if partition.segments or partition.snapshots:
        return [path]
    subs = partition_dirs(path)
    if not subs:
        raise KafkaFormatError(
            "no .log segments here, nor partition directories (topic-N)", file=str(path)
        )
    return subs


@contextlib.contextmanager
def _one_file(path: str) -> Iterator[Path]:
    """A partition directory holding only ``path`` (a segment, any file of batches, a pipe,
    a FIFO, ``/dev/stdin``), as a link named like a segment: its base offset from its name,
    else 0. A pipe is read once, frame by frame, as the loader reads every segment."""
    parsed = parse_segment_file_name(Path(path).name)
    base = parsed.base_offset if parsed is not None and parsed.kind is FileKind.LOG else 0
    with tempfile.TemporaryDirectory(prefix="kafka-format-") as directory:
        # in a directory of its own: the loader reads the parent's cleaner-offset-checkpoint
        partition = Path(directory) / "partition"
        partition.mkdir()
        (partition / segment_file_name(base, FileKind.LOG)).symlink_to(os.path.abspath(path))
        yield partition


def _as_given(report: ProducerStateReport, path: str) -> ProducerStateReport:
    """The report of a :func:`_one_file` directory, in the name the file was given."""
    inside = str(report.path) + os.sep

    def renamed(anomaly: Anomaly) -> Anomaly:
        own = anomaly.file is not None and anomaly.file.startswith(inside)
        return dataclasses.replace(anomaly, file=path) if own else anomaly

    report.anomalies = [renamed(a) for a in report.anomalies]
    report.explained = [renamed(a) for a in report.explained]
    report.path = Path(path)
    return report


def _run_producers(args: argparse.Namespace) -> int:
    _check_options(args)
    if args.transactions:
        return _run_transactions(args)
    seed: str | None = args.from_snapshot
    if seed == "none":
        seed = None
    options = dict(
        at=args.at,
        check_snapshots=args.check_snapshots,
        seed=seed,
        expiration_ms=args.producer_id_expiration_ms,
    )
    if os.path.isdir(args.dir):
        reports: Iterator[ProducerStateReport] = (
            rebuild_producer_state(directory, **options)
            for directory in _partitions(Path(args.dir))
        )
        return _print_all(reports, args)
    if not os.path.exists(args.dir):
        raise KafkaFormatError("no such file or directory", file=args.dir)
    with _one_file(args.dir) as directory:
        report = rebuild_producer_state(directory, **options)
    return _print_all(iter([_as_given(report, args.dir)]), args)


def _check_options(args: argparse.Namespace) -> None:
    """Options of one mode given to the other: a usage error (exit 2), not silently ignored."""
    txn_only = {
        "--hanging-after": args.hanging_after is not None,
        "--now": args.now is not None,
        "--bootstrap-server": args.bootstrap_server is not None,
        "--json": args.json,
        "--quiet": args.quiet,
    }
    state_only = {
        "--at": args.at is not None,
        "--check-snapshots": args.check_snapshots,
        "--from-snapshot": args.from_snapshot != "auto",
        "--verbose": args.verbose,
    }
    wrong = state_only if args.transactions else txn_only
    given = [name for name, present in wrong.items() if present]
    if given:
        what = "do not go with" if args.transactions else "need"
        raise UsageError(f"{', '.join(given)}: {what} --transactions")
    if args.json and args.jsonl:
        raise UsageError("--json and --jsonl: one or the other")


def _run_transactions(args: argparse.Namespace) -> int:
    options = dict(
        hanging_after_ms=(
            DEFAULT_HANGING_AFTER_MS if args.hanging_after is None else args.hanging_after
        ),
        now=args.now,
    )
    if os.path.isdir(args.dir):
        results: Iterator[PartitionTransactions] = (
            partition_transactions(directory, **options)
            for directory in _partitions(Path(args.dir))
        )
        return producers_txn.print_all(results, args)
    if not os.path.exists(args.dir):
        raise KafkaFormatError("no such file or directory", file=args.dir)
    with _one_file(args.dir) as directory:
        result = partition_transactions(directory, **options)
    return producers_txn.print_all(iter([_txn_as_given(result, args.dir)]), args)


def _txn_as_given(result: PartitionTransactions, path: str) -> PartitionTransactions:
    """The transactions of a :func:`_one_file` directory, in the name the file was given;
    the topic and partition from the directory it lies in (for the abort command), if any."""
    inside = str(result.path) + os.sep
    result.damaged = [
        dataclasses.replace(a, file=path) if a.file is not None and a.file.startswith(inside) else a
        for a in result.damaged
    ]
    result.path = Path(path)
    result.topic = result.partition = None
    with contextlib.suppress(KafkaFormatError):
        parsed = parse_partition_dir_name(Path(os.path.abspath(path)).parent.name)
        result.topic, result.partition = parsed.topic, parsed.partition
    return result


def _print_all(reports: Iterator[ProducerStateReport], args: argparse.Namespace) -> int:
    ok = True
    for report in reports:
        if args.jsonl:
            for row in report_rows(report):
                sys.stdout.write(json.dumps(row, separators=(",", ":")) + "\n")
        else:
            print_report(report, sys.stdout, verbose=args.verbose)
        ok = ok and report.ok
    return 0 if ok else 1


# --- output -----------------------------------------------------------------------------------


def producer_json(state: ProducerState) -> dict[str, Any]:
    """One producer in the names ``kafka-format dump`` gives a snapshot's entries."""
    last = state.last_batch
    return {
        "producerId": state.producer_id,
        "producerEpoch": state.epoch,
        "firstSequence": None if last is None else last.first_sequence,
        "lastSequence": state.last_sequence,
        "lastOffset": state.last_offset,
        "offsetDelta": state.offset_delta,
        "lastTimestamp": state.last_timestamp,
        "coordinatorEpoch": state.coordinator_epoch,
        "currentTxnFirstOffset": state.current_txn_first_offset,
        "retainedBatches": [
            {
                "firstSequence": b.first_sequence,
                "lastSequence": b.last_sequence,
                "firstOffset": b.first_offset,
                "lastOffset": b.last_offset,
                "timestamp": b.timestamp,
            }
            for b in state.batches
        ],
    }


def report_rows(report: ProducerStateReport) -> Iterator[dict[str, Any]]:
    """The JSON lines of one partition: producers, anomalies, snapshots, then a summary."""
    name = report.path.name
    for pid in sorted(report.producers):
        yield {"type": "producer", "partition": name, **producer_json(report.producers[pid])}
    for anomaly in [*report.anomalies, *report.explained]:
        yield {"type": "anomaly", "partition": name, **anomaly.as_json()}
    for check in report.snapshots:
        yield {"type": "snapshot", "partition": name, **check.as_json()}
    yield {"type": "summary", "partition": name, **_summary(report)}


def _summary(report: ProducerStateReport) -> dict[str, Any]:
    return {
        "startOffset": report.start_offset,
        "endOffset": report.end_offset,
        "logEndOffset": report.log_end_offset,
        "seed": None if report.seed is None else str(report.seed),
        "cleanedTo": report.cleaned_to,
        "producers": len(report.producers),
        "batches": report.batches,
        "anomalies": len(report.anomalies),
        "explained": len(report.explained),
        "snapshotsChecked": sum(s.status in ("ok", "mismatch") for s in report.snapshots),
        "snapshotProblems": sum(not s.ok for s in report.snapshots),
        "firstUnstableOffset": report.first_unstable_offset,
        "truncatedBytes": report.truncated_bytes,
        "ok": report.ok,
    }


_COLUMNS = (
    "PRODUCER_ID",
    "EPOCH",
    "FIRST_SEQ",
    "LAST_SEQ",
    "LAST_OFFSET",
    "OFFSET_DELTA",
    "TIMESTAMP",
    "COORD_EPOCH",
    "OPEN_TXN",
)


def _row(state: ProducerState) -> tuple[str, ...]:
    last = state.last_batch
    return (
        str(state.producer_id),
        str(state.epoch),
        "-" if last is None else str(last.first_sequence),
        "-" if last is None else str(last.last_sequence),
        "-" if last is None else str(last.last_offset),
        "-" if last is None else str(last.offset_delta),
        iso_ms(state.last_timestamp),
        str(state.coordinator_epoch),
        "-" if state.current_txn_first_offset is None else str(state.current_txn_first_offset),
    )


def print_report(report: ProducerStateReport, out: TextIO, *, verbose: bool = False) -> None:
    name = report.path.name
    where = (
        f"after the offsets below {report.end_offset}"
        if report.log_end_offset is None
        else f"at the log end offset {report.end_offset}"
    )
    origin = (
        f"loaded from {report.seed.name} ({report.start_offset})"
        if report.seed is not None
        else f"rebuilt from offset {report.start_offset}"
    )
    out.write(
        f"{name}: {len(report.producers)} producer(s) {where}, {origin}, "
        f"{report.batches} producer batch(es)\n"
    )
    rows = [_COLUMNS, *(_row(report.producers[pid]) for pid in sorted(report.producers))]
    if len(rows) > 1:
        widths = [max(len(r[i]) for r in rows) for i in range(len(_COLUMNS))]
        for r in rows:
            out.write("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip())
            out.write("\n")
    for anomaly in report.anomalies:
        out.write(f"anomaly: {anomaly}\n")
    if report.explained:
        if verbose:
            for anomaly in report.explained:
                out.write(f"explained: {anomaly}\n")
        else:
            out.write(
                f"{len(report.explained)} sequence gap(s) or marker(s) below the cleaner "
                f"checkpoint {report.cleaned_to} explained by the log cleaner (-v lists them)\n"
            )
    for check in report.snapshots:
        detail = f" ({check.entries} entries)" if check.entries is not None else ""
        if check.reason:
            detail += f": {check.reason}"
        out.write(f"snapshot {check.path.name}: {check.status}{detail}\n")
        for difference in check.differences:
            if verbose or difference.explained_by is None:
                out.write(f"  {difference}\n")
    problems = []
    if report.anomalies:
        problems.append(f"{len(report.anomalies)} anomaly(ies)")
    bad = sum(not s.ok for s in report.snapshots)
    if bad:
        problems.append(f"{bad} snapshot(s) mismatched or unreadable")
    out.write(f"{name}: {', '.join(problems) if problems else 'OK'}\n")
