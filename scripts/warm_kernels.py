"""Compile the numba kernels into their on-disk cache (``make setup``), rather than in a
user's first read: seconds once per change of the kernels, under a second when warm.
The same as ``kafka-format warm`` (``runtime/cli/warm.py`` reaches every kernel)."""

from kafka_format.runtime.cli.warm import warm_kernels

warm_kernels()
