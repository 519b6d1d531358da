"""Which partition of ``__consumer_offsets`` holds a consumer group, which partition of
``__transaction_state`` a transactional id, and which of its records are theirs.

Kafka places a group on ``Utils.abs(groupId.hashCode()) % offsets.topic.num.partitions``
(``GroupCoordinatorService.partitionFor``) and a transactional id likewise on
``transaction.state.log.num.partitions`` (``TransactionStateManager.partitionFor``):
:func:`~.internal_topics.coordinator_partition`. The partition count is the topic's, not the
number of its directories on this broker (a broker holds only the replicas it was given), so
:func:`locate` takes it, in this order, from

1. the caller (``--partitions N``);
2. ``__cluster_metadata-0`` in the same log dir (every KRaft node keeps a replica of it): the
   ``PartitionRecord`` entries of the topic's id, through its snapshots and segments;
3. Kafka's default, 50, unless a directory of a higher partition is there, when that many.

The records of one group or transactional id: every key those topics hold starts with its
type or version (int16), then the group id or transactional id as a non-flexible string
(int16 length, UTF-8) -- ``OffsetCommitKey``, ``GroupMetadataKey``, the ``ConsumerGroup*``
and ``ShareGroup*`` keys of ``group-coordinator/src/main/resources/common/message`` and
``TransactionLogKey`` all begin so (``offsets_schemas.OFFSETS_RECORD_TYPES``,
``internal_schemas.TRANSACTION_LOG_KEY``) -- so :class:`KeyOwner` compares those bytes, in
Python per record or over an Arrow column at once. Control records (transaction markers of
transactional offset commits) have no such key and are not the group's.
"""

from __future__ import annotations

import contextlib
import enum
import os
import struct
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc

from ..errors import KafkaFormatError
from ..files.names import parse_kraft_snapshot_name, parse_partition_dir_name
from ..read.reader import iter_records
from ..read.sources import partition_dirs
from .internal_topics import (
    DEFAULT_INTERNAL_PARTITIONS,
    coordinator_partition,
    decode_cluster_metadata_record,
)
from .kafka_message import MessageDecodeError

__all__ = ["Coordinated", "KeyOwner", "Located", "locate"]

_METADATA_DIR = "__cluster_metadata-0"
_PREFIX = struct.Struct(">h")  # the key's type (or version) before the owner string
_SHORT_MAX = 0x7FFF


class Coordinated(enum.StrEnum):
    """The internal topic a look-up is about; the value is the topic's name."""

    GROUP = "__consumer_offsets"
    TRANSACTIONAL_ID = "__transaction_state"

    @property
    def what(self) -> str:
        return "group" if self is Coordinated.GROUP else "transactional id"

    @property
    def partitions_config(self) -> str:
        return (
            "offsets.topic.num.partitions"
            if self is Coordinated.GROUP
            else "transaction.state.log.num.partitions"
        )


@dataclass(frozen=True, slots=True)
class KeyOwner:
    """The records whose key belongs to one group id or transactional id."""

    owner: str
    #: The key's bytes after its int16 type: the owner's int16 length and UTF-8 bytes.
    _tail: bytes

    @classmethod
    def of(cls, owner: str) -> KeyOwner:
        raw = owner.encode("utf-8")
        if len(raw) > _SHORT_MAX:
            raise ValueError(f"{owner[:40]!r}...: longer than a Kafka string ({_SHORT_MAX} bytes)")
        return cls(owner, _PREFIX.pack(len(raw)) + raw)

    def owns(self, key: bytes | memoryview | None) -> bool:
        """Whether a record with this key is the owner's."""
        end = _PREFIX.size + len(self._tail)
        return key is not None and len(key) >= end and bytes(key[_PREFIX.size : end]) == self._tail

    def mask(self, keys: pa.Array) -> pa.BooleanArray:
        """:meth:`owns` over a binary column (null keys are not the owner's)."""
        end = _PREFIX.size + len(self._tail)
        if keys.type not in (pa.binary(), pa.large_binary()):
            keys = keys.cast(pa.large_binary())
        long_enough = pc.greater_equal(pc.binary_length(keys), end)
        same = pc.equal(pc.binary_slice(keys, _PREFIX.size, end), pa.scalar(self._tail, keys.type))
        return pc.fill_null(pc.and_(long_enough, same), False)


@dataclass(frozen=True, slots=True)
class Located:
    """Where a group's or transactional id's records are."""

    topic: Coordinated
    owner: KeyOwner
    partition: int
    partitions: int
    #: How ``partitions`` was found: ``"given"``, ``"__cluster_metadata"`` or ``"assumed"``.
    counted_by: str
    #: The partition's directory in the log dir; None when this log dir does not hold it.
    directory: Path | None

    @property
    def name(self) -> str:
        return f"{self.topic.value}-{self.partition}"

    def describe(self) -> str:
        """One line saying where and why, for stderr."""
        how = {
            "given": "as given",
            "__cluster_metadata": "read from __cluster_metadata",
            "assumed": f"{self.topic.partitions_config}'s default, as no __cluster_metadata "
            "is here; --partitions N if the cluster set another",
        }[self.counted_by]
        return (
            f"{self.topic.what} {self.owner.owner!r} is in {self.name} "
            f"(of {self.partitions} partitions, {how})"
        )


def locate(
    log_dir: str | os.PathLike[str],
    topic: Coordinated,
    owner: str,
    *,
    partitions: int | None = None,
) -> Located:
    """Which partition of ``topic`` in ``log_dir`` holds ``owner``'s records (module doc)."""
    root = Path(log_dir)
    if not root.is_dir():
        raise KafkaFormatError(f"not a log directory: {root}", file=str(root))
    key = KeyOwner.of(owner)
    present = _partition_dirs(root, topic.value)
    counted_by = "given"
    if partitions is None:
        partitions = _metadata_partition_count(root / _METADATA_DIR, topic.value)
        counted_by = "__cluster_metadata"
    if partitions is None:
        partitions = max([DEFAULT_INTERNAL_PARTITIONS, *(p + 1 for p in present)])
        counted_by = "assumed"
    if partitions <= 0:
        raise ValueError(f"a topic has at least one partition, not {partitions}")
    partition = coordinator_partition(owner, partitions)
    return Located(
        topic=topic,
        owner=key,
        partition=partition,
        partitions=partitions,
        counted_by=counted_by,
        directory=present.get(partition),
    )


def _partition_dirs(root: Path, topic: str) -> dict[int, Path]:
    """The live partition directories of ``topic`` in ``root``, by the listing every reader
    of a log dir uses (``sources.partition_dirs``: the broker's directory rules)."""
    found: dict[int, Path] = {}
    for directory in partition_dirs(root):
        with contextlib.suppress(KafkaFormatError):  # tiered storage's topic-N-<id>: not ours
            parsed = parse_partition_dir_name(directory.name)
            if parsed.topic == topic:
                found[parsed.partition] = directory
    return found


def _metadata_partition_count(directory: Path, topic: str) -> int | None:
    """How many partitions ``__cluster_metadata`` gives ``topic``; None when it is not there
    or does not name the topic. The latest ``TopicRecord`` of the name decides its id (a
    topic deleted and created again gets a new one); its ``PartitionRecord`` ids are counted."""
    if not directory.is_dir():
        return None
    topic_id: str | None = None
    partitions: dict[str, set[int]] = {}
    for value in _metadata_values(directory):
        try:
            record = decode_cluster_metadata_record(value)
        except MessageDecodeError:
            continue  # not ours to judge here: dump --cluster-metadata-decoder shows it
        data = record.get("data") or {}
        if record["type"] == "TOPIC_RECORD" and data.get("name") == topic:
            topic_id = data.get("topicId")
        elif record["type"] == "PARTITION_RECORD":
            partitions.setdefault(data.get("topicId"), set()).add(data.get("partitionId"))
    if topic_id is None or not partitions.get(topic_id):
        return None
    return len(partitions[topic_id])


def _metadata_values(directory: Path) -> Iterator[bytes]:
    """The values of the data records of the metadata log: its newest snapshot, then its
    segments (a snapshot holds what the segments it replaced held)."""
    snapshots = sorted(
        (parsed.end_offset, path)
        for path in directory.iterdir()
        if (parsed := parse_kraft_snapshot_name(path.name)) is not None
        and not (parsed.partial or parsed.deleted)
    )
    sources: list[str | Path] = [snapshots[-1][1]] if snapshots else []
    if any(directory.glob("*.log")):
        sources.append(directory)
    for source in sources:
        for record in iter_records(source, errors="skip"):
            if record.control is None and record.value is not None:
                yield record.value
