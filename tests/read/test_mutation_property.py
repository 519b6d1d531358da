"""Mutated logs, whatever the mutation: our own errors only, one verdict, bounded memory.

Seeds are logs PartitionWriter writes (v2 with every codec, v0/v1 messages and wrappers) and,
where ``../shared/corpus`` is present, the first frames of every set real brokers and clients
wrote. Mutations: flipped bytes, overwritten ranges, truncation, inserted garbage, and length
and count fields set to lies, each input with its CRCs recomputed or not (recomputed, the lies
reach the record decoders). For every input:

(a) ``iter_records``, ``read_table`` and ``verify`` raise nothing but KafkaFormatError, in
    strict and skip modes;
(b) ``read_table`` (the numba fast path) gives what ``iter_records`` (the Kaitai reference)
    gives: the same records, and the same errors (class, position, base offset, words) raised
    in strict mode and reported in skip mode;
(c) ``verify`` (in process, through the CLI's ``main``) exits 0 or 1, never with a traceback;
    its error lines each name the file and a byte position, one line a position; what the
    reference raised is among them, and exit 1 goes with it;
(d) in one child process whose address space is capped at its own size after warming up plus
    64 times the largest input (at least 64 MiB: what a read reserves whatever the file, see
    FLOOR), a batch of mutated inputs runs through every path with nothing but our errors: no
    length or count field makes any path reserve memory the file cannot back.
"""

from __future__ import annotations

import contextlib
import functools
import io
import json
import random
import re
import struct
import subprocess
import sys
import tempfile
import zlib
from pathlib import Path

from crc32c import crc32c
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import kafka_format as kf
from kafka_format.runtime.cli import main
from kafka_format.runtime.format.codecs import Codec
from kafka_format.runtime.read.columnar import iter_arrow_batches
from kafka_format.runtime.write.writer import PartitionWriter
from kafka_format.runtime.write.writer_model import Message

LIES = [0x7FFFFFFF, 0x7FFFFFF0, 1 << 24, 100_000, 70, 3, 1, 0, -1, -(2**31)]
SEGMENT = "00000000000000000000.log"

# --- seeds ------------------------------------------------------------------------------------


@functools.cache
def generated_logs() -> tuple[bytes, ...]:
    """Small logs of every codec and magic, two appends each (one of 2, one of 5 records)."""
    cases = [(codec, 2) for codec in Codec]
    cases += [(Codec.NONE, 0), (Codec.GZIP, 0), (Codec.NONE, 1), (Codec.SNAPPY, 1), (Codec.LZ4, 1)]
    logs = []
    with tempfile.TemporaryDirectory() as tmp:
        for k, (codec, magic) in enumerate(cases):
            with PartitionWriter(Path(tmp) / str(k), "t", 0) as writer:
                for n in (2, 5):
                    values = [Message(b"k%d" % i, b"value %d " % i * 4) for i in range(n)]
                    writer.append(values, codec=codec, magic=magic)
            logs.append((Path(tmp) / str(k) / "t-0" / SEGMENT).read_bytes())
    return tuple(logs)


@functools.cache
def corpus_logs(corpus: Path) -> tuple[bytes, ...]:
    """Up to four whole frames of every corpus set, up to 8 KiB of them."""
    out = []
    for path in sorted(corpus.glob("*/*.bin")):
        data, pos, end = path.read_bytes(), 0, 0
        for _ in range(4):
            if len(data) - pos <= 17:
                break
            (length,) = struct.unpack_from(">i", data, pos + 8)
            if length < 14 or pos + 12 + length > len(data) or pos + 12 + length > 8192:
                break
            pos = end = pos + 12 + length
        if end:
            out.append(data[:end])
    return tuple(out)


# --- mutations --------------------------------------------------------------------------------


def _fields(data: bytes) -> list[int]:
    """Where each whole frame keeps its length and, by magic, its record count (v2) or key
    length (v0/v1): the fields whose lies reach the readers' allocations."""
    out, pos = [], 0
    while len(data) - pos > 17:
        (length,) = struct.unpack_from(">i", data, pos + 8)
        out.append(pos + 8)
        magic = data[pos + 16]
        out.append(pos + (57 if magic == 2 else 18 if magic == 0 else 26))
        if length < 14:
            break
        pos += 12 + length
    return [p for p in out if p + 4 <= len(data)]


def fix_crcs(data: bytearray) -> None:
    """Recompute the CRC of every whole frame, so that a lie reaches the decoders."""
    pos = 0
    while len(data) - pos > 17:
        (length,) = struct.unpack_from(">i", data, pos + 8)
        end = pos + 12 + length
        if length < 14 or end > len(data):
            return
        if data[pos + 16] == 2 and length >= 9:
            struct.pack_into(">I", data, pos + 17, crc32c(bytes(data[pos + 21 : end])))
        elif data[pos + 16] in (0, 1):
            struct.pack_into(">I", data, pos + 12, zlib.crc32(bytes(data[pos + 16 : end])))
        pos = end


def mutate(seed: bytes, ops: list[tuple[str, int, int, int]], fix: bool) -> bytes:
    """``seed`` with ``ops`` applied in turn; each op's numbers are taken modulo what fits."""
    data = bytearray(seed)
    for kind, a, b, c in ops:
        if not data:
            break
        at = a % len(data)
        if kind == "flip":
            data[at] ^= 1 << (b % 8)
        elif kind == "overwrite":
            size = 1 + b % 16
            data[at : at + size] = random.Random(c).randbytes(min(size, len(data) - at))
        elif kind == "truncate":
            del data[at:]
        elif kind == "insert":
            data[at:at] = random.Random(c).randbytes(1 + b % 64)
        elif kind == "lie":
            fields = _fields(bytes(data))
            if fields:
                struct.pack_into(">i", data, fields[b % len(fields)], LIES[c % len(LIES)])
    if fix:
        fix_crcs(data)
    return bytes(data)


KINDS = ["flip", "overwrite", "truncate", "insert", "lie", "lie"]
_OPS = st.lists(
    st.tuples(
        st.sampled_from(KINDS),
        st.integers(0, 1 << 16),
        st.integers(0, 1 << 10),
        st.integers(0, 1 << 10),
    ),
    min_size=1,
    max_size=3,
)


# --- the readers ------------------------------------------------------------------------------


def _where(exc: kf.KafkaFormatError) -> tuple:
    return type(exc).__name__, exc.position, exc.base_offset, exc.reason


def reference(path: str, strict: bool) -> tuple[list, tuple | None, list]:
    report = kf.Report()
    rows, error = [], None
    try:
        for r in kf.iter_records(
            path,
            errors="strict" if strict else "skip",
            report=report,
        ):
            rows.append((r.offset, r.key, r.value))
    except kf.KafkaFormatError as exc:
        error = _where(exc)
    return rows, error, [_where(e) for e in report.errors]


def fast(path: str, strict: bool) -> tuple[list, tuple | None, list]:
    report = kf.Report()
    rows, error = [], None
    try:
        for batch in iter_arrow_batches(
            path,
            errors="strict" if strict else "skip",
            report=report,
        ):
            # Not the timestamps: Python's datetime cannot hold every int64 microsecond.
            d = batch.select(["offset", "key", "value"]).to_pydict()
            rows += list(zip(d["offset"], d["key"], d["value"], strict=True))
    except kf.KafkaFormatError as exc:
        error = _where(exc)
    return rows, error, [_where(e) for e in report.errors]


_ERROR_LINE = re.compile(r"^error: (?P<file>.+?) @(?P<pos>\d+)(?: \(base offset -?\d+\))?: (.*)$")


def verify(path: str) -> tuple[int, list[str], str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(["verify", path])
    text = out.getvalue() + err.getvalue()
    return status, [line for line in text.splitlines() if line.startswith("error: ")], text


def check(data: bytes, directory: Path) -> None:
    """(a), (b) and (c) for one input."""
    path = directory / SEGMENT
    path.write_bytes(data)
    name = str(path)
    for strict in (True, False):
        want = reference(name, strict)
        got = fast(name, strict)
        assert got == want, f"strict={strict}: read_table {got[1:]} != iter_records {want[1:]}"
    status, lines, text = verify(name)
    assert status in (0, 1) and "Traceback" not in text, text
    positions = []
    for line in lines:
        found = _ERROR_LINE.match(line)
        assert found, line
        if found["file"] == name:
            positions.append(int(found["pos"]))
    assert len(positions) == len(set(positions)), text  # one line a damaged place
    _, error, _ = reference(name, True)
    if error is not None:
        assert status == 1, text
        _, position, _base, reason = error
        assert any(f"{name} @{position}" in line and reason in line for line in lines), (
            error,
            text,
        )


# --- the property -----------------------------------------------------------------------------

PROPERTY = settings(
    max_examples=120,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@PROPERTY
@given(st.data(), _OPS, st.booleans())
def test_mutated_generated_logs(data, ops, fix):
    seed = data.draw(st.sampled_from(generated_logs()))
    with tempfile.TemporaryDirectory() as tmp:
        check(mutate(seed, ops, fix), Path(tmp))


def test_mutated_corpus_logs(corpus_dir):
    seeds = corpus_logs(corpus_dir)
    assert seeds, corpus_dir

    @settings(PROPERTY, max_examples=80)
    @given(st.sampled_from(seeds), _OPS, st.booleans())
    def prop(seed, ops, fix):
        with tempfile.TemporaryDirectory() as tmp:
            check(mutate(seed, ops, fix), Path(tmp))

    prop()


# --- (d): memory, under a capped address space ------------------------------------------------

_CHILD = r"""
import contextlib, io, json, resource, sys, traceback
from pathlib import Path
import kafka_format as kf
from kafka_format.runtime.cli import main
from kafka_format.runtime.read.columnar import read_table

def vm():
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024

def every_path(path):
    for errors in ("strict", "skip"):
        with contextlib.suppress(kf.KafkaFormatError):
            for _ in kf.iter_records(path, errors=errors):
                pass
        with contextlib.suppress(kf.KafkaFormatError):
            read_table(path, errors=errors)
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        status = main(["verify", path])
    if status not in (0, 1) or "Traceback" in out.getvalue():
        raise AssertionError(f"verify: {status} {out.getvalue()[-500:]}")

inputs = [Path(p) for p in json.loads(Path(sys.argv[1]).read_text())]
for _ in range(2):  # warm: numba's kernels, Arrow's pool, the CLI's imports
    every_path(str(inputs[0]))
baseline = vm()
resource.setrlimit(resource.RLIMIT_AS, (baseline + int(sys.argv[2]), resource.RLIM_INFINITY))
problems = []
for path in inputs[1:]:
    try:
        every_path(str(path))
    except BaseException as exc:
        problems.append([path.name, f"{type(exc).__name__}: {exc}"[:300]])
print(json.dumps({"baseline": baseline, "problems": problems}))
"""

#: RLIMIT_AS headroom: 64 times the largest input, and no less than what a read reserves
#: whatever the file (measured: 32 MiB fails; the fast path's frame table of 6 MiB, 8 MiB of
#: stack a worker thread, the allocators' arenas). A lie believed costs gigabytes: a count of
#: 2^31-1 records would ask for 16 GiB of offsets alone.
FACTOR = 64
FLOOR = 64 << 20


def _batch_of_inputs(seeds: tuple[bytes, ...], count: int, rng: random.Random) -> list[bytes]:
    inputs = []
    for _ in range(count):
        ops = [
            (rng.choice(KINDS), rng.randrange(1 << 16), rng.randrange(1 << 10), rng.randrange(1024))
            for _ in range(rng.randint(1, 3))
        ]
        inputs.append(mutate(rng.choice(seeds), ops, rng.random() < 0.7))
    return inputs


def _capped_run(seeds: tuple[bytes, ...], tmp: Path, count: int) -> dict:
    inputs = [seeds[0], *_batch_of_inputs(seeds, count, random.Random(15))]
    paths = []
    for k, data in enumerate(inputs):
        directory = tmp / f"p{k}"
        directory.mkdir()
        (directory / SEGMENT).write_bytes(data)
        paths.append(str(directory / SEGMENT))
    listed = tmp / "inputs.json"
    listed.write_text(json.dumps(paths))
    headroom = max(FACTOR * max(len(d) for d in inputs), FLOOR)
    run = subprocess.run(
        [sys.executable, "-c", _CHILD, str(listed), str(headroom)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    return json.loads(run.stdout.splitlines()[-1])


def test_mutated_logs_under_a_capped_address_space(tmp_path):
    result = _capped_run(generated_logs(), tmp_path, 120)
    assert result["problems"] == []


def test_mutated_corpus_logs_under_a_capped_address_space(corpus_dir, tmp_path):
    result = _capped_run(corpus_logs(corpus_dir), tmp_path, 80)
    assert result["problems"] == []
