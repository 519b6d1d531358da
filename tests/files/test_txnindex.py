"""Transaction index reader (runtime/txnindex.py).

Entries are packed here in AbortedTxn's layout: version int16, producer id int64, first offset
int64, last offset int64, last stable offset int64 (34 bytes, big-endian).
"""

from __future__ import annotations

import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kafka_format.runtime.errors import IndexFileError, KafkaFormatError
from kafka_format.runtime.files.txnindex import AbortedTxn, TransactionIndex, TxnIndexSearchResult

START = 100


def pack(*txns, version=0):
    """txns: (producer_id, first_offset, last_offset, last_stable_offset)."""
    return b"".join(struct.pack(">hqqqq", version, *t) for t in txns)


def fields(txn):
    return (txn.producer_id, txn.first_offset, txn.last_offset, txn.last_stable_offset)


# Three aborted transactions of a segment starting at 100, in marker order.
TXNS = [
    (7, 90, 105, 90),  # began in the previous segment
    (8, 110, 130, 106),
    (7, 140, 150, 131),
]


def test_reads_every_field():
    index = TransactionIndex.from_bytes(pack(*TXNS), START)
    assert len(index) == 3
    assert index[0] == AbortedTxn(
        producer_id=7, first_offset=90, last_offset=105, last_stable_offset=90, version=0
    )
    assert [
        (t.producer_id, t.first_offset, t.last_offset, t.last_stable_offset) for t in index
    ] == TXNS
    assert index.all_aborted_txns() == list(index.entries)
    assert TransactionIndex.from_bytes(b"", START).entries == ()


def test_extreme_values():
    big = (1 << 63) - 1
    index = TransactionIndex.from_bytes(pack((-1, 0, big, -(1 << 63))), 0)
    assert index[0] == AbortedTxn(-1, 0, big, -(1 << 63))


@pytest.mark.parametrize(
    ("fetch", "upper", "expected", "complete"),
    [
        # overlap: last >= fetch and first < upper; stop after an entry with lso >= upper
        (100, 106, [0], True),  # entry 1's lso 106 >= 106 stops; entry 1 starts at 110
        (100, 107, [0], True),  # entry 1's lso 106 < 107 goes on; entry 2's 131 stops
        (106, 111, [1], True),
        (0, 1000, [0, 1, 2], False),
        (151, 1000, [], False),
        (100, 91, [0], True),  # lso 90 >= 91? no; entry 1 lso 106 >= 91 stops
        (100, 90, [], True),  # first entry lso 90 >= 90 stops at once; 90 < 90 fails
    ],
)
def test_collect_aborted_txns(fetch, upper, expected, complete):
    index = TransactionIndex.from_bytes(pack(*TXNS), START)
    result = index.collect_aborted_txns(fetch, upper)
    assert isinstance(result, TxnIndexSearchResult)
    assert [index.entries.index(t) for t in result.aborted] == expected
    assert result.is_complete is complete


def test_partial_trailing_entry():
    data = pack(*TXNS) + b"\x00" * 20
    with pytest.raises(IndexFileError) as caught:
        TransactionIndex.from_bytes(data, START, file="t.txnindex")
    assert caught.value.position == 3 * 34
    assert caught.value.file == "t.txnindex"
    assert "20 of 34" in str(caught.value)
    # Kafka's iterator stops before the incomplete entry and reads on.
    lenient = TransactionIndex.from_bytes(data, START, strict=False)
    assert len(lenient) == 3
    with pytest.raises(IndexFileError):
        lenient.sanity_check()


def test_versions():
    # Kafka reads the version as the first byte only and refuses it above 0.
    with pytest.raises(IndexFileError) as caught:
        TransactionIndex.from_bytes(
            pack(TXNS[0]) + pack(TXNS[1], version=0x0100), START, strict=False
        )
    assert caught.value.position == 34
    # int16 version 1 reads as byte 0 in Kafka; only the strict reader refuses it.
    data = pack(TXNS[0], version=1)
    with pytest.raises(IndexFileError):
        TransactionIndex.from_bytes(data, START)
    assert TransactionIndex.from_bytes(data, START, strict=False)[0].version == 1


@pytest.mark.parametrize(
    ("txns", "bad"),
    [
        ([(7, 50, 99, 50)], 0),  # last offset below the start offset: Kafka's sanityCheck
        ([(7, 100, 120, 100), (8, 101, 120, 100)], 1),  # last offsets must increase (append)
        ([(7, 100, 120, 100), (8, 101, 110, 100)], 1),
        ([(7, 130, 120, 100)], 0),  # first above last
    ],
)
def test_sanity(txns, bad):
    with pytest.raises(IndexFileError) as caught:
        TransactionIndex.from_bytes(pack(*txns), START)
    assert caught.value.position == bad * 34
    lenient = TransactionIndex.from_bytes(pack(*txns), START, strict=False)
    assert len(lenient) == len(txns)
    assert lenient.problem.position == bad * 34


def test_open_uses_the_file_name(tmp_path):
    path = tmp_path / "00000000000000000100.txnindex"
    path.write_bytes(pack(*TXNS))
    index = TransactionIndex.open(path)
    assert index.start_offset == START and len(index) == 3 and index.file == str(path)
    odd = tmp_path / "aborted.bin"
    odd.write_bytes(pack(*TXNS))
    with pytest.raises(IndexFileError):
        TransactionIndex.open(odd)
    assert len(TransactionIndex.open(odd, START)) == 3


TXN = st.tuples(
    st.integers(-1, 1 << 40), st.integers(0, 400), st.integers(0, 60), st.integers(0, 500)
)


@given(st.lists(TXN, max_size=12), st.integers(0, 500), st.integers(0, 500))
def test_collect_matches_its_definition(raw, fetch, upper):
    # Build a valid index: last offsets increasing from the start offset.
    txns, last = [], START - 1
    for pid, first, gap, lso in raw:
        last += gap + 1
        txns.append((pid, min(first, last), last, lso))
    index = TransactionIndex.from_bytes(pack(*txns), START)
    result = index.collect_aborted_txns(fetch, upper)
    stop = next((i for i, t in enumerate(txns) if t[3] >= upper), None)
    scanned = txns if stop is None else txns[: stop + 1]
    expected = [t for t in scanned if t[2] >= fetch and t[1] < upper]
    got = [
        (t.producer_id, t.first_offset, t.last_offset, t.last_stable_offset) for t in result.aborted
    ]
    assert got == expected
    assert result.is_complete == (stop is not None)


@settings(max_examples=300)
@given(st.binary(max_size=200), st.booleans())
def test_random_bytes_raise_only_our_error(data, strict):
    try:
        index = TransactionIndex.from_bytes(data, START, strict=strict)
    except KafkaFormatError as error:
        assert isinstance(error, IndexFileError)
        return
    assert len(index) == len(data) // 34
