"""``obelisk.simulate``: dry runs in every branch, and that they predict real runs."""

from __future__ import annotations

from typing import Any

import pytest

import obelisk
from obelisk import Outcome


@obelisk.tool
def get_customer(customer_id: str) -> dict[str, str]:
    """Look a customer up."""
    raise AssertionError("a dry run never calls a tool")


@obelisk.tool(requires_approval=True)
def charge(customer: str, amount: float) -> dict[str, Any]:
    """Charge a customer."""
    raise AssertionError("a dry run never calls a tool")


@obelisk.tool
def send_receipt(email: str, receipt: dict[str, Any]) -> str:
    """Send a receipt."""
    raise AssertionError("a dry run never calls a tool")


@obelisk.tool
def report_failure(error: dict[str, Any]) -> str:
    """Report a failure."""
    raise AssertionError("a dry run never calls a tool")


@obelisk.tool(outcomes=["approved", "declined"])
def review(amount: float) -> Outcome:
    """Review an amount."""
    raise AssertionError("a dry run never calls a tool")


@obelisk.tool(pure=True)
def total(values: list[float]) -> float:
    """A pure tool: the dry run may really run it."""
    return sum(values)


TOOLS = [get_customer, charge, send_receipt, report_failure, review, total]
PAYMENT: list[dict[str, Any]] = [
    {"_tool": "get_customer", "customer_id": "†input.id", "_outputPath": "†state.customer"},
    {"_tool": "charge", "customer": "†state.customer.id", "amount": "†input.amount",
     "_outputPath": "†state.receipt || †state.error"},
    {"_tool": "send_receipt", "email": "†state.customer.email", "receipt": "†state.receipt",
     "_outputPath": "†state.notice"},
    {"_tool": "report_failure", "error": "†state.error", "_outputPath": "†state.notice"},
]  # fmt: skip
STUBS = {"get_customer": {"id": "c-1", "email": "c@example.com"}, "charge": {"paid": 5}}


def test_every_branch_is_explored_and_reported() -> None:
    report = obelisk.simulate(
        PAYMENT, TOOLS, input={"id": "c-1", "amount": 5}, stubs=STUBS, latency={"charge": 2.0}
    )
    assert (report.explored, report.total, report.at_least, report.truncated) == (2, 2, 2, False)
    success, failure = report.scenarios
    assert success.arms == {"#1 charge": "†state.receipt"}
    assert failure.arms == {"#1 charge": "error arm"}
    assert success.ran == ["#0 get_customer", "#1 charge", "#2 send_receipt"]
    assert success.skipped == {
        "#3 report_failure": "†state.error was not written: #1 charge wrote †state.receipt"
    }
    assert failure.writes == {
        "†state.customer": "#0 get_customer",
        "†state.error": "#1 charge",
        "†state.notice": "#3 report_failure",
    }
    assert success.critical_path == ["#0 get_customer", "#1 charge", "#2 send_receipt"]
    assert (success.critical_seconds, success.makespan, success.peak_concurrency) == (4, 4, 1)
    assert success.cost == 3.0 and success.approvals == ["#1 charge"]
    assert failure.state["error"]["error"]["type"] == "SimulatedFailure"
    assert report.never_run == {}
    assert report.written_never_read == ["†state.notice"]
    assert report.read_in_some == ["†state.customer.email", "†state.error", "†state.receipt"]
    assert report.needing_approval == ["#1 charge"]
    assert report.approval_load == pytest.approx(1 / 4)


def test_declared_outcomes_stub_lists_and_pure_tools() -> None:
    plan = [
        {"_tool": "review", "amount": 500, "_outputPath": "†state.ok || †state.no"},
        {"_tool": "total", "values": [1, 2], "_outputPath": "†state.sum"},
        {"_tool": "charge", "customer": "c", "amount": "†state.sum", "_outputPath": "†state.c"},
    ]
    report = obelisk.simulate(
        plan,
        TOOLS,
        stubs={"review": "fine", "charge": [{"paid": 3}, ValueError("card declined")]},
    )
    assert report.explored == 4
    assert [s.arms for s in report.scenarios] == [
        {"#0 review": "approved"},
        {"#0 review": "approved", "#2 charge": "raises ValueError"},
        {"#0 review": "declined"},
        {"#0 review": "declined", "#2 charge": "raises ValueError"},
    ]
    assert report.scenarios[0].state == {"ok": "fine", "sum": 3.0, "c": {"paid": 3}}
    assert report.scenarios[1].failed == {"#2 charge": "ValueError: card declined"}
    assert report.side_effects == ["#0 review", "#2 charge"]  # total is pure


def test_max_scenarios_cuts_and_says_so() -> None:
    plan = [
        {
            "_tool": "charge",
            "customer": "c",
            "amount": i,
            "_outputPath": f"†state.a{i} || †state.e{i}",
        }
        for i in range(5)
    ]
    report = obelisk.simulate(plan, TOOLS, stubs={"charge": {}}, max_scenarios=8)
    assert (report.explored, report.total, report.truncated) == (8, None, True)
    assert report.at_least == 16 and report.scenario_count() == "at least 16"
    counted = obelisk.simulate(plan, TOOLS, stubs={"charge": {}}, max_scenarios=16)
    assert (counted.explored, counted.total, counted.truncated) == (16, 2**5, True)
    assert counted.scenario_count() == "32"
    whole = obelisk.simulate(plan, TOOLS, stubs={"charge": {}}, max_scenarios=32)
    assert (whole.explored, whole.total, whole.truncated) == (32, 32, False)


def test_generated_values_are_repeatable_and_fit() -> None:
    plan = [{"_tool": "get_customer", "customer_id": "x", "_outputPath": "†state.c"}]
    first = obelisk.simulate(plan, TOOLS, seed=7).scenarios[0].state
    again = obelisk.simulate(plan, TOOLS, seed=7).scenarios[0].state
    assert first == again and isinstance(first["c"], dict)
    assert all(isinstance(v, str) for v in first["c"].values())


def test_bad_stubs_are_diagnostics_that_name_the_tool() -> None:
    report = obelisk.simulate(PAYMENT, TOOLS, input={"id": "c", "amount": 1},
                              stubs={"get_customer": 42, "nope": 1})  # fmt: skip
    messages = sorted(d.message for d in report.diagnostics if d.code == "invalid_stub")
    assert messages[0].startswith("stub 'nope' names no tool")
    assert "the stub of get_customer does not fit its output schema" in messages[1]


def test_a_scenario_predicts_the_real_run() -> None:
    """Tools that give a scenario's outcomes make a real run equal to the scenario."""
    report = obelisk.simulate(PAYMENT, TOOLS, input={"id": "c-1", "amount": 5}, stubs=STUBS)
    for scenario in report.scenarios:
        failing = scenario.arms.get("#1 charge") == "error arm"

        @obelisk.tool(name="get_customer")
        def customer(customer_id: str) -> dict[str, str]:
            """Stub."""
            return STUBS["get_customer"]

        @obelisk.tool(name="charge")
        def paying(customer: str, amount: float, failing: bool = failing) -> dict[str, Any]:
            """Stub."""
            if failing:
                raise RuntimeError("charge failed (simulated)")
            return STUBS["charge"]

        @obelisk.tool(name="send_receipt")
        def receipt(email: str, receipt: dict[str, Any]) -> str:
            """Stub."""
            return "sent"

        @obelisk.tool(name="report_failure")
        def failure(error: dict[str, Any]) -> str:
            """Stub."""
            return "reported"

        real = obelisk.run_sync(
            PAYMENT, [customer, paying, receipt, failure], input={"id": "c-1", "amount": 5}
        )
        assert [r.status for r in real.calls] == [r.status for r in scenario.calls]
        assert [r.reason for r in real.calls] == [r.reason for r in scenario.calls]
        assert set(real.state) == set(scenario.state)
