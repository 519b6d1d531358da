"""``dump --isolation read_committed`` for the outputs that print batches (kafka-dump-log's
text, ``--jsonl --batches``): the batches whose records a ``read_committed`` consumer receives.

Which those are is the read path's own rule, not a copy of it: the aborted and open
transactions come from ``transactions.collect_aborted`` (the markers, the ``.txnindex`` files,
the later segments read ahead), in a first pass over batch headers and control batches, as
``iter_records`` makes it; then each batch is put to ``transactions.Admission``, the
per-batch decision from its header alone that ``iter_records`` and the columnar reader make.
It needs no batch before it, so a range (``-o``, ``--from``) is decided as the whole log is.
Control batches are never shown: a consumer receives no markers.

A pipe is read once into memory for it (the first pass and the dump are two), as the read
API's ``read_committed`` holds it.

``--group`` / ``--transactional-id`` narrow what those outputs show too (:func:`owned`): the
batches holding the owner's records, with only those.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator

from ..model import Batch
from ..read.reader import iter_batches
from ..read.sources import Source, read_once, reads_once
from ..read.transactions import Admission, collect_aborted
from .text import DumpOptions

#: Whether a batch is shown; None: every batch is.
Shows = Callable[[Batch], bool] | None


def committed_view(path: str, options: DumpOptions) -> tuple[Source, str | None, Shows]:
    """What to read for ``path`` (the path itself, or a pipe's bytes), the name that labels
    those bytes, and which of the batches read to show under ``options.isolation``."""
    if options.isolation != "read_committed":
        return path, None, None
    source: Source = path
    name = None
    if reads_once(path):
        source, name = read_once(path)
    # As the read API's first read_committed pass: never stopped by damage (the dump's own
    # pass reports it), salvaging where the dump salvages.
    errors = "salvage" if options.errors == "salvage" else "skip"
    markers = iter_batches(source, records=_is_control, verify_crc=False, errors=errors, name=name)
    admission = Admission(collect_aborted(markers, source))
    return source, name, admission.admits_batch


def counted(
    batches: Iterable[Batch], shows: Callable[[Batch], bool], limit: int
) -> Iterator[Batch]:
    """``-c``'s count under read_committed, of the records shown (``iter_batches``' own count
    takes every record, an aborted transaction's too): the batches up to the one holding the
    ``limit``-th record shown, its records cut there, as ``iter_batches`` cuts them."""
    left = limit
    for batch in batches:
        if left <= 0:
            return
        if batch.records and not batch.is_control and shows(batch):
            batch.records = batch.records[:left]
            left -= len(batch.records)
        yield batch


def _is_control(batch: Batch) -> bool:
    return batch.is_control


def owned(batches: Iterable[Batch], options: DumpOptions) -> Iterator[Batch]:
    """``--group`` / ``--transactional-id``: the batches holding the owner's records, with
    only those; a damaged batch still passes, so that its damage is reported."""
    owner = options.key_owner
    if owner is None:
        yield from batches
        return
    for batch in batches:
        if batch.error is not None or batch.crc_valid is False:
            batch.records = [r for r in batch.records or () if owner.owns(r.key)]
            yield batch
        elif not batch.is_control and batch.records:
            batch.records = [r for r in batch.records if owner.owns(r.key)]
            if batch.records:
                yield batch
