"""The records of a v2 batch, back to back (mirrors record_list.ksy).

Layout::

    RecordList(num_records) =>
      records   Record[num_records]   (record.py)

An uncompressed batch holds them in place (record_batch.py types them there); a compressed
batch holds them compressed, so after decompressing, parse the result with
``RecordList.parse(data, num_records=batch.records_count)``.
"""

from __future__ import annotations

from construct import Struct, this

from kafka_format.schemas.record import Record

RecordList = Struct(
    "records" / Record[this._params.num_records],
)
