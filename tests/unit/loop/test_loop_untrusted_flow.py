"""The loop checks each plan its model writes with the loop's policy and input labels:
a flow a policy would deny goes back to the model as a located error before anything of
that plan runs (docs/security.md, "Where the decisions show")."""

from __future__ import annotations

from typing import Any

import obelisk
from obelisk import ScriptedModel


@obelisk.tool(output_trust="untrusted")
def read_file(path: str) -> dict[str, Any]:
    "File content."
    return {"iban": "ATTACKER"}


paid: list[str] = []


@obelisk.tool(effects={"bank": "write"}, trusted_args=["iban"], on_untrusted="deny")
def pay(iban: str, amount: float) -> str:
    "Pay."
    paid.append(iban)
    return "paid"


def test_a_denied_flow_goes_back_to_the_model_and_nothing_of_that_plan_runs() -> None:
    read = {"_tool": "read_file", "path": "bill.txt", "_outputPath": "†state.bill"}
    bad = {"calls": [read, {"_tool": "pay", "iban": "†state.bill.iban", "amount": 5}]}
    good = {"calls": [{"_tool": "pay", "iban": "†input.iban", "amount": 5}], "output": "done"}
    model = ScriptedModel([bad, good])
    result = obelisk.Loop(model, [read_file, pay]).run_sync({"iban": "MINE"})
    first = result.turns[0]
    assert [e.error["type"] for e in first.errors] == ["untrusted_flow"]
    assert "comes from `#0 read_file`" in first.errors[0].error["message"]
    assert paid == ["MINE"] and result.output == "done"
