"""The compile notice and ``kafka-format warm``: one line on stderr when the kernels compile
into a cold numba cache, none once they are cached; ``warm`` fills the cache (honouring
NUMBA_CACHE_DIR) and says where it is."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from kafka_format.runtime.cli import main
from kafka_format.runtime.kernels.compile_notice import (
    KERNEL_MODULES,
    NOTICE,
    cache_dirs,
    cold_kernels,
    kernels,
)
from kafka_format.runtime.write.generate import generate_log_dir


@pytest.fixture(scope="module")
def partition(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("warm") / "logs"
    generate_log_dir(root, seed=3, topics=["users"], records=100)
    return root / "users-0"


def test_every_kernel_module_is_watched():
    """Every module with a kernel of its own; ``addresses`` only has inlined helpers."""
    modules = {k.py_func.__module__.rsplit(".", 1)[1] for k in kernels()}
    assert modules == set(KERNEL_MODULES) - {"addresses"}


def test_warm_in_process_leaves_nothing_cold(capsys):
    assert main(["warm"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(("all ", "compiled ")) and "; cache: " in out
    assert cold_kernels() == []
    for directory in cache_dirs():
        assert directory.is_dir() and any(directory.glob("*.nbi"))
        assert str(directory) in out


def _kafka_format(cache: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache)}
    return subprocess.run(
        [sys.executable, "-m", "kafka_format", *args],
        capture_output=True,
        text=True,
        timeout=900,
        env=env,
    )


@pytest.mark.slow
def test_notice_once_on_a_cold_cache_then_silence(tmp_path, partition):
    cache = tmp_path / "numba-cache"
    first = _kafka_format(cache, "dump", "--jsonl", str(partition))  # the one cold compile
    assert first.returncode == 0, first.stderr
    assert first.stderr.count(NOTICE) == 1 and first.stderr == NOTICE + "\n"
    assert first.stdout.count("\n") > 50
    second = _kafka_format(cache, "dump", "--jsonl", str(partition))
    assert (second.returncode, second.stderr, second.stdout) == (0, "", first.stdout)
    warmed = _kafka_format(cache, "warm")
    assert warmed.returncode == 0 and warmed.stderr == ""
    assert f"; cache: {cache}" in warmed.stdout  # NUMBA_CACHE_DIR honoured
    assert any(cache.rglob("*.nbi"))
    after = _kafka_format(cache, "verify", str(partition))
    assert after.returncode == 0 and after.stderr == ""
    again = _kafka_format(cache, "warm")
    assert again.stdout.startswith("all ") and again.stderr == ""
