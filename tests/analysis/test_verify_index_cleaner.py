"""Segments as Kafka's log cleaner wrote them before per-batch indexing verify clean.

``LogCleaner.cleanInto`` filters a chunk of batches (``MemoryRecords.filterTo``) and appends
what it kept with ``dest.append(result.maxOffset, ...)``; ``LogSegment.append`` then indexes
(``largestOffset``, the position where the append starts). ``filterTo``'s ``maxOffset`` is the
largest offset it retained, so for a batch rebuilt without its last records the entry's offset
lies inside the batch (after its base offset, before its last offset), and for a chunk of
several batches it lies in a later batch than the one at the entry's position. Kafka's
look-ups are fine with both (``OffsetIndex.lookup`` gives a position at or before the target;
the reader scans forward). The bytes here are built by hand as the cleaner left them: v2
batches that keep their base offset and last offset delta, some records gone.
"""

from __future__ import annotations

import contextlib
import io
import json
import struct
from pathlib import Path

import pytest
from crc32c import crc32c
from kafka.record.default_records import DefaultRecordBatchBuilder

from kafka_format.runtime.cli import main

T0 = 1_700_000_000_000


def _batch(base: int, kept: list[int], last: int) -> bytes:
    """A v2 batch of offsets base..last of which only ``kept`` remain (compacted away the
    rest), its header's last offset delta still ``last - base`` as the cleaner keeps it."""
    builder = DefaultRecordBatchBuilder(2, 0, False, -1, -1, -1, 1 << 30)
    for offset in kept:
        builder.append(offset - base, T0 + offset, f"k{offset}".encode(), b"v", [])
    data = bytearray(builder.build())
    struct.pack_into(">q", data, 0, base)
    struct.pack_into(">i", data, 23, last - base)  # last_offset_delta
    struct.pack_into(">q", data, 35, T0 + kept[-1])  # max_timestamp
    struct.pack_into(">I", data, 17, crc32c(bytes(data[21:])))
    return bytes(data)


#: (base, kept offsets, last offset) per batch, and the cleaner's appends: batch indexes.
BATCHES = [(0, [0, 2], 4), (5, [5, 7], 9), (10, [10, 11, 12], 12), (13, [13, 15], 16)]
APPENDS = [[0, 1], [2], [3]]


def _partition(tmp_path: Path, entries=None) -> tuple[Path, list[int], list[tuple[int, int]]]:
    """A partition directory of one segment and its indexes; the batch positions; the index
    entries (offset, position): by default, the cleaner's, one an append."""
    directory = tmp_path / "orders-0"
    directory.mkdir()
    batches = [_batch(*b) for b in BATCHES]
    positions = [sum(len(b) for b in batches[:i]) for i in range(len(batches))]
    if entries is None:
        # maxOffset of each append (its largest retained offset), at its first batch.
        entries = [(max(BATCHES[i][1][-1] for i in a), positions[a[0]]) for a in APPENDS]
    name = "00000000000000000000"
    (directory / f"{name}.log").write_bytes(b"".join(batches))
    (directory / f"{name}.index").write_bytes(
        b"".join(struct.pack(">ii", offset, position) for offset, position in entries)
    )
    # One time index entry: the segment's largest timestamp and the last offset of its batch.
    (directory / f"{name}.timeindex").write_bytes(struct.pack(">qi", T0 + 15, 16))
    return directory, positions, entries


def _cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(list(argv))
    assert "Traceback" not in out.getvalue() + err.getvalue()
    return status, out.getvalue(), err.getvalue()


def _index_findings(directory: Path) -> tuple[int, list[dict], dict]:
    status, out, _ = _cli("verify", "--json", str(directory))
    report = json.loads(out)
    (index,) = [f for f in report["files"] if f["file"].endswith(".index")]
    return status, index["problems"], index["counts"]


def test_the_cleaners_entries_inside_a_batch_verify_clean(tmp_path):
    directory, positions, entries = _partition(tmp_path)
    # The entries are what the cleaner wrote: 7 at the batch holding 0..4 (its append's
    # largest retained offset lies in the next batch, 5..9, before that batch's end), 12 at
    # the batch ending at 12, 15 inside the batch holding 13..16.
    assert entries == [(7, positions[0]), (12, positions[2]), (15, positions[3])]
    status, problems, counts = _index_findings(directory)
    assert status == 0
    assert problems == []
    assert counts["entries_of_whole_appends"] == 2  # the note: counted, nothing reported
    status, out, _ = _cli("verify", str(directory))
    assert status == 0
    # Only the log's own note on compaction's gaps: a healthy compacted topic verifies clean.
    (line,) = [line for line in out.splitlines() if not line.startswith("Checked ")]
    assert line.startswith("note: ") and ".log @0: non-consecutive offsets" in line
    assert out.splitlines()[-1].endswith(": 0 errors, 0 warnings, 1 note")


@pytest.mark.parametrize(
    ("entry", "why"),
    [
        # The batch at the position starts after the entry's offset: a look-up for offset 9
        # would start past records it needs.
        ((9, 2), "Mismatch: index offset 9, log offset 12"),
        # Within an append's offsets, but the position is inside a batch.
        ((12, None), "not at a batch boundary"),
    ],
)
def test_entries_readers_set_aside_are_errors(tmp_path, entry, why):
    batches = [_batch(*b) for b in BATCHES]
    positions = [sum(len(b) for b in batches[:i]) for i in range(len(batches))]
    offset, which = entry
    position = positions[which] if which is not None else positions[2] + 10
    entries = [(7, positions[0]), (offset, position), (16, positions[3])]
    directory, _, _ = _partition(tmp_path, entries)
    status, problems, _ = _index_findings(directory)
    assert status == 1
    (problem,) = problems
    assert problem["severity"] == "error" and problem["position"] == 8
    assert why in problem["message"]
    # find sets the same entry aside: the look-up for its offset reads from the start.
    status, out, _ = _cli("find", str(directory), "--offset", str(offset), "--jsonl")
    found = json.loads(out)
    assert status == 0 and found["usedIndex"] is False
    assert f"offset index entry ({offset}, {position})" in found["indexNote"]


def test_an_entry_whose_offset_lies_past_the_next_entrys_position_holds(tmp_path):
    # (15, position of 10..12) with (16, position of 13..16) after it: no single append of
    # the cleaner's wrote both, yet a read from 10..12 for any offset from 15 on misses
    # nothing (every batch before it ends below 10). The readers use it; verify agrees.
    batches = [_batch(*b) for b in BATCHES]
    positions = [sum(len(b) for b in batches[:i]) for i in range(len(batches))]
    entries = [(7, positions[0]), (15, positions[2]), (16, positions[3])]
    directory, _, _ = _partition(tmp_path, entries)
    status, problems, counts = _index_findings(directory)
    assert status == 0 and problems == []
    assert counts["entries_of_whole_appends"] == 2  # 7 and 15 lie past their batches' ends
    status, out, _ = _cli("find", str(directory), "--offset", "15", "--jsonl")
    found = json.loads(out)
    assert found["usedIndex"] is True and found["record"]["offset"] == 15


@pytest.mark.parametrize("target", [0, 2, 3, 5, 7, 8, 10, 12, 13, 15, 16])
def test_find_trusts_the_cleaners_entries(tmp_path, target):
    directory, _, _ = _partition(tmp_path)
    status, out, _ = _cli("find", str(directory), "--offset", str(target), "--jsonl")
    assert status == 0
    found = json.loads(out)
    assert found["usedIndex"] is True, found["indexNote"]
    assert found["indexNote"] is None
    kept = sorted(o for _, k, _ in BATCHES for o in k)
    want = next(o for o in kept if o >= target) if target <= kept[-1] else None
    assert (found["record"] or {}).get("offset") == want
