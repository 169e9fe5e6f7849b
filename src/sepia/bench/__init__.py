"""The benchmark suite of design/benchmarks.md: seeded workload generators (W1-W13 and a plain
triples stream for ingest), the systems measured on them (engines and baselines behind one
protocol), the measuring harness, and its table, JSON and plots."""
