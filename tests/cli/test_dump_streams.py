"""Pipes read as streams: a FIFO path, ``/dev/stdin`` on a pipe, given to ``iter_batches``,
``iter_records``, ``read_table`` and ``dump`` (text and ``--jsonl``). Their size says 0 and
they cannot be mapped; they have bytes, and an empty log must never be reported for them.

Oracle: the same bytes read from a regular file.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from kafka.record.default_records import DefaultRecordBatchBuilder

from kafka_format.runtime.read.columnar import read_table
from kafka_format.runtime.read.reader import iter_batches, iter_records

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes here")

T0 = 1_700_000_000_000


def _log(batches: int = 3, per: int = 4) -> bytes:
    data = b""
    for b in range(batches):
        builder = DefaultRecordBatchBuilder(2, 0, False, -1, -1, -1, 512 * 1024)
        for i in range(per):
            builder.append(i, T0 + i, b"k", f"v{b}-{i}".encode(), [("h", b"x")])
        raw = bytearray(builder.build())
        raw[0:8] = (b * per).to_bytes(8, "big")  # base offset, as a broker sets it
        data += bytes(raw)
    return data


def _fifo(tmp_path: Path, data: bytes) -> Path:
    """A named pipe a writer thread fills with ``data`` (once a reader opens it)."""
    path = tmp_path / "pipe"
    os.mkfifo(path)

    def write() -> None:
        with open(path, "wb") as fh:
            fh.write(data)

    threading.Thread(target=write, daemon=True).start()
    return path


def test_iter_batches_and_records_read_a_fifo(tmp_path):
    data = _log()
    regular = tmp_path / "00000000000000000000.log"
    regular.write_bytes(data)
    expected = [(b.base_offset, b.position, b.size) for b in iter_batches(regular)]
    assert len(expected) == 3
    got = [(b.base_offset, b.position, b.size) for b in iter_batches(_fifo(tmp_path, data))]
    assert got == expected
    (tmp_path / "pipe").unlink()
    values = [r.value for r in iter_records(_fifo(tmp_path, data))]
    assert values == [r.value for r in iter_records(regular)]
    (tmp_path / "pipe").unlink()
    # read_committed makes two passes: the pipe is read once, into memory, not opened again
    committed = [r.value for r in iter_records(_fifo(tmp_path, data), isolation="read_committed")]
    assert committed == [r.value for r in iter_records(regular, isolation="read_committed")]
    assert len(committed) == 12


@pytest.mark.parametrize("isolation", ["read_uncommitted", "read_committed"])
def test_read_table_reads_a_fifo(tmp_path, isolation):
    data = _log()
    regular = tmp_path / "00000000000000000000.log"
    regular.write_bytes(data)
    table = read_table(_fifo(tmp_path, data), isolation=isolation, include_headers=True)
    expected = read_table(regular, isolation=isolation, include_headers=True)
    assert table.num_rows == 12
    assert table.column("value").to_pylist() == expected.column("value").to_pylist()
    assert table.column("offset").to_pylist() == list(range(12))


def _dump(*args: str | Path, stdin: bytes | None = None) -> subprocess.CompletedProcess:
    proc = subprocess.run(
        [sys.executable, "-m", "kafka_format", "dump", *map(str, args)],
        input=stdin,
        capture_output=True,
        timeout=60,
    )
    assert b"Traceback" not in proc.stderr, proc.stderr
    return proc


def test_dump_jsonl_of_dev_stdin_on_a_pipe(tmp_path):
    data = _log()
    regular = tmp_path / "00000000000000000000.log"
    regular.write_bytes(data)
    expected = _dump("--jsonl", regular)
    # ``cat seg.log | kafka-format dump --jsonl /dev/stdin``: stdin is a pipe, not a file.
    cat = subprocess.Popen(["cat", str(regular)], stdout=subprocess.PIPE)
    proc = subprocess.run(
        [sys.executable, "-m", "kafka_format", "dump", "--jsonl", "/dev/stdin"],
        stdin=cat.stdout,
        capture_output=True,
        timeout=60,
    )
    cat.stdout.close()
    cat.wait()
    assert proc.returncode == 0, proc.stderr
    lines = [json.loads(line) for line in proc.stdout.splitlines()]
    assert len(lines) == 12
    canonical = ("offset", "timestamp", "timestampType", "key", "value", "headers")
    want = [json.loads(line) for line in expected.stdout.splitlines()]
    assert [{k: line[k] for k in canonical} for line in lines] == [
        {k: line[k] for k in canonical} for line in want
    ]


def test_dump_text_of_a_fifo_and_its_truncated_tail(tmp_path):
    data = _log()
    regular = tmp_path / "00000000000000000000.log"
    regular.write_bytes(data + data[:30])
    expected = _dump("--deep-iteration", regular).stdout.decode().splitlines()
    fifo = _fifo(tmp_path, data + data[:30])
    proc = _dump("--deep-iteration", fifo)
    lines = proc.stdout.decode().splitlines()
    assert lines[0] == f"Dumping {fifo}"
    # The batch and record lines are the regular file's, the tail is named after the pipe.
    assert [line for line in lines if line.startswith(("baseOffset", "|"))] == [
        line for line in expected if line.startswith(("baseOffset", "|"))
    ]
    assert sum(line.startswith("baseOffset") for line in lines) == 3
    assert "Found 30 invalid bytes at the end of pipe" in lines
    assert proc.returncode == 0


def test_dump_jsonl_of_an_empty_pipe_is_empty_not_an_error(tmp_path):
    proc = _dump("--jsonl", "/dev/stdin", stdin=b"")
    assert proc.returncode == 0
    assert proc.stdout == b""


def test_a_timestamp_arrow_cannot_hold_in_a_pipe_is_null_and_said(tmp_path):
    """Read from a pipe as from a file: the record whose timestamp lies beyond Arrow's
    microseconds is printed with a null timestamp, one warning line says so, exit 0."""
    from kafka_format.schemas.record_batch import build_record_batch

    data = (
        build_record_batch([{"value": b"before"}], base_offset=0, base_timestamp=T0)
        + build_record_batch([{"value": b"far"}], base_offset=1, base_timestamp=2**62)
        + build_record_batch([{"value": b"after"}], base_offset=2, base_timestamp=T0)
    )
    proc = _dump("--jsonl", _fifo(tmp_path, data))
    rows = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [r["offset"] for r in rows] == [0, 1, 2]
    assert [r["timestamp"] for r in rows] == [T0, None, T0]
    (line,) = proc.stderr.decode().splitlines()
    assert line.startswith("warning: 1 record(s)") and "offset 1" in line
    assert proc.returncode == 0
