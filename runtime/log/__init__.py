"""Layer 4, log semantics (Kafka's ``storage/.../internals/log``): partitions and their
look-ups, producer state, the log cleaner."""
