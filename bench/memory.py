"""Memory: what a reading process holds before any data (the floor), what streaming a big
segment adds to it, and what a decompression bomb adds.

Each measurement runs in a fresh process (``_CHILD``) that reads its peak RSS from the
kernel (VmHWM). The floor is the peak after the imports and one read of a small file (the
numba kernels loaded from their cache, Arrow's memory pool and the decoding threads up): a
cost every process pays once, whatever it reads. The data's share is the peak of the big read
minus that floor, in the same process. ``/proc/self/smaps`` says where the floor lives.

    .venv/bin/python bench/run.py --only memory
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import zlib
from pathlib import Path

import cramjam
import inputs
import lz4.frame
import zstandard

from kafka_format.runtime.format.codecs import DEFAULT_MAX_BYTES
from kafka_format.runtime.format.varint import encode_varint
from kafka_format.schemas.record_batch import build_record_batch

HEADING = "## Memory: the floor, a streamed segment, decompression bombs"
GIB = 1 << 30
MIB = 1 << 20

# Peak RSS is the kernel's high-water mark (VmHWM); the stages name what the process has
# done by then. Under Linux getrusage's ru_maxrss keeps a parent's peak across exec: useless.
_CHILD = r"""
import collections, json, os, sys, time

def status(key):
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(key + ":"):
                return int(line.split()[1]) / 1024

def smaps():
    where = collections.Counter()
    name = None
    with open("/proc/self/smaps") as fh:
        for line in fh:
            head = line.split()
            if "-" in head[0] and not head[0].endswith(":"):
                path = head[5] if len(head) > 5 else ""
                name = path.rsplit("/", 1)[-1] if path.startswith("/") else (path or "[anon]")
            elif head[0] == "Rss:":
                where[name] += int(head[1]) / 1024
    return where

stages = {"python": status("VmHWM")}
import numpy, pyarrow
stages["numpy, pyarrow"] = status("VmHWM")
import numba
stages["numba"] = status("VmHWM")
from kafka_format.runtime.read.columnar import iter_arrow_batches
from kafka_format.runtime.model import Report
stages["kafka_format"] = status("VmHWM")
for _ in iter_arrow_batches(sys.argv[1], include_headers=True):
    pass
stages["first read (kernels, pool, threads)"] = status("VmHWM")
where = smaps()
out = {"stages": stages, "smaps": where.most_common(8), "floor": status("VmHWM")}
if len(sys.argv) > 2:
    report = Report()
    start = time.perf_counter()
    n = 0
    limit = int(sys.argv[3]) if len(sys.argv) > 3 else None
    extra = {"max_decompressed_bytes": limit, "errors": "skip", "report": report} if limit else {}
    if os.environ.get("BENCH_LOW_MEMORY"):
        extra["low_memory"] = True
    for batch in iter_arrow_batches(sys.argv[2], include_headers=True, **extra):
        n += batch.num_rows
    out.update(
        records=n,
        seconds=time.perf_counter() - start,
        peak=status("VmHWM"),
        errors=[str(e) for e in report.errors],
    )
print(json.dumps(out))
"""


def _child(*args: str, low_memory: bool = False) -> dict:
    env = {**os.environ, "BENCH_LOW_MEMORY": "1" if low_memory else ""}
    out = subprocess.run(
        [sys.executable, "-c", _CHILD, *args], check=True, capture_output=True, text=True, env=env
    )
    return json.loads(out.stdout)


# --- decompression bombs -------------------------------------------------------------------

#: What a bomb inflates to: four times the limit it is read under.
BOMB_FACTOR = 4


def _pieces(size: int):
    """One record's bytes (a value of ``size`` zeros) in 1 MiB pieces, never held whole."""
    body_tail = encode_varint(size)  # value length, then the value, then no headers
    body = b"\x00" + encode_varint(0) + encode_varint(0) + encode_varint(-1) + body_tail
    yield encode_varint(len(body) + size + 1) + body
    zeros = bytes(MIB)
    left = size
    while left:
        piece = min(left, MIB)
        yield zeros if piece == MIB else bytes(piece)
        left -= piece
    yield encode_varint(0)


def bomb_payload(codec: str, size: int) -> tuple[int, bytes]:
    """A v2 records section of one record of ``size`` zeros, compressed as Kafka's clients
    write ``codec`` (gzip, snappy in xerial framing, lz4 frames, zstd)."""
    if codec == "gzip":
        z = zlib.compressobj(6, zlib.DEFLATED, 31)
        return 1, b"".join([z.compress(p) for p in _pieces(size)] + [z.flush()])
    if codec == "snappy":
        # xerial blocks of 32 KiB, as snappy-java's SnappyOutputStream writes them
        data = b"".join(_pieces(size))  # the generator's memory only; the reader's is measured
        out = [b"\x82SNAPPY\x00" + (1).to_bytes(4, "big") + (1).to_bytes(4, "big")]
        for i in range(0, len(data), 32768):
            block = bytes(cramjam.snappy.compress_raw(data[i : i + 32768]))
            out.append(len(block).to_bytes(4, "big") + block)
        return 2, b"".join(out)
    if codec == "lz4":
        w = lz4.frame.LZ4FrameCompressor(block_linked=False)
        return 3, b"".join([w.begin()] + [w.compress(p) for p in _pieces(size)] + [w.flush()])
    assert codec == "zstd"
    w = zstandard.ZstdCompressor().compressobj()
    return 4, b"".join([w.compress(p) for p in _pieces(size)] + [w.flush()])


def _write_bomb_log(path: Path, codec: str, size: int) -> None:
    """The bomb batch, then a small healthy batch after it (skip mode must reach it)."""
    code, payload = bomb_payload(codec, size)
    bomb = build_record_batch(
        compressed_payload=payload,
        records_count=1,
        codec=code,
        base_timestamp=inputs.TS0,
        max_timestamp=inputs.TS0,
    )
    after = build_record_batch(
        [{"key": b"k", "value": b"after the bomb", "offset_delta": 0, "timestamp_delta": 0}],
        base_offset=1,
        base_timestamp=inputs.TS0,
    )
    path.write_bytes(bomb + after)


# --- the run ----------------------------------------------------------------------------------


def run(segment_bytes: int, log, limit: int = DEFAULT_MAX_BYTES, quick: bool = False) -> dict:
    if quick:  # a smoke run: bombs of 64 MiB, not 1 GiB
        limit = min(limit, 16 * MIB)
    scratch = Path(tempfile.mkdtemp(prefix="kafka-format-bench-"))
    try:
        small = scratch / "small-0" / "00000000000000000000.log"
        small.parent.mkdir()
        small.write_bytes(inputs.v2_batch(0, 1000)[0])  # one batch: the floor holds no data
        big = scratch / "big-0" / "00000000000000000000.log"
        records = inputs.write_segment(big, segment_bytes)
        log(f"  streaming {big.stat().st_size / GIB:.2f} GiB, {records} records")
        floor_only = _child(str(small))
        streamed = _child(str(small), str(big))
        if streamed["records"] != records:
            raise RuntimeError(f"streamed {streamed['records']} records of {records}")
        streamed["bytes"] = big.stat().st_size
        low = _child(str(small), str(big), low_memory=True)
        if low["records"] != records:
            raise RuntimeError(f"low_memory streamed {low['records']} records of {records}")
        big.unlink()
        bombs = {}
        for codec in ("gzip", "snappy", "lz4", "zstd"):
            path = scratch / f"bomb-{codec}-0" / "00000000000000000000.log"
            path.parent.mkdir()
            _write_bomb_log(path, codec, limit * BOMB_FACTOR)
            log(f"  a {codec} bomb: {path.stat().st_size / MIB:.1f} MiB on disk")
            got = _child(str(small), str(path), str(limit))
            if got["records"] != 1 or len(got["errors"]) != 1:
                raise RuntimeError(f"{codec} bomb: {got['records']} records, {got['errors']}")
            got["file_bytes"] = path.stat().st_size
            bombs[codec] = got
            path.unlink()
        return {
            "floor": floor_only,
            "stream": streamed,
            "low": low,
            "bombs": bombs,
            "limit": limit,
            "quick": quick,
        }
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def render(result: dict, machine: str) -> str:
    floor = result["floor"]
    stream = result["stream"]
    stages = floor["stages"]
    lines = [
        HEADING,
        "",
        "Peak RSS (the kernel's high-water mark, VmHWM) of a fresh process, by what it has done "
        "by then. The floor is what any process that reads pays once: Python, numpy and "
        "pyarrow, numba and LLVM, this package, then one read of a file of one batch of 1000 "
        "records (the kernels loaded from numba's cache, Arrow's memory pool, the two decoding "
        "threads).",
        "",
        "| stage | peak RSS MiB | added MiB |",
        "|---|---:|---:|",
    ]
    before = 0.0
    for name, mib in stages.items():
        lines.append(f"| {name} | {mib:.0f} | {mib - before:+.0f} |")
        before = mib
    top = ", ".join(f"{name} {mib:.0f}" for name, mib in floor["smaps"])
    lines += [
        "",
        f"Where the floor lives (`/proc/self/smaps`, resident MiB): {top}. `libllvmlite.so` is "
        "LLVM's code: numba links the cached machine code of each kernel with it when the "
        "kernel is first called, and those are file pages shared with every other process "
        "that maps the library.",
        "",
    ]
    gib = stream["bytes"] / GIB
    share = stream["peak"] - stream["floor"]
    lines += [
        f"Streaming a generated v2 segment of {gib:.2f} GiB ({stream['records']} records, "
        f"`iter_arrow_batches`, headers included) after that first read, in the same process: "
        f"{stream['seconds']:.1f} s, peak RSS {stream['peak']:.0f} MiB, of which "
        f"{stream['floor']:.0f} MiB is the floor and {share:.0f} MiB the data's share (chunks "
        "of frames being decoded, the Arrow batches in flight, the mapped file's pages not "
        "yet given back). Target: 256 MiB peak.",
        "",
        "With `low_memory=True` (chunks of at most 2 MiB and 4 Ki records instead of 16 MiB "
        "and 64 Ki): "
        f"{result['low']['seconds']:.1f} s, peak RSS {result['low']['peak']:.0f} MiB, the data's "
        f"share {result['low']['peak'] - result['low']['floor']:.0f} MiB.",
        "",
        f"Decompression bombs: one v2 batch whose single record inflates to "
        f"{BOMB_FACTOR}× the limit ({BOMB_FACTOR * result['limit'] / MIB:.0f} MiB of zeros), "
        f"read with `max_decompressed_bytes={result['limit']}` "
        f'({result["limit"] / MIB:.0f} MiB) and `errors="skip"`, then the healthy batch '
        "after it. Target: peak at most the limit plus a small constant over the floor.",
        "",
        "| codec | on disk MiB | peak RSS MiB | over the floor MiB | over the floor / limit |",
        "|---|---:|---:|---:|---:|",
    ]
    for codec, got in result["bombs"].items():
        over = got["peak"] - got["floor"]
        lines.append(
            f"| {codec} | {got['file_bytes'] / MIB:.1f} | {got['peak']:.0f} | {over:.0f} | "
            f"{over * MIB / result['limit']:.2f} |"
        )
    lines += ["", f"Machine: {machine}.", ""]
    return "\n".join(lines)
