"""A plan lives across turns (issue 27): each answer's calls are a revision of the
session's plan, matched against the calls before them (docs/loop.md, "How a plan
evolves").  A call the model repeats never runs twice; ``_id`` repeats one on
purpose; the plan message says what became of each call (``_status``); step mode
runs the frontier only; ``LoopResult.revisions`` and ``CallRecord.revision`` keep
the lineage."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

import obelisk
from obelisk import Loop, ScriptedModel
from obelisk.errors import LoopStopped, UsageError
from obelisk.interpreter.loop.context import EAGER_INSTRUCTIONS, LAZY_INSTRUCTIONS
from obelisk.interpreter.loop.messages import IDENTICAL_CALLS, Request
from obelisk.interpreter.loop.revisions import Change, RevisionDiff, Seen, identity, match, refresh
from obelisk.interpreter.runtime.durable.journal import Journal

RAN: list[str] = []


@obelisk.tool
def charge(n: int) -> int:
    """Charge n (a side effect)."""
    RAN.append(f"charge {n}")
    return n * 10


@obelisk.tool
def fragile(n: int) -> int:
    """Fails the first time for each n."""
    RAN.append(f"fragile {n}")
    if RAN.count(f"fragile {n}") == 1:
        raise ValueError("not yet")
    return n


@obelisk.tool(pure=True)
def double(n: int) -> int:
    """Twice n."""
    RAN.append(f"double {n}")
    return 2 * n


@obelisk.tool
def log_line(text: str) -> str:
    """A line for a log."""
    RAN.append(f"log {text}")
    return text


TOOLS = [charge, fragile, double, log_line]


@pytest.fixture(autouse=True)
def _clean() -> None:
    RAN.clear()


def call(tool: str, path: str | None = None, **arguments: Any) -> dict[str, Any]:
    made: dict[str, Any] = {"_tool": tool, **arguments}
    if path is not None:
        made["_outputPath"] = path
    return made


def answer(*calls: dict[str, Any], output: Any = None) -> dict[str, Any]:
    return {"calls": list(calls), "output": output}


def plan_message(request: Request) -> list[dict[str, Any]]:
    (plan,) = [m for m in request.to_data()["context"] if m["type"] == "plan"]
    return list(plan["plan"])


# -- matching, pure ---------------------------------------------------------------------


def test_identity_is_the_id_or_the_call_as_written_in_canonical_json() -> None:
    assert identity({"_tool": "a", "x": 1, "_outputPath": "†state.a"}) == identity(
        {"_outputPath": "†state.a", "x": 1, "_tool": "a", "_reasoningForCall": "why"}
    )
    assert identity({"_tool": "a", "x": 1}) != identity({"_tool": "a", "x": 2})
    assert identity({"_tool": "a", "x": 1, "_id": "p"}) == identity({"_tool": "b", "_id": "p"})
    assert identity({"_tool": "a", "_status": "succeeded"}) == identity({"_tool": "a"})


def test_match_sorts_calls_one_to_one_in_order_with_reasons() -> None:
    seen = [
        Seen({"_tool": "a"}, 1, "succeeded", 1, index=0),
        Seen({"_tool": "b"}, 1, "failed", 1, index=1),
        Seen({"_tool": "c"}, 1, "planned", index=2),
        Seen({"_tool": "d"}, 1, "planned", index=3),
        Seen({"_tool": "e", "_id": "e"}, 1, "succeeded", 1, index=4),
        Seen({"_tool": "f"}, 1, "succeeded", 1, index=5),
    ]
    calls = [{"_tool": "a"}, {"_tool": "a"}, {"_tool": "b"}, {"_tool": "c"},
             {"_tool": "e", "_id": "e", "x": 1}]  # fmt: skip
    diff = match(seen, calls, 2)
    assert [(c.kind, c.label) for c in diff.changes] == [
        ("kept", "#0 a"),
        ("added", "#1 a"),  # two identical calls in one answer are two calls
        ("retried", "#2 b"),
        ("carried", "#3 c"),
        ("changed", "#4 e (e)"),
        ("superseded", "#3 d"),
        ("dropped", "#5 f"),
    ]
    reasons = {c.kind: c.reason for c in diff.changes}
    assert reasons["kept"] == "succeeded in revision 1; not run again, its writes stand"
    assert reasons["retried"] == "failed in revision 1; runs again"
    assert reasons["superseded"] == "not in revision 2 and never started: it never runs"
    assert set(diff.to_dict()) == {
        "kept", "refreshed", "retried", "carried", "changed", "added", "superseded", "dropped"
    }  # fmt: skip


def test_refresh_follows_what_runs_through_refreshable_kept_calls_only() -> None:
    diff = RevisionDiff(
        [
            Change("added", 0, "#0 a", ""),
            Change("kept", 1, "#1 b", ""),  # reads #0: refreshable, refreshed
            Change("kept", 2, "#2 c", ""),  # reads #1: refreshed through it
            Change("kept", 3, "#3 d", ""),  # reads #0 but not refreshable: kept
            Change("kept", 4, "#4 e", ""),  # stale on its own
        ]
    )
    done = refresh(diff, {4: "†state.x was written since it ran"}, [(), (0,), (1,), (0,), ()],
                   lambda index: index != 3)  # fmt: skip
    assert [c.kind for c in done.changes] == [
        "added",
        "refreshed",
        "refreshed",
        "kept",
        "refreshed",
    ]
    assert done.changes[4].reason.startswith("†state.x was written since it ran")


# -- a repeated call never runs twice ---------------------------------------------------------


@pytest.mark.parametrize("mode", ["eager", "lazy"])
def test_a_call_written_again_is_kept_and_runs_once(mode: str) -> None:
    first = call("charge", "†state.paid", n=4)
    model = ScriptedModel([answer(first), answer(first, output="†state.paid")])
    result = Loop(model, TOOLS, mode=mode).run_sync()  # type: ignore[arg-type]
    assert result.output == 40 and RAN == ["charge 4"]
    second = result.turns[1].run
    assert second is not None and second.calls[0].status == "succeeded"
    assert second.calls[0].output == 40
    assert result.turns[1].entries == []  # kept: its writes stand, nothing written again
    assert [c.kind for c in result.revisions[1].diff.changes] == ["kept"]


def test_a_kept_push_is_not_pushed_twice_and_its_dependents_see_its_writes() -> None:
    push = {**call("log_line", "†state.lines", text="a"), "_outputMethod": "push"}
    user = call("double", "†state.twice", n="†state.seed")
    model = ScriptedModel(
        [
            answer(push, call("charge", "†state.seed", n=1)),
            answer(push, call("charge", "†state.seed", n=1), user, output="†state"),
        ]
    )
    result = Loop(model, TOOLS).run_sync()
    assert result.output == {"lines": ["a"], "seed": 10, "twice": 20}
    assert sorted(RAN) == ["charge 1", "double 10", "log a"]


def test_a_new_id_runs_an_identical_call_again_on_purpose() -> None:
    once = call("charge", "†state.a", n=1)
    model = ScriptedModel(
        [
            answer(once),
            answer(once, {**once, "_id": "again"}, output="†state.a"),
        ]
    )
    Loop(model, TOOLS).run_sync()
    assert RAN == ["charge 1", "charge 1"]


def test_two_identical_calls_in_one_answer_are_two_calls_and_each_is_kept() -> None:
    twice = {**call("log_line", "†state.lines", text="x"), "_outputMethod": "push"}
    model = ScriptedModel([answer(twice, twice), answer(twice, twice, output="†state.lines")])
    result = Loop(model, TOOLS).run_sync()
    assert result.output == ["x", "x"] and RAN == ["log x", "log x"]


def test_a_failed_call_written_again_is_retried() -> None:
    flaky = call("fragile", "†state.f", n=3)
    model = ScriptedModel([answer(flaky), answer(flaky, output="†state.f")])
    result = Loop(model, TOOLS).run_sync()
    assert result.output == 3 and RAN == ["fragile 3", "fragile 3"]
    (retried,) = result.revisions[1].diff.of("retried")
    assert retried.reason == "failed in revision 1; runs again"
    assert plan_message(model.requests[1])[0]["_status"] == "failed"


def test_a_pure_call_whose_input_was_written_since_is_refreshed() -> None:
    seed = call("charge", "†state.seed", n=1)
    twice = call("double", "†state.twice", n="†state.seed")
    model = ScriptedModel(
        [
            answer(seed, twice),
            answer(call("charge", "†state.seed", n=2), twice, output="†state.twice"),
        ]
    )
    result = Loop(model, TOOLS).run_sync()
    assert result.output == 40 and RAN == ["charge 1", "double 10", "charge 2", "double 20"]
    kinds = [(c.kind, c.label) for c in result.revisions[1].diff.changes]
    assert kinds == [("added", "#0 charge"), ("refreshed", "#1 double"), ("dropped", "#0 charge")]


def test_a_side_effecting_call_is_kept_even_when_its_input_changed() -> None:
    seed = call("double", "†state.seed", n=1)
    pay = call("charge", "†state.paid", n="†state.seed")
    model = ScriptedModel(
        [answer(seed, pay), answer(call("double", "†state.seed", n=5), pay, output="†state")]
    )
    result = Loop(model, TOOLS).run_sync()
    assert RAN == ["double 1", "charge 2", "double 5"]
    assert result.output == {"seed": 10, "paid": 20}


# -- the plan message says what happened ------------------------------------------------------


def test_the_plan_message_carries_each_calls_status_and_an_answers_status_is_ignored() -> None:
    calls = [
        call("charge", "†state.a", n=1),
        call("fragile", "†state.b", n=1),
        call("double", "†state.c", n="†state.b"),
    ]
    events: list[Any] = []
    model = ScriptedModel(
        [
            answer(*calls),
            lambda request: answer(*plan_message(request)[:1], output="†state.a"),
        ]
    )
    result = Loop(model, TOOLS, on_event=events.append).run_sync()
    assert [c["_status"] for c in plan_message(model.requests[1])] == [
        "succeeded",
        "failed",
        "skipped",
    ]
    assert result.output == 10 and sorted(RAN) == ["charge 1", "fragile 1"]
    # the answer echoed "_status": no warning, not part of the call
    second = result.turns[1].run
    assert second is not None and second.diagnostics == ()
    assert [c.kind for c in result.revisions[1].diff.changes] == ["kept", "dropped", "superseded"]
    checked = obelisk.check([{**calls[0], "_status": "succeeded"}], TOOLS)
    assert checked.diagnostics == () and checked.plan is not None
    assert checked.plan.calls[0].to_data() == calls[0]


def test_the_caller_plan_is_revision_zero_and_its_calls_are_planned() -> None:
    start = [call("charge", "†state.a", n=1), call("log_line", "†state.l", text="x")]
    model = ScriptedModel([answer(start[0], output="†state.a")])
    result = Loop(model, TOOLS).run_sync(plan=start)
    assert [c["_status"] for c in plan_message(model.requests[0])] == ["planned", "planned"]
    assert [r.number for r in result.revisions] == [0, 1]
    assert [(c.kind, c.label) for c in result.revisions[1].diff.changes] == [
        ("carried", "#0 charge"),
        ("superseded", "#1 log_line"),
    ]
    assert RAN == ["charge 1"]


def test_the_instructions_and_the_schema_say_an_identical_call_runs_once() -> None:
    for instructions in (EAGER_INSTRUCTIONS, LAZY_INSTRUCTIONS):
        assert IDENTICAL_CALLS in instructions
    assert "new _id" in IDENTICAL_CALLS
    for mode in ("eager", "lazy"):
        schema = obelisk.solution_schema(obelisk.Registry(TOOLS), mode=mode)  # type: ignore[arg-type]
        assert schema["properties"]["calls"]["description"] == IDENTICAL_CALLS
        Draft202012Validator.check_schema(schema)


# -- step by step ----------------------------------------------------------------------------


def test_step_runs_the_frontier_then_asks_again_with_the_rest_planned() -> None:
    a = call("charge", "†state.a", n=1)
    b = call("double", "†state.b", n="†state.a")
    c = call("log_line", "†state.c", text="free")
    model = ScriptedModel([answer(a, b, c, output="†state"), answer(a, b, c, output="†state")])
    result = Loop(model, TOOLS, advance="step").run_sync()
    assert sorted(RAN[:2]) == ["charge 1", "log free"] and RAN[2:] == ["double 10"]
    assert [m["_status"] for m in plan_message(model.requests[1])] == [
        "succeeded",
        "planned",
        "succeeded",
    ]
    first = result.turns[0]
    assert first.errors == []  # a planned call is no error
    assert result.output == {"a": 10, "b": 20, "c": "free"} and len(result.turns) == 2


def test_step_a_planned_call_left_out_is_superseded_and_never_runs() -> None:
    a = call("charge", "†state.a", n=1)
    b = call("charge", "†state.b", n="†state.a")
    model = ScriptedModel([answer(a, b), answer(a, output="†state")])
    result = Loop(model, TOOLS, advance="step").run_sync()
    assert RAN == ["charge 1"] and result.output == {"a": 10}
    (superseded,) = result.revisions[1].diff.of("superseded")
    assert superseded.label == "#1 charge"


def test_advance_is_checked() -> None:
    with pytest.raises(UsageError, match="advance must be 'all' or 'step'"):
        Loop(ScriptedModel([]), TOOLS, advance="some")  # type: ignore[arg-type]


# -- lineage ---------------------------------------------------------------------------------


def test_lineage_is_in_the_result_its_dict_its_transcript_and_each_call_record() -> None:
    a = call("charge", "†state.a", n=1)
    model = ScriptedModel([answer(a), answer(a, call("double", "†state.b", n=2), output=1)])
    result = Loop(model, TOOLS).run_sync()
    data = result.to_dict()
    assert [r["revision"] for r in data["revisions"]] == [1, 2]
    assert data["revisions"][1]["diff"]["kept"] == [
        {"call": 0, "label": "#0 charge",
         "reason": "succeeded in revision 1; not run again, its writes stand"}
    ]  # fmt: skip
    assert data["revisions"][1]["diff"]["added"][0]["label"] == "#1 double"
    lines = [json.loads(line) for line in result.to_jsonl().splitlines()]
    assert [line["revision"]["revision"] for line in lines] == [1, 2]
    second = result.turns[1].run
    assert second is not None
    assert [c.revision for c in second.calls] == [1, 2]
    assert second.calls[1].to_dict()["revision"] == 2
    plain = obelisk.run_sync([a], TOOLS)
    assert plain.calls[0].revision is None and "revision" not in plain.calls[0].to_dict()


def test_a_durable_loop_resumes_with_the_same_revisions(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    a = call("charge", "†state.a", n=1)
    turns = [answer(a), answer(a, call("charge", "†state.b", n=2))]
    with pytest.raises(LoopStopped) as stopped:
        Loop(ScriptedModel(turns), TOOLS, journal=db).run_sync(run_id="R")
    before = [r.to_dict() for r in stopped.value.result.revisions]
    assert RAN == ["charge 1", "charge 2"]
    model = ScriptedModel([answer(a, output="†state")])
    result = Loop(model, TOOLS, journal=db).resume_sync("R")
    assert RAN == ["charge 1", "charge 2"]  # nothing ran again, the kept call neither
    assert [r.to_dict() for r in result.revisions][:2] == before
    assert result.output == {"a": 10, "b": 20}
    assert [c["_status"] for c in plan_message(model.requests[0])] == ["succeeded", "succeeded"]
    with Journal(db) as book:  # each turn run keeps its revision
        saved = book.run_row("R.t2").settings["revision"]
    assert saved == result.revisions[1].to_dict()
    assert [c["label"] for c in saved["diff"]["kept"]] == ["#0 charge"]


def test_a_streamed_answer_keeps_the_calls_that_ran_and_runs_pure_ones_again() -> None:
    pay = call("charge", "†state.paid", n=2)
    twice = call("double", "†state.twice", n=3)
    model = ScriptedModel(
        [answer(pay, twice), answer(pay, twice, output="†state")], tokens_per_second=100000
    )
    result = Loop(model, TOOLS, stream=True).run_sync()
    assert result.output == {"paid": 20, "twice": 6}
    assert sorted(RAN) == ["charge 2", "double 3", "double 3"]  # charge once; double again
    assert [c.kind for c in result.revisions[1].diff.changes] == ["kept", "refreshed"]
    second = result.turns[1].run
    assert second is not None and [c.status for c in second.calls] == ["succeeded"] * 2


def test_a_plan_messages_mode_picks_the_mode_when_the_loop_has_none() -> None:
    message = {"type": "plan", "plan": [call("charge", "†state.a", n=1)], "mode": "lazy"}
    model = ScriptedModel([answer(call("charge", "†state.a", n=1), output="†state.a")])
    result = Loop(model, TOOLS).run_sync(plan=message)
    assert model.requests[0].config["mode"] == "lazy" and result.output == 10
    assert RAN == ["charge 1"]
    given = ScriptedModel([answer(output=1)])
    Loop(given, TOOLS, mode="eager").run_sync(plan=message)
    assert given.requests[0].config["mode"] == "eager"  # a mode given to the loop wins
    streaming = Loop(ScriptedModel([]), TOOLS, stream=True)
    with pytest.raises(UsageError, match="stream=True applies to eager mode only"):
        streaming.run_sync(plan=message)


def test_a_kept_call_whose_failure_the_error_arm_took_is_not_reported_again() -> None:
    flaky = {**call("fragile", n=9), "_outputPath": "†state.f || †state.oops"}
    model = ScriptedModel([answer(flaky), answer(flaky), answer(flaky, output="†state.oops")])
    result = Loop(model, TOOLS).run_sync()
    assert [e.error["type"] for e in result.turns[0].errors] == ["ValueError"]
    assert result.turns[1].errors == [] and RAN == ["fragile 9"]
    assert result.output["error"]["message"] == "not yet"


def test_a_superseded_call_written_again_is_planned_again() -> None:
    from obelisk.interpreter.loop.plan_history import Lineage

    first, second = {"_tool": "charge", "n": 1}, {"_tool": "charge", "n": 2}
    lineage = Lineage()
    lineage.revise([first, second], 1)
    lineage.revise([first], 2)
    assert [c.kind for c in lineage.revisions[1].diff.changes] == ["carried", "superseded"]
    lineage.revise([first, second], 3)
    assert [c.kind for c in lineage.revisions[2].diff.changes] == ["carried", "carried"]
    assert lineage.statuses(2) == ["planned", "planned"]


def test_a_kept_push_stays_one_push_when_later_pushes_follow() -> None:
    a = {**call("log_line", "†state.lines", text="a"), "_outputMethod": "push"}
    b = {**call("log_line", "†state.lines", text="b"), "_outputMethod": "push"}
    model = ScriptedModel([answer(a), answer(a, b), answer(a, b, output="†state.lines")])
    result = Loop(model, TOOLS).run_sync()
    assert result.output == ["a", "b"] and RAN == ["log a", "log b"]


def test_a_kept_call_written_over_since_has_its_value_again() -> None:
    one, two = call("charge", "†state.a", n=1), call("charge", "†state.a", n=2)
    model = ScriptedModel([answer(one), answer(two), answer(one, output="†state.a")])
    result = Loop(model, TOOLS).run_sync()
    assert result.output == 10 and RAN == ["charge 1", "charge 2"]
    assert [e.path for e in result.turns[2].entries] == ["†state.a"]  # written again
