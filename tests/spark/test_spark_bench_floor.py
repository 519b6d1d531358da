"""The parquet bench's floor (``bench/pyfloor.py``) through a real local SparkSession: it must
stand for ``kafka_log`` in everything but decoding, or its row in ``bench/results.md`` says
nothing. Same Arrow schema and bytes per row as what ``kafka_log``'s tasks hand Spark for the
bench's records (oracle: ``read_split`` over a generated bench log directory), and the rows
per topic and partition it was asked for.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

pyspark = pytest.importorskip("pyspark")

from pyspark import cloudpickle  # noqa: E402

from kafka_format.runtime.write.generate import generate_log_dir  # noqa: E402
from kafka_format.spark_udfs._options import parse_options  # noqa: E402
from kafka_format.spark_udfs._planning import plan  # noqa: E402
from kafka_format.spark_udfs._reading import Counters, read_split  # noqa: E402
from kafka_format.spark_udfs.datasource import kafka_schema, output_for  # noqa: E402

BENCH = Path(__file__).resolve().parents[2] / "bench"


@pytest.fixture(scope="module")
def pyfloor():
    sys.path.insert(0, str(BENCH))
    try:
        import pyfloor
    finally:
        sys.path.remove(str(BENCH))
    return pyfloor


def test_floor_batches_have_kafka_logs_shape(tmp_path, pyfloor):
    logs = tmp_path / "logs"
    generate_log_dir(logs, size_bytes=2 << 20, segment_bytes=1 << 20)
    options = parse_options({"path": str(logs)})
    output = output_for(kafka_schema(), options)
    ours = [b for s in plan(options) for b in read_split(s, options, output, Counters())]
    rows = sum(b.num_rows for b in ours)
    floor = pyfloor.template_batch(kafka_schema(), "bench", 0, rows)
    assert floor.schema.equals(output.schema)
    assert floor.schema.equals(ours[0].schema)
    for name in floor.schema.names:
        theirs = sum(b.column(name).nbytes for b in ours)
        # Same column sizes but for the keys' digits ("user-000123" in both).
        assert floor.column(name).nbytes == pytest.approx(theirs, rel=0.01), name


def test_floor_source_gives_the_rows_it_was_asked_for(spark, pyfloor):
    cloudpickle.register_pickle_by_value(pyfloor)
    spark.dataSource.register(pyfloor.FloorSource)
    parts = [["bench", 0, 70_000], ["bench", 1, 3], ["bench", 0, 5], ["other", 2, 0]]
    for ddl in (
        "topic string, partition int",
        "key binary, value binary, topic string, "
        "partition int, offset bigint, timestamp timestamp, timestampType int",
    ):
        df = (
            spark.read.format(pyfloor.NAME)
            .option("schema", ddl)
            .option("parts", json.dumps(parts))
            .load()
        )
        got = {(r[0], r[1]): r[2] for r in df.groupBy("topic", "partition").count().collect()}
        assert got == {("bench", 0): 70_005, ("bench", 1): 3}
        assert df.count() == 70_008
