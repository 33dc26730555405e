"""How the commands print a run's result: the state on standard output (the whole
result with ``--json``), and on standard error the pending approvals, the calls whose
outcome is unknown, the failures and a summary line (docs/cli.md, "obelisk run")."""

from __future__ import annotations

import sys
from typing import Any, NoReturn

import typer

from obelisk.cli.approve import print_pending
from obelisk.cli.hints import durable_hint
from obelisk.cli.io import err, json_for_output, plural, warn_replaced
from obelisk.diagnostics import printable
from obelisk.interpreter.runtime.records import RunResult
from obelisk.json_values import sorted_keys

__all__ = ["dump_json", "print_unknown", "report", "summary"]

_NAMED = 5
"""How many calls of one status a summary line names before it says how many more."""


def dump_json(value: Any, indent: int | None = None) -> str:
    """JSON text that strict parsers read, with ``†`` and other characters kept
    readable (see :func:`~obelisk.cli.io.json_for_output`: NaN is ``null``, lone
    surrogates are escaped); anything that is not JSON is shown by its repr."""
    return json_for_output(value, indent=indent)[0]


def summary(result: RunResult) -> str:
    """``partial: 3 calls (1 succeeded, 1 pending_latent: #2 summarize, 1 skipped: #3 send)``.

    Statuses come in the order their first call has in the plan; every status but
    ``succeeded`` names its calls (the first five, then how many more).
    """
    groups: dict[str, list[str]] = {}
    for record in result.calls:
        groups.setdefault(record.status, []).append(record.label)
    parts = []
    for status, labels in groups.items():
        part = f"{len(labels)} {status}"
        if status != "succeeded":
            named = ", ".join(labels[:_NAMED])
            more = len(labels) - _NAMED
            part += f": {named}" + (f" and {more} more" if more > 0 else "")
        parts.append(part)
    return f"{result.status}: {plural(len(result.calls), 'call')} ({', '.join(parts)})"


def _output(result: RunResult, as_json: bool) -> tuple[str, int]:
    """What a run prints on standard output, and how many values were replaced: with
    ``--json`` the result (``instances`` added when the plan has instances); else the
    state, or with instances ``state:`` and ``instances:``, each followed by its JSON."""
    if as_json:
        payload = result.to_dict()
        payload["state"] = sorted_keys(payload["state"])
        if result.instances:
            payload["instances"] = sorted_keys(result.instances)
        return json_for_output(payload)
    text, replaced = json_for_output(result.state, indent=2, sort_keys=True)
    if not result.instances:
        return text, replaced
    layers, more = json_for_output(result.instances, indent=2, sort_keys=True)
    return f"state:\n{text}\ninstances:\n{layers}", replaced + more


def _printable_lines(text: str) -> str:
    """``text`` made printable line by line: its newlines stay newlines (a tool's
    message of several lines), other control characters are escaped."""
    return "\n".join(printable(line) for line in text.split("\n"))


def report(result: RunResult, as_json: bool, flags: str = "") -> NoReturn:
    """Print a run's result and exit as ``obelisk run`` does: the final state (and the
    instances' layers; ``--json``: the whole result) on standard output; pending
    approvals, calls whose outcome is unknown, failures and the summary on standard
    error.  ``flags`` are the options that chose the tools (:func:`tool_flags`), for the
    ``obelisk resume`` hint of a paused durable run.  Exits 0 when every call
    completed, else 1."""
    text, replaced = _output(result, as_json)
    sys.stdout.write(text + "\n")
    warn_replaced(replaced)
    if not as_json:
        print_pending(err, result.pending)
        print_unknown(result)
        _print_calls(result)
        cancelled = {r.reason for r in result.calls if r.status == "cancelled" and r.reason}
        for reason in sorted(cancelled):  # why calls did not run: a timeout, a stop
            err.print(reason, markup=False, style="red")
        err.print(
            printable(summary(result)),
            markup=False,
            style="bold green" if result.status == "completed" else "bold red",
        )
        hint = durable_hint(result, flags)
        if hint is not None:
            err.print(printable(hint), markup=False, style="yellow")
    raise typer.Exit(0 if result.status == "completed" else 1)


def _print_calls(result: RunResult) -> None:
    """One line per failed call, per call whose result was not written
    (``invalid_output``) and per warning, in plan order."""
    for record in result.calls:
        if record.status == "failed" and record.error:
            err.print(
                _printable_lines(
                    f"{record.label} failed: {record.error['type']}: {record.error['message']}"
                ),
                markup=False,
                style="red",
            )
        elif record.status == "invalid_output" and record.error:
            err.print(
                _printable_lines(
                    f"{record.label} invalid_output (it ran; its result was not written): "
                    f"{record.error['message']}"
                ),
                markup=False,
                style="red",
            )
        for warning in record.warnings:
            err.print(
                _printable_lines(f"{record.label} warning: {warning}"), markup=False, style="yellow"
            )


def print_unknown(result: RunResult) -> None:
    """One line per call whose outcome is unknown: label, idempotency key, arguments."""
    for call in result.unknown:
        arguments = json_for_output(call.arguments)[0]
        err.print(
            printable(
                f"{call.label} may or may not have run (in flight when its process stopped; "
                f"idempotency key {call.idempotency_key}): {arguments}"
            ),
            markup=False,
            style="yellow",
        )
