"""The four execution-loop examples (examples/loop_*) reach their expected output and state.

Each folder has tools.py, input.json, transcript.jsonl (the scripted model's
answers, one solution per line), expected.json (``{"output", "state"}``) and
optionally output_schema.json.  They run through the Python API
(``Loop(ScriptedModel.from_jsonl(...), tools).run_sync(input)``) and through
``python -m obelisk loop --model scripted:... --json``; the tools are the
folder's tools.py only, as ``obelisk loop --tools`` loads them.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from obelisk import Loop, LoopResult, LoopStopped, Registry, ScriptedModel, check
from obelisk.interpreter.loop.messages import ErrorMessage, PlanMessage, StateMessage

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
MODES = {
    "loop_hotel": "eager",
    "loop_payment": "eager",
    "loop_refund": "lazy",
    "loop_translate": "eager",
}
NAMES = sorted(MODES)


def _read(folder: Path, name: str) -> Any:
    path = folder / name
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else None


def _run(
    name: str, *, mode: str | None = None, given: Any = None
) -> tuple[LoopResult, ScriptedModel, dict[str, Any]]:
    folder = EXAMPLES / name
    model = ScriptedModel.from_jsonl(folder / "transcript.jsonl")
    loop = Loop(
        model,
        Registry.from_module(str(folder / "tools.py")),
        mode="lazy" if (mode or MODES[name]) == "lazy" else "eager",
        output_schema=_read(folder, "output_schema.json"),
    )
    result = loop.run_sync(_read(folder, "input.json") if given is None else given)
    return result, model, _read(folder, "expected.json")


def _context(model: ScriptedModel, request: int, kind: type[Any]) -> list[Any]:
    return [m for m in model.requests[request].context if isinstance(m, kind)]


def test_every_loop_example_has_its_files() -> None:
    found = sorted(p.name for p in EXAMPLES.iterdir() if (p / "transcript.jsonl").exists())
    assert found == NAMES
    for name in NAMES:
        files = {p.name for p in (EXAMPLES / name).iterdir()}
        assert files >= {"tools.py", "input.json", "transcript.jsonl", "expected.json"}
        assert set(_read(EXAMPLES / name, "expected.json")) == {"output", "state"}


@pytest.mark.parametrize("name", NAMES)
def test_example_reaches_its_expected_output_and_state(name: str) -> None:
    result, model, expected = _run(name)
    assert result.status == "completed"
    assert {"output": result.output, "state": result.state} == expected
    transcript = (EXAMPLES / name / "transcript.jsonl").read_text(encoding="utf-8")
    assert len(result.turns) == len(model.requests) == len(transcript.splitlines())


@pytest.mark.parametrize("name", NAMES)
def test_example_through_the_cli(name: str) -> None:
    folder = EXAMPLES / name
    args = [
        sys.executable,
        "-m",
        "obelisk",
        "loop",
        "--model",
        f"scripted:{folder / 'transcript.jsonl'}",
        "--mode",
        MODES[name],
        "--tools",
        str(folder / "tools.py"),
        "--input",
        str(folder / "input.json"),
        "--json",
    ]
    if (folder / "output_schema.json").exists():
        args += ["--output-schema", str(folder / "output_schema.json")]
    done = subprocess.run(args, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    payload = json.loads(done.stdout)
    assert list(payload) == ["status", "output", "state", "turns", "revisions"]  # issue 27
    assert payload["status"] == "completed"
    assert {"output": payload["output"], "state": payload["state"]} == _read(
        folder, "expected.json"
    )


def test_refund_plans_the_happy_path_in_one_checked_turn() -> None:
    folder = EXAMPLES / "loop_refund"
    solution = json.loads((folder / "transcript.jsonl").read_text(encoding="utf-8"))
    tools = Registry.from_module(str(folder / "tools.py"))
    assert check(solution["calls"], tools, input=_read(folder, "input.json")).diagnostics == ()
    result, model, _ = _run("loop_refund")
    assert len(model.requests) == 1
    run = result.turns[0].run
    assert run is not None
    assert [(c.label, c.status) for c in run.calls] == [
        ("#0 get_order", "succeeded"),
        ("#1 check_eligibility", "succeeded"),
        ("#2 issue_refund", "succeeded"),
    ]
    assert result.turns[0].errors == []
    # the same answer in eager mode does the same
    eager, _, expected = _run("loop_refund", mode="eager")
    assert {"output": eager.output, "state": eager.state} == expected


def test_refund_of_an_ineligible_order_issues_nothing() -> None:
    with pytest.raises(LoopStopped) as stopped:  # the script has no second answer
        _run("loop_refund", given={"orderId": "o-1002", "reason": "changed my mind"})
    result = stopped.value.result
    assert "receipt" not in result.state
    assert result.state["ineligible"].startswith("order o-1002 was delivered 45 days ago")
    turn = result.turns[0]
    assert turn.run is not None and turn.run.calls[2].status == "skipped"
    assert turn.run.calls[2].untaken  # the eligible branch was not taken: not an error
    assert [(e.call, e.error["type"]) for e in turn.errors] == [(None, "invalid_output")]
    assert turn.errors[0].error["message"] == (
        "output reads †state.receipt.refund_id, which does not exist"
    )


def test_hotel_replans_from_the_search_results_and_the_failed_booking() -> None:
    result, model, _ = _run("loop_hotel")
    first, second = result.turns
    assert _context(model, 0, StateMessage)[0].state == {}
    assert first.run is not None
    assert [c.status for c in first.run.calls] == ["succeeded", "failed"]
    # turn 2 sees the search results in the state ...
    state = _context(model, 1, StateMessage)[0].state
    assert [h["name"] for h in state["hotels"]] == ["Casa do Largo", "Alfama Patio", "Tejo Lofts"]
    # ... and the whole plan it wrote, with the booking that failed and its error
    (carried,) = _context(model, 1, PlanMessage)
    assert [c["_tool"] for c in carried.plan] == ["search_hotels", "book_hotel"]
    assert carried.plan[1]["hotel_id"] == "†state.hotels.0.id"
    (error,) = _context(model, 1, ErrorMessage)
    assert error.call == "#1 book_hotel"
    assert error.error == {
        "type": "ValueError",
        "message": "Casa do Largo does not accept pets of kind 'dog'",
    }
    # the replanned turn filters and books a hotel that takes the dog
    assert second.solution is not None
    assert [c["_tool"] for c in second.solution.calls] == ["pet_friendly", "book_hotel"]
    assert [h["id"] for h in result.state["petFriendly"]] == ["h-3", "h-2"]
    assert result.state["booking"]["pet"] == "dog"
    assert result.output["hotel"] == "Tejo Lofts"


def test_payment_failure_goes_to_the_error_arm_and_is_reported() -> None:
    result, model, _ = _run("loop_payment")
    first, second = result.turns
    assert first.run is not None
    charge = first.run.calls[0]
    assert (charge.label, charge.status) == ("#0 chargeCard", "succeeded")  # handled by the arm
    declined = {
        "type": "PaymentDeclined",
        "message": "card ending 0002 was declined: insufficient funds",
    }
    assert [(e.call, e.error) for e in first.errors] == [("#0 chargeCard", declined)]
    assert [entry.path for entry in first.entries] == ["†state.paymentError"]
    # the next request carries the error record and the error arm in the state
    assert [(e.call, e.error) for e in _context(model, 1, ErrorMessage)] == [
        ("#0 chargeCard", declined)
    ]
    arm = _context(model, 1, StateMessage)[0].state["paymentError"]
    assert arm == {"error": {**declined, "tool": "chargeCard", "call": 0}}
    (plan,) = _context(model, 1, PlanMessage)  # the plan as written; the state shows it ran
    written = [{k: v for k, v in c.items() if k != "_status"} for c in plan.plan]  # issue 27
    assert written == first.solution.calls  # type: ignore[union-attr]
    assert second.solution is not None
    (report,) = second.solution.calls
    assert (report["_tool"], report["error"]) == ("reportFailure", "†state.paymentError")
    assert "receipt" not in result.state
    assert result.output["paid"] is False


def test_translate_is_latent_and_its_inline_output_is_checked() -> None:
    folder = EXAMPLES / "loop_translate"
    tools = Registry.from_module(str(folder / "tools.py"))
    assert tools["translate"].latent and not tools["glossary"].latent
    result, model, _ = _run("loop_translate")
    glossary, wrong, fixed = result.turns
    assert glossary.errors == [] and glossary.run is not None
    # turn 2 wrote "French" where the tool's output schema wants a code: nothing ran
    assert wrong.run is None and wrong.entries == []
    (error,) = wrong.errors
    assert (error.call, error.error["type"], error.error["path"]) == (
        "#0 translate",
        "invalid_output",
        "_output.source",
    )
    (carried,) = _context(model, 2, PlanMessage)
    assert carried.plan[0]["_output"]["source"] == "French"
    assert fixed.run is not None
    assert [(c.label, c.status) for c in fixed.run.calls] == [("#0 translate", "succeeded")]
    # the translation used the glossary the model saw in turn 2's state
    assert _context(model, 1, StateMessage)[0].state["glossary"]["remboursement"] == "refund"
    jsonschema.validate(result.output, _read(folder, "output_schema.json"))
    assert result.output["source"] == "fr"
