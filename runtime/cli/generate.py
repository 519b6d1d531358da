"""The command line of ``kafka-format generate`` (the work is :func:`generate.generate_log_dir`):
its options, sizes such as ``2GiB`` on them, and a progress line for big benchmark logs."""

from __future__ import annotations

import argparse
import re
import sys
import time
from pathlib import Path

from ..format.codecs import Codec
from ..write.generate import (
    DEFAULT_BATCH_SIZE,
    DEFAULT_LINGER_MS,
    DEFAULT_RECORDS,
    DEFAULT_SEGMENT_BYTES,
    EXPECTED_FILE,
    TOPIC_KINDS,
    generate_log_dir,
)
from ..write.generate_payloads import PAYLOAD_TOPICS
from .args import UsageError, non_negative_int, positive_int

__all__ = ["EPILOG", "parse_size", "register"]

_SIZE = re.compile(r"\s*([0-9]+(?:\.[0-9]+)?)\s*([kmgt]?)(i?b?)\s*", re.IGNORECASE)


def parse_size(text: str) -> int:
    """``2GiB``, ``512MiB``, ``64k``, ``1.5G``, ``1000000`` -> bytes (powers of 1024)."""
    match = _SIZE.fullmatch(text)
    if not match:
        raise argparse.ArgumentTypeError(f"not a size: {text!r} (try 2GiB, 512MiB, 65536)")
    number, unit, _ = match.groups()
    scale = 1024 ** " kmgt".index(unit.lower() or " ")
    value = int(float(number) * scale)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"size must be positive: {text!r}")
    return value


EPILOG = f"""\
scenarios (--topics): {", ".join(TOPIC_KINDS)} (default: all)

payloads: {", ".join(PAYLOAD_TOPICS)} hold values framed as Confluent's serializers frame them
(Avro, Protobuf, JSON Schema; schemas evolving over time, a few plain JSON records among them);
with any of them, _schemas-0 holds the Schema Registry's store of those schemas
(dump --value-decoder schema-registry decodes them). --no-payloads leaves them out.

producers: keyed records go to the partition their key hashes to (murmur2, as the Java
client's default partitioner); records without a key follow the uniform sticky partitioner
(Kafka 3.3+), round-robin for the magic 0/1 era clients. Each producer batches per partition
by --batch-size (batch.size) and --linger-ms (linger.ms); see docs/generate.md.

examples:
  kafka-format generate demo-logs
  kafka-format generate demo-logs --seed 7 --topics orders,users --partitions 2 --records 2000
  kafka-format generate busy-logs --topics orders --rate 500000 --segment-bytes 1MiB
  kafka-format generate slow-logs --topics clicks --rate 50 --linger-ms 0
  kafka-format generate demo-logs --topics payments,customers   # payloads and _schemas-0
  kafka-format generate bench-logs --size 2GiB                    # the benchmarks' shape
  kafka-format generate bench-logs --size 512MiB --codec zstd --segment-bytes 128MiB
  kafka-format generate live-logs --live     # active segments as a running broker leaves them
  kafka-format verify demo-logs && kafka-format dump --jsonl demo-logs/orders-0 | sha256sum

Exit status: 0 when DIR was written, 1 when it could not be, 2 for bad arguments (DIR not a
new or empty directory, a scenario or value the generator does not know).
"""


def register(sub) -> None:
    """Add ``generate`` to the command line."""
    g = sub.add_parser(
        "generate",
        help="write a realistic Kafka log directory (for demos, tests and benchmarks)",
        description="Write a Kafka log directory as producers and a broker write it: "
        "records placed by key as the default partitioner does and batched by batch.size "
        "and linger.ms, topics and partitions, segments rolled at a size, .index/.timeindex "
        "entries every index-interval bytes, transactions with .txnindex, producer "
        "snapshots, every codec and magic; plus EXPECTED.json describing what was written. "
        "Same seed, same bytes.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=EPILOG,
    )
    g.add_argument("dir", metavar="DIR", help="log directory to create (must be empty)")
    g.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    g.add_argument(
        "--topics",
        type=lambda text: [t for t in text.split(",") if t],
        help="comma-separated scenarios to write",
    )
    g.add_argument("--partitions", type=positive_int, help="partitions per topic")
    g.add_argument(
        "--records",
        type=positive_int,
        default=DEFAULT_RECORDS,
        help=f"data records per partition, on average (default {DEFAULT_RECORDS})",
    )
    g.add_argument(
        "--segment-bytes",
        type=parse_size,
        help="roll segments at this size (default 32KiB; 1GiB with --size)",
    )
    g.add_argument(
        "--batch-size",
        type=_batch_size,
        default=DEFAULT_BATCH_SIZE,
        metavar="BYTES",
        help=f"the producers' batch.size (default {DEFAULT_BATCH_SIZE}; at most half "
        "of --segment-bytes; 0: a batch per record)",
    )
    g.add_argument(
        "--linger-ms",
        type=non_negative_int,
        default=DEFAULT_LINGER_MS,
        metavar="MS",
        help=f"the producers' linger.ms (default {DEFAULT_LINGER_MS}, Kafka 4.0's; 0 before)",
    )
    g.add_argument(
        "--rate",
        type=_positive_float,
        metavar="RECORDS_PER_S",
        help="records per second each topic receives (default: a load moving between "
        "100 and 1,000,000/s)",
    )
    g.add_argument(
        "--size", type=parse_size, help="add topic 'bench' with about this many bytes of log"
    )
    g.add_argument(
        "--codec",
        choices=[c.name.lower() for c in Codec],
        default="none",
        help="codec of the bench batches (default none)",
    )
    g.add_argument(
        "--index-interval-bytes",
        type=positive_int,
        default=4096,
        help="log.index.interval.bytes (default 4096)",
    )
    g.add_argument(
        "--payloads",
        action=argparse.BooleanOptionalAction,
        default=True,
        help=f"write the payload topics ({', '.join(PAYLOAD_TOPICS)}) and _schemas-0 among "
        "the default scenarios (default: yes)",
    )
    g.add_argument(
        "--live",
        action="store_true",
        help="leave active segments' indexes preallocated, as a running broker has them",
    )
    g.add_argument(
        "--construct",
        action="store_true",
        help="build every batch with the Construct builders, bench included (slow)",
    )
    g.set_defaults(run=_run_generate)


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a positive number, got {text!r}")
    return value


def _batch_size(text: str) -> int:
    return 0 if text.strip() == "0" else parse_size(text)


class _Progress:
    """Bytes written so far on stderr, at most every half second, when it is a terminal."""

    def __init__(self, total: int) -> None:
        self.total = total
        self.done = 0
        self.shown = 0.0

    def __call__(self, grown: int) -> None:
        self.done += grown
        now = time.monotonic()
        if now - self.shown >= 0.5:
            self.shown = now
            mib = 1024 * 1024
            sys.stderr.write(f"\rgenerate: {self.done / mib:,.0f} / {self.total / mib:,.0f} MiB")
            sys.stderr.flush()

    def finish(self) -> None:
        sys.stderr.write("\r\033[K")
        sys.stderr.flush()


def _say_clamps(args: argparse.Namespace) -> None:
    """One line on stderr for each value the generator takes other than as given: a producer
    batch is at most half a segment (the simulated producer's batch.size), so that segments
    hold several batches as a broker's do."""
    segment = args.segment_bytes or DEFAULT_SEGMENT_BYTES
    scenarios = bool(args.topics) if args.topics is not None else not args.size
    if scenarios and args.batch_size > segment // 2:
        print(
            f"kafka-format generate: note: --batch-size {args.batch_size} is more than half of "
            f"--segment-bytes {segment}: the producers batch at most {segment // 2} bytes",
            file=sys.stderr,
        )


def _run_generate(args: argparse.Namespace) -> int:
    root = Path(args.dir)
    if root.exists() and (not root.is_dir() or any(root.iterdir())):
        # where to write is the command line's to say: a used directory is a bad argument
        raise UsageError("exists and is not an empty directory", file=str(root))
    progress = _Progress(args.size) if args.size and sys.stderr.isatty() else None
    _say_clamps(args)
    try:
        result = generate_log_dir(
            root,
            seed=args.seed,
            topics=args.topics,
            partitions=args.partitions,
            records=args.records,
            segment_bytes=args.segment_bytes,
            size_bytes=args.size,
            codec=Codec[args.codec.upper()],
            index_interval_bytes=args.index_interval_bytes,
            clean_shutdown=not args.live,
            fast=False if args.construct else None,
            progress=progress,
            batch_size=args.batch_size,
            linger_ms=args.linger_ms,
            rate=args.rate,
            payloads=args.payloads,
        )
    except ValueError as exc:  # a value the options allow but the generator does not know
        raise UsageError(str(exc), file=str(root)) from None
    finally:
        if progress is not None:
            progress.finish()
    total = sum(s.records for s in result.partitions.values())
    size = sum(p.stat().st_size for p in root.glob("*/*.log"))
    print(
        f"wrote {len(result.partitions)} partition{'' if len(result.partitions) == 1 else 's'}, "
        f"{total:,} records, {size:,} bytes of log "
        f"to {root} (expected contents in {root / EXPECTED_FILE})"
    )
    return 0
