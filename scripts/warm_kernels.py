"""Compile the numba kernels into their on-disk cache (``make setup``), rather than in a
user's first read: seconds once per change of the kernels, under a second when warm.

Every kernel is reached: a v2 batch, v2 and v1 LZ4 batches (the planning kernels of
``kernels.payloads``, which snappy shares), and a bytes and a bytearray source, as numba types
their buffers apart.
"""

from kafka_format import read_table
from kafka_format.runtime.format.codecs import compress
from kafka_format.schemas.legacy_message import build_legacy_message
from kafka_format.schemas.record import build_records
from kafka_format.schemas.record_batch import build_record_batch

records = [{"key": b"k", "value": b"v", "headers": [("h", b"x")]}]
inner = build_legacy_message(offset=0, value=b"v", magic=1, timestamp=0)
data = (
    build_record_batch(records)
    + build_record_batch(
        compressed_payload=compress(3, build_records(records), magic=2),
        records_count=1,
        base_offset=1,
        codec=3,
    )
    + build_legacy_message(offset=2, value=compress(3, inner, magic=1), magic=1, codec=3)
)
for source in (data, bytearray(data)):
    assert read_table(source, include_headers=True).num_rows == 3

# dump --jsonl's kernel (one signature: every input read-only).
from kafka_format.runtime.read.jsonlines import JsonLines  # noqa: E402

with JsonLines() as lines:
    for batch in read_table(data, include_headers=True).to_batches():
        assert b"".join(lines.encode(batch)).count(b"\n") == 3
