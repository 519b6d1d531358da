"""JSON Schema payloads (runtime/payloads/json_schema.py) through the entry point.

Oracles:

* Confluent's own ``JSONSerializer`` writes the payloads into its mock registry, and its
  ``JSONDeserializer`` reads them back: the decoded value must be what it returns;
* validation follows Confluent's Java deserializer, off unless asked
  (``KafkaJsonSchemaDeserializerConfig.FAIL_INVALID_SCHEMA_DEFAULT = false``); its Python
  deserializer validates by default, and is the oracle of what a violation is: with
  ``validate_json`` we refuse exactly what it refuses, and read what it reads with
  ``validate: False``;
* leniency as Confluent's Jackson mapper (``Jackson.newObjectMapper``:
  ``ALLOW_NON_NUMERIC_NUMBERS``), strictness on bytes after the document (documented).
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from confluent_kafka.schema_registry import Schema, SchemaRegistryClient
from confluent_kafka.schema_registry import SchemaReference as ConfluentReference
from confluent_kafka.schema_registry.json_schema import JSONDeserializer, JSONSerializer
from confluent_kafka.serialization import MessageField, SerializationContext
from hypothesis import given, settings
from hypothesis import strategies as st

from kafka_format.runtime.payloads.decoders import payload_decoder
from kafka_format.runtime.payloads.encode import MemorySchemaSource
from kafka_format.runtime.payloads.registry import RegisteredSchema, SchemaReference
from kafka_format.runtime.payloads.wire import frame

CTX = SerializationContext("orders", MessageField.VALUE)
DRAFT7 = "http://json-schema.org/draft-07/schema#"
_clients = iter(range(1_000_000))


class DictSource(MemorySchemaSource):
    """The runtime's in-memory source, named in errors as the tests expect."""

    def __init__(self, schemas: list[RegisteredSchema], description: str = "the test registry"):
        super().__init__(schemas)
        self.description = description


def export(client: Any) -> DictSource:
    schemas = []
    for subject in client.get_subjects():
        for version in client.get_versions(subject):
            found = client.get_version(subject, version)
            refs = tuple(
                SchemaReference(r.name, r.subject, r.version) for r in found.schema.references or ()
            )
            schemas.append(
                RegisteredSchema(
                    found.schema_id,
                    subject,
                    version,
                    found.schema.schema_type,
                    found.schema.schema_str,
                    refs,
                )
            )
    return DictSource(schemas)


def new_client() -> Any:
    return SchemaRegistryClient.new_client({"url": f"mock://json-{next(_clients)}"})


ORDER = {
    "$schema": DRAFT7,
    "title": "Order",
    "type": "object",
    "properties": {
        "id": {"type": "integer"},
        "note": {"type": ["string", "null"]},
        "lines": {"type": "array", "items": {"type": "object"}},
        "price": {"type": "number"},
    },
    "required": ["id"],
}


def test_values_decode_as_confluents_deserializer_reads_them():
    client = new_client()
    serializer = JSONSerializer(json.dumps(ORDER), client)
    deserializer = JSONDeserializer(None, schema_registry_client=client)
    values = [
        {"id": 1, "note": "héllo ✓", "lines": [{"sku": "a", "qty": 2}], "price": 12.5},
        {"id": -(1 << 70), "note": None, "lines": [], "price": 1e-300},
        {"id": 0, "extra": {"nested": [True, False, None]}},
    ]
    source = None
    for value in values:
        data = serializer(value, CTX)
        source = source or export(client)
        decoded = payload_decoder("json-schema", source).decode(data)
        assert decoded.error is None
        assert decoded.value == deserializer(data, CTX) == value
        assert decoded.schema_id == 1 and decoded.schema.schema_type == "JSON"


def test_validation_is_off_by_default_as_in_java():
    client = new_client()
    writer = JSONSerializer(json.dumps(ORDER), client, conf={"validate": False})
    data = writer({"id": "not an integer"}, CTX)  # written without checking, as it may be
    with pytest.raises(Exception, match="is not of type 'integer'"):
        JSONDeserializer(None, schema_registry_client=client)(data, CTX)
    lenient = JSONDeserializer(None, schema_registry_client=client, conf={"validate": False})
    assert lenient(data, CTX) == {"id": "not an integer"}
    source = export(client)
    assert payload_decoder("json-schema", source).decode(data).value == {"id": "not an integer"}
    strict = payload_decoder("json-schema", source, validate_json=True).decode(data)
    assert strict.value is None and strict.error == (
        "does not match its JSON Schema, schema id 1 (subject orders-value v1): at /id: "
        "'not an integer' is not of type 'integer'"
    )
    good = JSONSerializer(json.dumps(ORDER), client)({"id": 3}, CTX)
    assert payload_decoder("json-schema", source, validate_json=True).decode(good).value == {
        "id": 3
    }


def test_references_are_resolved_by_name_when_validating():
    client = new_client()
    address = {
        "$schema": DRAFT7,
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ["city"],
    }
    client.register_schema("address", Schema(json.dumps(address), "JSON"))
    order = {
        "$schema": DRAFT7,
        "type": "object",
        "properties": {"id": {"type": "integer"}, "ship_to": {"$ref": "address.json"}},
    }
    schema = Schema(json.dumps(order), "JSON", [ConfluentReference("address.json", "address", 1)])
    client.register_schema("orders-value", schema)
    conf = {"auto.register.schemas": False, "use.latest.version": True}
    good = JSONSerializer(schema, client, conf=conf)({"id": 1, "ship_to": {"city": "Oslo"}}, CTX)
    bad = JSONSerializer(schema, client, conf={**conf, "validate": False})(
        {"id": 1, "ship_to": {"city": 5}}, CTX
    )
    with pytest.raises(Exception, match="5 is not of type 'string'"):
        JSONDeserializer(None, schema_registry_client=client)(bad, CTX)
    decoder = payload_decoder("schema-registry", export(client), validate_json=True)
    assert decoder.decode(good).value == {"id": 1, "ship_to": {"city": "Oslo"}}
    assert decoder.decode(bad).error == (
        "does not match its JSON Schema, schema id 2 (subject orders-value v1): "
        "at /ship_to/city: 5 is not of type 'string'"
    )


def one_schema(schema: Any = None) -> Any:
    text = json.dumps(ORDER if schema is None else schema)
    return DictSource([RegisteredSchema(9, "j-value", 4, "JSON", text, ())])


@pytest.mark.parametrize(
    ("payload", "reason"),
    [
        (b"", "JSONDecodeError: Expecting value: line 1 column 1 (char 0)"),
        (b'{"id": 1', "JSONDecodeError: Expecting ',' delimiter"),
        (b'{"id": 1} {}', "JSONDecodeError: Extra data"),
        (b"\xff\xfe{}", "UnicodeDecodeError"),
        (b"[" * 100_000, "RecursionError"),
    ],
)
def test_bytes_that_are_no_json_document(payload, reason):
    decoded = payload_decoder("json-schema", one_schema()).decode(frame(9, payload))
    assert decoded.value is None and decoded.schema_id == 9
    assert decoded.error.startswith(
        "does not parse as JSON under schema id 9 (subject j-value v4): " + reason
    ), decoded.error
    assert "\n" not in decoded.error


def test_what_confluents_jackson_mapper_accepts():
    decoder = payload_decoder("json-schema", one_schema())
    assert decoder.decode(frame(9, b' \n{"id": 2}\n ')).value == {"id": 2}
    assert decoder.decode(frame(9, b"\xef\xbb\xbf[1]")).value == [1]  # a UTF-8 BOM
    value = decoder.decode(frame(9, b"[NaN, Infinity, -Infinity]")).value
    assert value[0] != value[0] and value[1:] == [float("inf"), float("-inf")]


def test_a_schema_that_is_no_json_schema_is_an_error_only_when_validating():
    source = DictSource([RegisteredSchema(9, "j-value", 4, "JSON", "{not json", ())])
    assert payload_decoder("json-schema", source).decode(frame(9, b"[1]")).value == [1]
    error = payload_decoder("json-schema", source, validate_json=True).decode(frame(9, b"[1]"))
    assert error.error.startswith("schema id 9 (subject j-value v4) is no usable JSON Schema: ")


JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


@settings(max_examples=150, deadline=None)
@given(JSON_VALUES)
def test_any_json_value_round_trips(value):
    data = _ANY_SERIALIZER(value, CTX)
    decoded = _ANY_DECODER.decode(data)
    assert decoded.error is None
    assert decoded.value == _ANY_DESERIALIZER(data, CTX) == value


_ANY_CLIENT = new_client()
_ANY_SERIALIZER = JSONSerializer(json.dumps({"$schema": DRAFT7}), _ANY_CLIENT)
_ANY_DESERIALIZER = JSONDeserializer(None, schema_registry_client=_ANY_CLIENT)
_ANY_SERIALIZER(None, CTX)  # None writes nothing; the schema is registered on first value
_ANY_SERIALIZER(0, CTX)
_ANY_DECODER = payload_decoder("json-schema", export(_ANY_CLIENT))
