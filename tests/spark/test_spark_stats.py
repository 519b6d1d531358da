"""The Spark aggregation of ``stats`` (spark_udfs/stats.py) gives, per partition, the figures of
runtime/stats.py (itself checked against independent counts in test_stats.py and
test_sizes.py) on the same log directory; ``record_stats`` over a ``kafka_log`` read gives its
record-level part."""

from __future__ import annotations

import struct

import pytest

pytest.importorskip("pyspark")

from kafka_format.runtime.analysis.stats import log_stats as runtime_stats
from kafka_format.runtime.format.codecs import Codec
from kafka_format.runtime.write.writer import Message, PartitionWriter, Producer
from kafka_format.spark_udfs import register
from kafka_format.spark_udfs.stats import PARTITION_COLUMNS, log_stats, record_stats

T0 = 1_700_000_000_000


def _messages(n: int, seed: int, *, headers: bool = False) -> list[Message]:
    return [
        Message(
            None if i % 5 == 4 else b"k%d-%d" % (seed, i % 3),
            None if i % 6 == 5 else b"value %d %d " % (seed, i) * (1 + i % 4),
            [("h", b"%d" % i), ("none", None)] if headers and i % 2 else [],
            timestamp=T0 + 100 * seed + 7 * i,
        )
        for i in range(n)
    ]


@pytest.fixture(scope="module")
def log_dir(tmp_path_factory):
    """Three partitions: v2 of every codec over several segments with producers and
    transactions; v0/v1 messages and wrappers; LogAppendTime with a damaged batch."""
    root = tmp_path_factory.mktemp("spark-stats") / "logs"
    with PartitionWriter(root, "orders", 0, segment_bytes=900) as w:
        idem, txn = Producer(10), Producer(20)
        for i, codec in enumerate(Codec):
            w.append(_messages(4 + i, i, headers=True), codec=codec)
            w.append(_messages(3, 10 + i), codec=codec, producer=idem)
        w.append(_messages(5, 30), producer=txn, transactional=True)
        w.end_transaction(txn, commit=False, coordinator_epoch=1)
    with PartitionWriter(root, "orders", 1) as w:
        w.append(_messages(6, 40), magic=0)
        w.append(_messages(5, 41), magic=0, codec=Codec.SNAPPY)
        w.append(_messages(4, 42), magic=1, codec=Codec.GZIP)
        w.append(_messages(3, 43), magic=1)
        w.append(_messages(8, 44, headers=True), codec=Codec.LZ4)
    with PartitionWriter(root, "clicks", 0, timestamp_type=1) as w:
        for i in range(4):
            w.append(_messages(5, 50 + i), codec=Codec.ZSTD if i % 2 else Codec.NONE)
    # damage the third batch of clicks-0: its CRC no longer holds
    log = root / "clicks-0" / "00000000000000000000.log"
    data = bytearray(log.read_bytes())
    pos = 0
    for _ in range(2):
        pos += 12 + struct.unpack_from(">i", data, pos + 8)[0]
    data[pos + 70] ^= 0xFF
    log.write_bytes(bytes(data))
    return root


def _close(a, b, path: str) -> None:
    """Equal, floats to the JSON's four decimals, maps with their keys as strings."""
    if isinstance(a, dict) and isinstance(b, dict):
        a = {str(k): v for k, v in a.items()}
        b = {str(k): v for k, v in b.items()}
        assert set(a) == set(b), path
        for k in a:
            _close(a[k], b[k], f"{path}.{k}")
    elif isinstance(a, list) and isinstance(b, list):
        assert len(a) == len(b), path
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            _close(x, y, f"{path}[{i}]")
    elif isinstance(a, float) or isinstance(b, float):
        assert a == pytest.approx(b, abs=1e-4), path
    else:
        assert a == b, path


def test_log_stats_agrees_with_the_runtime(spark, log_dir):
    expected = [p.as_json() for p in runtime_stats(log_dir).partitions]
    rows = [r.asDict(recursive=True) for r in log_stats(spark, str(log_dir)).collect()]
    assert [tuple(r) for r in rows] == [PARTITION_COLUMNS] * len(rows)
    assert [(r["topic"], r["partition"]) for r in rows] == [
        ("clicks", 0),
        ("orders", 0),
        ("orders", 1),
    ]
    by_key = {(e["topic"], e["partition"]): e for e in expected}
    for row in rows:
        _close(row, by_key[(row["topic"], row["partition"])], f"{row['topic']}-{row['partition']}")
    clicks = rows[0]
    assert clicks["damage"]["batches"] == 1
    (problem,) = clicks["damage"]["problems"]
    assert problem["file"] == str(log_dir / "clicks-0" / "00000000000000000000.log")
    assert problem["position"] > 0 and "crc32c" in problem["error"]
    assert rows[1]["files"] > 1  # several segments, summed by Spark


def test_log_stats_strict_fails_the_job(spark, log_dir):
    with pytest.raises(Exception, match="crc32c"):
        log_stats(spark, str(log_dir / "clicks-0"), strict=True).collect()


def test_record_stats_of_a_kafka_log_read(spark, log_dir):
    register(spark)
    df = (
        spark.read.format("kafka_log")
        .option("includeHeaders", "true")
        .option("mode", "DROPMALFORMED")  # skip the damaged batch, as stats does
        .load(str(log_dir))
    )
    expected = {(p.topic, p.partition): p.as_json() for p in runtime_stats(log_dir).partitions}
    rows = [r.asDict(recursive=True) for r in record_stats(df).collect()]
    assert len(rows) == 3
    for row in rows:
        e = expected[(row["topic"], row["partition"])]
        assert row["records"] == e["records"]
        assert row["keyBytes"] == e["sizes"]["keyBytes"]
        assert row["valueBytes"] == e["sizes"]["valueBytes"]
        assert row["headerKeyBytes"] == e["sizes"]["headerKeyBytes"]
        assert row["headerValueBytes"] == e["sizes"]["headerValueBytes"]
        assert row["headers"] == e["recordFields"]["headers"]
        assert row["nullKeys"] == e["recordFields"]["nullKeys"]
        assert row["nullValues"] == e["recordFields"]["nullValues"]
        assert row["timestamps"] == e["timestamps"]


def test_record_stats_of_a_selection(spark, log_dir):
    """A filtered read: the figures of just those records, counted here from the rows."""
    register(spark)
    df = spark.read.format("kafka_log").load(str(log_dir / "orders-1")).where("offset < 10")
    (row,) = record_stats(df).collect()
    records = df.select("key", "value").collect()
    assert row["records"] == len(records) == 10
    assert row["keyBytes"] == sum(len(r["key"] or b"") for r in records)
    assert row["nullValues"] == sum(r["value"] is None for r in records)
    assert row["headers"] is None  # read without includeHeaders: unknown, not 0


def test_log_stats_of_a_kafka_log_dataframe(spark, log_dir):
    """Given a kafka_log read, the log it was read from."""
    register(spark)
    df = spark.read.format("kafka_log").load(str(log_dir / "orders-1"))
    (row,) = log_stats(spark, df).collect()
    (expected,) = runtime_stats(log_dir / "orders-1").partitions
    assert (row["topic"], row["partition"], row["records"]) == ("orders", 1, expected.records)
    assert row["sizes"]["messageHeaderBytes"] == expected.message_header_bytes
