"""The LALR parser of ``reference.lark`` (lark), for the expressions that the plain
fast path of :mod:`obelisk.grammar.parser` declines and for every error.  Plans of
plain references never load it, nor lark (docs/performance.md, "Cold start").
"""

from __future__ import annotations

import functools
import json
import re
import sys
from importlib import resources
from typing import Any

from lark import Lark, Token, Transformer

from obelisk.grammar.nodes import (
    Alternatives,
    Conjunction,
    Escaped,
    Expression,
    Field,
    Index,
    Reference,
    Wildcard,
)

__all__ = ["QuotedKeyError", "lalr_parser"]


def _span(token: Token) -> tuple[int, int]:
    return (token.start_pos or 0, token.end_pos or 0)


_JSON_ESCAPES = frozenset('"\\/bfnrtu')


def _unquote(token: Token) -> str:
    """Decode a quoted key; JSON escapes, plus ``\\'`` inside single quotes.

    Raises ``QuotedKeyError`` with the offset (inside the token) of a bad escape
    or a raw control character.
    """
    text = str(token)
    quote = text[0]
    body: list[str] = ['"']
    position = 1
    while position < len(text) - 1:
        ch = text[position]
        if ch == "\\":
            nxt = text[position + 1]
            hex_digits = text[position + 2 : position + 6]
            if nxt == quote == "'":
                body.append("'")
            elif nxt not in _JSON_ESCAPES or (
                nxt == "u" and not re.fullmatch(r"[0-9A-Fa-f]{4}", hex_digits)
            ):
                raise QuotedKeyError(token, position, "invalid escape in quoted key")
            else:
                body.append(ch + nxt)
            position += 2
            continue
        if ch < " ":
            raise QuotedKeyError(
                token, position, "a quoted key cannot hold a raw control character; escape it"
            )
        body.append('\\"' if ch == '"' else ch)
        position += 1
    body.append('"')
    value = json.loads("".join(body))
    assert isinstance(value, str)
    return value


class QuotedKeyError(Exception):
    def __init__(self, token: Token, offset: int, reason: str) -> None:
        self.token = token
        self.offset = offset
        self.reason = reason


class _Build(Transformer[Token, Any]):
    """Builds nodes while the LALR parser reduces (no intermediate tree)."""

    def escaped(self, children: list[Token]) -> Escaped:
        return Escaped(str(children[1]) if len(children) > 1 else "")

    def start(self, children: list[Expression]) -> Expression:
        return children[0]

    def or_expr(self, children: list[Any]) -> Alternatives:
        options = tuple(child for child in children if not isinstance(child, Token))
        return Alternatives(options, (options[0].span[0], options[-1].span[1]))

    def and_expr(self, children: list[Any]) -> Conjunction:
        parts = tuple(child for child in children if not isinstance(child, Token))
        return Conjunction(parts, (parts[0].span[0], parts[-1].span[1]))

    def ref(self, children: list[Any]) -> Reference:
        dagger, kind, *segments = children
        end = segments[-1].span[1] if segments else _span(kind)[1]
        return Reference(str(kind), tuple(segments), (_span(dagger)[0], end))

    def field(self, children: list[Token]) -> Field:
        return Field(str(children[1]), (_span(children[0])[0], _span(children[1])[1]))

    def index(self, children: list[Token]) -> Index:
        number = children[1]
        try:
            value = int(number)
        except ValueError:  # more digits than Python converts (sys.get_int_max_str_digits)
            reason = (
                f"a list index of {len(number.lstrip('-'))} digits is too long: Python "
                f"converts at most {sys.get_int_max_str_digits()} digits to text"
            )
            raise QuotedKeyError(number, 0, reason) from None
        return Index(value, (_span(children[0])[0], _span(children[-1])[1]))

    def quoted_field(self, children: list[Token]) -> Field:
        return Field(_unquote(children[1]), (_span(children[0])[0], _span(children[2])[1]))

    def wildcard(self, children: list[Token]) -> Wildcard:
        return Wildcard((_span(children[0])[0], _span(children[2])[1]))


@functools.cache
def lalr_parser() -> Lark:
    """The LALR parser of ``reference.lark``, built once; it builds the nodes itself."""
    grammar = resources.files("obelisk.grammar").joinpath("reference.lark").read_text("utf-8")
    return Lark(grammar, parser="lalr", lexer="contextual", transformer=_Build())
