"""``kafka-format recover`` (runtime/cli/recover.py): the report, the exit status, one line for
every refusal, the progress line, and a copy that ``kafka-format verify`` passes.

Damage is made at a batch whose position comes from walking the frames with ``struct``, so the
positions the report names are checked against an independent walk.
"""

from __future__ import annotations

import importlib.util
import json
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from kafka_format.runtime.cli import main
from kafka_format.runtime.write.generate import generate_log_dir

_FRAME = struct.Struct(">qi")


def _load_progress_helpers():
    """test_progress.py's pseudo-terminal runner (tests/ is not a package)."""
    name = "_kafka_format_test_progress"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(
            name, Path(__file__).resolve().parents[1] / "test_progress.py"
        )
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


def run_cli(*args) -> subprocess.CompletedProcess:
    proc = subprocess.run(
        [sys.executable, "-m", "kafka_format.runtime.cli", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "Traceback" not in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stdout, proc.stdout
    return proc


def recover_cli(capsys, *args) -> tuple[int, str, str]:
    status = main(["recover", *map(str, args)])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return status, out, err


def frames(path: Path) -> list[tuple[int, int]]:
    """(position, size) of each batch, walked with struct."""
    data = path.read_bytes()
    found, pos = [], 0
    while pos + 12 <= len(data):
        size = 12 + _FRAME.unpack_from(data, pos)[1]
        found.append((pos, size))
        pos += size
    return found


@pytest.fixture(scope="module")
def source(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("cli-recover") / "kafka"
    generate_log_dir(root, topics=["orders"], partitions=2, records=250, segment_bytes=16384)
    return root


@pytest.fixture
def damaged(source: Path, tmp_path: Path) -> tuple[Path, Path, int]:
    """A copy whose orders-0 has a flipped bit in the 3rd batch of its 2nd segment; returns
    the copy, the damaged segment and the batch's position."""
    copy = tmp_path / "damaged"
    shutil.copytree(source, copy)
    segment = sorted((copy / "orders-0").glob("*.log"))[1]
    position, size = frames(segment)[2]
    raw = bytearray(segment.read_bytes())
    raw[position + size - 5] ^= 0x01
    segment.write_bytes(bytes(raw))
    return copy, segment, position


def test_text_report_and_a_copy_that_verifies(capsys, damaged, tmp_path):
    copy, segment, position = damaged
    out = tmp_path / "out"
    status, stdout, _ = recover_cli(capsys, copy, out)
    assert status == 1  # the source held damage; the copy is written all the same
    assert f"dropped {segment} @{position}.." in stdout
    assert "stored crc32c 0x" in stdout
    assert "--salvage keeps them" in stdout
    assert "after the truncation point" in stdout
    assert "orders-1: " in stdout and "nothing dropped" in stdout
    assert f"verify {out}: no errors" in stdout
    assert run_cli("verify", out).returncode == 0


def test_json_report(capsys, damaged, tmp_path):
    copy, segment, position = damaged
    out = tmp_path / "out"
    status, stdout, _ = recover_cli(capsys, "--json", "--salvage", copy, out)
    assert status == 1  # damage in the source
    report = json.loads(stdout)
    assert report["mode"] == "salvage"
    assert report["verified"] is True and report["verify_errors"] == []
    assert report["partitions_damaged"] == 1
    part = next(p for p in report["partitions"] if p["partition"] == 0)
    (dropped,) = part["dropped"]
    end = position + dict(frames(segment))[position]  # the bit flip left the length whole
    assert (dropped["file"], dropped["start"], dropped["end"]) == (str(segment), position, end)
    assert dropped["cause"].startswith("stored crc32c")
    assert part["segments_dropped"] == []
    assert len(part["offsets_lost"]) == 1
    assert report["batches_kept"] == sum(p["batches_kept"] for p in report["partitions"])


def test_quiet_lists_only_damaged_partitions(capsys, damaged, tmp_path):
    copy, _, _ = damaged
    status, stdout, _ = recover_cli(capsys, "--salvage", "-q", copy, tmp_path / "out")
    assert status == 1
    assert "orders-0: " in stdout and "orders-1: " not in stdout


@pytest.mark.parametrize("case", ["not-empty", "inside", "missing"])
def test_refusals_are_one_line(source, tmp_path, case):
    dest = tmp_path / "dest"
    src: Path = source
    if case == "not-empty":
        dest.mkdir()
        (dest / "keep.txt").write_text("mine")
    elif case == "inside":
        src = tmp_path / "src"
        shutil.copytree(source, src)
        dest = src / "orders-0" / "recovered"
    else:
        src = tmp_path / "missing"
    proc = run_cli("recover", src, dest)
    # a DEST that cannot be written is the command line's fault (2); a SRC that is not there,
    # the data's (1)
    assert proc.returncode == (1 if case == "missing" else 2)
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("kafka-format recover: error: ")
    assert proc.stdout == ""
    if case == "not-empty":
        assert sorted(p.name for p in dest.iterdir()) == ["keep.txt"]
    if case == "inside":
        assert not dest.exists()


def test_nothing_kept_is_exit_1_and_salvage_gets_the_rest(source, tmp_path):
    """Damage in the first batch: Kafka's recovery keeps nothing of the partition."""
    src = tmp_path / "src"
    shutil.copytree(source / "orders-0", src)
    first = sorted(src.glob("*.log"))[0]
    raw = bytearray(first.read_bytes())
    raw[40] ^= 0xFF
    first.write_bytes(bytes(raw))
    proc = run_cli("recover", src, tmp_path / "kafka")
    assert proc.returncode == 1
    assert "no batch could be kept" in proc.stderr and "--salvage" in proc.stderr
    proc = run_cli("recover", "--salvage", src, tmp_path / "salvaged")
    assert proc.returncode == 1, proc.stderr  # damage found; the rest kept
    assert "no batch could be kept" not in proc.stderr
    assert run_cli("verify", tmp_path / "salvaged").returncode == 0


def test_progress_on_a_terminal(damaged, tmp_path):
    helpers = _load_progress_helpers()
    copy, _, _ = damaged
    status, stdout, terminal = helpers.run_on_pty(
        ["recover", str(copy), str(tmp_path / "out")], env=helpers.low_threshold()
    )
    assert status == 1  # the source is damaged
    assert "recover: " in terminal and " / " in terminal
    assert b"recover: " not in stdout.replace(b"Recovered", b"")


def test_a_batch_whose_records_do_not_read_is_where_recovery_truncates(capsys, source, tmp_path):
    """A batch whose CRC holds although its records do not read is damage for verify and
    every reader, so the default mode truncates before it (Kafka's recovery, which never
    decodes records, would keep it): exit 1, the batch named, and the copy verifies."""
    from kafka.record.util import calc_crc32c

    copy = tmp_path / "src"
    shutil.copytree(source, copy)
    segment = sorted((copy / "orders-1").glob("*.log"))[0]
    data = bytearray(segment.read_bytes())
    position, size = next(
        (p, n) for p, n in frames(segment) if data[p + 16] == 2 and data[p + 22] & 0x27 == 0
    )
    count = struct.unpack_from(">i", data, position + 57)[0]
    struct.pack_into(">i", data, position + 57, count + 7)
    crc = calc_crc32c(bytes(data[position + 21 : position + size]))
    struct.pack_into(">I", data, position + 17, crc)
    segment.write_bytes(bytes(data))
    out = tmp_path / "out"
    status, stdout, _ = recover_cli(capsys, "--json", copy, out)
    assert status == 1  # the source is damaged
    report = json.loads(stdout)
    assert report["verified"] is True and not report["verify_errors"]
    damaged = {p["partition"]: p for p in report["partitions"] if p["dropped"]}
    assert set(damaged) == {1}
    first = damaged[1]["dropped"][0]
    assert first["start"] == position and first["cause"].startswith("records do not read")


@pytest.mark.parametrize("mode", [(), ("--salvage",)], ids=["kafka", "salvage"])
@pytest.mark.parametrize("shape", ["truncated tail", "empty log", "two bytes"])
def test_a_tail_or_an_empty_segment_is_no_damage(source, tmp_path, mode, shape):
    """What verify calls healthy or a warning, recover does not count as damage: exit 0, and
    the report says what it left out (the issue: recover --salvage exited 1 on an empty
    file and counted a truncated tail as damage)."""
    src = tmp_path / "src"
    shutil.copytree(source / "orders-0", src)
    last = sorted(src.glob("*.log"))[-1]
    raw = last.read_bytes()
    cut = {"truncated tail": raw[:-11], "empty log": b"", "two bytes": raw[:2]}[shape]
    last.write_bytes(cut)
    # the side files that would speak of what is gone (a broker rebuilds them after a crash)
    sides = (".index", ".timeindex") + ((".txnindex",) if shape != "truncated tail" else ())
    for side in sides:
        last.with_suffix(side).unlink(missing_ok=True)
    checked = run_cli("verify", src)
    assert checked.returncode == 0, checked.stdout
    proc = run_cli("recover", "--json", *mode, src, tmp_path / "out")
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["partitions_damaged"] == 0 and report["verified"] is True
    (part,) = report["partitions"]
    assert part["dropped"] == [] and part["segments_dropped"] == []
    if shape != "empty log":
        (left,) = part["left_out"]
        assert (left["file"], left["end"]) == (str(last), len(cut))
        assert "invalid bytes at the end" in left["cause"]


def test_a_partition_metadata_the_broker_refuses_is_not_copied(source, tmp_path):
    """verify and recover judge partition.metadata as the broker parses it: a corrupt one is
    damage, left out of the copy (the broker writes it again) and reported."""
    src = tmp_path / "src"
    shutil.copytree(source / "orders-0", src)
    (src / "partition.metadata").write_text("version: 0\ntopicId: not base64\n")
    assert run_cli("verify", src).returncode == 1
    proc = run_cli("recover", "--json", src, tmp_path / "out")
    assert proc.returncode == 1
    (part,) = json.loads(proc.stdout)["partitions"]
    (dropped,) = part["dropped"]
    assert dropped["file"] == str(src / "partition.metadata")
    assert "topic_id" in dropped["cause"]
    assert not (tmp_path / "out" / "partition.metadata").exists()
