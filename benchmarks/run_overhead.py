"""Engine overhead and makespan, as ratios to references measured in the same run.

* **overhead**: zero-work async calls in a layered DAG (50 wide, each call reads two
  calls of the layer before).  The reference is a minimal event-driven asyncio
  scheduler (``floor`` below, ~30 lines): a node starts from the completion
  callback of its last dependency; no state, no checks.  Reported: µs per call
  for both (median of ``--repeat``) and the ratio, for 1k and 10k calls (and 100k
  without ``--quick``).  obelisk's time includes checking the plan, parsed as never
  seen (the parser's expression cache is emptied before each run).
* **makespan**: a random DAG of 60 calls whose tools sleep 5-40 ms (fixed seed);
  reported: the time from the first call's start to the last call's end (from the
  call records) divided by the DAG's critical path, plus the whole ``run_sync``
  wall time, which adds checking the plan and starting the event loop.

Run ``python benchmarks/run_overhead.py [--quick] [--repeat N]``.
"""

from __future__ import annotations

import argparse
import asyncio
import platform
import random
import statistics
import sys
import time
from typing import Any

import obelisk
from obelisk.grammar.parser import EXPRESSION_CACHE


def layered(n: int, width: int = 50, seed: int = 3) -> list[list[int]]:
    """Dependencies of each node: two nodes of the previous layer."""
    rng = random.Random(seed)
    deps: list[list[int]] = []
    for i in range(n):
        layer = i // width
        if layer == 0:
            deps.append([])
            continue
        previous = (layer - 1) * width
        deps.append(sorted({previous + rng.randrange(width) for _ in range(2)}))
    return deps


async def floor(deps: list[list[int]], ms: list[int] | None = None) -> None:
    """The reference: start each node from its last dependency's completion callback.

    With ``ms``, node ``i`` sleeps ``ms[i]`` milliseconds instead of doing nothing.
    """
    n = len(deps)
    waiting = [len(d) for d in deps]
    successors: list[list[int]] = [[] for _ in range(n)]
    for node, node_deps in enumerate(deps):
        for dep in node_deps:
            successors[dep].append(node)
    loop = asyncio.get_running_loop()
    done: asyncio.Future[None] = loop.create_future()
    left = [n]

    async def work(node: int) -> int:
        if ms is not None:
            await asyncio.sleep(ms[node] / 1000)
        return node

    def finished(node: int, _task: asyncio.Task[int]) -> None:
        left[0] -= 1
        for successor in successors[node]:
            waiting[successor] -= 1
            if waiting[successor] == 0:
                start(successor)
        if left[0] == 0:
            done.set_result(None)

    def start(node: int) -> None:
        task = loop.create_task(work(node))
        task.add_done_callback(lambda t, node=node: finished(node, t))

    for node in range(n):
        if waiting[node] == 0:
            start(node)
    await done


@obelisk.tool
async def zero(a: int = 0, b: int = 0) -> int:
    """Zero work."""
    return 0


@obelisk.tool
async def nap(ms: int, a: Any = None, b: Any = None) -> int:
    """Sleep ms milliseconds."""
    await asyncio.sleep(ms / 1000)
    return ms


def plan_for(deps: list[list[int]], tool: str = "zero", ms: list[int] | None = None) -> list[Any]:
    calls = []
    for node, node_deps in enumerate(deps):
        call: dict[str, Any] = {"_tool": tool, "_outputPath": f"†state.v{node}"}
        for name, dep in zip("ab", node_deps, strict=False):
            call[name] = f"†state.v{dep}"
        if ms is not None:
            call["ms"] = ms[node]
        calls.append(call)
    return calls


def median(action: Any, repeat: int) -> float:
    return median_wall_cpu(action, repeat)[0]


def median_wall_cpu(action: Any, repeat: int) -> tuple[float, float]:
    """Medians of wall time (``time.perf_counter``) and CPU time (``time.process_time``)."""
    walls, cpus = [], []
    for _ in range(repeat):
        EXPRESSION_CACHE.clear()  # each run parses the plan as never seen
        start, cpu = time.perf_counter(), time.process_time()
        action()
        cpus.append(time.process_time() - cpu)
        walls.append(time.perf_counter() - start)
    return statistics.median(walls), statistics.median(cpus)


def overhead(n: int, repeat: int) -> dict[str, float]:
    deps = layered(n)
    plan = plan_for(deps)
    reference, reference_cpu = median_wall_cpu(lambda: asyncio.run(floor(deps)), repeat)
    seconds, cpu = median_wall_cpu(lambda: obelisk.run_sync(plan, [zero]), repeat)
    return {
        "calls": n,
        "floor_us": reference / n * 1e6,
        "obelisk_us": seconds / n * 1e6,
        "ratio": seconds / reference,
        "floor_cpu_us": reference_cpu / n * 1e6,
        "obelisk_cpu_us": cpu / n * 1e6,
        "cpu_ratio": cpu / reference_cpu,
    }


def sleeping_dag(n: int = 60, seed: int = 11) -> tuple[list[list[int]], list[int], float]:
    """The makespan DAG: ``(deps, ms per node, critical path in seconds)``; fixed seed."""
    rng = random.Random(seed)
    deps = [sorted(rng.sample(range(i), k=min(i, rng.randint(0, 2)))) for i in range(n)]
    ms = [rng.randint(5, 40) for _ in range(n)]
    finish = [0.0] * n
    for node in range(n):
        finish[node] = ms[node] + max((finish[d] for d in deps[node]), default=0)
    return deps, ms, max(finish) / 1000


def makespan(repeat: int, n: int = 60, seed: int = 11) -> dict[str, float]:
    deps, ms, critical = sleeping_dag(n, seed)
    plan = plan_for(deps, "nap", ms)
    spans = []
    walls = []
    for _ in range(repeat):
        start = time.perf_counter()
        result = obelisk.run_sync(plan, [nap])
        walls.append(time.perf_counter() - start)
        begun = min(c.started for c in result.calls if c.started is not None)
        ended = max(c.finished for c in result.calls if c.finished is not None)
        spans.append(ended - begun)
    seconds = statistics.median(spans)
    reference = median(lambda: asyncio.run(floor(deps, ms)), repeat)
    return {
        "critical_path_s": critical,
        "makespan_s": seconds,
        "ratio": seconds / critical,
        "wall_s": statistics.median(walls),
        "floor_s": reference,
        "floor_ratio": reference / critical,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="1k and 10k only, 3 repeats")
    parser.add_argument("--repeat", type=int, default=5, help="repetitions (median reported)")
    args = parser.parse_args(argv)
    repeat = 3 if args.quick else args.repeat
    sizes = [1_000, 10_000] if args.quick else [1_000, 10_000, 100_000]
    rows = [overhead(n, repeat if n < 100_000 else 1) for n in sizes]
    span = makespan(repeat)
    print(
        f"engine overhead, median of {repeat} (Python {platform.python_version()}, "
        f"{platform.machine()})\n"
    )
    print("| calls | asyncio floor | obelisk run (incl. check) | ratio |")
    print("|---:|---:|---:|---:|")
    for row in rows:
        print(
            f"| {row['calls']:,} | {row['floor_us']:.1f} / {row['floor_cpu_us']:.1f} µs/call | "
            f"{row['obelisk_us']:.1f} / {row['obelisk_cpu_us']:.1f} µs/call | "
            f"{row['ratio']:.1f}x / {row['cpu_ratio']:.1f}x |"
        )
    print("\n(wall / CPU time: time.perf_counter / time.process_time)")
    if len(rows) == 3:
        growth = rows[2]["obelisk_us"] * 10 / rows[1]["obelisk_us"]
        print(f"\n100k / 10k time: {growth:.1f}x (linear would be 10x)")
    print(
        f"\nmakespan of 60 sleeping calls (5-40 ms), first start to last end: "
        f"{span['makespan_s'] * 1000:.1f} ms; critical path "
        f"{span['critical_path_s'] * 1000:.1f} ms; ratio {span['ratio']:.3f}x "
        f"(whole run_sync incl. check and loop start: {span['wall_s'] * 1000:.1f} ms)"
    )
    print(
        f"the asyncio floor on the same DAG: {span['floor_s'] * 1000:.1f} ms, ratio "
        f"{span['floor_ratio']:.3f}x (asyncio's own timer overshoot); obelisk / floor: "
        f"{span['makespan_s'] / span['floor_s']:.3f}x"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
