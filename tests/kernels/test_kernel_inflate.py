"""gzip, zstd and LZ4 frames decoded by their C libraries from one kernel call a chunk
(``kernels.inflate``), against the reference reader (``columnar_reference``, the generated
parsers over ``codecs.decompress``): every framing Kafka's clients write, as kafka-python,
aiokafka and the project's writer write it, one record a batch and many; damaged payloads
fail as the reference fails; without the libraries, or for a payload larger than the kernel
takes, the Python path decodes it, to the same records.
"""

from __future__ import annotations

import gzip
import zlib

import lz4.frame
import numpy as np
import pytest
import zstandard
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import kafka_format as kf
from kafka_format.runtime.format.codecs import compress
from kafka_format.runtime.kernels import inflate as kernel_inflate
from kafka_format.runtime.read import columnar, plan
from kafka_format.runtime.read.columnar_reference import reference_read_table
from kafka_format.schemas.legacy_message import build_legacy_message
from kafka_format.schemas.record import build_records
from kafka_format.schemas.record_batch import build_record_batch

GZIP, SNAPPY, LZ4, ZSTD = 1, 2, 3, 4
TS0 = 1_700_000_000_000


def _zstd_two_frames(data: bytes) -> bytes:
    half = len(data) // 2
    c = zstandard.ZstdCompressor(write_content_size=False)
    return c.compress(data[:half]) + c.compress(data[half:])


def _zstd_skippable(data: bytes) -> bytes:
    skippable = (0x184D2A53).to_bytes(4, "little") + (5).to_bytes(4, "little") + b"hello"
    return skippable + zstandard.ZstdCompressor(write_checksum=True).compress(data)


def _gzip_members(data: bytes) -> bytes:
    half = len(data) // 2
    return gzip.compress(data[:half]) + gzip.compress(data[half:])


def _gzip_named(data: bytes) -> bytes:
    """A member with FNAME and FEXTRA, as gzip(1) and some producers write."""
    header = b"\x1f\x8b\x08\x0c" + b"\0" * 4 + b"\x00\xff" + b"\x04\x00abcd" + b"records\0"
    raw = zlib.compressobj(6, zlib.DEFLATED, -15)
    body = raw.compress(data) + raw.flush()
    trailer = zlib.crc32(data).to_bytes(4, "little") + (len(data) & 0xFFFFFFFF).to_bytes(
        4, "little"
    )
    return header + body + trailer


#: (codec, how the payload is framed): what Kafka's clients write, and the odd cases.
FRAMINGS = {
    "gzip (Java, librdkafka, kafka-python)": (GZIP, lambda d: compress(GZIP, d)),
    "gzip, two members": (GZIP, _gzip_members),
    "gzip, FNAME and FEXTRA": (GZIP, _gzip_named),
    "zstd, no content size (Java)": (ZSTD, lambda d: compress(ZSTD, d)),
    "zstd, content size (librdkafka, kafka-python)": (
        ZSTD,
        lambda d: zstandard.ZstdCompressor().compress(d),
    ),
    "zstd, two frames": (ZSTD, _zstd_two_frames),
    "zstd, skippable frame and checksum": (ZSTD, _zstd_skippable),
    "lz4, content size (librdkafka)": (
        LZ4,
        lambda d: lz4.frame.compress(d, block_linked=False, store_size=True),
    ),
    "lz4, linked blocks and content size (kafka-python)": (LZ4, lz4.frame.compress),
    "lz4, block and content checksums": (
        LZ4,
        lambda d: lz4.frame.compress(d, block_checksum=True, content_checksum=True),
    ),
    "lz4, two frames, 256 KiB blocks": (
        LZ4,
        lambda d: (
            lz4.frame.compress(d[:100], block_size=lz4.frame.BLOCKSIZE_MAX256KB)
            + lz4.frame.compress(d[100:], block_size=lz4.frame.BLOCKSIZE_MAX256KB)
        ),
    ),
}


def _numbered(values: list[bytes]) -> list[dict]:
    """Records of these values with the offset deltas Kafka's writer gives them: 0, 1, 2..."""
    return [{"value": v, "offset_delta": i} for i, v in enumerate(values)]


def _records(first: int, n: int) -> list[dict]:
    return [
        {
            "key": b"k%d" % (first + i),
            "value": b'{"id":%d,"event":"click","pad":"%s"}' % (first + i, b"x" * (i % 50)),
            "headers": [("h", b"%d" % i)],
            "offset_delta": i,
            "timestamp_delta": i,
        }
        for i in range(n)
    ]


def _v2_log(framing: str, batches: int, per_batch: int) -> bytes:
    codec, pack = FRAMINGS[framing]
    return b"".join(
        build_record_batch(
            compressed_payload=pack(build_records(_records(b * per_batch, per_batch))),
            records_count=per_batch,
            last_offset_delta=per_batch - 1,
            base_offset=b * per_batch,
            base_timestamp=TS0,
            codec=codec,
        )
        for b in range(batches)
    )


def _v1_wrapper(codec: int, pack, values: list[bytes], first: int) -> bytes:
    inner = b"".join(
        build_legacy_message(offset=i, value=v, magic=1, timestamp=TS0)
        for i, v in enumerate(values)
    )
    return build_legacy_message(
        offset=first + len(values) - 1, value=pack(inner), magic=1, timestamp=TS0, codec=codec
    )


def _outcome(reader, data: bytes, **options):
    report = kf.Report()
    try:
        table = reader(data, report=report, **options)
        error = None
    except kf.KafkaFormatError as exc:
        table, error = None, (type(exc).__name__, exc.position, exc.base_offset, str(exc))
    return table, error, [str(e) for e in report.errors]


def _python_steps(monkeypatch) -> list[str]:
    """Every payload the Python path prepares, by name."""
    calls: list[str] = []
    for name in ("_prepare_v2", "_prepare_wrapper"):
        prepare = getattr(columnar, name)
        monkeypatch.setattr(
            columnar, name, lambda *a, name=name, f=prepare: calls.append(name) or f(*a)
        )
    return calls


def _same(data: bytes, threads: int | None = None, **options):
    got = _outcome(columnar.read_table, data, include_headers=True, threads=threads, **options)
    want = _outcome(reference_read_table, data, include_headers=True, batch_rows=1, **options)
    assert got[1:] == want[1:]
    if want[0] is not None:
        assert got[0].equals(want[0])
    return got


def test_the_libraries_are_found():
    # The project depends on deflate, backports.zstd (before 3.14) and lz4, which ship them.
    for codec in (GZIP, ZSTD, LZ4):
        assert kernel_inflate.available(codec)


@pytest.mark.parametrize("framing", FRAMINGS)
@pytest.mark.parametrize("per_batch", [1, 10, 300])
def test_every_framing_decodes_in_the_kernel_as_the_reference_reads_it(
    monkeypatch, framing, per_batch
):
    data = _v2_log(framing, max(3, 60 // per_batch), per_batch)
    steps = _python_steps(monkeypatch)
    table, error, _ = _same(data, threads=1)
    assert error is None and table.num_rows == max(3, 60 // per_batch) * per_batch
    assert steps == []  # no Python step per batch


@pytest.mark.parametrize(
    ("codec", "pack"),
    [
        (GZIP, lambda d: compress(GZIP, d)),
        (LZ4, lambda d: lz4.frame.compress(d, store_size=True)),
    ],
    ids=["gzip", "lz4 with content size"],
)
def test_v1_wrappers_decode_in_the_kernel(monkeypatch, codec, pack):
    data = b"".join(
        _v1_wrapper(codec, pack, [b"v%d" % (w * 10 + i) * 9 for i in range(10)], w * 10)
        for w in range(20)
    )
    steps = _python_steps(monkeypatch)
    table, error, _ = _same(data)
    assert error is None and table.num_rows == 200
    assert steps == []


def _kafka_python(codec: int, batches: int, per_batch: int) -> bytes:
    from kafka.record.default_records import DefaultRecordBatchBuilder

    out = []
    for b in range(batches):
        builder = DefaultRecordBatchBuilder(
            magic=2,
            compression_type=codec,
            is_transactional=False,
            producer_id=-1,
            producer_epoch=-1,
            base_sequence=-1,
            batch_size=1 << 20,
        )
        for i in range(per_batch):
            builder.append(i, TS0 + i, b"k%d" % i, b"value %d " % (b * per_batch + i) * 5, [])
        raw = bytearray(builder.build())
        raw[0:8] = (b * per_batch).to_bytes(8, "big")  # the base offset, outside the CRC
        out.append(bytes(raw))
    return b"".join(out)


def _aiokafka(codec: int, batches: int, per_batch: int) -> bytes:
    from aiokafka.record.default_records import DefaultRecordBatchBuilder

    out = []
    for b in range(batches):
        builder = DefaultRecordBatchBuilder(2, codec, False, -1, -1, -1, 1 << 20)
        for i in range(per_batch):
            builder.append(i, TS0 + i, b"k%d" % i, b"value %d " % (b * per_batch + i) * 5, [])
        raw = bytearray(builder.build())
        raw[0:8] = (b * per_batch).to_bytes(8, "big")
        out.append(bytes(raw))
    return b"".join(out)


@pytest.mark.parametrize("writer", [_kafka_python, _aiokafka], ids=["kafka-python", "aiokafka"])
@pytest.mark.parametrize("codec", [GZIP, LZ4, ZSTD], ids=["gzip", "lz4", "zstd"])
@pytest.mark.parametrize("per_batch", [1, 10])
def test_the_peers_batches_decode_in_the_kernel(monkeypatch, writer, codec, per_batch):
    data = writer(codec, 30, per_batch)
    steps = _python_steps(monkeypatch)
    table, error, _ = _same(data)
    assert error is None and table.num_rows == 30 * per_batch
    # aiokafka's LZ4 is cramjam's plain frame, which the record decoder takes itself.
    assert steps == []


@pytest.mark.parametrize("framing", FRAMINGS)
def test_without_the_libraries_the_python_path_reads_the_same(monkeypatch, framing):
    data = _v2_log(framing, 4, 5)
    monkeypatch.setattr(kernel_inflate, "FUNCTIONS", np.zeros_like(kernel_inflate.FUNCTIONS))
    steps = _python_steps(monkeypatch)
    table, error, _ = _same(data)
    assert error is None and table.num_rows == 20
    # Java's LZ4 framing aside (the record decoder's own), every batch took the Python path.
    assert steps.count("_prepare_v2") == 4


def test_a_payload_that_outgrows_the_first_arena_is_decoded_into_a_larger_one(monkeypatch):
    # Zeros compress a thousandfold: the arena, sized from the compressed bytes, is too small
    # for the second batch, which goes into a new one; the first stays where it was.
    values = [b"v" * 10] + [bytes(2000)] * 300
    data = b"".join(
        build_record_batch(
            compressed_payload=compress(ZSTD, build_records(_numbered(values))),
            records_count=len(values),
            last_offset_delta=len(values) - 1,
            base_offset=b * len(values),
            codec=ZSTD,
        )
        for b in range(3)
    )
    arenas = []
    inflate = kernel_inflate.inflate

    def spy(*args):
        arenas.append(len(args[4]))
        return inflate(*args)

    monkeypatch.setattr(kernel_inflate, "inflate", spy)
    steps = _python_steps(monkeypatch)
    table, error, _ = _same(data)
    assert error is None and table.num_rows == 3 * len(values)
    assert len(arenas) > 1 and arenas == sorted(arenas)
    assert steps == []


def test_a_payload_larger_than_the_kernel_takes_is_left_to_the_python_path(monkeypatch):
    monkeypatch.setattr(plan, "_ARENA_MAX", 1 << 16)
    values = [bytes(1000)] * 200  # 200 kB of records: more than the kernel's 64 KiB here
    data = build_record_batch(
        compressed_payload=compress(GZIP, build_records(_numbered(values))),
        records_count=len(values),
        last_offset_delta=len(values) - 1,
        codec=GZIP,
    ) + _v2_log("gzip (Java, librdkafka, kafka-python)", 2, 3)
    steps = _python_steps(monkeypatch)
    table, error, _ = _same(data)
    assert error is None and table.num_rows == 206
    assert steps == ["_prepare_v2"]


@pytest.mark.parametrize("codec", [GZIP, LZ4, ZSTD], ids=["gzip", "lz4", "zstd"])
def test_max_decompressed_bytes_is_the_reference_s_limit(codec):
    framing = {
        GZIP: "gzip (Java, librdkafka, kafka-python)",
        LZ4: "lz4, content size (librdkafka)",
        ZSTD: "zstd, no content size (Java)",
    }[codec]
    data = _v2_log(framing, 3, 50)
    size = len(build_records(_records(0, 50)))
    for limit in (size - 1, size, size + 1):
        _same(data, max_decompressed_bytes=limit)
        _same(data, max_decompressed_bytes=limit, errors="skip")


@pytest.mark.parametrize("framing", FRAMINGS)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(at=st.integers(0, 1 << 30), flip=st.integers(1, 255), skip=st.booleans())
def test_a_damaged_payload_fails_as_the_reference_does(framing, at, flip, skip):
    # CRCs unchecked: the damage reaches the decompressors, which must agree on every byte.
    good = _v2_log(framing, 1, 20)
    bad = bytearray(good)
    bad[61 + at % (len(bad) - 61)] ^= flip
    data = good + bytes(bad) + good
    _same(data, verify_crc=False, errors="skip" if skip else "strict")


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cut=st.integers(1, 1 << 30), codec=st.sampled_from([GZIP, LZ4, ZSTD]))
def test_a_truncated_payload_fails_as_the_reference_does(cut, codec):
    framing = {
        GZIP: "gzip, two members",
        LZ4: "lz4, block and content checksums",
        ZSTD: "zstd, two frames",
    }[codec]
    payload = FRAMINGS[framing][1](build_records(_records(0, 20)))
    short = payload[: cut % len(payload)]
    data = build_record_batch(
        compressed_payload=short, records_count=20, last_offset_delta=19, codec=codec
    )
    _same(data)
