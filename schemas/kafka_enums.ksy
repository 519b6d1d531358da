meta:
  id: kafka_enums
  title: Codes shared by Kafka's record formats
  application: Apache Kafka
  license: Apache-2.0
  endian: be
doc: |
  Enumerations used by more than one Kafka record format (legacy messages v0/v1 and v2
  record batches). This spec reads nothing; the other specs import it for its enums.
doc-ref:
  - https://kafka.apache.org/documentation/#messageformat
  - https://github.com/apache/kafka/blob/trunk/clients/src/main/java/org/apache/kafka/common/record/CompressionType.java CompressionType
  - https://github.com/apache/kafka/blob/trunk/clients/src/main/java/org/apache/kafka/common/record/TimestampType.java TimestampType
  - https://github.com/apache/kafka/blob/trunk/clients/src/main/java/org/apache/kafka/common/record/RecordVersion.java RecordVersion
enums:
  compression_codec:
    0:
      id: none
      doc: No compression.
    1:
      id: gzip
      doc: gzip (RFC 1952) stream.
    2:
      id: snappy
      doc: Snappy; Java clients write xerial framing, librdkafka raw snappy.
    3:
      id: lz4
      doc: LZ4 frame format (magic 0 used a non-standard header checksum).
    4:
      id: zstd
      doc: Zstandard frames (Kafka 2.1+, v2 batches only).
  timestamp_type:
    -1:
      id: no_timestamp_type
      doc: |
        No timestamp (NoTimestampType): a v0 message (magic 0) has neither a timestamp nor a
        timestamp-type bit, as Kafka's LegacyRecord.timestampType says.
    0:
      id: create_time
      doc: The producer's timestamp (CreateTime).
    1:
      id: log_append_time
      doc: The broker's append time (LogAppendTime).
  record_version:
    0:
      id: v0
      doc: Message format v0 (Kafka 0.8-0.9), a legacy message with no timestamp.
    1:
      id: v1
      doc: Message format v1 (Kafka 0.10), a legacy message with a timestamp.
    2:
      id: v2
      doc: Message format v2 (Kafka 0.11+), a record batch with varint records and headers.
