meta:
  id: end_txn_marker
  title: Kafka end transaction marker (control record value)
  application: Apache Kafka
  license: Apache-2.0
  endian: be
doc: |
  The value of an abort or commit control record (control_record_key.ksy), written by the
  transaction coordinator at the end of a transaction.
doc-ref:
  - https://kafka.apache.org/documentation/#controlbatch
  - https://github.com/apache/kafka/blob/trunk/clients/src/main/java/org/apache/kafka/common/record/EndTransactionMarker.java EndTransactionMarker
-webide-representation: 'coordinator_epoch {coordinator_epoch:dec} (version {version:dec})'
seq:
  - id: version
    type: s2
    doc: Version of the marker schema; 0 so far.
  - id: coordinator_epoch
    type: s4
    doc: Epoch of the transaction coordinator that wrote the marker.
