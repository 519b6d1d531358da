"""``stats``' header pass sizes compressed v2 batches by their C libraries in one kernel call
(``plan.inflate_payloads``), and snappy ones by the lengths their blocks state
(``plan.snappy_sizes``), instead of a Python decompression a batch: the same stats, and the
same damage, as the Python path, for every framing and for damaged payloads."""

from __future__ import annotations

import dataclasses

import cramjam
import lz4.frame
import numpy as np
import zstandard
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kafka_format.runtime.analysis import stats, stats_headers
from kafka_format.runtime.format.codecs import compress
from kafka_format.schemas.record import build_records
from kafka_format.schemas.record_batch import build_record_batch

PACKS = [
    (1, lambda d: compress(1, d)),
    (4, lambda d: compress(4, d)),
    (4, lambda d: zstandard.ZstdCompressor().compress(d)),
    (3, lambda d: lz4.frame.compress(d, store_size=True)),
    (2, lambda d: compress(2, d)),  # snappy in xerial framing (Java's)
    (2, lambda d: bytes(cramjam.snappy.compress_raw(d))),  # raw snappy (librdkafka's)
]


def _log() -> bytes:
    out = []
    for b in range(40):
        codec, pack = PACKS[b % len(PACKS)]
        value = b"value %d " % b * (1 + b % 7)
        records = [{"key": b"k%d" % b, "value": value, "offset_delta": i} for i in range(1 + b % 3)]
        out.append(
            build_record_batch(
                compressed_payload=pack(build_records(records)),
                records_count=len(records),
                last_offset_delta=len(records) - 1,
                base_offset=10 * b,
                codec=codec,
            )
        )
    return b"".join(out)


def _stats(data: bytes, **options) -> dict:
    try:
        found = stats.file_stats(data, name="log", **options)
    except Exception as exc:  # strict: the first damage, compared by its words
        return {"error": (type(exc).__name__, str(exc))}
    return dataclasses.asdict(found)


def _same(data: bytes, monkeypatch, **options) -> dict:
    fast = _stats(data, **options)
    with monkeypatch.context() as m:
        m.setattr(stats_headers, "inflatable", lambda codecs, *a: np.zeros(len(codecs), bool))
        m.setattr(stats_headers, "snappy_sizes", lambda a, starts, *r: np.full(len(starts), -1))
        python = _stats(data, **options)
    assert fast == python
    return fast


def test_the_kernel_sizes_every_framing_as_the_python_path(monkeypatch):
    found = _same(_log(), monkeypatch)
    assert found["records"] > 40 and not found.get("error")


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(at=st.integers(0, 1 << 30), flip=st.integers(1, 255), strict=st.booleans())
def test_a_damaged_payload_is_the_python_path_s_damage(monkeypatch, at, flip, strict):
    data = bytearray(_log())
    data[at % len(data)] ^= flip
    _same(bytes(data), monkeypatch, verify_crc=False, strict=strict)
