"""Exclusive calls and calls that can never run are those the full tag analysis finds.

``PlanGraph`` keeps as tags only the alternatives of calls two of whose alternatives
are read (obelisk/interpreter/analysis/graph.py): a call of which one alternative is
ever read makes nothing exclusive or unreachable.  The oracle is the former
analysis, which tagged every alternative of every call with several.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from obelisk.interpreter.analysis.graph import PlanGraph
from obelisk.interpreter.plan.parse import parse_plan


@st.composite
def plans(draw: st.DrawFn) -> list[dict[str, Any]]:
    """Call i writes ``p<i>``, or ``p<i> || q<i>`` (two alternatives), and reads
    paths of earlier calls (sometimes through a fallback or ``[*]``)."""
    calls: list[dict[str, Any]] = []
    for i in range(draw(st.integers(min_value=2, max_value=12))):
        shape = draw(st.integers(0, 3))
        target = f"†state.p{i}" if shape == 0 else f"†state.p{i} || †state.q{i}"
        if shape == 3:
            target = f"†state.all.p{i} || †state.all.q{i}"
        call: dict[str, Any] = {"_tool": "t", "_outputPath": target}
        if i:
            earlier = st.integers(0, i - 1)
            for n in range(draw(st.integers(0, 3))):
                j, kind = draw(earlier), draw(st.sampled_from(["p", "q", "both", "all"]))
                read = {
                    "p": f"†state.p{j}",
                    "q": f"†state.q{j}",
                    "both": f"†state.p{j} || †state.q{j}",
                    "all": "†state.all[*]",
                }[kind]
                call[f"r{n}"] = read
        calls.append(call)
    return calls


def former(graph: PlanGraph) -> tuple[list[frozenset[tuple[int, int]]], dict[int, str]]:
    tags: list[frozenset[tuple[int, int]]] = [frozenset()] * graph.size
    unreachable: dict[int, str] = {}
    labels = [call.label for call in graph.plan.calls]
    for node in graph.orderable():
        acc: set[tuple[int, int]] = set()
        for read, sources in zip(graph.reads[node], graph.sources[node], strict=True):
            if not read.required or not sources:
                continue
            live = [w for w in sources if w.call not in unreachable]
            if not live:
                dead = ", ".join(sorted({labels[w.call] for w in sources}))
                unreachable[node] = (
                    f"it needs {read.reference}, which only {dead} can write, "
                    "and that can never run"
                )
                break
            common: frozenset[tuple[int, int]] | None = None
            for write in live:
                mine = tags[write.call]
                if write.alternatives > 1:
                    mine = mine | {(write.call, write.alternative)}
                common = mine if common is None else common & mine
            acc.update(common or ())
        if node in unreachable:
            continue
        chosen: dict[int, int] = {}
        for producer, alternative in sorted(acc):
            if chosen.setdefault(producer, alternative) != alternative:
                unreachable[node] = (
                    f"it depends on two different alternatives of {labels[producer]}, "
                    "and only one of them is ever written"
                )
                break
        tags[node] = frozenset(acc)
    return tags, unreachable


@given(plans())
def test_exclusive_and_unreachable_equal_the_full_tag_analysis(raw: list[dict[str, Any]]) -> None:
    graph = PlanGraph(parse_plan(raw))
    tags, unreachable = former(graph)
    assert graph.unreachable == unreachable
    for first in range(graph.size):
        assert graph.tags(first) <= tags[first]
        for second in range(graph.size):
            if first in unreachable or second in unreachable:
                continue  # a call that never runs: whether it excludes another is moot
            chosen = dict(tags[first])
            expected = any(chosen.get(p, a) != a for p, a in tags[second])
            assert graph.exclusive(first, second) == expected
