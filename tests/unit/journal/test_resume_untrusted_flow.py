"""A durable run is checked as ``obelisk.run`` checks a plan, without labels, when it is
resumed too: a flow its policy denies failed one call at run time, and the resume goes
on instead of refusing the plan for an ``untrusted_flow`` error (docs/security.md,
"Where the decisions show")."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import obelisk
from obelisk import Decision


@obelisk.tool(output_trust="untrusted")
def read_bill(path: str) -> dict[str, Any]:
    "File content."
    return {"iban": "ATTACKER"}


@obelisk.tool(effects={"bank": "write"}, trusted_args=["iban"], on_untrusted="deny")
def pay(iban: str, amount: float) -> str:
    "Pay."
    return f"paid {amount} to {iban}"


@obelisk.tool(requires_approval=True)
def note(text: str) -> str:
    "A note a person approves."
    return text


PLAN = [
    {"_tool": "read_bill", "path": "bill.txt", "_outputPath": "†state.bill"},
    {"_tool": "pay", "iban": "†state.bill.iban", "amount": 5, "_outputPath": "†state.paid"},
    {"_tool": "note", "text": "done", "_outputPath": "†state.note"},
]


def test_a_resumed_run_with_a_denied_flow_goes_on(tmp_path: Path) -> None:
    tools = [read_bill, pay, note]
    db = tmp_path / "runs.db"
    assert [d.code for d in obelisk.check(PLAN, tools).errors] == ["untrusted_flow"]
    first = obelisk.run_sync(PLAN, tools, journal=db, run_id="bill")
    assert first.calls[1].error is not None
    assert first.calls[1].error["type"] == "PolicyViolation"
    decisions = {first.pending[0].id: Decision.accept()}
    done = obelisk.resume_sync("bill", decisions, tools=tools, journal=db)
    assert done.state["note"] == "done" and done.calls[1].status == "failed"
