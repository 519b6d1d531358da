"""kafka_format under Spark Connect: a real Connect server (the pyspark wheel's own
SparkConnectServer, on 127.0.0.1 and a free port, started once for this module and always
stopped) and a client session in this process.

Oracles: the corpus's .jsonl for records; the runtime's own statistics and compaction
(``kafka_format.runtime.analysis.stats`` / ``runtime.log.compaction``, themselves checked
against Kafka's rules elsewhere) for ``log_stats`` and ``compact_log``; the planner run
in-process for the metrics.
"""

from __future__ import annotations

import json
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
pytest.importorskip("grpc", reason="the connect extra (grpcio) is not installed")

# Imported before any session exists, as a user's module would: must not need one.
import kafka_format  # noqa: E402
from kafka_format.runtime.analysis.stats import log_stats as runtime_stats  # noqa: E402
from kafka_format.runtime.log.compaction import compact as compact_dir  # noqa: E402
from kafka_format.runtime.write.writer import Message, PartitionWriter  # noqa: E402
from kafka_format.spark_udfs import (  # noqa: E402
    compact_log,
    kafka_batches,
    kafka_records,
    log_stats,
    read_metrics,
    register,
)
from kafka_format.spark_udfs._options import parse_options  # noqa: E402
from kafka_format.spark_udfs._planning import Planner  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
CORPUS_SET = "kafka-go/v2-v2.p0"
NOW = 1_800_000_000_000
START_TIMEOUT = 240


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def spark_home() -> Path:
    return Path(pyspark.__file__).parent


@pytest.fixture(scope="module")
def connect_url(tmp_path_factory):
    jars = list((spark_home() / "jars").glob("spark-connect_*.jar"))
    if not jars:
        pytest.skip("this pyspark wheel ships no spark-connect jar")
    port = free_port()
    log = tmp_path_factory.mktemp("connect") / "server.log"
    # The server's Python finds kafka_log by Spark's own look-up (pyspark_* modules), as an
    # installed wheel's would: a copy of the module on its path (an editable install's finder
    # is not listed by pkgutil).
    site = tmp_path_factory.mktemp("connect-site")
    shutil.copytree(ROOT / "src" / "pyspark_kafka_format", site / "pyspark_kafka_format")
    path = os.pathsep.join(p for p in (str(site), os.environ.get("PYTHONPATH")) if p)
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable, "PYTHONPATH": path}
    env.pop("SPARK_CONNECT_MODE_ENABLED", None)
    command = [
        str(spark_home() / "bin" / "spark-submit"),
        "--class",
        "org.apache.spark.sql.connect.service.SparkConnectServer",
        "--master",
        "local[2]",
        "--driver-memory",
        "768m",
        "--conf",
        "spark.connect.grpc.binding.address=127.0.0.1",
        "--conf",
        f"spark.connect.grpc.binding.port={port}",
        "--conf",
        "spark.ui.enabled=false",
        "--conf",
        "spark.sql.shuffle.partitions=2",
    ]
    with log.open("wb") as out:
        server = subprocess.Popen(
            command, stdout=out, stderr=subprocess.STDOUT, env=env, start_new_session=True
        )
    try:
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            if server.poll() is not None:
                pytest.fail(f"the Connect server exited ({server.returncode}): {log.read_text()}")
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            if time.monotonic() > deadline:
                pytest.fail(f"the Connect server did not listen in time: {log.read_text()[-3000:]}")
            time.sleep(1)
        yield f"sc://127.0.0.1:{port}"
    finally:
        # Its own process group: the JVM and every Python worker it started.
        os.killpg(server.pid, signal.SIGTERM)
        try:
            server.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait(timeout=30)


@pytest.fixture(scope="module")
def remote(connect_url):
    from pyspark.sql import SparkSession

    saved = os.environ.get("SPARK_CONNECT_MODE_ENABLED")
    # These tests run last (tests/conftest.py): the classic session the other tests share
    # ends here, or builder.remote() refuses with SESSION_ALREADY_EXIST.
    if SparkSession._instantiatedSession is not None:
        SparkSession._instantiatedSession.stop()
    session = SparkSession.builder.remote(connect_url).getOrCreate()
    try:
        yield session
    finally:
        session.stop()
        # builder.remote() switches this whole process to Connect (pyspark.sql.utils.is_remote):
        # switch it back for the classic tests that may follow in the same run.
        if saved is None:
            os.environ.pop("SPARK_CONNECT_MODE_ENABLED", None)
        else:
            os.environ["SPARK_CONNECT_MODE_ENABLED"] = saved


@pytest.fixture(scope="module")
def registration(remote):
    return register(remote)


@pytest.fixture(scope="module")
def log_dir(tmp_path_factory) -> Path:
    """Two partitions of repeated keys over several segments (something for the cleaner)."""
    root = tmp_path_factory.mktemp("connect-logs")
    for partition in (0, 1):
        with PartitionWriter(root, "accounts", partition, segment_bytes=1200) as w:
            for i in range(40):
                w.append([Message(b"acct-%d" % (i % 7), b"v%d" % i) for _ in range(2)])
    return root


def test_found_without_register(remote, log_dir):
    """First in this module: no registration has run in the server's session yet."""
    expected = kafka_format.read_table(log_dir).num_rows
    assert remote.read.format("kafka_log").load(str(log_dir)).count() == expected


def test_register_checks_the_servers_python(remote, registration):
    assert registration.workers is not None
    assert registration.workers.has_package
    assert registration.workers.executable == sys.executable  # the server's PYSPARK_PYTHON
    assert registration.bytes_read is None  # no accumulators under Connect


def test_read_and_functions(remote, registration, corpus_dir):
    from pyspark.sql import functions as F

    data = str(corpus_dir / f"{CORPUS_SET}.bin")
    expected = len((corpus_dir / f"{CORPUS_SET}.jsonl").read_text().splitlines())
    assert remote.read.format("kafka_log").load(data).count() == expected
    files = remote.read.format("binaryFile").load(data)
    records = files.select(F.explode(kafka_records("content")).alias("r"))
    assert records.count() == expected
    batches = files.select(F.explode(kafka_batches("content")).alias("b")).select("b.crcValid")
    assert batches.count() > 0 and all(r.crcValid for r in batches.collect())
    sql = (
        f"SELECT count(*) FROM binaryFile.`{data}` "
        "LATERAL VIEW explode(kafka_records(content)) t AS r"
    )
    assert remote.sql(sql).first()[0] == expected


def test_log_stats_under_connect(remote, registration, log_dir):
    found = [p.as_json() for p in runtime_stats(log_dir).partitions]
    expected = {(e["topic"], e["partition"]): e for e in found}
    rows = log_stats(remote, str(log_dir)).collect()
    assert [(r.topic, r.partition) for r in rows] == [("accounts", 0), ("accounts", 1)]
    for r in rows:
        want = expected[(r.topic, r.partition)]
        assert r.records == want["records"] and r.batches == want["batches"]
        assert r.files == want["files"] > 1


def test_compact_log_under_connect(remote, registration, log_dir):
    df = remote.read.format("kafka_log").load(str(log_dir))
    with pytest.raises(ValueError, match="path="):
        compact_log(df, now_ms=NOW)  # a Connect DataFrame does not tell its path
    got = sorted(
        (r.partition, r.offset, r.key, r.value)
        for r in compact_log(df, now_ms=NOW, path=str(log_dir)).collect()
    )
    want = sorted(
        (r.partition, r.offset, r.key, r.value)
        for p in (0, 1)
        for r in compact_dir(log_dir / f"accounts-{p}", now_ms=NOW).records
    )
    assert got == want
    assert len(want) < 2 * 80  # the pass removed something


def test_metrics_reach_the_client(remote, registration, log_dir):
    path = str(log_dir / "accounts-0")
    metrics = read_metrics(remote, path, startingOffsets="10")
    planner = Planner(parse_options({"path": path, "startingOffsets": "10"}))
    splits = planner.plan()
    assert metrics.splits == len(splits) > 1
    assert metrics.rows == 80 - 10
    assert metrics.bytes_read == sum(s.end - s.start for s in splits)
    assert metrics.corrupt_batches == 0
    per_split = remote.read.format("kafka_log_metrics").load(path).collect()
    assert sum(r.rows for r in per_split) == 80
    assert {r.file for r in per_split} == {str(p) for p in (log_dir / "accounts-0").glob("*.log")}


def test_remote_session_says_what_is_missing(tmp_path):
    # pyspark's own builder.remote() ends a `python -c` process with status 0 and no word
    # when grpc is missing; remote_session names the extra and fails.
    code = (
        "import sys; sys.modules['grpc'] = None\n"
        "from kafka_format.spark_udfs import remote_session\n"
        "remote_session('sc://127.0.0.1:1')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, timeout=120
    )
    assert done.returncode == 1
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("ImportError: a Spark Connect client needs grpcio")
    assert "kafka-format[connect]" in last


def test_remote_session_connects(connect_url, remote):
    from kafka_format.spark_udfs import remote_session

    # The same server through the helper: getOrCreate gives the running session back.
    assert remote_session(connect_url).range(3).count() == 3


def test_payloads_under_connect(remote, registration, confluent_log_dir):
    """valueFormat over Spark Connect: the struct typed on the server's driver, the values
    those Confluent's deserializer reads (v1 records with v2's defaults), and the SQL
    function, as in a local session (tests/spark/test_spark_payloads.py)."""
    logs = confluent_log_dir
    df = (
        remote.read.format("kafka_log")
        .option("valueFormat", "avro")
        .option("mode", "PERMISSIVE")
        .load(str(logs.log_dir / "orders-0"))
    )
    rows = sorted((r.asDict(recursive=True) for r in df.collect()), key=lambda r: r["offset"])
    defaults = {"note": None, "state": "NEW"}  # ORDERS_V2's, for the v1 records
    for row, expected in zip(rows, logs.expected["orders"], strict=True):
        if expected is not None:
            assert row["value"] == {**defaults, **expected}
            assert row["_payload_error"] is None
    assert rows[2]["value"] is None and "magic byte" in rows[2]["_payload_error"]
    assert "99" in rows[4]["_payload_error"]
    clicks = remote.read.format("kafka_log").load(str(logs.log_dir / "clicks-0"))
    clicks.createOrReplaceTempView("clicks_bytes")
    got = remote.sql(
        f"SELECT kafka_payload_json(value, 'json-schema', '{logs.log_dir}') AS v "
        "FROM clicks_bytes ORDER BY offset"
    ).collect()
    assert [json.loads(r.v) for r in got] == logs.expected["clicks"]
