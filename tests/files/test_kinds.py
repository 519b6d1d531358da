"""The registry of file kinds (runtime/files/kinds.py): every kind has all its roles.

A kind added to ``kinds.KINDS`` without its dumper (``runtime.cli.dump``), verifier
(``runtime.analysis.verify``) or rebuilder (``runtime.log.recover`` / ``recover_index``), or
with a role left :class:`~kinds.Unfilled` without a reason, fails here rather than at a user's
prompt. The roles are then run on a generated log dir holding a file of every kind: each is
recognised, read by its reader, dumped, verified clean, and rebuilt by ``recover`` where its
rebuilder says so.
"""

from __future__ import annotations

import io
from pathlib import Path

import pytest

# Importing these fills the roles: the dumpers (cli.dump), the verifiers (analysis.verify), the
# rebuilders (log.recover, which imports log.recover_index).
from kafka_format.runtime.analysis.verify import verify_paths
from kafka_format.runtime.cli.dump import dump as dump_files
from kafka_format.runtime.cli.dump import dumper_for
from kafka_format.runtime.cli.text import DumpOptions
from kafka_format.runtime.files import checkpoints, kinds
from kafka_format.runtime.files.names import TEMP_SUFFIXES, FileKind, segment_file_name
from kafka_format.runtime.log.recover import recover
from kafka_format.runtime.write.generate import EXPECTED_FILE, generate_log_dir


def unfilled_roles(entries: tuple[kinds.Kind, ...]) -> list[str]:
    """``kind role: why`` for each role of ``entries`` neither filled nor said to be unfilled
    with a reason, the reader included."""
    wrong = []
    for kind in entries:
        for name, found in [("reader", kind.reader), *kind.roles.items()]:
            if found is None:
                wrong.append(f"{kind.key} {name}: not registered")
            elif isinstance(found, kinds.Unfilled):
                if not found.reason.strip():
                    wrong.append(f"{kind.key} {name}: unfilled without a reason")
            elif not callable(found):
                wrong.append(f"{kind.key} {name}: {found!r} is not callable")
    return wrong


# --- the registry itself ---------------------------------------------------------------------


def test_every_kind_has_its_reader_dumper_verifier_and_rebuilder():
    assert not unfilled_roles(kinds.KINDS), "\n".join(unfilled_roles(kinds.KINDS))


def test_a_kind_without_its_roles_is_caught():
    new = kinds.Kind(
        "new", kinds.Scope.PARTITION, "a file Kafka adds", print, names=frozenset({"new"})
    )
    assert unfilled_roles((new,)) == [
        "new dumper: not registered",
        "new verifier: not registered",
        "new rebuilder: not registered",
    ]
    with pytest.raises(ValueError, match="not an entry of KINDS"):
        kinds.register(new, dumper=print)  # one entry in KINDS first


def test_only_the_layers_that_fill_a_role_are_imported_by_the_registry():
    """The registry names no layer above it: the roles come to it (tests/test_architecture.py
    holds the imports to that; here, the text too)."""
    source = Path(kinds.__file__).read_text()
    for layer in ("..cli", "..analysis", "..log", "..read"):
        assert f"from {layer}" not in source


def test_a_role_is_filled_once():
    dumper = kinds.role(kinds.INDEX, "dumper")
    kinds.register(kinds.INDEX, dumper=dumper)  # the same again (a reload): accepted
    with pytest.raises(ValueError, match="has a dumper already"):
        kinds.register(kinds.INDEX, dumper=print)
    with pytest.raises(TypeError, match="neither callable nor Unfilled"):
        kinds.register(kinds.INDEX, verifier="check it")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="says why"):
        kinds.Unfilled(" ")
    with pytest.raises(ValueError, match="not a role"):
        kinds.role_of(kinds.INDEX, "reader")
    assert kinds.role(kinds.INDEX, "dumper") is dumper


def test_an_unfilled_role_says_why_when_asked_for():
    reason = kinds.role_of(kinds.PARTITION_METADATA, "rebuilder")
    assert isinstance(reason, kinds.Unfilled) and "copied" in reason.reason
    with pytest.raises(LookupError, match=r"partition\.metadata has no rebuilder: copied"):
        kinds.role(kinds.PARTITION_METADATA, "rebuilder")


def test_entries_are_distinct_and_described():
    assert len({k.key for k in kinds.KINDS}) == len(kinds.KINDS)
    for kind in kinds.KINDS:
        assert kind.description and "\n" not in kind.description, kind.key
        assert kind.segment_kind or kind.names or kind.suffixes, f"{kind.key}: unrecognisable"
        assert (kind.scope is kinds.Scope.SEGMENT) == (kind.segment_kind is not None), kind.key
        assert not kind.companion or kind.segment_kind is not None, kind.key
    names = [n for k in kinds.KINDS for n in k.names]
    assert len(names) == len(set(names))


def test_every_segment_family_member_and_checkpoint_has_an_entry():
    assert {k.segment_kind for k in kinds.KINDS if k.segment_kind} == set(FileKind)
    for kind in FileKind:
        assert kinds.of_segment(kind).segment_kind is kind
    named = {
        checkpoints.LEADER_EPOCH_CHECKPOINT,
        checkpoints.PARTITION_METADATA,
        *checkpoints.OFFSET_CHECKPOINTS,
        *checkpoints.UNKNOWN_FILES,
    }
    assert {n for k in kinds.KINDS for n in k.names} == named


def test_companions_are_the_segment_files_recover_rebuilds_beside_each_log():
    assert [k.segment_kind for k in kinds.COMPANIONS] == [
        FileKind.INDEX,
        FileKind.TIME_INDEX,
        FileKind.TXN_INDEX,
    ]
    # SegmentOut.close calls them: none may be unfilled
    for kind in kinds.COMPANIONS:
        assert callable(kinds.role(kind, "rebuilder"))
    assert kinds.PARTITION_FILES == (kinds.LEADER_EPOCH_CHECKPOINT, kinds.PARTITION_METADATA)


@pytest.mark.parametrize(
    ("name", "key"),
    [
        ("00000000000000000120.log", "log"),
        ("00000000000000000120.index", "index"),
        ("00000000000000000120.timeindex", "timeindex"),
        ("00000000000000000120.txnindex", "txnindex"),
        ("00000000000000000120.snapshot", "snapshot"),
        ("120.index", "index"),  # Kafka takes any decimal offset
        ("orders-0.00000000000000000120.timeindex", "timeindex"),  # a renamed copy
        ("copy.snapshot", "snapshot"),
        ("leader-epoch-checkpoint", "leader-epoch-checkpoint"),
        ("partition.metadata", "partition.metadata"),
        ("recovery-point-offset-checkpoint", "offset-checkpoint"),
        ("replication-offset-checkpoint", "offset-checkpoint"),
        ("log-start-offset-checkpoint", "offset-checkpoint"),
        ("cleaner-offset-checkpoint", "offset-checkpoint"),
        ("meta.properties", "unknown"),
        ("quorum-state", "unknown"),
        (".kafka_cleanshutdown", "unknown"),
        (".lock", "unknown"),
        ("00000000000000000120.log.tmp", "unknown"),
        ("server.properties", "unknown"),
        ("00000000000000000120-0000000003.checkpoint", None),  # KRaft snapshot: batches
        ("00000000000000000120-mTjyhvN8QCuAvYqJZP6ZpA.log", "log"),  # tiered storage
        ("00000000000000000120-mTjyhvN8QCuAvYqJZP6ZpA.index", "index"),
        (
            "00000000000000000120-mTjyhvN8QCuAvYqJZP6ZpA.leader_epoch_checkpoint",
            "leader_epoch_checkpoint",
        ),
        ("dump.bin", None),
        ("EXPECTED.json", None),
    ],
)
def test_classify(name, key):
    found = kinds.classify(name)
    assert (found.key if found is not None else None) == key


@pytest.mark.parametrize("temp", TEMP_SUFFIXES)
@pytest.mark.parametrize("kind", list(FileKind))
def test_a_temporary_file_is_of_its_member_kind(kind, temp):
    assert kinds.classify(segment_file_name(7, kind, temp)) is kinds.of_segment(kind)


def test_reports_call_a_checkpoint_by_its_name():
    assert kinds.INDEX.label_of("00000000000000000000.index") == "index"
    assert kinds.PRODUCER_SNAPSHOT.label_of("x.snapshot") == "snapshot"
    assert kinds.UNKNOWN.label_of("meta.properties") == "unknown"
    for name in checkpoints.OFFSET_CHECKPOINTS:
        assert kinds.OFFSET_CHECKPOINT.label_of(name) == name
    assert kinds.PARTITION_METADATA.label_of("partition.metadata") == "partition.metadata"


# --- the roles at work, on a log dir holding every kind -------------------------------------


@pytest.fixture(scope="module")
def log_dir(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("kinds") / "kafka"
    generate_log_dir(root, topics=["orders"], partitions=1, records=300, segment_bytes=16384)
    (root / EXPECTED_FILE).unlink()
    # Tiered storage's per-segment leader epochs (no broker writes one into a log dir): a copy
    # of the partition's checkpoint under a remote object's name, in a folder of its own.
    tiered = root / "tiered"
    tiered.mkdir()
    name = "00000000000000000000-mTjyhvN8QCuAvYqJZP6ZpA.leader_epoch_checkpoint"
    (tiered / name).write_bytes(
        (root / "orders-0" / checkpoints.LEADER_EPOCH_CHECKPOINT).read_bytes()
    )
    return root


def _files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file())


def test_the_log_dir_holds_every_kind(log_dir):
    found = {kinds.classify(p.name) for p in _files(log_dir)}
    assert None not in found
    assert found == set(kinds.KINDS), "add a file of the new kind to this log dir"


def test_every_file_is_read_by_its_kinds_reader(log_dir):
    for path in _files(log_dir):
        kind = kinds.classify(path.name)
        assert kind is not None
        if isinstance(kind.reader, kinds.Unfilled):
            continue
        opened = kind.reader(path)
        close = getattr(opened, "close", None)
        if close is not None:
            close()


def test_every_file_is_dumped_by_its_kinds_dumper(log_dir):
    for path in _files(log_dir):
        kind = kinds.classify(path.name)
        assert kind is not None
        assert dumper_for(str(path)) is kinds.role(kind, "dumper")
        out, err = io.StringIO(), io.StringIO()
        status = dump_files([str(path)], DumpOptions(quiet=True), out, err)
        assert status == 0, (path.name, err.getvalue())
        assert out.getvalue() or err.getvalue().startswith("Ignoring unknown file"), path.name


def test_every_file_is_verified_by_its_kinds_verifier(log_dir):
    for path in _files(log_dir):
        kind = kinds.classify(path.name)
        assert kind is not None
        report = verify_paths([path])
        assert report.ok, (path.name, [p.message for p in report.errors])
        assert report.files[0].kind == kind.label_of(path.name)


def test_recover_writes_every_kind_it_has_a_rebuilder_for(log_dir, tmp_path):
    copy = tmp_path / "copy"
    recover(log_dir, copy)
    written = {kinds.classify(p.name) for p in _files(copy)}
    for kind in kinds.KINDS:
        rebuilder = kinds.role_of(kind, "rebuilder")
        if callable(rebuilder):
            assert kind in written, f"{kind.key}: a rebuilder, but no file of it in the copy"
    # the unfilled ones say what happens instead: the log's batches and partition.metadata
    # are copied, meta.properties too
    assert {kinds.LOG, kinds.PARTITION_METADATA, kinds.UNKNOWN} <= written
    assert not (copy / ".kafka_cleanshutdown").exists()
