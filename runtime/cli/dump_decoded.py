"""``dump --jsonl`` with decoders: ``--key-decoder`` / ``--value-decoder`` (and kafka-dump-log's
``--*-decoder-class``) and the internal topics' ``--offsets-decoder`` and siblings.

The lines are the canonical ones (``format/jsonform.record_json``) but for what was asked:
``"key"`` / ``"value"`` hold the decoded text instead of base64 (a JSON value itself with
``json``), and an internal topic's record gets ``"decoded": {"key": ..., "value": ...}``, the
JSON kafka-dump-log prints for it (as objects; its error texts as strings). Then, as every
``--jsonl`` line but with ``--canonical``, ``topic``, ``partition``, ``file`` and
``position``. Built in Python, row by row, from the fast path's Arrow batches: the decoders
are Python.
"""

from __future__ import annotations

import json
from typing import Any

import pyarrow as pa

from ..format.jsonform import record_json
from ..messages.kafka4_topics import JSON_DECODERS
from ..model import Header, Record
from .dump_payloads import PayloadText, payload_fields
from .text import DECODERS, Decoder, DumpOptions

__all__ = ["decoded_lines", "json_line"]

_JSON = DECODERS["json"]


def _text(data: bytes | None, decoder: Decoder) -> Any:
    if data is None:
        return None
    if decoder is _JSON:
        try:
            return json.loads(data)
        except (ValueError, UnicodeDecodeError):
            return decoder(data)  # its "<not JSON: ...>"
    return decoder(data)


def _maybe_json(text: str | None) -> Any:
    if text is None:
        return None
    try:
        return json.loads(text)
    except ValueError:
        return text  # kafka-dump-log's "Error at offset ..." and "<DELETE>"


def json_line(record: Record, where: dict[str, Any], options: DumpOptions) -> str:
    """One record's line: canonical, decoded as ``options`` ask, then where it was."""
    line = record_json(record)
    failed = []
    for part, data, decoder, wanted in (
        ("key", record.key, options.key_decoder, options.decode_keys),
        ("value", record.value, options.value_decoder, options.decode_values),
    ):
        if not wanted:
            continue
        if isinstance(decoder, PayloadText):
            error = payload_fields(line, part, data, decoder)
            if error is not None:
                failed.append(error)
        else:
            line[part] = _text(data, decoder)
    if failed:
        line["error"] = "; ".join(failed)
    if options.record_decoder is not None:
        # a decoder whose text is not JSON (--remote-log-metadata-decoder) has a JSON twin
        decode = JSON_DECODERS.get(options.record_decoder, options.record_decoder)
        key, payload = decode(record)
        line["decoded"] = {"key": _maybe_json(key), "value": _maybe_json(payload)}
    line.update(where)
    return json.dumps(line, separators=(",", ":")) + "\n"


def decoded_lines(batch: pa.RecordBatch, options: DumpOptions) -> list[bytes]:
    """The rows of one of ``iter_arrow_batches``' batches (headers and positions included)
    as lines."""
    columns = {name: batch.column(i) for i, name in enumerate(batch.schema.names)}
    micros = columns["timestamp"].cast(pa.int64()).to_pylist()
    keys = columns["key"].to_pylist()
    values = columns["value"].to_pylist()
    offsets = columns["offset"].to_pylist()
    types = columns["timestampType"].to_pylist()
    headers = columns["headers"].to_pylist()
    topics = columns["topic"].to_pylist()
    partitions = columns["partition"].to_pylist()
    located = "position" in columns
    files = columns["file"].to_pylist() if located else None
    positions = columns["position"].to_pylist() if located else None
    out = []
    for i in range(batch.num_rows):
        record = Record(
            offset=offsets[i],
            timestamp=None if micros[i] is None else micros[i] // 1000,
            timestamp_type=types[i],
            key=keys[i],
            value=values[i],
            headers=[Header(h["key"], h["value"]) for h in headers[i] or ()],
            topic=topics[i],
            partition=partitions[i],
        )
        where = {}
        if files is not None and positions is not None:
            where = {
                "topic": topics[i],
                "partition": partitions[i],
                "file": files[i],
                "position": positions[i],
            }
        out.append(json_line(record, where, options).encode("ascii"))
    return out
