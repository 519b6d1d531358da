"""One line on stderr when the decoding kernels compile for the first time on a machine.

numba compiles a kernel at its first call and keeps the machine code in its on-disk cache
(``cache=True``): next to the kernels' sources (``__pycache__``) or under ``NUMBA_CACHE_DIR``.
A wheel built by this package's ``build_py`` ships that cache (``scripts/kernel_cache.py``),
valid under the numba and on the CPU that built it; elsewhere the first command spends 13-31 s
compiling, which without a word looks like a hang. numba announces each compilation it cannot
load from the cache (the ``numba:compile`` event, sent only on a cache miss); :func:`install`
listens for it and, the first time one of our kernels compiles with no cache index of its own
yet (a cold cache, not merely a new signature), prints :data:`NOTICE` once. ``kafka-format
warm`` compiles everything ahead, for images and clusters.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from typing import Any, TextIO

from numba.core import event

__all__ = ["KERNEL_MODULES", "NOTICE", "cache_dirs", "cold_kernels", "install", "kernels"]

NOTICE = (
    "kafka-format: compiling the decoding kernels once for this machine (about half a "
    "minute); later runs start at once (`kafka-format warm` does it ahead)"
)

#: The modules of this package that hold numba kernels.
KERNEL_MODULES = (
    "addresses",
    "crc32",
    "fastscan",
    "inflate",
    "markers",
    "jsonl",
    "lz4",
    "payloads",
    "records",
    "snappy",
)


def kernels() -> list[Any]:
    """Every cached numba dispatcher of the kernel modules (inlined helpers left out: they
    are compiled into their callers, never on their own)."""
    found = []
    for name in KERNEL_MODULES:
        module = importlib.import_module(f"{__package__}.{name}")
        for value in vars(module).values():
            cache = getattr(value, "_cache", None)
            if cache is None or not hasattr(cache, "_cache_file"):
                continue
            if getattr(value, "targetoptions", {}).get("inline") == "always":
                continue
            if (
                getattr(value, "py_func", None) is None
                or value.py_func.__module__ != module.__name__
            ):
                continue  # imported from another kernel module: counted there
            found.append(value)
    return found


def _index(dispatcher: Any) -> Path | None:
    cache_file = getattr(getattr(dispatcher, "_cache", None), "_cache_file", None)
    path = getattr(cache_file, "_index_path", None)
    return Path(path) if path else None


def cold_kernels() -> list[str]:
    """The kernels with no cache index yet (compiled by none of the runs before)."""
    out = []
    for dispatcher in kernels():
        index = _index(dispatcher)
        if index is not None and not index.exists():
            out.append(f"{dispatcher.py_func.__module__}.{dispatcher.py_func.__qualname__}")
    return out


def cache_dirs() -> list[Path]:
    """Where numba keeps the kernels' machine code (``NUMBA_CACHE_DIR`` when set)."""
    dirs = {Path(d._cache.cache_path) for d in kernels()}
    return sorted(dirs)


class _Notice(event.Listener):
    def __init__(self, stream: TextIO | None) -> None:
        self.stream = stream
        self.said = False

    def on_start(self, ev: event.Event) -> None:
        if self.said:
            return
        dispatcher = (ev.data or {}).get("dispatcher")
        func = getattr(dispatcher, "py_func", None)
        if func is None or not func.__module__.startswith(f"{__package__}."):
            return
        index = _index(dispatcher)
        if index is None or index.exists():
            return  # a warm cache meeting a new signature: a second or two, not worth a line
        self.said = True
        stream = self.stream if self.stream is not None else sys.stderr
        stream.write(NOTICE + "\n")
        stream.flush()

    def on_end(self, ev: event.Event) -> None:
        pass


_installed: _Notice | None = None


def install(stream: TextIO | None = None) -> None:
    """Print :data:`NOTICE` on ``stream`` (default: ``sys.stderr`` at the time) the first time
    a kernel compiles into a cold cache in this process. Idempotent."""
    global _installed
    if _installed is None:
        _installed = _Notice(stream)
        event.register("numba:compile", _installed)
