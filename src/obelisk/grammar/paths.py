"""Compile references to jsonpath-ng expressions (DESIGN §1.2).

A reference's path is turned into a jsonpath-ng expression object built
directly from the parsed segments (``Root``, ``Child``, ``Fields``, ``Index``,
``Wildcard``); no text is ever formatted for jsonpath-ng's own parser.  The
path is relative to the document of the reference's kind: ``†state.user.name``
compiles to the expression for ``user.name`` inside the state document.
"""

from __future__ import annotations

import functools

from jsonpath_ng import jsonpath as jp

from obelisk.grammar.nodes import Field, Index, Reference, Segment

__all__ = ["to_jsonpath"]


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


@functools.lru_cache(maxsize=65536)
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
    expression: jp.JSONPath = jp.Root()
    for segment in reference.segments:
        expression = jp.Child(expression, _segment(segment))
    return expression
