"""``Loop(tracer_provider=...)``: a loop's runs traced with its own OpenTelemetry tracer
provider (docs/observability.md), as ``obelisk.run(..., tracer_provider=...)`` traces one run.

:func:`traced_by` is entered around what a loop runs (its turns, a paused turn's resume);
tracing is imported only when a loop has a provider, so a loop without one costs a
``None`` check.  Blocks nested under one entered for the same provider add nothing.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

__all__ = ["traced_by"]

_entered: ContextVar[Any] = ContextVar("obelisk_loop_tracer_provider", default=None)


@contextmanager
def traced_by(tracer_provider: Any) -> Iterator[None]:
    """The runs started in the block, and those nested in them, traced with
    ``tracer_provider`` (``None``: as without the block: :func:`obelisk.instrument`'s
    tracing, if on).  Raises :class:`~obelisk.errors.MissingDependencyError` without
    the ``otel`` extra."""
    if tracer_provider is None or _entered.get() is tracer_provider:
        yield
        return
    from obelisk.interpreter.tracing import traced

    token = _entered.set(tracer_provider)
    try:
        with traced(tracer_provider):
            yield
    finally:
        _entered.reset(token)
