"""``dump --group`` / ``--transactional-id`` over a log dir: the coordinator's partition found
as Kafka places it, and only that group's (or transactional id's) records."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kafka_format.runtime.cli import main
from kafka_format.runtime.messages.internal_topics import (
    encode_cluster_metadata_record,
    encode_offsets_key,
    encode_offsets_value,
    encode_transaction_log_key,
    encode_transaction_log_value,
)
from kafka_format.runtime.write.writer import PartitionWriter
from kafka_format.runtime.write.writer_model import Message

TOPIC_ID = "MKXx1fIkQy2J9jXHhK8m1w"
# Java's String.hashCode: "Aa" and "BB" are both 2112 (31 * 65 + 97 == 31 * 66 + 66), so
# GroupCoordinatorService.partitionFor puts them on one partition: 2112 % 50 == 12 by default,
# 2112 % 10 == 2 with ten partitions.
SHARED_50, SHARED_10 = 12, 2


def _commit(group: str, topic: str, partition: int, offset: int) -> Message:
    key = encode_offsets_key(1, {"group": group, "topic": topic, "partition": partition})
    value = encode_offsets_value(
        1, 3, {"offset": offset, "leaderEpoch": 0, "metadata": "", "commitTimestamp": 1}
    )
    return Message(key, value)


def _offsets_partition(log_dir: Path, partition: int, messages: list[Message]) -> None:
    with PartitionWriter(log_dir, "__consumer_offsets", partition) as writer:
        for message in messages:
            writer.append([message])


@pytest.fixture
def log_dir(tmp_path: Path) -> Path:
    """Two groups sharing partition 12 (of 50), another group's partition, an unrelated topic."""
    _offsets_partition(
        tmp_path,
        SHARED_50,
        [
            _commit("Aa", "orders", 0, 10),
            _commit("BB", "orders", 0, 99),
            _commit("Aa", "orders", 1, 11),
            Message(encode_offsets_key(2, {"group": "Aa"}), None),  # GroupMetadata tombstone
            _commit("BBB", "orders", 0, 5),  # a longer name sharing the prefix "BB"
        ],
    )
    _offsets_partition(tmp_path, 0, [_commit("zero", "orders", 0, 1)])
    with PartitionWriter(tmp_path, "orders", 0) as writer:
        writer.append([Message(b"k", b"v")])
    return tmp_path


def dump(capsys, *argv: object) -> tuple[int, str, str]:
    status = main(["dump", *map(str, argv)])
    out, err = capsys.readouterr()
    return status, out, err


def test_group_text_lines_are_that_groups_only(log_dir, capsys):
    status, out, err = dump(capsys, "--group", "Aa", log_dir)
    assert status == 0, err
    assert f"group 'Aa' is in __consumer_offsets-{SHARED_50} (of 50 partitions" in err
    records = [line for line in out.splitlines() if line.startswith("| offset:")]
    # offsets 0 and 2 (commits) and 3 (the tombstone), decoded as --offsets-decoder prints
    assert [int(line.split()[2]) for line in records] == [0, 2, 3]
    assert all('"group":"Aa"' in line for line in records)
    assert records[-1].endswith("payload: <DELETE>")
    # a batch line only for the batches holding Aa's records
    assert sum(line.startswith("baseOffset:") for line in out.splitlines()) == 3


def test_group_jsonl_and_a_name_that_is_a_prefix(log_dir, capsys):
    status, out, err = dump(capsys, "--jsonl", "--group", "BB", log_dir)
    assert status == 0, err
    lines = [json.loads(line) for line in out.splitlines()]
    assert [line["offset"] for line in lines] == [1]  # not BBB's record at offset 4
    assert lines[0]["decoded"]["key"]["data"]["group"] == "BB"
    assert lines[0]["topic"] == "__consumer_offsets" and lines[0]["partition"] == SHARED_50


def test_partition_count_from_cluster_metadata(log_dir, capsys):
    """With ``__cluster_metadata-0`` beside them, the count is the topic's PartitionRecords
    (ten here), whatever directories this broker holds."""
    values = [
        encode_cluster_metadata_record(2, 0, {"name": "__consumer_offsets", "topicId": TOPIC_ID})
    ]
    values += [
        encode_cluster_metadata_record(3, 0, {"partitionId": p, "topicId": TOPIC_ID})
        for p in range(10)
    ]
    with PartitionWriter(log_dir, "__cluster_metadata", 0) as writer:
        writer.append([Message(None, v) for v in values])
    status, _, err = dump(capsys, "--group", "Aa", log_dir)
    assert status == 1
    assert (
        f"group 'Aa' is in __consumer_offsets-{SHARED_10} (of 10 partitions, read from "
        "__cluster_metadata), which this log dir does not hold" in err
    )
    # --partitions overrides it
    status, out, err = dump(capsys, "--group", "Aa", "--partitions", "50", log_dir)
    assert status == 0 and "(of 50 partitions, as given)" in err
    assert out.count("| offset:") == 3


def test_a_partition_directory_itself(log_dir, capsys):
    status, out, err = dump(
        capsys, "--jsonl", "--group", "Aa", log_dir / f"__consumer_offsets-{SHARED_50}"
    )
    assert status == 0 and err == ""
    assert [json.loads(line)["offset"] for line in out.splitlines()] == [0, 2, 3]


def test_transactional_id(tmp_path, capsys):
    def state(tid: str, epoch: int) -> Message:
        value = encode_transaction_log_value(
            1,
            {
                "producerId": 7,
                "producerEpoch": epoch,
                "transactionTimeoutMs": 60000,
                "transactionStatus": 1,
                "transactionPartitions": [],
                "transactionLastUpdateTimestampMs": 1,
                "transactionStartTimestampMs": 1,
            },
        )
        return Message(encode_transaction_log_key(tid), value)

    # "Aa"/"BB" again share a partition of __transaction_state (TransactionStateManager's
    # partitionFor is the same hash)
    with PartitionWriter(tmp_path, "__transaction_state", SHARED_50) as writer:
        for message in (state("Aa", 0), state("BB", 0), state("Aa", 1)):
            writer.append([message])
    status, out, err = dump(capsys, "--jsonl", "--transactional-id", "Aa", tmp_path)
    assert status == 0, err
    assert f"transactional id 'Aa' is in __transaction_state-{SHARED_50}" in err
    lines = [json.loads(line) for line in out.splitlines()]
    assert [line["offset"] for line in lines] == [0, 2]
    assert [line["decoded"]["value"]["data"]["producerEpoch"] for line in lines] == [0, 1]


def test_damage_in_the_partition_is_still_reported(log_dir, capsys):
    segment = log_dir / f"__consumer_offsets-{SHARED_50}" / "00000000000000000000.log"
    data = bytearray(segment.read_bytes())
    data[-3] ^= 0xFF  # inside the last batch's records: its CRC no longer holds
    segment.write_bytes(bytes(data))
    status, out, err = dump(capsys, "--group", "Aa", log_dir)
    assert status == 1
    assert "CRC" in err or "crc" in err
    assert [int(line.split()[2]) for line in out.splitlines() if line.startswith("| offset:")][
        :3
    ] == [0, 2, 3]


@pytest.mark.parametrize(
    "argv, message",
    [
        (["-c", "1"], "-c counts a partition's records"),
        (["--batches", "--jsonl"], "--batches prints whole batches"),
        (["--group", "x"], "--group reads one log dir"),  # twice: a file is not a log dir
    ],
)
def test_usage_errors(log_dir, capsys, argv, message):
    target = (
        [log_dir / "orders-0" / "00000000000000000000.log"]
        if argv == ["--group", "x"]
        else [log_dir]
    )
    extra = [] if "--group" in argv else ["--group", "Aa"]
    status, out, err = dump(capsys, *extra, *argv, *target)
    assert (status, out) == (2, "")
    assert message in err and "note:" not in err


def find(capsys, *argv: object) -> tuple[int, str, str]:
    status = main(["find", *map(str, argv)])
    out, err = capsys.readouterr()
    return status, out, err


def test_find_group_from_an_offset(log_dir, capsys):
    """The broker's look-up of offset 1 lands on BB's commit; Aa's next record is at 2."""
    status, out, err = find(capsys, log_dir, "--group", "Aa", "--offset", "1")
    assert status == 0, err
    assert "group 'Aa' is in __consumer_offsets-12" in err
    lines = out.splitlines()
    assert lines[0] == (
        "Note: the look-up led to offset 1; the first record of 'Aa' from there is at offset 2."
    )
    assert lines[1].startswith(f"Segment: {log_dir / '__consumer_offsets-12'}")
    record = lines[-1]
    assert record.startswith("| offset: 2 ")
    assert '"group":"Aa","topic":"orders","partition":1' in record


def test_find_group_none_left(log_dir, capsys):
    status, out, err = find(capsys, log_dir, "--group", "BB", "--offset", "2")
    assert (status, out) == (1, "")
    assert "no record of 'BB' at or after offset 2" in err
    status, out, err = find(capsys, log_dir, "--group", "BB", "--offset", "0", "--jsonl")
    assert status == 0
    assert json.loads(out)["record"]["offset"] == 1


def test_group_through_kcat_json(log_dir, capsys):
    """``-J`` with ``--group``: the group's records only, key and payload the JSON text
    --offsets-decoder prints (kcat's envelope around it)."""
    status, out, err = dump(capsys, "-J", "--group", "Aa", log_dir)
    assert status == 0, err
    lines = [json.loads(line) for line in out.splitlines()]
    assert [line["offset"] for line in lines] == [0, 2, 3]
    assert {line["topic"] for line in lines} == {"__consumer_offsets"}
    key = json.loads(lines[1]["key"])
    assert key["data"] == {"group": "Aa", "topic": "orders", "partition": 1}
    assert json.loads(lines[1]["payload"])["data"]["offset"] == 11
    assert lines[2]["payload"] == "<DELETE>"
