"""The readers under test, each reading one record set from bytes and touching every field.

- ours: ``iter_arrow_batches`` (CRC checked, headers included): Arrow columns, with its
  default two decoding threads, and with one (decoding in the calling thread).
- kafka-python: ``kafka.record.MemoryRecords``, record by record (pure Python).
- aiokafka: ``aiokafka.record.memory_records.MemoryRecords`` (its Cython reader).
- bare: the codec library alone decompressing the same payloads (zlib, cramjam, python-lz4,
  zstandard), for the compressed cases.

The peers check CRCs too (``validate_crc()``, as their consumers do by default), and touch
key, value, headers, offset and timestamp of each record; each returns the records it read.
"""

from __future__ import annotations

import struct
import zlib

import cramjam
import lz4.frame
import zstandard

from kafka_format.runtime.read.columnar import iter_arrow_batches


def ours(data: bytes, threads: int | None = None) -> int:
    n = 0
    for batch in iter_arrow_batches(data, include_headers=True, threads=threads):
        n += batch.num_rows
    return n


def ours_one_thread(data: bytes) -> int:
    return ours(data, threads=1)


def ours_unchecked(data: bytes) -> int:
    """Ours without CRC checks: what decompression and decoding cost on their own."""
    n = 0
    for batch in iter_arrow_batches(data, include_headers=True, verify_crc=False):
        n += batch.num_rows
    return n


def kafka_python(data: bytes) -> int:
    from kafka.record.memory_records import MemoryRecords

    records = MemoryRecords(data)
    n = 0
    while True:
        batch = records.next_batch()
        if batch is None:
            return n
        if not batch.validate_crc():
            raise ValueError("kafka-python: CRC mismatch")
        for r in batch:
            r.key, r.value, r.headers, r.offset, r.timestamp  # noqa: B018 - touch them
            n += 1


def aiokafka(data: bytes) -> int:
    from aiokafka.record.memory_records import MemoryRecords

    records = MemoryRecords(data)
    n = 0
    while records.has_next():
        batch = records.next_batch()
        if not batch.validate_crc():
            raise ValueError("aiokafka: CRC mismatch")
        for r in batch:
            r.key, r.value, r.headers, r.offset, r.timestamp  # noqa: B018 - touch them
            n += 1
    return n


def aiokafka_is_cython() -> bool:
    from aiokafka.record import memory_records

    return "_crecords" in getattr(memory_records.MemoryRecords, "__module__", "")


_XERIAL = b"\x82SNAPPY\x00"


def bare_decompress(codec: int, payload: bytes, copies: int) -> int:
    """Decompress ``payload`` ``copies`` times with the codec library alone; total bytes."""
    total = 0
    for _ in range(copies):
        if codec == 1:
            out = zlib.decompress(payload, 31)
        elif codec == 2:
            out = _snappy(payload)
        elif codec == 3:
            out = _lz4(payload)
        else:
            out = zstandard.ZstdDecompressor().decompressobj().decompress(payload)
        total += len(out)
    return total


def _snappy(payload: bytes) -> bytes:
    if not payload.startswith(_XERIAL):
        return bytes(cramjam.snappy.decompress_raw(payload))
    parts = []
    pos = 16
    view = memoryview(payload)
    while pos < len(payload):
        (length,) = struct.unpack_from(">i", payload, pos)
        parts.append(bytes(cramjam.snappy.decompress_raw(view[pos + 4 : pos + 4 + length])))
        pos += 4 + length
    return b"".join(parts)


def _lz4(payload: bytes) -> bytes:
    return lz4.frame.decompress(payload)


def bare_payload(codec: int, magic: int, payload: bytes) -> bytes:
    """The payload as the codec library takes it: Kafka 0.8's LZ4 header checksum (magic 0)
    fixed once, outside the timing, as any reader must fix it."""
    if codec != 3 or magic != 0:
        return payload
    from kafka_format.runtime.format.codecs import _lz4_header_with_checksum

    header = _lz4_header_with_checksum(memoryview(payload), 0, kafka08=False)
    return header + payload[len(header) :]
