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

import importlib
import sys
from typing import Annotated, Any

import typer
from typer.core import TyperCommand

from obelisk import __version__

__all__ = ["app", "main"]

app: typer.Typer
"""The ``obelisk`` application, every command added (a module ``__getattr__`` builds
it on first use)."""


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


def _new_app() -> typer.Typer:
    application = typer.Typer(
        name="obelisk",
        help="Check, draw and run LLM tool-call plans (docs/cli.md).",
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_enable=False,
        rich_markup_mode=None,
    )
    application.callback()(_root)
    return application


_COMMANDS = (
    ("check", "check", "check_command"),
    ("graph", "check", "graph_command"),
    ("run", "run", "run_command"),
    ("run-many", "many", "run_many_command"),
    ("simulate", "simulate", "simulate_command"),
    ("loop", "loop", "loop_command"),
    ("tools", "tools", "tools_command"),
    ("resume", "durable", "resume_command"),
    ("approve", "durable", "approve_command"),
    ("reject", "durable", "reject_command"),
    ("explain", "explain", "explain_command"),
    ("view", "view", "view_command"),
    ("worker", "worker", "worker_command"),
)
"""The top-level commands, in the order help lists them: ``(name, module of
obelisk.cli, function)``."""


def _commands(only: str | None = None) -> list[tuple[str, Any]]:
    """The top-level commands, ``(name, function)``, imported when first needed:
    ``obelisk --version`` needs none of them, and their modules load the interpreter.
    With ``only`` naming a command, that command alone (its module alone is imported:
    ``obelisk run`` loads neither the loop nor run-many); ``[]`` when none has that name."""
    return [
        (name, getattr(importlib.import_module(f"obelisk.cli.{module}"), function))
        for name, module, function in _COMMANDS
        if only is None or name == only
    ]


def _add_groups(application: typer.Typer) -> None:
    """The command groups: ``runs list|show|abort`` and ``approvals list``."""
    from obelisk.cli.durable import (
        approvals_list_command,
        runs_abort_command,
        runs_list_command,
        runs_show_command,
    )

    runs = typer.Typer(
        help="Durable runs in a journal: list them, show one, abort one.", no_args_is_help=True
    )
    runs.command("list", cls=_Command)(runs_list_command)
    runs.command("show", cls=_Command)(runs_show_command)
    runs.command("abort", cls=_Command)(runs_abort_command)
    approvals = typer.Typer(
        help="Calls of durable runs that wait for a person's approval.", no_args_is_help=True
    )
    approvals.command("list", cls=_Command)(approvals_list_command)
    application.add_typer(runs, name="runs")
    application.add_typer(approvals, name="approvals")


def _application(first: str | None = None) -> typer.Typer:
    """The application with every command, or with the top-level command named
    ``first`` (the first word of the command line) alone: typer builds the command
    line of ``obelisk run ...`` (from each command's signature) for ``run`` only, and
    it behaves the same."""
    application = _new_app()
    alone = _commands(first) if first is not None else []
    for name, command in alone or _commands():
        application.command(name, cls=_Command)(command)
    if not alone:
        _add_groups(application)
    return application


_built: list[typer.Typer] = []


def __getattr__(name: str) -> Any:
    if name == "app":
        if not _built:
            _built.append(_application())
        return _built[0]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _version(value: bool) -> None:
    if value:
        from obelisk.cli.io import out

        out.print(f"obelisk {__version__}", markup=False)
        raise typer.Exit()


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
    arguments = sys.argv[1:]
    if arguments == ["--version"]:  # what the option prints, without building the commands
        print(f"obelisk {__version__}")
        return
    from obelisk.interpreter.plan.collector import gc_paused

    with gc_paused():  # the imports of the command line: no garbage, many objects
        application = _application(arguments[0] if arguments else None)
    from obelisk.cli.io import stdout_to_stderr_from_now

    try:
        application()
    finally:
        stdout_to_stderr_from_now()
