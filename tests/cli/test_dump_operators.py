"""``dump`` as operators use it on a broker's data directory: a partition directory dumped
segment by segment (``Dumping FILE`` / ``Log starting offset: N`` before each, as
kafka-dump-log prints them, ``DumpLogSegments.execute`` and ``dumpLog``), the text files of
a data directory, kafka-dump-log's flag names, and ``--max-bytes``.

Oracles: the positions and offsets known from how the segments were built, and the same
segments dumped one by one.
"""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

from kafka.record.default_records import DefaultRecordBatchBuilder

from kafka_format.runtime.cli import main

T0 = 1_700_000_000_000


def batch(base: int, n: int) -> bytes:
    builder = DefaultRecordBatchBuilder(2, 0, False, -1, -1, -1, 1 << 20)
    for i in range(n):
        builder.append(i, T0 + i, b"k", f"v{base + i}".encode(), [])
    raw = bytearray(builder.build())
    raw[0:8] = base.to_bytes(8, "big")
    return bytes(raw)


def dump_here(*args: object) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            status = main(["dump", "-q", *map(str, args)])
        except SystemExit as exc:
            status = exc.code
    assert "Traceback" not in err.getvalue()
    return status, out.getvalue(), err.getvalue()


def partition(tmp_path: Path) -> tuple[Path, list[Path]]:
    directory = tmp_path / "orders-3"
    directory.mkdir()
    first = directory / "00000000000000000000.log"
    first.write_bytes(batch(0, 2) + batch(2, 2))
    second = directory / "00000000000000000004.log"
    second.write_bytes(batch(4, 3) + b"\0" * 10)
    (directory / "partition.metadata").write_text("version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAQ\n")
    return directory, [first, second]


def test_directory_dumped_segment_by_segment(tmp_path):
    directory, (first, second) = partition(tmp_path)
    status, out, _ = dump_here(directory)
    assert status == 0
    lines = out.splitlines()
    heads = [(n, line) for n, line in enumerate(lines) if not line.startswith("baseOffset")]
    assert [line for _, line in heads] == [
        f"Dumping {first}",
        "Log starting offset: 0",
        f"Dumping {second}",
        "Log starting offset: 4",
        "Found 10 invalid bytes at the end of 00000000000000000004.log",
    ]
    # Each segment's batch lines follow its own header, positions restarting at 0.
    positions = [line.split(" position: ")[1].split()[0] for line in lines if "position:" in line]
    assert positions == ["0", str(len(batch(0, 2))), "0"]
    # The same lines as dumping the two files, which is how kafka-dump-log is run.
    status, one_by_one, _ = dump_here(first, second)
    assert one_by_one == out


def test_log_directory_of_partitions(tmp_path):
    _, (first, second) = partition(tmp_path)
    other = tmp_path / "audit-0"
    other.mkdir()
    (other / "00000000000000000010.log").write_bytes(batch(10, 1))
    _, out, _ = dump_here(tmp_path)
    dumping = [line for line in out.splitlines() if line.startswith("Dumping ")]
    assert dumping == [
        f"Dumping {other / '00000000000000000010.log'}",
        f"Dumping {first}",
        f"Dumping {second}",
    ]


def test_offset_checkpoints_and_partition_metadata_decoded(tmp_path):
    directory, _ = partition(tmp_path)
    names = (
        "recovery-point-offset-checkpoint",
        "log-start-offset-checkpoint",
        "replication-offset-checkpoint",
        "cleaner-offset-checkpoint",
    )
    for name in names:
        (tmp_path / name).write_text("0\n2\norders 3 7\naudit 0 12\n")
    metadata = directory / "partition.metadata"
    status, out, err = dump_here(*(tmp_path / name for name in names), metadata)
    assert (status, err) == (0, "")
    expected = []
    for name in names:
        expected += [
            f"Dumping {tmp_path / name}",
            "topic: orders partition: 3 offset: 7",
            "topic: audit partition: 0 offset: 12",
        ]
    expected += [f"Dumping {metadata}", "version: 0 topicId: AAAAAAAAAAAAAAAAAAAAAQ"]
    assert out.splitlines() == expected
    assert "invalid bytes" not in out
    status, out, _ = dump_here("--jsonl", tmp_path / names[0], metadata)
    assert [json.loads(line) for line in out.splitlines()] == [
        {"topic": "orders", "partition": 3, "offset": 7},
        {"topic": "audit", "partition": 0, "offset": 12},
        {"version": 0, "topicId": "AAAAAAAAAAAAAAAAAAAAAQ"},
    ]


def test_damaged_checkpoint_is_one_line_and_status_1(tmp_path):
    path = tmp_path / "recovery-point-offset-checkpoint"
    path.write_text("0\n3\norders 3 7\n")
    status, out, err = dump_here(path)
    assert status == 1
    assert out.splitlines() == [f"Dumping {path}"]
    assert len(err.splitlines()) == 1 and str(path) in err


def test_text_files_kafka_does_not_know_are_ignored_as_it_does(tmp_path):
    meta = tmp_path / "meta.properties"
    meta.write_text("version=1\nnode.id=1\ncluster.id=abc\n")
    quorum = tmp_path / "quorum-state"
    quorum.write_text('{"leaderId":1,"leaderEpoch":3,"votedId":-1,"data_version":1}')
    status, out, err = dump_here(meta, quorum)
    assert status == 0
    assert out.splitlines() == [f"Dumping {meta}", f"Dumping {quorum}"]
    assert err.splitlines() == [f"Ignoring unknown file {meta}", f"Ignoring unknown file {quorum}"]


def test_max_bytes_stops_as_kafka_does_and_says_so_on_stderr(tmp_path):
    _, (first, _) = partition(tmp_path)
    one = len(batch(0, 2))
    status, out, err = dump_here("--max-bytes", one + 10, first)
    assert status == 0
    assert sum(line.startswith("baseOffset") for line in out.splitlines()) == 1
    # DumpLogSegments.printTrailingBytes prints nothing under --max-bytes: stdout as Kafka's.
    assert "invalid bytes" not in out
    assert err.splitlines() == [
        f"note: {first}: --max-bytes {one + 10} stops before the batch at position {one} "
        f"({len(batch(2, 2))} bytes)"
    ]


def test_kafka_dump_log_decoder_class_flags(tmp_path):
    _, (first, _) = partition(tmp_path)
    _, ours, _ = dump_here("--print-data-log", first)
    # Naming a decoder class, even the default, prints the data (shouldPrintDataLog).
    for flag in ("--value-decoder-class", "--key-decoder-class"):
        for cls in ("kafka.serializer.StringDecoder", "org.apache.kafka.tools.api.StringDecoder"):
            status, out, err = dump_here(flag, cls, first)
            assert (status, err, out) == (0, "", ours)
    status, out, _ = dump_here(first, "--value-decoder-class")  # the value is optional
    assert (status, out) == (0, ours)
    status, out, _ = dump_here("--value-decoder-class", "kafka.serializer.DefaultDecoder", first)
    assert "payload: 7630 " in out.replace("\n", " ") + " "  # b"v0" as hex
    status, out, err = dump_here("--key-decoder-class", "com.acme.AvroDecoder", first)
    assert (status, out) == (2, "")
    assert len(err.splitlines()) == 1 and "com.acme.AvroDecoder" in err


def test_integer_and_long_decoders(tmp_path):
    log = tmp_path / "00000000000000000000.log"
    builder = DefaultRecordBatchBuilder(2, 0, False, -1, -1, -1, 1 << 20)
    builder.append(0, T0, (-2).to_bytes(4, "big", signed=True), (7).to_bytes(8, "big"), [])
    builder.append(1, T0, b"abc", b"x", [])
    log.write_bytes(bytes(builder.build()))
    _, out, _ = dump_here(
        "--key-decoder-class",
        "org.apache.kafka.tools.api.IntegerDecoder",
        "--value-decoder-class",
        "kafka.serializer.LongDecoder",
        log,
    )
    records = [line for line in out.splitlines() if line.startswith("|")]
    assert records[0].endswith("key: -2 payload: 7")
    assert records[1].endswith(
        "key: <not a 4-byte integer: 616263> payload: <not a 8-byte integer: 78>"
    )


def test_jsonl_lines_say_where_each_record_was(tmp_path):
    directory, (first, second) = partition(tmp_path)
    status, out, err = dump_here("--jsonl", directory)
    assert status == 0
    assert err == "Found 10 invalid bytes at the end of " + str(second) + "\n"
    rows = [json.loads(line) for line in out.splitlines()]
    # The canonical keys first, in their order, then where the record was.
    assert [list(row) for row in rows] == [
        [
            *("offset", "timestamp", "timestampType", "key", "value", "headers"),
            *("topic", "partition", "file", "position"),
        ]
    ] * 7
    size = len(batch(0, 2))
    assert [(r["offset"], r["file"], r["position"]) for r in rows] == [
        (0, str(first), 0),
        (1, str(first), 0),
        (2, str(first), size),
        (3, str(first), size),
        (4, str(second), 0),
        (5, str(second), 0),
        (6, str(second), 0),
    ]
    assert {(r["topic"], r["partition"]) for r in rows} == {("orders", 3)}
    # The --batches lines say the same of each batch.
    _, out, _ = dump_here("--jsonl", "--batches", directory)
    batches = {(b["file"], b["position"]) for b in map(json.loads, out.splitlines())}
    assert {(r["file"], r["position"]) for r in rows} == batches


def _log_of(tmp_path: Path, name: str, records: list[tuple[bytes | None, bytes | None]]) -> Path:
    directory = tmp_path / name
    directory.mkdir()
    builder = DefaultRecordBatchBuilder(2, 0, False, -1, -1, -1, 1 << 20)
    for i, (key, value) in enumerate(records):
        builder.append(i, T0 + i, key, value, [("h", b"\x00")])
    log = directory / "00000000000000000000.log"
    log.write_bytes(bytes(builder.build()))
    return log


def test_jsonl_honours_key_and_value_decoders(tmp_path):
    log = _log_of(tmp_path, "orders-0", [(b"k1", b'{"a": 1}'), (None, b"not json"), (b"k3", None)])
    _, plain, _ = dump_here("--jsonl", log)
    canonical = [json.loads(line) for line in plain.splitlines()]
    status, out, err = dump_here("--jsonl", "--key-decoder", "string", log)
    assert (status, err) == (0, "")
    rows = [json.loads(line) for line in out.splitlines()]
    assert [r["key"] for r in rows] == ["k1", None, "k3"]
    # Everything else as without a decoder: values in base64, where the record was.
    assert [{**r, "key": c["key"]} for r, c in zip(rows, canonical, strict=True)] == canonical
    _, out, _ = dump_here("--jsonl", "--value-decoder", "json", "--key-decoder", "hex", log)
    rows = [json.loads(line) for line in out.splitlines()]
    assert [r["value"] for r in rows] == [{"a": 1}, "<not JSON: 6e6f74206a736f6e>", None]
    assert [r["key"] for r in rows] == ["6b31", None, "6b33"]
    assert rows[0]["headers"] == [{"key": "h", "value": "AA=="}]
    _, out, _ = dump_here("--jsonl", "--value-decoder-class", "kafka.serializer.StringDecoder", log)
    rows = [json.loads(line) for line in out.splitlines()]
    assert [r["value"] for r in rows] == ['{"a": 1}', "not json", None]
    assert [r["key"] for r in rows] == [c["key"] for c in canonical]  # keys not asked: base64


def test_jsonl_honours_the_offsets_decoder(tmp_path):
    from kafka_format.runtime.messages.internal_topics import (
        encode_offsets_key,
        encode_offsets_value,
        offsets_decoder,
    )
    from kafka_format.runtime.model import Record

    key = encode_offsets_key(1, {"group": "g", "topic": "orders", "partition": 2})
    value = encode_offsets_value(1, 3, {"offset": 42, "commitTimestamp": T0})
    log = _log_of(tmp_path, "__consumer_offsets-7", [(key, value), (key, None)])
    status, out, err = dump_here("--jsonl", "--offsets-decoder", log)
    assert (status, err) == (0, "")
    rows = [json.loads(line) for line in out.splitlines()]
    # The texts kafka-dump-log prints for them (offsets_decoder), as JSON objects.
    for row, record_value in zip(rows, (value, None), strict=True):
        texts = offsets_decoder(Record(0, T0, 0, key, record_value))
        assert row["decoded"]["key"] == json.loads(texts[0])
        expected = texts[1] if texts[1] == "<DELETE>" else json.loads(texts[1])
        assert row["decoded"]["value"] == expected
    assert rows[0]["decoded"]["value"]["data"]["offset"] == 42
    assert rows[1]["decoded"]["value"] == "<DELETE>"
    assert [(r["topic"], r["partition"], r["file"]) for r in rows] == [
        ("__consumer_offsets", 7, str(log))
    ] * 2
    # The canonical keys are kept (base64) and come first.
    assert list(rows[0])[:6] == ["offset", "timestamp", "timestampType", "key", "value", "headers"]


def test_canonical_leaves_out_where_records_were(tmp_path):
    from kafka_format.runtime.format.jsonform import record_json
    from kafka_format.runtime.read.reader import iter_records

    directory, _ = partition(tmp_path)
    status, out, _ = dump_here("--jsonl", "--canonical", directory)
    assert status == 0
    # Byte for byte the corpus's form, as the reference writes it.
    assert out == "".join(
        json.dumps(record_json(r), separators=(",", ":")) + "\n" for r in iter_records(directory)
    )
    _, out, _ = dump_here("--jsonl", "--canonical", "--value-decoder", "string", directory)
    rows = [json.loads(line) for line in out.splitlines()]
    assert [list(r) for r in rows] == [
        ["offset", "timestamp", "timestampType", "key", "value", "headers"]
    ] * 7
    assert [r["value"] for r in rows] == [f"v{i}" for i in range(7)]
