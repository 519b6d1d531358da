"""One verdict for a damaged partition of several segments, whichever path reads it.

``tests/test_one_verdict_property.py`` holds every path to one verdict on one damaged segment.
Here hypothesis builds a partition directory of two or three segments (kafka-python's batches,
every codec, a record value holding a whole CRC-valid batch), damages one of them (most often
the middle one) as disks and tools do, or at the record level with the CRC made to hold (record
offset deltas that go back: ``DefaultRecordBatch``'s records as ``LogValidator`` refuses them),
empties it, and makes the side files lie (``.index`` entries that point inside batches, past
the end, or at garbage). For each:

* strict: ``iter_records``, ``read_table`` and Spark's FAILFAST tasks stop at the same byte of
  the same file, or all finish; ``verify`` and ``dump --deep-iteration`` exit 1 exactly then;
* skip: ``iter_records``, ``read_table``, ``dump --jsonl`` and Spark's DROPMALFORMED tasks keep
  the same records;
* salvage: ``iter_records``, ``read_table``, ``dump --jsonl --salvage``, ``recover --salvage``
  (read back) and Spark's SALVAGE tasks keep the same records, none from inside another batch,
  none twice, and every batch of an undamaged segment;
* recover (Kafka's recovery) copies a prefix of the log that verifies clean, all of it before
  the first damage, and exits 1 exactly when the source is damaged;
* a range read through the lying indexes gives the records a whole read gives in that range;
* the damaged segment's bytes through a FIFO (read once) give what its bytes give.

Spark's tasks are read in-process, as the executors read them (``read_split``).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import struct
import threading
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kafka.record.default_records import DefaultRecordBatchBuilder
from kafka.record.util import calc_crc32c, decode_varint

from kafka_format.runtime.cli import main
from kafka_format.runtime.errors import KafkaFormatError
from kafka_format.runtime.log.recover import recover
from kafka_format.runtime.read.columnar import read_table
from kafka_format.runtime.read.reader import iter_records

T0 = 1_700_000_000_000
EMBEDDED = 1 << 40  # the embedded batch's base offset: no batch of the log has it
_HEADER = 61  # a v2 batch's header, in kafka-python's own terms (DefaultRecordBatch)
_CRC_AT, _CRC_FROM = 17, 21  # where kafka-python's builder puts the CRC-32C, and its scope


def _batch(base: int, n: int, codec: int, values: list[bytes] | None = None) -> bytes:
    builder = DefaultRecordBatchBuilder(2, codec, False, -1, -1, -1, 1 << 30)
    for i in range(n):
        value = values[i] if values else f"value {base + i} ".encode() * (1 + i % 3)
        builder.append(i, T0 + base + i, f"k{base + i}".encode(), value, [])
    out = bytearray(builder.build())
    struct.pack_into(">q", out, 0, base)
    return bytes(out)


def _deltas_going_back(batch: bytes) -> bytes:
    """The batch with its second record's offset delta set to 0, the CRC made to hold: what
    only a record-level rule finds."""
    data = bytearray(batch)
    length, pos = decode_varint(data, _HEADER)
    second = pos + length
    _, pos = decode_varint(data, second)  # its length
    pos += 1  # attributes
    _, pos = decode_varint(data, pos)  # timestamp delta
    assert data[pos] == 2  # offset delta 1, zigzag
    data[pos] = 0
    struct.pack_into(">I", data, _CRC_AT, calc_crc32c(bytes(data[_CRC_FROM:])))
    return bytes(data)


@dataclass(frozen=True)
class Segment:
    base: int
    frames: tuple[bytes, ...]
    offsets: tuple[tuple[int, ...], ...]
    codecs: tuple[int, ...]


@st.composite
def partitions(draw) -> list[Segment]:
    count = draw(st.integers(2, 3))
    segments, base = [], 0
    for s in range(count):
        batches = draw(st.integers(1, 4))
        carrier = draw(st.one_of(st.none(), st.integers(0, batches - 1)))
        frames, offsets, codecs = [], [], []
        first = base
        for b in range(batches):
            codec = draw(st.sampled_from([0, 0, 1, 2, 3, 4]))
            n = draw(st.integers(1, 4))
            values = None
            if b == carrier:
                n = max(n, 2)
                values = [b"x"] * n
                values[draw(st.integers(0, n - 1))] = _batch(EMBEDDED, 2, 0)
            frames.append(_batch(base, n, codec, values))
            offsets.append(tuple(range(base, base + n)))
            codecs.append(codec)
            base += n + draw(st.integers(0, 2))  # compaction's gaps
        segments.append(Segment(first, tuple(frames), tuple(offsets), tuple(codecs)))
        del s
    return segments


@dataclass(frozen=True)
class Case:
    segments: list[Segment]
    victim: int  # which segment is damaged
    data: bytes  # its damaged bytes
    touched: tuple[int, int]  # the byte range the damage touched, of its original bytes
    in_place: bool  # whether the bytes after that range are where they were
    lying_index: str | None  # how the victim's .index lies, if it does


@st.composite
def cases(draw) -> Case:
    segments = draw(partitions())
    victim = draw(st.sampled_from([1, 1, 0, len(segments) - 1]))
    seg = segments[victim]
    data = bytearray(b"".join(seg.frames))
    size = len(data)
    starts = [sum(len(f) for f in seg.frames[:i]) for i in range(len(seg.frames))]
    kind = draw(
        st.sampled_from(
            ["length", "zero", "garbage", "flip", "cut", "truncate", "record", "empty", "none"]
        )
    )
    lying = draw(st.sampled_from([None, None, "inside", "past-end", "garbage"]))
    touched, in_place = (size, size), True
    if kind == "length":
        at = starts[draw(st.integers(0, len(starts) - 1))]
        struct.pack_into(">i", data, at + 8, draw(st.integers(-5, (1 << 31) - 1)))
        touched = (at + 8, at + 12)
    elif kind == "record":
        plain = [i for i, f in enumerate(seg.frames) if seg.codecs[i] == 0 and len(f) > _HEADER]
        plain = [i for i in plain if len(seg.offsets[i]) >= 2]
        if plain:
            i = draw(st.sampled_from(plain))
            data[starts[i] : starts[i] + len(seg.frames[i])] = _deltas_going_back(seg.frames[i])
            touched = (starts[i], starts[i] + len(seg.frames[i]))
    elif kind == "empty":
        data, touched, in_place = bytearray(), (0, size), False
    elif kind in ("zero", "garbage", "flip", "cut", "truncate"):
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
        touched, in_place = (lo, hi), kind in ("zero", "garbage", "flip")
    return Case(segments, victim, bytes(data), touched, in_place, lying)


def _name(base: int, suffix: str) -> str:
    return f"{base:020d}.{suffix}"


def _index(seg: Segment, data: bytes, lying: str | None) -> bytes:
    """The segment's ``.index`` as a broker writes it (an entry per batch: its last offset,
    relative, and its position), or lying as asked."""
    out, pos = bytearray(), 0
    for frame, offsets in zip(seg.frames, seg.offsets, strict=True):
        out += struct.pack(">ii", offsets[-1] - seg.base, pos)
        pos += len(frame)
    if lying == "inside" and out:
        struct.pack_into(">i", out, 4, 3)  # the first entry points 3 bytes into a batch
    elif lying == "past-end" and out:
        struct.pack_into(">i", out, len(out) - 4, len(data) + 100)
    elif lying == "garbage":
        out = bytearray(b"\x5a" * len(out))
    return bytes(out)


def _write(case: Case, part: Path) -> None:
    part.mkdir()
    for i, seg in enumerate(case.segments):
        data = case.data if i == case.victim else b"".join(seg.frames)
        (part / _name(seg.base, "log")).write_bytes(data)
        lying = case.lying_index if i == case.victim else None
        (part / _name(seg.base, "index")).write_bytes(_index(seg, data, lying))


def _cli(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        status = main(list(argv))
    return status, out.getvalue()


def _strict(source) -> tuple[list[int], tuple[str | None, int | None, str] | None]:
    got: list[int] = []
    try:
        for r in iter_records(source):
            got.append(r.offset)
    except KafkaFormatError as exc:
        return got, (exc.file, exc.position, exc.reason)
    return got, None


def _table(source, errors: str, **options) -> list[int] | tuple[str | None, int | None, str]:
    try:
        return read_table(source, errors=errors, **options).column("offset").to_pylist()
    except KafkaFormatError as exc:
        return exc.file, exc.position, exc.reason


def _spark(part: Path, mode: str) -> list[int] | tuple[str | None, int | None, str]:
    pytest.importorskip("pyspark")
    from kafka_format.spark_udfs._options import parse_options
    from kafka_format.spark_udfs._planning import Planner
    from kafka_format.spark_udfs._reading import Counters, read_split
    from kafka_format.spark_udfs.datasource import kafka_schema, output_for

    opts = parse_options({"path": str(part), "mode": mode})
    out = output_for(kafka_schema(False), opts)
    rows: list[int] = []
    try:
        for split in Planner(opts).plan():
            for batch in read_split(split, opts, out, Counters()):
                rows.extend(batch.column("offset").to_pylist())
    except KafkaFormatError as exc:
        return exc.file, exc.position, exc.reason
    return rows


def _fifo(path: Path, data: bytes) -> str:
    os.mkfifo(path)

    def write() -> None:
        with contextlib.suppress(BrokenPipeError), open(path, "wb") as fh:
            fh.write(data)

    threading.Thread(target=write, daemon=True).start()
    return str(path)


@settings(
    max_examples=80,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    # The same examples every run: a random draw once found the disagreement the strict
    # xfail below pins down, and CI must not pass or fail by the draw.
    derandomize=True,
)
@given(case=cases())
def test_a_partition_gets_one_verdict(tmp_path_factory, case):
    tmp = tmp_path_factory.mktemp("partition")
    part = tmp / "t-0"
    _write(case, part)
    source = str(part)

    # strict
    prefix, error = _strict(source)
    table = _table(source, "strict")
    assert table == (prefix if error is None else error)
    assert _spark(part, "FAILFAST") == table
    status, text = _cli("verify", "--json", source)
    problems = [p for f in json.loads(text)["files"] for p in f["problems"]]
    errors = [p for p in problems if p["severity"] == "error"]
    log_errors = [p for p in errors if p.get("position") is not None and ".log" in p["file"]]
    if error is None:
        assert not log_errors, log_errors
    else:
        assert log_errors and (log_errors[0]["position"], log_errors[0]["file"]) == (
            error[1],
            error[0],
        )
    assert status == (1 if errors else 0)
    deep, _ = _cli("dump", "--deep-iteration", *sorted(str(p) for p in part.glob("*.log")))
    assert deep == (1 if log_errors else 0)

    # skip
    skipped = [r.offset for r in iter_records(source, errors="skip")]
    assert _table(source, "skip") == skipped == _spark(part, "DROPMALFORMED")
    status, text = _cli("dump", "--jsonl", source)
    assert [json.loads(line)["offset"] for line in text.splitlines()] == skipped

    # salvage
    salvaged = [r.offset for r in iter_records(source, errors="salvage")]
    assert _table(source, "salvage") == salvaged == _spark(part, "SALVAGE")
    status, text = _cli("dump", "--jsonl", "--salvage", source)
    assert [json.loads(line)["offset"] for line in text.splitlines()] == salvaged
    copy = tmp / "salvaged"
    recover(part, copy, salvage=True)
    assert read_table(str(copy)).column("offset").to_pylist() == salvaged
    keys = [r.key for r in iter_records(source, errors="salvage")]
    everything = {b"k%d" % o for seg in case.segments for batch in seg.offsets for o in batch}
    assert set(keys) <= everything, "a record from inside another batch"
    assert len(keys) == len(set(keys))
    for i, seg in enumerate(case.segments):
        if i != case.victim:
            kept = {b"k%d" % o for batch in seg.offsets for o in batch}
            assert kept <= set(keys), f"segment {seg.base} untouched yet lost"

    # Kafka's recovery: a prefix that verifies clean, all of what precedes the first damage
    kafka = tmp / "recovered"
    report = recover(part, kafka)
    recovered = read_table(str(kafka)).column("offset").to_pylist()
    assert recovered == skipped[: len(recovered)]
    if error is not None:
        assert recovered == prefix
    assert _cli("verify", str(kafka))[0] == 0
    assert bool(report.damaged) == (error is not None)

    # ranges through the (possibly lying) indexes: the records a whole read has there
    if error is None:
        for start in sorted({o for o in skipped[:: max(1, len(skipped) // 3)]}):
            ranged = read_table(source, start_offset=start).column("offset").to_pylist()
            assert ranged == [o for o in skipped if o >= start]

    # the damaged segment's bytes through a FIFO: what its bytes give, read once
    for errors_ in ("strict", "skip", "salvage"):
        fifo = _fifo(tmp / f"fifo-{errors_}", case.data)
        assert _unnamed(_table(fifo, errors_)) == _unnamed(_table(case.data, errors_))


def _unnamed(read: list[int] | tuple[str | None, int | None, str]):
    """A read's records, or its error without the file's name (a FIFO's path, or bytes)."""
    return read if isinstance(read, list) else read[1:]


def test_a_batch_reaching_the_next_segment_gets_one_verdict(tmp_path):
    """Found by the property test above: one bit of a batch's base offset (outside its CRC)
    flipped, in a segment that is not the last. A broker's segments hold [base, next base):
    every reader judges the batch by that one rule (``segment_offsets``), as verify does."""
    from kafka_format.runtime.write.writer import Message, PartitionWriter

    part = tmp_path / "t-0"
    with PartitionWriter(tmp_path, "t", 0, segment_bytes=100) as writer:
        for i in range(3):
            writer.append([Message(b"k%d" % i, b"value %d" % i)])
    middle = part / "00000000000000000001.log"
    data = bytearray(middle.read_bytes())
    data[4] ^= 0x01  # base offset 1 -> 16777217: far past the next segment's base, 2
    middle.write_bytes(bytes(data))
    _, error = _strict(str(part))
    status, text = _cli("verify", "--json", str(part))
    assert status == 1
    problems = [p for f in json.loads(text)["files"] for p in f["problems"]]
    log_errors = [p for p in problems if p["severity"] == "error" and ".log" in p["file"]]
    assert log_errors  # verify: "batch offsets 16777217..16777217 reach the next segment"
    assert error is not None and (error[1], error[0]) == (
        log_errors[0]["position"],
        log_errors[0]["file"],
    )
    assert "reach the next segment, which starts at offset 2" in error[2]
    # Every path: the damaged batch dropped, its neighbours kept, the same error in each
    source = str(part)
    assert _table(source, "strict") == error
    assert _spark(part, "FAILFAST") == error
    skipped = [r.offset for r in iter_records(source, errors="skip")]
    assert skipped == [0, 2] == _table(source, "skip") == _spark(part, "DROPMALFORMED")
    salvaged = [r.offset for r in iter_records(source, errors="salvage")]
    assert salvaged == [0, 2] == _table(source, "salvage") == _spark(part, "SALVAGE")
    status, text = _cli("dump", "--jsonl", source)
    assert [json.loads(line)["offset"] for line in text.splitlines()] == skipped
    copy = tmp_path / "salvaged"
    recover(part, copy, salvage=True)
    assert read_table(str(copy)).column("offset").to_pylist() == salvaged
