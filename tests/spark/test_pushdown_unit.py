"""``spark_udfs/_pushdown.py`` without Spark: which filters the read answers, the rows it keeps,
the partitions it plans, and the bounds it prunes with.

Oracle: DuckDB evaluates the same filters as SQL (three-valued logic, ``IN`` with NULL,
``IS NOT DISTINCT FROM``, ``LIKE``) over the same rows; the pushdown must keep exactly the
rows and partitions DuckDB's WHERE keeps, and its bounds must hold every row DuckDB keeps.
"""

from __future__ import annotations

import datetime as dt
import itertools

import duckdb
import pyarrow as pa
import pytest
from pyspark.sql.datasource import (
    EqualNullSafe,
    EqualTo,
    GreaterThan,
    GreaterThanOrEqual,
    In,
    IsNotNull,
    IsNull,
    LessThan,
    LessThanOrEqual,
    Not,
    StringContains,
    StringEndsWith,
    StringStartsWith,
)

from kafka_format.spark_udfs._pushdown import Condition, Pushdown, condition_of, translate

UTC = dt.UTC
T0 = 1_700_000_000_000  # ms


def ts(ms: int, micros: int = 0) -> dt.datetime:
    return dt.datetime.fromtimestamp(ms / 1000, UTC) + dt.timedelta(microseconds=micros)


def micros_of(d: dt.datetime) -> int:
    return (d - dt.datetime(1970, 1, 1, tzinfo=UTC)) // dt.timedelta(microseconds=1)


# Rows as the read gives them: timestamps running backwards, a magic-0 row (null timestamp,
# type -1), LogAppendTime rows, a NO_TIMESTAMP (-1 ms) row, offsets with a gap.
OFFSETS = [0, 1, 2, 3, 5, 8, 9, 10, 11, 40, 41]
TIMES = [T0 + 5, T0 + 1, T0 + 3, None, T0 + 3, T0 + 9, -1, T0, T0 + 20, T0 + 7, None]
TYPES = [0, 0, 0, -1, 1, 1, 0, 0, 0, 0, -1]


def rows_batch() -> pa.RecordBatch:
    return pa.RecordBatch.from_arrays(
        [
            pa.array(OFFSETS, pa.int64()),
            pa.array([None if t is None else t * 1000 for t in TIMES], pa.timestamp("us", "UTC")),
            pa.array(TYPES, pa.int32()),
        ],
        names=["offset", "timestamp", "timestampType"],
    )


def sql_literal(column: str, value) -> str:
    if value is None:
        return "NULL"
    if column == "timestamp":
        return str(micros_of(value))  # DuckDB sees the timestamps as their microseconds
    if isinstance(value, str):
        return "'" + value.replace("'", "''") + "'"
    return str(value)


def sql_of(f) -> str:
    """The filter as DuckDB SQL (Spark's meaning of each class, pyspark/sql/datasource.py)."""
    if isinstance(f, Not):
        return f"NOT ({sql_of(f.child)})"
    col = f'"{f.attribute[0]}"'
    name = f.attribute[0]
    if isinstance(f, IsNull):
        return f"{col} IS NULL"
    if isinstance(f, IsNotNull):
        return f"{col} IS NOT NULL"
    if isinstance(f, In):
        return f"{col} IN ({', '.join(sql_literal(name, v) for v in f.value)})"
    if isinstance(f, StringStartsWith):
        return f"{col} LIKE '{f.value}%'"
    if isinstance(f, StringEndsWith):
        return f"{col} LIKE '%{f.value}'"
    if isinstance(f, StringContains):
        return f"{col} LIKE '%{f.value}%'"
    op = {
        EqualTo: "=",
        EqualNullSafe: "IS NOT DISTINCT FROM",
        LessThan: "<",
        LessThanOrEqual: "<=",
        GreaterThan: ">",
        GreaterThanOrEqual: ">=",
    }[type(f)]
    return f"{col} {op} {sql_literal(name, f.value)}"


def duck_rows(filters) -> list[int]:
    """Offsets of the rows DuckDB's WHERE keeps."""
    table = pa.table(
        {
            "offset": pa.array(OFFSETS, pa.int64()),
            "timestamp": pa.array([None if t is None else t * 1000 for t in TIMES], pa.int64()),
            "timestampType": pa.array(TYPES, pa.int32()),
        }
    )
    where = " AND ".join(f"({sql_of(f)})" for f in filters) or "TRUE"
    return [r[0] for r in duck(table, f'SELECT "offset" FROM t WHERE {where} ORDER BY 1')]


def duck(table: pa.Table, query: str) -> list[tuple]:
    con = duckdb.connect()
    con.register("t", table)
    return con.sql(query).fetchall()


def row_filters():
    """One filter of every class on every row column, negated and not, with values inside,
    between and outside the rows' own (and NULLs in IN)."""
    values = {
        "offset": [0, 3, 4, 10, 41, 100, -1],
        "timestamp": [ts(T0), ts(T0 + 3), ts(T0 + 3, 500), ts(T0 + 20), ts(-1), ts(0)],
        "timestampType": [-1, 0, 1],
    }
    binary = [EqualTo, EqualNullSafe, LessThan, LessThanOrEqual, GreaterThan, GreaterThanOrEqual]
    for column, vals in values.items():
        attr = (column,)
        for cls, v in itertools.product(binary, vals):
            yield cls(attr, v)
        yield EqualNullSafe(attr, None)
        yield In(attr, tuple(vals[:3]))
        yield In(attr, (vals[1], None))
        yield In(attr, (None,))
        yield IsNull(attr)
        yield IsNotNull(attr)


ALL_ROW_FILTERS = list(row_filters())


@pytest.mark.parametrize("f", ALL_ROW_FILTERS + [Not(f) for f in ALL_ROW_FILTERS], ids=repr)
def test_each_row_filter_keeps_what_sql_keeps(f):
    pushdown, returned = translate([f])
    assert returned == []
    assert pushdown is not None and len(pushdown.row_conditions) == 1
    kept = pushdown.keep(rows_batch())
    expected = duck_rows([f])
    assert kept.column("offset").to_pylist() == expected
    assert_bounds_hold(pushdown, expected)


def assert_bounds_hold(pushdown: Pushdown, expected_offsets: list[int]) -> None:
    """Every row SQL keeps lies within the bounds the planner prunes with."""
    by_offset = dict(zip(OFFSETS, TIMES, strict=True))
    for offset in expected_offsets:
        if pushdown.start_offset is not None:
            assert offset >= pushdown.start_offset
        if pushdown.end_offset is not None:
            assert offset < pushdown.end_offset
        if pushdown.start_timestamp is not None:
            assert by_offset[offset] is not None and by_offset[offset] >= pushdown.start_timestamp


@pytest.mark.parametrize("seed", range(40))
def test_conjunctions_keep_what_sql_keeps(seed):
    import random

    rng = random.Random(seed)
    chosen = rng.sample(ALL_ROW_FILTERS, rng.randint(2, 4))
    chosen = [Not(f) if rng.random() < 0.25 else f for f in chosen]
    pushdown, returned = translate(chosen)
    assert returned == [] and pushdown is not None
    expected = duck_rows(chosen)
    assert pushdown.keep(rows_batch()).column("offset").to_pylist() == expected
    assert_bounds_hold(pushdown, expected)


PARTITIONS = [("orders", 0), ("orders", 3), ("orders", 7), ("users", 3), ("ürün", 1), (None, None)]


def partition_filters():
    for column, vals in (("topic", ["orders", "users", "o", "zzz"]), ("partition", [0, 3, 7, 9])):
        attr = (column,)
        for cls in (EqualTo, EqualNullSafe, LessThan, LessThanOrEqual, GreaterThan):
            for v in vals:
                yield cls(attr, v)
        yield GreaterThanOrEqual(attr, vals[1])
        yield In(attr, tuple(vals[:2]))
        yield In(attr, (vals[0], None))
        yield IsNull(attr)
        yield IsNotNull(attr)
        yield EqualNullSafe(attr, None)
    yield StringStartsWith(("topic",), "ord")
    yield StringEndsWith(("topic",), "rs")
    yield StringContains(("topic",), "se")
    yield StringContains(("topic",), "rü")


ALL_PARTITION_FILTERS = list(partition_filters())


@pytest.mark.parametrize(
    "f", ALL_PARTITION_FILTERS + [Not(f) for f in ALL_PARTITION_FILTERS], ids=repr
)
def test_partition_filters_plan_what_sql_keeps(f):
    pushdown, returned = translate([f])
    assert returned == [] and pushdown is not None and not pushdown.row_conditions
    table = pa.table(
        {
            "topic": pa.array([t for t, _ in PARTITIONS], pa.string()),
            "partition": pa.array([p for _, p in PARTITIONS], pa.int32()),
            "i": pa.array(range(len(PARTITIONS))),
        }
    )
    keep = {r[0] for r in duck(table, f"SELECT i FROM t WHERE {sql_of(f)}")}
    assert {i for i, (t, p) in enumerate(PARTITIONS) if pushdown.accepts(t, p)} == keep


def test_what_is_handed_back_to_spark():
    key = EqualTo(("key",), b"k")
    nested = EqualTo(("headers", "key"), "h")
    double_not = Not(Not(EqualTo(("offset",), 3)))
    wrong_type = EqualTo(("offset",), 3.5)
    a_bool = EqualTo(("partition",), True)
    naive = GreaterThan(("timestamp",), dt.datetime(2024, 5, 1, 12))
    like_offset = StringStartsWith(("offset",), "1")
    huge = LessThan(("offset",), 1 << 70)
    mixed_in = In(("offset",), (1, "2"))
    kept = [EqualTo(("offset",), 3), In(("partition",), (3, 7)), IsNull(("timestamp",))]
    given = [key, nested, double_not, wrong_type, a_bool, naive, like_offset, huge, mixed_in]
    pushdown, returned = translate(given + kept)
    # The very objects Spark passed (pushFilters must return them by reference).
    assert [id(f) for f in returned] == [id(f) for f in given]
    assert pushdown is not None
    assert len(pushdown.partition_conditions) == 1 and len(pushdown.row_conditions) == 2
    assert translate([key]) == (None, [key])
    assert translate([]) == (None, [])


@pytest.mark.parametrize(
    ("filters", "start", "end", "start_ts"),
    [
        ([GreaterThanOrEqual(("offset",), 10)], 10, None, None),
        ([GreaterThan(("offset",), 10), LessThan(("offset",), 20)], 11, 20, None),
        ([GreaterThanOrEqual(("offset",), 5), LessThanOrEqual(("offset",), 9)], 5, 10, None),
        ([EqualTo(("offset",), 7)], 7, 8, None),
        ([In(("offset",), (30, 4, None, 12))], 4, 31, None),
        ([In(("offset",), (None,))], None, 0, None),
        ([GreaterThan(("offset",), 9), GreaterThan(("offset",), 3)], 10, None, None),
        ([GreaterThanOrEqual(("offset",), 0), LessThan(("offset",), -3)], None, 0, None),
        ([Not(GreaterThanOrEqual(("offset",), 10))], None, None, None),
        ([GreaterThanOrEqual(("timestamp",), ts(T0))], None, None, T0),
        ([GreaterThanOrEqual(("timestamp",), ts(T0, 1))], None, None, T0 + 1),
        ([GreaterThan(("timestamp",), ts(T0))], None, None, T0 + 1),
        ([GreaterThan(("timestamp",), ts(T0, -1))], None, None, T0),
        ([EqualTo(("timestamp",), ts(T0 + 4))], None, None, T0 + 4),
        ([In(("timestamp",), (ts(T0 + 9), ts(T0 + 2)))], None, None, T0 + 2),
        ([LessThan(("timestamp",), ts(T0))], None, None, None),
        ([GreaterThan(("timestamp",), ts(-5))], None, None, None),
        ([Not(LessThan(("timestamp",), ts(T0)))], None, None, None),
        ([GreaterThan(("timestampType",), 0)], None, None, None),
    ],
)
def test_bounds(filters, start, end, start_ts):
    pushdown, returned = translate(filters)
    assert returned == [] and pushdown is not None
    assert (pushdown.start_offset, pushdown.end_offset, pushdown.start_timestamp) == (
        start,
        end,
        start_ts,
    )


def test_timestamps_compare_in_microseconds_and_aware_zones_are_instants():
    east = dt.timezone(dt.timedelta(hours=2))
    same = dt.datetime.fromtimestamp((T0 + 3) / 1000, east)
    condition = condition_of(EqualTo(("timestamp",), same))
    assert condition == Condition("timestamp", "=", (T0 + 3) * 1000)
    pushdown, _ = translate([EqualTo(("timestamp",), same)])
    assert pushdown.keep(rows_batch()).column("offset").to_pylist() == [2, 5]
    # Half a millisecond later: no record's timestamp (whole ms) equals it.
    pushdown, _ = translate([EqualTo(("timestamp",), ts(T0 + 3, 500))])
    assert pushdown.keep(rows_batch()).num_rows == 0


def test_pushdown_pickles():
    import pickle

    pushdown, _ = translate([In(("partition",), (3, 7)), GreaterThan(("timestamp",), ts(T0))])
    assert pickle.loads(pickle.dumps(pushdown)) == pushdown
