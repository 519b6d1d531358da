"""Every cause kafka-format names for damaged bytes, worded once, in Kafka's words where Kafka
has some, and the one way a finding is located: ``file @position (base offset N): cause``.

Readers, the fast path's kernels, ``verify``, ``dump``, ``inspect`` and ``stats`` all take their
text from here, so that one damaged batch reads the same whichever tool met it. The position
convention: the byte where the damage lies, which for framing and batch-level damage (CRC,
header fields, decompression, the records as a whole) is the first byte of the frame.
"""

from __future__ import annotations

from ..errors import CrcMismatchError, located
from .sizes import LEGACY_RECORD_OVERHEAD

__all__ = [
    "count_cannot_fit",
    "crc_mismatch",
    "inner_framing",
    "inner_magic",
    "inner_nested",
    "inner_no_timestamp",
    "inner_none",
    "inner_trailing",
    "invalid_magic",
    "leftover_bytes",
    "length_below_minimum",
    "length_past_end",
    "located",
    "malformed_message",
    "malformed_records",
    "negative_count",
    "offset_out_of_range",
    "record_size",
    "timestamp_out_of_range",
    "truncated_tail",
]

#: ``LegacyRecord.RECORD_OVERHEAD_V0``: the smallest length field Kafka accepts.
MIN_RECORD_OVERHEAD = LEGACY_RECORD_OVERHEAD[0]

# --- framing (format/framing.py) ------------------------------------------------------------


def length_below_minimum(length: int) -> str:
    """``FileLogInputStream.nextBatch``'s CorruptRecordException ("Found record size N smaller
    than minimum record overhead (14)")."""
    return f"batch length {length} is less than the minimum record overhead ({MIN_RECORD_OVERHEAD})"


def invalid_magic(magic: int) -> str:
    """A magic byte Kafka never wrote (``RecordBatch.MAGIC_VALUE_V0..CURRENT_MAGIC_VALUE``)."""
    return f"invalid magic {magic}: only 0, 1 and 2 exist"


def length_past_end(length: int, left: int, later: int) -> str:
    """A length running past the end of the file although a whole batch starts later: the
    length field is broken, the rest is no truncated tail."""
    return (
        f"batch length {length} runs past the end of the file ({left} bytes left), yet a "
        f"whole batch starts at position {later}: the length is broken"
    )


def truncated_tail(size: int) -> str:
    """kafka-dump-log's "Found N invalid bytes at the end", with why it is only a warning."""
    return f"found {size} invalid bytes at the end (a partial batch: Kafka stops reading there)"


# --- the batch (format/batches.py, read/columnar.py) ----------------------------------------


def crc_mismatch(stored: int, computed: int, algorithm: str, **where) -> CrcMismatchError:
    """The error for a checksum that does not hold. Its text is CrcMismatchError's own
    ("stored crc32c 0x…, computed 0x…"): errors.py sits below this module and words it."""
    return CrcMismatchError(stored, computed, algorithm=algorithm, **where)


def count_cannot_fit(count: int, size: int) -> str:
    """A v2 record count larger than ``sizes.max_record_count`` of the records' bytes."""
    return f"record count {count} cannot fit in {size} bytes of records"


def negative_count(count: int) -> str:
    return f"negative record count {count}"


# --- records (the reference decoder and the kernel's error codes) ---------------------------


#: What the record decoders (the Kaitai parsers and the kernel's) found wrong in v2 records.
FIELD_PAST_END = "a field runs past the end of its record or of the records"
VARINT_TOO_LONG = "a varint longer than 10 bytes"
NEGATIVE_LENGTH = "a negative record length, header count or header key length"
NOT_UTF8 = "a header key that is not UTF-8"
#: ... and in a v0/v1 message.
MESSAGE_FIELD_PAST_END = "a field runs past its end"
WRAPPER_NULL_VALUE = "compressed wrapper message with a null value"


def malformed_records(detail: str) -> str:
    """v2 records a decoder cannot read (``detail``: one of the texts above), at the batch."""
    return f"malformed records: {detail}"


def malformed_message(detail: str) -> str:
    """A v0/v1 message whose fields do not fit it."""
    return f"malformed message: {detail}"


def record_size(offset_delta: int, unread: int) -> str:
    """``DefaultRecord.readFrom``: the fields must use exactly the record's length."""
    return (
        f"record at offset delta {offset_delta} has {unread} bytes beyond its fields "
        "(invalid record size)"
    )


def leftover_bytes(leftover: int, count: int) -> str:
    """``DefaultRecordBatch``'s "Incorrect declared batch size" (bytes after the last record)."""
    return f"{leftover} bytes after the last of {count} records (incorrect declared batch size)"


def offset_out_of_range() -> str:
    return "a record offset outside the int64 range"


def timestamp_out_of_range() -> str:
    return "a record timestamp outside the range of microsecond timestamps"


def inner_magic(magic: int) -> str:
    return f"inner message with magic {magic}"


def inner_nested(inner_offset: int) -> str:
    return (
        f"compressed inner message at inner offset {inner_offset} "
        "(nested compression is not allowed)"
    )


def inner_trailing(size: int) -> str:
    return f"{size} trailing bytes after the inner messages"


def inner_none() -> str:
    return "compressed wrapper message holds no inner messages"


def inner_framing(length: int) -> str:
    """An inner message of a v0/v1 wrapper with a length below the minimum."""
    return length_below_minimum(length)


def inner_no_timestamp(inner_offset: int) -> str:
    return (
        f"magic 0 inner message at inner offset {inner_offset} in a magic 1 wrapper "
        "(CreateTime): it has no timestamp"
    )
