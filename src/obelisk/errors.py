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
    ├── DependencyCycleError [dependency_cycle]    (also graphlib.CycleError)
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
        ├── PolicyViolation [policy_violation]
        ├── UnknownOutcome [unknown_outcome]
        ├── WorkerLost [worker_lost]
        └── LoopError [loop_error]
            ├── LoopBudgetExceeded [loop_budget]
            ├── CorrectionBudgetExceeded [correction_budget]
            └── LoopStopped [loop_stopped]

This module imports only :mod:`obelisk.diagnostics` from the rest of obelisk.
"""

from __future__ import annotations

import graphlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from obelisk.diagnostics import Diagnostic, caret_lines, sort_diagnostics

__all__ = [
    "ApprovalAborted",
    "ApprovalError",
    "ApprovalRejected",
    "ArgumentProblem",
    "ArgumentValidationError",
    "CorrectionBudgetExceeded",
    "DelegateDepthExceeded",
    "DependencyCycleError",
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
    "PolicyViolation",
    "ReferenceSyntaxError",
    "RequestBudgetExceeded",
    "RunLocked",
    "RunMismatch",
    "ScriptExhausted",
    "SolutionError",
    "StateWriteError",
    "SubRequestError",
    "ToolDefinitionError",
    "UnknownOutcome",
    "UsageError",
    "WorkerLost",
]


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


class DependencyCycleError(ObeliskError, graphlib.CycleError):
    """A dependency graph has a cycle, so its calls have no topological order
    (:meth:`~obelisk.PlanGraph.topological_order`, docs/semantics.md).

    ``cycles`` holds every cycle as a closed walk of call indexes ``(a, b, ..., a)``
    (the calls ``check`` names in its ``dependency_cycle`` diagnostics);
    ``labels`` names every call of the plan by index (``#3 issueRefund``), for the
    message.  As in :class:`graphlib.CycleError` (also a ``ValueError``), ``args[1]``
    is the first cycle, so ``except graphlib.CycleError`` keeps working.
    """

    code = "dependency_cycle"

    def __init__(self, cycles: Sequence[Sequence[int]], labels: Sequence[str] = ()) -> None:
        self.cycles: tuple[tuple[int, ...], ...] = tuple(tuple(walk) for walk in cycles)
        self.labels = tuple(labels)
        first = list(self.cycles[0]) if self.cycles else []
        super().__init__(self.render(), first)

    def render(self) -> str:
        """One line per cycle, each call named as in diagnostics (``#3 issueRefund``)."""

        def name(call: int) -> str:
            return self.labels[call] if 0 <= call < len(self.labels) else f"#{call}"

        walks = [" -> ".join(name(call) for call in walk) for walk in self.cycles]
        return "the plan's calls depend on each other in a cycle:\n" + "\n".join(
            f"  {walk}" for walk in walks
        )

    def __str__(self) -> str:
        return self.render()

    def __reduce__(self) -> tuple[type[DependencyCycleError], tuple[object, ...]]:
        return type(self), (self.cycles, self.labels)


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


class PolicyViolation(ExecutionError):
    """A policy refused a call before it ran: an argument that must be trusted came
    from untrusted data, or a value went to an audience its readers exclude
    (docs/security.md).  The call fails with this error (an error arm can take it);
    ``flows`` lists the flows that broke the policy, one sentence each."""

    code = "policy_violation"

    def __init__(self, message: str, flows: Sequence[str] = ()) -> None:
        super().__init__(message)
        self.flows = tuple(flows)


class WorkerLost(ExecutionError):
    """The process or machine that ran a remote call (a Ray worker) was lost while the
    call ran, and its tool is neither ``pure`` nor ``idempotent``: nobody knows whether
    it did its work, so the call is ``unknown``, as a durable run's call in flight at a
    crash is (docs/scale.md, "Failure semantics")."""

    code = "worker_lost"


class UnknownOutcome(ExecutionError):
    """A person resolved a call whose outcome was unknown (a durable run's call in
    flight at a crash) as failed: the call fails with this error and their message
    (docs/durable.md)."""

    code = "unknown_outcome"
