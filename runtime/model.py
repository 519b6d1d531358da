"""The object model the runtime yields: batches, records, headers, control markers.

Plain dataclasses with ``__slots__``: they hold decoded values only and know nothing about
how the bytes were read, so the CLI, the Arrow path and tests can all build on them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import IntEnum


class TimestampType(IntEnum):
    """Kafka's timestamp type ids (``TimestampType.java``)."""

    NO_TIMESTAMP_TYPE = -1
    CREATE_TIME = 0
    LOG_APPEND_TIME = 1

    @property
    def label(self) -> str:
        """The name kafka-dump-log prints (``CreateTime``, ``LogAppendTime``, ...)."""
        return _TS_LABELS[self]


_TS_LABELS = {
    TimestampType.NO_TIMESTAMP_TYPE: "NoTimestampType",
    TimestampType.CREATE_TIME: "CreateTime",
    TimestampType.LOG_APPEND_TIME: "LogAppendTime",
}


class ControlType(IntEnum):
    """Control record types (``ControlRecordType.java``), including KRaft's."""

    ABORT = 0
    COMMIT = 1
    LEADER_CHANGE = 2
    SNAPSHOT_HEADER = 3
    SNAPSHOT_FOOTER = 4
    KRAFT_VERSION = 5
    KRAFT_VOTERS = 6


@dataclass(slots=True, frozen=True)
class Header:
    """A v2 record header: UTF-8 key, value bytes or None."""

    key: str
    value: bytes | None


@dataclass(slots=True, frozen=True)
class ControlMarker:
    """The decoded key (and, for COMMIT/ABORT, value) of a control record."""

    type: int
    version: int
    coordinator_epoch: int | None = None
    raw_value: bytes | None = None

    @property
    def type_name(self) -> str:
        try:
            return ControlType(self.type).name
        except ValueError:
            return f"UNKNOWN({self.type})"


@dataclass(slots=True)
class Record:
    """One record (v2) or message (v0/v1) with its absolute offset."""

    offset: int
    timestamp: int | None
    timestamp_type: int
    key: bytes | None
    value: bytes | None
    headers: list[Header] = field(default_factory=list)
    sequence: int | None = None
    control: ControlMarker | None = None
    topic: str | None = None
    partition: int | None = None
    #: v0/v1 only: stored and computed CRC of the (inner) message.
    crc: int | None = None
    crc_valid: bool | None = None

    @property
    def is_control(self) -> bool:
        return self.control is not None


@dataclass(slots=True)
class Batch:
    """A v2 RecordBatch, or a v0/v1 log entry (a message, possibly a compressed wrapper).

    For v0/v1 entries the v2-only header fields hold Kafka's "no value" constants (-1), as
    Kafka's ``AbstractLegacyRecordBatch`` reports them.
    """

    file: str | None
    position: int
    base_offset: int
    last_offset: int
    size: int
    magic: int
    attributes: int
    #: The compression codec: a ``format.codecs.Codec`` (an ``IntEnum``: ``batch.codec ==
    #: 2``, ``batch.codec.label == "snappy"``), or the bare id where Kafka defines none (5-7).
    codec: int
    timestamp_type: int
    crc: int
    computed_crc: int | None
    partition_leader_epoch: int = -1
    last_offset_delta: int = 0
    base_timestamp: int | None = None
    max_timestamp: int | None = None
    producer_id: int = -1
    producer_epoch: int = -1
    base_sequence: int = -1
    records_count: int = 1
    is_transactional: bool = False
    is_control: bool = False
    has_delete_horizon: bool = False
    topic: str | None = None
    partition: int | None = None
    records: list[Record] | None = None
    #: Set when the batch's frame is intact but its content is not (``errors="skip"``).
    error: Exception | None = None

    @property
    def crc_valid(self) -> bool | None:
        """Whether the stored CRC holds; None when it was not computed."""
        if self.computed_crc is None:
            return None
        return self.computed_crc == self.crc

    @property
    def delete_horizon_ms(self) -> int | None:
        """The delete horizon the log cleaner stored in ``base_timestamp`` (v2, attribute bit 6)."""
        return self.base_timestamp if self.has_delete_horizon else None

    @property
    def first_offset(self) -> int:
        """Offset of the first record: a compressed v0/v1 wrapper stores only its last one,
        so its first is known once its records are decoded (else ``base_offset``)."""
        return self.records[0].offset if self.records else self.base_offset

    @property
    def next_offset(self) -> int:
        return self.last_offset + 1

    @property
    def last_sequence(self) -> int:
        """Sequence of the last record, wrapping at int32 as ``DefaultRecordBatch`` does."""
        if self.base_sequence < 0:
            return -1
        return increment_sequence(self.base_sequence, self.last_offset_delta)


def increment_sequence(sequence: int, increment: int) -> int:
    """Sequences wrap to 0 after int32 max (``DefaultRecordBatch.incrementSequence``)."""
    if sequence > 0x7FFFFFFF - increment:
        return increment - (0x7FFFFFFF - sequence) - 1
    return sequence + increment


def decrement_sequence(sequence: int, decrement: int) -> int:
    """The inverse wrap (``DefaultRecordBatch.decrementSequence``): below 0 to int32 max."""
    if sequence < decrement:
        return 0x7FFFFFFF - (decrement - sequence) + 1
    return sequence - decrement


@dataclass(slots=True, frozen=True)
class TruncatedTail:
    """Bytes at the end of a file that do not form a whole batch (Kafka stops reading there)."""

    file: str | None
    position: int
    size: int

    def __str__(self) -> str:
        return f"Found {self.size} invalid bytes at the end of {self.file or '<bytes>'}"


@dataclass(slots=True, frozen=True)
class TimestampsOutOfRange:
    """Valid records of one batch whose timestamp has no int64 microsecond value (beyond
    about ±292,000 years from 1970), the unit of Arrow's and Spark's timestamp column: Arrow
    readers return them with a null timestamp; ``iter_records`` keeps the milliseconds."""

    file: str | None
    position: int  # the batch's
    first_offset: int
    count: int

    def __str__(self) -> str:
        return (
            f"{self.file or '<bytes>'} @{self.position}: {self.count} record(s) from offset "
            f"{self.first_offset} have a timestamp beyond Arrow's microsecond range; "
            "their timestamp is null"
        )


@dataclass(slots=True)
class Report:
    """What a read found besides data: damaged batches (skip mode) and truncated tails; and,
    from the Arrow readers, batches whose records' timestamps Arrow cannot hold (not damage:
    the records are returned, with a null timestamp)."""

    errors: list[Exception] = field(default_factory=list)
    truncated: list[TruncatedTail] = field(default_factory=list)
    timestamps_out_of_range: list[TimestampsOutOfRange] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.errors
