"""Kafka's default partitioner: where a producer puts a record with a key.

The Java client (``BuiltInPartitioner.partitionForKey``, and ``DefaultPartitioner`` before
3.3) hashes the serialized key with a 32-bit MurmurHash2 (seed ``0x9747b28c``), clears the sign
bit (``Utils.toPositive``: ``hash & 0x7fffffff``, not ``abs``, so ``Integer.MIN_VALUE`` maps to
0) and takes the remainder by the partition count. Everything is Java ``int`` arithmetic: the
products wrap at 32 bits and the shifts are unsigned (``>>>``).

Records without a key do not hash: see ``docs/partitioner.md`` for what each client version
does with them (round-robin before Kafka 2.4, sticky per batch from 2.4, uniform sticky from 3.3).
:class:`UniformStickyPartitioner` models the 3.3+ rule for writers of realistic logs.

:func:`murmur2_array` and :func:`default_partitions` do the same over Arrow arrays of keys
(compiled with numba for large arrays): the Spark SQL function ``kafka_partition`` uses them.
"""

from __future__ import annotations

import random
import struct
from collections.abc import Sequence
from functools import cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pyarrow as pa

_SEED = 0x9747B28C
_M = 0x5BD1E995
_MASK = 0xFFFFFFFF
#: Java's ``batch.size`` default: the uniform sticky partitioner switches after this many bytes.
DEFAULT_BATCH_SIZE = 16384
#: Below this many keys the vectorised forms loop in Python rather than start the compiled kernel.
_SMALL = 64


def murmur2(data: bytes | bytearray | memoryview) -> int:
    """Java's ``Utils.murmur2``: a signed 32-bit hash of ``data``."""
    data = bytes(data)
    length = len(data)
    h = (_SEED ^ length) & _MASK
    whole = length & ~3
    for k in struct.unpack_from(f"<{whole >> 2}I", data):
        k = (k * _M) & _MASK
        k ^= k >> 24
        k = (k * _M) & _MASK
        h = ((h * _M) & _MASK) ^ k
    rest = length & 3
    if rest:
        # Java's switch falls through: the third byte, then the second, then the first.
        if rest == 3:
            h ^= data[whole + 2] << 16
        if rest >= 2:
            h ^= data[whole + 1] << 8
        h ^= data[whole]
        h = (h * _M) & _MASK
    h ^= h >> 13
    h = (h * _M) & _MASK
    h ^= h >> 15
    return h - (1 << 32) if h & 0x80000000 else h


def to_positive(number: int) -> int:
    """Java's ``Utils.toPositive``: the sign bit cleared."""
    return number & 0x7FFFFFFF


def default_partition(key: bytes | bytearray | memoryview, num_partitions: int) -> int:
    """The partition Kafka's Java producer picks for a record with this (serialized) key.

    An empty key is a key (it hashes); a null key has no hashed partition at all, so None is
    refused here: see :class:`UniformStickyPartitioner` for what the producer does instead.
    """
    if key is None:
        raise TypeError("a null key is not hashed: the producer places it by its sticky rule")
    if num_partitions <= 0:
        raise ValueError(f"num_partitions must be positive, got {num_partitions}")
    return to_positive(murmur2(key)) % num_partitions


# --- records without a key ------------------------------------------------------------------


class UniformStickyPartitioner:
    """The Java producer's default placement since Kafka 3.3 (KIP-794, ``BuiltInPartitioner``),
    for one topic whose partitions are all available and with adaptive partitioning idle.

    A keyed record goes where :func:`default_partition` says (unless ``ignore_keys``, which is
    ``partitioner.ignore.keys``). Records without a key all go to the current sticky partition;
    once ``batch_size`` bytes of them were appended there, the next one picks a new partition
    uniformly at random (``toPositive(nextInt()) % count``: possibly the same one again). The
    bytes counted are each record's size in the batch, which the caller passes as ``size``.

    Not modelled: the producer waits for the current batch to be full before switching when
    ``linger.ms`` holds batches back (then switching between ``batch_size`` and twice that), and
    with ``partitioner.adaptive.partitioning.enable`` it favours partitions whose brokers keep
    up. Both depend on the network, which a log file does not record.
    """

    __slots__ = ("_produced", "_rng", "_sticky", "batch_size", "ignore_keys", "num_partitions")

    def __init__(
        self,
        num_partitions: int,
        *,
        batch_size: int = DEFAULT_BATCH_SIZE,
        ignore_keys: bool = False,
        rng: random.Random | None = None,
    ) -> None:
        if num_partitions <= 0:
            raise ValueError(f"num_partitions must be positive, got {num_partitions}")
        if batch_size < 1:
            # BuiltInPartitioner refuses a stickyBatchSize below 1 too.
            raise ValueError(f"batch_size must be at least 1, got {batch_size}")
        self.num_partitions = num_partitions
        self.batch_size = batch_size
        self.ignore_keys = ignore_keys
        self._rng = rng if rng is not None else random.Random()
        self._sticky: int | None = None
        self._produced = 0

    @property
    def sticky_partition(self) -> int | None:
        """Where the next record without a key goes (None until the first one)."""
        return self._sticky

    def partition(self, key: bytes | None, size: int = 0) -> int:
        """The partition of the next record, with ``size`` its bytes in the batch."""
        if key is not None and not self.ignore_keys:
            return default_partition(key, self.num_partitions)
        if self._sticky is None:
            self._sticky = self._next()
        chosen = self._sticky
        self._produced += size
        if self._produced >= self.batch_size:
            self._sticky = self._next()
            self._produced = 0
        return chosen

    def _next(self) -> int:
        return self._rng.getrandbits(31) % self.num_partitions


# --- many keys at once --------------------------------------------------------------------------


def murmur2_array(keys: pa.Array | pa.ChunkedArray | Sequence[bytes | None]) -> pa.Array:
    """:func:`murmur2` of every key, as an Arrow ``int32`` array; null keys give null.

    ``keys`` is an Arrow binary, large binary or string array (a string hashes its UTF-8
    bytes, as Kafka's ``StringSerializer`` writes them), or a sequence of bytes and None.
    """
    import numpy as np
    import pyarrow as pa

    array = _binary_array(keys)
    n = len(array)
    nulls = array.is_null().to_numpy(zero_copy_only=False) if array.null_count else None
    if n < _SMALL:
        hashes = np.zeros(n, np.int32)
        for i, key in enumerate(array.to_pylist()):
            if key is not None:
                hashes[i] = murmur2(key)
    else:
        offsets, data = _buffers(array)
        hashes = np.empty(n, np.int32)
        _kernel()(data, offsets, hashes)
    return pa.array(hashes, pa.int32(), mask=nulls)


def default_partitions(
    keys: pa.Array | pa.ChunkedArray | Sequence[bytes | None],
    num_partitions: int | pa.Array | Sequence[int | None],
) -> pa.Array:
    """:func:`default_partition` of every key, as an Arrow ``int32`` array.

    ``num_partitions`` is one count for all keys or one per key. A null key or a null count
    gives null; a count below 1 raises ``ValueError`` (as for :func:`default_partition`).
    """
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    hashes = murmur2_array(keys)
    n = len(hashes)
    if isinstance(num_partitions, int):
        if num_partitions <= 0:
            raise ValueError(f"num_partitions must be positive, got {num_partitions}")
        counts = pa.array(np.full(n, num_partitions, np.int64))
    else:
        counts = pc.cast(_plain(num_partitions, pa.int64()), pa.int64())
        if len(counts) != n:
            raise ValueError(f"{len(counts)} partition counts for {n} keys")
        bad = pc.less_equal(counts, 0)
        if pc.any(bad).as_py():
            row = pc.index(bad, True).as_py()
            raise ValueError(
                f"num_partitions must be positive, got {counts[row].as_py()} (row {row})"
            )
    nulls = pc.or_(hashes.is_null(), counts.is_null()).to_numpy(zero_copy_only=False)
    h = hashes.fill_null(0).to_numpy().astype(np.int64) & 0x7FFFFFFF
    c = counts.fill_null(1).to_numpy()
    return pa.array((h % c).astype(np.int32), pa.int32(), mask=nulls)


def _plain(values: Any, arrow_type: pa.DataType) -> pa.Array:
    import pyarrow as pa

    if isinstance(values, pa.ChunkedArray):
        return values.combine_chunks()
    if isinstance(values, pa.Array):
        return values
    return pa.array(values, arrow_type)


def _binary_array(keys: Any) -> pa.Array:
    import pyarrow as pa

    array = _plain(keys, pa.binary())
    kind = array.type
    if pa.types.is_string(kind):
        return array.cast(pa.binary())
    if pa.types.is_large_string(kind):
        return array.cast(pa.large_binary())
    if pa.types.is_binary(kind) or pa.types.is_large_binary(kind):
        return array
    if pa.types.is_null(kind):
        return array.cast(pa.binary())
    raise TypeError(f"keys must be binary or string, not {kind}")


def _buffers(array: pa.Array) -> tuple[Any, Any]:
    """The offsets (int64, one more than the keys) and the data bytes of a binary array."""
    import numpy as np
    import pyarrow as pa

    width = np.int64 if pa.types.is_large_binary(array.type) else np.int32
    _, offsets_buf, data_buf = array.buffers()
    offsets = np.frombuffer(offsets_buf, width, len(array) + 1, array.offset * width().itemsize)
    data = np.frombuffer(data_buf, np.uint8) if data_buf is not None else np.zeros(0, np.uint8)
    # A null slot may point anywhere its neighbours do: its hash is masked afterwards.
    return offsets.astype(np.int64), data


@cache
def _kernel():
    """murmur2 over ``data[offsets[i]:offsets[i + 1]]`` for each i, compiled on first use (so
    that importing this module does not start numba)."""
    import numpy as np
    from numba import njit

    seed, m, mask = np.uint64(_SEED), np.uint64(_M), np.uint64(_MASK)

    @njit(cache=True, nogil=True)
    def hash_all(data, offsets, out):  # pragma: no cover - compiled
        for i in range(out.shape[0]):
            start = offsets[i]
            length = offsets[i + 1] - start
            h = (seed ^ np.uint64(length)) & mask
            whole = length & ~3
            for j in range(0, whole, 4):
                p = start + j
                k = (
                    np.uint64(data[p])
                    | (np.uint64(data[p + 1]) << np.uint64(8))
                    | (np.uint64(data[p + 2]) << np.uint64(16))
                    | (np.uint64(data[p + 3]) << np.uint64(24))
                )
                k = (k * m) & mask
                k ^= k >> np.uint64(24)
                k = (k * m) & mask
                h = ((h * m) & mask) ^ k
            rest = length & 3
            if rest:
                p = start + whole
                if rest == 3:
                    h ^= np.uint64(data[p + 2]) << np.uint64(16)
                if rest >= 2:
                    h ^= np.uint64(data[p + 1]) << np.uint64(8)
                h ^= np.uint64(data[p])
                h = (h * m) & mask
            h ^= h >> np.uint64(13)
            h = (h * m) & mask
            h ^= h >> np.uint64(15)
            out[i] = np.int32(np.int64(h) - np.int64(1 << 32) if h >= 0x80000000 else h)

    return hash_all


__all__ = [
    "DEFAULT_BATCH_SIZE",
    "UniformStickyPartitioner",
    "default_partition",
    "default_partitions",
    "murmur2",
    "murmur2_array",
    "to_positive",
]
