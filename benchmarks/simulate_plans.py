"""Dry runs of big lazy plans (docs/simulate.md).

The plan: ``calls`` calls in layers of 10 over a chain of blocks.  ``branches``
calls spread evenly through it have an error arm (``†state.bK || †state.eK``), so
``obelisk.simulate`` explores ``2 ** branches`` scenarios; the calls after a
branching call read its result through a fallback (``†state.bK || †state.eK``), so
every call runs in every scenario: the dry run plays the whole plan 64 times, less
the beginnings scenarios share.  Every tool has a stub (no value is generated).

Figures, medians of ``repeat`` runs (at least 5), CPU time (``time.process_time``)
beside wall time (``time.perf_counter``):

* ``simulate``: seconds for ``obelisk.simulate`` of the whole plan (target: under
  2 s for 1,000 calls and 6 branches);
* ``run``: seconds for one real ``obelisk.run_sync`` of the same plan with zero-work
  tools, measured in the same process: the reference; ``simulate ÷ run`` is the
  cost of a dry run of every scenario in real runs.

Run ``python -m benchmarks.simulate_plans [--quick] [--repeat N] [--json]``;
``python -m benchmarks`` includes it.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

import obelisk


@obelisk.tool
def step(inputs: list) -> int:  # type: ignore[type-arg]
    """A zero-work step."""
    return len(inputs)


@obelisk.tool
def risky(inputs: list) -> int:  # type: ignore[type-arg]
    """A step that may fail (its plan call has an error arm)."""
    return len(inputs)


def plan_of(calls: int = 1_000, branches: int = 6, width: int = 10) -> list[dict[str, Any]]:
    """The benchmark plan (see the module docstring)."""
    every = max(calls // branches, 1)
    plan: list[dict[str, Any]] = []
    previous: list[str] = []
    layer: list[str] = []
    made = 0  # branching calls so far
    for i in range(calls):
        if i and i % width == 0:
            previous, layer = layer, []
        inputs = previous[:2] + ([f"†state.b{made - 1} || †state.e{made - 1}"] if made else [])
        if i % every == every // 2 and made < branches:
            path = f"†state.b{made} || †state.e{made}"
            plan.append({"_tool": "risky", "inputs": inputs, "_outputPath": path})
            made += 1
        else:
            plan.append({"_tool": "step", "inputs": inputs, "_outputPath": f"†state.s{i}"})
            layer.append(f"†state.s{i}")
    return plan


def timed(work: Callable[[], Any], repeat: int) -> dict[str, float]:
    cpu, wall = [], []
    for _ in range(max(repeat, 5)):
        c0, w0 = time.process_time(), time.perf_counter()
        work()
        cpu.append(time.process_time() - c0)
        wall.append(time.perf_counter() - w0)
    return {"cpu_s": statistics.median(cpu), "wall_s": statistics.median(wall)}


def collect(quick: bool, repeat: int) -> dict[str, Any]:
    """Simulate and run the plan (``quick``: 200 calls, 3 branches)."""
    calls, branches = (200, 3) if quick else (1_000, 6)
    plan = plan_of(calls, branches)
    tools = [step, risky]
    stubs = {"step": 1, "risky": [1, RuntimeError("declined")]}
    report = obelisk.simulate(plan, tools, stubs=stubs)
    assert report.total == 2**branches and report.explored == 2**branches, report.summary()
    assert all(len(s.ran) == calls for s in report.scenarios), "every call runs everywhere"
    simulated = timed(lambda: obelisk.simulate(plan, tools, stubs=stubs), repeat)
    ran = timed(lambda: obelisk.run_sync(plan, tools), repeat)
    return {
        "calls": calls,
        "branches": branches,
        "scenarios": report.explored,
        "simulate": simulated,
        "run": ran,
        "ratio_cpu": simulated["cpu_s"] / ran["cpu_s"],
    }


def markdown(results: dict[str, Any]) -> str:
    """The report section for ``results/results.md``."""
    s, r = results["simulate"], results["run"]
    return (
        f"**Dry run** (`obelisk.simulate`) of a {results['calls']:,}-call plan with "
        f"{results['branches']} binary branches ({results['scenarios']} scenarios, every "
        f"call in each): {s['cpu_s']:.2f} s CPU ({s['wall_s']:.2f} s wall); one real run of "
        f"the same plan: {r['cpu_s'] * 1000:.0f} ms CPU ({r['wall_s'] * 1000:.0f} ms wall); "
        f"the dry run of every scenario costs {results['ratio_cpu']:.1f} real runs.\n"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--json", action="store_true", help="print the raw figures as JSON")
    args = parser.parse_args(argv)
    results = collect(args.quick, args.repeat)
    sys.stdout.write(json.dumps(results, indent=2) + "\n" if args.json else markdown(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
