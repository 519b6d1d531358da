"""The kafka_log source's ``mode`` SALVAGE: the rows and the damage of ``errors="salvage"``.

One damaged partition directory (kafka-python's batches: a broken magic, a flipped bit in
records, a zeroed region, a broken length that runs past the end) read by a real
SparkSession, compared with ``read_table(..., errors="salvage")`` on the same bytes.
"""

from __future__ import annotations

import pytest
from kafka.record.default_records import DefaultRecordBatchBuilder

pyspark = pytest.importorskip("pyspark")

from kafka_format.runtime.model import Report  # noqa: E402
from kafka_format.runtime.read.columnar import read_table  # noqa: E402
from kafka_format.spark_udfs import KAFKA_SCHEMA_DDL, register  # noqa: E402
from kafka_format.spark_udfs._options import OptionError, parse_options  # noqa: E402

pytestmark = pytest.mark.spark
PER = 5


def _batches(n: int = 12) -> list[bytes]:
    out = []
    for b in range(n):
        builder = DefaultRecordBatchBuilder(2, (0, 1, 0, 3)[b % 4], False, -1, -1, -1, 1 << 30)
        for i in range(PER):
            offset = b * PER + i
            builder.append(i, 1_700_000_000_000 + offset, b"k%d" % offset, b"v%d" % offset, [])
        frame = bytearray(builder.build())
        frame[0:8] = (b * PER).to_bytes(8, "big")
        out.append(bytes(frame))
    return out


def _damaged() -> bytes:
    frames = _batches()
    starts = [sum(len(f) for f in frames[:i]) for i in range(len(frames) + 1)]
    data = bytearray(b"".join(frames))
    data[starts[1] + 16] = 9
    data[starts[5] - 4] ^= 0x20
    lo, hi = starts[6] + 30, starts[7] + 25
    data[lo:hi] = bytes(hi - lo)
    data[starts[9] + 8 : starts[9] + 12] = (1 << 30).to_bytes(4, "big")
    return bytes(data)


def _order(row: tuple) -> tuple:
    return (row[0] is None, row[0] or 0, row[1])


def test_mode_salvage_is_an_option():
    assert parse_options({"path": "x", "mode": "salvage"}).mode == "SALVAGE"
    with pytest.raises(OptionError, match="SALVAGE"):
        parse_options({"path": "x", "mode": "rescue"})


def test_salvage_mode_reads_what_read_table_salvages(spark, tmp_path):
    kafka = register(spark)
    part = tmp_path / "orders-0"
    part.mkdir()
    data = _damaged()
    log = part / "00000000000000000000.log"
    log.write_bytes(data)
    report = Report()
    expected = read_table(str(log), errors="salvage", report=report)
    assert len(report.errors) >= 3  # the oracle itself saw the damage
    want = list(
        zip(
            expected.column("offset").to_pylist(),
            expected.column("key").to_pylist(),
            expected.column("value").to_pylist(),
            strict=True,
        )
    )
    before = kafka.corrupt_batches.value
    rows = (
        spark.read.format("kafka_log")
        .schema(f"{KAFKA_SCHEMA_DDL}, _corrupt_batch string")
        .option("mode", "SALVAGE")
        .load(str(part))
        .collect()
    )
    good = [(r.offset, r.key, r.value) for r in rows if r._corrupt_batch is None]
    assert sorted(good) == sorted(want)
    # bytes that are no batch have no base offset: the row's offset is null
    bad = sorted(
        ((r.offset, r._corrupt_batch) for r in rows if r._corrupt_batch is not None), key=_order
    )
    assert bad == sorted(((e.base_offset, str(e)) for e in report.errors), key=_order)
    assert kafka.corrupt_batches.value == before + len(report.errors)
    # without SALVAGE, the read ends at the first framing damage
    dropped = spark.read.format("kafka_log").option("mode", "DROPMALFORMED").load(str(part))
    assert dropped.count() == PER
