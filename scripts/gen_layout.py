"""Write generated/layout.py: the fixed-size parts of Kafka's formats, from schemas/*.ksy.

Run by scripts/generate.py (`make generate`). For every fixed-size part (the 17 bytes every
frame starts with, the v2 batch header, the v0/v1 message header, index and snapshot entries,
the control record key and end-txn marker) it writes each field's offset and size, the
big-endian ``struct`` format, the total size, and numpy dtypes for the file entries; then the
attribute bit masks, the enums, the minimum sizes and the CRC scopes.

Nothing is typed here that the schemas say: offsets are sums of the sizes of the ``seq``
fields before them, masks come from the ``bN`` bit fields, CRC scopes from the field after
``crc`` (every Kafka CRC covers the bytes after itself; each crc field's doc names that
field, and this script checks it does). Where a schema also states a number (``record_set``'s
``pos: ofs_frame + 16``, ``valid: length >= 14``, ``record_batch``'s ``size: batch_length -
49``), the number derived from the ``seq`` must agree, or generation fails.

Deterministic: the same schemas give byte-identical output; the file is rewritten only when
its bytes change.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
SCHEMAS = ROOT / "schemas"
OUT = ROOT / "generated" / "layout.py"

#: Kaitai primitive type -> (struct format character, size in bytes).
PRIMITIVES = {
    "s1": ("b", 1),
    "u1": ("B", 1),
    "s2": ("h", 2),
    "u2": ("H", 2),
    "s4": ("i", 4),
    "u4": ("I", 4),
    "s8": ("q", 8),
    "u8": ("Q", 8),
}
#: A user type made of bit fields is read as one integer of its width, signed as Java reads
#: attributes (``byte`` for v0/v1, ``short`` for v2).
BIT_STRUCT_FORMATS = {8: ("b", 1), 16: ("h", 2)}
_DTYPE = {"b": "i1", "B": "u1", "h": "i2", "H": "u2", "i": "i4", "I": "u4", "q": "i8", "Q": "u8"}
#: Field names that read better under another name than the schema's id (the length field of
#: a frame has one name in every part).
RENAMES = {("record_batch", "batch_length"): "length", ("legacy_message", "message_size"): "length"}

_IF_EQ = re.compile(r"^\s*(\w+)\s*==\s*(-?\d+)\s*$")
_POS_FRAME = re.compile(r"^\s*ofs_frame(?:\s*\+\s*(\d+))?\s*$")
_VALID_MIN = re.compile(r"^\s*length\s*>=\s*(\d+)\s*$")
_SIZE_MINUS = re.compile(r"^\s*batch_length\s*-\s*(\d+)\s*$")
_CRC_DOC = re.compile(r"^(CRC-32C?) of the bytes\b.*?\bfrom (\w+) to the end", re.DOTALL)


class LayoutError(Exception):
    """A schema this generator cannot lay out, or whose stated numbers disagree."""


@dataclass(frozen=True, slots=True)
class Field:
    name: str  # the schema's id (or its RENAMES entry)
    offset: int
    size: int
    fmt: str  # struct format character, big-endian implied


@dataclass(frozen=True, slots=True)
class Part:
    key: str  # PARTS key
    fields_prefix: str  # <fields_prefix>_<FIELD> = offset
    total_prefix: str  # <total_prefix>_SIZE / _FORMAT / _FIELDS
    source: str  # where it comes from, for the comment
    fields: tuple[Field, ...]
    dtype: bool = False  # also a numpy dtype (file entries read as arrays)
    emit_fields: bool = True  # module-level ints for every field

    @property
    def size(self) -> int:
        last = self.fields[-1]  # the extent: the frame's part skips the 4 bytes at 12
        return last.offset + last.size

    @property
    def format(self) -> str:
        out, at = ">", 0
        for f in self.fields:
            if f.offset > at:
                out += f"{f.offset - at}x"
            out += f.fmt
            at = f.offset + f.size
        return out


def load(name: str) -> dict:
    spec = yaml.safe_load((SCHEMAS / f"{name}.ksy").read_text(encoding="utf-8"))
    if spec["meta"].get("endian") != "be":
        raise LayoutError(f"{name}.ksy: expected endian: be")
    return spec


def _find_type(spec: dict, type_id: str) -> dict:
    for part in type_id.split("::"):
        spec = spec["types"][part]
    return spec


def _bit_width(spec: dict, type_id: str) -> int | None:
    """Bits of a user type made only of ``bN`` fields (None for any other type)."""
    try:
        sub = _find_type(spec, type_id)
    except KeyError:
        return None
    bits = 0
    for f in sub.get("seq", []):
        m = re.fullmatch(r"b(\d+)", str(f.get("type", "")))
        if m is None:
            return None
        bits += int(m.group(1))
    return bits


def _static(spec: dict, field: dict) -> tuple[str, int] | None:
    """(format, size) of a field whose size the schema fixes; None for a variable one."""
    ftype = field.get("type")
    if "size" in field or "repeat" in field or not isinstance(ftype, str):
        return None
    if ftype in PRIMITIVES:
        return PRIMITIVES[ftype]
    bits = _bit_width(spec, ftype)
    if bits in BIT_STRUCT_FORMATS:
        return BIT_STRUCT_FORMATS[bits]
    return None


def _present(field: dict, bindings: dict[str, int], where: str) -> bool:
    cond = field.get("if")
    if cond is None:
        return True
    m = _IF_EQ.match(str(cond))
    if m is None or m.group(1) not in bindings:
        raise LayoutError(f"{where}: cannot decide `if: {cond}` from {bindings}")
    return bindings[m.group(1)] == int(m.group(2))


def fixed_prefix(
    spec: dict, seq: list[dict], where: str, bindings: dict[str, int] | None = None
) -> tuple[Field, ...]:
    """The fields of ``seq`` up to the first one whose size is not fixed, laid end to end."""
    bindings = bindings or {}
    out, offset = [], 0
    for field in seq:
        static = _static(spec, field)
        if static is None:
            break
        if not _present(field, bindings, f"{where}.{field['id']}"):
            continue
        fmt, size = static
        name = RENAMES.get((spec["meta"]["id"], field["id"]), field["id"])
        out.append(Field(name, offset, size, fmt))
        offset += size
    return tuple(out)


def minimum_size(spec: dict, seq: list[dict], where: str, bindings: dict[str, int]) -> int:
    """Bytes of ``seq`` when every variable-size field is absent or empty (null key/value)."""
    size = 0
    for field in seq:
        static = _static(spec, field)
        if static is not None and _present(field, bindings, f"{where}.{field['id']}"):
            size += static[1]
    return size


def bit_fields(spec: dict, type_id: str) -> list[tuple[str, int, int]]:
    """(id, shift, width) of each bit field of a type, most significant first as Kaitai reads
    them."""
    sub = _find_type(spec, type_id)
    total = _bit_width(spec, type_id)
    if total is None:
        raise LayoutError(f"{spec['meta']['id']}::{type_id} is not made of bit fields")
    out, used = [], 0
    for f in sub["seq"]:
        width = int(str(f["type"])[1:])
        used += width
        out.append((f["id"], total - used, width))
    return out


def crc_scope(spec: dict, fields: tuple[Field, ...]) -> tuple[int, str]:
    """(first byte the CRC covers, algorithm): the bytes after the crc field, checked against
    the crc field's doc ("CRC-32C of the bytes from attributes to the end ...")."""
    names = [f.name for f in fields]
    at = names.index("crc")
    doc = next(f["doc"] for f in spec["seq"] if f["id"] == "crc")
    m = _CRC_DOC.match(doc)
    if m is None:
        raise LayoutError(f"{spec['meta']['id']}: crc doc does not state its scope: {doc!r}")
    if m.group(2) != names[at + 1]:
        raise LayoutError(
            f"{spec['meta']['id']}: crc doc says from {m.group(2)}, the field after crc is "
            f"{names[at + 1]}"
        )
    algorithm = "crc32c" if m.group(1) == "CRC-32C" else "crc32"
    return fields[at + 1].offset, algorithm


def _by_name(fields: tuple[Field, ...]) -> dict[str, Field]:
    return {f.name: f for f in fields}


class Writer:
    def __init__(self) -> None:
        self.lines: list[str] = []
        self.names: set[str] = set()

    def line(self, text: str = "") -> None:
        self.lines.append(text)

    def const(self, name: str, value: object, comment: str = "") -> None:
        if name in self.names:
            raise LayoutError(f"two constants named {name}")
        self.names.add(name)
        text = f"{name} = {value!r}" if not isinstance(value, str) else f'{name} = "{value}"'
        if isinstance(value, int) and name.endswith(("_MASK",)):
            text = f"{name} = {value:#06x}"
        self.line(f"{text}  # {comment}" if comment else text)

    def part(self, part: Part) -> None:
        self.line(f"# --- {part.key}: {part.source}")
        if part.emit_fields:
            for f in part.fields:
                field = f"{part.fields_prefix}_{f.name.upper()}"
                self.const(field, f.offset)
                self.const(f"{field}_SIZE", f.size)
        self.const(f"{part.total_prefix}_SIZE", part.size)
        self.const(f"{part.total_prefix}_FORMAT", part.format)
        name = f"{part.total_prefix}_FIELDS"
        self.names.add(name)
        self.line(f"{name}: tuple[tuple[str, int, int, str], ...] = (")
        for f in part.fields:
            self.line(f'    ("{f.name}", {f.offset}, {f.size}, "{f.fmt}"),')
        self.line(")")
        if part.dtype:
            name = f"{part.total_prefix}_DTYPE"
            self.names.add(name)
            self.line(f"{name} = np.dtype(")
            self.line("    [")
            for f in part.fields:
                self.line(f'        ("{f.name}", ">{_DTYPE[f.fmt]}"),')
            self.line("    ]")
            self.line(")")
        self.line()


def build() -> str:
    batch = load("record_batch")
    legacy = load("legacy_message")
    record_set = load("record_set")
    enums = load("kafka_enums")
    control = load("control_record_key")
    marker = load("end_txn_marker")
    snapshot = load("producer_snapshot")

    v2 = Part(
        "v2_header",
        "V2",
        "V2_HEADER",
        "v2 batch header (record_batch.ksy, seq up to records_count)",
        fixed_prefix(batch, batch["seq"], "record_batch"),
    )
    # the part of a v0/v1 message both magics share, then each magic's fixed fields
    by_magic = {
        m: fixed_prefix(legacy, legacy["seq"], "legacy_message", {"magic": m}) for m in (0, 1)
    }
    shared = 0
    while by_magic[0][shared] == by_magic[1][shared]:
        shared += 1
    common = by_magic[0][:shared]
    legacy_header = Part(
        "legacy_header",
        "LEGACY",
        "LEGACY_HEADER",
        "v0/v1 message header, common to both magics (legacy_message.ksy)",
        common,
    )
    legacy_parts = {
        m: Part(
            f"legacy_v{m}",
            f"LEGACY_V{m}",
            f"LEGACY_V{m}_FIXED",
            f"magic {m} message up to its first variable field (legacy_message.ksy, magic == {m})",
            by_magic[m],
            emit_fields=False,
        )
        for m in (0, 1)
    }

    # The frame: record_set.ksy's frame instances, at the offsets both formats give them.
    frame_type = record_set["types"]["frame"]
    counterpart = {
        "base_offset": ("base_offset", "offset"),
        "length": ("length", "length"),
        "magic": ("magic", "magic"),
    }
    v2_by, legacy_by = _by_name(v2.fields), _by_name(common)
    frame_fields = []
    for name, (in_v2, in_legacy) in counterpart.items():
        instance = frame_type["instances"][name]
        a, b = v2_by[in_v2], legacy_by[in_legacy]
        fmt, size = PRIMITIVES[instance["type"]]
        if (a.offset, a.size) != (b.offset, b.size) or size != a.size or fmt != a.fmt:
            raise LayoutError(f"frame field {name}: record_batch {a}, legacy_message {b}")
        m = _POS_FRAME.match(str(instance["pos"]))
        stated = int(m.group(1) or 0) if m else None
        if stated != a.offset:
            raise LayoutError(f"record_set frame.{name}: pos {instance['pos']!r}, seq {a.offset}")
        frame_fields.append(Field(name, a.offset, size, fmt))
    frame = Part(
        "frame",
        "FRAME",
        "FRAME_HEADER",
        "what every entry starts with (record_set.ksy frame; record_batch, legacy_message)",
        tuple(frame_fields),
    )
    length = _by_name(frame.fields)["length"]
    log_overhead = length.offset + length.size

    overhead = {
        m: minimum_size(legacy, legacy["seq"], "legacy_message", {"magic": m}) - log_overhead
        for m in (0, 1)
    }
    min_frame_length = min(overhead.values())
    valid = _VALID_MIN.match(str(frame_type["seq"][0]["valid"]["expr"]))
    if valid is None or int(valid.group(1)) != min_frame_length:
        raise LayoutError(f"record_set frame body valid {valid and valid.group(0)!r}")
    v2_min_length = v2.size - log_overhead
    records = next(f for f in batch["seq"] if f["id"] == "records")
    stated = _SIZE_MINUS.match(str(records["size"]))
    if stated is None or int(stated.group(1)) != v2_min_length:
        raise LayoutError(f"record_batch records size {records['size']!r}, header {v2.size}")

    entry_parts = [
        Part(
            "offset_index_entry",
            "OFFSET_INDEX_ENTRY",
            "OFFSET_INDEX_ENTRY",
            ".index entry (offset_index.ksy entry)",
            _type_fields("offset_index", "entry"),
            dtype=True,
        ),
        Part(
            "time_index_entry",
            "TIME_INDEX_ENTRY",
            "TIME_INDEX_ENTRY",
            ".timeindex entry (time_index.ksy entry)",
            _type_fields("time_index", "entry"),
            dtype=True,
        ),
        Part(
            "txn_index_entry",
            "TXN_INDEX_ENTRY",
            "TXN_INDEX_ENTRY",
            ".txnindex entry, AbortedTxn (txn_index.ksy aborted_txn)",
            _type_fields("txn_index", "aborted_txn"),
            dtype=True,
        ),
    ]
    snapshot_header = Part(
        "snapshot_header",
        "SNAPSHOT",
        "SNAPSHOT_HEADER",
        ".snapshot header (producer_snapshot.ksy, seq up to num_entries)",
        fixed_prefix(snapshot, snapshot["seq"], "producer_snapshot"),
    )
    snapshot_entry = Part(
        "snapshot_entry",
        "SNAPSHOT_ENTRY",
        "SNAPSHOT_ENTRY",
        ".snapshot producer entry (producer_snapshot.ksy entry)",
        _type_fields("producer_snapshot", "entry"),
        dtype=True,
    )
    control_key = Part(
        "control_record_key",
        "CONTROL_RECORD_KEY",
        "CONTROL_RECORD_KEY",
        "control record key (control_record_key.ksy)",
        fixed_prefix(control, control["seq"], "control_record_key"),
    )
    end_txn = Part(
        "end_txn_marker",
        "END_TXN_MARKER",
        "END_TXN_MARKER",
        "an abort/commit control record's value (end_txn_marker.ksy)",
        fixed_prefix(marker, marker["seq"], "end_txn_marker"),
    )
    parts = [
        frame,
        v2,
        legacy_header,
        *legacy_parts.values(),
        *entry_parts,
        snapshot_header,
        snapshot_entry,
        control_key,
        end_txn,
    ]

    w = Writer()
    w.line("# GENERATED FILE - DO NOT EDIT BY HAND.")
    w.line("# Generated by scripts/gen_layout.py from schemas/*.ksy; do not edit.")
    w.line("# Regenerate with `make generate`.")
    w.line('"""Byte layout of Kafka\'s fixed-size parts, from schemas/*.ksy (offsets from byte 0')
    w.line("of each part; <PART>_<FIELD> is a field's offset, <PART>_<FIELD>_SIZE its size).")
    w.line("")
    w.line("The runtime imports this through kafka_format.runtime.format.layout.")
    w.line('"""')
    w.line()
    w.line("import numpy as np")
    w.line()
    for part in parts:
        w.part(part)
        if part is frame:
            w.const("LOG_OVERHEAD", log_overhead, "offset and length before every entry")
            w.const(
                "MIN_FRAME_LENGTH",
                min_frame_length,
                "the smallest length field: a magic 0 message with null key and value",
            )
            w.line()
        elif part is v2:
            _emit_bits(w, "V2_ATTR", bit_fields(batch, "attributes"))
            start, algorithm = crc_scope(batch, v2.fields)
            w.const("V2_CRC_START", start, "the CRC covers this byte to the end")
            w.const("V2_CRC_ALGORITHM", algorithm)
            w.const("V2_MIN_BATCH_LENGTH", v2_min_length, "length field of a batch of no records")
            w.line()
        elif part is legacy_header:
            _emit_bits(w, "LEGACY_ATTR", bit_fields(legacy, "attributes"))
            start, algorithm = crc_scope(legacy, by_magic[1])
            w.const("LEGACY_CRC_START", start, "the CRC covers this byte to the end")
            w.const("LEGACY_CRC_ALGORITHM", algorithm)
            w.line()
        elif part.key.startswith("legacy_v"):
            m = int(part.key[-1])
            for f in part.fields:
                if f not in common:
                    w.const(f"LEGACY_V{m}_{f.name.upper()}", f.offset, f"magic {m} only")
                    w.const(f"LEGACY_V{m}_{f.name.upper()}_SIZE", f.size)
            w.const(
                f"LEGACY_V{m}_RECORD_OVERHEAD",
                overhead[m],
                "the message after its length field, null key and value",
            )
            w.const(f"LEGACY_V{m}_ENTRY_MIN_SIZE", overhead[m] + log_overhead, "the same, framed")
            w.line()
        elif part is snapshot_header:
            start, algorithm = crc_scope(snapshot, snapshot_header.fields)
            w.const("SNAPSHOT_CRC_START", start, "the CRC covers this byte to the end of the file")
            w.const("SNAPSHOT_CRC_ALGORITHM", algorithm)
            w.line()

    w.line("# --- enums (kafka_enums.ksy, control_record_key.ksy)")
    for spec in (enums, control):
        for enum_id, values in spec["enums"].items():
            names = {}
            for value, meta in values.items():
                vid = meta["id"] if isinstance(meta, dict) else meta
                names[int(value)] = vid
                w.const(f"{enum_id.upper()}_{vid.upper()}", int(value))
            w.names.add(enum_id.upper())
            w.line(f"{enum_id.upper()}: dict[int, str] = {{")
            for value, vid in names.items():
                w.line(f'    {value}: "{vid}",')
            w.line("}")
            w.line()

    w.line("#: Every part's fields: (name, offset, size, struct format character).")
    w.line("PARTS: dict[str, tuple[tuple[str, int, int, str], ...]] = {")
    for part in parts:
        w.line(f'    "{part.key}": {part.total_prefix}_FIELDS,')
    w.line("}")
    w.names.add("PARTS")
    w.line()
    w.line("__all__ = [")
    for name in sorted(w.names):
        w.line(f'    "{name}",')
    w.line("]")
    return "\n".join(w.lines) + "\n"


def _type_fields(schema: str, type_id: str) -> tuple[Field, ...]:
    spec = load(schema)
    sub = _find_type(spec, type_id)
    fields = fixed_prefix(spec, sub["seq"], f"{schema}::{type_id}")
    if len(fields) != len(sub["seq"]):
        raise LayoutError(f"{schema}::{type_id} is not fixed-size")
    return fields


def _emit_bits(w: Writer, prefix: str, bits: list[tuple[str, int, int]]) -> None:
    for bid, shift, width in bits:
        w.const(f"{prefix}_{bid.upper()}_MASK", ((1 << width) - 1) << shift)
        w.const(f"{prefix}_{bid.upper()}_SHIFT", shift)


def main() -> int:
    try:
        text = build()
    except LayoutError as exc:
        raise SystemExit(f"gen_layout: {exc}") from None
    data = text.encode("utf-8")
    if not OUT.exists() or OUT.read_bytes() != data:
        OUT.write_bytes(data)
    return 0


if __name__ == "__main__":
    sys.exit(main())
