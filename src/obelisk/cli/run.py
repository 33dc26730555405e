"""``obelisk run``: check a plan, run it with the standard tools plus ``--tools``."""

from __future__ import annotations

import contextlib
import functools
import sys
import types
from collections.abc import Callable
from pathlib import Path
from typing import IO, TYPE_CHECKING, Annotated, Any, NoReturn

import typer

from obelisk.cli.approve import TerminalApprover
from obelisk.cli.io import (
    BaseUrlOption,
    FilesRootOption,
    InputOrStdinOption,
    JournalOption,
    NoStdlibOption,
    OverrideOption,
    PlanArgument,
    PolicyOption,
    StateOption,
    ToolsOption,
    check_policy,
    err,
    fail,
    load_registry,
    read_input,
    read_object,
    read_plan,
    tool_flags,
    tools_print_to_stderr,
)
from obelisk.cli.model_spec import model_from_spec
from obelisk.cli.otel import OtelOption, start_otel
from obelisk.cli.results import dump_json, report
from obelisk.diagnostics import printable
from obelisk.errors import ApprovalAborted, ApprovalError, JournalError, PlanError
from obelisk.interpreter.analysis.check import check
from obelisk.interpreter.analysis.result import CheckResult
from obelisk.interpreter.fixed_plan import resume_sync, run_sync
from obelisk.interpreter.plan.model import Plan
from obelisk.interpreter.plan.parse import parse_plan
from obelisk.interpreter.runtime.durable.postgres import shown
from obelisk.interpreter.runtime.durable.runs import new_run_id
from obelisk.interpreter.runtime.events import Event
from obelisk.interpreter.runtime.records import RunResult
from obelisk.interpreter.tools.registry import Registry

if TYPE_CHECKING:
    from rich.progress import Progress

    from obelisk.interpreter.loop.model import Model

__all__ = ["CLI_CONTEXT", "decided", "run_command", "settle"]

_PROGRESS_FROM = 5
"""``obelisk run`` shows a progress bar on a terminal for plans of more calls than this."""

CLI_CONTEXT: Any = types.MappingProxyType({})
"""The run context the commands give tools that take an ``obelisk.Context``: the command
line has no object of the caller's to pass, so ``ctx.deps`` is an empty read-only mapping,
with or without ``--journal`` (docs/cli.md); ``ctx.idempotency_key`` and the rest are
as in any run."""


def settle(start: Callable[[], RunResult]) -> RunResult:
    """The result of ``start()`` (a run or a resume), with what tools print sent to
    standard error.  A tool that raises ``SystemExit`` or ``KeyboardInterrupt`` stops
    the run (docs/semantics.md): its call fails with that error recorded, and the run's
    result so far is returned here to be reported, instead of ending the process
    silently (``sys.exit(0)`` in a tool would otherwise exit 0 with nothing printed).
    A stop that carries no result (Ctrl-C outside any tool) is raised again."""
    try:
        with tools_print_to_stderr():
            return start()
    except (KeyboardInterrupt, SystemExit) as stop:
        result = getattr(stop, "result", None)
        if not isinstance(result, RunResult):
            raise
        return result


def _announce(run_id: str, journal: str) -> Callable[[Event], None]:
    """An event handler that names the durable run on standard error when it starts, so
    that it can be found (and resumed) even if its process is killed."""

    def announce(event: Event) -> None:
        if event.event == "run_started":
            err.print(f"run {run_id} (journal {printable(shown(journal))})", markup=False)
            sys.stderr.flush()

    return announce


def _open_trace(trace: Path) -> IO[str]:
    try:
        return trace.open("w", encoding="utf-8")
    except OSError as exc:
        fail(f"cannot write trace {str(trace)!r}: {exc.strerror or exc}")


def _approved(
    plan: Plan, registry: Registry, input: Any, state: Any, approver: TerminalApprover
) -> CheckResult:
    """The check of the plan a person approved after seeing it, its dry run and any
    edit's changes: the run takes it as it is, without checking the plan again.

    Exits 1 when it is rejected, 2 when it has errors."""
    from obelisk.interpreter.simulate.approval import Approval, plan_diff  # only --approve
    from obelisk.interpreter.simulate.simulate import simulate_checked

    current, before = plan, None
    while True:
        checked = check(current, registry, input, state, policy=None)  # as obelisk.run does
        if not checked.ok:
            checked.raise_for_errors()
        simulation = simulate_checked(checked, registry, input, state)
        calls = [call.to_data() for call in current.calls]
        diff = plan_diff(before, calls) if before is not None else None
        decision = approver(Approval(checked, simulation, diff))
        if decision.action == "accept":
            return checked
        if decision.action == "reject":
            err.print(f"rejected: {decision.reason or 'no reason given'}", markup=False)
            raise typer.Exit(1)
        try:
            current, before = parse_plan(decision.plan), calls
        except PlanError as exc:
            for diagnostic in exc.diagnostics:
                err.print(str(diagnostic), markup=False, style="red")


_ConcurrencyOption = Annotated[
    int,
    typer.Option("--concurrency", "-c", min=1, metavar="N", help="Calls in flight at once."),
]
_TimeoutOption = Annotated[
    float | None,
    typer.Option(
        "--timeout",
        min=0.001,
        metavar="SECONDS",
        help="Stop the run after SECONDS: calls in flight are cancelled.",
    ),
]
_TraceOption = Annotated[
    Path | None,
    typer.Option("--trace", metavar="FILE", help="Write every event to FILE as JSON lines."),
]
_JsonOption = Annotated[
    bool, typer.Option("--json", help="Print {status, state, calls, diagnostics} as JSON.")
]
_ApproveOption = Annotated[
    bool,
    typer.Option(
        "--approve",
        help="Show the plan and its dry run and ask first; ask about calls that need it.",
    ),
]
_RunIdOption = Annotated[
    str | None,
    typer.Option(
        "--run-id", metavar="ID", help="The durable run's id (default: 16 random hex digits)."
    ),
]
_ReplacesOption = Annotated[
    str | None,
    typer.Option(
        "--replaces",
        metavar="RUN_ID",
        help="The durable run this one replaces (over or aborted; it is never resumed).",
    ),
]
_ModelOption = Annotated[
    str | None,
    typer.Option(
        "--model",
        "-m",
        metavar="SPEC",
        help="Answer latent calls and delegates with this model, one request per call: "
        "openai:MODEL, anthropic:MODEL, litellm:MODEL, or scripted:FILE (JSON lines of "
        "answers).",
    ),
]
_OutputValidationOption = Annotated[
    str,
    typer.Option(
        "--output-validation",
        metavar="strict|warn|off",
        help="A result that does not fit its tool's output schema: strict (not written, "
        "the call is invalid_output), warn (written, with a warning) or off (written). "
        "A tool's own setting wins.",
    ),
]


def run_command(
    plan: PlanArgument,
    tools: ToolsOption = None,
    input: InputOrStdinOption = None,
    state: StateOption = None,
    no_stdlib: NoStdlibOption = False,
    files_root: FilesRootOption = None,
    override: OverrideOption = False,
    concurrency: _ConcurrencyOption = 64,
    timeout: _TimeoutOption = None,
    trace: _TraceOption = None,
    as_json: _JsonOption = False,
    approve: _ApproveOption = False,
    journal: JournalOption = None,
    run_id: _RunIdOption = None,
    output_validation: _OutputValidationOption = "strict",
    replaces: _ReplacesOption = None,
    model: _ModelOption = None,
    base_url: BaseUrlOption = None,
    otel: OtelOption = False,
    policy: PolicyOption = "off",
) -> None:
    """Run a plan with the standard tools plus --tools; print the final state.

    Exits 0 when every call completed, 1 when a call failed, was skipped because
    a read did not exist, or a latent call is left pending, 2 when the plan has
    errors and nothing ran.  With --journal FILE the run is durable: it can be resumed
    with `obelisk resume RUN_ID --journal FILE` after a crash or a pause for approvals,
    and --replaces RUN_ID names the run of that journal it replaces.  With --model SPEC
    the model answers the plan's latent calls and delegates.
    """
    _check_options(plan, input, journal, (run_id, replaces), (output_validation, policy))
    chosen = _model(model, base_url, journal)
    plan_bytes = read_plan(plan)
    input_data = read_input(input)
    start = read_object(state, "state")
    registry = load_registry(tools, stdlib=not no_stdlib, files_root=files_root, override=override)
    flags = tool_flags(tools, no_stdlib=no_stdlib, files_root=files_root, override=override)
    handlers, run_id, trace_file = _handlers(journal, run_id, trace)
    approver = TerminalApprover(err, model=False) if approve else None
    stop_otel = start_otel(otel)
    try:
        parsed = parse_plan(plan_bytes)  # parsed once: counted here, run below
        # the plan is checked once: for the approval, or by the run
        checked: CheckResult | None = None
        if approver is not None:
            checked = _approved(parsed, registry, input_data, start, approver)
            assert checked.plan is not None
            parsed = checked.plan
        options = {
            "concurrency": concurrency, "timeout": timeout, "journal": journal,
            "run_id": run_id, "output_validation": output_validation,
            "replaces": replaces, "model": chosen, "policy": policy,
        }  # fmt: skip
        target = parsed if checked is None else checked
        result = _run_plan(target, len(parsed.calls), (registry, input_data, start),
                           handlers, as_json, options)  # fmt: skip
        result = decided(result, approver)
    except JournalError as exc:
        _journal_failed(exc, as_json)
    except ApprovalAborted as exc:
        err.print(f"obelisk: approval abandoned: {exc}", markup=False, style="bold red")
        raise typer.Exit(1) from None
    except PlanError as exc:
        _invalid(plan, exc, as_json)
    finally:
        if trace_file is not None:
            trace_file.close()
        stop_otel()  # --otel: sends the spans left in the batch
    report(result, as_json, flags)


def _run_plan(
    target: Plan | CheckResult,
    calls: int,
    given: tuple[Registry, Any, Any],
    handlers: list[Any],
    as_json: bool,
    options: dict[str, Any],
) -> RunResult:
    """Run ``target`` with ``given`` (registry, input, state) and ``options`` (keywords
    of :func:`obelisk.run_sync`), with a progress bar on a terminal for a long plan."""
    progress = _progress(calls, as_json, handlers)
    with progress if progress is not None else contextlib.nullcontext():
        return settle(
            lambda: run_sync(target, *given, on_event=handlers, context=CLI_CONTEXT, **options)
        )


def _check_options(
    plan: str,
    input: str | None,
    journal: str | None,
    durable: tuple[str | None, str | None],
    modes: tuple[str, str],
) -> None:
    """Exit 2 for options that do not go together (``durable``: ``--run-id`` and
    ``--replaces``, which need ``--journal``) and bad ``modes`` (``--output-validation``
    and ``--policy``)."""
    validation, policy = modes
    for option, value in zip(("--run-id", "--replaces"), durable, strict=True):
        if value is not None and journal is None:
            fail(f"{option} names a durable run: it needs --journal FILE too")
    if validation not in ("strict", "warn", "off"):
        fail(f"--output-validation must be strict, warn or off, got {validation!r}")
    check_policy(policy)
    if plan == "-" and input == "-":
        fail("the plan and --input cannot both be read from standard input")


def _model(spec: str | None, base_url: str | None, journal: str | None) -> Model | None:
    """The model of ``--model SPEC`` (``None`` without it); exits 2 for a bad spec,
    ``--base-url`` without ``--model`` and ``--model`` with ``--journal``."""
    if spec is None:
        if base_url is not None:
            fail("--base-url applies to --model openai:MODEL only")
        return None
    if journal is not None:
        fail(
            "--model cannot go with --journal: a durable run is resumed without the model; "
            "use obelisk loop for a model that plans too"
        )
    return model_from_spec(spec, base_url)


def _handlers(
    journal: str | None, run_id: str | None, trace: Path | None
) -> tuple[list[Any], str | None, IO[str] | None]:
    """The run's event handlers (naming a durable run when it starts, writing
    ``--trace``), its run id (a new one for a durable run without ``--run-id``) and
    the open trace file."""
    handlers: list[Any] = []
    if journal is not None:
        run_id = run_id if run_id is not None else new_run_id()
        handlers.append(_announce(run_id, journal))
    trace_file = _open_trace(trace) if trace is not None else None
    if trace_file is not None:
        handlers.append(_trace_writer(trace_file))
    return handlers, run_id, trace_file


def _trace_writer(trace_file: IO[str]) -> Callable[[Event], None]:
    """An event handler that writes every event to ``trace_file`` as a JSON line."""

    def write_trace(event: Event) -> None:
        trace_file.write(dump_json(event.to_dict()) + "\n")
        trace_file.flush()

    return write_trace


def _progress(calls: int, as_json: bool, handlers: list[Any]) -> Progress | None:
    """A progress bar on a terminal for a plan of more than a few ``calls`` (its event
    handler added to ``handlers``), else ``None``."""
    if as_json or not err.is_terminal or calls <= _PROGRESS_FROM:
        return None
    from rich.progress import Progress

    progress = Progress(console=err, transient=True)
    task = progress.add_task("running", total=calls)

    def advance(event: Event) -> None:
        if event.event in ("call_succeeded", "call_failed", "call_invalid_output", "call_skipped"):
            progress.advance(task)

    handlers.append(advance)
    return progress


def decided(result: RunResult, approver: TerminalApprover | None) -> RunResult:
    """``result`` resumed with the person's decisions while calls await approval."""
    while result.status == "awaiting_approval" and approver is not None:
        decisions = {pending.id: approver.decide(pending) for pending in result.pending}
        try:
            result = settle(functools.partial(resume_sync, result, decisions))
        except ApprovalError as exc:
            err.print(f"obelisk: {exc}", markup=False, style="red")
    return result


def _journal_failed(problem: JournalError, as_json: bool) -> NoReturn:
    """Exit 2 for a journal that cannot be used (``--json``: stdout stays one JSON
    document, whatever stopped the run)."""
    if as_json:
        payload: dict[str, Any] = {
            "status": "error",
            "state": None,
            "calls": [],
            "error": {"code": problem.code, "message": str(problem)},
        }
        sys.stdout.write(dump_json(payload) + "\n")
    fail(str(problem))


def _invalid(plan: str, problem: PlanError, as_json: bool) -> NoReturn:
    """Print a plan's errors (``--json``: ``"status": "invalid"`` and its diagnostics)
    and exit 2: nothing ran."""
    if as_json:
        payload = {
            "status": "invalid",
            "state": None,
            "calls": [],
            "diagnostics": [d.to_dict() for d in problem.diagnostics],
        }
        sys.stdout.write(dump_json(payload) + "\n")
    else:
        for diagnostic in problem.diagnostics:
            err.print(str(diagnostic), markup=False)
        err.print(
            f"{printable(plan)}: the plan has errors; nothing ran",
            markup=False,
            style="bold red",
        )
    raise typer.Exit(2)
