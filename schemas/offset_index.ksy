meta:
  id: offset_index
  title: Kafka offset index (.index)
  application: Apache Kafka
  file-extension: index
  license: Apache-2.0
  endian: be
doc: |
  The offset index of a log segment (NNNNNNNNNNNNNNNNNNNN.index, named after the segment's
  base offset): a sparse, sorted map from offsets to byte positions in the .log file, as
  8-byte entries. Offsets are stored relative to the segment's base offset (from the file
  name). The active segment's index is preallocated, so it may end in zero-filled entries
  until the segment rolls and the file is trimmed. No checksum.
doc-ref:
  - https://kafka.apache.org/documentation/#log
  - https://github.com/apache/kafka/blob/trunk/storage/src/main/java/org/apache/kafka/storage/internals/log/OffsetIndex.java OffsetIndex
seq:
  - id: entries
    type: entry
    repeat: eos
    doc: The index entries, by increasing offset.
types:
  entry:
    doc: One index entry (8 bytes).
    -webide-representation: 'relative_offset {relative_offset:dec} at position {position:dec}'
    seq:
      - id: relative_offset
        type: s4
        doc: Offset of a message minus the segment's base offset.
      - id: position
        type: s4
        doc: Byte position in the .log file of the batch holding that offset.
