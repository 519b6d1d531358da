"""Every kind of source gives the same records: bytes, memoryviews, paths, partition and log
directories, file objects, streams that cannot seek, empty inputs.

The batches are written by kafka-python; the expected records are what was written.
"""

from __future__ import annotations

import io
import os
import random
import struct
import threading
from pathlib import Path

import pytest
from kafka.record.default_records import DefaultRecordBatchBuilder
from kafka.record.legacy_records import LegacyRecordBatchBuilder

import kafka_format as kf

T0 = 1_700_000_000_000
UUID = "0123456789abcdef0123456789abcdef"


def v2_batch(base_offset: int, values: list[bytes], codec: int = 0) -> bytes:
    builder = DefaultRecordBatchBuilder(2, codec, False, -1, -1, -1, 1 << 30)
    for i, value in enumerate(values):
        builder.append(i, T0 + base_offset + i, None, value, [("src", b"test")])
    built = bytearray(builder.build())
    struct.pack_into(">q", built, 0, base_offset)
    return bytes(built)


def v1_messages(base_offset: int, values: list[bytes]) -> bytes:
    builder = LegacyRecordBatchBuilder(1, 0, 1 << 30)
    for i, value in enumerate(values):
        builder.append(base_offset + i, T0 + i, b"k", value)
    return bytes(builder.build())


def segment(base_offset: int, count: int, tag: str) -> tuple[bytes, list[bytes]]:
    """A segment holding ``count`` records from ``base_offset`` in up to three batches (v2,
    gzip v2, v1 messages); returns its bytes and its values in order."""
    values = [f"{tag}-{base_offset + i}".encode() for i in range(count)]
    third = max(1, count // 3)
    first, second, rest = values[:third], values[third : 2 * third], values[2 * third :]
    data = v2_batch(base_offset, first)
    if second:
        data += v2_batch(base_offset + third, second, codec=1)
    if rest:
        data += v1_messages(base_offset + 2 * third, rest)
    return data, values


LOG, LOG_VALUES = segment(0, 7, "one")


def values_of(records) -> list[bytes]:
    return [r.value for r in records]


# --- in memory ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "make",
    [
        pytest.param(lambda b: b, id="bytes"),
        pytest.param(bytearray, id="bytearray"),
        pytest.param(memoryview, id="memoryview"),
        pytest.param(lambda b: memoryview(b"xx" + b + b"yy")[2:-2], id="memoryview-slice"),
    ],
)
def test_in_memory_sources(make):
    report = kf.Report()
    got = list(kf.iter_records(make(LOG), report=report))
    assert values_of(got) == LOG_VALUES
    assert [r.offset for r in got] == list(range(7))
    assert all(r.topic is None and r.partition is None for r in got)
    assert report.ok and report.truncated == []


def test_memoryview_of_wider_items_is_read_as_bytes():
    """A memoryview of 4-byte items (e.g. from numpy or array) is taken byte by byte: the
    padding after the log is a truncated tail of that many bytes."""
    padding = -len(LOG) % 4 or 4
    view = memoryview(bytearray(LOG + b"\0" * padding)).cast("I")
    report = kf.Report()
    assert values_of(kf.iter_records(view, report=report)) == LOG_VALUES
    assert [(t.position, t.size) for t in report.truncated] == [(len(LOG), padding)]


def test_name_labels_in_memory_sources():
    damaged = bytearray(LOG)
    damaged[17] ^= 1
    with pytest.raises(kf.CrcMismatchError) as info:
        list(kf.iter_records(bytes(damaged), name="capture.bin"))
    assert info.value.file == "capture.bin"
    assert "capture.bin @0" in str(info.value)


# --- files ----------------------------------------------------------------------------------


def test_path_as_str_and_pathlike(tmp_path):
    path = tmp_path / "records.bin"
    path.write_bytes(LOG)
    for source in (str(path), path):
        got = list(kf.iter_records(source))
        assert values_of(got) == LOG_VALUES
        assert all(r.topic is None for r in got)
    batches = list(kf.iter_batches(path))
    assert {b.file for b in batches} == {str(path)}


def test_segment_file_in_a_partition_directory_knows_its_partition(tmp_path):
    directory = tmp_path / "my.topic_name-with-dashes-12"
    directory.mkdir()
    (directory / "00000000000000000000.log").write_bytes(LOG)
    got = list(kf.iter_records(directory / "00000000000000000000.log"))
    assert values_of(got) == LOG_VALUES
    assert {(r.topic, r.partition) for r in got} == {("my.topic_name-with-dashes", 12)}


def _write_partition(directory: Path, bases: list[int], tag: str, *, extras: bool = True):
    """Segments at ``bases`` (5 records each), written in a shuffled order, with the other
    files a partition directory holds; returns the values in offset order."""
    directory.mkdir(parents=True)
    segments = {base: segment(base, 5, tag) for base in bases}
    order = list(bases)
    random.Random(len(bases)).shuffle(order)
    for base in order:
        data, _ = segments[base]
        name = f"{base:020d}"
        (directory / f"{name}.log").write_bytes(data)
        if extras:
            (directory / f"{name}.index").write_bytes(b"\0" * 16)
            (directory / f"{name}.timeindex").write_bytes(b"\0" * 24)
    if extras:
        # Files the broker is replacing or deleting, and other files: not read.
        stale, _ = segment(bases[0], 5, "stale")
        (directory / f"{bases[0]:020d}.log.deleted").write_bytes(stale)
        (directory / f"{bases[-1] + 100:020d}.log.cleaned").write_bytes(stale)
        (directory / f"{bases[-1] + 200:020d}.log.swap").write_bytes(stale)
        (directory / "leader-epoch-checkpoint").write_text("0\n0\n")
        (directory / "partition.metadata").write_text("version: 0\n")
    return [v for base in sorted(bases) for v in segments[base][1]]


def test_partition_directory_reads_segments_in_base_offset_order(tmp_path):
    bases = [0, 5, 10, 15, 20, 95, 100, 1000]
    expected = _write_partition(tmp_path / "orders-3", bases, "orders")
    report = kf.Report()
    got = list(kf.iter_records(tmp_path / "orders-3", report=report))
    assert values_of(got) == expected
    assert [r.offset for r in got] == [b + i for b in bases for i in range(5)]
    assert {(r.topic, r.partition) for r in got} == {("orders", 3)}
    assert report.ok and report.truncated == []
    files = [b.file for b in kf.iter_batches(tmp_path / "orders-3")]
    assert sorted(set(files), key=files.index) == [
        str(tmp_path / "orders-3" / f"{b:020d}.log") for b in bases
    ]


def test_segment_names_are_ordered_by_number_not_by_text(tmp_path):
    """Kafka parses any digits as the base offset: 5.log comes before 40.log."""
    directory = tmp_path / "t-0"
    directory.mkdir()
    for base in (40, 5, 300):
        (directory / f"{base}.log").write_bytes(segment(base, 3, "t")[0])
    got = list(kf.iter_records(directory))
    assert [r.offset for r in got] == [5, 6, 7, 40, 41, 42, 300, 301, 302]


def test_log_directory_with_several_partitions(tmp_path):
    expected = {}
    for topic, partition in (("beta", 0), ("alpha", 10), ("alpha", 2), ("a.b_c-d", 1)):
        directory = tmp_path / f"{topic}-{partition}"
        expected[(topic, partition)] = _write_partition(directory, [0, 50], topic, extras=False)
    # Not partitions: a partition being deleted, a future replica, other directories.
    _write_partition(tmp_path / f"alpha-0.{UUID}-delete", [0], "deleted", extras=False)
    _write_partition(tmp_path / f"alpha-0.{UUID}-future", [0], "future", extras=False)
    (tmp_path / "lost+found").mkdir()
    (tmp_path / "meta.properties").write_text("version=1\n")
    got = list(kf.iter_records(tmp_path))
    seen: dict[tuple, list[bytes]] = {}
    order = []
    for r in got:
        key = (r.topic, r.partition)
        if key not in seen:
            order.append(key)
        seen.setdefault(key, []).append(r.value)
    assert seen == expected
    # Each partition is read whole, one after another, by topic then partition.
    assert order == sorted(expected)


def test_open_binary_file_object(tmp_path):
    path = tmp_path / "records.bin"
    path.write_bytes(LOG)
    with open(path, "rb") as fh:
        got = list(kf.iter_records(fh))
        assert values_of(got) == LOG_VALUES
        assert {b.file for b in kf.iter_batches(fh)} == {str(path)}
    # Opened at a batch boundary: reading starts there.
    first_batch = 12 + struct.unpack_from(">i", LOG, 8)[0]
    with open(path, "rb") as fh:
        fh.seek(first_batch)
        got = list(kf.iter_records(fh))
    assert values_of(got) == LOG_VALUES[2:]


def test_positions_are_counted_from_where_reading_starts(tmp_path):
    """A file object positioned mid-file, a BytesIO and a pipe at the same point agree."""
    path = tmp_path / "records.bin"
    path.write_bytes(LOG)
    first_batch = 12 + struct.unpack_from(">i", LOG, 8)[0]
    with open(path, "rb") as fh:
        fh.seek(first_batch)
        mapped = [(b.position, b.size) for b in kf.iter_batches(fh)]
    buffered = io.BytesIO(LOG)
    buffered.seek(first_batch)
    streamed = [(b.position, b.size) for b in kf.iter_batches(buffered)]
    piped = [(b.position, b.size) for b in kf.iter_batches(_pipe(LOG[first_batch:]))]
    assert mapped == streamed == piped
    assert mapped[0][0] == 0


class _Trickle(io.RawIOBase):
    """A raw stream that cannot seek and returns at most a few bytes per read."""

    def __init__(self, data: bytes, most: int = 3) -> None:
        self._data = memoryview(data)
        self._pos = 0
        self._most = most

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        n = min(len(buffer), self._most, len(self._data) - self._pos)
        buffer[:n] = self._data[self._pos : self._pos + n]
        self._pos += n
        return n


def _pipe(data: bytes):
    read_fd, write_fd = os.pipe()

    def feed():
        with os.fdopen(write_fd, "wb") as w:
            w.write(data)

    threading.Thread(target=feed, daemon=True).start()
    return os.fdopen(read_fd, "rb")


@pytest.mark.parametrize("isolation", ["read_uncommitted", "read_committed"])
@pytest.mark.parametrize(
    "make",
    [
        pytest.param(io.BytesIO, id="bytesio"),
        pytest.param(lambda d: io.BufferedReader(_Trickle(d)), id="buffered-nonseekable"),
        pytest.param(_Trickle, id="raw-trickle"),
        pytest.param(_pipe, id="pipe"),
    ],
)
def test_streams(make, isolation):
    tail = LOG[:30]  # a partial batch after the whole ones
    stream = make(LOG + tail)
    report = kf.Report()
    got = list(kf.iter_records(stream, isolation=isolation, report=report))
    assert values_of(got) == LOG_VALUES
    assert [(t.position, t.size) for t in report.truncated] == [(len(LOG), len(tail))]
    if hasattr(stream, "close"):
        stream.close()


@pytest.mark.parametrize(
    "make",
    [
        pytest.param(lambda p: b"", id="bytes"),
        pytest.param(lambda p: memoryview(b""), id="memoryview"),
        pytest.param(lambda p: p, id="path"),
        pytest.param(lambda p: open(p, "rb"), id="file"),  # noqa: SIM115
        pytest.param(lambda p: io.BytesIO(), id="bytesio"),
        pytest.param(lambda p: _pipe(b""), id="pipe"),
        pytest.param(lambda p: p.parent, id="partition-dir"),
    ],
)
def test_empty_sources(tmp_path, make):
    directory = tmp_path / "t-0"
    directory.mkdir()
    path = directory / "00000000000000000000.log"
    path.write_bytes(b"")
    source = make(path)
    report = kf.Report()
    for isolation in ("read_uncommitted", "read_committed"):
        assert list(kf.iter_records(source, isolation=isolation, report=report)) == []
    assert report.ok and report.truncated == []
    if hasattr(source, "close"):
        source.close()


def test_missing_path_and_directory_without_logs(tmp_path):
    with pytest.raises(kf.KafkaFormatError) as info:
        list(kf.iter_records(tmp_path / "absent.log"))
    assert info.value.file == str(tmp_path / "absent.log")
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "notes.txt").write_text("nothing here")
    with pytest.raises(kf.KafkaFormatError) as info:
        list(kf.iter_records(tmp_path / "empty"))
    assert info.value.file == str(tmp_path / "empty")


def test_partition_directory_with_a_damaged_segment_in_skip_mode(tmp_path):
    """Skip mode goes on into the next segment; errors name the segment file."""
    directory = tmp_path / "t-7"
    expected = _write_partition(directory, [0, 5, 10], "t", extras=False)
    second = directory / f"{5:020d}.log"
    damaged = bytearray(second.read_bytes())
    damaged[17] ^= 0xFF  # first batch's CRC
    second.write_bytes(bytes(damaged))
    report = kf.Report()
    got = values_of(kf.iter_records(directory, errors="skip", report=report))
    lost = 12 + struct.unpack_from(">i", damaged, 8)[0]
    assert len(report.errors) == 1
    assert (report.errors[0].file, report.errors[0].position) == (str(second), 0)
    (lost_batch,) = kf.iter_batches(bytes(damaged[:lost]), verify_crc=False)
    n_lost = len(lost_batch.records)
    assert got == expected[:5] + expected[5 + n_lost :]


def test_a_listing_sizes_the_segments_spark_plans_by(tmp_path):
    # Spark's planner builds its partitions from discover's listing (Partition.from_listing
    # takes the .log entries' sizes): a segment listed without its size plans no split.
    from kafka_format.runtime.files.storage import LOCAL
    from kafka_format.runtime.log.partition import Partition
    from kafka_format.runtime.read.sources import discover
    from kafka_format.runtime.write.generate import generate_log_dir

    generate_log_dir(tmp_path / "logs", seed=2, records=300)
    targets = discover(LOCAL, str(tmp_path / "logs")).targets
    assert targets
    for target in targets:
        logs = [e for e in target.entries if e.name.endswith(".log")]
        assert logs and all(e.size == os.stat(e.path).st_size for e in logs)
        partition = Partition.from_listing(target.path, list(target.entries), LOCAL)
        assert [s.size for s in partition.segments] == [
            os.stat(s.log).st_size for s in partition.segments
        ]
