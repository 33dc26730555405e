"""The model side of the execution loop: what a model is, and its errors (docs/loop.md).

A :class:`Model` is anything with ``async complete(request) -> Solution``.  A
:class:`StreamingModel` also has ``stream(request)``, an async iterator of the
solution's JSON text as it is written, so the loop can dispatch each call as
soon as its object is complete.  Adapters live in :mod:`obelisk.models`.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Mapping
from typing import Any, Protocol, runtime_checkable

from obelisk.errors import ModelError, ObeliskError, RequestBudgetExceeded
from obelisk.interpreter.loop.messages import Request, Solution, parse_solution
from obelisk.interpreter.runtime.instrument import active

__all__ = ["GuardedModel", "GuardedStream", "Model", "StreamingModel", "streamed"]


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
    """A :class:`Model` that can also stream the solution's JSON text in chunks.

    ``stream(request)`` returns an async iterator of ``str`` chunks.  The iterator
    may have a ``usage`` attribute, read once the stream has ended: the answer's
    token counts ``{"prompt_tokens", "completion_tokens", "total_tokens"}`` or
    ``None``; the loop keeps it as the turn's usage (docs/loop.md).  It may also
    have ``finish_reason``: ``"length"`` says the answer was cut off at the token
    limit, which the correction of an unusable answer then says.
    """

    def stream(self, request: Request) -> AsyncIterator[str]: ...


def _usage_of(source: Any) -> dict[str, int] | None:
    """A stream's ``usage`` attribute as token counts (``None`` when it has none)."""
    usage = getattr(source, "usage", None)
    if usage is None:
        return None
    if not isinstance(usage, Mapping) or not all(
        isinstance(key, str) and type(value) is int for key, value in usage.items()
    ):
        raise ModelError(
            f"the model's stream reported usage {usage!r}: it must map token kinds to integers"
        )
    return dict(usage)


class GuardedStream:
    """One stream of a :class:`GuardedModel`: an async iterator of ``str`` chunks,
    bounded in time like an answer; ``usage`` is the inner stream's token counts
    once the stream has ended (``None`` when it reports none)."""

    def __init__(self, guard: GuardedModel, request: Request) -> None:
        self._guard, self._request = guard, request
        self._source: Any = None
        self._chunks = self._read()

    @property
    def usage(self) -> dict[str, int] | None:
        """The answer's token counts, when the model's stream reported them."""
        return _usage_of(self._source)

    @property
    def finish_reason(self) -> str | None:
        """Why the model's stream stopped (``"length"``: cut off), when it says."""
        reason = getattr(self._source, "finish_reason", None)
        return reason if isinstance(reason, str) else None

    def __aiter__(self) -> GuardedStream:
        return self

    def __anext__(self) -> Awaitable[str]:
        return self._chunks.__anext__()

    async def aclose(self) -> None:
        """Stop reading the stream."""
        await self._chunks.aclose()

    async def _read(self) -> AsyncGenerator[str, None]:
        guard = self._guard
        guard._take()
        assert isinstance(guard.inner, StreamingModel)
        loop = asyncio.get_running_loop()
        deadline = None if guard.timeout is None else loop.time() + guard.timeout
        self._source = guard.inner.stream(self._request)
        chunks = self._source.__aiter__()
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
            except (Exception, GeneratorExit) as exc:  # GeneratorExit: raised by the model
                raise guard._failed(exc) from exc
            if not isinstance(chunk, str):
                raise ModelError(
                    f"the model's stream gave {type(chunk).__name__}, not str: a stream "
                    "yields the answer's text"
                )
            yield chunk


class GuardedModel:
    """The model as a loop uses it: every request counts against one budget shared by
    the loop, its delegates and its sub-requests, each answer is bounded in time,
    and whatever the model raises becomes a :class:`~obelisk.errors.ModelError`.

    ``inner``: the user's model; ``timeout``: seconds for one answer (a whole
    stream included), or ``None``; ``max_requests``: requests at most, or ``None``.
    Raises :class:`~obelisk.errors.RequestBudgetExceeded` once the budget is used up,
    and ``ModelError`` for a timeout (``the model did not answer within 30 s``), an
    exception that is not obelisk's (``the model raised KeyError: 'choices'``;
    ``GeneratorExit`` included), an answer that is not a
    :class:`~obelisk.interpreter.loop.messages.Solution`, or a stream chunk that is
    not ``str``; :class:`~obelisk.errors.SolutionError` (a solution nested too deep
    to use, docs/limits.md) and other obelisk errors pass through.
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
        text = str(exc)
        return ModelError(f"the model raised {type(exc).__name__}" + (f": {text}" if text else ""))

    async def complete(self, request: Request) -> Solution:
        instrument = active()  # tracing (docs/observability.md): None when it is off
        if instrument is None:
            return await self._complete(request)
        started = time.time()
        try:
            solution = await self._complete(request)
        except BaseException as exc:
            instrument.model_request(self.inner, request, None, exc, (started, time.time()))
            raise
        instrument.model_request(self.inner, request, solution, None, (started, time.time()))
        return solution

    async def _complete(self, request: Request) -> Solution:
        self._take()
        try:
            if self.timeout is None:
                answer = await self.inner.complete(request)
            else:
                answer = await asyncio.wait_for(self.inner.complete(request), self.timeout)
        except (Exception, GeneratorExit) as exc:  # GeneratorExit: raised by the model
            failure = self._failed(exc)
            if failure is exc:
                raise
            raise failure from exc
        if not isinstance(answer, Solution):
            raise ModelError(
                f"the model's complete() returned {type(answer).__name__}, not a Solution "
                "(obelisk.parse_solution makes one from JSON text or a dict)"
            )
        return parse_solution(answer)  # a Solution built by hand is checked here

    def stream(self, request: Request) -> GuardedStream:
        """The inner model's stream of ``request``, guarded (see the class)."""
        return GuardedStream(self, request)


async def streamed(
    model: Any, request: Request, answer: Awaitable[tuple[Solution, Any]], chunks: Any
) -> tuple[Solution, Any]:
    """What ``answer`` gives (a streamed solution and the run of its calls), the solution
    carrying the token counts of its stream ``chunks``; with tracing on, reported as a
    model request of ``model`` (docs/observability.md)."""
    instrument, started = active(), time.time()  # tracing: None when it is off
    inner = getattr(model, "inner", model)  # the user's model, not the guard
    try:
        solution, run = await answer
    except BaseException as exc:
        if instrument is not None:
            instrument.model_request(inner, request, None, exc, (started, time.time()))
        raise
    usage = getattr(chunks, "usage", None)  # GuardedStream: token counts, once ended
    solution = solution if usage is None else solution.with_usage(usage)
    if instrument is not None:
        instrument.model_request(inner, request, solution, None, (started, time.time()))
    return solution, run
