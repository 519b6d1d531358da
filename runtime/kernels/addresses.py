"""Numba intrinsics that read and write memory at integer addresses.

The kernels (``fastscan``, ``crc32``) take their input by address, never as arrays:
a section may lie in the memory-mapped file or in a decompressed ``bytes``, and one call covers
them all; the caller keeps every such buffer alive for the duration of the call. An array handed
to a helper would also cost reference counting (two calls) each time.
"""

from __future__ import annotations

import sys

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

__all__ = [
    "address_of",
    "be16",
    "be32",
    "be32u",
    "be64",
    "le32",
    "le64",
    "memcpy",
    "store_le64",
    "store_u8",
    "u8",
]

_BYTE_PTR = ir.IntType(8).as_pointer()


@intrinsic
def u8(typingctx, address):
    """The byte at an integer address. Kernels read their input by address: a section may
    lie in the mapped file or in a decompressed ``bytes``, and the caller keeps it alive."""
    sig = types.int64(address)

    def codegen(context, builder, signature, args):
        byte = builder.load(builder.inttoptr(args[0], _BYTE_PTR))
        return builder.zext(byte, ir.IntType(64))

    return sig, codegen


@intrinsic
def store_u8(typingctx, address, value):
    sig = types.void(address, value)

    def codegen(context, builder, signature, args):
        byte = builder.trunc(args[1], ir.IntType(8))
        builder.store(byte, builder.inttoptr(args[0], _BYTE_PTR))
        return context.get_dummy_value()

    return sig, codegen


_BIG_ENDIAN = sys.byteorder == "big"


def _load(width: int):
    pointer = ir.IntType(width).as_pointer()

    def load(typingctx, address):
        def codegen(context, builder, signature, args):
            value = builder.load(builder.inttoptr(args[0], pointer), align=1)
            if _BIG_ENDIAN:
                value = builder.bswap(value)
            return builder.zext(value, ir.IntType(64)) if width < 64 else value

        return types.int64(address), codegen

    return load


# Unaligned little-endian loads and a store, one instruction each on x86: the snappy decoder
# reads its tags' trailers 4 bytes at a time and copies its matches 8 bytes at a time.
le32 = intrinsic(_load(32))
le32.__doc__ = "The little-endian uint32 at an integer address, unaligned."
le64 = intrinsic(_load(64))
le64.__doc__ = "The little-endian int64 at an integer address, unaligned."


@intrinsic
def load_be64(typingctx, address):
    """The big-endian 8 bytes at an integer address, unaligned, as an int64 (one load and
    one byte swap on x86): base64 takes six bytes at a time from it."""

    def codegen(context, builder, signature, args):
        value = builder.load(builder.inttoptr(args[0], ir.IntType(64).as_pointer()), align=1)
        return value if _BIG_ENDIAN else builder.bswap(value)

    return types.int64(address), codegen


@intrinsic
def store_le64(typingctx, address, value):
    sig = types.void(address, value)

    def codegen(context, builder, signature, args):
        target = builder.inttoptr(args[0], ir.IntType(64).as_pointer())
        builder.store(builder.bswap(args[1]) if _BIG_ENDIAN else args[1], target, align=1)
        return context.get_dummy_value()

    return sig, codegen


@intrinsic
def address_of(typingctx, array):
    """The address of an array's first element."""
    sig = types.int64(array)

    def codegen(context, builder, signature, args):
        data = context.make_array(signature.args[0])(context, builder, args[0]).data
        return builder.ptrtoint(data, ir.IntType(64))

    return sig, codegen


@intrinsic
def memcpy(typingctx, dst, src, n):
    """``memcpy(dst, src, n)`` between two integer addresses (LLVM's, which libc serves)."""
    sig = types.void(dst, src, n)

    def codegen(context, builder, signature, args):
        d = builder.inttoptr(args[0], _BYTE_PTR)
        s = builder.inttoptr(args[1], _BYTE_PTR)
        cgutils.raw_memcpy(builder, d, s, args[2], 1)
        return context.get_dummy_value()

    return sig, codegen


# Big-endian integers, as Kafka writes them. Inlined: a call per field would cost more.
_inline = njit(cache=True, inline="always")


@_inline
def be64(buf, p):
    v = np.int64(0)
    for i in range(8):
        v = (v << np.int64(8)) | (u8(buf + p + i))
    return v


@_inline
def be32(buf, p):
    v = (
        ((u8(buf + p)) << 24)
        | ((u8(buf + p + 1)) << 16)
        | ((u8(buf + p + 2)) << 8)
        | (u8(buf + p + 3))
    )
    return v - (np.int64(1) << 32) if v >= (np.int64(1) << 31) else v


@_inline
def be32u(buf, p):
    return (
        ((u8(buf + p)) << 24)
        | ((u8(buf + p + 1)) << 16)
        | ((u8(buf + p + 2)) << 8)
        | (u8(buf + p + 3))
    )


@_inline
def be16(buf, p):
    v = ((u8(buf + p)) << 8) | (u8(buf + p + 1))
    return v - 65536 if v >= 32768 else v
