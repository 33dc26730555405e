"""Retry from the failed step, for runs kept in memory (issue 27, point 6;
docs/durable.md, "Retry from the failed step"): ``obelisk.resume(result,
retry="failed")`` runs the failed and cancelled calls again, with every call skipped
because of them, and never a call that succeeded."""

from __future__ import annotations

import asyncio
from collections import Counter
from typing import Any

import pytest

import obelisk
from obelisk import Decision

ran: Counter[str] = Counter()
failures: dict[str, int] = {}


@obelisk.tool
def step(name: str) -> str:
    """Count the call; fail while ``failures[name]`` says so."""
    ran[name] += 1
    if failures.get(name, 0) > 0:
        failures[name] -= 1
        raise RuntimeError(f"{name} is down")
    return name.upper()


@obelisk.tool(requires_approval=True)
def pay(amount: int) -> str:
    """Pay (a person approves)."""
    ran["pay"] += 1
    return f"paid {amount}"


@obelisk.tool(requires_approval=True)
def charge(amount: int) -> str:
    """Charge (a person approves); fails while ``failures["pay"]`` says so."""
    ran["pay"] += 1
    if failures.get("pay", 0) > 0:
        failures["pay"] -= 1
        raise RuntimeError("gateway down")
    return f"charged {amount}"


@obelisk.tool
async def slow(name: str) -> str:
    """Takes a while: a fail_fast run cancels it."""
    ran[name] += 1
    await asyncio.sleep(0.2)
    return f"{name}!"


TOOLS = [step, pay, slow]
PLAN: list[dict[str, Any]] = [
    {"_tool": "step", "name": "a", "_outputPath": "†state.a"},
    {"_tool": "step", "name": "flaky", "_outputPath": "†state.f"},
    {"_tool": "step", "name": "†state.f", "_outputPath": "†state.g"},  # skipped: reads f
    {"_tool": "step", "name": "†state.g", "_outputPath": "†state.h"},  # skipped, transitively
    {"_tool": "step", "name": "b", "_outputPath": "†state.b"},
]


@pytest.fixture(autouse=True)
def _fresh() -> None:
    ran.clear()
    failures.clear()


def test_a_flaky_call_and_its_skipped_dependents_run_again_and_nothing_else() -> None:
    failures["flaky"] = 1
    failed = obelisk.run_sync(PLAN, TOOLS)
    assert failed.status == "failed"
    assert [c.status for c in failed.calls] == [
        "succeeded", "failed", "skipped", "skipped", "succeeded",
    ]  # fmt: skip
    done = obelisk.resume_sync(failed, retry="failed")
    assert done.status == "completed"
    assert done.state == {"a": "A", "f": "FLAKY", "g": "FLAKY", "h": "FLAKY", "b": "B"}
    assert [c.status for c in done.calls] == ["succeeded"] * 5
    # the calls that succeeded ran once; the flaky one twice; its dependents once each
    assert ran == Counter({"a": 1, "b": 1, "flaky": 2, "FLAKY": 2})
    assert done.calls[0].output == "A" and done.calls[1].attempts == 1


def test_a_retry_that_fails_again_can_be_retried_again() -> None:
    failures["flaky"] = 2
    first = obelisk.run_sync(PLAN, TOOLS)
    second = obelisk.resume_sync(first, retry="failed")
    assert second.status == "failed" and second.calls[1].error["message"] == "flaky is down"
    third = obelisk.resume_sync(second, retry="failed")
    assert third.status == "completed"
    assert ran["flaky"] == 3 and ran["a"] == 1 and ran["b"] == 1


def test_the_async_form_retries_too() -> None:
    failures["flaky"] = 1
    failed = obelisk.run_sync(PLAN, TOOLS)
    done = asyncio.run(obelisk.resume(failed, retry="failed"))
    assert done.status == "completed" and ran["a"] == 1


def test_calls_cancelled_by_fail_fast_run_again() -> None:
    failures["flaky"] = 1
    plan = [
        {"_tool": "slow", "name": "s", "_outputPath": "†state.s"},
        {"_tool": "step", "name": "flaky", "_outputPath": "†state.f"},
        {"_tool": "step", "name": "†state.s", "_outputPath": "†state.t"},
    ]
    failed = obelisk.run_sync(plan, TOOLS, fail_fast=True)
    assert [c.status for c in failed.calls] == ["cancelled", "failed", "cancelled"]
    done = obelisk.resume_sync(failed, retry="failed")
    assert done.status == "completed"
    assert done.state == {"s": "s!", "f": "FLAKY", "t": "S!"}
    assert ran == Counter({"s": 2, "flaky": 2, "s!": 1})


def test_a_rejected_call_stays_rejected() -> None:
    failures["flaky"] = 1
    plan = [
        {"_tool": "pay", "amount": 5, "_outputPath": "†state.paid"},
        {"_tool": "step", "name": "flaky", "_outputPath": "†state.f"},
    ]
    paused = obelisk.run_sync(plan, TOOLS)
    failed = obelisk.resume_sync(paused, {paused.pending[0].id: Decision.reject("no")})
    assert [c.status for c in failed.calls] == ["failed", "failed"]
    done = obelisk.resume_sync(failed, retry="failed")
    assert [c.status for c in done.calls] == ["failed", "succeeded"]
    assert done.calls[0].error == {"type": "ApprovalRejected", "message": "no"}
    assert ran["pay"] == 0 and ran["flaky"] == 2


@pytest.mark.parametrize(
    ("status", "words"),
    [
        ("completed", "it completed: nothing failed"),
        ("awaiting_approval", "it awaits approvals"),
    ],
)
def test_only_a_failed_run_can_be_retried(status: str, words: str) -> None:
    plan = PLAN[:1] if status == "completed" else [{"_tool": "pay", "amount": 1}]
    result = obelisk.run_sync(plan, TOOLS)
    assert result.status == status
    with pytest.raises(obelisk.UsageError, match=words) as caught:
        obelisk.resume_sync(result, retry="failed")
    assert "retry='failed' takes a failed run" in str(caught.value)
    assert ran["pay"] == 0


def test_a_bad_retry_value_is_refused() -> None:
    failures["flaky"] = 1
    failed = obelisk.run_sync(PLAN, TOOLS)
    with pytest.raises(obelisk.UsageError, match=r"retry must be None .* or 'failed'"):
        obelisk.resume_sync(failed, retry="all")  # type: ignore[arg-type]
    assert ran["flaky"] == 1


def test_a_failed_result_is_retried_once() -> None:
    failures["flaky"] = 1
    failed = obelisk.run_sync(PLAN, TOOLS)
    obelisk.resume_sync(failed, retry="failed")
    with pytest.raises(obelisk.ApprovalError, match="was resumed already"):
        obelisk.resume_sync(failed, retry="failed")
    assert ran["flaky"] == 2


def test_a_retry_is_pinned_to_the_tools_the_run_failed_with() -> None:
    failures["flaky"] = 1
    failed = obelisk.run_sync(PLAN, TOOLS)

    @obelisk.tool(name="step")
    def other(name: str) -> str:
        """Another function under the same name."""
        return name

    with pytest.raises(obelisk.RunMismatch, match="tool 'step' runs another function"):
        obelisk.resume_sync(failed, tools=[other, pay, slow], retry="failed")
    assert ran["flaky"] == 1


def test_without_retry_a_failed_run_resumes_as_before() -> None:
    failures["flaky"] = 1
    failed = obelisk.run_sync(PLAN, TOOLS)
    again = obelisk.resume_sync(failed)
    assert again.status == "failed" and ran["flaky"] == 1  # replayed, not run


def test_a_result_resumed_twice_never_runs_again_what_ran_before_the_first_resume() -> None:
    plan = [
        {"_tool": "step", "name": "a", "_outputPath": "†state.a"},
        {"_tool": "pay", "amount": 1, "_outputPath": "†state.p1"},
        {"_tool": "pay", "amount": 2, "_outputPath": "†state.p2"},
    ]
    paused = obelisk.run_sync(plan, TOOLS)
    once = obelisk.resume_sync(paused, {paused.pending[0].id: True})
    assert sorted(once.outcomes) == [0, 1]  # the replayed call's outcome is kept
    twice = obelisk.resume_sync(once, {once.pending[0].id: True})
    assert twice.status == "completed"
    assert ran == Counter({"a": 1, "pay": 2})


def test_an_approved_call_that_failed_runs_again_under_its_approval() -> None:
    failures["pay"] = 1
    plan = [{"_tool": "charge", "amount": 5, "_outputPath": "†state.paid"}]
    paused = obelisk.run_sync(plan, [charge])
    failed = obelisk.resume_sync(paused, {paused.pending[0].id: True})
    assert failed.status == "failed" and failed.calls[0].error["message"] == "gateway down"
    done = obelisk.resume_sync(failed, retry="failed")
    assert done.status == "completed" and done.pending == ()  # not asked again
    assert done.state == {"paid": "charged 5"} and ran["pay"] == 2


def test_a_failed_model_step_of_a_fixed_plan_asks_the_model_again() -> None:
    summarize = obelisk.Tool.from_schema(
        {
            "name": "summarize",
            "description": "Summarize text.",
            "parameters": {
                "type": "object",
                "properties": {"text": {"type": "string"}},
                "required": ["text"],
            },
            "output_schema": {"type": "string"},
        }
    )
    answers = iter([{"calls": [], "output": 42}] * 4 + [{"calls": [], "output": "short"}])
    model = obelisk.ScriptedModel(respond=lambda request: next(answers))
    plan = [
        {"_tool": "step", "name": "a", "_outputPath": "†state.a"},
        {"_tool": "summarize", "text": "†state.a", "_outputPath": "†state.s"},
    ]
    failed = obelisk.run_sync(plan, [step, summarize], model=model)
    assert failed.status == "failed" and len(model.requests) == 4  # 1 + 3 corrections
    done = obelisk.resume_sync(failed, retry="failed")
    assert done.status == "completed" and done.state == {"a": "A", "s": "short"}
    assert len(model.requests) == 5 and ran["a"] == 1
