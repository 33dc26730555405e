"""Typed run events, for subscribers and JSON-lines traces (docs/semantics.md).

Every event has ``time`` (seconds since the epoch) and ``to_dict()`` gives
``{"event", ..., "time"}`` with ``event`` one of ``run_started``, ``call_ready``,
``call_started``, ``call_succeeded``, ``call_failed``, ``call_invalid_output``
(a :class:`CallFailed` too), ``call_skipped``,
``call_awaiting_approval``, ``call_policy`` (a run with labels: a call's argument
labels and the policy's decision, before it runs; docs/security.md),
``state_written``, ``run_finished``.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from obelisk.interpreter.runtime.records import RunStatus
from obelisk.interpreter.runtime.write_log import WriteEntry

__all__ = [
    "CallAwaitingApproval",
    "CallFailed",
    "CallInvalidOutput",
    "CallPolicy",
    "CallReady",
    "CallSkipped",
    "CallStarted",
    "CallSucceeded",
    "Emitter",
    "Event",
    "Listener",
    "RunFinished",
    "RunStarted",
    "StateWritten",
    "failure",
]


@dataclass(frozen=True, slots=True)
class Event:
    """Base of the typed events; ``time`` is seconds since the epoch."""

    time: float

    @property
    def event(self) -> str:
        raise NotImplementedError

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"event": self.event}
        for name in self.__slots__:
            if name != "time":  # Python 3.10 repeats the base's slot in each subclass's __slots__
                data[name] = getattr(self, name)
        data["time"] = self.time
        return data


@dataclass(frozen=True, slots=True)
class RunStarted(Event):
    calls: int

    @property
    def event(self) -> str:
        return "run_started"


@dataclass(frozen=True, slots=True)
class CallReady(Event):
    call: int
    tool: str

    @property
    def event(self) -> str:
        return "call_ready"


@dataclass(frozen=True, slots=True)
class CallStarted(Event):
    call: int
    tool: str
    arguments: dict[str, Any]

    @property
    def event(self) -> str:
        return "call_started"


@dataclass(frozen=True, slots=True)
class CallSucceeded(Event):
    call: int
    tool: str
    output: Any

    @property
    def event(self) -> str:
        return "call_succeeded"


@dataclass(frozen=True, slots=True)
class CallFailed(Event):
    call: int
    tool: str
    error: dict[str, Any]

    @property
    def event(self) -> str:
        return "call_failed"


@dataclass(frozen=True, slots=True)
class CallInvalidOutput(CallFailed):
    """A call's tool ran and returned a value that does not fit its output schema
    (status ``invalid_output``, docs/tools.md): its effects may have happened, its
    value was not written.  A :class:`CallFailed`, so listeners of failures see it;
    its name is ``call_invalid_output``."""

    @property
    def event(self) -> str:
        return "call_invalid_output"

    def to_dict(self) -> dict[str, Any]:
        return {
            "event": self.event,
            "call": self.call,
            "tool": self.tool,
            "error": self.error,
            "time": self.time,
        }


def failure(
    invalid_output: bool, at: float, call: int, tool: str, error: dict[str, Any]
) -> CallFailed:
    """The event of a call that ended ``failed``, or ``invalid_output`` when
    ``invalid_output`` is true."""
    kind = CallInvalidOutput if invalid_output else CallFailed
    return kind(at, call, tool, error)


@dataclass(frozen=True, slots=True)
class CallSkipped(Event):
    call: int
    tool: str
    reason: str

    @property
    def event(self) -> str:
        return "call_skipped"


@dataclass(frozen=True, slots=True)
class StateWritten(Event):
    entry: WriteEntry

    @property
    def event(self) -> str:
        return "state_written"

    def to_dict(self) -> dict[str, Any]:
        return {"event": self.event, **self.entry.to_dict()}


@dataclass(frozen=True, slots=True)
class RunFinished(Event):
    status: RunStatus

    @property
    def event(self) -> str:
        return "run_finished"


@dataclass(frozen=True, slots=True)
class CallAwaitingApproval(Event):
    """A call waits for a person: ``approval`` is the id a decision names."""

    call: int
    tool: str
    approval: str
    arguments: dict[str, Any]

    @property
    def event(self) -> str:
        return "call_awaiting_approval"


@dataclass(frozen=True, slots=True)
class CallPolicy(Event):
    """A run with labels decided on a call before it runs (docs/security.md):
    ``action`` is ``allow``, ``ask`` or ``deny``, ``reason`` says why (the flows),
    ``labels`` the arguments' labels by name (each ``Label.to_dict()``), ``reads``
    the references its arguments read, ``result`` the label its result will carry."""

    call: int
    tool: str
    action: str
    reason: str
    labels: dict[str, Any]
    reads: list[str]
    result: dict[str, Any]

    @property
    def event(self) -> str:
        return "call_policy"


Listener = Callable[[Event], None]
"""A function that receives every event of a run (``on_event=``)."""


class Emitter:
    """Hands each event to every listener, in order.  A listener that raises never
    stops the run: the first error of each listener is reported as a
    ``RuntimeWarning``, and the listener keeps receiving events."""

    def __init__(self, listeners: Sequence[Listener]) -> None:
        self.listeners = tuple(listeners)
        self._broken: set[int] = set()

    def __bool__(self) -> bool:
        return bool(self.listeners)

    def __call__(self, event: Event) -> None:
        for listener in self.listeners:
            try:
                listener(event)
            except Exception as exc:
                self._failed(listener, event, exc)

    def _failed(self, listener: Listener, event: Event, exc: Exception) -> None:
        if id(listener) in self._broken:
            return
        self._broken.add(id(listener))
        name = getattr(listener, "__qualname__", None) or repr(listener)
        warnings.warn(
            f"obelisk: the on_event listener {name} raised {type(exc).__name__}: {exc} "
            f"(on {event.event}); the run goes on, and its later errors are not reported",
            RuntimeWarning,
            stacklevel=3,
        )
