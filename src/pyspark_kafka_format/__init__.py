"""Spark's own look-up finds ``kafka_log`` here: no ``register(spark)`` needed to read.

PySpark (4.0+) registers, at a session's first use of a Python data source, the
``DefaultSource`` of every installed top-level module whose name starts with ``pyspark_``
(``pyspark/sql/worker/lookup_data_sources.py``). With ``kafka-format`` installed where the
driver's Python finds it::

    spark.read.format("kafka_log").load("/var/lib/kafka").groupBy("topic").count()
    spark.sql("CREATE TEMPORARY VIEW orders USING kafka_log OPTIONS (path '/data/orders-0')")

``kafka_format.spark_udfs.register(spark)`` still adds the SQL functions
(``kafka_batches``...), the read metrics (``bytes_read``, ``corrupt_batches``) and the
workers' Python check, and replaces this registration in its session.

Nothing else lives here: the module is imported by every such look-up, so it only names the
source (:class:`kafka_format.spark_udfs.datasource.KafkaLogDataSource`).
"""

from kafka_format.spark_udfs.datasource import KafkaLogDataSource as DefaultSource

__all__ = ["DefaultSource"]
