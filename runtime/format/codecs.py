"""Kafka's record compression codecs, decompressed with a hard bound on output size.

Every decoder streams and checks the bound while it decompresses (or, where the format states
sizes up front, before it starts), so a small hostile payload cannot make us allocate much
more than ``max_bytes``. Only this project's exceptions escape: DecompressionError for data the
codec cannot decode, DecompressionLimitError when the output would exceed the bound, and
UnsupportedCodecError for codec ids Kafka does not allow.

Format quirks handled, as Kafka's own clients write them:

- gzip: one or more concatenated gzip members (RFC 1952).
- snappy: Java's client writes xerial framing (8-byte magic, two int32 version fields, then
  int32-BE length + raw snappy block, repeated); librdkafka writes one raw snappy block.
  Only the magic is checked: Redpanda writes the version fields little-endian.
- lz4: the LZ4 frame format. Kafka 0.8/0.9 computed the frame header checksum over the frame
  magic too (KAFKA-3160, KIP-57) and Kafka still ignores that byte for magic 0, so for magic 0
  we rewrite it to the correct value before decoding.
- zstd (magic 2 only): Java's zstd-jni writes frames without a content size, possibly several
  back to back.

Bytes after the last complete gzip member, LZ4 frame or zstd frame are an error: no Kafka writer
produces them, and they usually mean the payload is damaged. (Java's GZIPInputStream would skip
trailing bytes that do not start a gzip header, and Kafka's LZ4 reader stops after one frame.)

The libraries doing the work (zlib, cramjam, python-lz4, zstandard) release the GIL while they
decode; the Python here only walks block headers. LZ4 frames as Kafka's clients write them
(independent blocks, no checksums, no content size) are decoded block by block by cramjam into
one buffer; python-lz4 takes every other frame, and any frame the block decoder refuses, so
that its error messages are the ones reported. (The columnar reader decodes snappy, and LZ4
frames of this kind, in its numba kernels, ``kernel_snappy`` and ``kernel_lz4``; a payload they
refuse is decoded again here, for this module's error; gzip, zstd and every other LZ4 frame
it decodes through their C libraries, ``kernel_inflate``, and a payload they refuse comes here
likewise.)

``decompress`` returns ``bytes``. ``decompress_buffer`` is the bulk reader's variant: it may
return a ``pyarrow.Buffer`` from Arrow's memory pool instead, which saves the copy into
``bytes`` and, because the pool keeps freed pages, the page faults of fresh memory, which cost
about as much as the decompression itself for payloads of a few hundred KiB.
"""

from __future__ import annotations

import io
import struct
import zlib
from collections.abc import Callable, Iterator
from enum import IntEnum

import cramjam
import lz4.frame as lz4f
import pyarrow as pa
import zstandard

from ..errors import (
    DecompressionError,
    DecompressionLimitError,
    KafkaFormatError,
    UnsupportedCodecError,
)
from . import layout
from .crc import xxh32

__all__ = [
    "DEFAULT_MAX_BYTES",
    "Codec",
    "codec_of",
    "compress",
    "decompress",
    "decompress_buffer",
    "resolve_codec",
]

BytesLike = bytes | bytearray | memoryview

# Kafka bounds the *compressed* batch (message.max.bytes, ~1 MiB by default) but nothing bounds
# what it inflates to: Java consumers stream records and never hold a whole decompressed batch.
# We do hold it, so we need a bound. Real record data compresses 2-10x (repetitive JSON perhaps
# 50x), so 256 MiB leaves room for batches from topics with max.message.bytes raised well above
# the default, while a decompression bomb stops long before it can exhaust a worker.
DEFAULT_MAX_BYTES = 256 * 1024 * 1024


class Codec(IntEnum):
    """Compression codec ids: bits 0-2 of the attributes of a message or record batch
    (``kafka_enums.ksy``'s compression_codec)."""

    NONE = layout.COMPRESSION_CODEC_NONE
    GZIP = layout.COMPRESSION_CODEC_GZIP
    SNAPPY = layout.COMPRESSION_CODEC_SNAPPY
    LZ4 = layout.COMPRESSION_CODEC_LZ4
    ZSTD = layout.COMPRESSION_CODEC_ZSTD

    @property
    def label(self) -> str:
        """The name Kafka gives it (``CompressionType.name``): ``none``, ``gzip``, ``snappy``,
        ``lz4``, ``zstd``, as kafka-dump-log prints it after ``compresscodec:``."""
        return self.name.lower()


def codec_of(codec: int) -> Codec | int:
    """The :class:`Codec` for an attributes' codec id; the bare id for one Kafka does not
    define (5-7), which reading the batch's records then refuses (:func:`resolve_codec`)."""
    try:
        return Codec(codec)
    except ValueError:
        return codec


def resolve_codec(codec: int, *, magic: int) -> Codec:
    """The Codec for an attribute value, or UnsupportedCodecError where Kafka would refuse it."""
    try:
        resolved = Codec(codec)
    except ValueError:
        raise UnsupportedCodecError(
            f"compression codec id {codec} is not defined by Kafka "
            "(0 none, 1 gzip, 2 snappy, 3 lz4, 4 zstd)"
        ) from None
    if resolved is Codec.ZSTD and magic < 2:
        raise UnsupportedCodecError(
            f"zstd compression needs record batch magic 2, this is magic {magic}"
        )
    return resolved


def decompress(
    codec: int, data: BytesLike, *, magic: int, max_bytes: int = DEFAULT_MAX_BYTES
) -> bytes:
    """Decompress one compressed record payload.

    ``data`` is read in place (no copy). Codec 0 returns the data itself (a bytes copy only if
    it is not bytes already); ``max_bytes`` does not apply to it, as it only guards growth.
    """
    result = _decompress(codec, data, magic, max_bytes, arrow=False)
    return result if isinstance(result, bytes) else result.to_pybytes()


def decompress_buffer(
    codec: int,
    data: BytesLike,
    *,
    magic: int,
    max_bytes: int = DEFAULT_MAX_BYTES,
) -> bytes | pa.Buffer:
    """``decompress``, but snappy's output comes as the ``pyarrow.Buffer`` it was decoded into
    (the other codecs' libraries return bytes of their own)."""
    return _decompress(codec, data, magic, max_bytes, arrow=True)


def _decompress(
    codec: int, data: BytesLike, magic: int, max_bytes: int, *, arrow: bool
) -> bytes | pa.Buffer:
    resolved = resolve_codec(codec, magic=magic)
    if max_bytes < 0:
        raise ValueError(f"max_bytes must be >= 0, got {max_bytes}")
    if resolved is Codec.NONE:
        return data if isinstance(data, bytes) else bytes(data)
    view = _byte_view(data)
    name = resolved.name.lower()
    if not view:
        raise DecompressionError(f"{name}: empty compressed payload")
    out = _Output(name, max_bytes, arrow=arrow)
    try:
        if resolved is Codec.GZIP:
            _gunzip(view, out)
        elif resolved is Codec.SNAPPY:
            _unsnappy(view, out)
        elif resolved is Codec.LZ4:
            _unlz4(view, out, fix_kafka08_checksum=magic == 0)
        else:
            _unzstd(view, out)
    except KafkaFormatError:
        raise
    except (
        zlib.error,
        cramjam.DecompressionError,
        RuntimeError,  # python-lz4 reports every LZ4F error as RuntimeError
        zstandard.ZstdError,
        ValueError,
        OverflowError,
    ) as exc:
        detail = str(exc)
        if not detail.startswith(f"{name}:"):
            detail = f"{name}: {detail}"
        raise DecompressionError(detail) from exc
    return out.result()


def compress(
    codec: int,
    data: BytesLike,
    *,
    magic: int = 2,
    level: int | None = None,
    xerial: bool = True,
    kafka08_checksum: bool = False,
) -> bytes:
    """Compress a record payload the way Kafka's Java client does.

    - snappy: xerial framing with 32 KiB blocks like snappy-java; ``xerial=False`` writes one
      raw snappy block like librdkafka.
    - lz4: one frame with independent 64 KiB blocks and no content size, as Kafka writes it;
      ``kafka08_checksum=True`` writes the header checksum the way Kafka 0.8/0.9 did (over the
      frame magic too), which only magic 0 readers accept.
    - zstd: one frame without a content size, like zstd-jni's stream (level 3 by default).
    """
    resolved = resolve_codec(codec, magic=magic)
    view = _byte_view(data)
    if resolved is Codec.NONE:
        return bytes(view)
    if resolved is Codec.GZIP:
        gz = zlib.compressobj(
            zlib.Z_DEFAULT_COMPRESSION if level is None else level, zlib.DEFLATED, 31
        )
        return gz.compress(view) + gz.flush()
    if resolved is Codec.SNAPPY:
        return _xerial_snappy(view) if xerial else bytes(cramjam.snappy.compress_raw(view))
    if resolved is Codec.LZ4:
        frame = lz4f.compress(
            view,
            compression_level=0 if level is None else level,
            block_size=lz4f.BLOCKSIZE_MAX64KB,
            block_linked=False,
            content_checksum=False,
            store_size=False,
        )
        return _with_kafka08_header_checksum(frame) if kafka08_checksum else frame
    compressor = zstandard.ZstdCompressor(
        level=3 if level is None else level, write_content_size=False, write_checksum=False
    )
    return compressor.compress(view)


class _Output:
    """Decompressed output, the bound it must stay within, and where it is gathered.

    Peak memory stays at the output plus a small constant. Streaming decoders hand it chunks
    of at most a MiB or so: ``arrow`` (the bulk reader's ``decompress_buffer``) keeps them and
    copies them into one ``pyarrow.Buffer`` at the end, letting each go once copied; else the
    result is ``bytes``, gathered in an ``io.BytesIO`` as they come, whose ``getvalue`` hands
    over its buffer without a copy. (Joining a list of chunks held the output twice, and so did
    zlib asked for the whole bound in one call. Chunks stay small because glibc serves blocks
    below its mmap threshold, which rises to the largest block freed, from the heap, where
    growing one copies it.) A decoder that knows its size writes into a buffer of that size
    (:meth:`target`)."""

    __slots__ = ("arrow", "chunks", "codec", "limit", "sink", "size")

    def __init__(self, codec: str, limit: int, *, arrow: bool) -> None:
        self.codec = codec
        self.limit = limit
        self.arrow = arrow
        self.size = 0
        self.chunks: list[bytes | pa.Buffer] = []
        self.sink: io.BytesIO | None = None  # bytes: from the second chunk on

    def room(self) -> int:
        # One byte more than allowed: a decoder that fills it has proved the bound is exceeded.
        return self.limit - self.size + 1

    def reserve(self, declared: int) -> None:
        """Fail before decoding when the format states a size that would not fit."""
        if self.size + declared > self.limit:
            raise self._too_big(f"declares {self.size + declared} bytes, more than")

    def add(self, chunk: bytes | pa.Buffer) -> None:
        if not chunk:
            return
        self.size += len(chunk)
        if self.size > self.limit:
            raise self._too_big("grew past")
        if self.arrow or (self.sink is None and not self.chunks):
            self.chunks.append(chunk)
            return
        if self.sink is None:
            self.sink = io.BytesIO()
            self.sink.write(self.chunks.pop())
        self.sink.write(chunk)

    def target(self, size: int) -> tuple[memoryview, Callable[[int], None]]:
        """A writable buffer of ``size`` bytes (within the bound: ``reserve`` it first), and
        the function to call with how many bytes were written into it, once the view and
        every slice of it are released. Only for a decoder that writes the whole output."""
        if self.arrow:
            buffer = pa.allocate_buffer(size)

            def done_arrow(written: int) -> None:
                self.add(buffer if written == size else buffer.slice(0, written))

            return memoryview(buffer).cast("B"), done_arrow
        sink = io.BytesIO()
        if size:
            sink.seek(size - 1)
            sink.write(b"\0")

        def done_bytes(written: int) -> None:
            sink.truncate(written)
            self.add(sink.getvalue())

        return sink.getbuffer(), done_bytes

    def result(self) -> bytes | pa.Buffer:
        if self.sink is not None:
            return self.sink.getvalue()
        if len(self.chunks) <= 1:
            return self.chunks[0] if self.chunks else b""
        buffer = pa.allocate_buffer(self.size)
        target = memoryview(buffer).cast("B")
        at = 0
        chunks = self.chunks[::-1]
        self.chunks = []
        while chunks:
            chunk = chunks.pop()
            target[at : at + len(chunk)] = chunk
            at += len(chunk)
            del chunk  # gone once copied: the output is held once, plus a chunk
        target.release()
        return buffer

    def _too_big(self, what: str) -> DecompressionLimitError:
        return DecompressionLimitError(
            f"{self.codec}: decompressed payload {what} max_bytes={self.limit}"
        )


def _byte_view(data: BytesLike) -> memoryview:
    view = memoryview(data)
    return view if view.format == "B" and view.ndim == 1 else view.cast("B")


# gzip ---------------------------------------------------------------------------------------

_GZIP_WBITS = 16 + zlib.MAX_WBITS  # gzip header and trailer required, no raw deflate/zlib
_GZIP_FIRST_STEP = 1 << 20  # input given to zlib at once (the whole of most payloads)
_GZIP_NEXT_MEMBER_STEP = 4096  # first input slice for members after the first
_GZIP_MAX_STEP = 1 << 20
# Output one call may produce. zlib gathers a call's output in blocks and copies them into
# one bytes object at its end: with the whole bound as max_length, a bomb held twice the bound.
_GZIP_OUT_STEP = 1 << 20


def _gunzip(view: memoryview, out: _Output) -> None:
    n = len(view)
    pos = 0
    # Input goes in slices of at most a MiB: when a call stops at _GZIP_OUT_STEP, zlib copies
    # the input it has not read into unconsumed_tail, and that copy must stay small. The
    # first member's first slice is the whole of most payloads, which then decode in one call
    # without copies. Later members get growing slices from 4 KiB, because zlib copies
    # whatever follows a member into unused_data, and many tiny members must not make that
    # quadratic.
    step = _GZIP_FIRST_STEP
    while pos < n:
        member_start = pos
        inflater = zlib.decompressobj(_GZIP_WBITS)
        while not inflater.eof:
            if inflater.unconsumed_tail:
                chunk_in = inflater.unconsumed_tail
            elif pos < n:
                chunk_in = view[pos : pos + step]
                pos += len(chunk_in)
                step = min(step * 2, _GZIP_MAX_STEP)
            else:
                chunk_in = b""
            chunk_out = inflater.decompress(chunk_in, min(out.room(), _GZIP_OUT_STEP))
            out.add(chunk_out)
            if not chunk_in and not chunk_out:
                raise DecompressionError(
                    f"gzip: member at byte {member_start} is truncated at byte {n}"
                )
        pos -= len(inflater.unused_data)
        step = _GZIP_NEXT_MEMBER_STEP


# snappy -------------------------------------------------------------------------------------

XERIAL_MAGIC = b"\x82SNAPPY\x00"
XERIAL_HEADER_SIZE = 16  # magic(8) + version(4) + compatible version(4)
_XERIAL_BLOCK_SIZE = 32 * 1024  # snappy-java's default, which Kafka uses
_I32 = struct.Struct(">i")


SNAPPY_MAX_EXPANSION = 22


def _unsnappy(view: memoryview, out: _Output) -> None:
    framed = view[: len(XERIAL_MAGIC)] == XERIAL_MAGIC
    # Each raw block states its uncompressed length first: sum them and check the bound before
    # decompressing anything, then decompress straight into one buffer of exactly that size.
    blocks = []
    sizes = []
    total = 0
    for block in _xerial_blocks(view) if framed else (view,):
        blocks.append(block)
        if not block:
            raise DecompressionError("snappy: empty raw snappy block")
        size = cramjam.snappy.decompress_raw_len(block)
        total += size
        out.reserve(total)
        # No snappy element expands more than a 3-byte copy of 64 bytes does, so a block
        # cannot hold more than ~21.4 times its size: refuse a lying preamble before
        # allocating what it claims.
        if size > SNAPPY_MAX_EXPANSION * len(block) + 32:
            raise DecompressionError(
                f"snappy: block of {len(block)} bytes declares {size} uncompressed bytes, "
                "more than snappy can encode in it"
            )
        sizes.append(size)
    target, done = out.target(total)
    at = 0
    try:
        for block, size in zip(blocks, sizes, strict=True):
            written = cramjam.snappy.decompress_raw_into(block, target[at : at + size])
            if written != size:
                raise DecompressionError(
                    f"snappy: block states {size} uncompressed bytes but holds {written}"
                )
            at += size
    finally:
        target.release()
    done(at)


def _xerial_blocks(view: memoryview) -> Iterator[memoryview]:
    n = len(view)
    if n < XERIAL_HEADER_SIZE:
        raise DecompressionError(f"snappy: xerial header truncated ({n} of 16 bytes)")
    pos = XERIAL_HEADER_SIZE
    while pos < n:
        if n - pos < 4:
            raise DecompressionError(f"snappy: xerial block length truncated at byte {pos}")
        (length,) = _I32.unpack_from(view, pos)
        if length < 0 or length > n - pos - 4:
            raise DecompressionError(
                f"snappy: xerial block at byte {pos} declares {length} bytes, {n - pos - 4} remain"
            )
        yield view[pos + 4 : pos + 4 + length]
        pos += 4 + length


def _xerial_snappy(view: memoryview) -> bytes:
    parts = [XERIAL_MAGIC, struct.pack(">ii", 1, 1)]
    for start in range(0, len(view), _XERIAL_BLOCK_SIZE):
        block = bytes(cramjam.snappy.compress_raw(view[start : start + _XERIAL_BLOCK_SIZE]))
        parts += (_I32.pack(len(block)), block)
    return b"".join(parts)


# lz4 ----------------------------------------------------------------------------------------

LZ4_FRAME_MAGIC = b"\x04\x22\x4d\x18"
_LZ4_FLG_CONTENT_SIZE = 0x08
_LZ4_FLG_DICT_ID = 0x01
# python-lz4 allocates max_length up front on every call, so ask for bounded chunks, growing.
_LZ4_MIN_CHUNK = 64 * 1024
_LZ4_MAX_CHUNK = 1024 * 1024  # see _Output


def _unlz4(view: memoryview, out: _Output, *, fix_kafka08_checksum: bool) -> None:
    if _unlz4_blocks(view, out, kafka08=fix_kafka08_checksum):
        return
    _unlz4_stream(view, out, fix_kafka08_checksum=fix_kafka08_checksum)


# FLG bits the block decoder handles itself: version 01 and independent blocks. Anything else
# (linked blocks, checksums, a content size, a dictionary, reserved bits) goes to python-lz4.
LZ4_FLG_PLAIN = 0x60
LZ4_BLOCK_MAX = {4: 64 * 1024, 5: 256 * 1024, 6: 1024 * 1024, 7: 4 * 1024 * 1024}
LZ4_UNCOMPRESSED = 0x80000000
LZ4_MAX_EXPANSION = 255  # no LZ4 sequence yields more than 255 bytes a byte of input
_U32LE = struct.Struct("<I")


def _unlz4_blocks(view: memoryview, out: _Output, *, kafka08: bool) -> bool:
    """Frames as Kafka's clients write them (independent blocks, no checksums, no content size)
    decoded block by block straight into one buffer from Arrow's pool: python-lz4 decodes into
    memory of its own and copies that into ``bytes`` while it holds the GIL. False, having
    written nothing, for any frame it does not handle or cannot decode, so that python-lz4
    decides, with its own error message."""
    n = len(view)
    blocks = []  # (position, compressed length, capacity, stored uncompressed)
    capacity = 0
    pos = 0
    while pos < n:
        if n - pos < 7 or view[pos : pos + 4] != LZ4_FRAME_MAGIC or view[pos + 4] != LZ4_FLG_PLAIN:
            return False
        block_max = LZ4_BLOCK_MAX.get(view[pos + 5] >> 4)
        if block_max is None or view[pos + 5] & 0x8F:
            return False
        # Kafka ignores the header checksum of magic 0 (Kafka 0.8 computed it wrongly).
        if not kafka08 and view[pos + 6] != lz4_header_checksum(bytes(view[pos + 4 : pos + 6])):
            return False
        pos += 7
        while True:
            if n - pos < 4:
                return False
            (size,) = _U32LE.unpack_from(view, pos)
            pos += 4
            if size == 0:  # end mark
                break
            stored = bool(size & LZ4_UNCOMPRESSED)
            size &= ~LZ4_UNCOMPRESSED
            if size > block_max or size > n - pos:
                return False
            cap = size if stored else min(block_max, LZ4_MAX_EXPANSION * size)
            blocks.append((pos, size, cap, stored))
            capacity += cap
            pos += size
    if capacity >= out.room():
        return False  # the streaming decoder enforces the bound byte by byte
    target, done = out.target(capacity)
    at = 0
    try:
        for start, size, cap, stored in blocks:
            if stored:
                target[at : at + size] = view[start : start + size]
                at += size
            else:
                at += cramjam.lz4.decompress_block_into(
                    view[start : start + size], target[at : at + cap]
                )
    except cramjam.DecompressionError:
        return False
    finally:
        target.release()
    done(at)
    return True


def lz4_header_checksum(descriptor: bytes) -> int:
    """HC = (xxh32(FLG, BD) >> 8) & 0xFF: a producer writes the same two bytes every time."""
    hc = _lz4_header_checksums.get(descriptor)
    if hc is None:
        hc = _lz4_header_checksums[descriptor] = (xxh32(descriptor) >> 8) & 0xFF
    return hc


_lz4_header_checksums: dict[bytes, int] = {}  # four at most: FLG is fixed, BD one of four


def _unlz4_stream(view: memoryview, out: _Output, *, fix_kafka08_checksum: bool) -> None:
    n = len(view)
    context = lz4f.create_decompression_context()
    pos = 0
    chunk = min(max(4 * n, _LZ4_MIN_CHUNK), _LZ4_MAX_CHUNK)
    while pos < n:  # one LZ4 frame per pass; Kafka writes one, the format allows several
        frame_start = pos
        if fix_kafka08_checksum:
            header = _lz4_header_with_checksum(view, pos, kafka08=False)
            if header is not None:
                _, read, _ = lz4f.decompress_chunk(context, header, max_length=1)
                if read != len(header):
                    raise DecompressionError(f"lz4: frame header at byte {pos} not accepted")
                pos += read
        while True:
            # decompress_chunk (unlike LZ4FrameDecompressor) reads the memoryview in place and
            # tells how much input it consumed, so nothing is copied per call.
            chunk_out, read, frame_end = lz4f.decompress_chunk(
                context, view[pos:], max_length=min(out.room(), chunk)
            )
            pos += read
            out.add(chunk_out)
            if frame_end:
                break
            if not read and not chunk_out:
                raise DecompressionError(f"lz4: frame at byte {frame_start} truncated at byte {n}")
            chunk = min(chunk * 2, _LZ4_MAX_CHUNK)


def _lz4_header_with_checksum(view: memoryview, pos: int, *, kafka08: bool) -> bytes | None:
    """The frame header at ``pos`` with its checksum byte recomputed, or None if there is none.

    LZ4 frame spec: HC = (xxh32(descriptor, seed 0) >> 8) & 0xFF, where the descriptor runs
    from FLG to just before HC. Kafka 0.8/0.9 hashed the 4 magic bytes as well.
    """
    n = len(view)
    if view[pos : pos + 4] != LZ4_FRAME_MAGIC or n - pos < 7:
        return None
    flg = view[pos + 4]
    checksum_at = pos + 6
    if flg & _LZ4_FLG_CONTENT_SIZE:
        checksum_at += 8
    if flg & _LZ4_FLG_DICT_ID:
        checksum_at += 4
    if checksum_at >= n:
        return None
    descriptor = bytes(view[pos:checksum_at])
    # A producer writes the same header on every batch: hash each kind once, as xxh32 here is
    # pure Python.
    fixed = _lz4_fixed_headers.get((descriptor, kafka08))
    if fixed is None:
        hashed = descriptor if kafka08 else descriptor[4:]
        fixed = descriptor + bytes(((xxh32(hashed) >> 8) & 0xFF,))
        if len(_lz4_fixed_headers) < _LZ4_HEADER_CACHE:
            _lz4_fixed_headers[descriptor, kafka08] = fixed
    return fixed


_LZ4_HEADER_CACHE = 256
_lz4_fixed_headers: dict[tuple[bytes, bool], bytes] = {}


def _with_kafka08_header_checksum(frame: bytes) -> bytes:
    header = _lz4_header_with_checksum(memoryview(frame), 0, kafka08=True)
    assert header is not None  # python-lz4 always writes a complete header
    return header + frame[len(header) :]


# zstd ---------------------------------------------------------------------------------------

_ZSTD_MAGIC = 0xFD2FB528
_ZSTD_SKIPPABLE_MASK = 0xFFFFFFF0
_ZSTD_SKIPPABLE_MAGIC = 0x184D2A50
_ZSTD_BLOCK_MAX = 128 * 1024  # no block decodes to more (RFC 8878, Block_Maximum_Size)
_ZSTD_FEED_BUDGET = 1024 * 1024  # most output one decompress() call may produce (_Output)
_ZSTD_BLOCK_RLE = 1
_ZSTD_BLOCK_COMPRESSED = 2
_ZSTD_BLOCK_RESERVED = 3


def _unzstd(view: memoryview, out: _Output) -> None:
    # zstandard's one-shot decompress() needs the content size in the frame header and its
    # stream_reader silently stops at a truncated frame, so we walk the frame and block headers
    # ourselves (cheap: one per 128 KiB at least) and feed a decompressobj whole blocks, so that
    # each call's output is bounded by the blocks fed, and truncation is always seen.
    decompressor = zstandard.ZstdDecompressor()
    n = len(view)
    pos = 0
    while pos < n:
        if n - pos < 4:
            raise DecompressionError(f"zstd: {n - pos} stray bytes at byte {pos}")
        (magic,) = struct.unpack_from("<I", view, pos)
        if magic & _ZSTD_SKIPPABLE_MASK == _ZSTD_SKIPPABLE_MAGIC:
            if n - pos < 8:
                raise DecompressionError(f"zstd: skippable frame at byte {pos} truncated")
            (size,) = struct.unpack_from("<I", view, pos + 4)
            pos += 8 + size
            if pos > n:
                raise DecompressionError("zstd: skippable frame runs past the end")
            continue
        if magic != _ZSTD_MAGIC:
            raise DecompressionError(f"zstd: no frame magic at byte {pos} (0x{magic:08x})")
        pos = _unzstd_frame(view, pos, decompressor, out)


def _unzstd_frame(
    view: memoryview, start: int, decompressor: zstandard.ZstdDecompressor, out: _Output
) -> int:
    """Decode the frame at ``start``; return the position just after it."""
    n = len(view)
    if n - start < 6:
        raise DecompressionError(f"zstd: frame header at byte {start} truncated")
    descriptor = view[start + 4]
    fcs_flag = descriptor >> 6
    single_segment = (descriptor >> 5) & 1
    has_checksum = (descriptor >> 2) & 1
    dict_id_size = (0, 1, 2, 4)[descriptor & 3]
    fcs_size = (single_segment, 2, 4, 8)[fcs_flag]
    header_end = start + 5 + (0 if single_segment else 1) + dict_id_size + fcs_size
    if header_end > n:
        raise DecompressionError(f"zstd: frame header at byte {start} truncated")
    if fcs_size:
        content_size = int.from_bytes(view[header_end - fcs_size : header_end], "little")
        out.reserve(content_size + (256 if fcs_size == 2 else 0))

    stream = decompressor.decompressobj()
    fed = start  # input up to here has been given to the decoder
    pending = 0  # most output the blocks not yet fed can produce
    pos = header_end
    while True:
        if n - pos < 3:
            raise DecompressionError(f"zstd: block header truncated at byte {pos}")
        block_header = int.from_bytes(view[pos : pos + 3], "little")
        last = block_header & 1
        block_type = (block_header >> 1) & 3
        block_size = block_header >> 3
        if block_type == _ZSTD_BLOCK_RESERVED:
            raise DecompressionError(f"zstd: reserved block type at byte {pos}")
        if block_size > _ZSTD_BLOCK_MAX:
            raise DecompressionError(f"zstd: block at byte {pos} larger than 128 KiB")
        pos += 3 + (1 if block_type == _ZSTD_BLOCK_RLE else block_size)
        if last and has_checksum:
            pos += 4
        if pos > n:
            raise DecompressionError(f"zstd: frame at byte {start} truncated")
        pending += _ZSTD_BLOCK_MAX if block_type == _ZSTD_BLOCK_COMPRESSED else block_size
        if last or pending >= min(out.room(), _ZSTD_FEED_BUDGET):
            out.add(stream.decompress(view[fed:pos]))
            fed = pos
            pending = 0
        if last:
            break
    if not stream.eof or stream.unused_data:
        raise DecompressionError(f"zstd: frame at byte {start} does not end after its last block")
    return pos
