"""A command's reads of a partition's segments, one file at a time, served from one read of
a run of small files: what ``iter_arrow_batches(path, errors="skip", include_position=True,
**options)`` gives each file, its batches and its report, without the ~1 ms of Python a
file's own read costs where its segments are small.

``verify`` and ``stats`` take a partition's segments one after the other, each read through
the Arrow fast path on its own: on a directory of 32 KiB segments that read was most of
their time. Here the first request for a small segment reads it and the small segments after
it (each below ``grouped.GROUP_FILE_BYTES``, up to :data:`RUN_BYTES` in all) as one read of
lone files, which the columnar reader decodes together (``grouped.py``: a file that is not
clean is read again alone, with its own verdict), and hands each file its own batches (with
``include_position`` no batch spans two files) and its own report entries; the caller takes
them in its order. Each file is an input as its own read makes it (``sources.resolve``: its
partition from its directory, its base offset from its name, no next segment), so what each
gets is what its own read gives; at most one run is held.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa

from ..errors import KafkaFormatError
from ..model import Report
from . import grouped
from .columnar import iter_arrow_batches
from .request import ReadRequest
from .sources import resolve

__all__ = ["RUN_BYTES", "FilesAhead"]

#: The most bytes of files one run reads (a group's, ``columnar``'s chunk over four).
RUN_BYTES = 4 * 1024 * 1024

#: A file's batches and the report its own read would fill.
Read = tuple[list[pa.RecordBatch], Report]


class FilesAhead:
    """Reads of ``paths`` (in the order they will be asked for), a run of small ones at
    once; :meth:`take` gives one file's and forgets it."""

    __slots__ = ("_held", "_options", "_paths", "_where")

    def __init__(self, paths: Sequence[Path], **options: Any) -> None:
        """``options``: the rest of each file's own read (``include_headers``,
        ``verify_crc``, ``max_decompressed_bytes``), the same for the run."""
        self._paths = [Path(p) for p in paths]
        self._where = {p: i for i, p in enumerate(self._paths)}
        self._held: dict[Path, Read] = {}
        self._options = options

    def take(self, path: Path) -> Read | None:
        """``path``'s batches and report, as ``iter_arrow_batches(path, errors="skip",
        report=..., include_position=True, **options)`` gives them; None where it is not a
        small file of the list (read it alone)."""
        path = Path(path)
        found = self._held.pop(path, None)
        if found is not None:
            return found
        self._held.clear()  # asked out of order: what was read ahead is not wanted
        at = self._where.get(path)
        if at is None:
            return None
        # the run from this file on, by the rule of groups (stats taken until it ends)
        run, _ = next(grouped.packs(iter(self._paths[at:]), grouped.small_size, RUN_BYTES))
        if len(run) < 2:
            return None
        self._held = _read(run, self._options)
        return self._held.pop(path, None)


def _read(run: list[Path], options: dict[str, Any]) -> dict[Path, Read]:
    """Each file's read, or nothing where the run cannot stand for them (a file that is no
    lone input of its own name, or a read that raised: each file's own read says what)."""
    report = Report()
    by_name: dict[str, list[pa.RecordBatch]] = {str(p): [] for p in run}
    try:
        inputs = tuple(log for path in run for log in resolve(path))
        if [log.name for log in inputs] != list(by_name):
            return {}
        request = ReadRequest(inputs, errors="skip")
        batches = iter_arrow_batches(request, report=report, include_position=True, **options)
        for batch in batches:
            by_name[batch.column("file").dictionary[0].as_py()].append(batch)
    except (KafkaFormatError, OSError):
        return {}
    found = [*report.errors, *report.truncated, *report.timestamps_out_of_range]
    if any(getattr(entry, "file", None) not in by_name for entry in found):
        return {}  # an entry no file can be given: each file's own read reports it
    out: dict[Path, Read] = {}
    for path in run:
        name = str(path)
        own = Report(
            errors=[e for e in report.errors if e.file == name],
            truncated=[t for t in report.truncated if t.file == name],
            timestamps_out_of_range=[t for t in report.timestamps_out_of_range if t.file == name],
        )
        out[path] = (by_name[name], own)
    return out
