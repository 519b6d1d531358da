"""``spark.readStream.format("kafka_log")`` against logs that grow while the query runs.

Oracles: what :class:`~kafka_format.runtime.write.writer.PartitionWriter` says it wrote (its
``keep_records``, with each transaction's outcome), and a batch read of the final directory
(``spark.read.format("kafka_log")``). Streams run with real triggers, a real checkpoint and
real sinks (memory and parquet); a thread appends batches, rolls segments, opens a partition,
commits and aborts transactions while the query runs.
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from pathlib import Path

import pytest

pyspark = pytest.importorskip("pyspark")

from pyspark.errors import StreamingQueryException  # noqa: E402

from kafka_format.runtime.errors import KafkaFormatError  # noqa: E402
from kafka_format.runtime.format.codecs import Codec  # noqa: E402
from kafka_format.runtime.write.writer import Message, PartitionWriter, Producer  # noqa: E402
from kafka_format.spark_udfs import register  # noqa: E402
from kafka_format.spark_udfs._options import OptionError  # noqa: E402
from kafka_format.spark_udfs._reading import Counters  # noqa: E402
from kafka_format.spark_udfs.datasource import kafka_schema, output_for  # noqa: E402
from kafka_format.spark_udfs.streaming import KafkaLogStreamReader  # noqa: E402
from kafka_format.spark_udfs.streaming_offsets import (  # noqa: E402
    DataLossError,
    from_json,
    parse_stream_options,
    rate_limit,
    to_json,
)

T0 = 1_700_000_000_000
COLUMNS = ("topic", "partition", "offset", "key", "value")


@pytest.fixture(scope="module")
def kafka(spark):
    return register(spark)


def flush(writer: PartitionWriter) -> None:
    """Make what the writer appended visible to readers (a broker's writes are, through the
    page cache; the writer's file object buffers)."""
    writer._active.log.flush()


def writer(log_dir: Path, topic: str, partition: int, **kw) -> PartitionWriter:
    kw.setdefault("segment_bytes", 4096)
    kw.setdefault("index_interval_bytes", 512)
    return PartitionWriter(
        log_dir,
        topic,
        partition,
        keep_records=True,
        clock=itertools.count(T0, 1000).__next__,
        **kw,
    )


def written_rows(writers, keep=lambda r: True) -> list[tuple]:
    return sorted(
        (w.topic, w.partition, r.offset, r.key, r.value)
        for w in writers
        for r in w.records
        if keep(r)
    )


def rows(df) -> list[tuple]:
    return sorted(tuple(r) for r in df.select(*COLUMNS).collect())


def batch_rows(spark, path, **options) -> list[tuple]:
    reader = spark.read.format("kafka_log")
    for key, value in options.items():
        reader = reader.option(key, value)
    return rows(reader.load(str(path)))


def stream(spark, path, **options):
    reader = spark.readStream.format("kafka_log")
    for key, value in options.items():
        reader = reader.option(key, value)
    return reader.load(str(path))


def end_offsets(query) -> dict:
    offsets = query.lastProgress["sources"][0]["endOffset"]
    return json.loads(offsets) if isinstance(offsets, str) else offsets


def wait_for(predicate, timeout: float = 180.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.2)


# --- a log that grows under a running query, and a restart from the checkpoint -------------


def test_stream_follows_a_growing_log_and_restarts_without_duplicates(spark, kafka, tmp_path):
    log_dir = tmp_path / "logs"
    out, checkpoint = tmp_path / "out", tmp_path / "checkpoint"
    writers = [writer(log_dir, "orders", p, segment_bytes=2048) for p in (0, 1)]
    half_done, go_on = threading.Event(), threading.Event()
    failures: list[BaseException] = []

    def append_rounds() -> None:
        try:
            committed, aborted = Producer(1000), Producer(2000)
            for r in range(24):
                if r == 12:
                    half_done.set()
                    go_on.wait(120)
                if r == 14:  # a partition appears under the running query
                    writers.append(writer(log_dir, "orders", 2, segment_bytes=2048))
                for w in writers:
                    w.append(
                        [
                            Message(f"k{r}".encode(), f"{w.partition}/{r}/{i}".encode() * 8)
                            for i in range(6)
                        ],
                        codec=Codec.GZIP if r % 3 == 0 else Codec.NONE,
                    )
                if r == 5:
                    writers[0].append(
                        [Message(b"t", b"committed")], producer=committed, transactional=True
                    )
                if r == 7:
                    writers[0].commit(committed)
                    writers[1].append(
                        [Message(b"t", b"aborted")], producer=aborted, transactional=True
                    )
                if r == 9:
                    writers[1].abort(aborted)
                for w in writers:
                    flush(w)
                time.sleep(0.05)
        except BaseException as exc:  # reported by the test thread
            failures.append(exc)
            half_done.set()

    def start():
        return (
            stream(spark, log_dir, **{"kafka.isolation.level": "read_committed"})
            .writeStream.format("parquet")
            .option("path", str(out))
            .option("checkpointLocation", str(checkpoint))
            .trigger(processingTime="300 milliseconds")
            .start()
        )

    thread = threading.Thread(target=append_rounds, daemon=True)
    thread.start()
    first = start()
    try:
        assert half_done.wait(120)
        wait_for(lambda: any(p["numInputRows"] for p in first.recentProgress))
    finally:
        first.stop()
    seen_before_restart = end_offsets(first) if first.lastProgress else {}
    go_on.set()
    second = start()
    try:
        thread.join(120)
        assert not failures, failures
        for w in writers:
            w.close()
        second.processAllAvailable()
        ends = end_offsets(second)
    finally:
        second.stop()

    assert len(writers) == 3, "the new partition was written"
    assert ends == {"orders": {str(w.partition): w.next_offset for w in writers}}
    assert seen_before_restart["orders"]["0"] < writers[0].next_offset
    got = rows(spark.read.parquet(str(out)))
    assert len(got) == len({r[:3] for r in got}), "a row was written twice"
    assert got == written_rows(writers, lambda r: r.transaction_outcome != "abort")
    assert got == batch_rows(spark, log_dir, isolationLevel="read_committed")
    assert b"committed" in {r[4] for r in got} and b"aborted" not in {r[4] for r in got}
    assert any(len(w.segments) > 3 for w in writers), "segments rolled under the query"


# --- read_committed -------------------------------------------------------------------------


def test_read_committed_stops_at_an_open_transaction_until_it_commits(spark, kafka, tmp_path):
    log_dir = tmp_path / "logs"
    w = writer(log_dir, "txn", 0)
    slow, quick = Producer(1), Producer(2)
    for i in range(3):
        w.append([Message(b"k", f"before {i}".encode())])
    w.append(
        [Message(b"k", b"slow 1"), Message(b"k", b"slow 2")], producer=slow, transactional=True
    )
    open_at = w.records[-2].offset
    w.append([Message(b"k", b"after the open one")])
    flush(w)
    query = (
        stream(spark, log_dir, **{"kafka.isolation.level": "read_committed"})
        .writeStream.format("memory")
        .queryName("txn_stream")
        .trigger(processingTime="200 milliseconds")
        .start()
    )
    try:
        query.processAllAvailable()
        assert end_offsets(query) == {"txn": {"0": open_at}}
        before = rows(spark.table("txn_stream"))
        assert [r[4] for r in before] == [b"before 0", b"before 1", b"before 2"]

        w.append([Message(b"k", b"quick, aborted")], producer=quick, transactional=True)
        w.abort(quick)
        w.append([Message(b"k", b"slow 3")], producer=slow, transactional=True)
        w.commit(slow)
        w.append([Message(b"k", b"last")])
        w.close()
        query.processAllAvailable()
        assert end_offsets(query) == {"txn": {"0": w.next_offset}}
        got = rows(spark.table("txn_stream"))
    finally:
        query.stop()
    assert got == written_rows([w], lambda r: r.transaction_outcome != "abort")
    assert got == batch_rows(spark, log_dir, isolationLevel="read_committed")
    assert b"quick, aborted" not in {r[4] for r in got}
    assert b"slow 3" in {r[4] for r in got}


# --- retention under a running stream -------------------------------------------------------


def _delete_segments_below(partition_dir: Path, base_offset: int) -> None:
    for f in partition_dir.iterdir():
        stem = f.name.split(".")[0]
        kinds = (".log", ".index", ".timeindex", ".txnindex")
        if stem.isdigit() and f.suffix in kinds and int(stem) < base_offset:
            f.unlink()


def test_segments_deleted_under_the_stream_fail_it_unless_failOnDataLoss_false(
    spark, kafka, tmp_path
):
    log_dir, out, checkpoint = tmp_path / "logs", tmp_path / "out", tmp_path / "checkpoint"
    w = writer(log_dir, "aged", 0, segment_bytes=1024)
    for r in range(10):
        w.append([Message(b"k", f"first {r}".encode() * 10)])
    flush(w)

    def run(**options):
        query = (
            stream(spark, log_dir, **options)
            .writeStream.format("parquet")
            .option("path", str(out))
            .option("checkpointLocation", str(checkpoint))
            .trigger(availableNow=True)
            .start()
        )
        try:
            query.awaitTermination(120)
        finally:
            query.stop()

    run()
    consumed = w.next_offset
    assert len(rows(spark.read.parquet(str(out)))) == consumed
    for r in range(20):
        w.append([Message(b"k", f"second {r}".encode() * 10)])
    w.close()
    new_start = next(b for b in w.segments if b > consumed + 2)
    _delete_segments_below(log_dir / "aged-0", new_start)

    with pytest.raises(StreamingQueryException) as failed:
        run()
    message = str(failed.value)
    assert f"cannot read offset {consumed}" in message
    assert f"the log now starts at offset {new_start}" in message
    assert "failOnDataLoss" in message

    run(failOnDataLoss="false")
    got = rows(spark.read.parquet(str(out)))
    expected = written_rows([w], lambda r: r.offset < consumed or r.offset >= new_start)
    assert got == expected
    assert len(got) < len(w.records)


# --- admission control ----------------------------------------------------------------------


def test_max_offsets_per_trigger_splits_the_backlog(spark, kafka, tmp_path):
    log_dir = tmp_path / "logs"
    writers = [writer(log_dir, "limited", p) for p in (0, 1)]
    for w, n in zip(writers, (60, 20), strict=True):
        for i in range(n):
            w.append([Message(b"k", f"{w.partition}-{i}".encode())])
        w.close()
    query = (
        stream(spark, log_dir, maxOffsetsPerTrigger="25")
        .writeStream.format("memory")
        .queryName("limited_stream")
        .trigger(availableNow=True)
        .start()
    )
    try:
        query.awaitTermination(120)
        sizes = [p["numInputRows"] for p in query.recentProgress if p["numInputRows"]]
        got = rows(spark.table("limited_stream"))
    finally:
        query.stop()
    assert max(sizes) <= 25
    assert len(sizes) >= 4  # 80 offsets, at most 25 a micro-batch
    assert got == written_rows(writers)


# --- the reader's pieces, without a query -----------------------------------------------------


def reader(path, **options) -> KafkaLogStreamReader:
    parsed = parse_stream_options({"path": str(path), **options})
    return KafkaLogStreamReader(parsed, output_for(kafka_schema(), parsed.base), Counters())


def read_all(r: KafkaLogStreamReader, start: dict, end: dict) -> list[bytes]:
    values = []
    for split in r.partitions(start, end):
        for batch in r.read(split):
            values.extend(batch.column("value").to_pylist())
    return values


def test_a_batch_still_being_written_is_read_once_whole(tmp_path):
    w = writer(tmp_path, "tail", 0)
    for i in range(5):
        w.append([Message(b"k", f"v{i}".encode())])
    w.close()
    log = tmp_path / "tail-0" / "00000000000000000000.log"
    whole = log.read_bytes()
    last = whole[-(len(whole) // 5) :]
    # Another batch being appended: its first 30 bytes are on disk, the rest not yet.
    extra = bytearray(last)
    extra[0:8] = (5).to_bytes(8, "big")  # base offset 5
    log.write_bytes(whole + bytes(extra[:30]))
    r = reader(tmp_path)
    start = r.initialOffset()
    end = r.latestOffset(start, None)
    assert start == {"tail": {"0": 0}}
    assert end == {"tail": {"0": 5}}
    assert read_all(r, start, end) == [f"v{i}".encode() for i in range(5)]
    assert r.latestOffset(end, None) == end


def test_starting_offsets_latest_and_json(tmp_path):
    w = writer(tmp_path, "t", 0)
    for i in range(8):
        w.append([Message(b"k", f"v{i}".encode())])
    w.close()
    assert reader(tmp_path, startingOffsets="latest").initialOffset() == {"t": {"0": 8}}
    assert reader(tmp_path, startingOffsets='{"t":{"0":3}}').initialOffset() == {"t": {"0": 3}}
    r = reader(tmp_path, startingOffsets='{"t":{"0":-2}}')
    start = r.initialOffset()
    assert start == {"t": {"0": 0}}
    assert read_all(r, {"t": {"0": 3}}, {"t": {"0": 6}}) == [b"v3", b"v4", b"v5"]


def test_subscribe_and_assign_choose_the_partitions_a_stream_follows(tmp_path):
    for topic, partition in (("a", 0), ("a", 1), ("b", 0)):
        w = writer(tmp_path, topic, partition)
        for i in range(3):
            w.append([Message(b"k", f"{topic}{partition}-{i}".encode())])
        w.close()
    r = reader(tmp_path, subscribe="a")
    assert r.latestOffset(r.initialOffset(), None) == {"a": {"0": 3, "1": 3}}
    r = reader(tmp_path, assign='{"b":[0]}')
    end = r.latestOffset(r.initialOffset(), None)
    assert end == {"b": {"0": 3}}
    assert read_all(r, r.initialOffset(), end) == [b"b0-0", b"b0-1", b"b0-2"]


def test_stream_options_are_checked(tmp_path):
    with pytest.raises(OptionError, match="not valid in a streaming read"):
        parse_stream_options({"path": str(tmp_path), "endingOffsets": "latest"})
    with pytest.raises(OptionError, match="maxOffsetsPerTrigger"):
        parse_stream_options({"path": str(tmp_path), "maxoffsetspertrigger": "0"})
    with pytest.raises(OptionError, match="failOnDataLoss"):
        parse_stream_options({"path": str(tmp_path), "failondataloss": "maybe"})
    with pytest.raises(OptionError, match="disagree"):
        parse_stream_options(
            {
                "path": str(tmp_path),
                "isolationLevel": "read_uncommitted",
                "kafka.isolation.level": "read_committed",
            }
        )
    with pytest.raises(OptionError, match="in a stream also: startingOffsets"):
        parse_stream_options({"path": str(tmp_path), "maxRatePerPartition": "3"})
    parsed = parse_stream_options(
        {
            "path": str(tmp_path),
            "KAFKA.ISOLATION.LEVEL": "read_committed",
            "failOnDataLoss": "false",
        }
    )
    assert parsed.base.isolation == "read_committed"
    assert parsed.fail_on_data_loss is False


def test_offsets_round_trip_through_json_and_rate_limit_is_proportional():
    offsets = {("b", 10): 5, ("a", 2): 7, ("a", 0): 1}
    text = json.dumps(to_json(offsets))
    assert text == '{"a": {"0": 1, "2": 7}, "b": {"10": 5}}'
    assert from_json(json.loads(text)) == offsets
    assert from_json(text) == offsets
    # Spark's KafkaMicroBatchStream.rateLimit: 100 offsets over backlogs 300 and 100
    assert rate_limit({("t", 0): 0, ("t", 1): 0}, {("t", 0): 300, ("t", 1): 100}, 100) == {
        ("t", 0): 75,
        ("t", 1): 25,
    }
    # a share below one offset is rounded up, so that every partition moves
    assert rate_limit({("t", 0): 0, ("t", 1): 0}, {("t", 0): 1000, ("t", 1): 1}, 10) == {
        ("t", 0): 9,
        ("t", 1): 1,
    }


def test_a_deleted_partition_is_data_loss(tmp_path):
    w = writer(tmp_path, "t", 0)
    w.append([Message(b"k", b"v")])
    w.close()
    r = reader(tmp_path)
    with pytest.raises(DataLossError, match="t-1: the partition is gone"):
        r.partitions({"t": {"0": 0, "1": 4}}, {"t": {"0": 1}})
    lenient = reader(tmp_path, failOnDataLoss="false")
    assert read_all(lenient, {"t": {"0": 0, "1": 4}}, {"t": {"0": 1}}) == [b"v"]


def test_a_log_dir_with_no_partition_yet_is_an_empty_stream(tmp_path):
    r = reader(tmp_path)
    start = r.initialOffset()
    assert start == {}
    assert r.latestOffset(start, None) == {}
    w = writer(tmp_path, "late", 3)
    w.append([Message(b"k", b"first")])
    w.close()
    end = r.latestOffset(start, None)
    assert end == {"late": {"3": 1}}
    assert read_all(r, start, end) == [b"first"]
    with pytest.raises(KafkaFormatError, match="no such file or directory"):
        reader(tmp_path / "typo").initialOffset()


def _batches(log: Path) -> list[bytes]:
    data, out, pos = log.read_bytes(), [], 0
    while pos + 12 <= len(data):
        length = int.from_bytes(data[pos + 8 : pos + 12], "big")
        out.append(data[pos : pos + 12 + length])
        pos += 12 + length
    return out


def test_damage_at_the_end_fails_failfast_and_is_stepped_over_otherwise(tmp_path):
    source = writer(tmp_path / "a", "d", 0)
    for i in range(6):
        source.append([Message(b"k", f"v{i}".encode())])
    source.close()
    sixth = _batches(tmp_path / "a" / "d-0" / "00000000000000000000.log")[5]
    w = writer(tmp_path / "b", "d", 0)
    for i in range(5):
        w.append([Message(b"k", f"v{i}".encode())])
    w.close()
    log = tmp_path / "b" / "d-0" / "00000000000000000000.log"
    damaged_at = log.stat().st_size
    garbage = bytearray(sixth)
    garbage[16] = 7  # magic 7: no batch, and not a tail either (a whole batch follows)
    log.write_bytes(log.read_bytes() + bytes(garbage) + sixth)
    strict = reader(tmp_path / "b")
    start = strict.initialOffset()
    with pytest.raises(KafkaFormatError, match=rf"00000000000000000000.log @{damaged_at}"):
        strict.latestOffset(start, None)
    lenient = reader(tmp_path / "b", mode="DROPMALFORMED")
    end = lenient.latestOffset(lenient.initialOffset(), None)
    assert end == {"d": {"0": 6}}


def test_a_segment_rewritten_under_the_same_name_is_walked_again(tmp_path):
    w = writer(tmp_path / "a", "r", 0)
    for i in range(5):
        w.append([Message(b"k", f"v{i}".encode())])
    w.close()
    r = reader(tmp_path / "a")
    start = r.initialOffset()
    assert r.latestOffset(start, None) == {"r": {"0": 5}}
    # A follower truncated to offset 0 and fetched other batches (longer ones), same name.
    other = writer(tmp_path / "b", "r", 0)
    for i in range(8):
        other.append([Message(b"key", f"another value {i}".encode())])
    other.close()
    name = "r-0/00000000000000000000.log"
    (tmp_path / "a" / name).write_bytes((tmp_path / "b" / name).read_bytes())
    end = r.latestOffset(start, None)
    assert end == {"r": {"0": 8}}
    assert read_all(r, start, end) == [f"another value {i}".encode() for i in range(8)]
