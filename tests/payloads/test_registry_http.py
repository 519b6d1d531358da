"""Schema sources over a live registry's REST API (runtime/payloads/registry_http.py).

No registry runs here: a stdlib ``http.server`` in a thread answers with recorded responses,
shaped as Confluent's REST resources answer (``SchemasResource``, ``SubjectVersionsResource``,
``SubjectsResource``, ``RootResource``; errors as ``{"error_code", "message"}``). To keep the
fake honest, Confluent's own Python client is pointed at it too and must read the same
schemas from it.
"""

from __future__ import annotations

import json
import pickle
import socket
import threading
import time
import urllib.parse
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from kafka_format.runtime.payloads.registry import (
    HttpSchemaSource,
    RegisteredSchema,
    SchemaReference,
    SchemaRegistryError,
    open_schema_source,
)

ORDERS_V1 = '{"type":"record","name":"Order","fields":[{"name":"id","type":"long"}]}'
ORDERS_V2 = '{"type":"record","name":"Order","fields":[]}'
MONEY = 'syntax = "proto3";\npackage common;\n\nmessage Money {\n  string currency = 1;\n}\n'
PAYMENT = (
    'syntax = "proto3";\nimport "common/money.proto";\nmessage P {\n  common.Money m = 1;\n}\n'
)
USERS = '{"type":"object"}'
MONEY_REF = {"name": "common/money.proto", "subject": "money", "version": 1}


def not_found(code: int, message: str) -> tuple[int, Any]:
    return 404, {"error_code": code, "message": message}


#: (path, the query parameters that change the answer) -> (status, JSON body)
RECORDED: dict[tuple[str, frozenset[tuple[str, str]]], tuple[int, Any]] = {}


def answer(path: str, body: Any, status: int = 200, **query: str) -> None:
    RECORDED[(path, frozenset(query.items()))] = (status, body)


answer("/", {})
answer("/schemas/ids/1", {"schema": ORDERS_V1})  # Avro: no schemaType
answer("/schemas/ids/1/versions", [{"subject": "orders-value", "version": 1}])
answer(
    "/schemas/ids/4",
    {"schemaType": "PROTOBUF", "references": [MONEY_REF], "schema": PAYMENT},
)
answer(
    "/schemas/ids/4/versions",
    [{"subject": "tips-value", "version": 1}, {"subject": "payments-value", "version": 3}],
)
answer("/schemas/ids/5", {"schemaType": "JSON", "schema": USERS})
answer("/schemas/ids/5/versions", [])  # its only version is soft-deleted
answer("/schemas/ids/5/versions", [{"subject": "users-value", "version": 1}], deleted="true")
answer("/schemas/ids/1", {"schema": ORDERS_V2}, subject=":.staging:")
answer(
    "/schemas/ids/1/versions",
    [{"subject": ":.staging:orders-value", "version": 1}],
    subject=":.staging:",
)
answer("/schemas/ids/99", *reversed(not_found(40403, "Schema 99 not found")))
answer("/schemas/ids/500", {"error_code": 50001, "message": "Error in the backend"}, 500)
answer("/schemas/ids/600", {"schema": 42})
answer(
    "/subjects",
    ["orders-value", "money", "payments-value", "users-value", "a/b"],
    deleted="true",
)
answer(
    "/subjects/money/versions/1",
    {"subject": "money", "version": 1, "id": 3, "schemaType": "PROTOBUF", "schema": MONEY},
)
for version in ("2", "latest"):
    answer(
        f"/subjects/orders-value/versions/{version}",
        {"subject": "orders-value", "version": 2, "id": 2, "schema": ORDERS_V2},
    )
answer(
    "/subjects/orders-value/versions/1",
    {"subject": "orders-value", "version": 1, "id": 1, "schema": ORDERS_V1},
)
answer("/subjects/orders-value/versions", [1, 2], deleted="true")
answer("/subjects/users-value/versions/1", *reversed(not_found(40402, "Version 1 not found.")))
answer(
    "/subjects/users-value/versions/1",
    {"subject": "users-value", "version": 1, "id": 5, "schemaType": "JSON", "schema": USERS},
    deleted="true",
)
answer("/subjects/users-value/versions/latest", *reversed(not_found(40402, "Version not found")))
answer("/subjects/users-value/versions", [1], deleted="true")
answer(
    "/subjects/a%2Fb/versions/1",
    {"subject": "a/b", "version": 1, "id": 1, "schema": ORDERS_V1},
)
answer("/subjects/nobody/versions", *reversed(not_found(40401, "Subject 'nobody' not found.")))
answer(
    "/subjects/nobody/versions",
    *reversed(not_found(40401, "Subject 'nobody' not found.")),
    deleted="true",
)


class Registry:
    """The fake's state: what it was asked, what it requires."""

    def __init__(self) -> None:
        self.requests: list[str] = []
        self.auth: str | None = None
        self.delay = 0.0
        self.raw: bytes | None = None


class Handler(BaseHTTPRequestHandler):
    registry: Registry

    def do_GET(self) -> None:
        registry = self.registry
        registry.requests.append(self.path)
        time.sleep(registry.delay)
        if registry.auth is not None and self.headers.get("Authorization") != registry.auth:
            return self._send(401, {"error_code": 401, "message": "Unauthorized"})
        if registry.raw is not None:
            return self._send(200, None, registry.raw)
        parts = urllib.parse.urlsplit(self.path)
        query = {
            k: v[0].lower() if k == "deleted" else v[0]
            for k, v in urllib.parse.parse_qs(parts.query).items()
            if k in ("deleted", "subject")
        }
        if query.get("deleted") == "false":
            del query["deleted"]
        status, body = RECORDED.get(
            (parts.path, frozenset(query.items())),
            (404, {"error_code": 404, "message": "HTTP 404 Not Found"}),
        )
        self._send(status, body)

    def _send(self, status: int, body: Any, raw: bytes | None = None) -> None:
        data = raw if raw is not None else json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/vnd.schemaregistry.v1+json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def registry() -> Iterator[tuple[str, Registry]]:
    state = Registry()
    handler = type("BoundHandler", (Handler,), {"registry": state})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", state
    finally:
        server.shutdown()
        server.server_close()


def test_by_id(registry: tuple[str, Registry]) -> None:
    url, _ = registry
    source = open_schema_source(url)
    assert isinstance(source, HttpSchemaSource)
    assert source.description == f"schema registry {url}"
    assert source.by_id(1) == RegisteredSchema(1, "orders-value", 1, "AVRO", ORDERS_V1, ())
    # several holders: the first by (subject, version), as the store source chooses
    assert source.by_id(4) == RegisteredSchema(
        4,
        "payments-value",
        3,
        "PROTOBUF",
        PAYMENT,
        (SchemaReference("common/money.proto", "money", 1),),
    )
    assert source.by_id(5) == RegisteredSchema(5, "users-value", 1, "JSON", USERS, (), True)
    assert source.by_id(99) is None


def test_by_id_in_a_context(registry: tuple[str, Registry]) -> None:
    source = open_schema_source(registry[0])
    staging = source.by_id(1, context=".staging")
    assert staging == RegisteredSchema(1, ":.staging:orders-value", 1, "AVRO", ORDERS_V2, ())


def test_answers_are_cached(registry: tuple[str, Registry]) -> None:
    url, state = registry
    source = open_schema_source(url)
    for _ in range(3):
        source.by_id(1)
        source.by_id(99)
        source.by_subject("money", 1)
    asked = [p for p in state.requests if p != "/"]
    assert sorted(asked) == sorted(
        [
            "/schemas/ids/1",
            "/schemas/ids/1/versions",
            "/schemas/ids/99",
            "/subjects/money/versions/1",
        ]
    )


def test_by_subject(registry: tuple[str, Registry]) -> None:
    source = open_schema_source(registry[0])
    assert source.by_subject("money", 1) == RegisteredSchema(3, "money", 1, "PROTOBUF", MONEY, ())
    assert source.by_subject("orders-value").version == 2  # type: ignore[union-attr]
    assert source.by_subject("orders-value", -1).version == 2  # type: ignore[union-attr]
    users = source.by_subject("users-value", 1)
    assert users is not None and users.deleted  # found only with ?deleted=true
    assert source.by_subject("users-value") is None
    assert source.by_subject("a/b", 1).subject == "a/b"  # type: ignore[union-attr]
    assert source.by_subject("nobody", 1) is None
    ref = SchemaReference("common/money.proto", "money", 1)
    assert source.reference(ref) == source.by_subject("money", 1)


def test_subjects_and_versions(registry: tuple[str, Registry]) -> None:
    source = open_schema_source(registry[0])
    assert source.subjects() == ["a/b", "money", "orders-value", "payments-value", "users-value"]
    assert [(s.version, s.id) for s in source.versions("orders-value")] == [(1, 1), (2, 2)]
    assert [s.deleted for s in source.versions("users-value")] == [True]
    assert source.versions("nobody") == []


def test_server_errors_are_one_line(registry: tuple[str, Registry]) -> None:
    url, state = registry
    source = open_schema_source(url)
    with pytest.raises(SchemaRegistryError) as info:
        source.by_id(500)
    assert str(info.value) == (
        f"schema registry {url}: GET /schemas/ids/500: HTTP 500 Internal Server Error: "
        "Error in the backend"
    )
    with pytest.raises(SchemaRegistryError, match="answered dict JSON the registry API does not"):
        source.by_id(600)
    state.raw = b"<html>hello</html>"
    with pytest.raises(SchemaRegistryError, match="not JSON; is this a schema registry"):
        source.by_subject("money", 7)


def test_refused_connection() -> None:
    with socket.socket() as sock:  # a port nobody listens on once closed
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    url = f"http://127.0.0.1:{port}"
    with pytest.raises(SchemaRegistryError) as info:
        open_schema_source(url)
    message = str(info.value)
    assert message.startswith(f"schema registry {url}: GET /: cannot connect: ")
    assert "refused" in message.lower() and "\n" not in message
    lazy = HttpSchemaSource(url)  # as an executor unpickles it: the first look-up says it
    with pytest.raises(SchemaRegistryError, match="cannot connect"):
        lazy.by_id(1)


def test_timeout(registry: tuple[str, Registry]) -> None:
    url, state = registry
    state.delay = 1.0
    source = HttpSchemaSource(url, timeout=0.2)
    with pytest.raises(SchemaRegistryError, match=r"GET /schemas/ids/1: no answer within 0\.2 s"):
        source.by_id(1)


def test_basic_auth_from_the_url(registry: tuple[str, Registry]) -> None:
    url, state = registry
    state.auth = "Basic dXNlcjpzM2NyZXQv"  # user:s3cret/
    with pytest.raises(SchemaRegistryError, match="HTTP 401 Unauthorized: Unauthorized"):
        open_schema_source(url)
    secret_url = url.replace("http://", "http://user:s3cret%2F@")
    source = open_schema_source(secret_url)
    assert source.by_id(1) is not None
    assert "s3cret" not in source.description and source.description.endswith(url)
    assert source.spec == secret_url


def test_pickles_as_its_spec(registry: tuple[str, Registry]) -> None:
    source = open_schema_source(registry[0] + "/")
    source.by_id(1)
    again = pickle.loads(pickle.dumps(source))
    assert isinstance(again, HttpSchemaSource) and again.spec == registry[0] + "/"
    assert again.by_id(4) == source.by_id(4)


def test_confluent_client_reads_the_fake_alike(registry: tuple[str, Registry]) -> None:
    """The recorded answers are what Confluent's client expects of a registry."""
    from confluent_kafka.schema_registry import SchemaRegistryClient

    url, _ = registry
    client = SchemaRegistryClient({"url": url})
    source = open_schema_source(url)
    for schema_id in (1, 4, 5):
        theirs, mine = client.get_schema(schema_id), source.by_id(schema_id)
        assert mine is not None
        assert (mine.schema, mine.schema_type) == (theirs.schema_str, theirs.schema_type)
        refs = [(r.name, r.subject, r.version) for r in theirs.references or []]
        assert [(r.name, r.subject, r.version) for r in mine.references] == refs
    theirs_money = client.get_version("money", 1)
    mine_money = source.by_subject("money", 1)
    assert mine_money is not None
    assert (mine_money.id, mine_money.schema) == (
        theirs_money.schema_id,
        theirs_money.schema.schema_str,
    )
    assert client.get_latest_version("orders-value").version == 2
