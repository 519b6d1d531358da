"""kafka-format: Apache Kafka's record formats as schemas, parsers and a checking runtime.

>>> import kafka_format
>>> for record in kafka_format.iter_records("orders-0", isolation="read_committed"):
...     print(record.offset, record.key, record.value)
"""

from kafka_format.runtime.errors import (
    CorruptBatchError,
    CrcMismatchError,
    DecompressionError,
    DecompressionLimitError,
    FramingError,
    IndexFileError,
    KafkaFormatError,
    UnsupportedCodecError,
)
from kafka_format.runtime.model import (
    Batch,
    ControlMarker,
    ControlType,
    Header,
    Record,
    Report,
    TimestampType,
    TruncatedTail,
)
from kafka_format.runtime.reader import iter_batches, iter_records

__version__ = "0.1.0"

__all__ = [
    "Batch",
    "ControlMarker",
    "ControlType",
    "CorruptBatchError",
    "CrcMismatchError",
    "DecompressionError",
    "DecompressionLimitError",
    "FramingError",
    "Header",
    "IndexFileError",
    "KafkaFormatError",
    "Record",
    "Report",
    "TimestampType",
    "TruncatedTail",
    "UnsupportedCodecError",
    "iter_batches",
    "iter_records",
]
