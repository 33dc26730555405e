"""``obelisk loop``: run the execution loop from the command line (docs/loop.md).

The model is ``openai:MODEL`` (any OpenAI-compatible chat API; ``--base-url`` for
a local server) or ``scripted:FILE`` (a JSON-lines transcript replayed by
:class:`~obelisk.models.ScriptedModel`).  The tools are ``--tools`` (as for
``obelisk run``): the standard tools plus ``--tools``, as for every command.

Exit codes: 0 when the model gave an output; 1 when the loop stopped without
one (more unusable answers in a row than ``--max-corrections``, the model
failed, or approval was abandoned); 2 for a bad command line; 3 when
``--max-turns`` turns gave no output.  Registered on the ``obelisk`` app by
:mod:`obelisk.cli.app`, whose helpers it imports when it runs.
"""

from __future__ import annotations

import contextlib
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from obelisk.cli.approve import TerminalApprover, print_pending
from obelisk.cli.io import (
    BaseUrlOption,
    FilesRootOption,
    InputOrStdinOption,
    NoStdlibOption,
    OverrideOption,
    ToolsOption,
    err,
    fail,
    json_for_output,
    load_registry,
    out,
    plural,
    read_input,
    read_object,
    read_plan,
    tools_print_to_stderr,
    warn_replaced,
)
from obelisk.cli.model_spec import model_from_spec
from obelisk.cli.otel import OtelOption, start_otel
from obelisk.diagnostics import printable
from obelisk.errors import (
    ApprovalAborted,
    ApprovalError,
    LoopBudgetExceeded,
    LoopError,
    ObeliskError,
    PlanError,
)
from obelisk.json_values import sorted_keys

if TYPE_CHECKING:
    from obelisk.interpreter.loop.loop import Loop
    from obelisk.interpreter.loop.records import LoopResult, Turn
    from obelisk.interpreter.loop.revisions import Revision

__all__ = ["loop_command"]


def _one_line(text: str) -> str:
    return printable(" ".join(text.split()))


class _Progress:
    """A live line on a terminal: the turn, calls started and finished, tokens."""

    def __init__(self, max_turns: int) -> None:
        from rich.live import Live

        self.max_turns = max_turns
        self.turn = 0
        self.started = self.finished = self.tokens = 0
        self.live = Live("", console=err, transient=True, refresh_per_second=8)

    def __enter__(self) -> _Progress:
        self.live.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self.live.__exit__(None, None, None)

    def on_event(self, event: Any) -> None:
        kind = event.event
        if kind == "turn_started" and event.depth == 0:
            self.turn = event.turn
        elif kind == "call_started":
            self.started += 1
        elif kind in ("call_succeeded", "call_failed", "call_skipped"):
            self.finished += 1
        elif kind == "turn_finished" and event.usage:
            usage = event.usage
            self.tokens += usage.get(
                "total_tokens", usage.get("prompt_tokens", 0) + usage.get("completion_tokens", 0)
            )
        else:
            return
        self.live.update(
            f"turn {self.turn}/{self.max_turns}: {plural(self.started, 'call')} started, "
            f"{self.finished} finished, {plural(self.tokens, 'token')}"
        )


def _check_options(
    mode: str | None, advance: str, *, stream: bool, approve: bool, input: str | None
) -> None:
    """Exit 2 (:func:`~obelisk.cli.io.fail`) for options that do not go together."""
    if mode not in (None, "eager", "lazy"):
        fail(f"unknown --mode {mode!r}; expected 'eager' or 'lazy'")
    if advance not in ("all", "step"):
        fail(f"unknown --advance {advance!r}; expected 'all' or 'step'")
    if advance == "step" and stream:
        fail("--advance step and --stream cannot go together (a step starts no call early)")
    if approve and input == "-":
        fail("--input - and --approve cannot both read standard input")


def _revision_part(revision: Revision | None) -> str:
    """``", revision 2: 1 kept, 1 added"`` for a revision that kept, refreshed, retried,
    carried, changed or superseded calls (docs/loop.md, "How a plan evolves"), else
    ``""`` (one that only added calls and left out calls that ran)."""
    if revision is None:
        return ""
    counts = {kind: len(calls) for kind, calls in revision.diff.to_dict().items() if calls}
    if set(counts) <= {"added", "dropped"}:  # a plan that only grows says nothing new
        return ""
    return f", revision {revision.number}: " + ", ".join(f"{n} {k}" for k, n in counts.items())


def _shown_status(status: str, reason: str | None) -> str:
    """A call record's status as ``--verbose`` counts it: a call a step left for later
    (skipped with the reason ``planned: ...``, docs/loop.md) is ``planned``."""
    if status == "skipped" and reason is not None and reason.startswith("planned:"):
        return "planned"
    return status


def _turn_line(turn: Turn, revision: Revision | None = None) -> str:
    """One line per turn for ``--verbose``: calls by status, what its revision kept,
    retried or superseded (:func:`_revision_part`), then the error records."""
    solution = turn.solution
    if solution is None:
        return f"turn {turn.index}: not a solution"
    counts: dict[str, int] = {}
    for record in turn.run.calls if turn.run is not None else ():
        status = _shown_status(record.status, record.reason)
        counts[status] = counts.get(status, 0) + 1
    calls = len(solution.calls)
    line = f"turn {turn.index}: {plural(calls, 'call')}"
    if counts:
        line += " (" + ", ".join(f"{n} {status}" for status, n in counts.items()) + ")"
    elif calls:
        line += " (not run)"
    line += _revision_part(revision)
    if solution.output is not None:
        line += ", output given"
    for error in turn.errors:
        where = f"{error.call}: " if error.call else ""
        message = error.error.get("message", "")
        line += f"; {where}{error.error.get('type', 'error')}: {_one_line(str(message))}"
    return line


def _report(result: LoopResult, as_json: bool, verbose: bool) -> None:
    if verbose:
        made = {revision.turn: revision for revision in result.revisions if revision.turn}
        for turn in result.turns:
            line = _turn_line(turn, made.get(turn.index))
            err.print(printable(line), markup=False, style="dim")
    if as_json:
        data = result.to_dict()
        data["state"] = sorted_keys(data["state"])
        text, replaced = json_for_output(data)
        sys.stdout.write(text + "\n")
        warn_replaced(replaced)
        return
    replaced = 0
    for name, value in (("output", result.output), ("state", result.state)):
        out.print(f"{name}:", markup=False, style="bold")
        text, count = json_for_output(value, indent=2, sort_keys=name == "state")
        replaced += count
        out.print(text, markup=False)
    warn_replaced(replaced)


_ModelOption = Annotated[
    str,
    typer.Option(
        "--model",
        "-m",
        metavar="SPEC",
        help="openai:MODEL, anthropic:MODEL, litellm:MODEL, or scripted:FILE (a JSON-lines "
        "transcript).",
    ),
]
_ModeOption = Annotated[
    str | None,
    typer.Option(
        "--mode",
        metavar="eager|lazy",
        help="eager (plan and run each turn) or lazy (plan first).  [default: the mode "
        "the --plan file's plan message writes, else eager]",
        show_default=False,
    ),
]
_AdvanceOption = Annotated[
    str,
    typer.Option(
        "--advance",
        metavar="all|step",
        help="all (run every call of each plan) or step (run only the ready calls, then "
        "ask the model again).",
    ),
]
_StateOption = Annotated[
    Path | None,
    typer.Option("--state", metavar="FILE", help="JSON file with the state to start from."),
]
_PlanOption = Annotated[
    Path | None,
    typer.Option("--plan", metavar="FILE", help="A plan to start from; the model adjusts it."),
]
_OutputSchemaOption = Annotated[
    Path | None,
    typer.Option(
        "--output-schema", metavar="FILE", help="JSON schema file the final output must fit."
    ),
]
_InstructionsOption = Annotated[
    str | None,
    typer.Option("--instructions", metavar="TEXT", help="Extra instructions for every request."),
]
_MaxTurnsOption = Annotated[
    int,
    typer.Option("--max-turns", min=1, metavar="N", help="Requests before giving up (exit 3)."),
]
_MaxCorrectionsOption = Annotated[
    int,
    typer.Option(
        "--max-corrections", min=0, metavar="N", help="Unusable answers in a row allowed."
    ),
]
_ModelTimeoutOption = Annotated[
    float | None,
    typer.Option(
        "--model-timeout",
        min=0.001,
        metavar="SECONDS",
        help="Stop when one model answer takes longer than SECONDS.",
    ),
]
_JsonModeOption = Annotated[
    bool,
    typer.Option(
        "--json-mode",
        help="Ask an openai: model for plain JSON (the schema goes in the request) instead "
        "of structured output.",
    ),
]
_ProtocolOption = Annotated[
    str | None,
    typer.Option(
        "--protocol",
        metavar="json|tools",
        help="How an openai: or litellm: model answers: a JSON solution (json, openai:'s "
        "default) or native tool calls (tools, litellm:'s default).",
    ),
]
_TemperatureOption = Annotated[
    float | None,
    typer.Option("--temperature", min=0.0, metavar="T", help="Sampling temperature (openai:)."),
]
_MaxTokensOption = Annotated[
    int | None,
    typer.Option("--max-tokens", min=1, metavar="N", help="Tokens per answer at most (openai:)."),
]
_MaxRequestsOption = Annotated[
    int,
    typer.Option(
        "--max-requests",
        min=1,
        metavar="N",
        help="Model requests at most, delegates and sub-requests included.",
    ),
]
_ApproveOption = Annotated[
    bool,
    typer.Option(
        "--approve",
        help="Ask y/n/edit for each lazy plan and for each call that needs approval.",
    ),
]
_JsonOption = Annotated[
    bool, typer.Option("--json", help="Print {status, output, state, turns} as JSON.")
]
_TranscriptOption = Annotated[
    Path | None,
    typer.Option(
        "--transcript",
        metavar="FILE",
        help="Write every turn to FILE as JSON lines (replayable).",
    ),
]
_StreamOption = Annotated[
    bool, typer.Option("--stream", help="Run calls while the model is still writing.")
]
_QuarantineOption = Annotated[
    bool,
    typer.Option(
        "--quarantine",
        help="Never show the model an untrusted value, only a handle to it "
        "(docs/loop.md, Quarantine).",
    ),
]
_VerboseOption = Annotated[
    bool, typer.Option("--verbose", "-v", help="Summarize every turn on standard error.")
]


def loop_command(
    model: _ModelOption,
    mode: _ModeOption = None,
    advance: _AdvanceOption = "all",
    input: InputOrStdinOption = None,
    state: _StateOption = None,
    tools: ToolsOption = None,
    no_stdlib: NoStdlibOption = False,
    files_root: FilesRootOption = None,
    override: OverrideOption = False,
    plan: _PlanOption = None,
    output_schema: _OutputSchemaOption = None,
    instructions: _InstructionsOption = None,
    max_turns: _MaxTurnsOption = 8,
    max_corrections: _MaxCorrectionsOption = 3,
    base_url: BaseUrlOption = None,
    model_timeout: _ModelTimeoutOption = None,
    json_mode: _JsonModeOption = False,
    protocol: _ProtocolOption = None,
    temperature: _TemperatureOption = None,
    max_tokens: _MaxTokensOption = None,
    max_requests: _MaxRequestsOption = 1000,
    approve: _ApproveOption = False,
    as_json: _JsonOption = False,
    transcript: _TranscriptOption = None,
    stream: _StreamOption = False,
    quarantine: _QuarantineOption = False,
    verbose: _VerboseOption = False,
    otel: OtelOption = False,
) -> None:
    """Let a model plan and run tool calls until it gives an output (docs/loop.md).

    Prints the final output and state (or, with --json, the whole result).
    Exits 0 with an output, 1 when the loop stopped without one, 2 for a bad
    command line, 3 when --max-turns turns gave no output.
    """
    from obelisk.interpreter.loop.loop import Loop

    _check_options(mode, advance, stream=stream, approve=approve, input=input)
    options: dict[str, Any] = {"structured": False if json_mode else None, "protocol": protocol}
    options |= {"temperature": temperature, "max_tokens": max_tokens, "timeout": model_timeout}
    chosen = model_from_spec(model, base_url, options)  # its HTTP timeout: the loop's bound
    registry = load_registry(tools, stdlib=not no_stdlib, files_root=files_root, override=override)
    given = read_input(input)
    start_plan = read_plan(str(plan)) if plan is not None else None
    mode = mode or _written_mode(start_plan)
    start = read_object(state, "state")
    schema = read_object(output_schema, "output schema")
    approver = TerminalApprover(err) if approve else None
    try:
        loop = Loop(
            chosen,
            registry,
            mode="lazy" if mode == "lazy" else "eager",
            output_schema=schema,
            instructions=instructions,
            max_turns=max_turns,
            max_corrections=max_corrections,
            approve=approver if mode == "lazy" else None,
            stream=stream,
            model_timeout=model_timeout,
            max_requests=max_requests,
            advance="step" if advance == "step" else "all",
            quarantine=quarantine,
        )
    except ObeliskError as exc:
        fail(str(exc))
    progress = _Progress(max_turns) if err.is_terminal and not as_json and not approve else None
    run = _Run(loop, approver, progress, plan)
    stop_otel = start_otel(otel)  # --otel: spans to $OTEL_EXPORTER_OTLP_ENDPOINT
    try:
        result, code, problem = run.logged(transcript, given, start, start_plan)
    finally:
        stop_otel()
    _report(result, as_json, verbose)
    raise typer.Exit(_conclude(result, code, problem, as_json))


def _written_mode(plan: bytes | None) -> str:
    """The ``mode`` a ``--plan`` file's plan message writes (``"eager"`` when it
    writes none, or the file is not JSON: the loop reports that); docs/loop.md."""
    try:
        value = json.loads(plan) if plan is not None else None
    except ValueError:
        return "eager"
    written = value.get("mode") if isinstance(value, dict) else None
    return "lazy" if written == "lazy" else "eager"


class _Run:
    """One ``obelisk loop`` run: the loop run (with the live line when there is one),
    the approvals asked for on the terminal, and the errors that end it.

    ``plan`` is the ``--plan`` file, named when it has errors."""

    def __init__(
        self,
        loop: Loop,
        approver: TerminalApprover | None,
        progress: _Progress | None,
        plan: Path | None,
    ) -> None:
        self.loop, self.approver, self.progress, self.plan = loop, approver, progress, plan

    def logged(
        self, transcript: Path | None, given: Any, start: Any, start_plan: Any
    ) -> tuple[LoopResult, int, ObeliskError | None]:
        """:meth:`outcome`, every turn written to ``transcript`` (when given) as JSON lines."""
        log = None
        if transcript is not None:
            try:
                log = transcript.open("w", encoding="utf-8")
            except OSError as exc:
                fail(f"cannot write transcript {str(transcript)!r}: {exc.strerror or exc}")
        try:
            result, code, problem = self.outcome(given, start, start_plan)
            if log is not None:
                log.write(result.to_jsonl())
        finally:
            if log is not None:
                log.close()
        return result, code, problem

    def outcome(
        self, given: Any, start: Any, start_plan: Any
    ) -> tuple[LoopResult, int, ObeliskError | None]:
        """``(result, exit code so far, the loop error that stopped it)``; exits 1 when
        approval was abandoned or obelisk failed, 2 when the ``--plan`` has errors."""
        try:
            return self.decided(self.first(given, start, start_plan)), 0, None
        except PlanError as exc:
            for diagnostic in exc.diagnostics:
                err.print(str(diagnostic), markup=False)
            fail(f"the --plan {str(self.plan)!r} has errors")
        except LoopError as exc:
            return exc.result, 3 if isinstance(exc, LoopBudgetExceeded) else 1, exc
        except ApprovalAborted as exc:
            err.print(f"obelisk: approval abandoned: {exc}", markup=False, style="bold red")
            raise typer.Exit(1) from None
        except ObeliskError as exc:
            err.print(f"obelisk: {_one_line(str(exc))}", markup=False, style="bold red")
            raise typer.Exit(1) from None

    def first(self, given: Any, start: Any, start_plan: Any) -> LoopResult:
        """The loop's run, under the live line when there is one."""
        progress = self.progress
        if progress is not None:
            self.loop.listeners = (*self.loop.listeners, progress.on_event)
        live = progress if progress is not None else contextlib.nullcontext()
        with live, tools_print_to_stderr():
            return self.loop.run_sync(given, start, plan=start_plan)

    def decided(self, result: LoopResult) -> LoopResult:
        """``result`` resumed with the person's decisions while calls await approval."""
        approver = self.approver
        while result.status == "awaiting_approval" and approver is not None:
            decisions = {pending.id: approver.decide(pending) for pending in result.pending}
            try:
                with tools_print_to_stderr():
                    result = self.loop.resume_sync(result, decisions)
            except ApprovalError as exc:
                err.print(f"obelisk: {exc}", markup=False, style="red")
        return result


def _conclude(result: LoopResult, code: int, problem: Exception | None, as_json: bool) -> int:
    """Say on standard error how the loop ended; the exit code (1 when calls await
    approval, else ``code``)."""
    if result.status == "awaiting_approval":
        print_pending(err, result.pending)
        err.print(
            "stopped: calls await approval (run again with --approve to decide)",
            markup=False,
            style="bold yellow",
        )
        return 1
    if problem is not None:
        kind = type(problem).__name__
        err.print(f"obelisk: {kind}: {_one_line(str(problem))}", markup=False, style="bold red")
    elif not as_json:
        turns = len(result.turns)
        err.print(
            f"completed in {plural(turns, 'turn')}",
            markup=False,
            style="bold green",
        )
    return code
