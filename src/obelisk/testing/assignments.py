"""Branch choices for a plan: which alternative each call writes (docs/testing.md).

:func:`outcome_assignments` draws an :class:`OutcomeAssignment`, for
:class:`~obelisk.testing.FakeTools` (``choices=``) and for a simulation of the run.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hypothesis import strategies as st

from obelisk.interpreter.plan.model import Plan
from obelisk.interpreter.plan.parse import parse_plan
from obelisk.testing.invalid import InvalidPlan
from obelisk.testing.plans import GeneratedPlan

__all__ = ["OutcomeAssignment", "outcome_assignments"]


class OutcomeAssignment(dict[int, int]):
    """Which alternative each branching call writes: ``{call index: alternative}``.

    A call is in it when its ``_outputPath`` has two or more alternatives and it
    carries no ``_output`` (which always goes to the first).  The value counts
    from 0 in the order of the path (``†state.ok || †state.error``: 0 writes
    ``†state.ok``, 1 writes ``†state.error``).  For a tool that declares no
    ``outcomes``, the last alternative is its error arm: the tool raised.
    ``alternatives`` maps the same calls to how many alternatives they have.
    """

    alternatives: dict[int, int]

    def __init__(self, choices: Mapping[int, int], alternatives: Mapping[int, int]) -> None:
        super().__init__(choices)
        self.alternatives = dict(alternatives)


def outcome_assignments(plan: Any) -> st.SearchStrategy[OutcomeAssignment]:
    """Branch choices for ``plan`` (a :class:`GeneratedPlan`, a ``Plan``, JSON text
    or decoded JSON), as an :class:`OutcomeAssignment` (docs/testing.md).

    Hand one to :class:`~obelisk.testing.FakeTools` (``choices=``) to make each
    call write the alternative drawn.  Shrinks toward the first alternative of
    every call.  Raises :class:`~obelisk.errors.PlanError` for a plan that does not
    parse.
    """
    if isinstance(plan, (GeneratedPlan, InvalidPlan)):
        plan = plan.plan
    parsed = plan if isinstance(plan, Plan) else parse_plan(plan)
    counts = {
        call.index: len(call.alternatives)
        for call in parsed.calls
        if len(call.alternatives) > 1 and not call.has_output
    }
    drawn = st.fixed_dictionaries({index: st.integers(0, n - 1) for index, n in counts.items()})
    return drawn.map(lambda choices: OutcomeAssignment(choices, counts))
