"""Argument types every command shares."""

from __future__ import annotations

import argparse
import fnmatch
import functools
import os
import sys
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from ..cpus import ENV_VAR, using_threads
from ..errors import KafkaFormatError
from ..files.names import parse_partition_dir_name
from ..read.sources import partition_dirs


class UsageError(KafkaFormatError):
    """A command line that cannot be carried out as given, whatever the files hold (a path
    of the wrong kind for the command, options that do not go together): exit status 2, in
    argparse's own words, ``kafka-format COMMAND: error: ...``."""


#: What ``-`` names as a path: standard input (a pipe, a FIFO, or a file redirected in).
STDIN = "/dev/stdin"


def stdin_path(path: str) -> str:
    """``path``, or for ``-`` standard input's path; a :class:`UsageError` when standard
    input is a terminal (a command would wait for a log to be typed in)."""
    if path != "-":
        return path
    try:
        terminal = sys.stdin is None or sys.stdin.isatty()
    except (AttributeError, ValueError):
        terminal = True
    if terminal:
        raise UsageError(
            "'-' reads a log from standard input, which is a terminal here: pipe or redirect "
            "one in (cat 00000000000000000000.log | kafka-format verify -)"
        )
    return STDIN if os.path.exists(STDIN) else "/dev/fd/0"


def positive_int(text: str) -> int:
    value = int(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be positive, got {value}")
    return value


def non_negative_int(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, got {value}")
    return value


# --- threads (dump, verify, stats) -----------------------------------------------------------

Run = Callable[[argparse.Namespace], int]


def add_threads(parser, only: str = "") -> None:
    """``--threads N``, for a command that decodes records in bulk (``only``: where it does,
    e.g. "with --jsonl"); its ``run`` is to be wrapped in :func:`threaded`."""
    parser.add_argument(
        "--threads",
        type=positive_int,
        metavar="N",
        help=f"{only + ': ' if only else ''}threads decoding records (default: the CPUs this "
        f"process may use, or ${ENV_VAR})",
    )


def threaded(run: Run) -> Run:
    """``run`` with ``--threads`` as the default of every read it makes, however deep (the
    reads of the analysis layers take no ``threads`` of their own). A bad
    ``$KAFKA_FORMAT_THREADS`` is refused before any command runs (``app.main``)."""

    @functools.wraps(run)
    def run_threaded(args: argparse.Namespace) -> int:
        with using_threads(getattr(args, "threads", None)):
            return run(args)

    return run_threaded


def parse_timestamp(text: str) -> int:
    """Epoch milliseconds, or an ISO-8601 date-time (UTC when it names no zone)."""
    stripped = text.strip()
    if stripped.lstrip("-").isdigit():
        return int(stripped)
    try:
        moment = datetime.fromisoformat(stripped)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is neither epoch milliseconds nor an ISO-8601 date-time "
            "(e.g. 2024-05-01T12:00:00Z)"
        ) from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return int(moment.timestamp() * 1000)


#: ``kafka-get-offsets --time`` words and ``ListOffsetsRequest``'s special timestamps.
OFFSET_SPECS = {"latest": -1, "earliest": -2, "max-timestamp": -3}


def parse_timestamp_spec(text: str) -> int:
    """A timestamp as :func:`parse_timestamp` reads it, or one of ListOffsets' special
    values: ``latest`` / -1, ``earliest`` / -2, ``max-timestamp`` / -3."""
    word = text.strip().lower()
    if word in OFFSET_SPECS:
        return OFFSET_SPECS[word]
    value = parse_timestamp(text)
    if value < 0 and value not in OFFSET_SPECS.values():
        raise argparse.ArgumentTypeError(
            f"{text!r}: a negative timestamp must be -1 (latest), -2 (earliest) or "
            "-3 (max-timestamp)"
        )
    return value


def decoder_class(text: str) -> str:
    """kafka-dump-log's ``--key-decoder-class`` / ``--value-decoder-class``: a Java class name
    Kafka ships (``kafka.serializer.StringDecoder``...), mapped to our decoder's name; a
    ValueError of one line for any other class."""
    from .text import DECODER_CLASSES

    name = text.strip()
    if name in DECODER_CLASSES:
        return DECODER_CLASSES[name]
    raise ValueError(
        f"unknown decoder class {text!r}: only Kafka's own decoders are known here "
        "(StringDecoder, DefaultDecoder, IntegerDecoder, LongDecoder, of kafka.serializer or "
        "org.apache.kafka.tools.api); or use --key-decoder / --value-decoder"
    )


# --- ranges and topics (dump, find, verify, stats) -------------------------------------------

#: kcat's ``-o`` words; ``stored`` needs a consumer group's committed offsets, which no log has.
KCAT_WORDS = ("beginning", "end")
#: Start offset meaning "at the log end": nothing is there yet.
AT_END = 1 << 62


def kcat_offset(text: str) -> tuple[str, int | None]:
    """kcat's ``-o``: ``beginning``, ``end``, ``<offset>``, ``-<N>`` (N before the end of each
    partition), ``s@<ms>`` (from the first record with timestamp >= ms), ``e@<ms>`` (up to,
    not including, the first record with timestamp >= ms). Returns (bound, value): bound is
    ``start_offset``, ``start_timestamp`` or ``end_timestamp``; ``beginning`` is no bound."""
    word = text.strip()
    if word == "beginning":
        return "start_offset", None
    if word in ("end", "-0"):
        return "start_offset", AT_END
    if word == "stored":
        raise argparse.ArgumentTypeError(
            "'stored' is a consumer group's committed offset, which a log does not hold: give "
            "an offset, -N, s@<ms>, e@<ms>, beginning or end"
        )
    for prefix, bound in (("s@", "start_timestamp"), ("e@", "end_timestamp")):
        if word.startswith(prefix):
            return bound, _epoch_ms(word[2:], text)
    try:
        return "start_offset", int(word)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not an offset: give <offset>, -N (N before the end), s@<ms>, e@<ms>, "
            "beginning or end (kcat's -o)"
        ) from None


def _epoch_ms(value: str, text: str) -> int:
    if not value.strip().isdigit():
        raise argparse.ArgumentTypeError(
            f"{text!r}: the timestamp after s@ / e@ is epoch milliseconds (e.g. s@1714564800000)"
        )
    return int(value)


def range_bound(text: str) -> tuple[str, int]:
    """``--from`` / ``--to``: an offset (``1234``), or a timestamp (``@<ms>`` or ISO-8601 such
    as ``2024-01-01T00:00:00Z``, UTC when it names no zone). Returns ("offset" | "timestamp",
    value)."""
    word = text.strip()
    if word.isdigit():
        return "offset", int(word)
    if word.startswith("@"):
        return "timestamp", _epoch_ms(word[1:], text)
    if word.startswith("-"):
        raise argparse.ArgumentTypeError(
            f"{text!r}: an offset is 0 or more (kcat's -o -N counts from the end)"
        )
    try:
        return "timestamp", parse_timestamp(word)
    except argparse.ArgumentTypeError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is neither an offset, nor @<epoch ms>, nor an ISO-8601 date-time "
            "(e.g. 2024-01-01T00:00:00Z)"
        ) from None


def topic_patterns(text: str) -> list[str]:
    """``--topic``: topic names or glob patterns (``orders``, ``orders-*``), comma-separated."""
    patterns = [p.strip() for p in text.split(",") if p.strip()]
    if not patterns:
        raise argparse.ArgumentTypeError("give a topic name or a glob pattern")
    return patterns


def add_topic_filter(parser) -> None:
    """``--topic`` and ``--partition``, for a command reading log directories."""
    parser.add_argument(
        "--topic",
        type=topic_patterns,
        action="extend",
        metavar="PATTERN",
        help="in a log dir, only the partitions of topics matching these names or globs "
        "(comma-separated, repeatable; e.g. 'orders,clicks-*')",
    )
    parser.add_argument(
        "--partition",
        type=non_negative_int,
        action="append",
        metavar="N",
        help="in a log dir, only partition N (repeatable)",
    )


def select_partitions(
    paths: list[str], topics: list[str] | None, partitions: list[int] | None
) -> list[str]:
    """The paths, each log dir or partition dir kept to the partitions ``--topic`` and
    ``--partition`` select; files are kept as they are. A ValueError of one line when a
    directory holds none of them."""
    if not topics and partitions is None:
        return list(paths)

    def wanted(directory: Path) -> bool:
        parsed = parse_partition_dir_name(directory.name)
        return (not topics or any(fnmatch.fnmatchcase(parsed.topic, p) for p in topics)) and (
            partitions is None or parsed.partition in partitions
        )

    chosen: list[str] = []
    for path in paths:
        if not os.path.isdir(path):
            chosen.append(path)
            continue
        subs = partition_dirs(Path(path))
        candidates = subs if subs else [Path(path)]
        try:
            kept = [str(p) for p in candidates if wanted(p)]
        except KafkaFormatError:  # a directory named like no partition: not ours to filter
            kept = [path]
        if not kept:
            what = " and ".join(
                part
                for part in (
                    f"topic {', '.join(topics)}" if topics else "",
                    f"partition {', '.join(map(str, partitions))}" if partitions else "",
                )
                if part
            )
            raise ValueError(f"{path}: no partition directory of {what} here")
        chosen.extend(kept)
    return chosen


def topic_paths(args: argparse.Namespace) -> list[str]:
    """``args.paths`` kept to what ``--topic`` / ``--partition`` select; a
    :class:`UsageError` when a directory holds none of them."""
    try:
        return select_partitions(args.paths, args.topic, args.partition)
    except ValueError as exc:
        raise UsageError(str(exc)) from None


# --- a group's or a transactional id's records (dump, find) ---------------------------------


def add_owner_filter(parser) -> None:
    """``--group`` / ``--transactional-id`` and ``--partitions``, for a command that can be
    pointed at a whole log dir and find the coordinator's partition in it."""
    owners = parser.add_argument_group(
        "a consumer group's or a transactional id's records (FILE: a log dir)"
    )
    which = owners.add_mutually_exclusive_group()
    which.add_argument(
        "--group",
        metavar="GROUP",
        help="the __consumer_offsets partition holding GROUP (Kafka's abs(hashCode) %% "
        "partitions), only GROUP's records, decoded",
    )
    which.add_argument(
        "--transactional-id",
        metavar="ID",
        help="likewise the __transaction_state partition and records of transactional id ID",
    )
    owners.add_argument(
        "--partitions",
        type=positive_int,
        metavar="N",
        help="the internal topic's partition count (default: from __cluster_metadata in the "
        "log dir, else 50, Kafka's default)",
    )


def owner_target(args: argparse.Namespace, paths: list[str]) -> tuple[list[str], object]:
    """The partition directory holding ``--group`` / ``--transactional-id``'s records and the
    ``KeyOwner`` that picks them; ``(paths, None)`` without those options. One line on stderr
    says where the records are and how the partition count was found. A :class:`UsageError`
    for paths that are not one directory, a :class:`KafkaFormatError` when this log dir does
    not hold the partition (another broker's may)."""
    owner = getattr(args, "group", None)
    txn = getattr(args, "transactional_id", None)
    if owner is None and txn is None:
        return paths, None
    # Imported here: the message schemas cost every other command start-up time.
    from ..messages.coordinator_lookup import Coordinated, KeyOwner, locate

    topic = Coordinated.GROUP if owner is not None else Coordinated.TRANSACTIONAL_ID
    owner = owner if owner is not None else txn
    flag = "--group" if topic is Coordinated.GROUP else "--transactional-id"
    if len(paths) != 1 or not os.path.isdir(paths[0]):
        raise UsageError(f"{flag} reads one log dir (or one {topic.value}-N directory)")
    try:
        key = KeyOwner.of(owner)
    except ValueError as exc:
        raise UsageError(f"{flag}: {exc}") from None
    path = paths[0]
    try:
        parsed = parse_partition_dir_name(Path(path).name)
    except KafkaFormatError:
        parsed = None
    if parsed is not None and parsed.topic == topic.value:
        return [path], key  # the partition itself: its records of the owner
    try:
        located = locate(path, topic, owner, partitions=args.partitions)
    except ValueError as exc:
        raise UsageError(f"{flag}: {exc}") from None
    if located.directory is None:
        raise KafkaFormatError(
            f"{located.describe()}, which this log dir does not hold (another broker's may)",
            file=path,
        )
    print(f"note: {located.describe()}", file=sys.stderr)
    return [str(located.directory)], located.owner
