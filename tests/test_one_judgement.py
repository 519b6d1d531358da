"""One judgement, one module: each rule that decides a verdict is written once, where this
table says, and the other modules call it (the house rule of the brief).

Each row names the question, the module that answers it, the names it defines for the answer,
and text that only that module may hold besides ``format/messages.py``, where every cause is
worded: a copy of the rule elsewhere would have to repeat one of them.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = ("runtime", "spark_udfs")

#: question -> (module, names defined there and nowhere else, text found only there)
ANSWERS: dict[str, tuple[str, tuple[str, ...], tuple[str, ...]]] = {
    "what lies at a position (a batch, a tail, damage)": (
        "runtime/format/framing.py",
        ("judge", "end_of_walk"),
        (),
    ),
    "where a batch whose length lied really ends": (
        "runtime/format/extent.py",
        ("proven_end", "framed_end", "repaired_frame"),
        (),
    ),
    "where a salvaging walk goes on, and what it may keep": (
        "runtime/read/salvage.py",
        ("salvage_walk", "after_bad_crc", "iter_salvaged_frames", "salvage_scan"),
        (),
    ),
    "what an index entry is worth": (
        "runtime/files/index_lookup.py",
        ("check_entry", "start_for_offset", "start_for_timestamp"),
        (),
    ),
    "where a batch's offsets may lie in a segment": (
        "runtime/read/segment_offsets.py",
        ("SegmentOffsets", "judge_frames"),
        ("the indexes cannot hold it",),
    ),
    "what read_committed admits": (
        "runtime/read/transactions.py",
        ("AbortedRanges", "Admission", "AbortedWalk"),
        (),
    ),
    "which record offsets a batch may hold": (
        "runtime/format/batches.py",
        ("offset_delta_damage",),
        (),
    ),
}


def _sources() -> list[Path]:
    return [p for folder in FOLDERS for p in (ROOT / folder).rglob("*.py")]


def _defined(path: Path) -> set[str]:
    """The module's own functions and classes (methods are their class's business)."""
    tree = ast.parse(path.read_text())
    return {
        node.name
        for node in tree.body
        if isinstance(node, ast.FunctionDef | ast.ClassDef | ast.AsyncFunctionDef)
    }


@pytest.mark.parametrize("question", list(ANSWERS))
def test_one_module_answers(question):
    module, names, texts = ANSWERS[question]
    home = ROOT / module
    assert set(names) <= _defined(home), f"{module} no longer defines {names}"
    for path in _sources():
        if path == home:
            continue
        words = path.relative_to(ROOT).as_posix() == "runtime/format/messages.py"
        again = set(names) & _defined(path)
        assert not again, f"{path.relative_to(ROOT)} defines {again} again ({question})"
        text = path.read_text()
        for phrase in () if words else texts:
            assert phrase not in text, f"{path.relative_to(ROOT)} words {phrase!r} itself"


def test_the_old_copies_are_gone():
    """The second and third copies the issue found: Spark's own aborted ranges, the
    committed filter beside the consumer's walk, the index rules of ranges and the partition
    layer, recover's own resynchronising walk."""
    gone = {"_Aborted", "CommittedFilter", "_entry_holds", "_check_entry", "_expected"}
    for path in _sources():
        again = gone & _defined(path)
        assert not again, f"{path.relative_to(ROOT)} defines {again}"
    for consumer in ("runtime/log/recover.py", "spark_udfs/_reading.py"):
        tree = ast.parse((ROOT / consumer).read_text())
        called = {
            node.func.id
            for node in ast.walk(tree)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
        }
        assert "resync" not in called and "judge" not in called, consumer
    # The stream's end walk resumes past damage by the salvaging walk's rule, not its own.
    tree = ast.parse((ROOT / "spark_udfs/streaming_offsets.py").read_text())
    names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    assert "resync" not in names and "salvage_walk" in names


def test_the_checker_sees_a_copy(tmp_path):
    """The table is only as good as its parser: a definition is found."""
    probe = tmp_path / "probe.py"
    probe.write_text("def salvage_walk():\n    pass\nclass AbortedRanges:\n    pass\n")
    assert {"salvage_walk", "AbortedRanges"} <= _defined(probe)
