"""Transaction markers (control batches of one COMMIT or ABORT record) checked in one kernel
call a chunk, so that they need no Python step each.

A transactional producer writes a marker after every transaction, and a broker writes one per
partition the transaction touched: in a log of small batches they are a few percent of the
batches, and read one by one through the generated parsers they cost more than all the data
batches together. Here :func:`check_markers` accepts a control batch only in the one form
Kafka's brokers write (``WriteTxnMarkersRequest`` → ``MemoryRecords.withEndTransactionMarker``
→ ``EndTransactionMarker.serializeValue``): uncompressed, one record, whose fields use exactly
the record's length and the batch's, with no headers, a 4-byte key (version, type COMMIT or
ABORT) and a 6-byte value (version, coordinator epoch), its CRC-32C holding. Every other
control batch (damaged, compressed, another control type, another layout) is left to the
reference decoder, which raises or reports exactly what is wrong with it: so a marker accepted
here is one the reference reads without error, to the same type.
"""

from __future__ import annotations

from numba import njit

from ..format import layout

# numba's cache checks only this file: see the note in fastscan.py.
from .addresses import be16, be32, be32u, be64
from .crc32 import crc32c
from .records import checked_add, record_fields
from .section_codes import E_OK

__all__ = ["NOT_A_MARKER", "check_markers"]

#: What :func:`check_markers` says of a control batch the reference decoder must read.
NOT_A_MARKER = -1


@njit(cache=True, nogil=True)
def check_markers(buf, positions, sizes, verify, crc32c_fn, out):
    """For each control batch, the frame of ``sizes[k]`` bytes at ``buf + positions[k]``:
    ``out[k]`` = its marker's control type (ABORT or COMMIT) when it is a marker in the form
    Kafka writes, its CRC-32C holding (with ``verify``, by the function at ``crc32c_fn``);
    else NOT_A_MARKER."""
    for k in range(positions.shape[0]):
        out[k] = NOT_A_MARKER
        pos = positions[k]
        end = pos + sizes[k]
        if sizes[k] < layout.V2_HEADER_SIZE:
            continue
        if be16(buf, pos + layout.V2_ATTRIBUTES) & layout.V2_ATTR_COMPRESSION_MASK:
            continue
        if be32(buf, pos + layout.V2_RECORDS_COUNT) != 1:
            continue
        if verify:
            computed = crc32c(crc32c_fn, buf, pos + layout.V2_CRC_START, end)
            if computed != be32u(buf, pos + layout.V2_CRC):
                continue
        status, p, rend, _, delta, key, key_len, _, value_len, headers = record_fields(
            buf, pos + layout.V2_HEADER_SIZE, end
        )
        if status != E_OK or p != rend or rend != end or headers != 0:
            continue
        if key_len != layout.CONTROL_RECORD_KEY_SIZE or value_len != layout.END_TXN_MARKER_SIZE:
            continue
        if not checked_add(be64(buf, pos), delta)[1]:
            continue
        last_delta = be32(buf, pos + layout.V2_LAST_OFFSET_DELTA)
        if delta < 0 or delta > last_delta:  # batches.offset_delta_damage
            continue
        kind = be16(buf, key + layout.CONTROL_RECORD_KEY_TYPE)
        if kind in (layout.CONTROL_RECORD_TYPE_ABORT, layout.CONTROL_RECORD_TYPE_COMMIT):
            out[k] = kind
