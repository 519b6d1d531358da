"""``spark.readStream.format("kafka_log")``: a Kafka log directory as a stream.

A broker's log directory (or a backup that grows) read as Spark's Kafka source reads a topic:
each micro-batch reads what was appended to each partition since the last one, with the
batch source's columns and rows (the same planner and the same task reader), and a query
restarted from its checkpoint goes on where it stopped, with no row twice and none lost.

Usage::

    from kafka_format.spark_udfs import register

    register(spark)
    query = (
        spark.readStream.format("kafka_log")
        .option("startingOffsets", "earliest")
        .option("kafka.isolation.level", "read_committed")
        .option("maxOffsetsPerTrigger", "100000")
        .load("/var/lib/kafka/data")          # a log dir, partition dirs, or a glob of them
        .writeStream.format("parquet")
        .option("path", "/data/orders")
        .option("checkpointLocation", "/data/orders/_checkpoint")
        .trigger(processingTime="10 seconds")  # or availableNow=True: what is there, then stop
        .start()
    )

Offsets are those of Spark's Kafka source, ``{"topic": {"partition": next offset}}`` (shown
in ``query.lastProgress["sources"]``, kept in the checkpoint). Each trigger lists the path
again by the runtime's directory rules (``runtime.read.sources.discover``, as the batch
source), so new segments and new partitions are read as they appear; a new partition starts
at its earliest offset. A partition ends at its last whole batch: a batch still being written
is read by a later trigger, once whole.

Options: those of the batch source (:mod:`.datasource`; ``endingOffsets`` and the ending
timestamps excepted: a stream has no end), and:

=========================  ====================  =========================================
option                     default               meaning
=========================  ====================  =========================================
``startingOffsets``        ``earliest``          where a new query starts: ``earliest``,
                                                 ``latest``, or JSON ``{"t":{"0":23}}``
                                                 (-2 earliest, -1 latest; partitions it
                                                 omits: earliest). A restarted query goes
                                                 on from its checkpoint.
                                                 ``startingTimestamp`` and
                                                 ``startingOffsetsByTimestamp`` win over
                                                 it (no record at or after: latest)
``kafka.isolation.level``  ``read_uncommitted``  Spark's name for ``isolationLevel``;
                                                 ``read_committed`` ends each micro-batch
                                                 at the last stable offset (before the
                                                 earliest open transaction) and drops
                                                 aborted ones
``failOnDataLoss``         ``true``              offsets to read that are gone (segments
                                                 deleted by retention under the stream, a
                                                 partition deleted, a log cut shorter)
                                                 fail the query; ``false``: a warning, and
                                                 the stream goes on from what is there
``maxOffsetsPerTrigger``   none                  at most this many offsets a micro-batch,
                                                 split over partitions in proportion to
                                                 their backlog (pyspark >= 4.2, which lets
                                                 Python sources limit what they read;
                                                 ``availableNow`` honours it)
``minOffsetsPerTrigger``   none                  a trigger waits (runs no micro-batch)
                                                 until this many new offsets are there in
                                                 all, or ``maxTriggerDelay`` has passed
                                                 since the last micro-batch, as in
                                                 Spark's Kafka source; not under
                                                 ``availableNow``
``maxTriggerDelay``        ``15m``               the longest ``minOffsetsPerTrigger``
                                                 waits (``500ms``, ``30s``, ``15m``, ``1h``)
=========================  ====================  =========================================

Payloads (``keyFormat`` / ``valueFormat`` and the rest) are decoded as in a batch read, the
columns typed once, when the query starts, by the subjects' latest schemas then (a later
version of another type fails the micro-batch that meets it, asking for a restart). Damaged
batches follow ``mode`` as in a batch read; under ``FAILFAST`` a frame that is no
batch at the end of a partition fails the query when a trigger finds it. Both triggers work:
``processingTime`` (and the default, as fast as possible) and ``availableNow`` (everything
there when the query starts, then stop). Continuous processing is not supported (Python
sources have none).

Exactly once: offsets go to the checkpoint before a micro-batch runs, and a micro-batch is
planned from its offsets alone (the same offsets give the same rows: the log only grows, and
under ``read_committed`` every transaction below a micro-batch's end had its marker when the
end was chosen), so with a sink that is itself exactly-once (files, Delta, ``foreachBatch``
keyed on the batch id) a restarted query writes nothing twice and loses nothing.

Limits: the walk that finds each partition's end is remembered in the driver's Python process
between triggers (a restart walks the active segment once again, and under read_committed
every segment from the one holding the query's offset); a transaction opened before that
segment and still open is not seen. ``maxOffsetsPerTrigger`` needs pyspark 4.2 or later
(pyspark 4.1's Python sources cannot limit a micro-batch: the option is then ignored).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

from pyspark.sql.datasource import DataSourceStreamReader, InputPartition

from ..runtime.errors import KafkaFormatError
from ..runtime.files.storage import Storage
from ._discovery import PartitionFiles, find, storage_of
from ._fs import has_glob, locate
from ._options import PerPartition
from ._payloads import PayloadPlan
from ._planning import INT64_MAX, KafkaLogSplit, Planner
from ._reading import Counters, Output, read_split
from ._scan import Counted
from .streaming_offsets import (
    Offsets,
    StreamOptions,
    TailTracker,
    TopicPartition,
    TriggerDelay,
    clamp,
    from_json,
    keyed,
    rate_limit,
    report_data_loss,
    to_json,
)

try:  # pyspark >= 4.2: admission control and Trigger.AvailableNow for Python sources
    from pyspark.sql.streaming.datasource import (
        ReadAllAvailable,
        ReadMaxRows,
        SupportsTriggerAvailableNow,
    )
except ImportError:  # pragma: no cover - pyspark 4.1
    ReadAllAvailable = ReadMaxRows = None  # type: ignore[assignment,misc]

    class SupportsTriggerAvailableNow:  # type: ignore[no-redef]
        """Stand-in: pyspark 4.1 runs availableNow without asking the source."""


class KafkaLogStreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    """Offsets on the driver (:meth:`initialOffset`, :meth:`latestOffset`,
    :meth:`partitions`), rows in the tasks (:meth:`read`, the batch source's reader)."""

    def __init__(
        self,
        options: StreamOptions,
        output: Output,
        counters: Counters,
        payloads: PayloadPlan | None = None,
    ) -> None:
        self.options = options
        self.output = output
        self.counters = counters
        #: keyFormat / valueFormat: decoded in the tasks as in a batch read.
        self.payloads = payloads
        self.tracker = TailTracker(options.base)
        #: availableNow: the offsets when the query started; never read past them.
        self.target: Offsets | None = None
        self.latest: Offsets | None = None
        self.storage: Storage | None = None
        self.delay = (
            None
            if options.min_offsets_per_trigger is None
            else TriggerDelay(options.min_offsets_per_trigger, options.max_trigger_delay_ms)
        )

    # --- the driver ---------------------------------------------------------------------

    def _partitions(self) -> dict[TopicPartition, PartitionFiles]:
        # The batch source's path, storage and directory rules, listed again each time.
        ref, fs, path = locate(self.options.base.path)
        self.storage = storage = storage_of(ref, fs)
        try:
            wanted = self.options.base.topics  # subscribe / subscribePattern / assign
            found = find(storage, path).partitions
            return keyed([pf for pf in found if wanted.accepts(pf.topic, pf.partition)])
        except KafkaFormatError:
            # A log dir with no partition yet (or a glob none matches yet, in a directory
            # that exists) is a stream with nothing to read so far, as a topic that has no
            # records; a path that does not exist stays an error.
            prefix = path.split("*")[0].split("?")[0].split("[")[0] if has_glob(path) else path
            where = storage.parent(prefix) if has_glob(path) else prefix
            entry = storage.info(where) if where else None
            if entry is None or not entry.is_dir:
                raise
            return {}

    def initialOffset(self) -> dict:
        found = self._partitions()
        base = self.options.base
        latest: Offsets | None = None
        offsets: Offsets = {}
        for tp, pf in found.items():
            log = pf.log
            assert log is not None
            value: int | None
            ts = base.starting_timestamps.get(*tp)
            if ts is not None:
                hit = log.find_timestamp(ts)
                value = -1 if hit is None or hit.record is None else hit.record.offset
            else:
                value = self.options.starting.get(*tp)
            if value is None or value == -2:
                value = log.log_start_offset or 0
            elif value == -1:
                if latest is None:
                    latest = self.tracker.ends(found, {})
                value = latest[tp]
            offsets[tp] = value
        return to_json(offsets)

    def latestOffset(self, start: dict | None = None, limit: Any = None) -> dict:
        starts = from_json(start) if start else {}
        found = self._partitions()
        ends = self.tracker.ends(found, starts)
        self.latest = dict(ends)
        if self.target is not None:
            capped: Offsets = {}
            for tp, end in ends.items():
                if tp in self.target:
                    capped[tp] = min(end, self.target[tp])
                    if tp in starts and capped[tp] < starts[tp] <= end:
                        capped[tp] = starts[tp]  # never behind where the query is
                elif tp in starts:
                    capped[tp] = starts[tp]  # appeared after the query started: not yet
            ends = capped
        # minOffsetsPerTrigger: the same offsets again skip this trigger, as Spark's Kafka
        # source does; never under availableNow (its end is fixed: waiting could last forever)
        if (
            self.delay is not None
            and self.target is None
            and starts
            and self.delay.delays(starts, ends, time.time_ns() // 1_000_000)
        ):
            return to_json(starts)
        if ReadMaxRows is not None and isinstance(limit, ReadMaxRows):
            begins = {tp: starts.get(tp, _earliest(found[tp])) for tp in ends}
            ends = rate_limit(begins, ends, limit.max_rows)
        return to_json(ends)

    def getDefaultReadLimit(self):
        limit = self.options.max_offsets_per_trigger
        if limit is None or ReadMaxRows is None:
            return ReadAllAvailable() if ReadAllAvailable is not None else None
        return ReadMaxRows(limit)

    def prepareForTriggerAvailableNow(self) -> None:
        self.target = self.tracker.ends(self._partitions(), {})

    def reportLatestOffset(self) -> dict | None:
        return None if self.latest is None else to_json(self.latest)

    def partitions(self, start: dict, end: dict) -> list[InputPartition]:
        starts, ends = from_json(start), from_json(end)
        found = self._partitions()
        fail = self.options.fail_on_data_loss
        for tp in sorted(set(starts) - set(ends)):
            report_data_loss("the partition is gone", fail, tp)
        ranges: dict[TopicPartition, tuple[int, int]] = {}
        for tp, stop in sorted(ends.items()):
            pf = found.get(tp)
            if pf is None or pf.log is None:
                report_data_loss("the partition is gone", fail, tp)
                continue
            earliest = _earliest(pf)
            here = str(pf.log.path)
            begin = starts.get(tp)
            if begin is None:  # a partition that appeared: from its earliest offset
                if earliest != 0:
                    report_data_loss(
                        f"the new partition starts at offset {earliest} instead of 0",
                        fail,
                        tp,
                        here,
                    )
                begin = earliest
            if stop < begin:
                report_data_loss(f"the log end moved back from {begin} to {stop}", fail, tp, here)
                continue
            if begin < earliest and begin < stop:
                report_data_loss(
                    f"cannot read offset {begin}: the log now starts at offset {earliest}",
                    fail,
                    tp,
                    here,
                )
            if begin < stop:
                ranges[tp] = (begin, stop)
        if not ranges:
            return []
        # Every other partition gets the empty range [0, 0): the planner skips it unread.
        # The stream judged data loss above, in its own words; the batch planner's check
        # (the same rule for a batch read's startingOffsets) must not judge it again.
        base = replace(
            self.options.base,
            fail_on_data_loss=False,
            starting_offsets=PerPartition(0, {tp: r[0] for tp, r in ranges.items()}),
            ending_offsets=PerPartition(0, {tp: r[1] for tp, r in ranges.items()}),
            starting_timestamps=PerPartition(),
            ending_timestamps=PerPartition(),
        )
        splits = Planner(base).plan()
        return self._clamped(splits)

    def _clamped(self, splits: list[KafkaLogSplit]) -> list[InputPartition]:
        """Each partition's last split, cut after its last whole batch when it reads its
        segment to the end (see :func:`.streaming_offsets.clamp`)."""
        last: dict[tuple[str | None, int | None], int] = {}
        for i, split in enumerate(splits):
            key = (split.topic, split.partition)
            j = last.get(key)
            if j is None or (split.path, split.start) > (splits[j].path, splits[j].start):
                last[key] = i
        result: list[InputPartition] = list(splits)
        for key, i in last.items():
            split = splits[i]
            if split.end != split.file_size or split.end_offset in (None, INT64_MAX):
                continue
            tail = self.tracker.tails.get(key)  # type: ignore[arg-type]
            source = Counted(self.storage.open(split.path))
            try:
                result[i] = clamp(split, tail, source)
            finally:
                source.close()
        return result

    def commit(self, end: dict) -> None:
        pass  # nothing to release: the log is Kafka's, not ours

    # --- the tasks ----------------------------------------------------------------------

    def read(self, partition: InputPartition) -> Iterator:
        if not isinstance(partition, KafkaLogSplit):
            return iter(())
        rows = read_split(partition, self.options.base, self.output, self.counters)
        return rows if self.payloads is None else self.payloads.decode(rows, partition.name)


def _earliest(pf: PartitionFiles) -> int:
    log = pf.log
    if log is None:
        raise KafkaFormatError("no segments", file=str(pf.segments[0].log if pf.segments else ""))
    return log.log_start_offset or 0


__all__ = ["KafkaLogStreamReader"]
