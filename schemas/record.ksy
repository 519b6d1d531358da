meta:
  id: record
  title: Kafka record (message format v2, inside a record batch)
  application: Apache Kafka
  license: Apache-2.0
  endian: be
  imports:
    - varint
doc: |
  One record of a v2 record batch (magic 2, Kafka 0.11+): a varint length, then that many
  bytes holding the record's fields. Lengths and deltas are zigzag varints (see varint.ksy).
  The record's offset is the batch's base_offset + offset_delta; its timestamp is the
  batch's base_timestamp + timestamp_delta (under LogAppendTime the batch's max_timestamp
  applies instead). A negative key or value length means null (Kafka writes -1).

  The body is parsed in a substream of exactly `len_body` bytes, as Kafka bounds it; a
  reader that wants Kafka's strictness checks that the body substream is fully consumed.
doc-ref:
  - https://kafka.apache.org/documentation/#record
  - https://github.com/apache/kafka/blob/trunk/clients/src/main/java/org/apache/kafka/common/record/DefaultRecord.java DefaultRecord
-webide-representation: '{body}'
seq:
  - id: len_body
    type: varint
    valid:
      expr: _.value >= 0
    doc: Size in bytes of the rest of the record (Kafka's "length"), zigzag varint.
  - id: body
    type: body
    size: len_body.value
    doc: The record's fields, bounded by len_body.
types:
  body:
    doc: The fields of a record after its length.
    -webide-representation: 'offset_delta {offset_delta}, timestamp_delta {timestamp_delta}, len_key {len_key}, len_value {len_value}, {num_headers} headers'
    seq:
      - id: attributes
        type: s1
        doc: Record attributes; unused by Kafka so far (always 0).
      - id: timestamp_delta
        type: varint
        doc: Timestamp of the record minus the batch's base_timestamp, in milliseconds (varlong).
      - id: offset_delta
        type: varint
        doc: Offset of the record minus the batch's base_offset (varint).
      - id: len_key
        type: varint
        doc: Length of the key in bytes; negative (-1) for a null key.
      - id: key
        size: len_key.value
        if: len_key.value >= 0
        doc: The key bytes; absent (null) when len_key is negative.
      - id: len_value
        type: varint
        doc: Length of the value in bytes; negative (-1) for a null value.
      - id: value
        size: len_value.value
        if: len_value.value >= 0
        doc: The value bytes; absent (null) when len_value is negative.
      - id: num_headers
        type: varint
        valid:
          expr: _.value >= 0
        doc: Number of headers that follow (Kafka rejects a negative count).
      - id: headers
        type: header
        repeat: expr
        repeat-expr: num_headers.value
        doc: The record headers, in order.
  header:
    doc: One record header; keys may repeat.
    -webide-representation: '{key}, len_value {len_value}'
    seq:
      - id: len_key
        type: varint
        valid:
          expr: _.value >= 0
        doc: Length of the header key in bytes (Kafka rejects a negative length).
      - id: key
        type: str
        size: len_key.value
        encoding: UTF-8
        doc: The header key, a UTF-8 string.
      - id: len_value
        type: varint
        doc: Length of the header value in bytes; negative (-1) for a null value.
      - id: value
        size: len_value.value
        if: len_value.value >= 0
        doc: The header value bytes; absent (null) when len_value is negative.
