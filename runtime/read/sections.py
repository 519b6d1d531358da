"""The record decoder's call and output (``columnar.py``'s worker side): buffers from Arrow's
memory pool, ``kernels.records.decode_sections`` over a run of sections, the buffers wrapped
as the columns of a record batch without a copy (with ``binary_view``, key and value as the
decoder's views: ``views.py``); the exceptions the reference raises for
what the decoder found (``kernel_error``); and the records it emitted with a null timestamp,
their value beyond Arrow's microseconds (``null_timestamps``).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pyarrow as pa

from ..errors import CorruptBatchError, KafkaFormatError
from ..format import messages
from ..format.batches import invalid_wrapper_offset, records_damage, wrapper_offset_overflow
from ..kernels import fastscan as fs
from ..kernels import lz4 as kernel_lz4
from ..kernels import snappy as kernel_snappy
from ..kernels.section_codes import E_OFFSET_ORDER as _E_OFFSET_ORDER
from ..kernels.section_codes import E_OFFSET_OUTSIDE as _E_OFFSET_OUTSIDE
from ..kernels.section_codes import E_WRAPPER_OFFSET as _E_WRAPPER_OFFSET
from ..kernels.section_codes import S_NULL_TS as _S_NULL_TS
from ..kernels.section_codes import S_NULL_TS_OFFSET as _S_NULL_TS_OFFSET
from ..kernels.views import VIEW_SIZE
from ..model import TimestampsOutOfRange
from . import views
from .columnar_reference import HEADER_TYPE
from .plan import Options

_TIMESTAMP_TYPE = pa.timestamp("us", tz="UTC")
_HEADER_FIELDS = list(HEADER_TYPE.value_type)


def _alloc(shape: tuple[int, ...], dtype) -> tuple[pa.Buffer, np.ndarray]:
    """A writable array in Arrow's memory pool, which keeps freed pages for the next chunk
    (fresh pages from the OS cost a fault each, about as much as decoding them)."""
    dtype = np.dtype(dtype)
    count = math.prod(shape)
    buffer = pa.allocate_buffer(max(count * dtype.itemsize, 8))
    array = np.frombuffer(buffer, dtype, count)
    return buffer, array.reshape(shape) if len(shape) > 1 else array


def run_kernel(
    sections: np.ndarray, chunk: Any, opts: Options, ample: bool
) -> tuple[pa.RecordBatch, int]:
    """Decode ``sections`` into one record batch; returns it and how many sections it holds
    (fewer than all when the buffers were full)."""
    rows = int(sections[:, fs.S_COUNT].sum())
    sizes = sections[:, fs.S_END] - sections[:, fs.S_START]
    place = views.placement(sections, chunk.buf) if opts.binary_view else None
    total = int(sizes.sum())
    # Views gather only the keys and values not viewed in place (compressed records); header
    # keys and values are gathered in either mode, so their room is the whole sections'.
    data = total if place is None else int(sizes[~place.in_place].sum())
    headers = opts.include_headers
    # Values take most of a record; keys and headers are small. ``ample``: the worst case.
    small = data if ample else data // 4 + 4096
    header_bytes = (total if ample else total // 4 + 4096) if headers else 0
    header_room = (total // 2 + 1 if ample else rows * 2 + 16) if headers else 0
    rec_buf, rec = _alloc((2, rows), np.int64)
    tt_buf, ts_type = _alloc((rows,), np.int32)
    off_buf, off32 = _alloc((3, rows + 1), np.int32)
    valid = np.empty((4, rows), np.uint8)
    key_buf, key_data = _alloc((small,), np.uint8)
    value_buf, value_data = _alloc((data,), np.uint8)
    hoff_buf, hoff = _alloc((2, header_room + 1), np.int32)
    hvalid = np.empty(header_room, np.uint8)
    hkey_buf, hkey_data = _alloc((header_bytes,), np.uint8)
    hvalue_buf, hvalue_data = _alloc((header_bytes,), np.uint8)
    off32[:, 0] = 0
    hoff[:, 0] = 0
    cur = np.zeros(fs.CURSORS, np.int64)
    packed = np.isin(sections[:, fs.S_FORMAT], (fs.FORMAT_PACKED_WRAPPER, fs.FORMAT_PACKED_V2))
    largest = int(sections[packed, fs.S_END].max()) if packed.any() else 0
    scratch = np.empty(largest + kernel_snappy.SLACK, np.uint8)
    if place is None:
        views_buf, view_out = None, np.empty((2, 0), np.uint8)
    else:
        views_buf, view_out = _alloc((2, VIEW_SIZE * rows), np.uint8)
    done = fs.decode_sections(
        sections,
        rec,
        ts_type,
        off32,
        valid,
        key_data,
        value_data,
        hoff,
        hvalid,
        hkey_data,
        hvalue_data,
        cur,
        headers,
        scratch,
        kernel_lz4.LZ4_DECOMPRESS,
        view_out,
        place.args if place is not None else _NO_VIEWS,
    )
    if ample and done < len(sections):
        raise AssertionError("worst-case buffers too small for the record decoder")
    n = int(cur[fs.C_ROWS])
    if n == 0:
        return _empty(opts), done
    row32 = (rows + 1) * 4
    if place is None:
        key = _binary(pa.binary(), n, valid[0], off_buf.slice(0, row32), key_buf)
        value = _binary(pa.binary(), n, valid[1], off_buf.slice(row32, row32), value_buf)
    else:
        at = VIEW_SIZE * rows
        key, value = (
            place.column(n, valid[c], views_buf.slice(c * at, at), copies, int(cur[cursor]))
            for c, copies, cursor in (
                (0, key_buf, fs.C_KEY_BYTES),
                (1, value_buf, fs.C_VALUE_BYTES),
            )
        )
    columns = [
        key,
        value,
        _repeat(chunk.topic, pa.string(), n),
        _repeat(chunk.partition, pa.int32(), n),
        pa.Array.from_buffers(pa.int64(), n, [None, rec_buf.slice(0, rows * 8)]),
        _fixed(_TIMESTAMP_TYPE, n, valid[3], rec_buf.slice(rows * 8, rows * 8)),
        pa.Array.from_buffers(pa.int32(), n, [None, tt_buf]),
    ]
    if headers:
        count = int(cur[fs.C_HEADERS])
        row_h = (header_room + 1) * 4
        struct_array = pa.StructArray.from_arrays(
            [
                pa.Array.from_buffers(
                    pa.string(), count, [None, hoff_buf.slice(0, row_h), hkey_buf]
                ),
                _binary(pa.binary(), count, hvalid, hoff_buf.slice(row_h, row_h), hvalue_buf),
            ],
            fields=_HEADER_FIELDS,
        )
        present = valid[2, :n]
        nulls = n - int(np.count_nonzero(present))
        columns.append(
            pa.Array.from_buffers(
                HEADER_TYPE,
                n,
                [_bitmap(present) if nulls else None, off_buf.slice(2 * row32, row32)],
                null_count=nulls,
                children=[struct_array],
            )
        )
    schema = opts.schema if place is None else views.view_schema(opts.schema)
    return pa.RecordBatch.from_arrays(columns, schema=schema), done


_NO_VIEWS = np.array([-1, 0, 0], np.int64)


def _empty(opts: Options) -> pa.RecordBatch:
    schema = views.view_schema(opts.schema) if opts.binary_view else opts.schema
    return pa.RecordBatch.from_pylist([], schema=schema)


def _bitmap(valid: np.ndarray) -> pa.Buffer:
    return pa.py_buffer(np.packbits(valid, bitorder="little"))


def _binary(kind, n: int, valid: np.ndarray, offsets: pa.Buffer, data: pa.Buffer) -> pa.Array:
    nulls = n - int(np.count_nonzero(valid[:n]))
    bitmap = _bitmap(valid[:n]) if nulls else None
    return pa.Array.from_buffers(kind, n, [bitmap, offsets, data], null_count=nulls)


def _fixed(kind, n: int, valid: np.ndarray, values: pa.Buffer) -> pa.Array:
    nulls = n - int(np.count_nonzero(valid[:n]))
    bitmap = _bitmap(valid[:n]) if nulls else None
    return pa.Array.from_buffers(kind, n, [bitmap, values], null_count=nulls)


def _repeat(value, kind, n: int) -> pa.Array:
    return pa.nulls(n, kind) if value is None else pa.repeat(pa.scalar(value, kind), n)


def null_timestamps(
    sections: np.ndarray, frames: np.ndarray, table: np.ndarray, shift: int, file: str | None
) -> dict[int, TimestampsOutOfRange]:
    """Per frame index (``frames[k]`` for ``sections[k]``), the records the decoder emitted
    with a null timestamp because Arrow's microseconds cannot hold it: only for batches that
    decoded and whose rows are kept."""
    some = np.flatnonzero(sections[:, _S_NULL_TS] > 0)  # rare: the other columns for those
    hit = some[(sections[some, fs.S_STATUS] == fs.E_OK) & (sections[some, fs.S_KEEP] != 0)]
    notes = {}
    for k in hit.tolist():
        i = int(frames[k])
        notes[i] = TimestampsOutOfRange(
            file=file,
            position=int(table[i, fs.F_POS]) + shift,
            first_offset=int(sections[k, _S_NULL_TS_OFFSET]),
            count=int(sections[k, _S_NULL_TS]),
        )
    return notes


_RECORD_CAUSES = {
    fs.E_EOF: lambda arg, arg2, count: messages.FIELD_PAST_END,
    fs.E_VARINT_TOO_LONG: lambda arg, arg2, count: messages.VARINT_TOO_LONG,
    fs.E_UTF8: lambda arg, arg2, count: messages.NOT_UTF8,
    fs.E_NEGATIVE_LENGTH: lambda arg, arg2, count: messages.negative_record_length(arg),
    fs.E_NEGATIVE_HEADERS: lambda arg, arg2, count: messages.negative_headers(arg),
    fs.E_NEGATIVE_HEADER_KEY: lambda arg, arg2, count: messages.negative_header_key(arg),
    fs.E_RECORD_PAST_END: lambda arg, arg2, count: messages.record_past_end(arg, arg2),
    fs.E_RECORD_SIZE: lambda arg, arg2, count: messages.record_size(arg, arg2),
    fs.E_LEFTOVER: lambda arg, arg2, count: messages.leftover_bytes(arg2, count),
}


_OFFSET_RULE = {
    _E_OFFSET_OUTSIDE: messages.offset_outside_batch,
    _E_OFFSET_ORDER: messages.offset_not_increasing,
}


def kernel_error(sec: np.ndarray, frame_position: int, compressed: bool) -> KafkaFormatError:
    """The exception the reference raises for what the kernel found: same class, same
    location, same words (``format/messages``). ``frame_position``: where the section's
    batch starts in the file; ``compressed``: whether its records were decompressed (v2
    record damage is located as ``batches.records_damage`` locates it)."""
    status = int(sec[fs.S_STATUS])
    at = int(sec[fs.S_ERR_POS])
    arg, arg2, inner = int(sec[fs.S_ERR_ARG]), int(sec[fs.S_ERR_ARG2]), int(sec[fs.S_ERR_ARG3])
    v2 = sec[fs.S_FORMAT] in (fs.FORMAT_V2, fs.FORMAT_PACKED_V2)
    if status == fs.E_PREMATURE_EOF and v2:  # the record count lies: at the batch
        return CorruptBatchError(messages.premature_eof(int(sec[fs.S_COUNT]), arg))
    if status in _RECORD_CAUSES and v2:
        cause = _RECORD_CAUSES[status](arg, arg2, int(sec[fs.S_COUNT]))
        return records_damage(cause, at, frame_position, compressed)
    if status == fs.E_OFFSET_RANGE:
        if not v2:
            return wrapper_offset_overflow(arg, arg2, inner)
        cause = messages.offset_overflow(int(sec[fs.S_BASE]), arg)
        return records_damage(cause, at, frame_position, compressed)
    if status in _OFFSET_RULE and v2:  # the reference's words: batches.offset_delta_damage
        cause = _OFFSET_RULE[status](int(sec[fs.S_BASE]), arg, arg2)
        return records_damage(cause, at, frame_position, compressed)
    if status == _E_WRAPPER_OFFSET:
        return invalid_wrapper_offset(arg, arg2)
    if status == fs.E_CRC:
        if sec[fs.S_FORMAT] in (fs.FORMAT_INNER, fs.FORMAT_PACKED_WRAPPER):
            return messages.crc_mismatch(arg2, arg, f"crc32 of inner message {inner}")
        return messages.crc_mismatch(arg2, arg, "crc32")
    if status == fs.E_MESSAGE_EOF:
        return CorruptBatchError(messages.malformed_message(messages.MESSAGE_FIELD_PAST_END))
    if status == fs.E_INNER_MAGIC:
        return CorruptBatchError(messages.inner_magic(arg))
    if status == fs.E_INNER_NESTED:
        return CorruptBatchError(messages.inner_nested(inner))
    if status == fs.E_INNER_TRAILING:
        return CorruptBatchError(messages.inner_trailing(arg2))
    if status == fs.E_INNER_NONE:
        return CorruptBatchError(messages.inner_none())
    if status == fs.E_INNER_FRAMING:
        # As the reference: at the wrapper, the byte in its decompressed messages named.
        return CorruptBatchError(messages.in_decompressed_messages(messages.inner_framing(arg), at))
    return CorruptBatchError(f"record decoder status {status}")
