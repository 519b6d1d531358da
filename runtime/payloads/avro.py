"""Avro payloads: the datum after Confluent's header, read with fastavro under the writer's
schema (the one its id names), as JSON-ready Python values.

    >>> from kafka_format.runtime.payloads.avro import AvroDecoder
    >>> decoder = AvroDecoder(source)                 # any registry.SchemaSource
    >>> schema = source.by_id(7)
    >>> decoder.decode(schema, b"\\x0ahello\\x02")       # the bytes after the 5-byte header
    {'name': 'hello', 'count': 1}

The schema is parsed once per id, its references first (each referenced schema, depth first,
into one dict of named types, as Confluent's ``AvroSchemaProvider`` builds one
``Schema.Parser`` for them all). The value is what Avro's JSON encoding gives, with these
choices:

* a union is its value itself, not ``{"branch": value}``; an enum is its symbol; a map is an
  object;
* ``bytes`` and ``fixed`` are base64 text (standard alphabet, padded);
* ``decimal`` is a string in plain notation with ``scale`` digits after the point
  (``"-0.00000123"``), exact however wide;
* ``date`` is ``"2024-05-01"``; ``time-millis`` / ``time-micros`` are ``"12:00:00.123"``;
* ``timestamp-millis`` / ``-micros`` / ``-nanos`` are ISO-8601 UTC, ``"2024-05-01T12:00:00.123Z"``,
  with Java's ``Instant.toString`` fraction (none, 3, 6 or 9 digits, the fewest that are
  exact); the ``local-timestamp-*`` ones the same without the ``Z``;
* ``uuid`` is its string (a ``fixed(16)`` uuid is formatted ``8-4-4-4-12``);
* a logical value that has no such text (a date past year 9999, a time past midnight, a
  decimal wider than Python prints) is its underlying value, a number or base64 text: the
  datum is valid Avro, so it decodes rather than fail (Confluent's Java deserializer, which by
  default does not convert logical types at all, would read it too). A logical type the spec
  calls invalid (``decimal`` without a precision, ``date`` on a ``long``) is ignored, as the
  spec says; ``duration`` and ``big-decimal`` are read as their ``fixed`` / ``bytes``;
* ``float`` and ``double`` are Python floats (NaN and the infinities included).

Field defaults play no part in reading with the writer's schema, so they are dropped before
parsing: a registered schema with a default fastavro would refuse still decodes.

Bytes that are no datum of the schema are a :class:`PayloadDecodeError` naming the schema id,
subject and version: a datum that ends early, one followed by bytes it does not use (fastavro
would ignore them), a union or enum index out of range. Two kinds of schema let a few bytes
ask for unbounded work, and their data is first walked by a bounded checker here: arrays of
items that take no bytes (``null``, empty records, ``fixed(0)``), where a 10-byte count asks
fastavro for a list of 2**62 items, and recursive types, where nesting asks fastavro's
compiled reader for a C stack it does not have (it crashes the process at a few thousand
levels).
"""

from __future__ import annotations

import base64
import io
import json
import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Any

import fastavro
import fastavro.read

from .registry_model import RegisteredSchema, SchemaSource
from .wire import PayloadDecodeError, resolve_references, schema_label

__all__ = ["MAX_DEPTH", "MAX_EMPTY_ITEMS", "AvroDecoder"]

#: Nesting (records, arrays, maps) a datum of a recursive schema may have. fastavro's
#: compiled reader overflows the C stack at a few thousand levels; this leaves it a wide margin
#: in threads with smaller stacks, and keeps the checker's Python recursion far from its limit.
MAX_DEPTH = 200
#: Items that take no bytes (``null``, empty records) one datum may hold in all: each costs
#: memory and time but no input, so only a bound keeps a damaged count from taking them all.
MAX_EMPTY_ITEMS = 1 << 16

# Logical types are converted by readers registered with fastavro under names of our own
# (fastavro looks readers up by "<type>-<logicalType>" in one process-wide table), so that
# other fastavro users in the process keep fastavro's own conversions.
_PREFIX = "kafka-format-"
_BASE64 = _PREFIX + "base64"
_DECIMAL = _PREFIX + "decimal"
_UUID = _PREFIX + "uuid"
_EPOCH = datetime(1970, 1, 1)
_EPOCH_ORDINAL = date(1970, 1, 1).toordinal()
_PER_SECOND = {"millis": 1_000, "micros": 1_000_000, "nanos": 1_000_000_000}
#: (Avro type, logical type) -> our reader's logical type, for the combinations the spec knows.
_LOGICAL = {
    ("int", "date"): _PREFIX + "date",
    ("int", "time-millis"): _PREFIX + "time-millis",
    ("long", "time-micros"): _PREFIX + "time-micros",
    **{("long", f"timestamp-{u}"): f"{_PREFIX}timestamp-{u}" for u in _PER_SECOND},
    **{("long", f"local-timestamp-{u}"): f"{_PREFIX}local-timestamp-{u}" for u in _PER_SECOND},
}
_PRIMITIVES = frozenset(("null", "boolean", "int", "long", "float", "double", "bytes", "string"))
_NAMED = frozenset(("record", "error", "enum", "fixed"))
_KINDS = _PRIMITIVES | _NAMED | {"array", "map"}
_WRAPPER = "kafka_format_payloads_datum"


def _b64(value: bytes) -> str:
    return base64.b64encode(value).decode("ascii")


def _fraction(nanos: int) -> str:
    """Java's ``Instant.toString`` fraction: nothing, or 3, 6 or 9 digits."""
    if nanos == 0:
        return ""
    if nanos % 1_000_000 == 0:
        return f".{nanos // 1_000_000:03d}"
    if nanos % 1_000 == 0:
        return f".{nanos // 1_000:06d}"
    return f".{nanos:09d}"


def _timestamp(value: int, unit: str, zone: str) -> str | int:
    per_second = _PER_SECOND[unit]
    seconds, part = divmod(value, per_second)
    try:
        moment = _EPOCH + timedelta(seconds=seconds)
    except OverflowError:  # outside years 1-9999: no ISO text datetime can write
        return value
    return f"{moment.isoformat()}{_fraction(part * (1_000_000_000 // per_second))}{zone}"


def _time(value: int, per_second: int) -> str | int:
    if not 0 <= value < 86_400 * per_second:
        return value
    seconds, part = divmod(value, per_second)
    hours, rest = divmod(seconds, 3_600)
    return f"{hours:02d}:{rest // 60:02d}:{rest % 60:02d}" + _fraction(
        part * (1_000_000_000 // per_second)
    )


def _date(value: int, _w: object = None, _r: object = None) -> str | int:
    ordinal = _EPOCH_ORDINAL + value
    if not 1 <= ordinal <= date.max.toordinal():
        return value
    return date.fromordinal(ordinal).isoformat()


def _decimal(value: bytes, writer: dict[str, Any], _r: object = None) -> str:
    unscaled = int.from_bytes(value, "big", signed=True)
    scale = writer.get("scale", 0)
    try:
        digits = str(abs(unscaled))
    except ValueError:  # wider than int's str() allows (sys.get_int_max_str_digits)
        return _b64(value)
    sign = "-" if unscaled < 0 else ""
    if scale == 0:
        return sign + digits
    digits = digits.rjust(scale + 1, "0")
    return f"{sign}{digits[:-scale]}.{digits[-scale:]}"


def _uuid(value: bytes, _w: object = None, _r: object = None) -> str:
    return str(uuid.UUID(bytes=bytes(value)))


def _register_readers() -> None:
    readers = fastavro.read.LOGICAL_READERS
    readers[f"bytes-{_BASE64}"] = lambda v, _w, _r: _b64(v)
    readers[f"fixed-{_BASE64}"] = lambda v, _w, _r: _b64(v)
    readers[f"bytes-{_DECIMAL}"] = _decimal
    readers[f"fixed-{_DECIMAL}"] = _decimal
    readers[f"fixed-{_UUID}"] = _uuid
    readers[f"int-{_PREFIX}date"] = _date
    readers[f"int-{_PREFIX}time-millis"] = lambda v, _w, _r: _time(v, 1_000)
    readers[f"long-{_PREFIX}time-micros"] = lambda v, _w, _r: _time(v, 1_000_000)
    for unit in _PER_SECOND:
        readers[f"long-{_PREFIX}timestamp-{unit}"] = _timestamp_reader(unit, "Z")
        readers[f"long-{_PREFIX}local-timestamp-{unit}"] = _timestamp_reader(unit, "")


def _timestamp_reader(unit: str, zone: str) -> Callable[[int, object, object], str | int]:
    return lambda value, _w, _r: _timestamp(value, unit, zone)


_register_readers()


def _max_decimal_precision(size: int) -> int:
    """Digits a two's-complement ``fixed(size)`` always holds (Avro's ``maxPrecision``)."""
    return len(str(2 ** (8 * size - 1) - 1)) - 1 if size > 0 else 0


def _valid_decimal(node: dict[str, Any], size: int | None) -> bool:
    precision, scale = node.get("precision"), node.get("scale", 0)
    if type(precision) is not int or type(scale) is not int:
        return False
    if precision <= 0 or not 0 <= scale <= precision:
        return False
    return size is None or precision <= _max_decimal_precision(size)


def _rewrite(node: Any) -> Any:
    """A schema as JSON with our readers' logical types in place of Avro's (invalid ones
    dropped), every ``bytes`` and ``fixed`` read as base64, and field defaults left out."""
    if isinstance(node, str):
        return {"type": "bytes", "logicalType": _BASE64} if node == "bytes" else node
    if isinstance(node, list):
        return [_rewrite(branch) for branch in node]
    if not isinstance(node, dict):
        return node  # not a schema: fastavro's parser says why
    out = {k: v for k, v in node.items() if k != "logicalType"}
    kind, logical = node.get("type"), node.get("logicalType")
    if kind in ("record", "error"):
        fields = node.get("fields")
        if isinstance(fields, list):
            out["fields"] = [
                {k: _rewrite(v) if k == "type" else v for k, v in f.items() if k != "default"}
                if isinstance(f, dict)
                else f
                for f in fields
            ]
    elif kind == "array" and "items" in node:
        out["items"] = _rewrite(node["items"])
    elif kind == "map" and "values" in node:
        out["values"] = _rewrite(node["values"])
    elif kind == "fixed":
        size = node.get("size")
        if logical == "decimal" and type(size) is int and _valid_decimal(node, size):
            out["logicalType"] = _DECIMAL
        elif logical == "uuid" and size == 16:
            out["logicalType"] = _UUID
        else:
            out["logicalType"] = _BASE64
    elif kind == "bytes":
        decimal = logical == "decimal" and _valid_decimal(node, None)
        out["logicalType"] = _DECIMAL if decimal else _BASE64
    elif kind in _PRIMITIVES:
        ours = _LOGICAL.get((kind, logical))
        if ours is not None:
            out["logicalType"] = ours
    elif isinstance(kind, dict | list):
        out["type"] = _rewrite(kind)
    elif logical is not None:
        out["logicalType"] = logical  # on an enum or a named reference: not ours to judge
    return out


@dataclass(slots=True)
class _Parsed:
    schema: dict[str, Any]  # fastavro's parsed wrapper record
    guard: _Guard | None  # set when the schema is recursive or has arrays of empty items


class _Truncated(Exception):
    pass


class _Guard:
    """A bounded walk over a datum that checks what fastavro would not: nesting depth and
    counts of items that take no bytes. Reads nothing into values."""

    __slots__ = ("named", "schema", "zero")

    def __init__(self, schema: Any, named: dict[str, Any], zero: set[int]) -> None:
        self.schema = schema
        self.named = named
        self.zero = zero  # id() of the array schemas whose items take no bytes

    def check(self, data: bytes) -> None:
        try:
            # The count of empty items so far travels in a list of one: nothing of one
            # datum's walk is kept on the guard, which threads share.
            self._skip(self.schema, data, 0, 0, [0])
        except (_Truncated, IndexError):
            # Truncation or a bad index: fastavro's own read reports those in its words.
            return

    @staticmethod
    def _long(data: bytes, pos: int) -> tuple[int, int]:
        raw = shift = 0
        while True:
            if pos >= len(data):
                raise _Truncated
            byte = data[pos]
            pos += 1
            raw |= (byte & 0x7F) << shift
            shift += 7
            if not byte & 0x80:
                return (raw >> 1) ^ -(raw & 1), pos
            if shift > 63:
                raise _Truncated  # no long: fastavro refuses it too

    def _skip(self, schema: Any, data: bytes, pos: int, depth: int, empty: list[int]) -> int:
        if isinstance(schema, str):
            schema = self.named.get(schema, schema)
            if isinstance(schema, str):
                return self._primitive(schema, data, pos)
        if isinstance(schema, list):
            branch, pos = self._long(data, pos)
            if not 0 <= branch < len(schema):
                raise IndexError
            return self._skip(schema[branch], data, pos, depth, empty)
        kind = schema["type"]
        if not isinstance(kind, str) or kind not in _KINDS:
            return self._skip(kind, data, pos, depth, empty)  # {"type": "a.Name"} or nested
        if kind in ("record", "error", "array", "map"):
            depth += 1
            if depth > MAX_DEPTH:
                raise PayloadDecodeError(
                    f"nested more than {MAX_DEPTH} levels deep (a recursive schema), "
                    "more than this reader follows"
                )
        if kind in ("record", "error"):
            for field in schema["fields"]:
                pos = self._skip(field["type"], data, pos, depth, empty)
            return pos
        if kind in ("array", "map"):
            return self._blocks(schema, data, pos, depth, empty)
        if kind == "fixed":
            pos += schema["size"]
            if pos > len(data):
                raise _Truncated
            return pos
        if kind == "enum":
            return self._long(data, pos)[1]
        return self._primitive(kind, data, pos)

    def _blocks(
        self, schema: dict[str, Any], data: bytes, pos: int, depth: int, empty: list[int]
    ) -> int:
        items = schema.get("items", schema.get("values"))
        takes_no_bytes = id(schema) in self.zero
        while True:
            count, pos = self._long(data, pos)
            if count == 0:
                return pos
            if count < 0:  # a block with its size in bytes after the count
                count = -count
                pos = self._long(data, pos)[1]
            if takes_no_bytes:
                empty[0] += count
                if empty[0] > MAX_EMPTY_ITEMS:
                    raise PayloadDecodeError(
                        f"arrays of items that take no bytes hold {empty[0]} of them, "
                        f"more than the {MAX_EMPTY_ITEMS} this reader builds"
                    )
                continue
            for _ in range(count):  # every item takes a byte at least: ends with the data
                if schema["type"] == "map":
                    pos = self._primitive("string", data, pos)
                pos = self._skip(items, data, pos, depth, empty)

    def _primitive(self, kind: str, data: bytes, pos: int) -> int:
        if kind in ("int", "long", "enum"):
            return self._long(data, pos)[1]
        if kind in ("bytes", "string"):
            size, pos = self._long(data, pos)
            if size < 0:
                raise _Truncated
            pos += size
        elif kind == "boolean":
            pos += 1
        elif kind == "float":
            pos += 4
        elif kind == "double":
            pos += 8
        if pos > len(data):
            raise _Truncated
        return pos


def _risks(root: Any, named: dict[str, Any]) -> tuple[bool, set[int]]:
    """Whether the schema is recursive, and the arrays (by id()) whose items take no bytes."""
    zero_arrays: set[int] = set()
    recursive = False
    done: set[str] = set()
    zero_memo: dict[str, bool] = {}

    def takes_no_bytes(schema: Any, seen: frozenset[str]) -> bool:
        if isinstance(schema, str):
            if schema in _PRIMITIVES:
                return schema == "null"
            if schema in seen or schema not in named:
                return False
            if schema not in zero_memo:
                zero_memo[schema] = takes_no_bytes(named[schema], seen | {schema})
            return zero_memo[schema]
        if isinstance(schema, list):
            return False
        kind = schema.get("type")
        if not isinstance(kind, str) or kind not in _KINDS:
            return takes_no_bytes(kind, seen)
        if kind in ("record", "error"):
            name = schema.get("name")
            inner = seen | {name} if isinstance(name, str) else seen
            return all(takes_no_bytes(f["type"], inner) for f in schema["fields"])
        if kind == "fixed":
            return schema.get("size") == 0
        return kind == "null"

    def visit(schema: Any, stack: tuple[str, ...]) -> None:
        nonlocal recursive
        if isinstance(schema, str):
            if schema in _PRIMITIVES or schema not in named:
                return
            if schema in stack:
                recursive = True
                return
            if schema in done:
                return
            schema = named[schema]
        if isinstance(schema, list):
            for branch in schema:
                visit(branch, stack)
            return
        kind = schema.get("type")
        if not isinstance(kind, str) or kind not in _KINDS:
            visit(kind, stack)
            return
        name = schema.get("name")
        if kind in _NAMED and isinstance(name, str):
            stack = (*stack, name)
        if kind in ("record", "error"):
            for field in schema["fields"]:
                visit(field["type"], stack)
        elif kind == "array":
            if takes_no_bytes(schema["items"], frozenset()):
                zero_arrays.add(id(schema))
            visit(schema["items"], stack)
        elif kind == "map":
            visit(schema["values"], stack)
        if kind in _NAMED and isinstance(name, str):
            done.add(name)

    visit(root, ())
    return recursive, zero_arrays


class AvroDecoder:
    """Avro data under the schemas of one source, each id's schema parsed once (and a schema
    that does not parse remembered as such)."""

    def __init__(self, source: SchemaSource) -> None:
        self.source = source
        self._parsed: dict[int, _Parsed | str] = {}
        self._lock = threading.Lock()

    def _parse(self, schema: RegisteredSchema) -> _Parsed:
        parsed = self._parsed.get(schema.id)
        if parsed is None:
            with self._lock:
                parsed = self._parsed.get(schema.id)
                if parsed is None:
                    parsed = self._parsed[schema.id] = self._build(schema)
        if isinstance(parsed, str):
            raise PayloadDecodeError(parsed)
        return parsed

    def _build(self, schema: RegisteredSchema) -> _Parsed | str:
        named: dict[str, Any] = {}
        try:
            for name, ref in resolve_references(self.source, schema):
                try:
                    fastavro.parse_schema(_rewrite(json.loads(ref.schema)), named_schemas=named)
                except Exception as exc:
                    return (
                        f"{schema_label(schema)} refers to {name} ({schema_label(ref)}), "
                        f"which is no usable Avro schema: {_reason(exc)}"
                    )
            # One record around the schema: its encoding is its one field's, and unlike a
            # top-level union or name it carries the named types to the reader.
            wrapper = {
                "type": "record",
                "name": _WRAPPER,
                "fields": [{"name": "v", "type": _rewrite(json.loads(schema.schema))}],
            }
            parsed = fastavro.parse_schema(wrapper, named_schemas=named)
            recursive, zero = _risks(parsed["fields"][0]["type"], named)
        except PayloadDecodeError as exc:
            return exc.reason
        except Exception as exc:
            return f"{schema_label(schema)} is no usable Avro schema: {_reason(exc)}"
        guard = _Guard(parsed, named, zero) if recursive or zero else None
        return _Parsed(parsed, guard)

    def decode(self, schema: RegisteredSchema, payload: bytes) -> Any:
        """The JSON-ready value of one datum (``payload``: the bytes after the header)."""
        parsed = self._parse(schema)
        try:
            if parsed.guard is not None:
                parsed.guard.check(payload)
            stream = io.BytesIO(payload)
            value = fastavro.schemaless_reader(stream, parsed.schema, None)
            end = stream.tell()
        except Exception as exc:
            reason = exc.reason if isinstance(exc, PayloadDecodeError) else _read_reason(exc)
            raise PayloadDecodeError(_failure(schema, reason)) from None
        if end != len(payload):
            extra = len(payload) - end
            raise PayloadDecodeError(
                _failure(
                    schema,
                    f"{extra} byte{'' if extra == 1 else 's'} after the datum (it ends at "
                    f"byte {end} of the {len(payload)} after the header)",
                )
            )
        return value["v"]


def _failure(schema: RegisteredSchema, reason: str) -> str:
    return f"does not parse as Avro under {schema_label(schema)}: {reason}"


def _reason(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _read_reason(exc: BaseException) -> str:
    if isinstance(exc, EOFError | _Truncated):
        text = " ".join(str(exc).split())
        return "the datum ends early" + (f" ({text})" if text else "")
    if isinstance(exc, IndexError):
        return f"a union branch or enum symbol index out of range ({_reason(exc)})"
    return _reason(exc)
