"""The record decoder's interface (``records.decode_sections``): the columns of a section row
(what ``fastscan.make_sections`` fills and the kernel reads and writes back), the formats of
the records a section holds, the statuses the kernel reports (each turned into the reference
reader's error by ``read/sections.py``), the view columns and the output cursors.

Plain integers, module-level, so that numba takes them as compile-time constants; ``records``
and ``fastscan`` re-export them for their callers.
"""

from __future__ import annotations

# --- sections (decode_sections) ---------------------------------------------------------------

S_ADDR = 0  # address of the buffer holding the records
S_START = 1  # first byte of the records in that buffer
S_END = 2  # one past the last byte
S_COUNT = 3  # records_count from the batch header
S_BASE = 4  # base offset
S_BASE_TS = 5
S_MAX_TS = 6
S_TS_TYPE = 7  # 0 CreateTime, 1 LogAppendTime (the batch's max timestamp applies)
S_KEEP = 8  # 0: decode and check, but emit no rows (read_committed drops the batch)
S_STATUS = 9  # out: 0 or an E_* code
S_ERR_POS = 10  # out: byte position (relative to S_START) where decoding failed
S_ERR_ARG = 11  # out: offset delta of the record whose body is too long (E_RECORD_SIZE)
S_ERR_ARG2 = 12  # out: unread bytes (E_RECORD_SIZE) or leftover bytes (E_LEFTOVER)
S_ROWS_END = 13  # out: rows emitted up to and including this section
S_FORMAT = 14  # FORMAT_*
S_MAGIC = 15  # v0/v1: the (wrapper) message's magic
S_VERIFY = 16  # v0/v1: 1 to check CRC-32s here
S_ERR_ARG3 = 17  # out: inner offset of a v0/v1 inner message in error
S_PAYLOAD_START = 18  # FORMAT_PACKED_*: the compressed payload in the buffer
S_PAYLOAD_END = 19
S_CODEC = 20  # FORMAT_PACKED_*: its codec (layout.COMPRESSION_CODEC_SNAPPY or _LZ4)
# out: rows whose timestamp has no int64 microsecond value (Arrow's and Spark's column): they
# are emitted with a null timestamp; the first one's offset.
S_NULL_TS = 21
S_NULL_TS_OFFSET = 22
S_LAST_DELTA = 23  # v2: the header's lastOffsetDelta (the record-offset rule's bound)
SECTION_COLUMNS = 24


FORMAT_V2 = 0  # v2 records, back to back (the batch's payload, decompressed if need be)
FORMAT_LEGACY = 1  # one whole v0/v1 entry, uncompressed (the frame itself)
FORMAT_INNER = 2  # the decompressed value of a v0/v1 wrapper: entries back to back
# A v0/v1 wrapper's compressed value (S_PAYLOAD_START:END, codec S_CODEC), decompressed here
# into the scratch buffer, then read as FORMAT_INNER. S_START:S_END is 0:capacity, the most it
# decompresses to.
FORMAT_PACKED_WRAPPER = 3
# A v2 batch's compressed records (S_PAYLOAD_START:END, codec S_CODEC), decompressed into the
# scratch buffer, then read as FORMAT_V2. S_START:S_END is 0:capacity.
FORMAT_PACKED_V2 = 4

E_OK = 0
E_EOF = 1  # a field runs past the end of its record or of the payload
E_VARINT_TOO_LONG = 2
E_NEGATIVE_LENGTH = 3  # a record length below zero (ERR_ARG the length)
E_UTF8 = 4  # a header key that is not UTF-8
E_RECORD_SIZE = 5  # bytes left in a record after its fields
E_LEFTOVER = 6  # bytes after the last record
# base offset + delta outside int64 (ERR_ARG the delta, or the inner offset; ERR_POS the record)
E_OFFSET_RANGE = 7
E_TIMESTAMP_RANGE = 8  # no longer raised (such a timestamp is null, S_NULL_TS); kept for callers
E_CRC = 9  # v0/v1 CRC-32: ERR_ARG computed, ERR_ARG2 stored (ERR_ARG3 inner offset)
E_MESSAGE_EOF = 10  # a v0/v1 message whose key or value runs past its end
E_INNER_MAGIC = 11  # ERR_ARG: the magic of an inner message that is not 0 or 1
E_INNER_NESTED = 12  # ERR_ARG3: offset of a compressed inner message
E_INNER_TRAILING = 13  # ERR_ARG2: bytes after the last whole inner message
E_INNER_NONE = 14  # a wrapper holding no message
E_INNER_FRAMING = 15  # ERR_ARG: the length below 14, ERR_ARG3 the inner offset
E_INNER_NO_TIMESTAMP = 16  # no longer raised: Kafka reads such a message (no timestamp)
E_ROOM = 17  # not an error: the output buffers are full; decode from here with more room
# FORMAT_PACKED_*: a payload that does not decompress, or (v2) a record count that cannot fit;
# the Python path words the error.
E_DECOMPRESS = 18
# A v1 wrapper offset, not 0, below its last inner offset: ERR_ARG the wrapper offset, ERR_ARG2
# the last inner offset (Kafka's "Found invalid wrapper offset").
E_WRAPPER_OFFSET = 19
# v2 record damage, each worded as Kafka words it (format/messages.py). ERR_POS is the start of
# the record (its length varint) for every v2 record error but E_LEFTOVER (the first byte
# left over) and E_PREMATURE_EOF (named at the batch: the count lies); ERR_ARG/ERR_ARG2 as
# noted.
E_PREMATURE_EOF = 20  # the records end before the declared count: ERR_ARG the records read
E_RECORD_PAST_END = 21  # a record length past the records' end: ERR_ARG it, ERR_ARG2 the rest
E_NEGATIVE_HEADERS = 22  # a header count below zero: ERR_ARG it
E_NEGATIVE_HEADER_KEY = 23  # a header key length below zero: ERR_ARG it
# The record-offset rule (format/batches.offset_delta_damage), judged like E_OFFSET_RANGE once
# the records all parsed: an offset delta outside 0..S_LAST_DELTA (ERR_ARG it, ERR_ARG2 the
# bound), or not above the one before it (ERR_ARG it, ERR_ARG2 the one before).
E_OFFSET_OUTSIDE = 24
E_OFFSET_ORDER = 25
# E_RECORD_SIZE: ERR_ARG the record's length, ERR_ARG2 the bytes its fields used

# view_args (binary_view mode): where the records may be pointed at in place, and the views'
# data buffers.
V_PLACE = 0  # the address of the buffer whose sections' records are viewed in place (-1: none)
V_BASE = 1  # the address data buffer 0 starts at: a view's offset is from there
V_COPY_INDEX = 2  # the data buffer of the bytes gathered (compressed records): 0 or 1

# Cursors into the output buffers, in and out.
C_ROWS = 0
C_KEY_BYTES = 1
C_VALUE_BYTES = 2
C_HEADERS = 3
C_HKEY_BYTES = 4
C_HVALUE_BYTES = 5
CURSORS = 6
