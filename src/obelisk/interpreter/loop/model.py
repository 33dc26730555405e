"""The model side of the execution loop: what a model is, and its errors (docs/loop.md).

A :class:`Model` is anything with ``async complete(request) -> Solution``.  A
:class:`StreamingModel` also has ``stream(request)``, an async iterator of the
solution's JSON text as it is written, so the loop can dispatch each call as
soon as its object is complete.  Adapters live in :mod:`obelisk.models`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Protocol, runtime_checkable

from obelisk.interpreter.loop.messages import Request, Solution

__all__ = ["Model", "StreamingModel"]


@runtime_checkable
class Model(Protocol):
    """Answers a :class:`Request` with a :class:`Solution`.

    ``complete`` may raise :class:`~obelisk.errors.SolutionError`
    for an answer that is not a solution (the loop turns it into an error
    message for the next turn) and :class:`~obelisk.errors.ModelError` when the model cannot be
    reached (the loop stops and keeps what was done).
    """

    async def complete(self, request: Request) -> Solution: ...


@runtime_checkable
class StreamingModel(Model, Protocol):
    """A :class:`Model` that can also stream the solution's JSON text in chunks."""

    def stream(self, request: Request) -> AsyncIterator[str]: ...
