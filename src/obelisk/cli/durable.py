"""``obelisk resume``, ``approve``, ``reject``, ``approvals list``,
``runs list|show|abort``: durable runs kept in a run journal (docs/durable.md).

Every command takes ``--journal FILE``, which must exist.  A journal that cannot be
used (no such run, a damaged file, tools that changed, a run another process holds,
a decision that does not fit) exits 2 with one ``obelisk: error: ...`` line and
nothing recorded.
"""

from __future__ import annotations

import contextlib
import functools
import sys
from collections.abc import Iterator
from datetime import datetime, timezone
from typing import Annotated, Any

import typer

from obelisk.cli.approve import TerminalApprover
from obelisk.cli.io import (
    FilesRootOption,
    NoStdlibOption,
    OverrideOption,
    ToolsOption,
    decode_json,
    err,
    fail,
    json_for_output,
    load_registry,
    out,
    plural,
    tool_flags,
)
from obelisk.cli.otel import OtelOption, start_otel
from obelisk.cli.results import report
from obelisk.cli.run import CLI_CONTEXT, decided, settle
from obelisk.diagnostics import printable
from obelisk.errors import ApprovalAborted, ApprovalError, ObeliskError
from obelisk.interpreter.fixed_plan import resume_sync
from obelisk.interpreter.runtime.approvals import Decision, Resolution
from obelisk.interpreter.runtime.durable.journal import Journal

__all__ = [
    "approvals_list_command",
    "approve_command",
    "reject_command",
    "resume_command",
    "runs_abort_command",
    "runs_list_command",
    "runs_show_command",
]

RequiredJournal = Annotated[
    str,
    typer.Option(
        "--journal",
        metavar="FILE|URL",
        help="The run journal (an existing SQLite file, or a postgresql:// URL).",
    ),
]
RunOption = Annotated[
    str | None,
    typer.Option("--run", metavar="RUN_ID", help="The run, when several wait on one id."),
]
JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON.")]


@contextlib.contextmanager
def _journal(path: str) -> Iterator[Journal]:
    """The journal at ``path`` (it must exist); its errors exit 2 through :func:`fail`."""
    try:
        book = Journal(path, create=False)
    except ObeliskError as exc:
        fail(str(exc))
    try:
        yield book
    except (ObeliskError, ApprovalError) as exc:
        fail(str(exc))
    finally:
        book.close()


def _call_key(text: str) -> int | str:
    """A call named on the command line: its index (digits) or its ``_id``."""
    return int(text) if text.isdigit() else text


def _resolutions(
    retry: list[str] | None, succeeded: list[str] | None, failed: list[str] | None
) -> dict[int | str, Resolution]:
    chosen: dict[int | str, Resolution] = {}

    def add(key: str, resolution: Resolution, option: str) -> None:
        if not key:
            fail(f"{option} needs a call: its index or its _id")
        name = _call_key(key)
        if name in chosen:
            fail(f"call {key!r} is resolved twice")
        chosen[name] = resolution

    for key in retry or ():
        add(key, Resolution.retry(), "--retry")
    for item in succeeded or ():
        key, sign, text = item.partition("=")
        if not sign:
            fail(f"--succeeded takes CALL=JSON (the output the call returned), got {item!r}")
        add(key, Resolution.succeeded(decode_json(text, f"the output given for {key!r}")), "")
    for item in failed or ():
        key, _, message = item.partition("=")
        add(key, Resolution.failed(message or "failed (resolved by a person)"), "--failed")
    return chosen


_RetryFailedOption = Annotated[
    bool,
    typer.Option(
        "--retry-failed",
        help="A failed run: run its failed and cancelled calls again, and the calls "
        "skipped because of them.",
    ),
]


def resume_command(
    run_id: Annotated[str, typer.Argument(metavar="RUN_ID", help="The durable run to continue.")],
    journal: RequiredJournal,
    tools: ToolsOption = None,
    no_stdlib: NoStdlibOption = False,
    files_root: FilesRootOption = None,
    override: OverrideOption = False,
    retry: Annotated[
        list[str] | None,
        typer.Option("--retry", metavar="CALL", help="Run a call whose outcome is unknown again."),
    ] = None,
    succeeded: Annotated[
        list[str] | None,
        typer.Option(
            "--succeeded",
            metavar="CALL=JSON",
            help="An unknown call did its work and returned JSON.",
        ),
    ] = None,
    failed: Annotated[
        list[str] | None,
        typer.Option(
            "--failed", metavar="CALL[=MESSAGE]", help="An unknown call failed (with MESSAGE)."
        ),
    ] = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print {status, state, calls, diagnostics} as JSON.")
    ] = False,
    approve: Annotated[
        bool, typer.Option("--approve", help="Ask on the terminal about calls awaiting approval.")
    ] = False,
    retry_failed: _RetryFailedOption = False,
    otel: OtelOption = False,
) -> None:
    """Continue a durable run from its journal: after a crash, a stop, or approvals.

    Calls that committed are replayed from the journal, never run again.  A call
    that was in flight runs again only if its tool is pure or idempotent; otherwise
    its outcome is unknown until you choose: --retry CALL, --succeeded CALL=JSON or
    --failed CALL[=MESSAGE] (CALL: the call's index or _id).  --retry-failed takes
    up a failed run at its failed step: the calls that failed or were cancelled run
    again, with the calls skipped because of them; the calls that succeeded do not.
    Give the same --tools the run started with.  Exits like `obelisk run`; 2 when the
    run cannot be resumed (nothing ran).
    """
    chosen = _resolutions(retry, succeeded, failed)
    if retry_failed and chosen:
        fail(
            "--retry-failed takes no --retry, --succeeded or --failed: a failed run has no "
            "call whose outcome is unknown"
        )
    registry = load_registry(tools, stdlib=not no_stdlib, files_root=files_root, override=override)
    approver = TerminalApprover(err, model=False) if approve else None
    with _journal(journal) as book:
        stop_otel = start_otel(otel)  # --otel: spans to $OTEL_EXPORTER_OTLP_ENDPOINT
        try:
            result = settle(
                functools.partial(
                    resume_sync,
                    run_id,
                    tools=registry,
                    journal=book,
                    unknown=chosen,
                    context=CLI_CONTEXT,
                    retry="failed" if retry_failed else None,
                )
            )
            result = decided(result, approver)
        except ApprovalAborted as exc:
            err.print(f"obelisk: approval abandoned: {exc}", markup=False, style="bold red")
            raise typer.Exit(1) from None
        finally:
            stop_otel()  # sends the spans left in the batch
    report(
        result,
        as_json,
        tool_flags(tools, no_stdlib=no_stdlib, files_root=files_root, override=override),
    )


def approvals_list_command(
    journal: RequiredJournal, run: RunOption = None, as_json: JsonOption = False
) -> None:
    """List the calls of durable runs that wait for a person's approval."""
    with _journal(journal) as book:
        waiting = book.pending(run)
    if as_json:
        rows = [{"run_id": run_id, **pending.to_dict()} for run_id, pending in waiting]
        sys.stdout.write(json_for_output(rows)[0] + "\n")
        return
    for run_id, pending in waiting:
        arguments = json_for_output(pending.arguments)[0]
        out.print(
            printable(f"{pending.id}  run {run_id}  {pending.label}: {arguments}"), markup=False
        )
    err.print(plural(len(waiting), "approval") + " pending", markup=False)


def _decide(journal: str, approval: str, decision: Decision, run: str | None) -> None:
    with _journal(journal) as book:
        run_id = book.decide(approval, decision, run_id=run)
    verb = "approved" if decision.action == "accept" else "rejected"
    err.print(
        printable(
            f"{approval} {verb}; continue the run with: obelisk resume {run_id} "
            f"--journal {book.path}"
        ),
        markup=False,
    )


def approve_command(
    approval: Annotated[str, typer.Argument(metavar="ID", help="The approval's id.")],
    journal: RequiredJournal,
    run: RunOption = None,
) -> None:
    """Approve a call a durable run waits on; `obelisk resume` then runs it.

    The id is bound to the run, its plan and the call's arguments (their hash): it
    approves those arguments of that run only.  Exits 2 when no run waits on it
    (nothing recorded).
    """
    _decide(journal, approval, Decision.accept(), run)


def reject_command(
    approval: Annotated[str, typer.Argument(metavar="ID", help="The approval's id.")],
    journal: RequiredJournal,
    reason: Annotated[
        str, typer.Option("--reason", metavar="TEXT", help="Why (the call fails with it).")
    ],
    run: RunOption = None,
) -> None:
    """Reject a call a durable run waits on; `obelisk resume` then fails it.

    Exits 2 when no run waits on that id (nothing recorded).
    """
    _decide(journal, approval, Decision.reject(reason), run)


def _when(seconds: Any) -> str:
    if not isinstance(seconds, (int, float)):
        return "-"
    moment = datetime.fromtimestamp(seconds, tz=timezone.utc)
    return moment.strftime("%Y-%m-%d %H:%M:%S UTC")


def runs_abort_command(
    run_id: Annotated[str, typer.Argument(metavar="RUN_ID", help="The run to abort.")],
    journal: RequiredJournal,
    reason: Annotated[
        str, typer.Option("--reason", metavar="TEXT", help="Why (kept, and shown by resume).")
    ],
) -> None:
    """Abort a durable run: it is never resumed (nor retried); its status shows aborted.

    A run that replaces it names it with obelisk.run(..., replaces=RUN_ID).  Exits 2
    when the run cannot be aborted (no such run, completed, aborted already, running
    in another process).
    """
    with _journal(journal) as book:
        book.abort(run_id, reason)
    err.print(printable(f"run {run_id} aborted: {reason}"), markup=False)


def _lineage(run: dict[str, Any]) -> str:
    """``, aborted: REASON, replaces X, replaced by Y`` (what of them a run has)."""
    text = ""
    if run.get("status") == "aborted":
        text += f", aborted: {run.get('reason')}"
    if run.get("replaces"):
        text += f", replaces {run['replaces']}"
    if run.get("replaced_by"):
        text += f", replaced by {run['replaced_by']}"
    return text


def _revision_lines(revision: Any) -> list[str]:
    """``revision 2: 1 kept, 1 added`` for a durable loop's turn (the revision of the
    loop's plan its calls are, docs/loop.md), nothing for other runs."""
    if not isinstance(revision, dict) or not isinstance(revision.get("diff"), dict):
        return []
    kinds = [f"{len(calls)} {kind}" for kind, calls in revision["diff"].items() if calls]
    return [f"revision {revision.get('revision')}: {', '.join(kinds) or 'no calls'}"]


def runs_list_command(journal: RequiredJournal, as_json: JsonOption = False) -> None:
    """List the runs in a journal: id, status, calls, pending approvals, unknown calls,
    and an aborted run's reason and the runs that replace each other."""
    with _journal(journal) as book:
        runs = book.runs()
    if as_json:
        sys.stdout.write(json_for_output(runs)[0] + "\n")
        return
    for run in runs:
        extra = ""
        if run["pending"]:
            extra += f", {plural(run['pending'], 'approval')} pending"
        if run["unknown"]:
            extra += f", {plural(run['unknown'], 'unknown call')}"
        extra += _lineage(run)
        out.print(
            printable(
                f"{run['run_id']}  {run['kind']}  {run['status']}  "
                f"{plural(run['calls'], 'call')}{extra}  updated {_when(run['updated'])}"
            ),
            markup=False,
        )


def _retry_lines(retries: list[dict[str, Any]]) -> list[str]:
    """One line per call a retry ran again: how it had ended."""
    lines = []
    for retry in retries:
        error = retry["error"] or {}
        why = f": {error.get('type')}: {error.get('message')}" if error else ""
        lines.append(
            f"retried #{retry['call']} in session {retry['session']} "
            f"(it had ended {retry['status']}{why})"
        )
    return lines


def runs_show_command(
    run_id: Annotated[str, typer.Argument(metavar="RUN_ID", help="The run to show.")],
    journal: RequiredJournal,
    as_json: JsonOption = False,
) -> None:
    """Show a run: its status, each call's status and timing, pending approvals and
    calls whose outcome is unknown."""
    with _journal(journal) as book:
        shown = book.describe(run_id)
    if as_json:
        sys.stdout.write(json_for_output(shown)[0] + "\n")
        return
    counts = ", ".join(f"{n} {status}" for status, n in shown["counts"].items())
    lines = [
        f"run {shown['run_id']} ({shown['kind']}): {shown['status']}{_lineage(shown)}",
        f"created {_when(shown['created'])}, updated {_when(shown['updated'])}",
        f"calls: {counts or 'none'}; {plural(shown['writes'], 'write')}"
        + (f"; {plural(shown['turns'], 'turn')}" if shown["kind"] == "loop" else ""),
    ]
    if shown["locked_by"]:
        lines.append(f"running in {shown['locked_by']}")
    lines.extend(_revision_lines(shown.get("revision")))
    for call in shown["calls"]:
        label = f"#{call['index']} {call['tool']}" + (f" ({call['id']})" if call["id"] else "")
        timing = f" {call['seconds']:.3f} s" if call["seconds"] is not None else ""
        tail = f": {call['reason']}" if call["reason"] else ""
        if call["error"]:
            tail = f": {call['error'].get('type')}: {call['error'].get('message')}"
        lines.append(f"  {label}  {call['status']}{timing}{tail}")
    lines.extend(_retry_lines(shown["retries"]))
    for pending in shown["pending"]:
        arguments = json_for_output(pending["arguments"])[0]
        lines.append(f"awaits approval {pending['id']}: {pending['label']} {arguments}")
    for call in shown["unknown"]:
        lines.append(
            f"unknown: {call['label']} (idempotency key {call['idempotency_key']}); resolve with "
            f"obelisk resume {shown['run_id']} --journal {journal} --retry {call['call']} "
            "(or --succeeded/--failed)"
        )
    for line in lines:
        out.print(printable(line), markup=False)
