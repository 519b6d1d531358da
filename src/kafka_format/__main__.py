from kafka_format.runtime.cli import entry_point

entry_point()
