"""The state's size budget during a run: ``Limits.max_state_bytes`` (docs/limits.md)."""

from __future__ import annotations

from pydantic_core import to_json

from obelisk.errors import StateWriteError
from obelisk.interpreter.runtime.state import State
from obelisk.json_values import memory_estimate

__all__ = ["StateBudget"]


class StateBudget:
    """Refuses the writes that could take ``state`` past ``limit`` bytes of memory, as
    :func:`~obelisk.json_values.memory_estimate` estimates what its values take.

    Each call that is about to commit says how much its writes add at most
    (:meth:`expect`, bytes); :meth:`make_room` counts that against the state's size,
    an upper bound (a write that replaces counts in full), and measures the state
    itself only when the bound passes the limit, so the cost stays linear.
    """

    __slots__ = ("_added", "_size", "limit", "state")

    def __init__(self, state: State, limit: int) -> None:
        self.state, self.limit = state, limit
        self._added: dict[int, int] = {}  # call index -> bytes its writes add, at most
        self._size = 0  # the state's size, at most

    def expect(self, index: int, added: int) -> None:
        """Call ``index``'s writes add at most ``added`` bytes."""
        self._added[index] = added

    def make_room(self, index: int) -> None:
        """Raise :class:`~obelisk.errors.StateWriteError` when call ``index``'s writes
        could take the state past the limit; otherwise count them."""
        added = self._added.pop(index, 0)
        if self._size + added > self.limit:
            self._size = self.measure()
            if self._size + added > self.limit:
                raise StateWriteError(
                    f"the state would grow past {self.limit:,} bytes of memory "
                    f"(Limits.max_state_bytes, estimated): it holds about {self._size:,} "
                    f"bytes, and this call writes up to {added:,}"
                )
        self._size += added

    def measure(self) -> int:
        """The state's size now (bytes of memory, estimated): one pass over it."""
        state = self.state
        total = 0
        for kind in state.kinds:
            document = state.peek(kind)
            total += memory_estimate(document, len(to_json(document, inf_nan_mode="constants")))
        return total
