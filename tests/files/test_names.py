"""File and directory names of a Kafka log dir (runtime/logfiles.py).

Names are built here the way Kafka builds them (LogFileUtils.filenamePrefixFromOffset: 20
zero-padded digits; LocalLog.logDirName / logDirNameWithSuffix(CappedLength)), then parsed.
"""

from __future__ import annotations

import uuid

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kafka_format.runtime.errors import KafkaFormatError
from kafka_format.runtime.files.names import (
    DirState,
    FileKind,
    offset_from_file_name,
    parse_kraft_snapshot_name,
    parse_partition_dir_name,
    parse_segment_file_name,
    partition_dir_name,
    segment_file_name,
)

INT64_MAX = (1 << 63) - 1
INT32_MAX = (1 << 31) - 1
SUFFIXES = {
    ".log": FileKind.LOG,
    ".index": FileKind.INDEX,
    ".timeindex": FileKind.TIME_INDEX,
    ".txnindex": FileKind.TXN_INDEX,
    ".snapshot": FileKind.PRODUCER_SNAPSHOT,
}


def kafka_prefix(offset: int) -> str:
    # NumberFormat with minimumIntegerDigits=20, no grouping.
    return str(offset).rjust(20, "0")


def kafka_capped_dir(topic: str, partition: int, suffix: str) -> str:
    # LocalLog.logDirNameWithSuffixCappedLength
    full_suffix = f"-{partition}.{uuid.uuid4().hex}{suffix}"
    return topic[: min(len(topic), 255 - len(full_suffix))] + full_suffix


@pytest.mark.parametrize("suffix", list(SUFFIXES))
@pytest.mark.parametrize("temp", [None, ".deleted", ".cleaned", ".swap"])
def test_segment_family_names(suffix, temp):
    name = kafka_prefix(120) + suffix + (temp or "")
    parsed = parse_segment_file_name(name)
    assert parsed is not None
    assert parsed.base_offset == 120
    assert parsed.kind is SUFFIXES[suffix]
    assert parsed.temp_suffix == temp
    assert parsed.is_live == (temp is None)
    assert parsed.is_canonical


@given(st.integers(0, INT64_MAX), st.sampled_from(list(FileKind)))
def test_segment_file_name_round_trip(offset, kind):
    name = segment_file_name(offset, kind)
    assert name == kafka_prefix(offset) + "." + kind.value
    parsed = parse_segment_file_name(name)
    assert (parsed.base_offset, parsed.kind, parsed.temp_suffix) == (offset, kind, None)
    assert offset_from_file_name(name) == offset


def test_short_offsets_are_accepted_as_kafka_does():
    # LogFileUtils.offsetFromFileName is Long.parseLong of what precedes the first dot.
    parsed = parse_segment_file_name("120.log")
    assert parsed.base_offset == 120
    assert not parsed.is_canonical


@pytest.mark.parametrize(
    "name",
    [
        "leader-epoch-checkpoint",
        "partition.metadata",
        "00000000000000000120",
        "00000000000000000120.foo",
        "00000000000000000120.log.tmp",
        "abc.log",
        ".log",
        "-1.log",
        "99999999999999999999.log",  # above int64
        "hello-0.00000000000000000000.timeindex",
        "00000000000000000000-0000000001.checkpoint",
    ],
)
def test_other_files_are_not_segment_files(name):
    assert parse_segment_file_name(name) is None


def test_offset_from_file_name_refuses_non_offsets():
    with pytest.raises(ValueError):
        offset_from_file_name("leader-epoch-checkpoint")
    assert offset_from_file_name("00000000000000000042.snapshot.deleted") == 42


def test_segment_file_name_refuses_bad_input():
    with pytest.raises(ValueError):
        segment_file_name(-1, FileKind.LOG)
    with pytest.raises(ValueError):
        segment_file_name(1, FileKind.LOG, ".bak")
    assert segment_file_name(7, FileKind.INDEX, ".swap") == kafka_prefix(7) + ".index.swap"


@pytest.mark.parametrize(
    ("name", "topic", "partition"),
    [
        ("hello-0", "hello", 0),
        ("my-topic-with-dashes-12", "my-topic-with-dashes", 12),
        ("my.dotted_topic-3", "my.dotted_topic", 3),
        ("__consumer_offsets-49", "__consumer_offsets", 49),
        ("__cluster_metadata-0", "__cluster_metadata", 0),
        ("x-delete-0", "x-delete", 0),  # a topic may end in -delete; the name ends in -0
    ],
)
def test_live_partition_dirs(name, topic, partition):
    parsed = parse_partition_dir_name(name)
    assert (parsed.topic, parsed.partition, parsed.state) == (topic, partition, DirState.LIVE)
    assert parsed.unique_id is None
    assert partition_dir_name(topic, partition) == name


@pytest.mark.parametrize(
    ("suffix", "state"),
    [("-delete", DirState.DELETE), ("-future", DirState.FUTURE), ("-stray", DirState.STRAY)],
)
def test_suffixed_partition_dirs(suffix, state):
    unique = uuid.uuid4().hex
    parsed = parse_partition_dir_name(f"my-topic-7.{unique}{suffix}")
    assert (parsed.topic, parsed.partition, parsed.state) == ("my-topic", 7, state)
    assert parsed.unique_id == unique
    assert not parsed.topic_maybe_truncated


@pytest.mark.parametrize(
    "name",
    [
        "",
        "hello",
        "hello-",
        "-0",
        "hello-x",
        "hello-1.5",
        "hello-2147483648",  # above int32
        "hello-0-delete",  # ends in -delete without topic-N.uuid
        "hello.abc-future",
        "hello-0.a.b-delete",  # the last dot leaves "hello-0.a": partition "0.a"
    ],
)
def test_bad_partition_dirs(name):
    with pytest.raises(KafkaFormatError) as caught:
        parse_partition_dir_name(name)
    assert caught.value.file == name


def test_capped_delete_dir_of_a_long_topic():
    topic = "t" * 249  # Kafka's longest topic name
    name = kafka_capped_dir(topic, 3, "-delete")
    assert len(name) == 255
    parsed = parse_partition_dir_name(name)
    assert parsed.state is DirState.DELETE and parsed.partition == 3
    assert topic.startswith(parsed.topic) and len(parsed.topic) < len(topic)
    assert parsed.topic_maybe_truncated


TOPIC = st.text(
    alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-",
    min_size=1,
    max_size=249,
).filter(lambda t: t not in (".", ".."))


@given(TOPIC, st.integers(0, INT32_MAX), st.sampled_from([None, "-delete", "-future", "-stray"]))
def test_partition_dir_names_as_kafka_writes_them(topic, partition, suffix):
    if suffix is None:
        name = f"{topic}-{partition}"
    elif suffix == "-future":
        name = f"{topic}-{partition}.{uuid.uuid4().hex}{suffix}"  # logDirNameWithSuffix
    else:
        name = kafka_capped_dir(topic, partition, suffix)
    parsed = parse_partition_dir_name(name)
    assert parsed.partition == partition
    if parsed.topic_maybe_truncated:
        assert topic.startswith(parsed.topic)
    else:
        assert parsed.topic == topic


@given(st.text(max_size=40))
def test_partition_dir_parser_raises_only_our_error(name):
    try:
        parsed = parse_partition_dir_name(name)
    except KafkaFormatError:
        return
    assert name.startswith(parsed.topic + "-")


def test_kraft_snapshot_names():
    parsed = parse_kraft_snapshot_name("00000000000000001234-0000000007.checkpoint")
    assert (parsed.end_offset, parsed.epoch, parsed.partial, parsed.deleted) == (
        1234,
        7,
        False,
        False,
    )
    assert parse_kraft_snapshot_name("00000000000000001234-0000000007.checkpoint.deleted").deleted
    assert parse_kraft_snapshot_name(
        "00000000000000001234-0000000007-8812736.checkpoint.part"
    ).partial
    assert parse_kraft_snapshot_name("00000000000000001234.snapshot") is None
    assert parse_kraft_snapshot_name("cleaner-offset-checkpoint") is None
