"""``errors="salvage"``: every intact batch of a damaged log, from every path, the same.

Logs are written by kafka-python (an independent writer), batch by batch, with their byte
ranges known; they are then damaged (a flipped bit in records, a lying length, a zeroed
region, garbage between batches, a middle cut out, the very first byte, two regions at
once). The oracle is the undamaged log read strictly: salvage must give exactly the records
of the batches the damage did not touch, and ``iter_records``, ``read_table`` and
``dump --jsonl --salvage`` must agree on records and on the damage list.
"""

from __future__ import annotations

import io
import json
import os
import resource
import subprocess
import sys
import textwrap
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kafka.record.default_records import DefaultRecordBatchBuilder

from kafka_format.runtime.errors import CrcMismatchError, FramingError, KafkaFormatError
from kafka_format.runtime.format.jsonform import record_json
from kafka_format.runtime.model import Report
from kafka_format.runtime.read.columnar import read_table
from kafka_format.runtime.read.reader import iter_batches, iter_records

CODECS = (0, 1, 0, 2, 0, 3, 0, 4)  # none, gzip, snappy, lz4, zstd (kafka-python's ids)


@dataclass(frozen=True, slots=True)
class Log:
    data: bytes
    #: (start, end) byte range of each batch
    spans: tuple[tuple[int, int], ...]
    #: canonical records of each batch
    records: tuple[tuple[dict, ...], ...]

    def kept(self, touched: set[int]) -> list[dict]:
        return [r for i, rs in enumerate(self.records) if i not in touched for r in rs]


def _batch(base: int, n: int, codec: int) -> bytes:
    builder = DefaultRecordBatchBuilder(2, codec, False, -1, -1, -1, 1 << 30)
    for i in range(n):
        key = None if i % 3 == 2 else f"key-{base + i}".encode()
        value = f"value {base + i} ".encode() * (i % 5 + 1)
        headers = [("h", b"x" * i)] if i % 2 else []
        builder.append(i, 1_700_000_000_000 + base + i, key, value, headers)
    data = bytearray(builder.build())
    data[0:8] = base.to_bytes(8, "big")
    return bytes(data)


def make_log(batches: int = 12, per: int = 5, codecs: tuple[int, ...] = CODECS) -> Log:
    parts, spans, pos, base = [], [], 0, 0
    for b in range(batches):
        n = per + b % 3
        frame = _batch(base, n, codecs[b % len(codecs)])
        parts.append(frame)
        spans.append((pos, pos + len(frame)))
        pos += len(frame)
        base += n
    data = b"".join(parts)
    records = tuple(
        tuple(record_json(r) for r in iter_records(frame)) for frame in parts
    )  # strict: the undamaged batches read alone
    return Log(data, tuple(spans), records)


LOG = make_log()


def touched_by(log: Log, lo: int, hi: int) -> set[int]:
    return {i for i, (a, b) in enumerate(log.spans) if a < hi and lo < b}


def salvaged(data: bytes) -> tuple[list, list[tuple[int | None, str]]]:
    report = Report()
    records = list(iter_records(data, errors="salvage", report=report))
    return records, [(e.position, e.reason) for e in report.errors]


def salvaged_table(data: bytes, **options) -> tuple[list[dict], list[tuple[int | None, str]]]:
    report = Report()
    table = read_table(data, errors="salvage", report=report, include_headers=True, **options)
    return _rows(table), [(e.position, e.reason) for e in report.errors]


def _rows(table) -> list[dict]:
    return [
        {
            "offset": row["offset"],
            "key": row["key"],
            "value": row["value"],
            "headers": [(h["key"], h["value"]) for h in row["headers"] or ()],
        }
        for row in table.to_pylist()
    ]


def _as_rows(records) -> list[dict]:
    return [
        {
            "offset": r.offset,
            "key": r.key,
            "value": r.value,
            "headers": [(h.key, h.value) for h in r.headers],
        }
        for r in records
    ]


def check_all_paths(data: bytes) -> tuple[list[dict], list[tuple[int | None, str]]]:
    """The records (canonical JSON) and damage of iter_records, checked equal to read_table's
    (one thread and two) and returned."""
    records, damage = salvaged(data)
    for threads in (1, 2):
        rows, table_damage = salvaged_table(data, threads=threads)
        assert rows == _as_rows(records)
        assert table_damage == damage
    return [record_json(r) for r in records], damage


def write(data: bytes, tmp_path, name: str = "00000000000000000000.log") -> str:
    path = tmp_path / name
    path.write_bytes(data)
    return str(path)


# --- the damages ------------------------------------------------------------------------------


def test_undamaged_log_reads_alike_in_every_mode():
    expected = LOG.kept(set())
    for errors in ("strict", "skip", "salvage"):
        assert [record_json(r) for r in iter_records(LOG.data, errors=errors)] == expected
    records, damage = check_all_paths(LOG.data)
    assert records == expected and damage == []


def test_flipped_bit_in_records_skips_that_batch_only():
    data = bytearray(LOG.data)
    a, b = LOG.spans[3]
    data[b - 5] ^= 0x10
    records, damage = check_all_paths(bytes(data))
    assert records == LOG.kept({3})
    assert len(damage) == 1 and damage[0][0] == a and "crc" in damage[0][1].lower()
    # skip gives the same here: the frame is whole
    assert [record_json(r) for r in iter_records(bytes(data), errors="skip")] == records


def test_lying_length_mid_segment_keeps_the_batches_after_it():
    data = bytearray(LOG.data)
    a, b = LOG.spans[4]
    data[a + 8 : a + 12] = (1 << 30).to_bytes(4, "big")  # runs past the end
    records, damage = check_all_paths(bytes(data))
    # Only the length lied (the CRC does not cover it): the batch's records and CRC prove
    # where it ends, so its own records are saved too.
    assert records == LOG.kept(set())
    assert [d[0] for d in damage] == [a]
    assert f"records and CRC end at position {b}" in damage[0][1]
    # skip stops there; strict raises exactly the damage salvage reports
    skip = Report()
    assert [record_json(r) for r in iter_records(bytes(data), errors="skip", report=skip)] == [
        r for rs in LOG.records[:4] for r in rs
    ]
    with pytest.raises(FramingError) as raised:
        list(iter_records(bytes(data)))
    assert (raised.value.position, raised.value.reason) == damage[0]
    assert [(e.position, e.reason) for e in skip.errors] == damage


def test_length_lying_within_the_file_resumes_inside_it():
    """A length that fits but spans the next batches: the CRC fails over it, what follows is
    no batch; the batch's own records and CRC prove its real end, so it is delivered and the
    walk goes on after it (never inside it)."""
    data = bytearray(LOG.data)
    a = LOG.spans[2][0]
    c = LOG.spans[4][0] + 30  # into batch 4
    data[a + 8 : a + 12] = (c - a - 12).to_bytes(4, "big")
    records, damage = check_all_paths(bytes(data))
    assert records == LOG.kept(set())
    assert [d[0] for d in damage] == [a]
    assert "stored crc32c" in damage[0][1]  # the CRC over what the length gives: strict's


def test_length_lying_within_over_a_damaged_batch_resumes_inside_it():
    """The same lie over a batch whose records no longer hold its CRC: nothing proves where
    it ends, so the walk resumes at the first whole batch inside the lying frame."""
    data = bytearray(LOG.data)
    a, b = LOG.spans[2]
    c = LOG.spans[4][0] + 30  # into batch 4
    data[a + 8 : a + 12] = (c - a - 12).to_bytes(4, "big")
    data[b - 2] ^= 0x40
    records, damage = check_all_paths(bytes(data))
    assert records == LOG.kept({2})
    assert [d[0] for d in damage] == [a]


def test_zeroed_region():
    data = bytearray(LOG.data)
    lo, hi = LOG.spans[5][0] + 3, LOG.spans[7][0] + 40
    data[lo:hi] = bytes(hi - lo)
    records, damage = check_all_paths(bytes(data))
    assert records == LOG.kept(touched_by(LOG, lo, hi))
    assert damage and all(lo - 3 <= d[0] < hi for d in damage)


def test_garbage_between_batches():
    cut = LOG.spans[6][0]
    garbage = bytes(range(256)) * 3 + b"\xff" * 17
    data = LOG.data[:cut] + garbage + LOG.data[cut:]
    records, damage = check_all_paths(data)
    assert records == LOG.kept(set())
    assert [d[0] for d in damage] == [cut]


def test_truncated_middle():
    """Bytes cut out of the middle: the batch cut short and the one after the cut are lost."""
    lo, hi = LOG.spans[3][0] + 50, LOG.spans[5][0] + 20
    data = LOG.data[:lo] + LOG.data[hi:]
    records, damage = check_all_paths(data)
    assert records == LOG.kept({3, 4, 5})
    assert damage and damage[0][0] == LOG.spans[3][0]


def test_cut_that_leaves_an_intact_batch_inside_a_lying_frame():
    """The second half of batch 3 is cut: its length now spans batch 4 (intact) and part of
    5; salvage still returns batch 4."""
    a, b = LOG.spans[3]
    data = LOG.data[: (a + b) // 2] + LOG.data[b:]
    records, damage = check_all_paths(data)
    assert records == LOG.kept({3})
    assert [d[0] for d in damage] == [a]


def test_damage_at_the_very_first_byte():
    # The base offset is outside every CRC: a broken first byte moves batch 0's offsets only.
    data = b"\x7f" + LOG.data[1:]
    records, damage = check_all_paths(data)
    first = len(LOG.records[0])
    assert records[first:] == LOG.kept({0}) and damage == []
    assert records[0]["offset"] == 0x7F << 56
    data = bytes(20) + LOG.data[20:]  # the first frame's header zeroed: length 0
    records, damage = check_all_paths(data)
    assert records == LOG.kept({0})
    assert [d[0] for d in damage] == [0] and "less than the minimum" in damage[0][1]
    data = bytearray(LOG.data)
    data[16] = 9  # the first batch's magic
    records, damage = check_all_paths(bytes(data))
    assert records == LOG.kept({0})
    assert [d[0] for d in damage] == [0] and "invalid magic 9" in damage[0][1]


def test_two_damaged_regions():
    data = bytearray(LOG.data)
    a1 = LOG.spans[1][0]
    data[a1 + 8 : a1 + 12] = (5).to_bytes(4, "big")  # below 14
    lo, hi = LOG.spans[8][0] + 10, LOG.spans[9][0] + 30
    data[lo:hi] = b"\xee" * (hi - lo)
    records, damage = check_all_paths(bytes(data))
    # batch 1's length alone lied: its records and CRC prove its end, so it is kept
    assert records == LOG.kept({8, 9})
    assert damage[0][0] == a1 and "batch length 5 is broken" in damage[0][1]
    assert len(damage) >= 2 and all(lo - 10 <= d[0] < hi for d in damage[1:])


def test_damage_with_nothing_whole_after_it_ends_the_file():
    data = bytearray(LOG.data)
    a = LOG.spans[-1][0]
    data[a + 16] = 7
    records, damage = check_all_paths(bytes(data))
    assert records == LOG.kept({len(LOG.spans) - 1})
    assert [d[0] for d in damage] == [a]


def test_truncated_tail_stays_a_tail():
    data = LOG.data[:-20]
    report = Report()
    records = [record_json(r) for r in iter_records(data, errors="salvage", report=report)]
    assert records == LOG.kept({len(LOG.spans) - 1})
    assert report.errors == []
    assert [(t.position, t.size) for t in report.truncated] == [
        (LOG.spans[-1][0], LOG.spans[-1][1] - LOG.spans[-1][0] - 20)
    ]
    table_report = Report()
    read_table(data, errors="salvage", report=table_report)
    assert [(t.position, t.size) for t in table_report.truncated] == [
        (t.position, t.size) for t in report.truncated
    ]


def test_damaged_batches_are_yielded_with_their_error():
    data = bytearray(LOG.data)
    data[LOG.spans[2][1] - 3] ^= 1
    a = LOG.spans[6][0]
    data[a + 16] = 0x55
    report = Report()
    batches = list(iter_batches(bytes(data), errors="salvage", report=report))
    damaged = [b.position for b in batches if b.error is not None]
    assert damaged == [LOG.spans[2][0]]
    assert isinstance(batches[2].error, CrcMismatchError)
    assert [b.position for b in batches if b.error is None] == [
        s[0] for i, s in enumerate(LOG.spans) if i not in (2, 6)
    ]
    assert [e.position for e in report.errors] == [LOG.spans[2][0], a]


def test_strict_and_skip_unchanged_on_framing_damage():
    data = bytearray(LOG.data)
    a = LOG.spans[5][0]
    data[a + 16] = 0x55
    with pytest.raises(FramingError):
        list(iter_records(bytes(data)))
    with pytest.raises(FramingError):
        read_table(bytes(data))
    report = Report()
    before = [r for rs in LOG.records[:5] for r in rs]
    assert [record_json(r) for r in iter_records(bytes(data), errors="skip", report=report)] == (
        before
    )
    assert len(report.errors) == 1
    rows = _rows(read_table(bytes(data), errors="skip", include_headers=True))
    assert [r["offset"] for r in rows] == [r["offset"] for r in before]


def test_unknown_errors_value_is_refused():
    with pytest.raises(ValueError, match="salvage"):
        list(iter_records(LOG.data, errors="recover"))
    with pytest.raises(ValueError, match="salvage"):
        read_table(LOG.data, errors="recover")


def test_files_directories_and_streams(tmp_path):
    data = bytearray(LOG.data)
    a = LOG.spans[4][0]
    data[a + 8 : a + 12] = (3).to_bytes(4, "big")
    part = tmp_path / "t-0"
    part.mkdir()
    path = write(bytes(data), part)
    expected = LOG.kept(set())  # only the length lied: the batch's CRC proves it whole
    for source in (path, str(part), io.BytesIO(bytes(data))):
        if isinstance(source, io.BytesIO):
            source.seek(0)
        assert [record_json(r) for r in iter_records(source, errors="salvage")] == expected
    report = Report()
    table = read_table(str(part), errors="salvage", report=report)
    assert table.column("offset").to_pylist() == [r["offset"] for r in expected]
    assert [(e.file, e.position) for e in report.errors] == [(path, a)]
    # a stream that cannot be mapped (a pipe) is read into memory, then salvaged alike
    read, written = os.pipe()
    with os.fdopen(written, "wb") as sink:
        sink.write(bytes(data))
    with os.fdopen(read, "rb") as pipe:
        table = read_table(pipe, errors="salvage")
    assert table.column("offset").to_pylist() == [r["offset"] for r in expected]


def test_read_committed_salvages_too():
    data = bytearray(LOG.data)
    data[LOG.spans[3][0] + 16] = 0x44
    expected = LOG.kept({3})
    got = [
        record_json(r)
        for r in iter_records(bytes(data), errors="salvage", isolation="read_committed")
    ]
    assert got == expected
    table = read_table(bytes(data), errors="salvage", isolation="read_committed")
    assert table.column("offset").to_pylist() == [r["offset"] for r in expected]


def test_dump_jsonl_salvage_agrees(tmp_path):
    from kafka_format.runtime.cli import main

    data = bytearray(LOG.data)
    a = LOG.spans[2][0]
    data[a + 8 : a + 12] = (1 << 30).to_bytes(4, "big")
    lo, hi = LOG.spans[7][0] + 20, LOG.spans[7][0] + 60
    data[lo:hi] = bytes(hi - lo)
    path = write(bytes(data), tmp_path)
    records, damage = check_all_paths(bytes(data))
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        status = main(["dump", "--jsonl", "--canonical", "--salvage", "-q", path])
    lines = [json.loads(line) for line in out.getvalue().splitlines()]
    assert lines == records
    errors = [line for line in err.getvalue().splitlines() if line.startswith("error: ")]
    assert errors == [f"error: {path} @{p}" + _base(bytes(data), p) + f": {c}" for p, c in damage]
    assert status != 0
    # without --salvage, dump stops at the first framing damage
    out = io.StringIO()
    with redirect_stdout(out), redirect_stderr(io.StringIO()):
        main(["dump", "--jsonl", "--canonical", "-q", path])
    assert len(out.getvalue().splitlines()) == len([r for rs in LOG.records[:2] for r in rs])


def _base(data: bytes, pos: int) -> str:
    return f" (base offset {int.from_bytes(data[pos : pos + 8], 'big', signed=True)})"


def test_dump_text_salvage_prints_batches_after_damage(tmp_path):
    from kafka_format.runtime.cli import main

    data = bytearray(LOG.data)
    a = LOG.spans[5][0]
    data[a + 16] = 0x66
    path = write(bytes(data), tmp_path)
    out = io.StringIO()
    with redirect_stdout(out), redirect_stderr(io.StringIO()):
        main(["dump", "--salvage", "-q", path])
    positions = [
        int(line.split(" position: ")[1].split()[0])
        for line in out.getvalue().splitlines()
        if line.startswith("baseOffset:")
    ]
    assert positions == [s[0] for i, s in enumerate(LOG.spans) if i != 5]


# --- random damage ----------------------------------------------------------------------------

HYPOTHESIS = settings(
    max_examples=int(os.environ.get("KF_FUZZ_EXAMPLES", "150")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
SMALL_LOG = make_log(batches=10, per=3)


@HYPOTHESIS
@given(
    start=st.integers(0, len(SMALL_LOG.data) - 1),
    size=st.integers(1, 300),
    kind=st.sampled_from(["zeros", "random", "ff"]),
    noise=st.binary(min_size=300, max_size=300),
)
def test_random_damage_keeps_every_untouched_batch(start, size, kind, noise):
    hi = min(len(SMALL_LOG.data), start + size)
    fill = {"zeros": bytes(300), "random": noise, "ff": b"\xff" * 300}[kind][: hi - start]
    data = SMALL_LOG.data[:start] + fill + SMALL_LOG.data[hi:]
    if data == SMALL_LOG.data:
        return
    records, _ = check_all_paths(data)
    touched = touched_by(SMALL_LOG, start, hi)
    untouched = [r for i, rs in enumerate(SMALL_LOG.records) if i not in touched for r in rs]
    # A subset of the original's records; the base offset is outside every CRC, so where the
    # damage reached one, a batch keeps its records under other offsets.
    everything = [_but_offset(r) for rs in SMALL_LOG.records for r in rs]
    assert all(_but_offset(r) in everything for r in records)
    assert len(records) == len({json.dumps(_but_offset(r), sort_keys=True) for r in records})
    for r in untouched:
        assert r in records


def _but_offset(record: dict) -> dict:
    return {k: v for k, v in record.items() if k != "offset"}


# --- memory -----------------------------------------------------------------------------------


def test_lying_lengths_and_counts_reserve_no_memory(tmp_path):
    """Under a capped address space, lies everywhere (lengths of 2 GiB that fit no file, a
    record count of 2^31-1 with the CRC recomputed) are read past without allocating."""
    from crc32c import crc32c

    data = bytearray(LOG.data)
    for i in (1, 5, 9):
        a = LOG.spans[i][0]
        data[a + 8 : a + 12] = (0x7FFFFFF0).to_bytes(4, "big")
    a, b = LOG.spans[3]
    data[a + 57 : a + 61] = (0x7FFFFFFF).to_bytes(4, "big")
    data[a + 17 : a + 21] = crc32c(bytes(data[a + 21 : b])).to_bytes(4, "big")
    path = write(bytes(data), tmp_path)
    # the lying lengths alone: those batches' records and CRCs prove their ends
    expected = len(LOG.kept({3}))
    script = textwrap.dedent(
        f"""
        import resource
        from kafka_format.runtime.model import Report
        from kafka_format.runtime.read.columnar import read_table
        from kafka_format.runtime.read.reader import iter_records
        soft = resource.getrlimit(resource.RLIMIT_AS)[0]
        import numba  # warm the imports before the cap
        resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))
        r = Report()
        n = sum(1 for _ in iter_records({path!r}, errors="salvage", report=r))
        t = read_table({path!r}, errors="salvage", threads=1)
        print(n, t.num_rows, len(r.errors))
        """
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    n, rows, errors = map(int, done.stdout.split())
    assert n == rows == expected and errors == 4
    assert resource.getrlimit(resource.RLIMIT_AS)  # the test process itself is not capped


def test_salvage_walk_sizes_nothing_from_the_bytes():
    """The walk's only reads are judge's and resync's (checked lengths) and CRCs over whole
    frames: a 64 MiB file of one lying length and zeros reads in bounded memory and time."""
    import tracemalloc

    data = bytearray(64 << 20)
    data[0:17] = (0).to_bytes(8, "big") + (0x7FFFFFFF).to_bytes(4, "big") + bytes(4) + b"\x02"
    data[-len(LOG.data) :] = LOG.data
    data = bytes(data)
    tracemalloc.start()
    report = Report()
    try:
        n = sum(1 for _ in iter_records(data, errors="salvage", report=report))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert n == len(LOG.kept(set()))
    assert len(report.errors) == 1 and report.errors[0].position == 0
    # resync filters 1 MiB of candidates at a time (~40 MiB of numpy temporaries on zeros,
    # whatever the file's size); a buffer sized from the length would be 2 GiB.
    assert peak < 48 << 20


def test_a_file_whose_every_crc_fails_reads_in_linear_time():
    """Every batch's CRC broken (so no batch follows cleanly): each frame is searched for a
    batch inside it once, not the rest of the file per frame."""
    import time

    frames = []
    # 12000 frames: linear takes ~2 s, the quadratic search it replaced ~160 s; the bound
    # below tells the two apart with a wide margin (speed itself is make bench's business).
    count = 12000
    for b in range(count):
        frame = bytearray(_batch(b * 3, 3, 0))
        frame[17] ^= 0xFF  # the stored CRC-32C
        frames.append(bytes(frame))
    data = b"".join(frames)
    began = time.monotonic()
    report = Report()
    assert list(iter_records(data, errors="salvage", report=report)) == []
    table_report = Report()
    assert read_table(data, errors="salvage", report=table_report).num_rows == 0
    assert time.monotonic() - began < 60
    assert len(report.errors) == len(table_report.errors) == count
    assert all(isinstance(e, CrcMismatchError) for e in report.errors)


def test_errors_are_kafka_format_errors():
    data = bytearray(LOG.data)
    data[LOG.spans[0][0] + 8 : LOG.spans[0][0] + 12] = (2).to_bytes(4, "big")
    report = Report()
    list(iter_records(bytes(data), errors="salvage", report=report))
    assert report.errors and all(isinstance(e, KafkaFormatError) for e in report.errors)


# --- verify -----------------------------------------------------------------------------------


def test_verify_reports_every_damaged_region_and_checks_what_follows(tmp_path):
    from kafka_format.runtime.cli import main

    data = bytearray(LOG.data)
    data[LOG.spans[2][0] + 16] = 9  # framing: invalid magic
    data[LOG.spans[5][1] - 3] ^= 1  # CRC, after the first framing damage
    a8 = LOG.spans[8][0]
    data[a8 + 8 : a8 + 12] = (1 << 30).to_bytes(4, "big")  # framing: broken length
    path = write(bytes(data), tmp_path)
    out = io.StringIO()
    with redirect_stdout(out), redirect_stderr(io.StringIO()):
        status = main(["verify", "--json", path])
    assert status == 1  # as before: damage found
    found = json.loads(out.getvalue())["files"][0]
    errors = [(p["position"], p["check"]) for p in found["problems"] if p["severity"] == "error"]
    assert errors == [(LOG.spans[2][0], "framing"), (LOG.spans[5][0], "crc"), (a8, "framing")]
    # the same damage list as the salvaging readers
    _, damage = check_all_paths(bytes(data))
    assert [d[0] for d in damage] == [e[0] for e in errors]
    # every batch the walk reached is counted, and the records of the intact ones
    # (batch 8's length alone lies: its records and CRC prove its end, so it is read too)
    assert found["counts"]["batches"] == len(LOG.spans) - 1
    assert found["counts"]["records"] == len(LOG.kept({2, 5}))


# --- the corpus: bytes real brokers and clients wrote ----------------------------------------


def _records_and_damage(data: bytes):
    """(records as canonical JSON, damage) of iter_records, checked equal to read_table's."""
    report = Report()
    records = list(iter_records(data, errors="salvage", report=report))
    damage = [(e.position, e.reason) for e in report.errors]
    table_report = Report()
    table = read_table(data, errors="salvage", report=table_report, include_headers=True)
    assert _rows(table) == _as_rows(records)
    assert [(e.position, e.reason) for e in table_report.errors] == damage
    return [record_json(r) for r in records], damage


def test_corpus_sets_salvage_alike_on_every_path(corpus_set):
    """Valid sets: salvage reads what strict reads. Damaged sets: both paths agree, and keep
    at least what skip keeps."""
    data = corpus_set.data()
    records, damage = _records_and_damage(data)
    if corpus_set.crc_valid:
        assert records == corpus_set.expected() and damage == []
        return
    skip = [record_json(r) for r in iter_records(data, errors="skip")]
    assert all(r in records for r in skip)


def test_corpus_sets_with_a_zeroed_middle(corpus_set):
    """Forty zero bytes in the middle of each set (v0/v1 wrappers, every codec, control
    batches): both paths agree, and every record they give is one the set holds."""
    data = bytearray(corpus_set.data())
    if len(data) < 200:
        pytest.skip("too small to damage in the middle")
    mid = len(data) // 2
    data[mid : mid + 40] = bytes(40)
    records, _ = _records_and_damage(bytes(data))
    expected = [_but_offset(r) for r in corpus_set.expected()]
    if corpus_set.crc_valid:
        assert all(_but_offset(r) in expected for r in records)


@pytest.mark.parametrize("bounds", [(10, 50), (0, 30), (33, None)])
def test_a_range_over_a_damaged_log_is_the_salvaged_records_in_it(tmp_path, bounds):
    # A range and salvage together: the range's records of the salvaged read, on both paths.
    start, end = bounds
    data = bytearray(LOG.data)
    lo, hi = LOG.spans[3][0] + 5, LOG.spans[4][1] - 3
    data[lo:hi] = bytes(hi - lo)
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(data)
    full = [r.offset for r in iter_records(str(path), errors="salvage")]
    want = [o for o in full if o >= start and (end is None or o < end)]
    assert len(want) < len(full)
    got = [
        r.offset
        for r in iter_records(str(path), errors="salvage", start_offset=start, end_offset=end)
    ]
    table = read_table(str(path), errors="salvage", start_offset=start, end_offset=end)
    assert got == want
    assert table.column("offset").to_pylist() == want
