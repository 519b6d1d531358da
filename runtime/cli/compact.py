"""``kafka-format compact``: what Kafka's log cleaner would keep, remove and clean.

For each partition directory (or each one in a log dir): the dirty ratio against
``min.cleanable.dirty.ratio``, the cleanable range and what bounds it, the segments with their
role and cleaning group, and what one cleaning pass at ``--now`` keeps and removes (records,
markers, batches), with the null-key records listed. ``--jsonl`` prints the kept data records
instead, in ``dump --jsonl``'s form (``--removed``: the removed ones, with a ``reason``);
``--json`` the whole report, one object per partition. The rules are in
:mod:`kafka_format.runtime.compaction`.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any, TextIO

import pyarrow as pa

from ..format.jsonform import b64
from ..log.compaction import (
    DEFAULT_DELETE_RETENTION_MS,
    DEFAULT_MIN_CLEANABLE_DIRTY_RATIO,
    CleanerConfig,
    CompactionResult,
    partitions_of,
)
from ..log.compaction_policy import parse_policies
from ..log.compaction_stream import compact_stream
from ..progress import Progress
from ..read.jsonlines import JsonLines
from .args import UsageError, parse_timestamp

#: Null-key records listed one by one in the text report before the rest are counted.
MAX_LISTED = 20

EPILOG = """\
examples:
  kafka-format compact /var/lib/kafka/users-0 --cleanup-policy compact
  kafka-format compact /var/lib/kafka --cleanup-policy delete --cleanup-policy users=compact
  kafka-format compact /var/lib/kafka --now 2024-05-01T12:00:00Z --delete-retention-ms 3600000
  kafka-format compact --jsonl users-0 > users-compacted.jsonl      # the records kept
  kafka-format compact --jsonl --removed users-0                       # removed, with reasons
  kafka-format compact --json --min-compaction-lag-ms 600000 users-0
  kafka-format compact --progress --jsonl big-0 > kept.jsonl      # streamed; progress on stderr
"""


def _ratio(text: str) -> float:
    value = float(text)
    if not 0 <= value <= 1:
        raise argparse.ArgumentTypeError(f"must be within 0..1, got {value}")
    return value


def _policy(text: str) -> str:
    try:
        parse_policies([text])
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text


def _ms(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be >= 0, got {value}")
    return value


def register(sub) -> None:
    """Add ``compact`` to the command line."""
    c = sub.add_parser(
        "compact",
        help="what the log cleaner would keep and remove; dirty ratio and segments to clean",
        description="Run one pass of Kafka's log cleaner over partition directories without "
        "writing anything: the dirty ratio (from cleaner-offset-checkpoint) against "
        "min.cleanable.dirty.ratio, the segments it would clean, and the records, tombstones, "
        "transaction markers and aborted data it would keep or remove.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=EPILOG,
    )
    c.add_argument("paths", nargs="+", metavar="DIR", help="partition directories or log dirs")
    c.add_argument(
        "--now",
        type=parse_timestamp,
        metavar="T",
        help="the cleaning time: epoch ms or ISO-8601 (default: now)",
    )
    c.add_argument(
        "--delete-retention-ms", type=_ms, default=DEFAULT_DELETE_RETENTION_MS, metavar="MS"
    )
    c.add_argument(
        "--min-cleanable-dirty-ratio",
        type=_ratio,
        default=DEFAULT_MIN_CLEANABLE_DIRTY_RATIO,
        metavar="R",
    )
    c.add_argument("--min-compaction-lag-ms", type=_ms, default=0, metavar="MS")
    c.add_argument("--max-compaction-lag-ms", type=_ms, default=None, metavar="MS")
    c.add_argument("--segment-bytes", type=_ms, default=None, metavar="N", help="groups' bound")
    c.add_argument("--segment-index-bytes", type=_ms, default=None, metavar="N")
    c.add_argument(
        "--producer-id-expiration-ms",
        type=int,
        default=None,
        metavar="MS",
        help="idle producers expire after this (default 86400000; -1: never)",
    )
    c.add_argument(
        "--first-dirty-offset",
        type=_ms,
        metavar="N",
        help="instead of the cleaner-offset-checkpoint entry (one partition only)",
    )
    c.add_argument(
        "--null-keys",
        choices=["drop", "keep"],
        default="drop",
        help="Kafka's cleaner drops null-key records (default); keep them instead",
    )
    c.add_argument(
        "--cleanup-policy",
        action="append",
        type=_policy,
        metavar="[TOPIC=]POLICY",
        help="the topic's cleanup.policy: compact, delete or compact,delete; TOPIC=POLICY for "
        "one topic (repeatable), a bare POLICY for topics not named. Unknown by default "
        "(assumed compact, and said so); __consumer_offsets, __transaction_state and "
        "__share_group_state are compact; delete topics and __cluster_metadata are left alone",
    )
    c.add_argument(
        "--only-if-due",
        action="store_true",
        help="remove nothing from a partition the cleaner would not pick now",
    )
    c.add_argument(
        "--progress",
        action="store_true",
        help="a progress line on stderr even when it is not a terminal",
    )
    c.add_argument("-q", "--quiet", action="store_true", help="no progress line on stderr")
    out = c.add_mutually_exclusive_group()
    out.add_argument("--jsonl", action="store_true", help="print the kept data records")
    out.add_argument("--json", action="store_true", help="print the report as JSON")
    c.add_argument("--removed", action="store_true", help="with --jsonl: the removed records")
    c.set_defaults(run=_run)


def _config(args: argparse.Namespace) -> CleanerConfig:
    config = CleanerConfig(
        delete_retention_ms=args.delete_retention_ms,
        min_cleanable_dirty_ratio=args.min_cleanable_dirty_ratio,
        min_compaction_lag_ms=args.min_compaction_lag_ms,
    )
    if args.max_compaction_lag_ms is not None:
        config = replace(config, max_compaction_lag_ms=args.max_compaction_lag_ms)
    if args.segment_bytes is not None:
        config = replace(config, segment_bytes=args.segment_bytes)
    if args.segment_index_bytes is not None:
        config = replace(config, max_index_bytes=args.segment_index_bytes)
    if args.producer_id_expiration_ms is not None:
        expiry = args.producer_id_expiration_ms
        config = replace(config, producer_id_expiration_ms=None if expiry < 0 else expiry)
    return config


def _run(args: argparse.Namespace, out: TextIO | None = None) -> int:
    out = out or sys.stdout
    if args.removed and not args.jsonl:
        raise UsageError("--removed goes with --jsonl")
    dirs = [d for p in args.paths for d in partitions_of(p)]
    if args.first_dirty_offset is not None and len(dirs) != 1:
        raise UsageError("--first-dirty-offset needs one partition")
    config = _config(args)
    default, per_topic = parse_policies(args.cleanup_policy)
    progress = _progress(args, dirs, out)
    try:
        with JsonLines() as lines:
            for directory in dirs:
                sink = _JsonlSink(lines, out)
                result = compact_stream(
                    directory,
                    cleanup_policy=default,
                    topic_policies=per_topic,
                    now_ms=args.now,
                    config=config,
                    null_keys=args.null_keys,
                    first_dirty_offset=args.first_dirty_offset,
                    only_if_due=args.only_if_due,
                    on_kept=sink.kept if args.jsonl and not args.removed else None,
                    on_removed=sink.removed if args.jsonl and args.removed else None,
                    include_headers=args.jsonl,
                    progress=progress,
                )
                if progress is not None:
                    progress.clear()
                if args.json:
                    out.write(json.dumps(report_json(result), separators=(",", ":")) + "\n")
                elif not args.jsonl:
                    out.write(report_text(result))
                out.flush()
    finally:
        if progress is not None:
            progress.close()
    return 0


def _progress(args: argparse.Namespace, dirs: list, out: TextIO) -> Progress | None:
    """A progress line on stderr: with ``--progress``, or when stderr is a terminal (and
    stdout is not, or the work is large enough to be worth it)."""
    logs = [p for d in dirs for p in d.glob("*.log")]
    total = sum(p.stat().st_size for p in logs)
    if args.progress:
        return Progress("compact", total, sys.stderr, files=len(logs))
    output = out if args.jsonl else None
    return Progress.start("compact", total, files=len(logs), quiet=args.quiet, output=output)


class _JsonlSink:
    """The records a pass keeps (or removes, with a ``reason``) as ``dump --jsonl`` lines."""

    def __init__(self, lines: JsonLines, out: TextIO) -> None:
        self.lines = lines
        self.out = out

    def kept(self, rows: pa.RecordBatch) -> None:
        for part in self.lines.encode(rows):
            self.out.write(bytes(part).decode("ascii"))

    def removed(self, rows: pa.RecordBatch, reasons: list[str]) -> None:
        text = "".join(bytes(part).decode("ascii") for part in self.lines.encode(rows))
        for line, reason in zip(text.splitlines(), reasons, strict=True):
            self.out.write(f'{line[:-1]},"reason":"{reason}"}}\n')


def report_json(result: CompactionResult) -> dict[str, Any]:
    """The plan, counts, batch outcomes and null-key records of one partition."""
    actions: dict[str, int] = {}
    for b in result.batches:
        actions[b.action] = actions.get(b.action, 0) + 1
    return {
        **result.plan.to_json(),
        **result.policy.to_json(),
        "wouldClean": result.would_clean,
        "recordsKept": result.records_kept,
        "recordsRemoved": result.records_removed,
        "removedByReason": result.removed_by_reason(),
        "markersKept": result.markers_kept,
        "markersRemoved": result.markers_removed,
        "batchActions": actions,
        "deleteHorizonsSet": [
            {"baseOffset": b.base_offset, "deleteHorizonMs": b.delete_horizon_after}
            for b in result.batches
            if b.delete_horizon_after is not None and b.delete_horizon_before is None
        ],
        "nullKeyRecords": [
            {"offset": r.offset, "value": b64(r.value)} for r in result.null_key_records
        ],
        "warnings": result.warnings,
    }


def _iso(ms: int) -> str:
    try:
        return datetime.fromtimestamp(ms / 1000, tz=UTC).isoformat(timespec="milliseconds")
    except (OverflowError, OSError, ValueError):
        return "out of range"


def report_text(result: CompactionResult) -> str:
    p = result.plan
    name = p.path.name
    if not result.policy.cleaned:
        return f"{name}: left alone: {result.policy.note()}\n"
    verdict = "would clean" if p.would_clean else "would not clean"
    why = (
        f"max.compaction.lag.ms exceeded by {p.compaction_delay_ms} ms"
        if p.needs_compaction_now and p.cleanable_bytes > 0
        else f"{p.ratio:.4f} {'>' if p.ratio > p.min_cleanable_ratio else '<='} "
        f"min.cleanable.dirty.ratio {p.min_cleanable_ratio}"
    )
    source = (
        "log start offset"
        if p.checkpoint is None
        else f"cleaner-offset-checkpoint {p.checkpoint}"
        + (" (out of range: reset to the log start)" if p.checkpoint_reset else "")
    )
    lines = [
        f"{name}: {verdict} now ({_iso(p.now_ms)}): dirty ratio {why}",
        *([f"  {result.policy.note()}"] if not result.policy.known else []),
        f"  cleanable {p.cleanable_bytes} bytes, clean {p.clean_bytes} bytes",
        f"  log start {p.log_start_offset}, end {p.log_end_offset}, "
        f"last stable {p.last_stable_offset}",
        f"  first dirty offset {p.first_dirty_offset} ({source})",
        f"  first uncleanable offset {p.first_uncleanable_offset} "
        f"({', '.join(p.uncleanable_reasons)})",
        "  segments:",
    ]
    for s in p.segments:
        group = f"  group {s.group}" if s.group is not None else ""
        lines.append(f"    {s.path.name}  {s.size:>10} bytes  {s.role:<11}{group}".rstrip())
    if p.cleans:
        lines.append(f"  a pass rewrites {len(p.groups)} group(s), checkpoint -> {p.end_offset}")
    else:
        lines.append("  a pass rewrites nothing: no dirty segment below the uncleanable offset")
    reasons = ", ".join(f"{k} {v}" for k, v in sorted(result.removed_by_reason().items()))
    lines.append(
        f"  data records: keep {result.records_kept}, remove {result.records_removed}"
        + (f" ({reasons})" if reasons else "")
    )
    actions: dict[str, int] = {}
    for b in result.batches:
        actions[b.action] = actions.get(b.action, 0) + 1
    lines.append(
        f"  markers: keep {result.markers_kept}, remove {result.markers_removed}; batches: "
        + ", ".join(f"{k} {v}" for k, v in sorted(actions.items()))
    )
    horizons = sum(
        1
        for b in result.batches
        if b.delete_horizon_after is not None and b.delete_horizon_before is None
    )
    if horizons:
        lines.append(
            f"  {horizons} batch(es) get a delete horizon "
            f"(now + delete.retention.ms): their tombstones or markers go in a later pass"
        )
    nulls = result.null_key_records
    if nulls:
        listed = ", ".join(str(r.offset) for r in nulls[:MAX_LISTED])
        more = f" and {len(nulls) - MAX_LISTED} more" if len(nulls) > MAX_LISTED else ""
        lines.append(
            f"  {len(nulls)} record(s) with a null key (cannot be compacted), offsets "
            f"{listed}{more}"
        )
    lines.extend(f"  warning: {w}" for w in result.warnings)
    return "\n".join(lines) + "\n"
