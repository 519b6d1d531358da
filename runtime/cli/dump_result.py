"""What a dump found: the exit status's errors and kafka-dump-log's closing reports."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

Pairs = dict[str, list[tuple[int, int]]]


@dataclass(slots=True)
class DumpResult:
    """What went wrong while dumping (decides the exit status), and kafka-dump-log's
    reports, printed after all files as it prints them: pairs of numbers by absolute path."""

    errors: list[str] = field(default_factory=list)
    #: (index offset, log offset): ``Mismatches in :FILE``.
    index_mismatches: Pairs = field(default_factory=dict)
    #: (index timestamp, log timestamp): ``Found timestamp mismatch in :FILE``.
    timestamp_mismatches: Pairs = field(default_factory=dict)
    #: (index timestamp, previously indexed timestamp): ``Found out of order timestamp``.
    out_of_order_timestamps: Pairs = field(default_factory=dict)
    #: (indexed offset, log offset found, -1 for none): ``...not found in the log.``
    offsets_not_found: Pairs = field(default_factory=dict)
    #: (offset, next offset): ``Non-consecutive offsets in FILE``.
    non_consecutive: Pairs = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.errors

    def merge(self, other: DumpResult) -> None:
        self.errors.extend(other.errors)
        for name in (
            "index_mismatches",
            "timestamp_mismatches",
            "out_of_order_timestamps",
            "offsets_not_found",
            "non_consecutive",
        ):
            mine: Pairs = getattr(self, name)
            for file, pairs in getattr(other, name).items():
                mine.setdefault(file, []).extend(pairs)


def absolute(path: str | os.PathLike[str]) -> str:
    # kafka-dump-log keys its reports by File.getAbsolutePath: absolute, links not resolved.
    return str(Path(path).absolute())


def print_reports(result: DumpResult, err: TextIO) -> None:
    """kafka-dump-log's closing reports, in its order and words (``DumpLogSegments.main``)."""
    for file, pairs in result.index_mismatches.items():
        err.write(f"Mismatches in :{file}\n")
        for index_offset, log_offset in pairs:
            err.write(f"  Index offset: {index_offset}, log offset: {log_offset}\n")
    for file, pairs in result.timestamp_mismatches.items():
        err.write(f"Found timestamp mismatch in :{file}\n")
        for index_ts, log_ts in pairs:
            err.write(f"  Index timestamp: {index_ts}, log timestamp: {log_ts}\n")
    for file, pairs in result.out_of_order_timestamps.items():
        err.write(f"Found out of order timestamp in :{file}\n")
        for index_ts, previous in pairs:
            err.write(f"  Index timestamp: {index_ts}, Previously indexed timestamp: {previous}\n")
    for pairs in result.offsets_not_found.values():
        err.write("The following indexed offsets are not found in the log.\n")
        for indexed, found in pairs:
            err.write(f"Indexed offset: {indexed}, found log offset: {found}\n")
    for file, pairs in result.non_consecutive.items():
        err.write(f"Non-consecutive offsets in {file}\n")
        for first, second in pairs:
            err.write(f"  {first} is followed by {second}\n")
