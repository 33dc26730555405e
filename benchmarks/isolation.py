"""What ``isolation="process"`` costs (docs/tools.md).

A plan of ``calls`` independent zero-work sync calls, run with the tool in worker
threads (the default) and in worker processes.  Reported, medians of ``repeat`` runs
(at least 5), CPU time (``time.process_time``, this process only: the workers' own
CPU is not counted) beside wall time: µs per call for each, and the ratio process ÷
thread.  The process pool starts with each run, so its start-up is in the figure.

Run ``python -m benchmarks.isolation [--quick] [--repeat N] [--json]``; ``python -m
benchmarks`` includes it.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from typing import Any

import obelisk


def zero(n: int) -> int:
    """A zero-work sync tool (module level: worker processes find it by name)."""
    return n


THREAD = obelisk.Tool.from_function(zero, name="zero")
PROCESS = obelisk.Tool.from_function(zero, name="zero", isolation="process")


def timed(tool: obelisk.Tool, calls: int, repeat: int) -> dict[str, float]:
    plan = [{"_tool": "zero", "n": i, "_outputPath": f"†state.r{i}"} for i in range(calls)]
    cpu, wall = [], []
    for _ in range(max(repeat, 5)):
        c0, w0 = time.process_time(), time.perf_counter()
        result = obelisk.run_sync(plan, [tool])
        cpu.append(time.process_time() - c0)
        wall.append(time.perf_counter() - w0)
        assert result.status == "completed", result.status
    return {
        "cpu_us": statistics.median(cpu) / calls * 1e6,
        "wall_us": statistics.median(wall) / calls * 1e6,
    }


def collect(quick: bool, repeat: int) -> dict[str, Any]:
    calls = 50 if quick else 500
    thread, process = timed(THREAD, calls, repeat), timed(PROCESS, calls, repeat)
    return {
        "calls": calls,
        "thread": thread,
        "process": process,
        "ratio_wall": process["wall_us"] / thread["wall_us"],
    }


def markdown(results: dict[str, Any]) -> str:
    t, p = results["thread"], results["process"]
    return (
        f"**Process isolation** ({results['calls']} zero-work sync calls, pool start-up "
        f"included): in threads {t['wall_us']:,.0f} µs wall ({t['cpu_us']:,.0f} µs CPU) per "
        f"call; in worker processes {p['wall_us']:,.0f} µs wall ({p['cpu_us']:,.0f} µs CPU "
        f"in this process) per call, {results['ratio_wall']:.1f}x.\n"
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
