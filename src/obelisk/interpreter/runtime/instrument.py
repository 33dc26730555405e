"""The seam through which tracing watches runs and loops (docs/observability.md).

The runtime cannot import :mod:`obelisk.interpreter.tracing` (it sits above it and
imports OpenTelemetry), so tracing installs an :class:`Instrument` here:
process-wide with :func:`install` (``obelisk.instrument()``), or for the runs started
inside a ``with scoped(instrument):`` block (the ``tracer_provider=`` of ``obelisk.run``,
``resume``, ``run_many`` and ``Loop``; a context variable, so the runs nested in a call's
task, sub-requests and delegates included, see it too).  With none installed,
:func:`active` returns ``None`` and an engine adds no observer at all: tracing that is
off costs one lookup per run.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from contextvars import ContextVar
from typing import Any, Protocol

from obelisk.interpreter.runtime.hooks import Observer

__all__ = ["Instrument", "RunTrace", "active", "install", "scoped"]


class RunTrace(Observer):
    """What an :class:`Instrument` gives one engine: an
    :class:`~obelisk.interpreter.runtime.hooks.Observer` of its calls, and
    :meth:`running`, the span (or nothing) around the whole run."""

    def running(self) -> AbstractContextManager[None]:
        """Entered while the engine runs; its run's result goes to :meth:`finished`."""
        raise NotImplementedError

    def finished(self, result: Any) -> None:
        """The run ended with ``result`` (a ``RunResult``)."""


class Instrument(Protocol):
    """Tracing, as the runtime and the loop see it (:mod:`obelisk.interpreter.tracing` has the one
    implementation)."""

    def trace_run(self, engine: Any) -> RunTrace:
        """The trace of one engine's run (``engine.plan``, ``.graph``, ``.records``,
        ``.replay``, ``.approved``: the approval id of each call a person decided on)."""
        ...

    def agent(self, loop: Any) -> AbstractContextManager[Any]:
        """Entered while an execution loop runs (its ``invoke_agent`` span); the
        object it gives takes the loop's result through ``finished(result)``."""
        ...

    def model_request(
        self,
        model: Any,
        request: Any,
        solution: Any,
        error: BaseException | None,
        times: tuple[float, float],
    ) -> None:
        """A model request was answered (``solution``) or failed (``error``) between
        ``times`` (seconds since the epoch)."""
        ...


_installed: list[Instrument] = []  # obelisk.instrument(): at most one
_scoped: ContextVar[Instrument | None] = ContextVar("obelisk_instrument", default=None)


def active() -> Instrument | None:
    """The instrument of the current context, else the process-wide one, else ``None``."""
    instrument = _scoped.get()
    if instrument is None and _installed:
        return _installed[0]
    return instrument


def install(instrument: Instrument | None) -> None:
    """Make ``instrument`` the process-wide one (``None``: none)."""
    _installed[:] = [] if instrument is None else [instrument]


@contextmanager
def scoped(instrument: Instrument) -> Iterator[None]:
    """Runs started inside the block (and the runs nested in them) use ``instrument``."""
    token = _scoped.set(instrument)
    try:
        yield
    finally:
        _scoped.reset(token)
