"""A task's half of the ``kafka_log`` sink (:mod:`.sink`): the rows the task got, as Arrow,
laid down per (topic, partition), in offset order, as complete partition directories in the
task's staging directory, by the runtime's broker-like writer
(:class:`~kafka_format.runtime.write.writer.PartitionWriter`).

Offsets are kept: each batch is appended as a follower copies the leader's batch
(``base_offset``, each record's ``offset_delta``), so gaps (compaction, transaction markers
that a read leaves out) stay gaps. Timestamps are kept: a CreateTime record carries its own; a
LogAppendTime row (``timestampType`` 1) is written in a batch stamped with that time, as the
broker stamps it (``LogValidator``), all records of a batch sharing it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..runtime.format.codecs import Codec
from ..runtime.model import TimestampType
from ..runtime.write.writer import Message, PartitionWriter
from ..runtime.write.writer_model import NO_TIMESTAMP
from ._sink_commit import SinkError, StagedPiece

_INT32_MAX = 0x7FFFFFFF
#: ``DefaultRecordBatch.RECORD_BATCH_OVERHEAD``: a v2 batch header.
_BATCH_OVERHEAD = 61
#: The most a v2 record's framing adds to its key, value and header bytes
#: (``DefaultRecord.MAX_RECORD_OVERHEAD``: length, attributes, timestamp and offset deltas,
#: key and value lengths, header count, as varints at their widest).
_RECORD_OVERHEAD = 21 + 5 * 2 + 5 + 5
#: What each header adds: its key and value lengths, as varints at their widest.
_HEADER_OVERHEAD = 10


@dataclass(frozen=True, slots=True)
class StageSettings:
    """How a task lays its rows down (the sink's options, checked on the driver)."""

    codec: Codec
    compression_level: int | None
    records_per_batch: int
    max_batch_bytes: int
    segment_bytes: int
    index_interval_bytes: int
    topic: str | None
    partition: int | None
    topic_ids: dict[str, str]


class _Clock:
    """The writer's "now": the LogAppendTime of the batch being appended (the writer takes
    the append time from its clock), unused for CreateTime batches, whose records carry
    their timestamps."""

    __slots__ = ("now",)

    def __init__(self) -> None:
        self.now = NO_TIMESTAMP

    def __call__(self) -> int:
        return self.now


def stage(table: pa.Table, directory: Path, settings: StageSettings) -> list[StagedPiece]:
    """Write ``table``'s rows into ``directory`` as ``topic-N`` partition directories."""
    if table.num_rows == 0:
        return []
    table = _fill(table, "topic", settings.topic, pa.string())
    table = _fill(table, "partition", settings.partition, pa.int32())
    _refuse_nulls(table)
    table = table.sort_by([("topic", "ascending"), ("partition", "ascending"),
                           ("offset", "ascending")])  # fmt: skip
    topics = table["topic"].to_pylist()
    partitions = table["partition"].to_pylist()
    keys = list(zip(topics, partitions, strict=True))
    pieces = []
    start = 0
    for end in range(1, len(keys) + 1):
        if end < len(keys) and keys[end] == keys[start]:
            continue
        topic, partition = keys[start]
        rows = table.slice(start, end - start)
        pieces.append(_stage_partition(rows, topic, partition, directory, settings))
        start = end
    return pieces


def _fill(table: pa.Table, name: str, value: object, kind: pa.DataType) -> pa.Table:
    """The ``topic`` / ``partition`` option stands in for a null or absent column."""
    if name not in table.column_names:
        column = pa.nulls(table.num_rows, kind) if value is None else pa.repeat(
            pa.scalar(value, kind), table.num_rows
        )  # fmt: skip
        return table.append_column(name, column)
    if value is None or table[name].null_count == 0:
        return table
    index = table.column_names.index(name)
    return table.set_column(index, name, pc.fill_null(table[name], pa.scalar(value, kind)))


def _refuse_nulls(table: pa.Table) -> None:
    for name, why in (
        ("topic", "a broker's log dir holds topic-N directories: set the column, or give the "
                  "option topic"),
        ("partition", "a broker's log dir holds topic-N directories: set the column, or give "
                      "the option partition"),
        ("offset", "the sink keeps offsets and does not make them up"),
    ):  # fmt: skip
        column = table[name]
        if column.null_count:
            first = pc.index(pc.is_null(column), True).as_py()
            offset = table["offset"][first].as_py()
            where = f"offset {offset}" if offset is not None else f"row {first}"
            raise SinkError(f"kafka_log sink: a row ({where}) has a null {name}; {why}")


def check_topic(topic: str) -> None:
    """Kafka's topic name rule (``org.apache.kafka.common.internals.Topic.validate``): the
    name is a directory name, so a broker refuses anything else."""
    if (
        not topic
        or topic in (".", "..")
        or len(topic) > 249
        or any(not (c.isascii() and (c.isalnum() or c in "._-")) for c in topic)
    ):
        raise SinkError(
            f"kafka_log sink: {topic!r} is not a legal Kafka topic name (1 to 249 of "
            "a-z A-Z 0-9 . _ -, not '.' or '..')"
        )


def _stage_partition(
    rows: pa.Table, topic: str, partition: int, directory: Path, settings: StageSettings
) -> StagedPiece:
    check_topic(topic)
    if partition < 0:
        raise SinkError(f"kafka_log sink: partition {partition} of {topic} is negative")
    where = f"{topic}-{partition}"
    offsets = rows["offset"].to_numpy()
    if offsets[0] < 0:
        raise SinkError(f"kafka_log sink: {where} has a negative offset {int(offsets[0])}")
    same = np.flatnonzero(offsets[1:] == offsets[:-1])
    if len(same):
        raise SinkError(
            f"kafka_log sink: {where} has offset {int(offsets[same[0]])} twice; a partition's "
            "offsets are unique"
        )
    records = _Records.of(rows)
    clock = _Clock()
    writer = PartitionWriter(
        directory,
        topic,
        partition,
        segment_bytes=settings.segment_bytes,
        index_interval_bytes=settings.index_interval_bytes,
        start_offset=int(offsets[0]),
        clock=clock,
        fast=True,
        topic_id=settings.topic_ids.get(topic),
    )
    with writer:
        limit = min(settings.max_batch_bytes, max(1, settings.segment_bytes - _BATCH_OVERHEAD))
        for lo, hi in _batches(records, settings.records_per_batch, limit):
            _append(writer, clock, records, lo, hi, settings, where)
    return StagedPiece(
        topic=topic,
        partition=partition,
        path=str(writer.path),
        first_offset=int(offsets[0]),
        log_end_offset=writer.next_offset,
        records=rows.num_rows,
    )


@dataclass(slots=True)
class _Records:
    """One partition's rows, in offset order, as Python values."""

    offsets: list[int]
    keys: list[bytes | None]
    values: list[bytes | None]
    #: Epoch ms; NO_TIMESTAMP where the row has none (a magic 0 message).
    timestamps: list[int]
    #: Whether the row's batch used LogAppendTime.
    log_append: list[bool]
    headers: list[tuple[tuple[str, bytes | None], ...]]

    @classmethod
    def of(cls, rows: pa.Table) -> _Records:
        # Spark hands timestamps over as microseconds; Kafka's are milliseconds.
        micros = pc.cast(rows["timestamp"], pa.int64()).to_pylist()
        headers: list[tuple[tuple[str, bytes | None], ...]]
        if "headers" in rows.column_names:
            headers = [
                tuple((h["key"], h["value"]) for h in found) if found else ()
                for found in rows["headers"].to_pylist()
            ]
        else:
            headers = [()] * rows.num_rows
        types = rows["timestampType"].to_pylist()
        return cls(
            offsets=rows["offset"].to_pylist(),
            keys=rows["key"].to_pylist(),
            values=rows["value"].to_pylist(),
            timestamps=[NO_TIMESTAMP if t is None else t // 1000 for t in micros],
            log_append=[t == TimestampType.LOG_APPEND_TIME for t in types],
            headers=headers,
        )

    def size(self, i: int) -> int:
        """At least the bytes record ``i`` takes in an uncompressed batch."""
        key, value, headers = self.keys[i], self.values[i], self.headers[i]
        size = _RECORD_OVERHEAD + len(key or b"") + len(value or b"")
        for name, data in headers:
            size += _HEADER_OVERHEAD + len(name.encode()) + len(data or b"")
        return size

    def messages(self, lo: int, hi: int) -> list[Message]:
        base = self.offsets[lo]
        out = []
        for i in range(lo, hi):
            for name, _ in self.headers[i]:
                if name is None:
                    raise SinkError(
                        f"kafka_log sink: the record at offset {self.offsets[i]} has a header "
                        "with a null key; Kafka's header keys are strings"
                    )
            out.append(
                Message(
                    key=self.keys[i],
                    value=self.values[i],
                    headers=self.headers[i],
                    timestamp=self.timestamps[i],
                    offset_delta=self.offsets[i] - base,
                )
            )
        return out


def _batches(records: _Records, per_batch: int, max_bytes: int) -> list[tuple[int, int]]:
    """Runs of consecutive rows (offset order, never reordered) that make one batch each: at
    most ``per_batch`` records and about ``max_bytes`` (a record larger than that gets a batch
    of its own); a new batch where the timestamp type changes, where a LogAppendTime changes
    (a batch has one append time), and where an offset delta would pass int32."""
    runs = []
    start, size = 0, 0
    offsets, lat, stamps = records.offsets, records.log_append, records.timestamps
    for i in range(len(offsets)):
        record = records.size(i)
        if i > start and (
            i - start >= per_batch
            or size + record > max_bytes
            or lat[i] != lat[start]
            or (lat[i] and stamps[i] != stamps[start])
            or offsets[i] - offsets[start] > _INT32_MAX
        ):
            runs.append((start, i))
            start, size = i, 0
        size += record
    runs.append((start, len(offsets)))
    return runs


def _append(
    writer: PartitionWriter,
    clock: _Clock,
    records: _Records,
    lo: int,
    hi: int,
    settings: StageSettings,
    where: str,
) -> None:
    """One batch; halved until it fits when, compressed, it outgrows a segment."""
    lat = records.log_append[lo]
    # The topic's message.timestamp.type as the batch was written: a topic's config may
    # change, so it is set per batch.
    writer.timestamp_type = TimestampType.LOG_APPEND_TIME if lat else TimestampType.CREATE_TIME
    clock.now = records.timestamps[lo] if lat else NO_TIMESTAMP
    try:
        writer.append(
            records.messages(lo, hi),
            base_offset=records.offsets[lo],
            codec=settings.codec,
            compression_level=settings.compression_level,
        )
    except SinkError:
        raise
    except ValueError as exc:
        if hi - lo == 1:
            raise SinkError(
                f"kafka_log sink: {where} offset {records.offsets[lo]}: {exc} (raise the "
                "option segmentBytes)"
            ) from None
        middle = (lo + hi) // 2
        _append(writer, clock, records, lo, middle, settings, where)
        _append(writer, clock, records, middle, hi, settings, where)


__all__ = ["StageSettings", "check_topic", "stage"]
