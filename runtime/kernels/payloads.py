"""Compressed wrappers and batches the numba kernels decompress themselves: planned here.

A v0/v1 wrapper or a v2 batch holds about a thousand records. Decompressing it from Python
costs a dozen Python steps per batch (the CRC, the bounds, the blocks, a buffer), all holding
the GIL, and a buffer that has left the cache before its records are read. Here one kernel call
plans every wrapper (:func:`plan_wrappers`) or batch (:func:`plan_batches`) of a chunk whose
codec a kernel decodes: snappy (``kernel_snappy``), always, and LZ4 (``kernel_lz4``) when its
library function was found. ``fastscan.decode_sections`` then decompresses each one
(:func:`decode_payload`) into a scratch buffer that stays in the cache while its records are
decoded from it.

A plan is the payload's place in the buffer and its capacity: the most it decompresses to
(snappy states it exactly, LZ4 bounds it). A wrapper or batch whose CRC fails, whose bounds do
not hold, whose framing the kernel does not take, or whose capacity reaches the caller's room
(``max_bytes`` + 1) gets capacity -1 and takes the Python path (``columnar._prepare_wrapper``,
``_prepare_v2``), which raises the reference's errors.
"""

from __future__ import annotations

from numba import njit

from ..format import layout

# numba's cache checks only this file: see the note in fastscan.py.
from .addresses import be32, be32u
from .crc32 import crc32, crc32c
from .lz4 import decode_frames, frame_capacity
from .snappy import decode_snappy, snappy_capacity

__all__ = [
    "decode_payload",
    "payload_spans",
    "plan_batches",
    "plan_wrappers",
]

_jit = njit(cache=True)
_kernel = njit(cache=True, nogil=True)


@_jit
def _capacity(codec, buf, start, end, kafka_header_checksum):
    """The most the payload decompresses to: snappy states it exactly, LZ4 bounds it."""
    if codec == layout.COMPRESSION_CODEC_SNAPPY:
        return snappy_capacity(buf, start, end)
    return frame_capacity(buf, start, end, kafka_header_checksum)


@_jit
def decode_payload(codec, lz4_fn, buf, start, end, dst, capacity, limit):
    """Decompress the planned payload ``buf + start:end`` into ``dst`` (``capacity`` bytes at
    most; ``limit``: where the buffer at ``dst`` ends); the bytes written, or -1 where the
    payload does not decode. LZ4 blocks go to ``LZ4_decompress_safe`` at ``lz4_fn``."""
    if codec == layout.COMPRESSION_CODEC_SNAPPY:
        return decode_snappy(buf, start, end, dst, capacity, limit)
    return decode_frames(lz4_fn, buf, start, end, dst, capacity)


_inline = njit(cache=True, inline="always")


@_inline
def _wrapper_value(buf, pos, end, magic, verify):
    """The value (the compressed inner messages) of the v0/v1 wrapper entry ``buf + pos:end``
    as (start, end), once its CRC holds (with ``verify``) and its bounds do; (-1, -1) for a
    wrapper the Python path must take (it raises the reference's error)."""
    if verify:
        stored = be32u(buf, pos + layout.LEGACY_CRC)
        if crc32(buf, pos + layout.LEGACY_CRC_START, end) != stored:
            return -1, -1
    p = pos + (layout.LEGACY_V1_LEN_KEY if magic == 1 else layout.LEGACY_V0_LEN_KEY)
    if end - p < 4:
        return -1, -1
    key_len = be32(buf, p)
    p += 4
    if key_len >= 0:
        if key_len > end - p:
            return -1, -1
        p += key_len
    if end - p < 4:
        return -1, -1
    value_len = be32(buf, p)
    p += 4
    if value_len <= 0 or value_len > end - p:
        return -1, -1
    return p, p + value_len


@_inline
def _batch_holds(buf, start, end, count, verify, crc32c_fn):
    """Whether the compressed v2 batch whose records lie at ``buf + start:end`` may be
    decompressed by a kernel: its CRC-32C holds (with ``verify``) and it has records (a
    batch of none, or of a negative count, takes the Python path)."""
    if verify:
        pos = start - layout.V2_HEADER_SIZE
        stored = be32u(buf, pos + layout.V2_CRC)
        if crc32c(crc32c_fn, buf, pos + layout.V2_CRC_START, end) != stored:
            return False
    return count > 0 and start < end


@_kernel
def plan_wrappers(buf, positions, ends, magics, codecs, verify, room, out):
    """For each v0/v1 wrapper entry ``buf + positions[k]:ends[k]`` compressed with
    ``codecs[k]``: its CRC checked (with ``verify``), its value found, its framing checked;
    ``out[k]`` = (value start, value end, capacity), or capacity -1 for a wrapper the Python
    path must take (also when the capacity reaches ``room``, where only the Python path's
    streaming decoders can enforce the bound). Magic 0 LZ4 frames carry Kafka 0.8's header
    checksum, which is not checked."""
    for k in range(positions.shape[0]):
        out[k, 2] = -1
        start, end = _wrapper_value(buf, positions[k], ends[k], magics[k], verify)
        if start < 0:
            continue
        capacity = _capacity(codecs[k], buf, start, end, magics[k] != 0)
        if capacity < 0 or capacity >= room:
            continue
        out[k, 0] = start
        out[k, 1] = end
        out[k, 2] = capacity


@_kernel
def plan_batches(buf, starts, ends, counts, codecs, verify, room, crc32c_fn, out):
    """For each v2 batch compressed with ``codecs[k]`` whose records lie at
    ``buf + starts[k]:ends[k]``: its CRC-32C checked (with ``verify``, by the function at
    ``crc32c_fn``) and its framing checked; ``out[k]`` = capacity, or -1 for a batch the
    Python path must take (no records, a negative count, framing the kernel does not take, a
    capacity reaching ``room``)."""
    for k in range(starts.shape[0]):
        out[k] = -1
        start = starts[k]
        end = ends[k]
        if not _batch_holds(buf, start, end, counts[k], verify, crc32c_fn):
            continue
        capacity = _capacity(codecs[k], buf, start, end, True)
        if capacity < 0 or capacity >= room:
            continue
        out[k] = capacity


@_kernel
def payload_spans(buf, starts, ends, magics, wrappers, counts, verify, crc32c_fn, out):
    """The compressed payloads ``kernel_inflate`` decodes: for each v0/v1 wrapper entry
    (``wrappers[k]``: the entry at ``buf + starts[k]:ends[k]``) or compressed v2 batch (its
    records at ``buf + starts[k]:ends[k]``), ``out[k]`` = (payload start, payload end) once
    its CRC and bounds hold, or (-1, -1) for one the Python path must take."""
    for k in range(starts.shape[0]):
        if wrappers[k]:
            out[k, 0], out[k, 1] = _wrapper_value(buf, starts[k], ends[k], magics[k], verify)
        elif _batch_holds(buf, starts[k], ends[k], counts[k], verify, crc32c_fn):
            out[k, 0] = starts[k]
            out[k, 1] = ends[k]
        else:
            out[k, 0] = -1
            out[k, 1] = -1


@_kernel
def check_batches(buf, starts, ends, crc32c_fn, out):
    """For each uncompressed v2 batch whose records lie at ``buf + starts[k]:ends[k]``:
    ``out[k]`` = whether its CRC-32C holds (by the function at ``crc32c_fn``, or tables where
    it is 0). One call a chunk: a batch whose CRC holds never reaches Python; one whose CRC
    fails takes the Python path, which reports it."""
    for k in range(starts.shape[0]):
        pos = starts[k] - layout.V2_HEADER_SIZE
        stored = be32u(buf, pos + layout.V2_CRC)
        out[k] = crc32c(crc32c_fn, buf, pos + layout.V2_CRC_START, ends[k]) == stored


# Added here rather than above: numba files a kernel's cache under its line number, and
# decode_payload is compiled only with records.decode_sections, which its own cache keeps
# while records.py is unchanged: lines above it that move leave it without a cache entry.
__all__ += ["check_batches"]
