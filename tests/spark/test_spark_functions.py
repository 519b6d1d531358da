"""The SQL functions (``kafka_records``, ``kafka_batches``, ``kafka_decompress`` and their
``try_`` forms) through a real local SparkSession, from SQL and from the DataFrame API.

Oracles: the corpus's .jsonl and MANIFEST.json, batch headers walked with ``struct`` and CRCs
computed with ``zlib`` / ``crc32c``, and payloads compressed here by the codecs' own libraries
(gzip, lz4.frame, zstandard, cramjam's raw snappy framed by hand as xerial).
"""

from __future__ import annotations

import base64
import gzip
import struct
import zlib
from pathlib import Path

import pytest
from crc32c import crc32c

pyspark = pytest.importorskip("pyspark")

import cramjam  # noqa: E402
import lz4.frame  # noqa: E402
import zstandard  # noqa: E402
from pyspark.sql import functions as F  # noqa: E402

from kafka_format.spark_udfs import register  # noqa: E402
from kafka_format.spark_udfs.functions import (  # noqa: E402
    kafka_batches,
    kafka_decompress,
    kafka_records,
    make_functions,
)


@pytest.fixture(scope="module")
def kafka(spark):
    return register(spark)


@pytest.fixture(scope="module")
def files(spark, kafka, corpus_dir):
    """Every corpus record set as a binaryFile row (path, content)."""
    df = (
        spark.read.format("binaryFile")
        .option("recursiveFileLookup", "true")
        .option("pathGlobFilter", "*.bin")
        .load(str(corpus_dir))
        .select("path", "content")
    )
    df.createOrReplaceTempView("kafka_files")
    return df


def by_set(rows, manifest, column):
    """Map each manifest set to the value of ``column`` in the row of its file."""
    values = {Path(r.path.removeprefix("file:")).resolve(): r[column] for r in rows}
    return {s.id: values[s.path.resolve()] for s in manifest}


def record_tuples(records) -> list[tuple]:
    return [
        (
            r.offset,
            None if r.timestamp is None else round(r.timestamp.timestamp() * 1000),
            r.timestampType,
            r.key,
            r.value,
            [(h.key, h.value) for h in r.headers or ()],
        )
        for r in records
    ]


def jsonl_tuples(expected) -> list[tuple]:
    def b(text):
        return None if text is None else base64.b64decode(text)

    return [
        (
            e["offset"],
            e["timestamp"],
            e["timestampType"],
            b(e["key"]),
            b(e["value"]),
            [(h["key"], b(h["value"])) for h in e["headers"]],
        )
        for e in expected
    ]


def test_records_from_sql_equal_the_jsonl(spark, files, manifest):
    rows = spark.sql(
        "SELECT path, try_kafka_records(content) AS records FROM kafka_files"
    ).collect()
    got = by_set(rows, manifest, "records")
    for s in manifest:
        if s.crc_valid:
            assert record_tuples(got[s.id]) == jsonl_tuples(s.expected()), s.id
        else:
            assert got[s.id] is None, s.id  # kafka_records would fail: the CRC does not hold


def test_records_from_the_dataframe_api(spark, files, manifest):
    some = files.where(F.col("path").contains("rskafka") | F.col("path").contains("kafka-go"))
    rows = some.select("path", kafka_records("content").alias("records")).collect()
    assert len(rows) > 10
    by_path = {Path(r.path.removeprefix("file:")).resolve(): r.records for r in rows}
    for s in manifest:
        if s.path.resolve() in by_path:
            assert record_tuples(by_path[s.path.resolve()]) == jsonl_tuples(s.expected())


def test_records_fail_on_a_damaged_set(spark, files):
    with pytest.raises(Exception, match="crc"):
        spark.sql(
            "SELECT kafka_records(content) FROM kafka_files WHERE path LIKE '%invalid_crc%'"
        ).collect()


def walk(data: bytes) -> list[dict]:
    """Each whole batch's position, offsets, magic, codec and CRC, by struct and zlib."""
    out, pos = [], 0
    while len(data) - pos > 17:
        base, length = struct.unpack_from(">qi", data, pos)
        end = pos + 12 + length
        if end > len(data):
            break
        magic = data[pos + 16]
        if magic == 2:
            (crc,) = struct.unpack_from(">I", data, pos + 17)
            attributes, delta = struct.unpack_from(">hi", data, pos + 21)
            computed, last = crc32c(data[pos + 21 : end]), base + delta
        else:
            (crc,) = struct.unpack_from(">I", data, pos + 12)
            attributes, computed, last = data[pos + 17], zlib.crc32(data[pos + 16 : end]), base
        out.append(
            {
                "position": pos,
                "size": end - pos,
                "baseOffset": base,
                "lastOffset": last,
                "magic": magic,
                "codec": ["none", "gzip", "snappy", "lz4", "zstd"][attributes & 7],
                "crc": crc,
                "computedCrc": computed,
                "crcValid": crc == computed,
            }
        )
        pos = end
    return out


def test_batches_from_the_dataframe_api(spark, files, manifest):
    rows = files.select("path", kafka_batches("content").alias("batches")).collect()
    got = by_set(rows, manifest, "batches")
    for s in manifest:
        want = walk(s.data())
        mine = [{k: getattr(b, k) for k in want[0]} for b in got[s.id]] if want else []
        assert mine == want, s.id
        assert all(b.crcValid for b in got[s.id]) == s.crc_valid, s.id
        assert all(b.error is None for b in got[s.id]), s.id


def test_batches_from_sql_report_every_header_field(spark, files):
    row = spark.sql(
        "SELECT inline(kafka_batches(content)) FROM kafka_files "
        "WHERE path LIKE '%test_decode_fixture_zstd.bin'"
    ).collect()
    assert len(row) == 1
    batch = row[0].asDict()
    assert batch["magic"] == 2 and batch["codec"] == "zstd" and batch["crcValid"] is True
    assert batch["batchLength"] == batch["size"] - 12
    assert batch["recordsCount"] == 1 and batch["lastOffsetDelta"] == 0
    assert batch["attributes"] & 7 == 4
    assert None not in (batch["producerId"], batch["maxTimestamp"], batch["baseSequence"])


def xerial(raw: bytes) -> bytes:
    """Snappy-java's framing around cramjam's raw snappy blocks (32 KiB each)."""
    out = bytearray(b"\x82SNAPPY\x00" + struct.pack(">ii", 1, 1))
    for i in range(0, len(raw), 32 * 1024):
        block = bytes(cramjam.snappy.compress_raw(raw[i : i + 32 * 1024]))
        out += struct.pack(">i", len(block)) + block
    return bytes(out)


def test_decompress_from_sql_and_the_dataframe_api(spark, kafka):
    original = b"kafka " * 20_000 + bytes(range(256))
    cases = [
        ("gzip", gzip.compress(original)),
        ("1", gzip.compress(original)),
        ("SNAPPY", xerial(original)),
        ("snappy", bytes(cramjam.snappy.compress_raw(original))),
        ("lz4", lz4.frame.compress(original, content_checksum=False)),
        (
            "zstd",
            zstandard.ZstdCompressor(write_content_size=False).compress(original),
        ),
        ("none", original),
        ("gzip", None),
    ]
    df = spark.createDataFrame(cases, "codec string, data binary")
    df.createOrReplaceTempView("compressed")
    got = spark.sql("SELECT codec, kafka_decompress(data, codec) AS out FROM compressed").collect()
    assert [(r.codec, r.out) for r in got] == [
        (c, None if d is None else original) for c, d in cases
    ]
    api = df.select(kafka_decompress("data", F.lit("gzip")).alias("out")).head(2)
    assert [bytes(r.out) for r in api] == [original, original]


def test_decompress_failures(spark, kafka):
    df = spark.createDataFrame(
        [("gzip", b"not gzip at all"), ("brotli", b"x"), ("zstd", b"\x28\xb5\x2f\xfd")],
        "codec string, data binary",
    )
    df.createOrReplaceTempView("garbage")
    tried = spark.sql("SELECT try_kafka_decompress(data, codec) AS out FROM garbage").collect()
    assert [r.out for r in tried] == [None, None, None]
    with pytest.raises(Exception, match="gzip"):
        spark.sql(
            "SELECT kafka_decompress(data, codec) FROM garbage WHERE codec = 'gzip'"
        ).collect()
    with pytest.raises(Exception, match="unknown codec"):
        spark.sql(
            "SELECT kafka_decompress(data, codec) FROM garbage WHERE codec = 'brotli'"
        ).collect()


def test_decompressed_size_bound(spark, kafka):
    bounded = make_functions(max_decompressed_bytes=1000)
    df = spark.createDataFrame([(gzip.compress(b"x" * 5000),)], "data binary")
    out = df.select(bounded["try_kafka_decompress"]("data", F.lit("gzip"))).head()
    assert out[0] is None
    with pytest.raises(Exception, match="1000"):
        df.select(bounded["kafka_decompress"]("data", F.lit("gzip"))).head()
    fine = df.select(kafka_decompress("data", F.lit("gzip"))).head()
    assert bytes(fine[0]) == b"x" * 5000
