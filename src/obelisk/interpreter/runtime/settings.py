"""How a run runs: :class:`RunSettings`, validated once (docs/semantics.md).

``obelisk.run`` builds one from its keywords, a durable run keeps it in its journal
(docs/durable.md) and :class:`obelisk.Loop` builds one and hands it to every run of
the loop (docs/loop.md).  The engine reads it and never checks it again.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from obelisk.errors import UsageError
from obelisk.interpreter.tools.labels import Label
from obelisk.interpreter.tools.options import OutputValidation, check_output_validation
from obelisk.interpreter.tools.policies import PolicyMode
from obelisk.limits import DEFAULT_LIMITS, Limits

__all__ = ["DEFAULT_CONCURRENCY", "RunSettings"]

DEFAULT_CONCURRENCY = 64
"""Calls in flight at once unless ``concurrency=`` says otherwise."""


@dataclass(frozen=True, slots=True)
class RunSettings:
    """The settings of a run, checked when made.

    ``concurrency``: calls in flight at once (an integer >= 1; per-tool
    ``capacity`` caps further).  ``fail_fast``: the first failed call cancels the
    calls in flight and the rest are ``cancelled`` (taken as true or false, as
    given).  ``timeout``: seconds the whole run may take (a number > 0, finite;
    ``None``: no bound).  ``limits``: the :class:`obelisk.Limits` of results and the
    state (docs/limits.md).  ``output_validation``: ``"strict"``, ``"warn"`` or
    ``"off"``, for tools without their own (docs/tools.md, "Output validation").
    ``context``: the object tools with an ``obelisk.Context`` parameter receive
    (docs/tools.md).  ``policy``: ``"off"`` or ``"strict"``; ``input_labels``: the
    labels the caller puts on input paths, ``(("†input.body", Label), ...)``, checked
    by ``flows.check_input_labels`` (docs/security.md).

    Raises :class:`~obelisk.errors.UsageError`, checking in this order:
    ``concurrency``, ``timeout``, ``limits``, ``output_validation``.
    """

    concurrency: int = DEFAULT_CONCURRENCY
    fail_fast: bool = False
    timeout: float | None = None
    limits: Limits = DEFAULT_LIMITS
    output_validation: OutputValidation = "strict"
    context: Any = None
    policy: PolicyMode = "off"
    input_labels: tuple[tuple[str, Label], ...] = ()

    def __post_init__(self) -> None:
        concurrency, timeout = self.concurrency, self.timeout
        if type(concurrency) is not int or concurrency < 1:
            raise UsageError(f"concurrency must be an integer >= 1, got {concurrency!r}")
        if timeout is not None and (
            isinstance(timeout, bool)
            or not isinstance(timeout, (int, float))
            or not timeout > 0
            or math.isinf(timeout)
        ):
            raise UsageError(f"timeout must be a number of seconds > 0, got {timeout!r}")
        if not isinstance(self.limits, Limits):
            raise UsageError(f"limits must be an obelisk.Limits, got {type(self.limits).__name__}")
        try:
            check_output_validation(self.output_validation)
        except ValueError as exc:
            raise UsageError(str(exc)) from None
        if self.policy not in ("off", "strict"):
            raise UsageError(f"policy must be 'off' or 'strict', got {self.policy!r}")
