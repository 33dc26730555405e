"""Compile references to jsonpath-ng expressions (docs/language.md).

A reference's path is turned into a jsonpath-ng expression object built
directly from the parsed segments (``Root``, ``Child``, ``Fields``, ``Index``,
``Wildcard``); no text is ever formatted for jsonpath-ng's own parser.  The
path is relative to the document of the reference's kind: ``†state.user.name``
compiles to the expression for ``user.name`` inside the state document.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from obelisk.grammar.nodes import Field, Index, Reference

if TYPE_CHECKING:
    from jsonpath_ng.jsonpath import JSONPath

__all__ = ["find", "path_exists", "to_jsonpath"]


def to_jsonpath(reference: Reference) -> JSONPath:
    """The jsonpath-ng expression for ``reference``'s path inside its document.

    ``[*]`` becomes ``Wildcard()``, which yields every item of a list (and every
    value of an object).  A key that is literally ``"*"`` stays a plain key.  The
    whole document (no segments) is ``Root()``.

    >>> from obelisk.grammar.parser import parse_reference
    >>> path = to_jsonpath(parse_reference("†state.users[*].name"))
    >>> [m.value for m in path.find({"users": [{"name": "a"}, {"name": "b"}]})]
    ['a', 'b']
    """
    from obelisk.grammar.jsonpath import compiled

    return compiled(reference)


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
