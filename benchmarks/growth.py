"""How ``check`` and ``run_sync`` grow with the plan, shape by shape: the exponents.

For each plan shape below, ``obelisk.check`` and ``obelisk.run_sync`` are timed at
n and 4n calls (medians of ``--repeat`` runs, default 5, as wall time beside CPU
time, ``benchmarks/timing.py``), and the growth exponent is
``log(t(4n) / t(n)) / log(4)``: 1.0 is linear, 2.0 quadratic.  Peak memory is
traced once per shape, stage and size (``tracemalloc``, in this process) and its
exponent given the same way.  The shapes (docs/limits.md, "Work that cannot blow
up"):

* ``one_path``: n calls that all set ``†state.x`` (one ``write_conflict`` group);
* ``world_writes``: n calls of a tool with ``effects={"db": "write"}`` (run in
  plan order, one order-only edge each);
* ``unresolved``: n calls each reading a ``†state.missing<i>`` that nothing writes
  (``unresolved_reference`` with its did-you-mean; ``run_sync`` refuses the plan);
* ``alternatives``: n calls with output path ``†state.a<i> || †state.b || †state.c``;
* ``wildcard``: n/2 writers of ``†state.items.k<i>`` and n/2 readers of
  ``†state.items[*]`` (n²/4 edges; each reader's argument is a list of n/2 values,
  so ``run_sync`` is quadratic in its output);
* ``push`` and ``merge``: n calls that push onto, or merge into, one path.

The wildcard shape runs at a quarter of n and the unresolved one at an eighth
(their work is quadratic: inherently for the wildcard's run, and for the
did-you-mean of each unresolved reference, which compares it with every written path).  Run::

    python -m benchmarks.growth             # n = 1,500 and 6,000 (about a minute of CPU)
    python -m benchmarks.growth --quick     # n = 250 and 1,000, 2 runs (seconds)
    python -m benchmarks.growth --json
"""

from __future__ import annotations

import argparse
import json
import math
import platform
import sys
import tracemalloc
from collections.abc import Callable
from typing import Any

import obelisk
from obelisk.errors import PlanError

from .timing import Times, fresh, median_times

__all__ = ["SHAPES", "STAGES", "base_size", "collect", "exponent", "main", "markdown", "plan_for"]


@obelisk.tool
async def put(i: int) -> int:
    """Return ``i``."""
    return i


@obelisk.tool(effects={"db": "write"})
async def store(i: int) -> int:
    """Write ``i`` to the database (an effect only: nothing is stored)."""
    return i


@obelisk.tool
async def entry(i: int) -> dict[str, int]:
    """One key, ``k<i>``, for a merge."""
    return {f"k{i}": i}


@obelisk.tool
async def count(values: list[Any]) -> int:
    """How many values there are."""
    return len(values)


TOOLS = [put, store, entry, count]


def _one_path(n: int) -> list[dict[str, Any]]:
    return [{"_tool": "put", "i": i, "_outputPath": "†state.x"} for i in range(n)]


def _world_writes(n: int) -> list[dict[str, Any]]:
    return [{"_tool": "store", "i": i, "_outputPath": f"†state.s{i}"} for i in range(n)]


def _unresolved(n: int) -> list[dict[str, Any]]:
    return [
        {"_tool": "put", "i": f"†state.missing{i}", "_outputPath": f"†state.o{i}"} for i in range(n)
    ]


def _alternatives(n: int) -> list[dict[str, Any]]:
    return [
        {"_tool": "put", "i": i, "_outputPath": f"†state.a{i} || †state.b || †state.c"}
        for i in range(n)
    ]


def _wildcard(n: int) -> list[dict[str, Any]]:
    half = n // 2
    return [{"_tool": "put", "i": i, "_outputPath": f"†state.items.k{i}"} for i in range(half)] + [
        {"_tool": "count", "values": "†state.items[*]", "_outputPath": f"†state.n{i}"}
        for i in range(n - half)
    ]


def _push(n: int) -> list[dict[str, Any]]:
    return [
        {"_tool": "put", "i": i, "_outputPath": "†state.log", "_outputMethod": "push"}
        for i in range(n)
    ]


def _merge(n: int) -> list[dict[str, Any]]:
    return [
        {"_tool": "entry", "i": i, "_outputPath": "†state.m", "_outputMethod": "merge"}
        for i in range(n)
    ]


# shape -> (plan maker, the share of n it runs at)
SHAPES: dict[str, tuple[Callable[[int], list[dict[str, Any]]], float]] = {
    "one_path": (_one_path, 1.0),
    "world_writes": (_world_writes, 1.0),
    "unresolved": (_unresolved, 0.125),
    "alternatives": (_alternatives, 1.0),
    "wildcard": (_wildcard, 0.25),
    "push": (_push, 1.0),
    "merge": (_merge, 1.0),
}
STAGES = ("check", "run")


def base_size(shape: str, n: int) -> int:
    """The smaller number of calls ``shape`` is measured at: its share of ``n``."""
    return max(4, int(n * SHAPES[shape][1]))


def plan_for(shape: str, calls: int) -> str:
    """The plan's JSON text for ``shape`` with ``calls`` calls."""
    return json.dumps(SHAPES[shape][0](calls))


def _stage(stage: str, text: str) -> Callable[[], Any]:
    if stage == "check":
        return lambda: obelisk.check(text, TOOLS)

    def run() -> Any:
        try:
            return obelisk.run_sync(text, TOOLS)
        except PlanError as error:  # the unresolved shape: refused after its check
            return error

    return run


def _peak_mib(action: Callable[[], Any]) -> float:
    """Peak memory ``action`` allocates (MiB, traced)."""
    fresh()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        action()
        return (tracemalloc.get_traced_memory()[1] - before) / 2**20
    finally:
        tracemalloc.stop()


def exponent(small: float, large: float, factor: float = 4.0) -> float | None:
    """``log(large / small) / log(factor)``: 1.0 when ``large`` is ``factor`` times
    ``small`` (linear), 2.0 when ``factor²`` times (quadratic); None without data."""
    if small <= 0 or large <= 0:
        return None
    return math.log(large / small) / math.log(factor)


def measure(shape: str, stage: str, n: int, repeat: int) -> dict[str, Any]:
    """One row: times and peaks at n and 4n, and their exponents."""
    sizes: list[int] = []
    times: list[Times] = []
    peaks: list[float] = []
    small = base_size(shape, n)
    for size in (small, 4 * small):
        action = _stage(stage, plan_for(shape, size))
        sizes.append(size)
        times.append(median_times(action, repeat))
        peaks.append(_peak_mib(action))
    return {
        "shape": shape,
        "stage": stage,
        "calls": sizes,
        "times": times,
        "peak_mib": peaks,
        "exponent": {
            "wall": exponent(times[0]["wall"], times[1]["wall"], sizes[1] / sizes[0]),
            "cpu": exponent(times[0]["cpu"], times[1]["cpu"], sizes[1] / sizes[0]),
            "memory": exponent(peaks[0], peaks[1], sizes[1] / sizes[0]),
        },
    }


def collect(n: int, repeat: int, shapes: tuple[str, ...] = tuple(SHAPES)) -> dict[str, Any]:
    rows = [measure(shape, stage, n, repeat) for shape in shapes for stage in STAGES]
    return {"n": n, "repeat": repeat, "rows": rows}


def _number(value: float | None) -> str:
    return "–" if value is None else f"{value:.2f}"


def markdown(results: dict[str, Any]) -> str:
    lines = [
        f"**Growth**: `check` and `run_sync` at n and 4n calls (n = {results['n']:,}; the "
        "wildcard shape at n/4, the unresolved one at n/8), medians of "
        f"{results['repeat']} runs; exponent = log(t(4n)/t(n))/log(4), 1 is linear:",
        "",
        "| shape | stage | calls | CPU | wall | exponent (CPU) | exponent (wall) "
        "| peak memory | exponent (memory) |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for row in results["rows"]:
        small, large = row["times"]
        lines.append(
            f"| {row['shape']} | {row['stage']} | {row['calls'][0]:,} → {row['calls'][1]:,} | "
            f"{small['cpu'] * 1000:,.0f} → {large['cpu'] * 1000:,.0f} ms | "
            f"{small['wall'] * 1000:,.0f} → {large['wall'] * 1000:,.0f} ms | "
            f"{_number(row['exponent']['cpu'])} | {_number(row['exponent']['wall'])} | "
            f"{row['peak_mib'][0]:,.1f} → {row['peak_mib'][1]:,.1f} MiB | "
            f"{_number(row['exponent']['memory'])} |"
        )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--n", type=int, default=None, help="the smaller size (default 1,500)")
    parser.add_argument("--repeat", type=int, default=None, help="runs per figure (default 5)")
    parser.add_argument("--quick", action="store_true", help="n = 250, 2 runs: a smoke run")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    args = parser.parse_args(argv)
    n = args.n if args.n is not None else (250 if args.quick else 1_500)
    repeat = args.repeat if args.repeat is not None else (2 if args.quick else 5)
    results = collect(n, repeat)
    if args.json:
        print(json.dumps(results))
        return 0
    print(f"Python {platform.python_version()}, {platform.machine()}\n")
    print(markdown(results), end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
