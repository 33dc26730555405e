"""Check and run time when many calls write one path (the ``write_conflict`` worst case).

Also: ``run_sync`` of n calls that all ``push`` onto ``†state.log`` (each waits for the
one before it to commit, in plan order): linear too.

n calls that all write ``†state.x`` and wait for nothing conflict pairwise:
n(n-1)/2 pairs.  The checker reports one warning per group of writers
(obelisk/interpreter/analysis/conflicts.py), so the time should grow about
linearly: 5x the calls, about 5x the time (the bit sets add n²/64 machine-word
operations, which show only past some 10,000 writers of one path).  Each figure is the median of
``--repeat`` runs (default 5) of ``obelisk.check`` on the plan's JSON text,
as wall time (``time.perf_counter``) and CPU time (``time.process_time``).
Run::

    python benchmarks/conflicts.py              # 1k, 2k, 5k calls
    python benchmarks/conflicts.py --json
"""

from __future__ import annotations

import argparse
import gc
import json
import platform
import statistics
import sys
import time
from typing import Any

import obelisk

SIZES = (1_000, 2_000, 5_000)


@obelisk.tool
def put(value: int) -> int:
    """Return the value."""
    return value


def make_plan(size: int) -> str:
    """``size`` calls, none reading anything, all writing ``†state.x``."""
    return json.dumps(
        [{"_tool": "put", "value": index, "_outputPath": "†state.x"} for index in range(size)]
    )


def measure(size: int, repeat: int) -> dict[str, Any]:
    text = make_plan(size)
    walls, cpus = [], []
    warnings = 0
    for _ in range(repeat):
        gc.collect()
        wall, cpu = time.perf_counter(), time.process_time()
        result = obelisk.check(text, [put])
        cpus.append(time.process_time() - cpu)
        walls.append(time.perf_counter() - wall)
        warnings = len(result.warnings)
    return {
        "calls": size,
        "wall_seconds": statistics.median(walls),
        "cpu_seconds": statistics.median(cpus),
        "warnings": warnings,
    }


def measure_pushes(size: int, repeat: int) -> dict[str, Any]:
    """Median CPU and wall seconds of ``run_sync`` of ``size`` pushes onto one list."""
    plan = [
        {"_tool": "put", "value": i, "_outputPath": "†state.log", "_outputMethod": "push"}
        for i in range(size)
    ]
    walls, cpus = [], []
    for _ in range(repeat):
        gc.collect()
        wall, cpu = time.perf_counter(), time.process_time()
        result = obelisk.run_sync(plan, [put])
        cpus.append(time.process_time() - cpu)
        walls.append(time.perf_counter() - wall)
        assert result.state["log"] == list(range(size)), "pushes out of plan order"
    return {
        "calls": size,
        "wall_seconds": statistics.median(walls),
        "cpu_seconds": statistics.median(cpus),
    }


def collect(repeat: int, sizes: tuple[int, ...] = SIZES) -> dict[str, Any]:
    rows = [measure(size, repeat) for size in sizes]
    pushes = [measure_pushes(size, repeat) for size in sizes]
    first, last = rows[0], rows[-1]
    return {
        "repeat": repeat,
        "rows": rows,
        "growth": last["wall_seconds"] / first["wall_seconds"],
        "size_growth": last["calls"] / first["calls"],
        "pushes": pushes,
        "push_growth": pushes[-1]["cpu_seconds"] / pushes[0]["cpu_seconds"],
    }


def markdown(results: dict[str, Any]) -> str:
    lines = [
        f"**Write conflicts**: `obelisk.check` of n calls that all set `†state.x`, median of "
        f"{results['repeat']} runs:",
        "",
        "| calls | wall | CPU | warnings |",
        "|---:|---:|---:|---:|",
    ]
    for row in results["rows"]:
        lines.append(
            f"| {row['calls']:,} | {row['wall_seconds'] * 1000:,.1f} ms | "
            f"{row['cpu_seconds'] * 1000:,.1f} ms | {row['warnings']} |"
        )
    lines += [
        "",
        f"{results['size_growth']:.0f}x the calls take {results['growth']:.1f}x the time "
        f"(linear: {results['size_growth']:.0f}x; before the groups, pairwise warnings took "
        "8.3 s CPU at 1k, 30 s at 2k and 215 s at 5k).",
    ]
    if "pushes" in results:
        lines += [
            "",
            "`obelisk.run_sync` of n calls that all push onto `†state.log`:",
            "",
            "| calls | wall | CPU |",
            "|---:|---:|---:|",
        ]
        for row in results["pushes"]:
            lines.append(
                f"| {row['calls']:,} | {row['wall_seconds'] * 1000:,.1f} ms | "
                f"{row['cpu_seconds'] * 1000:,.1f} ms |"
            )
        lines += [
            "",
            f"{results['size_growth']:.0f}x the pushes take {results['push_growth']:.1f}x the "
            "CPU time (before, each writer waited for every earlier one and each push copied "
            "the list: 2,500 pushes took 9.5 s CPU).",
        ]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=5, help="repetitions (median reported)")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    args = parser.parse_args(argv)
    results = collect(args.repeat)
    if args.json:
        print(json.dumps(results))
        return 0
    print(f"Python {platform.python_version()}, {platform.machine()}\n")
    print(markdown(results), end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
