"""What a ``kafka_log`` read fetches and meets, as rows: ``kafka_log_metrics``.

Classic Spark counts a read's log bytes and damaged batches in accumulators
(``register(spark).bytes_read`` / ``.corrupt_batches``). Spark Connect has no accumulators,
and Python data sources have no custom metrics, so the same counts come back the one way
Connect returns anything: as a DataFrame. ``kafka_log_metrics`` takes the very options and
path of a ``kafka_log`` read, plans it the same way, reads every split as ``kafka_log`` would,
and yields one row per split instead of its records::

    m = spark.read.format("kafka_log_metrics").option("mode", "DROPMALFORMED").load(path)
    m.agg(F.sum("rows"), F.sum("bytesRead"), F.sum("corruptBatches")).show()
    read_metrics(spark, path, mode="DROPMALFORMED")   # the sums, as a ReadMetrics

=================  ============================================================
column             meaning
=================  ============================================================
``topic``          the split's topic (null outside a partition directory)
``partition``      its partition
``file``           the segment file (its URI for remote filesystems)
``start``, ``end`` the byte range the split covers
``rows``           the rows ``kafka_log`` returns for it with these options
``bytesRead``      log bytes the task fetched (as the ``bytes_read`` accumulator)
``corruptBatches`` damaged batches met (as the ``corrupt_batches`` accumulator)
=================  ============================================================

It reads the data again (it is a read of its own, not a tap on another query's). Under the
default ``mode`` FAILFAST a damaged batch fails it, as it fails the read: count damage with
``DROPMALFORMED`` or ``PERMISSIVE``. Works alike in classic Spark and under Connect.
"""

from __future__ import annotations

from dataclasses import dataclass

from pyspark.sql.datasource import InputPartition
from pyspark.sql.types import IntegerType, LongType, StringType, StructField, StructType

from ._options import parse_options
from ._planning import KafkaLogSplit, PackedSplits
from ._reading import Counters, read_split
from .datasource import KafkaLogDataSource, KafkaLogReader, kafka_schema, output_for

METRICS_NAME = "kafka_log_metrics"
METRICS_SCHEMA = StructType(
    [
        StructField("topic", StringType()),
        StructField("partition", IntegerType()),
        StructField("file", StringType()),
        StructField("start", LongType()),
        StructField("end", LongType()),
        StructField("rows", LongType()),
        StructField("bytesRead", LongType()),
        StructField("corruptBatches", LongType()),
    ]
)


class _Sum:
    __slots__ = ("value",)

    def __init__(self) -> None:
        self.value = 0

    def add(self, n: int) -> None:
        self.value += n


class KafkaLogMetricsDataSource(KafkaLogDataSource):
    """``kafka_log_metrics``: see the module docstring."""

    @classmethod
    def name(cls) -> str:
        return METRICS_NAME

    def schema(self) -> StructType:
        return METRICS_SCHEMA

    def reader(self, schema: StructType) -> KafkaLogMetricsReader:
        options = parse_options(self.options)
        output = output_for(kafka_schema(options.include_headers), options)
        return KafkaLogMetricsReader(options, output, Counters())


class KafkaLogMetricsReader(KafkaLogReader):
    def read(self, partition: InputPartition):
        if isinstance(partition, PackedSplits):  # a row a split all the same
            for split in partition.splits:
                yield from self.read(split)
            return
        if not isinstance(partition, KafkaLogSplit):
            return
        fetched, corrupt = _Sum(), _Sum()
        rows = 0
        for batch in read_split(partition, self.options, self.output, Counters(fetched, corrupt)):
            rows += batch.num_rows
        yield (
            partition.topic,
            partition.partition,
            partition.name,
            partition.start,
            partition.end,
            rows,
            fetched.value,
            corrupt.value,
        )


@dataclass(frozen=True, slots=True)
class ReadMetrics:
    """The sums of ``kafka_log_metrics`` over a read."""

    splits: int
    rows: int
    bytes_read: int
    corrupt_batches: int


def read_metrics(spark, path: str, **options: str) -> ReadMetrics:
    """Plan and read ``path`` with ``options`` (``kafka_log``'s) and sum what the tasks
    counted; ``register(spark)`` first. Works under Spark Connect too."""
    from pyspark.sql import functions as F

    reader = spark.read.format(METRICS_NAME)
    for key, value in options.items():
        reader = reader.option(key, str(value))
    row = (
        reader.load(path)
        .agg(
            F.count(F.lit(1)).alias("splits"),
            F.sum("rows").alias("rows"),
            F.sum("bytesRead").alias("bytes"),
            F.sum("corruptBatches").alias("corrupt"),
        )
        .first()
    )
    return ReadMetrics(row["splits"], row["rows"] or 0, row["bytes"] or 0, row["corrupt"] or 0)


__all__ = [
    "METRICS_NAME",
    "METRICS_SCHEMA",
    "KafkaLogMetricsDataSource",
    "ReadMetrics",
    "read_metrics",
]
