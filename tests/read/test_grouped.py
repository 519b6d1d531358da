"""Small segments of a partition decoded together (``read/grouped.py``): a directory read so
gives exactly the rows, report and error of its files read one by one, on healthy and damaged
directories, with budgets that split a group, ranges, limits and every thread count; clean
groups are decoded together (markers included) and a damaged one is read again file by file;
``files_hold`` judges a table of several segments as ``SegmentOffsets`` judges each."""

from __future__ import annotations

import contextlib
import io
import shutil
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import kafka_format as kf
from kafka_format.runtime.cli.app import main
from kafka_format.runtime.format import layout
from kafka_format.runtime.kernels import fastscan as fs
from kafka_format.runtime.read import columnar, grouped
from kafka_format.runtime.read.segment_offsets import SegmentOffsets, files_hold
from kafka_format.runtime.write.generate import generate_log_dir


@pytest.fixture(scope="module")
def log_dir(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("grouped") / "logs"
    # many small segments a partition, with transactions (markers)
    generate_log_dir(root, seed=11, records=1200)
    return root


@pytest.fixture
def groups(monkeypatch):
    """What each group's decode gave: rows, or None (read again file by file)."""
    seen: list[int | None] = []
    real = columnar._group

    def spy(opts, group):
        out = real(opts, group)
        seen.append(None if out is None else sum(b.num_rows for b in out))
        return out

    monkeypatch.setattr(columnar, "_group", spy)
    return seen


def _read(source, **options):
    """The rows, the report and the error of a read (of the rows yielded before it)."""
    report = kf.Report()
    batches = []
    error = None
    try:
        for batch in columnar.iter_arrow_batches(source, report=report, **options):
            batches.append(batch)
    except kf.KafkaFormatError as exc:
        error = (type(exc).__name__, exc.file, exc.position, str(exc))
    table = pa.Table.from_batches(batches) if batches else None
    errors = [(type(e).__name__, e.file, e.position, str(e)) for e in report.errors]
    truncated = [(t.file, t.position, t.size) for t in report.truncated]
    late = [(t.file, t.position) for t in report.timestamps_out_of_range]
    return table, errors, truncated, late, error


def _same(source, monkeypatch, **options):
    """The read grouped is the read file by file; returns the grouped read."""
    together = _read(source, **options)
    with monkeypatch.context() as m:
        m.setattr(grouped, "GROUP_FILE_BYTES", 0)
        alone = _read(source, **options)
    assert together[1:] == alone[1:]
    if alone[0] is None:
        assert together[0] is None
    else:
        assert together[0].equals(alone[0])
    return together


@pytest.mark.parametrize("threads", [1, 2, 4])
def test_a_directory_of_small_segments_reads_as_file_by_file(log_dir, monkeypatch, groups, threads):
    table, errors, truncated, late, error = _same(
        log_dir, monkeypatch, include_headers=True, threads=threads
    )
    assert error is None and errors == truncated == late == [] and table.num_rows > 1000
    assert groups and None not in groups  # clean: none read again file by file
    assert table.num_rows / 2 < sum(groups) <= table.num_rows  # most rows decoded together


def test_groups_hold_transaction_markers(log_dir, monkeypatch, groups):
    # a partition whose segments hold markers: decoded together all the same
    marked = [
        p for p in sorted(log_dir.iterdir()) if p.is_dir() and _has_markers(sorted(p.glob("*.log")))
    ]
    assert marked
    _same(marked[0], monkeypatch, threads=1)
    assert groups and None not in groups


def _has_markers(paths: list[Path]) -> bool:
    return any(b.is_control for p in paths for b in kf.iter_batches(p, errors="skip"))


@pytest.mark.parametrize(
    "options",
    [
        {"verify_crc": False},
        {"batch_rows": 37},
        {"max_records": 501},
        {"start_offset": 40, "end_offset": 90},
        {"low_memory": True},
        {"errors": "skip"},
        {"include_position": True},
        {"include_position": True, "batch_rows": 37, "threads": 1},
    ],
    ids=str,
)
def test_options_read_as_file_by_file(log_dir, monkeypatch, options):
    _same(log_dir, monkeypatch, **options)


def test_a_group_over_a_chunk_splits_into_several(log_dir, monkeypatch, groups):
    monkeypatch.setattr(columnar, "_chunk_rows", 2000)
    tables = []
    gather = grouped.gather

    def counted(*args):
        found = gather(*args)
        tables.append(0 if found is None else len(found.tables))  # None: a file over 2000
        return found

    monkeypatch.setattr(grouped, "gather", counted)
    _same(log_dir, monkeypatch, threads=1)
    assert max(tables) > 1 and 0 not in tables  # split, and none read again alone


def test_a_misplaced_segment_is_read_alone(log_dir, tmp_path, monkeypatch, groups):
    root = tmp_path / "logs"
    shutil.copytree(log_dir, root)
    partition = next(p for p in sorted(root.iterdir()) if len(list(p.glob("*.log"))) > 3)
    segments = sorted(partition.glob("*.log"))
    # a segment named one offset past its first batch: its batches are no batch of it
    victim = segments[2]
    first = next(iter(kf.iter_batches(victim))).base_offset
    victim.rename(partition / f"{first + 1:020d}.log")
    _, _, _, _, error = _same(partition, monkeypatch, threads=1)
    assert error is not None and "below the segment's base offset" in error[3]
    assert None in groups


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    picks=st.lists(st.tuples(st.integers(0, 1 << 20), st.integers(0, 1 << 30)), max_size=4),
    cut=st.booleans(),
    errors=st.sampled_from(["strict", "skip"]),
    threads=st.sampled_from([1, 2]),
    located=st.booleans(),
)
def test_a_damaged_directory_reads_as_file_by_file(
    log_dir, tmp_path_factory, damage_segments, picks, cut, errors, threads, located
):
    root = tmp_path_factory.mktemp("damaged") / "logs"
    shutil.copytree(log_dir, root)
    segments = sorted(p for p in root.rglob("*.log") if p.stat().st_size > 200)
    damage_segments(segments, picks, cut)
    with pytest.MonkeyPatch.context() as monkeypatch:
        _same(root, monkeypatch, errors=errors, threads=threads, include_position=located)


def test_runs_keep_every_window_once_in_order_within_the_cap(log_dir, monkeypatch):
    windows = list(kf.runtime.read.request.ReadRequest.of(log_dir).windows())
    units = list(grouped.runs(windows, 1 << 62))
    assert all(len(u.windows) > 1 for u in units if isinstance(u, grouped.Group))
    flat = [w for u in units for w in (u.windows if isinstance(u, grouped.Group) else [u])]
    assert flat == windows  # every window once, in order
    cap = max(p.stat().st_size for p in log_dir.rglob("*.log"))
    for unit in grouped.runs(windows, cap):
        if isinstance(unit, grouped.Group):
            assert sum(unit.sizes) <= cap
    monkeypatch.setattr(grouped, "GROUP_FILE_BYTES", 0)
    assert list(grouped.runs(windows, 1 << 62)) == windows


@pytest.fixture(scope="module")
def quiet_dir(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("quiet") / "logs"
    # many partitions, a small segment or two in each: groups span partitions
    generate_log_dir(root, seed=4, partitions=12, records=40)
    return root


@pytest.mark.parametrize(
    "options",
    [{"threads": 1}, {"threads": 2}, {"include_position": True}, {"batch_rows": 29}],
    ids=str,
)
def test_groups_across_partitions_read_as_file_by_file(quiet_dir, monkeypatch, groups, options):
    table, *_ = _same(quiet_dir, monkeypatch, include_headers=True, **options)
    dirs = {p.parent for p in quiet_dir.rglob("*.log")}
    assert len(dirs) > 40 and table.num_rows > 1000
    assert groups and None not in groups
    assert len(groups) < len(dirs) / 4  # most groups hold several partitions
    topics, partitions = table.column("topic").to_pylist(), table.column("partition").to_pylist()
    seen = set(zip(topics, partitions, strict=True))
    assert len(seen) > 40  # each row has its own file's topic and partition


# --- files_hold against SegmentOffsets, segment by segment -----------------------------------

_OFFSET = st.one_of(
    st.integers(-5, 60),
    st.sampled_from([(1 << 31) - 2, (1 << 31) + 3, (1 << 63) - 1, -(1 << 63)]),
)


@st.composite
def _segments(draw):
    files = draw(st.integers(1, 4))
    rows, starts, segments = [], [], []
    for _ in range(files):
        starts.append(len(rows))
        base = draw(st.one_of(st.none(), st.integers(0, 20)))
        nxt = draw(st.one_of(st.none(), st.integers(0, 80)))
        segments.append(SegmentOffsets(base, next_base=nxt))
        for _ in range(draw(st.integers(0, 5))):
            row = np.zeros(fs.FRAME_COLUMNS, np.int64)
            row[fs.F_BASE] = draw(_OFFSET)
            row[fs.F_MAGIC] = draw(st.sampled_from([2, 2, 2, 1, 0]))
            row[fs.F_ATTR] = draw(st.sampled_from([0, 0, 1, 2]))
            row[fs.F_LAST_DELTA] = draw(st.integers(-2, 10)) if row[fs.F_MAGIC] == 2 else 0
            row[fs.F_HEADER_OK] = draw(st.sampled_from([1, 1, 1, 1, 0]))
            rows.append(row)
    table = np.array(rows, np.int64).reshape(-1, fs.FRAME_COLUMNS)
    return table, np.array(starts, np.int64), segments


@settings(max_examples=400, deadline=None)
@given(_segments())
def test_files_hold_is_each_segments_all_hold(case):
    table, starts, segments = case
    ends = [*starts[1:].tolist(), len(table)]
    expected = True
    for segment, lo, hi in zip(segments, starts.tolist(), ends, strict=True):
        t = table[lo:hi]
        if not (t[:, fs.F_HEADER_OK] == 1).all():
            expected = False
            continue
        v2 = t[:, fs.F_MAGIC] == 2
        deltas = np.where(v2, t[:, fs.F_LAST_DELTA], 0)
        known = v2 | ((t[:, fs.F_ATTR] & layout.LEGACY_ATTR_COMPRESSION_MASK) == 0)
        if not segment.all_hold(t[:, fs.F_BASE], deltas, known):
            expected = False
    assert files_hold(table, starts, segments) == expected


@pytest.mark.parametrize("options", [[], ["--canonical"], ["--salvage"]], ids=str)
def test_dump_jsonl_of_small_segments_is_the_file_by_file_dump(
    log_dir, tmp_path, monkeypatch, options
):
    # dump --jsonl reads with include_position (file and position on every line)
    root = tmp_path / "logs"
    shutil.copytree(log_dir, root)
    segment = sorted(p for p in root.rglob("*.log") if p.stat().st_size > 200)[5]
    data = bytearray(segment.read_bytes())
    data[len(data) // 2] ^= 0x5A  # damage in one group: it is read again file by file
    segment.write_bytes(bytes(data))

    def dump() -> tuple[int, str, str]:
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            status = main(["dump", "--jsonl", *options, str(root)])
        return status, out.getvalue(), err.getvalue()

    together = dump()
    with monkeypatch.context() as m:
        m.setattr(grouped, "GROUP_FILE_BYTES", 0)
        alone = dump()
    assert together == alone
    assert together[1].count("\n") > 1000


@settings(max_examples=300, deadline=None)
@given(
    items=st.lists(st.tuples(st.one_of(st.none(), st.integers(0, 50)), st.integers(0, 2))),
    cap=st.integers(1, 120),
    keyed=st.booleans(),
)
def test_packs_keep_order_cap_and_key(items, cap, keyed):
    key = (lambda item: item[1]) if keyed else None
    out = list(grouped.packs(items, lambda item: item[0], cap, key))
    assert [item for held, _ in out for item in held] == items  # each once, in order
    for i, (held, costs) in enumerate(out):
        after = out[i + 1] if i + 1 < len(out) else None
        if any(item[0] is None for item in held):
            assert held and len(held) == 1 and costs == []  # no cost: alone
            continue
        assert costs == [item[0] for item in held]
        assert len(held) == 1 or sum(costs) <= cap
        if keyed:
            assert len({item[1] for item in held}) == 1
        if after is not None and after[1]:  # a pack ends only where the next would not fit
            nxt = after[0][0]
            joined = sum(costs) + nxt[0] <= cap and (not keyed or nxt[1] == held[0][1])
            assert nxt[0] is None or not joined
