"""The ``kafka_log`` data source through a real local SparkSession (one for the whole run).

Oracles: the corpus's .jsonl (records as the sources' own readers decoded them), the records
:class:`~kafka_format.runtime.write.writer.PartitionWriter` says it wrote (and which of them a
read_committed consumer receives), and batch positions walked with ``struct``.
"""

from __future__ import annotations

import base64
import itertools
import shutil
import struct
import zlib
from pathlib import Path

import pytest
from crc32c import crc32c

pyspark = pytest.importorskip("pyspark")

from pyspark.sql import functions as F  # noqa: E402

from kafka_format.runtime.format.codecs import Codec  # noqa: E402
from kafka_format.runtime.write.writer import Message, PartitionWriter, Producer  # noqa: E402
from kafka_format.spark_udfs import KAFKA_SCHEMA_DDL, register  # noqa: E402

KAFKA_SOURCE_SCHEMA = (
    "struct<key:binary,value:binary,topic:string,partition:int,offset:bigint,"
    "timestamp:timestamp,timestampType:int,headers:array<struct<key:string,value:binary>>>"
)
T0 = 1_700_000_000_000


@pytest.fixture(scope="module")
def kafka(spark):
    return register(spark)


def load(spark, path, **options):
    reader = spark.read.format("kafka_log")
    for key, value in options.items():
        reader = reader.option(key, value)
    return reader.load(str(path))


def rows_of(df) -> list[tuple]:
    """(topic, partition, offset, key, value, ms, timestampType, headers) sorted."""
    picked = df.select(
        "topic",
        "partition",
        "offset",
        "key",
        "value",
        F.unix_millis("timestamp").alias("ms"),
        "timestampType",
        *(["headers"] if "headers" in df.columns else []),
    )
    has_headers = "headers" in df.columns
    out = []
    for r in picked.collect():
        headers = [(h.key, h.value) for h in r.headers] if has_headers and r.headers else []
        out.append((r.topic, r.partition, r.offset, r.key, r.value, r.ms, r.timestampType, headers))
    return sorted(out, key=lambda t: (t[0] or "", t[1] if t[1] is not None else -1, t[2]))


def frame_starts(log: Path) -> list[int]:
    data = log.read_bytes()
    positions, pos = [], 0
    while len(data) - pos > 17:
        _, length = struct.unpack_from(">qi", data, pos)
        if pos + 12 + length > len(data):
            break
        positions.append(pos)
        pos += 12 + length
    return positions


@pytest.fixture(scope="module")
def plain(tmp_path_factory):
    """Two partitions of several indexed segments each; every fourth batch gzip."""
    log_dir = tmp_path_factory.mktemp("plain")
    written = {}
    for partition in (0, 1):
        clock = itertools.count(T0, 1000).__next__
        with PartitionWriter(
            log_dir,
            "plain",
            partition,
            segment_bytes=16384,
            index_interval_bytes=1024,
            keep_records=True,
            clock=clock,
        ) as w:
            for b in range(60 if partition == 0 else 25):
                w.append(
                    [
                        Message(
                            f"k{b}-{i}".encode(),
                            (f"p{partition} value {b}-{i} " * 5).encode(),
                            headers=[("h", str(i).encode())] if i % 3 == 0 else (),
                        )
                        for i in range(10)
                    ],
                    codec=Codec.GZIP if b % 4 == 0 else Codec.NONE,
                )
        written[partition] = w.records
    return log_dir, written


def expected_rows(written, partitions=(0, 1), keep=lambda r: True) -> list[tuple]:
    return [
        ("plain", p, r.offset, r.key, r.value, r.timestamp, r.timestamp_type, list(r.headers))
        for p in partitions
        for r in written[p]
        if keep(r)
    ]


# --- schema and options -----------------------------------------------------------------------


def test_schema_is_the_kafka_source_schema(spark, kafka, plain):
    log_dir, _ = plain
    with_headers = load(spark, log_dir, includeHeaders="true")
    assert with_headers.schema.simpleString() == KAFKA_SOURCE_SCHEMA
    without = load(spark, log_dir)
    assert without.schema.simpleString() == KAFKA_SOURCE_SCHEMA.replace(
        ",headers:array<struct<key:string,value:binary>>", ""
    )
    assert spark.createDataFrame([], KAFKA_SCHEMA_DDL).schema == with_headers.schema


def test_unknown_options_fail_naming_the_known_ones(spark, kafka, plain):
    log_dir, _ = plain
    with pytest.raises(Exception, match="unknown option") as info:
        # (a kafka.* option is a consumer setting: accepted and said to be ignored)
        load(spark, log_dir, **{"startingoffset": "0"}).count()
    assert "startingOffsets" in str(info.value) and "isolationLevel" in str(info.value)


# --- the corpus as partition directories ------------------------------------------------------


@pytest.fixture(scope="module")
def corpus_root(tmp_path_factory, manifest):
    """Every corpus set as ``setN-0/00000000000000000000.log``, in two log directories:
    ``valid/`` for the sets whose CRCs all hold, ``damaged/`` for the others; the sets whose
    batches start offsets again (client requests, not logs: as a segment their offsets are
    damage) as ``requests/reqN-0``."""
    root = tmp_path_factory.mktemp("corpus")
    for n, corpus_set in enumerate(manifest):
        if corpus_set.crc_valid and not corpus_set.is_log:
            directory = root / "requests" / f"req{n}-0"
        else:
            directory = root / ("valid" if corpus_set.crc_valid else "damaged") / f"set{n}-0"
        directory.mkdir(parents=True)
        shutil.copyfile(corpus_set.path, directory / "00000000000000000000.log")
    return root


def jsonl_rows(topic: str, expected: list[dict]) -> list[tuple]:
    def b(text):
        return None if text is None else base64.b64decode(text)

    return [
        (
            topic,
            0,
            r["offset"],
            b(r["key"]),
            b(r["value"]),
            r["timestamp"],
            r["timestampType"],
            [(h["key"], b(h["value"])) for h in r["headers"]],
        )
        for r in expected
    ]


def test_corpus_sets_read_as_partitions_equal_their_jsonl(spark, kafka, manifest, corpus_root):
    # verifyCrc=false: the .jsonl lists damaged sets' records as a CRC-blind reader sees them.
    # The glob matches the partition directories of both log directories.
    df = load(spark, f"{corpus_root}/*/set*-0", includeHeaders="true", verifyCrc="false")
    by_topic: dict[str, list] = {}
    for row in rows_of(df):
        by_topic.setdefault(row[0], []).append(row)
    for n, corpus_set in enumerate(manifest):
        if not corpus_set.is_log:
            continue  # a client request, not a log: as a segment, its offsets are damage
        topic = f"set{n}"
        want = jsonl_rows(topic, corpus_set.expected())
        assert by_topic.get(topic, []) == sorted(want, key=lambda t: t[2]), corpus_set.id


def crc_walk(data: bytes) -> list[tuple[int, int, bool]]:
    """(first offset, last offset, CRC holds) of each whole batch, by struct, zlib, crc32c."""
    out, pos, previous = [], 0, -1
    while len(data) - pos > 17:
        offset, length = struct.unpack_from(">qi", data, pos)
        end = pos + 12 + length
        if end > len(data):
            break
        if data[pos + 16] == 2:
            (stored,) = struct.unpack_from(">I", data, pos + 17)
            (delta,) = struct.unpack_from(">i", data, pos + 23)
            first, last, ok = offset, offset + delta, stored == crc32c(data[pos + 21 : end])
        else:
            (stored,) = struct.unpack_from(">I", data, pos + 12)
            first, last = previous + 1, offset  # a wrapper's offset is its last inner one
            ok = stored == zlib.crc32(data[pos + 16 : end])
        out.append((first, last, ok))
        previous, pos = last, end
    return out


def test_corpus_damaged_sets_by_mode(spark, kafka, manifest, corpus_root):
    damaged = [(n, s) for n, s in enumerate(manifest) if not s.crc_valid]
    assert damaged
    walks = {f"set{n}": crc_walk(s.data()) for n, s in damaged}
    before = kafka.corrupt_batches.value
    got = rows_of(load(spark, corpus_root / "damaged", mode="DROPMALFORMED"))
    bad_batches = sum(not ok for walk in walks.values() for _, _, ok in walk)
    assert kafka.corrupt_batches.value - before == bad_batches > 0
    want = []
    for n, corpus_set in damaged:
        good = [(a, b) for a, b, ok in walks[f"set{n}"] if ok]
        want += [
            row
            for row in jsonl_rows(f"set{n}", corpus_set.expected())
            if any(a <= row[2] <= b for a, b in good)
        ]
    assert [r[:5] for r in got] == sorted(r[:5] for r in want)
    with pytest.raises(Exception, match="crc"):
        load(spark, corpus_root / "damaged" / f"set{damaged[0][0]}-0").count()


# --- pruning, splitting -----------------------------------------------------------------------


def test_offsets_are_pruned_and_fewer_bytes_read(spark, kafka, plain):
    log_dir, written = plain
    before = kafka.bytes_read.value
    everything = rows_of(load(spark, log_dir, includeHeaders="true"))
    full = kafka.bytes_read.value - before
    assert everything == expected_rows(written)
    assert full == sum(p.stat().st_size for p in log_dir.glob("*/*.log"))

    before = kafka.bytes_read.value
    df = load(
        spark,
        log_dir,
        includeHeaders="true",
        startingOffsets='{"plain":{"0":333,"1":-2}}',
        endingOffsets='{"plain":{"0":377,"1":12}}',
    )
    got = rows_of(df)
    pruned = kafka.bytes_read.value - before
    assert got == [
        r
        for r in expected_rows(written)
        if (r[1] == 0 and 333 <= r[2] < 377) or (r[1] == 1 and r[2] < 12)
    ]
    assert pruned < full / 4


def test_starting_timestamp_is_found_through_the_time_index(spark, kafka, plain):
    log_dir, written = plain
    before = kafka.bytes_read.value
    got = rows_of(load(spark, log_dir / "plain-0", startingTimestamp=str(T0 + 44_000)))
    pruned = kafka.bytes_read.value - before
    want = [(*r[:7], []) for r in expected_rows(written, (0,)) if r[5] >= T0 + 44_000]
    assert got == want and want
    assert pruned < sum(p.stat().st_size for p in (log_dir / "plain-0").glob("*.log")) / 2


def test_split_segments_give_the_same_rows(spark, kafka, plain):
    log_dir, written = plain
    segments = len(list(log_dir.glob("*/*.log")))
    split = load(spark, log_dir, includeHeaders="true", maxBytesPerPartition="2500")
    assert split.rdd.getNumPartitions() > 3 * segments
    assert rows_of(split) == expected_rows(written)
    whole = load(spark, log_dir, includeHeaders="true")
    # small segments: a partition's packed into one task (_planning.tasks)
    assert whole.rdd.getNumPartitions() == 2
    assert rows_of(whole) == expected_rows(written)


def test_file_uri_and_glob(spark, kafka, plain):
    log_dir, written = plain
    got = rows_of(load(spark, f"file://{log_dir}/plain-[1]", includeHeaders="true"))
    assert got == expected_rows(written, (1,))


# --- read_committed ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def transactional(tmp_path_factory):
    """Transactions of three producers across segments: p1 commits, p2 aborts (spanning
    segments), p3 left open; plain records in between."""
    log_dir = tmp_path_factory.mktemp("txn")
    clock = itertools.count(T0, 1000).__next__
    p1, p2, p3 = Producer(1001), Producer(1002), Producer(1003)
    with PartitionWriter(
        log_dir,
        "txn",
        0,
        segment_bytes=4096,
        index_interval_bytes=256,
        keep_records=True,
        clock=clock,
    ) as w:
        for r in range(16):
            for tag, producer in (("a", p1), ("plain", None), ("b", p2)):
                w.append(
                    [Message(f"{tag}{r}".encode(), f"{tag}-{r}-{i}".encode()) for i in range(4)],
                    producer=producer,
                    transactional=producer is not None,
                )
            if r % 3 == 2:
                w.commit(p1)
            if r % 4 == 3:
                w.abort(p2)
        w.commit(p1)
        w.append([Message(b"c", b"open")], producer=p3, transactional=True)
        w.append([Message(b"tail", b"after")])
    return log_dir, w.records


def test_read_committed_across_split_segments(spark, kafka, transactional):
    log_dir, records = transactional
    committed = load(spark, log_dir, isolationLevel="read_committed", maxBytesPerPartition="600")
    assert committed.rdd.getNumPartitions() > 2 * len(list(log_dir.glob("*/*.log")))
    got = [(r[2], r[4]) for r in rows_of(committed)]
    assert got == [(r.offset, r.value) for r in records if r.read_committed]
    assert len(got) < len(records)
    # p3's transaction never ends: the read stops at its first offset (the last stable
    # offset), so the plain record written after it is not read either.
    open_first = next(r.offset for r in records if r.value == b"open")
    assert all(offset < open_first for offset, _ in got)
    assert b"after" not in {value for _, value in got}
    everything = [(r[2], r[4]) for r in rows_of(load(spark, log_dir))]
    assert everything == [(r.offset, r.value) for r in records]


# --- damage -----------------------------------------------------------------------------------


@pytest.fixture
def damaged(tmp_path, plain):
    """plain-0 copied with one CRC byte of its sixth batch flipped."""
    log_dir, written = plain
    shutil.copytree(log_dir / "plain-0", tmp_path / "plain-0")
    log = tmp_path / "plain-0" / "00000000000000000000.log"
    data = bytearray(log.read_bytes())
    pos = frame_starts(log)[5]
    original = bytes(data[pos : frame_starts(log)[6]])
    data[pos + 17] ^= 0xFF
    log.write_bytes(bytes(data))
    base = struct.unpack_from(">q", data, pos)[0]
    return tmp_path, written[0], pos, base, original


def test_failfast_names_file_position_and_offset(spark, kafka, damaged):
    log_dir, _, pos, base, _ = damaged
    with pytest.raises(Exception) as info:
        load(spark, log_dir, mode="FAILFAST").collect()
    message = str(info.value)
    assert "00000000000000000000.log" in message and f"@{pos}" in message
    assert f"base offset {base}" in message and "crc32c" in message


def test_dropmalformed_and_permissive_drop_the_batch(spark, kafka, damaged):
    log_dir, records, _, base, _ = damaged
    kept = [(r.offset, r.value) for r in records if not base <= r.offset < base + 10]
    for mode in ("DROPMALFORMED", "PERMISSIVE"):
        before = kafka.corrupt_batches.value
        got = [(r[2], r[4]) for r in rows_of(load(spark, log_dir, mode=mode))]
        assert got == kept, mode
        assert kafka.corrupt_batches.value == before + 1
    unchecked = [(r[2], r[4]) for r in rows_of(load(spark, log_dir, verifyCrc="false"))]
    assert unchecked == [(r.offset, r.value) for r in records]


def test_permissive_with_the_corrupt_batch_column(spark, kafka, damaged):
    log_dir, records, pos, base, original = damaged
    for kind in ("string", "binary"):
        rows = (
            spark.read.format("kafka_log")
            .schema(f"{KAFKA_SCHEMA_DDL}, _corrupt_batch {kind}")
            .option("mode", "PERMISSIVE")
            .load(str(log_dir))
            .collect()
        )
        bad = [r for r in rows if r._corrupt_batch is not None]
        assert len(bad) == 1
        row = bad[0]
        assert (row.topic, row.partition, row.offset) == ("plain", 0, base)
        assert row.value is None and row.key is None and row.timestamp is None
        if kind == "string":
            assert f"@{pos}" in row._corrupt_batch and "crc32c" in row._corrupt_batch
        else:
            flipped = bytearray(original)
            flipped[17] ^= 0xFF
            assert bytes(row._corrupt_batch) == bytes(flipped)
        good = sorted((r.offset, r.value) for r in rows if r._corrupt_batch is None)
        assert good == [(r.offset, r.value) for r in records if not base <= r.offset < base + 10]


def test_decompressed_size_bound(spark, kafka, plain):
    log_dir, written = plain
    # gzip batches hold ten records of ~85 bytes: 200 bytes is too few for them (the bound
    # does not apply to uncompressed batches)
    with pytest.raises(Exception, match=r"(?i)decompress"):
        load(spark, log_dir / "plain-1", maxDecompressedBytes="200").count()
    bounded = load(spark, log_dir / "plain-1", maxDecompressedBytes="200", mode="DROPMALFORMED")
    got = rows_of(bounded)
    batch_of = {r.offset: r.offset // 10 for r in written[1]}
    assert [r[2] for r in got] == [r.offset for r in written[1] if batch_of[r.offset] % 4 != 0]


# --- the broker's directory rules -------------------------------------------------------------


@pytest.fixture(scope="module")
def broker_dir(tmp_path_factory, plain):
    """The ``plain`` partitions, plus what a broker leaves beside them and never serves: a
    -delete copy of plain-0, a -future copy of plain-1, and .swap/.cleaned/.deleted copies
    of a segment inside plain-0."""
    source, written = plain
    root = tmp_path_factory.mktemp("broker")
    for name in ("plain-0", "plain-1"):
        shutil.copytree(source / name, root / name)
    shutil.copytree(source / "plain-0", root / "plain-0.abc123-delete")
    shutil.copytree(source / "plain-1", root / "plain-1.def-future")
    log = root / "plain-0" / "00000000000000000000.log"
    for suffix in (".swap", ".cleaned", ".deleted"):
        shutil.copy(log, f"{log}{suffix}")
    return root, written


@pytest.mark.parametrize("uri", [False, True])
def test_globs_count_what_the_broker_serves(spark, kafka, broker_dir, uri):
    root, written = broker_dir
    base = f"file://{root}" if uri else str(root)  # file:// goes through pyarrow's ranged reads
    want = {p: len(written[p]) for p in (0, 1)}
    for pattern in ("plain-*", "*"):
        df = load(spark, f"{base}/{pattern}", maxBytesPerPartition="4000")
        counts = {r.partition: r["count"] for r in df.groupBy("partition").count().collect()}
        assert counts == want, pattern
    got = rows_of(load(spark, f"{base}/plain-*", includeHeaders="true"))
    assert got == expected_rows(written)
