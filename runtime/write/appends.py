"""One append, before the partition leader's state: what it may not carry
(:func:`check_append`), how a v2 batch's timestamps and offset deltas are laid out
(:func:`v2_shape`) and serialised (:func:`v2_bytes`), and the v0/v1 messages or compressed
wrapper of a legacy append (:func:`legacy_bytes`). Pure functions of what a producer sent;
the leader's state stays in :class:`~.writer.PartitionWriter`."""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any

from kafka_format.schemas.legacy_message import build_legacy_message
from kafka_format.schemas.record import RecordSpec, build_records
from kafka_format.schemas.record_batch import build_record_batch

from ..format.codecs import Codec, compress
from .encoding import encode_record_batch, encode_records
from .writer_model import NO_TIMESTAMP, Message


def check_append(
    messages: list[Message],
    codec: int,
    magic: int,
    idempotent: bool,
    transactional: bool,
    follower_copy: bool,
    has_last_offset_delta: bool,
) -> Codec:
    """Refuse what one append cannot carry in ``magic``; returns the codec."""
    if magic not in (0, 1, 2):
        raise ValueError(f"magic must be 0, 1 or 2, not {magic}")
    resolved = Codec(int(codec))
    if resolved is Codec.ZSTD and magic < 2:
        raise ValueError("zstd needs magic 2")
    if magic < 2:
        if idempotent or transactional:
            raise ValueError("idempotent and transactional producers need magic 2")
        if follower_copy:
            raise ValueError("follower-style copies of cleaned batches are v2 only")
        if any(m.offset_delta is not None for m in messages):
            raise ValueError("offset gaps are v2 only")
        if any(m.headers for m in messages):
            raise ValueError("record headers need magic 2")
    if transactional and not idempotent:
        raise ValueError("a transactional append needs a producer")
    if not messages and (magic < 2 or not has_last_offset_delta):
        raise ValueError("an append needs records (an empty v2 batch needs last_offset_delta)")
    return resolved


@dataclass(slots=True, frozen=True)
class _V2Shape:
    """A v2 batch's timing and offsets, before any producer state."""

    #: Each record's timestamp (``now`` when the producer gave none) and offset delta.
    timestamps: list[int]
    deltas: list[int]
    last_offset_delta: int
    base_timestamp: int
    max_timestamp: int


def v2_shape(
    messages: list[Message],
    now: int,
    last_offset_delta: int | None,
    delete_horizon_ms: int | None,
    log_append_time: bool,
) -> _V2Shape:
    """Offset deltas (gaps only for copies of cleaned batches), the base timestamp (the delete
    horizon when the batch carries one) and the max timestamp (the append time under
    LogAppendTime)."""
    timestamps = [now if m.timestamp is None else m.timestamp for m in messages]
    deltas = [i if m.offset_delta is None else m.offset_delta for i, m in enumerate(messages)]
    if any(b <= a for a, b in itertools.pairwise(deltas)) or (deltas and deltas[0] < 0):
        raise ValueError("offset deltas must start at 0 or more and increase")
    if last_offset_delta is None:
        last_offset_delta = deltas[-1]
    elif deltas and last_offset_delta < deltas[-1]:
        raise ValueError("last_offset_delta is below the last record's offset delta")
    if delete_horizon_ms is not None:
        base_timestamp = delete_horizon_ms
    else:
        base_timestamp = timestamps[0] if timestamps else now
    if timestamps and not log_append_time:
        max_timestamp = max(timestamps)
    else:
        max_timestamp = now if log_append_time else base_timestamp
    return _V2Shape(timestamps, deltas, last_offset_delta, base_timestamp, max_timestamp)


def v2_bytes(
    messages: list[Message],
    shape: _V2Shape,
    fields: dict[str, Any],
    *,
    codec: Codec,
    fast: bool,
    xerial: bool,
    level: int | None,
) -> bytes:
    """The batch: Construct builders, or the fast encoders when ``fast``; ``fields`` are the
    batch header's."""
    specs = [
        RecordSpec(
            key=m.key,
            value=m.value,
            headers=tuple(m.headers),
            offset_delta=d,
            timestamp_delta=t - shape.base_timestamp,
        )
        for m, d, t in zip(messages, shape.deltas, shape.timestamps, strict=True)
    ]
    if codec is Codec.NONE and not fast:
        return build_record_batch(specs, **fields)
    payload = encode_records(specs) if fast else build_records(specs)
    if codec is not Codec.NONE:
        payload = compress(codec, payload, magic=2, level=level, xerial=xerial)
    if fast:
        return encode_record_batch(payload, records_count=len(specs), **fields)
    return build_record_batch(compressed_payload=payload, records_count=len(specs), **fields)


def legacy_bytes(
    messages: list[Message],
    first_offset: int,
    now: int,
    *,
    codec: Codec,
    magic: int,
    log_append_time: bool,
    xerial: bool,
    level: int | None,
) -> tuple[bytes, list[tuple[int, int, int]], list[int | None]]:
    """A v0/v1 append: its bytes, each log entry's (size, last offset, max timestamp), and
    the timestamp a consumer sees on each message."""
    lat = log_append_time
    timestamp_type = int(lat)
    last_offset = first_offset + len(messages) - 1
    if magic == 0:
        timestamps: list[int | None] = [None] * len(messages)
    else:
        timestamps = [now if m.timestamp is None else m.timestamp for m in messages]
    if codec is Codec.NONE:
        # Each message is its own log entry; LogAppendTime overwrites every timestamp.
        seen = [now] * len(messages) if lat else timestamps
        entries = [
            build_legacy_message(
                offset=first_offset + i,
                key=m.key,
                value=m.value,
                magic=magic,
                timestamp=t,
                timestamp_type=timestamp_type,
            )
            for i, (m, t) in enumerate(zip(messages, seen, strict=True))
        ]
        batches = [
            (len(e), first_offset + i, NO_TIMESTAMP if t is None else t)
            for i, (e, t) in enumerate(zip(entries, seen, strict=True))
        ]
        return b"".join(entries), batches, seen
    # A wrapper whose value is the compressed inner messages: v1 inner offsets are
    # relative, v0 absolute; the wrapper carries the last offset. The wrapper's
    # timestamp is the largest inner one, or the append time under LogAppendTime.
    inner = b"".join(
        build_legacy_message(
            offset=(i if magic == 1 else first_offset + i),
            key=m.key,
            value=m.value,
            magic=magic,
            timestamp=t,
        )
        for i, (m, t) in enumerate(zip(messages, timestamps, strict=True))
    )
    payload = compress(
        codec,
        inner,
        magic=magic,
        level=level,
        xerial=xerial,
        kafka08_checksum=magic == 0,
    )
    wrapper_timestamp = None if magic == 0 else now if lat else max(timestamps)
    data = build_legacy_message(
        offset=last_offset,
        value=payload,
        magic=magic,
        timestamp=wrapper_timestamp,
        codec=int(codec),
        timestamp_type=timestamp_type,
    )
    seen = [wrapper_timestamp] * len(messages) if lat else timestamps
    return data, [(len(data), last_offset, wrapper_timestamp or NO_TIMESTAMP)], seen
