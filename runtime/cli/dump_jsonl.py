"""``kafka-format dump --jsonl``: the data records of logs as canonical JSON lines, fast.

Records are read by the columnar fast path (``iter_arrow_batches``: numba kernels into Arrow)
and written as lines by ``read/jsonlines`` from the Arrow buffers, with no Python object per
record: about three times what ``read_table`` takes, where building each line in Python took
twenty-seven. The lines are the ones ``iter_records`` and ``format/jsonform.record_json`` give, then
``topic``, ``partition``, ``file`` and ``position`` (the byte position of the record's batch),
so that a record can be found again (the tests compare them on the corpus and on generated and
damaged logs), and so is what goes wrong: a damaged batch is named on stderr, the records of
every intact one are printed (with ``--salvage``, those after framing damage too).

A record whose timestamp Arrow's microseconds cannot hold is printed with a null timestamp, as
every Arrow reader returns it, and one line on stderr says where the first one is and how many
there are (``Report.timestamps_out_of_range``; the exit status stays 0: it is no damage);
``dump --deep-iteration`` prints their milliseconds. ``--batches`` prints batch headers, from
the reference reader (``iter_batches``).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator
from typing import Any, TextIO

from ..format.jsonform import batch_json
from ..model import Batch, Report
from ..progress import Progress
from ..read.columnar import iter_arrow_batches
from ..read.jsonlines import JsonLines
from ..read.reader import iter_batches
from .dump_committed import committed_view, counted
from .dump_decoded import decoded_lines
from .dump_result import DumpResult
from .stdio import pipe_closed
from .text import DumpOptions

__all__ = ["dump_counted_jsonl", "dump_log_jsonl", "range_bounds", "tracked"]


def dump_log_jsonl(
    path: str,
    options: DumpOptions,
    out: TextIO,
    err: TextIO,
    progress: Progress | None = None,
) -> DumpResult:
    """The data records (or with ``--batches`` the batch headers) of a log, a file of batches
    or a partition directory, one JSON object a line."""
    return dump_counted_jsonl(path, options, out, err, progress)[0]


def dump_counted_jsonl(
    path: str,
    options: DumpOptions,
    out: TextIO,
    err: TextIO,
    progress: Progress | None = None,
) -> tuple[DumpResult, int]:
    """:func:`dump_log_jsonl`, and how many records it printed (or its batches held): what
    ``-c`` counts."""
    result = DumpResult()
    report = Report()
    if options.batches:
        count = _batch_headers(path, options, out, report, progress)
    else:
        count = _records(path, options, out, err, report, progress)
    for exc in report.errors:
        result.errors.append(str(exc))
        err.write(f"error: {exc}\n")
    for tail in report.truncated:
        err.write(f"Found {tail.size} invalid bytes at the end of {tail.file}\n")
    if report.timestamps_out_of_range:
        err.write(f"warning: {_out_of_range(report)}\n")
    return result, count


def _out_of_range(report: Report) -> str:
    notes = report.timestamps_out_of_range
    first = notes[0]
    count = sum(note.count for note in notes)
    return (
        f"{count} record(s) in {len(notes)} batch(es) have a timestamp beyond Arrow's "
        f"microsecond range, printed as null; the first: {first.file} @{first.position}, "
        f"offset {first.first_offset} (dump --deep-iteration prints their milliseconds)"
    )


def _max_bytes(options: DumpOptions) -> dict[str, Any]:
    if options.max_decompressed_bytes is None:
        return {}
    return {"max_decompressed_bytes": options.max_decompressed_bytes}


def range_bounds(options: DumpOptions) -> dict[str, Any]:
    """``-o`` / ``-c`` / ``--from`` / ``--to`` as the read API's keywords."""
    rng = options.range
    if rng is None:
        return {}
    return {
        "start_offset": rng.start_offset,
        "end_offset": rng.end_offset,
        "start_timestamp": rng.start_timestamp,
        "end_timestamp": rng.end_timestamp,
        "max_records": rng.max_records,
    }


def _records(
    path: str,
    options: DumpOptions,
    out: TextIO,
    err: TextIO,
    report: Report,
    progress: Progress | None,
) -> int:
    batches = iter_arrow_batches(
        path,
        isolation=options.isolation,  # type: ignore[arg-type]
        include_headers=True,
        verify_crc=options.verify_crc,
        errors=options.errors,  # type: ignore[arg-type]
        report=report,
        progress=progress,
        include_position=not options.canonical,
        **_max_bytes(options),
        **range_bounds(options),
    )
    write = _writer(out)
    with JsonLines() as lines:
        encode = lines.encode
        kcat = options.kcat
        if kcat is not None:
            # -f / -J: kcat's output of the same records (cli/kcat.py)
            def encode(batch):
                return kcat(batch, err)

        elif options.decoding:
            # Decoders are Python: the lines are built row by row (dump_decoded).
            def encode(batch):
                return decoded_lines(batch, options)

        count = 0
        owner = options.key_owner
        for batch in batches:
            if owner is not None:
                batch = batch.filter(owner.mask(batch.column("key")))
                if not batch.num_rows:
                    continue
            count += batch.num_rows
            if not pipe_closed(out):  # else the lines are not built: read on for the verdict
                write(encode(batch))
            elif report.errors:
                break  # no one reads on, and the verdict is damage whatever follows
    return count


def _writer(out: TextIO):
    """Writes parts of ASCII bytes to ``out``: to its binary buffer where it has one."""
    raw = getattr(out, "buffer", None)
    if raw is not None:
        out.flush()

        def write(parts: Iterable[bytes | memoryview]) -> None:
            raw.writelines(parts)

        return write

    def write_text(parts: Iterable[bytes | memoryview]) -> None:
        # ASCII but for kcat's output (-f, -J), which writes the records' bytes as they are
        out.write("".join(bytes(part).decode("utf-8", "surrogateescape") for part in parts))

    return write_text


def _batch_headers(
    path: str, options: DumpOptions, out: TextIO, report: Report, progress: Progress | None
) -> int:
    source, name, shows = committed_view(path, options)
    read: dict[str, Any] = dict(verify_crc=options.verify_crc, errors=options.errors, report=report)
    read.update(_max_bytes(options))
    read.update(range_bounds(options))
    # A count is of records: then they are decoded, to be counted.
    counting = options.range is not None and options.range.max_records is not None
    limit = read.pop("max_records", None) if shows is not None else None
    batches = iter_batches(source, records=counting, name=name, **read)
    if shows is not None and limit is not None:
        batches = counted(batches, shows, limit)  # of the records shown
    count = 0
    for batch in tracked(batches, progress):
        if shows is not None and not shows(batch):
            continue  # read_committed: no record of it reaches a consumer
        out.write(json.dumps(batch_json(batch), separators=(",", ":")) + "\n")
        if batch.records and not batch.is_control:
            count += len(batch.records)
        if pipe_closed(out) and report.errors:
            break  # no one reads on, and the verdict is damage whatever follows
    return count


def tracked(batches: Iterable[Batch], progress: Progress | None) -> Iterator[Batch]:
    """The batches, telling ``progress`` how far each file has been read."""
    if progress is None:
        yield from batches
        return
    current: str | None = None
    for batch in batches:
        if batch.file != current:
            current = batch.file
            progress.begin_file(_file_size(current))
        progress.at(batch.position + batch.size)
        yield batch


def _file_size(path: str | None) -> int:
    try:
        return os.path.getsize(path) if path else 0
    except OSError:
        return 0
