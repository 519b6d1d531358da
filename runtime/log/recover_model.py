"""What ``recover`` did (:class:`RecoveryReport`): per partition, the bytes it dropped and
why, the offsets lost with them, what it kept, and the segments it left out."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

#: Why a whole segment is left out in the default mode, in the words of LogLoader's log line.
AFTER_TRUNCATION = (
    "after the truncation point: Kafka's recovery deletes every later segment "
    "(LogLoader.recoverLog)"
)
#: Why a segment is left out with --salvage.
NOTHING_INTACT = "no intact batch in it"


@dataclass(slots=True, frozen=True)
class DroppedRange:
    """Bytes ``[start, end)`` of ``file`` that were not copied, and why (the first cause met
    in them, in the walker's words)."""

    file: str
    start: int
    end: int
    cause: str

    @property
    def size(self) -> int:
        return self.end - self.start

    def as_json(self) -> dict[str, Any]:
        return {"file": self.file, "start": self.start, "end": self.end, "cause": self.cause}


@dataclass(slots=True, frozen=True)
class LostOffsets:
    """Offsets ``first..last`` (inclusive) that are no longer in the log: known from the
    kept batches around the gap. ``last`` is None when nothing was kept after it (the end of
    the lost data is then unknown)."""

    first: int
    last: int | None

    def __str__(self) -> str:
        if self.last is None:
            return f"{self.first}.."
        return str(self.first) if self.first == self.last else f"{self.first}..{self.last}"

    def as_json(self) -> dict[str, Any]:
        return {"first": self.first, "last": self.last}


@dataclass(slots=True, frozen=True)
class DroppedSegment:
    """A whole segment of the source that has no file in the copy."""

    file: str
    size: int
    reason: str

    def as_json(self) -> dict[str, Any]:
        return {"file": self.file, "size": self.size, "reason": self.reason}


@dataclass(slots=True)
class PartitionRecovery:
    """One partition (or one lone segment): what was kept and what was not."""

    source: str
    dest: str
    topic: str | None = None
    partition: int | None = None
    segments_kept: list[str] = field(default_factory=list)
    segments_dropped: list[DroppedSegment] = field(default_factory=list)
    dropped: list[DroppedRange] = field(default_factory=list)
    lost: list[LostOffsets] = field(default_factory=list)
    #: What was not copied without being damage: a partial batch at a segment's end (a
    #: truncated tail, which ``verify`` warns of), an empty segment.
    left_out: list[DroppedRange] = field(default_factory=list)
    #: Batches kept whose length field alone was broken (their records and CRC proved their
    #: end): copied with the length set right. Damage of the source, nothing lost.
    repaired: list[DroppedRange] = field(default_factory=list)
    batches: int = 0
    records: int = 0
    bytes_kept: int = 0
    #: The first and last offsets kept (None when nothing was).
    first_offset: int | None = None
    last_offset: int | None = None
    #: Default mode: whole batches (CRC holding) in what was thrown away, which --salvage
    #: would have kept; their count and records.
    intact_dropped_batches: int = 0
    intact_dropped_records: int = 0
    #: Where the default mode truncated the log (the first invalid batch), if it did.
    truncated_at: DroppedRange | None = None
    #: Whether ``verify`` found no error in the copy of this partition (None: not run).
    verified: bool | None = None

    @property
    def log_end_offset(self) -> int | None:
        return None if self.last_offset is None else self.last_offset + 1

    @property
    def bytes_dropped(self) -> int:
        return sum(d.size for d in self.dropped) + sum(s.size for s in self.segments_dropped)

    @property
    def damaged(self) -> bool:
        """Whether the source held damage (``verify``'s errors): a truncated tail or an
        empty segment is none, nor are the later segments Kafka's recovery deletes after a
        tail in a segment that is not the last (they are reported as dropped all the same)."""
        return bool(
            self.dropped
            or self.repaired
            or any(s.reason != AFTER_TRUNCATION for s in self.segments_dropped)
        )

    def as_json(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "dest": self.dest,
            "topic": self.topic,
            "partition": self.partition,
            "batches_kept": self.batches,
            "records_kept": self.records,
            "bytes_kept": self.bytes_kept,
            "bytes_dropped": self.bytes_dropped,
            "first_offset": self.first_offset,
            "log_end_offset": self.log_end_offset,
            "segments_kept": self.segments_kept,
            "segments_dropped": [s.as_json() for s in self.segments_dropped],
            "dropped": [d.as_json() for d in self.dropped],
            "left_out": [d.as_json() for d in self.left_out],
            "repaired": [d.as_json() for d in self.repaired],
            "offsets_lost": [lost.as_json() for lost in self.lost],
            "intact_batches_dropped": self.intact_dropped_batches,
            "intact_records_dropped": self.intact_dropped_records,
            "verified": self.verified,
        }


@dataclass(slots=True)
class RecoveryReport:
    """What :func:`~.recover.recover` wrote into ``dest``, partition by partition.

    ``verified`` is filled in by whoever runs ``verify`` on ``dest`` (the CLI: ``analysis``
    sits above this layer): None until then, else whether it found no error, with
    ``verify_errors`` its error lines."""

    source: str
    dest: str
    salvage: bool
    partitions: list[PartitionRecovery] = field(default_factory=list)
    #: Paths the broker's directory rules kept from being read, and why.
    skipped: list[tuple[str, str]] = field(default_factory=list)
    verified: bool | None = None
    verify_errors: list[str] = field(default_factory=list)

    @property
    def batches(self) -> int:
        return sum(p.batches for p in self.partitions)

    @property
    def records(self) -> int:
        return sum(p.records for p in self.partitions)

    @property
    def damaged(self) -> list[PartitionRecovery]:
        return [p for p in self.partitions if p.damaged]

    def as_json(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "dest": self.dest,
            "mode": "salvage" if self.salvage else "kafka",
            "batches_kept": self.batches,
            "records_kept": self.records,
            "partitions_damaged": len(self.damaged),
            "verified": self.verified,
            "verify_errors": self.verify_errors,
            "skipped": [{"path": p, "reason": r} for p, r in self.skipped],
            "partitions": [p.as_json() for p in self.partitions],
        }
