"""The benchmark DAGs as LangGraph ``StateGraph`` s, run with ``ainvoke``.

One graph node per DAG node; the state is ``{"v": {node: value}}``, one channel
whose reducer merges each node's write into the dict in place (:func:`merge`).  An
edge runs from each dependency to the node; a node with several dependencies gets
one join edge (``add_edge([a, b], node)``, which waits for all of them); START leads
to the roots and the leaves lead to END.  LangGraph runs the graph in supersteps
(Pregel/BSP): a node starts in the step after its last dependency's step, once every
node of that step has finished.

The state design, measured (layered DAG, zero-work async nodes, µs per call in CPU
time, 1k / 10k calls): a ``{**old, **new}`` reducer, which copies the whole dict
for every write (O(n) per node, O(n²) per run), 413 / 588; this in-place reducer
376 / 519; one state key per node (``v0``, ``v1``, ..., each node reading only
its dependencies' keys through ``input_schema``) 466 / 1,908, because LangGraph
walks every channel of the state at each superstep.  The in-place reducer is the
fairest of LangGraph's idiomatic designs.
"""

from __future__ import annotations

import asyncio
import gc
import time
from collections.abc import Awaitable, Callable, Sequence
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

__all__ = ["blocking", "describe", "makespan", "merge", "overhead", "payload", "payload_runner"]


def merge(old: dict[int, Any], new: dict[int, Any]) -> dict[int, Any]:
    """The state reducer: a node's write is merged into the values so far, in place
    (``operator.ior``), so a write costs what it writes, not the size of the state.

    Safe here: LangGraph applies the writes of a superstep after all its nodes have
    finished, so no running node sees the dict change, and every run starts from a
    fresh channel (the graphs run without a checkpointer, whose saved checkpoints
    would otherwise share the dict).
    """
    old.update(new)
    return old


class State(TypedDict):
    v: Annotated[dict[int, Any], merge]


Update = dict[str, dict[int, Any]]


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


async def _run(graph: Any, supersteps: int) -> tuple[float, float, dict[int, Any]]:
    """``(wall, cpu, values)`` of one ``ainvoke`` from an empty state."""
    config = {"recursion_limit": supersteps + 10}
    start, cpu = time.perf_counter(), time.process_time()
    final = await graph.ainvoke({"v": {}}, config=config)
    cpu = time.process_time() - cpu
    seconds = time.perf_counter() - start
    values: dict[int, Any] = final["v"]
    return seconds, cpu, values


def _check(deps: list[list[int]], runs: list[int], values: dict[int, int]) -> None:
    """Every node ran once and wrote the value a direct computation gives."""
    assert all(count == 1 for count in runs), (
        f"nodes not run exactly once: {[(i, c) for i, c in enumerate(runs) if c != 1][:10]}"
    )
    expected = expected_values(deps)
    assert values == dict(enumerate(expected)), "LangGraph computed different values"


def _timed(
    deps: list[list[int]], make_node: Callable[[int, list[int]], Node], runs: list[int]
) -> tuple[float, float, float]:
    """``(build, wall, cpu)`` seconds of building the graph and running it once."""

    async def main() -> tuple[float, float, float]:
        start = time.perf_counter()
        graph = _build(deps, make_node)
        build = time.perf_counter() - start
        # Supersteps are at most the number of nodes (a chain).
        seconds, cpu, values = await _run(graph, len(deps))
        _check(deps, runs, values)
        return build, seconds, cpu

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

    build, seconds, cpu = _timed(deps, make_node, runs)
    return Timing(build, seconds, cpu_s=cpu)


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

    build, seconds, cpu = _timed(deps, make_node, runs)
    return Timing(build, seconds, max(ended) - min(started), cpu)


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

    build, seconds, cpu = _timed(deps, make_node, runs)
    return Timing(build, seconds, max(ended) - min(started), cpu)


def payload_runner(
    deps: list[list[int]],
    produce: Callable[..., Awaitable[Any]],
    reads: Sequence[Callable[[Any], Any]],
) -> Callable[[], tuple[Timing, list[Any]]]:
    """Nodes that pass real results: node ``i`` reads ``reads[j](value)`` of its
    ``j``-th dependency's value and returns ``await produce(*those)``.

    The graph is compiled now, once (``build_s``); each call of the function returned
    runs it once, in an event loop of its own, and gives that run's :class:`Timing`
    and every node's value in node order, so a caller can take turns between graphs
    (one run of each per round).  A run raises ``AssertionError`` unless each node
    ran once in it.
    """
    check_deps(deps)
    runs_of = [0] * len(deps)

    def make_node(node: int, node_deps: list[int]) -> Node:
        pairs = list(zip(reads, node_deps, strict=False))

        async def work(state: State) -> Update:
            runs_of[node] += 1
            values = state["v"]
            return {"v": {node: await produce(*[read(values[d]) for read, d in pairs])}}

        return work

    start = time.perf_counter()
    graph = _build(deps, make_node)
    build = time.perf_counter() - start
    done = 0

    def run_once() -> tuple[Timing, list[Any]]:
        nonlocal done
        seconds, cpu, values = asyncio.run(_run(graph, len(deps)))
        done += 1
        assert all(count == done for count in runs_of), (
            f"nodes not run exactly once in run {done}: "
            f"{[(i, c) for i, c in enumerate(runs_of) if c != done][:10]}"
        )
        assert len(values) == len(deps), "LangGraph lost values"
        return Timing(build, seconds, cpu_s=cpu), [values[i] for i in range(len(deps))]

    return run_once


def payload(
    deps: list[list[int]],
    produce: Callable[..., Awaitable[Any]],
    reads: Sequence[Callable[[Any], Any]],
    runs: int,
) -> list[tuple[Timing, list[Any]]]:
    """:func:`payload_runner`'s graph, compiled once and run ``runs`` times in a row
    (a garbage collection before each): each run's :class:`Timing` and values."""
    run_once = payload_runner(deps, produce, reads)
    found = []
    for _ in range(runs):
        gc.collect()
        found.append(run_once())
    return found


def describe() -> dict[str, Any]:
    """Library, version, execution mode and caveats."""
    return {
        "library": "langgraph",
        "version": version("langgraph"),
        "mode": (
            "StateGraph, one node per DAG node, async ainvoke, join edges "
            "(add_edge([deps], node)) for several dependencies, dict state merged "
            "in place by its reducer (old.update(new)), no checkpointer"
        ),
        "caveats": [
            "Pregel supersteps: a node starts only when the whole superstep holding its "
            "last dependency has finished, so sleeping nodes of uneven length wait "
            "for the slowest node of each step (makespan above the critical path).",
            "The reducer merges each write into the state dict in place (O(1) per "
            "write); a {**a, **b} reducer would copy the dict for every write (O(n^2) "
            "per run), and one state key per node makes every superstep walk all keys.",
            "Sync nodes (blocking) run in the event loop's default thread pool "
            "(min(32, cores + 4) threads).",
            "run_s is the ainvoke call alone (graph compiled, event loop running); "
            "cpu_s is the process's CPU time over the same call.",
        ],
    }
