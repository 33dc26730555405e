"""Draw a plan's dependency graph as Mermaid or Graphviz DOT text.

Nodes are the calls (``#0 processPayment``) plus one ``input`` node when the plan
reads ``†input``; edges run from the call that writes a path to the call that
reads it and are labelled with the path read.  An edge that comes from one of
several alternatives of an output (docs/language.md) is dashed and labelled with the
alternative it belongs to, e.g. ``†state.error (alternative 2 of 2)``.
"""

from __future__ import annotations

import json
from typing import Literal

from obelisk.interpreter.analysis.graph import PlanGraph

__all__ = ["GraphFormat", "draw"]

GraphFormat = Literal["mermaid", "dot"]


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
    return edges


def _mermaid_text(text: str) -> str:
    return '"' + text.replace('"', "#quot;") + '"'


def draw(graph: PlanGraph, fmt: GraphFormat = "mermaid") -> str:
    """Render ``graph`` as Mermaid (``flowchart TD``) or DOT (``digraph plan``) text.

    Raises ``ValueError`` for an unknown ``fmt``.
    """
    calls = graph.plan.calls
    edges = _edges(graph)
    uses_input = any(source == "input" for source, _ in edges)
    if fmt == "mermaid":
        lines = ["flowchart TD"]
        if uses_input:
            lines.append("  input([input])")
        lines.extend(f"  c{call.index}[{_mermaid_text(call.label)}]" for call in calls)
        for (source, target), (labels, alternative) in edges.items():
            text = _mermaid_text(", ".join(labels))
            arrow = f"-. {text} .->" if alternative else f"-- {text} -->"
            lines.append(f"  {source} {arrow} {target}")
        return "\n".join(lines) + "\n"
    if fmt == "dot":
        lines = ["digraph plan {", "  rankdir=TB;", "  node [shape=box];"]
        if uses_input:
            lines.append('  input [label="input", shape=ellipse];')
        lines.extend(
            f"  c{call.index} [label={json.dumps(call.label, ensure_ascii=False)}];"
            for call in calls
        )
        for (source, target), (labels, alternative) in edges.items():
            label = json.dumps(", ".join(labels), ensure_ascii=False)
            style = ", style=dashed" if alternative else ""
            lines.append(f"  {source} -> {target} [label={label}{style}];")
        lines.append("}")
        return "\n".join(lines) + "\n"
    raise ValueError(f"unknown graph format {fmt!r}; expected 'mermaid' or 'dot'")
