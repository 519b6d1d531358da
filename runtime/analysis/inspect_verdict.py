"""The verdict ``inspect`` lists first for a frame: the one every reader gives.

``inspect`` shows the generated (debug) parser's tree, and where that parser stopped is worded
in its own terms (``/types/body/seq/7: at pos 56: validation failed ...``). The operator's
verdict is the readers' (``format.batches.read_batch``: Kafka's words, the byte where the
damage lies), so that is put first in place of the parser's account; the tree still marks the
fields where the parse stopped.
"""

from __future__ import annotations

from typing import Any

from ..errors import CrcMismatchError, KafkaFormatError
from ..format.batches import ReadOptions, read_batch
from ..format.framing import Frame

#: Problems ``inspect`` words from the debug parser, superseded by the readers' verdict.
_PARSER_ACCOUNTS = ("parse stopped", "are not described by the schema")


def readers_verdict(view: Any, frame: bytes, limit: int) -> list[Exception]:
    """``view.problems`` with the readers' verdict on ``frame`` first, and the parser's own
    accounts of the same damage left out (a ``BatchView``: file, position, base offset,
    magic, problems)."""
    if view.magic not in (0, 1, 2):
        return view.problems
    framed = Frame(view.position, view.base_offset, view.magic, memoryview(frame))
    verdicts: list[Exception] = []
    for crc in (True, False):
        # Past a CRC that does not hold, what the record decoders say of the same bytes
        # (the tree shows them parsed as far as they go).
        try:
            read_batch(framed, ReadOptions(crc, max_decompressed_bytes=limit), file=view.file)
        except CrcMismatchError as exc:
            verdicts.append(exc)
            continue
        except KafkaFormatError as exc:
            verdicts.append(exc)
        break
    if not verdicts:
        return view.problems
    seen = {str(v) for v in verdicts}
    rest = [
        p
        for p in view.problems
        if str(p) not in seen and not any(a in getattr(p, "reason", "") for a in _PARSER_ACCOUNTS)
    ]
    return [*verdicts, *rest]
