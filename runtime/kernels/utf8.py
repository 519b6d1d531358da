"""Strict UTF-8, checked at an address as Python's decoder checks it (header keys are
strings in Kafka's records: a key that is not UTF-8 is damage)."""

from __future__ import annotations

from numba import njit

from .addresses import u8


@njit(cache=True)
def utf8_ok(buf, s, n):
    """Strict UTF-8 as Python's decoder checks it: no overlongs, surrogates or > U+10FFFF."""
    i = s
    end = s + n
    while i < end:
        c = u8(buf + i)
        if c < 0x80:
            i += 1
            continue
        if 0xC2 <= c <= 0xDF:
            if i + 1 >= end or (u8(buf + i + 1) & 0xC0) != 0x80:
                return False
            i += 2
            continue
        if 0xE0 <= c <= 0xEF:
            if i + 2 >= end:
                return False
            c1 = u8(buf + i + 1)
            lo = 0xA0 if c == 0xE0 else 0x80
            hi = 0x9F if c == 0xED else 0xBF
            if c1 < lo or c1 > hi or (u8(buf + i + 2) & 0xC0) != 0x80:
                return False
            i += 3
            continue
        if 0xF0 <= c <= 0xF4:
            if i + 3 >= end:
                return False
            c1 = u8(buf + i + 1)
            lo = 0x90 if c == 0xF0 else 0x80
            hi = 0x8F if c == 0xF4 else 0xBF
            if (
                c1 < lo
                or c1 > hi
                or (u8(buf + i + 2) & 0xC0) != 0x80
                or (u8(buf + i + 3) & 0xC0) != 0x80
            ):
                return False
            i += 4
            continue
        return False
    return True
