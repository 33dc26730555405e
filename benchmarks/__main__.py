"""``python -m benchmarks``: every benchmark, side by side, in one command.

Workloads: overhead (layered 1k/10k/100k, chain, wide fan-out + join), payloads
(calls returning 0.5 KB and 20 KB JSON objects and reading their fields;
``payload.py``), makespan, check throughput, check time with many writers of one
path (``conflicts.py``), sync tools (in threads, and inline where obelisk has
``blocking=False``), blocking tools, memory, NESTFUL, the execution loop's own costs
(per-turn overhead, request size, streaming; ``loop_overhead.py``), tools from JSON
descriptions with a big result's copies (``tools_from_schema.py``), dry runs of a
1,000-call plan in all 64 scenarios (``simulate_plans.py``), what
``isolation="process"`` costs (``isolation.py``), what a run journal costs and how
fast a run resumes from one (``journal.py``), and how fast
``obelisk.testing.plans()`` draws 20-call plans (``plan_generation.py``), what the
``obelisk`` command costs to start (``cold_start.py``), what ``run_sync`` adds and
what sync tools cost on small plans (``small_plans.py``), and obelisk's share of a
property test (``property_tests.py``).  Systems:
obelisk, a minimal asyncio scheduler (the floor), LangGraph and Hamilton (``pip
install -e '.[bench]'``; skipped when missing).  Each figure is a median of
``--repeat`` runs (default 5), as wall time beside CPU time (``time.process_time``;
the machine may be shared); ratios compare numbers measured in the same run.  The
report opens with the speed targets read off the sections below
(``targets.py``).

Writes ``benchmarks/results/results.json`` and ``results.md``; ``--docs`` (or its
old name ``--readme``) also replaces the generated section of docs/performance.md.
``--quick`` is a smoke run for CI: 1k calls, 1 repetition, no 10k or 100k plans, no
competitors in the payload benchmark, 5 loop turns instead of 20.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from importlib import metadata
from pathlib import Path
from typing import Any

from . import (
    cold_start,
    conflicts,
    isolation,
    journal,
    loop_overhead,
    payload,
    plan_generation,
    property_tests,
    simulate_plans,
    small_plans,
    suite,
    targets,
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
        # Competitors at 100k would take minutes per run: 1k and 10k only.  obelisk at
        # 100k is a median of ``repeat`` runs like the rest (one run swung 60-87 us).
        chosen = systems if n <= 10_000 else ("floor", "obelisk")
        row = suite.overhead(layered(n), repeat, chosen)
        layered_rows.append({"calls": n, **row})
    results["overhead_layered"] = layered_rows
    if not quick:  # 100k and 10k in turn: their ratio, paired round by round
        results["growth"] = suite.growth(10_000, 100_000, repeat)
    shapes = {"chain": suite.chain(1_000), "fan-out + join": suite.fan(1_000)}
    results["overhead_shapes"] = [
        {"shape": name, "calls": len(deps), **suite.overhead(deps, repeat, systems)}
        for name, deps in shapes.items()
    ]
    results["payload"] = payload.collect(quick, repeat)
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
    results["journal"] = journal.collect(quick, repeat)
    results["plan_generation"] = (
        plan_generation.measure(50, 1) if quick else plan_generation.measure(repeat=max(repeat, 5))
    )
    results["cold_start"] = cold_start.collect(quick, max(repeat, 7))
    results["small_plans"] = small_plans.collect(quick, repeat)
    results["property_test"] = property_tests.collect(quick, repeat)
    return results


def nestful() -> dict[str, Any]:
    from .nestful.convert import load_math_cases
    from .nestful.score import obelisk_runner, score_cases

    runner = obelisk_runner()
    if runner is None:
        return {"skipped": "obelisk.run_sync missing"}
    cases = load_math_cases()
    cpu = time.process_time()
    score = score_cases(cases, runner, "obelisk")
    cpu = time.process_time() - cpu
    return {
        "passed": score.passed,
        "total": score.total,
        "seconds": score.seconds,
        "cpu_seconds": cpu,
    }


def _wall_cpu(value: Any) -> tuple[float | None, float | None]:
    """``(wall, cpu)`` of a ``{"wall", "cpu"}`` figure; a bare number is a wall time."""
    if value is None:
        return None, None
    if isinstance(value, dict):
        return value.get("wall"), value.get("cpu")
    return float(value), None


def _us(value: Any, n: int) -> str:
    """µs per call, ``wall / CPU``."""
    wall, cpu = _wall_cpu(value)
    if wall is None:
        return "skipped"
    if cpu is None:
        return f"{wall / n * 1e6:,.1f} µs"
    return f"{wall / n * 1e6:,.1f} / {cpu / n * 1e6:,.1f} µs"


def _ms(value: Any) -> str:
    """Milliseconds, ``wall / CPU``."""
    wall, cpu = _wall_cpu(value)
    if wall is None:
        return "skipped"
    if cpu is None:
        return f"{wall * 1000:,.0f} ms"
    return f"{wall * 1000:,.0f} / {cpu * 1000:,.0f} ms"


def _paired(row: dict[str, Any], system: str, reference: str) -> str:
    """``system ÷ reference`` of an overhead row: paired round by round
    (:func:`suite.side_by_side`), or the ratio of the medians of older results."""
    paired = suite.side_by_side(row, system, reference)
    if paired is None:
        return _x(row.get(system), row.get(reference))
    return _x(paired, {"wall": 1.0, "cpu": 1.0})


def _x(value: Any, reference: Any) -> str:
    """``value ÷ reference``, wall by wall and CPU by CPU."""
    (vw, vc), (rw, rc) = _wall_cpu(value), _wall_cpu(reference)
    if vw is None or not rw:
        return "—"
    if vc is None or not rc:
        return f"{vw / rw:.1f}x"
    return f"{vw / rw:.1f}x / {vc / rc:.1f}x"


def _sync_line(sync: dict[str, Any]) -> str:
    if "threads" not in sync:  # results written before the inline variant
        return (
            f"**Sync tools**: {sync['sync_us']:.1f} µs per zero-work blocking call in "
            f"threads, {sync['ratio']:.2f}x the async figure ({sync['async_us']:.1f} µs)."
        )
    lines = [
        f"**Sync tools**: zero-work tools on the layered DAG ({sync['calls']:,} calls), µs "
        "per call, wall / CPU:",
        "",
        "| tool | µs per call | ÷ async |",
        "|---|---:|---:|",
    ]
    kinds = (
        ("async", "async"),
        ("threads", "sync, in worker threads (default)"),
        ("inline", "sync, inline on the event loop (`blocking=False`)"),
    )
    for key, label in kinds:
        found = sync.get(key)
        if found is None:
            lines.append(
                f"| {label} | not available: `Tool.from_function` has no `blocking=` option | — |"
            )
            continue
        lines.append(
            f"| {label} | {found['wall']:,.1f} / {found['cpu']:,.1f} µs "
            f"| {_x(found, sync['async'])} |"
        )
    return "\n".join(lines)


def markdown(results: dict[str, Any]) -> str:
    m = results["machine"]
    lines = [
        f"Measured by `python -m benchmarks` on {m['cores']} cores, Python {m['python']} "
        f"({m['machine']}); obelisk {m['obelisk']}, LangGraph {m['langgraph']}, "
        f"Hamilton {m['hamilton']}; median of {results['repeat']} runs.  Times are wall "
        "time / CPU time of the process (`time.process_time`, every thread); ratios "
        "compare wall with wall and CPU with CPU.  Every obelisk run parses its plan as "
        "a plan it has never seen: the parser's expression cache is emptied before each "
        "run.",
        "",
        targets.markdown(results).rstrip("\n"),
        "",
        "**Overhead**: zero-work async calls; µs per call, wall / CPU.  The systems take "
        "turns, one run each per round; each ratio is the median of the ratios of the two "
        "systems' runs of one round.  obelisk includes checking the plan; LangGraph and "
        "Hamilton exclude building their graph.",
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
            f"{_paired(row, 'obelisk', 'floor')} | {_paired(row, 'langgraph', 'obelisk')} |"
        )
    layered_rows = {r["calls"]: r for r in results["overhead_layered"]}
    if "growth" in results:
        growth = _x(results["growth"]["ratio"], {"wall": 1.0, "cpu": 1.0})
        lines += [
            "",
            f"obelisk at 100k calls takes {growth} its 10k time (linear: 10x; the two sizes "
            "run in turn, the median of each round's ratio).",
        ]
    elif 100_000 in layered_rows and 10_000 in layered_rows:  # results saved before
        growth = _x(layered_rows[100_000]["obelisk"], layered_rows[10_000]["obelisk"])
        lines += ["", f"obelisk at 100k calls takes {growth} its 10k time (linear: 10x)."]
    if "payload" in results:
        lines += ["", payload.markdown(results["payload"]).rstrip("\n")]
    span = results["makespan"]
    runs = span.get("runs", {})
    lines += [
        "",
        f"**Makespan** of 60 calls sleeping 5–40 ms (critical path "
        f"{span['critical_path_s'] * 1000:.0f} ms), ÷ critical path (first start to last end; "
        "the floor: its whole run), and each system's whole run, wall / CPU:",
        "",
        "| | floor | obelisk | LangGraph | Hamilton |",
        "|---|---:|---:|---:|---:|",
        "| makespan ÷ critical path | "
        + " | ".join("skipped" if span.get(s) is None else f"{span[s]:.3f}x" for s in suite.SYSTEMS)
        + " |",
    ]
    if runs:
        lines.append("| whole run | " + " | ".join(_ms(runs.get(s)) for s in suite.SYSTEMS) + " |")
    lines += [
        "",
        "**Check throughput** (parse + check with schema checks), wall / CPU:",
        "",
        "| calls | time | calls/s |",
        "|---:|---:|---:|",
    ]
    for r in results["check"]:
        if "cpu_seconds" in r:
            lines.append(
                f"| {r['calls']:,} | {r['seconds'] * 1000:,.0f} / "
                f"{r['cpu_seconds'] * 1000:,.0f} ms "
                f"| {r['calls_per_second']:,.0f} / {r['calls_per_cpu_second']:,.0f} |"
            )
        else:
            lines.append(
                f"| {r['calls']:,} | {r['seconds'] * 1000:,.0f} ms | {r['calls_per_second']:,.0f} |"
            )
    if "conflicts" in results:
        lines += ["", conflicts.markdown(results["conflicts"]).rstrip("\n")]
    sync, block, mem, nest = (
        results["sync_tools"],
        results["blocking"],
        results["memory"],
        results["nestful"],
    )
    lines += ["", _sync_line(sync)]
    if block:
        blocked = ", ".join(
            f"{name} {_ms(block.get(name))}" for name in ("obelisk", "langgraph", "hamilton")
        )
        lines += [
            "",
            f"**Blocking tools**: 8 independent calls sleeping 50 ms in `time.sleep`, wall / "
            f"CPU: {blocked} (serial would be 400 ms, full overlap 50 ms).",
        ]
    cpu = (
        f"; it takes {mem['obelisk_cpu_s']:.2f} s CPU (a bare Python: {mem['python_cpu_s']:.2f} s)"
        if "obelisk_cpu_s" in mem
        else ""
    )
    lines += [
        "",
        f"**Memory**: peak RSS of `obelisk run` on a 1k-call plan: {mem['obelisk_mib']:.1f} MiB "
        f"(a bare Python: {mem['python_mib']:.1f} MiB){cpu}.",
    ]
    if "passed" in nest:
        cpu = f" ({nest['cpu_seconds']:.2f} s CPU)" if "cpu_seconds" in nest else ""
        lines += [
            "",
            f"**NESTFUL** v2 math: {nest['passed']}/{nest['total']} in "
            f"{nest['seconds']:.2f} s total{cpu}.",
        ]
    if "loop" in results:
        lines += ["", loop_overhead.markdown(results["loop"]).rstrip("\n")]
    if "tools" in results:
        lines += ["", tools_from_schema.markdown(results["tools"]).rstrip("\n")]
    if "simulate" in results:
        lines += ["", simulate_plans.markdown(results["simulate"]).rstrip("\n")]
    if "isolation" in results:
        lines += ["", isolation.markdown(results["isolation"]).rstrip("\n")]
    if "journal" in results:
        lines += ["", journal.markdown(results["journal"]).rstrip("\n")]
    if "plan_generation" in results:
        lines += ["", plan_generation.markdown(results["plan_generation"]).rstrip("\n")]
    if "cold_start" in results:
        lines += ["", cold_start.markdown(results["cold_start"]).rstrip("\n")]
    if "small_plans" in results:
        lines += ["", small_plans.markdown(results["small_plans"]).rstrip("\n")]
    if "property_test" in results:
        lines += ["", property_tests.markdown(results["property_test"]).rstrip("\n")]
    return "\n".join(lines) + "\n"


def update_readme(text: str, readme: Path = ROOT / "docs" / "performance.md") -> None:
    """Replace the section between START and END of ``readme`` (docs/performance.md) by ``text``."""
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
    parser.add_argument(
        "--docs",
        "--readme",
        dest="docs",
        action="store_true",
        help="rewrite the generated section of docs/performance.md",
    )
    args = parser.parse_args(argv)
    repeat = 1 if args.quick else args.repeat
    results = collect(args.quick, repeat)
    text = markdown(results)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "results.json").write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    (args.out / "results.md").write_text(text, encoding="utf-8")
    sys.stdout.write(text)
    if args.docs:
        update_readme(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
