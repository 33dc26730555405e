"""Parse + check throughput on generated plans of 1k, 10k and 100k calls.

Each plan is a layered DAG: call i reads the outputs of up to two calls of the
previous layer (whole outputs and a field), one ``†input`` value, and passes two
literal arguments that are validated against the tool's schema.  Every call is
checked with schema checks (typed ``@tool`` functions).

Before each run the parser's expression cache is emptied, so each run parses the
plan as a plan it has never seen (a model's new plan).  The reference, measured in
the same run on the same text, is ``json.loads`` of
the plan: the ratio says how many times the cost of merely decoding the JSON
obelisk's whole parse + check takes.  The median of ``--repeat`` runs is
reported, as wall time (``time.perf_counter``) beside CPU time
(``time.process_time``).  Run::

    python benchmarks/check_throughput.py            # 1k, 10k, 100k
    python benchmarks/check_throughput.py --quick    # 1k, 10k only, 3 repeats
"""

from __future__ import annotations

import argparse
import gc
import json
import platform
import random
import statistics
import sys
import time
from typing import Any

import obelisk
from obelisk import Registry, tool
from obelisk.grammar.parser import EXPRESSION_CACHE


@tool
def fetch(key: str, limit: int = 10) -> dict[str, int]:
    """Fetch a record."""
    return {"value": limit}


@tool
def combine(left: dict[str, int], right: int, label: str, weight: float = 1.0) -> dict[str, int]:
    """Combine two results."""
    return {"value": right}


TOOLS = Registry([fetch, combine])


def make_plan(size: int, seed: int = 7, width: int = 50) -> list[dict[str, Any]]:
    """A layered DAG of ``size`` calls, ``width`` calls per layer."""
    rng = random.Random(seed)
    calls: list[dict[str, Any]] = []
    for index in range(size):
        layer = index // width
        if layer == 0:
            calls.append(
                {
                    "_tool": "fetch",
                    "key": "†input.keys.k" + str(index % 10),
                    "limit": rng.randint(1, 100),
                    "_outputPath": f"†state.v{index}",
                }
            )
            continue
        previous = (layer - 1) * width
        a = previous + rng.randrange(width)
        b = previous + rng.randrange(width)
        calls.append(
            {
                "_tool": "combine",
                "left": f"†state.v{a}",
                "right": f"†state.v{b}.value",
                "label": f"step {index}",
                "weight": rng.random(),
                "_outputPath": f"†state.v{index}",
            }
        )
    return calls


def median_seconds(action: Any, repeat: int) -> float:
    return median_wall_cpu(action, repeat)[0]


def median_wall_cpu(action: Any, repeat: int) -> tuple[float, float]:
    """Medians of wall time (``time.perf_counter``) and CPU time (``time.process_time``)."""
    walls, cpus = [], []
    for _ in range(repeat):
        EXPRESSION_CACHE.clear()  # each run parses the plan as never seen
        gc.collect()
        start, cpu = time.perf_counter(), time.process_time()
        action()
        cpus.append(time.process_time() - cpu)
        walls.append(time.perf_counter() - start)
    return statistics.median(walls), statistics.median(cpus)


def measure(size: int, repeat: int) -> dict[str, Any]:
    text = json.dumps(make_plan(size))
    data_input = {"keys": {f"k{i}": f"key-{i}" for i in range(10)}}

    def parse_and_check() -> None:
        result = obelisk.check(text, TOOLS, input=data_input)
        assert result.ok, result.diagnostics[:3]

    reference, reference_cpu = median_wall_cpu(lambda: json.loads(text), repeat)
    seconds, cpu_seconds = median_wall_cpu(parse_and_check, repeat)
    return {
        "calls": size,
        "seconds": seconds,
        "cpu_seconds": cpu_seconds,
        "calls_per_second": size / seconds,
        "calls_per_cpu_second": size / cpu_seconds,
        "json_loads_seconds": reference,
        "json_loads_cpu_seconds": reference_cpu,
        "ratio_to_json_loads": seconds / reference,
        "cpu_ratio_to_json_loads": cpu_seconds / reference_cpu,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="1k and 10k only, 3 repeats")
    parser.add_argument("--repeat", type=int, default=5, help="repetitions (median reported)")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    args = parser.parse_args(argv)
    sizes = [1_000, 10_000] if args.quick else [1_000, 10_000, 100_000]
    repeat = 3 if args.quick else args.repeat
    rows = [measure(size, repeat) for size in sizes]
    by_size = {row["calls"]: row for row in rows}
    growth = (
        by_size[100_000]["seconds"] / by_size[10_000]["seconds"] if 100_000 in by_size else None
    )
    machine = f"Python {platform.python_version()}, {platform.machine()}"
    if args.json:
        print(json.dumps({"machine": machine, "rows": rows, "growth_100k_over_10k": growth}))
        return 0
    print(f"parse + check, median of {repeat} ({machine})\n")
    print(
        "| calls | parse + check (wall / CPU) | calls/s (wall / CPU) "
        "| json.loads (reference) | ratio (wall / CPU) |"
    )
    print("|---:|---:|---:|---:|---:|")
    for row in rows:
        print(
            f"| {row['calls']:,} | {row['seconds'] * 1000:.1f} / "
            f"{row['cpu_seconds'] * 1000:.1f} ms | {row['calls_per_second']:,.0f} / "
            f"{row['calls_per_cpu_second']:,.0f} | {row['json_loads_seconds'] * 1000:.1f} ms | "
            f"{row['ratio_to_json_loads']:.0f}x / {row['cpu_ratio_to_json_loads']:.0f}x |"
        )
    if growth is not None:
        print(f"\n100k / 10k time: {growth:.1f}x (linear would be 10x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
