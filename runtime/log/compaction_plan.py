"""The cleaner's plan of a partition (``LogCleanerManager``): the header pass over its
segments, the cleanable range, the dirty ratio and the cleaning groups."""

from __future__ import annotations

import contextlib
from bisect import bisect_right
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from ..errors import KafkaFormatError
from ..files.checkpoints import (
    CLEANER_OFFSET_CHECKPOINT,
    REPLICATION_OFFSET_CHECKPOINT,
    TopicPartition,
    read_offset_checkpoint,
)
from ..model import Batch, Report
from ..read.reader import iter_batches
from ..read.transactions import collect_aborted
from .compaction_model import LONG_MAX, CleanerConfig, DirtyRatio, SegmentInfo
from .partition import Partition, Segment

_INT_MAX = (1 << 31) - 1


# --- the header pass ------------------------------------------------------------------------


@dataclass(slots=True)
class PartitionScan:
    segments: list[Segment]
    #: Per segment, its batches: headers, with records decoded for control batches only.
    batches: list[list[Batch]]
    aborted: set[tuple[int, int]]
    open_txns: dict[int, int]
    log_end_offset: int


def _is_control(batch: Batch) -> bool:
    return batch.is_control


def scan_partition(partition: Partition, report: Report) -> PartitionScan:
    per_segment = [
        list(iter_batches(segment.log, records=_is_control, report=report))
        for segment in partition.segments
    ]
    tp = (partition.topic, partition.partition)
    found = collect_aborted((b for batches in per_segment for b in batches), partition.path)
    end = partition.segments[-1].base_offset if partition.segments else 0
    for batches in reversed(per_segment):
        if batches:
            end = batches[-1].next_offset
            break
    return PartitionScan(
        segments=partition.segments,
        batches=per_segment,
        aborted=found.aborted.get(tp, set()),
        open_txns=found.open.get(tp, {}),
        log_end_offset=end,
    )


def decoded_again(scan: PartitionScan) -> Iterator[tuple[int, Batch]]:
    """Every batch again, records decoded, with its segment's slot."""
    for slot, segment in enumerate(scan.segments):
        headers = scan.batches[slot]
        for i, batch in enumerate(iter_batches(segment.log)):
            if i >= len(headers) or headers[i].position != batch.position:
                raise KafkaFormatError("segment changed while being read", file=str(segment.log))
            yield slot, batch


# --- the plan (LogCleanerManager) -----------------------------------------------------------


def _values(bases: list[int], start: int, end: int) -> list[int]:
    """Slots of ``LogSegments.values(from, to)``: from the segment holding ``start`` (or the
    first) to the last one below ``end``."""
    if start == end:
        return []
    if end < start:
        raise ValueError(f"invalid segment range {start}..{end}")
    floor = bisect_right(bases, start) - 1
    first = max(floor, 0)
    return [i for i in range(first, len(bases)) if bases[i] < end]


@dataclass(slots=True, frozen=True)
class _Offsets:
    """The log's offsets the plan starts from (``LogToClean``, ``cleanableOffsets``)."""

    log_start: int
    log_end: int
    high_watermark: int
    last_stable: int
    checkpoint: int | None
    first_dirty: int
    #: The checkpoint was below the log start or beyond the log end.
    reset: bool


def plan_cleaning(
    partition: Partition,
    scan: PartitionScan,
    now: int,
    config: CleanerConfig,
    checkpoint_override: int | None,
) -> DirtyRatio:
    segments = scan.segments
    if not segments:
        raise KafkaFormatError("no .log segments", file=str(partition.path))
    bases = [s.base_offset for s in segments]
    active = len(segments) - 1
    offsets = _offsets(partition, scan, checkpoint_override)
    infos = [_segment_facts(s, scan.batches[i]) for i, s in enumerate(segments)]
    first_dirty = offsets.first_dirty
    non_active_from_dirty = (
        [] if first_dirty > bases[active] else _values(bases, first_dirty, bases[active])
    )
    largest = [largest for largest, _ in infos]
    first_uncleanable, reasons = _first_uncleanable(
        bases, largest, non_active_from_dirty, offsets, now, config
    )
    dirty = _values(bases, min(first_dirty, first_uncleanable), first_uncleanable)
    clean = [i for i, b in enumerate(bases) if b < first_dirty]
    first_stamps = [infos[i][1] for i in non_active_from_dirty]
    groups: list[list[int]] = []
    if first_dirty < first_uncleanable and _values(bases, first_dirty, first_uncleanable):
        cleaned = [i for i, b in enumerate(bases) if b < first_uncleanable]
        groups = _group_by_size(segments, cleaned, config, first_uncleanable)
    return DirtyRatio(
        path=partition.path,
        topic=partition.topic,
        partition=partition.partition,
        now_ms=now,
        log_start_offset=offsets.log_start,
        log_end_offset=offsets.log_end,
        high_watermark=offsets.high_watermark,
        last_stable_offset=offsets.last_stable,
        checkpoint=offsets.checkpoint,
        first_dirty_offset=first_dirty,
        checkpoint_reset=offsets.reset,
        first_uncleanable_offset=first_uncleanable,
        uncleanable_reasons=reasons,
        clean_bytes=sum(segments[i].size for i in clean),
        cleanable_bytes=sum(segments[i].size for i in dirty),
        min_cleanable_ratio=config.min_cleanable_dirty_ratio,
        compaction_delay_ms=_compaction_delay(first_stamps, now, config),
        segments=_describe(segments, largest, active, set(dirty), set(clean), groups),
        groups=[[segments[i].base_offset for i in g] for g in groups],
    )


def _offsets(
    partition: Partition, scan: PartitionScan, checkpoint_override: int | None
) -> _Offsets:
    """The high watermark, the last stable offset and the first dirty offset."""
    log_start = partition.log_start_offset
    assert log_start is not None
    leo = scan.log_end_offset
    hw = min(leo, _log_dir_offset(partition, REPLICATION_OFFSET_CHECKPOINT, leo))
    first_unstable = min(scan.open_txns.values(), default=None)
    lso = first_unstable if first_unstable is not None and first_unstable < hw else hw

    checkpoint = checkpoint_override
    if checkpoint is None:
        checkpoint = _log_dir_offset(partition, CLEANER_OFFSET_CHECKPOINT, None)
    wanted = checkpoint if checkpoint is not None else log_start
    reset = wanted < log_start or wanted > leo
    first_dirty = log_start if reset else wanted
    return _Offsets(log_start, leo, hw, lso, checkpoint, first_dirty, reset)


def _first_uncleanable(
    bases: list[int],
    largest: list[int],
    non_active_from_dirty: list[int],
    offsets: _Offsets,
    now: int,
    config: CleanerConfig,
) -> tuple[int, list[str]]:
    """``cleanableOffsets``: the first uncleanable offset, rounded down to its segment's base
    offset, and what sets it."""
    active = len(bases) - 1
    candidates = [(offsets.last_stable, "last stable offset"), (bases[active], "active segment")]
    if config.min_compaction_lag_ms > 0:
        for i in non_active_from_dirty:
            if largest[i] > now - config.min_compaction_lag_ms:
                candidates.append((bases[i], "min.compaction.lag.ms"))
                break
    bound = min(c for c, _ in candidates)
    reasons = [why for c, why in candidates if c == bound]
    if offsets.first_dirty > bound:
        bound, reasons = offsets.first_dirty, ["first dirty offset"]
    # calculateCleanableBytes: the segment holding the bound, or the active one
    from_bound = [] if bound > bases[active] else _values(bases, bound, bases[active])
    return (bases[from_bound[0]] if from_bound else bases[active]), reasons


def _compaction_delay(first_stamps: list[int], now: int, config: CleanerConfig) -> int:
    """``maxCompactionDelay``: how long ``max.compaction.lag.ms`` has passed for the dirty
    segments' first batches (0: not)."""
    earliest = min((t for t in first_stamps if t > 0), default=None)
    clean_until = now - max(config.max_compaction_lag_ms, 0)
    return clean_until - earliest if earliest is not None and earliest < clean_until else 0


def _describe(
    segments: list[Segment],
    largest: list[int],
    active: int,
    dirty: set[int],
    clean: set[int],
    groups: list[list[int]],
) -> list[SegmentInfo]:
    """Each segment's role in the pass and its cleaning group."""
    group_of = {slot: g for g, members in enumerate(groups) for slot in members}
    described = []
    for i, s in enumerate(segments):
        if i == active:
            role = "active"
        elif i in dirty:
            role = "dirty"
        elif i in clean:
            role = "clean"
        else:
            role = "uncleanable"
        described.append(
            SegmentInfo(
                base_offset=s.base_offset,
                path=s.log,
                size=s.size,
                index_bytes=_file_size(s.index),
                time_index_bytes=_file_size(s.timeindex),
                largest_timestamp=largest[i],
                last_modified_ms=_mtime_ms(s.log),
                role=role,
                group=group_of.get(i),
            )
        )
    return described


def _segment_facts(segment: Segment, batches: list[Batch]) -> tuple[int, int]:
    """(largest timestamp, first batch timestamp) as ``LogSegment`` reports them: the
    largest falls back to the file's last-modified time, the first to Long.MAX_VALUE."""
    stamps = [b.max_timestamp for b in batches if b.max_timestamp is not None]
    largest = max(stamps, default=-1)
    if largest < 0:
        largest = _mtime_ms(segment.log)
    first = batches[0].max_timestamp if batches else None
    return largest, first if first is not None and first >= 0 else LONG_MAX


def _group_by_size(
    segments: list[Segment], slots: list[int], config: CleanerConfig, first_uncleanable: int
) -> list[list[int]]:
    """``Cleaner.groupSegmentsBySize``."""
    groups: list[list[int]] = []
    rest = list(slots)
    while rest:
        head = rest.pop(0)
        group = [head]
        log_size = segments[head].size
        index_size = _file_size(segments[head].index)
        time_size = _file_size(segments[head].timeindex)
        while rest:
            nxt = segments[rest[0]]
            # lastOffsetForFirstSegment: the next segment's base - 1, else the bound - 1
            last = segments[rest[1]].base_offset - 1 if len(rest) > 1 else first_uncleanable - 1
            if not (
                log_size + nxt.size <= config.segment_bytes
                and index_size + _file_size(nxt.index) <= config.max_index_bytes
                and time_size + _file_size(nxt.timeindex) <= config.max_index_bytes
                and (nxt.size == 0 or last - segments[group[-1]].base_offset <= _INT_MAX)
            ):
                break
            group.append(rest.pop(0))
            log_size += nxt.size
            index_size += _file_size(nxt.index)
            time_size += _file_size(nxt.timeindex)
        groups.append(group)
    return groups


def _log_dir_offset(partition: Partition, name: str, default: int | None) -> int | None:
    """This partition's entry in an offset checkpoint of the parent (log) directory."""
    path = partition.path.parent / name
    if partition.topic is None or partition.partition is None or not path.is_file():
        return default
    try:
        offsets = read_offset_checkpoint(path)
    except (KafkaFormatError, OSError):
        return default
    return offsets.get(TopicPartition(partition.topic, partition.partition), default)


def _file_size(path: Path | None) -> int:
    if path is None:
        return 0
    with contextlib.suppress(OSError):
        return path.stat().st_size
    return 0


def _mtime_ms(path: Path) -> int:
    return path.stat().st_mtime_ns // 1_000_000
