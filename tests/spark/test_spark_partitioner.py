"""``kafka_partition(key, numPartitions)`` through a real local SparkSession, from SQL and from
the DataFrame API.

Oracles: kafka-python's ``murmur2`` with Java's ``toPositive(h) % n``, and vectors published
by kafka-python (partitions out of 1000) and librdkafka (tests/0048-partitioner.c); see
test_partitioner.py for where each comes from.
"""

from __future__ import annotations

import random

import pytest

pyspark = pytest.importorskip("pyspark")

from kafka.partitioner import murmur2 as kafka_python_murmur2  # noqa: E402
from pyspark.errors import PythonException  # noqa: E402
from pyspark.sql import functions as F  # noqa: E402
from pyspark.sql.types import (  # noqa: E402
    BinaryType,
    IntegerType,
    StringType,
    StructField,
    StructType,
)

from kafka_format.runtime.write.writer import Message, PartitionWriter  # noqa: E402
from kafka_format.spark_udfs import register  # noqa: E402
from kafka_format.spark_udfs.functions import kafka_partition  # noqa: E402


def java_partition(key: bytes, count: int) -> int:
    return (kafka_python_murmur2(key) & 0x7FFFFFFF) % count


@pytest.fixture(scope="module")
def kafka(spark):
    return register(spark)


@pytest.fixture(scope="module")
def keys_df(spark, kafka):
    """Random keys (enough per Arrow batch for the compiled path), empty and null ones, and a
    per-row partition count (null for some rows)."""
    rng = random.Random(8)
    rows = []
    for i in range(1500):
        key = None if i % 97 == 0 else rng.randbytes(rng.randrange(0, 40))
        count = None if i % 89 == 0 else rng.randrange(1, 2000)
        rows.append((i, key, count))
    schema = StructType(
        [
            StructField("id", IntegerType()),
            StructField("key", BinaryType()),
            StructField("n", IntegerType()),
        ]
    )
    df = spark.createDataFrame(rows, schema)
    df.createOrReplaceTempView("partitioner_keys")
    return rows


def test_registered_by_register(kafka):
    assert "kafka_partition" in kafka.functions


def test_sql_matches_kafka_python(spark, keys_df):
    got = {
        r.id: (r.fixed, r.per_row)
        for r in spark.sql(
            "SELECT id, kafka_partition(key, 1000) AS fixed, kafka_partition(key, n) AS per_row "
            "FROM partitioner_keys"
        ).collect()
    }
    assert len(got) == len(keys_df)
    for i, key, count in keys_df:
        fixed = None if key is None else java_partition(key, 1000)
        per_row = None if key is None or count is None else java_partition(key, count)
        assert got[i] == (fixed, per_row), (i, key, count)


def test_published_vectors(spark, kafka):
    row = spark.sql(
        "SELECT kafka_partition(X'', 1000) AS empty, kafka_partition(CAST('a' AS BINARY), 1000) "
        "AS a, kafka_partition(X'0020', 1000) AS nul_space, "
        "kafka_partition(CAST('hejsan' AS BINARY), 17) AS hejsan, "
        "kafka_partition(CAST(NULL AS BINARY), 17) AS null_key"
    ).first()
    # kafka-python: b'' -> 681, b'a' -> 524, b'\x00 ' -> 742 (of 1000); librdkafka: hejsan's
    # toPositive(murmur2) is 0x5ec19395. A null key is not hashed: null.
    assert row.asDict() == {
        "empty": 681,
        "a": 524,
        "nul_space": 742,
        "hejsan": 0x5EC19395 % 17,
        "null_key": None,
    }


def test_string_keys_hash_utf8(spark, kafka):
    texts = ["kafka", "clé", "🔑-42", ""]
    df = spark.createDataFrame([(t,) for t in texts], StructType([StructField("k", StringType())]))
    got = [r.p for r in df.select(kafka_partition(F.col("k"), F.lit(31)).alias("p")).collect()]
    assert got == [java_partition(t.encode("utf-8"), 31) for t in texts]


def test_dataframe_api(spark, keys_df):
    df = spark.table("partitioner_keys").where("key IS NOT NULL")
    out = df.select("id", kafka_partition("key", F.lit(12)).alias("p")).collect()
    by_id = {i: key for i, key, _ in keys_df}
    assert out and all(r.p == java_partition(by_id[r.id], 12) for r in out)


def test_group_by_partition_counts(spark, keys_df):
    counts = {
        r.p: r["count"]
        for r in spark.sql(
            "SELECT kafka_partition(key, 6) AS p, count(*) AS count FROM partitioner_keys "
            "GROUP BY 1"
        ).collect()
    }
    expected: dict[int | None, int] = {}
    for _, key, _ in keys_df:
        p = None if key is None else java_partition(key, 6)
        expected[p] = expected.get(p, 0) + 1
    assert counts == expected


def test_finds_misplaced_records_in_a_log_dir(spark, kafka, tmp_path):
    """Through the kafka_log source: keys placed by the oracle, every 7th one a partition
    further; the query finds exactly those."""
    rng = random.Random(2)
    writers = [PartitionWriter(tmp_path, "orders", p) for p in range(4)]
    expected = set()
    for i in range(600):
        key = None if i % 10 == 0 else rng.randbytes(rng.randrange(1, 20))
        p = rng.randrange(4) if key is None else java_partition(key, 4)
        if key is not None and i % 7 == 0:
            p = (p + 1) % 4
            expected.add((p, writers[p].next_offset))
        writers[p].append([Message(key, b"v")])
    for w in writers:
        w.close()
    spark.read.format("kafka_log").load(str(tmp_path)).createOrReplaceTempView("placed_logs")
    found = spark.sql(
        "SELECT partition, offset FROM placed_logs "
        "WHERE key IS NOT NULL AND kafka_partition(key, 4) != partition"
    ).collect()
    assert {(r.partition, r.offset) for r in found} == expected
    assert len(found) == len(expected) > 50


@pytest.mark.parametrize("count", [0, -4])
def test_bad_partition_count_fails_the_query(spark, kafka, count):
    with pytest.raises(PythonException, match="numPartitions must be at least 1"):
        spark.sql(f"SELECT kafka_partition(X'01', {count})").collect()
