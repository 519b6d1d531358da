"""The house rules of ``runtime/``: imports point down the data flow, never up nor round.

Layers, top to bottom (a module may import its own layer's siblings and anything below)::

    cli → analysis → {log, messages, payloads, write} → read → {files, kernels} → format →
    (errors, model, progress)

``spark_udfs`` may import anything but ``cli``. Every import counts, those inside functions
too: a function-level import is still a dependency, only a later one. Imports under
``if TYPE_CHECKING:`` count as well, so a cycle cannot hide there.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
RUNTIME = ROOT / "runtime"

#: Rank of each subpackage: a module may import only from ranks at or below its own.
RANK = {
    "": 0,  # errors, model, progress, cpus: what every layer speaks
    "format": 1,
    "files": 2,
    "kernels": 2,
    "read": 3,
    "log": 4,
    "messages": 4,
    "payloads": 4,
    "write": 4,
    "analysis": 5,
    "cli": 6,
}
#: Peers of one rank that must not lean on each other (they are separate concerns).
SEPARATE = {frozenset({"files", "kernels"}), frozenset({"log", "messages"}),
            frozenset({"log", "write"}), frozenset({"messages", "write"}),
            frozenset({"log", "payloads"})}  # fmt: skip
#: Peers of one rank where only the first may import the second: ``generate`` writes payloads
#: in Confluent's wire format (``payloads.encode``); payloads never need the writer.
ONE_WAY = {("write", "payloads")}
#: Modules kept at an old path for code written before the split: each is another module.
ALIASES = {"runtime.segment", "runtime.writer"}
MAX_LINES = 800
#: Modules still over MAX_LINES while they are being split, with the most lines each may have:
#: none may grow, and one that fits must leave this list.
NOT_YET_SPLIT: dict[str, int] = {}
MAX_TOP_LEVEL_MODULES = 12


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _is_module(name: str) -> bool:
    path = ROOT.joinpath(*name.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def _imports(path: Path, text: str | None = None) -> list[tuple[str, int]]:
    """Every module ``path`` imports inside the project (as ``runtime.x.y``), with its line;
    ``text`` stands for the file's contents when given."""
    name = _module_name(path)
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    tree = ast.parse(path.read_text() if text is None else text, str(path))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                target = ".".join([*base, *([node.module] if node.module else [])])
            elif node.module and node.module.startswith("kafka_format."):
                target = node.module.removeprefix("kafka_format.")
            else:
                continue
            # "from x import y": y is a module of x, or a name defined in x
            targets = {
                f"{target}.{a.name}" if _is_module(f"{target}.{a.name}") else target
                for a in node.names
            }
            found += [(t, node.lineno) for t in sorted(targets)]
        elif isinstance(node, ast.Import):
            found += [
                (a.name.removeprefix("kafka_format."), node.lineno)
                for a in node.names
                if a.name.startswith("kafka_format.")
            ]
    return found


def _layer(module: str) -> str | None:
    parts = module.split(".")
    if parts[0] != "runtime":
        return None
    if len(parts) > 2 and parts[1] in RANK:
        return parts[1]
    if len(parts) == 2 and parts[1] in RANK:  # the subpackage itself
        return parts[1]
    return ""


def _sources(folder: Path) -> list[Path]:
    return sorted(folder.rglob("*.py"))


def _graph() -> dict[str, set[str]]:
    modules = {_module_name(p): p for p in _sources(RUNTIME)}
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        if name in ALIASES:
            continue
        graph[name] = set()
        for target, _ in _imports(path):
            # "from .x import name": name may be an attribute, x the module
            while target not in modules and "." in target:
                target = target.rsplit(".", 1)[0]
            if target in modules and target != name:
                graph[name].add(target)
    return graph


def test_imports_point_down_the_flow():
    wrong = []
    for path in _sources(RUNTIME):
        source = _module_name(path)
        if source in ALIASES:
            continue
        layer = _layer(source)
        for target, line in _imports(path):
            if not target.startswith("runtime"):
                continue
            other = _layer(target)
            if other is None or other == layer:
                continue
            one_way = (other, layer) in ONE_WAY
            if RANK[other] > RANK[layer] or frozenset({layer, other}) in SEPARATE or one_way:
                wrong.append(f"{path.relative_to(ROOT)}:{line}: {source} ({layer or 'root'}) "
                             f"imports {target} ({other or 'root'})")  # fmt: skip
    assert not wrong, "imports against the flow:\n" + "\n".join(wrong)


def test_spark_never_imports_the_command_line():
    wrong = [
        f"{p.relative_to(ROOT)}:{line}: {target}"
        for p in _sources(ROOT / "spark_udfs")
        for target, line in _imports(p)
        if target.startswith("runtime.cli")
    ]
    assert not wrong, wrong


def test_no_import_cycles():
    graph = _graph()
    state: dict[str, int] = {}
    cycles = []

    def visit(node: str, stack: list[str]) -> None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                cycles.append(" → ".join([*stack[stack.index(nxt) :], nxt]))
            elif nxt not in state:
                visit(nxt, stack)
        stack.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node, [])
    assert not cycles, "import cycles:\n" + "\n".join(cycles)


@pytest.mark.parametrize("folder", ["runtime", "spark_udfs", "schemas", "scripts", "src"])
def test_no_module_over_800_lines(folder):
    sizes = {
        str(p.relative_to(ROOT)): len(p.read_text().splitlines()) for p in _sources(ROOT / folder)
    }
    long = {name: n for name, n in sizes.items() if n > NOT_YET_SPLIT.get(name, MAX_LINES)}
    assert not long, f"modules over {MAX_LINES} lines: {long}"
    fit = [n for n in NOT_YET_SPLIT if n in sizes and sizes[n] <= MAX_LINES]
    assert not fit, f"these fit in {MAX_LINES} lines now: take them off NOT_YET_SPLIT: {fit}"


def test_few_modules_directly_in_runtime():
    top = sorted(p.name for p in RUNTIME.glob("*.py"))
    assert len(top) <= MAX_TOP_LEVEL_MODULES, top


def test_no_private_name_is_imported_from_another_module():
    """A name another module uses is public where it is defined (the house rule): importing
    ``_name`` across modules hides a module's real interface. Aliasing a public name to a
    private one on import (``from .x import thing as _thing``) is the importer's business."""
    private = []
    for folder in (RUNTIME, ROOT / "spark_udfs"):
        for path in _sources(folder):
            for node in ast.walk(ast.parse(path.read_text())):
                if not isinstance(node, ast.ImportFrom):
                    continue
                ours = node.level > 0 or (node.module or "").startswith("kafka_format")
                for alias in node.names if ours else ():
                    if alias.name.startswith("_") and not alias.name.startswith("__"):
                        private.append(f"{path.relative_to(ROOT)}:{node.lineno} {alias.name}")
    assert not private, "private names imported across modules:\n" + "\n".join(private)


def test_the_checker_sees_an_upward_import():
    """The rules above are only as good as the parser: these imports must be found."""
    probe = RUNTIME / "format" / "probe.py"  # never written: its text is given
    text = "from ..cli.app import main\nfrom ..read import reader\nfrom .. import errors\n"
    targets = [t for t, _ in _imports(probe, text)]
    assert targets == ["runtime.cli.app", "runtime.read.reader", "runtime.errors"]
    assert [_layer(t) for t in targets] == ["cli", "read", ""]
