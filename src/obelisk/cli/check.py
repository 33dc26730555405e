"""``obelisk check`` and ``obelisk graph``: diagnose a plan, draw its dependencies."""

from __future__ import annotations

import json
import sys
from typing import Annotated

import typer

from obelisk.cli.io import (
    InputOption,
    PlanArgument,
    StateOption,
    ToolsOption,
    err,
    fail,
    load_tools,
    out,
    read_json,
    read_plan,
)
from obelisk.interpreter.analysis.check import check
from obelisk.interpreter.analysis.drawing import GraphFormat, draw
from obelisk.interpreter.analysis.result import CheckResult

__all__ = ["check_command", "graph_command"]


def _print_result(result: CheckResult, name: str, tools_known: bool) -> None:
    for diagnostic in result.diagnostics:
        style = "bold red" if diagnostic.severity == "error" else "yellow"
        head, _, rest = str(diagnostic).partition("\n")
        out.print(head, style=style, markup=False)
        if rest:
            out.print(rest, markup=False)
    calls = len(result.plan.calls) if result.plan is not None else 0
    errors, warnings = len(result.errors), len(result.warnings)
    counts = []
    if errors:
        counts.append(f"{errors} error{'s' if errors != 1 else ''}")
    if warnings:
        counts.append(f"{warnings} warning{'s' if warnings != 1 else ''}")
    size = f"{calls} call{'s' if calls != 1 else ''}"
    if result.graph is not None:
        edges = len(result.graph.edges)
        size += f", {edges} dependenc{'ies' if edges != 1 else 'y'}"
    verdict = ", ".join(counts) if counts else "ok"
    out.print(
        f"{name}: {verdict} ({size})", markup=False, style="bold red" if errors else "bold green"
    )
    if not tools_known:
        out.print(
            "note: no --tools given: tool names and arguments were not checked",
            markup=False,
            style="dim",
        )


def check_command(
    plan: PlanArgument,
    tools: ToolsOption = None,
    input: InputOption = None,
    state: StateOption = None,
    as_json: Annotated[
        bool, typer.Option("--json", help='Print {"ok", "diagnostics"} as JSON.')
    ] = False,
) -> None:
    """Check a plan: syntax, tools, arguments, references, cycles (docs/diagnostics.md).

    Exits 0 when the plan has no errors (warnings allowed), 2 when it has errors.
    """
    registry = load_tools(tools)
    result = check(read_plan(plan), registry, read_json(input, "input"), read_json(state, "state"))
    if as_json:
        sys.stdout.write(json.dumps(result.to_dict(), ensure_ascii=False) + "\n")
    else:
        _print_result(result, "<stdin>" if plan == "-" else plan, registry is not None)
    raise typer.Exit(0 if result.ok else 2)


def graph_command(
    plan: PlanArgument,
    fmt: Annotated[
        str, typer.Option("--format", "-f", help="Output format: mermaid or dot.")
    ] = "mermaid",
    tools: ToolsOption = None,
) -> None:
    """Draw the calls of a plan and the state paths between them.

    Edges that come from one of several alternatives are dashed and labelled.
    Exits 2 when the plan cannot be parsed.
    """
    if fmt not in ("mermaid", "dot"):
        fail(f"unknown --format {fmt!r}; expected 'mermaid' or 'dot'")
    result = check(read_plan(plan), load_tools(tools))
    if result.graph is None:
        for diagnostic in result.diagnostics:
            err.print(str(diagnostic), markup=False)
        raise typer.Exit(2)
    graph_format: GraphFormat = "mermaid" if fmt == "mermaid" else "dot"
    sys.stdout.write(draw(result.graph, graph_format))
