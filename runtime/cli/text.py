"""The lines kafka-dump-log prints for batches and records, and the decoders of
``--key-decoder`` / ``--value-decoder``: shared by ``dump`` and ``find``."""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from ..format.jsonform import codec_name
from ..model import Batch, ControlMarker, ControlType, Record, TimestampType
from ..read.ranges import Range

if TYPE_CHECKING:  # pragma: no cover - its schemas cost every other dump start-up time
    from ..messages.coordinator_lookup import KeyOwner

Decoder = Callable[[bytes], str]

#: kafka-dump-log's ``--max-message-size`` default: how much it reads at an index entry.
DEFAULT_MAX_MESSAGE_SIZE = 5 * 1024 * 1024
#: ``BootstrapDirectory.BINARY_BOOTSTRAP_FILENAME``: a KRaft snapshot without offset or epoch.
BOOTSTRAP_SNAPSHOT = "bootstrap.checkpoint"


def _string(data: bytes) -> str:
    return data.decode("utf-8", errors="replace")


def _json(data: bytes) -> str:
    try:
        return json.dumps(json.loads(data), separators=(",", ":"), ensure_ascii=False)
    except (ValueError, UnicodeDecodeError):
        return f"<not JSON: {data[:32].hex()}{'…' if len(data) > 32 else ''}>"


def _fixed_int(size: int) -> Decoder:
    # ByteBuffer.getInt / getLong, big-endian, as Kafka's IntegerDecoder and LongDecoder.
    def decode(data: bytes) -> str:
        if len(data) != size:
            return f"<not a {size}-byte integer: {data[:32].hex()}>"
        return str(int.from_bytes(data, "big", signed=True))

    return decode


DECODERS: dict[str, Decoder] = {
    "string": _string,
    "hex": bytes.hex,
    "base64": lambda data: base64.b64encode(data).decode("ascii"),
    "json": _json,
    "int": _fixed_int(4),
    "long": _fixed_int(8),
}

#: kafka-dump-log's ``--key-decoder-class`` / ``--value-decoder-class`` values (the Decoder
#: implementations Kafka ships, old and new packages) -> our decoder. DefaultDecoder hands
#: back the bytes, which Java prints as ``[B@hash``: hex says what they are.
DECODER_CLASSES: dict[str, str] = {
    f"{package}.{name}Decoder": ours
    for package in ("kafka.serializer", "org.apache.kafka.tools.api")
    for name, ours in (
        ("String", "string"),
        ("Default", "hex"),
        ("Integer", "int"),
        ("Long", "long"),
    )
}


@dataclass(slots=True)
class DumpOptions:
    deep_iteration: bool = False
    print_data_log: bool = False
    key_decoder: Decoder = _string
    value_decoder: Decoder = _string
    skip_record_metadata: bool = False
    max_bytes: int | None = None
    jsonl: bool = False
    batches: bool = False
    isolation: str = "read_uncommitted"
    verify_crc: bool = True
    max_decompressed_bytes: int | None = None
    #: ``--index-sanity-check``: for indexes, only the start-up sanity check.
    index_sanity_only: bool = False
    #: ``--verify-index-only``: for indexes, only the checks against the log.
    verify_index_only: bool = False
    #: ``--max-message-size``: an index entry's batch must fit (kafka-dump-log reads no more).
    max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE
    #: No progress line on stderr.
    quiet: bool = False
    #: An internal topic's decoder (``internal_topics.DECODERS``): (key text, payload text) of
    #: a record, as kafka-dump-log's ``--offsets-decoder`` and siblings print them.
    record_decoder: Callable[[Record], tuple[str | None, str | None]] | None = None
    #: A key / value decoder was asked for: ``--jsonl`` then writes the decoded text (the
    #: text format always decodes, with ``string`` by default, as kafka-dump-log).
    decode_keys: bool = False
    decode_values: bool = False
    #: ``--canonical``: ``--jsonl`` lines in the corpus's form only, without where each
    #: record was (topic, partition, file, position).
    canonical: bool = False
    #: ``-o`` / ``-c`` / ``--from`` / ``--to``: the range of each partition to dump.
    range: Range | None = None
    #: ``--salvage``: read logs on past framing damage (``errors="salvage"``).
    salvage: bool = False
    #: ``-f`` / ``-J`` (``cli/kcat.py``): one Arrow batch of records (and the stream for
    #: failures to format) -> the bytes to write. The records are read as ``--jsonl`` reads
    #: them (``jsonl`` is set with it).
    kcat: Callable[..., list[bytes]] | None = None
    #: ``--group`` / ``--transactional-id``: only the records whose key is that owner's
    #: (``messages.coordinator_lookup.KeyOwner``).
    key_owner: KeyOwner | None = None

    @property
    def errors(self) -> str:
        """The read API's ``errors`` for logs: never strict (a dump reports and goes on)."""
        return "salvage" if self.salvage else "skip"

    @property
    def decoding(self) -> bool:
        """Whether ``--jsonl`` lines need the decoders (Python) rather than the kernel."""
        return self.decode_keys or self.decode_values or self.record_decoder is not None


def _bool(value: bool) -> str:
    return "true" if value else "false"


def optional_long(value: int | None) -> str:
    return "OptionalLong.empty" if value is None else f"OptionalLong[{value}]"


def batch_line(batch: Batch, position: int) -> str:
    """One batch as ``DumpLogSegments.printBatchLevel`` prints it."""
    if batch.magic >= 2:
        head = (
            f"baseOffset: {batch.base_offset} lastOffset: {batch.last_offset} "
            f"count: {batch.records_count} baseSequence: {batch.base_sequence} "
            f"lastSequence: {batch.last_sequence} producerId: {batch.producer_id} "
            f"producerEpoch: {batch.producer_epoch} "
            f"partitionLeaderEpoch: {batch.partition_leader_epoch} "
            f"isTransactional: {_bool(batch.is_transactional)} "
            f"isControl: {_bool(batch.is_control)} "
            f"deleteHorizonMs: {optional_long(batch.delete_horizon_ms)}"
        )
    else:
        head = f"offset: {batch.last_offset}"
    ts_label = TimestampType(batch.timestamp_type).label
    max_ts = -1 if batch.max_timestamp is None else batch.max_timestamp
    valid = batch.crc_valid
    return (
        f"{head} position: {position} {ts_label}: {max_ts} size: {batch.size} "
        f"magic: {batch.magic} compresscodec: {codec_name(batch.codec)} crc: {batch.crc} "
        f"isvalid: {_bool(bool(valid)) if valid is not None else 'unknown'}"
    )


def control_text(marker: ControlMarker) -> str:
    """What kafka-dump-log prints after a control record's metadata.

    COMMIT / ABORT: the marker; KRaft's leader change, snapshot header and footer, KRaft
    version and voters: their value as JSON (``LeaderChange: {"version":0,...}``,
    ``SnapshotHeader {"version":0,...}``); any other type:
    ``controlType: NAME(id)``, with ``UNKNOWN`` for ids ``ControlRecordType`` does not know.
    """
    if marker.coordinator_epoch is not None:
        return f" endTxnMarker: {marker.type_name} coordinatorEpoch: {marker.coordinator_epoch}"
    if ControlType.LEADER_CHANGE <= marker.type <= ControlType.KRAFT_VOTERS:
        # Imported here: its message schemas cost every other dump 60 ms of start-up.
        from ..messages.internal_topics import kraft_control_text

        kraft = kraft_control_text(marker.type, marker.raw_value)
        if kraft is not None:
            return f" {kraft}"
    try:
        name = ControlType(marker.type).name
    except ValueError:
        name = "UNKNOWN"
    return f" controlType: {name}({marker.type})"


def record_line(batch: Batch, record: Record, options: DumpOptions) -> str:
    """One record as ``DumpLogSegments.dumpLog`` prints it in deep iteration."""
    parts: list[str] = []
    prefix = "| "
    if not options.skip_record_metadata:
        ts = -1 if record.timestamp is None else record.timestamp
        line = (
            f"| offset: {record.offset} {TimestampType(batch.timestamp_type).label}: {ts} "
            f"keySize: {_size(record.key)} valueSize: {_size(record.value)}"
        )
        if batch.magic >= 2:
            seq = -1 if record.sequence is None else record.sequence
            keys = ",".join(h.key for h in record.headers)
            line += f" sequence: {seq} headerKeys: [{keys}]"
        else:
            # kafka-dump-log prints "crc: N}" here, a stray brace; greps for the number match.
            line += f" isValid: {_bool(bool(record.crc_valid))} crc: {record.crc}"
        if record.control is not None:
            line += control_text(record.control)
        parts.append(line)
        prefix = " "
    if options.print_data_log and not batch.is_control:
        if options.record_decoder is not None:
            # As kafka-dump-log's parsers: a tombstone still gets a payload (<DELETE>).
            key, payload = options.record_decoder(record)
        else:
            key = None if record.key is None else options.key_decoder(record.key)
            payload = None if record.value is None else options.value_decoder(record.value)
        # Trunk's printRecordContents (DumpLogSegments.java, Kafka 4.1): without metadata the
        # line starts "| " whether its first field is the key or the payload.
        if key is not None:
            parts.append(f"{prefix}key: {key}")
            prefix = " "
        if payload is not None:
            parts.append(f"{prefix}payload: {payload}")
    return "".join(parts)


def _size(data: bytes | None) -> int:
    return -1 if data is None else len(data)


def amount(n: int, singular: str, plural: str | None = None) -> str:
    """``n`` and its noun, singular for one: "1 batch", "2,048 batches"."""
    return f"{n:,} {singular if n == 1 else plural or singular + 's'}"


def iso_ms(ms: int | None) -> str:
    """A timestamp (epoch ms) as ISO 8601 in UTC with milliseconds; ``-`` for none (None or
    Kafka's -1), the number itself where no calendar date holds it."""
    if ms is None or ms < 0:
        return "-"
    try:
        moment = datetime.fromtimestamp(ms / 1000, tz=UTC)
    except (OverflowError, OSError, ValueError):
        return str(ms)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"
