"""Tiered-storage (KIP-405) objects, ``<offset>-<remote segment id>.<suffix>``, read by every
command as the local segments they were copied from.

The objects are a partition written by PartitionWriter (as a broker writes it), renamed the way
Kafka's ``RemoteLogSegmentFileset`` names a segment's fileset, in a ``topic-N-<topic id>``
folder (``RemoteTopicPartitionDirectory``). Oracles: the same commands on the local partition,
and the records PartitionWriter says it wrote.
"""

from __future__ import annotations

import base64
import io
import itertools
import shutil
import socket
import uuid
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest

import kafka_format
from kafka_format.runtime.cli import main
from kafka_format.runtime.files import checkpoints
from kafka_format.runtime.files.names import FileKind, parse_segment_file_name
from kafka_format.runtime.messages.kafka4_topics import encode_remote_log_metadata_record
from kafka_format.runtime.write.writer import Message, PartitionWriter, Producer

TOPIC_ID = "Uj5wn_FqTXirEASvVZRY1w"
FOLDER = f"orders-0-{TOPIC_ID}"


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        status = main(list(argv))
    return status, out.getvalue(), err.getvalue()


def remote_id(base: int) -> str:
    """A Kafka Uuid as Uuid.toString writes it: 16 bytes, base64url, no padding."""
    return base64.urlsafe_b64encode(uuid.UUID(int=(base + 1) * 7919).bytes).decode().rstrip("=")


@pytest.fixture(scope="module")
def tiered(tmp_path_factory) -> dict:
    root = tmp_path_factory.mktemp("tiered")
    clock = itertools.count(1_700_000_000_000, 1000).__next__
    p1 = Producer(501)
    with PartitionWriter(
        root / "local", "orders", 0, segment_bytes=4096, index_interval_bytes=512, clock=clock
    ) as w:
        for r in range(20):
            w.append([Message(f"k{r}-{i}".encode(), f"v{r}-{i}".encode() * 8) for i in range(5)])
            w.append([Message(b"t", f"{r}".encode())], producer=p1, transactional=True)
            if r % 4 == 3:
                (w.abort if r % 8 == 3 else w.commit)(p1)
    local = root / "local" / "orders-0"
    folder = root / "remote" / FOLDER
    folder.mkdir(parents=True)
    bases = sorted(
        p.base_offset
        for f in local.iterdir()
        if (p := parse_segment_file_name(f.name)) and p.kind is FileKind.LOG
    )
    assert len(bases) >= 2
    epochs = (local / checkpoints.LEADER_EPOCH_CHECKPOINT).read_bytes()
    ends = {}
    for base, following in itertools.pairwise([*bases, None]):
        stem = f"{base:020d}-{remote_id(base)}"
        for kind in (FileKind.LOG, FileKind.INDEX, FileKind.TIME_INDEX, FileKind.TXN_INDEX):
            src = local / f"{base:020d}{kind.suffix}"
            if src.exists():
                shutil.copyfile(src, folder / f"{stem}{kind.suffix}")
        # RemoteLogManager.copyLogSegment uploads the snapshot at the next segment's base
        # offset and the leader epochs up to it, both named after this segment
        snapshot = local / f"{following:020d}.snapshot" if following is not None else None
        if snapshot is not None and snapshot.exists():
            shutil.copyfile(snapshot, folder / f"{stem}.snapshot")
        (folder / f"{stem}.leader_epoch_checkpoint").write_bytes(epochs)
        ends[base] = (following - 1) if following is not None else w.next_offset - 1
    return {"root": root, "local": local, "folder": folder, "bases": bases, "ends": ends}


def object_name(base: int, suffix: str) -> str:
    return f"{base:020d}-{remote_id(base)}{suffix}"


def without_names(text: str) -> list[str]:
    return [line for line in text.splitlines() if not line.startswith("Dumping ")]


def test_dump_of_the_folder_is_the_local_partitions(tiered):
    status, out, err = run("dump", str(tiered["folder"]))
    assert status == 0, err
    local_status, local_out, _ = run("dump", str(tiered["local"]))
    assert local_status == 0
    assert without_names(out) == without_names(local_out)
    for base in tiered["bases"]:
        assert f"Log starting offset: {base}" in out


@pytest.mark.parametrize("suffix", [".index", ".timeindex", ".txnindex", ".log"])
def test_dump_of_each_object(tiered, suffix):
    base = tiered["bases"][1]
    local = tiered["local"] / f"{base:020d}{suffix}"
    if not local.exists():
        pytest.skip(f"no {suffix} for this segment")
    status, out, err = run("dump", str(tiered["folder"] / object_name(base, suffix)))
    assert status == 0, err
    assert "no base offset" not in err
    _, local_out, _ = run("dump", str(local))
    assert without_names(out) == without_names(local_out) and without_names(out)


def test_dump_of_the_snapshot_and_leader_epochs(tiered):
    base = tiered["bases"][0]
    for suffix in (".snapshot", ".leader_epoch_checkpoint"):
        status, out, err = run("dump", str(tiered["folder"] / object_name(base, suffix)))
        assert status == 0, (suffix, err)
    assert out.splitlines()[1:] == ["epoch: 0 startOffset: 0"]


def test_an_index_is_checked_against_the_log_of_its_own_id(tiered, tmp_path):
    folder = tmp_path / FOLDER
    shutil.copytree(tiered["folder"], folder)
    base = tiered["bases"][1]
    index = folder / object_name(base, ".index")
    status, out, _ = run("verify", str(index))
    assert status == 0, out
    # the .log of the same offset and another id is not this index's: it is not used
    log = folder / object_name(base, ".log")
    log.rename(folder / f"{base:020d}-{'Q' * 22}.log")
    status, out, _ = run("verify", str(index))
    assert f"no {object_name(base, '.log')} beside it" in out


def test_verify_the_folder(tiered):
    status, out, err = run("verify", str(tiered["folder"]))
    assert status == 0, out + err
    summary = out.splitlines()[-1]
    assert f"{len(tiered['bases'])} log" in summary
    assert f"{len(tiered['bases'])} leader_epoch_checkpoint" in summary
    assert "0 errors, 0 warnings" in summary


def test_verify_finds_damage_in_an_object(tiered, tmp_path):
    folder = tmp_path / FOLDER
    shutil.copytree(tiered["folder"], folder)
    log = folder / object_name(tiered["bases"][0], ".log")
    data = bytearray(log.read_bytes())
    data[100] ^= 0xFF
    log.write_bytes(bytes(data))
    status, out, _ = run("verify", str(folder))
    assert status == 1
    assert any(line.startswith(f"error: {log}") for line in out.splitlines())


def test_find(tiered):
    base = tiered["bases"][1]
    status, out, err = run("find", "--offset", str(base + 2), str(tiered["folder"]))
    assert status == 0, err
    assert out.splitlines()[0] == f"Segment: {tiered['folder'] / object_name(base, '.log')} " + (
        f"(base offset {base})"
    )
    assert f"| offset: {base + 2} " in out


def test_recover_writes_a_local_partition(tiered, tmp_path):
    dest = tmp_path / "copy"
    status, out, err = run("recover", str(tiered["folder"]), str(dest))
    assert status == 0, out + err
    assert sorted(p.name for p in dest.glob("*.log")) == [f"{b:020d}.log" for b in tiered["bases"]]
    assert run("verify", str(dest))[0] == 0


def test_read_table_and_iter_records(tiered):
    table = kafka_format.read_table(tiered["folder"])
    local = kafka_format.read_table(tiered["local"])
    assert table.num_rows == local.num_rows > 0
    assert table.column("offset").to_pylist() == local.column("offset").to_pylist()
    assert set(table.column("topic").to_pylist()) == {"orders"}  # from topic-N-<topic id>
    assert set(table.column("partition").to_pylist()) == {0}
    assert sum(1 for _ in kafka_format.iter_records(tiered["folder"])) == local.num_rows


def test_two_uploads_of_one_offset_are_ambiguous(tiered, tmp_path):
    folder = tmp_path / FOLDER
    shutil.copytree(tiered["folder"], folder)
    base = tiered["bases"][1]
    other = f"{base:020d}-{'Q' * 22}.log"
    shutil.copyfile(folder / object_name(base, ".log"), folder / other)
    names = sorted([object_name(base, ".log"), other])
    line = f"two segments with base offset {base}: {names[0]} and {names[1]}"
    for command in ("dump", "verify", "find --offset 0", "stats"):
        status, out, err = run(*command.split(), str(folder))
        assert status == 1, command
        assert line in out + err, command
        assert "Traceback" not in err
    with pytest.raises(kafka_format.KafkaFormatError, match=line):
        kafka_format.read_table(folder)


# --- verify --remote-log-metadata ----------------------------------------------------------


def segment_records(segment: str, start: int, end: int, states=(0, 1)) -> list[bytes]:
    tip = {"name": "orders", "id": TOPIC_ID, "partition": 0}
    rlsid = {"topicIdPartition": tip, "id": segment}
    out = [
        encode_remote_log_metadata_record(
            0,
            0,
            {
                "remoteLogSegmentId": rlsid,
                "startOffset": start,
                "endOffset": end,
                "brokerId": 1,
                "maxTimestampMs": 0,
                "eventTimestampMs": 0,
                "segmentLeaderEpochs": [{"leaderEpoch": 0, "offset": start}],
                "segmentSizeInBytes": 4096,
                "customMetadata": None,
                "remoteLogSegmentState": 0,
            },
        )
    ]
    for state in states[1:]:
        out.append(
            encode_remote_log_metadata_record(
                1,
                0,
                {
                    "remoteLogSegmentId": rlsid,
                    "brokerId": 1,
                    "eventTimestampMs": 0,
                    "customMetadata": None,
                    "remoteLogSegmentState": state,
                },
            )
        )
    return out


def write_metadata(log_dir: Path, values: list[bytes]) -> Path:
    with PartitionWriter(log_dir, "__remote_log_metadata", 7) as w:
        w.append([Message(None, v) for v in values])
    return log_dir / "__remote_log_metadata-7"


def test_metadata_and_objects_agree(tiered, tmp_path):
    values = [
        v
        for base in tiered["bases"]
        for v in segment_records(remote_id(base), base, tiered["ends"][base])
    ]
    metadata = write_metadata(tmp_path / "meta", values)
    status, out, _ = run("verify", "--remote-log-metadata", str(metadata), str(tiered["folder"]))
    assert status == 0, out
    assert "1 remote-log-metadata" in out.splitlines()[-1]
    # the log dir holding the metadata partition works too
    status, out, _ = run(
        "verify", "--remote-log-metadata", str(tmp_path / "meta"), str(tiered["folder"])
    )
    assert status == 0, out


def test_metadata_and_objects_disagree(tiered, tmp_path):
    first, second = tiered["bases"][:2]
    gone, stale = remote_id(1000), remote_id(1050)
    values = [
        *segment_records(remote_id(first), first, tiered["ends"][first] + 1),  # range
        # the second segment's object is present, but its metadata says it was deleted
        *segment_records(remote_id(second), second, tiered["ends"][second], (0, 1, 2, 3)),
        *segment_records(gone, 1000, 1099),  # missing
        *segment_records(stale, 1050, 1199),  # overlap with the missing one, missing too
    ]
    metadata = write_metadata(tmp_path / "meta", values)
    folder = tmp_path / FOLDER
    shutil.copytree(tiered["folder"], folder)
    status, out, _ = run("verify", "--remote-log-metadata", str(metadata), str(folder))
    assert status == 1
    errors = [line for line in out.splitlines() if line.startswith("error: ")]
    first_log = folder / object_name(first, ".log")
    second_log = folder / object_name(second, ".log")
    expected = {
        f"error: {first_log}: offsets disagree with the metadata's startOffset {first}, "
        f"endOffset {tiered['ends'][first] + 1}: its last offset is {tiered['ends'][first]}",
        f"error: {second_log}: extra object: segment {remote_id(second)} is deleted "
        "(DELETE_SEGMENT_FINISHED at metadata offset 5)",
        f"error: {folder / f'{1000:020d}-{gone}.log'}: missing object: segment {gone} "
        "[1000, 1099] is COPY_SEGMENT_FINISHED in the metadata (offset 7)",
        f"error: {folder / f'{1050:020d}-{stale}.log'}: missing object: segment {stale} "
        "[1050, 1199] is COPY_SEGMENT_FINISHED in the metadata (offset 9)",
        f"error: {folder / f'{1050:020d}-{stale}.log'}: segment {stale} [1050, 1199] overlaps "
        f"segment {gone} [1000, 1099]",
    }
    assert set(errors) - expected == set() and expected - set(errors) == set()


def test_metadata_path_without_the_topic(tiered, tmp_path):
    status, out, _ = run(
        "verify", "--remote-log-metadata", str(tiered["root"] / "local"), str(tiered["folder"])
    )
    assert status == 1
    assert "no __remote_log_metadata-N partition here" in out


# --- an object store (S3, through moto) ----------------------------------------------------


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def s3(tiered):
    moto_server = pytest.importorskip("moto.server")
    pafs = pytest.importorskip("pyarrow.fs")
    port = _free_port()
    server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=port)
    server.start()
    try:
        fs = pafs.S3FileSystem(
            endpoint_override=f"127.0.0.1:{port}",
            scheme="http",
            access_key="x",
            secret_key="x",
            region="us-east-1",
            allow_bucket_creation=True,
        )
        fs.create_dir("tiered")
        for path in tiered["folder"].iterdir():
            with fs.open_output_stream(f"tiered/{FOLDER}/{path.name}") as out:
                out.write(path.read_bytes())
        yield fs
    finally:
        server.stop()


def test_objects_in_s3_read_as_one_partition(tiered, s3):
    from kafka_format.runtime.files.storage import ArrowStorage
    from kafka_format.runtime.log.partition import Partition
    from kafka_format.spark_udfs._discovery import discover

    storage = ArrowStorage(s3, lambda p: f"s3://{p}")
    partition = Partition.open(f"tiered/{FOLDER}", storage)
    assert (partition.topic, partition.partition) == ("orders", 0)
    assert [s.base_offset for s in partition.segments] == tiered["bases"]
    for segment in partition.segments:
        assert segment.remote_id == remote_id(segment.base_offset)
        assert segment.index is not None and segment.index.name == object_name(
            segment.base_offset, ".index"
        )
        assert segment.leader_epoch_checkpoint is not None
    base = tiered["bases"][1]
    found = partition.find_offset(base + 3)
    assert found is not None and found.record.offset == base + 3 and found.used_index
    # the kafka_log source's discovery (what a Spark driver plans splits from)
    (files,) = discover(s3, "tiered")
    assert (files.topic, files.partition) == ("orders", 0)
    assert [s.base_offset for s in files.segments] == tiered["bases"]
    assert [s.index for s in files.segments] == [
        f"tiered/{FOLDER}/{object_name(b, '.index')}" for b in tiered["bases"]
    ]


def test_two_uploads_in_s3_are_ambiguous(tiered, s3):
    from kafka_format.runtime.files.storage import ArrowStorage
    from kafka_format.runtime.log.partition import Partition

    base = tiered["bases"][0]
    other = f"{base:020d}-{'Q' * 22}.log"
    s3.copy_file(f"tiered/{FOLDER}/{object_name(base, '.log')}", f"tiered/dup/{other}")
    s3.copy_file(f"tiered/{FOLDER}/{object_name(base, '.log')}", f"tiered/dup/x-{base}.bin")
    s3.copy_file(
        f"tiered/{FOLDER}/{object_name(base, '.log')}", f"tiered/dup/{object_name(base, '.log')}"
    )
    with pytest.raises(kafka_format.KafkaFormatError, match=f"base offset {base}: "):
        Partition.open("tiered/dup", ArrowStorage(s3, lambda p: f"s3://{p}"))
