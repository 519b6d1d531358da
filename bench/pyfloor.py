"""The floor of any Python data source: Spark taking ready-made Arrow batches (bench only).

A data source (``kafka_format_bench_floor``) whose reader decodes nothing: each task builds
one Arrow batch of :data:`BATCH_ROWS` rows shaped like ``kafka_log``'s (an 11-byte key, a
100-byte value, ``topic``, ``partition``, ``offset``, ``timestamp``, ``timestampType``: the
same 152 bytes a row) in the schema Spark asked for, and yields slices of it (zero-copy)
until it has given its share of rows. What a query over it costs is what Spark's Python Data
Source machinery costs for those rows: the task's Python worker, Arrow IPC to the JVM, and
Spark's conversion of every column of every row (PySpark 4.3 prunes no columns for a Python
data source: ``PythonScanBuilder`` implements ``SupportsPushDownFilters`` only, so even
``count()`` asks the reader for the whole schema).

Its partitions repeat ``kafka_log``'s plan (the same number of tasks per Kafka partition, the
same rows each), so a ``groupBy("topic", "partition").count()`` gives the same answer.
"""

from __future__ import annotations

import json
from typing import Any

from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition

NAME = "kafka_format_bench_floor"
#: Rows per batch handed to Spark: the runtime's default batch (``DEFAULT_BATCH_ROWS``).
BATCH_ROWS = 64 * 1024


class FloorSource(DataSource):
    """Options: ``schema`` (DDL) and ``parts`` (JSON ``[[topic, partition, rows], ...]``)."""

    @classmethod
    def name(cls) -> str:
        return NAME

    def schema(self) -> str:
        return self.options["schema"]

    def reader(self, schema: Any) -> FloorReader:
        return FloorReader(json.loads(self.options["parts"]), schema)


class FloorReader(DataSourceReader):
    def __init__(self, parts: list, schema: Any) -> None:
        self.parts = parts
        self.schema = schema

    def partitions(self) -> list[InputPartition]:
        return [InputPartition(tuple(part)) for part in self.parts]

    def read(self, partition: InputPartition):
        topic, kafka_partition, rows = partition.value
        template = template_batch(self.schema, topic, kafka_partition, min(rows, BATCH_ROWS))
        done = 0
        while done < rows:
            n = min(BATCH_ROWS, rows - done)
            yield template.slice(0, n)
            done += n


def template_batch(schema: Any, topic: str, partition: int, n: int):
    """``n`` rows of ``kafka_log``'s shape in ``schema``'s columns (Arrow, as Spark wants)."""
    import numpy as np
    import pyarrow as pa
    from pyspark.sql.pandas.types import to_arrow_schema

    target = to_arrow_schema(schema, timezone="UTC")

    def binary(width: int, fill: np.ndarray) -> pa.Array:
        offsets = np.arange(n + 1, dtype=np.int32) * width
        return pa.Array.from_buffers(
            pa.binary(), n, [None, pa.py_buffer(offsets), pa.py_buffer(fill)]
        )

    def keys() -> pa.Array:  # b"user-000123": eleven ASCII bytes, digits from numpy
        digits = (np.arange(n)[:, None] // 10 ** np.arange(5, -1, -1)) % 10 + ord("0")
        prefix = np.broadcast_to(np.frombuffer(b"user-", np.uint8), (n, 5))
        return binary(11, np.ascontiguousarray(np.hstack([prefix, digits.astype(np.uint8)])))

    rng = np.random.default_rng(partition)
    make = {
        "key": keys,
        "value": lambda: binary(100, rng.integers(0, 256, n * 100, dtype=np.uint8)),
        "topic": lambda: pa.array([topic] * n, pa.string()),
        "partition": lambda: pa.array(np.full(n, partition, np.int32)),
        "offset": lambda: pa.array(np.arange(n, dtype=np.int64)),
        "timestamp": lambda: pa.array(
            np.full(n, 1_700_000_000_000_000, np.int64), pa.timestamp("us", tz="UTC")
        ),
        "timestampType": lambda: pa.array(np.zeros(n, np.int32)),
    }
    columns = [make[f.name]().cast(f.type) for f in target]
    return pa.RecordBatch.from_arrays(columns, schema=target)
