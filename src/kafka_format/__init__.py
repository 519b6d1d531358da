"""kafka-format: Apache Kafka's record formats as schemas, parsers and a checking runtime.

    >>> import kafka_format
    >>> for record in kafka_format.iter_records("orders-0", isolation="read_committed"):
    ...     print(record.offset, record.key, record.value)

The public names below are loaded on first use, so that importing a subpackage (say the
generated parsers on a Spark worker) does not pull in the whole runtime.
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

_EXPORTS = {
    "runtime.errors": (
        "CorruptBatchError",
        "CrcMismatchError",
        "DecompressionError",
        "DecompressionLimitError",
        "FramingError",
        "IndexFileError",
        "KafkaFormatError",
        "UnsupportedCodecError",
    ),
    "runtime.model": (
        "Batch",
        "ControlMarker",
        "ControlType",
        "Header",
        "Record",
        "Report",
        "TimestampType",
        "TimestampsOutOfRange",
        "TruncatedTail",
    ),
    "runtime.format.codecs": ("Codec",),
    "runtime.read.reader": ("iter_batches", "iter_records"),
    "runtime.read.columnar": ("arrow_schema", "iter_arrow_batches", "read_table"),
    "runtime.write.partitioner": ("default_partition", "murmur2"),
    "runtime.analysis.stats": ("log_stats",),
    "runtime.payloads.columns": ("decode_payloads",),
    "runtime.payloads.decoders": ("payload_decoder",),
    "runtime.payloads.registry": ("open_schema_source", "SchemaRegistryError"),
}
_WHERE = {name: module for module, names in _EXPORTS.items() for name in names}

__all__ = sorted(_WHERE)


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'kafka_format' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_WHERE])
