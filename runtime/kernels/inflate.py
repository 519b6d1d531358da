"""gzip, zstd and the LZ4 frames the block decoder does not take, decompressed by their own C
libraries from one numba call a chunk: no Python step per batch.

Most batches in real logs hold a record or a few (a producer with ``linger.ms=0``), and there
a Python call per batch (a CRC, a buffer, the library's wrapper) cost five to twenty times
the decompression itself. Here :func:`inflate` walks a chunk's compressed payloads, whose
CRCs and bounds ``kernel_payloads.payload_spans`` checked, and decodes each one straight into
an arena, without the GIL, by the function the library exports:

- gzip (members back to back, RFC 1952): ``libdeflate_gzip_decompress_ex``, which checks each
  member's CRC-32 and ISIZE as zlib does. A member with a header CRC (FHCRC, which libdeflate
  does not check and zlib does) or reserved flags is left to zlib.
- zstd (frames, skippable frames): ``ZSTD_decompressDCtx``, content size or not.
- LZ4 frames with a content size, checksums or linked blocks (python-lz4's and librdkafka's
  defaults): ``LZ4F_decompress``, the function python-lz4 itself calls. Plain frames (Kafka's
  Java framing) are decoded inside the record decoder by ``kernel_lz4``; magic 0 frames, with
  Kafka 0.8's header checksum, take the Python path.

Each library is looked for where a Python package ships it (``deflate``, ``backports.zstd``,
``lz4``), then on the system, and used only if it decodes a payload the Python libraries
wrote. Where one is missing its slot in :data:`FUNCTIONS` is 0, and that codec takes the Python
path (``codecs.decompress_buffer``), as does any payload a library refuses or that would pass
``max_bytes``: that path raises the reference's errors, so a payload decodes here only where
it decodes there, to the same bytes.

The function addresses are arguments, never globals: numba would freeze a global's value
into its on-disk cache, and a library's address differs from one process to the next.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import importlib
import zlib

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.extending import intrinsic

from ..format import layout

# numba's cache checks only this file: see the note in fastscan.py.
from .addresses import address_of, le32, u8

__all__ = ["FUNCTIONS", "NO_ROOM", "Contexts", "available", "inflate"]

# Slots of FUNCTIONS.
(
    DEFLATE_ALLOC,
    DEFLATE_GZIP,
    DEFLATE_FREE,
    ZSTD_CREATE,
    ZSTD_DECOMPRESS,
    ZSTD_FREE,
    LZ4F_CREATE,
    LZ4F_DECOMPRESS,
    LZ4F_RESET,
    LZ4F_FREE,
) = range(10)

#: What a payload decoder returns when its output does not fit the room it was given.
NO_ROOM = -2
_FAIL = -1

_LIBDEFLATE_INSUFFICIENT_SPACE = 3
_ZSTD_ERROR_MAX = 120  # ZSTD_isError: a size_t above -120
_ZSTD_DST_TOO_SMALL = -70  # ZSTD_error_dstSize_tooSmall
_LZ4F_VERSION = 100
# zstd frames (RFC 8878): magics, the header fields' sizes by their flags, the RLE block type,
# and the largest window zstd's streaming decoder takes by default (ZSTD_MAXWINDOWSIZE_DEFAULT,
# 2^27 + 1), which the Python path's decompressobj enforces.
_ZSTD_MAGIC = 0xFD2FB528
_ZSTD_SKIPPABLE_MASK = 0xFFFFFFF0
_ZSTD_SKIPPABLE_MAGIC = 0x184D2A50
_ZSTD_DICT_ID_SIZE = np.array([0, 1, 2, 4], np.int64)
_ZSTD_FCS_SIZE = np.array([0, 2, 4, 8], np.int64)
_ZSTD_RLE = 1
_ZSTD_WINDOW_MAX = (1 << 27) + 1
# gzip: ID1 ID2 CM (RFC 1952), the least a member takes, and the FLG bits zlib alone handles:
# FHCRC (zlib checks the header CRC, libdeflate skips it) and the reserved bits.
_GZIP_MIN = 18
_GZIP_REFUSED_FLAGS = 0x02 | 0xE0


def _sample() -> bytes:
    return b'{"id":1,"user":"u000001","event":"click"} ' * 40


def _libraries(modules: tuple[str, ...], system: str) -> list[str]:
    """Shared objects that may export a library's functions: those of the Python packages
    named (which bundle the library), then the system's."""
    paths = []
    for name in modules:
        try:
            paths.append(importlib.import_module(name).__file__)
        except ImportError:
            continue
    found = ctypes.util.find_library(system)
    if found:
        paths.append(found)
    return [p for p in paths if p]


def _address(fn) -> int:
    return ctypes.cast(fn, ctypes.c_void_p).value or 0


def _function(lib, name: str, restype, *argtypes):
    fn = getattr(lib, name)
    fn.restype = restype
    fn.argtypes = list(argtypes)
    return fn


def _first(modules: tuple[str, ...], system: str, probe, slots: int) -> tuple[int, ...]:
    """The function addresses ``probe`` gives for the first shared object that exports the
    library's functions and decodes its sample with them (``probe`` returns None when it does
    not); ``slots`` zeros when none does."""
    for path in _libraries(modules, system):
        try:
            found = probe(ctypes.CDLL(path))
        except (OSError, AttributeError):
            continue
        if found:
            return found
    return (0,) * slots


_P, _SIZE = ctypes.c_void_p, ctypes.c_size_t
_BYTES = ctypes.c_char_p


def _find_libdeflate() -> tuple[int, ...]:
    data = _sample()
    gz = zlib.compressobj(6, zlib.DEFLATED, 31)
    member = gz.compress(data) + gz.flush()

    def probe(lib):
        alloc = _function(lib, "libdeflate_alloc_decompressor", _P)
        gunzip = _function(
            lib,
            "libdeflate_gzip_decompress_ex",
            ctypes.c_int,
            _P,
            _BYTES,
            _SIZE,
            _BYTES,
            _SIZE,
            _P,
            _P,
        )
        free = _function(lib, "libdeflate_free_decompressor", None, _P)
        handle = alloc()
        if not handle:
            return None
        out = ctypes.create_string_buffer(len(data))
        used_in, used_out = _SIZE(0), _SIZE(0)
        result = gunzip(
            handle,
            member,
            len(member),
            out,
            len(data),
            ctypes.byref(used_in),
            ctypes.byref(used_out),
        )
        free(handle)
        if result == 0 and used_out.value == len(data) and out.raw == data:
            return _address(alloc), _address(gunzip), _address(free)
        return None

    return _first(("deflate._deflate",), "deflate", probe, 3)


def _find_zstd() -> tuple[int, ...]:
    import zstandard

    data = _sample()
    frame = zstandard.ZstdCompressor(write_content_size=False).compress(data)

    def probe(lib):
        create = _function(lib, "ZSTD_createDCtx", _P)
        decompress = _function(lib, "ZSTD_decompressDCtx", _SIZE, _P, _BYTES, _SIZE, _BYTES, _SIZE)
        free = _function(lib, "ZSTD_freeDCtx", _SIZE, _P)
        context = create()
        if not context:
            return None
        out = ctypes.create_string_buffer(len(data))
        written = decompress(context, out, len(data), frame, len(frame))
        free(context)
        if written == len(data) and out.raw == data:
            return _address(create), _address(decompress), _address(free)
        return None

    modules = ("backports.zstd._zstd", "compression.zstd._zstd", "_zstd")
    return _first(modules, "zstd", probe, 3)


def _find_lz4f() -> tuple[int, ...]:
    import lz4.frame

    data = _sample()
    frame = lz4.frame.compress(data, store_size=True, content_checksum=True, block_linked=True)

    def probe(lib):
        create = _function(lib, "LZ4F_createDecompressionContext", _SIZE, _P, ctypes.c_uint)
        decompress = _function(lib, "LZ4F_decompress", _SIZE, _P, _BYTES, _P, _BYTES, _P, _P)
        reset = _function(lib, "LZ4F_resetDecompressionContext", None, _P)
        free = _function(lib, "LZ4F_freeDecompressionContext", _SIZE, _P)
        context = _P(0)
        if create(ctypes.byref(context), _LZ4F_VERSION) != 0 or not context.value:
            return None
        out = ctypes.create_string_buffer(len(data))
        out_size, in_size = _SIZE(len(data)), _SIZE(len(frame))
        hint = decompress(context, out, ctypes.byref(out_size), frame, ctypes.byref(in_size), None)
        free(context)
        if hint == 0 and out_size.value == len(data) and out.raw == data:
            return _address(create), _address(decompress), _address(reset), _address(free)
        return None

    return _first(("lz4.frame._frame",), "lz4", probe, 4)


def _find_all() -> np.ndarray:
    table = np.zeros(10, np.int64)
    table[DEFLATE_ALLOC : DEFLATE_FREE + 1] = _find_libdeflate()
    table[ZSTD_CREATE : ZSTD_FREE + 1] = _find_zstd()
    table[LZ4F_CREATE : LZ4F_FREE + 1] = _find_lz4f()
    return table


#: The libraries' function addresses, by slot; 0 where none was found.
FUNCTIONS: np.ndarray = _find_all()


def available(codec: int) -> bool:
    """Whether :func:`inflate` decodes ``codec`` in this process."""
    slot = {
        layout.COMPRESSION_CODEC_GZIP: DEFLATE_GZIP,
        layout.COMPRESSION_CODEC_ZSTD: ZSTD_DECOMPRESS,
        layout.COMPRESSION_CODEC_LZ4: LZ4F_DECOMPRESS,
    }.get(codec)
    return slot is not None and bool(FUNCTIONS[slot])


def _caller(bits: int):
    """An intrinsic ``call(fn, (a, b, ...))``: the C function at address ``fn`` called with
    the tuple's integers (addresses, sizes) as pointer-sized arguments; its result, of
    ``bits`` bits, sign-extended to int64. A function returning nothing is called the same
    way: its result is never read."""

    def call(typingctx, fn, args):
        if not isinstance(args, types.BaseTuple):
            return None

        def codegen(context, builder, signature, llargs):
            i64 = ir.IntType(64)
            fnty = ir.FunctionType(ir.IntType(bits), [i64] * len(args))
            callee = builder.inttoptr(llargs[0], fnty.as_pointer())
            values = [
                context.cast(builder, builder.extract_value(llargs[1], i), kind, types.int64)
                for i, kind in enumerate(args)
            ]
            result = builder.call(callee, values)
            return result if bits == 64 else builder.sext(result, i64)

        return types.int64(fn, args), codegen

    return intrinsic(call)


_call = _caller(64)
_call32 = _caller(32)

_inline = njit(cache=True, inline="always")


@_inline
def _gunzip(fns, decompressor, buf, start, end, dst, room, slots):
    """The gzip members at ``buf + start:end`` into ``dst``: bytes written, NO_ROOM or _FAIL."""
    out = address_of(slots)
    p = start
    total = np.int64(0)
    while p < end:
        if (
            end - p < _GZIP_MIN
            or u8(buf + p) != 0x1F
            or u8(buf + p + 1) != 0x8B
            or u8(buf + p + 2) != 8
            or u8(buf + p + 3) & _GZIP_REFUSED_FLAGS
        ):
            return _FAIL
        result = _call32(
            fns[DEFLATE_GZIP],
            (decompressor, buf + p, end - p, dst + total, room - total, out, out + 8),
        )
        if result == _LIBDEFLATE_INSUFFICIENT_SPACE:
            return NO_ROOM
        if result != 0 or slots[0] <= 0:
            return _FAIL
        p += slots[0]
        total += slots[1]
    return total


@_inline
def _zstd_windows_fit(buf, start, end):
    """Whether every zstd frame at ``buf + start:end`` asks for a window the Python path's
    streaming decoder accepts: one-shot decoding ignores the limit (its output is all in
    memory), zstandard's decompressobj refuses a frame above it ("Frame requires too much
    memory for decoding"). False too where the walk runs off the end: let the Python path
    say what is wrong."""
    p = start
    while p < end:
        if end - p < 8:  # no frame is shorter
            return False
        magic = le32(buf + p)
        if magic & _ZSTD_SKIPPABLE_MASK == _ZSTD_SKIPPABLE_MAGIC:
            p += 8 + le32(buf + p + 4)
            continue
        if magic != _ZSTD_MAGIC:
            return False
        descriptor = u8(buf + p + 4)
        single = (descriptor >> 5) & 1
        dict_size = _ZSTD_DICT_ID_SIZE[descriptor & 3]
        fcs_flag = descriptor >> 6
        fcs_size = _ZSTD_FCS_SIZE[fcs_flag] if fcs_flag else single
        q = p + 5 + (1 - single) + dict_size
        if q + fcs_size > end:
            return False
        if single:
            window = np.int64(0)
            for i in range(fcs_size):
                window |= u8(buf + q + i) << (8 * i)
            if fcs_size == 2:
                window += 256
        else:
            descriptor_w = u8(buf + p + 5)
            log = 10 + (descriptor_w >> 3)
            window = (np.int64(1) << log) + ((np.int64(1) << log) >> 3) * (descriptor_w & 7)
        if window > _ZSTD_WINDOW_MAX:
            return False
        checksum = (descriptor >> 2) & 1
        p = q + fcs_size
        while True:
            if end - p < 3:
                return False
            header = u8(buf + p) | (u8(buf + p + 1) << 8) | (u8(buf + p + 2) << 16)
            p += 3 + (1 if (header >> 1) & 3 == _ZSTD_RLE else header >> 3)
            if header & 1:
                p += 4 * checksum
                break
    return p == end


@_inline
def _unzstd(fns, context, buf, start, end, dst, room):
    """The zstd frames at ``buf + start:end`` into ``dst``: bytes written, NO_ROOM or _FAIL."""
    if not _zstd_windows_fit(buf, start, end):
        return _FAIL
    written = _call(fns[ZSTD_DECOMPRESS], (context, dst, room, buf + start, end - start))
    if written == _ZSTD_DST_TOO_SMALL:
        return NO_ROOM
    if -_ZSTD_ERROR_MAX <= written < 0:
        return _FAIL
    return written


@_inline
def _unlz4f(fns, context, buf, start, end, dst, room, slots):
    """The LZ4 frames at ``buf + start:end`` into ``dst``: bytes written, NO_ROOM or _FAIL.
    The context is reset after a payload that stopped inside a frame."""
    sizes = address_of(slots)
    p = start
    total = np.int64(0)
    hint = np.int64(0)
    while p < end:
        slots[0] = room - total  # in: room; out: bytes written
        slots[1] = end - p  # in: input; out: bytes read
        hint = _call(fns[LZ4F_DECOMPRESS], (context, dst + total, sizes, buf + p, sizes + 8, 0))
        if hint < 0:  # LZ4F_isError: a size_t within the error codes
            _call(fns[LZ4F_RESET], (context,))
            return _FAIL
        p += slots[1]
        total += slots[0]
        if hint != 0 and total == room:
            _call(fns[LZ4F_RESET], (context,))
            return NO_ROOM
        if hint != 0 and slots[0] == 0 and slots[1] == 0:
            break
    if hint != 0:  # the input ended inside a frame
        _call(fns[LZ4F_RESET], (context,))
        return _FAIL
    return total


class Contexts:
    """One thread's decompression contexts (libdeflate's decompressor, zstd's and LZ4F's
    contexts), made by :func:`inflate` at their first use and kept for the thread's later
    calls: making them costs more than decoding a small batch. Freed with this object."""

    __slots__ = ("slots",)

    def __init__(self) -> None:
        self.slots = np.zeros(3, np.int64)

    def __del__(self) -> None:
        functions = FUNCTIONS
        if functions is None:  # the interpreter is shutting down: the process frees them
            return
        for slot, free in enumerate((DEFLATE_FREE, ZSTD_FREE, LZ4F_FREE)):
            handle = int(self.slots[slot])
            if handle and functions[free]:
                ctypes.CFUNCTYPE(None, ctypes.c_void_p)(int(functions[free]))(handle)
                self.slots[slot] = 0


_GZIP_CONTEXT, _ZSTD_CONTEXT, _LZ4_CONTEXT = range(3)


@njit(cache=True, nogil=True)
def inflate(fns, contexts, buf, spans, codecs, arena, first, max_bytes, out):
    """Decode the payloads ``buf + spans[k, 0]:spans[k, 1]`` (``codecs[k]``), for k from
    ``first``, one after another into ``arena``, with the calling thread's ``contexts``
    (:class:`Contexts`' slots, filled here at their first use). ``out[k]`` = (arena address,
    start, end) in the arena, or start -1 for a payload the Python path must take (no span, a
    codec without its library, a payload its library refuses or whose output passes
    ``max_bytes``, the most a payload may take here).

    Returns where it stopped, ``spans.shape[0]`` or the first payload that did not fit the
    arena's room left but might fit a larger arena (then call again from there with one), and
    the bytes of the arena it used.
    """
    n = spans.shape[0]
    slots = np.zeros(2, np.int64)
    base = address_of(arena)
    size = arena.shape[0]
    at = np.int64(0)
    k = first
    while k < n:
        out[k, 0] = base
        out[k, 1] = -1
        out[k, 2] = -1
        start = spans[k, 0]
        end = spans[k, 1]
        codec = codecs[k]
        room = min(size - at, max_bytes)
        written = np.int64(_FAIL)
        if start < 0 or end <= start:
            written = _FAIL
        elif codec == layout.COMPRESSION_CODEC_GZIP and fns[DEFLATE_GZIP] != 0:
            if contexts[_GZIP_CONTEXT] == 0:
                contexts[_GZIP_CONTEXT] = _call(fns[DEFLATE_ALLOC], ())
            if contexts[_GZIP_CONTEXT] != 0:
                written = _gunzip(
                    fns, contexts[_GZIP_CONTEXT], buf, start, end, base + at, room, slots
                )
        elif codec == layout.COMPRESSION_CODEC_ZSTD and fns[ZSTD_DECOMPRESS] != 0:
            if contexts[_ZSTD_CONTEXT] == 0:
                contexts[_ZSTD_CONTEXT] = _call(fns[ZSTD_CREATE], ())
            if contexts[_ZSTD_CONTEXT] != 0:
                written = _unzstd(fns, contexts[_ZSTD_CONTEXT], buf, start, end, base + at, room)
        elif codec == layout.COMPRESSION_CODEC_LZ4 and fns[LZ4F_DECOMPRESS] != 0:
            if contexts[_LZ4_CONTEXT] == 0:
                slots[0] = 0
                if _call(fns[LZ4F_CREATE], (address_of(slots), _LZ4F_VERSION)) == 0:
                    contexts[_LZ4_CONTEXT] = slots[0]
            if contexts[_LZ4_CONTEXT] != 0:
                written = _unlz4f(
                    fns, contexts[_LZ4_CONTEXT], buf, start, end, base + at, room, slots
                )
        if written == NO_ROOM and size - at < max_bytes:
            break  # a larger arena may hold it
        if written >= 0:
            out[k, 1] = at
            out[k, 2] = at + written
            at += written
        k += 1
    return k, at
