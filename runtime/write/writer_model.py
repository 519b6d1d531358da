"""What callers hand a :class:`~.writer.PartitionWriter` and get back: :class:`Message`,
:class:`Producer`, :class:`Appended`, :class:`WrittenRecord` and :class:`PartitionSummary`."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

#: ``RecordBatch.NO_TIMESTAMP``.
NO_TIMESTAMP = -1


@dataclass(slots=True, frozen=True)
class Message:
    """One record as a producer sends it.

    ``timestamp`` None means "now" by the writer's clock. ``offset_delta`` is only for
    follower-style appends that copy a cleaned (compacted) batch: the record's offset minus
    the batch's base offset, leaving gaps where the cleaner removed records.
    """

    key: bytes | None = None
    value: bytes | None = None
    headers: Sequence[tuple[str, bytes | None]] = ()
    timestamp: int | None = None
    offset_delta: int | None = None


@dataclass(slots=True, frozen=True)
class Producer:
    """An idempotent (or transactional) producer's id and epoch, as InitProducerId gave them."""

    producer_id: int
    epoch: int = 0


class Appended(NamedTuple):
    """The offsets an append was given."""

    base_offset: int
    last_offset: int


@dataclass(slots=True)
class Txn:
    producer_id: int
    first_offset: int
    outcome: str = "open"  # "commit", "abort" or still "open"
    records: int = 0


@dataclass(slots=True)
class StableOffset:
    """A partition's last stable offset as its writer keeps it: the first offset of the
    earliest transaction still open, None while none is (``UnifiedLog.firstUnstableOffset``)."""

    offset: int | None = None


@dataclass(slots=True)
class WrittenRecord:
    """A data record as a consumer will see it (``keep_records=True``)."""

    offset: int
    timestamp: int | None
    timestamp_type: int
    key: bytes | None
    value: bytes | None
    headers: tuple[tuple[str, bytes | None], ...]
    magic: int
    producer_id: int = -1
    txn: Txn | None = None
    #: The partition's, shared by every record its writer wrote.
    stable: StableOffset | None = None

    @property
    def transaction_outcome(self) -> str | None:
        """None outside transactions, else "commit", "abort" or "open"."""
        return None if self.txn is None else self.txn.outcome

    @property
    def read_committed(self) -> bool:
        """Whether a read_committed consumer receives it now: committed or outside any
        transaction, and below the partition's last stable offset (a fetch stops there)."""
        if self.txn is not None and self.txn.outcome != "commit":
            return False
        stable = None if self.stable is None else self.stable.offset
        return stable is None or self.offset < stable


@dataclass(slots=True)
class PartitionSummary:
    """What was written to one partition; kept whatever ``keep_records`` says."""

    topic: str
    partition: int
    log_start_offset: int = 0
    log_end_offset: int = 0
    segments: list[int] = field(default_factory=list)
    batches: int = 0
    control_batches: int = 0
    records: int = 0
    tombstones: int = 0
    with_headers: int = 0
    committed: int = 0
    aborted: int = 0
    open: int = 0
    transactions_committed: int = 0
    transactions_aborted: int = 0
    magics: set[int] = field(default_factory=set)
    codecs: set[str] = field(default_factory=set)
    leader_epochs: list[tuple[int, int]] = field(default_factory=list)

    @property
    def read_committed_records(self) -> int:
        return self.records - self.aborted - self.open
