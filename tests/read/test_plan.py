"""gzip payloads decoded into a buffer of the size they state (``plan.decompress_into``).

The fast path must give exactly what ``codecs.decompress_buffer`` (the Python path, zlib)
gives, and nothing where that raises: it answers None and the caller takes the
Python path, whose error is the reported one. Oracle: ``decompress_buffer`` and the reference
reader (``columnar_reference``), on payloads of every framing (gzip members with and without
names, header CRC, several members; zstd frames of every kind, which it declines), intact and
damaged. Where libdeflate and libzstd are found, ``kernels.inflate`` takes these payloads
before either path (``tests/kernels/test_kernel_inflate.py``); the reader's tests here run
with and without it.
"""

from __future__ import annotations

import gzip
import struct
import zlib

import numpy as np
import pytest
import zstandard
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import kafka_format as kf
from kafka_format.runtime.format.codecs import decompress_buffer
from kafka_format.runtime.kernels import inflate as kernel_inflate
from kafka_format.runtime.read import columnar, plan
from kafka_format.runtime.read.columnar_reference import reference_read_table
from kafka_format.schemas.legacy_message import build_legacy_message
from kafka_format.schemas.record import build_records
from kafka_format.schemas.record_batch import build_record_batch

GZIP, ZSTD = 1, 4
MAX = 64 << 20


def _opts(max_bytes: int = MAX) -> plan.Options:
    return plan.Options(
        include_headers=False,
        verify_crc=True,
        strict=True,
        max_bytes=max_bytes,
        batch_rows=1000,
        schema=columnar.arrow_schema(False),
        report=kf.Report(),
    )


def _into(codec: int, payload: bytes, max_bytes: int = MAX):
    view = memoryview(b"\0" * 8 + payload + b"\0")  # not at 0
    return plan.decompress_into(codec, 8, 8 + len(payload), view, _opts(max_bytes))


def _python(codec: int, payload: bytes, max_bytes: int = MAX):
    try:
        return bytes(decompress_buffer(codec, payload, magic=2, max_bytes=max_bytes))
    except kf.KafkaFormatError as exc:
        return exc


def _gzip_fhcrc(data: bytes) -> bytes:
    """A gzip member whose header carries FHCRC (the low 16 bits of its CRC-32)."""
    header = b"\x1f\x8b\x08\x02" + b"\0" * 4 + b"\x00\xff"
    body = zlib.compressobj(6, zlib.DEFLATED, -15)
    deflated = body.compress(data) + body.flush()
    crc = struct.pack("<H", zlib.crc32(header) & 0xFFFF)
    return header + crc + deflated + struct.pack("<II", zlib.crc32(data), len(data) & 0xFFFFFFFF)


def _zstd(data: bytes, *, size: bool, checksum: bool) -> bytes:
    return zstandard.ZstdCompressor(write_content_size=size, write_checksum=checksum).compress(data)


_SKIPPABLE = struct.pack("<II", 0x184D2A53, 3) + b"abc"

FRAMINGS = {
    "gzip": (GZIP, lambda d: gzip.compress(d, mtime=0)),
    "gzip, name": (GZIP, lambda d: _gzip_named(d)),
    "gzip, header CRC": (GZIP, _gzip_fhcrc),
    "gzip, two members": (GZIP, lambda d: gzip.compress(d[:7], mtime=0) + gzip.compress(d[7:])),
    "zstd": (ZSTD, lambda d: _zstd(d, size=True, checksum=False)),
    "zstd, no size (Java)": (ZSTD, lambda d: _zstd(d, size=False, checksum=True)),
    "zstd, two frames": (
        ZSTD,
        lambda d: _zstd(d[:5], size=False, checksum=False) + _zstd(d[5:], size=True, checksum=1),
    ),
    "zstd, skippable": (ZSTD, lambda d: _SKIPPABLE + _zstd(d, size=False, checksum=False)),
}


def _gzip_named(data: bytes) -> bytes:
    import io

    out = io.BytesIO()
    with gzip.GzipFile("name.txt", "wb", fileobj=out, mtime=0) as f:
        f.write(data)
    return out.getvalue()


_DATA = st.one_of(
    st.binary(max_size=2000),
    st.builds(lambda b, n: b * n, st.binary(min_size=1, max_size=50), st.integers(1, 3000)),
)


@pytest.mark.parametrize("framing", FRAMINGS)
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=_DATA)
def test_intact_payloads_decode_as_the_python_path(framing, data):
    codec, pack = FRAMINGS[framing]
    payload = pack(data)
    got = _into(codec, payload)
    assert _python(codec, payload) == data
    if got is not None:
        assert got.to_pybytes() == data
    # The fast path is taken where it can be: single gzip members without a header CRC (the
    # multi-member gzip's last ISIZE is not the whole size); zstd keeps the Python path.
    taken = framing in ("gzip", "gzip, name")
    assert (got is not None) == taken or (framing == "gzip, two members" and len(data) <= 7)


@pytest.mark.parametrize("framing", FRAMINGS)
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    data=_DATA,
    edits=st.lists(st.tuples(st.integers(0, 1 << 30), st.integers(1, 255)), max_size=3),
    cut=st.integers(0, 40),
    junk=st.binary(max_size=6),
)
def test_damaged_payloads_are_never_decoded_otherwise(framing, data, edits, cut, junk):
    """Bytes changed, the end cut off or junk appended: the fast path gives the Python path's
    output or nothing; never an output where the Python path raises."""
    codec, pack = FRAMINGS[framing]
    damaged = bytearray(pack(data))
    for at, flip in edits:
        damaged[at % len(damaged)] ^= flip
    damaged = bytes(damaged[: max(0, len(damaged) - cut)]) + junk
    want = _python(codec, damaged)
    got = _into(codec, damaged)
    if got is not None:
        assert not isinstance(want, Exception), want
        assert got.to_pybytes() == want


def test_a_size_past_max_bytes_takes_the_python_path():
    data = b"0123456789" * 10_000
    payload = gzip.compress(data)
    assert _into(GZIP, payload, max_bytes=len(data)).to_pybytes() == data
    assert _into(GZIP, payload, max_bytes=len(data) - 1) is None
    assert isinstance(_python(GZIP, payload, max_bytes=1000), kf.DecompressionLimitError)


def test_gzip_sizes():
    def size(payload: bytes) -> int:
        return plan.gzip_size(memoryview(b"\0" + payload), 1, 1 + len(payload))

    data = b"x" * 300_000
    assert size(gzip.compress(data)) == len(data)
    assert size(_gzip_fhcrc(data)) == -1
    assert size(b"\x1f\x8b\x08\x20" + bytes(20)) == -1  # a reserved flag
    assert size(b"\x1f\x8b\x07\x00" + bytes(20)) == -1  # not deflate
    assert size(gzip.compress(b"")[:17]) == -1
    # The most DEFLATE makes of a byte is about 1032: zeros come close, a lying ISIZE does not.
    zeros = gzip.compress(bytes(4 << 20), compresslevel=9)
    assert size(zeros) == 4 << 20
    lying = bytearray(gzip.compress(b"x" * 1000))
    lying[-4:] = (1033 * len(lying)).to_bytes(4, "little")
    assert size(bytes(lying)) == -1
    lying[-4:] = (1032 * len(lying)).to_bytes(4, "little")
    assert size(bytes(lying)) == 1032 * len(lying)


# --- through the reader -------------------------------------------------------------------


def _v2(values: list[bytes], codec: int, pack) -> bytes:
    return build_record_batch(
        compressed_payload=pack(
            build_records([{"value": v, "offset_delta": i} for i, v in enumerate(values)])
        ),
        records_count=len(values),
        last_offset_delta=len(values) - 1,
        codec=codec,
    )


def _v1_gzip(values: list[bytes]) -> bytes:
    inner = b"".join(
        build_legacy_message(offset=i, value=v, magic=1, timestamp=1_700_000_000_000)
        for i, v in enumerate(values)
    )
    return build_legacy_message(
        offset=len(values) - 1,
        value=gzip.compress(inner),
        magic=1,
        timestamp=1_700_000_000_000,
        codec=GZIP,
    )


def _outcome(reader, data: bytes, **options):
    try:
        return reader(data, **options), None
    except kf.KafkaFormatError as exc:
        return None, (type(exc).__name__, exc.position, exc.base_offset, str(exc))


SETS = {
    "v2 gzip": lambda vs: _v2(vs, GZIP, FRAMINGS["gzip"][1]),
    "v2 zstd": lambda vs: _v2(vs, ZSTD, FRAMINGS["zstd, no size (Java)"][1]),
    "v2 zstd, two frames": lambda vs: _v2(vs, ZSTD, FRAMINGS["zstd, two frames"][1]),
    "v1 gzip": _v1_gzip,
}


@pytest.mark.parametrize("kind", SETS)
@pytest.mark.parametrize("kernel", [True, False], ids=["inflate kernel", "without it"])
def test_the_reader_takes_the_fast_path_and_reads_as_the_reference(monkeypatch, kind, kernel):
    values = [b"value %d " % i * (1 + i % 7) for i in range(400)]
    data = SETS[kind](values) * 3
    if not kernel:  # as where no package or system ships libdeflate and libzstd
        monkeypatch.setattr(kernel_inflate, "FUNCTIONS", np.zeros_like(kernel_inflate.FUNCTIONS))
    taken = []
    into = plan.decompress_into

    def spy(*args):
        out = into(*args)
        taken.append(out is not None)
        return out

    monkeypatch.setattr(plan, "decompress_into", spy)
    table, error = _outcome(columnar.read_table, data)
    want, _ = _outcome(reference_read_table, data, batch_rows=1)
    assert error is None and table.equals(want)
    assert table["value"].to_pylist() == values * 3
    # The kernel decodes every payload in one call a chunk: no Python step per batch.
    assert taken == ([] if kernel else ["gzip" in kind] * 3)


@pytest.mark.parametrize("kind", SETS)
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(at=st.integers(0, 1 << 30), flip=st.integers(1, 255), verify=st.booleans())
def test_damaged_batches_fail_as_the_reference_does(kind, at, flip, verify):
    values = [b"value %d " % i * (1 + i % 5) for i in range(60)]
    good = SETS[kind](values)
    bad = bytearray(good)
    bad[61 + at % (len(bad) - 61)] ^= flip  # past the headers: the payload, mostly
    data = good + bytes(bad)
    table, error = _outcome(columnar.read_table, data, verify_crc=verify)
    want, want_error = _outcome(reference_read_table, data, verify_crc=verify, batch_rows=1)
    assert error == want_error
    if want is not None:
        assert table.equals(want)
