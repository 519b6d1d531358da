"""``kafka-format``: dump, verify, find, inspect and generate Kafka log files without a broker.

Each sub-command lives in a module of its own; this one only parses arguments and turns every
error into one line on stderr and a non-zero exit status, never a traceback.
"""

from __future__ import annotations

import argparse
import fnmatch
import importlib
import importlib.metadata
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from ..cpus import default_threads
from ..errors import KafkaFormatError
from .args import UsageError, stdin_path
from .stdio import guarded_stdio

#: Modules of this package that each add one sub-command with ``register(subparsers)``.
COMMAND_MODULES = (
    "dump",
    "inspect",
    "find",
    "verify",
    "generate",
    "producers",
    "compact",
    "stats",
    "recover",
    "warm",
)


class _Parser(argparse.ArgumentParser):
    """argparse's parser, except that arguments no option takes are the command's error
    (``kafka-format dump: error: unrecognized arguments: ...``), as every other usage error
    of a command is, not the top-level parser's."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.commands: dict[str, argparse.ArgumentParser] = {}

    def parse_args(self, args=None, namespace=None):  # type: ignore[override]
        parsed, extra = self.parse_known_args(args, namespace)
        if extra:
            parser = self.commands.get(getattr(parsed, "command", None) or "", self)
            parser.error(f"unrecognized arguments: {' '.join(extra)}")
        return parsed


def _version() -> str:
    """The installed distribution's version (what ``pip show kafka-format`` says)."""
    try:
        return importlib.metadata.version("kafka-format")
    except importlib.metadata.PackageNotFoundError:
        return "(not installed)"


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="kafka-format",
        description="Read Apache Kafka's log segments, indexes and snapshots without a broker.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="Run `kafka-format COMMAND --help` for the options and examples of each command.",
    )
    parser.add_argument(
        "--version",
        action="version",
        version=f"kafka-format {_version()}",
        help="print the version and exit",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for name in COMMAND_MODULES:
        importlib.import_module(f"{__package__}.{name}").register(sub)
    parser.commands = dict(sub.choices)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; its exit status: 0 healthy, 1 damage (or the command could not read
    what it was given), 2 a command line it cannot carry out as given."""
    parser = build_parser()
    args = parser.parse_args(argv)
    with guarded_stdio():
        return _run(args)


def _run(args: argparse.Namespace) -> int:
    # Two forms of error line, each the same in every command: the command's own, argparse's
    # `kafka-format COMMAND: error: ...` (a bad command line, an input it cannot read), and
    # a finding in the data, `error: FILE @POSITION (base offset N): cause`.
    prefix = f"kafka-format {args.command}: error:"
    try:
        # A bad $KAFKA_FORMAT_THREADS is a usage error, whatever the command (--threads wins).
        if getattr(args, "threads", None) is None:
            default_threads()
        _standard_input(args)
    except (ValueError, UsageError) as exc:
        print(f"{prefix} {exc}", file=sys.stderr)
        return 2
    try:
        if not _skip_what_the_broker_skips(args):
            return 0  # every path given is one the broker never reads; each was named
        if args.command != "warm":  # which says what it compiled itself
            from ..kernels.compile_notice import install

            install()  # one line on stderr if the kernels compile into a cold cache
        return args.run(args)
    except UsageError as exc:
        print(f"{prefix} {exc}", file=sys.stderr)
        return 2
    except KafkaFormatError as exc:
        # Damage at a place in the data is the finding every command writes alike, whether
        # it stops the command or not; anything else is the command's own error.
        finding = exc.position is not None
        print(f"error: {exc}" if finding else f"{prefix} {exc}", file=sys.stderr)
        return 1
    except OSError as exc:
        name = getattr(exc, "filename", None)
        print(f"{prefix} {name + ': ' if name else ''}{exc.strerror or exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


#: The argument holding the paths each command reads (a list, or one path).
_PATH_ARGUMENTS = {
    "dump": "files",
    "verify": "paths",
    "stats": "paths",
    "find": "directory",
    "inspect": "file",
    "producers": "dir",
    "recover": "src",
}


def _standard_input(args: argparse.Namespace) -> None:
    """``-`` as a path: standard input, read as ``/dev/stdin`` (a pipe, a FIFO or a
    redirected file), which is the name the output gives it."""
    attr = _PATH_ARGUMENTS.get(args.command)
    value = getattr(args, attr, None) if attr else None
    if isinstance(value, str):
        setattr(args, attr, stdin_path(value))
    elif value:
        setattr(args, attr, [stdin_path(v) for v in value])
    listed = getattr(args, "files_opt", None)
    if listed:
        args.files_opt = ",".join(stdin_path(f) for f in listed.split(","))


#: Commands that read data, and the argument holding their paths (find's: one path).
_READING_COMMANDS = {"dump": "files", "verify": "paths", "stats": "paths", "find": "directory"}


def _skip_what_the_broker_skips(args: argparse.Namespace) -> bool:
    """Say once per path what the broker's directory rules keep from being read (``-delete``
    directories, ``.swap`` files...), and drop such paths given on the command line; False
    when nothing is left to read. With ``--topic``, only what belongs to those topics."""
    attr = _READING_COMMANDS.get(args.command)
    value = getattr(args, attr, None) if attr else None
    single = isinstance(value, str)
    paths = [value] if single else list(value or ())
    listed = getattr(args, "files_opt", None) if attr == "files" else None
    extra = [f for f in listed.split(",") if f] if listed else []
    if not paths and not extra:
        return True
    from ..read.sources import skipped_itself, skipped_paths

    topics = getattr(args, "topic", None)
    for item in skipped_paths([*paths, *extra]):
        if topics and not _of_topics(item.path, topics):
            continue
        if single and os.path.abspath(item.path) == os.path.abspath(value):
            # A look-up needs the path it was given: refused, in one line (exit 1).
            raise KafkaFormatError(
                f"not a live segment or partition, the broker never reads it: {item.reason}",
                file=value,
            )
        print(f"kafka-format: skipped {item.path}: {item.reason}", file=sys.stderr)
    kept = [p for p in paths if not skipped_itself(p)]
    kept_extra = [f for f in extra if not skipped_itself(f)]
    if not single:
        setattr(args, attr, kept)
    if listed:
        args.files_opt = ",".join(kept_extra)
    return single or bool(kept or kept_extra)


def _of_topics(path: str, topics: list[str]) -> bool:
    """Whether a skipped path (a partition directory, or a file in one) belongs to a topic
    ``--topic`` names; a path of no partition directory is always said."""
    from ..files.names import parse_partition_dir_name

    for part in (Path(path).name, Path(path).parent.name):
        try:
            topic = parse_partition_dir_name(part).topic
        except KafkaFormatError:
            continue
        return any(fnmatch.fnmatchcase(topic, pattern) for pattern in topics)
    return True


def entry_point() -> None:
    status = main()
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        # The reader went away before the last of the output: the verdict stands, silently
        # (stdout then points at /dev/null, so the interpreter's own flush does not fail).
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    sys.exit(status)


if __name__ == "__main__":
    entry_point()
