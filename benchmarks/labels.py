"""What labels and policies cost a run (docs/security.md, docs/performance.md "Labels").

The run-overhead workload (``run_overhead.py``: zero-work async calls in a layered DAG,
50 wide, each call reading two calls of the layer before; the plan checked as never
seen) is run four ways, round by round so that the machine's drift hits them alike:

* **off**: ``policy="off"`` and no tool that declares a label: the run tracks no label
  (the engine holds ``None``); the figure every other row is compared with;
* **strict**: ``policy="strict"``, nothing labelled: every call's arguments are read
  for labels and every call is decided, all of them trusted;
* **untrusted input**: ``policy="off"``, ``input_labels`` marking the input
  untrusted, and the first layer reading it: labels flow through the whole DAG (every
  result is untrusted, with its sources);
* **untrusted tool**: ``policy="strict"`` and the tool declared
  ``output_trust="untrusted"``: every result is untrusted from its own call, and
  every call is decided (no tool writes the world, so none is asked about).

Reported: µs per call, wall and CPU (``time.perf_counter`` / ``time.process_time``),
medians of ``--repeat`` rounds (at least 5), and each way's CPU ratio to **off** in the
same rounds.  The target (issue 28): ``policy="off"`` with no labelled tool costs at
most 3% more than before labels existed (that comparison needs the code before, so it
is made with a paired A/B of two source trees, not here); the cost with labels on is
this table.

Run ``python -m benchmarks.labels [--repeat N] [--calls N ...]``.
"""

from __future__ import annotations

import argparse
import gc
import platform
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

import obelisk

from .run_overhead import layered, plan_for
from .timing import fresh

__all__ = ["WAYS", "main", "measure"]


async def _zero(a: int = 0, b: int = 0) -> int:
    """Zero work."""
    return 0


PLAIN = obelisk.Tool.from_function(_zero, name="zero")
UNTRUSTED = obelisk.Tool.from_function(_zero, name="zero", output_trust="untrusted")

WAYS: dict[str, tuple[obelisk.Tool, dict[str, Any]]] = {
    "off": (PLAIN, {}),
    "strict": (PLAIN, {"policy": "strict"}),
    "untrusted input": (PLAIN, {"input_labels": {"†input.x": "untrusted"}}),
    "untrusted tool": (UNTRUSTED, {"policy": "strict"}),
}
"""The ways a run is made: its tool and the keywords of ``run_sync``."""


def _plan(calls: int) -> list[dict[str, Any]]:
    """The layered plan, its first layer reading ``†input.x``."""
    plan = plan_for(layered(calls))
    for call in plan:
        if "a" not in call:
            call["a"] = "†input.x"
    return plan


def _timed(action: Callable[[], Any]) -> tuple[float, float]:
    fresh()
    gc.collect()
    wall, cpu = time.perf_counter(), time.process_time()
    action()
    return time.perf_counter() - wall, time.process_time() - cpu


def measure(calls: int, repeat: int) -> dict[str, Any]:
    """Every way, ``repeat`` rounds, on a layered plan of ``calls`` calls:
    ``{"calls", <way>: {"wall", "cpu", "ratio"}}`` (µs per call; ``ratio``: CPU ÷
    the ``off`` way's CPU, the median of the rounds' ratios)."""
    plan = _plan(calls)

    def runner(tool: obelisk.Tool, options: dict[str, Any]) -> Callable[[], None]:
        def run() -> None:
            result = obelisk.run_sync(plan, [tool], input={"x": 1}, **options)
            assert result.status == "completed", result.status

        return run

    runs = {name: runner(*way) for name, way in WAYS.items()}
    for run in runs.values():
        run()  # warm: imports, the thread pool
    samples: dict[str, list[tuple[float, float]]] = {name: [] for name in runs}
    for _ in range(repeat):
        for name, run in runs.items():
            samples[name].append(_timed(run))
    report: dict[str, Any] = {"calls": calls}
    for name, pairs in samples.items():
        ratios = [p[1] / base[1] for p, base in zip(pairs, samples["off"], strict=True)]
        report[name] = {
            "wall": statistics.median(p[0] for p in pairs) / calls * 1e6,
            "cpu": statistics.median(p[1] for p in pairs) / calls * 1e6,
            "ratio": statistics.median(ratios),
        }
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="rounds (default 5)")
    parser.add_argument("--calls", type=int, nargs="+", default=[1_000, 10_000])
    options = parser.parse_args(argv)
    print(f"Python {platform.python_version()}, {platform.machine()}, {sys.platform}")
    print(f"medians of {options.repeat} rounds; µs per call, wall / CPU; CPU ÷ off")
    print("| calls | way | wall µs/call | CPU µs/call | CPU ÷ off |")
    print("|---:|---|---:|---:|---:|")
    for calls in options.calls:
        report = measure(calls, options.repeat)
        for name in WAYS:
            row = report[name]
            print(
                f"| {calls:,} | {name} | {row['wall']:.1f} | {row['cpu']:.1f} "
                f"| {row['ratio']:.2f} |"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
