"""A user schema with fewer columns (``.schema("topic string, partition int")``) through a real
local SparkSession: the way to ask a count or a group-by for less work in Spark (PySpark 4.3
prunes no column of a Python data source, so ``count()`` otherwise gets them all). Its answers
must be those of the full read, and the generator's record counts.

Oracles: the counts the generator says it wrote per partition (``EXPECTED.json``'s
``records`` / ``read_committed_records``) and the full read's own columns, projected by Spark.
"""

from __future__ import annotations

import pytest

pyspark = pytest.importorskip("pyspark")

from kafka_format.runtime.write.generate import generate_log_dir  # noqa: E402
from kafka_format.spark_udfs import register  # noqa: E402

NARROW = "topic string, partition int"


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    # Every scenario topic: transactions (aborted and open), legacy magics, compressed
    # batches, a cleaned topic, several segments per partition.
    return generate_log_dir(tmp_path_factory.mktemp("narrow") / "logs", seed=18)


@pytest.fixture(scope="module")
def kafka(spark):
    return register(spark)


def _reader(spark, isolation: str, schema: str | None = None):
    reader = spark.read.format("kafka_log").option("isolationLevel", isolation)
    return reader.schema(schema) if schema else reader


def _counts(df) -> dict[tuple[str, int], int]:
    return {(r[0], r[1]): r[2] for r in df.groupBy("topic", "partition").count().collect()}


@pytest.mark.parametrize("isolation", ["read_uncommitted", "read_committed"])
def test_topic_partition_schema_counts_what_was_written(spark, kafka, generated, isolation):
    path = str(generated.path)
    field = "records" if isolation == "read_uncommitted" else "read_committed_records"
    want = {
        (s.topic, s.partition): getattr(s, field)
        for s in generated.partitions.values()
        if getattr(s, field)
    }
    narrow = _reader(spark, isolation, NARROW).load(path)
    assert narrow.columns == ["topic", "partition"]
    assert _counts(narrow) == want
    assert narrow.count() == sum(want.values())
    assert _counts(_reader(spark, isolation).load(path)) == want


def test_narrow_schema_in_any_order_is_the_full_reads_projection(spark, kafka, generated):
    path = str(generated.path)
    picked = "offset bigint, topic string, value binary, partition int"
    narrow = _reader(spark, "read_committed", picked).load(path)
    assert narrow.columns == ["offset", "topic", "value", "partition"]
    full = _reader(spark, "read_committed").load(path).select(*narrow.columns)
    # (topic, partition, offset) is unique per record; values may be null (tombstones).
    by_position = lambda row: (row[1], row[3], row[0])  # noqa: E731
    got = sorted((tuple(r) for r in narrow.collect()), key=by_position)
    assert got == sorted((tuple(r) for r in full.collect()), key=by_position)
    assert len(got) == sum(s.read_committed_records for s in generated.partitions.values())
