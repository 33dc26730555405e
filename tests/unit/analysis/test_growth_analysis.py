"""The checker's work and memory grow about linearly with the plan (issue 25, point 8).

No wall-clock timing here: each test measures memory (``tracemalloc``'s peak) or
counts the objects a plan's analysis holds, with bounds that the former quadratic
searches exceed many times over (docs/limits.md, "Work that cannot blow up").
"""

from __future__ import annotations

import json
import tracemalloc
from collections.abc import Callable
from typing import Any

import pytest

import obelisk
from obelisk.interpreter.analysis.conflicts import find_conflicts
from obelisk.interpreter.analysis.graph import PlanGraph, Write
from obelisk.interpreter.plan.parse import parse_plan

MiB = 2**20


def peak_of(action: Callable[[], Any]) -> tuple[Any, float]:
    """``action()``'s result and the peak memory it allocated (MiB, tracemalloc)."""
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        before = tracemalloc.get_traced_memory()[0]
        result = action()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return result, (peak - before) / MiB


def writers(size: int, target: str = "†state.x") -> list[dict[str, Any]]:
    return [{"_tool": "w", "i": i, "_outputPath": target.format(i=i)} for i in range(size)]


def test_twenty_thousand_writers_of_one_path_need_no_bit_per_pair() -> None:
    # before: one bit per writer and per writer (20,000² bits, with big-int
    # temporaries): a 190 MiB peak; now a few objects per writer: about 9 MiB
    graph = PlanGraph(parse_plan(writers(20_000)))
    found, peak = peak_of(lambda: find_conflicts(graph))
    assert len(found) == 1
    assert found[0].call == 19_999
    assert found[0].others == tuple(range(19_999))
    assert peak < 40


def test_multi_alternative_outputs_conflict_in_linear_memory() -> None:
    # every call may write †state.b or †state.c: two groups of 20,000 writers each
    graph = PlanGraph(parse_plan(writers(20_000, "†state.a{i} || †state.b || †state.c")))
    found, peak = peak_of(lambda: find_conflicts(graph))
    assert [(c.call, str(c.write.reference)) for c in found] == [
        (19_999, "†state.b"),
        (19_999, "†state.c"),
    ]
    assert all(c.others == tuple(range(19_999)) for c in found)
    assert peak < 40


def test_check_of_many_writers_reports_the_same_warning() -> None:
    @obelisk.tool
    async def w(i: int) -> int:
        """Return i."""
        return i

    result, peak = peak_of(lambda: obelisk.check(json.dumps(writers(20_000)), [w]))
    (warning,) = result.warnings
    assert warning.code == "write_conflict"
    assert warning.call == 19_999
    assert "†state.x is also set by #0 w, #1 w, #2 w, #3 w, #4 w and 19994 more calls" in (
        warning.message
    )
    assert peak < 120  # before: 220 MiB


def wildcard_plan(size: int) -> list[dict[str, Any]]:
    """``size`` writers of ``†state.items.k<i>``, then ``size`` readers of ``items[*]``."""
    return [{"_tool": "w", "i": i, "_outputPath": f"†state.items.k{i}"} for i in range(size)] + [
        {"_tool": "r", "xs": "†state.items[*]", "_outputPath": f"†state.out{i}"}
        for i in range(size)
    ]


def test_wildcard_readers_share_their_sources_and_edges() -> None:
    # 2,000 readers each after 2,000 writers: 4 million edges, held as one tuple of
    # sources, one tuple of predecessors and one tuple of successors (before: a
    # tuple, a set and a list per call, and 4 million Kahn count-downs: a 380 MiB peak)
    plan = parse_plan(wildcard_plan(2_000))
    graph, peak = peak_of(lambda: PlanGraph(plan))
    assert peak < 40
    readers = range(2_000, 4_000)
    assert all(graph.predecessors[r] == tuple(range(2_000)) for r in readers)
    assert all(graph.successors[w] == tuple(readers) for w in range(2_000))
    assert len({id(graph.sources[r][0]) for r in readers}) == 1
    assert len({id(graph.predecessors[r]) for r in readers}) == 1
    assert len({id(graph.successors[w]) for w in range(2_000)}) == 1
    assert graph.orderable() == list(range(4_000))
    assert len(graph.edges) == 4_000_000


def test_readers_of_one_wildcard_work_out_their_alternatives_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # 1,000 writers with two alternatives each, 1,000 readers of items[*]: which
    # alternatives a reader depends on is worked out once for the shared sources,
    # not once per reader (before: each reader looked at every writer, a million
    # times in all; the tags were intersected that often too)
    size = 1_000
    plan = parse_plan(
        [
            {"_tool": "w", "i": i, "_outputPath": f"†state.items.k{i} || †state.err{i}"}
            for i in range(size)
        ]
        + [
            {"_tool": "r", "xs": "†state.items[*]", "_outputPath": f"†state.out{i}"}
            for i in range(size)
        ]
    )
    graph = PlanGraph(plan)
    looked = 0

    def counted(write: Write) -> int:
        nonlocal looked
        looked += 1
        return write[0]  # the call, without going through the counted field

    monkeypatch.setattr(Write, "call", property(counted))
    assert graph.unreachable == {}
    assert all(graph.tags(r) == frozenset() for r in range(size, 2 * size))
    assert looked < 10 * size


def test_readers_of_a_negative_index_are_typed_against_their_writers_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # 1,000 writers of items[i], 1,000 readers of items[-1] (any of them may be the
    # last): the readers share their sources, so each parameter is compared with
    # them once (before: every reader with every writer, a million comparisons)
    @obelisk.tool
    async def w(i: int) -> int:
        """Return i."""
        return i

    size = 1_000
    plan = [{"_tool": "w", "i": i, "_outputPath": f"†state.items[{i}]"} for i in range(size)]
    plan += [
        {"_tool": "w", "i": "†state.items[-1]", "_outputPath": f"†state.out{i}"}
        for i in range(size)
    ]
    looked = 0

    def counted(write: Write) -> int:
        nonlocal looked
        looked += 1
        return write[0]  # the call, without going through the counted field

    monkeypatch.setattr(Write, "call", property(counted))
    result = obelisk.check(plan, [w])
    assert result.ok and not result.diagnostics
    assert looked < 20 * size


def test_a_type_mismatch_is_still_reported_on_every_reader_sharing_sources() -> None:
    @obelisk.tool
    async def w(i: int) -> int:
        """Return i."""
        return i

    @obelisk.tool
    async def text(s: str) -> str:
        """Return s."""
        return s

    # three writers of †state.x (a write_conflict too), two readers wanting a string
    plan: list[dict[str, Any]] = [
        {"_tool": "w", "i": i, "_outputPath": "†state.x"} for i in range(3)
    ]
    plan += [{"_tool": "text", "s": "†state.x", "_outputPath": f"†state.o{i}"} for i in range(2)]
    mismatches = [
        d for d in obelisk.check(plan, [w, text]).diagnostics if d.code == "type_mismatch"
    ]
    assert [(d.call, d.message) for d in mismatches] == [
        (
            reader,
            f"†state.x is an integer (written by #{writer} w), but text expects a string for 's'",
        )
        for reader in (3, 4)
        for writer in range(3)
    ]


def test_a_cycle_through_every_call_is_walked_with_two_searches_per_call(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # 200 calls each reading and writing †state.x: every call waits for every other,
    # one strongly connected component.  Each call the walk misses costs two
    # searches now (before: two from every place of the walk so far, 80,000 in all,
    # each walking up to 40,000 edges: a plan of 1,000 such calls took minutes)
    size = 200
    graph = PlanGraph(
        parse_plan([{"_tool": "w", "i": "†state.x", "_outputPath": "†state.x"}] * size)
    )
    searches = 0
    search = PlanGraph._path_within

    def counted(self: PlanGraph, start: int, goal: int, members: set[int]) -> list[int]:
        nonlocal searches
        searches += 1
        return search(self, start, goal, members)

    monkeypatch.setattr(PlanGraph, "_path_within", counted)
    (walk,) = graph._find_cycles()
    assert set(walk) == set(range(size)) and walk[0] == walk[-1] == 0
    assert searches <= 2 * size + 1


def test_a_chain_of_calls_with_alternatives_carries_no_tag_per_ancestor() -> None:
    # call k writes †state.v<k> || †state.e<k> and reads †state.v<k-1>: only one
    # alternative of each is ever read, so none makes anything exclusive.  Before,
    # every call carried a tag per ancestor (2,000 calls: 2 million tags, 170 MiB)
    size = 2_000
    plan = parse_plan(
        [
            {
                "_tool": "w",
                "i": f"†state.v{k - 1}" if k else 0,
                "_outputPath": f"†state.v{k} || †state.e{k}",
            }
            for k in range(size)
        ]
    )
    graph = PlanGraph(plan)
    unreachable, peak = peak_of(lambda: graph.unreachable)
    assert unreachable == {}
    assert not graph.exclusive(0, size - 1)
    assert peak < 20


def test_readers_of_a_wildcard_get_their_values_without_a_match_object_each(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # a path ending in [*] reads the list's items (the object's values) directly;
    # before, each reader built one jsonpath-ng match per value (4,000 readers of
    # 4,000 items: 16 million objects, 18.7 s CPU; now 1.9 s)
    from obelisk.grammar import paths

    @obelisk.tool
    async def w(i: int) -> int:
        """Return i."""
        return i

    @obelisk.tool
    async def r(xs: list[int]) -> int:
        """Sum xs."""
        return sum(xs)

    built = 0
    expression = paths.to_jsonpath

    def counted(reference: Any) -> Any:
        nonlocal built
        built += 1
        return expression(reference)

    monkeypatch.setattr(paths, "to_jsonpath", counted)
    result = obelisk.run_sync(wildcard_plan(50), [w, r])
    assert result.state["out0"] == result.state["out49"] == sum(range(50))
    assert list(result.state["items"].values()) == list(range(50))
    assert built == 0
