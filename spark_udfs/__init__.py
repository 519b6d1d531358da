"""kafka_format.spark_udfs: Kafka logs in Spark — the ``kafka_log`` data source and SQL functions.

    from kafka_format.spark_udfs import register

    kafka = register(spark)
    spark.read.format("kafka_log").load("/var/lib/kafka/data").show()
    spark.sql("SELECT explode(kafka_records(content)) FROM binaryFile.`/captures/*.bin`")

``spark.readStream.format("kafka_log")`` reads a log directory that grows as a stream (see
:mod:`.streaming`). See :mod:`.datasource` for the source's options, :mod:`.functions` for the
functions over record sets and payloads in Confluent's wire format (also importable from here
for the DataFrame API: ``df.select(kafka_records("content"))``, ``from_schema_registry``) and
:mod:`.internal` for the decoders of Kafka's internal topics (``kafka_offsets_key``,
``kafka_offsets_value``, ``kafka_txn_log``, ``kafka_cluster_metadata``).
Needs ``pyspark>=4.1`` (Python data sources, ``arrow_udf``), installed with the ``spark`` extra.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from typing import Any

try:
    import pyspark  # noqa: F401
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError(
        "kafka_format.spark_udfs needs pyspark>=4.1: pip install 'kafka-format[spark]'"
    ) from exc

from ..runtime.format.codecs import DEFAULT_MAX_BYTES
from ._connect import remote_session
from ._pushdown import pushdown_is_scoped
from ._workers import WorkerPython, WorkerPythonError, ensure_workers
from .compaction import compact as compact_log
from .compaction import register_compaction
from .datasource import KAFKA_SCHEMA_DDL, NAME, KafkaLogDataSource, kafka_schema
from .functions import (
    from_schema_registry,
    kafka_batches,
    kafka_decompress,
    kafka_partition,
    kafka_payload_json,
    kafka_records,
    make_functions,
    try_kafka_decompress,
    try_kafka_payload_json,
    try_kafka_records,
)
from .internal import make_functions as make_internal_functions
from .metrics import KafkaLogMetricsDataSource, ReadMetrics, read_metrics
from .stats import log_stats, record_stats

#: Spark's switch for Python data sources' ``pushFilters`` (off by default in Spark 4.x).
FILTER_PUSHDOWN_CONF = "spark.sql.python.filterPushdown.enabled"


@dataclass(slots=True)
class Registration:
    """What :func:`register` set up in a session.

    ``bytes_read`` and ``corrupt_batches`` are Spark accumulators (None on Spark Connect,
    which has none: use :func:`read_metrics` / the ``kafka_log_metrics`` source there): the
    log bytes ``kafka_log`` tasks fetched, and the damaged batches they met, summed over
    every read through this registration. As for any accumulator updated in tasks, a retried
    task counts twice.
    """

    data_source: type[KafkaLogDataSource]
    functions: dict[str, Any] = field(default_factory=dict)
    bytes_read: Any = None
    corrupt_batches: Any = None
    #: The interpreter Spark's Python runs, as :func:`register` checked it (None unchecked).
    workers: WorkerPython | None = None


def register(
    spark,
    *,
    max_decompressed_bytes: int = DEFAULT_MAX_BYTES,
    check_workers: bool = True,
) -> Registration:
    """Register the ``kafka_log`` data source and every SQL function in ``spark``.

    ``max_decompressed_bytes`` bounds one batch's decompressed size in the SQL functions (the
    data source has its own option, ``maxDecompressedBytes``). Registering again replaces
    both: reads then count in the new registration's accumulators.

    It also sets ``spark.sql.python.filterPushdown.enabled`` to true for the session, so that
    reads of the registered source can answer WHERE clauses on topic, partition, offset,
    timestamp and timestampType through the indexes: by default where this Spark keeps a
    pushed-down read to its own query (``_pushdown.pushdown_is_scoped``; Spark 4.3 does not:
    a DataFrame that answered one WHERE clause would answer a later query without one from
    the same pruned read), and per read with the option ``pushFilters``.

    First (unless ``check_workers=False``) it checks that the Python Spark starts for the
    source and the functions can import kafka_format (:mod:`._workers`): in a local session
    whose workers would run a ``python3`` without it (a venv not activated) it points them at
    this interpreter; elsewhere it raises :class:`WorkerPythonError`, one line naming
    ``PYSPARK_PYTHON`` / ``spark.pyspark.python``, instead of a worker traceback per query.
    """
    workers = ensure_workers(spark) if check_workers else None
    bytes_read = corrupt = None
    try:
        context = spark.sparkContext
    except Exception:  # Spark Connect sessions have no SparkContext, hence no accumulators
        context = None
    if context is not None:
        bytes_read = context.accumulator(0)
        corrupt = context.accumulator(0)
    # WHERE clauses answered by the read (KafkaLogPushdownReader): Spark hands a Python data
    # source its filters only with this on, and refuses a reader that takes them without.
    spark.conf.set(FILTER_PUSHDOWN_CONF, "true")
    # A subclass per registration carries the accumulators to the tasks: a class that is not
    # importable by name is pickled by value, with them.
    source = type(
        "RegisteredKafkaLogDataSource",
        (KafkaLogDataSource,),
        {
            "__module__": KafkaLogDataSource.__module__,
            "__qualname__": "RegisteredKafkaLogDataSource",
            "bytes_read_accumulator": bytes_read,
            "corrupt_batches_accumulator": corrupt,
            "push_filters": pushdown_is_scoped(spark),
        },
    )
    spark.dataSource.register(source)
    spark.dataSource.register(KafkaLogMetricsDataSource)
    functions = make_functions(max_decompressed_bytes)
    functions.update(make_internal_functions())
    for name, udf in functions.items():
        spark.udf.register(name, udf)
    return Registration(source, functions, bytes_read, corrupt, workers)


def local_session(
    app_name: str = "kafka-format", cores: int = 2, conf: dict[str, str] | None = None
):
    """A local SparkSession fit for this package: its Python workers run this interpreter
    (so they can import kafka_format), no UI, few shuffle partitions, UTC session time."""
    from pyspark.sql import SparkSession

    # Workers otherwise start whatever `python3` is on PATH, which lacks this venv.
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    builder = (
        SparkSession.builder.master(f"local[{cores}]")
        .appName(app_name)
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", str(cores))
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.python.worker.reuse", "true")
    )
    for key, value in (conf or {}).items():
        builder = builder.config(key, value)
    return builder.getOrCreate()


__all__ = [
    "KAFKA_SCHEMA_DDL",
    "NAME",
    "KafkaLogDataSource",
    "ReadMetrics",
    "Registration",
    "WorkerPython",
    "WorkerPythonError",
    "compact_log",
    "from_schema_registry",
    "kafka_batches",
    "kafka_decompress",
    "kafka_partition",
    "kafka_payload_json",
    "kafka_records",
    "kafka_schema",
    "local_session",
    "log_stats",
    "read_metrics",
    "record_stats",
    "register",
    "register_compaction",
    "remote_session",
    "try_kafka_decompress",
    "try_kafka_payload_json",
    "try_kafka_records",
]
