"""The canonical JSON form of records (``../shared/corpus/README.md``) and of batch headers."""

from __future__ import annotations

import base64
from typing import Any

from ..model import Batch, Record
from .codecs import Codec


def b64(data: bytes | None) -> str | None:
    return None if data is None else base64.b64encode(data).decode("ascii")


def record_json(record: Record) -> dict[str, Any]:
    """A data record as the corpus writes it: base64 keys and values, Kafka's type ids."""
    return {
        "offset": record.offset,
        "timestamp": record.timestamp,
        "timestampType": record.timestamp_type,
        "key": b64(record.key),
        "value": b64(record.value),
        "headers": [{"key": h.key, "value": b64(h.value)} for h in record.headers],
    }


def codec_name(codec: int) -> str:
    try:
        return Codec(codec).label
    except ValueError:
        return f"unknown({codec})"


def batch_json(batch: Batch) -> dict[str, Any]:
    """Every header field of a batch, in kafka-dump-log's names, plus where it lies."""
    out: dict[str, Any] = {
        "file": batch.file,
        "position": batch.position,
        "baseOffset": batch.base_offset,
        "lastOffset": batch.last_offset,
        "count": batch.records_count,
        "magic": batch.magic,
        "size": batch.size,
        "compresscodec": codec_name(batch.codec),
        "timestampType": batch.timestamp_type,
        "maxTimestamp": batch.max_timestamp,
        "crc": batch.crc,
        "computedCrc": batch.computed_crc,
        "isvalid": batch.crc_valid,
    }
    if batch.magic >= 2:
        out.update(
            baseSequence=batch.base_sequence,
            lastSequence=batch.last_sequence,
            producerId=batch.producer_id,
            producerEpoch=batch.producer_epoch,
            partitionLeaderEpoch=batch.partition_leader_epoch,
            isTransactional=batch.is_transactional,
            isControl=batch.is_control,
            deleteHorizonMs=batch.delete_horizon_ms,
            baseTimestamp=batch.base_timestamp,
        )
    if batch.topic is not None:
        out.update(topic=batch.topic, partition=batch.partition)
    if batch.error is not None:
        out["error"] = str(batch.error)
    return out
