"""The v2 record-offset rule: one verdict, decided in the decoding layer, on every path.

A v2 record's offset delta lies in 0..lastOffsetDelta and is above the one before it in its
batch (``format/batches.offset_delta_damage``, which cites the Kafka sources; the kernel
applies the same rule). A batch that breaks it is damage like a CRC mismatch: raised under
``errors="strict"``, the batch skipped under "skip" and "salvage", and the same cause at the
same byte from ``iter_batches``/``iter_records``, ``read_table`` (both kernel modes),
``dump --jsonl``, ``dump --deep-iteration``, ``verify``, ``stats``, ``inspect`` and
``recover --salvage``. The shapes Kafka's cleaner makes are no damage: gaps between deltas, a
last delta below lastOffsetDelta, a first delta above 0, a batch of no records, and control
batches of several records (KRaft's).

The damaged batches are kafka-python's (an independent writer, which writes whatever offset
it is given), their lastOffsetDelta rewritten where a case needs it and their CRC-32C computed
again: a writer's bug, not the disk's, so that the record decoders have the verdict.
"""

from __future__ import annotations

import contextlib
import gzip
import io
import json
import random
import re
import struct
from dataclasses import dataclass
from pathlib import Path

import pytest
from crc32c import crc32c
from hypothesis import given, settings
from hypothesis import strategies as st
from kafka.record.default_records import DefaultRecordBatchBuilder

import kafka_format as kf
from kafka_format.runtime.cli import main
from kafka_format.runtime.read import columnar
from kafka_format.runtime.read.columnar import read_table
from kafka_format.schemas.legacy_message import build_legacy_message
from kafka_format.schemas.record_batch import build_record_batch

T0 = 1_700_000_000_000
HEADER = 61  # DefaultRecordBatch.RECORD_BATCH_OVERHEAD
GZIP, SNAPPY, LZ4, ZSTD = 1, 2, 3, 4


# --- batches -------------------------------------------------------------------------------------


def _values(n: int, big: bool) -> list[bytes]:
    """Values that compress (kafka-python sends a batch uncompressed when compressing does not
    pay); ``big``: 40 KB each, so that an LZ4 payload passes the 16 KiB from which the record
    decoder decompresses it itself (``plan._PACKED_LZ4_MIN``)."""
    if not big:
        return [(b"value %d " % i) * 10 for i in range(n)]
    rng = random.Random(n)
    return [rng.randbytes(20_000) * 2 for _ in range(n)]


def batch(
    deltas: list[int],
    *,
    last: int | None = None,
    codec: int = 0,
    base: int = 0,
    big: bool = False,
) -> bytes:
    """A v2 batch of records with these offset deltas, its lastOffsetDelta ``last`` (the last
    record's when None), base offset ``base``, CRC-32C computed over what was rewritten."""
    builder = DefaultRecordBatchBuilder(2, codec, False, -1, -1, -1, 1 << 30)
    for i, (delta, value) in enumerate(zip(deltas, _values(len(deltas), big), strict=True)):
        builder.append(delta, T0 + i, b"k%d" % i, value, [])
    out = bytearray(builder.build())
    struct.pack_into(">q", out, 0, base)
    if last is not None:
        struct.pack_into(">i", out, 23, last)
    struct.pack_into(">I", out, 17, crc32c(bytes(out[21:])))
    assert (struct.unpack_from(">h", out, 21)[0] & 7) == codec, "kafka-python did not compress"
    return bytes(out)


def record_starts(records: bytes) -> list[int]:
    """Where each record starts in a v2 batch's (decompressed) records: its length varint."""
    starts, p = [], 0
    while p < len(records):
        starts.append(p)
        raw, shift = 0, 0
        while True:
            byte = records[p]
            p += 1
            raw |= (byte & 0x7F) << shift
            shift += 7
            if byte < 0x80:
                break
        p += (raw >> 1) ^ -(raw & 1)
    return starts


def expected_fault(deltas: list[int], last: int, base: int) -> tuple[int, str] | None:
    """The rule, written from its statement (not from the runtime): the first record at fault
    and Kafka's words for it (``format/messages``), or None."""
    previous = None
    for i, delta in enumerate(deltas):
        if delta < 0 or delta > last:
            return i, (
                f"record offset {base + delta} (offset delta {delta}) is outside its batch's "
                f"offset range [{base}, {base + last}]"
            )
        if previous is not None and delta <= previous:
            return i, (
                f"Illegal offset {base + delta} following previous offset {base + previous} "
                "(Offsets must increase monotonically)"
            )
        previous = delta
    return None


@dataclass(frozen=True)
class Verdict:
    position: int
    base_offset: int | None
    cause: str


def expected_verdict(
    deltas: list[int], last: int, base: int, codec: int, at: int, big: bool = False
) -> Verdict | None:
    """The verdict for the batch at file position ``at``: at its record's first byte when
    uncompressed, else at the batch, the byte in the decompressed records named in the text."""
    fault = expected_fault(deltas, last, base)
    if fault is None:
        return None
    index, cause = fault
    # kafka-python writes the same record bytes whatever the codec: its uncompressed batch's
    # records are what the compressed one decompresses to.
    plain = batch(deltas, last=last, base=base, big=big)
    start = record_starts(plain[HEADER:])[index]
    if codec:
        return Verdict(at, base, f"{cause} (in the decompressed records at byte {start})")
    return Verdict(at + HEADER + start, base, cause)


# --- the readers ---------------------------------------------------------------------------------

_LINE = re.compile(
    r"^(?:kafka-format(?: \w+)?: )?error: (?P<file>.+?) @(?P<pos>\d+)"
    r"(?: \(base offset (?P<base>-?\d+)\))?: (?P<cause>.*)$"
)


def _from_error(exc: kf.KafkaFormatError) -> Verdict:
    return Verdict(exc.position, exc.base_offset, exc.reason)


def _from_lines(text: str, path: Path) -> list[Verdict]:
    found = []
    for line in text.splitlines():
        match = _LINE.match(line)
        if match and match["file"] == str(path):
            base = match["base"]
            found.append(
                Verdict(int(match["pos"]), None if base is None else int(base), match["cause"])
            )
    return found


def cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(list(argv))
    assert "Traceback" not in out.getvalue() + err.getvalue()
    return status, out.getvalue(), err.getvalue()


def strict_verdicts(path: Path) -> dict[str, Verdict | None]:
    """The first error of each strict reader (None: it read the file whole)."""

    def first(read) -> Verdict | None:
        try:
            read()
        except kf.KafkaFormatError as exc:
            return _from_error(exc)
        return None

    name = str(path)
    return {
        "iter_batches": first(lambda: list(kf.iter_batches(name))),
        "iter_records": first(lambda: list(kf.iter_records(name))),
        "iter_records read_committed": first(
            lambda: list(kf.iter_records(name, isolation="read_committed"))
        ),
        "read_table": first(lambda: read_table(name)),
        "read_table binary_view": first(lambda: read_table(name, binary_view=True)),
        "read_table read_committed": first(lambda: read_table(name, isolation="read_committed")),
    }


def lenient_reads(path: Path, mode: str) -> dict[str, tuple[list[Verdict], list[int]]]:
    """Under ``errors=mode``: each reader's reported errors and the offsets it read."""
    name = str(path)
    got = {}
    report = kf.Report()
    offsets = [
        r.offset
        for b in kf.iter_batches(name, errors=mode, report=report)
        if b.error is None
        for r in b.records
    ]
    got["iter_batches"] = ([_from_error(e) for e in report.errors], offsets)
    report = kf.Report()
    offsets = [r.offset for r in kf.iter_records(name, errors=mode, report=report)]
    got["iter_records"] = ([_from_error(e) for e in report.errors], offsets)
    for view in (False, True):
        report = kf.Report()
        table = read_table(name, errors=mode, report=report, binary_view=view)
        got[f"read_table {view=}"] = (
            [_from_error(e) for e in report.errors],
            table.column("offset").to_pylist(),
        )
    return got


def command_verdicts(path: Path, at: int) -> dict[str, list[Verdict]]:
    """The error lines of each command (``at``: the damaged batch, for ``inspect``), each with
    exit status 1."""
    found = {}
    for label, argv, stream in (
        ("dump --jsonl", ["dump", "--jsonl"], 2),
        ("dump --deep-iteration", ["dump", "--deep-iteration"], 2),
        ("dump --deep-iteration --salvage", ["dump", "--deep-iteration", "--salvage"], 2),
        ("verify", ["verify"], 1),
        ("stats", ["stats"], 2),
        ("inspect", ["inspect", "--position", str(at)], 2),
    ):
        status, out, err = cli(*argv, str(path))
        assert status == 1, (label, out, err)
        found[label] = _from_lines(out if stream == 1 else err, path)
    return found


def write_log(tmp_path: Path, bad: bytes, bad_base: int = 10) -> tuple[Path, int, list[int]]:
    """A segment: a healthy batch (offsets 0-2), ``bad``, a healthy batch (100-101); its path,
    where ``bad`` starts, and the offsets of the healthy records."""
    before = batch([0, 1, 2], base=0)
    after = batch([0, 1], base=100)
    directory = tmp_path / "src" / "orders-0"
    directory.mkdir(parents=True)
    path = directory / "00000000000000000000.log"
    path.write_bytes(before + bad + after)
    return path, len(before), [0, 1, 2, 100, 101]


# --- one verdict everywhere ----------------------------------------------------------------------

# (offset deltas, lastOffsetDelta): each breaks the rule at one record.
DAMAGE = {
    "a delta repeated": ([0, 0, 1], 2),
    "deltas decreasing": ([0, 2, 1], 2),
    "a delta past lastOffsetDelta": ([0, 1, 2], 1),
    "a negative delta (an offset below the base offset)": ([-1, 0, 1], 1),
    "a negative lastOffsetDelta": ([0], -1),
    "the last delta past lastOffsetDelta after a gap": ([0, 4, 9], 8),
}
CODECS = {"uncompressed": 0, "gzip": GZIP, "snappy": SNAPPY, "lz4": LZ4, "zstd": ZSTD}


@pytest.mark.parametrize("codec", list(CODECS))
@pytest.mark.parametrize("case", list(DAMAGE))
def test_every_reader_gives_the_same_verdict(tmp_path, case, codec):
    deltas, last = DAMAGE[case]
    bad = batch(deltas, last=last, codec=CODECS[codec], base=10)
    path, at, healthy = write_log(tmp_path, bad)
    expected = expected_verdict(deltas, last, 10, CODECS[codec], at)
    assert expected is not None
    # strict: raised, at the record (or, compressed, at the batch naming the record's byte)
    for reader, verdict in strict_verdicts(path).items():
        assert verdict == expected, reader
    # skip and salvage: the batch reported and left out, as for a CRC error; the rest read
    for mode in ("skip", "salvage"):
        for reader, (errors, offsets) in lenient_reads(path, mode).items():
            assert errors == [expected], (mode, reader)
            assert offsets == healthy, (mode, reader)
    # the commands: one error line each, the same, and exit status 1
    for command, lines in command_verdicts(path, at).items():
        assert lines == [expected], command


def test_the_commands_read_on_past_it_and_recover_drops_it(tmp_path):
    deltas, last = DAMAGE["deltas decreasing"]
    path, at, healthy = write_log(tmp_path, batch(deltas, last=last, codec=GZIP, base=10))
    expected = expected_verdict(deltas, last, 10, GZIP, at)
    _, out, _ = cli("dump", "--jsonl", str(path))
    assert [json.loads(line)["offset"] for line in out.splitlines()] == healthy
    _, out, _ = cli("verify", str(path))
    assert "1 error, 0 warnings" in out  # the decoders' verdict alone, no second "offsets" one
    status, out, _ = cli(
        "recover", "--salvage", "--json", str(path.parent.parent), str(tmp_path / "out")
    )
    assert status == 1  # damage in the source: the copy is written all the same
    (partition,) = json.loads(out)["partitions"]
    (dropped,) = partition["dropped"]
    assert (dropped["start"], dropped["cause"]) == (at, f"records do not read: {expected.cause}")
    kept = tmp_path / "out" / "orders-0" / "00000000000000000000.log"
    assert [r.offset for r in kf.iter_records(str(kept))] == healthy


@pytest.mark.parametrize("codec", [SNAPPY, LZ4])
def test_the_kernels_own_decompression_gives_the_same_verdict(monkeypatch, tmp_path, codec):
    """Snappy and large LZ4 payloads are decompressed by the record decoder itself
    (FORMAT_PACKED_V2), never by the Python path: the rule holds there too."""
    deltas, last = [0, 2, 1], 2
    path, at, _ = write_log(tmp_path, batch(deltas, last=last, codec=codec, base=10, big=True))
    expected = expected_verdict(deltas, last, 10, codec, at, big=True)

    def refuse(*args):
        raise AssertionError("a v2 batch reached the Python path")

    monkeypatch.setattr(columnar, "_prepare_v2", refuse)
    with pytest.raises(kf.CorruptBatchError) as caught:
        read_table(str(path))
    assert _from_error(caught.value) == expected


def test_structure_is_judged_before_offsets(tmp_path):
    """A record whose fields do not fill its length is named before an earlier record whose
    offset breaks the rule, by both decoders (the offsets are judged once the records parsed)."""
    data = bytearray(batch([0, 0, 1], last=2, base=10))
    starts = record_starts(bytes(data[HEADER:]))
    data[HEADER + starts[2]] += 2  # the third record's length, one more (zigzag)
    struct.pack_into(">I", data, 17, crc32c(bytes(data[21:])))
    path, at, _ = write_log(tmp_path, bytes(data))
    verdicts = set(strict_verdicts(path).values())
    assert len(verdicts) == 1
    (verdict,) = verdicts
    assert verdict.position == at + HEADER + starts[2]
    assert verdict.cause.startswith("Invalid record size")


def test_a_marker_whose_offset_is_outside_its_batch_is_damage(tmp_path):
    """The marker kernel takes a transaction marker only if the rule holds; else the reference
    decoder reads it and raises, so every reader (read_committed's too) has the verdict."""
    marker = build_record_batch(
        [{"key": struct.pack(">hh", 0, 1), "value": struct.pack(">hi", 0, 5), "offset_delta": 1}],
        base_offset=10,
        last_offset_delta=0,
        producer_id=7,
        producer_epoch=0,
        is_transactional=True,
        is_control=True,
        base_timestamp=T0,
    )
    path, at, _ = write_log(tmp_path, marker)
    expected = Verdict(
        at + HEADER,
        10,
        "record offset 11 (offset delta 1) is outside its batch's offset range [10, 10]",
    )
    for reader, verdict in strict_verdicts(path).items():
        assert verdict == expected, reader
    status, out, _ = cli("verify", str(path))
    assert status == 1 and _from_lines(out, path) == [expected]


# --- what the cleaner leaves is no damage --------------------------------------------------------


def _clean_everywhere(path: Path, offsets: list[int]) -> None:
    for reader, verdict in strict_verdicts(path).items():
        assert verdict is None, reader
    assert [r.offset for r in kf.iter_records(str(path))] == offsets
    assert read_table(str(path)).column("offset").to_pylist() == offsets
    for argv in (["dump", "--jsonl"], ["dump", "--deep-iteration"], ["verify"], ["stats"]):
        status, out, err = cli(*argv, str(path))
        assert status == 0 and not _from_lines(out + err, path), (argv, out, err)


@pytest.mark.parametrize("codec", [0, GZIP, LZ4])
@pytest.mark.parametrize(
    ("deltas", "last"),
    [
        ([0, 3, 7], 9),  # gaps, and the last records removed: lastOffsetDelta kept
        ([2, 5], 5),  # the first records removed: the base offset kept
        ([4], 4),  # one record left, the last
        ([0], 6),  # one record left, the first
    ],
)
def test_compacted_batches_are_read_everywhere(tmp_path, deltas, last, codec):
    path, _, _ = write_log(tmp_path, batch(deltas, last=last, codec=codec, base=10))
    _clean_everywhere(path, [0, 1, 2, *(10 + d for d in deltas), 100, 101])


def test_an_empty_batch_the_cleaner_kept_is_read_everywhere(tmp_path):
    """All records removed, the header kept for the producer's state
    (``DefaultRecordBatch.writeEmptyHeader``: count 0, lastOffsetDelta kept)."""
    empty = build_record_batch(
        [], base_offset=10, last_offset_delta=4, producer_id=3, producer_epoch=0, base_sequence=0
    )
    path, _, _ = write_log(tmp_path, empty)
    _clean_everywhere(path, [0, 1, 2, 100, 101])


def test_control_batches_of_several_records_are_read_everywhere(tmp_path):
    """KRaft writes control batches of several records (``RecordsSnapshotWriter``: snapshot
    header, KRaft version, voters): a record count other than 1 is no damage."""
    control = build_record_batch(
        [
            {"key": struct.pack(">hh", 0, kind), "value": b"\x00\x00", "offset_delta": i}
            for i, kind in enumerate((3, 5, 6))
        ],
        base_offset=10,
        is_control=True,
        base_timestamp=T0,
    )
    path, _, _ = write_log(tmp_path, control)
    _clean_everywhere(path, [0, 1, 2, 100, 101])
    (batch_read,) = [b for b in kf.iter_batches(str(path)) if b.is_control]
    assert [r.offset for r in batch_read.records] == [10, 11, 12]


def test_a_wrappers_inner_offsets_out_of_order_are_read_and_only_warned_of(tmp_path):
    """v0/v1 wrappers are read as Kafka reads them (``DeepRecordsIterator``: inner offsets
    relative to the last one, whatever their order): no reader fails; verify warns."""
    inner = b"".join(
        build_legacy_message(offset=o, value=b"v%d" % i, magic=1, timestamp=T0)
        for i, o in enumerate([0, 2, 1, 2])
    )
    wrapper = build_legacy_message(
        offset=12, value=gzip.compress(inner), magic=1, timestamp=T0, codec=GZIP
    )
    path, at, _ = write_log(tmp_path, wrapper)
    for reader, verdict in strict_verdicts(path).items():
        assert verdict is None, reader
    assert [r.offset for r in kf.iter_records(str(path))] == [0, 1, 2, 10, 12, 11, 12, 100, 101]
    status, out, _ = cli("verify", str(path))
    assert status == 0 and "0 errors" in out
    assert f"warning: {path} @{at}: inner offset 11 does not follow offset 12" in out


# --- the rule, drawn -----------------------------------------------------------------------------


@st.composite
def offset_cases(draw) -> tuple[list[int], int, int, int]:
    """Offset deltas, lastOffsetDelta, base offset and codec: anything, or a shape the cleaner
    leaves (strictly increasing deltas within 0..lastOffsetDelta)."""
    last = draw(st.integers(-2, 12))
    if draw(st.booleans()) and last >= 0:
        kept = draw(st.lists(st.integers(0, last), min_size=1, max_size=6, unique=True))
        deltas = sorted(kept)
    else:
        deltas = draw(st.lists(st.integers(-3, 14), min_size=1, max_size=6))
    base = draw(st.sampled_from([0, 7, 1 << 40]))
    return deltas, last, base, draw(st.sampled_from([0, 0, GZIP, LZ4]))


@settings(max_examples=150, deadline=None)
@given(offset_cases())
def test_both_decoders_apply_the_rule_as_stated(case):
    deltas, last, base, codec = case
    data = batch(deltas, last=last, codec=codec, base=base)
    expected = expected_verdict(deltas, last, base, codec, 0)

    def verdict(read) -> Verdict | None:
        try:
            read(data)
        except kf.KafkaFormatError as exc:
            return _from_error(exc)
        return None

    assert verdict(lambda d: list(kf.iter_batches(d))) == expected
    assert verdict(read_table) == expected
    assert verdict(lambda d: read_table(d, binary_view=True)) == expected
    if expected is None:
        assert read_table(data).column("offset").to_pylist() == [base + d for d in deltas]
