"""Spark's ``kafka_log`` source on a folder of tiered-storage objects
(``<offset>-<remote segment id>.log`` and companions): one partition, the same records as the
local partition the objects were copied from (the oracle)."""

from __future__ import annotations

import base64
import shutil
import uuid
from pathlib import Path

import pytest

pytest.importorskip("pyspark")

from kafka_format.runtime.files.names import FileKind, parse_segment_file_name
from kafka_format.runtime.write.writer import Message, PartitionWriter
from kafka_format.spark_udfs import register

TOPIC_ID = "Uj5wn_FqTXirEASvVZRY1w"


def test_a_folder_of_remote_objects_is_one_partition(spark, tmp_path: Path):
    with PartitionWriter(tmp_path / "local", "orders", 2, segment_bytes=2048) as w:
        for r in range(40):
            w.append([Message(f"k{r}".encode(), f"v{r}".encode() * 20) for _ in range(3)])
    local = tmp_path / "local" / "orders-2"
    folder = tmp_path / f"orders-2-{TOPIC_ID}"
    folder.mkdir()
    for path in local.iterdir():
        parsed = parse_segment_file_name(path.name)
        if parsed is None or parsed.kind is FileKind.PRODUCER_SNAPSHOT:
            continue
        name = f"{parsed.stem}-{_remote_id(parsed.base_offset)}{parsed.kind.suffix}"
        shutil.copyfile(path, folder / name)
    assert len(list(folder.glob("*.log"))) >= 3
    register(spark)
    rows = (
        spark.read.format("kafka_log")
        .load(str(folder))
        .select("topic", "partition", "offset")
        .orderBy("offset")
        .collect()
    )
    assert {(r.topic, r.partition) for r in rows} == {("orders", 2)}
    assert [r.offset for r in rows] == list(range(120))


def _remote_id(base: int) -> str:
    """A Kafka Uuid as Uuid.toString writes it (base64url, no padding)."""
    return base64.urlsafe_b64encode(uuid.UUID(int=base + 1).bytes).decode().rstrip("=")
