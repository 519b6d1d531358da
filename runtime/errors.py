"""One exception tree for everything kafka-format reports about bad input.

Every error names where it happened (file, byte position, batch base offset) and why, with
stored against computed values where there are two, so that one line is enough for an
operator: ``segment.log @4096 (base offset 120): stored crc 0x1234abcd, computed 0xdeadbeef``.
"""

from __future__ import annotations


class KafkaFormatError(Exception):
    """Root of every error kafka-format raises about input it reads."""

    def __init__(
        self,
        reason: str,
        *,
        file: str | None = None,
        position: int | None = None,
        base_offset: int | None = None,
    ) -> None:
        self.reason = reason
        self.file = file
        self.position = position
        self.base_offset = base_offset
        super().__init__(reason)

    def located(
        self,
        *,
        file: str | None = None,
        position: int | None = None,
        base_offset: int | None = None,
    ) -> KafkaFormatError:
        """Fill in location fields that the raiser could not know; returns self."""
        if self.file is None:
            self.file = file
        if self.position is None:
            self.position = position
        if self.base_offset is None:
            self.base_offset = base_offset
        return self

    def __str__(self) -> str:
        return located(self.file, self.position, self.base_offset, self.reason)


def located(file: object, position: int | None, base_offset: int | None, cause: str) -> str:
    """The one way a finding is written: ``file @position (base offset N): cause``, leaving
    out what is not known (``format.messages`` re-exports it for every consumer)."""
    where = []
    if file is not None:
        where.append(str(file))
    if position is not None:
        where.append(f"@{position}")
    if base_offset is not None:
        where.append(f"(base offset {base_offset})")
    prefix = " ".join(where)
    return f"{prefix}: {cause}" if prefix else cause


class CorruptBatchError(KafkaFormatError):
    """A batch whose frame is intact but whose content is wrong (CRC, fields, records)."""


class CrcMismatchError(CorruptBatchError):
    """The stored checksum does not match the one computed over the bytes."""

    def __init__(self, stored: int, computed: int, *, algorithm: str = "crc", **where) -> None:
        self.stored = stored
        self.computed = computed
        super().__init__(f"stored {algorithm} 0x{stored:08x}, computed 0x{computed:08x}", **where)


class DecompressionError(CorruptBatchError):
    """Compressed records that the codec cannot decode."""


class DecompressionLimitError(DecompressionError):
    """Decompressed output would exceed the configured per-batch bound."""


class UnsupportedCodecError(CorruptBatchError):
    """A codec id Kafka does not define, or one not allowed for this magic."""


class FramingError(KafkaFormatError):
    """The frame itself (offset, length, magic) is unusable: reading cannot go on past it.

    ``resume`` is where the next batch whose CRC holds starts (``framing.resync``), when one
    was found near enough: where a salvaging reader could go on."""

    def __init__(self, reason: str, *, resume: int | None = None, **where) -> None:
        self.resume = resume
        super().__init__(reason, **where)


class IndexFileError(KafkaFormatError):
    """A .index, .timeindex, .txnindex, .snapshot or checkpoint file is malformed."""
