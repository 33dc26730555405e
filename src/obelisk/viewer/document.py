"""The run viewer's one data model: the JSON document every page is drawn from
(docs/viewer.md).

Every input kind (a JSON-lines trace, a journaled run, a ``simulate --json`` report, a
loop transcript) is read into the same document, a JSON object::

    {"version": 1, "kind": "trace" | "journal" | "simulation" | "loop",
     "title", "status", "live": bool,
     "calls": [{"key", "index", "label", "tool", "id", "status", "reason",
                "arguments", "output", "error", "attempts", "approval", "labels",
                "revision", "turn", "started", "finished"}],
     "edges": [{"source", "target", "kind", "label"}],
     "critical": [call key, ...],
     "critical_basis": "plan" | "estimate" | "simulation" | null,
     "state", "log": [{"seq", "call", "instance", "path", "method", "value", "time"}],
     "turns": [{"turn", "request", "answer", "errors", "state_diff", "revision"}],
     "scenarios": [{"scenario", "arms", "statuses", "reasons", "critical_path",
                    "makespan", "peak_concurrency", "cost", "approvals", "state"}],
     "notes": [text, ...]}

A call's ``key`` is unique in the document (the call index as text; ``"2.0"`` for call 0
of a loop's turn 2); an edge's ``source`` is a call key or ``"input"``, its ``kind``
``data``, ``alternative`` (the write is one of several alternatives), ``after`` or
``effect`` (order only).  Times are seconds since the epoch (``null`` when unknown).
Values that came from tools stay JSON data: the page renders them as text, never as
markup (:mod:`obelisk.viewer.page`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from obelisk.interpreter.analysis.check import check
from obelisk.interpreter.analysis.graph import PlanGraph
from obelisk.interpreter.tools.registry import ToolsLike

__all__ = [
    "VERSION",
    "call_entry",
    "critical_path",
    "empty_document",
    "plan_edges",
]

VERSION = 1

_CALL_FIELDS = (
    "index",
    "label",
    "tool",
    "id",
    "status",
    "reason",
    "arguments",
    "output",
    "error",
    "attempts",
    "approval",
    "labels",
    "revision",
    "turn",
    "started",
    "finished",
)


def empty_document(kind: str, title: str) -> dict[str, Any]:
    """A document of ``kind`` with nothing in it yet (the shape in the module docstring)."""
    return {
        "version": VERSION,
        "kind": kind,
        "title": title,
        "status": None,
        "live": False,
        "calls": [],
        "edges": [],
        "critical": [],
        "critical_basis": None,
        "state": None,
        "log": [],
        "turns": [],
        "scenarios": [],
        "notes": [],
    }


def call_entry(key: str, index: int, tool: Any, **fields: Any) -> dict[str, Any]:
    """One entry of ``calls``: every field present (``None`` when unknown), ``label``
    ``#3 tool`` (with the ``_id`` in parentheses when there is one)."""
    entry: dict[str, Any] = dict.fromkeys(_CALL_FIELDS)
    entry.update(key=key, index=index, tool=None if tool is None else str(tool), attempts=0)
    entry.update({name: value for name, value in fields.items() if name in entry})
    if entry["label"] is None:
        call_id = entry["id"]
        entry["label"] = f"#{index} {tool}" + ("" if call_id is None else f" ({call_id})")
    if entry["status"] is None:
        entry["status"] = "waiting"
    return entry


def plan_edges(plan: Any, tools: ToolsLike = None, prefix: str = "") -> list[dict[str, Any]]:
    """The dependency edges of ``plan`` (any of the three plan shapes), as the
    document's ``edges``; call keys are ``prefix`` + the call index.  Order-only
    edges (``_after``, and world effects when ``tools`` declare them) are kinds
    ``after`` and ``effect``.  A plan too broken to have a graph gives no edges."""
    try:
        graph = check(plan, tools).graph
    except Exception:  # a plan the checker cannot even parse: no edges to draw
        return []
    if graph is None:
        return []
    return _data_edges(graph, prefix) + _order_edges(graph, prefix)


def _data_edges(graph: PlanGraph, prefix: str) -> list[dict[str, Any]]:
    found: dict[tuple[str, str], dict[str, Any]] = {}
    for node in range(graph.size):
        target = f"{prefix}{node}"
        for read, sources in zip(graph.reads[node], graph.sources[node], strict=True):
            path = str(read.reference)
            if read.reference.kind == "input" and not sources:
                _add_edge(found, "input", target, "data", path)
            for write in sources:
                kind = "alternative" if write.alternatives > 1 else "data"
                label = path
                if write.alternatives > 1:
                    label += f" (alternative {write.alternative + 1} of {write.alternatives})"
                _add_edge(found, f"{prefix}{write.call}", target, kind, label)
    return list(found.values())


def _order_edges(graph: PlanGraph, prefix: str) -> list[dict[str, Any]]:
    found: dict[tuple[str, str], dict[str, Any]] = {}
    for (before, after), why in sorted(graph.order_edges.items()):
        kind, label = ("after", "_after") if why == "after" else ("effect", f"effect: {why}")
        _add_edge(found, f"{prefix}{before}", f"{prefix}{after}", kind, label)
    return list(found.values())


def _add_edge(
    found: dict[tuple[str, str], dict[str, Any]], source: str, target: str, kind: str, label: str
) -> None:
    """Add an edge, or a label to the edge already there (``alternative`` wins)."""
    edge = found.setdefault(
        (source, target), {"source": source, "target": target, "kind": kind, "label": ""}
    )
    labels = [part for part in edge["label"].split(", ") if part]
    if label not in labels:
        labels.append(label)
    edge["label"] = ", ".join(labels)
    if kind == "alternative":
        edge["kind"] = kind


def critical_path(
    calls: Sequence[Mapping[str, Any]], edges: Iterable[Mapping[str, Any]]
) -> tuple[list[str], str | None]:
    """The chain of calls that decided when the run ended, and its basis.

    From the call that finished last, walk back to the predecessor (by the plan's
    edges) that finished last before it started, and so on: basis ``"plan"``.
    Without any edge, the predecessor is the call that finished last before it
    started: basis ``"estimate"``.  ``([], None)`` when no call has times."""
    timed = {c["key"]: c for c in calls if c["started"] is not None and c["finished"] is not None}
    if not timed:
        return [], None
    before: dict[str, list[str]] = {}
    for edge in edges:
        before.setdefault(edge["target"], []).append(edge["source"])
    basis = "plan" if before else "estimate"
    current = max(timed.values(), key=lambda c: (c["finished"], c["index"]))
    chain = [current["key"]]
    while True:
        candidates = before.get(current["key"], []) if before else list(timed)
        earlier = [
            timed[key]
            for key in candidates
            if key in timed and key not in chain and timed[key]["finished"] <= current["started"]
        ]
        if not earlier:
            break
        current = max(earlier, key=lambda c: (c["finished"], c["index"]))
        chain.append(current["key"])
    chain.reverse()
    return chain, basis
