"""JSON Schema payloads: the UTF-8 JSON document after Confluent's header.

    >>> from kafka_format.runtime.payloads.json_schema import JsonSchemaDecoder
    >>> decoder = JsonSchemaDecoder(source)            # any registry.SchemaSource
    >>> decoder.decode(source.by_id(11), b'{"id": 1, "tags": ["a"]}')
    {'id': 1, 'tags': ['a']}

The payload is plain JSON: the schema is not needed to read it. Whether a value must also
match its schema is Confluent's ``json.fail.invalid.schema``, false by default
(``KafkaJsonSchemaDeserializerConfig.FAIL_INVALID_SCHEMA_DEFAULT``: the Java deserializer
validates only when asked, in ``AbstractKafkaJsonSchemaDeserializer.deserialize``). Its
Python client validates by default instead; this follows the Java default, the one the
format was defined with: a value is decoded as it was written, and ``validate=True`` makes a
value that breaks its schema an error (with the ``jsonschema`` package, which is then
required; references are resolved by their names, as ``$ref`` spells them).

Parsing is what the Java deserializer's Jackson mapper accepts (Confluent's
``Jackson.newObjectMapper``): UTF-8 (a byte-order mark is skipped), and ``NaN`` /
``Infinity``, which that mapper enables (``ALLOW_NON_NUMERIC_NUMBERS``), as Python floats.
Two differences, both on purpose: numbers with a fraction are Python floats, where Jackson
keeps exact decimals (``USE_BIG_DECIMAL_FOR_FLOATS``), so that values stay JSON-ready; and
bytes after the document other than whitespace are an error, where Jackson stops reading
after the first value: as for Avro, a payload with bytes its value does not use is damage,
not a value.
"""

from __future__ import annotations

import json
import threading
from typing import Any

from .registry_model import RegisteredSchema, SchemaRegistryError, SchemaSource
from .wire import PayloadDecodeError, resolve_references, schema_label

__all__ = ["JsonSchemaDecoder"]


class JsonSchemaDecoder:
    """JSON payloads under the schemas of one source; with ``validate``, checked against
    them (each id's validator built once)."""

    def __init__(self, source: SchemaSource, *, validate: bool = False) -> None:
        self.source = source
        self.validate = validate
        self._validators: dict[int, Any] = {}
        self._lock = threading.Lock()
        if validate:
            try:
                import jsonschema  # noqa: F401  (only validation needs it)
                import referencing  # noqa: F401
            except ImportError as exc:
                raise SchemaRegistryError(
                    "validating JSON Schema payloads needs the jsonschema package: "
                    f"{exc}; pip install jsonschema"
                ) from None

    def decode(self, schema: RegisteredSchema, payload: bytes) -> Any:
        """The value of one JSON document (``payload``: the bytes after the header)."""
        try:
            value = json.loads(payload.decode("utf-8-sig"))
        except (UnicodeDecodeError, ValueError, RecursionError) as exc:
            raise PayloadDecodeError(
                f"does not parse as JSON under {schema_label(schema)}: {_reason(exc)}"
            ) from None
        if self.validate:
            error = self._validator(schema).best_error(value)
            if error is not None:
                raise PayloadDecodeError(
                    f"does not match its JSON Schema, {schema_label(schema)}: {error}"
                )
        return value

    def _validator(self, schema: RegisteredSchema) -> _Validator:
        validator = self._validators.get(schema.id)
        if validator is None:
            with self._lock:
                validator = self._validators.get(schema.id)
                if validator is None:
                    try:
                        validator = _Validator.build(self.source, schema)
                    except PayloadDecodeError as exc:
                        validator = exc.reason
                    self._validators[schema.id] = validator
        if isinstance(validator, str):
            raise PayloadDecodeError(validator)
        return validator


class _Validator:
    __slots__ = ("check",)

    def __init__(self, check: Any) -> None:
        self.check = check

    @classmethod
    def build(cls, source: SchemaSource, schema: RegisteredSchema) -> _Validator:
        import jsonschema
        import referencing
        import referencing.jsonschema

        label = schema_label(schema)
        resources = []
        for name, ref in resolve_references(source, schema):
            try:
                contents = json.loads(ref.schema)
            except ValueError as exc:
                raise PayloadDecodeError(
                    f"{label} refers to {name} ({schema_label(ref)}), which is no JSON: "
                    f"{_reason(exc)}"
                ) from None
            resource = referencing.Resource.from_contents(
                contents, default_specification=referencing.jsonschema.DRAFT7
            )
            resources.append((name, resource))
        try:
            contents = json.loads(schema.schema)
            # Confluent's default draft, when the schema names none ($schema), is draft 7.
            kind = jsonschema.validators.validator_for(contents, default=jsonschema.Draft7Validator)
            kind.check_schema(contents)
        except Exception as exc:
            raise PayloadDecodeError(f"{label} is no usable JSON Schema: {_reason(exc)}") from None
        registry = referencing.Registry().with_resources(resources)
        return cls(kind(contents, registry=registry))

    def best_error(self, value: Any) -> str | None:
        from jsonschema.exceptions import best_match

        try:
            error = best_match(self.check.iter_errors(value))
        except Exception as exc:  # a $ref that resolves nowhere, say
            return _reason(exc)
        if error is None:
            return None
        where = "/".join(str(p) for p in error.absolute_path)
        return f"at /{where}: {' '.join(error.message.split())}"


def _reason(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
