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

    .venv/bin/python bench/run.py --only parquet [--quick]
"""

from __future__ import annotations

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
QUICK = {"size": 4 * MIB, "segment": 1 * MIB, "runs": 1}
HEADING = "## Spark: `kafka_log` against Spark's Parquet reader"
KAFKA_LOG = "kafka_log (the segments)"
PARQUET = "parquet (Spark's copy of the same records)"


def run(workdir: Path, *, quick: bool, log: Callable[[str], None] | None = None) -> list[dict]:
    """Generate, write the Parquet copy, time both readers; rows for :func:`render`."""
    say = log or (lambda text: print(text, file=sys.stderr, flush=True))
    shape = QUICK if quick else FULL
    scratch = Path(tempfile.mkdtemp(prefix="kafka-format-parquet-", dir=workdir))
    session = None
    try:
        logs = scratch / "logs"
        generated = generate_log_dir(logs, size_bytes=shape["size"], segment_bytes=shape["segment"])
        expected = {(s.topic, s.partition): s.records for s in generated.partitions.values()}
        size = sum(p.stat().st_size for p in logs.glob("*/*.log"))
        say(f"parquet: {sum(expected.values())} records, {size / MIB:.1f} MiB of segments")
        from kafka_format.spark_udfs import local_session, register

        session = local_session(
            "kafka-format bench parquet", cores=spark_bench.CORES, conf=spark_bench.SESSION_CONF
        )
        session.sparkContext.setLogLevel("ERROR")
        register(session)
        parquet_dir = scratch / "parquet"
        started = time.perf_counter()
        session.read.format("kafka_log").load(str(logs)).write.parquet(str(parquet_dir))
        say(f"  written as Parquet by Spark in {time.perf_counter() - started:.1f} s")
        pq_size = sum(p.stat().st_size for p in parquet_dir.glob("*.parquet"))
        frames = {
            KAFKA_LOG: (lambda: session.read.format("kafka_log").load(str(logs)), size),
            PARQUET: (lambda: session.read.parquet(str(parquet_dir)), pq_size),
        }
        rows = []
        for query in ("count", "group-by"):
            for reader, (frame, nbytes) in frames.items():
                load = os.getloadavg()[0]
                answer, first, best = _timed(_query(frame, query), shape["runs"])
                want = expected if query == "group-by" else sum(expected.values())
                if answer != want:
                    raise RuntimeError(f"{reader}, {query}: got {answer!r}, expected {want!r}")
                rows.append(
                    {
                        "reader": reader,
                        "query": query,
                        "records": sum(expected.values()),
                        "bytes": nbytes,
                        "first": first,
                        "best": best,
                        "runs": shape["runs"],
                        "load": (load, os.getloadavg()[0]),
                    }
                )
                say(f"  {reader}, {query}: first {first:.2f} s, best {best:.2f} s")
        return rows
    finally:
        if session is not None:
            session.stop()
        shutil.rmtree(scratch, ignore_errors=True)


def _query(frame: Callable[[], Any], query: str) -> Callable[[], Any]:
    if query == "count":
        return lambda: frame().count()
    return lambda: {
        (r[0], r[1]): int(r[2]) for r in frame().groupBy("topic", "partition").count().collect()
    }


def _timed(fn: Callable[[], Any], runs: int) -> tuple[Any, float, float]:
    started = time.perf_counter()
    answer = fn()
    first = best = time.perf_counter() - started
    if runs:
        best = float("inf")
        for _ in range(runs):
            started = time.perf_counter()
            if fn() != answer:
                raise RuntimeError("the same query gave two answers")
            best = min(best, time.perf_counter() - started)
    return answer, first, best


def render(rows: list[dict] | str, machine: str) -> str:
    lines = [
        HEADING,
        "",
        "The same records read from the Kafka segments by `kafka_log` and from a Parquet copy "
        "Spark wrote of them (snappy, all columns), in one session "
        f"({spark_bench.session_note()}). Parquet's `count()` reads only footers; `kafka_log` "
        "walks, CRC-checks and decodes every batch for either query. Best of the runs after "
        "the first; answers checked against the records the generator wrote. Goal: "
        "`kafka_log` at least half Parquet's speed.",
        "",
    ]
    if isinstance(rows, str):
        return "\n".join([*lines, f"- not measured: {rows}"]) + "\n"
    lines += [
        "| reader | query | records | bytes read from | first run s | best s | records/s "
        "| kafka_log / parquet | load average |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    by = {(r["reader"], r["query"]): r for r in rows}
    for r in rows:
        ratio = ""
        if r["reader"] == KAFKA_LOG and (PARQUET, r["query"]) in by:
            ratio = f"{by[(PARQUET, r['query'])]['best'] / r['best']:.2f}"
        lines.append(
            f"| {r['reader']} | {r['query']} | {r['records']} | {r['bytes'] / MIB:.1f} MiB | "
            f"{r['first']:.2f} | {r['best']:.2f} | {r['records'] / r['best'] / 1e6:.3f} M | "
            f"{ratio} | {r['load'][0]:.2f} → {r['load'][1]:.2f} |"
        )
    return "\n".join([*lines, "", f"Machine: {machine}."]) + "\n"
