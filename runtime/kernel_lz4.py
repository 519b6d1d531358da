"""LZ4 frames as Kafka's clients write them, decoded inside the numba kernels.

A v0/v1 wrapper or a v2 batch compressed with LZ4 holds about a thousand records. Decoding it
from Python costs a dozen Python steps per batch (the CRC, the bounds, the frame's blocks, a
buffer), all holding the GIL, and a buffer that has left the cache before the records are read.
Here one kernel call plans every LZ4 wrapper (:func:`plan_wrappers`) or batch
(:func:`plan_batches`) of a chunk, and the decoder (``fastscan.decode_sections``) decompresses
each into a scratch buffer that stays in the cache while its records are decoded from it.

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

from . import codecs

# numba's cache checks only this file: see the note in fastscan.py.
from .addresses import be32, be32u, memcpy, u8
from .crc import BATCH_CRC_OFFSET, BATCH_CRC_START
from .kernel_crc import crc32, crc32c
from .sizes import V2_BATCH_HEADER

__all__ = ["LZ4_DECOMPRESS", "decode_frames", "plan_batches", "plan_wrappers"]

_jit = njit(cache=True)
_kernel = njit(cache=True, nogil=True)


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


@_kernel
def plan_wrappers(buf, positions, ends, magics, verify, room, out):
    """For each v0/v1 LZ4 wrapper entry ``buf + positions[k]:ends[k]``: its CRC checked (with
    ``verify``), its value found, its frames checked; ``out[k]`` = (value start, value end,
    capacity), or capacity -1 for a wrapper the Python path must take (also when the capacity
    reaches ``room``, where only the streaming decoder can enforce the bound)."""
    for k in range(positions.shape[0]):
        out[k, 2] = -1
        pos = positions[k]
        end = ends[k]
        if verify:
            stored = be32u(buf, pos + 12)
            if crc32(buf, pos + 16, end) != stored:
                continue
        p = pos + (26 if magics[k] == 1 else 18)
        if end - p < 4:
            continue
        key_len = be32(buf, p)
        p += 4
        if key_len >= 0:
            if key_len > end - p:
                continue
            p += key_len
        if end - p < 4:
            continue
        value_len = be32(buf, p)
        p += 4
        if value_len <= 0 or value_len > end - p:
            continue
        capacity = frame_capacity(buf, p, p + value_len, magics[k] != 0)
        if capacity < 0 or capacity >= room:
            continue
        out[k, 0] = p
        out[k, 1] = p + value_len
        out[k, 2] = capacity


@_kernel
def plan_batches(buf, starts, ends, counts, verify, room, crc32c_fn, out):
    """For each v2 LZ4 batch whose records lie at ``buf + starts[k]:ends[k]``: its CRC-32C
    checked (with ``verify``, by the function at ``crc32c_fn``) and its frames checked;
    ``out[k]`` = capacity, or -1 for a batch the Python path must take (no records, a
    negative count, a frame that is not plain, a capacity reaching ``room``)."""
    for k in range(starts.shape[0]):
        out[k] = -1
        start = starts[k]
        end = ends[k]
        pos = start - V2_BATCH_HEADER
        if verify:
            stored = be32u(buf, pos + BATCH_CRC_OFFSET)
            if crc32c(crc32c_fn, buf, pos + BATCH_CRC_START, end) != stored:
                continue
        if counts[k] <= 0 or start >= end:
            continue
        capacity = frame_capacity(buf, start, end, True)
        if capacity < 0 or capacity >= room:
            continue
        out[k] = capacity
