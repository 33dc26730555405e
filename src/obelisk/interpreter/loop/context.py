"""Building the context of each request, from scratch every time (docs/loop.md).

Nothing here keeps history: a request is a function of the loop's settings,
the tools, the input, the current state, the carried plan and the last turn's
error records.  So a request's size grows with the state and the plan, not
with the number of turns already taken.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any, Literal

from obelisk.diagnostics import Diagnostic
from obelisk.grammar import Escaped, parse_expression
from obelisk.interpreter.loop.messages import (
    IDENTICAL_CALLS,
    DataMessage,
    ErrorMessage,
    InputMessage,
    Message,
    PlanMessage,
    StateMessage,
    TextMessage,
    ToolMessage,
    tool_description,
)
from obelisk.interpreter.loop.quarantine import QUARANTINE_INSTRUCTIONS, Quarantine
from obelisk.interpreter.runtime.records import CallRecord
from obelisk.interpreter.runtime.resolve import evaluate
from obelisk.interpreter.runtime.state import State
from obelisk.interpreter.tools.registry import Registry

__all__ = [
    "EAGER_INSTRUCTIONS",
    "LATENT_INSTRUCTIONS",
    "LAZY_INSTRUCTIONS",
    "STEP_NOTICE",
    "diagnostic_errors",
    "last_turn_notice",
    "record_error",
    "resolve_output",
    "turn_context",
    "turn_notice",
]

_COMMON = (
    'Answer with one JSON object {"calls": [...], "output": ...}. Each call is '
    '{"_tool": name, <arguments>, "_outputPath": "†state.<path>"}. An argument may be a '
    'reference such as "†input.user" or "†state.profile.name"; "a || b" falls back, '
    '"a && b" requires both. "_outputPath": "†state.ok || †state.error" lists alternative '
    "outcomes; a tool that fails writes its error to the last one. Calls run in parallel "
    "as soon as what they read is written. Set output to the final answer when you have "
    'it, or null to go on; at any depth it may hold references such as "†state.summary", '
    "read once the answer's calls have run."
)
EAGER_INSTRUCTIONS = (
    "You plan and execute. " + _COMMON + " For a latent tool, write its result yourself in "
    '"_output" and the concrete path you chose in "_outputPath". The plan message holds '
    "the calls of your last answer, each with its _status, and the state shows what they "
    "did: to finish, answer with no calls and an output that reads those results by "
    'reference, such as "†state.order.total". Error records name the calls that failed or '
    "could not run: write them again, "
    "fixed, to retry. " + IDENTICAL_CALLS
)
LAZY_INSTRUCTIONS = (
    "You write the whole plan before anything runs. " + _COMMON + " The plan is checked "
    "and may be shown to a person for approval; problems come back as error messages. "
    'Do not write "_output": latent tools are answered separately. ' + IDENTICAL_CALLS
)
LATENT_INSTRUCTIONS = (
    "Produce the result of one tool call. The tool is in the tool message and its "
    'arguments are the input. Answer {"calls": [], "output": <the result>}, where the '
    "result fits the schema of output."
)


STEP_NOTICE = (
    "Notice: calls whose _status is planned have not run (advance='step' runs only the "
    "calls that are ready). Write them again to run the ones ready next, or leave them "
    "out to drop them; your output is taken once no call is planned."
)


def turn_notice(turn: int, max_turns: int, planned: bool) -> TextMessage | None:
    """The notice of a turn's request: :data:`STEP_NOTICE` while a step left calls
    planned, then the last turn's (docs/loop.md); ``None`` when neither applies."""
    texts = [STEP_NOTICE] if planned else []
    if turn == max_turns:
        texts.append(last_turn_notice(turn, max_turns).text)
    return TextMessage(text=" ".join(texts)) if texts else None


def last_turn_notice(turn: int, max_turns: int) -> TextMessage:
    """The notice the last turn's request carries (docs/loop.md)."""
    return TextMessage(
        text=f"Notice: this is turn {turn} of {max_turns}, the last one. Give the final "
        "output now; no further turn will run."
    )


def diagnostic_errors(diagnostics: tuple[Diagnostic, ...]) -> list[ErrorMessage]:
    """Error messages for a plan's error diagnostics: ``call`` is the diagnostic's
    label (``#3 issueRefund``), ``error`` ``{"type": <code>, "message": <rendered,
    with caret>, "path"?}``."""
    found: list[ErrorMessage] = []
    for diagnostic in diagnostics:
        if diagnostic.severity != "error":
            continue
        error: dict[str, Any] = {"type": diagnostic.code, "message": str(diagnostic)}
        if diagnostic.path:
            error["path"] = diagnostic.path
        found.append(ErrorMessage(call=diagnostic.label, error=error))
    return found


def _instructions(
    mode: str, instructions: str | None, primer: str | None, quarantine: Quarantine | None
) -> list[Message]:
    """The static start of every request: the mode's instructions, the quarantine
    notice (a quarantined loop), the caller's instructions, the primer."""
    default = EAGER_INSTRUCTIONS if mode == "eager" else LAZY_INSTRUCTIONS
    notice = QUARANTINE_INSTRUCTIONS if quarantine is not None else None
    texts = (default, notice, instructions, primer)
    return [TextMessage(text=text) for text in texts if text]


def turn_context(
    *,
    mode: Literal["eager", "lazy"],
    instructions: str | None,
    registry: Registry,
    input: Any,
    inputs: Mapping[str, Any],
    state: State,
    carried: list[dict[str, Any]],
    errors: list[ErrorMessage],
    notice: TextMessage | None,
    state_schema: dict[str, Any] | None = None,
    statuses: list[str] | None = None,
    primer: str | None = None,
    quarantine: Quarantine | None = None,
) -> list[Message]:
    """The context messages of one turn's request, in a fixed order: instructions,
    the caller's instructions, the primer (docs/loop.md, "The primer"), tools,
    input(s), state(s), data documents, the carried plan, errors, notice: what stays
    the same from turn to turn first, so a server's prefix cache reuses it.
    ``statuses``: each carried call's ``_status`` (docs/language.md), put in its copy
    in the plan message.  ``quarantine``: the request shows a handle for each untrusted
    value, and error messages redacted (docs/loop.md, "Quarantine")."""
    context: list[Message] = _instructions(mode, instructions, primer, quarantine)
    show = _as_is if quarantine is None else quarantine.document
    if quarantine is not None:
        errors = [quarantine.error(error) for error in errors]
    context.append(ToolMessage(tools=[tool_description(tool) for tool in registry]))
    context.extend(_documents(input, inputs, state, state_schema, show))
    if carried:
        if statuses is not None:
            carried = [
                {**call, "_status": status} for call, status in zip(carried, statuses, strict=True)
            ]
        context.append(PlanMessage(plan=carried, mode=mode))
    context.extend(errors)
    if notice is not None:
        context.append(notice)
    return context


def _documents(
    input: Any,
    inputs: Mapping[str, Any],
    state: State,
    state_schema: dict[str, Any] | None,
    show: Callable[[str, Any], Any],
) -> Iterator[Message]:
    """The input, state and data messages of a request, each document as ``show``
    shows it (quarantined: with handles)."""
    if input is not None:
        yield InputMessage(input=show("input", input))
    for name, value in inputs.items():
        yield InputMessage(input=show("input", value), instance=name)
    shared = show("state", state.document("state") or {})
    yield StateMessage(state=shared, schema=state_schema)
    for name in sorted(set(inputs) | set(state.instances)):
        yield StateMessage(state=show("state", state.document("state", name) or {}), instance=name)
    for kind in state.kinds:
        if kind != "state":
            yield DataMessage(kind=kind, data=show(kind, state.document(kind)))


def _as_is(kind: str, value: Any) -> Any:
    """A document as an unquarantined request shows it."""
    del kind
    return value


def resolve_output(output: Any, state: State) -> tuple[Any, str | None]:
    """Evaluate expressions inside ``output`` (``"†state.summary"``); ``(value, problem)``."""
    if isinstance(output, str) and output.startswith("†"):
        node = parse_expression(output)
        if isinstance(node, Escaped):
            return str(node), None
        value, missing = evaluate(node, state, None)
        if missing is not None:
            return None, f"output reads {missing[0]}, which does not exist"
        return value, None
    if isinstance(output, list):
        items = [resolve_output(item, state) for item in output]
        problem = next((p for _, p in items if p), None)
        return [v for v, _ in items], problem
    if isinstance(output, dict):
        pairs = {k: resolve_output(v, state) for k, v in output.items()}
        problem = next((p for _, p in pairs.values() if p), None)
        return {k: v for k, (v, _) in pairs.items()}, problem
    return output, None


def record_error(record: CallRecord) -> ErrorMessage | None:
    """The error record of a call that ran in a turn (``Session.absorb``), or
    ``None`` when it has none (it succeeded, or took the alternative not taken)."""
    if record.status == "succeeded":
        if record.error is not None:  # handled by the error arm: still worth saying
            return ErrorMessage(call=record.label, error=record.error)
        return None
    if record.status == "skipped" and record.untaken:
        return None
    if record.status == "invalid_output" and record.error is not None:
        error = {
            "type": record.error["type"],
            "message": "the tool ran (its effects may have happened), but its "
            f"result did not fit and was not written: {record.error['message']}",
        }
        return ErrorMessage(call=record.label, error=error)
    if record.error is not None:
        return ErrorMessage(call=record.label, error=record.error)
    error = {"type": record.status, "message": record.reason or record.status}
    return ErrorMessage(call=record.label, error=error)
