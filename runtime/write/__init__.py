"""Layer 4, writing: the broker-like writer, the default partitioner, batching, generate."""
