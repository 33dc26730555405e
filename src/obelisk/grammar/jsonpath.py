"""jsonpath-ng expressions for references, built from the parsed nodes: loaded only
when a path has ``[*]`` before its last segment, or when :func:`obelisk.grammar.to_jsonpath`
is called (docs/performance.md, "Cold start").
"""

from __future__ import annotations

import sys

from jsonpath_ng import jsonpath as jp

from obelisk.caches import BoundedCache
from obelisk.grammar.nodes import Field, Index, Reference, Segment

__all__ = ["compiled"]

# Compiled paths by reference: 65,536 at most, 32 MiB by _cost.
_JSONPATHS: BoundedCache[Reference, jp.JSONPath] = BoundedCache(
    max_entries=65536, max_bytes=32 << 20
)


class _LiteralFields(jp.Fields):  # type: ignore[misc,unused-ignore]
    """``Fields`` for a key that is literally ``"*"`` (jsonpath-ng reads it as a wildcard)."""

    def __init__(self, *fields: str) -> None:
        self.fields = fields
        self._deprecated_wildcard_use = False

    def reified_fields(self, datum: object) -> tuple[str, ...]:
        return tuple(self.fields)


class _EveryChild(jp.JSONPath):  # type: ignore[misc,unused-ignore]
    """Every item of a list, or every value of an object: jsonpath-ng's ``Wildcard``,
    for jsonpath-ng releases older than 1.16 (the ones that install on Python 3.10)."""

    def find(self, datum: object) -> list[jp.DatumInContext]:
        datum = jp.DatumInContext.wrap(datum)
        value = datum.value
        if isinstance(value, list):
            return [
                jp.DatumInContext(item, path=jp.Index(i), context=datum)
                for i, item in enumerate(value)
            ]
        if isinstance(value, dict):
            return [
                jp.DatumInContext(item, path=_LiteralFields(key), context=datum)
                for key, item in value.items()
            ]
        return []

    def __str__(self) -> str:
        return "*"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _EveryChild)

    def __hash__(self) -> int:
        return hash("*")


_WILDCARD: type[jp.JSONPath] = getattr(jp, "Wildcard", _EveryChild)


class _Index(jp.Index):  # type: ignore[misc,unused-ignore]
    """``Index`` that matches nothing out of range (jsonpath-ng before 1.9 raised IndexError)."""

    def find(self, datum: object) -> list[jp.DatumInContext]:
        try:
            found: list[jp.DatumInContext] = super().find(datum)
        except IndexError:
            return []
        return found


def _segment(segment: Segment) -> jp.JSONPath:
    if isinstance(segment, Field):
        return _LiteralFields(segment.name) if segment.name == "*" else jp.Fields(segment.name)
    if isinstance(segment, Index):
        return _Index(segment.index)
    return _WILDCARD()


def _cost(reference: Reference) -> int:
    """About the bytes an entry keeps: the key names (shared with the reference, which
    the entry keeps too) and a few objects per segment."""
    names = sum(sys.getsizeof(s.name) for s in reference.segments if isinstance(s, Field))
    return names + 200 * (len(reference.segments) + 1)


def compiled(reference: Reference) -> jp.JSONPath:
    """The jsonpath-ng expression for ``reference`` (:func:`obelisk.grammar.to_jsonpath`)."""
    found = _JSONPATHS.get(reference)
    if found is not None:
        return found
    expression: jp.JSONPath = jp.Root()
    for segment in reference.segments:
        expression = jp.Child(expression, _segment(segment))
    _JSONPATHS.put(reference, expression, _cost(reference))
    return expression
