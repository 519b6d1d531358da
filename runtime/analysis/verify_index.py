"""``verify``'s checks of the index files against the log: ``.index``, ``.timeindex`` and
``.txnindex`` entries against the batches :mod:`.verify_log` found (see :mod:`.verify`)."""

from __future__ import annotations

from pathlib import Path

from ..errors import KafkaFormatError
from ..files.index_lookup import AFTER_OFFSET, CRC, EXACT, NO_BATCH, EntryCheck, check_entry
from ..files.indexes import OffsetIndex, OffsetPosition, TimeIndex
from ..files.names import FileKind, segment_file_name
from ..files.storage import LocalFile
from ..files.txnindex import TransactionIndex
from ..format import layout
from ..model import ControlType
from .report import FileReport
from .verify_log import ScannedLog


def _open_index(cls, path: Path, base_offset: int, report: FileReport, *, is_last: bool):
    try:
        index = cls.open(path, base_offset, strict=False)
    except (KafkaFormatError, OSError) as exc:
        if isinstance(exc, KafkaFormatError):
            report.from_exception("index-sanity", exc)
        else:
            report.error("io", exc.strerror or str(exc))
        return None
    if index.problem is not None:
        report.from_exception("index-sanity", index.problem)
    if index.zero_tail_slots and not is_last:
        report.warning(
            "untrimmed",
            f"{index.zero_tail_slots} zero-filled slots after the entries: the index of a "
            "closed segment was not trimmed (unclean shutdown?)",
            index.length - index.zero_tail_slots * index.ENTRY_SIZE,
        )
    return index


def check_offset_index(
    path: Path, base_offset: int, log: ScannedLog | None, report: FileReport, *, is_last: bool
) -> None:
    """Every written entry judged by the rule every reader applies
    (``files.index_lookup.check_entry``, on the log's bytes): an entry the readers set aside is
    an error here, one they use is not. The cleaner's entries and those of multi-batch appends
    hold and are counted (``entries_of_whole_appends``). Positions are judged against the batches
    this run found, wherever they lie: after damage in the log too, as a read from the entry's
    position gets them."""
    index = _open_index(OffsetIndex, path, base_offset, report, is_last=is_last)
    if index is None:
        return
    with index:
        entries = index.written_entries()
    report.counts["entries"] = len(entries)
    if log is None:
        return
    appends = 0
    with LocalFile(log.path) as source:
        view = source.view()
        for n, (relative, position) in enumerate(entries):
            entry = OffsetPosition(base_offset + relative, position)
            check = check_entry(view, entry, base_offset, file=str(log.path))
            appends += _report_entry(log, n, check, report)
    if appends:
        # A note, not a finding: counted where --json shows the file's counts.
        report.counts["entries_of_whole_appends"] = appends


def _report_entry(log: ScannedLog, n: int, check: EntryCheck, report: FileReport) -> int:
    """Report entry ``n``'s verdict; 1 for an entry of a whole append (counted), else 0."""
    entry = check.entry
    at = n * OffsetIndex.ENTRY_SIZE
    label = f"entry {n} (offset {entry.offset}, position {entry.position})"
    found = log.at_position(entry.position)
    if check.fault == CRC and found is not None:
        # A batch the walk found, damaged: the .log reports the damage; readers set the
        # entry aside and read the segment from its start.
        report.warning("index-entry", f"{label} {check.problem}: readers set it aside", at)
        return 0
    if check.fault in (NO_BATCH, CRC):
        inside = log.containing_position(entry.position)
        if inside is not None and inside.position != entry.position:
            report.error(
                "index-entry",
                f"{label} points inside the batch at {inside.position} ({inside.span}), "
                "not at a batch boundary",
                at,
            )
            return 0
    if check.fault == AFTER_OFFSET and check.batch is not None:
        # kafka-dump-log's words for an entry whose batch does not end at its offset.
        report.error(
            "index-entry",
            f"Mismatch: index offset {entry.offset}, log offset {check.batch.last_offset}: "
            f"{label} {check.problem}",
            at,
        )
        return 0
    if not check.holds:
        report.error("index-entry", f"{label} {check.problem}", at)
        return 0
    inside = log.containing_position(entry.position) if found is None else None
    if inside is not None:
        # A frame whose CRC holds inside one of the log's batches: an inner message of a
        # v0/v1 wrapper (whole, CRC and all). Only a walk from the start can see it.
        report.error(
            "index-entry",
            f"{label} points inside the batch at {inside.position} ({inside.span}), not at a "
            "batch boundary: a message inside a compressed v0/v1 wrapper",
            at,
        )
        return 0
    return int(check.kind != EXACT)


def check_time_index(
    path: Path, base_offset: int, log: ScannedLog | None, report: FileReport, *, is_last: bool
) -> None:
    index = _open_index(TimeIndex, path, base_offset, report, is_last=is_last)
    if index is None:
        return
    with index:
        entries = index.written_entries()
    report.counts["entries"] = len(entries)
    previous = -1
    for n, (timestamp, relative) in enumerate(entries):
        offset = base_offset + relative
        at = n * TimeIndex.ENTRY_SIZE
        label = f"entry {n} (timestamp {timestamp}, offset {offset})"
        if previous >= timestamp:
            report.error(
                "timeindex-order",
                f"out of order timestamp: index timestamp {timestamp}, previously indexed "
                f"timestamp {previous} ({label})",
                at,
            )
        previous = max(previous, timestamp)
        if log is None:
            continue
        batch = log.first_ending_at_or_after(offset)
        if batch is None:
            report.error("timeindex-entry", f"{label}: indexed offset not found in the log", at)
            continue
        inside = batch.base_offset <= offset < batch.last_offset
        if inside and batch.max_timestamp is not None and batch.max_timestamp == timestamp:
            # The log cleaner's entries (LogCleaner.cleanInto -> LogSegment.append with
            # MemoryRecords.filterTo's shallowOffsetOfMaxTimestamp): the offset of the last
            # record it retained in the batch whose largest timestamp the entry records, while
            # the rewritten batch keeps its original last offset. TimeIndex.lookup and the
            # fetch that follows read from inside a batch as well; nothing to report.
            report.counts["entries_inside_a_batch"] = (
                report.counts.get("entries_inside_a_batch", 0) + 1
            )
            continue
        if batch.base_offset > offset:
            # No batch this run found holds the offset: the ones that did are lost to damage
            # (reported on the .log), or the entry lies.
            report.error(
                "timeindex-entry",
                f"{label}: indexed offset is in no batch of the log (the next batch, at "
                f"{batch.position}, holds {batch.base_offset}..{batch.last_offset})",
                at,
            )
            continue
        if batch.last_offset != offset:
            report.error(
                "timeindex-entry",
                f"{label}: indexed offset is not the last offset of a batch (the batch at "
                f"{batch.position} holds {batch.base_offset}..{batch.last_offset})",
                at,
            )
            continue
        if batch.max_timestamp is not None and batch.max_timestamp != timestamp:
            report.error(
                "timeindex-entry",
                f"timestamp mismatch: index timestamp {timestamp}, log timestamp "
                f"{batch.max_timestamp} (batch at {batch.position}, {label})",
                at,
            )
    if log is not None and not is_last and log.batches:
        largest = max(
            (b.max_timestamp for b in log.batches if b.max_timestamp is not None), default=-1
        )
        last = entries[-1][0] if entries else -1
        if largest >= 0 and last < largest:
            report.warning(
                "timeindex-last",
                f"the segment's largest timestamp {largest} is not its last entry ({last}): "
                "time look-ups and retention use that entry (segment not closed cleanly?)",
                len(entries) * TimeIndex.ENTRY_SIZE,
            )


def check_txn_index(
    path: Path | None,
    base_offset: int,
    log: ScannedLog | None,
    report: FileReport | None,
    log_report: FileReport | None,
) -> None:
    """Entries against the ABORT markers of the segment, both ways."""
    entries = []
    if path is not None and report is not None:
        try:
            index = TransactionIndex.open(path, base_offset, strict=False)
        except (KafkaFormatError, OSError) as exc:
            if isinstance(exc, KafkaFormatError):
                report.from_exception("index-sanity", exc)
            else:
                report.error("io", exc.strerror or str(exc))
            return
        if index.problem is not None:
            report.from_exception("index-sanity", index.problem)
        entries = list(index.entries)
        report.counts["entries"] = len(entries)
    if log is None:
        return
    by_start = {b.base_offset: b for b in log.batches}
    listed = {(t.producer_id, t.last_offset) for t in entries}
    for n, txn in enumerate(entries):
        at = n * layout.TXN_INDEX_ENTRY_SIZE
        label = (
            f"entry {n} (producer {txn.producer_id}, offsets {txn.first_offset}..{txn.last_offset})"
        )
        marker = by_start.get(txn.last_offset)
        if (
            marker is not None
            and marker.is_control
            and marker.control_type == ControlType.ABORT
            and marker.producer_id == txn.producer_id
        ):
            continue
        covering = log.first_ending_at_or_after(txn.last_offset)
        if covering is not None and covering.base_offset <= txn.last_offset:
            what = (
                f"a {_control_name(covering.control_type)} marker of producer "
                f"{covering.producer_id}"
                if covering.is_control
                else f"a data batch of producer {covering.producer_id}"
            )
            report.error(
                "txnindex",
                f"{label}: no ABORT marker of producer {txn.producer_id} at offset "
                f"{txn.last_offset}; the log has {what} there (batch at {covering.position})",
                at,
            )
        elif log.has_gaps:
            report.warning(
                "txnindex",
                f"{label}: offset {txn.last_offset} is not in the log (removed by the cleaner?)",
                at,
            )
        else:
            report.error(
                "txnindex",
                f"{label}: no ABORT marker at offset {txn.last_offset} in the log",
                at,
            )
    if log_report is None:
        return
    index_name = (
        path.name if path is not None else segment_file_name(base_offset, FileKind.TXN_INDEX)
    )
    for batch in log.batches:
        if batch.is_control and batch.control_type == ControlType.ABORT:
            if (batch.producer_id, batch.base_offset) in listed:
                continue
            missing = "has no entry in" if path is not None else "but there is no"
            log_report.error(
                "txnindex",
                f"ABORT marker of producer {batch.producer_id} at offset {batch.base_offset} "
                f"{missing} {index_name}",
                batch.position,
            )


def _control_name(control_type: int | None) -> str:
    if control_type is None:
        return "control"
    try:
        return ControlType(control_type).name
    except ValueError:
        return f"control type {control_type}"
