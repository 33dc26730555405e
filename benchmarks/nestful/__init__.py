"""NESTFUL v2 math conformance: the 162 math records run through obelisk and scored.

* :mod:`.math_tools` -- the 40 math tools, clean-room from ``v2_math_functions.json``;
* :mod:`.convert` -- records -> plans (``$var_N`` -> ``†state.var_N``);
* :mod:`.score` -- runners (``obelisk.run_sync``, a sequential stand-in) and the
  upstream comparison rule.

Run ``python -m benchmarks.nestful [--json] [--runner obelisk|standin]``.
"""
