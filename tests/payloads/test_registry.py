"""Schema sources (runtime/payloads/registry*.py): the ``_schemas`` replay, export files and
``open_schema_source``.

Oracles:

* ``_schemas`` partitions written here with the project's ``PartitionWriter`` (one record per
  batch, from an idempotent producer, as the registry's ``KafkaStore`` sends them), keys and
  values laid out as the registry's Jackson classes write them (``SchemaKey``'s
  ``@JsonPropertyOrder``, ``SchemaValue``'s creator order, as in its ``SchemaValuesTest``);
  the expected answers are worked out by hand from ``KafkaStoreMessageHandler`` and
  ``InMemoryCache`` (cited at each case);
* the project's own log cleaner (``runtime.log.compaction``) compacts such a log: the replay
  of what it keeps, offsets with gaps, must answer as the replay of the whole log;
* Confluent's Python client's mock registry: what it registers, exported with its own
  ``RegisteredSchema.to_dict``, read back through an export file.
"""

from __future__ import annotations

import json
import pickle
from pathlib import Path
from typing import Any

import pytest

from kafka_format.runtime.errors import KafkaFormatError
from kafka_format.runtime.log.compaction import compact
from kafka_format.runtime.payloads.registry import (
    ExportSchemaSource,
    RegisteredSchema,
    SchemaReference,
    SchemaRegistryError,
    SchemaSource,
    StoreSchemaSource,
    open_schema_source,
)
from kafka_format.runtime.payloads.registry_store import replay
from kafka_format.runtime.read.reader import iter_records
from kafka_format.runtime.write.writer import Message, PartitionWriter, Producer

# --- the registry's records, as its serializer writes them -------------------------------


def jackson(obj: dict[str, Any]) -> bytes:
    """JSON as Jackson's default ObjectMapper writes it: no spaces, UTF-8, fields in order."""
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode()


def schema_key(subject: str, version: int, magic: int = 1) -> bytes:
    return jackson({"keytype": "SCHEMA", "subject": subject, "version": version, "magic": magic})


def subject_key(keytype: str, subject: str | None = None) -> bytes:
    """ConfigKey, ModeKey, DeleteSubjectKey, ClearSubjectKey: {"keytype","subject","magic"},
    the subject left out when null (@JsonInclude(NON_EMPTY))."""
    key: dict[str, Any] = {"keytype": keytype}
    if subject is not None:
        key["subject"] = subject
    key["magic"] = 0
    return jackson(key)


NOOP_KEY = jackson({"keytype": "NOOP", "magic": 0})


def schema_value(
    subject: str,
    version: int,
    schema_id: int,
    schema: str,
    *,
    schema_type: str | None = None,
    references: list[dict[str, Any]] | None = None,
    deleted: bool = False,
    **extra: Any,
) -> bytes:
    """SchemaValue: subject, version, id, [md5], [schemaType], [references], schema, deleted,
    then anything else (``offset``, ``ts``); empty fields are left out (NON_EMPTY)."""
    value: dict[str, Any] = {"subject": subject, "version": version, "id": schema_id}
    if "md5" in extra:
        value["md5"] = extra.pop("md5")
    if schema_type is not None:
        value["schemaType"] = schema_type
    if references:
        value["references"] = references
    value["schema"] = schema
    value["deleted"] = deleted
    value.update(extra)
    return jackson(value)


ORDERS_V1 = '{"type":"record","name":"Order","fields":[{"name":"id","type":"long"}]}'
ORDERS_V2 = (
    '{"type":"record","name":"Order","fields":[{"name":"id","type":"long"},'
    '{"name":"note","type":["null","string"],"default":null}]}'
)
ORDERS_OTHER = '{"type":"record","name":"Other","fields":[]}'
MONEY = 'syntax = "proto3";\npackage common;\n\nmessage Money {\n  string currency = 1;\n}\n'
PAYMENT = (
    'syntax = "proto3";\npackage pay;\n\nimport "common/money.proto";\n\n'
    "message Payment {\n  common.Money amount = 1;\n}\n"
)
USERS = '{"type":"object","properties":{"name":{"type":"string"}}}'
LEGACY = '"string"'
MONEY_REF = {"name": "common/money.proto", "subject": "money", "version": 1}

#: A registry's life in its store: offset -> (key, value). The offsets are the list's.
STORE: list[tuple[bytes, bytes | None]] = [
    (NOOP_KEY, None),  # 0: KafkaStore.getLatestOffset's marker
    (subject_key("CONFIG"), jackson({"compatibilityLevel": "BACKWARD"})),
    (schema_key("orders-value", 1), schema_value("orders-value", 1, 1, ORDERS_V1)),  # pre-5.5
    (
        schema_key("orders-value", 2),
        schema_value(
            "orders-value", 2, 2, ORDERS_V2, schema_type="AVRO", md5="q5ZcYw==", ts=1, offset=3
        ),
    ),
    (schema_key("money", 1), schema_value("money", 1, 3, MONEY, schema_type="PROTOBUF")),
    (  # 5
        schema_key("payments-value", 1),
        schema_value(
            "payments-value", 1, 4, PAYMENT, schema_type="PROTOBUF", references=[MONEY_REF]
        ),
    ),
    # the same schema under a second subject keeps its id
    (schema_key("refunds-value", 1), schema_value("refunds-value", 1, 2, ORDERS_V2)),
    (b"\x00\x00\x00\x00\x01garbage", b"\x02xyz"),  # 7: not the registry's
    (schema_key("users-value", 1), schema_value("users-value", 1, 5, USERS, schema_type="JSON")),
    (  # soft delete of the version (DELETE /subjects/users-value/versions/1)
        schema_key("users-value", 1),
        schema_value("users-value", 1, 5, USERS, schema_type="JSON", deleted=True),
    ),
    (schema_key("legacy-value", 1), schema_value("legacy-value", 1, 6, LEGACY)),  # 10
    (schema_key("legacy-value", 1), schema_value("legacy-value", 1, 6, LEGACY, deleted=True)),
    (schema_key("legacy-value", 1), None),  # 12: ?permanent=true
    (subject_key("MODE", "orders-value"), jackson({"subject": "orders-value", "mode": "READONLY"})),
    (schema_key("temp-value", 1), schema_value("temp-value", 1, 7, LEGACY + " ")),
    (schema_key("temp-value", 2), schema_value("temp-value", 2, 8, ORDERS_OTHER)),  # 15
    (subject_key("DELETE_SUBJECT", "temp-value"), jackson({"subject": "temp-value", "version": 2})),
    (jackson({"keytype": "FUTURE_THING", "magic": 0}), jackson({})),  # 17: unknown keytype
    (schema_key("broken-value", 1), b'{"subject":"broken-value",'),  # 18: cut JSON
    # 19: id 1 already names ORDERS_V1: validateUpdate ignores it
    (schema_key("orders-value", 3), schema_value("orders-value", 3, 1, ORDERS_OTHER)),
    (  # 20
        subject_key("CONFIG", "orders-value"),
        jackson({"compatibilityLevel": "FULL", "subject": "orders-value"}),
    ),
    (schema_key("magic-value", 1, magic=2), schema_value("magic-value", 1, 9, LEGACY)),  # 21
    # 22: ids are per context: id 1 again, in .staging
    (
        schema_key(":.staging:orders-value", 1),
        schema_value(":.staging:orders-value", 1, 1, ORDERS_OTHER),
    ),
    (NOOP_KEY, None),
]
SKIPPED_OFFSETS = [7, 17, 18, 19, 21]


def write_schemas(
    log_dir: Path,
    entries: list[tuple[bytes, bytes | None]],
    *,
    topic: str = "_schemas",
    segment_bytes: int = 1 << 20,
    offsets: list[int] | None = None,
) -> Path:
    """A ``_schemas`` partition holding ``entries``, one record per batch, from one
    idempotent producer; ``offsets``: where each goes (gaps, as a cleaned log has them)."""
    producer = Producer(1000, 0)
    with PartitionWriter(log_dir, topic, 0, segment_bytes=segment_bytes) as writer:
        for i, (key, value) in enumerate(entries):
            at = offsets[i] if offsets is not None else None
            writer.append([Message(key, value)], producer=producer, base_offset=at)
        return writer.path


@pytest.fixture
def store(tmp_path: Path) -> StoreSchemaSource:
    write_schemas(tmp_path / "logs", STORE)
    source = open_schema_source(tmp_path / "logs")
    assert isinstance(source, StoreSchemaSource)
    return source


def answers(source: SchemaSource, ids: range = range(0, 12)) -> dict[str, Any]:
    """Everything a source answers about the STORE registry, for comparisons."""
    subjects = source.subjects()
    return {
        "ids": {i: source.by_id(i) for i in ids},
        "staging": {i: source.by_id(i, context=".staging") for i in ids},
        "subjects": subjects,
        "versions": {s: source.versions(s) for s in subjects},
        "latest": {s: source.by_subject(s) for s in subjects},
    }


# --- the replay ------------------------------------------------------------------------------


def test_schemas_by_id_as_registered(store: StoreSchemaSource) -> None:
    assert store.by_id(1) == RegisteredSchema(1, "orders-value", 1, "AVRO", ORDERS_V1, ())
    # registered under two subjects: the first by name answers
    assert store.by_id(2) == RegisteredSchema(2, "orders-value", 2, "AVRO", ORDERS_V2, ())
    assert store.by_subject("refunds-value", 1).id == 2  # type: ignore[union-attr]
    assert store.by_id(3) == RegisteredSchema(3, "money", 1, "PROTOBUF", MONEY, ())
    payment = store.by_id(4)
    assert payment is not None and payment.schema_type == "PROTOBUF"
    assert payment.references == (SchemaReference("common/money.proto", "money", 1),)
    assert store.reference(payment.references[0]) == store.by_id(3)
    assert store.by_id(99) is None


def test_schema_type_absent_is_avro_extra_fields_ignored(store: StoreSchemaSource) -> None:
    # offset 2 has no schemaType (a pre-5.5 registry's value); offset 3 carries md5, ts and
    # offset, which SchemaValue ignores on read (@JsonIgnoreProperties(ignoreUnknown = true))
    assert store.by_subject("orders-value", 1).schema_type == "AVRO"  # type: ignore[union-attr]
    assert store.by_subject("orders-value", 2).schema == ORDERS_V2  # type: ignore[union-attr]


def test_soft_deleted_version_resolves_by_id(store: StoreSchemaSource) -> None:
    # InMemoryCache.schemaDeleted keeps the id -> subject version mapping
    users = store.by_id(5)
    assert users == RegisteredSchema(5, "users-value", 1, "JSON", USERS, (), deleted=True)
    assert store.by_subject("users-value", 1) == users
    assert store.by_subject("users-value") is None  # no version left that is not deleted
    assert store.versions("users-value") == [users]


def test_tombstone_removes_version_and_id(store: StoreSchemaSource) -> None:
    # InMemoryCache.schemaTombstoned: the last subject version holding id 6 is gone
    assert store.by_id(6) is None
    assert store.by_subject("legacy-value", 1) is None
    assert store.versions("legacy-value") == []
    assert "legacy-value" not in store.subjects()
    why = store.explain_missing(6)
    assert "hard-deleted (legacy-value version 1 at offset 12)" in why
    assert store.explain_missing(99).startswith("schema id 99 is not in _schemas-0 in ")


def test_delete_subject_soft_deletes_up_to_its_version(store: StoreSchemaSource) -> None:
    # KafkaStoreMessageHandler.handleDeleteSubject: versions 1..2 of temp-value
    assert [(s.version, s.deleted) for s in store.versions("temp-value")] == [
        (1, True),
        (2, True),
    ]
    assert store.by_id(7).deleted and store.by_id(8).deleted  # type: ignore[union-attr]
    assert store.by_subject("temp-value") is None


def test_duplicate_id_with_another_schema_is_ignored(store: StoreSchemaSource) -> None:
    # validateUpdate: "Found a schema with duplicate ID"; the version is never stored
    assert store.by_subject("orders-value", 3) is None
    assert store.by_subject("orders-value").version == 2  # type: ignore[union-attr]
    assert store.by_id(1).schema == ORDERS_V1  # type: ignore[union-attr]


def test_ids_are_per_context(store: StoreSchemaSource) -> None:
    staging = store.by_id(1, context=".staging")
    assert staging == RegisteredSchema(1, ":.staging:orders-value", 1, "AVRO", ORDERS_OTHER, ())
    assert store.by_id(1, context=":.staging:") == staging
    assert store.by_id(2, context=".staging") is None
    assert "(context .staging)" in store.explain_missing(2, context=".staging")


def test_subjects_and_versions(store: StoreSchemaSource) -> None:
    assert store.subjects() == [
        ":.staging:orders-value",
        "money",
        "orders-value",
        "payments-value",
        "refunds-value",
        "temp-value",
        "users-value",
    ]
    assert [s.version for s in store.versions("orders-value")] == [1, 2]
    assert store.versions("nobody") == []
    assert store.by_subject("orders-value", -1) == store.by_subject("orders-value")


def test_records_not_the_registrys_are_skipped_and_named(store: StoreSchemaSource) -> None:
    problems = store.problems
    assert [int(p.split(":")[0].removeprefix("offset ")) for p in problems] == SKIPPED_OFFSETS
    assert "key is not JSON" in problems[0]
    assert "unknown keytype 'FUTURE_THING'" in problems[1]
    assert "value is not JSON" in problems[2]
    assert "schema id 1 already names another schema (orders-value version 1)" in problems[3]
    assert "magic 2" in problems[4]
    # 8 ids (7 in the default context, 1 in .staging), 7 subjects
    assert store.description == (
        f"_schemas-0 in {store.path.parent} (8 schemas, 7 subjects, 5 skipped)"
    )
    assert store.describe().splitlines()[1:] == [f"  {p}" for p in problems]


def test_clear_subject_drops_soft_deleted_versions(tmp_path: Path) -> None:
    # InMemoryCache.clearSubjects: only deleted versions of the matching subjects go
    entries = [
        (schema_key("x", 1), schema_value("x", 1, 1, LEGACY)),
        (schema_key("x", 2), schema_value("x", 2, 2, ORDERS_V1)),
        (schema_key("y", 1), schema_value("y", 1, 3, ORDERS_V2, deleted=True)),
        (schema_key("x", 1), schema_value("x", 1, 1, LEGACY, deleted=True)),
        (subject_key("CLEAR_SUBJECT", "x"), jackson({"subject": "x"})),
        (subject_key("CLEAR_SUBJECT", "y"), None),  # a non-schema tombstone does nothing
    ]
    source = open_schema_source(write_schemas(tmp_path, entries))
    assert source.by_id(1) is None
    assert "cleared (x version 1 at offset 4)" in source.explain_missing(1)
    assert [s.version for s in source.versions("x")] == [2]
    assert source.by_id(3) is not None and source.by_id(3).deleted  # type: ignore[union-attr]
    assert source.problems == []


def test_clear_subject_of_a_context(tmp_path: Path) -> None:
    entries = [
        (schema_key(":.a:x", 1), schema_value(":.a:x", 1, 1, LEGACY, deleted=True)),
        (schema_key(":.b:x", 1), schema_value(":.b:x", 1, 1, LEGACY, deleted=True)),
        (subject_key("CLEAR_SUBJECT", ":.a:"), jackson({"subject": ":.a:"})),
    ]
    source = open_schema_source(write_schemas(tmp_path, entries))
    assert source.subjects() == [":.b:x"]
    assert source.by_id(1, context=".a") is None
    assert source.by_id(1, context=".b") is not None


def test_reference_in_a_context_resolves_in_the_parents(tmp_path: Path) -> None:
    # QualifiedSubject.qualifySubjectWithParent: an unqualified reference is the parent's
    entries = [
        (schema_key("money", 1), schema_value("money", 1, 1, LEGACY)),
        (schema_key(":.c:money", 1), schema_value(":.c:money", 1, 1, MONEY)),
        (
            schema_key(":.c:pay", 1),
            schema_value(":.c:pay", 1, 2, PAYMENT, schema_type="PROTOBUF", references=[MONEY_REF]),
        ),
    ]
    source = open_schema_source(write_schemas(tmp_path, entries))
    pay = source.by_id(2, context=".c")
    assert pay is not None
    ref = SchemaReference("common/money.proto", "money", 1)
    assert source.reference(ref, pay).schema == MONEY  # type: ignore[union-attr]
    assert source.reference(ref).schema == LEGACY  # type: ignore[union-attr]


def test_replay_is_last_write_wins_over_segments(tmp_path: Path) -> None:
    # many small segments: the replay crosses them in offset order
    entries = [(schema_key("s", 1), schema_value("s", 1, 1, ORDERS_V1))]
    entries += [(schema_key("s", v), schema_value("s", v, v, f'"v{v}"')) for v in range(2, 40)]
    entries += [(schema_key("s", 1), schema_value("s", 1, 1, ORDERS_V1, deleted=True))]
    path = write_schemas(tmp_path, entries, segment_bytes=400)
    assert len(list(path.glob("*.log"))) > 5
    source = open_schema_source(path)
    assert source.by_subject("s").version == 39  # type: ignore[union-attr]
    assert source.by_subject("s", 1).deleted  # type: ignore[union-attr]
    one_segment = open_schema_source(sorted(path.glob("*.log"))[0])
    assert one_segment.by_subject("s", 1).deleted is False  # type: ignore[union-attr]


def test_compacted_store_answers_as_the_whole_log(tmp_path: Path) -> None:
    """The project's cleaner keeps the last value of each key: what the registry replays
    after compaction must be what it had before (its store depends on that)."""
    whole = write_schemas(tmp_path / "whole", STORE, segment_bytes=600)
    clock_far = 1_700_000_000_000 + 10 * 86_400_000
    result = compact(whole, now_ms=clock_far, cleanup_policy="compact")
    kept = [r for r in result.records if r.key is not None]
    assert len(kept) < len(STORE)
    compacted = write_schemas(
        tmp_path / "compacted",
        [(bytes(r.key), None if r.value is None else bytes(r.value)) for r in kept],
        offsets=[r.offset for r in kept],
    )
    offsets = [r.offset for r in iter_records(compacted)]
    assert offsets == [r.offset for r in kept] and offsets != list(range(len(offsets)))
    # users-value v1 survives only as its deleted value (the case schemaDeleted's comment names)
    assert [
        json.loads(r.value)["deleted"] for r in kept if r.key == schema_key("users-value", 1)
    ] == [True]
    before, after = open_schema_source(whole), open_schema_source(compacted)
    assert answers(after) == answers(before)


def test_damaged_batch_is_passed_over(tmp_path: Path) -> None:
    path = write_schemas(tmp_path, STORE)
    segment = next(path.glob("*.log"))
    data = bytearray(segment.read_bytes())
    at = data.find(b"Money")  # inside the batch of offset 4
    data[at] ^= 0xFF
    segment.write_bytes(bytes(data))
    source = open_schema_source(path)
    assert source.by_id(3) is None
    assert source.by_id(4) is not None and source.by_id(1) is not None
    assert any(p.startswith("damage: ") and "crc" in p for p in source.problems)


def test_replay_function_alone() -> None:
    class R:
        def __init__(self, offset: int, key: bytes | None, value: bytes | None) -> None:
            self.offset, self.key, self.value = offset, key, value

    catalog, problems = replay(  # type: ignore[arg-type]
        [R(0, None, b"{}"), R(1, b"[1]", b"{}"), R(2, schema_key("a", 1), b"[]")]
    )
    assert catalog.subjects() == []
    assert problems == [
        "offset 0: no key",
        "offset 1: key has no keytype",
        "offset 2: value is JSON list, not an object",
    ]


# --- export files ----------------------------------------------------------------------------


def export_entries() -> list[dict[str, Any]]:
    """``GET /schemas?deleted=true`` of the STORE registry, as the REST API writes it."""
    return [
        {"subject": "orders-value", "version": 1, "id": 1, "schema": ORDERS_V1},
        {"subject": "orders-value", "version": 2, "id": 2, "schema": ORDERS_V2},
        {"subject": "money", "version": 1, "id": 3, "schemaType": "PROTOBUF", "schema": MONEY},
        {
            "subject": "payments-value",
            "version": 1,
            "id": 4,
            "schemaType": "PROTOBUF",
            "references": [MONEY_REF],
            "schema": PAYMENT,
        },
        {"subject": "refunds-value", "version": 1, "id": 2, "schema": ORDERS_V2},
        {
            "subject": "users-value",
            "version": 1,
            "id": 5,
            "schemaType": "JSON",
            "schema": USERS,
            "deleted": True,
            "ts": 1700000000000,
        },
    ]


def test_export_file(tmp_path: Path) -> None:
    path = tmp_path / "schemas.json"
    path.write_text(json.dumps(export_entries()))
    source = open_schema_source(str(path))
    assert isinstance(source, ExportSchemaSource)
    assert source.description == f"export {path} (5 schemas, 5 subjects)"
    assert source.by_id(2) == RegisteredSchema(2, "orders-value", 2, "AVRO", ORDERS_V2, ())
    assert source.by_id(4).references == (  # type: ignore[union-attr]
        SchemaReference("common/money.proto", "money", 1),
    )
    assert source.by_id(5).deleted  # type: ignore[union-attr]
    assert source.by_subject("users-value") is None
    assert source.subjects() == [
        "money",
        "orders-value",
        "payments-value",
        "refunds-value",
        "users-value",
    ]


def test_export_agrees_with_the_store(tmp_path: Path, store: StoreSchemaSource) -> None:
    path = tmp_path / "schemas.json"
    path.write_text(json.dumps({"schemas": export_entries()}))
    export = open_schema_source(path)
    for schema_id in (1, 2, 3, 4, 5):
        assert export.by_id(schema_id) == store.by_id(schema_id)


def test_export_entries_that_are_no_schema_are_skipped(tmp_path: Path) -> None:
    path = tmp_path / "schemas.json"
    entries: list[Any] = [
        *export_entries()[:2],
        "text",
        {"subject": "a", "version": True, "id": 3, "schema": "x"},
        {"subject": "a", "version": 1, "id": "3", "schema": "x"},
        {"subject": "a", "version": 1, "id": 3},
        {"subject": "a", "version": 1, "id": 1, "schema": ORDERS_OTHER},
        {"subject": "b", "version": 1, "id": 7, "schema": "x", "references": [{"name": 1}]},
    ]
    path.write_text(json.dumps(entries))
    source = open_schema_source(path)
    assert [p.split(":")[0] for p in source.problems] == [f"entry {i}" for i in range(2, 8)]
    assert source.subjects() == ["orders-value"]
    assert "malformed reference" in source.problems[-1]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"not json", "not a schema export (JSON from GET /schemas?deleted=true)"),
        (b'{"a": 1}', "not a schema export: JSON dict"),
        (b"\xff\xfe", "not a schema export"),
    ],
)
def test_export_file_that_is_not_one(tmp_path: Path, content: bytes, message: str) -> None:
    path = tmp_path / "x.json"
    path.write_bytes(content)
    with pytest.raises(SchemaRegistryError) as info:
        open_schema_source(path)
    assert str(info.value).startswith(f"{path}: {message}")
    assert "\n" not in str(info.value)


def test_mock_registry_export_reads_back(tmp_path: Path) -> None:
    """Confluent's client registers (its mock registry numbers ids and versions) and writes
    the entities (``RegisteredSchema.to_dict``); the export source reads the same back."""
    from confluent_kafka.schema_registry import Schema, SchemaRegistryClient
    from confluent_kafka.schema_registry import SchemaReference as CkReference

    client = SchemaRegistryClient.new_client({"url": "mock://registry-test"})
    client.register_schema("orders-value", Schema(ORDERS_V1, "AVRO"))
    client.register_schema("orders-value", Schema(ORDERS_V2, "AVRO"))
    client.register_schema("money", Schema(MONEY, "PROTOBUF"))
    ref = CkReference("common/money.proto", "money", 1)
    client.register_schema("payments-value", Schema(PAYMENT, "PROTOBUF", [ref]))
    client.register_schema("users-value", Schema(USERS, "JSON"))
    registered = [
        client.get_version(s, v) for s in client.get_subjects() for v in client.get_versions(s)
    ]
    path = tmp_path / "export.json"
    path.write_text(json.dumps([r.to_dict() for r in registered]))
    source = open_schema_source(path)
    assert sorted(source.subjects()) == sorted(client.get_subjects())
    for r in registered:
        mine = source.by_id(r.schema_id)
        assert mine is not None
        assert (mine.subject, mine.version) == (r.subject, r.version)
        schema = client.get_schema(r.schema_id)
        assert (mine.schema, mine.schema_type) == (schema.schema_str, schema.schema_type)
        refs = [(x.name, x.subject, x.version) for x in schema.references or []]
        assert [(x.name, x.subject, x.version) for x in mine.references] == refs
    latest = client.get_latest_version("orders-value")
    assert source.by_subject("orders-value").id == latest.schema_id  # type: ignore[union-attr]


# --- open_schema_source ----------------------------------------------------------------------


def test_opens_a_log_dir_a_partition_dir_and_a_segment(tmp_path: Path) -> None:
    partition = write_schemas(tmp_path / "logs", STORE)
    write_schemas(tmp_path / "logs", STORE[:3], topic="orders")  # another topic beside it
    by_dir = open_schema_source(str(tmp_path / "logs"))
    by_partition = open_schema_source(partition)
    by_segment = open_schema_source(next(partition.glob("*.log")))
    assert answers(by_dir) == answers(by_partition) == answers(by_segment)
    assert by_dir.spec == str(tmp_path / "logs")


def test_none_uses_the_log_dir(tmp_path: Path) -> None:
    partition = write_schemas(tmp_path, STORE)
    source = open_schema_source(None, log_dir=tmp_path)
    assert source.spec == str(partition)
    assert source.by_id(1) is not None


def test_any_topic_name_as_a_partition_dir(tmp_path: Path) -> None:
    # kafkastore.topic=schemas-store: the log dir finds nothing, its partition dir is read
    partition = write_schemas(tmp_path, STORE, topic="schemas-store")
    assert open_schema_source(partition).by_id(1) is not None
    with pytest.raises(SchemaRegistryError, match=r"kafkastore\.topic"):
        open_schema_source(tmp_path)


@pytest.mark.parametrize(
    ("spec", "log_dir", "message"),
    [
        (None, None, "no schema source: give --schema-registry (a log dir, a _schemas-N dir, "),
        (None, "LOGS", "no _schemas partition in LOGS: give --schema-registry"),
        ("", "LOGS", "no _schemas partition in LOGS: give --schema-registry"),
        ("LOGS", None, "no _schemas partition in LOGS: give --schema-registry"),
        ("LOGS/missing", None, "LOGS/missing: no such file or directory; give"),
        ("ftp://host/x", None, "ftp://host/x: a schema registry URL is http:// or https://"),
        ("mock://x", None, "mock://x: a schema registry URL is http:// or https://"),
    ],
)
def test_bad_specs_are_one_line(
    tmp_path: Path, spec: str | None, log_dir: str | None, message: str
) -> None:
    logs = tmp_path / "kafka-logs-1"  # named like a partition, and not one
    write_schemas(logs, STORE[:3], topic="orders")

    def real(text: str | None) -> str | None:
        return None if text is None else text.replace("LOGS", str(logs))

    with pytest.raises(SchemaRegistryError) as info:
        open_schema_source(real(spec), log_dir=real(log_dir))
    assert str(info.value).startswith(real(message))  # type: ignore[arg-type]
    assert "\n" not in str(info.value)
    assert isinstance(info.value, KafkaFormatError)


def test_empty_schemas_partition_is_an_empty_source(tmp_path: Path) -> None:
    write_schemas(tmp_path, [])
    source = open_schema_source(tmp_path)
    assert source.subjects() == [] and source.by_id(1) is None
    assert source.description.endswith("(0 schemas, 0 subjects)")


def test_sources_pickle_as_their_spec(tmp_path: Path) -> None:
    partition = write_schemas(tmp_path / "logs", STORE)
    export = tmp_path / "schemas.json"
    export.write_text(json.dumps(export_entries()))
    for spec in (tmp_path / "logs", partition, export):
        source = open_schema_source(spec)
        data = pickle.dumps(source)
        assert len(data) < 400  # the spec, not the schemas
        again = pickle.loads(data)
        assert type(again) is type(source) and again.spec == str(spec)
        assert answers(again) == answers(source)
