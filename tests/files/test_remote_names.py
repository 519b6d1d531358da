"""Tiered-storage (KIP-405) object names: ``<offset>-<remote segment id>.<suffix>``.

Oracle: Kafka's ``RemoteLogSegmentFileset`` (``FILENAME_FORMAT``
``(\\d+-)([a-zA-Z0-9_-]{22})(\\.[a-z_]+)``, ``RemoteLogSegmentFileType.toFilename``) and
``RemoteTopicPartitionDirectory`` (``topic-partition-uuid``).
"""

from __future__ import annotations

import pytest

from kafka_format.runtime.files import kinds
from kafka_format.runtime.files.names import (
    FileKind,
    parse_kraft_snapshot_name,
    parse_remote_partition_dir_name,
    parse_segment_file_name,
    remote_segment_file_name,
)

ID = "mTjyhvN8QCuAvYqJZP6ZpA"
DASHED = "-Tjyhv_8QCuAvYqJZP6Z-A"  # base64url uses - and _: the offset ends at the first dash


@pytest.mark.parametrize(
    ("suffix", "kind"),
    [
        (".log", FileKind.LOG),
        (".index", FileKind.INDEX),
        (".timeindex", FileKind.TIME_INDEX),
        (".txnindex", FileKind.TXN_INDEX),
        (".snapshot", FileKind.PRODUCER_SNAPSHOT),
        (".leader_epoch_checkpoint", FileKind.LEADER_EPOCH_CHECKPOINT),
    ],
)
@pytest.mark.parametrize("remote_id", [ID, DASHED])
def test_every_file_type_of_a_fileset(suffix, kind, remote_id):
    name = f"00000000000000000120-{remote_id}{suffix}"
    parsed = parse_segment_file_name(name)
    assert parsed is not None
    assert (parsed.base_offset, parsed.kind, parsed.remote_id) == (120, kind, remote_id)
    assert parsed.is_live and parsed.is_remote and parsed.is_canonical
    assert parsed.segment_key == (120, remote_id)
    assert parsed.sibling(FileKind.LOG) == f"00000000000000000120-{remote_id}.log"
    assert remote_segment_file_name(120, remote_id, kind) == name
    assert kinds.classify(name) is kinds.of_segment(kind)


def test_local_names_keep_no_remote_id():
    parsed = parse_segment_file_name("00000000000000000120.index")
    assert parsed.remote_id is None and not parsed.is_remote
    assert parsed.segment_key == (120, None)
    assert parsed.sibling(FileKind.LOG) == "00000000000000000120.log"
    # a short offset, as Kafka reads it (Long.parseLong of the part before the first dot)
    short = parse_segment_file_name(f"120-{ID}.log")
    assert short.base_offset == 120 and short.remote_id == ID and not short.is_canonical


@pytest.mark.parametrize(
    "name",
    [
        "00000000000000000120-0000000003.checkpoint",  # KRaft snapshot: not a segment file
        "00000000000000000120-0000000003.log",  # 10 characters: no Kafka Uuid
        f"00000000000000000120-{ID}x.log",  # 23 characters
        f"00000000000000000120-{ID[:-1]}.log",  # 21
        f"00000000000000000120-{ID[:-1]}=.log",  # padding is not base64url as Uuid writes it
        f"-{ID}.log",  # no offset
        f"12a-{ID}.log",
        f"00000000000000000120-{ID}.checkpoint",
        f"00000000000000000120-{ID}",  # no suffix
    ],
)
def test_not_remote_object_names(name):
    assert parse_segment_file_name(name) is None


def test_kraft_checkpoints_still_parse():
    parsed = parse_kraft_snapshot_name("00000000000000000120-0000000003.checkpoint")
    assert (parsed.end_offset, parsed.epoch) == (120, 3)


def test_temporary_suffixes_of_a_remote_name():
    parsed = parse_segment_file_name(f"00000000000000000120-{ID}.index.deleted")
    assert parsed.remote_id == ID and parsed.temp_suffix == ".deleted" and not parsed.is_live
    assert parsed.is_canonical


def test_remote_partition_directories():
    parsed = parse_remote_partition_dir_name(f"my-topic.v2-12-{ID}")
    assert (parsed.topic, parsed.partition, parsed.topic_id) == ("my-topic.v2", 12, ID)
    assert parse_remote_partition_dir_name("orders-0") is None
    assert parse_remote_partition_dir_name(f"orders-x-{ID}") is None
    assert parse_remote_partition_dir_name(f"orders-99999999999-{ID}") is None  # not an int32


def test_a_bad_remote_id_is_refused_when_writing_a_name():
    with pytest.raises(ValueError, match="not a Kafka Uuid"):
        remote_segment_file_name(0, "short", FileKind.LOG)
