meta:
  id: producer_snapshot
  title: Kafka producer-state snapshot (.snapshot)
  application: Apache Kafka
  file-extension: snapshot
  license: Apache-2.0
  endian: be
doc: |
  A producer-state snapshot of a partition (NNNNNNNNNNNNNNNNNNNN.snapshot, named after the
  offset it was taken at): the state of every idempotent or transactional producer, so that
  a broker need not replay the log to rebuild it. The CRC is a CRC-32C over every byte after
  the crc field (from num_entries to the end of the file); this spec does not check it.
doc-ref:
  - https://kafka.apache.org/documentation/#log
  - https://github.com/apache/kafka/blob/trunk/storage/src/main/java/org/apache/kafka/storage/internals/log/ProducerStateManager.java ProducerStateManager (PID_SNAPSHOT_MAP_SCHEMA)
seq:
  - id: version
    type: s2
    doc: Snapshot format version; Kafka writes and accepts only 1.
  - id: crc
    type: u4
    doc: CRC-32C of the bytes after this field, from num_entries to the end of the file.
  - id: num_entries
    type: s4
    valid:
      expr: _ >= 0
    doc: Number of producer entries that follow.
  - id: entries
    type: entry
    repeat: expr
    repeat-expr: num_entries
    doc: One entry per producer id.
types:
  entry:
    doc: The state of one producer (46 bytes).
    -webide-representation: 'producer {producer_id:dec} epoch {epoch:dec}, last_sequence {last_sequence:dec}, last_offset {last_offset:dec}'
    seq:
      - id: producer_id
        type: s8
        doc: The producer id. May exceed 2^53 in JavaScript.
      - id: epoch
        type: s2
        doc: Current epoch of the producer.
      - id: last_sequence
        type: s4
        doc: Last sequence number the producer wrote.
      - id: last_offset
        type: s8
        doc: Offset of the last record the producer wrote (-1 when none is retained).
      - id: offset_delta
        type: s4
        doc: Last offset minus first offset of the producer's last batch.
      - id: timestamp
        type: s8
        doc: Max timestamp of the producer's last batch, in epoch milliseconds.
      - id: coordinator_epoch
        type: s4
        doc: Epoch of the last transaction coordinator to write a marker for this producer.
      - id: current_txn_first_offset
        type: s8
        doc: First offset of the producer's ongoing transaction; -1 when there is none.
