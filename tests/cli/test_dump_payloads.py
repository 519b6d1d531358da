"""``dump --key-decoder/--value-decoder avro|protobuf|json-schema|schema-registry`` and
``--schema-registry`` (runtime/cli/dump_payloads.py), and ``stats --schemas``.

The payloads are written by Confluent's own serializers, and the values expected are what
Confluent's own deserializers read back (``confluent_log_dir`` in tests/conftest.py); the
schemas come from the ``_schemas`` partition beside the topics, as the registry stores them.
"""

from __future__ import annotations

import base64
import contextlib
import io
import json

import pytest

from kafka_format.runtime.cli import main


def _cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(list(argv))
    return status, out.getvalue(), err.getvalue()


def _lines(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines()]


@pytest.mark.parametrize("kind", ["avro", "schema-registry"])
def test_jsonl_values_are_what_confluents_deserializer_reads(confluent_log_dir, kind):
    logs = confluent_log_dir
    status, out, err = _cli(
        "dump", "--jsonl", "--value-decoder", kind, str(logs.log_dir / "orders-0")
    )
    assert status == 0, err
    assert "schemas: _schemas-0" in err  # which source, said once
    lines = _lines(out)
    raw = logs.values["orders"]
    assert [line["offset"] for line in lines] == list(range(len(raw)))
    for line, value, expected in zip(lines, raw, logs.expected["orders"], strict=True):
        if expected is not None:
            assert line["value"] == expected
            assert "error" not in line
            assert line["valueSchemaId"] == int.from_bytes(value[1:5], "big")
        elif value is None:
            assert line["value"] is None and "error" not in line
        else:
            # not decoded: the bytes kept as base64, and why in one line
            assert line["value"] == base64.b64encode(value).decode()
            assert line["error"].startswith("value: ")
    not_framed, unknown = lines[2], lines[4]
    assert "magic byte 123" in not_framed["error"] and not_framed["valueSchemaId"] is None
    assert "99" in unknown["error"] and unknown["valueSchemaId"] == 99
    # keys were not asked for: base64 as ever
    assert lines[0]["key"] == base64.b64encode(b"k0").decode()


def test_json_schema_values(confluent_log_dir):
    logs = confluent_log_dir
    status, out, _ = _cli(
        "dump", "--jsonl", "--value-decoder", "json-schema", str(logs.log_dir / "clicks-0")
    )
    assert status == 0
    assert [line["value"] for line in _lines(out)] == logs.expected["clicks"]


def test_a_decoder_of_another_format_says_so(confluent_log_dir):
    status, out, _ = _cli(
        "dump", "--jsonl", "--value-decoder", "avro", str(confluent_log_dir.log_dir / "clicks-0")
    )
    assert status == 0
    lines = _lines(out)
    assert all("error" in line for line in lines)
    assert all(line["valueSchemaId"] == confluent_log_dir.ids["clicks-value"] for line in lines)


def test_text_dump_prints_the_json_after_payload(confluent_log_dir):
    logs = confluent_log_dir
    status, out, _ = _cli(
        "dump",
        "--deep-iteration",
        "--value-decoder",
        "schema-registry",
        "--schema-registry",
        str(logs.log_dir),
        *sorted(str(p) for p in (logs.log_dir / "orders-0").glob("*.log")),
    )
    assert status == 0
    payloads = [line.split(" payload: ", 1)[1] for line in out.splitlines() if " payload: " in line]
    decoded = [json.loads(p) for p in payloads if not p.startswith("<")]
    assert decoded == [e for e in logs.expected["orders"] if e is not None]
    failed = [p for p in payloads if p.startswith("<")]
    assert len(failed) == 2 and all(p.startswith("<not schema-registry: ") for p in failed)


def test_an_export_file_and_a_missing_store(confluent_log_dir, tmp_path):
    logs = confluent_log_dir
    # no _schemas beside a copy of the topic: one line, exit 2
    lone = tmp_path / "logs"
    lone.mkdir()
    (lone / "orders-0").symlink_to(logs.log_dir / "orders-0", target_is_directory=True)
    status, _, err = _cli("dump", "--jsonl", "--value-decoder", "avro", str(lone / "orders-0"))
    assert status == 2
    assert err.count("\n") == 1 and "no _schemas partition in" in err and str(lone) in err
    # the registry's export, as GET /schemas?deleted=true answers
    from kafka_format.runtime.payloads.registry import open_schema_source

    store = open_schema_source(logs.log_dir)
    export = [
        {"subject": s.subject, "version": s.version, "id": s.id, "schema": s.schema}
        | ({"schemaType": s.schema_type} if s.schema_type != "AVRO" else {})
        for subject in store.subjects()
        for s in store.versions(subject)
    ]
    path = tmp_path / "export.json"
    path.write_text(json.dumps(export))
    status, out, _ = _cli(
        "dump", "--jsonl", "--value-decoder", "avro", "--schema-registry", str(path),
        str(lone / "orders-0"),
    )  # fmt: skip
    assert status == 0
    got = [line["value"] for line in _lines(out) if "error" not in line]
    assert got[:2] == logs.expected["orders"][:2]


def test_schema_registry_without_a_payload_decoder_is_a_usage_error(confluent_log_dir):
    status, _, err = _cli(
        "dump", "--jsonl", "--schema-registry", str(confluent_log_dir.log_dir),
        str(confluent_log_dir.log_dir / "orders-0"),
    )  # fmt: skip
    assert status == 2 and "--schema-registry is for the payload decoders" in err


def test_stats_schemas(confluent_log_dir):
    logs = confluent_log_dir
    status, out, err = _cli("stats", "--json", "--schemas", "-q", str(logs.log_dir))
    assert status == 0, err
    parts = {(p["topic"], p["part"]): p for p in json.loads(out)["schemas"]}
    assert set(parts) == {("orders", "value"), ("clicks", "value")}  # keys are plain text
    orders = parts[("orders", "value")]
    assert (orders["records"], orders["null"], orders["unframed"], orders["unknownId"]) == (
        7, 1, 1, 1,
    )  # fmt: skip
    by_id = {s["schemaId"]: s for s in orders["schemas"]}
    v1, v2 = logs.ids["orders-value"] - 1, logs.ids["orders-value"]
    assert by_id[v1]["version"] == 1 and by_id[v1]["records"] == 2
    assert (by_id[v1]["first"]["offset"], by_id[v1]["last"]["offset"]) == (0, 1)
    assert by_id[v2]["version"] == 2 and by_id[v2]["records"] == 2
    assert (by_id[v2]["first"]["offset"], by_id[v2]["last"]["offset"]) == (3, 6)
    assert by_id[99]["subject"] is None and by_id[99]["records"] == 1
    assert all(s["undecodable"] == 0 for s in orders["schemas"])
    status, out, _ = _cli("stats", "--schemas", "-q", str(logs.log_dir))
    assert status == 0
    table = out[out.index("Schema history") :]
    assert "orders-value" in table and "(not framed)" in table and "(unknown id)" in table
