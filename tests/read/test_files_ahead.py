"""A partition's small segments read a run at a time (``read/files_ahead.py``): each file
gets exactly the batches and report its own ``iter_arrow_batches(path, errors="skip",
include_position=True, **options)`` gives, on healthy and damaged segments and asked in any
order; and ``verify`` and ``stats`` (which read each segment so) report the same with and
without it."""

from __future__ import annotations

import contextlib
import io
import json
import shutil
from pathlib import Path

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kafka_format.runtime.cli.app import main
from kafka_format.runtime.model import Report
from kafka_format.runtime.read import files_ahead
from kafka_format.runtime.read.columnar import iter_arrow_batches
from kafka_format.runtime.read.files_ahead import FilesAhead
from kafka_format.runtime.write.generate import generate_log_dir


@pytest.fixture(scope="module")
def log_dir(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("files-ahead") / "logs"
    generate_log_dir(root, seed=5, records=1200)  # 32 KiB segments, several a partition
    return root


def _own(path: Path, **options):
    report = Report()
    batches = list(
        iter_arrow_batches(path, errors="skip", report=report, include_position=True, **options)
    )
    return batches, report


def _same(got, want) -> None:
    (batches, report), (own_batches, own_report) = got, want
    schema = own_batches[0].schema if own_batches else None
    if own_batches:
        assert pa.Table.from_batches(batches, schema).equals(pa.Table.from_batches(own_batches))
    else:
        assert batches == []
    for name in ("errors", "truncated", "timestamps_out_of_range"):
        assert [str(e) for e in getattr(report, name)] == [
            str(e) for e in getattr(own_report, name)
        ]
    # with positions, no batch spans two files
    assert all(len(b.column("file").dictionary) == 1 for b in batches)


def _partition(root: Path) -> list[Path]:
    return max((sorted(p.glob("*.log")) for p in root.iterdir() if p.is_dir()), key=len)


def test_each_file_gets_its_own_read(log_dir, monkeypatch):
    paths = _partition(log_dir)
    assert len(paths) > 3
    reads = []
    real = files_ahead._read
    monkeypatch.setattr(
        files_ahead, "_read", lambda run, options: reads.append(len(run)) or real(run, options)
    )
    ahead = FilesAhead(paths)
    for path in paths:
        got = ahead.take(path)
        assert got is not None
        _same(got, _own(path))
    assert reads and max(reads) > 1 and sum(reads) == len(paths)  # runs, each file once


def test_out_of_order_and_unknown_files(log_dir, tmp_path):
    paths = _partition(log_dir)
    ahead = FilesAhead(paths)
    for path in (paths[3], paths[1], paths[2], paths[2]):
        _same(ahead.take(path), _own(path))
    assert FilesAhead(paths).take(tmp_path / "00000000000000000000.log") is None
    big = tmp_path / "00000000000000000000.log"
    big.write_bytes(b"\0" * (1 << 20))  # not small: read alone
    assert FilesAhead([big, *paths]).take(big) is None


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    picks=st.lists(st.tuples(st.integers(0, 1 << 20), st.integers(0, 1 << 30)), max_size=4),
    cut=st.booleans(),
)
def test_damaged_files_get_their_own_read(log_dir, tmp_path_factory, damage_segments, picks, cut):
    root = tmp_path_factory.mktemp("damaged") / "logs"
    shutil.copytree(log_dir, root)
    paths = _partition(root)
    damage_segments(paths, picks, cut)
    ahead = FilesAhead(paths)
    for path in paths:
        got = ahead.take(path)
        if got is not None:
            _same(got, _own(path))


def test_the_reads_options_are_each_files_own(log_dir):
    paths = _partition(log_dir)
    options = {"include_headers": True, "verify_crc": False, "max_decompressed_bytes": 1 << 16}
    ahead = FilesAhead(paths, **options)
    for path in paths:
        got = ahead.take(path)
        assert got is not None
        _same(got, _own(path, **options))
        assert all("headers" in b.schema.names for b in got[0])


def _json(command: str, root: Path) -> tuple[int, dict]:
    """``kafka-format COMMAND --json ROOT``: its exit status and its answer, less how long it
    took (the figures that differ from run to run)."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        status = main([command, "--json", str(root)])
    found = json.loads(out.getvalue())
    for timed in ("seconds", "bytesPerSecond"):
        found.pop(timed, None)
    return status, found


@pytest.mark.parametrize("command", ["verify", "stats"])
def test_a_command_answers_the_same_with_and_without_it(log_dir, tmp_path, monkeypatch, command):
    root = tmp_path / "logs"
    shutil.copytree(log_dir, root)
    paths = _partition(root)
    for path, at in ((paths[1], 0.5), (paths[2], 0.3)):
        data = bytearray(path.read_bytes())
        data[int(len(data) * at)] ^= 0x5A
        path.write_bytes(bytes(data))
    taken = []
    take = FilesAhead.take
    monkeypatch.setattr(FilesAhead, "take", lambda s, p: taken.append(p) or take(s, p))
    together = _json(command, root)
    assert taken
    monkeypatch.setattr(FilesAhead, "take", lambda s, p: None)
    assert together == _json(command, root)
    assert together[0] == 1  # the damage found either way
