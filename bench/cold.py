"""A cold Spark executor's first task: what numba's compile costs a query when the kernels'
cache is empty, and what `kafka-format warm` (the cache filled ahead) leaves of it.

Each case is a fresh process, hence a fresh JVM and fresh Python workers (local[2], the
workers reused as `local_session` sets): it points ``NUMBA_CACHE_DIR`` (driver and workers:
local mode's workers inherit the driver's environment) at a directory of its own, builds the
DataFrame (the driver plans in Python), then runs ``count()`` twice on a small log directory.
Before it, a trivial Python data source (one row a partition, no imports) is counted once:
Spark's own cold start for Python tasks (the JVM's first job, the workers forked), paid by
any Python data source. The second count runs in the same warm workers: the first's extra
time is this package's cold start (its imports, the kernels loaded or compiled).

    .venv/bin/python bench/run.py --only spark-cold
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HEADING = "## Spark: a cold executor's first task"

CHILD = r"""
import json, sys, time
t0 = time.perf_counter()
from kafka_format.spark_udfs import local_session, register
spark = local_session(app_name="kafka-format-cold", conf={"spark.ui.showConsoleProgress": "false"})
register(spark)
from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition

class Trivial(DataSource):
    # Spark's own cold start for a Python data source: one row a partition, no imports.

    @classmethod
    def name(cls):
        return "trivial_cold"

    def schema(self):
        return "n long"

    def reader(self, schema):
        return TrivialReader()

class TrivialReader(DataSourceReader):
    def partitions(self):
        return [InputPartition(i) for i in range(2)]

    def read(self, partition):
        yield (partition.value,)

spark.dataSource.register(Trivial)
ta = time.perf_counter()
trivial = spark.read.format("trivial_cold").load().count()
tb = time.perf_counter()
t1 = time.perf_counter()
df = spark.read.format("kafka_log").load(sys.argv[1])
t2 = time.perf_counter()
first = df.count()
t3 = time.perf_counter()
second = df.count()
t4 = time.perf_counter()
spark.stop()
print(json.dumps({"session": ta - t0, "trivial": tb - ta, "plan": t2 - t1, "first": t3 - t2,
                  "second": t4 - t3, "records": first, "again": second}))
"""

_WARM = [sys.executable, "-m", "kafka_format.runtime.cli", "warm"]


def _count(log_dir: Path, cache: Path) -> dict:
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache), "PYSPARK_PYTHON": sys.executable}
    out = subprocess.run(
        [sys.executable, "-c", CHILD, str(log_dir)],
        capture_output=True,
        text=True,
        env=env,
    )
    if out.returncode:
        raise RuntimeError(f"the Spark child failed: {out.stderr.strip().splitlines()[-1:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def run(log, quick: bool = False) -> dict:
    from kafka_format.runtime.write.generate import generate_log_dir

    scratch = Path(tempfile.mkdtemp(prefix="kafka-format-cold-"))
    try:
        log_dir = scratch / "logs"
        generated = generate_log_dir(log_dir, size_bytes=(2 if quick else 16) << 20)
        records = sum(p.records for p in generated.partitions.values())
        result = {"records": records}
        cold = scratch / "cache-cold"
        cold.mkdir()
        log("  an empty numba cache")
        result["cold"] = _count(log_dir, cold)
        warm = scratch / "cache-warm"
        warm.mkdir()
        log("  `kafka-format warm`, then a fresh session on that cache")
        env = {**os.environ, "NUMBA_CACHE_DIR": str(warm)}
        subprocess.run(_WARM, check=True, capture_output=True, env=env)
        result["warm"] = _count(log_dir, warm)
        for case in ("cold", "warm"):
            got = result[case]
            if got["records"] != records or got["again"] != records:
                raise RuntimeError(f"{case}: counted {got['records']}, {got['again']} of {records}")
        return result
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def render(result: dict, machine: str) -> str:
    lines = [
        HEADING,
        "",
        "A fresh process and JVM each (local[2], Python workers reused), `NUMBA_CACHE_DIR` "
        "pointing at a directory of the case's own for the driver and the workers; "
        f"`count()` twice over a generated log directory ({result['records']} records). "
        "A trivial Python data source's first count comes first (Spark's own cold start for "
        "Python tasks: the JVM's first job, the workers forked). Then `kafka_log`'s first "
        "count (the workers import this package and compile or load the kernels), then its "
        "second, in the same warm workers. Target (issue 19): the first call after a fresh "
        "install at most 2 s, or the compile done once per machine ahead of time and announced.",
        "",
        "| numba cache | session s | trivial source, first count s | kafka_log: plan (driver) s "
        "| first count s | second count s | cold start (first - second) s |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    names = {"cold": "empty (a cold executor)", "warm": "filled by `kafka-format warm`"}
    for case in ("cold", "warm"):
        got = result[case]
        lines.append(
            f"| {names[case]} | {got['session']:.1f} | {got['trivial']:.2f} | {got['plan']:.2f} | "
            f"{got['first']:.2f} | "
            f"{got['second']:.2f} | {got['first'] - got['second']:.2f} |"
        )
    lines += [
        "",
        "A cold executor compiles every kernel its first task calls; both workers of local[2] "
        "do so at once, each on one core. `kafka-format warm` run on each node (or in the "
        "image) with the `NUMBA_CACHE_DIR` the executors use takes that out of the first "
        "task (docs/spark-cluster.md).",
        "",
        f"Machine: {machine}.",
        "",
    ]
    return "\n".join(lines)
