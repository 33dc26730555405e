"""Syntax tree of the reference language (docs/language.md).

Nodes are frozen, slotted dataclasses.  Every node carries ``span``: the
``(start, end)`` character offsets (end exclusive) of its text inside the
expression it came from.  Spans do not take part in equality or hashing, so a
node parsed from ``"†state.a[0]"`` equals one parsed from ``"†state.a.0"``.

``str(node)`` gives the canonical text, and parsing it gives an equal node
(the round-trip property tested in ``tests/property``).

The tree of an expression has at most three levels::

    Alternatives(options=(Conjunction(parts=(Reference, ...)) | Reference, ...))

``a || b`` is an :class:`Alternatives` (input position: fallback; output position:
alternative outcomes), ``a && b`` a :class:`Conjunction` (input: gate; output:
fan-out).  A lone reference is just a :class:`Reference`.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from types import EllipsisType
from typing import Union

__all__ = [
    "ANY_INDEX",
    "Alternatives",
    "Conjunction",
    "Escaped",
    "Expression",
    "Field",
    "Index",
    "Reference",
    "Segment",
    "Span",
    "WILDCARD",
    "Wildcard",
    "ref",
]

Span = tuple[int, int]
_NO_SPAN: Span = (0, 0)


class _Marker:
    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return self.name


ANY_INDEX = _Marker("ANY_INDEX")
"""In :attr:`Reference.key`, a negative index: some list position, unknown until run time."""
WILDCARD = _Marker("WILDCARD")
"""In :attr:`Reference.key`, ``[*]``: every item of a list, or every value of an object."""
_NAME = re.compile(r"[^\W\d][\w\-]*")


@dataclass(frozen=True, slots=True)
class Field:
    """An object key: ``.name`` or ``["quoted key"]``."""

    name: str
    span: Span = field(default=_NO_SPAN, compare=False, repr=False)

    def __str__(self) -> str:
        if _NAME.fullmatch(self.name):
            return "." + self.name
        return "[" + json.dumps(self.name, ensure_ascii=False) + "]"


@dataclass(frozen=True, slots=True)
class Index:
    """A list index: ``[2]`` or ``.2``; negative values count from the end."""

    index: int
    span: Span = field(default=_NO_SPAN, compare=False, repr=False)

    def __str__(self) -> str:
        return f"[{self.index}]"


@dataclass(frozen=True, slots=True)
class Wildcard:
    """``[*]``: every item of a list (input position only); yields a list."""

    span: Span = field(default=_NO_SPAN, compare=False, repr=False)

    def __str__(self) -> str:
        return "[*]"


Segment = Union[Field, Index, Wildcard]  # noqa: UP007 (runtime alias on 3.10)

# ``X.__new__`` is ``object.__new__`` here, and a class's own allocator where mypyc
# compiles this module (benchmarks/compiled.py), which refuses ``object.__new__``.
_new_field, _new_index = Field.__new__, Index.__new__
_set_name, _set_field_span = (vars(Field)[name].__set__ for name in ("name", "span"))
_set_index, _set_index_span = (vars(Index)[name].__set__ for name in ("index", "span"))


def new_field(name: str, span: Span) -> Field:
    """``Field(name, span)`` with its slots set directly, at about 60% of the cost of
    the frozen dataclass's ``__init__``: a parse makes one per path segment."""
    made = _new_field(Field)
    _set_name(made, name)
    _set_field_span(made, span)
    return made


def new_index(index: int, span: Span) -> Index:
    """``Index(index, span)``, made as :func:`new_field` makes a field."""
    made = _new_index(Index)
    _set_index(made, index)
    _set_index_span(made, span)
    return made


@dataclass(frozen=True, slots=True)
class Reference:
    """``†kind.path``: a read or write of one place in a document.

    ``kind`` is ``"state"``, ``"input"`` or a data-message kind such as ``"data"``;
    ``segments`` is the path inside that document (empty: the whole document).
    """

    kind: str
    segments: tuple[Segment, ...] = ()
    span: Span = field(default=_NO_SPAN, compare=False, repr=False)
    _text: str | None = field(default=None, compare=False, repr=False)
    _key: tuple[object, ...] | None = field(default=None, compare=False, repr=False)

    @classmethod
    def parsed(
        cls,
        kind: str,
        segments: tuple[Segment, ...],
        span: Span,
        text: str | None,
        key: tuple[object, ...],
    ) -> Reference:
        """A reference whose :attr:`key` and canonical text (``str()``; ``None``:
        made on first use) its parser already has, so neither is computed again.
        Both must be what :attr:`key` and ``str()`` would compute.  Its slots are set
        directly, at about half the cost of the frozen dataclass's ``__init__`` (one
        ``object.__setattr__`` per field): a parse makes one per reference."""
        made = _new_reference(cls)
        _set_kind(made, kind)
        _set_segments(made, segments)
        _set_span(made, span)
        _set_text(made, text)
        _set_key(made, key)
        return made

    @property
    def key(self) -> tuple[object, ...]:
        """The path as one hashable tuple, for indexes of paths: the kind, then each
        segment's name, non-negative index, :data:`ANY_INDEX` (a negative index) or
        :data:`WILDCARD` (``[*]``).  Computed once per object.

        >>> from obelisk.grammar.parser import parse_reference
        >>> parse_reference('†state.a[0][-1]["b c"][*]').key
        ('state', 'a', 0, ANY_INDEX, 'b c', WILDCARD)
        """
        key = self._key
        if key is None:
            parts: list[object] = [self.kind]
            for segment in self.segments:
                if isinstance(segment, Field):
                    parts.append(segment.name)
                elif isinstance(segment, Index):
                    parts.append(segment.index if segment.index >= 0 else ANY_INDEX)
                else:
                    parts.append(WILDCARD)
            key = tuple(parts)
            object.__setattr__(self, "_key", key)
        return key

    def __str__(self) -> str:
        text = self._text
        if text is None:  # computed once per object (plans reuse their references)
            text = "†" + self.kind + "".join(str(segment) for segment in self.segments)
            object.__setattr__(self, "_text", text)
        return text

    @property
    def path(self) -> tuple[str | int | EllipsisType, ...]:
        """The segments as plain values: a key is a ``str``, an index an ``int`` and
        ``[*]`` is ``...``; ``ref(kind, *path)`` gives the reference's text back.

        >>> from obelisk.grammar.parser import parse_reference
        >>> parse_reference('†state.c0[0]["City Hub"][*]').path
        ('c0', 0, 'City Hub', Ellipsis)
        """
        return tuple(
            s.name if isinstance(s, Field) else s.index if isinstance(s, Index) else ...
            for s in self.segments
        )

    @property
    def has_wildcard(self) -> bool:
        """True when any segment is ``[*]``."""
        return WILDCARD in self.key

    @property
    def references(self) -> tuple[Reference, ...]:
        return (self,)


_new_reference = Reference.__new__
_set_kind, _set_segments, _set_span, _set_text, _set_key = (
    vars(Reference)[name].__set__ for name in ("kind", "segments", "span", "_text", "_key")
)


@dataclass(frozen=True, slots=True)
class Conjunction:
    """``a && b``: a gate when read (all must exist; the value is the last),
    a fan-out when written (the same value goes to every part)."""

    parts: tuple[Reference, ...]
    span: Span = field(default=_NO_SPAN, compare=False, repr=False)

    def __str__(self) -> str:
        return " && ".join(str(part) for part in self.parts)

    @property
    def references(self) -> tuple[Reference, ...]:
        return self.parts


@dataclass(frozen=True, slots=True)
class Alternatives:
    """``a || b``: a fallback when read (the first that exists), alternative
    outcomes when written (exactly one is written, docs/language.md)."""

    options: tuple[Reference | Conjunction, ...]
    span: Span = field(default=_NO_SPAN, compare=False, repr=False)

    def __str__(self) -> str:
        return " || ".join(str(option) for option in self.options)

    @property
    def references(self) -> tuple[Reference, ...]:
        return tuple(ref for option in self.options for ref in option.references)


Expression = Union[Reference, Conjunction, Alternatives]  # noqa: UP007


@dataclass(frozen=True, slots=True)
class Escaped:
    """A string that began with ``††``: an escaped literal.

    ``text`` is what follows the ``††``; the literal value is ``"†" + text``,
    which is also ``str(node)`` (``"††x"`` means the text ``"†x"``).
    """

    text: str

    def __str__(self) -> str:
        return "†" + self.text


def ref(kind: str, *path: str | int | EllipsisType) -> str:
    """The text of the reference to ``path`` inside document ``kind``.

    A ``str`` is a key (quoted when it is not a plain name), an ``int`` an index
    (negative counts from the end), ``...`` the wildcard ``[*]``.  Raises
    ``ValueError`` for a kind that is not a plain name, or a segment of another type.
    The inverse is :attr:`Reference.path` of the parsed text (docs/language.md).

    >>> ref("state", "c0", 0, "id_"), ref("input", "City Hub", -1, ...)
    ('†state.c0[0].id_', '†input["City Hub"][-1][*]')
    """
    if not isinstance(kind, str) or not _NAME.fullmatch(kind):
        raise ValueError(f"a reference kind is a plain name such as 'state', got {kind!r}")
    segments: list[Segment] = []
    for part in path:
        if isinstance(part, bool) or (not isinstance(part, (str, int)) and part is not ...):
            raise ValueError(
                f"a path segment is a key (str), an index (int) or ... for [*], got {part!r}"
            )
        if part is ...:
            segments.append(Wildcard())
        elif isinstance(part, int):
            segments.append(Index(part))
        else:
            segments.append(Field(part))
    return str(Reference(kind, tuple(segments)))
