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

__all__ = ["file_rows", "located", "located_schema", "locator", "row_positions"]

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


def row_positions(rows_end: np.ndarray, positions: np.ndarray, first: int, n: int) -> np.ndarray:
    """The batch position of each of the rows ``[first, first + n)`` of a chunk whose frame
    ``i`` decoded the rows below ``rows_end[i]`` (a frame without rows holds none): each
    frame's position repeated over its rows, found by two searches, not one a row."""
    if n <= 0:
        return np.zeros(0, np.int64)
    lo = int(np.searchsorted(rows_end, first, side="right"))
    hi = int(np.searchsorted(rows_end, first + n - 1, side="right")) + 1
    bounds = np.clip(rows_end[lo:hi], first, first + n)
    return np.repeat(positions[lo:hi], np.diff(bounds, prepend=first))


def locator(chunk: Any):
    """``(first row, batch) -> batch`` adding the rows' file and batch positions, for the rows
    of a decoded chunk of one file (``columnar._Chunk``: its frame table, the position of its
    buffer in the file, and the rows decoded up to each frame)."""
    t = chunk.table
    frame_positions = t[:, fs.F_POS] + chunk.shift
    rows_end = chunk.rows_end

    def locate(first: int, batch: pa.RecordBatch) -> pa.RecordBatch:
        return located(
            batch, chunk.name, row_positions(rows_end, frame_positions, first, batch.num_rows)
        )

    return locate


def file_rows(chunk: Any, files: Any, locate: bool) -> Iterator[tuple[int, int | None, Any]]:
    """For a chunk of several files read into one buffer (``grouped.Files`` says where each
    starts, its name and its partition), its rows as ``[start, end)`` runs, each with what
    completes a batch of that run's rows (``(first row, batch) -> batch``, or None): a run a
    file with ``locate`` (its name and batch positions added, as :func:`locator` adds them),
    else a run a partition; where the files are of several partitions, each run's rows get
    its own topic and partition (the decoder wrote the first file's)."""
    mixed = files.mixed
    if not (locate or mixed):
        yield 0, None, None
        return
    rows_end = chunk.rows_end
    positions = chunk.table[:, fs.F_POS]
    frames = [*files.frames.tolist(), len(positions)]
    runs: list[tuple[int, int, int]] = []  # (first file, first frame, end frame)
    for k in range(len(files.names)):
        lo, hi = frames[k], frames[k + 1]
        if lo == hi:
            continue  # an empty file: no rows
        if runs and not locate and files.places[runs[-1][0]] == files.places[k]:
            runs[-1] = (runs[-1][0], runs[-1][1], hi)
        else:
            runs.append((k, lo, hi))
    for k, lo, hi in runs:
        name, place, shifted = files.names[k], files.places[k], positions - files.starts[k]

        def complete(row: int, batch: pa.RecordBatch, name=name, place=place, shifted=shifted):
            if mixed:
                batch = _placed(batch, *place)
            if not locate:
                return batch
            return located(batch, name, row_positions(rows_end, shifted, row, batch.num_rows))

        yield (int(rows_end[lo - 1]) if lo else 0), int(rows_end[hi - 1]), complete


def _placed(batch: pa.RecordBatch, topic: str | None, partition: int | None) -> pa.RecordBatch:
    """``batch`` with ``topic`` and ``partition`` in every row."""
    for name, value in (("topic", topic), ("partition", partition)):
        i = batch.schema.get_field_index(name)
        kind = batch.schema.field(i).type
        column = (
            pa.nulls(batch.num_rows, kind)
            if value is None
            else pa.repeat(pa.scalar(value, kind), batch.num_rows)
        )
        batch = batch.set_column(i, batch.schema.field(i), column)
    return batch
