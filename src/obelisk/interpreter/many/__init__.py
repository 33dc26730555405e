"""Many runs: a batch of runs (``obelisk.run_many``) and the executors that run them,
in this process or on a Ray cluster (docs/scale.md)."""
