"""Issue 26 point 2: the engine takes three small objects.

``RunSettings`` (frozen, validated once when made, shared by a ``Loop``'s runs), a
``Resumption`` (what a resumed run brings) and ``Hooks`` (one observer protocol for
event listeners and a durable run's journal).
"""

from __future__ import annotations

import asyncio
import dataclasses
import math
from typing import Any

import pytest

import obelisk
from obelisk.errors import UsageError
from obelisk.interpreter.analysis.check import check
from obelisk.interpreter.runtime.engine import Engine
from obelisk.interpreter.runtime.events import Event
from obelisk.interpreter.runtime.hooks import Hooks, Observer
from obelisk.interpreter.runtime.records import CallRecord
from obelisk.interpreter.runtime.resumption import Resumption
from obelisk.interpreter.runtime.settings import RunSettings
from obelisk.interpreter.runtime.state import State
from obelisk.interpreter.tools.registry import Registry
from obelisk.interpreter.tools.tool import Tool
from obelisk.limits import DEFAULT_LIMITS
from obelisk.testing import ScriptedModel


@obelisk.tool
def double(n: int) -> int:
    """Twice n."""
    return 2 * n


PLAN = [
    {"_tool": "double", "n": 1, "_outputPath": "†state.a"},
    {"_tool": "double", "n": "†state.a", "_outputPath": "†state.b"},
]


def test_run_settings_defaults() -> None:
    settings = RunSettings()
    assert (settings.concurrency, settings.fail_fast, settings.timeout) == (64, False, None)
    assert settings.limits is DEFAULT_LIMITS
    assert (settings.output_validation, settings.context) == ("strict", None)
    with pytest.raises(dataclasses.FrozenInstanceError):
        settings.concurrency = 2  # type: ignore[misc]


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ({"concurrency": 0}, "concurrency must be an integer >= 1, got 0"),
        ({"concurrency": True}, "concurrency must be an integer >= 1, got True"),
        ({"concurrency": 2.0}, "concurrency must be an integer >= 1, got 2.0"),
        ({"timeout": 0}, "timeout must be a number of seconds > 0, got 0"),
        ({"timeout": True}, "timeout must be a number of seconds > 0, got True"),
        ({"timeout": math.inf}, "timeout must be a number of seconds > 0, got inf"),
        ({"timeout": "1"}, "timeout must be a number of seconds > 0, got '1'"),
        ({"limits": {}}, "limits must be an obelisk.Limits, got dict"),
        (
            {"output_validation": "loose"},
            "output_validation must be 'strict', 'warn' or 'off', got 'loose'",
        ),
    ],
)
def test_run_settings_are_validated_when_made(given: dict[str, Any], message: str) -> None:
    with pytest.raises(UsageError) as raised:
        RunSettings(**given)
    assert str(raised.value) == message


def test_run_settings_check_in_a_fixed_order() -> None:
    with pytest.raises(UsageError, match="concurrency"):
        RunSettings(concurrency=0, timeout=-1, output_validation="x")
    with pytest.raises(UsageError, match="timeout"):
        RunSettings(timeout=-1, output_validation="x")


def test_obelisk_run_reports_the_same_errors() -> None:
    with pytest.raises(UsageError, match="concurrency must be an integer >= 1, got 0"):
        obelisk.run_sync(PLAN, [double], concurrency=0)
    with pytest.raises(UsageError, match="timeout must be a number of seconds > 0"):
        obelisk.run_sync(PLAN, [double], timeout=-1)


def test_a_loop_builds_one_run_settings_for_its_runs() -> None:
    box = object()
    loop = obelisk.Loop(
        ScriptedModel([]), [double], concurrency=3, fail_fast=True, context=box,
        output_validation="warn",
    )  # fmt: skip
    assert loop.settings == RunSettings(3, True, None, DEFAULT_LIMITS, "warn", box)
    assert (loop.concurrency, loop.fail_fast, loop.output_validation) == (3, True, "warn")
    assert loop.context is box
    with pytest.raises(UsageError, match="concurrency must be an integer >= 1, got 0"):
        obelisk.Loop(ScriptedModel([]), [double], concurrency=0)


class Watcher(Observer):
    """Overrides two call-life points and the events."""

    def __init__(self) -> None:
        self.seen: list[Any] = []

    def started(self, record: CallRecord, tool: Tool) -> None:
        self.seen.append(("started", record.index, tool.name))

    def committed(self, record: CallRecord, entries: Any) -> None:
        self.seen.append(("committed", record.index, [e.path for e in entries]))

    def event(self, event: Event) -> None:
        self.seen.append(event.event)


def _engine(hooks: Hooks, resumption: Resumption | None = None) -> Engine:
    registry = Registry.coerce([double])
    checked = check(PLAN, registry, None)
    assert checked.plan is not None and checked.graph is not None
    state = State(None, None, None)
    return Engine(checked.plan, checked.graph, registry, state, RunSettings(), resumption, hooks)


def test_hooks_call_each_observer_at_the_points_it_overrides() -> None:
    watcher, events = Watcher(), []
    hooks = Hooks([watcher, events.append])
    assert hooks.events and hooks.calls and not hooks.durable
    result = asyncio.run(_engine(hooks).run())
    assert result.state == {"a": 2, "b": 4}
    calls = [seen for seen in watcher.seen if isinstance(seen, tuple)]
    assert calls == [
        ("started", 0, "double"),
        ("committed", 0, ["†state.a"]),
        ("started", 1, "double"),
        ("committed", 1, ["†state.b"]),
    ]
    names = [event.event for event in events]
    assert names[0] == "run_started" and names[-1] == "run_finished"
    assert [seen for seen in watcher.seen if isinstance(seen, str)] == names


def test_no_observer_no_work() -> None:
    hooks = Hooks()
    assert not (hooks.events or hooks.calls or hooks.durable)
    assert Hooks([Observer()]).calls is False  # nothing overridden: nothing called


def test_a_resumption_replays_what_ran() -> None:
    first = asyncio.run(_engine(Hooks(), Resumption("r1")).run())
    assert first.run_id == "r1"
    watcher = Watcher()
    again = asyncio.run(_engine(Hooks([watcher]), Resumption("r1", replay=first.outcomes)).run())
    assert again.state == first.state
    assert not any(seen[0] == "started" for seen in watcher.seen if isinstance(seen, tuple))
