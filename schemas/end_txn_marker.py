"""The value of an abort or commit control record (mirrors end_txn_marker.ksy).

Layout (Kafka's EndTransactionMarker.java; big-endian)::

    EndTxnMarker =>
      version             int16   0 so far
      coordinator_epoch   int32   epoch of the transaction coordinator that wrote it
"""

from __future__ import annotations

from construct import Int16sb, Int32sb, Struct

EndTxnMarker = Struct(
    "version" / Int16sb,
    "coordinator_epoch" / Int32sb,
)


def build_end_txn_marker(coordinator_epoch: int, *, version: int = 0) -> bytes:
    """The 6-byte value of an abort or commit control record."""
    return EndTxnMarker.build({"version": version, "coordinator_epoch": coordinator_epoch})
