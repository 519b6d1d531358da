"""The one entry point for keys and values in Confluent's wire format: a decoder of a kind,
over a schema source, that turns each payload into a JSON-ready value or one line on why not.

    >>> from kafka_format.runtime.payloads.decoders import payload_decoder
    >>> from kafka_format.runtime.payloads.registry import open_schema_source
    >>> decoder = payload_decoder("schema-registry", open_schema_source("/var/lib/kafka"))
    >>> decoder.decode(record.value)
    Decoded(value={'id': 1, 'name': 'hello'}, schema_id=7, error=None, schema=RegisteredSchema(...))
    >>> decoder.decode(b"\\x05not framed").error
    'magic byte 5, not 0 (Confluent wire format)'
    >>> decoder.decode(None)                                 # a null key, a tombstone
    Decoded(value=None, schema_id=None, error=None, schema=None)
    >>> decoder.decode_to_json(record.value)
    '{"id":1,"name":"hello"}'

Kinds (:data:`KINDS`): ``avro``, ``protobuf`` and ``json-schema`` expect their own format and
say so when the id names a schema of another type; ``schema-registry`` takes the format from
the schema the id names (``schemaType``: AVRO, PROTOBUF or JSON), as a consumer configured
with the matching deserializer for each would.

:meth:`PayloadDecoder.decode` never raises for bytes: bytes that are not framed (fewer than
5, a magic byte other than 0), an id the source does not hold, a schema that does not parse,
a payload that does not parse under it, all come back as ``error``, one line naming the
schema id, subject and version where there is one. Only a decoder that cannot be made (an
unknown kind) raises, a :class:`SchemaRegistryError`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from .avro import AvroDecoder
from .json_schema import JsonSchemaDecoder
from .protobuf import ProtobufDecoder
from .registry_model import RegisteredSchema, SchemaRegistryError, SchemaSource
from .wire import (
    HEADER_SIZE,
    PayloadDecodeError,
    WireFormatError,
    read_header,
    read_message_indexes,
    schema_label,
)

__all__ = ["KINDS", "Decoded", "PayloadDecoder", "payload_decoder"]

KINDS = ("avro", "protobuf", "json-schema", "schema-registry")
#: The schema type (``schemaType``) each kind decodes.
_TYPES = {"avro": "AVRO", "protobuf": "PROTOBUF", "json-schema": "JSON"}
_KIND_OF = {schema_type: kind for kind, schema_type in _TYPES.items()}


@dataclass(slots=True)
class Decoded:
    """One payload decoded: ``value`` (JSON-ready) when ``error`` is None; the schema id
    whenever the header was there, and the schema whenever the id resolved."""

    value: object | None
    schema_id: int | None
    error: str | None
    schema: RegisteredSchema | None = None


class PayloadDecoder:
    """Payloads of one kind under the schemas of ``source`` (ids looked up in ``context``,
    the default context when None). ``validate_json`` checks JSON Schema values against their
    schemas (Confluent's ``json.fail.invalid.schema``, off by default as in Java)."""

    __slots__ = ("_avro", "_json", "_protobuf", "context", "kind", "source")

    def __init__(
        self,
        kind: str,
        source: SchemaSource,
        *,
        context: str | None = None,
        validate_json: bool = False,
    ) -> None:
        if kind not in KINDS:
            raise SchemaRegistryError(
                f"unknown payload decoder {kind!r}: one of {', '.join(KINDS)}"
            )
        self.kind = kind
        self.source = source
        self.context = context
        self._avro = AvroDecoder(source)
        self._protobuf = ProtobufDecoder(source)
        self._json = JsonSchemaDecoder(source, validate=validate_json)

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        # Pickled (to Spark executors) as what it was made from: the source pickles as its
        # spec, and the compiled schemas are built again where the decoder is used.
        return (_restore, (self.kind, self.source, self.context, self._json.validate))

    def decode(self, data: bytes | bytearray | memoryview | None) -> Decoded:
        """``data`` (a key or a value) decoded, or the reason it is not."""
        if data is None:
            return Decoded(None, None, None)
        if not isinstance(data, bytes):
            data = bytes(data)
        try:
            schema_id = read_header(data)
        except WireFormatError as exc:
            return Decoded(None, None, exc.reason)
        schema = self._lookup(schema_id)
        if isinstance(schema, str):
            return Decoded(None, schema_id, schema)
        try:
            value = self._decode(schema, data)
        except (PayloadDecodeError, WireFormatError) as exc:
            return Decoded(None, schema_id, exc.reason, schema)
        except Exception as exc:  # a decoder's own failure: still one line, never a raise
            reason = " ".join(str(exc).split())
            return Decoded(
                None,
                schema_id,
                f"could not decode under {schema_label(schema)}: {type(exc).__name__}: {reason}",
                schema,
            )
        return Decoded(value, schema_id, None, schema)

    def decode_to_json(self, data: bytes | bytearray | memoryview | None) -> str | None:
        """The decoded value as compact JSON text (None for a null ``data``; a float NaN or
        infinity as Python's ``json`` writes it, ``NaN``); a payload that does not decode
        raises :class:`PayloadDecodeError` with its one line (the house
        decoders' ``to_json`` convention: the caller writes the line where the value would
        be)."""
        decoded = self.decode(data)
        if decoded.error is not None:
            raise PayloadDecodeError(decoded.error)
        if data is None:
            return None
        return json.dumps(decoded.value, ensure_ascii=False, separators=(",", ":"))

    def _lookup(self, schema_id: int) -> RegisteredSchema | str:
        try:
            if self.context is None:  # the plain contract: by_id(schema_id)
                schema = self.source.by_id(schema_id)
            else:
                schema = self.source.by_id(schema_id, context=self.context)
        except Exception as exc:  # a live registry that does not answer, say
            return f"schema id {schema_id}: {' '.join(str(exc).split())}"
        if schema is not None:
            return schema
        explain = getattr(self.source, "explain_missing", None)
        if explain is not None:
            return (
                explain(schema_id)
                if self.context is None
                else explain(schema_id, context=self.context)
            )
        return f"schema id {schema_id} not in {self.source.description}"

    def _decode(self, schema: RegisteredSchema, data: bytes) -> Any:
        schema_type = (schema.schema_type or "AVRO").upper()
        if self.kind != "schema-registry" and schema_type != _TYPES[self.kind]:
            other = _KIND_OF.get(schema_type)
            hint = f": read it as {other} or schema-registry" if other else ""
            raise PayloadDecodeError(
                f"{schema_label(schema)} has schema type {schema_type}, not "
                f"{_TYPES[self.kind]}{hint}"
            )
        if schema_type == "AVRO":
            return self._avro.decode(schema, data[HEADER_SIZE:])
        if schema_type == "PROTOBUF":
            try:
                indexes, start = read_message_indexes(data)
            except WireFormatError as exc:
                raise PayloadDecodeError(
                    f"does not parse as Protobuf under {schema_label(schema)}: {exc.reason}"
                ) from None
            return self._protobuf.decode(schema, indexes, data[start:])
        if schema_type == "JSON":
            return self._json.decode(schema, data[HEADER_SIZE:])
        raise PayloadDecodeError(
            f"{schema_label(schema)} has schema type {schema.schema_type!r}, "
            "which no decoder here reads"
        )


def payload_decoder(
    kind: str,
    source: SchemaSource,
    *,
    context: str | None = None,
    validate_json: bool = False,
) -> PayloadDecoder:
    """A :class:`PayloadDecoder` of ``kind`` (one of :data:`KINDS`) over ``source``."""
    return PayloadDecoder(kind, source, context=context, validate_json=validate_json)


def _restore(
    kind: str, source: SchemaSource, context: str | None, validate_json: bool
) -> PayloadDecoder:
    return PayloadDecoder(kind, source, context=context, validate_json=validate_json)
