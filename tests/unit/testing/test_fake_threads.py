"""Sync fakes answer on the event loop (no worker thread) unless asked to use one
(docs/testing.md, "FakeTools")."""

from __future__ import annotations

import threading
from typing import Any

import obelisk
from obelisk.testing import FakeTools


def _check(i: int) -> int:
    """A sync tool."""
    return i


check = obelisk.Tool.from_function(_check, name="check")
PLAN = [{"_tool": "check", "i": i, "_outputPath": f"†state.v{i}"} for i in range(3)]


def _threads_of(fakes: FakeTools) -> set[int]:
    seen: set[int] = set()

    def where(arguments: dict[str, Any]) -> int:
        seen.add(threading.get_ident())
        return int(arguments["i"])

    fakes.outputs["check"] = where
    result = obelisk.run_sync(PLAN, fakes)
    assert result.state == {"v0": 0, "v1": 1, "v2": 2}
    return seen


def test_a_sync_fake_runs_on_the_event_loop_by_default() -> None:
    fakes = FakeTools([check])
    assert fakes.get("check").blocking is False
    assert _threads_of(fakes) == {threading.get_ident()}
    assert check.blocking is True  # the real tool is left as it is


def test_threads_true_runs_sync_fakes_in_worker_threads() -> None:
    fakes = FakeTools([check], threads=True)
    assert fakes.get("check").blocking is True
    assert threading.get_ident() not in _threads_of(fakes)


def test_a_scripted_delay_runs_the_fake_in_a_worker_thread() -> None:
    fakes = FakeTools([check], delays={"check": 0.001})
    assert fakes.get("check").blocking is True
    assert threading.get_ident() not in _threads_of(fakes)
