"""What ``obelisk.run_many`` costs, locally and on Ray, and what a remote call costs
(docs/scale.md, "How far one driver goes").

- **Many runs**: ``runs`` small plans (two calls of a zero-work sync tool, the second
  reading the first) with the local executor (asyncio, this process), then with
  ``obelisk.RayExecutor`` on a Ray instance this benchmark starts with 1 and then 2 CPUs
  (each run a Ray task; ``ray_runs`` of them, fewer by default: Ray's per-task cost
  makes 10,000 take minutes on a small machine).  Reported: wall time, runs and calls
  per second.
- **Per-call dispatch**: one run of ``calls`` independent calls of a zero-work tool,
  local against ``remote=True`` under ``RayExecutor(runs_on="driver")`` (each call a
  Ray task; 2 CPUs): µs per call, wall time.

Run ``python -m benchmarks.run_many [--quick] [--runs N] [--ray-runs N] [--calls N]
[--no-ray] [--json]``.  Needs Ray for its Ray parts (``pip install -e '.[ray]'``); without
it they are left out, saying so.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from typing import Any

import obelisk

PLAN = [
    {"_tool": "bump", "n": "†input.n", "_outputPath": "†state.a"},
    {"_tool": "bump", "n": "†state.a", "_outputPath": "†state.b"},
]


@obelisk.tool(blocking=False)
def bump(n: int) -> int:
    "n + 1."
    return n + 1


@obelisk.tool(remote=True, num_cpus=1)
def far(n: int) -> int:
    "n + 1, as a Ray task under a RayExecutor."
    return n + 1


@obelisk.tool(blocking=False)
def near(n: int) -> int:
    "n + 1, here."
    return n + 1


def many_runs(runs: int, executor: Any = None, concurrency: int = 64) -> dict[str, float]:
    """``runs`` runs of :data:`PLAN`: wall seconds, runs and calls per second."""
    inputs = [{"n": n} for n in range(runs)]
    started = time.perf_counter()
    results = obelisk.run_many_sync(
        inputs, [bump], plan=PLAN, concurrency=concurrency, executor=executor
    )
    wall = time.perf_counter() - started
    assert all(r.status == "completed" for r in results), results[0]
    return {
        "runs": runs,
        "seconds": wall,
        "runs_per_s": runs / wall,
        "calls_per_s": 2 * runs / wall,
    }


def per_call(calls: int, tool: obelisk.Tool, executor: Any = None) -> dict[str, float]:
    """One run of ``calls`` independent calls of ``tool``: µs per call, wall seconds."""
    plan = [{"_tool": tool.name, "n": i, "_outputPath": f"†state.c{i}"} for i in range(calls)]
    started = time.perf_counter()
    if executor is None:
        result = obelisk.run_sync(plan, [tool], concurrency=64)
    else:
        with executor:
            result = obelisk.run_sync(plan, [tool], concurrency=64)
    wall = time.perf_counter() - started
    assert result.status == "completed", result.calls[0].error
    return {"calls": calls, "seconds": wall, "us_per_call": wall / calls * 1e6}


def _ray_part(cpus: int, ray_runs: int, calls: int) -> dict[str, Any]:
    import ray

    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    # the machine is shared: Ray's memory monitor would kill workers for others' memory
    os.environ.setdefault("RAY_memory_monitor_refresh_ms", "0")
    ray.init(num_cpus=cpus, include_dashboard=False, log_to_driver=False)
    try:
        executor = obelisk.RayExecutor()
        many_runs(min(ray_runs, 20), executor)  # workers started, functions exported
        found: dict[str, Any] = {"many_runs": many_runs(ray_runs, executor)}
        if calls:
            remote = obelisk.RayExecutor(runs_on="driver")
            per_call(min(calls, 20), far, remote)  # warm
            found["per_call"] = per_call(calls, far, remote)
        return found
    finally:
        ray.shutdown()


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="200 runs, 100 on Ray, 50 calls")
    parser.add_argument("--runs", type=int, default=10_000)
    parser.add_argument("--ray-runs", type=int, default=2_000)
    parser.add_argument("--calls", type=int, default=500)
    parser.add_argument("--no-ray", action="store_true")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    if args.quick:
        args.runs, args.ray_runs, args.calls = 200, 100, 50
    many_runs(min(args.runs, 100))  # warm
    found: dict[str, Any] = {
        "local": many_runs(args.runs),
        "local_per_call": per_call(args.calls, near),
    }
    if not args.no_ray:
        try:
            import ray  # noqa: F401
        except ImportError:
            found["ray"] = "left out: Ray is not installed (pip install -e '.[ray]')"
        else:
            for cpus in (1, 2):
                found[f"ray_{cpus}"] = _ray_part(
                    cpus, args.ray_runs, args.calls if cpus == 2 else 0
                )
    if args.json:
        print(json.dumps(found, indent=2))
    else:
        _report(found)
    return found


def _report(found: dict[str, Any]) -> None:
    print("| executor | runs | seconds | runs/s | calls/s |")
    print("|---|---|---|---|---|")
    for name, label in (("local", "local"), ("ray_1", "Ray, 1 CPU"), ("ray_2", "Ray, 2 CPUs")):
        part = found.get(name)
        if isinstance(part, dict):
            m = part.get("many_runs", part)
            print(f"| {label} | {m['runs']} | {m['seconds']:.2f} | {m['runs_per_s']:.0f} "
                  f"| {m['calls_per_s']:.0f} |")  # fmt: skip
    print()
    print("| one run's calls | calls | µs per call |")
    print("|---|---|---|")
    local = found["local_per_call"]
    print(f"| local | {local['calls']} | {local['us_per_call']:.0f} |")
    ray_2 = found.get("ray_2")
    if isinstance(ray_2, dict) and "per_call" in ray_2:
        remote = ray_2["per_call"]
        print(f"| remote=True on Ray (2 CPUs) | {remote['calls']} | {remote['us_per_call']:.0f} |")
    if isinstance(found.get("ray"), str):
        print(found["ray"])


if __name__ == "__main__":
    main(sys.argv[1:])
