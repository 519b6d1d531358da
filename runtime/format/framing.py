"""The walker: what lies at any position of any byte source, decided in one place.

Every batch of every magic starts with the same 17 bytes, which is all framing reads::

    offset  size  field
    0       8     base offset (v2) / offset (v0, v1)             int64
    8       4     length of what follows                          int32
    12      4     partition leader epoch (v2) / crc (v0, v1)
    16      1     magic                                           int8

:func:`judge` says what starts at a position, following Kafka's
``FileLogInputStream.nextBatch`` (clients/.../record/FileLogInputStream.java) and adding what
an auditing tool needs beyond a broker's reader:

* 17 bytes or fewer left: the end; any bytes left are a truncated tail (a warning: Kafka
  stops there, ``position >= end - HEADER_SIZE_UP_TO_MAGIC``, ``layout.FRAME_HEADER_SIZE``).
* a length below ``LegacyRecord.RECORD_OVERHEAD_V0`` (14): damage, Kafka's
  CorruptRecordException.
* a length running past the end: Kafka's reader stops (``position > end - LOG_OVERHEAD -
  size``). Here it is a truncated tail only when the rest is a plausible prefix of one batch
  (magic 0, 1 or 2) and no whole batch whose CRC holds starts later in the file; otherwise the
  length is broken (damage), or the magic is (damage: "invalid magic").
* magic other than 0, 1 or 2 with a length that fits: damage ("invalid magic").
* else a :class:`Frame`: one whole batch, whose header, CRC and records the next layers judge.

Damage carries the position of the next batch whose CRC holds (:func:`resync`), searched in a
bounded window, where a salvaging reader could go on; the readers stop at framing damage.
Frames are memoryview slices of the source (an mmap for files), never copies, and a lying
length is checked against the bytes that exist before anything is read or allocated.
"""

from __future__ import annotations

import dataclasses
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import BinaryIO

from ..errors import FramingError
from ..model import TruncatedTail
from . import layout, messages
from .extent import proven_end
from .layout import LOG_OVERHEAD, MIN_FRAME_LENGTH
from .resync import as_bytes, resync

#: How far past damage :func:`judge` looks for the next whole batch (the resume position):
#: more than a batch of Kafka's default ``max.message.bytes``, little enough that damage
#: before gigabytes of preallocated zeros costs no more than this much reading.
RESYNC_WINDOW = 4 << 20
_STREAM_CHUNK = 1 << 20
# base offset and length: the frame's first LOG_OVERHEAD bytes
_HEADER = layout.field_struct(layout.FRAME_HEADER_FIELDS, "base_offset", "length")
_LEGACY_CRC = layout.field_struct(layout.LEGACY_HEADER_FIELDS, "crc")


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


@dataclass(slots=True, frozen=True)
class Damage:
    """Bytes at ``position`` that are no batch and cannot be stepped over: why, and where the
    next whole batch starts (``resume``; None when none was found in the window)."""

    position: int
    base_offset: int | None
    cause: str
    resume: int | None = None
    #: For a broken length: the length and the bytes that were left (the cause names the
    #: resume position, which moves with ``shift``).
    broken: tuple[int, int] | None = None
    #: For a batch whose length field alone is broken: where its bytes end, proved by its CRC
    #: (``extent.proven_end``). A salvaging walk delivers ``[position, repaired)`` as the
    #: batch and goes on there (``resume``), never at a batch inside its records.
    repaired: int | None = None

    def error(self, file: str | None = None, shift: int = 0) -> FramingError:
        """The error a reader raises for it; ``shift`` is added to positions (a stream's
        buffer starts at ``shift`` in the source)."""
        cause = self.cause
        if self.repaired is not None and self.broken is not None:
            real = self.repaired - self.position - LOG_OVERHEAD
            cause = messages.length_broken(self.broken[0], real, self.repaired + shift)
        elif self.broken is not None and self.resume is not None:
            cause = messages.length_past_end(*self.broken, self.resume + shift)
        return FramingError(
            cause,
            file=file,
            position=self.position + shift,
            base_offset=self.base_offset,
            resume=None if self.resume is None else self.resume + shift,
        )


Verdict = Frame | TruncatedTail | Damage


def judge(
    view: memoryview, pos: int, limit: int, file: str | None = None, *, audit: bool = True
) -> Verdict | None:
    """What lies at ``view[pos:limit]``: a frame, a truncated tail, damage, or nothing (None
    at the very end). The rules are the module's docstring; ``fastscan.scan_frames`` takes
    whole frames by the same rules and hands every other position to this function.

    ``audit=False`` is Kafka's plain reader, for the inner messages of a v0/v1 wrapper (which
    the batch decoder checks itself): any magic makes a frame, a length past the end a tail.
    """
    remaining = limit - pos
    if remaining <= 0:
        return None
    if remaining <= layout.FRAME_HEADER_SIZE:
        return TruncatedTail(file, pos, remaining)
    base_offset, length = _HEADER.unpack_from(view, pos)
    magic = _signed(view[pos + layout.FRAME_MAGIC])
    if length < MIN_FRAME_LENGTH:
        if not audit:
            return Damage(pos, base_offset, messages.length_below_minimum(length))
        own = proven_end(view, pos, limit) if magic in (0, 1, 2) else None
        if own is not None:  # only the length lied: the batch itself is whole
            return _repaired(pos, base_offset, length, remaining, own)
        return _damage(view, pos, limit, messages.length_below_minimum(length))
    if audit and magic not in (0, 1, 2):
        return _damage(view, pos, limit, messages.invalid_magic(magic))
    if length > remaining - LOG_OVERHEAD:
        own = proven_end(view, pos, limit) if audit else None
        if own is not None:  # only the length lied: the batch itself is whole
            return _repaired(pos, base_offset, length, remaining, own)
        # The inner messages of a v0/v1 wrapper cut short lie verbatim in a snappy or LZ4
        # literal, CRCs and all: in a wrapper, plain messages alone prove nothing.
        wrapper = magic < 2 and (
            view[pos + layout.LEGACY_ATTRIBUTES] & layout.LEGACY_ATTR_COMPRESSION_MASK != 0
        )
        later = resync(view, pos + 1, limit, to_the_end=True, wrapper=wrapper) if audit else None
        if later is None:
            return TruncatedTail(file, pos, remaining)
        if wrapper:  # resume after the wrapper itself, not at its first inner message
            later = _wrapper_end(view, pos, later, limit)
        cause = messages.length_past_end(length, remaining, later)
        # No base offset: nothing proves these bytes a batch (zeros or garbage would name one).
        return Damage(pos, None, cause, later, (length, remaining))
    return Frame(pos, base_offset, magic, view[pos : pos + LOG_OVERHEAD + length])


def end_of_walk(
    view, pos: int, limit: int, file: str | None = None, shift: int = 0
) -> tuple[TruncatedTail | None, FramingError | None]:
    """The tail and the error where a walk found no whole frame at ``pos`` (where
    ``fastscan.scan_frames`` stops, this says why); ``shift`` is added to their positions
    (``view`` starts at ``shift`` in its file)."""
    verdict = judge(as_bytes(view), pos, limit, file)
    if isinstance(verdict, Frame):
        raise AssertionError(f"the frame scan stopped at a whole frame at {pos}")
    if isinstance(verdict, Damage):
        return None, verdict.error(file, shift)
    if verdict is not None and shift:
        verdict = dataclasses.replace(verdict, position=verdict.position + shift)
    return verdict, None


def _wrapper_end(view: memoryview, pos: int, later: int, limit: int) -> int:
    """Of the whole batches that follow a v0/v1 wrapper with a broken length, the first where
    the wrapper's own CRC-32 holds (only its length lied), else ``later``. Candidates are
    taken in order and the CRC extended from one to the next: linear in the bytes."""
    stored = _LEGACY_CRC.unpack_from(view, pos + layout.LEGACY_CRC)[0]
    crc, done, candidate = 0, pos + layout.LEGACY_CRC_START, later
    for _ in range(64):
        crc = zlib.crc32(view[done:candidate], crc)
        done = candidate
        if crc == stored:
            return candidate
        following = resync(view, candidate + 1, limit, to_the_end=True, wrapper=True)
        if following is None:
            break
        candidate = following
    return later


def _repaired(pos: int, base_offset: int, length: int, remaining: int, own: int) -> Damage:
    """A batch whose length field alone is broken: its CRC holds over the bytes up to ``own``
    (``extent.proven_end``), so it is a batch, base offset and all."""
    cause = messages.length_broken(length, own - pos - LOG_OVERHEAD, own)
    return Damage(pos, base_offset, cause, own, (length, remaining), own)


def _damage(view, pos: int, limit: int, cause: str) -> Damage:
    """Bytes that are no batch (a length below 14, a magic of none): reported without a base
    offset, which would be read from zeros or garbage and read as a fact."""
    return Damage(pos, None, cause, resync(view, pos + 1, limit, window=RESYNC_WINDOW))


def _signed(byte: int) -> int:
    return byte - 256 if byte >= 128 else byte


def iter_frames(
    buf: bytes | bytearray | memoryview,
    *,
    file: str | None = None,
    start: int = 0,
    end: int | None = None,
    tails: list[TruncatedTail] | None = None,
    audit: bool = True,
) -> Iterator[Frame]:
    """Frames of ``buf[start:end]``, judged by :func:`judge`; a truncated tail is appended to
    ``tails``, damage raises :class:`FramingError` (with its ``resume`` position).

    Positions are absolute in ``buf`` so that errors and indexes agree with the file.
    """
    view = as_bytes(buf)
    limit = len(view) if end is None else min(end, len(view))
    pos = start
    while True:
        verdict = judge(view, pos, limit, file, audit=audit)
        if isinstance(verdict, Frame):
            yield verdict
            pos += verdict.size
            continue
        stop(verdict, file, tails)
        return


def stop(
    verdict: TruncatedTail | Damage | None,
    file: str | None,
    tails: list[TruncatedTail] | None,
    shift: int = 0,
) -> None:
    """Where a walk ends: note a tail in ``tails``, raise damage, pass at the end."""
    if isinstance(verdict, Damage):
        raise verdict.error(file, shift)
    if isinstance(verdict, TruncatedTail) and tails is not None:
        tails.append(TruncatedTail(file, verdict.position + shift, verdict.size))


def iter_stream_frames(
    stream: BinaryIO,
    *,
    file: str | None = None,
    start: int = 0,
    tails: list[TruncatedTail] | None = None,
) -> Iterator[Frame]:
    """Frames read one by one from a stream that cannot be mapped (sockets, object stores).

    A frame's body is read in bounded chunks, so a lying length costs at most what the
    stream really holds; where no whole frame follows, what was read (the rest of the stream,
    when the length ran past its end) is judged as :func:`judge` judges a mapped file.
    """
    pos = start
    while True:
        head = _read_up_to(stream, layout.FRAME_HEADER_SIZE + 1)
        if len(head) <= layout.FRAME_HEADER_SIZE:
            stop(judge(memoryview(head), 0, len(head), file), file, tails, pos)
            return
        length = _HEADER.unpack_from(head)[1]
        magic = _signed(head[layout.FRAME_MAGIC])
        body = b""
        if length >= MIN_FRAME_LENGTH and magic in (0, 1, 2):
            body = _read_up_to(stream, LOG_OVERHEAD + length - len(head))
        else:  # damage: what follows says where it resumes, or proves the batch whole
            body = _read_up_to(stream, RESYNC_WINDOW)
        data = head + body
        verdict = judge(memoryview(data), 0, len(data), file)
        if not isinstance(verdict, Frame):
            stop(verdict, file, tails, pos)
            return
        yield Frame(pos, verdict.base_offset, verdict.magic, verdict.data)
        pos += verdict.size


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
