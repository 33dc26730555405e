"""What the engine tells those who watch a run, and when: :class:`Hooks`
(docs/semantics.md, docs/durable.md).

One protocol serves everyone who watches a run: the ``on_event`` listeners, a
durable run's journal, and later tracing.  An :class:`Observer` overrides the
methods it wants; a plain callable taking an
:class:`~obelisk.interpreter.runtime.events.Event` is an observer of events only.
:class:`Hooks` gathers a run's observers and calls, for each point of a call's
life, only those that override it, on the event loop's thread, in the order given.

The order is what makes a crash safe to resume (docs/durable.md):
:meth:`Observer.started` receives a call's *intent* (its resolved arguments) when it
is dispatched, and :meth:`Observer.invoking` is called just before its tool runs;
a journal must not return from it before that intent is durable.  So a call whose
tool may have run always has an intent in the journal; one whose outcome is missing
too was in flight.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import ClassVar

from obelisk.interpreter.runtime.approvals import PendingApproval
from obelisk.interpreter.runtime.events import Emitter, Event, Listener
from obelisk.interpreter.runtime.records import CallOutcome, CallRecord
from obelisk.interpreter.runtime.write_log import WriteEntry
from obelisk.interpreter.tools.tool import Tool

__all__ = ["Hooks", "Observer"]

_CALL_POINTS = ("started", "invoking", "settled", "committed", "awaiting")


_NO_POINTS: dict[str, tuple[Callable[..., None], ...]] = {name: () for name in _CALL_POINTS}
"""The call-life points of hooks without observers (shared, never changed)."""

_SILENT = Emitter(())
"""The emitter of hooks without listeners (it keeps no state: nobody can fail)."""


class Observer:
    """Watches a run (see the module docstring): every method does nothing here;
    override those you need.  An exception from a call-life method stops the run with
    it; one from :meth:`event` is reported as a ``RuntimeWarning`` and the run goes on
    (as for ``on_event`` listeners).  ``durable`` is true for an observer that
    journals the run (docs/durable.md): then a tool with an ``obelisk.Context``
    parameter gets ``deps=None`` instead of failing when the run has no context."""

    durable: ClassVar[bool] = False

    def event(self, event: Event) -> None:
        """A run event (the ``on_event`` stream, docs/semantics.md)."""

    def started(self, record: CallRecord, tool: Tool) -> None:
        """Call ``record.index`` is dispatched with ``record.arguments`` (its intent)."""

    def invoking(self, index: int) -> None:
        """The tool of call ``index`` runs next: a journal makes its intent durable first."""

    def settled(self, index: int, outcome: CallOutcome) -> None:
        """Call ``index`` ran (or was decided): what a resumed run replays."""

    def committed(self, record: CallRecord, entries: Sequence[WriteEntry]) -> None:
        """Call ``record.index`` is over (any status) and ``entries`` were written."""

    def awaiting(self, pending: PendingApproval) -> None:
        """A call waits for a person."""


def _overrides(observer: Observer, name: str) -> Callable[..., None] | None:
    """``observer``'s method ``name`` when it is not :class:`Observer`'s own."""
    method = getattr(observer, name)
    return None if getattr(method, "__func__", None) is getattr(Observer, name) else method


class Hooks:
    """A run's observers (:class:`Observer` objects, or event listeners: callables
    taking an :class:`~obelisk.interpreter.runtime.events.Event`), in order.

    ``events`` is true when someone receives events (the engine builds them only
    then), ``calls`` when someone watches call-life points, ``durable`` when an
    observer journals the run.  ``emit(event)`` hands an event to every listener.
    """

    __slots__ = ("_points", "calls", "durable", "emit", "events", "observers")

    def __init__(self, observers: Sequence[Observer | Listener] = ()) -> None:
        self.observers = tuple(observers)
        if not self.observers:  # most runs: nobody watches (nothing to work out)
            self.emit, self.events, self.calls, self.durable = _SILENT, False, False, False
            self._points = _NO_POINTS
            return
        listeners: list[Listener] = []
        points: dict[str, list[Callable[..., None]]] = {name: [] for name in _CALL_POINTS}
        for observer in self.observers:
            if not isinstance(observer, Observer):
                listeners.append(observer)  # a plain listener: events only
                continue
            for name in ("event", *_CALL_POINTS):
                method = _overrides(observer, name)
                if method is not None:
                    (listeners if name == "event" else points[name]).append(method)
        self.emit = Emitter(listeners)
        self.events = bool(listeners)
        self._points = {name: tuple(methods) for name, methods in points.items()}
        self.calls = any(self._points.values())
        self.durable = any(getattr(o, "durable", False) for o in self.observers)

    @classmethod
    def of(cls, listeners: Sequence[Listener] = (), recorder: Observer | None = None) -> Hooks:
        """The hooks of a run with ``listeners`` and, for a durable run, its ``recorder``."""
        return cls((*listeners, recorder) if recorder is not None else listeners)

    def started(self, record: CallRecord, tool: Tool) -> None:
        for method in self._points["started"]:
            method(record, tool)

    def invoking(self, index: int) -> None:
        for method in self._points["invoking"]:
            method(index)

    def settled(self, index: int, outcome: CallOutcome) -> None:
        for method in self._points["settled"]:
            method(index, outcome)

    def committed(self, record: CallRecord, entries: Sequence[WriteEntry]) -> None:
        for method in self._points["committed"]:
            method(record, entries)

    def awaiting(self, pending: PendingApproval) -> None:
        for method in self._points["awaiting"]:
            method(pending)

    def __repr__(self) -> str:
        return f"Hooks({list(self.observers)!r})"
