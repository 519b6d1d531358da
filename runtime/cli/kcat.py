"""``dump -f`` / ``-J`` / ``-s`` / ``-Z``: kcat's consumer output, offline.

What each piece does is read from kcat's sources (github.com/edenhill/kcat), not copied:

**-f FORMAT** (``format.c``: ``fmt_parse`` splits the string at ``%``, ``fmt_add`` turns a
literal's backslash escapes into bytes, ``fmt_msg_output_str`` prints a message):

====  =========================================================================================
%s    the value, its bytes as they are; nothing for a null *or empty* value (kcat tests the
      length), or ``NULL`` with ``-Z``; with ``-s value=PACK`` the unpacked value
%S    the value's length, ``-1`` for null
%R    the value's length as 4 bytes, big-endian (``htobe32``), ``ff ff ff ff`` for null
%k    the key, as %s does the value (``-s key=PACK``)
%K    the key's length, ``-1`` for null
%t    the topic (nothing for a file outside a ``topic-N`` directory, e.g. standard input)
%p    the partition (``-1`` outside a ``topic-N`` directory: librdkafka's "unassigned")
%o    the offset
%T    the timestamp in ms, as ``rd_kafka_message_timestamp`` gives it: ``-1`` for none (magic
      0); a LogAppendTime batch's records carry its max timestamp, as consumers see them
%h    the headers, ``name=value`` comma-separated (``print_headers``): ``name=`` for an empty
      value, ``name=NULL`` for a null one whatever ``-Z``, nothing when there are none
%%    a ``%``
====  =========================================================================================

Any other ``%x`` is refused as kcat refuses it (``Unsupported formatter: %x``; a trailing ``%``:
``Empty formatter``). Escapes in the literal text, as ``fmt_add``: ``\\n``, ``\\r``, ``\\t``;
``\\x`` then hexadecimal digits, and ``\\`` then decimal digits, are the number ``strtoul``
reads there (base 16; base 0: ``\\0101`` octal, ``\\0x41`` hex, ``\\65`` decimal), one byte of
it; a backslash before anything else is that character (``\\\\`` is a backslash); a NUL ends
that piece of literal text (kcat measures it with ``strlen``). kcat's default format is
``%s\\n`` (``main``): ``-s`` or ``-Z`` without ``-f`` use it.

**-s [key=|value=]PACK** (``kcat.c`` ``main`` and ``format.c`` ``pack_check`` / ``unpack``, after
Python's ``struct``): ``<`` little-endian, ``>`` big-endian (the default), ``b``/``B`` signed /
unsigned 8-bit, ``h``/``H`` 16-bit, ``i``/``I`` 32-bit, ``q``/``Q`` 64-bit integers in decimal,
``c`` one byte as it is, ``s`` the rest as a C string (up to a NUL), ``$`` the end of the data,
a space is printed. Bytes left over are ignored. Only non-empty keys and values are unpacked.
A key or value that does not match prints nothing of its record and one line on stderr in
kcat's words (``Failed to format message in T [P] at offset O: value truncated, expected 8
bytes to unpack q but only 3 bytes remaining``); the dump goes on, as kcat with ``-E`` does
(without it kcat exits there), and the exit status stays that of the log. ``avro`` needs a
schema registry and is refused.

**-J** (``json.c``: ``fmt_msg_output_json``): one object a line, keys in kcat's order,
``topic, partition, offset, tstype, ts, broker, headers, key, payload``: ``tstype``
(``create`` / ``logappend``) and ``ts`` only where the record has a timestamp (magic 1 and 2),
``broker`` is ``-1`` (no broker served the record), ``headers`` only where the record has some,
as a flat array ``[name, value, name, value, ...]`` (a null value is ``null``). kcat's Avro-only
``key_error`` / ``payload_error`` / ``*_schema_id`` never occur (no ``-s avro``). Keys, values
and header values are JSON strings of their bytes as yajl writes them unchecked: ``"``, ``\\``
and control characters escaped, every other byte as it is, so that bytes that are not UTF-8
come out as they are and such a line is not valid UTF-8 (decode it with ``surrogateescape``);
``--binary base64`` writes them base64-encoded instead: every line is then ASCII JSON. A file
outside a ``topic-N`` directory has ``"topic":null`` and ``"partition":-1``.

Beyond kcat: dump's decoders decode what ``%k`` / ``%s`` and ``-J``'s ``key`` / ``payload``
print: ``--key-decoder`` / ``--value-decoder`` (``json``, ``int``, ``hex``...), and an internal
topic's (``--offsets-decoder``, ``--group``, ...) both, as their text in UTF-8; ``-s`` and a
decoder are one or the other.

Deliberate differences from kcat, each where kcat's behaviour is an accident of C: ``<``
means little-endian as kcat documents it (kcat's ``unpack`` byte-swaps to big-endian either
way); ``c`` with no byte left is a truncation error (kcat reads past the buffer); a record
that fails to format prints nothing (kcat leaves the part already printed, without its
delimiter); ``-f`` with ``-J`` is refused (kcat would print ``-f``'s first literal after each
object).

Everything is built column by column from the fast path's Arrow batches (the records
``dump --jsonl`` reads): each token of the format is compiled once into a function from a
batch to the bytes of that token for every row, and the rows are joined.
"""

from __future__ import annotations

import argparse
import base64
import re
import struct
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TextIO

import pyarrow as pa

from ..files import kinds

__all__ = [
    "KcatOutput",
    "add_kcat_arguments",
    "compile_format",
    "compile_pack",
    "kcat_output",
    "literal",
]

#: kcat's default ``-f`` when none is given (``main``: ``%s`` then the ``-D`` delimiter).
DEFAULT_FORMAT = "%s\\n"
#: ``conf.null_str``: what ``-Z`` prints for a null (or empty) key or value.
NULL_STR = b"NULL"
#: ``pack_check``'s tokens.
PACK_TOKENS = " <>bBhHiIqQcs$"
#: No broker served an offline record: ``rd_kafka_message_broker_id``'s "unknown".
OFFLINE_BROKER = -1
#: librdkafka's ``RD_KAFKA_PARTITION_UA``: a file outside a ``topic-N`` directory.
NO_PARTITION = -1

Column = list[bytes]
Pack = Callable[[bytes], bytes]


class PackError(ValueError):
    """A key or value that does not match its pack string: kcat's ``errstr``."""


# --- rows of one Arrow batch ------------------------------------------------------------------


class Rows:
    """One Arrow batch's columns as Python lists, each built when a token first asks for it;
    ``failed``: row -> the first error formatting it met (kcat stops at the first)."""

    __slots__ = ("_batch", "_cache", "failed", "n")

    def __init__(self, batch: pa.RecordBatch) -> None:
        self._batch = batch
        self._cache: dict[str, list[Any]] = {}
        self.n = batch.num_rows
        self.failed: dict[int, str] = {}

    def column(self, name: str) -> list[Any]:
        found = self._cache.get(name)
        if found is None:
            if name == "ms":
                micros = self._batch.column("timestamp").cast(pa.int64()).to_pylist()
                found = [None if us is None else us // 1000 for us in micros]
            elif name in self._batch.schema.names:
                found = self._batch.column(name).to_pylist()
            else:
                found = [None] * self.n
            self._cache[name] = found
        return found

    def replace(self, name: str, values: list[Any]) -> None:
        """What the tokens read as column ``name`` from now on (decoded keys or values)."""
        self._cache[name] = values

    def where(self, i: int) -> str:
        """kcat's ``%s [%d]`` of a record: its topic and partition (its file when it has none)."""
        topic = self.column("topic")[i]
        partition = self.column("partition")[i]
        if topic is None:
            topic = self.column("file")[i] or "?"
        return f"{topic} [{NO_PARTITION if partition is None else partition}]"


# --- -f: the format string ---------------------------------------------------------------------


def _strtoul(text: bytes, at: int, base: int) -> tuple[int, int]:
    """C's ``strtoul(text + at, &end, base)`` for ``text[at]`` a digit (base 0 or 16): the
    value and the index just past what it read."""
    i = at
    if base in (0, 16) and text[i : i + 2].lower() == b"0x" and _is_hex(text, i + 2):
        i += 2
        base = 16
    elif base == 0:
        base = 8 if text[i : i + 1] == b"0" else 10
    digits = b"0123456789abcdef"[:base]
    start = i
    while i < len(text) and text[i : i + 1].lower() in digits:
        i += 1
    value = int(text[start:i], base) if i > start else 0
    return min(value, (1 << 64) - 1), i  # strtoul saturates at ULONG_MAX


def _is_hex(text: bytes, at: int) -> bool:
    return at < len(text) and text[at : at + 1].lower() in b"0123456789abcdef"


def literal(text: str) -> bytes:
    """A piece of ``-f``'s literal text as ``fmt_add`` converts it: its escapes turned into
    bytes, cut at the first NUL (kcat keeps it as a C string)."""
    src = text.encode("utf-8", "surrogateescape")
    out = bytearray()
    i = 0
    while i < len(src):
        c = src[i : i + 1]
        if c == b"\\" and i + 1 < len(src):
            i += 1
            c = src[i : i + 1]
            simple = {b"t": b"\t", b"n": b"\n", b"r": b"\r"}.get(c)
            if simple is not None:
                out += simple
            else:
                base = 0
                if c == b"x":
                    i += 1
                    base = 16
                    c = src[i : i + 1]  # empty at the end: kcat copies the NUL there
                if c.isdigit():
                    value, end = _strtoul(src, i, base)
                    out.append(value & 0xFF)
                    i = end - 1
                else:
                    out += c or b"\0"
        else:
            out += c
        i += 1
    return bytes(out).split(b"\0", 1)[0]


Token = Callable[[Rows], Column]


def compile_format(
    fmt: str,
    key_pack: Pack | None = None,
    value_pack: Pack | None = None,
    null_str: bytes | None = None,
) -> list[Token]:
    """``-f``'s string as ``fmt_parse`` reads it, one function per token; a ValueError in
    kcat's words for a token it does not know."""
    tokens: list[Token] = []
    i = 0
    while i < len(fmt):
        at = fmt.find("%", i)
        if at < 0:
            _add_literal(tokens, fmt[i:])
            break
        if at > i:
            _add_literal(tokens, fmt[i:at])
        if at + 1 >= len(fmt):
            raise ValueError("Empty formatter")
        letter = fmt[at + 1]
        if letter == "%":
            tokens.append(_constant(b"%"))
        else:
            make = _TOKENS.get(letter)
            if make is None:
                raise ValueError(f"Unsupported formatter: %{letter}")
            tokens.append(make(key_pack, value_pack, null_str))
        i = at + 2
    return tokens


def _add_literal(tokens: list[Token], text: str) -> None:
    data = literal(text)
    if data:
        tokens.append(_constant(data))


def _constant(data: bytes) -> Token:
    return lambda rows: [data] * rows.n


def _number(values: Sequence[int | None], none: int) -> Column:
    return [b"%d" % (none if v is None else v) for v in values]


def _data(name: str, pack: Pack | None, null_str: bytes | None) -> Token:
    """%k / %s: the bytes (or their unpacking) where there are some, else ``-Z``'s string."""
    empty = null_str if null_str is not None else b""

    def token(rows: Rows) -> Column:
        data = rows.column(name)
        if pack is None:
            return [d if d else empty for d in data]
        out: Column = []
        for i, d in enumerate(data):
            if not d:
                out.append(empty)
                continue
            try:
                out.append(pack(d))
            except PackError as exc:
                rows.failed.setdefault(i, str(exc))
                out.append(b"")
        return out

    return token


def _length(name: str) -> Token:
    return lambda rows: [b"-1" if d is None else b"%d" % len(d) for d in rows.column(name)]


def _binary_length(rows: Rows) -> Column:
    return [struct.pack(">i", -1 if d is None else len(d)) for d in rows.column("value")]


def _topic(rows: Rows) -> Column:
    return [b"" if t is None else t.encode("utf-8") for t in rows.column("topic")]


def _headers(rows: Rows) -> Column:
    out: Column = []
    for headers in rows.column("headers"):
        if not headers:
            out.append(b"")
            continue
        parts = []
        for h in headers:
            value = h["value"]
            parts.append(h["key"].encode("utf-8") + b"=" + (b"NULL" if value is None else value))
        out.append(b",".join(parts))
    return out


_TOKENS: dict[str, Callable[[Pack | None, Pack | None, bytes | None], Token]] = {
    "o": lambda k, v, z: lambda rows: _number(rows.column("offset"), -1),
    "k": lambda k, v, z: _data("key", k, z),
    "K": lambda k, v, z: _length("key"),
    "s": lambda k, v, z: _data("value", v, z),
    "S": lambda k, v, z: _length("value"),
    "R": lambda k, v, z: _binary_length,
    "t": lambda k, v, z: _topic,
    "p": lambda k, v, z: lambda rows: _number(rows.column("partition"), NO_PARTITION),
    "T": lambda k, v, z: lambda rows: _number(rows.column("ms"), -1),
    "h": lambda k, v, z: _headers,
}


# --- -s: pack strings ---------------------------------------------------------------------------

#: Integer tokens: (size, signed).
_INTS = {"b": (1, True), "B": (1, False), "h": (2, True), "H": (2, False),
         "i": (4, True), "I": (4, False), "q": (8, True), "Q": (8, False)}  # fmt: skip


def check_pack(what: str, pack: str) -> None:
    """``pack_check``: a ValueError in kcat's words for an empty string or an unknown token."""
    if not pack:
        raise ValueError(f"{what} pack-format must not be empty")
    for c in pack:
        if c not in PACK_TOKENS:
            raise ValueError(f"Invalid token '{c}' in {what} pack-format, see -s usage.")


def compile_pack(pack: str, what: str = "value") -> Pack:
    """A checked pack string as a function from bytes to what ``unpack`` prints for them;
    it raises :class:`PackError` in kcat's words (``what``: "key" or "value") where the
    bytes do not match."""
    steps: list[tuple[str, bool]] = []  # (token, little-endian)
    little = False
    for c in pack:
        if c == "<":
            little = True
        elif c == ">":
            little = False
        else:
            steps.append((c, little))

    def unpack(data: bytes) -> bytes:
        out = bytearray()
        at = 0
        for c, le in steps:
            left = len(data) - at
            if c == " ":
                out += b" "
            elif c == "s":
                out += data[at:].split(b"\0", 1)[0]  # printf's %.*s stops at a NUL
                at = len(data)
            elif c == "$":
                if left > 0:
                    raise PackError(f"expected {what} end-of-input, but {left} bytes remaining")
            else:
                size, signed = _INTS.get(c, (1, False))
                if size > left:
                    raise PackError(
                        f"{what} truncated, expected {size} bytes to unpack {c} "
                        f"but only {left} bytes remaining"
                    )
                piece = data[at : at + size]
                at += size
                if c == "c":
                    out += piece
                else:
                    order = "little" if le else "big"
                    out += b"%d" % int.from_bytes(piece, order, signed=signed)
        return bytes(out)

    return unpack


# --- -J: the JSON envelope ------------------------------------------------------------------------

_ESCAPES = {b'"': b'\\"', b"\\": b"\\\\", b"\n": b"\\n", b"\r": b"\\r", b"\t": b"\\t",
            b"\f": b"\\f", b"\b": b"\\b"}  # fmt: skip
_ESCAPED = re.compile(rb'["\\\x00-\x1f]')
_CONTROL = re.compile(rb"[\x00-\x1f]")


def _escape(match: re.Match[bytes]) -> bytes:
    c = match.group()
    return _ESCAPES.get(c) or b"\\u00%02X" % c[0]  # yajl's CharToHex: upper case


def json_string(data: bytes) -> bytes:
    """``data`` as a JSON string as ``yajl_gen_string`` writes it without UTF-8 checks."""
    if _CONTROL.search(data) is None:  # the common case, in C: quotes and backslashes only
        return b'"' + data.replace(b"\\", b"\\\\").replace(b'"', b'\\"') + b'"'
    return b'"' + _ESCAPED.sub(_escape, data) + b'"'


def _base64_string(data: bytes) -> bytes:
    return b'"' + base64.b64encode(data) + b'"'


_TSTYPES = {0: b"create", 1: b"logappend"}


def json_lines(rows: Rows, binary: bool) -> Column:
    """One ``fmt_msg_output_json`` object per row, each ending in kcat's ``-D`` default."""
    string = _base64_string if binary else json_string
    topics = rows.column("topic")
    partitions = rows.column("partition")
    offsets = rows.column("offset")
    stamps = rows.column("ms")
    types = rows.column("timestampType")
    all_headers = rows.column("headers")
    keys = rows.column("key")
    values = rows.column("value")
    out: Column = []
    for i in range(rows.n):
        topic = topics[i]
        partition = partitions[i]
        parts = [
            b'{"topic":',
            b"null" if topic is None else json_string(topic.encode("utf-8")),
            b',"partition":%d,"offset":%d'
            % (NO_PARTITION if partition is None else partition, offsets[i]),
        ]
        tstype = types[i]
        if tstype is not None and tstype >= 0:
            ms = stamps[i]
            kind = _TSTYPES.get(tstype, b"unknown")
            parts.append(b',"tstype":"%s","ts":%s' % (kind, b"null" if ms is None else b"%d" % ms))
        parts.append(b',"broker":%d' % OFFLINE_BROKER)
        headers = all_headers[i]
        if headers:
            pairs = []
            for h in headers:
                value = h["value"]
                pairs.append(json_string(h["key"].encode("utf-8")))
                pairs.append(b"null" if value is None else string(value))
            parts.append(b',"headers":[' + b",".join(pairs) + b"]")
        key, value = keys[i], values[i]
        parts.append(b',"key":' + (b"null" if key is None else string(key)))
        parts.append(b',"payload":' + (b"null" if value is None else string(value)) + b"}\n")
        out.append(b"".join(parts))
    return out


# --- the output ---------------------------------------------------------------------------------


class _Row:
    """What an internal topic's decoder reads of a record (``messages.coordinator.
    HasKeyValue``)."""

    __slots__ = ("key", "offset", "value")

    def __init__(self, offset: int, key: bytes | None, value: bytes | None) -> None:
        self.offset, self.key, self.value = offset, key, value


def _utf8(text: str | None) -> bytes | None:
    return None if text is None else text.encode("utf-8", "surrogateescape")


class KcatOutput:
    """``-f`` or ``-J``: turns one Arrow batch of records (``iter_arrow_batches``' columns,
    headers included) into the bytes to write; failures to format go to ``err``.

    With dump's decoders (:meth:`decoding`), ``%k`` / ``%s`` and ``-J``'s ``key`` / ``payload``
    are the decoded text (UTF-8) instead of the bytes: ``--key-decoder`` /
    ``--value-decoder``, or an internal topic's decoder (``--offsets-decoder``, ``--group``...)
    for both."""

    def __init__(self, tokens: list[Token] | None = None, binary: bool = False) -> None:
        self.tokens = tokens  # None: -J
        self.binary = binary
        self.key_decoder: Callable[[bytes], str] | None = None
        self.value_decoder: Callable[[bytes], str] | None = None
        self.record_decoder: Callable[[Any], tuple[str | None, str | None]] | None = None

    def decoding(
        self,
        key: Callable[[bytes], str] | None = None,
        value: Callable[[bytes], str] | None = None,
        record: Callable[[Any], tuple[str | None, str | None]] | None = None,
    ) -> KcatOutput:
        self.key_decoder, self.value_decoder, self.record_decoder = key, value, record
        return self

    def _decode(self, rows: Rows) -> None:
        """Put the decoded keys and values in the rows' place of the bytes."""
        keys, values = rows.column("key"), rows.column("value")
        if self.record_decoder is not None:
            offsets = rows.column("offset")
            pairs = [
                self.record_decoder(_Row(*row)) for row in zip(offsets, keys, values, strict=True)
            ]
            rows.replace("key", [_utf8(k) for k, _ in pairs])
            rows.replace("value", [_utf8(v) for _, v in pairs])
            return
        if self.key_decoder is not None:
            decode = self.key_decoder
            rows.replace("key", [None if k is None else _utf8(decode(k)) for k in keys])
        if self.value_decoder is not None:
            decode = self.value_decoder
            rows.replace("value", [None if v is None else _utf8(decode(v)) for v in values])

    def __call__(self, batch: pa.RecordBatch, err: TextIO) -> Column:
        rows = Rows(batch)
        if self.key_decoder or self.value_decoder or self.record_decoder:
            self._decode(rows)
        if self.tokens is None:
            return json_lines(rows, self.binary)
        columns = [token(rows) for token in self.tokens]
        lines = [b"".join(parts) for parts in zip(*columns, strict=True)]
        if not rows.failed:
            return lines
        offsets = rows.column("offset")
        for i in sorted(rows.failed):
            err.write(
                f"warning: Failed to format message in {rows.where(i)} at offset "
                f"{offsets[i]}: {rows.failed[i]}\n"
            )
        return [line for i, line in enumerate(lines) if i not in rows.failed]


# --- command line ---------------------------------------------------------------------------------


def add_kcat_arguments(parser: argparse.ArgumentParser) -> None:
    """kcat's output options, for ``dump``."""
    group = parser.add_argument_group(
        "kcat's output (logs only; records read as --jsonl reads them)",
        "-f tokens: %s value, %S its length (-1: null), %R its length as a big-endian int32,\n"
        "%k key, %K its length, %t topic, %p partition (-1 outside a topic-N dir), %o offset,\n"
        "%T timestamp ms (-1: none), %h headers (k=v,k2=NULL), %%; escapes \\n \\r \\t \\xHH\n"
        "\\NNN \\\\. Null and empty keys and values print nothing (-Z: NULL). Unknown tokens\n"
        "are refused. -J: kcat's JSON object, keys topic, partition, offset, tstype, ts,\n"
        "broker (-1: none offline), headers, key, payload; bytes that are not UTF-8 are\n"
        "written as they are, as kcat's yajl writes them (--binary base64: ASCII JSON).\n"
        "A key or value -s cannot unpack: a warning line, its record left out, exit 0.\n"
        "dump's decoders (--key-decoder, --value-decoder, --offsets-decoder, --group...)\n"
        "decode what %k / %s and -J's key / payload print.",
    )
    modes = group.add_mutually_exclusive_group()
    modes.add_argument(
        "-f",
        "--format",
        dest="kcat_format",
        metavar="FORMAT",
        help="each record as kcat -f prints it, e.g. '%%t [%%p] @%%o: %%k=%%s\\n'",
    )
    modes.add_argument(
        "-J",
        "--kcat-json",
        action="store_true",
        help="each record as kcat -J's JSON object, one a line",
    )
    group.add_argument(
        "-s",
        "--serdes",
        dest="kcat_serdes",
        action="append",
        metavar="[key=|value=]PACK",
        help="unpack keys and/or values with kcat's pack string: < > b B h H i I q Q c s $ "
        "and space (big-endian unless <); with -f (kcat's default -f '%%s\\n' without one)",
    )
    group.add_argument(
        "-Z",
        "--null-as-null",
        action="store_true",
        help="print null (and empty) keys and values as NULL in -f (-J: always null)",
    )
    group.add_argument(
        "--binary",
        choices=["raw", "base64"],
        help="with -J: keys, values and header values as their bytes (raw, the default, "
        "kcat's) or base64-encoded (valid JSON whatever they hold)",
    )


#: dump's options that name another output or what kcat's does not print.
_CONFLICTS = (
    ("jsonl", "--jsonl"),
    ("batches", "--batches"),
    ("canonical", "--canonical"),
    ("deep_iteration", "--deep-iteration"),
    ("print_data_log", "--print-data-log"),
    ("skip_record_metadata", "--skip-record-metadata"),
    ("max_bytes", "--max-bytes"),
)


#: dump's decoders: with -f / -J they decode what %k / %s and key / payload print.
_DECODERS = (
    ("key_decoder", "--key-decoder"),
    ("value_decoder", "--value-decoder"),
    ("key_decoder_class", "--key-decoder-class"),
    ("value_decoder_class", "--value-decoder-class"),
    ("record_decoder", "an internal topic's decoder"),
)


def kcat_output(args: argparse.Namespace, files: Sequence[str]) -> KcatOutput | None:
    """The output ``-f`` / ``-J`` / ``-s`` / ``-Z`` ask for (None: neither); a ValueError of
    one line for a combination that cannot be carried out."""
    fmt = getattr(args, "kcat_format", None)
    as_json = getattr(args, "kcat_json", False)
    serdes = getattr(args, "kcat_serdes", None) or []
    null = getattr(args, "null_as_null", False)
    binary = getattr(args, "binary", None)
    if binary is not None and not as_json:
        raise ValueError("--binary goes with -J (-f prints the bytes themselves)")
    if as_json and serdes:
        raise ValueError("-s goes with -f: kcat's -J writes keys and values unconverted")
    decoders = [flag for attr, flag in _DECODERS if getattr(args, attr, None)]
    if serdes and decoders:
        raise ValueError(f"-s and {decoders[0]} both convert keys or values: give one")
    mode = "-J" if as_json else "-f"
    if fmt is None and not as_json:
        if not serdes and not null:
            return None
        fmt = DEFAULT_FORMAT  # kcat's own output when no -f is given
        mode = "-s" if serdes else "-Z"
    for attr, flag in _CONFLICTS:
        value = getattr(args, attr, None)
        if value:
            raise ValueError(f"{mode} prints records kcat's way: {flag} does not go with it")
    for path in files:
        kind = kinds.classify(Path(path).name)
        if kind is not None and kind is not kinds.LOG:
            raise ValueError(f"{mode} prints the records of logs; {path} holds none")
    if as_json:
        return KcatOutput(binary=binary == "base64")
    key_pack, value_pack = _packs(serdes)
    return KcatOutput(compile_format(fmt, key_pack, value_pack, NULL_STR if null else None))


def _packs(serdes: Sequence[str]) -> tuple[Pack | None, Pack | None]:
    """``-s``'s values as kcat's ``main`` reads them, the last one for a field winning."""
    packs: dict[str, str] = {}
    for spec in serdes:
        field = None
        for name in ("key", "value"):
            if spec.startswith(name + "="):
                field, spec = name, spec[len(name) + 1 :]
                break
        for name in ("key", "value") if field is None else (field,):
            if spec == "avro":
                raise ValueError(
                    "-s avro decodes through a schema registry, which an offline dump has "
                    "none of; print the raw payload (-f '%s'), or decode payloads with "
                    "--value-decoder in the text and --jsonl outputs"
                )
            check_pack(name, spec)
            packs[name] = spec
    return tuple(  # type: ignore[return-value]
        compile_pack(packs[name], name) if name in packs else None for name in ("key", "value")
    )
