"""The benchmark DAGs as LangGraph ``StateGraph`` s, run with ``ainvoke``.

One graph node per DAG node; the state is ``{"v": {node: value}}``, merged by a
reducer (``{**old, **new}``).  An edge runs from each dependency to the node; a node
with several dependencies gets one join edge (``add_edge([a, b], node)``, which
waits for all of them); START leads to the roots and the leaves lead to END.
LangGraph runs the graph in supersteps (Pregel/BSP): a node starts in the step
after its last dependency's step, once every node of that step has finished.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from importlib.metadata import version
from typing import Annotated, Any, Protocol, TypedDict

from . import (
    CompetitorUnavailable,
    Timing,
    check_deps,
    expected_values,
    leaves,
    node_value,
)

try:
    from langgraph.graph import END, START, StateGraph
except ImportError as error:  # pragma: no cover - depends on the bench extra
    raise CompetitorUnavailable("langgraph is not installed: pip install -e '.[bench]'") from error

__all__ = ["blocking", "describe", "makespan", "overhead"]


def merge(old: dict[int, int], new: dict[int, int]) -> dict[int, int]:
    """The state reducer: a node's writes are merged into the values so far."""
    return {**old, **new}


class State(TypedDict):
    v: Annotated[dict[int, int], merge]


Update = dict[str, dict[int, int]]


class Node(Protocol):
    """A node function: sync, or async returning an awaitable of an ``Update``."""

    def __call__(self, state: State) -> Any: ...


def _name(node: int) -> str:
    return f"n{node}"


def _build(deps: list[list[int]], make_node: Callable[[int, list[int]], Node]) -> Any:
    """Build and compile the graph; ``make_node(node, deps)`` makes each node's function."""
    check_deps(deps)
    graph = StateGraph(State)
    for node, node_deps in enumerate(deps):
        graph.add_node(_name(node), make_node(node, node_deps))
    for node, node_deps in enumerate(deps):
        if not node_deps:
            graph.add_edge(START, _name(node))
        elif len(node_deps) == 1:
            graph.add_edge(_name(node_deps[0]), _name(node))
        else:
            graph.add_edge([_name(d) for d in node_deps], _name(node))
    for node in leaves(deps):
        graph.add_edge(_name(node), END)
    return graph.compile()


async def _run(graph: Any, supersteps: int) -> tuple[float, dict[int, int]]:
    config = {"recursion_limit": supersteps + 10}
    start = time.perf_counter()
    final = await graph.ainvoke({"v": {}}, config=config)
    seconds = time.perf_counter() - start
    values: dict[int, int] = final["v"]
    return seconds, values


def _check(deps: list[list[int]], runs: list[int], values: dict[int, int]) -> None:
    """Every node ran once and wrote the value a direct computation gives."""
    assert all(count == 1 for count in runs), (
        f"nodes not run exactly once: {[(i, c) for i, c in enumerate(runs) if c != 1][:10]}"
    )
    expected = expected_values(deps)
    assert values == dict(enumerate(expected)), "LangGraph computed different values"


def _timed(
    deps: list[list[int]], make_node: Callable[[int, list[int]], Node], runs: list[int]
) -> tuple[float, float]:
    async def main() -> tuple[float, float]:
        start = time.perf_counter()
        graph = _build(deps, make_node)
        build = time.perf_counter() - start
        # Supersteps are at most the number of nodes (a chain).
        seconds, values = await _run(graph, len(deps))
        _check(deps, runs, values)
        return build, seconds

    return asyncio.run(main())


def overhead(deps: list[list[int]]) -> Timing:
    """Zero-work async nodes: each sums its dependencies' values."""
    runs = [0] * len(deps)

    def make_node(node: int, node_deps: list[int]) -> Node:
        async def work(state: State) -> Update:
            runs[node] += 1
            values = state["v"]
            return {"v": {node: node_value(node, [values[d] for d in node_deps])}}

        return work

    build, seconds = _timed(deps, make_node, runs)
    return Timing(build, seconds)


def makespan(deps: list[list[int]], ms: list[int]) -> Timing:
    """Async nodes that ``asyncio.sleep(ms[node] / 1000)`` after their dependencies."""
    runs = [0] * len(deps)
    started: list[float] = []
    ended: list[float] = []

    def make_node(node: int, node_deps: list[int]) -> Node:
        async def work(state: State) -> Update:
            runs[node] += 1
            started.append(time.perf_counter())
            values = state["v"]
            result = node_value(node, [values[d] for d in node_deps])
            await asyncio.sleep(ms[node] / 1000)
            ended.append(time.perf_counter())
            return {"v": {node: result}}

        return work

    build, seconds = _timed(deps, make_node, runs)
    return Timing(build, seconds, max(ended) - min(started))


def blocking(n: int, ms: int) -> Timing:
    """``n`` independent sync nodes that ``time.sleep(ms / 1000)``."""
    deps: list[list[int]] = [[] for _ in range(n)]
    runs = [0] * n
    started: list[float] = []
    ended: list[float] = []

    def make_node(node: int, node_deps: list[int]) -> Node:
        def work(state: State) -> Update:
            runs[node] += 1
            started.append(time.perf_counter())
            time.sleep(ms / 1000)
            ended.append(time.perf_counter())
            return {"v": {node: node_value(node, [])}}

        return work

    build, seconds = _timed(deps, make_node, runs)
    return Timing(build, seconds, max(ended) - min(started))


def describe() -> dict[str, Any]:
    """Library, version, execution mode and caveats."""
    return {
        "library": "langgraph",
        "version": version("langgraph"),
        "mode": (
            "StateGraph, one node per DAG node, async ainvoke, join edges "
            "(add_edge([deps], node)) for several dependencies, dict state merged "
            "by a {**a, **b} reducer, no checkpointer"
        ),
        "caveats": [
            "Pregel supersteps: a node starts only when the whole superstep holding its "
            "last dependency has finished, so sleeping nodes of uneven length wait "
            "for the slowest node of each step (makespan above the critical path).",
            "The {**a, **b} reducer copies the merged dict for every write: the state "
            "costs O(n) per node, O(n^2) per run.",
            "Sync nodes (blocking) run in the event loop's default thread pool "
            "(min(32, cores + 4) threads).",
            "run_s is the ainvoke call alone (graph compiled, event loop running).",
        ],
    }
