"""``recover`` (runtime/log/recover.py) on generated log dirs damaged in known ways.

The oracles are independent of the code under test: batch positions come from walking the
undamaged segments' frames with ``struct`` (offset, length), their records from kafka-python
reading each batch's bytes. Each damage is made at known batches, so what must survive is
known: without salvage, the batches before the first damaged one (Kafka's recovery,
``LogSegment.recover`` / ``LogLoader.recoverLog``); with it, every batch the damage did not
touch, records byte for byte. The copy must verify clean (our ``verify`` checks every index
entry against the log), be read alike by kafka-python and by our reader, and where nothing was
lost before a segment its files must equal the broker-written originals.
"""

from __future__ import annotations

import os
import shutil
import struct
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kafka.record.memory_records import MemoryRecords

from kafka_format.runtime.analysis.verify import verify_paths
from kafka_format.runtime.errors import KafkaFormatError
from kafka_format.runtime.files.checkpoints import read_offset_checkpoint
from kafka_format.runtime.log.recover import recover
from kafka_format.runtime.read.reader import iter_records
from kafka_format.runtime.write.generate import generate_log_dir

_FRAME = struct.Struct(">qi")


@dataclass(frozen=True)
class Orig:
    """One batch of the undamaged source, as the oracle sees it."""

    segment: str
    position: int
    size: int
    last_offset: int
    records: tuple  # (offset, timestamp, key, value, headers) per data record
    control: bool


def _kafka_python_records(data: bytes) -> tuple[bool, tuple]:
    batch = MemoryRecords(data).next_batch()
    control = bool(getattr(batch, "is_control_batch", False))
    records = tuple(
        (r.offset, r.timestamp, r.key, r.value, tuple((k, v) for k, v in (r.headers or [])))
        for r in batch
    )
    return control, () if control else records


def oracle(partition: Path) -> list[Orig]:
    """Every batch of a partition, in order: frames walked with struct, records by
    kafka-python."""
    found = []
    for log in sorted(partition.glob("*.log")):
        data = log.read_bytes()
        pos = 0
        while pos + 12 <= len(data):
            offset, length = _FRAME.unpack_from(data, pos)
            size = 12 + length
            if data[pos + 16] == 2:  # v2: base offset + last offset delta (@23)
                offset += struct.unpack_from(">i", data, pos + 23)[0]
            control, records = _kafka_python_records(data[pos : pos + size])
            found.append(Orig(log.name, pos, size, offset, records, control))
            pos += size
    return found


def expected(batches: list[Orig]) -> list[tuple]:
    return [r for b in batches for r in b.records]


def ours(directory: Path) -> list[tuple]:
    return [
        (r.offset, r.timestamp, r.key, r.value, tuple((h.key, h.value) for h in r.headers))
        for r in iter_records(directory)
    ]


def theirs(directory: Path) -> list[tuple]:
    """kafka-python reading the recovered segments, batch after batch."""
    out = []
    for log in sorted(directory.glob("*.log")):
        reader = MemoryRecords(log.read_bytes())
        while reader.has_next():
            batch = reader.next_batch()
            if getattr(batch, "is_control_batch", False):
                continue
            out += [
                (r.offset, r.timestamp, r.key, r.value, tuple((k, v) for k, v in (r.headers or [])))
                for r in batch
            ]
    return out


@pytest.fixture(scope="module")
def source(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("recover") / "kafka"
    generate_log_dir(
        root, topics=["orders", "legacy-events"], partitions=1, records=300, segment_bytes=16384
    )
    (root / "EXPECTED.json").unlink()
    return root


@pytest.fixture
def damaged(source: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "damaged"
    shutil.copytree(source, copy)
    return copy


def _segments(partition: Path) -> list[str]:
    return sorted(p.name for p in partition.glob("*.log"))


def _patch(path: Path, position: int, data: bytes) -> None:
    raw = bytearray(path.read_bytes())
    raw[position : position + len(data)] = data
    path.write_bytes(bytes(raw))


def _in_segment(batches: list[Orig], segment: str) -> list[int]:
    return [i for i, b in enumerate(batches) if b.segment == segment]


# Each damage: (partition, what it does to the copy) -> indexes of the batches it touched.


def flip_bit(partition: Path, batches: list[Orig]) -> set[int]:
    """A bit flipped inside the records of a batch of the middle segment."""
    k = _in_segment(batches, _segments(partition)[1])[2]
    b = batches[k]
    at = b.position + b.size - 7
    raw = (partition / b.segment).read_bytes()
    _patch(partition / b.segment, at, bytes([raw[at] ^ 0x08]))
    return {k}


def lying_length(partition: Path, batches: list[Orig]) -> set[int]:
    """A length field that runs far past the end of the file."""
    k = _in_segment(batches, _segments(partition)[1])[3]
    b = batches[k]
    _patch(partition / b.segment, b.position + 8, struct.pack(">i", 0x7FFF0000))
    return {k}


def zeroed_region(partition: Path, batches: list[Orig]) -> set[int]:
    """300 zero bytes across the boundary of two batches."""
    k = _in_segment(batches, _segments(partition)[1])[1]
    b = batches[k]
    start = b.position + b.size - 150
    _patch(partition / b.segment, start, bytes(300))
    touched = {i for i in (k, k + 1, k + 2) if batches[i].segment == b.segment}
    return {i for i in touched if batches[i].position < start + 300}


def truncated_middle(partition: Path, batches: list[Orig]) -> set[int]:
    """The middle segment cut in the middle of one of its batches."""
    segment = _segments(partition)[1]
    ks = _in_segment(batches, segment)
    cut = ks[len(ks) // 2]
    b = batches[cut]
    path = partition / segment
    path.write_bytes(path.read_bytes()[: b.position + b.size // 2])
    return {i for i in ks if i >= cut}


def garbage_between(partition: Path, batches: list[Orig]) -> set[int]:
    """64 bytes of garbage inserted between two batches (no batch is touched)."""
    k = _in_segment(batches, _segments(partition)[1])[2]
    b = batches[k]
    path = partition / b.segment
    raw = path.read_bytes()
    cut = b.position + b.size
    path.write_bytes(raw[:cut] + b"\xde\xad\xbe\xef" * 16 + raw[cut:])
    return set()


DAMAGES = [flip_bit, lying_length, zeroed_region, truncated_middle, garbage_between]
PARTITIONS = ["orders-0", "legacy-events-0"]


def _first_damage(batches: list[Orig], touched: set[int], damage) -> int:
    """Where Kafka's recovery truncates: the first touched batch, or for garbage between
    batches, the batch after it."""
    if damage is garbage_between:
        segment = _segments_of(batches)[1]
        return _in_segment(batches, segment)[3]
    return min(touched)


def _segments_of(batches: list[Orig]) -> list[str]:
    return sorted({b.segment for b in batches})


@pytest.mark.parametrize("name", PARTITIONS)
@pytest.mark.parametrize("damage", DAMAGES, ids=lambda d: d.__name__)
def test_default_keeps_what_kafkas_recovery_keeps(source, damaged, tmp_path, name, damage):
    batches = oracle(source / name)
    touched = damage(damaged / name, batches)
    cut = _first_damage(batches, touched, damage)
    out = tmp_path / "out"
    report = recover(damaged, out)
    want = expected(batches[:cut])
    assert ours(out / name) == want
    assert theirs(out / name) == want
    # every later segment is gone; the damaged one is truncated at the first bad batch
    segments = _segments(source / name)
    assert _segments(out / name) == segments[:2]
    kept = out / name / segments[1]
    assert kept.stat().st_size == batches[cut].position
    (part,) = [p for p in report.partitions if f"{p.topic}-{p.partition}" == name]
    assert part.truncated_at is not None
    assert (part.truncated_at.file, part.truncated_at.start) == (
        str(damaged / name / segments[1]),
        batches[cut].position,
    )
    assert [s.file for s in part.segments_dropped] == [str(damaged / name / segments[2])]
    # what --salvage would have kept: every intact batch after the cut
    intact_after = [i for i in range(cut, len(batches)) if i not in touched]
    assert part.intact_dropped_batches == len(intact_after)
    # the segment before the damage is the broker's own, files and all
    for suffix in (".log", ".index", ".timeindex"):
        first = segments[0].removesuffix(".log") + suffix
        assert (out / name / first).read_bytes() == (source / name / first).read_bytes()
    checked = verify_paths([out])
    assert checked.ok, [p.line() for p in checked.errors]
    # the other partition is untouched, and copied whole
    other = next(p for p in PARTITIONS if p != name)
    assert ours(out / other) == expected(oracle(source / other))


@pytest.mark.parametrize("name", PARTITIONS)
@pytest.mark.parametrize("damage", DAMAGES, ids=lambda d: d.__name__)
def test_salvage_keeps_every_intact_batch(source, damaged, tmp_path, name, damage):
    batches = oracle(source / name)
    touched = damage(damaged / name, batches)
    out = tmp_path / "out"
    report = recover(damaged, out, salvage=True)
    if damage is lying_length:
        # Only the length lied (the CRC does not cover it): the batch's records and CRC prove
        # its end, so salvage keeps it, its length set right.
        touched = set()
    want = expected([b for i, b in enumerate(batches) if i not in touched])
    assert ours(out / name) == want
    assert theirs(out / name) == want
    assert _segments(out / name) == _segments(source / name)
    (part,) = [p for p in report.partitions if f"{p.topic}-{p.partition}" == name]
    if damage is lying_length:
        assert part.repaired and not part.dropped, "the repair is reported"
    elif damage is truncated_middle:
        # a partial batch at a segment's end is a truncated tail, as verify says: left out
        assert part.left_out and not part.dropped
    else:
        assert part.dropped, "the damage is reported"
    lost = {r[0] for i in touched for r in batches[i].records}
    for offset in lost:
        assert any(g.first <= offset and (g.last is None or offset <= g.last) for g in part.lost), (
            offset
        )
    # segments before the damage: the broker's own files, snapshots included
    first = _segments(source / name)[0].removesuffix(".log")
    for suffix in (".log", ".index", ".timeindex"):
        assert (out / name / (first + suffix)).read_bytes() == (
            source / name / (first + suffix)
        ).read_bytes()
    checked = verify_paths([out])
    assert checked.ok, [p.line() for p in checked.errors]


def test_undamaged_log_dir_is_copied_byte_for_byte(source, tmp_path):
    """Nothing to drop: every file the broker wrote comes out the same, rebuilt or copied."""
    out = tmp_path / "out"
    report = recover(source, out)
    assert not report.damaged
    written = sorted(p.relative_to(out) for p in out.rglob("*") if p.is_file())
    originals = sorted(p.relative_to(source) for p in source.rglob("*") if p.is_file())
    assert written == [p for p in originals if p.name != ".kafka_cleanshutdown"]
    for rel in written:
        assert (out / rel).read_bytes() == (source / rel).read_bytes(), rel


def test_damaged_index_is_rebuilt_from_the_log(source, damaged, tmp_path):
    """Indexes are never trusted: garbage in .index / .timeindex costs nothing."""
    partition = damaged / "orders-0"
    middle = _segments(partition)[1].removesuffix(".log")
    (partition / f"{middle}.index").write_bytes(b"\xff" * 24)
    (partition / f"{middle}.timeindex").write_bytes(b"\x01\x02\x03")
    out = tmp_path / "out"
    report = recover(damaged, out)
    assert not report.damaged
    for suffix in (".index", ".timeindex"):
        assert (out / "orders-0" / (middle + suffix)).read_bytes() == (
            source / "orders-0" / (middle + suffix)
        ).read_bytes()
    assert verify_paths([out]).ok


def test_checkpoints_follow_the_kept_data(source, damaged, tmp_path):
    batches = oracle(source / "orders-0")
    touched = flip_bit(damaged / "orders-0", batches)
    out = tmp_path / "out"
    recover(damaged, out)
    cut = min(touched)
    end = {tp.topic: offset for tp, offset in read_offset_checkpoint(
        out / "recovery-point-offset-checkpoint").items()}  # fmt: skip
    assert end["orders"] == batches[cut - 1].last_offset + 1
    high = {tp.topic: o for tp, o in read_offset_checkpoint(
        out / "replication-offset-checkpoint").items()}  # fmt: skip
    assert high["orders"] == end["orders"]
    source_end = {tp.topic: o for tp, o in read_offset_checkpoint(
        source / "recovery-point-offset-checkpoint").items()}  # fmt: skip
    assert end["legacy-events"] == source_end["legacy-events"]
    assert (out / "meta.properties").read_bytes() == (source / "meta.properties").read_bytes()
    assert (out / "orders-0" / "partition.metadata").is_file()


def test_a_lone_segment(source, damaged, tmp_path):
    batches = oracle(source / "orders-0")
    touched = flip_bit(damaged / "orders-0", batches)
    segment = _segments(source / "orders-0")[1]
    out = tmp_path / "out"
    report = recover(damaged / "orders-0" / segment, out, salvage=True)
    assert _segments(out) == [segment]
    assert not (out / "leader-epoch-checkpoint").exists()  # no partition files for a segment
    want = expected([b for i, b in enumerate(batches) if b.segment == segment and i not in touched])
    assert ours(out) == want
    assert report.partitions[0].dropped


@pytest.mark.parametrize("where", ["not-empty", "inside", "same", "missing", "file", "fifo"])
def test_refusals(source, tmp_path, where):
    dest = tmp_path / "dest"
    src = source
    if where == "not-empty":
        dest.mkdir()
        (dest / "x").write_text("x")
        match = "not empty"
    elif where == "inside":
        src = tmp_path / "src"
        shutil.copytree(source / "orders-0", src)
        dest = src / "recovered"
        match = "inside the source"
    elif where == "same":
        src = tmp_path / "src"
        shutil.copytree(source / "orders-0", src)
        dest = src
        match = "inside the source"
    elif where == "missing":
        src = tmp_path / "nothing-here"
        match = "no such file"
    elif where == "fifo":
        src = tmp_path / "pipe"
        os.mkfifo(src)
        match = "not a regular file"
    else:
        dest.write_text("a file")
        match = "not a directory"
    with pytest.raises(KafkaFormatError, match=match):
        recover(src, dest)
    if where in ("inside", "fifo"):
        assert not dest.exists()


@settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.data())
def test_salvage_after_any_flipped_byte(source, tmp_path_factory, data):
    """A byte flipped anywhere a v2 batch's CRC covers costs that batch and nothing more."""
    batches = oracle(source / "orders-0")
    k = data.draw(st.integers(0, len(batches) - 1), label="batch")
    b = batches[k]
    at = data.draw(st.integers(b.position + 21, b.position + b.size - 1), label="byte")
    work = tmp_path_factory.mktemp("flip")
    copy = work / "damaged"
    shutil.copytree(source / "orders-0", copy / "orders-0")
    raw = bytearray((copy / "orders-0" / b.segment).read_bytes())
    raw[at] ^= data.draw(st.integers(1, 255), label="xor")
    (copy / "orders-0" / b.segment).write_bytes(bytes(raw))
    out = work / "out"
    recover(copy, out, salvage=True)
    want = expected([x for i, x in enumerate(batches) if i != k])
    assert ours(out / "orders-0") == want
    assert verify_paths([out]).ok


def test_salvage_resynchronises_through_payloads_full_of_false_headers(tmp_path):
    """Compressed benchmark payloads hold thousands of byte runs that look like batch headers
    (a small magic, a length that fits) a MiB; their CRCs alone would exhaust the walker's
    search budget. The offsets expected after the damage rule them out."""
    import pyarrow.compute as pc

    from kafka_format.runtime.format.codecs import Codec
    from kafka_format.runtime.read.columnar import read_table

    root = tmp_path / "bench"
    generate_log_dir(root, size_bytes=3_000_000, partitions=1, codec=Codec.LZ4)
    before = read_table(root).num_rows
    segment = sorted((root / "bench-0").glob("*.log"))[0]
    data = bytearray(segment.read_bytes())
    offset, length = _FRAME.unpack_from(data, 0)
    last = offset + struct.unpack_from(">i", data, 23)[0]
    data[length // 2] ^= 0x01  # inside the first batch's compressed records
    segment.write_bytes(bytes(data))
    out = tmp_path / "out"
    report = recover(root, out, salvage=True)
    (part,) = report.partitions
    assert [(d.start, d.end) for d in part.dropped] == [(0, 12 + length)]
    assert [(g.first, g.last) for g in part.lost] == [(offset, last)]
    offsets = read_table(out).column("offset")
    assert pc.min(offsets).as_py() == last + 1
    assert len(offsets) == part.records == before - (last - offset + 1)
    assert verify_paths([out]).ok


def test_a_log_whose_first_segment_was_deleted_keeps_its_producers(source, damaged, tmp_path):
    """Retention deleted the first segment: the producer state starts from the snapshot at
    the new first segment (as the broker's does), so every snapshot comes out the same."""
    first = _segments(damaged / "orders-0")[0].removesuffix(".log")
    for path in (damaged / "orders-0").glob(f"{first}.*"):
        path.unlink()
    out = tmp_path / "out"
    recover(damaged, out)
    snapshots = sorted(p.name for p in (damaged / "orders-0").glob("*.snapshot"))
    assert snapshots == sorted(p.name for p in (out / "orders-0").glob("*.snapshot"))
    for name in snapshots:
        assert (out / "orders-0" / name).read_bytes() == (
            damaged / "orders-0" / name
        ).read_bytes(), name


def _unreadable_batch(partition: Path) -> tuple[str, int, int]:
    """Make the first uncompressed v2 data batch of the middle segment claim more records
    than it holds, its CRC-32C recomputed (kafka-python's) so that it still holds: a batch
    a buggy producer could have written. Returns (segment, position, index in the oracle)."""
    from kafka.record.util import calc_crc32c

    segment = _segments(partition)[1]
    path = partition / segment
    data = bytearray(path.read_bytes())
    pos = 0
    while True:
        _, length = _FRAME.unpack_from(data, pos)
        attributes = struct.unpack_from(">h", data, pos + 21)[0]
        if data[pos + 16] == 2 and attributes & 0x27 == 0:  # no codec, not control
            break
        pos += 12 + length
    count = struct.unpack_from(">i", data, pos + 57)[0]
    struct.pack_into(">i", data, pos + 57, count + 1000)
    struct.pack_into(">I", data, pos + 17, calc_crc32c(bytes(data[pos + 21 : pos + 12 + length])))
    path.write_bytes(bytes(data))
    return segment, pos, length + 12


def test_a_batch_whose_crc_holds_but_records_do_not_read(source, damaged, tmp_path):
    """Kafka's recovery never decodes records and would keep such a batch, but every reader
    (and verify) calls it damage: the default mode truncates before it, so the copy verifies;
    salvage drops it, and only it."""
    batches = oracle(source / "orders-0")
    segment, pos, size = _unreadable_batch(damaged / "orders-0")
    k = next(i for i, b in enumerate(batches) if (b.segment, b.position) == (segment, pos))
    kafka = recover(damaged, tmp_path / "kafka")
    (truncated,) = kafka.damaged
    assert truncated.truncated_at is not None and truncated.truncated_at.start == pos
    assert truncated.truncated_at.cause.startswith("records do not read")
    assert ours(tmp_path / "kafka" / "orders-0") == expected(batches[:k])
    assert verify_paths([tmp_path / "kafka"]).ok
    salvaged = recover(damaged, tmp_path / "salvaged", salvage=True)
    (part,) = salvaged.damaged
    (dropped,) = part.dropped
    assert (dropped.start, dropped.end) == (pos, pos + size)
    assert dropped.cause.startswith("records do not read")
    want = expected([b for i, b in enumerate(batches) if i != k])
    assert ours(tmp_path / "salvaged" / "orders-0") == want
    assert verify_paths([tmp_path / "salvaged"]).ok
