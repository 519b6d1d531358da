"""kafka_format.spark_udfs"""
