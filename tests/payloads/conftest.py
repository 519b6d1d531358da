"""A Kafka log directory with a Schema Registry in it, for the payload tests.

``cluster`` gives a :class:`Cluster`: Confluent's mock registry (its own client numbers ids
and versions), data partitions written with the project's ``PartitionWriter``, and a
``_schemas-0`` partition holding what the registry would have written for the schemas the
mock holds, keys and values laid out as the registry's Jackson classes write them
(``SchemaKey``: keytype, subject, version, magic; ``SchemaValue``: subject, version, id,
[schemaType], [references], schema, deleted; see test_registry.py for the sources).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from itertools import count
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.serialization import MessageField, SerializationContext

from kafka_format.runtime.read.columnar import read_table
from kafka_format.runtime.write.writer import Message, PartitionWriter, Producer

_clients = count()


def jackson(obj: dict[str, Any]) -> bytes:
    """JSON as Jackson's default ObjectMapper writes it: no spaces, UTF-8, fields in order."""
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode()


def schema_key(subject: str, version: int) -> bytes:
    return jackson({"keytype": "SCHEMA", "subject": subject, "version": version, "magic": 1})


def schema_value(registered: Any) -> bytes:
    """A mock registry's ``RegisteredSchema`` as the registry's ``SchemaValue``."""
    schema = registered.schema
    value: dict[str, Any] = {
        "subject": registered.subject,
        "version": registered.version,
        "id": registered.schema_id,
    }
    if schema.schema_type and schema.schema_type != "AVRO":
        value["schemaType"] = schema.schema_type
    if schema.references:
        value["references"] = [
            {"name": r.name, "subject": r.subject, "version": r.version} for r in schema.references
        ]
    value["schema"] = schema.schema_str
    value["deleted"] = False
    return jackson(value)


@dataclass
class Cluster:
    """A log dir: data partitions, a mock registry, and its ``_schemas-0`` once published."""

    log_dir: Path
    client: Any
    partitions: dict[tuple[str, int], list[Message]] = field(default_factory=dict)

    def ctx(self, topic: str, key: bool = False) -> SerializationContext:
        return SerializationContext(topic, MessageField.KEY if key else MessageField.VALUE)

    def add(self, topic: str, key: bytes | None, value: bytes | None, partition: int = 0) -> None:
        self.partitions.setdefault((topic, partition), []).append(Message(key, value))

    def write(self) -> Path:
        """Every partition added, and ``_schemas-0`` with every version the mock holds, in
        id order (the order the registry assigned them)."""
        for (topic, partition), messages in self.partitions.items():
            with PartitionWriter(self.log_dir, topic, partition) as writer:
                # a few records per batch, as a producer's linger gathers them
                for start in range(0, len(messages), 3):
                    writer.append(messages[start : start + 3])
        registered = [
            self.client.get_version(subject, version)
            for subject in self.client.get_subjects()
            for version in self.client.get_versions(subject)
        ]
        registered.sort(key=lambda r: (r.schema_id, r.subject, r.version))
        producer = Producer(1000, 0)
        with PartitionWriter(self.log_dir, "_schemas", 0) as writer:
            for r in registered:
                message = Message(schema_key(r.subject, r.version), schema_value(r))
                writer.append([message], producer=producer)
        return self.log_dir

    def table(self, *topics: str, **options: Any) -> pa.Table:
        """``read_table`` of the topics' partitions (all but ``_schemas`` when none given),
        concatenated in (topic, partition) order."""
        wanted = sorted((t, p) for t, p in self.partitions if not topics or t in topics)
        tables = [read_table(self.log_dir / f"{t}-{p}", **options) for t, p in wanted]
        return pa.concat_tables(tables)


@pytest.fixture
def cluster(tmp_path: Path) -> Cluster:
    client = SchemaRegistryClient.new_client({"url": f"mock://columns-{next(_clients)}"})
    return Cluster(tmp_path / "logs", client)
