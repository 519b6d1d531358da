"""The wheel installs into a fresh virtual environment as one ``kafka_format`` namespace."""

from __future__ import annotations

import json
import os
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
    env = {k: v for k, v in os.environ.items() if k != "KAFKA_FORMAT_NO_KERNEL_CACHE"}
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
        env=env,
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


def test_wheel_ships_every_kernel_compiled(wheel: Path) -> None:
    """scripts/kernel_cache.py: each kernel's numba index and machine code are in the wheel,
    beside the kernel's source, where numba's in-tree look-up finds them once installed."""
    from kafka_format.runtime.kernels.compile_notice import kernels

    names = set(zipfile.ZipFile(wheel).namelist())
    cached = "kafka_format/runtime/kernels/__pycache__/"
    for dispatcher in kernels():
        index = Path(dispatcher._cache._cache_file._index_path).name
        assert cached + index in names, f"{dispatcher.py_func.__qualname__}: no {index}"
        stem = index.removesuffix(".nbi")
        assert any(n.startswith(cached + stem) and n.endswith(".nbc") for n in names), stem
    assert not any(n.endswith(".pyc") for n in names)


def test_a_wheels_isolated_build_gets_the_runtime_dependencies(monkeypatch) -> None:
    """``pip install`` of the checkout or the sdist builds the wheel in an isolated
    environment: the backend (scripts/kernel_cache.py) adds the runtime's dependencies there,
    which compiling the kernels imports; an editable install compiles nothing and gets none."""
    import importlib.util
    import tomllib

    spec = importlib.util.spec_from_file_location(
        "kafka_format_build_backend", ROOT / "scripts" / "kernel_cache.py"
    )
    backend = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(backend)
    with open(ROOT / "pyproject.toml", "rb") as fh:
        pyproject = tomllib.load(fh)
    assert pyproject["build-system"]["build-backend"] == "kernel_cache"
    runtime = pyproject["project"]["dependencies"]
    monkeypatch.chdir(ROOT)
    assert set(runtime) <= set(backend.get_requires_for_build_wheel())
    assert not set(runtime) & set(backend.get_requires_for_build_editable())


#: Run in the fresh venv: every command on a generated log dir, in one process, listing the
#: kernels numba compiles (none: the wheel's cache answers them all).
_FIRST_COMMANDS = r"""
import contextlib, io, json, sys
from numba.core import event

compiled = []

class Listener(event.Listener):
    def on_start(self, ev):
        func = getattr((ev.data or {}).get("dispatcher"), "py_func", None)
        if func is not None and func.__module__.startswith("kafka_format"):
            compiled.append(f"{func.__module__}.{func.__qualname__}")

    def on_end(self, ev):
        pass

event.register("numba:compile", Listener())
from kafka_format.runtime.cli.app import main

root = sys.argv[1]
commands = [
    ["generate", f"{root}/logs"],
    ["dump", "--jsonl", f"{root}/logs"],
    ["dump", f"{root}/logs"],
    ["verify", f"{root}/logs"],
    ["stats", f"{root}/logs"],
    ["find", "--offset", "5", f"{root}/logs/orders-0"],
    ["producers", f"{root}/logs"],
    ["recover", f"{root}/logs", f"{root}/recovered"],
    ["compact", "--now", "0", f"{root}/recovered/orders-0"],
]
codes = {}
for argv in commands:
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        codes[argv[0] + " " + argv[1]] = main(argv)
print(json.dumps({"codes": codes, "compiled": compiled}))
"""


def test_wheel_runs_in_a_fresh_venv(wheel: Path, tmp_path: Path) -> None:
    import numba

    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    py = env_dir / "bin" / "python"
    # numba loads a cache entry only under the numba that wrote it: the build's
    install = subprocess.run(
        [str(py), "-m", "pip", "install", "--quiet", str(wheel), f"numba=={numba.__version__}"],
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
    # A fresh install compiles nothing for any command (issue 24: no half-minute first call).
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    first = subprocess.run(
        [str(py), "-c", _FIRST_COMMANDS, str(tmp_path)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
    )
    assert first.returncode == 0, first.stderr[-2000:]
    got = json.loads(first.stdout.strip().splitlines()[-1])
    assert got["compiled"] == []
    assert set(got["codes"].values()) == {0}, got["codes"]
