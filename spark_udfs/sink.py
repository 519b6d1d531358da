"""The ``kafka_log`` sink: a DataFrame with the source's columns written as partition
directories a Kafka broker loads (PySpark's ``DataSourceArrowWriter``).

Usage (filter a backup, write it back, recompressed)::

    from kafka_format.spark_udfs import register

    register(spark)
    df = (spark.read.format("kafka_log").option("includeHeaders", "true")
          .load("/backup/kafka-logs"))
    (df.where("key IS NULL OR key != X'637573742d3432'")       # drop customer cust-42
       .write.format("kafka_log")
       .mode("overwrite")                                      # or "append": see below
       .option("compression", "zstd")
       .save("/restore/kafka-logs"))

The columns are the source's (``key binary, value binary, topic string, partition int, offset
bigint, timestamp timestamp, timestampType int``, and ``headers array<struct<key:string,
value:binary>>`` if there are headers to keep), names and types exactly; any other column, or a
missing one, fails the write before any task runs. ``topic`` and ``partition`` may be left out
when the options of those names give them. What is written:

* one ``topic-N`` directory per (topic, partition), each record at its own offset: batches
  are appended as a follower copies them (``base_offset``, offset deltas), so gaps in the
  offsets (compaction, a filter, transaction markers a read leaves out) stay gaps, as after
  the log cleaner; two rows with one offset in a partition fail the write, naming the
  partition and the offset;
* timestamps as they were: CreateTime records carry theirs; rows with ``timestampType`` 1 go
  in batches with LogAppendTime set and that time as the batch's, as the broker stamps them
  (``LogValidator``); a row with no timestamp (a magic 0 message) gets -1, ``NO_TIMESTAMP``,
  with CreateTime, as Kafka's up-conversion gives it;
* v2 batches only (v0/v1 segments read from a backup come out as v2), in offset order, of at
  most ``recordsPerBatch`` records and about ``maxBatchBytes``, compressed with
  ``compression``, leader epoch 0 (``leader-epoch-checkpoint``: ``0 <first offset>``), no
  producer ids (producer state and transactions are not columns: aborted records a
  ``read_uncommitted`` read returns are written as plain records; read with
  ``isolationLevel=read_committed`` to leave them out);
* by the runtime's broker-like writer (``PartitionWriter``, Kafka's ``UnifiedLog`` /
  ``LogSegment`` rules): segments rolled at ``segmentBytes``, ``.index`` / ``.timeindex``
  entries every ``indexIntervalBytes``, producer snapshots at each roll and at the end, indexes
  trimmed as after a clean shutdown;
* in the log dir, ``recovery-point-offset-checkpoint`` and ``replication-offset-checkpoint``
  (high watermark) at each written partition's log end offset, and ``log-start-offset-
  checkpoint`` and ``cleaner-offset-checkpoint`` without an entry for it (the log starts at
  its first segment; the cleaner starts over), other partitions' entries kept;
* ``partition.metadata`` when the topic's id is known: the option ``topicIds``, or a partition
  of the topic already in the target dir.

Options (names are case-insensitive; an unknown one fails the write with this list):

========================  ==============  =================================================
option                    default         meaning
========================  ==============  =================================================
``path``                  (required)      the log dir to write into: a local directory, or
                                          one every executor and the driver mount
``compression``           ``none``        ``none``, ``gzip``, ``snappy``, ``lz4``, ``zstd``
``compressionLevel``      the codec's     an integer level for the codec
``recordsPerBatch``       ``1000``        most records in one batch
``maxBatchBytes``         ``1m``          a batch's records' bytes before compression, about
                                          (a larger record gets a batch of its own)
``segmentBytes``          ``1g``          ``segment.bytes``: a segment rolls before an append
                                          that would take it past this
``indexIntervalBytes``    ``4096``        ``index.interval.bytes``
``topic``                 none            the topic of rows whose ``topic`` is null or absent
``partition``             none            likewise for ``partition``
``topicIds``              none            JSON ``{"orders": "<22-character base64 id>"}``:
                                          written to the partitions' ``partition.metadata``
========================  ==============  =================================================

Modes (Spark's Python data sources take only these two):

* ``mode("overwrite")`` replaces the partitions the DataFrame has rows for, each one whole;
  every other partition directory and file in the log dir stays as it was (a log dir may hold
  other topics; this is Spark's dynamic partition overwrite, not a truncation).
* ``mode("append")`` adds partitions that are not in the log dir yet; a partition that is
  already there fails the write, naming it, before anything moves (appending after a
  partition's log end would also have to carry its producer state and leader epochs on: write
  the whole partition with ``overwrite`` instead).

Either way a DataFrame with no rows writes nothing.

Atomic per partition: each task writes the rows it got into its own staging directory,
``<path>/.kafka_log-staging/<write id>/task-<partition>-<attempt>/topic-N``; only when every
task succeeded does the driver's commit rename each complete ``topic-N`` into place (an
overwritten one is renamed aside first, then removed), then write the checkpoints. A failed
task, a refused commit or an aborted job leaves no partition directory and removes the staging
area (a broker refuses a log dir holding a directory that is not a partition's). A rerun
replaces what an earlier run wrote (``overwrite``).

A partition whose rows reach several tasks is written by each as its own segments, laid end to
end at commit, if their offset ranges do not overlap (e.g. a read split one segment in two);
interleaved offsets (after ``repartition(n)``) fail the commit: ``df.repartition("topic",
"partition")`` gives each partition to one task. A task sorts its rows by offset in memory.

The tasks write through the filesystem: ``path`` must be a directory the driver and every
executor see (a local path in local mode; a shared mount on a cluster), not an object store
URI. Write to a log dir no broker is running on, then start the broker on it (or move the
partition directories into its log dir while it is stopped). No ``.kafka_cleanshutdown``
marker is written: that is the broker's; without it a broker checks the logs from the recovery
point, which is their end.
"""

from __future__ import annotations

import contextlib
import json
import re
import shutil
import uuid
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
from pyspark import TaskContext
from pyspark.sql.datasource import DataSourceArrowWriter, WriterCommitMessage
from pyspark.sql.pandas.types import from_arrow_schema
from pyspark.sql.types import StructType

from ..runtime.errors import KafkaFormatError
from ..runtime.files.checkpoints import (
    PARTITION_METADATA,
    parse_partition_metadata,
    read_partition_metadata,
)
from ..runtime.files.names import DirState, parse_partition_dir_name
from ..runtime.format.codecs import Codec
from ..runtime.read.columnar_reference import arrow_schema
from ..runtime.write.writer import DEFAULT_INDEX_INTERVAL_BYTES, DEFAULT_SEGMENT_BYTES
from ._options import OptionError, parse_size
from ._sink_commit import (
    SinkError,
    StagedPiece,
    publish,
    remove_staging,
    staging_area,
)
from ._sink_stage import StageSettings, check_topic, stage

OPTION_NAMES = (
    "path",
    "compression",
    "compressionLevel",
    "recordsPerBatch",
    "maxBatchBytes",
    "segmentBytes",
    "indexIntervalBytes",
    "topic",
    "partition",
    "topicIds",
)
DEFAULT_RECORDS_PER_BATCH = 1000
#: How long an abort keeps removing the staging area while cancelled tasks still write.
ABORT_SETTLE_S = 10.0
DEFAULT_MAX_BATCH_BYTES = 1 << 20
_CANONICAL = {name.lower(): name for name in OPTION_NAMES}
_CODECS = {codec.name.lower(): codec for codec in Codec}
_INT32_MAX = 0x7FFFFFFF

# The source's columns, from the runtime's one Arrow schema (as the reader takes them).
_COLUMNS = {
    f.name: f.dataType.simpleString()
    for f in from_arrow_schema(arrow_schema(include_headers=True)).fields
}
_REQUIRED = ("key", "value", "topic", "partition", "offset", "timestamp", "timestampType")


@dataclass(frozen=True, slots=True)
class SinkOptions:
    """The checked options of one write."""

    path: Path
    settings: StageSettings


@dataclass(frozen=True, slots=True)
class SinkCommitMessage(WriterCommitMessage):
    """What a task staged: one piece per (topic, partition) it had rows for."""

    pieces: tuple[StagedPiece, ...] = ()


def parse_sink_options(raw: Mapping[str, str]) -> SinkOptions:
    """Check every option; raises :class:`OptionError` (one line) on the driver."""
    given: dict[str, str] = {}
    for name, value in raw.items():
        canonical = _CANONICAL.get(name.lower())
        if canonical is None:
            raise OptionError(
                f"unknown option {name!r} for writing kafka_log; options: {', '.join(OPTION_NAMES)}"
            )
        given[canonical] = value
    path = _target(given.get("path"))
    codec_name = given.get("compression", "none").strip().lower()
    if codec_name not in _CODECS:
        raise OptionError(
            f"option compression must be one of {', '.join(_CODECS)}, not {codec_name!r}"
        )
    partition = _int(given, "partition", None, 0)
    topic = given.get("topic")
    if topic is not None:
        _checked(check_topic, topic)
    settings = StageSettings(
        codec=_CODECS[codec_name],
        compression_level=_int(given, "compressionLevel", None, -(1 << 31)),
        records_per_batch=_int(given, "recordsPerBatch", DEFAULT_RECORDS_PER_BATCH, 1),
        max_batch_bytes=_size(given, "maxBatchBytes", DEFAULT_MAX_BATCH_BYTES, 1),
        segment_bytes=_size(given, "segmentBytes", DEFAULT_SEGMENT_BYTES, 1),
        index_interval_bytes=_size(given, "indexIntervalBytes", DEFAULT_INDEX_INTERVAL_BYTES, 0),
        topic=topic,
        partition=partition,
        topic_ids=_topic_ids(given.get("topicIds"), path),
    )
    return SinkOptions(path, settings)


def _target(path: str | None) -> Path:
    if not path:
        raise OptionError("writing kafka_log needs a path: .save('/path/to/log-dir')")
    if path.startswith("file://"):
        path = path.removeprefix("file://")
    elif "://" in path:
        raise OptionError(
            f"kafka_log writes to a directory the driver and every executor see (a local path "
            f"or a shared mount), not {path!r}: it renames whole partition directories"
        )
    target = Path(path)
    if target.is_dir() and any(target.glob("*.log")):
        raise OptionError(
            f"{target} holds segments: it is a partition directory; give the log dir above it"
        )
    return target


def _checked(check, value: str) -> None:
    try:
        check(value)
    except SinkError as exc:
        raise OptionError(str(exc)) from None


def _int(given: dict[str, str], name: str, default: int | None, minimum: int) -> int | None:
    if name not in given:
        return default
    text = given[name].strip()
    if not re.fullmatch(r"[+-]?\d+", text) or not minimum <= int(text) <= _INT32_MAX:
        raise OptionError(f"option {name} must be an integer from {minimum}, not {given[name]!r}")
    return int(text)


def _size(given: dict[str, str], name: str, default: int, minimum: int) -> int:
    """A byte count with an optional suffix (``512k``, ``1g``), as the read options take."""
    return parse_size(given, name, default, minimum=minimum, maximum=_INT32_MAX)


def _topic_ids(text: str | None, target: Path) -> dict[str, str]:
    """The option's ids, and those of topics with a partition already in the target (a
    topic's partitions share its id, which the broker checks against the cluster's)."""
    given: dict[str, str] = {}
    if text is not None:
        try:
            parsed = json.loads(text)
        except ValueError:
            parsed = None
        if not isinstance(parsed, dict) or not all(isinstance(v, str) for v in parsed.values()):
            raise OptionError(
                f'option topicIds must be JSON such as {{"orders": "<base64 id>"}}, not {text!r}'
            )
        for topic, topic_id in parsed.items():
            try:
                parse_partition_metadata(f"version: 0\ntopic_id: {topic_id}\n".encode())
            except KafkaFormatError as exc:
                raise OptionError(f"option topicIds: {topic}: {exc}") from None
            given[topic] = topic_id
    known = dict(given)
    for directory in sorted(target.iterdir()) if target.is_dir() else ():
        try:
            name = parse_partition_dir_name(directory.name)
            stored = read_partition_metadata(directory / PARTITION_METADATA).topic_id
        except (KafkaFormatError, OSError):
            continue  # not a partition, or no readable partition.metadata: nothing known
        if name.state is not DirState.LIVE:
            continue
        if known.setdefault(name.topic, stored) != stored:
            raise OptionError(
                f"option topicIds gives {name.topic} the id {known[name.topic]}, but "
                f"{directory / PARTITION_METADATA} has {stored}"
            )
    return known


def check_sink_schema(schema: StructType, options: SinkOptions) -> None:
    """The DataFrame's columns must be the source's, by name and type."""
    names = schema.fieldNames()
    for f in schema.fields:
        expected = _COLUMNS.get(f.name)
        if expected is None:
            raise OptionError(
                f"column {f.name!r} is not a column kafka_log writes; its columns: "
                + ", ".join(_COLUMNS)
                + " (headers optional); select them before writing"
            )
        if f.dataType.simpleString() != expected:
            raise OptionError(
                f"column {f.name!r} must be {expected} to be written as kafka_log, not "
                f"{f.dataType.simpleString()}"
            )
    settings = options.settings
    optional = {"topic": settings.topic is not None, "partition": settings.partition is not None}
    missing = [n for n in _REQUIRED if n not in names and not optional.get(n, False)]
    if missing:
        raise OptionError(
            f"writing kafka_log needs the column(s) {', '.join(missing)}"
            + (" (or the option of that name)" if set(missing) & {"topic", "partition"} else "")
        )


class KafkaLogWriter(DataSourceArrowWriter):
    """Stages in the tasks (:meth:`write`), publishes on the driver (:meth:`commit`)."""

    def __init__(self, options: SinkOptions, overwrite: bool) -> None:
        self.options = options
        self.overwrite = overwrite
        #: Names this write's staging area; made on the driver, so every task shares it.
        self.write_id = uuid.uuid4().hex
        # Made here, before any task: a task only adds its own directory to it, so a task
        # still running when the job's abort has removed it fails instead of leaving one.
        #: Whether this write made the log dir itself (removed again if it stays empty).
        self.made_target = not options.path.exists()
        staging_area(options.path, self.write_id).mkdir(parents=True)

    def write(self, iterator: Iterator[pa.RecordBatch]) -> SinkCommitMessage:
        batches = [b for b in iterator if b.num_rows]
        if not batches:
            return SinkCommitMessage()
        context = TaskContext.get()
        task = (
            f"task-{context.partitionId()}-{context.attemptNumber()}"
            if context is not None
            else f"task-{uuid.uuid4().hex}"
        )
        directory = staging_area(self.options.path, self.write_id) / task
        try:
            shutil.rmtree(directory, ignore_errors=True)
            try:
                directory.mkdir()
            except FileNotFoundError:
                raise SinkError(
                    f"kafka_log sink: the write's staging area {directory.parent} is gone (the "
                    "job was aborted, or the path is not shared with this executor)"
                ) from None
            pieces = stage(pa.Table.from_batches(batches), directory, self.options.settings)
        except BaseException:
            # Nothing half-written stays behind a failed task; abort removes the rest.
            shutil.rmtree(directory, ignore_errors=True)
            raise
        return SinkCommitMessage(tuple(pieces))

    def commit(self, messages: list[SinkCommitMessage | None]) -> None:
        pieces = [p for m in messages if m is not None for p in m.pieces]
        try:
            publish(self.options.path, self.write_id, pieces, overwrite=self.overwrite)
        finally:
            self._clean(0.0)

    def abort(self, messages: list[SinkCommitMessage | None]) -> None:
        # Tasks Spark is still cancelling may be writing into it: remove until it stays gone.
        self._clean(ABORT_SETTLE_S)

    def _clean(self, settle_s: float) -> None:
        remove_staging(self.options.path, self.write_id, settle_s=settle_s)
        if self.made_target:
            with contextlib.suppress(OSError):  # not empty: the write put partitions there
                self.options.path.rmdir()


def writer_for(
    raw_options: Mapping[str, str], schema: StructType, overwrite: bool
) -> KafkaLogWriter:
    """What ``KafkaLogDataSource.writer`` returns: options and schema checked here, on the
    driver, before any task runs."""
    options = parse_sink_options(raw_options)
    check_sink_schema(schema, options)
    return KafkaLogWriter(options, overwrite)


__all__ = [
    "DEFAULT_MAX_BATCH_BYTES",
    "DEFAULT_RECORDS_PER_BATCH",
    "OPTION_NAMES",
    "KafkaLogWriter",
    "SinkCommitMessage",
    "SinkError",
    "SinkOptions",
    "check_sink_schema",
    "parse_sink_options",
    "writer_for",
]
