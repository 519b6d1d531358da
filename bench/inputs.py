"""Benchmark inputs: record sets of one shape in every magic and codec, and a big segment.

Records look like the issue's target: a short key, a 100-byte value (JSON-like text, so
that codecs have something to do: it compresses about 2-3x), one header on v2, 1000 records a
batch (v0/v1: 1000 messages a wrapper when compressed). Bytes are built once per case with the
project's Construct builders and runtime/codecs.compress (Kafka's Java framing for snappy and
lz4), then the batch is repeated with rising base offsets: the offset lies outside the CRC,
so every copy stays valid. Every reader in a run reads the same bytes.
"""

from __future__ import annotations

import random
import struct
from dataclasses import dataclass
from pathlib import Path

from kafka_format.runtime.format.codecs import compress
from kafka_format.schemas.legacy_message import build_legacy_message
from kafka_format.schemas.record import build_records
from kafka_format.schemas.record_batch import build_record_batch

CODEC_NAMES = {0: "none", 1: "gzip", 2: "snappy", 3: "lz4", 4: "zstd"}
#: (magic, codec) pairs Kafka allows: zstd needs magic 2.
CASES = (
    [(2, c) for c in (0, 1, 2, 3, 4)]
    + [(1, c) for c in (0, 1, 2, 3)]
    + [(0, c) for c in (0, 1, 2, 3)]
)
TS0 = 1_700_000_000_000
_OFFSET = struct.Struct(">q")


@dataclass(slots=True)
class RecordSet:
    magic: int
    codec: int
    data: bytes
    records: int
    #: The compressed payloads of one batch (v2 records, v0/v1 wrapper value): what the
    #: codec library alone decompresses for the "bare" comparison, repeated ``copies`` times.
    payload: bytes | None
    copies: int

    @property
    def name(self) -> str:
        return f"v{self.magic} {CODEC_NAMES[self.codec]}"


def values(n: int, seed: int = 7) -> list[bytes]:
    rng = random.Random(seed)
    words = ["alpha", "bravo", "click", "order", "view", "cart", "user", "eu-west", "ok"]
    out = []
    for i in range(n):
        text = (
            f'{{"id":{i},"user":"u{rng.randrange(10**6):06d}","event":"{rng.choice(words)}",'
            f'"amount":{rng.random() * 1000:.2f},"region":"{rng.choice(words)}","seq":'
            f"{rng.randrange(10**9)}}}"
        )
        out.append(text.encode().ljust(100, b" ")[:100])
    return out


def v2_batch(codec: int, n: int) -> tuple[bytes, bytes | None]:
    records = v2_records(n)
    if not codec:
        return build_record_batch(records, base_timestamp=TS0), None
    payload = compress(codec, build_records(records), magic=2)
    return _compressed_batch(payload, codec, n), payload


def _compressed_batch(payload: bytes, codec: int, n: int) -> bytes:
    return build_record_batch(
        compressed_payload=payload,
        records_count=n,
        codec=codec,
        base_timestamp=TS0,
        max_timestamp=TS0 + n - 1,
    )


def _legacy_messages(magic: int, n: int, first_offset: int) -> list[bytes]:
    vals = values(n)
    return [
        build_legacy_message(
            offset=first_offset + i,
            key=b"key-%06d" % i,
            value=vals[i],
            magic=magic,
            timestamp=TS0 + i if magic else None,
        )
        for i in range(n)
    ]


def _legacy_wrapper(magic: int, codec: int, n: int) -> tuple[bytes, bytes]:
    # v1 inner offsets are relative (0..n-1); v0's absolute (the same here: base 0).
    inner = b"".join(_legacy_messages(magic, n, 0))
    payload = compress(codec, inner, magic=magic, kafka08_checksum=magic == 0 and codec == 3)
    wrapper = build_legacy_message(
        offset=n - 1, value=payload, magic=magic, codec=codec, timestamp=TS0 if magic else None
    )
    return wrapper, payload


def record_set(magic: int, codec: int, records: int, per_batch: int = 1000) -> RecordSet:
    """``records`` records (rounded up to whole batches) of one magic and codec."""
    per_batch = min(per_batch, records)
    copies = -(-records // per_batch)
    if magic == 2 or codec:
        one, payload = (
            v2_batch(codec, per_batch) if magic == 2 else _legacy_wrapper(magic, codec, per_batch)
        )
        step = per_batch
        # The offset field: v2 base offset; a v1 wrapper carries its last inner offset.
        first = 0 if magic == 2 else per_batch - 1
        parts = [_OFFSET.pack(first + k * step) + one[8:] for k in range(copies)]
        return RecordSet(magic, codec, b"".join(parts), copies * per_batch, payload, copies)
    messages = _legacy_messages(magic, per_batch, 0)
    block = bytearray(b"".join(messages))
    parts = []
    for k in range(copies):
        at = 0
        for i, m in enumerate(messages):
            _OFFSET.pack_into(block, at, k * per_batch + i)
            at += len(m)
        parts.append(bytes(block))
    return RecordSet(magic, codec, b"".join(parts), copies * per_batch, None, copies)


def write_segment(path: Path, size: int, per_batch: int = 1000) -> int:
    """A v2 uncompressed segment of about ``size`` bytes with rising offsets; returns records."""
    one, _ = v2_batch(0, per_batch)
    group = 64
    block = bytearray(one * group)
    records = 0
    written = 0
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as fh:
        while written < size:
            for j in range(group):
                _OFFSET.pack_into(block, j * len(one), records + j * per_batch)
            fh.write(block)
            written += len(block)
            records += group * per_batch
    return records


# --- small batches by client (bench/small.py) -------------------------------------------------

#: How librdkafka frames each codec's payload (it writes gzip as everyone does).
LIBRDKAFKA_CODECS = (2, 3, 4)


def v2_records(n: int) -> list[dict]:
    """The records of :func:`v2_batch`'s batches: a short key, a 100-byte value, one header."""
    vals = values(n)
    return [
        {
            "key": b"key-%06d" % i,
            "value": vals[i],
            "headers": [("trace-id", b"%016x" % i)],
            "offset_delta": i,
            "timestamp_delta": i,
        }
        for i in range(n)
    ]


def librdkafka_compress(codec: int, data: bytes) -> bytes:
    """A v2 records payload framed as librdkafka frames it: snappy as one raw block (no
    xerial framing), LZ4 as a frame of independent blocks with the content size, zstd as a
    frame with the content size (level 3)."""
    import lz4.frame
    import zstandard

    if codec == 2:
        return compress(2, data, xerial=False)
    if codec == 3:
        return lz4.frame.compress(data, block_linked=False, store_size=True, content_checksum=False)
    if codec == 4:
        return zstandard.ZstdCompressor(level=3).compress(data)
    raise ValueError(f"librdkafka framing: no codec {codec}")


def librdkafka_batch(codec: int, n: int) -> tuple[bytes, bytes]:
    """:func:`v2_batch`'s batch of ``n`` records with its payload framed as librdkafka's."""
    payload = librdkafka_compress(codec, build_records(v2_records(n)))
    return _compressed_batch(payload, codec, n), payload


def kafka_python_batch(codec: int, n: int) -> tuple[bytes, bytes | None, int]:
    """The same ``n`` records built by kafka-python's own v2 batch builder with ``codec``:
    the batch, its payload (None when uncompressed) and the codec it holds, which is 0 where
    kafka-python found the compressed payload no smaller and wrote the records uncompressed."""
    from kafka.record.default_records import DefaultRecordBatchBuilder

    builder = DefaultRecordBatchBuilder(
        magic=2,
        compression_type=codec,
        is_transactional=False,
        producer_id=-1,
        producer_epoch=-1,
        base_sequence=-1,
        batch_size=1 << 30,
    )
    for r in v2_records(n):
        i = r["offset_delta"]
        builder.append(i, TS0 + i, r["key"], r["value"], r["headers"])
    batch = bytes(builder.build())
    written = batch[22] & 0x07  # attributes (int16 at byte 21): the codec bits
    return batch, (batch[61:] if written else None), written


def repeat_batch(one: bytes, copies: int, step: int, first: int = 0) -> bytes:
    """``copies`` of the frame ``one`` with the offset field rising by ``step`` from ``first``
    (a v2 base offset, or a v0/v1 wrapper's last inner offset): outside the CRC, so every
    copy stays valid."""
    rest = one[8:]
    return b"".join(_OFFSET.pack(first + k * step) + rest for k in range(copies))
