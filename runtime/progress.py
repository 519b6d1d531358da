"""Progress of long work on one line of stderr, shown only where someone is watching.

A command that reads many megabytes (``dump``, ``verify``) says how far it got::

    verify: 412.0 MiB / 1.2 GiB  33%  3/9 files  96.1 MiB/s  0:08 left

The line is redrawn in place (carriage return, erase to end of line) at most every
:data:`REFRESH_SECONDS`, and erased when the work ends, so nothing of it stays in a terminal's
scroll-back and nothing ever reaches stdout. It is shown only when stderr is a terminal, the
command was not asked to be quiet, and the work is at least :func:`min_bytes` (a few MB; the
environment variable ``KAFKA_FORMAT_PROGRESS_MIN_BYTES`` changes it, which the tests use); in
a pipe, a log file or CI it stays silent. A command whose results stream to the same terminal
(``dump`` printing to the screen) passes that stream as ``output``: the results scrolling by
are progress enough, and a status line would tear them apart.

A plain line rather than rich's live display: rich swaps ``sys.stdout`` while it is live,
and ``dump`` writes tens of thousands of lines a second to a stream it looked up before.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from typing import TextIO

#: Work below this many bytes finishes before a progress line would tell anything.
DEFAULT_MIN_BYTES = 4 * 1024 * 1024
MIN_BYTES_ENV = "KAFKA_FORMAT_PROGRESS_MIN_BYTES"
REFRESH_SECONDS = 0.2
_ERASE = "\r\033[K"


def min_bytes() -> int:
    """The smallest amount of work shown; ``KAFKA_FORMAT_PROGRESS_MIN_BYTES`` overrides it."""
    text = os.environ.get(MIN_BYTES_ENV, "").strip()
    try:
        return max(0, int(text)) if text else DEFAULT_MIN_BYTES
    except ValueError:
        return DEFAULT_MIN_BYTES


def _is_terminal(stream: TextIO | None) -> bool:
    try:
        return stream is not None and stream.isatty()
    except (AttributeError, ValueError, OSError):  # closed or not a real stream
        return False


def wanted(
    *, stream: TextIO | None = None, quiet: bool = False, output: TextIO | None = None
) -> bool:
    """Whether a progress line could be shown at all (before counting the work): not quiet,
    ``stream`` (default ``sys.stderr``) a terminal, ``output`` not one."""
    stream = stream if stream is not None else sys.stderr
    return not quiet and _is_terminal(stream) and not _is_terminal(output)


def human_bytes(n: float) -> str:
    """``1536`` -> ``1.5 KiB``: powers of 1024, one decimal from KiB on."""
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(n) < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    raise AssertionError("unreachable")


def _duration(seconds: float) -> str:
    seconds = int(seconds + 0.5)
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


class Progress:
    """Bytes done out of a total, over one or more files, drawn on ``stream``.

    Callers report where they are in the current file (:meth:`at`) and when a new file
    starts (:meth:`begin_file`); bytes of finished files count whole, so a file that ended
    early (a truncated tail, damage) does not hold the total back. Use :meth:`start`, which
    returns None when nothing should be shown: callers then skip the calls altogether.
    """

    def __init__(self, label: str, total: int, stream: TextIO, *, files: int = 0) -> None:
        self.label = label
        self.total = max(total, 0)
        self.files = files
        self.stream = stream
        self.files_started = 0
        self._finished_bytes = 0  # bytes of the files before the current one
        self._file_size = 0
        self._position = 0
        self._started = time.monotonic()
        self._drawn_at = -REFRESH_SECONDS
        self._shown = False
        self._lock = threading.Lock()

    @classmethod
    def start(
        cls,
        label: str,
        total: int,
        *,
        files: int = 0,
        stream: TextIO | None = None,
        quiet: bool = False,
        output: TextIO | None = None,
    ) -> Progress | None:
        """A progress line on ``stream`` (default: ``sys.stderr`` now), or None when it
        should stay silent: quiet, not a terminal, too little work, or ``output`` (where
        the results go meanwhile) is a terminal itself."""
        stream = stream if stream is not None else sys.stderr
        if not wanted(stream=stream, quiet=quiet, output=output) or total < min_bytes():
            return None
        progress = cls(label, total, stream, files=files)
        progress.draw(force=True)
        return progress

    @property
    def done(self) -> int:
        return min(self._finished_bytes + self._position, self.total)

    def begin_file(self, size: int) -> None:
        """A new file of ``size`` bytes starts; the one before counts as done."""
        if self.files_started:
            self._finished_bytes += self._file_size
        self.files_started += 1
        self._file_size = max(size, 0)
        self._position = 0
        self.draw()

    def at(self, position: int) -> None:
        """Work in the current file reached byte ``position``."""
        self._position = min(position, self._file_size) if self._file_size else position
        self.draw()

    def share(self) -> SharedProgress:
        """A view of this progress for one of several threads working on files at once."""
        return SharedProgress(self)

    def add(self, nbytes: int, *, files: int = 0) -> None:
        """``nbytes`` more done and ``files`` more started, from any thread (:meth:`share`)."""
        with self._lock:
            self._finished_bytes += nbytes
            self.files_started += files
            self.draw()

    def draw(self, *, force: bool = False) -> None:
        now = time.monotonic()
        if not force and now - self._drawn_at < REFRESH_SECONDS:
            return
        self._drawn_at = now
        self.stream.write(_ERASE + self.line(now))
        self.stream.flush()
        self._shown = True

    def line(self, now: float | None = None) -> str:
        """The text of the line (without the control characters)."""
        now = time.monotonic() if now is None else now
        done, total = self.done, self.total
        parts = [f"{self.label}: {human_bytes(done)} / {human_bytes(total)}"]
        if total:
            parts.append(f"{100 * done // total:3d}%")
        if self.files > 1:
            parts.append(f"{min(max(self.files_started, 1), self.files)}/{self.files} files")
        elapsed = now - self._started
        if elapsed >= 1 and done:
            rate = done / elapsed
            parts.append(f"{human_bytes(rate)}/s")
            if total > done:
                parts.append(f"{_duration((total - done) / rate)} left")
        return "  ".join(parts)

    def clear(self) -> None:
        """Erase the line (before other output on the same terminal); the next update
        draws it again."""
        if self._shown:
            self.stream.write(_ERASE)
            self.stream.flush()
            self._shown = False
            self._drawn_at = -REFRESH_SECONDS

    def close(self) -> None:
        self.clear()

    def wrap(self, stream: TextIO) -> TextIO:
        """``stream`` with the line erased before each write, for messages that go to the
        same terminal while the work goes on (``error: ...`` lines)."""
        return _Erasing(stream, self)

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class _Erasing:
    """A text stream whose writes first erase the progress line."""

    def __init__(self, stream: TextIO, progress: Progress) -> None:
        self._stream = stream
        self._progress = progress

    def write(self, text: str) -> int:
        self._progress.clear()
        return self._stream.write(text)

    def __getattr__(self, name: str):
        return getattr(self._stream, name)


class SharedProgress:
    """One thread's files, told to a :class:`Progress` that several threads share: the same
    :meth:`begin_file` / :meth:`at` a sequential caller makes, passed on as bytes done."""

    __slots__ = ("_owner", "_position", "_size")

    def __init__(self, owner: Progress) -> None:
        self._owner = owner
        self._size = 0
        self._position = 0

    def begin_file(self, size: int) -> None:
        # the file before counts whole, as Progress.begin_file counts it
        self._owner.add(self._size - self._position, files=1)
        self._size = max(size, 0)
        self._position = 0

    def at(self, position: int) -> None:
        position = min(position, self._size) if self._size else position
        self._owner.add(position - self._position)
        self._position = position

    def finish(self) -> None:
        """The thread's last file counts whole."""
        self._owner.add(self._size - self._position)
        self._size = self._position = 0


__all__ = [
    "DEFAULT_MIN_BYTES",
    "MIN_BYTES_ENV",
    "Progress",
    "SharedProgress",
    "human_bytes",
    "min_bytes",
    "wanted",
]
