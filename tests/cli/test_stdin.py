"""Every command reads a pipe: ``-`` (standard input, a real pipe from a subprocess), a FIFO
(``os.mkfifo``, written by a thread) and ``/dev/stdin``, opened once and read once, with the
verdict, exit status and output it gives the same bytes in a regular file.

Oracle: the same command on the same bytes in a regular file whose name tells no base offset
(``data.bin``; a pipe's name tells none either), its name swapped for the pipe's. Inputs: an
intact segment, one with bytes zeroed in the middle (a CRC error), one with its tail cut
(a truncated tail, a warning), from a generated log dir holding transactions.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import threading
from dataclasses import dataclass
from pathlib import Path

import pytest

from kafka_format.runtime.cli import main
from kafka_format.runtime.write.generate import generate_log_dir

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes here")

#: The name the regular file gets, and the FIFO's (the same length: stats' columns align).
FILE, FIFO = "data.bin", "pipe.bin"
INPUTS = ("intact", "zeroed", "truncated")


@dataclass(frozen=True, slots=True)
class Run:
    status: int
    out: str
    err: str


@pytest.fixture(scope="module")
def logs(tmp_path_factory) -> dict[str, bytes]:
    root = tmp_path_factory.mktemp("stdin") / "logs"
    generate_log_dir(root, seed=5, topics=["orders"], records=300)
    first, second = sorted((root / "orders-0").glob("*.log"))[:2]
    data = first.read_bytes()
    middle = len(data) // 2
    zeroed = data[:middle] + bytes(200) + data[middle + 200 :]
    return {"intact": second.read_bytes(), "zeroed": zeroed, "truncated": data[:-37]}


def _offsets(data: bytes) -> tuple[int, int]:
    """The first and the last base offset of the batches framed from the start."""
    first = last = None
    pos = 0
    while pos + 12 <= len(data):
        base, length = struct.unpack_from(">qi", data, pos)
        if length < 14 or pos + 12 + length > len(data):
            break
        first = base if first is None else first
        last = base
        pos += 12 + length
    assert first is not None
    return first, last


def _commands(data: bytes) -> dict[str, list[str]]:
    """Each command on ``{}`` (a path), reading the whole input or one batch of it."""
    first, last = _offsets(data)
    middle = str((first + last) // 2)
    return {
        "verify": ["verify", "{}"],
        "verify-json": ["verify", "--json", "{}"],
        "stats": ["stats", "{}"],
        "stats-json": ["stats", "--json", "{}"],
        "find": ["find", "{}", "--offset", middle],
        "inspect": ["inspect", "{}"],
        "inspect-offset": ["inspect", "{}", "--offset", middle],
        "producers": ["producers", "{}"],
        "dump": ["dump", "--deep-iteration", "{}"],
        "dump-jsonl": ["dump", "--jsonl", "{}"],
    }


def cli(argv: list[str]) -> Run:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            status = main(argv)
        except SystemExit as exc:
            status = exc.code if isinstance(exc.code, int) else 1
    return Run(status, out.getvalue(), err.getvalue())


def _normal(run: Run, *names: str) -> Run:
    """The run with the input's names made one and what moves from run to run (timings,
    stats' column widths) left out."""

    def clean(text: str) -> str:
        for name in names:  # longest first: a path before its file name
            text = text.replace(name, "<input>")
        text = re.sub(r"\bread \S+ \S+ in [0-9.]+ s.*", "read", text)
        text = re.sub(r'"(seconds|bytesPerSecond)": [0-9.e+-]+', '"t": 0', text)
        text = re.sub(r"-{2,}", "--", text)
        return re.sub(r" {2,}", " ", text)

    return Run(run.status, clean(run.out), clean(run.err))


def _as_file(tmp_path: Path, data: bytes, argv: list[str]) -> Run:
    path = tmp_path / "file" / FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    run = cli([a.format(path) for a in argv])
    return _normal(run, str(path), FILE)


def _fifo_writer(path: Path, data: bytes) -> threading.Thread:
    def write() -> None:
        with open(path, "wb") as fh:
            fh.write(data)

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    return writer


def _through_fifo(tmp_path: Path, data: bytes, argv: list[str]) -> Run:
    """The command in this process, on a FIFO a thread writes; it fails (rather than hangs)
    if the command opens the FIFO a second time, which no writer would ever answer."""
    fifo = tmp_path / "fifo" / FIFO
    fifo.parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(fifo)
    writer = _fifo_writer(fifo, data)
    done: list[Run] = []
    command = threading.Thread(
        target=lambda: done.append(cli([a.format(fifo) for a in argv])), daemon=True
    )
    command.start()
    command.join(timeout=240)
    if command.is_alive():  # waits on a second open: give it a writer, and fail
        _fifo_writer(fifo, b"").join(timeout=10)
        command.join(timeout=60)
        pytest.fail(f"{argv} opened the FIFO more than once")
    writer.join(timeout=10)
    assert not writer.is_alive(), "the command never read the FIFO to its end"
    return _normal(done[0], str(fifo), FIFO)


def _through_stdin(data: bytes, argv: list[str]) -> Run:
    """``kafka-format ARGV`` with ``-`` for the path, its standard input a real pipe."""
    proc = subprocess.run(
        [sys.executable, "-m", "kafka_format", *(a.format("-") for a in argv)],
        input=data,
        capture_output=True,
        timeout=300,
    )
    run = Run(proc.returncode, proc.stdout.decode(), proc.stderr.decode())
    return _normal(run, "/dev/stdin", "stdin")


def _expected_status(command: str, name: str) -> int | None:
    """What the verdict must be, where the command reads the whole input (None: one batch,
    which depends on where it lies)."""
    if command.startswith(("verify", "stats", "dump")):
        return 1 if name == "zeroed" else 0  # a truncated tail is no damage
    return None


@pytest.mark.parametrize("name", INPUTS)
def test_every_command_on_a_fifo_as_on_the_file(tmp_path, logs, name):
    data = logs[name]
    for command, argv in _commands(data).items():
        want = _as_file(tmp_path / command, data, argv)
        got = _through_fifo(tmp_path / command, data, argv)
        assert got == want, command
        expected = _expected_status(command, name)
        assert expected is None or got.status == expected, (command, got)
        assert "Traceback" not in got.err and (got.out or got.status), (command, got)


@pytest.mark.parametrize(
    ("name", "commands"),
    [
        ("zeroed", None),  # every command
        ("intact", ("verify", "stats-json", "inspect")),
        ("truncated", ("verify-json", "stats", "find")),
    ],
)
def test_commands_read_standard_input_as_the_file(tmp_path, logs, name, commands):
    data = logs[name]
    for command, argv in _commands(data).items():
        if commands is not None and command not in commands:
            continue
        want = _as_file(tmp_path / command, data, argv)
        got = _through_stdin(data, argv)
        assert got == want, command
        expected = _expected_status(command, name)
        assert expected is None or got.status == expected, (command, got)


def test_verify_json_names_the_pipe(tmp_path, logs):
    """Through a pipe the report is the file's, under the pipe's name."""
    got = _through_stdin(logs["zeroed"], ["verify", "--json", "{}"])
    report = json.loads(got.out)
    assert got.status == 1 and not report["ok"]
    (log,) = report["files"]
    assert log["file"] == "<input>" and log["counts"]["batches"] > 0
    assert [p["check"] for p in log["problems"] if p["severity"] == "error"] == ["crc"]


@pytest.mark.parametrize("name", ["intact", "zeroed"])
def test_recover_from_standard_input(tmp_path, logs, name):
    """The pipe becomes a segment named from its first batch's base offset, recovered as
    that segment given as a file is: the same copy in DEST, byte for byte."""
    data = logs[name]
    base = _offsets(data)[0]
    segment = tmp_path / "src" / f"{base:020d}.log"
    segment.parent.mkdir()
    segment.write_bytes(data)
    from_file = tmp_path / "from-file"
    want = cli(["recover", str(segment), str(from_file)])
    from_pipe = tmp_path / "from-pipe"
    proc = subprocess.run(
        [sys.executable, "-m", "kafka_format", "recover", "-", str(from_pipe)],
        input=data,
        capture_output=True,
        timeout=300,
    )
    # 0 for the intact log; 1 where it held damage (the copy is written all the same)
    assert proc.returncode == want.status == (0 if name == "intact" else 1), proc.stderr
    files = sorted(p.name for p in from_pipe.iterdir())
    assert files == sorted(p.name for p in from_file.iterdir())
    assert f"{base:020d}.log" in files
    for file in files:
        assert (from_pipe / file).read_bytes() == (from_file / file).read_bytes(), file
    text = proc.stdout.decode().replace("/dev/stdin", "<input>").replace(str(from_pipe), "DEST")
    expected = want.out.replace(str(segment), "<input>").replace(str(from_file), "DEST")
    assert text == expected
    assert ("dropped <input> @" in text) == (name == "zeroed")


def test_standard_input_from_a_terminal_is_refused(tmp_path):
    """``-`` with a terminal for standard input would wait for a log to be typed in."""
    pty = pytest.importorskip("pty")
    leader, follower = pty.openpty()
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "kafka_format", "verify", "-"],
            stdin=follower,
            capture_output=True,
            text=True,
            timeout=120,
        )
    finally:
        os.close(follower)
        os.close(leader)
    assert proc.returncode == 2
    assert proc.stderr.startswith("kafka-format verify: error: '-' reads a log from standard")


def test_a_fifo_is_read_once_by_recover(tmp_path, logs):
    """recover copies the FIFO once (a second open would wait for a writer forever)."""
    fifo = tmp_path / FIFO
    os.mkfifo(fifo)
    writer = _fifo_writer(fifo, logs["intact"])
    dest = tmp_path / "dest"
    run = cli(["recover", str(fifo), str(dest)])
    writer.join(timeout=60)
    assert run.status == 0, run.err
    base = _offsets(logs["intact"])[0]
    assert (dest / f"{base:020d}.log").read_bytes() == logs["intact"]
    assert run.out.startswith(f"Recovered {fifo} into {dest}")
    shutil.rmtree(dest)
