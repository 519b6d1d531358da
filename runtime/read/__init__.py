"""Layer 3, reading: sources, iter_batches / iter_records, read_committed, Arrow."""
