"""`make demo`: write a sample Kafka log directory, look at it with the command line, read it
with Spark (a batch read and a streaming query), and write Parquet to ./demo-out.

Everything runs on data this script generates (``kafka-format generate``), so it needs no
broker and no download.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "demo-out"
LOGS = OUT / "kafka-logs"


def step(title: str) -> None:
    print(f"\n=== {title} ===", flush=True)


def cli(*args: str, head: int | None = None, tail: int | None = None) -> None:
    """Run the kafka-format command as a user would, showing the command and its output
    (its first ``head`` or last ``tail`` lines)."""
    shown = " ".join(str(a) for a in args)
    print(f"$ kafka-format {shown}", flush=True)
    proc = subprocess.run(
        [sys.executable, "-m", "kafka_format", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    lines = proc.stdout.splitlines()
    if tail and len(lines) > tail:
        print(f"  … ({len(lines) - tail} lines before)")
        lines = lines[-tail:]
    for line in lines[:head] if head else lines:
        print(f"  {line[:160]}{'…' if len(line) > 160 else ''}")
    if head and len(lines) > head:
        print(f"  … ({len(lines) - head} more lines)")
    for line in proc.stderr.splitlines()[:5]:
        print(f"  [stderr] {line[:160]}")
    if proc.returncode not in (0, 1):
        raise SystemExit(f"kafka-format {shown} failed with status {proc.returncode}")


def main() -> int:
    started = time.monotonic()
    shutil.rmtree(OUT, ignore_errors=True)
    OUT.mkdir()

    step("1. A Kafka log directory, written as a broker writes it")
    cli("generate", LOGS, "--seed", "42")
    expected = json.loads((LOGS / "EXPECTED.json").read_text())
    for name, part in sorted(expected["partitions"].items()):
        print(
            f"  {name:<18} {part['records']:>5} records, {len(part['segments'])} segment(s), "
            f"{part['read_committed_records']:>5} visible to read_committed"
        )

    first_log = sorted((LOGS / "orders-0").glob("*.log"))[0]
    step("2. kafka-dump-log's view of a segment")
    cli("dump", "--deep-iteration", first_log, head=12)

    step("3. A range as JSON lines, kcat's -o/-c: each record says where it lies")
    cli(
        "dump",
        "--jsonl",
        "-o",
        "100",
        "-c",
        "3",
        "--isolation",
        "read_committed",
        LOGS / "orders-0",
    )

    step("4. The broker's look-up: offset 100 through .index, then a scan")
    cli("find", LOGS / "orders-0", "--offset", "100")

    step("5. Verify CRCs, indexes, transaction index, snapshots and where keys sit")
    cli("verify", LOGS, "--quiet", "--partitioner")

    step("6. Where the bytes go, and what v2 with each codec would take")
    cli("stats", LOGS, "--what-if")

    step("6b. Payloads: Avro, Protobuf and JSON Schema, through the cluster's own _schemas")
    cli("stats", LOGS, "--schemas", "--quiet", tail=12)
    cli("dump", "--jsonl", "-c", "2", "--value-decoder", "schema-registry", LOGS / "customers-0")
    cli(
        "dump", "--deep-iteration", "-o", "-2", "--value-decoder", "schema-registry",
        LOGS / "payments-0",
    )  # fmt: skip

    step("7. A crash: a page of zeros in orders-0, recovered as Kafka would and with --salvage")
    crash_demo()

    step("8. Spark: the kafka_log data source and SQL")
    spark_demo()

    print(f"\nDemo finished in {time.monotonic() - started:.0f} s; output in {OUT}")
    return 0


def crash_demo() -> None:
    """A damaged copy of the demo log: what the broker's recovery keeps, what salvage keeps."""
    crashed = OUT / "crashed-logs"
    shutil.copytree(LOGS, crashed)
    segment = sorted((crashed / "orders-0").glob("*.log"))[-1]
    data = bytearray(segment.read_bytes())
    middle = len(data) // 2
    data[middle : middle + 4096] = bytes(4096)  # a lost page, as a bad disk leaves it
    segment.write_bytes(bytes(data))
    print(f"  (4096 zero bytes written at {middle} of {segment.relative_to(OUT)})")
    cli("recover", "--quiet", crashed, OUT / "recovered-logs")
    cli("recover", "--salvage", "--quiet", crashed, OUT / "salvaged-logs")


def spark_demo() -> None:
    from kafka_format.spark_udfs import local_session, register

    spark = local_session("kafka-format demo", conf={"spark.ui.showConsoleProgress": "false"})
    spark.sparkContext.setLogLevel("ERROR")
    try:
        kafka = register(spark)
        df = spark.read.format("kafka_log").option("includeHeaders", "true").load(str(LOGS))
        print(f"schema: {df.schema.simpleString()}")
        df.selectExpr(
            "topic",
            "partition",
            "offset",
            "timestamp",
            "CAST(key AS STRING) AS key",
            "substring(CAST(value AS STRING), 1, 40) AS value",
            "size(headers) AS headers",
        ).show(5, truncate=False)

        print("records per topic and partition (DataFrame API):")
        df.groupBy("topic", "partition").count().orderBy("topic", "partition").show()

        df.createOrReplaceTempView("kafka")
        print("the same through SQL, with read_committed beside it:")
        committed = (
            spark.read.format("kafka_log")
            .option("isolationLevel", "read_committed")
            .load(str(LOGS))
        )
        committed.createOrReplaceTempView("kafka_committed")
        spark.sql(
            """
            SELECT a.topic, a.partition, a.n AS read_uncommitted, b.n AS read_committed
            FROM (SELECT topic, partition, count(*) AS n FROM kafka GROUP BY 1, 2) a
            JOIN (SELECT topic, partition, count(*) AS n FROM kafka_committed GROUP BY 1, 2) b
              USING (topic, partition)
            ORDER BY topic, partition
            """
        ).show()

        print("keyed records whose key hashes elsewhere (Java's default partitioner):")
        spark.sql(
            """
            SELECT topic, count(*) AS keyed,
                   count_if(kafka_partition(key, n) != partition) AS misplaced
            FROM kafka JOIN (SELECT topic, max(partition) + 1 AS n FROM kafka GROUP BY 1)
              USING (topic)
            WHERE key IS NOT NULL
            GROUP BY topic ORDER BY topic
            """
        ).show()

        where_demo(spark, kafka)
        payloads_demo(spark)

        target = OUT / "parquet"
        df.write.mode("overwrite").partitionBy("topic").parquet(str(target))
        back = spark.read.parquet(str(target)).count()
        print(f"wrote {back} records as Parquet to {target}")
        if kafka.bytes_read is not None:
            print(f"log bytes read by the kafka_log tasks: {kafka.bytes_read.value}")

        step("9. Spark streaming: readStream over a log that grows, restarted from its checkpoint")
        stream_demo(spark)
    finally:
        spark.stop()


def payloads_demo(spark) -> None:
    """value as a struct of payments-value's latest schema: older versions' records get the
    fields they lack from its defaults (Avro's schema resolution)."""
    print("payments' Avro values as a struct of the latest schema, v1 and v2 records included:")
    payments = (
        spark.read.format("kafka_log")
        .option("valueFormat", "avro")
        .option("mode", "PERMISSIVE")  # keep what is not framed, and say why
        .load(str(LOGS / "payments-*"))
    )
    payments.groupBy("value_schema_id").count().orderBy("value_schema_id").show()
    payments.where("_payload_error IS NULL").select("offset", "value.*").show(3, truncate=False)


def where_demo(spark, kafka) -> None:
    """A WHERE clause answered through the indexes, and a redacted copy written back."""
    first = spark.sql("SELECT topic, partition, max(offset) AS last FROM kafka GROUP BY 1, 2")
    busiest = first.orderBy("last", ascending=False).first()
    topic, partition, last = busiest["topic"], busiest["partition"], busiest["last"]
    lo, hi = last // 2, last // 2 + 100
    where = f"topic = '{topic}' AND partition = {partition} AND offset >= {lo} AND offset < {hi}"
    print(f'a WHERE window, pushed into the indexes: .where("{where}")')
    # A DataFrame for this one query: Spark 4.3 would hand its pushed-down read to later
    # queries of the same DataFrame (README, "WHERE clauses")
    window = spark.read.format("kafka_log").option("pushFilters", "true").load(str(LOGS))
    before = kafka.bytes_read.value if kafka.bytes_read is not None else None
    n = window.where(where).count()
    if before is not None:
        read = kafka.bytes_read.value - before
        total = sum(p.stat().st_size for p in LOGS.glob("*/*.log"))
        print(f"  {n} records; the tasks read {read:,} bytes of the {total:,} in the log dir")
    else:
        print(f"  {n} records")

    restored = OUT / "restored-logs"
    key = spark.sql(
        f"SELECT key FROM kafka WHERE topic = '{topic}' AND key IS NOT NULL LIMIT 1"
    ).first()["key"]
    print(f"written back without the key {bytes(key)!r} (a deletion request), as zstd:")
    # read_committed: an aborted transaction's records must not come back as plain records
    kept = (
        spark.read.format("kafka_log")
        .option("includeHeaders", "true")
        .option("isolationLevel", "read_committed")
        .load(str(LOGS))
    )
    (
        kept.where(~kept.key.eqNullSafe(bytes(key)))
        .write.format("kafka_log")
        .mode("overwrite")
        .option("compression", "zstd")
        .save(str(restored))
    )
    cli("verify", restored, tail=1)


def stream_demo(spark) -> None:
    """availableNow twice over the same checkpoint: the second run reads only what a
    producer appended in between (a live partition beside the generated ones)."""
    from kafka_format.runtime.write.writer import Message, PartitionWriter

    live = PartitionWriter(LOGS, "live", 0)
    checkpoint, sink = OUT / "stream-checkpoint", OUT / "stream"

    def run() -> None:
        query = (
            spark.readStream.format("kafka_log")
            .option("kafka.isolation.level", "read_committed")
            .load(str(LOGS))
            .writeStream.format("parquet")
            .option("path", str(sink))
            .option("checkpointLocation", str(checkpoint))
            .trigger(availableNow=True)
            .start()
        )
        query.awaitTermination()
        batches = [p for p in query.recentProgress if p["numInputRows"]]
        for p in batches:
            print(f"  micro-batch {p['batchId']}: {p['numInputRows']} records")
        if batches:
            print(f"  offsets now: {batches[-1]['sources'][0]['endOffset']}")
        print(f"  {spark.read.parquet(str(sink)).count()} records in {sink}")

    try:
        for i in range(3):
            live.append([Message(f"k{i}".encode(), f"event {i}".encode())])
        live._active.log.flush()  # what a broker has written, readers see
        print("first run: everything there when it starts (trigger availableNow):")
        run()
        for i in range(3, 5):
            live.append([Message(f"k{i}".encode(), f"event {i}".encode())])
    finally:
        live.close()
    print("a producer appended 2 records to live-0; the same query, restarted:")
    run()


if __name__ == "__main__":
    sys.exit(main())
