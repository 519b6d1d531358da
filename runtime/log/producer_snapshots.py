"""Producer snapshots against a rebuilt state: field-by-field differences
(:func:`diff_snapshot`, :class:`FieldDifference`), a ``.snapshot`` file's verdict
(:class:`SnapshotCheck`), and the snapshot loading starts from (the seed)."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from ..errors import KafkaFormatError
from ..files.snapshot import ProducerSnapshot, ProducerSnapshotEntry, read_producer_snapshot
from .partition import Partition, SnapshotFile
from .producer_loader import ProducerStateLoader
from .producer_state import DEFAULT_PRODUCER_ID_EXPIRATION_MS, SNAPSHOT_FIELDS, ProducerState

Seed = Literal["auto"] | str | os.PathLike[str] | None

# --- snapshot comparison ----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class FieldDifference:
    """One field of one producer that differs; ``field`` "presence" when one side lacks the
    producer (its value there is None)."""

    producer_id: int
    field: str
    rebuilt: int | None
    stored: int | None
    explained_by: str | None = None

    def __str__(self) -> str:
        if self.field == "presence":
            side = "the snapshot" if self.stored is None else "the log"
            text = f"producer {self.producer_id}: not in {side}"
        else:
            text = (
                f"producer {self.producer_id}: {self.field} rebuilt {self.rebuilt}, "
                f"stored {self.stored}"
            )
        return f"{text} ({self.explained_by})" if self.explained_by else text

    def as_json(self) -> dict:
        return {
            "producerId": self.producer_id,
            "field": self.field,
            "rebuilt": self.rebuilt,
            "stored": self.stored,
            "explainedBy": self.explained_by,
        }


def diff_snapshot(
    rebuilt: Mapping[int, ProducerState],
    snapshot: ProducerSnapshot | Iterable[ProducerSnapshotEntry],
    *,
    clock: int | None = None,
    expiration_ms: int | None = DEFAULT_PRODUCER_ID_EXPIRATION_MS,
    cleaned_to: int | None = None,
) -> list[FieldDifference]:
    """Field-by-field differences between a rebuilt state and a snapshot's entries.

    Differences the broker explains carry ``explained_by``: a producer missing from the
    snapshot with no open transaction whose last timestamp is ``expiration_ms`` or more before
    ``clock`` (the broker expires such producers); a producer whose stored last batch lies
    below ``cleaned_to`` and is no longer in the log (the cleaner removed it).
    """
    entries = snapshot.entries if isinstance(snapshot, ProducerSnapshot) else tuple(snapshot)
    stored = {e.producer_id: e for e in entries}
    out: list[FieldDifference] = []
    for pid in sorted(set(stored) | set(rebuilt)):
        state, entry = rebuilt.get(pid), stored.get(pid)
        if entry is None:
            assert state is not None
            why = None
            if (
                expiration_ms is not None
                and clock is not None
                and state.current_txn_first_offset is None
                and clock - state.last_timestamp >= expiration_ms
            ):
                why = f"expired: idle for {expiration_ms} ms or more by the log's clock"
            out.append(FieldDifference(pid, "presence", pid, None, why))
            continue
        if state is None:
            why = _cleaned(entry.last_offset, -1, cleaned_to)
            out.append(FieldDifference(pid, "presence", None, pid, why))
            continue
        mine = state.snapshot_entry()
        why = _cleaned(entry.last_offset, mine.last_offset, cleaned_to)
        for name in SNAPSHOT_FIELDS:
            a, b = getattr(mine, name), getattr(entry, name)
            if a != b:
                out.append(FieldDifference(pid, name, a, b, why))
    return out


def _cleaned(stored_last: int, rebuilt_last: int, cleaned_to: int | None) -> str | None:
    if cleaned_to is not None and rebuilt_last < stored_last < cleaned_to:
        return (
            f"the batch at offset {stored_last} is gone, below the cleaner checkpoint {cleaned_to}"
        )
    return None


@dataclass(slots=True)
class SnapshotCheck:
    """A ``.snapshot`` file against the state rebuilt up to its offset.

    ``status``: ``ok``; ``mismatch`` (unexplained differences); ``unreadable`` (bad CRC or
    structure); ``seed`` (the state was loaded from it); ``not_checked`` (below where loading
    started, or above the ``at`` offset).
    """

    path: Path
    offset: int
    status: str
    differences: list[FieldDifference] = field(default_factory=list)
    reason: str | None = None
    entries: int | None = None

    @property
    def ok(self) -> bool:
        return self.status not in ("mismatch", "unreadable")

    def as_json(self) -> dict:
        return {
            "file": str(self.path),
            "offset": self.offset,
            "status": self.status,
            "entries": self.entries,
            "reason": self.reason,
            "differences": [d.as_json() for d in self.differences],
        }


def choose_seed(
    partition: Partition,
    seed: Seed,
    log_start: int,
    at: int | None,
    checks: list[SnapshotCheck],
) -> tuple[SnapshotFile | None, list[ProducerState]]:
    if seed is None:
        return None, []
    if seed != "auto":
        chosen = Path(seed)
        snapshot = read_producer_snapshot(chosen)
        if snapshot.offset is None:
            raise KafkaFormatError(
                "not named <offset>.snapshot: its offset is unknown", file=str(chosen)
            )
        if at is not None and snapshot.offset > at:
            raise KafkaFormatError(
                f"the snapshot is at offset {snapshot.offset}, above --at {at}", file=str(chosen)
            )
        return SnapshotFile(snapshot.offset, chosen), _states(snapshot)
    if log_start == 0:
        return None, []
    for snap in partition.snapshots:
        if snap.offset < log_start or (at is not None and snap.offset > at):
            continue
        try:
            snapshot = read_producer_snapshot(snap.path)
        except KafkaFormatError as exc:
            # As loadFromSnapshot: a corrupt snapshot is passed over for the next one.
            checks.append(SnapshotCheck(snap.path, snap.offset, "unreadable", reason=str(exc)))
            continue
        return snap, _states(snapshot)
    return None, []


def _states(snapshot: ProducerSnapshot) -> list[ProducerState]:
    return [ProducerState.from_snapshot_entry(e) for e in snapshot.entries]


def check_snapshot(
    snap: SnapshotFile,
    loader: ProducerStateLoader,
    cleaned_to: int | None,
    expiration_ms: int | None,
) -> SnapshotCheck:
    try:
        stored = read_producer_snapshot(snap.path)
    except KafkaFormatError as exc:
        return SnapshotCheck(snap.path, snap.offset, "unreadable", reason=str(exc))
    differences = diff_snapshot(
        loader.producers,
        stored,
        clock=loader.clock if loader.clock >= 0 else None,
        expiration_ms=expiration_ms,
        cleaned_to=cleaned_to,
    )
    unexplained = any(d.explained_by is None for d in differences)
    return SnapshotCheck(
        snap.path,
        snap.offset,
        "mismatch" if unexplained else "ok",
        differences,
        entries=len(stored.entries),
    )
