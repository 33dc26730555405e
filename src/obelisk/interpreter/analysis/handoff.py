"""The hand-off between stages: a plan is checked once (docs/semantics.md, "Check once,
then run").

Every entry point that runs or plays a plan (``obelisk.run`` and ``run_sync``, a
durable run and its resume, ``obelisk.simulate``, ``obelisk run`` and ``obelisk
simulate``) takes either a plan, which :func:`checked_plan` checks, or the
:class:`~obelisk.interpreter.analysis.result.CheckResult` that :func:`obelisk.check`
returned, which it uses as it is: its plan and graph go on to the next stage, and
nothing checks the plan again.

A :class:`CheckResult` is a statement about a plan *and* what it was checked against
(its :class:`~obelisk.interpreter.analysis.result.CheckBasis`): tools, input, state,
data, limits, mode.  Handed to a run given other tools or documents, it would vouch
for a plan nobody checked against them, and an approval given for it would cover
something else.  So such a result is refused with a
:class:`~obelisk.errors.UsageError` that names every difference, rather than checked
again behind the caller's back (which would also check twice, what the hand-off
exists to avoid): pass the plan itself, or check it with what the run is given.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any, Literal

from obelisk.errors import UsageError
from obelisk.interpreter.analysis.check import check
from obelisk.interpreter.analysis.result import CheckResult
from obelisk.interpreter.plan.model import Plan
from obelisk.interpreter.tools.policies import PolicyMode
from obelisk.interpreter.tools.registry import Registry
from obelisk.interpreter.tools.tool import Tool
from obelisk.limits import Limits

__all__ = ["PlanOrChecked", "basis_differences", "checked_plan"]

PlanOrChecked = CheckResult | Plan | str | bytes | list[Any] | dict[str, Any]
"""What the entry points take as a plan: a :class:`CheckResult` of
:func:`obelisk.check`, or a plan in any form :func:`obelisk.parse_plan` takes."""

_CHECKED_PARTS = (
    ("parameters", "parameters"),
    ("output_schema", "output schema"),
    ("outcomes", "outcomes"),
    ("effects", "effects"),
    ("latent", "latent"),
)
"""What a check reads of a tool (attribute, and its name in a message)."""


def checked_plan(
    plan: PlanOrChecked,
    registry: Registry,
    input: Any = None,
    state: Any = None,
    *,
    data: Mapping[str, Any] | None = None,
    limits: Limits | None = None,
    mode: Literal["eager", "lazy"] | None = None,
    policy: PolicyMode | None = None,
    input_labels: Mapping[str, Any] | None = None,
) -> CheckResult:
    """``plan`` checked against ``registry`` and the documents, once: a plan is checked
    here; a :class:`CheckResult` is taken as it is when it was checked against the same
    (:func:`basis_differences`).  The result has a ``plan`` and a ``graph``.

    ``limits=None`` checks with the default :class:`~obelisk.Limits` and, for a
    :class:`CheckResult`, takes the limits it was checked with; ``mode=None`` is the
    plan's own mode.  Raises :class:`~obelisk.errors.PlanError` (every diagnostic) when
    the plan has errors, as a check of it would, and :class:`~obelisk.errors.UsageError`
    naming what differs when a :class:`CheckResult` was checked against other tools or
    documents (docs/semantics.md, "Check once, then run").  ``policy`` and
    ``input_labels`` are :func:`check`'s (``None``: labels are left to the run).
    """
    if not isinstance(plan, CheckResult):
        checked = check(
            plan, registry, input, state, data=data, limits=limits, mode=mode,
            policy=policy, input_labels=input_labels,
        )  # fmt: skip
        checked.raise_for_errors()
        return checked
    plan.raise_for_errors()  # a plan with errors never runs, whatever it is given
    found = basis_differences(plan, registry, input, state, data=data, limits=limits, mode=mode)
    if found:
        raise UsageError(
            "this CheckResult was checked against other tools or documents than these: "
            + "; ".join(found)
            + "; pass the plan itself (it is checked then), or check it with these"
        )
    return plan


def basis_differences(
    checked: CheckResult,
    registry: Registry,
    input: Any = None,
    state: Any = None,
    *,
    data: Mapping[str, Any] | None = None,
    limits: Limits | None = None,
    mode: Literal["eager", "lazy"] | None = None,
) -> list[str]:
    """What differs between what ``checked`` was checked against and the tools and
    documents given, one phrase each (``[]``: nothing).  Tools are compared by what a
    check reads of them (parameters, output schema, outcomes, effects, latent), for the
    tools the plan calls; documents with ``==`` (``state=None`` and ``data=None`` are
    ``{}``); ``limits=None`` compares no limits; a mode of ``None`` is the plan's own
    (eager when it names none)."""
    basis = checked.basis
    if basis is None or checked.plan is None:
        return ["it does not say what it was checked against (it was not made by obelisk.check)"]
    found = _tool_differences(checked.plan, basis.registry, registry)
    found += _document_difference("input", basis.input, input)
    found += _document_difference("state", basis.state, {} if state is None else state)
    found += _document_difference("data", basis.data, data or {})
    if limits is not None and basis.limits != limits:
        pairs = [
            (part.name, getattr(basis.limits, part.name), getattr(limits, part.name))
            for part in dataclasses.fields(limits)
        ]
        changed = [f"{name} {was!r}, given {now!r}" for name, was, now in pairs if was != now]
        found.append(f"it was checked with other limits ({', '.join(changed)})")
    was = basis.mode or checked.plan.mode or "eager"
    now = mode or checked.plan.mode or "eager"
    if was != now:
        found.append(f"it was checked for the {was} mode, and this is the {now} mode")
    return found


def _tool_differences(plan: Plan, was: Registry | None, now: Registry) -> list[str]:
    """How the tools the plan calls differ between the registry it was checked against
    and ``now``, one phrase per tool."""
    if was is None:
        return ["it was checked without tools (obelisk.check(plan) with tools=None)"]
    if was is now:
        return []
    found = []
    for name in sorted({call.tool for call in plan.calls}):
        before, after = was.get(name), now.get(name)
        if before is after:
            continue
        if after is None:
            found.append(f"tool {name!r} is missing")
        elif before is None:
            found.append(f"tool {name!r} was not among the tools it was checked against")
        else:
            changed = _changed_parts(before, after)
            if changed:
                found.append(f"tool {name!r} has other {' and '.join(changed)}")
    return found


def _changed_parts(before: Tool, after: Tool) -> list[str]:
    return [
        label
        for attribute, label in _CHECKED_PARTS
        if getattr(before, attribute) != getattr(after, attribute)
    ]


def _document_difference(name: str, was: Any, now: Any) -> list[str]:
    """``[]`` when the documents are equal, else one phrase saying how they differ."""
    if was is now or was == now:
        return []
    if was is None:
        return [f"it was checked without an {name}, and one is given now"]
    if now is None:
        return [f"it was checked against an {name}, and none is given now"]
    return [f"the {name} is not the one it was checked against"]
