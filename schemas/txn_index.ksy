meta:
  id: txn_index
  title: Kafka transaction index (.txnindex)
  application: Apache Kafka
  file-extension: txnindex
  license: Apache-2.0
  endian: be
doc: |
  The transaction index of a log segment (NNNNNNNNNNNNNNNNNNNN.txnindex): the aborted
  transactions whose abort marker lies in the segment, as 34-byte AbortedTxn entries, so
  that read_committed consumers can skip their records. No checksum.
doc-ref:
  - https://kafka.apache.org/documentation/#log
  - https://github.com/apache/kafka/blob/trunk/storage/src/main/java/org/apache/kafka/storage/internals/log/AbortedTxn.java AbortedTxn
seq:
  - id: entries
    type: aborted_txn
    repeat: eos
    doc: The aborted transactions, in the order their markers were written.
types:
  aborted_txn:
    doc: One aborted transaction (34 bytes).
    -webide-representation: 'producer {producer_id:dec}, offsets {first_offset:dec}-{last_offset:dec}, last_stable_offset {last_stable_offset:dec}'
    seq:
      - id: version
        type: s2
        doc: Entry format version; 0 so far.
      - id: producer_id
        type: s8
        doc: Producer id of the transaction. May exceed 2^53 in JavaScript.
      - id: first_offset
        type: s8
        doc: Offset of the transaction's first record.
      - id: last_offset
        type: s8
        doc: Offset of the transaction's abort marker.
      - id: last_stable_offset
        type: s8
        doc: Last stable offset of the partition when the transaction was aborted.
