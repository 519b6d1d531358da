meta:
  id: legacy_message
  title: Kafka legacy message (message format v0 and v1, magic 0 and 1)
  application: Apache Kafka
  license: Apache-2.0
  endian: be
  imports:
    - kafka_enums
doc: |
  One log entry of the legacy message formats: v0 (Kafka 0.8-0.9) and v1 (0.10, which adds
  the timestamp), from its offset. message_size counts the bytes after itself, so the entry
  occupies 12 + message_size bytes.

  The CRC (CRC-32, IEEE) covers the bytes from magic to the end; this spec does not check it.
  A compressed message is a wrapper: its value holds, compressed, an inner message set
  (legacy entries back to back, which record_set.ksy parses once decompressed). In v1, the
  inner offsets are relative (0, 1, ...) and the wrapper's offset is that of the last inner
  message; in v0 they are absolute.
doc-ref:
  - https://kafka.apache.org/documentation/#messageset
  - https://github.com/apache/kafka/blob/trunk/clients/src/main/java/org/apache/kafka/common/record/LegacyRecord.java LegacyRecord
-webide-representation: '{record_version} offset {offset:dec}, {attributes.compression}, {timestamp_type}, len_key {len_key:dec}, len_value {len_value:dec}'
seq:
  - id: offset
    type: s8
    doc: Offset of the message (for a compressed wrapper, that of its last inner message).
  - id: message_size
    type: s4
    doc: Number of bytes after this field, from crc to the end of the value.
  - id: crc
    type: u4
    doc: CRC-32 of the bytes from magic to the end of the message.
  - id: magic
    type: s1
    valid:
      any-of: [0, 1]
    doc: Message format version, 0 or 1.
  - id: attributes
    type: attributes
    doc: Message attributes (int8), decoded into its bit fields.
  - id: timestamp
    type: s8
    if: magic == 1
    doc: Timestamp in epoch milliseconds (v1 only; -1 when none).
  - id: len_key
    type: s4
    doc: Length of the key in bytes; -1 for a null key.
  - id: key
    size: len_key
    if: len_key >= 0
    doc: The key bytes; absent (null) when len_key is negative.
  - id: len_value
    type: s4
    doc: Length of the value in bytes; -1 for a null value.
  - id: value
    size: len_value
    if: len_value >= 0
    doc: |
      The value bytes; absent (null) when len_value is negative. For a compressed wrapper,
      the compressed inner message set.
instances:
  timestamp_type:
    value: >-
      magic == 0 ? kafka_enums::timestamp_type::no_timestamp_type
      : attributes.timestamp_type ? kafka_enums::timestamp_type::log_append_time
      : kafka_enums::timestamp_type::create_time
    doc: |
      The message's timestamp type as Kafka reads it (LegacyRecord.timestampType):
      no_timestamp_type (-1) for magic 0, else create_time or log_append_time by bit 3
      of the attributes. (A compressed v1 wrapper with log_append_time imposes its own
      timestamp on its inner messages.) The enum is written out as a conditional because
      compiler 0.11 does not find an imported enum from a value instance's `enum` key.
  record_version:
    value: 'magic == 0 ? kafka_enums::record_version::v0 : kafka_enums::record_version::v1'
    doc: The message format version (magic) by name; magic is 0 or 1 here.
types:
  attributes:
    doc: The int8 attributes of a legacy message, most significant bit first.
    -webide-representation: '{compression}'
    seq:
      - id: reserved
        type: b4
        doc: Bits 7-4, unused (0).
      - id: timestamp_type
        type: b1
        doc: |
          Bit 3 as stored: set for LogAppendTime, clear for CreateTime, in v1 only. A v0
          message has no timestamp type, whatever this bit holds: read the message's
          timestamp_type, which says so (no_timestamp_type).
      - id: compression
        type: b3
        enum: kafka_enums::compression_codec
        doc: Bits 2-0; the codec of the value (an inner message set when not none).
