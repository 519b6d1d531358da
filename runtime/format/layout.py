"""The byte layout of Kafka's fixed-size parts: the runtime's one import point for it.

Everything here comes from ``generated/layout.py``, which ``scripts/gen_layout.py`` writes from
``schemas/*.ksy`` (``make generate``): offsets are sums of the schemas' field sizes, never
typed. Names, all module-level so that the numba kernels can take them as compile-time
constants:

- ``<PART>_<FIELD>``: a field's offset from byte 0 of its part; ``<PART>_<FIELD>_SIZE``;
- ``<PART>_SIZE``, ``<PART>_FORMAT`` (big-endian, for ``struct``), ``<PART>_FIELDS``
  ((name, offset, size, format character) tuples), ``<PART>_DTYPE`` for file entries read as
  numpy arrays. Parts: ``FRAME_HEADER`` (the 17 bytes every entry starts with), ``V2_HEADER``,
  ``LEGACY_HEADER`` (v0/v1, both magics) and ``LEGACY_V0_FIXED`` / ``LEGACY_V1_FIXED``,
  ``OFFSET_INDEX_ENTRY``, ``TIME_INDEX_ENTRY``, ``TXN_INDEX_ENTRY``, ``SNAPSHOT_HEADER``,
  ``SNAPSHOT_ENTRY``, ``CONTROL_RECORD_KEY``, ``END_TXN_MARKER``;
- ``V2_ATTR_<BIT>_MASK`` / ``_SHIFT`` and ``LEGACY_ATTR_*``: the attribute bits;
- ``<ENUM>_<VALUE>`` and ``<ENUM>`` (value -> name): compression codecs, timestamp types,
  control record types;
- ``LOG_OVERHEAD`` (12), ``MIN_FRAME_LENGTH`` (14), ``V2_MIN_BATCH_LENGTH`` (49),
  ``LEGACY_V0/V1_RECORD_OVERHEAD`` (14 / 22) and ``_ENTRY_MIN_SIZE`` (26 / 34);
- CRC scopes: ``V2_CRC_START`` (21, CRC-32C), ``LEGACY_CRC_START`` (16, CRC-32),
  ``SNAPSHOT_CRC_START`` (6, CRC-32C), each with its ``_ALGORITHM``.

``field_struct`` gives one field's ``struct.Struct``. ``tests/format/test_layout.py`` ties
every constant to the Kaitai debug parser's field positions and to the Construct mirrors.
Import from here, not from ``generated.layout``.
"""

from __future__ import annotations

import struct

from ...generated.layout import *  # noqa: F403
from ...generated.layout import __all__ as _generated_names

__all__ = [*_generated_names, "field_struct"]


def field_struct(
    fields: tuple[tuple[str, int, int, str], ...], first: str, last: str | None = None
) -> struct.Struct:
    """The ``struct.Struct`` of one field of a part (``fields`` is its ``<PART>_FIELDS``), or
    of the fields ``first`` to ``last``, to be read at ``first``'s offset:
    ``field_struct(V2_HEADER_FIELDS, "crc").unpack_from(buf, V2_CRC)``."""
    names = [name for name, _, _, _ in fields]
    start = names.index(first)
    stop = names.index(last) if last is not None else start
    if stop < start:
        raise ValueError(f"{last} comes before {first}")
    chars, at = ">", fields[start][1]
    for _name, offset, size, fmt in fields[start : stop + 1]:
        chars += (f"{offset - at}x" if offset > at else "") + fmt
        at = offset + size
    return struct.Struct(chars)
