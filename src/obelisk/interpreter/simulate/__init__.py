"""Dry runs: a checked plan and its tools in, a ``SimulationReport`` out (docs/simulate.md).

Nothing with side effects runs.  Each call's result comes from a stub, a pure tool's
own function, or a value generated from its output schema (``outcomes``,
``samples``); every combination of the calls' outcomes is played through in the
runtime's commit order (``scenario``), timed with per-tool latency estimates
(``schedule``) and reported per scenario and across them (``report``).  ``simulate``
is the entry point; ``approval`` is what a person sees before approving a plan.
"""
