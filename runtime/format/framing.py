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
  stops there, ``position >= end - HEADER_SIZE_UP_TO_MAGIC``).
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

import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import BinaryIO

import numpy as np

from ..errors import FramingError
from ..model import TruncatedTail
from . import layout, messages
from .crc import BATCH_CRC_START, LEGACY_CRC_START, crc32, crc32c
from .sizes import LOG_OVERHEAD

HEADER_SIZE_UP_TO_MAGIC = layout.FRAME_HEADER_SIZE
MAGIC_OFFSET = layout.FRAME_MAGIC
#: ``LegacyRecord.RECORD_OVERHEAD_V0``: the smallest length field Kafka accepts.
MIN_FRAME_LENGTH = layout.MIN_FRAME_LENGTH
#: How far past damage :func:`judge` looks for the next whole batch (the resume position):
#: more than a batch of Kafka's default ``max.message.bytes``, little enough that damage
#: before gigabytes of preallocated zeros costs no more than this much reading.
RESYNC_WINDOW = 4 << 20
_STREAM_CHUNK = 1 << 20
_SEARCH_CHUNK = 1 << 20
_V2_MIN_LENGTH = layout.V2_MIN_BATCH_LENGTH
# base offset and length: the frame's first LOG_OVERHEAD bytes
_HEADER = layout.field_struct(layout.FRAME_HEADER_FIELDS, "base_offset", "length")
_U32 = layout.field_struct(layout.V2_HEADER_FIELDS, "crc")


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

    def error(self, file: str | None = None, shift: int = 0) -> FramingError:
        """The error a reader raises for it; ``shift`` is added to positions (a stream's
        buffer starts at ``shift`` in the source)."""
        cause = self.cause
        if self.broken is not None and self.resume is not None:
            cause = messages.length_past_end(*self.broken, self.resume + shift)
        return FramingError(
            cause,
            file=file,
            position=self.position + shift,
            base_offset=self.base_offset,
            resume=None if self.resume is None else self.resume + shift,
        )


Verdict = Frame | TruncatedTail | Damage


def _as_bytes(buf) -> memoryview:
    view = buf if isinstance(buf, memoryview) else memoryview(buf)
    if view.format != "B" or view.ndim != 1:
        view = view.cast("B")
    return view


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
    if remaining <= HEADER_SIZE_UP_TO_MAGIC:
        return TruncatedTail(file, pos, remaining)
    base_offset, length = _HEADER.unpack_from(view, pos)
    if length < MIN_FRAME_LENGTH:
        cause = messages.length_below_minimum(length)
        return (
            _damage(view, pos, limit, base_offset, cause)
            if audit
            else Damage(pos, base_offset, cause)
        )
    magic = _signed(view[pos + MAGIC_OFFSET])
    if audit and magic not in (0, 1, 2):
        return _damage(view, pos, limit, base_offset, messages.invalid_magic(magic))
    if length > remaining - LOG_OVERHEAD:
        # The inner messages of a v0/v1 wrapper cut short lie verbatim in a snappy or LZ4
        # literal, CRCs and all: in a wrapper, plain messages alone prove nothing.
        wrapper = magic < 2 and view[pos + 17] & 0x07 != 0
        later = resync(view, pos + 1, limit, to_the_end=True, wrapper=wrapper) if audit else None
        if later is None:
            return TruncatedTail(file, pos, remaining)
        if wrapper:  # resume after the wrapper itself, not at its first inner message
            later = _wrapper_end(view, pos, later, limit)
        cause = messages.length_past_end(length, remaining, later)
        return Damage(pos, base_offset, cause, later, (length, remaining))
    return Frame(pos, base_offset, magic, view[pos : pos + LOG_OVERHEAD + length])


def end_of_walk(
    view, pos: int, limit: int, file: str | None = None
) -> tuple[TruncatedTail | None, FramingError | None]:
    """The tail and the error where a walk found no whole frame at ``pos`` (where
    ``fastscan.scan_frames`` stops, this says why)."""
    verdict = judge(_as_bytes(view), pos, limit, file)
    if isinstance(verdict, Frame):
        raise AssertionError(f"the frame scan stopped at a whole frame at {pos}")
    if isinstance(verdict, Damage):
        return None, verdict.error(file)
    return verdict, None


def _wrapper_end(view: memoryview, pos: int, later: int, limit: int) -> int:
    """Of the whole batches that follow a v0/v1 wrapper with a broken length, the first where
    the wrapper's own CRC-32 holds (only its length lied), else ``later``. Candidates are
    taken in order and the CRC extended from one to the next: linear in the bytes."""
    stored = _U32.unpack_from(view, pos + 12)[0]
    crc, done, candidate = 0, pos + LEGACY_CRC_START, later
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


def _damage(view, pos: int, limit: int, base_offset: int, cause: str) -> Damage:
    return Damage(pos, base_offset, cause, resync(view, pos + 1, limit, window=RESYNC_WINDOW))


def _signed(byte: int) -> int:
    return byte - 256 if byte >= 128 else byte


def resync(
    view,
    start: int,
    limit: int,
    *,
    window: int | None = None,
    to_the_end: bool = False,
    wrapper: bool = False,
    offsets: tuple[int, int] | None = None,
) -> int | None:
    """The first position at or after ``start`` where a whole batch starts: a plausible header
    (length in range and within ``limit``, magic 0/1/2, for v2 a full header and a known
    codec) whose CRC holds. With ``to_the_end``, the batches from there on must also follow
    each other, CRCs holding, to the end of the data: the inner messages of a v0/v1 wrapper
    lie verbatim in a snappy or LZ4 literal with their CRCs, but seldom lead to the end;
    with ``wrapper`` (the search starts inside a compressed v0/v1 wrapper) such a chain must
    hold a batch that cannot be an inner message (v2, or compressed).
    Candidates starting more than ``window`` bytes after ``start`` are not looked at.
    ``offsets`` (first, last): only candidates whose base offset lies in that range (what a
    caller knowing the offsets around the damage expects), which spares the CRCs of the many
    false candidates some payloads are full of.

    Linear in the bytes searched: headers are filtered in numpy a chunk at a time, and the
    CRCs computed stay within twice the bytes left plus 64 KiB (then it gives up: None)."""
    view = _as_bytes(view)
    limit = min(limit, len(view))
    stop = limit - LOG_OVERHEAD - MIN_FRAME_LENGTH + 1  # the last start a batch fits after
    if window is not None:
        stop = min(stop, start + window)
    if start >= stop:
        return None
    data = np.frombuffer(view, np.uint8, count=limit)
    budget = [2 * (limit - start) + (1 << 16)]
    lo = start
    while lo < stop:
        hi = min(stop, lo + _SEARCH_CHUNK)
        for p in _candidates(data, lo, hi, limit, offsets):
            if _whole(view, p, budget) and (
                not to_the_end or _chain_ends(view, p, limit, budget, wrapper)
            ):
                return p
            if budget[0] < 0:
                return None
        lo = hi
    return None


def _whole(view: memoryview, pos: int, budget: list[int]) -> bool:
    """Whether the frame at ``pos`` (known to fit) has a CRC that holds; charged to budget."""
    size = LOG_OVERHEAD + _HEADER.unpack_from(view, pos)[1]
    budget[0] -= size
    return budget[0] >= 0 and _crc_holds(view, pos, size)


def _chain_ends(view: memoryview, pos: int, limit: int, budget: list[int], wrapper: bool) -> bool:
    """Whether whole batches follow each other from the one at ``pos`` to Kafka's end (and,
    with ``wrapper``, one of them is no plain v0/v1 message)."""
    outer = not wrapper
    while True:
        length = _HEADER.unpack_from(view, pos)[1]
        outer = outer or view[pos + MAGIC_OFFSET] == 2 or view[pos + 17] & 0x07 != 0
        pos += LOG_OVERHEAD + length
        if limit - pos <= HEADER_SIZE_UP_TO_MAGIC:
            return outer
        length = _HEADER.unpack_from(view, pos)[1]
        fits = MIN_FRAME_LENGTH <= length <= limit - pos - LOG_OVERHEAD
        if not fits or view[pos + MAGIC_OFFSET] > 2 or not _whole(view, pos, budget):
            return False


def _candidates(
    data: np.ndarray, lo: int, hi: int, limit: int, offsets: tuple[int, int] | None = None
) -> list[int]:
    """Positions in [lo, hi) whose 17 header bytes could start a whole batch before limit
    (and whose base offset lies in ``offsets``, when given)."""
    magic = data[lo + MAGIC_OFFSET : hi + MAGIC_OFFSET]
    hits = np.flatnonzero(magic <= 2)
    if not len(hits):
        return []
    at = hits + lo
    length = (
        (data[at + 8].astype(np.int64) << 24)
        | (data[at + 9].astype(np.int64) << 16)
        | (data[at + 10].astype(np.int64) << 8)
        | data[at + 11]
    )
    room = limit - at - LOG_OVERHEAD
    ok = (length >= MIN_FRAME_LENGTH) & (length <= room) & (data[at + 8] < 0x80)
    v2 = magic[hits] == 2
    ok &= ~v2 | (length >= _V2_MIN_LENGTH)
    if ok.any():
        # v2: a codec Kafka defines (attributes' low bits, byte 22); cheap, and it spares CRCs.
        v2_ok = np.ones(len(at), bool)
        fits = ok & v2
        v2_ok[fits] = (data[at[fits] + 22] & 7) <= 4
        ok &= v2_ok
    if offsets is not None and ok.any():
        kept = at[ok]
        base = np.zeros(len(kept), np.uint64)
        for i in range(8):
            base = (base << np.uint64(8)) | data[kept + i].astype(np.uint64)
        signed = base.view(np.int64)
        ok[ok] = (signed >= offsets[0]) & (signed <= offsets[1])
    return at[ok].tolist()


def _crc_holds(view: memoryview, pos: int, size: int) -> bool:
    frame = view[pos : pos + size]
    if frame[MAGIC_OFFSET] == 2:
        return crc32c(frame[BATCH_CRC_START:]) == _U32.unpack_from(frame, 17)[0]
    return crc32(frame[LEGACY_CRC_START:]) == _U32.unpack_from(frame, 12)[0]


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
    view = _as_bytes(buf)
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
        head = _read_up_to(stream, HEADER_SIZE_UP_TO_MAGIC + 1)
        if len(head) <= HEADER_SIZE_UP_TO_MAGIC:
            stop(judge(memoryview(head), 0, len(head), file), file, tails, pos)
            return
        length = _HEADER.unpack_from(head)[1]
        magic = _signed(head[MAGIC_OFFSET])
        body = b""
        if length >= MIN_FRAME_LENGTH and magic in (0, 1, 2):
            body = _read_up_to(stream, LOG_OVERHEAD + length - len(head))
        elif length >= MIN_FRAME_LENGTH:
            body = _read_up_to(stream, RESYNC_WINDOW)  # for the resume position
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
