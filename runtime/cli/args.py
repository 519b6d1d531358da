"""Argument types every command shares."""

from __future__ import annotations

import argparse
from datetime import UTC, datetime


def positive_int(text: str) -> int:
    value = int(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be positive, got {value}")
    return value


def non_negative_int(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, got {value}")
    return value


def parse_timestamp(text: str) -> int:
    """Epoch milliseconds, or an ISO-8601 date-time (UTC when it names no zone)."""
    stripped = text.strip()
    if stripped.lstrip("-").isdigit():
        return int(stripped)
    try:
        moment = datetime.fromisoformat(stripped)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is neither epoch milliseconds nor an ISO-8601 date-time "
            "(e.g. 2024-05-01T12:00:00Z)"
        ) from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return int(moment.timestamp() * 1000)


#: ``kafka-get-offsets --time`` words and ``ListOffsetsRequest``'s special timestamps.
OFFSET_SPECS = {"latest": -1, "earliest": -2, "max-timestamp": -3}


def parse_timestamp_spec(text: str) -> int:
    """A timestamp as :func:`parse_timestamp` reads it, or one of ListOffsets' special
    values: ``latest`` / -1, ``earliest`` / -2, ``max-timestamp`` / -3."""
    word = text.strip().lower()
    if word in OFFSET_SPECS:
        return OFFSET_SPECS[word]
    value = parse_timestamp(text)
    if value < 0 and value not in OFFSET_SPECS.values():
        raise argparse.ArgumentTypeError(
            f"{text!r}: a negative timestamp must be -1 (latest), -2 (earliest) or "
            "-3 (max-timestamp)"
        )
    return value


def decoder_class(text: str) -> str:
    """kafka-dump-log's ``--key-decoder-class`` / ``--value-decoder-class``: a Java class name
    Kafka ships (``kafka.serializer.StringDecoder``...), mapped to our decoder's name; a
    ValueError of one line for any other class."""
    from .text import DECODER_CLASSES

    name = text.strip()
    if name in DECODER_CLASSES:
        return DECODER_CLASSES[name]
    raise ValueError(
        f"unknown decoder class {text!r}: only Kafka's own decoders are known here "
        "(StringDecoder, DefaultDecoder, IntegerDecoder, LongDecoder, of kafka.serializer or "
        "org.apache.kafka.tools.api); or use --key-decoder / --value-decoder"
    )
