"""Offsets of the ``kafka_log`` streaming source: options, the offsets JSON, where each
partition ends now, data loss, and the rate limit.

An offset of the source is Spark's Kafka source's: ``{"topic": {"partition": next offset}}``
(JSON, partitions as strings, topics and partitions sorted so that the same offsets are the
same string: Spark compares offsets as their JSON to decide whether there is new data).

Where a partition ends (:class:`TailTracker`) is found by walking batch headers with the
runtime's walker (``_scan.iter_headers`` over ``format.framing``), remembered between calls
per partition as (segment, byte position after the last whole batch, its next offset, open
transactions), so that a trigger reads only what was appended since the last one:

* ``read_uncommitted``: the last whole batch's last offset + 1 in the last segment (from its
  ``.index``'s last entry, checked against the log, the first time), or that segment's base
  offset while it holds no batch yet (a segment just rolled). A batch still being written at
  the end of the file is a truncated tail (``framing.judge``), not yet readable: the end stops
  before it, as a broker's log end offset does.
* ``read_committed``: the same walk over every segment from the one holding the stream's
  start, keeping each producer's open transaction (first offset, until its COMMIT/ABORT
  marker: the readers' walk, ``transactions.AbortedWalk``); the end is the last stable
  offset, the first offset of the earliest transaction still open
  (``UnifiedLog.firstUnstableOffset``), when that is lower. A transaction opened before the
  segment holding the stream's starting offset and still open is not seen.

Damage in the walk (a frame that is no batch and is not a tail) fails the query under
``FAILFAST`` (one line: file, position, cause); otherwise the walk goes on at the next whole
batch by the salvaging walk's rule (``read/salvage.py``: after a batch whose length alone lied,
never inside one), and the tasks report the damaged batch as the mode says.
"""

from __future__ import annotations

import json
import logging
import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace

from ..runtime.errors import KafkaFormatError
from ..runtime.files.index_lookup import start_for_offset
from ..runtime.format.batches import read_header
from ..runtime.format.framing import Damage, Frame, judge
from ..runtime.log.partition import Partition, Segment
from ..runtime.read.salvage import salvage_walk
from ..runtime.read.transactions import AbortedWalk, TxnEvent
from ._discovery import PartitionFiles
from ._options import (
    EARLIEST,
    OPTION_NAMES,
    KafkaLogOptions,
    OptionError,
    PerPartition,
    parse_offsets,
    parse_options,
)
from ._planning import KafkaLogSplit
from ._scan import Counted, header_at, iter_headers

LOG = logging.getLogger("kafka_format.spark_udfs")
#: The partition a tail's transaction walk is keyed by: a tail walks one partition.
_THIS = (None, None)

TopicPartition = tuple[str, int]
Offsets = dict[TopicPartition, int]

#: Options only a stream takes (Spark's Kafka source's names).
STREAM_OPTION_NAMES = (
    "failOnDataLoss",
    "maxOffsetsPerTrigger",
    "minOffsetsPerTrigger",
    "maxTriggerDelay",
    "kafka.isolation.level",
)
#: ``maxTriggerDelay``'s default (``KafkaSourceProvider.DEFAULT_MAX_TRIGGER_DELAY``).
DEFAULT_MAX_TRIGGER_DELAY_MS = 15 * 60 * 1000
# JavaUtils.timeStringAsMs's units (a bare number is milliseconds).
_TIME = re.compile(r"\s*(\d+)\s*(us|ms|s|m|min|h|d)?\s*", re.IGNORECASE)
_TIME_MS = {"us": 0.001, "ms": 1, None: 1, "s": 1000, "m": 60_000, "min": 60_000,
            "h": 3_600_000, "d": 86_400_000}  # fmt: skip
#: Options a stream refuses, as Spark's Kafka source does ("ending offset not valid in
#: streaming queries", ``KafkaSourceProvider.validateStreamOptions``).
_NO_END = ("endingOffsets", "endingTimestamp", "endingOffsetsByTimestamp")
#: Bytes looked at, past the last whole batch of a ranged (not memory-mapped) file, to tell a
#: batch still being written from damage.
JUDGE_BYTES = 16 * 1024 * 1024

_INSTRUCTION = (
    "Some data may have been lost because they are not available in the log any more; either "
    "the data was aged out by retention or the partition was deleted before all its data was "
    "processed. If you don't want your streaming query to fail on such cases, set the source "
    'option "failOnDataLoss" to "false".'
)


class DataLossError(KafkaFormatError):
    """Offsets a stream was to read are gone (``failOnDataLoss``, as Spark's Kafka source)."""


@dataclass(frozen=True, slots=True)
class StreamOptions:
    """The checked options of one stream: the batch source's, and the stream's own."""

    base: KafkaLogOptions
    #: ``startingOffsets``: -2 earliest, -1 latest, or an offset, per partition.
    starting: PerPartition = field(default_factory=PerPartition)
    fail_on_data_loss: bool = True
    max_offsets_per_trigger: int | None = None
    #: Spark's ``minOffsetsPerTrigger``: a trigger waits for at least this many new offsets
    #: (over all partitions), unless ``maxTriggerDelay`` has passed since the last batch.
    min_offsets_per_trigger: int | None = None
    max_trigger_delay_ms: int = DEFAULT_MAX_TRIGGER_DELAY_MS


def _split(raw: Mapping[str, str]) -> tuple[dict[str, str], dict[str, str]]:
    """(options for the batch parser, the stream's own options keyed by canonical name)."""
    own = {name.lower(): name for name in (*STREAM_OPTION_NAMES, "startingOffsets")}
    batch: dict[str, str] = {}
    stream: dict[str, str] = {}
    for key, value in raw.items():
        name = own.get(str(key).lower())
        if name is None:
            batch[key] = value
        else:
            stream[name] = "" if value is None else str(value)
    return batch, stream


def schema_options(raw: Mapping[str, str]) -> dict[str, str]:
    """The options that shape the schema, without the stream's own (``DataSource.schema`` is
    called for batch reads and streams alike)."""
    return _split(raw)[0]


def parse_stream_options(raw: Mapping[str, str]) -> StreamOptions:
    """Check a stream's options; raises :class:`OptionError`."""
    batch, stream = _split(raw)
    lowered = {str(k).lower(): k for k in batch}
    for name in _NO_END:
        if name.lower() in lowered:
            raise OptionError(
                f"option {lowered[name.lower()]} is not valid in a streaming read (a stream has "
                "no end; Spark's Kafka source refuses it too)"
            )
    alias = stream.get("kafka.isolation.level")
    if alias is not None:
        given = lowered.get("isolationlevel")
        if given is not None and batch[given].strip().lower() != alias.strip().lower():
            raise OptionError(
                f"options isolationLevel ({batch[given]!r}) and kafka.isolation.level "
                f"({alias!r}) disagree"
            )
        batch[given or "isolationLevel"] = alias
    try:
        base = parse_options(batch)
    except OptionError as exc:
        if str(exc).startswith("unknown option"):
            raise OptionError(
                f"{exc}; in a stream also: startingOffsets (latest allowed), "
                + ", ".join(STREAM_OPTION_NAMES)
            ) from None
        raise
    starting = parse_offsets(stream, "startingOffsets", refuse=EARLIEST - 1)
    return StreamOptions(
        base=base,
        starting=starting,
        fail_on_data_loss=_bool(stream, "failOnDataLoss", True),
        max_offsets_per_trigger=_positive(stream, "maxOffsetsPerTrigger"),
        min_offsets_per_trigger=_positive(stream, "minOffsetsPerTrigger"),
        max_trigger_delay_ms=_duration_ms(stream, "maxTriggerDelay", DEFAULT_MAX_TRIGGER_DELAY_MS),
    )


def _duration_ms(given: dict[str, str], name: str, default: int) -> int:
    """A time as Spark's ``JavaUtils.timeStringAsMs`` reads it: ``15m``, ``30s``, ``500``
    (milliseconds)."""
    if name not in given:
        return default
    match = _TIME.fullmatch(given[name])
    if match is None:
        raise OptionError(
            f"option {name} must be a duration such as 500ms, 30s, 15m or 1h, not {given[name]!r}"
        )
    unit = match.group(2).lower() if match.group(2) else None
    return int(int(match.group(1)) * _TIME_MS[unit])


def _bool(given: dict[str, str], name: str, default: bool) -> bool:
    value = given.get(name, str(default)).strip().lower()
    if value not in ("true", "false"):
        raise OptionError(f"option {name} must be true or false, not {given[name]!r}")
    return value == "true"


def _positive(given: dict[str, str], name: str) -> int | None:
    if name not in given:
        return None
    text = given[name].strip()
    if not text.isdigit() or int(text) < 1:
        raise OptionError(f"option {name} must be a positive number of offsets, not {text!r}")
    return int(text)


# --- the offsets JSON ---------------------------------------------------------------------


def to_json(offsets: Mapping[TopicPartition, int]) -> dict[str, dict[str, int]]:
    """Spark's Kafka source's offsets form, sorted (the same offsets, the same string)."""
    result: dict[str, dict[str, int]] = {}
    for topic, partition in sorted(offsets):
        result.setdefault(topic, {})[str(partition)] = int(offsets[(topic, partition)])
    return result


def from_json(value: object) -> Offsets:
    """Offsets from their JSON form (a checkpoint's, or what Spark hands back)."""
    if isinstance(value, str):
        value = json.loads(value)
    if not isinstance(value, dict):
        raise KafkaFormatError(f"not offsets of the kafka_log source: {value!r}")
    result: Offsets = {}
    for topic, partitions in value.items():
        if not isinstance(partitions, dict):
            raise KafkaFormatError(f"not offsets of the kafka_log source: {value!r}")
        for partition, offset in partitions.items():
            if not str(partition).lstrip("-").isdigit() or not isinstance(offset, int):
                raise KafkaFormatError(f"not offsets of the kafka_log source: {value!r}")
            result[(str(topic), int(partition))] = offset
    return result


def keyed(partitions: Iterable[PartitionFiles]) -> dict[TopicPartition, PartitionFiles]:
    """Partitions by (topic, partition); a stream needs ``topic-N`` directories."""
    result: dict[TopicPartition, PartitionFiles] = {}
    for pf in partitions:
        if pf.topic is None or pf.partition is None:
            name = pf.segments[0].log if pf.segments else "?"
            raise OptionError(
                f"a streaming read needs partition directories (topic-N), and {name} is not in "
                "one: its offsets could not be named"
            )
        if pf.log is not None and pf.log.segments:
            result[(pf.topic, pf.partition)] = pf
    return result


# --- where partitions end -----------------------------------------------------------------


@dataclass(slots=True)
class _Tail:
    """How far a partition was walked: the segment, the byte position after its last whole
    batch, the next offset after that batch (None before one), transactions still open."""

    segment: str
    position: int
    next_offset: int | None = None
    #: The transactions walked through (``transactions.AbortedWalk``, the readers' own):
    #: which are still open, from which offset.
    walk: AbortedWalk = field(default_factory=AbortedWalk)
    #: Where the last whole batch walked starts (-1: none in this segment yet).
    last_at: int = -1


class TailTracker:
    """Each partition's end as a stream may read it (see the module docstring)."""

    def __init__(self, options: KafkaLogOptions) -> None:
        self.options = options
        self.committed = options.isolation == "read_committed"
        self.tails: dict[TopicPartition, _Tail] = {}
        self._warned: set[tuple[str, int]] = set()

    def ends(
        self,
        partitions: Mapping[TopicPartition, PartitionFiles],
        starts: Mapping[TopicPartition, int],
    ) -> Offsets:
        result: Offsets = {}
        for tp, pf in partitions.items():
            assert pf.log is not None
            result[tp] = self._end(tp, pf.log, starts.get(tp))
        for tp in set(self.tails) - set(partitions):
            del self.tails[tp]
        return result

    def _end(self, tp: TopicPartition, log: Partition, start: int | None) -> int:
        segments = log.segments
        paths = [str(s.log) for s in segments]
        tail = self.tails.get(tp)
        if tail is not None and (
            tail.segment not in paths
            or segments[paths.index(tail.segment)].size < tail.position
            or not self._unchanged(log, segments[paths.index(tail.segment)], tail)
        ):
            tail = None  # the segment was deleted, truncated or rewritten: walk again
        if tail is not None and not self.committed and tail.segment != paths[-1]:
            tail = None  # only the last segment matters
        if tail is None:
            tail = self._fresh(log, start)
        self.tails[tp] = tail
        for slot in range(paths.index(tail.segment), len(segments)):
            if paths[slot] != tail.segment:
                tail.segment, tail.position, tail.last_at = paths[slot], 0, -1
            self._walk(log, segments[slot], tail)
        end = max(
            tail.next_offset if tail.next_offset is not None else -1, segments[-1].base_offset
        )
        stable = tail.walk.stable_offset(_THIS) if self.committed else None
        if stable is not None:
            if start is not None and start <= end:
                # Never behind the start for a transaction opened before it and still open.
                return max(start, min(end, stable))
            return min(end, stable)
        return end

    def _unchanged(self, log: Partition, segment: Segment, tail: _Tail) -> bool:
        """Whether the batch the walk ended with is still there, the same: a segment can be
        truncated (a follower's log after a leader change) and written again, or replaced by
        the cleaner, under the same name; a walk must not go on from inside a batch."""
        if tail.last_at < 0:
            return True
        source = Counted(log.source(segment))
        try:
            batch = header_at(source, tail.last_at)
        finally:
            source.close()
        return (
            batch is not None
            and batch.size == tail.position - tail.last_at
            and tail.next_offset == batch.last_offset + 1
        )

    def _fresh(self, log: Partition, start: int | None) -> _Tail:
        segments = log.segments
        if self.committed:
            slot = log.segment_for_offset(start) if start is not None else None
            return _Tail(str(segments[slot or 0].log), 0)
        segment = segments[-1]
        return _Tail(str(segment.log), self._last_entry(log, segment))

    def _last_entry(self, log: Partition, segment: Segment) -> int:
        """Where the walk to the segment's end may start: the last ``.index`` entry's position
        when that entry holds by the readers' one rule (``files.index_lookup``), else 0."""
        index = log.offset_index(segment)
        if index is None:
            return 0
        source = Counted(log.source(segment))
        try:
            with index:
                return start_for_offset(index, source, 1 << 62, file=str(segment.log)).position
        finally:
            source.close()

    def _walk(self, log: Partition, segment: Segment, tail: _Tail) -> None:
        source = Counted(log.source(segment))
        try:
            size = source.size()
            position = tail.position
            while position < size:
                for header in iter_headers(source, position):
                    position = header.position + header.size
                    tail.position, tail.last_at = position, header.position
                    tail.next_offset = header.last_offset + 1
                    if self.committed and header.producer_id >= 0 and header.is_transactional:
                        # headers only: the last stable offset needs no marker's type
                        tail.walk.feed(
                            TxnEvent(
                                _THIS,
                                header.producer_id,
                                header.base_offset,
                                header.is_control,
                                True,
                                False,
                            )
                        )
                if position >= size:
                    break
                resume = self._stopped(source, position, size)
                if resume is None:
                    break
                position = tail.position = resume
        finally:
            source.close()

    def _stopped(self, source: Counted, position: int, size: int) -> int | None:
        """Where the walk goes on after it stopped at ``position``: None at a batch still
        being written (or damage with nothing whole after it); raises on damage in
        FAILFAST."""
        n = size - position if source.mapped else min(size - position, JUDGE_BYTES)
        data = source.read(position, n)
        # The salvaging walk's first step says what lies here and where a walk goes on: the
        # readers' one rule (read/salvage.py), so the end found is where the tasks resume.
        step = next(salvage_walk(data, source.name), None)
        if step is None or step.tail is not None:
            return None  # a truncated tail: a batch still being written
        verdict = judge(data, 0, len(data), source.name)
        if isinstance(verdict, Damage):
            error = verdict.error(source.name, shift=position)  # positions the file's own
        else:  # whole, but its header does not read
            try:
                read_header(verdict, file=source.name)
                return None
            except KafkaFormatError as exc:
                error = exc.located(file=source.name)
                error.position = position
        resume = None if step.end is None else position + step.end
        if self.options.mode == "FAILFAST":
            raise error
        if (source.name, position) not in self._warned:
            self._warned.add((source.name, position))
            LOG.warning("kafka_log stream: %s", error)
        return resume


def clamp(split: KafkaLogSplit, tail: _Tail | None, source: Counted) -> KafkaLogSplit:
    """A split that reads a segment to its end, cut after its last whole batch: a batch being
    written when the read was planned is not part of it, and may be whole (and then look cut
    short) by the time the task reads."""
    position = split.start
    if tail is not None and tail.segment == split.path and split.start <= tail.position:
        position = min(tail.position, split.end)  # batches before it are known whole
    for header in iter_headers(source, position, split.end):
        position = header.position + header.size
    if position >= split.end:
        return split
    data = source.read(position, min(split.end - position, JUDGE_BYTES))
    if isinstance(judge(data, 0, len(data), source.name), Damage | Frame):
        return split  # damage: the task reports it as its mode says
    return replace(split, end=position)


# --- Spark's rules --------------------------------------------------------------------------


@dataclass(slots=True)
class TriggerDelay:
    """``minOffsetsPerTrigger`` with ``maxTriggerDelay``, as Spark's Kafka source decides
    (``KafkaMicroBatchStream.delayBatch``, apache/spark): a trigger is skipped while fewer than
    ``min_offsets`` new offsets (over all partitions) are there, until ``max_delay_ms`` has
    passed since the last batch; the first trigger is never skipped (the clock starts at 0)."""

    min_offsets: int
    max_delay_ms: int
    last_trigger_ms: int = 0

    def delays(self, starts: Offsets, ends: Offsets, now_ms: int) -> bool:
        if now_ms - self.last_trigger_ms >= self.max_delay_ms:
            self.last_trigger_ms = now_ms
            return False
        new = sum(end - starts.get(tp, 0) for tp, end in ends.items())
        if new < self.min_offsets:
            return True
        self.last_trigger_ms = now_ms
        return False


def rate_limit(starts: Offsets, ends: Offsets, limit: int) -> Offsets:
    """At most ``limit`` offsets over all partitions, split in proportion to what each has
    to read, as Spark's Kafka source does (``KafkaMicroBatchStream.rateLimit``, apache/spark):
    a share below one offset is rounded up, others down."""
    sizes = {tp: end - starts[tp] for tp, end in ends.items() if end - starts[tp] > 0}
    total = sum(sizes.values())
    if total < 1:
        return dict(ends)
    result: Offsets = {}
    for tp, end in ends.items():
        size = sizes.get(tp)
        if size is None:
            result[tp] = end
            continue
        share = limit * (size / total)
        result[tp] = min(end, starts[tp] + (math.ceil(share) if share < 1 else math.floor(share)))
    return result


def report_data_loss(
    message: str, fail: bool, tp: TopicPartition, directory: str | None = None
) -> None:
    """Spark's Kafka source's ``reportDataLoss``: fail, or log a warning and go on. The error
    names the partition directory when it still exists, else the partition."""
    where = directory if directory is not None else f"{tp[0]}-{tp[1]}"
    if fail:
        raise DataLossError(f"{message}. {_INSTRUCTION}", file=where)
    LOG.warning("kafka_log stream: %s: %s; going on (failOnDataLoss=false)", where, message)


__all__ = [
    "OPTION_NAMES",
    "STREAM_OPTION_NAMES",
    "DataLossError",
    "StreamOptions",
    "TailTracker",
    "TriggerDelay",
    "clamp",
    "from_json",
    "keyed",
    "parse_stream_options",
    "rate_limit",
    "report_data_loss",
    "schema_options",
    "to_json",
]
