"""``bench/run.py --quick``: the benchmark runs end to end on tiny inputs and writes its table.

Numbers are not checked (tiny inputs measure overheads, not speed); what is checked: every
case and reader is in the table, every reader read every record (the run fails otherwise),
and the memory test streamed its segment in a subprocess. The Spark comparison
(bench/spark.py) runs in the test session's shared SparkSession rather than in the
subprocess, which would start a JVM of its own: every pipeline answers both queries on a
tiny generated log directory, checked against the records written (the run fails
otherwise), and its rows render into the table.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parent.parent
BENCH = REPO / "bench"


def _bench_module(name: str):
    """A module of bench/ (not a package), under a name of its own."""
    if str(BENCH) not in sys.path:
        sys.path.insert(0, str(BENCH))  # run.py imports its siblings by their names
    qualified = f"kafka_format_bench_{Path(name).stem}"
    if qualified in sys.modules:
        return sys.modules[qualified]
    spec = importlib.util.spec_from_file_location(qualified, BENCH / name)
    module = importlib.util.module_from_spec(spec)
    sys.modules[qualified] = module  # dataclasses look their module up while it loads
    spec.loader.exec_module(module)
    return module


def test_quick_bench_writes_its_table(tmp_path):
    out = tmp_path / "results.md"
    done = subprocess.run(
        [sys.executable, str(BENCH / "run.py"), "--quick", "--no-spark", "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    text = out.read_text()
    assert text.strip() in done.stdout
    assert "Machine:" in text and "cores" in text
    for case in ("v2 none", "v2 gzip", "v2 snappy", "v2 lz4", "v2 zstd", "v1 gzip", "v0 none"):
        for reader in ("ours", "kafka-python", "aiokafka"):
            assert f"| {case} | {reader} |" in text
    assert "| v2 zstd |" in text.split("bare decompression s")[1]
    assert "peak RSS" in text
    memory = text.split("## Memory: the floor")[1]
    assert "the data's share" in memory and "With `low_memory=True`" in memory
    for codec in ("gzip", "snappy", "lz4", "zstd"):  # each bomb stopped, the batch after read
        assert f"| {codec} |" in memory
    assert "## Uncompressed v2 against memcpy" in text
    section = text.split("## Compressed batches on one thread against the codec alone")[1]
    section = section.split("\n## ")[0]  # that section only
    for case in ("v2 gzip", "v2 snappy", "v2 lz4", "v2 zstd", "v1 gzip", "v0 lz4"):
        # The timings, where the time goes, and for gzip and zstd the Python path against now.
        assert section.count(f"| {case} |") == (3 if "gzip" in case or "zstd" in case else 2)
    assert "| v2 none (CRC-32C) |" in section
    assert "not measured: skipped (`--no-spark`)" in text
    assert "| log | records | read_table s | verify s | verify / read_table |" in text
    scaling = text.split("## Scaling with threads")[1]
    for case in ("v2 none", "v2 gzip", "v2 snappy", "v2 lz4", "v2 zstd"):
        assert f"| {case} | 1 |" in scaling  # each codec at one thread, then more
    assert "Target met by" in scaling
    assert "| **the anchor**: map the file anew" in text  # uncompressed v2 against memcpy
    assert "| `read_table(binary_view=True)`, 2 threads |" in text
    assert "verify found errors" not in done.stderr  # the generated log is clean
    assert "read 0 records" not in done.stderr
    assert "expected" not in done.stderr  # every reader read every record it was given


def test_quick_spark_comparison(tmp_path, spark):
    bench_spark = _bench_module("spark.py")
    rows = bench_spark.run(tmp_path, quick=True, spark=spark, log=lambda text: None)
    assert list(tmp_path.iterdir()) == []  # the generated log directory is gone
    pipelines = {
        bench_spark.KAFKA_LOG,
        bench_spark.KAFKA_LOG_NARROW,
        bench_spark.UDF_RECORDS,
        bench_spark.UDF_COUNTS,
    }
    # Quick: the group-by alone (its answer, per partition, is checked inside run).
    assert {(r["pipeline"], r["query"], r["subset"]) for r in rows} == {
        (bench_spark.KAFKA_LOG, "group-by", False),
        (bench_spark.KAFKA_LOG, "group-by", True),
        (bench_spark.KAFKA_LOG_NARROW, "group-by", False),
        (bench_spark.UDF_RECORDS, "group-by", True),
        (bench_spark.UDF_COUNTS, "group-by", True),
    }
    assert {r["pipeline"] for r in rows} == pipelines
    whole = {r["records"] for r in rows if not r["subset"]}
    part = {r["records"] for r in rows if r["subset"]}
    assert len(whole) == 1 and len(part) == 1 and 0 < part.pop() < whole.pop()
    assert all(0 < r["seconds"] <= r["first_seconds"] or r["runs"] for r in rows)

    lines = _bench_module("run.py").render_spark(rows)
    table = "\n".join(lines)
    assert table.count("\n| ") == len(rows) + 1  # header and one line a row
    assert "group-by" in table.split("(target >= 3 M)")[0].split("Targets")[1]
    assert "(target >= 20×)" in table
    for pipeline in pipelines:
        assert f"| {pipeline} |" in table


def test_quick_pushdown_section(tmp_path, spark):
    """bench/pushdown.py at its smallest: every query answers as the records written say (run
    checks it, with and without pushdown), the bytes it reports add up, and the section
    renders with its table and verdict."""
    pushdown = _bench_module("pushdown.py")
    result = pushdown.run(tmp_path, quick=True, spark=spark, log=lambda text: None)
    assert list(tmp_path.iterdir()) == []  # the generated log directory is gone
    rows = result["rows"]
    by = {(r["window"], r["push"]): r for r in rows}
    full = by[(pushdown.FULL_SCAN, True)]
    assert full["bytes"] == full["holding_bytes"] == result["log"]["bytes"] > 0
    assert full["rows"] == result["log"]["records"]
    assert by[(pushdown.NOTHING, True)]["rows"] == by[(pushdown.NOTHING, True)]["bytes"] == 0
    windows = [r for r in rows if r["where"] and r["window"] != pushdown.NOTHING]
    # three hours and the offsets, on and off; two hours on the lateness word, on
    assert len(windows) == 10
    hour = result["shape"]["per_hour"] * result["shape"]["partitions"]
    for r in windows:
        # the hour's records: by offset exactly; by timestamp as the early ones shift its edges
        if r["window"].startswith("the middle hour's"):
            assert r["rows"] == hour
        else:
            assert abs(r["rows"] - hour) <= hour // 10
        assert 0 < r["holding_bytes"] < full["bytes"]
        assert 0 < r["bytes"] <= full["bytes"]
        if not r["push"]:
            assert r["bytes"] == full["bytes"]  # without pushdown everything is read
    last = [r for r in windows if r["push"] and r["window"].startswith("last hour")]
    offsets = [r for r in windows if r["push"] and r["window"].startswith("the middle hour's")]
    assert last[0]["bytes"] <= 2 * last[0]["holding_bytes"]
    assert offsets[0]["bytes"] <= offsets[0]["holding_bytes"]
    worded = [r for r in windows if r["window"].endswith(pushdown.WORD)]
    assert len(worded) == 2
    first = by[(worded[0]["window"].removesuffix(pushdown.WORD).strip(), True)]
    assert worded[0]["rows"] == first["rows"] and worded[0]["bytes"] < first["bytes"]
    for r in worded:
        assert r["bytes"] <= 2 * r["holding_bytes"]

    text = pushdown.render(result, "a test machine")
    assert text.startswith(pushdown.HEADING + "\n")
    assert text.count("\n| ") == len(rows) + 1  # header and one line a row
    assert "Target (at most 2× the bytes of the segments holding the hour)" in text
    assert "Time in proportion" in text and "Machine: a test machine." in text
    assert "not measured: skipped" in pushdown.render("skipped", "m")


def test_small_batches_section(tmp_path):
    small = _bench_module("small.py")
    result = small.run(
        lambda text: None,
        quick=True,
        per_batch=(1, 10),
        records=200,
        peer_records=50,
        repeat=1,
        peer_repeat=1,
        generate_records=20,
        workdir=tmp_path,
    )
    assert list(tmp_path.iterdir()) == []  # the generated log directory is gone
    text = small.render(result, "a test machine")
    assert text.startswith(small.HEADING + "\n")
    rows = [line.split(" | ") for line in text.splitlines() if line.startswith(("| 1 |", "| 10 |"))]
    assert len(rows) == 2 * len(small.CASES)  # a row per case
    for writer, codec in small.CASES:
        name = f"{writer} {small.inputs.CODEC_NAMES[codec]}"
        assert sum(row[1].startswith(name) for row in rows) == 2, name
    for row in rows:
        # batches, ours µs a batch and M records/s, aiokafka's and kafka-python's µs: numbers
        for cell in (row[3], row[4], row[5], row[8], row[10]):
            float(cell.replace(",", ""))
        assert row[9].endswith("×") and row[11].rstrip(" |").endswith("×")
        compressed = "none" not in row[2]
        assert bool(row[6].strip()) == compressed and bool(row[7].strip()) == compressed
    assert "Target: at 1 and 10 records a batch every codec ≥ 3× aiokafka." in text
    table = text.split("| segments | files | MB of log |")[1].splitlines()[2:5]
    assert len(table) == 3  # the default's 32 KiB segments, 2 MiB ones, many partitions
    for line in table:
        generated = line.split(" | ")
        assert int(generated[4].replace(",", "")) > 0 and float(generated[9]) > 0
    assert "Machine: a test machine." in text

    # bench/run.py --only small puts the section in place of its old one, or appends it.
    splice = _bench_module("run.py").splice_section
    old = (
        f"# Benchmarks\n\n## Before\n\nkept\n\n{small.HEADING}\n\nthe old section\n\n"
        "## After\n\nkept too\n"
    )
    spliced = splice(old, small.HEADING, text)
    assert "the old section" not in spliced and spliced.count(small.HEADING) == 1
    assert "## Before\n\nkept\n" in spliced and spliced.endswith("## After\n\nkept too\n")
    assert splice("# Benchmarks\n", small.HEADING, text).endswith(text)
