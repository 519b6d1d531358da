"""The wheel ships the decoding kernels compiled: ``build_py`` runs ``warm`` in what it built.

numba compiles a kernel at its first call, about half a minute for a command's kernels on a
small machine, and keeps the machine code beside the kernels' sources (``__pycache__``,
``*.nbi`` / ``*.nbc``), stamped with a hash of the source's content (numba >= 0.61), not its
mtime: a cache built in ``build/lib`` still holds once pip has copied the files into
site-packages. So a wheel built where it is installed (``pip install`` from the sdist or the
checkout, ``python -m build``) starts at once, with no ``kafka-format warm``.

It is also the build backend (``[build-system]`` in ``pyproject.toml``, ``backend-path``):
setuptools' own, except that a wheel's isolated build environment gets the package's runtime
dependencies too (:func:`get_requires_for_build_wheel`, read from ``[project]`` so they are
written once), since compiling the kernels imports them; an editable install's and an
sdist's do not, as they compile nothing.

What a cache entry is valid for, numba decides on load (``numba/core/caching.py``,
``Cache._index_key`` and ``IndexDataCacheFile``): the same numba version and the same CPU
(name and features); anything else is a miss, and the kernel compiles as it would without a
cache, into the same ``__pycache__`` when site-packages is writable (else numba's user-wide
cache, or ``NUMBA_CACHE_DIR``). A cache that cannot be built (an isolated build environment
without the runtime's dependencies) leaves the wheel as it was, with one line saying so;
``KAFKA_FORMAT_NO_KERNEL_CACHE=1`` skips it. Editable installs are left alone: their kernels
compile in place, and ``make setup`` warms them.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from pathlib import Path

from setuptools import build_meta as _setuptools
from setuptools.build_meta import *  # noqa: F403 (the PEP 517 hooks, setuptools' own)
from setuptools.command.build_py import build_py

#: Run in the built tree: compiles every kernel the readers use (``runtime/cli/warm.py``).
_WARM = "from kafka_format.runtime.cli.warm import warm_kernels; warm_kernels()"


class BuildPy(build_py):
    """``build_py``, then the kernels compiled into the built package's ``__pycache__``."""

    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False):
            return
        built = Path(self.build_lib)
        # build/lib outlives a build: what an earlier one compiled (older sources, another
        # numba) must not ride along, nor ship when this build ships none.
        for stale in built.glob("kafka_format/**/__pycache__/*.nb[ic]"):
            stale.unlink()
        if os.environ.get("KAFKA_FORMAT_NO_KERNEL_CACHE"):
            return
        env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
        env["PYTHONPATH"] = os.pathsep.join([str(built), *filter(None, [env.get("PYTHONPATH")])])
        env["PYTHONDONTWRITEBYTECODE"] = "1"  # the wheel carries numba's cache, not .pyc files
        done = subprocess.run(
            [sys.executable, "-c", _WARM], cwd=built, env=env, capture_output=True, text=True
        )
        caches = list((built / "kafka_format" / "runtime" / "kernels").glob("__pycache__/*.nbi"))
        if done.returncode != 0 or not caches:
            last = (done.stderr.strip().splitlines() or ["no kernel cache written"])[-1]
            print(
                f"kafka-format: the wheel ships without compiled kernels ({last}); the first "
                "command compiles them (`kafka-format warm` does it ahead)",
                file=sys.stderr,
            )
            return
        print(f"kafka-format: {len(caches)} compiled kernels ship in the wheel", file=sys.stderr)


def get_requires_for_build_wheel(config_settings=None) -> list[str]:
    """setuptools' requirements, and the runtime's: ``build_py`` runs the kernels."""
    with open(Path(__file__).resolve().parent.parent / "pyproject.toml", "rb") as fh:
        runtime = tomllib.load(fh)["project"]["dependencies"]
    return [*_setuptools.get_requires_for_build_wheel(config_settings), *runtime]
