"""Where the bytes are: local paths, and anything ``pyarrow.fs`` opens from a URI.

A path without a scheme is local (memory-mapped); ``file://``, ``s3://``, ``gs://``,
``hdfs://`` (and whatever else ``pyarrow.fs.FileSystem.from_uri`` knows) go through pyarrow
alike, with its usual configuration: credentials from the environment, options as URI query
parameters (``s3://bucket/logs?region=eu-west-1&endpoint_override=localhost:9000``); Hadoop's
``s3a://`` and ``s3n://`` are read as ``s3://``. So a ``file://`` URI runs the very code an
object store does, minus the network.

Tasks reopen the filesystem from the same URI (a :class:`FsRef`), so only strings cross the
wire. Reads are positional, through the runtime's reader protocol
(:class:`~kafka_format.runtime.files.storage.ArrowFile`: ``read_at``, zero-copy on the
memory-mapped local filesystem, one ranged GET on object stores), each counted.
"""

from __future__ import annotations

import fnmatch
import os
import threading
from dataclasses import dataclass
from urllib.parse import urlsplit, urlunsplit

import pyarrow.fs as pafs

GLOB_CHARS = frozenset("*?[")
HADOOP_S3_SCHEMES = ("s3a", "s3n")

_cache: dict[str, pafs.FileSystem] = {}
_cache_lock = threading.Lock()


@dataclass(frozen=True, slots=True)
class FsRef:
    """How to reopen a filesystem anywhere: the URI it came from, or None for local."""

    uri: str | None = None

    def filesystem(self) -> pafs.FileSystem:
        if self.uri is None:
            return _local()
        with _cache_lock:
            fs = _cache.get(self.uri)
            if fs is None:
                fs = pafs.FileSystem.from_uri(self.uri)[0]
                _cache[self.uri] = fs
        return fs

    def display(self, path: str) -> str:
        """The name errors give a file: its full URI, or the local path."""
        if self.uri is None:
            return path
        parts = urlsplit(self.uri)
        if parts.scheme in ("s3", "gs", "gcs"):
            return f"{parts.scheme}://{path}"  # pyarrow paths start with the bucket
        return urlunsplit((parts.scheme, parts.netloc, path, "", ""))


def _local() -> pafs.FileSystem:
    # Memory-mapped: read_buffer then hands out views of the page cache, not copies.
    return pafs.LocalFileSystem(use_mmap=True)


def locate(path: str) -> tuple[FsRef, pafs.FileSystem, str]:
    """The filesystem of ``path`` and the path within it (glob characters kept)."""
    if "://" not in path:
        return FsRef(None), _local(), os.path.abspath(os.path.expanduser(path))
    parts = urlsplit(path)
    if parts.scheme.lower() in HADOOP_S3_SCHEMES:
        # Hadoop's S3 connectors' schemes (s3a, and the retired s3n) name the same objects
        # as s3://, which pyarrow's S3FileSystem opens.
        parts = parts._replace(scheme="s3")
    # pyarrow cannot parse '[' in a URI, so only the part before the first glob is its URI.
    segments = parts.path.split("/")
    literal = []
    for segment in segments:
        if GLOB_CHARS & set(segment):
            break
        literal.append(segment)
    rest = segments[len(literal) :]
    base = urlunsplit((parts.scheme, parts.netloc, "/".join(literal), parts.query, ""))
    fs, fs_path = pafs.FileSystem.from_uri(base)
    if rest:
        fs_path = fs_path.rstrip("/") + "/" + "/".join(rest)
    # file:// too goes the generic way (reopened from its URI in every task, plain reads),
    # exactly as s3:// does; only a bare path takes the memory-mapped local shortcut.
    return FsRef(base), fs, fs_path


def has_glob(path: str) -> bool:
    return bool(GLOB_CHARS & set(path))


def expand_glob(fs: pafs.FileSystem, pattern: str) -> list[str]:
    """Existing paths matching ``pattern``, one path component at a time (``*``, ``?``,
    ``[...]`` as in fnmatch; a wildcard never crosses a ``/``)."""
    absolute = pattern.startswith("/")
    parts = [p for p in pattern.split("/") if p]
    current = ["/" if absolute else ""]
    for part in parts:
        following = []
        for base in current:
            if has_glob(part):
                for info in _list(fs, base):
                    if fnmatch.fnmatchcase(info.base_name, part):
                        following.append(info.path)
            else:
                following.append(_join(base, part))
        current = following
        if not current:
            return []
    found = fs.get_file_info(current)
    return sorted(info.path for info in found if info.type != pafs.FileType.NotFound)


def _join(base: str, name: str) -> str:
    if not base:
        return name
    return base + name if base.endswith("/") else f"{base}/{name}"


def _list(fs: pafs.FileSystem, directory: str) -> list[pafs.FileInfo]:
    try:
        return fs.get_file_info(pafs.FileSelector(directory or "/", allow_not_found=True))
    except (NotADirectoryError, OSError):
        return []
