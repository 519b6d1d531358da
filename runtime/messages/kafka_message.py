"""Kafka's message serialisation, for message schemas described as data.

Kafka describes its RPCs and the records of its internal topics in JSON files (for example
``group-coordinator/src/main/resources/common/message/OffsetCommitValue.json``) and generates
Java readers, writers and JSON converters from them. This module interprets the same
descriptions: a :class:`Message` is such a file's field list as Python data, and

* :func:`read_message` reads bytes as the generated ``Message.read(readable, version)`` does;
* :func:`write_message` writes them as the generated ``write`` does (for tests and examples);
* :func:`json_tree` / :func:`to_json` render them as the generated ``*JsonConverter.write``
  does, which is what ``kafka-dump-log`` prints.

The wire rules, from Kafka's ``MessageDataGenerator``:

* fixed-size fields are big-endian (``int8`` … ``int64``, ``uint16``, ``uint32``, ``float64``,
  ``bool`` as one byte, ``uuid`` as 16 bytes);
* in a message's *flexible* versions, strings, bytes and arrays are "compact": an unsigned
  varint holding length + 1 (0 = null); otherwise strings have an int16 length, bytes and
  arrays an int32 length (-1 = null);
* in flexible versions every struct ends with tagged fields: an unsigned varint count, then
  per field an unsigned varint tag, an unsigned varint size and the value (always in the
  compact encoding). Tagged fields are written only when they differ from their default;
  unknown tags are skipped (and kept here under ``_unknownTaggedFields``);
* a non-tagged nullable struct is preceded by an int8 (-1 = null), a tagged one by an
  unsigned varint (0 = null).

As in Kafka's generated code, a field is read when the version falls in its ``versions``
range; versions above the message's ``validVersions`` are read with the same open-ended
ranges (that is how a newer record stays readable when only tagged fields were added).

Field values come back as Python values keyed by Kafka's JSON names (the field name with a
lower-case first letter): ints, floats, bools, ``str``, ``bytes``, lists and dicts; a
``uuid`` as Kafka's own text form (URL-safe base64 without padding, ``Uuid.toString``).
Fields absent from a version hold their default, as the Java objects do.
"""

from __future__ import annotations

import base64
import math
import re
import struct
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from ..errors import KafkaFormatError
from ..format.varint import encode_unsigned_varint, read_unsigned_varint

__all__ = [
    "NO_VERSIONS",
    "ZERO_UUID",
    "Field",
    "Message",
    "MessageDecodeError",
    "Versions",
    "default_value",
    "encode_uvarint",
    "field",
    "json_text",
    "json_tree",
    "message",
    "read_message",
    "read_message_from",
    "to_json",
    "uuid_from_bytes",
    "uuid_to_bytes",
    "write_message",
]

_MAX_VERSION = 0x7FFF
#: ``Uuid.ZERO_UUID.toString()``.
ZERO_UUID = "AAAAAAAAAAAAAAAAAAAAAA"
UNKNOWN_TAGGED = "_unknownTaggedFields"


class MessageDecodeError(KafkaFormatError):
    """Bytes that do not hold the message the schema describes; ``position`` is the byte
    position inside the key or value being read."""


# --- schemas as data ------------------------------------------------------------------------


@dataclass(slots=True, frozen=True)
class Versions:
    """An inclusive version range, as Kafka's ``Versions`` (``"0+"``, ``"1-3"``, ``"2"``,
    ``"none"``)."""

    lo: int
    hi: int

    def __contains__(self, version: object) -> bool:
        return isinstance(version, int) and self.lo <= version <= self.hi

    @property
    def empty(self) -> bool:
        return self.hi < self.lo

    @classmethod
    def parse(cls, text: str | int) -> Versions:
        text = str(text).strip()
        if text == "none":
            return NO_VERSIONS
        if text.endswith("+"):
            return cls(int(text[:-1]), _MAX_VERSION)
        if "-" in text:
            lo, hi = text.split("-", 1)
            return cls(int(lo), int(hi))
        return cls(int(text), int(text))

    def __str__(self) -> str:
        if self.empty:
            return "none"
        if self.hi == _MAX_VERSION:
            return f"{self.lo}+"
        return str(self.lo) if self.lo == self.hi else f"{self.lo}-{self.hi}"


NO_VERSIONS = Versions(0, -1)

_FIXED = {
    "bool": struct.Struct(">?"),
    "int8": struct.Struct(">b"),
    "int16": struct.Struct(">h"),
    "uint16": struct.Struct(">H"),
    "int32": struct.Struct(">i"),
    "uint32": struct.Struct(">I"),
    "int64": struct.Struct(">q"),
    "float64": struct.Struct(">d"),
}
_SCALARS = {*_FIXED, "uuid", "string", "bytes"}


@dataclass(slots=True, frozen=True)
class Field:
    """One entry of a JSON schema's ``fields`` (see :func:`field`).

    ``type`` is Kafka's: a scalar (``int32``, ``string``, ``uuid``, …), ``[]<scalar>``, a
    struct name (capitalised; its fields in ``fields``) or ``[]<StructName>``. ``default`` is
    the JSON's ``default`` as written there (a string or number), None when it has none.
    """

    name: str
    type: str
    versions: Versions
    nullable: Versions = NO_VERSIONS
    tagged: Versions = NO_VERSIONS
    tag: int | None = None
    default: str | int | float | bool | None = None
    fields: tuple[Field, ...] = ()

    @property
    def json_name(self) -> str:
        """``FieldSpec.camelCaseName``: the name with a lower-case first letter."""
        return self.name[:1].lower() + self.name[1:]

    @property
    def is_array(self) -> bool:
        return self.type.startswith("[]")

    @property
    def element(self) -> str:
        """The element type of an array, else the type itself."""
        return self.type[2:] if self.is_array else self.type

    @property
    def is_struct(self) -> bool:
        return self.element not in _SCALARS


def field(
    name: str,
    type: str,
    versions: str | None = None,
    *,
    nullable: str = "none",
    tagged: str = "none",
    tag: int | None = None,
    default: str | int | float | bool | None = None,
    fields: Iterable[Field] = (),
) -> Field:
    """A :class:`Field` written as in the JSON: ``field("leaderEpoch", "int32", "3+",
    default=-1)``. ``versions`` defaults to ``tagged`` (as Kafka's ``FieldSpec`` does)."""
    if versions is None:
        if tagged == "none":
            raise ValueError(f"field {name}: versions needed")
        versions = tagged
    f = Field(
        name,
        type,
        Versions.parse(versions),
        Versions.parse(nullable),
        Versions.parse(tagged),
        tag,
        default,
        tuple(fields),
    )
    if f.is_struct and not f.fields:
        raise ValueError(f"field {name}: struct type {type} needs its fields")
    if not f.tagged.empty and tag is None:
        raise ValueError(f"field {name}: tagged versions need a tag")
    return f


@dataclass(slots=True, frozen=True)
class Message:
    """A JSON message schema: name, ``validVersions``, ``flexibleVersions``, fields, and the
    ``apiKey`` where it has one (metadata records)."""

    name: str
    valid: Versions
    flexible: Versions
    fields: tuple[Field, ...]
    api_key: int | None = None


def message(
    name: str,
    valid: str,
    flexible: str,
    fields: Iterable[Field],
    *,
    api_key: int | None = None,
) -> Message:
    """A :class:`Message` written as in the JSON: ``message("TopicRecord", "0", "0+", [...],
    api_key=2)``."""
    return Message(name, Versions.parse(valid), Versions.parse(flexible), tuple(fields), api_key)


# --- defaults -------------------------------------------------------------------------------


def default_value(f: Field) -> Any:
    """The value a field has when absent (``FieldSpec.fieldDefault``)."""
    d = f.default
    if f.is_array:
        return None if d == "null" else []
    if f.is_struct:
        return None if d == "null" else {g.json_name: default_value(g) for g in f.fields}
    t = f.type
    if t == "bool":
        return d is True or str(d).lower() == "true"
    if t == "float64":
        return float(d) if d not in (None, "") else 0.0
    if t in _FIXED:
        return _int_default(d)
    if t == "uuid":
        return ZERO_UUID if d in (None, "") else str(d)
    if t == "string":
        return None if d == "null" else ("" if d is None else str(d))
    if t == "bytes":
        return None if d == "null" else b""
    raise ValueError(f"unknown field type {t}")


def _int_default(d: object) -> int:
    if d is None or d == "":
        return 0
    if isinstance(d, int):
        return d
    text = str(d).strip()
    return int(text, 16) if text.lower().startswith(("0x", "-0x")) else int(text)


# --- uuids ----------------------------------------------------------------------------------


def uuid_from_bytes(data: bytes) -> str:
    """Kafka's ``Uuid.toString``: URL-safe base64 of the 16 bytes, no padding."""
    return base64.urlsafe_b64encode(bytes(data)).decode("ascii").rstrip("=")


def uuid_to_bytes(text: str) -> bytes:
    """The 16 bytes of a uuid in Kafka's text form (``Uuid.fromString``)."""
    raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    if len(raw) != 16:
        raise ValueError(f"not a Kafka uuid: {text!r}")
    return raw


# --- reading --------------------------------------------------------------------------------


class _Reader:
    __slots__ = ("buf", "end", "pos")

    def __init__(self, buf: memoryview, pos: int = 0, end: int | None = None) -> None:
        self.buf = buf
        self.pos = pos
        self.end = len(buf) if end is None else end

    @property
    def remaining(self) -> int:
        return self.end - self.pos

    def fail(self, reason: str) -> MessageDecodeError:
        return MessageDecodeError(reason, position=self.pos)

    def take(self, n: int, what: str) -> memoryview:
        if n > self.remaining:
            raise self.fail(f"{what}: needs {n} bytes, {self.remaining} left")
        start = self.pos
        self.pos += n
        return self.buf[start : self.pos]

    def fixed(self, kind: str, what: str) -> Any:
        s = _FIXED[kind]
        if s.size > self.remaining:
            raise self.fail(f"{what}: needs {s.size} bytes, {self.remaining} left")
        value = s.unpack_from(self.buf, self.pos)[0]
        self.pos += s.size
        return value

    def uvarint(self, what: str) -> int:
        # ByteUtils.readUnsignedVarint: at most 5 bytes, the result is a Java int.
        try:
            value, self.pos = read_unsigned_varint(self.buf, self.pos, self.end, what=what)
        except KafkaFormatError as exc:
            raise self.fail(exc.reason) from None
        return value


def read_message(
    msg: Message, data: bytes | bytearray | memoryview, version: int, *, exact: bool = False
) -> dict[str, Any]:
    """Read ``data`` as version ``version`` of ``msg`` (without any version prefix).

    ``exact`` requires every byte to be used (``MetadataRecordSerde`` checks that; the group
    and transaction coordinators do not). Raises :class:`MessageDecodeError`.
    """
    values, used = read_message_from(msg, data, version)
    if exact and used != len(data):
        raise MessageDecodeError(
            f"Found {len(data) - used} byte(s) of garbage after {msg.name}", position=used
        )
    return values


def read_message_from(
    msg: Message, data: bytes | bytearray | memoryview, version: int, offset: int = 0
) -> tuple[dict[str, Any], int]:
    """Read a message starting at ``offset``; returns its values and the position after it."""
    r = _Reader(memoryview(data).cast("B") if isinstance(data, memoryview) else memoryview(data))
    r.pos = offset
    values = _read_struct(msg.fields, r, version, version in msg.flexible, msg.name)
    return values, r.pos


def _read_struct(
    fields: tuple[Field, ...], r: _Reader, version: int, flexible: bool, where: str
) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for f in fields:
        if version in f.versions and version not in f.tagged:
            out[f.json_name] = _read_field(f, r, version, flexible, tagged=False, where=where)
        else:
            out[f.json_name] = default_value(f)
    if flexible:
        count = r.uvarint(f"{where}: tagged field count")
        unknown: dict[int, bytes] = {}
        for _ in range(count):
            tag = r.uvarint(f"{where}: tag")
            size = r.uvarint(f"{where}: size of tag {tag}")
            if size < 0:
                raise r.fail(f"{where}: tag {tag} has negative size {size}")
            body = r.take(size, f"{where}: tag {tag}")
            f = next((g for g in fields if g.tag == tag and not g.tagged.empty), None)
            if f is None:
                unknown[tag] = bytes(body)
                continue
            if version not in f.tagged or version not in f.versions:
                raise r.fail(f"{where}: Tag {tag} is not valid for version {version}")
            sub = _Reader(body)
            out[f.json_name] = _read_field(f, sub, version, True, tagged=True, where=where)
        if unknown:
            out[UNKNOWN_TAGGED] = unknown
    return out


def _read_field(
    f: Field, r: _Reader, version: int, flexible: bool, *, tagged: bool, where: str
) -> Any:
    what = f"{where}.{f.json_name}"
    nullable = version in f.nullable
    if f.is_array:
        n = r.uvarint(what) - 1 if flexible else r.fixed("int32", what)
        if n < 0:
            if not nullable:
                raise r.fail(f"non-nullable field {f.json_name} was serialized as null")
            return None
        if n > r.remaining:
            raise r.fail(
                f"Tried to allocate a collection of size {n}, but there are only "
                f"{r.remaining} bytes remaining."
            )
        if f.is_struct:
            return [_read_struct(f.fields, r, version, flexible, what) for _ in range(n)]
        return [_read_scalar(f.element, r, flexible, False, what) for _ in range(n)]
    if f.is_struct:
        if nullable:
            # Tagged: an unsigned varint, 0 = null; otherwise an int8, negative = null.
            is_null = r.uvarint(what) <= 0 if tagged else r.fixed("int8", what) < 0
            if is_null:
                return None
        return _read_struct(f.fields, r, version, flexible, what)
    return _read_scalar(f.type, r, flexible, nullable, what)


def _read_scalar(kind: str, r: _Reader, flexible: bool, nullable: bool, what: str) -> Any:
    if kind in _FIXED:
        return r.fixed(kind, what)
    if kind == "uuid":
        return uuid_from_bytes(r.take(16, what))
    if kind == "string":
        n = r.uvarint(what) - 1 if flexible else r.fixed("int16", what)
        if n < 0:
            if not nullable:
                raise r.fail(f"non-nullable field {what} was serialized as null")
            return None
        if n > 0x7FFF:
            raise r.fail(f"string field {what} had invalid length {n}")
        # Java's String(bytes, UTF_8) replaces malformed input the same way.
        return bytes(r.take(n, what)).decode("utf-8", errors="replace")
    if kind == "bytes":
        n = r.uvarint(what) - 1 if flexible else r.fixed("int32", what)
        if n < 0:
            if not nullable:
                raise r.fail(f"non-nullable field {what} was serialized as null")
            return None
        return bytes(r.take(n, what))
    raise r.fail(f"{what}: unknown field type {kind}")


# --- writing --------------------------------------------------------------------------------


def encode_uvarint(value: int) -> bytes:
    """An unsigned varint (``ByteUtils.writeUnsignedVarint``; ``value`` taken as 32 bits)."""
    return encode_unsigned_varint(value & 0xFFFFFFFF)


def write_message(msg: Message, values: Mapping[str, Any], version: int) -> bytes:
    """``values`` (keyed by JSON names; missing ones take their default) as version
    ``version`` of ``msg``, without a version prefix."""
    out = bytearray()
    _write_struct(msg.fields, values, version, version in msg.flexible, out)
    return bytes(out)


def _write_struct(
    fields: tuple[Field, ...],
    values: Mapping[str, Any],
    version: int,
    flexible: bool,
    out: bytearray,
) -> None:
    tagged: dict[int, bytes] = {}
    for f in fields:
        if version not in f.versions:
            continue
        value = values.get(f.json_name, default_value(f)) if values else default_value(f)
        if version in f.tagged:
            if value != default_value(f):
                body = bytearray()
                _write_field(f, value, version, True, body, tagged=True)
                tagged[f.tag] = bytes(body)  # type: ignore[index]
            continue
        _write_field(f, value, version, flexible, out, tagged=False)
    if not flexible:
        return
    for tag, body in (values.get(UNKNOWN_TAGGED) or {}).items() if values else ():
        tagged.setdefault(int(tag), bytes(body))
    out += encode_uvarint(len(tagged))
    for tag in sorted(tagged):
        out += encode_uvarint(tag) + encode_uvarint(len(tagged[tag])) + tagged[tag]


def _write_field(
    f: Field, value: Any, version: int, flexible: bool, out: bytearray, *, tagged: bool
) -> None:
    if f.is_array:
        if value is None:
            out += encode_uvarint(0) if flexible else struct.pack(">i", -1)
            return
        out += encode_uvarint(len(value) + 1) if flexible else struct.pack(">i", len(value))
        for item in value:
            if f.is_struct:
                _write_struct(f.fields, item, version, flexible, out)
            else:
                _write_scalar(f.element, item, flexible, out)
        return
    if f.is_struct:
        if version in f.nullable:
            if value is None:
                out += encode_uvarint(0) if tagged else b"\xff"
                return
            out += encode_uvarint(1) if tagged else b"\x01"
        _write_struct(f.fields, value or {}, version, flexible, out)
        return
    _write_scalar(f.type, value, flexible, out)


def _write_scalar(kind: str, value: Any, flexible: bool, out: bytearray) -> None:
    if kind in _FIXED:
        out += _FIXED[kind].pack(value)
    elif kind == "uuid":
        out += uuid_to_bytes(value)
    elif kind in ("string", "bytes"):
        if value is None:
            out += (
                encode_uvarint(0)
                if flexible
                else (b"\xff\xff" if kind == "string" else b"\xff" * 4)
            )
            return
        raw = value.encode("utf-8") if kind == "string" else bytes(value)
        if flexible:
            out += encode_uvarint(len(raw) + 1)
        else:
            out += struct.pack(">h" if kind == "string" else ">i", len(raw))
        out += raw
    else:
        raise ValueError(f"unknown field type {kind}")


# --- JSON, as Kafka's generated JsonConverters write it -------------------------------------


class JavaDouble(float):
    """A float rendered as Java's ``Double.toString`` (``1.0E7``), as Jackson writes it."""

    __slots__ = ()


def json_tree(msg_or_fields: Message | tuple[Field, ...], values: Mapping[str, Any], version: int):
    """The JSON node ``*JsonConverter.write(message, version)`` builds: the fields present in
    ``version`` in schema order, tagged ones only when not at their default; bytes as base64,
    uuids in Kafka's text form. Returns plain dicts and lists (render with :func:`json_text`)."""
    fields = msg_or_fields.fields if isinstance(msg_or_fields, Message) else msg_or_fields
    node: dict[str, Any] = {}
    for f in fields:
        if version not in f.versions:
            continue
        value = values.get(f.json_name, default_value(f))
        if version in f.tagged and value == default_value(f):
            continue
        node[f.json_name] = _json_value(f, value, version)
    return node


def _json_value(f: Field, value: Any, version: int) -> Any:
    if value is None:
        return None
    if f.is_array:
        if f.is_struct:
            return [json_tree(f.fields, item, version) for item in value]
        return [_json_scalar(f.element, item) for item in value]
    if f.is_struct:
        return json_tree(f.fields, value, version)
    return _json_scalar(f.type, value)


def _json_scalar(kind: str, value: Any) -> Any:
    if kind == "bytes":
        return base64.b64encode(value).decode("ascii")
    if kind == "float64":
        return JavaDouble(value)
    return value


def to_json(msg: Message, values: Mapping[str, Any], version: int) -> str:
    """``json_tree`` rendered as Jackson's ``JsonNode.toString()`` does."""
    return json_text(json_tree(msg, values, version))


_NEEDS_ESCAPE = re.compile(r'[\x00-\x1f"\\]')
_SHORT_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n"}
_SHORT_ESCAPES.update({"\f": "\\f", "\r": "\\r"})


def _quote(text: str) -> str:
    # Jackson: the usual short escapes, other control characters as \u00XX (upper-case hex),
    # everything else (non-ASCII included) as is.
    if _NEEDS_ESCAPE.search(text) is None:
        return f'"{text}"'
    escaped = _NEEDS_ESCAPE.sub(
        lambda m: _SHORT_ESCAPES.get(m.group(), f"\\u{ord(m.group()):04X}"), text
    )
    return f'"{escaped}"'


def _java_double(x: float) -> str:
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    if x == 0:
        return "-0.0" if math.copysign(1.0, x) < 0 else "0.0"
    if 1e-3 <= abs(x) < 1e7:
        text = repr(float(x))
        return text if "." in text or "e" in text else text + ".0"
    # Computerized scientific notation with the shortest digits that round-trip.
    sign, digits, exponent = Decimal(repr(float(x))).normalize().as_tuple()
    ds = "".join(map(str, digits))
    exp10 = exponent + len(ds) - 1  # type: ignore[operator]
    mantissa = ds[0] + "." + (ds[1:] or "0")
    return f"{'-' if sign else ''}{mantissa}E{exp10}"


def json_text(node: Any) -> str:
    """Compact JSON as Jackson writes a tree: no spaces, Java's double format."""
    if node is None:
        return "null"
    if node is True:
        return "true"
    if node is False:
        return "false"
    if isinstance(node, JavaDouble):
        return _java_double(node)
    if isinstance(node, int):
        return str(node)
    if isinstance(node, float):
        return _java_double(node)
    if isinstance(node, str):
        return _quote(node)
    if isinstance(node, Mapping):
        return "{" + ",".join(f"{_quote(str(k))}:{json_text(v)}" for k, v in node.items()) + "}"
    if isinstance(node, (list, tuple)):
        return "[" + ",".join(json_text(v) for v in node) + "]"
    if isinstance(node, (bytes, bytearray, memoryview)):
        return _quote(base64.b64encode(bytes(node)).decode("ascii"))
    raise TypeError(f"cannot render {type(node).__name__} as JSON")
