"""The product of analysis: :class:`CheckResult` (docs/diagnostics.md)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from obelisk.diagnostics import Diagnostic
from obelisk.errors import PlanError
from obelisk.interpreter.analysis.graph import PlanGraph
from obelisk.interpreter.plan.model import Plan

__all__ = ["CheckResult"]


@dataclass(frozen=True)
class CheckResult:
    """The outcome of :func:`check`.

    ``plan`` is None only when the plan text could not be parsed;
    ``graph`` is the dependency graph (None in that case too).
    """

    plan: Plan | None
    graph: PlanGraph | None
    diagnostics: tuple[Diagnostic, ...]

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
        """``{"ok": bool, "diagnostics": [...]}``, the shape of ``obelisk check --json``."""
        return {"ok": self.ok, "diagnostics": [d.to_dict() for d in self.diagnostics]}
