"""``read_committed`` on the columnar path (``columnar.py``): the Kafka consumer's walk over
aborted transactions, applied one batch header at a time as frames are planned.
"""

from __future__ import annotations

import heapq
from typing import Any

from .transactions import AbortedTransactions

__all__ = ["CommittedFilter"]


class CommittedFilter:
    """``AbortedTransactions.filter``'s walk (Kafka consumer's), one batch header at a time.

    Kept step for step the same as ``transactions.AbortedTransactions.filter``; the tests
    compare the two on transactional record sets.
    """

    def __init__(self, aborted: AbortedTransactions) -> None:
        self.aborted = aborted
        self.pending: dict[Any, list[tuple[int, int]]] = {}
        self.dropping: dict[Any, set[int]] = {}
        self.stable: dict[Any, int | None] = {}

    def stable_offset(self, tp: tuple[str | None, int | None]) -> int | None:
        if tp not in self.stable:
            self.stable[tp] = self.aborted.stable_offset(tp)
        return self.stable[tp]

    def admits(
        self,
        tp: tuple[str | None, int | None],
        producer_id: int,
        base_offset: int,
        last_offset: int,
        is_control: bool,
        is_transactional: bool,
        abort_marker: bool,
    ) -> bool:
        """Whether a consumer would see the batch's records (if it has any)."""
        if tp not in self.pending:
            self.pending[tp] = sorted(self.aborted.aborted.get(tp, ()))
            self.dropping[tp] = set()
        stable = self.stable_offset(tp)
        if stable is not None and base_offset >= stable:
            return False
        queue, producers = self.pending[tp], self.dropping[tp]
        if producer_id >= 0:
            while queue and queue[0][0] <= last_offset:
                producers.add(heapq.heappop(queue)[1])
            if is_control:
                if abort_marker:
                    producers.discard(producer_id)
                return False
            if is_transactional and producer_id in producers:
                return False
        return not is_control
