"""A Spark task reads as ``read_table`` does: its split is a window handed to the runtime's
one entry point (``ReadRequest.span`` → ``iter_arrow_batches``). Read in-process as the
tasks read it: the rows of every split, local (memory-mapped) and through a ``file://`` URI
(fetched into an anonymous map at the split's place), against ``read_table`` on the whole
directory, healthy and damaged, in every mode."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytest.importorskip("pyspark")

from kafka_format.runtime.errors import FramingError, KafkaFormatError
from kafka_format.runtime.model import Report
from kafka_format.runtime.read.columnar import read_table
from kafka_format.runtime.write.generate import generate_log_dir
from kafka_format.spark_udfs import _reading
from kafka_format.spark_udfs._options import parse_options
from kafka_format.spark_udfs._planning import KafkaLogSplit, Planner
from kafka_format.spark_udfs._reading import ERRORS, Counters, read_split
from kafka_format.spark_udfs.datasource import kafka_schema, output_for

_KEYS = ("topic", "partition", "offset", "key", "value")
FETCH_BYTES = _reading.FETCH_BYTES


@pytest.fixture(scope="module")
def log_dir(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("split") / "logs"
    generate_log_dir(root, seed=5, records=300)
    return root


def _splits(path: str, **options) -> tuple[list[KafkaLogSplit], object, object]:
    opts = parse_options({"path": path, **options})
    corrupt = ", _corrupt_batch string" if opts.mode in ("PERMISSIVE", "SALVAGE") else ""
    schema = kafka_schema(False)
    if corrupt:
        from pyspark.sql.types import StringType, StructField, StructType

        schema = StructType([*schema.fields, StructField("_corrupt_batch", StringType())])
    return Planner(opts).plan(), opts, output_for(schema, opts)


def _spark_rows(path: str, **options) -> tuple[list[tuple], list[str], str | None]:
    splits, opts, out = _splits(path, **options)
    rows, damage = [], []
    try:
        for split in splits:
            for batch in read_split(split, opts, out, Counters()):
                for row in batch.to_pylist():
                    if row.get("_corrupt_batch") is not None:
                        damage.append(row["_corrupt_batch"])
                    else:
                        rows.append(tuple(row[k] for k in _KEYS))
    except KafkaFormatError as exc:
        return rows, damage, str(exc)
    return rows, damage, None


def _table_rows(path: Path, **options) -> tuple[list[tuple], list[str], str | None]:
    report = Report()
    try:
        table = read_table(str(path), report=report, **options)
    except KafkaFormatError as exc:
        return [], [], str(exc)
    rows = [tuple(r[k] for k in _KEYS) for r in table.to_pylist()]
    return rows, [str(e) for e in report.errors], None


@pytest.mark.parametrize("isolation", ["read_uncommitted", "read_committed"])
def test_many_splits_of_a_healthy_directory_give_read_tables_rows(log_dir, isolation):
    rows, damage, error = _spark_rows(
        str(log_dir), maxBytesPerPartition="4000", isolationLevel=isolation
    )
    want, _, _ = _table_rows(log_dir, isolation=isolation)
    splits, _, _ = _splits(str(log_dir), maxBytesPerPartition="4000")
    assert len(splits) > 2 * len(list(log_dir.glob("*/*.log")))
    assert error is None and not damage
    assert sorted(rows) == sorted(want) and len(want) > 200


@pytest.mark.parametrize("fetch", [None, 700, 5000])
def test_a_uri_reads_as_the_local_path(log_dir, monkeypatch, fetch):
    """A remote split is fetched a piece at a time (``FETCH_BYTES``), each cut after its
    last whole batch: the same rows however the pieces fall."""
    if fetch is not None:
        monkeypatch.setattr(_reading, "FETCH_BYTES", fetch)
    for options in ({"maxBytesPerPartition": "4000"}, {}):
        local = _spark_rows(str(log_dir), **options)
        remote = _spark_rows(log_dir.as_uri(), **options)
        assert local == remote and local[0]


@settings(max_examples=15, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    picks=st.lists(st.tuples(st.integers(0, 1 << 20), st.integers(0, 1 << 30)), max_size=3),
    cut=st.booleans(),
    mode=st.sampled_from(sorted(ERRORS)),
)
def test_a_damaged_directory_reads_as_read_table(
    log_dir, tmp_path_factory, damage_segments, monkeypatch, picks, cut, mode
):
    root = tmp_path_factory.mktemp("damaged") / "logs"
    shutil.copytree(log_dir, root)
    segments = sorted(p for p in root.rglob("*.log") if p.stat().st_size > 200)
    damage_segments(segments, picks, cut)
    rows, damage, error = _spark_rows(str(root), mode=mode)
    want, want_damage, want_error = _table_rows(root, errors=ERRORS[mode])
    if mode == "FAILFAST":
        assert error == want_error
        if error is None:
            assert sorted(rows) == sorted(want)
        return
    assert error is None
    assert sorted(rows) == sorted(want)
    if mode in ("PERMISSIVE", "SALVAGE"):
        assert sorted(damage) == sorted(want_damage)
    # the URI path (a fetched split) gives the same verdict, positions and all, also fetched
    # in pieces smaller than a segment
    # (monkeypatch undoes at the test's end, not each example's: set the default again)
    monkeypatch.setattr(_reading, "FETCH_BYTES", FETCH_BYTES)
    fetched = _spark_rows(root.as_uri(), mode=mode)
    assert _unnamed(fetched) == _unnamed((rows, damage, error))
    monkeypatch.setattr(_reading, "FETCH_BYTES", 900)
    pieces = _spark_rows(root.as_uri(), mode=mode)
    assert _unnamed(pieces) == _unnamed((rows, damage, error))


def _unnamed(read: tuple[list[tuple], list[str], str | None]) -> tuple:
    """A read's rows and damage with ``file://`` (how a URI's errors name a file) left out."""
    rows, damage, error = read
    return rows, [d.replace("file://", "") for d in damage], error and error.replace("file://", "")


@pytest.mark.parametrize("uri", [False, True])
def test_a_split_that_ends_inside_a_batch_is_damage_not_a_tail(log_dir, uri):
    """A split ends where a batch does (the planner cuts at checked index entries); one that
    does not is reported, not read as the file's truncated tail."""
    splits, opts, out = _splits(str(log_dir), mode="FAILFAST")
    split = max(splits, key=lambda s: s.end - s.start)
    fs_uri = Path(split.path).parent.as_uri() if uri else None
    cut = KafkaLogSplit(
        fs_uri, split.path, split.topic, split.partition, split.start, split.end - 3
    )
    with pytest.raises(FramingError, match="runs past the end of the bytes to read"):
        for _ in read_split(cut, opts, out, Counters()):
            pass
    whole = sum(b.num_rows for b in read_split(split, opts, out, Counters()))
    _, lenient, lenient_out = _splits(str(log_dir), mode="DROPMALFORMED")
    kept = sum(b.num_rows for b in read_split(cut, lenient, lenient_out, Counters()))
    assert 0 < kept < whole


def test_a_damaged_base_offset_is_judged_alike_in_pieces(tmp_path, monkeypatch):
    """The CRC does not cover a batch's base offset: a flipped bit there makes a batch claim
    offsets far ahead, and the batches after it then do not follow it (segment_offsets). A
    remote split read in pieces carries that judgement across its pieces, as the one read of
    the memory-mapped split does (before, each piece started afresh and kept them)."""
    from kafka_format.runtime.read.reader import iter_batches
    from kafka_format.runtime.write.writer import Message, PartitionWriter

    with PartitionWriter(tmp_path, "t", 0) as writer:
        for i in range(40):
            writer.append([Message(b"k%d" % i, b"v" * 40)])
    segment = tmp_path / "t-0" / "00000000000000000000.log"
    positions = [b.position for b in iter_batches(segment)]
    data = bytearray(segment.read_bytes())
    data[positions[10] + 4] ^= 0x10  # the base offset's high bytes: now far ahead
    segment.write_bytes(bytes(data))
    local = _spark_rows(str(tmp_path), mode="DROPMALFORMED")
    monkeypatch.setattr(_reading, "FETCH_BYTES", 900)  # a few batches a piece
    pieces = _spark_rows(tmp_path.as_uri(), mode="DROPMALFORMED")
    assert _unnamed(pieces) == _unnamed(local)
    want, _, _ = _table_rows(tmp_path, errors="skip")
    assert sorted(local[0]) == sorted(want)
    offsets = sorted(row[2] for row in local[0])
    assert offsets[:10] == list(range(10)) and len(offsets) < 40
