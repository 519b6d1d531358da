"""The README's Spark snippet run as users run it: ``.venv/bin/python app.py``, venv not activated.

Each test starts a fresh interpreter of this venv with a PATH whose ``python3`` is the system's
(/usr/bin/python3, which has no kafka_format, as Spark's workers would otherwise start it), and
no PYSPARK_PYTHON. Oracle: the corpus's .jsonl (the records its source's own reader decoded).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("pyspark")

SYSTEM_PYTHON = Path("/usr/bin/python3")
CORPUS_SET = "kafka-go/v2-v2.p0"

# The README's snippet, as written there (a plain session), then one count.
APP = """
import sys
from pyspark.sql import SparkSession
from kafka_format.spark_udfs import WorkerPythonError, register

spark = (SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false")
         .config("spark.ui.showConsoleProgress", "false").getOrCreate())
try:
    kafka = register(spark)
except WorkerPythonError as exc:
    print("ERROR " + str(exc))
    sys.exit(3)
print("WORKERS " + kafka.workers.executable)
print("COUNT", spark.read.format("kafka_log").load(sys.argv[1]).count())
print("SQL", spark.sql(
    "SELECT count(*) FROM binaryFile.`" + sys.argv[1] + "` "
    "LATERAL VIEW explode(kafka_records(content)) t AS r").first()[0])
spark.stop()
"""


@pytest.fixture(scope="module")
def system_bin(tmp_path_factory) -> Path:
    if not SYSTEM_PYTHON.exists():
        pytest.skip("no system /usr/bin/python3 to stand for an unactivated venv's PATH")
    probe = subprocess.run(
        [str(SYSTEM_PYTHON), "-c", "import kafka_format"], capture_output=True, check=False
    )
    if probe.returncode == 0:
        pytest.skip("the system python3 has kafka_format: it cannot stand for a bare PATH")
    directory = tmp_path_factory.mktemp("bin")
    (directory / "python3").symlink_to(SYSTEM_PYTHON)
    return directory


def run_app(tmp_path: Path, system_bin: Path, data: Path, **extra_env: str):
    script = tmp_path / "app.py"
    script.write_text(APP)
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON", "VIRTUAL_ENV", "PYTHONPATH")
    }
    env["PATH"] = f"{system_bin}:/usr/bin:/bin"
    env.update(extra_env)
    # The venv's interpreter by its path, as `.venv/bin/python app.py` starts it.
    return subprocess.run(
        [sys.executable, str(script), str(data)],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=240,
        check=False,
    )


def test_plain_session_from_an_unactivated_venv_reads(tmp_path, system_bin, corpus_dir):
    data = corpus_dir / f"{CORPUS_SET}.bin"
    expected = len((corpus_dir / f"{CORPUS_SET}.jsonl").read_text().splitlines())
    assert expected > 0
    done = run_app(tmp_path, system_bin, data)
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    lines = done.stdout.splitlines()
    assert f"WORKERS {sys.executable}" in lines
    assert f"COUNT {expected}" in lines
    assert f"SQL {expected}" in lines
    assert "ModuleNotFoundError" not in done.stderr
    # ... and it says, once, what it changed.
    assert "cannot import kafka_format" in done.stderr


def test_an_explicit_python_without_the_package_is_one_line(tmp_path, system_bin, corpus_dir):
    data = corpus_dir / f"{CORPUS_SET}.bin"
    done = run_app(tmp_path, system_bin, data, PYSPARK_PYTHON=str(system_bin / "python3"))
    assert done.returncode == 3, done.stdout + done.stderr[-3000:]
    errors = [line for line in done.stdout.splitlines() if line.startswith("ERROR ")]
    assert len(errors) == 1
    message = errors[0]
    assert "cannot import kafka_format" in message
    assert "PYSPARK_PYTHON" in message and "spark.pyspark.python" in message
    assert str(system_bin / "python3") in message
    assert sys.executable in message  # the interpreter that would do
    assert "Traceback" not in done.stdout + done.stderr


def test_a_python_with_the_package_is_left_alone(tmp_path, system_bin, corpus_dir):
    data = corpus_dir / f"{CORPUS_SET}.bin"
    done = run_app(tmp_path, system_bin, data, PYSPARK_PYTHON=sys.executable)
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    assert f"WORKERS {sys.executable}" in done.stdout.splitlines()
    assert "cannot import kafka_format" not in done.stderr
