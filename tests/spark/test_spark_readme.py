"""The README's Spark snippet, as written there, on the data ``make demo`` generates.

The snippet is taken from the README (its first ``python`` block under ``## Spark``) and run
with its path pointing at a directory generated as the demo generates it (``generate --seed
42``). Oracle: ``read_table`` of the same directory under read_committed, less orders-0's
offsets below the snippet's starting offset.
"""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

pytest.importorskip("pyspark")

from kafka_format.runtime.read.columnar import read_table
from kafka_format.runtime.write.generate import generate_log_dir

pytestmark = pytest.mark.spark
README = Path(__file__).resolve().parents[2] / "README.md"
DEMO_LOGS = "demo-out/kafka-logs"


def _snippet() -> str:
    text = README.read_text()
    spark = text[text.index("\n## Spark\n") :]
    return re.search(r"```python\n(.*?)```", spark, re.S).group(1)


def test_the_readme_snippet_runs_on_the_demo_data(spark, tmp_path):
    code = _snippet()
    assert DEMO_LOGS in code  # the README names the demo's data
    logs = tmp_path / "kafka-logs"
    generate_log_dir(logs, seed=42)
    namespace: dict = {}
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code.replace(DEMO_LOGS, str(logs)), "README.md", "exec"), namespace)
    start = int(re.search(r'"orders":\{"0":(\d+)\}', code).group(1))
    table = read_table(str(logs), isolation="read_committed")
    orders0 = [
        o
        for t, p, o in zip(
            table.column("topic").to_pylist(),
            table.column("partition").to_pylist(),
            table.column("offset").to_pylist(),
            strict=True,
        )
        if (t, p) == ("orders", 0)
    ]
    assert max(orders0) >= start  # the starting offset lies in the demo's log
    want = table.num_rows - sum(1 for o in orders0 if o < start)
    assert namespace["df"].count() == want
    assert "orders" in out.getvalue()  # the grouped counts were shown
