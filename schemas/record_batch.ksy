meta:
  id: record_batch
  title: Kafka record batch (message format v2, magic 2)
  application: Apache Kafka
  license: Apache-2.0
  endian: be
  imports:
    - kafka_enums
    - record_list
    - control_record_key
    - end_txn_marker
doc: |
  A whole v2 record batch as it lies in a log segment or a fetch response, from its
  base_offset (Kafka 0.11+). batch_length counts the bytes after itself, from
  partition_leader_epoch to the end, so the batch occupies 12 + batch_length bytes and the
  records take batch_length - 49 of them.

  The CRC (CRC-32C, Castagnoli) covers the bytes from attributes to the end of the batch;
  this spec does not check it (the runtime does). Uncompressed records are typed in place
  (`records`); compressed ones are raw bytes (`compressed_records`) for the runtime to
  decompress and parse with record_list.ksy. A control batch (is_control) holds control
  records whose key and value control_record_key.ksy and end_txn_marker.ksy describe.
doc-ref:
  - https://kafka.apache.org/documentation/#recordbatch
  - https://github.com/apache/kafka/blob/trunk/clients/src/main/java/org/apache/kafka/common/record/DefaultRecordBatch.java DefaultRecordBatch
-webide-representation: '{record_version} offsets {base_offset:dec}-{last_offset:dec}, {records_count:dec} records, {attributes.compression}, {timestamp_type}, {batch_kind}'
seq:
  - id: base_offset
    type: s8
    doc: Offset of the first record of the batch (records carry deltas to it).
  - id: batch_length
    type: s4
    doc: Number of bytes after this field, from partition_leader_epoch to the end of the batch.
  - id: partition_leader_epoch
    type: s4
    doc: Epoch of the partition leader that appended the batch (-1 when not set).
  - id: magic
    type: s1
    valid: 2
    doc: Message format version; 2 for record batches.
  - id: crc
    type: u4
    doc: CRC-32C of the bytes from attributes to the end of the batch.
  - id: attributes
    type: attributes
    doc: Batch attributes (int16), decoded into its bit fields.
  - id: last_offset_delta
    type: s4
    doc: Offset of the last record minus base_offset (kept even when compaction removes records).
  - id: base_timestamp
    type: s8
    doc: |
      Timestamp of the first record, in epoch milliseconds (-1 when none); when
      has_delete_horizon is set, the delete horizon of a compacted batch instead.
  - id: max_timestamp
    type: s8
    doc: |
      Largest record timestamp in the batch, in epoch milliseconds; under LogAppendTime the
      broker's append time, which then applies to every record.
  - id: producer_id
    type: s8
    doc: Idempotent/transactional producer id (-1 when none). May exceed 2^53 in JavaScript.
  - id: producer_epoch
    type: s2
    doc: Epoch of the producer id (-1 when none).
  - id: base_sequence
    type: s4
    doc: Sequence number of the first record, for idempotence (-1 when none).
  - id: records_count
    type: s4
    doc: Number of records in the batch (after decompression for a compressed batch).
  - id: records
    type: record_list(records_count)
    size: batch_length - 49
    if: attributes.compression == kafka_enums::compression_codec::none
    doc: The records, typed in place, when the batch is not compressed.
  - id: compressed_records
    size: batch_length - 49
    if: attributes.compression != kafka_enums::compression_codec::none
    doc: |
      The compressed records, raw, when the batch is compressed; they decompress to
      records_count records (record_list.ksy).
instances:
  last_offset:
    value: base_offset + last_offset_delta
    doc: Offset of the last record of the batch (Kafka's lastOffset).
  timestamp_type:
    value: attributes.timestamp_type
    doc: |
      The batch's timestamp type (bit 3 of the attributes): create_time or log_append_time;
      a v2 batch always has one. Named as in legacy_message, so that every entry of a
      record set answers `body.timestamp_type`.
  record_version:
    value: kafka_enums::record_version::v2
    doc: The format version (magic) by name; always v2 here.
  batch_kind:
    value: '(attributes.is_control ? 2 : 0) + (attributes.is_transactional ? 1 : 0)'
    enum: batch_kind
    doc: |
      What the batch holds, from the is_control and is_transactional bits: plain data, a
      transaction's data, or control records (a transaction marker is a transactional
      control batch; KRaft's control records are not transactional).
  control_key:
    io: records.records[0].body._io
    pos: >-
      1 + records.records[0].body.timestamp_delta.groups.size
      + records.records[0].body.offset_delta.groups.size
      + records.records[0].body.len_key.groups.size
    type: control_record_key
    if: >-
      attributes.is_control
      and attributes.compression == kafka_enums::compression_codec::none
      and records_count > 0
      and records.records[0].body.len_key.value >= 4
    doc: |
      The key of the first record of an uncompressed control batch, typed: its control type
      (commit, abort, or a KRaft type) by name. Kafka writes one control record per batch.
  control_value:
    io: records.records[0].body._io
    pos: >-
      1 + records.records[0].body.timestamp_delta.groups.size
      + records.records[0].body.offset_delta.groups.size
      + records.records[0].body.len_key.groups.size
      + records.records[0].body.len_key.value
      + records.records[0].body.len_value.groups.size
    type: end_txn_marker
    if: >-
      attributes.is_control
      and attributes.compression == kafka_enums::compression_codec::none
      and records_count > 0
      and records.records[0].body.len_key.value >= 4
      and records.records[0].body.len_value.value >= 6
      and (control_key.type == control_record_key::control_record_type::abort
      or control_key.type == control_record_key::control_record_type::commit)
    doc: |
      The value of that first control record, typed, when it is a transaction marker (abort
      or commit): the coordinator epoch.
types:
  attributes:
    doc: The int16 attributes of a v2 batch, most significant bit first.
    -webide-representation: '{compression}'
    seq:
      - id: reserved
        type: b9
        doc: Bits 15-7, unused (0).
      - id: has_delete_horizon
        type: b1
        doc: Bit 6; set when base_timestamp holds the delete horizon (compacted batches, Kafka 3.1+).
      - id: is_control
        type: b1
        doc: Bit 5; set for control batches (transaction markers, KRaft control records).
      - id: is_transactional
        type: b1
        doc: Bit 4; set when the batch belongs to a transaction.
      - id: timestamp_type
        type: b1
        enum: kafka_enums::timestamp_type
        doc: Bit 3; CreateTime (0) or LogAppendTime (1).
      - id: compression
        type: b3
        enum: kafka_enums::compression_codec
        doc: Bits 2-0; the codec of the records.
enums:
  batch_kind:
    0:
      id: data
      doc: Records of no transaction (is_control and is_transactional clear).
    1:
      id: transactional
      doc: Records of a transaction (is_transactional set).
    2:
      id: control
      doc: Control records outside a transaction (is_control set), e.g. KRaft's.
    3:
      id: transactional_control
      doc: A transaction marker (is_control and is_transactional set), commit or abort.
