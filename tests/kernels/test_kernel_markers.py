"""Transaction markers checked by the kernel (``kernels.markers``) instead of the reference
decoder: accepted only in the form Kafka's brokers write them, every other control batch left
to the reference, and a read with markers (both isolations, every error mode, damaged or not)
the same as the reference reader's."""

from __future__ import annotations

import struct

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import kafka_format as kf
from kafka_format.runtime.kernels import crc32 as kernel_crc
from kafka_format.runtime.kernels import markers as kernel_markers
from kafka_format.runtime.read import columnar, transactions
from kafka_format.runtime.read.columnar_reference import reference_read_table
from kafka_format.schemas.record_batch import build_record_batch

ABORT, COMMIT, LEADER_CHANGE = 0, 1, 2
PID, EPOCH = 4001, 3
TS = 1_700_000_000_000


def marker(base_offset: int, kind: int = COMMIT, **changes) -> bytes:
    """A broker's end-transaction marker; ``changes`` alter the record or the batch."""
    record = {
        "key": changes.pop("key", struct.pack(">hh", 0, kind)),
        "value": changes.pop("value", struct.pack(">hi", 0, 12)),
        "headers": changes.pop("headers", []),
    }
    records = [{**record, "offset_delta": i} for i in range(changes.pop("records", 1))]
    return build_record_batch(
        records,
        base_offset=base_offset,
        base_timestamp=TS,
        producer_id=PID,
        producer_epoch=EPOCH,
        is_transactional=True,
        is_control=True,
        **changes,
    )


def data(base_offset: int, values: list[bytes], *, transactional: bool = True) -> bytes:
    return build_record_batch(
        [{"key": b"k", "value": v, "offset_delta": i} for i, v in enumerate(values)],
        base_offset=base_offset,
        base_timestamp=TS,
        producer_id=PID if transactional else -1,
        producer_epoch=EPOCH if transactional else -1,
        base_sequence=0 if transactional else -1,
        is_transactional=transactional,
    )


def check(*frames: bytes, verify: bool = True) -> list[int]:
    buf = np.frombuffer(b"".join(frames), np.uint8)
    sizes = np.array([len(f) for f in frames], np.int64)
    positions = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
    out = np.empty(len(frames), np.int64)
    kernel_markers.check_markers(
        buf.ctypes.data, positions, sizes, verify, kernel_crc.CRC32C_FUNCTION, out
    )
    return out.tolist()


def test_a_broker_s_markers_are_accepted_with_their_type():
    assert check(marker(5, COMMIT), marker(9, ABORT)) == [COMMIT, ABORT]


@pytest.mark.parametrize(
    "odd",
    [
        {"kind": LEADER_CHANGE, "value": b"\0" * 6},
        {"key": struct.pack(">hhb", 0, COMMIT, 0)},  # a 5-byte key
        {"key": struct.pack(">h", 0)},  # too short: the reference raises
        {"key": None},
        {"value": struct.pack(">hib", 0, 12, 0)},
        {"value": struct.pack(">h", 0)},  # too short: the reference raises
        {"value": None},
        {"headers": [("h", b"x")]},
        {"records": 2},
    ],
    ids=lambda d: ",".join(d),
)
def test_any_other_form_is_left_to_the_reference(odd):
    kind = odd.pop("kind", COMMIT)
    assert check(marker(0, kind, **odd), marker(1)) == [kernel_markers.NOT_A_MARKER, COMMIT]


def test_a_compressed_control_batch_is_left_to_the_reference():
    frame = bytearray(marker(0))
    frame[22] |= 1  # gzip in the attributes' codec bits; the CRC no longer holds
    assert check(bytes(frame), verify=False) == [kernel_markers.NOT_A_MARKER]


def test_a_broken_crc_is_left_to_the_reference_unless_crcs_go_unchecked():
    frame = bytearray(marker(0))
    frame[-2] ^= 0xFF  # the coordinator epoch's last byte (the header count follows)
    assert check(bytes(frame)) == [kernel_markers.NOT_A_MARKER]
    assert check(bytes(frame), verify=False) == [COMMIT]


def test_a_record_that_does_not_fill_its_batch_is_left_to_the_reference():
    frame = bytearray(marker(0) + b"\0")  # a byte past the record, inside the batch
    struct.pack_into(">i", frame, 8, len(frame) - 12)
    assert check(bytes(frame), verify=False) == [kernel_markers.NOT_A_MARKER]


def _log() -> bytes:
    return b"".join(
        [
            data(0, [b"a", b"b"]),
            marker(2, COMMIT),
            data(3, [b"plain"], transactional=False),
            data(4, [b"c"]),
            marker(5, ABORT),
            data(6, [b"d", b"e"]),
            marker(8, COMMIT),
        ]
    )


def _outcome(reader, source: bytes, **options):
    report = kf.Report()
    try:
        table = reader(source, report=report, **options)
        error = None
    except kf.KafkaFormatError as exc:
        table, error = None, (type(exc).__name__, exc.position, str(exc))
    return table, error, [str(e) for e in report.errors]


def _same(source: bytes, **options):
    got = _outcome(columnar.read_table, source, **options)
    want = _outcome(reference_read_table, source, batch_rows=1, **options)
    assert got[1:] == want[1:]
    if want[0] is not None:
        assert got[0].equals(want[0])
    return got


@pytest.mark.parametrize("isolation", ["read_uncommitted", "read_committed"])
def test_healthy_markers_never_reach_the_reference_decoder(monkeypatch, isolation):
    decoded = []
    for module in (columnar, transactions):
        read_batch = module.read_batch
        monkeypatch.setattr(
            module,
            "read_batch",
            lambda *a, f=read_batch, **k: decoded.append(a[0].position) or f(*a, **k),
        )
    table, error, _ = _same(_log(), isolation=isolation)
    assert error is None
    expected = [b"a", b"b", b"plain", b"c", b"d", b"e"]
    if isolation == "read_committed":
        expected.remove(b"c")  # aborted
    assert table["value"].to_pylist() == expected
    # Neither read_committed's first pass (the markers, the transactions' first offsets)
    # nor the read itself decodes a healthy batch with the generated parsers.
    assert decoded == []


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    at=st.integers(0, 1 << 30),
    flip=st.integers(1, 255),
    verify=st.booleans(),
    isolation=st.sampled_from(["read_uncommitted", "read_committed"]),
    errors=st.sampled_from(["strict", "skip"]),
)
def test_a_damaged_log_with_markers_reads_as_the_reference(at, flip, verify, isolation, errors):
    log = bytearray(_log())
    log[at % len(log)] ^= flip
    _same(bytes(log), verify_crc=verify, isolation=isolation, errors=errors)
