"""The result of checking a plan, and helpers shared by the checks (DESIGN §2.2)."""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from obelisk.errors import Diagnostic, PlanError
from obelisk.grammar import Reference, find
from obelisk.interpreter.graph import PlanGraph
from obelisk.interpreter.plan_model import Plan

__all__ = ["CheckResult", "gc_paused", "path_exists"]


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


def path_exists(document: Any, reference: Reference) -> bool:
    """True when ``reference``'s path exists in ``document`` (existence, not truthiness).

    ``[*]`` exists when it meets a list or an object; the rest of the path after it
    is not followed.
    """
    return find(document, reference)[0]


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while a plan is analysed.

    Analysis allocates many small objects and no reference cycles; letting the
    collector walk the growing heap costs about a third of the time on large
    plans (benchmarks/check_throughput.py).  Reference counting still frees
    everything; the collector resumes, in its previous state, on exit.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
