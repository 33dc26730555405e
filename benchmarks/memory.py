"""Memory per call (issue 31): peak RSS of big runs, what ``check`` builds, what a
result keeps.

Each figure is measured in a fresh child process, so one does not inherit another's
heap:

* **peak** (target: a 1M-call plan peaks ≤ 1.5 GiB): ``obelisk.run_sync`` of the
  layered plan of ``run_overhead.py`` (zero-work async tools), given as a list of
  call objects built in the child; the child's peak RSS (``resource.getrusage``'s
  ``ru_maxrss``), and what the run added to the RSS the child had before it (the
  interpreter, obelisk and the plan's own objects), per call.
* **check** (target ≤ 1 KiB per call): ``tracemalloc``'s count of the bytes still
  held by ``obelisk.check``'s result (the parsed plan, its graph), per call.
* **kept** (nothing of the check unless asked for): the bytes a :class:`RunResult`
  keeps once the run is over and everything else is dropped, per call: its state,
  records and write log.
* **payload** (target ≤ 4 KiB per call at 100k): the peak RSS a run of tools
  returning 0.5 KB JSON objects (``payload.py``) adds, per call.

Run ``python -m benchmarks.memory [--calls N ...]``; the default sizes take about a
minute on a quiet machine, 1M calls several minutes and about a gigabyte.
"""

from __future__ import annotations

import argparse
import gc
import json
import resource
import subprocess
import sys
import tracemalloc
from pathlib import Path
from typing import Any

__all__ = ["child", "measure", "report"]

KIB = 1024


def _rss_kib() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def _plan(kind: str, n: int) -> tuple[list[Any], list[Any]]:
    from . import payload
    from .run_overhead import layered, plan_for
    from .small_plans import zero

    deps = layered(n)
    if kind == "int":
        return plan_for(deps), [zero]
    found = payload.kind("0.5 KB")
    return payload.plan_for(deps, found), [found.tool]


def _peak(kind: str, n: int) -> dict[str, float]:
    import obelisk

    plan, tools = _plan(kind, n)
    obelisk.check(plan[:10], tools)  # imports and first-use schemas, outside the figure
    gc.collect()
    before = _rss_kib()
    result = obelisk.run_sync(plan, tools)
    assert result.status == "completed", result.status
    peak = _rss_kib()
    return {"before_kib": before, "peak_kib": peak, "added_per_call": (peak - before) * KIB / n}


def _traced(n: int) -> dict[str, float]:
    import obelisk

    plan, tools = _plan("int", n)
    obelisk.check(plan[:10], tools)
    gc.collect()
    tracemalloc.start()
    checked = obelisk.check(plan, tools)
    gc.collect()
    check_bytes = tracemalloc.get_traced_memory()[0]
    del checked
    gc.collect()
    base = tracemalloc.get_traced_memory()[0]
    result = obelisk.run_sync(plan, tools)
    gc.collect()
    kept = tracemalloc.get_traced_memory()[0] - base
    tracemalloc.stop()
    assert result.status == "completed", result.status
    return {"check_per_call": check_bytes / n, "kept_per_call": kept / n}


def child(what: str, kind: str, n: int) -> dict[str, float]:
    """One measurement in this process (the parent runs it in a fresh child)."""
    return _traced(n) if what == "traced" else _peak(kind, n)


def _in_child(what: str, kind: str, n: int) -> dict[str, float]:
    command = [sys.executable, "-m", "benchmarks.memory", "--child", what, kind, str(n)]
    root = Path(__file__).resolve().parents[1]  # benchmarks/ is a package there
    out = subprocess.run(command, check=True, capture_output=True, text=True, cwd=root).stdout
    found: dict[str, float] = json.loads(out.splitlines()[-1])
    return found


def measure(peak_sizes: tuple[int, ...], traced: int, payload: int) -> dict[str, Any]:
    """Every figure of the module's docstring, each in its own child process."""
    return {
        "peak": [{"calls": n, **_in_child("peak", "int", n)} for n in peak_sizes],
        "traced": {"calls": traced, **_in_child("traced", "int", traced)},
        "payload": {"calls": payload, **_in_child("peak", "0.5 KB", payload)},
    }


def report(found: dict[str, Any]) -> str:
    """A Markdown table of :func:`measure`'s figures."""
    lines = ["| workload | calls | figure | measured | target |", "|---|---:|---|---:|---:|"]
    for row in found["peak"]:
        lines.append(
            f"| zero-work run | {row['calls']:,} | peak RSS (added by the run per call) "
            f"| {row['peak_kib'] / KIB:,.0f} MiB ({row['added_per_call']:,.0f} B) "
            "| ≤ 1.5 GiB at 1M |"
        )
    traced, pay = found["traced"], found["payload"]
    lines += [
        f"| `check` | {traced['calls']:,} | its result, per call (tracemalloc) "
        f"| {traced['check_per_call']:,.0f} B | ≤ 1,024 B |",
        f"| zero-work run | {traced['calls']:,} | kept by the `RunResult`, per call "
        f"| {traced['kept_per_call']:,.0f} B | nothing of the check |",
        f"| 0.5 KB results | {pay['calls']:,} | peak RSS added by the run, per call "
        f"| {pay['added_per_call']:,.0f} B | ≤ 4,096 B |",
    ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, nargs="*", default=[100_000])
    parser.add_argument("--traced", type=int, default=100_000)
    parser.add_argument("--payload", type=int, default=100_000)
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        what, kind, n = args.child
        print(json.dumps(child(what, kind, int(n))))
        return
    print(report(measure(tuple(args.calls), args.traced, args.payload)))


if __name__ == "__main__":
    main()
