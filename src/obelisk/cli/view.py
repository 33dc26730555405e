"""``obelisk view``: one run as a self-contained HTML page, or served while it runs
(docs/viewer.md).  The viewer is imported by this command only."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Annotated, Any

import typer

from obelisk.cli.io import ToolsOption, err, fail, load_registry, read_json
from obelisk.errors import JournalError, UsageError

__all__ = ["view_command"]

_SourceArgument = Annotated[
    str | None,
    typer.Argument(
        metavar="TRACE_OR_RUN",
        help="A --trace file, a journal, a simulate --json report or a loop transcript; "
        "with --journal, a run id (default: the newest run).",
    ),
]
_ViewJournalOption = Annotated[
    Path | None,
    typer.Option("--journal", metavar="FILE", help="Run journal (SQLite) to read the run from."),
]
_PlanOption = Annotated[
    Path | None,
    typer.Option(
        "--plan", metavar="FILE", help="The plan that ran: draws a trace's or dry run's edges."
    ),
]
_OutputOption = Annotated[
    Path,
    typer.Option("--output", "-o", metavar="FILE", help="Where to write the page."),
]
_ServeOption = Annotated[
    bool,
    typer.Option("--serve", help="Serve the page on 127.0.0.1 and follow the run as it goes."),
]
_PortOption = Annotated[
    int, typer.Option("--port", metavar="N", help="Port for --serve (0: any free port).")
]


def view_command(
    source: _SourceArgument = None,
    journal: _ViewJournalOption = None,
    plan: _PlanOption = None,
    tools: ToolsOption = None,
    output: _OutputOption = Path("run.html"),
    serve: _ServeOption = False,
    port: _PortOption = 8765,
) -> None:
    """Write a run as one HTML page that needs no network (docs/viewer.md).

    The page shows the plan's graph coloured by status, a timeline of the calls with
    the critical path, each call's arguments, output and error, the state and the
    write log, a loop's turns and a dry run's scenarios.  Exits 0, or 2 for an input
    that cannot be read.
    """
    if source is None and journal is None:
        fail("give a trace, a report, a transcript or a journal to view, or --journal FILE")
    from obelisk.viewer.load import read_document  # only this command loads the viewer
    from obelisk.viewer.page import render_page

    decoded_plan = read_json(plan, "plan")
    registry = load_registry(tools) if tools else None

    def read() -> dict[str, Any]:
        return read_document(
            source,
            journal=None if journal is None else str(journal),
            plan=decoded_plan,
            tools=registry,
        )

    document = _first(read)
    if serve:
        _serve(read, port)
        return
    try:
        output.write_text(render_page(document), encoding="utf-8")
    except OSError as exc:
        fail(f"cannot write {str(output)!r}: {exc.strerror or exc}")
    err.print(f"wrote {output} ({len(document['calls'])} calls)", markup=False)


def _first(read: Any) -> dict[str, Any]:
    try:
        document: dict[str, Any] = read()
    except (UsageError, JournalError) as exc:
        fail(str(exc))
    return document


def _serve(read: Any, port: int) -> None:
    from obelisk.viewer.serve import ViewServer

    try:
        server = ViewServer(read, port)
    except OSError as exc:
        fail(f"cannot serve on 127.0.0.1:{port}: {exc.strerror or exc}")
    err.print(f"serving {server.url} (Ctrl-C stops)", markup=False)
    with contextlib.suppress(KeyboardInterrupt):
        server.serve_forever()
    server.close()
