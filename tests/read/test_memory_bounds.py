"""No count or length field makes a reader reserve memory the file cannot back.

The reads run in a child process whose address space is capped (``RLIMIT_AS``) at its own
size after warming up plus 512 MiB, so that an over-reservation fails there as a
MemoryError (numpy's, Arrow's) instead of passing unseen on a machine with memory to spare.
One child runs every input. Inputs are logs PartitionWriter writes with every codec, their
length and count fields overwritten with lies and their CRCs recomputed so that the lies
reach the decoders; for each, only our errors may escape ``iter_batches``, ``iter_records``
and ``read_table``, and ``read_table`` must give what ``iter_records`` gives (the same rows
and damaged batches in skip mode; the same rows, then the same error, in strict mode).
"""

from __future__ import annotations

import json
import struct
import subprocess
import sys
import zlib
from pathlib import Path

from crc32c import crc32c

from kafka_format.runtime.format.codecs import Codec
from kafka_format.runtime.write.writer import PartitionWriter
from kafka_format.runtime.write.writer_model import Message

BOUND = 512 << 20
LIES = [0x7FFFFFFF, 0x7FFFFFF0, 1 << 24, 100_000, -1, -(2**31), 0, 1]

_CHILD = r"""
import json, resource, sys
import kafka_format as kf
from kafka_format.runtime.read.columnar import iter_arrow_batches

def vm():
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024

def where(exc):
    return [type(exc).__name__, exc.position, exc.base_offset, str(exc)]

def reference(data, strict, verify):
    report = kf.Report()
    rows, error = [], None
    try:
        for r in kf.iter_records(data, errors="strict" if strict else "skip", report=report,
                                 verify_crc=verify, max_decompressed_bytes=8 << 20):
            rows.append([r.offset, r.key, r.value])
    except kf.KafkaFormatError as exc:
        error = where(exc)
    return rows, error, [where(e) for e in report.errors]

def fast(data, strict, verify):
    report = kf.Report()
    rows, error = [], None
    try:
        for batch in iter_arrow_batches(data, errors="strict" if strict else "skip",
                                        report=report, verify_crc=verify,
                                        max_decompressed_bytes=8 << 20):
            d = batch.to_pydict()
            rows += [list(x) for x in zip(d["offset"], d["key"], d["value"])]
    except kf.KafkaFormatError as exc:
        error = where(exc)
    return rows, error, [where(e) for e in report.errors]

inputs = json.load(open(sys.argv[1]))
warm = bytes.fromhex(inputs[0])
for _ in range(2):
    fast(warm, True, True); reference(warm, True, True)
resource.setrlimit(resource.RLIMIT_AS, (vm() + int(sys.argv[2]), resource.RLIM_INFINITY))
problems, lies = [], 0
for k, text in enumerate(inputs[1:]):
    data = bytes.fromhex(text)
    found = {}
    try:
        for verify in (True, False):
            with_errors = []
            try:
                for b in kf.iter_batches(data, verify_crc=verify, max_decompressed_bytes=8 << 20):
                    pass
            except kf.KafkaFormatError as exc:
                with_errors.append(where(exc))
            for strict in (True, False):
                found[f"{verify} {strict}"] = [reference(data, strict, verify),
                                               fast(data, strict, verify)]
    except BaseException as exc:
        problems.append([k, "escaped", f"{type(exc).__name__}: {exc}"[:300]])
        continue
    for mode, ((ref_rows, ref_error, ref_report), (rows, error, report)) in found.items():
        if rows != ref_rows or [e[:3] for e in report] != [e[:3] for e in ref_report]:
            problems.append([k, mode, "rows or report differ", ref_report, report])
        elif (error or [])[:3] != (ref_error or [])[:3] and not (
            error and error[0] == "UnrepresentableError"
        ):  # parse errors have the reference's class and place; their wording differs
            problems.append([k, mode, "errors differ", ref_error, error])
        lies += bool(ref_error and "cannot fit" in ref_error[3])
print(json.dumps({"problems": problems[:20], "lying_counts": lies}))
"""


def _fix_crcs(data: bytearray) -> None:
    pos = 0
    while len(data) - pos > 17:
        (length,) = struct.unpack_from(">i", data, pos + 8)
        end = pos + 12 + length
        if length < 14 or end > len(data):
            return
        if data[pos + 16] == 2 and length >= 9:
            struct.pack_into(">I", data, pos + 17, crc32c(bytes(data[pos + 21 : end])))
        elif data[pos + 16] in (0, 1):
            struct.pack_into(">I", data, pos + 12, zlib.crc32(bytes(data[pos + 16 : end])))
        pos = end


def _logs(tmp: Path) -> list[bytes]:
    logs = []
    cases = [(c, 2, True) for c in Codec] + [(Codec.SNAPPY, 2, False)]
    cases += [(c, m, True) for m in (0, 1) for c in (Codec.NONE, Codec.GZIP, Codec.SNAPPY)]
    cases += [(Codec.LZ4, 1, True)]
    for k, (codec, magic, xerial) in enumerate(cases):
        with PartitionWriter(tmp / str(k), "t", 0) as w:
            for n in (3, 40):
                values = [Message(b"k%d" % i, b"value %d " % i * 9) for i in range(n)]
                w.append(values, codec=codec, magic=magic, xerial=xerial)
        logs.append((tmp / str(k) / "t-0" / "00000000000000000000.log").read_bytes())
    return logs


def _fields(data: bytes) -> list[int]:
    """Every frame's length field and, by magic, its count or key and value lengths."""
    out, pos = [], 0
    while len(data) - pos > 17:
        (length,) = struct.unpack_from(">i", data, pos + 8)
        out.append(pos + 8)
        if data[pos + 16] == 2:
            out += [pos + 23, pos + 57]
        else:
            key_at = pos + (18 if data[pos + 16] == 0 else 26)
            out.append(key_at)
            (key_len,) = struct.unpack_from(">i", data, key_at)
            out.append(key_at + 4 + max(key_len, 0))
        pos += 12 + length
    return [p for p in out if p + 4 <= len(data)]


def _lied(logs: list[bytes]) -> list[bytes]:
    inputs = []
    for log in logs:
        inputs.append(log)
        for at in _fields(log):
            for lie in LIES:
                data = bytearray(log)
                struct.pack_into(">i", data, at, lie)
                _fix_crcs(data)
                inputs.append(bytes(data))
    return inputs


def _run(inputs: list[bytes], tmp: Path) -> None:
    listed = tmp / "inputs.json"
    listed.write_text(json.dumps([inputs[0].hex(), *(d.hex() for d in inputs)]))
    run = subprocess.run(
        [sys.executable, "-c", _CHILD, str(listed), str(BOUND)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    results = json.loads(run.stdout)
    assert results["problems"] == []
    assert results["lying_counts"]  # the count lies reached the check (CRCs recomputed)


def _corpus_frames(corpus: Path) -> list[bytes]:
    """The first three frames of every corpus set, where they are small."""
    out = []
    for path in sorted(corpus.glob("*/*.bin")):
        data, pos, frames = path.read_bytes(), 0, []
        while len(frames) < 3 and len(data) - pos > 17:
            (length,) = struct.unpack_from(">i", data, pos + 8)
            if length < 14 or pos + 12 + length > len(data) or length > 4096:
                break
            frames.append(data[pos : pos + 12 + length])
            pos += 12 + length
        if frames:
            out.append(b"".join(frames))
    return out


def test_lies_in_length_and_count_fields(tmp_path):
    _run(_lied(_logs(tmp_path)), tmp_path)


def test_lies_in_the_corpus(corpus_dir, tmp_path):
    """The same lies in bytes real brokers and clients wrote."""
    _run(_lied(_corpus_frames(corpus_dir)), tmp_path)
