"""``obelisk.RayExecutor``: a batch's runs, and remote tools' calls, on a Ray cluster
(docs/scale.md).  Ray (the ``ray`` extra) is imported when the executor is first used,
never by ``import obelisk``.

- **Per run** (``runs_on="cluster"``, the default): each job of
  :func:`~obelisk.interpreter.many.batch.run_many` is a Ray task that runs the plan on
  a worker; at most ``max_in_flight`` are submitted at once (back-pressure), and their
  results are gathered as they finish.
- **Per call**: a tool declared ``remote=True`` runs each call as a Ray task, started
  the moment its arguments settle; the engine (in the driver, or in the worker that
  runs the plan) keeps the state, the write log, the checks and the commit order.
  ``runs_on="driver"`` keeps the runs in this process and sends only those calls.

Tools reach the workers by value (cloudpickle): the modules they were defined in are
pickled by value unless they are installed packages.  Ray retries a task whose worker
died only for ``pure`` or ``idempotent`` tools; for others the call becomes
``unknown`` (:class:`~obelisk.errors.WorkerLost`).  A cancelled call (``fail_fast``,
a run's ``timeout``, a tool's ``timeout``) cancels its Ray task.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import inspect
import os
import sys
import sysconfig
from collections.abc import Callable, Iterator, Sequence
from contextvars import Token
from typing import Any, Literal

from obelisk.errors import MissingDependencyError, UsageError, WorkerLost
from obelisk.interpreter.many.batch import BatchResult, Job, RunSpec, run_job
from obelisk.interpreter.runtime.run import run_blocking
from obelisk.interpreter.tools.remote import RemoteRunner, active_runner
from obelisk.interpreter.tools.tool import Tool

__all__ = ["RayExecutor", "RayRunner"]

RETRIES = 3
"""Ray's retries (count) of a ``pure`` or ``idempotent`` tool's task whose worker died."""


def _ray() -> Any:
    """The ``ray`` module, imported now; :class:`MissingDependencyError` without it."""
    try:
        import ray
    except ImportError:
        raise MissingDependencyError(
            "obelisk.RayExecutor needs Ray: pip install 'obelisk[ray]'"
        ) from None
    return ray


def _installed(module: str) -> bool:
    """Whether ``module`` comes from an installed package or the standard library
    (workers import it themselves), rather than the user's own files."""
    if module.split(".")[0] in ("obelisk", "builtins") or module in sys.builtin_module_names:
        return True
    spec = importlib.util.find_spec(module) if module != "__main__" else None
    origin = getattr(spec, "origin", None) if spec is not None else None
    if not origin:
        return False
    places = {sysconfig.get_paths()[k] for k in ("purelib", "platlib", "stdlib")}
    return any(os.path.abspath(origin).startswith(os.path.abspath(p)) for p in places)


def ship_by_value(functions: Sequence[Callable[..., Any]]) -> None:
    """Let cloudpickle send the modules of ``functions`` by value when they are the
    user's own files (a worker on another machine has no copy of them)."""
    from ray import cloudpickle

    for function in functions:
        module = getattr(function, "__module__", None)
        if not module or module == "__main__" or _installed(module):
            continue
        loaded = sys.modules.get(module)
        if loaded is not None:
            with contextlib.suppress(ValueError):  # registered already
                cloudpickle.register_pickle_by_value(loaded)  # type: ignore[no-untyped-call]


def _call_tool(function: Callable[..., Any], arguments: dict[str, Any]) -> Any:
    """Run one call on a worker (an async function on its own event loop)."""
    if inspect.iscoroutinefunction(function):
        return asyncio.run(function(**arguments))
    return function(**arguments)


class RayRunner(RemoteRunner):
    """Runs remote tools' calls as Ray tasks (one remote function per tool, with its
    ``num_cpus``, ``num_gpus``, ``resources``); see the module docstring."""

    def __init__(self) -> None:
        self._ray = _ray()
        self._remote: dict[int, tuple[Tool, Any]] = {}

    def _task_of(self, tool: Tool, function: Callable[..., Any]) -> Any:
        known = self._remote.get(id(tool))
        if known is not None and known[0] is tool:
            return known[1]
        ship_by_value([function])
        remote = tool.remote
        assert remote is not None
        options: dict[str, Any] = {
            "max_retries": RETRIES if (tool.pure or tool.idempotent) else 0,
            "retry_exceptions": False,
            "name": f"obelisk:{tool.name}",
        }
        for key in ("num_cpus", "num_gpus"):
            if getattr(remote, key) is not None:
                options[key] = getattr(remote, key)
        if remote.resources:
            options["resources"] = dict(remote.resources)
        task = self._ray.remote(_call_tool).options(**options)
        self._remote[id(tool)] = (tool, task)
        return task

    async def call(
        self,
        tool: Tool,
        function: Callable[..., Any],
        arguments: dict[str, Any],
        timeout: float | None,
    ) -> Any:
        """See :class:`~obelisk.interpreter.tools.remote.RemoteRunner`."""
        ref = self._task_of(tool, function).remote(function, arguments)
        exceptions = self._ray.exceptions
        try:
            return await asyncio.wait_for(_awaited(ref), timeout)
        except asyncio.TimeoutError:
            self._ray.cancel(ref, force=True)
            raise TimeoutError(f"timed out after {timeout:g} s") from None
        except asyncio.CancelledError:
            self._ray.cancel(ref, force=True)
            raise
        except (exceptions.WorkerCrashedError, exceptions.NodeDiedError) as exc:
            if tool.pure or tool.idempotent:  # Ray retried it already: it failed
                raise RuntimeError(f"its Ray worker was lost {RETRIES + 1} times: {exc}") from None
            raise WorkerLost(f"the Ray worker running tool {tool.name!r} was lost") from None
        except exceptions.RayTaskError as exc:  # the tool raised: the same exception here
            cause = getattr(exc, "cause", None)
            raise (cause if isinstance(cause, Exception) else exc.as_instanceof_cause()) from None


async def _awaited(ref: Any) -> Any:
    return await ref


def _run_remote_job(spec: RunSpec, job: Job) -> BatchResult:
    """A batch job, run on a Ray worker; its remote tools' calls are Ray tasks too."""
    token = active_runner.set(RayRunner())
    try:
        return run_blocking(run_job(spec, job))
    finally:
        active_runner.reset(token)


class RayExecutor:
    """Runs a batch (:func:`obelisk.run_many`), and remote tools' calls, on Ray.

    ``address``: ``None`` starts a Ray instance in this process (or joins the one
    already started), ``"auto"`` joins the cluster of this machine (``ray start``),
    ``"ray://HOST:10001"`` a remote cluster through Ray Client.  ``max_in_flight``
    (count, default twice the cluster's CPUs) bounds the runs submitted at once;
    ``runs_on`` is ``"cluster"`` (each run a Ray task) or ``"driver"`` (the runs stay
    in this process; only ``remote=True`` tools' calls go to Ray).  ``runtime_env`` is
    Ray's (files, packages, environment variables for the workers).  ``run_cpus`` is
    the CPUs one run's task takes (default 1, and 0 when a tool is ``remote``: the run
    then mostly waits for its calls' tasks, and holding a CPU would starve them).  Used as a context
    manager (``with obelisk.RayExecutor(...):``) it sends the remote tools' calls of
    every ``obelisk.run`` inside to Ray.  Raises
    :class:`~obelisk.errors.MissingDependencyError` when Ray is not installed and
    :class:`~obelisk.errors.UsageError` for bad options (docs/scale.md).
    """

    def __init__(
        self,
        address: str | None = None,
        *,
        max_in_flight: int | None = None,
        runs_on: Literal["cluster", "driver"] = "cluster",
        runtime_env: dict[str, Any] | None = None,
        run_cpus: float | None = None,
    ) -> None:
        if max_in_flight is not None and (
            isinstance(max_in_flight, bool)
            or not isinstance(max_in_flight, int)
            or max_in_flight < 1
        ):
            raise UsageError(f"max_in_flight must be a count >= 1, got {max_in_flight!r}")
        if runs_on not in ("cluster", "driver"):
            raise UsageError(f"runs_on must be 'cluster' or 'driver', got {runs_on!r}")
        self.address, self.max_in_flight, self.runs_on = address, max_in_flight, runs_on
        self.runtime_env, self.run_cpus = runtime_env, run_cpus
        self._tokens: list[Token[RemoteRunner | None]] = []

    def __repr__(self) -> str:
        return f"RayExecutor(address={self.address!r}, runs_on={self.runs_on!r})"

    def connect(self) -> Any:
        """Start or join Ray (once per process); returns the ``ray`` module."""
        ray = _ray()
        if not ray.is_initialized():
            options: dict[str, Any] = {"ignore_reinit_error": True, "log_to_driver": False}
            if self.runtime_env is not None:
                options["runtime_env"] = self.runtime_env
            if self.address is None:
                options["include_dashboard"] = False
            ray.init(address=self.address, **options)
        return ray

    def __enter__(self) -> RayExecutor:
        self.connect()
        self._tokens.append(active_runner.set(RayRunner()))
        return self

    def __exit__(self, *exc: object) -> None:
        active_runner.reset(self._tokens.pop())

    @contextlib.contextmanager
    def _calls_to_ray(self) -> Iterator[None]:
        token = active_runner.set(RayRunner())
        try:
            yield
        finally:
            active_runner.reset(token)

    async def map(
        self,
        spec: RunSpec,
        jobs: Sequence[Job],
        concurrency: int,
        on_result: Callable[[BatchResult], None],
    ) -> list[BatchResult]:
        """Run ``jobs`` (see :class:`~obelisk.interpreter.many.batch.Executor`)."""
        ray = self.connect()
        if self.runs_on == "driver":
            from obelisk.interpreter.many.batch import LocalExecutor

            with self._calls_to_ray():
                return await LocalExecutor().map(spec, jobs, concurrency, on_result)
        ship_by_value([t.function for t in spec.tools if t.function is not None])
        limit = self.max_in_flight or max(2, 2 * int(ray.cluster_resources().get("CPU", 1)))
        shared = ray.put(spec)
        remote = any(t.remote is not None for t in spec.tools)
        cpus = self.run_cpus if self.run_cpus is not None else (0 if remote else 1)
        task = ray.remote(_run_remote_job).options(max_retries=0, name="obelisk:run", num_cpus=cpus)
        pending: dict[asyncio.Future[Any], tuple[Job, Any]] = {}
        results: list[BatchResult] = []
        queue = iter(jobs)
        try:
            while True:
                for job in queue:
                    ref = task.remote(shared, job)
                    pending[asyncio.ensure_future(_awaited(ref))] = (job, ref)
                    if len(pending) >= limit:
                        break
                if not pending:
                    return results
                done, _ = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
                for future in done:
                    result = _gathered(future, pending.pop(future)[0])
                    results.append(result)
                    on_result(result)
        finally:  # stopped (cancelled, interrupted): the runs still going are cancelled
            for future, (_, ref) in pending.items():
                future.cancel()
                ray.cancel(ref, force=True)


def _gathered(future: asyncio.Future[Any], job: Job) -> BatchResult:
    """A finished Ray task's result; a task that failed (its worker died) is an
    ``"error"`` result of its job."""
    try:
        result = future.result()
    except Exception as exc:
        return BatchResult(job.index, "error", error=f"{type(exc).__name__}: {exc}",
                           run_id=job.run_id)  # fmt: skip
    assert isinstance(result, BatchResult)
    return result
