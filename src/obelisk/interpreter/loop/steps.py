"""The model steps of a fixed plan (docs/loop.md, "A fixed plan with model steps").

``obelisk.run(plan, tools, model=...)`` runs a plan the caller wrote, without a
planning turn: its latent calls and delegates are answered by the model as lazy
mode answers them, one sub-request per latent call
(:class:`~obelisk.interpreter.loop.subrequests.SubRequests`) and a child loop per
delegate.  The runtime cannot import the loop, so it takes what this module builds
as a :data:`~obelisk.interpreter.runtime.engine.LatentFactory`.
"""

from __future__ import annotations

from typing import Any

from obelisk.interpreter.loop.loop import Loop
from obelisk.interpreter.loop.model import Model
from obelisk.interpreter.loop.subrequests import SubRequests
from obelisk.interpreter.runtime.engine import LatentFactory
from obelisk.interpreter.runtime.settings import RunSettings
from obelisk.interpreter.runtime.state import State
from obelisk.interpreter.tools.registry import Registry

__all__ = ["model_steps"]


def model_steps(model: Model, registry: Registry, settings: RunSettings) -> LatentFactory:
    """The latent runner factory of ``obelisk.run(..., model=model)``.

    Sub-requests and delegates' child loops are those of a lazy
    :class:`~obelisk.Loop` over ``model`` and ``registry`` with its defaults
    (``max_corrections=3`` more answers for an unusable one, ``max_depth=3``,
    ``max_requests=1000`` requests in all, ``max_turns=8`` per child loop) and the
    run's concurrency, fail-fast, output validation and context.  Every runner it
    makes shares that loop, so the request budget counts a run and its resumes.
    Raises :class:`~obelisk.errors.UsageError` for a model without ``complete``.
    """
    loop = Loop(
        model,
        registry,
        mode="lazy",
        concurrency=settings.concurrency,
        fail_fast=settings.fail_fast,
        output_validation=settings.output_validation,
        context=settings.context,
    )
    notes: list[dict[str, Any]] = []  # a run has no turn to show them in

    def runner(state: State) -> SubRequests:
        return SubRequests(loop, state, notes)

    return runner
