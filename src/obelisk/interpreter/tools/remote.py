"""Remote tools: calls that run on another machine's worker (a Ray cluster), while the
engine keeps the state, the write log, the checks and the commit order (docs/scale.md).

A tool declared ``remote=True`` (with ``num_cpus``, ``num_gpus``, ``resources``) carries
a :class:`Remote`.  Its calls go to the :class:`RemoteRunner` active in the running
context (:data:`active_runner`, set by ``obelisk.RayExecutor``); with none active they
run in this process like any other tool.  This module imports nothing of Ray: the
runtime only sees the :class:`RemoteRunner` protocol.
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from obelisk.errors import ToolDefinitionError

__all__ = ["Remote", "RemoteRunner", "active_runner", "remote_options"]


@dataclass(frozen=True)
class Remote:
    """Where a remote tool's calls may run: ``num_cpus`` and ``num_gpus`` (counts, may be
    fractions; ``None``: Ray's default, 1 CPU and no GPU) and ``resources`` (custom
    resource name to amount), as Ray's ``.options()`` takes them."""

    num_cpus: float | None = None
    num_gpus: float | None = None
    resources: Mapping[str, float] = field(default_factory=dict)


class RemoteRunner(Protocol):
    """Runs one attempt of a remote tool's call elsewhere and returns its result
    (``tool`` is the :class:`~obelisk.interpreter.tools.tool.Tool`, whose module
    imports this one).

    ``timeout`` (seconds, ``None``: none) bounds the attempt: past it the remote task
    is cancelled and :class:`TimeoutError` raised.  Cancelling the awaiting task cancels
    the remote task.  A worker lost under a call raises
    :class:`~obelisk.errors.WorkerLost` for a tool that is neither ``pure`` nor
    ``idempotent`` (the others are retried by the runner)."""

    async def call(
        self,
        tool: Any,
        function: Callable[..., Any],
        arguments: dict[str, Any],
        timeout: float | None,
    ) -> Any: ...


active_runner: contextvars.ContextVar[RemoteRunner | None] = contextvars.ContextVar(
    "obelisk_remote_runner", default=None
)
"""The runner remote tools' calls go to in this context (``None``: run them here)."""


def remote_options(
    name: str,
    remote: Any,
    num_cpus: Any,
    num_gpus: Any,
    resources: Any,
    context_parameter: str | None,
) -> Remote | None:
    """The :class:`Remote` of tool ``name`` (``None`` unless ``remote`` is true).
    Raises :class:`~obelisk.errors.ToolDefinitionError` for resources without
    ``remote=True``, a negative or non-numeric amount, or a tool with a run context
    (the context stays in the driver's process)."""
    if not isinstance(remote, bool):
        raise ToolDefinitionError(f"tool {name!r}: remote must be true or false, got {remote!r}")
    asked = {"num_cpus": num_cpus, "num_gpus": num_gpus}
    if not remote:
        if any(v is not None for v in asked.values()) or resources:
            raise ToolDefinitionError(
                f"tool {name!r}: num_cpus, num_gpus and resources need remote=True"
            )
        return None
    amounts = dict(resources or {})
    for key, value in {**asked, **amounts}.items():
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
            raise ToolDefinitionError(f"tool {name!r}: {key} must be a number >= 0, got {value!r}")
    if context_parameter is not None:
        raise ToolDefinitionError(
            f"tool {name!r}: remote=True needs a function without a run context "
            "(the context stays in the driver's process)"
        )
    return Remote(num_cpus, num_gpus, amounts)
