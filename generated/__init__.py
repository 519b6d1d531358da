"""kafka_format.generated"""
