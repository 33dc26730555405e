"""Per-call approvals: pause, decide by id bound to the arguments' hash, resume.

See docs/approvals.md.
"""

from __future__ import annotations

from typing import Any

import pytest

import obelisk
from obelisk import ApprovalError, Decision


def make_tools(calls: list[str]) -> list[obelisk.Tool]:
    @obelisk.tool
    def fetch(key: str) -> str:
        """Fetch a value."""
        calls.append(f"fetch {key}")
        return key.upper()

    @obelisk.tool(requires_approval=True)
    def send_email(to: str, body: str) -> str:
        """Send an email (a person must approve)."""
        calls.append(f"send {to}")
        return f"sent to {to}"

    @obelisk.tool(requires_approval=lambda arguments: not arguments["path"].startswith("/tmp/"))
    def edit_file(path: str, text: str) -> str:
        """Edit a file; outside /tmp a person must approve."""
        calls.append(f"edit {path}")
        return path

    return [fetch, send_email, edit_file]


PLAN: list[dict[str, Any]] = [
    {"_tool": "fetch", "key": "body", "_outputPath": "†state.body"},
    {"_tool": "send_email", "to": "ada@example.com", "body": "†state.body",
     "_outputPath": "†state.sent || †state.refused"},
    {"_tool": "fetch", "key": "†state.sent", "_outputPath": "†state.after"},
    {"_tool": "fetch", "key": "independent", "_outputPath": "†state.free"},
]  # fmt: skip


def test_a_call_pauses_and_the_rest_goes_on() -> None:
    calls: list[str] = []
    result = obelisk.run_sync(PLAN, make_tools(calls))
    assert result.status == "awaiting_approval"
    assert [r.status for r in result.calls] == [
        "succeeded",
        "awaiting_approval",
        "waiting",
        "succeeded",
    ]
    assert result.state == {"body": "BODY", "free": "INDEPENDENT"}
    (pending,) = result.pending
    assert pending.call == 1 and pending.label == "#1 send_email"
    assert pending.arguments == {"to": "ada@example.com", "body": "BODY"}
    call, _, bound = pending.id.partition("-")  # bound to the run, its plan and the hash
    assert call == "1" and len(bound) == 32 and len(pending.hash) == 64
    assert result.to_dict()["pending"] == [pending.to_dict()]
    assert sorted(calls) == ["fetch body", "fetch independent"]


def test_accept_runs_the_call_and_nothing_runs_twice() -> None:
    calls: list[str] = []
    paused = obelisk.run_sync(PLAN, make_tools(calls))
    done = obelisk.resume_sync(paused, {paused.pending[0].id: Decision.accept()})
    assert done.status == "completed" and done.pending == ()
    assert done.state == {
        "body": "BODY",
        "free": "INDEPENDENT",
        "sent": "sent to ada@example.com",
        "after": "SENT TO ADA@EXAMPLE.COM",
    }
    assert sorted(calls) == [
        "fetch body",
        "fetch independent",
        "fetch sent to ada@example.com",
        "send ada@example.com",
    ]
    assert [r.status for r in done.calls] == ["succeeded"] * 4
    assert sorted(entry.call for entry in done.log) == [0, 1, 2, 3]  # each write once


def test_reject_fails_the_call_with_the_reason_and_the_error_arm_takes_it() -> None:
    calls: list[str] = []
    paused = obelisk.run_sync(PLAN, make_tools(calls))
    done = obelisk.resume_sync(paused, {paused.pending[0].id: Decision.reject("not today")})
    assert done.status == "completed"
    assert done.state["refused"] == {
        "error": {
            "type": "ApprovalRejected",
            "message": "not today",
            "tool": "send_email",
            "call": 1,
        }
    }
    assert done.calls[2].status == "skipped" and done.calls[2].untaken
    assert "send ada@example.com" not in calls


def test_edit_runs_with_the_edited_arguments_after_checking_them() -> None:
    calls: list[str] = []
    paused = obelisk.run_sync(PLAN, make_tools(calls))
    approval = paused.pending[0].id
    with pytest.raises(ApprovalError, match="do not fit its tool; nothing was recorded"):
        obelisk.resume_sync(paused, {approval: Decision.edit({"to": 42, "body": "x"})})
    assert "send" not in " ".join(calls)
    edited = {"to": "bob@example.com", "body": "BODY, edited"}
    done = obelisk.resume_sync(paused, {approval: Decision.edit(edited)})
    assert done.state["sent"] == "sent to bob@example.com"
    assert done.calls[1].arguments == edited


def test_a_decision_holds_only_for_its_arguments() -> None:
    calls: list[str] = []
    tools = make_tools(calls)
    safe = [{"_tool": "edit_file", "path": "/tmp/a.txt", "text": "x"}]
    assert obelisk.run_sync(safe, tools).status == "completed"  # the predicate says no
    risky = [{"_tool": "edit_file", "path": "†input.path", "text": "x"}]
    first = obelisk.run_sync(risky, tools, input={"path": "a.txt"})
    (a_txt,) = first.pending
    second = obelisk.run_sync(risky, tools, input={"path": "/etc/shadow"})
    (shadow,) = second.pending
    assert a_txt.id != shadow.id and a_txt.call == shadow.call == 0
    with pytest.raises(ApprovalError) as refused:
        obelisk.resume_sync(second, {a_txt.id: Decision.accept()})
    assert str(refused.value) == (
        f"approval {a_txt.id!r} is unknown: no call of run {second.run_id!r} awaits it "
        f"(pending: {shadow.id})"
    )
    assert "edit /etc/shadow" not in calls


def test_unknown_ids_and_wrong_decisions_are_clear_errors() -> None:
    paused = obelisk.run_sync(PLAN, make_tools([]))
    with pytest.raises(ApprovalError, match=r"approval 'nope' is unknown: .* \(pending: 1-"):
        obelisk.resume_sync(paused, {"nope": Decision.accept()})
    with pytest.raises(ApprovalError, match=r"must be Decision\.accept\(\)"):
        obelisk.resume_sync(paused, {paused.pending[0].id: "yes"})  # type: ignore[dict-item]
    with pytest.raises(obelisk.UsageError, match="cannot be resumed"):
        obelisk.resume_sync(obelisk.RunResult("completed", {}, (), ()), {})


def test_without_a_decision_the_call_keeps_waiting() -> None:
    calls: list[str] = []
    paused = obelisk.run_sync(PLAN, make_tools(calls))
    again = obelisk.resume_sync(paused, {})
    assert again.status == "awaiting_approval"
    assert [p.id for p in again.pending] == [p.id for p in paused.pending]
    assert sorted(calls) == ["fetch body", "fetch independent"]  # nothing ran twice


# -- the execution loop surfaces pending approvals ---------------------------------------


def loop_answer(calls: list[dict[str, Any]], output: Any = None) -> dict[str, Any]:
    return {"calls": calls, "output": output}


@pytest.mark.parametrize("stream", [False, True])
def test_the_loop_pauses_and_resume_finishes_the_turn(stream: bool) -> None:
    calls: list[str] = []
    model = obelisk.ScriptedModel([loop_answer(PLAN, output="†state.after")])
    loop = obelisk.Loop(model, make_tools(calls), stream=stream)
    paused = loop.run_sync()
    assert paused.status == "awaiting_approval" and paused.output is None
    (pending,) = paused.pending
    assert pending.label == "#1 send_email"
    assert paused.state == {"body": "BODY", "free": "INDEPENDENT"}
    assert paused.to_dict()["pending"] == [pending.to_dict()]
    assert len(model.requests) == 1
    done = loop.resume_sync(paused, {pending.id: Decision.accept()})
    assert done.status == "completed" and done.pending == ()
    assert done.output == "SENT TO ADA@EXAMPLE.COM"
    assert len(model.requests) == 1 and len(done.turns) == 1  # the same turn went on
    assert sorted(calls) == [
        "fetch body",
        "fetch independent",
        "fetch sent to ada@example.com",
        "send ada@example.com",
    ]
    assert sorted(entry.call for entry in done.log) == [0, 1, 2, 3]  # nothing ran twice
    assert done.turns[0].run is not None and done.turns[0].run.status == "completed"


def test_a_rejected_call_reaches_the_model_in_the_next_request() -> None:
    model = obelisk.ScriptedModel(
        [loop_answer(PLAN), loop_answer([], output="†state.refused.error.message")]
    )
    loop = obelisk.Loop(model, make_tools([]))
    paused = loop.run_sync()
    done = loop.resume_sync(paused, {paused.pending[0].id: Decision.reject("not today")})
    assert done.status == "completed" and done.output == "not today"
    second = model.requests[1]
    errors = [m for m in second.to_data()["context"] if m["type"] == "error"]
    assert [(e["call"], e["error"]["type"]) for e in errors] == [
        ("#1 send_email", "ApprovalRejected")
    ]


def test_the_loop_pauses_again_until_every_call_is_decided() -> None:
    calls: list[str] = []
    model = obelisk.ScriptedModel([loop_answer(PLAN, output="†state.free")])
    loop = obelisk.Loop(model, make_tools(calls))
    paused = loop.run_sync()
    again = loop.resume_sync(paused, {})
    assert again.status == "awaiting_approval" and again.pending == paused.pending
    with pytest.raises(ApprovalError, match="resumed already"):
        loop.resume_sync(paused, {})
    with pytest.raises(ApprovalError, match="approval 'nope' is unknown"):
        loop.resume_sync(again, {"nope": Decision.accept()})
    done = loop.resume_sync(again, {again.pending[0].id: Decision.accept()})
    assert done.output == "INDEPENDENT" and calls.count("send ada@example.com") == 1
    with pytest.raises(obelisk.UsageError, match="status 'completed' cannot be resumed"):
        loop.resume_sync(done, {})
    other = obelisk.Loop(obelisk.ScriptedModel([]), make_tools([]))
    with pytest.raises(obelisk.UsageError, match="not made by this loop"):
        other.resume_sync(again, {})


def test_a_lazy_loop_asks_for_the_plan_then_for_the_call() -> None:
    seen: list[obelisk.Approval] = []

    def approve(approval: obelisk.Approval) -> bool:
        seen.append(approval)
        return True

    model = obelisk.ScriptedModel([loop_answer(PLAN, output="†state.sent")])
    loop = obelisk.Loop(model, make_tools([]), mode="lazy", approve=approve)
    paused = loop.run_sync()
    (approval,) = seen
    assert approval.ok and approval.diff is None and approval.simulation is not None
    assert approval.simulation.needing_approval == ["#1 send_email"]
    assert approval.simulation.approval_load == 0.25  # 1 of 4 calls with effects
    assert paused.status == "awaiting_approval"
    done = loop.resume_sync(paused, {paused.pending[0].id: Decision.accept()})
    assert done.output == "sent to ada@example.com" and len(seen) == 1
