"""``python -m benchmarks``: every benchmark, side by side, in one command.

Workloads: overhead (layered 1k/10k/100k, chain, wide fan-out + join), makespan,
check throughput, check time with many writers of one path (``conflicts.py``), sync
tools, memory, NESTFUL, the execution loop's own costs (per-turn overhead, request
size, streaming; ``loop_overhead.py``), tools from JSON descriptions with a big
result's copies (``tools_from_schema.py``), dry runs of a 1,000-call plan in all 64
scenarios (``simulate_plans.py``), what ``isolation="process"`` costs
(``isolation.py``) and how fast ``obelisk.testing.plans()`` draws
20-call plans (``plan_generation.py``).  Systems:
obelisk, a minimal asyncio scheduler (the floor), LangGraph and Hamilton (``pip
install -e '.[bench]'``; skipped when missing).  Each figure is a median of ``--repeat``
runs (default 5); ratios compare numbers measured in the same run.

Writes ``benchmarks/results/results.json`` and ``results.md``; ``--readme``
also replaces the README's generated benchmark section.  ``--quick`` is a smoke
run for CI: 1k calls, 1 repetition, no 100k plans and no competitors at 10k,
5 loop turns instead of 20.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
from importlib import metadata
from pathlib import Path
from typing import Any

from . import (
    conflicts,
    isolation,
    loop_overhead,
    plan_generation,
    simulate_plans,
    suite,
    tools_from_schema,
)
from .check_throughput import measure as check_measure
from .run_overhead import layered

ROOT = Path(__file__).resolve().parents[1]
START, END = "<!-- benchmarks:start -->", "<!-- benchmarks:end -->"


def _version(package: str) -> str:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return "not installed"


def machine() -> dict[str, Any]:
    return {
        "python": platform.python_version(),
        "machine": platform.machine(),
        "cores": os.cpu_count(),
        "obelisk": _version("obelisk"),
        "langgraph": _version("langgraph"),
        "hamilton": _version("apache-hamilton"),
    }


def collect(quick: bool, repeat: int) -> dict[str, Any]:
    systems = suite.SYSTEMS
    sizes = [1_000] if quick else [1_000, 10_000, 100_000]
    results: dict[str, Any] = {"machine": machine(), "repeat": repeat, "quick": quick}
    layered_rows = []
    for n in sizes:
        # Competitors at 100k would take minutes per run: 1k and 10k only.
        chosen = systems if n <= 10_000 else ("floor", "obelisk")
        if quick:
            chosen = ("floor", "obelisk")
        row = suite.overhead(layered(n), repeat if n < 100_000 else 1, chosen)
        layered_rows.append({"calls": n, **row})
    results["overhead_layered"] = layered_rows
    shapes = {"chain": suite.chain(1_000), "fan-out + join": suite.fan(1_000)}
    results["overhead_shapes"] = [
        {"shape": name, "calls": len(deps), **suite.overhead(deps, repeat, systems)}
        for name, deps in shapes.items()
    ]
    results["makespan"] = suite.makespan(repeat, systems)
    results["check"] = [check_measure(n, repeat) for n in ([1_000, 10_000] if quick else sizes)]
    results["conflicts"] = conflicts.collect(repeat, (1_000, 2_000) if quick else conflicts.SIZES)
    results["sync_tools"] = suite.sync_tools(1_000, repeat)
    results["blocking"] = suite.blocking(repeat, ("obelisk", "langgraph", "hamilton"))
    results["memory"] = suite.memory(1_000)
    results["nestful"] = nestful()
    results["loop"] = loop_overhead.collect(quick, repeat)
    results["tools"] = tools_from_schema.collect(quick, repeat)
    results["simulate"] = simulate_plans.collect(quick, repeat)
    results["isolation"] = isolation.collect(quick, repeat)
    results["plan_generation"] = (
        plan_generation.measure(50, 1) if quick else plan_generation.measure(repeat=max(repeat, 5))
    )
    return results


def nestful() -> dict[str, Any]:
    from .nestful.convert import load_math_cases
    from .nestful.score import obelisk_runner, score_cases

    runner = obelisk_runner()
    if runner is None:
        return {"skipped": "obelisk.run_sync missing"}
    score = score_cases(load_math_cases(), runner, "obelisk")
    return {"passed": score.passed, "total": score.total, "seconds": score.seconds}


def _us(seconds: float | None, n: int) -> str:
    return "skipped" if seconds is None else f"{seconds / n * 1e6:,.1f} µs"


def _x(value: float | None, reference: float | None) -> str:
    if value is None or not reference:
        return "—"
    return f"{value / reference:.1f}x"


def markdown(results: dict[str, Any]) -> str:
    m = results["machine"]
    lines = [
        f"Measured by `python -m benchmarks` on {m['cores']} cores, Python {m['python']} "
        f"({m['machine']}); obelisk {m['obelisk']}, LangGraph {m['langgraph']}, "
        f"Hamilton {m['hamilton']}; median of {results['repeat']} runs.",
        "",
        "**Overhead**: zero-work async calls; µs per call; ratios to the asyncio floor. "
        "obelisk includes checking the plan; LangGraph and Hamilton exclude building "
        "their graph.",
        "",
        "| DAG | calls | floor | obelisk | LangGraph | Hamilton | obelisk ÷ floor "
        "| LangGraph ÷ obelisk |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    rows = [("layered", r) for r in results["overhead_layered"]]
    rows += [(r["shape"], r) for r in results["overhead_shapes"]]
    for shape, row in rows:
        n = row["calls"]
        lines.append(
            f"| {shape} | {n:,} | {_us(row.get('floor'), n)} | {_us(row.get('obelisk'), n)} | "
            f"{_us(row.get('langgraph'), n)} | {_us(row.get('hamilton'), n)} | "
            f"{_x(row.get('obelisk'), row.get('floor'))} | "
            f"{_x(row.get('langgraph'), row.get('obelisk'))} |"
        )
    layered_rows = {r["calls"]: r for r in results["overhead_layered"]}
    if 100_000 in layered_rows and 10_000 in layered_rows:
        growth = layered_rows[100_000]["obelisk"] / layered_rows[10_000]["obelisk"]
        lines += ["", f"obelisk at 100k calls takes {growth:.1f}x its 10k time (linear: 10x)."]
    span = results["makespan"]
    lines += [
        "",
        f"**Makespan** of 60 calls sleeping 5–40 ms (critical path "
        f"{span['critical_path_s'] * 1000:.0f} ms), ÷ critical path:",
        "",
        "| floor | obelisk | LangGraph | Hamilton |",
        "|---:|---:|---:|---:|",
        "| "
        + " | ".join("skipped" if span.get(s) is None else f"{span[s]:.3f}x" for s in suite.SYSTEMS)
        + " |",
        "",
        "**Check throughput** (parse + check with schema checks):",
        "",
        "| calls | time | calls/s |",
        "|---:|---:|---:|",
    ]
    lines += [
        f"| {r['calls']:,} | {r['seconds'] * 1000:,.0f} ms | {r['calls_per_second']:,.0f} |"
        for r in results["check"]
    ]
    if "conflicts" in results:
        lines += ["", conflicts.markdown(results["conflicts"]).rstrip("\n")]
    sync, block, mem, nest = (
        results["sync_tools"],
        results["blocking"],
        results["memory"],
        results["nestful"],
    )
    blocked = ", ".join(
        f"{name} {'skipped' if block.get(name) is None else f'{block[name] * 1000:.0f} ms'}"
        for name in ("obelisk", "langgraph", "hamilton")
    )
    lines += [
        "",
        f"**Sync tools**: {sync['sync_us']:.1f} µs per zero-work blocking call in threads, "
        f"{sync['ratio']:.2f}x the async figure ({sync['async_us']:.1f} µs). 8 blocking calls "
        f"of 50 ms: {blocked} (serial would be 400 ms, full overlap 50 ms).",
        "",
        f"**Memory**: peak RSS of `obelisk run` on a 1k-call plan: {mem['obelisk_mib']:.1f} MiB "
        f"(a bare Python: {mem['python_mib']:.1f} MiB).",
    ]
    if "passed" in nest:
        lines += [
            "",
            f"**NESTFUL** v2 math: {nest['passed']}/{nest['total']} in "
            f"{nest['seconds']:.2f} s total.",
        ]
    if "loop" in results:
        lines += ["", loop_overhead.markdown(results["loop"]).rstrip("\n")]
    if "tools" in results:
        lines += ["", tools_from_schema.markdown(results["tools"]).rstrip("\n")]
    if "simulate" in results:
        lines += ["", simulate_plans.markdown(results["simulate"]).rstrip("\n")]
    if "isolation" in results:
        lines += ["", isolation.markdown(results["isolation"]).rstrip("\n")]
    if "plan_generation" in results:
        lines += ["", plan_generation.markdown(results["plan_generation"]).rstrip("\n")]
    return "\n".join(lines) + "\n"


def update_readme(text: str, readme: Path = ROOT / "README.md") -> None:
    content = readme.read_text(encoding="utf-8")
    if START not in content or END not in content:
        raise SystemExit(f"{readme} has no {START} ... {END} section to replace")
    head, rest = content.split(START, 1)
    _, tail = rest.split(END, 1)
    readme.write_text(f"{head}{START}\n{text}{END}{tail}", encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--quick", action="store_true", help="a smoke run for CI")
    parser.add_argument("--repeat", type=int, default=5, help="repetitions (median reported)")
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results")
    parser.add_argument("--readme", action="store_true", help="rewrite the README's section")
    args = parser.parse_args(argv)
    repeat = 1 if args.quick else args.repeat
    results = collect(args.quick, repeat)
    text = markdown(results)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "results.json").write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    (args.out / "results.md").write_text(text, encoding="utf-8")
    sys.stdout.write(text)
    if args.readme:
        update_readme(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
