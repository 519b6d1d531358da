"""A topic's schema history: which Schema Registry ids, subjects and versions its keys and
values were written with, when each was first and last seen, and what does not decode.

    >>> from kafka_format.runtime.analysis.schema_history import schema_history
    >>> from kafka_format.runtime.payloads.registry import open_schema_source
    >>> source = open_schema_source(None, log_dir="/var/lib/kafka")
    >>> for part in schema_history(["/var/lib/kafka"], source):
    ...     for use in part.uses:
    ...         print(part.topic, part.part, use.schema_id, use.subject, use.version, use.records)

Every data record's key and value is classed once (``stats --schemas``):

* null (a null key, a tombstone);
* unframed: not in Confluent's wire format (its first byte is not 0, or it is shorter than
  the header), a record a plain producer wrote;
* unknown id: framed, but the source has no schema of that id;
* decoded, or undecodable: framed with a known id, and its payload parses under that
  schema or not (each counted under its id, with the first reason seen).

First and last are by timestamp (then partition and offset), since a topic's partitions have
offsets of their own: the first and the last record written with each schema.
The registry's own topic ``_schemas`` is left out: its records are the schemas.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

from ..payloads.decoders import payload_decoder
from ..payloads.registry import SchemaSource
from ..payloads.wire import WireFormatError, read_header
from ..read.columnar import iter_arrow_batches

__all__ = ["PartSchemas", "SchemaUse", "Seen", "schema_history"]

#: The registry's store (``kafkastore.topic``'s default): its records are not payloads.
REGISTRY_TOPIC = "_schemas"


@dataclass(slots=True, frozen=True)
class Seen:
    """One record: where it is and when it was written."""

    partition: int | None
    offset: int
    timestamp: int | None  # milliseconds since the epoch

    def key(self) -> tuple[int, int, int]:
        ts = self.timestamp if self.timestamp is not None else -(1 << 63)
        return ts, self.partition if self.partition is not None else -1, self.offset

    def as_json(self) -> dict[str, Any]:
        return {"partition": self.partition, "offset": self.offset, "timestamp": self.timestamp}


@dataclass(slots=True)
class SchemaUse:
    """The records of one part of one topic framed with one schema id."""

    schema_id: int
    subject: str | None = None  # None: the source does not know the id
    version: int | None = None
    schema_type: str | None = None
    deleted: bool = False
    records: int = 0
    undecodable: int = 0
    #: the first reason a record of this id did not decode
    reason: str | None = None
    first: Seen | None = None
    last: Seen | None = None

    def saw(self, seen: Seen) -> None:
        self.records += 1
        if self.first is None or seen.key() < self.first.key():
            self.first = seen
        if self.last is None or seen.key() > self.last.key():
            self.last = seen

    def as_json(self) -> dict[str, Any]:
        return {
            "schemaId": self.schema_id,
            "subject": self.subject,
            "version": self.version,
            "schemaType": self.schema_type,
            "deleted": self.deleted,
            "records": self.records,
            "undecodable": self.undecodable,
            "reason": self.reason,
            "first": None if self.first is None else self.first.as_json(),
            "last": None if self.last is None else self.last.as_json(),
        }


@dataclass(slots=True)
class PartSchemas:
    """One topic's keys or values: the schemas they use, and what is not framed."""

    topic: str | None
    part: str  # "key" or "value"
    records: int = 0
    null: int = 0
    unframed: int = 0
    #: framed with an id the source does not hold (counted in their ``SchemaUse`` too)
    unknown_id: int = 0
    uses: list[SchemaUse] = field(default_factory=list)

    @property
    def undecodable(self) -> int:
        return sum(u.undecodable for u in self.uses)

    def as_json(self) -> dict[str, Any]:
        return {
            "topic": self.topic,
            "part": self.part,
            "records": self.records,
            "null": self.null,
            "unframed": self.unframed,
            "unknownId": self.unknown_id,
            "undecodable": self.undecodable,
            "schemas": [u.as_json() for u in self.uses],
        }


class _Part:
    """What one topic's part is gathering."""

    __slots__ = ("out", "uses")

    def __init__(self, topic: str | None, part: str) -> None:
        self.out = PartSchemas(topic, part)
        self.uses: dict[int, SchemaUse] = {}


def schema_history(
    paths: Sequence[str | os.PathLike[str]],
    source: SchemaSource,
    *,
    parts: Sequence[str] = ("key", "value"),
    decode: bool = True,
    errors: str = "skip",
    threads: int | None = None,
) -> list[PartSchemas]:
    """The schema history of each topic's keys and values under ``paths`` (files, partition
    directories or log directories), by topic then part; a part with no framed record is
    left out (plain string keys do not fill the table). ``decode``: also parse each framed
    payload (else only the header is read, and nothing is counted undecodable). ``errors``:
    as the readers' (``skip``: damaged batches are passed over, as ``stats`` passes
    them)."""
    decoder = payload_decoder("schema-registry", source)
    found: dict[tuple[str | None, str], _Part] = {}
    for path in paths:
        for batch in iter_arrow_batches(path, errors=errors, threads=threads):  # type: ignore[arg-type]
            _gather(batch, parts, source, decoder if decode else None, found)
    out = []
    for (_topic, _part), gathered in sorted(
        found.items(), key=lambda kv: (kv[0][0] or "", kv[0][1])
    ):
        result = gathered.out
        result.uses = sorted(
            gathered.uses.values(),
            key=lambda u: (u.first.key() if u.first else (0, 0, 0), u.schema_id),
        )
        if result.uses:
            out.append(result)
    return out


def _gather(
    batch: pa.RecordBatch,
    parts: Sequence[str],
    source: SchemaSource,
    decoder: Any,
    found: dict[tuple[str | None, str], _Part],
) -> None:
    names = batch.schema.names
    topics = batch.column(names.index("topic")).to_pylist()
    partitions = batch.column(names.index("partition")).to_pylist()
    offsets = batch.column(names.index("offset")).to_pylist()
    stamps = batch.column(names.index("timestamp")).cast(pa.int64()).to_pylist()
    for part in parts:
        payloads = batch.column(names.index(part)).to_pylist()
        for i, data in enumerate(payloads):
            topic = topics[i]
            if topic == REGISTRY_TOPIC:
                continue
            gathered = found.get((topic, part))
            if gathered is None:
                gathered = found[(topic, part)] = _Part(topic, part)
            _one(
                gathered, data, Seen(partitions[i], offsets[i], _millis(stamps[i])), source, decoder
            )


def _millis(micros: int | None) -> int | None:
    return None if micros is None else micros // 1000


def _one(
    gathered: _Part, data: bytes | None, seen: Seen, source: SchemaSource, decoder: Any
) -> None:
    out = gathered.out
    out.records += 1
    if data is None:
        out.null += 1
        return
    try:
        schema_id = read_header(data)
    except WireFormatError:
        out.unframed += 1
        return
    use = gathered.uses.get(schema_id)
    if use is None:
        schema = source.by_id(schema_id)
        use = gathered.uses[schema_id] = SchemaUse(schema_id)
        if schema is not None:
            use.subject, use.version = schema.subject, schema.version
            use.schema_type, use.deleted = schema.schema_type, schema.deleted
    use.saw(seen)
    if use.subject is None:
        out.unknown_id += 1
        return
    if decoder is not None:
        decoded = decoder.decode(data)
        if decoded.error is not None:
            use.undecodable += 1
            if use.reason is None:
                use.reason = decoded.error
