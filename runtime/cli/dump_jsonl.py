"""``kafka-format dump --jsonl``: the data records of logs as canonical JSON lines, fast.

Records are read by the columnar fast path (``iter_arrow_batches``: numba kernels into Arrow)
and written as lines by ``read/jsonlines`` from the Arrow buffers, with no Python object per
record: about three times what ``read_table`` takes, where building each line in Python took
twenty-seven. The lines are the ones ``iter_records`` and ``format/jsonform.record_json`` give, then
``topic``, ``partition``, ``file`` and ``position`` (the byte position of the record's batch),
so that a record can be found again (the tests compare them on the corpus and on generated and
damaged logs), and so is what goes wrong: a damaged batch is named on stderr, the records of
every intact one are printed.

A batch the reference reads but Arrow cannot hold (an offset or a timestamp beyond what its
columns take; ``columnar.UnrepresentableError``) is read again from the file by the reference
decoder, and its records printed in their place. ``--batches`` prints batch headers, from the
reference reader (``iter_batches``).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator
from typing import Any, TextIO

from ..errors import KafkaFormatError
from ..format.batches import ReadOptions, read_batch
from ..format.framing import Frame
from ..format.jsonform import batch_json
from ..model import Batch, Report
from ..progress import Progress
from ..read.columnar import UnrepresentableError, iter_arrow_batches
from ..read.jsonlines import JsonLines
from ..read.reader import iter_batches
from ..read.sources import is_stream_path, resolve
from .dump_decoded import decoded_lines, json_line
from .dump_result import DumpResult
from .text import DumpOptions

__all__ = ["dump_log_jsonl", "tracked"]


def dump_log_jsonl(
    path: str,
    options: DumpOptions,
    out: TextIO,
    err: TextIO,
    progress: Progress | None = None,
) -> DumpResult:
    """The data records (or with ``--batches`` the batch headers) of a log, a file of batches
    or a partition directory, one JSON object a line."""
    result = DumpResult()
    report = Report()
    if options.batches:
        _batch_headers(path, options, out, report, progress)
    else:
        _records(path, options, out, report, progress)
    for exc in report.errors:
        result.errors.append(str(exc))
        err.write(f"error: {exc}\n")
    for tail in report.truncated:
        err.write(f"Found {tail.size} invalid bytes at the end of {tail.file}\n")
    return result


def _max_bytes(options: DumpOptions) -> dict[str, Any]:
    if options.max_decompressed_bytes is None:
        return {}
    return {"max_decompressed_bytes": options.max_decompressed_bytes}


def _records(
    path: str, options: DumpOptions, out: TextIO, report: Report, progress: Progress | None
) -> None:
    # ``found`` is the fast path's report; ``report`` gets it as the reference words it, its
    # batches of values Arrow cannot hold read again (_errors).
    found = Report()
    batches = iter_arrow_batches(
        path,
        isolation=options.isolation,  # type: ignore[arg-type]
        include_headers=True,
        verify_crc=options.verify_crc,
        errors="skip",
        report=found,
        progress=progress,
        include_position=not options.canonical,
        **_max_bytes(options),
    )
    write = _writer(out)
    seen = 0
    with JsonLines() as lines:
        encode = lines.encode
        if options.decoding:
            # Decoders are Python: the lines are built row by row (dump_decoded).
            def encode(batch):
                return decoded_lines(batch, options)

        for batch in batches:
            # Errors the fast path reported since the last batch: every row before each of
            # them was in the batches already written.
            seen = _errors(found, seen, options, write, report)
            write(encode(batch))
        _errors(found, seen, options, write, report)
    report.truncated.extend(found.truncated)


def _errors(found: Report, seen: int, options: DumpOptions, write, report: Report) -> int:
    for exc in found.errors[seen:]:
        if isinstance(exc, UnrepresentableError):
            _reread(exc, options, write, report)
        else:
            report.errors.append(exc)
    return len(found.errors)


def _reread(exc: UnrepresentableError, options: DumpOptions, write, report: Report) -> None:
    """The batch the fast path could not hold, read again by the reference decoder: its
    records, or the reference's own error for it (the fast path had stopped at the first
    value out of range; the reference reads on). Under read_committed an aborted batch's
    records are not printed, but its damage is reported, as the reference reports it."""
    try:
        batch = _read_frame(exc, options)
    except KafkaFormatError as error:
        report.errors.append(error)
        return
    except Exception:  # the file changed since, or a gap of the reference decoder
        # Never a traceback: the fast path's verdict stands.
        report.errors.append(exc)
        return
    if exc.admitted and batch.records and not batch.is_control:
        where = {} if options.canonical else _where(batch)
        write([json_line(record, where, options).encode("ascii") for record in batch.records])


def _read_frame(exc: KafkaFormatError, options: DumpOptions) -> Batch:
    if exc.file is None or exc.position is None or is_stream_path(exc.file):
        raise exc  # a pipe cannot be read again: the fast path's verdict stands
    with open(exc.file, "rb") as fh:
        fh.seek(exc.position)
        data = fh.read(12)
        length = int.from_bytes(data[8:12], "big", signed=True)
        data += fh.read(max(length, 0))
    read = ReadOptions(options.verify_crc, True, **_max_bytes(options))
    frame = Frame(exc.position, int.from_bytes(data[:8], "big", signed=True), data[16], data)
    return read_batch(frame, read, file=exc.file)


def _where(batch: Batch) -> dict[str, Any]:
    """The keys the fast path's lines end with, for a batch read again from its file."""
    try:
        found = resolve(batch.file) if batch.file else []
    except (KafkaFormatError, OSError):
        found = []
    topic, partition = (found[0].topic, found[0].partition) if found else (None, None)
    return {"topic": topic, "partition": partition, "file": batch.file, "position": batch.position}


def _writer(out: TextIO):
    """Writes parts of ASCII bytes to ``out``: to its binary buffer where it has one."""
    raw = getattr(out, "buffer", None)
    if raw is not None:
        out.flush()

        def write(parts: Iterable[bytes | memoryview]) -> None:
            raw.writelines(parts)

        return write

    def write_text(parts: Iterable[bytes | memoryview]) -> None:
        out.write("".join(bytes(part).decode("ascii") for part in parts))

    return write_text


def _batch_headers(
    path: str, options: DumpOptions, out: TextIO, report: Report, progress: Progress | None
) -> None:
    read: dict[str, Any] = dict(verify_crc=options.verify_crc, errors="skip", report=report)
    read.update(_max_bytes(options))
    for batch in tracked(iter_batches(path, records=False, **read), progress):
        out.write(json.dumps(batch_json(batch), separators=(",", ":")) + "\n")


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
