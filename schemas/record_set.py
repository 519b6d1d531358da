"""A record set: a ``.log`` segment, a fetch response's records, a decompressed legacy wrapper.

Layout (Kafka's ByteBufferLogInputStream.java; mirrors record_set.ksy)::

    RecordSet =>
      frames     Frame[] back to back, while a complete one follows
      trailing   bytes   a partial frame at the end (empty for a whole set)
    Frame =>
      base_offset   int64  @0    v2: base offset; v0/v1: the message's offset
      length        int32  @8    bytes that follow; the frame is 12 + length bytes
      magic         int8   @16   every format keeps its version here
      body                 the whole frame again, typed by magic: 0, 1 legacy_message.py,
                           2 record_batch.py, other: raw bytes

As Kafka's reader does, fewer than 12 bytes left, or a length running past the end, ends the
set without error (a fetch size limit or a crash mid-append leaves such a tail), while a length
below 14, the smallest legacy message, is corruption. Each frame is parsed from a stream of
exactly its own bytes, so a frame can never read into the next.
"""

from __future__ import annotations

from construct import (
    GreedyBytes,
    Int8sb,
    Int32sb,
    Int64sb,
    Pointer,
    SizeofError,
    Struct,
    Subconstruct,
    Switch,
    this,
)

from kafka_format.schemas.construct_ext import Helper
from kafka_format.schemas.legacy_message import LegacyMessage
from kafka_format.schemas.record_batch import RecordBatch

LOG_OVERHEAD = 12
MIN_FRAME_LENGTH = 14  # LegacyRecord.RECORD_OVERHEAD_V0

READ_FRAMES = Helper(
    "read_frames",
    """
def read_frames(io, this, parse_frame):
    frames = ListContainer()
    while True:
        start = io.tell()
        head = io.read(12)
        if len(head) < 12:
            io.seek(start)
            return frames
        length = int.from_bytes(head[8:12], "big", signed=True)
        if length < 14:
            raise CheckError("frame at %d: length %d is below the minimum 14" % (start, length))
        rest = io.read(length)
        if len(rest) < length:
            io.seek(start)
            return frames
        frames.append(parse_frame(BytesIO(head + rest), this))
""",
)


class Frames(Subconstruct):
    """Length-framed entries back to back, stopping (without error) at a partial one."""

    def _parse(self, stream, context, path):
        return READ_FRAMES.func(
            stream, context, lambda io, this: self.subcon._parsereport(io, this, path)
        )

    def _build(self, obj, stream, context, path):
        # a Frame's fields are peeks at its body: frames are built whole, then concatenated
        raise NotImplementedError("build frames with build_record_batch / build_legacy_message")

    def _sizeof(self, context, path):
        raise SizeofError("a record set has no fixed size", path=path)

    def _emitparse(self, code):
        parse_frame = f"lambda io, this: ({self.subcon._compileparse(code)})"
        return f"{READ_FRAMES.emit(code)}(io, this, {parse_frame})"


Frame = Struct(
    "base_offset" / Pointer(0, Int64sb),
    "length" / Pointer(8, Int32sb),
    "magic" / Pointer(16, Int8sb),
    "body"
    / Switch(
        this.magic,
        {0: LegacyMessage, 1: LegacyMessage, 2: RecordBatch},
        default=GreedyBytes,
    ),
)

RecordSet = Struct(
    "frames" / Frames(Frame),
    "trailing" / GreedyBytes,
)


def build_record_set(frames: list[bytes], trailing: bytes = b"") -> bytes:
    """Frames (from build_record_batch / build_legacy_message) back to back."""
    return b"".join(frames) + trailing
