"""The broker's directory rules on every path: what is never read as data, and that it is said.

Kafka (``LocalLog.DeleteDirSuffix`` / ``FutureDirSuffix`` / ``StrayDirSuffix``; ``LogManager``
loads such directories as logs to delete, future replicas or strays, never as the live
partition) and ``LogFileUtils`` (``.deleted``, ``.cleaned``, ``.swap``: removed or swapped in
by ``LogLoader.removeTempFilesAndCollectSwapFiles`` before anything is served). The oracle is
the broker's view: the records :class:`PartitionWriter` wrote to the live ``topic-N``
directories, counted once, whatever copies lie beside them.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pyarrow.fs as pafs
import pytest

from kafka_format.runtime.cli import main
from kafka_format.runtime.files.names import skip_reason
from kafka_format.runtime.files.storage import ArrowStorage
from kafka_format.runtime.read.columnar import read_table
from kafka_format.runtime.read.sources import discover, resolve
from kafka_format.runtime.write.writer import Message, PartitionWriter

LOG0 = "00000000000000000000.log"


def build(root: Path) -> dict[int, int]:
    """orders-0 and orders-1, a -delete copy of 0, a -future copy of 1, a -stray copy of 0,
    and .swap / .cleaned / .deleted copies of a segment inside orders-0; returns the broker's
    record count per partition."""
    counts = {}
    for partition, batches in ((0, 5), (1, 3)):
        with PartitionWriter(root, "orders", partition, keep_records=True) as w:
            for b in range(batches):
                w.append([Message(b"k", f"v{partition}-{b}-{i}".encode()) for i in range(4)])
        counts[partition] = len(w.records)
    shutil.copytree(root / "orders-0", root / "orders-0.abc123-delete")
    shutil.copytree(root / "orders-1", root / "orders-1.def-future")
    shutil.copytree(root / "orders-0", root / "orders-0.0123456789abcdef0123456789abcdef-stray")
    log = root / "orders-0" / LOG0
    for suffix in (".swap", ".cleaned", ".deleted"):
        shutil.copy(log, f"{log}{suffix}")
    shutil.copy(root / "orders-0" / "00000000000000000000.index", root / "orders-0" / "x.swap")
    return counts


@pytest.fixture
def log_dir(tmp_path):
    return tmp_path, build(tmp_path)


@pytest.mark.parametrize(
    ("name", "is_dir", "skipped"),
    [
        ("orders-0", True, False),
        ("orders-0.abc-delete", True, True),
        ("my-topic-12.0123456789abcdef0123456789abcdef-future", True, True),
        ("orders-0.x-stray", True, True),
        ("orders-delete", True, False),  # a topic named "orders" ... "delete": no uuid, live
        ("00000000000000000000.log", False, False),
        ("00000000000000000000.log.swap", False, True),
        ("00000000000000000000.index.cleaned", False, True),
        ("00000000000000000000.snapshot.deleted", False, True),
        ("00000000000000000010-0000000001.checkpoint.deleted", False, True),
        ("meta.properties", False, False),
        ("orders-0.abc-delete", False, False),  # a *file* of that name is not a directory
    ],
)
def test_skip_reason(name, is_dir, skipped):
    reason = skip_reason(name, is_dir=is_dir)
    assert (reason is not None) == skipped
    if reason:
        suffix = name.rsplit("-" if is_dir else ".", 1)[-1]
        assert suffix in reason and "not" in reason


def test_a_log_dir_reads_only_live_partitions(log_dir):
    root, counts = log_dir
    inputs = resolve(root)
    assert [(i.topic, i.partition, Path(i.path).name) for i in inputs] == [
        ("orders", 0, LOG0),
        ("orders", 1, LOG0),
    ]
    skipped = {Path(s.path).name: s.reason for s in inputs.skipped}
    assert set(skipped) == {
        "orders-0.abc123-delete",
        "orders-1.def-future",
        "orders-0.0123456789abcdef0123456789abcdef-stray",
        f"{LOG0}.swap",
        f"{LOG0}.cleaned",
        f"{LOG0}.deleted",
    }
    assert "-delete" in skipped["orders-0.abc123-delete"]
    assert read_table(root).num_rows == sum(counts.values())


def test_every_path_of_a_shell_glob(log_dir):
    root, counts = log_dir
    rows = 0
    said = []
    for path in sorted(root.glob("orders-*")):  # what `dump data/orders-*` hands us
        inputs = resolve(path)
        said += [s.path for s in inputs.skipped]
        rows += sum(read_table(i.path).num_rows for i in inputs)
    assert rows == sum(counts.values())
    assert str(root / "orders-0.abc123-delete") in said
    # a file inside a non-live directory, or with a temporary suffix, named explicitly
    for path in (root / "orders-0.abc123-delete" / LOG0, root / "orders-0" / f"{LOG0}.swap"):
        inputs = resolve(path)
        assert list(inputs) == [] and [s.path for s in inputs.skipped] == [str(path)]


def test_discover_on_a_pyarrow_filesystem_agrees(log_dir):
    root, _ = log_dir
    sub = ArrowStorage(pafs.SubTreeFileSystem(str(root), pafs.LocalFileSystem()))
    remote = discover(sub, "")
    local = discover(ArrowStorage(pafs.LocalFileSystem()), str(root))
    assert [(t.topic, t.partition) for t in remote.targets] == [("orders", 0), ("orders", 1)]
    assert [(t.topic, t.partition) for t in local.targets] == [("orders", 0), ("orders", 1)]
    names = sorted(Path(s.path).name for s in remote.skipped)
    assert names == sorted(Path(s.path).name for s in local.skipped) and len(names) == 6
    # glob matches are not explicit, yet a -delete directory is still skipped and said
    match = discover(sub, "orders-0.abc123-delete", explicit=False)
    assert match.targets == [] and len(match.skipped) == 1


@pytest.mark.parametrize("command", [["dump"], ["verify"], ["stats", "--json"]])
def test_the_cli_says_what_it_skipped_once_per_path(log_dir, capsys, command):
    root, _ = log_dir
    paths = [str(p) for p in sorted(root.glob("orders-*"))] + [str(root)]
    assert main([*command, *paths]) == 0
    err = capsys.readouterr().err.splitlines()
    lines = [line for line in err if line.startswith("kafka-format: skipped ")]
    assert len(lines) == len(set(lines)) == 6, err
    assert f"kafka-format: skipped {root / 'orders-1.def-future'}: " in "\n".join(lines)
    assert any(f"{LOG0}.cleaned: " in line and "(.cleaned)" in line for line in lines)


def test_cli_reads_the_broker_view(log_dir, capsys):
    root, _ = log_dir
    assert main(["dump", *(str(p) for p in sorted(root.glob("orders-*")))]) == 0
    out = capsys.readouterr().out
    assert out.count("baseOffset: ") == 5 + 3  # batches of orders-0 and orders-1, once each
    assert "orders-0.abc123-delete" not in out and ".swap" not in out
    # nothing but skipped paths: each said, nothing read, no error
    only = root / "orders-0.abc123-delete"
    assert main(["verify", str(only)]) == 0
    captured = capsys.readouterr()
    assert captured.out == "" and f"skipped {only}: " in captured.err


def test_find_says_what_it_skipped_too(log_dir, capsys):
    root, _ = log_dir
    assert main(["find", str(root / "orders-0"), "--offset", "3"]) == 0
    err = capsys.readouterr().err
    assert f"kafka-format: skipped {root / 'orders-0' / LOG0}.swap: " in err
    # a skipped path given alone: find refuses it in one line of its own
    only = root / "orders-0.abc123-delete"
    assert main(["find", str(only), "--offset", "3"]) == 1
    captured = capsys.readouterr()
    assert captured.out == "" and len(captured.err.splitlines()) == 1, captured.err


def test_topic_filter_names_only_the_skipped_paths_of_its_topics(log_dir, capsys):
    root, _ = log_dir
    # another topic beside orders, with a -delete copy of its own
    with PartitionWriter(root, "clicks", 0) as w:
        w.append([Message(b"k", b"v")])
    shutil.copytree(root / "clicks-0", root / "clicks-0.fed-delete")
    assert main(["verify", "--topic", "clicks", str(root)]) == 0
    lines = [x for x in capsys.readouterr().err.splitlines() if "kafka-format: skipped" in x]
    assert len(lines) == 1
    assert lines[0].startswith(f"kafka-format: skipped {root / 'clicks-0.fed-delete'}: ")
    assert main(["verify", str(root)]) == 0
    lines = [x for x in capsys.readouterr().err.splitlines() if "kafka-format: skipped" in x]
    assert len(lines) == 7
