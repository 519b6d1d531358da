"""What is inside a record's key and value: payloads framed the way Confluent's serializers frame
them (a zero byte, a big-endian schema id, then Avro, Protobuf or JSON), decoded offline through
the cluster's own Schema Registry store, the compacted ``_schemas`` topic.

A layer above ``read`` (the registry's store is itself a Kafka log, read like any other) and
beside ``messages``: it decodes what applications wrote, not what Kafka writes for itself.
"""
