"""``verify``, ``stats`` and ``recover`` over a log directory take its partitions at once
(issue 24, item 5; ``cpus.map_in_order``): exactly the report, the stats and the copy of a
one-thread run, in the same order, whatever the damage (``stats --strict``: the same first
damage), and the thread setting
(``threads`` scope, ``--threads``, ``KAFKA_FORMAT_THREADS``) honoured.

The log dir is ``generate``'s (every codec and magic, transactions, payload topics); damage is
made here on copies of it: bytes flipped inside a batch (a CRC error), a segment cut short in
the middle of a batch (a torn tail that is not the last segment's), an index overwritten, a
file that cannot be read (a directory where a segment should be), and a missing path among
the arguments.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from kafka_format.runtime.analysis import verify as verify_module
from kafka_format.runtime.analysis.stats import log_stats
from kafka_format.runtime.analysis.verify import verify_paths
from kafka_format.runtime.cpus import using_threads
from kafka_format.runtime.errors import KafkaFormatError
from kafka_format.runtime.read.ahead import threads_pay
from kafka_format.runtime.write.generate import generate_log_dir


@pytest.fixture(scope="module")
def generated(tmp_path_factory) -> Path:
    """Segments of about 320 KiB on average: worth threads (``ahead.threads_pay``)."""
    root = tmp_path_factory.mktemp("parallel") / "logs"
    generate_log_dir(root, seed=3, records=4000, segment_bytes=512 * 1024)
    assert threads_pay(p.stat().st_size for p in root.glob("*/*.log"))
    return root


@pytest.fixture(scope="module")
def small_segments(tmp_path_factory) -> Path:
    """generate's default 32 KiB segments: not worth threads."""
    root = tmp_path_factory.mktemp("small") / "logs"
    generate_log_dir(root, seed=3)
    assert not threads_pay(p.stat().st_size for p in root.glob("*/*.log"))
    return root


def _segments(root: Path, partition: str) -> list[Path]:
    return sorted((root / partition).glob("*.log"))


@pytest.fixture(scope="module")
def damaged(generated, tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("damaged") / "logs"
    shutil.copytree(generated, root)
    first = _segments(root, "orders-1")[0]
    data = bytearray(first.read_bytes())
    data[200] ^= 0xFF  # inside the first batch's records: its CRC fails
    first.write_bytes(bytes(data))
    middle = _segments(root, "clicks-0")
    assert len(middle) >= 2
    cut = middle[0]
    cut.write_bytes(cut.read_bytes()[:-30])  # a torn batch in a segment that is not the last
    index = _segments(root, "users-0")[0].with_suffix(".index")
    index.write_bytes(b"\x00\x00\x00\x07" * (len(index.read_bytes()) // 4))
    unreadable = _segments(root, "legacy-events-0")[-1]
    unreadable.unlink()
    unreadable.mkdir()  # a directory where a segment should be
    return root


def _json(paths: list[Path], threads: int) -> dict:
    with using_threads(threads):
        return verify_paths(paths).as_json()


@pytest.mark.parametrize("which", ["generated", "damaged"])
def test_parallel_verify_gives_the_one_thread_report(request, which):
    root = request.getfixturevalue(which)
    paths = [root, root / "orders-0", root / "no-such-partition-3"]
    sequential = _json(paths, 1)
    assert len(sequential["files"]) > 40
    for threads in (2, 5):
        assert _json(paths, threads) == sequential
    if which == "damaged":
        assert not sequential["ok"]
        named = {Path(f["file"]).parent.name for f in sequential["files"] if f["problems"]}
        assert {"orders-1", "clicks-0", "users-0", "legacy-events-0"} <= named


def test_the_thread_setting_is_honoured(generated, small_segments, monkeypatch):
    """One thread verifies in the calling thread; more use a pool of at most that many, where
    the segments are large enough to pay for it (small ones: the calling thread)."""
    seen: list[str] = []
    real = verify_module.verify_partition

    def spy(path, report, **kwargs):
        seen.append(threading.current_thread().name)
        return real(path, report, **kwargs)

    monkeypatch.setattr(verify_module, "verify_partition", spy)
    _json([generated], 1)
    assert set(seen) == {threading.current_thread().name}
    seen.clear()
    _json([generated], 3)
    pool = {name for name in seen if name.startswith("kafka-format-verify")}
    assert len(seen) > 3 and len(pool) == len(set(seen)) and 1 < len(pool) <= 3
    seen.clear()
    _json([small_segments], 3)
    assert set(seen) == {threading.current_thread().name}


def test_the_cli_prints_the_same_lines_with_any_threads(damaged):
    outputs = []
    for threads in ("1", "3"):
        env = {**os.environ, "KAFKA_FORMAT_THREADS": threads}
        proc = subprocess.run(
            [sys.executable, "-m", "kafka_format.runtime.cli", "verify", "--json", str(damaged)],
            capture_output=True,
            text=True,
            env=env,
            timeout=300,
        )
        assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
        outputs.append(json.loads(proc.stdout))
    assert outputs[0] == outputs[1]


def _stats(paths: list[Path], threads: int, **options) -> dict:
    with using_threads(threads):
        out = log_stats(paths, **options).as_json()
    out.pop("seconds"), out.pop("bytesPerSecond")
    return out


@pytest.mark.parametrize("which", ["generated", "damaged"])
def test_parallel_stats_gives_the_one_thread_stats(request, which):
    root = request.getfixturevalue(which)
    paths = [root, root / "orders-0"]
    sequential = _stats(paths, 1)
    assert len(sequential["partitions"]) > 10
    assert _stats(paths, 3) == sequential
    if which == "damaged":
        assert sequential["total"]["damage"]["batches"]


def test_strict_stats_raise_the_first_damage_in_order(damaged):
    """orders-1's CRC error comes after clicks-0's torn batch in the partitions' order."""
    errors = []
    for threads in (1, 2, 4):
        with using_threads(threads), pytest.raises(KafkaFormatError) as caught:
            log_stats([damaged], strict=True)
        errors.append(str(caught.value))
    assert errors[0] == errors[1] == errors[2]


def _tree(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()
    }


@pytest.mark.parametrize("salvage", [False, True])
def test_parallel_recover_writes_the_one_thread_copy(damaged, tmp_path, salvage):
    """recover of the damaged log dir, partitions at once: the same report (its paths aside)
    and the same files, byte for byte, as one thread writes."""
    from kafka_format.runtime.log.recover import recover

    copies, reports = [], []
    for threads in (1, 3):
        dest = tmp_path / f"copy-{threads}"
        with using_threads(threads):
            out = recover(damaged, dest, salvage=salvage).as_json()
        reports.append(json.loads(json.dumps(out).replace(str(dest), "DEST")))
        copies.append(_tree(dest))
    assert reports[0] == reports[1]
    assert copies[0] == copies[1] and len(copies[0]) > 40
