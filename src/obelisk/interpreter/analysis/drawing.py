"""Draw a plan's dependency graph as Mermaid or Graphviz DOT text (docs/cli.md).

Nodes are the calls (``#0 processPayment``) plus one ``input`` node when the plan
reads ``†input``; edges run from the call that writes a path to the call that
reads it and are labelled with the path read.  An edge that comes from one of
several alternatives of an output (docs/language.md) is dashed and labelled with the
alternative it belongs to, e.g. ``†state.error (alternative 2 of 2)``.  Order-only
edges (``_after``, conflicting world effects) are dashed and labelled ``_after`` or
``effect: slack.users``.  Edges of a
dependency cycle are drawn red and thick.  Given the calls' statuses (from a run's
trace), each call is filled with the colour of its status.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Mapping, Sequence
from typing import Literal

from obelisk.interpreter.analysis.graph import PlanGraph

__all__ = ["STATUS_COLOURS", "GraphFormat", "draw"]

GraphFormat = Literal["mermaid", "dot"]

STATUS_COLOURS = {
    "succeeded": "#c8e6c9",
    "failed": "#ffcdd2",
    "invalid_output": "#ffe0b2",
    "skipped": "#e0e0e0",
    "cancelled": "#e0e0e0",
    "pending_latent": "#fff9c4",
    "running": "#fff9c4",
}
"""Fill colour of a call by status (``running``: started, never finished)."""
_CYCLE_COLOUR = "#d32f2f"


def _cycle_edges(graph: PlanGraph) -> set[tuple[str, str]]:
    found: set[tuple[str, str]] = set()
    for walk in graph.cycles:
        for source, target in itertools.pairwise(walk):
            found.add((f"c{source}", f"c{target}"))
    return found


def _edges(graph: PlanGraph) -> dict[tuple[str, str], tuple[list[str], bool]]:
    """``(from, to) -> (labels, is_alternative)`` in a stable order."""
    edges: dict[tuple[str, str], tuple[list[str], bool]] = {}
    for node in range(graph.size):
        for read, sources in zip(graph.reads[node], graph.sources[node], strict=True):
            if read.reference.kind == "input" and not sources:
                labels, alt = edges.setdefault(("input", f"c{node}"), ([], False))
                if str(read.reference) not in labels:
                    labels.append(str(read.reference))
            for write in sources:
                label = str(read.reference)
                if write.alternatives > 1:
                    label += f" (alternative {write.alternative + 1} of {write.alternatives})"
                key = (f"c{write.call}", f"c{node}")
                labels, alt = edges.setdefault(key, ([], False))
                if label not in labels:
                    labels.append(label)
                edges[key] = (labels, alt or write.alternatives > 1)
    for (before, after), why in sorted(graph.order_edges.items()):
        label = "_after" if why == "after" else f"effect: {why}"
        key = (f"c{before}", f"c{after}")
        labels, _ = edges.setdefault(key, ([], True))
        if label not in labels:
            labels.append(label)
        edges[key] = (labels, True)  # order only: dashed
    return edges


def _mermaid_text(text: str) -> str:
    return '"' + text.replace('"', "#quot;") + '"'


def draw(
    graph: PlanGraph,
    fmt: GraphFormat = "mermaid",
    statuses: Mapping[int, str] | None = None,
    critical: Sequence[int] = (),
) -> str:
    """Render ``graph`` as Mermaid (``flowchart TD``) or DOT (``digraph plan``) text.

    ``statuses`` maps call indexes to a status (``succeeded``, ``failed``,
    ``skipped``, ``cancelled``, ``pending_latent``, ``running``); those calls are
    filled with :data:`STATUS_COLOURS`.  ``critical`` is a chain of call indexes (a
    dry run's critical path): its calls get a thick border and the edges between
    them are thick.  Raises ``ValueError`` for an unknown ``fmt``.
    """
    render = _RENDERERS.get(fmt) if isinstance(fmt, str) else None
    if render is None:
        raise ValueError(f"unknown graph format {fmt!r}; expected 'mermaid' or 'dot'")
    return "\n".join(render(_Picture(graph, statuses, critical))) + "\n"


class _Picture:
    """What both formats draw: the calls, the labelled edges, the cycle's edges, the
    critical path's edges, and the calls' statuses."""

    def __init__(
        self, graph: PlanGraph, statuses: Mapping[int, str] | None, critical: Sequence[int]
    ) -> None:
        self.calls = graph.plan.calls
        self.edges = _edges(graph)
        self.cycle = _cycle_edges(graph)
        self.path = set(itertools.pairwise(f"c{i}" for i in critical))
        self.critical = critical
        self.uses_input = any(source == "input" for source, _ in self.edges)
        self.statuses = {k: v for k, v in (statuses or {}).items() if v in STATUS_COLOURS}

    def mermaid(self) -> list[str]:
        lines = ["flowchart TD"]
        if self.uses_input:
            lines.append("  input([input])")
        lines.extend(f"  c{call.index}[{_mermaid_text(call.label)}]" for call in self.calls)
        red: list[int] = []
        thick: list[int] = []
        for number, ((source, target), (labels, alternative)) in enumerate(self.edges.items()):
            text = _mermaid_text(", ".join(labels))
            arrow = f"-. {text} .->" if alternative else f"-- {text} -->"
            lines.append(f"  {source} {arrow} {target}")
            if (source, target) in self.cycle:
                red.append(number)
            elif (source, target) in self.path:
                thick.append(number)
        if red:
            numbers = ",".join(map(str, red))
            lines.append(f"  linkStyle {numbers} stroke:{_CYCLE_COLOUR},stroke-width:3px")
        if thick:
            lines.append(f"  linkStyle {','.join(map(str, thick))} stroke-width:4px")
        lines.extend(self._mermaid_classes())
        return lines

    def _mermaid_classes(self) -> list[str]:
        """The fill of each status, and the thick border of the critical calls."""
        lines: list[str] = []
        statuses = self.statuses
        for status in sorted(set(statuses.values())):
            lines.append(f"  classDef {status} fill:{STATUS_COLOURS[status]}")
            members = ",".join(f"c{i}" for i in sorted(statuses) if statuses[i] == status)
            lines.append(f"  class {members} {status}")
        if self.critical:
            lines.append("  classDef critical stroke-width:4px")
            lines.append(f"  class {','.join(f'c{i}' for i in self.critical)} critical")
        return lines

    def dot(self) -> list[str]:
        lines = ["digraph plan {", "  rankdir=TB;", "  node [shape=box];"]
        if self.uses_input:
            lines.append('  input [label="input", shape=ellipse];')
        for call in self.calls:
            label = json.dumps(call.label, ensure_ascii=False)
            lines.append(f"  c{call.index} [label={label}{self._dot_fill(call.index)}];")
        for (source, target), (labels, alternative) in self.edges.items():
            label = json.dumps(", ".join(labels), ensure_ascii=False)
            style = ", style=dashed" if alternative else ""
            if (source, target) in self.cycle:
                style += f', color="{_CYCLE_COLOUR}", penwidth=3'
            elif (source, target) in self.path:
                style += ", penwidth=3"
            lines.append(f"  {source} -> {target} [label={label}{style}];")
        lines.append("}")
        return lines

    def _dot_fill(self, index: int) -> str:
        """A call's attributes beyond its label: its status's fill, a critical border."""
        seen = self.statuses.get(index)
        fill = ""
        if seen is not None:
            fill = f', style=filled, fillcolor="{STATUS_COLOURS[seen]}", tooltip="{seen}"'
        if index in self.critical:
            fill += ", penwidth=3"
        return fill


_RENDERERS: dict[str, Callable[[_Picture], list[str]]] = {
    "mermaid": _Picture.mermaid,
    "dot": _Picture.dot,
}
