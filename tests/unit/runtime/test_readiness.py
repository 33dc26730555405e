"""Issue 26 point 2: ``Readiness`` has a graphlib-like interface and owns what it tracks.

``prepare`` makes ready what waits for nothing, ``pop_ready`` hands out the lowest
index first (calls ready together start in plan order), ``start`` and ``done`` mark a
call started and settled (``done`` returns the calls that became ready through it),
``hold``/``release``/``reject`` serve a plan that grows while it runs.  A call is
never ready twice.
"""

from __future__ import annotations

from typing import Any

import obelisk
from obelisk.interpreter.analysis.check import check
from obelisk.interpreter.analysis.graph import PlanGraph
from obelisk.interpreter.runtime.readiness import Readiness


@obelisk.tool
def make(value: Any = None) -> Any:
    """Returns its value."""
    return value


def _graph(plan: list[dict[str, Any]]) -> PlanGraph:
    checked = check(plan, [make], {})
    assert checked.graph is not None, checked.diagnostics
    return checked.graph


# 0 and 1 wait for nothing; 2 reads what 0 and 1 write; 3 reads what 0 writes; 4 reads 2's
PLAN = [
    {"_tool": "make", "value": 1, "_outputPath": "†state.a"},
    {"_tool": "make", "value": 2, "_outputPath": "†state.b"},
    {"_tool": "make", "value": ["†state.a", "†state.b"], "_outputPath": "†state.c"},
    {"_tool": "make", "value": "†state.a", "_outputPath": "†state.d"},
    {"_tool": "make", "value": "†state.c", "_outputPath": "†state.e"},
]


def _drain(calls: Readiness) -> list[int]:
    popped = []
    while calls.has_ready():
        popped.append(calls.pop_ready())
    return popped


def test_prepare_makes_ready_what_waits_for_nothing_in_plan_order() -> None:
    calls = Readiness(_graph(PLAN))
    assert calls.prepare() == [0, 1]
    assert [calls.is_waiting(i) for i in range(5)] == [False, False, True, True, True]
    assert _drain(calls) == [0, 1]
    assert not calls.has_ready()


def test_done_returns_the_calls_it_made_ready_in_plan_order() -> None:
    calls = Readiness(_graph(PLAN))
    calls.prepare()
    for index in _drain(calls):
        calls.start(index)
    assert calls.done(1) == []  # 2 still waits for 0
    assert calls.done(0) == [2, 3]
    assert calls.is_settled(0) and calls.is_settled(1) and not calls.all_settled()
    assert _drain(calls) == [2, 3]
    calls.start(3)
    assert calls.done(3) == []
    calls.start(2)
    assert calls.done(2) == [4]


def test_calls_ready_together_start_in_plan_order_whatever_settles_first() -> None:
    calls = Readiness(_graph(PLAN))
    calls.prepare()
    _drain(calls)
    assert calls.done(0) == [3]  # 3 is ready first ...
    assert calls.done(1) == [2]
    assert _drain(calls) == [2, 3]  # ... but 2 comes out first


def test_a_call_is_never_ready_twice() -> None:
    calls = Readiness(_graph(PLAN))
    calls.prepare()
    first = calls.pop_ready()
    calls.start(first)
    assert not calls.release(first)  # started: releasing it changes nothing
    assert not calls.reject(first)
    calls.requeue([calls.pop_ready()])  # handed out, could not start: ready again, once
    assert _drain(calls) == [1]
    assert calls.release(3) is False  # waits for 0
    assert calls.done(0) == [3]
    assert calls.release(3) is False  # already ready
    assert _drain(calls) == [3]


def test_hold_and_release() -> None:
    calls = Readiness(_graph(PLAN))
    calls.hold(1)
    assert calls.prepare() == [0]  # held: not ready
    assert calls.is_held(1) and calls.unstarted(1)
    assert calls.release(1) is True
    assert not calls.is_held(1)
    assert _drain(calls) == [0, 1]
    calls.start(0)
    calls.hold(0)  # a started call is left alone
    assert not calls.is_held(0)


def test_hold_takes_a_ready_call_back() -> None:
    calls = Readiness(_graph(PLAN))
    calls.prepare()
    calls.hold(0)
    assert _drain(calls) == [1]
    calls.start(1)
    assert calls.done(1) == []
    assert calls.release(0) is True
    assert _drain(calls) == [0]


def test_reject_settles_an_unstarted_call_without_running_it() -> None:
    calls = Readiness(_graph(PLAN))
    calls.prepare()
    assert calls.reject(1) is True
    assert calls.is_started(1) and not calls.unstarted(1)
    assert _drain(calls) == [0]  # no longer ready
    assert calls.reject(1) is False
    calls.start(0)
    calls.done(0)
    assert calls.done(1) == [2]  # once it commits, its readers go on


def test_a_stopping_run_wakes_nobody_and_a_cancelled_call_frees_nobody() -> None:
    calls = Readiness(_graph(PLAN))
    calls.prepare()
    _drain(calls)
    assert calls.done(0, wake=False) == []
    assert not calls.is_waiting(3)  # its count went down all the same
    assert not calls.has_ready()
    calls.cancel(1)
    assert calls.is_settled(1) and calls.is_waiting(2)  # 2 still waits for 1


def test_grow_holds_the_new_call_and_makes_its_readers_wait() -> None:
    first = [*PLAN[:1], {"_tool": "make", "value": "†state.z", "_outputPath": "†state.y"}]
    calls = Readiness(_graph(first))
    assert calls.prepare() == [0, 1]  # nobody writes state.z yet
    grown = [*first, {"_tool": "make", "value": 3, "_outputPath": "†state.z"}]
    calls.grow(_graph(grown), 2)
    assert calls.is_held(2) and calls.is_waiting(1)
    assert _drain(calls) == [0]  # 1 waits for 2 now
    assert calls.release(2) is True
    calls.start(calls.pop_ready())
    assert calls.done(2) == [1]
    assert calls.settled[2] and not calls.settled[1]
