"""``obelisk simulate``: a dry run of a plan, in every branch (docs/simulate.md)."""

from __future__ import annotations

import contextlib
import importlib.util
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from obelisk.cli.io import (
    FilesRootOption,
    InputOption,
    NoStdlibOption,
    OverrideOption,
    PlanArgument,
    PolicyOption,
    StateOption,
    ToolsOption,
    check_policy,
    err,
    fail,
    json_default,
    load_registry,
    out,
    read_json,
    read_object,
    read_plan,
    tools_print_to_stderr,
)
from obelisk.errors import ObeliskError, PlanError
from obelisk.interpreter.analysis.drawing import GraphFormat, draw
from obelisk.interpreter.tools.options import Outcome

if TYPE_CHECKING:  # the other commands never load dry runs
    from obelisk.interpreter.simulate.report import SimulationReport

__all__ = ["read_stubs", "simulate_command"]


def _stub_item(value: Any, where: str) -> Any:
    if isinstance(value, dict) and "$error" in value:
        message = value["$error"]
        return RuntimeError(message if isinstance(message, str) else json.dumps(message))
    if isinstance(value, dict) and "$outcome" in value:
        if set(value) - {"$outcome", "value"}:
            fail(f"stubs: {where}: an $outcome item has only '$outcome' and 'value'")
        return Outcome(value["$outcome"], value.get("value"))
    return value


def read_stubs(path: Path) -> dict[str, Any]:
    """Stubs from a JSON file, or the ``STUBS`` dict of a Python file.

    JSON: ``{"tool or call _id": value}``; ``{"tool": {"$outcomes": [item, ...]}}``
    lists outcomes to explore, where an item is a value, ``{"$outcome": name or
    index, "value": ...}`` or ``{"$error": "message"}`` (the tool raises).  A plain
    JSON list is the tool's value, not outcomes to explore.
    """
    if path.suffix == ".py":
        spec = importlib.util.spec_from_file_location(f"_obelisk_stubs_{path.stem}", path)
        if spec is None or spec.loader is None:
            fail(f"cannot load stubs from {str(path)!r}: not a Python file")
        module = importlib.util.module_from_spec(spec)
        try:
            with tools_print_to_stderr():  # a stubs file that prints as it loads
                spec.loader.exec_module(module)
        except Exception as exc:
            fail(f"cannot load stubs from {str(path)!r}: {type(exc).__name__}: {exc}")
        stubs = getattr(module, "STUBS", None)
        if not isinstance(stubs, dict):
            fail(f"{str(path)!r} has no STUBS dict")
        return stubs
    raw = read_object(path, "stubs")
    assert raw is not None
    found: dict[str, Any] = {}
    for key, value in raw.items():
        if isinstance(value, dict) and "$outcomes" in value:
            items = value["$outcomes"]
            if not isinstance(items, list) or set(value) != {"$outcomes"}:
                fail(f"stubs {str(path)!r}: {key}: '$outcomes' must be the only key, with a list")
            found[key] = [_stub_item(item, key) for item in items]
        elif isinstance(value, list):  # a list is the value: '$outcomes' explores
            found[key] = [value]
        else:
            found[key] = _stub_item(value, key)
    return found


def _numbers(path: Path | None, what: str) -> dict[str, float] | None:
    data = read_object(path, what)
    if data is None:
        return None
    bad = [k for k, v in data.items() if isinstance(v, bool) or not isinstance(v, (int, float))]
    if bad:
        fail(f"{what} {str(path)!r}: {bad[0]!r} must be a number")
    return {k: float(v) for k, v in data.items()}


def _details(report: SimulationReport) -> None:
    """Every scenario in full: skips and why, failures, writes and their producers."""
    for s in report.scenarios:
        out.print(f"scenario {s.number}", markup=False, style="bold")
        for label, arm in s.arms.items():
            out.print(f"  {label} took {arm}", markup=False)
        out.print(f"  runs: {', '.join(s.ran) or '-'}", markup=False)
        for label, why in s.skipped.items():
            out.print(f"  skips {label}: {why}", markup=False, style="yellow")
        for label, why in s.failed.items():
            out.print(f"  fails {label}: {why}", markup=False, style="red")
        for label, sources in s.unknown_arguments.items():
            out.print(
                f"  {label} runs with unknown arguments (from {', '.join(sources)})",
                markup=False,
                style="yellow",
            )
        for path, producer in s.writes.items():
            out.print(f"  writes {path} ({producer})", markup=False, style="dim")
        path = " -> ".join(s.critical_path) or "-"
        out.print(f"  critical path: {path} ({s.critical_seconds:g} s)", markup=False)


def _print(report: SimulationReport, verbose: bool) -> None:
    from rich.table import Table  # the other commands draw no tables

    for line in report.unknown_lines():  # first: every scenario below depends on them
        out.print(line, markup=False, style="yellow")
    if verbose:
        _details(report)
    summary = report.summary()
    total = report.scenario_count()
    out.print(f"scenarios: {report.explored} explored of {total}", markup=False, style="bold")
    table = Table(show_lines=False, header_style="bold")
    for column in ("#", "outcomes", "runs", "skips", "time", "peak", "cost", "ask"):
        table.add_column(column, overflow="fold")
    for s in report.scenarios:
        table.add_row(
            str(s.number),
            "\n".join(f"{k}: {v}" for k, v in s.arms.items()) or "-",
            str(len(s.ran)),
            str(len(s.skipped)),
            f"{s.makespan:g} s",
            str(s.peak_concurrency),
            f"{s.cost:g}",
            str(len(s.approvals)),
        )
    out.print(table)
    for label, why in summary["never_run"].items():
        out.print(f"never runs: {label}: {why}", markup=False, style="yellow")
    for path in summary["written_never_read"]:
        out.print(f"written, never read: {path}", markup=False, style="dim")
    for path in summary["read_in_some"]:
        out.print(f"read in some scenarios only: {path}", markup=False, style="dim")
    approvals = report.approval_line()
    if approvals is not None:
        out.print(approvals, markup=False)
    for line in report.policy_lines():  # what the tools' policies would decide
        out.print(line, markup=False)
    for diagnostic in report.diagnostics:
        style = "bold red" if diagnostic.severity == "error" else "yellow"
        err.print(str(diagnostic), markup=False, style=style)
    for tool, note in report.notes.items():
        err.print(f"note: {tool}: {note}", markup=False, style="dim")


@contextlib.contextmanager
def _plan_errors_exit(plan: str) -> Iterator[None]:
    """Exit 2 when the plan has errors (each printed: nothing is simulated), and
    through :func:`~obelisk.cli.io.fail` for any other obelisk error."""
    try:
        yield
    except PlanError as exc:
        for diagnostic in exc.diagnostics:
            err.print(str(diagnostic), markup=False)
        err.print(f"{plan}: the plan has errors; nothing to simulate", markup=False)
        raise typer.Exit(2) from None
    except ObeliskError as exc:
        fail(str(exc))


_StubsOption = Annotated[
    Path | None,
    typer.Option("--stubs", metavar="FILE", help="Tool outputs: a JSON file, or a .py with STUBS."),
]
_LatencyOption = Annotated[
    Path | None,
    typer.Option("--latency", metavar="FILE", help="JSON: seconds per tool (default 1)."),
]
_CostOption = Annotated[
    Path | None,
    typer.Option("--cost", metavar="FILE", help="JSON: cost weight per tool (default 1)."),
]
_MaxScenariosOption = Annotated[
    int, typer.Option("--max-scenarios", min=1, metavar="N", help="Scenarios at most.")
]
_SeedOption = Annotated[int, typer.Option("--seed", metavar="N", help="Seed of generated values.")]
_JsonOption = Annotated[
    bool, typer.Option("--json", help='Print {"summary", "scenarios"} as JSON.')
]
_GraphOption = Annotated[
    str | None,
    typer.Option("--graph", metavar="mermaid|dot", help="Draw one scenario: skips, critical path."),
]
_ScenarioOption = Annotated[
    int, typer.Option("--scenario", min=1, metavar="N", help="The scenario --graph draws.")
]
_VerboseOption = Annotated[
    bool,
    typer.Option("--verbose", "-v", help="Each scenario in full: skips, writes, critical path."),
]


def simulate_command(
    plan: PlanArgument,
    tools: ToolsOption = None,
    input: InputOption = None,
    state: StateOption = None,
    no_stdlib: NoStdlibOption = False,
    files_root: FilesRootOption = None,
    override: OverrideOption = False,
    stubs: _StubsOption = None,
    latency: _LatencyOption = None,
    cost: _CostOption = None,
    max_scenarios: _MaxScenariosOption = 64,
    seed: _SeedOption = 0,
    as_json: _JsonOption = False,
    graph: _GraphOption = None,
    scenario: _ScenarioOption = 1,
    verbose: _VerboseOption = False,
    policy: PolicyOption = "off",
) -> None:
    """Dry-run a plan: every combination of its calls' outcomes, nothing with side
    effects run (docs/simulate.md).

    Tool outputs come from --stubs, from pure tools, or are generated from output
    schemas (the same --seed prints the same report).  Exits 0, 1 when the dry run
    has errors (a stub that does not fit its tool), 2 when the plan has errors.
    """
    from obelisk.interpreter.analysis.check import check
    from obelisk.interpreter.simulate.simulate import simulate as _simulate

    if graph not in (None, "mermaid", "dot"):
        fail(f"unknown --graph {graph!r}; expected 'mermaid' or 'dot'")
    check_policy(policy)
    registry = load_registry(tools, stdlib=not no_stdlib, files_root=files_root, override=override)
    text = read_plan(plan)
    documents = read_json(input, "input"), read_object(state, "state")
    with _plan_errors_exit(plan):
        # once: the dry run and --graph take it; its policies decide per scenario
        checked = check(text, registry, *documents, policy=None)
        report = _simulate(
            checked,
            registry,
            *documents,
            stubs=read_stubs(stubs) if stubs is not None else None,
            latency=_numbers(latency, "latency"),
            cost=_numbers(cost, "cost"),
            max_scenarios=max_scenarios,
            seed=seed,
            policy="strict" if policy == "strict" else "off",
        )
    if graph is not None:
        if scenario > len(report.scenarios):
            fail(f"--scenario {scenario}: only {len(report.scenarios)} scenarios were explored")
        chosen = report.scenarios[scenario - 1]
        assert checked.graph is not None
        labels = {call.label: call.index for call in checked.graph.plan.calls}
        statuses = {i: r.status for i, r in enumerate(chosen.calls) if r.status != "waiting"}
        critical = [labels[label] for label in chosen.critical_path]
        graph_format: GraphFormat = "mermaid" if graph == "mermaid" else "dot"
        sys.stdout.write(draw(checked.graph, graph_format, statuses, critical))
    elif as_json:
        data = report.to_dict()
        sys.stdout.write(json.dumps(data, ensure_ascii=False, default=json_default) + "\n")
    else:
        _print(report, verbose)
    errors = [d for d in report.diagnostics if d.severity == "error"]
    raise typer.Exit(1 if errors else 0)
