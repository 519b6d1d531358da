"""Kafka's v2 Record and its Headers (inside a magic-2 RecordBatch), as Construct schemas.

Layout (Kafka's DefaultRecord.java; varint / varlong are zigzag, see varint.py)::

    Record =>
      length            varint   bytes that follow, attributes .. the last header
      attributes        int8     unused, 0
      timestamp_delta   varlong  timestamp - batch base_timestamp
      offset_delta      varint   offset - batch base_offset
      len_key           varint   -1 (any negative) = null key
      key               bytes[len_key]
      len_value         varint   -1 (any negative) = null value
      value             bytes[len_value]
      num_headers       varint   must not be negative
      headers           Header[num_headers]

    Header =>
      len_key           varint   must not be negative
      key               UTF-8 string[len_key]
      len_value         varint   -1 (any negative) = null value
      value             bytes[len_value]

Field names follow record.ksy, which nests the fields after ``length`` (its ``len_body``) in a
``body``; here they are flat. Parsing checks, as Kafka's reader does, that the fields use
exactly ``length`` bytes. Building fills in every length and count: use ``build_record`` (or
``RecordBody.build`` plus a varint).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from construct import Check, If, Int8sb, Rebuild, Struct, Tell, len_, this

from kafka_format.schemas.construct_ext import ExactBytes, Utf8String
from kafka_format.schemas.varint import VarInt, VarLong, encode_zigzag


def _nullable_length(name: str):
    """Rebuild function: the byte length of a context field, -1 when it is None."""

    def length(context) -> int:
        value = context[name]
        if value is None:
            return -1
        if isinstance(value, str):
            return len(value.encode("utf-8"))
        return len(value)

    length.__name__ = f"{name}_length"
    return length


Header = Struct(
    "len_key" / Rebuild(VarInt, _nullable_length("key")),
    Check(this.len_key >= 0),
    "key" / Utf8String(this.len_key),
    "len_value" / Rebuild(VarInt, _nullable_length("value")),
    "value" / If(this.len_value >= 0, ExactBytes(this.len_value)),
)

# Everything that `length` counts; shared by the parser (Record) and the builder.
_BODY_FIELDS = (
    "attributes" / Int8sb,
    "timestamp_delta" / VarLong,
    "offset_delta" / VarInt,
    "len_key" / Rebuild(VarInt, _nullable_length("key")),
    "key" / If(this.len_key >= 0, ExactBytes(this.len_key)),
    "len_value" / Rebuild(VarInt, _nullable_length("value")),
    "value" / If(this.len_value >= 0, ExactBytes(this.len_value)),
    "num_headers" / Rebuild(VarInt, len_(this.headers)),
    Check(this.num_headers >= 0),
    "headers" / Header[this.num_headers],
)

RecordBody = Struct(*_BODY_FIELDS)

Record = Struct(
    "length" / VarInt,
    "_start" / Tell,
    *_BODY_FIELDS,
    "_end" / Tell,
    Check(this._end - this._start == this.length),
)


@dataclass(slots=True)
class RecordSpec:
    """What a caller gives to build one v2 record; lengths and counts are computed."""

    key: bytes | None = None
    value: bytes | None = None
    headers: Sequence[tuple[str, bytes | None]] = field(default_factory=tuple)
    offset_delta: int = 0
    timestamp_delta: int = 0
    attributes: int = 0


def as_record_spec(record: RecordSpec | Mapping[str, Any]) -> RecordSpec:
    """Accept a RecordSpec or a mapping with the same keys (headers as pairs or mappings)."""
    if isinstance(record, RecordSpec):
        return record
    fields = dict(record)
    headers = fields.pop("headers", ())
    pairs = [(h["key"], h["value"]) if isinstance(h, Mapping) else (h[0], h[1]) for h in headers]
    known = {k: v for k, v in fields.items() if k in RecordSpec.__dataclass_fields__}
    return RecordSpec(headers=pairs, **known)


def build_record(record: RecordSpec | Mapping[str, Any]) -> bytes:
    """One v2 record, ``length`` prefix included."""
    spec = as_record_spec(record)
    body = RecordBody.build(
        {
            "attributes": spec.attributes,
            "timestamp_delta": spec.timestamp_delta,
            "offset_delta": spec.offset_delta,
            "key": None if spec.key is None else bytes(spec.key),
            "value": None if spec.value is None else bytes(spec.value),
            "headers": [
                {"key": k, "value": None if v is None else bytes(v)} for k, v in spec.headers
            ],
        }
    )
    return encode_zigzag(len(body), 32) + body


def build_records(records: Iterable[RecordSpec | Mapping[str, Any]]) -> bytes:
    """Records back to back, as they lie in an uncompressed batch (or before compression)."""
    return b"".join(build_record(r) for r in records)
