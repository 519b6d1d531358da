"""The reader protocol (runtime/files/storage.py): local mmap and pyarrow.fs give the same bytes.

Oracle: the file's bytes as Python's ``open().read()`` gives them, sliced as Python slices
(a read past the end is short, never an error). The pyarrow side runs over a
``SubTreeFileSystem`` and over a ``PyFileSystem`` whose handler is plain Python file objects,
so the ranged path is the one an object store takes, and the handler sees each range asked.
"""

from __future__ import annotations

import os

import pyarrow as pa
import pyarrow.fs as pafs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kafka_format.runtime.files.storage import (
    LOCAL,
    ArrowFile,
    ArrowStorage,
    ByteSource,
    LocalFile,
    Storage,
)


class RecordingHandler(pafs.FileSystemHandler):
    """A read-only PyFileSystem over a local root, through Python file objects; records every
    (position, size) read of every opened file."""

    def __init__(self, root: str) -> None:
        self.root = root
        self.local = pafs.SubTreeFileSystem(root, pafs.LocalFileSystem())
        self.reads: list[tuple[str, int, int]] = []

    def get_type_name(self):
        return "recording"

    def equals(self, other):
        return isinstance(other, RecordingHandler) and other.root == self.root

    def normalize_path(self, path):
        return path

    def get_file_info(self, paths):
        return self.local.get_file_info(paths)

    def get_file_info_selector(self, selector):
        return self.local.get_file_info(selector)

    def open_input_file(self, path):
        handler = self

        class Recording:
            def __init__(self) -> None:
                self.fh = open(os.path.join(handler.root, path), "rb")  # noqa: SIM115

            def read(self, n=-1):
                at = self.fh.tell()
                data = self.fh.read(n)
                handler.reads.append((path, at, len(data)))
                return data

            def __getattr__(self, name):
                return getattr(self.fh, name)

        return pa.PythonFile(Recording(), mode="r")

    def open_input_stream(self, path):
        return self.open_input_file(path)

    def _read_only(self, *args):
        raise OSError("read-only")

    create_dir = delete_dir = delete_dir_contents = delete_root_dir_contents = _read_only
    delete_file = move = copy_file = open_output_stream = open_append_stream = _read_only


@pytest.fixture
def tree(tmp_path):
    (tmp_path / "orders-0").mkdir()
    data = bytes(range(256)) * 40 + b"tail"
    (tmp_path / "orders-0" / "00000000000000000000.log").write_bytes(data)
    (tmp_path / "orders-0" / "empty.log").write_bytes(b"")
    (tmp_path / "orders-0" / "sub").mkdir()
    return tmp_path, data


def storages(root):
    """(storage, path of the tree's root in it) for each implementation."""
    handler = RecordingHandler(str(root))
    return [
        (LOCAL, str(root)),
        (ArrowStorage(pafs.LocalFileSystem()), str(root)),
        (ArrowStorage(pafs.SubTreeFileSystem(str(root), pafs.LocalFileSystem())), ""),
        (ArrowStorage(pafs.PyFileSystem(handler), lambda p: f"rec://{p}"), ""),
    ]


def test_every_storage_implements_the_protocol(tree):
    root, _ = tree
    for storage, base in storages(root):
        assert isinstance(storage, Storage)
        with storage.open(storage.join(storage.join(base, "orders-0"), "empty.log")) as source:
            assert isinstance(source, ByteSource)


def test_listings_agree(tree):
    root, data = tree
    seen = []
    for storage, base in storages(root):
        directory = storage.join(base, "orders-0")
        entries = sorted(storage.list_dir(directory), key=lambda e: e.name)
        seen.append([(e.name, e.is_dir, e.size) for e in entries])
        assert storage.parent(entries[0].path).rstrip("/").endswith("orders-0")
        info = storage.info(directory)
        assert info is not None and info.is_dir and info.name == "orders-0"
        assert storage.info(storage.join(base, "absent")) is None
        log = storage.join(directory, "00000000000000000000.log")
        assert storage.info(log).size == len(data)
        assert storage.read_bytes(log) == data
    assert seen[0] == [
        ("00000000000000000000.log", False, len(data)),
        ("empty.log", False, 0),
        ("sub", True, 0),
    ]
    assert all(s == seen[0] for s in seen)


@settings(max_examples=60, deadline=None)
@given(reads=st.lists(st.tuples(st.integers(-5, 11_000), st.integers(-3, 3000)), max_size=12))
def test_reads_are_python_slices_on_every_storage(tmp_path_factory, reads):
    root = tmp_path_factory.mktemp("reads")
    data = os.urandom(10_244)
    (root / "f.log").write_bytes(data)
    for storage, base in storages(root):
        with storage.open(storage.join(base, "f.log")) as source:
            assert source.size() == len(data)
            for position, n in reads:
                start = max(0, position)
                assert bytes(source.read(position, n)) == data[start : start + max(0, n)]
            assert bytes(source.view()) == data


def test_empty_file(tree):
    root, _ = tree
    for storage, base in storages(root):
        with storage.open(storage.join(storage.join(base, "orders-0"), "empty.log")) as source:
            assert source.size() == 0
            assert bytes(source.view()) == b""
            assert bytes(source.read(0, 10)) == b""


def test_local_reads_are_views_of_the_mapping(tree):
    root, data = tree
    with LocalFile(root / "orders-0" / "00000000000000000000.log") as source:
        view = source.view()
        assert view.readonly and bytes(view[:4]) == data[:4]
        assert source.read(100, 4).obj is view.obj  # no copy: the same mmap underneath


def test_ranged_reads_fetch_only_the_ranges_asked(tree):
    root, data = tree
    handler = RecordingHandler(str(root))
    storage = ArrowStorage(pafs.PyFileSystem(handler), lambda p: f"rec://{p}")
    source = storage.open("orders-0/00000000000000000000.log")
    assert (
        isinstance(source, ArrowFile) and source.name == "rec://orders-0/00000000000000000000.log"
    )
    assert bytes(source.read(1000, 61)) == data[1000:1061]
    assert bytes(source.read(len(data) - 2, 100)) == data[-2:]
    assert source.bytes_read == 63 == storage.bytes_read
    assert [(at, n) for _, at, n in handler.reads] == [(1000, 61), (len(data) - 2, 2)]
    source.view()
    source.read(5, 5)  # served from the whole file fetched once
    assert source.bytes_read == 63 + len(data)
    source.close()
