"""Schemas asked of a live Schema Registry over its REST API, with the standard library.

The endpoints (Confluent's ``SchemasResource``, ``SubjectVersionsResource`` and
``SubjectsResource``; Karapace and other compatible registries answer the same):

* ``GET /schemas/ids/{id}`` -> ``{"schema", "schemaType"?, "references"?}`` (404, error code
  40403, for an id it does not hold; ``?subject=:.ctx:`` asks in a context); and
  ``GET /schemas/ids/{id}/versions`` -> ``[{"subject","version"}]``, the versions holding it
  (``?deleted=true``: soft-deleted ones too);
* ``GET /subjects/{subject}/versions/{version|latest}`` -> ``{"subject","version","id",
  "schemaType"?,"references"?,"schema"}`` (``?deleted=true`` finds a soft-deleted version);
* ``GET /subjects/{subject}/versions`` -> ``[1, 2, ...]`` and ``GET /subjects`` -> names.

Answers are cached per id and per subject version (a registered version never changes; a
"latest" is asked each time). Credentials in the URL (``https://user:secret@host``) are sent
as HTTP basic authentication and never shown in :attr:`description` or errors.
"""

from __future__ import annotations

import base64
import json
import urllib.error
import urllib.parse
import urllib.request
from typing import Any

from .registry_model import (
    DEFAULT_CONTEXT,
    RegisteredSchema,
    SchemaRegistryError,
    SchemaSource,
    normalize_context,
    schema_from_json,
)

__all__ = ["DEFAULT_TIMEOUT", "HttpSchemaSource"]

#: Seconds one request may take, connection included.
DEFAULT_TIMEOUT = 10.0
# What Confluent's own client sends (schema_registry_client.py's headers).
_V1 = "application/vnd.schemaregistry.v1+json"
_ACCEPT = f"{_V1}, application/vnd.schemaregistry+json, application/json"
_MISSING = object()


class HttpSchemaSource(SchemaSource):
    """Schemas from a registry at ``spec``, an ``http://`` or ``https://`` URL."""

    def __init__(self, spec: str, *, timeout: float = DEFAULT_TIMEOUT) -> None:
        self.spec = spec
        self.timeout = timeout
        parts = urllib.parse.urlsplit(spec)
        netloc = parts.netloc.rpartition("@")[2]  # credentials are sent, never shown
        self.base = urllib.parse.urlunsplit((parts.scheme, netloc, parts.path.rstrip("/"), "", ""))
        self._auth: str | None = None
        if parts.username is not None:
            user = urllib.parse.unquote(parts.username)
            secret = urllib.parse.unquote(parts.password or "")
            token = base64.b64encode(f"{user}:{secret}".encode()).decode("ascii")
            self._auth = f"Basic {token}"
        self.description = f"schema registry {self.base}"
        self._ids: dict[tuple[str, int], RegisteredSchema | None] = {}
        self._versions: dict[tuple[str, int], RegisteredSchema | None] = {}

    def __reduce__(self) -> tuple[Any, ...]:
        return (_reopen, (self.spec, self.timeout))

    def check(self) -> None:
        """Raise :class:`SchemaRegistryError` now if the registry cannot be reached or
        refuses us; any other answer to its no-op root resource (``RootResource``) will do."""
        try:
            self._get("/")
        except _HttpStatus as status:
            if status.code in (401, 403):
                raise SchemaRegistryError(status.line) from None

    # --- the interface ----------------------------------------------------------------------

    def by_id(self, schema_id: int, *, context: str | None = None) -> RegisteredSchema | None:
        ctx = normalize_context(context)
        key = (ctx, schema_id)
        cached = self._ids.get(key, _MISSING)
        if cached is _MISSING:
            cached = self._ids[key] = self._fetch_id(schema_id, ctx)
        return cached  # type: ignore[return-value]

    def by_subject(self, subject: str, version: int | None = None) -> RegisteredSchema | None:
        if version is None or version == -1:
            return self._fetch_version(subject, "latest")
        key = (subject, version)
        cached = self._versions.get(key, _MISSING)
        if cached is _MISSING:
            cached = self._versions[key] = self._fetch_version(subject, str(version))
        return cached  # type: ignore[return-value]

    def versions(self, subject: str) -> list[RegisteredSchema]:
        numbers = self._json(f"/subjects/{_quote(subject)}/versions", deleted="true")
        if numbers is None:
            return []
        if not isinstance(numbers, list):
            raise self._unexpected("/subjects/…/versions", numbers)
        found = [self.by_subject(subject, n) for n in sorted(numbers) if isinstance(n, int)]
        return [s for s in found if s is not None]

    def subjects(self) -> list[str]:
        names = self._json("/subjects", deleted="true")
        if not isinstance(names, list):
            raise self._unexpected("/subjects", names)
        return sorted(n for n in names if isinstance(n, str))

    # --- requests ---------------------------------------------------------------------------

    def _fetch_id(self, schema_id: int, ctx: str) -> RegisteredSchema | None:
        scope = {} if ctx == DEFAULT_CONTEXT else {"subject": f":{ctx}:"}
        body = self._json(f"/schemas/ids/{schema_id}", **scope)
        if body is None:
            return None
        subject, version, deleted = self._holder(schema_id, scope)
        body = {**body, "id": schema_id} if isinstance(body, dict) else body
        schema = schema_from_json(body, subject, version, deleted=deleted)
        if isinstance(schema, str):
            raise self._unexpected(f"/schemas/ids/{schema_id}", body, schema)
        return schema

    def _holder(self, schema_id: int, scope: dict[str, str]) -> tuple[str, int, bool]:
        """The first subject version holding an id, preferring live ones, as the store's
        :meth:`~.registry_model.Catalog.by_id` chooses; ("", 0) from a registry too old to
        list them (``/schemas/ids/{id}/versions`` came with Confluent 5.5)."""
        path = f"/schemas/ids/{schema_id}/versions"
        for deleted in (False, True):
            pairs = self._json(path, **scope, **({"deleted": "true"} if deleted else {}))
            holders = sorted(
                (p["subject"], p["version"])
                for p in (pairs if isinstance(pairs, list) else ())
                if isinstance(p, dict)
                and isinstance(p.get("subject"), str)
                and isinstance(p.get("version"), int)
            )
            if holders:
                return holders[0][0], holders[0][1], deleted
        return "", 0, False

    def _fetch_version(self, subject: str, version: str) -> RegisteredSchema | None:
        path = f"/subjects/{_quote(subject)}/versions/{version}"
        body, deleted = self._json(path), False
        if body is None and version != "latest":
            body, deleted = self._json(path, deleted="true"), True
        if body is None:
            return None
        if not isinstance(body, dict) or not isinstance(body.get("version"), int):
            raise self._unexpected(path, body)
        flag = body.get("deleted") if isinstance(body.get("deleted"), bool) else deleted
        name = body.get("subject") if isinstance(body.get("subject"), str) else subject
        schema = schema_from_json(body, name, body["version"], deleted=flag)
        if isinstance(schema, str):
            raise self._unexpected(path, body, schema)
        return schema

    def _json(self, path: str, **query: str) -> Any:
        """The JSON answer, or None for 404 (not found) and 422 (no such version)."""
        try:
            return self._get(path, **query)
        except _HttpStatus as status:
            if status.code in (404, 422):
                return None
            raise SchemaRegistryError(status.line) from None

    def _get(self, path: str, **query: str) -> Any:
        url = self.base + path + (f"?{urllib.parse.urlencode(query)}" if query else "")
        request = urllib.request.Request(url, headers={"Accept": _ACCEPT})
        if self._auth is not None:
            request.add_header("Authorization", self._auth)
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                data = response.read()
        except urllib.error.HTTPError as exc:
            raise _HttpStatus(exc.code, self._status_line(path, exc)) from None
        except (urllib.error.URLError, OSError, ValueError) as exc:
            reason = getattr(exc, "reason", exc)
            if isinstance(reason, TimeoutError):
                why = f"no answer within {self.timeout:g} s"
            else:
                why = f"cannot connect: {reason or type(exc).__name__}"
            raise SchemaRegistryError(f"{self.description}: GET {path}: {why}") from None
        try:
            return json.loads(data.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            raise SchemaRegistryError(
                f"{self.description}: GET {path} answered something that is not JSON; "
                "is this a schema registry?"
            ) from None

    def _status_line(self, path: str, exc: urllib.error.HTTPError) -> str:
        message = ""
        try:
            body = json.loads(exc.read().decode("utf-8"))
            if isinstance(body, dict) and isinstance(body.get("message"), str):
                message = f": {body['message']}"
        except (OSError, UnicodeDecodeError, ValueError):
            pass
        return f"{self.description}: GET {path}: HTTP {exc.code} {exc.reason}{message}"

    def _unexpected(self, path: str, body: Any, why: str = "") -> SchemaRegistryError:
        what = f" ({why})" if why else ""
        return SchemaRegistryError(
            f"{self.description}: GET {path} answered {type(body).__name__} JSON the "
            f"registry API does not{what}"
        )


class _HttpStatus(Exception):
    def __init__(self, code: int, line: str) -> None:
        super().__init__(line)
        self.code = code
        self.line = line


def _quote(subject: str) -> str:
    return urllib.parse.quote(subject, safe="")


def _reopen(spec: str, timeout: float) -> HttpSchemaSource:
    return HttpSchemaSource(spec, timeout=timeout)
