"""A frame's bytes to a :class:`~.model.Batch` and its records.

The v2 batch header, read here field by field because a corrupt batch must still report
its header (dump prints it with ``isvalid: false``), as ``DefaultRecordBatch.java`` lays it out
(the offsets, formats and masks used below come from ``layout``, generated from the schemas)::

    offset  size  field
    0       8     base_offset              int64
    8       4     batch_length             int32   bytes from offset 12 to the end
    12      4     partition_leader_epoch   int32
    16      1     magic                    int8    2
    17      4     crc                      uint32  CRC-32C of bytes 21..end
    21      2     attributes               int16   codec 0-2, timestamp type 3,
                                                   transactional 4, control 5, delete horizon 6
    23      4     last_offset_delta        int32
    27      8     base_timestamp           int64   (delete horizon when bit 6 is set)
    35      8     max_timestamp            int64
    43      8     producer_id              int64
    51      2     producer_epoch           int16
    53      4     base_sequence            int32
    57      4     records_count            int32
    61            records                  (compressed as a whole when codec != none)

and the v0/v1 log entry (``LegacyRecord.java``)::

    0   8  offset   8  4  message_size   12  4  crc (CRC-32 of 16..end)   16  1  magic
    17  1  attributes (codec 0-2, timestamp type 3)   [18  8  timestamp, magic 1 only]
    then key (int32 length, -1 null) and value (int32 length, -1 null)

The records themselves go through the Kaitai-generated parsers (``record_list``,
``legacy_message``, ``control_record_key``, ``end_txn_marker``), over the decompressed bytes
when the batch is compressed.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from dataclasses import dataclass
from io import BytesIO

from kaitaistruct import KaitaiStream, KaitaiStructError, ValidationExprError

from ...generated.kaitai.control_record_key import ControlRecordKey
from ...generated.kaitai.end_txn_marker import EndTxnMarker
from ...generated.kaitai.legacy_message import LegacyMessage
from ...generated.kaitai.record import Record as RecordType
from ...generated.kaitai.varint import Varint
from ..errors import CorruptBatchError, CrcMismatchError, FramingError, KafkaFormatError
from ..model import Batch, ControlMarker, ControlType, Header, Record, increment_sequence
from . import layout, messages
from .codecs import DEFAULT_MAX_BYTES, codec_of, decompress, resolve_codec
from .crc import crc32, crc32c
from .framing import Frame, iter_frames
from .sizes import LEGACY_RECORD_OVERHEAD, max_record_count

V2_HEADER = struct.Struct(layout.V2_HEADER_FORMAT)

LEGACY_PREFIX = struct.Struct(layout.LEGACY_HEADER_FORMAT)  # offset, size, crc, magic, attributes
_LEGACY_TIMESTAMP = struct.Struct(">q")
INT64_MAX = (1 << 63) - 1
INT64_MIN = -(1 << 63)

# Everything the generated parsers raise on bytes that do not fit the schema.
_PARSE_ERRORS = (KaitaiStructError, EOFError, ValueError, UnicodeDecodeError, struct.error)


@dataclass(slots=True, frozen=True)
class ReadOptions:
    """How strictly and how far a batch is decoded."""

    #: True: a mismatch is an error; "report": compute and record it only; False: skip.
    verify_crc: bool | str = True
    records: bool = True
    max_decompressed_bytes: int = DEFAULT_MAX_BYTES


def read_header(frame: Frame, *, file: str | None = None) -> Batch:
    """The batch model of a frame, header fields only (no CRC, no records)."""
    magic = frame.magic
    if magic == 2:
        return _v2_header(frame, file)
    if magic in (0, 1):
        return _legacy_header(frame, file)
    raise CorruptBatchError(messages.invalid_magic(magic))


def read_batch(frame: Frame, options: ReadOptions, *, file: str | None = None) -> Batch:
    """Header, CRC and (per ``options``) records of one frame; raises on any damage.

    Errors carry the file, the frame's position and its base offset.
    """
    try:
        batch = read_header(frame, file=file)
        check_crc(batch, frame, options.verify_crc)
        if options.records:
            try:
                batch.records = decode_records(batch, frame, options)
            except KafkaFormatError:
                if batch.crc_valid is False:  # "report": the first cause is the CRC
                    raise _crc_error(batch) from None
                raise
        return batch
    except KafkaFormatError as exc:
        exc.located(file=file, position=frame.position, base_offset=frame.base_offset)
        raise


def check_crc(batch: Batch, frame: Frame, verify: bool | str) -> None:
    """Compute the batch's CRC into ``batch.computed_crc``; raise when it does not hold."""
    if not verify:
        return
    if batch.magic == 2:
        batch.computed_crc = crc32c(frame.data[layout.V2_CRC_START :])
        algorithm = "crc32c"
    else:
        batch.computed_crc = crc32(frame.data[layout.LEGACY_CRC_START :])
        algorithm = "crc32"
    if batch.computed_crc != batch.crc and verify != "report":
        raise messages.crc_mismatch(batch.crc, batch.computed_crc, algorithm)


def _crc_error(batch: Batch) -> CrcMismatchError:
    algorithm = "crc32c" if batch.magic == 2 else "crc32"
    return messages.crc_mismatch(batch.crc, batch.computed_crc or 0, algorithm)


def decode_records(batch: Batch, frame: Frame, options: ReadOptions) -> list[Record]:
    """The records of a batch whose header has been read, with absolute offsets."""
    if batch.magic == 2:
        return _v2_records(batch, frame, options)
    return _legacy_records(batch, frame, options)


# --- v2 -------------------------------------------------------------------------------------


def _v2_header(frame: Frame, file: str | None) -> Batch:
    data = frame.data
    if len(data) < layout.V2_HEADER_SIZE:
        raise CorruptBatchError(
            f"batch length {len(data) - layout.LOG_OVERHEAD} is less than the v2 header "
            f"({layout.V2_MIN_BATCH_LENGTH})"
        )
    (
        base_offset,
        _length,
        leader_epoch,
        magic,
        crc,
        attributes,
        last_offset_delta,
        base_timestamp,
        max_timestamp,
        producer_id,
        producer_epoch,
        base_sequence,
        records_count,
    ) = V2_HEADER.unpack_from(data)
    return Batch(
        file=file,
        position=frame.position,
        base_offset=base_offset,
        last_offset=base_offset + last_offset_delta,
        size=len(data),
        magic=magic,
        attributes=attributes,
        codec=codec_of(attributes & layout.V2_ATTR_COMPRESSION_MASK),
        timestamp_type=1 if attributes & layout.V2_ATTR_TIMESTAMP_TYPE_MASK else 0,
        crc=crc,
        computed_crc=None,
        partition_leader_epoch=leader_epoch,
        last_offset_delta=last_offset_delta,
        base_timestamp=base_timestamp,
        max_timestamp=max_timestamp,
        producer_id=producer_id,
        producer_epoch=producer_epoch,
        base_sequence=base_sequence,
        records_count=records_count,
        is_transactional=bool(attributes & layout.V2_ATTR_IS_TRANSACTIONAL_MASK),
        is_control=bool(attributes & layout.V2_ATTR_IS_CONTROL_MASK),
        has_delete_horizon=bool(attributes & layout.V2_ATTR_HAS_DELETE_HORIZON_MASK),
    )


def _v2_records(batch: Batch, frame: Frame, options: ReadOptions) -> list[Record]:
    if batch.records_count < 0:
        raise CorruptBatchError(messages.negative_count(batch.records_count))
    if batch.records_count == 0:
        # As DefaultRecordBatch.iterator: a batch of no records is not decompressed (an
        # empty payload is no valid gzip/lz4/... stream, yet Kafka reads it as empty).
        resolve_codec(batch.codec, magic=2)
        return []
    payload = frame.data[layout.V2_HEADER_SIZE :]
    if batch.codec:
        payload = decompress(
            batch.codec, payload, magic=2, max_bytes=options.max_decompressed_bytes
        )
    # A larger count is a lie, caught before looping.
    if batch.records_count > max_record_count(len(payload)):
        raise count_cannot_fit(batch.records_count, len(payload))
    compressed = batch.codec != 0

    def damage(cause: str, at: int) -> CorruptBatchError:
        return records_damage(cause, at, frame.position, compressed)

    # One record at a time (RecordList's loop, unrolled) to know where each starts: damage
    # is named at the record that holds it.
    stream = KaitaiStream(BytesIO(payload))
    parsed: list[tuple[RecordType, int]] = []
    for _ in range(batch.records_count):
        at = stream.pos()
        if stream.is_eof():
            # The record count lies (a header field): named at the batch, as the kernel does.
            raise CorruptBatchError(messages.premature_eof(batch.records_count, len(parsed)))
        try:
            raw = RecordType(stream)
        except _PARSE_ERRORS as exc:
            raise damage(_record_cause(exc, stream, at), at) from None
        body = raw.body
        if not body._io.is_eof():
            # DefaultRecord.readFrom: the fields must use exactly the record's length, checked
            # before the next record is read.
            raise damage(messages.record_size(body._io.size(), body._io.pos()), at)
        parsed.append((raw, at))
    leftover = len(payload) - stream.pos()
    if leftover:
        raise damage(messages.leftover_bytes(leftover, batch.records_count), stream.pos())
    log_append = batch.timestamp_type == 1
    records = []
    # The records' values are judged once their bytes all parsed (structure first: the kernel's
    # order), the first record at fault named.
    previous = None
    for raw, at in parsed:
        body = raw.body
        offset_delta = body.offset_delta.value
        offset = batch.base_offset + offset_delta
        if not INT64_MIN <= offset <= INT64_MAX:
            raise damage(messages.offset_overflow(batch.base_offset, offset_delta), at)
        cause = offset_delta_damage(
            batch.base_offset, offset_delta, previous, batch.last_offset_delta
        )
        if cause is not None:
            raise damage(cause, at)
        previous = offset_delta
        sequence = (
            increment_sequence(batch.base_sequence, offset_delta)
            if batch.base_sequence >= 0
            else None
        )
        records.append(
            Record(
                offset=offset,
                timestamp=batch.max_timestamp
                if log_append
                else batch.base_timestamp + body.timestamp_delta.value,
                timestamp_type=batch.timestamp_type,
                key=getattr(body, "key", None),
                value=getattr(body, "value", None),
                headers=[Header(h.key, getattr(h, "value", None)) for h in body.headers],
                sequence=sequence,
                control=_control_marker(body) if batch.is_control else None,
                topic=batch.topic,
                partition=batch.partition,
            )
        )
    return records


def offset_delta_damage(
    base_offset: int, delta: int, previous: int | None, last_delta: int
) -> str | None:
    """The v2 record-offset rule, what is wrong with a record's offset delta (None: nothing),
    ``previous`` the delta of the record before it in the batch (None for the first).

    Kafka's readers take any delta (``DefaultRecord.readFrom`` adds it to the base offset), but
    no broker writes one of these, and a log holding one breaks every offset lookup:

    - the deltas increase strictly: ``MemoryRecordsBuilder.appendWithOffset`` refuses an offset
      not above the last ("Offsets must increase monotonically"), and every batch in a log was
      built by it, by a client (``LogValidator.validateBatch`` then holds a client's batch to
      lastOffsetDelta + 1 == count, so to 0, 1, 2, ...) or by the broker (the compressed path,
      ``validateMessagesAndAssignOffsetsCompressed``, rebuilds a batch whose inner offsets are
      not 0, 1, 2, ...; the cleaner, ``MemoryRecords.filterTo``, rebuilds the records it keeps
      in their order, gaps and all);
    - each lies in 0..lastOffsetDelta: the header's delta is the last appended record's
      (``MemoryRecordsBuilder.writeDefaultBatchHeader``), which the cleaner keeps when it
      removes the last records (``overrideLastOffset``).

    Not faults, because the cleaner makes them: gaps between deltas, a last delta below
    lastOffsetDelta, a first delta above 0, a batch of no records. The kernel applies the same
    rule (``kernels/records._decode_one``: E_OFFSET_OUTSIDE, E_OFFSET_ORDER), in this order."""
    if delta < 0 or delta > last_delta:
        return messages.offset_outside_batch(base_offset, delta, last_delta)
    if previous is not None and delta <= previous:
        return messages.offset_not_increasing(base_offset, delta, previous)
    return None


def _control_marker(body) -> ControlMarker:
    key = getattr(body, "key", None)
    if key is None or len(key) < layout.CONTROL_RECORD_KEY_SIZE:
        raise CorruptBatchError("control record without a 4-byte key (version, type)")
    parsed = ControlRecordKey(KaitaiStream(BytesIO(key)))
    ctype = int(parsed.type)
    value = getattr(body, "value", None)
    if ctype in (ControlType.ABORT, ControlType.COMMIT):
        if value is None or len(value) < layout.END_TXN_MARKER_SIZE:
            raise CorruptBatchError(
                "end transaction marker value shorter than 6 bytes (version, coordinator epoch)"
            )
        marker = EndTxnMarker(KaitaiStream(BytesIO(value)))
        return ControlMarker(ctype, parsed.version, marker.coordinator_epoch, value)
    return ControlMarker(ctype, parsed.version, None, value)


# --- v0 / v1 --------------------------------------------------------------------------------


def _legacy_header(frame: Frame, file: str | None) -> Batch:
    data = frame.data
    offset, size, crc, magic, attributes = LEGACY_PREFIX.unpack_from(data)
    if size < LEGACY_RECORD_OVERHEAD[magic]:
        raise CorruptBatchError(
            f"message size {size} is less than the magic {magic} minimum "
            f"({LEGACY_RECORD_OVERHEAD[magic]})"
        )
    timestamp = (
        _LEGACY_TIMESTAMP.unpack_from(data, layout.LEGACY_V1_TIMESTAMP)[0] if magic == 1 else None
    )
    ts_type = -1 if magic == 0 else 1 if attributes & layout.LEGACY_ATTR_TIMESTAMP_TYPE_MASK else 0
    return Batch(
        file=file,
        position=frame.position,
        base_offset=offset,
        last_offset=offset,
        size=len(data),
        magic=magic,
        attributes=attributes & 0xFF,
        codec=codec_of(attributes & layout.LEGACY_ATTR_COMPRESSION_MASK),
        timestamp_type=ts_type,
        crc=crc,
        computed_crc=None,
        base_timestamp=timestamp,
        max_timestamp=timestamp,
    )


def _parse_legacy(data) -> LegacyMessage:
    try:
        return LegacyMessage(KaitaiStream(BytesIO(data)))
    except _PARSE_ERRORS as exc:
        detail = messages.MESSAGE_FIELD_PAST_END if isinstance(exc, EOFError) else _describe(exc)
        raise CorruptBatchError(messages.malformed_message(detail)) from None


def _legacy_records(batch: Batch, frame: Frame, options: ReadOptions) -> list[Record]:
    msg = _parse_legacy(frame.data)
    value = getattr(msg, "value", None)
    if batch.codec == 0:
        record = Record(
            offset=batch.base_offset,
            timestamp=batch.base_timestamp,
            timestamp_type=batch.timestamp_type,
            key=getattr(msg, "key", None),
            value=value,
            topic=batch.topic,
            partition=batch.partition,
            crc=batch.crc,
            crc_valid=batch.crc_valid,
        )
        return [record]
    if value is None:
        raise CorruptBatchError(messages.WRAPPER_NULL_VALUE)
    inner_bytes = decompress(
        batch.codec, value, magic=batch.magic, max_bytes=options.max_decompressed_bytes
    )
    inner: list[tuple[LegacyMessage, int]] = []
    tails: list = []
    for inner_frame in _inner_frames(inner_bytes, tails):
        if inner_frame.magic not in (0, 1):
            raise CorruptBatchError(messages.inner_magic(inner_frame.magic))
        msg_in = _parse_legacy(inner_frame.data)
        if msg_in.attributes.compression != 0:
            raise CorruptBatchError(messages.inner_nested(msg_in.offset))
        computed = crc32(inner_frame.data[layout.LEGACY_CRC_START :])
        if options.verify_crc and computed != msg_in.crc:
            raise messages.crc_mismatch(
                msg_in.crc, computed, f"crc32 of inner message {msg_in.offset}"
            )
        inner.append((msg_in, computed))
    if tails:
        raise CorruptBatchError(messages.inner_trailing(tails[0].size))
    if not inner:
        raise CorruptBatchError(messages.inner_none())
    base = _wrapper_base(batch, inner[-1][0].offset)
    records = []
    for msg_in, computed in inner:
        offset = base + msg_in.offset
        if offset > INT64_MAX:  # never below: base >= 0
            raise wrapper_offset_overflow(batch.base_offset, inner[-1][0].offset, msg_in.offset)
        ts, ts_type = _inner_timestamp(batch, msg_in)
        records.append(
            Record(
                offset=offset,
                timestamp=ts,
                timestamp_type=ts_type,
                key=getattr(msg_in, "key", None),
                value=getattr(msg_in, "value", None),
                topic=batch.topic,
                partition=batch.partition,
                crc=msg_in.crc,
                crc_valid=computed == msg_in.crc,
            )
        )
    return records


def _inner_frames(inner_bytes: bytes, tails: list) -> Iterator[Frame]:
    """The frames of a wrapper's inner messages; a broken one is the wrapper's damage, at the
    wrapper, the byte in its decompressed messages named in the text (as the kernel names it)."""
    try:
        yield from iter_frames(inner_bytes, tails=tails, audit=False)
    except FramingError as exc:
        at = exc.position or 0
        raise CorruptBatchError(messages.in_decompressed_messages(exc.reason, at)) from None


def _wrapper_base(batch: Batch, last_inner: int) -> int:
    """What a compressed wrapper adds to its inner offsets, as Kafka's
    ``AbstractLegacyRecordBatch.DeepRecordsIterator`` (constructor) computes it: v0 inner
    offsets are absolute; v1 ones are relative, the wrapper carrying the last one's absolute
    offset, except that a wrapper offset of 0 (certain librdkafka versions) keeps them as
    they are, and one below the last inner offset is invalid."""
    wrapper = batch.base_offset
    if batch.magic == 0 or wrapper == 0:
        return 0
    if wrapper < last_inner:
        raise invalid_wrapper_offset(wrapper, last_inner)
    return wrapper - last_inner


def invalid_wrapper_offset(wrapper: int, last_inner: int) -> CorruptBatchError:
    """Kafka's words (``DeepRecordsIterator``) for a v1 wrapper offset below its last inner
    offset, and not zero."""
    return CorruptBatchError(
        "Found invalid wrapper offset in compressed v1 message set, wrapper offset "
        f"'{wrapper}' is less than the last inner message offset '{last_inner}' and it is not "
        "zero."
    )


def _inner_timestamp(batch: Batch, msg_in: LegacyMessage) -> tuple[int | None, int]:
    """An inner message's timestamp and type as Kafka reads them: ``DeepRecordsIterator``
    gives a magic 1 inner message the wrapper's timestamp and timestamp type
    (``LegacyRecord(buffer, wrapperRecordTimestamp, wrapperRecordTimestampType)``), and
    ``LegacyRecord.timestamp()`` / ``timestampType(magic, wrapperType, attributes)`` then
    give: magic 0 inner (KAFKA-4298's down-converted messages; sarama writes them too): no
    timestamp (NO_TIMESTAMP) and NO_TIMESTAMP_TYPE, whatever the wrapper; magic 1: the
    wrapper's timestamp under LogAppendTime, else its own, with the wrapper's type (a magic 0
    wrapper's is NO_TIMESTAMP_TYPE)."""
    if msg_in.magic == 0:
        return None, -1
    if batch.timestamp_type == 1:
        return batch.base_timestamp, 1
    return msg_in.timestamp, batch.timestamp_type


def records_damage(cause: str, at: int, frame_position: int, compressed: bool) -> CorruptBatchError:
    """The error for damage at byte ``at`` of a v2 batch's (decompressed) records, located as
    ``messages`` says: in the file for an uncompressed batch, else at the batch with the byte
    in the decompressed records named in the text. Both decoders raise through here."""
    if compressed:
        return CorruptBatchError(messages.in_decompressed(cause, at))
    return CorruptBatchError(cause, position=frame_position + layout.V2_HEADER_SIZE + at)


def wrapper_offset_overflow(wrapper: int, last_inner: int, inner: int) -> CorruptBatchError:
    """An inner message whose absolute offset no Kafka can hold (past 2^63-1)."""
    return CorruptBatchError(
        f"offset overflow: wrapper offset {wrapper} - last inner offset {last_inner} + inner "
        f"offset {inner} exceeds 2^63-1"
    )


def count_cannot_fit(count: int, size: int) -> CorruptBatchError:
    """The error for a v2 batch whose record count exceeds ``max_record_count(size)``."""
    return CorruptBatchError(messages.count_cannot_fit(count, size))


def _record_cause(exc: BaseException, stream: KaitaiStream, at: int) -> str:
    """The kernel's words (one wording a cause) for what the Kaitai parser met in the record
    at ``at``: its length or a field past an end, a negative length or count, a varint of
    more than 10 bytes, a header key that is no UTF-8."""
    if isinstance(exc, UnicodeDecodeError):
        return messages.NOT_UTF8
    if isinstance(exc, ValidationExprError):
        if isinstance(exc.actual, int):  # varint.ksy: a 10th byte with a continuation bit
            return messages.VARINT_TOO_LONG
        value = exc.actual.value  # record.ksy's checks of parsed varints (>= 0)
        if exc.src_path == "/types/body/seq/7":
            return messages.negative_headers(value)
        if exc.src_path == "/types/header/seq/0":
            return messages.negative_header_key(value)
        return messages.negative_record_length(value)
    if isinstance(exc, EOFError):
        # The record's length past the records' end, or a field past the record's end?
        stream.seek(at)
        try:
            length = Varint(stream).value
        except _PARSE_ERRORS:
            return messages.FIELD_PAST_END
        remaining = stream.size() - stream.pos()
        if length > remaining:
            return messages.record_past_end(length, remaining)
        return messages.FIELD_PAST_END
    return _describe(exc)


def _describe(exc: BaseException) -> str:
    text = str(exc) or type(exc).__name__
    return text.splitlines()[0][:200]
