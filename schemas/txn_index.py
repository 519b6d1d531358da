"""A segment's transaction index, ``.txnindex`` (mirrors txn_index.ksy).

Layout (Kafka's AbortedTxn.java; big-endian)::

    TxnIndex =>
      entries   AbortedTxn[] to the end of the file (a partial entry is an error)
    AbortedTxn (34 bytes) =>
      version              int16   0 so far
      producer_id          int64
      first_offset         int64   the transaction's first record
      last_offset          int64   its abort marker
      last_stable_offset   int64   the partition's LSO when it was aborted
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from construct import Int16sb, Int64sb, Struct

from kafka_format.schemas.construct_ext import EntriesToEnd

ENTRY_SIZE = 34

AbortedTxn = Struct(
    "version" / Int16sb,
    "producer_id" / Int64sb,
    "first_offset" / Int64sb,
    "last_offset" / Int64sb,
    "last_stable_offset" / Int64sb,
)

TxnIndex = Struct(
    "entries" / EntriesToEnd(AbortedTxn, ENTRY_SIZE),
)


def build_txn_index(entries: Iterable[Mapping[str, int]]) -> bytes:
    """A .txnindex file from mappings with AbortedTxn's keys (version defaults to 0)."""
    return TxnIndex.build({"entries": [{"version": 0, **e} for e in entries]})
