"""Confluent's wire format: how its serializers frame a key or value before the payload.

::

    byte 0      magic, 0
    bytes 1-4   the schema id, a big-endian int32
    (Protobuf only) the message indexes: a zigzag varint count, then that many zigzag varints;
                the common [0] is the single byte 0x00 (a count of 0 stands for [0])
    the rest    the payload: an Avro datum, a Protobuf message, or UTF-8 JSON

as Confluent's ``SchemaId`` (schema-serializer, ``MAGIC_BYTE_V0``; ``fromBytes`` /
``idToBytes``) and the Protobuf provider's ``MessageIndexes.readFrom`` / ``toByteArray`` read
and write it. ``MAGIC_BYTE_V1``, a 16-byte schema GUID in place of the id, is refused like any
other magic byte: schemas are looked up by id here. The counterpart for writers is
:func:`frame`::

    >>> from kafka_format.runtime.payloads.wire import frame, read_header, read_message_indexes
    >>> data = frame(7, b"\\x02", message_indexes=[1, 0])
    >>> data
    b'\\x00\\x00\\x00\\x00\\x07\\x04\\x02\\x00\\x02'
    >>> read_header(data)
    7
    >>> read_message_indexes(data)
    ((1, 0), 8)

Everything here reads bytes that may be anything (a record that was never framed, damage):
what does not fit is a :class:`WireFormatError` with one line saying why, never a value read
from the wrong bytes, and never an allocation sized by a count that the bytes cannot hold.

It also holds what the format decoders (``avro``, ``protobuf``, ``json_schema``) share:
:class:`PayloadDecodeError`, :func:`schema_label` (how an error names a schema) and
:func:`resolve_references` (a schema's references in the order Confluent resolves them).
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterable
from typing import Any, Protocol

from ..errors import KafkaFormatError

__all__ = [
    "HEADER_SIZE",
    "MAGIC",
    "PayloadDecodeError",
    "WireFormatError",
    "encode_message_indexes",
    "frame",
    "read_header",
    "read_message_indexes",
    "resolve_references",
    "schema_label",
]

#: ``AbstractKafkaSchemaSerDe.MAGIC_BYTE``: the only magic byte a schema id follows.
MAGIC = 0
#: The magic byte and the int32 schema id.
HEADER_SIZE = 5
#: ``ByteUtils.readVarint`` reads an int32: at most 5 bytes of 7 bits.
_MAX_VARINT_BYTES = 5
_ID = struct.Struct(">i")
_INT32_MIN, _INT32_MAX = -(1 << 31), (1 << 31) - 1


class WireFormatError(KafkaFormatError):
    """Bytes that are not a payload in Confluent's wire format (``position`` is where in them
    it showed)."""


class PayloadDecodeError(KafkaFormatError):
    """A framed payload that does not decode under its schema, or a schema that cannot be
    used: one line naming the schema id, its subject and version, and why."""


class _Labelled(Protocol):
    id: int
    subject: str
    version: int


def schema_label(schema: _Labelled) -> str:
    """``schema id 7 (subject orders-value v2)``: how every error names the schema it used."""
    return f"schema id {schema.id} (subject {schema.subject} v{schema.version})"


def read_header(data: bytes | bytearray | memoryview) -> int:
    """The schema id of a framed payload, whose payload (or message indexes) starts at
    :data:`HEADER_SIZE`."""
    # The magic byte first, as Confluent's deserializers read it: a short record that is not
    # framed at all is better told by its first byte than by its length.
    if len(data) >= 1 and data[0] != MAGIC:
        raise WireFormatError(
            f"magic byte {data[0]}, not {MAGIC} (Confluent wire format)", position=0
        )
    if len(data) < HEADER_SIZE:
        raise WireFormatError(
            f"{len(data)} byte{'' if len(data) == 1 else 's'}, fewer than the {HEADER_SIZE} "
            "of Confluent wire format's header (magic byte and schema id)",
            position=0,
        )
    return _ID.unpack_from(data, 1)[0]


def _read_varint(data: bytes | bytearray | memoryview, pos: int) -> tuple[int, int]:
    """A zigzag varint of at most 32 bits at ``pos`` (``ByteUtils.readVarint``), and where it
    ends."""
    raw = shift = 0
    for i in range(_MAX_VARINT_BYTES):
        if pos + i >= len(data):
            raise WireFormatError("message indexes end inside a varint", position=pos)
        byte = data[pos + i]
        raw |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            # Java's int32 arithmetic: bits past 32 of a fifth byte are dropped.
            raw &= 0xFFFFFFFF
            return (raw >> 1) ^ -(raw & 1), pos + i + 1
    raise WireFormatError(
        f"message index varint longer than {_MAX_VARINT_BYTES} bytes", position=pos
    )


def read_message_indexes(
    data: bytes | bytearray | memoryview, offset: int = HEADER_SIZE
) -> tuple[tuple[int, ...], int]:
    """The Protobuf message indexes at ``offset`` (just after the header), and where the
    payload starts after them. A count of 0 is ``(0,)``, as ``MessageIndexes.readFrom``
    reads it; the indexes themselves are not checked against any schema here."""
    count, pos = _read_varint(data, offset)
    if count == 0:
        return (0,), pos
    # Every index takes at least one byte: a count the rest cannot hold is damage, and is
    # refused before anything is sized by it (Java would allocate an ArrayList of that size).
    if count < 0 or count > len(data) - pos:
        left = len(data) - pos
        raise WireFormatError(
            f"message index count {count}, but {left} byte{' follows' if left == 1 else 's follow'}"
            " it",
            position=offset,
        )
    indexes = []
    for _ in range(count):
        index, pos = _read_varint(data, pos)
        indexes.append(index)
    return tuple(indexes), pos


def _write_varint(value: int, out: bytearray) -> None:
    raw = ((value << 1) ^ (value >> 31)) & 0xFFFFFFFF  # zigzag over int32, as ByteUtils does
    while raw > 0x7F:
        out.append(raw & 0x7F | 0x80)
        raw >>= 7
    out.append(raw)


def encode_message_indexes(indexes: Iterable[int]) -> bytes:
    """Message indexes as ``MessageIndexes.toByteArray`` writes them: ``[0]`` (and ``[]``,
    which a reader takes for ``[0]`` anyway) as the single byte 0."""
    values = list(indexes)
    for value in values:
        if not _INT32_MIN <= value <= _INT32_MAX:
            raise ValueError(f"message index {value} is not an int32")
    if values in ([], [0]):
        return b"\x00"
    out = bytearray()
    _write_varint(len(values), out)
    for value in values:
        _write_varint(value, out)
    return bytes(out)


def frame(
    schema_id: int,
    payload: bytes | bytearray | memoryview,
    message_indexes: Iterable[int] | None = None,
) -> bytes:
    """``payload`` framed as Confluent's serializers frame it: magic byte, schema id, then
    the message indexes when given (Protobuf; None for Avro and JSON Schema)."""
    if not _INT32_MIN <= schema_id <= _INT32_MAX:
        raise ValueError(f"schema id {schema_id} is not an int32")
    head = bytes([MAGIC]) + _ID.pack(schema_id)
    if message_indexes is not None:
        head += encode_message_indexes(message_indexes)
    return head + bytes(payload)


class _Source(Protocol):
    description: str

    def reference(self, ref: Any, parent: Any = None) -> Any: ...


def resolve_references(
    source: _Source, schema: Any, skip: Callable[[str], bool] | None = None
) -> list[tuple[str, Any]]:
    """Every schema ``schema`` references, directly or through others, as (name as the
    referrer spells it, the registered schema), each after those it references itself, once
    per name: ``AbstractSchemaProvider.resolveReferences``' order. Names ``skip`` accepts
    (built-in files) are not looked up. A reference the source does not hold is a
    :class:`PayloadDecodeError`."""
    found: dict[str, Any] = {}
    visited: set[str] = set()

    def walk(parent: Any) -> None:
        for ref in parent.references:
            if ref.name in visited or (skip is not None and skip(ref.name)):
                continue
            visited.add(ref.name)
            target = source.reference(ref, parent)
            if target is None:
                raise PayloadDecodeError(
                    f"{schema_label(schema)} refers to {ref.name} (subject {ref.subject} "
                    f"v{ref.version}), which is not in {source.description}"
                )
            walk(target)
            found[ref.name] = target

    walk(schema)
    return list(found.items())
