"""Avro payloads (runtime/payloads/avro.py) through the entry point (decoders.py).

Oracles:

* Confluent's own ``AvroSerializer`` writes every payload, into its mock registry, whose
  schemas are then read through an in-test :class:`SchemaSource`; Confluent's
  ``AvroDeserializer`` reads the same bytes, and its values (fastavro's: ``Decimal``,
  ``date``, ``datetime``, ``UUID``, ``bytes``) are turned into the JSON form here by
  :func:`confluent_json`, written from the choices of the module's docstring, not from its
  code;
* literal expectations worked out by hand for those choices (Java's ``Instant.toString``
  for timestamps: ``Instant.ofEpochMilli(1714564800123L)`` is ``2024-05-01T12:00:00.123Z``);
* hand-made datums, byte by byte, for what no serializer writes (damage, values out of the
  range of ISO text, nesting deeper than the reader follows).
"""

from __future__ import annotations

import base64
import datetime as dt
import json
import time
import uuid
from decimal import Context, Decimal
from typing import Any

from confluent_kafka.schema_registry import Schema, SchemaRegistryClient
from confluent_kafka.schema_registry import SchemaReference as ConfluentReference
from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer
from confluent_kafka.serialization import MessageField, SerializationContext
from hypothesis import given, settings
from hypothesis import strategies as st

from kafka_format.runtime.payloads import avro as avro_module
from kafka_format.runtime.payloads.decoders import payload_decoder
from kafka_format.runtime.payloads.encode import MemorySchemaSource
from kafka_format.runtime.payloads.registry import RegisteredSchema, SchemaReference
from kafka_format.runtime.payloads.wire import frame

CTX = SerializationContext("orders", MessageField.VALUE)
_clients = iter(range(1_000_000))


class DictSource(MemorySchemaSource):
    """The runtime's in-memory source, named in errors as the tests expect."""

    def __init__(self, schemas: list[RegisteredSchema], description: str = "the test registry"):
        super().__init__(schemas)
        self.description = description


def _version(schema: RegisteredSchema) -> int:
    return schema.version


def export(client: Any) -> DictSource:
    """Every version the mock registry holds, as the registry's ``_schemas`` would list it."""
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
                    found.schema.schema_type or "AVRO",
                    found.schema.schema_str,
                    refs,
                )
            )
    return DictSource(schemas)


def new_client() -> Any:
    return SchemaRegistryClient.new_client({"url": f"mock://avro-{next(_clients)}"})


def _fraction(micros: int) -> str:
    if micros == 0:
        return ""
    return f".{micros // 1000:03d}" if micros % 1000 == 0 else f".{micros:06d}"


def confluent_json(value: Any) -> Any:
    """What Confluent's deserializer returns, in the JSON form the module documents."""
    if isinstance(value, dict):
        return {k: confluent_json(v) for k, v in value.items()}
    if isinstance(value, list):
        return [confluent_json(v) for v in value]
    if isinstance(value, bytes):
        return base64.b64encode(value).decode()
    if isinstance(value, Decimal):
        return format(value, "f")
    if isinstance(value, dt.datetime):
        zone = ""
        if value.tzinfo is not None:
            value, zone = value.astimezone(dt.UTC).replace(tzinfo=None), "Z"
        whole = value.replace(microsecond=0).isoformat()  # strftime does not pad year 999
        return whole + _fraction(value.microsecond) + zone
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, dt.time):
        return value.strftime("%H:%M:%S") + _fraction(value.microsecond)
    if isinstance(value, uuid.UUID):
        return str(value)
    return value


def write_and_read(client: Any, schema: Schema | str, values: list[Any], **conf: Any) -> list:
    """Each value written by Confluent's serializer: (bytes, Confluent's reading as JSON)."""
    serializer = AvroSerializer(client, schema, conf=conf or None)
    deserializer = AvroDeserializer(client)
    out = []
    for value in values:
        data = serializer(value, CTX)
        out.append((data, confluent_json(deserializer(data, CTX))))
    return out


RICH = {
    "type": "record",
    "name": "Order",
    "namespace": "com.acme",
    "fields": [
        {"name": "id", "type": "long"},
        {"name": "note", "type": ["null", "string", "long"]},
        {
            "name": "line",
            "type": [
                "null",
                {"type": "record", "name": "Line", "fields": [{"name": "sku", "type": "string"}]},
            ],
        },
        {"name": "status", "type": {"type": "enum", "name": "Status", "symbols": ["NEW", "PAID"]}},
        {"name": "attrs", "type": {"type": "map", "values": {"type": "array", "items": "int"}}},
        {"name": "lines", "type": {"type": "array", "items": "Line"}},
        {"name": "raw", "type": "bytes"},
        {"name": "hash", "type": {"type": "fixed", "name": "Hash", "size": 4}},
        {
            "name": "price",
            "type": {"type": "bytes", "logicalType": "decimal", "precision": 12, "scale": 3},
        },
        {
            "name": "tax",
            "type": {
                "type": "fixed",
                "name": "Tax",
                "size": 8,
                "logicalType": "decimal",
                "precision": 10,
                "scale": 8,
            },
        },
        {"name": "day", "type": {"type": "int", "logicalType": "date"}},
        {"name": "at_ms", "type": {"type": "long", "logicalType": "timestamp-millis"}},
        {"name": "at_us", "type": {"type": "long", "logicalType": "timestamp-micros"}},
        {"name": "local", "type": {"type": "long", "logicalType": "local-timestamp-millis"}},
        {"name": "clock", "type": {"type": "int", "logicalType": "time-millis"}},
        {"name": "clock_us", "type": {"type": "long", "logicalType": "time-micros"}},
        {"name": "uid", "type": {"type": "string", "logicalType": "uuid"}},
        {"name": "maybe_at", "type": ["null", {"type": "long", "logicalType": "timestamp-millis"}]},
        {"name": "ratio", "type": "double"},
        {"name": "ok", "type": "boolean"},
    ],
}
UTC = dt.UTC
FIRST = {
    "id": 1,
    "note": "first",
    "line": {"sku": "A-1"},
    "status": "PAID",
    "attrs": {"a": [1, 2], "b": []},
    "lines": [{"sku": "x"}, {"sku": "y"}],
    "raw": b"\x00\xffhi",
    "hash": b"\xde\xad\xbe\xef",
    "price": Decimal("-12.345"),
    "tax": Decimal("0.00000123"),
    "day": dt.date(2024, 5, 1),
    "at_ms": dt.datetime(2024, 5, 1, 12, 0, 0, 123000, tzinfo=UTC),
    "at_us": dt.datetime(2024, 5, 1, 12, 0, 0, 123456, tzinfo=UTC),
    "local": dt.datetime(2024, 5, 1, 12, 0, 0),
    "clock": dt.time(12, 30, 5, 250000),
    "clock_us": dt.time(0, 0, 0, 1),
    "uid": "12345678-1234-5678-1234-567812345678",
    "maybe_at": dt.datetime(1969, 12, 31, 23, 59, 59, 999000, tzinfo=UTC),
    "ratio": 0.5,
    "ok": True,
}
SECOND = {
    **FIRST,
    "id": -(1 << 62),
    "note": None,
    "line": None,
    "status": "NEW",
    "attrs": {},
    "lines": [],
    "raw": b"",
    "price": Decimal("0.000"),
    "tax": Decimal("-0.99999999"),
    "day": dt.date(1, 1, 1),
    "at_ms": dt.datetime(1970, 1, 1, tzinfo=UTC),
    "maybe_at": None,
    "ratio": -1e300,
    "ok": False,
}


def test_rich_record_decodes_as_confluents_deserializer_reads_it():
    client = new_client()
    written = write_and_read(client, json.dumps(RICH), [FIRST, SECOND, {**FIRST, "note": 7}])
    decoder = payload_decoder("avro", export(client))
    for data, expected in written:
        decoded = decoder.decode(data)
        assert decoded.error is None, decoded.error
        assert decoded.value == expected
        assert decoded.schema_id == 1 and decoded.schema.subject == "orders-value"
        json.dumps(decoded.value)  # JSON-ready
    first = decoder.decode(written[0][0]).value
    # The documented choices, by hand.
    assert first["note"] == "first" and first["line"] == {"sku": "A-1"}  # unions unwrapped
    assert first["status"] == "PAID"
    assert first["raw"] == "AP9oaQ==" and first["hash"] == "3q2+7w=="
    assert first["price"] == "-12.345" and first["tax"] == "0.00000123"
    assert first["day"] == "2024-05-01"
    assert first["at_ms"] == "2024-05-01T12:00:00.123Z"
    assert first["at_us"] == "2024-05-01T12:00:00.123456Z"
    assert first["local"] == "2024-05-01T12:00:00"
    assert first["clock"] == "12:30:05.250" and first["clock_us"] == "00:00:00.000001"
    assert first["uid"] == "12345678-1234-5678-1234-567812345678"
    assert first["maybe_at"] == "1969-12-31T23:59:59.999Z"
    second = decoder.decode(written[1][0]).value
    assert second["price"] == "0.000" and second["day"] == "0001-01-01"
    assert second["at_ms"] == "1970-01-01T00:00:00Z"
    assert second["note"] is None and second["line"] is None
    assert decoder.decode(written[2][0]).value["note"] == 7


def test_references_to_other_subjects_types():
    """Named types from referenced subjects (a chain: Order -> Address -> Country), parsed
    first into one set of names, as AvroSchemaProvider does."""
    client = new_client()
    country = {"type": "enum", "name": "Country", "namespace": "geo", "symbols": ["FR", "DE"]}
    address = {
        "type": "record",
        "name": "Address",
        "namespace": "geo",
        "fields": [{"name": "city", "type": "string"}, {"name": "country", "type": "Country"}],
    }
    client.register_schema("country", Schema(json.dumps(country), "AVRO"))
    client.register_schema(
        "address",
        Schema(json.dumps(address), "AVRO", [ConfluentReference("geo.Country", "country", 1)]),
    )
    order = {
        "type": "record",
        "name": "Order",
        "namespace": "shop",
        "fields": [
            {"name": "ship_to", "type": "geo.Address"},
            {"name": "bill_to", "type": ["null", "geo.Address"]},
        ],
    }
    schema = Schema(json.dumps(order), "AVRO", [ConfluentReference("geo.Address", "address", 1)])
    client.register_schema("orders-value", schema)
    values = [
        {"ship_to": {"city": "Paris", "country": "FR"}, "bill_to": None},
        {
            "ship_to": {"city": "Bonn", "country": "DE"},
            "bill_to": {"city": "Lyon", "country": "FR"},
        },
    ]
    written = write_and_read(
        client, schema, values, **{"auto.register.schemas": False, "use.latest.version": True}
    )
    decoder = payload_decoder("schema-registry", export(client))
    for (data, expected), value in zip(written, values, strict=True):
        assert decoder.decode(data).value == expected == value


def test_top_level_union_and_primitive_schemas():
    """A schema that is a union of a referenced name, or a primitive with a logical type."""
    client = new_client()
    point = {"type": "record", "name": "Point", "fields": [{"name": "x", "type": "int"}]}
    client.register_schema("point", Schema(json.dumps(point), "AVRO"))
    union = Schema(json.dumps(["null", "Point"]), "AVRO", [ConfluentReference("Point", "point", 1)])
    client.register_schema("orders-value", union)
    conf = {"auto.register.schemas": False, "use.latest.version": True}
    written = write_and_read(client, union, [{"x": 3}, None], **conf)
    decoder = payload_decoder("avro", export(client))
    assert decoder.decode(written[0][0]).value == {"x": 3} == written[0][1]
    # Confluent's serializer writes no payload at all for None (a tombstone).
    assert written[1][0] is None and decoder.decode(None).value is None

    client = new_client()
    stamp = json.dumps({"type": "long", "logicalType": "timestamp-millis"})
    moment = dt.datetime(2024, 5, 1, 12, 0, 0, 123000, tzinfo=UTC)
    ((data, expected),) = write_and_read(client, stamp, [moment])
    assert payload_decoder("avro", export(client)).decode(data).value == expected
    assert expected == "2024-05-01T12:00:00.123Z"


def test_old_ids_decode_with_their_own_schema():
    """Schema evolution: a record written under version 1 decodes with version 1's schema,
    one written under version 2 with version 2's, whichever is latest."""
    client = new_client()
    v1 = {"type": "record", "name": "User", "fields": [{"name": "id", "type": "int"}]}
    v2 = {
        "type": "record",
        "name": "User",
        "fields": [
            {"name": "id", "type": "int"},
            {"name": "email", "type": ["null", "string"], "default": None},
        ],
    }
    ((old, old_expected),) = write_and_read(client, json.dumps(v1), [{"id": 1}])
    ((new, new_expected),) = write_and_read(client, json.dumps(v2), [{"id": 2, "email": "a@b"}])
    source = export(client)
    assert [s.version for s in source.versions("orders-value")] == [1, 2]
    decoder = payload_decoder("schema-registry", source)
    first, second = decoder.decode(old), decoder.decode(new)
    assert (first.schema_id, first.value) == (1, {"id": 1}) and first.value == old_expected
    assert (
        (second.schema_id, second.value)
        == (2, {"id": 2, "email": "a@b"})
        == (
            2,
            new_expected,
        )
    )
    assert first.schema.version == 1 and second.schema.version == 2


# --- hand-made datums ----------------------------------------------------------------------


def zigzag(value: int) -> bytes:
    raw = (value << 1) ^ (value >> 63)
    out = bytearray()
    while raw > 0x7F:
        out.append(raw & 0x7F | 0x80)
        raw >>= 7
    out.append(raw)
    return bytes(out)


def one_schema(schema: Any, schema_id: int = 7) -> Any:
    registered = RegisteredSchema(schema_id, "t-value", 3, "AVRO", json.dumps(schema), ())
    return payload_decoder("avro", DictSource([registered]))


def test_damaged_datums_are_errors_naming_the_schema():
    client = new_client()
    ((data, _),) = write_and_read(client, json.dumps(RICH), [FIRST])
    decoder = payload_decoder("avro", export(client))
    for cut in range(5, len(data)):
        decoded = decoder.decode(data[:cut])
        assert decoded.value is None and decoded.schema_id == 1, cut
        assert decoded.error.startswith(
            "does not parse as Avro under schema id 1 (subject orders-value v1): "
        ), decoded.error
        assert "\n" not in decoded.error
    assert "the datum ends early" in decoder.decode(data[:-1]).error
    decoded = decoder.decode(data + b"\x00\x01")
    assert decoded.error == (
        "does not parse as Avro under schema id 1 (subject orders-value v1): 2 bytes after "
        f"the datum (it ends at byte {len(data) - 5} of the {len(data) - 3} after the header)"
    )


def test_union_and_enum_indexes_out_of_range():
    decoder = one_schema(["null", "int"])
    assert decoder.decode(frame(7, zigzag(1) + zigzag(5))).value == 5
    error = decoder.decode(frame(7, zigzag(2) + zigzag(5))).error
    assert "schema id 7 (subject t-value v3)" in error and "out of range" in error
    decoder = one_schema({"type": "enum", "name": "E", "symbols": ["A"]})
    assert decoder.decode(frame(7, zigzag(0))).value == "A"
    assert decoder.decode(frame(7, zigzag(3))).error is not None


def test_logical_values_without_iso_text_are_their_underlying_values():
    record = {
        "type": "record",
        "name": "R",
        "fields": [
            {"name": "day", "type": {"type": "int", "logicalType": "date"}},
            {"name": "at", "type": {"type": "long", "logicalType": "timestamp-millis"}},
            {"name": "clock", "type": {"type": "int", "logicalType": "time-millis"}},
            {"name": "uid", "type": {"type": "string", "logicalType": "uuid"}},
            {"name": "bad", "type": {"type": "bytes", "logicalType": "decimal"}},  # no precision
            {"name": "wrong", "type": {"type": "long", "logicalType": "date"}},  # not on a long
            {"name": "ns", "type": {"type": "long", "logicalType": "timestamp-nanos"}},
            {"name": "lns", "type": {"type": "long", "logicalType": "local-timestamp-nanos"}},
            {
                "name": "fid",
                "type": {"type": "fixed", "name": "U", "size": 16, "logicalType": "uuid"},
            },
        ],
    }
    datum = (
        zigzag(3_000_000)  # a day past 9999-12-31
        + zigzag(10**15)  # year 33658
        + zigzag(90_000_000)  # 25:00
        + zigzag(3)
        + b"abc"  # no UUID: still the string written
        + zigzag(2)
        + b"\x01\x02"
        + zigzag(5)
        + zigzag(1_714_564_800_123_456_789)
        + zigzag(-1)
        + uuid.UUID(int=1).bytes
    )
    assert one_schema(record).decode(frame(7, datum)).value == {
        "day": 3_000_000,
        "at": 10**15,
        "clock": 90_000_000,
        "uid": "abc",
        "bad": "AQI=",
        "wrong": 5,
        "ns": "2024-05-01T12:00:00.123456789Z",
        "lns": "1969-12-31T23:59:59.999999999",
        "fid": "00000000-0000-0000-0000-000000000001",
    }


def test_recursive_schema_nesting_is_bounded():
    """A linked list: nesting that fastavro's compiled reader follows is decoded as Confluent
    reads it; nesting past MAX_DEPTH is an error, not a crash of the process (fastavro
    overflows the C stack at a few thousand levels)."""
    node = {
        "type": "record",
        "name": "Node",
        "fields": [{"name": "v", "type": "int"}, {"name": "next", "type": ["null", "Node"]}],
    }
    client = new_client()
    value: Any = None
    for i in range(150):
        value = {"v": i, "next": value}
    ((data, expected),) = write_and_read(client, json.dumps(node), [value])
    decoder = payload_decoder("avro", export(client))
    assert decoder.decode(data).value == expected
    deep = zigzag(0) + (zigzag(1) + zigzag(0)) * 100_000 + zigzag(0)
    decoded = decoder.decode(frame(1, deep))
    assert decoded.value is None
    assert f"nested more than {avro_module.MAX_DEPTH} levels deep" in decoded.error


def test_arrays_of_items_without_bytes_are_bounded():
    """``[null]`` arrays: Confluent's count is read as written, up to the bound; a 10-byte
    count asking for 2**62 items is an error at once, not a list built for minutes."""
    client = new_client()
    schema = json.dumps({"type": "array", "items": "null"})
    ((data, expected),) = write_and_read(client, schema, [[None] * 1000])
    decoder = payload_decoder("avro", export(client))
    assert decoder.decode(data).value == expected == [None] * 1000
    started = time.monotonic()
    decoded = decoder.decode(frame(1, zigzag(1 << 62) + zigzag(0)))
    assert time.monotonic() - started < 1
    assert "items that take no bytes" in decoded.error
    empty = {"type": "record", "name": "Empty", "fields": []}
    outer = {"type": "array", "items": empty}
    assert "no bytes" in one_schema(outer).decode(frame(7, zigzag(10**9) + b"\x00")).error
    assert one_schema(outer).decode(frame(7, zigzag(2) + b"\x00")).value == [{}, {}]


def test_unusable_schemas_and_references():
    bad = RegisteredSchema(4, "bad-value", 1, "AVRO", "{not json", ())
    undefined = RegisteredSchema(5, "undef-value", 2, "AVRO", json.dumps(["null", "Nope"]), ())
    missing = RegisteredSchema(
        6, "m-value", 1, "AVRO", json.dumps("geo.Address"), (SchemaReference("geo.A", "geo", 9),)
    )
    decoder = payload_decoder("avro", DictSource([bad, undefined, missing]))
    error = decoder.decode(frame(4, b"\x00")).error
    assert error.startswith("schema id 4 (subject bad-value v1) is no usable Avro schema: ")
    assert decoder.decode(frame(4, b"\x00")).error == error  # remembered, one line
    assert "schema id 5 (subject undef-value v2) is no usable Avro schema" in (
        decoder.decode(frame(5, b"\x00")).error
    )
    assert decoder.decode(frame(6, b"\x00")).error == (
        "schema id 6 (subject m-value v1) refers to geo.A (subject geo v9), which is not in "
        "the test registry"
    )


def test_invalid_defaults_do_not_stop_decoding():
    """Defaults play no part in reading with the writer's schema."""
    schema = {
        "type": "record",
        "name": "R",
        "fields": [{"name": "n", "type": "int", "default": "not an int"}],
    }
    assert one_schema(schema).decode(frame(7, zigzag(-3))).value == {"n": -3}


# --- properties ----------------------------------------------------------------------------

STAMPS = {
    "type": "record",
    "name": "Stamps",
    "fields": [
        {"name": "ms", "type": {"type": "long", "logicalType": "timestamp-millis"}},
        {"name": "us", "type": {"type": "long", "logicalType": "timestamp-micros"}},
        {"name": "day", "type": {"type": "int", "logicalType": "date"}},
        {
            "name": "d",
            "type": {"type": "bytes", "logicalType": "decimal", "precision": 30, "scale": 9},
        },
    ],
}
_EPOCH = dt.datetime(1970, 1, 1, tzinfo=UTC)
_MIN_US = (dt.datetime(1, 1, 1, tzinfo=UTC) - _EPOCH) // dt.timedelta(microseconds=1)
_MAX_US = (dt.datetime(9999, 12, 31, 23, 59, 59, tzinfo=UTC) - _EPOCH) // dt.timedelta(
    microseconds=1
)


# One registry (and decoder) for every example: the schema is registered before it is read.
_STAMP_CLIENT = new_client()
_STAMP_CLIENT.register_schema("orders-value", Schema(json.dumps(STAMPS), "AVRO"))
_STAMP_DECODER = payload_decoder("avro", export(_STAMP_CLIENT))
_RICH_CLIENT = new_client()
_RICH_CLIENT.register_schema("orders-value", Schema(json.dumps(RICH), "AVRO"))
_RICH_DECODER = payload_decoder("avro", export(_RICH_CLIENT))


@settings(max_examples=150, deadline=None)
@given(
    st.integers(_MIN_US // 1000, _MAX_US // 1000),
    st.integers(_MIN_US, _MAX_US),
    st.integers(-719162, 2932896),
    st.integers(-(10**30) + 1, 10**30 - 1),
)
def test_logical_values_match_confluents_reading(ms, us, day, unscaled):
    """Any in-range value: what Confluent's deserializer reads, in the documented text."""
    value = {
        "ms": _EPOCH + dt.timedelta(milliseconds=ms),
        "us": _EPOCH + dt.timedelta(microseconds=us),
        "day": dt.date(1970, 1, 1) + dt.timedelta(days=day),
        "d": Decimal(unscaled).scaleb(-9, Context(prec=40)),  # exact: no rounding to 28 digits
    }
    ((data, expected),) = write_and_read(_STAMP_CLIENT, json.dumps(STAMPS), [value])
    assert _STAMP_DECODER.decode(data).value == expected


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=40))
def test_any_bytes_decode_or_say_why(payload):
    """Arbitrary bytes under a rich schema: a value or one line, never a raise."""
    decoded = _RICH_DECODER.decode(frame(1, payload))
    assert decoded.schema_id == 1
    if decoded.error is not None:
        assert decoded.value is None
        assert "\n" not in decoded.error
