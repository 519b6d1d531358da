"""``kafka_log``: Kafka log segments as a Spark DataFrame (PySpark's Python Data Source API).

Reads segment files the way a consumer would see them, with the columns of Spark's own Kafka
source, without a broker: a partition directory, a Kafka log directory, a segment file, or a
glob of any of them, on a local disk or any filesystem ``pyarrow.fs`` opens.

Usage::

    from kafka_format.spark_udfs import register

    kafka = register(spark)            # the data source and the SQL functions
    df = (
        spark.read.format("kafka_log")
        .option("isolationLevel", "read_committed")
        .option("startingOffsets", '{"orders":{"0":1000}}')
        .option("includeHeaders", "true")
        .load("/var/lib/kafka/data")   # or .../orders-0, or "s3://bucket/kafka/orders-*"
    )
    df.groupBy("topic", "partition").count().show()
    print(kafka.bytes_read.value)      # log bytes the tasks read

Schema, exactly that of Spark's Kafka source (``headers`` only with ``includeHeaders``), taken
from the runtime's one Arrow schema (``kafka_format.runtime.read.columnar_reference.
arrow_schema``)::

    key binary, value binary, topic string, partition int, offset bigint,
    timestamp timestamp, timestampType int, headers array<struct<key:string,value:binary>>

``timestamp`` is null and ``timestampType`` -1 for magic 0 messages (they have none);
``headers`` is null for a record without headers, as in Spark's source. ``topic`` and
``partition`` come from the partition directory name (``orders-0``), null for a file outside
one. Control records (transaction markers) never appear.

Options (names are case-insensitive; an unknown option fails ``load()`` with this list; every
option of Spark's Kafka source (``KafkaSourceProvider``) is accepted):

======================================  ====================  ======================================
option                                  default               meaning
======================================  ====================  ======================================
``path``                                (required)            partition dir, log dir, segment file
                                                              or glob (``*``, ``?``, ``[...]``; in
                                                              URIs ``*`` and ``[...]`` only); what a
                                                              broker never serves is skipped (below)
``includeHeaders``                      ``false``             add the ``headers`` column
``isolationLevel``                      ``read_uncommitted``  ``read_committed`` drops aborted
                                                              transactions and ones with no marker
                                                              yet
``startingOffsets``                     ``earliest``          ``earliest``, one offset for every
                                                              partition, or Spark's JSON
                                                              ``{"topic":{"0":23,"1":-2}}`` (-2
                                                              earliest); partitions it omits start
                                                              at the earliest
``endingOffsets``                       ``latest``            exclusive; ``latest``, one offset, or
                                                              JSON (-1 latest); omitted partitions:
                                                              latest
``startingTimestamp``                   none                  epoch ms for every partition: start at
                                                              the first record with timestamp >= it
                                                              (wins over the two options below, as
                                                              in Spark)
``startingOffsetsByTimestamp``          none                  JSON ``{"topic":{"0":ms}}``; wins over
                                                              ``startingOffsets`` for the partitions
                                                              it names
``endingTimestamp``,                    none                  stop before the first record with
``endingOffsetsByTimestamp``                                  timestamp >= the given one
``mode``                                ``FAILFAST``          ``FAILFAST``, ``DROPMALFORMED``,
                                                              ``PERMISSIVE`` or ``SALVAGE``: see
                                                              below
``columnNameOfCorruptRecord``           ``_corrupt_batch``    PERMISSIVE's corrupt-batch column
``verifyCrc``                           ``true``              check each batch's CRC (CRC-32C /
                                                              CRC-32)
``maxDecompressedBytes``                ``256m``              bound on one batch's decompressed size
                                                              (a larger batch is damage)
``maxBytesPerPartition``                ``128m``              split a segment range larger than this
                                                              at batch boundaries (from ``.index``);
                                                              pack small splits up to this (each
                                                              counts 256 KiB more)
``pushFilters``                         as registered         ``true``: answer WHERE clauses in the
                                                              read (below; needs ``spark.sql.python.
                                                              filterPushdown.enabled``, which
                                                              ``register`` sets); on where Spark
                                                              scopes a pushed read to its query
``maxTimestampLatenessMs``              none                  your word that no record's timestamp
                                                              is more than this many ms below that
                                                              of a record before it in its partition
                                                              (``message.timestamp.before.max.ms``
                                                              plus ``...after.max.ms`` of the
                                                              topic): a pushed ``timestamp <`` bound
                                                              then ends each partition's read at the
                                                              first record at or past bound + this;
                                                              a task that reads a record breaking it
                                                              fails the read, under every mode
``kafka.isolation.level``               (as isolationLevel)   Spark's Kafka-source name for
                                                              ``isolationLevel``
``failOnDataLoss``                      ``true``              a ``startingOffsets`` below a
                                                              partition's log start offset
                                                              (``log-start-offset-checkpoint`` or
                                                              first segment) or past its end fails
                                                              the read, as in Spark; ``false``:
                                                              start at the log start / read nothing
                                                              past the end, and log a WARNING
``subscribe``                           all topics            comma-separated topic names to read
``subscribePattern``                    all topics            a regex the whole topic name matches
``assign``                              all partitions        JSON ``{"orders":[0,1],"users":[2]}``;
                                                              a partition not under the path fails
``startingOffsetsByTimestampStrategy``  ``error``             ``error``: a partition with no record
                                                              at or after its starting timestamp
                                                              fails the read (Spark's default);
                                                              ``latest``: it yields nothing
``minPartitions``                       none                  at least about this many input
                                                              partitions (as Spark's: a hint; larger
                                                              ranges are cut at batch boundaries)
``maxRecordsPerPartition``              none                  input partitions of at most about this
                                                              many offsets (by the range's bytes per
                                                              offset; a batch is never split)
``maxOffsetsPerTrigger``,               none                  streams only (:mod:`.streaming`); a
``minOffsetsPerTrigger``,                                     batch read ignores them with a
``maxTriggerDelay``                                           WARNING, as Spark's Kafka source does
``keyFormat``, ``valueFormat``          none (bytes)          decode the key / value from
                                                              Confluent's wire format: ``avro``,
                                                              ``protobuf``, ``json-schema`` or
                                                              ``schema-registry`` (the format of the
                                                              id's schema); see "Payloads" below
``schemaRegistry``                      the path's            where the schemas are: a log dir, a
                                        ``_schemas``          ``_schemas-N`` dir, a schema export
                                                              file (``GET /schemas``) or a registry
                                                              URL; by default the ``_schemas``
                                                              partition in or above the path
``keySubject``, ``valueSubject``        ``<topic>-key``,      the subject whose latest schema types
                                        ``<topic>-value``     the column (Confluent's
                                                              TopicNameStrategy by default)
``keyMessage``, ``valueMessage``        the first message     Protobuf: the message (full name) of
                                                              the latest schema that types the
                                                              column
``payloadOutput``                       ``struct``            ``struct`` (the latest schema's type)
                                                              or ``json`` (compact JSON text, as
                                                              written)
``groupIdPrefix``,                      none                  accepted so that a query ported from
``fetchOffset.numRetries``,                                   Spark's Kafka source runs unchanged,
``fetchOffset.retryIntervalMs``,                              and named in one WARNING per read:
``kafkaConsumer.pollTimeoutMs``,                              they need a broker, a consumer or a
any other ``kafka.*``                                         consumer group, none of which there is
                                                              offline
======================================  ====================  ======================================

Speed: ask for the columns the query needs. PySpark (4.3) prunes no column of a Python data
source (its ``PythonScanBuilder`` takes filters only), so ``count()`` and ``groupBy("topic",
"partition")`` get every column of the schema, and every row of every column crosses from the
Python worker to the JVM as Arrow and becomes a Spark row there: that, not decoding, is most of
a read's time. A narrower user schema, in any order, e.g. ``.schema("topic string, partition
int")`` for counts per partition, or ``"offset bigint, timestamp timestamp"``, hands Spark only
those columns (the batches are still all read, CRC-checked and decoded). In
``bench/results.md`` (section "Spark: ``kafka_log`` against Spark's Parquet reader") it takes a
count over 3.6 M records from 1.12 s to 0.78 s and a group-by from 1.08 s to 0.79 s.

At most one of ``subscribe``, ``subscribePattern`` and ``assign``, as in Spark's Kafka source
(``KafkaSourceProvider``); a file outside any ``topic-N`` directory belongs to no topic, so
they exclude it.

Sizes take a byte count or a suffix: ``512k``, ``128m``, ``1g``. A partition with no record at
or after a starting timestamp fails the read, as in Spark's Kafka source
(``startingOffsetsByTimestampStrategy=error``, the default); with ``latest`` it yields nothing.
A partition with none at or after an ending timestamp is read to its end.

Damaged batches (a CRC that does not hold, records that do not parse, a codec that fails or
inflates past ``maxDecompressedBytes``) follow Spark's file-source modes:

* ``FAILFAST`` (the default, as Spark's Kafka source fails on a corrupt record): the query
  fails with the file, the byte position in it, the batch's base offset and the reason.
* ``DROPMALFORMED``: the batch is dropped.
* ``PERMISSIVE``: the batch is dropped unless the schema given with ``.schema(...)`` has the
  corrupt-batch column (``_corrupt_batch``, or ``columnNameOfCorruptRecord``), as Spark's
  CSV/JSON sources keep corrupt records only in such a column. Then each damaged batch is one
  row: ``topic``, ``partition``, ``offset`` = its base offset, the column = the error
  (``string``) or the batch's raw bytes (``binary``, ready for ``kafka_batches``), other
  columns null. E.g. ``.schema(KAFKA_SCHEMA_DDL + ", _corrupt_batch string")``.
* ``SALVAGE``: as ``PERMISSIVE``, and framing damage (a broken length or magic, a zeroed or
  overwritten region) is passed over too: it is reported (a row in the corrupt-batch column,
  when the schema has one) and the read goes on at the next whole batch whose CRC holds, to
  the end of the split, as the runtime's ``errors="salvage"`` reads (the same rows as
  ``read_table(path, errors="salvage")``). A split is then read in one piece.

Every mode counts damaged batches in ``register(spark).corrupt_batches``. A truncated batch at
the end of a file is not damage (Kafka stops reading there too), and a damaged length field
ends that task's read of the segment (but under ``SALVAGE``).

Payloads (``keyFormat`` / ``valueFormat``, :mod:`._payloads`): keys and values written by
Confluent's serializers, decoded by the runtime's ``decode_payloads`` code (the same verdict
as ``decode_payloads(read_table(...))``)::

    orders = (
        spark.read.format("kafka_log")
        .option("valueFormat", "avro")         # or protobuf, json-schema, schema-registry
        .option("mode", "PERMISSIVE")          # keep what does not decode, and say why
        .load("/var/lib/kafka/data/orders-0")  # schemas: /var/lib/kafka/data/_schemas-0
    )
    orders.select("offset", "value.id", "value.state", "_payload_error")

The column becomes a struct of the subject's latest schema (``payloadOutput=json``: a
string), typed on the driver before any row is read; records of older versions are read as
the latest (Avro's resolution: added fields take their defaults). The subject is
``valueSubject``, or ``<topic>-value`` for each topic the read covers: when those topics'
latest schemas give different types the read fails naming them (read one topic with
``subscribe``, give ``valueSubject``, or ``payloadOutput=json``), as it does when none of
them has a live version. Added after the source's columns, for each side decoded:
``key_schema_id`` / ``value_schema_id`` (int, null for a null or unframed payload), and under
``PERMISSIVE`` and ``SALVAGE`` ``key_raw`` / ``value_raw`` (the bytes as read) and
``_payload_error`` (``"value: <why>"``, a key's and a value's joined by ``"; "``; null for a
row that decoded). ``_payload_error`` is not ``columnNameOfCorruptRecord``, which names the
corrupt-*batch* column: a batch and a payload are damaged in different ways, and a row may
carry both. The read's ``mode`` decides what a payload that does not decode does:

* ``FAILFAST``: the task fails with the segment file, the offset, the schema id and why;
* ``DROPMALFORMED``: its row is dropped (as Spark's file sources drop a malformed record);
* ``PERMISSIVE``, ``SALVAGE``: its column is null, the bytes and the reason are kept.

A null key or value (a tombstone) is null, never an error. A user schema may name any of
these columns with these types. WHERE clauses the read answers (below) drop rows before
their payloads are decoded. A stream (:mod:`.streaming`) decodes as a batch read does, typed
once when the query starts. For a binary column from elsewhere, the SQL functions
``kafka_payload_json`` / ``try_kafka_payload_json`` and ``functions.from_schema_registry``.

What is read is what the broker serves, on every path and every glob match, by the rules of
the runtime (``kafka_format.runtime.read.sources.discover``; Kafka's ``LocalLog`` and
``LogFileUtils`` suffixes): a ``topic-N.<uuid>-delete`` directory (renamed for deletion),
``-future`` (a replica being moved between log dirs) or ``-stray`` (no longer assigned), and a
file ending ``.deleted``, ``.cleaned`` or ``.swap``, are never read as data, so
``load("data/orders-*")`` counts partition 0 once even beside ``orders-0.<uuid>-delete``. Each
path passed over is logged once on the driver, by the Python process that plans the read,
as a WARNING of the ``kafka_format.spark_udfs`` logger: ``kafka_log: skipped <path>: <reason>``
(Python data sources have no custom metrics to count them in). A path that names only such
things reads no rows.

Partitioning and pruning: a split per segment, a segment range larger than
``maxBytesPerPartition`` split at batch boundaries found through its ``.index``; consecutive
small splits of one partition packed into one task, each split counted with 256 KiB more
(``_planning.tasks``, as Spark's file sources pack small files with
``spark.sql.files.openCostInBytes``): a task costs Spark tens of milliseconds, a small
segment's read well under one), and a task's whole local segments are one read, so that
small ones are decoded together (a directory of 1,225 segments of 32 KiB: 14 tasks and under
a second for a ``count()``, 32 s at a task a segment). Offsets and
timestamps are pruned on the driver through the file names, ``.index`` and ``.timeindex``, so
the tasks read only the byte ranges that hold the wanted offsets; ``register(spark).bytes_read``
counts what the tasks read. ``read_committed`` needs every aborted transaction overlapping the
read: the driver reads the ``.txnindex`` files and walks the batch headers (61 bytes a batch)
from the read's start to the transactions' markers, so each task drops the right batches
however the segment is split. Where an index is missing, damaged, or disagrees with its log,
the driver walks that segment's headers instead: slower planning, same rows.

WHERE clauses (filter pushdown, :mod:`._pushdown`): with ``pushFilters`` on (the source
``register(spark)`` registers turns it on where Spark keeps a pushed-down read to the query
that pushed it: not Spark 4.3, whose ``PythonDataSourceV2`` hands a DataFrame's last pushed
read to its later queries without a WHERE clause, so that there a read asks for it with
``.option("pushFilters", "true")`` on a DataFrame loaded for that one query; ``register``
also sets ``spark.sql.python.filterPushdown.enabled``, without which Spark refuses a reader
that takes filters), the read answers the filters Spark
pushes on ``topic``, ``partition``, ``offset``, ``timestamp`` and ``timestampType``
(comparisons, ``<=>``, ``IN``, ``BETWEEN``, ``IS [NOT] NULL``, ``NOT`` of one, their ANDs;
``LIKE 'x%'`` and the like on ``topic``) and hands the rest back to Spark (``key``,
``value``, ``headers``; an ``OR`` Spark does not push at all). Topic and partition filters
choose the partitions planned. Offset bounds, and a least timestamp (``>``, ``>=``, ``=``,
``IN``, ``BETWEEN``: the read starts at the first record at or after it, found as
ListOffsets finds it), prune segments and byte windows as the options above do, but they fail
nothing (no data loss, no ``startingOffsetsByTimestampStrategy``) and only ever narrow the
options. An upper bound on ``timestamp`` prunes nothing, as a later record may be older,
unless ``maxTimestampLatenessMs`` bounds how much older (the table above).
The tasks keep exactly the rows the filters keep, so the rows are those of the same query
without pushdown (on a damaged log, damage outside what is read goes unseen, as with
``startingOffsets``); a schema with the corrupt-batch column, and ``SALVAGE``, push nothing.

Planning runs on the runtime's partition layer (``kafka_format.runtime.log.partition``) over
the reader protocol of ``kafka_format.runtime.files.storage``: memory-mapped files for a bare
path, ranged reads for a URI. On a URI, a segment in which a starting or ending offset or
timestamp lands is fetched once, whole, by the driver for the look-up; split points cost a
header read each.

Other filesystems: a URI is opened with ``pyarrow.fs.FileSystem.from_uri`` on the driver and in
every task, e.g. ``s3://bucket/kafka/orders-0``, ``gs://bucket/logs``,
``hdfs://namenode:8020/kafka``, ``file:///var/lib/kafka``. Credentials come from the
environment as pyarrow looks for them (AWS_* variables, instance profiles, GOOGLE_APPLICATION_
CREDENTIALS, the Hadoop configuration); options go in the query string, e.g.
``s3://bucket/logs?region=eu-west-1&endpoint_override=minio:9000&scheme=http``. A task
fetches its split in ranged requests of 16 MiB (a larger batch: the rest of the split at once;
SALVAGE: the split at once, as its walk looks ahead), each read up to its last whole batch; a
bare path is memory-mapped instead. Either way the task reads its split as ``read_table``
reads a file (``spark_udfs/_reading.py``).

``s3a://`` and ``s3n://`` (Hadoop's names) are read as ``s3://``.

Executors need this package installed (``pip install kafka-format[spark]``), as they decode
the batches in Python, and so does the driver's Python, which plans: ``register(spark)``
checks both (see ``docs/spark-cluster.md``). Under Spark Connect there are no accumulators:
the ``kafka_log_metrics`` source (:mod:`.metrics`) gives a read's counts as rows.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from typing import Any

from pyspark.sql.datasource import DataSource, DataSourceReader, Filter, InputPartition
from pyspark.sql.pandas.types import from_arrow_schema, to_arrow_schema
from pyspark.sql.types import BinaryType, StringType, StructType

from ..runtime.read.columnar_reference import arrow_schema
from ._options import LOG, KafkaLogOptions, OptionError, parse_options
from ._payloads import PayloadPlan, plan_payloads
from ._planning import KafkaLogSplit, PackedSplits, plan, tasks
from ._pushdown import LatenessCheck, Pushdown, translate
from ._reading import Counters, Output, read_split, read_splits
from .sink import KafkaLogWriter, writer_for
from .streaming import KafkaLogStreamReader
from .streaming_offsets import parse_stream_options, schema_options

NAME = "kafka_log"

# The one schema: the runtime's Arrow schema (what read_table and the columnar reader
# produce), turned into Spark types here rather than typed a second time.
_FULL = from_arrow_schema(arrow_schema(include_headers=True))
_TYPES = {f.name: f.dataType for f in _FULL.fields}
HEADERS_TYPE = _TYPES["headers"]

#: The schema as DDL, for ``.schema(KAFKA_SCHEMA_DDL + ", _corrupt_batch string")``.
KAFKA_SCHEMA_DDL = ", ".join(f"`{f.name}` {f.dataType.simpleString()}" for f in _FULL.fields)


def kafka_schema(include_headers: bool = False) -> StructType:
    """Spark's Kafka source schema (``headers`` last, only with ``include_headers``)."""
    return from_arrow_schema(arrow_schema(include_headers=include_headers))


class KafkaLogDataSource(DataSource):
    """The ``kafka_log`` data source; see the module docstring."""

    #: Set on the class :func:`~kafka_format.spark_udfs.register` registers; None otherwise.
    bytes_read_accumulator: Any = None
    corrupt_batches_accumulator: Any = None
    #: Whether reads answer WHERE clauses (:class:`KafkaLogPushdownReader`) unless the option
    #: ``pushFilters`` says otherwise: True on the class ``register`` registers, as it turns
    #: on ``spark.sql.python.filterPushdown.enabled``, without which Spark refuses such a
    #: reader.
    push_filters: bool = False

    @classmethod
    def name(cls) -> str:
        return NAME

    def schema(self) -> StructType:
        options = parse_options(schema_options(self.options))
        base = kafka_schema(options.include_headers)
        payloads = plan_payloads(options)
        return base if payloads is None else payloads.schema(base)

    def reader(self, schema: StructType) -> KafkaLogReader:
        options = parse_options(self.options)
        options.warn_ignored()
        push = type(self).push_filters if options.push_filters is None else options.push_filters
        if options.push_filters and not type(self).push_filters:
            LOG.warning(
                "kafka_log: pushFilters=true where Spark was not found to keep a pushed-down "
                "read to its own query: on Spark 4.3 (PythonDataSourceV2.setReadInfo) a query "
                "of this DataFrame without a WHERE clause would read only the last WHERE "
                "clause's rows. Load a new DataFrame for each filtered query."
            )
        output, payloads = outputs_for(schema, options)
        return (KafkaLogPushdownReader if push else KafkaLogReader)(
            options,
            output,
            Counters(type(self).bytes_read_accumulator, type(self).corrupt_batches_accumulator),
            payloads,
        )

    def streamReader(self, schema: StructType) -> KafkaLogStreamReader:
        """``spark.readStream.format("kafka_log")``: see :mod:`.streaming`."""
        options = parse_stream_options(self.options)
        options.base.warn_ignored("stream")
        output, payloads = outputs_for(schema, options.base)
        return KafkaLogStreamReader(
            options,
            output,
            Counters(type(self).bytes_read_accumulator, type(self).corrupt_batches_accumulator),
            payloads,
        )

    def writer(self, schema: StructType, overwrite: bool) -> KafkaLogWriter:
        """``df.write.format("kafka_log").save(dir)``: partition directories a broker loads;
        options, modes and checks in :mod:`.sink` (schema and options checked here)."""
        return writer_for(self.options, schema, overwrite)


class KafkaLogReader(DataSourceReader):
    """Plans on the driver (:meth:`partitions`), reads in the tasks (:meth:`read`)."""

    def __init__(
        self,
        options: KafkaLogOptions,
        output: Output,
        counters: Counters,
        payloads: PayloadPlan | None = None,
    ) -> None:
        self.options = options
        #: What the split reader gives (with payloads: the bytes the tasks then decode).
        self.output = output
        self.counters = counters
        #: keyFormat / valueFormat: how the tasks decode and type the payloads.
        self.payloads = payloads

    def partitions(self) -> list[InputPartition]:
        return list(tasks(plan(self.options), self.options))

    def read(self, partition: InputPartition):
        if isinstance(partition, PackedSplits):  # small segments, one task
            splits = partition.splits
            if self.payloads is None and self._joins():
                # one read of them all: the runtime decodes small segments together
                rows = read_splits(splits, self.options, self.output, self.counters)
                return self.kept(rows, splits[0])
            return itertools.chain.from_iterable(map(self._split, splits))
        if not isinstance(partition, KafkaLogSplit):
            return iter(())  # Spark's stand-in partition when planning found nothing
        return self._split(partition)

    def _split(self, split: KafkaLogSplit):
        rows = self.rows(split)
        return rows if self.payloads is None else self.payloads.decode(rows, split.name)

    def rows(self, partition: KafkaLogSplit):
        """The split's rows as read, before payloads are decoded."""
        return self.kept(read_split(partition, self.options, self.output, self.counters), partition)

    def kept(self, rows, split: KafkaLogSplit):
        """What the reader keeps of rows read (from ``split``, or from the splits of a packed
        task after it): all of them."""
        return rows

    def _joins(self) -> bool:
        """Whether a packed task's splits may be one read, their rows in batches that span
        segments: not where a split's name goes with its rows (payloads decoded under
        FAILFAST name the file of a failing row; see the subclass)."""
        return True


class KafkaLogPushdownReader(KafkaLogReader):
    """A :class:`KafkaLogReader` that answers the WHERE clauses it can exactly
    (:mod:`._pushdown`): topic and partition filters choose the partitions planned, offset
    and timestamp bounds prune segments and byte windows through ``.index`` / ``.timeindex``,
    and the tasks keep only the rows the filters on offset, timestamp and timestampType
    keep. Spark refuses to plan with a reader that implements ``pushFilters`` while
    ``spark.sql.python.filterPushdown.enabled`` is false (``DATA_SOURCE_PUSHDOWN_DISABLED``,
    pyspark/sql/worker/plan_data_source_read.py), hence a class of its own."""

    #: The WHERE clause's bounds, once :meth:`pushFilters` has taken them.
    pushdown: Pushdown | None = None

    def pushFilters(self, filters: list[Filter]) -> Iterable[Filter]:
        if self.output.corrupt_column is not None or self.options.mode == "SALVAGE":
            # A damaged batch's row (offset = base offset, other columns null) and salvage's
            # resynchronising walk depend on what is read: read it all, let Spark filter.
            return filters
        self.pushdown, returned = translate(filters)
        return returned

    def partitions(self) -> list[InputPartition]:
        return list(tasks(plan(self.options, self.pushdown), self.options))

    def kept(self, rows, split: KafkaLogSplit):
        # Filtered before payloads are decoded: rows the WHERE clause drops are not decoded
        # (nor fail a FAILFAST read).
        push = self.pushdown
        if push is None:
            return rows
        if self._lateness_checked():
            rows = LatenessCheck(self.options.timestamp_lateness_ms, split.name).rows(rows)
        return push.filter(rows)

    def _joins(self) -> bool:
        # the lateness check names the file of the records it finds: a read a split
        return not self._lateness_checked()

    def _lateness_checked(self) -> bool:
        push = self.pushdown
        lateness = self.options.timestamp_lateness_ms
        return push is not None and lateness is not None and push.end_timestamp is not None


def output_for(schema: StructType, options: KafkaLogOptions) -> Output:
    """Check a schema (the default one or the user's) against the source's columns."""
    corrupt = check_schema(schema, options, _TYPES)
    return Output(
        schema=to_arrow_schema(schema, timezone="UTC"),
        include_headers="headers" in schema.fieldNames(),
        corrupt_column=corrupt,
    )


def outputs_for(schema: StructType, options: KafkaLogOptions) -> tuple[Output, PayloadPlan | None]:
    """:func:`output_for`, and with keyFormat / valueFormat the payloads' plan: the schema is
    checked against the payload columns' types, and the split reader is asked for the bytes
    (and what decoding needs) that the tasks then decode into ``schema``."""
    payloads = plan_payloads(options)
    if payloads is None:
        return output_for(schema, options), None
    corrupt = check_schema(schema, options, payloads.column_types(_TYPES))
    raw = payloads.raw_schema(schema, _TYPES, corrupt)
    output = Output(
        schema=to_arrow_schema(raw, timezone="UTC"),
        include_headers="headers" in raw.fieldNames(),
        corrupt_column=corrupt,
    )
    return output, payloads.for_schema(schema)


def check_schema(schema: StructType, options: KafkaLogOptions, types: dict[str, Any]) -> str | None:
    """Check each column of ``schema`` against ``types`` (by name); the corrupt-batch column's
    name when the schema has it."""
    corrupt = None
    for f in schema.fields:
        if f.name == options.corrupt_column:
            if not isinstance(f.dataType, StringType | BinaryType):
                raise OptionError(
                    f"the corrupt-batch column {f.name!r} must be string or binary, "
                    f"not {f.dataType.simpleString()}"
                )
            corrupt = f.name
            continue
        expected = types.get(f.name)
        if expected is None:
            raise OptionError(
                f"column {f.name!r} is not a column of the kafka_log source; its columns: "
                + ", ".join(types)
                + f", and the corrupt-batch column {options.corrupt_column!r} (string or binary)"
            )
        if f.dataType != expected:
            raise OptionError(
                f"column {f.name!r} must be {expected.simpleString()}, "
                f"not {f.dataType.simpleString()}"
            )
    return corrupt


__all__ = [
    "KAFKA_SCHEMA_DDL",
    "NAME",
    "KafkaLogDataSource",
    "KafkaLogPushdownReader",
    "KafkaLogReader",
    "kafka_schema",
]
