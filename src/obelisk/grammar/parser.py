"""Parse expression strings into nodes (docs/language.md).

One LALR parser, built once from ``reference.lark`` and cached
(:mod:`obelisk.grammar.lalr`, loaded with lark when first needed), turns an
expression string into the nodes of :mod:`obelisk.grammar.nodes`, with spans.

Plain references (``†kind`` followed by ``.name``, ``.2`` or ``[2]`` segments) are
by far the most common expressions in real plans; they are recognised by one
regular expression that builds exactly the nodes the LALR parser would (a
property test holds the two to agreement).  Everything else, and every error,
goes through lark.  Results are memoised per string, in a cache bounded in entries
and bytes (docs/limits.md, "Caches"): a literal too long to keep is parsed again.
"""

from __future__ import annotations

import contextlib
import json
import re
import sys
from typing import TYPE_CHECKING

from obelisk.caches import BoundedCache
from obelisk.errors import ReferenceSyntaxError
from obelisk.grammar.nodes import (
    ANY_INDEX,
    Alternatives,
    Conjunction,
    Escaped,
    Expression,
    Reference,
    Segment,
    Span,
    new_field,
    new_index,
)

if TYPE_CHECKING:
    from lark import Lark
    from lark.exceptions import UnexpectedInput

__all__ = ["DAGGER", "EXPRESSION_CACHE", "is_expression", "parse_expression", "parse_reference"]

DAGGER = "†"

_NAME = r"[^\W\d][\w\-]*"
_INT = r"-?(?:0|[1-9][0-9]*)"
_PLAIN = re.compile(rf"†({_NAME})((?:\.{_NAME}|\.{_INT}|\[{_INT}\])*)")
_PLAIN_SEGMENT = re.compile(rf"\.({_NAME})|\.({_INT})|\[({_INT})\]")
_DOTTED = re.compile(rf"†{_NAME}(?:\.(?:{_NAME}|{_INT})|\[{_INT}\])*")
_OPERATOR = re.compile(r"[ \t]*(\|\||&&)[ \t]*")
_PLAIN_REF_TEXT = rf"†{_NAME}(?:\.{_NAME}|\.{_INT}|\[{_INT}\])*"
_PLAIN_EXPRESSION = re.compile(rf"{_PLAIN_REF_TEXT}(?:[ \t]*(?:\|\||&&)[ \t]*{_PLAIN_REF_TEXT})*")


def is_expression(value: object) -> bool:
    """True when ``value`` is a string that must be parsed as an expression.

    That is every string that starts with ``†`` (docs/language.md), including the
    ``††`` escape, which parses to :class:`~obelisk.grammar.nodes.Escaped`.
    """
    return isinstance(value, str) and value.startswith(DAGGER)


def _lark() -> Lark:
    """The LALR parser (:mod:`obelisk.grammar.lalr`), loaded with lark when first needed."""
    from obelisk.grammar.lalr import lalr_parser

    return lalr_parser()


# What each terminal is called in error messages.
_TERMINAL_WORDS = {
    "NAME": "a name",
    "INT": "an integer",
    "QUOTED": "a quoted key",
    "STAR": "'*'",
    "DOT": "'.'",
    "LBRACKET": "'['",
    "RBRACKET": "']'",
    "OR": "'||'",
    "AND": "'&&'",
    "DAGGER": "'†'",
    "DOUBLE_DAGGER": "'††'",
    "ESCAPED_TEXT": "text",
    "$END": "the end of the expression",
}
_ORDER = list(_TERMINAL_WORDS)
# Tokens reported whole when unexpected; anything else is shown as one character.
_WHOLE_TOKENS = frozenset({"NAME", "INT", "QUOTED", "OR", "AND", "DOUBLE_DAGGER"})

# Known mistakes: (pattern matched at the error position, message).  Checked
# before the generic "expected ..." message, like lark's ``match_examples``.
# Patterns may look behind the error position.
_KNOWN_MISTAKES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"[ \t]*\|(?!\|)"), "found '|'; use '||' for alternatives"),
    (re.compile(r"[ \t]*&(?!&)"), "found '&'; use '&&' to join references"),
    (re.compile(r"(?<=\.)\*"), "a wildcard is written '[*]', not '.*'"),
    (re.compile(r"(?<=\[)\]"), "empty brackets: write an index, a quoted key or '*' inside"),
    (re.compile(r"(?<=\[)[\"'](?:[^\"'\\]|\\.)*$"), "unterminated quoted key"),
    (re.compile(r"[ \t]+\Z"), "trailing whitespace after the expression"),
    (re.compile(r"[ \t]+"), "whitespace is allowed only around '||' and '&&'"),
)


_DIGIT_NAME = re.compile(r"\.-?[0-9]+")
_NAME_TAIL = re.compile(r"[\w\-]+")


def _describe_found(text: str, pos: int) -> str:
    if pos >= len(text):
        return "the end of the expression"
    return repr(text[pos])


def _after(text: str, pos: int) -> str:
    before = text[:pos].rstrip(" \t")
    for token in ("||", "&&", "††", "†", ".", "["):
        if before.endswith(token):
            return f" after '{token}'"
    return ""


def _fail(text: str, exc: UnexpectedInput) -> ReferenceSyntaxError:
    """The :class:`ReferenceSyntaxError` of lark's ``exc`` for ``text``: a digit-led
    name, a known mistake, or what was expected and what was found there."""
    pos = _error_position(text, exc)
    expected = _expected(text, exc, pos)
    found = _digit_name(text, pos, expected) or _known_mistake(text, pos, expected)
    if found is not None:
        return found
    end, shown = _found(text, exc, pos)
    reason = f"expected {_wanted(expected)}{_after(text, pos)}, found {shown}"
    return ReferenceSyntaxError(text, (pos, end), reason, expected)


def _error_position(text: str, exc: UnexpectedInput) -> int:
    """Where the error is: lark's position, the end of ``text`` at its end."""
    # lark declares pos_in_stream as None (a class default), so read it untyped
    found: int | None = getattr(exc, "pos_in_stream", None)
    pos = found if found is not None else len(text)
    from lark.exceptions import UnexpectedToken

    if isinstance(exc, UnexpectedToken) and exc.token.type == "$END":
        pos = len(text)
    return pos


def _expected(text: str, exc: UnexpectedInput, pos: int) -> list[str]:
    """What could come at ``pos``, in words, in the order of :data:`_ORDER`."""
    from lark.exceptions import UnexpectedCharacters, UnexpectedToken

    if isinstance(exc, UnexpectedCharacters):
        expected_terms = set(exc.allowed or ())
    elif isinstance(exc, UnexpectedToken):
        expected_terms = set(exc.expected or ())
    else:  # pragma: no cover - UnexpectedEOF is not raised by the LALR front end
        expected_terms = set()
    if pos == 1 and text.startswith(DAGGER) and "NAME" in expected_terms:
        return ["a kind such as 'state' or 'input'"]
    return [_TERMINAL_WORDS[t] for t in _ORDER if t in expected_terms]


def _digit_name(text: str, pos: int, expected: list[str]) -> ReferenceSyntaxError | None:
    """The error of a name that starts with a digit (``.2fa``), which must be quoted."""
    digits = _DIGIT_NAME.search(text, 0, pos)
    if digits is None or digits.end() != pos:
        return None
    tail = _NAME_TAIL.match(text, pos)
    if tail is None:
        return None
    start, stop = digits.start() + 1, tail.end()
    name = text[start:stop]
    reason = f"a name cannot start with a digit; quote it: [{json.dumps(name)}]"
    return ReferenceSyntaxError(text, (start, stop), reason, expected)


def _known_mistake(text: str, pos: int, expected: list[str]) -> ReferenceSyntaxError | None:
    """The error of one of :data:`_KNOWN_MISTAKES` at ``pos``, its own message."""
    for pattern, message in _KNOWN_MISTAKES:
        match = pattern.match(text, pos)
        if match:
            start = pos + len(match.group(0)) - len(match.group(0).lstrip(" \t"))
            if start == match.end():  # the mistake is only whitespace
                start = pos
            return ReferenceSyntaxError(text, (start, match.end()), message, expected)
    return None


def _found(text: str, exc: UnexpectedInput, pos: int) -> tuple[int, str]:
    """``(end of the span, what was found)``: a whole token for the tokens of
    :data:`_WHOLE_TOKENS`, else the character at ``pos`` (or the end)."""
    end = pos + 1 if pos < len(text) else pos
    from lark.exceptions import UnexpectedToken

    if isinstance(exc, UnexpectedToken) and exc.token.type in _WHOLE_TOKENS:
        return max(end, exc.token.end_pos or end), repr(str(exc.token))
    return end, _describe_found(text, pos)


def _wanted(expected: list[str]) -> str:
    """``expected`` as words: ``a, b or c``."""
    if len(expected) > 1:
        return ", ".join(expected[:-1]) + " or " + expected[-1]
    return expected[0] if expected else "a valid expression"


def _plain_reference(match: re.Match[str]) -> Reference:
    start, end = match.span()
    kind = match.group(1)
    path = match.group(2)
    if not path:
        return Reference(kind, (), (start, end))
    segments: list[Segment] = []
    offset = match.start(2)
    if "[" not in path:  # only ".name" / ".2" segments: split instead of a second regex
        for part in path[1:].split("."):
            span = (offset, offset + len(part) + 1)
            first = part[0]
            if first == "-" or "0" <= first <= "9":
                segments.append(new_index(int(part), span))
            else:
                segments.append(new_field(part, span))
            offset = span[1]
        return Reference(kind, tuple(segments), (start, end))
    for seg in _PLAIN_SEGMENT.finditer(path):
        span = (offset + seg.start(), offset + seg.end())
        name, dotted, bracketed = seg.groups()
        if name is not None:
            segments.append(new_field(name, span))
        else:
            segments.append(new_index(int(dotted if dotted is not None else bracketed), span))
    return Reference(kind, tuple(segments), (start, end))


def _conjunction(parts: list[Reference]) -> Reference | Conjunction:
    if len(parts) == 1:
        return parts[0]
    return Conjunction(tuple(parts), (parts[0].span[0], parts[-1].span[1]))


_KINDS: dict[str, str] = {}
"""One string per document kind (``"state"``, ``"input"``...): every reference parsed
by :func:`_parse_dotted` shares it (a plan's references name a handful of kinds)."""
_MAX_KINDS = 256  # emptied when full: a stream of distinct kinds grows it no further
_SPANS: dict[int, Span] = {}
"""Spans whose ends are below 128, shared by every reference and segment parsed by
:func:`_parse_dotted` (at most 8,256 of them): a tuple of two ints costs 56 bytes,
and each reference of a large plan has two."""


def _kind(kind: str) -> str:
    """The shared copy of document kind ``kind`` (kept when short)."""
    found = _KINDS.get(kind)
    if found is None:
        if len(kind) > 64:  # a long kind is not kept alive
            return kind
        if len(_KINDS) >= _MAX_KINDS:
            _KINDS.clear()
        found = _KINDS[kind] = kind
    return found


def _span(start: int, end: int) -> Span:
    """``(start, end)``, shared when ``end`` is below 128."""
    if end >= 128:
        return (start, end)
    number = end << 7 | start
    found = _SPANS.get(number)
    if found is None:
        found = _SPANS[number] = (start, end)
    return found


_SEGMENTS: dict[tuple[str, int], tuple[Segment, object, bool]] = {}
"""``(segment, its part of the key, written canonically)`` by ``(piece of the text,
offset)``: a segment of :func:`_parse_dotted` with its span, shared by every reference
that has it there (``.items[0].id`` after ``†state.r1`` and ``†state.r2``), its name
too.  Bounded like :data:`_KINDS`."""
_MAX_SEGMENTS = 4096
_MAX_SHARED_PIECE = 64  # characters: a longer piece gets a segment of its own


def _segment(part: str, offset: int) -> tuple[Segment, object, bool]:
    """The segment of ``part`` (``[2]``, ``2`` or ``name``, as split from the text) at
    ``offset``, its part of the key, and whether ``str()`` writes it back as it is."""
    first = part[0]
    found: tuple[Segment, object, bool]
    if first == "[":  # "[2]": no dot before it in the text
        digits = part[1:-1]
        index = int(digits)
        made: Segment = new_index(index, _span(offset, offset + len(part)))
        found = (made, index if index >= 0 else ANY_INDEX, digits != "-0")  # "[-0]": "[0]"
    elif first == "-" or "0" <= first <= "9":
        index = int(part)
        made = new_index(index, _span(offset, offset + 1 + len(part)))
        found = (made, index if index >= 0 else ANY_INDEX, False)
    else:
        made = new_field(part, _span(offset, offset + 1 + len(part)))
        found = (made, part, True)
    if len(part) <= _MAX_SHARED_PIECE:
        if len(_SEGMENTS) >= _MAX_SEGMENTS:
            _SEGMENTS.clear()
        _SEGMENTS[(part, offset)] = found
    return found


def _parse_dotted(text: str) -> Reference:
    """``†kind.a.2.b[0]`` (already matched by ``_DOTTED``) without a second regex.

    The reference's key is made on the way, and ``text`` is its canonical text when
    it has no dotted index and no ``[-0]`` (a dotted name matches ``_NAME``, which
    ``Field`` writes as ``.name``; an index is written ``[2]``), so neither is
    computed again.  Its kind, spans and segments are shared with the references
    parsed before that have them (:data:`_KINDS`, :data:`_SPANS`, :data:`_SEGMENTS`)."""
    # "a[0]" splits as "a.[0]": a piece that starts with "[" is an index
    kind, *parts = (text[1:].replace("[", ".[") if "[" in text else text[1:]).split(".")
    kind = _KINDS.get(kind) or _kind(kind)
    segments: list[Segment] = []
    key: list[object] = [kind]
    canonical = True
    offset = len(kind) + 1
    known = _SEGMENTS.get
    for part in parts:
        segment, key_part, written = known((part, offset)) or _segment(part, offset)
        segments.append(segment)
        key.append(key_part)
        canonical = canonical and written
        offset = segment.span[1]
    return Reference.parsed(
        kind, tuple(segments), _span(0, len(text)), text if canonical else None, tuple(key)
    )


def _parse_plain(text: str) -> Expression | None:
    """Fast path: plain references joined by ``||``/``&&``; None for anything else."""
    if _DOTTED.fullmatch(text) is not None:  # the commonest form: one plain reference
        return _parse_dotted(text)
    if _PLAIN_EXPRESSION.fullmatch(text) is None:
        return None
    options: list[Reference | Conjunction] = []
    parts: list[Reference] = []
    pos = 0
    while True:
        match = _PLAIN.match(text, pos)
        assert match is not None
        parts.append(_plain_reference(match))
        pos = match.end()
        if pos == len(text):
            break
        operator = _OPERATOR.match(text, pos)
        assert operator is not None
        pos = operator.end()
        if operator.group(1) == "||":
            options.append(_conjunction(parts))
            parts = []
    options.append(_conjunction(parts))
    if len(options) == 1:
        return options[0]
    return Alternatives(tuple(options), (0, len(text)))


EXPRESSION_CACHE: BoundedCache[str, Expression | Escaped] = BoundedCache(
    max_entries=65536, max_bytes=32 << 20, max_item_bytes=64 << 10
)
"""Parsed expressions by text: 65,536 at most, 32 MiB by :func:`_cost`; an expression
costing over 64 KiB (about 16,000 characters with a ``†``) is parsed each time, not kept."""


def _cost(text: str) -> int:
    """About the bytes an entry keeps: the text, a node holding at most a copy of it
    (an escaped literal), and the node's objects."""
    return 2 * sys.getsizeof(text) + 256


def parse_expression(text: str) -> Expression | Escaped:
    """Parse one expression string (it must start with ``†``).

    Returns a :class:`Reference`, :class:`Conjunction` or :class:`Alternatives`,
    or :class:`Escaped` for a ``††`` literal.  Raises
    :class:`~obelisk.errors.ReferenceSyntaxError` (with the span of the bad
    characters and what was expected there) when the text does not parse.

    >>> parse_expression("†state.receipt || †state.error")
    Alternatives(options=(Reference(kind='state', segments=(Field(name='receipt'),)), \
Reference(kind='state', segments=(Field(name='error'),))))
    """
    found = EXPRESSION_CACHE.get(text)
    if found is not None:
        return found
    node = _parse_expression(text)
    EXPRESSION_CACHE.put(text, node, _cost(text))
    return node


# A function mypyc compiled (benchmarks/compiled.py) takes no attribute: there, use
# EXPRESSION_CACHE.clear().
with contextlib.suppress(AttributeError):
    parse_expression.cache_clear = EXPRESSION_CACHE.clear  # type: ignore[attr-defined]


def _parse_expression(text: str) -> Expression | Escaped:
    try:
        plain = _parse_plain(text)
    except ValueError:  # an index too long for int(): the full parser says where
        plain = None
    if plain is not None:
        return plain
    if not text.startswith(DAGGER):
        raise ReferenceSyntaxError(text, (0, 1 if text else 0), "an expression must start with '†'")
    from lark.exceptions import UnexpectedInput

    from obelisk.grammar.lalr import QuotedKeyError

    try:
        result: Expression | Escaped = _lark().parse(text)  # type: ignore[assignment]
    except UnexpectedInput as exc:
        raise _fail(text, exc) from None
    except QuotedKeyError as exc:
        start = (exc.token.start_pos or 0) + exc.offset
        raise ReferenceSyntaxError(
            text, (start, start + 1), exc.reason, ["a valid JSON escape"]
        ) from None
    return result


def parse_reference(text: str) -> Reference:
    """Parse a string that must be a single reference (no ``||``, ``&&`` or ``††``).

    Raises :class:`~obelisk.errors.ReferenceSyntaxError` otherwise.
    """
    node = parse_expression(text)
    if not isinstance(node, Reference):
        raise ReferenceSyntaxError(text, (0, len(text)), "expected a single reference")
    return node
