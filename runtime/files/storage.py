"""Where a log's bytes live: a small reader protocol, for local files and ``pyarrow.fs``.

The partition layer (:mod:`kafka_format.runtime.log.partition`) and discovery
(:mod:`kafka_format.runtime.read.sources`) ask a :class:`Storage` for a directory's entries
and a :class:`ByteSource` for a file's bytes, so the same rules run over a local disk and
over anything ``pyarrow.fs`` opens (S3, GCS, HDFS, a ``SubTreeFileSystem``...):

* :class:`LocalStorage` memory-maps files: :meth:`ByteSource.view` is the page cache itself,
  and :meth:`ByteSource.read` a slice of it (no copy).
* :class:`ArrowStorage` reads ranges (``open_input_file(path)``, then a positional
  ``read_buffer``: one ranged GET on an object store); :meth:`ByteSource.view` fetches the
  whole file once, so callers that need a few headers of a large file use
  :meth:`ByteSource.read` instead.

Paths are strings in the storage's own syntax (``/``-separated); a local storage also takes
``os.PathLike``. Nothing here reserves memory on the word of a length field: reads are bounded
by the file's size.
"""

from __future__ import annotations

import contextlib
import mmap
import os
import posixpath
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:  # pragma: no cover
    import pyarrow.fs as pafs


@runtime_checkable
class ByteSource(Protocol):
    """One file's bytes, read by position."""

    #: How errors name the file (a path or a URI).
    name: str

    def size(self) -> int:
        """The file's size in bytes (as it was when opened)."""
        ...

    def read(self, position: int, n: int) -> memoryview:
        """Bytes ``[position, position + n)``; fewer at the end of the file, none past it."""
        ...

    def view(self) -> memoryview:
        """The whole file (zero-copy where the file is memory-mapped)."""
        ...

    def close(self) -> None: ...


@dataclass(frozen=True, slots=True)
class Entry:
    """One entry of a directory listing."""

    path: str
    name: str
    is_dir: bool
    #: Bytes of a file; 0 for a directory, and for a file whose size was not asked for.
    size: int = 0


@runtime_checkable
class Storage(Protocol):
    """A filesystem as the partition layer needs it: listings and byte sources."""

    def info(self, path: str) -> Entry | None:
        """The entry at ``path``; None when nothing is there."""
        ...

    def list_dir(self, path: str, *, sized: Callable[[str], bool] | None = None) -> list[Entry]:
        """The entries of a directory (not recursive), in no particular order; ``sized``:
        which files' sizes are wanted, by name (the others' may be left 0 where a size costs
        a call each); None: every file's."""
        ...

    def open(self, path: str) -> ByteSource: ...

    def read_bytes(self, path: str) -> bytes:
        """A whole (small) file: indexes, checkpoints, snapshots."""
        ...

    def join(self, directory: str, name: str) -> str: ...

    def parent(self, path: str) -> str: ...

    def display(self, path: str) -> str:
        """The name a message gives ``path`` (the full URI on remote filesystems)."""
        ...


# --- local files ----------------------------------------------------------------------------


class LocalFile:
    """A local file, memory-mapped read-only."""

    __slots__ = ("_mmap", "_view", "name")

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.name = os.fspath(path)
        self._mmap: mmap.mmap | None = None
        with open(self.name, "rb") as fh:
            if os.fstat(fh.fileno()).st_size:
                self._mmap = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
        self._view = memoryview(self._mmap if self._mmap is not None else b"")

    def size(self) -> int:
        return len(self._view)

    def read(self, position: int, n: int) -> memoryview:
        position = max(0, position)
        return self._view[position : position + max(0, n)]

    def view(self) -> memoryview:
        return self._view

    def close(self) -> None:
        view, self._view = self._view, memoryview(b"")
        view.release()
        mapped, self._mmap = self._mmap, None
        if mapped is not None:
            # A caller may still hold a slice; the map then closes when that slice goes.
            with contextlib.suppress(BufferError):
                mapped.close()

    def __enter__(self) -> LocalFile:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class LocalStorage:
    """The local filesystem, files memory-mapped."""

    __slots__ = ()

    def info(self, path: str | os.PathLike[str]) -> Entry | None:
        p = Path(path)
        try:
            st = p.stat()
        except OSError:
            return None
        is_dir = p.is_dir()
        return Entry(str(p), p.name, is_dir, 0 if is_dir else st.st_size)

    def list_dir(
        self, path: str | os.PathLike[str], *, sized: Callable[[str], bool] | None = None
    ) -> list[Entry]:
        found = []
        with os.scandir(path) as entries:
            for e in entries:
                try:
                    is_dir = e.is_dir()
                    # a stat a file: a partition of small segments lists thousands
                    wanted = not is_dir and (sized is None or sized(e.name))
                    size = e.stat().st_size if wanted else 0
                except OSError:
                    continue  # vanished while listing (the broker deletes files)
                found.append(Entry(e.path, e.name, is_dir, size))
        return found

    def open(self, path: str | os.PathLike[str]) -> LocalFile:
        return LocalFile(path)

    def read_bytes(self, path: str | os.PathLike[str]) -> bytes:
        return Path(path).read_bytes()

    def join(self, directory: str | os.PathLike[str], name: str) -> str:
        return os.path.join(directory, name)

    def parent(self, path: str | os.PathLike[str]) -> str:
        return os.path.dirname(os.fspath(path).rstrip(os.sep)) or "."

    def display(self, path: str | os.PathLike[str]) -> str:
        return os.fspath(path)


# --- pyarrow.fs ----------------------------------------------------------------------------


class ArrowFile:
    """A file of a ``pyarrow.fs`` filesystem, read by ranges; :attr:`bytes_read` counts them."""

    __slots__ = ("_file", "_size", "_whole", "bytes_read", "name", "path")

    def __init__(self, fs: pafs.FileSystem, path: str, *, name: str | None = None) -> None:
        self.path = path
        self.name = name or path
        self._file = fs.open_input_file(path)
        self._size = self._file.size()
        self._whole: memoryview | None = None
        self.bytes_read = 0

    def size(self) -> int:
        return self._size

    def read(self, position: int, n: int) -> memoryview:
        position = max(0, position)
        n = max(0, min(n, self._size - position))
        if n == 0:
            return memoryview(b"")
        if self._whole is not None:
            return self._whole[position : position + n]
        # seek + read_buffer rather than read_at (which copies into bytes): a view of the
        # page cache on a memory-mapped local file, one ranged GET on an object store.
        self._file.seek(position)
        buffer = self._file.read_buffer(n)
        self.bytes_read += buffer.size
        return memoryview(buffer)

    def view(self) -> memoryview:
        if self._whole is None:
            self._whole = self.read(0, self._size)
        return self._whole

    def close(self) -> None:
        self._whole = None
        self._file.close()

    def __enter__(self) -> ArrowFile:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class ArrowStorage:
    """A ``pyarrow.fs.FileSystem``; ``display`` turns its paths back into what the user wrote
    (give it a function such as ``lambda p: f"s3://{p}"``)."""

    __slots__ = ("_display", "fs", "opened")

    def __init__(self, fs: pafs.FileSystem, display: Any = None) -> None:
        self.fs = fs
        self._display = display
        #: Every file opened through this storage, so a caller can sum their bytes_read.
        self.opened: list[ArrowFile] = []

    def info(self, path: str) -> Entry | None:
        import pyarrow.fs as pafs

        found = self.fs.get_file_info(path)
        if found.type == pafs.FileType.NotFound:
            return None
        is_dir = found.type == pafs.FileType.Directory
        return Entry(found.path, found.base_name, is_dir, 0 if is_dir else (found.size or 0))

    def list_dir(self, path: str, *, sized: Callable[[str], bool] | None = None) -> list[Entry]:
        import pyarrow.fs as pafs  # a listing gives every size: ``sized`` changes nothing

        infos = self.fs.get_file_info(pafs.FileSelector(path))
        return [
            Entry(
                i.path,
                i.base_name,
                i.type == pafs.FileType.Directory,
                0 if i.type == pafs.FileType.Directory else (i.size or 0),
            )
            for i in infos
            if i.type in (pafs.FileType.File, pafs.FileType.Directory)
        ]

    def open(self, path: str) -> ArrowFile:
        source = ArrowFile(self.fs, str(path), name=self.display(str(path)))
        self.opened.append(source)
        return source

    def read_bytes(self, path: str) -> bytes:
        with self.open(path) as source:
            return bytes(source.read(0, source.size()))

    def join(self, directory: str, name: str) -> str:
        return f"{directory.rstrip('/')}/{name}" if directory else name

    def parent(self, path: str) -> str:
        return posixpath.dirname(str(path).rstrip("/"))

    def display(self, path: str) -> str:
        return self._display(str(path)) if self._display is not None else str(path)

    @property
    def bytes_read(self) -> int:
        return sum(f.bytes_read for f in self.opened)


LOCAL = LocalStorage()

__all__ = [
    "LOCAL",
    "ArrowFile",
    "ArrowStorage",
    "ByteSource",
    "Entry",
    "LocalFile",
    "LocalStorage",
    "Storage",
]
