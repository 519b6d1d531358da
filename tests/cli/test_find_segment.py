"""``find`` on one segment file (its own .index/.timeindex, or a scan without them), its
``--jsonl`` location keys, and ``--topic`` / ``--partition`` on a log dir.

The oracle is ``iter_records`` over the same segment (no index).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from kafka_format.runtime.cli import main
from kafka_format.runtime.read.reader import iter_records
from kafka_format.runtime.write.generate import generate_log_dir


@pytest.fixture(scope="module")
def log_dir(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("find-segment") / "logs"
    generate_log_dir(root, seed=5, topics=["orders"], records=300, segment_bytes=16384)
    return root


def find(capsys, *args) -> tuple[int, str, str]:
    status = main(["find", *map(str, args)])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return status, out, err


def _segment(log_dir: Path) -> Path:
    return sorted((log_dir / "orders-0").glob("*.log"))[1]


def test_offsets_in_one_segment_use_its_index(capsys, log_dir):
    segment = _segment(log_dir)
    records = list(iter_records(segment))
    for record in records[:: max(len(records) // 7, 1)]:
        status, out, _ = find(capsys, segment, "--offset", record.offset)
        assert status == 0
        text = out.splitlines()
        assert text[0].startswith(f"Segment: {segment} ")
        assert "offset index" in text[1]
        assert text[-1].startswith(f"| offset: {record.offset} CreateTime: {record.timestamp} ")


def test_a_segment_without_its_indexes_is_scanned(capsys, log_dir, tmp_path):
    copy = tmp_path / _segment(log_dir).name
    shutil.copy(_segment(log_dir), copy)
    records = list(iter_records(copy))
    target = records[len(records) // 2]
    status, out, _ = find(capsys, copy, "--offset", target.offset)
    assert status == 0 and "scanned from the start of the segment" in out
    assert out.splitlines()[-1].startswith(f"| offset: {target.offset} ")
    status, out, _ = find(capsys, copy, "--timestamp", target.timestamp, "--jsonl")
    found = json.loads(out)
    first = next(r for r in records if r.timestamp >= target.timestamp)
    assert status == 0 and found["record"]["offset"] == first.offset


def test_offsets_outside_the_segment_are_not_found(capsys, log_dir):
    segment = _segment(log_dir)
    records = list(iter_records(segment))
    status, _, err = find(capsys, segment, "--offset", records[0].offset - 1)
    assert status == 1 and err.count("\n") == 1 and str(segment) in err
    status, _, err = find(capsys, segment, "--offset", records[-1].offset + 1000)
    assert status == 1 and "no record at or after offset" in err


def test_jsonl_has_the_location_keys(capsys, log_dir):
    segment = _segment(log_dir)
    record = list(iter_records(segment))[3]
    status, out, _ = find(capsys, segment, "--offset", record.offset, "--jsonl")
    found = json.loads(out)
    assert status == 0
    assert (found["topic"], found["partition"], found["file"]) == ("orders", 0, str(segment))
    assert found["position"] == found["batch"]["position"]
    # The same keys and values dump --jsonl gives the record.
    main(["dump", "-q", "--jsonl", "-o", str(record.offset), "-c", "1", str(segment)])
    line = json.loads(capsys.readouterr().out)
    assert (line["topic"], line["partition"], line["file"], line["position"]) == (
        found["topic"],
        found["partition"],
        found["file"],
        found["position"],
    )


def test_topic_and_partition_pick_one_partition_of_a_log_dir(capsys, log_dir):
    record = list(iter_records(log_dir / "orders-1"))[10]
    status, out, _ = find(
        capsys, log_dir, "--topic", "orders", "--partition", "1", "--offset", record.offset
    )
    assert status == 0 and out.splitlines()[-1].startswith(f"| offset: {record.offset} ")
    status, _, err = find(capsys, log_dir, "--topic", "orders", "--offset", "0")
    assert status == 2 and "select 3 partitions" in err and err.count("\n") == 1
    status, _, err = find(capsys, log_dir, "--topic", "none", "--offset", "0")
    assert status == 2 and "no partition directory of topic none" in err


def test_a_deleted_segment_is_refused(capsys, log_dir, tmp_path):
    gone = tmp_path / (_segment(log_dir).name + ".deleted")
    shutil.copy(_segment(log_dir), gone)
    status, _, err = find(capsys, gone, "--offset", "0")
    assert status == 1 and "not a live segment" in err and err.count("\n") == 1
