"""A partition's transactions (``runtime/log/transactions_report.py``) against what the test
wrote: committed, aborted, empty, open and hanging transactions across two segments, checked
also against ``producers``' own open transactions and against where a read_committed read
stops (the last stable offset)."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest
from kafka.record.default_records import DefaultRecordBatchBuilder

import kafka_format as kf
from kafka_format.runtime.log.producers import rebuild_producer_state
from kafka_format.runtime.log.transactions_report import (
    DEFAULT_HANGING_AFTER_MS,
    TxnStatus,
    partition_transactions,
)
from kafka_format.schemas.record import RecordSpec
from kafka_format.schemas.record_batch import build_record_batch

T0 = 1_700_000_000_000  # the clock of tests/conftest.py's partition (its offsets' "t0")
MINUTE = 60_000


@pytest.fixture
def written(tmp_path: Path, write_transactions) -> tuple[Path, dict[str, int]]:
    offsets = write_transactions(tmp_path)
    assert offsets["t0"] == T0
    return tmp_path / "orders-0", offsets


def test_every_transaction_with_its_offsets_durations_and_sizes(written):
    directory, at = written
    assert len(list(directory.glob("*.log"))) == 2
    result = partition_transactions(directory)
    rows = [
        (t.producer_id, t.status, t.first_offset, t.last_offset, t.marker_offset, t.marker_type)
        for t in result.transactions()
    ]
    assert rows == [
        (1000, TxnStatus.COMMITTED, 0, 5, 5, "COMMIT"),
        (2000, TxnStatus.ABORTED, 7, 9, 9, "ABORT"),
        (3000, TxnStatus.OPEN, 10, 10, None, None),
        (1000, TxnStatus.OPEN, 11, 11, None, None),
    ]
    committed, aborted, open_c, open_a = result.transactions()
    assert (committed.batches, committed.records, committed.duration_ms) == (2, 5, 2000)
    assert committed.bytes == sum(b.size for b in kf.iter_batches(directory) if b.last_offset < 5)
    assert (aborted.batches, aborted.records, aborted.duration_ms) == (1, 2, 1000)
    assert (aborted.first_timestamp, aborted.end_timestamp) == (T0 + 5000, T0 + 6000)
    # open ones: measured against the partition's last batch timestamp
    assert result.last_timestamp == T0 + 9000 + 20 * MINUTE
    assert open_a.end_timestamp == open_c.end_timestamp == result.last_timestamp
    assert open_a.duration_ms == 20 * MINUTE + 2000 and open_a.hanging
    assert open_c.duration_ms == MINUTE + 2000
    assert not open_c.hanging
    assert [t.first_offset for t in result.hanging()] == [at["open_a"]] == [11]
    assert not result.ok
    # B's lone ABORT: an empty transaction, counted, not a transaction of its own
    assert (result.producers[2000].empty_aborted, result.producers[2000].empty_committed) == (1, 0)
    assert result.empty_transactions == 1
    assert (result.log_start_offset, result.log_end_offset) == (0, at["end"])
    assert result.damaged == [] and result.hanging_after_ms == DEFAULT_HANGING_AFTER_MS


def test_open_transactions_agree_with_producers_and_read_committed(written):
    directory, _ = written
    result = partition_transactions(directory)
    state = rebuild_producer_state(directory)
    assert result.ongoing_transactions() == state.ongoing_transactions() == [(10, 3000), (11, 1000)]
    assert result.last_stable_offset == state.first_unstable_offset == 10
    committed = kf.read_table(directory, isolation="read_committed").column("offset").to_pylist()
    everything = kf.read_table(directory).column("offset").to_pylist()
    # read_committed stops at the last stable offset; A's committed records are below it
    assert committed == [0, 1, 2, 3, 4]
    assert max(everything) >= result.last_stable_offset > max(committed)


def test_the_threshold_and_the_wall_clock(written):
    directory, _ = written
    later = partition_transactions(directory, hanging_after_ms=21 * MINUTE)
    assert later.hanging() == [] and later.ok
    zero = partition_transactions(directory, hanging_after_ms=0)
    assert [t.producer_id for t in zero.hanging()] == [3000, 1000]
    # a wall clock an hour after the log's: C hangs too
    now = T0 + 60 * MINUTE
    walled = partition_transactions(directory, now=now)
    assert [t.producer_id for t in walled.hanging()] == [3000, 1000]
    assert {t.end_timestamp for t in walled.with_status(TxnStatus.OPEN)} == {now}
    assert walled.reference_timestamp == now
    with pytest.raises(ValueError):
        partition_transactions(directory, hanging_after_ms=-1)


def _control(offset: int, pid: int, epoch: int, control_type: int, timestamp: int) -> bytes:
    """A marker as the broker writes it (key: version, type; value: version, coordinator
    epoch), of any control type."""
    return build_record_batch(
        [RecordSpec(key=struct.pack(">hh", 0, control_type), value=struct.pack(">hi", 0, 5))],
        base_offset=offset,
        base_timestamp=timestamp,
        producer_id=pid,
        producer_epoch=epoch,
        is_transactional=True,
        is_control=True,
    )


def _data(offset: int, pid: int, epoch: int, sequence: int, n: int, timestamp: int) -> bytes:
    """A transactional batch from kafka-python's builder, at the offset a broker gives it."""
    builder = DefaultRecordBatchBuilder(2, 0, True, pid, epoch, sequence, 1 << 30)
    for i in range(n):
        builder.append(i, timestamp + i, b"k", b"v%d" % i, [])
    built = bytearray(builder.build())
    struct.pack_into(">q", built, 0, offset)
    return bytes(built)


def test_hand_built_batches_and_an_unreadable_marker(tmp_path):
    """Batches from kafka-python's builder; a control batch of an unknown type ends its
    transaction, aborting nothing (as read_committed's walk has it), and is reported."""
    directory = tmp_path / "t-3"
    directory.mkdir()
    log = (
        _data(0, 7, 0, 0, 2, T0)
        + _control(2, 7, 0, 1, T0 + 50)  # COMMIT
        + _data(3, 7, 0, 2, 3, T0 + 100)
        + _control(6, 7, 0, 9, T0 + 120)  # no such control type
        + _control(7, 8, 0, 0, T0 + 130)  # an empty ABORT
        + _control(8, 8, 0, 1, T0 + 140)  # an empty COMMIT
        + _data(9, 8, 0, 0, 1, T0 + 150)
    )
    (directory / "00000000000000000000.log").write_bytes(log)
    result = partition_transactions(directory, hanging_after_ms=0)
    rows = [(t.producer_id, t.status, t.first_offset, t.last_offset) for t in result.transactions()]
    assert rows == [
        (7, TxnStatus.COMMITTED, 0, 2),
        (7, TxnStatus.UNKNOWN, 3, 6),
        (8, TxnStatus.OPEN, 9, 9),
    ]
    unknown = result.transactions()[1]
    assert (unknown.marker_offset, unknown.marker_type, unknown.records) == (6, None, 3)
    assert unknown.duration_ms == 20
    assert result.transactions()[0].duration_ms == 50
    assert (result.producers[8].empty_aborted, result.producers[8].empty_committed) == (1, 1)
    assert [(a.kind.value, a.base_offset) for a in result.damaged] == [("damaged_batch", 6)]
    # an open transaction of age 0 is not "longer than" a threshold of 0
    assert result.hanging() == []
