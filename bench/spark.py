"""The Spark comparison of issue 6: ``kafka_log`` against the pipeline a user writes today.

One local[2] session (:data:`SESSION_CONF`) runs every pipeline over one generated log
directory: topic ``bench``, two partitions, v2 batches of 1000 records (a short key, a 100-byte
value, one header), segments of 128 MiB; 2 GiB and ~14.6 M records in all.

- ``kafka_log``: ``spark.read.format("kafka_log").load(dir)`` over the whole directory, its
  default schema (Spark's Kafka source columns, all of which it decodes and hands to Spark).
- ``kafka_log`` with a schema of only ``topic`` and ``partition`` (``.schema(...)``): what a
  query that needs no keys and values can ask for; the records are still read, decoded and
  CRC-checked, but Spark gets two columns instead of seven.
- binaryFile + a kafka-python UDF, the pipeline a user writes today: ``binaryFile`` over the
  ``.log`` files and a plain Python UDF that walks each file's content with kafka-python's
  ``MemoryRecords`` (checking CRCs, as its consumer does by default). Either it returns the
  records, exploded into the columns ``kafka_log`` gives (key, value, topic and partition from
  the file's path, offset, timestamp, timestampType), or it only counts them per file, the
  least such a pipeline can do. Both read a subset of the segment files, one per partition:
  at ~0.1 M records/s the whole directory would take minutes, and rates are per record.
- ``kafka_log`` over that same subset, so that its rate is also known on the very same bytes.

Each pipeline answers ``count()`` and ``groupBy("topic", "partition").count()``, and every
answer is checked against the records the generator wrote. The first run of each query is
reported apart (the session's first ``kafka_log`` query also starts the Python workers, which
import the package and load the numba kernels); then the best of ``runs`` more.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypedDict

from kafka_format.runtime.write.generate import generate_log_dir

MIB = 1 << 20
GIB = 1 << 30
CORES = 2
FULL = {"size": 2 * GIB, "segment": 128 * MIB, "runs": 3, "queries": ("count", "group-by")}
#: A smoke run: one query (the one whose answer says the most), run once.
QUICK = {"size": 4 * MIB, "segment": 1 * MIB, "runs": 0, "queries": ("group-by",)}

#: The one session's settings, for every pipeline alike. The driver is the only executor in
#: local mode: 6 GiB of heap, because the baseline holds a whole segment file in one row and
#: its UDF's output for that file (two at a time: ~1 GiB each). Arrow's Java bounds checks
#: off: Spark reads every value of every Arrow batch a Python data source returns.
SESSION_CONF = {
    "spark.driver.memory": "6g",
    "spark.driver.extraJavaOptions": "-Darrow.enable_unsafe_memory_access=true",
    "spark.ui.showConsoleProgress": "false",
}

KAFKA_LOG = "kafka_log"
KAFKA_LOG_NARROW = "kafka_log, schema `topic string, partition int`"
UDF_RECORDS = "binaryFile + kafka-python UDF returning the records"
UDF_COUNTS = "binaryFile + kafka-python UDF counting the records"
QUERIES = ("count", "group-by")

_NARROW_SCHEMA = "topic string, partition int"
#: The baseline UDF's records: the columns kafka_log has that are not the file's to give.
_RECORDS_TYPE = (
    "array<struct<key:binary,value:binary,offset:bigint,timestamp:bigint,timestampType:int>>"
)
# binaryFile's path column: ``file:/.../bench-0/00000000000000000000.log``.
_PATH_PATTERN = r"([^/]+)-([0-9]+)/[0-9]+\.log$"


class SparkRow(TypedDict):
    pipeline: str  # KAFKA_LOG, KAFKA_LOG_NARROW, UDF_RECORDS or UDF_COUNTS
    query: str  # "count" or "group-by"
    input: str  # what was read, e.g. "all: 16 segment files, 2.00 GiB"
    subset: bool  # True: a subset of the log directory
    records: int
    first_seconds: float  # the first run of this query on this input in the session
    seconds: float  # the best of ``runs`` runs after the first (the first when runs is 0)
    runs: int
    #: the machine's 1-minute load average before and after this query's runs (which load
    #: both cores themselves): more than that means something else shared the two cores
    load: tuple[float, float]


@dataclass(slots=True)
class _Input:
    label: str
    subset: bool
    kafka_log_path: str  # the directory, or a glob of the subset's files
    files: list[str]
    #: records per (topic, partition), as the generator wrote them
    expected: dict[tuple[str, int], int]


def run(
    workdir: Path,
    *,
    quick: bool,
    spark: Any = None,
    log: Callable[[str], None] | None = None,
) -> list[SparkRow]:
    """Generate the log directory in a scratch directory under ``workdir`` (deleted after),
    time every pipeline and query on it, and return the rows. ``spark``: a session to use;
    without one, a local[2] session with :data:`SESSION_CONF` is started, and stopped after."""
    say = log or (lambda text: print(text, file=sys.stderr, flush=True))
    shape = QUICK if quick else FULL
    scratch = Path(tempfile.mkdtemp(prefix="kafka-format-spark-", dir=workdir))
    own_session = spark is None
    try:
        say(f"spark: generating a {_size(shape['size'])} log directory")
        started = time.perf_counter()
        whole, subset = _inputs(scratch / "logs", shape["size"], shape["segment"])
        say(
            f"  {whole.label}, {sum(whole.expected.values())} records, "
            f"in {time.perf_counter() - started:.0f} s"
        )
        if own_session:
            from kafka_format.spark_udfs import local_session

            spark = local_session("kafka-format bench", cores=CORES, conf=SESSION_CONF)
            spark.sparkContext.setLogLevel("ERROR")
        return _measure(spark, whole, subset, shape["runs"], shape["queries"], say)
    finally:
        if own_session and spark is not None:
            spark.stop()
        shutil.rmtree(scratch, ignore_errors=True)


def session_note() -> str:
    """The session's settings, for the text above the table."""
    settings = ", ".join(f"`{k}={v}`" for k, v in SESSION_CONF.items())
    return f"local[{CORES}], {settings}, Python workers reused (`local_session`'s defaults)"


def _size(n: int) -> str:
    return f"{n / GIB:.2f} GiB" if n >= GIB // 4 else f"{n / MIB:.1f} MiB"


def _inputs(root: Path, size: int, segment: int) -> tuple[_Input, _Input]:
    generated = generate_log_dir(root, size_bytes=size, segment_bytes=segment)
    logs = sorted(root.glob("*/*.log"))
    expected = {(s.topic, s.partition): s.records for s in generated.partitions.values()}
    whole = _Input(
        f"all: {len(logs)} segment files, {_size(sum(p.stat().st_size for p in logs))}",
        False,
        str(root),
        [str(p) for p in logs],
        expected,
    )
    # The subset: each partition's first segment, whose records end where the next begins.
    first = f"{0:020d}.log"
    files = sorted(root.glob(f"*/{first}"))
    counts = {}
    for s in generated.partitions.values():
        ends = [*s.segments[1:], s.log_end_offset]
        counts[(s.topic, s.partition)] = ends[0] - s.segments[0]
    subset = _Input(
        f"subset: {len(files)} of {len(logs)} segment files, "
        f"{_size(sum(p.stat().st_size for p in files))}",
        True,
        str(root / "*" / first),
        [str(p) for p in files],
        counts,
    )
    return whole, subset


def _measure(
    spark, whole: _Input, subset: _Input, runs: int, queries: tuple[str, ...], say
) -> list[SparkRow]:
    from kafka_format.spark_udfs import register

    register(spark)
    records_udf, count_udf = _kafka_python_udfs()
    plans = [
        (KAFKA_LOG, whole, _kafka_log(spark, whole), runs),
        (KAFKA_LOG_NARROW, whole, _kafka_log(spark, whole, _NARROW_SCHEMA), runs),
        (KAFKA_LOG, subset, _kafka_log(spark, subset), runs),
        # One run each: they take tens of seconds, and vary far less than the ratios.
        (UDF_RECORDS, subset, _udf_records(spark, subset, records_udf), 0),
        (UDF_COUNTS, subset, _udf_counts(spark, subset, count_udf), 0),
    ]
    rows: list[SparkRow] = []
    for pipeline, source, answers, repeat in plans:
        for query in queries:
            load_before = os.getloadavg()[0]
            answer, first, best = timed(answers[query], repeat)
            _check(pipeline, query, source, answer)
            row = SparkRow(
                pipeline=pipeline,
                query=query,
                input=source.label,
                subset=source.subset,
                records=sum(source.expected.values()),
                first_seconds=first,
                seconds=best,
                runs=repeat,
                load=(load_before, os.getloadavg()[0]),
            )
            rows.append(row)
            say(
                f"  {pipeline}, {query}, {source.label}: first {first:.2f} s, best {best:.2f} s"
                f" ({row['records'] / best / 1e6:.3f} M records/s)"
            )
    return rows


def timed(fn: Callable[[], Any], runs: int) -> tuple[Any, float, float]:
    """The answer, the first run's seconds and the best of ``runs`` more (the first when
    none); every run must give the same answer."""
    started = time.perf_counter()
    answer = fn()
    first = best = time.perf_counter() - started
    if runs:
        best = float("inf")
        for _ in range(runs):
            started = time.perf_counter()
            again = fn()
            best = min(best, time.perf_counter() - started)
            if again != answer:
                raise RuntimeError(f"the same query gave {answer!r}, then {again!r}")
    return answer, first, best


def _check(pipeline: str, query: str, source: _Input, answer: Any) -> None:
    want = source.expected if query == "group-by" else sum(source.expected.values())
    if answer != want:
        raise RuntimeError(
            f"{pipeline}, {query} over {source.label}: got {answer!r}, expected {want!r}"
        )


# --- the pipelines, each {query: () -> answer} ---------------------------------------------


def _grouped(rows) -> dict[tuple[str, int], int]:
    return {(r[0], r[1]): int(r[2]) for r in rows}


def _queries(frame: Callable[[], Any]) -> dict[str, Callable[[], Any]]:
    return {
        "count": lambda: frame().count(),
        "group-by": lambda: _grouped(frame().groupBy("topic", "partition").count().collect()),
    }


def _kafka_log(spark, source: _Input, schema: str | None = None) -> dict[str, Callable]:
    def frame():
        reader = spark.read.format("kafka_log")
        if schema is not None:
            reader = reader.schema(schema)
        return reader.load(source.kafka_log_path)

    return _queries(frame)


def _files(spark, source: _Input):
    from pyspark.sql import functions as F

    files = spark.read.format("binaryFile").load(source.files)
    topic = F.regexp_extract("path", _PATH_PATTERN, 1).alias("topic")
    partition = F.regexp_extract("path", _PATH_PATTERN, 2).cast("int").alias("partition")
    return files, topic, partition


def _udf_records(spark, source: _Input, records_udf) -> dict[str, Callable]:
    from pyspark.sql import functions as F

    def frame():
        files, topic, partition = _files(spark, source)
        exploded = files.select(topic, partition, F.explode(records_udf("content")).alias("r"))
        return exploded.select(
            F.col("r.key").alias("key"),
            F.col("r.value").alias("value"),
            "topic",
            "partition",
            F.col("r.offset").alias("offset"),
            F.timestamp_millis("r.timestamp").alias("timestamp"),
            F.col("r.timestampType").alias("timestampType"),
        )

    return _queries(frame)


def _udf_counts(spark, source: _Input, count_udf) -> dict[str, Callable]:
    from pyspark.sql import functions as F

    def frame():
        files, topic, partition = _files(spark, source)
        return files.select(topic, partition, count_udf("content").alias("n"))

    return {
        "count": lambda: int(frame().agg(F.sum("n")).head()[0]),
        "group-by": lambda: _grouped(
            frame().groupBy("topic", "partition").agg(F.sum("n")).collect()
        ),
    }


def _kafka_python_udfs():
    """The two UDFs, defined in here so that Spark ships them by value: the Python workers
    cannot import this benchmark's modules."""
    from pyspark.sql.functions import udf

    def batches(content):
        from kafka.record.memory_records import MemoryRecords

        records = MemoryRecords(content)
        while (batch := records.next_batch()) is not None:
            if not batch.validate_crc():
                raise ValueError(f"CRC mismatch in the batch at offset {batch.base_offset}")
            if not batch.is_control_batch:
                yield batch

    def kafka_python_records(content):
        out = []
        for batch in batches(content):
            kind = batch.timestamp_type
            out.extend((r.key, r.value, r.offset, r.timestamp, kind) for r in batch)
        return out

    def kafka_python_count(content):
        n = 0
        for batch in batches(content):
            for r in batch:
                r.key, r.value, r.offset, r.timestamp  # noqa: B018 - decoded, as a reader would
                n += 1
        return n

    return udf(kafka_python_records, _RECORDS_TYPE), udf(kafka_python_count, "long")


if __name__ == "__main__":  # a look on its own: python bench/spark.py [--quick]
    for spark_row in run(Path(tempfile.gettempdir()), quick="--quick" in sys.argv):
        print(spark_row)
