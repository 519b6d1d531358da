"""Small Construct classes that Construct 2.10.70's ``compile()`` can inline.

Construct compiles a schema into Python source, but every class without ``_emitparse`` (VarInt,
ZigZag, GreedyRange, Checksum, every Adapter) falls back to an interpreted call that embeds the
object's ``id()`` in the source: slow and non-deterministic. The classes here fill those gaps.

Each parse routine is written ONCE, as source text (a ``Helper``): the interpreted ``_parse``
calls the function that text defines, and ``_emitparse`` appends the same text to the compiled
module. Interpreted and compiled parsing therefore cannot drift apart.
"""

from __future__ import annotations

import enum
import io
from typing import Any

from construct import (
    Construct,
    Enum,
    ListContainer,
    SizeofError,
    StringError,
    Subconstruct,
)
from construct.core import evaluate

# What a compiled module sees: construct's own preamble does `from construct import *` and
# `from io import BytesIO`, so helpers may use exactly those names.
_PRELUDE = "from construct import *\nfrom io import BytesIO\n"


class Helper:
    """A function defined by source text, usable here and emittable into compiled code."""

    def __init__(self, name: str, source: str) -> None:
        self.name = name
        self.source = source.strip("\n")
        namespace: dict[str, Any] = {}
        exec(compile(_PRELUDE + self.source, f"<construct helper {name}>", "exec"), namespace)
        self.func = namespace[name]

    def emit(self, code: Any) -> str:
        """Add the definition to a compiled module (once) and return the function's name."""
        code.append(self.source)
        return self.name


READ_EXACT = Helper(
    "read_exact",
    """
def read_exact(io, length):
    # compiled Bytes() does io.read(n) and silently returns fewer bytes at the end of input
    if length < 0:
        raise StreamError("negative length %d" % (length,))
    data = io.read(length)
    if len(data) != length:
        raise StreamError("wanted %d bytes, found %d" % (length, len(data)))
    return data
""",
)

ENTRIES_TO_END = Helper(
    "entries_to_end",
    """
def entries_to_end(io, entry_size):
    # entries fill the rest of the stream; a partial entry means a damaged file
    start = io.tell()
    end = io.seek(0, 2)
    io.seek(start)
    remaining = end - start
    if remaining % entry_size:
        raise CheckError(
            "%d bytes is not a multiple of the %d-byte entry size" % (remaining, entry_size)
        )
    return remaining // entry_size
""",
)


class ExactBytes(Construct):
    """``Bytes(length)`` that fails on a short read in compiled code too."""

    def __init__(self, length: Any) -> None:
        super().__init__()
        self.length = length

    def _parse(self, stream, context, path):
        return READ_EXACT.func(stream, evaluate(self.length, context))

    def _build(self, obj, stream, context, path):
        length = evaluate(self.length, context)
        data = bytes(obj)
        if len(data) != length:
            raise StringError(f"bytes of length {len(data)} where {length} was declared", path=path)
        stream.write(data)
        return obj

    def _sizeof(self, context, path):
        return evaluate(self.length, context)

    def _emitparse(self, code):
        return f"{READ_EXACT.emit(code)}(io, {self.length!r})"


class ExactSized(Subconstruct):
    """``FixedSized(length, subcon)`` that fails on a short read in compiled code too."""

    def __init__(self, length: Any, subcon: Construct) -> None:
        super().__init__(subcon)
        self.length = length

    def _parse(self, stream, context, path):
        data = READ_EXACT.func(stream, evaluate(self.length, context))
        return self.subcon._parsereport(io.BytesIO(data), context, path)

    def _build(self, obj, stream, context, path):
        length = evaluate(self.length, context)
        inner = io.BytesIO()
        built = self.subcon._build(obj, inner, context, path)
        data = inner.getvalue()
        if len(data) != length:
            raise StringError(f"built {len(data)} bytes where {length} was declared", path=path)
        stream.write(data)
        return built

    def _sizeof(self, context, path):
        return evaluate(self.length, context)

    def _emitparse(self, code):
        data = f"{READ_EXACT.emit(code)}(io, {self.length!r})"
        return f"restream({data}, lambda io: ({self.subcon._compileparse(code)}))"


class Utf8String(ExactBytes):
    """A UTF-8 string of a given byte length (Construct's PaddedString would strip NULs)."""

    def _parse(self, stream, context, path):
        return super()._parse(stream, context, path).decode("utf-8")

    def _build(self, obj, stream, context, path):
        super()._build(obj.encode("utf-8"), stream, context, path)
        return obj

    def _emitparse(self, code):
        return f"{super()._emitparse(code)}.decode('utf-8')"


class EntriesToEnd(Subconstruct):
    """Fixed-size entries up to the end of the stream (a compilable GreedyRange for indexes)."""

    def __init__(self, subcon: Construct, entry_size: int) -> None:
        super().__init__(subcon)
        self.entry_size = entry_size

    def _parse(self, stream, context, path):
        count = ENTRIES_TO_END.func(stream, self.entry_size)
        return ListContainer(self.subcon._parsereport(stream, context, path) for _ in range(count))

    def _build(self, obj, stream, context, path):
        for entry in obj:
            self.subcon._build(entry, stream, context, path)
        return obj

    def _sizeof(self, context, path):
        raise SizeofError("entries run to the end of the stream", path=path)

    def _emitparse(self, code):
        count = f"{ENTRIES_TO_END.emit(code)}(io, {self.entry_size})"
        return f"ListContainer(({self.subcon._compileparse(code)}) for i in range({count}))"


class DerivedEnum(Enum):
    """``Enum`` over a ``Computed``: decodes on parse, and on build lets the Computed decide.

    Plain ``Enum(Computed(...))`` cannot build, as Enum tries to map the absent value.
    """

    def __init__(self, subcon: Construct, codes: type[enum.IntEnum]) -> None:
        super().__init__(subcon, codes)

    def _encode(self, obj, context, path):
        return None if obj is None else super()._encode(obj, context, path)


class ParseOnly(Subconstruct):
    """Compile only the parser: compiled building is not offered (use the builders instead).

    Construct compiles parse and build together; building needs Rebuild functions and
    length/CRC back-filling that are plain Python, which would be linked by object id into the
    source. This wrapper keeps the emitted source free of such links.
    """

    def _parse(self, stream, context, path):
        return self.subcon._parsereport(stream, context, path)

    def _build(self, obj, stream, context, path):
        return self.subcon._build(obj, stream, context, path)

    def _sizeof(self, context, path):
        return self.subcon._sizeof(context, path)

    def _emitparse(self, code):
        return self.subcon._compileparse(code)

    def _emitbuild(self, code):
        code.append(
            """
def build_not_compiled():
    raise NotImplementedError("compiled schemas only parse: build with kafka_format.schemas")
"""
        )
        return "build_not_compiled()"
