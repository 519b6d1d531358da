meta:
  id: record_set
  title: Kafka record set / log segment (.log)
  application: Apache Kafka
  file-extension: log
  license: Apache-2.0
  endian: be
  imports:
    - record_batch
    - legacy_message
doc: |
  A Kafka record set: what a `.log` segment file holds, and what a fetch response carries
  for a partition. Entries lie back to back, each framed by an int64 offset and an int32
  length counting the bytes that follow, and each is read according to its magic byte,
  which every format keeps at byte 16 of the entry: 0 and 1 are legacy messages, 2 a v2
  record batch. The formats may be mixed in one set.

  Like Kafka's reader, a partial entry at the end (fewer than 12 bytes left, or a length
  running past the end, as a fetch response's size limit or a crash mid-append leaves it)
  is not an error: those bytes are left in `trailing`. Each entry is parsed in a substream
  of exactly its own size, and the peeks at its length and magic use positions relative to
  the entry's start, so the result is the same in every target language and in the Web IDE.
  The same type parses the inner message set of a decompressed legacy wrapper.
doc-ref:
  - https://kafka.apache.org/documentation/#messageformat
  - https://github.com/apache/kafka/blob/trunk/clients/src/main/java/org/apache/kafka/common/record/ByteBufferLogInputStream.java ByteBufferLogInputStream
seq:
  - id: frames
    type: frame(_io.pos)
    repeat: until
    repeat-until: not _.is_next_complete
    if: is_first_complete
    doc: The complete entries, in file order.
  - id: trailing
    size-eos: true
    doc: Bytes after the last complete entry (a partial entry); empty for a whole set.
instances:
  first_length:
    pos: 8
    type: s4
    if: _io.size >= 12
    doc: Length field of the first entry, when at least 12 bytes are present.
  is_first_complete:
    value: _io.size >= 12 and first_length <= _io.size - 12
    doc: True when the set starts with a complete entry.
types:
  frame:
    doc: One entry (v2 batch or legacy message), dispatched on its magic byte.
    -webide-representation: 'at byte {ofs_frame:dec}: {body}'
    params:
      - id: ofs_frame
        type: u8
        doc: Position of the entry in the stream (where its offset field starts).
    seq:
      - id: body
        size: 12 + length
        type:
          switch-on: magic
          cases:
            0: legacy_message
            1: legacy_message
            2: record_batch
        valid:
          expr: length >= 14
        doc: |
          The whole entry from its offset field: a legacy_message for magic 0 and 1, a
          record_batch for magic 2, raw bytes for an unknown magic. An entry whose length is
          below 14 (the smallest legacy message) is corrupt, as Kafka says; it fails here
          rather than being taken for a partial tail.
    instances:
      base_offset:
        pos: ofs_frame
        type: s8
        doc: The entry's offset field (v2 base offset; legacy message offset).
      length:
        pos: ofs_frame + 8
        type: s4
        doc: The entry's length field; the entry is 12 + length bytes long.
      magic:
        pos: ofs_frame + 16
        type: s1
        doc: The entry's magic byte (format version), at byte 16 of every entry.
      ofs_next:
        value: ofs_frame + 12 + length
        doc: Position right after this entry.
      next_length:
        pos: ofs_next + 8
        type: s4
        if: _io.size - ofs_next >= 12
        doc: Length field of the following entry, when at least 12 bytes follow.
      is_next_complete:
        value: _io.size - ofs_next >= 12 and next_length <= _io.size - ofs_next - 12
        doc: True when a complete entry follows this one.
