"""A Spark task's chunk found by the numba scanner (``_reading._whole_frames``) when the split
needs no per-frame decision (no offset bounds, nothing aborted, no salvage): the same rows
and the same errors as the per-frame walk, on healthy and damaged directories, in every mode.
Read in-process as the tasks read it."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytest.importorskip("pyspark")

from kafka_format.runtime.errors import KafkaFormatError
from kafka_format.runtime.write.generate import generate_log_dir
from kafka_format.spark_udfs import _reading
from kafka_format.spark_udfs._options import parse_options
from kafka_format.spark_udfs._planning import Planner
from kafka_format.spark_udfs._reading import Counters, read_split
from kafka_format.spark_udfs.datasource import kafka_schema, output_for


@pytest.fixture(scope="module")
def log_dir(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("fast") / "logs"
    generate_log_dir(root, seed=5, records=200)
    return root


def _read(path: Path, **options) -> tuple[list, tuple | None]:
    opts = parse_options({"path": str(path), **options})
    out = output_for(kafka_schema(False), opts)
    rows = []
    try:
        for split in Planner(opts).plan():
            for batch in read_split(split, opts, out, Counters()):
                rows.extend(batch.to_pylist())
    except KafkaFormatError as exc:
        return rows, (type(exc).__name__, str(exc))
    return rows, None


def _same(path: Path, monkeypatch, **options):
    scanned = []
    whole = _reading._whole_frames
    monkeypatch.setattr(_reading, "_whole_frames", lambda *a: scanned.append(1) or whole(*a))
    fast = _read(path, **options)
    monkeypatch.setattr(_reading, "_whole_frames", lambda *a: None)  # the per-frame walk
    walked = _read(path, **options)
    assert fast == walked
    return fast, scanned


def test_a_healthy_directory_reads_alike_and_takes_the_scanner(log_dir, monkeypatch):
    (rows, error), scanned = _same(log_dir, monkeypatch)
    assert error is None and len(rows) > 1000 and scanned


@settings(max_examples=20, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    picks=st.lists(st.tuples(st.integers(0, 1 << 20), st.integers(0, 1 << 30)), max_size=3),
    cut=st.booleans(),
    mode=st.sampled_from(["FAILFAST", "DROPMALFORMED", "PERMISSIVE"]),
)
def test_a_damaged_directory_reads_alike(log_dir, tmp_path_factory, monkeypatch, picks, cut, mode):
    root = tmp_path_factory.mktemp("damaged") / "logs"
    shutil.copytree(log_dir, root)
    segments = sorted(p for p in root.rglob("*.log") if p.stat().st_size > 200)
    for which, at in picks:
        path = segments[which % len(segments)]
        data = bytearray(path.read_bytes())
        data[at % len(data)] ^= 0x5A
        if cut:
            data = data[: len(data) - 7]
        path.write_bytes(bytes(data))
    _, scanned = _same(root, monkeypatch, mode=mode)
    assert scanned
