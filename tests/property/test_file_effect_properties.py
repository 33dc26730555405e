"""The file tools' world effects are sound (issue 28, point 6; docs/tools.md, "The
standard tools"; docs/semantics.md, "World effects and order-only edges"): on random
plans of file reads and writes, every two calls that may touch one file, with at least
one writing, are ordered by the graph, whatever the spelling of their paths
(``a//./b/``, a reference, ``..``), and two calls whose literal paths name different
files, neither in a folder the other names, get no edge between them."""

from __future__ import annotations

import posixpath
from typing import Any

import hypothesis.strategies as st
from hypothesis import given

import obelisk
from obelisk.stdlib_tools import default_registry

REGISTRY = default_registry(".")
WRITERS = ("write_text", "write_json")
PARTS = ("a", "b", "a.txt", "..")


@st.composite
def paths(draw: st.DrawFn) -> str:
    if draw(st.integers(0, 5)) == 0:
        return "†input.p"  # a reference: any file at all
    parts = draw(st.lists(st.sampled_from(PARTS), min_size=1, max_size=3))
    separators = draw(st.lists(st.sampled_from(["/", "//", "/./"]), min_size=len(parts)))
    text = "".join(p + s for p, s in zip(parts, separators, strict=False)).rstrip("/")
    if draw(st.booleans()):
        text = "./" + text
    if draw(st.booleans()):
        text += "/"
    return text


calls = st.lists(
    st.tuples(st.sampled_from([*WRITERS, "read_text", "list_dir", "path_exists"]), paths()),
    min_size=2,
    max_size=7,
)


def _place(path: str) -> str | None:
    """The file a path names below the root; ``None`` for any file: a reference, or a
    path with ``..`` (after a symlink, ``a/..`` is not the root)."""
    if path.startswith("†") or ".." in path.split("/"):
        return None
    return posixpath.normpath(path)


def _may_share(one: str, other: str) -> bool:
    a, b = _place(one), _place(other)
    if a is None or b is None or "." in (a, b):
        return True
    return a == b or a.startswith(b + "/") or b.startswith(a + "/")


def _closure(predecessors: list[tuple[int, ...]]) -> set[tuple[int, int]]:
    pairs: set[tuple[int, int]] = set()
    for node in range(len(predecessors)):
        stack, seen = list(predecessors[node]), set()
        while stack:
            pred = stack.pop()
            if pred not in seen:
                seen.add(pred)
                pairs.add((pred, node))
                stack.extend(predecessors[pred])
    return pairs


def _plan(drawn: list[tuple[str, str]]) -> list[dict[str, Any]]:
    plan: list[dict[str, Any]] = []
    for tool, path in drawn:
        call: dict[str, Any] = {"_tool": tool, "path": path}
        if tool == "write_text":
            call["text"] = "x"
        elif tool == "write_json":
            call["value"] = 1
        plan.append(call)
    return plan


@given(calls)
def test_calls_that_may_touch_one_file_are_ordered(drawn: list[tuple[str, str]]) -> None:
    graph = obelisk.check(_plan(drawn), REGISTRY, input={"p": "a"}).graph
    assert graph is not None
    ordered = _closure(graph.predecessors)
    for later, (tool, path) in enumerate(drawn):
        for earlier, (other_tool, other_path) in enumerate(drawn[:later]):
            writes = tool in WRITERS or other_tool in WRITERS
            if writes and _may_share(path, other_path):
                assert (earlier, later) in ordered, (drawn[earlier], drawn[later])
            elif not _may_share(path, other_path):
                assert (earlier, later) not in graph.order_edges  # no needless edge
