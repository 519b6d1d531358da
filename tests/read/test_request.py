"""One read resolves its source once (``read/request.py``): every layer below the entry point
reads the request's inputs, so a directory is listed once and a FIFO is read once, also where
the read needs its bytes twice (read_committed, ranges, salvage)."""

from __future__ import annotations

import dataclasses
import os
import threading
from pathlib import Path

import pytest

from kafka_format.runtime.read import request as request_module
from kafka_format.runtime.read import sources
from kafka_format.runtime.read.columnar import read_table
from kafka_format.runtime.read.ranges import Range
from kafka_format.runtime.read.reader import iter_batches, iter_records
from kafka_format.runtime.read.request import ReadRequest
from kafka_format.runtime.write.generate import generate_log_dir


@pytest.fixture(scope="module")
def log_dir(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("request") / "logs"
    generate_log_dir(root, seed=11, records=300)
    return root


def _counting(monkeypatch) -> list:
    calls: list = []
    for module in (request_module, sources):
        original = module.resolve
        monkeypatch.setattr(
            module, "resolve", lambda *a, _o=original, **k: calls.append(a) or _o(*a, **k)
        )
    return calls


@pytest.mark.parametrize(
    "read",
    [
        lambda p: read_table(p, isolation="read_committed"),
        lambda p: read_table(p, isolation="read_committed", start_offset=5, end_offset=60),
        lambda p: read_table(p, errors="salvage", max_records=40),
        lambda p: list(iter_records(p, isolation="read_committed", start_offset=-10)),
        lambda p: list(iter_batches(p, errors="salvage", end_offset=30)),
    ],
)
def test_a_read_resolves_its_source_once(log_dir, monkeypatch, read):
    calls = _counting(monkeypatch)
    read(str(log_dir))
    assert len(calls) == 1


def _fifo(tmp_path: Path, data: bytes) -> Path:
    path = tmp_path / "pipe"
    os.mkfifo(path)

    def write() -> None:
        with open(path, "wb") as fh:
            fh.write(data)

    threading.Thread(target=write, daemon=True).start()
    return path


@pytest.mark.parametrize("errors", ["strict", "salvage"])
def test_a_fifo_is_read_once_by_a_read_committed_range(log_dir, tmp_path, errors):
    segment = max(log_dir.rglob("*.log"), key=lambda p: p.stat().st_size)
    options = dict(isolation="read_committed", errors=errors, start_offset=3, end_offset=200)
    want = read_table(segment.read_bytes(), **options)
    got = read_table(str(_fifo(tmp_path, segment.read_bytes())), **options)
    assert got.num_rows and got.equals(want)
    (tmp_path / "again").mkdir()
    records = list(iter_records(str(_fifo(tmp_path / "again", segment.read_bytes())), **options))
    assert [r.offset for r in records] == want.column("offset").to_pylist()


def test_the_request_is_frozen_and_a_request_passes_through(log_dir):
    request = ReadRequest.of(str(log_dir), isolation="read_committed", range=Range.of(1, 9))
    with pytest.raises(dataclasses.FrozenInstanceError):
        request.errors = "skip"  # type: ignore[misc]
    assert ReadRequest.of(request) is request
    first = request.first_pass("skip")
    assert first.inputs is request.inputs and first.range is None and first.errors == "skip"
    assert [w.log for w in request.windows()] and request.committed and not request.salvage
    with pytest.raises(ValueError, match="errors must be"):
        ReadRequest.of(str(log_dir), errors="lenient")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="isolation must be"):
        ReadRequest.of(str(log_dir), isolation="committed")  # type: ignore[arg-type]
