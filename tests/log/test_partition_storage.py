"""Partition over the reader protocol: a pyarrow.fs filesystem gives the local look-ups.

The partition is written by :class:`~kafka_format.runtime.write.writer.PartitionWriter`
(indexes, time indexes, .txnindex, snapshots, leader-epoch checkpoint as a broker writes
them); oracles are the records it says it wrote and the same look-ups on the local disk
(memory-mapped), which tests/log/test_partition.py checks against brute force.
"""

from __future__ import annotations

import itertools
import struct
from pathlib import Path

import pyarrow.fs as pafs
import pytest

from kafka_format.runtime.files.storage import ArrowStorage
from kafka_format.runtime.log.partition import Partition
from kafka_format.runtime.write.writer import Message, PartitionWriter, Producer

T0 = 1_700_000_000_000


@pytest.fixture(scope="module")
def log_dir(tmp_path_factory) -> tuple[Path, list]:
    root = tmp_path_factory.mktemp("storage")
    clock = itertools.count(T0, 1000).__next__
    p1, p2 = Producer(501), Producer(502)
    with PartitionWriter(
        root,
        "orders",
        3,
        segment_bytes=4096,
        index_interval_bytes=512,
        keep_records=True,
        clock=clock,
    ) as w:
        for r in range(30):
            w.append([Message(f"k{r}-{i}".encode(), f"v{r}-{i}".encode() * 8) for i in range(5)])
            w.append([Message(b"t", f"{r}".encode())], producer=p1, transactional=True)
            w.append([Message(b"u", f"{r}".encode())], producer=p2, transactional=True)
            if r % 4 == 3:
                w.commit(p1)
                w.abort(p2)
    return root, w.records


def arrow_partitions(root: Path) -> dict[str, Partition]:
    sub = pafs.SubTreeFileSystem(str(root), pafs.LocalFileSystem())
    return {
        "local fs (absolute paths)": Partition.open(
            str(root / "orders-3"), ArrowStorage(pafs.LocalFileSystem())
        ),
        "subtree fs": Partition.open("orders-3", ArrowStorage(sub, lambda p: f"sub://{p}")),
    }


def outcome(result):
    if result is None:
        return None
    return (
        result.segment.base_offset,
        result.position,
        result.batch.base_offset,
        None if result.record is None else result.record.offset,
        result.used_index,
    )


def test_the_same_files(log_dir):
    root, _ = log_dir
    local = Partition.open(root / "orders-3")
    assert len(local.segments) >= 3
    for name, remote in arrow_partitions(root).items():
        assert (remote.topic, remote.partition) == ("orders", 3), name
        assert [(s.base_offset, s.size) for s in remote.segments] == [
            (s.base_offset, s.size) for s in local.segments
        ]
        for mine, theirs in zip(remote.segments, local.segments, strict=True):
            for kind in ("log", "index", "timeindex", "txnindex"):
                a, b = getattr(mine, kind), getattr(theirs, kind)
                assert (a is None) == (b is None) and (a is None or a.name == b.name)
        assert [s.offset for s in remote.snapshots] == [s.offset for s in local.snapshots]
        assert remote.leader_epochs() == local.leader_epochs()
        assert remote.aborted_transactions() == local.aborted_transactions()
        assert remote.aborted_transactions()  # the writer aborted some
        assert remote.log_end_offset() == local.log_end_offset()
        a, b = remote.producer_snapshot(), local.producer_snapshot()
        assert (a is None) == (b is None)
        if a is not None:
            assert a.entries == b.entries


def test_offset_and_timestamp_lookups_agree(log_dir):
    root, records = log_dir
    local = Partition.open(root / "orders-3")
    remotes = arrow_partitions(root)
    last = records[-1].offset
    offsets = sorted({0, 1, last, last + 1, *range(0, last, 7)})
    for offset in offsets:
        want = outcome(local.find_offset(offset))
        if offset <= last:
            assert want is not None and want[3] >= offset
        for name, remote in remotes.items():
            assert outcome(remote.find_offset(offset)) == want, (name, offset)
    for ts in [T0 - 1, T0 + 5_500, T0 + 61_000, T0 + 10**9]:
        want = outcome(local.find_timestamp(ts))
        for name, remote in remotes.items():
            assert outcome(remote.find_timestamp(ts)) == want, (name, ts)
    assert any(r.used_index for r in [local.find_offset(o) for o in offsets[5:]] if r)


def test_damaged_index_falls_back_the_same_way(tmp_path, log_dir):
    root, _ = log_dir
    copy = tmp_path / "orders-3"
    copy.mkdir()
    for f in (root / "orders-3").iterdir():
        copy.joinpath(f.name).write_bytes(f.read_bytes())
    index = sorted(copy.glob("*.index"))[1]
    data = bytearray(index.read_bytes())
    for slot in range(0, len(data), 8):  # every entry 5 bytes into its batch
        (pos,) = struct.unpack_from(">i", data, slot + 4)
        struct.pack_into(">i", data, slot + 4, pos + 5)
    index.write_bytes(bytes(data))
    local = Partition.open(copy)
    remote = Partition.open(str(copy), ArrowStorage(pafs.LocalFileSystem()))
    base = local.segments[1].base_offset
    notes = []
    for offset in range(base + 3, local.segments[2].base_offset, 5):
        want = local.find_offset(offset)
        got = remote.find_offset(offset)
        assert outcome(got) == outcome(want)
        assert got.index_note == want.index_note
        notes.append(got.index_note)
    assert any(notes)  # the damaged entries were seen and set aside on both


def test_log_start_offset_checkpoint_through_the_storage(tmp_path, log_dir):
    root, _ = log_dir
    copy = tmp_path / "orders-3"
    copy.mkdir()
    for f in (root / "orders-3").iterdir():
        copy.joinpath(f.name).write_bytes(f.read_bytes())
    sub = ArrowStorage(pafs.SubTreeFileSystem(str(tmp_path), pafs.LocalFileSystem()))
    assert Partition.open("orders-3", sub).log_start_offset == 0
    (tmp_path / "log-start-offset-checkpoint").write_text("0\n1\norders 3 42\n")
    assert Partition.open("orders-3", sub).log_start_offset == 42
    assert Partition.open(copy).log_start_offset == 42
    assert Partition.open("orders-3", sub).find_offset(10) is None  # below the log start


def test_not_a_directory_names_the_path(tmp_path):
    sub = ArrowStorage(pafs.SubTreeFileSystem(str(tmp_path), pafs.LocalFileSystem()), str.upper)
    with pytest.raises(Exception, match="not a directory") as info:
        Partition.open("absent-0", sub)
    assert "ABSENT-0" in str(info.value)
