"""``stats --schemas``: each topic's schema history (``analysis.schema_history``) as a table,
or as the ``schemas`` list of ``stats --json``.

    kafka-format stats --schemas /var/lib/kafka                 # _schemas read from the log dir
    kafka-format stats --schemas --schema-registry export.json orders-0
"""

from __future__ import annotations

import argparse
from typing import Any

from rich.table import Table

from ..analysis.schema_history import PartSchemas, schema_history
from .dump_payloads import add_schema_registry_argument, schema_source
from .text import iso_ms

__all__ = ["add_schema_arguments", "schema_parts", "schemas_json", "schemas_table"]


def add_schema_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--schemas",
        action="store_true",
        help="each topic's schema history: the Schema Registry ids, subjects and versions its "
        "keys and values use, first and last seen, and what does not decode",
    )
    add_schema_registry_argument(parser)


def schema_parts(args: argparse.Namespace) -> list[PartSchemas] | None:
    """The schema history ``--schemas`` (or ``--schema-registry``) asks for, else None."""
    if not args.schemas and args.schema_registry is None:
        return None
    source = schema_source(args.schema_registry, args.paths)
    return schema_history(
        args.paths, source, errors="strict" if args.strict else "skip", threads=args.threads
    )


def schemas_json(parts: list[PartSchemas]) -> list[dict[str, Any]]:
    return [p.as_json() for p in parts]


def schemas_table(parts: list[PartSchemas], table: Any) -> Table:
    """One row per topic, part and schema id, in the order each was first seen; then a row
    per part for what was not framed or has no schema."""
    out = table(
        "Schema history",
        [
            ("topic", "left"),
            ("part", "left"),
            ("schema id", "right"),
            ("subject", "left"),
            ("version", "right"),
            ("type", "left"),
            ("records", "right"),
            ("undecodable", "right"),
            ("first seen", "left"),
            ("last seen", "left"),
        ],
    )
    for p in parts:
        for use in p.uses:
            known = use.subject is not None
            out.add_row(
                p.topic or "-",
                p.part,
                str(use.schema_id),
                (use.subject or "(unknown id)") + (" (deleted)" if use.deleted else ""),
                str(use.version) if known else "-",
                use.schema_type or "-",
                f"{use.records:,}",
                f"{use.undecodable:,}" if known else "-",
                _seen(use.first),
                _seen(use.last),
            )
        if p.unframed:
            out.add_row(
                p.topic or "-", p.part, "-", "(not framed)", "-", "-", f"{p.unframed:,}",
                "-", "-", "-",
            )  # fmt: skip
    return out


def _seen(seen: Any) -> str:
    if seen is None:
        return "-"
    where = f"{seen.partition}:{seen.offset}" if seen.partition is not None else str(seen.offset)
    return f"{where} {iso_ms(seen.timestamp)}" if seen.timestamp is not None else where
