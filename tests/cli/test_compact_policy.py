"""``compact --cleanup-policy``: the log cleaner cleans only logs whose cleanup.policy holds
``compact`` (LogCleanerManager.grabFilthiestCompactedLog filters on ``log.config.compact``);
``delete`` topics and KRaft's ``__cluster_metadata`` are left alone, with a line saying why."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from kafka_format.runtime.cli import main
from kafka_format.runtime.log.compaction import compact
from kafka_format.runtime.write.generate import generate_log_dir

NOW = "2023-11-16T00:00:00Z"
TOPICS = ("events", "__consumer_offsets", "__cluster_metadata")


@pytest.fixture(scope="module")
def log_dir(tmp_path_factory) -> Path:
    """The same partition under three topic names: a user topic, a compacted internal
    topic and the KRaft metadata log."""
    root = tmp_path_factory.mktemp("policy") / "logs"
    generate_log_dir(root, seed=11, topics=["users"], records=300, segment_bytes=8192)
    for topic in TOPICS:
        shutil.copytree(root / "users-0", root / f"{topic}-0")
    shutil.rmtree(root / "users-0")
    (root / "cleaner-offset-checkpoint").unlink()
    return root


def _run(capsys, *args: str) -> tuple[int, str, str]:
    status = main(["compact", "--now", NOW, *args])
    out, err = capsys.readouterr()
    return status, out, err


def _reports(out: str) -> dict[str, dict]:
    rows = [json.loads(line) for line in out.splitlines()]
    return {Path(r["path"]).name: r for r in rows}


def test_unknown_policy_is_said_and_assumed_compact(log_dir, capsys):
    status, out, _ = _run(capsys, str(log_dir / "events-0"))
    assert status == 0
    lines = out.splitlines()
    assert lines[0].startswith("events-0: would clean now")
    assert lines[1] == "  cleanup.policy unknown: pass --cleanup-policy (assumed compact)"
    kept = next(line for line in lines if line.startswith("  data records: keep "))
    assert "remove 0" not in kept


def test_default_policies_of_kafkas_own_topics(log_dir, capsys):
    status, out, _ = _run(capsys, "--json", str(log_dir))
    assert status == 0
    reports = _reports(out)
    assert set(reports) == {f"{t}-0" for t in TOPICS}
    offsets = reports["__consumer_offsets-0"]
    assert (offsets["cleanupPolicy"], offsets["policySource"]) == ("compact", "internal topic")
    assert offsets["wouldClean"] and offsets["recordsRemoved"] > 0
    metadata = reports["__cluster_metadata-0"]
    assert (metadata["cleanupPolicy"], metadata["cleaned"]) == (None, False)
    assert not metadata["wouldClean"] and metadata["recordsRemoved"] == 0
    events = reports["events-0"]
    assert events["policySource"] == "unknown" and events["cleaned"] and events["wouldClean"]


def test_delete_topics_are_left_alone_with_a_reason(log_dir, capsys):
    status, out, _ = _run(capsys, "--cleanup-policy", "delete", str(log_dir))
    assert status == 0
    lines = out.splitlines()
    left = [line for line in lines if ": left alone: " in line]
    assert left == [
        "__cluster_metadata-0: left alone: a KRaft metadata log: the log cleaner never cleans "
        "it (the controller trims it with snapshots)",
        "events-0: left alone: cleanup.policy=delete: the log cleaner cleans only logs whose "
        "cleanup.policy includes compact; retention deletes whole segments instead",
    ]
    # a bare default does not reach the internal compacted topics
    assert any(line.startswith("__consumer_offsets-0: would clean now") for line in lines)


def test_per_topic_policy_wins_and_compact_delete_compacts(log_dir, capsys):
    args = ["--json", "--cleanup-policy", "delete"]
    args += ["--cleanup-policy", "events=delete, compact", "--cleanup-policy"]
    args += ["__consumer_offsets=delete", str(log_dir)]
    status, out, _ = _run(capsys, *args)
    assert status == 0
    reports = _reports(out)
    assert reports["events-0"]["cleanupPolicy"] == "compact,delete"
    assert reports["events-0"]["recordsRemoved"] > 0
    assert reports["__consumer_offsets-0"]["cleanupPolicy"] == "delete"
    assert reports["__consumer_offsets-0"]["recordsRemoved"] == 0


def test_delete_topic_jsonl_keeps_every_record(log_dir, capsys):
    part = str(log_dir / "events-0")
    assert main(["dump", "--jsonl", part]) == 0
    dumped = capsys.readouterr().out.splitlines()
    status, out, _ = _run(capsys, "--jsonl", "--cleanup-policy", "events=delete", part)
    assert status == 0 and len(out.splitlines()) == len(dumped) > 100
    status, out, _ = _run(capsys, "--jsonl", part)
    assert status == 0 and len(out.splitlines()) < len(dumped)


@pytest.mark.parametrize("value", ["bogus", "events=", "=compact", "compact;delete"])
def test_bad_policy_is_one_line(log_dir, capsys, value):
    with pytest.raises(SystemExit) as exit_info:
        main(["compact", "--cleanup-policy", value, str(log_dir)])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert "argument --cleanup-policy" in err and "Traceback" not in err


def test_api_takes_the_policy(log_dir):
    result = compact(log_dir / "events-0", now_ms=1_700_092_800_000, cleanup_policy="delete")
    assert not result.would_clean and not result.removed
    assert result.policy.note().startswith("cleanup.policy=delete")
    result = compact(log_dir / "__cluster_metadata-0", now_ms=1_700_092_800_000)
    assert not result.would_clean and not result.removed
