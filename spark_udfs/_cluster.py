"""Run a little Python where the data is: in one Spark task, its result sent back pickled.

Under Spark Connect the client may not see the log at all (it lives beside the server, its
executors, or in an object store they reach): listing a log directory and planning over its
batch headers (``log_stats``, ``compact_log``) then run in a task, as the data source's own
planning runs on the server. The function and its arguments travel with the task (cloudpickle,
as any UDF); a :class:`~kafka_format.runtime.errors.KafkaFormatError` or ``OSError`` raised
there is raised again here, as itself, rather than as a worker traceback.
"""

from __future__ import annotations

import pickle
from collections.abc import Callable
from typing import Any

_SCHEMA = "ok boolean, result binary"


def run_in_task(spark, fn: Callable[..., Any], *args: Any) -> Any:
    """``fn(*args)`` computed in one task of ``spark`` (classic or Connect)."""
    from pyspark import cloudpickle

    payload = cloudpickle.dumps((fn, args))

    def task(batches):  # nested: sent by value with the payload it closes over
        import pickle as worker_pickle

        import pyarrow as pa

        for _ in batches:
            pass
        from kafka_format.runtime.errors import KafkaFormatError

        work, work_args = worker_pickle.loads(payload)
        try:
            ok, result = True, worker_pickle.dumps(work(*work_args))
        except (KafkaFormatError, OSError, ValueError) as exc:
            ok, result = False, worker_pickle.dumps(exc)
        yield pa.RecordBatch.from_pydict({"ok": [ok], "result": [result]})

    row = spark.range(1).mapInArrow(task, _SCHEMA).first()
    value = pickle.loads(row["result"])
    if not row["ok"]:
        raise value
    return value


def is_remote() -> bool:
    """Whether Spark Connect is in use in this process (``pyspark.sql.utils.is_remote``)."""
    from pyspark.sql.utils import is_remote as remote

    return remote()
