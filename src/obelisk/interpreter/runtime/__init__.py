"""Stage 3, the runtime: a checked plan in, a ``RunResult`` out.

Takes a checked plan, its graph, the registry and the starting documents; runs
every call the moment its inputs are settled (docs/semantics.md) and gives the
final state, the write log and one record per call.  ``state`` is the write log
and its view, ``resolve`` evaluates a call's expressions, ``commit_order`` fixes
the order of overlapping writes, ``invoke`` calls tools (threads, timeouts,
retries), ``engine`` schedules, ``records`` and ``events`` are what a run leaves
behind, ``run`` is the entry point.
"""
