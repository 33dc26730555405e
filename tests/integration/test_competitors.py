"""The benchmark adapters for LangGraph and Hamilton (``benchmarks/competitors``).

Small DAGs only.  Each test skips where the ``bench`` extra is not installed.
The adapters themselves assert that every node ran exactly once and that the
results equal a direct computation; these tests also check the timings and
``describe()``.
"""

from __future__ import annotations

import random
import sys
from pathlib import Path
from types import ModuleType

import pytest

_ROOT = Path(__file__).resolve().parents[2]  # benchmarks/ is a top-level package
if str(_ROOT) not in sys.path:
    sys.path.insert(0, str(_ROOT))

from benchmarks.competitors import Timing, critical_path, expected_values, leaves  # noqa: E402

LAYERED: list[list[int]] = [[] for _ in range(5)] + [
    sorted({(i // 5 - 1) * 5 + (i * 3) % 5, (i // 5 - 1) * 5 + (i * 7 + 1) % 5})
    for i in range(5, 40)
]
"""8 layers of 5 nodes, each reading one or two nodes of the layer before."""


def _random_dag(n: int = 20, seed: int = 11) -> tuple[list[list[int]], list[int]]:
    rng = random.Random(seed)
    deps = [sorted(rng.sample(range(i), k=min(i, rng.randint(0, 2)))) for i in range(n)]
    return deps, [rng.randint(1, 10) for _ in range(n)]


def _runner(library: str) -> ModuleType:
    if library == "langgraph":
        pytest.importorskip("langgraph.graph")
        from benchmarks.competitors import langgraph_runner

        return langgraph_runner
    pytest.importorskip("hamilton")
    from benchmarks.competitors import hamilton_runner

    return hamilton_runner


def _positive(timing: Timing) -> None:
    assert timing.build_s > 0
    assert timing.run_s > 0
    assert timing.cpu_s is not None and timing.cpu_s >= 0


def test_shared_helpers() -> None:
    assert expected_values([[], [], [0, 1], [2]]) == [1, 2, 6, 10]
    assert leaves([[], [], [0], [0, 2]]) == [1, 3]
    assert critical_path([[], [0], []], [10, 5, 12]) == pytest.approx(0.015)


@pytest.mark.parametrize("library", ["langgraph", "hamilton"])
def test_overhead(library: str) -> None:
    runner = _runner(library)
    _positive(runner.overhead(LAYERED))
    _positive(runner.overhead([[]]))


@pytest.mark.parametrize("library", ["langgraph", "hamilton"])
def test_makespan(library: str) -> None:
    runner = _runner(library)
    deps, ms = _random_dag()
    timing = runner.makespan(deps, ms)
    _positive(timing)
    assert timing.span_s is not None
    # No node starts before its dependencies end: the span covers the critical path.
    assert timing.span_s >= critical_path(deps, ms) * 0.95
    assert timing.run_s >= timing.span_s


@pytest.mark.parametrize("library", ["langgraph", "hamilton"])
def test_blocking(library: str) -> None:
    runner = _runner(library)
    timing = runner.blocking(3, 5)
    _positive(timing)
    assert timing.run_s >= 0.005


def test_hamilton_blocking_threads() -> None:
    runner = _runner("hamilton")
    _positive(runner.blocking(3, 5, executor="threads"))
    with pytest.raises(ValueError, match="executor"):
        runner.blocking(1, 1, executor="processes")


@pytest.mark.parametrize("library", ["langgraph", "hamilton"])
def test_describe(library: str) -> None:
    info = _runner(library).describe()
    assert {"library", "version", "mode", "caveats"} <= info.keys()
    assert info["version"][0].isdigit()


@pytest.mark.parametrize("library", ["langgraph", "hamilton"])
def test_wrong_results_are_caught(library: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The adapters' own check fails when a node computes something else."""
    runner = _runner(library)
    monkeypatch.setattr(runner, "node_value", lambda node, values: 0)
    with pytest.raises(AssertionError):
        runner.overhead(LAYERED)


def test_bad_dag_is_rejected() -> None:
    runner = _runner("langgraph")
    with pytest.raises(ValueError, match="node 1"):
        runner.overhead([[], [1]])


def test_langgraph_reducer_merges_in_place() -> None:
    """The fair reducer: a write costs what it writes, not a copy of the state."""
    runner = _runner("langgraph")
    values = {0: 1}
    merged = runner.merge(values, {1: 2})
    assert merged is values and merged == {0: 1, 1: 2}


def test_langgraph_payload_passes_real_results() -> None:
    runner = _runner("langgraph")
    from benchmarks import payload

    found = payload.kind("0.5 KB")
    runs = runner.payload(LAYERED, found.produce, found.reads, 3)
    assert len(runs) == 3
    for timing, values in runs:
        _positive(timing)
        assert len(values) == len(LAYERED) and all(v in found.pool for v in values)
    assert len({timing.build_s for timing, _ in runs}) == 1  # compiled once
    # Two graphs compiled once each and run in turn, one run of each per round.
    whole = payload.kind("int")
    runners = [
        runner.payload_runner(LAYERED, kind_.produce, kind_.reads) for kind_ in (found, whole)
    ]
    for _ in range(2):
        for run_once, kind_ in zip(runners, (found, whole), strict=True):
            timing, values = run_once()
            _positive(timing)
            assert len(values) == len(LAYERED) and all(v in kind_.pool for v in values)
    # A read of a field the results lack fails the run.
    with pytest.raises(KeyError):
        runner.payload(LAYERED, found.produce, (lambda v: v["missing"],) * 2, 1)


def test_payload_benchmark_runs_langgraph() -> None:
    _runner("langgraph")
    from benchmarks import payload
    from benchmarks.run_overhead import layered

    times = payload.measure(layered(100), payload.kind("int"), 1, ("langgraph",))
    assert times["langgraph"] is not None and times["langgraph"]["wall"] > 0
