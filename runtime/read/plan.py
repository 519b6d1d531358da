"""The columnar fast path's planning of sections (``columnar.py``'s worker side): the CRC-32Cs
of uncompressed v2 batches checked by the kernel, one call a chunk (``crc_fails``); each
compressed v2 batch's CRC and count checks and its payload decompressed by Python
(``prepare_v2``), each v0/v1 wrapper's (``prepare_wrapper``): gzip straight into a buffer of
the size its trailer states (``decompress_into``), else by ``codecs.decompress_buffer``; or,
for snappy and LZ4 as Kafka's clients write them, their CRCs checked and payloads planned by
``kernels.payloads`` so that the record decoder decompresses them itself (``plan_packed``);
gzip, zstd and the other LZ4 frames decompressed by their C libraries in one kernel call per
chunk (``plan_inflated``, ``kernels.inflate``), so that no batch takes a Python step unless
it is damaged, unusual or a library is missing;
transaction markers checked by a kernel, not decoded (``marker_types``);
the words of a payload the kernel could not decompress (``decompress_error``), and the runs
of sections one decoder call takes.

``columnar`` imports these under its own names and looks them up there, where the tests
replace them.
"""

from __future__ import annotations

import mmap
import struct
import threading
import zlib
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
from crc32c import crc32c

from ..errors import CorruptBatchError, DecompressionError, KafkaFormatError
from ..format import layout, messages
from ..format.batches import count_cannot_fit
from ..format.codecs import decompress_buffer, resolve_codec
from ..format.sizes import max_record_count
from ..kernels import crc32 as kernel_crc
from ..kernels import fastscan as fs
from ..kernels import inflate as kernel_inflate
from ..kernels import lz4 as kernel_lz4
from ..kernels import markers as kernel_markers
from ..kernels import payloads as kernel_payloads
from ..model import Report
from ..progress import Progress

#: Most bytes of records one kernel call decodes: Arrow's binary offsets are int32.
GROUP_BYTES = 1 << 30
# How a frame is decoded (fastscan.K_*): only these two kinds are planned here.
_COMPRESSED, _WRAPPER = fs.K_COMPRESSED, fs.K_WRAPPER


@dataclass(slots=True)
class Options:
    """How ``iter_arrow_batches`` was asked to read."""

    include_headers: bool
    verify_crc: bool
    strict: bool
    max_bytes: int
    batch_rows: int
    schema: pa.Schema
    report: Report
    progress: Progress | None = None
    #: Add each row's file and batch position (``include_position``).
    locate: bool = False
    #: ``errors="salvage"``: read on past framing damage (``salvage.py``).
    salvage: bool = False
    #: ``binary_view``: key and value as views into the bytes read (``views.py``).
    binary_view: bool = False
    #: ``low_memory``: smaller chunks, for a streaming reader's peak memory over its speed.
    low_memory: bool = False


def prepare_v2(sec: np.ndarray, view: memoryview, opts: Options, holders: list) -> bool:
    """CRC and count checks of a v2 batch, and its payload decompressed (the reference's
    order: CRC, negative count, decompression, count against size). False for a batch of no
    records, which Kafka (and the reference) neither decompresses nor checks further."""
    pos = int(sec[fs.S_START]) - layout.V2_HEADER_SIZE
    end = int(sec[fs.S_END])
    count = int(sec[fs.S_COUNT])
    if opts.verify_crc:
        computed = crc32c(view[pos + layout.V2_CRC_START : end])
        stored = struct.unpack_from(">I", view, pos + layout.V2_CRC)[0]
        if computed != stored:
            raise messages.crc_mismatch(stored, computed, "crc32c")
    if count < 0:
        raise CorruptBatchError(messages.negative_count(count))
    attributes = struct.unpack_from(">h", view, pos + layout.V2_ATTRIBUTES)[0]
    codec = attributes & layout.V2_ATTR_COMPRESSION_MASK
    if count == 0:
        resolve_codec(codec, magic=2)
        return False
    if codec:
        payload = decompress_into(codec, pos + layout.V2_HEADER_SIZE, end, view, opts)
        if payload is None:
            payload = decompress_buffer(
                codec, view[pos + layout.V2_HEADER_SIZE : end], magic=2, max_bytes=opts.max_bytes
            )
        holders.append(payload)
        sec[fs.S_ADDR] = _address(payload)
        sec[fs.S_START] = 0
        sec[fs.S_END] = end = len(payload)
        start = 0
    else:
        start = pos + layout.V2_HEADER_SIZE
    if count > max_record_count(end - start):
        raise count_cannot_fit(count, end - start)
    return True


def plan_packed(
    sections: np.ndarray, kinds: np.ndarray, attributes: np.ndarray, address: int, opts: Options
) -> np.ndarray:
    """The snappy and LZ4 wrappers and v2 batches the kernel decompresses itself
    (``kernel_payloads``): their CRCs checked and their payloads planned in one call per kind,
    without the GIL. True where a section was turned into a FORMAT_PACKED_WRAPPER or
    FORMAT_PACKED_V2 one; the others take ``prepare_wrapper`` or ``prepare_v2``."""
    codecs = attributes & layout.V2_ATTR_COMPRESSION_MASK  # the same bits in v0/v1 attributes
    packed = codecs == layout.COMPRESSION_CODEC_SNAPPY
    if kernel_lz4.LZ4_DECOMPRESS:
        lz4 = codecs == layout.COMPRESSION_CODEC_LZ4
        if kernel_inflate.available(layout.COMPRESSION_CODEC_LZ4):
            # A small frame's capacity is 255 times its size (its one block's bound), and the
            # decoder's buffers are sized from capacities: a chunk of one-record batches
            # asked for megabytes. LZ4F decodes small frames to their exact size instead.
            # (Magic 0 frames, with Kafka 0.8's header checksum, are this decoder's alone.)
            small = sections[:, fs.S_END] - sections[:, fs.S_START] < _PACKED_LZ4_MIN
            lz4 &= ~small | (sections[:, fs.S_MAGIC] == 0)
        packed |= lz4
    taken = np.zeros(len(kinds), bool)
    room = opts.max_bytes + 1
    wrappers = np.flatnonzero(packed & (kinds == _WRAPPER))
    if len(wrappers):
        plan = np.empty((len(wrappers), 3), np.int64)
        kernel_payloads.plan_wrappers(
            address,
            np.ascontiguousarray(sections[wrappers, fs.S_START]),
            np.ascontiguousarray(sections[wrappers, fs.S_END]),
            np.ascontiguousarray(sections[wrappers, fs.S_MAGIC]),
            codecs[wrappers],
            bool(opts.verify_crc),
            room,
            plan,
        )
        ok = plan[:, 2] >= 0
        chosen = wrappers[ok]
        sections[chosen, fs.S_FORMAT] = fs.FORMAT_PACKED_WRAPPER
        _point_at_scratch(sections, chosen, codecs, plan[ok, 0], plan[ok, 1], plan[ok, 2])
        # rows to make room for: as many as the least inner entries fit in the value
        sections[chosen, fs.S_COUNT] = plan[ok, 2] // layout.LEGACY_V0_ENTRY_MIN_SIZE + 1
        taken[chosen] = True
    batches = np.flatnonzero(packed & (kinds == _COMPRESSED))
    if len(batches):
        capacity = np.empty(len(batches), np.int64)
        starts = np.ascontiguousarray(sections[batches, fs.S_START])
        ends = np.ascontiguousarray(sections[batches, fs.S_END])
        kernel_payloads.plan_batches(
            address,
            starts,
            ends,
            np.ascontiguousarray(sections[batches, fs.S_COUNT]),
            codecs[batches],
            bool(opts.verify_crc),
            room,
            kernel_crc.CRC32C_FUNCTION,
            capacity,
        )
        # A count its capacity cannot hold is a lie whatever the payload holds: the decoder's
        # buffers are sized from counts, so such a batch takes the Python path, which
        # decompresses it within max_bytes and raises the reference's error (the count
        # against what the payload decompressed to).
        counts = sections[batches, fs.S_COUNT]
        ok = (capacity >= 0) & (counts <= max_record_count(capacity))
        chosen = batches[ok]
        sections[chosen, fs.S_FORMAT] = fs.FORMAT_PACKED_V2
        _point_at_scratch(sections, chosen, codecs, starts[ok], ends[ok], capacity[ok])
        taken[chosen] = True
    return taken


#: LZ4 payloads of fewer bytes are decoded by LZ4F (``plan_inflated``), not by the record
#: decoder itself: a frame of full 64 KiB blocks states about what it decodes to, a small
#: one only a bound 255 times its size.
_PACKED_LZ4_MIN = 16 * 1024

#: An inflate arena's first size, per byte of the payloads it is for (a JSON record set
#: compresses 2-10 times; an arena too small for a payload is followed by one twice its size).
_ARENA_PER_BYTE = 4
_ARENA_MIN = 64 * 1024
#: The most one payload may decompress to here: Kafka's batches are a MiB or so (its
#: ``message.max.bytes``); a larger one (or a bomb) takes the Python path, which streams it
#: within ``max_bytes`` and so never holds a failed try's output beside its own.
_ARENA_MAX = 8 * 1024 * 1024


def plan_inflated(
    sections: np.ndarray,
    kinds: np.ndarray,
    attributes: np.ndarray,
    address: int,
    opts: Options,
    holders: list,
    taken: np.ndarray,
) -> np.ndarray:
    """The gzip, zstd and LZ4 wrappers and v2 batches that ``plan_packed`` did not take
    (``taken``), decompressed by their C libraries in one kernel call per arena
    (``kernel_inflate``): their CRCs checked, their payloads decoded into arenas kept in
    ``holders``, their sections pointed there. True where a section was; the others take
    ``prepare_wrapper`` or ``prepare_v2``, which raise the reference's errors."""
    codecs = attributes & layout.V2_ATTR_COMPRESSION_MASK  # the same bits in v0/v1 attributes
    wrappers = kinds == _WRAPPER
    magics = sections[:, fs.S_MAGIC]
    wanted = ((kinds == _COMPRESSED) | wrappers) & ~taken
    wanted &= inflatable(codecs, magics, wrappers)
    chosen = np.flatnonzero(wanted)
    done = np.zeros(len(kinds), bool)
    if not len(chosen):
        return done
    spans = np.empty((len(chosen), 2), np.int64)
    kernel_payloads.payload_spans(
        address,
        np.ascontiguousarray(sections[chosen, fs.S_START]),
        np.ascontiguousarray(sections[chosen, fs.S_END]),
        np.ascontiguousarray(magics[chosen]),
        wrappers[chosen],
        np.ascontiguousarray(sections[chosen, fs.S_COUNT]),
        bool(opts.verify_crc),
        kernel_crc.CRC32C_FUNCTION,
        spans,
    )
    out = inflate_payloads(address, spans, codecs[chosen], opts.max_bytes, holders)
    sizes = out[:, 2] - out[:, 1]
    ok = out[:, 1] >= 0
    # A v2 count its payload cannot hold: the Python path raises the reference's error.
    ok &= wrappers[chosen] | (sections[chosen, fs.S_COUNT] <= max_record_count(sizes))
    picked = chosen[ok]
    sections[picked, fs.S_ADDR] = out[ok, 0]
    sections[picked, fs.S_START] = out[ok, 1]
    sections[picked, fs.S_END] = out[ok, 2]
    inner = picked[wrappers[picked]]
    sections[inner, fs.S_COUNT] = (
        sections[inner, fs.S_END] - sections[inner, fs.S_START]
    ) // layout.LEGACY_V0_ENTRY_MIN_SIZE + 1
    done[picked] = True
    return done


def inflatable(codecs: np.ndarray, magics: np.ndarray, wrappers: np.ndarray) -> np.ndarray:
    """Where a payload's codec has its C library here (``kernel_inflate.available``): gzip,
    zstd (v2 batches only: Kafka allows no zstd wrapper) and LZ4 but Kafka 0.8's frames
    (magic 0), whose header checksum only the Python path is told about."""
    return (
        (
            (codecs == layout.COMPRESSION_CODEC_GZIP)
            & kernel_inflate.available(layout.COMPRESSION_CODEC_GZIP)
        )
        | (
            (codecs == layout.COMPRESSION_CODEC_ZSTD)
            & ~wrappers
            & kernel_inflate.available(layout.COMPRESSION_CODEC_ZSTD)
        )
        | (
            (codecs == layout.COMPRESSION_CODEC_LZ4)
            & (magics != 0)
            & kernel_inflate.available(layout.COMPRESSION_CODEC_LZ4)
        )
    )


def inflate_payloads(
    address: int, spans: np.ndarray, codecs: np.ndarray, max_bytes: int, holders: list
) -> np.ndarray:
    """The payloads ``spans`` (start, end; start -1: none) of the buffer at ``address``
    decoded by ``kernel_inflate`` into arenas kept in ``holders``: per payload (arena
    address, start, end), start -1 where the Python path must take it."""
    held = spans[:, 1] - spans[:, 0]
    most = min(max_bytes, _ARENA_MAX)
    size = min(max(_ARENA_PER_BYTE * int(held[spans[:, 0] >= 0].sum()), _ARENA_MIN), most)
    out = np.empty((len(spans), 3), np.int64)
    codecs = np.ascontiguousarray(codecs)
    k = 0
    first = True
    while k < len(spans):
        # The first arena from Arrow's pool, whose pages the last chunk left warm; the rest
        # (payloads larger than the room left) mapped anew, so that one no payload went into
        # (a bomb's tries) is given back at once, not kept by the pool beside the Python
        # path's own output.
        arena = pa.allocate_buffer(max(size, 1)) if first else mmap.mmap(-1, size)
        first = False
        into = np.frombuffer(arena, np.uint8)
        k, used = kernel_inflate.inflate(
            kernel_inflate.FUNCTIONS, _contexts(), address, spans, codecs, into, k, most, out
        )
        del into
        if used:
            holders.append(arena)
        elif isinstance(arena, mmap.mmap):
            arena.close()
        size = min(2 * size, most)
    return out


_thread = threading.local()


def _contexts() -> np.ndarray:
    """The calling thread's decompression contexts (``kernel_inflate.Contexts``), kept for
    its later chunks and freed with the thread."""
    held = getattr(_thread, "contexts", None)
    if held is None:
        held = _thread.contexts = kernel_inflate.Contexts()
    return held.slots


#: What ``marker_types`` says of a frame that is no transaction marker the kernel checked.
NOT_A_MARKER = kernel_markers.NOT_A_MARKER


def marker_types(
    buf: np.ndarray, table: np.ndarray, control: np.ndarray, verify_crc: bool
) -> np.ndarray:
    """Per frame of ``table`` (``control``: those that are control batches), the control type
    of a transaction marker in Kafka's own form, checked by the kernel (``kernel_markers``;
    its CRC too with ``verify_crc``), so that it needs no decoding; NOT_A_MARKER for every
    other frame, which takes the reference decoder if it is a control batch."""
    marker = np.full(len(control), NOT_A_MARKER, np.int64)
    chosen = np.flatnonzero(control)
    if len(chosen):
        found = np.empty(len(chosen), np.int64)
        kernel_markers.check_markers(
            buf.ctypes.data,
            np.ascontiguousarray(table[chosen, fs.F_POS]),
            np.ascontiguousarray(table[chosen, fs.F_SIZE]),
            bool(verify_crc),
            kernel_crc.CRC32C_FUNCTION,
            found,
        )
        marker[chosen] = found
    return marker


def crc_holds(
    buf: np.ndarray, table: np.ndarray, wanted: np.ndarray, verify_crc: bool
) -> np.ndarray:
    """Per frame of ``table``, True where it is one of the v2 batches ``wanted`` (their headers
    whole) whose CRC-32C holds, by the kernel in one call, or is not checked (``verify_crc``
    off)."""
    holds = np.zeros(len(wanted), bool)
    chosen = np.flatnonzero(wanted)
    if not len(chosen):
        return holds
    if not verify_crc:
        holds[chosen] = True
        return holds
    positions = table[chosen, fs.F_POS]
    found = np.empty(len(chosen), np.bool_)
    kernel_payloads.check_batches(
        buf.ctypes.data,
        np.ascontiguousarray(positions + layout.V2_HEADER_SIZE),
        np.ascontiguousarray(positions + table[chosen, fs.F_SIZE]),
        kernel_crc.CRC32C_FUNCTION,
        found,
    )
    holds[chosen] = found
    return holds


def snappy_sizes(
    address: int, starts: np.ndarray, ends: np.ndarray, counts: np.ndarray, max_bytes: int
) -> np.ndarray:
    """What the snappy records of v2 batches at ``address + starts[k]:ends[k]`` decompress to,
    as their blocks state it (exact for a payload that decodes; the decoder checks the rest),
    in one kernel call (``kernel_payloads.plan_batches``, CRCs left to the caller); -1 where
    the Python path must take a batch: framing the kernel does not take, more than
    ``max_bytes``, or a record count that size cannot hold."""
    sizes = np.empty(len(starts), np.int64)
    kernel_payloads.plan_batches(
        address,
        np.ascontiguousarray(starts, np.int64),
        np.ascontiguousarray(ends, np.int64),
        np.ascontiguousarray(counts, np.int64),
        np.full(len(starts), layout.COMPRESSION_CODEC_SNAPPY, np.int64),
        False,
        max_bytes + 1,
        kernel_crc.CRC32C_FUNCTION,
        sizes,
    )
    sizes[(sizes >= 0) & (counts > max_record_count(np.maximum(sizes, 0)))] = -1
    return sizes


def crc_fails(sections: np.ndarray, kinds: np.ndarray, address: int) -> np.ndarray:
    """True where an uncompressed v2 batch's CRC-32C does not hold, checked by the kernel in
    one call for the chunk (``kernel_payloads.check_batches``): only those take
    ``prepare_v2``, which checks it again and raises the reference's error."""
    fails = np.zeros(len(kinds), bool)
    batches = np.flatnonzero(kinds == fs.K_FAST)
    if len(batches):
        holds = np.empty(len(batches), np.bool_)
        kernel_payloads.check_batches(
            address,
            np.ascontiguousarray(sections[batches, fs.S_START]),
            np.ascontiguousarray(sections[batches, fs.S_END]),
            kernel_crc.CRC32C_FUNCTION,
            holds,
        )
        fails[batches] = ~holds
    return fails


def _point_at_scratch(sections, chosen, codecs, payload_start, payload_end, capacity) -> None:
    sections[chosen, fs.S_PAYLOAD_START] = payload_start
    sections[chosen, fs.S_PAYLOAD_END] = payload_end
    sections[chosen, fs.S_CODEC] = codecs[chosen]
    sections[chosen, fs.S_START] = 0
    sections[chosen, fs.S_END] = capacity


def decompress_error(sec: np.ndarray, view: memoryview, opts: Options) -> KafkaFormatError:
    """What the Python path raises for a section whose payload the kernel could not
    decompress (the codec library's own error, so that both paths report alike) or, for a v2
    batch, whose record count cannot fit in what it decompresses to."""
    value = view[int(sec[fs.S_PAYLOAD_START]) : int(sec[fs.S_PAYLOAD_END])]
    magic = int(sec[fs.S_MAGIC])
    codec = int(sec[fs.S_CODEC])
    try:
        payload = decompress_buffer(codec, value, magic=magic, max_bytes=opts.max_bytes)
    except KafkaFormatError as exc:
        return exc
    count = int(sec[fs.S_COUNT])
    if magic == 2 and count > max_record_count(len(payload)):
        return count_cannot_fit(count, len(payload))
    # Not reached while the kernels accept what the codec libraries accept (tested).
    return DecompressionError(f"{resolve_codec(codec, magic=magic).name.lower()}: does not decode")


_LEGACY_HEAD = layout.field_struct(layout.LEGACY_HEADER_FIELDS, "crc", "attributes")
_I32 = layout.field_struct(layout.LEGACY_V0_FIXED_FIELDS, "len_key")


def prepare_wrapper(sec: np.ndarray, view: memoryview, opts: Options, holders: list) -> None:
    """CRC of a v0/v1 wrapper and its value decompressed (the inner messages)."""
    pos, end = int(sec[fs.S_START]), int(sec[fs.S_END])
    stored, magic, attributes = _LEGACY_HEAD.unpack_from(view, pos + layout.LEGACY_CRC)
    if opts.verify_crc:
        # By address: the chunk's own (not yet replaced by the payload's), and zlib's crc32
        # is three times slower than the kernels'.
        computed = kernel_crc.crc32(int(sec[fs.S_ADDR]), pos + layout.LEGACY_CRC_START, end)
        if computed != stored:
            raise messages.crc_mismatch(stored, computed, "crc32")
    start, stop = _value_span(view, pos, end, magic)
    codec = attributes & layout.LEGACY_ATTR_COMPRESSION_MASK
    payload = decompress_into(codec, start, stop, view, opts)
    if payload is None:
        payload = decompress_buffer(codec, view[start:stop], magic=magic, max_bytes=opts.max_bytes)
    holders.append(payload)
    sec[fs.S_ADDR] = _address(payload)
    sec[fs.S_START] = 0
    sec[fs.S_END] = len(payload)
    sec[fs.S_COUNT] = len(payload) // layout.LEGACY_V0_ENTRY_MIN_SIZE + 1


def wrapper_value(view: memoryview, pos: int, end: int, magic: int) -> memoryview:
    """The value (the compressed inner messages) of the v0/v1 wrapper entry ``view[pos:end]``,
    read as the LegacyMessage parser reads it; its header fields are known to be there."""
    start, stop = _value_span(view, pos, end, magic)
    return view[start:stop]


def _value_span(view: memoryview, pos: int, end: int, magic: int) -> tuple[int, int]:
    p = pos + (layout.LEGACY_V1_LEN_KEY if magic == 1 else layout.LEGACY_V0_LEN_KEY)
    (key_len,) = _I32.unpack_from(view, p)
    p += 4
    if key_len >= 0:
        if key_len > end - p:
            raise CorruptBatchError(messages.malformed_message(messages.MESSAGE_FIELD_PAST_END))
        p += key_len
    if end - p < 4:
        raise CorruptBatchError(messages.malformed_message(messages.MESSAGE_FIELD_PAST_END))
    (value_len,) = _I32.unpack_from(view, p)
    p += 4
    if value_len < 0:
        raise CorruptBatchError(messages.WRAPPER_NULL_VALUE)
    if value_len > end - p:
        raise CorruptBatchError(messages.malformed_message(messages.MESSAGE_FIELD_PAST_END))
    return p, p + value_len


# gzip decoded in one call, bounded by the size its trailer states (most gzip batches take
# the kernels' libdeflate path instead: ``plan_inflated``). zstd keeps the Python path.
_GZIP_MIN = 18  # a gzip member's header (10) and trailer (8)
# FLG bits (RFC 1952): FHCRC, and the reserved ones zlib rejects.
_GZIP_FLAGS_REFUSED = 0x02 | 0xE0
_ISIZE = struct.Struct("<I")
# DEFLATE's most output per input byte (a 258-byte match in about two bits): an ISIZE above
# that is a lie the payload cannot back, and no buffer is sized on it.
_DEFLATE_MAX_RATIO = 1032


def gzip_size(view: memoryview, start: int, end: int) -> int:
    """The bytes the gzip payload ``view[start:end]`` decodes to, by its trailer's ISIZE,
    when its first member's header is one the one-call decoder takes (no header CRC, no
    reserved flags); -1 otherwise. A payload of several members decodes to more than its last
    member's ISIZE: it does not fit the buffer, and takes the Python path."""
    if end - start < _GZIP_MIN or view[start : start + 3] != b"\x1f\x8b\x08":
        return -1
    if view[start + 3] & _GZIP_FLAGS_REFUSED:
        return -1
    size = _ISIZE.unpack_from(view, end - 4)[0]
    return size if size <= _DEFLATE_MAX_RATIO * (end - start) else -1


def _gunzip(payload: memoryview, size: int) -> pa.Buffer | None:
    """One gzip member, whole, by zlib (the reference's own decoder: Java's GZIPInputStream
    is zlib), its output bounded by the size it states. None where the payload is not exactly
    one member that decodes to that size: the reference path decides. (cramjam's
    ``decompress_into`` took some streams zlib refuses, a distance past the output so far
    among them; libdeflate ignores bytes after the first member.)"""
    decoder = zlib.decompressobj(31)
    try:
        data = decoder.decompress(payload, size + 1)
    except zlib.error:
        return None
    if len(data) != size or not decoder.eof or decoder.unused_data or decoder.unconsumed_tail:
        return None
    return pa.py_buffer(data)


_INTO = {layout.COMPRESSION_CODEC_GZIP: _gunzip}


def decompress_into(
    codec: int, start: int, end: int, view: memoryview, opts: Options
) -> pa.Buffer | None:
    """The payload ``view[start:end]`` decompressed into a buffer of
    Arrow's pool of the size it states, or None where the codec has no such path, the size
    is unknown or passes ``max_bytes``, or the decoder fails or writes another size: the
    caller then takes ``decompress_buffer``, which decodes it as before and raises its
    errors. So the output is the same whichever path ran: a whole payload decoded without
    error to exactly its stated size is the one output of its bytes."""
    decode = _INTO.get(codec)
    if decode is None:
        return None
    size = gzip_size(view, start, end)
    if size < 0 or size > opts.max_bytes:
        return None
    return decode(view[start:end], size)


def _address(data: bytes | pa.Buffer) -> int:
    if isinstance(data, pa.Buffer):
        return data.address
    return np.frombuffer(data, np.uint8).ctypes.data if data else 0


def groups(sections: np.ndarray) -> Iterator[tuple[int, int]]:
    """Runs of sections small enough for int32 Arrow offsets (one run, but for giant ones)."""
    sizes = sections[:, fs.S_END] - sections[:, fs.S_START]
    if int(sizes.sum()) <= GROUP_BYTES:
        yield 0, len(sizes)
        return
    lo = 0
    total = 0
    for k, size in enumerate(sizes.tolist()):
        if k > lo and total + size > GROUP_BYTES:
            yield lo, k
            lo, total = k, 0
        total += size
    if lo < len(sizes) or not len(sizes):
        yield lo, len(sizes)
