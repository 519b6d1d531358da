"""The columnar fast path (columnar.py + fastscan.py) against the reference.

Oracle: ``columnar_reference`` — ``iter_records`` over the Kaitai-generated parsers, turned into
Arrow rows one by one. Both must give the same table, the same report (errors by class,
position and base offset; truncated tails) and raise the same exception class at the same
place, on every corpus set and on generated record sets of every magic and codec, built here
with the Construct builders (schemas/) and runtime/codecs.compress. The reference's old gaps
(offsets past int64, timestamps beyond Arrow's microseconds, magic 0 messages in magic 1
wrappers) are closed: both paths must agree there too (``test_agreement.py``).
"""

from __future__ import annotations

import io
import random
import struct
from contextlib import contextmanager
from dataclasses import dataclass

import lz4.frame
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import kafka_format as kf
from kafka_format.runtime.format.codecs import compress
from kafka_format.runtime.read import columnar, plan
from kafka_format.runtime.read.columnar_reference import (
    reference_iter_arrow_batches,
    reference_read_table,
)
from kafka_format.schemas.legacy_message import build_legacy_message
from kafka_format.schemas.record import build_records
from kafka_format.schemas.record_batch import build_record_batch

FAST_OPTIONS = ("threads",)


@dataclass(frozen=True)
class Outcome:
    """What a read gives: a table or an exception (class and place), and the report."""

    table: pa.Table | None
    error: tuple | None
    report_errors: list[tuple]
    truncated: list


def _where(exc: BaseException) -> tuple:
    return (
        type(exc).__name__,
        getattr(exc, "file", None),
        getattr(exc, "position", None),
        getattr(exc, "base_offset", None),
    )


def read(reader, source, **options) -> Outcome:
    report = kf.Report()
    try:
        table = reader(source, report=report, **options)
        error = None
    except kf.KafkaFormatError as exc:
        table, error = None, _where(exc)
    return Outcome(
        table,
        error,
        [_where(e) for e in report.errors],
        [(t.file, t.position, t.size) for t in report.truncated],
    )


def fast(source, **options) -> Outcome:
    return read(columnar.read_table, source, **options)


def reference(source, **options) -> Outcome:
    options = {k: v for k, v in options.items() if k not in FAST_OPTIONS}
    options.setdefault("batch_rows", 1)
    return read(reference_read_table, source, **options)


def assert_same(source, **options) -> Outcome:
    got = fast(source, **options)
    want = reference(source, **options)
    assert got.error == want.error
    assert got.report_errors == want.report_errors
    assert got.truncated == want.truncated
    if want.table is not None:
        assert got.table is not None
        assert got.table.schema == want.table.schema
        assert got.table.equals(want.table), _first_difference(got.table, want.table)
    return got


def _first_difference(got: pa.Table, want: pa.Table) -> str:
    if got.num_rows != want.num_rows:
        return f"{got.num_rows} rows, expected {want.num_rows}"
    a, b = got.to_pylist(), want.to_pylist()
    for i, (x, y) in enumerate(zip(a, b, strict=True)):
        if x != y:
            return f"row {i}: {x} != {y}"
    return "tables differ in layout only"


# --- corpus -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "options",
    [
        {},
        {"include_headers": True, "verify_crc": False},
        {"errors": "skip", "include_headers": True},
        {"isolation": "read_committed", "errors": "skip"},
        {"batch_rows": 5, "threads": 1},
    ],
    ids=["default", "headers-nocrc", "skip", "committed", "small-batches"],
)
def test_corpus_same_as_reference(corpus_set, options):
    data = corpus_set.data()
    outcome = assert_same(data, **options)
    crc_checked = options.get("verify_crc", True)
    if corpus_set.crc_valid or not crc_checked:
        assert outcome.error is None and not outcome.report_errors
        if not options.get("isolation"):
            assert outcome.table.num_rows == corpus_set.entry["records"]
    elif not options.get("errors"):
        assert outcome.error is not None


def test_corpus_from_a_partition_directory_and_a_stream(corpus_set, tmp_path):
    """The mapped-file path (with topic and partition from the directory name) and the
    stream path (a file object that cannot be mapped) give what the reference gives."""
    data = corpus_set.data()
    part = tmp_path / "orders-3"
    part.mkdir()
    (part / "00000000000000000000.log").write_bytes(data)
    options = {"include_headers": True, "verify_crc": corpus_set.crc_valid}
    outcome = assert_same(str(part), **options)
    if outcome.table is not None and outcome.table.num_rows:
        assert set(outcome.table["topic"].to_pylist()) == {"orders"}
        assert set(outcome.table["partition"].to_pylist()) == {3}
    stream = fast(io.BytesIO(data), **options)
    bytes_outcome = fast(data, **options)
    assert stream.error == bytes_outcome.error
    if stream.table is not None:
        assert stream.table.equals(bytes_outcome.table)


# --- generated record sets --------------------------------------------------------------------

V2_CODECS = (0, 1, 2, 3, 4)
LEGACY_CODECS = (0, 1, 2, 3)
TS0 = 1_700_000_000_000

payloads = st.one_of(st.none(), st.binary(max_size=24))
header_keys = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=6)
headers = st.lists(st.tuples(header_keys, payloads), max_size=3)


@st.composite
def v2_batch(draw, base_offset: int, codecs=V2_CODECS) -> tuple[bytes, int]:
    n = draw(st.integers(0, 6))
    codec = draw(st.sampled_from(codecs))
    if codec and n == 0:
        n = 1
    deltas = draw(st.lists(st.integers(-5000, 5000), min_size=n, max_size=n))
    records = [
        {
            "key": draw(payloads),
            "value": draw(payloads),
            "headers": draw(headers),
            "offset_delta": i,
            "timestamp_delta": deltas[i],
        }
        for i in range(n)
    ]
    common = {
        "base_offset": base_offset,
        "base_timestamp": TS0 + draw(st.integers(-(10**6), 10**6)),
        "timestamp_type": draw(st.sampled_from((0, 1))),
        "codec": codec,
    }
    if draw(st.booleans()):
        common["max_timestamp"] = TS0 + draw(st.integers(0, 10**6))
    if codec:
        raw = build_records(records)
        data = build_record_batch(
            compressed_payload=compress(codec, raw, magic=2, xerial=draw(st.booleans())),
            records_count=n,
            last_offset_delta=n - 1,
            **common,
        )
    else:
        data = build_record_batch(records, **common)
    return data, max(n, 1)


@st.composite
def legacy_entry(draw, base_offset: int, codecs=LEGACY_CODECS) -> tuple[bytes, int]:
    magic = draw(st.sampled_from((0, 1)))
    codec = draw(st.sampled_from(codecs))
    ts_type = draw(st.sampled_from((0, 1))) if magic else 0

    def ts():
        return TS0 + draw(st.integers(-(10**6), 10**6)) if magic else None

    if not codec:
        entry = build_legacy_message(
            offset=base_offset,
            key=draw(payloads),
            value=draw(payloads),
            magic=magic,
            timestamp=ts(),
            timestamp_type=ts_type,
        )
        return entry, 1
    n = draw(st.integers(1, 5))
    # v1 inner offsets are relative, the wrapper carries the last one; v0's are absolute.
    # Now and then an inner message of the other magic (KAFKA-4298's logs, sarama).
    inner_magics = [draw(st.sampled_from((magic, magic, 1 - magic))) for _ in range(n)]
    inner = b"".join(
        build_legacy_message(
            offset=i if magic else base_offset + i,
            key=draw(payloads),
            value=draw(payloads),
            magic=inner_magic,
            timestamp=TS0 + draw(st.integers(-(10**6), 10**6)) if inner_magic else None,
        )
        for i, inner_magic in enumerate(inner_magics)
    )
    value = compress(
        codec,
        inner,
        magic=magic,
        kafka08_checksum=magic == 0 and codec == 3,
        xerial=draw(st.booleans()),
    )
    wrapper = build_legacy_message(
        offset=base_offset + n - 1,
        value=value,
        magic=magic,
        timestamp=ts(),
        codec=codec,
        timestamp_type=ts_type,
    )
    return wrapper, n


@st.composite
def record_sets(draw, magics=(0, 1, 2)) -> bytes:
    parts = []
    offset = draw(st.integers(0, 10**6))
    for _ in range(draw(st.integers(1, 6))):
        magic = draw(st.sampled_from(magics))
        data, used = draw(v2_batch(offset) if magic == 2 else legacy_entry(offset))
        parts.append(data)
        offset += used
    return b"".join(parts)


SETTINGS = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(data=record_sets(), include_headers=st.booleans(), batch_rows=st.integers(1, 9))
def test_generated_sets_same_as_reference(data, include_headers, batch_rows):
    outcome = assert_same(data, include_headers=include_headers, batch_rows=batch_rows)
    assert outcome.error is None
    for batch in columnar.iter_arrow_batches(
        data, include_headers=include_headers, batch_rows=batch_rows
    ):
        assert 0 < batch.num_rows <= batch_rows


@contextmanager
def chunk_bytes(size: int):
    saved = columnar.CHUNK_BYTES
    columnar.CHUNK_BYTES = size
    try:
        yield
    finally:
        columnar.CHUNK_BYTES = saved


@SETTINGS
@given(data=record_sets(), chunk=st.integers(30, 400), threads=st.sampled_from((1, 2)))
def test_many_small_chunks_and_threads(data, chunk, threads):
    """Chunk boundaries anywhere, decoded in worker threads: the same table."""
    with chunk_bytes(chunk):
        assert_same(data, include_headers=True, threads=threads)


def test_records_bigger_than_the_first_guess_of_buffer_sizes():
    """Big keys, many headers, big header values: the decoder's first buffers (sized for
    usual records) overflow and the rest of the chunk is decoded again into bigger ones."""
    big = [
        {
            "key": bytes([i]) * 8000,
            "value": b"v",
            "headers": [(f"h{j}", b"x" * 3000) for j in range(5)],
            "offset_delta": i,
        }
        for i in range(3)
    ]
    many = [{"value": b"w", "headers": [(f"k{j}", None) for j in range(40)]}]
    small = [{"key": b"k", "value": b"v" * 50, "offset_delta": i} for i in range(4)]
    data = b"".join(
        [
            build_record_batch(small, base_offset=0),
            build_record_batch(big, base_offset=4),
            build_record_batch(many, base_offset=7),
            build_record_batch(small, base_offset=8),
            build_record_batch(big, base_offset=12, codec=0),
        ]
    )
    outcome = assert_same(data, include_headers=True)
    assert outcome.table.num_rows == 15
    assert_same(data, include_headers=False)


def test_a_reader_left_halfway_closes_cleanly(tmp_path):
    """A consumer that stops early: worker threads finish, the mapped file is let go."""
    path = tmp_path / "t-0" / "00000000000000000000.log"
    path.parent.mkdir()
    path.write_bytes(
        b"".join(
            build_record_batch(
                [{"value": b"v" * 100, "offset_delta": d} for d in range(50)], base_offset=50 * i
            )
            for i in range(40)
        )
    )
    with chunk_bytes(2000):
        batches = columnar.iter_arrow_batches(str(path), batch_rows=10, threads=2)
        first = next(batches)
        batches.close()
    assert first.num_rows == 10 and first["topic"][0].as_py() == "t"
    path.unlink()


def test_a_trailing_partial_batch_is_a_tail():
    data = build_record_batch([{"value": b"x" * 10}]) * 3
    for cut in (1, 17, 18, 40):
        outcome = assert_same(data[:-cut])
        assert outcome.table.num_rows == 2
        assert outcome.truncated[0][-1] == len(data) // 3 - cut


# --- damage -----------------------------------------------------------------------------------


@st.composite
def damaged_sets(draw) -> bytes:
    data = bytearray(draw(record_sets()))
    for _ in range(draw(st.integers(1, 4))):
        how = draw(st.sampled_from(("flip", "byte", "cut", "length")))
        at = draw(st.integers(0, len(data) - 1))
        if how == "flip":
            data[at] ^= 1 << draw(st.integers(0, 7))
        elif how == "byte":
            data[at] = draw(st.sampled_from((0x00, 0x01, 0x7F, 0x80, 0xFE, 0xFF)))
        elif how == "cut":
            del data[at:]
        elif at + 4 <= len(data):
            data[at : at + 4] = struct.pack(">i", draw(st.integers(-(2**31), 2**31 - 1)))
        if not data:
            data = bytearray(b"\0")
    return bytes(data)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    data=damaged_sets(),
    verify_crc=st.booleans(),
    errors=st.sampled_from(("strict", "skip")),
)
def test_damaged_sets_fail_as_the_reference_does(data, verify_crc, errors):
    """Mutated bytes: the same rows, the same errors (class, position, base offset) raised
    or reported, and never anything but a KafkaFormatError from the fast path."""
    assert_same(data, verify_crc=verify_crc, errors=errors, include_headers=True)


# --- snappy and LZ4 payloads, decompressed by the kernel (kernel_payloads) ----------------------


@st.composite
def packed_sets(draw) -> bytes:
    """v0/v1 wrappers and v2 batches compressed with snappy (xerial or raw) or LZ4."""
    parts = []
    offset = draw(st.integers(0, 10**6))
    for _ in range(draw(st.integers(1, 4))):
        if draw(st.booleans()):
            data, used = draw(legacy_entry(offset, codecs=(2, 3)))
        else:
            data, used = draw(v2_batch(offset, codecs=(2, 3)))
        parts.append(data)
        offset += used
    return b"".join(parts)


def _wrapper(inner_values: list[bytes], magic: int, pack, codec: int = 3) -> bytes:
    inner = b"".join(
        build_legacy_message(offset=i, value=v, magic=magic, timestamp=TS0 if magic else None)
        for i, v in enumerate(inner_values)
    )
    return build_legacy_message(
        offset=len(inner_values) - 1,
        value=pack(inner),
        magic=magic,
        timestamp=TS0 if magic else None,
        codec=codec,
    )


def _batch(values: list[bytes], pack, count: int | None = None, codec: int = 3) -> bytes:
    return build_record_batch(
        compressed_payload=pack(
            build_records([{"value": v, "offset_delta": i} for i, v in enumerate(values)])
        ),
        records_count=len(values) if count is None else count,
        last_offset_delta=len(values) - 1,
        codec=codec,
    )


def _kafka_lz4(magic: int):
    return lambda data: compress(3, data, magic=magic, kafka08_checksum=magic == 0)


def _snappy(xerial: bool):
    return lambda data: compress(2, data, magic=2, xerial=xerial)


# (codec, packer) as Kafka's clients write them: Java's xerial snappy, librdkafka's raw
# snappy, and LZ4 frames (Kafka 0.8's header checksum on magic 0).
KAFKA_STYLE = {
    "snappy-xerial": (2, lambda magic: _snappy(True)),
    "snappy-raw": (2, lambda magic: _snappy(False)),
    "lz4": (3, _kafka_lz4),
}


def _refuse(what: str):
    def refuse(*args):
        raise AssertionError(f"{what} reached the Python path")

    return refuse


@pytest.mark.parametrize("style", KAFKA_STYLE)
def test_wrappers_never_take_the_python_path(monkeypatch, style):
    from kafka_format.runtime.kernels import lz4 as kernel_lz4

    assert kernel_lz4.LZ4_DECOMPRESS  # python-lz4's extension exports the LZ4 library
    codec, pack = KAFKA_STYLE[style]
    data = b"".join(
        _wrapper([bytes([m, i % 256]) * (50 + i) for i in range(300)], m, pack(m), codec)
        for m in (0, 1)
    )
    want = reference(data, include_headers=True)
    monkeypatch.setattr(columnar, "_prepare_wrapper", _refuse(f"a {style} wrapper"))
    got = fast(data, include_headers=True)
    assert got.error is None and got.table.num_rows == 600
    assert got.table.equals(want.table)


@pytest.mark.parametrize("style", KAFKA_STYLE)
def test_v2_batches_never_take_the_python_path(monkeypatch, style):
    from kafka_format.runtime.kernels import crc32 as kernel_crc

    assert kernel_crc.CRC32C_FUNCTION  # the crc32c package's hardware function
    codec, pack = KAFKA_STYLE[style]
    data = _batch([b"%d" % i * 40 for i in range(500)], pack(2), codec=codec) * 2
    want = reference(data, include_headers=True)
    monkeypatch.setattr(columnar, "_prepare_v2", _refuse(f"a v2 {style} batch"))
    for verify_crc in (True, False):
        got = fast(data, include_headers=True, verify_crc=verify_crc)
        assert got.error is None and got.table.equals(want.table)


@pytest.mark.parametrize("style", [*KAFKA_STYLE, "uncompressed"])
def test_without_the_crc32c_function_the_kernel_checks_by_tables(monkeypatch, style):
    """No hardware CRC-32C: the kernels check v2 CRCs by tables, and only a batch whose CRC
    fails takes the Python path, which reports it as before."""
    from kafka_format.runtime.kernels import crc32 as kernel_crc

    codec, pack = KAFKA_STYLE.get(style, (0, None))
    values = [b"%d" % i * 40 for i in range(500)]
    data = (
        _batch(values, pack(2), codec=codec)
        if pack
        else build_record_batch([{"value": v, "offset_delta": i} for i, v in enumerate(values)])
    )
    bad = bytearray(data)
    bad[-3] ^= 1
    monkeypatch.setattr(kernel_crc, "CRC32C_FUNCTION", 0)
    calls = []
    prepare = columnar._prepare_v2
    monkeypatch.setattr(columnar, "_prepare_v2", lambda *a: calls.append(1) or prepare(*a))
    assert assert_same(data).table.num_rows == 500
    assert not calls
    outcome = assert_same(bytes(bad))
    assert outcome.error[0] == "CrcMismatchError"
    assert calls


def test_uncompressed_v2_batches_with_good_crcs_never_take_the_python_path(monkeypatch):
    data = b"".join(
        build_record_batch(
            [{"value": b"v%d" % i, "offset_delta": d} for d in range(9)], base_offset=9 * i
        )
        for i in range(20)
    )
    want = reference(data, include_headers=True)
    monkeypatch.setattr(columnar, "_prepare_v2", _refuse("an uncompressed v2 batch"))
    for verify_crc in (True, False):
        got = fast(data, include_headers=True, verify_crc=verify_crc)
        assert got.error is None and got.table.equals(want.table)


def test_without_the_lz4_function_lz4_sections_take_the_python_path(monkeypatch):
    from kafka_format.runtime.kernels import inflate as kernel_inflate
    from kafka_format.runtime.kernels import lz4 as kernel_lz4

    lz4_data = _wrapper([b"w%d" % i * 20 for i in range(300)], 1, _kafka_lz4(1)) + _batch(
        [b"b%d" % i * 20 for i in range(300)], _kafka_lz4(2)
    )
    snappy_data = _wrapper([b"s%d" % i * 20 for i in range(300)], 1, _snappy(True), 2) + _batch(
        [b"t%d" % i * 20 for i in range(300)], _snappy(False), codec=2
    )
    monkeypatch.setattr(kernel_lz4, "LZ4_DECOMPRESS", 0)
    without_lz4f = kernel_inflate.FUNCTIONS.copy()
    without_lz4f[kernel_inflate.LZ4F_CREATE : kernel_inflate.LZ4F_FREE + 1] = 0
    monkeypatch.setattr(kernel_inflate, "FUNCTIONS", without_lz4f)
    calls = []
    for name in ("_prepare_wrapper", "_prepare_v2"):
        prepare = getattr(columnar, name)
        monkeypatch.setattr(
            columnar, name, lambda *a, name=name, f=prepare: calls.append(name) or f(*a)
        )
    assert assert_same(snappy_data, include_headers=True).table.num_rows == 600
    assert calls == []  # snappy needs no library function
    assert assert_same(lz4_data, include_headers=True).table.num_rows == 600
    assert sorted(calls) == ["_prepare_v2", "_prepare_wrapper"]


def test_the_frame_decoder_never_writes_past_its_capacity():
    import numpy as np

    from kafka_format.runtime.kernels import lz4 as kernel_lz4

    data = random.Random(8).randbytes(150_000)  # incompressible: stored blocks
    frame = compress(3, data, magic=2)
    src = np.frombuffer(frame, np.uint8)
    capacity = kernel_lz4.frame_capacity(src.ctypes.data, 0, len(frame), True)
    assert capacity == len(data)
    fn = kernel_lz4.LZ4_DECOMPRESS
    for room in (capacity, capacity - 1, 70_000, 0):
        dst = np.full(capacity + 64, 0xAB, np.uint8)
        n = kernel_lz4.decode_frames(fn, src.ctypes.data, 0, len(frame), dst.ctypes.data, room)
        assert n == (capacity if room == capacity else -1)
        assert (dst[room:] == 0xAB).all()  # nothing written past the room given
        if n > 0:
            assert dst[:n].tobytes() == data
    text = compress(3, b"kafka " * 50_000, magic=2)  # compressed blocks
    src = np.frombuffer(text, np.uint8)
    capacity = kernel_lz4.frame_capacity(src.ctypes.data, 0, len(text), True)
    dst = np.full(capacity + 64, 0xAB, np.uint8)
    n = kernel_lz4.decode_frames(fn, src.ctypes.data, 0, len(text), dst.ctypes.data, 1000)
    assert n == -1 and (dst[1000:] == 0xAB).all()


@pytest.mark.parametrize("style", KAFKA_STYLE)
def test_a_v2_record_count_that_cannot_fit_is_worded_as_the_python_path(style):
    codec, pack = KAFKA_STYLE[style]
    data = _batch([b"a"] * 10, pack(2), count=100_000, codec=codec)
    got = fast(data)
    assert got.error == reference(data).error and got.error[0] == "CorruptBatchError"
    with pytest.raises(kf.CorruptBatchError, match="record count 100000 cannot fit"):
        columnar.read_table(data)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    sets=packed_sets(),
    verify_crc=st.booleans(),
    errors=st.sampled_from(("strict", "skip")),
    damage=st.data(),
)
def test_damaged_packed_sets_fail_as_the_reference_does(sets, verify_crc, errors, damage):
    """Bytes changed anywhere, mostly inside the compressed values: without CRCs to catch it,
    the kernel meets blocks that do not decode and framing it does not take."""
    data = bytearray(sets)
    for _ in range(damage.draw(st.integers(1, 3))):
        at = damage.draw(st.integers(0, len(data) - 1))
        data[at] ^= 1 << damage.draw(st.integers(0, 7))
    assert_same(bytes(data), verify_crc=verify_crc, errors=errors)


def _undecodable(good: bytes, start: int, kernel_accepts, library_decodes) -> bytes:
    """``good`` with one byte of its compressed value (from ``start``) changed so that the
    kernel still plans it but the codec library refuses it."""
    for at in range(start, len(good) - 8):
        bad = bytearray(good)
        bad[at] ^= 0xFF
        if kernel_accepts(bytes(bad)) and not library_decodes(bytes(bad[start:])):
            return bytes(bad)
    raise AssertionError("no damage the library refuses in a value the kernel plans")


def _same_error_by_the_kernel_alone(monkeypatch, data: bytes) -> None:
    want = reference(data, verify_crc=False)
    with pytest.raises(kf.DecompressionError) as reference_error:
        reference_read_table(data, verify_crc=False)
    monkeypatch.setattr(columnar, "_prepare_wrapper", None)  # the kernel's path only
    monkeypatch.setattr(plan, "_PACKED_LZ4_MIN", 0)  # the record decoder's LZ4, small or not
    got = fast(data, verify_crc=False)
    assert got.error == want.error and got.error[0] == "DecompressionError"
    with pytest.raises(kf.DecompressionError) as fast_error:
        columnar.read_table(data, verify_crc=False)
    assert str(fast_error.value) == str(reference_error.value)


def test_an_lz4_block_that_does_not_decode_gets_python_lz4s_error(monkeypatch):
    import numpy as np

    from kafka_format.runtime.kernels import lz4 as kernel_lz4

    values = [bytes(range(i, i + 40)) * 3 for i in range(100)]
    good = _wrapper(values, 1, _kafka_lz4(1))
    start = good.find(b"\x04\x22\x4d\x18")

    def plain(bad: bytes) -> bool:
        buf = np.frombuffer(bad, np.uint8)
        return kernel_lz4.frame_capacity(buf.ctypes.data, start, len(bad), True) >= 0

    def decodes(frame: bytes) -> bool:
        try:
            lz4.frame.decompress(frame)
        except RuntimeError:
            return False
        return True

    # Damage inside a block (from byte 11): the frame stays plain, the block fails.
    _same_error_by_the_kernel_alone(monkeypatch, _undecodable(good, start + 11, plain, decodes))


@pytest.mark.parametrize("xerial", [True, False], ids=["xerial", "raw"])
def test_a_snappy_block_that_does_not_decode_gets_cramjams_error(monkeypatch, xerial):
    import numpy as np

    from kafka_format.runtime.format import codecs
    from kafka_format.runtime.kernels import snappy as kernel_snappy

    values = [bytes(range(i, i + 40)) * 3 for i in range(100)]
    good = _wrapper(values, 1, _snappy(xerial), 2)
    # Magic 1, no key: 8 + 4 + 4 + 1 + 1 + 8 bytes of header, key and value lengths.
    start = good.find(codecs.XERIAL_MAGIC) if xerial else 34
    end = len(good)

    def planned(bad: bytes) -> bool:
        buf = np.frombuffer(bad, np.uint8)
        return kernel_snappy.snappy_capacity(buf.ctypes.data, start, end) >= 0

    def decodes(value: bytes) -> bool:
        try:
            codecs.decompress(2, value, magic=1)
        except kf.DecompressionError:
            return False
        return True

    assert decodes(good[start:]) and planned(good)
    _same_error_by_the_kernel_alone(monkeypatch, _undecodable(good, start, planned, decodes))


@pytest.mark.parametrize(
    "value",
    [
        b"\x82SNAPPY\x00\x00\x00\x00\x01",  # a xerial header cut short
        b"\x82SNAPPY\x00" + bytes(8) + b"\x00\x00\x00\x00",  # an empty xerial block
        b"\x82SNAPPY\x00" + bytes(8) + b"\x00\x00\x01\x00abc",  # a block past the value's end
        b"\x82SNAPPY\x00" + bytes(8) + b"\x00\x00",  # a block length cut short
        b"\xff\xff\xff\x7f\x00\x00",  # more than snappy can encode in the block
    ],
)
@pytest.mark.parametrize("magic", [1, 2])
def test_snappy_values_the_kernel_leaves_to_python(monkeypatch, value, magic):
    data = (
        build_legacy_message(offset=0, value=value, magic=1, timestamp=TS0, codec=2)
        if magic == 1
        else build_record_batch(compressed_payload=value, records_count=1, codec=2)
    )
    calls = []
    name = "_prepare_wrapper" if magic == 1 else "_prepare_v2"
    prepare = getattr(columnar, name)
    monkeypatch.setattr(columnar, name, lambda *a: calls.append(1) or prepare(*a))
    assert assert_same(data).error[0] == "DecompressionError"
    assert calls


@pytest.mark.parametrize(
    "value",
    [b"\x82SNAPPY\x00" + bytes(8), b"\x00", b"\x00\x00"],
    ids=["xerial of no blocks", "raw of no bytes", "raw of no bytes, a byte after"],
)
@pytest.mark.parametrize("magic", [0, 1, 2])
def test_snappy_values_of_nothing_as_the_reference(value, magic):
    """What the kernel plans with a capacity of 0, or refuses for the byte left over."""
    if magic == 2:
        data = build_record_batch(compressed_payload=value, records_count=1, codec=2)
    else:
        data = build_legacy_message(
            offset=0, value=value, magic=magic, timestamp=TS0 if magic else None, codec=2
        )
    for verify_crc in (True, False):
        outcome = assert_same(data, verify_crc=verify_crc)
        assert outcome.error[0] in ("CorruptBatchError", "DecompressionError")


@pytest.mark.parametrize(
    "frame",
    [
        lambda d: lz4.frame.compress(d, block_linked=True, store_size=False),
        lambda d: lz4.frame.compress(d, block_linked=False, content_checksum=True),
        lambda d: lz4.frame.compress(d, block_linked=False, block_checksum=True),
    ],
    ids=["linked", "content-checksum", "block-checksum"],
)
@pytest.mark.parametrize("magic", [1, 2])
def test_lz4_frames_the_kernel_leaves_to_python(frame, magic):
    values = [b"v%d" % i * 30 for i in range(200)]
    data = _wrapper(values, 1, frame) if magic == 1 else _batch(values, frame)
    assert assert_same(data).table.num_rows == 200


@pytest.mark.parametrize("style", KAFKA_STYLE)
@pytest.mark.parametrize("magic", [1, 2])
def test_bound_and_crc_as_the_reference(magic, style):
    codec, pack = KAFKA_STYLE[style]
    values = [b"x" * 1000] * 100
    data = (
        _wrapper(values, 1, pack(magic), codec)
        if magic == 1
        else _batch(values, pack(magic), codec=codec)
    )
    outcome = assert_same(data, max_decompressed_bytes=50_000)
    assert outcome.error[0] == "DecompressionLimitError"
    bad = bytearray(data)
    bad[-5] ^= 0x10
    outcome = assert_same(bytes(bad))
    assert outcome.error[0] == "CrcMismatchError"


def test_crc_mismatch_raises_or_is_skipped():
    good = build_record_batch([{"value": b"a"}], base_offset=0)
    bad = bytearray(build_record_batch([{"value": b"b"}], base_offset=1))
    bad[-1] ^= 0xFF
    data = good + bytes(bad) + good
    with pytest.raises(kf.CrcMismatchError) as info:
        columnar.read_table(data)
    assert info.value.position == len(good) and info.value.base_offset == 1
    report = kf.Report()
    table = columnar.read_table(data, errors="skip", report=report)
    assert table["value"].to_pylist() == [b"a", b"a"]
    assert [type(e) for e in report.errors] == [kf.CrcMismatchError]
    assert_same(data, errors="skip")


def test_rows_before_a_strict_error_are_a_prefix_of_the_good_rows():
    batches = [
        build_record_batch(
            [{"value": bytes([i]), "offset_delta": d} for d in range(3)], base_offset=3 * i
        )
        for i in range(6)
    ]
    broken = bytearray(batches[4])
    broken[-1] ^= 1
    data = b"".join(batches[:4]) + bytes(broken) + batches[5]
    seen = []
    with pytest.raises(kf.CrcMismatchError):
        for batch in columnar.iter_arrow_batches(data, batch_rows=2):
            seen.extend(batch["offset"].to_pylist())
    assert seen == list(range(len(seen))) and len(seen) <= 12


def test_a_batch_of_no_records_is_not_decompressed():
    """As Kafka: an empty compressed batch is read as empty, whatever its payload, but an
    undefined codec id is still an error."""
    empty_gzip = build_record_batch(compressed_payload=b"", records_count=0, codec=1)
    junk_lz4 = build_record_batch(compressed_payload=b"junk", records_count=0, codec=3)
    data = empty_gzip + junk_lz4 + build_record_batch([{"value": b"v"}], base_offset=1)
    outcome = assert_same(data)
    assert outcome.table["value"].to_pylist() == [b"v"]
    bad_codec = build_record_batch(compressed_payload=b"", records_count=0, attributes=6)
    outcome = assert_same(bad_codec)
    assert outcome.error[0] == "UnsupportedCodecError"


def test_offset_beyond_int64_is_a_corrupt_batch():
    data = build_record_batch([{"value": b"v", "offset_delta": 5}], base_offset=2**63 - 2)
    with pytest.raises(kf.CorruptBatchError, match="offset overflow") as fast_error:
        columnar.read_table(data)
    with pytest.raises(kf.CorruptBatchError, match="offset overflow") as reference_error:
        reference_read_table(data)
    assert str(fast_error.value) == str(reference_error.value)


def test_short_copies_stay_within_both_limits():
    """Keys, values and headers are copied 16 bytes at a time where both buffers have room
    for it, byte by byte where they do not: never a byte read or written past a limit. The
    source ends where an unreadable page begins, so a read past it would crash."""
    import ctypes
    import itertools
    import mmap

    import numpy as np
    from numba import njit

    from kafka_format.runtime.kernels import fastscan

    @njit
    def copy(dst, dst_end, src, src_end, n):
        fastscan.copy_bytes(dst, dst_end, src, src_end, n)

    page = mmap.PAGESIZE
    region = mmap.mmap(-1, 2 * page)
    base = ctypes.addressof(ctypes.c_char.from_buffer(region))
    libc = ctypes.CDLL(None, use_errno=True)
    assert libc.mprotect(ctypes.c_void_p(base + page), page, 0) == 0  # PROT_NONE
    data = bytes(range(1, 201))
    region[page - 200 : page] = data
    for n in (0, 1, 7, 8, 15, 16, 17, 33, 100, 128, 129, 150):
        for src_slack, dst_slack in itertools.product((0, 5, 16), repeat=2):
            src = base + page - n - src_slack  # ``src_slack`` readable bytes after the copy
            dst = np.zeros(n + 64, np.uint8)
            copy(dst.ctypes.data, dst.ctypes.data + n + dst_slack, src, base + page, n)
            want = data[200 - n - src_slack : 200 - src_slack]
            assert dst[:n].tobytes() == want
            assert not dst[n + dst_slack :].any()  # nothing written past the limit
    del dst
    libc.mprotect(ctypes.c_void_p(base + page), page, 3)
    region.close()


def test_header_key_that_is_not_utf8_is_a_corrupt_batch():
    data = bytearray(build_record_batch([{"value": b"v", "headers": [("ab", b"x")]}]))
    at = data.index(b"ab")
    data[at] = 0xC0  # an overlong lead byte: never valid UTF-8
    assert_same(bytes(data), verify_crc=False)
    with pytest.raises(kf.CorruptBatchError):
        columnar.read_table(bytes(data), verify_crc=False)


# --- read_committed ---------------------------------------------------------------------------


def _control(offset: int, producer_id: int, commit: bool) -> bytes:
    key = struct.pack(">hh", 0, 1 if commit else 0)
    value = struct.pack(">hi", 0, 7)
    return build_record_batch(
        [{"key": key, "value": value}],
        base_offset=offset,
        producer_id=producer_id,
        producer_epoch=0,
        is_transactional=True,
        is_control=True,
    )


@st.composite
def transactional_sets(draw) -> bytes:
    """Producers' transactions interleaved: each commits, aborts or stays open; plain
    (non-transactional) batches in between."""
    parts = []
    offset = 0
    open_txns: dict[int, bool] = {}
    for _ in range(draw(st.integers(1, 14))):
        pid = draw(st.integers(0, 3))
        action = draw(st.sampled_from(("data", "data", "commit", "abort", "plain")))
        if action == "plain":
            parts.append(build_record_batch([{"value": b"p%d" % offset}], base_offset=offset))
        elif action == "data":
            n = draw(st.integers(1, 3))
            parts.append(
                build_record_batch(
                    [{"value": b"t%d" % (offset + i), "offset_delta": i} for i in range(n)],
                    base_offset=offset,
                    producer_id=pid,
                    producer_epoch=0,
                    base_sequence=0,
                    is_transactional=True,
                    codec=0,
                )
            )
            open_txns[pid] = True
            offset += n - 1
        elif open_txns.pop(pid, False):
            parts.append(_control(offset, pid, action == "commit"))
        else:
            continue
        offset += 1
    return b"".join(parts)


@SETTINGS
@given(data=transactional_sets(), errors=st.sampled_from(("strict", "skip")))
def test_read_committed_same_as_reference(data, errors):
    outcome = assert_same(data, isolation="read_committed", errors=errors)
    uncommitted = assert_same(data)
    assert outcome.table.num_rows <= uncommitted.table.num_rows


def test_read_committed_drops_an_aborted_transaction():
    data = b"".join(
        [
            build_record_batch(
                [{"value": b"aborted"}],
                base_offset=0,
                producer_id=9,
                producer_epoch=0,
                is_transactional=True,
            ),
            build_record_batch([{"value": b"plain"}], base_offset=1),
            _control(2, 9, commit=False),
            build_record_batch(
                [{"value": b"kept"}],
                base_offset=3,
                producer_id=9,
                producer_epoch=0,
                is_transactional=True,
            ),
            _control(4, 9, commit=True),
        ]
    )
    table = columnar.read_table(data, isolation="read_committed")
    assert table["value"].to_pylist() == [b"plain", b"kept"]
    # A stream that cannot be mapped is read into memory for the two passes.
    assert columnar.read_table(io.BytesIO(data), isolation="read_committed").equals(table)
    got = fast(io.BytesIO(data), isolation="read_committed")
    want = reference(io.BytesIO(data), isolation="read_committed")
    assert got.table.equals(want.table) and got.error == want.error is None
    assert columnar.read_table(data)["value"].to_pylist() == [b"aborted", b"plain", b"kept"]
    assert_same(data, isolation="read_committed")


# --- API --------------------------------------------------------------------------------------


def test_public_names_are_the_fast_path():
    assert kf.read_table is columnar.read_table
    assert kf.iter_arrow_batches is columnar.iter_arrow_batches
    assert kf.arrow_schema(True) == columnar.arrow_schema(True)


def test_bad_options_raise_value_error():
    for options in ({"errors": "ignore"}, {"isolation": "dirty"}, {"batch_rows": 0}):
        with pytest.raises(ValueError):
            columnar.read_table(b"", **options)


def test_reference_batches_are_full_and_fast_ones_bounded():
    data = b"".join(
        build_record_batch(
            [{"value": b"v", "offset_delta": d} for d in range(3)], base_offset=3 * i
        )
        for i in range(5)
    )
    ref_sizes = [b.num_rows for b in reference_iter_arrow_batches(data, batch_rows=4)]
    fast_sizes = [b.num_rows for b in columnar.iter_arrow_batches(data, batch_rows=4)]
    assert ref_sizes == [4, 4, 4, 3]
    assert sum(fast_sizes) == 15 and max(fast_sizes) <= 4
