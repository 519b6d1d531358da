"""LZ4 frames as Kafka's clients write them, decoded inside the numba kernels.

A v0/v1 wrapper or a v2 batch compressed with LZ4 is planned by ``kernel_payloads`` (CRC,
bounds, :func:`frame_capacity`) and decompressed by :func:`decode_frames` inside
``fastscan.decode_sections``, into a scratch buffer that stays in the cache while its records
are decoded from it.

The blocks are decoded by ``LZ4_decompress_safe``, the LZ4 library's own function, called by
address: python-lz4's extension exports the library it bundles; the system's ``liblz4`` is the
second choice, each used only if it decodes a block python-lz4 wrote. Without either,
:data:`LZ4_DECOMPRESS` is 0 and LZ4 wrappers and batches take the Python path.

Only the plain frame is handled: FLG 0x60 (version 01, independent blocks, no checksums, no
content size, no dictionary), block sizes up to 4 MiB, as ``codecs._unlz4_blocks`` takes it.
Anything else, and any wrapper or batch whose CRC, bounds or decompressed size bound fails, is
left to the Python path (``columnar._prepare_wrapper``, ``_prepare_v2``), which raises the
reference's errors.

Frame layout (https://github.com/lz4/lz4/blob/dev/doc/lz4_Frame_format.md)::

    magic 04 22 4D 18 | FLG | BD | HC | blocks... | end mark 00 00 00 00
    block: uint32 LE size (high bit: stored uncompressed) | size bytes
"""

from __future__ import annotations

import ctypes
import ctypes.util

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.extending import intrinsic

from ..format import codecs

# numba's cache checks only this file: see the note in fastscan.py.
from .addresses import memcpy, u8

__all__ = ["LZ4_DECOMPRESS", "decode_frames", "frame_capacity"]

_jit = njit(cache=True)


def _find_decompress() -> int:
    """The first ``LZ4_decompress_safe`` that decodes a block python-lz4 wrote, or 0."""
    import lz4.block
    import lz4.block._block as bundled

    sample = b"kafka-format " * 20
    block = lz4.block.compress(sample, store_size=False)
    for path in (bundled.__file__, ctypes.util.find_library("lz4")):
        if not path:
            continue
        try:
            fn = ctypes.CDLL(path).LZ4_decompress_safe
        except (OSError, AttributeError):
            continue
        fn.restype = ctypes.c_int
        fn.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_int, ctypes.c_int]
        out = ctypes.create_string_buffer(len(sample))
        if fn(block, out, len(block), len(sample)) == len(sample) and out.raw == sample:
            return ctypes.cast(fn, ctypes.c_void_p).value or 0
    return 0


#: Address of ``int LZ4_decompress_safe(const char*, char*, int, int)``, or 0.
LZ4_DECOMPRESS: int = _find_decompress()

_MAGIC = int.from_bytes(codecs.LZ4_FRAME_MAGIC, "little")
_FLG_PLAIN = codecs.LZ4_FLG_PLAIN
_UNCOMPRESSED = codecs.LZ4_UNCOMPRESSED
_MAX_EXPANSION = codecs.LZ4_MAX_EXPANSION
# Per BD >> 4: the block maximum (0: not a valid BD) and the header checksum of (FLG, BD).
_BLOCK_MAX = np.zeros(8, np.int64)
_HEADER_CHECKSUM = np.zeros(8, np.int64)
for _id, _size in codecs.LZ4_BLOCK_MAX.items():
    _BLOCK_MAX[_id] = _size
    _HEADER_CHECKSUM[_id] = codecs.lz4_header_checksum(bytes((_FLG_PLAIN, _id << 4)))

_I8P = ir.IntType(8).as_pointer()
_I32 = ir.IntType(32)


@intrinsic
def _decompress_safe(typingctx, fn, src, dst, size, capacity):
    """``LZ4_decompress_safe(src, dst, size, capacity)`` through the function at ``fn``."""

    def codegen(context, builder, signature, args):
        fnty = ir.FunctionType(_I32, [_I8P, _I8P, _I32, _I32])
        callee = builder.inttoptr(args[0], fnty.as_pointer())
        result = builder.call(
            callee,
            [
                builder.inttoptr(args[1], _I8P),
                builder.inttoptr(args[2], _I8P),
                builder.trunc(args[3], _I32),
                builder.trunc(args[4], _I32),
            ],
        )
        return builder.sext(result, ir.IntType(64))

    return types.int64(fn, src, dst, size, capacity), codegen


@njit(cache=True, inline="always")
def _le32(buf, p):
    return u8(buf + p) | (u8(buf + p + 1) << 8) | (u8(buf + p + 2) << 16) | (u8(buf + p + 3) << 24)


@_jit
def frame_capacity(buf, start, end, check_header):
    """Bytes the plain LZ4 frames in ``buf + start:end`` decode to at most, or -1 if they are
    not all plain frames or are malformed."""
    capacity = np.int64(0)
    p = start
    while p < end:
        if end - p < 7 or _le32(buf, p) != _MAGIC or u8(buf + p + 4) != _FLG_PLAIN:
            return -1
        bd = u8(buf + p + 5)
        block_max = _BLOCK_MAX[(bd >> 4) & 7]
        if block_max == 0 or bd & 0x8F:
            return -1
        if check_header and u8(buf + p + 6) != _HEADER_CHECKSUM[bd >> 4]:
            return -1
        p += 7
        while True:
            if end - p < 4:
                return -1
            size = _le32(buf, p)
            p += 4
            if size == 0:
                break
            stored = size & _UNCOMPRESSED
            size &= _UNCOMPRESSED - 1
            if size > block_max or size > end - p:
                return -1
            capacity += size if stored else min(block_max, _MAX_EXPANSION * size)
            p += size
    return capacity


@_jit
def decode_frames(fn, buf, start, end, dst, capacity):
    """Decode the frames :func:`frame_capacity` accepted into ``dst`` (``capacity`` bytes);
    the bytes written, or -1 where a block does not decode."""
    at = np.int64(0)
    p = start
    while p < end:
        block_max = _BLOCK_MAX[(u8(buf + p + 5) >> 4) & 7]
        p += 7
        while True:
            size = _le32(buf, p)
            p += 4
            if size == 0:
                break
            if size & _UNCOMPRESSED:
                size &= _UNCOMPRESSED - 1
                if size > capacity - at:  # planned frames fit; this guards the scratch anyway
                    return -1
                memcpy(dst + at, buf + p, size)
                at += size
            else:
                room = min(block_max, capacity - at)
                written = _decompress_safe(fn, buf + p, dst + at, size, room)
                if written < 0:
                    return -1
                at += written
            p += size
    return at
