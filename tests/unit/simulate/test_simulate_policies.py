"""A dry run reports what the policies would decide (docs/simulate.md, "Policies"):
per scenario, the decision on each call that runs (a policy callable sees the
arguments of that scenario), the calls that may need a person across scenarios, and
the whole-plan approval of a lazy loop shows them."""

from __future__ import annotations

from typing import Any

import obelisk
from obelisk import Allow, Ask, Decision, Outcome, PolicyCall, ScriptedModel


@obelisk.tool(output_trust="untrusted", outcomes=["yes", "no"])
def judge(text: str) -> Outcome:
    "A review's verdict."
    return Outcome("yes" if "good" in text else "no", text)


@obelisk.tool(effects={"mail": "write"})
def post(to: str, body: Any = None) -> str:
    "Post a message."
    return f"posted to {to}"


@obelisk.tool(output_trust="untrusted")
def read_file(path: str) -> dict[str, Any]:
    "File content."
    return {"iban": "ATTACKER"}


@obelisk.tool(effects={"bank": "write"}, trusted_args=["iban"], on_untrusted="deny")
def pay(iban: str, amount: float) -> str:
    "Pay."
    return "paid"


def _big(call: PolicyCall) -> Allow | Ask:
    return Ask("a big amount") if call.arguments.get("amount", 0) > 100 else Allow()


checked_pay = obelisk.Tool.from_function(pay.function, name="checked_pay", policy=_big)

PLAN = [
    {"_tool": "judge", "text": "good", "_outputPath": "†state.yes || †state.no"},
    # runs only when judge says yes: decided by an untrusted result
    {"_tool": "post", "to": "†state.yes && †input.to", "_outputPath": "†state.posted"},
    {"_tool": "checked_pay", "iban": "†input.iban", "amount": 500, "_outputPath": "†state.p"},
]
TOOLS = [judge, post, checked_pay]
INPUT = {"to": "bob", "iban": "MINE"}


def test_each_scenario_reports_the_decisions_of_the_calls_it_runs() -> None:
    report = obelisk.simulate(PLAN, TOOLS, input=INPUT, policy="strict")
    by_arm = {scenario.arms["#0 judge"]: scenario for scenario in report.scenarios}
    yes, no = by_arm["yes"], by_arm["no"]
    assert yes.policy["#1 post"]["action"] == "ask"
    assert "comes from `#0 judge`" in yes.policy["#1 post"]["reason"]
    assert yes.policy["#2 checked_pay"] == {"action": "ask", "reason": "a big amount"}
    assert "#1 post" not in no.policy  # it is skipped in that scenario
    assert yes.approvals == ["#1 post", "#2 checked_pay"] and no.approvals == ["#2 checked_pay"]
    assert yes.to_dict()["policy"] == yes.policy
    assert report.needing_approval == ["#1 post", "#2 checked_pay"]


def test_the_report_lists_the_calls_that_may_need_a_person() -> None:
    report = obelisk.simulate(PLAN, TOOLS, input=INPUT, policy="strict")
    needs = {need.label: need.reasons for need in report.approval_needs}
    assert needs["#2 checked_pay"] == ("decided at run time by its policy",)
    assert "comes from `#0 judge`" in needs["#1 post"][0]
    assert report.summary()["approval_needs"][0]["label"] == "#1 post"
    lines = report.policy_lines()
    assert lines[0].startswith("may need a person: #1 post: argument `to` of `#1 post`")
    assert any(line.startswith("scenario ") and "ask #2 checked_pay" in line for line in lines)


def test_off_mode_and_no_labels_change_nothing() -> None:
    off = obelisk.simulate(PLAN[:2], [judge, post], input=INPUT)
    assert all(scenario.policy == {} for scenario in off.scenarios)
    assert off.approval_needs == ()
    plain = obelisk.simulate([{"_tool": "post", "to": "bob"}], [post])
    assert plain.scenarios[0].policy == {} and plain.scenarios[0].approvals == []


def test_a_deny_is_reported_and_the_dry_run_still_plays_the_plan() -> None:
    plan = [
        {"_tool": "read_file", "path": "bill.txt", "_outputPath": "†state.bill"},
        {"_tool": "pay", "iban": "†state.bill.iban", "amount": 5, "_outputPath": "†state.p"},
    ]
    report = obelisk.simulate(plan, [read_file, pay], stubs={"read_file": {"iban": "X"}})
    [scenario] = report.scenarios
    assert scenario.policy["#1 pay"]["action"] == "deny"
    assert "comes from `#0 read_file`" in scenario.policy["#1 pay"]["reason"]


def test_the_whole_plan_approval_shows_the_policies() -> None:
    seen: list[obelisk.Approval] = []

    def approve(approval: obelisk.Approval) -> Decision:
        seen.append(approval)
        return Decision.accept()

    model = ScriptedModel([{"calls": PLAN[:2]}])
    loop = obelisk.Loop(model, [judge, post], mode="lazy", approve=approve, policy="strict")
    result = loop.run_sync(INPUT)
    assert [p.call for p in result.pending] == [1]  # the run asks, as the check said
    [approval] = seen
    assert [need.label for need in approval.checked.approval_load] == ["#1 post"]
    assert [d.code for d in approval.warnings] == ["untrusted_flow"]
    lines = approval.summary_lines()
    assert any("may need a person: #1 post" in line for line in lines)
    assert any("ask #1 post" in line for line in lines)
