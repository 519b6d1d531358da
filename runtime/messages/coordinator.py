"""What kafka-dump-log's coordinator-record parsers share (``__consumer_offsets``,
``__transaction_state``, ``__share_group_state``): an int16 version or record type before
each key and value, and one text for each way a record cannot be decoded
(``DumpLogSegments``' ``OffsetsMessageParser``, ``TransactionLogMessageParser``,
``ShareGroupStateMessageParser``). The decoders never raise: damage is said in place.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from typing import Protocol

from .kafka_message import MessageDecodeError

I16 = struct.Struct(">h")

Texts = tuple[str | None, str | None]


class HasKeyValue(Protocol):
    offset: int
    key: bytes | None
    value: bytes | None


def prefix(data: bytes | None, what: str) -> int:
    """The int16 version (or record type) a key or value starts with."""
    if data is None or len(data) < 2:
        raise MessageDecodeError(f"Could not read version from {what}'s buffer.", position=0)
    return I16.unpack_from(data, 0)[0]


def reason(exc: Exception) -> str:
    return exc.reason if isinstance(exc, MessageDecodeError) else f"{type(exc).__name__}: {exc}"


def decoder_texts(
    record: HasKeyValue, decoder: str, to_json: Callable[[bytes, bytes | None], Texts | None]
) -> Texts:
    """The key and value texts of ``to_json``, or kafka-dump-log's line for a record with no
    key, one that does not decode, or one of a record type the schemas do not know (None)."""
    if record.key is None:
        return (
            f"Failed to decode message at offset {record.offset} using {decoder} "
            "(message had a missing key)",
            None,
        )
    try:
        texts = to_json(record.key, record.value)
    except Exception as exc:  # the decoders never raise: damage is reported as text
        return f"Error at offset {record.offset}, skipping. {reason(exc)}", None
    if texts is None:
        record_type = prefix(record.key, "key")
        return f"Unknown record type {record_type} at offset {record.offset}, skipping.", None
    return texts
