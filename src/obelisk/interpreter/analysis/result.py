"""The product of analysis: :class:`CheckResult` (docs/diagnostics.md), and
:class:`CheckBasis`, what it was checked against (docs/semantics.md, "Check once, then run")."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from obelisk.diagnostics import Diagnostic
from obelisk.errors import PlanError
from obelisk.interpreter.analysis.graph import PlanGraph
from obelisk.interpreter.analysis.trust import ApprovalNeed
from obelisk.interpreter.plan.model import Plan
from obelisk.interpreter.tools.registry import Registry
from obelisk.limits import Limits

__all__ = ["CheckBasis", "CheckResult"]


@dataclass(frozen=True, eq=False)
class CheckBasis:
    """What :func:`check` checked a plan against: the tools (``None``: checked without
    tools), the input (``None``: not known), the starting state and the other data
    documents (``{}`` when not given), the limits and the mode asked for (``None``: the
    plan's own).  A :class:`CheckResult` handed to ``obelisk.run``, ``obelisk.simulate``
    or a durable run is used as it is only when these are what the run is given
    (:func:`~obelisk.interpreter.analysis.handoff.checked_plan`)."""

    registry: Registry | None
    input: Any
    state: Any
    data: Mapping[str, Any]
    limits: Limits
    mode: Literal["eager", "lazy"] | None


@dataclass(frozen=True)
class CheckResult:
    """The outcome of :func:`check`.

    ``plan`` is None only when the plan text could not be parsed;
    ``graph`` is the dependency graph (None in that case too).  ``basis`` is what the
    plan was checked against (:class:`CheckBasis`); ``obelisk.run(result, tools)`` and
    ``obelisk.simulate(result, tools)`` take the result instead of the plan and do not
    check it again (docs/semantics.md, "Check once, then run").

    ``approval_load`` lists the calls that may need a person before they run, and why
    (:class:`~obelisk.interpreter.analysis.trust.ApprovalNeed`: a policy that would ask,
    a policy decided at run time, a tool that requires approval), worked out from the
    labels of the plan's data flow (docs/diagnostics.md, ``untrusted_flow``).
    """

    plan: Plan | None
    graph: PlanGraph | None
    diagnostics: tuple[Diagnostic, ...]
    basis: CheckBasis | None = field(default=None, repr=False, compare=False)
    approval_load: tuple[ApprovalNeed, ...] = field(default=(), compare=False)

    @property
    def errors(self) -> tuple[Diagnostic, ...]:
        return tuple(d for d in self.diagnostics if d.severity == "error")

    @property
    def warnings(self) -> tuple[Diagnostic, ...]:
        return tuple(d for d in self.diagnostics if d.severity == "warning")

    @property
    def ok(self) -> bool:
        """True when there is no error (warnings allowed): the plan may run."""
        return not self.errors

    def raise_for_errors(self) -> None:
        """Raise :class:`~obelisk.errors.PlanError` with every diagnostic if any is an error."""
        if not self.ok:
            raise PlanError(self.diagnostics)

    def to_dict(self) -> dict[str, Any]:
        """``{"ok": bool, "diagnostics": [...]}``, the shape of ``obelisk check --json``,
        with ``"approval_load": [...]`` (:meth:`ApprovalNeed.to_dict` of each) when some
        call may need a person."""
        found: dict[str, Any] = {
            "ok": self.ok,
            "diagnostics": [d.to_dict() for d in self.diagnostics],
        }
        if self.approval_load:
            found["approval_load"] = [need.to_dict() for need in self.approval_load]
        return found
