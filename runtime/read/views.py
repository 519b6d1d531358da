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
from ..kernels.addresses import address_of, memcpy, store_le64

# The decoder's own field readers, inlined into _build: one parser of a record. numba's disk
# cache checks only this file: after changing kernels/records.py, touch this one too.
from ..kernels.records import _message, _record_fields

__all__ = ["VIEW_TYPE", "adopt", "as_views", "ensure_views", "filter_rows", "view_schema"]

VIEW_TYPE = pa.binary_view()
_INLINE = 12  # bytes held in the view itself
_INT32_MAX = 2**31 - 1

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
    key = batch.column(batch.schema.get_field_index("key"))
    value = batch.column(batch.schema.get_field_index("value"))
    # From Arrow's pool, whose pages are reused (fresh zeroed pages cost a fault each).
    k_buf, v_buf = pa.allocate_buffer(16 * n), pa.allocate_buffer(16 * n)
    k8, v8 = np.frombuffer(k_buf, np.uint8), np.frombuffer(v_buf, np.uint8)
    file_bytes = buf[lo:hi]
    copied = _build(
        sections, in_file, base, lo, file_bytes, *_offsets(key), *_offsets(value), k8, v8
    )
    if copied < 0:  # the sections' rows are not what the decoder emitted: keep its copies
        return _cast(batch)
    data = pa.py_buffer(buf)[lo:hi]
    columns = list(batch.columns)
    for column, views, uses_copy in ((key, k_buf, copied & 1), (value, v_buf, copied & 2)):
        buffers = [column.buffers()[0], views, data]
        if uses_copy:
            buffers.append(column.buffers()[2])
        array = pa.Array.from_buffers(VIEW_TYPE, n, buffers, null_count=column.null_count)
        columns[batch.schema.get_field_index("key" if column is key else "value")] = array
    return pa.RecordBatch.from_arrays(columns, schema=view_schema(batch.schema))


def _offsets(column: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """The decoder's offsets and bytes of a ``binary`` column."""
    _, offsets, data = column.buffers()
    off = np.frombuffer(offsets, np.int32, len(column) + 1, column.offset * 4)
    return off, np.frombuffer(data, np.uint8) if data is not None else np.empty(0, np.uint8)


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


@njit(cache=True, nogil=True)
def _build(sections, in_file, base, lo, file_bytes, koff, kcopy, voff, vcopy, k8, v8):
    """The 16-byte key and value views of every row of ``sections``: for the rows of the
    ``in_file`` sections, read again from the buffer at ``base`` into buffer 0 (its bytes
    from ``lo``: ``file_bytes``); for the others, from the decoder's copies (buffer 1).
    Returns bit 0 / bit 1 set when a key / value uses buffer 1, or -1 when a section's rows
    are not what the decoder emitted. Helpers take addresses only (no array reference
    counting per row)."""
    row = 0
    copied = 0
    n = k8.shape[0] // 16
    keys = address_of(k8)
    values = address_of(v8)
    file_at = address_of(file_bytes)
    kcopy_at = address_of(kcopy)
    vcopy_at = address_of(vcopy)
    for s in range(sections.shape[0]):
        end_row = sections[s, fs.S_ROWS_END]
        if not in_file[s]:
            for r in range(row, min(end_row, n)):
                if _view(keys + 16 * r, kcopy_at, koff[r], koff[r + 1] - koff[r], 1):
                    copied |= 1
                if _view(values + 16 * r, vcopy_at, voff[r], voff[r + 1] - voff[r], 1):
                    copied |= 2
            row = end_row
            continue
        start = sections[s, fs.S_START]
        end = sections[s, fs.S_END]
        if sections[s, fs.S_FORMAT] == fs.FORMAT_LEGACY:
            # (error, offset, magic, attributes, timestamp, key pos, key len, value pos, len)
            m = _message(base, start, end)
            if m[0] != 0 or row >= n:
                return -1
            _view(keys + 16 * row, file_at, m[5] - lo, m[6], 0)
            _view(values + 16 * row, file_at, m[7] - lo, m[8], 0)
            row += 1
        else:
            p = start
            for _ in range(sections[s, fs.S_COUNT]):
                # (status, position, record end, timestamp delta, offset delta, key pos,
                # key len, value pos, value len, header count)
                f = _record_fields(base, p, end)
                if f[0] != 0 or row >= n:
                    return -1
                _view(keys + 16 * row, file_at, f[5] - lo, f[6], 0)
                _view(values + 16 * row, file_at, f[7] - lo, f[8], 0)
                row += 1
                p = f[2]
        if row != end_row:
            return -1
    return copied if row == n else -1


@njit(cache=True, inline="always")
def _view(at, src, start, length, index):  # pragma: no cover - numba
    """The 16 bytes at address ``at``: the view of ``length`` bytes at ``src + start`` (a null
    when below 0: zeros, the validity bitmap says it). True when it refers to buffer
    ``index`` (longer than 12 bytes)."""
    if length <= _INLINE:
        # Inline bytes are padded with zeros (Arrow's format), so are nulls.
        store_le64(at, np.int64(max(length, 0)))
        store_le64(at + 8, np.int64(0))
        if length <= 0:
            return False
        memcpy(at + 4, src + start, length)
        return False
    store_le64(at, np.int64(length))
    memcpy(at + 4, src + start, 4)
    store_le64(at + 8, np.int64(index) | (np.int64(start) << 32))
    return True
