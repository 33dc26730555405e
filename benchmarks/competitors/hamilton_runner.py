"""The benchmark DAGs as Hamilton dataflows, run with the async driver.

Each DAG node becomes a function ``v<i>`` whose parameters name its dependencies
(``async def v7(v2: int, v5: int) -> int``), generated as source into a fresh
module; the driver is built from that module and asked for the leaves.
Hamilton's ``AsyncDriver`` (``hamilton.async_driver``) turns every node into an
asyncio task that awaits its dependencies' tasks, so async nodes overlap; sync
nodes are called on the event loop and run one after another.  ``blocking`` can
instead use the sync driver with Hamilton's ``FutureAdapter``
(``hamilton.plugins.h_threadpool``), which runs each node in a thread pool.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import sys
import time
import types
from collections.abc import Callable, Iterator
from importlib.metadata import version
from typing import Any, Literal

from . import (
    CompetitorUnavailable,
    Timing,
    check_deps,
    expected_values,
    leaves,
    node_value,
)

try:
    from hamilton import async_driver, driver  # type: ignore[import-untyped]
    from hamilton.plugins.h_threadpool import FutureAdapter  # type: ignore[import-untyped]
except ImportError as error:  # pragma: no cover - depends on the bench extra
    raise CompetitorUnavailable(
        "sf-hamilton is not installed: pip install -e '.[bench]'"
    ) from error

__all__ = ["blocking", "describe", "makespan", "overhead"]

Executor = Literal["async", "threads"]

_modules = itertools.count()


class _Record:
    """What the generated functions report: runs per node, first start, last end."""

    def __init__(self, n: int) -> None:
        self.runs = [0] * n
        self.started: list[float] = []
        self.ended: list[float] = []

    def span(self) -> float:
        return max(self.ended) - min(self.started)


def _module(deps: list[list[int]], body: Callable[[int], list[str]], asynchronous: bool) -> Any:
    """A module with one function per node; ``body(node)`` gives its statements.

    Each function can use ``_args`` (its dependencies' values, in order), ``_rec``
    (the :class:`_Record`), ``_value``, ``_asyncio``, ``_time`` and ``_now``.
    """
    check_deps(deps)
    lines = []
    keyword = "async def" if asynchronous else "def"
    for node, node_deps in enumerate(deps):
        params = ", ".join(f"v{d}: int" for d in node_deps)
        lines.append(f"{keyword} v{node}({params}) -> int:")
        lines.append(f"    _args = [{', '.join(f'v{d}' for d in node_deps)}]")
        lines.extend(f"    {statement}" for statement in body(node))
    name = f"_obelisk_bench_hamilton_{next(_modules)}"
    module = types.ModuleType(name)
    module.__dict__.update(
        _rec=_Record(len(deps)),
        _value=node_value,
        _asyncio=asyncio,
        _time=time,
        _now=time.perf_counter,
    )
    exec(compile("\n".join(lines), f"<{name}>", "exec"), module.__dict__)
    return module


@contextlib.contextmanager
def _deep(deps: list[list[int]]) -> Iterator[None]:
    """Room for Hamilton's recursive walk of the DAG (about one frame per node on the
    longest path, so a 1,000-call chain reached Python's default limit of 1,000,
    depending on the hash seed's order of the walk); the limit is put back after."""
    found = sys.getrecursionlimit()
    sys.setrecursionlimit(max(found, 4 * len(deps) + 1_000))
    try:
        yield
    finally:
        sys.setrecursionlimit(found)


async def _run_async(
    deps: list[list[int]], module: Any
) -> tuple[float, float, float, dict[str, Any]]:
    """Build the async driver (timed as build) and compute the leaves (timed as run):
    ``(build, wall, cpu, results)``."""
    final_vars = [f"v{node}" for node in leaves(deps)]
    sys.modules[module.__name__] = module  # Hamilton finds a module's functions through it
    try:
        start = time.perf_counter()
        dr = await async_driver.Builder().with_modules(module).build()
        build = time.perf_counter() - start
    finally:
        del sys.modules[module.__name__]
    with _deep(deps):
        start, cpu = time.perf_counter(), time.process_time()
        results: dict[str, Any] = await dr.execute(final_vars)
        cpu = time.process_time() - cpu
    return build, time.perf_counter() - start, cpu, results


def _run_threads(deps: list[list[int]], module: Any) -> tuple[float, float, float, dict[str, Any]]:
    """Build the sync driver with a FutureAdapter and compute the leaves:
    ``(build, wall, cpu, results)``."""
    final_vars = [f"v{node}" for node in leaves(deps)]
    sys.modules[module.__name__] = module
    try:
        start = time.perf_counter()
        adapter = FutureAdapter()
        dr = driver.Builder().with_modules(module).with_adapters(adapter).build()
        build = time.perf_counter() - start
    finally:
        del sys.modules[module.__name__]
    try:
        with _deep(deps):
            start, cpu = time.perf_counter(), time.process_time()
            results: dict[str, Any] = dr.execute(final_vars)
            cpu = time.process_time() - cpu
        return build, time.perf_counter() - start, cpu, results
    finally:
        adapter.executor.shutdown(wait=True)


def _check(deps: list[list[int]], module: Any, results: dict[str, Any]) -> None:
    """Every node ran once, and the leaves hold what a direct computation gives."""
    runs = module._rec.runs
    assert all(count == 1 for count in runs), (
        f"nodes not run exactly once: {[(i, c) for i, c in enumerate(runs) if c != 1][:10]}"
    )
    expected = expected_values(deps)
    assert results == {f"v{node}": expected[node] for node in leaves(deps)}, (
        "Hamilton computed different values"
    )


def overhead(deps: list[list[int]]) -> Timing:
    """Zero-work async nodes: each sums its dependencies' values."""

    def body(node: int) -> list[str]:
        return [f"_rec.runs[{node}] += 1", f"return _value({node}, _args)"]

    module = _module(deps, body, asynchronous=True)
    build, seconds, cpu, results = asyncio.run(_run_async(deps, module))
    _check(deps, module, results)
    return Timing(build, seconds, cpu_s=cpu)


def makespan(deps: list[list[int]], ms: list[int]) -> Timing:
    """Async nodes that ``asyncio.sleep(ms[node] / 1000)`` after their dependencies."""

    def body(node: int) -> list[str]:
        return [
            f"_rec.runs[{node}] += 1",
            "_rec.started.append(_now())",
            f"await _asyncio.sleep({ms[node] / 1000!r})",
            "_rec.ended.append(_now())",
            f"return _value({node}, _args)",
        ]

    module = _module(deps, body, asynchronous=True)
    build, seconds, cpu, results = asyncio.run(_run_async(deps, module))
    _check(deps, module, results)
    return Timing(build, seconds, module._rec.span(), cpu)


def blocking(n: int, ms: int, executor: Executor = "async") -> Timing:
    """``n`` independent sync nodes that ``time.sleep(ms / 1000)``.

    ``executor="async"``: the async driver (the mode of :func:`overhead` and
    :func:`makespan`), which calls sync nodes on the event loop, one at a time.
    ``executor="threads"``: the sync driver with ``FutureAdapter`` (a thread pool of
    its default size, min(32, cores + 4)).
    """
    deps: list[list[int]] = [[] for _ in range(n)]

    def body(node: int) -> list[str]:
        return [
            f"_rec.runs[{node}] += 1",
            "_rec.started.append(_now())",
            f"_time.sleep({ms / 1000!r})",
            "_rec.ended.append(_now())",
            f"return _value({node}, _args)",
        ]

    module = _module(deps, body, asynchronous=False)
    if executor == "async":
        build, seconds, cpu, results = asyncio.run(_run_async(deps, module))
    elif executor == "threads":
        build, seconds, cpu, results = _run_threads(deps, module)
    else:
        raise ValueError(f"executor must be 'async' or 'threads', not {executor!r}")
    _check(deps, module, results)
    return Timing(build, seconds, module._rec.span(), cpu)


def describe() -> dict[str, Any]:
    """Library, version, execution mode and caveats."""
    return {
        "library": "sf-hamilton",
        "version": version("sf-hamilton"),
        "mode": (
            "Hamilton AsyncDriver (hamilton.async_driver.Builder, DictResult), one "
            "generated function per DAG node, final_vars = the leaves; blocking() can "
            "also use the sync driver with FutureAdapter (executor='threads')"
        ),
        "caveats": [
            "AsyncDriver: async nodes run as asyncio tasks that await their "
            "dependencies, so sleeping nodes overlap; sync nodes are called on the "
            "event loop and do not overlap (blocking n x ms takes n x ms).",
            "FutureAdapter (blocking, executor='threads'): sync driver, each node "
            "submitted to a ThreadPoolExecutor of min(32, cores + 4) threads.",
            "build_s includes crawling the generated module and building the graph; "
            "generating the module's source is not timed.",
            "run_s is the driver's execute call alone (event loop already running); "
            "cpu_s is the process's CPU time over the same call.",
            f"sf-hamilton {version('sf-hamilton')} is a shim that installs "
            "apache-hamilton (the 'hamilton' package).",
        ],
    }
