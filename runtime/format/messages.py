"""Every cause kafka-format names for damaged bytes, worded once, in Kafka's words where Kafka
has some, and the one way a finding is located: ``file @position (base offset N): cause``.

Readers, the fast path's kernels, ``verify``, ``dump``, ``inspect`` and ``stats`` all take their
text from here, so that one damaged batch reads the same whichever tool met it. The position
convention: the byte where the damage lies, which for framing and batch-level damage (CRC,
header fields, decompression, the record count) is the first byte of the frame, and for
damage inside v2 records the record's first byte (see "records" below).
"""

from __future__ import annotations

from ..errors import CrcMismatchError, located
from . import layout

__all__ = [
    "count_cannot_fit",
    "crc_mismatch",
    "in_decompressed",
    "in_decompressed_messages",
    "inner_framing",
    "inner_magic",
    "inner_nested",
    "inner_none",
    "inner_trailing",
    "invalid_magic",
    "leftover_bytes",
    "length_below_minimum",
    "length_broken",
    "length_past_end",
    "located",
    "malformed_message",
    "negative_count",
    "negative_header_key",
    "negative_headers",
    "negative_record_length",
    "offset_not_increasing",
    "offset_outside_batch",
    "offset_overflow",
    "premature_eof",
    "record_past_end",
    "record_size",
    "truncated_tail",
]

# --- framing (format/framing.py) ------------------------------------------------------------


def length_below_minimum(length: int) -> str:
    """``FileLogInputStream.nextBatch``'s CorruptRecordException ("Found record size N smaller
    than minimum record overhead (14)")."""
    minimum = layout.MIN_FRAME_LENGTH
    return f"batch length {length} is less than the minimum record overhead ({minimum})"


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


def length_broken(length: int, real: int, end: int) -> str:
    """A length field that disagrees with the batch it heads, whose records and CRC prove its
    real end (``extent.proven_end``): the CRC does not cover the length field."""
    return (
        f"batch length {length} is broken: the batch's records and CRC end at position {end} "
        f"(length {real})"
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
    """``DefaultRecordBatch.RecordIterator``'s InvalidRecordException."""
    return f"Found invalid record count {count} in magic v2 batch"


# --- records (the reference decoder and the kernel's error codes) ---------------------------
#
# Where record damage is named (both decoders, ``batches.records_damage``): in an uncompressed
# v2 batch, at the absolute file position of the record that fails (the first byte of its
# length varint), or of the first byte after the last record for leftover bytes (records
# that end before the declared count are the count's lie: at the batch); in a
# compressed batch, at the batch's first byte, the cause followed by ``in_decompressed``'s
# "(in the decompressed records at byte N)", N counted from the start of what the payload
# decompresses to. The record, not the field: both decoders know where each record starts,
# and an operator cuts or skips records, not fields.

#: What the record decoders (the Kaitai parsers and the kernel's) found wrong in v2 records,
#: in ``DefaultRecord.readFrom``'s words (its catch of BufferUnderflowException and
#: IllegalArgumentException: "Found invalid record structure").
FIELD_PAST_END = "Found invalid record structure: a field runs past the end of its record"
VARINT_TOO_LONG = "Found invalid record structure: a varint longer than 10 bytes"
NOT_UTF8 = "Found invalid record structure: a header key that is not UTF-8"
#: ... and in a v0/v1 message.
MESSAGE_FIELD_PAST_END = "a field runs past its end"
WRAPPER_NULL_VALUE = "compressed wrapper message with a null value"


def in_decompressed(cause: str, at: int) -> str:
    """Record damage inside a compressed batch: located at the batch, the byte named here."""
    return f"{cause} (in the decompressed records at byte {at})"


def in_decompressed_messages(cause: str, at: int) -> str:
    """Damage among the inner messages of a v0/v1 wrapper: located at the wrapper."""
    return f"{cause} (in the decompressed messages at byte {at})"


def premature_eof(count: int, read: int) -> str:
    """``DefaultRecordBatch.uncompressedIterator``'s readNext: the records end before the
    declared count."""
    return (
        f"Incorrect declared batch size, premature EOF reached: {count} records declared, "
        f"the records end after {read}"
    )


def record_past_end(length: int, remaining: int) -> str:
    """``DefaultRecord.readFrom(ByteBuffer, ...)``: a record length past the records' end."""
    return (
        f"Invalid record size: expected {length} bytes in record payload, but instead the "
        f"buffer has only {remaining} remaining bytes"
    )


def negative_record_length(length: int) -> str:
    """A record length below zero (``DefaultRecord.readFrom`` reads it as a size)."""
    return f"Invalid record size: record length {length} is negative"


def negative_headers(count: int) -> str:
    """``DefaultRecord.readFrom``'s InvalidRecordException."""
    return f"Found invalid number of record headers {count}"


def negative_header_key(size: int) -> str:
    """``DefaultRecord.readHeaders``' InvalidRecordException."""
    return f"Invalid negative header key size {size}"


def malformed_message(detail: str) -> str:
    """A v0/v1 message whose fields do not fit it."""
    return f"malformed message: {detail}"


def record_size(length: int, read: int) -> str:
    """``DefaultRecord.readFrom``: the fields must use exactly the record's length."""
    return (
        f"Invalid record size: expected to read {length} bytes in record payload, but "
        f"instead read {read}"
    )


def leftover_bytes(leftover: int, count: int) -> str:
    """``DefaultRecordBatch.RecordIterator.next`` (``ensureNoneRemaining``)."""
    return (
        "Incorrect declared batch size, records still remaining in file: "
        f"{leftover} bytes after the last of {count} records"
    )


def offset_overflow(base_offset: int, delta: int) -> str:
    """A v2 record whose offset no Kafka can hold (past the int64 range)."""
    bound = "exceeds 2^63-1" if base_offset + delta > (1 << 63) - 1 else "is below -2^63"
    return f"offset overflow: base offset {base_offset} + offset delta {delta} {bound}"


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


# --- record offsets (the v2 rule both record decoders apply: batches.offset_delta_damage) ----


def offset_outside_batch(base_offset: int, delta: int, last_delta: int) -> str:
    """A v2 record whose offset delta lies outside 0..lastOffsetDelta: below the batch's base
    offset, or past the last offset its header declares (``MemoryRecordsBuilder`` writes the
    last appended record's delta there, and the cleaner keeps it). Kafka has no words for it:
    its range in ``LogValidator.validateBatch``'s form ("[first, last]")."""
    return (
        f"record offset {base_offset + delta} (offset delta {delta}) is outside its batch's "
        f"offset range [{base_offset}, {base_offset + last_delta}]"
    )


def offset_not_increasing(base_offset: int, delta: int, previous_delta: int) -> str:
    """A v2 record whose offset is not above the one before it in its batch, in
    ``MemoryRecordsBuilder.appendWithOffset``'s words."""
    return (
        f"Illegal offset {base_offset + delta} following previous offset "
        f"{base_offset + previous_delta} (Offsets must increase monotonically)"
    )
