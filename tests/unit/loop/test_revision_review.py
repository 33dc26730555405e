"""Issue 27 exercised as a user would (review): what a step leaves for later never
runs early, and a call left out before it ran is superseded (docs/loop.md, "How a
plan evolves")."""

from __future__ import annotations

from typing import Any

import obelisk
from obelisk import Loop, ScriptedModel

RAN: list[str] = []


@obelisk.tool(effects={"billing": "read"})
def check_history(customer: str) -> dict[str, Any]:
    """The customer's billing history."""
    RAN.append(f"check {customer}")
    return {"chargeback": True}


@obelisk.tool(effects={"billing": "write"})
def refund(customer: str) -> str:
    """Refund the customer (a side effect)."""
    RAN.append(f"refund {customer}")
    return "rf-1"


@obelisk.tool
def fails(n: int) -> int:
    """Always fails."""
    RAN.append(f"fails {n}")
    raise ValueError("down")


@obelisk.tool
def charge(n: int) -> int:
    """Charge n (a side effect)."""
    RAN.append(f"charge {n}")
    return n


CHECK = {"_tool": "check_history", "customer": "c", "_outputPath": "†state.history"}
REFUND = {"_tool": "refund", "customer": "c", "_outputPath": "†state.refund"}
CHECK_AFTER = {"_tool": "check_history", "customer": "after", "_outputPath": "†state.after"}


def test_a_step_never_runs_a_call_behind_one_it_leaves_for_later() -> None:
    # #2 reads billing after #1 writes it (a world-effect edge): in step mode the
    # first turn runs #0 only; #2 used to start as soon as #1 was set aside.
    RAN.clear()
    model = ScriptedModel(
        [
            {"calls": [CHECK, REFUND, CHECK_AFTER], "output": None},
            {"calls": [CHECK, REFUND, CHECK_AFTER], "output": None},
            {"calls": [CHECK, REFUND, CHECK_AFTER], "output": "†state.after"},
        ]
    )
    result = Loop(model, [check_history, refund], advance="step").run_sync()
    first = result.turns[0].run
    assert first is not None
    assert [c.status for c in first.calls] == ["succeeded", "skipped", "skipped"]
    assert RAN[:1] == ["check c"] and RAN.index("refund c") < RAN.index("check after")
    (plan,) = [m for m in model.requests[1].to_data()["context"] if m["type"] == "plan"]
    assert [c["_status"] for c in plan["plan"]] == ["succeeded", "planned", "planned"]
    (state,) = [m for m in model.requests[1].to_data()["context"] if m["type"] == "state"]
    assert state["state"] == {"history": {"chargeback": True}}
    assert result.output == {"chargeback": True} and RAN.count("refund c") == 1


def test_a_skipped_call_left_out_is_superseded_not_dropped() -> None:
    RAN.clear()
    failing = {"_tool": "fails", "n": 1, "_outputPath": "†state.f"}
    reader = {"_tool": "charge", "n": "†state.f", "_outputPath": "†state.c"}
    other = {"_tool": "charge", "n": 2, "_outputPath": "†state.d"}
    model = ScriptedModel(
        [
            {"calls": [failing, reader], "output": None},
            {"calls": [other], "output": "†state.d"},
        ]
    )
    result = Loop(model, [fails, charge]).run_sync()
    changes = [(c.kind, c.label, c.reason) for c in result.revisions[1].diff.changes]
    assert changes == [
        ("added", "#0 charge", "a new call"),
        ("dropped", "#0 fails", "not in revision 2; failed in revision 1, writes stand"),
        ("superseded", "#1 charge", "not in revision 2 and never started: it never runs"),
    ]
    assert RAN == ["fails 1", "charge 2"]


def test_a_call_written_again_without_its_id_is_kept() -> None:
    # a model that leaves out the _id it gave a call repeats that call: it never runs
    # twice; a second identical call in the same answer is still a second call
    RAN.clear()
    first = {"_tool": "charge", "n": 1, "_outputPath": "†state.a", "_id": "pay"}
    again = {"_tool": "charge", "n": 1, "_outputPath": "†state.a"}
    for stream in (False, True):
        RAN.clear()
        model = ScriptedModel(
            [{"calls": [first], "output": None}, {"calls": [again, again], "output": "†state.a"}]
        )
        result = Loop(model, [charge], stream=stream).run_sync()
        changes = [(c.kind, c.label) for c in result.revisions[1].diff.changes]
        assert changes == [("kept", "#0 charge"), ("added", "#1 charge")]
        assert RAN == ["charge 1", "charge 1"]


A = {"_tool": "charge", "n": 1, "_outputPath": "†state.a"}
B = {"_tool": "charge", "n": "†state.a", "_outputPath": "†state.b"}


def test_a_step_tells_the_model_and_an_output_with_no_calls_ends_it() -> None:
    # the model is told that planned calls run only when written again; an answer
    # with an output and no calls leaves them out (superseded) and its output is taken
    # (it used to be ignored, turn after turn, until max_turns)
    RAN.clear()
    model = ScriptedModel([{"calls": [A, B], "output": None}, {"calls": [], "output": "†state.a"}])
    result = Loop(model, [charge], advance="step", max_turns=3).run_sync()
    assert result.status == "completed" and result.output == 1 and RAN == ["charge 1"]
    texts = [m["text"] for m in model.requests[1].to_data()["context"] if m["type"] == "text"]
    assert texts[-1].startswith("Notice: calls whose _status is planned have not run")
    first = [m for m in model.requests[0].to_data()["context"] if m["type"] == "text"]
    assert not any(m["text"].startswith("Notice") for m in first)
    changes = [(c.kind, c.label) for c in result.revisions[-1].diff.changes]
    assert changes == [("dropped", "#0 charge"), ("superseded", "#1 charge")]
