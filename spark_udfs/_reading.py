"""One task's read: the whole batches of a split, as Arrow record batches in Spark's schema.

A task reads exactly as ``read_table`` does, through the same entry point: a split is one
window of one segment (``ranges.Window``: bytes ``[start, end)``, offsets ``[start_offset,
end_offset)``), read by :func:`~kafka_format.runtime.read.columnar.iter_arrow_batches` from a
:meth:`ReadRequest.span <kafka_format.runtime.read.request.ReadRequest.span>` with the aborted
transactions the driver found (``AbortedTransactions.known``). So the framing, the CRCs, the
segment's offset rule, read_committed's admission, salvage and the records kept are the
runtime's own, decided in one place. A local file is memory-mapped (only the split's pages are
touched). A remote one's split is fetched in ranged reads of ``FETCH_BYTES``, each piece read
up to its last whole batch as an input that knows where it starts in the file
(``LogInput.origin``), so every position reported is the file's own; SALVAGE, whose walk
looks ahead, fetches the split at once into an anonymous map at its place in the file.

Damage follows ``mode``: FAILFAST raises the first error (with the file, the byte position in
it and the batch's base offset) as ``errors="strict"``; DROPMALFORMED drops the batch
(``errors="skip"``); PERMISSIVE drops it too, and when the schema has the corrupt-batch column
adds a row for it: topic, partition, ``offset`` = the batch's base offset, the column = the
error (string) or the batch's bytes (binary), every other column null. A damaged frame length
ends the split (nothing after it can be framed); a truncated batch at the end of the file is
not damage, as for Kafka, but one running past the end of a split that ends before the file
does is. SALVAGE is ``errors="salvage"``: damage is handled as under PERMISSIVE, and framing
damage is reported and passed over to the next whole batch whose CRC holds.
"""

from __future__ import annotations

import gc
import mmap
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..runtime.errors import KafkaFormatError
from ..runtime.files.names import parse_segment_file_name
from ..runtime.files.storage import ArrowFile
from ..runtime.format import layout
from ..runtime.kernels import fastscan
from ..runtime.model import Report
from ..runtime.read.columnar import DEFAULT_BATCH_ROWS, iter_arrow_batches
from ..runtime.read.ranges import Window
from ..runtime.read.request import Errors, ReadRequest
from ..runtime.read.segment_offsets import SegmentOffsets
from ..runtime.read.sources import LogInput
from ..runtime.read.transactions import AbortedTransactions
from ._fs import FsRef
from ._options import KafkaLogOptions
from ._planning import KafkaLogSplit

_LENGTH = layout.field_struct(layout.FRAME_HEADER_FIELDS, "length")
#: Bytes a task fetches from a remote file at a time (a larger batch: the rest of the split).
FETCH_BYTES = 16 * 1024 * 1024
_SCAN_ROWS = 65536
_NO_BUDGET = 1 << 62
#: Spark's modes as the runtime's damage policies.
ERRORS: dict[str, Errors] = {
    "FAILFAST": "strict",
    "DROPMALFORMED": "skip",
    "PERMISSIVE": "skip",
    "SALVAGE": "salvage",
}


@dataclass(frozen=True, slots=True)
class Output:
    """What Spark asked for: its Arrow schema, and where the corrupt-batch column is."""

    schema: pa.Schema
    include_headers: bool
    #: Name of the corrupt-batch column when the schema has one (PERMISSIVE fills it).
    corrupt_column: str | None = None


@dataclass(slots=True)
class Counters:
    """Accumulators (or anything with ``add``) for bytes fetched and damaged batches."""

    bytes_read: Any = None
    corrupt_batches: Any = None

    def add_bytes(self, n: int) -> None:
        if self.bytes_read is not None and n:
            self.bytes_read.add(n)

    def add_corrupt(self) -> None:
        if self.corrupt_batches is not None:
            self.corrupt_batches.add(1)


def read_split(
    split: KafkaLogSplit, options: KafkaLogOptions, output: Output, counters: Counters
) -> Iterator[pa.RecordBatch]:
    """The records of one split (see the module docstring)."""
    yield from _read_split(split, options, output, counters)
    _settle_worker()


#: Whether :func:`_settle_worker` has frozen this process's objects.
_settled = False


def _settle_worker() -> None:
    """Once per reused Spark Python worker, after its first whole split: move every object
    alive (this package, numba and llvmlite, the kernels just loaded) out of the garbage
    collector's reach with ``gc.freeze()``.

    PySpark's daemon calls ``gc.collect()`` after every task of a reused worker
    (``pyspark/daemon.py``), before the worker takes the next one. A full collection walks
    every tracked object, and this package's imports take a worker from ~75 thousand of them
    to ~180 thousand: ~55 ms more a task on a 2-core machine. Measured on the log of
    ``bench/parquet.py`` (3.6 M records, 8 tasks a query): the Python workers' CPU for a
    ``count()`` went from 1.20 s to 0.66 s, and Spark's floor (``bench/pyfloor.py``) costs
    no more after ``kafka_log`` ran in the same workers. Frozen objects are still freed by
    reference counting as before; only a reference cycle among them outlives the worker.
    The rows, errors and counters are untouched.
    Only where the daemon reuses workers (``SPARK_REUSE_WORKER``, which Spark sets for it):
    elsewhere (a driver, a test, ``read_split`` called in process) nothing changes."""
    global _settled
    if _settled or not os.environ.get("SPARK_REUSE_WORKER"):
        return
    _settled = True
    gc.collect()  # what is already garbage is freed, not frozen
    gc.freeze()


def read_splits(
    splits: Sequence[KafkaLogSplit], options: KafkaLogOptions, output: Output, counters: Counters
) -> Iterator[pa.RecordBatch]:
    """The records of a packed task's splits (``_planning.tasks``: consecutive splits of one
    partition), in order: the rows, damage and counters :func:`read_split` gives for each.
    Where every one is a whole local segment with nothing to cut (no offset bound, no aborted
    transaction, not SALVAGE), they are one read, as ``read_table`` reads a partition
    directory: the runtime then decodes small segments together (``read/grouped.py``: one
    chunk for many files, a file that is not clean read alone), where a read a split costs
    ~0.6 ms of Python a segment. Record batches may then span segments."""
    if options.mode == "SALVAGE" or not all(map(_whole_local, splits)):
        for split in splits:
            yield from _read_split(split, options, output, counters)
        _settle_worker()
        return
    # each window ends as planned, should the file grow
    windows = [Window(_local_input(split, counters), 0, split.end) for split in splits]
    yield from _SplitReader(splits[0], options, output, counters).run_whole(windows)
    _settle_worker()


def _whole_local(split: KafkaLogSplit) -> bool:
    return (
        split.fs_uri is None
        and split.start == 0
        and split.end == split.file_size
        and split.start_offset is None
        and split.end_offset is None
        and not split.aborted
    )


def _local_input(split: KafkaLogSplit, counters: Counters) -> LogInput:
    """A local split's segment as an input, its bytes counted as fetched."""
    counters.add_bytes(max(0, min(split.end, Path(split.path).stat().st_size) - split.start))
    return LogInput(split.name, path=Path(split.path), **_where(split))


def _where(split: KafkaLogSplit) -> dict[str, Any]:
    """What a split's segment tells its input: its partition, base offset and next segment."""
    parsed = parse_segment_file_name(split.path.rsplit("/", 1)[-1])
    return dict(
        topic=split.topic,
        partition=split.partition,
        base_offset=parsed.base_offset if parsed else None,
        next_base=split.next_base,
    )


def _read_split(
    split: KafkaLogSplit, options: KafkaLogOptions, output: Output, counters: Counters
) -> Iterator[pa.RecordBatch]:
    where = _where(split)
    base_offset = where["base_offset"]
    task = _SplitReader(split, options, output, counters)
    if split.fs_uri is None:
        yield from task.run(_local_input(split, counters), split.start, split.end)
        return
    with ArrowFile(FsRef(split.fs_uri).filesystem(), split.path, name=split.name) as reader:
        size = reader.size()
        end = max(split.start, min(split.end, size))
        if options.mode == "SALVAGE":
            # The salvage walk looks ahead and reads a file from its start: the split at its
            # place in the file, in an anonymous map (zero-filled, and untouched before it).
            placed = mmap.mmap(-1, max(end, 1))
            placed[split.start : end] = _fetch(reader, split.start, end, counters)
            log = LogInput(split.name, data=memoryview(placed)[:end], size=size, **where)
            yield from task.run(log, split.start, end)
            return
        # One walk of the split in pieces: each batch judged against the one before it, as
        # the memory-mapped read of the same split judges it (a batch whose base offset was
        # damaged must not reset the bar at a piece boundary).
        offsets = SegmentOffsets(base_offset, next_base=split.next_base)
        for start, piece in _pieces(reader, split.start, end, counters):
            log = LogInput(
                split.name, data=piece, size=size, origin=start, offsets=offsets, **where
            )
            yield from task.run(log, 0, len(piece))


def _pieces(
    reader: ArrowFile, start: int, end: int, counters: Counters
) -> Iterator[tuple[int, memoryview]]:
    """The split fetched a piece at a time (``FETCH_BYTES``), each cut after its last whole
    batch (``fastscan.scan_frames``), with where it starts in the file. Where no whole batch
    starts a piece (a batch larger than a piece, or damage), the rest of the split is
    fetched at once and read, as a file's rest is."""
    position = start
    while position < end:
        stop = min(end, position + FETCH_BYTES)
        piece = _fetch(reader, position, stop, counters)
        whole = len(piece) if stop == end else _whole_end(piece)
        if whole == 0:
            piece = _fetch(reader, position, end, counters)
            whole = len(piece)
        yield position, piece[:whole]
        position += whole


def _fetch(reader: ArrowFile, start: int, stop: int, counters: Counters) -> memoryview:
    data = reader.read(start, stop - start)  # a view of the fetched buffer, not a copy
    counters.add_bytes(len(data))
    return data


def _whole_end(piece: memoryview) -> int:
    """Where the whole batches at the start of ``piece`` end (the frame scan stops at the
    first frame that does not fit, or at damage: the reader then judges it)."""
    buf = np.frombuffer(piece, np.uint8)
    table = np.empty((_SCAN_ROWS, fastscan.FRAME_COLUMNS), np.int64)
    position = 0
    while True:
        _, position, status = fastscan.scan_frames(
            buf, position, len(buf), table, _NO_BUDGET, _NO_BUDGET, 1
        )
        if status != fastscan.SCAN_BUDGET:
            return position


class _SplitReader:
    def __init__(
        self, split: KafkaLogSplit, options: KafkaLogOptions, output: Output, counters: Counters
    ) -> None:
        self.split = split
        self.options = options
        self.output = output
        self.counters = counters
        self.report = Report()
        self.reported = 0
        #: ``topic`` / ``partition`` columns (:meth:`_constant`).
        self._constants: dict[str, pa.Array] = {}
        #: The input being read: where a damaged frame's bytes are looked up.
        self.log: LogInput | None = None
        #: The inputs of a read of several segments (:meth:`run_whole`), by name.
        self.logs: dict[str, LogInput] = {}

    def request(self, log: LogInput, start: int, end: int) -> ReadRequest:
        split = self.split
        window = Window(log, start, end, split.start_offset, split.end_offset)
        aborted = None
        isolation = "read_uncommitted"
        if split.aborted:
            isolation = "read_committed"
            aborted = AbortedTransactions.known((split.topic, split.partition), split.aborted)
        return ReadRequest.span(
            window, isolation=isolation, errors=ERRORS[self.options.mode], aborted=aborted
        )

    def run(self, log: LogInput, start: int, end: int) -> Iterator[pa.RecordBatch]:
        """The records of ``[start, end)`` of ``log`` (positions in ``log.data``'s terms)."""
        self.log = log
        return self._read(self.request(log, start, end))

    def run_whole(self, windows: list[Window]) -> Iterator[pa.RecordBatch]:
        """The records of several whole local segments of the split's partition, in order,
        as one read (see :func:`read_splits`)."""
        logs = tuple(w.log for w in windows)
        self.logs = {log.name: log for log in logs}
        mode = ERRORS[self.options.mode]
        return self._read(ReadRequest(logs, errors=mode, spans=tuple(windows)))

    def _read(self, request: ReadRequest) -> Iterator[pa.RecordBatch]:
        options = self.options
        try:
            for batch in iter_arrow_batches(
                request,
                include_headers=self.output.include_headers,
                verify_crc=options.verify_crc,
                max_decompressed_bytes=options.max_decompressed_bytes,
                report=self.report,
                batch_rows=DEFAULT_BATCH_ROWS,
                threads=1,  # Spark already runs one task a core: no pool of threads per task
            ):
                yield from self._damage_since()
                shaped = self._shape(batch)
                if shaped.num_rows:
                    yield shaped
        except KafkaFormatError as exc:
            self.counters.add_corrupt()
            raise exc.located(file=self.split.name) from None
        yield from self._damage_since()

    def _damage_since(self) -> Iterator[pa.RecordBatch]:
        """Rows for the damage the read met since the last call (PERMISSIVE, SALVAGE)."""
        errors = self.report.errors
        while self.reported < len(errors):
            exc = errors[self.reported]
            self.reported += 1
            yield from self._damage(exc)

    def _damage(self, exc: KafkaFormatError) -> Iterator[pa.RecordBatch]:
        self.counters.add_corrupt()
        column = self.output.corrupt_column
        if self.options.mode not in ("PERMISSIVE", "SALVAGE") or column is None:
            return
        schema = self.output.schema
        if pa.types.is_binary(schema.field(column).type):
            value = self._frame_bytes(exc.position, self.logs.get(exc.file, self.log))
        else:
            value = str(exc)
        row = {name: None for name in schema.names} | {
            "topic": self.split.topic,
            "partition": self.split.partition,
            "offset": exc.base_offset,
            column: value,
        }
        yield pa.RecordBatch.from_pylist([{n: row[n] for n in schema.names}], schema=schema)

    def _shape(self, batch: pa.RecordBatch) -> pa.RecordBatch:
        split = self.split
        n = batch.num_rows
        if split.start_offset is not None or split.end_offset is not None:
            offsets = batch.column("offset")
            keep = None
            if split.start_offset is not None:
                keep = pc.greater_equal(offsets, split.start_offset)
            if split.end_offset is not None:
                below = pc.less(offsets, split.end_offset)
                keep = below if keep is None else pc.and_(keep, below)
            batch = batch.filter(keep)
            n = batch.num_rows
        columns = []
        names = batch.schema.names
        for target in self.output.schema:
            if target.name in ("topic", "partition"):
                columns.append(self._constant(target.name, n))
            elif target.name in names and target.name != self.output.corrupt_column:
                columns.append(batch.column(target.name).cast(target.type))
            else:
                columns.append(pa.nulls(n, target.type))
        return pa.RecordBatch.from_arrays(columns, schema=self.output.schema)

    def _constant(self, name: str, n: int) -> pa.Array:
        """The split's ``topic`` or ``partition`` repeated ``n`` times: a zero-copy slice of
        one array built for the longest batch so far (a batch's rows are at most
        ``DEFAULT_BATCH_ROWS``), not a new array a batch (~0.13 ms each at 64 Ki rows)."""
        column = self._constants.get(name)
        if column is None or len(column) < n:
            if name == "topic":
                value = pa.scalar(self.split.topic, pa.string())
            else:
                value = pa.scalar(self.split.partition, pa.int32())
            column = self._constants[name] = pa.repeat(value, n)
        return column if len(column) == n else column.slice(0, n)

    def _frame_bytes(self, at: int | None, log: LogInput | None) -> bytes | None:
        """The bytes of the frame at position ``at`` of ``log`` (as far as they were read)."""
        if at is None or at < self.split.start or log is None:
            return None
        if log.path is None:
            return _frame_in(memoryview(log.data), at - log.origin)
        with open(log.path, "rb") as fh:
            fh.seek(at)
            head = fh.read(layout.LOG_OVERHEAD)
            if len(head) < layout.LOG_OVERHEAD:
                return None
            length = _LENGTH.unpack_from(head, layout.FRAME_LENGTH)[0]
            return head + fh.read(max(length, 0))


def _frame_in(data: memoryview, at: int) -> bytes | None:
    if at < 0 or at + layout.LOG_OVERHEAD > len(data):
        return None
    length = _LENGTH.unpack_from(data, at + layout.FRAME_LENGTH)[0]
    return bytes(data[at : at + layout.LOG_OVERHEAD + max(length, 0)])
