"""Adapters that run the overhead benchmark's DAG shapes on other engines.

Each module (:mod:`.langgraph_runner`, :mod:`.hamilton_runner`) exposes the same
functions, all taking a DAG as ``deps`` (node ``i`` depends on ``deps[i]``; nodes
are in topological order ``0..n-1``) and running it once:

* ``overhead(deps) -> Timing``: zero-work nodes (async where the library runs async
  nodes); each returns a small integer computed from its dependencies' results.
* ``makespan(deps, ms) -> Timing``: node ``i`` sleeps ``ms[i]`` milliseconds after
  its dependencies.
* ``blocking(n, ms) -> Timing``: ``n`` independent nodes each ``time.sleep(ms/1000)``.
* ``payload(deps, produce, reads, runs)`` (LangGraph only): nodes that read fields of
  their dependencies' results and return what ``produce`` gives (the payload
  benchmark, :mod:`benchmarks.payload`); the graph is compiled once and run ``runs``
  times.
* ``describe() -> dict``: library, version, execution mode, caveats.

Every run checks that each node ran exactly once and that the results equal
:func:`expected_values` (a direct Python computation), and raises
``AssertionError`` otherwise.  The libraries come with the ``bench`` extra; a
module whose library is missing raises :class:`CompetitorUnavailable` (an
``ImportError``) on import.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "MODULUS",
    "CompetitorUnavailable",
    "Timing",
    "check_deps",
    "critical_path",
    "expected_values",
    "leaves",
    "node_value",
]

MODULUS = 65_521
"""Node values are kept below this so that sums stay small integers."""


class CompetitorUnavailable(ImportError):
    """The competitor library is not installed (``pip install -e '.[bench]'``)."""


@dataclass(frozen=True)
class Timing:
    """Seconds spent building/compiling the graph and running it once.

    ``run_s`` is the wall time of the library's run call (the event loop is
    already running; its start-up is not included), and ``cpu_s`` the CPU time of
    the process (every thread) over the same call.  ``span_s``, when measured,
    is the time from the first node's start to the last node's end, as the
    obelisk makespan benchmark measures it from its call records.
    """

    build_s: float
    run_s: float
    span_s: float | None = None
    cpu_s: float | None = None


def node_value(node: int, dep_values: list[int]) -> int:
    """The value node ``node`` computes from its dependencies' values."""
    return (node + 1 + sum(dep_values)) % MODULUS


def expected_values(deps: list[list[int]]) -> list[int]:
    """Every node's value, computed directly in topological order."""
    values: list[int] = []
    for node, node_deps in enumerate(deps):
        values.append(node_value(node, [values[d] for d in node_deps]))
    return values


def leaves(deps: list[list[int]]) -> list[int]:
    """Nodes that no other node depends on."""
    used = {d for node_deps in deps for d in node_deps}
    return [node for node in range(len(deps)) if node not in used]


def critical_path(deps: list[list[int]], ms: list[int]) -> float:
    """The longest chain of sleeps, in seconds."""
    finish = [0.0] * len(deps)
    for node, node_deps in enumerate(deps):
        finish[node] = ms[node] + max((finish[d] for d in node_deps), default=0.0)
    return max(finish, default=0.0) / 1000


def check_deps(deps: list[list[int]]) -> None:
    """Raise ``ValueError`` unless each node's dependencies are distinct and before it."""
    for node, node_deps in enumerate(deps):
        if len(set(node_deps)) != len(node_deps) or any(not 0 <= d < node for d in node_deps):
            raise ValueError(
                f"node {node}: dependencies {node_deps} are not distinct nodes before it"
            )
