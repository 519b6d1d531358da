"""Names of the files and directories Kafka keeps in a log dir, and what they encode.

Checked against Kafka's ``LogFileUtils`` (suffixes, ``offsetFromFileName``,
``filenamePrefixFromOffset``), ``LogLoader.removeTempFilesAndCollectSwapFiles`` (which
temporary suffixes exist), ``LocalLog.parseTopicPartitionName`` / ``logDirNameWithSuffix*``
(partition directories, ``-delete`` / ``-future`` / ``-stray``) and raft's ``Snapshots``
(KRaft ``.checkpoint`` files of ``__cluster_metadata-0``).

A segment family shares one base offset, written as 20 zero-padded digits::

    00000000000000000120.log         records
    00000000000000000120.index       offset index (.index)
    00000000000000000120.timeindex   time index
    00000000000000000120.txnindex    aborted transactions
    00000000000000000120.snapshot    producer state at offset 120 (exclusive)

and any of them may carry one more suffix while the broker is replacing or dropping it:
``.deleted`` (scheduled for deletion), ``.cleaned`` (cleaner output not yet swapped in),
``.swap`` (about to replace the live file).

Tiered storage (KIP-405) names a remote segment's objects after its base offset *and* its
``RemoteLogSegmentId``, a Kafka ``Uuid`` in URL-safe base64 without padding (22 characters)::

    00000000000000000120-mTjyhvN8QCuAvYqJZP6ZpA.log
    00000000000000000120-mTjyhvN8QCuAvYqJZP6ZpA.index      (.timeindex, .txnindex, .snapshot)
    00000000000000000120-mTjyhvN8QCuAvYqJZP6ZpA.leader_epoch_checkpoint

as Kafka's reference plugin does (``RemoteLogSegmentFileset.RemoteLogSegmentFileType.
toFilename``: ``startOffset + "-" + uuid + suffix``, matched by its ``FILENAME_FORMAT``
``(\\d+-)([a-zA-Z0-9_-]{22})(\\.[a-z_]+)``), inside a ``topic-partition-<topic id>`` directory
(``RemoteTopicPartitionDirectory``). The base offset is what precedes the first dash: the id may
itself hold dashes, the offset never does. A ``.snapshot`` object holds the producer state at the
segment's *end* (``RemoteLogManager.copyLogSegment`` uploads ``fetchSnapshot(nextSegmentBase
Offset)``), though it is named after its start.
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass

from ..errors import KafkaFormatError

LOG_SUFFIX = ".log"
INDEX_SUFFIX = ".index"
TIME_INDEX_SUFFIX = ".timeindex"
TXN_INDEX_SUFFIX = ".txnindex"
SNAPSHOT_SUFFIX = ".snapshot"
#: A remote segment's leader epochs up to its end (``RemoteLogSegmentFileType.
#: LEADER_EPOCH_CHECKPOINT``): a ``leader-epoch-checkpoint`` file's format under another name.
REMOTE_LEADER_EPOCH_SUFFIX = ".leader_epoch_checkpoint"

DELETED_SUFFIX = ".deleted"
CLEANED_SUFFIX = ".cleaned"
SWAP_SUFFIX = ".swap"
TEMP_SUFFIXES = (DELETED_SUFFIX, CLEANED_SUFFIX, SWAP_SUFFIX)

DELETE_DIR_SUFFIX = "-delete"
FUTURE_DIR_SUFFIX = "-future"
STRAY_DIR_SUFFIX = "-stray"

KRAFT_SNAPSHOT_SUFFIX = ".checkpoint"
KRAFT_SNAPSHOT_PARTIAL_SUFFIX = ".checkpoint.part"
KRAFT_SNAPSHOT_DELETED_SUFFIX = ".checkpoint.deleted"

#: Width of the zero-padded offset in segment file names (``filenamePrefixFromOffset``).
OFFSET_WIDTH = 20
#: Width of the zero-padded epoch in KRaft snapshot names (``Snapshots.EPOCH_WIDTH``).
EPOCH_WIDTH = 10
#: Length of a Kafka ``Uuid`` as ``Uuid.toString`` writes it (base64url, no padding).
REMOTE_ID_LENGTH = 22
#: ``logDirNameWithSuffixCappedLength`` cuts the topic so the whole name fits in this.
MAX_DIR_NAME_LENGTH = 255

_INT64_MAX = (1 << 63) - 1
_INT32_MIN = -(1 << 31)
_INT32_MAX = (1 << 31) - 1

# Java's Integer.parseInt: an optional sign and digits (ASCII only here; Java would also take
# other Unicode digits, which no Kafka ever writes).
_JAVA_INT = re.compile(r"[+-]?[0-9]+")
_DIGITS = re.compile(r"[0-9]+")
# RemoteLogSegmentFileset.FILENAME_FORMAT's uuid group, and RemoteTopicPartitionDirectory's
# "topic-partition-uuid" (Topic.LEGAL_CHARS for the topic).
_REMOTE_ID = re.compile(rf"[A-Za-z0-9_-]{{{REMOTE_ID_LENGTH}}}", re.ASCII)
_REMOTE_DIR = re.compile(
    rf"([A-Za-z0-9._-]+)-([0-9]+)-([A-Za-z0-9_-]{{{REMOTE_ID_LENGTH}}})", re.ASCII
)


class FileKind(enum.StrEnum):
    """Which member of a segment family a file is; the value is its suffix without the dot."""

    LOG = "log"
    INDEX = "index"
    TIME_INDEX = "timeindex"
    TXN_INDEX = "txnindex"
    PRODUCER_SNAPSHOT = "snapshot"
    #: Tiered storage's per-segment copy of the leader epoch cache (see the module's doc).
    LEADER_EPOCH_CHECKPOINT = "leader_epoch_checkpoint"

    @property
    def suffix(self) -> str:
        return "." + self.value


_KIND_BY_SUFFIX = {kind.suffix: kind for kind in FileKind}


class DirState(enum.StrEnum):
    """What a partition directory is for, from its name's suffix."""

    LIVE = "live"
    #: ``topic-N.<uuid>-delete``: renamed for asynchronous deletion.
    DELETE = "delete"
    #: ``topic-N.<uuid>-future``: a replica being moved to this log dir (alter log dirs).
    FUTURE = "future"
    #: ``topic-N.<uuid>-stray``: a replica the controller no longer assigns to this broker.
    STRAY = "stray"


_DIR_SUFFIXES = {
    DELETE_DIR_SUFFIX: DirState.DELETE,
    FUTURE_DIR_SUFFIX: DirState.FUTURE,
    STRAY_DIR_SUFFIX: DirState.STRAY,
}
# LocalLog's Delete/Future/StrayDirPattern: ^(\S+)-(\S+)\.(\S+)<suffix>$
_SUFFIXED_DIR = {
    suffix: re.compile(r"(\S+)-(\S+)\.(\S+)" + re.escape(suffix), re.ASCII)
    for suffix in _DIR_SUFFIXES
}


@dataclass(frozen=True, slots=True)
class SegmentFileName:
    """A parsed segment-family file name such as ``00000000000000000120.index.swap``."""

    name: str
    base_offset: int
    kind: FileKind
    #: ``.deleted``, ``.cleaned`` or ``.swap``; None for a live file.
    temp_suffix: str | None = None
    #: A tiered-storage object's ``RemoteLogSegmentId`` (22 characters); None for a local file.
    remote_id: str | None = None

    @property
    def is_live(self) -> bool:
        return self.temp_suffix is None

    @property
    def is_remote(self) -> bool:
        return self.remote_id is not None

    @property
    def stem(self) -> str:
        """What the family's files share: the name up to its first dot (``00000000000000000120``
        or ``00000000000000000120-<id>``)."""
        return self.name.split(".", 1)[0]

    @property
    def segment_key(self) -> tuple[int, str | None]:
        """What ties a file to its segment: the base offset and, for a remote object, its id
        (two uploads of one offset are two segments)."""
        return self.base_offset, self.remote_id

    def sibling(self, kind: FileKind) -> str:
        """The name of the family member ``kind`` beside this file (same stem, live)."""
        return self.stem + kind.suffix

    @property
    def is_canonical(self) -> bool:
        """True when the offset is written as Kafka writes it: exactly 20 digits."""
        if self.remote_id is not None:
            canonical = remote_segment_file_name(self.base_offset, self.remote_id, self.kind)
            return self.name == canonical + (self.temp_suffix or "")
        return self.name == segment_file_name(self.base_offset, self.kind, self.temp_suffix)


@dataclass(frozen=True, slots=True)
class PartitionDirName:
    """A parsed partition directory name: ``topic-N`` or ``topic-N.<uuid>-delete`` etc."""

    name: str
    topic: str
    partition: int
    state: DirState = DirState.LIVE
    #: The ``<uuid>`` (32 hex digits as Kafka writes it) of a suffixed directory.
    unique_id: str | None = None

    @property
    def topic_maybe_truncated(self) -> bool:
        """Kafka cuts the topic of ``-delete``/``-stray`` names to keep them within 255
        characters (``logDirNameWithSuffixCappedLength``); a name of exactly that length may
        therefore hold only a prefix of the real topic."""
        return (
            self.state in (DirState.DELETE, DirState.STRAY)
            and len(self.name) == MAX_DIR_NAME_LENGTH
        )


@dataclass(frozen=True, slots=True)
class KraftSnapshotName:
    """A KRaft metadata snapshot name: ``<end offset, 20 digits>-<epoch, 10 digits>.checkpoint``."""

    name: str
    end_offset: int
    epoch: int
    #: ``.checkpoint.part``: still being written.
    partial: bool = False
    #: ``.checkpoint.deleted``: marked for deletion.
    deleted: bool = False


def offset_from_file_name(name: str) -> int:
    """The offset before the first dot, as ``LogFileUtils.offsetFromFileName`` reads it.

    Raises ValueError when that part is not a non-negative int64 in decimal digits.
    """
    head = name.split(".", 1)[0]
    if not _DIGITS.fullmatch(head) or int(head) > _INT64_MAX:
        raise ValueError(f"{name!r} does not start with an offset")
    return int(head)


def segment_file_name(base_offset: int, kind: FileKind, temp_suffix: str | None = None) -> str:
    """The name Kafka gives this file: 20 zero-padded digits, the suffix, any temp suffix."""
    if not 0 <= base_offset <= _INT64_MAX:
        raise ValueError(f"base offset {base_offset} is not a non-negative int64")
    if temp_suffix is not None and temp_suffix not in TEMP_SUFFIXES:
        raise ValueError(f"unknown temporary suffix {temp_suffix!r}")
    return f"{base_offset:0{OFFSET_WIDTH}d}{kind.suffix}{temp_suffix or ''}"


def remote_segment_file_name(base_offset: int, remote_id: str, kind: FileKind) -> str:
    """A tiered-storage object's name (``RemoteLogSegmentFileType.toFilename``, the offset
    from ``LogFileUtils.filenamePrefixFromOffset``)."""
    if not _REMOTE_ID.fullmatch(remote_id):
        raise ValueError(f"{remote_id!r} is not a Kafka Uuid (22 characters of base64url)")
    return f"{segment_file_name(base_offset, kind).split('.', 1)[0]}-{remote_id}{kind.suffix}"


def parse_segment_file_name(name: str) -> SegmentFileName | None:
    """Parse a segment-family file name; None for any other file (checkpoints, metadata...).

    Kafka itself accepts any decimal offset before the first dot (``Long.parseLong``), not only
    20 digits, so we do too; :attr:`SegmentFileName.is_canonical` tells them apart. A
    tiered-storage object ``<offset>-<22-character id>.<suffix>`` parses with its
    :attr:`~SegmentFileName.remote_id`; a KRaft ``<offset>-<epoch>.checkpoint`` does not (its
    suffix is no segment family member's, and an epoch is 10 digits, not an id).
    """
    head, dot, rest = name.partition(".")
    remote_id = None
    if "-" in head:
        head, _, remote_id = head.partition("-")
        if not _REMOTE_ID.fullmatch(remote_id):
            return None
    if not dot or not _DIGITS.fullmatch(head) or int(head) > _INT64_MAX:
        return None
    suffix = "." + rest
    temp = None
    for candidate in TEMP_SUFFIXES:
        if suffix.endswith(candidate):
            temp = candidate
            suffix = suffix[: -len(candidate)]
            break
    kind = _KIND_BY_SUFFIX.get(suffix)
    if kind is None:
        return None
    return SegmentFileName(
        name=name, base_offset=int(head), kind=kind, temp_suffix=temp, remote_id=remote_id
    )


@dataclass(frozen=True, slots=True)
class RemotePartitionDirName:
    """A tiered-storage partition directory: ``topic-partition-<topic id>``
    (``RemoteTopicPartitionDirectory``)."""

    name: str
    topic: str
    partition: int
    topic_id: str


def parse_remote_partition_dir_name(name: str) -> RemotePartitionDirName | None:
    """``topic-N-<topic id>`` as ``RemoteTopicPartitionDirectory.FILENAME_FORMAT`` matches it;
    None for any other name."""
    found = _REMOTE_DIR.fullmatch(name)
    if found is None or int(found.group(2)) > _INT32_MAX:
        return None
    return RemotePartitionDirName(name, found.group(1), int(found.group(2)), found.group(3))


class AmbiguousSegmentError(KafkaFormatError):
    """Two segments of one folder share a base offset: two uploads of one remote segment
    (a new leader copied it again under another id), or a local and a remote copy."""


def ambiguous_segment(
    base_offset: int, first: str, second: str, *, directory: str | None = None
) -> AmbiguousSegmentError:
    """The one line that says so, naming both files (base names; the error's file is their
    directory); never pick one silently."""
    a, b = sorted((first, second))
    return AmbiguousSegmentError(
        f"two segments with base offset {base_offset}: {a} and {b} (two uploads of one remote "
        "segment?); read one file, or verify with --remote-log-metadata to see which is live",
        file=directory,
    )


def parse_kraft_snapshot_name(name: str) -> KraftSnapshotName | None:
    """Parse a KRaft snapshot file name as raft's ``Snapshots.parse`` does; None otherwise."""
    partial = name.endswith(KRAFT_SNAPSHOT_PARTIAL_SUFFIX)
    deleted = name.endswith(KRAFT_SNAPSHOT_DELETED_SUFFIX)
    if not (partial or deleted or name.endswith(KRAFT_SNAPSHOT_SUFFIX)):
        return None
    offset_text = name[:OFFSET_WIDTH]
    epoch_text = name[OFFSET_WIDTH + 1 : OFFSET_WIDTH + 1 + EPOCH_WIDTH]
    if (
        name[OFFSET_WIDTH : OFFSET_WIDTH + 1] != "-"
        or not _DIGITS.fullmatch(offset_text)
        or not _DIGITS.fullmatch(epoch_text)
        or int(offset_text) > _INT64_MAX
        or int(epoch_text) > _INT32_MAX
    ):
        return None
    return KraftSnapshotName(
        name=name,
        end_offset=int(offset_text),
        epoch=int(epoch_text),
        partial=partial,
        deleted=deleted,
    )


def parse_partition_dir_name(name: str) -> PartitionDirName:
    """Topic and partition from a partition directory name, by ``LocalLog.parseTopicPartitionName``.

    The partition is what follows the *last* dash, so topics with dashes work. A suffixed name
    ``topic-N.<uuid>-delete`` (also ``-future``, ``-stray``) drops everything from its last dot.
    Raises :class:`KafkaFormatError` (with ``file`` set to the name) where Kafka would refuse
    the directory.
    """

    def refuse(why: str) -> KafkaFormatError:
        return KafkaFormatError(
            f"not a partition directory name ({why}); expected topic-partition or "
            "topic-partition.uniqueId-delete/-future/-stray",
            file=name,
        )

    if not name or "-" not in name:
        raise refuse("no dash")
    state = DirState.LIVE
    unique_id = None
    base = name
    for suffix, suffix_state in _DIR_SUFFIXES.items():
        if name.endswith(suffix):
            if not _SUFFIXED_DIR[suffix].fullmatch(name):
                raise refuse(f"malformed {suffix} name")
            state = suffix_state
            dot = name.rindex(".")
            base = name[:dot]
            unique_id = name[dot + 1 : -len(suffix)]
            break
    dash = base.rindex("-") if "-" in base else -1
    topic, partition_text = base[:dash], base[dash + 1 :]
    if dash < 0 or not topic or not partition_text:
        raise refuse("empty topic or partition")
    if not _JAVA_INT.fullmatch(partition_text) or not (
        _INT32_MIN <= int(partition_text) <= _INT32_MAX
    ):
        raise refuse(f"partition {partition_text!r} is not an int32")
    return PartitionDirName(
        name=name, topic=topic, partition=int(partition_text), state=state, unique_id=unique_id
    )


#: Why the broker never serves a directory with this state as a partition's data
#: (``LogManager.loadLog`` sends ``-delete`` directories to deletion, ``-future`` ones to
#: the replica mover, ``-stray`` ones aside; fetches read only the live ``topic-N``).
_DIR_SKIP_REASONS = {
    DirState.DELETE: "a partition directory renamed for deletion (-delete), not live data",
    DirState.FUTURE: "a replica being moved between log dirs (-future), not yet live data",
    DirState.STRAY: "a replica no longer assigned to this broker (-stray), not live data",
}
#: Why a file with a temporary suffix is not read (``LogFileUtils`` suffixes;
#: ``LogLoader.removeTempFilesAndCollectSwapFiles`` deletes or renames every one of them).
_FILE_SKIP_REASONS = {
    DELETED_SUFFIX: "scheduled for deletion (.deleted), not live data",
    CLEANED_SUFFIX: "log cleaner output not yet swapped in (.cleaned), not live data",
    SWAP_SUFFIX: "a file about to replace a live one (.swap), not live data",
}


def skip_reason(name: str, *, is_dir: bool) -> str | None:
    """Why a broker would never read ``name`` as a partition's data; None when it may.

    Directories: ``topic-N.<uuid>-delete``, ``-future`` and ``-stray``. Files: any name
    ending ``.deleted``, ``.cleaned`` or ``.swap`` (a segment, an index, a snapshot, a KRaft
    ``.checkpoint.deleted``). Other names (``meta.properties``, a bare ``dump.bin``) are not
    the broker's business and get None.
    """
    if is_dir:
        for suffix, state in _DIR_SUFFIXES.items():
            if name.endswith(suffix) and _SUFFIXED_DIR[suffix].fullmatch(name):
                return _DIR_SKIP_REASONS[state]
        return None
    for suffix, reason in _FILE_SKIP_REASONS.items():
        if name.endswith(suffix):
            return reason
    return None


def partition_dir_name(topic: str, partition: int) -> str:
    """The live directory name of a partition (``LocalLog.logDirName``)."""
    return f"{topic}-{partition}"
