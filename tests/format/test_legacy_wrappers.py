"""The reference decoder (``format/batches.py``) on v0/v1 wrappers, against Kafka's rules in
``clients/src/main/java/org/apache/kafka/common/record/AbstractLegacyRecordBatch.java``
(``DeepRecordsIterator``'s constructor and ``makeNext``) and ``LegacyRecord.java``
(``timestamp()``, ``timestampType(magic, wrapperRecordTimestampType, attributes)``).

The bytes are built here with ``struct``, ``zlib.crc32`` and ``gzip``; the fast path is held
to the same answers in ``tests/read/test_agreement.py``.
"""

from __future__ import annotations

import gzip
import struct
import zlib

import pytest

from kafka_format.runtime.errors import CorruptBatchError
from kafka_format.runtime.format.batches import ReadOptions, read_batch
from kafka_format.runtime.format.framing import iter_frames

TS_WRAPPER = 1_700_000_000_000
TS_INNER = 1_600_000_000_000
I64_MAX = 2**63 - 1


def message(offset: int, value: bytes, *, magic: int, attributes: int = 0, ts: int = 0) -> bytes:
    body = struct.pack(">bb", magic, attributes)
    if magic == 1:
        body += struct.pack(">q", ts)
    body += struct.pack(">i", -1) + struct.pack(">i", len(value)) + value
    return struct.pack(">qiI", offset, len(body) + 4, zlib.crc32(body)) + body


def read(data: bytes):
    (frame,) = iter_frames(data)
    return read_batch(frame, ReadOptions(), file="x.log")


def wrapped(offset: int, inner: bytes, *, magic: int = 1, log_append: bool = False):
    attributes = 1 | (8 if log_append else 0)
    data = message(offset, gzip.compress(inner), magic=magic, attributes=attributes, ts=TS_WRAPPER)
    return read(data)


# (wrapper magic, LogAppendTime bit, inner magic) -> (timestamp, timestamp type) of the inner
# record as LegacyRecord gives it: magic 0 inner never has one; magic 1 inner takes the
# wrapper's type, and its timestamp only under LogAppendTime.
RULES = [
    (1, False, 1, TS_INNER, 0),
    (1, True, 1, TS_WRAPPER, 1),
    (1, False, 0, None, -1),
    (1, True, 0, None, -1),
    (0, False, 1, TS_INNER, -1),
    (0, True, 1, TS_INNER, -1),  # a magic 0 wrapper's bit 3 means nothing
    (0, False, 0, None, -1),
]


@pytest.mark.parametrize(("wrapper_magic", "log_append", "inner_magic", "ts", "ts_type"), RULES)
def test_inner_timestamps_as_legacy_record_gives_them(
    wrapper_magic, log_append, inner_magic, ts, ts_type
):
    inner = message(0, b"v", magic=inner_magic, ts=TS_INNER)
    (record,) = wrapped(0, inner, magic=wrapper_magic, log_append=log_append).records
    assert (record.timestamp, record.timestamp_type) == (ts, ts_type)


@pytest.mark.parametrize(
    ("wrapper", "inner", "offsets"),
    [
        (0, [0, 1, 2], [0, 1, 2]),  # librdkafka's offset 0: the inner offsets stand
        (0, [-3, -1], [-3, -1]),  # ... even negative ones (the old clamp shifted them to -2, 0)
        (2, [0, 1, 2], [0, 1, 2]),
        (12, [0, 1, 2], [10, 11, 12]),
        (12, [2, 0, 1], [13, 11, 12]),  # out of order: relative to the last one
        (-5, [-7, -6], [-6, -5]),
        # W - L = 2^63: past int64, yet every offset fits (computed exactly, as Java's wrap does)
        (I64_MAX, [-2, -1], [I64_MAX - 1, I64_MAX]),
        (I64_MAX, [-1, -2], [I64_MAX + 1, I64_MAX]),  # the first one does not fit
    ],
)
def test_v1_wrapper_offsets(wrapper, inner, offsets):
    data = b"".join(message(o, b"v", magic=1) for o in inner)
    if offsets[0] > I64_MAX:
        with pytest.raises(CorruptBatchError, match="offset overflow"):
            wrapped(wrapper, data)
        return
    assert [r.offset for r in wrapped(wrapper, data).records] == offsets


def test_v0_wrappers_keep_absolute_inner_offsets():
    data = b"".join(message(o, b"v", magic=0) for o in (40, 41))
    assert [r.offset for r in wrapped(3, data, magic=0).records] == [40, 41]


def test_a_wrapper_offset_below_the_last_inner_offset_is_invalid():
    data = b"".join(message(o, b"v", magic=1) for o in (0, 1, 2))
    with pytest.raises(CorruptBatchError) as caught:
        wrapped(1, data)
    assert caught.value.position == 0 and caught.value.base_offset == 1
    assert caught.value.reason == (
        "Found invalid wrapper offset in compressed v1 message set, wrapper offset '1' is less "
        "than the last inner message offset '2' and it is not zero."
    )


def test_offsets_past_int64_name_the_inner_message():
    data = message(9, b"v", magic=1) + message(0, b"v", magic=1)  # base 2^63-1, + 9 overflows
    with pytest.raises(CorruptBatchError) as caught:
        wrapped(I64_MAX, data)
    assert caught.value.reason == (
        f"offset overflow: wrapper offset {I64_MAX} - last inner offset 0 + inner offset 9 "
        "exceeds 2^63-1"
    )
