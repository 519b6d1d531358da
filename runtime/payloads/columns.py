"""Keys and values in Confluent's wire format as typed Arrow columns: what ``read_table`` gives,
with ``key`` and ``value`` decoded through the cluster's schemas.

    >>> import kafka_format
    >>> table = kafka_format.read_table("/backup/kafka-logs/orders-0")
    >>> source = kafka_format.open_schema_source("/backup/kafka-logs")    # its _schemas-0
    >>> decoded = kafka_format.decode_payloads(table, value_format="avro", schema_registry=source)
    >>> decoded.schema.field("value").type
    StructType(struct<id: int64, note: string>)
    >>> decoded.column("value_schema_id")[0], decoded.column("_payload_error")[0]
    (<pyarrow.Int32Scalar: 1>, <pyarrow.StringScalar: None>)

Options of :func:`decode_payloads` (and of :class:`PayloadColumns`, which keeps its compiled
schemas between batches):

================  ===============================================================================
key_format        ``avro``, ``protobuf``, ``json-schema`` or ``schema-registry`` (the format the
value_format      id's schema has); None leaves that column as it is
schema_registry   a log dir, a ``_schemas-N`` dir, an export file, a URL, or a ``SchemaSource``;
                  None: the ``_schemas`` partition of ``log_dir``
log_dir           where to look for ``_schemas`` when ``schema_registry`` is None
key_subject       the subject whose latest schema types the column; None: ``<topic>-key`` /
value_subject     ``<topic>-value`` per row's topic (Confluent's TopicNameStrategy)
key_message       Protobuf only: the message (full name) of the latest schema that types the
value_message     column; None: its first message, as Confluent's ``ProtobufSchema`` takes
output            ``struct``: the latest schema's Arrow type (``arrow_types``); ``json``: the
                  value as written, compact JSON text (the ``decoders`` JSON-ready form)
mode              ``PERMISSIVE``: a row that does not decode is null, and says why in
                  ``_payload_error``; ``FAILFAST``: the first such row raises
================  ===============================================================================

The result has the input's columns in their order, ``key`` / ``value`` replaced by their
decoded form, then ``key_schema_id`` / ``value_schema_id`` (int32, null for a null or unframed
payload), and in ``PERMISSIVE`` mode ``key_raw`` / ``value_raw`` (the input's bytes, untouched:
Arrow shares their buffers) and ``_payload_error`` (``"value: <why>"``, key and value joined by
``"; "``; null for a row that decoded), for each side decoded.

**Older versions** are read as the latest: Avro by Avro's own schema resolution (fastavro's
``schemaless_reader(writer, reader)``: added fields take their defaults, removed ones are
skipped; a record whose schema does not resolve is an error row); Protobuf and JSON Schema by
field name (fields the latest lacks are dropped, those the record lacks are null).

A null key or value (a tombstone) is null, no error; bytes that are not in the wire format
(no magic byte, fewer than 5 bytes) are an error row. Everything is cached per schema id (a
Protobuf schema is compiled once, by protoc) in the :class:`PayloadColumns`, and
:func:`decode_payloads` keeps one per source object: open the source once and pass it for
many batches.
"""

from __future__ import annotations

import io
import json
import os
import threading
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import fastavro
import pyarrow as pa

from .arrow_types import (
    JSON_TEXT,
    PROTOBUF_ENUM,
    Convert,
    avro_schema,
    json_checked,
    json_schema_type,
    protobuf_scalar_type,
    protobuf_type,
    protobuf_well_known,
)
from .avro import AvroDecoder
from .decoders import KINDS, payload_decoder
from .json_schema import JsonSchemaDecoder
from .protobuf import ProtobufDecoder
from .registry import RegisteredSchema, SchemaRegistryError, SchemaSource, open_schema_source
from .wire import (
    HEADER_SIZE,
    PayloadDecodeError,
    WireFormatError,
    read_header,
    read_message_indexes,
)
from .wire import schema_label as label

__all__ = [
    "MODES",
    "OUTPUTS",
    "PayloadColumns",
    "decode_payloads",
    "one_type",
    "payload_arrow_type",
]

MODES = ("PERMISSIVE", "FAILFAST")
OUTPUTS = ("struct", "json")
ERROR_COLUMN = "_payload_error"
#: The schema type each kind reads (None: any, the id's own).
_TYPE_OF_KIND = {"avro": "AVRO", "protobuf": "PROTOBUF", "json-schema": "JSON"}
_NAMES = {"AVRO": "Avro", "PROTOBUF": "Protobuf", "JSON": "JSON Schema"}

Source = str | os.PathLike[str] | SchemaSource | None
Data = pa.Table | pa.RecordBatch


def _type_of(schema: RegisteredSchema) -> str:
    return (schema.schema_type or "AVRO").upper()


class _Decoders:
    """The format decoders of one source, shared by every column over it: a Protobuf schema
    is compiled once per source, whichever subject asks."""

    __slots__ = ("avro", "json", "protobuf", "source")

    def __init__(self, source: SchemaSource) -> None:
        self.source = source
        self.avro = AvroDecoder(source)
        self.protobuf = ProtobufDecoder(source)
        self.json = JsonSchemaDecoder(source)


# --- a subject's column ----------------------------------------------------------------------


@dataclass(slots=True)
class _Target:
    """The column type a subject's latest schema gives, and per writer schema id how to read a
    framed payload into a value of that type (a callable, or why not)."""

    decoders: _Decoders
    kind: str
    latest: RegisteredSchema
    arrow_type: pa.DataType
    avro: Any = None  # AvroTyped of the latest
    message: Any = None  # the Protobuf Descriptor typing the column
    json_convert: Convert | None = None
    readers: dict[int, Callable[[bytes], Any] | str] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def read(self, schema_id: int, data: bytes) -> Any:
        reader = self.readers.get(schema_id)
        if reader is None:
            with self.lock:
                reader = self.readers.get(schema_id)
                if reader is None:
                    reader = self.readers[schema_id] = self._reader(schema_id)
        if isinstance(reader, str):
            raise PayloadDecodeError(reader)
        return reader(data)

    def _reader(self, schema_id: int) -> Callable[[bytes], Any] | str:
        source = self.decoders.source
        try:
            writer = source.by_id(schema_id)
        except Exception as exc:  # a live registry that does not answer
            return f"schema id {schema_id}: {' '.join(str(exc).split())}"
        if writer is None:
            return source.explain_missing(schema_id)
        want, have = _type_of(self.latest), _type_of(writer)
        if have != want:
            return (
                f"{label(writer)} is a {_NAMES.get(have, have)} schema; the column's, "
                f"{label(self.latest)}, is {_NAMES.get(want, want)}"
            )
        try:
            if want == "AVRO":
                return self._avro_reader(writer)
            if want == "PROTOBUF":
                return self._protobuf_reader(writer)
            return self._json_reader(writer)
        except PayloadDecodeError as exc:
            return exc.reason

    def _avro_reader(self, writer: RegisteredSchema) -> Callable[[bytes], Any]:
        typed = self.avro
        same = writer.id == self.latest.id
        # Records of the latest schema need no resolution: fastavro reads them with it alone.
        if same:
            writer_schema, reader_schema, risky = typed.parsed, None, typed.risky
        else:
            parsed = avro_schema(self.decoders.source, writer, reader=False)
            writer_schema, reader_schema, risky = parsed.parsed, typed.parsed, parsed.risky
        convert, named = typed.convert, typed.named
        # Arrays of items that take no bytes and recursive nesting let a few bytes ask
        # fastavro for unbounded work; avro.AvroDecoder walks such data first, bounded.
        guard = self.decoders.avro.decode if risky else None
        what = label(writer) if same else f"{label(writer)} as the column's {label(self.latest)}"

        def read(data: bytes) -> Any:
            try:
                if guard is not None:
                    guard(writer, data[HEADER_SIZE:])
                stream = io.BytesIO(data)
                stream.seek(HEADER_SIZE)
                value = fastavro.schemaless_reader(
                    stream, writer_schema, reader_schema, return_named_type=named
                )["v"]
                end = stream.tell()
            except PayloadDecodeError:
                raise
            except Exception as exc:
                raise PayloadDecodeError(f"does not read under {what}: {_reason(exc)}") from None
            if end != len(data):
                extra = len(data) - end
                plural = "" if extra == 1 else "s"
                raise PayloadDecodeError(
                    f"{extra} byte{plural} after the Avro datum of {label(writer)}"
                )
            return value if convert is None or value is None else convert(value)

        return read

    def _protobuf_reader(self, writer: RegisteredSchema) -> Callable[[bytes], Any]:
        protobuf = self.decoders.protobuf
        target = self.message
        converters: dict[tuple[int, ...], tuple[Any, Convert] | str] = {}

        def compiled(indexes: tuple[int, ...]) -> tuple[Any, Convert]:
            found = converters.get(indexes)
            if found is None:
                cls = protobuf.message_class(writer, indexes)
                name = cls.DESCRIPTOR.full_name
                if name != target.full_name:
                    found = (
                        f"message {name} of {label(writer)} is not the column's "
                        f"{target.full_name}; give key_message / value_message to type the "
                        "column with it"
                    )
                else:
                    found = (cls, protobuf_converter(cls.DESCRIPTOR, self.arrow_type))
                converters[indexes] = found
            if isinstance(found, str):
                raise PayloadDecodeError(found)
            return found

        def read(data: bytes) -> Any:
            indexes, start = read_message_indexes(data)
            cls, convert = compiled(indexes)
            message = cls()
            try:
                message.ParseFromString(data[start:])
            except Exception as exc:
                raise PayloadDecodeError(
                    f"does not parse as Protobuf {target.full_name} under {label(writer)}: "
                    f"{_reason(exc)}"
                ) from None
            return convert(message)

        return read

    def _json_reader(self, writer: RegisteredSchema) -> Callable[[bytes], Any]:
        decode, convert = self.decoders.json.decode, self.json_convert
        what = label(self.latest)

        def read(data: bytes) -> Any:
            value = decode(writer, data[HEADER_SIZE:])
            return None if value is None else json_checked(convert, value, what)

        return read


def _make_target(
    decoders: _Decoders, kind: str, subject: str, message: str | None
) -> _Target | str:
    """The column a subject's latest schema types, or why there is none (no live version)."""
    source = decoders.source
    latest = source.by_subject(subject)
    if latest is None:
        return f"subject {subject} has no live version in {source.description}"
    schema_type = _type_of(latest)
    wanted = _TYPE_OF_KIND.get(kind)
    if wanted is not None and schema_type != wanted:
        raise SchemaRegistryError(
            f"{label(latest)} is {_NAMES.get(schema_type, schema_type)}, not "
            f"{_NAMES[wanted]} as {kind!r} asks"
        )
    try:
        if schema_type == "AVRO":
            typed = avro_schema(source, latest)
            return _Target(decoders, kind, latest, typed.arrow_type, avro=typed)
        if schema_type == "PROTOBUF":
            descriptor = _protobuf_message(decoders, latest, message)
            return _Target(decoders, kind, latest, protobuf_type(descriptor), message=descriptor)
        if schema_type == "JSON":
            arrow_type, convert = json_schema_type(source, latest)
            return _Target(decoders, kind, latest, arrow_type, json_convert=convert)
    except PayloadDecodeError as exc:
        raise SchemaRegistryError(
            f"subject {subject}: {exc.reason}"
            if exc.reason.startswith("schema id")
            else f"{label(latest)}: {exc.reason}"
        ) from None
    raise SchemaRegistryError(f"{label(latest)} has schema type {latest.schema_type!r}")


def _protobuf_message(decoders: _Decoders, latest: RegisteredSchema, message: str | None) -> Any:
    first = decoders.protobuf.message_class(latest, (0,)).DESCRIPTOR
    if message is None or message == first.full_name:
        return first
    try:
        return first.file.pool.FindMessageTypeByName(message)
    except KeyError:
        raise PayloadDecodeError(f"{label(latest)} has no message {message}") from None


def one_type(side: str, typed: dict[str, pa.DataType], remedy: str) -> pa.DataType | None:
    """The one type a decoded column has, given the type each of its subjects' latest schema
    gives (``typed``; None when none has one): a column holds one type, so subjects that
    disagree are a :class:`SchemaRegistryError` naming each, then ``remedy``. The rule for
    ``decode_payloads`` and for Spark's driver alike."""
    kinds = set(typed.values())
    if len(kinds) > 1:
        listed = "; ".join(f"{s}: {t}" for s, t in sorted(typed.items()))
        raise SchemaRegistryError(
            f"the {side} column would hold several types, one per subject ({listed}): {remedy}"
        )
    return kinds.pop() if kinds else None


def payload_arrow_type(
    source: SchemaSource,
    subject: str,
    *,
    kind: str = "schema-registry",
    message: str | None = None,
) -> pa.DataType:
    """The Arrow type ``output="struct"`` gives a column whose subject is ``subject``: its
    latest schema's (for Spark, which needs a schema before it reads a row)."""
    if kind not in KINDS:
        raise SchemaRegistryError(f"unknown payload format {kind!r}: one of {', '.join(KINDS)}")
    target = _make_target(_Decoders(source), kind, subject, message)
    if isinstance(target, str):
        raise SchemaRegistryError(target)
    return target.arrow_type


# --- Protobuf values ------------------------------------------------------------------------


def _enum_names(fd: Any) -> Convert:
    names = {v.number: v.name for v in fd.enum_type.values}
    return lambda number: names.get(number, str(number))


def _pb_time(message: Any) -> int:
    return message.seconds * 1_000_000 + message.nanos // 1_000


def _pb_json(message: Any) -> str:
    from google.protobuf import json_format

    return json.dumps(json_format.MessageToDict(message), separators=(",", ":"))


def protobuf_converter(descriptor: Any, target: pa.StructType, where: str = "") -> Convert:
    """A converter from messages of ``descriptor`` (the writer's) into the dicts ``target``
    (a struct type, from :func:`protobuf_type` of the column's message) takes: fields matched
    by name, at every depth; a field ``target`` lacks is dropped, one the writer lacks is
    null. A field whose types cannot meet (a string become a message) converts to an error
    that names it, raised when a record holds it."""
    handlers: dict[Any, tuple[str, Convert | None]] = {}
    repeated: list[str] = []
    for i in range(target.num_fields):
        field = target.field(i)
        if pa.types.is_list(field.type) or pa.types.is_map(field.type):
            # Spark gives an empty list (map) for a repeated field the message leaves empty,
            # which ListFields does not name; and for one an older writer did not have, as
            # its bytes read under the column's descriptor.
            repeated.append(field.name)
        fd = descriptor.fields_by_name.get(field.name)
        if fd is not None:
            path = f"{where}.{field.name}" if where else field.name
            handlers[fd] = (field.name, _pb_value(fd, field.type, path))

    def convert(message: Any) -> dict[str, Any]:
        out: dict[str, Any] = {name: [] for name in repeated}
        for fd, value in message.ListFields():
            handler = handlers.get(fd)
            if handler is not None:
                name, one = handler
                out[name] = value if one is None else one(value)
        return out

    return convert


def _mismatch(path: str, found: str, wanted: pa.DataType) -> Convert:
    def fail(_value: Any) -> Any:
        raise PayloadDecodeError(f"field {path} is {found} here, {wanted} in the column's schema")

    return fail


def _pb_value(fd: Any, wanted: pa.DataType, path: str) -> Convert | None:
    """The converter of one field's value (as ``ListFields`` gives it) into ``wanted``."""
    message = fd.message_type
    if message is not None and message.GetOptions().map_entry:
        if not pa.types.is_map(wanted):
            return _mismatch(path, "a map", wanted)
        value_fd = message.fields_by_name["value"]
        key_ok = _pb_scalar_fits(message.fields_by_name["key"], wanted.key_type)
        if not key_ok:
            return _mismatch(path, "a map of other keys", wanted)
        one = _pb_single(value_fd, wanted.item_type, path)
        if one is None:
            return lambda pairs: dict(pairs)
        return lambda pairs: {k: one(v) for k, v in pairs.items()}
    if fd.is_repeated:
        if not pa.types.is_list(wanted):
            return _mismatch(path, "a repeated field", wanted)
        one = _pb_single(fd, wanted.value_type, path)
        if one is None:
            return list
        return lambda items: [one(x) for x in items]
    if pa.types.is_list(wanted) or pa.types.is_map(wanted):
        return _mismatch(path, "a single value", wanted)
    return _pb_single(fd, wanted, path)


def _pb_single(fd: Any, wanted: pa.DataType, path: str) -> Convert | None:
    """The converter of one (not repeated) value of ``fd`` into ``wanted``."""
    message = fd.message_type
    if message is None:
        if not _pb_scalar_fits(fd, wanted):
            return _mismatch(path, str(protobuf_scalar_type(fd)), wanted)
        return _enum_names(fd) if fd.type == PROTOBUF_ENUM else None
    special = protobuf_well_known(message)
    if special is not None:
        if special != wanted:
            return _mismatch(path, str(special), wanted)
        return _pb_json if special == JSON_TEXT else _pb_time
    if not pa.types.is_struct(wanted):
        return _mismatch(path, f"message {message.full_name}", wanted)
    return protobuf_converter(message, wanted, path)


def _pb_scalar_fits(fd: Any, wanted: pa.DataType) -> bool:
    """Whether a scalar's values go into ``wanted`` as they are: the same type, or a wider
    number (an int32 field become int64 between versions, as Protobuf allows)."""
    have = protobuf_scalar_type(fd)
    if have is None:
        return False
    if have == wanted:
        return True
    if pa.types.is_integer(have):
        return pa.types.is_integer(wanted) or pa.types.is_decimal(wanted)
    return pa.types.is_floating(have) and pa.types.is_floating(wanted)


# --- columns ---------------------------------------------------------------------------------


@dataclass(slots=True)
class _Side:
    """How one of ``key`` and ``value`` is decoded."""

    name: str
    kind: str
    subject: str | None
    message: str | None
    targets: dict[str, _Target | str] = field(default_factory=dict)  # by subject


@dataclass(slots=True)
class _Decoded:
    values: pa.Array
    ids: pa.Array
    errors: list[str | None]


class PayloadColumns:
    """:func:`decode_payloads` with its options fixed, its schemas compiled once for all the
    batches it decodes (thread-safe). Pickles as its options and the source's spec."""

    def __init__(
        self,
        source: SchemaSource,
        *,
        key_format: str | None = None,
        value_format: str | None = None,
        key_subject: str | None = None,
        value_subject: str | None = None,
        key_message: str | None = None,
        value_message: str | None = None,
        output: str = "struct",
        mode: str = "PERMISSIVE",
    ) -> None:
        for what, kind in (("key_format", key_format), ("value_format", value_format)):
            if kind is not None and kind not in KINDS:
                raise SchemaRegistryError(
                    f"{what} {kind!r} is no payload format: one of {', '.join(KINDS)}"
                )
        if output not in OUTPUTS:
            raise SchemaRegistryError(f"output {output!r}: one of {', '.join(OUTPUTS)}")
        if mode not in MODES:
            raise SchemaRegistryError(f"mode {mode!r}: one of {', '.join(MODES)}")
        self.source = source
        self.output = output
        self.mode = mode
        self._options = dict(key_format=key_format, value_format=value_format,
                             key_subject=key_subject, value_subject=value_subject,
                             key_message=key_message, value_message=value_message,
                             output=output, mode=mode)  # fmt: skip
        self._decoders = _Decoders(source)
        self._json = {k: payload_decoder(k, source) for k in {key_format, value_format} if k}
        self._sides = [
            _Side(name, kind, subject, message)
            for name, kind, subject, message in (
                ("key", key_format, key_subject, key_message),
                ("value", value_format, value_subject, value_message),
            )
            if kind is not None
        ]
        self._lock = threading.Lock()

    def __reduce__(self) -> tuple[Any, ...]:
        return (_reopen, (self.source, self._options))

    # -- types -------------------------------------------------------------------------------

    def _target(self, side: _Side, subject: str) -> _Target | str:
        found = side.targets.get(subject)
        if found is None:
            with self._lock:
                found = side.targets.get(subject)
                if found is None:
                    found = _make_target(self._decoders, side.kind, subject, side.message)
                    side.targets[subject] = found
        return found

    def _subjects(self, side: _Side, topics: Sequence[str | None]) -> list[str]:
        if side.subject is not None:
            return [side.subject]
        return [f"{t}-{side.name}" for t in topics if t is not None]

    def arrow_type(self, side: str, topics: Sequence[str | None] = ()) -> pa.DataType:
        """The type of the decoded ``side`` column for rows of ``topics`` (ignored when the
        side's subject is given): string for ``output="json"``; else the latest schema's,
        which every subject concerned must agree on (null when none has a live version)."""
        found = next((s for s in self._sides if s.name == side), None)
        if found is None:
            raise SchemaRegistryError(f"{side} is not decoded (no {side}_format)")
        if self.output == "json":
            return pa.string()
        typed: dict[str, pa.DataType] = {}
        for subject in self._subjects(found, topics):
            target = self._target(found, subject)
            if not isinstance(target, str):
                typed[subject] = target.arrow_type
        remedy = f"decode one topic at a time, give {side}_subject, or output='json'"
        agreed = one_type(side, typed, remedy)
        return pa.null() if agreed is None else agreed

    # -- decoding ----------------------------------------------------------------------------

    def decode(self, data: Data) -> Data:
        """``data`` (a table or record batch with ``read_table``'s columns) with its payloads
        decoded; a table keeps its batches, each decoded in turn."""
        if not self._sides:
            return data
        if isinstance(data, pa.RecordBatch):
            topics = _topics(data)
            return self._batch(data, {s.name: self.arrow_type(s.name, topics) for s in self._sides})
        if not isinstance(data, pa.Table):
            raise TypeError(f"decode_payloads takes a pyarrow Table or RecordBatch, not {data!r}")
        topics = _topics(data)
        types = {s.name: self.arrow_type(s.name, topics) for s in self._sides}
        batches = [self._batch(b, types) for b in data.to_batches()]
        return pa.Table.from_batches(batches, schema=self._schema(data.schema, types))

    def _schema(self, schema: pa.Schema, types: dict[str, pa.DataType]) -> pa.Schema:
        fields = list(schema)
        for side in self._sides:
            if side.name not in schema.names:
                raise SchemaRegistryError(f"no {side.name} column to decode: {schema.names}")
            at = schema.get_field_index(side.name)
            fields[at] = pa.field(side.name, types[side.name])
        added = [pa.field(f"{s.name}_schema_id", pa.int32()) for s in self._sides]
        if self.mode == "PERMISSIVE":
            added += [pa.field(f"{s.name}_raw", schema.field(s.name).type) for s in self._sides]
            added.append(pa.field(ERROR_COLUMN, pa.string()))
        clash = [f.name for f in added if f.name in schema.names]
        if clash:
            raise SchemaRegistryError(f"the input already has columns {clash}: decoded twice?")
        return pa.schema(fields + added)

    def _batch(self, batch: pa.RecordBatch, types: dict[str, pa.DataType]) -> pa.RecordBatch:
        schema = self._schema(batch.schema, types)
        columns = list(batch.columns)
        topics = batch.column("topic").to_pylist() if "topic" in batch.schema.names else None
        decoded: dict[str, _Decoded] = {}
        for side in self._sides:
            raw = batch.column(side.name)
            result = self._column(side, raw.to_pylist(), topics, types[side.name])
            decoded[side.name] = result
            columns[batch.schema.get_field_index(side.name)] = result.values
        if self.mode == "FAILFAST":
            self._fail_at_first(batch, [(s.name, decoded[s.name]) for s in self._sides])
        columns += [decoded[s.name].ids for s in self._sides]
        if self.mode == "PERMISSIVE":
            columns += [batch.column(s.name) for s in self._sides]
            columns.append(_joined([(s.name, decoded[s.name].errors) for s in self._sides]))
        return pa.RecordBatch.from_arrays(columns, schema=schema)

    def _column(
        self,
        side: _Side,
        raws: list[bytes | None],
        topics: list[str | None] | None,
        arrow_type: pa.DataType,
    ) -> _Decoded:
        values: list[Any] = []
        ids: list[int | None] = []
        errors: list[str | None] = [None] * len(raws)
        if self.output == "json":
            decoder = self._json[side.kind]
            for i, data in enumerate(raws):
                if data is None:
                    values.append(None)
                    ids.append(None)
                    continue
                got = decoder.decode(data)
                ids.append(got.schema_id)
                if got.error is not None:
                    values.append(None)
                    errors[i] = got.error
                else:
                    values.append(json.dumps(got.value, ensure_ascii=False, separators=(",", ":")))
            return _Decoded(pa.array(values, pa.string()), pa.array(ids, pa.int32()), errors)
        if side.subject is None and topics is None:
            raise SchemaRegistryError(
                f"no topic column to name the {side.name} subject by: give {side.name}_subject"
            )
        by_topic: dict[str | None, _Target | str] = {}
        for i, data in enumerate(raws):
            if data is None:
                values.append(None)
                ids.append(None)
                continue
            try:
                schema_id = read_header(data)
            except WireFormatError as exc:
                values.append(None)
                ids.append(None)
                errors[i] = exc.reason
                continue
            ids.append(schema_id)
            topic = None if topics is None else topics[i]
            target = by_topic.get(topic)
            if target is None:
                subject = side.subject or f"{topic}-{side.name}"
                target = by_topic[topic] = self._target(side, subject)
            if isinstance(target, str):
                values.append(None)
                errors[i] = target
                continue
            try:
                values.append(target.read(schema_id, data))
            except (PayloadDecodeError, WireFormatError) as exc:
                values.append(None)
                errors[i] = exc.reason
            except Exception as exc:  # a converter's own failure: still a row, never a raise
                values.append(None)
                errors[i] = f"schema id {schema_id}: {_reason(exc)}"
        return _Decoded(_array(values, arrow_type, errors), pa.array(ids, pa.int32()), errors)

    def _fail_at_first(self, batch: pa.RecordBatch, sides: list[tuple[str, _Decoded]]) -> None:
        """Raise for the first row (in row order, its key before its value) that failed."""
        failed = [
            (row, i, side, result)
            for i, (side, result) in enumerate(sides)
            for row in [next((r for r, e in enumerate(result.errors) if e is not None), None)]
            if row is not None
        ]
        if not failed:
            return
        row, _, side, result = min(failed, key=lambda f: (f[0], f[1]))
        names = batch.schema.names

        def cell(name: str) -> Any:
            return batch.column(name)[row].as_py() if name in names else None

        where = cell("file")
        if where is None and cell("topic") is not None:
            where = f"{cell('topic')}-{cell('partition')}"
        offset = cell("offset")
        schema_id = result.ids[row].as_py()
        place = ", ".join(
            x for x in (where, f"offset {offset}" if offset is not None else None) if x
        )
        what = side if schema_id is None else f"{side} (schema id {schema_id})"
        place = f"{place}: " if place else f"row {row}: "
        raise PayloadDecodeError(f"{place}{what}: {result.errors[row]}")


def _reopen(source: SchemaSource, options: dict[str, Any]) -> PayloadColumns:
    return PayloadColumns(source, **options)


def _topics(data: Data) -> list[str | None]:
    if "topic" not in data.schema.names:
        return []
    return data.column("topic").unique().to_pylist()


def _array(values: list[Any], arrow_type: pa.DataType, errors: list[str | None]) -> pa.Array:
    """``values`` as one Arrow array; a value Arrow refuses (a default of the wrong kind, a
    number out of range) makes its row null and an error, found row by row only then."""
    try:
        return pa.array(values, type=arrow_type)
    except (pa.ArrowException, TypeError, ValueError, OverflowError):
        pass
    for i, value in enumerate(values):
        if value is None:
            continue
        try:
            pa.array([value], type=arrow_type)
        except (pa.ArrowException, TypeError, ValueError, OverflowError) as exc:
            values[i] = None
            errors[i] = f"does not fit the column's Arrow type: {_reason(exc)}"
    return pa.array(values, type=arrow_type)


def _joined(sides: list[tuple[str, list[str | None]]]) -> pa.Array:
    rows = len(sides[0][1]) if sides else 0
    out: list[str | None] = []
    for i in range(rows):
        parts = [f"{name}: {errors[i]}" for name, errors in sides if errors[i] is not None]
        out.append("; ".join(parts) if parts else None)
    return pa.array(out, pa.string())


# --- the function ----------------------------------------------------------------------------

#: One PayloadColumns per source object and options, for callers decoding batch after batch
#: with the same source: schemas are compiled once (weakly held: gone with the source).
_CACHE: weakref.WeakKeyDictionary[SchemaSource, dict[tuple[Any, ...], PayloadColumns]] = (
    weakref.WeakKeyDictionary()
)
_CACHE_LOCK = threading.Lock()


def decode_payloads(
    data: Data,
    *,
    key_format: str | None = None,
    value_format: str | None = None,
    schema_registry: Source = None,
    log_dir: str | os.PathLike[str] | None = None,
    key_subject: str | None = None,
    value_subject: str | None = None,
    key_message: str | None = None,
    value_message: str | None = None,
    output: str = "struct",
    mode: str = "PERMISSIVE",
) -> Data:
    """``data`` (``read_table``'s table, or one of ``iter_arrow_batches``' batches) with its
    ``key`` and/or ``value`` decoded from Confluent's wire format: see the module's docstring
    for the options and the columns added. Setup problems (an unknown format, no schema
    source, a subject whose schema has no Arrow type) are a :class:`SchemaRegistryError`; a
    row that does not decode in ``FAILFAST`` mode a ``PayloadDecodeError`` naming the file or
    partition, offset, schema id and why."""
    if key_format is None and value_format is None:
        return data  # nothing asked for: no source needed either
    if isinstance(schema_registry, SchemaSource):
        source = schema_registry
    else:
        source = open_schema_source(schema_registry, log_dir=log_dir)
    options = dict(key_format=key_format, value_format=value_format, key_subject=key_subject,
                   value_subject=value_subject, key_message=key_message,
                   value_message=value_message, output=output, mode=mode)  # fmt: skip
    key = tuple(options.values())
    with _CACHE_LOCK:
        per_source = _CACHE.setdefault(source, {})
        columns = per_source.get(key)
        if columns is None:
            columns = per_source[key] = PayloadColumns(source, **options)
    return columns.decode(data)


def _reason(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
