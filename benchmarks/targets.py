"""The speed targets, read off one ``python -m benchmarks`` run.

Each figure comes from a section of the same run (:func:`figures`), so the summary
needs no measurement of its own:

1. obelisk ÷ the asyncio floor, zero-work async calls, layered DAG of 10k calls
   (obelisk's run includes checking the plan);
2. obelisk's time for 100k calls ÷ its time for 10k (linear: 10x);
3. parse + check with schema checks of a 10k-call plan, calls per second;
4. obelisk's µs per call with 0.5 KB objects ÷ with zero-work ints (the payload
   benchmark, 1k calls);
5. makespan of the 60-call sleeping DAG, obelisk ÷ the floor;
6. LangGraph ÷ obelisk, zero-work async calls, layered DAG of 1k calls (LangGraph
   with its in-place reducer);
7. peak RSS of ``obelisk run`` on a 1k-call plan.

``TARGETS`` holds each figure's target, ``(comparison, value)`` with comparison
``"<="`` or ``">="``, or ``None`` where none is set; a figure measured both ways is
judged on its CPU time, which other jobs on the machine disturb least.  Figures 1,
2 and 6 pair the runs of each round (:func:`~benchmarks.suite.side_by_side`,
:func:`~benchmarks.suite.growth`).  A figure
the run did not measure (``--quick`` runs no 100k plans, a competitor may be
missing) is reported as not measured.
"""

from __future__ import annotations

from typing import Any

from .suite import side_by_side

__all__ = ["TARGETS", "Figure", "figures", "markdown"]

TARGETS: dict[str, tuple[str, float] | None] = {
    "overhead_10k": ("<=", 4.0),
    "growth_100k": ("<=", 11.0),
    "check_10k": (">=", 50_000.0),
    "payload_ratio": ("<=", 1.5),
    "makespan": ("<=", 1.01),
    "langgraph_1k": (">=", 10.0),
    "memory_1k": ("<=", 50.0),
}

Figure = dict[str, Any]
"""``key``, ``label``, ``wall`` and ``cpu`` (either may be ``None``), ``unit``
(``"x"``, ``"calls/s"`` or ``"MiB"``), ``note``."""


def _times(value: Any) -> tuple[float | None, float | None]:
    """``(wall, cpu)`` of a ``{"wall", "cpu"}`` dict, or of a bare wall figure."""
    if value is None:
        return None, None
    if isinstance(value, dict):
        return value.get("wall"), value.get("cpu")
    return float(value), None


def _div(a: Any, b: Any) -> tuple[float | None, float | None]:
    (aw, ac), (bw, bc) = _times(a), _times(b)
    return (
        aw / bw if aw is not None and bw else None,
        ac / bc if ac is not None and bc else None,
    )


def _paired(row: dict[str, Any] | None, system: str, reference: str) -> tuple[Any, Any]:
    """``system ÷ reference`` of an overhead row, paired round by round where it can be
    (:func:`~benchmarks.suite.side_by_side`), else the ratio of the medians."""
    if row is None:
        return None, None
    paired = side_by_side(row, system, reference)
    if paired is not None:
        return _times(paired)
    return _div(row.get(system), row.get(reference))


def _growth(results: dict[str, Any]) -> tuple[Any, Any]:
    """obelisk's 100k ÷ 10k: paired round by round (``results["growth"]``), else the
    ratio of the medians of the two overhead rows (results saved before)."""
    if "growth" in results:
        return _times(results["growth"]["ratio"])
    layered = results.get("overhead_layered", [])
    big, ten = _by_calls(layered, 100_000), _by_calls(layered, 10_000)
    return _div(big.get("obelisk"), ten.get("obelisk")) if big and ten else (None, None)


def _by_calls(rows: list[dict[str, Any]], calls: int) -> dict[str, Any] | None:
    return next((r for r in rows if r.get("calls") == calls), None)


def figures(results: dict[str, Any]) -> list[Figure]:
    """The seven figures, from the sections of ``results`` (see the module's doc)."""
    found: list[Figure] = []

    def add(key: str, label: str, value: tuple[Any, Any], unit: str, note: str = "") -> None:
        found.append(
            {"key": key, "label": label, "wall": value[0], "cpu": value[1]}
            | {
                "unit": unit,
                "note": note,
            }
        )

    layered = results.get("overhead_layered", [])
    row = _by_calls(layered, 10_000)
    add(
        "overhead_10k",
        "zero-work async, layered 10k calls, obelisk run incl. check ÷ floor",
        _paired(row, "obelisk", "floor"),
        "x",
    )
    add(
        "growth_100k",
        "obelisk 100k calls ÷ 10k calls, time",
        _growth(results),
        "x",
        "linear: 10x",
    )
    check = _by_calls(results.get("check", []), 10_000)
    add(
        "check_10k",
        "parse + check with schema checks, 10k-call plan",
        (check.get("calls_per_second"), check.get("calls_per_cpu_second"))
        if check
        else (None, None),
        "calls/s",
    )
    payload = results.get("payload", {})
    ratio = next(
        (
            r["ratios"]["to_int"].get("obelisk")
            for r in payload.get("rows", [])
            if r["kind"] == "0.5 KB" and r["calls"] == 1_000
        ),
        None,
    )
    add(
        "payload_ratio",
        "obelisk µs per call, 0.5 KB objects ÷ zero-work ints (layered 1k calls)",
        _times(ratio),
        "x",
    )
    span = results.get("makespan", {})
    add(
        "makespan",
        "makespan of 60 sleeping calls, obelisk ÷ floor",
        _div(span.get("obelisk"), span.get("floor")),
        "x",
        "wall by nature",
    )
    row = _by_calls(layered, 1_000)
    add(
        "langgraph_1k",
        "LangGraph (in-place reducer) ÷ obelisk, zero-work async, layered 1k calls",
        _paired(row, "langgraph", "obelisk"),
        "x",
    )
    memory = results.get("memory", {})
    add(
        "memory_1k",
        "peak RSS of `obelisk run`, 1k-call plan",
        (memory.get("obelisk_mib"), None),
        "MiB",
        f"bare Python: {memory['python_mib']:.1f} MiB" if "python_mib" in memory else "",
    )
    return found


def _format(value: float | None, unit: str) -> str:
    if value is None:
        return "—"
    if unit == "x":
        return f"{value:.4f}x" if 0.9 < value < 1.1 else f"{value:.2f}x"
    if unit == "calls/s":
        return f"{value:,.0f}"
    return f"{value:.1f}"


def _measured(figure: Figure) -> str:
    wall, cpu, unit = figure["wall"], figure["cpu"], figure["unit"]
    if wall is None and cpu is None:
        return "not measured"
    suffix = "" if unit == "x" else f" {unit}"
    if cpu is None:
        return _format(wall, unit) + suffix
    return f"{_format(wall, unit)} / {_format(cpu, unit)}{suffix}"


def _verdict(figure: Figure, target: tuple[str, float] | None) -> str:
    if target is None:
        return "—"
    comparison, limit = target
    shown = f"{'≤' if comparison == '<=' else '≥'} {_format(limit, figure['unit'])}"
    value = figure["cpu"] if figure["cpu"] is not None else figure["wall"]
    if value is None:
        return shown
    met = value <= limit if comparison == "<=" else value >= limit
    return f"{shown}: {'met' if met else 'missed'}"


def markdown(results: dict[str, Any], targets: dict[str, Any] | None = None) -> str:
    """The summary table: each figure, measured (wall / CPU), and its target."""
    targets = TARGETS if targets is None else targets
    lines = [
        "**Speed targets**, each read off the sections below (wall / CPU where both "
        "are measured; a target is judged on CPU time):",
        "",
        "| figure | measured | target |",
        "|---|---:|---:|",
    ]
    for figure in figures(results):
        note = f" ({figure['note']})" if figure["note"] else ""
        lines.append(
            f"| {figure['label']}{note} | {_measured(figure)} "
            f"| {_verdict(figure, targets.get(figure['key']))} |"
        )
    return "\n".join(lines) + "\n"
