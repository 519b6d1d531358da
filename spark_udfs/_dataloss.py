"""Spark's ``failOnDataLoss`` for a read's starting offsets.

Spark's Kafka source asks the broker for the offsets a query names; when a start offset is no
longer in the log (below the log start offset: retention or a deleted topic took it) or not
yet in it (past the log end), it reports data loss: with ``failOnDataLoss=true`` (Spark's
default) the query fails, with ``false`` it logs a warning and goes on from where the data is
(KafkaOffsetReaderAdmin.fetchSpecificOffsets, whose check calls reportDataLoss when the
consumer's position differs from the requested offset; KafkaSourceProvider's
failOnDataLoss option). Here the log start offset is the partition's
(``log-start-offset-checkpoint`` or its first segment) and the log end offset the offset after
its last batch; going on means starting at the log start, or reading nothing past the end.
"""

from __future__ import annotations

import logging

from ..runtime.errors import KafkaFormatError
from ..runtime.log.partition import Partition
from ._options import KafkaLogOptions

LOG = logging.getLogger("kafka_format.spark_udfs")
INT64_MAX = (1 << 63) - 1


class DataLossError(KafkaFormatError):
    """A requested start offset the log does not hold, under ``failOnDataLoss=true``."""


def check_data_loss(options: KafkaLogOptions, log: Partition, pf, start: int | None) -> int | None:
    """The start offset to plan with: ``start``, the log start when ``start`` lies below it,
    INT64_MAX (read nothing) when it lies past the log end; or :class:`DataLossError`."""
    if start is None or not log.segments:
        return start
    name = f"{pf.topic}-{pf.partition}" if pf.topic is not None else "the partition"
    where = log.storage.display(str(log.path))
    log_start = log.log_start_offset
    if log_start is not None and start < log_start:
        reason = (
            f"startingOffsets {start} of {name} is below its log start offset {log_start}: "
            "the records before it are no longer in the log (retention deleted them, or the "
            "topic was recreated)"
        )
        return _lost(options, reason, "start at the log start offset", where, log_start)
    log_end = log.log_end_offset()
    if log_end is not None and start > log_end:
        reason = (
            f"startingOffsets {start} of {name} is past its log end offset {log_end}: "
            "the log holds no such offset yet (or was truncated, or recreated)"
        )
        return _lost(options, reason, "read nothing from it", where, INT64_MAX)
    return start


def _lost(options: KafkaLogOptions, reason: str, instead: str, where, fallback: int) -> int:
    if options.fail_on_data_loss:
        raise DataLossError(
            f"{reason}; data may have been lost. Set the option failOnDataLoss to false to "
            f"{instead} instead",
            file=where,
        )
    LOG.warning(
        "kafka_log: %s%s; failOnDataLoss=false: %s", f"{where}: " if where else "", reason, instead
    )
    return fallback
