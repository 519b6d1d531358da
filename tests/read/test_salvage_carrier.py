"""Salvage never delivers a record from inside another batch.

A record value may hold any bytes, the bytes of a whole CRC-valid batch included. When the
length field of the batch carrying such a value breaks (it is not covered by the CRC), the
embedded batch is the first whole batch after the damage: a walk that resumed there would
deliver records that never existed in the log. The carrier's own records and CRC prove where
it ends (``format/extent.py``): the walk delivers the carrier, its length repaired, and goes on
after it. Every salvaging path must agree on that: ``iter_records``, ``read_table`` (one and two
threads), ``dump --jsonl --salvage`` and ``recover --salvage`` (read back). The batches are
kafka-python's (an independent writer); the oracle is the undamaged log read strictly.
"""

from __future__ import annotations

import contextlib
import io
import json
import struct

import pytest
from crc32c import crc32c
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
EMBEDDED_BASE = 1_000_000  # offsets no batch of the log has


def _batch(base: int, n: int, codec: int = 0, values: list[bytes] | None = None) -> bytes:
    builder = DefaultRecordBatchBuilder(2, codec, False, -1, -1, -1, 1 << 30)
    for i in range(n):
        value = values[i] if values else f"value {base + i}".encode()
        builder.append(i, T0 + base + i, f"k{base + i}".encode(), value, [])
    out = bytearray(builder.build())
    struct.pack_into(">q", out, 0, base)
    return bytes(out)


def _log(codec: int, carrier_at: int = 2, batches: int = 5) -> tuple[bytes, list[int], int]:
    """A log whose batch ``carrier_at`` holds a whole batch in a record value: its bytes, the
    batches' starts (and the end), and the data records it holds."""
    embedded = _batch(EMBEDDED_BASE, 3)
    frames, base = [], 0
    for b in range(batches):
        if b == carrier_at:
            frames.append(_batch(base, 3, codec, [b"before", embedded, b"after"]))
            base += 3
        else:
            frames.append(_batch(base, 2 + b % 3, (0, 1, 3, 4, 2)[b % 5]))
            base += 2 + b % 3
    starts = [sum(len(f) for f in frames[:i]) for i in range(len(frames) + 1)]
    return b"".join(frames), starts, base


def _offsets_read_table(data: bytes, threads: int) -> tuple[list[int], list]:
    report = Report()
    table = read_table(data, errors="salvage", report=report, threads=threads)
    return table.column("offset").to_pylist(), [(e.position, e.reason) for e in report.errors]


def _offsets_iter(data: bytes) -> tuple[list[int], list]:
    report = Report()
    offsets = [r.offset for r in iter_records(data, errors="salvage", report=report)]
    return offsets, [(e.position, e.reason) for e in report.errors]


def _offsets_dump(path) -> list[int]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        main(["dump", "--jsonl", "--salvage", str(path)])
    return [json.loads(line)["offset"] for line in out.getvalue().splitlines()]


def _offsets_recovered(src, dest) -> list[int]:
    recover(src, dest, salvage=True)
    logs = sorted(dest.rglob("*.log"))
    return [o for log in logs for o in read_table(str(log)).column("offset").to_pylist()]


def all_paths(data: bytes, tmp_path) -> list[int]:
    """The offsets every salvaging path gives, checked equal, and the damage the readers
    report, checked equal."""
    offsets, damage = _offsets_iter(data)
    for threads in (1, 2):
        assert _offsets_read_table(data, threads) == (offsets, damage)
    src = tmp_path / "src" / "t-0"
    src.mkdir(parents=True, exist_ok=True)
    log = src / "00000000000000000000.log"
    log.write_bytes(data)
    assert _offsets_dump(log) == offsets
    dest = tmp_path / "dest"
    assert _offsets_recovered(src, dest) == offsets
    return offsets


@pytest.mark.parametrize("codec", [0, 1, 2, 3, 4], ids=["none", "gzip", "snappy", "lz4", "zstd"])
@pytest.mark.parametrize("lie", ["past the end", "too short", "a little long"])
def test_a_broken_length_keeps_the_carrier_and_never_its_value(tmp_path, codec, lie):
    data, starts, total = _log(codec)
    at, end = starts[2], starts[3]
    length = {"past the end": 1 << 28, "too short": 40, "a little long": end - at - 12 + 29}[lie]
    broken = bytearray(data)
    struct.pack_into(">i", broken, at + 8, length)
    offsets = all_paths(bytes(broken), tmp_path)
    assert offsets == list(range(total))  # every record of the log, the carrier's included
    _, damage = _offsets_iter(bytes(broken))
    assert [d[0] for d in damage] == [at]
    if lie == "past the end":
        assert f"records and CRC end at position {end}" in damage[0][1]
    else:  # a length that fits: the verdict on what it gives (CRC, header), as strict's
        with pytest.raises(KafkaFormatError) as strict:
            list(iter_records(bytes(broken)))
        assert (strict.value.position, strict.value.reason) == damage[0]


@pytest.mark.parametrize("codec", [0, 3])
def test_a_broken_length_on_the_last_batch_is_no_truncated_tail(tmp_path, codec):
    data, starts, total = _log(codec, carrier_at=4)
    broken = bytearray(data)
    struct.pack_into(">i", broken, starts[4] + 8, 1 << 20)
    assert all_paths(bytes(broken), tmp_path) == list(range(total))


def test_a_last_carrier_whose_crc_fails_gives_nothing_from_inside_it(tmp_path):
    """The issue's second case: the carrier is the last batch and its CRC fails. Its length
    is true (the end of the file follows), so the walk ends with it: ``recover`` used to
    resynchronise inside it and keep the embedded batch."""
    data, starts, total = _log(0, carrier_at=4)
    damaged = bytearray(data)
    damaged[starts[5] - 1] ^= 0x01
    offsets = all_paths(bytes(damaged), tmp_path)
    assert offsets == list(range(total - 3))


def test_a_carrier_whose_length_and_crc_both_fail_never_gives_a_record_twice(tmp_path):
    """Nothing proves the carrier's end: the walk may resume inside it, but what it keeps is
    the same on every path."""
    data, starts, _ = _log(0)
    damaged = bytearray(data)
    struct.pack_into(">i", damaged, starts[2] + 8, 1 << 20)
    damaged[starts[3] - 1] ^= 0x01
    offsets = all_paths(bytes(damaged), tmp_path)
    assert len(offsets) == len(set(offsets))


@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    codec=st.sampled_from([0, 1, 2, 3, 4]),
    carrier_at=st.integers(0, 4),
    length=st.one_of(st.integers(14, 600), st.integers(600, 1 << 30)),
    flip=st.one_of(st.none(), st.integers(22, 10_000)),
)
def test_no_record_comes_from_inside_another_batch(
    tmp_path_factory, codec, carrier_at, length, flip
):
    data, starts, total = _log(codec, carrier_at)
    at, end = starts[carrier_at], starts[carrier_at + 1]
    damaged = bytearray(data)
    struct.pack_into(">i", damaged, at + 8, length)
    if flip is not None:
        damaged[at + flip % (end - at - 21) + 21] ^= 0x04  # inside the CRC's range
    tmp = tmp_path_factory.mktemp("carrier")
    offsets = all_paths(bytes(damaged), tmp)
    assert not [o for o in offsets if o >= EMBEDDED_BASE]
    assert len(offsets) == len(set(offsets))
    intact = crc32c(bytes(damaged[at + 21 : end])) == struct.unpack_from(">I", damaged, at + 17)[0]
    if intact:  # only the length lied: nothing is lost
        assert offsets == list(range(total))
