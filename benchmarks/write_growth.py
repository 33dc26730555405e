"""N calls writing into one path, and the zero-work overhead, in CPU time.

* **writes**: ``run_sync`` of N = 2,000 and 8,000 calls each writing a small value
  into ``†state.m`` with ``push``, ``merge``, ``assign`` or ``concat``.  Reported: the
  median CPU time (``time.process_time``) and wall time of ``--repeat`` runs, and the
  ``tracemalloc`` peak of one more.  Linear growth gives an 8k/2k ratio near 4.
* **overhead**: ``run_sync`` of the 10,000-call zero-work plan of
  ``benchmarks/run_overhead.py``, CPU and wall time (medians).

Run ``python benchmarks/write_growth.py [writes|overhead] [--repeat N]``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

import obelisk
from obelisk.grammar.parser import EXPRESSION_CACHE


@obelisk.tool
async def small(i: int) -> dict[str, int]:
    """A one-key object."""
    return {f"k{i}": i}


@obelisk.tool
async def item(i: int) -> int:
    """A number."""
    return i


@obelisk.tool
async def one(i: int) -> list[int]:
    """A one-item list."""
    return [i]


TOOL = {"push": "item", "merge": "small", "assign": "small", "concat": "one"}


def plan(n: int, method: str) -> list[dict[str, Any]]:
    return [
        {"_tool": TOOL[method], "i": i, "_outputPath": "†state.m", "_outputMethod": method}
        for i in range(n)
    ]


def medians(action: Callable[[], Any], repeat: int) -> tuple[float, float]:
    """Median CPU and wall seconds of ``repeat`` runs of ``action``."""
    cpus, walls = [], []
    for _ in range(repeat):
        EXPRESSION_CACHE.clear()
        wall, cpu = time.perf_counter(), time.process_time()
        action()
        cpus.append(time.process_time() - cpu)
        walls.append(time.perf_counter() - wall)
    return statistics.median(cpus), statistics.median(walls)


def writes(repeat: int) -> None:
    for method in TOOL:
        for n in (2_000, 8_000):
            calls = plan(n, method)

            def action(calls: list[dict[str, Any]] = calls) -> None:
                obelisk.run_sync(calls, [small, item, one])

            cpu, wall = medians(action, repeat)
            tracemalloc.start()
            action()
            peak = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
            print(
                f"{method:7s} N={n:5d} cpu={cpu * 1000:8.1f} ms wall={wall * 1000:8.1f} ms "
                f"peak={peak / 1e6:6.1f} MB",
                flush=True,
            )


def overhead(repeat: int) -> None:
    sys.path.insert(0, str(Path(__file__).parent))
    from run_overhead import layered, plan_for, zero

    calls = plan_for(layered(10_000))
    cpu, wall = medians(lambda: obelisk.run_sync(calls, [zero]), repeat)
    print(f"overhead 10k calls: cpu={cpu * 1000:.1f} ms wall={wall * 1000:.1f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("what", choices=["writes", "overhead"], nargs="?", default="writes")
    parser.add_argument("--repeat", type=int, default=5)
    arguments = parser.parse_args()
    (writes if arguments.what == "writes" else overhead)(arguments.repeat)


if __name__ == "__main__":
    main()
