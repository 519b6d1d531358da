"""The command line behaves as one tool: the same exit statuses (0 healthy, 1 damage, 2 bad
arguments, also when stdout is closed early), one form of error line, ``--isolation``
honoured by every ``dump`` output, record counts labelled alike, and ``verify``'s notes as
its help describes them.

Oracles: each command with its stdout open (for the closed-pipe runs), ``dump --jsonl``'s
read_committed records (the columnar reader's, tested against the reference elsewhere) for
the text outputs, and gaps and damage positions computed here from the bytes.
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
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest

from kafka_format.runtime.cli import main
from kafka_format.runtime.write.generate import generate_log_dir

#: What a closed stdout must never put on stderr.
NOISE = ("Traceback", "Exception ignored", "BrokenPipeError", "Broken pipe")


@dataclass(frozen=True, slots=True)
class Run:
    status: int
    out: str
    err: str


def cli(*argv: object) -> Run:
    """``kafka-format ARGV`` in this process (argparse's exits become the status)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            status = main([str(a) for a in argv])
        except SystemExit as exc:
            status = exc.code if isinstance(exc.code, int) else 1
    return Run(status, out.getvalue(), err.getvalue())


def _frames(data: bytes) -> list[tuple[int, int, int]]:
    """(position, size, base offset) of each batch framed from the start."""
    found, pos = [], 0
    while pos + 12 <= len(data):
        base, length = struct.unpack_from(">qi", data, pos)
        if length < 14 or pos + 12 + length > len(data):
            break
        found.append((pos, 12 + length, base))
        pos += 12 + length
    return found


def _zero_middle(path: Path) -> int:
    """Zero bytes inside the records of the batch in the middle of ``path`` (its CRC then
    fails); the batch's position."""
    data = bytearray(path.read_bytes())
    frames = _frames(bytes(data))
    position, size, _ = frames[len(frames) // 2]
    data[position + 70 : position + size - 4] = bytes(size - 74)
    path.write_bytes(bytes(data))
    return position


@dataclass(frozen=True, slots=True)
class Logs:
    healthy: Path
    damaged: Path
    #: The first segment of damaged/orders-0 and the position of its damaged batch.
    segment: Path
    position: int


@pytest.fixture(scope="module")
def logs(tmp_path_factory) -> Logs:
    base = tmp_path_factory.mktemp("one-tool")
    healthy = base / "healthy"
    generate_log_dir(healthy, seed=5, topics=["orders", "users"], records=300)
    damaged = base / "damaged"
    shutil.copytree(healthy, damaged)
    segment, later = sorted((damaged / "orders-0").glob("*.log"))[:2]
    position = _zero_middle(segment)
    _zero_middle(later)
    return Logs(healthy, damaged, segment, position)


# --- item 2: a closed stdout changes no verdict --------------------------------------------


def _command(argv: list[str]) -> list[str]:
    return [sys.executable, "-m", "kafka_format", *argv]


def _through_head(argv: list[str]) -> tuple[int, str, str]:
    """``kafka-format ARGV | head -1``: its status, head's line and its stderr."""
    with tempfile.TemporaryFile() as err:
        first = subprocess.Popen(_command(argv), stdout=subprocess.PIPE, stderr=err)
        head = subprocess.Popen(["head", "-1"], stdin=first.stdout, stdout=subprocess.PIPE)
        assert first.stdout is not None
        first.stdout.close()  # head alone holds the reading end: its exit closes the pipe
        line, _ = head.communicate(timeout=300)
        status = first.wait(timeout=300)
        err.seek(0)
        return status, line.decode(), err.read().decode()


def _into_closed_pipe(argv: list[str]) -> tuple[int, str]:
    """The command writing into a pipe whose reader is gone before it starts: every write
    to stdout meets EPIPE (``| head -1`` closes it at a moment of its own)."""
    read, write = os.pipe()
    os.close(read)
    try:
        proc = subprocess.run(
            _command(argv), stdout=write, stderr=subprocess.PIPE, text=True, timeout=300
        )
    finally:
        os.close(write)
    return proc.returncode, proc.stderr


CLOSED_CASES = {
    # name: (argv with {healthy} / {damaged} / {segment} / {position}, damaged?)
    "dump-healthy": (["dump", "--deep-iteration", "{healthy}"], False),
    "dump-damaged": (["dump", "--deep-iteration", "{damaged}"], True),
    "dump-jsonl-damaged": (["dump", "--jsonl", "{damaged}"], True),
    "verify-healthy": (["verify", "{healthy}"], False),
    "verify-damaged": (["verify", "{damaged}"], True),
    "stats-healthy": (["stats", "{healthy}"], False),
    "stats-damaged": (["stats", "{damaged}"], True),
    "inspect-healthy": (["inspect", "{healthy}/orders-0/00000000000000000000.log"], False),
    "inspect-damaged": (["inspect", "{segment}", "--position", "{position}"], True),
}


@pytest.mark.parametrize("case", sorted(CLOSED_CASES))
def test_a_closed_stdout_keeps_the_verdict(logs, case):
    template, damaged = CLOSED_CASES[case]
    fields = {
        "healthy": logs.healthy,
        "damaged": logs.damaged,
        "segment": logs.segment,
        "position": logs.position,
    }
    argv = [part.format(**fields) for part in template]
    oracle = cli(*argv)
    assert oracle.status == (1 if damaged else 0), oracle.err
    status, line, err = _through_head(argv)
    assert status == oracle.status, err
    assert line == oracle.out.splitlines(keepends=True)[0]
    assert not any(word in err for word in NOISE), err
    status, err = _into_closed_pipe(argv)
    assert status == oracle.status, err
    assert not any(word in err for word in NOISE), err


def test_dump_stops_at_a_closed_stdout_once_damage_is_known(logs):
    """With no one reading, a dump whose verdict is already damage stops reading: the second
    damaged segment is not reached. With stdout open, both are reported."""
    argv = ["dump", "--deep-iteration", str(logs.damaged / "orders-0")]
    errors = [line for line in cli(*argv).err.splitlines() if line.startswith("error: ")]
    assert len(errors) == 2
    status, err = _into_closed_pipe(argv)
    assert status == 1
    assert [line for line in err.splitlines() if line.startswith("error: ")] == errors[:1]


# --- items 3 and 4: bad arguments are 2, and every error line has one form -----------------


def _usage_cases(logs: Logs, tmp: Path) -> list[list[object]]:
    partition = logs.healthy / "orders-0"
    segment = partition / "00000000000000000000.log"
    not_empty = tmp / "not-empty"
    not_empty.mkdir(exist_ok=True)
    (not_empty / "keep").write_text("mine")
    return [
        ["find", logs.healthy, "--offset", "42"],  # a log dir: which partition?
        ["find", logs.healthy, "--offset", "42", "--topic", "orders"],  # three of them
        ["find", partition, "--offset", "x"],
        ["inspect", partition],  # a directory, not a file
        ["inspect", segment, "--color", "sometimes"],
        ["verify", logs.healthy, "--topic", "nope"],
        ["stats", logs.healthy, "--partition", "7"],
        ["dump", "--no-such-option", segment],
        ["dump", "-o", "5", "--from", "6", segment],  # the start given twice
        ["dump", "--key-decoder-class", "com.example.Mine", segment],
        ["compact", partition, "--removed"],  # --removed goes with --jsonl
        ["recover", partition, not_empty],
        ["recover", logs.healthy, partition / "copy"],  # DEST inside SRC
        ["producers", partition, "--at", "-3"],
        ["warm", "--bogus"],
    ]


def test_bad_arguments_are_exit_2_in_the_commands_own_words(logs, tmp_path):
    for argv in _usage_cases(logs, tmp_path):
        run = cli(*argv)
        assert run.status == 2, (argv, run)
        assert run.out == "", argv
        last = run.err.splitlines()[-1]
        assert last.startswith(f"kafka-format {argv[0]}: error: "), (argv, run.err)
        assert "kafka-format: error:" not in run.err and "Traceback" not in run.err


def test_a_command_that_cannot_read_its_input_says_so_in_the_same_form(logs, tmp_path):
    missing = tmp_path / "missing"
    for argv in (
        ["stats", missing],
        ["inspect", missing],
        ["find", missing, "--offset", "1"],
        ["producers", missing],
        ["recover", missing, tmp_path / "dest"],
        ["compact", missing],
    ):
        run = cli(*argv)
        assert run.status == 1, (argv, run)
        (line,) = run.err.splitlines()
        assert line.startswith(f"kafka-format {argv[0]}: error: {missing}"), line


def test_damage_is_one_line_whichever_command_finds_it(logs):
    """A finding in the data is written alike by every command: ``error: FILE @POSITION
    (base offset N): cause``."""
    segment, position = logs.segment, logs.position
    base = dict((p, b) for p, _, b in _frames(segment.read_bytes()))[position]
    expected = f"error: {segment} @{position} (base offset {base}): stored crc32c 0x"
    found = {
        "verify": cli("verify", segment).out,
        "dump": cli("dump", segment).err,
        "stats": cli("stats", segment).err,
        "inspect": cli("inspect", segment, "--position", position).err,
        "find": cli("find", segment, "--offset", base).err,
    }
    lines = {}
    for command, text in found.items():
        (line,) = [x for x in text.splitlines() if x.startswith(expected)]
        lines[command] = line
    assert len(set(lines.values())) == 1, lines


# --- item 5: --isolation in every dump output ----------------------------------------------


def _jsonl_records(*argv: object) -> list[tuple[int, int]]:
    run = cli("dump", "--jsonl", *argv)
    assert run.status == 0, run.err
    rows = [json.loads(line) for line in run.out.splitlines()]
    return [(row["offset"], row["position"]) for row in rows]


def _text_records(out: str) -> list[int]:
    """The data records of dump's deep text output (a marker's line names it)."""
    lines = [line for line in out.splitlines() if line.startswith("| offset: ")]
    return [int(line.split()[2]) for line in lines if "endTxnMarker" not in line]


def _text_batches(out: str) -> list[int]:
    return [int(m[1]) for m in re.finditer(r"isControl: \w+ .*?position: (\d+)", out)]


def test_isolation_is_honoured_by_every_dump_output(logs):
    partition = logs.healthy / "orders-0"
    committed = _jsonl_records("--isolation", "read_committed", partition)
    everything = _jsonl_records(partition)
    assert len(committed) < len(everything)  # the generated topic aborts transactions
    for isolation, records in (("read_committed", committed), ("read_uncommitted", everything)):
        deep = cli("dump", "--deep-iteration", "--isolation", isolation, partition)
        assert deep.status == 0, deep.err
        if isolation == "read_committed":
            assert _text_records(deep.out) == [offset for offset, _ in records]
            positions = sorted({position for _, position in records})
            plain = cli("dump", "--isolation", isolation, partition).out
            assert sorted(_text_batches(plain)) == positions
            batches = cli("dump", "--jsonl", "--batches", "--isolation", isolation, partition)
            shown = [json.loads(line) for line in batches.out.splitlines()]
            assert sorted(b["position"] for b in shown) == positions
            assert not any(b["isControl"] for b in shown)
        else:
            assert _text_records(deep.out) == [offset for offset, _ in records]


def test_isolation_with_a_range_and_from_a_pipe(logs, tmp_path):
    partition = logs.healthy / "orders-0"
    ranged = ["--isolation", "read_committed", "-o", "150", "-c", "40"]
    expected = [offset for offset, _ in _jsonl_records(*ranged, partition)]
    assert len(expected) == 40
    deep = cli("dump", "--deep-iteration", *ranged, partition)
    assert _text_records(deep.out) == expected
    # the same bytes alone in a file, as a pipe has them: no later segment, no .txnindex
    alone = tmp_path / "data.bin"
    shutil.copyfile(partition / "00000000000000000000.log", alone)
    proc = subprocess.run(
        _command(["dump", "--deep-iteration", "--isolation", "read_committed", "-"]),
        input=alone.read_bytes(),
        capture_output=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    from_file = cli("dump", "--deep-iteration", "--isolation", "read_committed", alone)
    assert _text_records(proc.stdout.decode()) == _text_records(from_file.out)
    everything = _text_records(cli("dump", "--deep-iteration", alone).out)
    assert set(_text_records(from_file.out)) < set(everything)


# --- item 6: record counts say which records they count -----------------------------------


def test_record_counts_are_labelled_and_agree(logs, tmp_path):
    verify = json.loads(cli("verify", "--json", logs.healthy).out)
    logs_only = [f for f in verify["files"] if f["kind"] == "log"]
    data = sum(f["counts"]["data_records"] for f in logs_only)
    control = sum(f["counts"]["control_records"] for f in logs_only)
    assert sum(f["counts"]["records"] for f in logs_only) == data + control
    assert control > 0  # transaction markers
    stats = json.loads(cli("stats", "--json", logs.healthy).out)["total"]
    assert (stats["records"], stats["producers"]["controlRecords"]) == (data, control)
    recover = cli("recover", "--json", logs.healthy, tmp_path / "copy")
    assert json.loads(recover.out)["records_kept"] == data
    # and in words, where the text says a count
    summary = cli("verify", logs.healthy).out.splitlines()[-1]
    assert f"{data:,} data records, {control:,} control records" in summary
    table = cli("stats", logs.healthy).out
    assert "DATA RECORDS" in table and "CONTROL RECORDS" in table
    assert re.search(rf"\bTOTAL\s+\S+\s+{data:,}\s", table)
    kept = cli("recover", logs.healthy, tmp_path / "again").out
    assert f"Kept {verify_batches(verify):,} batches, {data:,} data records in" in kept


def verify_batches(report: dict) -> int:
    return sum(f["counts"].get("batches", 0) for f in report["files"])


# --- item 7: verify's notes, as its help says ----------------------------------------------


def test_verify_help_says_what_verify_prints(logs):
    helped = cli("verify", "--help").out
    notes = helped[helped.index("Notes") :]
    assert "non-consecutive offsets" in notes
    warnings = helped[helped.index("Warnings:") : helped.index("Notes")]
    assert "non-consecutive" not in warnings  # printed as a note, not a warning
    run = cli("verify", logs.healthy / "users-0")
    assert "note: " in run.out and "non-consecutive offsets" in run.out
    assert not any(
        line.startswith("warning: ") and "non-consecutive" in line for line in run.out.splitlines()
    )


def _break_frame(path: Path, n: int) -> tuple[int, int]:
    """Zero the whole ``n``-th batch (framing damage where it starts: the batch is lost, the
    walk goes on at the next whole one); its position, and the next batch's."""
    data = bytearray(path.read_bytes())
    frames = _frames(bytes(data))
    position, size, _ = frames[n]
    data[position : position + size] = bytes(size)
    path.write_bytes(bytes(data))
    return position, frames[n + 1][0]


def test_gaps_are_compactions_only_where_no_damage_explains_them(logs, tmp_path):
    # users-0 is compacted: its gaps are the cleaner's
    source = sorted((logs.healthy / "users-0").glob("*.log"))[0]
    clean = json.loads(cli("verify", "--json", source).out)["files"][0]
    (note,) = [p for p in clean["problems"] if p["check"] == "non-consecutive"]
    assert note["message"].endswith("compaction leaves these")
    assert not any(gap["damage"] for gap in note["details"])
    # a batch of orders-0 lost to framing damage: the one gap it makes is the damage's
    lost = tmp_path / "00000000000000000000.log"
    shutil.copyfile(logs.healthy / "orders-0" / "00000000000000000000.log", lost)
    clean_gaps = json.loads(cli("verify", "--json", lost).out)["files"][0]["problems"]
    assert not [p for p in clean_gaps if p["check"] == "non-consecutive"]
    position, after = _break_frame(lost, 20)
    report = json.loads(cli("verify", "--json", lost).out)["files"][0]
    assert [p["position"] for p in report["problems"] if p["severity"] == "error"] == [position]
    (note,) = [p for p in report["problems"] if p["check"] == "non-consecutive"]
    assert "compaction" not in note["message"]
    assert "damage reported in this file lies between the two offsets" in note["message"]
    (gap,) = note["details"]
    assert gap["damage"] and gap["position"] == after
    # both in one file: damage in a compacted segment, only the gap around it is the damage's
    mixed = tmp_path / "mixed.log"
    shutil.copyfile(source, mixed)
    frames = _frames(mixed.read_bytes())
    position, after = _break_frame(mixed, len(frames) // 2)
    report = json.loads(cli("verify", "--json", mixed).out)["files"][0]
    (note,) = [p for p in report["problems"] if p["check"] == "non-consecutive"]
    flagged = [g for g in note["details"] if g["damage"]]
    assert [g["position"] for g in flagged] == [after]
    assert (
        f"lies between the two offsets of {len(flagged)}; compaction leaves the others"
        in (note["message"])
    )
    # the others are the healthy file's gaps, less the one the lost batch replaced
    healthy_gaps = {(g["offset"], g["next"]) for g in note_of(source)["details"]}
    assert {(g["offset"], g["next"]) for g in note["details"] if not g["damage"]} <= healthy_gaps


def note_of(path: Path) -> dict:
    report = json.loads(cli("verify", "--json", path).out)["files"][0]
    (note,) = [p for p in report["problems"] if p["check"] == "non-consecutive"]
    return note


def test_version_is_the_installed_distributions():
    """``kafka-format --version`` (kafka-dump-log and kcat have one) says what pip installed,
    and exits 0 without a command."""
    from importlib.metadata import version

    run = subprocess.run(
        [sys.executable, "-m", "kafka_format", "--version"], capture_output=True, text=True
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == f"kafka-format {version('kafka-format')}"


def test_one_of_a_thing_is_said_in_the_singular(tmp_path):
    """ "kept 1 batch, 1 data record", "1 batch looked at": counts read as English."""
    from kafka.record.default_records import DefaultRecordBatchBuilder

    from kafka_format.runtime.cli.text import amount

    assert (amount(1, "batch", "batches"), amount(2048, "batch", "batches")) == (
        "1 batch",
        "2,048 batches",
    )
    builder = DefaultRecordBatchBuilder(2, 0, False, -1, -1, -1, 1 << 20)
    builder.append(0, 1_700_000_000_000, b"k", b"v", [])
    part = tmp_path / "t-0"
    part.mkdir()
    (part / "00000000000000000000.log").write_bytes(bytes(builder.build()))
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        assert main(["recover", str(part), str(tmp_path / "copy")]) == 0
        assert main(["find", str(part), "--offset", "0"]) == 0
    text = out.getvalue()
    assert "t-0: kept 1 batch, 1 data record (offsets 0..0), 1 segment, nothing dropped" in text
    assert "Kept 1 batch, 1 data record in 1 partition (0 damaged)" in text
    assert "1 batch looked at" in text
