"""kafka_log on a Spark standalone cluster: one master and one worker on 127.0.0.1, started
from the pyspark wheel's own ``spark-class`` once for this module and always stopped.

The application runs as users run one, in its own process (``python app.py`` with
PYSPARK_PYTHON naming this venv's interpreter, as docs/spark-cluster.md says), since a
process holds one SparkContext. Oracle: the records the writer says it wrote; the bytes the
tasks fetched against the segment files' sizes.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

pyspark = pytest.importorskip("pyspark")

from kafka_format.runtime.write.writer import Message, PartitionWriter  # noqa: E402

START_TIMEOUT = 180
ROOT = Path(__file__).resolve().parents[2]

APP = """
import sys
from pyspark.sql import SparkSession
from kafka_format.spark_udfs import WorkerPythonError, register

spark = (
    SparkSession.builder.master(sys.argv[1]).appName("kafka-format-cluster-test")
    .config("spark.executor.memory", "512m").config("spark.executor.cores", "1")
    .config("spark.cores.max", "1").config("spark.ui.enabled", "false")
    .config("spark.ui.showConsoleProgress", "false")
    .config("spark.driver.host", "127.0.0.1").config("spark.driver.bindAddress", "127.0.0.1")
    .getOrCreate()
)
try:
    kafka = register(spark)
except WorkerPythonError as exc:
    print("ERROR " + str(exc))
    sys.exit(3)
df = spark.read.format("kafka_log").load(sys.argv[2])
print("COUNTS", sorted((r.topic, r.partition, r["count"]) for r in
                       df.groupBy("topic", "partition").count().collect()))
print("BYTES", kafka.bytes_read.value)
print("EXECUTORS", spark.sparkContext._jsc.sc().getExecutorMemoryStatus().size())
spark.stop()
"""


#: The same read without register(): the source found by Spark's own look-up of pyspark_*
#: modules on the driver (tests/spark/test_spark_lookup.py says why a copy is put on the path).
APP_UNREGISTERED = """
import sys
from pyspark.sql import SparkSession

spark = (
    SparkSession.builder.master(sys.argv[1]).appName("kafka-format-lookup-test")
    .config("spark.executor.memory", "512m").config("spark.executor.cores", "1")
    .config("spark.cores.max", "1").config("spark.ui.enabled", "false")
    .config("spark.ui.showConsoleProgress", "false")
    .config("spark.driver.host", "127.0.0.1").config("spark.driver.bindAddress", "127.0.0.1")
    .getOrCreate()
)
df = spark.read.format("kafka_log").load(sys.argv[2])
print("COUNTS", sorted((r.topic, r.partition, r["count"]) for r in
                       df.groupBy("topic", "partition").count().collect()))
spark.stop()
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def spark_class() -> str:
    return str(Path(pyspark.__file__).parent / "bin" / "spark-class")


def cluster_env() -> dict[str, str]:
    env = {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1", "PYSPARK_PYTHON": sys.executable}
    env.pop("SPARK_CONNECT_MODE_ENABLED", None)
    return env


def stop(process: subprocess.Popen) -> None:
    if process.poll() is not None:
        return
    os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=30)


def wait_for(log: Path, text: str, process: subprocess.Popen, what: str) -> None:
    deadline = time.monotonic() + START_TIMEOUT
    while text not in (log.read_text(errors="replace") if log.exists() else ""):
        if process.poll() is not None:
            pytest.fail(f"the {what} exited ({process.returncode}): {log.read_text()[-3000:]}")
        if time.monotonic() > deadline:
            pytest.fail(f"the {what} did not start in time: {log.read_text()[-3000:]}")
        time.sleep(1)


@pytest.fixture(scope="module")
def master_url(tmp_path_factory):
    logs = tmp_path_factory.mktemp("cluster")
    port = free_port()
    started: list[subprocess.Popen] = []
    try:
        master_log = logs / "master.log"
        with master_log.open("wb") as out:
            master = subprocess.Popen(
                [spark_class(), "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
                 "--port", str(port), "--webui-port", str(free_port())],
                stdout=out, stderr=subprocess.STDOUT, env=cluster_env(), start_new_session=True,
            )  # fmt: skip
        started.append(master)
        wait_for(master_log, "I have been elected leader", master, "master")
        url = f"spark://127.0.0.1:{port}"
        with (logs / "worker.log").open("wb") as out:
            worker = subprocess.Popen(
                [spark_class(), "org.apache.spark.deploy.worker.Worker", "--host", "127.0.0.1",
                 "--cores", "1", "--memory", "768m", "--webui-port", str(free_port()), url],
                stdout=out, stderr=subprocess.STDOUT, env=cluster_env(), start_new_session=True,
            )  # fmt: skip
        started.append(worker)
        wait_for(master_log, "Registering worker", master, "master")
        yield url
    finally:
        for process in reversed(started):
            stop(process)


@pytest.fixture(scope="module")
def log_dir(tmp_path_factory) -> tuple[Path, dict]:
    root = tmp_path_factory.mktemp("cluster-logs")
    written = {}
    for topic, partition in (("orders", 0), ("orders", 1), ("users", 0)):
        with PartitionWriter(root, topic, partition, segment_bytes=4096) as w:
            for b in range(30):
                w.append([Message(b"k%d" % i, b"value %d-%d" % (b, i)) for i in range(4)])
        written[(topic, partition)] = 30 * 4
    return root, written


def run_app(tmp_path: Path, master_url: str, data: Path, app: str = APP, **env: str):
    script = tmp_path / "app.py"
    script.write_text(app)
    return subprocess.run(
        [sys.executable, str(script), master_url, str(data)],
        capture_output=True,
        text=True,
        env={**cluster_env(), **env},
        cwd=tmp_path,
        timeout=600,
        check=False,
    )


def test_read_and_count_on_a_standalone_cluster(tmp_path, master_url, log_dir):
    root, written = log_dir
    done = run_app(tmp_path, master_url, root)
    assert done.returncode == 0, done.stdout + done.stderr[-4000:]
    lines = dict(line.split(" ", 1) for line in done.stdout.splitlines() if " " in line)
    expected = sorted((t, p, n) for (t, p), n in written.items())
    assert lines["COUNTS"] == str(expected)
    # Every byte of every segment was fetched once, by the executor's tasks.
    assert int(lines["BYTES"]) == sum(p.stat().st_size for p in root.glob("*/*.log"))
    assert int(lines["EXECUTORS"]) == 2  # the driver and the worker's one executor


def test_a_driver_python_without_the_package_is_one_line(tmp_path, master_url, log_dir):
    root, _ = log_dir
    bare = Path("/usr/bin/python3")
    if (
        not bare.exists()
        or subprocess.run([str(bare), "-c", "import kafka_format"]).returncode == 0
    ):
        pytest.skip("no system python3 without kafka_format")
    done = run_app(tmp_path, master_url, root, PYSPARK_PYTHON=str(bare))
    assert done.returncode == 3, done.stdout + done.stderr[-4000:]
    (line,) = [x for x in done.stdout.splitlines() if x.startswith("ERROR ")]
    assert "on the driver" in line and str(bare) in line
    assert "PYSPARK_PYTHON" in line and "spark.pyspark.python" in line


def test_found_without_register_on_a_standalone_cluster(tmp_path, master_url, log_dir):
    root, written = log_dir
    site = tmp_path / "site"
    shutil.copytree(ROOT / "src" / "pyspark_kafka_format", site / "pyspark_kafka_format")
    path = os.pathsep.join(p for p in (str(site), os.environ.get("PYTHONPATH")) if p)
    done = run_app(tmp_path, master_url, root, APP_UNREGISTERED, PYTHONPATH=path)
    assert done.returncode == 0, done.stdout + done.stderr[-4000:]
    lines = dict(line.split(" ", 1) for line in done.stdout.splitlines() if " " in line)
    assert lines["COUNTS"] == str(sorted((t, p, n) for (t, p), n in written.items()))
