"""``kafka_log`` found by Spark's own look-up of Python data sources, without ``register``.

PySpark registers the ``DefaultSource`` of every top-level ``pyspark_*`` module it can list
(``pyspark/sql/worker/lookup_data_sources.py``: ``pkgutil.iter_modules``). An installed wheel
puts ``pyspark_kafka_format`` in site-packages (``tests/test_packaging.py`` checks that); an
editable install maps its modules through a finder that ``iter_modules`` does not list, so
these tests put a copy of the module on the ``PYTHONPATH`` of a fresh driver, as site-packages
would be, and read with a session that never called ``register``. Oracle: ``read_table``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

import kafka_format
from kafka_format.runtime.write.writer import Message, PartitionWriter

ROOT = Path(__file__).resolve().parents[2]
LOOKUP_MODULE = ROOT / "src" / "pyspark_kafka_format"

APP = """
import json, sys
from pyspark.sql import SparkSession

spark = (SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false")
         .config("spark.ui.showConsoleProgress", "false").getOrCreate())
path = sys.argv[1]
rows = spark.read.format("kafka_log").load(path).groupBy("topic", "partition").count().collect()
spark.sql(f"CREATE TEMPORARY VIEW orders USING kafka_log OPTIONS (path '{path}/orders-0')")
sql = spark.sql("SELECT count(*), max(offset) FROM orders").first()
# a catalog table reaches the reader without its options (Spark 4.x): one clear line says so
spark.sql(f"CREATE TABLE kept USING kafka_log OPTIONS (path '{path}/orders-0')")
try:
    spark.sql("SELECT count(*) FROM kept").collect()
    table = "read"
except Exception as exc:
    said = "CREATE TEMPORARY VIEW t USING kafka_log" in str(exc)
    table = "CREATE TEMPORARY VIEW" if said else str(exc)
print("RESULT " + json.dumps({
    "counts": sorted([r["topic"], r["partition"], r["count"]] for r in rows),
    "sql": [sql[0], sql[1]],
    "table": table,
}))
spark.stop()
"""


@pytest.fixture(scope="module")
def log_dir(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("lookup") / "logs"
    for topic, partition, n in (("orders", 0, 7), ("orders", 1, 3), ("clicks", 0, 5)):
        with PartitionWriter(root, topic, partition) as writer:
            for i in range(n):
                writer.append([Message(b"k%d" % i, b"v%d" % i)])
    return root


def test_read_and_sql_without_register(tmp_path: Path, log_dir: Path) -> None:
    site = tmp_path / "site"
    shutil.copytree(LOOKUP_MODULE, site / "pyspark_kafka_format")
    script = tmp_path / "app.py"
    script.write_text(APP)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(site), env.get("PYTHONPATH")) if p)
    env["PYSPARK_PYTHON"] = env["PYSPARK_DRIVER_PYTHON"] = sys.executable
    proc = subprocess.run(
        [sys.executable, str(script), str(log_dir)],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    (line,) = [x for x in proc.stdout.splitlines() if x.startswith("RESULT ")]
    result = json.loads(line.removeprefix("RESULT "))
    table = kafka_format.read_table(log_dir)
    pairs = Counter(zip(table["topic"].to_pylist(), table["partition"].to_pylist(), strict=True))
    expected = sorted([topic, partition, n] for (topic, partition), n in pairs.items())
    assert result["counts"] == expected
    orders_0 = kafka_format.read_table(log_dir / "orders-0")
    assert result["sql"] == [orders_0.num_rows, max(orders_0["offset"].to_pylist())]
    # the session has a warehouse of its own, in cwd: a catalog table's read names the way out
    assert result["table"] == "CREATE TEMPORARY VIEW"


def test_the_module_only_names_the_source() -> None:
    """Spark imports every ``pyspark_*`` module at each look-up: this one must name the
    ``kafka_log`` source and nothing heavier."""
    from pyspark.sql.datasource import DataSource

    import pyspark_kafka_format  # the editable install's finder maps it

    assert issubclass(pyspark_kafka_format.DefaultSource, DataSource)
    assert pyspark_kafka_format.DefaultSource.name() == "kafka_log"
    assert pyspark_kafka_format.__all__ == ["DefaultSource"]
