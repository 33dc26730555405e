"""Properties of the reference language (docs/language.md).

* nodes round-trip through their canonical text, and every spelling the
  grammar allows parses back to the same node;
* spans point at the text of each node;
* the regex fast path builds exactly what the LALR parser builds, spans included;
* near-miss texts either parse or raise ReferenceSyntaxError with a span inside
  the text -- nothing else escapes.
"""

from __future__ import annotations

import strategies
from hypothesis import example, given
from hypothesis import strategies as st

from obelisk.errors import ReferenceSyntaxError
from obelisk.grammar import (
    Alternatives,
    Conjunction,
    Escaped,
    Expression,
    Field,
    Index,
    Reference,
    parse_expression,
)
from obelisk.grammar.parser import _lark, _parse_plain


def all_spans(node: Expression) -> list[tuple[int, int]]:
    """Spans of the node, its options/parts, references and segments, in order."""
    spans = [node.span]
    options = node.options if isinstance(node, Alternatives) else (node,)
    for option in options:
        if option is not node:
            spans.append(option.span)
        parts = option.parts if isinstance(option, Conjunction) else (option,)
        for part in parts:
            if part is not option:
                spans.append(part.span)
            spans.extend(segment.span for segment in part.segments)
    return spans


@given(strategies.expressions())
def test_canonical_text_round_trips(node: Expression) -> None:
    text = str(node)
    parsed = parse_expression(text)
    assert parsed == node
    assert str(parsed) == text


@given(strategies.expressions().flatmap(lambda n: st.tuples(st.just(n), strategies.spellings(n))))
@example(
    (
        Alternatives((Reference("state", (Field("a b"),)), Reference("data", (Index(-1),)))),
        "†state['a b']\t||†data.-1",
    )
)
def test_every_spelling_parses_to_the_node(case: tuple[Expression, str]) -> None:
    node, text = case
    parsed = parse_expression(text)
    assert parsed == node
    assert str(parsed) == str(node)


@given(strategies.expression_texts)
def test_spans_point_at_the_text_of_each_node(text: str) -> None:
    node = parse_expression(text)
    assert not isinstance(node, Escaped)
    assert node.span == (0, len(text))
    for reference in node.references:
        start, end = reference.span
        assert parse_expression(text[start:end]) == reference
        # segments are contiguous, from the end of the kind to the end of the reference
        position = start + 1 + len(reference.kind)
        for segment in reference.segments:
            assert segment.span[0] == position
            position = segment.span[1]
            alone = parse_expression("†k" + text[segment.span[0] : segment.span[1]])
            assert isinstance(alone, Reference)
            assert alone.segments == (segment,)
        assert position == end
    if isinstance(node, Alternatives):
        for option in node.options:
            start, end = option.span
            assert parse_expression(text[start:end]) == option


_fast_path_candidates = st.one_of(
    strategies.plain_expressions().flatmap(lambda n: strategies.spellings(n, plain=True)),
    strategies.expression_texts,
    strategies.near_misses(
        strategies.plain_expressions().flatmap(lambda n: strategies.spellings(n, plain=True))
    ),
    strategies.near_misses(),
)


@given(_fast_path_candidates)
@example("†state.a-1.-1[0] ||\t†x && †y.b")
@example("†state.²")
@example("†state.r12.items[0].id")
@example("†state[0][-1].a.-0")
@example("†state.a[-0]")
def test_fast_path_agrees_with_lark(text: str) -> None:
    plain = _parse_plain(text)
    if plain is None:
        return
    slow = _lark().parse(text)
    assert plain == slow
    assert plain.span == slow.span
    assert [r.span for r in plain.references] == [r.span for r in slow.references]
    assert all_spans(plain) == all_spans(slow)
    # the fast path may hand over each reference's text and key: they are lark's
    assert [(str(r), r.key) for r in plain.references] == [(str(r), r.key) for r in slow.references]
    assert parse_expression(text) == slow


@given(strategies.plain_expressions().flatmap(lambda n: strategies.spellings(n, plain=True)))
def test_plain_spellings_take_the_fast_path(text: str) -> None:
    # keeps the agreement property above from passing vacuously
    assert _parse_plain(text) is not None


@given(strategies.near_misses())
def test_near_misses_parse_or_raise_a_located_syntax_error(text: str) -> None:
    try:
        node = parse_expression(text)
    except ReferenceSyntaxError as error:
        start, end = error.span
        assert 0 <= start <= end <= len(text)
        assert error.expression == text
        assert error.reason
        assert error.caret.split("\n")[1].strip(" ").startswith("^")
        return
    if isinstance(node, Escaped):
        assert text.startswith("††")
        assert str(node) == text[1:]
    else:
        assert parse_expression(str(node)) == node


@given(st.sampled_from(['"', "'"]).flatmap(strategies.quoted_keys_with_a_bad_escape))
@example(("†k['\\q']", 4))
@example(("†k['a\"\\q']", 6))
def test_invalid_escape_span_is_the_backslash(case: tuple[str, int]) -> None:
    text, backslash = case
    try:
        parse_expression(text)
    except ReferenceSyntaxError as error:
        assert error.reason == "invalid escape in quoted key"
        assert error.span == (backslash, backslash + 1)
    else:
        raise AssertionError(f"{text!r} parsed, but '\\q' is not a valid escape")
