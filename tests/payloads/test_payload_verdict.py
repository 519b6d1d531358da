"""One verdict for payloads: ``dump --jsonl --value-decoder schema-registry``, the runtime's
``payload_decoder`` and ``decode_payloads(output="json")`` give every record of a generated
log dir (Avro, Protobuf with references, JSON Schema, evolution, a soft-deleted version,
unframed records) the same decoded value, or all three say it does not decode; and
``stats --schemas`` counts what they decode.
"""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import pyarrow.compute as pc
import pytest

from kafka_format import decode_payloads, open_schema_source, payload_decoder, read_table
from kafka_format.runtime.cli import main
from kafka_format.runtime.write.generate import generate_log_dir

TOPICS = ("payments", "customers", "pageviews")


@pytest.fixture(scope="module")
def generated(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("payload-verdict") / "logs"
    generate_log_dir(root, seed=11, records=120)
    return root


def _cli(*argv: str) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        assert main(list(argv)) == 0
    return out.getvalue()


@pytest.mark.parametrize("topic", TOPICS)
def test_every_path_decodes_a_record_alike(generated, topic):
    source = open_schema_source(generated)
    decoder = payload_decoder("schema-registry", source)
    for part in sorted(generated.glob(f"{topic}-*")):
        lines = [json.loads(line) for line in _cli(
            "dump", "--jsonl", "-q", "--value-decoder", "schema-registry", str(part)
        ).splitlines()]  # fmt: skip
        table = read_table(str(part))
        as_json = decode_payloads(
            table, value_format="schema-registry", schema_registry=source, output="json"
        ).to_pylist()
        assert [line["offset"] for line in lines] == [row["offset"] for row in as_json]
        assert lines, part
        for line, row, raw in zip(lines, as_json, table.column("value").to_pylist(), strict=True):
            direct = decoder.decode(raw)
            if direct.error is None:
                assert "error" not in line, line
                assert line["value"] == direct.value
                assert json.loads(row["value"]) == direct.value
                assert row["_payload_error"] is None
            else:
                assert line["error"] == f"value: {direct.error}"
                assert row["value"] is None and row["_payload_error"] is not None
            assert line["valueSchemaId"] == direct.schema_id == row["value_schema_id"]


def test_stats_counts_what_the_decoders_decode(generated):
    source = open_schema_source(generated)
    decoder = payload_decoder("schema-registry", source)
    out = json.loads(_cli("stats", "--json", "--schemas", "-q", str(generated)))
    parts = {(p["topic"], p["part"]): p for p in out["schemas"]}
    everything = read_table(str(generated))
    for topic in TOPICS:
        mine = everything.filter(pc.equal(everything.column("topic"), topic))
        values = mine.column("value").to_pylist()
        decoded = [decoder.decode(v) for v in values]
        summary = parts[(topic, "value")]
        assert summary["records"] == len(values)
        assert summary["unframed"] == sum(1 for d in decoded if d.error and d.schema_id is None)
        per_id = {s["schemaId"]: s for s in summary["schemas"]}
        for schema_id in {d.schema_id for d in decoded if d.schema_id is not None}:
            framed = [d for d in decoded if d.schema_id == schema_id]
            assert per_id[schema_id]["records"] == len(framed)
            assert per_id[schema_id]["undecodable"] == sum(1 for d in framed if d.error)
