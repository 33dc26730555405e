"""The execution loop with a ScriptedModel (docs/language.md, docs/semantics.md, docs/loop.md).

Every test drives ``Loop`` through the requests it sends (recorded by
``ScriptedModel.requests``) and the result or error it ends with: what goes
back to the model (error messages, the carried plan, the notice), what ends
up in state, and when the loop stops.  Concurrency is shown with in-flight
counters and one generous wall-clock bound.
"""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from pydantic import BaseModel

import obelisk
from obelisk import (
    CorrectionBudgetExceeded,
    Decision,
    Loop,
    LoopBudgetExceeded,
    LoopStopped,
    Request,
    ScriptedModel,
    ScriptExhausted,
    Solution,
    Tool,
)
from obelisk.interpreter.loop.messages import output_schema_with_references
from obelisk.interpreter.loop.reference_patterns import shared_definitions

# -- tools -----------------------------------------------------------------------------


@obelisk.tool
def double(n: int) -> int:
    """Twice n."""
    return 2 * n


@obelisk.tool
def add(a: int, b: int) -> int:
    """a + b."""
    return a + b


@obelisk.tool
def fail(value: int = 0) -> int:
    """Always raises."""
    raise ValueError("boom")


@obelisk.tool
def greet(name: str) -> str:
    """Greets someone."""
    return f"hi {name}"


SUMMARIZE = Tool.from_schema(
    {
        "name": "summarize",
        "description": "Summarize a text.",
        "parameters": {
            "type": "object",
            "properties": {"text": {"type": "string"}},
            "required": ["text"],
        },
        "output": {"type": "string", "maxLength": 20},
    }
)

CITY = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "temp": {"type": "integer"}},
    "required": ["city", "temp"],
}


def research_tool(scopes: list[str] | None = None) -> Tool:
    spec: dict[str, Any] = {
        "name": "research",
        "description": "Research a city.",
        "_delegate": True,
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
        },
        "output": CITY,
    }
    if scopes is not None:
        spec["_scopes"] = scopes
    return Tool.from_schema(spec)


# -- helpers ---------------------------------------------------------------------------


def run(loop: Loop, *args: Any, **kwargs: Any) -> obelisk.LoopResult:
    return asyncio.run(loop.run(*args, **kwargs))


def stopped(loop: Loop, error: type[obelisk.LoopError], *args: Any, **kwargs: Any) -> Any:
    with pytest.raises(error) as caught:
        run(loop, *args, **kwargs)
    return caught.value


def of_type(request: Request, kind: str) -> list[dict[str, Any]]:
    return [m for m in request.to_data()["context"] if m["type"] == kind]


def errors(request: Request) -> list[dict[str, Any]]:
    """The error messages of a request, without the ``type`` tag."""
    return [{k: v for k, v in m.items() if k != "type"} for m in of_type(request, "error")]


def error_types(request: Request) -> list[str]:
    return [m["error"]["type"] for m in of_type(request, "error")]


def carried(request: Request) -> list[dict[str, Any]] | None:
    """The carried calls as written (issue 27: each also carries its ``_status``,
    which tests/unit/loop/test_revisions.py checks; it is left out here)."""
    plans = of_type(request, "plan")
    assert len(plans) <= 1
    if not plans:
        return None
    return [{k: v for k, v in call.items() if k != "_status"} for call in plans[0]["plan"]]


def state_of(request: Request, instance: str | None = None) -> Any:
    found = [m for m in of_type(request, "state") if m.get("instance") == instance]
    assert len(found) == 1
    return found[0]["state"]


def input_of(request: Request) -> Any:
    (message,) = of_type(request, "input")
    return message["input"]


def texts(request: Request) -> list[str]:
    return [m["text"] for m in of_type(request, "text")]


def answer(*calls: dict[str, Any], output: Any = None) -> dict[str, Any]:
    return {"calls": list(calls), "output": output}


def call(tool: str, path: str | None = None, **arguments: Any) -> dict[str, Any]:
    made: dict[str, Any] = {"_tool": tool, **arguments}
    if path is not None:
        made["_outputPath"] = path
    return made


# -- eager mode ------------------------------------------------------------------------


def test_eager_happy_path() -> None:
    model = ScriptedModel(
        [
            answer(
                call("double", "†state.a", n="†input.n"),
                call("add", "†state.sum", a="†state.a", b=1),
            ),
            answer(call("double", "†state.b", n="†state.sum"), output="†state.b"),
        ]
    )
    result = run(Loop(model, [double, add]), {"n": 3})
    assert result.status == "completed"
    assert result.output == 14
    assert result.state == {"a": 6, "sum": 7, "b": 14}
    assert len(result.turns) == 2 and len(model.requests) == 2
    assert [turn.index for turn in result.turns] == [1, 2]
    assert [(e.path, e.value) for e in result.log] == [
        ("†state.a", 6),
        ("†state.sum", 7),
        ("†state.b", 14),
    ]
    first, second = model.requests
    assert first.config == {"mode": "eager", "turn": 1, "max_turns": 8}
    assert second.config["turn"] == 2
    assert input_of(first) == {"n": 3}
    assert state_of(first) == {} and state_of(second) == {"a": 6, "sum": 7}
    # the plan message holds the last answer's calls as written; the state shows they ran
    assert carried(second) == model.answers[0]["calls"] and errors(second) == []
    assert [len(turn.entries) for turn in result.turns] == [2, 1]
    assert set(result.turns[0].timings) == {"model", "run", "total"}


def test_eager_starts_from_the_given_state_and_shows_the_tools() -> None:
    model = ScriptedModel([answer(call("double", "†state.b", n="†state.a"), output="†state.b")])
    result = run(Loop(model, [double, SUMMARIZE]), None, {"a": 5})
    assert result.output == 10 and result.state == {"a": 5, "b": 10}
    (request,) = model.requests
    assert of_type(request, "input") == []  # no input given, no input message
    (tools,) = of_type(request, "tool")
    assert [(t["name"], t["latent"]) for t in tools["tools"]] == [
        ("double", False),
        ("summarize", True),
    ]


def test_latent_output_is_written_inline_in_eager_mode() -> None:
    model = ScriptedModel(
        [
            answer(
                call("summarize", "†state.s", text="†input.text", _output="short"),
                call("greet", "†state.g", name="†state.s"),
            ),
            answer(output="†state.g"),
        ]
    )
    result = run(Loop(model, [SUMMARIZE, greet]), {"text": "a long text"})
    assert result.state == {"s": "short", "g": "hi short"}
    assert result.output == "hi short"
    record = result.turns[0].run.calls[0]
    assert record.status == "succeeded" and record.output == "short"


def test_misfitting_latent_output_is_an_error_record_and_writes_nothing() -> None:
    bad = call("summarize", "†state.s", text="t", _output="x" * 30)
    model = ScriptedModel(
        [
            answer(bad),
            answer(call("summarize", "†state.s", text="t", _output="fits"), output="†state.s"),
        ]
    )
    result = run(Loop(model, [SUMMARIZE]))
    first_errors = errors(model.requests[1])
    assert len(first_errors) == 1
    assert first_errors[0]["call"] == "#0 summarize"
    assert first_errors[0]["error"]["type"] == "invalid_output"
    assert "_output" in first_errors[0]["error"]["message"]
    assert carried(model.requests[1]) == [bad]
    assert state_of(model.requests[1]) == {}  # the misfit was never written
    assert result.output == "fits" and result.state == {"s": "fits"}


def test_eager_latent_call_without_output_is_carried() -> None:
    pending = call("summarize", "†state.s", text="t")
    fixed = call("summarize", "†state.s", text="t", _output="ok")
    model = ScriptedModel([answer(pending), answer(fixed), answer(output="†state.s")])
    result = run(Loop(model, [SUMMARIZE]))
    assert carried(model.requests[1]) == [pending]
    assert error_types(model.requests[1]) == ["pending_latent"]
    assert result.state == {"s": "ok"}


def test_tool_failure_goes_back_with_the_whole_plan_carried() -> None:
    failing = call("fail", "†state.a")
    dependent = call("double", "†state.b", n="†state.a")
    model = ScriptedModel(
        [
            answer(failing, dependent, call("double", "†state.c", n=3)),
            answer(output="†state.c"),
        ]
    )
    result = run(Loop(model, [double, fail]))
    second = model.requests[1]
    assert carried(second) == [failing, dependent, call("double", "†state.c", n=3)]
    assert errors(second) == [
        {"call": "#0 fail", "error": {"type": "ValueError", "message": "boom"}},
        {
            "call": "#1 double",
            "error": {"type": "skipped", "message": "†state.a was not written: #0 fail failed"},
        },
    ]
    assert state_of(second) == {"c": 6}  # the independent branch went on
    assert result.output == 6 and result.status == "completed"
    assert result.turns[0].errors[0].call == "#0 fail"


def test_error_arm_error_is_reported_and_the_untaken_branch_is_not() -> None:
    handled = call("fail", "†state.ok || †state.err")
    on_success = call("double", "†state.d", n="†state.ok")  # the branch not taken
    model = ScriptedModel([answer(handled, on_success), answer(output="†state.err.error.message")])
    result = run(Loop(model, [fail, double]))
    second = model.requests[1]
    assert carried(second) == [handled, on_success]
    assert errors(second) == [
        {"call": "#0 fail", "error": {"type": "ValueError", "message": "boom"}}
    ]  # no "skipped" record for #1: its alternative was simply not taken
    assert result.turns[0].run is not None
    assert result.turns[0].run.calls[1].untaken
    assert result.output == "boom"


def test_output_is_validated_and_a_misfit_asks_for_a_correction() -> None:
    schema = {"type": "object", "properties": {"total": {"type": "integer"}}, "required": ["total"]}
    model = ScriptedModel(
        [
            answer(call("double", "†state.a", n=2), output={"sum": "†state.a"}),
            answer(output={"total": "†state.a"}),
        ]
    )
    result = run(Loop(model, [double], output_schema=schema))
    assert result.output == {"total": 4}
    second = model.requests[1]
    (problem,) = errors(second)
    assert problem["error"]["type"] == "invalid_output"
    assert "output does not fit the output schema" in problem["error"]["message"]
    assert "total" in problem["error"]["message"]
    assert state_of(second) == {"a": 4}  # the calls of the rejected answer did run
    assert result.turns[0].errors[0].error["type"] == "invalid_output"


def test_output_reading_a_missing_path_asks_for_a_correction() -> None:
    model = ScriptedModel([answer(output="†state.nothing"), answer(output="fine")])
    result = run(Loop(model, [double]))
    (problem,) = errors(model.requests[1])
    assert problem["error"] == {
        "type": "invalid_output",
        "message": "output reads †state.nothing, which does not exist",
    }
    assert result.output == "fine"


CYCLE = answer(
    call("double", "†state.a", n="†state.b"),
    call("double", "†state.b", n="†state.a"),
)


@pytest.mark.parametrize(
    ("bad", "kind", "fragment"),
    [
        ("this is not JSON", "invalid_solution", "the answer is not JSON"),
        ('{"calls": {"_tool": "double"}}', "invalid_solution", "calls: Input should be"),
        ("[1, 2]", "invalid_solution", "must be a JSON object"),
        (answer(call("triple", "†state.a", n=1)), "unknown_tool", "unknown tool 'triple'"),
        (CYCLE, "dependency_cycle", "#0 double -> #1 double -> #0 double"),
        (answer(call("double", "†state.a", n="†state.")), "reference_syntax", "after '.'"),
        (answer(call("double", "†state.a", n="two")), "invalid_argument", "args.n: expected"),
    ],
)
def test_unusable_answers_become_error_messages(bad: Any, kind: str, fragment: str) -> None:
    model = ScriptedModel([bad, answer(output="recovered")])
    result = run(Loop(model, [double]))
    assert result.output == "recovered" and result.status == "completed"
    second = model.requests[1]
    assert error_types(second) and set(error_types(second)) == {kind}
    assert any(fragment in e["error"]["message"] for e in errors(second))
    assert result.state == {}
    first_turn = result.turns[0]
    if kind == "invalid_solution":
        assert first_turn.solution is None
        assert first_turn.raw == bad
    else:
        assert carried(second) == bad["calls"]


def test_correction_budget_exceeded_keeps_turns_and_partial_state() -> None:
    model = ScriptedModel(
        [
            answer(call("double", "†state.a", n=2)),
            "not JSON",
            answer(call("nope", "†state.b")),
            "still not JSON",
        ]
    )
    error = stopped(Loop(model, [double], max_corrections=2), CorrectionBudgetExceeded)
    assert len(error.result.turns) == 4
    assert error.result.status == "corrections_exceeded"
    assert error.result.state == {"a": 4}
    assert [e.path for e in error.result.log] == ["†state.a"]
    assert "3 unusable answers in a row (max_corrections=2)" in str(error)
    assert error.result.turns[-1].raw == "still not JSON"


def test_a_usable_answer_resets_the_correction_count() -> None:
    model = ScriptedModel(
        ["bad", answer(call("double", "†state.a", n=1)), "bad", answer(output="done")]
    )
    result = run(Loop(model, [double], max_corrections=1))
    assert result.output == "done" and len(result.turns) == 4


def test_zero_corrections_stops_at_the_first_unusable_answer() -> None:
    model = ScriptedModel(["bad"])
    error = stopped(Loop(model, [double], max_corrections=0), CorrectionBudgetExceeded)
    assert len(error.result.turns) == 1 and len(model.requests) == 1


def test_max_turns_raises_and_only_the_last_request_carries_the_notice() -> None:
    model = ScriptedModel([answer(call("double", f"†state.t{i}", n=i)) for i in range(3)])
    error = stopped(Loop(model, [double], max_turns=3), LoopBudgetExceeded)
    assert error.result.status == "budget_exceeded"
    assert len(error.result.turns) == 3
    assert error.result.state == {"t0": 0, "t1": 2, "t2": 4}
    notices = [[t for t in texts(r) if "turn" in t and "last" in t] for r in model.requests]
    assert notices[0] == [] and notices[1] == []
    assert len(notices[2]) == 1 and "3 of 3" in notices[2][0]
    assert texts(model.requests[2])[-1] == notices[2][0]
    assert of_type(model.requests[2], "text")[-1] == model.requests[2].to_data()["context"][-1]


def test_a_single_turn_budget_carries_the_notice_at_once() -> None:
    model = ScriptedModel([answer(output="done")])
    result = run(Loop(model, [double], max_turns=1))
    assert result.output == "done"
    assert any("1 of 1" in t for t in texts(model.requests[0]))


def test_script_exhausted_stops_the_loop_and_keeps_the_state() -> None:
    model = ScriptedModel([answer(call("double", "†state.a", n=2), call("fail", "†state.x"))])
    error = stopped(Loop(model, [double, fail]), LoopStopped)
    assert isinstance(error.__cause__, ScriptExhausted)
    assert error.result.status == "stopped"
    assert error.result.state == {"a": 4}
    assert [(e.path, e.value) for e in error.result.log] == [("†state.a", 4)]
    assert len(error.result.turns) == 2
    assert error.result.turns[1].solution is None


def test_context_is_rebuilt_for_every_request() -> None:
    bad = answer(call("double", "†state.a", n="†state.missing"))
    model = ScriptedModel(
        [
            bad,
            answer(call("double", "†state.a", n=1)),
            answer(call("double", "†state.b", n="†state.a")),
            answer(output="†state.b"),
        ]
    )
    result = run(Loop(model, [double], instructions="Be brief."))
    r1, r2, r3, r4 = model.requests
    assert error_types(r2) == ["unresolved_reference"] and carried(r2) == bad["calls"]
    assert errors(r3) == [] and carried(r3) == model.answers[1]["calls"]  # the fixed plan
    assert errors(r4) == [] and carried(r4) == model.answers[2]["calls"]
    assert state_of(r3) == {"a": 2} and state_of(r4) == {"a": 2, "b": 4}
    for request in (r1, r2, r3, r4):
        assert texts(request)[1] == "Be brief."
        assert len(of_type(request, "tool")) == 1 and len(of_type(request, "state")) == 1
    assert result.output == 4


def test_usage_is_summed_over_the_turns() -> None:
    model = ScriptedModel(
        [
            Solution(calls=[call("double", "†state.a", n=1)]).with_usage(
                {"prompt_tokens": 10, "completion_tokens": 4, "total_tokens": 14}
            ),
            Solution(output="†state.a").with_usage(
                {"prompt_tokens": 20, "completion_tokens": 1, "total_tokens": 21}
            ),
        ]
    )
    result = run(Loop(model, [double]))
    assert result.usage == {"prompt_tokens": 30, "completion_tokens": 5, "total_tokens": 35}
    assert result.turns[0].usage == {
        "prompt_tokens": 10,
        "completion_tokens": 4,
        "total_tokens": 14,
    }


def test_usage_is_empty_without_reports() -> None:
    result = run(Loop(ScriptedModel([answer(output=1)]), [double]))
    assert result.usage == {} and result.turns[0].usage is None


def test_jsonl_transcript_replays_to_the_same_state(tmp_path: Path) -> None:
    model = ScriptedModel(
        [
            answer(call("double", "†state.a", n="†input.n"), call("fail", "†state.x")),
            "not JSON",
            answer(call("add", "†state.b", a="†state.a", b=1), output=None),
            answer(output={"b": "†state.b"}),
        ]
    )
    loop_tools = [double, add, fail]
    result = run(Loop(model, loop_tools), {"n": 5})
    text = result.to_jsonl()
    lines = text.splitlines()
    assert len(lines) == 4
    records = [json.loads(line) for line in lines]
    assert [r["turn"] for r in records] == [1, 2, 3, 4]
    assert records[1]["solution"] is None and records[1]["raw"] == "not JSON"
    assert records[0]["state_diff"][0]["value"] == 10
    assert records[0]["request"] == model.requests[0].to_data()
    path = tmp_path / "transcript.jsonl"
    path.write_text(text, encoding="utf-8")
    replay = ScriptedModel.from_jsonl(path)
    again = run(Loop(replay, loop_tools), {"n": 5})
    assert again.state == result.state == {"a": 10, "b": 11}
    assert again.output == result.output == {"b": 11}
    assert [r.to_data() for r in replay.requests] == [r.to_data() for r in model.requests]


# -- lazy mode -------------------------------------------------------------------------


def test_lazy_runs_the_whole_plan_and_reads_the_output_afterwards() -> None:
    model = ScriptedModel(
        [
            answer(
                call("double", "†state.a", n="†input.n"),
                call("add", "†state.b", a="†state.a", b=1),
                output="†state.b",
            )
        ]
    )
    result = run(Loop(model, [double, add], mode="lazy"), {"n": 2})
    assert result.output == 5 and result.state == {"a": 4, "b": 5}
    assert model.requests[0].config["mode"] == "lazy"
    items = model.requests[0].schema["properties"]["calls"]["items"]["anyOf"]
    assert all("_output" not in item["properties"] for item in items)


def test_lazy_diagnostics_go_back_for_correction() -> None:
    bad = answer(call("double", "†state.a", n="†input.missing"), output="†state.a")
    model = ScriptedModel(
        [bad, answer(call("double", "†state.a", n="†input.n"), output="†state.a")]
    )
    result = run(Loop(model, [double], mode="lazy"), {"n": 4})
    second = model.requests[1]
    assert error_types(second) == ["unresolved_reference"]
    assert errors(second)[0]["call"] == "#0 double"
    (plan,) = of_type(second, "plan")
    planned = [{**call, "_status": "planned"} for call in bad["calls"]]  # issue 27: _status
    assert plan == {"type": "plan", "plan": planned, "mode": "lazy"}
    assert result.output == 8


def test_lazy_max_corrections() -> None:
    bad = answer(call("nope", "†state.a"))
    model = ScriptedModel([bad, bad])
    error = stopped(Loop(model, [double], mode="lazy", max_corrections=1), CorrectionBudgetExceeded)
    assert len(error.result.turns) == 2
    assert error.result.turns[-1].errors[0].error["type"] == "unknown_tool"


@pytest.mark.parametrize("verdict", [Decision.accept(), True])
def test_approve_accepts_sync(verdict: Any) -> None:
    seen: list[obelisk.Approval] = []

    def approve(checked: obelisk.Approval) -> Any:
        assert len(ran) == 0  # nothing ran before the approval
        seen.append(checked)
        return verdict

    ran: list[int] = []

    @obelisk.tool(name="double")
    def counting_double(n: int) -> int:
        """Twice n, counted."""
        ran.append(n)
        return 2 * n

    model = ScriptedModel([answer(call("double", "†state.a", n=3), output="†state.a")])
    result = run(Loop(model, [counting_double], mode="lazy", approve=approve))
    assert result.output == 6 and ran == [3]
    (checked,) = seen
    assert checked.errors == ()
    assert [c.tool for c in checked.plan.calls] == ["double"]


def test_approve_rejects_async_with_a_reason() -> None:
    calls_seen: list[int] = []

    async def approve(checked: obelisk.Approval) -> Decision:
        await asyncio.sleep(0)
        calls_seen.append(len(checked.plan.calls))
        if len(calls_seen) == 1:
            return Decision.reject("refunds above 100 need a manager")
        return Decision.accept()

    plan = answer(call("double", "†state.a", n=50), output="†state.a")
    model = ScriptedModel([plan, plan])
    result = run(Loop(model, [double], mode="lazy", approve=approve))
    second = model.requests[1]
    (problem,) = errors(second)
    assert problem["error"]["type"] == "rejected"
    assert "refunds above 100 need a manager" in problem["error"]["message"]
    assert carried(second) == plan["calls"]
    assert state_of(second) == {}  # the rejected plan did not run
    assert result.output == 100 and calls_seen == [1, 1]


def test_approve_false_rejects_without_a_reason() -> None:
    model = ScriptedModel([answer(call("double", "†state.a", n=1))])
    error = stopped(
        Loop(model, [double], mode="lazy", approve=lambda c: False, max_corrections=0),
        CorrectionBudgetExceeded,
    )
    assert error.result.turns[0].errors[0].error["type"] == "rejected"
    assert error.result.state == {}


def test_approve_edit_is_checked_again_and_runs() -> None:
    seen: list[obelisk.Approval] = []

    def approve(checked: obelisk.Approval) -> Decision:
        seen.append(checked)
        if len(seen) == 1:
            return Decision.edit([call("double", "†state.a", n=21)])
        return Decision.accept()

    model = ScriptedModel([answer(call("double", "†state.a", n=1), output="†state.a")])
    result = run(Loop(model, [double], mode="lazy", approve=approve))
    assert len(seen) == 2
    assert seen[1].plan.calls[0].to_data()["n"] == 21
    assert result.output == 42 and result.state == {"a": 42}


def test_approve_sees_an_edit_with_errors_again() -> None:
    seen: list[obelisk.Approval] = []

    def approve(checked: obelisk.Approval) -> Decision:
        seen.append(checked)
        if len(seen) == 1:
            return Decision.edit([call("dubble", "†state.a", n=21)])  # a typo
        if len(seen) == 2:
            return Decision.edit([call("double", "†state.a", n=21)])  # fixed
        return Decision.accept()

    model = ScriptedModel([answer(call("double", "†state.a", n=1), output="†state.a")])
    result = run(Loop(model, [double], mode="lazy", approve=approve))
    assert len(seen) == 3
    assert [d.code for d in seen[1].errors] == ["unknown_tool"]
    assert result.output == 42 and len(model.requests) == 1


def test_accepting_an_edit_with_errors_sends_its_errors_to_the_model() -> None:
    broken = [call("dubble", "†state.a", n=21)]
    seen: list[obelisk.Approval] = []

    def approve(checked: obelisk.Approval) -> Any:
        seen.append(checked)
        return Decision.edit(broken) if len(seen) == 1 else True

    model = ScriptedModel(
        [
            answer(call("double", "†state.a", n=1)),
            answer(call("double", "†state.a", n=2)),
            answer(output="†state.a"),
        ]
    )
    result = run(Loop(model, [double], mode="lazy", approve=approve))
    second = model.requests[1]
    assert error_types(second) == ["unknown_tool"]
    assert carried(second) == broken
    assert state_of(second) == {}
    assert result.output == 4


def test_approve_is_refused_in_eager_mode() -> None:
    with pytest.raises(obelisk.UsageError, match="lazy mode only"):
        Loop(ScriptedModel(), [double], approve=lambda c: True)


# -- latent calls as sub-requests (lazy) -------------------------------------------------


def routed(top: list[Any], latent: list[Any]) -> ScriptedModel:
    """Answers top-level requests from ``top`` and latent sub-requests from ``latent``."""
    top_answers, latent_answers = list(top), list(latent)

    def respond(request: Request) -> Any:
        queue = latent_answers if request.config.get("mode") == "latent" else top_answers
        return queue.pop(0)

    return ScriptedModel(respond=respond)


def test_latent_call_runs_as_a_sub_request() -> None:
    model = routed(
        [answer(call("summarize", "†state.s", text="†input.text"), output="†state.s")],
        [answer(output="short")],
    )
    result = run(Loop(model, [SUMMARIZE], mode="lazy"), {"text": "a very long text"})
    assert result.output == "short" and result.state == {"s": "short"}
    top, sub = model.requests
    assert top.config["mode"] == "lazy"
    assert sub.config["mode"] == "latent" and sub.config["call"] == "#0 summarize"
    (tools,) = of_type(sub, "tool")
    assert tools["tools"] == [
        {
            "name": "summarize",
            "description": "Summarize a text.",
            "parameters": SUMMARIZE.parameters,
            "output": SUMMARIZE.output_schema,
            "latent": True,
        }
    ]
    assert input_of(sub) == {"text": "a very long text"}  # the resolved arguments
    assert sub.schema["properties"]["output"] == SUMMARIZE.output_schema
    assert of_type(sub, "state") == []
    assert result.turns[0].delegated == [
        {
            "call": "#0 summarize",
            "kind": "latent",
            "answers": [{"solution": {"calls": [], "output": "short"}}],
            "output": "short",
        }
    ]


def test_latent_answer_is_validated_and_corrected() -> None:
    model = routed(
        [answer(call("summarize", "†state.s", text="t"), output="†state.s")],
        [answer(output=42), answer(output="x" * 25), answer(output="ok")],
    )
    result = run(Loop(model, [SUMMARIZE], mode="lazy", max_corrections=2))
    assert result.output == "ok"
    subs = model.requests[1:]
    assert len(subs) == 3
    assert errors(subs[0]) == []
    for sub in subs[1:]:
        (problem,) = errors(sub)
        assert problem["call"] == "#0 summarize"
        assert problem["error"]["type"] == "invalid_output"
        assert "does not fit the schema of summarize" in problem["error"]["message"]


def test_latent_without_usable_answer_fails_that_call() -> None:
    model = routed(
        [
            answer(call("summarize", "†state.s", text="t"), call("double", "†state.d", n=2)),
            answer(output="†state.d"),
        ],
        [answer(output=1), answer(output=2)],
    )
    result = run(Loop(model, [SUMMARIZE, double], mode="lazy", max_corrections=1))
    top_requests = [r for r in model.requests if r.config["mode"] == "lazy"]
    (problem,) = errors(top_requests[1])
    assert problem["call"] == "#0 summarize"
    assert "no usable result for latent #0 summarize after 2 answers" in problem["error"]["message"]
    assert result.state == {"d": 4} and result.output == 4


def test_latent_alternatives_need_an_output_path_and_write_the_chosen_one() -> None:
    model = routed(
        [answer(call("summarize", "†state.short || †state.long", text="t"), output="†state")],
        [
            answer(output="plain"),
            answer(output={"outputPath": "†state.medium", "value": "x"}),
            answer(output={"outputPath": "†state.long", "value": "the long one"}),
        ],
    )
    result = run(Loop(model, [SUMMARIZE], mode="lazy"))
    assert result.state == {"long": "the long one"}
    first_sub = model.requests[1]
    output_schema = first_sub.schema["properties"]["output"]
    assert output_schema["required"] == ["outputPath", "value"]
    assert output_schema["properties"]["outputPath"] == {"enum": ["†state.short", "†state.long"]}
    assert output_schema["properties"]["value"] == SUMMARIZE.output_schema
    for sub in model.requests[2:4]:
        (problem,) = errors(sub)
        assert '"outputPath"' in problem["error"]["message"]


def test_latent_alternative_summary_is_json() -> None:
    chosen = {"outputPath": "†state.long", "value": "v"}
    model = routed(
        [answer(call("summarize", "†state.short || †state.long", text="t"), output="done")],
        [answer(output=chosen)],
    )
    result = run(Loop(model, [SUMMARIZE], mode="lazy"))
    (summary,) = json.loads(json.dumps(result.to_dict()))["turns"][0]["delegated"]
    assert summary["answers"] == [{"solution": {"calls": [], "output": chosen}}]
    assert "Outcome(" not in result.to_jsonl()


class Address(BaseModel):
    city: str


class Profile(BaseModel):
    name: str
    address: Address


def test_latent_sub_request_schema_with_defs_accepts_a_good_answer() -> None:
    profile = Tool.from_schema({"name": "profile", "output": Profile.model_json_schema()})
    good = {"name": "Ann", "address": {"city": "Oslo"}}
    model = routed([answer(call("profile", "†state.p"), output="†state.p")], [answer(output=good)])
    result = run(Loop(model, [profile], mode="lazy"))
    assert result.output == good
    sub = model.requests[1]
    checker = Draft202012Validator(sub.schema)
    assert checker.is_valid({"calls": [], "output": good})
    assert not checker.is_valid({"calls": [], "output": {"name": "Ann", "address": {}}})


# -- delegates ---------------------------------------------------------------------------


@obelisk.tool
async def weather(city: str) -> dict[str, Any]:
    """The weather of a city."""
    return {"city": city, "temp": len(city)}


def delegate_model(children: list[Request], parent_plan: list[dict[str, Any]]) -> ScriptedModel:
    """The parent runs ``parent_plan`` then outputs its state; every child calls
    weather on its input city, then outputs what weather wrote."""

    def respond(request: Request) -> Any:
        if request.config.get("depth"):
            children.append(request)
            if request.config["turn"] == 1:
                return answer(call("weather", "†state.w", city="†input.city"))
            return answer(output="†state.w")
        if request.config["turn"] == 1:
            return answer(*parent_plan)
        return answer(output="†state")

    return ScriptedModel(respond=respond)


def test_delegate_runs_an_isolated_sub_loop() -> None:
    children: list[Request] = []
    plan = [call("research", "†state.report", city="†input.city")]
    model = delegate_model(children, plan)
    loop = Loop(model, [weather, research_tool(["state"])])
    result = run(loop, {"city": "Paris", "secret": "s"}, {"seen": True})
    assert result.state == {"seen": True, "report": {"city": "Paris", "temp": 5}}
    first_child, second_child = children
    assert first_child.config == {"mode": "eager", "turn": 1, "max_turns": 8, "depth": 1}
    assert input_of(first_child) == {"city": "Paris"}  # the arguments, not the parent input
    assert state_of(first_child) == {"seen": True}  # scope "state": the parent's state
    assert state_of(second_child) == {"seen": True, "w": {"city": "Paris", "temp": 5}}
    assert any("#0 research" in t for t in texts(first_child))
    child_output = first_child.schema["properties"]["output"]
    made = output_schema_with_references(CITY)  # references allowed, held once in $defs
    assert child_output == shared_definitions(made, set())
    assert "w" not in result.state  # the child's writes stay in the child
    (summary,) = result.turns[0].delegated
    assert summary["call"] == "#0 research" and summary["kind"] == "delegate"
    assert summary["output"] == {"city": "Paris", "temp": 5}
    assert summary["answers"] == [
        {"solution": answer(call("weather", "†state.w", city="†input.city"))},
        {"solution": answer(output="†state.w")},
    ]


def test_delegate_without_state_scope_starts_empty() -> None:
    children: list[Request] = []
    plan = [call("research", "†state.report", city="Rome")]
    loop = Loop(delegate_model(children, plan), [weather, research_tool()])
    result = run(loop, {"city": "x"}, {"seen": True})
    assert state_of(children[0]) == {}
    assert result.state["report"] == {"city": "Rome", "temp": 4}


def test_delegate_output_is_validated_by_the_sub_loop() -> None:
    answers = iter(
        [
            answer(call("research", "†state.report", city="Oslo")),
            answer(output={"city": "Oslo"}),  # child: misses temp
            answer(output={"city": "Oslo", "temp": 1}),  # child: fixed
            answer(output="†state.report"),
        ]
    )
    model = ScriptedModel(respond=lambda request: next(answers))
    result = run(Loop(model, [research_tool()]))
    assert result.output == {"city": "Oslo", "temp": 1}
    assert error_types(model.requests[2]) == ["invalid_output"]
    assert model.requests[2].config["depth"] == 1


def test_delegate_nesting_past_max_depth_fails_that_call() -> None:
    seen: list[tuple[int, int, list[str]]] = []

    def respond(request: Request) -> Any:
        depth, turn = request.config.get("depth", 0), request.config["turn"]
        seen.append((depth, turn, error_types(request)))
        if turn == 1:
            return answer(call("research", "†state.r", city="deeper"))
        return answer(output={"city": f"depth {depth}", "temp": depth})

    model = ScriptedModel(respond=respond)
    result = run(Loop(model, [research_tool()], max_depth=1))
    assert seen == [
        (0, 1, []),
        (1, 1, []),
        (1, 2, ["DelegateDepthExceeded"]),
        (0, 2, []),
    ]
    child_second = model.requests[2]
    (problem,) = errors(child_second)
    assert problem["call"] == "#0 research"
    assert "max_depth=1" in problem["error"]["message"]
    assert result.status == "completed"
    assert result.state == {"r": {"city": "depth 1", "temp": 1}}


def test_max_depth_zero_fails_every_delegate_call() -> None:
    model = ScriptedModel(
        [answer(call("research", "†state.r", city="x")), answer(output="gave up")]
    )
    result = run(Loop(model, [research_tool()], max_depth=0))
    assert len(model.requests) == 2  # no child request at all
    assert error_types(model.requests[1]) == ["DelegateDepthExceeded"]
    assert carried(model.requests[1]) == [call("research", "†state.r", city="x")]
    assert result.state == {} and result.output == "gave up"


def test_for_each_delegates_run_in_parallel() -> None:
    cities = ["Paris", "Rome", "Oslo", "Lima"]
    delay = 0.25
    in_flight = {"now": 0, "peak": 0}

    @obelisk.tool(name="weather")
    async def slow_weather(city: str) -> dict[str, Any]:
        """The weather, slowly."""
        in_flight["now"] += 1
        in_flight["peak"] = max(in_flight["peak"], in_flight["now"])
        await asyncio.sleep(delay)
        in_flight["now"] -= 1
        return {"city": city, "temp": len(city)}

    def respond(request: Request) -> Any:
        if request.config.get("depth"):
            city = input_of(request)["city"]  # route by the sub-loop's input message
            if request.config["turn"] == 1:
                return answer(call("weather", "†state.w", city=city))
            return answer(output="†state.w")
        if request.config["turn"] == 1:
            return answer(
                *(
                    call("research", f"†state.report[{i}]", city=f"†input.cities[{i}]")
                    for i in range(len(cities))
                )
            )
        return answer(output="†state.report")

    loop = Loop(ScriptedModel(respond=respond), [slow_weather, research_tool()])
    started = time.perf_counter()
    result = run(loop, {"cities": cities})
    elapsed = time.perf_counter() - started
    assert result.output == [{"city": c, "temp": len(c)} for c in cities]
    assert in_flight["peak"] == len(cities)
    assert elapsed < delay * len(cities) / 2  # 1.0 s in sequence
    labels = [d["call"] for d in result.turns[0].delegated]
    assert sorted(labels) == [f"#{i} research" for i in range(len(cities))]


def test_jsonl_replays_sub_requests_too(tmp_path: Path) -> None:
    def respond(request: Request) -> Any:
        if request.config["mode"] == "latent":
            first = not errors(request)
            return answer(output=7 if first else "Paris")  # one correction
        if request.config.get("depth"):
            return answer(call("weather", "†state.w", city="†input.city"), output="†state.w")
        return answer(
            call("summarize", "†state.s", text="†input.text"),
            call("research", "†state.r", city="†state.s"),
            output="†state.r",
        )

    tools = [SUMMARIZE, weather, research_tool()]
    model = ScriptedModel(respond=respond)
    result = run(Loop(model, tools, mode="lazy"), {"text": "t"})
    assert result.output == {"city": "Paris", "temp": 5}
    lines = [json.loads(line) for line in result.to_jsonl().splitlines()]
    assert [line.get("subrequest") for line in lines] == [
        None,
        "#0 summarize",
        "#0 summarize",
        "#1 research",
    ]
    path = tmp_path / "transcript.jsonl"
    path.write_text(result.to_jsonl(), encoding="utf-8")
    replay = ScriptedModel.from_jsonl(path)
    again = run(Loop(replay, tools, mode="lazy"), {"text": "t"})
    assert again.state == result.state == {"s": "Paris", "r": {"city": "Paris", "temp": 5}}
    assert [r.to_data() for r in replay.requests] == [r.to_data() for r in model.requests]


# -- instances ---------------------------------------------------------------------------


def test_instances_get_their_own_input_and_state_layer() -> None:
    model = ScriptedModel(
        [
            answer(
                call("greet", "†state.g", name="†input.name", _instance="a"),
                call("greet", "†state.g", name="†input.name", _instance="b"),
                call("greet", "†state.shared", name="all"),
            ),
            answer(output="done"),
        ]
    )
    result = run(Loop(model, [greet]), instances={"a": {"name": "Ann"}, "b": {"name": "Bob"}})
    first, second = model.requests
    assert of_type(first, "input") == [
        {"type": "input", "input": {"name": "Ann"}, "instance": "a"},
        {"type": "input", "input": {"name": "Bob"}, "instance": "b"},
    ]
    assert state_of(second) == {"shared": "hi all"}
    assert state_of(second, "a") == {"shared": "hi all", "g": "hi Ann"}
    assert state_of(second, "b") == {"shared": "hi all", "g": "hi Bob"}
    assert state_of(first, "a") == {} and state_of(first, "b") == {}
    assert result.state == {"shared": "hi all"}
    assert result.instances == {
        "a": {"shared": "hi all", "g": "hi Ann"},
        "b": {"shared": "hi all", "g": "hi Bob"},
    }
    # The three writes do not interact, so their commit order is free (docs/semantics.md).
    assert sorted((e.instance or "", e.value) for e in result.log) == [
        ("", "hi all"),
        ("a", "hi Ann"),
        ("b", "hi Bob"),
    ]


def test_instance_reads_its_own_layer_in_a_later_turn() -> None:
    model = ScriptedModel(
        [
            answer(call("greet", "†state.g", name="†input.name", _instance="a")),
            answer(call("greet", "†state.again", name="†state.g", _instance="a")),
            answer(output="ok"),
        ]
    )
    result = run(Loop(model, [greet]), instances={"a": {"name": "Ann"}})
    assert state_of(model.requests[1], "a") == {"g": "hi Ann"}  # what the model was shown
    assert errors(model.requests[2]) == []
    assert result.instances["a"]["again"] == "hi hi Ann"
    assert "g" not in result.state


# -- the loop follows the spec: a starting plan, the state schema, lazy and eager _output


def test_the_caller_may_start_from_a_plan_that_the_first_request_carries() -> None:
    existing = [call("double", "†state.a", n="†input.n")]
    model = ScriptedModel([answer(call("double", "†state.a", n=5), output="†state.a")])
    result = run(Loop(model, [double]), {"n": 1}, plan=existing)
    assert carried(model.requests[0]) == existing
    assert result.output == 10
    with pytest.raises(obelisk.PlanError):
        Loop(ScriptedModel([]), [double]).run_sync(plan=[{"_tool": 3}])


def test_the_state_message_carries_the_state_schema() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "integer"}}}
    model = ScriptedModel([answer(output=1)])
    run(Loop(model, [double], state_schema=schema))
    (message,) = [m for m in model.requests[0].to_data()["context"] if m["type"] == "state"]
    assert message == {"type": "state", "state": {}, "schema": schema}
    plain = ScriptedModel([answer(output=1)])
    run(Loop(plain, [double]))
    assert of_type(plain.requests[0], "state") == [{"type": "state", "state": {}}]


def test_lazy_mode_refuses_output_in_the_plan() -> None:
    written = call("summarize", "†state.s", text="t", _output="done")
    model = ScriptedModel([answer(written)])
    with pytest.raises(obelisk.CorrectionBudgetExceeded) as stopped:
        run(Loop(model, [SUMMARIZE], mode="lazy", max_corrections=0))
    (turn,) = stopped.value.result.turns
    assert [e.error["type"] for e in turn.errors] == ["lazy_output"]
    assert turn.run is None  # nothing of the plan ran


def test_eager_output_needs_the_concrete_path() -> None:
    written = call("summarize", "†state.s || †state.failed", text="t", _output="done")
    fixed = call("summarize", "†state.s", text="t", _output="done")
    model = ScriptedModel([answer(written), answer(fixed, output="†state.s")])
    result = run(Loop(model, [SUMMARIZE]))
    assert error_types(model.requests[1]) == ["ambiguous_output"]
    assert result.output == "done"
