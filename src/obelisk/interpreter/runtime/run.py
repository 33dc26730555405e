"""``obelisk.run``: check a plan (or take the ``CheckResult`` of its check), then run it
(docs/semantics.md)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine, Iterable, Mapping
from typing import Any, TypeVar

from obelisk.errors import UsageError
from obelisk.interpreter.analysis.check import check
from obelisk.interpreter.analysis.graph import PlanGraph
from obelisk.interpreter.analysis.handoff import PlanOrChecked, checked_plan
from obelisk.interpreter.analysis.result import CheckResult
from obelisk.interpreter.plan.collector import gc_paused
from obelisk.interpreter.runtime.approvals import Decision
from obelisk.interpreter.runtime.collector import run_collector
from obelisk.interpreter.runtime.durable.pinning import live_pins
from obelisk.interpreter.runtime.durable.runs import new_run_id, run_journaled
from obelisk.interpreter.runtime.engine import Engine, LatentFactory
from obelisk.interpreter.runtime.events import Event, Listener
from obelisk.interpreter.runtime.flows import check_input_labels
from obelisk.interpreter.runtime.hooks import Hooks
from obelisk.interpreter.runtime.records import CallOutcome, RunResult
from obelisk.interpreter.runtime.resume import RunOrigin
from obelisk.interpreter.runtime.resumption import Resumption
from obelisk.interpreter.runtime.settings import DEFAULT_CONCURRENCY, RunSettings
from obelisk.interpreter.runtime.shelter import run_sheltered
from obelisk.interpreter.runtime.state import State
from obelisk.interpreter.tools.options import OutputValidation
from obelisk.interpreter.tools.policies import PolicyMode
from obelisk.interpreter.tools.registry import Registry, ToolsLike
from obelisk.limits import DEFAULT_LIMITS, Limits

__all__ = ["DEFAULT_CONCURRENCY", "listeners_of", "run", "run_blocking"]

T = TypeVar("T")

EventHandlers = Callable[[Event], None] | Iterable[Callable[[Event], None]] | None


def listeners_of(on_event: EventHandlers) -> tuple[Listener, ...]:
    """``on_event`` as a tuple of listeners; raises :class:`~obelisk.errors.UsageError`
    for one that is not callable."""
    if on_event is None:
        return ()
    if callable(on_event):
        return (on_event,)
    handlers = tuple(on_event)
    if not all(callable(handler) for handler in handlers):
        raise UsageError("on_event must be a callable or an iterable of callables")
    return handlers


async def run(
    plan: PlanOrChecked,
    tools: ToolsLike,
    input: Any = None,
    state: Mapping[str, Any] | None = None,
    *,
    data: Mapping[str, Any] | None = None,
    concurrency: int = DEFAULT_CONCURRENCY,
    fail_fast: bool = False,
    on_event: EventHandlers = None,
    context: Any = None,
    timeout: float | None = None,
    limits: Limits | None = None,
    journal: Any = None,
    run_id: str | None = None,
    output_validation: OutputValidation = "strict",
    replaces: str | None = None,
    latent: LatentFactory | None = None,
    policy: PolicyMode = "off",
    input_labels: Mapping[str, Any] | None = None,
) -> RunResult:
    """Check ``plan`` against ``tools``, then run it; returns a :class:`RunResult`.

    This is ``obelisk.run`` below the execution loop: every argument, the result and
    the errors are those of :func:`obelisk.run` (its docstring, docs/semantics.md),
    whose ``model=`` arrives here as ``latent``, a
    :data:`~obelisk.interpreter.runtime.engine.LatentFactory` the loop built: given a
    run's :class:`State`, the runner that answers its latent calls and delegates
    (``None``: they are left ``pending_latent``, delegates included).  A run with
    ``latent`` cannot be journaled (:class:`~obelisk.errors.UsageError`): a durable
    run is resumed without its model (docs/loop.md, "A fixed plan with model steps").

    >>> import asyncio, obelisk
    >>> @obelisk.tool
    ... def double(n: int) -> int:
    ...     "Twice n."
    ...     return 2 * n
    >>> plan = [{"_tool": "double", "n": "†input.n", "_outputPath": "†state.twice"}]
    >>> asyncio.run(run(plan, [double], input={"n": 21})).state
    {'twice': 42}
    """
    limits = DEFAULT_LIMITS if limits is None else limits
    labels = check_input_labels(input_labels)
    settings = RunSettings(
        concurrency, fail_fast, timeout, limits, output_validation, context, policy, labels
    )
    listeners = listeners_of(on_event)
    registry = Registry.coerce(tools)
    for name, named in (("run_id", run_id), ("replaces", replaces)):
        if named is not None and journal is None:
            raise UsageError(f"{name}= names a durable run: it needs journal= too")
    if latent is not None and journal is not None:
        raise UsageError(
            "model= cannot go with journal=: a durable run is resumed without the model, "
            "so its model steps could not go on; journal a Loop(model, tools, journal=...) "
            "instead (docs/durable.md)"
        )
    with run_collector():  # the collector walks the run's objects less often
        checked = checked_plan(plan, registry, input, state, data=data, limits=settings.limits)
        if journal is not None:
            return await run_journaled(
                checked, registry, input=input, state=state, data=data, journal=journal,
                run_id=run_id, settings=settings, listeners=listeners, replaces=replaces,
            )  # fmt: skip
        documents = (state, input, data)
        return await _run_in_memory(checked, registry, documents, settings, listeners, latent)


async def _run_in_memory(
    checked: CheckResult,
    registry: Registry,
    documents: tuple[Any, Any, Any],
    settings: RunSettings,
    listeners: tuple[Listener, ...],
    latent: LatentFactory | None = None,
) -> RunResult:
    """Run a checked plan without a journal on ``documents`` (``(state, input, data)``,
    as :class:`State` takes them), its latent calls answered by ``latent(state)`` when
    given; its result can be resumed (:func:`resume`, with the same ``latent``)."""
    assert checked.plan is not None and checked.graph is not None
    parsed, graphs = checked.plan, _Graphs(checked)
    name = new_run_id()  # in the idempotency keys tools get

    def make(
        tools: Registry,
        approvals: Mapping[str, Decision],
        replay: Mapping[int, CallOutcome],
    ) -> Engine:
        resumption = Resumption(name, approvals, replay)
        with gc_paused():  # set-up allocates only obelisk's own, cycle-free objects
            state = State(*documents)
            runner = None if latent is None else latent(state)
            return Engine(
                parsed, graphs.graph(), tools, state, settings, resumption,
                Hooks(listeners), latent=runner, owns_state=True,
            )  # fmt: skip

    result = await make(registry, {}, {}).run()
    if not result.pending:  # resumed rarely: the graph is built again if it is
        graphs.forget()
    pinned = live_pins(parsed, registry) if result.pending else None
    origin = RunOrigin(make, registry, checked.diagnostics, plan=parsed, pinned=pinned)
    return _completed(result, checked.diagnostics, origin)


def _completed(result: RunResult, diagnostics: Any, origin: RunOrigin) -> RunResult:
    """``result`` with the check's ``diagnostics`` and its ``origin``: what
    ``dataclasses.replace`` would give, set in place (a copy cost about 12 µs, a tenth
    of a one-call run's set-up); the engine's result is new, and nobody holds it yet."""
    object.__setattr__(result, "diagnostics", diagnostics)
    object.__setattr__(result, "origin", origin)
    return result


class _Graphs:
    """The dependency graph of a run kept in memory, for :class:`RunOrigin`'s ``make``.

    A paused result keeps it, since it is resumed; a result that did not pause keeps
    only what the check was given (its :class:`~obelisk.interpreter.analysis.result.CheckBasis`):
    its graph, about a third of what a check builds per call (benchmarks/memory.py),
    is built again by checking the same plan against the same basis if the result is
    ever resumed (``retry="failed"``, docs/durable.md)."""

    __slots__ = ("_basis", "_graph", "_plan")

    def __init__(self, checked: CheckResult) -> None:
        assert checked.plan is not None
        self._plan, self._basis = checked.plan, checked.basis
        self._graph = checked.graph

    def forget(self) -> None:
        """Drop the graph (kept when there is no basis to check the plan against)."""
        if self._basis is not None:
            self._graph = None

    def graph(self) -> PlanGraph:
        """The graph: the one kept, or the same plan checked again (not kept: the
        resumed run's result does not keep it either)."""
        if self._graph is not None:
            return self._graph
        basis = self._basis
        assert basis is not None
        again = check(
            self._plan, basis.registry, basis.input, basis.state,
            data=basis.data, limits=basis.limits, mode=basis.mode,
        )  # fmt: skip
        assert again.graph is not None
        return again.graph


def run_blocking(coroutine: Coroutine[Any, Any, T]) -> T:
    """Run ``coroutine`` on a new event loop, as ``asyncio.run`` does but sheltered from
    tools that stop the loop, cancel the run's task or ignore their cancellation
    (:func:`~obelisk.interpreter.runtime.shelter.run_sheltered`, docs/limits.md); the
    ``*_sync`` entry points use it.

    Raises :class:`~obelisk.errors.UsageError` (and closes the coroutine) when an
    event loop is already running in this thread: ``await`` the async form there.
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return run_sheltered(coroutine)
    coroutine.close()
    raise UsageError("run_sync() cannot be called from a running event loop; await run()")
