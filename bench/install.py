"""A fresh install's first command, and a cold Spark executor's first task (issue 24, items 6, 7).

Two wheels of this checkout, built as ``pip install`` builds one (``python -m build
--wheel``): the package's own, which ships the kernels compiled by ``build_py``
(``scripts/kernel_cache.py``), and one built with ``KAFKA_FORMAT_NO_KERNEL_CACHE=1``, as the
wheel was before. Each is installed with ``pip install --no-deps`` into a fresh virtual
environment that finds the dependencies (numba, pyarrow, the codecs, pyspark) in this
checkout's ``.venv`` through a ``.pth`` line, so that only the package is fresh; no
``NUMBA_CACHE_DIR``, no ``kafka-format warm``. Then, each in a fresh process:

- ``dump --jsonl`` of one uncompressed segment (``bench/inputs.write_segment``), to
  /dev/null: the first call after the install, then again (warm);
- with the shipped kernels, every command once on a ``generate`` directory, each the first
  of its kind, and the kernels' cache directory checked unchanged after all of them (nothing
  compiled, so each met the install as it came);
- a Spark session on the venv's Python (driver and workers, local[2]): a trivial Python data
  source's first count (Spark's own cold start), then ``kafka_log``'s first and second count
  (``bench/cold.py``'s child), in a venv of its own per wheel.

    .venv/bin/python bench/run.py --only install [--quick]
"""

from __future__ import annotations

import hashlib
import os
import shutil
import site
import subprocess
import sys
import tempfile
import time
import venv
from pathlib import Path

import cold

HEADING = "## A fresh install: the first command and a cold executor's first task"
ROOT = Path(__file__).resolve().parent.parent
#: The commands timed as a fresh install's first, on a generated log dir ``{logs}``.
COMMANDS = [
    ("generate", ["generate", "{logs}"]),
    ("dump --jsonl", ["dump", "--jsonl", "{logs}"]),
    ("dump", ["dump", "{logs}"]),
    ("verify", ["verify", "{logs}"]),
    ("stats", ["stats", "{logs}"]),
    ("find", ["find", "--offset", "5", "{logs}/orders-0"]),
    ("producers", ["producers", "{logs}"]),
    ("inspect", ["inspect", "{logs}/orders-0/00000000000000000000.log"]),
    ("recover", ["recover", "{logs}", "{scratch}/recovered"]),
    ("compact", ["compact", "--now", "0", "{scratch}/recovered/orders-0"]),
]
#: Issue 24, item 6: ``dump --jsonl`` of an uncompressed segment, and any command, at most.
TARGET_DUMP_S = 3.0
TARGET_ANY_S = 5.0
#: Item 7: a cold executor's first task within this of a warm one's.
TARGET_EXECUTOR_S = 2.0


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("NUMBA_CACHE_DIR", "PYTHONPATH")}
    env.pop("KAFKA_FORMAT_NO_KERNEL_CACHE", None)
    return env


def _wheel(out: Path, shipped: bool) -> tuple[Path, float]:
    env = _env()
    if not shipped:
        env["KAFKA_FORMAT_NO_KERNEL_CACHE"] = "1"
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(out), ROOT],
        check=True,
        capture_output=True,
        env=env,
    )
    (wheel,) = out.glob("kafka_format-*.whl")
    return wheel, time.perf_counter() - started


def _venv(where: Path, wheel: Path) -> Path:
    """A fresh venv with ``wheel`` installed and this checkout's dependencies visible."""
    venv.EnvBuilder(with_pip=True).create(where)
    py = where / "bin" / "python"
    target = subprocess.run(
        [str(py), "-c", "import site; print(site.getsitepackages()[0])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    # after the venv's own site-packages, so that the wheel's kafka_format is the one found
    (Path(target) / "zz_bench_dependencies.pth").write_text(site.getsitepackages()[0] + "\n")
    subprocess.run(
        [str(py), "-m", "pip", "install", "--quiet", "--no-deps", str(wheel)],
        check=True,
        capture_output=True,
    )
    return py


def _timed(py: Path, argv: list[str], cwd: Path) -> float:
    started = time.perf_counter()
    done = subprocess.run(
        [str(py), "-m", "kafka_format.runtime.cli", *argv],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        cwd=cwd,
        env=_env(),
    )
    seconds = time.perf_counter() - started
    if done.returncode:
        raise RuntimeError(f"{' '.join(argv)}: {done.stderr.strip().splitlines()[-1:]}")
    return seconds


def _kernel_cache(py: Path) -> tuple[Path, str]:
    where = subprocess.run(
        [str(py), "-c", "import kafka_format.runtime.kernels as k; print(k.__path__[0])"],
        check=True,
        capture_output=True,
        text=True,
        env=_env(),
    ).stdout.strip()
    cache = Path(where) / "__pycache__"
    digest = hashlib.sha256()
    for f in sorted(cache.glob("*.nb[ic]")):
        digest.update(f.name.encode() + f.read_bytes())
    return cache, digest.hexdigest()


def _spark(py: Path, logs: Path) -> dict:
    env = {**_env(), "PYSPARK_PYTHON": str(py), "PYSPARK_DRIVER_PYTHON": str(py)}
    done = subprocess.run(
        [str(py), "-c", cold.CHILD, str(logs)], capture_output=True, text=True, env=env
    )
    if done.returncode:
        raise RuntimeError(f"the Spark child failed: {done.stderr.strip().splitlines()[-1:]}")
    import json

    return json.loads(done.stdout.strip().splitlines()[-1])


def run(log, quick: bool = False) -> dict:
    sys.path.insert(0, str(ROOT / "bench"))
    from inputs import write_segment

    from kafka_format.runtime.write.generate import generate_log_dir

    scratch = Path(tempfile.mkdtemp(prefix="kafka-format-install-"))
    try:
        segment = scratch / "plain-0" / "00000000000000000000.log"
        segment.parent.mkdir()
        records = write_segment(segment, (4 if quick else 64) << 20)
        spark_logs = scratch / "spark-logs"
        generated = generate_log_dir(spark_logs, size_bytes=(2 if quick else 16) << 20)
        spark_records = sum(p.records for p in generated.partitions.values())
        result: dict = {"segment": segment.stat().st_size, "records": records}
        result["spark_records"] = spark_records
        for shipped in (True, False):
            name = "shipped" if shipped else "bare"
            log(f"  building the wheel ({name})")
            wheel, built = _wheel(scratch / f"dist-{name}", shipped)
            case: dict = {"build_s": built, "wheel_bytes": wheel.stat().st_size}
            py = _venv(scratch / f"venv-{name}", wheel)
            cache, before = _kernel_cache(py)
            case["cached_files"] = len(list(cache.glob("*.nb[ic]")))
            log(f"  {name}: dump --jsonl, first and second")
            argv = ["dump", "--jsonl", str(segment)]
            case["dump_first"] = _timed(py, argv, scratch)
            case["dump_second"] = _timed(py, argv, scratch)
            if shipped:
                case["commands"] = {}
                work = scratch / "commands"
                work.mkdir()
                for label, template in COMMANDS:
                    argv = [a.format(logs=work / "logs", scratch=work) for a in template]
                    case["commands"][label] = _timed(py, argv, scratch)
                case["cache_unchanged"] = _kernel_cache(py)[1] == before
            log(f"  {name}: a Spark session's first and second count, in a venv of its own")
            spark_py = _venv(scratch / f"venv-{name}-spark", wheel)
            got = _spark(spark_py, spark_logs)
            if got["records"] != spark_records or got["again"] != spark_records:
                raise RuntimeError(f"{name}: counted {got['records']}, {got['again']}")
            case["spark"] = got
            result[name] = case
        return result
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def render(result: dict | str, machine: str) -> str:
    lines = [
        HEADING,
        "",
        "Issue 24, items 6 and 7: on a fresh install, without `kafka-format warm`, `dump "
        f"--jsonl` of an uncompressed segment within {TARGET_DUMP_S:.0f} s and any command "
        f"within {TARGET_ANY_S:.0f} s; a cold Spark executor's first task within "
        f"{TARGET_EXECUTOR_S:.0f} s of a warm one's, without a shared `NUMBA_CACHE_DIR`. "
        "`bench/install.py`: two wheels of this checkout built as pip builds one (`python -m "
        "build --wheel`), the package's own (its `build_py` compiles the kernels into the "
        "wheel: `scripts/kernel_cache.py`) and one built with `KAFKA_FORMAT_NO_KERNEL_CACHE=1` "
        "(the wheel as it was), each `pip install`ed into fresh venvs (the dependencies seen "
        "through a `.pth` line: only the package is fresh); no `NUMBA_CACHE_DIR`. Every figure "
        "is a fresh process's wall time, start to exit.",
        "",
    ]
    if isinstance(result, str):
        return "\n".join([*lines, f"- not measured: {result}"]) + "\n"
    shipped, bare = result["shipped"], result["bare"]
    lines += [
        f"`dump --jsonl` of one uncompressed segment ({result['segment'] / (1 << 20):.0f} MiB, "
        f"{result['records']} records) to /dev/null:",
        "",
        "| wheel | build s | wheel MiB | kernel cache files | first call s | second call s |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for name, case in (("ships the kernels compiled", shipped), ("without them", bare)):
        lines.append(
            f"| {name} | {case['build_s']:.1f} | {case['wheel_bytes'] / (1 << 20):.1f} | "
            f"{case['cached_files']} | {case['dump_first']:.2f} | {case['dump_second']:.2f} |"
        )
    commands = shipped["commands"]
    slowest = max(commands, key=commands.get)
    lines += [
        "",
        "Each command the first of its kind on the install that ships the kernels (a "
        "generated log dir: every codec and magic, transactions): "
        + ", ".join(f"`{k}` {v:.2f} s" for k, v in commands.items())
        + "; the kernels' cache "
        + (
            "unchanged after all of them (nothing compiled)."
            if shipped["cache_unchanged"]
            else "**changed** (something compiled)."
        ),
        "",
        f"Spark, local[2], the venv's Python as driver and workers, `count()` over "
        f"{result['spark_records']} generated records:",
        "",
        "| wheel | trivial source, first count s | kafka_log first count s | second count s "
        "| cold start (first - second) s |",
        "|---|---:|---:|---:|---:|",
    ]
    for name, case in (("ships the kernels compiled", shipped), ("without them", bare)):
        got = case["spark"]
        lines.append(
            f"| {name} | {got['trivial']:.2f} | {got['first']:.2f} | {got['second']:.2f} | "
            f"{got['first'] - got['second']:.2f} |"
        )
    spark_gap = shipped["spark"]["first"] - shipped["spark"]["second"]
    verdicts = [
        ("`dump --jsonl` first call", shipped["dump_first"], TARGET_DUMP_S),
        (f"slowest command (`{slowest}`)", commands[slowest], TARGET_ANY_S),
        ("cold executor's extra time", spark_gap, TARGET_EXECUTOR_S),
    ]
    lines += [
        "",
        "- Targets: "
        + "; ".join(
            f"{what} {got:.2f} s (target <= {limit:.0f} s: {'met' if got <= limit else 'NOT met'})"
            for what, got, limit in verdicts
        )
        + f". Without the shipped kernels the first call took {bare['dump_first']:.1f} s and a "
        f"cold executor {bare['spark']['first'] - bare['spark']['second']:.1f} s more than a "
        "warm one: the compile moved into the wheel's build "
        f"({shipped['build_s'] - bare['build_s']:.0f} s more there).",
        "- What the shipped kernels are valid for, numba decides on load: the numba version "
        "and the CPU (name and features) that built them. A wheel built on one machine and "
        "installed on another CPU, or beside another numba, compiles on first use as before "
        "(and caches beside the package where it may write): `pip install` from the sdist or "
        "the checkout builds for the machine it runs on.",
        "",
        f"Machine: {machine}.",
    ]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":  # python bench/install.py [--quick]
    print(render(run(lambda text: print(text, file=sys.stderr), "--quick" in sys.argv), "here"))
