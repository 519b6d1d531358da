"""``dump`` with kcat's ranges (``-o``, ``-c``) and ``--from`` / ``--to``, and ``--topic`` /
``--partition`` on log dirs (dump, verify, stats).

The oracle is the full ``dump --jsonl`` of the same log dir (no range), filtered in Python by
the rule each flag states; logs come from ``generate`` (segments with their indexes).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from kafka_format.runtime.cli import main
from kafka_format.runtime.write.generate import generate_log_dir


@pytest.fixture(scope="module")
def log_dir(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("dump-ranges") / "logs"
    generate_log_dir(root, seed=3, topics=["orders", "clicks"], records=300, segment_bytes=16384)
    return root


def dump(capsys, *args) -> tuple[int, str, str]:
    status = main(["dump", "-q", *map(str, args)])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return status, out, err


def lines(out: str) -> list[dict]:
    return [json.loads(line) for line in out.splitlines()]


@pytest.fixture(scope="module")
def everything(log_dir) -> list[dict]:
    proc = subprocess.run(
        [sys.executable, "-m", "kafka_format.runtime.cli", "dump", "-q", "--jsonl", str(log_dir)],
        capture_output=True,
        text=True,
        check=True,
    )
    return lines(proc.stdout)


def _per_partition(records: list[dict]) -> dict:
    found: dict = {}
    for r in records:
        found.setdefault((r["topic"], r["partition"]), []).append(r)
    return found


def _keys(records: list[dict]) -> list[tuple]:
    return [(r["topic"], r["partition"], r["offset"]) for r in records]


def test_absolute_offset_and_count(capsys, log_dir, everything):
    status, out, _ = dump(capsys, "--jsonl", "-o", "40", "-c", "25", log_dir / "orders-1")
    want = [r for r in everything if (r["topic"], r["partition"]) == ("orders", 1)]
    want = [r for r in want if r["offset"] >= 40][:25]
    assert status == 0 and lines(out) == want


def test_minus_n_is_per_partition(capsys, log_dir, everything, tmp_path):
    status, out, _ = dump(capsys, "--jsonl", "-o", "-10", log_dir)
    got = _per_partition(lines(out))
    ends: dict = {}
    for batch in lines(dump(capsys, "--jsonl", "--batches", log_dir)[1]):
        key = (batch["topic"], batch["partition"])
        ends[key] = max(ends.get(key, 0), batch["lastOffset"] + 1)
    want = {
        key: [r for r in recs if r["offset"] >= ends[key] - 10]
        for key, recs in _per_partition(everything).items()
    }
    assert status == 0 and got == {k: v for k, v in want.items() if v}
    assert len(got) == 5  # every partition of both topics


def test_count_is_of_all_partitions_together(capsys, log_dir, everything):
    """kcat's -c: messages in all, not per partition."""
    status, out, _ = dump(capsys, "--jsonl", "-c", "7", "-o", "-3", log_dir)
    got = lines(out)
    assert status == 0 and len(got) == 7
    assert len({(r["topic"], r["partition"]) for r in got}) > 1


def test_start_and_end_timestamps(capsys, log_dir, everything):
    recs = [r for r in everything if (r["topic"], r["partition"]) == ("orders", 0)]
    stamps = sorted(r["timestamp"] for r in recs)
    start, end = stamps[len(stamps) // 4], stamps[len(stamps) // 2]
    lo = next(r["offset"] for r in recs if r["timestamp"] >= start)
    hi = next(r["offset"] for r in recs if r["offset"] >= lo and r["timestamp"] >= end)
    want = [r for r in recs if lo <= r["offset"] < hi]
    status, out, _ = dump(
        capsys, "--jsonl", "-o", f"s@{start}", "-o", f"e@{end}", log_dir / "orders-0"
    )
    assert status == 0 and lines(out) == want and want
    # The long forms: @<ms> and ISO-8601 (UTC) name the same instants.
    from datetime import UTC, datetime

    iso = datetime.fromtimestamp(start / 1000, tz=UTC).isoformat(timespec="milliseconds")
    status, out2, _ = dump(
        capsys,
        "--jsonl",
        "--from",
        iso.replace("+00:00", "Z"),
        "--to",
        f"@{end}",
        log_dir / "orders-0",
    )
    assert status == 0 and out2 == out


def test_from_to_offsets(capsys, log_dir, everything):
    want = [r for r in everything if r["topic"] == "clicks" and 30 <= r["offset"] < 90]
    status, out, _ = dump(
        capsys, "--jsonl", "--from", "30", "--to", "90", log_dir, "--topic", "clicks"
    )
    assert status == 0 and lines(out) == want


def test_text_output_shows_overlapping_batches_and_records_in_range(capsys, log_dir):
    status, out, _ = dump(capsys, "--deep-iteration", "-o", "100", "-c", "30", log_dir / "orders-2")
    assert status == 0
    text = out.splitlines()
    batches = [line for line in text if line.startswith("baseOffset: ")]
    # -c counts data records; a transaction marker in the range is shown, not counted.
    records = [t for t in text if t.startswith("| offset: ") and "endTxnMarker" not in t]
    offsets = [int(line.split()[2]) for line in records]
    assert len(offsets) == 30 and offsets[0] >= 100 and offsets == sorted(offsets)
    assert text[0].startswith("Dumping ") and text[1].startswith("Log starting offset: ")
    first_base, first_last = (int(batches[0].split()[i]) for i in (1, 3))
    assert first_base <= offsets[0] <= first_last
    # Batch-level output: the same batches, no record lines.
    status, out, _ = dump(capsys, "-o", "100", "-c", "30", log_dir / "orders-2")
    assert [line for line in out.splitlines() if line.startswith("baseOffset: ")] == batches
    assert not any(line.startswith("| offset") for line in out.splitlines())


def test_batches_jsonl_overlap_the_range(capsys, log_dir):
    status, out, _ = dump(
        capsys, "--jsonl", "--batches", "--from", "50", "--to", "60", log_dir / "orders-0"
    )
    found = lines(out)
    assert status == 0 and found
    assert all(b["lastOffset"] >= 50 and b["baseOffset"] < 60 for b in found)


def test_end_and_beginning(capsys, log_dir, everything):
    status, out, _ = dump(capsys, "--jsonl", "-o", "end", log_dir)
    assert status == 0 and out == ""
    status, out, _ = dump(capsys, "--jsonl", "-o", "beginning", "-c", "3", log_dir)
    assert lines(out) == everything[:3]


@pytest.mark.parametrize(
    "args, says",
    [
        (["-o", "stored"], "'stored' is a consumer group's committed offset"),
        (["-o", "yesterday"], "is not an offset"),
        (["-o", "s@soon"], "epoch milliseconds"),
        (["-c", "-1"], "must be 0 or more"),
        (["--from", "-5"], "an offset is 0 or more"),
        (["--to", "next week"], "neither an offset"),
        (["-o", "5", "--from", "6"], "already given"),
        (["--topic", "nothing*"], "no partition directory of topic nothing*"),
        (["--partition", "9"], "no partition directory of partition 9"),
    ],
)
def test_bad_values_are_refused_with_one_line(log_dir, args, says):
    proc = subprocess.run(
        [sys.executable, "-m", "kafka_format.runtime.cli", "dump", *args, str(log_dir)],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    last = proc.stderr.strip().splitlines()[-1]
    assert says in last and last.startswith("kafka-format dump: error: ")


def test_topic_globs_and_partition(capsys, log_dir, everything):
    status, out, _ = dump(capsys, "--jsonl", "--topic", "ord*", "--partition", "1", log_dir)
    assert status == 0 and lines(out) == [
        r for r in everything if (r["topic"], r["partition"]) == ("orders", 1)
    ]


def test_topic_on_verify_and_stats(capsys, log_dir):
    assert main(["verify", "-q", "--topic", "clicks", str(log_dir)]) == 0
    out, _ = capsys.readouterr()
    assert "clicks-0" in out or "Checked" in out
    assert "orders" not in out
    assert main(["stats", "-q", "--json", "--topic", "clicks", str(log_dir)]) == 0
    stats = json.loads(capsys.readouterr().out)
    assert "clicks" in json.dumps(stats) and '"orders' not in json.dumps(stats)
    assert main(["verify", "-q", "--topic", "nope", str(log_dir)]) == 2
    assert "no partition directory of topic nope" in capsys.readouterr().err


def test_a_range_reads_only_from_the_index_on(log_dir, tmp_path, capsys):
    """Damage before the range's start is never read: the index leads past it."""
    import shutil

    part = tmp_path / "orders-0"
    shutil.copytree(log_dir / "orders-0", part)
    first = sorted(part.glob("*.log"))[0]
    raw = bytearray(first.read_bytes())
    raw[20:24] = b"\xff\xff\xff\xff"  # the first batch's CRC field no longer holds
    first.write_bytes(bytes(raw))
    status, _, err = dump(capsys, "--jsonl", part)
    assert status == 1 and "crc" in err.lower()
    later = sorted(part.glob("*.log"))[-1].name
    start = int(later.split(".")[0])
    status, out, err = dump(capsys, "--jsonl", "-o", str(start + 1), part)
    assert status == 0 and err == "" and lines(out)


def test_count_runs_across_the_paths_given(capsys, log_dir):
    paths = [log_dir / f"orders-{n}" for n in range(3)]
    status, out, _ = dump(capsys, "--jsonl", "-o", "-4", *paths)
    every = lines(out)
    status, out, _ = dump(capsys, "--jsonl", "-o", "-4", "-c", "5", *paths)
    got = lines(out)
    assert status == 0 and len(every) > 5 and got == every[:5]
    assert len({r["partition"] for r in got}) > 1
