"""Spark's Kafka-source option names on ``kafka_log``, with Spark's semantics.

``kafka.isolation.level``, ``failOnDataLoss``, ``subscribe`` / ``subscribePattern`` /
``assign``, ``startingOffsetsByTimestampStrategy``, ``maxOffsetsPerTrigger``, and ``s3a://``
paths. Planned and read in-process as the tasks read (fast), and once through a real
SparkSession, so that what a user sees is checked too. Oracle: the records the writer says it
wrote (and which of them a read_committed consumer receives).
"""

from __future__ import annotations

import itertools
from pathlib import Path

import pyarrow.fs as pafs
import pytest

pytest.importorskip("pyspark")

from kafka_format.runtime.errors import KafkaFormatError
from kafka_format.runtime.write.writer import Message, PartitionWriter
from kafka_format.spark_udfs import register
from kafka_format.spark_udfs._dataloss import DataLossError
from kafka_format.spark_udfs._fs import locate
from kafka_format.spark_udfs._options import OptionError, parse_options
from kafka_format.spark_udfs._planning import Planner
from kafka_format.spark_udfs._reading import Counters, read_split
from kafka_format.spark_udfs.datasource import kafka_schema, output_for

T0 = 1_700_000_000_000
TOPICS = (("orders", 0), ("orders", 1), ("orders-eu", 0), ("users", 0))


def write(log_dir: Path, topic: str, partition: int, batches: int = 10) -> list:
    clock = itertools.count(T0, 1000).__next__
    with PartitionWriter(
        log_dir, topic, partition, segment_bytes=2048, keep_records=True, clock=clock
    ) as w:
        for b in range(batches):
            w.append([Message(f"{topic}{b}-{i}".encode(), b"v" * 20) for i in range(5)])
    return w.records


@pytest.fixture(scope="module")
def log_dir(tmp_path_factory) -> tuple[Path, dict]:
    root = tmp_path_factory.mktemp("logs")
    written = {tp: write(root, *tp) for tp in TOPICS}
    return root, written


def read(path, **options) -> list[dict]:
    opts = parse_options({"path": str(path), **options})
    out = output_for(kafka_schema(False), opts)
    rows = []
    for split in Planner(opts).plan():
        for batch in read_split(split, opts, out, Counters()):
            rows.extend(batch.to_pylist())
    return rows


def partitions_of(rows) -> set[tuple[str, int]]:
    return {(r["topic"], r["partition"]) for r in rows}


# --- names ------------------------------------------------------------------------------------


def test_kafka_isolation_level_is_isolation_level():
    assert parse_options({"path": "/x", "kafka.isolation.level": "read_committed"}).isolation == (
        "read_committed"
    )
    # Spark lower-cases option keys: any spelling is the same option.
    assert parse_options({"path": "/x", "KAFKA.ISOLATION.LEVEL": "read_committed"}).isolation == (
        "read_committed"
    )
    same = {"path": "/x", "kafka.isolation.level": "read_committed"}
    assert parse_options({**same, "isolationLevel": "read_committed"}).isolation == "read_committed"
    with pytest.raises(OptionError, match="isolationLevel is given twice"):
        parse_options({**same, "isolationLevel": "read_uncommitted"})
    with pytest.raises(
        OptionError, match=r"known options: .*, failOnDataLoss, .*, kafka\.isolation\.level;"
    ):
        parse_options({"path": "/x", "isolation.bogus": "read_committed"})


def test_defaults_are_spark_kafka_sources():
    opts = parse_options({"path": "/x"})
    assert opts.fail_on_data_loss is True
    assert opts.topics.kind == "all"
    assert (opts.min_partitions, opts.max_records_per_partition, opts.ignored) == (None, None, ())
    # a stream's option in a batch read: ignored, with a warning, as Spark's source does
    assert parse_options({"path": "/x", "maxOffsetsPerTrigger": "1000"}).ignored == (
        "maxOffsetsPerTrigger",
    )
    with pytest.raises(OptionError, match="failOnDataLoss must be true or false"):
        parse_options({"path": "/x", "failOnDataLoss": "maybe"})
    with pytest.raises(OptionError, match="startingOffsetsByTimestampStrategy"):
        parse_options({"path": "/x", "startingOffsetsByTimestampStrategy": "earliest"})
    assert parse_options({"path": "/x"}).timestamp_strategy == "error"  # Spark's default


def test_a_ported_querys_bootstrap_servers_is_ignored_and_said(caplog):
    # Spark's Kafka source needs kafka.bootstrap.servers; here the path is the log.
    opts = parse_options({"path": "/x", "kafka.bootstrap.servers": "broker:9092"})
    assert opts.path == "/x"
    with caplog.at_level("WARNING", logger="kafka_format.spark_udfs"):
        opts.warn_ignored()
    assert "option(s) kafka.bootstrap.servers ignored in this read" in caplog.text


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"subscribe": "a", "assign": '{"a":[0]}'}, "only one of the options"),
        ({"subscribe": "a", "subscribePattern": "a.*"}, "only one of the options"),
        ({"subscribe": " , "}, "subscribe must name topics"),
        ({"subscribePattern": "(unclosed"}, "not a pattern"),
        ({"assign": '{"a":0}'}, "assign must be JSON"),
        ({"assign": '{"a":[-1]}'}, "assign must be JSON"),
        ({"assign": "[0, 1]"}, "assign must be JSON"),
    ],
)
def test_topic_options_are_checked(options, message):
    with pytest.raises(OptionError, match=message):
        parse_options({"path": "/x", **options})


# --- subscribe / subscribePattern / assign ----------------------------------------------------


def test_subscribe_reads_the_named_topics(log_dir):
    root, written = log_dir
    rows = read(root, subscribe="orders, users")
    assert partitions_of(rows) == {("orders", 0), ("orders", 1), ("users", 0)}
    assert len(rows) == sum(len(written[tp]) for tp in partitions_of(rows))
    assert partitions_of(read(root, subscribe="nothing-here")) == set()


def test_subscribe_pattern_matches_whole_names(log_dir):
    root, _ = log_dir
    assert partitions_of(read(root, subscribePattern="orders.*")) == {
        ("orders", 0),
        ("orders", 1),
        ("orders-eu", 0),
    }
    # Kafka matches the whole topic name (Pattern.matcher(topic).matches()), not a prefix.
    assert partitions_of(read(root, subscribePattern="order")) == set()
    assert partitions_of(read(root, subscribePattern="users|orders")) == {
        ("orders", 0),
        ("orders", 1),
        ("users", 0),
    }


def test_assign_reads_exactly_those_partitions(log_dir):
    root, written = log_dir
    rows = read(root, assign='{"orders":[1],"users":[0]}')
    assert partitions_of(rows) == {("orders", 1), ("users", 0)}
    offsets = sorted((r["topic"], r["offset"]) for r in rows if r["topic"] == "orders")
    assert offsets == [("orders", r.offset) for r in written[("orders", 1)]]
    with pytest.raises(KafkaFormatError, match="orders-7"):
        read(root, assign='{"orders":[0,7]}')


# --- failOnDataLoss -----------------------------------------------------------------------------


@pytest.fixture
def trimmed(tmp_path) -> tuple[Path, list]:
    """A partition whose log start offset (the checkpoint) is 20: records 0..19 are gone."""
    records = write(tmp_path, "t", 0)
    (tmp_path / "log-start-offset-checkpoint").write_text("0\n1\nt 0 20\n")
    return tmp_path / "t-0", records


def test_start_below_the_log_start_fails_by_default(trimmed):
    path, _ = trimmed
    with pytest.raises(DataLossError) as info:
        read(path, startingOffsets="5")
    message = str(info.value)
    assert "t-0" in message and "log start offset 20" in message
    assert "failOnDataLoss" in message and "\n" not in message


def test_start_below_the_log_start_clamps_without_fail_on_data_loss(trimmed, caplog):
    path, records = trimmed
    rows = read(path, startingOffsets="5", failOnDataLoss="false")
    assert [r["offset"] for r in rows] == [r.offset for r in records if r.offset >= 20]
    assert "failOnDataLoss=false" in caplog.text
    # Per partition, JSON form, and -2 (earliest) never counts as data loss.
    assert read(path, startingOffsets='{"t":{"0":-2}}')
    with pytest.raises(DataLossError):
        read(path, startingOffsets='{"t":{"0":3}}')


def test_start_past_the_log_end(trimmed):
    path, records = trimmed
    end = records[-1].offset + 1
    assert read(path, startingOffsets=str(end)) == []  # at the end: nothing, no loss
    with pytest.raises(DataLossError, match=f"past its log end offset {end}"):
        read(path, startingOffsets=str(end + 1))
    assert read(path, startingOffsets=str(end + 1), failOnDataLoss="false") == []


def test_starting_timestamp_strategy(trimmed):
    path, _ = trimmed
    late = str(T0 + 10**9)
    with pytest.raises(KafkaFormatError, match="startingOffsetsByTimestampStrategy=error"):
        read(path, startingTimestamp=late)  # Spark's default: error
    assert read(path, startingTimestamp=late, startingOffsetsByTimestampStrategy="latest") == []
    with pytest.raises(KafkaFormatError, match="startingOffsetsByTimestampStrategy=error"):
        read(path, startingTimestamp=late, startingOffsetsByTimestampStrategy="ERROR")
    found = read(path, startingTimestamp=str(T0 + 5000), startingOffsetsByTimestampStrategy="error")
    assert found and found[0]["offset"] == 25


# --- s3a:// -------------------------------------------------------------------------------------


@pytest.mark.parametrize("scheme", ["s3a", "s3n", "S3A"])
def test_hadoop_s3_schemes_open_pyarrows_s3(scheme):
    # region given, so that nothing is asked of the network to build the filesystem.
    uri = f"{scheme}://bucket/kafka/orders-*?region=us-east-1&endpoint_override=127.0.0.1:9"
    ref, fs, path = locate(uri)
    assert isinstance(fs, pafs.S3FileSystem)
    assert path == "bucket/kafka/orders-*"
    assert ref.uri is not None and ref.uri.startswith("s3://bucket/kafka?")
    assert ref.display("bucket/kafka/orders-0/x.log") == "s3://bucket/kafka/orders-0/x.log"


# --- through Spark ------------------------------------------------------------------------------


def test_spark_kafka_options_through_a_session(spark, log_dir, trimmed):
    register(spark)
    root, written = log_dir
    df = (
        spark.read.format("kafka_log")
        .option("kafka.isolation.level", "read_committed")
        .option("subscribePattern", "orders")
        .option("failOnDataLoss", "false")
        .option("maxOffsetsPerTrigger", "100")
        .load(str(root))
    )
    counts = {
        (r.topic, r.partition): r["count"]
        for r in df.groupBy("topic", "partition").count().collect()
    }
    assert counts == {tp: len(written[tp]) for tp in (("orders", 0), ("orders", 1))}
    path, _ = trimmed
    with pytest.raises(Exception) as info:
        spark.read.format("kafka_log").option("startingOffsets", "5").load(str(path)).count()
    assert "failOnDataLoss" in str(info.value) and "log start offset 20" in str(info.value)
