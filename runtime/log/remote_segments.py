"""Tiered storage (KIP-405): the remote segments ``__remote_log_metadata`` says exist, and
whether a folder of remote objects agrees.

Two rules, both Kafka's:

* **State replay** (:func:`replay`): the topic's records applied in offset order, as
  ``RemotePartitionMetadataStore`` and ``RemoteLogMetadataCache`` apply them. A
  ``RemoteLogSegmentMetadata`` record (apiKey 0) adds a segment in ``COPY_SEGMENT_STARTED``
  (``addCopyInProgressSegment`` refuses any other state); a ``RemoteLogSegmentMetadataUpdate``
  (apiKey 1) moves a known segment on (``updateRemoteLogSegmentMetadata``: an unknown id is
  ``RemoteResourceNotFoundException``, a move ``RemoteLogSegmentState.isValidTransition``
  refuses is an ``IllegalArgumentException``; both leave the cache as it was, and are noted
  here), ``DELETE_SEGMENT_FINISHED`` dropping it (``handleSegmentWithDeleteSegmentFinished
  State``); a ``RemotePartitionDeleteMetadata`` (apiKey 2) in ``DELETE_PARTITION_FINISHED``
  drops the whole partition (``handleRemotePartitionDeleteMetadata``). Snapshot records
  (apiKey 3) belong to the manager's own snapshot files, not to the topic: passed over.
* **Comparison** (:func:`compare`): the segments of one topic-partition against the objects of
  a folder (``<offset>-<id>.log``, see :mod:`..files.names`): a ``COPY_SEGMENT_FINISHED``
  segment without its object is *missing*; an object whose id the metadata does not know, or
  knows as deleted, is *extra*; live segments whose ``[startOffset, endOffset]`` overlap;
  an object whose first or last offset is not the metadata's ``startOffset``/``endOffset``
  (``RemoteLogManager.copyLogSegment`` uploads segment ``[baseOffset, nextSegmentBaseOffset
  - 1]``).

Records come in already decoded (the dicts of ``messages.kafka4_topics.
decode_remote_log_metadata_record``): this layer reads no message schema.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..errors import KafkaFormatError
from ..files.names import (
    FileKind,
    parse_partition_dir_name,
    parse_remote_partition_dir_name,
    parse_segment_file_name,
)
from ..files.storage import Storage
from ..format.batches import read_header
from ..format.framing import iter_frames

COPY_SEGMENT_STARTED = "COPY_SEGMENT_STARTED"
COPY_SEGMENT_FINISHED = "COPY_SEGMENT_FINISHED"
DELETE_SEGMENT_STARTED = "DELETE_SEGMENT_STARTED"
DELETE_SEGMENT_FINISHED = "DELETE_SEGMENT_FINISHED"
DELETE_PARTITION_FINISHED = "DELETE_PARTITION_FINISHED"

_SEGMENT_METADATA, _SEGMENT_UPDATE, _PARTITION_DELETE = 0, 1, 2

# RemoteLogSegmentState.isValidTransition (a self transition is valid: retries, failover).
_NEXT_STATES = {
    COPY_SEGMENT_STARTED: {COPY_SEGMENT_FINISHED, DELETE_SEGMENT_STARTED},
    COPY_SEGMENT_FINISHED: {DELETE_SEGMENT_STARTED},
    DELETE_SEGMENT_STARTED: {DELETE_SEGMENT_FINISHED},
}

#: ``(topic id, partition)``: what ``TopicIdPartition`` identifies.
PartitionKey = tuple[str, int]


@dataclass(slots=True)
class RemoteSegment:
    """One remote segment as the metadata last left it."""

    segment_id: str
    topic: str
    topic_id: str
    partition: int
    start_offset: int
    end_offset: int
    state: str
    #: Offset of the metadata record that last changed it.
    offset: int

    @property
    def key(self) -> PartitionKey:
        return self.topic_id, self.partition


@dataclass(slots=True)
class RemoteLogState:
    """The cache after every record: live segments by id, and what went."""

    segments: dict[str, RemoteSegment] = field(default_factory=dict)
    #: Segments a ``DELETE_SEGMENT_FINISHED`` (or a finished partition delete) removed.
    deleted: dict[str, RemoteSegment] = field(default_factory=dict)
    #: Records Kafka would refuse (unknown id, a transition it does not allow): one line each.
    problems: list[str] = field(default_factory=list)

    def of_partition(self, key: PartitionKey) -> list[RemoteSegment]:
        """The live segments of one topic-partition, by start offset."""
        found = [s for s in self.segments.values() if s.key == key]
        return sorted(found, key=lambda s: (s.start_offset, s.end_offset, s.segment_id))


def _partition(tip: Mapping[str, Any]) -> tuple[str, str, int]:
    return tip["name"], tip["id"], tip["partition"]


def replay(records: Iterable[tuple[int, Mapping[str, Any]]]) -> RemoteLogState:
    """Apply decoded ``__remote_log_metadata`` records (``(offset, record)``, in offset
    order within each metadata partition) as the broker's metadata cache does."""
    state = RemoteLogState()
    for offset, record in records:
        data = record.get("data")
        api_key = record.get("apiKey")
        if data is None:
            continue  # an apiKey Kafka does not know: its deserializer fails, nothing applied
        target = record.get("state")
        if api_key == _SEGMENT_METADATA:
            segment_id = data["remoteLogSegmentId"]["id"]
            topic, topic_id, partition = _partition(data["remoteLogSegmentId"]["topicIdPartition"])
            if target != COPY_SEGMENT_STARTED:
                state.problems.append(
                    f"offset {offset}: segment {segment_id} added in state {target}, not "
                    f"{COPY_SEGMENT_STARTED} (addCopyInProgressSegment refuses it)"
                )
                continue
            state.deleted.pop(segment_id, None)
            state.segments[segment_id] = RemoteSegment(
                segment_id,
                topic,
                topic_id,
                partition,
                data["startOffset"],
                data["endOffset"],
                COPY_SEGMENT_STARTED,
                offset,
            )
        elif api_key == _SEGMENT_UPDATE:
            segment_id = data["remoteLogSegmentId"]["id"]
            known = state.segments.get(segment_id)
            if known is None:
                state.problems.append(
                    f"offset {offset}: update to {target} of segment {segment_id}, which the "
                    "metadata does not hold (RemoteResourceNotFoundException)"
                )
                continue
            if target != known.state and target not in _NEXT_STATES.get(known.state, ()):
                state.problems.append(
                    f"offset {offset}: segment {segment_id} cannot go from {known.state} to "
                    f"{target} (RemoteLogSegmentState.isValidTransition)"
                )
                continue
            known.state, known.offset = target, offset
            if target == DELETE_SEGMENT_FINISHED:
                state.deleted[segment_id] = state.segments.pop(segment_id)
        elif api_key == _PARTITION_DELETE and target == DELETE_PARTITION_FINISHED:
            _, topic_id, partition = _partition(data["topicIdPartition"])
            gone = [s for s, v in state.segments.items() if v.key == (topic_id, partition)]
            for segment_id in gone:
                state.deleted[segment_id] = state.segments.pop(segment_id)
    return state


# --- the objects of a folder -------------------------------------------------------------


@dataclass(slots=True)
class RemoteObject:
    """A remote segment's ``.log`` object and the offsets its batches cover."""

    name: str
    path: str
    base_offset: int
    remote_id: str
    #: The first batch's base offset and the last batch's last offset; None when empty.
    first_offset: int | None = None
    last_offset: int | None = None
    #: Why its offsets could not be read (damage: ``verify`` reports it on its own).
    unreadable: str | None = None


def read_object_offsets(storage: Storage, obj: RemoteObject) -> None:
    """Fill ``obj``'s first and last offsets from its batch headers (its bytes read once)."""
    source = storage.open(obj.path)
    try:
        view = source.view()
        for frame in iter_frames(view, file=obj.name):
            header = read_header(frame, file=obj.name)
            if obj.first_offset is None:
                obj.first_offset = header.base_offset
            obj.last_offset = header.last_offset
    except KafkaFormatError as exc:
        obj.unreadable = str(exc)
    finally:
        source.close()


def list_objects(storage: Storage, directory: str) -> list[RemoteObject]:
    """The live remote ``.log`` objects (``<offset>-<id>.log``) of a folder, by base offset;
    local segments and other files are not this comparison's."""
    found = []
    for entry in storage.list_dir(directory):
        parsed = None if entry.is_dir else parse_segment_file_name(entry.name)
        if (
            parsed is None
            or parsed.remote_id is None
            or parsed.kind is not FileKind.LOG
            or not parsed.is_live
        ):
            continue
        found.append(RemoteObject(entry.name, entry.path, parsed.base_offset, parsed.remote_id))
    return sorted(found, key=lambda o: (o.base_offset, o.name))


def partition_of_folder(
    state: RemoteLogState, name: str, objects: list[RemoteObject]
) -> PartitionKey | None:
    """Which topic-partition a folder of objects holds: its name (tiered storage's
    ``topic-N-<topic id>``; a ``topic-N`` whose topic the metadata names once), else the one
    partition its objects' ids belong to; None when that cannot be told."""
    remote = parse_remote_partition_dir_name(name)
    if remote is not None:
        return remote.topic_id, remote.partition
    known = [*state.segments.values(), *state.deleted.values()]
    try:
        local = parse_partition_dir_name(name)
    except KafkaFormatError:
        local = None
    if local is not None:
        ids = {s.topic_id for s in known if s.topic == local.topic}
        if len(ids) == 1:
            return ids.pop(), local.partition
    keys = {
        seg.key
        for o in objects
        if (seg := state.segments.get(o.remote_id) or state.deleted.get(o.remote_id))
    }
    return keys.pop() if len(keys) == 1 else None


@dataclass(frozen=True, slots=True)
class Finding:
    """One disagreement between the metadata and the objects."""

    #: ``missing``, ``extra``, ``overlap``, ``range`` or ``metadata``.
    check: str
    #: The object (or, for a missing one, the name it would have) the line is about.
    file: str
    message: str


def compare(
    state: RemoteLogState,
    objects: list[RemoteObject],
    key: PartitionKey | None,
    *,
    expected_name: Any = None,
) -> list[Finding]:
    """What disagrees between the metadata's segments of ``key`` and ``objects`` (the
    ``.log`` objects of one folder, offsets read). ``key`` None: only objects are judged
    (the folder's partition could not be told). ``expected_name(segment)`` names a missing
    object (default: its id)."""
    findings: list[Finding] = []
    by_id = {o.remote_id: o for o in objects}
    live = state.of_partition(key) if key is not None else []
    live_ids = {s.segment_id for s in live}
    for obj in sorted(objects, key=lambda o: (o.base_offset, o.name)):
        segment = state.segments.get(obj.remote_id)
        if segment is None or obj.remote_id not in live_ids:
            gone = state.deleted.get(obj.remote_id)
            if gone is not None:
                why = f"deleted ({gone.state} at metadata offset {gone.offset})"
            elif segment is not None:
                why = (
                    f"a segment of {segment.topic}-{segment.partition}, not of this folder's "
                    "partition"
                )
            else:
                why = "unknown to the metadata"
            message = f"extra object: segment {obj.remote_id} is {why}"
            findings.append(Finding("extra", obj.path, message))
            continue
        if segment.state != COPY_SEGMENT_FINISHED:
            continue  # a copy or a delete under way: the object may or may not be whole yet
        problems = []
        if obj.base_offset != segment.start_offset:
            problems.append(f"its name says base offset {obj.base_offset}")
        if obj.unreadable is None and obj.first_offset != segment.start_offset:
            problems.append(f"its first offset is {obj.first_offset}")
        if obj.unreadable is None and obj.last_offset != segment.end_offset:
            problems.append(f"its last offset is {obj.last_offset}")
        if problems:
            findings.append(
                Finding(
                    "range",
                    obj.path,
                    f"offsets disagree with the metadata's startOffset {segment.start_offset}, "
                    f"endOffset {segment.end_offset}: " + ", ".join(problems),
                )
            )
    finished = [s for s in live if s.state == COPY_SEGMENT_FINISHED]
    for segment in finished:
        if segment.segment_id not in by_id:
            name = expected_name(segment) if expected_name is not None else segment.segment_id
            findings.append(
                Finding(
                    "missing",
                    name,
                    f"missing object: segment {segment.segment_id} [{segment.start_offset}, "
                    f"{segment.end_offset}] is {COPY_SEGMENT_FINISHED} in the metadata "
                    f"(offset {segment.offset})",
                )
            )
    # Overlaps among the segments a fetch may be served from.
    reach = None
    for segment in finished:
        if reach is not None and segment.start_offset <= reach.end_offset:
            findings.append(
                Finding(
                    "overlap",
                    expected_name(segment) if expected_name is not None else segment.segment_id,
                    f"segment {segment.segment_id} [{segment.start_offset}, "
                    f"{segment.end_offset}] overlaps segment {reach.segment_id} "
                    f"[{reach.start_offset}, {reach.end_offset}]",
                )
            )
        if reach is None or segment.end_offset > reach.end_offset:
            reach = segment
    return findings


__all__ = [
    "COPY_SEGMENT_FINISHED",
    "COPY_SEGMENT_STARTED",
    "DELETE_SEGMENT_FINISHED",
    "DELETE_SEGMENT_STARTED",
    "Finding",
    "RemoteLogState",
    "RemoteObject",
    "RemoteSegment",
    "compare",
    "list_objects",
    "partition_of_folder",
    "read_object_offsets",
    "replay",
]
