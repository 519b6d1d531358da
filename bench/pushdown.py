"""A one-hour window out of a multi-segment log directory, read with ``WHERE`` (issue 27, item 5).

One generated log directory: topic ``events``, three partitions, a day of records (every
partition the same steady rate, each partition a few milliseconds after the one before;
CreateTime rises with the offset, but each record's is up to :data:`LATE_MS` early, as a
producer's clocks and buffering make it: timestamps run backwards by up to that), v2 batches of
100 records (a short key, a 100-byte value, one header), uncompressed, segments rolled small
enough that each holds less than an hour (``.index`` and ``.timeindex`` as a broker writes
them). In one local session, ``kafka_log`` answers the same aggregate (rows, least and greatest
offset, per partition: the answer names every row's offset, as the offsets of a partition's
window are consecutive) over:

- the whole directory, no ``WHERE``: the full scan;
- ``WHERE partition = -1``: nothing to read, one empty task: what Spark's job costs alone;
- an hour, ``timestamp >= X AND timestamp < X + 1h``: the first hour, the middle one and the
  last one, with pushdown (``pushFilters=true``) and without (``pushFilters=false``);
- the middle hour's offsets, ``offset >= A AND offset < B``, with and without;
- the first and the middle hour with the option ``maxTimestampLatenessMs`` = :data:`LATE_MS`
  (the log's own bound on how far timestamps run backwards): the upper bound prunes too.

Every answer is checked against the records written, and each window's with pushdown against
its answer without. What ``kafka_log`` read is its ``bytes_read`` accumulator
(``register(spark).bytes_read``, the byte windows its tasks read); the segments that hold the
window are found from the files (each segment read with ``read_table``: those with a record
in it); the driver's own reads while planning (``.index``, ``.timeindex``, headers) are
``Planner.bytes_read`` of the same plan made in this process. Best of the runs after the
first, after untimed full scans (the JVM's JIT, the workers' imports and kernels).

    .venv/bin/python bench/run.py --only pushdown [--quick]
"""

from __future__ import annotations

import datetime as dt
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import spark as spark_bench

from kafka_format.runtime.write.writer import Message, PartitionWriter, Producer

MIB = 1 << 20
HOUR = 3_600_000
T0 = 1_714_521_600_000  # 2024-05-01 00:00:00 UTC, ms
TOPIC = "events"
HEADING = "## Spark: a one-hour window with `WHERE` (filter pushdown)"
FULL = {
    "hours": 24,
    "partitions": 3,
    "per_hour": 15_000,  # records an hour, each partition
    "segment": 2 * MIB,  # ~0.9 hours of records
    "runs": 3,
    "runs_off": 1,  # without pushdown every window is a full scan: one run after the first
}
#: A smoke run: the same queries on a few hours, each run once.
QUICK = {
    "hours": 4,
    "partitions": 2,
    "per_hour": 400,
    "segment": 48 * 1024,
    "runs": 0,
    "runs_off": 0,
}
#: Untimed full scans first (the JVM's JIT, the Python workers' imports and kernels).
WARMUP = 1
PER_BATCH = 100
VALUE_BYTES = 100
#: Each partition's clock this many ms after the one before (windows cut them unevenly).
SKEW_MS = 7
#: A record's CreateTime is up to this many ms before its place in the steady clock.
LATE_MS = 30_000

FULL_SCAN = "the whole directory, no `WHERE`"
NOTHING = "`partition = -1`: nothing to read"
WORD = f"+ option `maxTimestampLatenessMs={LATE_MS}`"


@dataclass(slots=True)
class _Log:
    root: Path
    #: Per partition, the timestamp (ms) of each offset.
    timestamps: dict[int, np.ndarray]
    #: Every segment file: (partition, path, size, least and greatest offset and timestamp).
    segments: list[tuple[int, Path, int, int, int, int, int]] = field(default_factory=list)

    @property
    def size(self) -> int:
        return sum(s[2] for s in self.segments)

    @property
    def records(self) -> int:
        return sum(len(t) for t in self.timestamps.values())


@dataclass(frozen=True, slots=True)
class _Window:
    label: str
    where: str | None
    #: The rows it keeps: offsets of partition p in ``[lo, hi)`` by timestamp or by offset.
    kind: str  # "all", "none", "timestamp" or "offset"
    lo: int = 0
    hi: int = 0
    options: tuple[tuple[str, str], ...] = ()


def run(
    workdir: Path,
    *,
    quick: bool,
    spark: Any = None,
    log: Callable[[str], None] | None = None,
) -> dict:
    """Write the log directory under ``workdir`` (deleted after), time every query; the result
    for :func:`render`. ``spark``: a session to use (else a local one, stopped after)."""
    say = log or (lambda text: print(text, file=sys.stderr, flush=True))
    shape = QUICK if quick else FULL
    scratch = Path(tempfile.mkdtemp(prefix="kafka-format-pushdown-", dir=workdir))
    own = spark is None
    try:
        started = time.perf_counter()
        written = _write(scratch / "logs", shape)
        say(
            f"pushdown: {written.records} records, {len(written.segments)} segments, "
            f"{written.size / MIB:.1f} MiB, in {time.perf_counter() - started:.0f} s"
        )
        if own:
            from kafka_format.spark_udfs import local_session

            spark = local_session(
                "kafka-format bench pushdown",
                cores=spark_bench.CORES,
                conf=spark_bench.SESSION_CONF,
            )
            spark.sparkContext.setLogLevel("ERROR")
        rows = _measure(spark, written, shape, say)
        return {"shape": dict(shape), "log": _describe(written), "rows": rows}
    finally:
        if own and spark is not None:
            spark.stop()
        shutil.rmtree(scratch, ignore_errors=True)


# --- the log directory ------------------------------------------------------------------------


def _write(root: Path, shape: dict) -> _Log:
    """Every partition: ``per_hour`` records an hour for ``hours`` hours, in batches of
    :data:`PER_BATCH` as an idempotent producer sends them."""
    per_hour, hours = shape["per_hour"], shape["hours"]
    total = per_hour * hours
    pad = b"." * VALUE_BYTES
    timestamps: dict[int, np.ndarray] = {}
    for p in range(shape["partitions"]):
        stamps = T0 + p * SKEW_MS + (np.arange(total, dtype=np.int64) * HOUR) // per_hour
        stamps -= np.random.default_rng(p).integers(0, LATE_MS, total)
        timestamps[p] = stamps
        producer = Producer(7000 + p)
        with PartitionWriter(root, TOPIC, p, segment_bytes=shape["segment"], fast=True) as w:
            for first in range(0, total, PER_BATCH):
                w.append(
                    [
                        Message(
                            b"user-%06d" % ((i * 7919) % 100_000),
                            (b'{"n":%d,"p":%d,"pad":"' % (i, p) + pad)[: VALUE_BYTES - 2] + b'"}',
                            (("trace-id", b"%016x" % i),),
                            int(stamps[i]),
                        )
                        for i in range(first, min(first + PER_BATCH, total))
                    ],
                    producer=producer,
                )
    written = _Log(root, timestamps)
    written.segments = _segments(root)
    return written


def _segments(root: Path) -> list[tuple[int, Path, int, int, int, int, int]]:
    """Each segment file read on its own (``read_table``): its records' offsets and
    timestamps, which say which windows it holds records of."""
    from kafka_format.runtime.read.columnar import read_table

    out = []
    for path in sorted(root.glob(f"{TOPIC}-*/*.log")):
        table = read_table(str(path))
        offsets = table.column("offset").to_numpy()
        stamps = table.column("timestamp").cast("int64").to_numpy() // 1000  # µs → ms
        partition = int(path.parent.name.rsplit("-", 1)[1])
        out.append(
            (
                partition,
                path,
                path.stat().st_size,
                int(offsets.min()),
                int(offsets.max()),
                int(stamps.min()),
                int(stamps.max()),
            )
        )
    return out


def _describe(written: _Log) -> dict:
    spans = [(s[6] - s[5]) / HOUR for s in written.segments]
    return {
        "records": written.records,
        "bytes": written.size,
        "segments": len(written.segments),
        "partitions": len(written.timestamps),
        "hours_per_segment": float(np.mean(spans)),
        "max_hours_per_segment": float(np.max(spans)),
    }


def _holding(written: _Log, window: _Window) -> tuple[int, int]:
    """The segment files that hold a record the window keeps: (count, bytes)."""
    if window.kind == "none":
        return 0, 0
    files = size = 0
    for partition, _path, nbytes, o_lo, o_hi, _t_lo, _t_hi in written.segments:
        if window.kind == "all":
            hit = True
        elif window.kind == "offset":
            hit = o_lo < window.hi and o_hi >= window.lo
        else:  # exact: a record of this segment in [lo, hi)
            stamps = written.timestamps[partition][o_lo : o_hi + 1]
            hit = bool(np.any((stamps >= window.lo) & (stamps < window.hi)))
        if hit:
            files += 1
            size += nbytes
    return files, size


def _expected(written: _Log, window: _Window) -> dict[int, tuple[int, int, int]]:
    """Per partition: (rows, least offset, greatest offset) of the rows the window keeps."""
    out = {}
    for p, stamps in written.timestamps.items():
        if window.kind == "none":
            continue
        if window.kind == "all":
            keep = np.arange(len(stamps))
        elif window.kind == "offset":
            keep = np.arange(max(window.lo, 0), min(window.hi, len(stamps)))
        else:
            keep = np.flatnonzero((stamps >= window.lo) & (stamps < window.hi))
        if len(keep):
            out[p] = (len(keep), int(keep[0]), int(keep[-1]))
    return out


def _windows(written: _Log, shape: dict) -> list[_Window]:
    hours, per_hour = shape["hours"], shape["per_hour"]
    middle = hours // 2

    def hour(label: str, h: int) -> _Window:
        lo, hi = T0 + h * HOUR, T0 + (h + 1) * HOUR
        where = f"timestamp >= TIMESTAMP '{_sql_time(lo)}' AND timestamp < TIMESTAMP "
        where += f"'{_sql_time(hi)}'"
        return _Window(label, where, "timestamp", lo, hi)

    first = hour("first hour (0:00-1:00)", 0)
    mid = hour(f"middle hour ({middle}:00-{middle + 1}:00)", middle)
    a, b = middle * per_hour, (middle + 1) * per_hour
    word = (("maxTimestampLatenessMs", str(LATE_MS)),)
    return [
        _Window(FULL_SCAN, None, "all"),
        _Window(NOTHING, "partition = -1", "none"),
        first,
        mid,
        hour(f"last hour ({hours - 1}:00-{hours}:00)", hours - 1),
        _Window(
            f"the middle hour's offsets ({a}-{b - 1})",
            f"offset >= {a} AND offset < {b}",
            "offset",
            a,
            b,
        ),
        *(
            _Window(f"{w.label} {WORD}", w.where, "timestamp", w.lo, w.hi, word)
            for w in (first, mid)
        ),
    ]


def _sql_time(ms: int) -> str:
    return dt.datetime.fromtimestamp(ms / 1000, dt.UTC).strftime("%Y-%m-%d %H:%M:%S")


# --- the queries ------------------------------------------------------------------------------


def _measure(spark, written: _Log, shape: dict, say) -> list[dict]:
    from pyspark.sql import functions as F

    from kafka_format.spark_udfs import register

    kafka = register(spark)
    root = str(written.root)

    def frame(window: _Window, push: bool):
        reader = spark.read.format("kafka_log")
        for key, value in window.options:
            reader = reader.option(key, value)
        # Said every time: whether register() turns pushdown on by default depends on the
        # Spark (_pushdown.pushdown_is_scoped). Each query loads a DataFrame of its own, so no
        # later query reuses a read planned for an earlier one's WHERE (every answer is
        # checked, the full scans' too).
        reader = reader.option("pushFilters", "true" if push else "false")
        df = reader.load(root)
        return df if window.where is None else df.where(window.where)

    def query(window: _Window, push: bool) -> Callable[[], tuple[dict, int]]:
        def answer() -> tuple[dict, int]:
            before = kafka.bytes_read.value
            grouped = (
                frame(window, push)
                .groupBy("partition")
                .agg(F.count(F.lit(1)), F.min("offset"), F.max("offset"))
                .collect()
            )
            got = {int(r[0]): (int(r[1]), int(r[2]), int(r[3])) for r in grouped}
            return got, kafka.bytes_read.value - before

        return answer

    for _ in range(WARMUP):
        query(_Window(FULL_SCAN, None, "all"), True)()
    # and the Python process that hands kafka_log its filters (it imports the package too)
    query(_Window(NOTHING, "partition = -1", "none"), True)()
    rows = []
    answers: dict[str, dict] = {}
    for window in _windows(written, shape):
        for push in (True, False) if window.where and window.kind != "none" else (True,):
            if window.label.endswith(WORD) and not push:
                continue
            runs = shape["runs"] if push else shape["runs_off"]
            load = os.getloadavg()[0]
            (answer, nbytes), first, best = spark_bench.timed(query(window, push), runs)
            want = _expected(written, window)
            if answer != want:
                raise RuntimeError(
                    f"{window.label}, pushdown {push}: got {answer!r}, expected {want!r}"
                )
            if window.label in answers and answers[window.label] != answer:
                raise RuntimeError(f"{window.label}: pushdown changed the answer")
            answers[window.label] = answer
            files, holding = _holding(written, window)
            tasks, planned = _plan(written, window, push)
            rows.append(
                {
                    "window": window.label,
                    "where": window.where,
                    "push": push,
                    "rows": sum(v[0] for v in answer.values()),
                    "tasks": tasks,
                    "bytes": nbytes,
                    "holding_files": files,
                    "holding_bytes": holding,
                    "planning_bytes": planned,
                    "first": first,
                    "best": best,
                    "runs": runs,
                    "load": (load, os.getloadavg()[0]),
                }
            )
            say(
                f"  {window.label}, pushdown {'on' if push else 'off'}: {rows[-1]['rows']} rows, "
                f"{nbytes / MIB:.1f} MiB read (segments holding it {holding / MIB:.1f} MiB), "
                f"first {first:.2f} s, best {best:.2f} s"
            )
    return rows


def _plan(written: _Log, window: _Window, push: bool) -> tuple[int, int]:
    """The plan's tasks and what planning read, made in this process as the driver's Python
    makes it (the filters ``kafka_log`` is handed, for the ``WHERE`` of this window)."""
    from pyspark.sql.datasource import EqualTo, GreaterThanOrEqual, LessThan

    from kafka_format.spark_udfs._options import parse_options
    from kafka_format.spark_udfs._planning import Planner
    from kafka_format.spark_udfs._pushdown import translate

    filters: list = []
    if push and window.kind == "timestamp":
        lo, hi = (dt.datetime.fromtimestamp(t / 1000, dt.UTC) for t in (window.lo, window.hi))
        filters = [GreaterThanOrEqual(("timestamp",), lo), LessThan(("timestamp",), hi)]
    elif push and window.kind == "offset":
        filters = [GreaterThanOrEqual(("offset",), window.lo), LessThan(("offset",), window.hi)]
    elif push and window.kind == "none":
        filters = [EqualTo(("partition",), -1)]
    pushdown = translate(filters)[0] if filters else None
    planner = Planner(parse_options({"path": str(written.root), **dict(window.options)}), pushdown)
    splits = planner.plan()
    return max(len(splits), 1), planner.bytes_read  # Spark runs one empty task for none


# --- the section ------------------------------------------------------------------------------


def render(result: dict | str, machine: str) -> str:
    lines = [
        HEADING,
        "",
        "Issue 27, item 5: a one-hour window out of a multi-segment directory read with `WHERE` "
        "reads at most 2× the bytes of the segments that hold that hour, and takes time in "
        "proportion. `bench/pushdown.py`: one generated log directory, topic `events`, "
        "records at a steady rate with CreateTime rising with the offset but each record's up "
        f"to {LATE_MS // 1000} s early (timestamps run backwards by up to that), v2 batches of 100 "
        "records (a short key, a 100-byte value, one header), uncompressed, segments smaller "
        "than an hour of records, `.index` and `.timeindex` as a broker writes them. Each query "
        "is `groupBy('partition')` of rows, least and greatest offset (every row's offset, in "
        "effect), checked against the records written and, with pushdown, against the same "
        "query without (`pushFilters=false`). Read: `kafka_log`'s `bytes_read` accumulator (the "
        "byte windows its tasks read); the segments holding the window: the segment files with "
        "a record in it (each read with `read_table`); planning: what the driver's planner "
        "read of `.index`, `.timeindex` and headers for the same plan, made in process. "
        f"One session ({spark_bench.session_note()}); best of the runs after the first, after "
        f"an untimed full scan and an untimed `WHERE`. Time over Spark's fixed cost: "
        "the query's best less that of `partition = -1` (nothing to read: the job, the "
        "planning, one empty task), as a share of the full scan's; beside it, the bytes read "
        "as a share of the full scan's.",
        "",
    ]
    if isinstance(result, str):
        return "\n".join([*lines, f"- not measured: {result}"]) + "\n"
    info, rows = result["log"], result["rows"]
    shape = result["shape"]
    lines += [
        f"The log: {info['partitions']} partitions × {shape['hours']} hours × "
        f"{shape['per_hour']} records an hour = {info['records']} records, "
        f"{info['segments']} segment files, {info['bytes'] / MIB:.1f} MiB; a segment holds "
        f"{info['hours_per_segment']:.2f} hours of records on average "
        f"(at most {info['max_hours_per_segment']:.2f}).",
        "",
        "| query | pushdown | rows | tasks | read MiB | segments holding it: files, MiB "
        "| read / holding | planning KiB | first s | best s | (best − fixed) / full scan's "
        "| read / full scan's | load average |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    full = next(r for r in rows if r["window"] == FULL_SCAN)
    fixed = next(r for r in rows if r["window"] == NOTHING)["best"]
    span = full["best"] - fixed
    for r in rows:
        ratio = f"{r['bytes'] / r['holding_bytes']:.2f}×" if r["holding_bytes"] else ""
        time_share = f"{(r['best'] - fixed) / span:.2f}" if span > 0 else "n/a"
        push = "on (`pushFilters=true`)" if r["push"] else "off (`pushFilters=false`)"
        if r["window"] == FULL_SCAN:
            push = ""
        lines.append(
            f"| {r['window']} | {push} | {r['rows']} | {r['tasks']} | "
            f"{r['bytes'] / MIB:.1f} | {r['holding_files']}, {r['holding_bytes'] / MIB:.1f} | "
            f"{ratio} | {r['planning_bytes'] / 1024:.0f} | {r['first']:.2f} | "
            f"{r['best']:.2f} | {time_share} | {r['bytes'] / full['bytes']:.2f} | "
            f"{r['load'][0]:.2f} → {r['load'][1]:.2f} |"
        )
    lines += ["", *_verdict(rows, fixed, full), "", f"Machine: {machine}."]
    return "\n".join(lines) + "\n"


def _verdict(rows: list[dict], fixed: float, full: dict) -> list[str]:
    on = {r["window"]: r for r in rows if r["push"] and r["where"] and r["window"] != NOTHING}
    if not on:
        return []

    def ratio(r: dict) -> float:
        return r["bytes"] / r["holding_bytes"] if r["holding_bytes"] else float("nan")

    hours = [r for name, r in on.items() if "hour (" in name and not name.endswith(WORD)]
    worded = [r for name, r in on.items() if name.endswith(WORD)]
    met = [r for r in hours if ratio(r) <= 2]
    missed = [r for r in hours if ratio(r) > 2]
    listing = ", ".join(f"{r['window']} {ratio(r):.2f}×" for r in hours)
    out = []
    if missed:
        within = ", ".join(r["window"] for r in met) or "none of them"
        out.append(
            "- Target (at most 2× the bytes of the segments holding the hour) **not met** for "
            + ", ".join(r["window"] for r in missed)
            + f" ({listing}). Why: a `WHERE` on `timestamp` prunes by its lower bound only "
            "(`spark_udfs/_pushdown.py`): the read starts at the first record at or after it, "
            "found through `.timeindex`, and runs to the end of each partition's log, since a "
            "later record may be older (CreateTime can run backwards) and no batch header "
            "bounds its records' least timestamp. So the bytes read grow with the hours after "
            f"the window, whatever its own size; within 2×: {within}. What reaches it: a "
            "bound on how far timestamps run backwards, which only the user can give "
            "(`maxTimestampLatenessMs`, below; a topic's `message.timestamp.before.max.ms` "
            "plus `message.timestamp.after.max.ms`)."
        )
    else:
        out.append(
            f"- Target (at most 2× the bytes of the segments holding the hour) met: {listing}."
        )
    if worded:
        fits = all(ratio(r) <= 2 for r in worded)
        out.append(
            f"- With the option `maxTimestampLatenessMs={LATE_MS}` (this log's own bound) the "
            "upper bound prunes too, and the target is "
            + ("met" if fits else "**not met**")
            + ": "
            + ", ".join(f"{r['window'].removesuffix(WORD).strip()} {ratio(r):.2f}×" for r in worded)
            + ", with the same answers (checked)."
        )
    offsets = [r for name, r in on.items() if name.startswith("the middle hour's offsets")]
    extra = []
    if offsets:
        extra.append(f"by offsets it reads {ratio(offsets[0]):.2f}× (both bounds prune)")
    if extra:
        out.append("- The same hour " + "; ".join(extra) + ".")
    span = full["best"] - fixed
    if span > 0:
        parts = []
        for r in [*hours, *offsets, *worded]:
            parts.append(
                f"{r['window']}: {(r['best'] - fixed) / span:.2f} of the full scan's time over "
                f"the fixed cost for {r['bytes'] / full['bytes']:.2f} of its bytes"
            )
        out.append(
            f"- Time in proportion: Spark's fixed cost (`partition = -1`) is {fixed:.2f} s, the "
            f"full scan {full['best']:.2f} s; " + "; ".join(parts) + ". With pushdown the tasks "
            "hand Spark only the rows the `WHERE` keeps, so a read that keeps few of the rows "
            "it decodes can take less than its bytes' share; a read of a few segments pays "
            "Spark's cost per task on top of its bytes."
        )
    else:
        out.append(
            f"- Time in proportion: Spark's fixed cost (`partition = -1`) is {fixed:.2f} s and "
            f"the full scan {full['best']:.2f} s: the full scan is within the fixed cost here, "
            "so the reads' times say nothing of their bytes."
        )
    return out


if __name__ == "__main__":  # a look on its own: python bench/pushdown.py [--quick]
    print(render(run(Path(tempfile.gettempdir()), quick="--quick" in sys.argv), "this machine"))
