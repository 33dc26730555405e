"""Quarantine (docs/loop.md, "Quarantine"; issue 28 point 5): with
``Loop(quarantine=True)`` no planning request holds an untrusted value.

The canary test plants a unique canary in every untrusted source (an untrusted
tool's output, an untrusted input, a data document, a ``Labeled`` field, the
error of a tool fed untrusted data, a delegate's output, a dictionary key that a
"did you mean" would quote, an output that does not fit its schema) and searches
every planning request, in eager and in lazy mode: none appears, while the
sub-requests of latent calls and the delegate's child loop do see the values.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

import obelisk

TOOL = "CANARY-TOOL-91c2"
INPUT = "CANARY-INPUT-4be0"
DATA = "CANARY-DATA-77aa"
FIELD = "CANARY-FIELD-0d1f"
ERROR = "CANARY-ERROR-5e6b"
PAGE = "CANARY-PAGE-a3c9"
KEY = "CANARYKEY-c4d2"
CANARIES = (TOOL, INPUT, DATA, FIELD, ERROR, PAGE, KEY)

stored: list[str] = []


@obelisk.tool(output_trust="untrusted")
def read_mail() -> dict[str, Any]:
    """E-mail content."""
    return {"subject": "hello", "body": f"Dear user, {TOOL}", KEY: 1}


@obelisk.tool
def read_message() -> obelisk.Labeled:
    """A message whose body is untrusted."""
    return obelisk.Labeled(
        {"sender": "bob@example.com", "body": FIELD}, fields={"body": "untrusted"}
    )


@obelisk.tool
def check_text(text: str) -> str:
    """Raise about a text (a message derived from it, never equal to it)."""
    raise ValueError(f"refused: {text.replace('TOOL', 'ERROR')}")


@obelisk.tool
def store(text: str) -> str:
    """Store a text."""
    stored.append(text)
    return "stored"


@obelisk.tool(output_trust="untrusted")
def fetch_page(city: str) -> str:
    """Web page."""
    return f"{city}: {PAGE}"


summarize = obelisk.Tool.from_schema(
    {
        "name": "summarize",
        "description": "Summarize a text.",
        "parameters": {
            "type": "object",
            "properties": {"text": {"type": "string"}},
            "required": ["text"],
        },
        "output": {"type": "string"},
    }
)
research = obelisk.Tool.from_schema(
    {
        "name": "research",
        "description": "Research a city.",
        "_delegate": True,
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
        },
        "output": {"type": "string"},
    }
)
TOOLS = [read_mail, read_message, check_text, store, fetch_page, summarize, research]

FIRST = [
    {"_tool": "read_mail", "_outputPath": "†state.mail"},
    {"_tool": "read_message", "_outputPath": "†state.msg"},
    {"_tool": "check_text", "text": "†state.mail.body", "_outputPath": "†state.checked"},
    {"_tool": "research", "city": "Paris", "_outputPath": "†state.paris"},
    {"_tool": "summarize", "text": "†input.note", "_outputPath": "†state.summary"},
    {"_tool": "summarize", "text": "†files.readme", "_outputPath": "†state.readme"},
    {"_tool": "store", "text": "†state.msg.body", "_outputPath": "†state.stored"},
]
OUTPUT = {"sender": "†state.msg.sender", "stored": "†state.stored"}


def _planner(request: obelisk.Request, mode: str) -> dict[str, Any]:
    turn = request.config["turn"]
    if turn == 1:  # an output that does not fit: its error would quote the body
        return {"calls": FIRST, "output": "†state.mail.body" if mode == "lazy" else None}
    if turn == 2:  # a typo whose "did you mean" would quote the key
        typo = {"_tool": "store", "text": f"†state.mail.{KEY[:-1]}X", "_outputPath": "†state.k"}
        return {"calls": [typo], "output": "†state.mail.body" if mode == "eager" else None}
    return {"calls": [], "output": OUTPUT}


def respond(request: obelisk.Request, mode: str) -> dict[str, Any]:
    if request.config["mode"] == "latent":
        text = request.to_data()["context"][2]["input"]["text"]
        return {"calls": [], "output": f"summary of {text}"}
    if request.config.get("depth"):  # the delegate's child loop reads the page
        if request.config["turn"] == 1:
            call = {"_tool": "fetch_page", "city": "†input.city", "_outputPath": "†state.page"}
            return {"calls": [call], "output": None}
        return {"calls": [], "output": "†state.page"}
    return _planner(request, mode)


def _run(mode: str) -> tuple[obelisk.LoopResult, obelisk.ScriptedModel]:
    stored.clear()
    model = obelisk.ScriptedModel(respond=lambda request: respond(request, mode))
    loop = obelisk.Loop(
        model,
        TOOLS,
        mode=mode,  # type: ignore[arg-type]
        quarantine=True,
        output_schema={"type": "object"},
        input_labels={"†input.note": "untrusted", "†files.readme": "untrusted"},
        max_turns=4,
    )
    result = loop.run_sync({"note": INPUT}, data={"files": {"readme": DATA}})
    return result, model


def size(value: Any) -> int:
    """The size of ``value``'s compact JSON text, in bytes."""
    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode())


def _planning(model: obelisk.ScriptedModel) -> list[obelisk.Request]:
    return [r for r in model.requests if r.config["mode"] != "latent" and not r.config.get("depth")]


def _texts(requests: list[obelisk.Request]) -> list[str]:
    """Each request as the model gets it, and as ASCII-escaped JSON (a canary is
    ASCII, so it shows in either)."""
    return [r.to_json() for r in requests] + [json.dumps(r.to_data()) for r in requests]


@pytest.mark.parametrize("mode", ["eager", "lazy"])
def test_no_planning_request_holds_a_canary(mode: str) -> None:
    result, model = _run(mode)
    assert result.status == "completed"
    assert result.output == {"sender": "bob@example.com", "stored": "stored"}
    planning = _planning(model)
    assert len(planning) == 3
    for text in _texts(planning):
        for canary in CANARIES:
            assert canary not in text, (canary, text)
    # the sources were there: the final state holds them, the sub-requests saw them
    final = json.dumps(result.state)
    assert all(c in final for c in (TOOL, FIELD, PAGE, KEY, INPUT, DATA))
    latent = " ".join(_texts([r for r in model.requests if r.config["mode"] == "latent"]))
    assert INPUT in latent and DATA in latent
    child = " ".join(_texts([r for r in model.requests if r.config.get("depth")]))
    assert PAGE in child


@pytest.mark.parametrize("mode", ["eager", "lazy"])
def test_the_planner_sees_handles_errors_and_trusted_parts(mode: str) -> None:
    _, model = _run(mode)
    second = _planning(model)[1].to_data()["context"]
    state = next(m for m in second if m["type"] == "state")["state"]
    mail = {"subject": "hello", "body": f"Dear user, {TOOL}", KEY: 1}
    assert state["mail"] == {"$untrusted": "†state.mail", "type": "object", "bytes": size(mail)}
    assert state["msg"] == {  # a Labeled result: only its untrusted field is hidden
        "sender": "bob@example.com",
        "body": {"$untrusted": "†state.msg.body", "type": "string", "bytes": size(FIELD)},
    }
    assert state["paris"]["$untrusted"] == "†state.paris"  # what the delegate read
    assert state["summary"]["$untrusted"] == "†state.summary"  # a latent call read it
    assert state["stored"]["$untrusted"] == "†state.stored"  # it read the body
    data = next(m for m in second if m["type"] == "data")
    assert data["data"] == {
        "readme": {"$untrusted": "†files.readme", "type": "string", "bytes": size(DATA)}
    }
    first = _planning(model)[0].to_data()["context"]
    assert next(m for m in first if m["type"] == "input")["input"] == {
        "note": {"$untrusted": "†input.note", "type": "string", "bytes": size(INPUT)}
    }
    assert any("Quarantine:" in m.get("text", "") for m in first if m["type"] == "text")
    errors = {m.get("call"): m["error"] for m in second if m["type"] == "error"}
    assert errors["#2 check_text"]["type"] == "ValueError"
    assert errors["#2 check_text"]["message"].startswith(
        "withheld in quarantine: #2 check_text read untrusted data (its argument text)"
    )


def test_a_handle_passes_the_value_by_reference() -> None:
    stored.clear()
    model = obelisk.ScriptedModel(
        [
            {"calls": [{"_tool": "read_mail", "_outputPath": "†state.mail"}], "output": None},
            {"calls": [{"_tool": "store", "text": "†state.mail.body"}], "output": None},
            {"calls": [], "output": "done"},
        ]
    )
    result = obelisk.Loop(model, TOOLS, quarantine=True).run_sync()
    assert result.output == "done"
    assert stored == [f"Dear user, {TOOL}"]  # the tool got the real value
    assert all(TOOL not in r.to_json() for r in model.requests)


def test_without_quarantine_the_planner_reads_the_values() -> None:
    """The same plan, unquarantined: the canaries reach the planner (what the test
    above rules out is real)."""
    model = obelisk.ScriptedModel(
        [
            {"calls": [{"_tool": "read_mail", "_outputPath": "†state.mail"}], "output": None},
            {"calls": [], "output": "done"},
        ]
    )
    obelisk.Loop(model, TOOLS).run_sync()
    assert TOOL in model.requests[1].to_json()


def test_an_output_error_quoting_an_untrusted_value_is_redacted() -> None:
    model = obelisk.ScriptedModel(
        [
            {"calls": [{"_tool": "read_mail", "_outputPath": "†state.mail"}], "output": None},
            {"calls": [], "output": "†state.mail.body"},
            {"calls": [], "output": 1},
        ]
    )
    loop = obelisk.Loop(model, TOOLS, quarantine=True, output_schema={"type": "integer"})
    assert loop.run_sync().output == 1
    error = [m for m in model.requests[2].to_data()["context"] if m["type"] == "error"]
    message = error[0]["error"]["message"]
    assert TOOL not in message
    assert '{"$untrusted": "†state.mail", "type": "object", "bytes": 75}' in message


def test_a_delegate_that_stops_after_reading_untrusted_data_keeps_its_reason() -> None:
    """The child loop's stop reason quotes the page it read (its output does not fit):
    the planner gets the delegate's failure without it."""
    counter = obelisk.Tool.from_schema(
        {
            "name": "count",
            "description": "Count something about a city.",
            "_delegate": True,
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
            "output": {"type": "integer"},
        }
    )

    def answer(request: obelisk.Request) -> dict[str, Any]:
        turn = request.config["turn"]
        if request.config.get("depth"):
            if turn == 1:
                call = {"_tool": "fetch_page", "city": "†input.city", "_outputPath": "†state.p"}
                return {"calls": [call], "output": None}
            return {"calls": [], "output": "†state.p"}  # a string: it does not fit
        if turn == 1:
            call = {"_tool": "count", "city": "Oslo", "_outputPath": "†state.n"}
            return {"calls": [call], "output": None}
        return {"calls": [], "output": "done"}

    model = obelisk.ScriptedModel(respond=answer)
    loop = obelisk.Loop(model, [fetch_page, counter], quarantine=True, max_corrections=0)
    assert loop.run_sync().output == "done"
    child = " ".join(r.to_json() for r in model.requests if r.config.get("depth"))
    assert PAGE in child
    second = _planning(model)[1].to_data()["context"]
    error = next(m for m in second if m["type"] == "error")["error"]
    assert error["type"] == "SubRequestError"
    assert PAGE not in error["message"]
    assert "withheld in quarantine" in error["message"]


def test_a_long_value_cut_short_in_a_message_is_redacted() -> None:
    """obelisk's messages cut a long value with ``...``: its start is redacted too."""
    long_text = "LONGCANARY " + "attacker text " * 20

    @obelisk.tool(output_trust="untrusted")
    def read_long() -> dict[str, Any]:
        """A long page."""
        return {"text": long_text}

    model = obelisk.ScriptedModel(
        [
            {"calls": [{"_tool": "read_long", "_outputPath": "†state.page"}], "output": None},
            {"calls": [], "output": "†state.page"},
            {"calls": [], "output": 1},
        ]
    )
    loop = obelisk.Loop(model, [read_long], quarantine=True, output_schema={"type": "integer"})
    assert loop.run_sync().output == 1
    error = next(m for m in model.requests[2].to_data()["context"] if m["type"] == "error")
    assert "LONGCANARY" not in error["error"]["message"]
    assert "attacker" not in error["error"]["message"]
    assert '"$untrusted": "†state.page"' in error["error"]["message"]
    assert all("LONGCANARY" not in request.to_json() for request in model.requests)


def test_streamed_turns_instances_and_a_durable_resume_stay_quarantined(tmp_path: Any) -> None:
    @obelisk.tool(output_trust="untrusted")
    def page(city: str) -> str:
        """Web page."""
        return f"{PAGE} {city}"

    first = {
        "calls": [
            {"_tool": "page", "city": "†input.name", "_outputPath": "†state.p", "_instance": "a"},
            {"_tool": "store", "text": "†input.name", "_outputPath": "†state.g", "_instance": "b"},
        ],
        "output": None,
    }
    last = {"calls": [], "output": "done"}
    instances = {"a": {"name": "A"}, "b": {"name": "B"}}
    streamed = obelisk.ScriptedModel([first, last], tokens_per_second=100_000)
    loop = obelisk.Loop(streamed, [page, store], stream=True, quarantine=True)
    result = loop.run_sync(instances=instances)
    assert result.instances["a"] == {"p": f"{PAGE} A"}
    shown = [m for m in streamed.requests[1].to_data()["context"] if m["type"] == "state"]
    assert shown[1]["state"]["p"]["$untrusted"] == "†state.p"
    assert shown[2]["state"] == {"g": "stored"}  # instance b read nothing untrusted
    assert all(PAGE not in r.to_json() for r in streamed.requests)

    journal = str(tmp_path / "runs.db")
    crashed = obelisk.ScriptedModel([first])  # it runs out after turn 1
    with pytest.raises(obelisk.LoopStopped) as stop:
        obelisk.Loop(crashed, [page, store], quarantine=True, journal=journal).run_sync(
            instances=instances
        )
    again = obelisk.ScriptedModel([last])
    loop = obelisk.Loop(again, [page, store], quarantine=True, journal=journal)
    assert loop.resume_sync(stop.value.result.run_id).output == "done"
    resumed = again.requests[0].to_data()["context"]
    assert [m for m in resumed if m["type"] == "state"][1]["state"]["p"]["$untrusted"]
    assert all(PAGE not in r.to_json() for r in [*crashed.requests, *again.requests])
