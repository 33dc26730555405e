"""Compile references to jsonpath-ng expressions (docs/language.md).

A reference's path is turned into a jsonpath-ng expression object built
directly from the parsed segments (``Root``, ``Child``, ``Fields``, ``Index``,
``Wildcard``); no text is ever formatted for jsonpath-ng's own parser.  The
path is relative to the document of the reference's kind: ``†state.user.name``
compiles to the expression for ``user.name`` inside the state document.
"""

from __future__ import annotations

import sys
from typing import Any

from jsonpath_ng import jsonpath as jp

from obelisk.caches import BoundedCache
from obelisk.grammar.nodes import Field, Index, Reference, Segment

__all__ = ["find", "path_exists", "to_jsonpath"]

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


def to_jsonpath(reference: Reference) -> jp.JSONPath:
    """The jsonpath-ng expression for ``reference``'s path inside its document.

    ``[*]`` becomes ``Wildcard()``, which yields every item of a list (and every
    value of an object).  A key that is literally ``"*"`` stays a plain key.  The
    whole document (no segments) is ``Root()``.

    >>> from obelisk.grammar.parser import parse_reference
    >>> path = to_jsonpath(parse_reference("†state.users[*].name"))
    >>> [m.value for m in path.find({"users": [{"name": "a"}, {"name": "b"}]})]
    ['a', 'b']
    """
    found = _JSONPATHS.get(reference)
    if found is not None:
        return found
    expression: jp.JSONPath = jp.Root()
    for segment in reference.segments:
        expression = jp.Child(expression, _segment(segment))
    _JSONPATHS.put(reference, expression, _cost(reference))
    return expression


def find(document: Any, reference: Reference) -> tuple[bool, Any]:
    """``(True, value)`` at the reference's path inside ``document``, or ``(False, None)``.

    Existence, not truthiness (docs/language.md).  A plain path is walked segment by
    segment; ``[*]`` yields the list of every match (possibly empty) once the list
    or object before it exists: its items (an object's values) when it is the last
    segment, else found with the compiled jsonpath-ng expression.
    Used by state reads, the checker and the standard tools alike.

    >>> from obelisk.grammar.parser import parse_reference
    >>> find({"a": [1, 2]}, parse_reference("†s.a[-1]")), find({}, parse_reference("†s.a"))
    ((True, 2), (False, None))
    """
    segments = reference.segments
    current = document
    last = len(segments) - 1
    for position, segment in enumerate(segments):
        if isinstance(segment, Field):
            if not isinstance(current, dict) or segment.name not in current:
                return False, None
            current = current[segment.name]
        elif isinstance(segment, Index):
            if not isinstance(current, list) or not -len(current) <= segment.index < len(current):
                return False, None
            current = current[segment.index]
        else:
            if not isinstance(current, (list, dict)):
                return False, None
            if position == last:  # the common case: [*] last, its values in order
                return True, list(current.values() if isinstance(current, dict) else current)
            return True, [match.value for match in to_jsonpath(reference).find(document)]
    return True, current


def path_exists(document: Any, reference: Reference) -> bool:
    """True when ``reference``'s path exists in ``document`` (existence, not truthiness).

    ``[*]`` exists when it meets a list or an object; the rest of the path after it
    is not followed.
    """
    return find(document, reference)[0]
