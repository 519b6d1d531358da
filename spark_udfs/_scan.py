"""Batch headers read in place, for planning: where batches start and what they hold, framed
by the runtime's walker (:func:`~kafka_format.runtime.format.framing.iter_frames`) and read by
its header reader (:func:`~kafka_format.runtime.format.batches.read_header`).

Reads go through a :class:`~kafka_format.runtime.files.storage.ByteSource`: on a memory-mapped
local file a range is a view (free); on a ranged source it is fetched in windows of
:data:`HEADER_WINDOW` bytes (whole batches: a larger batch is fetched whole). Damage stops a
walk quietly: planning only needs to know where reading can start, and the task that reads the
bytes reports the damage as its mode says.
"""

from __future__ import annotations

from collections.abc import Iterator

from ..runtime.errors import KafkaFormatError
from ..runtime.files.storage import ByteSource, LocalFile
from ..runtime.format import layout
from ..runtime.format.batches import ReadOptions, read_batch, read_header
from ..runtime.format.framing import Frame, iter_frames
from ..runtime.model import Batch

#: Bytes fetched per read when walking headers on a ranged source.
HEADER_WINDOW = 256 * 1024
_FRAME = layout.field_struct(layout.FRAME_HEADER_FIELDS, "base_offset", "length")


class Counted:
    """A byte source whose reads are counted in :attr:`bytes_read` (planning's own cost).

    A memory-mapped file is read for free as a whole: there, what the walk looked at is
    counted instead (each batch it stepped over, the header of a batch it checked)."""

    __slots__ = ("bytes_read", "name", "source")

    def __init__(self, source: ByteSource) -> None:
        self.source = source
        self.name = source.name
        self.bytes_read = 0

    def size(self) -> int:
        return self.source.size()

    def read(self, position: int, n: int) -> memoryview:
        data = self.source.read(position, n)
        if not self.mapped:
            self.bytes_read += len(data)
        return data

    def looked_at(self, n: int) -> None:
        if self.mapped:
            self.bytes_read += n

    def close(self) -> None:
        self.source.close()

    @property
    def mapped(self) -> bool:
        return isinstance(self.source, LocalFile)


def _frames(source: Counted, start: int, end: int, window: int = HEADER_WINDOW) -> Iterator[Frame]:
    """Whole frames from ``start`` (a batch boundary) to ``end``, positions absolute; stops
    at damage or at a batch running past ``end``."""
    position = start
    window = end - start if source.mapped else window
    while position < end:
        data = source.read(position, min(window, end - position))
        last = position
        try:
            for frame in iter_frames(data, file=source.name):
                last = position + frame.position + frame.size
                yield Frame(position + frame.position, frame.base_offset, frame.magic, frame.data)
        except KafkaFormatError:
            return
        if last == position:  # not one whole frame in the window: a larger batch, or the end
            if len(data) < layout.LOG_OVERHEAD or len(data) >= end - position:
                return
            length = _FRAME.unpack_from(data)[1]
            window = max(window, layout.LOG_OVERHEAD + length)
            if position + layout.LOG_OVERHEAD + length > end:
                return
            continue
        position = last


def header_at(source: Counted, position: int, end: int | None = None) -> Batch | None:
    """The header of the batch starting at ``position`` if a whole, sane batch starts there
    (and ends by ``end``, default the end of the file); None otherwise.

    On a mapped file the frame is taken by the walker itself; on a ranged source only the
    header's bytes are fetched (a cut point costs 61 bytes, not a batch), and the walker's
    two rules (a length of at least the smallest message, a frame that fits) are applied to
    the length they give."""
    limit = source.size() if end is None else min(end, source.size())
    if position < 0 or limit - position <= layout.FRAME_HEADER_SIZE:
        return None
    if source.mapped:
        frames = _frames(source, position, limit)
    else:
        # the v2 header is the longest of any magic: it holds every header field
        head = source.read(position, min(layout.V2_HEADER_SIZE, limit - position))
        base_offset, length = _FRAME.unpack_from(head)
        if length < layout.MIN_FRAME_LENGTH or position + layout.LOG_OVERHEAD + length > limit:
            return None
        head = head[: layout.LOG_OVERHEAD + length]  # a batch smaller than the window read
        frames = iter([Frame(position, base_offset, head[layout.FRAME_MAGIC], head)])
    for frame in frames:
        source.looked_at(min(frame.size, layout.V2_HEADER_SIZE))
        try:
            batch = read_header(frame, file=source.name)
        except KafkaFormatError:
            return None
        batch.position = position
        return batch
    return None


def iter_headers(source: Counted, start: int, end: int | None = None) -> Iterator[Batch]:
    """Headers of the batches from ``start`` (a batch boundary) until ``end`` or damage."""
    limit = source.size() if end is None else min(end, source.size())
    for frame in _frames(source, start, limit):
        source.looked_at(frame.size)
        try:
            batch = read_header(frame, file=source.name)
        except KafkaFormatError:
            return
        batch.position, batch.size = frame.position, frame.size
        yield batch


def decode(source: Counted, header: Batch, *, verify_crc: bool, max_bytes: int) -> Batch:
    """The batch whose header was read, with its records; raises on damage."""
    data = source.read(header.position, header.size)
    source.looked_at(header.size)
    frame = Frame(header.position, header.base_offset, header.magic, data)
    return read_batch(frame, ReadOptions(verify_crc, True, max_bytes), file=source.name)
