"""Payloads as typed Arrow columns (runtime/payloads/columns.py, arrow_types.py): Avro, and
what every format shares (errors, modes, topics, outputs).

Oracles:

* Confluent's own ``AvroSerializer`` writes every payload into its mock registry; the
  registry's ``_schemas-0`` is written from what the mock holds (conftest.py), data partitions
  with the project's ``PartitionWriter``, read back with ``read_table``;
* Confluent's ``AvroDeserializer`` reads the same bytes, with the column's (latest) schema as
  its reader schema for older versions (its ``schema_str``: fastavro's resolution, Avro's
  rules); its values (``datetime``, ``Decimal``, ``UUID``…) are compared with Arrow's own
  ``to_pylist`` of the column, converted only where the documented mapping says (a ``uuid``
  is its string, a union of several types Spark's ``member<i>`` struct);
* the Arrow types are written out by hand from Spark's ``SchemaConverters.toSqlTypeHelper``
  (connector/avro) as the module's docstring lists them.
"""

from __future__ import annotations

import datetime as dt
import json
import pickle
import uuid
from decimal import Decimal
from typing import Any

import pyarrow as pa
import pytest
from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer
from confluent_kafka.schema_registry.json_schema import JSONSerializer
from fastavro.read import SchemaResolutionError

import kafka_format
from kafka_format.runtime.errors import KafkaFormatError
from kafka_format.runtime.payloads.columns import (
    PayloadColumns,
    decode_payloads,
    payload_arrow_type,
)
from kafka_format.runtime.payloads.registry import SchemaRegistryError, open_schema_source
from kafka_format.runtime.payloads.wire import PayloadDecodeError, frame

UTC = dt.UTC


def plain(value: Any, arrow_type: pa.DataType) -> Any:
    """Arrow's ``to_pylist`` value with maps as dicts (Arrow lists their pairs)."""
    if value is None:
        return None
    if pa.types.is_map(arrow_type):
        return {k: plain(v, arrow_type.item_type) for k, v in value}
    if pa.types.is_list(arrow_type):
        return [plain(v, arrow_type.value_type) for v in value]
    if pa.types.is_struct(arrow_type):
        return {f.name: plain(value[f.name], f.type) for f in arrow_type}
    return value


def column(table: pa.Table, name: str = "value") -> list[Any]:
    arrow_type = table.schema.field(name).type
    return [plain(v, arrow_type) for v in table.column(name).to_pylist()]


LINE = {
    "type": "record",
    "name": "Line",
    "fields": [{"name": "sku", "type": "string"}, {"name": "n", "type": ["null", "int"]}],
}
RICH = {
    "type": "record",
    "name": "Order",
    "namespace": "shop",
    "fields": [
        {"name": "id", "type": "long"},
        {"name": "qty", "type": "int"},
        {"name": "ratio", "type": "float"},
        {"name": "price", "type": "double"},
        {"name": "ok", "type": "boolean"},
        {"name": "name", "type": "string"},
        {"name": "blob", "type": "bytes"},
        {"name": "hash", "type": {"type": "fixed", "name": "Hash", "size": 4}},
        {"name": "status", "type": {"type": "enum", "name": "Status", "symbols": ["NEW", "PAID"]}},
        {
            "name": "amount",
            "type": {"type": "bytes", "logicalType": "decimal", "precision": 10, "scale": 2},
        },
        {
            "name": "big",
            "type": {
                "type": "fixed",
                "name": "Big",
                "size": 20,
                "logicalType": "decimal",
                "precision": 40,
                "scale": 3,
            },
        },
        {"name": "day", "type": {"type": "int", "logicalType": "date"}},
        {"name": "at_ms", "type": {"type": "long", "logicalType": "timestamp-millis"}},
        {"name": "at_us", "type": {"type": "long", "logicalType": "timestamp-micros"}},
        {"name": "local", "type": {"type": "long", "logicalType": "local-timestamp-millis"}},
        {"name": "t_ms", "type": {"type": "int", "logicalType": "time-millis"}},
        {"name": "t_us", "type": {"type": "long", "logicalType": "time-micros"}},
        {"name": "uid", "type": {"type": "string", "logicalType": "uuid"}},
        {"name": "tags", "type": {"type": "array", "items": "string"}},
        {"name": "attrs", "type": {"type": "map", "values": "long"}},
        {"name": "lines", "type": {"type": "array", "items": LINE}},
        {"name": "note", "type": ["null", "string"]},
        {"name": "wide", "type": ["int", "long"]},
        {"name": "choice", "type": ["null", "string", "long", "shop.Line"]},
        {"name": "nothing", "type": "null"},
    ],
}
LINE_TYPE = pa.struct([("sku", pa.string()), ("n", pa.int32())])
#: Spark's SchemaConverters, field by field (time-* and uuid: the module's own choices).
RICH_TYPE = pa.struct(
    [
        ("id", pa.int64()),
        ("qty", pa.int32()),
        ("ratio", pa.float32()),
        ("price", pa.float64()),
        ("ok", pa.bool_()),
        ("name", pa.string()),
        ("blob", pa.binary()),
        ("hash", pa.binary()),
        ("status", pa.string()),
        ("amount", pa.decimal128(10, 2)),
        ("big", pa.decimal256(40, 3)),
        ("day", pa.date32()),
        ("at_ms", pa.timestamp("ms", "UTC")),
        ("at_us", pa.timestamp("us", "UTC")),
        ("local", pa.timestamp("ms")),
        ("t_ms", pa.time32("ms")),
        ("t_us", pa.time64("us")),
        ("uid", pa.string()),
        ("tags", pa.list_(pa.string())),
        ("attrs", pa.map_(pa.string(), pa.int64())),
        ("lines", pa.list_(LINE_TYPE)),
        ("note", pa.string()),
        ("wide", pa.int64()),
        (
            "choice",
            pa.struct([("member0", pa.string()), ("member1", pa.int64()), ("member2", LINE_TYPE)]),
        ),
        ("nothing", pa.null()),
    ]
)


def rich_value(i: int, choice: Any) -> dict[str, Any]:
    return {
        "id": (1 << 40) + i,
        "qty": -i,
        "ratio": 0.5,
        "price": 19.99 + i,
        "ok": i % 2 == 0,
        "name": f"order é{i}",
        "blob": bytes([0, 255, i]),
        "hash": b"\x01\x02\x03" + bytes([i]),
        "status": "PAID" if i % 2 else "NEW",
        "amount": Decimal("-12.34") + i,
        "big": Decimal("1234567890123456789012345678901234567.891"),
        "day": dt.date(2024, 5, 1) + dt.timedelta(days=i),
        "at_ms": dt.datetime(2024, 5, 1, 12, 0, 0, 123000, tzinfo=UTC),
        "at_us": dt.datetime(1969, 12, 31, 23, 59, 59, 999999, tzinfo=UTC),
        "local": dt.datetime(2024, 5, 1, 12, 0, 0, 5000),
        "t_ms": dt.time(12, 30, 0, 250000),
        "t_us": dt.time(23, 59, 59, 999999),
        "uid": uuid.UUID(int=i + 1),
        "tags": ["a", "b"][: i % 3],
        "attrs": {"x": i, "y": -(1 << 50)},
        "lines": [{"sku": "A", "n": None}, {"sku": "B", "n": 2}][: i % 3],
        "note": None if i % 2 else "gift",
        "wide": 1 << 40 if i % 2 else 7,
        "choice": choice,
        "nothing": None,
    }


def test_avro_types_and_values_match_confluents_deserializer(cluster):
    serializer = AvroSerializer(cluster.client, json.dumps(RICH))
    deserializer = AvroDeserializer(cluster.client)
    ctx = cluster.ctx("orders")
    line = {"sku": "C", "n": 3}
    choices = [None, "text", 1 << 35, line]
    expected = []
    for i, choice in enumerate(choices):
        data = serializer(rich_value(i, choice), ctx)
        cluster.add("orders", None, data)
        read = deserializer(data, ctx)
        # The documented mapping: a uuid is its string; [null, string, long, Line] becomes
        # Spark's member struct, the branch the value took set.
        read["uid"] = str(read["uid"])
        members = {"member0": None, "member1": None, "member2": None}
        if choice is not None:
            members[f"member{[str, int, dict].index(type(choice))}"] = read["choice"]
            read["choice"] = members
        expected.append(read)
    cluster.write()

    out = decode_payloads(cluster.table(), value_format="avro", log_dir=cluster.log_dir)
    assert out.schema.field("value").type == RICH_TYPE
    assert column(out) == expected
    assert out.column("value_schema_id").to_pylist() == [1] * 4
    assert out.column("_payload_error").null_count == 4
    # The bytes as read stay beside the value, untouched.
    assert out.column("value_raw").to_pylist() == cluster.table().column("value").to_pylist()


V1 = {"type": "record", "name": "User", "fields": [{"name": "id", "type": "long"}]}
V2 = {
    "type": "record",
    "name": "User",
    "fields": [
        {"name": "id", "type": "long"},
        {"name": "email", "type": ["null", "string"], "default": None},
        {"name": "level", "type": "int", "default": 3},
        {
            "name": "tier",
            "type": {"type": "enum", "name": "Tier", "symbols": ["FREE", "PRO"]},
            "default": "FREE",
        },
    ],
}


def test_older_avro_versions_read_as_the_latest_with_its_defaults(cluster):
    """v1 records under v2's struct: Avro's resolution, as Confluent's deserializer does it
    when given v2 as its reader schema."""
    ctx = cluster.ctx("users")
    v1 = AvroSerializer(cluster.client, json.dumps(V1))
    v2 = AvroSerializer(cluster.client, json.dumps(V2))
    written = [
        v1({"id": 1}, ctx),
        v2({"id": 2, "email": "b@x", "level": 9, "tier": "PRO"}, ctx),
        v1({"id": 3}, ctx),
    ]
    for data in written:
        cluster.add("users", None, data)
    cluster.write()
    reader = AvroDeserializer(cluster.client, json.dumps(V2))
    expected = [reader(data, ctx) for data in written]
    assert expected[0] == {"id": 1, "email": None, "level": 3, "tier": "FREE"}

    out = decode_payloads(cluster.table(), value_format="avro", log_dir=cluster.log_dir)
    assert column(out) == expected
    assert out.column("value_schema_id").to_pylist() == [1, 2, 1]
    assert out.schema.field("value").type == pa.struct(
        [("id", pa.int64()), ("email", pa.string()), ("level", pa.int32()), ("tier", pa.string())]
    )


def test_a_writer_schema_that_does_not_resolve_is_an_error_row(cluster):
    """A v1 whose ``id`` was a string cannot be read as v2's long (Avro's rules: no
    promotion from string to long): that row is null and says why, the others decode."""
    ctx = cluster.ctx("users")
    bad = {"type": "record", "name": "User", "fields": [{"name": "id", "type": "string"}]}
    old = AvroSerializer(cluster.client, json.dumps(bad))({"id": "x"}, ctx)
    new = AvroSerializer(cluster.client, json.dumps(V2))({"id": 5}, ctx)
    with pytest.raises(SchemaResolutionError, match="string is not long"):  # Confluent's too
        AvroDeserializer(cluster.client, json.dumps(V2))(old, ctx)
    cluster.add("users", None, old)
    cluster.add("users", None, new)
    cluster.write()
    out = decode_payloads(cluster.table(), value_format="avro", log_dir=cluster.log_dir)
    values, errors = column(out), out.column("_payload_error").to_pylist()
    assert values[0] is None and values[1]["id"] == 5 and errors[1] is None
    assert errors[0].startswith("value: does not read under schema id 1 (subject users-value v1)")
    assert "as the column's schema id 2 (subject users-value v2)" in errors[0]
    assert errors[0].endswith("string is not long")
    assert "\n" not in errors[0]


def test_nulls_unframed_bytes_and_unknown_ids_in_permissive_mode(cluster):
    ctx = cluster.ctx("users")
    key_ctx = cluster.ctx("users", key=True)
    keys = AvroSerializer(cluster.client, '"string"')
    values = AvroSerializer(cluster.client, json.dumps(V1))
    good = values({"id": 1}, ctx)
    rows = [
        (keys("k1", key_ctx), good),
        (None, None),  # a tombstone with a null key: nothing to decode, nothing wrong
        (b"plain", b"\x00\x00\x00"),  # not framed: too short / no magic byte
        (keys("k4", key_ctx), frame(999, good[5:])),  # an id the registry never gave
        (keys("k5", key_ctx), good[:-1] + b"\xff\xff"),  # a datum that runs past its end
    ]
    for key, value in rows:
        cluster.add("users", key, value)
    cluster.write()
    out = decode_payloads(
        cluster.table(), key_format="avro", value_format="avro", log_dir=cluster.log_dir
    )
    assert out.schema.names == [
        *("key", "value", "topic", "partition", "offset", "timestamp", "timestampType"),
        *("key_schema_id", "value_schema_id", "key_raw", "value_raw", "_payload_error"),
    ]
    assert out.schema.field("key").type == pa.string()
    assert out.column("key").to_pylist() == ["k1", None, None, "k4", "k5"]
    assert column(out) == [{"id": 1}, None, None, None, None]
    assert out.column("key_schema_id").to_pylist() == [2, None, None, 2, 2]
    assert out.column("value_schema_id").to_pylist() == [1, None, None, 999, 1]
    errors = out.column("_payload_error").to_pylist()
    assert errors[:2] == [None, None]
    assert errors[2] == (
        "key: magic byte 112, not 0 (Confluent wire format); value: 3 bytes, fewer than the 5 "
        "of Confluent wire format's header (magic byte and schema id)"
    )
    assert errors[3].startswith("value: schema id 999 is not in _schemas-0 in ")
    assert errors[4].startswith("value: ") and "schema id 1 (subject users-value v1)" in errors[4]
    assert out.column("key_raw").to_pylist() == [k for k, _ in rows]


def test_failfast_names_the_file_offset_schema_id_and_why(cluster):
    ctx = cluster.ctx("users")
    good = AvroSerializer(cluster.client, json.dumps(V1))({"id": 1}, ctx)
    for value in (good, None, good, frame(42, b"\x02")):
        cluster.add("users", None, value)
    cluster.write()
    table = cluster.table(include_position=True)
    with pytest.raises(PayloadDecodeError) as info:
        decode_payloads(table, value_format="avro", log_dir=cluster.log_dir, mode="FAILFAST")
    segment = cluster.log_dir / "users-0" / "00000000000000000000.log"
    message = str(info.value)
    assert message.startswith(f"{segment}, offset 3: value (schema id 42): schema id 42 ")
    assert isinstance(info.value, KafkaFormatError) and "\n" not in message
    # Without the file column: the partition names the place.
    with pytest.raises(PayloadDecodeError, match=r"^users-0, offset 3: value \(schema id 42\)"):
        decode_payloads(
            cluster.table(), value_format="avro", log_dir=cluster.log_dir, mode="FAILFAST"
        )
    # The good rows alone decode, with no error or raw columns in this mode.
    out = decode_payloads(
        table.slice(0, 3), value_format="avro", log_dir=cluster.log_dir, mode="FAILFAST"
    )
    assert column(out) == [{"id": 1}, None, {"id": 1}]
    assert "_payload_error" not in out.schema.names and "value_raw" not in out.schema.names


def test_subjects_follow_each_rows_topic(cluster):
    """TopicNameStrategy: ``<topic>-value`` for each row; the subjects' latest schemas type
    one column when they agree, and a table whose topics disagree is refused."""
    for topic, schema, value in (
        ("eu-users", V1, {"id": 1}),
        ("us-users", V1, {"id": 2}),
        ("orders", LINE, {"sku": "A", "n": 1}),
    ):
        ctx = cluster.ctx(topic)
        cluster.add(topic, None, AvroSerializer(cluster.client, json.dumps(schema))(value, ctx))
    cluster.write()
    source = open_schema_source(cluster.log_dir)
    users = cluster.table("eu-users", "us-users")
    out = decode_payloads(users, value_format="avro", schema_registry=source)
    assert column(out) == [{"id": 1}, {"id": 2}]
    # The mock gave each subject its own id for the same schema: each row its own.
    ids = {
        r.subject: r.schema_id
        for r in map(cluster.client.get_latest_version, ["eu-users-value", "us-users-value"])
    }
    assert out.column("value_schema_id").to_pylist() == [
        ids["eu-users-value"],
        ids["us-users-value"],
    ]

    everything = cluster.table()
    assert everything.column("topic").to_pylist() == ["eu-users", "orders", "us-users"]
    with pytest.raises(SchemaRegistryError, match="the value column would hold several types"):
        decode_payloads(everything, value_format="avro", schema_registry=source)
    # One subject for all rows: the others' records are read as it (and do not resolve).
    out = decode_payloads(
        everything, value_format="avro", schema_registry=source, value_subject="orders-value"
    )
    assert column(out) == [None, {"sku": "A", "n": 1}, None]
    assert [e is None for e in out.column("_payload_error").to_pylist()] == [False, True, False]
    # A topic whose subject has no schema: its rows are errors, the others decode.
    stray = pa.concat_tables([users, users.slice(0, 1).set_column(2, "topic", pa.array(["x"]))])
    out = decode_payloads(stray, value_format="avro", schema_registry=source)
    assert column(out) == [{"id": 1}, {"id": 2}, None]
    assert (
        out.column("_payload_error")[2]
        .as_py()
        .startswith("value: subject x-value has no live version in _schemas-0 in")
    )


def test_json_output_is_the_value_as_written(cluster):
    """``output="json"``: the value under its own (writer's) schema as compact JSON text, in
    the JSON-ready form of decoders.py: what Confluent's deserializer reads, as JSON."""
    ctx = cluster.ctx("users")
    v1 = AvroSerializer(cluster.client, json.dumps(V1))({"id": 1}, ctx)
    v2 = AvroSerializer(cluster.client, json.dumps(V2))(
        {"id": 2, "email": "é@x", "level": 1, "tier": "PRO"}, ctx
    )
    for value in (v1, v2, None, b"nope"):
        cluster.add("users", None, value)
    cluster.write()
    out = decode_payloads(
        cluster.table(), value_format="schema-registry", log_dir=cluster.log_dir, output="json"
    )
    assert out.schema.field("value").type == pa.string()
    texts = out.column("value").to_pylist()
    reader = AvroDeserializer(cluster.client)
    assert [json.loads(t) for t in texts[:2]] == [reader(v1, ctx), reader(v2, ctx)]
    assert texts[1] == '{"id":2,"email":"é@x","level":1,"tier":"PRO"}'
    assert texts[2:] == [None, None]
    assert out.column("value_schema_id").to_pylist() == [1, 2, None, None]
    assert out.column("_payload_error").to_pylist()[3] == (
        "value: magic byte 110, not 0 (Confluent wire format)"
    )


def test_formats_must_match_the_schema_type(cluster):
    ctx = cluster.ctx("users")
    avro = AvroSerializer(cluster.client, json.dumps(V1))({"id": 1}, ctx)
    schema = {"type": "object", "properties": {"id": {"type": "integer"}}}
    as_json = JSONSerializer(json.dumps(schema), cluster.client)({"id": 2}, cluster.ctx("x"))
    cluster.add("users", None, avro)
    cluster.add("users", None, as_json)
    cluster.write()
    table = cluster.table()
    with pytest.raises(SchemaRegistryError, match=r"subject users-value v1\) is Avro, not Pro"):
        decode_payloads(table, value_format="protobuf", log_dir=cluster.log_dir)
    out = decode_payloads(table, value_format="schema-registry", log_dir=cluster.log_dir)
    assert column(out) == [{"id": 1}, None]
    assert out.column("_payload_error")[1].as_py() == (
        "value: schema id 2 (subject x-value v1) is a JSON Schema schema; the column's, "
        "schema id 1 (subject users-value v1), is Avro"
    )


UNIONS = {
    "type": "record",
    "name": "U",
    "fields": [
        {"name": "num", "type": ["null", "int", "long"]},
        {"name": "real", "type": ["float", "double"]},
        {
            "name": "either",
            "type": [
                {"type": "record", "name": "A", "fields": [{"name": "x", "type": "int"}]},
                {"type": "record", "name": "B", "fields": [{"name": "x", "type": "int"}]},
                {"type": "map", "values": "int"},
            ],
        },
        {"name": "maybe_a", "type": ["null", "A"]},
        {"name": "three", "type": ["int", "string", "boolean"]},
    ],
}


def test_unions_as_spark_types_them(cluster):
    """{int, long} is a long, {float, double} a double; other unions are member structs, and
    two records of one shape are told apart by their names."""
    ctx = cluster.ctx("u")
    serializer = AvroSerializer(cluster.client, json.dumps(UNIONS))
    values = [
        {"num": 1, "real": 0.5, "either": ("A", {"x": 1}), "maybe_a": None, "three": 1},
        {"num": None, "real": 2.5, "either": ("B", {"x": 2}), "maybe_a": {"x": 9}, "three": "s"},
        {"num": 1 << 40, "real": 1.0, "either": {"k": 3}, "maybe_a": None, "three": True},
    ]
    for value in values:
        cluster.add("u", None, serializer(value, ctx))
    cluster.write()
    out = decode_payloads(cluster.table(), value_format="avro", log_dir=cluster.log_dir)
    a_type = pa.struct([("x", pa.int32())])
    assert out.schema.field("value").type == pa.struct(
        [
            ("num", pa.int64()),
            ("real", pa.float64()),
            (
                "either",
                pa.struct(
                    [
                        ("member0", a_type),
                        ("member1", a_type),
                        ("member2", pa.map_(pa.string(), pa.int32())),
                    ]
                ),
            ),
            ("maybe_a", a_type),
            (
                "three",
                pa.struct(
                    [("member0", pa.int32()), ("member1", pa.string()), ("member2", pa.bool_())]
                ),
            ),
        ]
    )
    none3 = {"member0": None, "member1": None, "member2": None}
    assert column(out) == [
        {
            "num": 1,
            "real": 0.5,
            "either": {**none3, "member0": {"x": 1}},
            "maybe_a": None,
            "three": {**none3, "member0": 1},
        },
        {
            "num": None,
            "real": 2.5,
            "either": {**none3, "member1": {"x": 2}},
            "maybe_a": {"x": 9},
            "three": {**none3, "member1": "s"},
        },
        {
            "num": 1 << 40,
            "real": 1.0,
            "either": {**none3, "member2": {"k": 3}},
            "maybe_a": None,
            "three": {**none3, "member2": True},
        },
    ]


def test_a_recursive_schema_has_no_arrow_type_but_reads_as_json(cluster):
    node = {
        "type": "record",
        "name": "Node",
        "fields": [{"name": "v", "type": "int"}, {"name": "next", "type": ["null", "Node"]}],
    }
    ctx = cluster.ctx("tree")
    cluster.add(
        "tree",
        None,
        AvroSerializer(cluster.client, json.dumps(node))(
            {"v": 1, "next": {"v": 2, "next": None}}, ctx
        ),
    )
    cluster.write()
    table = cluster.table()
    with pytest.raises(SchemaRegistryError, match=r"is recursive \(record Node holds itself\)"):
        decode_payloads(table, value_format="avro", log_dir=cluster.log_dir)
    out = decode_payloads(table, value_format="avro", log_dir=cluster.log_dir, output="json")
    assert out.column("value").to_pylist() == ['{"v":1,"next":{"v":2,"next":null}}']


def test_batches_tables_pickling_and_the_column_type(cluster):
    ctx = cluster.ctx("users")
    serializer = AvroSerializer(cluster.client, json.dumps(V2))
    for i in range(7):
        value = {"id": i, "email": None, "level": i, "tier": "FREE"}
        cluster.add("users", None, serializer(value, ctx))
    cluster.write()
    source = open_schema_source(cluster.log_dir)
    table = cluster.table()
    whole = decode_payloads(table, value_format="avro", schema_registry=source)
    # A table keeps its batches; a record batch comes back as one.
    batches = table.to_batches(max_chunksize=3)
    assert len(batches) == 3
    one_by_one = [decode_payloads(b, value_format="avro", schema_registry=source) for b in batches]
    assert all(isinstance(b, pa.RecordBatch) for b in one_by_one)
    assert pa.Table.from_batches(one_by_one).to_pylist() == whole.to_pylist()
    # The type Spark asks for before reading, and an empty table's.
    expected = payload_arrow_type(source, "users-value", kind="avro")
    assert expected == whole.schema.field("value").type
    empty = decode_payloads(
        table.slice(0, 0), value_format="avro", schema_registry=source, value_subject="users-value"
    )
    assert empty.num_rows == 0 and empty.schema.field("value").type == expected
    # A PayloadColumns pickles as its source's spec and options (a Spark executor's copy).
    columns = PayloadColumns(source, value_format="avro", mode="FAILFAST")
    again = pickle.loads(pickle.dumps(columns))
    assert again.decode(table).to_pylist() == columns.decode(table).to_pylist()
    assert again.source.spec == source.spec and again.mode == "FAILFAST"


def test_bad_options_are_one_line_errors(cluster, tmp_path):
    cluster.add("users", None, None)
    cluster.write()
    table = cluster.table()
    for options, message in (
        ({"value_format": "thrift"}, "value_format 'thrift' is no payload format: one of avro"),
        ({"value_format": "avro", "mode": "DROPMALFORMED"}, "mode 'DROPMALFORMED': one of"),
        ({"value_format": "avro", "output": "dict"}, "output 'dict': one of struct, json"),
    ):
        with pytest.raises(SchemaRegistryError, match=message):
            decode_payloads(table, log_dir=cluster.log_dir, **options)
    with pytest.raises(SchemaRegistryError, match="no _schemas partition in"):
        decode_payloads(table, value_format="avro", log_dir=tmp_path / "nothing-here")
    with pytest.raises(SchemaRegistryError, match="no topic column to name the value subject"):
        decode_payloads(
            table.drop_columns(["topic"]).set_column(1, "value", pa.array([b"\0\0\0\0\1"])),
            value_format="avro",
            log_dir=cluster.log_dir,
        )
    # Nothing asked for: the table as it was.
    assert decode_payloads(table, log_dir=cluster.log_dir).equals(table)


def test_public_names():
    assert kafka_format.decode_payloads is decode_payloads
    assert kafka_format.open_schema_source is open_schema_source
    assert kafka_format.SchemaRegistryError is SchemaRegistryError
    assert callable(kafka_format.payload_decoder)


def zigzag(value: int) -> bytes:
    """An Avro long: zigzag, then a varint."""
    raw, out = (value << 1) ^ (value >> 63), bytearray()
    while raw > 0x7F:
        out.append(raw & 0x7F | 0x80)
        raw >>= 7
    return bytes([*out, raw])


def test_defaults_fill_fields_the_writer_lacked_as_the_spec_reads_them(cluster):
    """Avro's spec: a ``bytes`` or ``fixed`` default is a JSON string whose code points 0-255
    are the bytes; a decimal's default is such bytes, the two's-complement unscaled value
    (here 0x00ff = 255, scale 2: 2.55)."""
    v2 = {
        "type": "record",
        "name": "User",
        "fields": [
            {"name": "id", "type": "long"},
            {"name": "blob", "type": "bytes", "default": "\u00ff\u0001"},
            {
                "name": "amount",
                "type": {"type": "bytes", "logicalType": "decimal", "precision": 5, "scale": 2},
                "default": "\u0000\u00ff",
            },
            {
                "name": "inner",
                "type": {
                    "type": "record",
                    "name": "In",
                    "fields": [{"name": "h", "type": {"type": "fixed", "name": "H", "size": 2}}],
                },
                "default": {"h": "\u0001\u0080"},
            },
        ],
    }
    ctx = cluster.ctx("users")
    cluster.add("users", None, AvroSerializer(cluster.client, json.dumps(V1))({"id": 1}, ctx))
    written = {"id": 2, "blob": b"", "amount": Decimal("-1.00"), "inner": {"h": b"ab"}}
    cluster.add("users", None, AvroSerializer(cluster.client, json.dumps(v2))(written, ctx))
    cluster.write()
    out = decode_payloads(cluster.table(), value_format="avro", log_dir=cluster.log_dir)
    assert column(out) == [
        {"id": 1, "blob": b"\xff\x01", "amount": Decimal("2.55"), "inner": {"h": b"\x01\x80"}},
        written,
    ]


def test_arrays_of_items_without_bytes_are_bounded(cluster):
    """A ten-byte count of ``null`` items would have fastavro build 10**12 of them: such data
    is walked first by avro.py's bounded checker, and is an error row."""
    xs = {"name": "xs", "type": {"type": "array", "items": "null"}}
    schema = {"type": "record", "name": "R", "fields": [xs]}
    ctx = cluster.ctx("r")
    good = AvroSerializer(cluster.client, json.dumps(schema))({"xs": [None, None]}, ctx)
    cluster.add("r", None, good)
    cluster.add("r", None, frame(1, zigzag(10**12) + b"\x00"))
    cluster.write()
    out = decode_payloads(cluster.table(), value_format="avro", log_dir=cluster.log_dir)
    assert column(out) == [{"xs": [None, None]}, None]
    assert "items that take no bytes" in out.column("_payload_error")[1].as_py()


def test_a_value_the_columns_type_cannot_hold_is_an_error_row(cluster):
    """v1's decimal(10, 2) read under v2's decimal(4, 2) (Avro resolves bytes to bytes):
    12345.67 has more digits than the column holds, which Arrow refuses; that row alone is
    null and says so."""

    def schema(precision: int) -> str:
        amount = {"type": "bytes", "logicalType": "decimal", "precision": precision, "scale": 2}
        return json.dumps(
            {"type": "record", "name": "P", "fields": [{"name": "amount", "type": amount}]}
        )

    ctx = cluster.ctx("p")
    old = AvroSerializer(cluster.client, schema(10))
    for amount in ("1.50", "12345.67"):
        cluster.add("p", None, old({"amount": Decimal(amount)}, ctx))
    AvroSerializer(cluster.client, schema(4))({"amount": Decimal("0.01")}, ctx)
    cluster.write()
    out = decode_payloads(cluster.table(), value_format="avro", log_dir=cluster.log_dir)
    assert out.schema.field("value").type == pa.struct([("amount", pa.decimal128(4, 2))])
    assert column(out) == [{"amount": Decimal("1.50")}, None]
    error = out.column("_payload_error")[1].as_py()
    # Arrow's own words follow: "Decimal type with precision 7 does not fit into ... 4"
    assert error.startswith("value: does not fit the column's Arrow type: ArrowInvalid: ")
    assert "precision 7" in error
