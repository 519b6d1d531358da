"""``kafka-format``: dump, verify, find, inspect and generate Kafka log files without a broker.

Each sub-command lives in a module of its own; this one only parses arguments and turns every
error into one line on stderr and a non-zero exit status, never a traceback.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from ..errors import KafkaFormatError

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


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="kafka-format",
        description="Read Apache Kafka's log segments, indexes and snapshots without a broker.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="Run `kafka-format COMMAND --help` for the options and examples of each command.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for name in COMMAND_MODULES:
        importlib.import_module(f"{__package__}.{name}").register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        if not _skip_what_the_broker_skips(args):
            return 0  # every path given is one the broker never reads; each was named
        if args.command != "warm":  # which says what it compiled itself
            from ..kernels.compile_notice import install

            install()  # one line on stderr if the kernels compile into a cold cache
        return args.run(args)
    except KafkaFormatError as exc:
        print(f"kafka-format: error: {exc}", file=sys.stderr)
        return 1
    except BrokenPipeError:
        raise
    except OSError as exc:
        name = getattr(exc, "filename", None)
        print(
            f"kafka-format: error: {name + ': ' if name else ''}{exc.strerror or exc}",
            file=sys.stderr,
        )
        return 1
    except KeyboardInterrupt:
        return 130


#: Commands that read data, and the argument holding their paths.
_READING_COMMANDS = {"dump": "files", "verify": "paths", "stats": "paths"}


def _skip_what_the_broker_skips(args: argparse.Namespace) -> bool:
    """Say once per path what the broker's directory rules keep from being read (``-delete``
    directories, ``.swap`` files...), and drop such paths given on the command line; False
    when nothing is left to read."""
    attr = _READING_COMMANDS.get(args.command)
    paths = list(getattr(args, attr, None) or ()) if attr else []
    listed = getattr(args, "files_opt", None) if attr == "files" else None
    extra = [f for f in listed.split(",") if f] if listed else []
    if not paths and not extra:
        return True
    from ..read.sources import skipped_itself, skipped_paths

    for item in skipped_paths([*paths, *extra]):
        print(f"kafka-format: skipped {item.path}: {item.reason}", file=sys.stderr)
    kept = [p for p in paths if not skipped_itself(p)]
    kept_extra = [f for f in extra if not skipped_itself(f)]
    setattr(args, attr, kept)
    if listed:
        args.files_opt = ",".join(kept_extra)
    return bool(kept or kept_extra)


def entry_point() -> None:
    try:
        status = main()
        sys.stdout.flush()
    except BrokenPipeError:
        # `kafka-format dump ... | head` closes the pipe early: not an error worth a traceback.
        import os

        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        status = 0
    sys.exit(status)


if __name__ == "__main__":
    entry_point()
