"""Schema sources: which schema a Schema Registry id (or subject and version) names, offline.

    >>> from kafka_format.runtime.payloads.registry import open_schema_source
    >>> source = open_schema_source("/var/lib/kafka")          # finds _schemas-0 in it
    >>> source.description
    '_schemas-0 in /var/lib/kafka (12 schemas, 5 subjects)'
    >>> schema = source.by_id(3)
    >>> schema.subject, schema.version, schema.schema_type
    ('orders-value', 2, 'AVRO')
    >>> [source.reference(ref, schema).subject for ref in schema.references]
    []

:func:`open_schema_source` takes, as a string or path:

* a Kafka log directory holding the registry's store, ``_schemas-0`` (``registry_store``
  replays it as the registry does at start);
* a ``_schemas-N`` partition directory itself (any topic name: ``kafkastore.topic`` may be
  set), or one ``.log`` segment of it;
* a JSON export file: what ``GET /schemas?deleted=true`` answers, a list of ``{"subject",
  "version", "id", "schemaType"?, "schema", "references"?, "deleted"?}``, or an object holding
  that list under ``"schemas"``;
* an ``http://`` or ``https://`` URL of a live registry (``registry_http``).

``None`` means the log dir being read (``log_dir``), when it holds ``_schemas``. Every source
has a ``spec``, the string it was opened from: pickling one ships only that, and the unpickled
source opens it again (Spark executors).

Bad input is a :class:`SchemaRegistryError`, one line naming the source; records of the store
that the registry would not read either are passed over and listed in ``problems``.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

from .registry_http import DEFAULT_TIMEOUT, HttpSchemaSource
from .registry_model import (
    HINT,
    Catalog,
    CatalogSource,
    RegisteredSchema,
    SchemaReference,
    SchemaRegistryError,
    SchemaSource,
    schema_from_json,
)
from .registry_store import StoreSchemaSource, find_schemas_partition, is_segment_file

__all__ = [
    "DEFAULT_TIMEOUT",
    "ExportSchemaSource",
    "HttpSchemaSource",
    "RegisteredSchema",
    "SchemaReference",
    "SchemaRegistryError",
    "SchemaSource",
    "StoreSchemaSource",
    "open_schema_source",
]

_URL = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")


def open_schema_source(
    spec: str | os.PathLike[str] | None, *, log_dir: str | os.PathLike[str] | None = None
) -> SchemaSource:
    """The schema source ``spec`` names (see the module's docstring); with ``spec`` None,
    the ``_schemas`` partition of ``log_dir``. A URL is asked once here (its root resource),
    so that a registry that cannot be reached is said now, not at the first record."""
    text = None if spec is None else os.fspath(spec)
    if not text:  # an empty --schema-registry is no choice made
        return _from_log_dir(log_dir)
    scheme = _URL.match(text)
    if scheme is not None:
        if scheme.group(1).lower() not in ("http", "https"):
            raise SchemaRegistryError(
                f"{text}: a schema registry URL is http:// or https://, not {scheme.group(1)}://"
            )
        source = HttpSchemaSource(text)
        source.check()
        return source
    path = Path(text)
    if not path.exists():
        raise SchemaRegistryError(f"{text}: no such file or directory; {HINT}")
    if path.is_dir() or is_segment_file(path):
        return StoreSchemaSource(text)
    return ExportSchemaSource(text)


def _from_log_dir(log_dir: str | os.PathLike[str] | None) -> SchemaSource:
    if log_dir is None:
        raise SchemaRegistryError(f"no schema source: {HINT}")
    found = find_schemas_partition(log_dir)
    if found is None:
        raise SchemaRegistryError(f"no _schemas partition in {os.fspath(log_dir)}: {HINT}")
    # Its own spec is the partition directory: what an executor can open again.
    return StoreSchemaSource(str(found))


class ExportSchemaSource(CatalogSource):
    """Schemas from a JSON export of a registry (``GET /schemas?deleted=true``).

    Entries are taken in file order (a later one for the same subject version wins), with the
    store's rules (``registry_model.Catalog``). An entry that is not a schema is passed over
    and listed in ``problems``; a file that is not such an export is an error.
    """

    def __init__(self, spec: str | os.PathLike[str]) -> None:
        self.spec = os.fspath(spec)
        self.catalog = Catalog()
        self._problems: list[str] = []
        for index, entry in enumerate(_entries(self.spec)):
            problem = self._add(entry)
            if problem is not None:
                self._problems.append(f"entry {index}: {problem}")
        skipped = f", {len(self._problems)} skipped" if self._problems else ""
        self.description = f"export {self.spec} ({self.catalog.counts()}{skipped})"

    def _add(self, entry: Any) -> str | None:
        if not isinstance(entry, dict):
            return f"JSON {type(entry).__name__}, not an object"
        subject, version = entry.get("subject"), entry.get("version")
        if not isinstance(subject, str) or not isinstance(version, int) or version is True:
            return "no subject and integer version"
        schema = schema_from_json(entry, subject, version)
        if isinstance(schema, str):
            return schema
        conflict = self.catalog.conflict(schema)
        if conflict is not None:
            return conflict
        self.catalog.put(schema)
        return None

    def __reduce__(self) -> tuple[type[ExportSchemaSource], tuple[str]]:
        return (type(self), (self.spec,))

    @property
    def problems(self) -> list[str]:
        return list(self._problems)


def _entries(spec: str) -> list[Any]:
    try:
        with open(spec, "rb") as fh:
            data = json.loads(fh.read().decode("utf-8"))
    except OSError as exc:
        raise SchemaRegistryError(f"cannot read {spec}: {exc.strerror or exc}") from None
    except (UnicodeDecodeError, ValueError) as exc:
        raise SchemaRegistryError(
            f"{spec}: not a schema export (JSON from GET /schemas?deleted=true): {exc}"
        ) from None
    if isinstance(data, dict) and isinstance(data.get("schemas"), list):
        data = data["schemas"]
    if not isinstance(data, list):
        raise SchemaRegistryError(
            f"{spec}: not a schema export: JSON {type(data).__name__}, where GET "
            "/schemas?deleted=true answers a list"
        )
    return data
