"""Every exception obelisk raises, and the diagnostics it reports: the bottom layer.

Every exception derives from :class:`ObeliskError` and carries a stable ``code``
string.  Problems found in a plan are :class:`Diagnostic` records (structured
data in the style of pydantic-core: ``code``, ``severity``, ``loc``, ``message``);
all of them are collected and raised together as one :class:`PlanError`
(docs/diagnostics.md).  ``str()`` renders them for people, with a caret under
the bad characters.  Where a builtin exception fits, it is mixed in, so that
``except ValueError`` (or ``TimeoutError``) keeps working.

The hierarchy (``code`` in brackets)::

    ObeliskError [obelisk_error]
    ├── UsageError [usage]                         (also ValueError)
    ├── MissingDependencyError [missing_dependency] (also ImportError)
    ├── ToolDefinitionError [tool_definition]      (also TypeError)
    ├── ReferenceSyntaxError [reference_syntax]    (also ValueError)
    ├── PlanError [plan_error]                     (also ValueError)
    ├── ArgumentValidationError [invalid_argument] (also ValueError)
    ├── ApprovalError [approval]                   (also ValueError)
    ├── JournalError [journal]
    │   ├── JournalCorrupted [journal_corrupted]
    │   ├── RunLocked [run_locked]
    │   └── RunMismatch [run_mismatch]
    └── ExecutionError [execution_error]
        ├── OutputValidationError [invalid_output] (also ValueError)
        ├── OutcomeError [outcome]                 (also ValueError)
        ├── StateWriteError [state_write]          (also ValueError)
        ├── SolutionError [invalid_solution]       (also ValueError)
        ├── ModelError [model_error]
        │   ├── ScriptExhausted [script_exhausted]
        │   └── RequestBudgetExceeded [request_budget]
        ├── SubRequestError [subrequest_failed]
        ├── DelegateDepthExceeded [delegate_depth]
        ├── ApprovalRejected [approval_rejected]
        ├── ApprovalAborted [approval_aborted]
        ├── UnknownOutcome [unknown_outcome]
        └── LoopError [loop_error]
            ├── LoopBudgetExceeded [loop_budget]
            ├── CorrectionBudgetExceeded [correction_budget]
            └── LoopStopped [loop_stopped]

This module imports nothing from the rest of obelisk.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = [
    "ApprovalAborted",
    "ApprovalError",
    "ApprovalRejected",
    "ArgumentProblem",
    "ArgumentValidationError",
    "CorrectionBudgetExceeded",
    "DelegateDepthExceeded",
    "Diagnostic",
    "ExecutionError",
    "JournalCorrupted",
    "JournalError",
    "LoopBudgetExceeded",
    "LoopError",
    "LoopStopped",
    "MissingDependencyError",
    "ModelError",
    "ObeliskError",
    "OutcomeError",
    "OutputValidationError",
    "PlanError",
    "ReferenceSyntaxError",
    "RequestBudgetExceeded",
    "RunLocked",
    "RunMismatch",
    "ScriptExhausted",
    "Severity",
    "SolutionError",
    "StateWriteError",
    "SubRequestError",
    "ToolDefinitionError",
    "UnknownOutcome",
    "UsageError",
    "caret_lines",
    "limit_per_code",
    "printable",
    "sort_diagnostics",
]

Severity = Literal["error", "warning"]


_UNPRINTABLE = re.compile(
    "[\x00-\x1f\x7f-\x9f\ud800-\udfff\u2028\u2029"
    "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]"  # bidi controls reorder the text
)
_SHORT_ESCAPES = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}


def _escape(match: re.Match[str]) -> str:
    char = match.group(0)
    return _SHORT_ESCAPES.get(char) or f"\\u{ord(char):04x}"


def printable(text: str) -> str:
    """``text`` safe to print on any terminal and to encode as UTF-8.

    Control characters, lone surrogates (``"\\ud800"``, which UTF-8 cannot encode),
    line separators and the bidirectional controls that reorder what a terminal
    shows (``\\u202e`` and the other embeddings, overrides, isolates and marks) are
    written as JSON escapes (``\\t``, ``\\u001b``, ``\\ud800``, ``\\u202e``);
    everything else is kept as it is, ``†`` included.

    >>> printable("†state.a\\tb\\ud800")
    '†state.a\\\\tb\\\\ud800'
    """
    return _UNPRINTABLE.sub(_escape, text)


_CARET_WIDTH = 100
"""A source line longer than this many characters is shown as a window around the span."""


def caret_lines(source: str, span: tuple[int, int]) -> list[str]:
    """Render ``source`` with carets under ``span`` (character offsets, end exclusive).

    Returns two lines: the source (only the line of a multi-line source that holds
    ``span[0]``) and a line of ``^`` under the span.  An empty span, or one at the
    end of the text, gets a single caret just past the last character.  Characters
    that would not print (see :func:`printable`) are shown escaped, the carets
    moved to match; a line longer than 100 characters is cut to a window around
    the span, ``...`` marking each cut.

    >>> caret_lines("†state..x", (7, 8))
    ['†state..x', '       ^']
    """
    start, end = span
    start = min(max(start, 0), len(source))
    line_start = source.rfind("\n", 0, start) + 1
    line_end = source.find("\n", start)
    if line_end == -1:
        line_end = len(source)
    stop = min(max(end, start + 1), line_end)
    before, inside, after = (
        source[line_start:start],
        source[start:stop],
        source[stop:line_end],
    )
    head, cut_head = printable(before), False
    body = printable(inside)
    tail, cut_tail = printable(after), False
    if len(head) + len(body) + len(tail) > _CARET_WIDTH:
        room = _CARET_WIDTH // 2
        if len(body) > room:
            body, cut_tail, tail = body[:room], True, ""
        if len(head) > room // 2:
            head, cut_head = head[-(room // 2) :], True
        spare = _CARET_WIDTH - len(head) - len(body)
        if len(tail) > spare:
            tail, cut_tail = tail[: max(spare, 0)], True
    prefix = "..." if cut_head else ""
    line = prefix + head + body + tail + ("..." if cut_tail else "")
    width = max(1, len(body))
    return [line, " " * (len(prefix) + len(head)) + "^" * width]


class ObeliskError(Exception):
    """Root of every error obelisk raises.  ``code`` is stable across releases."""

    code: str = "obelisk_error"


class ToolDefinitionError(ObeliskError, TypeError):
    """A tool could not be declared: bad signature, schema, option or name clash."""

    code = "tool_definition"


class UsageError(ObeliskError, ValueError):
    """An API was called with values it cannot take (e.g. ``concurrency=0``)."""

    code = "usage"


class MissingDependencyError(ObeliskError, ImportError):
    """A feature needs an optional dependency that is not installed; the message
    names the extra to install (e.g. ``pip install 'obelisk[openai]'``)."""

    code = "missing_dependency"


class ExecutionError(ObeliskError):
    """Root of the errors raised while a plan runs (engine and loop)."""

    code = "execution_error"


class ReferenceSyntaxError(ObeliskError, ValueError):
    """An expression string that begins with ``†`` but does not parse (docs/language.md).

    Attributes:
        expression: the whole expression text.
        span: ``(start, end)`` character offsets of the bad spot, end exclusive.
        expected: human descriptions of what would have been accepted there.
        reason: one sentence: what was found and what was expected.
    """

    code = "reference_syntax"

    def __init__(
        self,
        expression: str,
        span: tuple[int, int],
        reason: str,
        expected: Sequence[str] = (),
    ) -> None:
        self.expression = expression
        self.span = span
        self.reason = reason
        self.expected = tuple(expected)
        super().__init__(self.render())

    @property
    def caret(self) -> str:
        """The expression with a caret line under the bad spot."""
        return "\n".join(caret_lines(self.expression, self.span))

    def render(self) -> str:
        return f"{self.reason}\n{self.caret}"


@dataclass(frozen=True, slots=True)
class Diagnostic:
    """One problem found in a plan (docs/diagnostics.md).

    Fields:
        code: stable identifier such as ``"unresolved_reference"``.
        severity: ``"error"`` (the plan cannot run) or ``"warning"``.
        message: what was found and what was expected, without the location.
        call: index of the call in the plan, or ``None`` for plan-level problems.
        path: argument path inside the call, e.g. ``"args.customer.id"`` or
            ``"_outputPath"``; ``None`` when the whole call is meant.
        span: ``(start, end)`` character offsets inside ``source``, end exclusive.
        source: the text the span points into (an expression, or the JSON document
            for ``json_syntax``); used only to draw the caret.
        label: how the call is named to people, e.g. ``"#3 issueRefund"``.
    """

    code: str
    severity: Severity
    message: str
    call: int | None = None
    path: str | None = None
    span: tuple[int, int] | None = None
    source: str | None = field(default=None, compare=False)
    label: str | None = field(default=None, compare=False)

    @property
    def loc(self) -> tuple[str | int, ...]:
        """pydantic-core style location: ``(call index, *argument path parts)``."""
        parts: list[str | int] = []
        if self.call is not None:
            parts.append(self.call)
        if self.path:
            parts.append(self.path)
        return tuple(parts)

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape used by ``obelisk check --json``:
        ``{"code", "severity", "call", "path", "span", "message"}`` (span is
        ``[start, end]`` or ``null``)."""
        return {
            "code": self.code,
            "severity": self.severity,
            "call": self.call,
            "path": self.path,
            "span": list(self.span) if self.span is not None else None,
            "message": self.message,
        }

    def headline(self) -> str:
        """One line: ``error[code] #3 issueRefund, args.x: message`` (unprintable
        characters escaped, see :func:`printable`)."""
        where = []
        if self.label is not None:
            where.append(self.label)
        elif self.call is not None:
            where.append(f"#{self.call}")
        if self.path:
            where.append(self.path)
        prefix = f"{self.severity}[{self.code}]"
        if where:
            prefix += " " + ", ".join(where)
        return printable(f"{prefix}: {self.message}")

    def __str__(self) -> str:
        lines = [self.headline()]
        if self.source is not None and self.span is not None:
            lines.extend("    " + text for text in caret_lines(self.source, self.span))
        return "\n".join(lines)


def sort_diagnostics(diagnostics: Iterable[Diagnostic]) -> tuple[Diagnostic, ...]:
    """The stable order of diagnostics: plan-level first, then by call index,
    argument path and code (order of discovery breaks the remaining ties)."""
    return tuple(
        sorted(
            diagnostics,
            key=lambda d: (-1 if d.call is None else d.call, _path_order(d.path), d.code),
        )
    )


def limit_per_code(diagnostics: Iterable[Diagnostic], per_code: int) -> tuple[Diagnostic, ...]:
    """At most ``per_code`` diagnostics of each code, in the stable order of
    :func:`sort_diagnostics`; the ones left out are summed up in one more
    plan-level diagnostic of their code (an error if any of them is one):
    ``... and 1900 more write_conflict diagnostics (at most 100 of one code are
    reported; raise Limits.max_diagnostics_per_code to see them all)``
    (docs/limits.md).
    """
    ordered = sort_diagnostics(diagnostics)
    counts: dict[str, int] = {}
    for diagnostic in ordered:
        counts[diagnostic.code] = counts.get(diagnostic.code, 0) + 1
    if all(count <= per_code for count in counts.values()):
        return ordered
    kept: list[Diagnostic] = []
    seen: dict[str, int] = {}
    worst: dict[str, Severity] = {}
    for diagnostic in ordered:
        code = diagnostic.code
        seen[code] = seen.get(code, 0) + 1
        if seen[code] <= per_code:
            kept.append(diagnostic)
        elif diagnostic.severity == "error" or code not in worst:
            worst[code] = diagnostic.severity
    for code, severity in worst.items():
        more = counts[code] - per_code
        kept.append(
            Diagnostic(
                code,
                severity,
                f"... and {more} more {code} diagnostic{'s' if more != 1 else ''} "
                f"(at most {per_code} of one code are reported; raise "
                "Limits.max_diagnostics_per_code to see them all)",
            )
        )
    return sort_diagnostics(kept)


def _path_order(path: str | None) -> tuple[tuple[int, int, str], ...]:
    """Argument paths in document order: ``args.x[2]`` before ``args.x[10]`` (digit runs
    compare as numbers, by length first: no ``int()``, so any length is fine)."""
    if not path:
        return ()
    return tuple(
        (1, len(part.lstrip("0")), part.lstrip("0"))
        if part.isascii() and part.isdigit()
        else (0, 0, part)
        for part in re.split(r"([0-9]+)", path)
        if part
    )


class PlanError(ObeliskError, ValueError):
    """A plan has errors; nothing of it ran.  Carries every diagnostic found.

    ``diagnostics`` holds all problems (errors and warnings) in a stable order:
    by call index, then argument path, then code.  ``str(error)`` renders them all.
    """

    code = "plan_error"

    def __init__(self, diagnostics: Iterable[Diagnostic]) -> None:
        self.diagnostics: tuple[Diagnostic, ...] = sort_diagnostics(diagnostics)
        super().__init__(self.render())

    @property
    def errors(self) -> tuple[Diagnostic, ...]:
        """Only the diagnostics of severity ``error``."""
        return tuple(d for d in self.diagnostics if d.severity == "error")

    def render(self) -> str:
        count = len(self.errors)
        head = f"plan has {count} error{'s' if count != 1 else ''}"
        return head + "\n" + "\n".join(str(d) for d in self.diagnostics)


Loc = tuple[str | int, ...]


@dataclass(frozen=True, slots=True)
class ArgumentProblem:
    """One validation problem.  ``loc`` is the path inside the validated value
    (``()`` = the value itself; strings are keys, ints list indices); ``message``
    says what was expected, e.g. ``expected an integer, got "abc"``."""

    loc: Loc
    message: str

    @property
    def path(self) -> str:
        """``loc`` as text, e.g. ``customer.lines[0]``."""
        return "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in self.loc).lstrip(".")


class ArgumentValidationError(ObeliskError, ValueError):
    """A call's arguments do not fit its tool's schema (docs/diagnostics.md).

    ``tool_name`` names the tool; ``problems`` holds every problem, each ``loc``
    starting with the argument name.  ``str()`` lists them one per line.
    """

    code = "invalid_argument"

    def __init__(self, tool_name: str, problems: Iterable[ArgumentProblem]) -> None:
        self.tool_name = tool_name
        self.problems: tuple[ArgumentProblem, ...] = tuple(problems)
        lines = [f"\n  {p.path or '<arguments>'}: {p.message}" for p in self.problems]
        super().__init__(f"invalid arguments for tool {tool_name!r}:" + "".join(lines))


class ApprovalError(ObeliskError, ValueError):
    """A decision cannot be applied: its id names no pending approval (or one whose
    arguments changed), or its edited arguments do not fit the tool's schema; or a
    resolution names no call whose outcome is unknown, or gives an output that does
    not fit.  Nothing is recorded and nothing runs (docs/approvals.md, docs/durable.md)."""

    code = "approval"


class JournalError(ObeliskError):
    """A run journal cannot be used as asked: no run of that id, a run that is over,
    a journal that cannot be opened or written, values that are not JSON data
    (docs/durable.md).  ``path`` is the journal file, when known."""

    code = "journal"

    def __init__(self, message: str, path: str | None = None) -> None:
        super().__init__(message)
        self.path = path


class JournalCorrupted(JournalError):
    """The journal file is damaged (truncated, overwritten, not a journal, or its
    records do not agree with each other); nothing was resumed (docs/durable.md)."""

    code = "journal_corrupted"


class RunLocked(JournalError):
    """Another process is running or resuming this run (the journal holds its lock);
    nothing was run (docs/durable.md)."""

    code = "run_locked"


class RunMismatch(JournalError):
    """A run is pinned to its plan and its tools' schemas: the tools given to resume
    it (or the plan) differ from those it started with.  ``changes`` lists what
    changed, one phrase each; nothing was run (docs/durable.md)."""

    code = "run_mismatch"

    def __init__(self, message: str, changes: Sequence[str], path: str | None = None) -> None:
        super().__init__(message, path)
        self.changes = tuple(changes)


# -- while a plan runs -------------------------------------------------------------


class OutputValidationError(ExecutionError, ValueError):
    """A tool's result does not fit its output schema, or is not JSON data; the
    call fails (docs/semantics.md)."""

    code = "invalid_output"


class OutcomeError(ExecutionError, ValueError):
    """A tool returned an :class:`~obelisk.Outcome` naming an alternative its
    call's ``_outputPath`` does not have; the call fails."""

    code = "outcome"


class StateWriteError(ExecutionError, ValueError):
    """A write cannot be applied, e.g. ``push`` onto a path that holds a string."""

    code = "state_write"


class SolutionError(ExecutionError, ValueError):
    """A model's answer is not a usable solution (not JSON, wrong shape).

    ``reason`` says what was wrong; ``text`` is the raw answer (may be ``None``).
    The loop turns it into an ``error`` message for the next turn.
    """

    code = "invalid_solution"

    def __init__(self, reason: str, text: str | None = None) -> None:
        super().__init__(reason)
        self.reason, self.text = reason, text


class ModelError(ExecutionError):
    """The model could not answer (transport, authentication, a script that ran out).

    ``code`` is ``model_error``; adapters may use a more precise subclass.
    """

    code = "model_error"


class RequestBudgetExceeded(ModelError):
    """A loop used up ``max_requests`` model requests (its delegates and sub-requests
    included), so it asks no more (docs/loop.md)."""

    code = "request_budget"


class ScriptExhausted(ModelError):
    """A :class:`~obelisk.ScriptedModel` was asked more often than it has answers.

    ``requests`` is how many requests it had answered (count).
    """

    code = "script_exhausted"

    def __init__(self, answered: int) -> None:
        super().__init__(
            f"the scripted model ran out of answers: it had {answered} and was asked "
            f"for answer {answered + 1}"
        )
        self.requests = answered


class SubRequestError(ExecutionError):
    """A sub-request (a latent call in lazy mode, or a delegate) gave no usable
    result; it fails the call that made it."""

    code = "subrequest_failed"


class DelegateDepthExceeded(ExecutionError):
    """A delegate call would nest deeper than ``max_depth`` sub-requests.  It fails
    that call (an error record for the model), not the loop."""

    code = "delegate_depth"


class ApprovalRejected(ExecutionError):
    """A person rejected a call awaiting approval; the call fails with the reason
    (so an error arm can take it)."""

    code = "approval_rejected"


class LoopError(ExecutionError):
    """The loop stopped without an output.  ``result`` is the
    :class:`~obelisk.LoopResult` so far: every turn (the transcript), the partial
    state and the write log; nothing the tools wrote is lost."""

    code = "loop_error"

    def __init__(self, message: str, result: Any) -> None:
        super().__init__(message)
        self.result = result


class LoopBudgetExceeded(LoopError):
    """``max_turns`` requests were answered and none gave an output."""

    code = "loop_budget"


class CorrectionBudgetExceeded(LoopError):
    """More than ``max_corrections`` answers in a row could not be used (not a
    solution, a plan with errors, an output that misfits, a rejected plan)."""

    code = "correction_budget"


class LoopStopped(LoopError):
    """The model failed (transport, authentication, a script that ran out); the
    cause is chained as ``__cause__``."""

    code = "loop_stopped"


class ApprovalAborted(ExecutionError):
    """Standard input ended, or the person gave up, while a plan awaited approval
    on the command line; the loop stops with nothing more run."""

    code = "approval_aborted"


class UnknownOutcome(ExecutionError):
    """A person resolved a call whose outcome was unknown (a durable run's call in
    flight at a crash) as failed: the call fails with this error and their message
    (docs/durable.md)."""

    code = "unknown_outcome"
