"""Where keyed records sit: the ``--partitioner`` check of ``kafka-format verify``.

Every keyed data record is compared with the partition the Java producer's default partitioner
gives its key (``partitioner.default_partition``: murmur2, sign bit cleared, modulo the
partition count). The count is the highest ``topic-N`` directory found beside or under the
paths + 1, unless given. Misplaced records are findings of the partition directory's report,
with examples and hints (directories swapped; a topic that grew). Internal topics (``__*``)
are skipped: the coordinators place their keys by Java's ``String.hashCode``.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import KafkaFormatError
from ..files.names import parse_partition_dir_name
from ..log.partition import Partition
from ..model import Batch
from ..read.sources import partition_dirs
from ..write.partitioner import murmur2, murmur2_array, to_positive
from .report import PLACEMENT_KIND, FileReport, Severity, VerifyReport

#: Misplaced records listed per partition; the rest are only counted.
MAX_PLACEMENT_EXAMPLES = 5
#: Earlier partition counts named in a hint, and the misplaced records needed before one is.
_MAX_HINTED_COUNTS = 3
_MIN_FOR_COUNT_HINT = 3


def show_key(key: bytes, limit: int = 32) -> str:
    """A key for a one-line message: quoted text when it is printable UTF-8, else hex;
    cut after ``limit`` characters (bytes for hex), with its length then."""
    try:
        text = key.decode("utf-8")
    except UnicodeDecodeError:
        text = None
    if text is not None and text.isprintable():
        shown = json.dumps(text[:limit], ensure_ascii=False)
        return shown if len(text) <= limit else f"{shown}... ({len(key)} bytes)"
    shown = "0x" + key[:limit].hex()
    return shown if len(key) <= limit else f"{shown}... ({len(key)} bytes)"


@dataclass(slots=True)
class TopicPlacement:
    """One topic under ``--partitioner``: the partition count used, why, and the totals."""

    topic: str
    #: The count keys were hashed with; None when the topic was not checked.
    partitions: int | None
    #: Where the count came from, for the reader ("given", or the directories found).
    source: str
    #: Why the topic was not checked (internal topics).
    skipped: str | None = None
    keyed: int = 0
    unkeyed: int = 0
    misplaced: int = 0
    checked: list[int] = field(default_factory=list)

    def line(self) -> str:
        if self.skipped is not None:
            return f"partitioner: {self.topic}: not checked ({self.skipped})"
        n = len(self.checked)
        return (
            f"partitioner: {self.topic}: {self.partitions} "
            f"partition{'s' * (self.partitions != 1)} ({self.source}); "
            f"{n} partition{'s' * (n != 1)} checked: {self.keyed} keyed records, "
            f"{self.misplaced} misplaced ({self.unkeyed} without a key, not checked)"
        )

    def as_json(self) -> dict[str, Any]:
        return {
            "topic": self.topic,
            "partitions": self.partitions,
            "partitionsFrom": self.source,
            "skipped": self.skipped,
            "checkedPartitions": sorted(self.checked),
            "keyed": self.keyed,
            "unkeyed": self.unkeyed,
            "misplaced": self.misplaced,
        }


class PartitionPlacement:
    """The keyed records of one partition against the partition their key hashes to."""

    def __init__(
        self,
        topic: TopicPlacement,
        partition: int,
        report: FileReport,
        severity: Severity,
    ) -> None:
        assert topic.partitions is not None
        self.topic = topic
        self.partition = partition
        self.count = topic.partitions
        self.report = report
        self.severity: Severity = severity
        self.keyed = self.unkeyed = self.misplaced = 0
        self.examples: list[dict[str, Any]] = []
        #: The partitions the misplaced records hash to, and how many to each.
        self.hashed_to: dict[int, int] = {}
        #: Smaller partition counts under which every misplaced record so far hashes here
        #: (not 1: under it everything is in partition 0, which says nothing).
        self.earlier_counts = set(range(max(2, partition + 1), self.count))

    def check(self, batch: Batch, file: str) -> None:
        count, here = self.count, self.partition
        for record in batch.records:
            key = record.key
            if key is None:
                self.unkeyed += 1
                continue
            self.keyed += 1
            hashed = to_positive(murmur2(key))
            expected = hashed % count
            if expected == here:
                continue
            self.misplaced += 1
            self.hashed_to[expected] = self.hashed_to.get(expected, 0) + 1
            if self.earlier_counts:
                self.earlier_counts = {c for c in self.earlier_counts if hashed % c == here}
            if len(self.examples) < MAX_PLACEMENT_EXAMPLES:
                self.examples.append(
                    {
                        "offset": record.offset,
                        "key": base64.b64encode(key).decode("ascii"),
                        "keyText": show_key(key),
                        "expected": expected,
                        "file": file,
                        "position": batch.position,
                    }
                )

    def check_rows(self, keys, offsets, positions, file: str) -> None:
        """:meth:`check` for many records at once: an Arrow array of keys, their offsets and
        the positions of their batches (numpy), as ``verify``'s fast path has them."""
        import numpy as np

        hashes = murmur2_array(keys)
        keyed = ~np.asarray(hashes.is_null(), bool)
        self.keyed += int(keyed.sum())
        self.unkeyed += int((~keyed).sum())
        positive = hashes.fill_null(0).to_numpy().astype(np.int64) & 0x7FFFFFFF
        expected = positive % self.count
        wrong = np.flatnonzero(keyed & (expected != self.partition))
        if not len(wrong):
            return
        self.misplaced += len(wrong)
        for part, n in zip(*np.unique(expected[wrong], return_counts=True), strict=True):
            self.hashed_to[int(part)] = self.hashed_to.get(int(part), 0) + int(n)
        self.earlier_counts = {
            c for c in self.earlier_counts if bool(np.all(positive[wrong] % c == self.partition))
        }
        for k in wrong[: max(0, MAX_PLACEMENT_EXAMPLES - len(self.examples))].tolist():
            key = keys[k].as_py()
            self.examples.append(
                {
                    "offset": int(offsets[k]),
                    "key": base64.b64encode(key).decode("ascii"),
                    "keyText": show_key(key),
                    "expected": int(expected[k]),
                    "file": file,
                    "position": int(positions[k]),
                }
            )

    def finish(self) -> None:
        """Record the counts, and a finding when records are misplaced."""
        self.report.counts.update(
            keyed=self.keyed,
            unkeyed=self.unkeyed,
            misplaced=self.misplaced,
            partitions=self.count,
        )
        self.topic.keyed += self.keyed
        self.topic.unkeyed += self.unkeyed
        self.topic.misplaced += self.misplaced
        self.topic.checked.append(self.partition)
        if not self.misplaced:
            return
        shown = ", ".join(
            f"offset {e['offset']} key {e['keyText']} -> {e['expected']}" for e in self.examples
        )
        more = ", ..." if self.misplaced > len(self.examples) else ""
        message = (
            f"{self.misplaced} of {self.keyed} keyed records hash to another partition than "
            f"{self.partition} with {self.count} partitions ({shown}{more})"
        )
        hints = self._hints()
        if hints:
            message += "; " + "; ".join(hints)
        self.report.add(self.severity, "partitioner", message, details=self.examples)

    def _hints(self) -> list[str]:
        hints = []
        if self.partition >= self.count:
            hints.append(f"partition {self.partition} is beyond the {self.count} partitions used")
        elif self.misplaced == self.keyed and len(self.hashed_to) == 1:
            (other,) = self.hashed_to
            hints.append(
                f"all of them hash to partition {other}: are these {self.topic.topic}-{other}'s "
                "files?"
            )
        if self.misplaced >= _MIN_FOR_COUNT_HINT and self.earlier_counts:
            counts = sorted(self.earlier_counts)[:_MAX_HINTED_COUNTS]
            hints.append(
                "all of them hash here with "
                + " or ".join(str(c) for c in counts)
                + " partitions (written before the topic grew, or with another count)"
            )
        return hints


def _found_partitions(paths: Sequence[str | Path]) -> dict[str, tuple[set[int], set[Path]]]:
    """Per topic, the partition numbers of the live ``topic-N`` directories beside or under
    the paths verify is given, and the log dirs they were found in."""
    log_dirs: set[Path] = set()
    for raw in paths:
        path = Path(raw)
        try:
            if path.is_dir():
                if _is_partition_dir(path):
                    log_dirs.add(path.parent)
                else:
                    log_dirs.add(path)
            elif path.is_file():
                log_dirs.add(path.parent.parent)
        except (KafkaFormatError, OSError):
            continue  # verify_paths reports it
    found: dict[str, tuple[set[int], set[Path]]] = {}
    for log_dir in sorted(log_dirs):
        try:
            subs = partition_dirs(log_dir)
        except OSError:
            continue
        for sub in subs:
            parsed = parse_partition_dir_name(sub.name)
            numbers, where = found.setdefault(parsed.topic, (set(), set()))
            numbers.add(parsed.partition)
            where.add(log_dir)
    return found


def _is_partition_dir(path: Path) -> bool:
    partition = Partition.open(path)
    return bool(partition.segments or partition.snapshots or partition.orphans)


class Placements:
    """The ``--partitioner`` check over one verify run: a count per topic, decided once, and a
    :class:`PartitionPlacement` per partition directory read.

    ``partitions`` is one count for every topic, or counts by topic name where the key None
    stands for the topics not named; a topic without a count gets the highest partition
    number among the ``topic-N`` directories beside or under ``paths``, + 1.
    """

    def __init__(
        self,
        paths: Sequence[str | Path],
        partitions: Mapping[str | None, int] | int | None = None,
        *,
        severity: Severity = "warning",
    ) -> None:
        given = {None: partitions} if isinstance(partitions, int) else dict(partitions or {})
        for count in given.values():
            if count < 1:
                raise ValueError(f"a partition count must be positive, got {count}")
        self.default: int | None = given.pop(None, None)
        self.given: dict[str, int] = {k: v for k, v in given.items() if k is not None}
        self.severity: Severity = severity
        self.found = _found_partitions(paths)
        self.topics: dict[str, TopicPlacement] = {}

    def topic(self, name: str, partition: int) -> TopicPlacement:
        if name in self.topics:
            return self.topics[name]
        if name.startswith("__"):
            placement = TopicPlacement(
                name, None, "", skipped="an internal topic: its keys are placed by Java's "
                "String.hashCode, not by the producer's partitioner"
            )  # fmt: skip
        elif name in self.given or self.default is not None:
            placement = TopicPlacement(name, self.given.get(name, self.default), "given")
        else:
            numbers, where = self.found.get(name, (set(), set()))
            numbers = numbers | {partition}
            count = max(numbers) + 1
            dirs = ", ".join(str(p) for p in sorted(where)) or "."
            missing = count - len(numbers)
            gaps = f", {missing} below it absent" if missing else ""
            placement = TopicPlacement(
                name,
                count,
                f"{name}-{count - 1} is the highest partition directory in {dirs}{gaps}; a "
                f"broker holds only its replicas: --partitions {name}=N if there are more",
            )
        self.topics[name] = placement
        return placement

    def for_directory(self, directory: Path, report: VerifyReport) -> PartitionPlacement | None:
        """The check of the partition in ``directory``; None (reported) when its name does not
        say which partition it is, or its topic is not checked."""
        try:
            parsed = parse_partition_dir_name(directory.name)
        except KafkaFormatError:
            report.new(directory, PLACEMENT_KIND).warning(
                "partitioner",
                "cannot tell the topic and partition from the directory name (topic-N): "
                "keys not checked",
            )
            return None
        topic = self.topic(parsed.topic, parsed.partition)
        if topic.partitions is None:
            return None
        return PartitionPlacement(
            topic, parsed.partition, report.new(directory, PLACEMENT_KIND), self.severity
        )
