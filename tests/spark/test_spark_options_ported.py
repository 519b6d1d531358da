"""Every option of Spark's Kafka source on ``kafka_log``: honoured where it means something
offline (``minPartitions``, ``maxRecordsPerPartition``, a stream's ``minOffsetsPerTrigger``
and ``maxTriggerDelay``), accepted with one WARNING where it needs a broker (``kafka.*``,
``groupIdPrefix``, ``fetchOffset.*``, ``kafkaConsumer.pollTimeoutMs``), as Spark's
``KafkaSourceProvider`` lists them. Oracle: the records the writer says it wrote, and the same
read without the option.
"""

from __future__ import annotations

import itertools
import logging
from pathlib import Path

import pytest

pytest.importorskip("pyspark")

from kafka_format.runtime.write.writer import Message, PartitionWriter
from kafka_format.spark_udfs import register
from kafka_format.spark_udfs._options import OptionError, parse_options
from kafka_format.spark_udfs._planning import plan
from kafka_format.spark_udfs._reading import Counters, read_split
from kafka_format.spark_udfs.datasource import kafka_schema, output_for
from kafka_format.spark_udfs.streaming import KafkaLogStreamReader
from kafka_format.spark_udfs.streaming_offsets import TriggerDelay, parse_stream_options

T0 = 1_700_000_000_000
#: KafkaSourceProvider's options that need a broker, a consumer or a consumer group.
BROKER_OPTIONS = {
    "kafka.bootstrap.servers": "host1:9092,host2:9092",
    "kafka.security.protocol": "SASL_SSL",
    "kafka.group.id": "ported",
    "groupIdPrefix": "spark-kafka-source",
    "fetchOffset.numRetries": "3",
    "fetchOffset.retryIntervalMs": "10",
    "kafkaConsumer.pollTimeoutMs": "120000",
}


def write(log_dir: Path, topic: str, partition: int, batches: int, per_batch: int = 5) -> list:
    clock = itertools.count(T0, 1000).__next__
    with PartitionWriter(
        log_dir, topic, partition, segment_bytes=4096, keep_records=True, clock=clock
    ) as w:
        for b in range(batches):
            w.append([Message(f"{b}-{i}".encode(), b"v" * 30) for i in range(per_batch)])
    return w.records


@pytest.fixture(scope="module")
def log_dir(tmp_path_factory) -> tuple[Path, dict]:
    root = tmp_path_factory.mktemp("ported")
    written = {
        ("topic1", 0): write(root, "topic1", 0, 60),
        ("topic1", 1): write(root, "topic1", 1, 4),
    }
    return root, written


def splits_rows(path: Path, **options) -> list[list[dict]]:
    opts = parse_options({"path": str(path), **options})
    out = output_for(kafka_schema(False), opts)
    result = []
    for split in plan(opts):
        rows = []
        for batch in read_split(split, opts, out, Counters()):
            rows.extend(batch.to_pylist())
        result.append(rows)
    return result


def offsets_of(splits: list[list[dict]]) -> list[tuple[str, int, int]]:
    return sorted((r["topic"], r["partition"], r["offset"]) for rows in splits for r in rows)


def test_broker_options_are_accepted_and_named_in_one_warning(caplog):
    opts = parse_options({"path": "/x", **BROKER_OPTIONS})
    assert set(opts.ignored) == set(BROKER_OPTIONS)
    with caplog.at_level(logging.WARNING, logger="kafka_format.spark_udfs"):
        opts.warn_ignored()
    (record,) = caplog.records
    assert all(name in record.getMessage() for name in BROKER_OPTIONS)
    # Spark lower-cases option keys: the warning still names them as documented
    lowered = parse_options({"path": "/x", "groupidprefix": "p", "fetchoffset.numretries": "3"})
    assert lowered.ignored == ("fetchOffset.numRetries", "groupIdPrefix")
    # a stream's rate options in a batch read: ignored with the warning, as Spark's source
    batch = parse_options({"path": "/x", "maxOffsetsPerTrigger": "5", "maxTriggerDelay": "1m"})
    assert batch.ignored == ("maxOffsetsPerTrigger", "maxTriggerDelay")
    assert parse_options({"path": "/x"}).ignored == ()


def test_an_unknown_option_is_still_refused():
    with pytest.raises(OptionError, match=r"unknown option 'maxRatePerPartition'.*kafka\.\*"):
        parse_options({"path": "/x", "maxRatePerPartition": "3"})
    with pytest.raises(OptionError, match="minPartitions must be a positive number"):
        parse_options({"path": "/x", "minPartitions": "0"})
    with pytest.raises(OptionError, match="maxRecordsPerPartition must be a positive number"):
        parse_options({"path": "/x", "maxRecordsPerPartition": "ten"})


def test_min_partitions_divides_the_larger_ranges(log_dir):
    root, written = log_dir
    plain = splits_rows(root)
    many = splits_rows(root, minPartitions="40")
    assert len(plain) < 40
    # a hint, as in Spark: about that many (cuts fall between batches of 5 records)
    assert len(many) >= 30
    assert offsets_of(many) == offsets_of(plain)
    assert len(offsets_of(many)) == sum(len(records) for records in written.values())
    # already enough: the plan is the plain one
    assert len(splits_rows(root, minPartitions="1")) == len(plain)


def test_max_records_per_partition_bounds_each_split(log_dir):
    root, _ = log_dir
    plain = splits_rows(root)
    bounded = splits_rows(root, maxRecordsPerPartition="20")
    assert offsets_of(bounded) == offsets_of(plain)
    total = len(offsets_of(plain))
    assert len(bounded) >= total // 20
    # by bytes per offset, cut between batches of 5: never far over the bound
    assert max(len(rows) for rows in bounded) <= 25
    assert max(len(rows) for rows in plain) > 25  # the bound is what cut them


def test_a_query_from_sparks_documentation_runs_with_its_options(spark, log_dir):
    """Spark's Kafka integration guide, "Creating a Kafka Source for Batch Queries", with
    only the format name and the path changed."""
    root, written = log_dir
    register(spark)
    df = (
        spark.read.format("kafka_log")
        .option("kafka.bootstrap.servers", "host1:port1,host2:port2")
        .option("subscribe", "topic1")
        .option("startingOffsets", """{"topic1":{"0":23,"1":-2}}""")
        .option("endingOffsets", """{"topic1":{"0":50,"1":-1}}""")
        .option("minPartitions", "4")
        .load(str(root))
    )
    got = sorted((r.partition, r.offset) for r in df.selectExpr("partition", "offset").collect())
    expected = sorted(
        [(0, r.offset) for r in written[("topic1", 0)] if 23 <= r.offset < 50]
        + [(1, r.offset) for r in written[("topic1", 1)]]
    )
    assert got == expected


# --- a stream's minOffsetsPerTrigger and maxTriggerDelay (KafkaMicroBatchStream.delayBatch) ---


def test_trigger_delay_is_sparks_rule():
    delay = TriggerDelay(min_offsets=10, max_delay_ms=60_000)
    starts = {("t", 0): 100, ("t", 1): 0}
    # the first trigger runs whatever there is (Spark's clock starts at 0)
    assert delay.delays(starts, {("t", 0): 101, ("t", 1): 0}, now_ms=T0) is False
    # then fewer than 10 new offsets wait...
    assert delay.delays(starts, {("t", 0): 105, ("t", 1): 4}, now_ms=T0 + 1_000) is True
    # ...10 or more run, and restart the delay's clock
    assert delay.delays(starts, {("t", 0): 105, ("t", 1): 5}, now_ms=T0 + 2_000) is False
    assert delay.delays(starts, {("t", 0): 101, ("t", 1): 0}, now_ms=T0 + 61_999) is True
    # maxTriggerDelay after the last batch: run with what there is
    assert delay.delays(starts, {("t", 0): 101, ("t", 1): 0}, now_ms=T0 + 62_000) is False
    # a partition new to the stream counts from 0, as Spark's getOrElse(topic, 0L)
    assert delay.delays({}, {("t", 2): 10}, now_ms=T0 + 63_000) is False


def test_stream_options_parse_sparks_durations(tmp_path):
    parsed = parse_stream_options(
        {"path": str(tmp_path), "minOffsetsPerTrigger": "100", "maxTriggerDelay": "30s"}
    )
    assert (parsed.min_offsets_per_trigger, parsed.max_trigger_delay_ms) == (100, 30_000)
    assert parse_stream_options({"path": str(tmp_path)}).max_trigger_delay_ms == 15 * 60_000
    assert parse_stream_options(
        {"path": str(tmp_path), "maxtriggerdelay": "250"}
    ).max_trigger_delay_ms == 250  # fmt: skip
    assert parse_stream_options({"path": str(tmp_path)}).base.ignored == ()
    with pytest.raises(OptionError, match="maxTriggerDelay must be a duration"):
        parse_stream_options({"path": str(tmp_path), "maxTriggerDelay": "soon"})


def test_a_stream_waits_for_min_offsets(tmp_path):
    w = PartitionWriter(tmp_path, "t", 0)
    w.append([Message(b"k", b"v0")])
    w.close()
    parsed = parse_stream_options(
        {"path": str(tmp_path), "minOffsetsPerTrigger": "3", "maxTriggerDelay": "1h"}
    )
    r = KafkaLogStreamReader(parsed, output_for(kafka_schema(), parsed.base), Counters())
    start = r.initialOffset()
    first = r.latestOffset(start, None)
    assert first == {"t": {"0": 1}}  # the first trigger runs
    # new data arrives in new partitions (a writer appends to a directory it creates)
    w2 = PartitionWriter(tmp_path, "t", 1)
    w2.append([Message(b"k", b"a"), Message(b"k", b"b")])
    w2.close()
    # two new offsets < 3: the same offsets again, Spark skips the trigger
    assert r.latestOffset(first, None) == first
    w3 = PartitionWriter(tmp_path, "t", 2)
    w3.append([Message(b"k", b"c")])
    w3.close()
    assert r.latestOffset(first, None) == {"t": {"0": 1, "1": 2, "2": 1}}
