"""kafka_format.runtime"""
