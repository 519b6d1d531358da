"""A Spark Connect client session that fails loudly when the client lacks what Connect needs.

``SparkSession.builder.remote(url)`` checks its dependencies (pyspark.sql.connect.utils.
check_dependencies) and, when ``__main__`` has neither a spec nor a file (``python -c``,
``python -`` reading stdin) and grpc is missing, ends the process with ``sys.exit(0)``: no
message, exit status 0. :func:`remote_session` checks first, and names the extra to install.
"""

from __future__ import annotations

import importlib

#: What pyspark[connect] needs on the client (its Requires-Dist for the extra).
CONNECT_MODULES = {
    "grpc": "grpcio",
    "grpc_status": "grpcio-status",
    "google.rpc": "googleapis-common-protos",
    "zstandard": "zstandard",
    "pandas": "pandas",
    "pyarrow": "pyarrow",
}


def missing_connect_packages() -> list[str]:
    """The distributions a Connect client needs that this interpreter cannot import."""
    missing = []
    for module, distribution in CONNECT_MODULES.items():
        try:
            importlib.import_module(module)
        except ImportError:
            missing.append(distribution)
    return missing


def remote_session(url: str, conf: dict[str, str] | None = None):
    """``SparkSession.builder.remote(url)...getOrCreate()``, after checking the client has
    grpc and the rest (``pip install 'kafka-format[connect]'``); raises ImportError if not."""
    missing = missing_connect_packages()
    if missing:
        raise ImportError(
            f"a Spark Connect client needs {', '.join(missing)}, which this Python "
            "cannot import: pip install 'kafka-format[connect]'"
        )
    from pyspark.sql import SparkSession

    builder = SparkSession.builder.remote(url)
    for key, value in (conf or {}).items():
        builder = builder.config(key, value)
    return builder.getOrCreate()
