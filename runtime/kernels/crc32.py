"""CRC-32 (zlib's, ISO-HDLC) inside the numba kernels: the checksum of every v0/v1 message.

A magic 0/1 message carries a CRC-32 over its magic byte to its end, and each inner message of a
compressed wrapper carries one too. A reader that checks them, as Kafka's consumer does, runs
CRC-32 over every decompressed byte in pieces of about a hundred bytes. A call into zlib per
message would cost more than the checksum (0.9 GB/s on 134-byte messages, measured), so the
kernels compute it themselves, with one of two implementations chosen at import:

- carry-less multiplication (x86 ``PCLMULQDQ``): 16 bytes folded a step, four streams at once on
  long spans, then a Barrett reduction; 7 GB/s on 128-byte messages, 12 GB/s on long spans;
- slicing-by-16 tables where the numba target lacks the instruction: about 2 GB/s.

The folding is the method of Gopal et al., "Fast CRC Computation for Generic Polynomials Using
PCLMULQDQ Instruction" (Intel, 2009); its constants are derived below from the polynomial.

No code for a partial block is needed: CRC-32 with its initial value 0xFFFFFFFF equals the raw
(zero-initialised) CRC of the message with its first four bytes inverted, and zero bytes in front
of a message leave its raw CRC unchanged. So a span is read as whole 16-byte blocks that start up
to 15 bytes *before* ``start``, those bytes masked to zero. **Callers guarantee that the 15 bytes
before** ``start`` **are readable**, as they are for every CRC of the format: a v0/v1 message's
CRC covers it from its magic byte, 16 bytes into the entry (offset, size, stored CRC).

A 16-byte block is loaded little-endian into two 64-bit lanes, so that bit ``k`` of the 128 is
the coefficient of ``x^(127-k)`` (the "reflected" order in which CRC-32 reads its bits).
"""

from __future__ import annotations

import ctypes
import platform

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.core import config
from numba.core.codegen import get_host_cpu_features
from numba.extending import intrinsic, models, register_model

from .addresses import u8

__all__ = [
    "CRC32C_FUNCTION",
    "HAS_CLMUL",
    "crc32",
    "crc32_clmul",
    "crc32_table",
    "crc32c",
    "crc32c_table",
]

_jit = njit(cache=True, nogil=True)  # nogil: Python calls crc32 too, from decoding threads
_jit_inline = njit(cache=True, inline="always")

# --- the polynomial's arithmetic (plain Python, at import) ------------------------------------

_POLY = 0x104C11DB7  # x^32 + x^26 + ... + 1


def _mod(a: int) -> int:
    """``a(x) mod P(x)`` over GF(2)."""
    while a.bit_length() > 32:
        a ^= _POLY << (a.bit_length() - 33)
    return a


def _reflect(value: int, bits: int) -> int:
    return int(f"{value:0{bits}b}"[::-1], 2)


def _shift(e: int) -> np.uint64:
    """The constant that moves a lane ``e`` bits down the message: multiplied carry-less by it,
    a lane holding ``L(x)`` gives a value congruent to ``L(x) * x^e``. The product of two
    reflected values comes out one place over, hence ``e - 1``."""
    return np.uint64(_reflect(_mod(1 << (e - 1)), 64))


def _barrett_mu() -> int:
    """``floor(x^64 / P(x))``."""
    a, q = 1 << 64, 0
    while a.bit_length() > 32:
        s = a.bit_length() - 33
        q |= 1 << s
        a ^= _POLY << s
    return q


# Folding a block over the next n blocks: its first lane (the higher powers) moves 128n + 64
# bits, its second 128n.
_K1_LO, _K1_HI = _shift(192), _shift(128)
_K2_LO, _K2_HI = _shift(320), _shift(256)
_K3_LO, _K3_HI = _shift(448), _shift(384)
_K4_LO, _K4_HI = _shift(576), _shift(512)
_K_96, _K_64 = _shift(96), _shift(64)  # the final 128 bits down to 64
_MU = np.uint64(_reflect(_barrett_mu(), 33))
_P33 = np.uint64(_reflect(_POLY, 33))
_LOW32 = np.uint64(0xFFFFFFFF)
_U32 = np.uint64(32)


def _head_masks() -> tuple[np.ndarray, np.ndarray]:
    """Per count of bytes read before ``start`` (0-15): the AND mask that zeroes them in the
    first block (two lanes), and the XOR mask that inverts the span's first four bytes (three
    lanes: with 13 or more bytes before the span, they reach into the second block)."""
    keep = np.zeros((16, 2), np.uint64)
    invert = np.zeros((16, 3), np.uint64)
    for pad in range(16):
        kept = ((1 << 128) - 1) ^ ((1 << (8 * pad)) - 1)
        inverted = 0xFFFFFFFF << (8 * pad)
        for lane in range(2):
            keep[pad, lane] = (kept >> (64 * lane)) & 0xFFFFFFFFFFFFFFFF
        for lane in range(3):
            invert[pad, lane] = (inverted >> (64 * lane)) & 0xFFFFFFFFFFFFFFFF
    return keep, invert


_HEAD_KEEP, _HEAD_INVERT = _head_masks()


def _target_has_clmul() -> bool:
    """Whether the code numba generates may use PCLMULQDQ: an x86-64 target whose features (the
    host's, or ``NUMBA_CPU_FEATURES``) include it. LLVM cannot select the instruction otherwise."""
    if platform.machine().lower() not in ("x86_64", "amd64"):
        return False
    features = config.CPU_FEATURES if config.CPU_FEATURES is not None else get_host_cpu_features()
    return "+pclmul" in features.split(",")


HAS_CLMUL: bool = _target_has_clmul()

# --- a 128-bit vector type for numba ----------------------------------------------------------

_V2 = ir.VectorType(ir.IntType(64), 2)
_I8 = ir.IntType(8)
_I32 = ir.IntType(32)


class _Vec128(types.Type):
    """Two uint64 lanes in one LLVM ``<2 x i64>`` value, so that a folding loop keeps its state
    in a vector register: as a pair of integers it went through general registers each step,
    at half the speed."""

    def __init__(self) -> None:
        super().__init__(name="kafka_format.Vec128")


_vec128 = _Vec128()


@register_model(_Vec128)
class _Vec128Model(models.PrimitiveModel):
    def __init__(self, dmm, fe_type) -> None:
        super().__init__(dmm, fe_type, _V2)


def _pclmul(builder: ir.IRBuilder, a, b, selector: int):
    module = builder.module
    fn = module.globals.get("llvm.x86.pclmulqdq")
    if fn is None:
        fn = ir.Function(module, ir.FunctionType(_V2, [_V2, _V2, _I8]), "llvm.x86.pclmulqdq")
    return builder.call(fn, [a, b, ir.Constant(_I8, selector)])


def _pair(builder: ir.IRBuilder, lo, hi):
    v = builder.insert_element(ir.Constant(_V2, ir.Undefined), lo, ir.Constant(_I32, 0))
    return builder.insert_element(v, hi, ir.Constant(_I32, 1))


@intrinsic
def _vload(typingctx, address):
    """The 16 bytes at an address (any alignment)."""

    def codegen(context, builder, signature, args):
        return builder.load(builder.inttoptr(args[0], _V2.as_pointer()), align=1)

    return _vec128(address), codegen


@intrinsic
def _vmake(typingctx, lo, hi):
    def codegen(context, builder, signature, args):
        return _pair(builder, args[0], args[1])

    return _vec128(lo, hi), codegen


@intrinsic
def _vand(typingctx, a, b):
    def codegen(context, builder, signature, args):
        return builder.and_(args[0], args[1])

    return _vec128(a, b), codegen


@intrinsic
def _vxor(typingctx, a, b):
    def codegen(context, builder, signature, args):
        return builder.xor(args[0], args[1])

    return _vec128(a, b), codegen


@intrinsic
def _vfold(typingctx, x, k):
    """``x.lo * k.lo ^ x.hi * k.hi``, carry-less: block ``x`` moved along by the shifts ``k``."""

    def codegen(context, builder, signature, args):
        low = _pclmul(builder, args[0], args[1], 0x00)
        high = _pclmul(builder, args[0], args[1], 0x11)
        return builder.xor(low, high)

    return _vec128(x, k), codegen


@intrinsic
def _clmul(typingctx, a, b):
    """The 128-bit carry-less product of two uint64."""

    def codegen(context, builder, signature, args):
        zero = ir.Constant(ir.IntType(64), 0)
        return _pclmul(builder, _pair(builder, args[0], zero), _pair(builder, args[1], zero), 0)

    return _vec128(a, b), codegen


@intrinsic
def _lane(typingctx, x, index):
    def codegen(context, builder, signature, args):
        return builder.extract_element(args[0], builder.trunc(args[1], _I32))

    return types.uint64(x, index), codegen


# --- CRC-32 -----------------------------------------------------------------------------------


@_jit_inline
def _reduce(x):
    """The raw CRC of the 16 bytes ``x``: 128 bits to 64 (two folds), then Barrett to 32."""
    hi = _lane(x, 1)
    z = _vxor(_clmul(_lane(x, 0), _K_96), _vmake(hi << _U32, hi >> _U32))
    w = _lane(_clmul(_lane(z, 0), _K_64), 1) ^ _lane(z, 1)
    q = _lane(_clmul(w & _LOW32, _MU), 0) & _LOW32
    return (w ^ _lane(_clmul(q, _P33), 0)) >> _U32


@_jit
def crc32_clmul(buf, start, end):
    """``zlib.crc32`` of the bytes at addresses ``buf + start`` to ``buf + end``, by carry-less
    multiplication; reads (and ignores) up to 15 bytes before ``start``. Only where
    :data:`HAS_CLMUL`."""
    n = end - start
    if n < 4:
        return crc32_table(buf, start, end)
    pad = (-n) & 15
    p = buf + start - pad
    stop = buf + end
    k1 = _vmake(_K1_LO, _K1_HI)
    x = _vand(_vload(p), _vmake(_HEAD_KEEP[pad, 0], _HEAD_KEEP[pad, 1]))
    x = _vxor(x, _vmake(_HEAD_INVERT[pad, 0], _HEAD_INVERT[pad, 1]))
    p += 16
    if p < stop:
        x1 = _vxor(_vload(p), _vmake(_HEAD_INVERT[pad, 2], np.uint64(0)))
        p += 16
        if stop - p >= 96:
            # Four independent streams: a fold waits on the one before it in its stream only.
            x2 = _vload(p)
            x3 = _vload(p + 16)
            p += 32
            k4 = _vmake(_K4_LO, _K4_HI)
            while stop - p >= 64:
                x = _vxor(_vfold(x, k4), _vload(p))
                x1 = _vxor(_vfold(x1, k4), _vload(p + 16))
                x2 = _vxor(_vfold(x2, k4), _vload(p + 32))
                x3 = _vxor(_vfold(x3, k4), _vload(p + 48))
                p += 64
            x = _vxor(
                _vxor(_vfold(x, _vmake(_K3_LO, _K3_HI)), _vfold(x1, _vmake(_K2_LO, _K2_HI))),
                _vxor(_vfold(x2, k1), x3),
            )
        else:
            x = _vxor(_vfold(x, k1), x1)
        while p < stop:
            x = _vxor(_vfold(x, k1), _vload(p))
            p += 16
    return np.int64(_reduce(x) ^ _LOW32)


def _crc32_tables(poly: int = 0xEDB88320) -> np.ndarray:
    """Slicing-by-16 tables for the reflected polynomial ``poly`` (CRC-32's by default);
    uint32, as 16 KiB of tables stay in L1 where int64 ones would not (measured: 2.1 against
    1.7 GB/s)."""
    tables = np.zeros((16, 256), np.uint32)
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ poly if c & 1 else c >> 1
        tables[0, i] = c
    for i in range(256):
        c = int(tables[0, i])
        for k in range(1, 16):
            c = int(tables[0, c & 0xFF]) ^ (c >> 8)
            tables[k, i] = c
    return tables


_TABLES = _crc32_tables()


@_jit_inline
def _sliced(t, buf, start, end):
    """The reflected CRC with tables ``t`` (initial and final value 0xFFFFFFFF) of the bytes at
    ``buf + start:end``, 16 bytes a step; reads nothing outside them."""
    c = np.uint32(0xFFFFFFFF)
    p = buf + start
    stop = buf + end
    while stop - p >= 16:
        a = c ^ np.uint32(u8(p) | (u8(p + 1) << 8) | (u8(p + 2) << 16) | (u8(p + 3) << 24))
        c = (
            t[15, a & 0xFF]
            ^ t[14, (a >> 8) & 0xFF]
            ^ t[13, (a >> 16) & 0xFF]
            ^ t[12, a >> 24]
            ^ t[11, u8(p + 4)]
            ^ t[10, u8(p + 5)]
            ^ t[9, u8(p + 6)]
            ^ t[8, u8(p + 7)]
            ^ t[7, u8(p + 8)]
            ^ t[6, u8(p + 9)]
            ^ t[5, u8(p + 10)]
            ^ t[4, u8(p + 11)]
            ^ t[3, u8(p + 12)]
            ^ t[2, u8(p + 13)]
            ^ t[1, u8(p + 14)]
            ^ t[0, u8(p + 15)]
        )
        p += 16
    while p < stop:
        c = t[0, (c ^ np.uint32(u8(p))) & 0xFF] ^ (c >> 8)
        p += 1
    return np.int64(c ^ np.uint32(0xFFFFFFFF))


@_jit
def crc32_table(buf, start, end):
    """``zlib.crc32`` of the bytes at addresses ``buf + start`` to ``buf + end``, by tables;
    reads nothing outside them."""
    return _sliced(_TABLES, buf, start, end)


#: What the kernels call. Only the chosen implementation is ever compiled.
crc32 = crc32_clmul if HAS_CLMUL else crc32_table


# --- CRC-32C (v2 batches): the crc32c package's function, or tables -------------------------


def _find_crc32c() -> int:
    """The address of the crc32c package's hardware CRC-32C, ``uint32 f(uint32 crc, const
    uint8 *data, size_t n)`` without the initial and final inversion. The symbol is not the
    package's API, so it is used only when it gives CRC-32C's check value; 0 otherwise, and
    the kernels compute CRC-32C by tables (:func:`crc32c_table`)."""
    try:
        import crc32c
        import crc32c._crc32c as extension

        if not crc32c.hardware_based:  # the function would be an illegal instruction
            return 0
        fn = ctypes.CDLL(extension.__file__)._crc32c_hw_adler
    except (ImportError, OSError, AttributeError):
        return 0
    fn.restype = ctypes.c_uint32
    fn.argtypes = [ctypes.c_uint32, ctypes.c_char_p, ctypes.c_size_t]
    if fn(0xFFFFFFFF, b"123456789", 9) ^ 0xFFFFFFFF != 0xE3069283:
        return 0
    return ctypes.cast(fn, ctypes.c_void_p).value or 0


#: Address of the CRC-32C function :func:`crc32c` calls, or 0 where there is none.
CRC32C_FUNCTION: int = _find_crc32c()


@intrinsic
def _call_crc32c(typingctx, fn, crc, address, n):
    def codegen(context, builder, signature, args):
        fnty = ir.FunctionType(_I32, [_I32, _I8.as_pointer(), ir.IntType(64)])
        callee = builder.inttoptr(args[0], fnty.as_pointer())
        result = builder.call(
            callee,
            [builder.trunc(args[1], _I32), builder.inttoptr(args[2], _I8.as_pointer()), args[3]],
        )
        return builder.zext(result, ir.IntType(64))

    return types.int64(fn, crc, address, n), codegen


_TABLES_C = _crc32_tables(0x82F63B78)  # Castagnoli, reflected


@_jit
def crc32c_table(buf, start, end):
    """CRC-32C of the bytes at ``buf + start:end`` by tables (about 2 GB/s against the
    hardware function's 12-26): where the crc32c package has no hardware function."""
    return _sliced(_TABLES_C, buf, start, end)


@_jit
def crc32c(fn, buf, start, end):
    """CRC-32C of the bytes at ``buf + start:end``: by the function at ``fn``
    (:data:`CRC32C_FUNCTION`, the package's SSE4.2 code: three interleaved streams of the
    ``crc32`` instruction, 12 GB/s on 73 MB and 26 on a batch's 146 KB here, measured), or by
    tables where ``fn`` is 0."""
    if fn == 0:
        return crc32c_table(buf, start, end)
    return _call_crc32c(fn, np.int64(0xFFFFFFFF), buf + start, end - start) ^ np.int64(0xFFFFFFFF)
