"""``kafka-format inspect``: one batch as an annotated hex dump, in the terminal or a web page.

The batch is found by frame headers only (offset, length, magic), over an mmap of the file,
so picking a batch near the end of a multi-GB segment reads a few bytes per batch before it.
Only the chosen batch is copied and parsed, with the Kaitai debug build (see analysis.inspect).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from rich.console import Console

from ..analysis.inspect import BatchView, inspect_frame, render_html, render_terminal
from ..errors import CorruptBatchError, KafkaFormatError
from ..format import layout
from ..format.codecs import DEFAULT_MAX_BYTES
from ..format.framing import Damage, Frame, iter_frames, judge
from ..model import TruncatedTail
from ..read.sources import is_stream_path, resolve, spooled
from .args import UsageError

_LAST_OFFSET_DELTA = layout.field_struct(layout.V2_HEADER_FIELDS, "last_offset_delta")
_LENGTH = layout.field_struct(layout.FRAME_HEADER_FIELDS, "length")

EXAMPLES = """\
examples:
  kafka-format inspect 00000000000000000000.log
      the first batch: hex dump coloured by field, then every field with its byte range
  kafka-format inspect 00000000000000000000.log --offset 1234
      the batch holding offset 1234
  kafka-format inspect 00000000000000000000.log --position 4096 --max-bytes 0
      the batch starting at byte 4096 (as `dump` prints `position:`), every byte shown
  kafka-format inspect segment.log --offset 1234 --html batch.html
      a self-contained page: click a field to highlight its bytes, click a byte to find
      its field; compressed batches also show their decompressed records
  kafka-format inspect segment.log --offset 1234 | grep crc
      piped or redirected: plain text, no colour, values never wrapped (--color always
      keeps the colours)

  cat 00000000000000000000.log | kafka-format inspect - --offset 1234
      standard input (or a FIFO): read once into a temporary file in $TMPDIR, then as a file

Exit status: 0 when the batch parses and its CRC holds; 1 when anything is wrong with it
(still shown as far as it parses) or no batch matches, with one line per problem on stderr
(error: FILE @POSITION: ...); 2 for bad arguments (a directory); the same when stdout is
closed early (| head).
"""


def find_frame(
    buf: memoryview,
    *,
    file: str,
    offset: int | None = None,
    position: int | None = None,
) -> Frame:
    """The frame at ``position``, the one holding ``offset``, or else the first one."""
    if position is not None:
        return _frame_at(buf, file=file, position=position)
    tails: list[TruncatedTail] = []
    previous_last: int | None = None
    first: int | None = None
    for frame in iter_frames(buf, file=file, tails=tails):
        if offset is None:
            return frame
        low, high = _offset_range(frame, previous_last)
        if first is None:
            first = frame.base_offset
        if (low is None or low <= offset) and offset <= high:
            return frame
        previous_last = high
    if offset is None or previous_last is None:
        reason = "no complete batch in the file"
        if tails:
            reason += f" ({tails[0].size} bytes of a partial batch)"
        raise KafkaFormatError(reason, file=file, position=0)
    raise KafkaFormatError(
        f"offset {offset} not found: the batches hold offsets {first}..{previous_last}",
        file=file,
    )


def _offset_range(frame: Frame, previous_last: int | None) -> tuple[int | None, int]:
    """First and last offset a frame can hold, from its header alone (None: not known)."""
    data = frame.data
    if frame.magic >= 2:
        (delta,) = _LAST_OFFSET_DELTA.unpack_from(data, layout.V2_LAST_OFFSET_DELTA)
        return frame.base_offset, frame.base_offset + delta
    at = layout.LEGACY_ATTRIBUTES
    compressed = frame.size > at and data[at] & layout.LEGACY_ATTR_COMPRESSION_MASK
    if not compressed:
        return frame.base_offset, frame.base_offset
    # A legacy wrapper carries the offset of its last inner message; the first inner offset
    # is only known after decompression, so it is the one after the previous batch's last.
    low = previous_last + 1 if previous_last is not None else None
    return low, frame.base_offset


def _frame_at(buf: memoryview, *, file: str, position: int) -> Frame:
    size = len(buf)
    if position >= size:
        raise KafkaFormatError(
            f"no batch at position {position}: the file has {size} bytes", file=file
        )
    verdict = judge(buf, position, size, file)  # the walker's verdict, as every reader's
    if isinstance(verdict, Frame):
        return verdict
    if isinstance(verdict, Damage):
        raise verdict.error(file)
    left = size - position
    claimed = ""
    if left >= layout.LOG_OVERHEAD:
        (length,) = _LENGTH.unpack_from(buf, position + layout.FRAME_LENGTH)
        claimed = f", the batch there claims {layout.LOG_OVERHEAD + length}"
    raise CorruptBatchError(
        f"no complete batch at this position: {left} bytes left{claimed}",
        file=file,
        position=position,
    )


def inspect_file(
    path: str,
    *,
    offset: int | None = None,
    position: int | None = None,
    max_decompressed_bytes: int = DEFAULT_MAX_BYTES,
) -> BatchView:
    """Find one batch of a file and build its field tree. A pipe, a FIFO or ``/dev/stdin``
    is read once into a temporary file first: the batch is found by its position in the
    bytes, and damage is judged with the bytes after it, as in a file."""
    if Path(path).is_dir():
        raise UsageError("inspect reads one file, not a directory", file=path)
    if is_stream_path(path):
        with spooled(path) as copy:
            return _inspect(str(copy), path, offset, position, max_decompressed_bytes)
    return _inspect(path, None, offset, position, max_decompressed_bytes)


def _inspect(
    path: str,
    name: str | None,
    offset: int | None,
    position: int | None,
    max_decompressed_bytes: int,
) -> BatchView:
    """:func:`inspect_file` of ``path``, which findings call ``name`` (default: its own)."""
    (log,) = resolve(path)
    name = name or log.name
    with log.open() as buf:
        if not isinstance(buf, memoryview):  # pragma: no cover - regular files are mapped
            raise KafkaFormatError("cannot map the file", file=name)
        frame = find_frame(buf, file=name, offset=offset, position=position)
        # One batch is copied out so that the map can close before the slow part.
        data = bytes(frame.data)
        where = frame.position
        frame.data.release()
        del frame
    return inspect_frame(
        data, position=where, file=name, max_decompressed_bytes=max_decompressed_bytes
    )


#: Piped: the width of the rule above each hex dump; values are never wrapped.
PIPE_RULE_WIDTH = 80
UNWRAPPED = 1 << 30


class _PipeConsole(Console):
    """As wide as any value (the field block wraps values at the console's width), with a
    rule of a readable width."""

    def rule(self, title: Any = "", *, characters: str = "─", **_: Any) -> None:
        text = title.plain if hasattr(title, "plain") else str(title)
        self.print(f"{text} {characters * max(PIPE_RULE_WIDTH - len(text) - 1, 3)}")


def _isatty(stream) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError, OSError):
        return False


def _non_negative(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be >= 0, got {value}")
    return value


def run(args: argparse.Namespace) -> int:
    view = inspect_file(
        args.file,
        offset=args.offset,
        position=args.position,
        max_decompressed_bytes=args.max_decompressed_bytes,
    )
    if args.html:
        Path(args.html).write_text(render_html(view, max_bytes=args.max_bytes), "utf-8")
        print(f"wrote {args.html}: {view.summary}")
    else:
        force = {"always": True, "never": False}.get(args.color)
        piped = not _isatty(sys.stdout)
        if piped and force is None:
            # a pipe or a file: plain text, every line whole (no wrapping at 80 columns in
            # the middle of a number), for grep and diff
            console = _PipeConsole(
                file=sys.stdout, width=UNWRAPPED, no_color=True, force_terminal=False,
                highlight=False, soft_wrap=True,
            )  # fmt: skip
            render_terminal(view, console, max_bytes=args.max_bytes, show_problems=False)
        else:
            console = Console(
                force_terminal=force,
                no_color=args.color == "never" or None,
                highlight=False,
                soft_wrap=False,
            )
            render_terminal(view, console, max_bytes=args.max_bytes, show_problems=False)
    for problem in view.problems:
        # A finding in the batch: the located form every command gives damage
        print(f"error: {problem}", file=sys.stderr)
    return 1 if view.problems else 0


def register(sub) -> None:
    parser = sub.add_parser(
        "inspect",
        help="one batch as a hex dump annotated with its schema fields (terminal or HTML)",
        description=(
            "Show one batch of a log segment (or any file of batches) byte by byte: a hex "
            "dump in which each field's bytes have their own colour, and every field of the "
            "schema with its byte range and value, CRC stored against computed. Compressed "
            "batches also show their decompressed records, parsed field by field."
        ),
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("file", metavar="FILE", help="a .log segment or any file of batches")
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--offset", type=int, metavar="N", help="the batch whose offsets include N")
    which.add_argument(
        "--position",
        type=_non_negative,
        metavar="P",
        help="the batch starting at byte P of the file (default: the first batch)",
    )
    parser.add_argument(
        "--html",
        metavar="OUT.html",
        help="write one self-contained page (hex pane beside the field tree) instead",
    )
    parser.add_argument(
        "--max-bytes",
        type=_non_negative,
        default=65536,
        metavar="N",
        help="show at most N bytes of each hex dump (default 65536; 0 = all)",
    )
    parser.add_argument(
        "--max-decompressed-bytes",
        type=_non_negative,
        default=DEFAULT_MAX_BYTES,
        metavar="N",
        help=f"refuse to decompress a batch to more than N bytes (default {DEFAULT_MAX_BYTES})",
    )
    parser.add_argument(
        "--color",
        choices=("auto", "always", "never"),
        default="auto",
        help="colour the terminal output (default: when stdout is a terminal)",
    )
    parser.set_defaults(run=run)
