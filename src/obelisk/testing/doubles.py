"""Test doubles: fake tools that follow a script, and an event recorder (docs/testing.md).

:class:`FakeTools` is a :class:`~obelisk.Registry` with the same tool names and
schemas as yours, whose functions return scripted (or generated) outputs, sleep,
raise and record every call, so it goes wherever ``tools=`` does (``obelisk.run``,
``obelisk.check``, ``obelisk.Loop``).  :class:`RecordingSubscriber` collects the
events of a run.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import hashlib
import json
import random
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from typing import Any, TypeAlias

from obelisk.errors import UsageError
from obelisk.interpreter.runtime.events import Event
from obelisk.interpreter.simulate.samples import SchemaSampler
from obelisk.interpreter.tools.options import Outcome
from obelisk.interpreter.tools.registry import Registry, ToolsLike
from obelisk.interpreter.tools.tool import Tool

__all__ = ["FakeToolError", "FakeTools", "RecordingSubscriber"]

Script: TypeAlias = Any
"""A value, or a callable of the arguments (a dict) that returns one."""


class FakeToolError(RuntimeError):
    """What a fake raises for a scripted failure given as ``True``, or for a call
    whose drawn choice is its error arm."""


def _fingerprint(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=repr, ensure_ascii=False)


_SAMPLERS: dict[int, tuple[Any, SchemaSampler]] = {}
"""Samplers by output schema (its identity; the schema is kept with it), shared by
every ``FakeTools`` made from the same tools: a property test makes one per example.
Emptied past :data:`_MAX_SAMPLERS` entries."""

_MAX_SAMPLERS = 1024


def _sampler(schema: Any) -> SchemaSampler:
    """The sampler of an output schema (``None``: any JSON value); a sampler keeps
    no state between draws."""
    schema = schema if schema is not None else True
    kept = _SAMPLERS.get(id(schema))
    if kept is not None and kept[0] is schema:
        return kept[1]
    sampler = SchemaSampler(schema)
    if len(_SAMPLERS) >= _MAX_SAMPLERS:
        _SAMPLERS.clear()
    _SAMPLERS[id(schema)] = (schema, sampler)
    return sampler


class FakeTools(Registry):
    """A registry of fakes with the same names and schemas as ``tools``.

    ``tools``: anything :meth:`obelisk.Registry.coerce` takes.  Each function tool
    is replaced by a fake of the same kind (``async`` stays ``async``, sync stays
    sync) that validates its arguments exactly as the real tool does.  Latent tools
    stay latent.  A sync fake answers on the event loop, as a ``blocking=False``
    tool does (no worker thread: a thread costs more than a fake's work), unless
    ``threads=True`` or ``delays`` scripts a wait for its tool: then it runs in a
    worker thread like the real one, so that its waits overlap.  Per tool name:

    - ``outputs``: the result, or a callable ``arguments -> result``.  Without one,
      the result is generated from the tool's output schema (any small JSON value
      when it has none) by a :class:`random.Random` seeded with ``seed``, the tool
      name and the arguments: the same call always gets the same result, whatever
      the timing, so a plan's run is deterministic.
    - ``delays``: seconds to wait before answering, or a callable ``arguments ->
      seconds`` (``asyncio.sleep`` in async fakes, ``time.sleep`` in sync ones).
    - ``failures``: an exception (instance or class) to raise, ``True`` for a
      :class:`FakeToolError`, or a callable ``arguments -> exception | None``.
    - ``choices``: which alternative of its output path each call writes, by call
      index (an :class:`~obelisk.testing.OutcomeAssignment` from
      :func:`~obelisk.testing.outcome_assignments`).  A tool with ``outcomes``
      returns ``Outcome(choice, result)``; for any other tool the last alternative
      of two or more means "raise" (its error arm), another alternative ``k > 0``
      returns ``Outcome(k, result)``.  The fakes learn which call is which from the
      run's events: pass ``on_event=fakes.observe``.  Two calls of one tool with
      equal arguments in flight at once may swap their choices.

    ``calls`` lists ``(tool name, arguments)`` of every fake invocation in the order
    they started (thread-safe); :meth:`calls_to` filters it by tool.  Unknown
    names in ``outputs``, ``delays``, ``failures`` raise
    :class:`~obelisk.errors.UsageError`.
    """

    def __init__(
        self,
        tools: ToolsLike,
        *,
        outputs: Mapping[str, Script] | None = None,
        delays: Mapping[str, float | Callable[[dict[str, Any]], float]] | None = None,
        failures: Mapping[str, Any] | None = None,
        choices: Mapping[int, int] | None = None,
        seed: int = 0,
        threads: bool = False,
    ) -> None:
        source = Registry.coerce(tools)
        super().__init__()
        self.threads = threads
        self.outputs = dict(outputs or {})
        self.delays = dict(delays or {})
        self.failures = dict(failures or {})
        self.choices = dict(choices or {})
        self.alternatives: dict[int, int] = dict(getattr(choices, "alternatives", {}) or {})
        self.seed = seed
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self._lock = threading.Lock()
        self._pending: dict[str, list[tuple[int, Any]]] = {}
        self._observed = False
        self._samplers: dict[str, SchemaSampler] = {}
        for name, given in (("outputs", outputs), ("delays", delays), ("failures", failures)):
            unknown = sorted(set(given or ()) - set(source.names()))
            if unknown:
                raise UsageError(f"FakeTools {name}= names unknown tools: {', '.join(unknown)}")
        for tool in source:
            self.add(self._fake(tool))
        self.originals = source

    # -- building fakes -----------------------------------------------------------
    def _fake(self, tool: Tool) -> Tool:
        if tool.latent:
            return tool
        with contextlib.suppress(Exception):  # made once on the tool, not on each fake
            tool.closed_output_schema  # noqa: B018  # (what went wrong: again on the fake)
        fake = copy.copy(tool)
        name = tool.name

        if tool.is_async:

            async def run_async(**arguments: Any) -> Any:
                index = self._start(name, arguments)
                pause = self._delay(name, arguments)
                if pause:
                    await asyncio.sleep(pause)
                return self._answer(tool, index, arguments)

            fake.function = run_async
        else:

            def run_sync(**arguments: Any) -> Any:
                index = self._start(name, arguments)
                pause = self._delay(name, arguments)
                if pause:
                    time.sleep(pause)
                return self._answer(tool, index, arguments)

            fake.function = run_sync
            if not (self.threads or name in self.delays or tool.isolation == "process"):
                fake.blocking = False  # answered on the event loop: no thread hop
        fake.is_async = tool.is_async
        return fake

    # -- one invocation -----------------------------------------------------------
    def _start(self, name: str, arguments: dict[str, Any]) -> int | None:
        with self._lock:
            self.calls.append((name, dict(arguments)))
            pending = self._pending.get(name)
            if pending:
                for position, (index, expected) in enumerate(pending):
                    if expected == arguments:
                        del pending[position]
                        return index
            return None

    def _delay(self, name: str, arguments: dict[str, Any]) -> float:
        delay = self.delays.get(name, 0.0)
        seconds = delay(dict(arguments)) if callable(delay) else delay
        if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or seconds < 0:
            raise UsageError(
                f"FakeTools delays= for {name!r} must give seconds >= 0, got {seconds!r}"
            )
        return float(seconds)

    def _answer(self, tool: Tool, index: int | None, arguments: dict[str, Any]) -> Any:
        name = tool.name
        if self.choices and not self._observed:
            raise UsageError(
                "FakeTools(choices=...) must see the run's events: pass on_event=fakes.observe"
            )
        self._fail_as_scripted(name, arguments)
        choice = self.choices.get(index) if index is not None else None
        alternatives = self.alternatives.get(index, 0) if index is not None else 0
        if (
            choice is not None
            and not tool.outcomes
            and alternatives >= 2
            and choice == alternatives - 1
        ):
            raise FakeToolError(f"{name} raised, as call #{index}'s choice says")
        value = self._output(tool, arguments)
        if tool.outcomes:
            return Outcome(choice or 0, value)
        if choice:
            return Outcome(choice, value)
        return value

    def _fail_as_scripted(self, name: str, arguments: dict[str, Any]) -> None:
        """Raise what ``failures=`` scripts for this call of ``name``, if anything."""
        failure = self.failures.get(name)
        if failure is None:
            return
        exc = failure(dict(arguments)) if _is_script(failure) else failure
        if exc is True:
            raise FakeToolError(f"scripted failure of {name}")
        if isinstance(exc, type) and issubclass(exc, BaseException):
            raise exc(f"scripted failure of {name}")
        if isinstance(exc, BaseException):
            raise exc
        if exc not in (None, False):
            raise UsageError(f"FakeTools failures= for {name!r} gave {exc!r}, not an exception")

    def _output(self, tool: Tool, arguments: dict[str, Any]) -> Any:
        name = tool.name
        if name in self.outputs:
            script = self.outputs[name]
            return script(dict(arguments)) if _is_script(script) else copy.deepcopy(script)
        sampler = self._samplers.get(name)
        if sampler is None:
            sampler = self._samplers[name] = _sampler(tool.output_schema)
        key = f"{self.seed}\0{name}\0{_fingerprint(arguments)}".encode()
        return sampler.sample(random.Random(hashlib.sha256(key).digest()))

    # -- the run's events -----------------------------------------------------------
    def observe(self, event: Event) -> None:
        """An ``on_event`` handler: tells the fakes which call each invocation is,
        for ``choices``.  Pass ``on_event=fakes.observe`` (or in a list with others)."""
        self._observed = True
        if event.event != "call_started":
            return
        name: str = getattr(event, "tool")  # noqa: B009
        tool = self.get(name)
        if tool is None or tool.latent:
            return
        try:
            expected = tool.validate_arguments(getattr(event, "arguments"))  # noqa: B009
        except Exception:
            return  # the call fails validation and never reaches its fake
        with self._lock:
            self._pending.setdefault(name, []).append((getattr(event, "call"), expected))  # noqa: B009

    def calls_to(self, name: str) -> list[dict[str, Any]]:
        """The arguments of every call to the tool ``name``, in the order they started."""
        with self._lock:
            return [arguments for tool, arguments in self.calls if tool == name]

    def reset(self) -> None:
        """Forget the recorded calls (for a fresh run with the same fakes)."""
        with self._lock:
            self.calls.clear()
            self._pending.clear()

    def __repr__(self) -> str:
        return f"FakeTools({self.names()!r}, calls={len(self.calls)})"


def _is_script(value: Any) -> bool:
    return callable(value) and not (isinstance(value, type) and issubclass(value, BaseException))


class RecordingSubscriber:
    """An ``on_event`` handler that keeps every :class:`obelisk.Event` it gets.

    ``events``: all of them, in order (thread-safe).  :meth:`of` filters by name,
    :meth:`names` lists the names, :meth:`for_call` the events of one call, and
    :meth:`to_dicts` gives the JSON shapes without ``time`` (docs/semantics.md).

    >>> import obelisk
    >>> events = RecordingSubscriber()
    >>> echo = obelisk.Tool.from_function(lambda value: value, name="echo")
    >>> _ = obelisk.run_sync([{"_tool": "echo", "value": 1}], [echo], on_event=events)
    >>> events.names()
    ['run_started', 'call_ready', 'call_started', 'call_succeeded', 'run_finished']
    """

    def __init__(self) -> None:
        self.events: list[Event] = []
        self._lock = threading.Lock()

    def __call__(self, event: Event) -> None:
        with self._lock:
            self.events.append(event)

    def of(self, *names: str) -> list[Event]:
        """The events whose ``event`` is one of ``names`` (``"call_started"``, ...)."""
        with self._lock:
            return [event for event in self.events if event.event in names]

    def names(self) -> list[str]:
        """The name of every event, in order."""
        with self._lock:
            return [event.event for event in self.events]

    def for_call(self, index: int) -> list[Event]:
        """The events about call ``index`` (``state_written`` included)."""
        with self._lock:
            found = []
            for event in self.events:
                call = getattr(event, "call", None)
                if call is None and event.event == "state_written":
                    call = getattr(event, "entry").call  # noqa: B009
                if call == index:
                    found.append(event)
            return found

    def to_dicts(self) -> list[dict[str, Any]]:
        """``event.to_dict()`` of every event, without ``time``."""
        with self._lock:
            return [
                {k: v for k, v in event.to_dict().items() if k != "time"} for event in self.events
            ]

    def clear(self) -> None:
        """Forget every event."""
        with self._lock:
            self.events.clear()

    def __iter__(self) -> Iterator[Event]:
        with self._lock:
            return iter(list(self.events))

    def __len__(self) -> int:
        return len(self.events)
