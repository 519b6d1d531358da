"""Readers for the text checkpoint files in a Kafka log dir and its partition dirs.

All but ``partition.metadata`` share ``CheckpointFile``'s format (UTF-8, one item a line)::

    0          <- version (0 for every file below)
    2          <- number of entries
    <entry>    <- one a line, fields separated by whitespace
    <entry>

In a partition dir ``leader-epoch-checkpoint`` holds ``epoch start_offset`` entries
(``LeaderEpochCheckpointFile``). In the log dir ``recovery-point-offset-checkpoint``,
``log-start-offset-checkpoint`` (``LogManager``), ``replication-offset-checkpoint`` (high
watermarks, ``ReplicaManager``) and ``cleaner-offset-checkpoint`` (``LogCleanerManager``) hold
``topic partition offset`` entries (``OffsetCheckpointFile``).

Parsing follows ``CheckpointFile.CheckpointReadBuffer``: an empty file, or one that ends after
the version line, has no entries; the version and count lines are ``Integer.parseInt``
exactly (no spaces); each entry line is split on ``\\s+`` as Java's ``Pattern.split`` does (a
leading blank makes an empty first field, which makes the line malformed); the number of
entry lines must equal the count. Lines end at ``\\n``, ``\\r`` or ``\\r\\n``
(``BufferedReader.readLine``). Every failure is an :class:`IndexFileError` naming the file,
the line number (in the reason) and the byte position of the line.
"""

from __future__ import annotations

import base64
import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from ..errors import IndexFileError

LEADER_EPOCH_CHECKPOINT = "leader-epoch-checkpoint"
RECOVERY_POINT_CHECKPOINT = "recovery-point-offset-checkpoint"
REPLICATION_OFFSET_CHECKPOINT = "replication-offset-checkpoint"
LOG_START_OFFSET_CHECKPOINT = "log-start-offset-checkpoint"
CLEANER_OFFSET_CHECKPOINT = "cleaner-offset-checkpoint"
PARTITION_METADATA = "partition.metadata"
#: Names of the files in ``topic partition offset`` format.
OFFSET_CHECKPOINTS = (
    RECOVERY_POINT_CHECKPOINT,
    REPLICATION_OFFSET_CHECKPOINT,
    LOG_START_OFFSET_CHECKPOINT,
    CLEANER_OFFSET_CHECKPOINT,
)
#: Files of a data directory that hold no batches and no format of ours: kafka-dump-log
#: answers "Ignoring unknown file" for them (``DumpLogSegments.execute``, the suffix switch).
UNKNOWN_FILES = frozenset({"meta.properties", "quorum-state", ".kafka_cleanshutdown", ".lock"})
#: Suffixes of such files.
UNKNOWN_SUFFIXES = frozenset({".properties", ".tmp"})
#: ``LeaderEpochCheckpointFile.CURRENT_VERSION`` and ``OffsetCheckpointFile.CURRENT_VERSION``.
CHECKPOINT_VERSION = 0

_INT32 = (-(1 << 31), (1 << 31) - 1)
_INT64 = (-(1 << 63), (1 << 63) - 1)
# Integer.parseInt takes any Unicode decimal digit (Character.digit), as \d does in Python.
_JAVA_INT = re.compile(r"[+-]?\d+")
_LINE_END = re.compile(r"\r\n|\r|\n")
# Java's \s: [ \t\n\x0B\f\r].
_JAVA_WHITESPACE = re.compile(r"[ \t\n\x0b\f\r]+")
# PartitionMetadataReadBuffer splits its "key: value" lines on ":\s+".
_COLON_WHITESPACE = re.compile(r":[ \t\n\x0b\f\r]+")
_URL_BASE64 = re.compile(r"[A-Za-z0-9_-]*={0,2}")

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class EpochEntry:
    """``EpochEntry``: leader ``epoch`` began writing at ``start_offset``."""

    epoch: int
    start_offset: int


@dataclass(frozen=True, slots=True)
class TopicPartition:
    topic: str
    partition: int


@dataclass(frozen=True, slots=True)
class PartitionMetadata:
    """``partition.metadata``: the topic id of the partition's topic."""

    version: int
    #: As written: Kafka's URL-safe base64 of 16 bytes, without padding.
    topic_id: str

    @property
    def topic_id_bytes(self) -> bytes:
        raw = _uuid_bytes(self.topic_id)
        if raw is None:
            raise ValueError(f"{self.topic_id!r} is not a base64 UUID")
        return raw


class _Line:
    """A line of text with its number (from 1) and the byte position it starts at."""

    __slots__ = ("number", "position", "text")

    def __init__(self, text: str, number: int, position: int) -> None:
        self.text = text
        self.number = number
        self.position = position


def _lines(data: bytes, file: str | None) -> list[_Line]:
    try:
        text = bytes(data).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise IndexFileError(f"not UTF-8: {exc.reason}", file=file, position=exc.start) from None
    lines = []
    start = 0
    number = 1
    for match in _LINE_END.finditer(text):
        lines.append(_Line(text[start : match.start()], number, start))
        start = match.end()
        number += 1
    if start < len(text):
        lines.append(_Line(text[start:], number, start))
    # Positions were counted in characters; turn them into byte positions.
    if len(text) != len(data):
        for line in lines:
            line.position = len(text[: line.position].encode("utf-8"))
    return lines


def _error(line: _Line, reason: str, file: str | None) -> IndexFileError:
    return IndexFileError(
        f"checkpoint line {line.number}: {reason}: {line.text!r}", file=file, position=line.position
    )


def _java_int(text: str, bounds: tuple[int, int]) -> int | None:
    """``Integer.parseInt`` / ``Long.parseLong``; None where Java would throw."""
    # Java reads UTF-16 units: a digit outside the BMP is two surrogates, neither a digit.
    if not _JAVA_INT.fullmatch(text) or any(ord(c) > 0xFFFF for c in text):
        return None
    value = int(text)
    return value if bounds[0] <= value <= bounds[1] else None


def _java_split(text: str, pattern: re.Pattern[str] = _JAVA_WHITESPACE) -> list[str]:
    """Java's ``Pattern.split(text)``: the whole text when nothing matches; otherwise a
    leading empty field is kept (the pattern has positive width) and trailing ones dropped."""
    if not pattern.search(text):
        return [text]
    parts = pattern.split(text)
    while parts and parts[-1] == "":
        parts.pop()
    return parts


def _uuid_bytes(text: str) -> bytes | None:
    """``Uuid.fromString``: at most 24 characters of URL-safe base64 decoding to 16 bytes."""
    if len(text) > 24 or not _URL_BASE64.fullmatch(text):
        return None
    padded = text if "=" in text else text + "=" * (-len(text) % 4)
    try:
        raw = base64.urlsafe_b64decode(padded)
    except ValueError:
        return None
    return raw if len(raw) == 16 else None


def parse_checkpoint(
    data: bytes,
    parse_entry: Callable[[list[str]], T | None],
    *,
    version: int = CHECKPOINT_VERSION,
    file: str | None = None,
) -> list[T]:
    """The ``CheckpointFile`` format with a given entry parser (fields -> entry, or None if
    the line is malformed)."""
    lines = _lines(data, file)
    if not lines:
        return []
    found_version = _java_int(lines[0].text, _INT32)
    if found_version is None:
        raise _error(lines[0], "malformed version", file)
    if found_version != version:
        raise _error(lines[0], f"unrecognised version {found_version}, expected {version}", file)
    if len(lines) == 1:
        return []
    expected = _java_int(lines[1].text, _INT32)
    if expected is None:
        raise _error(lines[1], "malformed entry count", file)
    if expected < 0:
        raise _error(lines[1], f"negative entry count {expected}", file)
    entries = []
    for line in lines[2:]:
        entry = parse_entry(_java_split(line.text))
        if entry is None:
            raise _error(line, "malformed entry", file)
        entries.append(entry)
    if len(entries) < expected:
        raise _error(lines[1], f"{expected} entries counted, {len(entries)} found", file)
    if len(entries) > expected:
        raise _error(lines[2 + expected], f"entry beyond the {expected} counted", file)
    return entries


def _epoch_entry(fields: list[str]) -> EpochEntry | None:
    if len(fields) != 2:
        return None
    epoch = _java_int(fields[0], _INT32)
    start = _java_int(fields[1], _INT64)
    if epoch is None or start is None:
        return None
    return EpochEntry(epoch, start)


def _offset_entry(fields: list[str]) -> tuple[TopicPartition, int] | None:
    if len(fields) != 3:
        return None
    partition = _java_int(fields[1], _INT32)
    offset = _java_int(fields[2], _INT64)
    if partition is None or offset is None:
        return None
    return TopicPartition(fields[0], partition), offset


def parse_leader_epoch_checkpoint(data: bytes, *, file: str | None = None) -> list[EpochEntry]:
    """``leader-epoch-checkpoint`` entries in file order."""
    return parse_checkpoint(data, _epoch_entry, file=file)


def parse_offset_checkpoint(data: bytes, *, file: str | None = None) -> dict[TopicPartition, int]:
    """An offset checkpoint as ``OffsetCheckpointFile.read`` returns it: a map in which a
    partition listed twice keeps its last offset."""
    return dict(parse_checkpoint(data, _offset_entry, file=file))


def parse_partition_metadata(data: bytes, *, file: str | None = None) -> PartitionMetadata:
    """``partition.metadata`` as the broker reads it, or an :class:`IndexFileError` saying why
    the broker would refuse it (``PartitionMetadataFile.read`` -> ``PartitionMetadataReadBuffer
    .read``, storage/.../internals/checkpoint/)::

        version: 0
        topic_id: <22 characters of URL-safe base64>

    ``PartitionMetadata.encode`` writes exactly that. The reader takes two lines
    (``BufferedReader.readLine``; whatever follows is never read), splits each on ``:\\s+`` at
    most once (``Pattern.split(line, 2)``) and wants two parts whose key is ``version``, then
    ``topic_id``; the version is ``Integer.parseInt``'d and must be at least 0 (a later version
    is accepted, for downgrades); the topic id is ``Uuid.fromString``'d (at most 24 characters
    of URL-safe base64 decoding to 16 bytes) and must not be the zero UUID. The file is read as
    UTF-8, which must decode. Any failure is an ``IOException`` for the broker, which then
    takes the log dir offline: the error names the file, the line and what is wrong.
    """
    lines = _lines(data, file)
    version_line = _metadata_line(lines, 0, _VERSION_KEY, len(data), file)
    version = _java_int(version_line[1], _INT32)
    if version is None:
        raise _metadata_error(lines[0], f"version {version_line[1]!r} is not an integer", file)
    if version < CHECKPOINT_VERSION:
        raise _metadata_error(lines[0], f"unrecognised version {version}", file)
    topic_id = _metadata_line(lines, 1, _TOPIC_ID_KEY, len(data), file)[1]
    raw = _uuid_bytes(topic_id)
    if raw is None:
        raise _metadata_error(
            lines[1],
            f"topic id {topic_id!r} is not a base64 UUID (at most 24 characters of URL-safe "
            "base64 decoding to 16 bytes)",
            file,
        )
    if raw == bytes(16):
        raise _metadata_error(lines[1], "topic id is the zero UUID, which the broker refuses", file)
    return PartitionMetadata(version, topic_id)


_VERSION_KEY = "version"
_TOPIC_ID_KEY = "topic_id"


def _metadata_error(line: _Line, reason: str, file: str | None) -> IndexFileError:
    return IndexFileError(
        f"partition.metadata line {line.number}: {reason}: {line.text!r}",
        file=file,
        position=line.position,
    )


def _metadata_line(lines: list[_Line], n: int, key: str, size: int, file: str | None) -> list[str]:
    """Line ``n`` as ``PartitionMetadataReadBuffer.parseLine`` takes it: ``key: value``."""
    if n >= len(lines):
        raise IndexFileError(
            f"partition.metadata: no line {n + 1}, expected '{key}: ...' there",
            file=file,
            position=size,
        )
    line = lines[n]
    parts = _java_split_once(line.text, _COLON_WHITESPACE)
    if len(parts) != 2 or parts[0] != key:
        raise _metadata_error(line, f"expected '{key}: ...'", file)
    return parts


def _java_split_once(text: str, pattern: re.Pattern[str]) -> list[str]:
    """Java's ``Pattern.split(text, 2)``: at most two parts, the second all that follows the
    first match, kept even when empty (a positive limit keeps trailing empty strings)."""
    match = pattern.search(text)
    return [text] if match is None else [text[: match.start()], text[match.end() :]]


def _read(path: str | os.PathLike[str]) -> tuple[bytes, str]:
    name = os.fspath(path)
    with open(name, "rb") as fh:
        return fh.read(), name


def read_leader_epoch_checkpoint(path: str | os.PathLike[str]) -> list[EpochEntry]:
    data, name = _read(path)
    return parse_leader_epoch_checkpoint(data, file=name)


def read_offset_checkpoint(path: str | os.PathLike[str]) -> dict[TopicPartition, int]:
    data, name = _read(path)
    return parse_offset_checkpoint(data, file=name)


def read_partition_metadata(path: str | os.PathLike[str]) -> PartitionMetadata:
    data, name = _read(path)
    return parse_partition_metadata(data, file=name)


def format_offset_checkpoint(entries: dict[TopicPartition, int]) -> str:
    """An ``OffsetCheckpointFile`` (``topic partition offset`` lines), as Kafka writes it:
    version 0, the count, then one entry a line (``CheckpointFile.write``)."""
    lines = [str(CHECKPOINT_VERSION), str(len(entries))]
    lines += [f"{tp.topic} {tp.partition} {offset}" for tp, offset in entries.items()]
    return "".join(f"{line}\n" for line in lines)


def format_leader_epoch_checkpoint(entries: list[EpochEntry]) -> str:
    """A ``leader-epoch-checkpoint`` (``epoch start_offset`` lines), as
    ``LeaderEpochCheckpointFile`` writes it."""
    lines = [str(CHECKPOINT_VERSION), str(len(entries))]
    lines += [f"{e.epoch} {e.start_offset}" for e in entries]
    return "".join(f"{line}\n" for line in lines)


__all__ = [
    "CHECKPOINT_VERSION",
    "CLEANER_OFFSET_CHECKPOINT",
    "LEADER_EPOCH_CHECKPOINT",
    "LOG_START_OFFSET_CHECKPOINT",
    "OFFSET_CHECKPOINTS",
    "PARTITION_METADATA",
    "RECOVERY_POINT_CHECKPOINT",
    "REPLICATION_OFFSET_CHECKPOINT",
    "EpochEntry",
    "PartitionMetadata",
    "TopicPartition",
    "format_leader_epoch_checkpoint",
    "format_offset_checkpoint",
    "parse_checkpoint",
    "parse_leader_epoch_checkpoint",
    "parse_offset_checkpoint",
    "parse_partition_metadata",
    "read_leader_epoch_checkpoint",
    "read_offset_checkpoint",
    "read_partition_metadata",
]
