"""Payloads in Confluent's wire format through Spark: the ``kafka_log`` options ``valueFormat``
and the rest (spark_udfs/_payloads.py), the SQL function ``kafka_payload_json`` and
``from_schema_registry``, with a real local SparkSession.

Oracles: Confluent's own serializers wrote the data and its deserializers read it back
(``confluent_log_dir`` in tests/conftest.py: ``orders`` in Avro v1 and v2, one record not
framed, one with an id no registry gave, a tombstone; ``clicks`` in JSON Schema), v1 records
being given v2's defaults as Avro's schema resolution does (v2 is the column's schema); and the
runtime's ``decode_payloads`` over ``read_table`` of the same files: one verdict on every path.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

pyspark = pytest.importorskip("pyspark")
pytest.importorskip("confluent_kafka.schema_registry")

from pyspark.sql.types import LongType, StringType, StructField, StructType  # noqa: E402

from kafka_format.runtime.payloads.columns import decode_payloads  # noqa: E402
from kafka_format.runtime.read.columnar import read_table  # noqa: E402
from kafka_format.spark_udfs import register  # noqa: E402
from kafka_format.spark_udfs._options import OptionError, parse_options  # noqa: E402
from kafka_format.spark_udfs.functions import from_schema_registry  # noqa: E402

#: What Avro's resolution gives a v1 order (``{"id"}``) read as v2.
V2_DEFAULTS = {"note": None, "state": "NEW"}
ORDER_TYPE = StructType(
    [
        StructField("id", LongType()),
        StructField("note", StringType()),
        StructField("state", StringType()),
    ]
)
#: Offsets of ``orders-0`` by what their value is (conftest.py writes them in this order).
UNFRAMED, UNKNOWN_ID, TOMBSTONE = 2, 4, 5


@pytest.fixture(scope="module")
def kafka(spark):
    return register(spark)


@pytest.fixture(scope="module")
def logs(confluent_log_dir):
    return confluent_log_dir


def read(spark, path: Any, **options: str):
    reader = spark.read.format("kafka_log")
    for name, value in options.items():
        reader = reader.option(name, value)
    return reader.load(str(path))


def by_offset(df) -> list[dict[str, Any]]:
    return [r.asDict(recursive=True) for r in df.orderBy("offset").collect()]


def as_v2(value: dict[str, Any] | None) -> dict[str, Any] | None:
    return None if value is None else {**V2_DEFAULTS, **value}


def runtime_rows(logs, topic: str = "orders", **options: str) -> list[dict[str, Any]]:
    table = read_table(str(logs.log_dir / f"{topic}-0"))
    decoded = decode_payloads(table, log_dir=str(logs.log_dir), **options)
    return sorted(decoded.to_pylist(), key=lambda r: r["offset"])


# --- the read -----------------------------------------------------------------------------------


def test_values_are_what_confluents_deserializer_reads(spark, kafka, logs):
    df = read(spark, logs.log_dir / "orders-0", valueFormat="avro", mode="PERMISSIVE")
    assert df.schema["value"].dataType == ORDER_TYPE
    assert df.columns == [
        "key",
        "value",
        "topic",
        "partition",
        "offset",
        "timestamp",
        "timestampType",
        "value_schema_id",
        "value_raw",
        "_payload_error",
    ]
    rows = by_offset(df)
    assert [r["value"] for r in rows] == [as_v2(v) for v in logs.expected["orders"]]
    v1, v2 = logs.ids["orders-value"] - 1, logs.ids["orders-value"]
    assert [r["value_schema_id"] for r in rows] == [v1, v1, None, v2, 99, None, v2]
    assert [r["value_raw"] for r in rows] == logs.values["orders"]
    errors = [r["_payload_error"] for r in rows]
    assert "magic byte" in errors[UNFRAMED]
    assert "schema id 99" in errors[UNKNOWN_ID]
    assert [i for i, e in enumerate(errors) if e is not None] == [UNFRAMED, UNKNOWN_ID]
    assert rows[TOMBSTONE]["value"] is None and rows[TOMBSTONE]["value_raw"] is None


@pytest.mark.parametrize("output", ["struct", "json"])
def test_one_verdict_with_decode_payloads(spark, kafka, logs, output):
    """Spark's rows are the runtime's: decode_payloads over read_table of the same files."""
    df = read(
        spark,
        logs.log_dir / "orders-0",
        valueFormat="schema-registry",
        payloadOutput=output,
        mode="PERMISSIVE",
    )
    expected = runtime_rows(logs, value_format="schema-registry", output=output)
    got = by_offset(df)
    columns = ["offset", "value", "value_schema_id", "value_raw", "_payload_error"]
    assert [{c: r[c] for c in columns} for r in got] == [
        {c: r[c] for c in columns} for r in expected
    ]


def test_failfast_names_file_offset_and_schema_id(spark, kafka, logs):
    # Past the unframed record, so that the first failure is the unknown id's.
    df = read(spark, logs.log_dir / "orders-0", valueFormat="avro", startingOffsets="3")
    with pytest.raises(Exception) as info:
        df.collect()
    message = str(info.value)
    assert "orders-0/00000000000000000000.log" in message
    assert f"offset {UNKNOWN_ID}" in message
    assert "schema id 99" in message
    assert "_payload_error" not in df.columns  # FAILFAST keeps no error column


def test_rows_a_pushed_where_clause_drops_are_not_decoded(spark, kafka, logs):
    """FAILFAST fails only on rows the query keeps, when the read answers the WHERE clause
    (offsets before 5 hold both undecodable values)."""
    df = read(spark, logs.log_dir / "orders-0", valueFormat="avro", pushFilters="true").where(
        "offset >= 5"
    )
    assert [r["value"] for r in by_offset(df)] == [None, as_v2(logs.expected["orders"][6])]


def test_dropmalformed_drops_rows_that_do_not_decode(spark, kafka, logs):
    df = read(spark, logs.log_dir / "orders-0", valueFormat="avro", mode="DROPMALFORMED")
    assert df.columns[-1] == "value_schema_id"  # no raw bytes, no error column
    rows = by_offset(df)
    kept = [i for i in range(len(logs.values["orders"])) if i not in (UNFRAMED, UNKNOWN_ID)]
    assert [r["offset"] for r in rows] == kept
    assert [r["value"] for r in rows] == [as_v2(logs.expected["orders"][i]) for i in kept]


def test_json_output_over_topics_of_several_formats(spark, kafka, logs):
    df = read(
        spark,
        logs.log_dir,
        valueFormat="schema-registry",
        payloadOutput="json",
        subscribe="orders,clicks",
        mode="PERMISSIVE",
    )
    assert df.schema["value"].dataType == StringType()
    for topic in ("orders", "clicks"):
        rows = by_offset(df.where(f"topic = '{topic}'"))
        got = [None if r["value"] is None else json.loads(r["value"]) for r in rows]
        assert got == logs.expected[topic]


def test_topics_of_different_schemas_need_a_subject(spark, kafka, logs):
    with pytest.raises(Exception, match="several types"):
        read(spark, logs.log_dir, valueFormat="schema-registry", subscribe="orders,clicks")


def test_a_user_schema_takes_the_payload_columns_it_names(spark, kafka, logs):
    schema = (
        "offset bigint, value struct<id:bigint,note:string,state:string>, _payload_error string"
    )
    df = (
        spark.read.format("kafka_log")
        .schema(schema)
        .option("valueFormat", "avro")
        .option("mode", "PERMISSIVE")
        .load(str(logs.log_dir / "orders-0"))
    )
    rows = by_offset(df)
    assert [r["value"] for r in rows] == [as_v2(v) for v in logs.expected["orders"]]
    assert [r["_payload_error"] is None for r in rows] == [
        i not in (UNFRAMED, UNKNOWN_ID) for i in range(len(rows))
    ]
    wrong = spark.read.format("kafka_log").schema("value binary").option("valueFormat", "avro")
    with pytest.raises(Exception, match="must be struct"):
        wrong.load(str(logs.log_dir / "orders-0")).collect()


def test_key_format_reports_keys_apart_from_values(spark, kafka, logs):
    df = read(
        spark,
        logs.log_dir / "orders-0",
        keyFormat="avro",
        keySubject="orders-value",
        valueFormat="avro",
        mode="PERMISSIVE",
    )
    assert df.columns[-5:] == [
        "key_schema_id",
        "value_schema_id",
        "key_raw",
        "value_raw",
        "_payload_error",
    ]
    rows = by_offset(df)
    assert all(r["key"] is None and r["key_raw"] == b"k%d" % i for i, r in enumerate(rows))
    assert all(r["_payload_error"].startswith("key: magic byte") for r in rows)
    assert "; value: " in rows[UNKNOWN_ID]["_payload_error"]


def test_a_stream_decodes_as_a_batch_read(spark, kafka, logs):
    options = {"valueFormat": "avro", "mode": "PERMISSIVE"}
    stream = spark.readStream.format("kafka_log")
    for name, value in options.items():
        stream = stream.option(name, value)
    query = (
        stream.load(str(logs.log_dir / "orders-0"))
        .writeStream.format("memory")
        .queryName("payload_stream")
        .trigger(availableNow=True)
        .start()
    )
    try:
        query.awaitTermination(120)
        got = by_offset(spark.table("payload_stream"))
    finally:
        query.stop()
    assert got == by_offset(read(spark, logs.log_dir / "orders-0", **options))


# --- the functions ------------------------------------------------------------------------------


def test_sql_function_decodes_to_json_text(spark, kafka, logs):
    read(spark, logs.log_dir / "orders-0").createOrReplaceTempView("orders_bytes")
    source = str(logs.log_dir)
    got = spark.sql(
        f"SELECT offset, try_kafka_payload_json(value, 'avro', '{source}') AS j "
        "FROM orders_bytes ORDER BY offset"
    ).collect()
    expected = runtime_rows(logs, value_format="avro", output="json")
    assert [r.j for r in got] == [r["value"] for r in expected]
    assert [r.j is None for r in got] == [v is None for v in logs.expected["orders"]]
    decodable = spark.sql(
        f"SELECT kafka_payload_json(value, 'schema-registry', '{source}') AS j "
        f"FROM orders_bytes WHERE offset NOT IN ({UNFRAMED}, {UNKNOWN_ID}) ORDER BY offset"
    ).collect()
    assert [None if r.j is None else json.loads(r.j) for r in decodable] == [
        v for i, v in enumerate(logs.expected["orders"]) if i not in (UNFRAMED, UNKNOWN_ID)
    ]
    with pytest.raises(Exception, match="schema id 99"):
        spark.sql(
            f"SELECT kafka_payload_json(value, 'avro', '{source}') FROM orders_bytes "
            f"WHERE offset = {UNKNOWN_ID}"
        ).collect()


def test_from_schema_registry_types_a_binary_column(spark, kafka, logs):
    df = read(spark, logs.log_dir / "orders-0")
    source = str(logs.log_dir)
    typed = df.select("offset", from_schema_registry("value", "avro", source, "orders-value"))
    assert typed.schema.fields[1].dataType == ORDER_TYPE
    rows = [r[1] for r in typed.orderBy("offset").collect()]
    assert [None if r is None else r.asDict() for r in rows] == [
        as_v2(v) for v in logs.expected["orders"]
    ]
    strict = df.select(
        from_schema_registry("value", "avro", source, "orders-value", mode="FAILFAST")
    )
    with pytest.raises(Exception, match="magic byte"):
        strict.collect()


# --- options, without a session -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("options", "match"),
    [
        ({"valueFormat": "xml"}, "valueFormat must be one of"),
        ({"valueSubject": "orders-value"}, "valueSubject needs valueFormat"),
        ({"keyMessage": "shop.Key"}, "keyMessage needs keyFormat"),
        ({"schemaRegistry": "/schemas.json"}, "schemaRegistry needs keyFormat or valueFormat"),
        ({"valueFormat": "avro", "payloadOutput": "xml"}, "payloadOutput must be one of"),
    ],
)
def test_payload_options_are_checked(options, match):
    with pytest.raises(OptionError, match=match):
        parse_options({"path": "/x", **options})


def test_payload_options_are_case_insensitive():
    parsed = parse_options(
        {"path": "/x", "VALUEFORMAT": "Avro", "valuesubject": "o-value", "PayloadOutput": "JSON"}
    )
    assert parsed.payloads.value_format == "avro"
    assert parsed.payloads.value_subject == "o-value"
    assert parsed.payloads.output == "json"
    assert parsed.payloads.sides == ("value",)
