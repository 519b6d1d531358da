"""The default number of decoding threads (``runtime/cpus.py``) and who follows it.

Oracles: cgroup quota files written here as the kernel writes them (v2 ``cpu.max``, v1
``cpu.cfs_quota_us`` / ``cpu.cfs_period_us``), an affinity mask set here, and the thread pool a
real read starts (its size, and the threads named ``kafka-format_N`` alive while it reads).
"""

from __future__ import annotations

import contextlib
import io
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from kafka_format.runtime import cpus
from kafka_format.runtime.cli.app import main
from kafka_format.runtime.read import ahead, columnar
from kafka_format.runtime.read.jsonlines import JsonLines
from kafka_format.schemas.record_batch import build_record_batch

ENV = cpus.ENV_VAR
CLEAR = cpus.available_cpus.cache_clear  # kept: some tests put a plain function in its place


@pytest.fixture(autouse=True)
def _fresh(monkeypatch):
    """No inherited KAFKA_FORMAT_THREADS, and no cached count from another test's mask."""
    monkeypatch.delenv(ENV, raising=False)
    CLEAR()
    yield
    CLEAR()


def _cgroup_v2(root: Path, text: str) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "cpu.max").write_text(text)
    return root


def _cgroup_v1(root: Path, quota: str | None, period: str | None) -> Path:
    folder = root / "cpu"
    folder.mkdir(parents=True, exist_ok=True)
    if quota is not None:
        (folder / "cpu.cfs_quota_us").write_text(quota)
    if period is not None:
        (folder / "cpu.cfs_period_us").write_text(period)
    return root


def _mask(monkeypatch, n: int) -> None:
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(n)), raising=False)


# --- the cgroup quota ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "limit"),
    [
        ("200000 100000\n", 2),
        ("150000 100000\n", 2),  # 1.5 CPUs: rounded up
        ("50000 100000\n", 1),  # half a CPU: still one thread
        ("400000 50000", 8),
        ("max 100000\n", None),
        ("", None),
        ("garbage", None),
        ("100000", None),
        ("-5 100000", None),
        ("200000 0", None),
        ("12 34 56", None),
    ],
)
def test_cgroup_v2_cpu_max(tmp_path, text, limit):
    assert cpus.cgroup_cpu_limit(_cgroup_v2(tmp_path, text)) == limit


@pytest.mark.parametrize(
    ("quota", "period", "limit"),
    [
        ("300000\n", "100000\n", 3),
        ("250000", "100000", 3),
        ("-1\n", "100000\n", None),
        ("abc", "100000", None),
        ("300000", "0", None),
        ("300000", None, None),
        (None, "100000", None),
    ],
)
def test_cgroup_v1_cfs_quota(tmp_path, quota, period, limit):
    assert cpus.cgroup_cpu_limit(_cgroup_v1(tmp_path, quota, period)) == limit


def test_no_cgroup_files_is_no_limit(tmp_path):
    assert cpus.cgroup_cpu_limit(tmp_path) is None
    assert cpus.cgroup_cpu_limit(tmp_path / "not-there") is None


def test_cgroup_v2_wins_over_v1(tmp_path):
    _cgroup_v1(tmp_path, "100000", "100000")
    assert cpus.cgroup_cpu_limit(_cgroup_v2(tmp_path, "max 100000")) is None
    assert cpus.cgroup_cpu_limit(_cgroup_v2(tmp_path, "300000 100000")) == 3


def test_unreadable_cgroup_file_is_no_limit(tmp_path):
    (tmp_path / "cpu.max").mkdir()  # a directory: reading it fails
    assert cpus.cgroup_cpu_limit(tmp_path) is None
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "cpu.max").write_bytes(b"\xff\xfe 100000")
    assert cpus.cgroup_cpu_limit(tmp_path / "other") is None


# --- the CPUs this process may use ----------------------------------------------------------------


def test_affinity_mask_counts(tmp_path, monkeypatch):
    _mask(monkeypatch, 3)
    monkeypatch.setattr(os, "cpu_count", lambda: 64)
    assert cpus.available_cpus(tmp_path) == 3


def test_quota_below_the_mask(tmp_path, monkeypatch):
    _mask(monkeypatch, 8)
    assert cpus.available_cpus(_cgroup_v2(tmp_path / "v2", "200000 100000")) == 2
    assert cpus.available_cpus(_cgroup_v1(tmp_path / "v1", "150000", "100000")) == 2


def test_quota_above_the_mask(tmp_path, monkeypatch):
    _mask(monkeypatch, 2)
    assert cpus.available_cpus(_cgroup_v2(tmp_path, "1600000 100000")) == 2


def test_no_affinity_call_falls_back_to_cpu_count(tmp_path, monkeypatch):
    monkeypatch.delattr(os, "sched_getaffinity", raising=False)
    monkeypatch.setattr(os, "cpu_count", lambda: 6)
    assert cpus.available_cpus(tmp_path) == 6
    cpus.available_cpus.cache_clear()
    monkeypatch.setattr(os, "cpu_count", lambda: None)
    assert cpus.available_cpus(tmp_path) == 1


def test_cached_until_cleared(tmp_path, monkeypatch):
    _mask(monkeypatch, 4)
    assert cpus.available_cpus(tmp_path) == 4
    _mask(monkeypatch, 1)
    assert cpus.available_cpus(tmp_path) == 4
    cpus.available_cpus.cache_clear()
    assert cpus.available_cpus(tmp_path) == 1


def test_this_machine():
    n = cpus.available_cpus()
    assert 1 <= n <= (os.cpu_count() or 1)


# --- the default, KAFKA_FORMAT_THREADS and a command's scope -------------------------------------


def test_default_is_the_available_cpus(monkeypatch):
    monkeypatch.setattr(cpus, "available_cpus", lambda: 5)
    assert cpus.default_threads() == 5
    monkeypatch.setenv(ENV, "  ")  # set but empty: as unset
    assert cpus.default_threads() == 5


def test_environment_variable_is_read_at_each_call(monkeypatch):
    monkeypatch.setattr(cpus, "available_cpus", lambda: 5)
    monkeypatch.setenv(ENV, "3")
    assert cpus.default_threads() == 3
    monkeypatch.setenv(ENV, " 12\n")
    assert cpus.default_threads() == 12
    monkeypatch.delenv(ENV)
    assert cpus.default_threads() == 5


@pytest.mark.parametrize("value", ["0", "-1", "two", "1.5", "3x", "+2", "٣"])
def test_a_bad_environment_variable_is_one_line(monkeypatch, value):
    monkeypatch.setenv(ENV, value)
    with pytest.raises(ValueError) as info:
        cpus.default_threads()
    message = str(info.value)
    assert ENV in message and repr(value) in message and "\n" not in message


def test_using_threads_scopes_the_default(monkeypatch):
    monkeypatch.setenv(ENV, "3")
    with cpus.using_threads(7):
        assert cpus.default_threads() == 7
        with cpus.using_threads(None):
            assert cpus.default_threads() == 7
        with cpus.using_threads(1):
            assert cpus.default_threads() == 1
        assert cpus.default_threads() == 7
        seen = []
        other = threading.Thread(target=lambda: seen.append(cpus.default_threads()))
        other.start()
        other.join()
        assert seen == [3]  # another thread keeps its own default
    assert cpus.default_threads() == 3
    with pytest.raises(ValueError, match="at least 1"), cpus.using_threads(0):
        pass


# --- the readers follow it ------------------------------------------------------------------------


def _log(tmp_path: Path) -> Path:
    """A partition of 40 batches of 50 records (2000 in all), offsets 0 to 1999."""
    path = tmp_path / "t-0" / "00000000000000000000.log"
    path.parent.mkdir()
    records = [{"value": b"v" * 100, "offset_delta": i} for i in range(50)]
    batches = (build_record_batch(records, base_offset=50 * i) for i in range(40))
    path.write_bytes(b"".join(batches))
    return path


@pytest.fixture
def pools(monkeypatch) -> list[int]:
    """The size of each pool a read starts; 2000-byte chunks: one batch a chunk, 40 chunks."""
    sizes: list[int] = []

    class Recording(ThreadPoolExecutor):
        def __init__(self, max_workers: int, **kwargs) -> None:
            sizes.append(max_workers)
            super().__init__(max_workers, **kwargs)

    monkeypatch.setattr(ahead, "ThreadPoolExecutor", Recording)
    monkeypatch.setattr(columnar, "CHUNK_BYTES", 2000)
    return sizes


def _read(path: Path, **options) -> tuple[int, int]:
    """(rows, most reader threads seen alive while the batches came)."""
    before = set(threading.enumerate())  # another test's reader may not be collected yet
    rows = most = 0
    for batch in columnar.iter_arrow_batches(str(path), **options):
        rows += batch.num_rows
        alive = [
            t
            for t in threading.enumerate()
            if t.name.startswith("kafka-format_") and t not in before
        ]
        most = max(most, len(alive))
    return rows, most


def test_a_read_starts_as_many_threads_as_the_default(tmp_path, monkeypatch, pools):
    path = _log(tmp_path)
    monkeypatch.setattr(cpus, "available_cpus", lambda: 3)
    rows, most = _read(path)
    assert rows == 2000 and pools == [3] and 1 <= most <= 3


def test_a_read_follows_the_environment_variable(tmp_path, monkeypatch, pools):
    path = _log(tmp_path)
    monkeypatch.setattr(cpus, "available_cpus", lambda: 3)
    monkeypatch.setenv(ENV, "1")
    assert _read(path) == (2000, 0) and pools == []  # one thread: the caller's, no pool
    monkeypatch.setenv(ENV, "4")
    rows, most = _read(path)
    assert rows == 2000 and pools == [4] and 1 <= most <= 4


def test_threads_given_win(tmp_path, monkeypatch, pools):
    path = _log(tmp_path)
    monkeypatch.setenv(ENV, "bad")  # not even read
    rows, most = _read(path, threads=2)
    assert rows == 2000 and pools == [2] and 1 <= most <= 2
    assert _read(path, threads=1) == (2000, 0) and pools == [2]


def test_json_lines_writer_follows_the_default(monkeypatch):
    monkeypatch.setenv(ENV, "3")
    with JsonLines() as lines:
        assert lines.threads == 3
    with JsonLines(threads=1) as lines:
        assert lines.threads == 1


# --- --threads on the command line ----------------------------------------------------------------


def _cli(*argv: object) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            status = main([str(a) for a in argv])
        except SystemExit as exc:  # argparse: 2 for bad arguments
            status = exc.code
    assert "Traceback" not in err.getvalue()
    return status, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("command", ["dump", "verify", "stats"])
@pytest.mark.parametrize("value", ["0", "-3", "many"])
def test_threads_below_one_is_a_usage_error(tmp_path, command, value):
    status, out, err = _cli(command, "--threads", value, tmp_path)
    error = [line for line in err.splitlines() if "error" in line]
    assert status == 2 and out == "" and len(error) == 1 and "--threads" in error[0]


def test_dump_threads_reaches_the_reader(tmp_path, pools):
    path = _log(tmp_path)
    status, out, _ = _cli("dump", "-q", "--jsonl", "--threads", 2, path)
    assert status == 0 and len(out.splitlines()) == 2000 and pools == [2]
    status, out, _ = _cli("dump", "-q", "--jsonl", "--threads", 1, path)
    assert status == 0 and len(out.splitlines()) == 2000 and pools == [2]  # no pool for one


@pytest.mark.parametrize("command", ["verify", "stats"])
def test_verify_and_stats_threads_reach_the_reader(tmp_path, pools, command):
    path = _log(tmp_path)
    status, _, _ = _cli(command, "-q", "--threads", 3, path)
    assert status == 0 and 3 in pools


def test_a_bad_environment_variable_is_one_line_and_status_2(tmp_path, monkeypatch):
    path = _log(tmp_path)
    monkeypatch.setenv(ENV, "zero")
    status, out, err = _cli("dump", "-q", "--jsonl", path)
    assert status == 2 and out == ""
    assert err.strip().count("\n") == 0 and ENV in err and "'zero'" in err
    status, out, _ = _cli("dump", "-q", "--jsonl", "--threads", 1, path)  # the flag wins
    assert status == 0 and len(out.splitlines()) == 2000
    # Commands without --threads read with the default too: the same line, no traceback.
    status, out, err = _cli("producers", path)
    assert status == 2 and out == "" and err.strip().count("\n") == 0 and ENV in err


# --- map_in_order: a command's partitions at once ---------------------------------------------


def test_map_in_order_keeps_the_order_and_the_setting():
    """Results in the items' order, however the calls finish; one call per item; at most the
    default threads at once, each call seeing one thread; one thread: the calling thread."""
    import time

    seen: list[tuple[str, int]] = []

    def slow_first(item: int) -> int:
        time.sleep(0.05 if item == 0 else 0.0)  # the first finishes last
        seen.append((threading.current_thread().name, cpus.default_threads()))
        return item * item

    with cpus.using_threads(3):
        assert cpus.map_in_order(slow_first, range(7), name="kf-test") == [i * i for i in range(7)]
    names = {name for name, _ in seen}
    assert len(seen) == 7 and all(threads == 1 for _, threads in seen)
    assert 1 < len(names) <= 3 and all(name.startswith("kf-test") for name in names)
    seen.clear()
    with cpus.using_threads(1):
        cpus.map_in_order(slow_first, range(3), name="kf-test")
    assert {name for name, _ in seen} == {threading.current_thread().name}


def test_map_in_order_raises_the_first_failure_in_order():
    """Item 1 fails late, item 4 at once: the loop would have raised item 1's."""
    import time

    def fail(item: int) -> int:
        if item == 1:
            time.sleep(0.05)
            raise ValueError("one")
        if item == 4:
            raise ValueError("four")
        return item

    for threads in (1, 4):
        with cpus.using_threads(threads), pytest.raises(ValueError, match="one"):
            cpus.map_in_order(fail, range(6), name="kf-test")
