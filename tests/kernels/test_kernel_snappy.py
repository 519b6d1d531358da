"""The numba snappy decoder (``kernel_snappy``) against cramjam, the Python path's decoder:
the same bytes out of every block cramjam writes, and the same blocks refused when damaged."""

from __future__ import annotations

import random
import struct

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kafka_format.runtime.format import codecs
from kafka_format.runtime.format.codecs import compress
from kafka_format.runtime.kernels import snappy as kernel_snappy

SLACK = kernel_snappy.SLACK


def cramjam_decode(value: bytes) -> bytes | None:
    """What the Python path makes of a snappy value (xerial or raw), or None for an error."""
    try:
        return bytes(codecs.decompress(2, value, magic=2))
    except codecs.DecompressionError:
        return None


def kernel_decode(value: bytes, *, slack: int = SLACK, room: int | None = None) -> bytes | None:
    """The kernel's capacity and decoder over ``value``, into a buffer of ``room`` (default:
    the capacity) plus ``slack`` bytes, filled with a marker that must survive past them."""
    src = np.frombuffer(value, np.uint8) if value else np.zeros(1, np.uint8)
    capacity = kernel_snappy.snappy_capacity(src.ctypes.data, 0, len(value))
    if capacity < 0:
        return None
    room = capacity if room is None else room
    dst = np.full(room + slack + 64, 0xA5, np.uint8)
    address = dst.ctypes.data
    n = kernel_snappy.decode_snappy(
        src.ctypes.data, 0, len(value), address, room, address + room + slack
    )
    assert (dst[room + slack :] == 0xA5).all(), "wrote past the buffer's limit"
    return dst[:n].tobytes() if n >= 0 else None


def raw_block(elements: list[tuple], length: int) -> bytes:
    """A raw snappy block from ("lit", bytes) and ("copy", offset, n) elements, each copy in
    the smallest form that holds it (1-, 2- or 4-byte offset)."""
    out = bytearray()
    v = length
    while v >= 128:
        out.append(v & 127 | 128)
        v >>= 7
    out.append(v)
    for element in elements:
        if element[0] == "lit":
            data = element[1]
            n = len(data) - 1
            if n < 60:
                out.append(n << 2)
            else:
                size = (n.bit_length() + 7) // 8
                out.append((59 + size) << 2)
                out += n.to_bytes(size, "little")
            out += data
        else:
            _, offset, n = element
            if 4 <= n <= 11 and offset < 2048:
                out.append(1 | ((n - 4) << 2) | ((offset >> 8) << 5))
                out.append(offset & 0xFF)
            elif offset < 65536:
                out.append(2 | ((n - 1) << 2))
                out += struct.pack("<H", offset)
            else:
                out.append(3 | ((n - 1) << 2))
                out += struct.pack("<I", offset)
    return bytes(out)


texts = st.one_of(
    st.binary(max_size=3000),
    st.lists(
        st.sampled_from([b"kafka", b" ", b"\x00", b"ab", b"x" * 70, b"0123456789abcdef"]),
        max_size=400,
    ).map(b"".join),
)


@settings(max_examples=300, deadline=None)
@given(data=texts, xerial=st.booleans())
def test_decodes_what_cramjam_writes(data, xerial):
    value = compress(2, data, magic=2, xerial=xerial)
    assert kernel_decode(value) == data
    # No slack: the byte-by-byte path only, never a byte past the room.
    assert kernel_decode(value, slack=0) == data


def test_xerial_values_of_many_blocks():
    data = random.Random(3).randbytes(40_000) + b"kafka " * 30_000  # stored and packed blocks
    value = compress(2, data, magic=2, xerial=True)
    assert value.startswith(codecs.XERIAL_MAGIC) and len(data) > 6 * 32 * 1024
    assert kernel_decode(value) == data


@pytest.mark.parametrize("offset", range(1, 21))
@pytest.mark.parametrize("n", [1, 4, 7, 8, 9, 11, 15, 16, 17, 31, 32, 33, 64])
def test_every_short_offset_and_length(offset, n):
    """Overlapping copies (offset < length) repeat a pattern; the wide copies must too."""
    head = bytes(range(1, 21))
    block = raw_block([("lit", head), ("copy", offset, n), ("lit", b"end")], 20 + n + 3)
    want = cramjam_decode(block)
    assert want is not None and want[20 : 20 + n] == (head[20 - offset :] * 64)[:n]
    assert kernel_decode(block) == want
    assert kernel_decode(block, slack=0) == want


@pytest.mark.parametrize(
    "element",
    [("copy", 70_000, 30), ("lit", bytes(range(256)) * 2), ("lit", b"x" * 61)],
    ids=["4-byte offset", "2-byte literal length", "1-byte literal length"],
)
def test_the_long_forms(element):
    head = random.Random(5).randbytes(70_000)
    produced = element[2] if element[0] == "copy" else len(element[1])
    block = raw_block([("lit", head), element, ("lit", b"tail")], 70_000 + produced + 4)
    want = cramjam_decode(block)
    assert want is not None
    assert kernel_decode(block) == want


@pytest.mark.parametrize(
    "block",
    [
        raw_block([("copy", 1, 4)], 4),  # a copy before any output
        raw_block([("lit", b"ab"), ("copy", 3, 4)], 6),  # from before the output's start
        raw_block([("lit", b"ab"), ("copy", 0, 4)], 6),  # offset 0
        raw_block([("lit", b"abc")], 2),  # more than the stated length
        raw_block([("lit", b"abc")], 4),  # less than the stated length
        raw_block([("lit", b"abc")], 3)[:-1],  # a literal cut short
        raw_block([("lit", b"abc"), ("copy", 2, 4)], 7)[:-1],  # a copy's offset cut short
        b"\x80\x80\x80\x80\x80\x80\x80\x80\x80\x80\x00",  # a length of 11 bytes
        b"\xff\xff\xff\xff\x1f",  # more than 2^32 - 1
        b"\xff\xff\xff\x7f\x00",  # more than 22 times the block's size
        b"\x80",  # a length cut short
        b"",
    ],
)
def test_refuses_what_cramjam_refuses(block):
    assert cramjam_decode(block) is None
    assert kernel_decode(block) is None


def test_lengths_as_cramjam_reads_them():
    """Overlong varints: cramjam takes up to 10 bytes and drops bits shifted past 64."""
    for preamble in (b"\x80\x80\x80\x80\x80\x00", b"\x80" * 9 + b"\x02", b"\x80" * 9 + b"\x01"):
        assert kernel_decode(preamble) == cramjam_decode(preamble)
    assert kernel_decode(b"\x80" * 9 + b"\x02") == b""


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    data=texts,
    xerial=st.booleans(),
    flips=st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 7)), min_size=1, max_size=3),
    cut=st.one_of(st.none(), st.integers(0, 10**6)),
)
def test_damaged_values_decode_as_cramjam_decodes_them(data, xerial, flips, cut):
    value = bytearray(compress(2, data, magic=2, xerial=xerial))
    for at, bit in flips:
        value[at % len(value)] ^= 1 << bit
    if cut is not None:
        del value[cut % len(value) :]
    value = bytes(value)
    assert kernel_decode(value) == cramjam_decode(value)


def test_never_writes_past_the_room_it_is_given():
    data = b"kafka format " * 5000
    value = compress(2, data, magic=2, xerial=False)
    assert kernel_decode(value) == data
    for room in (len(data) - 1, 1000, 0):
        assert kernel_decode(value, room=room) is None  # checks the marker past room + SLACK
        assert kernel_decode(value, room=room, slack=0) is None


@st.composite
def element_lists(draw) -> tuple[bytes, int]:
    """Valid raw blocks built element by element: short literals and copies of every offset
    and length, in any order, so that wide copies meet the block's end in every way."""
    elements: list[tuple] = [("lit", draw(st.binary(min_size=1, max_size=20)))]
    produced = len(elements[0][1])
    for _ in range(draw(st.integers(0, 40))):
        if draw(st.booleans()):
            data = draw(st.binary(min_size=1, max_size=draw(st.sampled_from((1, 2, 17, 70)))))
            elements.append(("lit", data))
            produced += len(data)
        else:
            n = draw(st.integers(1, 64))
            elements.append(("copy", draw(st.integers(1, min(produced, 2047))), n))
            produced += n
    return raw_block(elements, produced), produced


@settings(max_examples=500, deadline=None)
@given(block=element_lists())
def test_blocks_of_any_elements(block):
    block, produced = block
    want = cramjam_decode(block)
    assert want is not None and len(want) == produced
    assert kernel_decode(block) == want
    assert kernel_decode(block, slack=0) == want


def test_a_tail_of_one_byte_literals_in_a_tight_buffer():
    """The fast loop writes 16 bytes for an element of 1: with no slack it must stop before
    the block's last output bytes, however much input is left."""
    elements = [("lit", bytes(range(20))), ("copy", 20, 4)] + [
        ("lit", b"%c" % i) for i in range(15)
    ]
    block = raw_block(elements, 20 + 4 + 15)
    assert kernel_decode(block, slack=0) == cramjam_decode(block)
