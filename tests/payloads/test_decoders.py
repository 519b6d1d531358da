"""The entry point (runtime/payloads/decoders.py): kinds, the one-line errors, and that no
bytes make it raise or decode what was never framed.

Oracles: Confluent's own serializers (Avro, Protobuf, JSON Schema) write into one mock
registry, as three producers of one produced would; its deserializers read the same bytes.
Unframed records are the ones a topic without Schema Registry holds (plain text, JSON,
Kafka's own int and long serializers).
"""

from __future__ import annotations

import dataclasses
import json
import os
import pickle
import struct
from pathlib import Path
from typing import Any

import grpc_tools
import pytest
from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer
from confluent_kafka.schema_registry.json_schema import JSONDeserializer, JSONSerializer
from confluent_kafka.schema_registry.protobuf import ProtobufDeserializer, ProtobufSerializer
from confluent_kafka.serialization import MessageField, SerializationContext
from google.protobuf import descriptor_pb2, descriptor_pool, json_format, message_factory
from grpc_tools import protoc
from hypothesis import given, settings
from hypothesis import strategies as st

from kafka_format.runtime.payloads.decoders import (
    KINDS,
    Decoded,
    PayloadDecoder,
    payload_decoder,
)
from kafka_format.runtime.payloads.registry import (
    RegisteredSchema,
    SchemaReference,
    SchemaRegistryError,
    SchemaSource,
)
from kafka_format.runtime.payloads.wire import PayloadDecodeError, frame

CONF = {"use.deprecated.format": False}


class DictSource(SchemaSource):
    """Schemas held in a dict: the contract's lookups, nothing else."""

    def __init__(self, schemas: list[RegisteredSchema], description: str = "the test registry"):
        self.spec = "memory"
        self.description = description
        self.schemas = {(s.subject, s.version): s for s in schemas}
        self.contexts: list[str | None] = []

    def by_id(self, schema_id: int, *, context: str | None = None) -> RegisteredSchema | None:
        self.contexts.append(context)
        return next((s for s in self.schemas.values() if s.id == schema_id), None)

    def by_subject(self, subject: str, version: int | None = None) -> RegisteredSchema | None:
        if version is None:
            found = self.versions(subject)
            return found[-1] if found else None
        return self.schemas.get((subject, version))

    def versions(self, subject: str) -> list[RegisteredSchema]:
        return sorted(
            (s for s in self.schemas.values() if s.subject == subject), key=lambda s: s.version
        )

    def subjects(self) -> list[str]:
        return sorted({subject for subject, _ in self.schemas})


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
                    found.schema.schema_type or "AVRO",
                    found.schema.schema_str,
                    refs,
                )
            )
    return DictSource(schemas)


AVRO = {
    "type": "record",
    "name": "Click",
    "fields": [{"name": "url", "type": "string"}, {"name": "n", "type": "int"}],
}
PROTO = 'syntax = "proto3";\npackage ev;\nmessage View { string page = 1; int32 ms = 2; }\n'
JSON_SCHEMA = {"type": "object", "properties": {"user": {"type": "string"}}}


@dataclasses.dataclass
class Produced:
    """One registry, three producers: ids 1 (Avro), 2 (Protobuf), 3 (JSON Schema)."""

    source: DictSource
    avro: bytes
    protobuf: bytes
    json: bytes
    expected: dict[str, Any]


@pytest.fixture(scope="module")
def produced(tmp_path_factory) -> Produced:
    """One registry, three producers (not conftest's ``cluster``, which is a log dir)."""
    client = SchemaRegistryClient.new_client({"url": "mock://decoders"})
    clicks = SerializationContext("clicks", MessageField.VALUE)
    views = SerializationContext("views", MessageField.VALUE)
    users = SerializationContext("users", MessageField.VALUE)
    avro = AvroSerializer(client, json.dumps(AVRO))({"url": "/a", "n": 2}, clicks)

    root = tmp_path_factory.mktemp("proto")
    (root / "view.proto").write_text(PROTO)
    include = os.path.join(os.path.dirname(grpc_tools.__file__), "_proto")
    out = root / "set.pb"
    assert protoc.main(["protoc", f"-I{root}", f"-I{include}", f"--descriptor_set_out={out}",
                        "view.proto"]) == 0  # fmt: skip
    pool = descriptor_pool.DescriptorPool()
    for file in descriptor_pb2.FileDescriptorSet.FromString(Path(out).read_bytes()).file:
        pool.Add(file)
    View = message_factory.GetMessageClass(pool.FindMessageTypeByName("ev.View"))
    protobuf = ProtobufSerializer(View, client, CONF)(View(page="home", ms=40), views)
    json_data = JSONSerializer(json.dumps(JSON_SCHEMA), client)({"user": "ann"}, users)
    expected = {
        "avro": AvroDeserializer(client)(avro, clicks),
        "protobuf": json_format.MessageToDict(
            ProtobufDeserializer(View, CONF, client)(protobuf, views),
            preserving_proto_field_name=True,
        ),
        "json-schema": JSONDeserializer(None, schema_registry_client=client)(json_data, users),
    }
    return Produced(export(client), avro, protobuf, json_data, expected)


def test_kinds_and_the_factory():
    assert KINDS == ("avro", "protobuf", "json-schema", "schema-registry")
    source = DictSource([])
    assert isinstance(payload_decoder("avro", source), PayloadDecoder)
    with pytest.raises(SchemaRegistryError, match="unknown payload decoder 'xml': one of avro"):
        payload_decoder("xml", source)
    assert not hasattr(Decoded(None, None, None), "__dict__")  # slots


def test_schema_registry_kind_follows_each_ids_schema_type(produced):
    decoder = payload_decoder("schema-registry", produced.source)
    for data, kind, schema_id in [
        (produced.avro, "avro", 1),
        (produced.protobuf, "protobuf", 2),
        (produced.json, "json-schema", 3),
    ]:
        decoded = decoder.decode(data)
        assert decoded == Decoded(
            produced.expected[kind], schema_id, None, produced.source.by_id(schema_id)
        )
        assert payload_decoder(kind, produced.source).decode(data).value == produced.expected[kind]
    assert produced.expected["avro"] == {"url": "/a", "n": 2}
    assert produced.expected["protobuf"] == {"page": "home", "ms": 40}


def test_a_kind_refuses_ids_of_another_schema_type(produced):
    avro = payload_decoder("avro", produced.source)
    assert avro.decode(produced.protobuf).error == (
        "schema id 2 (subject views-value v1) has schema type PROTOBUF, not AVRO: "
        "read it as protobuf or schema-registry"
    )
    assert payload_decoder("protobuf", produced.source).decode(produced.json).error == (
        "schema id 3 (subject users-value v1) has schema type JSON, not PROTOBUF: "
        "read it as json-schema or schema-registry"
    )
    assert payload_decoder("json-schema", produced.source).decode(produced.avro).error == (
        "schema id 1 (subject clicks-value v1) has schema type AVRO, not JSON: "
        "read it as avro or schema-registry"
    )


def test_null_keys_and_tombstones():
    for kind in KINDS:
        assert payload_decoder(kind, DictSource([])).decode(None) == Decoded(None, None, None)
        assert payload_decoder(kind, DictSource([])).decode_to_json(None) is None


UNFRAMED = [
    (b"hello world", "magic byte 104, not 0 (Confluent wire format)"),
    (b'{"a": 1}', "magic byte 123, not 0 (Confluent wire format)"),
    (struct.pack(">q", 1), "8 bytes"),  # Kafka's LongSerializer: 0 first, id 0, then 3 bytes
    (struct.pack(">i", 7)[:3], "3 bytes, fewer than the 5 of Confluent wire format's header"),
    (b"", "0 bytes, fewer than the 5"),
    (b"\x01\x00\x00\x00\x01\x02\x06/a\x04", "magic byte 1, not 0 (Confluent wire format)"),
]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize(("data", "error"), UNFRAMED)
def test_unframed_records_are_never_values(produced, kind, data, error):
    decoded = payload_decoder(kind, produced.source).decode(data)
    assert decoded.value is None and decoded.error is not None
    if error != "8 bytes":
        assert decoded.error.startswith(error) and decoded.schema_id is None
    else:  # 00 00 00 00 | 00 00 00 01: id 0, which the registry never gives
        assert decoded.schema_id == 0
        assert decoded.error == "schema id 0 is not in the test registry"


def test_unknown_ids_name_the_source(produced):
    decoded = payload_decoder("schema-registry", produced.source).decode(frame(42, b"\x00"))
    assert decoded == Decoded(None, 42, "schema id 42 is not in the test registry")

    class Minimal:
        """The plain contract: by_id(schema_id) and a description, nothing else."""

        description = "a bare source"

        def by_id(self, schema_id: int) -> None:
            return None

    decoded = PayloadDecoder("avro", Minimal()).decode(frame(42, b""))  # type: ignore[arg-type]
    assert decoded.error == "schema id 42 not in a bare source"


def test_a_source_that_fails_is_an_error_line(produced):
    class Down(DictSource):
        def by_id(self, schema_id: int, *, context: str | None = None) -> None:
            raise SchemaRegistryError("http://registry:8081: connection refused")

    decoded = payload_decoder("avro", Down([])).decode(frame(1, b""))
    assert decoded.error == "schema id 1: http://registry:8081: connection refused"


def test_context_is_passed_to_the_source(produced):
    source = DictSource(list(produced.source.schemas.values()))
    payload_decoder("avro", source, context=".tenant").decode(produced.avro)
    payload_decoder("avro", source).decode(produced.avro)
    assert source.contexts == [".tenant", None]


def test_deleted_schemas_still_decode(produced):
    schemas = [
        dataclasses.replace(s, deleted=True) if s.id == 1 else s
        for s in produced.source.schemas.values()
    ]
    decoded = payload_decoder("avro", DictSource(schemas)).decode(produced.avro)
    assert decoded.value == {"url": "/a", "n": 2} and decoded.schema.deleted


def test_unknown_schema_types_are_an_error(produced):
    odd = RegisteredSchema(8, "odd", 1, "XML", "<schema/>", ())
    decoded = payload_decoder("schema-registry", DictSource([odd])).decode(frame(8, b"<a/>"))
    assert decoded.error == (
        "schema id 8 (subject odd v1) has schema type 'XML', which no decoder here reads"
    )


def test_a_decoder_pickles_as_what_it_was_made_from(produced):
    decoder = payload_decoder("schema-registry", produced.source, context=".c", validate_json=True)
    decoder.decode(produced.protobuf)  # compiled here; only kind and source travel
    copy = pickle.loads(pickle.dumps(decoder))
    assert (copy.kind, copy.context) == ("schema-registry", ".c")
    assert copy.decode(produced.protobuf).value == {"page": "home", "ms": 40}
    assert copy.decode(produced.json).value == {"user": "ann"}


def test_bytes_like_inputs(produced):
    decoder = payload_decoder("schema-registry", produced.source)
    for data in (bytearray(produced.avro), memoryview(produced.avro)):
        assert decoder.decode(data).value == {"url": "/a", "n": 2}


def test_protobuf_long_form_of_the_first_message(produced):
    """Count 1, index 0: the same message as the one-byte [0]."""
    payload = produced.protobuf[6:]
    long_form = produced.protobuf[:5] + b"\x02\x00" + payload
    decoder = payload_decoder("protobuf", produced.source)
    assert decoder.decode(long_form).value == decoder.decode(produced.protobuf).value


def test_decode_to_json(produced):
    decoder = payload_decoder("schema-registry", produced.source)
    assert decoder.decode_to_json(produced.avro) == '{"url":"/a","n":2}'
    assert decoder.decode_to_json(produced.json) == '{"user":"ann"}'
    with pytest.raises(PayloadDecodeError, match=r"^magic byte 104"):
        decoder.decode_to_json(b"hello")


def test_a_decoder_bug_is_still_one_line(produced, monkeypatch):
    decoder = payload_decoder("avro", produced.source)

    def broken(schema, payload):
        raise RuntimeError("surprise\nover two lines")

    monkeypatch.setattr(decoder._avro, "decode", broken)
    assert decoder.decode(produced.avro).error == (
        "could not decode under schema id 1 (subject clicks-value v1): "
        "RuntimeError: surprise over two lines"
    )


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(KINDS), st.integers(0, 4), st.binary(max_size=24))
def test_no_bytes_make_decode_raise(kind, schema_id, payload):
    decoder = _DECODERS[kind]
    for data in (frame(schema_id, payload), payload):
        decoded = decoder.decode(data)
        assert (decoded.value is None) or decoded.error is None
        if decoded.error is not None:
            assert "\n" not in decoded.error


_DECODERS: dict[str, PayloadDecoder] = {}


@pytest.fixture(scope="module", autouse=True)
def _decoders(produced):
    """The hypothesis test's decoders, over the produced's registry (module-scoped: hypothesis
    runs many examples per call)."""
    _DECODERS.update({kind: payload_decoder(kind, produced.source) for kind in KINDS})
