"""The answer schema, the instructions and the validation agree (issue 24, point 2).

Every answer form docs/loop.md documents (a final output, ``null`` to go on, an
output that is a reference or holds references at any depth, arguments that are
references or fallbacks, alternative output paths, a latent call's ``_output`` in
eager mode) fits the schema the loop sends beside its instructions, in both
modes, and the loop takes it: with a scripted model, and through
``OpenAIChatModel`` in JSON mode, chosen or after a server rejected
``json_schema`` (the adapter then checks answers against that schema itself).
The local server is an httpx ``MockTransport`` given to the SDK; no network.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Literal

import pytest
from jsonschema import Draft202012Validator

import obelisk
from obelisk import Loop, ScriptedModel, Tool
from obelisk.interpreter.loop.context import EAGER_INSTRUCTIONS, LAZY_INSTRUCTIONS
from obelisk.interpreter.loop.messages import Request


@obelisk.tool
def double(n: int) -> int:
    """Twice n."""
    return 2 * n


SUMMARIZE = Tool.from_schema(
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
TOOLS = [double, SUMMARIZE]
REPORT = {
    "type": "object",
    "properties": {
        "twice": {"type": "integer"},
        "parts": {"type": "array", "items": {"type": "integer"}},
        "note": {"anyOf": [{"type": "string"}, {"type": "null"}]},
    },
    "required": ["twice"],
    "additionalProperties": False,
}
DOUBLE = {"_tool": "double", "n": "†input.n", "_outputPath": "†state.twice"}


@dataclass
class Form:
    """One documented answer form: ``answers`` by turn (the loop's own requests;
    ``latent`` answers a lazy plan's sub-request), what the loop must end with."""

    name: str
    mode: Literal["eager", "lazy"]
    output_schema: dict[str, Any] | None
    answers: list[dict[str, Any]]
    output: Any
    latent: dict[str, Any] | None = None
    state: dict[str, Any] = field(default_factory=dict)


FORMS = [
    Form("a final output", "eager", {"type": "integer"}, [{"calls": [], "output": 7}], 7),
    Form(
        "null to go on, then a reference",
        "eager",
        {"type": "integer"},
        [{"calls": [DOUBLE], "output": None}, {"calls": [], "output": "†state.twice"}],
        42,
        state={"twice": 42},
    ),
    Form(
        "an output that is a reference, in the answer that writes it",
        "eager",
        {"type": "integer"},
        [{"calls": [DOUBLE], "output": "†state.twice"}],
        42,
        state={"twice": 42},
    ),
    Form(
        "references at any depth of the output",
        "eager",
        REPORT,
        [
            {
                "calls": [DOUBLE],
                "output": {"twice": "†state.twice", "parts": [1, "†state.twice"], "note": None},
            }
        ],
        {"twice": 42, "parts": [1, 42], "note": None},
        state={"twice": 42},
    ),
    Form(
        "fallbacks and alternative output paths",
        "eager",
        None,
        [
            {
                "calls": [
                    {
                        "_tool": "double",
                        "n": "†state.missing || †input.n",
                        "_outputPath": "†state.ok || †state.error",
                        "_id": "d",
                        "_reasoningForCall": "the input holds n",
                    }
                ],
                "output": "†state.ok",
            }
        ],
        42,
        state={"ok": 42},
    ),
    Form(
        "a latent call's _output in eager mode",
        "eager",
        {"type": "string"},
        [
            {
                "calls": [
                    {
                        "_tool": "summarize",
                        "text": "A long text.",
                        "_output": "Short.",
                        "_outputPath": "†state.summary",
                    }
                ],
                "output": "†state.summary",
            }
        ],
        "Short.",
        state={"summary": "Short."},
    ),
    Form(
        "a lazy plan whose output is a reference (docs: lazy mode, step 4)",
        "lazy",
        {"type": "string"},
        [
            {
                "calls": [
                    {"_tool": "summarize", "text": "A long text.", "_outputPath": "†state.summary"}
                ],
                "output": "†state.summary",
            }
        ],
        "Short.",
        latent={"calls": [], "output": "Short."},
        state={"summary": "Short."},
    ),
    Form(
        "a lazy plan whose output holds references",
        "lazy",
        REPORT,
        [{"calls": [DOUBLE], "output": {"twice": "†state.twice", "parts": ["†state.twice"]}}],
        {"twice": 42, "parts": [42]},
        state={"twice": 42},
    ),
]


def respond(form: Form) -> Any:
    def answer(request: Request) -> dict[str, Any]:
        if request.config["mode"] == "latent":
            assert form.latent is not None
            return form.latent
        turn = min(request.config["turn"], len(form.answers))  # a correction: the same again
        return form.answers[turn - 1]

    return answer


def check_result(form: Form, result: obelisk.LoopResult) -> None:
    assert result.status == "completed", form.name
    assert result.output == form.output, form.name
    assert result.state == form.state, form.name
    assert all(not turn.errors for turn in result.turns), (form.name, result.turns[-1].errors)


def loop(model: Any, form: Form) -> Loop:
    return Loop(model, TOOLS, mode=form.mode, output_schema=form.output_schema, max_turns=3)


# -- the schema that is sent --------------------------------------------------------------


def test_each_documented_answer_form_fits_the_schema_that_is_sent() -> None:
    misfits = []
    for form in FORMS:
        model = ScriptedModel(respond=respond(form))
        check_result(form, loop(model, form).run_sync({"n": 21}))
        for request in model.requests:
            answer = respond(form)(request)
            validator = Draft202012Validator(request.schema)
            Draft202012Validator.check_schema(request.schema)
            if not validator.is_valid(answer):
                misfits.append((form.name, request.config, answer))
    assert misfits == []


def test_the_schema_still_refuses_what_the_loop_refuses() -> None:
    for mode in ("eager", "lazy"):
        schema = obelisk.solution_schema(obelisk.Registry(TOOLS), REPORT, mode=mode)
        validator = Draft202012Validator(schema)
        for output in (
            "forty-two",  # not a reference, not an object
            {"twice": "42"},  # a string that is not a reference
            {"twice": 42, "extra": 1},  # additionalProperties: false
            {"parts": ["†state.x"]},  # twice is required
            {"twice": 1, "parts": [1.5]},
        ):
            assert not validator.is_valid({"calls": [], "output": output}), (mode, output)
        # a reference may stand for any value, but not for a key
        assert not validator.is_valid({"calls": [], "output": {"†state.k": 1, "twice": 1}})


def test_the_instructions_say_what_the_schema_allows() -> None:
    """Both modes' instructions say output may hold references at any depth; the
    schema of either mode takes one at the top and inside."""
    for instructions in (EAGER_INSTRUCTIONS, LAZY_INSTRUCTIONS):
        assert "at any depth it may hold references" in instructions
    for mode in ("eager", "lazy"):
        schema = obelisk.solution_schema(obelisk.Registry(TOOLS), REPORT, mode=mode)
        validator = Draft202012Validator(schema)
        assert validator.is_valid({"calls": [], "output": "†state.summary"})
        assert validator.is_valid({"calls": [], "output": {"twice": "†state.t", "parts": ["†x"]}})


# -- JSON mode, chosen or after the fallback ------------------------------------------------

openai = pytest.importorskip("openai")

# openai 3.x ships on httpx2, openai 1.x on httpx (and anthropic may bring httpx2 beside it)
if int(openai.__version__.split(".")[0]) >= 3:  # pragma: no cover - the installed SDK
    import httpx2 as httpx
else:  # pragma: no cover
    import httpx

from obelisk.models import OpenAIChatModel  # noqa: E402


def chat_server(form: Form, *, reject_json_schema: bool) -> Any:
    def handler(http_request: Any) -> Any:
        body = json.loads(http_request.content)
        if reject_json_schema and body["response_format"]["type"] == "json_schema":
            error = {"message": "response_format json_schema is not supported", "param": None}
            return httpx.Response(400, json={"error": error})
        sent = json.loads(body["messages"][1]["content"])
        request = Request.from_data(sent)
        content = json.dumps(respond(form)(request))
        choice = {
            "index": 0,
            "message": {"role": "assistant", "content": content},
            "finish_reason": "stop",
        }
        completion = {"id": "c", "object": "chat.completion", "created": 0, "model": "m"}
        return httpx.Response(200, json={**completion, "choices": [choice]})

    return handler


@pytest.mark.parametrize("structured", [False, None], ids=["json-mode", "fallback"])
def test_json_mode_takes_each_documented_answer_form(structured: bool | None) -> None:
    for form in FORMS:
        client = openai.AsyncOpenAI(
            api_key="test",
            base_url="http://testserver/v1",
            max_retries=0,
            http_client=httpx.AsyncClient(
                transport=httpx.MockTransport(
                    chat_server(form, reject_json_schema=structured is None)
                )
            ),
        )
        model = OpenAIChatModel("m", client=client, structured=structured)
        check_result(form, loop(model, form).run_sync({"n": 21}))
        assert model.json_mode
