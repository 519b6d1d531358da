"""The kinds of file a Kafka log dir and its partition directories hold: one entry each.

An entry (:class:`Kind`) says how a file of its kind is recognised (a segment family suffix,
or exact names), what it is in Kafka's words, where it lives (a segment's, a partition's, the
log dir's) and which reader of this package opens it. The layers above fill in the rest, each
at import, through :func:`register`:

=============  ==============================  ============================================
role           registered by                   what it is
=============  ==============================  ============================================
``dumper``     ``runtime.cli.dump``            ``(path, options, out, err, progress)``:
                                               the file printed as kafka-dump-log prints it
``verifier``   ``runtime.analysis.verify``     ``(path, file_report, alone)``: the file's
                                               checks when it is given on its own
``rebuilder``  ``runtime.log.recover`` and     what ``recover`` writes it with in the copy;
               ``runtime.log.recover_index``   a segment companion's is
                                               ``(segment being written) -> bytes | None``
=============  ==============================  ============================================

A role a kind deliberately lacks is registered as :class:`Unfilled` with the reason (recover
copies a ``partition.metadata``, it does not rebuild it), so that a kind added here without
its roles fails ``tests/files/test_kinds.py`` rather than a dump at a user's prompt. Imports
point down (``tests/test_architecture.py``): this module never names the layers above, they
name it.

A new side file is then one entry in :data:`KINDS` and one ``register`` line in each of those
modules; the dump's dispatch, verify's per-file dispatch and its names for files, the partition
listing (companions of a segment, a partition's own files) and the files recover rebuilds
beside each segment all read this registry.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import PurePath
from typing import Any

from . import checkpoints
from .checkpoints import (
    read_leader_epoch_checkpoint,
    read_offset_checkpoint,
    read_partition_metadata,
)
from .indexes import OffsetIndex, TimeIndex
from .names import FileKind, parse_segment_file_name
from .snapshot import read_producer_snapshot
from .storage import LocalFile
from .txnindex import TransactionIndex


class Scope(enum.StrEnum):
    """Where a file of a kind lives, and so how many there are."""

    #: A member of a segment family, named by a base offset: ``<20 digits>.<suffix>``, or
    #: a tiered-storage object ``<20 digits>-<remote segment id>.<suffix>``.
    SEGMENT = "segment"
    #: One per partition directory, known by its name.
    PARTITION = "partition"
    #: In the log dir itself, beside the partition directories.
    LOG_DIR = "log-dir"


@dataclass(frozen=True, slots=True)
class Unfilled:
    """A role a kind deliberately does without, and why (never empty)."""

    reason: str

    def __post_init__(self) -> None:
        if not self.reason.strip():
            raise ValueError("an unfilled role says why")


Role = Callable[..., Any] | Unfilled
ROLES = ("dumper", "verifier", "rebuilder")


# eq=False: each entry is one object, compared and hashed by identity (its reader is a
# function, and two entries are never the same kind however alike).
@dataclass(frozen=True, slots=True, eq=False)
class Kind:
    """One kind of file: how it is recognised, what it is, and the reader that opens it."""

    #: A short stable name: the segment suffix without its dot, else the file's own name or
    #: family (``offset-checkpoint``, ``unknown``).
    key: str
    scope: Scope
    #: One line, in Kafka's words (its class names in parentheses).
    description: str
    #: ``reader(path)`` opens or parses a file of this kind (a name-less copy aside, for which
    #: the readers take a base offset); :class:`Unfilled` where no format of ours applies.
    reader: Role
    #: The segment family member this kind is (recognised by its suffix); None otherwise.
    segment_kind: FileKind | None = None
    #: Exact file names of this kind.
    names: frozenset[str] = frozenset()
    #: Last suffixes of this kind's files besides the segment family's (with the dot).
    suffixes: frozenset[str] = frozenset()
    #: A segment's own file: it goes with the ``.log`` of its base offset, the broker
    #: deleting it when there is none (``LogLoader``), and ``recover`` rebuilds it beside
    #: every segment it writes.
    companion: bool = False
    #: What reports call a file of this kind (``verify``'s kind column); None: the file's
    #: own name, as for the checkpoints.
    label: str | None = None

    def label_of(self, name: str) -> str:
        """What reports call the file ``name`` of this kind."""
        return self.label if self.label is not None else name

    @property
    def roles(self) -> dict[str, Role | None]:
        """Its roles, as the layers above registered them (None: not registered)."""
        return {name: role_of(self, name) for name in ROLES}


LOG = Kind(
    "log",
    Scope.SEGMENT,
    "a segment's records: record batches appended in offset order (LogSegment, FileRecords)",
    # Mapped bytes: format.framing frames them and read/ decodes the batches, above this layer.
    LocalFile,
    segment_kind=FileKind.LOG,
    label="log",
)
INDEX = Kind(
    "index",
    Scope.SEGMENT,
    "offset index: a batch's last offset, relative to the base offset, and its position in "
    "the .log, one entry per index.interval.bytes (OffsetIndex)",
    OffsetIndex.open,
    segment_kind=FileKind.INDEX,
    companion=True,
    label="index",
)
TIME_INDEX = Kind(
    "timeindex",
    Scope.SEGMENT,
    "time index: the largest timestamp so far and the offset it was seen at (TimeIndex)",
    TimeIndex.open,
    segment_kind=FileKind.TIME_INDEX,
    companion=True,
    label="timeindex",
)
TXN_INDEX = Kind(
    "txnindex",
    Scope.SEGMENT,
    "transaction index: the aborted transactions whose ABORT marker lies in the segment "
    "(TransactionIndex, AbortedTxn)",
    TransactionIndex.open,
    segment_kind=FileKind.TXN_INDEX,
    companion=True,
    label="txnindex",
)
PRODUCER_SNAPSHOT = Kind(
    "snapshot",
    Scope.SEGMENT,
    "producer state snapshot: every producer's epoch, sequence and open transaction at the "
    "offset in its name (ProducerStateManager.takeSnapshot)",
    read_producer_snapshot,
    segment_kind=FileKind.PRODUCER_SNAPSHOT,
    label="snapshot",
)
LEADER_EPOCH_CHECKPOINT = Kind(
    checkpoints.LEADER_EPOCH_CHECKPOINT,
    Scope.PARTITION,
    "leader epoch cache: the start offset of each leader epoch (LeaderEpochCheckpointFile)",
    read_leader_epoch_checkpoint,
    names=frozenset({checkpoints.LEADER_EPOCH_CHECKPOINT}),
)
REMOTE_LEADER_EPOCH_CHECKPOINT = Kind(
    "leader_epoch_checkpoint",
    Scope.SEGMENT,
    "tiered storage's copy of the leader epoch cache up to a remote segment's end, in "
    "leader-epoch-checkpoint's format (RemoteLogSegmentFileType.LEADER_EPOCH_CHECKPOINT)",
    read_leader_epoch_checkpoint,
    segment_kind=FileKind.LEADER_EPOCH_CHECKPOINT,
    label="leader_epoch_checkpoint",
)
PARTITION_METADATA = Kind(
    checkpoints.PARTITION_METADATA,
    Scope.PARTITION,
    "the topic id of the partition's topic (PartitionMetadataFile)",
    read_partition_metadata,
    names=frozenset({checkpoints.PARTITION_METADATA}),
)
OFFSET_CHECKPOINT = Kind(
    "offset-checkpoint",
    Scope.LOG_DIR,
    "an offset per partition of the log dir: recovery point, log start offset, high "
    "watermark or cleaner position (OffsetCheckpointFile)",
    read_offset_checkpoint,
    names=frozenset(checkpoints.OFFSET_CHECKPOINTS),
)
UNKNOWN = Kind(
    "unknown",
    Scope.LOG_DIR,
    "the broker's other files (meta.properties, quorum-state, .kafka_cleanshutdown, .lock, "
    "*.tmp): no batches, no format kafka-dump-log reads (DumpLogSegments: 'Ignoring unknown "
    "file')",
    Unfilled("no format of ours: kafka-dump-log ignores these files, and so do we"),
    names=checkpoints.UNKNOWN_FILES,
    suffixes=checkpoints.UNKNOWN_SUFFIXES,
    label="unknown",
)

#: Every kind, in the order reports list a partition's files of them.
KINDS: tuple[Kind, ...] = (
    LOG,
    INDEX,
    TIME_INDEX,
    TXN_INDEX,
    PRODUCER_SNAPSHOT,
    LEADER_EPOCH_CHECKPOINT,
    REMOTE_LEADER_EPOCH_CHECKPOINT,
    PARTITION_METADATA,
    OFFSET_CHECKPOINT,
    UNKNOWN,
)
#: A segment's own files besides its ``.log``, in that order.
COMPANIONS: tuple[Kind, ...] = tuple(k for k in KINDS if k.companion)
#: The files a partition directory holds one of, known by their names.
PARTITION_FILES: tuple[Kind, ...] = tuple(k for k in KINDS if k.scope is Scope.PARTITION)

_BY_SEGMENT_KIND = {k.segment_kind: k for k in KINDS if k.segment_kind is not None}
_BY_NAME = {name: k for k in KINDS for name in k.names}
_BY_SUFFIX = {
    **{k.segment_kind.suffix: k for k in KINDS if k.segment_kind is not None},
    **{suffix: k for k in KINDS for suffix in k.suffixes},
}


def of_segment(kind: FileKind) -> Kind:
    """The entry of a segment family member."""
    return _BY_SEGMENT_KIND[kind]


def by_name(name: str) -> Kind | None:
    """The kind a file's exact name says (a checkpoint, ``partition.metadata``, ...)."""
    return _BY_NAME.get(name)


def classify(name: str) -> Kind | None:
    """The kind of the file ``name`` (a base name), as kafka-dump-log's suffix switch sorts
    files: its exact name, else a segment file name (temporary suffixes included), else its
    last suffix (a renamed copy such as ``orders-0.00000000000000000120.index``, a ``*.tmp``).
    None for anything else, which is read as batches (a KRaft ``.checkpoint``, any file of
    batches)."""
    kind = _BY_NAME.get(name)
    if kind is not None:
        return kind
    parsed = parse_segment_file_name(name)
    if parsed is not None:
        return _BY_SEGMENT_KIND[parsed.kind]
    return _BY_SUFFIX.get(PurePath(name).suffix)


# --- roles filled by the layers above ---------------------------------------------------------

_roles: dict[tuple[Kind, str], Role] = {}


def _same(a: Role, b: Role) -> bool:
    # A module imported anew (importlib.reload) registers new function objects for the same
    # functions: the same name in the same module is the same role.
    if a == b:
        return True
    names = [(getattr(r, "__module__", None), getattr(r, "__qualname__", None)) for r in (a, b)]
    return names[0] == names[1] and names[0][1] is not None


def register(
    kind: Kind,
    *,
    dumper: Role | None = None,
    verifier: Role | None = None,
    rebuilder: Role | None = None,
) -> None:
    """Fill roles of ``kind`` (None: not this call's). A role filled twice with different
    functions is a mistake, refused."""
    if kind not in KINDS:
        raise ValueError(f"{kind.key}: not an entry of KINDS")
    for name, value in (("dumper", dumper), ("verifier", verifier), ("rebuilder", rebuilder)):
        if value is None:
            continue
        if not (callable(value) or isinstance(value, Unfilled)):
            raise TypeError(f"{kind.key} {name}: {value!r} is neither callable nor Unfilled")
        known = _roles.get((kind, name))
        if known is not None and not _same(known, value):
            raise ValueError(f"{kind.key} has a {name} already: {known!r}")
        _roles[(kind, name)] = value


def role_of(kind: Kind, name: str) -> Role | None:
    """The role as registered: a function, :class:`Unfilled`, or None when no module
    registered it (yet)."""
    if name not in ROLES:
        raise ValueError(f"{name!r} is not a role ({', '.join(ROLES)})")
    return _roles.get((kind, name))


def role(kind: Kind, name: str) -> Callable[..., Any]:
    """The function filling ``kind``'s role ``name``; LookupError when it is unfilled or not
    registered (the module registering it was not imported)."""
    found = role_of(kind, name)
    if isinstance(found, Unfilled):
        raise LookupError(f"{kind.key} has no {name}: {found.reason}")
    if found is None:
        raise LookupError(f"no {name} registered for {kind.key}")
    return found


__all__ = [
    "COMPANIONS",
    "INDEX",
    "KINDS",
    "LEADER_EPOCH_CHECKPOINT",
    "LOG",
    "OFFSET_CHECKPOINT",
    "PARTITION_FILES",
    "PARTITION_METADATA",
    "PRODUCER_SNAPSHOT",
    "REMOTE_LEADER_EPOCH_CHECKPOINT",
    "ROLES",
    "TIME_INDEX",
    "TXN_INDEX",
    "UNKNOWN",
    "Kind",
    "Role",
    "Scope",
    "Unfilled",
    "by_name",
    "classify",
    "of_segment",
    "register",
    "role",
    "role_of",
]
