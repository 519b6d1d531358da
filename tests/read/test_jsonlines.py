"""``read/jsonlines``: what the JSON-lines kernel is handed from Arrow's buffers. A column's
validity is unpacked from its bitmap, at the slice's own offset (record batches are slices of
their chunks), to what ``is_valid()`` says."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from kafka_format.runtime.read.jsonlines import _valid


@settings(max_examples=300, deadline=None)
@given(values=st.lists(st.one_of(st.none(), st.binary(max_size=3)), max_size=40), data=st.data())
def test_validity_is_is_valid_at_any_slice(values, data):
    array = pa.array(values, pa.binary())
    offset = data.draw(st.integers(0, len(values)))
    length = data.draw(st.integers(0, len(values) - offset))
    part = array.slice(offset, length)
    found = _valid(part)
    if part.null_count == 0:
        assert len(found) == 0  # no nulls: the kernel is told so by an empty array
    else:
        expected = np.asarray(part.is_valid().to_numpy(zero_copy_only=False), np.uint8)
        assert found.tolist() == expected.tolist()
        assert found.dtype == np.uint8 and not found.flags.writeable
