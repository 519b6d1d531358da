"""``binary_view=True`` against the copying path and a memcpy of the same bytes (issue 19).

One uncompressed v2 record set (``inputs.record_set(2, 0, ...)``: 100-byte values, a short
key, one header, 1000 records a batch) written to a file; timed, best of ``repeat``, in this
process, with the page cache warm:

- ``read_table(path)``: keys and values copied into Arrow ``binary`` columns;
- ``read_table(path, binary_view=True)``: views into the mapped file;
- memcpy of the file's bytes: ``np.copyto`` from the map into a preallocated array (the
  bare copy), and ``src.copy()`` into a fresh array (a copy that, like a reader, takes new
  memory: the "numpy copy" of issue 19's figures).

Both reads check CRCs and decode every field; the tables are checked equal before timing.

    .venv/bin/python bench/run.py --only views [--quick]
"""

from __future__ import annotations

import mmap
import shutil
import tempfile
import time
from pathlib import Path

import inputs
import numpy as np
import pyarrow as pa

from kafka_format.runtime.read.columnar import read_table

HEADING = "## `binary_view` keys and values against the copying path and memcpy"


def _best(fn, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def _memcpy(path: Path, repeat: int) -> tuple[float, float]:
    """Best times of copying the mapped file's bytes into a preallocated array, and into a
    fresh one."""
    with open(path, "rb") as fh:
        mapped = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
    src = np.frombuffer(mapped, np.uint8)
    dst = np.empty_like(src)
    return _best(lambda: np.copyto(dst, src), repeat), _best(src.copy, repeat)


def run(records: int, repeat: int) -> dict:
    rs = inputs.record_set(2, 0, records)
    scratch = Path(tempfile.mkdtemp(prefix="kafka-format-views-"))
    try:
        path = scratch / "00000000000000000000.log"
        path.write_bytes(rs.data)
        before = pa.total_allocated_bytes()
        copied = read_table(path)
        copy_held = pa.total_allocated_bytes() - before
        before = pa.total_allocated_bytes()
        viewed = read_table(path, binary_view=True)
        view_held = pa.total_allocated_bytes() - before
        cast = viewed.cast(copied.schema)
        if not cast.equals(copied):
            raise AssertionError("binary_view table differs from the copying path's")
        del copied, viewed, cast
        memcpy, fresh = _memcpy(path, repeat)
        copy_s = _best(lambda: read_table(path), repeat)
        view_s = _best(lambda: read_table(path, binary_view=True), repeat)
        return {
            "records": rs.records,
            "bytes": len(rs.data),
            "memcpy": memcpy,
            "fresh": fresh,
            "copy": copy_s,
            "view": view_s,
            "repeat": repeat,
            "copy_held": copy_held,
            "view_held": view_held,
        }
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def render(result: dict, machine: str) -> str:
    size = result["bytes"]

    def row(name: str, seconds: float) -> str:
        gbs = size / seconds / 1e9
        return (
            f"| {name} | {seconds:.4f} | {result['records'] / seconds / 1e6:.2f} M | "
            f"{gbs:.2f} | {result['memcpy'] / seconds:.2f} | {result['fresh'] / seconds:.2f} |"
        )

    lines = [
        HEADING,
        "",
        f"{result['records']} records, {size / 1e6:.1f} MB of uncompressed v2 batches "
        "(100-byte values, a short key, one header), in one file; best of "
        f"{result['repeat']}, page cache warm. `read_table` checks CRCs and decodes every "
        "field, default two threads. Bandwidth is the file's bytes over the time; the last "
        "columns are a copy's time over the reader's (1.00 = as fast as copying the bytes): into "
        "a preallocated array, and into a fresh one (new pages, as a reader's output takes).",
        "",
        "| reader | seconds | records/s | GB/s | × memcpy (preallocated) | × numpy copy (fresh) |",
        "|---|---:|---:|---:|---:|---:|",
        row("memcpy of the file's bytes, preallocated (`np.copyto`)", result["memcpy"]),
        row("numpy copy of the file's bytes, fresh (`src.copy()`)", result["fresh"]),
        row("`read_table` (binary, copies)", result["copy"]),
        row("`read_table(binary_view=True)`", result["view"]),
        "",
        f"`binary_view` against the copying path: {result['copy'] / result['view']:.2f}× its "
        "speed. The record decoder still gathers keys and values into its own buffers first "
        "(`runtime/kernels/records.py`); the views are a second pass over the same sections "
        "(`runtime/read/views.py`), after which those buffers are dropped: the table holds 16 "
        "bytes a key and a value and the mapped file, not a copy of the bytes: Arrow memory "
        f"held by the table {result['copy_held'] / 1e6:.1f} MB copying, "
        f"{result['view_held'] / 1e6:.1f} MB with views (the file's pages are the page "
        "cache's, shared). What the option "
        "buys today is memory and sharing, not speed; a decoder flag to skip the gather would "
        "make it cheaper than copying.",
        "",
        f"Machine: {machine}.",
        "",
    ]
    return "\n".join(lines)
