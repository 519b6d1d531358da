"""Every command on every kind of input: the corpus, a generated log directory, damaged copies.

What must hold everywhere: never a traceback; exit status 0 for intact input, 1 for damage,
2 for bad arguments; each error one line naming the file (and the byte position where there
is one). Oracles: the corpus's expected records (.jsonl) and its MANIFEST, EXPECTED.json of
the generated directory, and frame positions, offsets and CRCs computed here with struct.

Commands run in-process through ``cli.main(argv)`` with stdout and stderr swapped for
buffers (the commands look the streams up at call time), which keeps the sweep fast; a few
run as subprocesses through the installed entry point, as a user runs them.

Two kinds of damage are not failures, by design (README, ``framing.py``): a truncated tail
and a length field that runs past the end of the file. Kafka stops reading at such a frame
and so do we; they are reported (``Found N invalid bytes at the end of FILE``, and by
``verify`` as a warning naming file and position) and the status stays 0.
"""

from __future__ import annotations

import contextlib
import io
import itertools
import json
import random
import re
import shutil
import struct
import subprocess
import sys
import zlib
from dataclasses import dataclass
from pathlib import Path

import pytest
from crc32c import crc32c

from kafka_format.runtime.cli import main

#: The keys ``dump --jsonl`` adds after the canonical ones: where each record was.
WHERE = ("topic", "partition", "file", "position")


def records(out: str) -> list[dict]:
    """``dump --jsonl``'s records in the canonical form (the corpus's, find's)."""
    rows = [json.loads(line) for line in out.splitlines()]
    for row in rows:
        assert list(row)[-4:] == list(WHERE)
    return [{k: v for k, v in row.items() if k not in WHERE} for row in rows]


DUMP_MODES = {
    "text": [],
    "deep": ["--deep-iteration"],
    "data": ["--print-data-log"],
    "jsonl": ["--jsonl"],
    "batches": ["--jsonl", "--batches"],
}


@dataclass(frozen=True, slots=True)
class Run:
    argv: tuple[str, ...]
    status: int
    out: str
    err: str

    def error_lines(self) -> list[str]:
        """One-line errors: on stderr (all commands), and verify's report on stdout."""
        lines = [
            line
            for line in self.err.splitlines()
            # a finding in the data, or the command's own error (one form each, every command)
            if line.startswith("error:") or re.match(r"kafka-format [a-z]+: error: ", line)
        ]
        if self.argv[0] == "verify":
            lines += [line for line in self.out.splitlines() if line.startswith("error:")]
            if "--json" in self.argv:
                report = json.loads(self.out)
                lines += [
                    f"{p['file']} @{p['position']}: {p['message']}"
                    for f in report["files"]
                    for p in f["problems"]
                    if p["severity"] == "error"
                ]
        return lines


def cli(*argv: object) -> Run:
    """``kafka-format ARGV`` in this process."""
    args = tuple(str(a) for a in argv)
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            status = main(list(args))
        except SystemExit as exc:  # argparse: 2 for usage errors
            status = exc.code if isinstance(exc.code, int) else 1
    run = Run(args, status, out.getvalue(), err.getvalue())
    assert "Traceback" not in run.err and "Traceback" not in run.out, run
    assert run.status in (0, 1, 2), run
    if run.status == 1:
        assert run.error_lines(), f"status 1 without an error line: {run}"
    return run


def assert_names(run: Run, path: Path | str, position: int | None = None) -> None:
    """Every error line names a file under ``path``; one of them the position."""
    lines = run.error_lines()
    assert lines, run
    for line in lines:
        assert str(path) in line, (line, run.argv)
    if position is not None:
        assert any(f"@{position}" in line for line in lines), (position, lines)


# --- frames, computed here ------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Frame:
    position: int
    size: int
    base_offset: int
    magic: int
    crc_valid: bool

    @property
    def crc_at(self) -> int:
        """Where the stored CRC lies (v2: after the magic; v0/v1: before it)."""
        return self.position + (17 if self.magic >= 2 else 12)


def frames(data: bytes) -> list[Frame]:
    out = []
    pos = 0
    while len(data) - pos > 17:
        base, length = struct.unpack_from(">qi", data, pos)
        end = pos + 12 + length
        if length < 14 or end > len(data):
            break
        magic = data[pos + 16]
        if magic >= 2:
            ok = struct.unpack_from(">I", data, pos + 17)[0] == crc32c(data[pos + 21 : end])
        else:
            ok = struct.unpack_from(">I", data, pos + 12)[0] == zlib.crc32(data[pos + 16 : end])
        out.append(Frame(pos, end - pos, base, magic, ok))
        pos = end
    return out


# --- the corpus -------------------------------------------------------------------------------


def test_every_command_on_a_corpus_set(corpus_set, tmp_path):
    path = corpus_set.path
    data = path.read_bytes()
    expected = corpus_set.expected()
    found = frames(data)
    bad = [f.position for f in found if not f.crc_valid]
    assert bool(bad) != corpus_set.crc_valid  # the manifest and our CRCs agree
    want = 0 if corpus_set.crc_valid else 1

    runs = {mode: cli("dump", *args, path) for mode, args in DUMP_MODES.items()}
    for mode, run in runs.items():
        assert run.status == want, (mode, run.err)
        if bad:
            assert_names(run, path, bad[0])
    # Records: as a CRC-ignoring reader decodes them (deep iteration shows damaged batches
    # too); --jsonl drops the damaged ones.
    deep = [line for line in runs["deep"].out.splitlines() if line.startswith("| offset: ")]
    data_lines = [line for line in deep if "endTxnMarker" not in line and "controlType" not in line]
    assert [int(line.split()[2]) for line in data_lines] == [r["offset"] for r in expected]
    assert len(runs["data"].out.splitlines()) >= len(runs["deep"].out.splitlines())
    if corpus_set.crc_valid:
        assert records(runs["jsonl"].out) == expected
        positions = {f.position for f in found}
        assert {json.loads(line)["position"] for line in runs["jsonl"].out.splitlines()} <= (
            positions
        )
    batches = [json.loads(line) for line in runs["batches"].out.splitlines()]
    assert [(b["position"], b["size"], b["isvalid"]) for b in batches] == [
        (f.position, f.size, f.crc_valid) for f in found
    ]
    text_batches = [
        line
        for line in runs["text"].out.splitlines()
        if " position: " in line and "magic: " in line
    ]
    assert len(text_batches) == len(found)
    assert all(line.endswith("isvalid: " + ("true" if f.crc_valid else "false"))
               for line, f in zip(text_batches, found, strict=True))  # fmt: skip

    verify = cli("verify", path)
    assert verify.status == want, verify.out
    report = json.loads(cli("verify", "--json", path).out)
    assert report["ok"] == corpus_set.crc_valid
    crc_problems = [
        p["position"] for f in report["files"] for p in f["problems"] if p["check"] == "crc"
    ]
    assert crc_problems == bad
    if bad:
        assert_names(verify, path, bad[0])

    position = bad[0] if bad else 0
    inspect = cli("inspect", path, "--position", position)
    assert inspect.status == want, inspect.err
    assert inspect.out  # shown as far as it parses
    if bad:
        assert_names(inspect, path, bad[0])
    page = tmp_path / "batch.html"
    html = cli("inspect", path, "--position", position, "--html", page)
    assert html.status == want
    assert page.read_text().lstrip().lower().startswith("<!doctype html")


def test_find_on_corpus_sets_as_partitions(manifest, tmp_path):
    """Each set whose offsets increase, as the one segment of a partition: find the first,
    a middle and the last record by offset, and one by timestamp."""
    looked = 0
    for n, corpus_set in enumerate(manifest):
        expected = corpus_set.expected()
        offsets = [r["offset"] for r in expected]
        if not expected or any(b <= a for a, b in itertools.pairwise(offsets)):
            continue
        partition = tmp_path / f"corpus-{n}"
        partition.mkdir()
        shutil.copy(corpus_set.path, partition / "00000000000000000000.log")
        bad = [f.position for f in frames(corpus_set.data()) if not f.crc_valid]
        for record in (expected[0], expected[len(expected) // 2], expected[-1]):
            run = cli("find", partition, "--offset", record["offset"], "--jsonl")
            if run.status == 1:
                # Only a damaged batch may fail the look-up; the error says where it is.
                assert bad
                assert_names(run, partition)
                assert any(f"@{p}" in run.err for p in bad)
                continue
            assert run.status == 0
            assert json.loads(run.out)["record"] == record
            looked += 1
        stamped = [r for r in expected if r["timestamp"] is not None]
        if stamped and corpus_set.crc_valid:
            target = stamped[len(stamped) // 2]["timestamp"]
            first = min((r for r in stamped if r["timestamp"] >= target), key=lambda r: r["offset"])
            run = cli("find", partition, "--timestamp", target, "--jsonl")
            assert run.status == 0
            assert json.loads(run.out)["record"] == first
        verify = cli("verify", partition)
        assert verify.status == (0 if corpus_set.crc_valid else 1), verify.out
    assert looked > 50


# --- a generated log directory ------------------------------------------------------------------


@pytest.fixture(scope="module")
def generated(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("sweep") / "logs"
    run = cli("generate", root, "--seed", "11", "--records", "250", "--segment-bytes", "8KiB")
    assert run.status == 0, run.err
    assert "wrote " in run.out
    return root


def partition_dirs(root: Path) -> list[Path]:
    return sorted(p for p in root.iterdir() if p.is_dir())


def test_generate_refuses_a_used_directory(generated):
    # where to write is the command line's to say: a bad argument
    run = cli("generate", generated)
    assert run.status == 2
    assert (
        run.err
        == f"kafka-format generate: error: {generated}: exists and is not an empty directory\n"
    )
    log = next(generated.glob("*/*.log"))
    run = cli("generate", log)
    assert run.status == 2
    assert run.err.startswith(f"kafka-format generate: error: {log}: ")


def test_every_command_on_a_generated_log_dir(generated, tmp_path):
    expected = json.loads((generated / "EXPECTED.json").read_text())["partitions"]
    assert cli("verify", generated).status == 0
    assert json.loads(cli("verify", "--json", generated).out)["ok"] is True
    for mode, args in DUMP_MODES.items():
        run = cli("dump", *args, generated)
        assert (run.status, run.err.count("error")) == (0, 0), (mode, run.err)
    for partition in partition_dirs(generated):
        facts = expected[partition.name]
        dumped = cli("dump", "--jsonl", partition)
        committed = cli("dump", "--jsonl", "--isolation", "read_committed", partition)
        assert dumped.status == committed.status == 0
        rows = records(dumped.out)
        assert len(rows) == facts["records"]
        assert len(committed.out.splitlines()) == facts["read_committed_records"]

        # Every file of the partition, in one run of each mode.
        files = sorted(p for p in partition.iterdir() if p.name != "partition.metadata")
        for mode, args in DUMP_MODES.items():
            # The record options change nothing for indexes (each dump scans the log beside).
            some = files if mode in ("text", "jsonl") else [p for p in files if p.suffix == ".log"]
            run = cli("dump", *args, *some)
            assert run.status == 0, (mode, run.err)
            assert "error" not in run.err.lower() and "Mismatches" not in run.err
            if not args or args[0] != "--jsonl":
                assert run.out.count("Dumping ") == len(some)
        indexes = [p for p in files if p.suffix in (".index", ".timeindex")]
        run = cli("dump", "--verify-index-only", *indexes)
        assert (run.status, run.err) == (0, "")
        # As kafka-dump-log: only the file names, and "is empty." for an empty .index.
        assert run.out.splitlines() == [
            line
            for p in indexes
            for line in [f"Dumping {p}"]
            + ([f"{p} is empty."] if p.suffix == ".index" and not p.stat().st_size else [])
        ]
        run = cli("dump", "--index-sanity-check", *indexes)
        assert run.status == 0
        verdicts = [line for line in run.out.splitlines() if not line.startswith("Dumping ")]
        assert verdicts == [
            f"{p} is empty." if p.suffix == ".index" and not p.stat().st_size
            else f"{p} passed sanity check."
            for p in indexes
        ]  # fmt: skip

        # find: the records dump printed, by offset and by timestamp.
        for row in (rows[0], rows[len(rows) // 3], rows[-1]):
            run = cli("find", partition, "--offset", row["offset"], "--jsonl")
            assert run.status == 0, run.err
            assert json.loads(run.out)["record"] == row
            text = cli("find", partition, "--offset", row["offset"], "--print-data-log")
            assert text.status == 0
            assert f"| offset: {row['offset']} " in text.out
        # By timestamp, the broker's answer: the first record in offset order, control
        # records included, whose timestamp reaches the target (from deep iteration).
        every = [
            (int(line.split()[2]), int(line.split()[4]))
            for line in cli("dump", "--deep-iteration", partition).out.splitlines()
            if line.startswith("| offset: ")
        ]
        stamps = sorted({ts for _, ts in every if ts >= 0})
        if stamps:  # magic 0 has none
            target = stamps[len(stamps) // 2]
            offset = next(offset for offset, ts in every if ts >= target)
            run = cli("find", partition, "--timestamp", target, "--jsonl")
            assert run.status == 0
            found = json.loads(run.out)
            assert found["record"]["offset"] == offset
            if found.get("control") is None:
                assert found["record"] in rows
        beyond = cli("find", partition, "--offset", facts["log_end_offset"] + 5)
        assert beyond.status == 1
        assert_names(beyond, partition)

        # inspect: the first batch of each segment, and the batch of a middle record.
        for log in sorted(partition.glob("*.log")):
            if log.stat().st_size:
                assert cli("inspect", log).status == 0
        segment = max(
            (
                log
                for log in partition.glob("*.log")
                if int(log.stem) <= rows[len(rows) // 2]["offset"]
            ),
            key=lambda log: int(log.stem),
        )
        run = cli("inspect", segment, "--offset", rows[len(rows) // 2]["offset"])
        assert run.status == 0, run.err
        page = tmp_path / f"{partition.name}.html"
        assert cli("inspect", segment, "--html", page).status == 0
        assert page.stat().st_size > 1000


# --- damaged copies -------------------------------------------------------------------------


@pytest.fixture
def partition(generated, tmp_path) -> Path:
    """A copy of a generated partition with several segments and a .txnindex."""
    source = generated / "orders-0"
    assert len(list(source.glob("*.log"))) >= 3 and list(source.glob("*.txnindex"))
    copy = tmp_path / "orders-0"
    shutil.copytree(source, copy)
    return copy


def segments(partition: Path) -> list[Path]:
    return sorted(partition.glob("*.log"))


def every_command(path: Path, tmp_path: Path) -> dict[str, Run]:
    runs = {f"dump {mode}": cli("dump", *args, path) for mode, args in DUMP_MODES.items()}
    runs["verify"] = cli("verify", path)
    runs["verify --json"] = cli("verify", "--json", path)
    if not path.is_dir():
        runs["inspect"] = cli("inspect", path)
        runs["inspect --html"] = cli("inspect", path, "--html", tmp_path / "page.html")
    if not path.is_file():
        runs["find"] = cli("find", path, "--offset", "0")
    return runs


def test_flipped_crc_byte(partition, tmp_path):
    log = segments(partition)[0]
    data = bytearray(log.read_bytes())
    target = frames(bytes(data))[1]
    data[target.crc_at] ^= 0x5A
    log.write_bytes(bytes(data))
    for run in [
        *every_command(log, tmp_path).values(),
        *every_command(partition, tmp_path).values(),
    ]:
        if run.argv[0] == "inspect":
            assert run.status == 0  # the first batch is intact
            continue
        if run.argv[0] == "find":
            assert run.status == 0  # offset 0 is in the intact first batch
            continue
        assert run.status == 1, run
        assert_names(run, log.parent, target.position)
        assert str(log) in "".join(run.error_lines())
    inspect = cli("inspect", log, "--position", target.position)
    assert inspect.status == 1
    assert_names(inspect, log, target.position)
    find = cli("find", partition, "--offset", target.base_offset)
    assert find.status == 1
    assert_names(find, log, target.position)
    # The batches after it are still read.
    rows = records(cli("dump", "--jsonl", log).out)
    assert rows and rows[-1]["offset"] >= frames(bytes(data))[-1].base_offset


def test_truncated_last_segment(partition, tmp_path):
    log = segments(partition)[-1]
    data = log.read_bytes()
    last = frames(data)[-1]
    cut = last.position + 30
    log.write_bytes(data[:cut])
    runs = every_command(log, tmp_path) | every_command(partition, tmp_path)
    for name, run in runs.items():
        assert run.status == 0, (name, run)
    assert f"Found 30 invalid bytes at the end of {log.name}" in runs["dump text"].out.splitlines()
    assert f"Found 30 invalid bytes at the end of {log}" in runs["dump jsonl"].err
    warnings = [line for line in runs["verify"].out.splitlines() if line.startswith("warning:")]
    assert any(
        str(log) in w and f"@{last.position}" in w and "30 invalid bytes" in w for w in warnings
    )
    # The records of the cut batch are gone; look-ups say so, naming the partition.
    lost = cli("find", partition, "--offset", last.base_offset + 10**6)
    assert lost.status == 1
    assert_names(lost, partition)


def test_lying_length(partition, tmp_path):
    """A length running past the end of the file while whole batches follow is broken: damage
    at its position, named alike by every command (Kafka's reader would stop there as at a
    truncated tail; an audit must not take the rest of the segment for one)."""
    log = segments(partition)[-1]
    data = bytearray(log.read_bytes())
    liar = frames(bytes(data))[2]
    struct.pack_into(">i", data, liar.position + 8, 0x7FFFFFF0)
    log.write_bytes(bytes(data))
    runs = every_command(log, tmp_path)
    for name, run in runs.items():
        if name.startswith("inspect"):  # the first batch, before the lie
            assert run.status == 0, (name, run)
            continue
        assert run.status == 1, (name, run)
        assert "is broken" in run.out + run.err, (name, run)
        if name != "verify --json":
            assert_names(run, log, liar.position)
    text = runs["dump text"].out.splitlines()
    assert len([line for line in text if "baseOffset:" in line]) == 2  # the ones before it
    # In its partition: the same damage; the segment's index entries past it point at whole
    # batches whose CRCs hold (the readers use them), so verify does not flag them.
    for mode, args in DUMP_MODES.items():
        assert cli("dump", *args, partition).status == 1, mode
    verify = cli("verify", partition)
    assert verify.status == 1
    assert_names(verify, partition)
    index = log.with_suffix(".index")
    past = [line for line in verify.error_lines() if str(index) in line]
    assert past == []
    inspect = cli("inspect", log, "--position", liar.position)
    assert inspect.status == 1
    assert_names(inspect, log, liar.position)
    assert f"batch length {0x7FFFFFF0} is broken" in inspect.err


@pytest.mark.parametrize("name", ["zeros", "ones"])
def test_unsteppable_lengths(partition, tmp_path, name):
    """A length below the smallest batch cannot be stepped over: reading stops with an
    error at that position."""
    log = segments(partition)[1]
    data = bytearray(log.read_bytes())
    at = frames(bytes(data))[1].position
    data[at:] = (b"\0" if name == "zeros" else b"\xff") * (len(data) - at)
    log.write_bytes(bytes(data))
    for run in [
        *every_command(log, tmp_path).values(),
        *every_command(partition, tmp_path).values(),
    ]:
        if run.argv[0] in ("inspect", "find"):
            assert run.status == 0  # the first batch / offset 0 are intact
            continue
        assert run.status == 1, run
        assert_names(run, partition, at)


def test_all_zero_file(tmp_path):
    log = tmp_path / "zeros-0" / "00000000000000000000.log"
    log.parent.mkdir()
    log.write_bytes(bytes(4096))
    runs = every_command(log, tmp_path) | every_command(log.parent, tmp_path)
    for name, run in runs.items():
        assert run.status == 1, name
        assert_names(run, log, 0)
        assert "length 0" in "".join(run.error_lines())


def test_empty_file(tmp_path):
    log = tmp_path / "empty-0" / "00000000000000000000.log"
    log.parent.mkdir()
    log.write_bytes(b"")
    runs = every_command(log, tmp_path)
    in_dir = every_command(log.parent, tmp_path)
    for name in [f"dump {mode}" for mode in DUMP_MODES] + ["verify", "verify --json"]:
        for run in (runs[name], in_dir[name]):
            assert run.status == 0, name  # a new segment is empty
            assert run.err == ""
    assert runs["dump text"].out == f"Dumping {log}\nLog starting offset: 0\n"
    assert runs["dump jsonl"].out == in_dir["dump jsonl"].out == ""
    for name in ("inspect", "inspect --html"):  # nothing to show
        assert runs[name].status == 1
        assert_names(runs[name], log, 0)
    assert in_dir["find"].status == 1
    assert_names(in_dir["find"], log.parent)


def test_directory_without_logs(tmp_path):
    directory = tmp_path / "nothing"
    directory.mkdir()
    (directory / "readme.txt").write_text("no logs here")
    runs = every_command(directory, tmp_path)
    for name, run in runs.items():
        assert run.status == 1, name
        assert_names(run, directory)
    # inspect reads one file: a directory is a bad argument
    run = cli("inspect", directory)
    assert run.status == 2
    assert run.err.startswith(f"kafka-format inspect: error: {directory}: ")


def test_missing_path(tmp_path):
    missing = tmp_path / "absent-0" / "00000000000000000000.log"
    for name, run in every_command(missing, tmp_path).items():
        assert run.status == 1, name
        assert_names(run, missing)
    missing_dir = tmp_path / "absent-0"
    for args in (
        ("find", missing_dir, "--offset", 0),
        ("verify", missing_dir),
        ("dump", missing_dir),
    ):
        run = cli(*args)
        assert run.status == 1
        assert_names(run, missing_dir)


@pytest.mark.parametrize("suffix", ["index", "timeindex", "txnindex", "snapshot"])
@pytest.mark.parametrize("size", [53, 480])
def test_garbage_companion_files(partition, tmp_path, suffix, size):
    """Random bytes in place of an index or a snapshot: named with a position by dump and
    verify; look-ups still answer (a damaged index is scanned around, as the broker
    rebuilds it), and the logs still dump cleanly."""
    victim = sorted(partition.glob(f"*.{suffix}"))[0]
    victim.write_bytes(random.Random(f"{suffix}/{size}").randbytes(size))
    for args in DUMP_MODES.values():
        run = cli("dump", *args, victim)
        assert run.status == 1, run
        assert_names(run, victim)
        assert any("@" in line for line in run.error_lines())
    for run in (
        cli("verify", partition),
        cli("verify", "--json", partition),
        cli("verify", victim),
    ):
        assert run.status == 1
        errors = run.error_lines()
        assert any(str(victim) in line and "@" in line for line in errors), errors
        assert all(str(partition) in line for line in errors)
    rows = records(cli("dump", "--jsonl", partition).out)
    for row in (rows[0], rows[-1]):
        run = cli("find", partition, "--offset", row["offset"], "--jsonl")
        assert run.status == 0, run.err
        assert json.loads(run.out)["record"] == row
    assert cli("dump", "--deep-iteration", *segments(partition)).status == 0


def test_index_against_a_damaged_log_is_reported(partition):
    """The .index is intact, its log lost its tail: entries past the end are errors."""
    index = sorted(partition.glob("*.index"))[0]
    entries = list(struct.iter_unpack(">ii", index.read_bytes()))
    assert entries
    log = index.with_suffix(".log")
    log.write_bytes(log.read_bytes()[: entries[-1][1]])
    run = cli("dump", "--verify-index-only", index)
    assert run.status == 1
    n = len(entries) - 1
    assert_names(run, index, n * 8)
    assert "points past" in run.err


# --- usage errors -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "argv",
    [
        [],
        ["no-such-command"],
        ["dump"],
        ["dump", "--max-bytes", "0", "x.log"],
        ["dump", "--key-decoder", "klingon", "x.log"],
        ["dump", "--isolation", "sometimes", "x.log"],
        ["find", "somewhere"],
        ["find", "somewhere", "--offset", "1", "--timestamp", "2"],
        ["find", "somewhere", "--timestamp", "yesterday"],
        ["find", "somewhere", "--offset", "ten"],
        ["verify"],
        ["inspect"],
        ["inspect", "x.log", "--position", "-1"],
        ["inspect", "x.log", "--offset", "1", "--position", "2"],
        ["generate"],
        ["generate", "d", "--size", "lots"],
    ],
    ids=lambda argv: " ".join(argv) or "nothing",
)
def test_usage_errors_exit_2(argv):
    run = cli(*argv)
    assert run.status == 2
    assert run.out == ""
    assert "usage: kafka-format" in run.err
    assert run.err.splitlines()[-1].startswith("kafka-format")  # one line saying what is wrong


# --- as a user runs them ----------------------------------------------------------------------


def kafka_format(*args: object, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "kafka_format", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=120,
        **kwargs,
    )


def test_subprocess_damage_and_usage(partition, tmp_path):
    log = segments(partition)[0]
    data = bytearray(log.read_bytes())
    target = frames(bytes(data))[1]
    data[target.crc_at] ^= 0x01
    log.write_bytes(bytes(data))
    garbage = sorted(partition.glob("*.timeindex"))[0]
    garbage.write_bytes(random.Random(3).randbytes(100))
    zeros = tmp_path / "zeros.log"
    zeros.write_bytes(bytes(100))
    missing = tmp_path / "absent.log"

    dump = kafka_format("dump", "--deep-iteration", log, garbage, zeros, missing)
    assert dump.returncode == 1
    assert "Traceback" not in dump.stderr
    for path in (log, garbage, zeros, missing):
        assert str(path) in dump.stderr
    assert f"{log} @{target.position}" in dump.stderr

    verify = kafka_format("verify", partition, zeros, missing)
    assert verify.returncode == 1 and "Traceback" not in verify.stderr
    assert f"{log} @{target.position}" in verify.stdout

    usage = kafka_format("find", partition)
    assert usage.returncode == 2 and usage.stderr.startswith("usage: kafka-format find")


def test_subprocess_output_cut_short(generated):
    """``kafka-format dump ... | head``: the reader goes away; no traceback, status 0."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "kafka_format", "dump", "--print-data-log", generated],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None and proc.stderr is not None
    first = proc.stdout.readline()
    proc.stdout.close()
    err = proc.stderr.read()
    proc.stderr.close()
    assert proc.wait(timeout=60) == 0
    assert first.startswith(b"Dumping ")
    assert b"Traceback" not in err and b"BrokenPipe" not in err
