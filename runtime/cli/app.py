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
