"""``kafka-format stats``: where the bytes of a log go, as tables in the terminal or as JSON.

The work is :func:`kafka_format.runtime.stats.log_stats`; this module only prints it and sets
the exit status.
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
from typing import TextIO

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from ..analysis.stats import DEFAULT_BATCH_SIZE, DEFAULT_SAMPLE, LogStats, PartitionStats, log_stats
from ..errors import KafkaFormatError
from ..format.codecs import DEFAULT_MAX_BYTES
from ..progress import Progress, human_bytes, wanted
from ..read.sources import resolve
from .args import add_threads, add_topic_filter, positive_int, threaded, topic_paths
from .stats_schemas import add_schema_arguments, schema_parts, schemas_json, schemas_table
from .text import iso_ms

EPILOG = f"""\
examples:
  kafka-format stats /var/lib/kafka/orders-0             # one partition
  kafka-format stats /var/lib/kafka                      # every partition of a log dir
  kafka-format stats --what-if /var/lib/kafka/orders-0   # v2 and each codec: what would it save?
  kafka-format stats --json 00000000000000000000.log | jq '.total.perRecord'
  kafka-format stats /var/lib/kafka > stats.txt   # piped: plain aligned columns, none cut
  cat 00000000000000000000.log | kafka-format stats -      # standard input (or a FIFO)

Per partition (or per file outside a topic-N directory) and in total: batches, data records
(what a consumer reads; control records, the transaction markers, are counted apart), bytes,
records per batch, the magic and codec mix with each codec's compression ratio, and where the
bytes go, per record: batch and message headers (a v2 batch header takes 61 bytes, a v0/v1
message 26 / 34 with its log overhead), v2 record framing (the varints) and payload (keys,
values, header keys and values), all counted uncompressed. Then the timestamp range per
timestamp type and the producers seen.

--what-if re-encodes a sample of about --sample records (whole batches, spread evenly over each
partition; default {DEFAULT_SAMPLE}) as v2 batches, uncompressed and with gzip, snappy, lz4 and
zstd, and scales the sizes up to all the data. Batches keep their records, except runs of
uncompressed v0/v1 messages, which are grouped into batches of up to {DEFAULT_BATCH_SIZE} bytes
(the producer's batch.size); --batch-size regroups everything that way.

A damaged batch is counted, named on stderr (file, byte position) and left out of the
figures; with --strict the first one stops the command. A PATH of - (standard input), a FIFO
or /dev/stdin is read once into a temporary file in $TMPDIR (two passes read each file) and
counted as the same bytes in a file are. Exit status: 0 when every batch is whole, 1 when
some are damaged (or --strict stopped), 2 for bad arguments; the same when stdout is closed
early (| head). Field by field: docs/stats.md.
"""


def register(sub) -> None:
    """Add ``stats`` to the command line."""
    s = sub.add_parser(
        "stats",
        help="where the bytes go: records, batches, overhead, codecs, what v2 would save",
        description="Statistics of log files, partition directories or log directories: "
        "records and batches, bytes on disk, magic and codec mix, records per batch, overhead "
        "bytes per record (headers, framing) against payload, compression ratios, timestamp "
        "ranges, producers; --what-if estimates the size re-encoded as v2 with each codec.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=EPILOG,
    )
    s.add_argument("paths", nargs="+", metavar="PATH", help="log file, partition dir or log dir")
    add_topic_filter(s)  # --topic / --partition (ranges helper)
    s.add_argument("--json", action="store_true", help="print the statistics as JSON")
    s.add_argument(
        "--what-if",
        action="store_true",
        help="estimate the size re-encoded as v2, uncompressed and with each codec",
    )
    s.add_argument(
        "--sample",
        type=positive_int,
        default=DEFAULT_SAMPLE,
        metavar="N",
        help="records to re-encode for --what-if (default %(default)s)",
    )
    s.add_argument(
        "--batch-size",
        type=positive_int,
        metavar="BYTES",
        help="with --what-if: regroup records into batches of up to BYTES (batch.size) "
        "instead of keeping the source batches",
    )
    s.add_argument("--strict", action="store_true", help="stop at the first damaged batch")
    s.add_argument(
        "--no-verify-crc",
        action="store_true",
        help="take batches whose CRC does not hold as whole",
    )
    s.add_argument(
        "--max-decompressed-bytes",
        type=positive_int,
        default=DEFAULT_MAX_BYTES,
        metavar="BYTES",
        help="the most one batch may decompress to (default %(default)s)",
    )
    s.add_argument("-q", "--quiet", action="store_true", help="no progress line on stderr")
    add_schema_arguments(s)
    add_threads(s)
    s.set_defaults(run=threaded(_run_stats))


class _FileProgress:
    """``log_stats``' progress callback, drawn as the ``verify`` line is; called from the
    threads that scan partitions at once, each told to its own share of the line."""

    def __init__(self, progress: Progress) -> None:
        self.progress = progress
        self._local = threading.local()

    def __call__(self, file: str, position: int, size: int) -> None:
        local = self._local
        if not hasattr(local, "share"):
            local.share, local.file = self.progress.share(), None
        if file != local.file:
            local.file = file
            local.share.begin_file(size)
        local.share.at(position)


def _log_bytes(paths: list[str]) -> tuple[int, int]:
    total = files = 0
    for raw in paths:
        try:
            for log in resolve(raw):
                if log.path is not None:
                    total += log.path.stat().st_size
                    files += 1
        except (KafkaFormatError, OSError):  # log_stats reports it
            continue
    return total, files


def _run_stats(args: argparse.Namespace) -> int:
    args.paths = topic_paths(args)
    progress = None
    if wanted(quiet=args.quiet):
        total, files = _log_bytes(args.paths)
        progress = Progress.start("stats", total, files=files, quiet=args.quiet)
    try:
        stats = log_stats(
            args.paths,
            strict=args.strict,
            verify_crc=not args.no_verify_crc,
            what_if=args.what_if,
            sample=args.sample,
            batch_size=args.batch_size,
            max_decompressed_bytes=args.max_decompressed_bytes,
            progress=None if progress is None else _FileProgress(progress),
        )
    finally:
        if progress is not None:
            progress.close()
    parts = schema_parts(args)
    if args.json:
        out = stats.as_json()
        if parts is not None:
            out["schemas"] = schemas_json(parts)
        sys.stdout.write(json.dumps(out, indent=2) + "\n")
    else:
        # as dump names them: the damaged batches, then the truncated tails (not errors)
        for damage in stats.total.damage:
            print(f"error: {damage}", file=sys.stderr)
        for tail in stats.total.tails:
            print(f"Found {tail.size} invalid bytes at the end of {tail.file}", file=sys.stderr)
        print_stats(stats, sys.stdout)
        if parts is not None:
            _console(sys.stdout).print(schemas_table(parts, _table))
    return 0 if stats.ok else 1


# --- tables -----------------------------------------------------------------------------------


def print_stats(stats: LogStats, out: TextIO) -> None:
    """The tables: sizes, formats, time and producers, damage, and the what-if estimates."""
    console = _console(out)
    rows = [*stats.partitions, stats.total] if len(stats.partitions) > 1 else stats.partitions
    labels = [p.label for p in stats.partitions]
    names = {id(stats.total): "TOTAL"}
    for p, label in zip(stats.partitions, labels, strict=True):
        # the same topic-N under two log dirs: tell them apart by their directories
        names[id(p)] = label if labels.count(label) == 1 else (p.source or label)
    console.print(_sizes_table(rows, names))
    console.print(_formats_table(rows, names))
    console.print(_time_table(rows, names))
    damage = _damage_line(stats.total)
    if damage:
        console.print(damage)
    if stats.what_if is not None:
        console.print(_what_if_title(stats))
        console.print(_what_if_table(stats))
    rate = stats.bytes_per_second
    console.print(
        f"read {human_bytes(stats.total.bytes)} in {stats.seconds:.2f} s"
        + (f" ({human_bytes(rate)}/s)" if rate else "")
    )


def _console(out: TextIO) -> Console | _PlainConsole:
    if _isatty(out):
        return Console(file=out, force_terminal=True, highlight=False, soft_wrap=False)
    return _PlainConsole(out)


class _PlainConsole:
    """A pipe or a file gets plain text: every column whole however wide the table (no
    cell cut to fit 80 or 240 columns), aligned with spaces, no colour, no box characters,
    no trailing blanks; for grep, awk and diff."""

    def __init__(self, out: TextIO) -> None:
        self.out = out

    def print(self, item: Table | str) -> None:
        self.out.write(plain_table(item) if isinstance(item, Table) else f"{item}\n")


def plain_table(table: Table) -> str:
    """A rich table as plain text lines: title, header, a rule of dashes, the rows, then a
    blank line."""
    columns = table.columns
    cells = [[_plain(c.header), *(_plain(v) for v in c._cells)] for c in columns]
    widths = [max(len(v) for v in column) for column in cells]
    rows = []
    for i in range(len(cells[0]) if cells else 0):
        parts = []
        for column, width, values in zip(columns, widths, cells, strict=True):
            value = values[i]
            parts.append(value.rjust(width) if column.justify == "right" else value.ljust(width))
        rows.append("  ".join(parts).rstrip())
    lines = [] if table.title is None else [_plain(table.title)]
    lines += [rows[0], "-" * len(rows[0]), *rows[1:], ""] if rows else []
    return "\n".join(lines) + "\n"


def _plain(value: object) -> str:
    return value.plain if isinstance(value, Text) else str(value)


def _isatty(out: TextIO) -> bool:
    try:
        return out.isatty()
    except (AttributeError, ValueError, OSError):
        return False


def _table(title: str | None, columns: list[tuple[str, str]]) -> Table:
    table = Table(title=title, box=box.SIMPLE_HEAD, title_justify="left", pad_edge=False)
    for name, justify in columns:
        table.add_column(name, justify=justify, no_wrap=True)
    return table


def _n(value: int) -> str:
    return f"{value:,}"


def _f(value: float | None, digits: int = 1) -> str:
    return "-" if value is None else f"{value:,.{digits}f}"


def _sizes_table(rows: list[PartitionStats], names: dict[int, str]) -> Table:
    table = _table(
        "Where the bytes go (per record, uncompressed)",
        [
            ("PARTITION", "left"),
            ("BATCHES", "right"),
            ("DATA RECORDS", "right"),
            ("BYTES", "right"),
            ("REC/BATCH min/med/mean/max", "right"),
            ("HEADERS", "right"),
            ("FRAMING", "right"),
            ("PAYLOAD", "right"),
            ("OVERHEAD", "right"),
            ("ON DISK", "right"),
        ],
    )
    for p in rows:
        summary = p.records_per_batch_summary()
        per_batch = (
            "-"
            if summary is None
            else f"{summary['min']:,}/{_g(summary['median'])}/"
            f"{summary['mean']:,.1f}/{summary['max']:,}"
        )
        overhead = p.overhead_bytes / p.uncompressed_bytes if p.uncompressed_bytes else None
        on_disk = p.per_record(p.batch_bytes - p.control_bytes)
        table.add_row(
            names[id(p)],
            _n(p.batches),
            _n(p.records),
            human_bytes(p.bytes),
            per_batch,
            _f(p.per_record(p.header_bytes)),
            _f(p.per_record(p.record_framing_bytes)),
            _f(p.per_record(p.payload_bytes)),
            "-" if overhead is None else f"{overhead:.1%}",
            _f(on_disk),
        )
    return table


def _g(value: float | int) -> str:
    return f"{value:,}" if isinstance(value, int) or value == int(value) else f"{value:,.1f}"


def _formats_table(rows: list[PartitionStats], names: dict[int, str]) -> Table:
    table = _table(
        "Formats (data batches / data records; codec ratio = uncompressed / stored)",
        [("PARTITION", "left"), ("MAGIC", "left"), ("CODECS", "left")],
    )
    for p in rows:
        magic = "  ".join(
            f"v{m}: {_n(s.batches)} / {_n(s.records)}" for m, s in sorted(p.magic.items())
        )
        codecs = "  ".join(
            f"{name}: {_n(c.batches)} / {_n(c.records)}"
            + (f" ×{c.ratio:.2f}" if name != "none" and c.ratio is not None else "")
            for name, c in p.codecs.items()
        )
        table.add_row(names[id(p)], magic or "-", codecs or "-")
    return table


def _time_table(rows: list[PartitionStats], names: dict[int, str]) -> Table:
    table = _table(
        "Timestamps and producers",
        [
            ("PARTITION", "left"),
            ("TIMESTAMPS (type: records, first .. last)", "left"),
            ("PRODUCERS", "right"),
            ("IDEMPOTENT", "right"),
            ("TRANSACTIONAL", "right"),
            ("CONTROL BATCHES", "right"),
            ("CONTROL RECORDS", "right"),
        ],
    )
    for p in rows:
        stamps = "  ".join(
            f"{t}: {_n(r.records)}"
            + ("" if r.min is None else f", {iso_ms(r.min)} .. {iso_ms(r.max)}")
            for t, r in p.timestamps.items()
        )
        table.add_row(
            names[id(p)],
            stamps or "-",
            _n(len(p.producer_ids)),
            _n(p.idempotent_batches),
            _n(p.transactional_batches),
            _n(p.control_batches),
            _n(p.control_records),
        )
    return table


def _damage_line(total: PartitionStats) -> str:
    parts = []
    if total.damaged_batches:
        parts.append(
            f"{_n(total.damaged_batches)} damaged batch(es), {human_bytes(total.damaged_bytes)}"
        )
    if total.unreadable_bytes:
        parts.append(f"{human_bytes(total.unreadable_bytes)} unreadable after a bad frame")
    if total.truncated_bytes:
        parts.append(f"{human_bytes(total.truncated_bytes)} in truncated tails")
    return ("not counted: " + "; ".join(parts)) if parts else ""


def _what_if_title(stats: LogStats) -> str:
    what = stats.what_if
    assert what is not None
    batching = (
        "as the source batches"
        if what.batching == "source"
        else f"regrouped into batches of up to {_n(int(what.batching))} bytes"
    )
    fraction = what.fraction
    return (
        f"What if: the data re-encoded as v2 ({batching}), estimated from a sample of "
        f"{_n(what.sample_records)} records in {_n(what.sample_batches)} batches"
        + ("" if fraction is None else f", {fraction:.1%} of the data")
    )


def _what_if_table(stats: LogStats) -> Table:
    what = stats.what_if
    assert what is not None
    table = _table(
        None,
        [("CODEC", "left"), ("BYTES", "right"), ("VS NOW", "right"), ("SAVING", "right")],
    )
    table.add_row("now", human_bytes(what.now_bytes), "100.0%", "-")
    for e in what.estimates:
        ratio = e.ratio
        saving = e.saving
        sign = "-" if saving < 0 else ""
        table.add_row(
            f"v2 {e.codec}",
            human_bytes(e.bytes),
            "-" if ratio is None else f"{ratio:.1%}",
            f"{sign}{human_bytes(abs(saving))}"
            + ("" if not what.now_bytes else f" ({saving / what.now_bytes:.1%})"),
        )
    return table
