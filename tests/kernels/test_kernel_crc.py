"""The kernels' CRC-32 (``runtime/kernel_crc.py``): both implementations against zlib's.

Oracle: ``zlib.crc32``. The carry-less multiplication path reads up to 15 bytes before the span
and masks them off, so every span here has random bytes in front of it, and lengths cover each
remainder modulo 16 and each branch (one block, two, the four-stream loop and what follows it).
"""

from __future__ import annotations

import platform
import random
import zlib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from llvmlite import binding

from kafka_format.runtime.kernels import crc32 as kernel_crc

IMPLEMENTATIONS = [kernel_crc.crc32_table] + (
    [kernel_crc.crc32_clmul] if kernel_crc.HAS_CLMUL else []
)
_FRONT = 16  # bytes before every span: a v0/v1 message's offset, size and CRC


def _crc(fn, front: bytes, data: bytes) -> int:
    buf = np.frombuffer(front + data + b"\0", np.uint8)  # + 1: never an empty array
    return fn(buf.ctypes.data, len(front), len(front) + len(data))


def test_check_value():
    for fn in IMPLEMENTATIONS:
        assert _crc(fn, b"\xff" * _FRONT, b"123456789") == 0xCBF43926 == zlib.crc32(b"123456789")


def test_the_dispatch_follows_the_target():
    features = binding.get_host_cpu_features().flatten().split(",")
    x86 = platform.machine().lower() in ("x86_64", "amd64")
    assert (x86 and "+pclmul" in features) == kernel_crc.HAS_CLMUL
    expected = kernel_crc.crc32_clmul if kernel_crc.HAS_CLMUL else kernel_crc.crc32_table
    assert kernel_crc.crc32 is expected


@pytest.mark.parametrize("fn", IMPLEMENTATIONS, ids=lambda f: f.__name__)
def test_every_length_up_to_600(fn):
    rng = random.Random(6)
    for n in range(600):
        front = rng.randbytes(_FRONT)
        data = rng.randbytes(n)
        assert _crc(fn, front, data) == zlib.crc32(data), n


@pytest.mark.parametrize("fn", IMPLEMENTATIONS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("n", [4095, 65536, 1 << 20, (1 << 20) + 13])
def test_long_spans(fn, n):
    data = random.Random(n).randbytes(n)
    assert _crc(fn, b"\xa5" * _FRONT, data) == zlib.crc32(data)


@settings(max_examples=300, deadline=None)
@given(front=st.binary(min_size=_FRONT, max_size=40), data=st.binary(max_size=700))
def test_any_bytes_any_position(front, data):
    for fn in IMPLEMENTATIONS:
        assert _crc(fn, front, data) == zlib.crc32(data)


@settings(max_examples=100, deadline=None)
@given(data=st.binary(max_size=300), start=st.integers(0, 40))
def test_tables_read_nothing_outside_the_span(data, start):
    # The table path is also the fallback for any span: it must not need bytes in front.
    start = min(start, len(data))
    buf = np.frombuffer(data or b"\0", np.uint8)
    assert kernel_crc.crc32_table(buf.ctypes.data, start, len(data)) == zlib.crc32(data[start:])


@settings(max_examples=200, deadline=None)
@given(data=st.binary(max_size=5000), start=st.integers(0, 20))
def test_crc32c_by_address_is_the_packages(data, start):
    """The crc32c package's hardware function, called by the kernels by address, against the
    package's own ``crc32c`` (and so RFC 3720's CRC-32C)."""
    import crc32c

    assert kernel_crc.CRC32C_FUNCTION  # this machine's CPU has SSE 4.2
    start = min(start, len(data))
    buf = np.frombuffer(data + b"\0", np.uint8)
    fn = kernel_crc.CRC32C_FUNCTION
    assert kernel_crc.crc32c(fn, buf.ctypes.data, start, len(data)) == crc32c.crc32c(data[start:])


# --- CRC-32C: the tables the kernels fall back on, and the dispatch ---------------------------

CRC32C_WAYS = {
    "tables": lambda buf, start, end: kernel_crc.crc32c_table(buf, start, end),
    "dispatch without the function": lambda buf, start, end: kernel_crc.crc32c(0, buf, start, end),
    "the package's function": lambda buf, start, end: kernel_crc.crc32c(
        kernel_crc.CRC32C_FUNCTION, buf, start, end
    ),
}
# Around the strides: 16 bytes a step for the tables; 8 for the hardware function, which runs
# three streams of 256 and 8192 bytes (Adler's crc32c_hw).
_CRC32C_LENGTHS = sorted(
    {n + d for n in (0, 16, 32, 256 * 3, 8192 * 3, 8192 * 6) for d in range(-9, 10) if n + d >= 0}
)


def _crc32c_of(way, data: bytes, start: int = 0) -> int:
    buf = np.frombuffer(data + b"\0", np.uint8)  # + 1: never an empty array
    return CRC32C_WAYS[way](buf.ctypes.data, start, len(data))


def test_crc32c_check_value():
    for way in CRC32C_WAYS:
        assert _crc32c_of(way, b"123456789") == 0xE3069283, way  # RFC 3720's check value


@pytest.mark.parametrize("way", CRC32C_WAYS)
def test_crc32c_lengths_around_the_strides(way):
    import crc32c

    rng = random.Random(32)
    for n in _CRC32C_LENGTHS:
        data = rng.randbytes(n + 7)
        for start in (0, 1, 7):
            assert _crc32c_of(way, data[: start + n], start) == crc32c.crc32c(
                data[start : start + n]
            ), (n, start)


@settings(max_examples=300, deadline=None)
@given(data=st.binary(max_size=3000), start=st.integers(0, 40), cut=st.integers(0, 40))
def test_crc32c_any_bytes_any_alignment(data, start, cut):
    """Tables and dispatch against the crc32c package, for any span of any bytes: empty ones
    too, and starting at any alignment (the span reads nothing outside itself)."""
    import crc32c

    end = max(0, len(data) - cut)
    start = min(start, end)
    want = crc32c.crc32c(data[start:end])
    for way in CRC32C_WAYS:
        assert _crc32c_of(way, data[:end], start) == want, way
