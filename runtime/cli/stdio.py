"""stdout and stderr as the commands write to them, so that a reader going away early
(``kafka-format verify LOGDIR | head -1``) ends the output but not the command.

A write to a pipe whose reader has gone fails with EPIPE (``BrokenPipeError``: Python ignores
SIGPIPE). Left alone, it unwinds the command before it has decided its verdict, and its exit
status says nothing about the log: a damaged one exits 0, and rich's consoles turn it into
exit 1 for a healthy one. Here the first EPIPE on a stream points its file descriptor at
``/dev/null`` (so that nothing, the interpreter's last flush included, fails on it again or
prints "Exception ignored") and every later write is dropped; the command goes on to its
verdict and exits with its status. :func:`pipe_closed` tells a command that streams its
output (``dump``) that no one reads it any more, so that it may stop once its verdict can
no longer change (damage already found).
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterable, Iterator
from typing import Any


class _End:
    """The reading end of one file descriptor, as the writes to it have found it."""

    __slots__ = ("closed", "stream")

    def __init__(self, stream: Any) -> None:
        self.stream = stream
        self.closed = False

    def close(self) -> None:
        """The reader is gone: from now on the descriptor writes to /dev/null."""
        self.closed = True
        try:
            fd = self.stream.fileno()
        except (AttributeError, OSError, ValueError):
            return  # an in-memory stream (a test's): it cannot break again
        devnull = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(devnull, fd)
        finally:
            os.close(devnull)


class _Guarded:
    """A text stream (or its binary buffer) whose writes stop at a closed pipe, silently."""

    def __init__(self, stream: Any, end: _End) -> None:
        self._stream = stream
        self._end = end

    @property
    def pipe_closed(self) -> bool:
        return self._end.closed

    @property
    def buffer(self) -> _Guarded:
        return _Guarded(self._stream.buffer, self._end)

    def write(self, data: Any) -> int:
        if not self._end.closed:
            try:
                return self._stream.write(data)
            except BrokenPipeError:
                self._end.close()
        return len(data)

    def writelines(self, lines: Iterable[Any]) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        try:
            self._stream.flush()  # after a close, what it still held goes to /dev/null
        except BrokenPipeError:
            self._end.close()
            with contextlib.suppress(OSError, ValueError):
                self._stream.flush()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def pipe_closed(stream: Any) -> bool:
    """Whether ``stream`` is one of ours whose reader has gone."""
    return bool(getattr(stream, "pipe_closed", False))


@contextlib.contextmanager
def guarded_stdio() -> Iterator[None]:
    """``sys.stdout`` and ``sys.stderr`` guarded for the time of a command, and flushed at
    its end (where the last of the output may meet the closed pipe)."""
    saved = sys.stdout, sys.stderr
    guards = [None if s is None else _Guarded(s, _End(s)) for s in saved]
    sys.stdout, sys.stderr = (g if g is not None else s for g, s in zip(guards, saved, strict=True))
    try:
        yield
    finally:
        for guard in guards:
            if guard is not None:
                with contextlib.suppress(OSError, ValueError):
                    guard.flush()
        sys.stdout, sys.stderr = saved
