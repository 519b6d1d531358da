"""``kafka-format dump`` run as a user runs it: a subprocess, its stdout, stderr and status.

Oracles: the corpus .jsonl files, and for the text format the fields computed here from the
bytes with struct (kafka-dump-log's field names and order, ``DumpLogSegments.scala``).
"""

from __future__ import annotations

import json
import re
import shutil
import struct
import subprocess
import sys
import zlib
from pathlib import Path

import pytest
from crc32c import crc32c
from kafka.record.default_records import DefaultRecordBatchBuilder
from kafka.record.legacy_records import LegacyRecordBatchBuilder

from kafka_format.schemas.control_record_key import build_control_record_key
from kafka_format.schemas.end_txn_marker import build_end_txn_marker
from kafka_format.schemas.record import RecordSpec
from kafka_format.schemas.record_batch import build_record_batch

T0 = 1_700_000_000_000
FIELD = re.compile(r"(\w+): (\S+)")


def run(*args: str | Path, check_traceback: bool = True) -> subprocess.CompletedProcess:
    proc = subprocess.run(
        [sys.executable, "-m", "kafka_format", "dump", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    if check_traceback:
        assert "Traceback" not in proc.stderr, proc.stderr
        assert "Traceback" not in proc.stdout
    return proc


#: The keys ``dump --jsonl`` adds after the canonical ones: where each record was.
WHERE = ("topic", "partition", "file", "position")


def jsonl(text: str) -> list[list[tuple]]:
    """Each line as its (key, value) pairs in order: same keys, same order, same values; the
    keys saying where a record was (last, in that order) are left out, the canonical form's
    (the corpus's) compared."""
    lines = [json.loads(line, object_pairs_hook=list) for line in text.splitlines()]
    for pairs in lines:
        if tuple(k for k, _ in pairs[-4:]) == WHERE:
            del pairs[-4:]
    return lines


def expected_pairs(records: list[dict]) -> list[list[tuple]]:
    return jsonl("".join(json.dumps(r) + "\n" for r in records))


def v2_batch(base_offset: int, records: list[tuple], *, codec: int = 0, **producer) -> bytes:
    """kafka-python's batch; records are (key, value, headers); base offset set as a broker
    sets it."""
    builder = DefaultRecordBatchBuilder(
        2,
        codec,
        producer.get("transactional", False),
        producer.get("pid", -1),
        producer.get("epoch", -1),
        producer.get("seq", -1),
        1 << 30,
    )
    for i, (key, value, headers) in enumerate(records):
        builder.append(i, T0 + base_offset + i * 3, key, value, headers)
    built = bytearray(builder.build())
    struct.pack_into(">q", built, 0, base_offset)
    struct.pack_into(">i", built, 12, producer.get("leader_epoch", 0))
    return bytes(built)


def simple_batch(base_offset: int, n: int) -> bytes:
    return v2_batch(base_offset, [(b"k", f"v{base_offset + i}".encode(), []) for i in range(n)])


# --- JSON lines against the corpus ----------------------------------------------------------


def test_console_script_is_installed(manifest):
    script = Path(sys.executable).parent / "kafka-format"
    if not script.exists():
        script = shutil.which("kafka-format")
    assert script, "the kafka-format console script is not installed"
    corpus_set = next(s for s in manifest if s.crc_valid and s.entry["records"] > 1)
    proc = subprocess.run(
        [str(script), "dump", "--jsonl", str(corpus_set.path)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0
    assert jsonl(proc.stdout) == expected_pairs(corpus_set.expected())


def test_jsonl_of_every_valid_set(manifest):
    """All valid sets in one run (one process start instead of fifty): the output is each
    set's records in turn, compared set by set."""
    valid = [s for s in manifest if s.crc_valid]
    proc = run("--jsonl", *(s.path for s in valid))
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    printed = jsonl(proc.stdout)
    at = 0
    wrong = []
    for corpus_set in valid:
        expected = expected_pairs(corpus_set.expected())
        if printed[at : at + len(expected)] != expected:
            wrong.append(corpus_set.id)
        at += len(expected)
    assert wrong == []
    assert at == len(printed)
    # Byte for byte the corpus's own canonical form (compact JSON, same key order), then
    # where each record was: its set's file.
    lines = proc.stdout.splitlines(keepends=True)
    cuts = [line.rindex(',"topic":') for line in lines]
    canonical = "".join(line[:cut] + "}\n" for line, cut in zip(lines, cuts, strict=True))
    assert canonical == "".join(s.expected_path.read_text() for s in valid)
    files = [json.loads(line)["file"] for line in lines]
    assert files == [str(s.path) for s in valid for _ in s.expected()]


def test_jsonl_of_every_damaged_set(damaged_corpus_set):
    """Damaged batches are named on stderr (file, position, reason); status 1; the records
    of the intact batches are still printed."""
    path = damaged_corpus_set.path
    data = path.read_bytes()
    bad_positions = _bad_crc_positions(data)
    assert bad_positions
    proc = run("--jsonl", path)
    assert proc.returncode == 1
    errors = [line for line in proc.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == len(bad_positions)
    for line, position in zip(errors, bad_positions, strict=True):
        assert str(path) in line
        assert f"@{position}" in line
        assert "crc" in line
    # What is printed is what CRC-ignoring reading gives, minus the damaged batches.
    printed = jsonl(proc.stdout)
    unchecked = expected_pairs(damaged_corpus_set.expected())
    assert all(line in unchecked for line in printed)
    assert len(printed) < len(unchecked) or not unchecked
    proc = run("--jsonl", "--no-verify-crc", path)
    assert proc.returncode == 0
    assert jsonl(proc.stdout) == unchecked


def _bad_crc_positions(data: bytes) -> list[int]:
    bad = []
    pos = 0
    while len(data) - pos > 17:
        (length,) = struct.unpack_from(">i", data, pos + 8)
        end = pos + 12 + length
        if data[pos + 16] == 2:
            ok = struct.unpack_from(">I", data, pos + 17)[0] == crc32c(data[pos + 21 : end])
        else:
            ok = struct.unpack_from(">I", data, pos + 12)[0] == zlib.crc32(data[pos + 16 : end])
        if not ok:
            bad.append(pos)
        pos = end
    return bad


def test_jsonl_of_partition_and_log_directories(manifest, tmp_path):
    """Corpus sets copied as segments into partition directories: a log directory prints
    them partition by partition; a partition directory its own."""
    valid = [s for s in manifest if s.crc_valid and s.is_log]
    for i, corpus_set in enumerate(valid):
        directory = tmp_path / f"corpus-{i}"
        directory.mkdir()
        shutil.copy(corpus_set.path, directory / "00000000000000000000.log")
    proc = run("--jsonl", tmp_path)
    assert proc.returncode == 0, proc.stderr
    expected = [pair for s in valid for pair in expected_pairs(s.expected())]
    assert jsonl(proc.stdout) == expected
    one = next(i for i, s in enumerate(valid) if len(s.expected()) > 3)
    proc = run("--jsonl", tmp_path / f"corpus-{one}")
    assert proc.returncode == 0
    assert jsonl(proc.stdout) == expected_pairs(valid[one].expected())


def test_jsonl_segments_in_base_offset_order(tmp_path):
    directory = tmp_path / "t-0"
    directory.mkdir()
    for base in (30, 0, 10):
        (directory / f"{base:020d}.log").write_bytes(simple_batch(base, 2))
    proc = run("--jsonl", directory)
    assert proc.returncode == 0
    assert [json.loads(line)["offset"] for line in proc.stdout.splitlines()] == [
        0,
        1,
        10,
        11,
        30,
        31,
    ]


# --- damage -------------------------------------------------------------------------------


def test_corrupt_batch_between_good_ones(tmp_path):
    frames = [simple_batch(0, 2), simple_batch(2, 2), simple_batch(4, 2)]
    log = bytearray(b"".join(frames))
    middle = len(frames[0])
    log[middle + 30] ^= 0x40  # inside the CRC's scope
    path = tmp_path / "damaged.log"
    path.write_bytes(bytes(log))
    proc = run("--jsonl", path)
    assert proc.returncode == 1
    assert [json.loads(line)["offset"] for line in proc.stdout.splitlines()] == [0, 1, 4, 5]
    (error,) = proc.stderr.splitlines()
    assert str(path) in error and f"@{middle}" in error and "crc" in error
    # The text format shows the damaged batch too, marked invalid, and fails the same way.
    proc = run(path)
    assert proc.returncode == 1
    lines = [line for line in proc.stdout.splitlines() if "baseOffset:" in line]
    assert [line.endswith("isvalid: true") for line in lines] == [True, False, True]
    assert f"@{middle}" in proc.stderr


def test_truncated_tail_is_reported_not_failed(tmp_path):
    log = simple_batch(0, 3) + simple_batch(3, 1)[:25]
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(log)
    proc = run("--jsonl", path)
    assert proc.returncode == 0
    assert len(proc.stdout.splitlines()) == 3
    assert "Found 25 invalid bytes at the end of" in proc.stderr
    proc = run(path)
    assert proc.returncode == 0
    assert proc.stdout.splitlines()[-1] == f"Found 25 invalid bytes at the end of {path.name}"


BAD_INPUTS = {
    "missing": None,
    "empty": b"",
    "short-text": b"not a log",  # shorter than a batch header: a truncated tail
    # length 0x08090a0b runs past the end, but magic 16 is no batch's: damage, not a tail
    "garbage": bytes(range(256)) * 4,
    "zeros": b"\0" * 4096,  # length 0: cannot be stepped over
    "ones": b"\xff" * 100,  # length -1
    "lying-count": None,  # a valid frame and CRC around an impossible record count
}


def _bad_input(tmp_path: Path, name: str) -> Path:
    path = tmp_path / f"{name}.log"
    if name == "lying-count":
        frame = bytearray(simple_batch(0, 2))
        struct.pack_into(">i", frame, 57, 0x7FFFFFF0)
        struct.pack_into(">I", frame, 17, crc32c(bytes(frame[21:])))
        path.write_bytes(bytes(frame))
    elif BAD_INPUTS[name] is not None:
        path.write_bytes(BAD_INPUTS[name])
    return path


@pytest.mark.parametrize("name", list(BAD_INPUTS))
def test_bad_input_status_and_message(tmp_path, name):
    path = _bad_input(tmp_path, name)
    proc = run("--jsonl", path)
    assert proc.stdout == ""
    if name in ("empty",):
        assert (proc.returncode, proc.stderr) == (0, "")
    elif name == "short-text":
        assert proc.returncode == 0
        size = len(BAD_INPUTS[name])
        assert proc.stderr == f"Found {size} invalid bytes at the end of {path}\n"
    else:
        assert proc.returncode == 1
        (line,) = proc.stderr.splitlines()
        assert str(path) in line
        if name == "zeros":
            assert "@0" in line and "length 0" in line
        if name == "ones":
            assert "length -1" in line
        if name == "garbage":
            assert "@0" in line and "invalid magic 16" in line
        if name == "lying-count":
            assert "@0" in line and str(0x7FFFFFF0) in line


@pytest.mark.parametrize("mode", [[], ["--deep-iteration", "--print-data-log"], ["--batches"]])
def test_never_a_traceback(tmp_path, mode):
    """Every bad input in one run per output mode: one line of error each, no traceback."""
    paths = [_bad_input(tmp_path, name) for name in BAD_INPUTS]
    if mode == ["--batches"]:
        mode = ["--jsonl", "--batches"]
    proc = run(*mode, *paths)
    assert proc.returncode == 1
    failing = ["missing", "garbage", "zeros", "ones"]
    if "--deep-iteration" in mode:
        failing.append("lying-count")  # only found when the records are decoded
    for name in failing:
        assert str(tmp_path / f"{name}.log") in proc.stderr


def test_directory_without_logs_and_missing_directory(tmp_path):
    (tmp_path / "nothing").mkdir()
    (tmp_path / "nothing" / "readme.txt").write_text("no logs")
    for path in (tmp_path / "nothing", tmp_path / "absent-0"):
        proc = run("--jsonl", path)
        assert proc.returncode == 1
        assert str(path) in proc.stderr


# --- isolation ------------------------------------------------------------------------------


def _marker(base_offset: int, pid: int, *, commit: bool) -> bytes:
    record = RecordSpec(
        key=build_control_record_key(1 if commit else 0),
        value=build_end_txn_marker(5),
    )
    return build_record_batch(
        [record],
        base_offset=base_offset,
        base_timestamp=T0,
        producer_id=pid,
        producer_epoch=0,
        is_transactional=True,
        is_control=True,
    )


def test_read_committed_drops_aborted_records(tmp_path):
    def txn(base, pid, tag, n):
        records = [(None, f"{tag}{i}".encode(), []) for i in range(n)]
        return v2_batch(base, records, pid=pid, epoch=0, seq=0, transactional=True)

    log = (
        txn(0, 11, "aborted", 2)
        + txn(2, 12, "committed", 1)
        + simple_batch(3, 1)
        + txn(4, 11, "aborted-too", 1)
        + _marker(5, 11, commit=False)
        + _marker(6, 12, commit=True)
    )
    path = tmp_path / "txn.log"
    path.write_bytes(log)
    uncommitted = run("--jsonl", path)
    committed = run("--jsonl", "--isolation", "read_committed", path)
    assert uncommitted.returncode == committed.returncode == 0

    def values(proc):
        import base64

        return [base64.b64decode(json.loads(line)["value"]) for line in proc.stdout.splitlines()]

    assert values(uncommitted) == [b"aborted0", b"aborted1", b"committed0", b"v3", b"aborted-too0"]
    assert values(committed) == [b"committed0", b"v3"]
    # The text format shows the markers, as kafka-dump-log does, and no payload for them.
    text = run("--deep-iteration", "--print-data-log", path)
    assert text.returncode == 0
    marker_lines = [line for line in text.stdout.splitlines() if "endTxnMarker" in line]
    assert [line.split(" endTxnMarker: ")[1] for line in marker_lines] == [
        "ABORT coordinatorEpoch: 5",
        "COMMIT coordinatorEpoch: 5",
    ]
    assert all("payload" not in line for line in marker_lines)
    control_batches = [line for line in text.stdout.splitlines() if "isControl: true" in line]
    assert len(control_batches) == 2


# --- text format ----------------------------------------------------------------------------


def _pairs(line: str) -> list[tuple[str, str]]:
    return FIELD.findall(line)


def test_text_v2_batch_and_record_lines_field_by_field(tmp_path):
    records = [
        (b"key-0", b"value-0", [("trace", b"t"), ("span", None)]),
        (None, b"", []),
        (b"k", None, [("only", b"1")]),
    ]
    first = v2_batch(
        100, records, codec=0, pid=77, epoch=3, seq=2147483646, transactional=True, leader_epoch=9
    )
    second = v2_batch(103, [(b"x", b"y" * 300, [])], codec=1)
    path = tmp_path / "00000000000000000100.log"
    path.write_bytes(first + second)
    proc = run("--deep-iteration", path)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == f"Dumping {path}"
    assert lines[1] == "Log starting offset: 100"

    position = 0
    line_no = 2
    for frame, recs in ((first, records), (second, [(b"x", b"y" * 300, [])])):
        (
            base_offset,
            length,
            leader_epoch,
            _magic,
            crc,
            attributes,
            last_delta,
            _base_timestamp,
            max_ts,
            pid,
            epoch,
            base_seq,
            count,
        ) = struct.unpack_from(">qiibIhiqqqhii", frame)
        last_seq = -1 if base_seq < 0 else (base_seq + last_delta) % (1 << 31)
        expected = [
            ("baseOffset", str(base_offset)),
            ("lastOffset", str(base_offset + last_delta)),
            ("count", str(count)),
            ("baseSequence", str(base_seq)),
            ("lastSequence", str(last_seq)),
            ("producerId", str(pid)),
            ("producerEpoch", str(epoch)),
            ("partitionLeaderEpoch", str(leader_epoch)),
            ("isTransactional", "true" if attributes & 0x10 else "false"),
            ("isControl", "false"),
            ("deleteHorizonMs", "OptionalLong.empty"),
            ("position", str(position)),
            ("CreateTime", str(max_ts)),
            ("size", str(12 + length)),
            ("magic", "2"),
            ("compresscodec", {0: "none", 1: "gzip"}[attributes & 7]),
            ("crc", str(crc)),
            ("isvalid", "true" if crc == crc32c(frame[21:]) else "false"),
        ]
        assert _pairs(lines[line_no]) == expected
        line_no += 1
        for i, (key, value, headers) in enumerate(recs):
            sequence = -1 if base_seq < 0 else (base_seq + i) % (1 << 31)
            assert lines[line_no].startswith("| offset: ")
            assert _pairs(lines[line_no]) == [
                ("offset", str(base_offset + i)),
                ("CreateTime", str(T0 + base_offset + i * 3)),
                ("keySize", str(-1 if key is None else len(key))),
                ("valueSize", str(-1 if value is None else len(value))),
                ("sequence", str(sequence)),
                ("headerKeys", "[" + ",".join(h for h, _ in headers) + "]"),
            ]
            line_no += 1
        position += len(frame)
    assert line_no == len(lines)


@pytest.mark.parametrize("magic", [0, 1])
def test_text_legacy_lines(tmp_path, magic):
    builder = LegacyRecordBatchBuilder(magic, 0, 1 << 30)
    messages = [(b"k0", b"first"), (None, b"second"), (b"k2", None)]
    for i, (key, value) in enumerate(messages):
        builder.append(i, T0 + i if magic else None, key, value)
    data = bytes(builder.build())
    path = tmp_path / "legacy.bin"
    path.write_bytes(data)
    proc = run("--deep-iteration", path)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()[1:]
    ts_name = "CreateTime" if magic else "NoTimestampType"
    position = 0
    for i, (key, value) in enumerate(messages):
        offset, size, crc = struct.unpack_from(">qiI", data, position)
        ts = struct.unpack_from(">q", data, position + 18)[0] if magic else -1
        batch_line, record_line = lines[2 * i], lines[2 * i + 1]
        assert batch_line.startswith(f"offset: {offset} position: {position} ")
        assert _pairs(batch_line) == [
            ("offset", str(offset)),
            ("position", str(position)),
            (ts_name, str(ts)),
            ("size", str(12 + size)),
            ("magic", str(magic)),
            ("compresscodec", "none"),
            ("crc", str(crc)),
            ("isvalid", "true"),
        ]
        assert _pairs(record_line) == [
            ("offset", str(offset)),
            (ts_name, str(ts)),
            ("keySize", str(-1 if key is None else len(key))),
            ("valueSize", str(-1 if value is None else len(value))),
            ("isValid", "true"),
            ("crc", str(crc)),
        ]
        position += 12 + size


def test_text_print_data_log_with_hex_values(tmp_path):
    records = [(b"alpha", bytes([0, 1, 2, 254, 255]), []), (None, b"plain", []), (b"z", None, [])]
    path = tmp_path / "data.bin"
    path.write_bytes(v2_batch(0, records))
    proc = run("--print-data-log", "--value-decoder", "hex", path)
    assert proc.returncode == 0
    record_lines = [line for line in proc.stdout.splitlines() if line.startswith("| offset:")]
    assert len(record_lines) == 3
    assert record_lines[0].endswith(" key: alpha payload: 000102feff")
    assert record_lines[1].endswith(" headerKeys: [] payload: " + b"plain".hex())
    assert record_lines[2].endswith(" headerKeys: [] key: z")


def test_skip_record_metadata_lines_as_trunk_prints_them(tmp_path):
    """``--skip-record-metadata``: trunk's ``DumpLogSegments.dumpBatchRecords`` and
    ``printRecordContents`` (tools/.../DumpLogSegments.java, Kafka 4.1) start each record line
    with "| " and the first of key and payload, whichever is there; a control record's line
    is left empty (its metadata is what is skipped)."""
    records = [(b"alpha", b"one", []), (None, b"two", []), (b"z", None, []), (None, None, [])]
    path = tmp_path / "data.bin"
    path.write_bytes(v2_batch(0, records) + _control_batch(4, 1, b"\0\0\0\0\0\0"))
    proc = run("--deep-iteration", "--print-data-log", "--skip-record-metadata", path)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    body = [line for line in lines[1:] if not line.startswith(("baseOffset:", "Log starting"))]
    assert body == ["| key: alpha payload: one", "| payload: two", "| key: z", "", ""]


# --- kafka-dump-log parity: indexes, snapshots, KRaft snapshots, control records ------------


def dump_here(*args: object) -> tuple[int, str, str]:
    """``kafka-format dump ARGS`` in this process: (status, stdout, stderr)."""
    import contextlib
    import io

    from kafka_format.runtime.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            status = main(["dump", *map(str, args)])
        except SystemExit as exc:
            status = exc.code
    assert "Traceback" not in err.getvalue()
    return status, out.getvalue(), err.getvalue()


def _segment(tmp_path: Path, batches: list[tuple[int, int]], base: int = 0) -> tuple[Path, list]:
    """A segment of simple batches (base offset, record count); returns its path and each
    batch's (position, last offset, max timestamp), known from how they were built."""
    log = tmp_path / f"{base:020d}.log"
    data = b""
    facts = []
    for first, count in batches:
        facts.append((len(data), first + count - 1, T0 + first + (count - 1) * 3))
        data += simple_batch(first, count)
    log.write_bytes(data)
    return log, facts


def test_index_reports_in_kafka_dump_logs_words(tmp_path):
    log, facts = _segment(tmp_path, [(0, 2), (2, 3), (5, 1), (6, 3)])
    (p0, last0, ts0), (p1, last1, ts1), (p2, last2, ts2), (_, last3, ts3) = facts
    index = log.with_suffix(".index")
    index.write_bytes(
        struct.pack(">ii", last0, p0)  # right
        + struct.pack(">ii", last1 - 1, p1)  # the batch there ends one later
        + struct.pack(">ii", last2, p2)  # right
    )
    timeindex = log.with_suffix(".timeindex")
    timeindex.write_bytes(
        struct.pack(">qi", ts0, last0)  # right
        + struct.pack(">qi", ts1 + 7, last1)  # the log's largest timestamp is ts1
        + struct.pack(">qi", ts0 - 1, last2)  # goes back; and is not the log's ts2
        + struct.pack(">qi", ts3 + 100, last3 - 1)  # not the last offset of its batch
    )
    status, out, err = dump_here(index, timeindex)
    assert status == 1
    assert out.splitlines() == [
        f"Dumping {index}",
        f"offset: {last0} position: {p0}",
        f"offset: {last1 - 1} position: {p1}",
        f"offset: {last2} position: {p2}",
        f"Dumping {timeindex}",
        f"timestamp: {ts0} offset: {last0}",
        f"timestamp: {ts1 + 7} offset: {last1}",
        f"timestamp: {ts0 - 1} offset: {last2}",
        f"timestamp: {ts3 + 100} offset: {last3 - 1}",
    ]
    lines = err.splitlines()
    # Our sanity check on opening (Kafka's dump makes none unless asked) comes first...
    assert lines[0].startswith(f"error: {timeindex} @24 ")
    assert "is not above" in lines[0]
    # ...then kafka-dump-log's reports, as it prints them after all files.
    assert lines[1:] == [
        f"Mismatches in :{index.absolute()}",
        f"  Index offset: {last1 - 1}, log offset: {last1}",
        f"Found timestamp mismatch in :{timeindex.absolute()}",
        f"  Index timestamp: {ts1 + 7}, log timestamp: {ts1}",
        f"  Index timestamp: {ts0 - 1}, log timestamp: {ts2}",
        f"Found out of order timestamp in :{timeindex.absolute()}",
        f"  Index timestamp: {ts0 - 1}, Previously indexed timestamp: {ts1 + 7}",
        "The following indexed offsets are not found in the log.",
        f"Indexed offset: {last3 - 1}, found log offset: {last3}",
    ]
    # --verify-index-only: the same reports, no entries.
    status, out, err_only = dump_here("--verify-index-only", index, timeindex)
    assert status == 1
    assert out.splitlines() == [f"Dumping {index}", f"Dumping {timeindex}"]
    assert err_only == err


def test_index_entry_ending_a_later_batch_of_one_append(tmp_path):
    """Brokers before per-batch indexing wrote, for a multi-batch append, the last offset of
    the append at the first batch's position: Kafka's dump lists it as a mismatch, look-ups
    still work, so it fails nothing (verify calls it a warning)."""
    log, facts = _segment(tmp_path, [(0, 2), (2, 3), (5, 2), (7, 1)])
    index = log.with_suffix(".index")
    index.write_bytes(
        struct.pack(">ii", facts[2][1], facts[1][0]) + struct.pack(">ii", 7, facts[3][0])
    )
    status, _, err = dump_here("--verify-index-only", index)
    assert status == 0
    assert err.splitlines() == [
        f"Mismatches in :{index.absolute()}",
        f"  Index offset: {facts[2][1]}, log offset: {facts[1][1]}",
    ]


def test_index_entries_that_point_nowhere(tmp_path):
    log, facts = _segment(tmp_path, [(0, 2), (2, 3)])
    size = log.stat().st_size
    index = log.with_suffix(".index")
    index.write_bytes(struct.pack(">ii", 1, facts[0][0]) + struct.pack(">ii", 3, facts[1][0] + 5))
    status, _, err = dump_here("--verify-index-only", index)
    assert status == 1
    (line,) = err.splitlines()
    assert line.startswith(f"error: {index} @8: ")
    assert "inside the batch at" in line
    index.write_bytes(struct.pack(">ii", 1, facts[0][0]) + struct.pack(">ii", 4, size + 100))
    status, _, err = dump_here("--verify-index-only", index)
    assert status == 1
    assert err.splitlines() == [
        f"error: {index} @8: entry 1 (offset 4, position {size + 100}) points past the end of "
        f"the log ({size} bytes)"
    ]


def test_index_without_its_log(tmp_path):
    index = tmp_path / "00000000000000000000.index"
    index.write_bytes(struct.pack(">ii", 3, 4096))
    status, out, err = dump_here(index)
    assert status == 0
    assert out.splitlines() == [f"Dumping {index}", "offset: 3 position: 4096"]
    assert err == f"note: {index}: no .log beside it: entries not checked against the log\n"
    status, _, err = dump_here("--verify-index-only", index)
    assert status == 1
    assert err.startswith(f"error: {index}: no .log beside it")


def test_index_sanity_check(tmp_path):
    log, facts = _segment(tmp_path, [(0, 2), (2, 3), (5, 4)])
    index = log.with_suffix(".index")
    timeindex = log.with_suffix(".timeindex")
    index.write_bytes(struct.pack(">ii", 1, facts[0][0]) + struct.pack(">ii", 4, facts[1][0]))
    timeindex.write_bytes(struct.pack(">qi", facts[0][2], 1))
    status, out, err = dump_here("--index-sanity-check", index, timeindex)
    assert (status, err) == (0, "")
    assert out.splitlines() == [
        f"Dumping {index}",
        f"{index} passed sanity check.",
        f"Dumping {timeindex}",
        f"{timeindex} passed sanity check.",
    ]
    # Entries out of order, a partial entry: what makes the broker rebuild the index.
    index.write_bytes(struct.pack(">ii", 4, facts[1][0]) + struct.pack(">ii", 1, facts[0][0]))
    timeindex.write_bytes(struct.pack(">qi", facts[0][2], 1) + b"\0\0\0")
    status, out, err = dump_here("--index-sanity-check", index, timeindex)
    assert status == 1
    assert out.splitlines() == [f"Dumping {index}", f"Dumping {timeindex}"]
    first, second = err.splitlines()
    assert first.startswith(f"error: {index} @8 ") and "is not above" in first
    assert second.startswith(f"error: {timeindex} @12 ") and "15 bytes" in second
    index.write_bytes(b"")
    status, out, _ = dump_here("--index-sanity-check", index)
    assert (status, out.splitlines()) == (0, [f"Dumping {index}", f"{index} is empty."])


def test_max_message_size(tmp_path):
    log, facts = _segment(tmp_path, [(0, 2), (2, 30)])
    second = log.stat().st_size - facts[1][0]  # the size of the second batch
    index = log.with_suffix(".index")
    index.write_bytes(struct.pack(">ii", 1, facts[0][0]) + struct.pack(">ii", 31, facts[1][0]))
    assert dump_here("--verify-index-only", index)[0] == 0
    assert dump_here("--verify-index-only", "--max-message-size", second, index)[0] == 0
    limit = second - 1
    status, _, err = dump_here("--verify-index-only", "--max-message-size", limit, index)
    assert status == 1
    assert err.splitlines() == [
        f"error: {index} @8: entry 1 (offset 31, position {facts[1][0]}): the batch there is "
        f"{second} bytes, more than --max-message-size {limit}"
    ]


def _snapshot_file(path: Path, entries: list[tuple]) -> None:
    """ProducerSnapshot v1: version, CRC-32C of the rest, count, 46-byte entries."""
    body = struct.pack(">i", len(entries)) + b"".join(
        struct.pack(">qhiqiqiq", *entry) for entry in entries
    )
    path.write_bytes(struct.pack(">hI", 1, crc32c(body)) + body)


def test_snapshot_lines_as_kafka_prints_them(tmp_path):
    # producer id, epoch, last sequence, last offset, offset delta, timestamp,
    # coordinator epoch, current txn first offset
    entries = [
        (1000, 2, 40, 77, 4, T0, -1, -1),
        (2000, 0, 3, 90, 5, T0 + 5, 7, 85),  # the batch's first sequence wraps below 0
        (3000, 1, -1, -1, 0, T0 + 9, 3, 120),  # no batch metadata (last offset -1)
    ]
    snapshot = tmp_path / "00000000000000000100.snapshot"
    _snapshot_file(snapshot, entries)
    status, out, err = dump_here(snapshot)
    assert (status, err) == (0, "")
    # DumpLogSegments.dumpProducerIdSnapshot: the first sequence is
    # DefaultRecordBatch.decrementSequence(lastSeq, offsetDelta), which wraps to int32 max;
    # "lastTimestamp: N " keeps its space when no metadata follows.
    assert out.splitlines() == [
        f"Dumping {snapshot}",
        "producerId: 1000 producerEpoch: 2 coordinatorEpoch: -1 currentTxnFirstOffset: "
        f"OptionalLong.empty lastTimestamp: {T0} firstSequence: 36 lastSequence: 40 "
        f"lastOffset: 77 offsetDelta: 4 timestamp: {T0}",
        "producerId: 2000 producerEpoch: 0 coordinatorEpoch: 7 currentTxnFirstOffset: "
        f"OptionalLong[85] lastTimestamp: {T0 + 5} firstSequence: {2**31 - 2} lastSequence: 3 "
        f"lastOffset: 90 offsetDelta: 5 timestamp: {T0 + 5}",
        "producerId: 3000 producerEpoch: 1 coordinatorEpoch: 3 currentTxnFirstOffset: "
        f"OptionalLong[120] lastTimestamp: {T0 + 9} ",
    ]
    status, out, _ = dump_here("--jsonl", snapshot)
    rows = [json.loads(line) for line in out.splitlines()]
    assert rows[1]["firstSequence"] == 2**31 - 2
    assert "firstSequence" not in rows[2] and rows[2]["currentTxnFirstOffset"] == 120


def _control_batch(base_offset: int, control_type: int, value: bytes) -> bytes:
    return build_record_batch(
        [RecordSpec(key=build_control_record_key(control_type), value=value)],
        base_offset=base_offset,
        base_timestamp=T0,
        is_control=True,
    )


def test_kraft_snapshot_and_control_records(tmp_path):
    """A KRaft ``.checkpoint`` is dumped as a log, under kafka-dump-log's header line."""
    data = (
        _control_batch(0, 3, struct.pack(">hqB", 0, T0, 0))  # SnapshotHeader
        + simple_batch(1, 2)
        # LeaderChangeMessage v0 (flexible): version, leaderId 1, voters [1, 2] and granting
        # voters [1] as compact arrays (length + 1), each struct and the message ending in an
        # empty tagged-field count.
        + _control_batch(3, 2, b"\0\0\0\0\0\x01\x03\0\0\0\x01\0\0\0\0\x02\0\x02\0\0\0\x01\0\0")
        + _control_batch(4, 9, b"")  # a type this Kafka does not know
        + _control_batch(5, 5, struct.pack(">hhB", 0, 1, 0))  # KRaftVersion
        + _control_batch(6, 4, struct.pack(">hB", 0, 0))  # SnapshotFooter
    )
    snapshot = tmp_path / "00000000000000000120-0000000007.checkpoint"
    snapshot.write_bytes(data)
    bootstrap = tmp_path / "bootstrap.checkpoint"
    bootstrap.write_bytes(data)
    status, out, err = dump_here("--deep-iteration", snapshot, bootstrap)
    assert (status, err) == (0, "")
    lines = out.splitlines()
    assert lines[:2] == [f"Dumping {snapshot}", "Snapshot end offset: 120, epoch: 7"]
    assert "Log starting offset" not in out
    at = lines.index(f"Dumping {bootstrap}")
    assert lines[at + 1] == "KRaft bootstrap snapshot"
    assert lines[2:at] == lines[at + 2 :]  # the same batches and records
    records = [line for line in lines[:at] if line.startswith("| offset:")]
    assert [int(line.split()[2]) for line in records] == [0, 1, 2, 3, 4, 5, 6]
    # SnapshotHeaderRecord.json, LeaderChangeMessage.json, KRaftVersionRecord.json,
    # SnapshotFooterRecord.json, as Kafka's generated JSON converters write them; the others as
    # controlType: NAME(id). A leader change as trunk's DumpLogSegments.printControlRecord
    # prints it (KAFKA-19069): "LeaderChange: " and the JSON.
    assert records[0].endswith(f' SnapshotHeader {{"version":0,"lastContainedLogTimestamp":{T0}}}')
    assert records[3].endswith(
        ' LeaderChange: {"version":0,"leaderId":1,"voters":[{"voterId":1},{"voterId":2}],'
        '"grantingVoters":[{"voterId":1}]}'
    )
    assert records[4].endswith(" controlType: UNKNOWN(9)")
    assert records[5].endswith(' KRaftVersion {"version":0,"kRaftVersion":1}')
    assert records[6].endswith(' SnapshotFooter {"version":0}')


def test_reports_after_all_files_by_absolute_path(tmp_path, monkeypatch):
    """Non-consecutive offsets: per file, after everything, keyed as File.getAbsolutePath."""
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "x.bin").write_bytes(simple_batch(0, 2) + simple_batch(5, 1))
    (tmp_path / "y.bin").write_bytes(simple_batch(10, 1) + simple_batch(12, 1))
    monkeypatch.chdir(tmp_path)
    status, out, err = dump_here("--deep-iteration", "a/x.bin", "y.bin")
    assert status == 0
    assert out.count("Dumping ") == 2
    assert err.splitlines() == [
        f"Non-consecutive offsets in {tmp_path / 'a' / 'x.bin'}",
        "  1 is followed by 5",
        f"Non-consecutive offsets in {tmp_path / 'y.bin'}",
        "  10 is followed by 12",
    ]


def test_no_file_is_a_usage_error():
    status, out, err = dump_here()
    assert (status, out) == (2, "")
    assert err.splitlines()[-1] == (
        "kafka-format dump: error: no FILE given (as arguments or --files F1,F2)"
    )
    status, out, _ = dump_here("--files", ",")
    assert status == 2
