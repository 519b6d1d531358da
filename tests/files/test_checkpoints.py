"""Text checkpoint files (runtime/checkpoints.py).

Files are written here as CheckpointFile.CheckpointWriteBuffer writes them: the version line,
the count line, then one entry a line, each line ended by the platform's newline.
"""

from __future__ import annotations

import base64
import uuid

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kafka_format.runtime.errors import IndexFileError, KafkaFormatError
from kafka_format.runtime.files.checkpoints import (
    CLEANER_OFFSET_CHECKPOINT,
    LEADER_EPOCH_CHECKPOINT,
    OFFSET_CHECKPOINTS,
    EpochEntry,
    PartitionMetadata,
    TopicPartition,
    parse_leader_epoch_checkpoint,
    parse_offset_checkpoint,
    parse_partition_metadata,
    read_leader_epoch_checkpoint,
    read_offset_checkpoint,
    read_partition_metadata,
)


def kafka_write(entries, version=0, newline="\n"):
    lines = [str(version), str(len(entries)), *entries]
    return "".join(line + newline for line in lines).encode()


def test_leader_epoch_checkpoint():
    data = kafka_write(["0 0", "3 120", "7 4611686018427387904"])
    assert parse_leader_epoch_checkpoint(data) == [
        EpochEntry(0, 0),
        EpochEntry(3, 120),
        EpochEntry(7, 1 << 62),
    ]


@pytest.mark.parametrize("newline", ["\n", "\r\n", "\r"])
def test_line_ends(newline):
    data = kafka_write(["1 5", "2 9"], newline=newline)
    assert parse_leader_epoch_checkpoint(data) == [EpochEntry(1, 5), EpochEntry(2, 9)]


def test_whitespace_between_and_after_fields():
    data = b"0\n2\n1 \t 5\n2 9   \n"
    assert parse_leader_epoch_checkpoint(data) == [EpochEntry(1, 5), EpochEntry(2, 9)]


@pytest.mark.parametrize("data", [b"", b"0", b"0\n"])
def test_files_without_entries(data):
    # CheckpointReadBuffer returns no entries when the file ends before the count line.
    assert parse_leader_epoch_checkpoint(data) == []


@pytest.mark.parametrize(
    ("data", "line", "position"),
    [
        (b"1\n0\n", 1, 0),  # unknown version
        (b" 0\n0\n", 1, 0),  # Integer.parseInt takes no blanks
        (b"0 \n0\n", 1, 0),
        (b"0\nx\n", 2, 2),
        (b"0\n-1\n", 2, 2),
        (b"0\n2\n1 5\n", 2, 2),  # fewer entries than counted
        (b"0\n1\n1 5\n2 9\n", 4, 8),  # more entries than counted
        (b"0\n1\n 1 5\n", 3, 4),  # leading blank: Java's split gives an empty first field
        (b"0\n1\n\n", 3, 4),  # empty entry line
        (b"0\n1\n1 5 6\n", 3, 4),
        (b"0\n1\n1 x\n", 3, 4),
        (b"0\n1\n2147483648 5\n", 3, 4),  # epoch above int32
        (b"0\n1\n1 9223372036854775808\n", 3, 4),  # offset above int64
        (b"0\n1\n1 1_000\n", 3, 4),  # Python's int() would take this; Java does not
    ],
)
def test_malformed_leader_epoch_checkpoints(data, line, position):
    with pytest.raises(IndexFileError) as caught:
        parse_leader_epoch_checkpoint(data, file="p-0/leader-epoch-checkpoint")
    error = caught.value
    assert error.file == "p-0/leader-epoch-checkpoint"
    assert f"line {line}" in str(error)
    assert error.position == position


def test_signs_as_java_parses_them():
    assert parse_leader_epoch_checkpoint(b"+0\n1\n-1 +5\n") == [EpochEntry(-1, 5)]


def test_not_utf8():
    with pytest.raises(IndexFileError) as caught:
        parse_leader_epoch_checkpoint(b"0\n1\n1 5\xff\n")
    assert caught.value.position == 7


def test_position_counts_bytes_not_characters():
    with pytest.raises(IndexFileError) as caught:
        parse_offset_checkpoint("0\n2\ntöpic 0 5\nbad\n".encode())
    assert caught.value.position == len("0\n2\ntöpic 0 5\n".encode())


def test_offset_checkpoint():
    data = kafka_write(["my-topic 0 5", "my.topic 3 -1", "__consumer_offsets 49 1234567890123"])
    assert parse_offset_checkpoint(data) == {
        TopicPartition("my-topic", 0): 5,
        TopicPartition("my.topic", 3): -1,
        TopicPartition("__consumer_offsets", 49): 1234567890123,
    }


def test_offset_checkpoint_duplicate_keeps_the_last():
    # OffsetCheckpointFile.read puts every line into a HashMap.
    data = kafka_write(["t 0 5", "t 0 9"])
    assert parse_offset_checkpoint(data) == {TopicPartition("t", 0): 9}


@pytest.mark.parametrize("bad", ["t 0", "t x 5", "t 0 5 6", "t 0 x"])
def test_malformed_offset_checkpoint(bad):
    with pytest.raises(IndexFileError) as caught:
        parse_offset_checkpoint(kafka_write(["ok 1 1", bad]))
    assert "line 4" in str(caught.value)


@pytest.mark.parametrize("name", OFFSET_CHECKPOINTS)
def test_read_offset_checkpoint_files(tmp_path, name):
    path = tmp_path / name
    path.write_bytes(kafka_write(["a 0 10", "a 1 20"]))
    assert read_offset_checkpoint(path) == {TopicPartition("a", 0): 10, TopicPartition("a", 1): 20}
    assert CLEANER_OFFSET_CHECKPOINT in OFFSET_CHECKPOINTS


def test_read_leader_epoch_checkpoint_file(tmp_path):
    path = tmp_path / LEADER_EPOCH_CHECKPOINT
    path.write_bytes(kafka_write(["0 0", "1 77"]))
    assert read_leader_epoch_checkpoint(path) == [EpochEntry(0, 0), EpochEntry(1, 77)]
    path.write_bytes(b"0\n3\n0 0\n")
    with pytest.raises(IndexFileError) as caught:
        read_leader_epoch_checkpoint(path)
    assert caught.value.file == str(path)


def kafka_uuid_string(raw: bytes) -> str:
    # Uuid.toString: URL-safe base64 without padding.
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def test_partition_metadata(tmp_path):
    raw = uuid.uuid4().bytes
    text = f"version: 0\ntopic_id: {kafka_uuid_string(raw)}"  # PartitionMetadata.encode
    path = tmp_path / "partition.metadata"
    path.write_text(text)
    metadata = read_partition_metadata(path)
    assert metadata == PartitionMetadata(0, kafka_uuid_string(raw))
    assert metadata.topic_id_bytes == raw


@pytest.mark.parametrize(
    "text",
    [
        "",
        "version: 0",
        "version:0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAQ",
        "version: x\ntopic_id: AAAAAAAAAAAAAAAAAAAAAQ",
        "version: -1\ntopic_id: AAAAAAAAAAAAAAAAAAAAAQ",
        "version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAA",  # the zero UUID
        "version: 0\ntopic_id: AAAA",  # 3 bytes
        "version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAA+Q",  # not URL-safe base64
        "version: 0\ntopic_id: ",
    ],
)
def test_bad_partition_metadata(text):
    with pytest.raises(IndexFileError):
        parse_partition_metadata(text.encode())


ID = "AAAAAAAAAAAAAAAAAAAAAQ"


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        # PartitionMetadataReadBuffer.parseLine: the key must be the expected one.
        (f"versions: 0\ntopic_id: {ID}", "line 1: expected 'version: ...'"),
        (f"version: 0\ntopicId: {ID}", "line 2: expected 'topic_id: ...'"),
        (f"topic_id: {ID}\nversion: 0", "line 1: expected 'version: ...'"),
        (f"\ufeffversion: 0\ntopic_id: {ID}", "line 1: expected 'version: ...'"),  # a BOM
        (f"version : 0\ntopic_id: {ID}", "line 1: expected 'version: ...'"),
        (f"version: 0\n\ntopic_id: {ID}", "line 2: expected 'topic_id: ...'"),
        ("version: 0\n", "no line 2, expected 'topic_id: ...' there"),
        ("", "no line 1, expected 'version: ...' there"),
        # Split once (Pattern.split(line, 2)): what follows is the value, whole.
        (f"version: 0: 1\ntopic_id: {ID}", "version '0: 1' is not an integer"),
        (f"version: 0 \ntopic_id: {ID}", "version '0 ' is not an integer"),
        (f"version: -1\ntopic_id: {ID}", "unrecognised version -1"),
        (f"version: 0\ntopic_id: {ID}: x", "is not a base64 UUID"),
        ("version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAA", "zero UUID"),
        ("version: 0\ntopic_id: " + "A" * 25, "is not a base64 UUID"),
        ("version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAQ=", "is not a base64 UUID"),
        (b"version: 0\ntopic_id: \xff", "not UTF-8"),
        # Integer.parseInt reads UTF-16 units: a digit outside the BMP is none.
        (f"version: \U0001d7ce\ntopic_id: {ID}", "is not an integer"),
    ],
)
def test_partition_metadata_the_broker_refuses(tmp_path, data, reason):
    path = tmp_path / "partition.metadata"
    path.write_bytes(data if isinstance(data, bytes) else data.encode())
    with pytest.raises(KafkaFormatError) as caught:
        read_partition_metadata(path)
    assert isinstance(caught.value, IndexFileError)
    assert caught.value.file == str(path)
    assert reason in caught.value.reason


@pytest.mark.parametrize(
    "text",
    [
        f"version: 0\ntopic_id: {ID}",  # PartitionMetadata.encode: no newline at the end
        f"version: 0\r\ntopic_id: {ID}\r\n",
        f"version:\t 0\ntopic_id:  {ID}\n",  # ":\\s+": any run of Java whitespace
        f"version: 3\ntopic_id: {ID}",  # later versions are read, for downgrades
        f"version: +0\ntopic_id: {ID}",  # Integer.parseInt takes a sign
        f"version: \u0660\ntopic_id: {ID}",  # and any Unicode decimal digit (ARABIC-INDIC 0)
        f"version: 0\ntopic_id: {ID}==",  # Base64's padding is optional, and allowed
        f"version: 0\ntopic_id: {ID}\nwhatever: follows",  # never read
    ],
)
def test_partition_metadata_the_broker_reads(text):
    metadata = parse_partition_metadata(text.encode())
    assert metadata.topic_id.rstrip("=") == ID
    assert metadata.topic_id_bytes == bytes(15) + b"\x01"


EPOCHS = st.lists(
    st.tuples(st.integers(-(1 << 31), (1 << 31) - 1), st.integers(-(1 << 63), (1 << 63) - 1)),
    max_size=20,
)


@given(EPOCHS, st.sampled_from(["\n", "\r\n"]))
def test_epoch_round_trip(entries, newline):
    data = kafka_write([f"{e} {o}" for e, o in entries], newline=newline)
    assert parse_leader_epoch_checkpoint(data) == [EpochEntry(e, o) for e, o in entries]


TOPICS = st.text("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-", min_size=1)


@given(st.dictionaries(st.tuples(TOPICS, st.integers(0, 1000)), st.integers(0, 1 << 62)))
def test_offset_round_trip(offsets):
    data = kafka_write([f"{t} {p} {o}" for (t, p), o in offsets.items()])
    parsed = parse_offset_checkpoint(data)
    assert parsed == {TopicPartition(t, p): o for (t, p), o in offsets.items()}


@given(st.binary(max_size=60))
def test_random_bytes_raise_only_our_error(data):
    for parse in (parse_leader_epoch_checkpoint, parse_offset_checkpoint, parse_partition_metadata):
        try:
            parse(data)
        except KafkaFormatError as error:
            assert isinstance(error, IndexFileError)
