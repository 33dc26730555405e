"""``CheckResult`` is the hand-off between stages (issue 26 point 4; docs/semantics.md,
"Check once, then run").

``obelisk.run``, ``run_sync``, ``obelisk.simulate``, a durable run and ``Loop(plan=...)``
take the ``CheckResult`` of ``obelisk.check`` and never check the plan again;
``obelisk run --approve`` and ``obelisk simulate --graph`` check once.  The checks are
counted as the ``PlanGraph`` objects built: every check builds exactly one, and nothing
else in these paths builds one.

A ``CheckResult`` checked against other tools, documents, limits or mode is refused
with a ``UsageError`` naming each difference; one with errors raises the ``PlanError``
that running the plan raises.
"""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import obelisk
from obelisk.cli.app import app
from obelisk.interpreter.analysis.graph import PlanGraph


@obelisk.tool
def double(n: int) -> int:
    """Twice n."""
    return 2 * n


@obelisk.tool(requires_approval=True)
def refund(amount: int) -> str:
    """Gives money back."""
    return f"refunded {amount}"


PLAN = [
    {"_tool": "double", "n": "†input.n", "_outputPath": "†state.a"},
    {"_tool": "double", "n": "†state.a", "_outputPath": "†state.b"},
]
INPUT = {"n": 3}
TOOLS_FILE = '''
from obelisk import tool


@tool
def double(n: int) -> int:
    """Twice n."""
    return 2 * n
'''


@pytest.fixture
def checks(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """One entry per plan checked (per ``PlanGraph`` built)."""
    built: list[int] = []
    build = PlanGraph.__init__

    def counted(self: PlanGraph, *args: Any, **kwargs: Any) -> None:
        built.append(len(built))
        build(self, *args, **kwargs)

    monkeypatch.setattr(PlanGraph, "__init__", counted)
    return built


# -- counted checks ------------------------------------------------------------------


def test_run_of_a_check_result_checks_once(checks: list[int]) -> None:
    checked = obelisk.check(PLAN, [double], INPUT)
    result = obelisk.run_sync(checked, [double], INPUT)
    assert result.status == "completed" and result.state == {"a": 6, "b": 12}
    assert result.diagnostics == checked.diagnostics
    assert len(checks) == 1


def test_run_of_a_check_result_awaits_too(checks: list[int]) -> None:
    import asyncio

    checked = obelisk.check(PLAN, [double], INPUT)
    result = asyncio.run(obelisk.run(checked, [double], INPUT))
    assert result.state == {"a": 6, "b": 12}
    assert len(checks) == 1


def test_run_sync_of_a_plan_checks_once(checks: list[int]) -> None:
    assert obelisk.run_sync(PLAN, [double], INPUT).state == {"a": 6, "b": 12}
    assert len(checks) == 1


def test_simulate_of_a_check_result_checks_once(checks: list[int]) -> None:
    checked = obelisk.check(PLAN, [double], INPUT)
    report = obelisk.simulate(checked, [double], INPUT, stubs={"double": 7})
    assert report.scenarios[0].state == {"a": 7, "b": 7}
    assert len(checks) == 1


def test_a_journaled_run_of_a_check_result_and_its_resume_check_once_each(
    tmp_path: Path, checks: list[int]
) -> None:
    db = tmp_path / "runs.db"
    plan = [*PLAN, {"_tool": "refund", "amount": "†state.b", "_outputPath": "†state.r"}]
    checked = obelisk.check(plan, [double, refund], INPUT)
    paused = obelisk.run_sync(checked, [double, refund], INPUT, journal=db, run_id="r1")
    assert paused.status == "awaiting_approval"
    assert len(checks) == 1
    # resuming by id re-derives the plan from the journal: it is checked once, there
    decisions = {paused.pending[0].id: obelisk.Decision.accept()}
    done = obelisk.resume_sync("r1", decisions, tools=[double, refund], journal=db)
    assert done.status == "completed" and done.state["r"] == "refunded 12"
    assert len(checks) == 2


def test_a_journaled_run_of_a_plan_checks_once(tmp_path: Path, checks: list[int]) -> None:
    result = obelisk.run_sync(PLAN, [double], INPUT, journal=tmp_path / "runs.db")
    assert result.state == {"a": 6, "b": 12}
    assert len(checks) == 1


def test_resuming_a_result_kept_in_memory_checks_nothing(checks: list[int]) -> None:
    plan = [{"_tool": "refund", "amount": 5, "_outputPath": "†state.r"}]
    paused = obelisk.run_sync(obelisk.check(plan, [refund]), [refund])
    done = obelisk.resume_sync(paused, {paused.pending[0].id: obelisk.Decision.accept()})
    assert done.state == {"r": "refunded 5"}
    assert len(checks) == 1


def test_a_loop_turn_checks_its_answer_once(checks: list[int]) -> None:
    answer = {"calls": PLAN, "output": "†state.b"}
    loop = obelisk.Loop(obelisk.ScriptedModel([answer]), [double])
    result = loop.run_sync(INPUT)
    assert result.output == 12
    assert len(checks) == 1


def test_a_lazy_loop_turn_shows_and_runs_one_check(checks: list[int]) -> None:
    seen: list[obelisk.Approval] = []

    def approve(approval: obelisk.Approval) -> bool:
        seen.append(approval)
        return True

    answer = {"calls": PLAN, "output": "†state.b"}
    loop = obelisk.Loop(obelisk.ScriptedModel([answer]), [double], mode="lazy", approve=approve)
    result = loop.run_sync(INPUT)
    assert result.output == 12 and len(seen) == 1
    assert len(checks) == 1  # the approver's check (and dry run) is the one that runs


def test_a_loop_takes_a_check_result_as_its_starting_plan(checks: list[int]) -> None:
    checked = obelisk.check(PLAN, [double], INPUT)
    model = obelisk.ScriptedModel([{"calls": PLAN, "output": "†state.b"}])
    result = obelisk.Loop(model, [double]).run_sync(INPUT, plan=checked)
    assert result.output == 12
    assert len(checks) == 2  # the starting plan's check, and the turn's answer
    assert checked.plan is not None
    plans = [m for m in model.requests[0].to_data()["context"] if m["type"] == "plan"]
    planned = [{**call.to_data(), "_status": "planned"} for call in checked.plan.calls]
    assert [m["plan"] for m in plans] == [planned]  # issue 27: each call's _status


def test_a_loop_refuses_a_check_result_whose_plan_did_not_parse() -> None:
    broken = obelisk.check("[{", [double])
    loop = obelisk.Loop(obelisk.ScriptedModel([]), [double])
    with pytest.raises(obelisk.PlanError) as raised:
        loop.run_sync(plan=broken)
    assert raised.value.diagnostics == broken.diagnostics


def _files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "plan.json").write_text(json.dumps(PLAN), encoding="utf-8")
    (tmp_path / "input.json").write_text(json.dumps(INPUT), encoding="utf-8")
    (tmp_path / "handoff_tools.py").write_text(TOOLS_FILE, encoding="utf-8")


def test_cli_run_approve_checks_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, checks: list[int]
) -> None:
    _files(tmp_path, monkeypatch)
    args = ["run", "plan.json", "-i", "input.json", "--tools", "handoff_tools.py", "--json"]
    done = CliRunner().invoke(app, [*args, "--approve"], input="y\n")
    assert done.exit_code == 0, done.stderr
    assert json.loads(done.stdout.splitlines()[-1])["state"] == {"a": 6, "b": 12}
    assert len(checks) == 1


def test_cli_run_without_approve_checks_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, checks: list[int]
) -> None:
    _files(tmp_path, monkeypatch)
    args = ["run", "plan.json", "-i", "input.json", "--tools", "handoff_tools.py"]
    done = CliRunner().invoke(app, args)
    assert done.exit_code == 0, done.stderr
    assert len(checks) == 1


def test_cli_run_approve_after_an_edit_checks_each_plan_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, checks: list[int]
) -> None:
    _files(tmp_path, monkeypatch)
    edited = [{"_tool": "double", "n": 5, "_outputPath": "†state.c"}]
    editor = tmp_path / "edit.py"
    editor.write_text(
        f"import sys\nopen(sys.argv[1], 'w', encoding='utf-8').write({json.dumps(edited)!r})\n",
        encoding="utf-8",
    )
    monkeypatch.delenv("VISUAL", raising=False)
    monkeypatch.setenv("EDITOR", f"{shlex.quote(sys.executable)} {shlex.quote(str(editor))}")
    args = ["run", "plan.json", "-i", "input.json", "--tools", "handoff_tools.py", "--json"]
    done = CliRunner().invoke(app, [*args, "--approve"], input="e\ny\n")
    assert done.exit_code == 0, done.stderr
    assert json.loads(done.stdout.splitlines()[-1])["state"] == {"c": 10}
    assert len(checks) == 2  # the plan shown first, then the edit; the run checks neither


def test_cli_simulate_with_a_graph_checks_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, checks: list[int]
) -> None:
    _files(tmp_path, monkeypatch)
    args = ["simulate", "plan.json", "-i", "input.json", "--tools", "handoff_tools.py"]
    done = CliRunner().invoke(app, [*args, "--graph", "mermaid"])
    assert done.exit_code == 0, done.stderr
    assert done.stdout.startswith("flowchart")
    assert len(checks) == 1


# -- what a CheckResult vouches for ---------------------------------------------------


def _refused(checked: obelisk.CheckResult, tools: Any, *args: Any, **kwargs: Any) -> str:
    with pytest.raises(obelisk.UsageError) as raised:
        obelisk.run_sync(checked, tools, *args, **kwargs)
    message = str(raised.value)
    assert message.startswith(
        "this CheckResult was checked against other tools or documents than these: "
    )
    assert message.endswith("; pass the plan itself (it is checked then), or check it with these")
    return message


def test_the_same_tools_rebuilt_from_their_functions_are_the_same_tools() -> None:
    def triple(n: int) -> int:
        """Three times n."""
        return 3 * n

    plan = [{"_tool": "triple", "n": 2, "_outputPath": "†state.t"}]
    checked = obelisk.check(plan, [triple])  # a function: wrapped into a new Tool each time
    assert obelisk.run_sync(checked, [triple]).state == {"t": 6}


def test_a_check_result_of_other_tools_is_refused_naming_them() -> None:
    checked = obelisk.check(PLAN, [double], INPUT)

    @obelisk.tool(name="double")
    def other(n: str) -> str:
        """Twice n, as text."""
        return n * 2

    message = _refused(checked, [other], INPUT)
    assert "tool 'double' has other parameters and output schema" in message
    assert "tool 'double' is missing" in _refused(checked, [refund], INPUT)


def test_a_check_result_checked_without_tools_is_refused() -> None:
    message = _refused(obelisk.check(PLAN, None, INPUT), [double], INPUT)
    assert "it was checked without tools (obelisk.check(plan) with tools=None)" in message


def test_a_check_result_of_other_documents_is_refused_naming_them() -> None:
    checked = obelisk.check(PLAN, [double], INPUT, {"x": 1}, data={"data": {"k": 1}})
    message = _refused(checked, [double], {"n": 4}, {"x": 2})
    assert "the input is not the one it was checked against" in message
    assert "the state is not the one it was checked against" in message
    assert "the data is not the one it was checked against" in message
    without = _refused(obelisk.check(PLAN, [double]), [double], INPUT)
    assert "it was checked without an input, and one is given now" in without
    against = _refused(obelisk.check(PLAN, [double], INPUT), [double])
    assert "it was checked against an input, and none is given now" in against


def test_equal_documents_are_the_same_documents() -> None:
    checked = obelisk.check(PLAN, [double], dict(INPUT), state=None, data=None)
    result = obelisk.run_sync(checked, [double], {"n": 3}, {}, data={})
    assert result.state == {"a": 6, "b": 12}


def test_a_check_result_of_other_limits_is_refused_naming_them() -> None:
    checked = obelisk.check(PLAN, [double], INPUT, limits=obelisk.Limits(max_path_depth=8))
    message = _refused(checked, [double], INPUT)
    assert "it was checked with other limits (max_path_depth 8, given 64)" in message
    same = obelisk.run_sync(checked, [double], INPUT, limits=obelisk.Limits(max_path_depth=8))
    assert same.state == {"a": 6, "b": 12}


def test_a_check_result_of_another_mode_is_refused() -> None:
    checked = obelisk.check(PLAN, [double], INPUT, mode="lazy")
    message = _refused(checked, [double], INPUT)
    assert "it was checked for the lazy mode, and this is the eager mode" in message


def test_a_check_result_made_by_hand_is_refused() -> None:
    checked = obelisk.check(PLAN, [double], INPUT)
    bare = obelisk.CheckResult(checked.plan, checked.graph, checked.diagnostics)
    message = _refused(bare, [double], INPUT)
    assert "it does not say what it was checked against" in message


def test_a_check_result_with_errors_raises_the_plan_error_run_raises() -> None:
    bad = [{"_tool": "double", "n": "†state.nowhere", "_outputPath": "†state.a"}]
    with pytest.raises(obelisk.PlanError) as direct:
        obelisk.run_sync(bad, [double])
    with pytest.raises(obelisk.PlanError) as handed:
        obelisk.run_sync(obelisk.check(bad, [double]), [double])
    assert handed.value.diagnostics == direct.value.diagnostics
    assert str(handed.value) == str(direct.value)
    with pytest.raises(obelisk.PlanError) as simulated:
        obelisk.simulate(obelisk.check(bad, [double]), [double])
    assert simulated.value.diagnostics == direct.value.diagnostics


def test_simulate_refuses_a_check_result_of_other_documents() -> None:
    checked = obelisk.check(PLAN, [double], INPUT)
    with pytest.raises(obelisk.UsageError, match="the input is not the one it was checked"):
        obelisk.simulate(checked, [double], {"n": 9})


def test_the_basis_is_what_the_plan_was_checked_against() -> None:
    registry = obelisk.Registry([double])
    limits = obelisk.Limits(max_path_depth=9)
    checked = obelisk.check(PLAN, registry, INPUT, data={"data": {}}, limits=limits)
    basis = checked.basis
    assert basis is not None
    assert basis.registry is registry and basis.input is INPUT
    assert basis.state == {} and basis.data == {"data": {}}
    assert basis.limits == limits and basis.mode is None
    assert "basis" not in repr(checked)
