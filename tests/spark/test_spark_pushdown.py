"""WHERE clauses answered by ``kafka_log`` (``KafkaLogPushdownReader``, ``_pushdown.py``): the
same rows as without pushdown, and fewer bytes read.

A log dir of many small segments: ``orders-0..2`` with timestamps that run backwards inside
every third batch (and across batches), gzip batches; ``legacy-0`` with magic 0 (no
timestamps), magic 1 and v2; ``lat-0`` (LogAppendTime); ``txn-0`` (committed and aborted
transactions across segments), ``txn-1`` (a transaction that never ends: a read_committed
read stops at it); ``compacted-0`` (batches as the cleaner leaves them: offset gaps).

In process (no SparkSession, milliseconds a read): for each filter list, the pushdown reader's
rows equal the plain reader's rows passed through the same filters' row semantics with no
pruning: whatever the planner prunes, no row the filters keep is lost. Through Spark: every
WHERE shape gives the rows Spark itself computes over the full read (and, for some, the rows of
a read with ``pushFilters=false``, and of ``read_table`` filtered in pandas).
"""

from __future__ import annotations

import datetime as dt
import itertools
import re
from pathlib import Path

import pyarrow as pa
import pytest
from pyspark.sql import functions as F
from pyspark.sql.datasource import (
    EqualTo,
    Filter,
    GreaterThan,
    GreaterThanOrEqual,
    In,
    IsNull,
    LessThan,
    LessThanOrEqual,
    Not,
    StringStartsWith,
)
from pyspark.sql.types import StringType

from kafka_format.runtime.errors import KafkaFormatError
from kafka_format.runtime.format.codecs import Codec
from kafka_format.runtime.read.columnar import read_table
from kafka_format.runtime.write.writer import Message, PartitionWriter, Producer
from kafka_format.spark_udfs import register
from kafka_format.spark_udfs._options import parse_options
from kafka_format.spark_udfs._pushdown import translate
from kafka_format.spark_udfs._reading import Counters
from kafka_format.spark_udfs.datasource import (
    KafkaLogPushdownReader,
    KafkaLogReader,
    kafka_schema,
    output_for,
)

T0 = 1_714_521_600_000  # 2024-05-01 00:00:00 UTC, ms
MINUTE = 60_000
CONF = "spark.sql.python.filterPushdown.enabled"


def write_logs(root: Path, segment_bytes: int = 1500) -> Path:
    """The log dir above; ``segment_bytes`` for orders and txn (a Spark task per segment:
    the tests through Spark use larger ones, the in-process ones many small ones)."""
    small = segment_bytes * 2 // 3
    for p in range(3):
        with PartitionWriter(
            root, "orders", p, segment_bytes=segment_bytes, index_interval_bytes=256
        ) as w:
            for b in range(60):
                t = T0 + b * MINUTE + p * 1000
                backwards = [t + 40_000, t + 10_000, t - 5 * MINUTE, t + 20_000, t]
                times = backwards if b % 3 == 0 else [t + i * 1000 for i in range(5)]
                w.append(
                    [
                        Message(f"k{p}-{b}-{i}".encode(), (f"v{b}-{i} " * 8).encode(), timestamp=ts)
                        for i, ts in enumerate(times)
                    ],
                    codec=Codec.GZIP if b % 4 == 1 else Codec.NONE,
                )
    clock = itertools.count(T0 + 30 * MINUTE, 7 * MINUTE).__next__
    with PartitionWriter(
        root, "legacy", 0, segment_bytes=small, index_interval_bytes=128, clock=clock
    ) as w:
        for _ in range(6):
            w.append([Message(b"m0-%d" % i, b"x" * 50) for i in range(4)], magic=0)
        for b in range(6):
            codec = Codec.GZIP if b % 2 else Codec.NONE
            w.append([Message(b"m1-%d" % i, b"y" * 50) for i in range(4)], magic=1, codec=codec)
        for _ in range(6):
            w.append([Message(b"m2-%d" % i, b"z" * 50) for i in range(4)])
    clock = itertools.count(T0 + 10 * MINUTE, 3 * MINUTE).__next__
    with PartitionWriter(
        root, "lat", 0, segment_bytes=small, index_interval_bytes=128, timestamp_type=1, clock=clock
    ) as w:
        for _ in range(20):  # the producer's CreateTimes run backwards; the log's do not
            w.append([Message(b"l%d" % i, b"w" * 40, timestamp=T0 - i * MINUTE) for i in range(3)])
    clock = itertools.count(T0, MINUTE).__next__
    with PartitionWriter(
        root, "txn", 0, segment_bytes=segment_bytes, index_interval_bytes=200, clock=clock
    ) as w:
        a, b = Producer(100), Producer(200)
        for r in range(8):
            w.append(
                [Message(b"a%d" % i, b"a" * 40) for i in range(3)], producer=a, transactional=True
            )
            w.append(
                [Message(b"b%d" % i, b"b" * 40) for i in range(3)], producer=b, transactional=True
            )
            w.append([Message(b"p%d" % i, b"p" * 40) for i in range(2)])
            w.append(
                [Message(b"a%d" % i, b"a" * 40) for i in range(2)], producer=a, transactional=True
            )
            (w.commit if r % 2 else w.abort)(a)
            (w.abort if r % 3 else w.commit)(b)
    clock = itertools.count(T0, MINUTE).__next__
    with PartitionWriter(
        root, "txn", 1, segment_bytes=segment_bytes, index_interval_bytes=200, clock=clock
    ) as w:
        for _ in range(4):
            w.append([Message(b"q%d" % i, b"q" * 40) for i in range(3)])
        c = Producer(300)  # offsets 12..14, never committed nor aborted
        w.append([Message(b"c%d" % i, b"c" * 40) for i in range(3)], producer=c, transactional=True)
        for _ in range(20):
            w.append([Message(b"r%d" % i, b"r" * 40) for i in range(3)])
    with PartitionWriter(root, "compacted", 0, segment_bytes=small, index_interval_bytes=128) as w:
        base = 0
        for _ in range(25):  # offsets base + 0, 3, 4, 9 of base .. base + 11
            w.append(
                [
                    Message(b"c%d" % (base + d), b"v" * 40, timestamp=T0 + (base + d) * 1000,
                            offset_delta=d)
                    for d in (0, 3, 4, 9)
                ],
                base_offset=base,
                last_offset_delta=11,
            )  # fmt: skip
            base += 12
    return root


@pytest.fixture(scope="module")
def logs(tmp_path_factory) -> Path:
    root = write_logs(tmp_path_factory.mktemp("pushdown") / "logs")
    assert len(list((root / "orders-1").glob("*.log"))) >= 10  # many segments to prune
    return root


def at(minutes: float, ms: int = 0) -> dt.datetime:
    return dt.datetime.fromtimestamp((T0 + round(minutes * MINUTE) + ms) / 1000, dt.UTC)


# --- in process: pruning never loses a row the filters keep -----------------------------------


class Sum:
    def __init__(self) -> None:
        self.value = 0

    def add(self, n: int) -> None:
        self.value += n


def in_process(root: Path, reader_class, filters: list[Filter], **options: str):
    """(rows as sorted tuples, filters handed back, task bytes read) of one read."""
    parsed = parse_options({"path": str(root), **options})
    counted = Sum()
    reader = reader_class(parsed, output_for(kafka_schema(), parsed), Counters(counted, Sum()))
    returned = list(reader.pushFilters(filters)) if reader_class is KafkaLogPushdownReader else []
    batches = [b for split in reader.partitions() for b in reader.read(split)]
    table = pa.Table.from_batches(batches, schema=reader.output.schema)
    return rows_of_table(table), returned, counted.value


def rows_of_table(table: pa.Table) -> list[tuple]:
    names = ("topic", "partition", "offset", "timestamp", "timestampType", "key")
    return sorted(
        zip(*(table.column(n).to_pylist() for n in names), strict=True),
        key=lambda r: (r[0] or "", r[1] if r[1] is not None else -1, r[2]),
    )


_PLAIN: dict[tuple, pa.Table] = {}


def plain_table(root: Path, **options: str) -> pa.Table:
    """Everything the plain reader reads (no pushdown), once per log and options."""
    key = (root, *sorted(options.items()))
    if key not in _PLAIN:
        parsed = parse_options({"path": str(root), **options})
        reader = KafkaLogReader(parsed, output_for(kafka_schema(), parsed), Counters())
        batches = [b for split in reader.partitions() for b in reader.read(split)]
        _PLAIN[key] = pa.Table.from_batches(batches, schema=reader.output.schema)
    return _PLAIN[key]


def expected_in_process(root: Path, filters: list[Filter], **options: str) -> list[tuple]:
    """The plain reader's rows (no pruning), kept by the same filters' semantics."""
    pushdown, _ = translate(filters)
    table = plain_table(root, **options)
    if pushdown is None:
        return rows_of_table(table)
    table = pa.Table.from_batches(
        [pushdown.keep(b) for b in table.to_batches()], schema=table.schema
    )
    return [r for r in rows_of_table(table) if pushdown.accepts(r[0], r[1])]


SHAPES: list[list[Filter]] = [
    [GreaterThanOrEqual(("timestamp",), at(30))],
    [GreaterThan(("timestamp",), at(30, 1)), In(("partition",), (1, 2))],
    [GreaterThanOrEqual(("timestamp",), at(20)), LessThan(("timestamp",), at(25))],
    [LessThanOrEqual(("timestamp",), at(3))],
    [EqualTo(("timestamp",), at(10, 2000))],
    [In(("timestamp",), (at(10, 2000), at(50), at(40, 40_000)))],
    [GreaterThanOrEqual(("timestamp",), at(99_999))],
    [IsNull(("timestamp",))],
    [EqualTo(("topic",), "legacy"), GreaterThanOrEqual(("timestamp",), at(60))],
    [EqualTo(("topic",), "lat"), GreaterThanOrEqual(("timestamp",), at(40))],
    [
        EqualTo(("partition",), 1),
        GreaterThanOrEqual(("offset",), 100),
        LessThanOrEqual(("offset",), 120),
    ],
    [In(("offset",), (0, 39, 45, 299))],
    [EqualTo(("topic",), "compacted"), EqualTo(("offset",), 37)],
    [EqualTo(("topic",), "compacted"), GreaterThan(("offset",), 40), LessThan(("offset",), 100)],
    [StringStartsWith(("topic",), "txn"), GreaterThanOrEqual(("offset",), 30)],
    [StringStartsWith(("topic",), "txn"), LessThan(("offset",), 20)],
    [GreaterThanOrEqual(("offset",), 20), LessThan(("offset",), 10)],
    [EqualTo(("timestampType",), 1), GreaterThan(("offset",), 30)],
    [Not(EqualTo(("partition",), 0)), Not(GreaterThanOrEqual(("timestamp",), at(5)))],
    [EqualTo(("key",), b"k1-10-2"), GreaterThanOrEqual(("timestamp",), at(10))],
]


@pytest.mark.parametrize("isolation", ["read_uncommitted", "read_committed"])
@pytest.mark.parametrize("shape", SHAPES, ids=[str(i) for i in range(len(SHAPES))])
def test_pruned_reads_keep_every_matching_row(logs, shape, isolation):
    options = {"isolationLevel": isolation, "maxBytesPerPartition": "700"}  # splits, too
    pushed, returned, _ = in_process(logs, KafkaLogPushdownReader, shape, **options)
    expected = expected_in_process(logs, shape, **options)
    assert pushed == expected
    handed_back = [f for f in shape if getattr(f, "attribute", None) == ("key",)]
    assert [id(f) for f in returned] == [id(f) for f in handed_back]


def test_read_committed_stops_at_an_open_transaction_before_the_clause_start(logs):
    """txn-1: offsets 12..14 open a transaction that never ends, so a read_committed read
    ends at 12; ``offset >= 30`` must not read 30.. just because no batch of it lies there."""
    shape = [
        EqualTo(("topic",), "txn"),
        EqualTo(("partition",), 1),
        GreaterThanOrEqual(("offset",), 30),
    ]
    committed, _, _ = in_process(
        logs, KafkaLogPushdownReader, shape, isolationLevel="read_committed"
    )
    assert committed == []
    uncommitted, _, _ = in_process(logs, KafkaLogPushdownReader, shape)
    assert [r[2] for r in uncommitted] == list(range(30, 75))


def test_user_options_and_the_clause_intersect(logs):
    shape = [GreaterThanOrEqual(("offset",), 100), LessThan(("offset",), 200)]
    rows, _, _ = in_process(
        logs, KafkaLogPushdownReader, shape, assign='{"orders":[1]}', startingOffsets="150",
        endingOffsets="250",
    )  # fmt: skip
    assert [(r[0], r[1], r[2]) for r in rows] == [("orders", 1, o) for o in range(150, 200)]
    # The clause fails nothing: an offset past the log end or below its start is no data loss,
    # a timestamp no record reaches is not startingOffsetsByTimestampStrategy=error.
    for shape in (
        [GreaterThanOrEqual(("offset",), 10_000)],
        [GreaterThanOrEqual(("timestamp",), at(10_000))],
    ):
        assert in_process(logs, KafkaLogPushdownReader, shape, subscribe="orders")[0] == []


def test_narrow_clauses_read_few_bytes(logs):
    _, _, full = in_process(logs, KafkaLogReader, [])
    narrow = {
        "offsets": [EqualTo(("partition",), 1), GreaterThanOrEqual(("offset",), 100),
                    LessThanOrEqual(("offset",), 120)],
        "late": [GreaterThanOrEqual(("timestamp",), at(50))],
        "topic": [EqualTo(("topic",), "compacted")],
    }  # fmt: skip
    read = {
        name: in_process(logs, KafkaLogPushdownReader, shape)[2] for name, shape in narrow.items()
    }
    assert read["offsets"] * 50 < full
    assert read["topic"] * 5 < full
    # orders' last ten minutes and no record of the others (whose timestamps end earlier)
    assert read["late"] * 3 < full
    # An upper bound on timestamps prunes nothing (a later record may be older).
    assert in_process(logs, KafkaLogPushdownReader, [LessThan(("timestamp",), at(1))])[2] == full


#: The most any record of the log dir lies below a record before it in its partition: orders'
#: t - 5 min after t + 40 s in every third batch (the other topics' timestamps never fall).
LATENESS = 340_000

UPPER_SHAPES: list[list[Filter]] = [
    [LessThan(("timestamp",), at(3))],
    [LessThanOrEqual(("timestamp",), at(12, 1))],
    [GreaterThanOrEqual(("timestamp",), at(20)), LessThan(("timestamp",), at(25))],
    [EqualTo(("timestamp",), at(10, 2000))],
    [In(("timestamp",), (at(10, 2000), at(14), at(1, 40_000)))],
    [EqualTo(("topic",), "legacy"), LessThan(("timestamp",), at(60))],
    [EqualTo(("topic",), "lat"), LessThan(("timestamp",), at(40))],
    [StringStartsWith(("topic",), "txn"), LessThan(("timestamp",), at(9))],
]


@pytest.mark.parametrize("isolation", ["read_uncommitted", "read_committed"])
@pytest.mark.parametrize("shape", UPPER_SHAPES, ids=[str(i) for i in range(len(UPPER_SHAPES))])
def test_an_upper_timestamp_bound_prunes_on_the_users_word(logs, shape, isolation):
    """maxTimestampLatenessMs: the exact bound of the log loses no row and reads less."""
    options = {"isolationLevel": isolation, "maxBytesPerPartition": "700"}
    plain, _, unpruned = in_process(logs, KafkaLogPushdownReader, shape, **options)
    pushed, _, read = in_process(
        logs, KafkaLogPushdownReader, shape, maxTimestampLatenessMs=str(LATENESS), **options
    )
    assert pushed == plain == expected_in_process(logs, shape, **options)
    assert read < unpruned


def test_the_lateness_word_bounds_the_bytes_read(logs):
    one = {"assign": '{"orders":[1]}', "maxTimestampLatenessMs": str(LATENESS)}
    _, _, full = in_process(logs, KafkaLogReader, [], assign='{"orders":[1]}')
    first = [LessThan(("timestamp",), at(3))]
    middle = [GreaterThanOrEqual(("timestamp",), at(30)), LessThan(("timestamp",), at(33))]
    assert in_process(logs, KafkaLogPushdownReader, first, **one)[2] * 4 < full
    assert in_process(logs, KafkaLogPushdownReader, middle, **one)[2] * 4 < full


def test_a_lateness_word_the_log_breaks_fails_the_read(logs):
    """One ms short of the log's lateness: the task that reads the record below it fails,
    naming it and the record it is late against, whatever the mode."""
    shape = [LessThan(("timestamp",), at(3))]
    for mode in ("FAILFAST", "DROPMALFORMED", "PERMISSIVE"):
        with pytest.raises(KafkaFormatError) as caught:
            in_process(
                logs, KafkaLogPushdownReader, shape, subscribe="orders", mode=mode,
                maxTimestampLatenessMs=str(LATENESS - 1),
            )  # fmt: skip
        message = str(caught.value)
        assert "maxTimestampLatenessMs=339999 does not hold" in message
        # orders-N's batch 0: offset 2 (t - 5 min) against offset 0 (t + 40 s)
        assert re.search(r"offset 2 has timestamp \d+, 340000 ms below that of offset 0", message)
        assert re.search(r"orders-\d/0+\.log", message)
    with pytest.raises(ValueError, match="maxTimestampLatenessMs must be a whole number"):
        parse_options({"path": str(logs), "maxTimestampLatenessMs": "-1"})


def test_damage_reporting_schemas_push_nothing(logs):
    options = {"path": str(logs), "mode": "PERMISSIVE"}
    parsed = parse_options(options)
    schema = kafka_schema().add("_corrupt_batch", StringType())
    reader = KafkaLogPushdownReader(parsed, output_for(schema, parsed), Counters())
    shape = [EqualTo(("partition",), 1)]
    assert list(reader.pushFilters(shape)) == shape and reader.pushdown is None
    salvage = parse_options({**options, "mode": "SALVAGE"})
    reader = KafkaLogPushdownReader(salvage, output_for(kafka_schema(), salvage), Counters())
    assert list(reader.pushFilters(shape)) == shape


def test_the_reader_follows_the_registration_and_the_option(logs):
    from kafka_format.spark_udfs.datasource import KafkaLogDataSource

    registered = type("Registered", (KafkaLogDataSource,), {"push_filters": True})
    schema = kafka_schema()
    cases = [
        (KafkaLogDataSource, {}, KafkaLogReader),
        (KafkaLogDataSource, {"pushFilters": "true"}, KafkaLogPushdownReader),
        (registered, {}, KafkaLogPushdownReader),
        (registered, {"pushfilters": "false"}, KafkaLogReader),
    ]
    for source, options, expected in cases:
        reader = source({"path": str(logs), **options}).reader(schema)
        assert type(reader) is expected, (source, options)
    with pytest.raises(ValueError, match="pushFilters must be true or false"):
        KafkaLogDataSource({"path": str(logs), "pushFilters": "yes"}).reader(schema)


# --- through Spark ------------------------------------------------------------------------
#
# A Spark task per segment costs about 0.1 s here, so the shapes run on the same topics in
# segments of 1 MiB (one a partition); pruning across segments is the in-process tests' and
# test_narrow_where_reads_fewer_bytes's.


@pytest.fixture(scope="module")
def kafka(spark):
    registration = register(spark)
    assert spark.conf.get(CONF) == "true"
    return registration


@pytest.fixture(scope="module")
def wide(tmp_path_factory) -> Path:
    return write_logs(tmp_path_factory.mktemp("pushdown-wide") / "logs", segment_bytes=1 << 20)


def load(spark, path: Path, **options: str):
    """A DataFrame for one query, pushing filters unless told not to (on Spark 4.3 the
    registered source does not by default: ``test_a_reused_dataframe_reads_all_of_it``)."""
    options.setdefault("pushFilters", "true")
    reader = spark.read.format("kafka_log")
    for key, value in options.items():
        reader = reader.option(key, value)
    return reader.load(str(path))


def rows_of(df) -> list[tuple]:
    picked = df.select(
        "topic", "partition", "offset", F.unix_micros("timestamp").alias("us"), "timestampType",
        "key",
    )  # fmt: skip
    return sorted(
        (tuple(r) for r in picked.collect()),
        key=lambda r: (r[0] or "", r[1] if r[1] is not None else -1, r[2]),
    )


def spark_filter(df) -> str:
    """The condition Spark still evaluates after the scan ('' when none)."""
    plan = df._jdf.queryExecution().executedPlan().toString()
    return "\n".join(line for line in plan.splitlines() if re.search(r"\bFilter\b", line))


#: (WHERE, also under read_committed)
WHERE = [
    ("timestamp >= '2024-05-01 00:30:00'", True),
    ("timestamp > '2024-05-01 00:30:00.0005' AND topic > 'lat'", False),
    ("timestamp < '2024-05-01 00:20:00' AND offset <=> 5", False),
    ("timestamp <= '2024-05-01 00:20:01' AND timestampType <> 0", False),
    ("timestamp = '2024-05-01 00:10:02'", False),
    ("timestamp BETWEEN '2024-05-01 00:40:00' AND '2024-05-01 00:45:00'", True),
    ("timestamp IN (timestamp'2024-05-01 00:10:02', timestamp'2024-05-01 00:50:00')", False),
    ("timestamp IS NULL", False),
    ("timestamp IS NOT NULL AND topic = 'legacy'", False),
    ("timestamp >= '2030-01-01'", False),
    ("partition IN (1, 2) AND timestamp > '2024-05-01 00:45:00'", True),
    ("partition = 1 AND offset BETWEEN 10 AND 40", True),
    ("topic = 'orders' AND partition <> 0 AND offset >= 290", False),
    ("topic IN ('txn', 'compacted') AND offset >= 40", True),
    ("topic LIKE 'tx%' AND offset < 20", True),
    ("topic IS NULL", False),
    ("offset = 37", False),
    ("offset IN (0, 39, 45, 299)", True),
    ("NOT (offset >= 5) AND timestampType <> 0", True),
    ("timestampType = 1", False),
    ("timestampType = -1 OR offset < 3", False),
    ("timestamp >= '2024-05-01 00:55:00' OR partition = 2", False),
    ("key IS NOT NULL AND offset >= 290", False),
    ("offset >= 20 AND offset < 10", False),
]


@pytest.mark.parametrize("isolation", ["read_uncommitted", "read_committed"])
def test_every_where_shape_gives_the_rows_spark_computes(spark, kafka, wide, isolation):
    """Against Spark's own evaluation of each WHERE over the whole read (cached, so nothing
    is pushed into it)."""
    full = load(spark, wide, isolationLevel=isolation, pushFilters="false").cache()
    assert full.count() > 1000
    try:
        for where, committed in WHERE:
            if isolation == "read_committed" and not committed:
                continue
            pushed = rows_of(load(spark, wide, isolationLevel=isolation).where(where))
            assert pushed == rows_of(full.where(where)), where
    finally:
        full.unpersist()


def test_what_spark_still_filters(spark, kafka, wide):
    """Consumed filters leave Spark's plan; the rest stay in it."""
    assert spark_filter(load(spark, wide).where("partition IN (1, 2) AND offset < 9")) == ""
    left = spark_filter(load(spark, wide).where("timestamp >= '2024-05-01' AND key IS NOT NULL"))
    assert "isnotnull(key" in left and "timestamp" not in left
    left = spark_filter(load(spark, wide).where("timestampType = -1 OR offset < 3"))
    assert " OR " in left  # not pushed at all
    without = spark_filter(load(spark, wide, pushFilters="false").where("offset < 9"))
    assert "offset" in without


def test_the_same_rows_as_a_read_without_pushdown(spark, kafka, wide):
    for where in (
        "timestamp >= '2024-05-01 00:30:00' AND topic = 'orders'",
        "topic = 'txn' AND offset >= 30",
        "topic = 'compacted' AND offset BETWEEN 37 AND 60",
    ):
        on = rows_of(load(spark, wide, isolationLevel="read_committed").where(where))
        off = load(spark, wide, isolationLevel="read_committed", pushFilters="false")
        assert on == rows_of(off.where(where)), where
        assert on


def test_rows_match_read_table_filtered_in_pandas(spark, kafka, wide):
    """An oracle outside the source: the runtime's read_table per partition, pandas' filter."""
    import pandas as pd

    frames = []
    for d in sorted(wide.iterdir()):
        topic, partition = d.name.rsplit("-", 1)
        t = read_table(str(d), isolation="read_committed").to_pandas()
        t["topic"], t["partition"] = topic, int(partition)
        frames.append(t)
    df = pd.concat(frames)
    late = pd.Timestamp("2024-05-01 00:30:00", tz="UTC")
    cases = {
        "timestamp >= '2024-05-01 00:30:00' AND partition IN (0, 2)": (df.timestamp >= late)
        & df.partition.isin([0, 2]),
        "topic = 'txn' AND offset BETWEEN 10 AND 70": (df.topic == "txn")
        & df.offset.between(10, 70),
        "timestamp IS NULL": df.timestamp.isna(),
    }
    for where, mask in cases.items():
        got = [
            (r[0], r[1], r[2])
            for r in rows_of(load(spark, wide, isolationLevel="read_committed").where(where))
        ]
        want = sorted(zip(df[mask].topic, df[mask].partition, df[mask].offset, strict=True))
        assert got == [(t, int(p), int(o)) for t, p, o in want], where
        assert got  # each case keeps some rows


def test_narrow_where_reads_fewer_bytes(spark, kafka, logs):
    """orders-1 alone (ten segments): what the tasks read, by the registration's accumulator."""

    def bytes_of(df) -> int:
        before = kafka.bytes_read.value
        df.collect()
        return kafka.bytes_read.value - before

    one = {"assign": '{"orders":[1]}'}
    full = bytes_of(load(spark, logs, **one))
    off = bytes_of(load(spark, logs, pushFilters="false", **one).where("offset < 20"))
    assert off == full  # without pushdown every batch of every segment is read
    narrow = bytes_of(load(spark, logs, **one).where("offset BETWEEN 100 AND 120"))
    late = bytes_of(load(spark, logs, **one).where("timestamp >= '2024-05-01 00:50:00'"))
    other = bytes_of(load(spark, logs, **one).where("partition = 2"))
    assert 0 < narrow * 8 < full
    assert 0 < late * 4 < full
    assert other == 0
    # An upper bound prunes on the user's word only, and keeps the same rows.
    early = "timestamp < '2024-05-01 00:03:00'"
    word = {"maxTimestampLatenessMs": str(LATENESS), **one}
    assert bytes_of(load(spark, logs, **one).where(early)) == full
    assert 0 < bytes_of(load(spark, logs, **word).where(early)) * 4 < full
    assert rows_of(load(spark, logs, **word).where(early)) == rows_of(
        load(spark, logs, pushFilters="false", **one).where(early)
    )


def test_pushdown_follows_the_conf_and_the_option(spark, kafka, wide):
    where = "partition = 1 AND offset < 20"
    expected = [("orders", 1, o) for o in range(20)] + [("txn", 1, o) for o in range(20)]
    spark.conf.set(CONF, "false")
    try:
        # The registered source still asks for pushdown: Spark refuses it, naming the conf.
        with pytest.raises(Exception, match="filterPushdown"):
            load(spark, wide).where(where).collect()
        rows = rows_of(load(spark, wide, pushFilters="false").where(where))
        assert [(r[0], r[1], r[2]) for r in rows] == expected
    finally:
        spark.conf.set(CONF, "true")
    rows = rows_of(load(spark, wide).where(where))
    assert [(r[0], r[1], r[2]) for r in rows] == expected


def test_a_reused_dataframe_reads_all_of_it(spark, kafka, wide):
    """A DataFrame queried with a WHERE clause, then without one, reads everything the second
    time. Spark 4.3 hands a DataFrame's last pushed-down read to its later queries that push
    no filter (``PythonDataSourceV2.setReadInfo``): the registered source pushes by default
    only where ``pushdown_is_scoped`` finds Spark scoping that read to its query, and the
    check must tell the two apart, as an explicit ``pushFilters=true`` shows."""
    from kafka_format.spark_udfs._pushdown import pushdown_is_scoped

    everything = spark.read.format("kafka_log").option("pushFilters", "false").load(str(wide))
    total = everything.count()
    df = spark.read.format("kafka_log").load(str(wide))  # as registered
    assert 0 < df.where("partition = 1").count() < total
    assert df.count() == total
    forced = load(spark, wide)  # pushFilters=true
    assert 0 < forced.where("partition = 1").count() < total
    assert (forced.count() == total) == pushdown_is_scoped(spark)
