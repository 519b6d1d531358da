"""One task's read: the whole batches of a split, as Arrow record batches in Spark's schema.

The split's bytes are fetched in chunks of positional reads (each counted). Inside a chunk,
frames are walked header by header, and three kinds are passed over without decoding: those
wholly before the start offset, those wholly at or after the end offset (which ends the read),
and, under read_committed, the data batches of aborted transactions (whose CRCs are still
checked, as Kafka's consumer checks them). Runs of consecutive remaining frames go to
:func:`~kafka_format.runtime.read.columnar.iter_arrow_batches` as zero-copy views; its batches get
the split's topic and partition, lose records outside the offset range, and are cast to the
schema Spark asked for.

Damage follows ``mode``: FAILFAST raises the first error (with the file, the byte position in
it and the batch's base offset); DROPMALFORMED drops the batch; PERMISSIVE drops it too, and
when the schema has the corrupt-batch column adds a row for it: topic, partition, ``offset`` =
the batch's base offset, the column = the error (string) or the batch's bytes (binary), every
other column null. A damaged frame length ends the split (nothing after it can be framed); a
truncated batch at the end of the file is not damage, as for Kafka. SALVAGE (the runtime's
``errors="salvage"``) reads the split's bytes in one piece and walks them with
``read/salvage.py``: damage is handled as under PERMISSIVE, and framing damage is reported and
passed over to the next whole batch whose CRC holds, so the split gives what ``read_table(...,
errors="salvage")`` gives for its bytes.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..runtime.errors import FramingError, KafkaFormatError
from ..runtime.files.names import parse_segment_file_name
from ..runtime.files.storage import ArrowFile
from ..runtime.format import layout
from ..runtime.format.batches import check_crc, read_header
from ..runtime.format.framing import LOG_OVERHEAD, Frame, end_of_walk, iter_frames
from ..runtime.kernels import fastscan
from ..runtime.model import Report, TruncatedTail
from ..runtime.read.columnar import DEFAULT_BATCH_ROWS, iter_arrow_batches
from ..runtime.read.salvage import salvage_walk
from ..runtime.read.segment_offsets import SegmentOffsets, judge_frame, judge_frames
from ..runtime.read.transactions import AbortedRanges
from ._fs import FsRef
from ._options import KafkaLogOptions
from ._planning import KafkaLogSplit

#: Bytes fetched per positional read (a batch larger than this is fetched whole).
CHUNK_BYTES = 16 * 1024 * 1024
_LENGTH = layout.field_struct(layout.FRAME_HEADER_FIELDS, "length")


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


def _whole_frames(data, name: str) -> tuple[int, TruncatedTail | None, np.ndarray] | None:
    """Where the whole frames at the start of ``data`` end, by ``fastscan.scan_frames``, the
    truncated tail after them (``framing.end_of_walk``: the walk's own rule) and their frame
    table; None when framing damage lies there."""
    buf = np.frombuffer(data, np.uint8)
    table = np.empty((_SCAN_ROWS, fastscan.FRAME_COLUMNS), np.int64)
    parts = []
    pos = 0
    while True:
        n, pos, status = fastscan.scan_frames(buf, pos, len(buf), table, _NO_BUDGET, _NO_BUDGET, 1)
        parts.append(table[:n].copy())
        if status != fastscan.SCAN_BUDGET:
            break
    del buf
    if status == fastscan.SCAN_FRAMING_ERROR:
        return None
    frames = np.concatenate(parts)
    if pos == len(data):
        return pos, None, frames
    tail, damage = end_of_walk(data, pos, len(data), name)
    return None if damage is not None else (pos, tail, frames)


def _salvaged(
    data: memoryview, name: str, framing: list, tails: list, repaired: set[int]
) -> Iterator[Frame]:
    """The salvaging walk's frames (``salvage.salvage_walk``, the readers' own), its damage
    into ``framing`` and ``tails``; the positions of the batches whose length alone lied
    (their frames are repaired copies, not views of ``data``) into ``repaired``."""
    for step in salvage_walk(data, name):
        if step.error is not None:
            framing.append(step.error)
        if step.tail is not None:
            tails.append(step.tail)
        if step.frame is not None:
            if step.error is not None:
                repaired.add(step.position)
            yield step.frame


_SCAN_ROWS = 65536
_NO_BUDGET = 1 << 62


def read_split(
    split: KafkaLogSplit, options: KafkaLogOptions, output: Output, counters: Counters
) -> Iterator[pa.RecordBatch]:
    """The records of one split (see the module docstring)."""
    fs = FsRef(split.fs_uri).filesystem()
    with ArrowFile(fs, split.path, name=split.name) as reader:
        yield from _SplitReader(split, options, output, counters, reader).run()


class _SplitReader:
    def __init__(
        self,
        split: KafkaLogSplit,
        options: KafkaLogOptions,
        output: Output,
        counters: Counters,
        reader: ArrowFile,
    ) -> None:
        self.split = split
        self.options = options
        self.output = output
        self.counters = counters
        self.reader = reader
        self.aborted = AbortedRanges.of(split.aborted)
        parsed = parse_segment_file_name(split.path.rsplit("/", 1)[-1])
        self.segment = SegmentOffsets(parsed.base_offset if parsed else None)
        self.previous_last: int | None = None
        self.stopped = False
        # No offset bounds, nothing aborted, no salvage walk: every whole frame is decoded
        # (``_decide`` keeps them all), so a chunk's frames are found by the numba scanner
        # in one call instead of a Python step a frame.
        self.plain = (
            split.start_offset is None
            and split.end_offset is None
            and not self.aborted
            and options.mode != "SALVAGE"
        )

    def run(self) -> Iterator[pa.RecordBatch]:
        position, end = self.split.start, min(self.split.end, self.reader.size())
        salvage = self.options.mode == "SALVAGE"
        # The salvage walk looks ahead to the split's end: it reads the split in one piece.
        want = end - position if salvage else CHUNK_BYTES
        while position < end and not self.stopped:
            data = self.reader.read(position, min(want, end - position))
            self.counters.add_bytes(len(data))
            if not data:
                return
            consumed = yield from self._chunk(data, position)
            if self.stopped:
                return
            if consumed == len(data):
                position += consumed
                want = CHUNK_BYTES
                continue
            # A batch crosses the end of what was read.
            tail = position + consumed
            if position + len(data) >= end:
                if end < self.reader.size() and end - tail > 0:
                    yield from self._damage(
                        FramingError(
                            "batch runs past the end of its split (an index entry points "
                            "inside a batch?)",
                            file=self.split.name,
                            position=tail,
                        ),
                        None,
                        0,
                    )
                return  # else a truncated tail at the end of the file: Kafka stops there too
            need = LOG_OVERHEAD
            if len(data) - consumed >= LOG_OVERHEAD:
                need += _LENGTH.unpack_from(data, consumed + 8)[0]
            position, want = tail, max(CHUNK_BYTES, need)

    def _chunk(self, data: memoryview, base: int):
        """Frames of one chunk; returns how many bytes whole frames took."""
        if self.plain:
            whole = _whole_frames(data, self.split.name)
            bar = self.segment.previous
            if whole is not None and not self._misplaced_in(whole[2], data):
                end, tail, _ = whole
                if end:
                    yield from self._run(data, base, 0, end)
                return len(data) if tail is None else end
            # else damage, or offsets no batch of the segment has: the walk below says
            # what and where, frame by frame
            self.segment.previous = bar
        tails: list = []
        run_start = run_end = None
        consumed = 0
        framing: list = []  # SALVAGE: framing damage the walk passed, reported in order
        repaired: set[int] = set()  # frames whose length alone lied: decoded from a copy
        if self.options.mode == "SALVAGE":
            frames = _salvaged(data, self.split.name, framing, tails, repaired)
        else:
            frames = iter_frames(data, file=self.split.name, tails=tails)
        try:
            for frame in frames:
                if run_start is not None and (framing or frame.position != run_end):
                    yield from self._run(data, base, run_start, run_end)  # runs are contiguous
                    run_start = None
                for exc in framing:
                    yield from self._damage(self._relocate(exc, base), data, base)
                framing.clear()
                consumed = frame.position + frame.size
                keep, error = self._decide(frame)
                if error is not None:
                    if run_start is not None:
                        yield from self._run(data, base, run_start, run_end)
                        run_start = None
                    yield from self._damage(self._relocate(error, base), data, base)
                if self.stopped:
                    break
                if not keep:
                    if run_start is not None:
                        yield from self._run(data, base, run_start, run_end)
                        run_start = None
                    continue
                if frame.position in repaired:
                    if run_start is not None:
                        yield from self._run(data, base, run_start, run_end)
                        run_start = None
                    yield from self._run(frame.data, base + frame.position, 0, frame.size)
                    continue
                if run_start is None:
                    run_start = frame.position
                run_end = consumed
        except FramingError as exc:
            if run_start is not None:
                yield from self._run(data, base, run_start, run_end)
                run_start = None
            self.stopped = True  # nothing after a lying length can be framed
            yield from self._damage(self._relocate(exc, base), data, base)
            return len(data)
        if run_start is not None:
            yield from self._run(data, base, run_start, run_end)
        for exc in framing:
            yield from self._damage(self._relocate(exc, base), data, base)
        if self.stopped or not tails:
            return len(data)
        return tails[0].position

    def _decide(self, frame: Frame) -> tuple[bool, KafkaFormatError | None]:
        """Whether to decode a frame, and any damage found while deciding."""
        split = self.split
        try:
            header = read_header(frame, file=split.name)
        except KafkaFormatError:
            header = None  # decoding reports it with full context
        if split.end_offset is not None:
            previous = self.previous_last
            if (frame.magic == 2 and frame.base_offset >= split.end_offset) or (
                previous is not None and previous >= split.end_offset - 1
            ):
                self.stopped = True
                return False, None
        if header is None:
            return True, None
        if split.start_offset is not None and header.last_offset < split.start_offset:
            self.previous_last = header.last_offset
            return False, None
        misplaced = judge_frame(self.segment, frame, self.options.verify_crc, split.name)
        if misplaced is not None:
            return False, misplaced
        self.previous_last = header.last_offset
        if self.aborted.drops(
            header.producer_id,
            header.base_offset,
            header.last_offset,
            header.is_transactional,
            header.is_control,
        ):
            if self.options.verify_crc:
                try:
                    check_crc(header, frame, True)
                except KafkaFormatError as exc:
                    exc.located(position=frame.position, base_offset=frame.base_offset)
                    return False, exc
            return False, None
        return True, None

    def _misplaced_in(self, frames: np.ndarray, data: memoryview) -> bool:
        """Whether a chunk's frames hold one whose offsets are no batch of the segment
        (``segment_offsets``: the readers' own rule); the bar moves past them when not."""
        buf = np.frombuffer(data, np.uint8)
        return bool(judge_frames(self.segment, frames, buf, data, self.options.verify_crc))

    def _run(self, data: memoryview, base: int, a: int, b: int) -> Iterator[pa.RecordBatch]:
        """Decode frames ``data[a:b]`` through the columnar reader."""
        options = self.options
        strict = options.mode == "FAILFAST"
        report = Report()
        try:
            for batch in iter_arrow_batches(
                data[a:b],
                include_headers=self.output.include_headers,
                verify_crc=options.verify_crc,
                errors="strict" if strict else "skip",
                max_decompressed_bytes=options.max_decompressed_bytes,
                report=report,
                batch_rows=DEFAULT_BATCH_ROWS,
                threads=1,  # Spark already runs one task a core: no pool of threads per task
            ):
                shaped = self._shape(batch)
                if shaped.num_rows:
                    yield shaped
        except KafkaFormatError as exc:
            raise self._relocate(exc, base + a) from None
        for exc in report.errors:
            yield from self._damage(self._relocate(exc, base + a), data, base)

    def _relocate(self, exc: KafkaFormatError, offset: int) -> KafkaFormatError:
        """Positions from a chunk or run made absolute in the file, and the file named."""
        exc.position = offset + (exc.position or 0)
        exc.file = self.split.name
        return exc

    def _damage(
        self, exc: KafkaFormatError, data: memoryview | None, base: int
    ) -> Iterator[pa.RecordBatch]:
        self.counters.add_corrupt()
        mode = self.options.mode
        if mode == "FAILFAST":
            raise exc
        column = self.output.corrupt_column
        if mode not in ("PERMISSIVE", "SALVAGE") or column is None:
            return
        schema = self.output.schema
        if pa.types.is_binary(schema.field(column).type):
            value = _frame_bytes(data, (exc.position or 0) - base) if data is not None else None
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
            if target.name == "topic":
                columns.append(pa.repeat(pa.scalar(split.topic, pa.string()), n))
            elif target.name == "partition":
                columns.append(pa.repeat(pa.scalar(split.partition, pa.int32()), n))
            elif target.name in names and target.name != self.output.corrupt_column:
                columns.append(batch.column(target.name).cast(target.type))
            else:
                columns.append(pa.nulls(n, target.type))
        return pa.RecordBatch.from_arrays(columns, schema=self.output.schema)


def _frame_bytes(data: memoryview, at: int) -> bytes | None:
    """The bytes of the frame at ``at`` in ``data`` (as far as they were read)."""
    if at < 0 or at + LOG_OVERHEAD > len(data):
        return None
    length = _LENGTH.unpack_from(data, at + 8)[0]
    return bytes(data[at : at + LOG_OVERHEAD + max(length, 0)])
