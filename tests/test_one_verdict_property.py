"""One verdict for the same bytes, whichever path reads them: a property test over damaged logs.

Hypothesis builds a partition of kafka-python batches (an independent writer; every codec, a
record value that holds the bytes of a whole CRC-valid batch among them) and damages it as
disks and tools do: broken length fields, zeroed and garbage regions, flipped bits, bytes cut
out, truncations at any byte, empty and tiny files. For each, every path must agree:

* strict: ``iter_records`` and ``read_table`` raise the same error at the same byte, or both
  finish; ``verify`` exits 1 with that error first exactly when they raise, else 0 (a
  truncated tail is a warning, as for Kafka);
* skip: ``iter_records``, ``read_table`` and ``dump --jsonl`` (which reports damage and goes
  on, exiting as ``verify`` does) keep the same records;
* salvage: ``iter_records``, ``read_table``, ``dump --jsonl --salvage`` and ``recover
  --salvage`` (read back) keep the same records; no record comes from inside another batch
  (the embedded batch's offsets never appear), none twice, and every batch the damage did not
  touch is kept.

Spark's modes are held to the same verdicts on fixed cases in ``tests/spark``; partitions of
several segments (a damaged middle segment, record-level damage, lying indexes, FIFOs, Spark's
tasks, Kafka's recovery) in ``tests/test_one_verdict_partition.py``.
"""

from __future__ import annotations

import contextlib
import io
import itertools
import json
import struct
from dataclasses import dataclass

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kafka.record.default_records import DefaultRecordBatchBuilder

from kafka_format.runtime.cli import main
from kafka_format.runtime.errors import KafkaFormatError
from kafka_format.runtime.log.recover import recover
from kafka_format.runtime.model import Report
from kafka_format.runtime.read.columnar import read_table
from kafka_format.runtime.read.reader import iter_records

T0 = 1_700_000_000_000
EMBEDDED = 1 << 40  # the embedded batch's base offset: no batch of the log has it


def _batch(base: int, n: int, codec: int, values: list[bytes] | None = None) -> bytes:
    builder = DefaultRecordBatchBuilder(2, codec, False, -1, -1, -1, 1 << 30)
    for i in range(n):
        value = values[i] if values else f"value {base + i} ".encode() * (1 + i % 3)
        builder.append(i, T0 + base + i, f"k{base + i}".encode(), value, [])
    out = bytearray(builder.build())
    struct.pack_into(">q", out, 0, base)
    return bytes(out)


@dataclass(frozen=True)
class Log:
    data: bytes
    spans: tuple[tuple[int, int], ...]
    offsets: tuple[tuple[int, ...], ...]


@st.composite
def logs(draw) -> Log:
    count = draw(st.integers(1, 7))
    carrier = draw(st.one_of(st.none(), st.integers(0, count - 1)))
    frames, offsets, base = [], [], 0
    for b in range(count):
        codec = draw(st.sampled_from([0, 0, 1, 2, 3, 4]))
        n = draw(st.integers(1, 4))
        values = None
        if b == carrier:
            n = max(n, 2)
            values = [b"x"] * n
            values[draw(st.integers(0, n - 1))] = _batch(EMBEDDED, 2, 0)
        frames.append(_batch(base, n, codec, values))
        offsets.append(tuple(range(base, base + n)))
        base += n + draw(st.integers(0, 2))  # compaction's gaps
    starts = [sum(len(f) for f in frames[:i]) for i in range(count + 1)]
    spans = tuple(itertools.pairwise(starts))
    return Log(b"".join(frames), spans, tuple(offsets))


@st.composite
def damaged(draw) -> tuple[Log, bytes, tuple[int, int], bool]:
    """A log, its damaged bytes, the byte range the damage touched (of the original), and
    whether the bytes after that range are where they were (not cut out or truncated)."""
    log = draw(logs())
    data = bytearray(log.data)
    size = len(data)
    kind = draw(st.sampled_from(["length", "zero", "garbage", "flip", "cut", "truncate", "tiny"]))
    if kind == "length":
        k = draw(st.integers(0, len(log.spans) - 1))
        at = log.spans[k][0]
        struct.pack_into(">i", data, at + 8, draw(st.integers(-5, (1 << 31) - 1)))
        return log, bytes(data), (at + 8, at + 12), True
    if kind == "tiny":
        cut = draw(st.integers(0, min(17, size)))
        return log, bytes(data[:cut]), (cut, size), False
    lo = draw(st.integers(0, size - 1))
    hi = draw(st.integers(lo + 1, min(size, lo + 300)))
    if kind == "zero":
        data[lo:hi] = bytes(hi - lo)
    elif kind == "garbage":
        data[lo:hi] = draw(st.binary(min_size=hi - lo, max_size=hi - lo))
    elif kind == "flip":
        data[lo] ^= 1 << draw(st.integers(0, 7))
        hi = lo + 1
    elif kind == "cut":
        del data[lo:hi]
    else:
        del data[lo:]
        hi = size
    return log, bytes(data), (lo, hi), kind in ("zero", "garbage", "flip")


def _strict(data: str) -> tuple[list[int], tuple[int | None, str] | None, int]:
    """iter_records' records before any error, the error (position, reason), tails seen."""
    report = Report()
    got: list[int] = []
    try:
        for r in iter_records(data, report=report):
            got.append(r.offset)
    except KafkaFormatError as exc:
        return got, (exc.position, exc.reason), len(report.truncated)
    return got, None, len(report.truncated)


def _table(data: str, errors: str) -> list[int] | tuple[int | None, str]:
    try:
        return read_table(data, errors=errors).column("offset").to_pylist()
    except KafkaFormatError as exc:
        return exc.position, exc.reason


def _records(data: str, errors: str) -> list[int]:
    return [r.offset for r in iter_records(data, errors=errors)]


def _cli(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        status = main(list(argv))
    return status, out.getvalue()


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(case=damaged())
def test_every_path_gives_one_verdict(tmp_path_factory, case):
    log, data, (lo, hi), in_place = case
    tmp = tmp_path_factory.mktemp("verdict")
    part = tmp / "t-0"
    part.mkdir()
    path = part / "00000000000000000000.log"
    path.write_bytes(data)

    # Every reader reads the segment by its name: its base offset is part of the verdict.
    data = str(path)
    # strict: the same error at the same byte, or none
    prefix, error, tails = _strict(data)
    table = _table(data, "strict")
    if error is None:
        assert table == prefix
    else:
        assert table == error
    status, text = _cli("verify", "--json", str(path))
    found = json.loads(text)["files"][0]["problems"]
    errors = [(p["position"], p["message"]) for p in found if p["severity"] == "error"]
    assert status == (1 if errors else 0)
    if error is None:
        assert not errors, errors
        assert bool(tails) == any(p["check"] == "truncated-tail" for p in found)
    else:
        assert errors and errors[0][0] == error[0], (errors, error)
    # skip: the same records, and dump's (a dump reports damage and goes on, as skip does)
    skipped = _records(data, "skip")
    assert _table(data, "skip") == skipped
    status, text = _cli("dump", "--jsonl", str(path))
    assert [json.loads(line)["offset"] for line in text.splitlines()] == skipped
    assert status == (0 if error is None else 1)

    # salvage: the same records everywhere; none from inside a batch, none twice, none lost
    salvaged = _records(data, "salvage")
    assert _table(data, "salvage") == salvaged
    status, text = _cli("dump", "--jsonl", "--salvage", str(path))
    assert [json.loads(line)["offset"] for line in text.splitlines()] == salvaged
    dest = tmp / "copy"
    recover(part, dest, salvage=True)
    copied = [
        o for seg in sorted(dest.rglob("*.log")) for o in read_table(str(seg)).column("offset")
    ]
    assert [o.as_py() for o in copied] == salvaged
    # Records are told by their keys (unique in the log): a batch's base offset is covered by
    # no CRC, so a flipped bit there shifts its records' offsets undetectably.
    keys = [r.key for r in iter_records(data, errors="salvage")]
    everything = {b"k%d" % o for batch in log.offsets for o in batch}
    assert set(keys) <= everything, "a record from inside another batch"
    assert len(keys) == len(set(keys)) and len(salvaged) == len(set(salvaged))
    # A damaged base offset (no CRC covers it) that still lies in the segment raises the bar
    # the next batches' offsets must pass (segment_offsets: the broker's index refuses offsets
    # that go back): past it, nothing is promised.
    bar = next((a for a, _ in log.spans if a < hi and lo < a + 8), None)
    for (a, b), offsets in zip(log.spans, log.offsets, strict=True):
        if bar is not None and a > bar:
            break
        if b <= lo or (in_place and a >= hi):
            assert {b"k%d" % o for o in offsets} <= set(keys), f"batch @{a} untouched yet lost"
