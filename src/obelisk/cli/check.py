"""``obelisk check`` and ``obelisk graph``: diagnose a plan, draw its dependencies."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from obelisk.cli.io import (
    FilesRootOption,
    InputOption,
    NoStdlibOption,
    OverrideOption,
    PlanArgument,
    StateOption,
    ToolsOption,
    err,
    fail,
    json_for_output,
    load_registry,
    out,
    plural,
    read_json,
    read_object,
    read_plan,
)
from obelisk.diagnostics import printable
from obelisk.interpreter.analysis.check import check
from obelisk.interpreter.analysis.drawing import GraphFormat, draw
from obelisk.interpreter.analysis.result import CheckResult
from obelisk.json_values import loads_strict

__all__ = ["check_command", "graph_command", "print_diagnostics"]


def print_diagnostics(result: CheckResult, console: Any) -> None:
    """Every diagnostic, errors in red and warnings in yellow, carets under the spans."""
    for diagnostic in result.diagnostics:
        style = "bold red" if diagnostic.severity == "error" else "yellow"
        head, _, rest = str(diagnostic).partition("\n")
        console.print(head, style=style, markup=False)
        if rest:
            console.print(rest, markup=False)


def _print_result(result: CheckResult, name: str) -> None:
    print_diagnostics(result, out)
    for need in result.approval_load:
        out.print(f"may need a person: {need.label}: {'; '.join(need.reasons)}", markup=False)
    errors, warnings = len(result.errors), len(result.warnings)
    counts = []
    if errors:
        counts.append(plural(errors, "error"))
    if warnings:
        counts.append(plural(warnings, "warning"))
    size = ""  # a plan with parse errors has no whole plan to count
    if result.plan is not None and result.graph is not None:
        size = f" ({plural(len(result.plan.calls), 'call')}, "
        size += plural(len(result.graph.edges), "dependency", "dependencies") + ")"
    verdict = ", ".join(counts) if counts else "ok"
    out.print(
        f"{printable(name)}: {verdict}{size}",
        markup=False,
        style="bold red" if errors else "bold green",
    )


def check_command(
    plan: PlanArgument,
    tools: ToolsOption = None,
    input: InputOption = None,
    state: StateOption = None,
    no_stdlib: NoStdlibOption = False,
    files_root: FilesRootOption = None,
    override: OverrideOption = False,
    as_json: Annotated[
        bool, typer.Option("--json", help='Print {"ok", "diagnostics"} as JSON.')
    ] = False,
    policy: Annotated[
        str,
        typer.Option(
            "--policy",
            metavar="off|strict",
            help="The run's policy: strict also flags untrusted arguments of world writes.",
        ),
    ] = "off",
) -> None:
    """Check a plan: syntax, tools, arguments, references, cycles, untrusted flows
    (docs/diagnostics.md).

    The tools are the standard tools plus --tools, as for every command.
    Exits 0 when the plan has no errors (warnings allowed), 2 when it has errors.
    The calls that may need a person are listed after the diagnostics (with --json,
    under "approval_load"; docs/security.md, "Decided before the run").
    """
    if policy not in ("off", "strict"):
        fail(f"--policy must be 'off' or 'strict', got {policy!r}")
    registry = load_registry(tools, stdlib=not no_stdlib, files_root=files_root, override=override)
    documents = (read_json(input, "input"), read_object(state, "state"))
    result = check(read_plan(plan), registry, *documents, policy=policy)  # type: ignore[arg-type]
    if as_json:
        sys.stdout.write(json_for_output(result.to_dict())[0] + "\n")
    else:
        _print_result(result, "<stdin>" if plan == "-" else plan)
    raise typer.Exit(0 if result.ok else 2)


def _statuses(trace: Path) -> dict[int, str]:
    """Each call's last status in a ``--trace`` file of JSON-lines events."""
    ends = {
        "call_succeeded": "succeeded",
        "call_failed": "failed",
        "call_invalid_output": "invalid_output",
        "call_skipped": "skipped",
    }
    found: dict[int, str] = {}
    try:
        lines = trace.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        fail(f"cannot read trace {str(trace)!r}: {exc.strerror or exc}")
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            event = loads_strict(line)
        except json.JSONDecodeError as exc:
            fail(f"trace {str(trace)!r} line {number} is not JSON: {exc.msg}")
        if not isinstance(event, dict) or not isinstance(event.get("call"), int):
            continue
        kind = event.get("event")
        if kind == "call_started":
            found.setdefault(event["call"], "running")
        elif kind in ends:
            found[event["call"]] = ends[kind]
    return found


def graph_command(
    plan: PlanArgument,
    fmt: Annotated[
        str, typer.Option("--format", "-f", metavar="mermaid|dot", help="Output format.")
    ] = "mermaid",
    tools: ToolsOption = None,
    no_stdlib: NoStdlibOption = False,
    files_root: FilesRootOption = None,
    override: OverrideOption = False,
    trace: Annotated[
        Path | None,
        typer.Option(
            "--trace", metavar="FILE", help="Colour calls by status from a run's --trace file."
        ),
    ] = None,
) -> None:
    """Draw the calls of a plan and the state paths between them.

    Edges that come from one of several alternatives are dashed and labelled;
    the edges of a dependency cycle are red.  With --trace, calls are coloured by
    what happened to them in that run.  A plan with errors is still drawn when it
    parses; its diagnostics go to standard error and the exit code is 2.  The tools are
    the standard tools plus --tools, chosen as for `obelisk check` (--no-stdlib,
    --override, --files-root).
    """
    if fmt not in ("mermaid", "dot"):
        fail(f"unknown --format {fmt!r}; expected 'mermaid' or 'dot'")
    statuses = _statuses(trace) if trace is not None else None
    registry = load_registry(tools, stdlib=not no_stdlib, files_root=files_root, override=override)
    result = check(read_plan(plan), registry)
    if result.graph is not None:
        graph_format: GraphFormat = "mermaid" if fmt == "mermaid" else "dot"
        sys.stdout.write(draw(result.graph, graph_format, statuses))
    print_diagnostics(result, err)
    raise typer.Exit(0 if result.ok else 2)
