"""The ``obelisk`` application: ``check``, ``graph``, ``run``, ``simulate``, ``loop``,
``tools``; for durable runs ``resume``, ``approve``, ``reject``, ``approvals list`` and
``runs list|show|abort`` (docs/durable.md).

Exit codes: 0 when the plan has no errors (``run``: every call completed), 1
when ``run`` had a call fail (or a latent call left pending), 2 when the plan
has errors or the command line itself is wrong (a missing file, bad JSON in
``--input``, a tools module that does not import); ``loop`` adds 3 (no output
after ``--max-turns``).  ``resume`` exits like ``run``, and 2 when the run cannot
be resumed.  A plan argument of ``-`` reads standard input.
"""

from __future__ import annotations

from typing import Annotated, Any

import typer
from typer.core import TyperCommand

from obelisk import __version__
from obelisk.cli.check import check_command, graph_command
from obelisk.cli.durable import (
    approvals_list_command,
    approve_command,
    reject_command,
    resume_command,
    runs_abort_command,
    runs_list_command,
    runs_show_command,
)
from obelisk.cli.explain import explain_command
from obelisk.cli.io import out, stdout_to_stderr_from_now
from obelisk.cli.loop import loop_command
from obelisk.cli.run import run_command
from obelisk.cli.simulate import simulate_command
from obelisk.cli.tools import tools_command

__all__ = ["app", "main"]

app = typer.Typer(
    name="obelisk",
    help="Check, draw and run LLM tool-call plans (docs/cli.md).",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)


class _Command(TyperCommand):
    """A command whose usage line names its arguments plainly (``PLAN``, not ``{PLAN}``)."""

    def collect_usage_pieces(self, ctx: Any) -> list[str]:
        pieces: list[str] = super().collect_usage_pieces(ctx)
        return [p[1:-1] if p.startswith("{") and p.endswith("}") else p for p in pieces]

    def get_params(self, ctx: Any) -> list[Any]:
        params: list[Any] = super().get_params(ctx)
        for param in params:  # "PLAN  Plan JSON file...", not "PLAN <str>  Plan JSON file..."
            if getattr(param, "param_type_name", None) == "argument":
                param.display_type_rich = _no_type
        return params


def _no_type(ctx: Any = None) -> None:
    return None


for _name, _command in (
    ("check", check_command),
    ("graph", graph_command),
    ("run", run_command),
    ("simulate", simulate_command),
    ("loop", loop_command),
    ("tools", tools_command),
    ("resume", resume_command),
    ("approve", approve_command),
    ("reject", reject_command),
    ("explain", explain_command),
):
    app.command(_name, cls=_Command)(_command)

_runs = typer.Typer(
    help="Durable runs in a journal: list them, show one, abort one.", no_args_is_help=True
)
_runs.command("list", cls=_Command)(runs_list_command)
_runs.command("show", cls=_Command)(runs_show_command)
_runs.command("abort", cls=_Command)(runs_abort_command)
_approvals = typer.Typer(
    help="Calls of durable runs that wait for a person's approval.", no_args_is_help=True
)
_approvals.command("list", cls=_Command)(approvals_list_command)
app.add_typer(_runs, name="runs")
app.add_typer(_approvals, name="approvals")


def _version(value: bool) -> None:
    if value:
        out.print(f"obelisk {__version__}", markup=False)
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
    """Console-script entry point (and ``python -m obelisk``).  When the command is done,
    standard output is sent to standard error for the rest of the process, so that a
    tools module's ``atexit`` handlers cannot add to it."""
    try:
        app()
    finally:
        stdout_to_stderr_from_now()
