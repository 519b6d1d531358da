"""Module-level UDFs that need no session when imported: built when first called.

``arrow_udf(...)`` makes a classic UDF or a Spark Connect one depending on whether a Connect
session is running *when it is made* (``pyspark.sql.utils.is_remote``), and a classic one
needs a SparkContext when applied. So a module that built its UDFs at import time broke under
Connect (``[SESSION_OR_CONTEXT_NOT_EXISTS]`` when imported before ``builder.remote(...)``).
A :class:`LazyUdf` builds one UDF per kind the first time it is applied in that kind of
session, and applies that.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def _remote() -> bool:
    from pyspark.sql.utils import is_remote

    return is_remote()


class LazyUdf:
    """A UDF factory that looks like the UDF: ``kafka_records("content")`` gives a Column."""

    __slots__ = ("__name__", "_build", "_built")

    def __init__(self, name: str, build: Callable[[], Any]) -> None:
        self.__name__ = name
        self._build = build
        self._built: dict[bool, Any] = {}

    def udf(self) -> Any:
        """The UDF for the kind of session running now (classic or Connect)."""
        remote = _remote()
        built = self._built.get(remote)
        if built is None:
            built = self._built[remote] = self._build()
        return built

    def __call__(self, *columns: Any) -> Any:
        return self.udf()(*columns)

    def __repr__(self) -> str:
        return f"<kafka_format UDF {self.__name__}>"


def lazy_functions(
    make: Callable[[], dict[str, Any]], names: tuple[str, ...]
) -> dict[str, LazyUdf]:
    """A :class:`LazyUdf` per name of what ``make()`` builds (``make`` runs once per kind)."""
    cache: dict[bool, dict[str, Any]] = {}

    def build(name: str) -> Callable[[], Any]:
        def one() -> Any:
            remote = _remote()
            if remote not in cache:
                cache[remote] = make()
            return cache[remote][name]

        return one

    return {name: LazyUdf(name, build(name)) for name in names}
