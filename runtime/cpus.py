"""How many threads a read decodes with when its caller does not say: the CPUs this process
may use.

``os.cpu_count()`` counts the machine's cores, not the process's: a container given two CPUs
on a 64-core host, or a process pinned to a few cores (``taskset``), would start a thread a
core it cannot run on, and threads beyond the CPU quota only wait on each other. So the count
is the affinity mask's, cut to the cgroup's CPU quota (v2 ``cpu.max``, v1 ``cpu.cfs_quota_us``
over ``cpu.cfs_period_us``). ``KAFKA_FORMAT_THREADS`` overrides it; a command's ``--threads``
(:func:`using_threads`) overrides both; a caller's ``threads=`` overrides everything.
"""

from __future__ import annotations

import functools
import math
import os
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")
R = TypeVar("R")

__all__ = [
    "CGROUP_ROOT",
    "ENV_VAR",
    "available_cpus",
    "default_threads",
    "map_in_order",
    "using_threads",
]

#: Where the cgroup file system is mounted (inside a container: the container's own cgroup).
CGROUP_ROOT = Path("/sys/fs/cgroup")
#: The environment variable that sets the default number of threads.
ENV_VAR = "KAFKA_FORMAT_THREADS"

# A context variable, not a global: a scope set by one caller (a command's --threads) is not
# seen by other threads or tasks of the same process.
_scoped: ContextVar[int | None] = ContextVar("kafka_format_threads", default=None)


@functools.cache
def available_cpus(cgroup_root: Path = CGROUP_ROOT) -> int:
    """The CPUs this process may use: its affinity mask, cut to the cgroup's CPU quota
    (rounded up), at least 1. Cached (``available_cpus.cache_clear()`` forgets it)."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # no affinity on macOS and Windows
        cpus = os.cpu_count() or 1
    quota = cgroup_cpu_limit(cgroup_root)
    if quota is not None:
        cpus = min(cpus, quota)
    return max(1, cpus)


def cgroup_cpu_limit(root: Path = CGROUP_ROOT) -> int | None:
    """The CPUs the cgroup's quota allows (rounded up, at least 1); None without a quota, or
    when the files are missing, unreadable or hold something else."""
    v2 = _read(root / "cpu.max")
    if v2 is not None:  # cgroup v2: the cpu controller is there, and only there
        fields = v2.split()  # "max 100000": no limit (_cpus reads no number there)
        return _cpus(*fields) if len(fields) == 2 else None
    quota = _read(root / "cpu" / "cpu.cfs_quota_us")
    period = _read(root / "cpu" / "cpu.cfs_period_us")
    if quota is None or period is None or quota.strip() == "-1":
        return None
    return _cpus(quota, period)


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError):
        return None


def _cpus(quota: str, period: str) -> int | None:
    try:
        q, p = int(quota), int(period)
    except ValueError:
        return None
    if q <= 0 or p <= 0:
        return None
    return max(1, math.ceil(q / p))


def default_threads() -> int:
    """The threads a read decodes with when given none: :func:`using_threads`' count inside
    its scope, else ``KAFKA_FORMAT_THREADS`` when set (empty counts as unset), else
    :func:`available_cpus`. A ValueError of one line when the variable is not a positive
    integer. The variable is read at each call."""
    scoped = _scoped.get()
    if scoped is not None:
        return scoped
    text = os.environ.get(ENV_VAR, "").strip()
    if not text:
        return available_cpus()
    if not (text.isascii() and text.isdigit()) or int(text) < 1:
        raise ValueError(f"{ENV_VAR} must be a positive integer (threads), not {text!r}")
    return int(text)


@contextmanager
def using_threads(threads: int | None) -> Iterator[None]:
    """Within the block, :func:`default_threads` is ``threads`` (in this thread or task only);
    None changes nothing. What a command's ``--threads`` sets for every read it makes."""
    if threads is None:
        yield
        return
    if threads < 1:
        raise ValueError(f"threads must be at least 1, not {threads}")
    token = _scoped.set(threads)
    try:
        yield
    finally:
        _scoped.reset(token)


def map_in_order(
    fn: Callable[[T], R], items: Iterable[T], *, name: str, parallel: bool = True
) -> list[R]:
    """``fn`` over ``items``, :func:`default_threads` calls at once, each reading on one thread
    (the pool has the cores), the results in the items' order: what a loop gives, sooner.
    A failure is raised as the loop would raise it (the first in order; calls not begun are
    cancelled). One thread, one item, or ``parallel`` false runs in the calling thread.
    ``name``: the threads' name prefix. What a command's partitions at once are (``verify``,
    ``stats``, ``recover``; ``read.ahead.threads_pay`` says when they pay)."""
    todo = list(items)
    threads = min(default_threads(), len(todo)) if parallel else 1
    if threads < 2:
        return [fn(item) for item in todo]

    def alone(item: T) -> R:
        with using_threads(1):
            return fn(item)

    with ThreadPoolExecutor(threads, thread_name_prefix=name) as pool:
        futures = [pool.submit(alone, item) for item in todo]
        try:
            return [future.result() for future in futures]
        except BaseException:
            for future in futures:
                future.cancel()
            raise
