"""``stats --what-if``: what the data of a log would take re-encoded as v2 batches, uncompressed
and with each codec (the question "what would upgrading the message format or turning on
compression save us?"). ``stats.log_stats(what_if=True)`` drives it; nothing here reads a log's
headers itself.

The estimate re-encodes a sample of whole batches (spread evenly over each partition) with the
project's v2 encoder (``writer.encode_records`` / ``encode_record_batch``, byte-identical to the
Construct builders) and ``codecs.compress``, and scales up by the sample's share of the
uncompressed bytes. Batches are re-encoded as they lie (a v2 batch or a v0/v1 wrapper becomes
one v2 batch), except runs of uncompressed v0/v1 messages, which were one message per entry only
because the old formats have no uncompressed batch: those are grouped into batches of up to
``batch_size`` bytes (16384, the producer's ``batch.size``). ``batch_size`` given explicitly
regroups everything that way.

A partition's :class:`Sampler` hears, file by file, the valid batches stats' header pass found
(:meth:`Sampler.add_file`), groups them into units re-encoded together, then picks and encodes
a sample; :func:`estimate` scales each partition's sample up and sets the partitions' and the
total's :class:`WhatIf`.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from ...schemas.record import RecordSpec
from ..errors import KafkaFormatError
from ..format import layout
from ..format.batches import ReadOptions, read_batch
from ..format.codecs import Codec, compress
from ..format.framing import iter_frames
from ..model import Record
from ..read.sources import LogInput
from ..write.accumulator import DEFAULT_BATCH_SIZE
from ..write.writer import encode_record_batch, encode_records


class Estimated(Protocol):
    """What :func:`estimate` reads and writes of a partition's statistics
    (``stats.PartitionStats``, which holds a :class:`WhatIf`)."""

    control_bytes: int
    what_if: WhatIf | None


__all__ = [
    "DEFAULT_BATCH_SIZE",
    "DEFAULT_SAMPLE",
    "WHAT_IF_CODECS",
    "Sampler",
    "WhatIf",
    "WhatIfEstimate",
    "estimate",
]

#: Records re-encoded, about, over all partitions.
DEFAULT_SAMPLE = 10_000
WHAT_IF_CODECS = (Codec.NONE, Codec.GZIP, Codec.SNAPPY, Codec.LZ4, Codec.ZSTD)


# --- results ----------------------------------------------------------------------------------


@dataclass(slots=True)
class WhatIfEstimate:
    """The data re-encoded as v2 with one codec (``none``: uncompressed)."""

    codec: str
    #: Estimated bytes of all valid batches (control batches unchanged).
    bytes: int
    #: The same, for the sampled batches alone (measured, not estimated).
    sample_bytes: int
    now_bytes: int

    @property
    def ratio(self) -> float | None:
        """Estimate / bytes now."""
        return self.bytes / self.now_bytes if self.now_bytes else None

    @property
    def saving(self) -> int:
        return self.now_bytes - self.bytes

    def as_json(self) -> dict[str, Any]:
        return {
            "codec": self.codec,
            "bytes": self.bytes,
            "ratio": rounded(self.ratio),
            "savingBytes": self.saving,
            "savingFraction": rounded(self.saving / self.now_bytes if self.now_bytes else None),
            "sampleBytes": self.sample_bytes,
        }


@dataclass(slots=True)
class WhatIf:
    """``what_if``'s answer for a partition or the total."""

    #: "source" (as the batches lie) or the batch.size used to regroup records.
    batching: str | int
    sample_records: int = 0
    sample_batches: int = 0
    #: Uncompressed bytes of the sampled batches and of all data batches: the scale factor.
    sample_uncompressed_bytes: int = 0
    uncompressed_bytes: int = 0
    #: Bytes of the valid batches now (control batches included).
    now_bytes: int = 0
    estimates: list[WhatIfEstimate] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def fraction(self) -> float | None:
        """The sample's share of the data (by uncompressed bytes)."""
        if not self.uncompressed_bytes:
            return None
        return self.sample_uncompressed_bytes / self.uncompressed_bytes

    def as_json(self) -> dict[str, Any]:
        return {
            "batching": self.batching,
            "sampleRecords": self.sample_records,
            "sampleBatches": self.sample_batches,
            "sampleFraction": rounded(self.fraction),
            "nowBytes": self.now_bytes,
            "estimates": [e.as_json() for e in self.estimates],
        }


# --- the sample and its re-encodings ----------------------------------------------------------


@dataclass(slots=True)
class _Unit:
    """Source batches re-encoded together: (file index, position, size) each."""

    refs: list[tuple[int, int, int]]
    records: int
    uncompressed: int
    #: Split into batches of at most this many bytes when re-encoded (None: one batch).
    split: int | None


class Sampler:
    """Units of one partition, built file by file from the header passes."""

    def __init__(self, inputs: list[LogInput], batch_size: int | None, max_bytes: int) -> None:
        self.inputs = inputs
        self.batch_size = batch_size
        self.max_bytes = max_bytes
        self.units: list[_Unit] = []
        self.uncompressed = 0
        self.now = 0  # bytes of the valid batches

    def add_file(
        self,
        index: int,
        position: np.ndarray,
        size: np.ndarray,
        records: np.ndarray,
        uncompressed: np.ndarray,
        control: np.ndarray,
        message: np.ndarray,
    ) -> None:
        """The valid batches of the partition's ``index``-th file, in file order: where each
        starts, its bytes on disk, its data records, its bytes uncompressed (headers, framing
        and payload), whether it is a control batch, and whether it is an uncompressed v0/v1
        message (always regrouped: see the module's docstring)."""
        run: _Unit | None = None
        limit = self.batch_size
        columns = zip(
            position.tolist(), size.tolist(), records.tolist(), uncompressed.tolist(),
            control.tolist(), message.tolist(), strict=True,
        )  # fmt: skip
        for start, frame_size, count, plain, is_control, is_message in columns:
            self.now += frame_size
            if is_control:
                continue
            self.uncompressed += plain
            ref = (index, start, frame_size)
            if limit is None and not is_message:
                run = None
                self.units.append(_Unit([ref], count, plain, None))
                continue
            cap = limit if limit is not None else DEFAULT_BATCH_SIZE
            if run is None or run.uncompressed + plain > cap:
                run = _Unit([], 0, 0, cap)
                self.units.append(run)
            run.refs.append(ref)
            run.records += count
            run.uncompressed += plain

    @property
    def records(self) -> int:
        return sum(u.records for u in self.units)

    def pick(self, want: int) -> list[_Unit]:
        """Units holding about ``want`` records, spread evenly over the partition."""
        counts = np.array([u.records for u in self.units], np.int64)
        total = int(counts.sum())
        if total == 0:
            return []
        if total <= want:
            return [u for u in self.units if u.records]
        nonempty = int((counts > 0).sum())
        picks = max(1, min(nonempty, round(want * nonempty / total)))
        cumulative = np.cumsum(counts)
        probes = ((np.arange(picks) + 0.5) * total / picks).astype(np.int64)
        chosen = np.unique(np.searchsorted(cumulative, probes, side="right"))
        return [self.units[i] for i in chosen.tolist()]

    def encode(self, units: list[_Unit]) -> tuple[dict[int, int], int, int, int]:
        """Bytes of ``units`` re-encoded with each codec; their records, the v2 batches they
        made, and their uncompressed bytes now. (A unit the reference decoder finds damaged
        after all is left out.)"""
        sizes = dict.fromkeys((int(c) for c in WHAT_IF_CODECS), 0)
        records = batches = uncompressed = 0
        decode = ReadOptions(verify_crc=False, records=True, max_decompressed_bytes=self.max_bytes)
        by_file: dict[int, list[_Unit]] = {}
        for unit in units:
            by_file.setdefault(unit.refs[0][0], []).append(unit)
        for index, file_units in by_file.items():
            log = self.inputs[index]
            with log.open() as view:
                for unit in file_units:
                    found: list[Record] = []
                    try:
                        for _, position, size in unit.refs:
                            frame = next(iter_frames(view, start=position, end=position + size))
                            found.extend(read_batch(frame, decode, file=log.name).records or [])
                    except KafkaFormatError:  # pragma: no cover - the passes said it was whole
                        continue
                    for batch in _v2_batches(found, unit.split):
                        batches += 1
                        for c in sizes:
                            sizes[c] += len(_v2_batch(batch, c))
                    records += len(found)
                    uncompressed += unit.uncompressed
        return sizes, records, batches, uncompressed


@dataclass(slots=True)
class _Payload:
    records: bytes
    count: int
    last_offset_delta: int
    base_timestamp: int
    max_timestamp: int


def _spec(r: Record, base_offset: int, base_timestamp: int) -> RecordSpec:
    timestamp = -1 if r.timestamp is None else r.timestamp
    return RecordSpec(
        key=r.key,
        value=r.value,
        headers=tuple((h.key, h.value) for h in r.headers),
        offset_delta=r.offset - base_offset,
        timestamp_delta=timestamp - base_timestamp,
    )


def _v2_batches(records: list[Record], split: int | None) -> Iterator[_Payload]:
    """v2 record payloads for ``records``: one batch, or batches filled up to ``split`` bytes
    (a batch takes records while its header and records fit; its first record always fits),
    each based on its first record's offset and timestamp as Kafka's batch builder does."""
    i = 0
    while i < len(records):
        first = records[i]
        base_offset = first.offset
        base_ts = -1 if first.timestamp is None else first.timestamp
        parts: list[bytes] = []
        used = layout.V2_HEADER_SIZE
        max_ts = base_ts
        last_delta = 0
        while i < len(records):
            r = records[i]
            encoded = encode_records([_spec(r, base_offset, base_ts)])
            if split is not None and parts and used + len(encoded) > split:
                break
            parts.append(encoded)
            used += len(encoded)
            last_delta = r.offset - base_offset
            if r.timestamp is not None:
                max_ts = max(max_ts, r.timestamp)
            i += 1
        yield _Payload(b"".join(parts), len(parts), last_delta, base_ts, max_ts)


def _v2_batch(batch: _Payload, codec: int) -> bytes:
    """The v2 batch (frame included) holding ``batch``'s records, compressed with ``codec``."""
    payload = compress(codec, batch.records, magic=2) if codec else batch.records
    return encode_record_batch(
        payload,
        records_count=batch.count,
        last_offset_delta=batch.last_offset_delta,
        base_timestamp=batch.base_timestamp,
        max_timestamp=batch.max_timestamp,
        attributes=codec,
    )


def estimate(
    partitions: list[Estimated],
    samplers: list[Sampler],
    total: Estimated,
    sample: int,
    batch_size: int | None,
) -> None:
    """Set ``what_if`` on each partition (its sampler's units) and on the total: about
    ``sample`` records over all partitions, each partition's share by its records."""
    started = time.perf_counter()
    batching: str | int = "source" if batch_size is None else batch_size
    all_records = sum(s.records for s in samplers)
    overall = WhatIf(batching)
    sums = dict.fromkeys((int(c) for c in WHAT_IF_CODECS), 0)
    measured = dict.fromkeys(sums, 0)
    for stats, sampler in zip(partitions, samplers, strict=True):
        records = sampler.records
        if all_records <= sample:
            want = records
        else:
            want = max(1, round(sample * records / all_records)) if records else 0
        units = sampler.pick(want)
        encoded, got, batches, sampled = sampler.encode(units)
        part = WhatIf(batching, got, batches)
        part.sample_uncompressed_bytes = sampled
        part.uncompressed_bytes = sampler.uncompressed
        part.now_bytes = sampler.now
        data_now = sampler.now - stats.control_bytes
        for c in sums:
            if part.sample_uncompressed_bytes:
                scale = part.uncompressed_bytes / part.sample_uncompressed_bytes
                scaled = round(encoded[c] * scale)
            else:
                scaled = data_now  # nothing to re-encode (empty or no data batches): unchanged
            estimate = scaled + stats.control_bytes
            part.estimates.append(
                WhatIfEstimate(_codec_name(c), estimate, encoded[c], part.now_bytes)
            )
            sums[c] += estimate
            measured[c] += encoded[c]
        stats.what_if = part
        overall.sample_records += part.sample_records
        overall.sample_batches += part.sample_batches
        overall.sample_uncompressed_bytes += part.sample_uncompressed_bytes
        overall.uncompressed_bytes += part.uncompressed_bytes
        overall.now_bytes += part.now_bytes
    overall.estimates = [
        WhatIfEstimate(_codec_name(c), sums[c], measured[c], overall.now_bytes) for c in sums
    ]
    overall.seconds = time.perf_counter() - started
    total.what_if = overall


def rounded(value: float | int | None, digits: int = 4) -> float | int | None:
    """Floats in the JSON forms (``stats`` rounds its own alike)."""
    if value is None or isinstance(value, int):
        return value
    return round(value, digits)


def _codec_name(codec: int) -> str:
    return Codec(codec).name.lower()
