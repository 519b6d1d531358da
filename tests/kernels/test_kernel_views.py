"""The record decoder's views (``runtime/kernels/views.py``): ``put_view`` against the views
Arrow itself makes, and ``view_or_gather``'s choice between pointing and gathering.

Oracle: pyarrow's own ``binary_view`` arrays (``pa.array(values, pa.binary_view())``), whose
inline views are zero-padded as Arrow's format says. Two 8-byte loads make an inline view, so
spans are tried at every distance from the end of their buffer (the byte-by-byte path).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numba import njit

from kafka_format.runtime.kernels.views import IN_PLACE, INLINE, put_view, view_or_gather

VIEW = pa.binary_view()


@njit(cache=False)
def _put(out, buf, start, n, end, index, offset):
    put_view(out.ctypes.data, buf.ctypes.data + start, n, buf.ctypes.data + end, index, offset)


@njit(cache=False)
def _gather(out, buf, start, n, end, least, dst, used, base, copy_index):
    vout = (np.int64(1), out.ctypes.data, out.ctypes.data, buf.ctypes.data + base, copy_index)
    return view_or_gather(
        vout, 1, 0, buf.ctypes.data + start, n, buf.ctypes.data + end, least, dst.ctypes.data, used
    )


def _arrow_view(value: bytes | None) -> bytes:
    array = pa.array([value], VIEW)
    return array.buffers()[1].to_pybytes()[:16]


def _view(data: bytes, start: int, n: int, end: int | None = None, index=0, offset=0) -> bytes:
    buf = np.frombuffer(data + b"\0", np.uint8)  # + 1: never an empty array
    out = np.full(16, 0xAB, np.uint8)  # whatever the pool held before
    _put(out, buf, start, n, len(data) if end is None else end, index, offset)
    return out.tobytes()


@settings(max_examples=300, deadline=None)
@given(
    data=st.binary(min_size=0, max_size=40),
    cut=st.integers(0, 40),
    length=st.integers(-1, 40),
)
def test_views_are_arrows(data: bytes, cut: int, length: int) -> None:
    start = min(cut, len(data))
    n = min(length, len(data) - start)
    value = None if n < 0 else data[start : start + n]
    got = _view(data, start, n, index=3, offset=start + 7)
    if n <= INLINE:
        assert got == _arrow_view(value)
    else:  # length, prefix, buffer index, offset
        assert got == n.to_bytes(4, "little") + value[:4] + (3).to_bytes(4, "little") + (
            start + 7
        ).to_bytes(4, "little")


@pytest.mark.parametrize("n", range(13))
def test_inline_at_every_distance_from_the_end(n: int) -> None:
    data = bytes(range(100, 140))
    for start in range(len(data) - n + 1):  # the last ones cannot be read 16 bytes at a time
        assert _view(data, start, n) == _arrow_view(data[start : start + n]), start


def test_view_or_gather_points_in_place_and_gathers_the_rest() -> None:
    data = bytes(range(60))
    buf = np.frombuffer(data, np.uint8)
    out = np.zeros(16, np.uint8)
    dst = np.zeros(64, np.uint8)
    # In place: nothing gathered, the offset from the base.
    used = _gather(out, buf, 20, 30, 60, IN_PLACE, dst, 5, 10, 1)
    assert used == 5 and not dst.any()
    assert out.tobytes()[8:] == (0).to_bytes(4, "little") + (10).to_bytes(4, "little")
    # Gathered: long bytes copied at ``used``, the view points there in the copies' buffer.
    used = _gather(out, buf, 20, 30, 60, INLINE, dst, 5, 10, 1)
    assert used == 35 and dst[5:35].tobytes() == data[20:50]
    assert out.tobytes() == (30).to_bytes(4, "little") + data[20:24] + (1).to_bytes(4, "little") + (
        5
    ).to_bytes(4, "little")
    # Short bytes are never gathered: they sit in the view.
    used = _gather(out, buf, 20, 12, 60, INLINE, dst, 35, 10, 1)
    assert used == 35 and out.tobytes() == _arrow_view(data[20:32])
