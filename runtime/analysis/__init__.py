"""Layer 5, analysis over whole logs: verify, the partitioner check, stats and what-if,
inspect."""
