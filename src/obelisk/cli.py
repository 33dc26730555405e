"""The ``obelisk`` command line: ``check``, ``graph``, ``run`` and ``loop`` (typer + rich).

Exit codes: 0 when the plan has no errors (``run``: every call completed), 1
when ``run`` had a call fail (or a latent call left pending), 2 when the plan
has errors or the command line itself is wrong (a missing file, bad JSON in
``--input``, a tools module that does not import).  A plan argument of ``-``
reads standard input.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer
from rich.console import Console

from obelisk import __version__
from obelisk.cli_loop import loop_command
from obelisk.errors import ObeliskError
from obelisk.interpreter.check import CheckResult, check
from obelisk.interpreter.drawing import GraphFormat, draw
from obelisk.interpreter.registry import Registry

__all__ = ["app", "main"]

app = typer.Typer(
    name="obelisk",
    help="Check, draw and run LLM tool-call plans.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
_out = Console(highlight=False, soft_wrap=True)
_err = Console(stderr=True, highlight=False, soft_wrap=True)

PlanArgument = Annotated[str, typer.Argument(help="Plan JSON file, or - for standard input.")]
ToolsOption = Annotated[
    list[str] | None,
    typer.Option(
        "--tools",
        "-t",
        help="Python file or importable module whose @tool functions to load (repeatable).",
    ),
]
InputOption = Annotated[
    Path | None, typer.Option("--input", "-i", help="JSON file with the input document.")
]
StateOption = Annotated[
    Path | None, typer.Option("--state", help="JSON file with the state the plan starts from.")
]


def _fail(message: str) -> NoReturn:
    _err.print(f"obelisk: error: {message}", markup=False)
    raise typer.Exit(2)


def _read_plan(source: str) -> bytes:
    if source == "-":
        return sys.stdin.buffer.read()
    try:
        return Path(source).read_bytes()
    except OSError as exc:
        _fail(f"cannot read plan {source!r}: {exc.strerror or exc}")


def _read_json(path: Path | None, what: str) -> Any:
    if path is None:
        return None
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        _fail(f"cannot read {what} {str(path)!r}: {exc.strerror or exc}")
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        _fail(
            f"{what} {str(path)!r} is not valid JSON: {exc.msg} at line {exc.lineno}, "
            f"column {exc.colno}"
        )


def _load_tools(targets: list[str] | None) -> Registry | None:
    if not targets:
        return None
    registry = Registry()
    try:
        for target in targets:
            registry = registry.merge(Registry.from_module(target))
    except ObeliskError as exc:
        _fail(str(exc))
    return registry


def _print_result(result: CheckResult, name: str, tools_known: bool) -> None:
    for diagnostic in result.diagnostics:
        style = "bold red" if diagnostic.severity == "error" else "yellow"
        head, _, rest = str(diagnostic).partition("\n")
        _out.print(head, style=style, markup=False)
        if rest:
            _out.print(rest, markup=False)
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
    _out.print(
        f"{name}: {verdict} ({size})", markup=False, style="bold red" if errors else "bold green"
    )
    if not tools_known:
        _out.print(
            "note: no --tools given: tool names and arguments were not checked",
            markup=False,
            style="dim",
        )


@app.command("check")
def check_command(
    plan: PlanArgument,
    tools: ToolsOption = None,
    input: InputOption = None,
    state: StateOption = None,
    as_json: Annotated[
        bool, typer.Option("--json", help='Print {"ok", "diagnostics"} as JSON.')
    ] = False,
) -> None:
    """Check a plan: syntax, tools, arguments, references, cycles (DESIGN §2.2).

    Exits 0 when the plan has no errors (warnings allowed), 2 when it has errors.
    """
    registry = _load_tools(tools)
    result = check(
        _read_plan(plan), registry, _read_json(input, "input"), _read_json(state, "state")
    )
    if as_json:
        sys.stdout.write(json.dumps(result.to_dict(), ensure_ascii=False) + "\n")
    else:
        _print_result(result, "<stdin>" if plan == "-" else plan, registry is not None)
    raise typer.Exit(0 if result.ok else 2)


@app.command("graph")
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
        _fail(f"unknown --format {fmt!r}; expected 'mermaid' or 'dot'")
    result = check(_read_plan(plan), _load_tools(tools))
    if result.graph is None:
        for diagnostic in result.diagnostics:
            _err.print(str(diagnostic), markup=False)
        raise typer.Exit(2)
    graph_format: GraphFormat = "mermaid" if fmt == "mermaid" else "dot"
    sys.stdout.write(draw(result.graph, graph_format))


def _registry_for_run(targets: list[str] | None, files_root: Path | None, override: bool) -> Any:
    from obelisk.stdlib_tools import default_registry

    registry = default_registry(files_root=files_root)
    try:
        for target in targets or ():
            registry = registry.merge(Registry.from_module(target), override=override)
    except ObeliskError as exc:
        message = str(exc)
        if "already registered" in message:
            message += " (a standard tool has that name; pass --override to replace it)"
        _fail(message)
    return registry


_PROGRESS_FROM = 5
"""``obelisk run`` shows a progress bar on a terminal for plans of more calls than this."""


def _count_calls(plan_bytes: bytes) -> int:
    from obelisk.errors import PlanError
    from obelisk.interpreter.plan import parse_plan

    try:
        return len(parse_plan(plan_bytes))
    except PlanError:
        return 0


def _json_default(value: Any) -> Any:
    return repr(value)


@app.command("run")
def run_command(
    plan: PlanArgument,
    tools: ToolsOption = None,
    input: Annotated[
        str | None, typer.Option("--input", "-i", help="JSON file with the input, or - for stdin.")
    ] = None,
    state: StateOption = None,
    concurrency: Annotated[
        int, typer.Option("--concurrency", "-c", min=1, help="Calls in flight at once.")
    ] = 64,
    files_root: Annotated[
        Path | None,
        typer.Option("--files-root", help="Directory the file tools may read and write."),
    ] = None,
    trace: Annotated[
        Path | None, typer.Option("--trace", help="Write every event to FILE as JSON lines.")
    ] = None,
    override: Annotated[
        bool,
        typer.Option("--override", help="Let --tools replace standard tools of the same name."),
    ] = False,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print {status, state, calls, diagnostics} as JSON.")
    ] = False,
) -> None:
    """Run a plan with the standard tools plus --tools; print the final state.

    Exits 0 when every call completed, 1 when a call failed (or a latent call is
    left pending), 2 when the plan has errors and nothing ran.
    """
    from obelisk.errors import PlanError
    from obelisk.interpreter.records import Event
    from obelisk.interpreter.run import run_sync

    if plan == "-" and input == "-":
        _fail("the plan and --input cannot both be read from standard input")
    plan_bytes = _read_plan(plan)
    if input == "-":
        try:
            input_data = json.loads(sys.stdin.read())
        except json.JSONDecodeError as exc:
            _fail(
                f"input from stdin is not valid JSON: {exc.msg} at line {exc.lineno}, "
                f"column {exc.colno}"
            )
    else:
        input_data = _read_json(Path(input) if input else None, "input")
    registry = _registry_for_run(tools, files_root, override)
    handlers: list[Any] = []
    trace_file = None
    if trace is not None:
        try:
            trace_file = trace.open("w", encoding="utf-8")
        except OSError as exc:
            _fail(f"cannot write trace {str(trace)!r}: {exc.strerror or exc}")

        def write_trace(event: Event) -> None:
            assert trace_file is not None
            trace_file.write(json.dumps(event.to_dict(), default=_json_default) + "\n")

        handlers.append(write_trace)
    progress = None
    if not as_json and _err.is_terminal and _count_calls(plan_bytes) > _PROGRESS_FROM:
        from rich.progress import Progress

        progress = Progress(console=_err, transient=True)
    try:
        if progress is not None:
            with progress:
                task = progress.add_task("running", total=None)

                def advance(event: Event) -> None:
                    if event.event == "run_started":
                        progress.update(task, total=getattr(event, "calls", None))
                    elif event.event in ("call_succeeded", "call_failed", "call_skipped"):
                        progress.advance(task)

                handlers.append(advance)
                result = run_sync(
                    plan_bytes,
                    registry,
                    input_data,
                    _read_json(state, "state"),
                    concurrency=concurrency,
                    on_event=handlers,
                )
        else:
            result = run_sync(
                plan_bytes,
                registry,
                input_data,
                _read_json(state, "state"),
                concurrency=concurrency,
                on_event=handlers,
            )
    except PlanError as exc:
        if as_json:
            payload = {
                "status": "invalid",
                "state": None,
                "calls": [],
                "diagnostics": [d.to_dict() for d in exc.diagnostics],
            }
            sys.stdout.write(json.dumps(payload, ensure_ascii=False) + "\n")
        else:
            for diagnostic in exc.diagnostics:
                _err.print(str(diagnostic), markup=False)
            _err.print(f"{plan}: the plan has errors; nothing ran", markup=False, style="bold red")
        raise typer.Exit(2) from None
    finally:
        if trace_file is not None:
            trace_file.close()
    if as_json:
        sys.stdout.write(
            json.dumps(result.to_dict(), ensure_ascii=False, default=_json_default) + "\n"
        )
    else:
        sys.stdout.write(
            json.dumps(result.state, ensure_ascii=False, indent=2, default=_json_default) + "\n"
        )
        counts: dict[str, int] = {}
        for record in result.calls:
            counts[record.status] = counts.get(record.status, 0) + 1
            if record.status == "failed" and record.error:
                _err.print(
                    f"{record.label} failed: {record.error['type']}: {record.error['message']}",
                    markup=False,
                    style="red",
                )
        summary = ", ".join(f"{n} {status}" for status, n in counts.items())
        _err.print(
            f"{result.status}: {len(result.calls)} calls ({summary})",
            markup=False,
            style="bold green" if result.status == "completed" else "bold red",
        )
    raise typer.Exit(0 if result.status == "completed" else 1)


app.command("loop")(loop_command)  # in cli_loop.py; the exit codes there add 3 (no output)


def _version(value: bool) -> None:
    if value:
        _out.print(f"obelisk {__version__}", markup=False)
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option("--version", callback=_version, is_eager=True, help="Show the version."),
    ] = False,
) -> None:
    """obelisk: a strict, fast data-flow interpreter for LLM tool-call plans."""


def main() -> None:
    """Console-script entry point."""
    app()
