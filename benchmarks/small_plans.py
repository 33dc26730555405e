"""What users feel on small plans: ``run_sync``'s own cost and sync tools (issue 31).

Every figure is measured in rounds: in each round every variant runs once, in turn,
and each ratio is the median of the ratios of one round (wall by wall, CPU by CPU),
so a machine whose speed drifts between rounds moves no ratio.  Times are medians
of the rounds, wall time / CPU time (``time.process_time``).

* **run_sync** (target ≤ 1.5x): what ``obelisk.run_sync`` adds to the same plan
  awaited in an event loop that is already running (``obelisk.run``), against what
  ``asyncio.run`` adds to the benchmark's minimal DAG runner (``floor`` of
  ``run_overhead.py``) on the same DAG: making, running and closing an event loop,
  and for ``run_sync`` also its shelter (docs/limits.md) and its worker threads.
  The whole ``run_sync`` ÷ ``asyncio.run`` of the floor is printed beside it: that
  ratio includes parsing, checking and running the plan itself.
* **small plans** (target ≤ 6x): awaited ``obelisk.run`` (parse + check + run) ÷ the
  floor awaited in the same running loop, on the same DAG.
* **sync tools** (target ≤ 1.3x on 5 calls): ``run_sync`` of 1-, 5- and 20-call
  plans of zero-work sync tools (in worker threads, the default) ÷ the same plans of
  async tools.

Run ``python -m benchmarks.small_plans [--rounds N]``.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from collections.abc import Callable
from typing import Any

import obelisk

from .run_overhead import floor, layered, plan_for
from .timing import fresh

__all__ = ["SIZES", "collect", "markdown", "measure", "report"]

SIZES = (1, 5, 20)


@obelisk.tool
async def zero(a: int = 0, b: int = 0) -> int:
    """Zero work."""
    return 0


def _zero_sync(a: int = 0, b: int = 0) -> int:
    """Zero work, blocking style."""
    return 0


zero_sync = obelisk.Tool.from_function(_zero_sync, name="zero")
"""The same tool, sync: it runs in a worker thread."""


def _timed(action: Callable[[], Any]) -> tuple[float, float]:
    fresh()
    wall, cpu = time.perf_counter(), time.process_time()
    action()
    return time.process_time() - cpu, time.perf_counter() - wall


def _rounds(variants: dict[str, Callable[[], Any]], rounds: int, runs: int) -> dict[str, Any]:
    """``runs`` runs of each variant in turn, ``rounds`` times: per variant, the
    list of each round's mean ``(cpu, wall)`` seconds of one run."""
    found: dict[str, list[tuple[float, float]]] = {name: [] for name in variants}
    for action in variants.values():  # warm every cache once
        action()
    for _ in range(rounds):
        for name, action in variants.items():
            times = [_timed(action) for _ in range(runs)]
            found[name].append((sum(t[0] for t in times) / runs, sum(t[1] for t in times) / runs))
    return found


def _median(samples: list[tuple[float, float]]) -> dict[str, float]:
    return {
        "cpu_us": statistics.median(s[0] for s in samples) * 1e6,
        "wall_us": statistics.median(s[1] for s in samples) * 1e6,
    }


def _ratio(top: list[tuple[float, float]], bottom: list[tuple[float, float]]) -> dict[str, float]:
    return {
        "cpu": statistics.median(t[0] / b[0] for t, b in zip(top, bottom, strict=True)),
        "wall": statistics.median(t[1] / b[1] for t, b in zip(top, bottom, strict=True)),
    }


def _added(
    whole: list[tuple[float, float]], inner: list[tuple[float, float]]
) -> list[tuple[float, float]]:
    return [(w[0] - i[0], w[1] - i[1]) for w, i in zip(whole, inner, strict=True)]


def run_sync_cost(n: int, rounds: int, runs: int) -> dict[str, Any]:
    """What ``run_sync`` and ``asyncio.run`` add to the same DAG awaited in a running loop."""
    deps = layered(n, width=2)
    plan = plan_for(deps)
    loop = asyncio.new_event_loop()
    try:
        found = _rounds(
            {
                "floor_awaited": lambda: loop.run_until_complete(floor(deps)),
                "floor_asyncio_run": lambda: asyncio.run(floor(deps)),
                "obelisk_awaited": lambda: loop.run_until_complete(obelisk.run(plan, [zero])),
                "obelisk_run_sync": lambda: obelisk.run_sync(plan, [zero]),
            },
            rounds,
            runs,
        )
    finally:
        loop.close()
    asyncio_adds = _added(found["floor_asyncio_run"], found["floor_awaited"])
    run_sync_adds = _added(found["obelisk_run_sync"], found["obelisk_awaited"])
    return {
        "calls": n,
        **{name: _median(samples) for name, samples in found.items()},
        "asyncio_run_adds": _median(asyncio_adds),
        "run_sync_adds": _median(run_sync_adds),
        "adds_ratio": _ratio(run_sync_adds, asyncio_adds),
        "whole_ratio": _ratio(found["obelisk_run_sync"], found["floor_asyncio_run"]),
        "awaited_ratio": _ratio(found["obelisk_awaited"], found["floor_awaited"]),
    }


def sync_tools(n: int, rounds: int, runs: int) -> dict[str, Any]:
    """``run_sync`` of ``n`` zero-work sync tools ÷ the same plan of async tools."""
    plan = plan_for(layered(n, width=2))
    found = _rounds(
        {
            "async": lambda: obelisk.run_sync(plan, [zero]),
            "sync": lambda: obelisk.run_sync(plan, [zero_sync]),
        },
        rounds,
        runs,
    )
    return {
        "calls": n,
        "async": _median(found["async"]),
        "sync": _median(found["sync"]),
        "ratio": _ratio(found["sync"], found["async"]),
    }


def measure(rounds: int = 5, runs: int = 20) -> dict[str, Any]:
    """Both workloads at every size of :data:`SIZES`."""
    return {
        "rounds": rounds,
        "runs": runs,
        "run_sync": [run_sync_cost(n, rounds, runs) for n in SIZES],
        "sync_tools": [sync_tools(n, rounds, runs) for n in SIZES],
    }


def collect(quick: bool, repeat: int) -> dict[str, Any]:
    """:func:`measure` for ``python -m benchmarks``: ``repeat`` rounds (at least 5), or
    one short round when ``quick``."""
    return measure(1, 5) if quick else measure(max(repeat, 5), 20)


def markdown(found: dict[str, Any]) -> str:
    """The report section (Markdown)."""
    return (
        "**run_sync and sync tools** on 1-, 5- and 20-call plans (`python -m "
        "benchmarks.small_plans`): what `run_sync` adds to the plan awaited in a running "
        "loop ÷ what `asyncio.run` adds to the floor on the same DAG (the whole ÷ beside "
        "it), and zero-work sync tools ÷ async ones.  " + report(found) + "\n"
    )


def _us(times: dict[str, float]) -> str:
    return f"{times['wall_us']:,.0f} / {times['cpu_us']:,.0f} µs"


def _x(ratio: dict[str, float]) -> str:
    return f"{ratio['wall']:.2f}x / {ratio['cpu']:.2f}x"


def report(found: dict[str, Any]) -> str:
    """Markdown tables of :func:`measure`'s figures (wall / CPU)."""
    lines = [
        f"Median of {found['rounds']} rounds of {found['runs']} runs each; wall / CPU.",
        "",
        "| calls | asyncio.run adds | run_sync adds | ÷ (target ≤ 1.5x) "
        "| run_sync | asyncio.run(floor) | whole ÷ |",
        "|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for row in found["run_sync"]:
        lines.append(
            f"| {row['calls']} | {_us(row['asyncio_run_adds'])} | {_us(row['run_sync_adds'])} "
            f"| {_x(row['adds_ratio'])} | {_us(row['obelisk_run_sync'])} "
            f"| {_us(row['floor_asyncio_run'])} | {_x(row['whole_ratio'])} |"
        )
    lines += [
        "",
        "| calls | awaited `obelisk.run` | floor awaited | ÷ (target ≤ 6x) |",
        "|---:|---:|---:|---:|",
    ]
    for row in found["run_sync"]:
        lines.append(
            f"| {row['calls']} | {_us(row['obelisk_awaited'])} | {_us(row['floor_awaited'])} "
            f"| {_x(row['awaited_ratio'])} |"
        )
    lines += [
        "",
        "| calls | async tools | sync tools | sync ÷ async (target ≤ 1.3x at 5) |",
        "|---:|---:|---:|---:|",
    ]
    for row in found["sync_tools"]:
        lines.append(
            f"| {row['calls']} | {_us(row['async'])} | {_us(row['sync'])} | {_x(row['ratio'])} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--runs", type=int, default=20, help="runs of a variant per round")
    args = parser.parse_args()
    print(report(measure(args.rounds, args.runs)))


if __name__ == "__main__":
    main()
