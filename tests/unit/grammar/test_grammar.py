"""Unit tests for obelisk.grammar: nodes, parser, error messages, jsonpath compilation.

Expected values are derived from docs/language.md and the grammar in
``src/obelisk/grammar/reference.lark``; spans are ``(start, end)`` character
offsets, end exclusive, counted by hand in the comments.
"""

from __future__ import annotations

import dataclasses
import sys

import pytest

from obelisk.errors import ObeliskError, ReferenceSyntaxError
from obelisk.grammar import (
    DAGGER,
    Alternatives,
    Conjunction,
    Escaped,
    Field,
    Index,
    Reference,
    Wildcard,
    is_expression,
    parse_expression,
    parse_reference,
    to_jsonpath,
)
from obelisk.grammar.parser import _lark, _parse_plain


def ref(kind: str, *segments: str | int | Wildcard) -> Reference:
    """Reference shorthand: str -> Field, int -> Index, a Wildcard stays."""
    built: list[Field | Index | Wildcard] = []
    for segment in segments:
        if isinstance(segment, Wildcard):
            built.append(segment)
        elif isinstance(segment, int):
            built.append(Index(segment))
        else:
            built.append(Field(segment))
    return Reference(kind, tuple(built))


# ---------------------------------------------------------------------------
# Segment forms


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("†state", ref("state")),
        ("†input", ref("input")),
        ("†state.name", ref("state", "name")),
        ("†state.2", ref("state", 2)),
        ("†state.-1", ref("state", -1)),
        ("†state[3]", ref("state", 3)),
        ("†state[-2]", ref("state", -2)),
        ("†state[0]", ref("state", 0)),
        ('†state["quoted key"]', ref("state", "quoted key")),
        ("†state['single \\'quoted\\'']", ref("state", "single 'quoted'")),
        ("†state['say \"hi\"']", ref("state", 'say "hi"')),
        ('†state["say \\"hi\\""]', ref("state", 'say "hi"')),
        ('†state["back\\\\slash"]', ref("state", "back\\slash")),
        ('†state["tab\\there"]', ref("state", "tab\there")),
        ('†state["\\u00e9"]', ref("state", "é")),
        ("†state['\\u00e9']", ref("state", "é")),
        ('†state[""]', ref("state", "")),
        ('†state["1"]', ref("state", "1")),
        ("†state[*]", ref("state", Wildcard())),
        ('†state["*"]', ref("state", "*")),  # a key named "*" is a Field, not a wildcard
        ("†state.first-name", ref("state", "first-name")),
        ("†state._private", ref("state", "_private")),
        ("†state.ñandú", ref("state", "ñandú")),
        ("†state.users[*].name", ref("state", "users", Wildcard(), "name")),
        (
            "†state.a.0[1]['b c'][*].-3",
            ref("state", "a", 0, 1, "b c", Wildcard(), -3),
        ),
        ("†data.x", ref("data", "x")),
        ("†search-results[0].title", ref("search-results", 0, "title")),
    ],
)
def test_segment_forms(text: str, expected: Reference) -> None:
    node = parse_expression(text)
    assert node == expected
    assert isinstance(node, Reference)
    assert node.kind == expected.kind
    assert [type(s) for s in node.segments] == [type(s) for s in expected.segments]


def test_state_alone_is_the_whole_document() -> None:
    node = parse_expression("†state")
    assert node == Reference("state", ())
    assert isinstance(node, Reference)
    assert node.segments == ()
    assert node.span == (0, 6)
    assert node.has_wildcard is False


def test_data_kinds_are_any_name() -> None:
    assert parse_expression("†data.x") == Reference("data", (Field("x"),))
    assert parse_reference("†webPage.body").kind == "webPage"
    assert parse_reference("†tool_result[1]").kind == "tool_result"


def test_has_wildcard_and_references() -> None:
    with_wildcard = parse_reference("†state.items[*].id")
    assert with_wildcard.has_wildcard is True
    assert with_wildcard.references == (with_wildcard,)
    assert parse_reference("†state.items[0].id").has_wildcard is False


# ---------------------------------------------------------------------------
# Operators


def test_and_binds_tighter_than_or() -> None:
    assert parse_expression("†a && †b || †c") == Alternatives(
        (Conjunction((ref("a"), ref("b"))), ref("c"))
    )
    assert parse_expression("†a || †b && †c") == Alternatives(
        (ref("a"), Conjunction((ref("b"), ref("c"))))
    )
    assert parse_expression("†a && †b && †c || †d || †e && †f") == Alternatives(
        (
            Conjunction((ref("a"), ref("b"), ref("c"))),
            ref("d"),
            Conjunction((ref("e"), ref("f"))),
        )
    )


def test_single_operator_kinds() -> None:
    assert parse_expression("†state.a || †state.b") == Alternatives(
        (ref("state", "a"), ref("state", "b"))
    )
    assert parse_expression("†state.a && †state.b") == Conjunction(
        (ref("state", "a"), ref("state", "b"))
    )
    assert type(parse_expression("†state.a && †state.b")) is Conjunction


@pytest.mark.parametrize(
    "text",
    [
        "†state.a||†state.b",
        "†state.a ||†state.b",
        "†state.a|| †state.b",
        "†state.a\t||\t†state.b",
        "†state.a  \t ||   †state.b",
    ],
)
def test_whitespace_allowed_around_operators(text: str) -> None:
    assert parse_expression(text) == Alternatives((ref("state", "a"), ref("state", "b")))


@pytest.mark.parametrize(
    ("text", "span"),
    [
        ("† state", (1, 2)),
        ("†state .a", (6, 7)),
        ("†state. a", (7, 8)),
        ("†state.a [0]", (8, 9)),
        ("†state.a[ 0]", (9, 10)),
        ("†state.a b", (8, 9)),
    ],
)
def test_whitespace_elsewhere_is_an_error(text: str, span: tuple[int, int]) -> None:
    with pytest.raises(ReferenceSyntaxError) as info:
        parse_expression(text)
    assert info.value.reason == "whitespace is allowed only around '||' and '&&'"
    assert info.value.span == span


# ---------------------------------------------------------------------------
# Escapes


@pytest.mark.parametrize(
    ("text", "escaped", "literal"),
    [
        ("††x", Escaped("x"), "†x"),
        ("††", Escaped(""), "†"),
        ("†††", Escaped("†"), "††"),
        ("††state.a || not parsed", Escaped("state.a || not parsed"), "†state.a || not parsed"),
        ("†† spaced \n text", Escaped(" spaced \n text"), "† spaced \n text"),
    ],
)
def test_double_dagger_is_an_escaped_literal(text: str, escaped: Escaped, literal: str) -> None:
    node = parse_expression(text)
    assert node == escaped
    assert isinstance(node, Escaped)
    assert str(node) == literal


def test_is_expression() -> None:
    assert is_expression("†state.x") is True
    assert is_expression("††x") is True
    assert is_expression("†") is True
    assert is_expression("state.x") is False
    assert is_expression("x †state") is False
    assert is_expression("") is False
    assert is_expression(None) is False
    assert is_expression(3) is False
    assert is_expression(["†state.x"]) is False
    assert is_expression(b"\xe2\x80\xa0state") is False
    assert DAGGER == "†"


def test_parse_reference_accepts_one_reference() -> None:
    assert parse_reference("†state.a[0]") == ref("state", "a", 0)


@pytest.mark.parametrize("text", ["†state.a || †state.b", "†state.a && †state.b", "††x"])
def test_parse_reference_rejects_everything_else(text: str) -> None:
    with pytest.raises(ReferenceSyntaxError) as info:
        parse_reference(text)
    assert info.value.reason == "expected a single reference"
    assert info.value.span == (0, len(text))
    assert info.value.expression == text


# ---------------------------------------------------------------------------
# Spans


def test_spans_of_a_plain_reference() -> None:
    # † s t a t e . u s e r s [ 1 0 ] . n a m e
    # 0 1 . . . 5 6 7 . . . 11  . . 15 16 . . 20
    node = parse_reference("†state.users[10].name")
    assert node.span == (0, 21)
    assert [s.span for s in node.segments] == [(6, 12), (12, 16), (16, 21)]


def test_spans_of_dotted_index_and_negative_index() -> None:
    node = parse_reference("†state.2.-1[-30]")
    # .2 -> (6, 8); .-1 -> (8, 11); [-30] -> (11, 16)
    assert node.segments == (Index(2), Index(-1), Index(-30))
    assert [s.span for s in node.segments] == [(6, 8), (8, 11), (11, 16)]
    assert node.span == (0, 16)


def test_spans_with_quoted_keys_and_wildcard() -> None:
    text = "†state[\"quoted key\"]['k'][*].x"
    # ["quoted key"] is 14 characters: 6..20; ['k'] 20..25; [*] 25..28; .x 28..30
    node = parse_reference(text)
    assert node.segments == (Field("quoted key"), Field("k"), Wildcard(), Field("x"))
    assert [s.span for s in node.segments] == [(6, 20), (20, 25), (25, 28), (28, 30)]
    assert node.span == (0, 30)
    for segment in node.segments:
        start, end = segment.span
        # each segment's text, appended to a bare kind, parses to that segment
        assert parse_reference("†k" + text[start:end]).segments == (segment,)


def test_spans_of_a_multi_option_expression() -> None:
    text = '†state["quoted key"].x || †data.y[2]'
    node = parse_expression(text)
    assert isinstance(node, Alternatives)
    assert node.span == (0, 36)
    first, second = node.options
    assert isinstance(first, Reference) and isinstance(second, Reference)
    assert first.span == (0, 22)
    assert [s.span for s in first.segments] == [(6, 20), (20, 22)]
    assert second.span == (26, 36)
    assert [s.span for s in second.segments] == [(31, 33), (33, 36)]


def test_spans_of_conjunctions_inside_alternatives() -> None:
    text = "†a && †b.c\t||  †d && †e[0] && †f"
    # refs at 0..2, 6..10, 15..17, 21..26, 30..32 (a tab before ||, two spaces after)
    node = parse_expression(text)
    assert node == Alternatives(
        (
            Conjunction((ref("a"), ref("b", "c"))),
            Conjunction((ref("d"), ref("e", 0), ref("f"))),
        )
    )
    assert isinstance(node, Alternatives)
    assert node.span == (0, 32)
    left, right = node.options
    assert left.span == (0, 10)
    assert [r.span for r in left.references] == [(0, 2), (6, 10)]
    assert right.span == (15, 32)
    assert [r.span for r in right.references] == [(15, 17), (21, 26), (30, 32)]
    assert [r.span for r in node.references] == [(0, 2), (6, 10), (15, 17), (21, 26), (30, 32)]


def test_spans_do_not_take_part_in_equality() -> None:
    dotted = parse_expression("†state.a.0")
    bracketed = parse_expression("†state.a[0]")
    assert dotted == bracketed
    assert hash(dotted) == hash(bracketed)
    assert dotted.span != bracketed.span  # type: ignore[union-attr]


def test_nodes_are_frozen() -> None:
    node = parse_reference("†state.a")
    with pytest.raises(dataclasses.FrozenInstanceError):
        node.kind = "input"  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        node.segments[0].name = "b"  # type: ignore[union-attr]


def test_fast_path_is_taken_for_plain_references() -> None:
    # the regex fast path must actually fire for plain forms, and build what lark builds
    for text in ["†state.a[0].-1", "†state.a || †b.c && †d", "†a\t&&\t†b.2"]:
        plain = _parse_plain(text)
        assert plain is not None
        assert plain == _lark().parse(text)
    for text in ['†state["a"]', "†state[*]", "††x", "†state..x"]:
        assert _parse_plain(text) is None


# ---------------------------------------------------------------------------
# Canonical text


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        ("†state", "†state"),
        ("†state.a.0[1].-2", "†state.a[0][1][-2]"),
        ('†state["plain"]', "†state.plain"),
        ("†state['plain']", "†state.plain"),
        ("†state['a b']", '†state["a b"]'),
        ("†state['it\\'s']", '†state["it\'s"]'),
        ('†state["say \\"hi\\""]', '†state["say \\"hi\\""]'),
        ('†state["\\u00e9t\\u00e9"]', "†state.été"),
        ('†state["tab\\t"]', '†state["tab\\t"]'),
        ('†state["back\\\\"]', '†state["back\\\\"]'),
        ('†state["1"]', '†state["1"]'),
        ('†state["-x"]', '†state["-x"]'),
        ('†state[""]', '†state[""]'),
        ("†state[*].x", "†state[*].x"),
        ("†a&&†b||†c", "†a && †b || †c"),
        ("†a\t||\t†b", "†a || †b"),
        ("†a || †b  &&  †c", "†a || †b && †c"),
    ],
)
def test_canonical_text(text: str, canonical: str) -> None:
    node = parse_expression(text)
    assert str(node) == canonical
    assert parse_expression(canonical) == node


def test_str_of_constructed_nodes() -> None:
    assert str(Field("name")) == ".name"
    assert str(Field("a b")) == '["a b"]'
    assert str(Field("日本")) == ".日本"
    assert str(Field("ü ber")) == '["ü ber"]'
    assert str(Field("9lives")) == '["9lives"]'
    assert str(Index(-4)) == "[-4]"
    assert str(Wildcard()) == "[*]"
    assert str(Reference("input")) == "†input"
    assert str(Conjunction((ref("a"), ref("b", 1)))) == "†a && †b[1]"
    assert str(Alternatives((ref("a"), Conjunction((ref("b"), ref("c")))))) == "†a || †b && †c"
    assert str(Escaped("x")) == "†x"


# ---------------------------------------------------------------------------
# jsonpath compilation

DOCUMENT = {
    "users": [
        {"name": "ada", "tags": ["x", "y"]},
        {"name": "bob", "tags": []},
        {"name": "cy", "tags": ["z"]},
    ],
    "a b": {"c'd": 1},
    "zero": 0,
}


@pytest.mark.parametrize(
    ("text", "values"),
    [
        ("†state", [DOCUMENT]),
        ("†state.zero", [0]),
        ("†state.users[0].name", ["ada"]),
        ("†state.users.1.name", ["bob"]),
        ("†state.users[-1].name", ["cy"]),
        ("†state.users[-3].tags[-1]", ["y"]),
        ("†state.users[*].name", ["ada", "bob", "cy"]),
        ("†state.users[*].tags[*]", ["x", "y", "z"]),
        ("†state[\"a b\"]['c\\'d']", [1]),
        ("†state.missing", []),
        ("†state.users[3]", []),
        ("†state.users[-4]", []),
        ("†state.users.name", []),
    ],
)
def test_to_jsonpath_find(text: str, values: list[object]) -> None:
    path = to_jsonpath(parse_reference(text))
    assert [match.value for match in path.find(DOCUMENT)] == values


def test_to_jsonpath_whole_document_is_root() -> None:
    from jsonpath_ng import jsonpath as jp

    path = to_jsonpath(parse_reference("†input"))
    assert path == jp.Root()
    assert [m.value for m in path.find({"k": 1})] == [{"k": 1}]


def test_to_jsonpath_builds_objects_not_text() -> None:
    from jsonpath_ng import jsonpath as jp

    from obelisk.grammar.jsonpath import _EveryChild

    # jsonpath-ng >= 1.16 has Wildcard; older releases (Python 3.10) get our equivalent
    wildcard = jp.Wildcard() if hasattr(jp, "Wildcard") else _EveryChild()
    path = to_jsonpath(parse_reference("†state.a[2][*]"))
    assert path == jp.Child(jp.Child(jp.Child(jp.Root(), jp.Fields("a")), jp.Index(2)), wildcard)


def test_to_jsonpath_writes() -> None:
    path = to_jsonpath(parse_reference("†state.user.name"))
    assert path.update({"user": {"name": "old", "id": 1}}, "new") == {
        "user": {"name": "new", "id": 1}
    }
    index = to_jsonpath(parse_reference("†state.items[-1]"))
    assert index.update({"items": [1, 2, 3]}, 9) == {"items": [1, 2, 9]}


def test_to_jsonpath_key_that_looks_like_jsonpath_syntax() -> None:
    # no text is formatted for jsonpath-ng's parser, so odd keys are plain keys
    document = {"$.a[*]": 1, "a": [5]}
    path = to_jsonpath(parse_reference('†state["$.a[*]"]'))
    assert [m.value for m in path.find(document)] == [1]


# ---------------------------------------------------------------------------
# Syntax errors


# (text, reason, span, caret)
SYNTAX_ERRORS = [
    (
        "†",
        "expected a kind such as 'state' or 'input' after '†', found the end of the expression",
        (1, 1),
        "†\n ^",
    ),
    (
        "†state.",
        "expected a name or an integer after '.', found the end of the expression",
        (7, 7),
        "†state.\n       ^",
    ),
    (
        # the bad spot is the second '.', as in the caret_lines doctest of errors.py
        "†state..x",
        "expected a name or an integer after '.', found '.'",
        (7, 8),
        "†state..x\n       ^",
    ),
    (
        "†state[",
        "expected an integer, a quoted key or '*' after '[', found the end of the expression",
        (7, 7),
        "†state[\n       ^",
    ),
    (
        "†state[]",
        "empty brackets: write an index, a quoted key or '*' inside",
        (7, 8),
        "†state[]\n       ^",
    ),
    (
        "†state['abc",
        "unterminated quoted key",
        (7, 11),
        "†state['abc\n       ^^^^",
    ),
    (
        "†state.a ||",
        "expected '†' after '||', found the end of the expression",
        (11, 11),
        "†state.a ||\n           ^",
    ),
    (
        "†state.a | †state.b",
        "found '|'; use '||' for alternatives",
        (9, 10),
        "†state.a | †state.b\n         ^",
    ),
    (
        "†state.a & †state.b",
        "found '&'; use '&&' to join references",
        (9, 10),
        "†state.a & †state.b\n         ^",
    ),
    (
        "†state.a.*",
        "a wildcard is written '[*]', not '.*'",
        (9, 10),
        "†state.a.*\n         ^",
    ),
    (
        "†state.a ",
        "trailing whitespace after the expression",
        (8, 9),
        "†state.a \n        ^",
    ),
    (
        "†state.a b",
        "whitespace is allowed only around '||' and '&&'",
        (8, 9),
        "†state.a b\n        ^",
    ),
    (
        "†state.1abc",
        'a name cannot start with a digit; quote it: ["1abc"]',
        (7, 11),
        "†state.1abc\n       ^^^^",
    ),
    (
        '†state["\\q"]',
        "invalid escape in quoted key",
        (8, 9),
        '†state["\\q"]\n        ^',
    ),
    (
        "state.x",
        "an expression must start with '†'",
        (0, 1),
        "state.x\n^",
    ),
    (
        "",
        "an expression must start with '†'",
        (0, 0),
        "\n^",
    ),
    (
        "†state[-]",
        "expected an integer, a quoted key or '*' after '[', found '-'",
        (7, 8),
        "†state[-]\n       ^",
    ),
    (
        "†state.a &&",
        "expected '†' after '&&', found the end of the expression",
        (11, 11),
        "†state.a &&\n           ^",
    ),
    (
        "†state.a ||| †state.b",
        "found '|'; use '||' for alternatives",
        (11, 12),
        "†state.a ||| †state.b\n           ^",
    ),
    (
        "†state[1",
        "expected ']', found the end of the expression",
        (8, 8),
        "†state[1\n        ^",
    ),
]


@pytest.mark.parametrize(
    ("text", "reason", "span", "caret"), SYNTAX_ERRORS, ids=[repr(e[0]) for e in SYNTAX_ERRORS]
)
def test_syntax_errors(text: str, reason: str, span: tuple[int, int], caret: str) -> None:
    with pytest.raises(ReferenceSyntaxError) as info:
        parse_expression(text)
    error = info.value
    assert error.reason == reason
    assert error.span == span
    assert error.caret == caret
    assert error.expression == text
    assert str(error) == f"{reason}\n{caret}"
    assert error.code == "reference_syntax"
    assert isinstance(error, ObeliskError)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("†", ("a kind such as 'state' or 'input'",)),
        ("†state.", ("a name", "an integer")),
        ("†state[", ("an integer", "a quoted key", "'*'")),
        ("†state.a ||", ("'†'",)),
        ("†state[1", ("']'",)),
        ("†state.a b", ("'.'", "'['", "'||'", "'&&'")),
        ('†state["\\q"]', ("a valid JSON escape",)),
        ("state.x", ()),
    ],
)
def test_syntax_error_expected(text: str, expected: tuple[str, ...]) -> None:
    with pytest.raises(ReferenceSyntaxError) as info:
        parse_expression(text)
    assert info.value.expected == expected


@pytest.mark.parametrize(
    ("text", "span"),
    [
        # † s t a t e [ ' a " \ q ' ]  -> the backslash of \q is at 10
        ("†state['a\"\\q']", (10, 11)),
        # † s t a t e [ ' \ ' \ q ' ]  -> the backslash of \q is at 10
        ("†state['\\'\\q']", (10, 11)),
    ],
)
def test_invalid_escape_in_single_quoted_key_points_at_the_backslash(
    text: str, span: tuple[int, int]
) -> None:
    # same rule as '†state["\\q"]' -> (8, 9): the caret sits under the backslash
    with pytest.raises(ReferenceSyntaxError) as info:
        parse_expression(text)
    assert info.value.reason == "invalid escape in quoted key"
    assert info.value.span == span
    assert text[span[0] : span[1]] == "\\"


def test_syntax_errors_are_not_cached_as_results() -> None:
    for _ in range(2):
        with pytest.raises(ReferenceSyntaxError):
            parse_expression("†state..x")


def test_caret_on_multi_line_expression_shows_the_line_of_the_error() -> None:
    with pytest.raises(ReferenceSyntaxError) as info:
        parse_expression("†state.a\n")
    assert info.value.span == (8, 9)
    assert info.value.reason == "expected '.', '[', '||' or '&&', found '\\n'"
    assert info.value.caret == "†state.a\n        ^"


# -- the reference builder ----------------------------------------------------------


def test_ref_builds_canonical_text_and_quotes_keys_that_need_it() -> None:
    from obelisk import parse_expression, ref

    assert ref("state", "c0", 0, "id_") == "†state.c0[0].id_"
    assert ref("state") == "†state"
    assert ref("input", "City Hub", -1, ...) == '†input["City Hub"][-1][*]'
    assert ref("data", "0x", "", "*", 'say "hi"') == '†data["0x"][""]["*"]["say \\"hi\\""]'
    for text in ('†state.c0[0]["City Hub"]', "†input.a[*].b", '†state["*"][-2]'):
        node = parse_expression(text)
        assert ref(node.kind, *node.path) == text  # type: ignore[union-attr]


def test_ref_refuses_what_is_not_a_path() -> None:
    from obelisk import ref

    with pytest.raises(ValueError, match="a reference kind is a plain name"):
        ref("my state")
    with pytest.raises(ValueError, match=r"a path segment is a key \(str\), an index"):
        ref("state", 1.5)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="got True"):
        ref("state", True)


@pytest.mark.parametrize("form", ["†state.a.{}", "†state.a[{}]", "†state.a[{}] || †state.b"])
def test_an_index_too_long_for_python_is_a_located_syntax_error(form: str) -> None:
    digits = sys.get_int_max_str_digits() + 3
    text = form.format("9" * digits)
    with pytest.raises(ReferenceSyntaxError) as caught:
        parse_expression(text)
    assert caught.value.reason == (
        f"a list index of {digits} digits is too long: Python converts at most "
        f"{sys.get_int_max_str_digits()} digits to text"
    )
    assert caught.value.span == (9, 10)
