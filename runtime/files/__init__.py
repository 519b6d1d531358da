"""Layer 2, a partition's other files: names, .index, .timeindex, .txnindex, .snapshot,
checkpoints; and ``index_lookup``, the one rule every reader applies to an index entry."""
