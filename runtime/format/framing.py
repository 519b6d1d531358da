"""Frames in a record set: where each batch starts and ends, and what is left over.

Every batch of every magic starts with the same 17 bytes, which is all framing reads::

    offset  size  field
    0       8     base offset (v2) / offset (v0, v1)             int64
    8       4     length of what follows                          int32
    12      4     partition leader epoch (v2) / crc (v0, v1)
    16      1     magic                                           int8

As Kafka's ``FileLogInputStream`` does, a frame that runs past the end of the data ends the
set: its bytes are a truncated tail, reported, not an error. A length below the smallest
message (14 bytes) cannot be stepped over, so it stops the file with a :class:`FramingError`.
Frames are memoryview slices of the source (an mmap for files), never copies, and a lying
length is checked against the bytes that exist before anything is read or allocated.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import BinaryIO

from ..errors import FramingError
from ..model import TruncatedTail
from . import layout
from .sizes import LOG_OVERHEAD

HEADER_SIZE_UP_TO_MAGIC = layout.FRAME_HEADER_SIZE
MAGIC_OFFSET = layout.FRAME_MAGIC
#: ``LegacyRecord.RECORD_OVERHEAD_V0``: the smallest length field Kafka accepts.
MIN_FRAME_LENGTH = layout.MIN_FRAME_LENGTH
_STREAM_CHUNK = 1 << 20

# base offset and length: the frame's first LOG_OVERHEAD bytes
_HEADER = layout.field_struct(layout.FRAME_HEADER_FIELDS, "base_offset", "length")


@dataclass(slots=True)
class Frame:
    """One whole batch: its position in the source and its bytes (from the base offset on)."""

    position: int
    base_offset: int
    magic: int
    data: memoryview

    @property
    def size(self) -> int:
        return len(self.data)


def iter_frames(
    buf: bytes | bytearray | memoryview,
    *,
    file: str | None = None,
    start: int = 0,
    end: int | None = None,
    tails: list[TruncatedTail] | None = None,
) -> Iterator[Frame]:
    """Frames of ``buf[start:end]``; a truncated tail is appended to ``tails``.

    Positions are absolute in ``buf`` so that errors and indexes agree with the file.
    """
    view = memoryview(buf).cast("B") if not isinstance(buf, memoryview) else buf
    if view.format != "B" or view.ndim != 1:
        view = view.cast("B")
    limit = len(view) if end is None else min(end, len(view))
    pos = start
    unpack = _HEADER.unpack_from
    while True:
        remaining = limit - pos
        # Kafka stops unless strictly more than the header up to magic remains.
        if remaining <= HEADER_SIZE_UP_TO_MAGIC:
            break
        base_offset, length = unpack(view, pos)
        if length < MIN_FRAME_LENGTH:
            raise FramingError(
                f"batch length {length} is less than the minimum record overhead "
                f"({MIN_FRAME_LENGTH})",
                file=file,
                position=pos,
                base_offset=base_offset,
            )
        if length > remaining - LOG_OVERHEAD:
            break
        frame_end = pos + LOG_OVERHEAD + length
        yield Frame(pos, base_offset, view[pos + MAGIC_OFFSET], view[pos:frame_end])
        pos = frame_end
    if pos < limit and tails is not None:
        tails.append(TruncatedTail(file, pos, limit - pos))


def iter_stream_frames(
    stream: BinaryIO,
    *,
    file: str | None = None,
    start: int = 0,
    tails: list[TruncatedTail] | None = None,
) -> Iterator[Frame]:
    """Frames read one by one from a stream that cannot be mapped (sockets, object stores).

    A frame's body is read in bounded chunks, so a lying length costs at most what the
    stream really holds.
    """
    pos = start
    while True:
        head = _read_up_to(stream, HEADER_SIZE_UP_TO_MAGIC)
        if len(head) < HEADER_SIZE_UP_TO_MAGIC:
            _tail(tails, file, pos, len(head))
            return
        base_offset, length = _HEADER.unpack_from(head)
        if length < MIN_FRAME_LENGTH:
            raise FramingError(
                f"batch length {length} is less than the minimum record overhead "
                f"({MIN_FRAME_LENGTH})",
                file=file,
                position=pos,
                base_offset=base_offset,
            )
        body = _read_up_to(stream, LOG_OVERHEAD + length - HEADER_SIZE_UP_TO_MAGIC)
        data = head + body
        if len(data) < LOG_OVERHEAD + length:
            _tail(tails, file, pos, len(data))
            return
        yield Frame(pos, base_offset, data[MAGIC_OFFSET], memoryview(data))
        pos += len(data)


def _tail(tails: list[TruncatedTail] | None, file: str | None, pos: int, size: int) -> None:
    if size and tails is not None:
        tails.append(TruncatedTail(file, pos, size))


def _read_up_to(stream: BinaryIO, n: int) -> bytes:
    """Read n bytes or until EOF, never asking the stream for more than a chunk at once."""
    parts = []
    got = 0
    while got < n:
        chunk = stream.read(min(_STREAM_CHUNK, n - got))
        if not chunk:
            break
        parts.append(chunk)
        got += len(chunk)
    return b"".join(parts)
