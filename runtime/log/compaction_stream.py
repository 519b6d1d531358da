"""One cleaning pass streamed: the same decisions as :func:`.compaction.compact`, made on
Arrow columns a chunk at a time, with memory bounded by the offset map (one entry a distinct
key of the dirty range, as Kafka's own ``SkimpyOffsetMap``) rather than by the log.

``compact`` decodes every record into a Python object, twice, and keeps them all in the
result: on a 100 MiB partition that was minutes and gigabytes. Here the records come from the
columnar reader (numba kernels), the offset map is built with Arrow's hash aggregation
(key -> largest offset, segment by segment), each chunk's records are judged with numpy, and
the kept (or removed) rows go to a sink as Arrow record batches while the pass runs. Batch
headers and control records come from the same header pass and the same per-batch verdicts
(``compaction_plan``, ``compaction_filter``) as ``compact``'s, so both agree batch for batch;
the tests hold them to it.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..errors import KafkaFormatError
from ..model import Record
from ..read.columnar import iter_arrow_batches
from .compaction_filter import BatchVerdict, outcome, removal, settle, start_pass
from .compaction_model import CleanerConfig, CompactionResult, DirtyRatio, NullKeys
from .compaction_plan import PartitionScan

__all__ = ["REASONS", "KeptSink", "ProgressLike", "RemovedSink", "compact_stream"]

#: Why a row goes, by the code :func:`compact_stream` gives it (0: kept).
REASONS = (None, "aborted", "null key", "superseded", "tombstone")
_ABORTED, _NULL_KEY, _SUPERSEDED, _TOMBSTONE = 1, 2, 3, 4

#: Receives the kept data records, in offset order, as Arrow record batches (the columnar
#: reader's schema, with ``file`` and ``position``).
KeptSink = Callable[[pa.RecordBatch], None]
#: Receives the removed data records and, row for row, why each goes.
RemovedSink = Callable[[pa.RecordBatch, list[str]], None]


class ProgressLike(Protocol):
    """What :func:`compact_stream` tells of its progress (``runtime.progress.Progress``)."""

    total: int
    files: int

    def begin_file(self, size: int) -> None: ...

    def at(self, position: int) -> None: ...


def compact_stream(
    path: str | os.PathLike[str],
    *,
    now_ms: int | None = None,
    config: CleanerConfig | None = None,
    null_keys: NullKeys = "drop",
    first_dirty_offset: int | None = None,
    only_if_due: bool = False,
    cleanup_policy: str | None = None,
    topic_policies: Mapping[str, str] | None = None,
    on_kept: KeptSink | None = None,
    on_removed: RemovedSink | None = None,
    include_headers: bool = False,
    progress: ProgressLike | None = None,
) -> CompactionResult:
    """:func:`.compaction.compact`'s pass, streamed: the result's ``records`` and ``removed``
    stay empty (``records_kept`` and ``removed_by_reason()`` count them); the records go to
    ``on_kept`` / ``on_removed`` as the pass reaches them. ``include_headers``: the sinks'
    batches carry the records' headers. ``progress`` is told the bytes read: start its
    ``total`` and ``files`` at the segments' bytes and count; the pass adds the dirty
    segments, which it reads twice, once the plan says which they are."""
    config = config or CleanerConfig()
    start = start_pass(
        path,
        now_ms=now_ms,
        config=config,
        null_keys=null_keys,
        first_dirty_offset=first_dirty_offset,
        only_if_due=only_if_due,
        cleanup_policy=cleanup_policy,
        topic_policies=topic_policies,
    )
    scan, plan, now, cleaning, verdicts = (
        start.scan,
        start.plan,
        start.now,
        start.cleaning,
        start.verdicts,
    )
    result = CompactionResult(plan, policy=start.policy, kept_count=0, removed_counts={})
    result.warnings.extend(start.warnings)
    by_position = {(v.segment, v.batch.position): v for v in verdicts}
    dirty = [i for i, s in enumerate(plan.segments) if s.role == "dirty"] if cleaning else []
    if progress is not None:  # the dirty segments are read twice
        progress.total += sum(scan.segments[i].size for i in dirty)
        progress.files += len(dirty)
    offset_map = _offset_map(scan, plan, by_position, dirty, progress) if cleaning else None
    judge = _Judge(plan, offset_map, null_keys, now, config)
    for slot in range(len(scan.segments)):
        _segment_pass(result, scan, slot, by_position, judge, on_kept, on_removed,
                      include_headers, progress)  # fmt: skip
    return result


# --- the offset map (Cleaner.buildOffsetMap) ------------------------------------------------


@dataclass(slots=True)
class _OffsetMap:
    keys: pa.Array
    #: The largest offset of each key, then -1 (what a key not in the map looks up).
    last: np.ndarray


def _offset_map(
    scan: PartitionScan,
    plan: DirtyRatio,
    by_position: dict[tuple[int, int], BatchVerdict],
    dirty: list[int],
    progress: ProgressLike | None,
) -> _OffsetMap:
    """Key -> largest offset over the dirty segments' data records that have a key, are at
    or past the first dirty offset and are not aborted data."""
    merged: pa.Table | None = None
    for slot in dirty:
        segment = scan.segments[slot]
        aborted = np.array(
            sorted(
                b.position
                for b in scan.batches[slot]
                if (v := by_position.get((slot, b.position))) is not None and v.aborted
            ),
            np.int64,
        )
        parts = [] if merged is None else [merged]
        if progress is not None:
            progress.begin_file(segment.size)
        for chunk in iter_arrow_batches(segment.log, include_position=True):
            if not chunk.num_rows:
                continue
            offsets = chunk.column("offset").to_numpy()
            positions = chunk.column("position").to_numpy()
            keys = chunk.column("key")
            mask = _valid(keys) & (offsets >= plan.first_dirty_offset)
            if aborted.size:
                mask &= ~np.isin(positions, aborted)
            table = pa.table({"key": keys.filter(pa.array(mask)), "offset": offsets[mask]})
            parts.append(_last_offsets(table))
            if progress is not None:
                progress.at(int(positions[-1]))
        merged = _last_offsets(pa.concat_tables(parts)) if parts else merged
    if merged is None:
        return _OffsetMap(pa.array([], pa.binary()), np.full(1, -1, np.int64))
    last = np.append(merged.column("offset").to_numpy().astype(np.int64), -1)
    return _OffsetMap(merged.column("key").combine_chunks(), last)


def _last_offsets(table: pa.Table) -> pa.Table:
    """(key, offset) rows -> one row a key, with its largest offset."""
    grouped = table.group_by("key", use_threads=False).aggregate([("offset", "max")])
    return pa.table({"key": grouped.column("key"), "offset": grouped.column("offset_max")})


def _valid(array: pa.Array | pa.ChunkedArray) -> np.ndarray:
    return np.asarray(array.is_valid().to_numpy(zero_copy_only=False), bool)


# --- the records (Cleaner.cleanInto's RecordFilter.shouldRetainRecord) ----------------------


@dataclass(slots=True)
class _Judge:
    plan: DirtyRatio
    offset_map: _OffsetMap | None
    null_keys: NullKeys
    now: int
    config: CleanerConfig

    @property
    def latest(self) -> int:
        return self.plan.first_uncleanable_offset - 1

    def reasons(
        self, chunk: pa.RecordBatch, batch: np.ndarray, cleaned, discard, expired
    ) -> np.ndarray:
        """A reason code per row (0: kept), in ``compaction_filter._removal``'s order."""
        offsets = chunk.column("offset").to_numpy()
        has_key = _valid(chunk.column("key"))
        no_value = ~_valid(chunk.column("value"))
        reason = np.zeros(chunk.num_rows, np.int8)
        in_clean = cleaned[batch]
        aborted = in_clean & discard[batch]
        reason[aborted] = _ABORTED
        live = in_clean & ~aborted & (offsets <= self.latest)
        if self.null_keys == "drop":
            reason[live & ~has_key] = _NULL_KEY
        live &= has_key
        if self.offset_map is not None and live.any():
            found = pc.index_in(chunk.column("key"), value_set=self.offset_map.keys)
            index = found.fill_null(-1).to_numpy(zero_copy_only=False).astype(np.int64)
            mapped = self.offset_map.last[index]  # -1, a key not in the map: its sentinel
            superseded = live & (offsets < mapped)
            reason[superseded] = _SUPERSEDED
            reason[live & ~superseded & no_value & expired[batch]] = _TOMBSTONE
        return reason


def _segment_pass(
    result: CompactionResult,
    scan: PartitionScan,
    slot: int,
    by_position: dict[tuple[int, int], BatchVerdict],
    judge: _Judge,
    on_kept: KeptSink | None,
    on_removed: RemovedSink | None,
    include_headers: bool,
    progress: ProgressLike | None,
) -> None:
    """One segment's data records judged chunk by chunk, then each batch settled."""
    headers = scan.batches[slot]
    segment = scan.segments[slot]
    n = len(headers)
    positions = np.fromiter((b.position for b in headers), np.int64, n)
    verdicts = [by_position.get((slot, b.position)) for b in headers]
    cleaned = np.fromiter((v is not None for v in verdicts), bool, n)
    discard = np.fromiter((v is not None and v.discard_records for v in verdicts), bool, n)
    expired = np.fromiter((v is not None and v.tombstones_expired for v in verdicts), bool, n)
    kept = np.zeros(n, np.int64)
    total = np.zeros(n, np.int64)
    tombstone_kept = np.zeros(n, bool)
    removed_counts = result.removed_counts
    assert removed_counts is not None and result.kept_count is not None
    if progress is not None:
        progress.begin_file(segment.size)
    for chunk in iter_arrow_batches(
        segment.log, include_headers=include_headers, include_position=True
    ):
        if not chunk.num_rows:
            continue
        rows_at = chunk.column("position").to_numpy()
        batch = np.searchsorted(positions, rows_at)
        if n == 0 or (batch >= n).any() or (positions[np.minimum(batch, n - 1)] != rows_at).any():
            raise KafkaFormatError("segment changed while being read", file=str(segment.log))
        reason = judge.reasons(chunk, batch, cleaned, discard, expired)
        keep = reason == 0
        np.add.at(total, batch, 1)
        np.add.at(kept, batch, keep)
        no_value = ~_valid(chunk.column("value"))
        tombstone_kept[batch[keep & no_value]] = True
        result.kept_count += int(keep.sum())
        for code in np.unique(reason[~keep]):
            name = REASONS[code]
            assert name is not None
            removed_counts[name] = removed_counts.get(name, 0) + int((reason == code).sum())
        _null_keys(result, chunk)
        if on_kept is not None and keep.any():
            on_kept(chunk if keep.all() else chunk.filter(pa.array(keep)))
        if on_removed is not None and not keep.all():
            gone = ~keep
            on_removed(chunk.filter(pa.array(gone)), [REASONS[c] for c in reason[gone]])
        if progress is not None:
            progress.at(int(rows_at[-1]))
    for i, header in enumerate(headers):
        _settle_batch(result, slot, header, verdicts[i], int(kept[i]), int(total[i]),
                      bool(tombstone_kept[i]), judge)  # fmt: skip


def _null_keys(result: CompactionResult, chunk: pa.RecordBatch) -> None:
    """Every data record without a key, listed (as ``compact`` lists them)."""
    keys = chunk.column("key")
    if not keys.null_count:
        return
    rows = chunk.filter(keys.is_null())
    topic, partition = chunk.column("topic")[0].as_py(), chunk.column("partition")[0].as_py()
    micros = rows.column("timestamp").cast(pa.int64()).to_pylist()
    for offset, stamp, kind, value in zip(
        rows.column("offset").to_pylist(),
        [None if us is None else us // 1000 for us in micros],
        rows.column("timestampType").to_pylist(),
        rows.column("value").to_pylist(),
        strict=True,
    ):
        result.null_key_records.append(
            Record(offset, stamp, kind, None, value, topic=topic, partition=partition)
        )


def _settle_batch(
    result: CompactionResult,
    slot: int,
    batch,
    verdict: BatchVerdict | None,
    kept: int,
    total: int,
    tombstone_kept: bool,
    judge: _Judge,
) -> None:
    """What becomes of one batch, as ``compact``'s ``_pass_through`` / ``_clean_batch``."""
    if batch.is_control:
        records = batch.records or []
        if verdict is None:
            result.markers_kept += len(records)
            horizon = batch.delete_horizon_ms
            result.batches.append(outcome(batch, slot, "not cleaned", len(records), 0, horizon))
            return
        staying = sum(
            1
            for r in records
            if removal(r, batch, verdict, {}, judge.latest, judge.null_keys) is None
        )
        result.markers_kept += staying
        result.markers_removed += len(records) - staying
        kept, total, tombstone_kept = staying, len(records), False
    elif verdict is None:
        horizon = batch.delete_horizon_ms
        result.batches.append(outcome(batch, slot, "not cleaned", total, 0, horizon))
        return
    config, warnings = judge.config, result.warnings
    settled = settle(batch, slot, verdict, kept, total, tombstone_kept, judge.now, config, warnings)
    result.batches.append(settled)
