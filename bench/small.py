"""Small batches: the per-batch cost of every codec in each client's framing (issue 24).

Real logs are mostly small batches: a producer with ``linger.ms=0`` sends a batch a record.
For 1, 10, 100 and 1000 records a batch (quick: 1 and 10), every codec as each client frames
it, as one byte string of one batch repeated with rising base offsets (``inputs.repeat_batch``;
the offset lies outside the CRC), about ``records`` records a case:

- Java producer (Kafka's clients; ``inputs.record_set``, our writer's ``codecs.compress``):
  none, gzip, snappy in xerial framing, LZ4 frames with FLG 0x60 (independent 64 KiB blocks,
  no content size, no checksums), zstd frames without a content size;
- librdkafka (``inputs.librdkafka_batch``): snappy as one raw block, LZ4 frames with the
  content size, zstd frames with the content size;
- kafka-python (``inputs.kafka_python_batch``: its own ``DefaultRecordBatchBuilder``): gzip,
  snappy, lz4, zstd; where the compressed payload is no smaller than the records it writes
  the batch uncompressed, and the case says so;
- v1 wrappers (magic 1; ``inputs.record_set``): gzip, snappy, lz4, as old logs hold them.

Readers, one thread, in this process: ours (``iter_arrow_batches(threads=1)``, CRCs checked,
headers included; best of ``repeat`` after one warm-up read), aiokafka's and kafka-python's
readers (``readers.aiokafka`` / ``readers.kafka_python``, best of ``peer_repeat``, on the
case's first ``peer_records`` records: they are slow, and a batch costs them the same
wherever it lies), and the codec alone: the codec library decompressing the case's payload
once a batch (best of ``repeat``; framing parsed and contexts made outside the timing).

Then a ``kafka-format generate`` directory, the shape logs have: ``read_table`` with its
default threads and with one, the batches, records and median records a batch, and (full
run) ``kafka-format verify``, ``dump --jsonl`` and ``stats`` as subprocesses.

    .venv/bin/python bench/run.py --only small [--quick]
"""

from __future__ import annotations

import os
import shutil
import statistics
import struct
import subprocess
import sys
import tempfile
import time
import zlib
from collections.abc import Callable
from pathlib import Path

import cramjam
import inputs
import lz4.frame
import readers
import zstandard

from kafka_format.runtime.read.columnar import iter_arrow_batches, read_table

HEADING = "## Small batches: per-batch cost by codec and framing"

PER_BATCH = (1, 10, 100, 1000)
QUICK_PER_BATCH = (1, 10)
RECORDS = 200_000  # records a case, at most: 200,000 batches of one record
QUICK_RECORDS = 20_000
PEER_RECORDS = 20_000  # the peers read the case's first this many records
QUICK_PEER_RECORDS = 5_000
REPEAT = 3
#: Records per partition for ``kafka-format generate --records`` (its default is 400).
GENERATE_RECORDS = 20_000
#: The quiet log dir: ``--partitions`` a topic and ``--records`` a partition.
QUIET_PARTITIONS = 50
QUIET_RECORDS = 40
QUICK_GENERATE_RECORDS = 1_000
TOOL_TIMEOUT_S = 180
TARGET_VS_AIOKAFKA = 3.0
TARGET_RECORDS_S = 5e6

JAVA, LIBRDKAFKA, KAFKA_PYTHON, V1 = "Java", "librdkafka", "kafka-python", "v1 wrapper"
#: (writer, codec) in table order.
CASES = (
    [(JAVA, c) for c in (0, 1, 2, 3, 4)]
    + [(LIBRDKAFKA, c) for c in inputs.LIBRDKAFKA_CODECS]
    + [(KAFKA_PYTHON, c) for c in (1, 2, 3, 4)]
    + [(V1, c) for c in (1, 2, 3)]
)
_XERIAL = b"\x82SNAPPY\x00"


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__


def framing(codec: int, payload: bytes | None) -> str:
    """How ``payload`` is framed, read from its bytes."""
    if payload is None or codec == 0:
        return "none"
    if codec == 1:
        return "gzip"
    if codec == 2:
        return "snappy, xerial" if payload.startswith(_XERIAL) else "snappy, raw block"
    if codec == 3:
        flg, bd = payload[4], payload[5]
        parts = [
            "independent blocks" if flg & 0x20 else "linked blocks",
            "content size" if flg & 0x08 else "no content size",
        ]
        if flg & 0x14:
            parts.append("checksums")
        block = {4: "64 KiB", 5: "256 KiB", 6: "1 MiB", 7: "4 MiB"}.get(bd >> 4 & 7, "?")
        return f"lz4, FLG 0x{flg:02x} ({', '.join(parts)}; {block} blocks)"
    fhd = payload[4]  # zstd frame header descriptor
    sized = fhd >> 6 or fhd & 0x20  # a content size field, or one implied by single segment
    return "zstd, content size" if sized else "zstd, no content size"


def build_case(writer: str, codec: int, per_batch: int, records: int) -> dict:
    """One case: its bytes (one batch repeated with rising offsets), a batch's frame length,
    its payload and the codec its batches hold."""
    copies = max(1, records // per_batch)
    stored = codec
    if writer in (JAVA, V1):
        rs = inputs.record_set(2 if writer == JAVA else 1, codec, copies * per_batch, per_batch)
        data, payload = rs.data, rs.payload
    else:
        if writer == LIBRDKAFKA:
            one, payload = inputs.librdkafka_batch(codec, per_batch)
        else:
            one, payload, stored = inputs.kafka_python_batch(codec, per_batch)
        data = inputs.repeat_batch(one, copies, per_batch)
    return {
        "writer": writer,
        "codec": codec,
        "stored": stored,
        "framing": framing(stored, payload),
        "per_batch": per_batch,
        "batches": copies,
        "records": copies * per_batch,
        "frame": len(data) // copies,
        "data": data,
        "payload": payload,
    }


def codec_alone(codec: int, payload: bytes) -> Callable[[int], int]:
    """A function decompressing ``payload`` n times with the codec library alone, returning
    the bytes it made: the cheapest one-shot call a Python reader has, with the framing parsed
    and contexts made once, outside the timing. gzip: ``zlib.decompress``; snappy: cramjam's
    raw decoder per block (xerial blocks split beforehand); lz4: python-lz4's
    ``lz4.frame.decompress``; zstd: one ``ZstdDecompressor`` reused (a fresh one a payload
    costs ~9 µs more here), bounded by the output's size where the frame states none."""
    if codec == 1:

        def run(n: int) -> int:
            total = 0
            for _ in range(n):
                total += len(zlib.decompress(payload, 31))
            return total

        return run
    if codec == 2:
        blocks = [payload]
        if payload.startswith(_XERIAL):
            blocks, pos = [], 16
            while pos < len(payload):
                (size,) = struct.unpack_from(">i", payload, pos)
                blocks.append(payload[pos + 4 : pos + 4 + size])
                pos += 4 + size
        raw = cramjam.snappy.decompress_raw
        if len(blocks) == 1:
            (block,) = blocks

            def run(n: int) -> int:
                total = 0
                for _ in range(n):
                    total += len(raw(block))
                return total

            return run

        def run(n: int) -> int:
            total = 0
            for _ in range(n):
                for block in blocks:
                    total += len(raw(block))
            return total

        return run
    if codec == 3:
        unlz4 = lz4.frame.decompress

        def run(n: int) -> int:
            total = 0
            for _ in range(n):
                total += len(unlz4(payload))
            return total

        return run
    dctx = zstandard.ZstdDecompressor()
    size = len(dctx.decompressobj().decompress(payload))
    sized = framing(4, payload) == "zstd, content size"

    def run(n: int) -> int:
        total = 0
        if sized:
            for _ in range(n):
                total += len(dctx.decompress(payload))
        else:
            for _ in range(n):
                total += len(dctx.decompress(payload, max_output_size=size))
        return total

    return run


def _best(fn: Callable[[], object], repeat: int) -> tuple[object, float]:
    best, out = float("inf"), None
    for _ in range(repeat):
        start = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - start)
    return out, best


def _ours(data: bytes) -> int:
    n = 0
    for batch in iter_arrow_batches(data, include_headers=True, threads=1):
        n += batch.num_rows
    return n


#: The kernels a read of uncompressed v2 batches calls, by what they do (``profile_plain``).
_PLAIN_KERNELS = {
    "decode_sections": "decoder",
    "scan_frames": "frames",
    "check_batches": "frames",
    "make_sections": "frames",
}


def profile_plain(case: dict) -> dict:
    """Where a one-record uncompressed batch's time goes: one read under ``cProfile``, its
    time split into the record decoder (``kernels.records.decode_sections``), the framing
    scan, CRC-32C and section table (``fastscan``, ``payloads.check_batches``), and the rest
    (numpy planning a chunk a column at a time, and Python a chunk), in µs a batch."""
    import cProfile
    import pstats

    _ours(case["data"])
    best: dict = {}
    for _ in range(REPEAT):  # the quietest of the runs, as the timings take the best
        profiler = cProfile.Profile()
        profiler.enable()
        _ours(case["data"])
        profiler.disable()
        stats = pstats.Stats(profiler).stats  # type: ignore[attr-defined]
        parts = {"decoder": 0.0, "frames": 0.0}
        for (_, _, name), (_, _, tottime, _, _) in stats.items():
            if name in _PLAIN_KERNELS:
                parts[_PLAIN_KERNELS[name]] += tottime
        total = sum(row[2] for row in stats.values())
        if not best or total < best["total"]:
            best = {**parts, "total": total}
    us = 1e6 / case["batches"]
    return {
        "decoder": best["decoder"] * us,
        "frames": best["frames"] * us,
        "rest": (best["total"] - best["decoder"] - best["frames"]) * us,
    }


def segment_rule(data: bytes, repeat: int, workdir: Path | None = None) -> dict:
    """The cost of the segment-offsets rule (``read/segment_offsets.py``: a batch's offsets
    must lie in its segment, above the batch before it), which applies to files named as
    segments only: the same one-record batches read as ``00000000000000000000.log`` in a
    partition directory, as a file of another name, and as bytes, best of two rounds of
    ``repeat`` each, µs a batch."""
    scratch = Path(tempfile.mkdtemp(prefix="kafka-format-rule-", dir=workdir))
    try:
        part = scratch / "t-0"
        part.mkdir()
        named = part / "00000000000000000000.log"
        named.write_bytes(data)
        other = scratch / "batches.bin"
        other.write_bytes(data)
        batches = _ours(data)  # one record a batch
        sources = {"segment": str(named), "file": str(other), "bytes": data}
        best = dict.fromkeys(sources, float("inf"))
        for _ in range(2):
            for name, source in sources.items():
                best[name] = min(best[name], _best(lambda s=source: _ours(s), repeat)[1])
        return {"batches": batches, **{k: v / batches * 1e6 for k, v in best.items()}}
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _python_floor(n: int) -> float:
    """Seconds a Python loop calling a C function on a payload takes for ``n`` batches, the
    least any Python-level per-batch codec call costs (best of five)."""
    payload = b"x" * 100

    def loop() -> int:
        total = 0
        for _ in range(n):
            total += len(payload)
        return total

    return _best(loop, 5)[1]


def measure(case: dict, repeat: int, peer_repeat: int, peer_records: int, log) -> dict:
    """Timings of one case, in µs a batch (None where a reader failed, its error in
    ``errors``). Ours and the codec: two rounds of ``repeat`` runs, the peers' runs between
    them (a busy spell on a shared machine can last through one round), the best of both."""
    data, batches, records = case["data"], case["batches"], case["records"]
    row = {k: v for k, v in case.items() if k not in ("data", "payload")}
    row["errors"] = {}
    best = {"ours": float("inf"), "codec_us": float("inf")}
    codec = None
    if case["stored"] and case["payload"] is not None:
        codec = codec_alone(case["stored"], case["payload"])
        codec(1)

    def ours_and_codec() -> None:
        if "ours" not in row["errors"]:
            try:
                n, seconds = _best(lambda: _ours(data), repeat)
                if n != records:
                    raise RuntimeError(f"read {n} records of {records}")
                best["ours"] = min(best["ours"], seconds)
            except Exception as exc:  # say so in the table; the other readers still run
                row["errors"]["ours"] = _first_line(exc)
        if codec is not None:
            best["codec_us"] = min(best["codec_us"], _best(lambda: codec(batches), repeat)[1])

    try:
        _ours(data)  # warm: kernels loaded, the case's path taken once
    except Exception as exc:
        row["errors"]["ours"] = _first_line(exc)
    ours_and_codec()
    peer_batches = min(batches, max(1, peer_records // case["per_batch"]))
    prefix = data[: peer_batches * case["frame"]]
    row["peer_batches"] = peer_batches
    for name, fn in (("aiokafka", readers.aiokafka), ("kafka-python", readers.kafka_python)):
        try:
            fn(prefix[: case["frame"]])  # warm: imports, the codec's first call
            n, seconds = _best(lambda fn=fn: fn(prefix), peer_repeat)
            if n != peer_batches * case["per_batch"]:
                raise RuntimeError(f"read {n} records of {peer_batches * case['per_batch']}")
            row[name] = seconds / peer_batches * 1e6
        except Exception as exc:  # a peer that cannot read this framing: say so
            row[name] = None
            row["errors"][name] = _first_line(exc)
    ours_and_codec()
    failed = "ours" in row["errors"]
    row["ours"] = None if failed else best["ours"] / batches * 1e6
    row["ours_rate"] = None if failed else records / best["ours"]
    row["codec_us"] = None if codec is None else best["codec_us"] / batches * 1e6
    log(
        f"  {case['per_batch']:>4} a batch, {case['writer']} {case['framing']}: "
        + ", ".join(
            f"{k} {row[k]:.2f} µs" if row[k] is not None else f"{k} failed: {row['errors'][k]}"
            for k in ("ours", "aiokafka", "kafka-python")
        )
        + (f", codec {row['codec_us']:.2f} µs" if row["codec_us"] is not None else "")
    )
    return row


# --- a generated log directory ----------------------------------------------------------------


def _cli(*args: str, timeout: float | None = None, out=subprocess.PIPE) -> tuple[float, int]:
    """``python -m kafka_format ARGS`` (the ``kafka-format`` command): wall seconds and exit
    status; a failed ``generate`` raises with the last line of its stderr."""
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "kafka_format", *args],
        stdout=out,
        stderr=subprocess.PIPE,
        timeout=timeout,
        check=False,
    )
    if done.returncode and args[0] == "generate":
        why = done.stderr.decode(errors="replace").strip().splitlines() or ["no message"]
        raise RuntimeError(f"kafka-format {' '.join(args)} exited {done.returncode}: {why[-1]}")
    return time.perf_counter() - start, done.returncode


def generated(
    workdir: Path,
    records: int,
    repeat: int,
    tools: bool,
    log,
    segment_bytes: str | None = None,
    partitions: int | None = None,
) -> dict:
    """``kafka-format generate DIR --seed 7 --records N [--segment-bytes S] [--partitions
    P]``, then ``read_table`` over it."""
    from kafka_format.runtime.read.reader import iter_batches
    from kafka_format.runtime.read.sources import resolve

    root = workdir / f"generated-{segment_bytes or 'default'}-{partitions or 'default'}"
    options = ["--seed", "7", "--records", str(records)]
    if segment_bytes:
        options += ["--segment-bytes", segment_bytes]
    if partitions:
        options += ["--partitions", str(partitions)]
    write_s, _ = _cli("generate", str(root), *options)
    files = sorted(root.glob("*/*.log"))
    result = {
        "options": " ".join(options),
        "segments": (segment_bytes or "32KiB (the default)")
        + (f", {partitions} partitions a topic" if partitions else ""),
        "write_s": write_s,
        "files": len(files),
        "bytes": sum(p.stat().st_size for p in files),
        "partitions": len({p.parent for p in files}),
    }
    counts = []
    for batch in iter_batches(
        root, records=lambda b: b.magic < 2 and b.codec != 0, verify_crc=False
    ):
        if batch.is_control:
            continue
        if batch.magic == 2:
            counts.append(batch.records_count)
        else:  # a v0/v1 message, or a wrapper with its messages decoded
            counts.append(len(batch.records) if batch.records is not None else 1)
    result["batches"] = len(counts)
    result["records"] = sum(counts)
    result["median"] = statistics.median(counts) if counts else 0
    result["mean"] = result["records"] / max(1, len(counts))
    n = read_table(str(root)).num_rows  # warm: kernels, page cache
    if n != result["records"]:
        log(f"  read_table read {n} records, the batches hold {result['records']}")
    result["table_records"] = n
    for key, threads in (("default", None), ("one", 1)):
        _, seconds = _best(lambda t=threads: read_table(str(root), threads=t).num_rows, repeat)
        result[key] = seconds
    # what listing and naming the files takes of it (read.sources.resolve)
    _, result["resolve_s"] = _best(lambda: len(resolve(str(root))), repeat)
    log(
        f"  generated: {result['files']} files, {result['batches']} batches, {n} records, "
        f"read_table {n / result['default'] / 1e6:.3f} M records/s, "
        f"1 thread {n / result['one'] / 1e6:.3f} M records/s"
    )
    result["tools"] = {}
    if tools:
        for name, cli_args in (
            ("kafka-format verify", ["verify", str(root)]),
            ("kafka-format dump --jsonl > /dev/null", ["dump", "--jsonl", str(root)]),
            ("kafka-format stats", ["stats", str(root)]),
        ):
            try:
                with open(os.devnull, "wb") as sink:
                    seconds, rc = _cli(*cli_args, timeout=TOOL_TIMEOUT_S, out=sink)
                result["tools"][name] = (seconds, rc)
            except subprocess.TimeoutExpired:
                result["tools"][name] = (None, None)
            log(f"  {name}: {result['tools'][name]}")
        try:
            result["spark"] = spark_count(root, repeat, log)
        except Exception as exc:  # the rows above still stand
            log(f"  spark count: failed: {_first_line(exc)}")
            result["spark"] = {"error": _first_line(exc)}
    return result


def spark_count(root: Path, repeat: int, log) -> dict:
    """Spark's ``count()`` of the directory through ``kafka_log``, and through the Python data
    source floor (``pyfloor.py``: ready Arrow batches, nothing decoded) with the same rows in
    the same tasks: the floor first, before the workers import this package (as
    ``parquet.py`` measures it)."""
    import json

    import parquet
    import pyfloor
    import spark as spark_bench
    from pyspark import cloudpickle

    from kafka_format.spark_udfs import local_session, register
    from kafka_format.spark_udfs._options import parse_options
    from kafka_format.spark_udfs._planning import PackedSplits, plan, tasks
    from kafka_format.spark_udfs._reading import Counters, read_split
    from kafka_format.spark_udfs.datasource import kafka_schema, output_for

    options = parse_options({"path": str(root)})
    output = output_for(kafka_schema(), options)
    planned = plan(options)
    parts = []
    for task in tasks(planned, options):
        splits = task.splits if isinstance(task, PackedSplits) else (task,)
        rows = sum(b.num_rows for s in splits for b in read_split(s, options, output, Counters()))
        parts.append([splits[0].topic, splits[0].partition, rows])
    total = sum(p[2] for p in parts)
    session = local_session(
        "kafka-format bench small", cores=spark_bench.CORES, conf=spark_bench.SESSION_CONF
    )
    try:
        session.sparkContext.setLogLevel("ERROR")
        register(session)
        cloudpickle.register_pickle_by_value(pyfloor)
        session.dataSource.register(pyfloor.FloorSource)
        reader = session.read.format(pyfloor.NAME).option("parts", json.dumps(parts))
        floor = reader.option("schema", parquet.KAFKA_SCHEMA_DDL_NO_HEADERS)
        result = {"splits": len(planned), "tasks": len(parts), "records": total}
        for key, query in (
            ("floor", lambda: floor.load().count()),
            ("ours", lambda: session.read.format("kafka_log").load(str(root)).count()),
        ):
            answer, first, best = spark_bench.timed(query, repeat)
            if answer != total:
                raise RuntimeError(f"spark count, {key}: {answer} rows, expected {total}")
            result[key] = best
            result[f"{key}_first"] = first
    finally:
        session.stop()
    log(
        f"  spark count: {result['tasks']} tasks for {result['splits']} splits, "
        f"kafka_log {result['ours']:.2f} s, floor {result['floor']:.2f} s"
    )
    return result


def run(
    log=print,
    *,
    quick: bool = False,
    per_batch: tuple[int, ...] | None = None,
    records: int | None = None,
    peer_records: int | None = None,
    repeat: int = REPEAT,
    peer_repeat: int | None = None,
    generate_records: int | None = None,
    tools: bool | None = None,
    workdir: Path | None = None,
) -> dict:
    load = os.getloadavg()
    per_batch = per_batch or (QUICK_PER_BATCH if quick else PER_BATCH)
    records = records or (QUICK_RECORDS if quick else RECORDS)
    peer_records = peer_records or (QUICK_PEER_RECORDS if quick else PEER_RECORDS)
    peer_repeat = peer_repeat or 2
    generate_records = generate_records or (QUICK_GENERATE_RECORDS if quick else GENERATE_RECORDS)
    tools = not quick if tools is None else tools
    _ours(inputs.record_set(2, 0, 10).data)  # compile or load the kernels
    rows = []
    for k in per_batch:
        for writer, codec in CASES:
            rows.append(
                measure(
                    build_case(writer, codec, k, records), repeat, peer_repeat, peer_records, log
                )
            )
    floor = _python_floor(100_000) / 100_000 * 1e6
    plain = profile_plain(build_case(JAVA, 0, 1, records))
    rule = segment_rule(build_case(JAVA, 0, 1, records)["data"], repeat, workdir)
    log(
        f"  segment rule: segment {rule['segment']:.3f} µs, file {rule['file']:.3f} µs, "
        f"bytes {rule['bytes']:.3f} µs a batch"
    )
    scratch = Path(tempfile.mkdtemp(prefix="kafka-format-small-", dir=workdir))
    gen = []
    try:
        # The default's 32 KiB segments, and the same records in 2 MiB segments: what a file
        # costs beside what its batches cost; then a log dir of many quiet partitions (a
        # small segment or two in each, about 35 records a partition).
        shapes = ((generate_records, None, None), (generate_records, "2MiB", None))
        shapes += ((QUIET_RECORDS, None, 4 if quick else QUIET_PARTITIONS),)
        for n, segment_bytes, partitions in shapes:
            gen.append(
                generated(scratch, n, repeat, tools and not gen, log, segment_bytes, partitions)
            )
    except Exception as exc:  # the table above still stands
        log(f"  generated log: failed: {_first_line(exc)}")
        gen.append({"error": _first_line(exc)})
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return {
        "rows": rows,
        "generated": gen,
        "records": records,
        "peer_records": peer_records,
        "repeat": repeat,
        "peer_repeat": peer_repeat,
        "python_floor": floor,
        "segment_rule": rule,
        "plain_profile": plain,
        "quick": quick,
        "aiokafka_kind": "aiokafka's reader (Cython)"
        if readers.aiokafka_is_cython()
        else "aiokafka's reader (its pure-Python one: the Cython reader is NOT available)",
        "load": load,
        "load_after": os.getloadavg(),
    }


# --- the section ------------------------------------------------------------------------------


def _us(value: float | None, error: str | None = None) -> str:
    if value is None:
        return f"failed: {error}" if error else ""
    return f"{value:.2f}"


def _times(a: float | None, b: float | None) -> str:
    return f"{a / b:.1f}×" if a is not None and b else "n/a"


def _case_name(row: dict) -> str:
    codec = inputs.CODEC_NAMES[row["codec"]]
    name = f"{row['writer']} {codec}"
    if row["stored"] != row["codec"]:
        return f"{name} (written uncompressed: no smaller)"
    return name


def render(result: dict, machine: str) -> str:
    rows = result["rows"]
    load = ", ".join(f"{x:.2f}" for x in result["load"])
    after = ", ".join(f"{x:.2f}" for x in result["load_after"])
    sizes = sorted({r["per_batch"] for r in rows})
    uncompressed = ", ".join(
        f"{inputs.CODEC_NAMES[r['codec']]} at {r['per_batch']} record"
        + ("s" if r["per_batch"] > 1 else "")
        for r in rows
        if r["stored"] != r["codec"]
    )
    lines = [
        HEADING,
        "",
        f"Written by `bench/run.py --only small{' --quick' if result['quick'] else ''}`. "
        f"One thread, in one process. For {', '.join(map(str, sizes))} records a batch, every "
        "codec in each framing a client writes, as one byte string of one batch repeated with "
        f"rising base offsets, {result['records']:,} records a case at most (so "
        f"{result['records']:,} batches of one record): a short key, a 100-byte JSON-like "
        "value, one header (v1 wrappers: no header; one message a wrapper at one record a "
        "batch). Ours: `iter_arrow_batches(threads=1)`, CRCs checked, headers included, best "
        f"of two rounds of {result['repeat']} after a warm-up read (the peers' runs between "
        "the rounds: a busy spell on this shared machine can last through one). "
        f"{result['aiokafka_kind']} and kafka-python's, CRCs checked, every field touched "
        f"(`bench/readers.py`), best of {result['peer_repeat']} after a warm-up read of one "
        f"batch, on each case's first {result['peer_records']:,} records (a batch costs them "
        "the same wherever it lies). Codec alone: the codec library decompressing the case's "
        "payload once a batch, framing parsed and contexts made outside the timing "
        "(`zlib.decompress`; cramjam's raw snappy a block; python-lz4's "
        "`lz4.frame.decompress`; one reused zstandard `ZstdDecompressor`, bounded by the "
        "output's size where the frame states none), best of two rounds as ours; it "
        "includes a Python call a batch (a loop calling `len` takes "
        f"{result['python_floor']:.3f} µs a batch here), which ours avoids where its kernels "
        "decode the payload. Ours − codec: our time a batch beyond the codec's own (negative "
        "where ours decompresses faster than the library called from Python).",
        "",
        "Framings: Java producer (Kafka's clients, our writer's `codecs.compress`): gzip; "
        "snappy in xerial framing (32 KiB blocks); LZ4 frames with FLG 0x60 (independent "
        "64 KiB blocks, no content size, no checksums); zstd frames without a content size. "
        "librdkafka: snappy as one raw block (no xerial); LZ4 frames with the content size "
        "(python-lz4 `block_linked=False, store_size=True`); zstd with the content size "
        "(`ZstdCompressor(level=3)`). kafka-python (its `DefaultRecordBatchBuilder`; "
        "`kafka/codec.py`): gzip through `gzip.GzipFile` at level 9 (the header carries the "
        "time); snappy in xerial framing (python-snappy, 32 KiB blocks); LZ4 through "
        "`lz4.frame.compress(payload, block_linked=False)` with python-lz4's other defaults, "
        "so FLG 0x68: independent blocks (it forces them: Kafka does not support linked "
        "blocks), the content size, no checksums, 64 KiB blocks; zstd through "
        "`ZstdCompressor().compress` (level 3, the content size, no checksum). kafka-python "
        "writes a batch uncompressed when the compressed records are no smaller than the "
        f"records: here {uncompressed or 'never'}; those cases hold uncompressed batches, "
        "and say so. v1 wrappers (magic 1): the Java framings.",
        "",
        "| records a batch | writer, codec | framing (from the bytes) | batches | "
        "ours µs/batch | ours M records/s | codec alone µs/batch | ours − codec µs/batch | "
        "aiokafka µs/batch | ours vs aiokafka | kafka-python µs/batch | ours vs kafka-python |",
        "|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        err = r["errors"]
        minus = (
            f"{r['ours'] - r['codec_us']:+.2f}"
            if r["ours"] is not None and r["codec_us"] is not None
            else ""
        )
        rate = f"{r['ours_rate'] / 1e6:.2f}" if r["ours_rate"] is not None else ""
        lines.append(
            f"| {r['per_batch']} | {_case_name(r)} | {r['framing']} | {r['batches']:,} | "
            f"{_us(r['ours'], err.get('ours'))} | {rate} | {_us(r['codec_us'])} | {minus} | "
            f"{_us(r['aiokafka'], err.get('aiokafka'))} | {_times(r['aiokafka'], r['ours'])} | "
            f"{_us(r['kafka-python'], err.get('kafka-python'))} | "
            f"{_times(r['kafka-python'], r['ours'])} |"
        )
    small = [r for r in rows if r["per_batch"] in (1, 10)]
    met, unmet = [], []
    for r in small:
        ratio = r["aiokafka"] / r["ours"] if r["aiokafka"] is not None and r["ours"] else None
        label = f"{r['per_batch']}: {_case_name(r)}"
        if ratio is not None and ratio >= TARGET_VS_AIOKAFKA:
            met.append(f"{label} {ratio:.1f}×")
        else:
            unmet.append(f"{label} " + (f"{ratio:.1f}×" if ratio is not None else "n/a"))
    overheads = [
        r["ours"] - r["codec_us"]
        for r in rows
        if r["ours"] is not None and r["codec_us"] is not None and r["per_batch"] == 1
    ]
    plain = {
        r["per_batch"]: r["ours"]
        for r in rows
        if r["writer"] == JAVA and r["codec"] == 0 and r["ours"] is not None
    }
    lines += [
        "",
        f"Target: at 1 and 10 records a batch every codec ≥ {TARGET_VS_AIOKAFKA:.0f}× "
        f"aiokafka. Met by {len(met)} of {len(small)}"
        + (f"; not met: {', '.join(unmet)}" if unmet else ": all of them")
        + "."
        + (
            f" At one record a batch ours − codec ranges {min(overheads):+.2f} to "
            f"{max(overheads):+.2f} µs a batch (the goal: the codec's own time plus well under "
            "a microsecond a batch)."
            if overheads
            else ""
        )
        + (
            " With more records a batch ours − codec holds their decoding too: ours on the "
            "same records uncompressed (Java none) takes "
            + ", ".join(f"{us:.2f} µs a batch at {k}" for k, us in plain.items())
            + "."
            if plain
            else ""
        ),
        *_plain_note(result.get("plain_profile"), unmet),
        "",
        *render_segment_rule(result.get("segment_rule")),
        *render_generated(result["generated"]),
        "",
        f"Load average at the section's start {load}, at its end {after}. Machine: {machine}.",
        "",
    ]
    return "\n".join(lines)


def _plain_note(plain: dict | None, unmet: list[str]) -> list[str]:
    """Why the uncompressed one-record cases stay below the target, from a profile."""
    if not plain or not any("none" in u or "uncompressed" in u for u in unmet):
        return []
    return [
        "",
        "Where an uncompressed one-record batch's time goes (Java none, one read under "
        f"`cProfile`, µs a batch): the record decoder {plain['decoder']:.3f} (its record, and "
        "the batch's own bookkeeping in the kernel: marks, status, a call), the framing scan, "
        f"CRC-32C and section table {plain['frames']:.3f}, the rest {plain['rest']:.3f} "
        "(numpy planning each chunk of 64 Ki batches a column at a time, Python a chunk). "
        "aiokafka's Cython reader spends about 0.6 µs on the same batch, so 3× leaves 0.2: "
        "what would reach it is one kernel planning and decoding a chunk of uncompressed "
        "batches (no numpy pass a column), or the decoder's per-batch call inlined into its "
        "loop (measured: 0.015 µs less a batch, for 14 s more compile on a fresh install, "
        "where the shipped kernels do not apply).",
    ]


def render_segment_rule(rule: dict | None) -> list[str]:
    if not rule:
        return []
    extra = rule["segment"] - rule["file"]
    return [
        "The segment-offsets rule (a batch's offsets lie in its segment, above the batch "
        "before it: `read/segment_offsets.py`, judged a chunk at a time without a step a "
        "batch) applies to files named as segments only. The Java none case at one record a "
        f"batch ({rule['batches']:,} batches) read as a segment of a partition directory: "
        f"{rule['segment']:.3f} µs a batch; as a file of another name: {rule['file']:.3f} µs; "
        f"as bytes: {rule['bytes']:.3f} µs. The rule costs {extra:+.3f} µs a batch "
        f"({rule['segment'] / rule['file']:.2f}× the file's read).",
        "",
    ]


def _where_the_time_goes(gens: list[dict]) -> list[str]:
    done = [g for g in gens if "error" not in g]
    if not done:
        return []
    first = done[0]
    listing = first.get("resolve_s")
    lines = [
        "Where the time goes: a file used to cost about 0.6 ms of Python besides its batches "
        "(opened and mapped, scanned, its offsets judged, planned, decoded, a dozen numpy and "
        "Arrow calls): the 32 KiB directory read at 0.36 M records/s. Consecutive whole "
        "segments of a partition below 256 KiB are now read into one buffer and decoded as "
        "one chunk (`read/grouped.py`; a group that is not clean is read again file by file, "
        "so rows, reports and errors are the files' own); a profile of a one-thread read of "
        "the first directory then shows the codecs (`kernels.inflate`: gzip and zstd, about "
        "0.05 s) and the record decoder (about 0.025 s) as the largest steps."
        + (
            f" Listing and naming the files (`read.sources.resolve`: {first['files']:,} "
            f"segments beside their indexes) takes {listing:.3f} s of the "
            f"{first['default']:.3f} s read."
            if listing is not None
            else ""
        )
    ]
    quiet = [g for g in done if "partitions a topic" in g["segments"]]
    if quiet:
        q = quiet[0]
        lines[0] += (
            f" The quiet log dir ({q['files']:,} segments in {q['partitions']} partition "
            "directories) reads in groups that span partitions, each row given its own "
            f"file's topic and partition: {q['default']:.3f} s, of which "
            f"{q.get('resolve_s') or 0:.3f} s is its listing (a file a partition took "
            "0.19 s to read one by one)."
        )
    best = max(g["table_records"] / g["default"] for g in done)
    if best < TARGET_RECORDS_S:
        lines[0] += (
            f" The target is not met ({best / 1e6:.2f} M records/s at best). Those kernels "
            "alone take about 0.075 s of one core (a profile of a one-thread read on this "
            "machine), so two cores kept busy with nothing else would read these records at "
            "about 7 M records/s at most, and 5 M leaves about 0.015 s for the rest of the "
            "read, about what the listing alone takes (it stats only the segments, whose "
            "sizes Spark's planner takes from it, not their indexes). What would reach it: "
            "more cores (the groups are decoded on the workers, ahead, while the calling "
            "thread emits)."
        )
    spark = first.get("spark")
    if spark and "error" not in spark:
        ratio = spark["ours"] / spark["floor"]
        lines += [
            "",
            f"Spark's `count()` of the first directory ({spark_bench_note()}): `kafka_log` "
            f"{spark['ours']:.2f} s in {spark['tasks']} tasks (its {spark['splits']:,} "
            "segments packed into a task a partition where they are small, "
            "`_planning.tasks`, as Spark's file sources pack small files: one task a segment "
            f"took 32 s); the Python data source floor (`pyfloor.py`) {spark['floor']:.2f} s "
            f"with the same rows in the same tasks: {ratio:.2f}× the floor (target 1.5×). "
            "Best of the runs after the first; answers checked against `read_split`'s rows."
            + (
                ""
                if ratio <= 1.5
                else " What is left over the floor: each task reads its segments one by one "
                "(a span each, `read_split`), 0.6 ms of Python a segment, not decoded together."
            ),
        ]
    elif spark:
        lines += ["", f"Spark's `count()` of the first directory: failed: {spark['error']}"]
    return lines


def spark_bench_note() -> str:
    import spark as spark_bench

    return spark_bench.session_note()


def render_generated(gens: list[dict] | dict) -> list[str]:
    gens = gens if isinstance(gens, list) else [gens]
    first = gens[0] if gens else {}
    lines = [
        "The shape logs have: a directory written by `kafka-format generate DIR "
        f"{first.get('options', '')}` (`--records` is data records a partition on average; its "
        "default of 400 makes a directory of about 3,200 records; everything else default: "
        "the default topics (four of plain records, three of Avro, Protobuf and JSON Schema "
        "payloads, `_schemas`), every codec and magic, 32 KiB segments, batch.size 16384, "
        "linger.ms 5, a "
        "load moving between 100 and 1,000,000 records/s, so quiet spells give one-record "
        "batches), the same with `--segment-bytes 2MiB` (the same records in fewer, larger "
        "segments), and a log dir of many quiet partitions (`--partitions 50 --records 40`: "
        "a small segment or two in each partition), then `read_table(DIR)` "
        "(no headers) with its default threads and with "
        "`threads=1`, best of the runs after a warm-up read; batches and records counted by "
        "`iter_batches` (control batches left out; a v0/v1 wrapper counts its messages). "
        f"Target: ≥ {TARGET_RECORDS_S / 1e6:.0f} M records/s.",
        "",
        "| segments | files | MB of log | batches | records | median records a batch | mean | "
        "write s | read_table s | M records/s | read_table, 1 thread s | M records/s | "
        "per file, 1 thread |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    tools = {}
    for gen in gens:
        if "error" in gen:
            lines.append(f"| failed: {gen['error']} |||||||||||||")
            continue
        n = gen["table_records"]
        tools = tools or gen["tools"]
        lines.append(
            f"| {gen['segments']} | {gen['files']} | {gen['bytes'] / 1e6:.1f} | "
            f"{gen['batches']:,} | {n:,} | {gen['median']:g} | {gen['mean']:.1f} | "
            f"{gen['write_s']:.1f} | {gen['default']:.3f} | {n / gen['default'] / 1e6:.3f} | "
            f"{gen['one']:.3f} | {n / gen['one'] / 1e6:.3f} | "
            f"{gen['one'] / gen['files'] * 1e3:.2f} ms |"
        )
    lines += ["", *_where_the_time_goes(gens)]
    if tools:
        lines += [
            "",
            "The commands on the first directory:",
            "",
            "| command (`python -m kafka_format`, a subprocess: its start included) | wall s "
            "| exit status |",
        ]
        lines.append("|---|---:|---:|")
        for name, (seconds, rc) in tools.items():
            if seconds is None:
                lines.append(f"| `{name}` | did not finish in {TOOL_TIMEOUT_S} s | |")
            else:
                lines.append(f"| `{name}` | {seconds:.2f} | {rc} |")
    else:
        lines += ["", "`kafka-format verify`, `dump --jsonl` and `stats`: not run (quick mode)."]
    return lines
