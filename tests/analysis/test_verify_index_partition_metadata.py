"""``verify`` checks a partition directory's ``partition.metadata`` as the broker reads it.

``UnifiedLog.initializeTopicId`` reads the file when the log is loaded
(``PartitionMetadataFile.read`` -> ``PartitionMetadataReadBuffer.read``); a file it cannot
read is an ``IOException`` that takes the log dir offline. So a file the broker would refuse
is an error of ``verify``, naming the file and what is wrong with it.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from kafka_format.runtime.analysis.verify import verify_paths
from kafka_format.runtime.write.generate import generate_log_dir


@pytest.fixture(scope="module")
def generated(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("generated")
    generate_log_dir(root, seed=7, topics=["orders"], partitions=1, records=100)
    return root / "orders-0"


@pytest.fixture
def partition(generated, tmp_path) -> Path:
    directory = tmp_path / "orders-0"
    shutil.copytree(generated, directory)
    return directory


def _metadata_files(report):
    return [f for f in report.files if f.kind == "partition.metadata"]


def test_a_sound_file_is_read_and_passes(partition):
    assert (partition / "partition.metadata").read_text().startswith("version: 0\ntopic_id: ")
    report = verify_paths([partition])
    assert report.ok, [p.line() for p in report.errors]
    (checked,) = _metadata_files(report)
    assert checked.file == str(partition / "partition.metadata")
    assert checked.counts["entries"] == 1 and checked.problems == []


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("version: 0\n", "no line 2, expected 'topic_id: ...' there"),
        ("version: 0\ntopicid: AAAAAAAAAAAAAAAAAAAAAQ\n", "line 2: expected 'topic_id: ...'"),
        ("version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAA\n", "zero UUID"),
        ("version: 0\ntopic_id: not-a-uuid\n", "is not a base64 UUID"),
        ("garbage\n", "line 1: expected 'version: ...'"),
    ],
)
def test_a_file_the_broker_refuses_is_an_error(partition, text, reason):
    path = partition / "partition.metadata"
    path.write_text(text)
    report = verify_paths([partition])
    assert not report.ok
    (error,) = report.errors
    assert error.file == str(path) and error.check == "checkpoint"
    assert reason in error.message
    proc = subprocess.run(
        [sys.executable, "-m", "kafka_format.runtime.cli", "verify", str(partition)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 1
    assert f"error: {path}" in proc.stdout and reason in proc.stdout
    assert "1 error" in proc.stdout.splitlines()[-1]


def test_a_log_dir_is_checked_partition_by_partition(partition):
    (partition / "partition.metadata").write_text("version: x\ntopic_id: AAAAAAAAAAAAAAAAAAAAAQ")
    report = verify_paths([partition.parent])
    (error,) = report.errors
    assert error.file == str(partition / "partition.metadata")
    assert "version 'x' is not an integer" in error.message


def test_a_partition_without_the_file_is_not_faulted(partition):
    # Brokers before topic ids (and logs copied without it) have none: nothing to check.
    (partition / "partition.metadata").unlink()
    report = verify_paths([partition])
    assert report.ok and _metadata_files(report) == []
