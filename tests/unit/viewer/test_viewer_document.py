"""The run viewer's data model (obelisk.viewer, docs/viewer.md): each input kind (a
trace, a journaled run, a dry run's report, a loop transcript) read into the one
document the page is drawn from, and ``obelisk view`` on each."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import obelisk
from obelisk.cli.app import app
from obelisk.viewer.document import critical_path
from obelisk.viewer.load import read_document
from obelisk.viewer.page import render_page

runner = CliRunner()


@obelisk.tool(pure=True)  # a dry run calls it
def get_customer(customer_id: str) -> dict[str, str]:
    """Look a customer up."""
    return {"id": customer_id, "email": f"{customer_id}@example.com"}


@obelisk.tool
def charge(customer: str, amount: float) -> str:
    """Charge a customer; returns the receipt's id, fails for a negative amount."""
    if amount < 0:
        raise ValueError("declined")
    return f"r-{customer}"


@obelisk.tool
def notify(text: str) -> str:
    """Send a text."""
    return f"sent {text}"


TOOLS = [get_customer, charge, notify]
PLAN = [
    {"_tool": "get_customer", "customer_id": "†input.id", "_outputPath": "†state.customer"},
    {
        "_tool": "charge",
        "customer": "†state.customer.id",
        "amount": "†input.amount",
        "_outputPath": "†state.receipt || †state.error",
    },
    {"_tool": "notify", "text": "†state.receipt", "_outputPath": "†state.sent"},
    {"_tool": "notify", "text": "†state.error.error.message", "_outputPath": "†state.sorry"},
]
ORDER = {"id": "c-7", "amount": 3.5}


def _trace(**run: Any) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = []
    obelisk.run_sync(PLAN, TOOLS, input=ORDER, on_event=lambda e: events.append(e.to_dict()), **run)
    return json.loads(json.dumps(events, default=str))  # as a --trace file holds them


def _by_index(document: dict[str, Any]) -> dict[int, dict[str, Any]]:
    return {call["index"]: call for call in document["calls"]}


def test_a_trace_gives_each_calls_status_arguments_output_and_skip_reason(tmp_path: Path) -> None:
    from obelisk.viewer.runs import trace_document

    document = trace_document(_trace(), "t", plan=PLAN)
    calls = _by_index(document)
    assert document["kind"] == "trace" and document["status"] == "completed"
    statuses = [calls[i]["status"] for i in range(4)]
    assert statuses == ["succeeded", "succeeded", "succeeded", "skipped"]
    assert calls[1]["arguments"] == {"customer": "c-7", "amount": 3.5}
    assert calls[1]["output"] == "r-c-7"
    assert "was not written: #1 charge wrote †state.receipt" in calls[3]["reason"]
    assert calls[0]["label"] == "#0 get_customer"
    assert all(calls[i]["started"] <= calls[i]["finished"] for i in range(3))
    assert document["state"]["sent"] == "sent r-c-7"
    assert [entry["path"] for entry in document["log"]] == [
        "†state.customer",
        "†state.receipt",
        "†state.sent",
    ]


def test_a_trace_with_its_plan_has_data_and_alternative_edges_and_a_critical_path() -> None:
    from obelisk.viewer.runs import trace_document

    document = trace_document(_trace(), "t", plan=PLAN)
    kinds = {(e["source"], e["target"]): e["kind"] for e in document["edges"]}
    assert kinds[("input", "0")] == "data"
    assert kinds[("0", "1")] == "data"
    assert kinds[("1", "2")] == "alternative" and kinds[("1", "3")] == "alternative"
    assert document["critical"] == ["0", "1", "2"]
    assert document["critical_basis"] == "plan"


def test_a_trace_without_its_plan_says_so_and_estimates_the_critical_path() -> None:
    from obelisk.viewer.runs import trace_document

    document = trace_document(_trace(), "t")
    assert document["edges"] == []
    assert any("--plan" in note for note in document["notes"])
    assert document["critical_basis"] == "estimate"
    assert document["critical"][-1] == "2"


def test_the_critical_path_follows_the_latest_predecessor() -> None:
    def call(key: str, start: float, end: float) -> dict[str, Any]:
        return {"key": key, "index": int(key), "started": start, "finished": end}

    calls = [call("0", 0, 1), call("1", 0, 3), call("2", 3, 4), call("3", 1, 2)]
    edges = [
        {"source": "0", "target": "2"},
        {"source": "1", "target": "2"},
        {"source": "0", "target": "3"},
    ]
    assert critical_path(calls, edges) == (["1", "2"], "plan")
    assert critical_path([], edges) == ([], None)


def test_a_journaled_run_reads_back_calls_arguments_log_and_state(tmp_path: Path) -> None:
    journal = tmp_path / "runs.db"
    result = obelisk.run_sync(PLAN, TOOLS, input=ORDER, journal=str(journal), run_id="r-1")
    document = read_document("r-1", journal=str(journal))
    calls = _by_index(document)
    assert document["kind"] == "journal" and document["status"] == "completed"
    assert calls[1]["arguments"] == {"customer": "c-7", "amount": 3.5}
    assert calls[1]["output"] == "r-c-7"
    assert calls[3]["status"] == "skipped" and "†state.error" in calls[3]["reason"]
    assert document["state"] == result.state
    assert [e["path"] for e in document["log"]] == [e.path for e in result.log]
    assert ("1", "2") in {(e["source"], e["target"]) for e in document["edges"]}
    assert read_document(str(journal))["title"] == "run r-1"  # the journal file: newest run


def test_a_failed_call_in_a_journal_has_its_error_and_the_error_arm(tmp_path: Path) -> None:
    journal = tmp_path / "runs.db"
    obelisk.run_sync(PLAN, TOOLS, input={**ORDER, "amount": -1}, journal=str(journal))
    calls = _by_index(read_document(None, journal=str(journal)))
    assert calls[1]["error"]["message"] == "declined"
    assert calls[2]["status"] == "skipped" and calls[3]["status"] == "succeeded"


def test_a_dry_run_report_gives_scenarios_side_by_side() -> None:
    from obelisk.viewer.plays import simulation_document

    report = obelisk.simulate(PLAN, TOOLS, input=ORDER).to_dict()
    document = simulation_document(report, "dry", plan=PLAN)
    assert document["kind"] == "simulation"
    assert len(document["scenarios"]) == 2
    first, second = document["scenarios"]
    assert first["statuses"]["#2 notify"] != second["statuses"]["#2 notify"]
    calls = _by_index(document)
    assert calls[0]["status"] == "succeeded"
    assert calls[2]["status"] == "varies" and "scenario" in calls[2]["reason"]
    assert document["critical"] == [str(_index(label)) for label in first["critical_path"]]


def _index(label: str) -> int:
    found = re.match(r"#(\d+)", label)
    assert found is not None
    return int(found.group(1))


def _loop_lines() -> list[dict[str, Any]]:
    answers = [
        {"calls": [PLAN[0], {**PLAN[1], "amount": -1}], "output": None},
        {"calls": [PLAN[3]], "output": "†state.sorry"},
    ]
    model = obelisk.ScriptedModel(answers)
    result = obelisk.Loop(model, TOOLS, mode="eager").run_sync(ORDER)
    return [json.loads(line) for line in result.to_jsonl().splitlines()]


def test_a_loop_transcript_gives_turns_requests_answers_and_revision_diffs() -> None:
    from obelisk.viewer.plays import loop_document

    document = loop_document(_loop_lines(), "loop")
    assert document["kind"] == "loop" and document["status"] == "completed"
    assert [turn["turn"] for turn in document["turns"]] == [1, 2]
    first = document["turns"][0]
    assert "schema" not in first["request"] and "context" in first["request"]
    assert first["answer"]["calls"][0]["_tool"] == "get_customer"
    assert first["revision"]["diff"]["added"][0]["label"] == "#0 get_customer"
    keys = {call["key"]: call for call in document["calls"]}
    assert keys["1.0"]["status"] == "succeeded" and keys["1.0"]["revision"] == 1
    assert keys["1.1"]["status"] == "failed" and keys["1.1"]["error"]["message"] == "declined"
    assert keys["2.0"]["turn"] == 2 and keys["2.0"]["revision"] == 2
    assert ("1.0", "1.1") in {(e["source"], e["target"]) for e in document["edges"]}
    assert document["state"]["sorry"] == "sent declined"


def _embedded(page: str) -> dict[str, Any]:
    data_element = r'<script type="application/json" id="obelisk-data">(.*?)</script>'
    found = re.search(data_element, page, re.S)
    assert found is not None
    data: dict[str, Any] = json.loads(found.group(1))
    return data


PAYLOAD = '</script><img src=x onerror="window.pwned=1"><script>window.pwned=2</script>\u2028&'


def test_tool_output_cannot_break_out_of_the_embedded_json() -> None:
    @obelisk.tool
    def hostile(text: str) -> str:
        """Echo a text an attacker wrote."""
        return PAYLOAD + text

    events: list[dict[str, Any]] = []
    plan = [{"_tool": "hostile", "text": "<!--", "_outputPath": "†state.x"}]
    obelisk.run_sync(plan, [hostile], on_event=lambda e: events.append(e.to_dict()))
    from obelisk.viewer.runs import trace_document

    page = render_page(trace_document(json.loads(json.dumps(events)), PAYLOAD, plan=plan))
    body = page.split('id="obelisk-data">', 1)[1].split("</script>", 1)[0]
    assert "<" not in body and ">" not in body and "&" not in body and "\u2028" not in body
    assert page.count("</script>") == 2  # the data's and the viewer's own
    assert "<img" not in page
    assert _embedded(page)["document"]["calls"][0]["output"] == PAYLOAD + "<!--"
    assert "<title>&lt;/script&gt;&lt;img" in page


def test_the_page_needs_no_network_and_runs_only_its_own_script() -> None:
    page = render_page(read_document(str(_write_trace_file())))
    policy = re.search(r'Content-Security-Policy" content="([^"]*)"', page)
    assert policy is not None
    assert "default-src 'none'" in policy.group(1) and "script-src 'sha256-" in policy.group(1)
    assert not re.search(r"(src|href)=\"(https?:)?//", page)
    assert "innerHTML" not in page and "eval(" not in page


def _write_trace_file(path: Path | None = None) -> Path:
    import tempfile

    target = path or Path(tempfile.mkdtemp()) / "trace.jsonl"
    target.write_text("".join(json.dumps(e) + "\n" for e in _trace()), encoding="utf-8")
    return target


def test_obelisk_view_writes_a_page_for_each_input_kind(tmp_path: Path) -> None:
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps(PLAN), encoding="utf-8")
    trace = _write_trace_file(tmp_path / "trace.jsonl")
    report = tmp_path / "report.json"
    report.write_text(json.dumps(obelisk.simulate(PLAN, TOOLS, input=ORDER).to_dict()))
    transcript = tmp_path / "loop.jsonl"
    transcript.write_text("".join(json.dumps(line) + "\n" for line in _loop_lines()))
    journal = tmp_path / "runs.db"
    obelisk.run_sync(PLAN, TOOLS, input=ORDER, journal=str(journal), run_id="r-9")
    cases = [
        ([str(trace), "--plan", str(plan)], "trace"),
        ([str(report), "--plan", str(plan)], "simulation"),
        ([str(transcript)], "loop"),
        ([str(journal)], "journal"),
        (["r-9", "--journal", str(journal)], "journal"),
    ]
    for arguments, kind in cases:
        out = tmp_path / f"{kind}.html"
        result = runner.invoke(app, ["view", *arguments, "-o", str(out)])
        assert result.exit_code == 0, result.output
        document = _embedded(out.read_text(encoding="utf-8"))["document"]
        assert document["kind"] == kind and len(document["calls"]) >= 2


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["nowhere.jsonl"], "cannot read 'nowhere.jsonl'"),
        ([], "give a trace"),
        (["NOTES"], "is not a trace, a journal"),
        (["r-0", "--journal", "missing.db"], "missing.db"),
    ],
)
def test_obelisk_view_refuses_what_it_cannot_read_with_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, arguments: list[str], message: str
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "NOTES").write_text('{"hello": 1}\n', encoding="utf-8")
    result = runner.invoke(app, ["view", *arguments])
    assert result.exit_code == 2
    assert "obelisk: error:" in result.output and message in result.output
    assert "Traceback" not in result.output


@obelisk.tool(requires_approval=True)
def refund(customer: str) -> str:
    """Refund a customer (a person approves each call)."""
    return f"refunded {customer}"


APPROVAL_PLAN = [
    PLAN[0],
    {"_tool": "refund", "customer": "†state.customer.id", "_outputPath": "†state.refund"},
]


def test_a_call_awaiting_approval_shows_its_approval_in_a_trace_and_a_journal(
    tmp_path: Path,
) -> None:
    from obelisk.viewer.runs import trace_document

    events: list[dict[str, Any]] = []
    journal = str(tmp_path / "runs.db")
    paused = obelisk.run_sync(
        APPROVAL_PLAN,
        [get_customer, refund],
        input=ORDER,
        journal=journal,
        run_id="ask-1",
        on_event=lambda e: events.append(e.to_dict()),
    )
    wanted = paused.pending[0].id
    traced = _by_index(trace_document(json.loads(json.dumps(events)), "t"))[1]
    assert traced["status"] == "awaiting_approval"
    assert traced["approval"] == {"id": wanted, "decision": None, "reason": None}
    journaled = _by_index(read_document("ask-1", journal=journal))[1]
    assert journaled["status"] == "awaiting_approval"
    assert journaled["approval"] == {"id": wanted, "decision": None, "reason": None}
    obelisk.resume_sync(
        "ask-1",
        tools=[get_customer, refund],
        journal=journal,
        decisions={wanted: obelisk.Decision.reject("not today")},
    )
    decided = _by_index(read_document("ask-1", journal=journal))[1]
    assert decided["approval"] == {"id": wanted, "decision": "reject", "reason": "not today"}


def test_a_durable_loop_gives_its_turns_with_each_turns_calls_and_revision(
    tmp_path: Path,
) -> None:
    journal = str(tmp_path / "loops.db")
    answers = [
        {"calls": [PLAN[0], {**PLAN[1], "amount": -1}], "output": None},
        {"calls": [PLAN[3]], "output": "†state.sorry"},
    ]
    result = obelisk.Loop(obelisk.ScriptedModel(answers), TOOLS, journal=journal).run_sync(ORDER)
    document = read_document(None, journal=journal)  # the newest run of its own: the loop
    assert document["kind"] == "loop" and document["title"] == f"loop run {result.run_id}"
    assert [turn["turn"] for turn in document["turns"]] == [1, 2]
    assert document["turns"][0]["answer"]["calls"] == answers[0]["calls"]
    assert "schema" not in document["turns"][0]["request"]
    assert document["turns"][1]["revision"]["diff"]["added"][0]["label"] == "#0 notify"
    keys = {call["key"]: call for call in document["calls"]}
    assert sorted(keys) == ["1.0", "1.1", "2.0"]
    assert keys["1.1"]["revision"] == 1 and keys["2.0"]["revision"] == 2
    assert keys["1.1"]["arguments"] == {"customer": "c-7", "amount": -1}
    assert keys["2.0"]["label"] == "turn 2: #0 notify" and keys["2.0"]["started"] is not None
    assert document["state"] == result.state


@obelisk.tool(effects={"billing": "write"})
def bill(amount: float) -> str:
    """Write to the billing system."""
    return f"billed {amount}"


def test_order_edges_are_kinds_of_their_own_after_and_effect() -> None:
    from obelisk.viewer.document import plan_edges

    plan = [
        {"_tool": "bill", "amount": 1, "_outputPath": "†state.a"},
        {"_tool": "bill", "amount": 2, "_outputPath": "†state.b"},
        {"_tool": "notify", "text": "x", "_after": [0], "_outputPath": "†state.c"},
    ]
    edges = {(e["source"], e["target"]): e for e in plan_edges(plan, [bill, notify])}
    assert edges[("0", "1")]["kind"] == "effect" and edges[("0", "1")]["label"] == "effect: billing"
    assert edges[("0", "2")]["kind"] == "after" and edges[("0", "2")]["label"] == "_after"
    assert ("0", "1") not in {(e["source"], e["target"]) for e in plan_edges(plan)}  # no tools


def test_a_trace_still_being_written_is_read_up_to_its_last_whole_line(tmp_path: Path) -> None:
    whole = "".join(json.dumps(event) + "\n" for event in _trace())
    cut = tmp_path / "growing.jsonl"
    cut.write_text(whole + '{"event": "call_sta', encoding="utf-8")
    assert len(read_document(str(cut))["calls"]) == 4
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"event": "x"}\n{oops\n{"event": "y"}\n', encoding="utf-8")
    with pytest.raises(obelisk.UsageError, match="line 2 is not JSON"):
        read_document(str(broken))
