"""An optional mypyc build of obelisk's hot modules, and what it buys (issue 31, point 7).

Not part of ``python -m benchmarks`` nor of any test: it needs mypy (the ``dev``
extra), which provides ``mypyc``, and a C compiler, and building takes minutes.

* ``python -m benchmarks.compiled build [--into DIR]`` copies ``src/`` to
  ``DIR/src`` (default ``/tmp/obelisk-mypyc``) and compiles :data:`MODULES` there
  in place with ``mypyc`` (``MYPYC_OPT_LEVEL`` as set, mypyc's default 3).  Every
  other module stays Python; a compiled module is an extension module beside its
  ``.py``, which Python imports first.
* ``python -m benchmarks.compiled measure [--into DIR] [--rounds N] [--only W ...]``
  runs each workload in a fresh process, pure (``PYTHONPATH=src``) and compiled
  (``PYTHONPATH=DIR/src``) in turn, ``N`` rounds (at least 5), and prints the CPU
  (``time.process_time``) and wall medians of both and compiled ÷ pure, the median
  of each round's ratio (below 1: the compiled build is faster).  Workloads:
  ``small_plans`` (awaited ``obelisk.run``, ``run_sync`` with async and with sync
  tools, on the 1-, 5- and 20-call plans of ``benchmarks/small_plans.py``),
  ``run_overhead`` (``run_sync`` of 1k and 10k zero-work calls, as
  ``run_overhead.py --quick``) and ``property_tests`` (the 200-example property
  test of ``benchmarks/property_tests.py``, its whole CPU time).
* The same behaviour: run tests against the build with
  ``PYTHONPATH=DIR/src python -m pytest tests/unit/grammar tests/unit/runtime ...``
  (a compiled module's ``__file__`` ends in ``.so``).

docs/performance.md ("A compiled build") gives the last measurement and the decision.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = ["MODULES", "build", "measure"]

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_INTO = Path("/tmp/obelisk-mypyc")

MODULES = (
    "obelisk/diagnostics.py",
    "obelisk/grammar/nodes.py",
    "obelisk/grammar/parser.py",
    "obelisk/grammar/paths.py",
    "obelisk/interpreter/analysis/accesses.py",
    "obelisk/interpreter/analysis/arguments.py",
    "obelisk/interpreter/analysis/check.py",
    "obelisk/interpreter/analysis/edges.py",
    "obelisk/interpreter/analysis/graph.py",
    "obelisk/interpreter/analysis/path_index.py",
    "obelisk/interpreter/analysis/reference_types.py",
    "obelisk/interpreter/analysis/result.py",
    "obelisk/interpreter/runtime/commit_order.py",
    "obelisk/interpreter/runtime/dispatch.py",
    "obelisk/interpreter/runtime/engine.py",
    "obelisk/interpreter/runtime/invoke.py",
    "obelisk/interpreter/runtime/outcome.py",
    "obelisk/interpreter/runtime/readiness.py",
    "obelisk/interpreter/runtime/records.py",
    "obelisk/interpreter/runtime/run.py",
    "obelisk/interpreter/runtime/settling.py",
    "obelisk/interpreter/runtime/state.py",
    "obelisk/interpreter/runtime/write_log.py",
)
"""The modules compiled: those with the most of obelisk's own CPU time on small plans
(a profile of a 5-call plan), less ``interpreter/plan/model.py`` and ``plain.py``,
which keep a call's fields in the ``__dict__`` of a plain holder object (a native
class has none)."""

_MYPY_CONFIG = """\
[mypy]
strict = True
mypy_path = src

[mypy-jsonpath_ng.*,jsonschema.*,lark.*,hypothesis_jsonschema.*,re2.*,re2,litellm,litellm.*]
ignore_missing_imports = True
"""


_MARKER = "OBELISK_COMPILED_BUILD"


def build(into: Path = DEFAULT_INTO) -> float:
    """Copy ``src/`` to ``into/src`` and compile :data:`MODULES` there; the seconds it took."""
    if into.exists():  # only a folder an earlier build made is replaced
        if not (into / _MARKER).exists():
            raise SystemExit(f"{into} exists and was not made by this script: not replaced")
        shutil.rmtree(into)
    into.mkdir(parents=True)
    (into / _MARKER).write_text("made by python -m benchmarks.compiled build\n")
    shutil.copytree(ROOT / "src", into / "src", ignore=shutil.ignore_patterns("__pycache__"))
    (into / "mypy.ini").write_text(_MYPY_CONFIG)
    start = time.perf_counter()
    command = [sys.executable, "-m", "mypyc", "--config-file", "../mypy.ini", *MODULES]
    subprocess.run(command, cwd=into / "src", check=True)
    return time.perf_counter() - start


# --- one workload in this process (the child) ------------------------------------


def _mean_times(action: Callable[[], Any], runs: int) -> tuple[float, float]:
    from .timing import fresh

    action()  # warm
    cpu = wall = 0.0
    for _ in range(runs):
        fresh()
        start_cpu, start_wall = time.process_time(), time.perf_counter()
        action()
        cpu += time.process_time() - start_cpu
        wall += time.perf_counter() - start_wall
    return cpu / runs, wall / runs


def _small_plans() -> dict[str, tuple[float, float]]:
    import obelisk

    from .run_overhead import layered, plan_for
    from .small_plans import SIZES, zero, zero_sync

    found: dict[str, tuple[float, float]] = {}
    loop = asyncio.new_event_loop()
    try:
        for n in SIZES:
            plan = plan_for(layered(n, width=2))
            found[f"awaited run, {n} calls"] = _mean_times(
                lambda plan=plan: loop.run_until_complete(obelisk.run(plan, [zero])), 100
            )
            found[f"run_sync, {n} calls"] = _mean_times(
                lambda plan=plan: obelisk.run_sync(plan, [zero]), 100
            )
            found[f"run_sync sync tools, {n} calls"] = _mean_times(
                lambda plan=plan: obelisk.run_sync(plan, [zero_sync]), 100
            )
    finally:
        loop.close()
    return found


def _run_overhead() -> dict[str, tuple[float, float]]:
    import obelisk

    from .run_overhead import layered, plan_for, zero

    found = {}
    for n in (1_000, 10_000):
        plan = plan_for(layered(n))
        cpu, wall = _mean_times(lambda plan=plan: obelisk.run_sync(plan, [zero]), 3)
        found[f"run_sync, {n:,} calls (per call)"] = (cpu / n, wall / n)
    return found


def _property_tests() -> dict[str, tuple[float, float]]:
    from .property_tests import EXAMPLES, _test

    _test(10)
    return {f"property test, {EXAMPLES} examples": _mean_times(lambda: _test(EXAMPLES), 1)}


WORKLOADS: dict[str, Callable[[], dict[str, tuple[float, float]]]] = {
    "small_plans": _small_plans,
    "run_overhead": _run_overhead,
    "property_tests": _property_tests,
}


def _compiled_modules() -> int:
    return sum(
        1
        for name, module in list(sys.modules.items())
        if name.startswith("obelisk") and str(getattr(module, "__file__", "")).endswith(".so")
    )


def _child(workload: str) -> None:
    found = WORKLOADS[workload]()
    print(json.dumps({"compiled_modules": _compiled_modules(), "times": found}))


# --- the parent: both builds in turn ---------------------------------------------


def _run_child(workload: str, src: Path) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(src), str(ROOT)])}
    command = [sys.executable, "-m", "benchmarks.compiled", "_child", workload]
    done = subprocess.run(command, env=env, cwd=ROOT, check=True, capture_output=True, text=True)
    found: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return found


def _median_ratio(top: list[Any], bottom: list[Any], which: int) -> float:
    """The median of each round's ``top ÷ bottom`` (``which``: 0 CPU, 1 wall)."""
    return statistics.median(t[which] / b[which] for t, b in zip(top, bottom, strict=True))


def measure(into: Path, rounds: int, workloads: list[str]) -> dict[str, Any]:
    """Per workload figure: the CPU and wall medians (seconds) of both builds and the
    median of each round's compiled ÷ pure."""
    samples: dict[str, dict[str, list[tuple[float, float]]]] = {"pure": {}, "compiled": {}}
    modules = {}
    for _ in range(rounds):
        for workload in workloads:
            for build_name, src in (("pure", ROOT / "src"), ("compiled", into / "src")):
                found = _run_child(workload, src)
                modules[build_name] = found["compiled_modules"]
                for figure, times in found["times"].items():
                    samples[build_name].setdefault(figure, []).append(tuple(times))
    rows = []
    for figure, pure in samples["pure"].items():
        compiled = samples["compiled"][figure]
        rows.append(
            {
                "figure": figure,
                "pure_cpu": statistics.median(p[0] for p in pure),
                "compiled_cpu": statistics.median(c[0] for c in compiled),
                "pure_wall": statistics.median(p[1] for p in pure),
                "compiled_wall": statistics.median(c[1] for c in compiled),
                "cpu_ratio": _median_ratio(compiled, pure, 0),
                "wall_ratio": _median_ratio(compiled, pure, 1),
            }
        )
    return {"rounds": rounds, "compiled_modules": modules, "rows": rows}


def report(found: dict[str, Any]) -> str:
    """A Markdown table of :func:`measure`'s figures."""
    lines = [
        f"Medians of {found['rounds']} rounds; modules compiled (pure / compiled build): "
        f"{found['compiled_modules'].get('pure')} / {found['compiled_modules'].get('compiled')}.",
        "",
        "| workload | pure CPU | compiled CPU | compiled ÷ pure, CPU | speed-up | ÷ wall |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for row in found["rows"]:
        lines.append(
            f"| {row['figure']} | {row['pure_cpu'] * 1e6:,.1f} µs "
            f"| {row['compiled_cpu'] * 1e6:,.1f} µs | {row['cpu_ratio']:.3f} "
            f"| {1 / row['cpu_ratio']:.2f}x | {row['wall_ratio']:.3f} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("action", choices=["build", "measure", "_child"])
    parser.add_argument("workload", nargs="?", help="(for _child)")
    parser.add_argument("--into", type=Path, default=DEFAULT_INTO)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--only", nargs="*", choices=sorted(WORKLOADS), default=None)
    args = parser.parse_args(argv)
    if args.action == "_child":
        _child(args.workload)
    elif args.action == "build":
        print(f"built in {build(args.into):.0f} s (wall)")
    else:
        found = measure(args.into, max(args.rounds, 5), args.only or list(WORKLOADS))
        print(report(found))
    return 0


if __name__ == "__main__":
    sys.exit(main())
