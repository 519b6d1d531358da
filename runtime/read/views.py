"""``binary_view=True``: ``key`` and ``value`` as Arrow ``binary_view`` arrays that point into
the bytes they were read from, without keeping a copy of them.

A view is 16 bytes: the length (int32), then either the bytes themselves when there are at
most 12, or a 4-byte prefix, the index of a data buffer and the offset in it (int32 each).

The record decoder writes them (``kernels.records.decode_sections`` in view mode, called by
``sections.run_kernel``): for a row of an uncompressed v2 batch or an uncompressed v0/v1 entry,
16 bytes a key and a value pointing at its bytes in the chunk's buffer, the mapped file (data
buffer 0), instead of gathering the bytes. Rows of compressed batches gather their keys and
values longer than 12 bytes into the decoder's buffer, as the copying path does, and point
there (data buffer 1, or 0 when no row of the batch lies in the file): their bytes exist nowhere
else once the decoder's scratch is reused. This module decides which (``placement``) and wraps
the decoder's views as the columns (``Placement.column``).

Lifetime: the data buffer wraps the chunk's numpy array, which holds the memoryview, which
holds the ``mmap``. ``columnar._open_input`` closes the map only when nothing exports it, so
the map lives as long as the table does, whether the caller's file or the reader is closed or
the file deleted. Only buffers nobody can change are referenced in place: the maps the reader
made itself (``adopt``) and ``bytes``; anything else (a ``bytearray``, a caller's map) has its
keys and values gathered, as compressed rows are, so the table never changes under its reader.
"""

from __future__ import annotations

import functools
import mmap
import weakref
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from ..kernels import fastscan as fs
from ..kernels.views import VIEW_SIZE

__all__ = [
    "VIEW_TYPE",
    "Placement",
    "adopt",
    "ensure_views",
    "filter_rows",
    "placement",
    "view_schema",
]

VIEW_TYPE = pa.binary_view()
_INT32_MAX = 2**31 - 1

#: The maps the reader made itself: nobody else holds them, so they are safe to point into.
_OWNED: weakref.WeakSet[mmap.mmap] = weakref.WeakSet()


def adopt(mapped: mmap.mmap) -> None:
    """Mark ``mapped`` as the reader's own map (``columnar._open_input``)."""
    _OWNED.add(mapped)


@functools.cache
def view_schema(schema: pa.Schema) -> pa.Schema:
    """``schema`` with ``key`` and ``value`` as ``binary_view``."""
    for name in ("key", "value"):
        i = schema.get_field_index(name)
        schema = schema.set(i, schema.field(i).with_type(VIEW_TYPE))
    return schema


@dataclass(slots=True)
class Placement:
    """Where the decoder's views of one run of sections point: ``args`` its ``view_args``
    (``kernels.records.V_*``), ``in_place`` the sections viewed in place, ``data`` those bytes
    of the chunk's buffer (data buffer 0), or None when nothing is viewed in place."""

    args: np.ndarray
    in_place: np.ndarray
    data: pa.Buffer | None

    def column(
        self, n: int, valid: np.ndarray, views: pa.Buffer, copies: pa.Buffer, copied: int
    ) -> pa.Array:
        """A ``binary_view`` column of ``n`` rows from the decoder's ``views`` (16 bytes a
        row), its ``valid`` bytes, and ``copies``, the bytes it gathered (``copied`` of them)."""
        nulls = n - int(np.count_nonzero(valid[:n]))
        bitmap = pa.py_buffer(np.packbits(valid[:n], bitorder="little")) if nulls else None
        buffers = [bitmap, views.slice(0, VIEW_SIZE * n)]
        if self.data is not None:
            buffers.append(self.data)
        if copied:
            buffers.append(copies.slice(0, copied))
        return pa.Array.from_buffers(VIEW_TYPE, n, buffers, null_count=nulls)


def placement(sections: np.ndarray, buf: np.ndarray) -> Placement:
    """Which of ``sections`` (records in ``buf``, the chunk's buffer, or decompressed) the
    decoder views in place: uncompressed v2 batches and v0/v1 entries of a buffer nobody can
    change, within 2 GiB (a view's offset is an int32; a chunk is far smaller)."""
    base = buf.ctypes.data if len(buf) else 0
    in_place = (sections[:, fs.S_ADDR] == base) & np.isin(
        sections[:, fs.S_FORMAT], (fs.FORMAT_V2, fs.FORMAT_LEGACY)
    )
    if in_place.any() and _owned(buf):
        lo = int(sections[in_place, fs.S_START].min())
        hi = int(sections[in_place, fs.S_END].max())
        if hi - lo <= _INT32_MAX:
            args = np.array([base, base + lo, 1], np.int64)  # V_PLACE, V_BASE, V_COPY_INDEX
            return Placement(args, in_place, pa.py_buffer(buf)[lo:hi])
    return Placement(np.array([-1, 0, 0], np.int64), np.zeros(len(sections), bool), None)


def ensure_views(batch: pa.RecordBatch) -> pa.RecordBatch:
    """``batch`` with views for key and value: the reference decoder's rows (control batches,
    odd headers) come as ``binary``; they are few."""
    if batch.schema.field("key").type == VIEW_TYPE:
        return batch
    return _cast(batch)


def filter_rows(batch: pa.RecordBatch, mask: pa.Array) -> pa.RecordBatch:
    """``batch.filter(mask)``, also for ``binary_view`` columns, which pyarrow 26 cannot
    filter or take: their views are filtered as 16-byte values, the data buffers kept."""
    if all(f.type != VIEW_TYPE for f in batch.schema):
        return batch.filter(mask)
    columns = [
        _filter_views(c, mask) if c.type == VIEW_TYPE else c.filter(mask) for c in batch.columns
    ]
    return pa.RecordBatch.from_arrays(columns, schema=batch.schema)


def _filter_views(column: pa.Array, mask: pa.Array) -> pa.Array:
    validity, views, *data = column.buffers()
    fixed = pa.Array.from_buffers(
        pa.binary(16), len(column), [validity, views], offset=column.offset
    ).filter(mask)
    kept_validity, kept_views = fixed.buffers()
    return pa.Array.from_buffers(
        VIEW_TYPE,
        len(fixed),
        [kept_validity, kept_views, *data],
        null_count=fixed.null_count,
        offset=fixed.offset,
    )


def _owned(buf: np.ndarray) -> bool:
    obj = buf.base
    while isinstance(obj, memoryview | np.ndarray):
        obj = obj.obj if isinstance(obj, memoryview) else obj.base
    return isinstance(obj, bytes) or (isinstance(obj, mmap.mmap) and obj in _OWNED)


def _cast(batch: pa.RecordBatch) -> pa.RecordBatch:
    """The decoder's rows as views into its own buffers."""
    return batch.cast(view_schema(batch.schema))
