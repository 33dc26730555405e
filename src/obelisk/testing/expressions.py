"""Hypothesis strategies of expression texts (docs/testing.md, docs/language.md).

:func:`references` and :func:`expressions` draw valid texts in every spelling the
grammar allows; :func:`spellings` rewrites one text in those spellings.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from typing import Any

from hypothesis import strategies as st

from obelisk.errors import UsageError
from obelisk.grammar import (
    Alternatives,
    Conjunction,
    Expression,
    Field,
    Index,
    Reference,
    Segment,
    Wildcard,
    parse_expression,
)

__all__ = ["expressions", "references", "spellings"]

_NAME = re.compile(r"[^\W\d][\w\-]*")
_KINDS = ("state", "input", "data", "search-results", "doc_2")

_name_head = st.one_of(
    st.sampled_from("abcxyzABC_"),
    st.characters(categories=("Lu", "Ll", "Lt", "Lm", "Lo", "Nl", "No"), codec="utf-8"),
)
_name_tail = st.one_of(
    st.sampled_from("abz_-019"),
    st.characters(categories=("Lu", "Ll", "Lt", "Lm", "Lo", "Nd", "Nl", "No"), codec="utf-8"),
)
_names = st.one_of(
    st.sampled_from(["a", "user", "items", "x_1", "first-name", "é", "ñandú", "_", "a-", "²"]),
    st.builds(
        lambda head, tail: head + "".join(tail), _name_head, st.lists(_name_tail, max_size=6)
    ),
).filter(_NAME.fullmatch)
_keys = st.one_of(
    _names,
    st.text(
        alphabet=st.one_of(
            st.sampled_from(list(" \"'\\.[]*|&†\t\n\r-_09")), st.characters(codec="utf-8")
        ),
        max_size=10,
    ),
)


def _segment_nodes(*, wildcards: bool, quoted: bool) -> st.SearchStrategy[Segment]:
    options: list[st.SearchStrategy[Segment]] = [
        (_keys if quoted else _names).map(Field),
        st.one_of(st.integers(-3, 12), st.integers(-(10**12), 10**12)).map(Index),
    ]
    if wildcards:
        options.append(st.just(Wildcard()))
    return st.one_of(*options)


def _kind_names(kinds: Sequence[str] | None) -> st.SearchStrategy[str]:
    if kinds is None:
        return st.one_of(st.sampled_from(_KINDS), _names)
    for kind in kinds:
        if not isinstance(kind, str) or not _NAME.fullmatch(kind):
            raise UsageError(f"a document kind must be a name such as 'state', not {kind!r}")
    if not kinds:
        raise UsageError("kinds must name at least one document kind")
    return st.sampled_from(list(kinds))


def _base_references(paths: Iterable[str]) -> list[Reference]:
    found = []
    for text in paths:
        node = parse_expression(text)
        if not isinstance(node, Reference):
            raise UsageError(f"paths must be plain references such as '†state.user', not {text!r}")
        found.append(node)
    if not found:
        raise UsageError("paths must hold at least one reference")
    return found


def _reference_nodes(
    kinds: Sequence[str] | None,
    paths: Iterable[str] | None,
    wildcards: bool,
    quoted: bool,
    max_segments: int,
) -> st.SearchStrategy[Reference]:
    segment = _segment_nodes(wildcards=wildcards, quoted=quoted)
    if paths is not None:
        bases = _base_references(paths)
        return st.builds(
            lambda base, more: Reference(base.kind, base.segments + tuple(more)),
            st.sampled_from(bases),
            st.lists(segment, max_size=max_segments).map(tuple) if max_segments else st.just(()),
        )
    return st.builds(
        Reference, _kind_names(kinds), st.lists(segment, max_size=max_segments).map(tuple)
    )


def _expression_nodes(
    refs: st.SearchStrategy[Reference], max_parts: int
) -> st.SearchStrategy[Expression]:
    if max_parts < 2:
        return refs
    conjunctions = st.lists(refs, min_size=2, max_size=max_parts).map(
        lambda parts: Conjunction(tuple(parts))
    )
    alternatives = st.lists(st.one_of(refs, conjunctions), min_size=2, max_size=max_parts).map(
        lambda options: Alternatives(tuple(options))
    )
    return st.one_of(refs, conjunctions, alternatives)


def _single_quoted(name: str, ensure_ascii: bool, raw_double_quotes: bool) -> str:
    body = json.dumps(name, ensure_ascii=ensure_ascii)[1:-1]
    if raw_double_quotes:
        body = body.replace('\\"', '"')
    return "['" + body.replace("'", "\\'") + "']"


@st.composite
def _spell_segment(draw: st.DrawFn, segment: Segment, plain: bool) -> str:
    if isinstance(segment, Wildcard):
        return "[*]"
    if isinstance(segment, Index):
        return draw(st.sampled_from([f".{segment.index}", f"[{segment.index}]"]))
    name = segment.name
    choices = []
    if _NAME.fullmatch(name):
        choices.append("." + name)
    if not plain or not choices:
        ascii_ = draw(st.booleans())
        choices.append("[" + json.dumps(name, ensure_ascii=ascii_) + "]")
        choices.append(_single_quoted(name, ascii_, draw(st.booleans())))
    return draw(st.sampled_from(choices))


_space = st.sampled_from(["", "", " ", "\t", "  ", " \t"])


@st.composite
def _spell(draw: st.DrawFn, node: Expression, plain: bool) -> str:
    if isinstance(node, Reference):
        return "†" + node.kind + "".join(draw(_spell_segment(s, plain)) for s in node.segments)
    parts: tuple[Any, ...]
    if isinstance(node, Conjunction):
        parts, operator = node.parts, "&&"
    else:
        parts, operator = node.options, "||"
    text = draw(_spell(parts[0], plain))
    for part in parts[1:]:
        text += draw(_space) + operator + draw(_space) + draw(_spell(part, plain))
    return text


def spellings(expression: str | Expression, *, plain: bool = False) -> st.SearchStrategy[str]:
    """Every text that parses to the same expression as ``expression``.

    ``.2`` or ``[2]``; ``.name``, ``["name"]`` or ``['name']`` with or without
    ``\\u`` escapes; spaces and tabs around ``||`` and ``&&`` (docs/language.md).
    ``plain=True`` keeps to dotted names where the name allows one.  Raises
    :class:`~obelisk.errors.ReferenceSyntaxError` for a text that does not parse.
    """
    node = parse_expression(expression) if isinstance(expression, str) else expression
    if not isinstance(node, (Reference, Conjunction, Alternatives)):
        raise UsageError(f"{expression!r} is an escaped literal, not an expression")
    return _spell(node, plain)


def references(
    *,
    kinds: Sequence[str] | None = None,
    paths: Iterable[str] | None = None,
    wildcards: bool = True,
    quoted: bool = True,
    max_segments: int = 4,
) -> st.SearchStrategy[str]:
    """Texts of single references such as ``†state.items[0]["a b"]`` (docs/language.md).

    ``kinds``: the document kinds to draw (default: ``state``, ``input``, data
    kinds and random names).  ``paths``: references to start from (``["†state.user",
    "†input.id"]``); up to ``max_segments`` more segments are added to them
    (``max_segments=0``: exactly these paths).  ``wildcards``: allow ``[*]``
    (input position only).  ``quoted``: allow keys that are not names, quoted.
    Every text parses with :func:`obelisk.parse_expression`.
    """
    nodes = _reference_nodes(kinds, paths, wildcards, quoted, max_segments)
    return nodes.flatmap(lambda node: _spell(node, not quoted))


def expressions(
    *,
    kinds: Sequence[str] | None = None,
    paths: Iterable[str] | None = None,
    wildcards: bool = True,
    quoted: bool = True,
    max_segments: int = 4,
    max_parts: int = 3,
) -> st.SearchStrategy[str]:
    """Texts of expressions: a reference, a ``&&`` gate or fan-out, or ``||``
    alternatives of references and gates, with up to ``max_parts`` parts each.

    Arguments as for :func:`references`; ``wildcards=False`` gives texts valid in
    output position too.  Every text parses with :func:`obelisk.parse_expression`.
    """
    refs = _reference_nodes(kinds, paths, wildcards, quoted, max_segments)
    return _expression_nodes(refs, max_parts).flatmap(lambda node: _spell(node, not quoted))
