"""``verify`` reads records on the fast path (``verify_log._fast_rows``: the columnar kernels)
and falls back to the reference decoder (``_reference_rows``) when the rows cannot be laid on
the frames. Both must report the same: the same problems, the same batches, on every scenario
``generate`` writes (v0/v1 wrappers, transactions and markers, every codec), undamaged and with
bytes flipped here."""

from __future__ import annotations

import itertools
import random
from dataclasses import astuple
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kafka_format.runtime.analysis import verify_log
from kafka_format.runtime.analysis.report import FileReport
from kafka_format.runtime.kernels import fastscan as fs
from kafka_format.runtime.read.sources import LogInput
from kafka_format.runtime.write.generate import generate_log_dir


def _scan(path, base, *, fast: bool):
    report = FileReport(str(path), "log")
    if fast:
        scanned = verify_log.scan_log(path, report, base_offset=base)
    else:
        original = verify_log._fast_rows
        verify_log._fast_rows = lambda *args: None
        try:
            scanned = verify_log.scan_log(path, report, base_offset=base)
        finally:
            verify_log._fast_rows = original
    return report, scanned


def _same(path, base) -> int:
    fast_report, fast = _scan(path, base, fast=True)
    ref_report, ref = _scan(path, base, fast=False)
    assert [p.line() for p in fast_report.problems] == [p.line() for p in ref_report.problems]
    assert [astuple(b) for b in fast.batches] == [astuple(b) for b in ref.batches]
    assert fast_report.counts == ref_report.counts
    assert fast.end == ref.end and fast.has_gaps == ref.has_gaps
    return len(fast_report.problems)


@pytest.mark.parametrize("seed", [3, 11])
def test_fast_path_and_reference_agree(tmp_path, seed):
    generate_log_dir(tmp_path, seed=seed, records=150, segment_bytes=16384)
    logs = sorted(tmp_path.glob("*/*.log"))
    assert logs
    rng = random.Random(seed)
    problems = 0
    for path in logs:
        base = int(path.name.split(".")[0])
        with LogInput(str(path), path=path).open() as view:
            walk = verify_log._walk(view, str(path))
        assert verify_log._fast_rows(path, walk, True) is not None  # no fallback
        _same(path, base)
        data = bytearray(path.read_bytes())
        if len(data) < 100:
            continue
        for _ in range(3):  # flipped bytes: CRCs, headers, lengths, magic
            at = rng.randrange(len(data))
            data[at] ^= 1 << rng.randrange(8)
        path.write_bytes(bytes(data))
        problems += _same(path, base)
    assert problems  # the damage was seen


# --- the batches' offsets, judged at once where they hold --------------------------------------

_OFFSET = st.one_of(
    st.integers(-3, 40), st.sampled_from([(1 << 31) - 1, 1 << 31, (1 << 63) - 1, -(1 << 63)])
)


@settings(max_examples=400, deadline=None)
@given(
    spans=st.lists(st.tuples(_OFFSET, _OFFSET), max_size=6),
    damaged=st.sets(st.integers(0, 5)),
    base=st.one_of(st.none(), st.integers(0, 10)),
    following=st.one_of(st.none(), st.integers(0, 60)),
)
def test_offsets_judged_at_once_as_batch_by_batch(spans, damaged, base, following):
    batches = [
        verify_log.BatchInfo(i * 100, 100, first, last, None, -1, False, None)
        for i, (first, last) in enumerate(spans)
    ]
    errors = {i * 100: None for i in damaged}
    report = FileReport("f", "log")
    previous = None
    for info in batches:
        if info.position in errors:
            continue
        verify_log._check_batch_offsets(report, info, previous, base, following)
        previous = info.last_offset
    held = verify_log._offsets_hold(batches, errors, base, following)
    assert held == (not report.problems)


@settings(max_examples=300, deadline=None)
@given(
    counts=st.lists(st.integers(0, 4), min_size=1, max_size=8),
    cuts=st.lists(st.integers(0, 40), max_size=4),
)
def test_rows_counted_a_run_at_a_time_as_a_row_at_a_time(counts, cuts):
    """``_counts`` lays each run of one position on its frame; the same as one search a row,
    wherever the rows are cut into record batches."""
    table = np.zeros((len(counts), fs.FRAME_COLUMNS), np.int64)
    table[:, fs.F_POS] = np.arange(len(counts)) * 100 + 7
    rows = np.repeat(table[:, fs.F_POS], counts)
    edges = sorted({0, len(rows), *(c for c in cuts if c <= len(rows))})
    parts = [rows[a:b] for a, b in itertools.pairwise(edges)]
    counted = verify_log._counts(table, parts)
    expected = np.bincount(np.searchsorted(table[:, fs.F_POS], rows), minlength=len(counts))
    assert counted.tolist() == expected.tolist()
    assert verify_log._counts(table, [*parts, np.array([8])]) is None  # no frame's position


@settings(max_examples=300, deadline=None)
@given(
    batches=st.lists(
        st.tuples(st.integers(0, 3), st.integers(0, 3), st.integers(0, 2)), min_size=1, max_size=8
    )
)
def test_gaps_found_as_a_walk_over_the_offsets_finds_them(batches):
    """``_gaps``: a record more than one above the offset before it (the record's before it,
    or the last offset of a batch without decoded records), in a plain walk."""
    infos, offsets, counts, lasts, sequence = [], [], [], [], []
    at = 0
    for i, (step, n, after) in enumerate(batches):
        first = at + step
        records = list(range(first, first + n))
        last = (records[-1] if records else first) + after
        infos.append(verify_log.BatchInfo(i * 100, 100, first, last, None, -1, False, None))
        offsets += records
        counts.append(n)
        lasts.append(last)
        sequence += [(o, True, i) for o in records] or [(last, False, i)]
        at = last + 1
    report = FileReport("f", "log")
    scanned = verify_log.ScannedLog(Path("f"), 0, infos)
    verify_log._gaps(
        scanned,
        np.array(offsets, np.int64),
        np.array(counts, np.int64),
        np.array(lasts, np.int64),
        np.zeros(0, np.int64),
        report,
    )
    walked = [
        (a[0], b[0], b[2] * 100)
        for a, b in itertools.pairwise(sequence)
        if b[1] and b[0] > a[0] + 1
    ]
    assert scanned.has_gaps == bool(walked)
    listed = [(d["offset"], d["next"], d["position"]) for p in report.problems for d in p.details]
    assert listed == walked[: verify_log.MAX_LISTED_GAPS]
