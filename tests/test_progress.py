"""Progress on stderr: shown on a terminal, silent in a pipe, never touching stdout.

The terminal is a real pseudo-terminal (``os.openpty``): the commands run as subprocesses with
stderr on its slave end, and what they wrote there is read back from the master end. The
threshold is lowered through ``KAFKA_FORMAT_PROGRESS_MIN_BYTES`` so a small generated log
directory is "long work".
"""

from __future__ import annotations

import io
import os
import struct
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from kafka_format.runtime.progress import (
    DEFAULT_MIN_BYTES,
    MIN_BYTES_ENV,
    Progress,
    human_bytes,
    min_bytes,
    wanted,
)
from kafka_format.runtime.write.generate import generate_log_dir

ERASE = "\r\x1b[K"


@pytest.fixture(scope="module")
def log_dir(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("progress") / "logs"
    generate_log_dir(root, seed=5, topics=["orders", "users"], partitions=1, records=300)
    return root


@pytest.fixture
def terminal():
    """A text stream on a real terminal (a pty's slave end), and a reader of its master."""
    master, slave = os.openpty()
    stream = open(slave, "w", encoding="utf-8", closefd=True)  # noqa: SIM115

    def read() -> str:
        stream.flush()
        os.set_blocking(master, False)
        chunks = []
        while True:
            try:
                chunk = os.read(master, 65536)
            except BlockingIOError:
                break
            if not chunk:
                break
            chunks.append(chunk)
        return b"".join(chunks).decode()

    yield stream, read
    stream.close()
    os.close(master)


def run_on_pty(args: list[str], *, env: dict[str, str], stdout_on_pty: bool = False):
    """Run ``kafka-format ARGS`` with stderr (and optionally stdout) on a pseudo-terminal;
    returns (status, stdout bytes, what the terminal received)."""
    master, slave = os.openpty()
    received: list[bytes] = []

    def drain() -> None:
        while True:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # EIO: every slave end is closed
                return
            if not chunk:
                return
            received.append(chunk)

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    try:
        proc = subprocess.Popen(
            [sys.executable, "-m", "kafka_format", *args],
            stdin=subprocess.DEVNULL,
            stdout=slave if stdout_on_pty else subprocess.PIPE,
            stderr=slave,
            env=env,
        )
    finally:
        os.close(slave)
    stdout, _ = proc.communicate(timeout=120)
    reader.join(timeout=30)
    os.close(master)
    return proc.returncode, stdout, b"".join(received).decode(errors="replace")


def run_piped(args: list[str], *, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "kafka_format", *args],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        env=env,
        timeout=120,
    )


def low_threshold(n: int = 1) -> dict[str, str]:
    return {**os.environ, MIN_BYTES_ENV: str(n)}


# --- the pieces -------------------------------------------------------------------------------


def test_min_bytes_from_the_environment(monkeypatch):
    monkeypatch.delenv(MIN_BYTES_ENV, raising=False)
    assert min_bytes() == DEFAULT_MIN_BYTES
    monkeypatch.setenv(MIN_BYTES_ENV, "1234")
    assert min_bytes() == 1234
    monkeypatch.setenv(MIN_BYTES_ENV, "not a number")
    assert min_bytes() == DEFAULT_MIN_BYTES


def test_human_bytes():
    assert human_bytes(0) == "0 B"
    assert human_bytes(1023) == "1023 B"
    assert human_bytes(1536) == "1.5 KiB"
    assert human_bytes(5 * 1024**2) == "5.0 MiB"
    assert human_bytes(3 * 1024**4) == "3072.0 GiB"


def test_silent_unless_a_terminal_with_enough_work(terminal, monkeypatch):
    stream, read = terminal
    monkeypatch.setenv(MIN_BYTES_ENV, "1000")
    assert wanted(stream=stream, output=io.StringIO())
    assert not wanted(stream=io.StringIO())
    assert not wanted(stream=stream, quiet=True)
    assert not wanted(stream=stream, output=stream)
    assert Progress.start("x", 10_000, stream=io.StringIO()) is None  # not a terminal
    assert Progress.start("x", 999, stream=stream) is None  # too little work
    assert Progress.start("x", 10_000, stream=stream, quiet=True) is None
    assert Progress.start("x", 10_000, stream=stream, output=stream) is None  # results there
    assert read() == ""
    progress = Progress.start("x", 10_000, stream=stream, output=io.StringIO())
    assert progress is not None
    progress.close()
    assert read() == f"{ERASE}x: 0 B / 9.8 KiB    0%{ERASE}"


def test_bytes_over_files(terminal, monkeypatch):
    stream, read = terminal
    monkeypatch.setenv(MIN_BYTES_ENV, "0")
    progress = Progress.start("verify", 3000, files=2, stream=stream)
    assert progress is not None
    progress.begin_file(1000)
    progress.at(400)
    assert progress.done == 400
    progress.at(5000)  # never past the file
    assert progress.done == 1000
    progress.begin_file(2000)  # the first file counts whole, however far it was read
    assert progress.done == 1000
    progress.at(500)
    assert progress.done == 1500
    assert "verify: 1.5 KiB / 2.9 KiB   50%  2/2 files" in progress.line()
    progress.close()
    assert read().endswith(ERASE)


def test_threads_share_one_progress(terminal, monkeypatch):
    """``verify`` over partitions at once: each thread tells its own files to a share of the
    one progress, which counts every file whole once that thread moves on or finishes."""
    stream, read = terminal
    monkeypatch.setenv(MIN_BYTES_ENV, "0")
    sizes = [[1000, 3000], [500, 1500, 2000]]
    progress = Progress.start("verify", sum(map(sum, sizes)), files=5, stream=stream)
    assert progress is not None

    def work(files: list[int]) -> None:
        share = progress.share()
        for size in files:
            share.begin_file(size)
            for position in range(0, size + 1000, 250):  # past the end too: never counted
                share.at(position)
        share.finish()

    threads = [threading.Thread(target=work, args=(files,)) for files in sizes]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert progress.done == progress.total == 8000
    assert progress.files_started == 5
    assert "verify: 7.8 KiB / 7.8 KiB  100%  5/5 files" in progress.line()
    progress.close()
    assert read().endswith(ERASE)


def test_messages_erase_the_line_first(terminal, monkeypatch):
    stream, read = terminal
    monkeypatch.setenv(MIN_BYTES_ENV, "0")
    progress = Progress.start("dump", 100, stream=stream)
    assert progress is not None
    wrapped = progress.wrap(stream)
    wrapped.write("error: something\n")
    progress.at(50)  # drawn again at once after a message, whatever the refresh interval
    progress.close()
    text = read()
    assert f"{ERASE}error: something" in text
    assert text.index("error: something") < text.rindex("dump: 50 B / 100 B")


# --- the commands -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "args",
    [
        ["dump", "--jsonl"],
        ["dump", "--deep-iteration", "--print-data-log"],
        ["dump", "--jsonl", "--isolation", "read_committed"],
        ["verify"],
    ],
    ids=["dump-jsonl", "dump-text", "dump-read-committed", "verify"],
)
def test_progress_on_a_terminal_only_and_stdout_unchanged(log_dir, args):
    env = low_threshold()
    command = [*args, str(log_dir)]
    status, stdout, terminal = run_on_pty(command, env=env)
    piped = run_piped(command, env=env)
    label = args[0]
    assert status == piped.returncode == 0, piped.stderr
    # On the terminal: the progress line, redrawn in place, and erased at the end.
    assert f"{label}: " in terminal and " / " in terminal
    assert terminal.rindex(ERASE) > terminal.rindex(f"{label}: ")
    # In a pipe: nothing of it.
    assert b"\r" not in piped.stderr and f"{label}: ".encode() not in piped.stderr
    # stdout: byte for byte the same, and no trace of the progress line.
    assert stdout == piped.stdout
    assert b"\x1b" not in stdout
    assert len(stdout) > 0


def test_progress_total_is_the_logs(log_dir):
    """The total counted towards is the size of the logs to read; no line goes past it."""
    status, _, terminal = run_on_pty(["verify", str(log_dir)], env=low_threshold())
    assert status == 0
    lines = [part for part in terminal.split(ERASE) if part.startswith("verify: ")]
    assert lines
    first, last = lines[0], lines[-1]
    assert first.startswith("verify: 0 B / ")
    done, total = last.split("  ")[0].removeprefix("verify: ").split(" / ")
    logs = sum(p.stat().st_size for p in log_dir.glob("*/*.log"))
    assert total == human_bytes(logs)
    # Drawn at most every 0.2 s, so the last one may lag; it is never beyond the total.
    assert 0 <= parse_size(done) <= parse_size(total)


def parse_size(text: str) -> float:
    number, unit = text.split()
    return float(number) * 1024 ** ["B", "KiB", "MiB", "GiB"].index(unit)


def test_no_progress_when_stdout_is_the_terminal_or_quiet(log_dir):
    env = low_threshold()
    _, _, both = run_on_pty(["dump", "--jsonl", str(log_dir)], env=env, stdout_on_pty=True)
    assert "dump: " not in both and '"offset":' in both
    _, stdout, quiet = run_on_pty(["dump", "--jsonl", "-q", str(log_dir)], env=env)
    assert quiet == "" and stdout
    _, stdout, quiet = run_on_pty(["verify", "--quiet", str(log_dir)], env=env)
    assert quiet == "" and b"Checked " in stdout


def test_default_threshold_keeps_small_work_silent(log_dir):
    env = {k: v for k, v in os.environ.items() if k != MIN_BYTES_ENV}
    assert sum(p.stat().st_size for p in log_dir.glob("*/*.log")) < DEFAULT_MIN_BYTES
    _, stdout, terminal = run_on_pty(["dump", "--jsonl", str(log_dir)], env=env)
    assert terminal == "" and stdout


def test_errors_on_their_own_line_while_progress_shows(log_dir, tmp_path):
    segment = next((log_dir / "orders-0").glob("*.log"))
    data = bytearray(segment.read_bytes())
    data[17] ^= 0xFF  # the first batch's CRC
    damaged = tmp_path / "00000000000000000000.log"
    damaged.write_bytes(bytes(data))
    status, stdout, terminal = run_on_pty(["dump", "--jsonl", str(damaged)], env=low_threshold())
    assert status == 1
    assert stdout  # the other batches' records
    at = terminal.index("error: ")
    assert terminal[:at].endswith(ERASE)  # the progress line was erased before it
    assert f"{damaged} @0" in terminal[at:].splitlines()[0]
    # The records of every other batch, none of the damaged first one's.
    offsets = [int(line.split(b",")[0].split(b":")[1]) for line in stdout.splitlines()]
    (first_last_delta,) = struct.unpack_from(">i", data, 23)
    assert offsets and min(offsets) > first_last_delta
