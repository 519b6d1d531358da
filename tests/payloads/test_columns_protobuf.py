"""Protobuf payloads as typed Arrow columns (runtime/payloads/columns.py, arrow_types.py).

Oracles:

* Confluent's own ``ProtobufSerializer`` writes every payload (message indexes included) into
  its mock registry, which stores each file as base64 of its ``FileDescriptorProto``; the
  classes it serializes are compiled here from ``.proto`` text with grpc_tools' protoc;
* Confluent's ``ProtobufDeserializer`` reads the same bytes; Google's
  ``json_format.MessageToDict`` of what it read (which, like Spark's ``from_protobuf``
  without ``emit.default.values``, leaves out fields without presence that hold their zero
  value) is turned into Arrow's values by :func:`arrow_value`, guided by the column's type
  only: 64-bit ints from their JSON strings, bytes from base64, RFC 3339 timestamps and
  ``"1.5s"`` durations parsed, wrappers as ``struct<value>``;
* the Arrow types are written out by hand from Spark's ``SchemaConverters.structFieldFor``
  (connector/protobuf), with ``upcast.unsigned.ints`` for uint32/uint64.
"""

from __future__ import annotations

import base64
import datetime as dt
import json
import os
from decimal import Decimal
from pathlib import Path
from typing import Any

import grpc_tools
import pyarrow as pa
import pytest
from confluent_kafka.schema_registry.protobuf import ProtobufDeserializer, ProtobufSerializer
from google.protobuf import descriptor_pb2, descriptor_pool, json_format, message_factory
from grpc_tools import protoc

from kafka_format.runtime.payloads.columns import decode_payloads
from kafka_format.runtime.payloads.registry import SchemaRegistryError

CONF = {"use.deprecated.format": False}

SHOP = """syntax = "proto3";
package shop;
import "google/protobuf/timestamp.proto";
import "google/protobuf/duration.proto";
import "google/protobuf/wrappers.proto";
import "google/protobuf/struct.proto";
import "google/protobuf/any.proto";
import "google/protobuf/empty.proto";

message Order {
  string id = 1;
  map<string, string> labels = 2;
  message Line {
    string sku = 1;
    uint32 qty = 2;
    map<string, int64> extra = 3;
  }
  repeated Line lines = 3;
  enum Status { NEW = 0; PAID = 1; }
  Status status = 4;
  google.protobuf.Timestamp created = 5;
  oneof payment { string card = 6; int32 cash = 7; }
  bytes blob = 8;
  int64 big = 9;
  uint64 huge = 10;
  double ratio = 11;
  float small = 12;
  google.protobuf.Int32Value maybe = 13;
  optional bool gift = 14;
  sint32 delta = 15;
  fixed32 code = 16;
  google.protobuf.Duration wait = 17;
  google.protobuf.Struct meta = 18;
  repeated Status history = 19;
  map<int32, Line> by_pos = 20;
  google.protobuf.Any extra = 21;
  google.protobuf.Empty nothing = 22;
}
message Refund { string order_id = 1; }
"""
LINE_TYPE = pa.struct(
    [
        ("sku", pa.string()),
        ("qty", pa.int64()),
        ("extra", pa.map_(pa.string(), pa.int64())),
    ]
)
ORDER_TYPE = pa.struct(
    [
        ("id", pa.string()),
        ("labels", pa.map_(pa.string(), pa.string())),
        ("lines", pa.list_(LINE_TYPE)),
        ("status", pa.string()),
        ("created", pa.timestamp("us", "UTC")),
        ("card", pa.string()),
        ("cash", pa.int32()),
        ("blob", pa.binary()),
        ("big", pa.int64()),
        ("huge", pa.decimal128(20, 0)),
        ("ratio", pa.float64()),
        ("small", pa.float32()),
        ("maybe", pa.struct([("value", pa.int32())])),
        ("gift", pa.bool_()),
        ("delta", pa.int32()),
        ("code", pa.int64()),
        ("wait", pa.duration("us")),
        ("meta", pa.string()),
        ("history", pa.list_(pa.string())),
        ("by_pos", pa.map_(pa.int32(), LINE_TYPE)),
        ("extra", pa.struct([("type_url", pa.string()), ("value", pa.binary())])),
        # google.protobuf.Empty has no fields: Spark drops it (retain.empty.message.types off)
    ]
)


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


def compile_pool(root: Path, files: dict[str, str]) -> descriptor_pool.DescriptorPool:
    """Classes for the test to write with: protoc over ``files``, into a pool of their own."""
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    out = root / "set.pb"
    include = os.path.join(os.path.dirname(grpc_tools.__file__), "_proto")
    args = ["protoc", f"-I{root}", f"-I{include}", "--include_imports"]
    assert protoc.main([*args, f"--descriptor_set_out={out}", *files]) == 0
    pool = descriptor_pool.DescriptorPool()
    for file in descriptor_pb2.FileDescriptorSet.FromString(out.read_bytes()).file:
        pool.Add(file)
    return pool


def cls(pool: descriptor_pool.DescriptorPool, name: str) -> Any:
    return message_factory.GetMessageClass(pool.FindMessageTypeByName(name))


def arrow_value(value: Any, arrow_type: pa.DataType) -> Any:
    """A ``MessageToDict`` value as Arrow's ``to_pylist`` gives it for ``arrow_type``."""
    if value is None:
        return [] if pa.types.is_list(arrow_type) else {} if pa.types.is_map(arrow_type) else None
    if pa.types.is_struct(arrow_type):
        names = [f.name for f in arrow_type]
        if names == ["value"] and not isinstance(value, dict):  # a wrapper's JSON is its value
            return {"value": value or None}  # its zero value: no presence, so null
        return {f.name: arrow_value(value.get(f.name), f.type) for f in arrow_type}
    if pa.types.is_list(arrow_type):
        return [arrow_value(v, arrow_type.value_type) for v in value]
    if pa.types.is_map(arrow_type):
        key = int if pa.types.is_integer(arrow_type.key_type) else str
        return {key(k): arrow_value(v, arrow_type.item_type) for k, v in value.items()}
    if pa.types.is_decimal(arrow_type):
        return Decimal(value)
    if pa.types.is_integer(arrow_type):
        return int(value)
    if pa.types.is_binary(arrow_type):
        return base64.b64decode(value)
    if pa.types.is_timestamp(arrow_type):
        return dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    if pa.types.is_duration(arrow_type):
        return dt.timedelta(seconds=float(value.removesuffix("s")))
    if pa.types.is_string(arrow_type) and not isinstance(value, str):
        return json.dumps(value, separators=(",", ":"))  # Struct: its JSON text
    return value


@pytest.fixture(scope="module")
def shop(tmp_path_factory) -> descriptor_pool.DescriptorPool:
    return compile_pool(tmp_path_factory.mktemp("shop"), {"shop/orders.proto": SHOP})


def sample_orders(pool: descriptor_pool.DescriptorPool) -> list[Any]:
    Order = cls(pool, "shop.Order")
    full = Order(id="o-1", status=1, blob=b"\x00\xff", big=1 << 60, huge=(1 << 64) - 1)
    full.ratio, full.small, full.gift, full.delta, full.code = 0.25, 0.5, False, -7, 1 << 31
    full.labels["k"] = "v"
    line = full.lines.add(sku="A", qty=(1 << 32) - 1)
    line.extra["x"] = -5
    full.created.FromSeconds(1_714_564_800)
    full.created.nanos = 123_456_000
    full.cash = 0  # a oneof member has presence: its zero value is kept
    full.maybe.value = 4
    full.wait.FromMilliseconds(-1500)
    full.meta.update({"a": [1, "two", None], "b": {"c": True}})
    full.history.extend([0, 1, 1])
    full.by_pos[3].sku = "B"
    full.extra.Pack(cls(pool, "shop.Refund")(order_id="r"))
    full.nothing.SetInParent()
    sparse = Order(card="visa", maybe={})  # maybe present, holding 0
    return [full, Order(), sparse]


def test_protobuf_types_and_values_match_confluents_deserializer(cluster, shop):
    Order = cls(shop, "shop.Order")
    serializer = ProtobufSerializer(Order, cluster.client, CONF)
    deserializer = ProtobufDeserializer(Order, CONF, cluster.client)
    ctx = cluster.ctx("orders")
    expected = []
    for message in sample_orders(shop):
        data = serializer(message, ctx)
        cluster.add("orders", None, data)
        read = json_format.MessageToDict(
            deserializer(data, ctx), preserving_proto_field_name=True, descriptor_pool=shop
        )
        expected.append(arrow_value(read, ORDER_TYPE))
        expected[-1].pop("extra")  # Any's JSON names its type, not its bytes: checked below
    cluster.write()

    out = decode_payloads(cluster.table(), value_format="protobuf", log_dir=cluster.log_dir)
    assert out.schema.field("value").type == ORDER_TYPE
    values = column(out)
    extras = [v.pop("extra") for v in values]
    for row in (*values, *expected):  # JSON text: compared as what it says
        row["meta"] = None if row["meta"] is None else json.loads(row["meta"])
    assert values == expected
    assert extras[0] == {
        "type_url": "type.googleapis.com/shop.Refund",
        "value": cls(shop, "shop.Refund")(order_id="r").SerializeToString(),
    }
    assert extras[1:] == [None, None]
    full, empty, sparse = values
    # Spark's default reading, spelled out: zero values of fields without presence are null,
    # those with presence (oneof, optional, messages) kept, repeated fields empty lists.
    assert full["cash"] == 0 and full["gift"] is False and full["card"] is None
    assert full["huge"] == Decimal((1 << 64) - 1) and full["code"] == 1 << 31
    assert full["lines"][0]["qty"] == (1 << 32) - 1
    assert full["created"] == dt.datetime(2024, 5, 1, 12, 0, 0, 123456, tzinfo=dt.UTC)
    assert full["wait"] == dt.timedelta(milliseconds=-1500)
    assert full["meta"] == {"a": [1, "two", None], "b": {"c": True}}
    assert full["history"] == ["NEW", "PAID", "PAID"] and full["by_pos"] == {
        3: {"sku": "B", "qty": None, "extra": {}}
    }
    assert empty["id"] is None and empty["lines"] == [] and empty["labels"] == {}
    assert sparse["maybe"] == {"value": None} and sparse["card"] == "visa"


PEOPLE_V1 = """syntax = "proto3";
package people;
message Person {
  string id = 1;
  string name = 2;
  int32 age = 3;
  message Address { string city = 1; }
  Address home = 4;
  string score = 8;
}
"""
PEOPLE_V2 = """syntax = "proto3";
package people;
message Person {
  string id = 1;
  int64 age = 3;
  message Address { string city = 1; string zip = 2; }
  Address home = 4;
  string email = 5;
  repeated string tags = 6;
  double score = 8;
}
"""


def test_older_protobuf_versions_map_by_field_name(cluster, tmp_path):
    """v1 records under v2's struct: fields matched by name at every depth; v2's new fields
    are null (a new repeated field empty, as the bytes would read under v2), v1's dropped
    ones gone, an int32 widened to int64 kept; a field whose type changed incompatibly
    (string to double) is an error for the records that hold it."""
    v1 = cls(compile_pool(tmp_path / "v1", {"people.proto": PEOPLE_V1}), "people.Person")
    v2 = cls(compile_pool(tmp_path / "v2", {"people.proto": PEOPLE_V2}), "people.Person")
    ctx = cluster.ctx("people")
    old, new = (
        ProtobufSerializer(v1, cluster.client, CONF),
        ProtobufSerializer(v2, cluster.client, CONF),
    )
    cluster.add("people", None, old(v1(id="a", name="Ann", age=30, home={"city": "Oslo"}), ctx))
    cluster.add("people", None, new(v2(id="b", age=1 << 40, email="b@x", tags=["t"]), ctx))
    cluster.add("people", None, old(v1(id="c", score="high"), ctx))
    cluster.write()
    out = decode_payloads(cluster.table(), value_format="protobuf", log_dir=cluster.log_dir)
    address = pa.struct([("city", pa.string()), ("zip", pa.string())])
    assert out.schema.field("value").type == pa.struct(
        [
            ("id", pa.string()),
            ("age", pa.int64()),
            ("home", address),
            ("email", pa.string()),
            ("tags", pa.list_(pa.string())),
            ("score", pa.float64()),
        ]
    )
    base = {"age": None, "home": None, "email": None, "tags": [], "score": None}
    assert column(out) == [
        {**base, "id": "a", "age": 30, "home": {"city": "Oslo", "zip": None}},
        {**base, "id": "b", "age": 1 << 40, "email": "b@x", "tags": ["t"]},
        None,
    ]
    assert out.column("value_schema_id").to_pylist() == [1, 2, 1]
    assert out.column("_payload_error").to_pylist()[2] == (
        "value: field score is string here, double in the column's schema"
    )


def test_the_column_is_one_message_of_the_schema(cluster, shop):
    """The column is typed by the latest schema's first message (Confluent's default), or
    the one named: records of another message are errors, not misread."""
    Order, Refund = cls(shop, "shop.Order"), cls(shop, "shop.Refund")
    ctx = cluster.ctx("orders")
    order = ProtobufSerializer(Order, cluster.client, CONF)(Order(id="o"), ctx)
    refund = ProtobufSerializer(Refund, cluster.client, CONF)(Refund(order_id="r"), ctx)
    assert refund[5:7] == b"\x02\x02"  # message indexes [1]
    cluster.add("orders", None, order)
    cluster.add("orders", None, refund)
    cluster.write()
    table = cluster.table()
    out = decode_payloads(table, value_format="protobuf", log_dir=cluster.log_dir)
    assert column(out)[0]["id"] == "o" and column(out)[1] is None
    assert (
        out.column("_payload_error")[1]
        .as_py()
        .startswith(
            "value: message shop.Refund of schema id 1 (subject orders-value v1) is not the "
            "column's shop.Order"
        )
    )
    out = decode_payloads(
        table, value_format="protobuf", log_dir=cluster.log_dir, value_message="shop.Refund"
    )
    assert out.schema.field("value").type == pa.struct([("order_id", pa.string())])
    assert column(out) == [None, {"order_id": "r"}]
    with pytest.raises(SchemaRegistryError, match=r"has no message shop\.Nothing"):
        decode_payloads(
            table, value_format="protobuf", log_dir=cluster.log_dir, value_message="shop.Nothing"
        )


def test_keys_and_values_of_several_formats_by_their_ids(cluster, shop):
    """``schema-registry`` takes each subject's format from its schema: a Protobuf value (of
    the file's second message, named) and an Avro key in one table."""
    from confluent_kafka.schema_registry.avro import AvroSerializer

    Refund = cls(shop, "shop.Refund")
    key_ctx, ctx = cluster.ctx("refunds", key=True), cluster.ctx("refunds")
    key = AvroSerializer(cluster.client, '"long"')(7, key_ctx)
    value = ProtobufSerializer(Refund, cluster.client, CONF)(Refund(order_id="r"), ctx)
    cluster.add("refunds", key, value)
    cluster.write()
    out = decode_payloads(
        cluster.table(),
        key_format="schema-registry",
        value_format="schema-registry",
        log_dir=cluster.log_dir,
        value_message="shop.Refund",
    )
    assert out.column("key").to_pylist() == [7]
    assert out.column("_payload_error").to_pylist() == [None]
    assert column(out) == [{"order_id": "r"}]


def test_a_recursive_message_has_no_arrow_type(cluster, tmp_path):
    text = 'syntax = "proto3";\npackage t;\nmessage Node { int32 v = 1; Node next = 2; }\n'
    Node = cls(compile_pool(tmp_path, {"t.proto": text}), "t.Node")
    data = ProtobufSerializer(Node, cluster.client, CONF)(Node(v=1), cluster.ctx("tree"))
    cluster.add("tree", None, data)
    cluster.write()
    with pytest.raises(SchemaRegistryError, match=r"message t\.Node holds itself"):
        decode_payloads(cluster.table(), value_format="protobuf", log_dir=cluster.log_dir)
    out = decode_payloads(
        cluster.table(), value_format="protobuf", log_dir=cluster.log_dir, output="json"
    )
    assert out.column("value").to_pylist() == ['{"v":1}']
