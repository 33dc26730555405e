"""What every provider adapter needs around its SDK, SDK-free (docs/loop.md, "Providers").

* :class:`PerLoop`: one SDK client per event loop, closed when that loop shuts down
  (each ``asyncio.run``, so each ``Loop.run_sync``, has its own loop);
* :func:`check_settings`: ``timeout`` and ``max_retries`` as the adapters take them;
* :class:`Deadline`: one ``timeout`` for a whole call, retries and a whole stream included;
* :func:`shortened` and :func:`first_bytes`: a provider's text, fit for an error message.
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import AsyncGenerator, Awaitable, Callable
from typing import Any, Generic, TypeVar

from obelisk.errors import ModelError, UsageError

__all__ = ["Deadline", "PerLoop", "check_settings", "first_bytes", "shortened"]

T = TypeVar("T")
C = TypeVar("C")


def check_settings(timeout: Any, max_retries: Any) -> None:
    """A :class:`~obelisk.errors.UsageError` for a ``timeout`` that is not a number of
    seconds > 0 (or ``None``) or a ``max_retries`` that is not an integer >= 0 (or ``None``)."""
    if timeout is not None and (
        isinstance(timeout, bool)
        or not isinstance(timeout, (int, float))
        or not 0 < timeout < float("inf")
    ):
        raise UsageError(f"timeout must be a number of seconds > 0 or None, got {timeout!r}")
    if max_retries is not None and (type(max_retries) is not int or max_retries < 0):
        raise UsageError(f"max_retries must be an integer >= 0 or None, got {max_retries!r}")


def shortened(text: str, limit: int = 300) -> str:
    """``text`` on one line, at most ``limit`` characters."""
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def first_bytes(content: bytes, limit: int = 120) -> str:
    """The start of a response body, for an error message: ``b'<html>...'``."""
    return repr(content[:limit]) + ("..." if len(content) > limit else "")


async def _close_with_loop(
    client: Any, clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Any], loop: Any
) -> AsyncGenerator[None, None]:
    """Waits until its event loop shuts down (``asyncio.run`` closes suspended async
    generators while the loop still runs), then closes the loop's client."""
    try:
        yield
    finally:
        clients.pop(loop, None)
        await client.close()


class PerLoop(Generic[C]):
    """One client made by ``make()`` per running event loop, closed (``await
    client.close()``) when that loop shuts down; ``given`` instead, when not ``None``,
    is used as it is in every loop."""

    def __init__(self, make: Callable[[], C], given: C | None = None) -> None:
        self._make, self._given = make, given
        self._clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Any] = (
            weakref.WeakKeyDictionary()
        )

    def __len__(self) -> int:
        """How many event loops hold a client made here (loops gone are forgotten)."""
        return len(self._clients)

    async def get(self) -> C:
        """The client of the running event loop."""
        if self._given is not None:
            return self._given
        loop = asyncio.get_running_loop()
        held = self._clients.get(loop)
        if held is not None:
            return held[0]  # type: ignore[no-any-return]
        client = self._make()
        closer = _close_with_loop(client, self._clients, loop)
        self._clients[loop] = (client, closer)
        await closer.__anext__()  # the loop's shutdown now closes the client
        return client


class Deadline:
    """The end of one model call that ``timeout`` seconds bound (``None``: no end);
    ``on_timeout()`` makes the error raised there."""

    def __init__(self, timeout: float | None, on_timeout: Callable[[], ModelError]) -> None:
        self.timeout, self._on_timeout = timeout, on_timeout
        loop = asyncio.get_running_loop()
        self._end = None if timeout is None else loop.time() + timeout

    def left(self) -> float | None:
        """Seconds left (at least 1 ms), or ``None`` without a timeout."""
        if self._end is None:
            return None
        return max(self._end - asyncio.get_running_loop().time(), 0.001)

    async def within(self, awaitable: Awaitable[T]) -> T:
        """``awaitable``'s result, or the timeout's ModelError at the deadline."""
        left = self.left()
        if left is None:
            return await awaitable
        try:
            return await asyncio.wait_for(awaitable, left)
        except asyncio.TimeoutError:
            raise self._on_timeout() from None
