"""``verify --remote-log-metadata``: tiered-storage objects against ``__remote_log_metadata``.

The metadata partitions are read and decoded here (``messages.kafka4_topics``, the decoder
``dump --remote-log-metadata-decoder`` uses); the rule, the state replay and the comparison,
is :mod:`..log.remote_segments`'s. Each disagreement is one error line naming the object (or
the name a missing object would have), added to the :class:`VerifyReport` of the objects' own
checks.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from ..errors import KafkaFormatError
from ..files.names import FileKind, remote_segment_file_name
from ..files.storage import LOCAL, Storage
from ..log.remote_segments import (
    RemoteLogState,
    RemoteSegment,
    compare,
    list_objects,
    partition_of_folder,
    read_object_offsets,
    replay,
)
from ..messages.kafka4_topics import decode_remote_log_metadata_record
from ..read.reader import iter_records
from ..read.sources import discover
from .report import FileReport, Problem, VerifyReport

#: The internal topic (``TopicBasedRemoteLogMetadataManagerConfig.REMOTE_LOG_METADATA_TOPIC_
#: NAME``).
REMOTE_LOG_METADATA_TOPIC = "__remote_log_metadata"
KIND = "remote-log-metadata"


def _metadata_partitions(path: str) -> list[str]:
    """The partition directories of ``path``: itself when it holds segments, else its
    ``__remote_log_metadata-N`` directories."""
    targets = discover(LOCAL, path).targets
    if len(targets) == 1 and (
        not targets[0].is_dir or os.path.abspath(targets[0].path) == os.path.abspath(path)
    ):
        return [targets[0].path]
    mine = [t.path for t in targets if t.topic == REMOTE_LOG_METADATA_TOPIC]
    if not mine:
        raise KafkaFormatError(
            f"no {REMOTE_LOG_METADATA_TOPIC}-N partition here", file=os.fspath(path)
        )
    return mine


def _decoded(path: str, report: FileReport) -> Iterator[tuple[int, dict[str, Any]]]:
    for part in _metadata_partitions(path):
        # Records of one segment id all land in one metadata partition (keyed by its
        # topic-partition), in offset order: each partition's order is the one that counts.
        for record in iter_records(part):
            report.counts["entries"] = report.counts.get("entries", 0) + 1
            try:
                yield record.offset, decode_remote_log_metadata_record(record.value)
            except KafkaFormatError as exc:
                report.error("metadata", f"record at offset {record.offset} does not decode: {exc}")


def load_remote_log_metadata(path: str | os.PathLike[str], report: FileReport) -> RemoteLogState:
    """The metadata cache after every record under ``path`` (problems go to ``report``)."""
    state = replay(_decoded(os.fspath(path), report))
    for problem in state.problems:
        report.error("metadata", problem)
    return state


def verify_remote(
    metadata: str | os.PathLike[str],
    paths: Sequence[str | os.PathLike[str]],
    report: VerifyReport,
    storage: Storage = LOCAL,
) -> RemoteLogState | None:
    """Compare each folder of ``paths`` (remote objects) with the metadata at ``metadata``;
    every disagreement is an error of ``report``. None when the metadata does not read."""
    own = report.new(os.fspath(metadata), KIND)
    try:
        state = load_remote_log_metadata(metadata, own)
    except (KafkaFormatError, OSError) as exc:
        if isinstance(exc, KafkaFormatError):
            own.from_exception("read", exc)
        else:
            own.error("io", exc.strerror or str(exc))
        return None
    for raw in paths:
        folder = os.fspath(raw)
        info = storage.info(folder)
        if info is None or not info.is_dir:
            own.error("read", f"{folder}: not a folder of remote objects")
            continue
        objects = list_objects(storage, folder)
        for obj in objects:
            read_object_offsets(storage, obj)
        key = partition_of_folder(state, Path(folder.rstrip("/")).name, objects)
        if key is None:
            own.error(
                "placement",
                f"{folder}: cannot tell which topic-partition this folder holds (name it "
                "topic-N or topic-N-<topic id>)",
            )

        def expected(segment: RemoteSegment, folder: str = folder) -> str:
            name = remote_segment_file_name(segment.start_offset, segment.segment_id, FileKind.LOG)
            return storage.join(folder, name)

        for finding in compare(state, objects, key, expected_name=expected):
            file = storage.display(finding.file)
            own.problems.append(Problem("error", file, None, finding.check, finding.message))
    return state


__all__ = ["KIND", "REMOTE_LOG_METADATA_TOPIC", "load_remote_log_metadata", "verify_remote"]
