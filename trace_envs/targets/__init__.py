"""Target benchmarks run as Gymnasium episodes (tau2-bench airline and retail)."""
