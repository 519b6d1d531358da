"""Hook for the Spark comparison of issue 6 (kafka_log on local[2] against binaryFile + a
Python UDF around kafka-python, over a generated 2 GiB log directory).

Not written yet: the Spark data source is being built separately. ``run`` is what
``bench/run.py`` calls; make it return the rows to print, each a dict with the keys of
``SparkRow``, and the table in bench/results.md gets a Spark section. Returning an empty
list (as now) prints "not measured".
"""

from __future__ import annotations

from pathlib import Path
from typing import TypedDict


class SparkRow(TypedDict):
    pipeline: str  # e.g. "kafka_log count", "binaryFile + kafka-python UDF count"
    records: int
    seconds: float


def run(workdir: Path, *, quick: bool) -> list[SparkRow]:
    """Measure the Spark pipelines in ``workdir`` (a scratch directory, deleted after)."""
    return []
