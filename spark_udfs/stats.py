"""``kafka-format stats`` in Spark: where the bytes of a log go, one row per partition.

    from kafka_format.spark_udfs import register
    from kafka_format.spark_udfs.stats import log_stats, record_stats

    log_stats(spark, "/var/lib/kafka/data").show()          # every partition of a log dir
    log_stats(spark, "s3://backups/kafka/orders-*").select("topic", "partition", "records")

    register(spark)
    df = spark.read.format("kafka_log").option("includeHeaders", "true").load(path)
    record_stats(df.where("timestamp >= '2024-05-01'")).show()

:func:`log_stats` is :func:`kafka_format.runtime.analysis.stats.log_stats` (without
``what_if``) spread over a cluster: the driver lists the segments (a log dir, a partition dir,
a file, a glob, on any filesystem the ``kafka_log`` source reads), a task computes each
segment's statistics with :func:`~kafka_format.runtime.analysis.stats.file_stats`, and Spark
sums them per partition. The columns are the fields of ``kafka-format stats --json``
(``docs/stats.md``), with ``magic``, ``codecs`` and ``timestamps`` as maps and the
records-per-batch median computed by Spark from the merged
histogram (exact: the mean of the middle two for an even count, as Python's
``statistics.median``).

:func:`record_stats` aggregates the record-level part (records, key, value and header bytes,
null keys and values, timestamp ranges) over any DataFrame with the ``kafka_log`` columns, a
filtered or projected one too; batch-level figures (headers, framing, codecs) need the batches,
which only :func:`log_stats` reads.
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.pandas.types import from_arrow_schema

from ..runtime.analysis.stats import (
    CODEC_JSON_FIELDS,
    MAGIC_JSON_FIELDS,
    PartitionStats,
    file_stats,
)
from ..runtime.cpus import using_threads
from ..runtime.format.codecs import DEFAULT_MAX_BYTES
from ._cluster import is_remote, run_in_task
from ._discovery import discover
from ._fs import FsRef, locate
from .compaction import kafka_log_path

__all__ = ["PARTITION_COLUMNS", "SEGMENT_SCHEMA", "log_stats", "record_stats", "segment_stats"]

_MAGICS = (0, 1, 2)
_CODECS = ("none", "gzip", "snappy", "lz4", "zstd")
_TS_TYPES = ((-1, "NoTimestampType"), (0, "CreateTime"), (1, "LogAppendTime"))
#: Summed per partition: (column, PartitionStats attribute).
_SUMS = (
    ("bytes", "bytes"),
    ("batches", "batches"),
    ("batchBytes", "batch_bytes"),
    ("records", "records"),
    ("controlBatches", "control_batches"),
    ("controlRecords", "control_records"),
    ("controlBytes", "control_bytes"),
    ("damagedBatches", "damaged_batches"),
    ("damagedBytes", "damaged_bytes"),
    ("truncatedBytes", "truncated_bytes"),
    ("unreadableBytes", "unreadable_bytes"),
    ("batchHeaderBytes", "batch_header_bytes"),
    ("messageHeaderBytes", "message_header_bytes"),
    ("recordFramingBytes", "record_framing_bytes"),
    ("keyBytes", "key_bytes"),
    ("valueBytes", "value_bytes"),
    ("headerKeyBytes", "header_key_bytes"),
    ("headerValueBytes", "header_value_bytes"),
    ("headers", "headers"),
    ("nullKeys", "null_keys"),
    ("nullValues", "null_values"),
    ("idempotentBatches", "idempotent_batches"),
    ("transactionalBatches", "transactional_batches"),
)
_PROBLEM = pa.struct(
    [
        ("file", pa.string()),
        ("position", pa.int64()),
        ("baseOffset", pa.int64()),
        ("kind", pa.string()),
        ("error", pa.string()),
    ]
)


def _segment_arrow_schema() -> pa.Schema:
    fields: list[tuple[str, pa.DataType]] = [
        ("source", pa.string()),
        ("topic", pa.string()),
        ("partition", pa.int32()),
    ]
    fields += [(name, pa.int64()) for name, _ in _SUMS]
    for m in _MAGICS:
        fields += [(f"v{m}_{name}", pa.int64()) for name, _ in MAGIC_JSON_FIELDS]
    for c in _CODECS:
        fields += [(f"{c}_{name}", pa.int64()) for name, _ in CODEC_JSON_FIELDS]
    for _, t in _TS_TYPES:
        fields += [(f"{t}_records", pa.int64()), (f"{t}_min", pa.int64()), (f"{t}_max", pa.int64())]
    fields += [
        ("perBatch", pa.list_(pa.struct([("records", pa.int64()), ("batches", pa.int64())]))),
        ("producerIds", pa.list_(pa.int64())),
        ("problems", pa.list_(_PROBLEM)),
        ("tails", pa.list_(_PROBLEM)),
    ]
    return pa.schema(fields)


#: One row per segment, as the tasks compute them (flat: Spark sums the columns).
SEGMENT_ARROW_SCHEMA = _segment_arrow_schema()
SEGMENT_SCHEMA = from_arrow_schema(SEGMENT_ARROW_SCHEMA)


def _segment_row(stats: PartitionStats, source: str) -> dict[str, Any]:
    row: dict[str, Any] = {"source": source, "topic": stats.topic, "partition": stats.partition}
    for name, attr in _SUMS:
        row[name] = getattr(stats, attr)
    for m in _MAGICS:
        s = stats.magic.get(m)
        for name, attr in MAGIC_JSON_FIELDS:
            row[f"v{m}_{name}"] = 0 if s is None else getattr(s, attr)
    for c in _CODECS:
        s = stats.codecs.get(c)
        for name, attr in CODEC_JSON_FIELDS:
            row[f"{c}_{name}"] = 0 if s is None else getattr(s, attr)
    for _, t in _TS_TYPES:
        r = stats.timestamps.get(t)
        row[f"{t}_records"] = 0 if r is None else r.records
        row[f"{t}_min"] = None if r is None else r.min
        row[f"{t}_max"] = None if r is None else r.max
    row["perBatch"] = [{"records": k, "batches": v} for k, v in stats.records_per_batch.items()]
    row["producerIds"] = sorted(stats.producer_ids)
    # as_json: file, position, baseOffset, kind, error; the struct's fields
    row["problems"] = [d.as_json() for d in stats.damage]
    row["tails"] = [d.as_json() for d in stats.tails]
    return row


def _segment_stats(strict: bool, verify_crc: bool, max_bytes: int):
    """The mapInArrow function: each input row names a segment; out comes its statistics."""

    def run(batches):
        for batch in batches:
            rows = []
            for seg in batch.to_pylist():
                ref = FsRef(seg["fs"])
                if seg["fs"] is None:
                    source: Any = seg["file"]
                else:
                    with ref.filesystem().open_input_file(seg["file"]) as f:
                        source = memoryview(f.read_buffer())
                # file_stats takes no threads=: one decoding thread, as a task should
                # (Spark already runs one task a core)
                with using_threads(1):
                    stats = file_stats(
                        source,
                        name=ref.display(seg["file"]),
                        topic=seg["topic"],
                        partition=seg["partition"],
                        strict=strict,
                        verify_crc=verify_crc,
                        max_decompressed_bytes=max_bytes,
                    )
                rows.append(_segment_row(stats, seg["source"]))
            yield pa.RecordBatch.from_pylist(rows, schema=SEGMENT_ARROW_SCHEMA)

    return run


def segment_listing(path: str) -> list[tuple[str, str | None, int | None, str | None, str]]:
    """(source, topic, partition, filesystem URI, file) of every segment under ``path``."""
    ref, fs, local = locate(path)
    segments = []
    for part in discover(fs, local):
        directory = part.segments[0].log.rsplit("/", 1)[0] if part.topic is not None else None
        for seg in part.segments:
            source = ref.display(directory) if directory is not None else ref.display(seg.log)
            segments.append((source, part.topic, part.partition, ref.uri, seg.log))
    return segments


def segment_stats(
    spark: SparkSession,
    path: str,
    *,
    strict: bool = False,
    verify_crc: bool = True,
    max_decompressed_bytes: int = DEFAULT_MAX_BYTES,
) -> DataFrame:
    """One row per segment (:data:`SEGMENT_SCHEMA`), each computed by a task. The listing
    is made on the driver, or under Spark Connect in a task (where the data is)."""
    segments = run_in_task(spark, segment_listing, path) if is_remote() else segment_listing(path)
    # A local relation is sliced over the default parallelism: no shuffle to spread it.
    listing = spark.createDataFrame(
        segments, "source string, topic string, partition int, fs string, file string"
    )
    return listing.mapInArrow(
        _segment_stats(strict, verify_crc, max_decompressed_bytes), SEGMENT_SCHEMA
    )


#: The columns of :func:`log_stats`, as the JSON's fields (``docs/stats.md``).
PARTITION_COLUMNS = (
    "topic", "partition", "source", "files", "bytes", "batches", "batchBytes", "records",
    "recordsPerBatch", "magic", "codecs", "sizes", "recordFields", "perRecord", "timestamps",
    "producers", "damage",
)  # fmt: skip


def log_stats(
    spark: SparkSession,
    path: str | DataFrame,
    *,
    strict: bool = False,
    verify_crc: bool = True,
    max_decompressed_bytes: int = DEFAULT_MAX_BYTES,
) -> DataFrame:
    """The statistics of every partition under ``path`` (:data:`PARTITION_COLUMNS`), in Spark.

    ``path`` may be a ``kafka_log`` DataFrame: the log it was read from is taken (all of it:
    batches are not rows, so a selection of rows does not narrow the batch figures; see
    :func:`record_stats` for those). ``strict`` fails the job on the first damaged batch;
    otherwise damaged batches are counted and listed in ``damage.problems``.
    ``verify_crc=False`` takes batches whose CRC does not hold as whole.
    """
    if isinstance(path, DataFrame):
        found = kafka_log_path(path)
        if found is None:
            raise ValueError(
                "cannot tell which log the DataFrame was read from (under Spark Connect it "
                "never can): pass the path"
            )
        path = found
    segments = segment_stats(
        spark,
        path,
        strict=strict,
        verify_crc=verify_crc,
        max_decompressed_bytes=max_decompressed_bytes,
    )
    keys = ["source", "topic", "partition"]
    sums = [F.sum(name).alias(name) for name, _ in _SUMS]
    for m in _MAGICS:
        sums += [F.sum(f"v{m}_{name}").alias(f"v{m}_{name}") for name, _ in MAGIC_JSON_FIELDS]
    for c in _CODECS:
        sums += [F.sum(f"{c}_{name}").alias(f"{c}_{name}") for name, _ in CODEC_JSON_FIELDS]
    for _, t in _TS_TYPES:
        sums += [
            F.sum(f"{t}_records").alias(f"{t}_records"),
            F.min(f"{t}_min").alias(f"{t}_min"),
            F.max(f"{t}_max").alias(f"{t}_max"),
        ]
    # One aggregation, so the segments are computed once: the records-per-batch histograms
    # are concatenated here and merged below with higher-order functions.
    merged = segments.groupBy(*keys).agg(
        F.count(F.lit(1)).alias("files"),
        *sums,
        F.array_sort(F.array_distinct(F.flatten(F.collect_list("producerIds")))).alias("pids"),
        F.array_sort(F.flatten(F.collect_list("problems"))).alias("problems"),
        F.array_sort(F.flatten(F.collect_list("tails"))).alias("tails"),
        F.array_sort(F.flatten(F.collect_list("perBatch"))).alias("perBatch"),
    )
    return merged.select(*_partition_columns()).orderBy("topic", "partition", "source")


def _per_batch_summary(histogram: Column) -> Column:
    """min / median / mean / max of a histogram (records, batches) sorted by records: the
    median is the mean of the values at ranks (n - 1) // 2 and n // 2, found by a running sum
    (as statistics.median of the expanded list)."""
    n = F.aggregate(histogram, F.lit(0).cast("long"), lambda acc, x: acc + x["batches"])
    weighted = F.aggregate(
        histogram, F.lit(0).cast("long"), lambda acc, x: acc + x["records"] * x["batches"]
    )
    lower, upper = F.floor((n - 1) / 2), F.floor(n / 2)
    start = F.struct(
        F.lit(0).cast("long").alias("seen"),
        F.lit(None).cast("long").alias("low"),
        F.lit(None).cast("long").alias("high"),
    )

    def step(acc: Column, x: Column) -> Column:
        seen = acc["seen"] + x["batches"]
        return F.struct(
            seen.alias("seen"),
            F.coalesce(acc["low"], F.when(seen > lower, x["records"])).alias("low"),
            F.coalesce(acc["high"], F.when(seen > upper, x["records"])).alias("high"),
        )

    middle = F.aggregate(histogram, start, step)
    return F.when(
        n > 0,
        F.struct(
            F.array_min(F.transform(histogram, lambda x: x["records"])).alias("min"),
            ((middle["low"] + middle["high"]) / 2).alias("median"),
            (weighted / n).alias("mean"),
            F.array_max(F.transform(histogram, lambda x: x["records"])).alias("max"),
        ),
    )


def _timestamp_entries() -> list:
    """The ``timestamps`` map's entries, one per timestamp type, from its grouped columns."""
    return [
        F.struct(
            F.lit(t).alias("key"),
            F.struct(
                F.col(f"{t}_records").alias("records"),
                F.col(f"{t}_min").alias("min"),
                F.col(f"{t}_max").alias("max"),
            ).alias("value"),
        )
        for _, t in _TS_TYPES
    ]


def _partition_columns() -> list[Column]:
    def per_record(column: Column) -> Column:
        return F.when(F.col("records") > 0, column / F.col("records"))

    header_bytes = F.col("batchHeaderBytes") + F.col("messageHeaderBytes")
    payload = F.col("keyBytes") + F.col("valueBytes") + F.col("headerKeyBytes")
    payload = payload + F.col("headerValueBytes")
    magic_entries = [
        F.struct(
            F.lit(m).alias("key"),
            F.struct(*[F.col(f"v{m}_{name}").alias(name) for name, _ in MAGIC_JSON_FIELDS]).alias(
                "value"
            ),
        )
        for m in _MAGICS
    ]
    codec_entries = [
        F.struct(
            F.lit(c).alias("key"),
            F.struct(
                *[F.col(f"{c}_{name}").alias(name) for name, _ in CODEC_JSON_FIELDS],
                F.when(
                    F.col(f"{c}_compressedBytes") > 0,
                    F.col(f"{c}_uncompressedBytes") / F.col(f"{c}_compressedBytes"),
                ).alias("ratio"),
            ).alias("value"),
        )
        for c in _CODECS
    ]
    ts_entries = _timestamp_entries()
    pids = F.col("pids")
    return [
        "topic",
        "partition",
        "source",
        "files",
        "bytes",
        "batches",
        "batchBytes",
        "records",
        _per_batch_summary(F.col("perBatch")).alias("recordsPerBatch"),
        _map_of(magic_entries, "batches").alias("magic"),
        _map_of(codec_entries, "batches").alias("codecs"),
        F.struct(
            "batchHeaderBytes",
            "messageHeaderBytes",
            "recordFramingBytes",
            "keyBytes",
            "valueBytes",
            "headerKeyBytes",
            "headerValueBytes",
            payload.alias("payloadBytes"),
            (header_bytes + F.col("recordFramingBytes") + payload).alias("uncompressedBytes"),
            "controlBytes",
        ).alias("sizes"),
        F.struct("headers", "nullKeys", "nullValues").alias("recordFields"),
        F.struct(
            per_record(header_bytes).alias("headerBytes"),
            per_record(F.col("recordFramingBytes")).alias("framingBytes"),
            per_record(payload).alias("payloadBytes"),
            per_record(F.col("batchBytes") - F.col("controlBytes")).alias("bytes"),
        ).alias("perRecord"),
        _map_of(ts_entries, "records").alias("timestamps"),
        F.struct(
            F.size(pids).alias("distinct"),
            F.array_min(pids).alias("minId"),
            F.array_max(pids).alias("maxId"),
            F.col("idempotentBatches"),
            F.col("transactionalBatches"),
            F.col("controlBatches"),
            F.col("controlRecords"),
        ).alias("producers"),
        F.struct(
            F.col("damagedBatches").alias("batches"),
            F.col("damagedBytes").alias("bytes"),
            "truncatedBytes",
            "unreadableBytes",
            F.col("problems"),
            F.col("tails").alias("truncated"),
        ).alias("damage"),
    ]


def _map_of(entries: list[Column], count_field: str) -> Column:
    """A map of the entries whose ``count_field`` is not 0 (as the JSON lists only those)."""
    kept = F.filter(F.array(*entries), lambda e: e["value"][count_field] > 0)
    return F.map_from_entries(kept)


def record_stats(df: DataFrame) -> DataFrame:
    """Record-level statistics of a DataFrame with the ``kafka_log`` columns, per topic and
    partition: ``records``, ``keyBytes``, ``valueBytes``, ``nullKeys``, ``nullValues``,
    ``headers``, ``headerKeyBytes``, ``headerValueBytes`` (null without the ``headers``
    column: read with ``includeHeaders``) and ``timestamps`` (per timestamp type: records,
    first and last, epoch ms), as :func:`log_stats` has them for the same records."""
    missing = {"topic", "partition", "key", "value", "timestamp", "timestampType"} - set(df.columns)
    if missing:
        raise ValueError(f"record_stats needs the columns {sorted(missing)} of a kafka_log read")
    headers = "headers" in df.columns
    zero = F.lit(0).cast("long")
    if headers:
        h = F.coalesce(F.col("headers"), F.array())
        count = F.size(h)
        hkeys = F.aggregate(h, zero, lambda acc, x: acc + F.octet_length(x["key"]))
        hvalues = F.aggregate(
            h, zero, lambda acc, x: acc + F.coalesce(F.octet_length(x["value"]), zero)
        )
    else:
        count = hkeys = hvalues = F.lit(None).cast("long")
    millis = F.unix_millis(F.col("timestamp"))
    columns = [
        F.count(F.lit(1)).alias("records"),
        F.sum(F.coalesce(F.octet_length("key"), zero)).alias("keyBytes"),
        F.sum(F.coalesce(F.octet_length("value"), zero)).alias("valueBytes"),
        F.sum(F.col("key").isNull().cast("long")).alias("nullKeys"),
        F.sum(F.col("value").isNull().cast("long")).alias("nullValues"),
        F.sum(count).alias("headers"),
        F.sum(hkeys).alias("headerKeyBytes"),
        F.sum(hvalues).alias("headerValueBytes"),
    ]
    for kind, name in _TS_TYPES:
        of_kind = F.col("timestampType") == kind
        columns += [
            F.sum(of_kind.cast("long")).alias(f"{name}_records"),
            F.min(F.when(of_kind, millis)).alias(f"{name}_min"),
            F.max(F.when(of_kind, millis)).alias(f"{name}_max"),
        ]
    grouped = df.groupBy("topic", "partition").agg(*columns)
    ts_entries = _timestamp_entries()
    return grouped.select(
        "topic",
        "partition",
        "records",
        "keyBytes",
        "valueBytes",
        "nullKeys",
        "nullValues",
        "headers",
        "headerKeyBytes",
        "headerValueBytes",
        _map_of(ts_entries, "records").alias("timestamps"),
    ).orderBy("topic", "partition")
