meta:
  id: control_record_key
  title: Kafka control record key
  application: Apache Kafka
  license: Apache-2.0
  endian: be
doc: |
  The key of a record in a control batch (record_batch attributes.is_control): a schema
  version and the control type. The value's layout depends on the type: an
  EndTransactionMarker (end_txn_marker.ksy) for abort and commit; KRaft's own messages
  (LeaderChangeMessage, SnapshotHeaderRecord, ...) for the others, which are not described
  here. Kafka reads a newer key version as version 0, so later versions may carry more
  bytes after these two fields.
doc-ref:
  - https://kafka.apache.org/documentation/#controlbatch
  - https://github.com/apache/kafka/blob/trunk/clients/src/main/java/org/apache/kafka/common/record/ControlRecordType.java ControlRecordType
-webide-representation: '{type} (version {version:dec})'
seq:
  - id: version
    type: s2
    doc: Version of the key schema; 0 so far (Kafka rejects a negative one).
  - id: type
    type: s2
    enum: control_record_type
    doc: What the control record marks.
enums:
  control_record_type:
    0:
      id: abort
      doc: End of an aborted transaction (value is an EndTransactionMarker).
    1:
      id: commit
      doc: End of a committed transaction (value is an EndTransactionMarker).
    2:
      id: leader_change
      doc: KRaft leader change (value is a LeaderChangeMessage).
    3:
      id: snapshot_header
      doc: KRaft snapshot header (value is a SnapshotHeaderRecord).
    4:
      id: snapshot_footer
      doc: KRaft snapshot footer (value is a SnapshotFooterRecord).
    5:
      id: kraft_version
      doc: KRaft feature version record (value is a KRaftVersionRecord).
    6:
      id: kraft_voters
      doc: KRaft voter set record (value is a VotersRecord).
