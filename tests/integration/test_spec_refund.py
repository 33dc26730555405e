"""The specification's "planning one step ahead" refund, verbatim (issue 27, point 7).

The model plans ``checkBillingHistory`` then ``issueRefund``; the next request
carries that plan and the new state; the model answers with the same calls again
plus the output (``spec_refund/transcript.jsonl``).  A call the model keeps never
runs twice: exactly one refund, in eager, lazy and step mode.  In step mode, with
the tools' ``effects`` declared, turn 1 runs only ``checkBillingHistory`` and
turn 2 ``issueRefund``, after the model has seen the chargeback.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from obelisk import Loop, Registry, ScriptedModel

HERE = Path(__file__).parent / "spec_refund"
INPUT = {"customerId": "c-7", "amount": 25.0}


def _run(mode: str, advance: str) -> tuple[Any, ScriptedModel, list[dict[str, Any]]]:
    registry = Registry.from_module(str(HERE / "tools.py"))
    refunds = registry["issueRefund"].function.__globals__["REFUNDS"]
    refunds.clear()
    model = ScriptedModel.from_jsonl(HERE / "transcript.jsonl")
    loop = Loop(model, registry, mode=mode, advance=advance)  # type: ignore[arg-type]
    return loop.run_sync(INPUT), model, refunds


def _context(model: ScriptedModel, request: int, kind: str) -> list[dict[str, Any]]:
    return [m for m in model.requests[request].to_data()["context"] if m["type"] == kind]


@pytest.mark.parametrize(
    ("mode", "advance"), [("eager", "all"), ("lazy", "all"), ("eager", "step"), ("lazy", "step")]
)
def test_the_refund_the_model_plans_again_is_issued_once(mode: str, advance: str) -> None:
    result, model, refunds = _run(mode, advance)
    assert result.status == "completed" and len(model.requests) == 2
    assert len(refunds) == 1
    assert result.output == {"refund": refunds[0], "chargeback": True}
    # the next request carried the plan, each call with its status, and the new state
    (plan,) = _context(model, 1, "plan")
    assert [c["_tool"] for c in plan["plan"]] == ["checkBillingHistory", "issueRefund"]
    statuses = [c["_status"] for c in plan["plan"]]
    assert statuses == (["succeeded", "planned"] if advance == "step" else ["succeeded"] * 2)
    (state,) = _context(model, 1, "state")
    assert state["state"]["history"]["chargeback"] is True


def test_step_mode_refunds_only_after_the_model_saw_the_chargeback() -> None:
    result, model, refunds = _run("eager", "step")
    first, second = result.turns
    assert first.run is not None and second.run is not None
    assert [(c.label, c.status) for c in first.run.calls] == [
        ("#0 checkBillingHistory", "succeeded"),
        ("#1 issueRefund", "skipped"),  # planned: a later step runs it
    ]
    (state,) = _context(model, 1, "state")
    assert "refund" not in state["state"]  # the model saw the chargeback, not a refund
    assert [c.kind for c in result.revisions[1].diff.changes] == ["kept", "carried"]
    assert [e.path for e in second.entries] == ["†state.refund"]
    assert refunds == [result.state["refund"]]
