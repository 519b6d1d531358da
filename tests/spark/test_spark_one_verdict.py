"""Spark's ``kafka_log`` source gives the readers' verdict on damaged segments, mode by mode.

The damaged partitions are those of ``tests/test_one_verdict_property.py`` (kafka-python's
batches, a record value holding a whole batch, then broken lengths, zeroed and garbage
regions, flipped bits in the base offset no CRC covers, bytes cut out, truncations), drawn
from a fixed seed so that one SparkSession reads each once per mode: DROPMALFORMED keeps what
``read_table(errors="skip")`` keeps, SALVAGE what ``errors="salvage"`` keeps, and FAILFAST
fails at the byte where ``errors="strict"`` raises (or reads what it reads).
"""

from __future__ import annotations

import random
import struct

import pytest

pyspark = pytest.importorskip("pyspark")

from kafka.record.default_records import DefaultRecordBatchBuilder  # noqa: E402

from kafka_format.runtime.errors import KafkaFormatError  # noqa: E402
from kafka_format.runtime.read.columnar import read_table  # noqa: E402
from kafka_format.spark_udfs import register  # noqa: E402

pytestmark = pytest.mark.spark
T0 = 1_700_000_000_000


def _batch(base: int, n: int, codec: int, values: list[bytes] | None = None) -> bytes:
    builder = DefaultRecordBatchBuilder(2, codec, False, -1, -1, -1, 1 << 30)
    for i in range(n):
        value = values[i] if values else f"value {base + i} ".encode() * (1 + i % 3)
        builder.append(i, T0 + base + i, f"k{base + i}".encode(), value, [])
    out = bytearray(builder.build())
    struct.pack_into(">q", out, 0, base)
    return bytes(out)


def _cases(count: int = 14) -> list[tuple[str, bytes]]:
    rng = random.Random(2026)
    cases = []
    for c in range(count):
        frames, base = [], 0
        carrier = rng.randrange(6)
        for b in range(6):
            n = rng.randint(1, 4)
            values = None
            if b == carrier:
                values = [b"x"] * max(n, 2)
                values[-1] = _batch(1 << 40, 2, 0)
                n = len(values)
            frames.append(_batch(base, n, rng.choice([0, 0, 1, 2, 3, 4]), values))
            base += n
        starts = [sum(len(f) for f in frames[:i]) for i in range(len(frames))]
        data = bytearray(b"".join(frames))
        kind = ["length", "zero", "garbage", "flip-base", "cut", "truncate", "flip"][c % 7]
        at = starts[rng.randrange(len(starts))]
        if kind == "length":
            struct.pack_into(">i", data, at + 8, rng.choice([0, 40, 1 << 24, 7]))
        elif kind == "zero":
            data[at + 30 : at + 250] = bytes(len(data[at + 30 : at + 250]))
        elif kind == "garbage":
            data[at + 5 : at + 90] = rng.randbytes(len(data[at + 5 : at + 90]))
        elif kind == "flip-base":
            data[at + rng.randrange(8)] ^= 1 << rng.randrange(8)
        elif kind == "cut":
            del data[at + 20 : at + 120]
        elif kind == "truncate":
            del data[at + rng.randrange(1, 60) :]
        else:
            data[rng.randrange(len(data))] ^= 0x08
        cases.append((f"{c}-{kind}", bytes(data)))
    return cases


CASES = _cases()


def _offsets(rows) -> list[int]:
    return sorted(r.offset for r in rows if getattr(r, "_corrupt_batch", None) is None)


def test_every_mode_gives_the_readers_verdict(spark, tmp_path):
    register(spark)
    for name, data in CASES:
        part = tmp_path / name / "t-0"
        part.mkdir(parents=True)
        log = part / "00000000000000000000.log"
        log.write_bytes(data)
        reader = spark.read.format("kafka_log")
        for mode, errors in (("DROPMALFORMED", "skip"), ("SALVAGE", "salvage")):
            want = sorted(read_table(str(log), errors=errors).column("offset").to_pylist())
            rows = reader.option("mode", mode).load(str(part)).collect()
            assert _offsets(rows) == want, (name, mode)
        try:
            want = sorted(read_table(str(log)).column("offset").to_pylist())
        except KafkaFormatError as exc:
            with pytest.raises(Exception, match=rf"@{exc.position}\b") as raised:
                reader.option("mode", "FAILFAST").load(str(part)).collect()
            assert exc.reason in str(raised.value), name
        else:
            rows = reader.option("mode", "FAILFAST").load(str(part)).collect()
            assert _offsets(rows) == want, name
