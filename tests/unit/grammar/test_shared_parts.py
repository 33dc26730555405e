"""References of a large plan share their kind, spans and segments (issue 31, point 6).

A plan of 100,000 calls parses about as many distinct references; the parts they have
in common (the kind ``state``, ``.items[0]`` at one offset, a span) are one object
each, so a reference costs little more than its own name (docs/performance.md,
"Memory").  Sharing changes nothing a user sees: nodes compare by value, spans stay
right.
"""

from __future__ import annotations

from obelisk.grammar import Field, Index, Reference, parse_expression


def _fresh(text: str) -> Reference:
    parse_expression.cache_clear()  # parsed as never seen, not taken from the cache
    node = parse_expression(text)
    assert isinstance(node, Reference)
    return node


def test_two_references_share_kind_segments_and_spans() -> None:
    first, second = _fresh("†state.r1.items[0].id"), _fresh("†state.r2.items[0].id")
    assert first.kind is second.kind
    assert first.segments[0] is not second.segments[0]  # r1 and r2: names of their own
    for mine, theirs in zip(first.segments[1:], second.segments[1:], strict=True):
        assert mine is theirs
    assert first.key[2] is second.key[2]  # "items", the segment's own name
    assert first.span is second.span


def test_shared_segments_keep_their_spans_and_text() -> None:
    node = _fresh("†state.a.items[0].2")
    assert node.segments == (Field("a"), Field("items"), Index(0), Index(2))
    assert [s.span for s in node.segments] == [(6, 8), (8, 14), (14, 17), (17, 19)]
    assert node.key == ("state", "a", "items", 0, 2)
    other = _fresh("†state.b.items[0].2")  # the same pieces at the same offsets
    assert other.segments[1:] == node.segments[1:]
    assert [s.span for s in other.segments] == [(6, 8), (8, 14), (14, 17), (17, 19)]
    assert str(other) == "†state.b.items[0][2]"  # the dotted index is written [2]
    assert str(_fresh("†state.b.items[-0]")) == "†state.b.items[0]"


def test_a_piece_at_another_offset_has_its_own_span() -> None:
    short, longer = _fresh("†state.a.items"), _fresh("†state.abc.items")
    assert short.segments[1] == longer.segments[1]
    assert short.segments[1].span == (8, 14)
    assert longer.segments[1].span == (10, 16)
