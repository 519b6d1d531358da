"""``kafka-format``, the command line: one module a command (argparse and printing only),
``app`` to dispatch, ``args`` and ``text`` for what the commands share."""

from .app import build_parser, entry_point, main

__all__ = ["build_parser", "entry_point", "main"]
