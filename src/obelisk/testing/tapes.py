"""The decisions of a drawn plan (docs/testing.md): one byte string per call, read
a byte or two per decision by :class:`Tape`.

A few Hypothesis choices per plan instead of one per decision keep 20-call plans
fast to draw; zero bytes, where the shrinker heads, are the simplest choices.
"""

from __future__ import annotations

from hypothesis import strategies as st

__all__ = ["Tape", "draw_tapes", "plan_positions"]


class Tape:
    """Decisions read from one drawn byte string: ``pick(n)`` is a byte modulo
    ``n``.  One Hypothesis choice per call instead of one per decision, and zero
    bytes, where the shrinker heads, mean the first option of every decision."""

    __slots__ = ("at", "data")

    def __init__(self, data: bytes, at: int = 0) -> None:
        self.data = data
        self.at = at

    def pick(self, n: int) -> int:
        at = self.at
        data = self.data
        if n <= 256:
            self.at = at + 1
            return data[at] % n if at < len(data) else 0
        self.at = at + 2
        return ((data[at] << 8) | data[at + 1]) % n if at + 1 < len(data) else 0


def draw_tapes(draw: st.DrawFn, size: int, min_calls: int, max_calls: int) -> list[bytes]:
    """One byte string per call holds its decisions: a list of them, so that the
    shrinker can delete calls one by one (and zero bytes are the simplest choices)."""
    if min_calls == max_calls:  # no call can be dropped: one byte string, one choice
        whole = draw(st.binary(min_size=size * max_calls, max_size=size * max_calls))
        return [whole[k * size : (k + 1) * size] for k in range(max_calls)]
    return draw(
        st.lists(st.binary(min_size=size, max_size=size), min_size=min_calls, max_size=max_calls)
    )


def plan_positions(tapes: list[bytes], dependency_order: bool) -> list[int]:
    """Where each call (in drawing order) stands in the plan."""
    count = len(tapes)
    if dependency_order or count < 2:
        return list(range(count))
    # sort keys (the last byte of each tape); all zero keeps the drawing order
    order = sorted(range(count), key=lambda k: (tapes[k][-1], k))
    positions = [0] * count
    for position, k in enumerate(order):
        positions[k] = position
    return positions
