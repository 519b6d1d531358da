"""SQL functions over Kafka bytes held in a binary column: Arrow UDFs (``arrow_udf``).

For record sets that arrive as values rather than files in a log directory: ``binaryFile``
rows, raw batches captured from the wire or another system, a compressed payload::

    register(spark)
    spark.sql(\"\"\"
        SELECT path, r.offset, r.value
        FROM binaryFile.`/captures/*.bin`
        LATERAL VIEW explode(kafka_records(content)) AS r
    \"\"\")
    from kafka_format.spark_udfs.functions import kafka_batches
    df.select(kafka_batches("content"))

==========================================  =============================================
function                                    result
==========================================  =============================================
``kafka_records(bytes)``                    ``array<struct<offset, timestamp,
                                            timestampType, key, value, headers>>``: the data
                                            records of a record set (whole batches back to
                                            back), as a read_uncommitted consumer sees them;
                                            fails the query on a damaged batch
``try_kafka_records(bytes)``                the same, null where ``kafka_records`` fails
``kafka_batches(bytes)``                    ``array<struct<...>>``: one entry per batch with
                                            every header field, the codec's name, the stored
                                            and computed CRC and whether it holds; damage is
                                            reported in ``error``, never raised
``kafka_decompress(bytes, codec)``          the decompressed bytes; ``codec`` is a name
                                            (``gzip``, ``snappy``, ``lz4``, ``zstd``,
                                            ``none``) or a Kafka codec id (``'1'``)
``try_kafka_decompress(bytes, codec)``      the same, null where ``kafka_decompress`` fails
``kafka_partition(key, numPartitions)``     ``int``: the partition the Java producer's
                                            default partitioner gives a record with this
                                            serialized key (murmur2, sign bit cleared,
                                            modulo); a string key hashes its UTF-8 bytes;
                                            a null key (placed by the sticky rule, not by
                                            hash) gives null; ``numPartitions`` below 1
                                            fails the query
``kafka_payload_json(bytes, format,         ``string``: a key or value in Confluent's wire
source)``                                   format decoded under the schema its id names,
                                            as compact JSON text (what ``decode_payloads``
                                            and the ``kafka_log`` option ``payloadOutput
                                            json`` give); ``format``: ``avro``,
                                            ``protobuf``, ``json-schema`` or
                                            ``schema-registry``; ``source``: a log dir, a
                                            ``_schemas-N`` dir, a schema export file or a
                                            registry URL; a payload that does not decode
                                            fails the query (row, schema id, why)
``try_kafka_payload_json(bytes, format,     the same, null where ``kafka_payload_json``
source)``                                   fails on a payload (an unknown format or a
                                            source that does not open still fails)
==========================================  =============================================

For a typed value (a struct of the subject's latest schema, as the ``kafka_log`` option
``valueFormat`` gives) from the DataFrame API, :func:`from_schema_registry` (not a SQL
function: a SQL function's type is fixed when registered, this one's is the schema's)::

    from kafka_format.spark_udfs.functions import from_schema_registry
    df.select(from_schema_registry("value", "avro", "/var/lib/kafka", "orders-value").alias("v"))

Null input gives null output. Every function bounds what one batch may inflate to
(``register(spark, max_decompressed_bytes=...)``, 256 MiB by default). They hold a whole value
in memory: for segment files, the ``kafka_log`` data source reads in ranges and splits.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql.functions import arrow_udf
from pyspark.sql.pandas.types import to_arrow_type
from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    BooleanType,
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

from ..runtime.errors import DecompressionError, FramingError, KafkaFormatError
from ..runtime.format import layout
from ..runtime.format.codecs import DEFAULT_MAX_BYTES, Codec, decompress
from ..runtime.format.jsonform import codec_name
from ..runtime.model import Batch, Report
from ..runtime.payloads.columns import ERROR_COLUMN, payload_arrow_type
from ..runtime.payloads.wire import PayloadDecodeError
from ..runtime.read.columnar import HEADER_TYPE, iter_arrow_batches
from ..runtime.read.reader import iter_batches
from ..runtime.write.partitioner import default_partitions
from ._lazy import lazy_functions
from ._options import OptionError
from ._payloads import schema_source, spark_type, task_spec, value_columns
from .datasource import HEADERS_TYPE

RECORD_FIELDS = ("offset", "timestamp", "timestampType", "key", "value", "headers")
RECORDS_TYPE = pa.list_(
    pa.struct(
        [
            pa.field("offset", pa.int64()),
            pa.field("timestamp", pa.timestamp("us", tz="UTC")),
            pa.field("timestampType", pa.int32()),
            pa.field("key", pa.binary()),
            pa.field("value", pa.binary()),
            pa.field("headers", HEADER_TYPE),
        ]
    )
)
RECORDS_SPARK_TYPE = ArrayType(
    StructType(
        [
            StructField("offset", LongType()),
            StructField("timestamp", TimestampType()),
            StructField("timestampType", IntegerType()),
            StructField("key", BinaryType()),
            StructField("value", BinaryType()),
            StructField("headers", HEADERS_TYPE),
        ]
    )
)

_LONG = (pa.int64(), LongType())
_INT = (pa.int32(), IntegerType())
_BOOL = (pa.bool_(), BooleanType())
_STRING = (pa.string(), StringType())
#: (name, (Arrow type, Spark type)) of each kafka_batches field, in order.
BATCH_FIELDS = (
    ("position", _LONG),
    ("size", _INT),
    ("baseOffset", _LONG),
    ("lastOffset", _LONG),
    ("batchLength", _INT),
    ("partitionLeaderEpoch", _INT),
    ("magic", _INT),
    ("crc", _LONG),
    ("computedCrc", _LONG),
    ("crcValid", _BOOL),
    ("attributes", _INT),
    ("codec", _STRING),
    ("timestampType", _INT),
    ("isTransactional", _BOOL),
    ("isControl", _BOOL),
    ("hasDeleteHorizon", _BOOL),
    ("lastOffsetDelta", _INT),
    ("baseTimestamp", _LONG),
    ("maxTimestamp", _LONG),
    ("producerId", _LONG),
    ("producerEpoch", _INT),
    ("baseSequence", _INT),
    ("recordsCount", _INT),
    ("error", _STRING),
)
BATCHES_TYPE = pa.list_(pa.struct([pa.field(n, t[0]) for n, t in BATCH_FIELDS]))
BATCHES_SPARK_TYPE = ArrayType(StructType([StructField(n, t[1]) for n, t in BATCH_FIELDS]))

_CODECS = {c.name.lower(): c for c in Codec}


def records_of(blobs: pa.Array, *, strict: bool, max_bytes: int) -> pa.Array:
    """``kafka_records`` over an Arrow array of binary values."""
    offsets = [0]
    valid = []
    pieces = []
    for i in range(len(blobs)):
        scalar = blobs[i]
        if not scalar.is_valid:
            offsets.append(offsets[-1])
            valid.append(False)
            continue
        try:
            batches = list(
                iter_arrow_batches(
                    memoryview(scalar.as_buffer()),
                    include_headers=True,
                    max_decompressed_bytes=max_bytes,
                    threads=1,  # one value's record set, in a task: Spark runs one a core
                )
            )
        except KafkaFormatError as exc:
            if strict:
                raise KafkaFormatError(f"kafka_records, row {i} of this batch: {exc}") from exc
            offsets.append(offsets[-1])
            valid.append(False)
            continue
        for batch in batches:
            pieces.append(
                pa.StructArray.from_arrays(
                    [batch.column(n) for n in RECORD_FIELDS],
                    fields=list(RECORDS_TYPE.value_type),
                )
            )
        offsets.append(offsets[-1] + sum(b.num_rows for b in batches))
        valid.append(True)
    values = pa.concat_arrays(pieces) if pieces else pa.array([], type=RECORDS_TYPE.value_type)
    mask = pa.array([not v for v in valid], pa.bool_())
    return pa.ListArray.from_arrays(pa.array(offsets, pa.int32()), values, mask=mask)


def batches_of(blobs: pa.Array) -> pa.Array:
    """``kafka_batches`` over an Arrow array of binary values."""
    rows: list[list[dict] | None] = []
    for i in range(len(blobs)):
        scalar = blobs[i]
        if not scalar.is_valid:
            rows.append(None)
            continue
        report = Report()
        entries = [
            _batch_entry(b)
            for b in iter_batches(
                memoryview(scalar.as_buffer()),
                records=False,
                verify_crc="report",
                errors="skip",
                report=report,
            )
        ]
        for exc in report.errors:
            if isinstance(exc, FramingError):  # the walk stopped here; damaged batches are above
                entries.append({"position": exc.position, "error": str(exc)})
        for tail in report.truncated:
            entries.append({"position": tail.position, "size": tail.size, "error": str(tail)})
        rows.append(entries)
    return pa.array(rows, type=BATCHES_TYPE)


def _batch_entry(b: Batch) -> dict:
    return {
        "position": b.position,
        "size": b.size,
        "baseOffset": b.base_offset,
        "lastOffset": b.last_offset,
        "batchLength": b.size - layout.LOG_OVERHEAD,
        "partitionLeaderEpoch": b.partition_leader_epoch,
        "magic": b.magic,
        "crc": b.crc,
        "computedCrc": b.computed_crc,
        "crcValid": b.crc_valid,
        "attributes": b.attributes,
        "codec": codec_name(b.codec),
        "timestampType": b.timestamp_type,
        "isTransactional": b.is_transactional,
        "isControl": b.is_control,
        "hasDeleteHorizon": b.has_delete_horizon,
        "lastOffsetDelta": b.last_offset_delta,
        "baseTimestamp": b.base_timestamp,
        "maxTimestamp": b.max_timestamp,
        "producerId": b.producer_id,
        "producerEpoch": b.producer_epoch,
        "baseSequence": b.base_sequence,
        "recordsCount": b.records_count,
        "error": None if b.error is None else str(b.error),
    }


def decompress_of(blobs: pa.Array, codecs: pa.Array, *, strict: bool, max_bytes: int) -> pa.Array:
    """``kafka_decompress`` over Arrow arrays of binary values and codec names."""
    out: list[bytes | None] = []
    for i in range(len(blobs)):
        scalar, codec = blobs[i], codecs[i]
        if not scalar.is_valid or not codec.is_valid:
            out.append(None)
            continue
        try:
            out.append(_decompress_one(memoryview(scalar.as_buffer()), codec.as_py(), max_bytes))
        except (KafkaFormatError, ValueError) as exc:
            if strict:
                raise KafkaFormatError(f"kafka_decompress, row {i} of this batch: {exc}") from exc
            out.append(None)
    return pa.array(out, pa.binary())


def _decompress_one(data: memoryview, codec: str, max_bytes: int) -> bytes:
    text = str(codec).strip().lower()
    if text.isdigit():
        codec_id = int(text)
    elif text in _CODECS:
        codec_id = int(_CODECS[text])
    else:
        raise ValueError(f"unknown codec {codec!r}; use none, gzip, snappy, lz4, zstd or 0-4")
    try:
        return decompress(codec_id, data, magic=2, max_bytes=max_bytes)
    except DecompressionError:
        if codec_id != Codec.LZ4:
            raise
        # Kafka 0.8/0.9 wrote lz4 frame headers with a checksum newer readers refuse.
        return decompress(codec_id, data, magic=0, max_bytes=max_bytes)


def partitions_of(keys: pa.Array, counts: pa.Array) -> pa.Array:
    """``kafka_partition`` over Arrow arrays of keys and partition counts."""
    bad = pc.less_equal(counts, 0)
    if pc.any(bad).as_py():
        row = pc.index(bad, True).as_py()
        # Spark tells a UDF nothing of where its batch lies: the row is counted within it.
        raise ValueError(
            f"kafka_partition: numPartitions must be at least 1, got {counts[row].as_py()} "
            f"(row {row} of this batch of rows)"
        )
    return default_partitions(keys, counts)


def payload_json_of(
    data: pa.Array, formats: pa.Array, sources: pa.Array, *, strict: bool
) -> pa.Array:
    """``kafka_payload_json`` over Arrow arrays of payloads, formats and sources: the rows of
    each (format, source) pair decoded together, by that pair's cached decoders."""
    kinds, specs = formats.to_pylist(), sources.to_pylist()
    groups: dict[tuple[str, str], list[int]] = {}
    for i in range(len(data)):
        if data[i].is_valid and kinds[i] is not None and specs[i] is not None:
            groups.setdefault((str(kinds[i]).strip().lower(), str(specs[i])), []).append(i)
    out: list[str | None] = [None] * len(data)
    for (kind, spec), rows in groups.items():
        picked = data if len(rows) == len(data) else data.take(pa.array(rows, pa.int64()))
        decoded = _decoded(picked, value_columns(spec, kind), "kafka_payload_json", rows, strict)
        for i, value in zip(rows, decoded.column("value").to_pylist(), strict=True):
            out[i] = value
    return pa.array(out, pa.string())


def _decoded(
    data: pa.Array, columns: Any, function: str, rows: list[int] | None, strict: bool
) -> pa.RecordBatch:
    """``data`` decoded as a ``value`` column; ``strict``: the first row that does not decode
    raises, naming its row in the batch (``rows``: the batch's row of each of ``data``'s)."""
    decoded = columns.decode(pa.RecordBatch.from_arrays([data], names=["value"]))
    if strict:
        errors = decoded.column(ERROR_COLUMN)
        failed = pc.index(pc.is_valid(errors), True).as_py()
        if failed >= 0:
            row = failed if rows is None else rows[failed]
            schema_id = decoded.column("value_schema_id")[failed].as_py()
            what = "" if schema_id is None else f" (schema id {schema_id})"
            why = errors[failed].as_py().removeprefix("value: ")
            # Spark tells a UDF nothing of where its batch lies: the row is counted within it.
            raise PayloadDecodeError(f"{function}, row {row} of this batch{what}: {why}")
    return decoded


def from_schema_registry(
    col: Any,
    format: str,
    source: str,
    subject: str,
    *,
    message: str | None = None,
    mode: str = "PERMISSIVE",
) -> Any:
    """A column of ``col``'s payloads (binary, Confluent's wire format) decoded into the
    struct of ``subject``'s latest schema, as the ``kafka_log`` option ``valueFormat`` types
    ``value``: older versions read as the latest (Avro's resolution: added fields take their
    defaults). ``format``: ``avro``, ``protobuf``, ``json-schema`` or ``schema-registry``;
    ``source``: a log dir, a ``_schemas-N`` dir, a schema export file or a registry URL;
    ``message``: Protobuf only, the message of the latest schema (default its first).

    The type is found here, on the driver, from the source's latest version of ``subject``
    (a subject is needed: a lone column has no topic to name one by). ``mode``:
    ``PERMISSIVE`` (a payload that does not decode is null) or ``FAILFAST`` (it fails the
    query, naming the row in its batch, the schema id and why)."""
    mode = mode.strip().upper()
    if mode not in ("PERMISSIVE", "FAILFAST"):
        raise OptionError(
            f"from_schema_registry: mode must be PERMISSIVE or FAILFAST, not {mode!r}"
        )
    kind = format.strip().lower()
    spec = task_spec(os.fspath(source))
    arrow_type = payload_arrow_type(schema_source(spec), subject, kind=kind, message=message)
    returned = spark_type(arrow_type, f"subject {subject}")
    target = to_arrow_type(returned, timezone="UTC")
    # One token per call: a worker makes new decoders for it, so a later call asks a live
    # registry for the latest version again, as the driver just did.
    token = uuid.uuid4().hex
    strict = mode == "FAILFAST"

    def decode(data: pa.Array) -> pa.Array:
        columns = value_columns(
            spec, kind, subject=subject, message=message, output="struct", token=token
        )
        values = _decoded(data, columns, "from_schema_registry", None, strict).column("value")
        if values.type != arrow_type and not pa.types.is_null(values.type):
            raise PayloadDecodeError(
                f"from_schema_registry: subject {subject}'s latest schema gives {values.type} "
                f"now, not {arrow_type} as when the query was planned: run it again"
            )
        return values.cast(target)

    return arrow_udf(decode, returned)(col)


def make_functions(max_decompressed_bytes: int = DEFAULT_MAX_BYTES) -> dict[str, Callable]:
    """Every SQL function as an Arrow UDF, by its SQL name."""
    limit = max_decompressed_bytes

    def kafka_records(data: pa.Array) -> pa.Array:
        return records_of(data, strict=True, max_bytes=limit)

    def try_kafka_records(data: pa.Array) -> pa.Array:
        return records_of(data, strict=False, max_bytes=limit)

    def kafka_batches(data: pa.Array) -> pa.Array:
        return batches_of(data)

    def kafka_decompress(data: pa.Array, codec: pa.Array) -> pa.Array:
        return decompress_of(data, codec, strict=True, max_bytes=limit)

    def try_kafka_decompress(data: pa.Array, codec: pa.Array) -> pa.Array:
        return decompress_of(data, codec, strict=False, max_bytes=limit)

    def kafka_partition(key: pa.Array, num_partitions: pa.Array) -> pa.Array:
        return partitions_of(key, num_partitions)

    def kafka_payload_json(data: pa.Array, kind: pa.Array, source: pa.Array) -> pa.Array:
        return payload_json_of(data, kind, source, strict=True)

    def try_kafka_payload_json(data: pa.Array, kind: pa.Array, source: pa.Array) -> pa.Array:
        return payload_json_of(data, kind, source, strict=False)

    return {
        "kafka_records": arrow_udf(kafka_records, RECORDS_SPARK_TYPE),
        "try_kafka_records": arrow_udf(try_kafka_records, RECORDS_SPARK_TYPE),
        "kafka_batches": arrow_udf(kafka_batches, BATCHES_SPARK_TYPE),
        "kafka_decompress": arrow_udf(kafka_decompress, BinaryType()),
        "try_kafka_decompress": arrow_udf(try_kafka_decompress, BinaryType()),
        "kafka_partition": arrow_udf(kafka_partition, IntegerType()),
        "kafka_payload_json": arrow_udf(kafka_payload_json, StringType()),
        "try_kafka_payload_json": arrow_udf(try_kafka_payload_json, StringType()),
    }


_NAMES = (
    "kafka_records",
    "try_kafka_records",
    "kafka_batches",
    "kafka_decompress",
    "try_kafka_decompress",
    "kafka_partition",
    "kafka_payload_json",
    "try_kafka_payload_json",
)
#: The functions for the DataFrame API: ``df.select(kafka_records("content"))``; built on first
#: use for the kind of session in use (classic or Connect), so importing needs no session.
_DEFAULTS = lazy_functions(make_functions, _NAMES)
kafka_records = _DEFAULTS["kafka_records"]
try_kafka_records = _DEFAULTS["try_kafka_records"]
kafka_batches = _DEFAULTS["kafka_batches"]
kafka_decompress = _DEFAULTS["kafka_decompress"]
try_kafka_decompress = _DEFAULTS["try_kafka_decompress"]
kafka_partition = _DEFAULTS["kafka_partition"]
kafka_payload_json = _DEFAULTS["kafka_payload_json"]
try_kafka_payload_json = _DEFAULTS["try_kafka_payload_json"]

__all__ = [
    "BATCHES_SPARK_TYPE",
    "RECORDS_SPARK_TYPE",
    "from_schema_registry",
    "kafka_batches",
    "kafka_decompress",
    "kafka_partition",
    "kafka_payload_json",
    "kafka_records",
    "make_functions",
    "payload_json_of",
    "try_kafka_decompress",
    "try_kafka_payload_json",
    "try_kafka_records",
]
