"""Compressed record sets on one thread against the codec alone (issue 19, first bullet).

For every compressed case (v2 gzip, snappy, lz4, zstd; v0/v1 gzip, snappy, lz4), best of
``repeat`` runs (two rounds, seconds apart, each keeping its best), in this process:

- bare: the codec library alone decompressing the same payloads (``readers.bare_decompress``);
- ours, 1 thread: ``iter_arrow_batches(threads=1)``, CRCs checked, headers included;
- ours, 1 thread, CRCs unchecked (``verify_crc=False``);
- ours, 1 thread, on the same records uncompressed (the same magic, codec none): the decoding
  every codec pays after decompression; bare + that is what a reader that added nothing to
  the codec and to our own decoder would take.

Then one instrumented run a case (best of ``repeat``) splits ours into stages by wrapping
the names ``columnar`` looks up when it decodes a chunk (``fs.scan_frames``,
``fs.make_sections``, ``_crc_fails``, ``_plan_packed``, ``_plan_inflated`` (gzip, zstd and
LZ4F frames decoded by their C libraries from a kernel), ``_prepare_v2``, ``_prepare_wrapper``,
``_run_kernel``), the codec steps ``codecs`` calls (``_gunzip``, ``_unzstd``, ...) and
``plan.decompress_into`` (gzip into a buffer of the size it states): a
``time.perf_counter`` pair around each call, so a stage's figure includes the calls' own
Python.

    .venv/bin/python bench/run.py --only compressed [--quick]
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable, Iterator

import inputs
import readers

from kafka_format.runtime.format import codecs
from kafka_format.runtime.kernels import fastscan
from kafka_format.runtime.read import columnar, plan
from kafka_format.runtime.read.columnar import iter_arrow_batches

HEADING = "## Compressed batches on one thread against the codec alone (issue 19)"

CASES = [(m, c) for m, c in inputs.CASES if c != 0]

_INFLATE = "gzip/zstd/LZ4F by their C libraries (kernel, one call a chunk)"
_DECODE = "decode (kernel; snappy/LZ4 decompress inside)"
# Stage name -> (module, attribute) wrapped; the codec steps run inside "python per batch".
_STAGES = {
    "scan": (fastscan, "scan_frames"),
    "sections": (fastscan, "make_sections"),
    "CRC-32C, uncompressed v2 (kernel)": (columnar, "_crc_fails"),
    "plan snappy/LZ4 (kernel: CRCs, bounds)": (columnar, "_plan_packed"),
    _INFLATE: (columnar, "_plan_inflated"),
    "python per batch (CRC, decompress)": (columnar, "_prepare_v2"),
    "python per wrapper (CRC, decompress)": (columnar, "_prepare_wrapper"),
    _DECODE: (columnar, "_run_kernel"),
}
_CODEC_STEPS = ("_gunzip", "_unsnappy", "_unlz4", "_unzstd")
CODEC_STAGE = "of which the codec library (Python path)"
INTO_STAGE = "of which gzip into a sized buffer (cramjam)"
_NESTED = (CODEC_STAGE, INTO_STAGE)


def best_time(fn: Callable[[], object], repeat: int) -> float:
    """The least of ``repeat`` runs of ``fn``, in seconds (``scaling.py`` times by it too)."""
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def _one_thread(data: bytes, verify: bool = True) -> int:
    n = 0
    for batch in iter_arrow_batches(data, include_headers=True, threads=1, verify_crc=verify):
        n += batch.num_rows
    return n


@contextlib.contextmanager
def _timed(spent: dict[str, float]) -> Iterator[None]:
    """Wrap every stage's function so that calls add their time to ``spent``."""
    saved = []

    def wrap(name: str, module, attr: str) -> None:
        original = getattr(module, attr)

        def timed(*args, **kwargs):
            start = time.perf_counter()
            try:
                return original(*args, **kwargs)
            finally:
                spent[name] = spent.get(name, 0.0) + time.perf_counter() - start

        saved.append((module, attr, original))
        setattr(module, attr, timed)

    for name, (module, attr) in _STAGES.items():
        wrap(name, module, attr)
    for attr in _CODEC_STEPS:
        wrap(CODEC_STAGE, codecs, attr)
    wrap(INTO_STAGE, plan, "decompress_into")
    try:
        yield
    finally:
        for module, attr, original in reversed(saved):
            setattr(module, attr, original)


def profile(data: bytes, repeat: int) -> dict[str, float]:
    """Seconds a stage in the fastest of ``repeat`` instrumented one-thread runs, with
    ``"total"`` (the run) and ``"rest"`` (the total less the stages: emitting Arrow record
    batches, the generator, the chunk bookkeeping)."""
    best: dict[str, float] = {}
    for _ in range(repeat):
        spent: dict[str, float] = {}
        with _timed(spent):
            start = time.perf_counter()
            _one_thread(data)
            spent["total"] = time.perf_counter() - start
        if not best or spent["total"] < best["total"]:
            best = spent
    best["rest"] = best["total"] - sum(
        v for k, v in best.items() if k != "total" and k not in _NESTED
    )
    return best


@contextlib.contextmanager
def _patched(module, attr: str, value) -> Iterator[None]:
    saved = getattr(module, attr)
    setattr(module, attr, value)
    try:
        yield
    finally:
        setattr(module, attr, saved)


def _without_fast_paths(data: bytes, repeat: int) -> dict[str, float]:
    """Ours, 1 thread, on the Python path, for comparison in the same run: gzip by zlib and
    zstd by zstandard (``decompress_into`` and ``_plan_inflated`` declining every payload),
    and every uncompressed v2 batch's CRC-32C checked from Python (``_crc_fails`` sending
    them all there)."""
    with (
        _patched(plan, "decompress_into", lambda *args: None),
        _patched(columnar, "_plan_inflated", lambda sections, kinds, *args: kinds < 0),
        _patched(columnar, "_crc_fails", lambda sections, kinds, address: kinds == fastscan.K_FAST),
    ):
        return best_time(lambda: _one_thread(data), repeat)


def snappy_decoders(records: int, repeat: int) -> dict[str, float]:
    """Our snappy kernel against cramjam's raw decoder, both decoding the v2 snappy case's
    payload (xerial blocks) into one buffer as many times as the case has batches, warm."""
    import struct

    import cramjam
    import numpy as np
    from numba import njit

    from kafka_format.runtime.kernels.snappy import SLACK, decode_snappy, snappy_capacity

    rs = inputs.record_set(2, 2, records)
    src = np.frombuffer(rs.payload, np.uint8)
    a, n = src.ctypes.data, len(src)
    capacity = snappy_capacity(a, 0, n)
    dst = np.empty(capacity + SLACK, np.uint8)
    d = dst.ctypes.data

    @njit(nogil=True)
    def kernel(times):
        total = 0
        for _ in range(times):
            total += decode_snappy(a, 0, n, d, capacity, d + capacity + SLACK)
        return total

    if kernel(1) != capacity:
        raise AssertionError("our snappy decoder decoded a wrong size")
    view = memoryview(rs.payload)
    blocks, pos = [], 16  # xerial: magic, version, compatible; then int32 BE size + block
    while pos < n:
        (size,) = struct.unpack_from(">i", view, pos)
        blocks.append(view[pos + 4 : pos + 4 + size])
        pos += 4 + size

    def cram() -> None:
        for _ in range(rs.copies):
            at = 0
            for block in blocks:
                at += cramjam.snappy.decompress_raw_into(block, dst[at:])

    cram()
    return {
        "ours": best_time(lambda: kernel(rs.copies), repeat),
        "cramjam": best_time(cram, repeat),
        "batches": rs.copies,
        "elements": _snappy_elements(blocks),
        "bytes": capacity,
    }


def _snappy_elements(blocks) -> int:
    """Literals and copies in the raw snappy blocks (the decoders' unit of work)."""
    count = 0
    for block in blocks:
        b = bytes(block)
        i = 0
        while b[i] & 0x80:
            i += 1
        i += 1
        while i < len(b):
            tag = b[i]
            i += 1
            kind = tag & 3
            if kind == 0:
                length = (tag >> 2) + 1
                if length > 60:
                    extra = length - 60
                    length = int.from_bytes(b[i : i + extra], "little") + 1
                    i += extra
                i += length
            else:
                i += (1, 2, 4)[kind - 1]
            count += 1
    return count


def run(records: int, repeat: int, log=print) -> dict:
    _one_thread(inputs.record_set(2, 0, 10).data)  # compile or load the kernels
    rs0 = inputs.record_set(2, 0, records)
    _one_thread(rs0.data)
    _without_fast_paths(rs0.data, 1)
    uncompressed = {
        "bytes": len(rs0.data),
        "kernel": best_time(lambda: _one_thread(rs0.data), repeat),
        "python": _without_fast_paths(rs0.data, repeat),
        "unchecked": best_time(lambda: _one_thread(rs0.data, verify=False), repeat),
        "stages": profile(rs0.data, repeat),
    }
    plain = {}
    rows = []
    for magic, codec in CASES:
        if magic not in plain:
            rs0 = inputs.record_set(magic, 0, records)
            plain[magic] = best_time(lambda d=rs0.data: _one_thread(d), repeat)
        rs = inputs.record_set(magic, codec, records)
        payload = readers.bare_payload(codec, magic, rs.payload)
        if _one_thread(rs.data) != rs.records:
            raise AssertionError(f"{rs.name}: ours read a wrong number of records")

        def bare(p=payload, c=codec, k=rs.copies) -> int:
            return readers.bare_decompress(c, p, k)

        def ours(d=rs.data) -> int:
            return _one_thread(d)

        # Two rounds, seconds apart: a busy spell on a shared machine can last one round.
        bare_s, ours_s = best_time(bare, repeat), best_time(ours, repeat)
        unchecked = best_time(lambda d=rs.data: _one_thread(d, verify=False), repeat)
        bare_s, ours_s = min(bare_s, best_time(bare, repeat)), min(ours_s, best_time(ours, repeat))
        stages = profile(rs.data, repeat)
        before = _without_fast_paths(rs.data, repeat) if codec in (1, 4) else None
        row = {
            "name": rs.name,
            "records": rs.records,
            "bare": bare_s,
            "ours": ours_s,
            "unchecked": unchecked,
            "plain": plain[magic],
            "stages": stages,
            "before": before,
        }
        rows.append(row)
        log(
            f"  {rs.name}: bare {bare_s * 1e3:.1f} ms, ours {ours_s * 1e3:.1f} ms, "
            f"unchecked {unchecked * 1e3:.1f} ms, uncompressed {plain[magic] * 1e3:.1f} ms"
        )
    return {
        "rows": rows,
        "uncompressed": uncompressed,
        "snappy": snappy_decoders(records, repeat),
        "repeat": repeat,
        "records": records,
        "load": os.getloadavg(),
    }


def render(result: dict, machine: str) -> str:
    rows = result["rows"]
    load = ", ".join(f"{x:.2f}" for x in result["load"])
    lines = [
        HEADING,
        "",
        f"{result['records']} records a case (as above: 100-byte values, a short key, one "
        "header on v2, 1000 records a batch or wrapper); best of two rounds of "
        f"{result['repeat']} runs, in one process, one thread. Ours reads everything (CRCs, "
        "decompression, decoding, Arrow record batches with headers); bare is the codec "
        "library alone on the same payloads (`zlib.decompress`, cramjam's raw snappy per "
        "xerial block, python-lz4's `lz4.frame.decompress`, zstandard's decompressobj). "
        "Issue 19's target: ours at most 1.1× bare. The uncompressed column is ours on the "
        "same records written uncompressed (same magic): the record decoding every codec pays "
        "after decompression. Bare + that is the time of a reader that adds nothing to the "
        "codec library and to our decoder; the last column is ours against it.",
        "",
        "| case | bare s | ours, 1 thread s | ratio to bare | CRCs unchecked s | "
        "ours uncompressed s | bare + uncompressed s | ratio to bare + uncompressed |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        floor = r["bare"] + r["plain"]
        lines.append(
            f"| {r['name']} | {r['bare']:.4f} | {r['ours']:.4f} | {r['ours'] / r['bare']:.2f} | "
            f"{r['unchecked']:.4f} | {r['plain']:.4f} | {floor:.4f} | "
            f"{r['ours'] / floor:.2f} |"
        )
    stage_names = [*_STAGES, *_NESTED, "rest"]
    used = [s for s in stage_names if any(r["stages"].get(s, 0) > 5e-5 for r in rows)]
    lines += [
        "",
        "Where ours' time goes (ms; the fastest of the instrumented runs, whose total is "
        "slightly above the untimed best; `rest` is the total less the stages: Arrow record "
        "batches handed out, the generator, chunk bookkeeping):",
        "",
        "| case | total | " + " | ".join(used) + " |",
        "|---|---:|" + "---:|" * len(used),
    ]
    for r in rows:
        st = r["stages"]
        cells = " | ".join(f"{st.get(s, 0.0) * 1e3:.1f}" for s in used)
        lines.append(f"| {r['name']} | {st['total'] * 1e3:.1f} | {cells} |")
    unc = result["uncompressed"]
    ust = unc["stages"]
    decode_key = "decode (kernel; snappy/LZ4 decompress inside)"
    crc_key = "CRC-32C, uncompressed v2 (kernel)"
    lines += [
        "",
        "Against the Python path, in the same run (ours, 1 thread, seconds): gzip and zstd "
        "decoded a batch at a time from Python (`codecs.decompress_buffer`: zlib, whose output "
        "grows in pieces joined into fresh memory, and zstandard) instead of by their C "
        "libraries from one kernel call a chunk (`kernels.inflate`: libdeflate and libzstd "
        "straight into an arena; whatever a library refuses takes the Python path, so outputs "
        "and errors are the same); uncompressed v2 batches' CRC-32C checked a batch at a time "
        "from Python (`crc32c`) instead of one kernel call a chunk. At 1,000 records a batch "
        "the Python step is a small part of a batch's cost; at one record a batch it was most "
        "of it (the small-batch section).",
        "",
        "| case | ours now | ours before | before / now |",
        "|---|---:|---:|---:|",
        f"| v2 none (CRC-32C) | {unc['kernel']:.4f} | {unc['python']:.4f} | "
        f"{unc['python'] / unc['kernel']:.2f} |",
    ]
    for r in rows:
        if r["before"] is not None:
            lines.append(
                f"| {r['name']} | {r['ours']:.4f} | {r['before']:.4f} | "
                f"{r['before'] / r['ours']:.2f} |"
            )
    lz4 = next((r for r in rows if r["name"] == "v2 lz4"), None)
    sn = result["snappy"]
    met = ", ".join(
        f"{r['name']} ({r['ours'] / r['bare']:.2f})" for r in rows if r["ours"] <= 1.1 * r["bare"]
    )
    unmet = ", ".join(
        f"{r['name']} ({r['ours'] / r['bare']:.2f})" for r in rows if r["ours"] > 1.1 * r["bare"]
    )
    floor_ratios = ", ".join(
        f"{r['name']} {r['ours'] / (r['bare'] + r['plain']):.2f}"
        for r in rows
        if r["name"].startswith("v2")
    )
    gz = next((r["stages"] for r in rows if r["name"] == "v2 gzip"), {})
    per_batch = sn["elements"]
    lines += [
        "",
        f"Target (ours at most 1.1× bare) met: {met or 'none'}; not met: {unmet or 'none'}. "
        "Why the fast codecs stay above 1.1× bare: the records must still be decoded after "
        "decompression. Uncompressed v2 on one thread takes "
        f"{unc['kernel'] * 1e3:.1f} ms for these records ({ust.get(decode_key, 0) * 1e3:.1f} ms "
        f"in the decoder, {ust.get(crc_key, 0) * 1e3:.1f} ms CRC-32C over "
        f"{unc['bytes'] / 1e6:.0f} MB in the kernel, which is the memory's speed "
        f"rather than the instruction's; {unc['unchecked'] * 1e3:.1f} ms unchecked)"
        + (
            f"; LZ4 decompresses the same records in {lz4['bare'] * 1e3:.1f} ms, so 1.1× bare "
            f"leaves {lz4['bare'] * 0.1 * 1e3:.1f} ms to decode {result['records']} records: "
            "out of reach by "
            "arithmetic, not by overhead"
            if lz4
            else ""
        )
        + f". Against bare + uncompressed (v2): {floor_ratios}. At or below 1.0, nothing is "
        "left to remove but the decoding itself: the decoder reads a scratch buffer still in "
        "the cache (snappy, LZ4: no Python a batch; the CRC covers only the compressed bytes), "
        f"cheaper than reading {unc['bytes'] / 1e6:.0f} MB from memory as the uncompressed "
        "case does; above it, the "
        "codec in our path is slower than bare (snappy: our decoder, below; zstd: zstandard "
        "on payloads each read once from memory, where bare decodes one payload over and over "
        "from the cache). The v0/v1 uncompressed sets are one "
        "message a frame (each framed and checked on its own), so their sum is no floor for "
        "wrappers; the decode column above is (the inner messages' CRC-32s included). "
        f"Snappy: our kernel decoder takes {sn['ours'] * 1e3:.1f} ms where cramjam's raw "
        f"decoder into a buffer takes {sn['cramjam'] * 1e3:.1f} ms for the same "
        f"{sn['batches']} payloads, warm ({per_batch} literals and copies in a "
        f"{sn['bytes'] / 1e3:.0f} KB batch: "
        f"{sn['ours'] / sn['batches'] / per_batch * 1e9:.1f} against "
        f"{sn['cramjam'] / sn['batches'] / per_batch * 1e9:.1f} ns an element), and that is "
        "the remaining distance; ours saves a Python call and a copy a batch and runs without "
        "the GIL. "
        "gzip and zstd: the codec is nearly all of it, decoded by libdeflate and libzstd "
        "from the kernel with no Python step a batch; what is left is the record decoder "
        f"reading the arena from memory (v2 gzip: {gz.get(_INFLATE, 0.0) * 1e3:.1f} ms in "
        f"`kernels.inflate` against {gz.get(_DECODE, 0.0) * 1e3:.1f} ms decoding).",
        "",
        f"Load average after the run: {load}. Machine: {machine}.",
        "",
    ]
    return "\n".join(lines)
