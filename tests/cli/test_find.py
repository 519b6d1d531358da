"""``kafka-format find`` (runtime/find.py): the broker's look-ups from the command line.

Partition directories come from test_segment.py's broker-like writer (loaded by path), whose
records are the oracle. Most checks call the CLI's ``main`` in-process (argument parsing
included); the exit-status and no-traceback contract is checked on real subprocesses.
"""

from __future__ import annotations

import argparse
import base64
import importlib.util
import json
import shutil
import struct
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

from kafka_format.runtime.cli import main
from kafka_format.runtime.cli.args import parse_timestamp


def _load_writer():
    """test_segment.py's broker-like writer (tests/ is not a package)."""
    name = "_kafka_format_test_segment_writer"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(
            name, Path(__file__).resolve().parents[1] / "log" / "test_partition.py"
        )
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


writer = _load_writer()


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


def find(capsys, *args) -> tuple[int, str, str]:
    status = main(["find", *map(str, args)])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return status, out, err


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    return writer.build_partition(tmp_path_factory.mktemp("find") / "orders-2", seed=33)


def check_text(out: str, rec, directory: Path) -> None:
    lines = out.splitlines()
    log = directory / f"{rec.segment:020d}.log"
    assert lines[0] == f"Segment: {log} (base offset {rec.segment})"
    assert lines[1].startswith(f"Position: {rec.position} (")
    batch_line = next(line for line in lines if line.startswith(("baseOffset: ", "offset: ")))
    assert f" position: {rec.position} " in batch_line
    assert batch_line.endswith("isvalid: true")
    record_line = lines[-1]
    assert record_line.startswith(f"| offset: {rec.offset} CreateTime: {rec.timestamp} ")
    value_size = -1 if rec.value is None else len(rec.value)
    assert f" valueSize: {value_size}" in record_line


def test_offsets_match_brute_force(capsys, written):
    end = written.next_offset
    for target in [0, 1, *range(5, end, 23), end - 1]:
        status, out, err = find(capsys, written.dir, "--offset", target)
        assert status == 0, err
        rec = writer.brute_offset(written, target)
        check_text(out, rec, written.dir)
        assert "(offset index;" in out


def test_compacted_offset_gives_the_next_record(capsys, written):
    present = {r.offset for r in written.records}
    target = next(o for o in range(written.next_offset) if o not in present)
    status, out, _ = find(capsys, written.dir, "--offset", target)
    assert status == 0
    rec = writer.brute_offset(written, target)
    assert f"Note: offset {target} is not in the log" in out
    assert f"next record is at offset {rec.offset}" in out
    check_text(out, rec, written.dir)


def test_control_record(capsys, written):
    marker = next(r for r in written.records if r.control == writer.ABORT)
    status, out, _ = find(capsys, written.dir, "--offset", marker.offset)
    assert status == 0
    assert "isControl: true" in out
    assert out.splitlines()[-1].endswith("endTxnMarker: ABORT coordinatorEpoch: 3")


def test_timestamps_match_brute_force(capsys, written):
    stamps = sorted({r.timestamp for r in written.records})
    for target in [stamps[0] - 5, *stamps[::37], stamps[-1]]:
        status, out, err = find(capsys, written.dir, "--timestamp", target)
        assert status == 0, err
        check_text(out, writer.brute_timestamp(written, target), written.dir)
        assert "(offset index and time index;" in out


def test_iso_timestamp_equals_epoch(capsys, written):
    rec = written.records[len(written.records) // 2]
    iso = datetime.fromtimestamp(rec.timestamp / 1000, tz=UTC).isoformat(timespec="milliseconds")
    assert find(capsys, written.dir, "--timestamp", iso) == find(
        capsys, written.dir, "--timestamp", rec.timestamp
    )


def test_jsonl(capsys, written):
    target = written.records[-3].offset
    status, out, _ = find(capsys, written.dir, "--offset", target, "--jsonl")
    assert status == 0
    (line,) = out.splitlines()
    data = json.loads(line)
    # compact, as dump --jsonl writes its lines: one tool, one JSON style
    assert line == json.dumps(data, separators=(",", ":"))
    rec = writer.brute_offset(written, target)
    assert data["segment"] == str(written.dir / f"{rec.segment:020d}.log")
    assert data["segmentBaseOffset"] == rec.segment
    assert data["position"] == rec.position == data["batch"]["position"]
    assert data["usedIndex"] is True and data["indexNote"] is None
    assert data["record"]["offset"] == rec.offset
    assert data["record"]["timestamp"] == rec.timestamp
    assert base64.b64decode(data["record"]["value"]) == rec.value
    assert data["batch"]["isvalid"] is True
    assert data["bytesRead"] < sum(len(s.data) for s in written.segments)


def test_print_data_log(capsys, written):
    rec = next(r for r in written.records if r.key is not None and r.control is None)
    status, out, _ = find(
        capsys, written.dir, "--offset", rec.offset, "--print-data-log", "--value-decoder", "hex"
    )
    assert status == 0
    assert out.splitlines()[-1].endswith(f"key: {rec.key.decode()} payload: {rec.value.hex()}")


def test_nothing_found(capsys, written):
    status, out, err = find(capsys, written.dir, "--offset", written.next_offset)
    assert status == 1 and out == ""
    assert f"no record at or after offset {written.next_offset}" in err
    assert f"log ends before offset {written.next_offset}" in err
    status, out, err = find(capsys, written.dir, "--offset", -3)
    assert status == 1 and "below the log start offset 0" in err
    newest = max(r.timestamp for r in written.records)
    status, out, err = find(capsys, written.dir, "--timestamp", newest + 1)
    assert status == 1 and out == ""
    assert f"the largest timestamp in the log is {newest}" in err


def test_damaged_index_is_reported_and_bypassed(tmp_path, capsys, written):
    d = tmp_path / "orders-2"
    shutil.copytree(written.dir, d)
    seg = written.segments[0]
    index = d / f"{seg.base:020d}.index"
    entries = list(seg.index)
    entries[-1] = (entries[-1][0], len(seg.data) + 4096)
    index.write_bytes(b"".join(struct.pack(">ii", o - seg.base, p) for o, p in entries))
    target = entries[-1][0] + 1
    status, out, _ = find(capsys, d, "--offset", target)
    assert status == 0
    check_text(out, writer.brute_offset(written, target), d)
    assert "scanned from the start of the segment: " in out and "past the end" in out


def test_corrupt_batch_is_shown_and_fails(tmp_path, capsys, written):
    d = tmp_path / "orders-2"
    shutil.copytree(written.dir, d)
    rec = written.records[10]
    log = d / f"{rec.segment:020d}.log"
    data = bytearray(log.read_bytes())
    data[rec.position + 17] ^= 0xFF
    log.write_bytes(bytes(data))
    status, out, err = find(capsys, d, "--offset", rec.offset)
    assert status == 1
    assert "isvalid: false" in out
    assert f"{log} @{rec.position}" in err and "stored crc" in err


def test_log_dir_and_missing_dir(tmp_path, written):
    shutil.copytree(written.dir, tmp_path / "orders-2")
    proc = run_cli("find", tmp_path, "--offset", "0")
    assert proc.returncode == 2  # a bad argument: find looks in one partition
    assert proc.stderr.startswith(f"kafka-format find: error: {tmp_path}: ")
    assert "a log directory, not a partition directory" in proc.stderr and "orders-2" in proc.stderr
    proc = run_cli("find", tmp_path / "absent-0", "--offset", "0")
    assert proc.returncode == 1 and "not a directory" in proc.stderr


def test_subprocess_contract(written):
    rec = written.records[5]
    proc = run_cli("find", written.dir, "--offset", rec.offset)
    assert proc.returncode == 0
    check_text(proc.stdout, rec, written.dir)
    proc = run_cli("find", written.dir, "--offset", written.next_offset + 10)
    assert proc.returncode == 1 and proc.stdout == "" and "no record" in proc.stderr
    proc = run_cli("find", written.dir, "--timestamp", "yesterday")
    assert proc.returncode == 2 and "ISO-8601" in proc.stderr
    proc = run_cli("find", written.dir)
    assert proc.returncode == 2  # one of --offset / --timestamp is required
    proc = run_cli("find", "--help")
    assert proc.returncode == 0 and "examples:" in proc.stdout and "--timestamp" in proc.stdout


def test_corpus_partition(tmp_path, capsys):
    src = writer.corpus_dir("recordupdater")
    d = tmp_path / "hello-0"
    d.mkdir()
    shutil.copy(src / "hello-0.00000000000000000000.log.bin", d / f"{0:020d}.log")
    shutil.copy(src / "hello-0.00000000000000000000.timeindex", d / f"{0:020d}.timeindex")
    rows = [json.loads(x) for x in (src / "hello-0.00000000000000000000.log.jsonl").open()]
    row = rows[3]
    status, out, _ = find(capsys, d, "--offset", row["offset"], "--jsonl")
    assert status == 0
    data = json.loads(out)
    assert data["record"] == row
    assert data["usedIndex"] is False and "no offset index" in data["indexNote"]
    status, out, _ = find(capsys, d, "--timestamp", row["timestamp"] - 1)
    assert status == 0
    assert out.splitlines()[-1].startswith(f"| offset: {row['offset']} CreateTime: ")
    assert "offset: 3 position: " in out  # kafka-dump-log's legacy batch line


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1700000000000", 1_700_000_000_000),
        ("0", 0),
        ("2023-11-14T22:13:20Z", 1_700_000_000_000),
        ("2023-11-14T22:13:20.250+00:00", 1_700_000_000_250),
        ("2023-11-14T23:13:20+01:00", 1_700_000_000_000),
        ("2023-11-14T22:13:20", 1_700_000_000_000),  # no zone: UTC
        ("2023-11-14", 1_699_920_000_000),
    ],
)
def test_parse_timestamp(text, expected):
    assert parse_timestamp(text) == expected


def test_parse_timestamp_refuses_garbage():
    with pytest.raises(argparse.ArgumentTypeError):
        parse_timestamp("soon")


# --- ListOffsets' special timestamps and the segment the search ends in ------------------------


@pytest.mark.parametrize("spec", ["latest", "-1", "LATEST"])
def test_latest_is_the_log_end_offset(capsys, written, spec):
    status, out, _ = find(capsys, written.dir, "--timestamp", spec)
    assert status == 0
    assert (
        out
        == f"Latest: offset {written.next_offset} (the log end offset: the next record's offset)\n"
    )
    status, out, _ = find(capsys, written.dir, "--timestamp", spec, "--jsonl")
    assert (
        out == json.dumps({"spec": "latest", "offset": written.next_offset}).replace(" ", "") + "\n"
    )


@pytest.mark.parametrize("spec", ["earliest", "-2"])
def test_earliest_is_the_record_at_the_log_start_offset(capsys, written, spec):
    status, out, _ = find(capsys, written.dir, "--timestamp", spec)
    assert status == 0
    first = min(written.records, key=lambda r: r.offset)
    check_text(out, first, written.dir)


@pytest.mark.parametrize("spec", ["max-timestamp", "-3"])
def test_max_timestamp_is_the_first_record_with_the_largest_timestamp(capsys, written, spec):
    # The writer's timestamps go back and forth, so the largest is not the last record's.
    largest = max(r.timestamp for r in written.records)
    first = min((r for r in written.records if r.timestamp == largest), key=lambda r: r.offset)
    assert first.offset != max(r.offset for r in written.records)
    status, out, _ = find(capsys, written.dir, "--timestamp", spec)
    assert status == 0
    check_text(out, first, written.dir)


@pytest.mark.parametrize(
    ("bad", "says"),
    [
        ("-4", "-1 (latest), -2 (earliest) or -3 (max-timestamp)"),
        ("-100", "-1 (latest), -2 (earliest) or -3 (max-timestamp)"),
        ("newest", "neither epoch milliseconds nor an ISO-8601 date-time"),
    ],
)
def test_other_negative_timestamps_and_words_are_refused(capsys, written, bad, says):
    with pytest.raises(SystemExit) as exit_info:
        main(["find", str(written.dir), "--timestamp", bad])
    assert exit_info.value.code == 2
    assert says in capsys.readouterr().err


def _magic0_then_v2(log_dir: Path):
    """orders-0: a magic-0 segment (no timestamps) at 0..2, then a v2 segment at 3..5 with
    timestamps 1000, 2000, 3000."""
    from kafka_format.runtime.write.writer import Message, PartitionWriter

    with PartitionWriter(log_dir, "orders", 0) as w:
        w.append([Message(b"k", b"v0"), Message(b"k", b"v1"), Message(b"k", b"v2")], magic=0)
        w.roll()
        w.append([Message(b"k", f"w{i}".encode(), timestamp=1000 * (i + 1)) for i in range(3)])
    return log_dir / "orders-0"


def test_a_segment_without_timestamps_counts_its_modification_time(tmp_path, capsys):
    """LogSegment.largestTimestamp: with no record timestamp, the file's mtime. A search for a
    timestamp at or below it lands in that segment, finds no record there, and ends: the
    broker does not go on to the next segment (UnifiedLog.fetchOffsetByTimestamp)."""
    import os

    directory = _magic0_then_v2(tmp_path)
    first = directory / f"{0:020d}.log"
    os.utime(first, (5, 5))  # 5 s after the epoch: 5000 ms, above every v2 timestamp
    status, _, err = find(capsys, directory, "--timestamp", "2000")
    assert status == 1
    assert "no record with a timestamp >= 2000" in err
    os.utime(first, (0.5, 0.5))  # 500 ms: below the target, so the v2 segment is searched
    status, out, _ = find(capsys, directory, "--timestamp", "2000")
    assert status == 0
    assert "| offset: 4 CreateTime: 2000 " in out
    # max-timestamp skips records without one
    status, out, _ = find(capsys, directory, "--timestamp", "max-timestamp")
    assert status == 0 and "| offset: 5 CreateTime: 3000 " in out
