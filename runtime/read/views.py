"""``binary_view=True``: ``key`` and ``value`` as Arrow ``binary_view`` arrays that point into
the bytes they were read from, without keeping a copy of them.

A view is 16 bytes: the length (int32), then either the bytes themselves when there are at
most 12, or a 4-byte prefix, the index of a data buffer and the offset in it (int32 each).

The record decoder (``sections.run_kernel``) still gathers keys and values into its own
buffers; this module walks the same sections again after it (their records already checked:
only sections the decoder accepted, ``E_OK``) and points each row of an uncompressed v2 batch
or an uncompressed v0/v1 entry at its bytes in the chunk's buffer: the mapped file. Rows of
compressed batches point into the decoder's buffer (their bytes exist nowhere else). When
every row points into the file, the decoder's key and value buffers are no longer referenced
and go back to the pool: the table holds views and the mapping only.

Lifetime: the data buffer wraps the chunk's numpy array, which holds the memoryview, which
holds the ``mmap``. ``columnar._open_input`` closes the map only when nothing exports it, so
the map lives as long as the table does, whether the caller's file or the reader is closed or
the file deleted. Only buffers nobody can change are referenced in place: the maps the reader
made itself (``adopt``) and ``bytes``; anything else (a ``bytearray``, a caller's map) is
copied once per batch, so the table never changes under its reader.
"""

from __future__ import annotations

import mmap
import weakref

import numpy as np
import pyarrow as pa
from numba import njit

from ..kernels import fastscan as fs
from ..kernels.records import _message, _record_fields

__all__ = ["VIEW_TYPE", "adopt", "as_views", "ensure_views", "view_schema"]

VIEW_TYPE = pa.binary_view()
_INLINE = 12  # bytes held in the view itself
_INT32_MAX = 2**31 - 1
_FROM_COPY = -1  # a row whose bytes are in the decoder's buffer, not in the file

#: The maps the reader made itself: nobody else holds them, so they are safe to point into.
_OWNED: weakref.WeakSet[mmap.mmap] = weakref.WeakSet()


def adopt(mapped: mmap.mmap) -> None:
    """Mark ``mapped`` as the reader's own map (``columnar._open_input``)."""
    _OWNED.add(mapped)


def view_schema(schema: pa.Schema) -> pa.Schema:
    """``schema`` with ``key`` and ``value`` as ``binary_view``."""
    for name in ("key", "value"):
        i = schema.get_field_index(name)
        schema = schema.set(i, schema.field(i).with_type(VIEW_TYPE))
    return schema


def as_views(batch: pa.RecordBatch, sections: np.ndarray, buf: np.ndarray) -> pa.RecordBatch:
    """``batch`` (the decoder's rows of ``sections``, whose records lie in ``buf``) with its
    key and value as views: into ``buf`` where the records lie there uncompressed, into the
    decoder's buffers otherwise."""
    n = batch.num_rows
    base = buf.ctypes.data if len(buf) else 0
    in_file = (
        (sections[:, fs.S_ADDR] == base)
        & np.isin(sections[:, fs.S_FORMAT], (fs.FORMAT_V2, fs.FORMAT_LEGACY))
        & (sections[:, fs.S_STATUS] == fs.E_OK)
        & (sections[:, fs.S_KEEP] != 0)
    )
    if n == 0 or not in_file.any() or not _owned(buf):
        return _cast(batch)
    lo = int(sections[in_file, fs.S_START].min())
    hi = int(sections[in_file, fs.S_END].max())
    if hi - lo > _INT32_MAX:  # a view's offset is an int32
        return _cast(batch)
    # (position in buf, length) of each row's key and value; _FROM_COPY where not in buf.
    where = np.full((2, n, 2), _FROM_COPY, np.int64)
    if not _locate(sections, in_file, base, where):
        return _cast(batch)
    data = pa.py_buffer(buf)[lo:hi]
    columns = list(batch.columns)
    for column, name in enumerate(("key", "value")):
        i = batch.schema.get_field_index(name)
        columns[i] = _views(batch.column(i), where[column], data, lo)
    return pa.RecordBatch.from_arrays(columns, schema=view_schema(batch.schema))


def ensure_views(batch: pa.RecordBatch) -> pa.RecordBatch:
    """``batch`` with views for key and value: the reference decoder's rows (control batches,
    odd headers) come as ``binary``; they are few."""
    if batch.schema.field("key").type == VIEW_TYPE:
        return batch
    return _cast(batch)


def _owned(buf: np.ndarray) -> bool:
    obj = buf.base
    while isinstance(obj, memoryview | np.ndarray):
        obj = obj.obj if isinstance(obj, memoryview) else obj.base
    return isinstance(obj, bytes) or (isinstance(obj, mmap.mmap) and obj in _OWNED)


def _cast(batch: pa.RecordBatch) -> pa.RecordBatch:
    """The decoder's rows as views into its own buffers."""
    return batch.cast(view_schema(batch.schema))


def _views(column: pa.Array, where: np.ndarray, data: pa.Buffer, lo: int) -> pa.Array:
    n = len(column)
    bitmap, offsets, copied = column.buffers()
    views = np.zeros((n, 16), np.uint8)
    off = np.frombuffer(offsets, np.int32, n + 1, column.offset * 4)
    copied_bytes = np.frombuffer(copied, np.uint8) if copied is not None else np.empty(0, np.uint8)
    file_bytes = np.frombuffer(data, np.uint8)
    uses_copy = _fill(where, lo, file_bytes, off, copied_bytes, views)
    buffers = [bitmap, pa.py_buffer(views), data]
    if uses_copy:
        buffers.append(copied)
    return pa.Array.from_buffers(VIEW_TYPE, n, buffers, null_count=column.null_count)


@njit(cache=True, nogil=True)
def _locate(sections, in_file, base, where):  # pragma: no cover - numba
    """Each row's key and value (position, length) in the chunk's buffer, for the rows of the
    ``in_file`` sections; False if a section's rows do not match what the decoder emitted."""
    row = 0
    for s in range(sections.shape[0]):
        end_row = sections[s, fs.S_ROWS_END]
        if not in_file[s]:
            row = end_row
            continue
        start = sections[s, fs.S_START]
        end = sections[s, fs.S_END]
        if sections[s, fs.S_FORMAT] == fs.FORMAT_LEGACY:
            # (error, offset, magic, attributes, timestamp, key pos, key len, value pos, len)
            m = _message(base, start, end)
            if m[0] != 0 or row >= where.shape[1]:
                return False
            where[0, row, 0], where[0, row, 1] = m[5], m[6]
            where[1, row, 0], where[1, row, 1] = m[7], m[8]
            row += 1
        else:
            p = start
            for _ in range(sections[s, fs.S_COUNT]):
                # (status, position, record end, timestamp delta, offset delta, key pos,
                # key len, value pos, value len, header count)
                f = _record_fields(base, p, end)
                if f[0] != 0 or row >= where.shape[1]:
                    return False
                where[0, row, 0], where[0, row, 1] = f[5], f[6]
                where[1, row, 0], where[1, row, 1] = f[7], f[8]
                row += 1
                p = f[2]
        if row != end_row:
            return False
    return True


@njit(cache=True, nogil=True)
def _fill(where, lo, file_bytes, off, copied, views):  # pragma: no cover - numba
    """The 16-byte views: bytes ≤ 12 inline; longer ones by prefix, buffer and offset (buffer
    0 the file's bytes from ``lo``, buffer 1 the decoder's copy). True if buffer 1 is used."""
    uses_copy = False
    for row in range(views.shape[0]):
        pos = where[row, 0]
        if pos == _FROM_COPY:
            start = off[row]
            length = off[row + 1] - start
            src = copied
            index = 1
        else:
            length = where[row, 1]
            if length < 0:  # null: the validity bitmap says so; the view stays zero
                continue
            start = pos - lo
            src = file_bytes
            index = 0
        v = views[row]
        _store32(v, 0, length)
        if length <= _INLINE:
            for j in range(length):
                v[4 + j] = src[start + j]
        else:
            for j in range(4):
                v[4 + j] = src[start + j]
            _store32(v, 8, index)
            _store32(v, 12, start)
            if index == 1:
                uses_copy = True
    return uses_copy


@njit(cache=True, inline="always")
def _store32(v, at, value):  # pragma: no cover - numba
    for j in range(4):
        v[at + j] = (value >> (8 * j)) & 0xFF
