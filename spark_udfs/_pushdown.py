"""WHERE clauses of a ``kafka_log`` read: which the read answers itself, and how.

Spark hands a Python data source the conjuncts of a query's WHERE clause it could translate
(``DataSourceReader.pushFilters``, pyspark/sql/datasource.py; the list is their AND), and
evaluates again only those handed back. :func:`translate` splits them:

* On ``topic`` and ``partition`` (constant over a partition directory), any comparison,
  ``IN``, ``IS [NOT] NULL``, ``<=>``, ``LIKE 'x%'`` / ``'%x'`` / ``'%x%'`` and their negations
  are decided once per partition on the driver (:meth:`Pushdown.accepts`): partitions that
  fail are not planned at all.
* On ``offset``, ``timestamp`` and ``timestampType``, the same operators (no ``LIKE``) are
  evaluated exactly on every row a task reads (:meth:`Pushdown.keep`), with SQL's
  three-valued logic (a row is kept only where the filter is true, never where it is null).
  Some of them also bound what is read (:attr:`Pushdown.start_offset`, :attr:`end_offset`,
  :attr:`start_timestamp`, and :attr:`end_timestamp` on the user's word, below): the planner
  turns those into byte windows through ``.index`` and ``.timeindex``, as for the
  ``startingOffsets`` / ``startingTimestamp`` options.

Everything else (``key``, ``value``, ``headers``, a value of an unexpected type, a nested
column) is handed back to Spark, unevaluated here. So what is consumed is answered exactly,
and the pruning only decides what need not be read.

The pruning per column, and why it is safe:

* ``offset``: ``=``, ``<``, ``<=``, ``>``, ``>=``, ``IN`` (its least and greatest value),
  ``<=>`` give a half-open range ``[start_offset, end_offset)``; offsets grow with position
  in a partition's log, so every matching row lies in it.
* ``timestamp``: timestamps need not grow with offsets (a producer's CreateTime can run
  backwards, even within a batch, as v2's signed timestamp deltas allow), so only a lower
  bound prunes: no row before the first record whose timestamp is >= it can match, and that
  record is found as ListOffsets finds it (:meth:`Partition.find_timestamp`: each segment's
  largest timestamp, from its last ``.timeindex`` entry or its batch headers' maxTimestamp,
  then batch headers). An upper bound (``<``, ``<=``) prunes nothing: a v2 header gives no
  lower bound on its records' timestamps (the base timestamp is the first record's, not
  the least), and a later record can be older. Unless the user bounds how much older: with
  the option ``maxTimestampLatenessMs`` = L (the user's word that no record's timestamp is
  more than L ms below that of any record before it in its partition; a topic whose brokers
  ran with ``message.timestamp.before.max.ms`` = B and ``message.timestamp.after.max.ms``
  = A has L = A + B, since each record lies within those of its append time, and append
  times do not run backwards), an upper bound U (rows need ``timestamp < U``) ends a
  partition's read before the first record whose timestamp is >= U + L, found as the lower
  bound is: every record after that one is at least U. The tasks check the word on what they
  read (:class:`LatenessCheck`) and fail the read, under every mode, where it does not
  hold; what they do not read cannot be checked.
* ``timestampType``: no pruning (every batch may hold any), rows only.

What the timestamp pruning trusts is what the broker's ListOffsets trusts: a segment's
largest timestamp (its last ``.timeindex`` entry when the index is whole, else its batch
headers) and each v2 header's maxTimestamp, which the broker sets from the records
(``LogValidator``); a log whose headers under-state their records would lose rows to it.
Unlike the broker's look-up, a segment without timestamps (magic 0) is not judged by its
file's mtime, and the search goes on past a segment that holds no match
(``Planner._first_at_or_after`` in ``_planning.py``).

Spark's values: integers for ``partition``, ``offset``, ``timestampType``; strings for
``topic``; timezone-aware ``datetime`` for ``timestamp`` (Spark sends a timestamp literal
as a variant TIMESTAMP, microseconds since the epoch, which pyspark turns into a UTC
``datetime``: ``pyspark/sql/worker/data_source_pushdown_filters.py``, ``deserializeFilter``).
The read's timestamps are Kafka's milliseconds as Arrow microseconds, so comparing in
microseconds is exact; only the pruning bound is rounded (up, to the first millisecond that
can match).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql.datasource import (
    EqualNullSafe,
    EqualTo,
    Filter,
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

from ..runtime.errors import KafkaFormatError

Op = Literal["=", "<=>", "<", "<=", ">", ">=", "in", "null", "notnull", "prefix", "suffix", "infix"]

#: Columns decided once per partition directory (their value is the directory's).
PARTITION_COLUMNS = ("topic", "partition")
#: Columns decided per row, in the tasks.
ROW_COLUMNS = ("offset", "timestamp", "timestampType")

_OPS: dict[type, Op] = {
    EqualTo: "=",
    EqualNullSafe: "<=>",
    LessThan: "<",
    LessThanOrEqual: "<=",
    GreaterThan: ">",
    GreaterThanOrEqual: ">=",
    In: "in",
    IsNull: "null",
    IsNotNull: "notnull",
    StringStartsWith: "prefix",
    StringEndsWith: "suffix",
    StringContains: "infix",
}
_STRING_OPS = ("prefix", "suffix", "infix")
_INT64_MIN, _INT64_MAX = -(1 << 63), (1 << 63) - 1
_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
_MICROSECOND = dt.timedelta(microseconds=1)


@dataclass(frozen=True, slots=True)
class Condition:
    """One pushed filter, its value in the read's terms (``timestamp``: epoch microseconds)."""

    column: str
    op: Op
    #: The literal; for ``in`` a tuple (which may hold None); None for ``null``/``notnull``.
    value: Any = None
    negated: bool = False

    def truth(self, x: Any) -> bool | None:
        """SQL's value of the filter for a column value ``x`` (None: SQL NULL)."""
        op, v = self.op, self.value
        result: bool | None
        if op == "null":
            result = x is None
        elif op == "notnull":
            result = x is not None
        elif op == "<=>":
            result = x == v if x is not None and v is not None else x is None and v is None
        elif x is None:
            result = None
        elif op == "in":
            # x IN (..., NULL) is NULL, not false, when no listed value equals x.
            listed = [e for e in v if e is not None]
            result = True if x in listed else (None if None in v else False)
        elif v is None:
            result = None
        elif op == "prefix":
            result = x.startswith(v)
        elif op == "suffix":
            result = x.endswith(v)
        elif op == "infix":
            result = v in x
        else:
            result = _compare(op, x, v)
        if self.negated and result is not None:
            return not result
        return result

    def mask(self, column: pa.Array | pa.ChunkedArray) -> pa.Array | pa.ChunkedArray:
        """The filter over a column of the read, three-valued (null where SQL gives NULL)."""
        op, v = self.op, self.value
        values = column.cast(pa.int64())  # timestamps: their microseconds
        if op == "null":
            result = pc.is_null(values)
        elif op == "notnull":
            result = pc.is_valid(values)
        elif op == "<=>":
            result = pc.is_null(values) if v is None else pc.fill_null(pc.equal(values, v), False)
        elif op == "in":
            listed = [e for e in v if e is not None]
            found = pc.is_in(values, value_set=pa.array(listed, pa.int64()))
            # is_in says false for a null row; SQL says NULL (and NULL too for a row no
            # listed value equals when the list holds a NULL).
            miss = pa.scalar(None if None in v else False, pa.bool_())
            result = pc.if_else(
                pc.is_valid(values), pc.if_else(found, True, miss), pa.scalar(None, pa.bool_())
            )
        elif v is None:
            result = pa.nulls(len(values), pa.bool_())
        else:
            result = _ARROW[op](values, v)
        return pc.invert(result) if self.negated else result


def _compare(op: Op, x: Any, v: Any) -> bool:
    if op == "=":
        return x == v
    if op == "<":
        return x < v
    if op == "<=":
        return x <= v
    if op == ">":
        return x > v
    return x >= v


_ARROW = {
    "=": pc.equal,
    "<": pc.less,
    "<=": pc.less_equal,
    ">": pc.greater,
    ">=": pc.greater_equal,
}


@dataclass(frozen=True, slots=True)
class Pushdown:
    """The filters a read answers (their AND), and the bounds they give the planner."""

    #: On ``topic`` / ``partition``: decided per partition directory by the planner.
    partition_conditions: tuple[Condition, ...] = ()
    #: On ``offset`` / ``timestamp`` / ``timestampType``: applied to every row read.
    row_conditions: tuple[Condition, ...] = ()
    #: Every row that can match has an offset >= this (None: no bound) ...
    start_offset: int | None = None
    #: ... and < this.
    end_offset: int | None = None
    #: Every row that can match has a timestamp >= this, in epoch ms (None: no bound) ...
    start_timestamp: int | None = None
    #: ... and < this (prunes only with ``maxTimestampLatenessMs``).
    end_timestamp: int | None = None

    def accepts(self, topic: str | None, partition: int | None) -> bool:
        """Whether the rows of partition directory ``topic-partition`` can match (exactly:
        those of a partition that does not are all excluded by the filters)."""
        value = {"topic": topic, "partition": partition}
        return all(c.truth(value[c.column]) is True for c in self.partition_conditions)

    def keep(self, batch: pa.RecordBatch) -> pa.RecordBatch:
        """The rows of ``batch`` (in the read's schema) for which every row filter is true."""
        if not self.row_conditions or not batch.num_rows:
            return batch
        keep = None
        for condition in self.row_conditions:
            # NULL is not true: fill before combining, so NOT over NULL stays dropped.
            mask = pc.fill_null(condition.mask(batch.column(condition.column)), False)
            keep = mask if keep is None else pc.and_(keep, mask)
        return batch.filter(keep)

    def filter(self, batches: Iterable[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            kept = self.keep(batch)
            if kept.num_rows:
                yield kept


def translate(filters: Sequence[Filter]) -> tuple[Pushdown | None, list[Filter]]:
    """What the read answers of ``filters`` (None: nothing), and the filters handed back to
    Spark (those it does not answer exactly; the same objects, as ``pushFilters`` must)."""
    partition: list[Condition] = []
    rows: list[Condition] = []
    returned: list[Filter] = []
    for f in filters:
        condition = condition_of(f)
        if condition is None:
            returned.append(f)
        elif condition.column in PARTITION_COLUMNS:
            partition.append(condition)
        else:
            rows.append(condition)
    if not partition and not rows:
        return None, returned
    start, end = _offset_bounds(rows)
    least, beyond = _timestamp_bounds(rows)
    return Pushdown(tuple(partition), tuple(rows), start, end, least, beyond), returned


def condition_of(f: Filter) -> Condition | None:
    """``f`` as a :class:`Condition`, or None when the read cannot answer it exactly."""
    negated = False
    if isinstance(f, Not):
        f, negated = f.child, True
    op = _OPS.get(type(f))
    if op is None:
        return None  # Not(Not(...)) or a filter class this module does not know
    attribute = getattr(f, "attribute", ())
    if len(attribute) != 1:
        return None  # a nested field: the source has none among these columns
    column = attribute[0]
    if column not in PARTITION_COLUMNS and column not in ROW_COLUMNS:
        return None
    if op in _STRING_OPS and column != "topic":
        return None
    if op in ("null", "notnull"):
        return Condition(column, op, None, negated)
    raw = f.value
    if op == "in":
        if not isinstance(raw, tuple | list):
            return None
        values = [_value(column, e) for e in raw]
        if any(v is _WRONG for v in values):
            return None
        return Condition(column, op, tuple(values), negated)
    value = _value(column, raw)
    if value is _WRONG:
        return None
    return Condition(column, op, value, negated)


_WRONG = object()


def _value(column: str, raw: Any) -> Any:
    """A literal in the column's terms, or ``_WRONG`` for one the read does not compare
    exactly (Spark only pushes literals of the column's type; anything else is returned)."""
    if raw is None:
        return None
    if column == "topic":
        return raw if isinstance(raw, str) else _WRONG
    if column == "timestamp":
        if not isinstance(raw, dt.datetime) or raw.tzinfo is None:
            return _WRONG  # a naive datetime names no instant
        micros = (raw - _EPOCH) // _MICROSECOND
        return micros if _INT64_MIN <= micros <= _INT64_MAX else _WRONG
    if isinstance(raw, bool) or not isinstance(raw, int):
        return _WRONG
    return raw if _INT64_MIN <= raw <= _INT64_MAX else _WRONG


def _offset_bounds(rows: Sequence[Condition]) -> tuple[int | None, int | None]:
    """``[start, end)`` holding every offset the conditions on ``offset`` let through."""
    start: int | None = None
    end: int | None = None
    for c in rows:
        if c.column != "offset" or c.negated:
            continue
        lo, hi = _range(c)
        if lo is not None:
            start = lo if start is None else max(start, lo)
        if hi is not None:
            end = hi if end is None else min(end, hi)
    # Offsets are >= 0: a bound at or below 0 prunes nothing, and a negative one could be
    # taken for kcat's "-o -N" further down.
    if start is not None and start <= 0:
        start = None
    if end is not None and end < 0:
        end = 0
    return start, end


def _timestamp_bounds(rows: Sequence[Condition]) -> tuple[int | None, int | None]:
    """``[least, beyond)``: millisecond timestamps a row must lie in to pass the conditions
    on ``timestamp`` (None: no such bound; a least one at or below 0 prunes nothing)."""
    least: int | None = None
    beyond: int | None = None
    for c in rows:
        if c.column != "timestamp" or c.negated:
            continue
        lo, hi = _range(c)
        # A record's microseconds are ms * 1000: the first ms with ms * 1000 >= a bound.
        if lo is not None:
            ms = -(-lo // 1000)
            least = ms if least is None else max(least, ms)
        if hi is not None:
            ms = -(-hi // 1000)
            beyond = ms if beyond is None else min(beyond, ms)
    return (least if least is not None and least > 0 else None), beyond


def _range(c: Condition) -> tuple[int | None, int | None]:
    """``[lo, hi)`` of integer values a non-negated condition lets through (None: open)."""
    v = c.value
    if c.op in ("=", "<=>") and v is not None:
        return v, v + 1
    if c.op == "in":
        listed = [e for e in v if e is not None]
        return (min(listed), max(listed) + 1) if listed else (0, 0)
    if v is None:
        return None, None  # = NULL, < NULL, ...: never true, but no bound is needed
    if c.op == ">":
        return v + 1, None
    if c.op == ">=":
        return v, None
    if c.op == "<":
        return None, v
    if c.op == "<=":
        return None, v + 1
    return None, None  # null, notnull: no range


class LatenessCheck:
    """Checks ``maxTimestampLatenessMs`` on the rows one task reads, in their order: a row
    whose timestamp is more than the bound below the greatest before it (in the task's
    window) fails the read, naming both records. The read's upper timestamp bound pruned on
    that word, so where it is wrong rows may be missing: never a silent loss where it shows."""

    __slots__ = ("_greatest", "_greatest_offset", "_lateness_us", "_name")

    def __init__(self, lateness_ms: int, name: str) -> None:
        self._lateness_us = lateness_ms * 1000
        self._name = name
        self._greatest: int | None = None
        self._greatest_offset = -1

    def rows(self, batches: Iterable[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            self.see(batch)
            yield batch

    def see(self, batch: pa.RecordBatch) -> None:
        if not batch.num_rows:
            return
        column = batch.column("timestamp").cast(pa.int64())
        valid = column.is_valid().to_numpy(zero_copy_only=False)
        if not valid.any():
            return
        micros = pc.fill_null(column, _INT64_MIN).to_numpy()
        offsets = batch.column("offset").to_numpy()
        before = np.maximum.accumulate(micros)
        if self._greatest is not None:
            before = np.maximum(before, self._greatest)
        # The greatest timestamp before each row (the row's own excluded).
        prior = np.empty_like(before)
        prior[0] = _INT64_MIN if self._greatest is None else self._greatest
        prior[1:] = before[:-1]
        late = valid & (prior != _INT64_MIN) & (prior - micros > self._lateness_us)
        if late.any():
            i = int(np.argmax(late))
            earlier = self._greatest_offset
            if i and micros[:i].max() == prior[i]:
                earlier = int(offsets[int(np.argmax(micros[:i]))])
            raise KafkaFormatError(
                f"maxTimestampLatenessMs={self._lateness_us // 1000} does not hold: the record "
                f"at offset {int(offsets[i])} has timestamp {int(micros[i]) // 1000}, "
                f"{(int(prior[i]) - int(micros[i])) // 1000} ms below that of offset {earlier} "
                f"({int(prior[i]) // 1000}); the read's upper timestamp bound pruned on that "
                "word, so rows may be missing: raise the option or drop it",
                file=self._name,
            )
        if self._greatest is None or before[-1] > self._greatest:
            self._greatest = int(before[-1])
            self._greatest_offset = int(offsets[int(np.argmax(micros))])


#: The JVM class that plans a Python data source's scan with pushed filters.
_SCAN_BUILDER = "org.apache.spark.sql.execution.datasources.v2.python.PythonScanBuilder"


def pushdown_is_scoped(spark: Any) -> bool:
    """Whether this Spark keeps a read planned with pushed filters to the query that pushed
    them.

    Spark 4.3's ``PythonScanBuilder.pushFilters`` stores the planned read (partitions and read
    function) on the ``PythonDataSourceV2`` that every scan of one DataFrame shares
    (``setReadInfo``), and a later scan that pushes no filter (no WHERE clause at all) reuses
    it (``getOrCreateReadInfo``): ``df.where("partition = 0").count()`` then ``df.count()``
    counts partition 0 only. Later Sparks keep the read info on the scan builder (its
    ``readInfo`` field; see the comment on it in ``PythonScanBuilder.scala``), which is what
    this looks for. Over Spark Connect the JVM is out of reach: not known to be safe."""
    try:
        jvm = spark._jvm
        if jvm is None:
            return False
        fields = jvm.java.lang.Class.forName(_SCAN_BUILDER).getDeclaredFields()
        return any(f.getName() == "readInfo" for f in fields)
    except Exception:  # Connect sessions, a JVM without the class: not known to be safe
        return False


__all__ = [
    "Condition",
    "LatenessCheck",
    "Pushdown",
    "condition_of",
    "pushdown_is_scoped",
    "translate",
]
