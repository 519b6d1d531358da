"""The runtime reads Kafka's byte layout by name: ``pos + layout.V2_CRC``, never ``pos + 17``.

``runtime/format/layout.py`` (generated from the Kaitai schemas, every name tied to them by
``tests/format/test_layout.py``) is the one place an offset is known. A typed offset is one
nothing checks, and v0/v1 and v2 put different fields at the same byte (17: a v0/v1
message's attributes, a v2 batch's CRC), so the name says which one is meant. numba takes a
module's attribute as a compile-time constant: a kernel pays nothing for the name.

Two rules over every module of ``runtime/`` and ``spark_udfs/``:

- no position plus an integer literal of 2 or more (``pos + 12``, ``buf + pos + 16``,
  ``at[ok] + 22``), but in the code that reads formats other than Kafka's layout;
- no module-level alias of a layout name (``MAGIC_OFFSET = layout.FRAME_MAGIC``, ``from
  .layout import FRAME_MAGIC as MAGIC``): readers use the name the schemas give.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

from kafka_format.runtime.format import layout

ROOT = Path(__file__).resolve().parents[1]
SCANNED = ("runtime", "spark_udfs")
LAYOUT_MODULE = "runtime/format/layout.py"
LAYOUT_NAMES = frozenset(layout.__all__) - {"field_struct"}

#: Names that hold a position in a buffer (or an address: ``buf + pos``).
POSITION_NAMES = frozenset({"pos", "p", "at", "start", "offset", "position", "base", "i"})
POSITION_SUFFIXES = ("_pos", "_at")

#: Modules whose offsets belong to formats of their own, not Kafka's layout.
NOT_KAFKA_MODULES = {
    "runtime/format/codecs.py": "the codecs' own framings: xerial, LZ4 frames, zstd frames",
    "runtime/kernels/lz4.py": "LZ4 frame descriptors and blocks",
    "runtime/kernels/snappy.py": "snappy tags and copies, xerial's framing",
    "runtime/kernels/inflate.py": "gzip member and LZ4/zstd frame headers",
    "runtime/kernels/crc32.py": "CRC folding over 16-byte lanes",
    "runtime/kernels/utf8.py": "UTF-8 sequences of 2 to 4 bytes",
    "runtime/kernels/jsonl.py": "base64 quads and \\u escapes written into JSON",
    "runtime/kernels/views.py": "Arrow's 16-byte binary views",
    "runtime/kernels/addresses.py": "big-endian loads, a byte at a time",
    "runtime/write/partitioner.py": "murmur2 over 4-byte words",
}
#: Functions, in modules otherwise held to the rule, whose offsets are not Kafka's layout.
NOT_KAFKA_FUNCTIONS = {
    ("runtime/format/crc.py", "xxh32"): "xxHash32's 4-byte lanes (LZ4 header checksums)",
    ("runtime/kernels/records.py", "_varint"): "a varint's own bytes",
    ("runtime/kernels/records.py", "copy_bytes"): "a copy in 8-byte moves",
    ("runtime/read/plan.py", "gzip_size"): "a gzip member's header (RFC 1952)",
    ("runtime/cli/kcat.py", "_strtoul"): "C's strtoul over a -f escape's digits (0x prefix)",
    ("runtime/cli/kcat.py", "compile_format"): "kcat's -f string: a % and its letter",
    ("runtime/write/generate.py", "_orders"): "producer ids numbered from a base",
    ("runtime/write/generate.py", "_legacy_events"): "producer ids numbered from a base",
}

#: TEMPORARY, for their owners to empty: modules not yet switched to the layout's names,
#: exempt from both rules until then. A module that breaks neither rule must leave.
_PENDING: set[str] = set()

#: TEMPORARY: aliases kept while modules that import them (the tuple) are switched to the
#: layout's name. One that no listed module names any more must go, and leave this list.
_KEPT_FOR_IMPORTERS: dict[tuple[str, str], tuple[str, ...]] = {}


def _modules() -> Iterator[tuple[str, str]]:
    for top in SCANNED:
        for path in sorted((ROOT / top).rglob("*.py")):
            yield path.relative_to(ROOT).as_posix(), path.read_text(encoding="utf-8")


def _is_position(node: ast.expr) -> bool:
    if isinstance(node, ast.Subscript):  # ``at[ok]``: positions picked out of an array
        return _is_position(node.value)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):  # ``buf + pos``
        return _is_position(node.left) or _is_position(node.right)
    if isinstance(node, ast.Name):
        name = node.id
    elif isinstance(node, ast.Attribute):
        name = node.attr
    else:
        return False
    return name in POSITION_NAMES or name.endswith(POSITION_SUFFIXES)


def _is_offset_literal(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and type(node.value) is int and node.value >= 2


def _functions(tree: ast.AST) -> dict[ast.AST, str]:
    """Each node inside a function: the outermost function's name."""
    owner: dict[ast.AST, str] = {}
    for top in ast.walk(tree):
        if isinstance(top, (ast.FunctionDef, ast.AsyncFunctionDef)) and top not in owner:
            for node in ast.walk(top):
                owner.setdefault(node, top.name)
    return owner


def _positions_plus_literals(source: str) -> list[tuple[int, str | None, str]]:
    """(line, function, expression) for each position plus an integer literal of 2 or more."""
    tree = ast.parse(source)
    owner = _functions(tree)
    hits = []
    for node in ast.walk(tree):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            pair = (node.left, node.right)
            if any(_is_position(a) and _is_offset_literal(b) for a, b in (pair, pair[::-1])):
                hits.append((node.lineno, owner.get(node), ast.unparse(node)))
    return sorted(hits, key=lambda hit: (hit[0], hit[2]))


def typed_offsets(module: str, source: str) -> list[str]:
    """``module:line: expression`` for each typed offset outside the code that reads
    formats other than Kafka's."""
    if module in NOT_KAFKA_MODULES:
        return []
    return [
        f"{module}:{line}: {text}"
        for line, function, text in _positions_plus_literals(source)
        if (module, function) not in NOT_KAFKA_FUNCTIONS
    ]


def _layout_bindings(tree: ast.Module) -> tuple[set[str], set[str]]:
    """The names a module binds to the layout module, and the layout names it imports."""
    modules: set[str] = set()
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            for alias in node.names:
                if alias.name == "layout":
                    modules.add(alias.asname or "layout")
                elif (node.module or "").endswith("layout") and alias.name in LAYOUT_NAMES:
                    names.add(alias.asname or alias.name)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.endswith(".layout") and alias.asname:
                    modules.add(alias.asname)
    return modules, names


def _top_level(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    for node in body:
        yield node
        if isinstance(node, (ast.If, ast.Try)):
            for block in (node.body, node.orelse, getattr(node, "finalbody", [])):
                yield from _top_level(block)
            for handler in getattr(node, "handlers", []):
                yield from _top_level(handler.body)


def layout_aliases(module: str, source: str) -> list[tuple[str, int, str]]:
    """(module, line, alias) for each module-level name bound to a layout constant under
    another name, or to one the module could read from the layout itself."""
    if module == LAYOUT_MODULE:
        return []
    tree = ast.parse(source)
    modules, imported = _layout_bindings(tree)

    def is_layout_name(value: ast.expr) -> bool:
        if isinstance(value, ast.Attribute) and isinstance(value.value, ast.Name):
            return value.value.id in modules and value.attr in LAYOUT_NAMES
        return isinstance(value, ast.Name) and value.id in imported

    found = []
    for node in _top_level(tree.body):
        if isinstance(node, ast.ImportFrom) and (node.module or "").endswith("layout"):
            for alias in node.names:
                if alias.name in LAYOUT_NAMES and alias.asname not in (None, alias.name):
                    found.append((module, node.lineno, alias.asname))
            continue
        if isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            targets, value = [node.target], node.value
        else:
            continue
        for target in targets:
            pairs = [(target, value)]
            if isinstance(target, ast.Tuple) and isinstance(value, ast.Tuple):
                pairs = list(zip(target.elts, value.elts, strict=False))
            for name, bound in pairs:
                if isinstance(name, ast.Name) and is_layout_name(bound):
                    found.append((module, node.lineno, name.id))
    return found


def test_offsets_are_read_by_name():
    hits = [
        hit
        for module, source in _modules()
        if module not in _PENDING
        for hit in typed_offsets(module, source)
    ]
    assert not hits, "a position plus a typed offset; read it by its layout name:\n" + "\n".join(
        hits
    )


def test_no_aliases_of_layout_names():
    found = [
        f"{module}:{line}: {name}"
        for path, source in _modules()
        if path not in _PENDING
        for module, line, name in layout_aliases(path, source)
        if (module, name) not in _KEPT_FOR_IMPORTERS
    ]
    assert not found, "an alias of a layout name; read the layout's own name:\n" + "\n".join(found)


def test_exemptions_are_still_needed():
    sources = dict(_modules())
    stale = [
        f"{module}: breaks neither rule any more; take it out of _PENDING"
        for module in sorted(_PENDING)
        if not typed_offsets(module, sources[module])
        and not layout_aliases(module, sources[module])
    ]
    for module in NOT_KAFKA_MODULES:
        if module not in sources or not _positions_plus_literals(sources[module]):
            stale.append(f"{module}: no offsets left; take it out of NOT_KAFKA_MODULES")
    for module, function in NOT_KAFKA_FUNCTIONS:
        hits = _positions_plus_literals(sources.get(module, ""))
        if not any(owner == function for _, owner, _ in hits):
            stale.append(
                f"{module}: no offsets left in {function}; take it out of NOT_KAFKA_FUNCTIONS"
            )
    for (module, name), importers in _KEPT_FOR_IMPORTERS.items():
        if name not in {alias for _, _, alias in layout_aliases(module, sources[module])}:
            stale.append(
                f"{module}: {name} is no alias any more; take it out of _KEPT_FOR_IMPORTERS"
            )
            continue
        word = re.compile(rf"\b{name}\b")
        if not any(word.search((ROOT / path).read_text(encoding="utf-8")) for path in importers):
            stale.append(f"{module}: nothing imports {name} any more; remove it there and here")
    assert not stale, "\n".join(stale)
