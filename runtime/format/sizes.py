"""How many bytes each part of Kafka's record formats takes: the one home of the runtime's size
arithmetic (``schemas/`` keeps its own constants: it is the source of truth and imports nothing
from the runtime).

Sizes follow the Java classes that define them, so that a producer simulated on them
(``accumulator``) fills batches as Kafka's does and ``stats`` splits a batch the way the format
is laid out::

    LOG_OVERHEAD            12   offset (8) and length (4) before every v0/v1 message and v2 batch
    V2_HEADER_SIZE          61   a v2 batch before its records, LOG_OVERHEAD included
                                 (``layout.V2_HEADER_SIZE``)
    LEGACY_RECORD_OVERHEAD  14 / 22   a v0 / v1 message without key and value bytes:
                                 crc 4, magic 1, attributes 1, [timestamp 8,] key and value
                                 lengths 4 + 4 (``LegacyRecord.RECORD_OVERHEAD_V0/V1``)
    LEGACY_MESSAGE_HEADER   26 / 34   the same with LOG_OVERHEAD: a message as a log entry
    MAX_RECORD_OVERHEAD     21   the most a v2 record's varints and attributes can take
                                 (``DefaultRecord.MAX_RECORD_OVERHEAD``)
    MIN_RECORD_SIZE          7   the least a v2 record takes: length, attributes, timestamp
                                 delta, offset delta, key and value lengths, header count,
                                 a byte each

The v2 sizes take keys, values and headers as the records hold them: ``headers`` are
``(key, value)`` pairs with ``str`` keys (UTF-8 on the wire) and ``bytes`` or None values.

The fixed sizes come from ``format.layout`` (generated from the schemas); the two v2 record
bounds depend on varints and stay here.
"""

from __future__ import annotations

from collections.abc import Sequence

from . import layout
from .layout import LOG_OVERHEAD
from .varint import varint_size

__all__ = [
    "LEGACY_MESSAGE_HEADER",
    "LEGACY_RECORD_OVERHEAD",
    "LOG_OVERHEAD",
    "MAX_RECORD_OVERHEAD",
    "MIN_RECORD_SIZE",
    "batch_header_size",
    "legacy_record_size",
    "max_record_count",
    "size_upper_bound",
    "v2_bytes_size",
    "v2_key_value_headers_size",
    "v2_record_size",
    "varint_size",
]

#: By magic, without LOG_OVERHEAD.
LEGACY_RECORD_OVERHEAD = {0: layout.LEGACY_V0_RECORD_OVERHEAD, 1: layout.LEGACY_V1_RECORD_OVERHEAD}
#: By magic, LOG_OVERHEAD included.
LEGACY_MESSAGE_HEADER = {0: layout.LEGACY_V0_ENTRY_MIN_SIZE, 1: layout.LEGACY_V1_ENTRY_MIN_SIZE}
MAX_RECORD_OVERHEAD = 21
MIN_RECORD_SIZE = 7

_Headers = Sequence[tuple[str, bytes | None]]


def max_record_count(size: int) -> int:
    """The largest record count a batch of ``size`` bytes of v2 records is taken to have
    (element-wise for a numpy array of sizes): one over what fits, so that this check refuses
    only a count that is a lie and the record decoder judges the rest."""
    return size // MIN_RECORD_SIZE + 1


def v2_bytes_size(data: bytes | None) -> int:
    """A v2 record's key, value or header value: its varint length, then the bytes (null: the
    one byte of length -1)."""
    return 1 if data is None else varint_size(len(data)) + len(data)


def v2_key_value_headers_size(key: bytes | None, value: bytes | None, headers: _Headers) -> int:
    """The part of a v2 record after its offset delta: key, value, header count and headers."""
    size = v2_bytes_size(key) + v2_bytes_size(value) + varint_size(len(headers))
    for header_key, header_value in headers:
        size += v2_bytes_size(header_key.encode("utf-8")) + v2_bytes_size(header_value)
    return size


def v2_record_size(
    offset_delta: int,
    timestamp_delta: int,
    key: bytes | None,
    value: bytes | None,
    headers: _Headers = (),
) -> int:
    """``DefaultRecord.sizeInBytes``: a v2 record exactly as it is written, its length varint
    included."""
    body = 1 + varint_size(timestamp_delta) + varint_size(offset_delta)  # 1: attributes
    body += v2_key_value_headers_size(key, value, headers)
    return varint_size(body) + body


def legacy_record_size(magic: int, key: bytes | None, value: bytes | None) -> int:
    """``LOG_OVERHEAD + LegacyRecord.recordSize``: a v0/v1 message as a log entry."""
    return LEGACY_MESSAGE_HEADER[magic] + len(key or b"") + len(value or b"")


def batch_header_size(magic: int, codec: int) -> int:
    """``AbstractRecords.recordBatchHeaderSizeInBytes``: the bytes a batch takes before its
    records; for v0/v1, a compressed wrapper's message (uncompressed messages have none)."""
    if magic == 2:
        return layout.V2_HEADER_SIZE
    return LEGACY_MESSAGE_HEADER[magic] if codec != 0 else 0


def size_upper_bound(
    magic: int, codec: int, key: bytes | None, value: bytes | None, headers: _Headers = ()
) -> int:
    """``AbstractRecords.estimateSizeInBytesUpperBound``: the buffer a batch's first record
    needs."""
    if magic == 2:
        records = v2_key_value_headers_size(key, value, headers)
        return layout.V2_HEADER_SIZE + MAX_RECORD_OVERHEAD + records
    # a wrapper's overhead, then the message with its log overhead (Java counts that once)
    wrapper = LEGACY_RECORD_OVERHEAD[magic] if codec != 0 else 0
    return wrapper + legacy_record_size(magic, key, value)
