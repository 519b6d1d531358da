"""The Construct schemas compiled by Construct's ``compile()``, loaded from generated/.

``scripts/gen_construct.py`` (``make generate``) writes each schema's compiled parser source
to ``generated/construct_compiled/<name>.py``; this module maps names to schemas and loads
those modules, so that parsing never compiles at run time::

    from kafka_format.schemas import compiled
    batch = compiled.parse("record_batch", data)      # same Container as RecordBatch.parse
    parser = compiled.load("record_set")              # a Construct: parser.parse(data)

Compiled schemas only parse; build with the schema modules' builders.
"""

from __future__ import annotations

import importlib
import struct
from types import MappingProxyType
from typing import Any

from construct import Construct, Container, StreamError

from kafka_format.schemas.construct_ext import ParseOnly

GENERATED_PACKAGE = "kafka_format.generated.construct_compiled"

# name (= generated module, = the .ksy it mirrors) -> (schema module, attribute)
SCHEMAS = MappingProxyType(
    {
        "varint": ("kafka_format.schemas.varint", "VarLong"),
        "record": ("kafka_format.schemas.record", "Record"),
        "record_list": ("kafka_format.schemas.record_list", "RecordList"),
        "record_batch": ("kafka_format.schemas.record_batch", "RecordBatch"),
        "legacy_message": ("kafka_format.schemas.legacy_message", "LegacyMessage"),
        "record_set": ("kafka_format.schemas.record_set", "RecordSet"),
        "control_record_key": ("kafka_format.schemas.control_record_key", "ControlRecordKey"),
        "end_txn_marker": ("kafka_format.schemas.end_txn_marker", "EndTxnMarker"),
        "offset_index": ("kafka_format.schemas.offset_index", "OffsetIndex"),
        "time_index": ("kafka_format.schemas.time_index", "TimeIndex"),
        "txn_index": ("kafka_format.schemas.txn_index", "TxnIndex"),
        "producer_snapshot": ("kafka_format.schemas.producer_snapshot", "ProducerSnapshot"),
    }
)


def schema(name: str) -> Construct:
    """The interpreted Construct schema behind a compiled name."""
    module_name, attribute = SCHEMAS[name]
    return getattr(importlib.import_module(module_name), attribute)


def compile_source(name: str) -> str:
    """What Construct's compile() emits for a schema (parser only), as gen_construct writes it."""
    return ParseOnly(schema(name)).compile().source


_loaded: dict[str, Construct] = {}


def load(name: str) -> Construct:
    """The compiled parser of a schema, from its generated module."""
    parser = _loaded.get(name)
    if parser is None:
        if name not in SCHEMAS:
            raise KeyError(f"no compiled schema {name!r}; known: {', '.join(SCHEMAS)}")
        module = importlib.import_module(f"{GENERATED_PACKAGE}.{name}")
        parser = _loaded[name] = module.compiled
    return parser


def parse(name: str, data: bytes, **context: Any) -> Container:
    """Parse with the compiled schema; the result equals ``schema(name).parse(data)``.

    Compiled fixed-width integers raise struct.error on short input; it is turned into the
    StreamError the interpreted schema raises.
    """
    try:
        return load(name).parse(data, **context)
    except struct.error as error:
        raise StreamError(f"input ended early: {error}") from error
