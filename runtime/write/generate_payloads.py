"""``kafka-format generate``'s payload scenarios: topics whose values applications framed with
Confluent's serializers (Avro, Protobuf, JSON Schema), and the Schema Registry's own store,
``_schemas``, holding every schema they name. :mod:`.generate` runs them like its other
scenarios; this module holds what is particular to them.

Subjects follow ``TopicNameStrategy`` (``<topic>-value``; keys are plain strings); the ids
are fixed, in registration order, whichever payload topics are written:

==  ===============  =======  ========  ===================================================
id  subject          version  type      what it is
==  ===============  =======  ========  ===================================================
1   address.proto    1        PROTOBUF  ``com.example.common.Address``, imported by customers
2   customers-value  1        PROTOBUF  ``Customer``, referencing ``address.proto`` v1
3   payments-value   1        AVRO      ``Payment``: payment id, account, amount, currency
4   pageviews-value  1        JSON      ``PageView``, a closed content model
5   payments-value   2        AVRO      adds ``channel``, a string with a default
6   customers-value  2        PROTOBUF  adds a nested enum, a repeated field, a ``Timestamp``
7   pageviews-value  2        JSON      adds optional ``referrer`` and ``duration_ms``
8   payments-value   3        AVRO      adds an enum and a union of null and timestamp-millis
9   pageviews-value  3        JSON      adds ``device``: a canary's, soft-deleted since
10  inventory-value  1        AVRO      other applications' subjects, in turn (their topics
...                                     are elsewhere), each version adding a field
==  ===============  =======  ========  ===================================================

The registry serves the whole cluster: after these, other applications register
``records // 8`` schemas (at least 3) over the following hours, in turn under
``inventory-value``, ``shipments-value``, ``invoices-value``, ``returns-value`` and
``loyalty-value``, so that a bigger run has a bigger store, as a busier cluster would.

Topics (see :data:`PAYLOAD_TOPICS` for their partition counts):

``payments``
    Avro; records keyed by account; the service is deployed three times, each deploy writing
    the next version of the schema (new processes: new producer ids); now and then an
    operator's console producer writes a plain JSON record without a key.
``customers``
    Protobuf (message indexes ``[0]``, the single byte 0), keyed by customer id; two versions.
``pageviews``
    JSON Schema, keyed by user id (some records without a key); two versions, and in the
    second one's time a canary instance writing version 3 for a while, rolled back (the
    version soft-deleted after its last record: its id still resolves); all along, a legacy
    tracker writes plain JSON that is not framed.

Within one topic a version's records all follow the previous version's in each partition
(the old instances close, sending what they hold, before the new ones start), except the
canary's and the plain records. Each schema is registered shortly before its first record,
so ids grow with time across topics too.

``_schemas-0`` holds what the registry wrote, one record a batch from an idempotent producer
(``KafkaStore.put`` waits for each ack), keys and values as its Jackson classes write them:
a ``NOOP`` at its first start (``KafkaStore.getLatestOffset``), the global ``CONFIG``
(``BACKWARD``) an operator set, a ``NOOP`` when it restarted weeks later (a new producer
id), then each schema's ``SCHEMA`` record at its registration and the soft delete
(``"deleted":true``) of the canary's version. Nothing was cleaned yet: every record is there.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Protocol

from ..format.codecs import Codec
from ..payloads.encode import MemorySchemaSource, encode
from ..payloads.registry_model import RegisteredSchema, SchemaReference
from ..payloads.wire import resolve_references
from .accumulator import Client, Load, Topic
from .writer import DEFAULT_START_TIME_MS, Message, Producer, WrittenRecord

__all__ = [
    "PAYLOAD_TOPICS",
    "SCHEMAS_TOPIC",
    "Meant",
    "PayloadRegistry",
    "schema_key",
    "schema_value",
]

#: ``kafkastore.topic``'s default, as ``registry_store.SCHEMAS_TOPIC`` has it (not imported from
#: there: that module brings the reader, and numba with it, which writing needs not).
SCHEMAS_TOPIC = "_schemas"
#: Payload scenarios and their default partition counts.
PAYLOAD_TOPICS = {"payments": 2, "customers": 1, "pageviews": 2}
_MINUTE = 60_000
_DAY = 86_400_000
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def _compact(obj: Any) -> str:
    """JSON as Jackson writes it (and the registry stores Avro and JSON schemas): no spaces."""
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


# --- the schemas ----------------------------------------------------------------------------


def _payment(*extra: dict[str, Any]) -> str:
    fields = [
        {"name": "payment_id", "type": "string"},
        {"name": "account", "type": "string"},
        {"name": "amount_cents", "type": "long"},
        {"name": "currency", "type": "string"},
        *extra,
    ]
    record = {"type": "record", "name": "Payment", "namespace": "com.example.payments"}
    return _compact({**record, "fields": fields})


_CHANNEL = {"name": "channel", "type": "string", "default": "web"}
_STATUS = {
    "name": "status",
    "type": {"type": "enum", "name": "Status", "symbols": ["AUTHORIZED", "CAPTURED", "REFUNDED"]},
    "default": "AUTHORIZED",
}
_CAPTURED_AT = {
    "name": "captured_at",
    "type": ["null", {"type": "long", "logicalType": "timestamp-millis"}],
    "default": None,
}

# .proto text as the registry keeps it (its canonical form: two-space indents, a blank line
# between sections).
_ADDRESS = """syntax = "proto3";
package com.example.common;

message Address {
  string street = 1;
  string city = 2;
  string postal_code = 3;
  string country = 4;
}
"""
_CUSTOMER_V1 = """syntax = "proto3";
package com.example.customers;

import "address.proto";

message Customer {
  string customer_id = 1;
  string name = 2;
  string email = 3;
  com.example.common.Address address = 4;
}
"""
_CUSTOMER_V2 = """syntax = "proto3";
package com.example.customers;

import "address.proto";
import "google/protobuf/timestamp.proto";

message Customer {
  string customer_id = 1;
  string name = 2;
  string email = 3;
  com.example.common.Address address = 4;
  Tier tier = 5;
  repeated string tags = 6;
  google.protobuf.Timestamp created_at = 7;

  enum Tier {
    TIER_UNSPECIFIED = 0;
    SILVER = 1;
    GOLD = 2;
  }
}
"""


def _page_view(**extra: dict[str, Any]) -> str:
    properties = {
        "user_id": {"type": "string"},
        "url": {"type": "string", "format": "uri"},
        "viewed_at": {"type": "integer"},
        **extra,
    }
    return _compact(
        {
            "$schema": "http://json-schema.org/draft-07/schema#",
            "title": "PageView",
            "type": "object",
            "properties": properties,
            "required": ["user_id", "url", "viewed_at"],
            # closed: under BACKWARD a new optional property is then a compatible change
            "additionalProperties": False,
        }
    )


_REFERRER = {"referrer": {"type": "string"}, "duration_ms": {"type": "integer", "minimum": 0}}
_DEVICE = {"device": {"type": "string", "enum": ["desktop", "mobile", "tablet"]}}
_ADDRESS_REF = (SchemaReference("address.proto", "address.proto", 1),)

#: (subject, schema type, text, references) in registration order: the id is the place + 1.
_PLAN: tuple[tuple[str, str, str, tuple[SchemaReference, ...]], ...] = (
    ("address.proto", "PROTOBUF", _ADDRESS, ()),
    ("customers-value", "PROTOBUF", _CUSTOMER_V1, _ADDRESS_REF),
    ("payments-value", "AVRO", _payment(), ()),
    ("pageviews-value", "JSON", _page_view(), ()),
    ("payments-value", "AVRO", _payment(_CHANNEL), ()),
    ("customers-value", "PROTOBUF", _CUSTOMER_V2, _ADDRESS_REF),
    ("pageviews-value", "JSON", _page_view(**_REFERRER), ()),
    ("payments-value", "AVRO", _payment(_CHANNEL, _STATUS, _CAPTURED_AT), ()),
    ("pageviews-value", "JSON", _page_view(**_REFERRER, **_DEVICE), ()),
)
#: The version soft-deleted after its last record (the canary's).
_SOFT_DELETED = ("pageviews-value", 3)


#: Other applications' subjects (their topics live on other brokers): (subject, namespace,
#: record name, its first fields), and the optional fields each later version adds.
_OTHERS = (
    ("inventory-value", "com.example.inventory", "StockLevel", ("sku", "warehouse", "quantity")),
    ("shipments-value", "com.example.logistics", "Shipment", ("shipment_id", "order_id")),
    ("invoices-value", "com.example.billing", "Invoice", ("invoice_id", "account", "period")),
    ("returns-value", "com.example.logistics", "Return", ("return_id", "order_id", "reason")),
    ("loyalty-value", "com.example.crm", "PointsEarned", ("account", "program", "points")),
)
_ADDED = ("note", "region", "source", "correlation_id", "updated_by", "tenant", "locale")


#: Versions of one of the other applications' subjects before it moves to a new subject (a
#: new major version of its schema, ``<topic>2-value``): each version adds a field, and a
#: schema record that outgrew a segment would be refused by the broker (a batch larger than
#: ``segment.bytes``: RecordBatchTooLargeException), as a big run's would at 32 KiB segments.
_VERSIONS_A_SUBJECT = 24


def _other(index: int) -> tuple[str, str, str, tuple[SchemaReference, ...]]:
    """The ``index``-th registration of the other applications: their subjects in turn, each
    version adding an optional field (Avro, a union with null, default null)."""
    subject, namespace, name, first = _OTHERS[index % len(_OTHERS)]
    generation, version = divmod(index // len(_OTHERS), _VERSIONS_A_SUBJECT)
    version += 1
    if generation:
        subject = f"{subject.removesuffix('-value')}{generation + 1}-value"
    fields: list[dict[str, Any]] = [{"name": f, "type": "string"} for f in first]
    fields.append(
        {"name": "updated_at", "type": {"type": "long", "logicalType": "timestamp-millis"}}
    )
    for n in range(version - 1):
        added = _ADDED[n % len(_ADDED)] + ("" if n < len(_ADDED) else f"_{n // len(_ADDED)}")
        fields.append({"name": added, "type": ["null", "string"], "default": None})
    text = _compact({"type": "record", "name": name, "namespace": namespace, "fields": fields})
    return (subject, "AVRO", text, ())


def _registered(others: int) -> list[RegisteredSchema]:
    """The plan's schemas, then ``others`` of the other applications', with their ids."""
    versions: dict[str, int] = {}
    out = []
    plan = [*_PLAN, *(_other(i) for i in range(others))]
    for i, (subject, schema_type, text, refs) in enumerate(plan):
        versions[subject] = versions.get(subject, 0) + 1
        out.append(RegisteredSchema(i + 1, subject, versions[subject], schema_type, text, refs))
    return out


# --- the registry's records -----------------------------------------------------------------

_NOOP_KEY = _compact({"keytype": "NOOP", "magic": 0}).encode()
_CONFIG_KEY = _compact({"keytype": "CONFIG", "magic": 0}).encode()
_CONFIG_VALUE = _compact({"compatibilityLevel": "BACKWARD"}).encode()


def schema_key(schema: RegisteredSchema) -> bytes:
    """``SchemaKey`` as the registry's serializer writes it (``@JsonPropertyOrder``)."""
    key = {"keytype": "SCHEMA", "subject": schema.subject, "version": schema.version, "magic": 1}
    return _compact(key).encode()


def schema_value(schema: RegisteredSchema, *, deleted: bool = False) -> bytes:
    """``SchemaValue``: ``schemaType`` left out for Avro and ``references`` when there are
    none (``@JsonInclude(NON_EMPTY)``), in its creator's order."""
    value: dict[str, Any] = {"subject": schema.subject, "version": schema.version, "id": schema.id}
    if schema.schema_type != "AVRO":
        value["schemaType"] = schema.schema_type
    if schema.references:
        value["references"] = [
            {"name": r.name, "subject": r.subject, "version": r.version} for r in schema.references
        ]
    value["schema"] = schema.schema
    value["deleted"] = deleted
    return _compact(value).encode()


# --- the registry through the run -----------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Meant:
    """What a payload record's value was made from: the schema id it is framed with (None for
    plain JSON, not framed) and the value given to the serializer (Avro: ``datetime`` for
    timestamps; Protobuf: the message's JSON mapping)."""

    schema_id: int | None
    value: Any


class RunLike(Protocol):
    """What a scenario gets from :mod:`.generate`: the topic's producers and its load."""

    topic: Topic
    load: Load


Scenario = Callable[[RunLike, int], None]


class _Service:
    """The instances of one application writing a topic. A deploy replaces them all: the old
    ones close (``close()`` sends what they hold), the new processes get new producer ids."""

    def __init__(self, topic: Topic, name: str, codecs: Sequence[Codec], producer_id: int):
        self.topic, self.name, self.codecs = topic, name, codecs
        self.next_id = producer_id
        self.clients: list[Client] = []

    def deploy(self, version: int) -> None:
        for client in self.clients:
            self.topic.flush(client)
        self.clients = []
        for i, codec in enumerate(self.codecs):
            name = f"{self.name}-v{version}-{i}"
            self.clients.append(Client(name, codec, producer=Producer(self.next_id)))
            self.next_id += 1

    def pick(self) -> Client:
        return self.clients[self.topic.rng.randrange(len(self.clients))]


def _eras(total: int, *starts: float) -> list[tuple[int, int, int]]:
    """(version, first record, end) of each version, from the fractions where each starts."""
    bounds = [int(total * s) for s in starts] + [total]
    return [(v + 1, bounds[v], bounds[v + 1]) for v in range(len(starts))]


def _tick(run: RunLike) -> int:
    """Time moves on to the next record's arrival; returns it."""
    run.topic.advance(run.load.next(run.topic.now))
    return run.topic.now


_CURRENCIES = ("EUR", "EUR", "USD", "GBP", "CHF")
_CHANNELS = ("web", "web", "ios", "android", "pos")
_STATUSES = ("AUTHORIZED", "CAPTURED", "CAPTURED", "CAPTURED", "REFUNDED")
_FIRST = ("Ada", "Grace", "Alan", "Edsger", "Barbara", "Donald", "Frances", "Ken", "Radia")
_LAST = ("Lovelace", "Hopper", "Turing", "Dijkstra", "Liskov", "Knuth", "Allen", "Thompson")
_CITIES = (("Paris", "FR"), ("Lyon", "FR"), ("Berlin", "DE"), ("Zurich", "CH"), ("Leeds", "GB"))
_STREETS = ("Rue de Rivoli", "Hauptstrasse", "High Street", "Bahnhofstrasse", "Quai Perrache")
_TAGS = ("newsletter", "vip", "b2b", "beta", "churn-risk")
_PATHS = ("/", "/search?q=shoes", "/p/4711", "/p/1024", "/cart", "/checkout", "/account")
_REFERRERS = ("https://www.google.com/", "https://news.example.org/", "https://t.co/x1")


def _millis(ms: int) -> datetime:
    """Epoch milliseconds as an aware datetime, exactly (no float on the way)."""
    return _EPOCH + timedelta(milliseconds=ms)


def _rfc3339(ms: int) -> str:
    moment = _millis(ms)
    return f"{moment:%Y-%m-%dT%H:%M:%S}.{moment.microsecond // 1000:03d}Z"


class PayloadRegistry:
    """The cluster's Schema Registry over one run: the schemas (ids as the module says), the
    scenarios that frame values with them (:meth:`scenarios`), when each schema was first and
    last used, and what every value written was made from (:meth:`meanings`)."""

    def __init__(self, records: int) -> None:
        # The registry serves the whole cluster: other applications register schemas too,
        # more of them in a bigger run (one for every 8 records a partition gets).
        self.schemas = _registered(max(3, records // 8))
        self.source = MemorySchemaSource(self.schemas)
        self.first_use: dict[int, int] = {}
        self.last_use: dict[int, int] = {}
        self.meant: dict[bytes, Meant] = {}

    def schema(self, subject: str, version: int) -> RegisteredSchema:
        found = self.source.by_subject(subject, version)
        assert found is not None, (subject, version)
        return found

    def scenarios(self) -> dict[str, Scenario]:
        """Scenario functions by topic, ``_schemas`` last: run it after the others, whose
        first uses of each schema place its registration."""
        return {
            "payments": self._payments,
            "customers": self._customers,
            "pageviews": self._pageviews,
            SCHEMAS_TOPIC: self._store,
        }

    def to_json(self) -> list[dict[str, Any]]:
        """The registry's subjects and versions, for ``EXPECTED.json``."""
        deleted = self.schema(*_SOFT_DELETED).id
        return [
            {"subject": s.subject, "version": s.version, "id": s.id,
             "schemaType": s.schema_type, "deleted": s.id == deleted}
            for s in self.schemas
        ]  # fmt: skip

    def meanings(self, records: Sequence[WrittenRecord]) -> dict[int, Meant]:
        """Per offset, what each payload record's value was made from."""
        return {r.offset: self.meant[r.value] for r in records if r.value in self.meant}

    # --- values -----------------------------------------------------------------------------

    def _framed(self, schema: RegisteredSchema, value: Any, now: int) -> bytes:
        if schema.id not in self.first_use:
            # a referenced schema is first used with its first referrer
            for _, ref in resolve_references(self.source, schema):
                self.first_use.setdefault(ref.id, now)
            self.first_use[schema.id] = now
        self.last_use[schema.id] = now
        data = encode(schema, value, self.source)
        self.meant[data] = Meant(schema.id, value)
        return data

    def _plain(self, value: Any) -> bytes:
        data = _compact(value).encode()
        self.meant[data] = Meant(None, value)
        return data

    # --- scenarios --------------------------------------------------------------------------

    def _payments(self, run: RunLike, target: int) -> None:
        topic, rng = run.topic, run.topic.rng
        total = target * topic.partitions
        accounts = max(total // 4, 20)
        service = _Service(topic, "payments-svc", (Codec.NONE, Codec.LZ4), 7000)
        # an operator's kafka-console-producer: plain JSON, no key
        console = Client("console-producer", Codec.NONE)
        for version, _, end in _eras(total, 0, 0.3, 0.65):
            schema = self.schema("payments-value", version)
            service.deploy(version)
            while topic.sent < end:
                now = _tick(run)
                number = topic.sent
                if rng.random() < 0.01:
                    doc = {"payment_id": f"pay-{number:08d}", "note": "manual replay"}
                    topic.send(console, Message(None, self._plain(doc), (), now))
                    continue
                account = b"acct-%05d" % rng.randrange(accounts)
                value: dict[str, Any] = {
                    "payment_id": f"pay-{number:08d}",
                    "account": account.decode(),
                    "amount_cents": rng.randint(50, 250_000),
                    "currency": rng.choice(_CURRENCIES),
                }
                if version >= 2:
                    value["channel"] = rng.choice(_CHANNELS)
                if version >= 3:
                    value["status"] = status = rng.choice(_STATUSES)
                    at = now - rng.randint(0, 90_000)
                    value["captured_at"] = None if status == "AUTHORIZED" else _millis(at)
                data = self._framed(schema, value, now)
                topic.send(service.pick(), Message(account, data, (), now))

    def _customers(self, run: RunLike, target: int) -> None:
        topic, rng = run.topic, run.topic.rng
        total = target * topic.partitions
        customers = max(total // 3, 20)
        service = _Service(topic, "customer-svc", (Codec.SNAPPY, Codec.NONE), 7100)
        for version, _, end in _eras(total, 0, 0.5):
            schema = self.schema("customers-value", version)
            service.deploy(version)
            while topic.sent < end:
                now = _tick(run)
                number = rng.randrange(customers)
                key = b"cust-%05d" % number
                first, last = rng.choice(_FIRST), rng.choice(_LAST)
                city, country = rng.choice(_CITIES)
                value: dict[str, Any] = {
                    "customer_id": key.decode(),
                    "name": f"{first} {last}",
                    "email": f"{first}.{last}{number}@example.com".lower(),
                    "address": {
                        "street": f"{rng.randint(1, 200)} {rng.choice(_STREETS)}",
                        "city": city,
                        "postal_code": f"{rng.randrange(100_000):05d}",
                        "country": country,
                    },
                }
                if version >= 2:
                    tier = rng.choice(("SILVER", "GOLD", None))
                    if tier is not None:  # the default, TIER_UNSPECIFIED, is not written
                        value["tier"] = tier
                    value["tags"] = rng.sample(_TAGS, rng.randint(0, 2))
                    value["created_at"] = _rfc3339(now - rng.randint(_DAY, 900 * _DAY))
                data = self._framed(schema, value, now)
                topic.send(service.pick(), Message(key, data, (), now))

    def _pageviews(self, run: RunLike, target: int) -> None:
        topic, rng = run.topic, run.topic.rng
        total = target * topic.partitions
        users = max(total // 5, 20)
        service = _Service(topic, "pageview-svc", (Codec.NONE, Codec.ZSTD), 7200)
        legacy = Client("legacy-tracker", Codec.GZIP)  # plain JSON, from before the registry
        canary = Client("pageview-svc-v3-canary", Codec.NONE, producer=Producer(7290))
        canary_from, canary_to = int(total * 0.55), int(total * 0.7)
        for version, _, end in _eras(total, 0, 0.4):
            service.deploy(version)
            while topic.sent < end:
                now = _tick(run)
                number = rng.randrange(users)
                key = None if rng.random() < 0.1 else b"user-%05d" % number
                path = rng.choice(_PATHS)
                if rng.random() < 0.04:
                    doc = {"user": number, "page": path, "ts": _rfc3339(now)}
                    topic.send(legacy, Message(key, self._plain(doc), (), now))
                    continue
                client, writes = service.pick(), version
                if version == 2 and canary_from <= topic.sent < canary_to and rng.random() < 0.3:
                    client, writes = canary, 3
                value: dict[str, Any] = {
                    "user_id": f"user-{number:05d}" if key else f"anon-{rng.getrandbits(32):08x}",
                    "url": f"https://shop.example.com{path}",
                    "viewed_at": now,
                }
                if writes >= 2:
                    if rng.random() < 0.6:
                        value["referrer"] = rng.choice(_REFERRERS)
                    value["duration_ms"] = rng.randint(200, 120_000)
                if writes >= 3:
                    value["device"] = rng.choice(("desktop", "mobile", "tablet"))
                data = self._framed(self.schema("pageviews-value", writes), value, now)
                topic.send(client, Message(key, data, (), now))

    # --- the registry's store ---------------------------------------------------------------

    def _registration_times(self, rng: Any) -> list[int]:
        """When each schema was registered: ids in time order, each a few seconds to minutes
        before its first use (and before every later id's); a schema no record used (the
        other applications') minutes after the one before it."""
        times: list[int | None] = [None] * len(self.schemas)
        limit: int | None = None
        for i in reversed(range(len(self.schemas))):
            use = self.first_use.get(self.schemas[i].id)
            bound = use if limit is None else limit if use is None else min(use, limit)
            if bound is not None:
                times[i] = limit = bound - rng.randint(2_000, 10 * _MINUTE)
        out: list[int] = []
        for t in times:
            after = out[-1] if out else DEFAULT_START_TIME_MS
            out.append(t if t is not None else after + rng.randint(2 * _MINUTE, 30 * _MINUTE))
        return out

    def _store(self, run: RunLike, target: int) -> None:
        """``_schemas-0``: the registry's history, in time order (``target`` plays no part:
        the registry writes what its users do)."""
        topic, rng = run.topic, run.topic.rng
        times = self._registration_times(rng)
        first = min(times)
        start = first - rng.randint(35, 60) * _DAY
        first_run = Client("schema-registry", Codec.NONE, producer=Producer(7900))
        restarted = Client("schema-registry-restarted", Codec.NONE, producer=Producer(7901))
        events: list[tuple[int, Client, bytes, bytes | None]] = [
            (start, first_run, _NOOP_KEY, None),
            (start + rng.randint(5_000, 30 * _MINUTE), first_run, _CONFIG_KEY, _CONFIG_VALUE),
            (first - rng.randint(8, 12) * _DAY, restarted, _NOOP_KEY, None),
        ]
        events += [
            (t, restarted, schema_key(s), schema_value(s))
            for s, t in zip(self.schemas, times, strict=True)
        ]
        gone = self.schema(*_SOFT_DELETED)
        after = max(self.last_use.get(gone.id, 0), times[gone.id - 1])
        deleted = schema_value(gone, deleted=True)  # DELETE /subjects/.../versions/3
        events.append((after + rng.randint(10, 40) * _MINUTE, restarted, schema_key(gone), deleted))
        events.sort(key=lambda e: e[0])
        # The registry's history starts weeks before the data topics' (nothing is written yet).
        topic.clock.now = events[0][0]
        for t, client, key, value in events:
            topic.advance(t)
            topic.send(client, Message(key, value, (), t))
            topic.flush(client)  # KafkaStore.put waits for the ack: a batch a record
