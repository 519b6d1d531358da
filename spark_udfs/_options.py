"""The options of the ``kafka_log`` data source: names, parsing, checks, defaults.

Spark hands a data source its options as a case-insensitive map of strings; everything is
checked here, once, so that a typo fails ``load()`` with the list of known names instead of
being ignored (Spark's own file sources ignore unknown options; Spark's Kafka source refuses
some — we refuse all).
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from ..runtime.format.codecs import DEFAULT_MAX_BYTES
from ..runtime.payloads.columns import OUTPUTS as PAYLOAD_OUTPUTS
from ..runtime.payloads.decoders import KINDS as PAYLOAD_FORMATS

#: Spark's Kafka source: -2 in an offsets JSON means earliest, -1 latest.
EARLIEST = -2
LATEST = -1

DEFAULT_MAX_BYTES_PER_PARTITION = 128 * 1024 * 1024  # as spark.sql.files.maxPartitionBytes
DEFAULT_CORRUPT_COLUMN = "_corrupt_batch"

Mode = Literal["PERMISSIVE", "DROPMALFORMED", "FAILFAST", "SALVAGE"]
IsolationLevel = Literal["read_uncommitted", "read_committed"]
TimestampStrategy = Literal["latest", "error"]
#: startingOffsetsByTimestampStrategy: the first is the default, as in Spark's Kafka source
#: (KafkaSourceProvider: "error").
STRATEGIES = ("error", "latest")

#: Every option, spelled as documented; Spark lower-cases the keys it passes.
OPTION_NAMES = (
    "path",
    "includeHeaders",
    "isolationLevel",
    "startingOffsets",
    "endingOffsets",
    "startingTimestamp",
    "endingTimestamp",
    "startingOffsetsByTimestamp",
    "endingOffsetsByTimestamp",
    "mode",
    "columnNameOfCorruptRecord",
    "verifyCrc",
    "maxDecompressedBytes",
    "maxBytesPerPartition",
    "pushFilters",
    "maxTimestampLatenessMs",
    # Spark's Kafka source's own names (KafkaSourceProvider), with its semantics:
    "failOnDataLoss",
    "subscribe",
    "subscribePattern",
    "assign",
    "startingOffsetsByTimestampStrategy",
    "minPartitions",
    "maxRecordsPerPartition",
    # Keys and values in Confluent's wire format (_payloads): what they decode to.
    "keyFormat",
    "valueFormat",
    "schemaRegistry",
    "keySubject",
    "valueSubject",
    "keyMessage",
    "valueMessage",
    "payloadOutput",
)
#: Spark's Kafka source spells some options differently: these are the same option here.
ALIASES = {"kafka.isolation.level": "isolationLevel"}
_CANONICAL = {name.lower(): name for name in OPTION_NAMES}
_CANONICAL.update(ALIASES)
#: A stream's rate options (``KafkaSourceProvider``): a batch read ignores them with a
#: WARNING, as Spark's Kafka source does (``validateBatchOptions``: "... option ignored in
#: batch queries"); a stream honours them (``streaming_offsets``).
STREAM_RATE_OPTIONS = ("maxOffsetsPerTrigger", "minOffsetsPerTrigger", "maxTriggerDelay")
#: Spark's Kafka source's options that only a broker or a consumer group gives a meaning:
#: accepted, so that a query ported from it runs unchanged, and named in one WARNING per read
#: (:attr:`KafkaLogOptions.ignored`). Any other ``kafka.*`` option (consumer settings such as
#: ``kafka.bootstrap.servers``, ``kafka.security.protocol``, ``kafka.group.id``) is too.
OFFLINE_IGNORED = (
    "groupIdPrefix",
    "fetchOffset.numRetries",
    "fetchOffset.retryIntervalMs",
    "kafkaConsumer.pollTimeoutMs",
)
_IGNORED = {name.lower(): name for name in (*OFFLINE_IGNORED, *STREAM_RATE_OPTIONS)}
#: What Spark itself adds to a catalog table's options (``TableCatalog``'s reserved
#: properties, e.g. ``owner`` after ``CREATE TABLE t USING kafka_log OPTIONS (path …)``): not
#: the user's, passed over without a word.
SPARK_TABLE_PROPERTIES = frozenset(
    {"owner", "provider", "location", "comment", "external", "is_managed_location", "collation"}
)
LOG = logging.getLogger("kafka_format.spark_udfs")

_SIZE = re.compile(r"\s*(\d+)\s*([kmgt]?)i?b?\s*", re.IGNORECASE)
_SIZE_UNITS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}

TopicPartition = tuple[str, int]


class OptionError(ValueError):
    """An option of the kafka_log source that is unknown or has a value it cannot take."""


@dataclass(frozen=True, slots=True)
class PerPartition:
    """A value for every partition (``default``) with per-partition overrides, as Spark's
    Kafka options give them: a bare number, or JSON such as ``{"orders":{"0":23,"1":-2}}``."""

    default: int | None = None
    overrides: dict[TopicPartition, int] = field(default_factory=dict)

    def get(self, topic: str | None, partition: int | None) -> int | None:
        if topic is not None and partition is not None:
            found = self.overrides.get((topic, partition))
            if found is not None:
                return found
        return self.default

    @property
    def given(self) -> bool:
        return self.default is not None or bool(self.overrides)


@dataclass(frozen=True, slots=True)
class PayloadOptions:
    """``keyFormat`` / ``valueFormat`` and the options that go with them (:mod:`._payloads`);
    no format: the columns stay bytes."""

    key_format: str | None = None
    value_format: str | None = None
    #: As given (None: the ``_schemas`` partition of the path's log dir, found on the driver).
    schema_registry: str | None = None
    key_subject: str | None = None
    value_subject: str | None = None
    key_message: str | None = None
    value_message: str | None = None
    #: ``struct`` (the latest schema's type) or ``json`` (text).
    output: str = "struct"

    @property
    def sides(self) -> tuple[str, ...]:
        """The columns decoded, in the order their added columns come: key, then value."""
        return tuple(s for s in ("key", "value") if self.format(s) is not None)

    def format(self, side: str) -> str | None:
        return self.key_format if side == "key" else self.value_format

    def subject(self, side: str) -> str | None:
        return self.key_subject if side == "key" else self.value_subject

    def message(self, side: str) -> str | None:
        return self.key_message if side == "key" else self.value_message


@dataclass(frozen=True, slots=True)
class KafkaLogOptions:
    """The checked options of one read."""

    path: str
    include_headers: bool = False
    isolation: IsolationLevel = "read_uncommitted"
    starting_offsets: PerPartition = field(default_factory=PerPartition)
    ending_offsets: PerPartition = field(default_factory=PerPartition)
    starting_timestamps: PerPartition = field(default_factory=PerPartition)
    ending_timestamps: PerPartition = field(default_factory=PerPartition)
    mode: Mode = "FAILFAST"
    corrupt_column: str = DEFAULT_CORRUPT_COLUMN
    verify_crc: bool = True
    max_decompressed_bytes: int = DEFAULT_MAX_BYTES
    max_bytes_per_partition: int = DEFAULT_MAX_BYTES_PER_PARTITION
    #: Spark's failOnDataLoss: a start offset below the log start or past its end fails.
    fail_on_data_loss: bool = True
    topics: TopicFilter = field(default_factory=lambda: TopicFilter())
    #: When no record is at or after a starting timestamp: "error" fails the read (Spark's
    #: default), "latest" reads nothing there.
    timestamp_strategy: TimestampStrategy = "error"
    #: Spark's ``minPartitions``: at least about this many input partitions (a hint, as in
    #: Spark: ranges are cut at batch boundaries only).
    min_partitions: int | None = None
    #: Spark's ``maxRecordsPerPartition``: input partitions of at most about this many offsets
    #: (cut at batch boundaries, so a batch is never split).
    max_records_per_partition: int | None = None
    #: Options accepted without an offline meaning, as given (one WARNING names them).
    ignored: tuple[str, ...] = ()
    #: Answer WHERE clauses in the read (KafkaLogPushdownReader); None: as registered.
    push_filters: bool | None = None
    #: The user's word that no record's timestamp is more than this many ms below that of a
    #: record before it in its partition: lets an upper bound on ``timestamp`` prune
    #: (``_pushdown``); None: no such word, an upper bound prunes nothing.
    timestamp_lateness_ms: int | None = None
    #: keyFormat, valueFormat and the rest: payloads decoded from Confluent's wire format.
    payloads: PayloadOptions = field(default_factory=PayloadOptions)

    def warn_ignored(self, what: str = "read") -> None:
        """The one WARNING of a read (or stream) naming the options it ignores."""
        if self.ignored:
            LOG.warning(
                "kafka_log: option(s) %s ignored in this %s: the path is the log; there is no "
                "broker, consumer or consumer group offline",
                ", ".join(self.ignored),
                what,
            )


def parse_options(raw: Mapping[str, str]) -> KafkaLogOptions:
    """Check every option and build :class:`KafkaLogOptions`; raises :class:`OptionError`."""
    given: dict[str, str] = {}
    ignored: list[str] = []
    for key, value in raw.items():
        lowered = str(key).lower()
        if lowered in SPARK_TABLE_PROPERTIES:
            continue
        name = _CANONICAL.get(lowered)
        if name is None and (lowered in _IGNORED or lowered.startswith("kafka.")):
            ignored.append(_IGNORED.get(lowered, str(key)))
            continue
        if name is None:
            raise OptionError(
                f"unknown option {key!r} for the kafka_log data source; known options: "
                + ", ".join([*OPTION_NAMES, *ALIASES])
                + "; accepted and ignored offline: "
                + ", ".join([*OFFLINE_IGNORED, *STREAM_RATE_OPTIONS, "kafka.*"])
            )
        text = "" if value is None else str(value)
        if name in given and given[name].strip().lower() != text.strip().lower():
            raise OptionError(f"option {name} is given twice (as {key!r} too), with two values")
        given[name] = text
    path = given.get("path", "").strip()
    if not path:
        raise OptionError(
            "kafka_log needs a path: spark.read.format('kafka_log').load(path), where path is a "
            "partition directory (topic-N), a Kafka log directory, a segment file or a glob; in "
            "SQL, CREATE TEMPORARY VIEW t USING kafka_log OPTIONS (path '...') (a CREATE TABLE "
            "reaches a Python data source's reader without its options in Spark 4.x)"
        )
    starting_ts = _timestamps(given, "startingTimestamp", "startingOffsetsByTimestamp")
    ending_ts = _timestamps(given, "endingTimestamp", "endingOffsetsByTimestamp")
    return KafkaLogOptions(
        path=path,
        include_headers=_bool(given, "includeHeaders", False),
        isolation=_choice(given, "isolationLevel", ("read_uncommitted", "read_committed")),
        starting_offsets=parse_offsets(given, "startingOffsets", refuse=LATEST),
        ending_offsets=parse_offsets(given, "endingOffsets", refuse=EARLIEST),
        starting_timestamps=starting_ts,
        ending_timestamps=ending_ts,
        mode=_mode(given),
        corrupt_column=given.get("columnNameOfCorruptRecord", DEFAULT_CORRUPT_COLUMN).strip()
        or DEFAULT_CORRUPT_COLUMN,
        verify_crc=_bool(given, "verifyCrc", True),
        max_decompressed_bytes=parse_size(given, "maxDecompressedBytes", DEFAULT_MAX_BYTES),
        max_bytes_per_partition=parse_size(
            given, "maxBytesPerPartition", DEFAULT_MAX_BYTES_PER_PARTITION, minimum=1
        ),
        fail_on_data_loss=_bool(given, "failOnDataLoss", True),
        topics=topic_filter(given),
        timestamp_strategy=_choice(given, "startingOffsetsByTimestampStrategy", STRATEGIES),
        min_partitions=_positive(given, "minPartitions"),
        max_records_per_partition=_positive(given, "maxRecordsPerPartition"),
        ignored=tuple(sorted(ignored, key=str.lower)),
        push_filters=_bool(given, "pushFilters", False) if "pushFilters" in given else None,
        timestamp_lateness_ms=_count(given, "maxTimestampLatenessMs"),
        payloads=payload_options(given),
    )


def payload_options(given: Mapping[str, str]) -> PayloadOptions:
    """keyFormat, valueFormat and the options that only mean something with one of them
    (given without one they fail: a typo in a format must not leave the bytes as they are)."""

    def text(name: str) -> str | None:
        if name not in given:
            return None
        value = given[name].strip()
        if not value:
            raise OptionError(f"option {name} must not be empty")
        return value

    formats = {}
    for name in ("keyFormat", "valueFormat"):
        value = text(name)
        if value is not None and value.lower() not in PAYLOAD_FORMATS:
            raise OptionError(
                f"option {name} must be one of {', '.join(PAYLOAD_FORMATS)}, not {given[name]!r}"
            )
        formats[name] = None if value is None else value.lower()
    output = (text("payloadOutput") or "struct").lower()
    if output not in PAYLOAD_OUTPUTS:
        raise OptionError(
            f"option payloadOutput must be one of {', '.join(PAYLOAD_OUTPUTS)}, "
            f"not {given['payloadOutput']!r}"
        )
    result = PayloadOptions(
        key_format=formats["keyFormat"],
        value_format=formats["valueFormat"],
        schema_registry=text("schemaRegistry"),
        key_subject=text("keySubject"),
        value_subject=text("valueSubject"),
        key_message=text("keyMessage"),
        value_message=text("valueMessage"),
        output=output,
    )
    for side in ("key", "value"):
        for name in (f"{side}Subject", f"{side}Message"):
            if name in given and result.format(side) is None:
                raise OptionError(f"option {name} needs {side}Format")
    for name in ("schemaRegistry", "payloadOutput"):
        if name in given and not result.sides:
            raise OptionError(f"option {name} needs keyFormat or valueFormat")
    return result


def _bool(given: dict[str, str], name: str, default: bool) -> bool:
    if name not in given:
        return default
    value = given[name].strip().lower()
    if value not in ("true", "false"):
        raise OptionError(f"option {name} must be true or false, not {given[name]!r}")
    return value == "true"


def _choice(given: dict[str, str], name: str, allowed: tuple[str, ...]):
    if name not in given:
        return allowed[0]
    value = given[name].strip().lower()
    if value not in allowed:
        raise OptionError(f"option {name} must be one of {', '.join(allowed)}, not {given[name]!r}")
    return value


def _mode(given: dict[str, str]) -> Mode:
    value = given.get("mode", "FAILFAST").strip().upper()
    if value not in ("PERMISSIVE", "DROPMALFORMED", "FAILFAST", "SALVAGE"):
        raise OptionError(
            "option mode must be PERMISSIVE, DROPMALFORMED, FAILFAST or SALVAGE, "
            f"not {given['mode']!r}"
        )
    return value  # type: ignore[return-value]


def parse_size(
    given: Mapping[str, str],
    name: str,
    default: int,
    *,
    minimum: int = 0,
    maximum: int | None = None,
) -> int:
    """A byte count with an optional suffix (``1048576``, ``512k``, ``128m``, ``1g``): the
    source's options and the sink's (:mod:`.sink`) read sizes alike."""
    if name not in given:
        return default
    match = _SIZE.fullmatch(given[name])
    if match is None:
        raise OptionError(
            f"option {name} must be a byte count such as 1048576, 512k or 128m, not {given[name]!r}"
        )
    value = int(match.group(1)) * _SIZE_UNITS[match.group(2).lower()]
    if value < minimum:
        raise OptionError(f"option {name} must be at least {minimum}, not {value}")
    if maximum is not None and value > maximum:
        raise OptionError(f"option {name} must be at most {maximum}, not {value}")
    return value


def parse_offsets(given: dict[str, str], name: str, *, refuse: int) -> PerPartition:
    """``earliest`` / ``latest``, one number for every partition, or Spark's JSON form."""
    if name not in given:
        return PerPartition()
    text = given[name].strip()
    words = {"earliest": EARLIEST, "latest": LATEST}
    if text.lower() in words:
        result = PerPartition(default=words[text.lower()])
    elif _is_int(text):
        result = PerPartition(default=_offset_value(name, int(text)))
    else:
        result = PerPartition(overrides=_partition_json(name, text, _offset_value))
    values = [result.default, *result.overrides.values()]
    if refuse in values:
        what = "latest (-1)" if refuse == LATEST else "earliest (-2)"
        raise OptionError(
            f"option {name} cannot be {what} in a batch read (Spark's Kafka source refuses it too)"
        )
    return result


def _offset_value(name: str, value: int) -> int:
    if value < EARLIEST:
        raise OptionError(
            f"option {name}: {value} is not an offset (>= 0), -2 (earliest) or -1 (latest)"
        )
    return value


def _timestamps(given: dict[str, str], single: str, by_partition: str) -> PerPartition:
    """``startingTimestamp`` (every partition) wins over ``startingOffsetsByTimestamp``
    (per partition), as in Spark's Kafka source; likewise for the ending pair."""
    if single in given:
        text = given[single].strip()
        if not _is_int(text) or int(text) < 0:
            raise OptionError(
                f"option {single} must be epoch milliseconds (>= 0), not {given[single]!r}"
            )
        return PerPartition(default=int(text))
    if by_partition in given:
        return PerPartition(overrides=_partition_json(by_partition, given[by_partition], _ts_value))
    return PerPartition()


def _ts_value(name: str, value: int) -> int:
    if value < 0:
        raise OptionError(f"option {name}: timestamp {value} is negative")
    return value


def _partition_json(name: str, text: str, check) -> dict[TopicPartition, int]:
    try:
        parsed = json.loads(text)
    except json.JSONDecodeError:
        parsed = None
    if not isinstance(parsed, dict):
        raise OptionError(
            f"option {name} must be a number or JSON such as "
            f'{{"topic":{{"0":23,"1":-2}}}}, not {text!r}'
        )
    result: dict[TopicPartition, int] = {}
    for topic, partitions in parsed.items():
        if not isinstance(partitions, dict):
            raise OptionError(f"option {name}: topic {topic!r} must map partitions to numbers")
        for partition, value in partitions.items():
            if not _is_int(str(partition)) or isinstance(value, bool) or not isinstance(value, int):
                raise OptionError(
                    f"option {name}: {topic!r} partition {partition!r} -> {value!r} is not "
                    "a partition number mapped to an integer"
                )
            result[(str(topic), int(partition))] = check(name, value)
    return result


def _is_int(text: str) -> bool:
    return bool(re.fullmatch(r"[+-]?\d+", text))


# --- Spark's Kafka source: which topics and partitions ---------------------------------------


@dataclass(frozen=True, slots=True)
class TopicFilter:
    """``subscribe`` (topic names), ``subscribePattern`` (a regex the whole name must match,
    as Kafka's pattern subscription matches) or ``assign`` (exact partitions); at most one,
    as Spark's Kafka source requires (KafkaSourceProvider.validateGeneralOptions). None of
    them: every partition the path holds."""

    kind: Literal["all", "subscribe", "subscribePattern", "assign"] = "all"
    topics: frozenset[str] = frozenset()
    pattern: str | None = None
    partitions: frozenset[TopicPartition] = frozenset()

    def accepts(self, topic: str | None, partition: int | None) -> bool:
        if self.kind == "all":
            return True
        if topic is None:
            return False  # a file outside any partition directory belongs to no topic
        if self.kind == "subscribe":
            return topic in self.topics
        if self.kind == "subscribePattern":
            return re.fullmatch(self.pattern or "", topic) is not None
        return (topic, partition) in self.partitions


def topic_filter(given: Mapping[str, str]) -> TopicFilter:
    named = [n for n in ("subscribe", "subscribePattern", "assign") if n in given]
    if len(named) > 1:
        raise OptionError(
            "only one of the options assign, subscribe and subscribePattern can be given "
            f"(as for Spark's Kafka source), not {' and '.join(named)}"
        )
    if not named:
        return TopicFilter()
    name = named[0]
    text = given[name].strip()
    if name == "subscribe":
        topics = frozenset(t.strip() for t in text.split(",") if t.strip())
        if not topics:
            raise OptionError("option subscribe must name topics, comma-separated")
        return TopicFilter("subscribe", topics=topics)
    if name == "subscribePattern":
        try:
            re.compile(text)
        except re.error as exc:
            raise OptionError(
                f"option subscribePattern: {text!r} is not a pattern: {exc}"
            ) from None
        if not text:
            raise OptionError("option subscribePattern must be a regular expression")
        return TopicFilter("subscribePattern", pattern=text)
    return TopicFilter("assign", partitions=frozenset(_assignment(text)))


def _assignment(text: str) -> list[TopicPartition]:
    """Spark's ``assign`` JSON: ``{"topicA":[0,1],"topicB":[2,4]}``."""
    try:
        parsed = json.loads(text)
    except json.JSONDecodeError:
        parsed = None
    wrong = OptionError(
        f'option assign must be JSON such as {{"orders":[0,1],"users":[2]}}, not {text!r}'
    )
    if not isinstance(parsed, dict) or not parsed:
        raise wrong
    found = []
    for topic, partitions in parsed.items():
        if not isinstance(partitions, list) or not all(
            isinstance(p, int) and not isinstance(p, bool) and p >= 0 for p in partitions
        ):
            raise wrong
        found.extend((str(topic), p) for p in partitions)
    return found


def _count(given: Mapping[str, str], name: str) -> int | None:
    """A whole number >= 0 (ms), or None when not given."""
    if name not in given:
        return None
    text = given[name].strip()
    if not _is_int(text) or not 0 <= int(text) < 1 << 62:
        raise OptionError(f"option {name} must be a whole number of milliseconds, not {text!r}")
    return int(text)


def _positive(given: Mapping[str, str], name: str) -> int | None:
    if name not in given:
        return None
    text = given[name].strip()
    if not _is_int(text) or int(text) < 1:
        raise OptionError(f"option {name} must be a positive number, not {text!r}")
    return int(text)
