"""``include_position``'s columns (``read/located.py``): each row's batch position, found a
frame at a time, is the one a search a row finds."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from kafka_format.runtime.read.located import row_positions


@settings(max_examples=400, deadline=None)
@given(counts=st.lists(st.integers(0, 4), min_size=1, max_size=10), data=st.data())
def test_row_positions_are_a_search_a_row(counts, data):
    rows_end = np.cumsum(np.array(counts, np.int64))
    positions = np.arange(len(counts), dtype=np.int64) * 61 + 5
    total = int(rows_end[-1])
    first = data.draw(st.integers(0, total))
    n = data.draw(st.integers(0, total - first))
    rows = np.arange(first, first + n)
    expected = positions[np.searchsorted(rows_end, rows, side="right")]
    found = row_positions(rows_end, positions, first, n)
    assert found.dtype == np.int64
    assert found.tolist() == expected.tolist()
