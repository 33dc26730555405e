"""Tools that misbehave towards asyncio, Python or the event loop fail their own call;
the run returns with every other call's result, and nothing is printed
(docs/limits.md, "Tools that misbehave")."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

import obelisk


@obelisk.tool
def ok(n: int) -> int:
    """Returns n."""
    return n


def make(function: Any, name: str = "bad", **options: Any) -> obelisk.Tool:
    return obelisk.Tool.from_function(
        function, name=name, description="A misbehaving tool.", **options
    )


def run_bad(bad: obelisk.Tool, **options: Any) -> obelisk.RunResult:
    """``bad`` with an error arm, beside an ordinary call."""
    plan = [
        {"_tool": bad.name, "_outputPath": "†state.bad || †state.error"},
        {"_tool": "ok", "n": 1, "_outputPath": "†state.good"},
    ]
    return obelisk.run_sync(plan, [bad, ok], **options)


def run_bad_without_arm(bad: obelisk.Tool, **options: Any) -> obelisk.RunResult:
    plan = [
        {"_tool": bad.name, "_outputPath": "†state.bad"},
        {"_tool": "ok", "n": 1, "_outputPath": "†state.good"},
    ]
    return obelisk.run_sync(plan, [bad, ok], **options)


# -- point 1: CancelledError and StopIteration are the tool's failure -----------------


async def leaks_cancelled() -> int:
    raise asyncio.CancelledError("leaked by a client library")


def sync_leaks_cancelled() -> int:
    raise asyncio.CancelledError()


def empty_next() -> int:
    return int(next(iter([])))


CANCELLED = [
    (make(leaks_cancelled), "leaked by a client library"),
    (make(leaks_cancelled, timeout=5), "leaked by a client library"),
    (
        make(leaks_cancelled, retry=obelisk.RetryPolicy(attempts=2)),
        "leaked by a client library",
    ),
    (
        make(sync_leaks_cancelled),
        "the tool raised CancelledError, or its task was cancelled, though obelisk did "
        "not cancel the call",
    ),
]


@pytest.mark.parametrize(("bad", "message"), CANCELLED, ids=["async", "timeout", "retry", "sync"])
def test_a_cancelled_error_nobody_asked_for_is_a_failure_the_error_arm_takes(
    bad: obelisk.Tool, message: str, capfd: pytest.CaptureFixture[str]
) -> None:
    result = run_bad(bad)
    error = {"type": "CancelledError", "message": message}
    assert result.status == "completed"
    assert result.state == {"error": {"error": {**error, "tool": "bad", "call": 0}}, "good": 1}
    assert result.calls[0].error == error
    failed = run_bad_without_arm(bad)
    assert [c.status for c in failed.calls] == ["failed", "succeeded"]
    assert failed.calls[0].error == error and failed.state == {"good": 1}
    assert capfd.readouterr() == ("", "")


@pytest.mark.parametrize("blocking", [True, False], ids=["thread", "event-loop"])
def test_a_sync_tool_raising_stop_iteration_is_a_normal_failure(
    blocking: bool, capfd: pytest.CaptureFixture[str]
) -> None:
    result = run_bad_without_arm(make(empty_next, blocking=blocking), timeout=5)
    assert [c.status for c in result.calls] == ["failed", "succeeded"]
    assert result.calls[0].error == {
        "type": "RuntimeError",
        "message": "the tool raised StopIteration",
    }
    assert result.state == {"good": 1}
    assert capfd.readouterr() == ("", "")  # no "interacts badly with generators"


def test_a_stop_iteration_goes_to_the_error_arm() -> None:
    result = run_bad(make(empty_next), timeout=5)
    assert result.status == "completed"
    assert result.state["error"]["error"]["type"] == "RuntimeError"


# -- point 2: exceptions that cannot describe themselves -----------------------------


class Unprintable(Exception):
    def __str__(self) -> str:
        raise RuntimeError("no str")

    def __repr__(self) -> str:
        raise RuntimeError("no repr")


class NotAString(Exception):
    def __str__(self) -> str:
        return 42  # type: ignore[return-value]


def raises_unprintable() -> int:
    raise Unprintable("x")


async def raises_unprintable_async() -> int:
    raise Unprintable("x")


def raises_not_a_string() -> int:
    raise NotAString()


@pytest.mark.parametrize(
    ("function", "name"),
    [
        (raises_unprintable, "Unprintable"),
        (raises_unprintable_async, "Unprintable"),
        (raises_not_a_string, "NotAString"),
    ],
    ids=["sync", "async", "str-not-a-string"],
)
def test_an_exception_that_cannot_describe_itself_gets_a_safe_description(
    function: Any, name: str
) -> None:
    events: list[Any] = []
    result = run_bad_without_arm(make(function), on_event=events.append)
    assert [c.status for c in result.calls] == ["failed", "succeeded"]
    error = {"type": name, "message": f"<unprintable {name} message>"}
    assert result.calls[0].error == error and result.state == {"good": 1}
    assert error in [getattr(event, "error", None) for event in events]
    arm = run_bad(make(function))
    assert arm.state["error"]["error"]["message"] == f"<unprintable {name} message>"
    assert obelisk.RunResult.__repr__(result)  # the result itself prints
