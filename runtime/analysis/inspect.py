"""One batch as a tree of schema fields with byte ranges, for ``kafka-format inspect``.

The ranges come from the Kaitai *debug* build (``generated/kaitai_debug``): compiled with
``debug=true``, every parsed object keeps ``_debug[field] = {'start', 'end'}`` (plus ``'arr'``
with one start/end per element of a repeated field), counted in the stream the object was read
from. A sized field (a record's ``body``, a batch's ``records``) is read from a substream of its
own bytes, so its children count from 0: we add the substream's absolute start. Every range in
the tree is absolute: a file position for the batch, an offset into the decompressed bytes for
decompressed records.

Leaves tile their pane: bytes that no schema field claims (a record body longer than its
fields, records after ``records_count``, what follows a parse error) become ``(unparsed)``
leaves, so the hex dump never has silent holes. Rendering is here too: a rich terminal view
and one self-contained HTML page (``inspect_page.html``, filled with JSON data, never with
markup built from record bytes).
"""

from __future__ import annotations

import base64
import functools
import hashlib
import html
import inspect
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from enum import IntEnum
from importlib import resources

from kaitaistruct import BytesIO, KaitaiStream, KaitaiStruct
from rich.console import Console
from rich.text import Text

from ...generated.kaitai_debug.control_record_key import ControlRecordKey
from ...generated.kaitai_debug.end_txn_marker import EndTxnMarker
from ...generated.kaitai_debug.legacy_message import LegacyMessage
from ...generated.kaitai_debug.record_batch import RecordBatch
from ...generated.kaitai_debug.record_list import RecordList
from ...generated.kaitai_debug.varint import Varint
from ..errors import CorruptBatchError, FramingError, KafkaFormatError
from ..format import layout, messages
from ..format.codecs import DEFAULT_MAX_BYTES, decompress, resolve_codec
from ..format.crc import FrameCrc, frame_crc
from ..format.framing import iter_frames
from ..model import TruncatedTail
from .inspect_verdict import readers_verdict

__all__ = [
    "PALETTE",
    "BatchView",
    "BitField",
    "Field",
    "Pane",
    "inspect_frame",
    "iter_leaves",
    "render_html",
    "render_terminal",
    "struct_fields",
]

#: Mid-tone colours that read on dark and light terminals and tint page cells well; fields
#: get them in order of first appearance, so neighbours always differ.
PALETTE = (
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b",
    "#e377c2", "#bcbd22", "#17becf", "#f032e6", "#469990", "#e6a800",
)  # fmt: skip
UNPARSED = "(unparsed)"
_INDEX = re.compile(r"\[\d+\]")
_PAGE_SCRIPT = re.compile(r"<script>(.*?)</script>", re.DOTALL)
_BITS_READ = re.compile(r"self\.(\w+) = .*?read_bits_int_be\((\d+)\)")


@dataclass(slots=True)
class BitField:
    """One bit field of a packed integer (attributes), bits numbered from the LSB."""

    name: str
    high: int
    low: int
    value: str


@dataclass(slots=True)
class Field:
    """A schema field: its path, absolute byte range [start, end) and a value preview."""

    path: str
    name: str
    start: int
    end: int
    value: str = ""
    children: list[Field] = field(default_factory=list)
    #: The parsed value of a leaf (int, bool, enum, bytes or str); None for groups.
    raw: object = None
    bits: list[BitField] = field(default_factory=list)
    note: str = ""
    problem: bool = False
    #: Palette index, shared by every field with the same path once indices are dropped.
    colour: int = -1
    #: A struct or array (its bytes belong to its children), even when it has none.
    group: bool = False

    @property
    def size(self) -> int:
        return self.end - self.start

    @property
    def unparsed(self) -> bool:
        return self.name == UNPARSED


@dataclass(slots=True)
class Pane:
    """Bytes shown as one hex dump, with the fields that describe them."""

    title: str
    data: bytes
    #: Position of data[0] as displayed: a file position, or 0 for decompressed bytes.
    base: int
    fields: list[Field]
    label: str = "file position"


@dataclass(slots=True)
class BatchView:
    """Everything ``inspect`` shows about one batch."""

    file: str
    position: int
    magic: int
    base_offset: int
    size: int
    codec: str
    crc: FrameCrc | None
    panes: list[Pane]
    problems: list[KafkaFormatError] = field(default_factory=list)

    @property
    def summary(self) -> str:
        kind = "record batch" if self.magic >= 2 else "legacy message"
        return (
            f"{self.file} @{self.position}: {kind} (magic {self.magic}), base offset "
            f"{self.base_offset}, {self.size} bytes, codec {self.codec}"
        )


# --- the field tree from a Kaitai debug parse ---------------------------------------------


def struct_fields(obj: KaitaiStruct, base: int, prefix: str = "") -> list[Field]:
    """The fields of a debug-parsed object (also a partly parsed one).

    ``base`` is the absolute position of byte 0 of the stream ``obj`` was read from.
    """
    fields = []
    debug = obj._debug
    for name in type(obj).SEQ_FIELDS:
        info = debug.get(name)
        if not info or "start" not in info:
            continue  # an absent optional field, or one the parse never reached
        path = f"{prefix}.{name}" if prefix else name
        start = base + info["start"]
        end = base + info["end"] if "end" in info else None
        raw = getattr(obj, f"_raw_{name}", None)
        if end is None and isinstance(raw, bytes):
            end = start + len(raw)  # the substream was cut out whole; its parse failed
        value = getattr(obj, name, None)
        fields.append(_field(obj, name, path, value, start, end, info.get("arr"), base))
    return fields


def _field(
    parent: KaitaiStruct,
    name: str,
    path: str,
    value,
    start: int,
    end: int | None,
    arr: list[dict] | None,
    base: int,
) -> Field:
    node = Field(path, name, start, end if end is not None else start)
    if isinstance(value, list) and arr is not None:
        node.group = True
        for i, item in enumerate(arr):
            elem = value[i] if i < len(value) else None
            item_end = base + item["end"] if "end" in item else None
            node.children.append(
                _field(
                    parent,
                    f"{name}[{i}]",
                    f"{path}[{i}]",
                    elem,
                    base + item["start"],
                    item_end,
                    None,
                    base,
                )
            )
        _close(node, end)
        return node
    if isinstance(value, KaitaiStruct) and not isinstance(value, Varint):
        layout = _bit_layout(type(value))
        if layout:
            return _bits_field(node, value, layout, end)
        node.group = True
        # A sized field is read from a substream of its own bytes, counted from 0.
        child_base = base if value._io is parent._io else start
        if list(type(value).SEQ_FIELDS) == [name]:
            # record_list's only field is its array, also named `records`: show records[i]
            # right under the batch's `records` rather than as records.records[i].
            (inner,) = struct_fields(value, child_base, path.rpartition(".")[0]) or (node,)
            node.children = inner.children if inner is not node else []
        else:
            node.children = struct_fields(value, child_base, path)
        _close(node, end)
        return node
    if end is None or value is None:
        node.problem = True
        node.value = "?"
    else:
        node.raw = value.value if isinstance(value, Varint) else value
        node.value = _preview(name, value)
    return node


def _close(node: Field, end: int | None) -> None:
    """Set a container's end when the parse stopped inside it, and mark it."""
    if end is None:
        node.problem = True
        node.end = max([node.start, *(c.end for c in node.children)])
    else:
        node.end = end


@functools.cache
def _bit_layout(cls: type) -> tuple[tuple[str, int], ...]:
    """(name, width) of each bit field of a generated type, read from its ``_read``.

    The debug build records byte positions only, so bit fields have empty or overlapping
    ranges; their widths are in the generated code's ``read_bits_int_be(n)`` calls.
    """
    try:
        source = inspect.getsource(cls._read)
    except (OSError, TypeError):
        return ()
    found = tuple((m[1], int(m[2])) for m in _BITS_READ.finditer(source))
    return found if found and [n for n, _ in found] == list(cls.SEQ_FIELDS) else ()


def _bits_field(node: Field, value: KaitaiStruct, layout, end: int | None) -> Field:
    total = sum(width for _, width in layout)
    high = total - 1
    parts = []
    raw = 0
    for bit_name, width in layout:
        bit_value = getattr(value, bit_name, None)
        shown = "?" if bit_value is None else _preview(bit_name, bit_value)
        node.bits.append(BitField(bit_name, high, high - width + 1, shown))
        raw |= int(bit_value or 0) << (high - width + 1)
        if bit_value and bit_name != "reserved":
            parts.append(f"{bit_name}={shown}")
        high -= width
    node.problem = end is None
    node.raw = raw
    node.value = ", ".join(parts) if parts else "0"
    return node


def _preview(name: str, value) -> str:
    if isinstance(value, Varint):
        value = value.value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, IntEnum):
        return f"{value.name} ({int(value)})"
    if isinstance(value, int):
        if name == "crc":
            return f"0x{value:08x} ({value})"
        if name.startswith("len_") and value < 0:
            return f"{value} (null)"
        return str(value)
    if isinstance(value, str):
        return json.dumps(value if len(value) <= 64 else value[:64] + "…", ensure_ascii=False)
    if isinstance(value, bytes | bytearray):
        return preview_bytes(bytes(value))
    return str(value)


def preview_bytes(data: bytes, limit: int = 48) -> str:
    """Short display form of bytes: quoted text when it is printable UTF-8, else hex."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        text = None
    more = f"… ({len(data)} bytes)" if len(data) > limit else ""
    if text is not None and text.isprintable():
        shown = text[:limit]
        return json.dumps(shown, ensure_ascii=False) + more
    return data[:limit].hex(" ") + more


def fill_gaps(fields: list[Field], start: int, end: int, prefix: str) -> list[Field]:
    """Children of [start, end) with an ``(unparsed)`` leaf for every byte no field claims."""
    out: list[Field] = []
    pos = start
    for child in sorted(fields, key=lambda f: (f.start, f.end)):
        if child.start > pos:
            out.append(_unparsed(prefix, pos, child.start))
        if child.group:
            child.children = fill_gaps(child.children, child.start, child.end, child.path)
        out.append(child)
        pos = max(pos, child.end)
    if pos < end:
        out.append(_unparsed(prefix, pos, end))
    return out


def _unparsed(prefix: str, start: int, end: int) -> Field:
    path = f"{prefix}.{UNPARSED}" if prefix else UNPARSED
    return Field(
        path, UNPARSED, start, end, value=f"{end - start} bytes no field describes", problem=True
    )


def iter_fields(fields: list[Field]) -> Iterator[tuple[int, Field]]:
    """(depth, field) in tree order."""
    stack = [(0, f) for f in reversed(fields)]
    while stack:
        depth, node = stack.pop()
        yield depth, node
        stack.extend((depth + 1, c) for c in reversed(node.children))


def iter_leaves(fields: list[Field]) -> Iterator[Field]:
    """Fields that own bytes themselves, in tree order (bit fields stay inside their leaf)."""
    for _, node in iter_fields(fields):
        if not node.group:
            yield node


def _assign_colours(panes: list[Pane]) -> None:
    keys: dict[str, int] = {}
    for pane in panes:
        for node in iter_leaves(pane.fields):
            if node.unparsed:
                continue
            key = _INDEX.sub("[]", node.path)
            node.colour = keys.setdefault(key, len(keys) % len(PALETTE))


# --- one frame -----------------------------------------------------------------------------


def _parse(obj: KaitaiStruct) -> Exception | None:
    try:
        obj._read()
    except Exception as exc:  # the generated parser may raise anything on hostile bytes
        return exc
    return None


def inspect_frame(
    frame: bytes,
    *,
    position: int,
    file: str,
    max_decompressed_bytes: int = DEFAULT_MAX_BYTES,
) -> BatchView:
    """The field tree of one frame (a whole batch from its offset field) at ``position``.

    Never raises for bad content: whatever parses is shown and each problem (CRC mismatch,
    parse error, bytes no field describes, decompression failure) is listed in ``problems``.
    """
    magic = frame[layout.FRAME_MAGIC]
    base_offset = int.from_bytes(
        frame[layout.FRAME_BASE_OFFSET : layout.FRAME_BASE_OFFSET + layout.FRAME_BASE_OFFSET_SIZE],
        "big",
        signed=True,
    )
    where = {"file": file, "position": position, "base_offset": base_offset}
    view = BatchView(file, position, magic, base_offset, len(frame), "?", None, [])
    try:
        view.crc = frame_crc(frame)
    except CorruptBatchError as exc:
        view.problems.append(exc.located(**where))
    if magic == 2:
        obj: KaitaiStruct = RecordBatch(KaitaiStream(BytesIO(frame)))
    elif magic in (0, 1):
        obj = LegacyMessage(KaitaiStream(BytesIO(frame)))
    else:
        raise CorruptBatchError(f"unknown magic {magic}: not the start of a batch?", **where)
    error = _parse(obj)
    fields = struct_fields(obj, position)
    pane = Pane("batch", frame, position, fields)
    view.panes.append(pane)
    if error is not None:
        view.problems.append(_stopped(pane, error, where))
    index = {f.path: f for _, f in iter_fields(fields)}
    _annotate_crc(view, index)
    attributes = getattr(obj, "attributes", None)
    codec = getattr(attributes, "compression", None)
    view.codec = codec.name if isinstance(codec, IntEnum) else "?" if codec is None else str(codec)
    if magic == 2 and isinstance(obj, RecordBatch):
        records = getattr(obj, "records", None)
        if isinstance(records, RecordList):
            _annotate_records(records, index, "records", base_offset)
            if attributes is not None and attributes.is_control:
                _expand_control(records, index, "records")
        payload = getattr(obj, "compressed_records", None)
        if payload is not None and codec is not None:
            _decompressed_v2(view, obj, bytes(payload), int(codec), max_decompressed_bytes, where)
    else:
        value = getattr(obj, "value", None)
        if value is not None and codec is not None and int(codec) != 0:
            _decompressed_legacy(view, bytes(value), int(codec), magic, max_decompressed_bytes)
    for p in view.panes:
        p.fields = fill_gaps(p.fields, p.base, p.base + len(p.data), "")
        for node in iter_leaves(p.fields):
            if node.unparsed:
                view.problems.append(
                    CorruptBatchError(
                        f"{node.size} bytes at {p.label} {node.start} ({node.path}) "
                        "are not described by the schema",
                        **where,
                    )
                )
    _assign_colours(view.panes)
    view.problems = readers_verdict(view, frame, max_decompressed_bytes)
    return view


def _stopped(pane: Pane, error: Exception, where: dict, what: str = "") -> CorruptBatchError:
    """Where the parse stopped: the last field in tree order that it did not finish."""
    at = ""
    for _, node in iter_fields(pane.fields):
        if node.problem:
            at = f" in {node.path} at {pane.label} {node.start}"
    return CorruptBatchError(f"{what}parse stopped{at}: {_describe(error)}", **where)


def _describe(exc: Exception) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0]


def _annotate_crc(view: BatchView, index: dict[str, Field]) -> None:
    node = index.get("crc")
    if node is None or view.crc is None:
        return
    crc = view.crc
    verdict = "valid" if crc.valid else "MISMATCH"
    node.note = (
        f"{crc.algorithm}: stored 0x{crc.stored:08x}, computed 0x{crc.computed:08x} {verdict}"
    )
    if not crc.valid:
        node.problem = True
        # The batch's first verdict, as the readers give it: the CRC before what it covers.
        where = {"file": view.file, "position": view.position, "base_offset": view.base_offset}
        mismatch = messages.crc_mismatch(crc.stored, crc.computed, crc.algorithm, **where)
        view.problems.insert(0, mismatch)


def _annotate_records(records: RecordList, index: dict[str, Field], prefix: str, base: int) -> None:
    for i, record in enumerate(records.records):
        node = index.get(f"{prefix}[{i}]")
        body = getattr(record, "body", None)
        delta = getattr(body, "offset_delta", None)
        if node is not None and isinstance(delta, Varint):
            node.value = f"offset {base + delta.value}"
        for j, header in enumerate(getattr(body, "headers", None) or []):
            head = index.get(f"{prefix}[{i}].body.headers[{j}]")
            key = getattr(header, "key", None)
            if head is not None and key is not None:
                head.value = _preview("key", key)


def _expand_control(records: RecordList, index: dict[str, Field], prefix: str) -> None:
    """Type a control record's key and value with control_record_key / end_txn_marker."""
    for i, record in enumerate(records.records):
        body = getattr(record, "body", None)
        key_node = index.get(f"{prefix}[{i}].body.key")
        key = getattr(body, "key", None)
        if key_node is None or key is None:
            continue
        parsed = _expand_leaf(key_node, ControlRecordKey, key)
        kind = getattr(parsed, "type", None)
        value_node = index.get(f"{prefix}[{i}].body.value")
        value = getattr(body, "value", None)
        if kind in (0, 1) and value_node is not None and value is not None:
            _expand_leaf(value_node, EndTxnMarker, value)


def _expand_leaf(node: Field, cls: type, data: bytes) -> KaitaiStruct | None:
    """Type a leaf's bytes with ``cls`` when it describes all of them; else leave it opaque.

    Control records of types this project has no schema for (KRaft's) are opaque to Kafka
    too, so a partial fit is not reported as damage.
    """
    stream = KaitaiStream(BytesIO(data))
    obj = cls(stream)
    if _parse(obj) is not None or not stream.is_eof():
        return None
    node.children = struct_fields(obj, node.start, node.path)
    node.group = True
    node.value = ", ".join(f"{c.name}={c.value}" for c in node.children)
    return obj


def _decompressed_v2(
    view: BatchView, batch: RecordBatch, payload: bytes, codec: int, limit: int, where: dict
) -> None:
    try:
        data = decompress(codec, payload, magic=2, max_bytes=limit)
    except KafkaFormatError as exc:
        view.problems.append(exc.located(**where))
        return
    records = RecordList(batch.records_count, KaitaiStream(BytesIO(data)))
    error = _parse(records)
    fields = struct_fields(records, 0)
    index = {f.path: f for _, f in iter_fields(fields)}
    _annotate_records(records, index, "records", view.base_offset)
    if batch.attributes.is_control:
        _expand_control(records, index, "records")
    title = (
        f"decompressed records ({resolve_codec(codec, magic=2).name.lower()}: "
        f"{len(payload)} → {len(data)} bytes, record_list with num_records="
        f"{batch.records_count})"
    )
    pane = Pane(title, data, 0, fields, label="decompressed offset")
    view.panes.append(pane)
    if error is not None:
        view.problems.append(_stopped(pane, error, where, "decompressed records: "))


def _decompressed_legacy(
    view: BatchView, payload: bytes, codec: int, magic: int, limit: int
) -> None:
    where = {"file": view.file, "position": view.position, "base_offset": view.base_offset}
    try:
        data = decompress(codec, payload, magic=magic, max_bytes=limit)
    except KafkaFormatError as exc:
        view.problems.append(exc.located(**where))
        return
    fields: list[Field] = []
    tails: list[TruncatedTail] = []
    try:
        for i, inner in enumerate(iter_frames(data, tails=tails, audit=False)):
            message = LegacyMessage(KaitaiStream(BytesIO(bytes(inner.data))))
            error = _parse(message)
            name = f"messages[{i}]"
            node = Field(name, name, inner.position, inner.position + inner.size, group=True)
            node.children = struct_fields(message, inner.position, name)
            node.value = f"offset {getattr(message, 'offset', '?')}"
            fields.append(node)
            if error is not None:
                node.problem = True
                view.problems.append(
                    CorruptBatchError(
                        f"inner message {i}: parse stopped: {_describe(error)}", **where
                    )
                )
    except FramingError as exc:
        view.problems.append(CorruptBatchError(f"inner message set: {exc.reason}", **where))
    name = resolve_codec(codec, magic=magic).name.lower()
    title = f"decompressed inner messages ({name}: {len(payload)} → {len(data)} bytes)"
    view.panes.append(Pane(title, data, 0, fields, label="decompressed offset"))


# --- terminal ------------------------------------------------------------------------------


def _style(node: Field) -> str:
    if node.unparsed:
        return "bold white on red"
    return PALETTE[node.colour] if node.colour >= 0 else ""


def _byte_owners(pane: Pane) -> list[Field | None]:
    owners: list[Field | None] = [None] * len(pane.data)
    for leaf in iter_leaves(pane.fields):
        for i in range(max(leaf.start - pane.base, 0), min(leaf.end - pane.base, len(owners))):
            owners[i] = leaf
    return owners


def _hex_block(pane: Pane, limit: int) -> Text:
    """The hex dump: position, 16 bytes, their ASCII, each byte in its field's colour.

    Built as one Text with a span per run of bytes of one field: rich's cost is per span
    and per call, and a batch can hold megabytes.
    """
    owners = _byte_owners(pane)
    shown = len(pane.data) if limit <= 0 else min(limit, len(pane.data))
    out = Text(no_wrap=True)
    out.append(f"{pane.label.split()[-1]:>10}  ", style="dim")
    out.append(" ".join(f"{i:02x}" for i in range(8)) + "  ", style="dim")
    out.append(" ".join(f"{i:02x}" for i in range(8, 16)) + "  ascii\n", style="dim")
    data = pane.data
    for row in range(0, shown, 16):
        out.append(f"{pane.base + row:>10}  ", style="dim")
        end = min(row + 16, shown)
        hex_runs, ascii_runs = [], []
        i = row
        while i < end:
            owner = owners[i]
            j = i + 1
            while j < end and owners[j] is owner:
                j += 1
            style = _style(owner) if owner is not None else "bold white on red"
            cells = " ".join(f"{b:02x}" for b in data[i:j])
            if i - row < 8 <= j - row - 1:  # the run spans the gap after the 8th byte
                split = 3 * (8 - (i - row))
                cells = cells[:split] + " " + cells[split:]
            hex_runs.append((cells, style, j - row))
            ascii_runs.append(("".join(chr(b) if 32 <= b < 127 else "." for b in data[i:j]), style))
            i = j
        for cells, style, stop in hex_runs:
            out.append(cells, style=style)
            out.append("  " if stop == 8 else " ")
        missing = 16 - (end - row)
        out.append("   " * missing + (" " if end - row <= 8 else ""))
        out.append(" ")
        for chars, style in ascii_runs:
            out.append(chars, style=style)
        out.append("\n")
    if shown < len(pane.data):
        out.append(
            f"… {len(pane.data) - shown} more bytes not shown (raise --max-bytes, 0 = all)\n",
            style="dim",
        )
    out.rstrip()
    return out


def _field_rows(pane: Pane, limit: int) -> list[tuple[list[tuple[str, str]], str, str, list]]:
    rows: list[tuple[list[tuple[str, str]], str, str, list]] = []
    cut = pane.base + limit if limit > 0 else None
    for depth, node in iter_fields(pane.fields):
        if cut is not None and node.start >= cut and node.size > 0:
            rows.append(([("…", "dim")], "", "", [("more fields not shown", "dim")]))
            break
        indent = "  " * depth
        if node.group:
            name = [(indent, ""), (node.name, "bold")]
        else:
            problem = "red bold" if node.problem else ""
            name = [(indent, ""), ("■ ", _style(node)), (node.name, problem)]
        span = f"{node.start}-{node.end - 1}" if node.size else f"{node.start}"
        value = [(node.value, "red" if node.problem else "")]
        if node.note:
            value.append((f"  [{node.note}]", "red bold" if node.problem else "green"))
        rows.append((name, span, str(node.size), value))
        for bit in node.bits:
            label = f"bit {bit.high}" if bit.high == bit.low else f"bits {bit.high}-{bit.low}"
            bit_name = [(f"{indent}  · {bit.name}", "dim")]
            rows.append((bit_name, label, "", [(bit.value, "dim")]))
    return rows


def _field_block(pane: Pane, limit: int, width: int) -> Text:
    """Every field as aligned columns: name (tree-indented), byte range, size, value.

    Laid out by hand: rich's Table measures every cell and takes seconds on a batch of a
    few thousand records.
    """
    rows = _field_rows(pane, limit)
    name_w = min(max([5, *(sum(len(t) for t, _ in r[0]) for r in rows)]), 56)
    span_w = max([len(pane.label), *(len(r[1]) for r in rows)])
    size_w = max([4, *(len(r[2]) for r in rows)])
    value_at = name_w + span_w + size_w + 6
    value_w = max(width - value_at - 1, 24)
    out = Text(no_wrap=True)
    out.append(f"{'field':<{name_w}}  {pane.label:>{span_w}}  {'size':>{size_w}}  value", "bold")
    for name, span, size, value in rows:
        out.append("\n")
        used = 0
        for text, style in name:
            text = text[: max(name_w - used, 0)]
            out.append(text, style=style)
            used += len(text)
        out.append(" " * (name_w - used) + f"  {span:>{span_w}}  {size:>{size_w}}  ")
        column = 0
        for text, style in value:
            while text:
                if column == value_w:
                    out.append("\n" + " " * value_at)
                    column = 0
                piece = text[: value_w - column]
                out.append(piece, style=style)
                column += len(piece)
                text = text[len(piece) :]
    return out


def render_terminal(
    view: BatchView, console: Console, *, max_bytes: int = 65536, show_problems: bool = True
) -> None:
    """Hex dump(s) coloured by field, each followed by its field table."""
    console.print(Text(view.summary, style="bold"))
    if view.crc is not None:
        ok = view.crc.valid
        console.print(
            Text(
                f"crc ({view.crc.algorithm}): stored 0x{view.crc.stored:08x}, computed "
                f"0x{view.crc.computed:08x}: {'valid' if ok else 'MISMATCH'}",
                style="green" if ok else "bold red",
            )
        )
    for pane in view.panes:
        console.rule(Text(pane.title, style="bold"), align="left")
        console.print(_hex_block(pane, max_bytes), overflow="ignore", crop=False)
        console.print()
        console.print(_field_block(pane, max_bytes, console.width), overflow="ignore", crop=False)
    if show_problems:
        for problem in view.problems:
            console.print(Text(f"problem: {problem}", style="bold red"))


# --- HTML ----------------------------------------------------------------------------------


def _field_json(node: Field) -> dict:
    out: dict = {"p": node.path, "n": node.name, "s": node.start, "e": node.end, "v": node.value}
    if node.colour >= 0:
        out["c"] = node.colour
    if node.group:
        out["g"] = 1
    if node.children:
        out["ch"] = [_field_json(c) for c in node.children]
    if node.bits:
        out["b"] = [[b.name, b.high, b.low, b.value] for b in node.bits]
    if node.note:
        out["note"] = node.note
    if node.problem:
        out["x"] = 1
    if node.unparsed:
        out["u"] = 1
    return out


def page_data(view: BatchView, *, max_bytes: int = 0) -> dict:
    """What the page script renders: plain JSON, no markup."""
    panes = []
    for pane in view.panes:
        shown = len(pane.data) if max_bytes <= 0 else min(max_bytes, len(pane.data))
        panes.append(
            {
                "title": pane.title,
                "label": pane.label,
                "base": pane.base,
                "size": len(pane.data),
                "hex": pane.data[:shown].hex(),
                "fields": [_field_json(f) for f in pane.fields],
            }
        )
    crc = None
    if view.crc is not None:
        crc = {
            "algorithm": view.crc.algorithm,
            "stored": f"0x{view.crc.stored:08x}",
            "computed": f"0x{view.crc.computed:08x}",
            "valid": view.crc.valid,
        }
    return {
        "summary": view.summary,
        "file": view.file,
        "position": view.position,
        "crc": crc,
        "problems": [str(p) for p in view.problems],
        "palette": list(PALETTE),
        "panes": panes,
    }


def _script_json(data: dict) -> str:
    # Inside <script>, only "</" and "<!--" can end or confuse the element; escaping every
    # <, > and & (valid JSON escapes) rules out both whatever the record bytes hold.
    text = json.dumps(data, ensure_ascii=True, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def render_html(view: BatchView, *, max_bytes: int = 0) -> str:
    """One self-contained page (inline CSS and script, nothing fetched)."""
    template = _template()
    title = f"kafka-format inspect: {view.file} @{view.position}"
    return template.replace("__TITLE__", html.escape(title)).replace(
        "__DATA__", _script_json(page_data(view, max_bytes=max_bytes))
    )


@functools.cache
def _template() -> str:
    """The page, its script allowed by hash: record bytes cannot add a script that runs."""
    text = resources.files(__package__).joinpath("inspect_page.html").read_text("utf-8")
    (script,) = _PAGE_SCRIPT.findall(text)
    digest = base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode("ascii")
    return text.replace("__SCRIPT_HASH__", f"sha256-{digest}")
