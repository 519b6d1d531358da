"""kafka_format.schemas"""
