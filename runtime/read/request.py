"""One read, resolved once from the caller's source and handed down unchanged.

A source (bytes, a path, a partition or log directory, a pipe, a file object) becomes its log
inputs exactly once, where a read starts (``iter_batches``, ``iter_records``,
``iter_arrow_batches``, ``read_table``, a Spark task). Every layer below reads
:attr:`ReadRequest.inputs`, never the source again: the windows of a range, read_committed's
first pass, the ``.txnindex`` files and the later segments that settle an open transaction.
So a directory is listed once, and a pipe is read once: when the read needs its bytes twice (a
range or read_committed reads some of them twice, salvage looks ahead) they are held in memory
from the start.

    >>> request = ReadRequest.of("orders-0", isolation="read_committed")
    >>> [log.name for log in request.inputs]  # doctest: +SKIP
    ['orders-0/00000000000000000000.log', 'orders-0/00000000000000004096.log']
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Literal

from ..errors import FramingError
from ..model import TruncatedTail
from .ranges import Range, Window, windows
from .sources import LogInput, Skipped, Source, read_once, reads_once, resolve

__all__ = [
    "ERRORS",
    "Errors",
    "Isolation",
    "ReadRequest",
    "check_errors",
    "check_isolation",
    "window_cut",
]

Errors = Literal["strict", "skip", "salvage"]
ERRORS = ("strict", "skip", "salvage")
Isolation = Literal["read_uncommitted", "read_committed"]


def check_errors(errors: str) -> None:
    if errors not in ERRORS:
        raise ValueError(f"errors must be 'strict', 'skip' or 'salvage', not {errors!r}")


def check_isolation(isolation: str) -> None:
    if isolation not in ("read_uncommitted", "read_committed"):
        raise ValueError(f"isolation must be read_uncommitted or read_committed, not {isolation!r}")


@dataclass(frozen=True, slots=True)
class ReadRequest:
    """What one read reads and how; built by :meth:`of` (or :meth:`span`), and changed only
    by :meth:`first_pass`, which keeps the inputs."""

    #: The log inputs in the order a consumer reads them (``sources.resolve``'s answer).
    inputs: tuple[LogInput, ...]
    #: What the broker's directory rules kept from being read.
    skipped: tuple[Skipped, ...] = ()
    isolation: Isolation = "read_uncommitted"
    errors: Errors = "strict"
    #: The range to read of each partition; None: all of it.
    range: Range | None = None
    #: The windows to read when the caller knows them (a Spark task: its split's bytes and
    #: offset bounds); None: found from ``inputs`` and ``range`` (``ranges.windows``).
    spans: tuple[Window, ...] | None = None
    #: read_committed's aborted transactions when known before the read (a Spark task gets
    #: them from the driver, which read the markers); None: collected from the inputs. A
    #: ``transactions.AbortedTransactions`` (not named here: ``transactions`` reads requests).
    aborted: Any = None

    @classmethod
    def of(
        cls,
        source: Source | ReadRequest,
        *,
        name: str | None = None,
        isolation: Isolation = "read_uncommitted",
        errors: Errors = "strict",
        range: Range | None = None,
    ) -> ReadRequest:
        """The request for ``source`` (``name`` labels bytes and streams in errors); a request
        passed as the source is returned as it is."""
        if isinstance(source, ReadRequest):
            return source
        check_isolation(isolation)
        check_errors(errors)
        twice = isolation == "read_committed" or range is not None or errors == "salvage"
        if twice and reads_once(source):
            source, read_name = read_once(source)
            name = name or read_name
        resolved = resolve(source, name=name)
        return cls(tuple(resolved), tuple(resolved.skipped), isolation, errors, range)

    @classmethod
    def span(
        cls,
        window: Window,
        *,
        isolation: Isolation = "read_uncommitted",
        errors: Errors = "strict",
        aborted: Any = None,
    ) -> ReadRequest:
        """One window of one input, read as every reader reads: what a Spark task reads of
        its split (``aborted``: the transactions the driver found aborted; under
        read_committed the window ends at the last stable offset already)."""
        check_isolation(isolation)
        check_errors(errors)
        return cls((window.log,), (), isolation, errors, None, (window,), aborted)

    def windows(self, *, from_start: bool = False) -> Iterator[Window]:
        """The windows to read, in order (``from_start``: read_committed's walk, which needs
        every marker of a partition)."""
        if self.spans is not None:
            return iter(self.spans)
        return windows(self.inputs, self.range, from_start=from_start)

    def first_pass(self, errors: Errors) -> ReadRequest:
        """read_committed's first pass: every batch of the same inputs (no range), with
        ``errors``."""
        check_errors(errors)
        return dataclasses.replace(self, errors=errors, range=None)

    @property
    def salvage(self) -> bool:
        return self.errors == "salvage"

    @property
    def committed(self) -> bool:
        return self.isolation == "read_committed"


def window_cut(
    log: LogInput, tail: TruncatedTail, limit: int, available: int
) -> FramingError | None:
    """The damage a truncated tail found at a window's end ``limit`` is when the window ends
    before its file does (``available`` bytes in hand, ``log.size`` the file's when larger;
    both, and ``limit``, from ``log.origin``): a window ends where a batch does
    (``ranges.windows`` finds it so; a Spark split is planned so), and a batch running past it
    is no tail of the file but a window that cuts a batch. None where the tail is the file's
    own."""
    size = log.size if log.size is not None else log.origin + available
    limit += log.origin
    if limit >= size:
        return None
    return FramingError(
        f"batch runs past the end of the bytes to read at {limit}, before the end of the file "
        "(a split, or an index entry, that points inside a batch?)",
        file=log.name,
        position=tail.position,
    )
