"""Keys and values in Confluent's wire format as typed columns of a ``kafka_log`` read: the
options ``keyFormat`` / ``valueFormat`` and the rest (:class:`~._options.PayloadOptions`;
documented in :mod:`.datasource`).

The decoding is the runtime's own, :class:`~kafka_format.runtime.payloads.columns.
PayloadColumns`, the code behind ``decode_payloads``: a payload gets one verdict (value, schema
id, error) whichever way it is read. What this module adds is Spark's side of it:

* on the driver, :func:`plan_payloads` opens the schema source (``schemaRegistry``, or the
  ``_schemas`` partition of the path's log dir) and types each decoded column, before a row
  is read (Spark needs the schema first): ``payloadOutput=json`` a string; ``struct`` the
  Spark type of the Arrow type of the subject's latest schema (``valueSubject``, or
  ``<topic>-value`` for every topic the read covers, Confluent's TopicNameStrategy; those
  subjects must agree on one type, or the read fails saying which differ);
* in the tasks, :meth:`PayloadPlan.decode` turns the split's raw batches into those columns,
  through one ``PayloadColumns`` per worker process and query (its schemas compiled once),
  over a source opened once per process and spec (again only when its files change: a
  ``_schemas`` replay is not repeated for every task).

Modes (the read's ``mode``, which also rules damaged batches):

* ``FAILFAST``: the first payload that does not decode fails the task, naming the segment
  file, the offset, the schema id and why;
* ``DROPMALFORMED``: rows whose payload does not decode are dropped (as Spark's file sources
  drop a malformed record; Spark's ``from_avro`` has no such mode);
* ``PERMISSIVE`` and ``SALVAGE``: such a row's column is null, its bytes are kept in
  ``value_raw`` / ``key_raw`` and the reason in ``_payload_error``.
"""

from __future__ import annotations

import os
import threading
import uuid
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql.pandas.types import from_arrow_type, to_arrow_schema
from pyspark.sql.types import (
    BinaryType,
    DataType,
    IntegerType,
    StringType,
    StructField,
    StructType,
)

from ..runtime.errors import KafkaFormatError
from ..runtime.payloads.columns import ERROR_COLUMN, PayloadColumns, one_type, payload_arrow_type
from ..runtime.payloads.registry import (
    ExportSchemaSource,
    SchemaRegistryError,
    SchemaSource,
    StoreSchemaSource,
    open_schema_source,
)
from ..runtime.payloads.registry_store import find_schemas_near
from ._discovery import find, storage_of
from ._fs import has_glob, locate
from ._options import KafkaLogOptions, OptionError, PayloadOptions

#: The columns a task needs besides the decoded ones: the subject is named by the topic, and
#: FAILFAST's error by partition and offset.
NEEDED = ("topic", "partition", "offset")
#: Query plans whose decoders a worker process keeps (oldest dropped first).
KEEP_PLANS = 8

_lock = threading.Lock()
#: spec -> (the files it was read from, their stamp then, the source opened from them).
_sources: dict[str, tuple[str, Any, SchemaSource]] = {}
#: (spec, plan token) -> (the source it was made over, the decoders).
_columns: dict[tuple[str, str], tuple[SchemaSource, PayloadColumns]] = {}
#: The SQL functions' decoders: (spec, format, subject, message, output, token) -> as above.
_function_columns: dict[tuple[Any, ...], tuple[SchemaSource, PayloadColumns]] = {}


# --- the schema source, once per process -----------------------------------------------------


def schema_source(spec: str) -> SchemaSource:
    """The source ``spec`` names, opened once per process and again when its files change
    (a ``_schemas`` partition written to since; a URL is never reopened: ids do not change,
    and the latest versions are asked for afresh by each query's decoders)."""
    with _lock:
        held = _sources.get(spec)
    if held is not None and _stamp(held[0]) == held[1]:
        return held[2]
    source = open_schema_source(spec)  # outside the lock: a replay takes a while
    # A store's files are its partition's, wherever the spec pointed (a log dir above it).
    files = os.fspath(source.path) if isinstance(source, StoreSchemaSource) else spec
    with _lock:
        _sources[spec] = (files, _stamp(files), source)
    return source


def _stamp(files: str) -> Any:
    """What changes when a local source's files change: name, size and mtime of each."""
    if "://" in files:
        return None
    try:
        if not os.path.isdir(files):
            st = os.stat(files)
            return (st.st_size, st.st_mtime_ns)
        with os.scandir(files) as entries:
            return tuple(
                sorted(
                    (e.name, e.stat().st_size, e.stat().st_mtime_ns) for e in entries if e.is_file()
                )
            )
    except OSError:
        return ("unreadable", uuid.uuid4().hex)  # never a hit: opening it says what is wrong


def _keep(cache: dict[Any, Any], key: Any, value: Any) -> None:
    """Put ``value`` last in ``cache``, dropping the oldest beyond :data:`KEEP_PLANS`."""
    with _lock:
        cache.pop(key, None)
        cache[key] = value
        while len(cache) > KEEP_PLANS:
            del cache[next(iter(cache))]


def registry_spec(options: KafkaLogOptions) -> str:
    """``schemaRegistry`` as given, or the ``_schemas`` partition beside what the path names:
    in it (a log dir), or one or two levels up (a partition directory, a segment file); for
    a glob, from its part before the first wildcard."""
    given = options.payloads.schema_registry
    if given is not None:
        return given
    if "://" in options.path:
        raise OptionError(
            "option schemaRegistry is needed to read payloads from a URI path: its default, "
            "the _schemas partition of the log dir read, is looked for on a local disk only"
        )
    literal: list[str] = []
    for part in Path(os.path.abspath(os.path.expanduser(options.path))).parts:
        if has_glob(part):
            break
        literal.append(part)
    found = find_schemas_near(Path(*literal))
    if found is not None:
        return str(found)
    raise OptionError(
        f"no _schemas partition in or above {options.path}: give option schemaRegistry (a log "
        "dir, a _schemas-N directory, a schema export file or a registry URL)"
    )


def _task_spec(spec: str, source: SchemaSource) -> str:
    """The spec every task opens: a store's own partition (not a directory to search again),
    a local path made absolute (tasks need not share the driver's working directory)."""
    if isinstance(source, StoreSchemaSource):
        return os.path.abspath(source.path)
    if isinstance(source, ExportSchemaSource):
        return os.path.abspath(source.spec)
    return spec


# --- the driver: types -----------------------------------------------------------------------


def spark_type(arrow_type: pa.DataType, what: str) -> DataType:
    """The Spark type of a decoded column's Arrow type (``time32`` read as ``time64``, which
    Spark's TimeType maps to); an Arrow type Spark has none for is an :class:`OptionError`
    that points at ``payloadOutput=json``."""
    try:
        return from_arrow_type(_sparkable(arrow_type))
    except Exception as exc:
        raise OptionError(
            f"{what}: Spark has no type for {arrow_type} ({' '.join(str(exc).split())}): read "
            "it as text with option payloadOutput json"
        ) from None


def _sparkable(t: pa.DataType) -> pa.DataType:
    if pa.types.is_time32(t):
        return pa.time64("us")
    if pa.types.is_struct(t):
        return pa.struct([f.with_type(_sparkable(f.type)) for f in t])
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return pa.list_(t.value_field.with_type(_sparkable(t.value_type)))
    if pa.types.is_map(t):
        return pa.map_(t.key_type, _sparkable(t.item_type))
    return t


def read_topics(options: KafkaLogOptions) -> list[str | None]:
    """The topics the read covers (``subscribe`` and the like applied), without logging what
    the broker's rules pass over: the read's planning logs that."""
    ref, fs, path = locate(options.path)
    found = find(storage_of(ref, fs), path, quiet=True)
    wanted = options.topics
    topics = {pf.topic for pf in found.partitions if wanted.accepts(pf.topic, pf.partition)}
    return sorted(topics, key=lambda t: (t is None, t or ""))


def _latest_type(
    source: SchemaSource, side: str, subjects: list[str], payloads: PayloadOptions
) -> tuple[pa.DataType, tuple[str, ...]]:
    """The one Arrow type the latest schemas of ``subjects`` give, and the subjects that have
    one (a subject with no live version types nothing: its rows are error rows)."""
    found: dict[str, pa.DataType] = {}
    for subject in subjects:
        if source.by_subject(subject) is None:
            continue
        try:
            found[subject] = payload_arrow_type(
                source, subject, kind=payloads.format(side), message=payloads.message(side)
            )
        except KafkaFormatError as exc:
            raise OptionError(f"option {side}Format: {exc}") from None
    remedy = f"read one topic (option subscribe), give option {side}Subject, or payloadOutput json"
    try:
        agreed = one_type(side, found, remedy)
    except SchemaRegistryError as exc:
        raise OptionError(str(exc)) from None
    if agreed is None:
        raise OptionError(
            f"no subject {', '.join(subjects)} has a live version in {source.description}: "
            f"give option {side}Subject, or read {side} as text with payloadOutput json"
        )
    return agreed, tuple(sorted(found))


@dataclass(frozen=True, slots=True)
class PayloadPlan:
    """How a read's payloads are typed (on the driver) and decoded (in the tasks)."""

    #: The schema source as every task opens it.
    spec: str
    payloads: PayloadOptions
    #: The read's mode (it rules damaged batches and payloads alike).
    mode: str
    #: Per decoded side: the Arrow type PayloadColumns gives it, and its Spark type.
    arrow_types: dict[str, pa.DataType]
    spark_types: dict[str, DataType]
    #: Per decoded side: the subjects whose latest schema typed it (none for json).
    subjects: dict[str, tuple[str, ...]]
    #: One per planned read: a worker keeps one PayloadColumns per plan, so that a later
    #: query asks a live registry for its latest versions again.
    token: str
    #: What Spark gets, as Arrow (:meth:`for_schema`).
    output: pa.Schema | None = None

    @property
    def sides(self) -> tuple[str, ...]:
        return self.payloads.sides

    @property
    def keeps_errors(self) -> bool:
        """Whether undecodable rows are kept (``*_raw``, ``_payload_error``)."""
        return self.mode in ("PERMISSIVE", "SALVAGE")

    @property
    def columns_mode(self) -> str:
        # DROPMALFORMED decodes as PERMISSIVE does, then drops the rows with an error.
        return "FAILFAST" if self.mode == "FAILFAST" else "PERMISSIVE"

    def column_types(self, base: dict[str, DataType]) -> dict[str, DataType]:
        """Every column a read with these payloads has, by name, in order: ``base`` (the
        source's columns) with the decoded sides retyped, then the columns added."""
        types = {name: self.spark_types.get(name, t) for name, t in base.items()}
        types.update((f"{s}_schema_id", IntegerType()) for s in self.sides)
        if self.keeps_errors:
            types.update((f"{s}_raw", BinaryType()) for s in self.sides)
            types[ERROR_COLUMN] = StringType()
        return types

    def schema(self, base: StructType) -> StructType:
        """The read's default schema: ``base`` (Spark's Kafka source's) with payloads."""
        types = self.column_types({f.name: f.dataType for f in base.fields})
        return StructType([StructField(n, t) for n, t in types.items()])

    def raw_schema(
        self, schema: StructType, base: dict[str, DataType], corrupt: str | None
    ) -> StructType:
        """What the split reader must give for ``schema`` (the read's, default or the
        user's): the source columns it names, the decoded sides' bytes, what the decoding
        needs, and the corrupt-batch column."""
        names = set(schema.fieldNames()) | set(self.sides) | set(NEEDED)
        fields = [StructField(n, t) for n, t in base.items() if n in names]
        if corrupt is not None:
            fields.append(schema[corrupt])
        return StructType(fields)

    def for_schema(self, schema: StructType) -> PayloadPlan:
        return replace(self, output=to_arrow_schema(schema, timezone="UTC"))

    # --- the tasks ---------------------------------------------------------------------------

    def decode(self, batches: Iterable[pa.RecordBatch], file: str) -> Iterator[pa.RecordBatch]:
        """The split's raw batches (from ``file``) with their payloads decoded, shaped as
        :attr:`output`."""
        output = self.output
        assert output is not None, "for_schema() first"
        columns = task_columns(self)
        for batch in batches:
            if self.mode == "FAILFAST":
                # PayloadColumns names a failing row's file when the batch has this column.
                name = pa.scalar(file, pa.string())
                batch = batch.append_column("file", pa.repeat(name, batch.num_rows))
            decoded = columns.decode(batch)
            self._check_types(decoded)
            if self.mode == "DROPMALFORMED":
                decoded = decoded.filter(pc.is_null(decoded.column(ERROR_COLUMN)))
                if not decoded.num_rows:
                    continue
            yield pa.RecordBatch.from_arrays(
                [self._cast(decoded.column(f.name), f.type, f.name) for f in output],
                schema=output,
            )

    def _check_types(self, decoded: pa.RecordBatch) -> None:
        """Fail when a batch's column is not of the planned type: the subject's latest
        schema changed after planning, or a topic the driver did not see has another."""
        for side in self.sides:
            got, planned = decoded.schema.field(side).type, self.arrow_types[side]
            if got == planned or pa.types.is_null(got):
                continue
            topics = decoded.column("topic").unique().to_pylist()
            raise KafkaFormatError(
                f"the {side} column was typed {planned} by the latest schema of "
                f"{', '.join(self.subjects[side])} when the read was planned, but topic(s) "
                f"{', '.join(map(str, topics))} give {got} now: the schema changed since "
                f"(run the query again), or give option {side}Subject"
            )

    @staticmethod
    def _cast(column: pa.Array, target: pa.DataType, name: str) -> pa.Array:
        if column.type == target:
            return column
        try:
            return column.cast(target)  # e.g. a timestamp in ms to Spark's microseconds
        except (pa.ArrowException, TypeError, ValueError) as exc:
            raise KafkaFormatError(
                f"column {name}: {column.type} does not convert to Spark's {target}: "
                f"{' '.join(str(exc).split())}"
            ) from None


def plan_payloads(options: KafkaLogOptions) -> PayloadPlan | None:
    """The payload columns of a read (None when it decodes none); option problems, a source
    that does not open and subjects that do not type a column are :class:`OptionError`."""
    payloads = options.payloads
    if not payloads.sides:
        return None
    spec = registry_spec(options)
    try:
        source = schema_source(spec)
    except SchemaRegistryError as exc:
        raise OptionError(f"option schemaRegistry: {exc}") from None
    arrow_types: dict[str, pa.DataType] = {}
    spark_types: dict[str, DataType] = {}
    typed_by: dict[str, tuple[str, ...]] = {}
    topics: list[str | None] | None = None
    for side in payloads.sides:
        if payloads.output == "json":
            arrow_types[side], spark_types[side], typed_by[side] = pa.string(), StringType(), ()
            continue
        subject = payloads.subject(side)
        if subject is not None:
            subjects = [subject]
        else:
            topics = read_topics(options) if topics is None else topics
            if None in topics:
                raise OptionError(
                    f"a file outside any topic-N directory has no topic to name the {side} "
                    f"subject by (<topic>-{side}): give option {side}Subject"
                )
            if not topics:
                raise OptionError(
                    f"the path holds no topic to name the {side} subject by (<topic>-{side}): "
                    f"give option {side}Subject"
                )
            subjects = [f"{t}-{side}" for t in topics]
        arrow_types[side], typed_by[side] = _latest_type(source, side, subjects, payloads)
        spark_types[side] = spark_type(
            arrow_types[side], f"{side}, typed by {', '.join(typed_by[side])}"
        )
    return PayloadPlan(
        spec=_task_spec(spec, source),
        payloads=payloads,
        mode=options.mode,
        arrow_types=arrow_types,
        spark_types=spark_types,
        subjects=typed_by,
        token=uuid.uuid4().hex,
    )


def task_columns(plan: PayloadPlan) -> PayloadColumns:
    """The plan's decoders in this process: made once per plan (and again when the source's
    files changed), kept for the plan's other tasks in this worker."""
    source = schema_source(plan.spec)
    key = (plan.spec, plan.token)
    with _lock:
        held = _columns.get(key)
    if held is not None and held[0] is source:
        return held[1]
    p = plan.payloads
    columns = PayloadColumns(
        source,
        key_format=p.key_format,
        value_format=p.value_format,
        key_subject=p.key_subject,
        value_subject=p.value_subject,
        key_message=p.key_message,
        value_message=p.value_message,
        output=p.output,
        mode=plan.columns_mode,
    )
    _keep(_columns, key, (source, columns))
    return columns


def value_columns(
    spec: str,
    kind: str,
    *,
    subject: str | None = None,
    message: str | None = None,
    output: str = "json",
    token: str = "",
) -> PayloadColumns:
    """Decoders of a lone binary column named ``value`` (the SQL functions'): PERMISSIVE, so
    that the caller decides what an error does; kept per process as :func:`task_columns`."""
    source = schema_source(spec)
    key = (spec, kind, subject, message, output, token)
    with _lock:
        held = _function_columns.get(key)
    if held is not None and held[0] is source:
        return held[1]
    columns = PayloadColumns(
        source,
        value_format=kind,
        value_subject=subject,
        value_message=message,
        output=output,
        mode="PERMISSIVE",
    )
    _keep(_function_columns, key, (source, columns))
    return columns


def task_spec(spec: str) -> str:
    """The spec tasks should open for ``spec`` (see :func:`plan_payloads`), opening it here."""
    return _task_spec(spec, schema_source(spec))


__all__ = [
    "PayloadPlan",
    "plan_payloads",
    "read_topics",
    "registry_spec",
    "schema_source",
    "spark_type",
    "task_columns",
    "task_spec",
    "value_columns",
]
