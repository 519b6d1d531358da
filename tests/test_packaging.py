"""The wheel installs into a fresh virtual environment as one ``kafka_format`` namespace."""

from __future__ import annotations

import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "build",
            "--wheel",
            "--no-isolation",
            "--outdir",
            str(out),
            str(ROOT),
        ],
        check=True,
        capture_output=True,
    )
    (found,) = out.glob("kafka_format-*.whl")
    return found


def test_wheel_holds_one_namespace(wheel: Path) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    tops = {n.split("/")[0] for n in names if not n.split("/")[0].endswith(".dist-info")}
    # and the one module Spark's look-up of Python data sources lists (pyspark_*)
    assert tops == {"kafka_format", "pyspark_kafka_format"}
    assert "pyspark_kafka_format/__init__.py" in names
    for sub in ("schemas", "generated", "runtime", "spark_udfs"):
        assert f"kafka_format/{sub}/__init__.py" in names
    assert "kafka_format/generated/kaitai/record_batch.py" in names
    assert any(n.endswith(".ksy") for n in names), "the .ksy schemas ship as package data"
    assert "kafka_format/runtime/analysis/inspect_page.html" in names


def test_wheel_runs_in_a_fresh_venv(wheel: Path, tmp_path: Path) -> None:
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    py = env_dir / "bin" / "python"
    install = subprocess.run(
        [str(py), "-m", "pip", "install", "--quiet", str(wheel)],
        capture_output=True,
        text=True,
    )
    assert install.returncode == 0, install.stderr[-2000:]
    help_out = subprocess.run(
        [str(env_dir / "bin" / "kafka-format"), "--help"], capture_output=True, text=True
    )
    assert help_out.returncode == 0, help_out.stderr
    assert "dump" in help_out.stdout
    # Imported from outside the checkout, so only the installed copy can answer.
    probe = subprocess.run(
        [
            str(py),
            "-c",
            "import kafka_format, kafka_format.runtime.read.reader;"
            "import kafka_format.generated.kaitai.record_batch;"
            "import importlib.util as u;"
            "print(kafka_format.__file__);"
            "print(u.find_spec('runtime'), u.find_spec('generated'))",
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert probe.returncode == 0, probe.stderr
    location, tops = probe.stdout.splitlines()
    assert str(env_dir) in location
    assert tops == "None None", "no generic top-level runtime/generated package installed"
    # what Spark's lookup_data_sources does first: list the pyspark_* modules
    listed = subprocess.run(
        [
            str(py),
            "-c",
            "import pkgutil; print(sorted(m.name for m in pkgutil.iter_modules()"
            " if m.name.startswith('pyspark_')))",
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert listed.stdout.strip() == "['pyspark_kafka_format']", listed.stderr
