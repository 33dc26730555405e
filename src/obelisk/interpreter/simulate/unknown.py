"""Values a dry run cannot predict (docs/simulate.md, "Unknown values").

A tool with neither a stub nor an output schema (every tool read from an OpenAI
function description), a pure tool or a stub function given unknown arguments,
and an output schema no value can be generated for, give an :class:`UnknownValue`
instead of a value.  The dry run writes it where the result would go; a read
through it (any field or item of it) is unknown too, so the calls that read it run
in the dry run, with unknown arguments, and their own outcomes are explored.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from obelisk.errors import ArgumentProblem
from obelisk.grammar import Reference, Segment
from obelisk.interpreter.runtime.state import MISSING, State

__all__ = [
    "ReadsThroughUnknown",
    "UnknownValue",
    "about_unknown",
    "json_form",
    "unknown_sources",
]


@dataclass(frozen=True, slots=True, repr=False)
class UnknownValue:
    """A value nobody can predict before the run: the result of call ``call`` (its
    label, ``#2 lookup``), or its part at ``path`` (``card``, ``lines[0].sku``;
    ``""`` for the whole result).  Not JSON data: :meth:`to_json` is its JSON form,
    ``{"$unknown": "#2 lookup"}``, with ``"path"`` for a part."""

    call: str
    path: str = ""

    def at(self, segments: Iterable[Segment]) -> UnknownValue:
        """The part of this value at ``segments`` (fields, indexes, ``[*]``): unknown too."""
        tail = "".join(str(segment) for segment in segments)
        path = (self.path + tail) if self.path else tail.removeprefix(".")
        return UnknownValue(self.call, path)

    def to_json(self) -> dict[str, str]:
        """``{"$unknown": <call label>}``, and ``"path"`` when this is a part of its result."""
        return {"$unknown": self.call, "path": self.path} if self.path else {"$unknown": self.call}

    def __repr__(self) -> str:
        return (
            f"UnknownValue({self.call!r}, {self.path!r})"
            if self.path
            else f"UnknownValue({self.call!r})"
        )

    def __str__(self) -> str:
        return f"<unknown: {self.call}{' ' + self.path if self.path else ''}>"


def unknown_sources(value: Any) -> list[str]:
    """The labels of the calls whose unknown values ``value`` holds (anywhere inside
    it), each once; ``[]`` when it holds none."""
    if type(value) is UnknownValue:
        return [value.call]
    found: list[str] = []
    stack = [value]
    while stack:
        item = stack.pop()
        kind = type(item)
        if kind is dict:
            children: Iterable[Any] = item.values()
        elif kind is list:
            children = item
        else:
            continue
        for child in children:
            kind = type(child)
            if kind is UnknownValue:
                if child.call not in found:
                    found.append(child.call)
            elif kind is dict or kind is list:
                stack.append(child)
    return found


def json_form(value: Any) -> Any:
    """``value`` with every :class:`UnknownValue` inside it replaced by its JSON form
    (``{"$unknown": "#2 lookup"}``); ``value`` itself when it holds none."""
    if type(value) is UnknownValue:
        return value.to_json()
    if type(value) is dict:
        if not unknown_sources(value):
            return value
        return {key: json_form(item) for key, item in value.items()}
    if type(value) is list:
        if not unknown_sources(value):
            return value
        return [json_form(item) for item in value]
    return value


def _at(value: Any, loc: tuple[str | int, ...]) -> Any:
    """What ``loc`` points at in ``value``: the value, an :class:`UnknownValue` met on the
    way, or ``MISSING``."""
    for step in loc:
        if type(value) is UnknownValue:
            return value
        inside = (isinstance(value, dict) and step in value) or (
            isinstance(value, list) and isinstance(step, int) and -len(value) <= step < len(value)
        )
        if not inside:
            return MISSING
        value = value[step]
    return value


def about_unknown(problem: ArgumentProblem, arguments: dict[str, Any]) -> bool:
    """True when an argument problem is only that a value is unknown: its ``loc`` meets
    an :class:`UnknownValue`, or names (below the arguments object) a part holding one."""
    if not problem.loc:
        return False  # about the arguments object itself: a missing or extra name
    found = _at(arguments, problem.loc)
    return type(found) is UnknownValue or (found is not MISSING and bool(unknown_sources(found)))


class ReadsThroughUnknown:
    """A :class:`State`'s reads, except that a path going through an unknown value reads
    as unknown (its part at the rest of the path) instead of not existing.  Has only
    ``read``: what expressions are evaluated with."""

    __slots__ = ("state",)

    def __init__(self, state: State) -> None:
        self.state = state

    def read(self, reference: Reference, instance: str | None = None) -> Any:
        value = self.state.read(reference, instance)
        if value is not MISSING:
            return value
        depth, found = self.state.deepest(reference, instance)
        if type(found) is UnknownValue and 0 <= depth < len(reference.segments):
            return found.at(reference.segments[depth:])
        return MISSING
