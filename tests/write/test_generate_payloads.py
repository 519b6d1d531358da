"""``generate``'s payload topics and ``_schemas`` partition (``runtime/write/generate_payloads``,
``runtime/payloads/encode``), checked against independent oracles.

* The registry's store replays (``payloads.registry.open_schema_source``) to the subjects,
  versions and ids the generator registered; its keys and values are laid out as the
  registry's Jackson classes write them, one record a batch from an idempotent producer.
* Every framed value decodes with Confluent's own deserializers to the value the generator
  framed: ``AvroDeserializer`` and ``JSONDeserializer`` through Confluent's mock registry,
  given the same schemas in the same order (so it gives the same ids); ``ProtobufDeserializer``
  with a class compiled here by protoc, apart from the project's Protobuf decoder.
* Evolution holds: in each partition the ids never go back (the canary and plain records
  aside), each schema is registered before its first record, ids in registration order.
* The plain records (a console producer's, a legacy tracker's) are JSON, not framed, and the
  project's decoder says so rather than decode them.
* Same seed, same bytes; the other topics' bytes are the same with and without payloads.
"""

from __future__ import annotations

import collections
import importlib.resources
import json
import math
import pickle
from pathlib import Path
from types import SimpleNamespace

import pytest
from confluent_kafka.schema_registry import Schema, SchemaRegistryClient
from confluent_kafka.schema_registry import SchemaReference as ConfluentReference
from confluent_kafka.schema_registry.avro import AvroDeserializer
from confluent_kafka.schema_registry.json_schema import JSONDeserializer
from confluent_kafka.schema_registry.protobuf import ProtobufDeserializer
from confluent_kafka.serialization import MessageField, SerializationContext
from google.protobuf import descriptor_pb2, descriptor_pool, json_format, message_factory
from grpc_tools import protoc

import kafka_format as kf
from kafka_format.runtime.cli import main
from kafka_format.runtime.payloads.decoders import payload_decoder
from kafka_format.runtime.payloads.encode import (
    MemorySchemaSource,
    encode,
    encode_avro,
    encode_json,
    encode_protobuf,
)
from kafka_format.runtime.payloads.protobuf import ProtobufDecoder
from kafka_format.runtime.payloads.registry import (
    RegisteredSchema,
    StoreSchemaSource,
    open_schema_source,
)
from kafka_format.runtime.payloads.registry_store import SCHEMAS_TOPIC as STORE_TOPIC
from kafka_format.runtime.payloads.wire import PayloadDecodeError
from kafka_format.runtime.write.generate import EXPECTED_FILE, TOPIC_KINDS, generate_log_dir
from kafka_format.runtime.write.generate_payloads import (
    PAYLOAD_TOPICS,
    SCHEMAS_TOPIC,
    PayloadRegistry,
)

PAYLOADS = list(PAYLOAD_TOPICS)
RECORDS = 150
CANARY_PRODUCER = 7290
#: What the module's docstring promises: (subject, version, type) by id, and which is deleted.
PLANNED = {
    1: ("address.proto", 1, "PROTOBUF"),
    2: ("customers-value", 1, "PROTOBUF"),
    3: ("payments-value", 1, "AVRO"),
    4: ("pageviews-value", 1, "JSON"),
    5: ("payments-value", 2, "AVRO"),
    6: ("customers-value", 2, "PROTOBUF"),
    7: ("pageviews-value", 2, "JSON"),
    8: ("payments-value", 3, "AVRO"),
    9: ("pageviews-value", 3, "JSON"),
}
SOFT_DELETED = 9
IDS_BY_TOPIC = {"payments": [3, 5, 8], "customers": [2, 6], "pageviews": [4, 7]}


@pytest.fixture(scope="module")
def generated(tmp_path_factory) -> SimpleNamespace:
    root = tmp_path_factory.mktemp("payloads") / "logs"
    result = generate_log_dir(root, seed=7, topics=PAYLOADS, records=RECORDS)
    return SimpleNamespace(root=root, result=result)


def store_records(root: Path) -> list:
    return list(kf.iter_records(root / f"{SCHEMAS_TOPIC}-0"))


def partitions_of(root: Path, topic: str) -> list[Path]:
    return sorted(root.glob(f"{topic}-[0-9]*"))


# --- the registry's store -------------------------------------------------------------------


def test_the_store_replays_to_the_registered_schemas(generated):
    root, result = generated.root, generated.result
    source = open_schema_source(None, log_dir=root)
    assert isinstance(source, StoreSchemaSource)
    assert source.problems == []  # every record is one the registry itself reads
    others = max(3, RECORDS // 8)
    assert [e["id"] for e in result.schemas] == list(range(1, len(PLANNED) + others + 1))
    for entry in result.schemas:
        schema = source.by_id(entry["id"])
        assert schema is not None, entry
        got = (schema.subject, schema.version, schema.schema_type, schema.deleted)
        assert got == (entry["subject"], entry["version"], entry["schemaType"], entry["deleted"])
        if entry["id"] in PLANNED:
            assert PLANNED[entry["id"]] == got[:3]
    assert [e["id"] for e in result.schemas if e["deleted"]] == [SOFT_DELETED]
    # the referenced .proto is its own subject, found by the reference's name
    customers = source.by_subject("customers-value")
    assert customers is not None and customers.version == 2
    (ref,) = customers.references
    assert (ref.name, ref.subject, ref.version) == ("address.proto", "address.proto", 1)
    assert source.reference(ref, customers).id == 1
    # the soft-deleted version is no subject's latest, but still resolves by id
    assert source.by_subject("pageviews-value").version == 2
    assert [s.version for s in source.versions("pageviews-value")] == [1, 2, 3]
    assert source.by_id(SOFT_DELETED).deleted
    assert {"payments-value", "customers-value", "pageviews-value"} <= set(source.subjects())
    manifest = json.loads((root / EXPECTED_FILE).read_text())
    assert manifest["schemas"] == result.schemas
    assert SCHEMAS_TOPIC == STORE_TOPIC


def test_the_store_is_laid_out_as_the_registry_writes_it(generated):
    """Jackson's field orders (``SchemaKey``, ``SchemaValue``, ``ConfigKey``), NOOPs with a
    null value, one record a batch from idempotent producers, offsets in time order."""
    root = generated.root
    batches = list(kf.iter_batches(root / f"{SCHEMAS_TOPIC}-0"))
    assert all(b.records_count == 1 and b.producer_id >= 0 for b in batches)
    assert len({b.producer_id for b in batches}) == 2  # a restart: a new producer id
    records = store_records(root)
    assert [r.timestamp for r in records] == sorted(r.timestamp for r in records)
    kinds = collections.Counter()
    for r in records:
        key = json.loads(r.key)
        kinds[key["keytype"]] += 1
        if key["keytype"] == "NOOP":
            assert (r.key, r.value) == (b'{"keytype":"NOOP","magic":0}', None)
        elif key["keytype"] == "CONFIG":
            assert r.key == b'{"keytype":"CONFIG","magic":0}'
            assert r.value == b'{"compatibilityLevel":"BACKWARD"}'
        else:
            assert list(key) == ["keytype", "subject", "version", "magic"] and key["magic"] == 1
            value = json.loads(r.value)
            order = ["subject", "version", "id", "schemaType", "references", "schema", "deleted"]
            assert list(value) == [f for f in order if f in value]
            assert "schemaType" in value or json.loads(value["schema"])["type"] == "record"
            assert (value["subject"], value["version"]) == (key["subject"], key["version"])
            assert r.value == json.dumps(value, separators=(",", ":")).encode()
    assert kinds["NOOP"] == 2 and kinds["CONFIG"] == 1
    # every schema once, the soft-deleted one again with "deleted":true
    assert kinds["SCHEMA"] == len(generated.result.schemas) + 1


def test_each_schema_is_registered_before_its_first_record(generated):
    root = generated.root
    registered: dict[int, int] = {}
    order = []
    for r in store_records(root):
        if r.value is not None and b'"keytype":"SCHEMA"' in r.key:
            value = json.loads(r.value)
            if not value["deleted"]:
                registered[value["id"]] = r.timestamp
                order.append(value["id"])
    assert order == sorted(order)  # ids in registration order
    first_use: dict[int, int] = {}
    for topic in PAYLOADS:
        for part in partitions_of(root, topic):
            for r in kf.iter_records(part):
                if r.value[:1] == b"\x00":
                    schema_id = int.from_bytes(r.value[1:5], "big")
                    first_use[schema_id] = min(first_use.get(schema_id, r.timestamp), r.timestamp)
    assert set(first_use) == set(PLANNED) - {1}  # address.proto is only imported
    for schema_id, used in first_use.items():
        assert registered[schema_id] < used, schema_id
    assert registered[1] < registered[2]  # the reference before its referrer


# --- the payloads ---------------------------------------------------------------------------


def confluent_registry(schemas: list[dict], source) -> SchemaRegistryClient:
    """Confluent's mock registry given the same schemas in the same order: it numbers them
    1, 2, ... as the generator's registry did (checked)."""
    client = SchemaRegistryClient.new_client({"url": f"mock://generate-{id(schemas)}"})
    for entry in schemas:
        schema = source.by_id(entry["id"])
        refs = [ConfluentReference(r.name, r.subject, r.version) for r in schema.references]
        given = Schema(schema.schema, schema.schema_type, refs)
        assert client.register_schema(schema.subject, given) == schema.id
    return client


def protobuf_class(source, schema_id: int, tmp: Path):
    """The first message of a registered .proto, compiled by protoc here (its imports from
    the store, the well-known types from grpc_tools) into a pool of its own."""
    schema = source.by_id(schema_id)
    folder = tmp / f"proto-{schema_id}"
    folder.mkdir()
    for ref in schema.references:
        (folder / ref.name).write_text(source.reference(ref, schema).schema)
    (folder / "main.proto").write_text(schema.schema)
    out = folder / "set.pb"
    include = importlib.resources.files("grpc_tools") / "_proto"
    args = ["protoc", f"-I{folder}", f"-I{include}", "--include_imports"]
    assert protoc.main([*args, f"--descriptor_set_out={out}", str(folder / "main.proto")]) == 0
    files = descriptor_pb2.FileDescriptorSet.FromString(out.read_bytes()).file
    pool = descriptor_pool.DescriptorPool()
    for file in files:
        pool.Add(file)
    main_file = next(f for f in files if f.name == "main.proto")
    name = f"{main_file.package}.{main_file.message_type[0].name}"
    return message_factory.GetMessageClass(pool.FindMessageTypeByName(name))


def test_every_framed_value_decodes_with_confluents_deserializers(generated, tmp_path):
    root, result = generated.root, generated.result
    source = open_schema_source(None, log_dir=root)
    client = confluent_registry(result.schemas, source)
    avro = AvroDeserializer(client)
    json_schema = JSONDeserializer(None, schema_registry_client=client)
    classes = {i: protobuf_class(source, i, tmp_path) for i in IDS_BY_TOPIC["customers"]}
    decoded = collections.Counter()
    for topic in PAYLOADS:
        ctx = SerializationContext(topic, MessageField.VALUE)
        for part in partitions_of(root, topic):
            meant = result.payloads[part.name]
            records = list(kf.iter_records(part))
            assert {r.offset for r in records} == set(meant)
            for r in records:
                m = meant[r.offset]
                if m.schema_id is None:
                    continue
                assert r.value[:5] == b"\x00" + m.schema_id.to_bytes(4, "big")
                if topic == "payments":
                    assert avro(r.value, ctx) == m.value, (part.name, r.offset)
                elif topic == "pageviews":
                    assert json_schema(r.value, ctx) == m.value, (part.name, r.offset)
                else:
                    cls = classes[m.schema_id]
                    assert r.value[5] == 0  # message indexes [0]: the single byte 0
                    read = ProtobufDeserializer(cls, {"use.deprecated.format": False})
                    assert read(r.value, ctx) == json_format.ParseDict(m.value, cls())
                decoded[topic] += 1
    assert all(decoded[t] > RECORDS * 0.8 for t in PAYLOADS), decoded


def test_the_values_use_what_each_version_added(generated):
    """The evolution shows in the values: v2 and v3 fields are there from their version on."""
    result = generated.result
    meant = [m for name, by in result.payloads.items() for m in by.values() if m.schema_id]
    by_id = collections.defaultdict(list)
    for m in meant:
        by_id[m.schema_id].append(m.value)
    assert all("channel" not in v for v in by_id[3]) and all("channel" in v for v in by_id[5])
    assert {v["status"] for v in by_id[8]} == {"AUTHORIZED", "CAPTURED", "REFUNDED"}
    assert any(v["captured_at"] is None for v in by_id[8])
    assert any(v["captured_at"] is not None for v in by_id[8])
    assert all("tier" not in v for v in by_id[2]) and any(v.get("tags") for v in by_id[6])
    assert all("created_at" in v and "address" in v for v in by_id[6])
    assert all("device" in v for v in by_id[9]) and by_id[9]
    assert any("referrer" in v for v in by_id[7]) and any("referrer" not in v for v in by_id[7])


def test_ids_never_go_back_within_a_partition(generated):
    """Each deploy's instances follow the last one's: per partition, the schema ids of the
    service's records only grow over the offsets; each topic uses each of its versions."""
    root, result = generated.root, generated.result
    for topic, ids in IDS_BY_TOPIC.items():
        used = set()
        for part in partitions_of(root, topic):
            meant = result.payloads[part.name]
            seen = []
            for batch in kf.iter_batches(part):
                if batch.producer_id == CANARY_PRODUCER:
                    continue
                for r in batch.records:
                    if meant[r.offset].schema_id is not None:
                        seen.append(meant[r.offset].schema_id)
            assert seen == sorted(seen), part.name
            used |= set(seen)
        assert used == set(ids), topic


def test_the_canary_wrote_the_soft_deleted_version_then_stopped(generated):
    root, result = generated.root, generated.result
    canary = [
        (r.timestamp, result.payloads[part.name][r.offset].schema_id)
        for part in partitions_of(root, "pageviews")
        for batch in kf.iter_batches(part)
        if batch.producer_id == CANARY_PRODUCER
        for r in batch.records
    ]
    assert canary and {schema_id for _, schema_id in canary} == {SOFT_DELETED}
    deleted_at = [
        r.timestamp for r in store_records(root) if r.value and b'"deleted":true' in r.value
    ]
    assert len(deleted_at) == 1 and deleted_at[0] > max(t for t, _ in canary)


def test_plain_records_are_json_and_not_mistaken_for_payloads(generated):
    root, result = generated.root, generated.result
    source = open_schema_source(None, log_dir=root)
    decoder = payload_decoder("schema-registry", source)
    plain = collections.Counter()
    for topic in PAYLOADS:
        for part in partitions_of(root, topic):
            meant = result.payloads[part.name]
            for r in kf.iter_records(part):
                got = decoder.decode(r.value)
                if meant[r.offset].schema_id is not None:
                    assert got.error is None and got.schema_id == meant[r.offset].schema_id
                    continue
                assert r.value[:1] == b"{" and json.loads(r.value) == meant[r.offset].value
                assert got.schema_id is None and "magic byte" in got.error
                plain[topic] += 1
    assert plain["payments"] > 0 and plain["pageviews"] > 0 and plain["customers"] == 0


# --- options, determinism -------------------------------------------------------------------


def _tree(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()
    }


def test_same_seed_same_bytes(tmp_path):
    kwargs = dict(topics=PAYLOADS, records=40, segment_bytes=8192)
    a = generate_log_dir(tmp_path / "a", seed=3, **kwargs)
    generate_log_dir(tmp_path / "b", seed=3, **kwargs)
    c = generate_log_dir(tmp_path / "c", seed=4, **kwargs)
    assert _tree(tmp_path / "a") == _tree(tmp_path / "b")
    assert _tree(tmp_path / "a") != _tree(tmp_path / "c")
    assert a.schemas == c.schemas  # the ids do not depend on the seed


def test_payloads_are_in_the_default_run_and_leave_the_others_alone(tmp_path):
    """By default the payload topics and _schemas-0 are written; without them the other
    topics are byte for byte what they were (topic ids included)."""
    with_payloads = generate_log_dir(tmp_path / "with", seed=2, records=30, segment_bytes=8192)
    without = generate_log_dir(
        tmp_path / "without", seed=2, records=30, segment_bytes=8192, payloads=False
    )
    topics = {name.rpartition("-")[0] for name in with_payloads.partitions}
    assert topics == {*TOPIC_KINDS, SCHEMAS_TOPIC}
    assert {name.rpartition("-")[0] for name in without.partitions} == set(TOPIC_KINDS) - set(
        PAYLOADS
    )
    assert without.schemas == [] and without.payloads == {}
    assert "schemas" not in json.loads((tmp_path / "without" / EXPECTED_FILE).read_text())
    same = _tree(tmp_path / "without")
    other = _tree(tmp_path / "with")
    for name, data in same.items():
        if "/" in name:  # partition files; the checkpoints and EXPECTED.json list more
            assert other[name] == data, name


def test_cli_payload_options(tmp_path, capsys):
    root = tmp_path / "one"
    assert main(["generate", str(root), "--topics", "customers", "--records", "20"]) == 0
    assert "wrote 2 partitions" in capsys.readouterr().out
    assert {p.name for p in root.iterdir() if p.is_dir()} == {"customers-0", "_schemas-0"}
    root = tmp_path / "none"
    assert main(["generate", str(root), "--no-payloads", "--records", "20"]) == 0
    assert not any(root.glob("payments-*")) and not (root / "_schemas-0").exists()
    assert json.loads((root / EXPECTED_FILE).read_text())["options"]["payloads"] is False
    capsys.readouterr()
    bad = ["generate", str(tmp_path / "bad"), "--topics", "payments", "--no-payloads"]
    assert main(bad) == 2
    assert "without payloads" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["generate", "--help"])
    assert "--no-payloads" in capsys.readouterr().out


def test_registry_sizes_with_the_run():
    """Other applications' registrations scale with ``records``; the planned ids do not."""
    small, big = PayloadRegistry(10), PayloadRegistry(400)
    assert len(small.schemas) == len(PLANNED) + 3 and len(big.schemas) == len(PLANNED) + 50
    assert small.schemas[: len(PLANNED)] == big.schemas[: len(PLANNED)]


# --- encode ---------------------------------------------------------------------------------


def test_encode_frames_as_confluents_serializers_do():
    avro = RegisteredSchema(7, "t-value", 1, "AVRO", '"string"', ())
    assert encode_avro(avro, "hi") == b"\x00\x00\x00\x00\x07\x04hi"
    with pytest.raises(ValueError, match="t-value"):
        encode_avro(avro, 5)
    broken = RegisteredSchema(11, "b-value", 1, "AVRO", '{"type":"nope"}', ())
    with pytest.raises(PayloadDecodeError, match=r"schema id 11 \(subject b-value v1\)"):
        encode_avro(broken, 1)
    js = RegisteredSchema(8, "j-value", 1, "JSON", "{}", ())
    assert encode(js, {"é": [1, None]}) == b'\x00\x00\x00\x00\x08{"\xc3\xa9":[1,null]}'
    with pytest.raises(ValueError):
        encode_json(js, math.nan)
    with pytest.raises(ValueError, match="is AVRO, not JSON"):
        encode_json(avro, "x")
    proto = RegisteredSchema(
        9, "p-value", 1, "PROTOBUF", 'syntax = "proto3";\nmessage A { string s = 1; }\n', ()
    )
    framed = encode_protobuf(proto, {"s": "hi"})
    assert framed == b"\x00\x00\x00\x00\x09\x00\x0a\x02hi"
    source = MemorySchemaSource([avro, js, proto])
    # a message of the schema's class is taken as it is
    cls = ProtobufDecoder(source).message_class(proto, (0,))
    assert encode_protobuf(proto, cls(s="hi"), source) == framed
    # the second message of a file: message indexes [1]
    text = 'syntax = "proto3";\nmessage A {}\nmessage B { int32 n = 1; }\n'
    two = RegisteredSchema(10, "q-value", 1, "PROTOBUF", text, ())
    assert encode_protobuf(two, {"n": 3}, message_indexes=[1]) == (
        b"\x00\x00\x00\x00\x0a" + b"\x02\x02" + b"\x08\x03"
    )
    restored = pickle.loads(pickle.dumps(source))
    assert restored.by_id(9) == proto and restored.description == source.description


def test_a_big_run_registers_schemas_a_segment_holds():
    """A run of 20,000 records a partition registers 2,500 of the other applications'
    schemas; each version adds a field, so one subject's versions grew until a schema record
    outgrew the default 32 KiB segment and the writer refused it, as a broker would
    (``generate --records 20000`` failed). Subjects now move on to a new one after
    ``_VERSIONS_A_SUBJECT`` versions: every record fits, ids and versions stay consecutive."""
    from kafka_format.runtime.write.generate import DEFAULT_SEGMENT_BYTES
    from kafka_format.runtime.write.generate_payloads import (
        _VERSIONS_A_SUBJECT,
        _registered,
        schema_key,
        schema_value,
    )

    schemas = _registered(20_000 // 8)
    largest = max(len(schema_key(s)) + len(schema_value(s)) for s in schemas)
    assert largest < DEFAULT_SEGMENT_BYTES // 4
    assert [s.id for s in schemas] == list(range(1, len(schemas) + 1))
    by_subject = collections.defaultdict(list)
    for s in schemas:
        by_subject[s.subject].append(s.version)
    assert all(v == list(range(1, len(v) + 1)) for v in by_subject.values())
    assert max(len(v) for v in by_subject.values()) <= _VERSIONS_A_SUBJECT
    assert any(subject.endswith("2-value") for subject in by_subject)
