"""``low_memory=True``: smaller chunks, the same records, reports and errors.

Oracle: the same read without the option (itself proved equal to the reference elsewhere).
Only the batching may differ: record batches of at most ``LOW_MEMORY_CHUNK_ROWS`` rows. What
it saves is measured by ``bench/run.py --only memory``, not here.
"""

from __future__ import annotations

import io

import pyarrow as pa
import pytest

import kafka_format as kf
from kafka_format.runtime.read import columnar
from kafka_format.runtime.read.columnar import iter_arrow_batches, read_table
from kafka_format.runtime.write.generate import generate_log_dir


@pytest.fixture(scope="module")
def log_dir(tmp_path_factory):
    """Every scenario of the generator (codecs, magics, transactions, compaction) and a
    `bench` topic big enough for several low-memory chunks a segment."""
    root = tmp_path_factory.mktemp("low-memory") / "logs"
    generate_log_dir(root, seed=3, records=400, size_bytes=6 << 20, codec=3)
    return root


def _read(source, **options) -> tuple[pa.Table, kf.Report, list[int]]:
    report = kf.Report()
    batches = list(iter_arrow_batches(source, report=report, include_headers=True, **options))
    table = pa.Table.from_batches(batches, schema=batches[0].schema) if batches else None
    return table, report, [b.num_rows for b in batches]


@pytest.mark.parametrize("isolation", ["read_uncommitted", "read_committed"])
@pytest.mark.parametrize("errors", ["strict", "salvage"])
def test_same_records_as_the_default(log_dir, isolation, errors) -> None:
    expected, report, _ = _read(log_dir, isolation=isolation, errors=errors)
    got, low_report, sizes = _read(log_dir, isolation=isolation, errors=errors, low_memory=True)
    assert got.equals(expected)
    assert max(sizes) <= columnar.LOW_MEMORY_CHUNK_ROWS
    assert len(sizes) > 2 * len(list(log_dir.glob("*/*.log")))  # several chunks a segment
    assert [str(e) for e in low_report.errors] == [str(e) for e in report.errors]
    assert low_report.truncated == report.truncated


def test_damage_reported_alike(tmp_path, log_dir) -> None:
    segment = max(log_dir.glob("bench-*/*.log"), key=lambda p: p.stat().st_size)
    data = bytearray(segment.read_bytes())
    for at in (len(data) // 3, len(data) // 2):  # inside batches: their CRCs fail
        data[at] ^= 0xFF
    damaged = tmp_path / segment.name
    damaged.write_bytes(bytes(data))
    for errors in ("skip", "salvage"):
        expected, report, _ = _read(damaged, errors=errors)
        got, low_report, _ = _read(damaged, errors=errors, low_memory=True)
        assert got.equals(expected)
        assert report.errors and [str(e) for e in low_report.errors] == [
            str(e) for e in report.errors
        ]
    with pytest.raises(kf.KafkaFormatError) as default_error:
        read_table(damaged)
    with pytest.raises(kf.KafkaFormatError) as low_error:
        read_table(damaged, low_memory=True)
    assert str(low_error.value) == str(default_error.value)


def test_a_stream_and_ranges(log_dir) -> None:
    segment = max(log_dir.glob("bench-*/*.log"), key=lambda p: p.stat().st_size)
    data = segment.read_bytes()
    assert read_table(io.BytesIO(data), low_memory=True).equals(read_table(io.BytesIO(data)))
    ranged = {"start_offset": 1500, "end_offset": 9000}
    assert read_table(segment.parent, low_memory=True, **ranged).equals(
        read_table(segment.parent, **ranged)
    )


def test_views(log_dir) -> None:
    assert read_table(log_dir, binary_view=True, low_memory=True).equals(
        read_table(log_dir, binary_view=True)
    )
