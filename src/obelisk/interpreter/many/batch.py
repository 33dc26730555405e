"""``obelisk.run_many``: one plan over many inputs, or many plans, each run on its own
(docs/scale.md, "Many runs").

The runs are independent: a run that fails, or raises (a plan with errors, a journal
that refuses it), gives a :class:`BatchResult` with its status and never stops the
others.  An *executor* runs the jobs: :class:`LocalExecutor` (asyncio, in this process,
the default) or ``obelisk.RayExecutor`` (a Ray cluster,
:mod:`obelisk.interpreter.many.ray_executor`).  With ``journal=`` every run is durable
under the id ``"<batch>-<index>"``: a batch run again takes each finished run's result
from the journal, resumes each run that was cut off, and runs only the rest.
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import json
import os
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from typing import Any, Protocol

from obelisk.errors import UsageError
from obelisk.grammar.parser import parse_reference
from obelisk.interpreter.fixed_plan import run
from obelisk.interpreter.runtime.durable.data import FINISHED, load
from obelisk.interpreter.runtime.durable.journal import Journal
from obelisk.interpreter.runtime.durable.runs import opened, resume_journaled
from obelisk.interpreter.runtime.records import RunResult
from obelisk.interpreter.runtime.run import run_blocking
from obelisk.interpreter.runtime.settings import DEFAULT_CONCURRENCY
from obelisk.interpreter.runtime.state import State
from obelisk.interpreter.tools.registry import Registry, ToolsLike
from obelisk.limits import Limits

__all__ = [
    "DEFAULT_RUNS",
    "BatchResult",
    "Executor",
    "Job",
    "LocalExecutor",
    "RunSpec",
    "run_job",
    "run_many",
    "run_many_sync",
]

DEFAULT_RUNS = 8
"""How many runs :func:`run_many` keeps going at once by default (count)."""

_WAITING = frozenset({"awaiting_approval", "unknown"})  # a person decides: left as it is


@dataclass(frozen=True)
class BatchResult:
    """One run of :func:`run_many`.

    ``index`` is its position among the inputs (or plans); ``status`` the run's status
    (``completed``, ``failed``, ``partial``, ``awaiting_approval``, ``unknown``) or
    ``"error"`` when it raised before or instead of running (then ``error`` says why,
    as ``"PlanError: ..."``); ``state`` its final state (``None`` for an error);
    ``calls`` the count of its calls by status; ``errors`` its failed calls,
    ``[{"call", "tool", "error"}]``; ``run_id`` its id in the journal (``None``
    without one); ``resumed`` is ``"journal"`` when its result was read from the
    journal (it had finished before), ``"resumed"`` when it was cut off and resumed,
    else ``None``; ``seconds`` how long it took here (wall time)."""

    index: int
    status: str
    state: dict[str, Any] | None = None
    calls: dict[str, int] = field(default_factory=dict)
    errors: tuple[dict[str, Any], ...] = ()
    error: str | None = None
    run_id: str | None = None
    resumed: str | None = None
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        """True when the run completed."""
        return self.status == "completed"

    def to_dict(self) -> dict[str, Any]:
        """``{"index", "status", "state", "calls", "errors", "error", "run_id",
        "resumed"}`` (JSON data; ``seconds`` is left out, so that two batches compare)."""
        return {
            "index": self.index,
            "status": self.status,
            "state": self.state,
            "calls": dict(self.calls),
            "errors": list(self.errors),
            "error": self.error,
            "run_id": self.run_id,
            "resumed": self.resumed,
        }


def _from_result(index: int, result: RunResult, resumed: str | None) -> BatchResult:
    counts: dict[str, int] = {}
    errors = []
    for record in result.calls:
        counts[record.status] = counts.get(record.status, 0) + 1
        if record.error is not None and record.status in ("failed", "invalid_output"):
            message = _message(record.error)
            errors.append({"call": record.index, "tool": record.tool, "error": message})
    run_id = result.run_id if result.journal is not None else None
    return BatchResult(
        index, result.status, result.state, counts, tuple(errors), None, run_id, resumed
    )


def _message(error: Any) -> str:
    """``"Type: message"`` of a call's error (``{"type", "message"}``, as records keep it)."""
    if isinstance(error, Mapping):
        return f"{error.get('type')}: {error.get('message')}"
    return f"{type(error).__name__}: {error}"


def _from_error(index: int, exc: BaseException, run_id: str | None) -> BatchResult:
    return BatchResult(index, "error", error=f"{type(exc).__name__}: {exc}", run_id=run_id)


@dataclass(frozen=True)
class RunSpec:
    """What every run of a batch shares: the tools (a :class:`Registry`), the plan
    (``None``: each job brings its own), the state to start from, other data, and the
    keywords of :func:`obelisk.run` (``concurrency`` is then the calls in flight of one
    run), and the journal (a path, made absolute, or a URL; ``None``: in memory)."""

    tools: Registry
    plan: Any = None
    state: Mapping[str, Any] | None = None
    data: Mapping[str, Any] | None = None
    options: Mapping[str, Any] = field(default_factory=dict)
    journal: Any = None


@dataclass(frozen=True)
class Job:
    """One run of a batch: its ``index``, its ``plan`` (``None``: the spec's), its
    ``input``, its journal ``run_id`` (``None``: not durable) and ``known``, the status
    the journal had for that run when the batch started (``None``: a new run;
    ``"ready"``: one to resume, as ``Journal.ready`` lists them)."""

    index: int
    plan: Any
    input: Any
    run_id: str | None = None
    known: str | None = None


async def run_job(spec: RunSpec, job: Job) -> BatchResult:
    """Run ``job`` of a batch described by ``spec``; never raises an
    :class:`Exception` (a failure is the result's ``error``)."""
    started = time.perf_counter()
    try:
        result = await _run_or_resume(spec, job)
    except Exception as exc:
        result = _from_error(job.index, exc, job.run_id)
    return dataclasses.replace(result, seconds=time.perf_counter() - started)


async def _run_or_resume(spec: RunSpec, job: Job) -> BatchResult:
    plan = spec.plan if job.plan is None else job.plan
    if job.known is None:
        ran = await run(
            plan, spec.tools, job.input, spec.state, data=spec.data,
            journal=spec.journal, run_id=job.run_id, **spec.options,
        )  # fmt: skip
        return _from_result(job.index, ran, None)
    assert job.run_id is not None
    if job.known in FINISHED or job.known in _WAITING:  # nothing to run again
        with opened(spec.journal) as book:
            return journaled_result(book, job.index, job.run_id)
    context = spec.options.get("context")
    ran = await resume_journaled(job.run_id, None, journal=spec.journal, tools=spec.tools,
                                 context=context)  # fmt: skip
    return _from_result(job.index, ran, "resumed")


def journaled_result(book: Journal, index: int, run_id: str) -> BatchResult:
    """The :class:`BatchResult` of run ``run_id`` as the journal ``book`` holds it,
    without running anything: its status, the state its write log gives, its calls."""
    described = book.describe(run_id)
    row = book.run_row(run_id)
    state = State(row.state, row.input, row.data)
    for call, instance, path, method, value, _at in book.log(run_id):
        state.write(parse_reference(path), load(value, "write"), method, call=call,
                    instance=instance)  # fmt: skip
    errors = tuple(
        {"call": c["index"], "tool": c["tool"], "error": _message(c["error"])}
        for c in described["calls"]
        if c["status"] in ("failed", "invalid_output") and c["error"] is not None
    )
    return BatchResult(
        index, str(row.status), state.document("state"), dict(described["counts"]), errors,
        None, run_id, "journal",
    )  # fmt: skip


class Executor(Protocol):
    """Runs the jobs of a batch; calls ``on_result`` with each result as it comes (in
    the order they finish) and returns them all (in any order)."""

    async def map(
        self,
        spec: RunSpec,
        jobs: Sequence[Job],
        concurrency: int,
        on_result: Callable[[BatchResult], None],
    ) -> list[BatchResult]: ...


class LocalExecutor:
    """Runs a batch's jobs in this process, on its event loop: at most ``concurrency``
    runs at once (the default executor of :func:`run_many`)."""

    async def map(
        self,
        spec: RunSpec,
        jobs: Sequence[Job],
        concurrency: int,
        on_result: Callable[[BatchResult], None],
    ) -> list[BatchResult]:
        """See :class:`Executor`."""
        queue = iter(jobs)
        results: list[BatchResult] = []

        async def worker() -> None:
            for job in queue:
                result = await run_job(spec, job)
                results.append(result)
                on_result(result)

        await asyncio.gather(*(worker() for _ in range(min(concurrency, len(jobs)) or 1)))
        return results

    def __repr__(self) -> str:
        return "LocalExecutor()"


def batch_id(plan: Any, items: Sequence[Any]) -> str:
    """A batch's id: 12 hex digits of the SHA-256 of its plan and items as JSON, so
    that the same batch run again finds its runs in the journal."""
    data = plan.to_data() if hasattr(plan, "to_data") else plan  # a parsed Plan
    text = json.dumps([data, list(items)], sort_keys=True, default=repr)
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def _jobs(items: Sequence[Any], plan: Any, journal: Any, batch: str | None) -> list[Job]:
    """The jobs of a batch; with a journal, each with its run id and the status its run
    has there already (read once, for the whole batch)."""
    one_plan = plan is not None
    if journal is None:
        return [
            Job(i, None if one_plan else item, item if one_plan else None)
            for i, item in enumerate(items)
        ]
    prefix = batch if batch is not None else batch_id(plan, items)
    with opened(journal) as book:
        known = {row["run_id"]: row["status"] for row in book.runs()}
        for run_id in book.ready():  # crashed, or its approvals were all decided
            known[run_id] = "ready"
    jobs = []
    for i, item in enumerate(items):
        run_id = f"{prefix}-{i}"
        jobs.append(
            Job(
                i, None if one_plan else item, item if one_plan else None, run_id, known.get(run_id)
            )
        )
    return jobs


def _absolute(journal: Any) -> Any:
    """A journal path made absolute (a worker elsewhere may have another directory)."""
    if isinstance(journal, (str, os.PathLike)) and "://" not in os.fspath(journal):
        return os.path.abspath(os.fspath(journal))
    return journal


async def run_many(
    plans_or_inputs: Iterable[Any],
    tools: ToolsLike,
    *,
    plan: Any = None,
    concurrency: int = DEFAULT_RUNS,
    executor: Executor | None = None,
    journal: Any = None,
    batch: str | None = None,
    input: Any = None,
    state: Mapping[str, Any] | None = None,
    data: Mapping[str, Any] | None = None,
    call_concurrency: int = DEFAULT_CONCURRENCY,
    fail_fast: bool = False,
    timeout: float | None = None,
    limits: Limits | None = None,
    context: Any = None,
    on_result: Callable[[BatchResult], None] | None = None,
    tracer_provider: Any = None,
) -> list[BatchResult]:
    """Run many plans, or one plan over many inputs; returns one :class:`BatchResult`
    per item, in the items' order.

    With ``plan=`` (a plan in any form :func:`obelisk.run` takes), each item of
    ``plans_or_inputs`` is an input document; without it each item is a plan, run with
    ``input=``.  ``concurrency`` (count, >= 1) caps the runs going at once;
    ``call_concurrency`` the calls in flight of each run, and ``fail_fast``,
    ``timeout`` (seconds, per run), ``limits``, ``context``, ``state`` and ``data`` are
    :func:`obelisk.run`'s, for every run.  ``executor`` runs them: ``None`` runs them in
    this process (:class:`LocalExecutor`), ``obelisk.RayExecutor(...)`` on a Ray
    cluster.  ``on_result`` is called with each result as it finishes (in the order they
    finish, in this process).  ``journal`` (a path, a ``postgresql://`` URL) makes every
    run durable as ``"<batch>-<index>"`` (``batch`` defaults to a hash of the plan and
    the items): run the same batch again and the finished runs are read from the
    journal, the cut-off ones resumed, and only the others run (docs/scale.md).
    ``tracer_provider`` (an OpenTelemetry ``TracerProvider``, ``otel`` extra; default
    ``None``: traced only when :func:`obelisk.instrument` is on) traces each run, a
    resumed one too, as :func:`obelisk.run` does: the runs of this process, not those
    an executor runs in other processes, such as a ``RayExecutor``'s workers
    (docs/observability.md).

    A run that fails, or raises, never stops the others: its result says so (status
    ``"error"`` and ``error`` when it raised).  Raises
    :class:`~obelisk.errors.UsageError` for a bad ``concurrency`` and
    :class:`~obelisk.errors.JournalError` when the journal cannot be opened.
    """
    if isinstance(concurrency, bool) or not isinstance(concurrency, int) or concurrency < 1:
        raise UsageError(f"concurrency must be a count >= 1, got {concurrency!r}")
    items = list(plans_or_inputs)
    journal = _absolute(journal)
    options: dict[str, Any] = {
        "concurrency": call_concurrency,
        "fail_fast": fail_fast,
        "timeout": timeout,
        "limits": limits,
        "context": context,
    }
    spec = RunSpec(Registry.coerce(tools), plan, state, data, options, journal)
    jobs = _jobs(items, plan, journal, batch)
    if plan is None and input is not None:
        jobs = [dataclasses.replace(job, input=input) for job in jobs]
    chosen: Executor = LocalExecutor() if executor is None else executor
    with _tracing(tracer_provider):
        results = await chosen.map(spec, jobs, concurrency, on_result or (lambda _: None))
    return sorted(results, key=lambda r: r.index)


def _tracing(tracer_provider: Any) -> AbstractContextManager[None]:
    """The block's runs traced with ``tracer_provider``, or nothing when it is ``None``
    (tracing is imported here, when a batch is first traced)."""
    if tracer_provider is None:
        return nullcontext()
    from obelisk.interpreter.tracing import traced

    return traced(tracer_provider)


def run_many_sync(
    plans_or_inputs: Iterable[Any], tools: ToolsLike, **options: Any
) -> list[BatchResult]:
    """:func:`run_many` for code without an event loop (the same keywords)."""
    return run_blocking(run_many(plans_or_inputs, tools, **options))
