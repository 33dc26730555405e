"""obelisk benchmarks: run as scripts, e.g. ``python benchmarks/check_throughput.py``."""
