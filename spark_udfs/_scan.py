"""Batch headers read in place, for planning: where batches start, what offsets and
timestamps they hold, without reading their records.

A v2 header is 61 bytes and a v0/v1 one 26, so walking a segment's batches through a
:class:`~._fs.RangeReader` window costs a fraction of the segment. Damage stops a walk
quietly: planning only needs to know where reading can start, and the task that reads the
bytes reports the damage as its mode says.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator

from ..runtime.errors import KafkaFormatError
from ..runtime.format.batches import ReadOptions, read_batch, read_header
from ..runtime.format.framing import HEADER_SIZE_UP_TO_MAGIC, LOG_OVERHEAD, MIN_FRAME_LENGTH, Frame
from ..runtime.model import Batch
from ._fs import HEADER_WINDOW, RangeReader

#: Bytes that hold every header field of any magic (the v2 header is the longest).
HEADER_BYTES = 61
_FRAME = struct.Struct(">qi")


def header_at(
    reader: RangeReader, position: int, end: int | None = None, *, window: int = HEADER_BYTES
) -> Batch | None:
    """The header of the batch starting at ``position`` if a whole, sane batch starts there
    (and ends by ``end``, default the end of the file); None otherwise. ``window``: how much
    to fetch when the reader's window lacks it (a walk asks for more than a lone check)."""
    limit = reader.size if end is None else min(end, reader.size)
    if position < 0 or limit - position <= HEADER_SIZE_UP_TO_MAGIC:
        return None
    head = reader.peek(position, min(HEADER_BYTES, limit - position), window=window)
    base_offset, length = _FRAME.unpack_from(head)
    magic = head[16]
    if length < MIN_FRAME_LENGTH or magic > 2 or position + LOG_OVERHEAD + length > limit:
        return None
    size = LOG_OVERHEAD + length
    frame = Frame(position, base_offset, magic, head[: min(size, HEADER_BYTES)])
    try:
        batch = read_header(frame, file=reader.path)
    except KafkaFormatError:
        return None
    batch.size = size
    return batch


def iter_headers(reader: RangeReader, start: int, end: int | None = None) -> Iterator[Batch]:
    """Headers of the batches from ``start`` (a batch boundary) until ``end`` or damage."""
    limit = reader.size if end is None else min(end, reader.size)
    position = start
    while position < limit:
        batch = header_at(reader, position, limit, window=HEADER_WINDOW)
        if batch is None:
            return
        yield batch
        position += batch.size


def decode(reader: RangeReader, header: Batch, *, verify_crc: bool, max_bytes: int) -> Batch:
    """The batch whose header was read, with its records; raises on damage."""
    data = reader.read(header.position, header.size)
    frame = Frame(header.position, header.base_offset, header.magic, data)
    return read_batch(frame, ReadOptions(verify_crc, True, max_bytes), file=reader.path)
