"""``obelisk run``: check a plan, run it with the standard tools plus ``--tools``."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from obelisk.cli.io import (
    PlanArgument,
    StateOption,
    ToolsOption,
    err,
    fail,
    json_default,
    read_input,
    read_json,
    read_plan,
    registry_for_run,
)

__all__ = ["run_command"]

_PROGRESS_FROM = 5
"""``obelisk run`` shows a progress bar on a terminal for plans of more calls than this."""


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
    from obelisk.interpreter.plan.parse import parse_plan
    from obelisk.interpreter.runtime.events import Event
    from obelisk.interpreter.runtime.run import run_sync

    if plan == "-" and input == "-":
        fail("the plan and --input cannot both be read from standard input")
    plan_bytes = read_plan(plan)
    input_data = read_input(input)
    registry = registry_for_run(tools, files_root, override)
    handlers: list[Any] = []
    trace_file = None
    if trace is not None:
        try:
            trace_file = trace.open("w", encoding="utf-8")
        except OSError as exc:
            fail(f"cannot write trace {str(trace)!r}: {exc.strerror or exc}")

        def write_trace(event: Event) -> None:
            assert trace_file is not None
            trace_file.write(json.dumps(event.to_dict(), default=json_default) + "\n")

        handlers.append(write_trace)
    try:
        parsed: Any = parse_plan(plan_bytes)  # parsed once: counted here, run below
    except PlanError as exc:
        parsed = exc
    progress = None
    if not as_json and err.is_terminal and len(getattr(parsed, "calls", ())) > _PROGRESS_FROM:
        from rich.progress import Progress

        progress = Progress(console=err, transient=True)
    try:
        if isinstance(parsed, PlanError):
            raise parsed

        def go() -> Any:
            return run_sync(
                parsed,
                registry,
                input_data,
                read_json(state, "state"),
                concurrency=concurrency,
                on_event=handlers,
            )

        if progress is not None:
            with progress:
                task = progress.add_task("running", total=None)

                def advance(event: Event) -> None:
                    if event.event == "run_started":
                        progress.update(task, total=getattr(event, "calls", None))
                    elif event.event in ("call_succeeded", "call_failed", "call_skipped"):
                        progress.advance(task)

                handlers.append(advance)
                result = go()
        else:
            result = go()
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
                err.print(str(diagnostic), markup=False)
            err.print(f"{plan}: the plan has errors; nothing ran", markup=False, style="bold red")
        raise typer.Exit(2) from None
    finally:
        if trace_file is not None:
            trace_file.close()
    if as_json:
        sys.stdout.write(
            json.dumps(result.to_dict(), ensure_ascii=False, default=json_default) + "\n"
        )
    else:
        sys.stdout.write(
            json.dumps(result.state, ensure_ascii=False, indent=2, default=json_default) + "\n"
        )
        counts: dict[str, int] = {}
        for record in result.calls:
            counts[record.status] = counts.get(record.status, 0) + 1
            if record.status == "failed" and record.error:
                err.print(
                    f"{record.label} failed: {record.error['type']}: {record.error['message']}",
                    markup=False,
                    style="red",
                )
        summary = ", ".join(f"{n} {status}" for status, n in counts.items())
        err.print(
            f"{result.status}: {len(result.calls)} calls ({summary})",
            markup=False,
            style="bold green" if result.status == "completed" else "bold red",
        )
    raise typer.Exit(0 if result.status == "completed" else 1)
