"""One damaged log, one verdict: every reader names the same cause at the same byte.

The same damaged inputs go to ``iter_batches``, ``read_table`` (the numba fast path), ``dump``
and ``verify`` (the command line, in process), ``inspect`` (stepping from batch to batch as an
operator would with ``--position``), and Spark's ``kafka_log`` source under FAILFAST (in a test
of its own, sharing one SparkSession). Each reader is a function in ``READERS`` returning the
first thing it found wrong as a :class:`Verdict`; a new reader is one more entry. The batches
are kafka-python's (an independent writer); the rules the verdicts follow are
``format/framing.py``'s (Kafka's ``FileLogInputStream.nextBatch``, and a truncated tail told
from a broken length).
"""

from __future__ import annotations

import contextlib
import io
import re
import struct
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from crc32c import crc32c
from hypothesis import given, settings
from hypothesis import strategies as st
from kafka.record.default_records import DefaultRecordBatchBuilder
from kafka.record.legacy_records import LegacyRecordBatchBuilder

import kafka_format as kf
from kafka_format.runtime.cli import main
from kafka_format.runtime.cli.inspect import inspect_file
from kafka_format.runtime.read.columnar import read_table

T0 = 1_700_000_000_000


@dataclass(frozen=True)
class Verdict:
    """``error`` (damage; reading stops or skips there) or ``tail`` (a warning), where, why."""

    kind: str
    position: int
    cause: str
    base_offset: int | None = None


def _batch(base_offset: int, n: int, codec: int = 0) -> bytes:
    builder = DefaultRecordBatchBuilder(2, codec, False, -1, -1, -1, 1 << 30)
    for i in range(n):
        builder.append(i, T0 + i, f"key-{i}".encode(), f"value {base_offset + i} ".encode() * 5, [])
    built = bytearray(builder.build())
    struct.pack_into(">q", built, 0, base_offset)
    return bytes(built)


def _log() -> tuple[bytes, list[int]]:
    """Five batches (one lz4), consecutive offsets; and where each starts."""
    batches = [_batch(0, 4), _batch(4, 3), _batch(7, 5, codec=3), _batch(12, 2), _batch(14, 4)]
    starts = [sum(len(b) for b in batches[:i]) for i in range(len(batches))]
    return b"".join(batches), starts


def _flip(data: bytes, at: int, mask: int = 0x10) -> bytes:
    out = bytearray(data)
    out[at] ^= mask
    return bytes(out)


def _set_length(data: bytes, at: int, length: int) -> bytes:
    out = bytearray(data)
    struct.pack_into(">i", out, at + 8, length)
    return bytes(out)


def _garbage(size: int, magic: int = 55) -> bytes:
    """Bytes no writer made, with a lying length (past any end) and a magic byte of none."""
    out = bytearray((i * 37 + 11) % 251 for i in range(size))
    struct.pack_into(">i", out, 8, 0x3FFFFFF0)
    out[16] = magic
    return bytes(out)


# Bytes that are no batch (a length below 14, a magic of none, a length nothing proves) carry
# no base offset: one read from zeros or garbage would be read as a fact.
def _cases() -> dict[str, tuple[bytes, Verdict]]:
    log, starts = _log()
    s = starts
    cases: dict[str, tuple[bytes, Verdict]] = {}
    # CRC-32C covers attributes..end: a flipped record byte is the CRC's verdict, before any
    # record decoder has a say (the issue: verify named a record error, dump the CRC).
    flipped = _flip(log, s[1] + 70)
    stored = struct.unpack_from(">I", flipped, s[1] + 17)[0]
    computed = crc32c(flipped[s[1] + 21 : s[2]])
    crc_cause = f"stored crc32c 0x{stored:08x}, computed 0x{computed:08x}"
    cases["bit flip in records"] = (flipped, Verdict("error", s[1], crc_cause, 4))
    # ... and so is a flipped producer id (header bytes 43..51, inside the CRC's range).
    header = _flip(log, s[3] + 45)
    stored = struct.unpack_from(">I", header, s[3] + 17)[0]
    computed = crc32c(header[s[3] + 21 : s[4]])
    cases["bit flip in a header field"] = (
        header,
        Verdict("error", s[3], f"stored crc32c 0x{stored:08x}, computed 0x{computed:08x}", 12),
    )
    # magic 2 ^ 4 = 6: no batch's; the length cannot be trusted either.
    cases["bit flip in the magic"] = (
        _flip(log, s[2] + 16, 0x04),
        Verdict("error", s[2], "invalid magic 6: only 0, 1 and 2 exist"),
    )
    # A length past the end with whole batches after it: broken, not a truncated tail.
    size = len(log) - s[1]
    # The CRC does not cover the length field: the batch's records and CRC prove its end.
    cases["lying length (past the end)"] = (
        _set_length(log, s[1], 1 << 20),
        Verdict(
            "error",
            s[1],
            f"batch length {1 << 20} is broken: the batch's records and CRC end at position "
            f"{s[2]} (length {s[2] - s[1] - 12})",
            4,
        ),
    )
    # ... and where the batch's bytes are damaged too, nothing proves it: the next batch does.
    cases["lying length over a damaged batch"] = (
        _flip(_set_length(log, s[1], 1 << 20), s[1] + 70),
        Verdict(
            "error",
            s[1],
            f"batch length {1 << 20} runs past the end of the file ({size} bytes left), yet a "
            f"whole batch starts at position {s[2]}: the length is broken",
        ),
    )
    # ... also below the minimum: the batch is whole, only its length lied
    cases["lying length (below the minimum)"] = (
        _set_length(log, s[3], 9),
        Verdict(
            "error",
            s[3],
            f"batch length 9 is broken: the batch's records and CRC end at position {s[4]} "
            f"(length {s[4] - s[3] - 12})",
            12,
        ),
    )
    # ... and over damaged bytes, nothing proves it a batch: no base offset
    cases["lying length (below the minimum) over a damaged batch"] = (
        _flip(_set_length(log, s[3], 9), s[3] + 70),
        Verdict("error", s[3], "batch length 9 is less than the minimum record overhead (14)"),
    )
    cut = s[4] + (len(log) - s[4]) // 2
    cases["truncation at the end"] = (log[:cut], Verdict("tail", s[4], f"{cut - s[4]} bytes"))
    junk = _garbage(40, magic=85)
    cases["garbage between batches"] = (
        log[: s[2]] + junk + log[s[2] :],
        Verdict(
            "error",
            s[2],
            "invalid magic 85: only 0, 1 and 2 exist",
        ),
    )
    pure = _garbage(5000)
    cases["a pure-garbage file"] = (
        pure,
        Verdict("error", 0, "invalid magic 55: only 0, 1 and 2 exist"),
    )
    return cases


CASES = _cases()

# --- the readers --------------------------------------------------------------------------------

_LINE = re.compile(
    r"^(?:kafka-format: )?(?P<kind>error|warning): (?P<file>.+?) @(?P<pos>\d+)"
    r"(?: \(base offset (?P<base>-?\d+)\))?: (?P<cause>.*)$"
)
_TAIL = re.compile(r"Found (\d+) invalid bytes at the end")


def _from_error(exc: kf.KafkaFormatError) -> Verdict:
    return Verdict("error", exc.position, exc.reason, exc.base_offset)


def _from_tail(report: kf.Report) -> Verdict | None:
    if not report.truncated:
        return None
    tail = report.truncated[0]
    return Verdict("tail", tail.position, f"{tail.size} bytes")


def _from_line(line: str, path: Path) -> Verdict:
    found = _LINE.match(line)
    assert found, line
    assert found["file"] == str(path), line
    base = found["base"]
    return Verdict("error", int(found["pos"]), found["cause"], None if base is None else int(base))


def read_iter_batches(path: Path) -> Verdict | None:
    report = kf.Report()
    try:
        for _ in kf.iter_batches(str(path), report=report):
            pass
    except kf.KafkaFormatError as exc:
        return _from_error(exc)
    return _from_tail(report)


def read_arrow(path: Path) -> Verdict | None:
    report = kf.Report()
    try:
        read_table(str(path), report=report)
    except kf.KafkaFormatError as exc:
        return _from_error(exc)
    return _from_tail(report)


def _cli(*argv: str) -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        main(list(argv))
    assert "Traceback" not in out.getvalue() + err.getvalue()
    return out.getvalue(), err.getvalue()


def read_dump(path: Path) -> Verdict | None:
    out, err = _cli("dump", "--deep-iteration", str(path))
    errors = [line for line in err.splitlines() if line.startswith("error: ")]
    if errors:
        return _from_line(errors[0], path)
    tail = _TAIL.search(out)
    if tail:  # dump words a tail as kafka-dump-log: its size, the end of the file
        size = int(tail[1])
        return Verdict("tail", path.stat().st_size - size, f"{size} bytes")
    return None


def read_verify(path: Path) -> Verdict | None:
    out, _ = _cli("verify", str(path))
    lines = out.splitlines()
    errors = [line for line in lines if line.startswith("error: ")]
    if errors:
        return _from_line(errors[0], path)
    for line in lines:
        found = _LINE.match(line)
        if found and "invalid bytes at the end" in found["cause"]:
            size = re.search(r"found (\d+) invalid bytes", found["cause"])[1]
            return Verdict("tail", int(found["pos"]), f"{size} bytes")
    return None


def read_inspect(path: Path) -> Verdict | None:
    """``inspect --position P`` batch after batch, from the start, until one is wrong."""
    position, size = 0, path.stat().st_size
    while position < size:
        try:
            view = inspect_file(str(path), position=position)
        except kf.KafkaFormatError as exc:
            left = re.match(r"no complete batch at this position: (\d+) bytes left", exc.reason)
            if left:
                return Verdict("tail", exc.position, f"{left[1]} bytes")
            return _from_error(exc)
        if view.problems:
            return _from_line(f"error: {view.problems[0]}", path)
        position += view.size
    return None


READERS: dict[str, Callable[[Path], Verdict | None]] = {
    "iter_batches": read_iter_batches,
    "read_table": read_arrow,
    "dump": read_dump,
    "verify": read_verify,
    "inspect": read_inspect,
}


@pytest.mark.parametrize("case", list(CASES))
def test_every_reader_gives_the_same_verdict(tmp_path, case):
    data, expected = CASES[case]
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(data)
    verdicts = {name: reader(path) for name, reader in READERS.items()}
    for name, verdict in verdicts.items():
        if expected.kind == "tail":  # a tail carries no base offset
            verdict = verdict and Verdict(verdict.kind, verdict.position, verdict.cause)
        assert verdict == expected, f"{name}: {verdict}"


def test_the_undamaged_log_has_no_verdict(tmp_path):
    log, _ = _log()
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(log)
    assert {name: reader(path) for name, reader in READERS.items()} == dict.fromkeys(READERS)


def test_damage_carries_where_reading_could_resume(tmp_path):
    """Framing damage names the next batch whose CRC holds, for a salvaging reader."""
    log, starts = _log()
    junk = _garbage(40, magic=85)
    path = tmp_path / "garbage.log"
    path.write_bytes(log[: starts[2]] + junk + log[starts[2] :])
    with pytest.raises(kf.FramingError) as info:
        list(kf.iter_batches(str(path)))
    assert info.value.position == starts[2]
    assert info.value.resume == starts[2] + len(junk)
    # From there on the rest of the log reads whole.
    rest = list(kf.iter_batches(path.read_bytes()[info.value.resume :]))
    assert [b.base_offset for b in rest] == [7, 12, 14]


# --- record damage under a CRC that holds ----------------------------------------------------


def _recount(log: bytes, start: int, end: int, *, count: int | None = None, at=None) -> bytes:
    """The batch at ``start:end`` with its record count or one byte rewritten and its CRC
    computed again (a writer's bug, not the disk's): the record decoders have the verdict."""
    out = bytearray(log)
    if count is not None:
        struct.pack_into(">i", out, start + 57, count)
    if at is not None:
        out[at[0]] = at[1]
    struct.pack_into(">I", out, start + 17, crc32c(bytes(out[start + 21 : end])))
    return bytes(out)


def _record_cases() -> dict[str, tuple[bytes, Verdict]]:
    """Damage inside records, in Kafka's words (DefaultRecord.readFrom, DefaultRecordBatch's
    RecordIterator), named at the record: in the file for an uncompressed batch, at the batch
    and in the decompressed records for a compressed one (format/messages.py)."""
    log, s = _log()
    sizes = [len(_batch(4, 3))]  # the second batch: records of 52, 52, 53 bytes
    cases = {
        "a record count above the records": (
            _recount(log, s[1], s[2], count=4),
            Verdict(
                "error",
                s[1],  # the count lies (a header field): at the batch
                "Incorrect declared batch size, premature EOF reached: 4 records declared, "
                "the records end after 3",
                4,
            ),
        ),
        "a record count below the records": (
            _recount(log, s[1], s[2], count=2),
            Verdict(
                "error",
                s[2] - 52,
                "Incorrect declared batch size, records still remaining in file: 52 bytes "
                "after the last of 2 records",
                4,
            ),
        ),
        "a record count above the records, compressed": (
            _recount(log, s[2], s[3], count=6),
            Verdict(
                "error",
                s[2],
                "Incorrect declared batch size, premature EOF reached: 6 records declared, "
                "the records end after 5",
                7,
            ),
        ),
        # 0x7E: zigzag 63, where the first record of the fourth batch holds 56 bytes.
        "a record length longer than its fields": (
            _recount(log, s[3], s[4], at=(s[3] + 61, 0x7E)),
            Verdict(
                "error",
                s[3] + 61,
                "Invalid record size: expected to read 63 bytes in record payload, but instead "
                "read 56",
                12,
            ),
        ),
        # The second record's length (zigzag 0x7F = -64) ...
        "a negative record length": (
            _recount(log, s[3], s[4], at=(s[3] + 61 + 57, 0x7F)),
            Verdict(
                "error", s[3] + 61 + 57, "Invalid record size: record length -64 is negative", 12
            ),
        ),
        # ... and its header count, the batch's last byte (zigzag 3 = -2).
        "a negative header count": (
            _recount(log, s[3], s[4], at=(s[4] - 1, 0x03)),
            Verdict("error", s[3] + 61 + 57, "Found invalid number of record headers -2", 12),
        ),
    }
    assert sizes == [s[2] - s[1]]
    return cases


RECORD_CASES = _record_cases()
#: What the generated parsers say in their own terms; no verdict may contain it.
_INTERNALS = re.compile(r"/seq/|/types/|validation failed|at pos \d|requested \d+ bytes|object at")


@pytest.mark.parametrize("case", list(RECORD_CASES))
def test_record_damage_gets_one_verdict_in_kafkas_words(tmp_path, case):
    data, expected = RECORD_CASES[case]
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(data)
    for name, reader in READERS.items():
        verdict = reader(path)
        assert verdict == expected, f"{name}: {verdict}"
        assert not _INTERNALS.search(verdict.cause), f"{name}: {verdict}"


@st.composite
def _rewritten_records(draw) -> bytes:
    """A batch (or a v0/v1 message) whose record bytes were overwritten and whose CRC was
    computed again (a writer's bug, not the disk's): the record decoders have the verdict."""
    magic = draw(st.sampled_from([2, 2, 1, 0]))
    if magic == 2:
        # Uncompressed, the records themselves are rewritten; compressed (gzip, lz4), only
        # what the decoders see of them can be: the header's record count.
        codec = draw(st.sampled_from([0, 0, 1, 3]))
        data = bytearray(_batch(0, draw(st.integers(1, 5)), codec))
        if codec:
            struct.pack_into(">i", data, 57, draw(st.integers(-2, 12)))
            struct.pack_into(">I", data, 17, crc32c(bytes(data[21:])))
            return bytes(data)
        start = 61
    else:
        builder = LegacyRecordBatchBuilder(magic, 0, 1 << 30)
        builder.append(0, T0 if magic else None, b"key", b"value 0")
        data, start = bytearray(builder.build()), 17
    for _ in range(draw(st.integers(1, 3))):
        data[draw(st.integers(start, len(data) - 1))] = draw(st.integers(0, 255))
    if magic == 2:
        struct.pack_into(">I", data, 17, crc32c(bytes(data[21:])))
    else:
        struct.pack_into(">I", data, 12, zlib.crc32(bytes(data[16:])))
    return bytes(data)


@settings(max_examples=300, deadline=None)
@given(_rewritten_records())
def test_record_decoders_name_the_same_cause(data):
    """The Kaitai parsers (iter_batches, dump) and the kernel (read_table, verify) word what
    they find in records alike, at the same position."""

    def verdict(read) -> Verdict | None:
        try:
            read(data)
        except kf.KafkaFormatError as exc:
            return Verdict(type(exc).__name__, exc.position, exc.reason, exc.base_offset)
        return None

    reference = verdict(lambda d: list(kf.iter_batches(d)))
    fast = verdict(read_table)
    if fast is not None and "microsecond" in fast.cause:
        return  # by design: Arrow's timestamp column cannot hold it, the reference's ints can
    assert fast == reference
    assert reference is None or not _INTERNALS.search(reference.cause), reference


# --- Spark's source -------------------------------------------------------------------------

_SPARK_LINE = re.compile(
    r"(?P<file>/\S+\.log) @(?P<pos>\d+)(?: \(base offset (?P<base>-?\d+)\))?: (?P<cause>[^\n]*)"
)


def read_spark(spark, path: Path) -> tuple[Verdict | None, int]:
    """FAILFAST's failure as a verdict (the first one named), or None and the rows read."""
    from kafka_format.spark_udfs import register

    register(spark)
    df = spark.read.format("kafka_log").option("mode", "FAILFAST").load(str(path))
    try:
        rows = df.count()
    except Exception as exc:  # Spark wraps the task's KafkaFormatError in its own exception
        found = _SPARK_LINE.search(str(exc))
        assert found, str(exc)[:2000]
        assert found["file"] == str(path)
        base = found["base"]
        cause = found["cause"].rstrip()
        return Verdict("error", int(found["pos"]), cause, None if base is None else int(base)), -1
    return None, rows


def test_spark_gives_the_same_verdict(spark, tmp_path):
    """The kafka_log source under FAILFAST fails with the same cause at the same byte; a
    truncated tail is no failure there (Kafka stops reading at it, and so do the tasks), and
    the rows read are those of the whole batches before it."""
    for n, (case, (data, expected)) in enumerate(CASES.items()):
        directory = tmp_path / f"orders-{n}"
        directory.mkdir()
        path = directory / "00000000000000000000.log"
        path.write_bytes(data)
        verdict, rows = read_spark(spark, path)
        if expected.kind == "tail":
            whole = data[: expected.position]
            assert verdict is None, f"{case}: {verdict}"
            assert rows == sum(1 for _ in kf.iter_records(whole)), case
        else:
            assert verdict == expected, f"{case}: {verdict}"
