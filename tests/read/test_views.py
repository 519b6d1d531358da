"""``binary_view=True`` (views.py): key and value as Arrow ``binary_view`` pointing into the
mapped file, not copies.

Oracle: the copying path, ``read_table()`` itself (proved equal to the Kaitai reference by
test_columnar.py): the view table cast to ``binary`` must equal it, on every corpus set, on
generated record sets (every codec, magic 0/1/2, nulls, empty values, values of at most 12
bytes and longer), on damaged ones in skip mode, and after the source is closed and deleted.
polars and DuckDB must read the same values from the view table.
"""

from __future__ import annotations

import gc
import io
import os
import random

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import kafka_format as kf
from kafka_format.runtime.format.codecs import compress
from kafka_format.runtime.read.columnar import iter_arrow_batches, read_table
from kafka_format.schemas.legacy_message import build_legacy_message
from kafka_format.schemas.record import build_records
from kafka_format.schemas.record_batch import build_record_batch

TS0 = 1_700_000_000_000
V2_CODECS = (0, 1, 2, 3, 4)
LEGACY_CODECS = (0, 1, 2, 3)
VIEW = pa.binary_view()


def copying(table: pa.Table) -> pa.Table:
    """The view table as the copying path types it."""
    schema = table.schema
    for name in ("key", "value"):
        i = schema.get_field_index(name)
        schema = schema.set(i, schema.field(i).with_type(pa.binary()))
    return table.cast(schema)


def assert_same(source_for, **options) -> pa.Table:
    """The view read equals the copying read; returns the view table. ``source_for()`` makes
    a fresh source for each read (a stream is used up by one)."""
    expected = read_table(source_for(), **options)
    got = read_table(source_for(), binary_view=True, **options)
    assert got.schema.field("key").type == VIEW
    assert got.schema.field("value").type == VIEW
    got.validate(full=True)  # every view within its buffer, inline bytes zero-padded
    assert copying(got).equals(expected)
    assert got.column("value").to_pylist() == expected.column("value").to_pylist()
    return got


# --- what a value can be ----------------------------------------------------------------------

# None, empty, up to 12 bytes (inlined in the view), 13 and more (prefix, buffer, offset).
payloads = st.one_of(
    st.none(), st.just(b""), st.binary(max_size=12), st.binary(min_size=13, max_size=40)
)


@st.composite
def v2_batch(draw, base_offset: int) -> tuple[bytes, int]:
    n = draw(st.integers(0, 6))
    codec = draw(st.sampled_from(V2_CODECS))
    if codec and n == 0:
        n = 1
    records = [
        {
            "key": draw(payloads),
            "value": draw(payloads),
            "headers": [("h", draw(payloads))] if draw(st.booleans()) else [],
            "offset_delta": i,
            "timestamp_delta": i,
        }
        for i in range(n)
    ]
    common = {"base_offset": base_offset, "base_timestamp": TS0, "codec": codec}
    if not codec:
        return build_record_batch(records, **common), max(n, 1)
    payload = compress(codec, build_records(records), magic=2, xerial=draw(st.booleans()))
    data = build_record_batch(
        compressed_payload=payload, records_count=n, last_offset_delta=n - 1, **common
    )
    return data, n


@st.composite
def legacy_entry(draw, base_offset: int) -> tuple[bytes, int]:
    magic = draw(st.sampled_from((0, 1)))
    codec = draw(st.sampled_from(LEGACY_CODECS))
    ts = TS0 if magic else None
    if not codec:
        entry = build_legacy_message(
            offset=base_offset, key=draw(payloads), value=draw(payloads), magic=magic, timestamp=ts
        )
        return entry, 1
    n = draw(st.integers(1, 4))
    inner = b"".join(
        build_legacy_message(
            offset=i if magic else base_offset + i,
            key=draw(payloads),
            value=draw(payloads),
            magic=magic,
            timestamp=ts,
        )
        for i in range(n)
    )
    value = compress(codec, inner, magic=magic, kafka08_checksum=magic == 0 and codec == 3)
    wrapper = build_legacy_message(
        offset=base_offset + n - 1, value=value, magic=magic, timestamp=ts, codec=codec
    )
    return wrapper, n


@st.composite
def record_sets(draw) -> bytes:
    parts = []
    offset = 0
    for _ in range(draw(st.integers(1, 6))):
        magic = draw(st.sampled_from((0, 1, 2)))
        data, used = draw(v2_batch(offset) if magic == 2 else legacy_entry(offset))
        parts.append(data)
        offset += used
    return b"".join(parts)


def uncompressed_log(batches: int = 20, per_batch: int = 50, seed: int = 1) -> bytes:
    rng = random.Random(seed)
    out = []
    for b in range(batches):
        records = [
            {
                "key": None if i % 7 == 0 else f"k{i}".encode(),
                "value": rng.randbytes(rng.choice((0, 5, 12, 13, 100))),
                "offset_delta": i,
                "timestamp_delta": i,
            }
            for i in range(per_batch)
        ]
        out.append(build_record_batch(records, base_offset=b * per_batch, base_timestamp=TS0))
    return b"".join(out)


# --- the corpus -------------------------------------------------------------------------------


def test_corpus_views_equal_copies(corpus_set) -> None:
    path = corpus_set.path
    for errors in ("skip", "salvage"):
        assert_same(lambda: path, errors=errors)
    if corpus_set.crc_valid:
        assert_same(lambda: path, include_headers=True, isolation="read_committed")


# --- generated record sets --------------------------------------------------------------------


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=record_sets())
def test_generated_views_equal_copies(tmp_path, data: bytes) -> None:
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(data)
    assert_same(lambda: path, include_headers=True)
    assert_same(lambda: data)
    assert_same(lambda: io.BytesIO(data))
    assert_same(lambda: bytearray(data))  # a buffer the caller can change: all gathered


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=record_sets(), chunk_bytes=st.integers(1, 400))
def test_generated_views_equal_copies_in_small_chunks(tmp_path, data: bytes, chunk_bytes) -> None:
    """Chunks of one or a few batches: each chunk's views counted from its own first batch."""
    from kafka_format.runtime.read import columnar

    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(data)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(columnar, "CHUNK_BYTES", chunk_bytes)
        assert_same(lambda: path, threads=2)


@pytest.mark.parametrize("codec", V2_CODECS)
@pytest.mark.parametrize("magic", (0, 1, 2))
def test_every_codec_and_magic(tmp_path, codec: int, magic: int) -> None:
    if magic < 2 and codec == 4:
        pytest.skip("zstd exists from magic 2")
    values = [None, b"", b"short", b"x" * 12, b"y" * 13, os.urandom(300)]
    if magic == 2:
        records = [
            {"key": v, "value": v, "offset_delta": i, "timestamp_delta": i}
            for i, v in enumerate(values)
        ]
        if codec:
            payload = compress(codec, build_records(records), magic=2)
            data = build_record_batch(
                compressed_payload=payload,
                records_count=len(values),
                last_offset_delta=len(values) - 1,
                codec=codec,
            )
        else:
            data = build_record_batch(records)
    else:
        ts = TS0 if magic else None
        entries = [
            build_legacy_message(offset=i, key=v, value=v, magic=magic, timestamp=ts)
            for i, v in enumerate(values)
        ]
        if codec:
            inner = b"".join(entries)
            value = compress(codec, inner, magic=magic, kafka08_checksum=magic == 0 and codec == 3)
            data = build_legacy_message(
                offset=len(values) - 1, value=value, magic=magic, timestamp=ts, codec=codec
            )
        else:
            data = b"".join(entries)
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(data)
    table = assert_same(lambda: path)
    assert table.column("value").to_pylist() == values
    assert table.column("key").to_pylist() == values


def test_uncompressed_values_point_into_the_file(tmp_path) -> None:
    """No copy: the long values' data buffer is the file's bytes, and nothing else is kept."""
    data = uncompressed_log()
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(data)
    table = read_table(path, binary_view=True)
    for chunk in table.column("value").chunks:
        buffers = chunk.buffers()
        assert len(buffers) == 3  # validity, views, one data buffer: no decoder copy
        held = buffers[2].to_pybytes()
        # The file's bytes, batch headers and all: not the values gathered.
        assert held in data
        assert len(held) > sum(len(v) for v in chunk.to_pylist() if v)


def test_compressed_values_point_into_the_decoders_buffer(tmp_path) -> None:
    values = [b"z" * 50, b"w" * 3]
    records = [{"value": v, "offset_delta": i} for i, v in enumerate(values)]
    payload = compress(2, build_records(records), magic=2)
    data = build_record_batch(
        compressed_payload=payload, records_count=2, last_offset_delta=1, codec=2
    )
    table = assert_same(lambda: data)
    assert table.column("value").to_pylist() == values


# --- lifetime ---------------------------------------------------------------------------------


def test_table_outlives_the_file_and_the_reader(tmp_path) -> None:
    data = uncompressed_log(seed=2)
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(data)
    expected = read_table(io.BytesIO(data)).column("value").to_pylist()
    batches = iter_arrow_batches(str(path), binary_view=True)
    table = pa.Table.from_batches(list(batches))
    del batches
    path.unlink()
    gc.collect()
    assert table.column("value").to_pylist() == expected
    # A fresh file at the same path is another file: the table still reads the old bytes.
    path.write_bytes(b"\0" * len(data))
    gc.collect()
    assert table.column("value").to_pylist() == expected


def test_table_outlives_a_callers_file_object(tmp_path) -> None:
    data = uncompressed_log(seed=3)
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(data)
    expected = read_table(data)
    with open(path, "rb") as fh:
        table = read_table(fh, binary_view=True)
    path.unlink()
    gc.collect()
    assert copying(table).equals(expected)


@pytest.mark.parametrize("kind", ["bytes", "bytearray", "bytesio"])
def test_table_outlives_in_memory_sources(kind: str) -> None:
    data = uncompressed_log(seed=4)
    expected = read_table(data)
    source = {"bytes": bytes, "bytearray": bytearray, "bytesio": io.BytesIO}[kind](data)
    table = read_table(source, binary_view=True)
    if isinstance(source, bytearray):
        source[:] = b"\0" * len(source)  # a caller's buffer can change: the table must not
    del source
    gc.collect()
    assert copying(table).equals(expected)


# --- damage -----------------------------------------------------------------------------------


def test_damaged_batch_skipped_views_equal_copies(tmp_path) -> None:
    data = bytearray(uncompressed_log(batches=6, per_batch=10, seed=5))
    first = build_record_batch([{"value": b"a" * 20}], base_offset=60)  # offsets go on
    size = len(uncompressed_log(batches=1, per_batch=10, seed=5))
    data[2 * size + 70] ^= 0xFF  # a record byte of the third batch: its CRC fails
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(bytes(data) + first)
    report = kf.Report()
    table = assert_same(lambda: path, errors="skip")
    read_table(path, errors="skip", binary_view=True, report=report)
    assert len(report.errors) == 1
    assert table.num_rows == 5 * 10 + 1


# --- other readers ----------------------------------------------------------------------------


def _view_table(tmp_path) -> tuple[pa.Table, pa.Table]:
    data = uncompressed_log(batches=5, seed=6)
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(data)
    return read_table(path, binary_view=True), read_table(path)


def test_polars_reads_the_views(tmp_path) -> None:
    pl = pytest.importorskip("polars", reason="polars is not installed (dev extra)")
    table, expected = _view_table(tmp_path)
    frame = pl.from_arrow(table)
    assert frame["value"].to_list() == expected.column("value").to_pylist()
    assert frame["key"].to_list() == expected.column("key").to_pylist()


def test_duckdb_reads_the_views(tmp_path) -> None:
    duckdb = pytest.importorskip("duckdb", reason="duckdb is not installed (dev extra)")
    table, expected = _view_table(tmp_path)
    con = duckdb.connect()
    con.register("records", table)
    rows = con.execute('SELECT "offset", key, value FROM records ORDER BY "offset"').fetchall()
    want = expected.select(["offset", "key", "value"]).to_pylist()
    assert [(o, k, v) for o, k, v in rows] == [(r["offset"], r["key"], r["value"]) for r in want]
    long_values = con.execute(
        "SELECT count(*) FROM records WHERE octet_length(value) > 12"
    ).fetchone()
    assert long_values[0] == sum(1 for r in want if r["value"] and len(r["value"]) > 12)


# --- options ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "options",
    [
        {"include_position": True},
        {"start_offset": 130, "end_offset": 777},
        {"max_records": 333},
        {"batch_rows": 17, "threads": 1},
        {"isolation": "read_committed", "include_headers": True},
        {"verify_crc": False},
    ],
    ids=lambda o: ",".join(o),
)
def test_options_views_equal_copies(tmp_path, options: dict) -> None:
    data = uncompressed_log(seed=7)
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(data)
    table = assert_same(lambda: path, **options)
    assert table.num_rows > 0
    batches = list(iter_arrow_batches(path, binary_view=True, **options))
    assert {b.schema for b in batches} == {table.schema}


def test_empty_file_has_the_view_schema(tmp_path) -> None:
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(b"")
    table = read_table(path, binary_view=True)
    assert table.num_rows == 0
    assert table.schema.field("value").type == VIEW


def test_table_outlives_a_pyarrow_fs_file(tmp_path) -> None:
    """A ``pyarrow.fs`` input file is read as a stream: the views point into the bytes read,
    which the table keeps after the file is closed and deleted."""
    pafs = pytest.importorskip("pyarrow.fs")
    data = uncompressed_log(seed=9)
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(data)
    expected = read_table(data)
    source = pafs.LocalFileSystem().open_input_file(str(path))
    table = read_table(source, binary_view=True)
    source.close()
    del source
    path.unlink()
    gc.collect()
    assert copying(table).equals(expected)
    assert all(len(c.buffers()) == 3 for c in table.column("value").chunks)  # no copies kept


# --- how the decoder's views point (the view mode of kernels/records.py) ----------------------


def _gzip_batch(base_offset: int, values: list[bytes | None], keys=None) -> bytes:
    keys = keys or [None] * len(values)
    records = [
        {"key": k, "value": v, "offset_delta": i, "timestamp_delta": i}
        for i, (k, v) in enumerate(zip(keys, values, strict=True))
    ]
    payload = compress(1, build_records(records), magic=2)
    return build_record_batch(
        compressed_payload=payload,
        records_count=len(values),
        last_offset_delta=len(values) - 1,
        base_offset=base_offset,
        codec=1,
    )


def test_mixed_chunk_points_into_the_file_and_the_gathered_bytes(tmp_path) -> None:
    """Uncompressed rows point into the file (data buffer 0); compressed rows' values longer
    than 12 bytes into the gathered copy (buffer 1), their short ones inline."""
    plain = uncompressed_log(batches=2, per_batch=10, seed=10)
    packed = [b"p" * 40, b"q" * 12, None, b"", b"r" * 13]
    data = plain + _gzip_batch(20, packed)
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(data)
    table = assert_same(lambda: path)
    (chunk,) = table.column("value").chunks
    _validity, _views, file_bytes, copies = chunk.buffers()
    assert file_bytes.to_pybytes() in data
    assert copies.to_pybytes() == b"p" * 40 + b"r" * 13  # only what is not inline
    assert chunk.to_pylist()[20:] == packed


def test_compressed_only_chunk_has_one_data_buffer(tmp_path) -> None:
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(_gzip_batch(0, [b"a" * 30, b"b"]) + _gzip_batch(2, [b"c" * 20]))
    table = assert_same(lambda: path)
    (chunk,) = table.column("value").chunks
    assert len(chunk.buffers()) == 3
    assert chunk.buffers()[2].to_pybytes() == b"a" * 30 + b"c" * 20


def test_gathered_bytes_past_the_first_buffers(tmp_path, monkeypatch) -> None:
    """Compressed keys larger than the first buffers' guess (a quarter of the records' bytes)
    make the decoder start again with buffers for the worst case (E_ROOM), in view mode too."""
    from kafka_format.runtime.read import columnar

    runs = []
    run_kernel = columnar._run_kernel

    def counted(group, chunk, opts, ample):
        runs.append((opts.binary_view, ample))
        return run_kernel(group, chunk, opts, ample)

    monkeypatch.setattr(columnar, "_run_kernel", counted)
    keys = [bytes([65 + i % 26]) * 2000 for i in range(30)]
    data = uncompressed_log(batches=2, per_batch=5, seed=11) + _gzip_batch(10, [b"v"] * 30, keys)
    data += _gzip_batch(40, [b"w" * 50] * 30, keys)
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(data)
    table = assert_same(lambda: path)
    assert table.column("key").to_pylist()[10:40] == keys
    assert (True, True) in runs  # the view read did start again


def test_views_across_chunk_boundaries(tmp_path, monkeypatch) -> None:
    """Chunks of a few batches each: every chunk's views point into its own part of the file,
    offsets counted from that part's start."""
    from kafka_format.runtime.read import columnar

    monkeypatch.setattr(columnar, "CHUNK_BYTES", 3000)
    data = uncompressed_log(batches=40, per_batch=20, seed=12) + _gzip_batch(800, [b"z" * 99])
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(data)
    for threads in (1, 2):
        table = assert_same(lambda: path, threads=threads)
        *plain, packed = table.column("value").chunks
        assert len(plain) > 5
        for chunk in plain:
            assert len(chunk.buffers()) == 3 and chunk.buffers()[2].to_pybytes() in data
        assert packed.buffers()[2].to_pybytes() == b"z" * 99


def test_headers_past_the_first_buffers(tmp_path) -> None:
    """Header keys and values are gathered in view mode too: their room is the whole chunk's,
    not that of the keys and values left to gather (none, for records viewed in place). A log
    whose headers fill more than the first buffers once made even the worst-case buffers too
    small (an AssertionError out of read_table)."""
    rng = random.Random(5)
    batches = []
    for b in range(40):
        records = [
            {
                "key": f"k{i}".encode(),
                "value": rng.randbytes(rng.choice((3, 30))),
                "headers": [("trace-id", rng.randbytes(16)), ("h", None)],
                "offset_delta": i,
                "timestamp_delta": i,
            }
            for i in range(100)
        ]
        batches.append(build_record_batch(records, base_offset=b * 100, base_timestamp=TS0))
    data = b"".join(batches)
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(data)
    got = assert_same(lambda: path, include_headers=True)
    assert got.num_rows == 4000
    assert_same(lambda: data, include_headers=True)
    gzipped = _gzip_batch(0, [b"x" * 20] * 50)
    assert_same(lambda: gzipped + data[len(batches[0]) :], include_headers=True)
