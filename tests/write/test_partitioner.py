"""Kafka's default partitioner (runtime/partitioner.py) against independent oracles.

Oracles: kafka-python's ``murmur2`` and ``DefaultPartitioner`` (compared on hypothesis keys);
published test vectors, copied here with where they come from: Kafka's own
``UtilsTest.testMurmur2`` (apache/kafka, clients/src/test/.../common/utils/UtilsTest.java),
librdkafka's ``unittest_murmur2`` (confluentinc/librdkafka, src/rdmurmur2.c) and its
``0048-partitioner`` integration test (tests/0048-partitioner.c, whose expected partitions were
produced with Kafka's Java ``Utils.murmur2``), kafka-python's
``test_murmur2_java_compatibility`` (dpkp/kafka-python, test/producer/test_partitioner.py:
partitions out of 1000, "output from Kafka's ... Partitioner").
"""

from __future__ import annotations

import random
from collections import Counter

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kafka.partitioner import DefaultPartitioner
from kafka.partitioner import murmur2 as kafka_python_murmur2

from kafka_format.runtime.write.partitioner import (
    DEFAULT_BATCH_SIZE,
    UniformStickyPartitioner,
    default_partition,
    default_partitions,
    murmur2,
    murmur2_array,
    to_positive,
)

PROPS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
FEW = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
KEYS = st.binary(max_size=80)
#: Enough keys that the vectorised forms take the compiled path.
MANY_KEYS = st.lists(st.none() | KEYS, min_size=70, max_size=160)
JAVA_INT_MIN = -(2**31)


def signed32(value: int) -> int:
    """kafka-python's murmur2 answers as an unsigned 32-bit number; Java's is an int."""
    return value - 2**32 if value >= 2**31 else value


def hex32(text: str) -> int:
    """A C ``int32_t`` written as a hex literal, as librdkafka's tables write them."""
    return signed32(int(text, 16))


class OneTopic:
    """The three look-ups kafka-python's DefaultPartitioner makes of its cluster metadata,
    answered for one topic whose partitions are all available."""

    def __init__(self, count: int) -> None:
        self.count = count

    def topics(self) -> set[str]:
        return {"t"}

    def partitions_for_topic(self, topic: str) -> set[int]:
        return set(range(self.count))

    def available_partitions_for_topic(self, topic: str) -> set[int]:
        return set(range(self.count))


def kafka_python_partition(key: bytes, count: int) -> int:
    return DefaultPartitioner().partition("t", key, key, None, None, OneTopic(count))


# --- murmur2 -------------------------------------------------------------------------------------


@PROPS
@given(KEYS)
def test_murmur2_matches_kafka_python(key):
    assert murmur2(key) == signed32(kafka_python_murmur2(key))


@PROPS
@given(st.binary(max_size=3) | st.binary(min_size=1024, max_size=1030))
def test_murmur2_tails_and_long_keys(key):
    # The 1-3 byte tails take Java's fall-through switch; long keys many 4-byte rounds.
    assert murmur2(key) == signed32(kafka_python_murmur2(key))


@pytest.mark.parametrize(
    ("key", "expected"),
    [
        # Kafka's UtilsTest.testMurmur2
        (b"21", -973932308),
        (b"foobar", -790332482),
        (b"a-little-bit-long-string", -985981536),
        (b"a-little-bit-longer-string", -1486304829),
        (b"lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8", -58897971),
        (b"abc", 479470107),
    ],
)
def test_murmur2_kafka_vectors(key, expected):
    assert murmur2(key) == expected


_UNALIGNED = b"PreAmbleWillBeRemoved,ThePrePartThatIs"


@pytest.mark.parametrize(
    ("key", "expected"),
    [
        # librdkafka src/rdmurmur2.c, unittest_murmur2 (keys at unaligned addresses in C)
        (b"kafka", "0xd067cf64"),
        (b"giberish123456789", "0x8f552b0c"),
        (b"1234", "0x9fc97b14"),
        (b"234", "0xe7c009ca"),
        (b"34", "0x873930da"),
        (b"4", "0x5a4b5ca1"),
        (_UNALIGNED, "0x78424f1c"),
        (_UNALIGNED[1:], "0x4a62b377"),
        (_UNALIGNED[2:], "0xe0e4e09e"),
        (_UNALIGNED[3:], "0x62b8b43f"),
        (b"", "0x106e08d9"),
    ],
)
def test_murmur2_librdkafka_vectors(key, expected):
    assert murmur2(key) == hex32(expected)
    assert murmur2_array([key]).to_pylist() == [hex32(expected)]


@pytest.mark.parametrize("kind", [bytes, bytearray, memoryview])
def test_murmur2_takes_any_bytes_like(kind):
    assert murmur2(kind(b"giberish123456789")) == hex32("0x8f552b0c")


# --- toPositive and the partition -----------------------------------------------------------------


def test_to_positive_is_java_not_abs():
    # Utils.toPositive(number) is number & 0x7fffffff: Integer.MIN_VALUE becomes 0 (where
    # Math.abs would stay negative), -1 becomes Integer.MAX_VALUE (abs would give 1).
    assert to_positive(JAVA_INT_MIN) == 0
    assert to_positive(-1) == 2**31 - 1
    assert to_positive(-973932308) == -973932308 + 2**31
    assert to_positive(479470107) == 479470107


def test_negative_hash_is_masked_not_negated():
    # "21" hashes to -973932308: abs() would give 973932308 % 10 = 8, the mask 1173551340 % 10.
    assert murmur2(b"21") < 0
    assert default_partition(b"21", 10) == (-973932308 & 0x7FFFFFFF) % 10 == 0
    assert abs(murmur2(b"21")) % 10 == 8


@pytest.mark.parametrize(
    ("key", "partition"),
    [(b"", 681), (b"a", 524), (b"ab", 434), (b"abc", 107), (b"123456789", 566), (b"\x00 ", 742)],
)
def test_kafka_python_vectors_out_of_1000(key, partition):
    assert default_partition(key, 1000) == partition


_LIBRDKAFKA_0048 = [
    # tests/0048-partitioner.c, partitioner "murmur2": toPositive(murmur2(key)) per key
    (b"", 0x106E08D9),
    (b"23456", 0x058D780F),
    (b"this is another string with more length to it perhaps", 0x4F7703DA),
    (b"hejsan", 0x5EC19395),
]


@pytest.mark.parametrize("count", [7, 17])  # the test's partition counts (quick and full)
@pytest.mark.parametrize(("key", "positive"), _LIBRDKAFKA_0048)
def test_librdkafka_partitioner_vectors(key, positive, count):
    assert to_positive(murmur2(key)) == positive
    assert default_partition(key, count) == positive % count


@PROPS
@given(KEYS, st.integers(1, 5000))
def test_partition_matches_kafka_python(key, count):
    assert default_partition(key, count) == kafka_python_partition(key, count)


def test_string_key_hashes_its_utf8_bytes():
    # Kafka's StringSerializer writes UTF-8: a string key is placed by those bytes.
    key = "clé-🔑"
    encoded = key.encode("utf-8")
    assert murmur2_array(pa.array([key])).to_pylist() == [signed32(kafka_python_murmur2(encoded))]
    assert default_partitions(pa.array([key]), 97).to_pylist() == [
        kafka_python_partition(encoded, 97)
    ]


def test_bad_arguments():
    with pytest.raises(ValueError, match="positive"):
        default_partition(b"k", 0)
    with pytest.raises(ValueError, match="positive"):
        default_partition(b"k", -3)
    with pytest.raises(TypeError, match="null key"):
        default_partition(None, 3)


# --- many keys at once ----------------------------------------------------------------------------


@FEW
@given(MANY_KEYS)
def test_murmur2_array_matches_kafka_python(keys):
    expected = [None if k is None else signed32(kafka_python_murmur2(k)) for k in keys]
    assert murmur2_array(keys).to_pylist() == expected
    assert murmur2_array(pa.array(keys, pa.large_binary())).to_pylist() == expected
    # A slice starts inside the offsets buffer.
    assert murmur2_array(pa.array(keys, pa.binary()).slice(5)).to_pylist() == expected[5:]
    chunked = pa.chunked_array([keys[:10], keys[10:]], pa.binary())
    assert murmur2_array(chunked).to_pylist() == expected


@FEW
@given(MANY_KEYS, st.integers(1, 3000))
def test_default_partitions_matches_kafka_python(keys, count):
    expected = [None if k is None else kafka_python_partition(k, count) for k in keys]
    assert default_partitions(keys, count).to_pylist() == expected
    assert default_partitions(pa.array(keys, pa.binary()), [count] * len(keys)).to_pylist() == (
        expected
    )


@FEW
@given(st.lists(st.text(max_size=30), min_size=1, max_size=120))
def test_string_arrays_hash_utf8(texts):
    expected = [signed32(kafka_python_murmur2(t.encode("utf-8"))) for t in texts]
    assert murmur2_array(pa.array(texts, pa.string())).to_pylist() == expected
    assert murmur2_array(pa.array(texts, pa.large_string())).to_pylist() == expected


def test_default_partitions_per_row_counts_and_nulls():
    keys = [b"kafka", None, b"hejsan", b"", b"23456"]
    counts = pa.array([17, 5, None, 1000, 7], pa.int32())
    assert default_partitions(keys, counts).to_pylist() == [
        kafka_python_partition(b"kafka", 17),
        None,  # null key
        None,  # null count
        681,  # kafka-python's vector
        0x058D780F % 7,  # librdkafka's
    ]
    with pytest.raises(ValueError, match=r"got 0 \(row 1\)"):
        default_partitions([b"a", b"b"], [3, 0])
    with pytest.raises(ValueError, match="positive"):
        default_partitions([b"a"], 0)
    with pytest.raises(ValueError, match="2 partition counts for 3 keys"):
        default_partitions([b"a", b"b", b"c"], [1, 2])
    with pytest.raises(TypeError, match="binary or string"):
        murmur2_array(pa.array([1, 2]))
    assert default_partitions(pa.array([None, None]), 3).to_pylist() == [None, None]
    assert murmur2_array([]).to_pylist() == []


# --- records without a key ------------------------------------------------------------------------


def runs(partitions: list[int]) -> list[tuple[int, int]]:
    """(partition, how many in a row) of a sequence."""
    out: list[tuple[int, int]] = []
    for p in partitions:
        if out and out[-1][0] == p:
            out[-1] = (p, out[-1][1] + 1)
        else:
            out.append((p, 1))
    return out


@FEW
@given(st.integers(1, 2000), st.integers(1, 700), st.integers(0, 2**32))
def test_sticky_switches_after_batch_size_bytes(batch_size, size, seed):
    sticky = UniformStickyPartitioner(1000, batch_size=batch_size, rng=random.Random(seed))
    per_switch = -(-batch_size // size)  # records of `size` bytes needed to reach batch_size
    chosen = [sticky.partition(None, size) for _ in range(per_switch * 6)]
    # Six stretches of exactly per_switch records; with 1000 partitions a stretch may pick
    # the partition it leaves (Java's nextPartition does not avoid it), merging two runs.
    stretches = [chosen[i : i + per_switch] for i in range(0, len(chosen), per_switch)]
    assert all(len(set(s)) == 1 for s in stretches)
    assert all(n % per_switch == 0 for _, n in runs(chosen))


def test_sticky_default_batch_size_and_uniform_choice():
    sticky = UniformStickyPartitioner(4, rng=random.Random(7))
    assert sticky.batch_size == DEFAULT_BATCH_SIZE == 16384
    assert sticky.sticky_partition is None
    # 4096-byte records: a switch every 4 records; 4000 switches spread over 4 partitions.
    picks = Counter(sticky.partition(None, 4096) for _ in range(16000))
    assert set(picks) == {0, 1, 2, 3}
    assert all(3000 <= n <= 5000 for n in picks.values()), picks


def test_sticky_keyed_records_hash_and_do_not_count():
    sticky = UniformStickyPartitioner(17, batch_size=100, rng=random.Random(1))
    first = sticky.partition(None, 60)
    for key, positive in _LIBRDKAFKA_0048:
        # Keyed records go by hash and add nothing to the sticky partition's bytes.
        assert sticky.partition(key, 1000) == positive % 17
    assert sticky.sticky_partition == first
    assert sticky.partition(None, 60) == first  # 120 bytes now: the next one moves on
    assert sticky.sticky_partition is not None


def test_sticky_ignore_keys():
    sticky = UniformStickyPartitioner(50, batch_size=10**6, ignore_keys=True, rng=random.Random(3))
    chosen = {sticky.partition(f"user-{i}".encode(), 10) for i in range(200)}
    assert len(chosen) == 1  # partitioner.ignore.keys: keys are not looked at


def test_sticky_bad_arguments():
    with pytest.raises(ValueError, match="num_partitions"):
        UniformStickyPartitioner(0)
    with pytest.raises(ValueError, match="batch_size"):
        UniformStickyPartitioner(3, batch_size=0)
