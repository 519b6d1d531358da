"""JSON Schema payloads as typed Arrow columns (runtime/payloads/columns.py, arrow_types.py).

Oracles:

* Confluent's own ``JSONSerializer`` writes every payload into its mock registry (validating
  it against the schema, its Python default), and its ``JSONDeserializer`` reads the same
  bytes back: the column's values are its values, but for what the documented mapping keeps
  as JSON text (compared parsed) and fields the column's schema does not name;
* the Arrow types are written out by hand from the mapping in arrow_types.py's docstring
  (Spark has no JSON Schema converter to follow);
* values that break their schema are written with the serializer's validation off, as a
  producer may, and must be error rows naming where, not truncated by Arrow.
"""

from __future__ import annotations

import json
from typing import Any

import pyarrow as pa
import pytest
from confluent_kafka.schema_registry.json_schema import JSONDeserializer, JSONSerializer

from kafka_format.runtime.payloads.columns import decode_payloads

EVENT = {
    "$schema": "http://json-schema.org/draft-07/schema#",
    "title": "Event",
    "type": "object",
    "properties": {
        "id": {"type": "integer"},
        "score": {"type": "number"},
        "name": {"type": "string"},
        "at": {"type": "string", "format": "date-time"},
        "ok": {"type": "boolean"},
        "tags": {"type": "array", "items": {"type": "string"}},
        "lines": {"type": "array", "items": {"$ref": "#/definitions/Line"}},
        "note": {"oneOf": [{"type": "null"}, {"type": "string"}]},
        "maybe": {"type": ["null", "integer"]},
        "attrs": {"type": "object", "additionalProperties": {"type": "integer"}},
        "anything": {},
        "either": {"oneOf": [{"type": "string"}, {"type": "integer"}]},
        "color": {"enum": ["red", "green"]},
        "pair": {"type": "array", "items": [{"type": "string"}, {"type": "integer"}]},
    },
    "definitions": {
        "Line": {
            "type": "object",
            "properties": {"sku": {"type": "string"}, "n": {"type": "integer"}},
        }
    },
}
LINE_TYPE = pa.struct([("sku", pa.string()), ("n", pa.int64())])
EVENT_TYPE = pa.struct(
    [
        ("id", pa.int64()),
        ("score", pa.float64()),
        ("name", pa.string()),
        ("at", pa.string()),
        ("ok", pa.bool_()),
        ("tags", pa.list_(pa.string())),
        ("lines", pa.list_(LINE_TYPE)),
        ("note", pa.string()),
        ("maybe", pa.int64()),
        ("attrs", pa.string()),  # a map: JSON text
        ("anything", pa.string()),  # no type: JSON text
        ("either", pa.string()),  # a union of two types: JSON text
        ("color", pa.string()),  # an enum of strings
        ("pair", pa.string()),  # tuple items: JSON text
    ]
)
JSON_TEXT = ("attrs", "anything", "either", "pair")


def values_of(table: pa.Table) -> list[Any]:
    """The column's rows, JSON text parsed (compared as what it says)."""
    rows = table.column("value").to_pylist()
    for row in rows:
        for name in JSON_TEXT:
            if row is not None and row.get(name) is not None:
                row[name] = json.loads(row[name])
    return rows


def test_json_schema_types_and_values_match_confluents_deserializer(cluster):
    serializer = JSONSerializer(json.dumps(EVENT), cluster.client)
    deserializer = JSONDeserializer(None, schema_registry_client=cluster.client)
    ctx = cluster.ctx("events")
    events = [
        {
            "id": 1 << 60,
            "score": 2,  # an integer where a number is asked: a float64 in Arrow
            "name": "é",
            "at": "2024-05-01T12:00:00Z",
            "ok": True,
            "tags": ["a"],
            "lines": [{"sku": "A", "n": 1}, {"sku": "B"}],
            "note": None,
            "maybe": 5,
            "attrs": {"x": 1},
            "anything": [1, {"y": None}],
            "either": 3,
            "color": "red",
            "pair": ["p", 1],
            "unnamed": "dropped",  # the schema does not name it: not a column
        },
        {"id": 2, "either": "s", "anything": None},
        {},
    ]
    expected = []
    for event in events:
        data = serializer(event, ctx)
        cluster.add("events", None, data)
        read = deserializer(data, ctx)
        read.pop("unnamed", None)
        expected.append({f.name: read.get(f.name) for f in EVENT_TYPE})
    expected[0]["score"] = 2.0
    expected[0]["lines"][1]["n"] = None  # a struct has every field: the one absent is null
    cluster.write()
    out = decode_payloads(cluster.table(), value_format="json-schema", log_dir=cluster.log_dir)
    assert out.schema.field("value").type == EVENT_TYPE
    assert values_of(out) == expected
    assert out.column("_payload_error").null_count == 3


def test_older_versions_by_name_and_values_that_break_the_schema(cluster):
    v1 = {"type": "object", "properties": {"id": {"type": "integer"}, "name": {"type": "string"}}}
    v2 = {
        "type": "object",
        "properties": {
            "id": {"type": "integer"},
            "email": {"type": "string"},
            "lines": {"type": "array", "items": EVENT["definitions"]["Line"]},
        },
    }
    ctx = cluster.ctx("users")
    old = JSONSerializer(json.dumps(v1), cluster.client, conf={"validate": False})
    new = JSONSerializer(json.dumps(v2), cluster.client, conf={"validate": False})
    for data in (
        old({"id": 1, "name": "Ann"}, ctx),
        new({"id": 2.0, "email": "b@x", "lines": [{"sku": "A", "n": 1}]}, ctx),
        new({"id": 1.5}, ctx),  # Arrow alone would truncate it to 1
        new({"id": 4, "lines": [{"sku": "A"}, {"sku": 5}]}, ctx),
        old([1, 2], ctx),
        new({"id": True}, ctx),
    ):
        cluster.add("users", None, data)
    cluster.write()
    out = decode_payloads(cluster.table(), value_format="json-schema", log_dir=cluster.log_dir)
    assert out.schema.field("value").type == pa.struct(
        [("id", pa.int64()), ("email", pa.string()), ("lines", pa.list_(LINE_TYPE))]
    )
    assert out.column("value").to_pylist() == [
        {"id": 1, "email": None, "lines": None},
        {"id": 2, "email": "b@x", "lines": [{"sku": "A", "n": 1}]},
        None,
        None,
        None,
        None,
    ]
    column = "the column's type from schema id 2 (subject users-value v2)"
    assert out.column("_payload_error").to_pylist() == [
        None,
        None,
        f"value: does not fit {column}: at /id: expected an integer, found number 1.5",
        f"value: does not fit {column}: at /lines/1/sku: expected a string, found integer",
        f"value: does not fit {column}: at /: expected an object, found array",
        f"value: does not fit {column}: at /id: expected an integer, found boolean true",
    ]


@pytest.mark.parametrize(
    ("schema", "arrow_type"),
    [
        ({"type": "integer"}, pa.int64()),
        ({"type": ["string", "null"]}, pa.string()),
        ({"anyOf": [{"type": "boolean"}, {"type": "null"}]}, pa.bool_()),
        ({"properties": {"a": {"type": "number"}}}, pa.struct([("a", pa.float64())])),
        ({"type": "object"}, pa.string()),
        ({"type": "array"}, pa.string()),
        ({"type": "null"}, pa.string()),
        ({"allOf": [{"type": "string"}]}, pa.string()),
        ({"const": "x"}, pa.string()),
        (
            {
                "$defs": {"N": {"type": "object", "properties": {"next": {"$ref": "#/$defs/N"}}}},
                "$ref": "#/$defs/N",
            },
            pa.struct([("next", pa.string())]),  # recursion: JSON text where it recurs
        ),
    ],
)
def test_the_mapping(schema, arrow_type, cluster):
    from kafka_format.runtime.payloads.columns import payload_arrow_type
    from kafka_format.runtime.payloads.registry import open_schema_source

    cluster.client.register_schema("t-value", _schema(schema))
    cluster.write()
    source = open_schema_source(cluster.log_dir)
    assert payload_arrow_type(source, "t-value", kind="json-schema") == arrow_type


def _schema(schema: dict[str, Any]) -> Any:
    from confluent_kafka.schema_registry import Schema

    return Schema(json.dumps(schema), "JSON")
