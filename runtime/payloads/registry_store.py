"""The Schema Registry's store, ``_schemas``, replayed from a backup of the Kafka log.

The registry keeps everything in one compacted partition (``kafkastore.topic``, ``_schemas``
by default; ``KafkaStore`` refuses a topic of more than one partition) and rebuilds its state
at start by reading it from the beginning (``KafkaStoreReaderThread.doWork``), with an
idempotent, not transactional, producer (``KafkaStore``: ``enable.idempotence``) and a
read_uncommitted consumer. :func:`replay` does the same, in offset order, last write wins:

* keys are Jackson JSON, ``{"keytype":"SCHEMA","subject":"orders-value","version":1,
  "magic":1}`` (``SchemaKey``'s ``@JsonPropertyOrder``); ``CONFIG``, ``MODE``, ``NOOP``,
  ``CONTEXT`` and ``ASSOC`` keys hold no schema and are passed over; a keytype the registry
  does not define, or a key or value that is not JSON, is skipped and named in ``problems``
  (the reader thread logs "Failed to deserialize" and goes on);
* a ``SCHEMA`` value (``SchemaValue``: ``subject``, ``version``, ``id``, ``schemaType``
  absent for Avro, ``references``, ``schema``, ``deleted``) registers the version under its
  key's subject and version; ``deleted: true`` is a soft delete, still resolvable by id;
* a ``SCHEMA`` tombstone (null value: a permanent delete) removes the version, and the id
  with it when no other subject version holds it (``InMemoryCache.schemaTombstoned``);
* ``DELETE_SUBJECT`` (``{"subject","version"}``) soft-deletes versions 1..version;
  ``CLEAR_SUBJECT`` (``{"subject"}``) drops a subject's soft-deleted versions; tombstones of
  either do nothing (``KafkaStoreMessageHandler.handleUpdate``: "ignore non-schema tombstone").

The log is read with :func:`~..read.reader.iter_records`, CRCs checked, ``errors="salvage"``:
a damaged batch is passed over (and named in ``problems``), the rest is kept.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ..errors import KafkaFormatError
from ..files.names import DirState, FileKind, parse_partition_dir_name, parse_segment_file_name
from ..model import Record, Report
from ..read.reader import iter_records
from ..read.sources import partition_dirs
from .registry_model import (
    HINT,
    Catalog,
    CatalogSource,
    SchemaRegistryError,
    schema_from_json,
)

__all__ = [
    "SCHEMAS_TOPIC",
    "StoreSchemaSource",
    "find_schemas_near",
    "find_schemas_partition",
    "is_segment_file",
    "replay",
]

#: ``kafkastore.topic``'s default (``SchemaRegistryConfig.DEFAULT_KAFKASTORE_TOPIC``).
SCHEMAS_TOPIC = "_schemas"
#: ``SchemaRegistryKeyType``: the keytypes the registry writes. Those holding no schema are
#: passed over quietly; any other is a record this module does not understand.
_QUIET_KEYTYPES = frozenset({"CONFIG", "MODE", "NOOP", "CONTEXT", "ASSOC"})
_SUBJECT_KEYTYPES = frozenset({"DELETE_SUBJECT", "CLEAR_SUBJECT"})


def replay(records: Iterable[Record]) -> tuple[Catalog, list[str]]:
    """The registry's state after these ``_schemas`` records, in the order given, and what
    was skipped (one line each, ``offset N: why``)."""
    catalog, problems = Catalog(), []
    for record in records:
        problem = _apply(catalog, record)
        if problem is not None:
            problems.append(f"offset {record.offset}: {problem}")
    return catalog, problems


class _Skip(Exception):
    """A record the registry's reader would pass over, and why."""


def _json(data: bytes | None, what: str) -> Any:
    """The JSON in a key or value; :class:`_Skip` when there is none."""
    if data is None:
        raise _Skip(f"no {what}")
    try:
        return json.loads(bytes(data).decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise _Skip(f"{what} is not JSON ({exc})") from None


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _apply(catalog: Catalog, record: Record) -> str | None:
    try:
        key = _json(record.key, "key")
        if not isinstance(key, dict) or not isinstance(key.get("keytype"), str):
            return "key has no keytype"
        keytype = key["keytype"]
        if keytype == "SCHEMA":
            return _schema(catalog, key, record)
        if keytype not in _QUIET_KEYTYPES | _SUBJECT_KEYTYPES:
            # SchemaRegistryKeyType.forName throws for a name it does not know.
            return f"unknown keytype {keytype!r}, skipped"
        if keytype in _QUIET_KEYTYPES or record.value is None:
            return None
        if keytype == "DELETE_SUBJECT":
            return _delete_subject(catalog, _json(record.value, "value"))
        if keytype == "CLEAR_SUBJECT":
            value = _json(record.value, "value")
            if not isinstance(value, dict):
                return "CLEAR_SUBJECT value is not an object"
            subject = value.get("subject")
            catalog.clear_subject(
                subject if isinstance(subject, str) else None, f" at offset {record.offset}"
            )
        return None
    except _Skip as skip:
        return str(skip)


def _schema(catalog: Catalog, key: dict[str, Any], record: Record) -> str | None:
    subject, version = key.get("subject"), _int(key.get("version"))
    if not isinstance(subject, str) or version is None:
        return "SCHEMA key without a subject and an integer version"
    # SchemaRegistrySerializer.validateMagicByte: only magic 0 and 1 are schema keys
    # (Jackson reads a missing "magic" as 0).
    if key.get("magic", 0) not in (0, 1):
        return f"SCHEMA key with magic {key.get('magic')!r}, skipped"
    if record.value is None:
        catalog.tombstone(subject, version, f" at offset {record.offset}")
        return None
    # The store is keyed by the record's key; the value repeats subject and version.
    schema = schema_from_json(_json(record.value, "value"), subject, version)
    if isinstance(schema, str):
        return schema
    conflict = catalog.conflict(schema)
    if conflict is not None:
        return conflict
    catalog.put(schema)
    return None


def _delete_subject(catalog: Catalog, value: Any) -> str | None:
    if not isinstance(value, dict):
        return "DELETE_SUBJECT value is not an object"
    subject, upto = value.get("subject"), _int(value.get("version"))
    if not isinstance(subject, str) or upto is None:
        # handleDeleteSubject loops to a null version: the exception is logged, nothing done.
        return "DELETE_SUBJECT value without a subject and an integer version"
    catalog.delete_subject(subject, upto)
    return None


def find_schemas_partition(log_dir: str | os.PathLike[str]) -> Path | None:
    """The ``_schemas`` partition directory of a log dir, or None: ``_schemas-0``, or the
    lowest live ``_schemas-N`` when 0 is absent (the registry uses one partition)."""
    root = Path(log_dir)
    if not root.is_dir():
        return None
    found = [
        p
        for p in partition_dirs(root)
        if _partition_topic(p.name) == SCHEMAS_TOPIC  # not _schemas2-0
    ]
    return found[0] if found else None


def find_schemas_near(path: str | os.PathLike[str]) -> Path | None:
    """The ``_schemas`` partition of the log dir ``path`` lies in: ``path`` itself a log dir,
    or one or two levels above it (a partition directory, a segment file). Every consumer's
    default schema source (``dump``, ``stats``, Spark's ``schemaRegistry``)."""
    base = Path(os.path.abspath(os.path.expanduser(os.fspath(path))))
    for candidate in (base, *list(base.parents)[:2]):
        found = find_schemas_partition(candidate)
        if found is not None:
            return found
    return None


def _partition_topic(name: str) -> str | None:
    try:
        parsed = parse_partition_dir_name(name)
    except KafkaFormatError:
        return None
    return parsed.topic if parsed.state is DirState.LIVE else None


def _is_partition_dir(path: Path) -> bool:
    """A directory holding segments, or named ``_schemas-N`` even when empty (a log dir may
    well be named like a partition, ``kafka-logs-1``: its name alone says nothing)."""
    if _partition_topic(path.name) == SCHEMAS_TOPIC:
        return True
    return any(_is_segment(p) for p in path.iterdir())


def _is_segment(path: Path) -> bool:
    parsed = parse_segment_file_name(path.name)
    return parsed is not None and parsed.kind is FileKind.LOG and path.is_file()


def is_segment_file(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is one ``.log`` segment (of ``_schemas``, presumably)."""
    return _is_segment(Path(path))


class StoreSchemaSource(CatalogSource):
    """Schemas replayed from a ``_schemas`` partition directory (or one of its segments).

    ``spec`` may be a log dir holding ``_schemas-N``, the partition directory itself (under
    any topic name: ``kafkastore.topic`` may be set), or one ``.log`` segment.
    """

    def __init__(self, spec: str | os.PathLike[str]) -> None:
        self.spec = os.fspath(spec)
        self.path = _resolve(self.spec)
        report = Report()
        try:
            self.catalog, problems = replay(
                iter_records(self.path, errors="salvage", report=report)
            )
        except KafkaFormatError as exc:
            raise SchemaRegistryError(f"cannot read {self.path}: {exc}") from None
        except OSError as exc:
            raise SchemaRegistryError(f"cannot read {self.path}: {exc.strerror or exc}") from None
        self._problems = [f"damage: {exc}" for exc in report.errors] + problems
        skipped = f", {len(self._problems)} skipped" if self._problems else ""
        self.description = (
            f"{self.path.name} in {self.path.parent} ({self.catalog.counts()}{skipped})"
        )

    def __reduce__(self) -> tuple[type[StoreSchemaSource], tuple[str]]:
        return (type(self), (self.spec,))

    @property
    def problems(self) -> list[str]:
        return list(self._problems)


def _resolve(spec: str) -> Path:
    path = Path(spec)
    if not path.exists():
        raise SchemaRegistryError(f"{spec}: no such file or directory")
    if not path.is_dir():
        return path
    try:
        if _is_partition_dir(path):
            return path
    except OSError as exc:
        raise SchemaRegistryError(f"cannot list {spec}: {exc.strerror or exc}") from None
    found = find_schemas_partition(path)
    if found is None:
        raise SchemaRegistryError(
            f"no {SCHEMAS_TOPIC} partition in {spec}: {HINT}; a registry whose "
            "kafkastore.topic is named otherwise: give that partition's directory"
        )
    return found
