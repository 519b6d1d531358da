"""Layer 4, Kafka's message serialisation and the internal topics' records."""
