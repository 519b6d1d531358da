"""``kafka-format verify`` (runtime/verify.py) on clean and damaged partition directories.

The directories come from the broker-like writer of test_segment.py (loaded by path); each
damage is made here with struct on the bytes the writer produced, so the expected file and
byte position of every finding are known independently of the code under test.
"""

from __future__ import annotations

import importlib.util
import json
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from kafka_format.runtime.analysis.verify import VerifyReport, verify_paths


def _load_writer():
    """test_segment.py's broker-like writer (tests/ is not a package)."""
    name = "_kafka_format_test_segment_writer"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(
            name, Path(__file__).resolve().parents[1] / "log" / "test_partition.py"
        )
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


writer = _load_writer()


def run_cli(*args: str) -> subprocess.CompletedProcess:
    proc = subprocess.run(
        [sys.executable, "-m", "kafka_format.runtime.cli", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "Traceback" not in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stdout, proc.stdout
    return proc


@pytest.fixture(scope="module")
def clean(tmp_path_factory):
    return writer.build_partition(tmp_path_factory.mktemp("clean") / "orders-0", seed=21)


@pytest.fixture
def copy(tmp_path, clean):
    """A fresh copy of the clean partition to damage, and its writer (the oracle)."""
    target = tmp_path / "orders-0"
    shutil.copytree(clean.dir, target)
    return target, clean


def errors_of(report: VerifyReport, check: str | None = None):
    return [p for p in report.errors if check is None or p.check == check]


def name(base: int, suffix: str) -> str:
    return f"{base:020d}.{suffix}"


# --- clean directories --------------------------------------------------------------------------


def test_clean_partition_passes(clean):
    report = verify_paths([clean.dir])
    assert report.ok, [p.line() for p in report.errors]
    kinds = sorted(f.kind for f in report.files)
    n = len(clean.segments)
    assert kinds.count("log") == n and kinds.count("index") == n and kinds.count("timeindex") == n
    assert kinds.count("txnindex") == sum(1 for s in clean.segments if s.txnindex)
    assert "snapshot" in kinds and "leader-epoch-checkpoint" in kinds
    logs = [f for f in report.files if f.kind == "log"]
    assert sum(f.counts["batches"] for f in logs) == len(clean.batches)
    assert sum(f.counts["records"] for f in logs) == len(clean.records)
    index_entries = sum(f.counts["entries"] for f in report.files if f.kind == "index")
    assert index_entries == sum(len(s.index) for s in clean.segments)
    # No warnings; a note on the gaps the writer left on purpose (as compaction leaves them).
    assert report.warnings == []
    assert {p.check for p in report.notes} == {"non-consecutive"}


def test_clean_partition_cli(clean):
    proc = run_cli("verify", clean.dir)
    assert proc.returncode == 0, proc.stdout
    assert "0 errors" in proc.stdout.splitlines()[-1]
    proc = run_cli("verify", "--json", clean.dir)
    assert proc.returncode == 0
    data = json.loads(proc.stdout)
    assert data["ok"] is True and data["errors"] == 0
    assert {f["kind"] for f in data["files"]} >= {"log", "index", "timeindex", "snapshot"}
    proc = run_cli("verify", "--quiet", clean.dir)
    assert [line for line in proc.stdout.splitlines() if not line.startswith("Checked ")] == []
    assert "note: " in run_cli("verify", clean.dir).stdout


def test_log_dir_of_partitions(tmp_path, clean):
    shutil.copytree(clean.dir, tmp_path / "orders-0")
    shutil.copytree(clean.dir, tmp_path / "orders-1")
    (tmp_path / "recovery-point-offset-checkpoint").write_text("0\n0\n")
    report = verify_paths([tmp_path])
    assert report.ok
    logs = {Path(f.file).parent.name for f in report.files if f.kind == "log"}
    assert logs == {"orders-0", "orders-1"}


def test_untrimmed_active_segment_passes(tmp_path):
    w = writer.build_partition(tmp_path / "live-0", seed=4, batches=70, trim_last=False)
    report = verify_paths([w.dir])
    assert report.ok, [p.line() for p in report.errors]
    assert not [p for p in report.warnings if p.check in ("untrimmed", "timeindex-last")]


def test_untrimmed_closed_segment_warns(copy):
    d, w = copy
    path = d / name(w.segments[0].base, "index")
    path.write_bytes(path.read_bytes() + bytes(8 * 10))
    report = verify_paths([d])
    assert report.ok
    (warning,) = [p for p in report.warnings if p.check == "untrimmed"]
    assert warning.file == str(path)
    assert warning.position == 8 * len(w.segments[0].index)


# --- damage ---------------------------------------------------------------------------------------


def test_flipped_crc_bytes(copy):
    d, w = copy
    seg = w.segments[1]
    targets = [b for b in w.batches if b.segment == seg.base][3:5]
    log = d / name(seg.base, "log")
    data = bytearray(log.read_bytes())
    for b in targets:
        data[b.position + 17] ^= 0xFF  # first byte of the stored CRC-32C
    log.write_bytes(bytes(data))
    report = verify_paths([d])
    assert not report.ok
    crc = errors_of(report, "crc")
    assert [(p.file, p.position) for p in crc] == [(str(log), b.position) for b in targets]
    assert "crc32c" in crc[0].message and crc[0].base_offset == targets[0].base_offset
    # located as every tool locates damage: file @position (base offset N): cause
    assert crc[0].line() == (
        f"error: {log} @{targets[0].position} (base offset {targets[0].base_offset}): "
        f"{crc[0].message}"
    )
    # Every other batch of the segment was still read (skip mode, keep going).
    log_report = next(f for f in report.files if f.file == str(log))
    assert log_report.counts["batches"] == sum(1 for b in w.batches if b.segment == seg.base)
    proc = run_cli("verify", d)
    assert proc.returncode == 1
    assert f"error: {log} @{targets[0].position} (base offset " in proc.stdout
    assert "2 errors" in proc.stdout.splitlines()[-1]


def test_flipped_record_byte(copy):
    d, w = copy
    b = next(x for x in w.batches if x.segment == 0 and x.size > 200 and not x.is_control)
    log = d / name(0, "log")
    data = bytearray(log.read_bytes())
    data[b.position + b.size - 10] ^= 0x01
    log.write_bytes(bytes(data))
    report = verify_paths([d])
    assert [(p.file, p.position) for p in errors_of(report, "crc")] == [(str(log), b.position)]


def _rewrite_index(path: Path, base: int, entries) -> None:
    path.write_bytes(b"".join(struct.pack(">ii", o - base, p) for o, p in entries))


def test_moved_index_entry(copy):
    d, w = copy
    seg = w.segments[0]
    entries = list(seg.index)
    n = 2
    batches = [b for b in w.batches if b.segment == seg.base]
    k = next(i for i, b in enumerate(batches) if b.position == entries[n][1])
    # Point entry n at the next batch: positions still increase, so the broker's start-up
    # checks pass, but a look-up through this entry would skip the records of batch k.
    entries[n] = (entries[n][0], batches[k + 1].position)
    assert entries[n - 1][1] < entries[n][1] < entries[n + 1][1]
    index = d / name(seg.base, "index")
    _rewrite_index(index, seg.base, entries)
    report = verify_paths([d])
    (err,) = errors_of(report, "index-entry")
    assert err.file == str(index) and err.position == n * 8
    assert f"index offset {entries[n][0]}, log offset {batches[k + 1].last_offset}" in err.message
    proc = run_cli("verify", d)
    assert proc.returncode == 1 and f"{index} @{n * 8}: Mismatch" in proc.stdout


def test_index_entry_inside_a_batch_and_past_the_end(copy):
    d, w = copy
    seg = w.segments[0]
    entries = list(seg.index)
    size = len(seg.data)
    entries[-2] = (entries[-2][0], entries[-2][1] + 5)
    entries[-1] = (entries[-1][0], size + 100)
    index = d / name(seg.base, "index")
    _rewrite_index(index, seg.base, entries)
    report = verify_paths([d])
    found = {(p.position, p.check) for p in errors_of(report) if p.file == str(index)}
    last = len(entries) - 1
    assert found == {((last - 1) * 8, "index-entry"), (last * 8, "index-entry")}
    messages = {p.position: p.message for p in errors_of(report)}
    assert "not at a batch boundary" in messages[(last - 1) * 8]
    assert "past the end of the log" in messages[last * 8]


def test_multi_batch_append_entry_is_consistent(copy):
    # Brokers before per-batch indexing appended a follower's whole chunk at once and
    # indexed (last offset of the chunk, position of its first batch): consistent, only
    # counted (test_verify_index_cleaner.py has the rule's cases).
    d, w = copy
    seg = w.segments[0]
    batches = [b for b in w.batches if b.segment == seg.base]
    entries = list(seg.index)
    k = next(i for i, b in enumerate(batches) if b.position == entries[1][1])
    entries[1] = (batches[k + 1].last_offset, entries[1][1])
    assert entries[1][0] < entries[2][0]
    index = d / name(seg.base, "index")
    _rewrite_index(index, seg.base, entries)
    report = verify_paths([d])
    assert report.ok
    assert [p for p in report.problems if p.check == "index-entry"] == []
    (checked,) = [f for f in report.files if f.file == str(index)]
    assert checked.counts["entries_of_whole_appends"] == 1


def test_index_sanity_as_at_startup(copy):
    d, w = copy
    index = d / name(w.segments[1].base, "index")
    index.write_bytes(index.read_bytes() + b"\x01\x02\x03")  # not a multiple of 8
    report = verify_paths([d])
    (err,) = errors_of(report, "index-sanity")
    assert err.file == str(index)
    assert err.position == 8 * len(w.segments[1].index)


def _rewrite_timeindex(path: Path, base: int, entries) -> None:
    path.write_bytes(b"".join(struct.pack(">qi", t, o - base) for t, o in entries))


def test_out_of_order_time_index(copy):
    d, w = copy
    seg = w.segments[0]
    entries = list(seg.timeindex)
    entries[1], entries[2] = entries[2], entries[1]
    path = d / name(seg.base, "timeindex")
    _rewrite_timeindex(path, seg.base, entries)
    report = verify_paths([d])
    order = errors_of(report, "timeindex-order")
    assert [(p.file, p.position) for p in order] == [(str(path), 2 * 12)]
    assert f"index timestamp {entries[2][0]}, previously indexed timestamp {entries[1][0]}" in (
        order[0].message
    )
    assert errors_of(report, "index-sanity")[0].file == str(path)


def test_time_index_timestamp_and_offset_mismatch(copy):
    d, w = copy
    seg = w.segments[1]
    entries = list(seg.timeindex)
    entries[0] = (entries[0][0] - 1, entries[0][1])  # still below entry 1
    ending = {b.last_offset: b for b in w.batches}
    n = next(i for i in range(1, len(entries)) if ending[entries[i][1]].base_offset < entries[i][1])
    batch = ending[entries[n][1]]
    # Inside the batch, not its last offset, and not the batch's largest timestamp either
    # (with the batch's largest timestamp it would be an entry the log cleaner writes).
    assert entries[n][0] - 1 > entries[n - 1][0]
    entries[n] = (entries[n][0] - 1, entries[n][1] - 1)
    path = d / name(seg.base, "timeindex")
    _rewrite_timeindex(path, seg.base, entries)
    report = verify_paths([d])
    found = {p.position: p.message for p in errors_of(report, "timeindex-entry")}
    assert set(found) == {0, 12 * n}
    assert f"index timestamp {entries[0][0]}, log timestamp {entries[0][0] + 1}" in found[0]
    assert "not the last offset of a batch" in found[12 * n]
    assert f"the batch at {batch.position} holds" in found[12 * n]


def test_a_time_index_entry_inside_the_batch_of_its_timestamp_is_the_cleaners(copy):
    # LogCleaner.cleanInto appends with MemoryRecords.filterTo's shallowOffsetOfMaxTimestamp:
    # the last retained record of the batch holding the largest timestamp, which need not be
    # the rewritten batch's last offset. TimeIndex.lookup reads on from there: no finding.
    d, w = copy
    seg = w.segments[1]
    entries = list(seg.timeindex)
    ending = {b.last_offset: b for b in w.batches}
    n = next(i for i in range(len(entries)) if ending[entries[i][1]].base_offset < entries[i][1])
    entries[n] = (entries[n][0], entries[n][1] - 1)
    _rewrite_timeindex(d / name(seg.base, "timeindex"), seg.base, entries)
    report = verify_paths([d])
    assert errors_of(report, "timeindex-entry") == []
    (timeindex,) = [f for f in report.files if f.file == str(d / name(seg.base, "timeindex"))]
    assert timeindex.counts["entries_inside_a_batch"] == 1


def test_missing_abort_marker_entry(copy):
    d, w = copy
    seg = next(s for s in w.segments if s.txnindex)
    txn_path = d / name(seg.base, "txnindex")
    dropped = seg.txnindex[0]
    txn_path.write_bytes(b"".join(struct.pack(">hqqqq", 0, *t) for t in seg.txnindex[1:]))
    marker = next(b for b in w.batches if b.base_offset == dropped[2])
    report = verify_paths([d])
    (err,) = errors_of(report, "txnindex")
    assert err.file == str(d / name(seg.base, "log")) and err.position == marker.position
    assert f"ABORT marker of producer {dropped[0]} at offset {dropped[2]}" in err.message


def test_txnindex_entry_without_marker(copy):
    d, w = copy
    seg = next(s for s in w.segments if s.txnindex)
    data_batch = next(
        b for b in w.batches if b.segment == seg.base and not b.is_control and b.base_offset > 0
    )
    bogus = (4242, data_batch.base_offset, data_batch.last_offset, data_batch.last_offset + 1)
    entries = sorted([*seg.txnindex, bogus], key=lambda t: t[2])
    txn_path = d / name(seg.base, "txnindex")
    txn_path.write_bytes(b"".join(struct.pack(">hqqqq", 0, *t) for t in entries))
    report = verify_paths([d])
    (err,) = errors_of(report, "txnindex")
    assert err.file == str(txn_path) and err.position == entries.index(bogus) * 34
    assert "no ABORT marker of producer 4242" in err.message


def test_corrupt_snapshot_crc(copy):
    d, w = copy
    snap = d / f"{w.next_offset:020d}.snapshot"
    data = bytearray(snap.read_bytes())
    data[-1] ^= 0x40
    snap.write_bytes(bytes(data))
    report = verify_paths([d])
    (err,) = errors_of(report, "snapshot")
    assert err.file == str(snap) and err.position == 2 and "crc32c" in err.message
    proc = run_cli("verify", d)
    assert proc.returncode == 1 and f"error: {snap} @2: " in proc.stdout


def test_bad_leader_epoch_checkpoint(copy):
    d, _w = copy
    (d / "leader-epoch-checkpoint").write_text("0\n2\n1 100\n0 200\n")
    report = verify_paths([d])
    assert [p.check for p in report.errors] == ["checkpoint"]
    (d / "leader-epoch-checkpoint").write_text("0\n3\n1 100\n")
    report = verify_paths([d])
    assert [p.check for p in report.errors] == ["checkpoint"]


def test_truncated_tail_is_a_warning(copy):
    d, w = copy
    log = d / name(w.segments[-1].base, "log")
    with log.open("ab") as fh:
        # A plausible start of a batch (magic 2) cut short; garbage would be damage.
        fh.write(b"\x00" * 8 + struct.pack(">i", 500) + b"\x00" * 4 + b"\x02partial")
    report = verify_paths([d])
    assert report.ok
    (tail,) = [p for p in report.warnings if p.check == "truncated-tail"]
    assert tail.file == str(log) and tail.position == len(w.segments[-1].data)
    assert "24 invalid bytes" in tail.message
    assert run_cli("verify", d).returncode == 0


def test_missing_indexes_and_orphans_warn(copy):
    d, w = copy
    (d / name(w.segments[0].base, "index")).unlink()
    (d / name(w.segments[0].base, "timeindex")).unlink()
    (d / name(99_999, "index")).write_bytes(b"")
    report = verify_paths([d])
    assert report.ok
    checks = sorted(p.check for p in report.warnings if p.check != "non-consecutive")
    assert checks == ["missing-index", "missing-index", "orphan"]


def test_overlapping_segments(copy):
    d, w = copy
    # Rename the second segment to a base offset inside the first one's range.
    second = w.segments[1].base
    first_last = max(b.last_offset for b in w.batches if b.segment == 0)
    new_base = first_last - 2
    for suffix in ("log", "index", "timeindex", "txnindex"):
        src = d / name(second, suffix)
        if src.exists():
            src.rename(d / name(new_base, suffix))
    report = verify_paths([d])
    messages = [p.message for p in errors_of(report, "base-offset")]
    assert any("reach the next segment" in m for m in messages)


# --- single files, the corpus, bad paths ---------------------------------------------------------


def test_single_files(copy):
    d, w = copy
    seg = w.segments[0]
    report = verify_paths([d / name(seg.base, "index"), d / name(seg.base, "timeindex")])
    assert report.ok
    assert [f.kind for f in report.files] == ["index", "timeindex"]
    assert report.files[0].counts["entries"] == len(seg.index)
    report = verify_paths([d / name(seg.base, "log")])
    assert [f.kind for f in report.files] == ["log"]
    assert report.files[0].counts["batches"] == sum(1 for b in w.batches if b.segment == seg.base)
    snap = d / f"{w.next_offset:020d}.snapshot"
    assert verify_paths([snap]).ok
    txn_seg = next(s for s in w.segments if s.txnindex)
    assert verify_paths([d / name(txn_seg.base, "txnindex")]).ok


def test_summary_counts_in_words(copy):
    d, w = copy
    seg = w.segments[0]
    one = verify_paths([d / name(seg.base, "log")])
    counts = one.files[0].counts
    batches, data, control = counts["batches"], counts["data_records"], counts["control_records"]
    assert data + control == counts["records"]
    plural = "batch" if batches == 1 else "batches"
    assert (len(one.errors), len(one.warnings), len(one.notes)) == (0, 0, 1)  # offset gaps
    # records named by kind, as the command line prints it: data records are what stats and
    # recover count
    assert one.summary() == (
        f"Checked 1 file (1 log; {batches:,} {plural}, {data:,} data record"
        f"{'s' * (data != 1)}, {control:,} control record{'s' * (control != 1)}): 0 errors, "
        "0 warnings, 1 note"
    )
    two = verify_paths([d / name(seg.base, "index"), d / name(seg.base, "timeindex")])
    assert two.summary().startswith(
        "Checked 2 files (1 index, 1 timeindex; 0 batches, 0 data records, 0 control records)"
    )


# Seeds 0 and 10 put damage on entries inside compressed v0/v1 wrappers, whose first offset a
# header scan cannot know (the findings name such a batch by its last offset, in both scans).
@pytest.mark.parametrize("damage_seed", [0, 5, 10])
def test_header_scans_find_what_full_scans_find(tmp_path, damage_seed):
    """``dump`` checks indexes against a header-only scan, decoding only the batches time
    index entries point at; ``verify`` decodes the whole log. Both must find the same things,
    on every scenario ``generate`` writes (v0/v1 wrappers, transactions and markers, every
    codec) and on indexes damaged here: entries moved, timestamps changed, entries swapped."""
    import random

    from kafka_format.runtime.analysis.verify import (
        FileReport,
        check_offset_index,
        check_time_index,
        decode_max_timestamps,
        scan_headers,
        scan_log,
    )
    from kafka_format.runtime.files.indexes import OffsetIndex, TimeIndex
    from kafka_format.runtime.write.generate import generate_log_dir

    generate_log_dir(tmp_path, seed=3, records=120, segment_bytes=16384)
    rng = random.Random(damage_seed)
    checked = found_problems = 0
    for log_path in sorted(tmp_path.glob("*/*.log")):
        base = int(log_path.name.split(".")[0])
        full = scan_log(log_path, FileReport(str(log_path), "log"), base_offset=base)
        for suffix, cls, check in (
            (".index", OffsetIndex, check_offset_index),
            (".timeindex", TimeIndex, check_time_index),
        ):
            index_path = log_path.with_suffix(suffix)
            if not index_path.exists() or not index_path.stat().st_size:
                continue
            data = bytearray(index_path.read_bytes())
            entries = len(data) // cls.ENTRY_SIZE
            for damage in range(3):
                if damage:
                    # The low byte of a field: relative offset or position, timestamp or
                    # relative offset.
                    field = rng.choice((0, 4) if cls is OffsetIndex else (4, 8))
                    data[rng.randrange(entries) * cls.ENTRY_SIZE + field + 3] ^= rng.choice(
                        (1, 2, 0x10)
                    )
                    index_path.write_bytes(bytes(data))
                heads = scan_headers(log_path)
                if suffix == ".timeindex":
                    found = (
                        heads.first_ending_at_or_after(base + rel)
                        for _, rel in _entries(index_path, base)
                    )
                    decode_max_timestamps(heads, (b for b in found if b is not None))
                want, got = FileReport(str(index_path), "x"), FileReport(str(index_path), "x")
                check(index_path, base, full, want, is_last=True)
                check(index_path, base, heads, got, is_last=True)
                assert [p.line() for p in got.problems] == [p.line() for p in want.problems]
                checked += 1
                found_problems += len(want.problems)
    assert checked > 20 and found_problems > 10


def _entries(path, base):
    from kafka_format.runtime.files.indexes import TimeIndex

    with TimeIndex.open(path, base, strict=False) as index:
        return index.written_entries()


def test_corpus_partition_verifies(tmp_path):
    # A 0.10 broker's magic-1 segment and its .timeindex: one entry (1490069445180, 5), the
    # largest timestamp, at the last message. There is no .index: a warning, not an error.
    src = writer.corpus_dir("recordupdater")
    d = tmp_path / "hello-0"
    d.mkdir()
    shutil.copy(src / "hello-0.00000000000000000000.log.bin", d / name(0, "log"))
    shutil.copy(src / "hello-0.00000000000000000000.timeindex", d / name(0, "timeindex"))
    report = verify_paths([d])
    assert report.ok, [p.line() for p in report.errors]
    assert [p.check for p in report.warnings] == ["missing-index"]
    timeindex = next(f for f in report.files if f.kind == "timeindex")
    assert timeindex.counts["entries"] == 1
    proc = run_cli("verify", d)
    assert proc.returncode == 0


def test_corpus_invalid_crcs(tmp_path):
    src = writer.corpus_dir("recordupdater") / "health-check.log.bin"
    report = verify_paths([src])
    crc = errors_of(report, "crc")
    expected = sum(1 for _ in (src.parent / "health-check.log.jsonl").open())
    assert len(crc) == expected  # one message per record, every CRC invalid
    assert all(p.file == str(src) for p in crc)
    assert run_cli("verify", src).returncode == 1


def test_bad_paths(tmp_path):
    proc = run_cli("verify", tmp_path / "nope")
    assert proc.returncode == 1 and "no such file or directory" in proc.stdout
    empty = tmp_path / "empty"
    empty.mkdir()
    proc = run_cli("verify", empty)
    assert proc.returncode == 1 and "no .log segments" in proc.stdout
    garbage = tmp_path / "t-0"
    garbage.mkdir()
    (garbage / name(0, "log")).write_bytes(b"\x00" * 8 + struct.pack(">i", 3) + b"\x00" * 20)
    proc = run_cli("verify", garbage)
    assert proc.returncode == 1 and "minimum record overhead" in proc.stdout


def test_help_has_examples():
    proc = run_cli("verify", "--help")
    assert proc.returncode == 0 and "examples:" in proc.stdout and "--json" in proc.stdout


def test_every_corpus_set(manifest):
    # Record sets written by real brokers and clients: exactly those the manifest marks
    # crc_valid false fail, and only with CRC errors. (The manifest fixture skips, or fails
    # under CI, before anything is read when the corpus is absent.)
    report = verify_paths([s.path for s in manifest])
    failing = {p.file for p in report.errors}
    assert failing == {str(s.path) for s in manifest if not s.crc_valid}
    assert {p.check for p in report.errors} == {"crc"}
    by_file = {f.file: f for f in report.files}
    for s in manifest:
        if s.crc_valid:  # every record decoded (none of these sets holds control batches)
            assert by_file[str(s.path)].counts["records"] == s.entry["records"]


def test_files_of_a_data_dir_that_hold_no_batches(tmp_path):
    # kafka-dump-log's "Ignoring unknown file" for meta.properties and quorum-state (a note,
    # not "invalid magic"); checkpoints and partition.metadata parsed as the broker parses them.
    (tmp_path / "meta.properties").write_text("version=1\nnode.id=1\ncluster.id=abc\n")
    (tmp_path / "quorum-state").write_text('{"leaderId":1,"leaderEpoch":5,"data_version":0}')
    (tmp_path / "recovery-point-offset-checkpoint").write_text("0\n1\norders 0 5\n")
    (tmp_path / "log-start-offset-checkpoint").write_text("0\nbad\n")
    names = [
        "meta.properties",
        "quorum-state",
        "recovery-point-offset-checkpoint",
        "log-start-offset-checkpoint",
    ]
    report = verify_paths([tmp_path / n for n in names])
    assert [(p.severity, Path(p.file).name) for p in report.notes] == [
        ("note", "meta.properties"),
        ("note", "quorum-state"),
    ]
    assert all(p.message == "Ignoring unknown file" for p in report.notes)
    (error,) = report.errors
    assert Path(error.file).name == "log-start-offset-checkpoint" and "'bad'" in error.message
    (good,) = [f for f in report.files if f.kind == "recovery-point-offset-checkpoint"]
    assert good.counts["entries"] == 1 and not good.problems
