"""Output that adapts to a pipe: ``stats``, ``inspect``, ``producers``, ``verify`` and
``compact`` print plain text when stdout is not a terminal: no colour or other escape
sequences, no column or value cut or wrapped to a width, no progress line on stdout."""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from kafka_format.runtime.analysis.stats import log_stats
from kafka_format.runtime.cli import main
from kafka_format.runtime.cli.stats import print_stats
from kafka_format.runtime.write.generate import generate_log_dir

ESCAPE = "\x1b"
ELLIPSIS = "…"
COMMANDS = [
    ("stats", "{root}"),
    ("inspect", "{segment}"),
    ("producers", "{partition}"),
    ("verify", "{root}"),
    ("compact", "{partition}"),
]


@pytest.fixture(scope="module")
def log_dir(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("pipes") / "logs"
    generate_log_dir(root, seed=5, topics=["orders", "users"], records=300)
    return root


def _paths(root: Path) -> dict[str, str]:
    partition = root / "orders-0"
    return {
        "root": str(root),
        "partition": str(partition),
        "segment": str(min(partition.glob("*.log"))),
    }


@pytest.mark.parametrize(("command", "path"), COMMANDS)
def test_real_pipe_gets_plain_whole_lines(log_dir, command, path):
    """Through a real pipe, with a terminal width that would have cut the tables."""
    env = {**os.environ, "COLUMNS": "60", "KAFKA_FORMAT_PROGRESS_MIN_BYTES": "0"}
    done = subprocess.run(
        [sys.executable, "-m", "kafka_format", command, path.format(**_paths(log_dir))],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert out.strip()
    assert ESCAPE not in out and "\r" not in out
    # inspect sums up a long value as `"abc…" (260 bytes)` (its bytes are in the hex dump);
    # nothing else is cut
    assert ELLIPSIS not in re.sub(r'…"? \(\d+ bytes\)', "", out)
    assert ESCAPE not in done.stderr  # stderr is a pipe too: no progress line there either
    if command != "inspect":  # inspect's field rows without a value keep their padding
        assert not [line for line in out.splitlines() if line != line.rstrip()]


def test_stats_tables_keep_every_column_in_a_non_tty_stream(log_dir):
    stats = log_stats(log_dir)
    out = io.StringIO()
    print_stats(stats, out)
    text = out.getvalue()
    assert ESCAPE not in text and ELLIPSIS not in text
    lines = text.splitlines()
    header = next(line for line in lines if line.startswith("PARTITION  TIMESTAMPS"))
    for name in ("PRODUCERS", "IDEMPOTENT", "TRANSACTIONAL", "CONTROL"):
        assert name in header.split()
    # each table: a title, its header, a rule as wide as the header, the rows
    rules = [i for i, line in enumerate(lines) if line and set(line) == {"-"}]
    assert len(rules) == 3
    for i in rules:
        assert len(lines[i]) == len(lines[i - 1])
    rows = [line for line in lines if line.startswith(("orders-0", "TOTAL"))]
    assert len(rows) == 6  # one row of orders-0 and TOTAL per table
    # ISO timestamps come out whole
    assert all(re.search(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z \.\. ", r) for r in rows[4:])
    assert max(len(line) for line in lines) > 120  # wider than any terminal default


def test_inspect_values_are_not_wrapped(log_dir, capsys):
    segment = _paths(log_dir)["segment"]
    assert main(["inspect", segment]) == 0
    out = capsys.readouterr().out
    assert ESCAPE not in out
    lines = out.splitlines()
    assert lines[0].startswith(segment + " @0: record batch") and "codec" in lines[0]
    crc = next(line for line in lines if line.startswith("■ crc "))
    assert re.search(r"stored 0x[0-9a-f]{8}, computed 0x[0-9a-f]{8} valid\]$", crc)
    # no continuation lines: a wrapped value went on under the value column, after blanks
    start = lines.index(next(line for line in lines if line.startswith("field ")))
    assert not [line for line in lines[start + 1 :] if line.startswith(" " * 36) and line.strip()]


def test_inspect_color_always_still_colours_a_pipe(log_dir, capsys):
    assert main(["inspect", "--color", "always", _paths(log_dir)["segment"]]) == 0
    assert ESCAPE in capsys.readouterr().out
