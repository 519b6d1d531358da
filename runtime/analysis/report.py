"""What ``verify`` found: problems by file, with their severity, and the summary line.

Kept apart from the checks so that the partitioner check (``placement``) can write to a report
without importing the checks that call it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

from ..errors import KafkaFormatError
from ..format.messages import located

#: The kind of the per-partition entries the partitioner check adds to a report.
PLACEMENT_KIND = "partitioner"


class Placed(Protocol):
    """A topic's partitioner findings (``placement.TopicPlacement``)."""

    def as_json(self) -> dict[str, Any]: ...

    def line(self) -> str: ...


#: A note is what a healthy log may hold and an auditor may want to know (compaction's gaps).
Severity = Literal["error", "warning", "note"]
#: Gaps listed in a report before the rest are only counted.
MAX_LISTED_GAPS = 1000


@dataclass(slots=True, frozen=True)
class Problem:
    """One finding: where (file, byte position) and what."""

    severity: Severity
    file: str
    position: int | None
    check: str
    message: str
    details: tuple[Any, ...] = ()
    #: The batch's base offset, for damage found in a batch (as errors name it).
    base_offset: int | None = None

    def line(self) -> str:
        """``severity: file @position (base offset N): message``, as every tool writes it."""
        return (
            f"{self.severity}: {located(self.file, self.position, self.base_offset, self.message)}"
        )

    def as_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "severity": self.severity,
            "file": self.file,
            "position": self.position,
            "check": self.check,
            "message": self.message,
        }
        if self.base_offset is not None:
            out["base_offset"] = self.base_offset
        if self.details:
            out["details"] = list(self.details)
        return out


@dataclass(slots=True)
class FileReport:
    """The checks made on one file and what they found."""

    file: str
    kind: str
    #: What was looked at: batches, records, entries...
    counts: dict[str, int] = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)

    def add(
        self,
        severity: Severity,
        check: str,
        message: str,
        position: int | None = None,
        details: Iterable[Any] = (),
    ) -> None:
        self.problems.append(Problem(severity, self.file, position, check, message, tuple(details)))

    def error(self, check: str, message: str, position: int | None = None) -> None:
        self.add("error", check, message, position)

    def warning(self, check: str, message: str, position: int | None = None) -> None:
        self.add("warning", check, message, position)

    def from_exception(self, check: str, exc: KafkaFormatError) -> None:
        self.problems.append(
            Problem("error", self.file, exc.position, check, exc.reason, (), exc.base_offset)
        )


@dataclass(slots=True)
class VerifyReport:
    files: list[FileReport] = field(default_factory=list)
    #: Per topic, what ``--partitioner`` found (None when the check was not asked for).
    placement: dict[str, Placed] | None = None

    @property
    def problems(self) -> list[Problem]:
        return [p for f in self.files for p in f.problems]

    @property
    def errors(self) -> list[Problem]:
        return [p for p in self.problems if p.severity == "error"]

    @property
    def warnings(self) -> list[Problem]:
        return [p for p in self.problems if p.severity == "warning"]

    @property
    def notes(self) -> list[Problem]:
        return [p for p in self.problems if p.severity == "note"]

    @property
    def ok(self) -> bool:
        return not self.errors

    def new(self, file: str | Path, kind: str) -> FileReport:
        report = FileReport(str(file), kind)
        self.files.append(report)
        return report

    def as_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "ok": self.ok,
            "errors": len(self.errors),
            "warnings": len(self.warnings),
            "notes": len(self.notes),
            "files": [
                {
                    "file": f.file,
                    "kind": f.kind,
                    "counts": f.counts,
                    "ok": not any(p.severity == "error" for p in f.problems),
                    "problems": [p.as_json() for p in f.problems],
                }
                for f in self.files
            ],
        }
        if self.placement is not None:
            out["partitioner"] = [t.as_json() for t in self.placement.values()]
        return out

    def summary(self) -> str:
        """The last line: files by kind, batches, data and control records (named by kind:
        ``stats`` and ``recover`` count data records only), then the verdict's counts."""
        files = [f for f in self.files if f.kind != PLACEMENT_KIND]  # directories, not files
        kinds: dict[str, int] = {}
        for f in files:
            kinds[f.kind] = kinds.get(f.kind, 0) + 1
        batches, data, control = (
            sum(f.counts.get(key, 0) for f in files)
            for key in ("batches", "data_records", "control_records")
        )
        parts = ", ".join(f"{n} {k}" for k, n in kinds.items()) or "none"
        notes = len(self.notes)
        return (
            f"Checked {_count(len(files), 'file')} ({parts}; {_count(batches, 'batch')}, "
            f"{_count(data, 'data record')}, {_count(control, 'control record')}): "
            f"{_count(len(self.errors), 'error')}, {_count(len(self.warnings), 'warning')}"
            + (f", {_count(notes, 'note')}" if notes else "")
        )


def _count(n: int, noun: str) -> str:
    return f"{n:,} {noun}" if n == 1 else f"{n:,} {noun}{'es' if noun.endswith('ch') else 's'}"
