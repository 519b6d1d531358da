"""The ``kafka_log`` sink (``spark_udfs/sink.py``) through a real local SparkSession.

Oracles: the rows the ``kafka_log`` source reads from the source directory (written by the
runtime's ``PartitionWriter``), kafka-python reading the written ``.log`` files batch by batch,
and ``kafka-format verify`` on the written log dir.
"""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest

pyspark = pytest.importorskip("pyspark")

from kafka.record import MemoryRecords  # noqa: E402
from pyspark.sql import functions as F  # noqa: E402

from kafka_format.runtime.cli import main as cli  # noqa: E402
from kafka_format.runtime.files.checkpoints import (  # noqa: E402
    TopicPartition,
    read_offset_checkpoint,
    read_partition_metadata,
)
from kafka_format.runtime.format.codecs import Codec  # noqa: E402
from kafka_format.runtime.model import TimestampType  # noqa: E402
from kafka_format.runtime.read.columnar import read_table  # noqa: E402
from kafka_format.runtime.write.generate import generate_log_dir  # noqa: E402
from kafka_format.runtime.write.writer import Message, PartitionWriter  # noqa: E402
from kafka_format.spark_udfs import register  # noqa: E402
from kafka_format.spark_udfs._options import OptionError  # noqa: E402
from kafka_format.spark_udfs.sink import SinkCommitMessage, writer_for  # noqa: E402

T0 = 1_700_000_000_000
DOC = Path(__file__).resolve().parents[2] / "docs" / "spark-sink.md"
STAGING = ".kafka_log-staging"
TOPIC_ID = "AAAAAAAAAAAAAAAAAAAAAQ"


@pytest.fixture(scope="module")
def kafka(spark):
    return register(spark)


def _source(root: Path) -> None:
    """orders-0 (three segments: gaps, headers, null keys and values, gzip), orders-1 (from
    offset 40), clicks-0 (LogAppendTime)."""
    rng = random.Random(7)
    with PartitionWriter(root, "orders", 0, segment_bytes=1500) as w:
        offset = 0
        for b in range(12):
            messages = []
            for i in range(5):
                headers = [("trace", rng.randbytes(4)), ("empty", None)] if i % 2 else []
                messages.append(
                    Message(
                        key=None if i == 3 else f"cust-{(b + i) % 4}".encode(),
                        value=None if i == 4 and b % 3 == 0 else rng.randbytes(40),
                        headers=headers,
                        timestamp=T0 + 1000 * b + i,
                        offset_delta=2 * i,  # a gap after each record, as compaction leaves
                    )
                )
            w.append(messages, base_offset=offset, codec=Codec.GZIP if b % 2 else Codec.NONE)
            offset += 13  # and a gap between batches
    with PartitionWriter(root, "orders", 1, start_offset=40) as w:
        w.append([Message(b"cust-1", rng.randbytes(20), timestamp=T0 + i) for i in range(6)])
    times = iter(range(T0 + 5000, T0 + 6000, 100))
    with PartitionWriter(
        root, "clicks", 0, timestamp_type=TimestampType.LOG_APPEND_TIME, clock=lambda: next(times)
    ) as w:
        for _ in range(3):
            w.append([Message(b"page", rng.randbytes(10), timestamp=T0) for _ in range(4)])


@pytest.fixture(scope="module")
def source(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("sink-source")
    _source(root)
    return root


def load(spark, path, **options):
    reader = spark.read.format("kafka_log").option("includeHeaders", "true")
    for key, value in options.items():
        reader = reader.option(key, value)
    return reader.load(str(path))


def save(df, path, mode="overwrite", **options):
    writer = df.write.format("kafka_log").mode(mode)
    for key, value in options.items():
        writer = writer.option(key, value)
    writer.save(str(path))


def rows_of(df) -> list[tuple]:
    picked = df.select(
        "topic", "partition", "offset", "key", "value", F.unix_millis("timestamp").alias("ms"),
        "timestampType", "headers",
    )  # fmt: skip
    out = [
        (
            r.topic,
            r.partition,
            r.offset,
            r.key,
            r.value,
            r.ms,
            r.timestampType,
            tuple((h.key, h.value) for h in r.headers or ()),
        )
        for r in picked.collect()
    ]
    return sorted(out, key=lambda t: (t[0], t[1], t[2]))


def peer_batches(partition: Path) -> list:
    """kafka-python's batches of every segment, in offset order."""
    out = []
    for log in sorted(partition.glob("*.log")):
        reader = MemoryRecords(log.read_bytes())
        while (batch := reader.next_batch()) is not None:
            assert batch.validate_crc()
            out.append(batch)
    return out


def peer_rows(root: Path) -> list[tuple]:
    out = []
    for partition in sorted(p for p in root.iterdir() if p.is_dir()):
        topic, number = partition.name.rsplit("-", 1)
        for batch in peer_batches(partition):
            out += [
                (
                    topic,
                    int(number),
                    r.offset,
                    r.key,
                    r.value,
                    r.timestamp,
                    batch.timestamp_type,
                    tuple(r.headers),
                )
                for r in batch
            ]
    return sorted(out, key=lambda t: (t[0], t[1], t[2]))


def partition_dirs(root: Path) -> list[str]:
    return sorted(p.name for p in root.iterdir() if p.is_dir()) if root.exists() else []


@pytest.fixture(scope="module")
def source_df(spark, kafka, source):
    """The source read once (cached: each write below reads it from memory), a task a
    segment: a split counts 256 KiB more when small ones are packed (_planning.tasks), so no
    two fit in 300 KiB."""
    return load(spark, source, maxBytesPerPartition="300k").cache()


@pytest.fixture(scope="module")
def expected(source_df) -> list[tuple]:
    rows = rows_of(source_df)
    assert {r[0] for r in rows} == {"orders", "clicks"}
    assert any(r[3] is None for r in rows) and any(r[4] is None for r in rows)
    assert any(r[7] for r in rows) and any(r[6] == 1 for r in rows)
    return rows


def of(rows: list[tuple], topic: str, partition: int | None = None) -> list[tuple]:
    return [r for r in rows if r[0] == topic and partition in (None, r[1])]


@pytest.fixture(scope="module")
def written(source_df, expected, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("sink-out") / "logs"
    # the source read split orders-0 (three segments): several tasks each stage a piece
    assert source_df.rdd.getNumPartitions() > 3
    save(source_df, out, compression="zstd", segmentBytes="1200", indexIntervalBytes="200",
         recordsPerBatch="7", topicIds=f'{{"orders": "{TOPIC_ID}"}}')  # fmt: skip
    return out


def test_round_trip_reads_the_same_rows(spark, written, expected):
    assert rows_of(load(spark, written)) == expected
    assert partition_dirs(written) == ["clicks-0", "orders-0", "orders-1"]


def test_kafka_python_reads_the_segments(written, expected):
    assert peer_rows(written) == expected
    batches = peer_batches(written / "orders-0")
    assert {b.compression_type for b in batches} == {Codec.ZSTD}
    assert max(b.records_count for b in batches) == 7
    clicks = peer_batches(written / "clicks-0")
    assert {b.timestamp_type for b in clicks} == {1}
    # a LogAppendTime batch holds one append time, as the broker stamped it
    assert [b.max_timestamp for b in clicks] == [T0 + 5000, T0 + 5100, T0 + 5200]


def test_written_log_dir_verifies_clean_and_has_checkpoints(written, capsys):
    assert cli(["verify", str(written)]) == 0
    assert " 0 errors, 0 warnings" in capsys.readouterr().out
    recovery = read_offset_checkpoint(written / "recovery-point-offset-checkpoint")
    ends = {TopicPartition("orders", 0): 11 * 13 + 9, TopicPartition("orders", 1): 46,
            TopicPartition("clicks", 0): 12}  # fmt: skip
    assert recovery == ends
    assert read_offset_checkpoint(written / "replication-offset-checkpoint") == ends
    assert read_offset_checkpoint(written / "log-start-offset-checkpoint") == {}
    assert read_offset_checkpoint(written / "cleaner-offset-checkpoint") == {}
    metadata = read_partition_metadata(written / "orders-1" / "partition.metadata")
    assert metadata.topic_id == TOPIC_ID
    assert not (written / "clicks-0" / "partition.metadata").exists()
    assert (written / "orders-1" / "leader-epoch-checkpoint").read_text() == "0\n1\n0 40\n"
    assert not (written / STAGING).exists()


def test_segment_bytes_rolls_and_indexes_are_written(written):
    segments = sorted((written / "orders-0").glob("*.log"))
    assert len(segments) >= 4
    assert all(s.stat().st_size <= 1200 for s in segments)
    assert any(i.stat().st_size > 0 for i in (written / "orders-0").glob("*.index"))
    # each segment is named by the base offset of its first batch, gaps and all
    assert segments[0].name == "00000000000000000000.log"
    for segment in segments:
        first = MemoryRecords(segment.read_bytes()).next_batch()
        assert first.base_offset == int(segment.stem)


def test_interleaved_pieces_fail_the_commit_and_leave_nothing(source_df, expected, tmp_path):
    out = tmp_path / "logs"
    df = source_df.where("topic = 'orders'")
    with pytest.raises(Exception, match="overlapping offsets"):
        save(df.repartition(3), out)
    assert partition_dirs(out) == []  # no topic-N and no staging directory either
    save(df.repartition(3, "topic", "partition"), out)
    assert peer_rows(out) == of(expected, "orders")


def test_a_failing_task_leaves_no_partition_and_no_staging(source_df, tmp_path):
    out = tmp_path / "logs"
    df = source_df.withColumn(
        "topic", F.when(F.col("offset") == 2, F.lit(None)).otherwise(F.col("topic"))
    )
    with pytest.raises(Exception, match=r"a row \(offset 2\) has a null topic"):
        save(df, out)
    assert partition_dirs(out) == []
    assert not (out / STAGING).exists()


def test_options_give_a_missing_topic_and_partition(source_df, expected, tmp_path):
    out = tmp_path / "logs"
    df = source_df.where("topic = 'orders' AND partition = 1").drop("partition")
    df = df.withColumn("topic", F.lit(None).cast("string"))
    save(df, out, topic="restored", partition="3")
    assert peer_rows(out) == [("restored", 3, *r[2:]) for r in of(expected, "orders", 1)]


def test_duplicate_offsets_are_refused(source_df, tmp_path):
    out = tmp_path / "logs"
    df = source_df.where("topic = 'orders' AND partition = 1")
    with pytest.raises(Exception, match="orders-1 has offset 40 twice"):
        save(df.union(df).coalesce(1), out)
    assert partition_dirs(out) == []


def test_overwrite_replaces_only_the_partitions_written_and_append_refuses(
    source_df, expected, tmp_path
):
    out = tmp_path / "logs"
    save(source_df.where("topic = 'clicks'"), out, mode="append")
    save(source_df.where("topic = 'orders'"), out, mode="append")
    assert peer_rows(out) == expected
    with pytest.raises(Exception, match=r"mode\('append'\).*orders-1"):
        save(source_df.where("topic = 'orders' AND partition = 1"), out, mode="append")

    # a deletion request: drop one customer's records from orders-0, by key
    kept = "topic = 'orders' AND partition = 0 AND (key IS NULL OR key != X'637573742d32')"
    save(source_df.where(kept), out, mode="overwrite")
    redacted = [r for r in expected if r[:2] != ("orders", 0) or r[3] != b"cust-2"]
    assert len(redacted) < len(expected)
    # orders-0 replaced; the other partitions as they were, checkpoint entries and all
    assert peer_rows(out) == redacted
    assert partition_dirs(out) == ["clicks-0", "orders-0", "orders-1"]
    recovery = read_offset_checkpoint(out / "recovery-point-offset-checkpoint")
    assert recovery == {TopicPartition("clicks", 0): 12, TopicPartition("orders", 0): 11 * 13 + 9,
                        TopicPartition("orders", 1): 46}  # fmt: skip


def test_schema_and_options_are_checked_before_any_task(source_df, tmp_path):
    out = tmp_path / "logs"
    with pytest.raises(Exception, match="column 'extra' is not a column kafka_log writes"):
        save(source_df.withColumn("extra", F.lit(1)), out)  # through Spark: on the driver
    options = {"path": str(out)}
    schema = source_df.schema
    with pytest.raises(OptionError, match="column 'offset' must be bigint"):
        writer_for(options, source_df.withColumn("offset", F.col("offset").cast("int")).schema,
                   False)  # fmt: skip
    with pytest.raises(OptionError, match=r"needs the column\(s\) timestampType"):
        writer_for(options, source_df.drop("timestampType").schema, False)
    with pytest.raises(OptionError, match=r"needs the column\(s\) topic \(or the option"):
        writer_for(options, source_df.drop("topic").schema, False)
    # accepted: a writer Spark then commits or aborts (it stages in the target until then)
    writer_for({**options, "topic": "t"}, source_df.drop("topic").schema, False).abort([])
    with pytest.raises(OptionError, match="option compression must be one of"):
        writer_for({**options, "compression": "brotli"}, schema, False)
    with pytest.raises(OptionError, match="unknown option 'segmentSize'"):
        writer_for({**options, "segmentSize": "1m"}, schema, False)
    with pytest.raises(OptionError, match="'no/such' is not a legal Kafka topic name"):
        writer_for({**options, "topic": "no/such"}, schema, False)
    with pytest.raises(OptionError, match="not 's3://bucket/logs'"):
        writer_for({"path": "s3://bucket/logs"}, schema, False)
    with pytest.raises(OptionError, match="option topicIds"):
        writer_for({**options, "topicIds": '{"orders": "nope"}'}, schema, False)
    # no rows: nothing is written, not even the log dir's checkpoints
    writer_for(options, schema, True).commit([SinkCommitMessage(), None])
    assert not out.exists()


def test_the_worked_example_runs_on_the_demo_data(spark, kafka, tmp_path, capsys):
    text = DOC.read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    assert len(blocks) == 2
    assert "kafka-format verify demo-out/restored-logs" in text
    backup, restored = tmp_path / "kafka-logs", tmp_path / "restored-logs"
    generate_log_dir(backup, seed=42)  # as `make demo` does
    namespace: dict = {}
    for i, block in enumerate(blocks):
        code = block.replace("demo-out/kafka-logs", str(backup))
        code = code.replace("demo-out/restored-logs", str(restored))
        exec(compile(code, str(DOC), "exec"), namespace)
        if i == 0:
            assert cli(["verify", str(restored)]) == 0
            assert " 0 errors, 0 warnings" in capsys.readouterr().out
    forget = namespace["forget"]
    assert namespace["seen"] > 0
    # the runtime's reader, without Spark: every committed record but the key's is there, at
    # its offset, with its key, value, headers and (but for v0's none) timestamp and type
    before = _records(read_table(str(backup), isolation="read_committed", include_headers=True))
    after = _records(read_table(str(restored), include_headers=True))
    gone = [r for r in before if r[0] == "orders" and r[3] == forget]
    assert gone
    assert after == [r for r in before if r not in gone]
    assert {r[5] for r in after} == {0, 1}  # CreateTime, and LogAppendTime kept


def _records(table) -> list[tuple]:
    """(topic, partition, offset, key, value, timestamp type, headers), v0's type -1 taken as
    the CreateTime it becomes."""
    columns = ("topic", "partition", "offset", "key", "value", "timestampType", "headers")
    rows = zip(*(table.column(c).to_pylist() for c in columns), strict=True)
    return sorted(
        (t, p, o, k, v, max(tt, 0), tuple((h["key"], h["value"]) for h in hs or ()))
        for t, p, o, k, v, tt, hs in rows
    )
