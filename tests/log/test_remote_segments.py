"""The remote segments ``__remote_log_metadata`` describes (runtime/log/remote_segments.py).

Oracles: Kafka's ``RemoteLogMetadataCache`` (``addCopyInProgressSegment``,
``updateRemoteLogSegmentMetadata``: DELETE_SEGMENT_FINISHED removes the segment),
``RemoteLogSegmentState.isValidTransition`` and ``RemotePartitionMetadataStore.
handleRemotePartitionDeleteMetadata`` (DELETE_PARTITION_FINISHED drops the partition); the
records are made by the project's encoder and read back by its decoder, as the broker's
``RemoteLogMetadataSerde`` would write and read them.
"""

from __future__ import annotations

from kafka_format.runtime.log.remote_segments import (
    COPY_SEGMENT_FINISHED,
    COPY_SEGMENT_STARTED,
    DELETE_SEGMENT_STARTED,
    RemoteObject,
    compare,
    partition_of_folder,
    replay,
)
from kafka_format.runtime.messages.kafka4_topics import (
    decode_remote_log_metadata_record,
    encode_remote_log_metadata_record,
)

TOPIC_ID = "Uj5wn_FqTXirEASvVZRY1w"
A, B, C, D = (f"{c * 21}A" for c in "ABCD")
KEY = (TOPIC_ID, 0)
STARTED, FINISHED, DEL_STARTED, DEL_FINISHED = 0, 1, 2, 3


def tip(partition: int = 0) -> dict:
    return {"name": "orders", "id": TOPIC_ID, "partition": partition}


def added(segment: str, start: int, end: int, partition: int = 0, state: int = STARTED) -> bytes:
    return encode_remote_log_metadata_record(
        0,
        0,
        {
            "remoteLogSegmentId": {"topicIdPartition": tip(partition), "id": segment},
            "startOffset": start,
            "endOffset": end,
            "brokerId": 1,
            "maxTimestampMs": 0,
            "eventTimestampMs": 0,
            "segmentLeaderEpochs": [{"leaderEpoch": 0, "offset": start}],
            "segmentSizeInBytes": 1000,
            "customMetadata": None,
            "remoteLogSegmentState": state,
        },
    )


def updated(segment: str, state: int, partition: int = 0) -> bytes:
    return encode_remote_log_metadata_record(
        1,
        0,
        {
            "remoteLogSegmentId": {"topicIdPartition": tip(partition), "id": segment},
            "brokerId": 1,
            "eventTimestampMs": 0,
            "customMetadata": None,
            "remoteLogSegmentState": state,
        },
    )


def partition_deleted(state: int, partition: int = 0) -> bytes:
    return encode_remote_log_metadata_record(
        2,
        0,
        {
            "topicIdPartition": tip(partition),
            "brokerId": 0,
            "eventTimestampMs": 0,
            "remotePartitionDeleteState": state,
        },
    )


def decoded(values: list[bytes]) -> list[tuple[int, dict]]:
    return [(n, decode_remote_log_metadata_record(v)) for n, v in enumerate(values)]


def obj(segment: str, base: int, first: int | None, last: int | None) -> RemoteObject:
    name = f"{base:020d}-{segment}.log"
    return RemoteObject(name, f"folder/{name}", base, segment, first, last)


def test_the_state_after_each_update():
    state = replay(
        decoded(
            [
                added(A, 0, 99),
                updated(A, FINISHED),
                added(B, 100, 199),
                updated(B, FINISHED),
                updated(B, DEL_STARTED),
                added(C, 200, 299),  # copy under way
                added(D, 0, 99, partition=1),
                updated(D, FINISHED, partition=1),
                updated(D, DEL_STARTED, partition=1),
                updated(D, DEL_FINISHED, partition=1),
            ]
        )
    )
    assert {s: v.state for s, v in state.segments.items()} == {
        A: COPY_SEGMENT_FINISHED,
        B: DELETE_SEGMENT_STARTED,
        C: COPY_SEGMENT_STARTED,
    }
    assert list(state.deleted) == [D] and state.deleted[D].offset == 9
    assert [(s.segment_id, s.start_offset, s.end_offset) for s in state.of_partition(KEY)] == [
        (A, 0, 99),
        (B, 100, 199),
        (C, 200, 299),
    ]
    assert state.problems == []


def test_updates_kafka_refuses_change_nothing_and_are_said():
    state = replay(
        decoded(
            [
                updated(A, FINISHED),  # unknown id
                added(B, 0, 9, state=FINISHED),  # must start as COPY_SEGMENT_STARTED
                added(C, 0, 9),
                updated(C, DEL_FINISHED),  # STARTED -> DELETE_SEGMENT_FINISHED: not allowed
                updated(C, STARTED),  # a self transition: allowed (retries)
            ]
        )
    )
    assert list(state.segments) == [C] and state.segments[C].state == COPY_SEGMENT_STARTED
    assert len(state.problems) == 3
    assert (
        "offset 0" in state.problems[0] and "RemoteResourceNotFoundException" in state.problems[0]
    )
    assert "offset 1" in state.problems[1] and "addCopyInProgressSegment" in state.problems[1]
    assert "cannot go from COPY_SEGMENT_STARTED to DELETE_SEGMENT_FINISHED" in state.problems[2]


def test_a_finished_partition_delete_drops_its_segments_only():
    state = replay(
        decoded(
            [
                added(A, 0, 9),
                added(B, 0, 9, partition=1),
                partition_deleted(0),  # DELETE_PARTITION_MARKED: nothing goes yet
                partition_deleted(2),  # DELETE_PARTITION_FINISHED
            ]
        )
    )
    assert list(state.segments) == [B] and list(state.deleted) == [A]


def finished(*segments: tuple[str, int, int]) -> list[bytes]:
    out = []
    for segment, start, end in segments:
        out += [added(segment, start, end), updated(segment, FINISHED)]
    return out


def test_all_agree():
    state = replay(decoded(finished((A, 0, 99), (B, 100, 199))))
    assert compare(state, [obj(A, 0, 0, 99), obj(B, 100, 100, 199)], KEY) == []


def test_missing_extra_deleted_overlap_and_range():
    values = [
        *finished((A, 0, 99), (B, 100, 199), (C, 150, 249)),
        added(D, 300, 399),
        updated(D, FINISHED),
        updated(D, DEL_STARTED),
        updated(D, DEL_FINISHED),
    ]
    state = replay(decoded(values))
    stale = "Z" * 22
    objects = [obj(A, 0, 0, 98), obj(C, 150, 150, 249), obj(D, 300, 300, 399), obj(stale, 0, 0, 99)]
    found = compare(state, objects, KEY, expected_name=lambda s: f"expected/{s.segment_id}")
    by_check = {(f.check, f.file): f.message for f in found}
    assert set(by_check) == {
        ("range", f"folder/{0:020d}-{A}.log"),
        ("extra", f"folder/{300:020d}-{D}.log"),
        ("extra", f"folder/{0:020d}-{stale}.log"),
        ("missing", f"expected/{B}"),
        ("overlap", f"expected/{C}"),
    }
    assert "endOffset 99: its last offset is 98" in by_check[("range", f"folder/{0:020d}-{A}.log")]
    assert (
        "is deleted (DELETE_SEGMENT_FINISHED" in by_check[("extra", f"folder/{300:020d}-{D}.log")]
    )
    assert "unknown to the metadata" in by_check[("extra", f"folder/{0:020d}-{stale}.log")]
    assert f"overlaps segment {B} [100, 199]" in by_check[("overlap", f"expected/{C}")]


def test_an_object_named_off_its_start_offset():
    state = replay(decoded(finished((A, 0, 99))))
    (finding,) = compare(state, [obj(A, 5, 0, 99)], KEY)
    assert finding.check == "range" and "its name says base offset 5" in finding.message


def test_copies_and_deletes_under_way_are_not_judged():
    state = replay(decoded([added(A, 0, 99), *finished((B, 100, 199)), updated(B, DEL_STARTED)]))
    # A is being copied (its object may be partial), B being deleted (may be gone already)
    assert compare(state, [obj(A, 0, 0, 50)], KEY) == []


def test_which_partition_a_folder_holds():
    state = replay(decoded(finished((A, 0, 99))))
    assert partition_of_folder(state, f"orders-0-{TOPIC_ID}", []) == KEY
    assert partition_of_folder(state, "orders-0", []) == KEY  # topic name known to metadata
    assert partition_of_folder(state, "objects", [obj(A, 0, 0, 99)]) == KEY
    assert partition_of_folder(state, "objects", [obj("Q" * 22, 0, 0, 99)]) is None
