"""``dump``'s payload decoders: ``--key-decoder`` / ``--value-decoder`` ``avro``, ``protobuf``,
``json-schema`` or ``schema-registry``, with ``--schema-registry SOURCE``.

Keys and values in Confluent's wire format are decoded through a schema source
(``payloads.registry.open_schema_source``): a log dir or ``_schemas-N`` directory holding the
registry's store, an export file, or a registry's URL; by default the log dir being dumped,
when it holds ``_schemas``.

* The text dump prints the decoded value as JSON after ``key:`` / ``payload:``; a record that
  does not decode prints ``<not avro: why>`` in its place, and the dump goes on.
* ``--jsonl`` writes the decoded value as ``key`` / ``value`` with ``keySchemaId`` /
  ``valueSchemaId`` (null where the bytes are not framed); a record that does not decode
  keeps its base64 and gets ``error``, naming the part, the schema id and why.

    kafka-format dump --jsonl --value-decoder schema-registry /var/lib/kafka/orders-0
    kafka-format dump --deep-iteration --value-decoder avro --schema-registry export.json x.log
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from ..payloads.decoders import KINDS, Decoded, payload_decoder
from ..payloads.registry import SchemaRegistryError, SchemaSource, open_schema_source
from ..payloads.registry_model import HINT
from ..payloads.registry_store import find_schemas_near
from .args import UsageError
from .text import DECODERS, Decoder

__all__ = [
    "PAYLOAD_KINDS",
    "PayloadText",
    "add_schema_registry_argument",
    "decoders_for",
    "payload_fields",
    "schema_source",
]

#: The decoder names that take a schema source.
PAYLOAD_KINDS: tuple[str, ...] = tuple(KINDS)


class PayloadText:
    """One payload decoder as dump calls its decoders: text for the text dump, and the
    decoded value (or why not) for ``--jsonl``."""

    __slots__ = ("decoder", "kind")

    def __init__(self, kind: str, source: SchemaSource) -> None:
        self.kind = kind
        self.decoder = payload_decoder(kind, source)

    def decode(self, data: bytes | None) -> Decoded:
        return self.decoder.decode(data)

    def __call__(self, data: bytes) -> str:
        decoded = self.decoder.decode(data)
        if decoded.error is not None:
            return f"<not {self.kind}: {decoded.error}>"
        return json.dumps(decoded.value, separators=(",", ":"), ensure_ascii=False)


def payload_fields(
    line: dict[str, Any], part: str, data: bytes | None, decoder: PayloadText
) -> str | None:
    """Put ``part``'s decoded value and schema id in a ``--jsonl`` line (``part``: ``key`` or
    ``value``), keeping its base64 when it does not decode; the error, named by part, or
    None."""
    decoded = decoder.decode(data)
    line[f"{part}SchemaId"] = decoded.schema_id
    if decoded.error is not None:
        return f"{part}: {decoded.error}"
    line[part] = decoded.value
    return None


def add_schema_registry_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--schema-registry",
        metavar="SOURCE",
        help="where the payload decoders (avro, protobuf, json-schema, schema-registry) find "
        "schemas: a log dir or _schemas-N directory holding the registry's store, an export "
        "of GET /schemas?deleted=true, or a registry's http(s) URL (default: the log dir "
        "being read, when it holds _schemas)",
    )


def decoders_for(
    key: str | None, value: str | None, spec: str | None, paths: list[str], quiet: bool
) -> tuple[Decoder, Decoder]:
    """The key and value decoders ``--key-decoder`` / ``--value-decoder`` name (``string``
    when not given); the payload decoders read the source ``--schema-registry`` names,
    else the log dir of ``paths`` that holds ``_schemas``, said in one line on stderr. A
    source that cannot be opened is a usage error."""
    wanted = {k for k in (key, value) if k in PAYLOAD_KINDS}
    if not wanted and spec is not None:
        raise UsageError(
            "--schema-registry is for the payload decoders: give --key-decoder or "
            f"--value-decoder one of {', '.join(PAYLOAD_KINDS)}"
        )
    texts: dict[str, Decoder] = {}
    if wanted:
        source = schema_source(spec, paths)
        if not quiet:
            print(f"schemas: {source.description}", file=sys.stderr)
        texts = {kind: PayloadText(kind, source) for kind in wanted}
    return (
        texts.get(key or "") or DECODERS[key or "string"],
        texts.get(value or "") or DECODERS[value or "string"],
    )


def schema_source(spec: str | None, paths: list[str]) -> SchemaSource:
    """The source ``--schema-registry`` names, else the ``_schemas`` partition in or above the
    first of ``paths`` that has one (``registry_store.find_schemas_near``, Spark's default
    too); one usage error when there is none or it cannot be opened."""
    if not spec:
        named = [p for p in paths if p != "-"]
        found = next((f for p in named if (f := find_schemas_near(p)) is not None), None)
        if found is None:
            where = named[0] if named else "standard input"
            raise UsageError(f"no _schemas partition in or above {where}: {HINT}")
        spec = str(found)
    try:
        return open_schema_source(spec)
    except SchemaRegistryError as exc:
        raise UsageError(str(exc)) from None
