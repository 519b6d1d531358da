"""The runtime against real record sets (../shared/corpus).

Oracles: each set's .jsonl (written from the source repositories' own readers and golden
files) and MANIFEST.json; frame positions and CRCs are recomputed here with struct, zlib and
the crc32c package, never taken from the runtime.
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass

import pytest
from crc32c import crc32c

import kafka_format as kf
from kafka_format.runtime.format.jsonform import codec_name, record_json


@dataclass(frozen=True, slots=True)
class RawFrame:
    """A batch as struct sees it: enough to check what the runtime reports."""

    position: int
    size: int
    magic: int
    codec: int
    first_offset: int
    last_offset: int
    stored_crc: int
    computed_crc: int

    @property
    def crc_ok(self) -> bool:
        return self.stored_crc == self.computed_crc


def walk(data: bytes) -> tuple[list[RawFrame], int]:
    """Whole frames of a record set and the size of the partial tail after them."""
    frames = []
    pos = 0
    while len(data) - pos > 17:
        offset, length = struct.unpack_from(">qi", data, pos)
        end = pos + 12 + length
        if end > len(data):
            break
        magic = data[pos + 16]
        if magic == 2:
            (crc,) = struct.unpack_from(">I", data, pos + 17)
            attributes, last_delta = struct.unpack_from(">hi", data, pos + 21)
            computed = crc32c(data[pos + 21 : end])
            first, last = offset, offset + last_delta
        else:
            (crc,) = struct.unpack_from(">I", data, pos + 12)
            attributes = data[pos + 17]
            computed = zlib.crc32(data[pos + 16 : end])
            first = last = offset
        frames.append(RawFrame(pos, end - pos, magic, attributes & 7, first, last, crc, computed))
        pos = end
    return frames, len(data) - pos


def test_every_set_decodes_to_its_jsonl(corpus_set):
    """Strict reading of a valid set gives exactly its records; a damaged set, with CRC
    checks off, gives the records a CRC-ignoring reader lists."""
    data = corpus_set.data()
    expected = corpus_set.expected()
    report = kf.Report()
    got = [
        record_json(r)
        for r in kf.iter_records(data, verify_crc=corpus_set.crc_valid, report=report)
    ]
    assert got == expected
    assert len(got) == corpus_set.entry["records"]
    assert report.ok
    assert sum(t.size for t in report.truncated) == corpus_set.entry["trailing_partial_bytes"]


def test_path_source_agrees_with_bytes(corpus_set):
    """Read through a path (memory-mapped), the same records come out."""
    verify = corpus_set.crc_valid
    from_path = [record_json(r) for r in kf.iter_records(corpus_set.path, verify_crc=verify)]
    assert from_path == corpus_set.expected()


def test_batches_match_manifest_and_struct(corpus_set):
    """Magics, codecs, positions, sizes, offsets and CRC verdicts of every batch."""
    data = corpus_set.data()
    frames, tail = walk(data)
    assert tail == corpus_set.entry["trailing_partial_bytes"]
    report = kf.Report()
    batches = list(kf.iter_batches(data, verify_crc="report", report=report))
    assert [(b.position, b.size) for b in batches] == [(f.position, f.size) for f in frames]
    assert [b.magic for b in batches] == [f.magic for f in frames]
    assert [b.codec for b in batches] == [f.codec for f in frames]
    assert [b.last_offset for b in batches] == [f.last_offset for f in frames]
    assert [b.crc for b in batches] == [f.stored_crc for f in frames]
    assert [b.computed_crc for b in batches] == [f.computed_crc for f in frames]
    assert [b.crc_valid for b in batches] == [f.crc_ok for f in frames]
    assert sorted({b.magic for b in batches}) == sorted(corpus_set.entry["magics"])
    assert sorted({codec_name(b.codec) for b in batches}) == sorted(corpus_set.entry["codecs"])
    assert all(f.crc_ok for f in frames) == corpus_set.crc_valid
    assert report.ok


def test_header_only_pass_sees_the_same_batches(corpus_set):
    data = corpus_set.data()
    full = list(kf.iter_batches(data, verify_crc=False))
    headers = list(kf.iter_batches(data, records=False, verify_crc=False))
    assert [(b.position, b.base_offset, b.last_offset) for b in headers] == [
        (b.position, b.base_offset, b.last_offset) for b in full
    ]
    assert all(b.records is None for b in headers)


def test_valid_sets_read_the_same_in_skip_mode(valid_corpus_set):
    corpus_set = valid_corpus_set
    report = kf.Report()
    got = [record_json(r) for r in kf.iter_records(corpus_set.path, errors="skip", report=report)]
    assert got == corpus_set.expected()
    assert report.errors == []


def test_damaged_set_raises_in_strict_mode(damaged_corpus_set):
    corpus_set = damaged_corpus_set
    frames, _ = walk(corpus_set.data())
    first_bad = next(f for f in frames if not f.crc_ok)
    with pytest.raises(kf.CrcMismatchError) as info:
        list(kf.iter_records(corpus_set.path))
    exc = info.value
    assert exc.file == str(corpus_set.path)
    assert exc.position == first_bad.position
    assert exc.base_offset == struct.unpack_from(">q", corpus_set.data(), first_bad.position)[0]
    assert (exc.stored, exc.computed) == (first_bad.stored_crc, first_bad.computed_crc)
    text = str(exc)
    assert str(corpus_set.path) in text
    assert f"@{first_bad.position}" in text
    assert f"{first_bad.stored_crc:08x}" in text
    assert f"{first_bad.computed_crc:08x}" in text


def test_damaged_set_is_reported_in_skip_mode(damaged_corpus_set):
    """Every damaged batch is named (file, position, base offset); the records of the
    intact batches still come out."""
    corpus_set = damaged_corpus_set
    data = corpus_set.data()
    frames, _ = walk(data)
    bad = [f for f in frames if not f.crc_ok]
    # The damaged batches of the corpus are uncompressed: each holds exactly its offsets.
    assert all(f.codec == 0 for f in bad)
    report = kf.Report()
    got = [record_json(r) for r in kf.iter_records(corpus_set.path, errors="skip", report=report)]

    def in_bad_batch(rec):
        return any(f.first_offset <= rec["offset"] <= f.last_offset for f in bad)

    assert got == [r for r in corpus_set.expected() if not in_bad_batch(r)]
    assert len(report.errors) == len(bad)
    for exc, frame in zip(report.errors, bad, strict=True):
        assert isinstance(exc, kf.CrcMismatchError)
        assert exc.file == str(corpus_set.path)
        assert exc.position == frame.position
        assert exc.base_offset == struct.unpack_from(">q", data, frame.position)[0]
    damaged = [b for b in kf.iter_batches(data, errors="skip") if b.error is not None]
    assert [b.position for b in damaged] == [f.position for f in bad]
    assert all(b.records is None for b in damaged)


@pytest.mark.parametrize("cut", [1, 17, 18, -1])
def test_partial_batch_appended_is_a_truncated_tail(corpus_set, cut):
    """A set followed by the first ``cut`` bytes of its own first batch (-1: all but one):
    the same records, and the partial batch reported with its size, not raised."""
    data = corpus_set.data()
    frames, _ = walk(data)
    size = frames[0].size + cut if cut < 0 else cut
    damaged = data + data[:size]
    report = kf.Report()
    got = [
        record_json(r)
        for r in kf.iter_records(damaged, verify_crc=corpus_set.crc_valid, report=report)
    ]
    assert got == corpus_set.expected()
    assert [(t.position, t.size) for t in report.truncated] == [(len(data), size)]
    assert f"Found {size} invalid bytes at the end of" in str(report.truncated[0])
