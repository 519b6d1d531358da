meta:
  id: varint
  title: Kafka zigzag varint / varlong
  application: Apache Kafka
  license: Apache-2.0
  endian: be
doc: |
  A signed integer as Kafka writes it inside v2 records: zigzag-encoded, then written as
  base-128 groups, least significant group first, the high bit of each byte set when another
  byte follows (the protobuf encoding). Kafka uses the same wire form for int32 "varint"
  fields (at most 5 bytes) and int64 "varlong" fields (at most 10 bytes); this one type
  reads both and accepts up to 10 bytes. A 10th byte with its continuation bit set is an
  error (Kafka's "varlong is too long"); of the 10th byte only bit 0 counts, as in Java,
  where the other bits are shifted out of the 64-bit value.

  The decoding multiplies each group by its place value instead of shifting, so that it is
  exact in Python for the whole int64 range and meaningful in JavaScript, where `<<`, `>>`
  and `^` work on 32 bits. JavaScript numbers are doubles, though: in the Web IDE and any
  JavaScript build, `raw` and `value` are exact only up to 2^53 in magnitude (timestamps,
  deltas and lengths fit; arbitrary 64-bit values may not). The sign is taken from the
  lowest bit of the first byte, so it is right even where the magnitude is rounded.
doc-ref:
  - https://kafka.apache.org/documentation/#record
  - https://github.com/apache/kafka/blob/trunk/clients/src/main/java/org/apache/kafka/common/utils/ByteUtils.java ByteUtils.readVarint / readVarlong
-webide-representation: '{value:dec}'
seq:
  - id: groups
    type: u1
    repeat: until
    repeat-until: (_ & 0x80) == 0
    valid:
      expr: (_ & 0x80) == 0 or _index < 9
    doc: |
      The encoded bytes, least significant 7-bit group first; bit 7 set means another byte
      follows. The 10th byte must end the number.
instances:
  raw_half:
    value: >-
      ((groups[0] & 0x7f) >> 1)
      + (groups.size > 1 ? (groups[1] & 0x7f) * 0x40
      + (groups.size > 2 ? (groups[2] & 0x7f) * 0x2000
      + (groups.size > 3 ? (groups[3] & 0x7f) * 0x100000
      + (groups.size > 4 ? (groups[4] & 0x7f) * 0x8000000
      + (groups.size > 5 ? (groups[5] & 0x7f) * 0x400000000
      + (groups.size > 6 ? (groups[6] & 0x7f) * 0x20000000000
      + (groups.size > 7 ? (groups[7] & 0x7f) * 0x1000000000000
      + (groups.size > 8 ? (groups[8] & 0x7f) * 0x80000000000000
      + (groups.size > 9 ? (groups[9] & 1) * 0x4000000000000000
      : 0) : 0) : 0) : 0) : 0) : 0) : 0) : 0) : 0)
    doc: |
      `raw` without its lowest bit (raw >>> 1): the magnitude part of the zigzag code,
      summed group by group so that JavaScript keeps it exact up to 2^53.
  is_negative:
    value: (groups[0] & 1) == 1
    doc: The zigzag sign bit (lowest bit of raw); exact in every language.
  raw:
    value: raw_half * 2 + (groups[0] & 1)
    doc: |
      The unsigned 64-bit number the groups encode, before zigzag decoding
      (0 <= raw < 2^64). Exact in Python; a double in JavaScript (exact up to 2^53).
  value:
    value: '(groups[0] & 1) == 1 ? -raw_half - 1 : raw_half'
    doc: |
      The signed value: zigzag-decoded `raw`, i.e. `(raw >>> 1) ^ -(raw & 1)`
      (0 -> 0, 1 -> -1, 2 -> 1, 3 -> -2, ...). Exact in Python over the whole int64 range;
      in JavaScript exact while |value| <= 2^53, and of the right sign always.
