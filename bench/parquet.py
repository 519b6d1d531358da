"""``kafka_log`` against Spark's own Parquet reader over the same records (issue 18).

One generated log directory (topic ``bench``, two partitions, v2 batches of 1000 records, a
short key, a 100-byte value, one header) is read by ``kafka_log`` and written once, by Spark,
as Parquet (Spark's defaults: snappy, every column ``kafka_log`` gives). Then, in the same
local session, both answer ``count()`` and ``groupBy("topic", "partition").count()``; every
answer is checked against the records the generator wrote. The first run of each query is
reported apart; then the best of ``runs`` more. Goal: ``kafka_log`` at least half Parquet's
speed.

Parquet's ``count()`` needs no column at all (row counts are in its footers), and its
group-by reads two dictionary-encoded columns; ``kafka_log`` walks, CRC-checks and decodes
every batch either way. That is the comparison a user makes: the same question, asked of the
segments as they are or of a copy made for Spark.

To say what part of the distance is ours, the same session also times the floor of any
Python data source (``pyfloor.py``: ready Arrow batches of ``kafka_log``'s shape, the same
tasks and rows, nothing decoded), both readers with a ``topic, partition`` schema (PySpark
4.3 prunes no column of a Python data source, so ``count()`` otherwise gets them all), and
the tasks' own code, ``read_split`` over the same splits, in this process without Spark.
Each query's CPU seconds (Spark's JVM, its Python processes) are read from /proc: on the
shared cores they say more than wall times.

    .venv/bin/python bench/run.py --only parquet [--quick]
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import spark as spark_bench

from kafka_format.runtime.write.generate import generate_log_dir

MIB = 1 << 20
FULL = {"size": 512 * MIB, "segment": 64 * MIB, "runs": 3}
#: Untimed queries before the timed ones (the JVM's JIT).
WARMUP = 4
QUICK = {"size": 4 * MIB, "segment": 1 * MIB, "runs": 1}
HEADING = "## Spark: `kafka_log` against Spark's Parquet reader"
KAFKA_LOG = "kafka_log (the segments)"
KAFKA_LOG_NARROW = "kafka_log, schema `topic string, partition int`"
PARQUET = "parquet (Spark's copy of the same records)"
FLOOR = "floor: a Python data source yielding ready Arrow batches"
FLOOR_NARROW = "floor, schema `topic string, partition int`"
DECODE = "kafka_log's task code alone (`read_split`, one Python process, no Spark)"
DECODE_NARROW = "the same, schema `topic string, partition int`"
NARROW_SCHEMA = "topic string, partition int"
#: ``kafka_log``'s default columns (no ``headers``), for the floor's schema.
KAFKA_SCHEMA_DDL_NO_HEADERS = (
    "key binary, value binary, topic string, partition int, offset bigint, "
    "timestamp timestamp, timestampType int"
)


def run(workdir: Path, *, quick: bool, log: Callable[[str], None] | None = None) -> list[dict]:
    """Generate, write the Parquet copy, time every reader; rows for :func:`render`."""
    say = log or (lambda text: print(text, file=sys.stderr, flush=True))
    shape = QUICK if quick else FULL
    scratch = Path(tempfile.mkdtemp(prefix="kafka-format-parquet-", dir=workdir))
    session = None
    try:
        logs = scratch / "logs"
        generated = generate_log_dir(logs, size_bytes=shape["size"], segment_bytes=shape["segment"])
        expected = {(s.topic, s.partition): s.records for s in generated.partitions.values()}
        total = sum(expected.values())
        size = sum(p.stat().st_size for p in logs.glob("*/*.log"))
        say(f"parquet: {total} records, {size / MIB:.1f} MiB of segments")
        rows, parts = _decode_alone(logs, expected, size, shape["runs"], say)
        import pyfloor
        from pyspark import cloudpickle

        from kafka_format.spark_udfs import local_session, register

        session = local_session(
            "kafka-format bench parquet", cores=spark_bench.CORES, conf=spark_bench.SESSION_CONF
        )
        session.sparkContext.setLogLevel("ERROR")
        register(session)
        # The floor's module is not importable in the workers: its classes travel by value.
        cloudpickle.register_pickle_by_value(pyfloor)
        session.dataSource.register(pyfloor.FloorSource)
        parts_json = json.dumps(parts)
        sample = _process_cpu(session.sparkContext._gateway.proc.pid)

        def floor(ddl: str) -> Any:
            reader = session.read.format(pyfloor.NAME).option("schema", ddl)
            return reader.option("parts", parts_json).load()

        def measure(frames: dict[str, tuple[Callable[[], Any], int]]) -> None:
            for query in ("count", "group-by"):
                for reader, (frame, nbytes) in frames.items():
                    load = os.getloadavg()[0]
                    answer, first, best, cpu = _timed(_query(frame, query), shape["runs"], sample)
                    want = expected if query == "group-by" else total
                    if answer != want:
                        raise RuntimeError(f"{reader}, {query}: got {answer!r}, expected {want!r}")
                    row = _row(reader, query, total, nbytes, first, best, shape["runs"], load)
                    rows.append(row | {"cpu": cpu})
                    say(f"  {reader}, {query}: first {first:.2f} s, best {best:.2f} s")

        # The JVM compiles the Arrow-to-row path over the first queries (measured: the first
        # queries of a session cost it twice the CPU); warm it up with the floor, which loads
        # nothing of kafka_format into the workers, so that no reader pays for it.
        for _ in range(WARMUP):
            _query(lambda: floor(KAFKA_SCHEMA_DDL_NO_HEADERS), "group-by")()
        # The floor first, while the Python workers have imported nothing of kafka_format
        # (its numba kernels make a heavier worker: measured, the same floor queries cost
        # more worker CPU after kafka_log ran in those workers).
        measure(
            {
                FLOOR: (lambda: floor(KAFKA_SCHEMA_DDL_NO_HEADERS), 0),
                FLOOR_NARROW: (lambda: floor(NARROW_SCHEMA), 0),
            }
        )
        parquet_dir = scratch / "parquet"
        started = time.perf_counter()
        session.read.format("kafka_log").load(str(logs)).write.parquet(str(parquet_dir))
        say(f"  written as Parquet by Spark in {time.perf_counter() - started:.1f} s")
        pq_size = sum(p.stat().st_size for p in parquet_dir.glob("*.parquet"))
        measure(
            {
                KAFKA_LOG: (lambda: session.read.format("kafka_log").load(str(logs)), size),
                KAFKA_LOG_NARROW: (
                    lambda: session.read.format("kafka_log").schema(NARROW_SCHEMA).load(str(logs)),
                    size,
                ),
                PARQUET: (lambda: session.read.parquet(str(parquet_dir)), pq_size),
            }
        )
        order = [DECODE, DECODE_NARROW, KAFKA_LOG, KAFKA_LOG_NARROW, FLOOR, FLOOR_NARROW, PARQUET]
        queries = ["decode", "count", "group-by"]
        rows.sort(key=lambda r: (queries.index(r["query"]), order.index(r["reader"])))
        return rows
    finally:
        if session is not None:
            session.stop()
        shutil.rmtree(scratch, ignore_errors=True)


def _row(
    reader: str,
    query: str,
    records: int,
    nbytes: int,
    first: float,
    best: float,
    runs: int,
    load: float,
) -> dict:
    return {
        "reader": reader,
        "query": query,
        "records": records,
        "bytes": nbytes,
        "first": first,
        "best": best,
        "runs": runs,
        "load": (load, os.getloadavg()[0]),
    }


def _decode_alone(
    logs: Path, expected: dict, size: int, runs: int, say: Callable[[str], None]
) -> tuple[list[dict], list[list]]:
    """What the tasks' Python does without Spark: ``read_split`` over the very splits
    ``kafka_log`` plans, one after the other in this process (the rows for both schemas);
    and the floor's partitions (topic, partition, rows of each task)."""
    from pyspark.sql.types import IntegerType, StringType, StructField, StructType

    from kafka_format.spark_udfs._options import parse_options
    from kafka_format.spark_udfs._planning import PackedSplits, plan, tasks
    from kafka_format.spark_udfs._reading import Counters, read_split, read_splits
    from kafka_format.spark_udfs.datasource import kafka_schema, output_for

    options = parse_options({"path": str(logs)})
    # the tasks Spark runs: small splits of a partition packed into one (_planning.tasks)
    splits = [
        t.splits if isinstance(t, PackedSplits) else (t,) for t in tasks(plan(options), options)
    ]
    # NARROW_SCHEMA as a StructType (parsing DDL needs a session; this runs before one).
    narrow = StructType(
        [StructField("topic", StringType()), StructField("partition", IntegerType())]
    )
    rows: list[dict] = []
    parts: list[list] = []
    for label, schema in ((DECODE, kafka_schema()), (DECODE_NARROW, narrow)):
        output = output_for(schema, options)

        def decode(output: Any = output) -> list[int]:
            # as a task reads: a packed task's splits as one read (read_splits)
            return [
                sum(
                    b.num_rows
                    for b in (
                        read_splits(task, options, output, Counters())
                        if len(task) > 1
                        else read_split(task[0], options, output, Counters())
                    )
                )
                for task in splits
            ]

        load = os.getloadavg()[0]
        counts, first, best, cpu = _timed(decode, runs)
        if sum(counts) != sum(expected.values()):
            raise RuntimeError(f"{label}: {sum(counts)} records, expected {sum(expected.values())}")
        parts = [[t[0].topic, t[0].partition, n] for t, n in zip(splits, counts, strict=True)]
        row = _row(label, "decode", sum(counts), size, first, best, runs, load)
        rows.append(row | {"cpu": (None, cpu[1])})
        say(f"  {label}: first {first:.2f} s, best {best:.2f} s ({len(splits)} tasks)")
    return rows, parts


def _query(frame: Callable[[], Any], query: str) -> Callable[[], Any]:
    if query == "count":
        return lambda: frame().count()
    return lambda: {
        (r[0], r[1]): int(r[2]) for r in frame().groupBy("topic", "partition").count().collect()
    }


def _timed(
    fn: Callable[[], Any], runs: int, cpu: Callable[[], tuple[float, float]] | None = None
) -> tuple[Any, float, float, tuple[float, float]]:
    """The answer, the first run's seconds, the best of ``runs`` more, and the least CPU
    seconds (``cpu()``'s two counters) any of those runs took."""
    cpu = cpu or (lambda: (0.0, time.process_time()))
    started = time.perf_counter()
    answer = fn()
    first = best = time.perf_counter() - started
    spent = (float("inf"), float("inf"))
    best = float("inf") if runs else first
    for _ in range(max(runs, 1)):  # with no runs, one more for the CPU (its time not kept)
        before = cpu()
        started = time.perf_counter()
        if fn() != answer:
            raise RuntimeError("the same query gave two answers")
        if runs:
            best = min(best, time.perf_counter() - started)
        after = cpu()
        spent = tuple(min(s, a - b) for s, a, b in zip(spent, after, before, strict=True))
    return answer, first, best, spent


def _process_cpu(root: int) -> Callable[[], tuple[float, float]]:
    """CPU seconds so far of process ``root`` (Spark's JVM) and of its descendants (the
    Python workers), from /proc: on a machine the other benchmarks share, what a query
    cost in CPU says more than how long it waited for a core. Zeros without /proc."""
    tick = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100

    def sample() -> tuple[float, float]:
        parents: dict[int, int] = {}
        spent: dict[int, float] = {}
        for entry in Path("/proc").glob("[0-9]*/stat"):
            try:
                raw = entry.read_text()
            except OSError:
                continue
            fields = raw[raw.rindex(")") + 2 :].split()  # after "pid (comm) "
            pid = int(entry.parent.name)
            parents[pid] = int(fields[1])
            spent[pid] = (int(fields[11]) + int(fields[12])) / tick  # utime + stime
        children: dict[int, list[int]] = {}
        for pid, parent in parents.items():
            children.setdefault(parent, []).append(pid)
        workers, stack = 0.0, list(children.get(root, []))
        while stack:
            pid = stack.pop()
            workers += spent.get(pid, 0.0)
            stack += children.get(pid, [])
        return spent.get(root, 0.0), workers

    return sample


def render(rows: list[dict] | str, machine: str) -> str:
    lines = [
        HEADING,
        "",
        "The same records read from the Kafka segments by `kafka_log` and from a Parquet copy "
        "Spark wrote of them (snappy, all columns), in one session "
        f"({spark_bench.session_note()}). Parquet's `count()` reads only footers; `kafka_log` "
        "walks, CRC-checks and decodes every batch for either query. The floor is a Python "
        "data source (`bench/pyfloor.py`) that decodes nothing: its tasks (as many as "
        "`kafka_log`'s, with the same rows) yield slices of one ready Arrow batch of "
        "`kafka_log`'s shape (152 bytes a row), so its time is what Spark's Python data source "
        "machinery costs for these rows, whatever the source. PySpark 4.3 prunes no column for "
        "a Python data source (`PythonScanBuilder` implements `SupportsPushDownFilters` only), "
        "so `count()` gets every column of the schema; a narrower `.schema(...)` is how a "
        "query asks for fewer. The decode rows run the tasks' own code (`read_split` over the "
        "same splits) in one Python process without Spark, one split after another. Best of "
        "the runs after the first; the CPU columns: the least CPU seconds over those runs of "
        "Spark's JVM and of the Python processes it started (workers and planners), or of "
        "this process for the decode rows; the floor runs first, after untimed warm-up "
        "queries, before any worker imports kafka_format; answers checked against the "
        "records the generator wrote. "
        "Goal: `kafka_log` at least half Parquet's speed.",
        "",
    ]
    if isinstance(rows, str):
        return "\n".join([*lines, f"- not measured: {rows}"]) + "\n"
    lines += [
        "| reader | query | records | bytes read from | first run s | best s | records/s "
        "| parquet s / this s | CPU s: JVM | CPU s: Python | load average |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    by = {(r["reader"], r["query"]): r for r in rows}
    for r in rows:
        ratio = ""
        if r["reader"] != PARQUET and (PARQUET, r["query"]) in by:
            ratio = f"{by[(PARQUET, r['query'])]['best'] / r['best']:.2f}"
        nbytes = f"{r['bytes'] / MIB:.1f} MiB" if r["bytes"] else "(built in memory)"
        jvm, python = r.get("cpu", (None, None))
        lines.append(
            f"| {r['reader']} | {r['query']} | {r['records']} | {nbytes} | "
            f"{r['first']:.2f} | {r['best']:.2f} | {r['records'] / r['best'] / 1e6:.3f} M | "
            f"{ratio} | {_seconds(jvm)} | {_seconds(python)} | "
            f"{r['load'][0]:.2f} → {r['load'][1]:.2f} |"
        )
    lines += ["", *_shares(by)]
    return "\n".join([*lines, "", f"Machine: {machine}."]) + "\n"


def _seconds(value: float | None) -> str:
    return "" if value is None else f"{value:.2f}"


def _shares(by: dict) -> list[str]:
    """The distance to Parquet, split into Spark's Python data source part and ours."""
    out = []
    for query in ("count", "group-by"):
        need = (PARQUET, KAFKA_LOG, FLOOR, KAFKA_LOG_NARROW, FLOOR_NARROW)
        if not all((name, query) in by for name in need):
            continue
        t = {name: by[(name, query)]["best"] for name in need}
        cpu = {name: sum(by[(name, query)]["cpu"]) for name in need}
        for ours, floor, label in (
            (KAFKA_LOG, FLOOR, "the default schema"),
            (KAFKA_LOG_NARROW, FLOOR_NARROW, "schema `topic, partition`"),
        ):
            out.append(
                f"- {query}, {label}: Parquet {t[PARQUET]:.2f} s ({cpu[PARQUET]:.2f} CPU s); "
                f"the floor {t[floor]:.2f} s ({cpu[floor]:.2f} CPU s), "
                f"{t[PARQUET] / t[floor]:.2f}x Parquet's speed: Spark's Python data source "
                f"machinery alone; `kafka_log` {t[ours]:.2f} s ({cpu[ours]:.2f} CPU s), "
                f"{t[PARQUET] / t[ours]:.2f}x. Ours over the floor (walking, CRC-checking, "
                f"decoding): {cpu[ours] - cpu[floor]:+.2f} CPU s, {t[ours] - t[floor]:+.2f} s "
                "of wall time (on the shared cores wall times move by more than the work)."
            )
    over, narrow = [], []
    for query in ("count", "group-by"):
        for ours, floor, into in (
            (KAFKA_LOG, FLOOR, over),
            (KAFKA_LOG_NARROW, FLOOR_NARROW, narrow),
        ):
            if (ours, query) in by and (floor, query) in by:
                mine, base = by[(ours, query)]["best"], by[(floor, query)]["best"]
                into.append((query, (mine - base) / mine, mine))
    if over:
        # The queries: count and group-by as a user writes them, the source's schema.
        missed = [name for name, share, _ in over if share > 0.10]
        out.append(
            "- Target (issue 27: `kafka_log`'s own cost over the floor at most 10% of its wall "
            "time, for count and group-by): "
            + ", ".join(f"{name} {share:+.0%}" for name, share, _ in over)
            + (f"; not met for {', '.join(missed)}." if missed else "; met.")
        )
    if narrow and (DECODE_NARROW, "decode") in by:
        # With two columns the floor does next to nothing: what is left is the decode itself.
        cpu = by[(DECODE_NARROW, "decode")]["cpu"]  # (JVM: none here, this process)
        alone = sum(c for c in cpu if c is not None) / spark_bench.CORES
        out.append(
            "- With the schema `topic, partition` (not the issue's queries; the floor hands Spark "
            "two constant columns): "
            + ", ".join(f"{name} {share:+.0%}" for name, share, _ in narrow)
            + f". The read's own decode of the same splits without Spark ({alone:.2f} s of "
            f"wall on {spark_bench.CORES} cores: every batch walked, CRC-checked and "
            "decoded) is "
            + ", ".join(f"{alone / mine:.0%} of the {name}'s wall time" for name, _, mine in narrow)
            + (
                ": the tasks decode while the JVM turns the rows before into Spark's, so the "
                "decode shows in the wall time only where it is the longer of the two."
            )
        )
    floors = [(f, q) for f in (FLOOR, FLOOR_NARROW) for q in ("count", "group-by")]
    if all(key in by for key in [*floors, (KAFKA_LOG, "count"), (DECODE, "decode")]) and all(
        (PARQUET, q) in by for q in ("count", "group-by")
    ):
        floor = by[(FLOOR, "count")]
        best_floor = max(by[(PARQUET, q)]["best"] / by[(f, q)]["best"] for f, q in floors)
        ours, alone = by[(KAFKA_LOG, "count")], by[(DECODE, "decode")]
        out.append(
            f"- In the Python workers `kafka_log` spends {ours['cpu'][1]:.2f} CPU s where "
            f"the floor spends {floor['cpu'][1]:.2f}; its own decode of the same splits, "
            f"without Spark, takes {alone['cpu'][1]:.2f} CPU s. PySpark's daemon runs "
            "`gc.collect()` after every task of a reused worker (`pyspark/daemon.py`), and "
            "this package's imports (numba, llvmlite) more than double the objects it walks: "
            "the tasks `gc.freeze()` them once per worker (`spark_udfs/_reading.py`, "
            "`_settle_worker`), which took `kafka_log`'s worker CPU for a count from about "
            "1.2 s to the floor's. The floor's workers run first and are not frozen: a floor "
            "whose workers were would be cheaper still, by that collection a task."
        )
        if best_floor < 0.5:
            out.append(
                "- The goal (half Parquet's speed) is out of reach for any Python data source "
                "in PySpark 4.3 on this machine: one that decodes nothing reaches at most "
                f"{best_floor:.2f}x of Parquet's speed here, because every row crosses from the "
                "Python worker to the JVM as Arrow and is turned into a row there, every "
                "column of the schema, while Parquet's `count()` reads row counts from its "
                "footers and its group-by two dictionary-encoded columns. A narrower "
                '`.schema("topic string, partition int")` is what a count or a group-by '
                "can do about it."
            )
    return out
