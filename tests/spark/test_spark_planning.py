"""The kafka_log source's options, discovery, planning and task reads, without a SparkSession.

The planner and the task reader are plain Python; here they run in-process, so the many
layouts (split points, damaged indexes, transactions across splits, globs, URIs) cost
milliseconds. ``test_spark_datasource.py`` runs the same paths through a real SparkSession.

Oracles: the records :class:`~kafka_format.runtime.write.writer.PartitionWriter` says it wrote
(``keep_records``, with whether a read_committed consumer receives each), batch boundaries
found by walking the .log files with ``struct``, and the corpus's .jsonl.
"""

from __future__ import annotations

import base64
import itertools
import os
import pickle
import struct
from pathlib import Path

import pytest

from kafka_format.runtime.errors import CrcMismatchError, KafkaFormatError
from kafka_format.runtime.format.codecs import Codec
from kafka_format.runtime.write.writer import Message, PartitionWriter, Producer
from kafka_format.spark_udfs._fs import locate
from kafka_format.spark_udfs._options import (
    OPTION_NAMES,
    OptionError,
    PerPartition,
    parse_options,
)
from kafka_format.spark_udfs._planning import (
    PACK_SPLIT_COST,
    PackedSplits,
    Planner,
    _greedy_cuts,
    tasks,
)
from kafka_format.spark_udfs._reading import Counters, read_split
from kafka_format.spark_udfs.datasource import KafkaLogReader, kafka_schema, output_for
from kafka_format.spark_udfs.metrics import KafkaLogMetricsReader

T0 = 1_700_000_000_000


class Sum:
    """Stands in for a Spark accumulator in-process."""

    def __init__(self) -> None:
        self.value = 0

    def add(self, n: int) -> None:
        self.value += n


def frame_starts(log: Path) -> list[int]:
    """Positions of the batches of a .log, walked with struct alone."""
    data = log.read_bytes()
    positions, pos = [], 0
    while len(data) - pos > 17:
        _, length = struct.unpack_from(">qi", data, pos)
        if pos + 12 + length > len(data):
            break
        positions.append(pos)
        pos += 12 + length
    return positions


def write_plain(log_dir: Path, topic: str = "plain", partition: int = 0, batches: int = 60):
    """Several segments with indexes, ten records a batch, timestamps one second apart per
    batch, every fourth batch gzip; returns the records written."""
    clock = itertools.count(T0, 1000).__next__
    with PartitionWriter(
        log_dir,
        topic,
        partition,
        segment_bytes=16384,
        index_interval_bytes=1024,
        keep_records=True,
        clock=clock,
    ) as w:
        for b in range(batches):
            messages = [
                Message(
                    f"k{b}-{i}".encode(),
                    (f"value {b}-{i} " * 6).encode(),
                    headers=[("h", str(i).encode())] if i % 3 == 0 else (),
                )
                for i in range(10)
            ]
            w.append(messages, codec=Codec.GZIP if b % 4 == 0 else Codec.NONE)
    return w.records


def write_transactions(log_dir: Path, topic: str = "txn", partition: int = 0):
    """Three transactional producers and a plain one interleaved over several segments:
    p1 commits every third round, p2 aborts every fourth (its transactions span segments),
    p3 is left open at the end."""
    clock = itertools.count(T0, 1000).__next__
    p1, p2, p3 = Producer(1001), Producer(1002), Producer(1003)
    with PartitionWriter(
        log_dir,
        topic,
        partition,
        segment_bytes=4096,
        index_interval_bytes=256,
        keep_records=True,
        clock=clock,
    ) as w:
        for r in range(16):

            def msgs(tag: str, r: int = r) -> list[Message]:
                return [Message(f"{tag}{r}".encode(), f"{tag}-{r}-{i}".encode()) for i in range(4)]

            w.append(msgs("a"), producer=p1, transactional=True)
            w.append(msgs("plain"))
            w.append(msgs("b"), producer=p2, transactional=True)
            if r % 3 == 2:
                w.commit(p1)
            if r % 4 == 3:
                w.abort(p2)
        w.commit(p1)
        w.abort(p2)
        w.append(msgs("c", 99), producer=p3, transactional=True)
        w.append(msgs("tail", 99))
    return w.records


def read_rows(path, **options) -> tuple[list[dict], Planner, Sum, Sum]:
    """Plan and read in-process as the Spark tasks would: rows, planner, bytes, corrupt."""
    raw = {"path": str(path), "includeHeaders": "true", **options}
    opts = parse_options(raw)
    planner = Planner(opts)
    splits = planner.plan()
    out = output_for(kafka_schema(True), opts)
    read, corrupt = Sum(), Sum()
    rows = [
        row
        for split in splits
        for batch in read_split(split, opts, out, Counters(read, corrupt))
        for row in batch.to_pylist()
    ]
    planner.splits = splits
    return rows, planner, read, corrupt


def offsets_values(rows) -> list[tuple[int, bytes]]:
    return [(r["offset"], r["value"]) for r in rows]


def expected(records, *, committed: bool = False) -> list[tuple[int, bytes]]:
    return [(r.offset, r.value) for r in records if not committed or r.read_committed]


# --- options ----------------------------------------------------------------------------------


def test_unknown_option_names_every_known_one():
    with pytest.raises(OptionError) as info:
        parse_options({"path": "/x", "startingOffset": "3"})
    message = str(info.value)
    assert "startingOffset" in message
    for name in OPTION_NAMES:
        assert name in message


def test_options_are_case_insensitive_and_parsed():
    opts = parse_options(
        {
            "PATH": "/x",
            "isolationlevel": "READ_COMMITTED",
            "startingoffsets": '{"orders":{"0":23,"1":-2}}',
            "endingOffsets": "100",
            "mode": "dropMalformed",
            "maxBytesPerPartition": "64k",
            "maxDecompressedBytes": "1m",
            "verifyCrc": "FALSE",
        }
    )
    assert opts.isolation == "read_committed"
    assert opts.starting_offsets == PerPartition(None, {("orders", 0): 23, ("orders", 1): -2})
    assert opts.starting_offsets.get("orders", 0) == 23
    assert opts.starting_offsets.get("orders", 7) is None
    assert opts.ending_offsets.get("anything", 3) == 100
    assert opts.mode == "DROPMALFORMED"
    assert opts.max_bytes_per_partition == 64 * 1024
    assert opts.max_decompressed_bytes == 1 << 20
    assert opts.verify_crc is False


@pytest.mark.parametrize(
    "raw",
    [
        {},
        {"path": "/x", "startingOffsets": "latest"},
        {"path": "/x", "startingOffsets": '{"t":{"0":-1}}'},
        {"path": "/x", "endingOffsets": "earliest"},
        {"path": "/x", "startingOffsets": "-3"},
        {"path": "/x", "startingOffsets": "{not json"},
        {"path": "/x", "startingTimestamp": "yesterday"},
        {"path": "/x", "isolationLevel": "serializable"},
        {"path": "/x", "mode": "LENIENT"},
        {"path": "/x", "verifyCrc": "yes"},
        {"path": "/x", "maxBytesPerPartition": "0"},
        {"path": "/x", "maxDecompressedBytes": "lots"},
    ],
)
def test_bad_option_values_are_refused(raw):
    with pytest.raises(OptionError):
        parse_options(raw)


def test_starting_timestamp_wins_over_by_timestamp_as_in_spark():
    opts = parse_options(
        {"path": "/x", "startingTimestamp": "5", "startingOffsetsByTimestamp": '{"t":{"0":9}}'}
    )
    assert opts.starting_timestamps == PerPartition(default=5)


def test_the_schema_must_use_the_source_columns():
    opts = parse_options({"path": "/x"})
    from pyspark.sql.types import LongType, StringType, StructField, StructType

    out = output_for(
        StructType(
            [StructField("offset", LongType()), StructField("_corrupt_batch", StringType())]
        ),
        opts,
    )
    assert out.corrupt_column == "_corrupt_batch"
    assert out.schema.names == ["offset", "_corrupt_batch"]
    with pytest.raises(OptionError, match="not a column"):
        output_for(StructType([StructField("lag", LongType())]), opts)
    with pytest.raises(OptionError, match="must be bigint"):
        output_for(StructType([StructField("offset", StringType())]), opts)


# --- discovery --------------------------------------------------------------------------------


def test_log_dir_partition_dir_segment_glob_and_uri(tmp_path):
    a = write_plain(tmp_path, "orders", 0, batches=12)
    b = write_plain(tmp_path, "orders", 1, batches=5)
    c = write_plain(tmp_path, "audit-log", 3, batches=3)
    (tmp_path / "orders-9.0123456789abcdef0123456789abcdef-delete").mkdir()
    (tmp_path / "recovery-point-offset-checkpoint").write_text("0\n0\n")
    everything = sorted(expected(a) + expected(b) + expected(c))

    rows, *_ = read_rows(tmp_path)
    assert sorted(offsets_values(rows)) == everything
    by_tp = {(r["topic"], r["partition"]) for r in rows}
    assert by_tp == {("orders", 0), ("orders", 1), ("audit-log", 3)}

    rows, *_ = read_rows(tmp_path / "orders-1")
    assert offsets_values(rows) == expected(b)
    rows, *_ = read_rows(tmp_path / "orders-0" / "00000000000000000000.log")
    assert {r["topic"] for r in rows} == {"orders"}
    assert offsets_values(rows) == [o for o in expected(a) if o[0] < len(rows)]

    rows, *_ = read_rows(str(tmp_path / "orders-*"))
    assert sorted(offsets_values(rows)) == sorted(expected(a) + expected(b))
    rows, *_ = read_rows(f"file://{tmp_path}/[ao]*-[13]")
    assert sorted(offsets_values(rows)) == sorted(expected(b) + expected(c))
    # A glob over a log dir passes over what is not a partition (checkpoints, -delete dirs).
    rows, *_ = read_rows(str(tmp_path / "*"))
    assert sorted(offsets_values(rows)) == everything


def test_paths_that_hold_nothing_fail(tmp_path):
    with pytest.raises(KafkaFormatError, match="no such file"):
        read_rows(tmp_path / "absent")
    with pytest.raises(KafkaFormatError, match=r"no \.log segments"):
        read_rows(tmp_path)
    with pytest.raises(KafkaFormatError, match="glob matches no"):
        read_rows(str(tmp_path / "*-0"))


def test_uri_is_split_before_the_first_glob(tmp_path):
    ref, _fs, path = locate(f"file://{tmp_path}/t*-[0-9]/x?")
    assert ref.uri == f"file://{tmp_path}"
    assert path == f"{tmp_path}/t*-[0-9]/x"
    assert locate(str(tmp_path))[0].uri is None


def test_uris_go_through_pyarrow_fs_in_the_tasks(tmp_path):
    records = write_plain(tmp_path, batches=30)
    rows, planner, read, _ = read_rows(
        f"file://{tmp_path}/plain-0", maxBytesPerPartition="4000", startingOffsets="150"
    )
    assert offsets_values(rows) == [o for o in expected(records) if o[0] >= 150]
    assert read.value < sum(p.stat().st_size for p in tmp_path.glob("plain-0/*.log"))
    for split in planner.splits:
        assert split.fs_uri == f"file://{tmp_path}/plain-0"
        assert split.name == f"file://{split.path}"  # errors name the URI


def test_a_file_that_is_not_a_segment(manifest):
    corpus_set = next(s for s in manifest if "v1-v1c-v2-v2c" in s.id)
    rows, planner, _, _ = read_rows(corpus_set.path, maxBytesPerPartition="300")
    assert len(planner.splits) > 3  # cut at batch boundaries found by walking the headers
    assert {(r["topic"], r["partition"]) for r in rows} == {(None, None)}
    want = [(e["offset"], e["value"]) for e in corpus_set.expected()]
    got = [(r["offset"], base64.b64encode(r["value"]).decode()) for r in rows]
    assert got == want


@pytest.mark.parametrize(
    ("boundaries", "limit", "cuts"),
    [
        (range(10, 100, 10), 30, [30, 60, 90]),
        ([50], 30, [50]),  # a batch larger than the limit gets a split of its own
        ([5, 90], 30, [5, 90]),
        ([], 30, []),
        (range(10, 100, 10), 1000, []),
    ],
)
def test_greedy_cuts(boundaries, limit, cuts):
    assert _greedy_cuts(iter(boundaries), 0, 100, limit) == cuts
    # a boundary that fails its check is passed over for the one before it
    if cuts == [30, 60, 90]:
        assert _greedy_cuts(iter(boundaries), 0, 100, limit, lambda p: p != 60) == [30, 50, 80]


# --- splits and pruning -----------------------------------------------------------------------


def test_splits_fall_on_batch_boundaries_and_read_the_same_rows(tmp_path):
    records = write_plain(tmp_path)
    whole, planner, read_whole, _ = read_rows(tmp_path)
    assert len(planner.splits) == len(list(tmp_path.glob("plain-0/*.log")))
    split_rows, planner, read_split_bytes, _ = read_rows(tmp_path, maxBytesPerPartition="3000")
    assert offsets_values(split_rows) == offsets_values(whole) == expected(records)
    assert split_rows == whole
    assert read_split_bytes.value == read_whole.value
    splits = planner.splits
    assert len(splits) > 3 * len(list(tmp_path.glob("plain-0/*.log")))
    for path in {s.path for s in splits}:
        mine = sorted((s.start, s.end) for s in splits if s.path == path)
        starts = frame_starts(Path(path))
        assert mine[0][0] == 0 and mine[-1][1] == Path(path).stat().st_size
        for (_, end), (start, _) in itertools.pairwise(mine):
            assert end == start and start in starts
        # as small as the batches allow
        assert all(b - a <= 3000 for a, b in mine)
    # split planning used the .index only: one batch read (its CRC checked) per cut, no walk
    assert planner.bytes_read < sum(Path(p).stat().st_size for p in {s.path for s in splits}) / 3


def test_a_damaged_index_falls_back_to_walking_headers(tmp_path):
    records = write_plain(tmp_path)
    for index in tmp_path.glob("plain-0/*.index"):
        data = bytearray(index.read_bytes())
        # every entry now points 7 bytes into its batch
        for slot in range(0, len(data), 8):
            (pos,) = struct.unpack_from(">i", data, slot + 4)
            struct.pack_into(">i", data, slot + 4, pos + 7)
        index.write_bytes(bytes(data))
    rows, planner, _, _ = read_rows(
        tmp_path, maxBytesPerPartition="3000", startingOffsets="333", endingOffsets="377"
    )
    assert offsets_values(rows) == [o for o in expected(records) if 333 <= o[0] < 377]
    rows, planner, _, _ = read_rows(tmp_path, maxBytesPerPartition="3000")
    assert offsets_values(rows) == expected(records)
    for s in planner.splits:
        assert s.start in frame_starts(Path(s.path))


def test_offsets_are_pruned_through_the_index(tmp_path):
    records = write_plain(tmp_path)
    _, _, full, _ = read_rows(tmp_path)
    rows, _, pruned, _ = read_rows(tmp_path, startingOffsets="333", endingOffsets="377")
    assert offsets_values(rows) == [o for o in expected(records) if 333 <= o[0] < 377]
    assert pruned.value < full.value / 4
    json_start = '{"plain":{"0":595}}'
    rows, _, pruned, _ = read_rows(tmp_path, startingOffsets=json_start)
    assert [r["offset"] for r in rows] == list(range(595, 600))
    assert pruned.value < full.value / 4
    rows, _, _, _ = read_rows(tmp_path, startingOffsets='{"other":{"0":595}}')
    assert len(rows) == len(records)  # partitions the JSON omits start at the earliest
    # At the log end: the index leads to the last indexed batch, and nothing is returned.
    rows, planner, nothing, _ = read_rows(tmp_path, startingOffsets="600")
    assert rows == [] and len(planner.splits) <= 1 and nothing.value < full.value / 10


def test_timestamps_are_found_through_the_time_index(tmp_path):
    records = write_plain(tmp_path)  # batch b (offsets 10b..10b+9) has timestamp T0 + 1000 b
    _, _, full, _ = read_rows(tmp_path)
    rows, planner, pruned, _ = read_rows(tmp_path, startingTimestamp=str(T0 + 44_000))
    assert offsets_values(rows) == [o for o in expected(records) if o[0] >= 440]
    assert pruned.value < full.value
    rows, *_ = read_rows(
        tmp_path,
        startingOffsetsByTimestamp=f'{{"plain":{{"0":{T0 + 10_500}}}}}',
        endingTimestamp=str(T0 + 20_000),
    )
    assert [r["offset"] for r in rows] == list(range(110, 200))
    assert all(T0 + 11_000 <= r["timestamp"].timestamp() * 1000 < T0 + 20_000 for r in rows)
    # Past every record: Spark's default strategy fails; "latest" reads nothing.
    with pytest.raises(KafkaFormatError, match="startingOffsetsByTimestampStrategy=error"):
        read_rows(tmp_path, startingTimestamp=str(T0 + 10**9))
    rows, planner, _, _ = read_rows(
        tmp_path, startingTimestamp=str(T0 + 10**9), startingOffsetsByTimestampStrategy="latest"
    )
    assert rows == [] and planner.splits == []


# --- read_committed ---------------------------------------------------------------------------


@pytest.mark.parametrize("layout", ["as written", "no txnindex", "log files only"])
@pytest.mark.parametrize("max_bytes", ["128m", "700"])
def test_read_committed_across_splits(tmp_path, layout, max_bytes):
    records = write_transactions(tmp_path)
    assert any(not r.read_committed for r in records)
    assert any(r.transaction_outcome == "open" for r in records)
    drop = {"as written": (), "no txnindex": ("txnindex",), "log files only": ("txnindex",
            "index", "timeindex", "snapshot")}[layout]  # fmt: skip
    for suffix in drop:
        for p in tmp_path.glob(f"txn-0/*.{suffix}"):
            p.unlink()
    rows, planner, _, _ = read_rows(
        tmp_path, isolationLevel="read_committed", maxBytesPerPartition=max_bytes
    )
    assert offsets_values(rows) == expected(records, committed=True)
    if max_bytes == "700":
        segments = len(list(tmp_path.glob("txn-0/*.log")))
        assert len(planner.splits) > 2 * segments
        # every split carries the aborted transactions it may hold, wherever their markers are
        assert sum(1 for s in planner.splits if s.aborted) > segments
    uncommitted, *_ = read_rows(tmp_path, maxBytesPerPartition=max_bytes)
    assert offsets_values(uncommitted) == expected(records)


def test_read_committed_with_offset_bounds(tmp_path):
    records = write_transactions(tmp_path)
    rows, *_ = read_rows(
        tmp_path,
        isolationLevel="read_committed",
        startingOffsets="50",
        endingOffsets="150",
        maxBytesPerPartition="500",
    )
    assert offsets_values(rows) == [
        o for o in expected(records, committed=True) if 50 <= o[0] < 150
    ]


# --- damage -----------------------------------------------------------------------------------


def flip_crc(log: Path, batch: int) -> tuple[int, int]:
    """Flip a CRC byte of the ``batch``-th batch; returns its position and base offset."""
    pos = frame_starts(log)[batch]
    data = bytearray(log.read_bytes())
    data[pos + 17] ^= 0xFF
    log.write_bytes(bytes(data))
    return pos, struct.unpack_from(">q", data, pos)[0]


def test_modes_on_a_flipped_crc(tmp_path):
    records = write_plain(tmp_path)
    log = tmp_path / "plain-0" / "00000000000000000000.log"
    pos, base = flip_crc(log, 5)
    with pytest.raises(CrcMismatchError) as info:
        read_rows(tmp_path, mode="FAILFAST")
    assert info.value.position == pos and info.value.base_offset == base
    assert str(log) in str(info.value)
    kept = [o for o in expected(records) if not base <= o[0] < base + 10]
    for mode in ("DROPMALFORMED", "PERMISSIVE"):
        rows, _, _, corrupt = read_rows(tmp_path, mode=mode, maxBytesPerPartition="2000")
        assert offsets_values(rows) == kept
        assert corrupt.value == 1
    rows, _, _, corrupt = read_rows(tmp_path, verifyCrc="false")
    assert offsets_values(rows) == expected(records) and corrupt.value == 0


def test_a_lying_length_ends_only_its_split(tmp_path):
    records = write_plain(tmp_path)
    log = tmp_path / "plain-0" / "00000000000000000000.log"
    starts = frame_starts(log)
    data = bytearray(log.read_bytes())
    struct.pack_into(">i", data, starts[3] + 8, 3)  # below the minimum frame length
    log.write_bytes(bytes(data))
    rows, planner, _, corrupt = read_rows(
        tmp_path, mode="DROPMALFORMED", maxBytesPerPartition="3000"
    )
    got = {r["offset"] for r in rows}
    assert corrupt.value == 1
    assert set(range(30)) <= got  # before the damage
    assert not got & set(range(30, 40))  # the damaged batch
    # the damaged split stops there; the segment's next splits and other segments are read
    damaged = next(s for s in planner.splits if s.path == str(log) and s.end > starts[3])
    assert damaged.end < log.stat().st_size
    others = [(o, v) for o, v in expected(records) if o >= 40]
    lost = [o for o, _ in others if o not in got]
    assert lost and max(lost) < min(o for o in got if o >= 40)
    assert len(lost) < len(others) / 5
    assert got <= {o for o, _ in expected(records)}


def test_options_and_splits_pickle(tmp_path):
    write_plain(tmp_path, batches=3)
    opts = parse_options({"path": str(tmp_path), "startingOffsets": '{"plain":{"0":1}}'})
    assert pickle.loads(pickle.dumps(opts)) == opts
    _, planner, _, _ = read_rows(tmp_path)
    split = planner.splits[0]
    assert pickle.loads(pickle.dumps(split)) == split
    assert split.name == split.path and os.path.isabs(split.path)


# --- the broker's directory rules -------------------------------------------------------------


def broker_layout(root: Path) -> list:
    """orders-0 and orders-1 (the broker's view: their records), beside a -delete copy of
    orders-0, a -future copy of orders-1, and .swap/.cleaned/.deleted copies of a segment
    inside orders-0."""
    import shutil

    a = write_plain(root, "orders", 0, batches=40)
    b = write_plain(root, "orders", 1, batches=12)
    shutil.copytree(root / "orders-0", root / "orders-0.abc123-delete")
    shutil.copytree(root / "orders-1", root / "orders-1.def-future")
    log = root / "orders-0" / "00000000000000000000.log"
    for suffix in (".swap", ".cleaned", ".deleted"):
        shutil.copy(log, f"{log}{suffix}")
    return sorted(expected(a) + expected(b))


@pytest.mark.parametrize("uri", [False, True])
def test_globs_follow_the_broker_directory_rules(tmp_path, caplog, uri):
    everything = broker_layout(tmp_path)
    base = f"file://{tmp_path}" if uri else str(tmp_path)
    for pattern in ("orders-*", "*", "orders-[01]*"):
        with caplog.at_level("WARNING", logger="kafka_format"):
            caplog.clear()
            rows, planner, _, _ = read_rows(f"{base}/{pattern}", maxBytesPerPartition="5000")
        assert sorted(offsets_values(rows)) == everything, pattern
        assert len(rows) == len(everything)
        names = sorted(Path(s.path.removeprefix("file://")).name for s in planner.skipped)
        assert names == [
            "00000000000000000000.log.cleaned",
            "00000000000000000000.log.deleted",
            "00000000000000000000.log.swap",
            "orders-0.abc123-delete",
            "orders-1.def-future",
        ]
        said = [r.getMessage() for r in caplog.records if r.name.startswith("kafka_format")]
        assert len(said) == 5 and all(m.startswith("kafka_log: skipped ") for m in said)
        assert all("/orders-0.abc123-delete/" not in s.path for s in planner.splits)
        if uri:
            assert all(s.fs_uri is not None for s in planner.splits)


def test_explicit_non_live_paths_read_nothing(tmp_path):
    broker_layout(tmp_path)
    for path in (
        tmp_path / "orders-0.abc123-delete",
        tmp_path / "orders-0.abc123-delete" / "00000000000000000000.log",
        tmp_path / "orders-0" / "00000000000000000000.log.swap",
    ):
        rows, planner, _, _ = read_rows(path)
        assert rows == [] and planner.splits == []
        assert [s.path for s in planner.skipped] == [str(path)]


def test_uri_planning_reads_headers_not_segments(tmp_path):
    records = write_plain(tmp_path, batches=60)
    rows, planner, _, _ = read_rows(f"file://{tmp_path}/plain-0", maxBytesPerPartition="3000")
    assert offsets_values(rows) == expected(records)
    logs = sum(p.stat().st_size for p in tmp_path.glob("plain-0/*.log"))
    assert len(planner.splits) > 10
    # a few windows around the index entries chosen as cut points, and the indexes
    assert 0 < planner.bytes_read < logs


# --- small splits packed into one task ------------------------------------------------------


def test_small_splits_pack_into_a_task_a_partition(tmp_path):
    a = write_plain(tmp_path, "plain", 0, batches=60)
    b = write_plain(tmp_path, "plain", 1, batches=25)
    opts = parse_options({"path": str(tmp_path), "includeHeaders": "true"})
    splits = Planner(opts).plan()
    assert len(splits) > 4  # 16 KiB segments: several a partition
    packed = tasks(splits, opts)
    assert [type(t) for t in packed] == [PackedSplits, PackedSplits]
    assert [s for t in packed for s in t.splits] == splits  # each once, in order
    assert {(s.topic, s.partition) for s in packed[0].splits} == {("plain", 0)}
    assert pickle.loads(pickle.dumps(packed[0])) == packed[0]
    # a packed task reads each split as a task of its own: the same rows, bytes and damage
    out = output_for(kafka_schema(True), opts)
    read = Sum()
    reader = KafkaLogReader(opts, out, Counters(read, Sum()))
    rows = [r for t in packed for batch in reader.read(t) for r in batch.to_pylist()]
    assert offsets_values(rows) == expected(a) + expected(b)
    assert read.value == sum(s.end - s.start for s in splits)
    # what the metrics source reports: a row a split, not a task
    metrics = KafkaLogMetricsReader(opts, out, Counters())
    per_split = [row for t in packed for row in metrics.read(t)]
    assert [(r[2], r[3], r[4]) for r in per_split] == [(s.name, s.start, s.end) for s in splits]


def test_packing_keeps_within_max_bytes_and_min_partitions(tmp_path):
    write_plain(tmp_path, "plain", 0, batches=60)
    opts = parse_options({"path": str(tmp_path)})
    splits = Planner(opts).plan()
    cost = max(s.end - s.start for s in splits) + PACK_SPLIT_COST
    limited = parse_options({"path": str(tmp_path), "maxBytesPerPartition": str(2 * cost)})
    packed = tasks(splits, limited)
    assert 1 < len(packed) < len(splits)
    for t in packed:
        parts = t.splits if isinstance(t, PackedSplits) else (t,)
        assert len(parts) <= 2
        assert sum(s.end - s.start + PACK_SPLIT_COST for s in parts) <= 2 * cost
    # minPartitions: as many tasks as asked for where the splits allow
    wanted = parse_options({"path": str(tmp_path), "minPartitions": "3"})
    assert len(tasks(splits, wanted)) >= 3
    # one split a task where none fits beside another
    alone = parse_options({"path": str(tmp_path), "maxBytesPerPartition": str(cost)})
    assert tasks(splits, alone) == splits


def _corrupt_schema(kind):
    from pyspark.sql.types import StructField

    return type(kafka_schema(True))([*kafka_schema(True).fields, StructField("_bad", kind())])


@pytest.mark.parametrize(
    "mode, column",
    [("FAILFAST", None), ("DROPMALFORMED", None), ("PERMISSIVE", "string"),
     ("PERMISSIVE", "binary"), ("SALVAGE", "string")],
)  # fmt: skip
@pytest.mark.parametrize("damaged", [False, True])
def test_a_packed_task_reads_its_segments_as_one_read(tmp_path, monkeypatch, mode, column, damaged):
    from pyspark.sql.types import BinaryType, StringType

    from kafka_format.runtime.read import grouped

    write_plain(tmp_path, "plain", 0, batches=60)
    logs = sorted((tmp_path / "plain-0").glob("*.log"))
    if damaged:
        flip_crc(logs[2], 1)  # a group not clean: read again file by file
    raw = {"path": str(tmp_path), "includeHeaders": "true", "mode": mode}
    if column:
        raw["columnNameOfCorruptRecord"] = "_bad"
    opts = parse_options(raw)
    schema = kafka_schema(True)
    if column:
        schema = _corrupt_schema(StringType if column == "string" else BinaryType)
    out = output_for(schema, opts)
    (task,) = tasks(Planner(opts).plan(), opts)
    assert isinstance(task, PackedSplits) and len(task.splits) == len(logs)

    def read(joined: bool):
        read, corrupt = Sum(), Sum()
        reader = KafkaLogReader(opts, out, Counters(read, corrupt))
        monkeypatch.setattr(reader, "_joins", lambda: joined)
        try:
            rows = [r for batch in reader.read(task) for r in batch.to_pylist()]
        except KafkaFormatError as exc:
            return str(exc), read.value, corrupt.value
        return rows, read.value, corrupt.value

    gathered = []
    gather = grouped.gather
    monkeypatch.setattr(grouped, "gather", lambda *a: gathered.append(1) or gather(*a))
    joined = read(True)
    assert len(gathered) == (mode != "SALVAGE")  # one group for them all, but salvage's walk
    assert joined == read(False)
    if damaged and mode == "FAILFAST":
        assert str(logs[2]) in joined[0]
    elif damaged:
        assert joined[2] == 1 and len(joined[0]) < 600
        if column:
            bad = [r["_bad"] for r in joined[0] if r["_bad"] is not None]
            assert len(bad) == 1 and (column == "string" or bad[0][:8] != b"\0" * 8)
    else:
        assert len(joined[0]) == 600 and joined[2] == 0
