"""The writer's side of the payload decoders: a value framed as Confluent's serializers frame it
(a zero byte, the big-endian schema id, Protobuf's message indexes, then the payload), for
``kafka-format generate`` and for tests that need payloads without a Kafka producer.

    >>> from kafka_format.runtime.payloads.encode import MemorySchemaSource, encode_avro
    >>> schema = RegisteredSchema(7, "orders-value", 1, "AVRO", '"string"', ())
    >>> encode_avro(schema, "hi", MemorySchemaSource([schema]))
    b'\\x00\\x00\\x00\\x00\\x07\\x04hi'

Each format writes what its Confluent serializer writes for the same value and schema:

* Avro: the datum in Avro's binary encoding (``fastavro.schemaless_writer``, strict: a field
  the schema has and the value lacks is an error, as ``GenericDatumWriter`` makes it), under
  the schema with its references parsed first, as ``AvroSchemaProvider`` does;
* Protobuf: the message indexes (``[0]``, the first message, as the single byte 0), then the
  message serialized by the class :class:`~.protobuf.ProtobufDecoder` compiles for the schema
  (fields in number order, map entries in a deterministic order); the value is a message of
  that class or its JSON mapping (``json_format.ParseDict``: enums by name, a ``Timestamp``
  as RFC 3339 text, 64-bit integers as numbers or strings);
* JSON Schema: the value as compact UTF-8 JSON, as Jackson's ``ObjectMapper`` writes it (not
  checked against the schema, as ``json.fail.invalid.schema`` defaults to false).

Parsed schemas and compiled classes are kept per schema text (with the texts of its
references), so a writer of many records parses each schema once however many sources it
comes through. :class:`MemorySchemaSource` is a source made of schemas held in memory: what a
writer registers as it goes.
"""

from __future__ import annotations

import functools
import io
import json
from collections.abc import Iterable, Sequence
from typing import Any

import fastavro
from google.protobuf import json_format

from .registry_model import Catalog, CatalogSource, RegisteredSchema, SchemaSource
from .wire import PayloadDecodeError, frame, resolve_references, schema_label

__all__ = [
    "MemorySchemaSource",
    "encode",
    "encode_avro",
    "encode_json",
    "encode_protobuf",
]


class MemorySchemaSource(CatalogSource):
    """Schemas given in memory, looked up with the store's rules (``registry_model.Catalog``:
    a soft-deleted version still resolves by id). ``spec`` is ``"memory"``: there is nothing
    to open again, so a pickled one carries its schemas."""

    def __init__(self, schemas: Iterable[RegisteredSchema] = ()) -> None:
        self.spec = "memory"
        self.catalog = Catalog()
        self.description = f"memory ({self.catalog.counts()})"
        for schema in schemas:
            self.add(schema)

    def add(self, schema: RegisteredSchema) -> None:
        """Register ``schema`` (a later one for the same subject version replaces it)."""
        conflict = self.catalog.conflict(schema)
        if conflict is not None:
            raise ValueError(conflict)
        self.catalog.put(schema)
        self.description = f"memory ({self.catalog.counts()})"

    def __reduce__(self) -> tuple[type[MemorySchemaSource], tuple[tuple[RegisteredSchema, ...]]]:
        held = tuple(s for subject in self.subjects() for s in self.versions(subject))
        return (type(self), (held,))


def _references(
    schema: RegisteredSchema, source: SchemaSource | None
) -> list[tuple[str, RegisteredSchema]]:
    if not schema.references:
        return []
    if source is None:
        raise PayloadDecodeError(f"{schema_label(schema)} has references: give its source")
    return resolve_references(source, schema)


def _check_type(schema: RegisteredSchema, expected: str) -> None:
    if schema.schema_type != expected:
        raise ValueError(f"{schema_label(schema)} is {schema.schema_type}, not {expected}")


# --- Avro -----------------------------------------------------------------------------------


@functools.lru_cache(maxsize=256)
def _avro_schema(text: str, references: tuple[str, ...]) -> Any:
    """``text`` parsed by fastavro after the schemas it references (their named types are
    what it may use), once per texts; a :class:`ValueError` saying why it does not parse."""
    named: dict[str, Any] = {}
    try:
        for ref in references:
            fastavro.parse_schema(json.loads(ref), named_schemas=named)
        return fastavro.parse_schema(json.loads(text), named_schemas=named)
    except (ValueError, fastavro.schema.SchemaParseException) as exc:
        raise ValueError(f"{type(exc).__name__}: {exc}") from None


def encode_avro(schema: RegisteredSchema, value: Any, source: SchemaSource | None = None) -> bytes:
    """``value`` as ``KafkaAvroSerializer`` frames it under ``schema`` (``source`` holds the
    schemas it references, when it references any). A ``timestamp-millis`` takes a
    ``datetime`` or epoch milliseconds, an enum its symbol, a union the value itself."""
    _check_type(schema, "AVRO")
    refs = tuple(ref.schema for _, ref in _references(schema, source))
    try:
        parsed = _avro_schema(schema.schema, refs)
    except ValueError as exc:
        raise PayloadDecodeError(f"{schema_label(schema)} does not parse as Avro: {exc}") from None
    out = io.BytesIO()
    try:
        fastavro.schemaless_writer(out, parsed, value, strict=True)
    except (ValueError, TypeError, AttributeError) as exc:
        raise ValueError(f"not a value of {schema_label(schema)}: {exc}") from None
    return frame(schema.id, out.getvalue())


# --- Protobuf -------------------------------------------------------------------------------


#: Compiled message classes by (schema text, (name, text) of each reference, message indexes):
#: equal texts compile to the same message, whichever source and id they came with.
_CLASSES: dict[tuple[str, tuple[tuple[str, str], ...], tuple[int, ...]], Any] = {}


def encode_protobuf(
    schema: RegisteredSchema,
    value: Any,
    source: SchemaSource | None = None,
    message_indexes: Sequence[int] = (0,),
) -> bytes:
    """``value`` as ``KafkaProtobufSerializer`` frames it: the message ``message_indexes``
    select in ``schema`` (default the file's first), compiled with the schemas ``source``
    holds for its imports. ``value`` is a message of that type or its JSON mapping."""
    _check_type(schema, "PROTOBUF")
    indexes = tuple(message_indexes)
    refs = tuple((name, ref.schema) for name, ref in _references(schema, source))
    key = (schema.schema, refs, indexes)
    cls = _CLASSES.get(key)
    if cls is None:
        # a schema without references needs no source but itself
        held = source if source is not None else MemorySchemaSource([schema])
        # imported here: the decoder's module brings the reader (and numba) through
        # .registry, which Avro and JSON writers need not wait for
        from .protobuf import ProtobufDecoder

        cls = _CLASSES[key] = ProtobufDecoder(held).message_class(schema, indexes)
    if hasattr(value, "SerializeToString"):
        message = value
        if message.DESCRIPTOR.full_name != cls.DESCRIPTOR.full_name:
            raise ValueError(
                f"a {message.DESCRIPTOR.full_name} message, where {schema_label(schema)} "
                f"with message indexes {list(indexes)} is {cls.DESCRIPTOR.full_name}"
            )
    else:
        try:
            message = json_format.ParseDict(value, cls())
        except json_format.ParseError as exc:
            raise ValueError(f"not a value of {schema_label(schema)}: {exc}") from None
    # deterministic: map entries in key order, so that the same value gives the same bytes
    return frame(schema.id, message.SerializeToString(deterministic=True), indexes)


# --- JSON Schema ----------------------------------------------------------------------------


def encode_json(schema: RegisteredSchema, value: Any, source: SchemaSource | None = None) -> bytes:
    """``value`` as ``KafkaJsonSchemaSerializer`` frames it: compact UTF-8 JSON after the
    header. ``source`` is not needed (the payload is plain JSON); it is taken for symmetry
    with the other formats. NaN and the infinities, which are no JSON, are refused."""
    _check_type(schema, "JSON")
    try:
        text = json.dumps(value, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"not a JSON value for {schema_label(schema)}: {exc}") from None
    return frame(schema.id, text.encode("utf-8"))


_ENCODERS = {"AVRO": encode_avro, "JSON": encode_json}


def encode(schema: RegisteredSchema, value: Any, source: SchemaSource | None = None) -> bytes:
    """``value`` framed in the format of ``schema``'s type (Protobuf: its first message)."""
    if schema.schema_type == "PROTOBUF":
        return encode_protobuf(schema, value, source)
    encoder = _ENCODERS.get(schema.schema_type)
    if encoder is None:
        raise ValueError(f"{schema_label(schema)} has schema type {schema.schema_type!r}")
    return encoder(schema, value, source)
