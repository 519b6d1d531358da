"""Records as Arrow, the reference way: :func:`~.reader.iter_records` (the generated Kaitai
parsers) turned into Arrow rows. Slow and simple; the fast path in ``columnar.py`` must give
the same tables, and the tests hold it to that.

Also the pieces both paths share: the Arrow schema (Spark's own Kafka source columns ``key``,
``value``, ``topic``, ``partition``, ``offset``, ``timestamp``, ``timestampType`` and, with
``include_headers``, ``headers``) and the conversion of :class:`~.model.Record` lists, which
the fast path uses for the batches it hands to the reference decoder.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import pyarrow as pa

from ..format.codecs import DEFAULT_MAX_BYTES
from ..model import Record, Report
from .reader import Errors, Isolation, iter_records
from .sources import Source

HEADER_TYPE = pa.list_(pa.struct([pa.field("key", pa.string()), pa.field("value", pa.binary())]))
DEFAULT_BATCH_ROWS = 64 * 1024


def arrow_schema(include_headers: bool = False) -> pa.Schema:
    """Spark's Kafka source schema as Arrow; timestamps in microseconds, UTC, as Spark's."""
    fields = [
        pa.field("key", pa.binary()),
        pa.field("value", pa.binary()),
        pa.field("topic", pa.string()),
        pa.field("partition", pa.int32()),
        pa.field("offset", pa.int64()),
        pa.field("timestamp", pa.timestamp("us", tz="UTC")),
        pa.field("timestampType", pa.int32()),
    ]
    if include_headers:
        fields.append(pa.field("headers", HEADER_TYPE))
    return pa.schema(fields)


def records_to_batch(
    rows: Iterable[Record], schema: pa.Schema, include_headers: bool
) -> pa.RecordBatch:
    """Records as one Arrow record batch of ``schema``."""
    rows = list(rows)
    columns = [
        pa.array([r.key for r in rows], pa.binary()),
        pa.array([r.value for r in rows], pa.binary()),
        pa.array([r.topic for r in rows], pa.string()),
        pa.array([r.partition for r in rows], pa.int32()),
        pa.array([r.offset for r in rows], pa.int64()),
        pa.array(
            [_micros(r.timestamp) for r in rows],
            pa.timestamp("us", tz="UTC"),
        ),
        pa.array([r.timestamp_type for r in rows], pa.int32()),
    ]
    if include_headers:
        # Spark's source gives null, not an empty list, to a record without headers.
        columns.append(
            pa.array(
                [
                    [{"key": h.key, "value": h.value} for h in r.headers] if r.headers else None
                    for r in rows
                ],
                HEADER_TYPE,
            )
        )
    return pa.RecordBatch.from_arrays(columns, schema=schema)


#: The largest millisecond timestamp with an int64 microsecond value (Arrow's, Spark's).
MAX_MILLIS = ((1 << 63) - 1) // 1000


def _micros(timestamp: int | None) -> int | None:
    """Microseconds for Arrow; null where they do not fit (``Report.timestamps_out_of_range``)."""
    if timestamp is None or not -MAX_MILLIS <= timestamp <= MAX_MILLIS:
        return None
    return timestamp * 1000


def reference_iter_arrow_batches(
    source: Source,
    *,
    isolation: Isolation = "read_uncommitted",
    include_headers: bool = False,
    verify_crc: bool = True,
    errors: Errors = "strict",
    max_decompressed_bytes: int = DEFAULT_MAX_BYTES,
    report: Report | None = None,
    batch_rows: int = DEFAULT_BATCH_ROWS,
) -> Iterator[pa.RecordBatch]:
    """The data records of ``source`` as Arrow record batches of ``batch_rows`` rows (the
    last may have fewer), decoded record by record by the generated parsers."""
    schema = arrow_schema(include_headers)
    rows: list[Record] = []
    for record in iter_records(
        source,
        isolation=isolation,
        verify_crc=verify_crc,
        errors=errors,
        max_decompressed_bytes=max_decompressed_bytes,
        report=report,
    ):
        rows.append(record)
        if len(rows) >= batch_rows:
            yield records_to_batch(rows, schema, include_headers)
            rows = []
    if rows:
        yield records_to_batch(rows, schema, include_headers)


def reference_read_table(source: Source, **options) -> pa.Table:
    """All data records of ``source`` as one table, the reference way."""
    include_headers = options.get("include_headers", False)
    return pa.Table.from_batches(
        list(reference_iter_arrow_batches(source, **options)),
        schema=arrow_schema(include_headers),
    )
