"""Log compaction in Spark: the rows of a ``kafka_log`` DataFrame that Kafka's log cleaner
would keep, and the same as SQL views.

    from kafka_format.spark_udfs import register
    from kafka_format.spark_udfs.compaction import compact, register_compaction

    register(spark)
    df = spark.read.format("kafka_log").load("/var/lib/kafka/data/users-0")
    kept = compact(df, delete_retention_ms=86_400_000, now_ms=1_700_100_000_000)

    register_compaction(spark, "/var/lib/kafka/data", name="users_compacted", now_ms=...)
    spark.sql("SELECT topic, partition, count(*) FROM users_compacted GROUP BY 1, 2")
    spark.sql("SELECT * FROM users_compacted_partitions")   -- dirty ratio per partition
    spark.sql("SELECT * FROM users_compacted_segments")     -- segments, role, cleaning group

The rules are those of :mod:`kafka_format.runtime.log.compaction` (one cleaning pass at
``now_ms``), and the rows are exactly the data records its ``compact`` keeps for the rows of
``df``. The work is split so that no record goes through the driver:

* on the driver, :func:`~kafka_format.runtime.log.compaction.cleaner_facts` reads the batch
  headers (and transaction markers) of each partition directory: the cleanable range, and the
  few batches whose records all go (aborted transactions) or whose tombstones are past their
  delete horizon;
* in Spark, the offset map (the last offset of each key in the dirty range) is a ``groupBy``
  over a second ``kafka_log`` read of just the dirty range (pruned through the indexes), joined
  back to ``df`` on (topic, partition, key); the batch flags are looked up per row by a
  vectorised Arrow UDF.

``df`` may be any selection of a ``kafka_log`` read (a filter, ``startingOffsets``, a
projection that keeps ``topic``, ``partition``, ``offset``, ``key`` and ``value``): the offset
map always comes from the whole dirty range. Its directory is taken from ``df``'s plan (the
``path`` option of its ``kafka_log`` relation) unless ``path=`` is given, which Spark Connect
sessions need. The driver reads the directory through the local filesystem: a log directory,
a partition directory, or a glob of them.
"""

from __future__ import annotations

import glob
import json
import uuid
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.functions import arrow_udf
from pyspark.sql.types import (
    BooleanType,
    DoubleType,
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
)

from ..runtime.log.compaction import (
    FLAG_ABORTED,
    FLAG_TOMBSTONES_EXPIRED,
    CleanerConfig,
    CleanerFacts,
    NullKeys,
    cleaner_facts,
    partitions_of,
)
from ..runtime.log.compaction import resolve_now as _resolve_now
from ._cluster import is_remote, run_in_task
from .datasource import NAME

__all__ = [
    "PARTITIONS_SCHEMA",
    "SEGMENTS_SCHEMA",
    "CompactionViews",
    "compact",
    "compaction_facts",
    "kafka_log_path",
    "register_compaction",
]

#: Columns of the ``<name>_partitions`` view (one row per partition directory).
PARTITIONS_SCHEMA = StructType(
    [
        StructField("topic", StringType()),
        StructField("partition", IntegerType()),
        StructField("logStartOffset", LongType()),
        StructField("logEndOffset", LongType()),
        StructField("lastStableOffset", LongType()),
        StructField("checkpoint", LongType()),
        StructField("firstDirtyOffset", LongType()),
        StructField("firstUncleanableOffset", LongType()),
        StructField("uncleanableReasons", StringType()),
        StructField("cleanBytes", LongType()),
        StructField("cleanableBytes", LongType()),
        StructField("dirtyRatio", DoubleType()),
        StructField("minCleanableDirtyRatio", DoubleType()),
        StructField("compactionDelayMs", LongType()),
        StructField("wouldClean", BooleanType()),
        StructField("cleanerCheckpointAfter", LongType()),
    ]
)
#: Columns of the ``<name>_segments`` view (one row per segment).
SEGMENTS_SCHEMA = StructType(
    [
        StructField("topic", StringType()),
        StructField("partition", IntegerType()),
        StructField("baseOffset", LongType()),
        StructField("file", StringType()),
        StructField("size", LongType()),
        StructField("largestTimestamp", LongType()),
        StructField("role", StringType()),
        StructField("cleaningGroup", IntegerType()),
    ]
)
_RANGES_SCHEMA = StructType(
    [
        StructField("topic", StringType()),
        StructField("partition", IntegerType()),
        StructField("firstDirtyOffset", LongType()),
        StructField("cleanEnd", LongType()),
    ]
)
_GLOB_CHARS = set("*?[")


def compaction_facts(
    path: str,
    *,
    now_ms: int,
    config: CleanerConfig | None = None,
) -> list[CleanerFacts]:
    """:func:`cleaner_facts` of every partition directory ``path`` names (driver side)."""
    local = path[len("file://") :] if path.startswith("file://") else path
    if "://" in local:
        raise ValueError(f"compaction reads the log's batch headers locally; {path!r} is not")
    roots = sorted(glob.glob(local)) if _GLOB_CHARS & set(local) else [local]
    if not roots:
        raise FileNotFoundError(f"nothing matches {path!r}")
    dirs: list[Path] = []
    for root in roots:
        dirs.extend(partitions_of(root))
    return [cleaner_facts(d, now_ms=now_ms, config=config) for d in dirs]


def kafka_log_path(df: DataFrame) -> str | None:
    """The ``path`` option of the ``kafka_log`` read ``df`` comes from; None when it cannot
    be told (Spark Connect, several reads, not a kafka_log read)."""
    try:
        plan = df._jdf.queryExecution().analyzed()
    except Exception:  # Spark Connect DataFrames have no JVM plan
        return None
    found: set[str] = set()
    stack = [plan]
    while stack:
        node = stack.pop()
        if node.nodeName() == "DataSourceV2Relation":
            try:
                if node.table().name() == NAME:
                    options = dict(node.options().asCaseSensitiveMap())
                    lowered = {k.lower(): v for k, v in options.items()}
                    if "path" in lowered:
                        found.add(lowered["path"])
            except Exception:
                pass
        children = node.children().iterator()
        while children.hasNext():
            stack.append(children.next())
    return found.pop() if len(found) == 1 else None


def compact(
    df: DataFrame,
    *,
    delete_retention_ms: int | None = None,
    now_ms: int | None = None,
    path: str | None = None,
    config: CleanerConfig | None = None,
    null_keys: NullKeys = "drop",
) -> DataFrame:
    """The rows of ``df`` (a ``kafka_log`` read) that one cleaning pass at ``now_ms`` keeps.

    ``delete_retention_ms`` is the topic's ``delete.retention.ms`` (default: ``config``'s,
    Kafka's one day); ``config`` holds the other settings (:class:`CleanerConfig`).
    ``now_ms`` defaults to the current time; ``null_keys="keep"`` keeps null-key records
    Kafka's cleaner drops. Same columns as ``df``.
    """
    if null_keys not in ("drop", "keep"):
        raise ValueError(f"null_keys must be 'drop' or 'keep', not {null_keys!r}")
    missing = {"topic", "partition", "offset", "key", "value"} - set(df.columns)
    if missing:
        raise ValueError(f"compact needs the columns {sorted(missing)} of a kafka_log read")
    source = path or kafka_log_path(df)
    if source is None:
        raise ValueError(
            "cannot tell which log directory df was read from (under Spark Connect it never "
            "can): pass path="
        )
    config = _config(config, delete_retention_ms)
    facts = _facts(df.sparkSession, source, _resolve_now(now_ms), config)
    return _compact(df, df.sparkSession, source, facts, null_keys)


@dataclass(slots=True)
class CompactionViews:
    """What :func:`register_compaction` registered."""

    name: str
    partitions_view: str
    segments_view: str
    now_ms: int
    facts: list[CleanerFacts] = field(default_factory=list)


def register_compaction(
    spark: SparkSession,
    path: str,
    *,
    name: str = "kafka_compacted",
    delete_retention_ms: int | None = None,
    now_ms: int | None = None,
    config: CleanerConfig | None = None,
    null_keys: NullKeys = "drop",
    include_headers: bool = False,
) -> CompactionViews:
    """The SQL form: temporary views over the log at ``path`` (``register(spark)`` first).

    * ``<name>``: the records one cleaning pass at ``now_ms`` keeps, with the columns of
      ``kafka_log`` (``headers`` with ``include_headers``);
    * ``<name>_partitions``: the dirty ratio and cleanable range of each partition
      (:data:`PARTITIONS_SCHEMA`);
    * ``<name>_segments``: each segment's role and cleaning group (:data:`SEGMENTS_SCHEMA`).

    The pass is planned now, on the driver, once: register again for another ``now_ms``.
    """
    config = _config(config, delete_retention_ms)
    now = _resolve_now(now_ms)
    facts = _facts(spark, path, now, config)
    reader = spark.read.format(NAME)
    if include_headers:
        reader = reader.option("includeHeaders", "true")
    records = reader.load(path)
    _compact(records, spark, path, facts, null_keys).createOrReplaceTempView(name)
    partitions = spark.createDataFrame([_partition_row(f) for f in facts], schema=PARTITIONS_SCHEMA)
    partitions.createOrReplaceTempView(f"{name}_partitions")
    segments = spark.createDataFrame(
        [_segment_row(f, s) for f in facts for s in f.plan.segments], schema=SEGMENTS_SCHEMA
    )
    segments.createOrReplaceTempView(f"{name}_segments")
    return CompactionViews(name, f"{name}_partitions", f"{name}_segments", now, facts)


# --- the plan in Spark ----------------------------------------------------------------------


def _facts(spark, path: str, now_ms: int, config: CleanerConfig) -> list[CleanerFacts]:
    """The cleaner's facts, planned on the driver, or under Spark Connect in a task (where
    the data is: the client may not see the log)."""
    if is_remote():
        return run_in_task(spark, partial(compaction_facts, now_ms=now_ms, config=config), path)
    return compaction_facts(path, now_ms=now_ms, config=config)


def _config(config: CleanerConfig | None, delete_retention_ms: int | None) -> CleanerConfig:
    config = config or CleanerConfig()
    if delete_retention_ms is None:
        return config
    return replace(config, delete_retention_ms=delete_retention_ms)


def _partition_row(f: CleanerFacts) -> tuple[Any, ...]:
    p = f.plan
    return (
        f.topic, f.partition, p.log_start_offset, p.log_end_offset, p.last_stable_offset,
        p.checkpoint, p.first_dirty_offset, p.first_uncleanable_offset,
        ", ".join(p.uncleanable_reasons), p.clean_bytes, p.cleanable_bytes, p.ratio,
        p.min_cleanable_ratio, p.compaction_delay_ms, p.would_clean, p.end_offset,
    )  # fmt: skip


def _segment_row(f: CleanerFacts, s) -> tuple[Any, ...]:
    return (
        f.topic, f.partition, s.base_offset, s.path.name, s.size, s.largest_timestamp, s.role,
        s.group,
    )  # fmt: skip


def _flags_udf(facts: list[CleanerFacts]):
    """An Arrow UDF (topic, partition, offset) -> FLAG_* bits of the batch holding offset."""
    table = {
        (f.topic, f.partition): (
            np.array([b for b, _, _ in f.flagged], dtype=np.int64),
            np.array([e for _, e, _ in f.flagged], dtype=np.int64),
            np.array([x for _, _, x in f.flagged], dtype=np.int32),
        )
        for f in facts
        if f.flagged
    }

    def batch_flags(topic: pa.Array, partition: pa.Array, offset: pa.Array) -> pa.Array:
        out = np.zeros(len(offset), dtype=np.int32)
        if table:
            offsets = pc.fill_null(offset, -1).to_numpy(zero_copy_only=False)
            for (t, p), (bases, lasts, flags) in table.items():
                mask = pc.fill_null(
                    pc.and_(pc.equal(topic, t), pc.equal(partition, p)), False
                ).to_numpy(zero_copy_only=False)
                if not mask.any():
                    continue
                here = offsets[mask]
                slot = np.searchsorted(bases, here, side="right") - 1
                safe = np.clip(slot, 0, None)
                hit = (slot >= 0) & (here <= lasts[safe])
                out[mask] = np.where(hit, flags[safe], 0)
        return pa.array(out, pa.int32())

    return arrow_udf(batch_flags, IntegerType())


def _offsets_json(facts: list[CleanerFacts], pick) -> str:
    spec: dict[str, dict[str, int]] = {}
    for f in facts:
        if f.topic is None or f.partition is None:
            continue  # outside a topic-N directory: nothing to clean, nothing to read
        spec.setdefault(f.topic, {})[str(f.partition)] = pick(f)
    return json.dumps(spec)


def _compact(
    df: DataFrame,
    spark: SparkSession,
    path: str,
    facts: list[CleanerFacts],
    null_keys: NullKeys,
) -> DataFrame:
    columns = df.columns
    cleaned = [f for f in facts if f.clean_end is not None and f.topic is not None]
    if not cleaned:
        return df
    flags = _flags_udf(cleaned)
    tag = uuid.uuid4().hex[:8]
    rtopic, rpart, rfirst, rend = (f"_t_{tag}", f"_p_{tag}", f"_d_{tag}", f"_e_{tag}")
    ranges = spark.createDataFrame(
        [(f.topic, f.partition, f.plan.first_dirty_offset, f.clean_end) for f in cleaned],
        schema=_RANGES_SCHEMA,
    ).toDF(rtopic, rpart, rfirst, rend)

    # The offset map: last offset per key over the dirty range's non-aborted data, read
    # straight from the log (not from df, which may be a selection). Partitions that are
    # not cleaned get an empty range.
    dirty = (
        spark.read.format(NAME)
        .option("startingOffsets", _offsets_json(facts, _dirty_start))
        .option("endingOffsets", _offsets_json(facts, _dirty_end))
        .load(path)
        .join(
            F.broadcast(ranges),
            (F.col("topic") == F.col(rtopic)) & (F.col("partition") == F.col(rpart)),
        )
        .where(
            (F.col("offset") >= F.col(rfirst))
            & (F.col("offset") < F.col(rend))
            & F.col("key").isNotNull()
            & (flags("topic", "partition", "offset").bitwiseAND(FLAG_ABORTED) == 0)
        )
    )
    mtopic, mpart, mkey, latest = (f"_mt_{tag}", f"_mp_{tag}", f"_mk_{tag}", f"_l_{tag}")
    offset_map = (
        dirty.groupBy("topic", "partition", "key")
        .agg(F.max("offset").alias(latest))
        .toDF(mtopic, mpart, mkey, latest)
    )

    flag = f"_f_{tag}"
    joined = (
        df.join(
            F.broadcast(ranges),
            df["topic"].eqNullSafe(F.col(rtopic)) & df["partition"].eqNullSafe(F.col(rpart)),
            "left",
        )
        .join(
            offset_map,
            (F.col("topic") == F.col(mtopic))
            & (F.col("partition") == F.col(mpart))
            & (F.col("key") == F.col(mkey)),
            "left",
        )
        .withColumn(flag, flags("topic", "partition", "offset"))
    )
    offset, key, value = F.col("offset"), F.col("key"), F.col("value")
    aborted = F.col(flag).bitwiseAND(FLAG_ABORTED) != 0
    expired = F.col(flag).bitwiseAND(FLAG_TOMBSTONES_EXPIRED) != 0
    keyed_keep = (
        key.isNotNull()
        & (F.col(latest).isNull() | (offset >= F.col(latest)))
        & (value.isNotNull() | ~expired)
    )
    if null_keys == "keep":
        keyed_keep = keyed_keep | key.isNull()
    keep = F.col(rend).isNull() | (offset >= F.col(rend)) | (~aborted & keyed_keep)
    return joined.where(keep).select(*[df[c] for c in columns])


def _dirty_start(f: CleanerFacts) -> int:
    return f.plan.first_dirty_offset if f.clean_end is not None else f.plan.log_end_offset


def _dirty_end(f: CleanerFacts) -> int:
    return f.clean_end if f.clean_end is not None else f.plan.log_end_offset
