"""Registered schemas as Arrow types, and the converters that turn decoded values into what
``pa.array(values, type=...)`` takes for them: the typing half of :mod:`.columns`.

    >>> from kafka_format.runtime.payloads.arrow_types import avro_schema
    >>> typed = avro_schema(source, source.by_subject("orders-value"))
    >>> typed.arrow_type
    StructType(struct<id: int64, note: string, at: timestamp[ms, tz=UTC]>)

The mappings follow Spark's own converters, so that a column built here is what Spark's
``from_avro`` / ``from_protobuf`` gives: Avro as ``SchemaConverters.toSqlTypeHelper``
(connector/avro: unions of several types as structs of ``member0``, ``member1``…; ``{int,
long}`` as int64, ``{float, double}`` as float64; enums as strings; recursion refused),
Protobuf as ``SchemaConverters.structFieldFor`` (connector/protobuf: ``Timestamp`` as
timestamp[us, UTC], ``Duration`` as duration[us], enums as their names, messages without
fields dropped, recursion refused; unsigned ints widened as with ``upcast.unsigned.ints``, so
that none wraps negative). Values follow Spark's defaults too (``emit.default.values`` off: a
Protobuf field without presence holding its zero value is null). JSON Schema, which Spark does
not type, maps ``properties`` to structs, ``items`` to lists and the scalar types to theirs;
what has no one Arrow type (unions, maps, no ``type``, recursion) is its JSON text. The full
table, type by type, is in docs/schema-registry.md ("Python: Arrow columns").
"""

from __future__ import annotations

import contextlib
import json
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import fastavro
import fastavro.read
import pyarrow as pa

from .registry_model import RegisteredSchema, SchemaSource
from .wire import PayloadDecodeError, resolve_references, schema_label

__all__ = ["JSON_TEXT", "PROTOBUF_ENUM", "AvroTyped", "Convert", "avro_schema", "json_checked",
           "json_schema_type", "protobuf_scalar_type", "protobuf_type",
           "protobuf_well_known"]  # fmt: skip

#: A converter: one decoded value (never None) into what Arrow takes for the column's type.
Convert = Callable[[Any], Any]
#: The type of a value kept as its JSON text (what no Arrow type holds).
JSON_TEXT = pa.string()

# --- Avro --------------------------------------------------------------------------------------

# Logical types are renamed to names of our own before fastavro parses a schema: fastavro looks
# its readers up by "<type>-<logicalType>" in one process-wide table, and a name it holds no
# reader for reads as the underlying value. Dates, times and timestamps so stay the ints Arrow
# takes for date32/time/timestamp (no datetime built per value); decimals and fixed uuids get
# readers of ours, registered below under these names only.
_P = "kafka-format-arrow-"
_DECIMAL, _UUID = _P + "decimal", _P + "uuid"
_UNITS = {"millis": "ms", "micros": "us", "nanos": "ns"}
_LOGICAL = {
    ("int", "date"): pa.date32(),
    ("int", "time-millis"): pa.time32("ms"),
    ("long", "time-micros"): pa.time64("us"),
    **{("long", f"timestamp-{u}"): pa.timestamp(unit, "UTC") for u, unit in _UNITS.items()},
    **{("long", f"local-timestamp-{u}"): pa.timestamp(unit) for u, unit in _UNITS.items()},
}
_AVRO_PRIMITIVES = {"null": pa.null(), "boolean": pa.bool_(), "int": pa.int32(),
                    "long": pa.int64(), "float": pa.float32(), "double": pa.float64(),
                    "bytes": pa.binary(), "string": pa.string()}  # fmt: skip
_NAMED = frozenset(("record", "error", "enum", "fixed"))
_AVRO_KINDS = frozenset(_AVRO_PRIMITIVES) | _NAMED | {"array", "map"}
_WRAPPER = "kafka_format_arrow_datum"
_INT32 = 1 << 31


def _decimal(value: bytes, writer: dict[str, Any], _reader: object = None) -> Decimal:
    # From the digits, not through a context: Decimal arithmetic would round past 28 digits.
    return Decimal(f"{int.from_bytes(value, 'big', signed=True)}e-{writer.get('scale', 0)}")


def _uuid(value: bytes, _writer: object = None, _reader: object = None) -> str:
    return str(uuid.UUID(bytes=bytes(value)))


for _kind in ("bytes", "fixed"):
    fastavro.read.LOGICAL_READERS[f"{_kind}-{_DECIMAL}"] = _decimal
fastavro.read.LOGICAL_READERS[f"fixed-{_UUID}"] = _uuid


def _decimal_precision(node: dict[str, Any], size: int | None) -> int | None:
    """The precision of a valid ``decimal`` (the spec's rules; an invalid one is ignored and
    read as its bytes), or None."""
    precision, scale = node.get("precision"), node.get("scale", 0)
    if type(precision) is not int or type(scale) is not int:
        return None
    if precision <= 0 or not 0 <= scale <= precision or precision > 76:
        return None
    if size is not None and precision > len(str(2 ** (8 * size - 1) - 1)) - 1:
        return None
    return precision


def _rewrite(node: Any, keep_defaults: bool) -> Any:
    """An Avro schema (JSON) with our logical type names and, unless ``keep_defaults`` (the
    reader's schema, whose defaults fill fields the writer lacked), no field defaults: a
    default fastavro refuses must not stop reading with the writer's schema."""
    if isinstance(node, list):
        return [_rewrite(branch, keep_defaults) for branch in node]
    if not isinstance(node, dict):
        return node
    out = {k: v for k, v in node.items() if k != "logicalType"}
    kind, logical = node.get("type"), node.get("logicalType")
    if kind in ("record", "error") and isinstance(node.get("fields"), list):
        out["fields"] = [
            {
                k: _rewrite(v, keep_defaults) if k == "type" else v
                for k, v in f.items()
                if keep_defaults or k != "default"
            }
            if isinstance(f, dict)
            else f
            for f in node["fields"]
        ]
    elif kind == "array" and "items" in node:
        out["items"] = _rewrite(node["items"], keep_defaults)
    elif kind == "map" and "values" in node:
        out["values"] = _rewrite(node["values"], keep_defaults)
    elif kind in ("fixed", "bytes"):
        size = node.get("size") if kind == "fixed" else None
        if logical == "decimal" and (kind == "bytes" or type(size) is int):
            if _decimal_precision(node, size) is not None:
                out["logicalType"] = _DECIMAL
        elif logical == "uuid" and kind == "fixed" and size == 16:
            out["logicalType"] = _UUID
    elif isinstance(kind, str) and (kind, logical) in _LOGICAL:
        out["logicalType"] = _P + logical
    elif isinstance(kind, dict | list):
        out["type"] = _rewrite(kind, keep_defaults)
    return out


def _parse(source: SchemaSource, schema: RegisteredSchema, keep_defaults: bool) -> dict[str, Any]:
    """The schema parsed by fastavro inside one wrapper record (whose parse carries the named
    types of its references to the reader), its references' named types first."""
    named: dict[str, Any] = {}
    for name, ref in resolve_references(source, schema):
        try:
            fastavro.parse_schema(_rewrite(json.loads(ref.schema), keep_defaults), named)
        except Exception as exc:
            raise PayloadDecodeError(
                f"{schema_label(schema)} refers to {name} ({schema_label(ref)}), which is no "
                f"usable Avro schema: {_reason(exc)}"
            ) from None
    try:
        body = _rewrite(json.loads(schema.schema), keep_defaults)
        wrapper = {"type": "record", "name": _WRAPPER, "fields": [{"name": "v", "type": body}]}
        return fastavro.parse_schema(wrapper, named)
    except Exception as exc:
        raise PayloadDecodeError(
            f"{schema_label(schema)} is no usable Avro schema: {_reason(exc)}"
        ) from None


@dataclass(slots=True)
class AvroTyped:
    """A parsed Avro schema: ``parsed`` (fastavro's, wrapped: the datum is its field ``v``),
    the column's ``arrow_type`` and ``convert`` (None when fastavro's values already are what
    Arrow takes), ``named``: whether to read with fastavro's ``return_named_type`` (set
    when a union must know which named branch a value took), and ``risky``: whether a few
    bytes may ask fastavro for unbounded work (recursion, arrays of items that take no
    bytes), for the reader to check the data first."""

    parsed: dict[str, Any]
    arrow_type: pa.DataType
    convert: Convert | None
    named: bool
    risky: bool = False


def avro_schema(
    source: SchemaSource, schema: RegisteredSchema, *, reader: bool = True
) -> AvroTyped:
    """``schema`` parsed for reading: as the reader's schema (``reader``: defaults kept, an
    Arrow type built, which a recursive schema has not) or as a writer's."""
    try:
        parsed = _parse(source, schema, keep_defaults=reader)
    except PayloadDecodeError:
        if not reader:
            raise
        # A default fastavro refuses: the schema still types the column and reads every
        # record whose writer had the field; one that lacked it is a row error then.
        parsed = _parse(source, schema, keep_defaults=False)
    named = parsed["__named_schemas"]
    if reader:
        _defaults(parsed, named, set())
    typer = _AvroTyper(named, schema)
    root = parsed["fields"][0]["type"]
    try:
        arrow_type, convert = typer.build(root, ())
        if typer.wants_names:  # again, knowing that fastavro must name union branches
            typer.tagged = True
            arrow_type, convert = typer.build(root, ())
    except PayloadDecodeError:
        if reader:
            raise
        return AvroTyped(parsed, pa.null(), None, False, risky=True)  # recursive
    return AvroTyped(parsed, arrow_type, convert, typer.tagged, typer.risky)


def _defaults(node: Any, named: dict[str, Any], done: set[str]) -> None:
    """Field defaults (JSON, which fastavro hands out as they are for fields the writer
    lacked) made the values its reading gives: bytes from their ISO-8859-1 text, decimals
    and uuids as our readers make them."""
    if isinstance(node, str):
        if node in named and node not in done:
            _defaults(named[node], named, done)
    elif isinstance(node, list):
        for branch in node:
            _defaults(branch, named, done)
    elif isinstance(node, dict):
        kind = node.get("type")
        if kind in ("record", "error"):
            if node["name"] in done:
                return
            done.add(node["name"])
            for field in node["fields"]:
                # A default that does not fit stays as it is: it fails the rows that need it.
                with contextlib.suppress(Exception):
                    if "default" in field:
                        field["default"] = _default(field["default"], field["type"], named)
                _defaults(field["type"], named, done)
        elif kind in ("array", "map"):
            _defaults(node.get("items", node.get("values")), named, done)
        elif isinstance(kind, dict | list):
            _defaults(kind, named, done)


def _default(value: Any, node: Any, named: dict[str, Any]) -> Any:
    kind, node = _base(node, named)
    if value is None:
        return None
    if kind == "union":
        return _default(value, node[0], named)  # a union's default is its first branch's
    if kind in ("record", "error"):
        return {
            f["name"]: _default(value.get(f["name"], f.get("default")), f["type"], named)
            for f in node["fields"]
        }
    if kind == "array":
        return [_default(v, node["items"], named) for v in value]
    if kind == "map":
        return {k: _default(v, node["values"], named) for k, v in value.items()}
    if kind in ("bytes", "fixed"):
        if not isinstance(value, str):
            return value  # made already (a record's default met again through another path)
        raw = value.encode("latin-1")
        logical = node.get("logicalType") if isinstance(node, dict) else None
        return (
            _decimal(raw, node) if logical == _DECIMAL else _uuid(raw) if logical == _UUID else raw
        )
    return value


def _no_bytes(arrow_type: pa.DataType) -> bool:
    """Whether values of an Avro type typed so may take no bytes (null, empty records)."""
    if pa.types.is_struct(arrow_type):
        return all(_no_bytes(f.type) for f in arrow_type)
    return pa.types.is_null(arrow_type)


def _base(node: Any, named: dict[str, Any]) -> tuple[str, Any]:
    """(Avro type name, its definition) of a schema node, a named reference followed."""
    if isinstance(node, str):
        return (node, node) if node in _AVRO_PRIMITIVES else _base(named[node], named)
    if isinstance(node, list):
        return "union", node
    kind = node["type"]
    if isinstance(kind, str) and kind in _AVRO_KINDS:
        return kind, node
    return _base(kind, named)


def _is_null(node: Any, named: dict[str, Any]) -> bool:
    return _base(node, named)[0] == "null"


def _unwrap(convert: Convert | None) -> Convert:
    """A converter that first takes the value out of fastavro's ``(name, value)`` pair."""
    if convert is None:
        return lambda v: v[1] if type(v) is tuple else v
    return lambda v: convert(v[1] if type(v) is tuple else v)


class _AvroTyper:
    """One schema's walk: Arrow types and converters, named types followed through
    ``named``; ``tagged``: fastavro reads named union branches as ``(name, value)``."""

    __slots__ = ("named", "risky", "schema", "tagged", "wants_names")

    def __init__(self, named: dict[str, Any], schema: RegisteredSchema) -> None:
        self.named = named
        self.schema = schema
        self.tagged = False
        # Set by a union that becomes a member struct with a named branch: only fastavro's
        # names tell such branches (two records, a map and a record) apart.
        self.wants_names = False
        self.risky = False

    def _recursive(self, name: str) -> PayloadDecodeError:
        return PayloadDecodeError(
            f"{schema_label(self.schema)} is recursive (record {name} holds itself): no Arrow "
            "type nests without end; read it with output='json'"
        )

    def _members(self, branches: list[Any]) -> bool:
        """Whether non-null ``branches`` become a struct of members (not one type)."""
        if len(branches) < 2:
            return False
        kinds = {_base(b, self.named)[0] for b in branches}
        return not (len(branches) == 2 and kinds in ({"int", "long"}, {"float", "double"}))

    def build(self, node: Any, stack: tuple[str, ...]) -> tuple[pa.DataType, Convert | None]:
        if isinstance(node, str):
            if node in _AVRO_PRIMITIVES:
                return _AVRO_PRIMITIVES[node], None
            if node in stack:
                raise self._recursive(node)
            return self.build(self.named[node], stack)
        if isinstance(node, list):
            return self._union(node, stack)
        kind = node["type"]
        if not (isinstance(kind, str) and kind in _AVRO_KINDS):
            return self.build(kind, stack)
        logical = node.get("logicalType")
        if kind in ("record", "error"):
            return self._record(node, stack)
        if kind == "array":
            item, convert = self.build(node["items"], stack)
            kind, items = _base(node["items"], self.named)
            self.risky = self.risky or _no_bytes(item) or (kind == "fixed" and items["size"] == 0)
            lists = None if convert is None else _each(convert)
            return pa.list_(item), lists
        if kind == "map":
            value, convert = self.build(node["values"], stack)
            maps = None if convert is None else _each_value(convert)
            return pa.map_(pa.string(), value), maps
        arrow_type = self._leaf(kind, logical, node)
        # A named leaf (enum, fixed) comes as (name, value) from a union in tagged reads.
        return arrow_type, _unwrap(None) if self.tagged and kind in _NAMED else None

    def _leaf(self, kind: str, logical: Any, node: dict[str, Any]) -> pa.DataType:
        if logical == _DECIMAL:
            precision = node["precision"]
            scale = node.get("scale", 0)
            if precision <= 38:
                return pa.decimal128(precision, scale)
            return pa.decimal256(precision, scale)
        if logical == _UUID or kind == "enum":
            return pa.string()
        if kind == "fixed":
            return pa.binary()
        if isinstance(logical, str) and logical.startswith(_P):
            found = _LOGICAL.get((kind, logical[len(_P) :]))
            if found is not None:
                return found
        return _AVRO_PRIMITIVES[kind]

    def _record(
        self, node: dict[str, Any], stack: tuple[str, ...]
    ) -> tuple[pa.DataType, Convert | None]:
        name = node["name"]
        if name in stack:
            raise self._recursive(name)
        inner = (*stack, name)
        fields, converts = [], []
        for field in node["fields"]:
            arrow_type, convert = self.build(field["type"], inner)
            fields.append(pa.field(field["name"], arrow_type))
            if convert is not None:
                converts.append((field["name"], convert))
        convert = _fields(converts) if converts else None
        if self.tagged:
            convert = _unwrap(convert)
        return pa.struct(fields), convert

    def _union(self, node: list[Any], stack: tuple[str, ...]) -> tuple[pa.DataType, Convert | None]:
        branches = [b for b in node if not _is_null(b, self.named)]
        if not branches:
            return pa.null(), None
        if len(branches) == 1:
            return self.build(branches[0], stack)
        if not self._members(branches):
            # Spark's {int, long} and {float, double}: the wider type; fastavro's Python
            # ints and floats need nothing.
            wide = {"int": pa.int64(), "long": pa.int64()}.get(_base(branches[0], self.named)[0])
            return wide or pa.float64(), None
        members, converts, kinds = [], [], []
        self.wants_names = self.wants_names or any(
            _base(b, self.named)[0] in _NAMED for b in branches
        )
        for i, branch in enumerate(branches):
            arrow_type, convert = self.build(branch, stack)
            members.append(pa.field(f"member{i}", arrow_type))
            converts.append(convert)
            kinds.append(self._category(branch))
        return pa.struct(members), _Members(converts, kinds).convert

    def _category(self, branch: Any) -> tuple[str, str, str | None]:
        """(Python kind of fastavro's value, Avro base type, full name when named)."""
        kind, node = _base(branch, self.named)
        name = node.get("name") if isinstance(node, dict) and kind in _NAMED else None
        logical = node.get("logicalType") if isinstance(node, dict) else None
        if logical == _DECIMAL:
            return "decimal", kind, name
        if logical == _UUID or kind in ("string", "enum"):
            return "str", kind, name
        python = _PYTHON_OF_AVRO[kind]
        return python, kind, name


_PYTHON_KIND = {bool: "bool", int: "int", float: "float", str: "str", bytes: "bytes",
                Decimal: "decimal", list: "list", dict: "dict"}  # fmt: skip
#: The Python type fastavro reads each Avro type as (strings and enums apart, see _category).
_PYTHON_OF_AVRO = {"boolean": "bool", "int": "int", "long": "int", "float": "float",
                   "double": "float", "bytes": "bytes", "fixed": "bytes", "array": "list",
                   "map": "dict", "record": "dict", "error": "dict"}  # fmt: skip


class _Members:
    """A union's value as Spark's member struct: ``{"memberN": value}`` for the branch the
    value took. Named branches are told by fastavro's ``(name, value)``; the others by the
    Python type of the value, which is one branch's but for ints and floats when both the
    32- and 64-bit type are members (an int that fits 32 bits then goes to ``int``: which one
    the writer chose is not in fastavro's value)."""

    __slots__ = ("by_kind", "by_name", "converts", "keys", "long", "short")

    def __init__(self, converts: list[Convert | None], kinds: list[tuple[str, str, Any]]):
        self.converts = converts
        self.keys = [f"member{i}" for i in range(len(converts))]
        self.by_name = {name: i for i, (_, _, name) in enumerate(kinds) if name is not None}
        self.by_kind: dict[str, int] = {}
        # Unnamed branches first: in tagged reads a named branch's value comes with its name.
        for i, (python, _, _name) in sorted(enumerate(kinds), key=lambda x: x[1][2] is not None):
            self.by_kind.setdefault(python, i)
        self.short = next((i for i, k in enumerate(kinds) if k[1] == "int"), None)
        self.long = next((i for i, k in enumerate(kinds) if k[1] == "long"), None)

    def convert(self, value: Any) -> dict[str, Any]:
        if type(value) is tuple:
            name, value = value
            index = self.by_name.get(name)
        else:
            python = _PYTHON_KIND.get(type(value))
            index = None if python is None else self.by_kind.get(python)
            if python == "int" and self.short is not None and self.long is not None:
                index = self.short if -_INT32 <= value < _INT32 else self.long
        if index is None:
            raise PayloadDecodeError(
                f"a {type(value).__name__} value fits no branch of the union's member struct"
            )
        convert = self.converts[index]
        if convert is not None and value is not None:
            value = convert(value)
        return {self.keys[index]: value}


def _fields(converts: list[tuple[str, Convert]]) -> Convert:
    def convert(record: dict[str, Any]) -> dict[str, Any]:
        record = dict(record)  # a copy: a reader's default is one dict shared by all rows
        for name, one in converts:
            value = record.get(name)
            if value is not None:
                record[name] = one(value)
        return record

    return convert


def _each(convert: Convert) -> Convert:
    return lambda items: [None if x is None else convert(x) for x in items]


def _each_value(convert: Convert) -> Convert:
    return lambda pairs: {k: None if v is None else convert(v) for k, v in pairs.items()}


# --- Protobuf ---------------------------------------------------------------------------------

# FieldDescriptor.TYPE_* numbers (descriptor.proto's FieldDescriptorProto.Type).
_PB_DOUBLE, _PB_FLOAT, _PB_INT64, _PB_UINT64, _PB_INT32, _PB_FIXED64, _PB_FIXED32 = range(1, 8)
_PB_BOOL, _PB_STRING, _PB_GROUP, _PB_MESSAGE, _PB_BYTES, _PB_UINT32, _PB_ENUM = range(8, 15)
_PB_SFIXED32, _PB_SFIXED64, _PB_SINT32, _PB_SINT64 = range(15, 19)
PROTOBUF_ENUM = _PB_ENUM
_PB_SCALARS = {
    _PB_DOUBLE: pa.float64(), _PB_FLOAT: pa.float32(), _PB_BOOL: pa.bool_(),
    _PB_INT64: pa.int64(), _PB_SINT64: pa.int64(), _PB_SFIXED64: pa.int64(),
    _PB_UINT64: pa.decimal128(20, 0), _PB_FIXED64: pa.decimal128(20, 0),
    _PB_INT32: pa.int32(), _PB_SINT32: pa.int32(), _PB_SFIXED32: pa.int32(),
    _PB_UINT32: pa.int64(), _PB_FIXED32: pa.int64(),
    _PB_STRING: pa.string(), _PB_BYTES: pa.binary(), _PB_ENUM: pa.string(),
}  # fmt: skip
_PB_JSON = frozenset(
    ("google.protobuf.Struct", "google.protobuf.Value", "google.protobuf.ListValue")
)
_MICROS = pa.timestamp("us", "UTC")
_DURATION = pa.duration("us")


def _time_like(message: Any, name: str) -> bool:
    """Spark's test for Timestamp and Duration: the name and two fields, seconds and nanos."""
    fields = message.fields
    return (
        message.name == name
        and len(fields) == 2
        and fields[0].name == "seconds"
        and fields[1].name == "nanos"
    )


def protobuf_well_known(message: Any) -> pa.DataType | None:
    """The type of a message Spark types as a value (Timestamp, Duration; ours: Struct,
    Value and ListValue as JSON text), None for the others (structs)."""
    if _time_like(message, "Timestamp"):
        return _MICROS
    if _time_like(message, "Duration"):
        return _DURATION
    if message.full_name in _PB_JSON:
        return JSON_TEXT
    return None


def protobuf_type(descriptor: Any) -> pa.DataType:
    """The Arrow type of a message (a ``Descriptor``): Spark's ``from_protobuf`` schema."""
    return _pb_struct(descriptor, (descriptor.full_name,)) or pa.struct([])


def _pb_struct(descriptor: Any, stack: tuple[str, ...]) -> pa.StructType | None:
    fields = []
    for fd in descriptor.fields:
        arrow_type = _pb_field(fd, stack)
        if arrow_type is not None:
            fields.append(pa.field(fd.name, arrow_type))
    return pa.struct(fields) if fields else None


def protobuf_scalar_type(fd: Any) -> pa.DataType | None:
    """The type of a field's scalar values (None for a message field)."""
    return _PB_SCALARS.get(fd.type) if fd.message_type is None else None


def _pb_field(fd: Any, stack: tuple[str, ...]) -> pa.DataType | None:
    """A field's type, None when Spark drops it (a message with no fields left)."""
    message = fd.message_type
    if message is None:
        base: pa.DataType | None = _PB_SCALARS[fd.type]
    elif message.GetOptions().map_entry:
        key, value = message.fields_by_name["key"], message.fields_by_name["value"]
        key_type, value_type = _pb_field(key, stack), _pb_field(value, stack)
        if key_type is None or value_type is None:
            return None
        return pa.map_(key_type, value_type)
    else:
        base = protobuf_well_known(message)
        if base is None:
            if message.full_name in stack:
                raise PayloadDecodeError(
                    f"message {message.full_name} holds itself (field {fd.full_name}): no "
                    "Arrow type nests without end; read it with output='json'"
                )
            base = _pb_struct(message, (*stack, message.full_name))
    if base is None:
        return None
    return pa.list_(base) if fd.is_repeated else base


# --- JSON Schema ------------------------------------------------------------------------------

_JSON_SCALARS = {"integer": pa.int64(), "number": pa.float64(), "string": pa.string(),
                 "boolean": pa.bool_()}  # fmt: skip
_INT64 = 1 << 63


def _as_json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def json_schema_type(source: SchemaSource, schema: RegisteredSchema) -> tuple[pa.DataType, Convert]:
    """The Arrow type of a JSON Schema and the converter that checks a value (as
    ``json.loads`` gives it) against it and makes it what Arrow takes; a value that does not
    fit is a :class:`PayloadDecodeError` naming where (``at /items/0/id: ...``)."""
    try:
        root = json.loads(schema.schema)
    except ValueError as exc:
        raise PayloadDecodeError(f"{schema_label(schema)} is no JSON: {_reason(exc)}") from None
    documents: dict[str, Any] = {}
    for name, ref in resolve_references(source, schema):
        try:
            documents[name] = json.loads(ref.schema)
        except ValueError:
            continue  # a $ref into it becomes JSON text, as any reference not followed
    return _JsonTyper(root, documents).build(root, ())


class _JsonTyper:
    __slots__ = ("documents", "root")

    def __init__(self, root: Any, documents: dict[str, Any]) -> None:
        self.root = root
        self.documents = documents

    def _resolve(self, ref: str, document: Any) -> Any:
        """What a ``$ref`` points at, or None when it is not followed."""
        name, _, pointer = ref.partition("#")
        base = document if not name else self.documents.get(name)
        if base is None:
            return None
        node = base
        for part in (p for p in pointer.split("/") if p):
            part = part.replace("~1", "/").replace("~0", "~")
            if not isinstance(node, dict) or part not in node:
                return None
            node = node[part]
        return node

    def build(self, node: Any, seen: tuple[int, ...]) -> tuple[pa.DataType, Convert]:
        if not isinstance(node, dict):
            return JSON_TEXT, _as_json  # true, false, or no schema
        ref = node.get("$ref")
        if isinstance(ref, str):
            target = self._resolve(ref, self.root)
            if target is None or id(target) in seen:
                return JSON_TEXT, _as_json  # not followed, or recursion
            return self.build(target, (*seen, id(target)))
        kind = node.get("type")
        if kind is None and isinstance(node.get("properties"), dict):
            kind = "object"
        if kind is None:
            for key in ("oneOf", "anyOf"):
                options = node.get(key)
                if isinstance(options, list):
                    others = [o for o in options if not _json_null(o)]
                    if len(others) == 1 and len(options) == 2:
                        return self.build(others[0], seen)
            if _all_strings(node.get("enum")) or isinstance(node.get("const"), str):
                return pa.string(), _check_string
            return JSON_TEXT, _as_json
        if isinstance(kind, list):
            others = [k for k in kind if k != "null"]
            if len(others) != 1:
                return JSON_TEXT, _as_json
            kind = others[0]
        if kind in _JSON_SCALARS:
            return _JSON_SCALARS[kind], _JSON_CHECKS[kind]
        if kind == "object" and isinstance(node.get("properties"), dict):
            return self._object(node["properties"], seen)
        if kind == "array" and isinstance(node.get("items"), dict):
            item, one = self.build(node["items"], seen)
            return pa.list_(item), _json_list(one)
        return JSON_TEXT, _as_json

    def _object(self, properties: dict[str, Any], seen: tuple[int, ...]) -> tuple[Any, Convert]:
        fields, converts = [], []
        for name, sub in properties.items():
            arrow_type, one = self.build(sub, seen)
            fields.append(pa.field(name, arrow_type))
            converts.append((name, one))
        return pa.struct(fields), _json_object(converts)


def _json_null(node: Any) -> bool:
    return isinstance(node, dict) and node.get("type") == "null"


def _all_strings(values: Any) -> bool:
    return isinstance(values, list) and bool(values) and all(isinstance(v, str) for v in values)


class _Misfit(Exception):
    """A JSON value that does not fit its place; ``path`` grows as it goes up."""

    def __init__(self, path: str, what: str) -> None:
        super().__init__(what)
        self.path = path
        self.what = what


def _kind(value: Any) -> str:
    return {bool: "boolean", int: "integer", float: "number", str: "string", list: "array",
            dict: "object"}.get(type(value), type(value).__name__)  # fmt: skip


def _check_int(value: Any) -> int:
    if type(value) is int:
        if -_INT64 <= value < _INT64:
            return value
        raise _Misfit("", f"integer {value} is out of int64's range")
    if type(value) is float and value.is_integer() and -_INT64 <= value < _INT64:
        return int(value)  # 1.0 is an integer to JSON Schema (draft 6 on)
    raise _Misfit("", f"expected an integer, found {_kind(value)} {_as_json(value)[:40]}")


def _check_number(value: Any) -> float:
    if type(value) in (int, float):
        try:
            return float(value)
        except OverflowError:
            raise _Misfit("", f"number {value} is out of float64's range") from None
    raise _Misfit("", f"expected a number, found {_kind(value)}")


def _exactly(kind: type, name: str) -> Convert:
    def check(value: Any) -> Any:
        if type(value) is kind:
            return value
        raise _Misfit("", f"expected {name}, found {_kind(value)}")

    return check


_check_string, _check_bool = _exactly(str, "a string"), _exactly(bool, "a boolean")


_JSON_CHECKS: dict[str, Convert] = {"integer": _check_int, "number": _check_number,
                                    "string": _check_string, "boolean": _check_bool}  # fmt: skip


def _json_object(converts: list[tuple[str, Convert]]) -> Convert:
    def convert(value: Any) -> dict[str, Any]:
        if type(value) is not dict:
            raise _Misfit("", f"expected an object, found {_kind(value)}")
        out = {}
        for name, one in converts:
            item = value.get(name)
            if item is not None:
                try:
                    out[name] = one(item)
                except _Misfit as exc:
                    exc.path = f"/{name}{exc.path}"
                    raise
        return out

    return convert


def _json_list(one: Convert) -> Convert:
    def convert(value: Any) -> list[Any]:
        if type(value) is not list:
            raise _Misfit("", f"expected an array, found {_kind(value)}")
        out = []
        for i, item in enumerate(value):
            try:
                out.append(None if item is None else one(item))
            except _Misfit as exc:
                exc.path = f"/{i}{exc.path}"
                raise
        return out

    return convert


def json_checked(convert: Convert, value: Any, label: str) -> Any:
    """``convert(value)``, a misfit reported as a :class:`PayloadDecodeError`."""
    try:
        return convert(value)
    except _Misfit as exc:
        raise PayloadDecodeError(
            f"does not fit the column's type from {label}: at {exc.path or '/'}: {exc.what}"
        ) from None


def _reason(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
