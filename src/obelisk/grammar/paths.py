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


def _segment(segment: Segment) -> jp.JSONPath:
    if isinstance(segment, Field):
        return jp.Fields(segment.name)
    if isinstance(segment, Index):
        return jp.Index(segment.index)
    return jp.Wildcard()


@functools.lru_cache(maxsize=65536)
def to_jsonpath(reference: Reference) -> jp.JSONPath:
    """The jsonpath-ng expression for ``reference``'s path inside its document.

    ``[*]`` becomes ``Wildcard()``, which yields every item of a list (and every
    value of an object).  The whole document (no segments) is ``Root()``.

    >>> from obelisk.grammar.parser import parse_reference
    >>> path = to_jsonpath(parse_reference("†state.users[*].name"))
    >>> [m.value for m in path.find({"users": [{"name": "a"}, {"name": "b"}]})]
    ['a', 'b']
    """
    expression: jp.JSONPath = jp.Root()
    for segment in reference.segments:
        expression = jp.Child(expression, _segment(segment))
    return expression
