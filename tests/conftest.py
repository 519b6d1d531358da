"""Shared fixtures: the real-world corpus (../shared/corpus) and its manifest.

The corpus lives outside the repository. Tests that need it skip when it is absent, so a
clean checkout still passes, and fail when ``CI=true``, where its absence is a broken setup.

Markers (registered in pyproject.toml, ``--strict-markers``): ``spark`` (everything under
``tests/spark``, and any test asking for the session), ``corpus`` (tests that read
../shared/corpus), ``browser``, ``node`` and ``slow`` (set in their modules). ``make check``
leaves out spark, browser and slow.

Any test that asks for the ``corpus_set`` fixture is run once per set of MANIFEST.json;
``valid_corpus_set`` and ``damaged_corpus_set`` run over the sets whose CRCs all hold, or not.
"""

from __future__ import annotations

import json
import os
import struct
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
CORPUS = REPO_ROOT.parent / "shared" / "corpus"
_ABSENT = "<corpus absent>"


@dataclass(frozen=True, slots=True)
class CorpusSet:
    """One entry of MANIFEST.json, with its files resolved."""

    entry: dict[str, Any]
    path: Path
    expected_path: Path

    @property
    def id(self) -> str:
        return self.entry["file"]

    @property
    def crc_valid(self) -> bool:
        return bool(self.entry["crc_valid"])

    def data(self) -> bytes:
        return self.path.read_bytes()

    @property
    def is_log(self) -> bool:
        """Whether its batches hold offsets that increase, as a segment's must
        (``read/segment_offsets.py``): sets whose batches start again at 0 are client
        requests, not logs, and a segment's name would make their offsets damage."""
        data, pos, previous = self.data(), 0, -1
        while len(data) - pos > 17:
            offset, length = struct.unpack_from(">qi", data, pos)
            if length < 14 or pos + 12 + length > len(data):
                break
            v2 = data[pos + 16] == 2
            last = offset + struct.unpack_from(">i", data, pos + 23)[0] if v2 else offset
            first = offset if v2 or data[pos + 17] & 7 == 0 else last
            if first <= previous:
                return False
            previous, pos = last, pos + 12 + length
        return True

    def expected(self) -> list[dict[str, Any]]:
        """The records the set holds, in the corpus's canonical form."""
        return load_jsonl(self.expected_path)


def load_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def require_corpus() -> Path:
    """The corpus directory; skips the calling test when absent (fails it when CI=true)."""
    if CORPUS.is_dir():
        return CORPUS
    if os.environ.get("CI") == "true":
        pytest.fail(f"corpus not found at {CORPUS} (required when CI=true)")
    pytest.skip(f"corpus not found at {CORPUS}")


@cache
def load_manifest(corpus: Path = CORPUS) -> tuple[CorpusSet, ...]:
    """Every set the manifest lists, in its order."""
    entries = json.loads((corpus / "MANIFEST.json").read_text())
    return tuple(
        CorpusSet(entry, corpus / entry["file"], corpus / entry["expected"]) for entry in entries
    )


def corpus_set_ids(crc_valid: bool | None = None) -> list[str]:
    """Parametrization ids, computed at collection time (a placeholder when absent)."""
    if not (CORPUS / "MANIFEST.json").is_file():
        return [_ABSENT]
    return [s.id for s in load_manifest() if crc_valid is None or s.crc_valid == crc_valid]


TESTS = Path(__file__).resolve().parent
_CORPUS_FIXTURES = {
    "corpus_set",
    "valid_corpus_set",
    "damaged_corpus_set",
    "corpus_dir",
    "manifest",
}
#: Names a test's own code uses when it opens the corpus without a fixture.
_CORPUS_NAMES = {"CORPUS", "require_corpus", "corpus_dir", "_corpus", "load_manifest"}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        folder = Path(str(item.path)).relative_to(TESTS).parts[0]
        if folder == "spark" or "spark" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.spark)
        code = getattr(getattr(item, "function", None), "__code__", None)
        names = set(code.co_names) if code is not None else set()
        if _CORPUS_FIXTURES & set(getattr(item, "fixturenames", ())) or _CORPUS_NAMES & names:
            item.add_marker(pytest.mark.corpus)
    # A process holds a classic or a Connect session, not both (pyspark's builder refuses the
    # mix): the Connect tests run last and end the classic session the others share.
    items.sort(key=lambda item: item.path.name == "test_spark_connect.py")


_SET_FIXTURES = {"corpus_set": None, "valid_corpus_set": True, "damaged_corpus_set": False}


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    for name, crc_valid in _SET_FIXTURES.items():
        if name in metafunc.fixturenames:
            metafunc.parametrize(name, corpus_set_ids(crc_valid), indirect=True)


def _corpus_set(request: pytest.FixtureRequest) -> CorpusSet:
    corpus = require_corpus()
    if request.param == _ABSENT:
        pytest.fail(f"corpus appeared at {corpus} after collection; collect again")
    by_id = {s.id: s for s in load_manifest(corpus)}
    return by_id[request.param]


@pytest.fixture
def corpus_set(request: pytest.FixtureRequest) -> CorpusSet:
    """One manifest set (the test is parametrized over all of them)."""
    return _corpus_set(request)


@pytest.fixture
def valid_corpus_set(request: pytest.FixtureRequest) -> CorpusSet:
    """One set whose CRCs all hold (parametrized over all of them)."""
    return _corpus_set(request)


@pytest.fixture
def damaged_corpus_set(request: pytest.FixtureRequest) -> CorpusSet:
    """One set with ``crc_valid: false`` (parametrized over all of them)."""
    return _corpus_set(request)


@pytest.fixture(scope="session")
def corpus_dir() -> Path:
    return require_corpus()


@pytest.fixture(scope="session")
def manifest(corpus_dir: Path) -> tuple[CorpusSet, ...]:
    return load_manifest(corpus_dir)


@pytest.fixture(scope="session")
def spark():
    """One local SparkSession for the whole test session (starting one takes seconds)."""
    from kafka_format.spark_udfs import local_session

    session = local_session("kafka-format-tests", conf={"spark.ui.showConsoleProgress": "false"})
    yield session
    session.stop()


# --- a partition of transactions (tests/log/test_transactions_report.py, tests/cli) ----------

#: The writer's clock starts here (CreateTime, ms).
TXN_T0 = 1_700_000_000_000
_MINUTE = 60_000


class _Clock:
    """The writer's clock: each call one second later, unless moved on by hand."""

    def __init__(self) -> None:
        self.now = TXN_T0

    def __call__(self) -> int:
        self.now += 1000
        return self.now


def _write_transactions(log_dir: Path) -> dict[str, int]:
    """Two segments of ``orders-0`` written by the project's writer; returns the offsets the
    checks need (and ``t0``, the clock's start).

    offsets  producer  what                 timestamp
    0..2     A         data (3 records)     T0+1s   A's first transaction...
    3..4     A         data (2)             T0+2s
    5        A         COMMIT               T0+3s   ...committed: 2s, 2 batches, 5 records
    6        B         ABORT                T0+4s   empty: B sent nothing here
    7..8     B         data (2)             T0+5s
    ---- roll ----
    9        B         ABORT                T0+6s   aborted, across the roll: 1s
    10       C         data (1)             T0+7s+19m   open, 1m02s old: not hanging
    11       A         data (1)             T0+7s       open, 20m02s old: HANGING
    12       (plain)   data (1)             T0+9s+20m   the log's last timestamp
    """
    from kafka_format.runtime.write.writer import Message, PartitionWriter, Producer

    a, b, c = Producer(1000, 0), Producer(2000, 3), Producer(3000, 1)

    def messages(n: int) -> list[Message]:
        return [Message(b"k%d" % i, b"v" * (i + 1)) for i in range(n)]

    clock = _Clock()
    w = PartitionWriter(log_dir, "orders", 0, clock=clock)
    w.append(messages(3), producer=a, transactional=True)
    w.append(messages(2), producer=a, transactional=True)
    offsets = {"t0": TXN_T0, "commit_a": w.commit(a)}
    offsets["empty_b"] = w.abort(b)
    w.append(messages(2), producer=b, transactional=True)
    w.roll()
    offsets["abort_b"] = w.abort(b)
    clock.now += 19 * _MINUTE  # C starts 19 minutes after A's first transaction
    offsets["open_c"] = w.append(messages(1), producer=c, transactional=True).base_offset
    clock.now -= 19 * _MINUTE + 1000  # A's batch bears an older CreateTime: T0 + 7s
    offsets["open_a"] = w.append(messages(1), producer=a, transactional=True).base_offset
    clock.now = TXN_T0 + 8000 + 20 * _MINUTE
    w.append(messages(1))
    w.close()
    offsets["end"] = w.next_offset
    return offsets


def _damage_segments(paths: list[Path], picks, cut: bool) -> None:
    """Flip a byte of the segments ``picks`` names (``(which, where)`` pairs, each taken
    modulo the segments' count and the file's size); with ``cut``, cut 7 bytes off the end of
    each segment picked too (a truncated tail)."""
    for which, at in picks:
        path = paths[which % len(paths)]
        data = bytearray(path.read_bytes())
        data[at % len(data)] ^= 0x5A
        if cut:
            data = data[: len(data) - 7]
        path.write_bytes(bytes(data))


@pytest.fixture(scope="session")
def damage_segments():
    """``_damage_segments``, for the hypothesis tests of damaged directories."""
    return _damage_segments


@pytest.fixture(scope="session")
def write_transactions():
    """``_write_transactions``: committed, aborted, empty, open and hanging transactions."""
    return _write_transactions


# --- payloads in Confluent's wire format, with the registry's own store -----------------------


ORDERS_V1 = '{"type":"record","name":"Order","fields":[{"name":"id","type":"long"}]}'
ORDERS_V2 = (
    '{"type":"record","name":"Order","fields":[{"name":"id","type":"long"},'
    '{"name":"note","type":["null","string"],"default":null},'
    '{"name":"state","type":{"type":"enum","name":"State","symbols":["NEW","PAID"]},'
    '"default":"NEW"}]}'
)
CLICKS = '{"type":"object","properties":{"page":{"type":"string"},"n":{"type":"integer"}}}'


@pytest.fixture(scope="session")
def confluent_log_dir(tmp_path_factory):
    """A log dir whose topics Confluent's own serializers wrote (its mock registry assigning
    the ids), beside a ``_schemas-0`` partition holding those registrations as the
    registry's ``KafkaStore`` writes them; with the values Confluent's deserializers read
    back (the oracle), a record no serializer framed and one with an id no registry gave."""
    pytest.importorskip("confluent_kafka.schema_registry")
    import json
    from types import SimpleNamespace

    from confluent_kafka.schema_registry._sync.mock_schema_registry_client import (
        MockSchemaRegistryClient,
    )
    from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer
    from confluent_kafka.schema_registry.json_schema import JSONDeserializer, JSONSerializer
    from confluent_kafka.serialization import MessageField, SerializationContext

    from kafka_format.runtime.write.writer import Message, PartitionWriter, Producer

    log_dir = tmp_path_factory.mktemp("confluent") / "logs"
    client = MockSchemaRegistryClient({"url": "mock://conftest"})
    orders = SerializationContext("orders", MessageField.VALUE)
    clicks = SerializationContext("clicks", MessageField.VALUE)
    v1, v2 = AvroSerializer(client, ORDERS_V1), AvroSerializer(client, ORDERS_V2)
    values = {
        "orders": [
            v1({"id": 1}, orders),
            v1({"id": 2}, orders),
            b'{"id": 3}',  # a plain producer's JSON: not framed
            v2({"id": 4, "note": "gift", "state": "PAID"}, orders),
            b"\x00\x00\x00\x00\x63\x02",  # framed with id 99, which no registry gave
            None,  # a tombstone
            v2({"id": 5, "note": None, "state": "NEW"}, orders),
        ],
        "clicks": [
            JSONSerializer(CLICKS, client)({"page": "/a", "n": 1}, clicks),
            JSONSerializer(CLICKS, client)({"page": "/b", "n": 2}, clicks),
        ],
    }
    avro, jsonschema = AvroDeserializer(client), JSONDeserializer(CLICKS)
    expected = {}
    for topic, payloads in values.items():
        ctx = orders if topic == "orders" else clicks
        read = avro if topic == "orders" else jsonschema
        expected[topic] = [
            read(v, ctx) if v is not None and v[:1] == b"\x00" and v[4] != 0x63 else None
            for v in payloads
        ]
        with PartitionWriter(log_dir, topic, 0) as writer:
            for i, value in enumerate(payloads):
                writer.append([Message(b"k%d" % i, value, timestamp=1_700_000_000_000 + i)])
    store = []
    for subject in client.get_subjects():
        for version in client.get_versions(subject):
            registered = client.get_version(subject, version)
            value = {"subject": subject, "version": version, "id": registered.schema_id}
            if registered.schema.schema_type != "AVRO":
                value["schemaType"] = registered.schema.schema_type
            value["schema"] = registered.schema.schema_str
            value["deleted"] = False
            key = {"keytype": "SCHEMA", "subject": subject, "version": version, "magic": 1}
            store.append((key, value))
    store.sort(key=lambda kv: kv[1]["id"])

    def jackson(obj):
        return None if obj is None else json.dumps(obj, separators=(",", ":")).encode()

    producer = Producer(1000, 0)  # the registry's: idempotent, one record a batch
    with PartitionWriter(log_dir, "_schemas", 0) as writer:
        for key, value in [({"keytype": "NOOP", "magic": 0}, None), *store]:
            writer.append([Message(jackson(key), jackson(value))], producer=producer)
    ids = {s: client.get_latest_version(s).schema_id for s in client.get_subjects()}
    return SimpleNamespace(log_dir=log_dir, values=values, expected=expected, ids=ids)
