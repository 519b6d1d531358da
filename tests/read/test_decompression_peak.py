"""Peak memory of decompression: a bomb stops at ``max_decompressed_bytes`` having held about
that much, not twice as much (gzip held twice the bound: zlib was asked for all of it in one
call, and copies a call's output once more at its end).

Measured as the operating system sees it, in a child process: its peak RSS
(``VmHWM``) reset before each read through ``/proc/self/clear_refs`` and compared with
the RSS just before, so that one child measures every case. The bombs are real v2 and v1
batches written by PartitionWriter: one record of zeros, 3 times the bound.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from kafka_format.runtime.format.codecs import Codec
from kafka_format.runtime.write.writer import PartitionWriter
from kafka_format.runtime.write.writer_model import Message

LIMIT = 32 << 20
# What a read may hold beyond the bound: a chunk or two of a MiB in flight, glibc's and
# Arrow's bookkeeping, and for read_table the scan and section tables.
SLACK = 16 << 20
CASES = [
    (Codec.GZIP, 2),
    (Codec.ZSTD, 2),
    (Codec.LZ4, 2),
    (Codec.SNAPPY, 2),
    (Codec.GZIP, 1),
    (Codec.LZ4, 1),
    (Codec.SNAPPY, 0),
]

_CHILD = r"""
import ctypes, gc, json, resource, struct, sys
import pyarrow as pa
import kafka_format as kf
from kafka_format.runtime.format import codecs
from kafka_format.runtime.read.columnar import read_table

def rss():
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * resource.getpagesize()

def peak():
    # VmHWM, not ru_maxrss: after fork and exec, ru_maxrss keeps the parent's peak.
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024

libc = ctypes.CDLL(None)

def measure(fn):
    # Memory freed by the case before goes back to the system first: kept, it would be
    # reused unseen and hide what this case takes.
    gc.collect()
    pa.default_memory_pool().release_unused()
    libc.malloc_trim(0)
    with open("/proc/self/clear_refs", "w") as fh:
        fh.write("5")  # peak RSS := RSS now
    before = rss()
    try:
        result = fn()
        outcome = f"ok {len(result)}"
    except kf.KafkaFormatError as exc:
        outcome = type(exc).__name__
    result = None
    return outcome, peak() - before

def payload(data):
    magic = data[16]
    if magic == 2:
        return struct.unpack_from(">h", data, 21)[0] & 7, magic, data[61:]
    at = (26 if magic == 1 else 18) + 4  # the key is null
    (size,) = struct.unpack_from(">i", data, at)
    return data[17] & 7, magic, data[at + 4 : at + 4 + size]

limit, warm, paths = int(sys.argv[1]), sys.argv[2], sys.argv[3:]
# Kernels and imports first, outside every measurement.
list(kf.iter_records(warm, max_decompressed_bytes=1 << 30))
read_table(warm, max_decompressed_bytes=1 << 30)
out = {}
for path in paths:
    bound = {"max_decompressed_bytes": limit}
    if "under" in path:
        codec, magic, data = payload(open(path, "rb").read())
        for name in ("decompress", "decompress_buffer"):
            fn = getattr(codecs, name)
            out[path + " " + name] = measure(lambda: fn(codec, data, magic=magic, max_bytes=limit))
        data = None
    else:
        out[path + " iter_records"] = measure(lambda: list(kf.iter_records(path, **bound)))
        out[path + " read_table"] = measure(lambda: read_table(path, **bound))
print(json.dumps(out))
"""


def _write(tmp: Path, name: str, codec: Codec, magic: int, size: int) -> str:
    with PartitionWriter(tmp / name, "t", 0, fast=True, segment_bytes=1 << 30) as w:
        w.append([Message(None, bytes(size))], codec=codec, magic=magic)
    return str(tmp / name / "t-0" / "00000000000000000000.log")


@pytest.fixture(scope="module")
def peaks(tmp_path_factory) -> dict[str, tuple[str, int]]:
    if not Path("/proc/self/clear_refs").exists():
        pytest.skip("needs Linux's /proc/self/clear_refs to reset the peak RSS")
    tmp = tmp_path_factory.mktemp("bombs")
    with PartitionWriter(tmp / "warm", "t", 0) as w:
        for codec, magic in CASES:
            w.append([Message(b"k", b"v" * 100)] * 3, codec=codec, magic=magic)
    paths = [str(tmp / "warm" / "t-0" / "00000000000000000000.log")]
    for codec, magic in CASES:
        label = f"{codec.name.lower()}-v{magic}"
        paths.append(_write(tmp, f"bomb-{label}", codec, magic, 3 * LIMIT))
    run = subprocess.run(
        [sys.executable, "-c", _CHILD, str(LIMIT), *paths],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    found = json.loads(run.stdout)
    return {key.split("/")[-3] + " " + key.split()[-1]: tuple(v) for key, v in found.items()}


@pytest.mark.parametrize(("codec", "magic"), CASES, ids=[f"{c.name}-v{m}" for c, m in CASES])
@pytest.mark.parametrize("reader", ["iter_records", "read_table"])
def test_a_bomb_stops_at_the_bound_having_held_it_once(peaks, codec, magic, reader):
    outcome, growth = peaks[f"bomb-{codec.name.lower()}-v{magic} {reader}"]
    assert outcome == "DecompressionLimitError"
    assert growth < LIMIT + SLACK, f"peak RSS grew by {growth >> 20} MiB"
