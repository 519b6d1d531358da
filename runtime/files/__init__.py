"""Layer 2, a partition's other files: names, .index, .timeindex, .txnindex, .snapshot,
checkpoints."""
