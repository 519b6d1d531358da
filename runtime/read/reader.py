"""``iter_batches`` and ``iter_records``: the runtime's front door.

    >>> for record in iter_records("/var/lib/kafka/orders-0", isolation="read_committed"):
    ...     print(record.offset, record.key, record.value)

Errors: ``errors="strict"`` (the default) raises the first :class:`KafkaFormatError`;
``errors="skip"`` yields a damaged batch with ``batch.error`` set (and no records), notes the
error in ``report`` and goes on with the next frame, which is possible whenever the damaged
batch's frame (its length) is intact; ``errors="salvage"`` does what skip does and, at framing
damage, notes it in ``report`` too and goes on at the next whole batch whose CRC holds, to the
end of the file (``read/salvage.py``). Truncated tails are never errors; they are noted in
``report.truncated``, like kafka-dump-log's "Found N invalid bytes at the end".

What lies at each position is ``format.framing.judge``'s verdict, the same for every reader:
framing damage (a length below 14, an invalid magic, a length running past the end before
whole batches) ends the file with a :class:`FramingError` whose ``resume`` names the next
batch whose CRC holds, where ``errors="salvage"`` goes on.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Literal

from ..errors import FramingError, KafkaFormatError
from ..format.batches import ReadOptions, read_batch, read_header
from ..format.codecs import DEFAULT_MAX_BYTES, Codec
from ..format.framing import iter_frames, iter_stream_frames
from ..model import Batch, ControlType, Record, Report, TruncatedTail
from .ranges import Range, Window, clip_records, limit_records
from .request import ERRORS, Errors, Isolation, ReadRequest, check_errors, window_cut
from .salvage import iter_salvaged_frames
from .segment_offsets import SegmentOffsets, judge_frame
from .sources import Source
from .transactions import AbortedTransactions, collect_aborted


def iter_batches(
    source: Source | ReadRequest,
    *,
    records: bool | Callable[[Batch], bool] = True,
    verify_crc: bool | Literal["report"] = True,
    errors: Errors = "strict",
    max_decompressed_bytes: int = DEFAULT_MAX_BYTES,
    report: Report | None = None,
    name: str | None = None,
    start_offset: int | None = None,
    end_offset: int | None = None,
    start_timestamp: int | None = None,
    end_timestamp: int | None = None,
    max_records: int | None = None,
) -> Iterator[Batch]:
    """Every batch of ``source`` in order, decoded per the options.

    ``records`` may be a predicate over the batch header, to decode only some batches'
    records (e.g. control batches). ``verify_crc="report"`` computes every CRC into
    ``batch.computed_crc`` without failing on a mismatch, so a damaged batch's records can
    still be looked at (as kafka-dump-log does). ``name`` labels bytes and streams in errors.
    A range (the bounds as :func:`iter_records` takes them) gives the batches overlapping it,
    their ``records`` narrowed to the range's, up to the one holding the ``max_records``-th.
    ``errors``: see the module's docstring; under "salvage" a stream that cannot be mapped is
    read into memory first (the walk looks ahead for the next whole batch).
    ``source`` may be a :class:`~.request.ReadRequest`: its inputs, errors and range are read,
    not these options'.
    """
    rng = Range.of(start_offset, end_offset, start_timestamp, end_timestamp, max_records)
    request = ReadRequest.of(source, name=name, errors=errors, range=rng)
    batches = _batches(request, records, verify_crc, max_decompressed_bytes, report)
    yield from _limit_batches(batches, request.range.max_records if request.range else None)


def _batches(
    request: ReadRequest,
    records: bool | Callable[[Batch], bool],
    verify_crc: bool | str,
    max_bytes: int,
    report: Report | None,
    control: bool = False,
) -> Iterator[Batch]:
    """The batches of every window of the request; ``control``: control batches outside the
    range too (read_committed's walk needs every marker)."""
    report = report if report is not None else Report()
    errors = request.errors
    for window in request.windows(from_start=control):
        yield from _file_batches(window, records, verify_crc, errors, max_bytes, report, control)


def _limit_batches(batches: Iterator[Batch], limit: int | None) -> Iterator[Batch]:
    if limit is None:
        yield from batches
        return
    left = limit
    for batch in batches:
        if left <= 0:
            return
        if batch.records and not batch.is_control:
            batch.records = batch.records[:left]
            left -= len(batch.records)
        yield batch


def _file_batches(
    window: Window,
    records: bool | Callable[[Batch], bool],
    verify_crc: bool | str,
    errors: Errors,
    max_bytes: int,
    report: Report,
    control: bool = False,
) -> Iterator[Batch]:
    log = window.log
    decode_all = ReadOptions(verify_crc, True, max_bytes)
    header_only = ReadOptions(verify_crc, False, max_bytes)
    ranged = window.first is not None or window.last is not None
    tails: list[TruncatedTail] = []
    with log.open() as opened:
        if isinstance(opened, memoryview) and errors == "salvage":
            frames = iter_salvaged_frames(
                opened, log.name, report.errors, tails, window.start, window.end
            )
        elif isinstance(opened, memoryview):
            frames = iter_frames(
                opened, file=log.name, start=window.start, end=window.end, tails=tails
            )
        else:
            frames = iter_stream_frames(opened, file=log.name, tails=tails)
        segment = SegmentOffsets.of(log)
        try:
            for frame in frames:
                if ranged and not _wanted(frame, window, log.name, control):
                    continue
                misplaced = judge_frame(segment, frame, verify_crc, log.name)
                if misplaced is not None:
                    if errors == "strict":
                        raise misplaced
                    report.errors.append(misplaced)
                    batch = damaged_batch(frame, log.name, misplaced)
                    batch.topic, batch.partition = log.topic, log.partition
                    yield batch
                    continue
                if callable(records):
                    options = header_only
                    try:
                        wanted = records(read_header(frame, file=log.name))
                    except KafkaFormatError:
                        wanted = True  # let read_batch report it with full context
                    if wanted:
                        options = decode_all
                else:
                    options = decode_all if records else header_only
                try:
                    batch = read_batch(frame, options, file=log.name)
                except KafkaFormatError as exc:
                    if errors == "strict":
                        raise
                    report.errors.append(exc)
                    batch = damaged_batch(frame, log.name, exc)
                batch.topic, batch.partition = log.topic, log.partition
                clip_records(batch, window)
                if batch.records:
                    for r in batch.records:
                        r.topic, r.partition = log.topic, log.partition
                yield batch
        except FramingError as exc:
            if errors == "strict":
                raise
            report.errors.append(exc)
        available = len(opened) if isinstance(opened, memoryview) else None
    for tail in tails:
        limit = window.end if window.end is not None else available
        cut = window_cut(log, tail, limit, available) if available is not None else None
        if cut is None:
            report.truncated.append(tail)
        elif errors == "strict":
            raise cut
        else:
            report.errors.append(cut)


def _wanted(frame, window: Window, name: str, control: bool) -> bool:
    """Whether the frame's header says it may hold records of the window (read before any
    record is decoded); a header that cannot be read is wanted, to be reported."""
    try:
        header = read_header(frame, file=name)
    except KafkaFormatError:
        return True
    return window.overlaps(header) or (control and header.is_control)


def damaged_batch(frame, file: str, exc: KafkaFormatError) -> Batch:
    """The header of a damaged batch when it can be read, else what the frame tells."""
    try:
        batch = read_header(frame, file=file)
    except KafkaFormatError:
        batch = Batch(
            file=file,
            position=frame.position,
            base_offset=frame.base_offset,
            last_offset=frame.base_offset,
            size=frame.size,
            magic=frame.magic,
            attributes=0,
            codec=Codec.NONE,
            timestamp_type=-1,
            crc=0,
            computed_crc=None,
        )
    batch.computed_crc = getattr(exc, "computed", batch.computed_crc)
    batch.error = exc
    return batch


def iter_records(
    source: Source | ReadRequest,
    *,
    isolation: Isolation = "read_uncommitted",
    verify_crc: bool = True,
    errors: Errors = "strict",
    max_decompressed_bytes: int = DEFAULT_MAX_BYTES,
    report: Report | None = None,
    aborted: AbortedTransactions | None = None,
    name: str | None = None,
    start_offset: int | None = None,
    end_offset: int | None = None,
    start_timestamp: int | None = None,
    end_timestamp: int | None = None,
    max_records: int | None = None,
) -> Iterator[Record]:
    """The data records of ``source`` as a consumer sees them; control records never appear.

    ``read_committed`` drops the records of aborted transactions, found from the ABORT
    markers in the log (a first, header-only pass) and the ``.txnindex`` files of partition
    directories, and applied as Kafka's consumer applies its aborted-transaction list. It stops
    at the last stable offset, as a fetch does: nothing at or after the first offset of the
    earliest transaction with no marker is returned (a segment read alone first looks for the
    markers in the later segments of its partition).

    A range (``read/ranges.py``), per partition: offsets ``[start_offset, end_offset)``
    (a negative ``start_offset``: that many offsets before the log end, kcat's ``-o -N``);
    from the first record with timestamp >= ``start_timestamp`` (ListOffsets' answer) and
    before the first with timestamp >= ``end_timestamp``; at most ``max_records`` in all.
    The indexes lead to the start, and reading stops where the range ends.
    ``source`` may be a :class:`~.request.ReadRequest`: its inputs, isolation, aborted
    transactions, errors and range are read, not these options'.
    """
    rng = Range.of(start_offset, end_offset, start_timestamp, end_timestamp, max_records)
    # Two passes over a stream that cannot be mapped (a file object, a pipe or FIFO path)
    # find it in memory: the request holds it from the start.
    request = ReadRequest.of(source, name=name, isolation=isolation, errors=errors, range=rng)
    limit = request.range.max_records if request.range else None
    if not request.committed:
        batches = _batches(request, True, verify_crc, max_decompressed_bytes, report)
        yield from limit_records(_data_records(batches), limit)
        return
    if aborted is None:
        # The first pass reads every marker and reports nothing: the second sees the same
        # batches and reports them.
        if request.aborted is not None:
            aborted = request.aborted
        else:
            first = request.first_pass(_lenient(request.errors))
            markers = _batches(first, _is_control, verify_crc, max_decompressed_bytes, None)
            aborted = collect_aborted(markers, request)
    batches = _batches(request, True, verify_crc, max_decompressed_bytes, report, True)
    yield from limit_records(aborted.filter(batches), limit)


def _data_records(batches: Iterator[Batch]) -> Iterator[Record]:
    for batch in batches:
        if batch.records and not batch.is_control:
            yield from batch.records


def _lenient(errors: Errors) -> Errors:
    """The first read_committed pass never stops at damage, and salvages what salvage reads."""
    return "salvage" if errors == "salvage" else "skip"


def _is_control(batch: Batch) -> bool:
    return batch.is_control


__all__ = [
    "ERRORS",
    "ControlType",
    "Errors",
    "Isolation",
    "check_errors",
    "damaged_batch",
    "iter_batches",
    "iter_records",
]
