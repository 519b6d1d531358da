"""Arrow record batches (``columnar``'s, headers included) as canonical JSON lines.

The lines are ``format/jsonform.record_json``'s, byte for byte as
``json.dumps(..., separators=(",", ":"))`` writes them, one per row; a batch with ``file`` and
``position`` columns (``iter_arrow_batches(include_position=True)``) gets after those keys
``"topic"``, ``"partition"``, ``"file"`` and ``"position"``: where the record was; the numba kernel
``kernels/jsonl.write_lines`` writes them straight from the columns' buffers. Sliced arrays
(``iter_arrow_batches`` yields slices of its chunks) are read at their offsets.
"""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pyarrow as pa

from .. import cpus
from ..kernels import jsonl as kernel

__all__ = ["JsonLines"]

# Every input array read-only, as Arrow's buffers are: numba compiles the kernel once per
# combination of array types, and one is enough.
_EMPTY_U8 = np.frombuffer(b"", np.uint8)
_EMPTY_I32 = np.frombuffer(bytes(4), np.int32)
_EMPTY_I64 = np.frombuffer(b"", np.int64)
_NO_TAIL = np.frombuffer(bytes(8), np.int64)  # constant_text(b""): no words, length 0


def _read_only(array: np.ndarray) -> np.ndarray:
    array.flags.writeable = False
    return array


def _valid(array: pa.Array) -> np.ndarray:
    """One byte a row, 1 where the row is not null; empty when there are no nulls. Unpacked
    from the validity bitmap by numpy (``is_valid()`` and its conversion took 40 µs a column,
    most of a small record batch's lines)."""
    if array.null_count == 0:
        return _EMPTY_U8
    # Only the bytes of this slice: a record batch of a small file is a slice of its chunk.
    first, n = array.offset, len(array)
    bitmap = np.frombuffer(array.buffers()[0], np.uint8)[first // 8 : (first + n + 7) // 8]
    bits = np.unpackbits(bitmap, bitorder="little")
    return _read_only(bits[first % 8 : first % 8 + n])


def _offsets(array: pa.Array) -> np.ndarray:
    """The n + 1 int32 offsets of a binary, string or list array's rows, at its slice's own
    offset, into its (unsliced) data or values."""
    offsets = array.buffers()[1]
    if offsets is None:  # an array of no rows may have no buffers
        return _EMPTY_I32
    return _read_only(np.frombuffer(offsets, np.int32, len(array) + 1, array.offset * 4))


def _binary(array: pa.Array) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(offsets of the rows, n + 1 of them; data; validity) of a binary or string array."""
    offsets = _offsets(array)
    data = array.buffers()[2]
    data = _EMPTY_U8 if data is None else _read_only(np.frombuffer(data, np.uint8))
    return offsets, data, _valid(array)


def _fixed(array: pa.Array, dtype) -> np.ndarray:
    dtype = np.dtype(dtype)
    values = np.frombuffer(array.buffers()[1], dtype, len(array), array.offset * dtype.itemsize)
    return _read_only(values)


class JsonLines:
    """Turns record batches into JSON lines: ``encode`` a batch, write what it returns.

    A batch of many rows is cut in ``threads`` parts, written at once (the kernel releases
    the GIL); the output buffers are kept for the next batch. Close it (or use it as a context
    manager) to stop its thread.
    """

    __slots__ = ("_outs", "_pool", "threads")

    #: Fewer rows than this are written in the calling thread only.
    SPLIT_ROWS = 4096

    def __init__(self, threads: int | None = None) -> None:
        self.threads = max(1, threads if threads is not None else cpus.default_threads())
        self._outs = [np.empty(1 << 20, np.uint8) for _ in range(self.threads)]
        self._pool: ThreadPoolExecutor | None = None

    def __enter__(self) -> JsonLines:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None

    def encode(self, batch: pa.RecordBatch) -> list[memoryview]:
        """The batch's rows as JSON lines (ASCII), in parts to write in order; valid until
        the next call."""
        n = batch.num_rows
        if n == 0:
            return []
        columns = _columns(batch)
        parts = self.threads if n >= self.SPLIT_ROWS else 1
        cuts = [n * k // parts for k in range(parts + 1)]
        jobs = []
        for k in range(parts):
            lo, hi = cuts[k], cuts[k + 1]
            room = columns.capacity(lo, hi)
            if room > len(self._outs[k]):
                self._outs[k] = np.empty(max(room, 2 * len(self._outs[k])), np.uint8)
            jobs.append((lo, hi, self._outs[k]))
        if parts == 1:
            written = [columns.write(*jobs[0])]
        else:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(self.threads - 1, thread_name_prefix="jsonl")
            futures = [self._pool.submit(columns.write, *job) for job in jobs[1:]]
            written = [columns.write(*jobs[0])] + [f.result() for f in futures]
        return [memoryview(out)[:size] for (_, _, out), size in zip(jobs, written, strict=True)]


class _Columns:
    """The buffers of one batch's columns, as the kernel reads them."""

    __slots__ = ("args", "header_offsets", "hkey_offsets", "hvalue_offsets", "key_offsets",
                 "tail", "value_offsets")  # fmt: skip

    def __init__(self, batch: pa.RecordBatch) -> None:
        n = batch.num_rows
        names = batch.schema.names
        self.key_offsets, key_data, key_valid = _binary(batch.column(names.index("key")))
        self.value_offsets, value_data, value_valid = _binary(batch.column(names.index("value")))
        timestamp = batch.column(names.index("timestamp"))
        types = batch.column(names.index("timestampType"))
        if "headers" in names:
            headers = batch.column(names.index("headers"))
            self.header_offsets = _offsets(headers)
            header_valid = _valid(headers)
            entries = headers.values
            self.hkey_offsets, hkey_data, _ = _binary(entries.field(0))
            self.hvalue_offsets, hvalue_data, hvalue_valid = _binary(entries.field(1))
        else:
            self.header_offsets = _read_only(np.zeros(n + 1, np.int32))
            header_valid = _EMPTY_U8
            self.hkey_offsets = self.hvalue_offsets = _EMPTY_I32
            hkey_data = hvalue_data = hvalue_valid = _EMPTY_U8
        self.args = (
            _fixed(batch.column(names.index("offset")), np.int64),
            _fixed(timestamp, np.int64),
            _valid(timestamp),
            _fixed(types, np.int32),
            self.key_offsets,
            key_data,
            key_valid,
            self.value_offsets,
            value_data,
            value_valid,
            self.header_offsets,
            header_valid,
            self.hkey_offsets,
            hkey_data,
            self.hvalue_offsets,
            hvalue_data,
            hvalue_valid,
            *self._where(batch),
        )

    def _where(self, batch: pa.RecordBatch) -> tuple[np.ndarray, np.ndarray]:
        """(tail text, positions) of a located batch; empty arrays for any other. A batch
        of ``iter_arrow_batches`` holds the records of one file: topic, partition and file
        are those of its first row."""
        names = batch.schema.names
        self.tail = 0
        if "position" not in names or "file" not in names or batch.num_rows == 0:
            return _NO_TAIL, _EMPTY_I64
        topic = batch.column(names.index("topic"))[0].as_py()
        partition = batch.column(names.index("partition"))[0].as_py()
        file = batch.column(names.index("file"))[0].as_py()
        text = (
            f',"topic":{json.dumps(topic)},"partition":{json.dumps(partition)},'
            f'"file":{json.dumps(file)},"position":'
        ).encode("ascii")
        self.tail = len(text)
        tail = _read_only(kernel.constant_text(text))
        return tail, _fixed(batch.column(names.index("position")), np.int64)

    def capacity(self, lo: int, hi: int) -> int:
        """Room the lines of rows ``lo:hi`` take at most."""
        h0, h1 = int(self.header_offsets[lo]), int(self.header_offsets[hi])

        def span(offsets: np.ndarray, a: int, b: int) -> int:
            return int(offsets[b]) - int(offsets[a]) if b > a else 0

        binary = (
            span(self.key_offsets, lo, hi)
            + span(self.value_offsets, lo, hi)
            + span(self.hvalue_offsets, h0, h1)
        )
        return kernel.capacity(hi - lo, h1 - h0, binary, span(self.hkey_offsets, h0, h1), self.tail)

    def write(self, lo: int, hi: int, out: np.ndarray) -> int:
        return kernel.write_lines(lo, hi, *self.args, out)


_columns = _Columns
