"""The Spark transformation and SQL views of compaction (spark_udfs/compaction.py) give the
rows the Python function (runtime/compaction.py, itself checked against Kafka's tests and a
dict model in test_compaction.py) keeps, on the same directories."""

from __future__ import annotations

import pytest

pytest.importorskip("pyspark")

from kafka_format.runtime.format.codecs import Codec
from kafka_format.runtime.log.compaction import compact as compact_dir
from kafka_format.runtime.log.compaction import dirty_ratio
from kafka_format.runtime.read.reader import iter_records
from kafka_format.runtime.write.generate import generate_log_dir
from kafka_format.runtime.write.writer import Message, PartitionWriter, Producer
from kafka_format.spark_udfs import register
from kafka_format.spark_udfs.compaction import (
    compact,
    kafka_log_path,
    register_compaction,
)

NOW = 1_800_000_000_000


@pytest.fixture(scope="module")
def kafka(spark):
    return register(spark)


@pytest.fixture(scope="module")
def scenario(tmp_path_factory):
    """Two partitions with every case: repeated keys, tombstones before and after their
    horizon, null keys, committed / aborted / still open transactions, v1 messages, a cleaner
    checkpoint in partition 1 (keys repeated only below it stay)."""
    root = tmp_path_factory.mktemp("spark-compaction") / "logs"
    for partition in (0, 1):
        w = PartitionWriter(root, "accounts", partition, segment_bytes=1500)
        txn = Producer(100 + partition)
        for i in range(30):
            key = None if i % 11 == 5 else b"acct-%d" % (i % 6)
            if partition == 1 and i < 6:
                key = b"early-%d" % (i % 2)  # below the checkpoint: repeats are left alone
            value = None if i % 7 == 3 else b"v%d" % i
            if i % 5 == 0:
                w.append([Message(key, value)], producer=txn, transactional=True)
                w.end_transaction(txn, commit=i % 10 != 0, coordinator_epoch=0)
            elif i % 4 == 0:
                horizon = NOW - 1 if i % 8 == 0 else NOW + 1
                w.append([Message(key, value), Message(b"acct-9", None)], delete_horizon_ms=horizon)
            elif i % 9 == 0:
                w.append([Message(key, value)], magic=1, codec=Codec.GZIP)
            else:
                w.append([Message(key, value)], producer=Producer(200 + partition))
        w.append([Message(b"acct-1", b"open")], producer=txn, transactional=True)
        w.append([Message(b"acct-1", b"after")])
        w.close()
    with PartitionWriter(root, "accounts", 2) as w:  # one active segment: nothing to clean
        w.append([Message(b"acct-1", b"x"), Message(b"acct-1", b"y")])
    (root / "cleaner-offset-checkpoint").write_text("0\n1\naccounts 1 12\n")
    return root


def _rows(df):
    return sorted((r.topic, r.partition, r.offset, r.key, r.value) for r in df.collect())


def _expected(directory, **kwargs):
    result = compact_dir(directory, now_ms=NOW, **kwargs)
    return [(r.topic, r.partition, r.offset, r.key, r.value) for r in result.records]


def test_transformation_matches_python(spark, kafka, scenario):
    df = spark.read.format("kafka_log").load(str(scenario))
    assert kafka_log_path(df) == str(scenario)
    got = _rows(compact(df, now_ms=NOW))
    expected = sorted(r for p in (0, 1, 2) for r in _expected(scenario / f"accounts-{p}"))
    assert got == expected
    everything = [
        (r.topic, r.partition, r.offset, r.key, r.value) for r in iter_records(str(scenario))
    ]
    assert len(expected) < len(everything)  # the pass removed something in both partitions
    assert {r[1] for r in set(everything) - set(expected)} == {0, 1}
    assert [r[2] for r in got if r[1] == 2] == [0, 1]


def test_null_keys_kept(spark, kafka, scenario):
    df = spark.read.format("kafka_log").load(str(scenario / "accounts-0"))
    kept = _rows(compact(df, now_ms=NOW, null_keys="keep"))
    assert kept == sorted(_expected(scenario / "accounts-0", null_keys="keep"))
    assert any(r[3] is None for r in kept)


def test_selection_still_uses_the_whole_offset_map(spark, kafka, scenario):
    df = spark.read.format("kafka_log").load(str(scenario / "accounts-1"))
    selected = df.where("offset < 20").select("topic", "partition", "offset", "key", "value")
    got = _rows(compact(selected, now_ms=NOW, path=str(scenario / "accounts-1")))
    assert got == sorted(r for r in _expected(scenario / "accounts-1") if r[2] < 20)


def test_path_is_required_when_unknown(spark, kafka):
    df = spark.createDataFrame(
        [("t", 0, 0, b"k", b"v")],
        "topic string, partition int, offset long, key binary, value binary",
    )
    assert kafka_log_path(df) is None
    with pytest.raises(ValueError, match="path="):
        compact(df, now_ms=NOW)


def test_sql_views_match_python(spark, kafka, tmp_path):
    root = tmp_path / "logs"
    generate_log_dir(root, seed=5, topics=["users"], records=500, segment_bytes=8192)
    views = register_compaction(spark, str(root), name="users_compacted", now_ms=NOW)
    assert views.partitions_view == "users_compacted_partitions"
    got = _rows(spark.sql("SELECT * FROM users_compacted"))
    assert got == sorted(_expected(root / "users-0"))

    plan = dirty_ratio(root / "users-0", now_ms=NOW)
    row = spark.sql(
        "SELECT firstDirtyOffset, firstUncleanableOffset, cleanBytes, cleanableBytes, "
        "dirtyRatio, wouldClean FROM users_compacted_partitions WHERE topic = 'users'"
    ).collect()[0]
    assert tuple(row) == (
        plan.first_dirty_offset,
        plan.first_uncleanable_offset,
        plan.clean_bytes,
        plan.cleanable_bytes,
        pytest.approx(plan.ratio),
        plan.would_clean,
    )
    roles = spark.sql(
        "SELECT baseOffset, role, cleaningGroup FROM users_compacted_segments ORDER BY baseOffset"
    ).collect()
    assert [(r.baseOffset, r.role, r.cleaningGroup) for r in roles] == [
        (s.base_offset, s.role, s.group) for s in plan.segments
    ]
