"""Small files read whole by the workers, ahead (``read/ahead.py``): a directory read with
several threads gives exactly what a read with one gives (the batches, their order, the
report's entries and where they come, the error and the rows before it), on healthy and
damaged directories, with ranges and limits; and it does read ahead."""

from __future__ import annotations

import shutil
from pathlib import Path

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import kafka_format as kf
from kafka_format.runtime.read import ahead, columnar, grouped
from kafka_format.runtime.write.generate import generate_log_dir


@pytest.fixture(autouse=True)
def every_file_ahead(monkeypatch):
    # The generated segments are a few KiB: below AHEAD_MIN_BYTES, they would be read in
    # order. The rule is the same whatever the size; only speed decides the threshold.
    monkeypatch.setattr(ahead, "AHEAD_MIN_BYTES", 0)
    # ... and they would be decoded together (grouped.py, tested in test_grouped.py).
    monkeypatch.setattr(grouped, "GROUP_FILE_BYTES", 0)


@pytest.fixture(scope="module")
def log_dir(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("ahead") / "logs"
    generate_log_dir(root, seed=3, records=300)
    return root


def _segments(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*.log") if p.stat().st_size > 200)


def _read(source, threads: int, **options):
    """The batches yielded, each with the report's sizes at that point, then the error."""
    report = kf.Report()
    seen = []
    error = None
    try:
        for batch in columnar.iter_arrow_batches(source, threads=threads, report=report, **options):
            seen.append((batch, len(report.errors), len(report.truncated)))
    except kf.KafkaFormatError as exc:
        error = (type(exc).__name__, exc.file, exc.position, str(exc))
    table = pa.Table.from_batches([b for b, _, _ in seen]) if seen else None
    marks = [(b.num_rows, e, t) for b, e, t in seen]
    errors = [(type(e).__name__, e.file, e.position, str(e)) for e in report.errors]
    truncated = [(t.file, t.position, t.size) for t in report.truncated]
    return table, marks, errors, truncated, error


def _same(source, **options):
    alone = _read(source, 1, **options)
    together = _read(source, 4, **options)
    assert together[1:] == alone[1:]
    if alone[0] is None:
        assert together[0] is None
    else:
        assert together[0].equals(alone[0])
    return together


def test_a_directory_read_ahead_is_the_sequential_read(log_dir, monkeypatch):
    whole = []
    read_whole = ahead.read_whole
    monkeypatch.setattr(ahead, "read_whole", lambda *a: whole.append(1) or read_whole(*a))
    table, _, errors, truncated, error = _same(log_dir, include_headers=True)
    assert error is None and errors == [] and truncated == [] and table.num_rows > 1000
    assert len(whole) > 10  # small segments went to the workers
    # read_committed carries a partition's walk from file to file: read in order.
    whole.clear()
    _same(log_dir, isolation="read_committed")
    assert whole == []


def test_files_below_the_threshold_are_read_in_order(log_dir, monkeypatch):
    monkeypatch.setattr(ahead, "AHEAD_MIN_BYTES", 1 << 20)
    whole = []
    read_whole = ahead.read_whole
    monkeypatch.setattr(ahead, "read_whole", lambda *a: whole.append(1) or read_whole(*a))
    _same(log_dir)
    assert whole == []


def test_ranges_and_limits_read_ahead_as_in_order(log_dir):
    _same(log_dir, start_timestamp=0, max_records=777)
    _same(log_dir, max_records=1)
    _same(log_dir, start_offset=50, end_offset=120)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    picks=st.lists(st.tuples(st.integers(0, 1 << 20), st.integers(0, 1 << 30)), max_size=4),
    cut=st.booleans(),
    errors=st.sampled_from(["strict", "skip", "salvage"]),
)
def test_a_damaged_directory_reads_ahead_as_in_order(
    log_dir, tmp_path_factory, damage_segments, picks, cut, errors
):
    root = tmp_path_factory.mktemp("damaged") / "logs"
    shutil.copytree(log_dir, root)
    segments = _segments(root)
    damage_segments(segments, picks, cut)
    _same(root, errors=errors)
