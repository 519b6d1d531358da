"""The driver's half of the ``kafka_log`` sink (:mod:`.sink`): put the partition directories
the tasks staged into the log dir, one atomic rename each, and bring the log dir's offset
checkpoints up to date.

What a broker reads at start (``LogManager.loadLogs``): every ``topic-N`` directory of the log
dir, and per log dir ``recovery-point-offset-checkpoint`` and ``log-start-offset-checkpoint``
(``LogManager``), ``replication-offset-checkpoint`` (high watermarks, ``ReplicaManager``) and
``cleaner-offset-checkpoint`` (``LogCleanerManager``). A directory whose name is not a
partition's takes the whole log dir offline (``LocalLog.parseTopicPartitionName`` throws), so
the staging area is always removed, whatever happens.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import shutil
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from ..runtime.errors import KafkaFormatError
from ..runtime.files.checkpoints import (
    CLEANER_OFFSET_CHECKPOINT,
    LOG_START_OFFSET_CHECKPOINT,
    OFFSET_CHECKPOINTS,
    RECOVERY_POINT_CHECKPOINT,
    REPLICATION_OFFSET_CHECKPOINT,
    TopicPartition,
    format_offset_checkpoint,
    read_offset_checkpoint,
)
from ..runtime.files.names import FileKind, parse_segment_file_name, partition_dir_name

#: The staging area under the target log dir (removed by commit and abort).
STAGING_DIR = ".kafka_log-staging"


class SinkError(ValueError):
    """What the ``kafka_log`` sink refuses to write, in one line."""


@dataclass(frozen=True, slots=True)
class StagedPiece:
    """One task's records of one partition, staged as a complete partition directory."""

    topic: str
    partition: int
    #: The staged ``topic-N`` directory.
    path: str
    first_offset: int
    #: The piece's last offset + 1.
    log_end_offset: int
    records: int

    @property
    def name(self) -> str:
        return partition_dir_name(self.topic, self.partition)


@dataclass(frozen=True, slots=True)
class Published:
    """A partition directory the commit put in place."""

    topic: str
    partition: int
    log_end_offset: int
    replaced: bool


def staging_area(target: Path, query_id: str) -> Path:
    return target / STAGING_DIR / query_id


def remove_staging(target: Path, query_id: str, *, settle_s: float = 0.0) -> None:
    """Remove this write's staging area, and the staging root once no other write uses it.
    ``settle_s``: for that long, remove again what a task still writing left (a task's
    files appear under a directory being removed until the task notices it is gone)."""
    area = staging_area(target, query_id)
    deadline = time.monotonic() + settle_s
    shutil.rmtree(area, ignore_errors=True)
    while area.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
        shutil.rmtree(area, ignore_errors=True)
    # absent, or another write's area is still there: leave it
    with contextlib.suppress(OSError):
        (target / STAGING_DIR).rmdir()


def publish(
    target: Path, query_id: str, pieces: Iterable[StagedPiece], *, overwrite: bool
) -> list[Published]:
    """Move the staged partitions into ``target``; everything is checked before anything
    moves, so a refusal leaves the log dir as it was."""
    by_partition: dict[tuple[str, int], list[StagedPiece]] = {}
    pieces = list(pieces)
    if not pieces:
        return []  # no rows: nothing to write, the log dir is left as it is
    for piece in pieces:
        by_partition.setdefault((piece.topic, piece.partition), []).append(piece)
    for found in by_partition.values():
        found.sort(key=lambda p: p.first_offset)
        _check_disjoint(found)
    existing = sorted(
        found[0].name for found in by_partition.values() if (target / found[0].name).exists()
    )
    if existing and not overwrite:
        raise SinkError(
            f"mode('append') writes only partitions not yet in {target}, and these are: "
            f"{', '.join(existing)}; write them with mode('overwrite') to replace them"
        )
    stored = {name: _stored_checkpoint(target / name) for name in OFFSET_CHECKPOINTS}

    trash = staging_area(target, query_id) / "replaced"
    published = []
    for key in sorted(by_partition):
        found = by_partition[key]
        staged = _merge(found)
        final = target / found[0].name
        replaced = final.exists()
        if replaced:
            # Two renames, each atomic: the partition is briefly absent, never half-written.
            trash.mkdir(parents=True, exist_ok=True)
            os.rename(final, trash / final.name)
        os.rename(staged, final)
        published.append(Published(key[0], key[1], found[-1].log_end_offset, replaced))
    _write_checkpoints(target, stored, published)
    return published


def _check_disjoint(pieces: list[StagedPiece]) -> None:
    """Pieces of one partition from several tasks can be laid end to end only when their
    offset ranges do not overlap (each becomes segments of its own)."""
    for before, after in itertools.pairwise(pieces):
        if after.first_offset < before.log_end_offset:
            raise SinkError(
                f"{before.name}: two tasks got overlapping offsets ({before.first_offset}.."
                f"{before.log_end_offset - 1} and {after.first_offset}.."
                f"{after.log_end_offset - 1}); a partition's records must reach the sink in "
                "disjoint offset ranges: df.repartition('topic', 'partition') before writing "
                "gives each partition to one task"
            )


def _merge(pieces: list[StagedPiece]) -> Path:
    """One partition directory out of its pieces (in offset order): the later pieces' segment
    files join the first's directory, whose leader-epoch-checkpoint (epoch 0 from the first
    offset) and partition.metadata hold for the whole."""
    first = Path(pieces[0].path)
    for piece in pieces[1:]:
        other = Path(piece.path)
        for file in other.iterdir():
            parsed = parse_segment_file_name(file.name)
            if parsed is not None and parsed.temp_suffix is None:
                os.rename(file, first / file.name)
        shutil.rmtree(other)
    if len(pieces) > 1:
        _remove_stray_snapshots(first)
    return first


def _remove_stray_snapshots(directory: Path) -> None:
    """Each piece snapshotted producer state at its own end; in the whole, a snapshot at no
    segment's base offset is a stray, which the broker deletes at load, all but the largest
    (``ProducerStateManager.removeStraySnapshots``): remove those here."""
    bases, snapshots = set(), []
    for file in directory.iterdir():
        parsed = parse_segment_file_name(file.name)
        if parsed is None or parsed.temp_suffix is not None:
            continue
        if parsed.kind is FileKind.LOG:
            bases.add(parsed.base_offset)
        elif parsed.kind is FileKind.PRODUCER_SNAPSHOT:
            snapshots.append((parsed.base_offset, file))
    largest = max((offset for offset, _ in snapshots), default=None)
    for offset, file in snapshots:
        if offset not in bases and offset != largest:
            file.unlink()


def _stored_checkpoint(path: Path) -> dict[TopicPartition, int]:
    if not path.is_file():
        return {}
    try:
        return read_offset_checkpoint(path)
    except KafkaFormatError as exc:
        raise SinkError(
            f"{path} is damaged ({exc}); a broker would not start on this log dir either"
        ) from None


def _write_checkpoints(
    target: Path, stored: dict[str, dict[TopicPartition, int]], published: list[Published]
) -> None:
    """Each written partition's entries, the other partitions' kept as they were."""
    entries = {name: dict(found) for name, found in stored.items()}
    for p in published:
        tp = TopicPartition(p.topic, p.partition)
        # A clean, whole log: recovered and flushed up to its end, every record committed
        # (the high watermark at the log end offset).
        entries[RECOVERY_POINT_CHECKPOINT][tp] = p.log_end_offset
        entries[REPLICATION_OFFSET_CHECKPOINT][tp] = p.log_end_offset
        # LogManager.checkpointLogStartOffsetsInDir writes a log start offset only when it is
        # above the first segment's base offset; here it is that base.
        entries[LOG_START_OFFSET_CHECKPOINT].pop(tp, None)
        # New data: the cleaner starts over from the log start (LogCleanerManager with no
        # checkpoint for the partition).
        entries[CLEANER_OFFSET_CHECKPOINT].pop(tp, None)
    for name in OFFSET_CHECKPOINTS:
        _write_atomically(target / name, format_offset_checkpoint(entries[name]))


def _write_atomically(path: Path, text: str) -> None:
    """``CheckpointFile.write``: a ``.tmp`` file, flushed, then moved over the old one."""
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w", encoding="utf-8") as fh:
        fh.write(text)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)


__all__ = [
    "STAGING_DIR",
    "Published",
    "SinkError",
    "StagedPiece",
    "publish",
    "remove_staging",
    "staging_area",
]
