"""Reader for a segment's transaction index (``.txnindex``): its aborted transactions.

Layout (Kafka's ``AbortedTxn``), 34 bytes an entry, big-endian, no header, no preallocation::

    offset  size  field
    0       2     version             int16, 0 (AbortedTxn.CURRENT_VERSION)
    2       8     producer id         int64
    10      8     first offset        int64  first offset of the aborted transaction
    18      8     last offset         int64  offset of its ABORT marker (in this segment)
    26      8     last stable offset  int64  the partition's LSO when the marker was written

The file holds the transactions whose ABORT marker lies in the segment, in marker order
(``TransactionIndex.append`` requires last offsets to increase); a transaction may have
started in an earlier segment. Offsets in the entries are absolute.
"""

from __future__ import annotations

import os
import struct
from dataclasses import dataclass
from typing import Self

from ..errors import IndexFileError
from ..format import layout
from .names import parse_segment_file_name

CURRENT_VERSION = 0

_ENTRY = struct.Struct(layout.TXN_INDEX_ENTRY_FORMAT)


@dataclass(frozen=True, slots=True)
class AbortedTxn:
    """One aborted transaction: records of ``producer_id`` in [first_offset, last_offset]."""

    producer_id: int
    first_offset: int
    last_offset: int
    last_stable_offset: int
    version: int = CURRENT_VERSION


@dataclass(frozen=True, slots=True)
class TxnIndexSearchResult:
    """``TxnIndexSearchResult``: the overlapping aborted transactions, and whether the search
    is complete (True: no later segment can hold more for this fetch range)."""

    aborted: tuple[AbortedTxn, ...]
    is_complete: bool


class TransactionIndex:
    """All entries of one ``.txnindex`` file, read eagerly (the files are small)."""

    def __init__(
        self,
        data: bytes | bytearray | memoryview,
        start_offset: int,
        *,
        file: str | None = None,
        strict: bool = True,
    ) -> None:
        self.file = file
        #: The segment's base offset (``TransactionIndex.startOffset``).
        self.start_offset = start_offset
        self.problem: IndexFileError | None = None
        buf = memoryview(data).cast("B")
        whole, partial = divmod(len(buf), layout.TXN_INDEX_ENTRY_SIZE)
        if partial:
            # Kafka's reader stops before an incomplete entry without a word (its iterator
            # needs TOTAL_SIZE bytes left); a torn write is worth reporting, so strict raises.
            self._fail(
                strict,
                whole * layout.TXN_INDEX_ENTRY_SIZE,
                f"partial entry: {partial} of {layout.TXN_INDEX_ENTRY_SIZE} bytes at the end",
            )
        entries = []
        for n, fields in enumerate(_ENTRY.iter_unpack(buf[: whole * layout.TXN_INDEX_ENTRY_SIZE])):
            version, producer_id, first, last, lso = fields
            position = n * layout.TXN_INDEX_ENTRY_SIZE
            # Kafka reads the version as one byte (AbortedTxn.version uses buffer.get) and
            # only refuses it above CURRENT_VERSION; that reading is not optional.
            at = position + layout.TXN_INDEX_ENTRY_VERSION
            kafka_version = int.from_bytes(buf[at : at + 1], "big", signed=True)
            if kafka_version > CURRENT_VERSION:
                raise IndexFileError(
                    f"unexpected aborted transaction version {version}, current version is "
                    f"{CURRENT_VERSION}",
                    file=file,
                    position=position,
                    base_offset=start_offset,
                )
            if version != CURRENT_VERSION:
                self._fail(strict, position, f"entry {n} has version {version}, not 0")
            entries.append(AbortedTxn(producer_id, first, last, lso, version))
        #: Every entry, in file order.
        self.entries: tuple[AbortedTxn, ...] = tuple(entries)
        self._check_order(strict)

    def _check_order(self, strict: bool) -> None:
        previous = None
        for n, txn in enumerate(self.entries):
            position = n * layout.TXN_INDEX_ENTRY_SIZE
            if txn.last_offset < self.start_offset:
                # TransactionIndex.sanityCheck, which LogSegment.sanityCheck runs at start-up.
                self._fail(
                    strict,
                    position,
                    f"entry {n} last offset {txn.last_offset} is below the segment's start "
                    f"offset {self.start_offset}",
                )
            if txn.first_offset > txn.last_offset:
                self._fail(
                    strict,
                    position,
                    f"entry {n} first offset {txn.first_offset} is above its last offset "
                    f"{txn.last_offset}",
                )
            if previous is not None and txn.last_offset <= previous.last_offset:
                # TransactionIndex.append refuses a last offset that does not increase.
                self._fail(
                    strict,
                    position,
                    f"entry {n} last offset {txn.last_offset} is not above entry {n - 1}'s "
                    f"{previous.last_offset}",
                )
            previous = txn

    def _fail(self, strict: bool, position: int, reason: str) -> None:
        error = IndexFileError(
            f"corrupt transaction index: {reason}",
            file=self.file,
            position=position,
            base_offset=self.start_offset,
        )
        if strict:
            raise error
        if self.problem is None:
            self.problem = error

    def sanity_check(self) -> None:
        """Raise the first problem a lenient open noted (strict opens raise at once)."""
        if self.problem is not None:
            raise self.problem

    @classmethod
    def open(
        cls, path: str | os.PathLike[str], start_offset: int | None = None, *, strict: bool = True
    ) -> Self:
        """Read a ``.txnindex`` file; the start offset defaults to the one in its name."""
        name = os.fspath(path)
        if start_offset is None:
            parsed = parse_segment_file_name(os.path.basename(name))
            if parsed is None:
                raise IndexFileError(
                    "no base offset in the file name; pass start_offset", file=name
                )
            start_offset = parsed.base_offset
        with open(name, "rb") as fh:
            data = fh.read()
        return cls(data, start_offset, file=name, strict=strict)

    @classmethod
    def from_bytes(
        cls,
        data: bytes | bytearray | memoryview,
        start_offset: int,
        *,
        file: str | None = None,
        strict: bool = True,
    ) -> Self:
        return cls(data, start_offset, file=file, strict=strict)

    def __len__(self) -> int:
        return len(self.entries)

    def __iter__(self):
        return iter(self.entries)

    def __getitem__(self, n: int) -> AbortedTxn:
        return self.entries[n]

    def all_aborted_txns(self) -> list[AbortedTxn]:
        """``TransactionIndex.allAbortedTxns``."""
        return list(self.entries)

    def collect_aborted_txns(
        self, fetch_offset: int, upper_bound_offset: int
    ) -> TxnIndexSearchResult:
        """``TransactionIndex.collectAbortedTxns``: the aborted transactions overlapping the
        fetch range [``fetch_offset``, ``upper_bound_offset``), in file order.

        A transaction overlaps when ``last_offset >= fetch_offset`` and ``first_offset <
        upper_bound_offset``. The scan stops, complete, at the first entry whose last stable
        offset is >= ``upper_bound_offset``: every transaction aborted after it began after the
        range. Otherwise the search is incomplete and the caller goes on to the next segment's
        index, since an ABORT marker may land in a later segment than the records it aborts
        (``LocalLog.collectAbortedTransactions`` walks the higher segments so).
        """
        found = []
        for txn in self.entries:
            if txn.last_offset >= fetch_offset and txn.first_offset < upper_bound_offset:
                found.append(txn)
            if txn.last_stable_offset >= upper_bound_offset:
                return TxnIndexSearchResult(tuple(found), True)
        return TxnIndexSearchResult(tuple(found), False)


__all__ = [
    "CURRENT_VERSION",
    "AbortedTxn",
    "TransactionIndex",
    "TxnIndexSearchResult",
]
