"""``recover``: a damaged log's intact batches, copied into a new directory that a broker (and
every reader of ours) accepts.

Two modes, one walk. Every segment is mapped and walked with the one walker
(``format.framing.judge``); each whole frame is checked as Kafka's recovery checks a batch,
and the byte ranges of the batches kept are copied to the output segment as they are met
(nothing of a segment is held but the batch at hand):

* default, Kafka's own recovery after an unclean shutdown, done into the copy
  (``LogLoader.recoverLog`` and ``LogSegment.recover``, storage/src/main/java/org/apache/kafka/
  storage/internals/log/): each batch must frame (``FileLogInputStream.nextBatch``), pass
  ``RecordBatch.ensureValid`` (its size and CRC), fit the segment's indexes
  (``ensureOffsetInRange``) and, for a producer's control batch, hold a marker that reads
  (``ProducerAppendInfo.append``). The segment is truncated before the first batch that does
  not, a partial batch at a segment's end included, and every later segment of the partition
  is dropped (``removeAndDeleteSegmentsAsync``). Unlike the broker, which only recovers the
  segments after its recovery point, every segment is checked: a bad disk damages flushed
  segments too. A batch whose offsets do not increase is taken as the first invalid one too
  (the broker's index refuses it with InvalidOffsetException when an entry falls on it),
  and so is one whose records do not read by the readers' rules (``kernels/records.py``:
  offset deltas that go back or run past the header's, counts that lie): Kafka's recovery
  never decodes records and would keep it, but then every consumer fails on it, and the copy
  promises what ``verify`` and every reader accept. What lies after the truncation point is
  still walked, only to count the intact batches thrown away (what ``salvage`` would keep).
* ``salvage=True``: every batch that passes those checks is kept, before and after damaged
  regions. The frames, the damage between them and where the walk goes on come from the
  salvaging readers' own walk (``read.salvage.salvage_walk``), so that ``recover --salvage``
  and ``errors="salvage"`` keep the same batches of the same bytes: after damage the walk
  resumes at the next whole batch, never inside a batch whose own bytes prove its end, and a
  batch whose length field alone lied is kept with its length set right (its CRC never
  covered it; the report lists it under ``repaired``). Its records must decode, as in the
  default mode, and its first offset must be above the last one kept (a broker's index
  refuses offsets that go back).

A partial batch at a segment's end (a truncated tail) is not damage, as ``verify`` says: it is
left out of the copy and reported under ``left_out``; an empty segment is no damage either.

Offsets keep their values: the copy has gaps where batches were lost, as after compaction, which
Kafka accepts; a segment keeps its file name (its base offset) even when its first batches were
lost. The indexes, transaction indexes, producer snapshots and leader epochs are rebuilt from
the kept batches (:mod:`.recover_index`), the log dir's checkpoints written to match (the
recovery point and high watermark at the kept log end), ``partition.metadata`` and
``meta.properties`` copied. No ``.kafka_cleanshutdown`` marker is written, so a broker started
on the copy runs its own recovery over it (and finds nothing to do).
"""

from __future__ import annotations

import bisect
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from ..cpus import map_in_order
from ..errors import FramingError, KafkaFormatError
from ..files import kinds
from ..files.checkpoints import (
    CLEANER_OFFSET_CHECKPOINT,
    LEADER_EPOCH_CHECKPOINT,
    LOG_START_OFFSET_CHECKPOINT,
    PARTITION_METADATA,
    RECOVERY_POINT_CHECKPOINT,
    REPLICATION_OFFSET_CHECKPOINT,
    EpochEntry,
    TopicPartition,
    format_offset_checkpoint,
    read_leader_epoch_checkpoint,
    read_offset_checkpoint,
    read_partition_metadata,
)
from ..files.names import FileKind, parse_segment_file_name, segment_file_name
from ..files.snapshot import ProducerSnapshotEntry, read_producer_snapshot
from ..files.storage import LOCAL
from ..format import messages
from ..format.batches import ReadOptions, check_crc, decode_records, read_header
from ..format.framing import Frame
from ..model import Batch, Report, TruncatedTail
from ..progress import Progress, SharedProgress
from ..read.ahead import log_sizes, threads_pay
from ..read.columnar import iter_arrow_batches
from ..read.salvage import salvage_walk
from ..read.segment_offsets import SegmentOffsets
from ..read.sources import LogInput, Target, discover, file_input, partition_inputs
from .recover_index import DEFAULT_INDEX_INTERVAL_BYTES, PartitionBook, SegmentOut
from .recover_model import (
    AFTER_TRUNCATION,
    NOTHING_INTACT,
    DroppedRange,
    DroppedSegment,
    LostOffsets,
    PartitionRecovery,
    RecoveryReport,
)

__all__ = ["RecoveryReport", "recover"]

_META_PROPERTIES = "meta.properties"
_DECODE = ReadOptions(True, True)


def recover(
    src: str | os.PathLike[str],
    dest: str | os.PathLike[str],
    *,
    salvage: bool = False,
    progress: Progress | None = None,
    index_interval_bytes: int = DEFAULT_INDEX_INTERVAL_BYTES,
) -> RecoveryReport:
    """Copy what recovery keeps of ``src`` (a segment, a partition directory or a log
    directory) into ``dest`` (a new or empty directory, not inside ``src``).

    The copy mirrors the source: a segment's files, a partition directory's, or a log
    directory with its partition directories and checkpoint files. Raises
    :class:`KafkaFormatError` when nothing can be written (``src`` missing or holding no
    segment, ``dest`` not empty or inside ``src``)."""
    src_path, dest_path = Path(src), Path(dest)
    found = discover(LOCAL, os.fspath(src_path))
    is_file = src_path.is_file()
    if not is_file and not src_path.is_dir():
        raise KafkaFormatError(
            "not a regular file: recover maps the segments it reads (copy it to a file first)",
            file=str(src_path),
        )
    _check_dest(src_path.parent if is_file else src_path, dest_path)
    report = RecoveryReport(str(src_path), str(dest_path), salvage)
    report.skipped = [(s.path, s.reason) for s in found.skipped]
    if not found.targets:
        reasons = "; ".join(f"{p}: {r}" for p, r in report.skipped) or "no segment"
        raise KafkaFormatError(f"nothing to recover ({reasons})", file=str(src_path))
    dest_path.mkdir(parents=True, exist_ok=True)
    itself = src_path.resolve()
    log_dir = not is_file and not any(Path(t.path).resolve() == itself for t in found.targets)

    def one(target: Target) -> PartitionRecovery:
        view = progress.share() if progress is not None else None
        try:
            return _recover(target, dest_path, log_dir, salvage, view, index_interval_bytes)
        finally:
            if view is not None:
                view.finish()

    # Partitions at once where their segments are big enough to pay (ahead.threads_pay), each
    # written to its own directory; the report in the targets' order, as one thread gives it.
    pays = threads_pay(log_sizes(t.path for t in found.targets))
    report.partitions.extend(
        map_in_order(one, found.targets, name="kafka-format-recover", parallel=pays)
    )
    if log_dir:
        _write_log_dir_files(src_path, dest_path, report)
    return report


def _recover(
    target: Target,
    dest: Path,
    log_dir: bool,
    salvage: bool,
    progress: Progress | SharedProgress | None,
    index_interval_bytes: int,
) -> PartitionRecovery:
    """One segment file or partition directory of the source, copied into ``dest``."""
    if not target.is_dir:
        logs = [file_input(target)]
        walk = _PartitionWalk(logs, dest, salvage, progress, index_interval_bytes, lone=True)
        return walk.run(epochs=None)
    source = Path(target.path)
    out = dest / source.name if log_dir else dest
    out.mkdir(exist_ok=True)
    walk = _PartitionWalk(partition_inputs(source), out, salvage, progress, index_interval_bytes)
    part = walk.run(epochs=_source_epochs(source), seed=_source_snapshot(source))
    _copy_partition_metadata(source, out, part)
    return part


def _copy_partition_metadata(source: Path, out: Path, part: PartitionRecovery) -> None:
    """``partition.metadata`` copied when the broker would read it (``PartitionMetadataFile``,
    as ``verify`` checks it); a file it would refuse (it takes the log dir offline) is left
    out and reported: the broker writes it again from the cluster's metadata."""
    path = source / PARTITION_METADATA
    if not path.is_file():
        return
    try:
        read_partition_metadata(path)
    except KafkaFormatError as exc:
        size = path.stat().st_size
        part.dropped.append(DroppedRange(str(path), 0, size, exc.reason))
        return
    shutil.copyfile(path, out / PARTITION_METADATA)


def _check_dest(territory: Path, dest: Path) -> None:
    """Refuse a ``dest`` that is not a new or empty directory, or lies inside the source."""
    where = territory.resolve()
    target = dest.resolve()
    if target == where or where in target.parents:
        raise KafkaFormatError(
            f"is inside the source {territory}: recover never writes into what it reads",
            file=str(dest),
        )
    if dest.exists():
        if not dest.is_dir():
            raise KafkaFormatError("is not a directory", file=str(dest))
        if any(dest.iterdir()):
            raise KafkaFormatError(
                "is not empty: recover writes into a new or empty directory", file=str(dest)
            )


def _source_snapshot(directory: Path) -> list[ProducerSnapshotEntry] | None:
    """The producer snapshot at the first segment's base offset when that is above 0 (the
    state of the producers whose batches were deleted before it), if it reads."""
    logs = partition_inputs(directory)
    base = logs[0].base_offset if logs else None
    if not base:
        return None
    path = directory / segment_file_name(base, FileKind.PRODUCER_SNAPSHOT)
    if not path.is_file():
        return None
    try:
        return list(read_producer_snapshot(path).entries)
    except (KafkaFormatError, OSError):
        return None


def _source_epochs(directory: Path) -> list[EpochEntry] | None:
    """The source's leader epoch cache, or None (rebuilt from the batches alone) when it is
    missing or does not parse."""
    path = directory / LEADER_EPOCH_CHECKPOINT
    if not path.is_file():
        return None
    try:
        return read_leader_epoch_checkpoint(path)
    except (KafkaFormatError, OSError):
        return None


# --- one partition ----------------------------------------------------------------------------


@dataclass(slots=True)
class _Decoded:
    """What the columnar fast path found decoding the records of ``view[start:end]``: the
    positions of the batches it could not read (and why). It stops at framing damage, so
    ``end`` is where it stopped; a walk past it asks again from there."""

    start: int = 0
    end: int = -1
    positions: list[int] = field(default_factory=list)
    causes: list[str] = field(default_factory=list)

    def covers(self, pos: int) -> bool:
        return self.start <= pos < self.end

    def cause(self, pos: int, size: int) -> str | None:
        """Why the batch at ``[pos, pos + size)`` does not read (an error placed anywhere in
        it: record-level errors point at the record), or None."""
        i = bisect.bisect_left(self.positions, pos)
        if i < len(self.positions) and self.positions[i] < pos + size:
            return self.causes[i]
        return None


def _decode_from(view: memoryview, start: int, limit: int) -> _Decoded:
    """Decode ``view[start:limit]`` on the fast path (the numba kernels ``read_table`` uses,
    headers included), keeping nothing but the errors: record batches of bounded size are
    made and dropped, so memory stays bounded whatever the segment's size."""
    report = Report()
    for _ in iter_arrow_batches(
        view[start:limit], include_headers=True, errors="skip", report=report
    ):
        pass
    found = _Decoded(start, limit)
    errors = []
    for exc in report.errors:
        position = start + (exc.position or 0)
        if isinstance(exc, FramingError):
            found.end = min(found.end, position)
        else:
            errors.append((position, exc.reason))
    errors.sort()
    found.positions = [p for p, _ in errors]
    found.causes = [c for _, c in errors]
    return found


@dataclass(slots=True)
class _Verdict:
    """A frame judged: its batch (when the header reads) and why it is not kept (None: kept).
    ``trusted``: the frame's CRC held, so its length can be stepped over."""

    batch: Batch | None
    cause: str | None
    trusted: bool = False


class _PartitionWalk:
    """The walk over one partition's segments, in base-offset order."""

    __slots__ = (
        "book",
        "decoded",
        "dropped_until",
        "gap",
        "index_interval_bytes",
        "last_kept",
        "logs",
        "lone",
        "offsets",
        "out_dir",
        "part",
        "progress",
        "salvage",
        "tail_gap",
        "truncated",
    )

    def __init__(
        self,
        logs: list[LogInput],
        out_dir: Path,
        salvage: bool,
        progress: Progress | SharedProgress | None,
        index_interval_bytes: int,
        *,
        lone: bool = False,
    ) -> None:
        self.logs = logs
        self.out_dir = out_dir
        self.salvage = salvage
        self.decoded = _Decoded()
        self.offsets = SegmentOffsets(None)
        self.progress = progress
        self.index_interval_bytes = index_interval_bytes
        first = logs[0]
        self.part = PartitionRecovery(
            source=str(first.path if lone else first.path.parent),
            dest=str(out_dir),
            topic=first.topic,
            partition=first.partition,
        )
        self.book = PartitionBook()
        self.truncated = False
        self.last_kept: int | None = None
        # Bytes were dropped since the last kept batch (offsets may be lost there).
        self.gap = False
        # ... and they were only a truncated tail: at the log's end, no offsets are known lost.
        self.tail_gap = False
        #: Default mode: the last offset of the intact batches after the truncation point.
        self.dropped_until: int | None = None
        #: A segment given alone: no partition files (epochs, snapshots) are written for it.
        self.lone = lone

    def run(
        self,
        *,
        epochs: list[EpochEntry] | None,
        seed: list[ProducerSnapshotEntry] | None = None,
    ) -> PartitionRecovery:
        self.book = PartitionBook(epochs, seed or ())
        if seed is not None and self.logs[0].base_offset:
            # the snapshot the state started from, at the log's first segment
            self.book.take_snapshot(self.out_dir, self.logs[0].base_offset)
        outs: list[SegmentOut] = []
        for log in self.logs:
            assert log.path is not None
            size = log.path.stat().st_size
            if self.progress is not None:
                self.progress.begin_file(size)
            if self.truncated:
                self.part.segments_dropped.append(DroppedSegment(log.name, size, AFTER_TRUNCATION))
                self._walk(log, None)
                continue
            base = log.base_offset if log.base_offset is not None else 0
            out = SegmentOut(self.out_dir, base, self.index_interval_bytes)
            kept_before, dropped_before = self.part.batches, len(self.part.dropped)
            try:
                self._walk(log, out)
            finally:
                out.close()
            outs.append(out)
            damaged = len(self.part.dropped) > dropped_before
            if self.salvage and self.part.batches == kept_before and damaged:
                self.part.segments_dropped.append(DroppedSegment(log.name, size, NOTHING_INTACT))
        if self.part.batches and not self.lone:
            self.book.take_snapshot(self.out_dir)  # at the log end, as a clean shutdown
        self._finish(outs)
        return self.part

    def _finish(self, outs: list[SegmentOut]) -> None:
        part = self.part
        empty = [o for o in outs if o.size == 0]
        if self.salvage and len(empty) < len(outs):
            for out in empty:  # nothing intact in it: no segment for it in the copy
                for kind in (FileKind.LOG, *(k.segment_kind for k in kinds.COMPANIONS)):
                    assert kind is not None
                    out.file(kind).unlink(missing_ok=True)
            outs = [o for o in outs if o.size]
        part.segments_kept = [str(o.file(FileKind.LOG)) for o in outs]
        if self.gap and not self.tail_gap:
            start = part.last_offset + 1 if part.last_offset is not None else None
            if start is None:
                start = outs[0].base_offset if outs else (self.logs[0].base_offset or 0)
            part.lost.append(LostOffsets(start, self.dropped_until))
        if self.lone:
            return  # a segment given alone: no partition files beside it
        end = part.log_end_offset
        if end is None:
            end = outs[0].base_offset if outs else 0
        self.book.truncate_epochs(end)
        self.book.write_leader_epochs(self.out_dir)

    def _walk(self, log: LogInput, out: SegmentOut | None) -> None:
        """One segment: copy what is kept into ``out`` (None: after the truncation point,
        only count the intact batches). The frames, the damage between them and where the
        walk goes on after each come from the salvaging readers' own walk
        (``read.salvage.salvage_walk``), so that both keep the same batches of the same
        bytes; what is added here is what a copy for a broker needs of each batch."""
        with log.open() as view:
            if not isinstance(view, memoryview):
                raise KafkaFormatError(
                    "not a regular file: recover maps the segments it reads (copy it to a "
                    "file first)",
                    file=log.name,
                )
            limit = len(view)
            base = log.base_offset
            self.decoded = _Decoded()
            self.offsets = SegmentOffsets(base, next_base=log.next_base)
            for step in salvage_walk(view, log.name):
                if self.progress is not None:
                    self.progress.at(step.position)
                if step.tail is not None:
                    self._leave_tail(log, step.tail)
                    return
                end = limit if step.end is None else step.end
                if step.frame is None:
                    assert step.error is not None
                    self._drop(log, step.position, end, step.error.reason)
                    continue
                if step.error is not None and not self.salvage:
                    # Kafka's recovery stops at a length that lies, whatever follows it
                    self._drop(log, step.position, end, step.error.reason)
                    continue
                judged = self._judge(step.frame, log.name, base, view, step.error is not None)
                if judged.cause is None:
                    assert judged.batch is not None
                    self._keep(judged.batch, step.frame, out)
                    if step.error is not None:
                        self.part.repaired.append(
                            DroppedRange(log.name, step.position, end, step.error.reason)
                        )
                    continue
                if step.error is not None:
                    cause = f"{step.error.reason}; {judged.cause}"
                    self._drop(log, step.position, end, cause)
                    continue
                if end != step.position + step.frame.size:
                    # The fast path stepped over the frame by its length: a walk that
                    # resumes elsewhere has it decode from there.
                    self.decoded = _Decoded()
                self._drop(log, step.position, end, judged.cause)

    def _judge(
        self, frame: Frame, name: str, base: int | None, view: memoryview, repaired: bool
    ) -> _Verdict:
        """Kafka's recovery checks of one batch, and with salvage that its records read and
        its offsets follow the kept ones. A ``repaired`` batch (its length field alone lied:
        only salvage keeps it) has its records decoded from its repaired bytes."""
        try:
            batch = read_header(frame, file=name)
            check_crc(batch, frame, True)  # RecordBatch.ensureValid
        except KafkaFormatError as exc:
            return _Verdict(None, exc.reason)
        # Where its offsets may lie in the segment: the readers' own rule (segment_offsets)
        first = None if batch.magic < 2 and batch.codec else batch.base_offset
        misplaced = self.offsets.judge(first, batch.last_offset)
        if misplaced is not None:
            return _Verdict(batch, misplaced, trusted=True)
        self.offsets.passed(batch.last_offset)
        cause = None
        if batch.is_control and batch.producer_id >= 0:
            # its marker feeds the producer state: decoded here (control batches are few)
            try:
                batch.records = decode_records(batch, frame, _DECODE)
            except KafkaFormatError as exc:
                cause = exc.reason
        elif repaired:
            try:
                decode_records(batch, frame, _DECODE)
            except KafkaFormatError as exc:
                cause = exc.reason
        else:
            if not self.decoded.covers(frame.position):
                self.decoded = _decode_from(view, frame.position, len(view))
            cause = self.decoded.cause(frame.position, frame.size)
        if cause is not None:
            return _Verdict(batch, f"records do not read: {cause}", trusted=True)
        if base is None and self.last_kept is not None and batch.first_offset <= self.last_kept:
            # no segment name to judge by: a copy for a broker still needs offsets to increase
            return _Verdict(
                batch,
                f"first offset {batch.first_offset} is not above the last offset kept "
                f"({self.last_kept}): offsets must increase",
                trusted=True,
            )
        return _Verdict(batch, None)

    def _keep(self, batch: Batch, frame: Frame, out: SegmentOut | None) -> None:
        part = self.part
        records = _record_count(batch, frame)
        self.last_kept = batch.last_offset
        if out is None or (self.truncated and not self.salvage):
            # Default mode, after the truncation point: what --salvage would have kept.
            part.intact_dropped_batches += 1
            part.intact_dropped_records += records
            self.dropped_until = batch.last_offset
            return
        if self.gap:
            start = part.last_offset + 1 if part.last_offset is not None else out.base_offset
            if batch.first_offset > start:
                part.lost.append(LostOffsets(start, batch.first_offset - 1))
                self.book.lost_from = start
            self.gap = False
        if out.size == 0 and part.batches and not self.lone:
            self.book.take_snapshot(self.out_dir, out.base_offset)  # UnifiedLog.roll's
        out.append(batch, frame.data)
        self.book.apply(batch, out)
        part.batches += 1
        part.records += records
        part.bytes_kept += frame.size
        if part.first_offset is None:
            part.first_offset = batch.first_offset
        part.last_offset = batch.last_offset

    def _leave_tail(self, log: LogInput, tail: TruncatedTail) -> None:
        """A partial batch at a segment's end: no damage (``verify`` warns of it, and the
        broker writes one whenever it stops uncleanly), but not copied. Kafka's recovery
        still truncates there and, in the default mode, drops every later segment
        (``LogLoader.recoverLog``)."""
        if self.truncated and not self.salvage:
            return
        end = tail.position + tail.size
        left = DroppedRange(log.name, tail.position, end, messages.truncated_tail(tail.size))
        self.part.left_out.append(left)
        self.tail_gap = not self.gap
        self.gap = True  # offsets a later kept batch skips were in it
        if not self.salvage:
            self.part.truncated_at = left
            self.truncated = True

    def _drop(self, log: LogInput, start: int, end: int, cause: str) -> None:
        if self.truncated and not self.salvage:
            return  # already counted: the truncation range reaches the segment's end
        self.gap = True
        self.tail_gap = False
        if self.salvage:
            self.part.dropped.append(DroppedRange(log.name, start, end, cause))
            return
        assert log.path is not None
        dropped = DroppedRange(log.name, start, log.path.stat().st_size, cause)
        self.part.dropped.append(dropped)
        self.part.truncated_at = dropped
        self.truncated = True


def _record_count(batch: Batch, frame: Frame) -> int:
    """Data records in a kept batch: counted from the decoded records, else the v2 header;
    a compressed v0/v1 wrapper is decoded for it (without, its count is unknown)."""
    if batch.records is None and batch.magic < 2 and batch.codec:
        try:
            batch.records = decode_records(batch, frame, _DECODE)
        except KafkaFormatError:
            return 1
    if batch.records is not None:
        return sum(1 for r in batch.records if r.control is None)
    if batch.is_control:
        return 0
    return batch.records_count if batch.magic == 2 else 1


# --- the log dir ------------------------------------------------------------------------------


def _write_log_dir_files(src: Path, dest: Path, report: RecoveryReport) -> None:
    """The offset checkpoints of the copy, consistent with what was kept, and the broker's
    ``meta.properties`` (the directory's identity) copied."""
    stored = {name: _source_checkpoint(src / name) for name in _CHECKPOINTS}
    out: dict[str, dict[TopicPartition, int]] = {name: {} for name in _CHECKPOINTS}
    for part in report.partitions:
        if part.topic is None or part.partition is None:
            continue
        tp = TopicPartition(part.topic, part.partition)
        first_base = _first_base(part)
        end = part.log_end_offset if part.log_end_offset is not None else first_base
        # LogLoader: the recovery point never ahead of the log end; the copy is whole and
        # flushed up to its end.
        out[RECOVERY_POINT_CHECKPOINT][tp] = end
        high_watermark = stored[REPLICATION_OFFSET_CHECKPOINT].get(tp, end)
        out[REPLICATION_OFFSET_CHECKPOINT][tp] = min(high_watermark, end)
        # LogManager writes a log start offset only above the first segment's base offset.
        start = stored[LOG_START_OFFSET_CHECKPOINT].get(tp)
        if start is not None and start > first_base:
            out[LOG_START_OFFSET_CHECKPOINT][tp] = min(start, end)
        cleaned = stored[CLEANER_OFFSET_CHECKPOINT].get(tp)
        if cleaned is not None:
            out[CLEANER_OFFSET_CHECKPOINT][tp] = min(cleaned, end)
    for name in _CHECKPOINTS:
        if (
            name in (RECOVERY_POINT_CHECKPOINT, REPLICATION_OFFSET_CHECKPOINT)
            or (src / name).is_file()
        ):
            (dest / name).write_text(format_offset_checkpoint(out[name]))
    if (src / _META_PROPERTIES).is_file():
        shutil.copyfile(src / _META_PROPERTIES, dest / _META_PROPERTIES)


_CHECKPOINTS = (
    RECOVERY_POINT_CHECKPOINT,
    LOG_START_OFFSET_CHECKPOINT,
    REPLICATION_OFFSET_CHECKPOINT,
    CLEANER_OFFSET_CHECKPOINT,
)


def _source_checkpoint(path: Path) -> dict[TopicPartition, int]:
    if not path.is_file():
        return {}
    try:
        return read_offset_checkpoint(path)
    except (KafkaFormatError, OSError):
        return {}


def _first_base(part: PartitionRecovery) -> int:
    for name in part.segments_kept:
        parsed = parse_segment_file_name(Path(name).name)
        if parsed is not None:
            return parsed.base_offset
    return 0


# What recover writes each kind of file with in the copy (the segments' other files:
# runtime.log.recover_index); tests/files/test_kinds.py holds the registry to it.
kinds.register(
    kinds.LOG,
    rebuilder=kinds.Unfilled(
        "copied, not rebuilt: the kept batches' bytes go into the copy as they are, batch by "
        "batch (SegmentOut.append); every other file is rebuilt from them"
    ),
)
kinds.register(kinds.LEADER_EPOCH_CHECKPOINT, rebuilder=PartitionBook.write_leader_epochs)
kinds.register(
    kinds.REMOTE_LEADER_EPOCH_CHECKPOINT,
    rebuilder=kinds.Unfilled(
        "a tiered-storage object: recover writes a local partition of local segment names, "
        "whose one leader-epoch-checkpoint it rebuilds from the batches' epochs"
    ),
)
kinds.register(
    kinds.PARTITION_METADATA,
    rebuilder=kinds.Unfilled(
        "copied as it is when the broker would read it (_copy_partition_metadata), left out "
        "and reported when not: the broker writes it again from the cluster's metadata"
    ),
)
kinds.register(kinds.OFFSET_CHECKPOINT, rebuilder=_write_log_dir_files)
kinds.register(
    kinds.UNKNOWN,
    rebuilder=kinds.Unfilled(
        "meta.properties (the log dir's identity) is copied; the others (.lock, "
        ".kafka_cleanshutdown, quorum-state, *.tmp) are the running broker's and are left "
        "out: without the clean-shutdown marker a broker started on the copy runs its own "
        "recovery"
    ),
)

# Segment file names in the copy are the source's; a lone file not named as a segment is
# written as the segment at offset 0.
assert segment_file_name(0, FileKind.LOG) == "00000000000000000000.log"
