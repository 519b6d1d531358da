"""``verify``'s index checks on a segment damaged in the middle.

4 KiB of a segment are zeroed at byte 8192. ``verify`` reads on past the damage (as
``errors="salvage"`` does) and finds the batches after it; a read from an index entry's
position gets those batches too. So an entry is judged against what lies at its position:
those pointing at intact batches after the damage hold (``find`` uses them), only those whose
batch the zeros destroyed do not, on the ``.index`` and the ``.timeindex`` alike.
"""

from __future__ import annotations

import shutil
import struct
from pathlib import Path

import pytest

import kafka_format as kf
from kafka_format.runtime.analysis.verify import verify_paths
from kafka_format.runtime.errors import KafkaFormatError
from kafka_format.runtime.log.partition import Partition
from kafka_format.runtime.write.generate import generate_log_dir

ZEROED = range(8192, 8192 + 4096)
SEGMENT = "00000000000000000000"


@pytest.fixture(scope="module")
def generated(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("generated")
    generate_log_dir(root, seed=3, topics=["orders"], partitions=1, records=2000)
    return root / "orders-0"


@pytest.fixture
def damaged(generated, tmp_path):
    """A copy with the zeros in, and the segment's batches as they were: (position, end,
    last offset)."""
    directory = tmp_path / "orders-0"
    shutil.copytree(generated, directory)
    log = directory / f"{SEGMENT}.log"
    batches = [(b.position, b.position + b.size, b.last_offset) for b in kf.iter_batches(log)]
    assert batches[-1][1] > ZEROED.stop + 4096  # intact batches follow the damage
    data = bytearray(log.read_bytes())
    data[ZEROED.start : ZEROED.stop] = bytes(len(ZEROED))
    log.write_bytes(bytes(data))
    return directory, batches


def _entries(path: Path, fmt: str) -> list[tuple[int, int]]:
    data = path.read_bytes()
    size = struct.calcsize(fmt)
    return [struct.unpack_from(fmt, data, i) for i in range(0, len(data), size)]


def _hit(start: int, end: int) -> bool:
    return start < ZEROED.stop and end > ZEROED.start


def test_entries_after_mid_file_damage(damaged):
    directory, batches = damaged
    by_position = {p: (p, e) for p, e, _ in batches}
    index = _entries(directory / f"{SEGMENT}.index", ">ii")
    times = _entries(directory / f"{SEGMENT}.timeindex", ">qi")
    lost_index = {n for n, (_, p) in enumerate(index) if _hit(*by_position[p])}
    holder = {o: next(b for b in batches if b[2] >= o) for _, o in times}
    lost_times = {n for n, (_, o) in enumerate(times) if _hit(*holder[o][:2])}
    # The damage destroys the batches of some entries, and intact ones lie after it.
    assert lost_index and max(lost_index) < len(index) - 2
    assert any(p >= ZEROED.stop for _, p in index)

    report = verify_paths([directory])
    flagged = {
        kind: {p.position // size for p in report.problems if p.file.endswith(f".{kind}")}
        for kind, size in (("index", 8), ("timeindex", 12))
    }
    assert flagged == {"index": lost_index, "timeindex": lost_times}
    assert not any("last readable batch" in p.message for p in report.problems)
    # The log's own errors are the damage, at the batches the zeros hit.
    log_errors = {p.position for p in report.errors if p.file.endswith(".log")}
    assert log_errors
    for at in log_errors:
        assert any(s <= at < e and _hit(s, e) for s, e, _ in batches), at

    # find agrees entry by entry: it uses the intact entries after the damage.
    partition = Partition.open(directory)
    for n, (offset, position) in enumerate(index):
        if position < ZEROED.stop and n not in lost_index:
            continue  # before the damage: nothing new to say
        if n in lost_index:
            # Set aside: the look-up reads from the segment's start and meets the damage
            # before the entry's position (through the entry it would fail at the entry).
            with pytest.raises(KafkaFormatError) as caught:
                partition.find_offset(offset)
            assert caught.value.position < position
            continue
        found = partition.find_offset(offset)
        assert found.used_index and found.index_note is None, n
        assert found.position >= position and found.record.offset >= offset


def test_verify_words_a_damaged_entry_by_what_lies_at_its_position(damaged):
    directory, _ = damaged
    index = _entries(directory / f"{SEGMENT}.index", ">ii")
    report = verify_paths([directory])
    by_entry = {p.position // 8: p for p in report.problems if p.file.endswith(".index")}
    for n, problem in by_entry.items():
        offset, position = index[n]
        assert problem.severity == "error"
        assert problem.message.startswith(f"entry {n} (offset {offset}, position {position}) ")
        assert "where no whole batch starts" in problem.message or "CRC" in problem.message
