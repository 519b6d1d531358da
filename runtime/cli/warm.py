"""``kafka-format warm``: compile every decoding kernel into numba's on-disk cache now.

The wheel ships the kernels compiled for the machine that built it
(``scripts/kernel_cache.py``); installed on another CPU type or beside another numba, the first
command compiles them (13-31 s, announced by one line on stderr). Build images and cluster
nodes run ``warm`` once instead, with ``NUMBA_CACHE_DIR`` pointing where the cache should live
if the package's own directory is read-only.
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import TextIO

EPILOG = """\
examples:
  kafka-format warm                                    # once after pip install
  NUMBA_CACHE_DIR=/opt/numba-cache kafka-format warm    # in a Dockerfile; set it at run time too
"""


def register(sub) -> None:
    """Add ``warm`` to the command line."""
    w = sub.add_parser(
        "warm",
        help="compile the decoding kernels into numba's cache now (for images and clusters)",
        description="Compile and cache every numba kernel the readers use, so that no later "
        "command spends its first half minute compiling. Honours NUMBA_CACHE_DIR; prints "
        "where the cache is.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=EPILOG,
    )
    w.set_defaults(run=_run)


def warm_kernels() -> None:
    """Reach every kernel: a v2 batch, v2 and v1 LZ4 and snappy batches (the planning kernels
    of ``kernels.payloads``, LZ4F), a v2 gzip batch (``kernels.inflate``, which
    zstd shares), a transaction marker (``kernels.markers``), a bytes and a bytearray source
    (numba types their buffers apart), and ``dump --jsonl``'s writer."""
    from kafka_format.schemas.legacy_message import build_legacy_message
    from kafka_format.schemas.record import build_records
    from kafka_format.schemas.record_batch import build_record_batch

    from ..format.codecs import compress
    from ..read.columnar import read_table
    from ..read.jsonlines import JsonLines

    records = [{"key": b"k", "value": b"v", "headers": [("h", b"x")]}]
    inner = build_legacy_message(offset=0, value=b"v", magic=1, timestamp=0)

    def v2(codec: int, offset: int) -> bytes:
        payload = compress(codec, build_records(records), magic=2)
        return build_record_batch(
            compressed_payload=payload, records_count=1, base_offset=offset, codec=codec
        )

    def v1(codec: int, offset: int) -> bytes:
        value = compress(codec, inner, magic=1)
        return build_legacy_message(offset=offset, value=value, magic=1, codec=codec)

    data = (
        build_record_batch(records)
        # LZ4 (small frames take LZ4F, kernels.inflate, where it is found); snappy: the record
        # decoder's own decompression, planned by kernels.payloads; gzip: kernels.inflate
        + v2(3, 1)
        + v1(3, 2)
        + v2(2, 3)
        + v1(2, 4)
        + v2(1, 5)
        # a transaction marker (kernels.markers)
        + build_record_batch(
            [{"key": b"\0\0\0\1", "value": b"\0\0\0\0\0\0"}],
            base_offset=6,
            producer_id=1,
            producer_epoch=0,
            is_transactional=True,
            is_control=True,
        )
    )
    for source in (data, bytearray(data)):
        if read_table(source, include_headers=True).num_rows != 6:
            raise RuntimeError("warming the kernels read the wrong number of records")
    with JsonLines() as lines:
        for batch in read_table(data, include_headers=True).to_batches():
            if b"".join(lines.encode(batch)).count(b"\n") != 6:
                raise RuntimeError("warming the kernels wrote the wrong number of lines")


def _run(args: argparse.Namespace, out: TextIO | None = None) -> int:
    from ..kernels.compile_notice import cache_dirs, cold_kernels, kernels

    out = out or sys.stdout
    total = len(kernels())
    cold = cold_kernels()
    started = time.monotonic()
    warm_kernels()
    seconds = time.monotonic() - started
    where = ", ".join(str(d) for d in cache_dirs())
    still = cold_kernels()
    if still:
        out.write(f"kafka-format warm: {len(still)} kernel(s) could not be cached in {where}\n")
        return 1
    if cold:
        out.write(f"compiled {len(cold)} of {total} kernels in {seconds:.1f} s; cache: {where}\n")
    else:
        out.write(f"all {total} kernels were cached already; cache: {where}\n")
    return 0
