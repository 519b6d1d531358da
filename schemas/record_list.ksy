meta:
  id: record_list
  title: Records of a Kafka v2 record batch
  application: Apache Kafka
  license: Apache-2.0
  endian: be
  imports:
    - record
doc: |
  The records of one v2 record batch, back to back. For an uncompressed batch they are the
  batch's payload (record_batch.ksy types them in place); for a compressed batch they are
  what the payload decompresses to, so the runtime instantiates this type over the
  decompressed bytes, passing the batch's records_count as num_records, e.g. in Python
  `RecordList(records_count, KaitaiStream(BytesIO(data)))`.
doc-ref:
  - https://kafka.apache.org/documentation/#recordbatch
  - https://github.com/apache/kafka/blob/trunk/clients/src/main/java/org/apache/kafka/common/record/DefaultRecordBatch.java DefaultRecordBatch
params:
  - id: num_records
    type: s4
    doc: Number of records, the batch header's records_count.
-webide-representation: '{num_records:dec} records'
seq:
  - id: records
    type: record
    repeat: expr
    repeat-expr: num_records
    doc: The records, in offset order.
