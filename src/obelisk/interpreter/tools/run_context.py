"""Per-run context for tools: :class:`Context` (docs/tools.md).

A tool parameter annotated ``obelisk.Context[T]`` receives, at each call, a
:class:`Context` whose ``deps`` is the object passed as ``context=`` to
:func:`obelisk.run`, :func:`obelisk.run_sync` or :class:`obelisk.Loop` (the world
the tool acts on, a database session, a client).  The parameter is not part of the
tool's JSON schema: the model never sees it and a plan cannot pass it.
"""

from __future__ import annotations

import typing
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

__all__ = ["Context", "is_context_annotation"]

T = TypeVar("T")


@dataclass(frozen=True)  # no slots: Context[int](...) must work (typing sets __orig_class__)
class Context(Generic[T]):
    """What a tool receives in its ``obelisk.Context[T]`` parameter (docs/tools.md).

    - ``deps``: the run's context object, exactly as passed to ``context=`` (never
      copied; typed ``T`` for mypy).
    - ``tool``: the name of the tool being called.
    - ``call``: the call's 0-based index in the plan (of the current turn, in a loop).
    - ``attempt``: 1 for the first try, 2 for the first retry, ... (``RetryPolicy``).
    - ``idempotency_key``: ``"<run id>/<call index>/<16 hex digits of the argument
      hash>"``, the same for every attempt of the call and when a durable run is
      resumed (docs/durable.md); pass it to services that deduplicate requests.

    Built by obelisk for each attempt; tools only read it.  In the style of Pydantic
    AI's ``RunContext[Deps]``: the wrapper leaves room for per-call facts next to
    ``deps`` and keeps the annotation an ordinary class that mypy checks::

        def send(to: str, text: str, ctx: obelisk.Context[Mailbox]) -> int:
            return ctx.deps.deliver(to, text)

    A run without a context (``context=None``) fails every call of such a tool with
    :class:`~obelisk.errors.UsageError` (docs/tools.md), except a durable run (one
    with a journal), whose tools get a ``Context`` with ``deps=None`` so that they can
    read ``idempotency_key``.
    """

    deps: T
    tool: str
    call: int
    attempt: int
    idempotency_key: str = ""


def is_context_annotation(annotation: Any) -> bool:
    """True for ``Context``, ``Context[T]`` and ``Annotated[Context[T], ...]``: the
    annotations that make a parameter take the run context (docs/tools.md)."""
    if annotation is Context:
        return True
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return is_context_annotation(typing.get_args(annotation)[0])
    return origin is Context
