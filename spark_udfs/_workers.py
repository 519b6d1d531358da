"""Whether the Python that Spark starts for this package can import it, and a fix when it can't.

Spark runs the Python side of a data source and of every UDF in interpreters it starts itself:
``PYSPARK_PYTHON`` / ``spark.pyspark.python``, else ``python3`` from PATH. From a venv that is
not activated (``.venv/bin/python app.py``) that ``python3`` is the system's, which lacks
kafka_format, and every query then fails deep in a worker traceback with
``ModuleNotFoundError: No module named 'kafka_format'``. Planning a ``kafka_log`` read runs in
such an interpreter on the driver, reading in one on each executor.

:func:`ensure_workers` checks both before anything is registered:

* classic local mode (``local[...]``: driver and workers on this machine): the interpreter
  PySpark would start is asked directly; when it lacks the package and no interpreter was
  chosen explicitly, the session's workers are pointed at this very interpreter
  (``sys.executable``), which has it, so the README's plain session works from any venv;
* any other session (a cluster, Spark Connect): a one-row job asks the workers' interpreter,
  and on the driver of a classic session the interpreter is asked directly too; a miss raises
  :class:`WorkerPythonError`, one line naming the interpreter and the setting to change.
"""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass

from ..runtime.errors import KafkaFormatError

LOG = logging.getLogger("kafka_format.spark_udfs")

PACKAGE = "kafka_format"


class WorkerPythonError(KafkaFormatError):
    """Spark's Python workers (or the driver's planner) cannot import kafka_format."""


@dataclass(frozen=True, slots=True)
class WorkerPython:
    """What the check found: the interpreter Spark's Python runs and whether it has us."""

    executable: str
    has_package: bool
    #: True when :func:`ensure_workers` pointed the session at ``sys.executable``.
    redirected: bool = False


def advice(executable: str, where: str) -> str:
    return (
        f"Spark's Python {where} ({executable}) cannot import {PACKAGE}: point PYSPARK_PYTHON "
        f"(before the session starts; spark.pyspark.python under spark-submit or on a cluster) "
        f"at an interpreter that has kafka-format installed, e.g. {sys.executable}"
    )


def interpreter_has_package(executable: str) -> bool:
    """Whether ``executable``, started as Spark starts it (this environment, PATH lookup),
    finds kafka_format. A missing interpreter counts as not having it."""
    resolved = shutil.which(executable) or executable
    code = f"import importlib.util,sys; sys.exit(importlib.util.find_spec({PACKAGE!r}) is None)"
    try:
        done = subprocess.run(
            [resolved, "-c", code], capture_output=True, timeout=60, env=os.environ.copy()
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0


def probe_workers(spark) -> WorkerPython:
    """Ask the workers' interpreter, through a one-row job (classic or Connect)."""
    from pyspark.sql import functions as F

    def probe(value):  # nested: pickled by value, not by a reference to this module
        import importlib.util
        import sys as worker_sys

        found = importlib.util.find_spec("kafka_format") is not None
        return f"{int(found)}{worker_sys.executable}"

    answer = spark.range(1).select(F.udf(probe, "string")("id")).first()[0]
    return WorkerPython(answer[1:], answer[:1] == "1")


def _context(spark):
    try:
        return spark.sparkContext
    except Exception:  # Spark Connect: no SparkContext on the client
        return None


def ensure_workers(spark) -> WorkerPython:
    """Check (and in local mode fix) the Python Spark runs for this package; see the module
    docstring. Raises :class:`WorkerPythonError` when it cannot be fixed here."""
    context = _context(spark)
    if context is None:
        found = probe_workers(spark)
        if not found.has_package:
            raise WorkerPythonError(advice(found.executable, "on the Spark Connect server"))
        return found
    executable = context.pythonExec
    local = str(context.master).startswith("local")
    if not interpreter_has_package(executable):
        # PySpark takes its workers' interpreter from PYSPARK_PYTHON (pyspark/core/context.py,
        # SparkContext._do_init): a choice made there is the user's, and is not overridden.
        chosen = os.environ.get("PYSPARK_PYTHON")
        if not local or chosen:
            where = "on the driver" if not local else "chosen by PYSPARK_PYTHON"
            raise WorkerPythonError(advice(executable, where))
        # PySpark reads its workers' interpreter here when it builds each Python function
        # (pyspark.sql.udf._wrap_function), so setting it now covers all we register.
        context.pythonExec = sys.executable
        LOG.warning(
            "kafka_format: Spark's Python workers would run %s, which cannot import %s; "
            "this local session now runs them with %s (set spark.pyspark.python to choose)",
            executable,
            PACKAGE,
            sys.executable,
        )
        return WorkerPython(sys.executable, True, redirected=True)
    if local:
        return WorkerPython(executable, True)
    found = probe_workers(spark)
    if not found.has_package:
        raise WorkerPythonError(advice(found.executable, "on the executors"))
    return found
