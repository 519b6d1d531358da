"""``stats``' header pass over one file: every frame's header, CRC and record payload sizes,
stored and uncompressed (``stats.py`` lays the records pass's rows on these entries).

The frames are found by the columnar path's numba scanner (``fastscan.scan_frames``); v2
CRC-32Cs are checked by the kernel in one call a table, compressed v2 batches are measured by
their C libraries in one kernel call (``plan.inflate_payloads``), snappy ones by the lengths
their blocks state (``plan.snappy_sizes``), and only damage, wrappers and what the kernels
refuse take Python a frame (``_measure_odd``): damage gets the
reference decoder's own error (``batches.read_batch``), a v0/v1 wrapper's inner messages are
counted by the scanner with the reference's framing checks.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from ..errors import CorruptBatchError, KafkaFormatError
from ..format import layout, messages
from ..format.batches import ReadOptions, read_batch
from ..format.codecs import decompress_buffer, resolve_codec
from ..format.framing import Frame, end_of_walk
from ..format.sizes import LEGACY_MESSAGE_HEADER
from ..kernels import fastscan as fs
from ..model import TruncatedTail
from ..read.columnar import wrapper_value
from ..read.plan import crc_holds, inflatable, inflate_payloads, snappy_sizes
from .stats_model import Damage

__all__ = [
    "KIND_CONTROL",
    "KIND_LEGACY",
    "KIND_V2",
    "KIND_WRAPPER",
    "Options",
    "Scan",
    "header_pass",
]

# What each valid batch is, for the breakdown.
KIND_V2, KIND_LEGACY, KIND_WRAPPER, KIND_CONTROL = 0, 1, 2, 3


@dataclass(slots=True, frozen=True)
class Options:
    """How both passes read: damage raised or counted, CRCs checked, the decompression cap."""

    strict: bool
    verify_crc: bool
    max_bytes: int


@dataclass(slots=True)
class Scan:
    """The header pass over one file: one entry per frame, in parallel arrays."""

    name: str
    size: int
    position: np.ndarray
    frame_size: np.ndarray
    base_offset: np.ndarray
    magic: np.ndarray
    codec: np.ndarray
    kind: np.ndarray
    damaged: np.ndarray
    #: Data records of the entry (the rows the records pass gives it); control records for
    #: control batches.
    records: np.ndarray
    #: The record payload as stored and uncompressed (see CodecStats).
    compressed: np.ndarray
    uncompressed: np.ndarray
    producer_id: np.ndarray
    transactional: np.ndarray
    problems: dict[int, Damage] = field(default_factory=dict)  # by byte position
    tails: list[TruncatedTail] = field(default_factory=list)
    unreadable: int = 0


_HEADERS_ONLY = {v: ReadOptions(verify_crc=v, records=False) for v in (True, False)}
_TABLE_ROWS = 65536
_NO_BUDGET = 1 << 62
_FRAME_HEAD = layout.field_struct(layout.FRAME_HEADER_FIELDS, "base_offset", "length")


def header_pass(
    name: str,
    view: memoryview,
    opts: Options,
    progress: Callable[[str, int, int], None] | None,
) -> Scan:
    """Every frame's header, CRC and record payload sizes. The frames are found by the numba
    scanner of the columnar path; only CRCs, decompression and damage take Python per frame."""
    buf = np.frombuffer(view, np.uint8)
    limit = len(buf)
    table = np.empty((_TABLE_ROWS, fs.FRAME_COLUMNS), np.int64)
    parts: list[dict[str, np.ndarray]] = []
    problems: dict[int, Damage] = {}
    tails: list[TruncatedTail] = []
    unreadable = 0
    pos = 0
    while True:
        n, nxt, status = fs.scan_frames(buf, pos, limit, table, _NO_BUDGET, _NO_BUDGET, 1)
        if n:
            parts.append(_measure(table[:n].copy(), view, name, opts, problems))
        if progress is not None:
            progress(name, nxt, limit)
        if status == fs.SCAN_BUDGET:
            pos = nxt
            continue
        tail, exc = end_of_walk(view, nxt, limit, name)  # what lies where the scan stopped
        if exc is not None:
            if opts.strict:
                raise exc
            problems[nxt] = Damage.of(exc, "framing")
            unreadable = limit - nxt
        elif tail is not None:
            tails.append(tail)
        break
    columns = {
        k: np.concatenate([p[k] for p in parts]) if parts else np.zeros(0, _DTYPES[k])
        for k in _DTYPES
    }
    return Scan(name, limit, **columns, problems=problems, tails=tails, unreadable=unreadable)


_DTYPES = {
    "position": np.int64, "frame_size": np.int64, "base_offset": np.int64, "magic": np.int64,
    "codec": np.int64, "kind": np.int64, "damaged": bool, "records": np.int64,
    "compressed": np.int64, "uncompressed": np.int64, "producer_id": np.int64,
    "transactional": bool,
}  # fmt: skip


def _measure(
    t: np.ndarray, view: memoryview, name: str, opts: Options, problems: dict[int, Damage]
) -> dict[str, np.ndarray]:
    """The entries of a table of frames: CRCs checked, compressed data batches decompressed
    for their uncompressed size (and v0/v1 wrappers' inner message count), damage found with
    the reference decoder's errors, in frame order. Only damage, wrappers, snappy and what
    the C libraries refuse take Python a frame."""
    position, size, base = t[:, fs.F_POS], t[:, fs.F_SIZE], t[:, fs.F_BASE]
    magic, attributes, count = t[:, fs.F_MAGIC], t[:, fs.F_ATTR], t[:, fs.F_COUNT]
    codec = attributes & layout.V2_ATTR_COMPRESSION_MASK
    v2 = magic == 2
    control = v2 & ((attributes & layout.V2_ATTR_IS_CONTROL_MASK) != 0)
    kind = np.where(
        v2,
        np.where(control, KIND_CONTROL, KIND_V2),
        np.where(codec != 0, KIND_WRAPPER, KIND_LEGACY),
    )
    stored = np.where(v2, size - layout.V2_HEADER_SIZE, size)
    out = {
        "position": position,
        "frame_size": size,
        "base_offset": base,
        "magic": magic,
        "codec": codec,
        "kind": kind,
        "damaged": t[:, fs.F_HEADER_OK] != 1,
        "records": count,  # v2 record counts; 1 for v0/v1 (the wrappers' are set below)
        "compressed": stored,
        "uncompressed": stored.copy(),
        "producer_id": t[:, fs.F_PID],
        "transactional": v2 & ((attributes & layout.V2_ATTR_IS_TRANSACTIONAL_MASK) != 0),
    }
    bad = out["damaged"]
    buf = np.frombuffer(view, np.uint8)
    # CRCs: CRC-32C of attributes..end (v2) by the kernel in one call; CRC-32 of magic..end
    # (v0/v1) a frame at a time.
    if opts.verify_crc:
        bad |= v2 & ~bad & ~crc_holds(buf, t, v2 & ~bad, True)
    stored_crc = t[:, fs.F_CRC].tolist()
    for i in np.flatnonzero(~v2 & ~bad).tolist() if opts.verify_crc else ():
        p, s = int(position[i]), int(size[i])
        if zlib.crc32(view[p + layout.LEGACY_CRC_START : p + s]) != stored_crc[i]:
            bad[i] = True
    data = ~control
    # Compressed v2 batches' sizes from their C libraries, one kernel call for them all
    # (``plan.inflate_payloads``); what they refuse, and the rest, take the Python path below.
    measured = np.zeros(len(t), bool)
    fast = v2 & data & (codec != 0) & (count > 0) & ~bad
    fast = np.flatnonzero(fast & inflatable(codec, magic, np.zeros(len(t), bool)))
    if len(fast):
        spans = np.stack(
            [position[fast] + layout.V2_HEADER_SIZE, position[fast] + size[fast]], axis=1
        )
        arenas: list = []
        got = inflate_payloads(buf.ctypes.data, spans, codec[fast], opts.max_bytes, arenas)
        ok = got[:, 1] >= 0
        out["uncompressed"][fast[ok]] = (got[:, 2] - got[:, 1])[ok]
        measured[fast[ok]] = True
    # Snappy v2 batches: the length each block states, exact for a payload that decodes (one
    # kernel call for them all, ``plan.snappy_sizes``); one that does not decode is the
    # records pass's damage, laid on this entry as the C libraries' refusals are.
    snappy = v2 & data & (codec == layout.COMPRESSION_CODEC_SNAPPY) & (count > 0) & ~bad
    chosen = np.flatnonzero(snappy & ~measured)
    if len(chosen):
        sized = snappy_sizes(
            buf.ctypes.data,
            position[chosen] + layout.V2_HEADER_SIZE,
            position[chosen] + size[chosen],
            count[chosen],
            opts.max_bytes,
        )
        ok = sized >= 0
        out["uncompressed"][chosen[ok]] = sized[ok]
        measured[chosen[ok]] = True
    del buf  # the map closes only when no array holds it
    odd = bad | (data & (codec != 0) & ~measured) | (v2 & data & (count <= 0))
    for i in np.flatnonzero(odd).tolist():
        p, s = int(position[i]), int(size[i])
        frame = Frame(p, int(base[i]), int(magic[i]), view[p : p + s])
        try:
            if bad[i]:
                # The reference's own error (it raises on what made the frame bad here).
                read_batch(frame, _HEADERS_ONLY[opts.verify_crc], file=name)
                bad[i] = False  # pragma: no cover - the reference found nothing wrong
            _measure_odd(out, i, frame, opts)
        except KafkaFormatError as exc:
            exc.located(file=name, position=p, base_offset=int(base[i]))
            if opts.strict:
                raise
            bad[i] = True
            problems[p] = Damage.of(exc)
    return out


def _measure_odd(out: dict[str, np.ndarray], i: int, frame: Frame, opts: Options) -> None:
    """A compressed or empty data batch: its uncompressed size and record count."""
    codec = int(out["codec"][i])
    if frame.magic == 2:
        count = int(out["records"][i])
        if count < 0:
            raise CorruptBatchError(messages.negative_count(count))
        if count == 0:
            # As DefaultRecordBatch: an empty batch is not decompressed, whatever its codec.
            resolve_codec(codec, magic=2)
            out["uncompressed"][i] = 0 if codec else out["compressed"][i]
            return
        payload = frame.data[layout.V2_HEADER_SIZE :]
        payload = decompress_buffer(codec, payload, magic=2, max_bytes=opts.max_bytes)
        out["uncompressed"][i] = len(payload)
        return
    value = wrapper_value(frame.data, 0, len(frame.data), frame.magic)
    inner = decompress_buffer(codec, value, magic=frame.magic, max_bytes=opts.max_bytes)
    out["records"][i] = _count_inner(inner)
    out["compressed"][i] = len(value)
    out["uncompressed"][i] = len(inner)


def _count_inner(inner: bytes) -> int:
    """How many messages a wrapper's decompressed value holds, with the reference's checks
    on their framing (found by the numba scanner: a wrapper may hold thousands)."""
    buf = np.frombuffer(inner, np.uint8)
    limit = len(buf)
    # An inner entry takes at least a v0 message header.
    table = np.empty(
        (min(_TABLE_ROWS, limit // LEGACY_MESSAGE_HEADER[0] + 1), fs.FRAME_COLUMNS), np.int64
    )
    pos = count = 0
    while True:
        n, nxt, status = fs.scan_frames(buf, pos, limit, table, _NO_BUDGET, _NO_BUDGET, 1)
        t = table[:n]
        magic = t[:, fs.F_MAGIC]
        odd = np.flatnonzero(
            (magic != 0) & (magic != 1) | ((t[:, fs.F_ATTR] & layout.V2_ATTR_COMPRESSION_MASK) != 0)
        )
        if len(odd):
            k = int(odd[0])
            if magic[k] not in (0, 1):
                raise CorruptBatchError(f"inner message with magic {int(magic[k])}")
            raise CorruptBatchError(
                f"compressed inner message at inner offset {int(t[k, fs.F_BASE])} "
                "(nested compression is not allowed)"
            )
        count += n
        if status == fs.SCAN_FRAMING_ERROR:
            length = _FRAME_HEAD.unpack_from(inner, nxt)[1]
            if length >= layout.MIN_FRAME_LENGTH:  # the scan stops at a magic above 2 too
                (magic_byte,) = struct.unpack_from("b", inner, nxt + layout.FRAME_MAGIC)
                raise CorruptBatchError(messages.inner_magic(magic_byte))
            raise CorruptBatchError(
                f"inner messages: {messages.inner_framing(length)} (byte {nxt} of the "
                "decompressed value)"
            )
        if status == fs.SCAN_END:
            if nxt < limit:
                raise CorruptBatchError(f"{limit - nxt} trailing bytes after the inner messages")
            break
        pos = nxt
    if not count:
        raise CorruptBatchError("compressed wrapper message holds no inner messages")
    return count
