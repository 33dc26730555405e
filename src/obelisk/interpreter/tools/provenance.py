"""Provenance: the calls and inputs a value came from, with their labels
(docs/security.md, "Provenance").

Pure: it works on what a run leaves behind, as text, so that a run's result, a
journaled run and a JSON-lines trace all give the same chain (:func:`trace_back`).
``writes`` is the write log in commit order (``(call index, path text, method)``),
``reads`` the references each call's arguments read, ``names`` each call's
``#3 tool`` name and ``labels`` each call's labels as its record keeps them (argument
labels by name, the result's as ``"_result"``, each ``Label.to_dict()``).  A call's
reads are every reference of its argument expressions: the alternatives a fallback
did not take are listed too (an over-approximation).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from obelisk.grammar import parse_reference
from obelisk.interpreter.tools.labels import TRUSTED, Label, Path

__all__ = ["Origin", "describe_chain", "plan_reads", "trace_back"]


@dataclass(frozen=True, slots=True)
class Origin:
    """One step of a value's provenance: ``name`` is a call's ``#1 read_file`` or an
    input path; ``call`` its index (``None`` for an input); ``path`` the path the value
    went through there; ``label`` the call's result label (or the input's);
    ``depth`` 0 for what wrote the value itself, 1 for what that read, and so on."""

    name: str
    call: int | None
    path: str
    label: Label
    depth: int

    def to_dict(self) -> dict[str, Any]:
        """``{"name", "call", "path", "label": Label.to_dict(), "depth"}``."""
        return {
            "name": self.name,
            "call": self.call,
            "path": self.path,
            "label": self.label.to_dict(),
            "depth": self.depth,
        }

    def __str__(self) -> str:
        return f"{'  ' * self.depth}{self.name} via {self.path} ({self.label.describe()})"


def _key(text: str) -> Path:
    reference = parse_reference(text)
    return (reference.kind, *reference.path)


def _overlap(a: Path, b: Path) -> tuple[bool, bool]:
    """``(overlaps, a covers b)``: one is a prefix of the other (``...`` matches any)."""
    for x, y in zip(a, b, strict=False):
        if x != y and x is not ... and y is not ...:
            return False, False
    return True, len(a) <= len(b)


def _writers(key: Path, writes: Sequence[tuple[int | None, Path, str]]) -> list[int]:
    """The calls whose writes make up the value at ``key``: the last write that
    replaced all of it, and the writes after it (below it, or merged into it)."""
    found: list[int] = []
    for call, path, method in reversed(writes):
        overlaps, covers = _overlap(path, key)
        if not overlaps:
            continue
        if call is not None and call not in found:
            found.append(call)
        if covers and method == "set":
            break
    return found


def _input_label(text: str, labels: Mapping[int, Mapping[str, Any]]) -> Label:
    """An input's label, from the argument labels that name it as their source."""
    for by_name in labels.values():
        for name, data in by_name.items():
            label = Label.from_dict(data)
            if name != "_result" and any(text.startswith(s.name) for s in label.sources):
                return Label(label.trust, frozenset(s for s in label.sources if s.call is None))
    return TRUSTED


def trace_back(
    path: str,
    writes: Sequence[tuple[int | None, str, str]],
    reads: Mapping[int, Sequence[str]],
    names: Mapping[int, str],
    labels: Mapping[int, Mapping[str, Any]],
) -> list[Origin]:
    """The provenance of the value at ``path`` (see the module docstring), breadth
    first, each call and input once.  Raises
    :class:`~obelisk.errors.ReferenceSyntaxError` for a path that does not parse."""
    keyed = [(call, _key(text), method) for call, text, method in writes]
    queue: list[tuple[str, int]] = [(path, 0)]
    seen: set[Any] = set()
    found: list[Origin] = []
    while queue:
        text, depth = queue.pop(0)
        writers = _writers(_key(text), keyed)
        if not writers and text not in seen:
            seen.add(text)
            found.append(Origin(text, None, text, _input_label(text, labels), depth))
        for call in writers:
            if call in seen:
                continue
            seen.add(call)
            result = labels.get(call, {}).get("_result")
            label = TRUSTED if result is None else Label.from_dict(result)
            found.append(Origin(names.get(call, f"#{call}"), call, text, label, depth))
            queue.extend((read, depth + 1) for read in reads.get(call, ()))
    return found


def plan_reads(plan: Any) -> dict[int, list[str]]:
    """The references each call of ``plan`` (an ``obelisk.Plan``) reads, as text."""
    return {
        call.index: [
            str(reference)
            for argument in call.expressions
            for reference in getattr(argument.expression, "references", ())
        ]
        for call in plan.calls
    }


def describe_chain(path: str, origins: Sequence[Origin]) -> str:
    """The chain for people, one origin a line, indented by depth."""
    lines = [f"{path} comes from:"]
    lines.extend(f"  {origin}" for origin in origins)
    return "\n".join(lines)
