"""``kafka-format producers --transactions``: the table, the exact abort line, ``--json``,
``--jsonl``, a pipe, and the exit statuses (0 none hanging, 1 one hangs, 2 bad arguments)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from kafka_format.runtime.cli import main
from kafka_format.runtime.cli.producers_txn import duration_ms, timestamp_ms

T0 = 1_700_000_000_000  # the clock of tests/conftest.py's partition (its offsets' "t0")

LINE = (
    "kafka-transactions.sh --bootstrap-server {} abort --topic orders --partition 0 "
    "--start-offset 11"
)


@pytest.fixture(scope="module")
def directory(tmp_path_factory, write_transactions) -> Path:
    log_dir = tmp_path_factory.mktemp("txn")
    assert write_transactions(log_dir)["t0"] == T0
    return log_dir / "orders-0"


def run(capsys, *argv: str) -> tuple[int, str, str]:
    status = main(["producers", "--transactions", *argv])
    out, err = capsys.readouterr()
    return status, out, err


def test_the_table_and_the_hanging_line(directory, capsys):
    status, out, _ = run(capsys, str(directory))
    assert status == 1
    lines = out.splitlines()
    assert lines[1].split() == [
        "PRODUCER_ID", "EPOCH", "STATUS", "FIRST_OFFSET", "LAST_OFFSET", "MARKER", "DURATION",
        "BATCHES", "RECORDS", "BYTES",
    ]  # fmt: skip
    assert lines[2].split()[:8] == ["1000", "0", "committed", "0", "5", "COMMIT@5", "2s", "2"]
    assert lines[3].split()[:8] == ["2000", "3", "aborted", "7", "9", "ABORT@9", "1s", "1"]
    assert lines[4].split()[:7] == ["3000", "1", "open", "10", "10", "-", "1m02s"]
    assert lines[5].split()[:7] == ["1000", "0", "HANGING", "11", "11", "-", "20m02s"]
    assert "empty: producer 2000: 0 COMMIT and 1 ABORT marker(s) with no data here" in lines
    assert "  " + LINE.format("BROKER:9092") in lines
    assert lines[-1] == (
        "orders-0: 1 committed, 1 aborted, 2 open, 1 empty; last stable offset 10; 1 HANGING"
    )
    assert "the log's last batch timestamp" in lines[0]


def test_bootstrap_server_threshold_and_quiet(directory, capsys):
    status, out, _ = run(capsys, "--bootstrap-server", "kafka-1:9092", "-q", str(directory))
    assert status == 1
    assert out.splitlines()[1] == "  " + LINE.format("kafka-1:9092")
    assert len(out.splitlines()) == 2
    status, out, _ = run(capsys, "--hanging-after", "21m", str(directory))
    assert status == 0 and "kafka-transactions.sh" not in out
    assert out.splitlines()[-1].endswith("none hanging")
    status, out, _ = run(capsys, "--hanging-after", "1262000", str(directory))  # 21m02s in ms
    assert status == 0
    status, out, _ = run(capsys, "--now", "2023-11-14T23:13:20Z", "-q", str(directory))
    assert status == 1 and "--start-offset 10" in out and "--start-offset 11" in out


def test_a_log_dir_of_partitions(directory, capsys):
    status, out, _ = run(capsys, "--hanging-after", "900s", str(directory.parent))
    assert status == 1 and LINE.format("BROKER:9092") in out


def test_json_document(directory, capsys):
    status, out, _ = run(capsys, "--json", str(directory))
    assert status == 1
    doc = json.loads(out)
    assert (doc["hanging"], doc["ok"]) == (1, False)
    (part,) = doc["partitions"]
    assert part["partition"] == "orders-0" and part["topic"] == "orders"
    assert part["partitionIndex"] == 0
    counts = {k: part[k] for k in ("committed", "aborted", "open", "hanging", "emptyAborted")}
    assert counts == {"committed": 1, "aborted": 1, "open": 2, "hanging": 1, "emptyAborted": 1}
    assert (part["lastStableOffset"], part["clock"], part["hangingAfterMs"]) == (10, "log", 900000)
    assert [t["status"] for t in part["transactions"]] == ["committed", "aborted", "open", "open"]
    hanging = part["transactions"][3]
    assert hanging == {
        "producerId": 1000,
        "producerEpoch": 0,
        "status": "open",
        "firstOffset": 11,
        "lastOffset": 11,
        "markerOffset": None,
        "markerType": None,
        "firstTimestamp": T0 + 7000,
        "endTimestamp": T0 + 9000 + 20 * 60_000,
        "durationMs": 20 * 60_000 + 2000,
        "batches": 1,
        "records": 1,
        "bytes": hanging["bytes"],
        "hanging": True,
        "abortCommand": LINE.format("BROKER:9092"),
    }
    assert part["transactions"][0]["markerType"] == "COMMIT"


def test_jsonl_rows(directory, capsys):
    status, out, _ = run(capsys, "--jsonl", "--hanging-after", "30m", str(directory))
    assert status == 0
    rows = [json.loads(line) for line in out.splitlines()]
    assert [r["type"] for r in rows] == ["transaction"] * 4 + ["summary"]
    assert not any(r["hanging"] for r in rows[:4])
    assert rows[-1]["ok"] and rows[-1]["hangingAfterMs"] == 30 * 60_000


@pytest.mark.parametrize(
    "argv",
    [
        ["--json", "--jsonl"],
        ["--at", "3"],
        ["--check-snapshots"],
        ["--hanging-after", "soon"],
        ["--now", "yesterday"],
    ],
)
def test_bad_arguments_exit_2(directory, capsys, argv):
    try:
        status = main(["producers", "--transactions", *argv, str(directory)])
    except SystemExit as exc:  # argparse's own refusal
        status = exc.code
    assert status == 2
    assert "error" in capsys.readouterr().err


def test_transaction_options_need_transactions(directory, capsys):
    assert main(["producers", "--json", str(directory)]) == 2
    assert "--json: need --transactions" in capsys.readouterr().err


def test_argument_types():
    assert duration_ms("15m") == duration_ms("900s") == duration_ms("900000") == 900_000
    assert duration_ms("1h") == 3_600_000 and duration_ms("250ms") == 250
    assert timestamp_ms("1700000000000") == T0
    assert timestamp_ms("2023-11-14T22:13:20Z") == T0 == timestamp_ms("2023-11-14T22:13:20")


def test_a_segment_from_a_pipe(directory):
    second = sorted(directory.glob("*.log"))[1]
    proc = subprocess.run(
        [sys.executable, "-m", "kafka_format", "producers", "--transactions", "--json", "-"],
        input=second.read_bytes(),
        capture_output=True,
        timeout=300,
    )
    assert proc.returncode == 1, proc.stderr
    (part,) = json.loads(proc.stdout)["partitions"]
    # B's data lies in the first segment: its ABORT here is an empty transaction
    assert [(t["producerId"], t["firstOffset"]) for t in part["transactions"]] == [
        (3000, 10),
        (1000, 11),
    ]
    assert part["emptyAborted"] == 1
    # no topic is known from a pipe: the line says where to put it
    assert part["transactions"][1]["abortCommand"] == (
        "kafka-transactions.sh --bootstrap-server BROKER:9092 abort --topic TOPIC "
        "--partition PARTITION --start-offset 11"
    )


def test_a_segment_in_its_partition_directory_names_the_topic(directory, capsys):
    second = sorted(directory.glob("*.log"))[1]
    status, out, _ = run(capsys, "-q", str(second))
    assert status == 1 and out.splitlines()[1] == "  " + LINE.format("BROKER:9092")


def test_a_partition_no_transactional_producer_wrote_is_one_line(tmp_path, capsys):
    """No table and no counts of nothing: one line, exit 0."""
    from kafka_format.runtime.write.writer import Message, PartitionWriter

    writer = PartitionWriter(tmp_path, "plain", 0)
    writer.append([Message(b"k", b"v")])
    writer.close()
    status, out, _ = run(capsys, str(tmp_path / "plain-0"))
    assert (status, out) == (0, "plain-0: no transactions\n")


def test_a_damaged_segment_exits_1_as_producers_does(tmp_path, capsys):
    """Damage is listed and sets the exit status, as ``producers`` (and every command) does
    for the same bytes, though no transaction hangs."""
    part = tmp_path / "t-0"
    part.mkdir()
    (part / "00000000000000000000.log").write_bytes(b"\x00" * 12 + b"\x00\x00\x00\x40" + b"Z" * 80)
    status, out, _ = run(capsys, str(part))
    assert status == 1 and "damaged: " in out and "none hanging" in out
    assert main(["producers", str(part)]) == 1
