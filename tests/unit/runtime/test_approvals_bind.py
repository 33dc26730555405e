"""Approvals bind what they promise (docs/approvals.md): a paused result is used once,
an approval id holds for one run (and plan) only, a resume keeps the tools the run
paused with, a predicate sees validated arguments, the docs' predicate refuses path
traversal, and prompts escape bidirectional controls."""

from __future__ import annotations

import io
import re
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

import obelisk
from obelisk import ApprovalError, Decision
from obelisk.cli.approve import TerminalApprover, print_pending

ROOT = Path(__file__).resolve().parents[3]


def refund_tools(paid: list[tuple[str, int]]) -> list[obelisk.Tool]:
    @obelisk.tool
    def lookup(order: str) -> str:
        """The customer of an order."""
        return f"cust-{order}"

    @obelisk.tool(requires_approval=True)
    def refund(to: str, amount: int) -> str:
        """Pay money back (a person approves every one)."""
        paid.append((to, amount))
        return f"paid {amount} to {to}"

    return [lookup, refund]


REFUND: list[dict[str, Any]] = [
    {"_tool": "lookup", "order": "o-1", "_outputPath": "†state.customer"},
    {"_tool": "refund", "to": "†input.to", "amount": "†input.amount",
     "_outputPath": "†state.paid"},
]  # fmt: skip


def script(plan: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A model's answers: the plan, then the output."""
    return [{"calls": plan, "output": None}, {"calls": [], "output": "done"}]


# -- a decision is used once (issue 24, 5) -------------------------------------------------


def test_resuming_a_paused_result_twice_raises_and_runs_nothing() -> None:
    paid: list[tuple[str, int]] = []
    tools = refund_tools(paid)
    paused = obelisk.run_sync(REFUND, tools, input={"to": "ada", "amount": 30})
    (pending,) = paused.pending
    done = obelisk.resume_sync(paused, {pending.id: Decision.accept()})
    assert done.status == "completed" and paid == [("ada", 30)]
    for decisions in ({pending.id: Decision.accept()}, {}, {pending.id: True}):
        with pytest.raises(ApprovalError, match="resumed already") as refused:
            obelisk.resume_sync(paused, decisions)
        assert repr(paused.run_id) in str(refused.value) and paused.run_id
        assert paid == [("ada", 30)]  # one pause, one refund


def test_the_result_a_resume_returns_is_the_one_to_resume() -> None:
    paid: list[tuple[str, int]] = []
    paused = obelisk.run_sync(REFUND, refund_tools(paid), input={"to": "ada", "amount": 30})
    again = obelisk.resume_sync(paused, {})  # no decision: still waiting
    assert again.status == "awaiting_approval" and paid == []
    with pytest.raises(ApprovalError, match="resumed already"):
        obelisk.resume_sync(paused, {paused.pending[0].id: Decision.accept()})
    done = obelisk.resume_sync(again, {again.pending[0].id: Decision.accept()})
    assert done.status == "completed" and paid == [("ada", 30)]


def test_a_refused_decision_does_not_use_the_result_up() -> None:
    paid: list[tuple[str, int]] = []
    paused = obelisk.run_sync(REFUND, refund_tools(paid), input={"to": "ada", "amount": 30})
    with pytest.raises(ApprovalError, match="is unknown"):
        obelisk.resume_sync(paused, {"1-nope": Decision.accept()})
    done = obelisk.resume_sync(paused, {paused.pending[0].id: Decision.accept()})
    assert done.status == "completed" and paid == [("ada", 30)]


def test_true_and_false_are_decisions_for_resume_and_loop_resume() -> None:
    paid: list[tuple[str, int]] = []
    tools = refund_tools(paid)
    paused = obelisk.run_sync(REFUND, tools, input={"to": "ada", "amount": 30})
    assert obelisk.resume_sync(paused, {paused.pending[0].id: True}).status == "completed"
    paused = obelisk.run_sync(REFUND, tools, input={"to": "bob", "amount": 5})
    refused = obelisk.resume_sync(paused, {paused.pending[0].id: False})
    assert refused.calls[1].error is not None
    assert refused.calls[1].error["type"] == "ApprovalRejected"
    assert paid == [("ada", 30)]
    plan = [{**REFUND[1], "to": "cy", "amount": 7}]
    for decision, expected in ((True, [("cy", 7)]), (False, [])):
        paid.clear()
        loop = obelisk.Loop(obelisk.ScriptedModel(script(plan)), tools)
        waiting = loop.run_sync()
        loop.resume_sync(waiting, {waiting.pending[0].id: decision})
        assert paid == expected


def test_loop_resume_twice_raises_an_approval_error_naming_the_run() -> None:
    paid: list[tuple[str, int]] = []
    plan = [{**REFUND[1], "to": "ada", "amount": 30}]
    loop = obelisk.Loop(obelisk.ScriptedModel(script(plan)), refund_tools(paid))
    paused = loop.run_sync()
    (pending,) = paused.pending
    loop.resume_sync(paused, {pending.id: Decision.accept()})
    with pytest.raises(ApprovalError, match=r"run '[0-9a-f]{16}\.t1' was resumed already"):
        loop.resume_sync(paused, {pending.id: Decision.accept()})
    assert paid == [("ada", 30)]


def test_an_unknown_id_says_it_is_unknown_and_not_that_the_arguments_changed() -> None:
    paused = obelisk.run_sync(REFUND, refund_tools([]), input={"to": "ada", "amount": 30})
    (pending,) = paused.pending
    forged = f"1-{'0' * 32}"  # the same call's index, and the id's shape
    with pytest.raises(ApprovalError) as refused:
        obelisk.resume_sync(paused, {forged: Decision.accept()})
    message = str(refused.value)
    assert message == (
        f"approval {forged!r} is unknown: no call of run {paused.run_id!r} awaits it "
        f"(pending: {pending.id})"
    )
    assert "arguments" not in message


# -- approval ids are bound to their run and plan (issue 25, 7) --------------------------


def test_run_1s_approval_is_refused_in_run_2_of_an_identical_plan() -> None:
    paid: list[tuple[str, int]] = []
    tools = refund_tools(paid)
    first = obelisk.run_sync(REFUND, tools, input={"to": "mallory", "amount": 9999})
    second = obelisk.run_sync(REFUND, tools, input={"to": "mallory", "amount": 9999})
    (one,), (two,) = first.pending, second.pending
    assert one.hash == two.hash and one.id != two.id
    with pytest.raises(ApprovalError, match="is unknown"):
        obelisk.resume_sync(second, {one.id: Decision.accept()})
    assert paid == []


def test_an_id_carries_128_bits() -> None:
    paused = obelisk.run_sync(REFUND, refund_tools([]), input={"to": "ada", "amount": 1})
    assert re.fullmatch(r"1-[0-9a-f]{32}", paused.pending[0].id)


def test_durable_ids_are_bound_to_the_plan_even_under_one_run_id(tmp_path: Path) -> None:
    tools = refund_tools([])
    call = {**REFUND[1], "to": "ada", "amount": 1}
    one = obelisk.run_sync([call], tools, journal=tmp_path / "a.db", run_id="r1")
    two = obelisk.run_sync(
        [{**call, "_outputPath": "†state.other"}], tools, journal=tmp_path / "b.db", run_id="r1"
    )
    assert one.pending[0].hash == two.pending[0].hash
    assert one.pending[0].id != two.pending[0].id
    with pytest.raises(ApprovalError, match="is unknown"):
        obelisk.resume_sync("r1", {one.pending[0].id: True}, journal=tmp_path / "b.db",
                            tools=tools)  # fmt: skip


def test_a_journal_keeps_the_ids_it_gave_so_old_journals_still_resume(tmp_path: Path) -> None:
    paid: list[tuple[str, int]] = []
    tools = refund_tools(paid)
    path = tmp_path / "runs.db"
    paused = obelisk.run_sync(REFUND, tools, input={"to": "ada", "amount": 3}, journal=path,
                              run_id="old")  # fmt: skip
    (pending,) = paused.pending
    legacy = f"{pending.call}-{pending.hash[:12]}"  # as journals wrote ids before
    with sqlite3.connect(path) as db:
        db.execute("UPDATE approvals SET id = ? WHERE id = ?", (legacy, pending.id))
    db.close()
    with obelisk.Journal(path) as book:
        assert [p.id for _, p in book.pending()] == [legacy]
    again = obelisk.resume_sync("old", {}, journal=path, tools=tools)
    assert [p.id for p in again.pending] == [legacy] and paid == []
    done = obelisk.resume_sync("old", {legacy: Decision.accept()}, journal=path, tools=tools)
    assert done.status == "completed" and paid == [("ada", 3)]


# -- a resume keeps the tools the run paused with (issue 25, 7) ---------------------------


def test_resume_with_a_tool_that_no_longer_asks_is_refused() -> None:
    paid: list[tuple[str, int]] = []
    tools = refund_tools(paid)
    paused = obelisk.run_sync(REFUND, tools, input={"to": "ada", "amount": 30})

    @obelisk.tool  # the same tool, without requires_approval
    def refund(to: str, amount: int) -> str:
        """Pay money back."""
        paid.append((to, amount))
        return "paid"

    with pytest.raises(obelisk.RunMismatch, match="'refund' changed its options") as refused:
        obelisk.resume_sync(paused, {}, tools=[tools[0], refund])
    assert refused.value.changes == (
        "tool 'refund' changed its options",
        "tool 'refund' runs another function",
    )
    assert paid == []
    done = obelisk.resume_sync(paused, {paused.pending[0].id: Decision.accept()})
    assert done.status == "completed" and paid == [("ada", 30)]  # still resumable


def test_resume_with_a_swapped_function_is_refused() -> None:
    paid: list[tuple[str, int]] = []
    tools = refund_tools(paid)
    paused = obelisk.run_sync(REFUND, tools, input={"to": "ada", "amount": 30})
    stolen: list[Any] = []

    @obelisk.tool(requires_approval=True)
    def refund(to: str, amount: int) -> str:
        """Pay money back (a person approves every one)."""
        stolen.append((to, amount))
        return f"paid {amount} to {to}"

    assert refund.parameters == tools[1].parameters  # only the function differs
    with pytest.raises(obelisk.RunMismatch, match="'refund' runs another function"):
        accept = {paused.pending[0].id: Decision.accept()}
        obelisk.resume_sync(paused, accept, tools=[tools[0], refund])
    assert stolen == [] and paid == []


def test_resume_with_the_same_functions_declared_again_is_fine() -> None:
    paid: list[tuple[str, int]] = []
    tools = refund_tools(paid)
    paused = obelisk.run_sync(REFUND, tools, input={"to": "ada", "amount": 30})
    again = [obelisk.tool(t.function, requires_approval=t.requires_approval) for t in tools]
    done = obelisk.resume_sync(paused, {paused.pending[0].id: Decision.accept()}, tools=again)
    assert done.status == "completed" and paid == [("ada", 30)]


def test_loop_resume_with_a_swapped_function_is_refused() -> None:
    paid: list[tuple[str, int]] = []
    tools = refund_tools(paid)
    plan = [{**REFUND[1], "to": "ada", "amount": 30}]
    loop = obelisk.Loop(obelisk.ScriptedModel(script(plan)), tools)
    paused = loop.run_sync()

    @obelisk.tool(requires_approval=True)
    def refund(to: str, amount: int) -> str:
        """Pay money back (a person approves every one)."""
        return "stolen"

    with pytest.raises(obelisk.RunMismatch, match="runs another function"):
        accept = {paused.pending[0].id: Decision.accept()}
        loop.resume_sync(paused, accept, tools=[tools[0], refund])
    loop.resume_sync(paused, {paused.pending[0].id: Decision.accept()})
    assert paid == [("ada", 30)]


# -- predicates see validated arguments (issue 25, 7) -------------------------------------


def test_a_predicate_sees_the_validated_arguments() -> None:
    seen: list[dict[str, Any]] = []
    deleted: list[Any] = []

    def recursive(arguments: dict[str, Any]) -> bool:
        seen.append(dict(arguments))
        return arguments["recursive"] is True

    @obelisk.tool(requires_approval=recursive)
    def delete(path: str, recursive: bool = False) -> str:
        """Delete a path."""
        deleted.append(recursive)
        return path

    plan = [{"_tool": "delete", "path": "/srv", "recursive": "†input.flag"}]
    result = obelisk.run_sync(plan, [delete], input={"flag": "true"})
    assert seen == [{"path": "/srv", "recursive": True}]
    assert result.status == "awaiting_approval" and deleted == []
    assert result.pending[0].arguments == {"path": "/srv", "recursive": "true"}  # as resolved
    done = obelisk.resume_sync(result, {result.pending[0].id: True})
    assert done.status == "completed" and deleted == [True]


def test_arguments_that_do_not_validate_fail_without_asking() -> None:
    @obelisk.tool(requires_approval=lambda arguments: True)
    def delete(path: str, recursive: bool = False) -> str:
        """Delete a path."""
        raise AssertionError("never runs")

    plan = [{"_tool": "delete", "path": "/srv", "recursive": "†input.flag"}]
    result = obelisk.run_sync(plan, [delete], input={"flag": "maybe"})
    assert result.status == "failed" and result.pending == ()
    assert result.calls[0].error is not None
    assert result.calls[0].error["type"] == "ArgumentValidationError"


# -- the docs' predicate refuses traversal (issue 25, 7) ----------------------------------


def docs_namespace() -> dict[str, Any]:
    """The first python block of docs/approvals.md, run: its tools."""
    page = (ROOT / "docs" / "approvals.md").read_text(encoding="utf-8")
    first = re.search(r"^```python\n(.*?)^```", page, re.S | re.M)
    assert first is not None
    namespace: dict[str, Any] = {}
    exec(compile(first.group(1), "approvals.md", "exec"), namespace)
    return namespace


@pytest.mark.parametrize(
    "path",
    ["/tmp/../etc/shadow", "/tmp/./../etc/shadow", "/tmp/a/../../etc/passwd", "/tmp/..",
     "//tmp/../etc/shadow", "/tmp", "tmp/a.txt", "../tmp/a.txt", "/tmpfoo/a"],
)  # fmt: skip
def test_the_docs_predicate_sends_traversal_to_a_person(path: str) -> None:
    namespace = docs_namespace()
    plan = [{"_tool": "edit_file", "path": path, "text": "x"}]
    result = obelisk.run_sync(plan, namespace["tools"])
    assert result.status == "awaiting_approval", path


@pytest.mark.parametrize("path", ["/tmp/a.txt", "/tmp/x/../a.txt", "/tmp/./a"])
def test_the_docs_predicate_lets_paths_inside_tmp_through(path: str) -> None:
    namespace = docs_namespace()
    result = obelisk.run_sync([{"_tool": "edit_file", "path": path, "text": "x"}],
                              namespace["tools"])  # fmt: skip
    assert result.status == "completed", path


# -- prompts escape bidirectional controls (issue 25, 7) ----------------------------------


def test_the_cli_prompt_escapes_bidi_controls(monkeypatch: pytest.MonkeyPatch) -> None:
    paused = obelisk.run_sync(
        REFUND, refund_tools([]), input={"to": "acct-\u202e1000\u202c", "amount": 5}
    )
    (pending,) = paused.pending
    out = io.StringIO()
    console = Console(file=out, width=200, force_terminal=False)
    monkeypatch.setattr("sys.stdin", io.StringIO("y\n"))
    assert TerminalApprover(console).decide(pending) == Decision.accept()
    print_pending(console, paused.pending)
    shown = out.getvalue()
    assert "\u202e" not in shown and "\u202c" not in shown
    assert shown.count("acct-\\u202e1000\\u202c") == 2


def test_printable_escapes_every_bidi_control() -> None:
    controls = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
    text = obelisk.diagnostics.printable(f"a{controls}b")
    assert text == "a" + "".join(f"\\u{ord(c):04x}" for c in controls) + "b"


def test_the_dry_run_asks_the_predicate_with_validated_arguments_too() -> None:
    @obelisk.tool(requires_approval=lambda arguments: arguments["recursive"] is True)
    def delete(path: str, recursive: bool = False) -> str:
        """Delete a path."""
        return path

    plan = [{"_tool": "delete", "path": "/srv", "recursive": "†input.flag"}]
    report = obelisk.simulate(plan, [delete], input={"flag": "true"})
    assert report.scenarios[0].approvals == ["#0 delete"]


def test_a_durable_loop_and_a_journal_take_true_and_false_too(tmp_path: Path) -> None:
    paid: list[tuple[str, int]] = []
    tools = refund_tools(paid)
    plan = [{**REFUND[1], "to": "ada", "amount": 30}]
    loop = obelisk.Loop(obelisk.ScriptedModel(script(plan)), tools, journal=tmp_path / "l.db")
    paused = loop.run_sync()
    done = loop.resume_sync(paused, {paused.pending[0].id: True})
    assert done.status == "completed" and paid == [("ada", 30)]
    waiting = obelisk.run_sync([plan[0]], tools, journal=tmp_path / "r.db", run_id="r")
    with obelisk.Journal(tmp_path / "r.db") as book:
        assert book.decide(waiting.pending[0].id, False) == "r"
    refused = obelisk.resume_sync("r", journal=tmp_path / "r.db", tools=tools)
    assert refused.calls[0].error is not None and paid == [("ada", 30)]
    assert refused.calls[0].error["type"] == "ApprovalRejected"


def test_resume_with_a_predicate_that_no_longer_asks_is_refused() -> None:
    edited: list[str] = []

    def edit(path: str) -> str:
        """Edit a file."""
        edited.append(path)
        return path

    asking = obelisk.tool(edit, requires_approval=lambda arguments: True)
    paused = obelisk.run_sync([{"_tool": "edit", "path": "/etc/shadow"}], [asking])
    assert paused.status == "awaiting_approval"
    waving = obelisk.tool(edit, requires_approval=lambda arguments: False)
    with pytest.raises(obelisk.RunMismatch, match="asks for approval with another predicate"):
        obelisk.resume_sync(paused, {}, tools=[waving])
    assert edited == []
