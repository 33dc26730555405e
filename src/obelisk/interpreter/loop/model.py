"""The model side of the execution loop: what a model is, and its errors (docs/loop.md).

A :class:`Model` is anything with ``async complete(request) -> Solution``.  A
:class:`StreamingModel` also has ``stream(request)``, an async iterator of the
solution's JSON text as it is written, so the loop can dispatch each call as
soon as its object is complete.  Adapters live in :mod:`obelisk.models`.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Protocol, runtime_checkable

from obelisk.errors import ModelError, ObeliskError, RequestBudgetExceeded
from obelisk.interpreter.loop.messages import Request, Solution

__all__ = ["GuardedModel", "Model", "StreamingModel"]


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


class GuardedModel:
    """The model as a loop uses it: every request counts against one budget shared by
    the loop, its delegates and its sub-requests, each answer is bounded in time,
    and whatever the model raises becomes a :class:`~obelisk.errors.ModelError`.

    ``inner``: the user's model; ``timeout``: seconds for one answer (a whole
    stream included), or ``None``; ``max_requests``: requests at most, or ``None``.
    Raises :class:`~obelisk.errors.RequestBudgetExceeded` once the budget is used up,
    and ``ModelError`` for a timeout (``the model did not answer within 30 s``) or an
    exception that is not obelisk's (``the model raised KeyError: 'choices'``);
    :class:`~obelisk.errors.SolutionError` and other obelisk errors pass through.
    """

    def __init__(self, inner: Model, timeout: float | None, max_requests: int | None) -> None:
        self.inner, self.timeout, self.max_requests = inner, timeout, max_requests
        self.requests = 0  # made so far, by every loop that shares this guard

    def _take(self) -> None:
        if self.max_requests is not None and self.requests >= self.max_requests:
            raise RequestBudgetExceeded(
                f"max_requests={self.max_requests} model requests are used up "
                "(delegates and sub-requests included)"
            )
        self.requests += 1

    def _failed(self, exc: BaseException) -> ObeliskError:
        if isinstance(exc, ObeliskError):
            return exc
        if isinstance(exc, (TimeoutError, asyncio.TimeoutError)):  # one class from 3.11 on
            return ModelError(f"the model did not answer within {self.timeout:g} s")
        return ModelError(f"the model raised {type(exc).__name__}: {exc}")

    async def complete(self, request: Request) -> Solution:
        self._take()
        try:
            if self.timeout is None:
                return await self.inner.complete(request)
            return await asyncio.wait_for(self.inner.complete(request), self.timeout)
        except Exception as exc:
            failure = self._failed(exc)
            if failure is exc:
                raise
            raise failure from exc

    async def stream(self, request: Request) -> AsyncIterator[str]:
        self._take()
        assert isinstance(self.inner, StreamingModel)
        loop = asyncio.get_running_loop()
        deadline = None if self.timeout is None else loop.time() + self.timeout
        chunks = self.inner.stream(request).__aiter__()
        while True:
            try:
                if deadline is None:
                    chunk = await chunks.__anext__()
                else:
                    chunk = await asyncio.wait_for(
                        chunks.__anext__(), max(deadline - loop.time(), 0)
                    )
            except StopAsyncIteration:
                return
            except Exception as exc:
                failure = self._failed(exc)
                if failure is exc:
                    raise
                raise failure from exc
            yield chunk
