"""Protobuf payloads (runtime/payloads/protobuf.py) through the entry point (decoders.py).

Oracles:

* Confluent's own ``ProtobufSerializer`` writes payloads (message indexes included) into its
  mock registry, which stores each file as base64 of its ``FileDescriptorProto``, references
  to imported files as subjects of their own; the classes it serializes are built here from
  ``.proto`` text with grpc_tools' protoc. The expected value is
  ``json_format.MessageToDict`` of what Confluent's ``ProtobufDeserializer`` reads back, and
  of the message that was written;
* for schemas registered as ``.proto`` text (what the registry's ``_schemas`` holds for a
  Java producer), the message indexes Confluent's Java serializer writes are worked out by
  hand from ``ProtobufSchema.toMessageIndexes`` / ``toMessageName`` (protobuf-provider,
  ProtobufSchema.java: only the messages the text declares count, enums and the entries of
  ``map<>`` fields do not) and ``MessageIndexes.toByteArray``; payload bytes are written by
  the generated classes or by hand from the Protobuf encoding;
* Confluent's canonical text with written-out map entries is its own test's string
  (``ProtobufSchemaTest.mapEntrySchemaString``).
"""

from __future__ import annotations

import base64
import os
from pathlib import Path
from typing import Any

import grpc_tools
import pytest
from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.protobuf import ProtobufDeserializer, ProtobufSerializer
from confluent_kafka.serialization import MessageField, SerializationContext
from google.protobuf import descriptor_pb2, descriptor_pool, json_format, message_factory
from grpc_tools import protoc
from hypothesis import given, settings
from hypothesis import strategies as st

from kafka_format.runtime.payloads.decoders import payload_decoder
from kafka_format.runtime.payloads.encode import MemorySchemaSource
from kafka_format.runtime.payloads.protobuf import ProtobufDecoder
from kafka_format.runtime.payloads.registry import RegisteredSchema, SchemaReference
from kafka_format.runtime.payloads.wire import frame

CTX = SerializationContext("orders", MessageField.VALUE)
CONF = {"use.deprecated.format": False}
_clients = iter(range(1_000_000))

MONEY = """syntax = "proto3";
package common;
message Money { string currency = 1; int64 units = 2; }
"""
ORDERS = """syntax = "proto3";
package shop;
import "google/protobuf/timestamp.proto";
import "google/protobuf/wrappers.proto";
import "common/money.proto";

message Order {
  string id = 1;
  map<string, string> labels = 2;
  message Line {
    string sku = 1;
    uint32 qty = 2;
    map<string, int64> extra = 3;
    message Note { string text = 1; }
    repeated Note notes = 4;
  }
  repeated Line lines = 3;
  enum Status { NEW = 0; PAID = 1; }
  Status status = 4;
  google.protobuf.Timestamp created = 5;
  oneof payment { string card = 6; common.Money cash = 7; }
  common.Money total = 8;
  bytes blob = 9;
  int64 big = 10;
  double ratio = 11;
  google.protobuf.Int32Value maybe = 12;
  optional bool gift = 13;
  map<int32, Line> by_pos = 14;
}
message Refund {
  string order_id = 1;
  message Reason { string text = 1; }
  Reason reason = 2;
}
"""


class DictSource(MemorySchemaSource):
    """The runtime's in-memory source, named in errors as the tests expect."""

    def __init__(self, schemas: list[RegisteredSchema], description: str = "the test registry"):
        super().__init__(schemas)
        self.description = description


def export(client: Any) -> list[RegisteredSchema]:
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
    return schemas


def text_schema(schema_id: int, subject: str, text: str, *refs: SchemaReference) -> Any:
    return RegisteredSchema(schema_id, subject, 1, "PROTOBUF", text, tuple(refs))


def compile_pool(tmp_path: Path, files: dict[str, str]) -> descriptor_pool.DescriptorPool:
    """Classes for the test to write with: protoc over ``files``, into a pool of their own."""
    root = tmp_path / f"protos-{len(list(tmp_path.iterdir()))}"
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


def classes(pool: descriptor_pool.DescriptorPool, *names: str) -> list[Any]:
    return [message_factory.GetMessageClass(pool.FindMessageTypeByName(n)) for n in names]


def as_json(message: Any, pool: Any) -> dict[str, Any]:
    return json_format.MessageToDict(
        message, preserving_proto_field_name=True, descriptor_pool=pool
    )


@pytest.fixture(scope="module")
def shop(tmp_path_factory) -> Any:
    pool = compile_pool(
        tmp_path_factory.mktemp("shop"), {"common/money.proto": MONEY, "shop/orders.proto": ORDERS}
    )
    return pool


def sample_order(Order: Any) -> Any:
    order = Order(id="o-1", status=1, blob=b"\x00\xff", big=1 << 60, ratio=0.25, gift=False)
    order.labels["k"] = "v"
    line = order.lines.add(sku="A", qty=2)
    line.extra["x"] = -5
    line.notes.add(text="fragile")
    order.created.FromSeconds(1_714_564_800)
    order.created.nanos = 123_000_000
    order.cash.currency = "EUR"
    order.cash.units = 12
    order.total.units = 3
    order.maybe.value = 0
    order.by_pos[1].sku = "B"
    return order


def test_confluent_serializer_payloads_decode_as_its_deserializer_reads_them(shop):
    """Messages at every depth (indexes [0], [0, i], [0, i, j], [1], [1, 0]) with maps,
    oneof, enums, repeated, imports through references and well-known types."""
    Order, Line, Note, Refund, Reason = classes(
        shop,
        "shop.Order",
        "shop.Order.Line",
        "shop.Order.Line.Note",
        "shop.Refund",
        "shop.Refund.Reason",
    )
    client = SchemaRegistryClient.new_client({"url": f"mock://pb-{next(_clients)}"})
    messages = [
        sample_order(Order),
        Order(),  # every field at its default: {}
        Line(sku="solo", notes=[Note(text="n")]),
        Note(text="deep"),
        Refund(order_id="o-1", reason=Reason(text="late")),
        Reason(text="only"),
    ]
    written = []
    for message in messages:
        cls = type(message)
        data = ProtobufSerializer(cls, client, CONF)(message, CTX)
        read = ProtobufDeserializer(cls, CONF, client)(data, CTX)
        written.append((data, as_json(read, shop), as_json(message, shop)))
    schemas = export(client)
    # The serializer registered the imported file under its own subject, and the base64 form.
    assert {s.subject for s in schemas} >= {"common/money.proto", "orders-value"}
    assert all(s.schema.endswith("=") or "syntax" not in s.schema for s in schemas)
    decoder = payload_decoder("protobuf", DictSource(schemas))
    for data, confluent, original in written:
        decoded = decoder.decode(data)
        assert decoded.error is None, decoded.error
        assert decoded.value == confluent == original
    order = decoder.decode(written[0][0]).value
    assert order["created"] == "2024-05-01T12:00:00.123Z" and order["big"] == str(1 << 60)
    assert order["labels"] == {"k": "v"} and order["status"] == "PAID"
    assert order["cash"] == {"currency": "EUR", "units": "12"} and "card" not in order
    assert order["maybe"] == 0 and order["gift"] is False and order["blob"] == "AP8="
    assert order["lines"][0]["notes"] == [{"text": "fragile"}]
    assert order["by_pos"] == {"1": {"sku": "B"}}
    assert decoder.decode(written[1][0]).value == {}
    # [0] is the one byte 0 after the id; a nested message has its path. In the descriptor
    # form every nested type counts: protoc put LabelsEntry (field 2) before Line.
    assert written[0][0][5] == 0 and written[4][0][5:7] == b"\x02\x02"
    assert written[2][0][5:8] == b"\x04\x00\x02"  # Line: [0, 1]


def test_text_schemas_count_declared_messages(shop, tmp_path):
    """The same files registered as .proto text, as a Java producer's registry holds them:
    the indexes Confluent's Java serializer writes count the messages the text declares
    (toMessageIndexes over Wire's parse), never the entries protoc makes for map<> fields."""
    Line, Note, Reason = classes(
        shop, "shop.Order.Line", "shop.Order.Line.Note", "shop.Refund.Reason"
    )
    money = text_schema(1, "money", MONEY)
    orders = text_schema(
        2, "orders-value", ORDERS, SchemaReference("common/money.proto", "money", 1)
    )
    decoder = payload_decoder("schema-registry", DictSource([money, orders]))
    line = Line(sku="A", extra={"x": 1}, notes=[Note(text="t")])
    # Order declares one message, Line (Status is an enum, LabelsEntry and ByPosEntry are
    # protoc's): Line is [0, 0], Note [0, 0, 0], whatever protoc's nested_type order.
    assert decoder.decode(frame(2, line.SerializeToString(), [0, 0])).value == as_json(line, shop)
    note = Note(text="deep")
    assert decoder.decode(frame(2, note.SerializeToString(), [0, 0, 0])).value == {"text": "deep"}
    reason = Reason(text="late")
    assert decoder.decode(frame(2, reason.SerializeToString(), [1, 0])).value == {"text": "late"}
    error = decoder.decode(frame(2, b"", [0, 1])).error
    assert error == (
        "message indexes [0, 1] name no message of schema id 2 (subject orders-value v1): "
        "index 1, but Order declares 1 nested message"
    )


def test_written_out_map_entries_as_confluent_prints_them():
    """ProtobufSchemaTest.mapEntrySchemaString: a schema registered from a descriptor prints
    its map entry as a message with ``option map_entry = true``, which protoc refuses. It
    decodes as a map, and the entry counts as a declared message (it is one in the text)."""
    text = (  # its lines as ProtobufSchemaTest writes them, the blank one with two spaces
        'syntax = "proto3";\n'
        "\n"
        'import "google/protobuf/descriptor.proto";\n'
        "\n"
        'option java_package = "io.confluent.kafka.serializers.protobuf.test";\n'
        'option java_outer_classname = "TestMapProtos";\n'
        "\n"
        "message TestMap {\n"
        "  repeated TestMapEntry test_map = 1;\n"
        "\n"
        "  message TestMapEntry {\n"
        "    option map_entry = true;\n"
        "  \n"
        "    string key = 1;\n"
        "    string value = 2;\n"
        "  }\n"
        "  message Other { int32 x = 1; }\n"  # added: the entry counts before it
        "}\n"
    )
    decoder = payload_decoder("protobuf", DictSource([text_schema(3, "maps", text)]))
    entry = b"\x0a\x01k" + b"\x12\x01v"  # key "k", value "v"
    payload = b"\x0a" + bytes([len(entry)]) + entry
    assert decoder.decode(frame(3, payload, [0])).value == {"test_map": {"k": "v"}}
    assert decoder.decode(frame(3, b"\x08\x07", [0, 1])).value == {"x": 7}


def test_groups_are_no_declared_messages_in_text():
    """proto2 groups: Wire keeps them apart from nested messages, so After is [0, 0]."""
    text = """syntax = "proto2";
message G {
  optional group Inner = 1 { optional int32 x = 2; }
  message After { optional int32 y = 1; }
}
"""
    decoder = payload_decoder("protobuf", DictSource([text_schema(4, "groups", text)]))
    assert decoder.decode(frame(4, b"\x08\x05", [0, 0])).value == {"y": 5}
    # The group itself: start group 1, field 2 = 3, end group 1.
    assert decoder.decode(frame(4, b"\x0b\x10\x03\x0c", [0])).value == {"inner": {"x": 3}}


def test_public_import_wrapper_stands_for_the_imported_file():
    """ProtobufSchema.effectiveFile: a file that declares nothing and publicly imports one."""
    inner = (
        'syntax = "proto3";\npackage p;\nmessage A { int32 a = 1; }\nmessage B { string b = 1; }\n'
    )
    wrapper = 'syntax = "proto3";\nimport public "inner.proto";\n'
    source = DictSource(
        [
            text_schema(5, "inner", inner),
            text_schema(6, "wrapped-value", wrapper, SchemaReference("inner.proto", "inner", 1)),
        ]
    )
    decoder = payload_decoder("protobuf", source)
    assert decoder.decode(frame(6, b"\x0a\x02hi", [1])).value == {"b": "hi"}
    assert decoder.decode(frame(6, b"\x08\x02", [0])).value == {"a": 2}


def test_two_versions_of_one_file_name_do_not_clash():
    """Each id has its own pool: other.proto v1 and v2 define other.Thing differently."""
    v1 = 'syntax = "proto3";\npackage other;\nmessage Thing { int32 n = 1; }\n'
    v2 = 'syntax = "proto3";\npackage other;\nmessage Thing { string n = 1; }\n'
    main = 'syntax = "proto3";\nimport "other.proto";\nmessage M { other.Thing t = 1; }\n'
    source = DictSource(
        [
            RegisteredSchema(1, "other", 1, "PROTOBUF", v1, ()),
            RegisteredSchema(2, "other", 2, "PROTOBUF", v2, ()),
            text_schema(3, "m1", main, SchemaReference("other.proto", "other", 1)),
            text_schema(4, "m2", main, SchemaReference("other.proto", "other", 2)),
        ]
    )
    decoder = payload_decoder("protobuf", source)
    assert decoder.decode(frame(3, b"\x0a\x02\x08\x05", [0])).value == {"t": {"n": 5}}
    assert decoder.decode(frame(4, b"\x0a\x03\x0a\x01z", [0])).value == {"t": {"n": "z"}}


def test_text_schema_importing_a_descriptor_form_reference(shop):
    """A text schema may import a file registered in the descriptor form (what Confluent's
    Python serializer registers), and the other way round."""
    money_b64 = base64.b64encode(shop.FindFileByName("common/money.proto").serialized_pb).decode()
    main = 'syntax = "proto3";\nimport "common/money.proto";\nmessage Pay { common.Money m = 1; }\n'
    source = DictSource(
        [
            RegisteredSchema(1, "money", 1, "PROTOBUF", money_b64, ()),
            text_schema(2, "pay", main, SchemaReference("common/money.proto", "money", 1)),
            RegisteredSchema(
                3,
                "orders-value",
                1,
                "PROTOBUF",
                base64.b64encode(shop.FindFileByName("shop/orders.proto").serialized_pb).decode(),
                (SchemaReference("common/money.proto", "money-text", 1),),
            ),
            text_schema(4, "money-text", MONEY),
        ]
    )
    decoder = payload_decoder("protobuf", source)
    assert decoder.decode(frame(2, b"\x0a\x05\x0a\x03EUR", [0])).value == {"m": {"currency": "EUR"}}
    (Order,) = classes(shop, "shop.Order")
    order = sample_order(Order)
    assert decoder.decode(frame(3, order.SerializeToString(), [0])).value == as_json(order, shop)


def test_confluent_built_in_imports():
    """confluent/meta.proto (tags and docs as options) and confluent/type/decimal.proto are
    never references: they compile from the built-in copies."""
    text = """syntax = "proto3";
package tagged;
import "confluent/meta.proto";
import "confluent/type/decimal.proto";
message Payment {
  option (confluent.message_meta).doc = "a payment";
  string id = 1 [(confluent.field_meta) = { tags: ["PII"] }];
  confluent.type.Decimal amount = 2;
}
"""
    decoder = payload_decoder("protobuf", DictSource([text_schema(5, "payments", text)]))
    amount = b"\x0a\x01\x7b" + b"\x10\x05" + b"\x18\x02"  # value 123, precision 5, scale 2
    payload = b"\x0a\x03abc" + b"\x12" + bytes([len(amount)]) + amount
    assert decoder.decode(frame(5, payload, [0])).value == {
        "id": "abc",
        "amount": {"value": "ew==", "precision": 5, "scale": 2},
    }


def test_google_type_imports():
    pytest.importorskip("google.type.date_pb2")
    text = (
        'syntax = "proto3";\nimport "google/type/date.proto";\n'
        "message Birth { google.type.Date day = 1; }\n"
    )
    decoder = payload_decoder("protobuf", DictSource([text_schema(6, "births", text)]))
    day = b"\x08\xe8\x0f\x10\x05\x18\x01"  # 2024-05-01
    payload = b"\x0a" + bytes([len(day)]) + day
    assert decoder.decode(frame(6, payload, [0])).value == {
        "day": {"year": 2024, "month": 5, "day": 1}
    }


# --- damage --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def text_decoder() -> Any:
    money = text_schema(1, "money", MONEY)
    orders = text_schema(
        2, "orders-value", ORDERS, SchemaReference("common/money.proto", "money", 1)
    )
    return payload_decoder("protobuf", DictSource([money, orders]))


@pytest.mark.parametrize(
    ("data", "error"),
    [
        (
            frame(2, b"\xff\xff\xff", [0]),
            "does not parse as Protobuf shop.Order under schema id 2 (subject orders-value v1): "
            "DecodeError: ",
        ),
        (frame(2, b"\x0a\x05ab", [0]), "does not parse as Protobuf shop.Order"),  # truncated
        (
            frame(2, b"", [7]),
            "message indexes [7] name no message of schema id 2 (subject orders-value v1): "
            "index 7, but the file declares 2 top-level messages",
        ),
        (frame(2, b"", [-1]), "index -1, but the file declares 2 top-level messages"),
        (frame(2, b"", [0, 0, 0, 0]), "index 0, but Note declares 0 nested messages"),
        (
            b"\x00\x00\x00\x00\x02" + b"\xfe\xff\xff\xff\x0f" + b"\x00" * 8,
            "message index count 2147483647, but 8 bytes follow it",
        ),
        (b"\x00\x00\x00\x00\x02", "message indexes end inside a varint"),
        (b"\x00\x00\x00\x00\x02\x02\x80", "message indexes end inside a varint"),
    ],
)
def test_damage_is_one_line_naming_the_schema(text_decoder, data, error):
    decoded = text_decoder.decode(data)
    assert decoded.value is None and decoded.schema_id == 2
    assert error in decoded.error and "\n" not in decoded.error


def test_unusable_schemas_are_errors_remembered():
    broken = text_schema(1, "broken", 'syntax = "proto3";\nmessage X { int32 a = 1 }\n')
    missing = text_schema(
        2, "missing", 'syntax = "proto3";\nimport "nowhere.proto";\nmessage Y {}\n'
    )
    dangling = text_schema(
        3,
        "dangling",
        'syntax = "proto3";\nimport "gone.proto";\nmessage Z {}\n',
        SchemaReference("gone.proto", "gone", 4),
    )
    escaping = text_schema(
        4, "escape", 'syntax = "proto3";\nmessage E {}\n', SchemaReference("../x.proto", "x", 1)
    )
    source = DictSource([broken, missing, dangling, escaping, text_schema(5, "x", "")])
    decoder = payload_decoder("protobuf", source)
    error = decoder.decode(frame(1, b"", [0])).error
    assert error.startswith("schema id 1 (subject broken v1) does not compile as Protobuf: ")
    assert 'Expected ";"' in error and "\n" not in error
    assert decoder.decode(frame(1, b"", [0])).error == error  # compiled once, remembered
    assert "nowhere.proto" in decoder.decode(frame(2, b"", [0])).error
    assert decoder.decode(frame(3, b"", [0])).error == (
        "schema id 3 (subject dangling v1) refers to gone.proto (subject gone v4), which is "
        "not in the test registry"
    )
    assert "no relative file path" in decoder.decode(frame(4, b"", [0])).error


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=30))
def test_any_bytes_decode_or_say_why(payload):
    decoded = _ANY_DECODER.decode(b"\x00\x00\x00\x00\x02" + payload)
    assert decoded.schema_id == 2
    if decoded.error is not None:
        assert decoded.value is None and "\n" not in decoded.error


_ANY_DECODER = payload_decoder(
    "protobuf",
    DictSource(
        [
            text_schema(1, "money", MONEY),
            text_schema(
                2, "orders-value", ORDERS, SchemaReference("common/money.proto", "money", 1)
            ),
        ]
    ),
)


def test_each_schema_compiles_once_per_process(monkeypatch):
    """protoc is a process of its own: a key and a value decoder, or decoders over sources
    unpickled in every task, share what one of them compiled."""
    runs = []
    real = ProtobufDecoder._protoc

    def counting(self, *args):
        runs.append(args[0])
        return real(self, *args)

    monkeypatch.setattr(ProtobufDecoder, "_protoc", counting)
    text = f'syntax = "proto3";\n// {id(runs)}\nmessage Once {{ int32 n = 1; }}\n'
    for _ in range(3):
        decoder = payload_decoder("protobuf", DictSource([text_schema(77, "once", text)]))
        assert decoder.decode(frame(77, b"\x08\x01", [0])).value == {"n": 1}
    assert len(runs) == 1


def test_nesting_past_protobufs_depth_limit_is_an_error():
    """upb's decoder stops at 100 levels (upb_DecodeOptions_MaxDepth): an error, no crash."""
    text = 'syntax = "proto3";\nmessage N { N next = 1; int32 v = 2; }\n'
    decoder = payload_decoder("protobuf", DictSource([text_schema(8, "nested", text)]))

    def nested(levels: int) -> bytes:
        data = b"\x10\x01"  # v = 1
        for _ in range(levels):
            data = b"\x0a" + _varint(len(data)) + data
        return data

    value = decoder.decode(frame(8, nested(100), [0])).value
    for _ in range(100):
        value = value["next"]
    assert value == {"v": 1}
    error = decoder.decode(frame(8, nested(5000), [0])).error
    assert error.startswith("does not parse as Protobuf N under schema id 8 (subject nested v1)")


def _varint(value: int) -> bytes:
    out = bytearray()
    while value > 0x7F:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)
