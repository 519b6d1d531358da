"""``kafka-format producers --transactions``: every transaction of a partition, and for a
hanging one the command that aborts it.

The walk is :func:`kafka_format.runtime.log.transactions_report.partition_transactions`; this
module parses its options and prints it: a table per partition, one JSON document
(``--json``) or JSON lines (``--jsonl``), exit status 1 when a transaction hangs or a batch is
damaged.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime
from typing import Any, TextIO

from ..log.transactions_report import (
    PartitionTransactions,
    Transaction,
    TxnStatus,
)
from .text import iso_ms

#: Where the printed abort command points when ``--bootstrap-server`` is not given.
BROKER_PLACEHOLDER = "BROKER:9092"

EPILOG = """\
transactions (--transactions):
  kafka-format producers --transactions /var/lib/kafka/orders-0
  kafka-format producers --transactions --hanging-after 5m /var/lib/kafka   # every partition
  kafka-format producers --transactions --now 2024-05-01T12:00:00Z orders-0 # vs a wall clock
  kafka-format producers --transactions --bootstrap-server kafka:9092 orders-0 | grep abort
  kafka-format producers --transactions --jsonl orders-0 | jq 'select(.hanging)'
  cat 00000000000000000219.log | kafka-format producers --transactions -
  kafka-format producers --transactions -q /var/lib/kafka || alert   # cron: 1 = hanging

Every transaction of every transactional producer: committed, aborted or open, its first
offset (its first data batch), its last offset (the marker's, or its last data batch's while
open), the marker's offset and type, its data batches, records and bytes, and its duration by
the batches' own timestamps (CreateTime, or LogAppendTime where the topic has it): from its
first batch's first timestamp to the marker's, or for an open one to the partition's last
timestamp (the largest batch timestamp: the only clock a log has) or to --now. Markers with no
data of their producer since its previous marker are empty transactions, counted apart (Kafka
writes one to every partition a transaction registered, data or not).

An open transaction is HANGING when it has been open longer than --hanging-after (default
15m, transaction.max.timeout.ms's default: no coordinator lets a transaction run longer). For
each, the line that aborts it is printed, for KIP-664's tool (Kafka 3.0+ brokers):
  kafka-transactions.sh --bootstrap-server BROKER:9092 abort --topic T --partition N \\
      --start-offset FIRST
This is the offline check, from the files alone (a copied log dir, a broker that is down);
`kafka-transactions.sh --bootstrap-server B find-hanging --broker-id N` is the broker-side one.

Exit status with --transactions: 0 when no transaction hangs and no batch is damaged, 1 when
one hangs or a batch is damaged (listed as damaged:, as `producers` and `verify` answer the
same bytes), 2 for bad arguments; the same when stdout is closed early (| head).
"""

_UNITS = {"ms": 1, "s": 1000, "m": 60_000, "min": 60_000, "h": 3_600_000, "d": 86_400_000}
_DURATION = re.compile(r"(\d+(?:\.\d+)?)\s*(ms|s|min|m|h|d)?")


def duration_ms(text: str) -> int:
    """``15m``, ``900s``, ``1h``, ``250ms``; a bare number is milliseconds (Kafka's unit)."""
    match = _DURATION.fullmatch(text.strip().lower())
    if match is None:
        raise argparse.ArgumentTypeError(
            f"not a duration: {text!r} (e.g. 15m, 900s, 1h, or 900000 for milliseconds)"
        )
    number, unit = match.groups()
    return round(float(number) * _UNITS[unit or "ms"])


def timestamp_ms(text: str) -> int:
    """Epoch milliseconds, or an ISO 8601 time (UTC unless it says otherwise)."""
    if text.strip().isdigit():
        return int(text)
    try:
        moment = datetime.fromisoformat(text.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"not a time: {text!r} (epoch milliseconds, or ISO 8601 such as 2024-05-01T12:00:00Z)"
        ) from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return round(moment.timestamp() * 1000)


def add_options(p: argparse.ArgumentParser) -> None:
    """The options of ``producers --transactions``."""
    group = p.add_argument_group("transactions (with --transactions)")
    group.add_argument(
        "--transactions",
        action="store_true",
        help="list every transaction (committed, aborted, open) and the hanging ones, with "
        "the kafka-transactions.sh line that aborts each; the offline twin of "
        "kafka-transactions.sh find-hanging",
    )
    group.add_argument(
        "--hanging-after",
        type=duration_ms,
        metavar="DURATION",
        help="an open transaction older than this hangs: 15m, 900s, 900000 (ms) "
        "(default 15m, transaction.max.timeout.ms's default)",
    )
    group.add_argument(
        "--now",
        type=timestamp_ms,
        metavar="TIME",
        help="measure open transactions against this time (epoch ms or ISO 8601) rather than "
        "the partition's last batch timestamp",
    )
    group.add_argument(
        "--bootstrap-server",
        metavar="HOST:PORT",
        help=f"put in the printed abort commands (default the placeholder {BROKER_PLACEHOLDER})",
    )
    group.add_argument("--json", action="store_true", help="one JSON document")
    group.add_argument(
        "-q", "--quiet", action="store_true", help="print only the hanging transactions"
    )


# --- output -----------------------------------------------------------------------------------


def abort_command(result: PartitionTransactions, txn: Transaction, bootstrap: str | None) -> str:
    """The line that aborts ``txn``. The syntax is KIP-664's tool, from Kafka's
    tools/src/main/java/org/apache/kafka/tools/TransactionsCommand.java: --bootstrap-server
    belongs to the tool, before the sub-command; ``AbortTransactionCommand`` ("abort") takes
    --topic, --partition and, for brokers on 3.0 or later, --start-offset alone (it finds the
    producer id, epoch and coordinator epoch with DescribeProducers)."""
    topic = result.topic if result.topic is not None else "TOPIC"
    partition = result.partition if result.partition is not None else "PARTITION"
    return (
        f"kafka-transactions.sh --bootstrap-server {bootstrap or BROKER_PLACEHOLDER} abort "
        f"--topic {topic} --partition {partition} --start-offset {txn.first_offset}"
    )


def transaction_json(
    result: PartitionTransactions, txn: Transaction, bootstrap: str | None
) -> dict[str, Any]:
    return {
        "producerId": txn.producer_id,
        "producerEpoch": txn.producer_epoch,
        "status": txn.status.value,
        "firstOffset": txn.first_offset,
        "lastOffset": txn.last_offset,
        "markerOffset": txn.marker_offset,
        "markerType": txn.marker_type,
        "firstTimestamp": txn.first_timestamp,
        "endTimestamp": txn.end_timestamp,
        "durationMs": txn.duration_ms,
        "batches": txn.batches,
        "records": txn.records,
        "bytes": txn.bytes,
        "hanging": txn.hanging,
        "abortCommand": abort_command(result, txn, bootstrap) if txn.hanging else None,
    }


def summary_json(result: PartitionTransactions) -> dict[str, Any]:
    def count(status: TxnStatus) -> int:
        return len(result.with_status(status))

    return {
        "topic": result.topic,
        "partitionIndex": result.partition,
        "logStartOffset": result.log_start_offset,
        "logEndOffset": result.log_end_offset,
        "lastTimestamp": result.last_timestamp,
        # which clock open transactions were measured against
        "clock": "now" if result.now is not None else "log",
        "referenceTimestamp": result.reference_timestamp,
        "hangingAfterMs": result.hanging_after_ms,
        "producers": len(result.producers),
        "committed": count(TxnStatus.COMMITTED),
        "aborted": count(TxnStatus.ABORTED),
        "open": count(TxnStatus.OPEN),
        "unknown": count(TxnStatus.UNKNOWN),
        "hanging": len(result.hanging()),
        "emptyCommitted": sum(p.empty_committed for p in result.producers.values()),
        "emptyAborted": sum(p.empty_aborted for p in result.producers.values()),
        "lastStableOffset": result.last_stable_offset,
        "damaged": [a.as_json() for a in result.damaged],
        "otherAnomalies": result.other_anomalies,
        "truncatedBytes": result.truncated_bytes,
        "ok": result.ok,
    }


def jsonl_rows(result: PartitionTransactions, bootstrap: str | None) -> Iterator[dict[str, Any]]:
    """One object per transaction, then the partition's summary."""
    name = result.path.name
    for txn in result.transactions():
        yield {"type": "transaction", "partition": name, **transaction_json(result, txn, bootstrap)}
    yield {"type": "summary", "partition": name, **summary_json(result)}


def document(results: Iterable[PartitionTransactions], bootstrap: str | None) -> dict[str, Any]:
    """The ``--json`` document: every partition with its transactions."""
    partitions = [
        {
            "partition": r.path.name,
            **summary_json(r),
            "transactions": [transaction_json(r, t, bootstrap) for t in r.transactions()],
        }
        for r in results
    ]
    return {
        "partitions": partitions,
        "hanging": sum(p["hanging"] for p in partitions),
        "ok": all(p["ok"] for p in partitions),
    }


def format_duration(ms: int | None) -> str:
    if ms is None:
        return "-"
    sign, ms = ("-", -ms) if ms < 0 else ("", ms)
    if ms < 1000:
        return f"{sign}{ms}ms"
    seconds, millis = divmod(ms, 1000)
    minutes, seconds = divmod(seconds, 60)
    hours, minutes = divmod(minutes, 60)
    fraction = f".{millis:03d}" if millis else ""
    if hours:
        return f"{sign}{hours}h{minutes:02d}m{seconds:02d}{fraction}s"
    if minutes:
        return f"{sign}{minutes}m{seconds:02d}{fraction}s"
    return f"{sign}{seconds}{fraction}s"


_COLUMNS = (
    "PRODUCER_ID",
    "EPOCH",
    "STATUS",
    "FIRST_OFFSET",
    "LAST_OFFSET",
    "MARKER",
    "DURATION",
    "BATCHES",
    "RECORDS",
    "BYTES",
)


def _row(txn: Transaction) -> tuple[str, ...]:
    status = "HANGING" if txn.hanging else txn.status.value
    return (
        str(txn.producer_id),
        str(txn.producer_epoch),
        status,
        str(txn.first_offset),
        str(txn.last_offset),
        "-" if txn.marker_offset is None else f"{txn.marker_type or '?'}@{txn.marker_offset}",
        format_duration(txn.duration_ms),
        str(txn.batches),
        str(txn.records),
        str(txn.bytes),
    )


def print_transactions(
    result: PartitionTransactions, out: TextIO, *, bootstrap: str | None, quiet: bool = False
) -> None:
    name = result.path.name
    clock = (
        f"--now {iso_ms(result.now)}"
        if result.now is not None
        else f"the log's last batch timestamp {iso_ms(result.last_timestamp)}"
    )
    transactions = result.transactions()
    if not transactions and not result.damaged:
        if not quiet:  # a partition no transactional producer wrote to: one line
            out.write(f"{name}: no transactions\n")
        return
    if not quiet:
        out.write(
            f"{name}: {len(transactions)} transaction(s) of {len(result.producers)} "
            f"transactional producer(s); durations by the batches' timestamps, open ones "
            f"measured against {clock}\n"
        )
        rows = [_COLUMNS, *(_row(t) for t in transactions)]
        if len(rows) > 1:
            widths = [max(len(r[i]) for r in rows) for i in range(len(_COLUMNS))]
            for r in rows:
                out.write("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip())
                out.write("\n")
        for pid in sorted(result.producers):
            producer = result.producers[pid]
            if producer.empty_committed or producer.empty_aborted:
                out.write(
                    f"empty: producer {pid}: {producer.empty_committed} COMMIT and "
                    f"{producer.empty_aborted} ABORT marker(s) with no data here\n"
                )
        for anomaly in result.damaged:
            out.write(f"damaged: {anomaly}\n")
    for txn in result.hanging():
        out.write(
            f"HANGING: {name}: producer {txn.producer_id} epoch {txn.producer_epoch}: open "
            f"since offset {txn.first_offset} ({iso_ms(txn.first_timestamp)}) for "
            f"{format_duration(txn.duration_ms)}, longer than "
            f"{format_duration(result.hanging_after_ms)}; to abort it:\n"
            f"  {abort_command(result, txn, bootstrap)}\n"
        )
    if not quiet:
        out.write(f"{name}: {_verdict(result)}\n")


def _verdict(result: PartitionTransactions) -> str:
    parts = [
        f"{len(result.with_status(status))} {status.value}"
        for status in TxnStatus
        if status is not TxnStatus.UNKNOWN or result.with_status(status)
    ]
    parts.append(f"{result.empty_transactions} empty")
    hanging = len(result.hanging())
    text = ", ".join(parts)
    stable = result.last_stable_offset
    if stable is not None:
        text += f"; last stable offset {stable}"
    return f"{text}; {hanging} HANGING" if hanging else f"{text}; none hanging"


def print_all(results: Iterator[PartitionTransactions], args: argparse.Namespace) -> int:
    """Print every partition as the options ask; the exit status (1: one hangs, or a batch
    is damaged)."""
    bootstrap = args.bootstrap_server
    if args.json:
        collected = list(results)
        sys.stdout.write(json.dumps(document(collected, bootstrap), indent=2) + "\n")
        return 0 if all(r.ok for r in collected) else 1
    ok = True
    for result in results:
        if args.jsonl:
            for row in jsonl_rows(result, bootstrap):
                sys.stdout.write(json.dumps(row, separators=(",", ":")) + "\n")
        else:
            print_transactions(result, sys.stdout, bootstrap=bootstrap, quiet=args.quiet)
        ok = ok and result.ok
    return 0 if ok else 1
