meta:
  id: time_index
  title: Kafka time index (.timeindex)
  application: Apache Kafka
  file-extension: timeindex
  license: Apache-2.0
  endian: be
doc: |
  The time index of a log segment (NNNNNNNNNNNNNNNNNNNN.timeindex): a sparse map from
  timestamps to offsets, as 12-byte entries with non-decreasing timestamps. Offsets are
  stored relative to the segment's base offset (from the file name). The active segment's
  index is preallocated, so it may end in zero-filled entries until it is trimmed. No
  checksum.
doc-ref:
  - https://kafka.apache.org/documentation/#log
  - https://github.com/apache/kafka/blob/trunk/storage/src/main/java/org/apache/kafka/storage/internals/log/TimeIndex.java TimeIndex
seq:
  - id: entries
    type: entry
    repeat: eos
    doc: The index entries, by increasing timestamp.
types:
  entry:
    doc: One index entry (12 bytes).
    -webide-representation: 'timestamp {timestamp:dec} at relative_offset {relative_offset:dec}'
    seq:
      - id: timestamp
        type: s8
        doc: Largest timestamp seen so far in the segment, in epoch milliseconds.
      - id: relative_offset
        type: s4
        doc: Offset of the message with that timestamp minus the segment's base offset.
