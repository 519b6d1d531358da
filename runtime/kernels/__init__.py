"""Layer 2, numba kernels: frames, record decoders, CRC-32/32C, snappy and LZ4, by address."""
