"""Stage 2, analysis: a plan and its tools in, a checked dependency graph out.

Takes a parsed plan, a registry and the documents the plan starts from; gives
a :class:`~obelisk.interpreter.analysis.result.CheckResult`: the
:class:`~obelisk.interpreter.analysis.graph.PlanGraph` (reads, writes, edges,
cycles, exclusive alternatives) and every diagnostic (docs/diagnostics.md).
``path_index`` answers path-overlap queries, ``graph`` builds the edges,
``schema_types`` compares JSON schemas, ``arguments`` checks arguments against
tool parameters, ``check`` collects the diagnostics,
``drawing`` renders the graph as Mermaid or DOT.
"""
