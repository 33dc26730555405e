"""The side-by-side benchmark workloads: obelisk, the asyncio floor, LangGraph, Hamilton.

Every workload runs the same DAG on every system in one process, so each ratio
compares numbers measured minutes apart on the same machine.  DAG shapes
(``deps[i]`` lists node ``i``'s dependencies):

* ``layered(n)``: 50 wide, each node reads two nodes of the layer before;
* ``chain(n)``: each node reads the one before;
* ``fan(n)``: one root, ``n - 2`` nodes reading it, one node joining them all.

Competitors come from the ``bench`` extra; a missing one is reported as skipped.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import obelisk

from .run_overhead import floor, layered, sleeping_dag
from .timing import Samples, Times, cpu_wall, median_times, paired_ratio, per_call_us

__all__ = [
    "SYSTEMS",
    "blocking",
    "chain",
    "fan",
    "growth",
    "inline_supported",
    "inline_tool",
    "makespan",
    "memory",
    "overhead",
    "side_by_side",
    "sync_tools",
]

SYSTEMS = ("floor", "obelisk", "langgraph", "hamilton")


def chain(n: int) -> list[list[int]]:
    return [[]] + [[i - 1] for i in range(1, n)]


def fan(n: int) -> list[list[int]]:
    return [[]] + [[0] for _ in range(1, n - 1)] + [list(range(1, n - 1))]


@obelisk.tool
async def zero(inputs: list[int] | None = None) -> int:
    """Zero work."""
    return 0


def _zero_blocking(inputs: list[int] | None = None) -> int:
    """Zero work, blocking style."""
    return 0


zero_sync = obelisk.Tool.from_function(_zero_blocking, name="zero_sync")
"""A sync tool: obelisk runs it in a worker thread (the default)."""


@obelisk.tool
async def nap(ms: int, inputs: list[int] | None = None) -> int:
    """Sleep ms milliseconds."""
    await asyncio.sleep(ms / 1000)
    return ms


@obelisk.tool
def block(ms: int) -> int:
    """Block the thread for ms milliseconds."""
    time.sleep(ms / 1000)
    return ms


def plan_for(deps: list[list[int]], tool: str, ms: list[int] | None = None) -> list[Any]:
    """One call per node; a call reads its dependencies' outputs as a list."""
    calls = []
    for node, node_deps in enumerate(deps):
        call: dict[str, Any] = {"_tool": tool, "_outputPath": f"†state.v{node}"}
        if node_deps:
            call["inputs"] = [f"†state.v{dep}" for dep in node_deps]
        if ms is not None:
            call["ms"] = ms[node]
        calls.append(call)
    return calls


def competitor(name: str) -> Any | None:
    """The adapter module of a competitor, or None when its library is missing."""
    try:
        if name == "langgraph":
            from .competitors import langgraph_runner

            return langgraph_runner
        from .competitors import hamilton_runner

        return hamilton_runner
    except ImportError:
        return None


def _timings(timings: list[Any]) -> Times:
    """Medians of the competitors' :class:`~benchmarks.competitors.Timing` runs."""
    return cpu_wall([(t.run_s, t.cpu_s) for t in timings])


def overhead(deps: list[list[int]], repeat: int, systems: tuple[str, ...]) -> dict[str, Any]:
    """Seconds per run (medians, wall and CPU) of zero-work nodes, per system; None
    where skipped; ``<system>_build``: a competitor's seconds to build its graph;
    ``samples``: each system's ``(wall, cpu)`` seconds, one per round.

    The systems take turns, one run each per round (floor, obelisk, LangGraph,
    Hamilton, floor, ...), so round ``i`` of two systems ran side by side and
    :func:`side_by_side` can pair them: a change in the machine's load between
    rounds moves no ratio."""
    plan = plan_for(deps, "zero")
    modules = {s: competitor(s) for s in systems if s not in ("floor", "obelisk")}
    samples: dict[str, Samples] = {s: [] for s in systems if modules.get(s, True) is not None}
    builds: dict[str, list[float]] = {s: [] for s in modules}
    for _ in range(repeat):
        for system in samples:
            if system == "floor":
                once = median_times(lambda: asyncio.run(floor(deps)), 1)
            elif system == "obelisk":
                once = median_times(lambda: obelisk.run_sync(plan, [zero]), 1)
            else:
                timing = modules[system].overhead(deps)
                builds[system].append(timing.build_s)
                once = {"wall": timing.run_s, "cpu": timing.cpu_s}
            samples[system].append((once["wall"], once["cpu"]))
    found: dict[str, Any] = {}
    for system in systems:
        found[system] = cpu_wall(samples[system]) if system in samples else None
        if builds.get(system):
            found[f"{system}_build"] = statistics.median(builds[system])
    found["samples"] = samples
    return found


def growth(small: int, large: int, repeat: int) -> dict[str, Any]:
    """obelisk's time for ``large`` zero-work calls of the layered DAG ÷ its time for
    ``small`` (linear: ``large / small``), the two sizes run in turn, one run each per
    round: ``{"small", "large", "samples": {"small": [...], "large": [...]}, "ratio"}``,
    ``ratio`` paired round by round (:func:`~benchmarks.timing.paired_ratio`)."""
    plans = {"small": plan_for(layered(small), "zero"), "large": plan_for(layered(large), "zero")}
    samples: dict[str, Samples] = {"small": [], "large": []}
    for _ in range(repeat):
        for key, plan in plans.items():
            once = median_times(lambda plan=plan: obelisk.run_sync(plan, [zero]), 1)
            samples[key].append((once["wall"], once["cpu"]))
    return {
        "small": small,
        "large": large,
        "samples": samples,
        "ratio": paired_ratio(samples["large"], samples["small"]),
    }


def side_by_side(row: dict[str, Any], system: str, reference: str) -> Times | None:
    """``system ÷ reference`` in one :func:`overhead` row: the median of the ratios of
    the two systems' runs of each round, or ``None`` where the row lacks the runs of
    one of them (a skipped system, or results saved before rounds were paired: their
    readers fall back on the ratio of the medians)."""
    pairs = row.get("samples") or {}
    if system in pairs and reference in pairs:
        return paired_ratio(pairs[system], pairs[reference])
    return None


def makespan(repeat: int, systems: tuple[str, ...], n: int = 60, seed: int = 11) -> dict[str, Any]:
    """Makespan ÷ critical path of a DAG of 5-40 ms sleeps, per system (``None`` where
    skipped); ``runs``: each system's whole run, medians of wall and CPU seconds."""
    deps, ms, critical = sleeping_dag(n, seed)
    found: dict[str, Any] = {"critical_path_s": critical, "runs": {}}
    plan = plan_for(deps, "nap", ms)
    for system in systems:
        if system == "floor":
            times = median_times(lambda: asyncio.run(floor(deps, ms)), repeat)
            found[system], found["runs"][system] = times["wall"] / critical, times
        elif system == "obelisk":
            spans, samples = [], []
            for _ in range(repeat):
                wall, cpu = time.perf_counter(), time.process_time()
                result = obelisk.run_sync(plan, [nap])
                samples.append((time.perf_counter() - wall, time.process_time() - cpu))
                begun = min(c.started or 0.0 for c in result.calls)
                ended = max(c.finished or 0.0 for c in result.calls)
                spans.append(ended - begun)
            found[system] = statistics.median(spans) / critical
            found["runs"][system] = cpu_wall(samples)
        else:
            module = competitor(system)
            if module is None:
                found[system] = found["runs"][system] = None
                continue
            timings = [module.makespan(deps, ms) for _ in range(repeat)]
            found[system] = statistics.median(t.span_s or t.run_s for t in timings) / critical
            found["runs"][system] = _timings(timings)
    return found


def inline_supported() -> bool:
    """Whether ``obelisk.Tool.from_function`` takes ``blocking=`` (sync tools run on
    the event loop with ``blocking=False``)."""
    return "blocking" in inspect.signature(obelisk.Tool.from_function).parameters


def inline_tool() -> obelisk.Tool | None:
    """``zero_sync`` declared ``blocking=False`` (run inline, no thread), or ``None``
    where this obelisk has no such option."""
    if not inline_supported():
        return None
    options: dict[str, Any] = {"blocking": False}
    return obelisk.Tool.from_function(_zero_blocking, name="zero_sync", **options)


def sync_tools(n: int, repeat: int) -> dict[str, Any]:
    """µs per call (medians, wall and CPU) of zero-work tools on the layered DAG: async
    ones, sync ones in worker threads (the default) and, where obelisk supports
    ``blocking=False``, sync ones run inline on the event loop (else ``None``)."""
    deps = layered(n)
    sync_plan, async_plan = plan_for(deps, "zero_sync"), plan_for(deps, "zero")
    found: dict[str, Any] = {"calls": n, "inline_supported": inline_supported()}
    found["async"] = median_times(lambda: obelisk.run_sync(async_plan, [zero]), repeat)
    found["threads"] = median_times(lambda: obelisk.run_sync(sync_plan, [zero_sync]), repeat)
    inline = inline_tool()
    found["inline"] = (
        None
        if inline is None
        else median_times(lambda: obelisk.run_sync(sync_plan, [inline]), repeat)
    )
    for key in ("async", "threads", "inline"):
        found[key] = per_call_us(found[key], n)
    return found


def blocking(repeat: int, systems: tuple[str, ...], n: int = 8, ms: int = 50) -> dict[str, Any]:
    """Seconds (medians, wall and CPU) for n independent blocking calls of ms
    milliseconds each, per system; None where skipped."""
    plan = [{"_tool": "block", "ms": ms, "_outputPath": f"†state.b{i}"} for i in range(n)]
    found: dict[str, Any] = {"serial_s": n * ms / 1000, "ideal_s": ms / 1000}
    for system in systems:
        if system == "obelisk":
            found[system] = median_times(lambda: obelisk.run_sync(plan, [block]), repeat)
        elif system in ("langgraph", "hamilton"):
            module = competitor(system)
            if module is None:
                found[system] = None
                continue
            kwargs = {"executor": "threads"} if system == "hamilton" else {}
            found[system] = _timings([module.blocking(n, ms, **kwargs) for _ in range(repeat)])
    return found


def _peak_rss_kib(command: list[str]) -> tuple[int, float]:
    """Peak resident set size (KiB) and CPU seconds (user + system) of ``command``,
    run alone in a fresh child."""
    probe = (
        "import resource, subprocess, sys; "
        f"subprocess.run({command!r}, check=True, stdout=subprocess.DEVNULL); "
        "usage = resource.getrusage(resource.RUSAGE_CHILDREN); "
        "print(usage.ru_maxrss, usage.ru_utime + usage.ru_stime)"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    rss, cpu = out.stdout.split()
    return int(rss), float(cpu)


def memory(n: int = 1000) -> dict[str, float]:
    """Peak RSS (MiB) and CPU seconds of ``obelisk run`` on an n-call plan, and of a
    bare Python."""
    with tempfile.TemporaryDirectory() as folder:
        plan_path = Path(folder) / "plan.json"
        plan_path.write_text(json.dumps(plan_for(layered(n), "add_one")), encoding="utf-8")
        tools = Path(folder) / "tools.py"
        tools.write_text(
            "from obelisk import tool\n\n@tool\nasync def add_one(inputs: list[int] | None = None)"
            " -> int:\n    'One more than the sum of inputs.'\n    return 1 + sum(inputs or [])\n",
            encoding="utf-8",
        )
        run = [sys.executable, "-m", "obelisk", "run", str(plan_path), "--tools", str(tools)]
        obelisk_kib, obelisk_cpu = _peak_rss_kib(run)
        bare_kib, bare_cpu = _peak_rss_kib([sys.executable, "-c", "pass"])
    return {
        "calls": n,
        "obelisk_mib": obelisk_kib / 1024,
        "python_mib": bare_kib / 1024,
        "obelisk_cpu_s": obelisk_cpu,
        "python_cpu_s": bare_cpu,
    }
