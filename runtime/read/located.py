"""The columns ``include_position`` adds to a record batch: ``file`` (the file's name,
dictionary-encoded) and ``position`` (the byte position in it of the batch holding the
record)."""

from __future__ import annotations

import functools
from collections.abc import Iterator
from typing import Any

import numpy as np
import pyarrow as pa

from ..kernels import fastscan as fs

__all__ = ["file_rows", "located", "located_schema", "locator"]

_FILE_TYPE = pa.dictionary(pa.int32(), pa.string())


@functools.cache
def located_schema(schema: pa.Schema) -> pa.Schema:
    return schema.append(pa.field("file", _FILE_TYPE)).append(pa.field("position", pa.int64()))


def located(batch: pa.RecordBatch, name: str, positions: np.ndarray) -> pa.RecordBatch:
    """``batch`` with its rows' file and batch positions."""
    files = pa.DictionaryArray.from_arrays(
        pa.array(np.zeros(batch.num_rows, np.int32)), pa.array([name], pa.string())
    )
    return pa.RecordBatch.from_arrays(
        [*batch.columns, files, pa.array(positions, pa.int64())],
        schema=located_schema(batch.schema),
    )


def locator(chunk: Any):
    """``(first row, batch) -> batch`` adding the rows' file and batch positions, for the rows
    of a decoded chunk of one file (``columnar._Chunk``: its frame table, the position of its
    buffer in the file, and the rows decoded up to each frame)."""
    t = chunk.table
    frame_positions = t[:, fs.F_POS] + chunk.shift
    rows_end = chunk.rows_end

    def locate(first: int, batch: pa.RecordBatch) -> pa.RecordBatch:
        rows = np.arange(first, first + batch.num_rows)
        frames = np.searchsorted(rows_end, rows, side="right")
        return located(batch, chunk.name, frame_positions[frames])

    return locate


def file_rows(chunk: Any, files: Any) -> Iterator[tuple[int, int, Any]]:
    """For a chunk of several files read into one buffer (``grouped.Gathered``: ``files``
    says where each starts), each file's rows of the chunk, ``[start, end)``, with a locator
    (:func:`locator`'s kind) for batches of that file's rows alone."""
    rows_end = chunk.rows_end
    positions = chunk.table[:, fs.F_POS]
    frames = [*files.frames.tolist(), len(positions)]
    for k, name in enumerate(files.names):
        lo, hi = frames[k], frames[k + 1]
        if lo == hi:
            continue  # an empty file: no rows
        first = int(rows_end[lo - 1]) if lo else 0
        shifted = positions - files.starts[k]

        def locate(row: int, batch: pa.RecordBatch, name=name, shifted=shifted) -> pa.RecordBatch:
            rows = np.arange(row, row + batch.num_rows)
            at = np.searchsorted(rows_end, rows, side="right")
            return located(batch, name, shifted[at])

        yield first, int(rows_end[hi - 1]), locate
