"""kafka-format: Apache Kafka's record formats as schemas, parsers and a checking runtime."""

__version__ = "0.1.0"
