"""What :func:`~.stats.log_stats` answers: per magic, codec and timestamp type counts
(:class:`MagicStats`, :class:`CodecStats`, :class:`TimestampRange`), damage met
(:class:`Damage`), a partition's or file's sums (:class:`PartitionStats`), the whole answer
(:class:`LogStats`), and the JSON field tables Spark's columns follow. The breakdown's four
places are described in :mod:`.stats`."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from ..errors import KafkaFormatError
from ..format.codecs import Codec
from ..model import TimestampType
from .whatif import WhatIf, rounded

CODEC_NAMES = {int(c): c.name.lower() for c in Codec}
TS_NAMES = {int(t): t.label for t in TimestampType}


# --- results ----------------------------------------------------------------------------------


#: (JSON name, attribute) of MagicStats and CodecStats: ``as_json`` and Spark's columns.
MAGIC_JSON_FIELDS = (
    ("batches", "batches"),
    ("records", "records"),
    ("bytes", "bytes"),
    ("batchHeaderBytes", "batch_header_bytes"),
    ("messageHeaderBytes", "message_header_bytes"),
    ("recordFramingBytes", "record_framing_bytes"),
    ("payloadBytes", "payload_bytes"),
)
CODEC_JSON_FIELDS = (
    ("batches", "batches"),
    ("records", "records"),
    ("bytes", "bytes"),
    ("compressedBytes", "compressed_bytes"),
    ("uncompressedBytes", "uncompressed_bytes"),
)


@dataclass(slots=True)
class MagicStats:
    """The data batches of one magic: counts, bytes on disk, and the uncompressed breakdown."""

    batches: int = 0
    records: int = 0
    bytes: int = 0
    batch_header_bytes: int = 0
    message_header_bytes: int = 0
    record_framing_bytes: int = 0
    payload_bytes: int = 0

    def merge(self, other: MagicStats) -> None:
        _add_fields(self, other)

    def as_json(self) -> dict[str, int]:
        return {name: getattr(self, attr) for name, attr in MAGIC_JSON_FIELDS}


@dataclass(slots=True)
class CodecStats:
    """The data batches of one codec. ``compressed_bytes``: their record payloads as stored (the
    v2 records section, a wrapper's value; for ``none`` v2 records sections and v0/v1 messages
    whole); ``uncompressed_bytes``: the same decompressed."""

    batches: int = 0
    records: int = 0
    bytes: int = 0
    compressed_bytes: int = 0
    uncompressed_bytes: int = 0

    @property
    def ratio(self) -> float | None:
        """Uncompressed / compressed bytes of the record payloads."""
        return self.uncompressed_bytes / self.compressed_bytes if self.compressed_bytes else None

    def merge(self, other: CodecStats) -> None:
        _add_fields(self, other)

    def as_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {name: getattr(self, attr) for name, attr in CODEC_JSON_FIELDS}
        out["ratio"] = rounded(self.ratio)
        return out


@dataclass(slots=True)
class TimestampRange:
    """Data records of one timestamp type and their timestamps (epoch ms; None for v0)."""

    records: int = 0
    min: int | None = None
    max: int | None = None

    def add(self, records: int, lo: int | None, hi: int | None) -> None:
        self.records += records
        if lo is not None:
            self.min = lo if self.min is None else min(self.min, lo)
        if hi is not None:
            self.max = hi if self.max is None else max(self.max, hi)

    def merge(self, other: TimestampRange) -> None:
        self.add(other.records, other.min, other.max)

    def as_json(self) -> dict[str, Any]:
        return {"records": self.records, "min": self.min, "max": self.max}


@dataclass(slots=True, frozen=True)
class Damage:
    """A batch that could not be read (or, ``kind="framing"``, where a file stopped)."""

    file: str | None
    position: int | None
    base_offset: int | None
    reason: str
    kind: str = "batch"
    #: Bytes concerned, for truncated tails.
    size: int | None = None

    @classmethod
    def of(cls, exc: KafkaFormatError, kind: str = "batch") -> Damage:
        return cls(exc.file, exc.position, exc.base_offset, exc.reason, kind)

    def __str__(self) -> str:
        return str(KafkaFormatError(self.reason, file=self.file, position=self.position,
                                    base_offset=self.base_offset))  # fmt: skip

    def as_json(self) -> dict[str, Any]:
        return {
            "file": self.file,
            "position": self.position,
            "baseOffset": self.base_offset,
            "kind": self.kind,
            "error": self.reason,
        }


@dataclass(slots=True)
class PartitionStats:
    """Everything ``stats`` tells about one partition (or file, or the total)."""

    topic: str | None = None
    partition: int | None = None
    #: The partition directory, or the file when it is not in one; None for the total.
    source: str | None = None
    files: int = 0
    #: Sizes of the files (or buffers) read.
    bytes: int = 0
    #: Valid batches, control batches included, and their bytes.
    batches: int = 0
    batch_bytes: int = 0
    #: Data records (what a consumer sees; markers are control records).
    records: int = 0
    control_batches: int = 0
    control_records: int = 0
    control_bytes: int = 0
    damaged_batches: int = 0
    damaged_bytes: int = 0
    truncated_bytes: int = 0
    #: Bytes after a frame whose length cannot be stepped over (the rest of the file).
    unreadable_bytes: int = 0
    batch_header_bytes: int = 0
    message_header_bytes: int = 0
    record_framing_bytes: int = 0
    key_bytes: int = 0
    value_bytes: int = 0
    header_key_bytes: int = 0
    header_value_bytes: int = 0
    #: Record headers (count), records with a null key, records with a null value.
    headers: int = 0
    null_keys: int = 0
    null_values: int = 0
    magic: dict[int, MagicStats] = field(default_factory=dict)
    codecs: dict[str, CodecStats] = field(default_factory=dict)
    #: Data batches by how many records they hold (v0/v1 uncompressed messages hold one).
    records_per_batch: Counter[int] = field(default_factory=Counter)
    timestamps: dict[str, TimestampRange] = field(default_factory=dict)
    producer_ids: set[int] = field(default_factory=set)
    #: Data batches with a producer id (idempotent producers), and transactional ones.
    idempotent_batches: int = 0
    transactional_batches: int = 0
    damage: list[Damage] = field(default_factory=list)
    #: Truncated tails (``kind="truncated"``): not damage, Kafka stops reading there too.
    tails: list[Damage] = field(default_factory=list)
    what_if: WhatIf | None = None

    @property
    def label(self) -> str:
        if self.topic is not None and self.partition is not None:
            return f"{self.topic}-{self.partition}"
        return self.source or "total"

    @property
    def payload_bytes(self) -> int:
        return self.key_bytes + self.value_bytes + self.header_key_bytes + self.header_value_bytes

    @property
    def header_bytes(self) -> int:
        """Batch and message headers together."""
        return self.batch_header_bytes + self.message_header_bytes

    @property
    def overhead_bytes(self) -> int:
        return self.header_bytes + self.record_framing_bytes

    @property
    def uncompressed_bytes(self) -> int:
        """The data batches without compression: headers + framing + payload."""
        return self.overhead_bytes + self.payload_bytes

    @property
    def data_batches(self) -> int:
        return self.batches - self.control_batches

    def per_record(self, value: int) -> float | None:
        return value / self.records if self.records else None

    def records_per_batch_summary(self) -> dict[str, float | int] | None:
        """min / median / mean / max records of the data batches (None without any)."""
        counts = self.records_per_batch
        batches = sum(counts.values())
        if not batches:
            return None
        keys = sorted(counts)
        return {
            "min": keys[0],
            "median": _counter_median(counts, keys, batches),
            "mean": sum(k * v for k, v in counts.items()) / batches,
            "max": keys[-1],
        }

    def merge(self, other: PartitionStats) -> None:
        """Add ``other`` (another file of the partition, or a partition into the total)."""
        for name in _SUMMED:
            setattr(self, name, getattr(self, name) + getattr(other, name))
        for m, s in other.magic.items():
            self.magic.setdefault(m, MagicStats()).merge(s)
        for c, s in other.codecs.items():
            self.codecs.setdefault(c, CodecStats()).merge(s)
        for t, r in other.timestamps.items():
            self.timestamps.setdefault(t, TimestampRange()).merge(r)
        self.records_per_batch.update(other.records_per_batch)
        self.producer_ids |= other.producer_ids
        self.damage.extend(other.damage)
        self.tails.extend(other.tails)

    def as_json(self) -> dict[str, Any]:
        """The JSON form (``docs/stats.md`` describes every field)."""
        per_batch = self.records_per_batch_summary()
        out: dict[str, Any] = {
            "topic": self.topic,
            "partition": self.partition,
            "source": self.source,
            "files": self.files,
            "bytes": self.bytes,
            "batches": self.batches,
            "batchBytes": self.batch_bytes,
            "records": self.records,
            "recordsPerBatch": None
            if per_batch is None
            else {k: rounded(v) for k, v in per_batch.items()},
            "magic": {str(m): self.magic[m].as_json() for m in sorted(self.magic)},
            "codecs": {c: self.codecs[c].as_json() for c in sorted(self.codecs, key=_codec_order)},
            "sizes": {
                "batchHeaderBytes": self.batch_header_bytes,
                "messageHeaderBytes": self.message_header_bytes,
                "recordFramingBytes": self.record_framing_bytes,
                "keyBytes": self.key_bytes,
                "valueBytes": self.value_bytes,
                "headerKeyBytes": self.header_key_bytes,
                "headerValueBytes": self.header_value_bytes,
                "payloadBytes": self.payload_bytes,
                "uncompressedBytes": self.uncompressed_bytes,
                "controlBytes": self.control_bytes,
            },
            "recordFields": {
                "headers": self.headers,
                "nullKeys": self.null_keys,
                "nullValues": self.null_values,
            },
            "perRecord": {
                "headerBytes": rounded(self.per_record(self.header_bytes)),
                "framingBytes": rounded(self.per_record(self.record_framing_bytes)),
                "payloadBytes": rounded(self.per_record(self.payload_bytes)),
                "bytes": rounded(self.per_record(self.batch_bytes - self.control_bytes)),
            },
            "timestamps": {t: self.timestamps[t].as_json() for t in sorted(self.timestamps)},
            "producers": {
                "distinct": len(self.producer_ids),
                "minId": min(self.producer_ids) if self.producer_ids else None,
                "maxId": max(self.producer_ids) if self.producer_ids else None,
                "idempotentBatches": self.idempotent_batches,
                "transactionalBatches": self.transactional_batches,
                "controlBatches": self.control_batches,
                "controlRecords": self.control_records,
            },
            "damage": {
                "batches": self.damaged_batches,
                "bytes": self.damaged_bytes,
                "truncatedBytes": self.truncated_bytes,
                "unreadableBytes": self.unreadable_bytes,
                "problems": [d.as_json() for d in self.damage],
                "truncated": [t.as_json() for t in self.tails],
            },
        }
        if self.what_if is not None:
            out["whatIf"] = self.what_if.as_json()
        return out


_SUMMED = (
    "files", "bytes", "batches", "batch_bytes", "records", "control_batches", "control_records",
    "control_bytes", "damaged_batches", "damaged_bytes", "truncated_bytes", "unreadable_bytes",
    "batch_header_bytes", "message_header_bytes", "record_framing_bytes", "key_bytes",
    "value_bytes", "header_key_bytes", "header_value_bytes", "headers", "null_keys",
    "null_values", "idempotent_batches", "transactional_batches",
)  # fmt: skip


@dataclass(slots=True)
class LogStats:
    """The answer of :func:`log_stats`."""

    partitions: list[PartitionStats]
    total: PartitionStats
    seconds: float = 0.0

    @property
    def what_if(self) -> WhatIf | None:
        return self.total.what_if

    @property
    def ok(self) -> bool:
        return not self.total.damage

    @property
    def bytes_per_second(self) -> float | None:
        return self.total.bytes / self.seconds if self.seconds > 0 else None

    def as_json(self) -> dict[str, Any]:
        return {
            "partitions": [p.as_json() for p in self.partitions],
            "total": self.total.as_json(),
            "seconds": rounded(self.seconds),
            "bytesPerSecond": rounded(self.bytes_per_second),
        }


# --- helpers ----------------------------------------------------------------------------------


def _add_fields(target: Any, other: Any) -> None:
    for name in target.__slots__:
        setattr(target, name, getattr(target, name) + getattr(other, name))


def _counter_median(counts: Counter[int], keys: list[int], n: int) -> float | int:
    """The median of the multiset ``counts`` (the mean of the two middle values for even n),
    as ``statistics.median`` of the expanded list would give."""
    lower, upper = (n - 1) // 2, n // 2
    seen = 0
    low = high = None
    for k in keys:
        seen += counts[k]
        if low is None and seen > lower:
            low = k
        if seen > upper:
            high = k
            break
    assert low is not None and high is not None
    return low if low == high else (low + high) / 2


def _codec_order(name: str) -> int:
    for c, n in CODEC_NAMES.items():
        if n == name:
            return c
    return 99
